# Runs one test of a wait-method executable (cmake -P) again, up to ATTEMPTS
# times in all, while it reports that the device's views do not poll. The
# wait is measured once per process, and on a machine with few cores a spell
# of load can make one process's measurement choose a blocking wait; a test
# whose rule applies to polled views only then says "not run". A fresh
# process measures again, so that one spell does not leave the rule
# unchecked. Any other outcome (passed, failed, another "not run") is final.
#   EXE       the test executable        FILTER    its Catch2 test spec
#   ATTEMPTS  processes at most (default 3)
foreach(var EXE FILTER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_until_polling.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT DEFINED ATTEMPTS)
  set(ATTEMPTS 3)
endif()

set(not_polling "not run: the device's views do not poll")
foreach(attempt RANGE 1 ${ATTEMPTS})
  execute_process(COMMAND ${EXE} ${FILTER} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(FIND "${out}" "${not_polling}" at)
  if(NOT rc EQUAL 0 OR at EQUAL -1)
    break()
  endif()
  if(attempt LESS ATTEMPTS)
    message("run_until_polling.cmake: process ${attempt} of ${ATTEMPTS} measured a wait that does not poll; "
            "measuring again in a new process")
  endif()
endforeach()
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} ${FILTER} failed with ${rc}")
endif()
