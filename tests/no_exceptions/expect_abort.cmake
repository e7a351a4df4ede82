# Runs PROGRAM with ARG (cmake -P) and passes only if it ends by a signal
# (std::abort) after printing output that matches EXPECT. CTest's WILL_FAIL
# does not accept a process killed by a signal.
execute_process(COMMAND ${PROGRAM} ${ARG} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "expected the program to abort; it exited with ${rc}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match: ${EXPECT}")
endif()
message("aborted (${rc}) as expected")
