#!/usr/bin/env bash
# check_timing_stress.sh TOOL WORK_DIR: runs tools/timing_stress.sh on a
# CTest folder of an entry that fails, one that passes and one that skips,
# and checks its counts, its exit codes and its refusals.
set -u
tool=$1 work=$2
rm -rf "$work" && mkdir -p "$work/build"
cat >"$work/build/CTestTestfile.cmake" <<'CTEST'
add_test(always_fails "/bin/false")
add_test(always_passes "/bin/true")
add_test(skips "/bin/sh" "-c" "echo not run")
set_tests_properties(skips PROPERTIES SKIP_REGULAR_EXPRESSION "not run")
CTEST
bad=0
expect() {  # expect WHAT ACTUAL WANTED
  if [ "$2" != "$3" ]; then
    echo "timing_stress check failed: $1: got '$2', wanted '$3'"
    bad=1
  fi
}

for load in none pinned; do
  out=$(bash "$tool" "$work/build" $load 2 'always|skips' "$work/logs-$load" 2>&1)
  expect "$load: exit code with a failing entry" $? 1
  expect "$load: the failing entry" "$(echo "$out" | grep '^always_fails ' | tr -s ' ')" \
    "always_fails passed 0, skipped 0, failed 2"
  expect "$load: the passing entry" "$(echo "$out" | grep '^always_passes ' | tr -s ' ')" \
    "always_passes passed 2, skipped 0, failed 0"
  expect "$load: the skipped entry" "$(echo "$out" | grep '^skips ' | tr -s ' ')" "skips passed 0, skipped 2, failed 0"
  expect "$load: the first line" "$(echo "$out" | head -1)" "load $load, 2 rounds"
  expect "$load: the summary file" "$(cat "$work/logs-$load/summary.txt")" "$out"
done
bash "$tool" "$work/build" none 1 'always_passes' "$work/logs-pass" >/dev/null 2>&1
expect "exit code without a failure" $? 0
# A log folder used before: only this run's rounds count.
out=$(bash "$tool" "$work/build" none 1 'always_passes' "$work/logs-none" 2>&1)
expect "a log folder used before" "$(echo "$out" | grep '^always' | tr -s ' ')" \
  "always_passes passed 1, skipped 0, failed 0"
out=$(bash "$tool" "$work/build" none 1 'no_such_entry' "$work/logs-none" 2>&1)
expect "exit code where nothing matched" $? 1
expect "message where nothing matched" "$out" "timing_stress: no entry matched 'no_such_entry'"
bash "$tool" "$work/build" busy 1 'always' >/dev/null 2>&1
expect "exit code for an unknown load" $? 2
bash "$tool" "$work/build" none two 'always' >/dev/null 2>&1
expect "exit code for rounds that are no number" $? 2
bash "$tool" "$work/build" none 0 'always' >/dev/null 2>&1
expect "exit code for no rounds" $? 2
bash "$tool" "$work" none 1 'always' >/dev/null 2>&1
expect "exit code for a folder without CTest" $? 2
if pgrep -fx "sh -c while :; do :; done" >/dev/null 2>&1; then
  echo "timing_stress check failed: a busy process of the pinned load was left running"
  bad=1
fi
[ $bad -eq 0 ] && echo "timing_stress: every check held"
exit $bad
