# clzero defines no OpenCL or CLHPP macro: the macros named CL_..., cl_...,
# __CL_... or OPENCL_... that the preprocessor knows after the OpenCL headers
# alone and after the OpenCL headers plus clzero's are the same, with the
# same values, for every CL_TARGET_OPENCL_VERSION (and none at all).
#   -DCXX=<compiler> -DINCLUDE=<clzero include dir> -DWORK=<scratch folder>
#   -DEXTRA_FLAGS=<;-list, e.g. dlpack's include dir>
cmake_policy(SET CMP0007 NEW)
file(MAKE_DIRECTORY ${WORK})

function(opencl_macros out source version)
  set(flags -std=c++17 -dM -E -I${INCLUDE} ${EXTRA_FLAGS})
  if(version)
    list(APPEND flags -DCL_TARGET_OPENCL_VERSION=${version} -DCL_HPP_TARGET_OPENCL_VERSION=${version}
         -DCL_HPP_MINIMUM_OPENCL_VERSION=${version})
  endif()
  execute_process(COMMAND ${CXX} ${flags} ${source} RESULT_VARIABLE rc OUTPUT_VARIABLE defines ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "preprocessing ${source} failed:\n${err}")
  endif()
  # Characters that CMake's lists treat specially would split or join lines.
  string(REPLACE ";" "<semicolon>" defines "${defines}")
  string(REPLACE "[" "<open>" defines "${defines}")
  string(REPLACE "]" "<close>" defines "${defines}")
  string(REGEX MATCHALL "#define _*(CL|cl|OPENCL|opencl)_[^\n]*" lines "${defines}")
  list(SORT lines)
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

file(WRITE ${WORK}/opencl_only.cpp "#include <CL/cl.h>\n")
file(WRITE ${WORK}/with_clzero.cpp "#include <CL/cl.h>\n#include <clzero/clzero.hpp>\n")
file(WRITE ${WORK}/clhpp_only.cpp "#include <CL/cl.h>\n#include <CL/opencl.hpp>\n")
file(WRITE ${WORK}/with_clzero_interop.cpp
     "#include <CL/cl.h>\n#include <CL/opencl.hpp>\n#include <clzero/clzero.hpp>\n"
     "#include <clzero/interop/clhpp.hpp>\n#include <clzero/interop/mdspan.hpp>\n${DLPACK_INCLUDE}\n")

set(failures "")
foreach(version "" 120 200 300)
  foreach(pair "opencl_only;with_clzero" "clhpp_only;with_clzero_interop")
    list(GET pair 0 baseline)
    list(GET pair 1 candidate)
    opencl_macros(expected ${WORK}/${baseline}.cpp "${version}")
    opencl_macros(actual ${WORK}/${candidate}.cpp "${version}")
    list(LENGTH expected count)
    if(count LESS 50)
      message(FATAL_ERROR "only ${count} OpenCL macros after ${baseline}.cpp: the check would prove nothing")
    endif()
    set(added ${actual})
    list(REMOVE_ITEM added ${expected})
    set(removed ${expected})
    list(REMOVE_ITEM removed ${actual})
    if(added OR removed OR NOT expected STREQUAL actual)
      string(REPLACE ";" "\n  " added "${added}")
      string(REPLACE ";" "\n  " removed "${removed}")
      string(APPEND failures "\n${candidate}.cpp, CL_TARGET_OPENCL_VERSION '${version}' differs from ${baseline}.cpp"
             "\n added or changed:\n  ${added}\n removed or changed:\n  ${removed}")
    endif()
    message(STATUS "CL_TARGET_OPENCL_VERSION '${version}': ${candidate}.cpp defines the same ${count} OpenCL macros as ${baseline}.cpp")
  endforeach()
endforeach()
if(failures)
  message(FATAL_ERROR "clzero defines OpenCL macros:${failures}")
endif()
