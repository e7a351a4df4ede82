# clang-tidy (the repository's .clang-tidy) over clzero's headers, through the
# two translation units that include and instantiate all of them, for the
# oldest and the newest CL_TARGET_OPENCL_VERSION. Any finding fails.
#   -DCLANG_TIDY=<clang-tidy> -DSOURCE=<clzero source>
set(units ${SOURCE}/tests/compile/include_all.cpp ${SOURCE}/tests/build_matrix/interop_all.cpp)
set(failed FALSE)
foreach(version 120 300)
  execute_process(
    COMMAND ${CLANG_TIDY} --quiet --warnings-as-errors=* ${units} --
            -std=c++17 -I${SOURCE}/include -DCL_TARGET_OPENCL_VERSION=${version}
            -DCL_HPP_TARGET_OPENCL_VERSION=${version} -DCL_HPP_MINIMUM_OPENCL_VERSION=${version}
    WORKING_DIRECTORY ${SOURCE} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    set(failed TRUE)
    message(STATUS "clang-tidy: findings with CL_TARGET_OPENCL_VERSION ${version} (above)")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "clang-tidy found issues in clzero's headers")
endif()
