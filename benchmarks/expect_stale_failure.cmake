# Runs clzero_bench on the deliberately stale strategy and passes only if the
# run fails (exit status not 0) and says why (stale output).
#   cmake -DBENCH=<clzero_bench> -P expect_stale_failure.cmake
set(ENV{CLZERO_BENCH_SELF_CHECK} 1)
execute_process(COMMAND ${BENCH} --benchmark_filter=^infer/selfcheck.stale/4096/ --benchmark_min_time=0.01
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "clzero_bench exited with 0 although the strategy returned stale data:\n${out}${err}")
endif()
if(NOT out MATCHES "stale or missing output elements in [1-9]")
  message(FATAL_ERROR "clzero_bench failed (${rc}) without naming the stale output:\n${out}${err}")
endif()
message(STATUS "clzero_bench failed as it must: ${rc}")
