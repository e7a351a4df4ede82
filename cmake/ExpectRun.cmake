# Runs one command (cmake -P) and passes only if it exits with the status
# expected AND its output matches a pattern. A test property alone cannot
# ask both: PASS_REGULAR_EXPRESSION makes CTest ignore the exit status.
#   COMMAND  the command, its words separated by ^
#   MATCHES  regex the output (stdout and stderr together) must match
#   STATUS   the exit status expected (default 0)
foreach(var COMMAND MATCHES)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "ExpectRun.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT DEFINED STATUS)
  set(STATUS 0)
endif()
string(REPLACE "^" ";" words "${COMMAND}")
execute_process(COMMAND ${words} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(NOT "${rc}" STREQUAL "${STATUS}")
  message(FATAL_ERROR "ExpectRun.cmake: the command exited with ${rc}, not ${STATUS}")
endif()
if(NOT "${out}" MATCHES "${MATCHES}")
  message(FATAL_ERROR "ExpectRun.cmake: the output does not match '${MATCHES}'")
endif()
