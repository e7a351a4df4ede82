# Installs the clzero build BUILD into a fresh PREFIX, as a user does with
# `cmake --install build --prefix ...`.
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
foreach(file include/clzero/clzero.hpp include/clzero/interop/clhpp.hpp include/clzero/interop/dlpack.hpp
             include/clzero/interop/mdspan.hpp)
  if(NOT EXISTS ${PREFIX}/${file})
    message(FATAL_ERROR "the install lacks ${file}")
  endif()
endforeach()
file(GLOB_RECURSE config ${PREFIX}/*/clzeroConfig.cmake)
if(NOT config)
  message(FATAL_ERROR "the install lacks clzeroConfig.cmake")
endif()
