# Configures and builds the warnings matrix (project/) with one compiler in a
# fresh folder; any warning is an error, so the build failing is the finding.
#   -DCLZERO_SOURCE_DIR=... -DBINARY=... -DGENERATOR=... -DCXX=<compiler>
file(REMOVE_RECURSE ${BINARY})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/project -B ${BINARY} -G ${GENERATOR}
                        -DCMAKE_CXX_COMPILER=${CXX} -DCLZERO_SOURCE_DIR=${CLZERO_SOURCE_DIR}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the matrix with ${CXX} failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY} -j2 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the matrix does not build warning-free with ${CXX}")
endif()
