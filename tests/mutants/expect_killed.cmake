# Runs a mutant's test program (cmake -P) and passes only if the test kills
# the mutant: the program exits with a failure status (not a signal) and its
# output matches KILLED, the check that stands for the fix. A program that
# passes means the mutant survived: the suite no longer notices the defect.
# With HAZARD_LAYER, the program runs under the fault layer's happens-before
# checker instead, and the checker's report is the judge: the mutant is
# killed if the report matches KILLED, whatever the program's own checks say.
#   PROGRAM  the mutant's test executable    ARG  its arguments, ^ between
#            them (optional)
#   RUNNER   a program that runs PROGRAM (optional: Oclgrind)
#   KILLED   regex of the failing check       SKIP regex of the test's own
#            "not run" (optional): then the mutant is not judged either
#   JUDGED_ON  regex of the platforms (CLZERO_TEST_PLATFORM) where a SKIP
#            is a failure: there the mutant must be judged (optional)
#   ONLY_WHERE  regex the program's output must match for the mutant to be
#            judged, e.g. the platform it names (optional): elsewhere the
#            defect shows only some of the time, and the mutant is not judged
#   HAZARD_LAYER, HAZARD_REPORT  the layer and the report file (optional)
cmake_minimum_required(VERSION 3.16)
foreach(var PROGRAM KILLED)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "expect_killed.cmake: ${var} is not set")
  endif()
endforeach()
set(hazard FALSE)
if(DEFINED HAZARD_LAYER AND NOT HAZARD_LAYER STREQUAL "")
  if(NOT DEFINED HAZARD_REPORT OR HAZARD_REPORT STREQUAL "")
    message(FATAL_ERROR "expect_killed.cmake: HAZARD_LAYER needs HAZARD_REPORT")
  endif()
  set(hazard TRUE)
  set(ENV{OPENCL_LAYERS} "${HAZARD_LAYER}")
  set(ENV{CLZERO_FAULT_HAZARDS} 1)
  set(ENV{CLZERO_HAZARD_REPORT} "${HAZARD_REPORT}")
  file(REMOVE "${HAZARD_REPORT}")
endif()
string(REPLACE "^" ";" args "${ARG}")
execute_process(COMMAND ${RUNNER} ${PROGRAM} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
# A test that said "not run" somewhere but failed at the check that stands
# for the fix killed the mutant: the kill is judged first.
if(DEFINED SKIP AND NOT SKIP STREQUAL "" AND "${out}" MATCHES "${SKIP}" AND NOT "${out}" MATCHES "${KILLED}")
  if(DEFINED JUDGED_ON AND NOT JUDGED_ON STREQUAL "" AND "$ENV{CLZERO_TEST_PLATFORM}" MATCHES "${JUDGED_ON}")
    message(FATAL_ERROR "the mutant's test did not run on platform '$ENV{CLZERO_TEST_PLATFORM}', where it must")
  endif()
  message("mutant not judged: its test did not run here")
  return()
endif()
if(DEFINED ONLY_WHERE AND NOT ONLY_WHERE STREQUAL "" AND NOT "${out}" MATCHES "${ONLY_WHERE}")
  message("mutant not judged: its test ran where the defect shows only some of the time (judged where the output "
          "matches '${ONLY_WHERE}')")
  return()
endif()
# A filter that names no test case runs nothing (Catch2 2.13 then exits with
# 0, which would read as a surviving mutant): say what happened instead.
if("${out}" MATCHES "No test cases matched")
  message(FATAL_ERROR "the mutant's test program ran no test case: its arguments (${ARG}) match none")
endif()
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "the mutant's test ended by a signal (${rc}), not by the check that stands for the fix")
endif()
if(hazard)
  if(NOT EXISTS "${HAZARD_REPORT}")
    message(FATAL_ERROR "the hazard checker wrote no report to ${HAZARD_REPORT}: was ${HAZARD_LAYER} loaded?")
  endif()
  file(READ "${HAZARD_REPORT}" report LIMIT 3000)
  message("the hazard checker's report begins:\n${report}")
  if(NOT "${report}" MATCHES "${KILLED}")
    message(FATAL_ERROR "the mutant survived: the hazard checker's report does not match ${KILLED}")
  endif()
  if(rc EQUAL 0)
    message("the program's own checks passed; the checker alone saw the defect")
  endif()
  message("mutant killed by the hazard checker at: ${KILLED}")
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "the mutant survived: ${PROGRAM} passed against headers with the defect put back")
endif()
if(NOT "${out}" MATCHES "${KILLED}")
  message(FATAL_ERROR "the mutant's test failed (${rc}), but not at the check that stands for the fix: ${KILLED}")
endif()
message("mutant killed (status ${rc}) at: ${KILLED}")
