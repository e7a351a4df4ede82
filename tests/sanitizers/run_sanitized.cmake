# Configures, builds and runs one sanitized build of the tests (cmake -P).
#   SOURCE_DIR    clzero's source tree          BINARY_DIR  where to build
#   COMPILER      the C++ compiler (g++, clang++)
#   SANITIZE      address,undefined | thread
#   SOURCES       test sources, joined by "|"   FILTER      Catch2 test spec
#   CONTROLS      Catch2 test specs, joined by "|", of deliberate errors
# Reports go to the test's output; any report from the real tests fails the
# test, and so does a deliberate error that goes unreported.
foreach(var SOURCE_DIR BINARY_DIR COMPILER SANITIZE SOURCES)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_sanitized.cmake: ${var} is not set")
  endif()
endforeach()

find_program(compiler_path ${COMPILER})
if(NOT compiler_path)
  message("run_sanitized.cmake: ${COMPILER} not found; skipped")
  return()
endif()

set(project_dir ${SOURCE_DIR}/tests/sanitizers/project)
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${project_dir} -B ${BINARY_DIR}
          -DCMAKE_CXX_COMPILER=${compiler_path} -DCMAKE_BUILD_TYPE=
          -DCLZERO_SOURCE_DIR=${SOURCE_DIR} -DCLZERO_SANITIZE=${SANITIZE}
          "-DCLZERO_TEST_SOURCES=${SOURCES}"
  RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the ${SANITIZE} build with ${COMPILER} failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} --parallel 2 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the ${SANITIZE} build with ${COMPILER} failed")
endif()

# PoCL and the ICD loader are not built with sanitizers; what they do is
# suppressed in these files, each entry with its reason. clzero's own code
# is never suppressed.
set(supp ${SOURCE_DIR}/tests/sanitizers/suppressions)
set(ENV{ASAN_OPTIONS} "detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1")
set(ENV{LSAN_OPTIONS} "suppressions=${supp}/lsan.supp:print_suppressions=0")
set(ENV{UBSAN_OPTIONS} "print_stacktrace=1:halt_on_error=1")
set(ENV{TSAN_OPTIONS} "suppressions=${supp}/tsan.supp:halt_on_error=1:second_deadlock_stack=1")
execute_process(COMMAND ${BINARY_DIR}/clzero_sanitized_tests ${FILTER}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the ${SANITIZE} build (${COMPILER}) failed with ${rc}")
endif()
set(finding "runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer")
if(out MATCHES "${finding}")
  message(FATAL_ERROR "the ${SANITIZE} build (${COMPILER}) reported a finding")
endif()

string(REPLACE "|" ";" controls "${CONTROLS}")
foreach(control IN LISTS controls)
  execute_process(COMMAND ${BINARY_DIR}/clzero_sanitized_tests ${control}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0 OR NOT out MATCHES "${finding}")
    message("${out}")
    message(FATAL_ERROR "the ${SANITIZE} build (${COMPILER}) did not report the deliberate error ${control}")
  endif()
  message("deliberate error ${control}: reported, as it must be")
endforeach()
