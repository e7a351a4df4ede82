# Packs what a clzero release archive holds (the CMake project, headers,
# license) into ARCHIVE and writes its SHA-256 beside it, for FetchContent's
# URL + URL_HASH.
file(REMOVE ${ARCHIVE})
execute_process(COMMAND ${CMAKE_COMMAND} -E tar czf ${ARCHIVE} -- CMakeLists.txt LICENSE cmake include
                WORKING_DIRECTORY ${SOURCE} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "packing ${ARCHIVE} failed (${rc})")
endif()
file(SHA256 ${ARCHIVE} hash)
file(WRITE ${ARCHIVE}.sha256 ${hash})
