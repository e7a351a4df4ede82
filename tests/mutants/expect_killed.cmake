# Runs a mutant's test program (cmake -P) and passes only if the test kills
# the mutant: the program exits with a failure status (not a signal) and its
# output matches KILLED, the check that stands for the fix. A program that
# passes means the mutant survived: the suite no longer notices the defect.
#   PROGRAM  the mutant's test executable    ARG  one argument (optional)
#   RUNNER   a program that runs PROGRAM (optional: Oclgrind)
#   KILLED   regex of the failing check       SKIP regex of the test's own
#            "not run" (optional): then the mutant is not judged either
foreach(var PROGRAM KILLED)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "expect_killed.cmake: ${var} is not set")
  endif()
endforeach()
execute_process(COMMAND ${RUNNER} ${PROGRAM} ${ARG} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(DEFINED SKIP AND NOT SKIP STREQUAL "" AND "${out}" MATCHES "${SKIP}")
  message("mutant not judged: its test did not run here")
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "the mutant survived: ${PROGRAM} passed against headers with the defect put back")
endif()
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "the mutant's test ended by a signal (${rc}), not by the check that stands for the fix")
endif()
if(NOT "${out}" MATCHES "${KILLED}")
  message(FATAL_ERROR "the mutant's test failed (${rc}), but not at the check that stands for the fix: ${KILLED}")
endif()
message("mutant killed (status ${rc}) at: ${KILLED}")
