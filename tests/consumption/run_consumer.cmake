# Configures, builds and tests the consumer project in a fresh build folder:
#   cmake -DCONSUMER_SOURCE=... -DCONSUMER_BINARY=... -DGENERATOR=... -DCXX=...
#         -DCTEST=... -DARGS=<;-list of -D options> -P run_consumer.cmake
# Fails on the first step that fails.
function(step what)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${CONSUMER_BINARY} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${what} failed (${rc})")
  endif()
endfunction()

file(REMOVE_RECURSE ${CONSUMER_BINARY})
file(MAKE_DIRECTORY ${CONSUMER_BINARY})
step("configure" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${CONSUMER_BINARY} -G ${GENERATOR}
     -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Debug ${ARGS})
step("build" ${CMAKE_COMMAND} --build ${CONSUMER_BINARY} -j2)
step("run" ${CTEST} --output-on-failure)
