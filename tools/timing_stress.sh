#!/usr/bin/env bash
# Runs CTest entries round after round under a load that a shared CI machine
# may put on timing-dependent tests, and counts how each entry ended. For
# checking a test's margins (simulated costs, gates, bursts) before it meets
# a slow machine, not for CI.
#
#   tools/timing_stress.sh BUILD_DIR LOAD ROUNDS REGEX [LOG_DIR]
#
#   LOAD    none     nothing else runs
#           pinned   the tests and two busy processes share CPU 0 (taskset)
#           compile  two compilers of tests/soak/soak.cpp run in a loop
#   REGEX   what `ctest -R` selects, e.g. 'wait_method|mutants.wait_one_block'
#   LOG_DIR where each round's CTest output goes (default: a new temporary
#           folder); the counts are printed and written to LOG_DIR/summary.txt
#
# Exits 1 where an entry failed in any round.
set -euo pipefail

if [ $# -lt 4 ]; then
  sed -n '2,16p' "$0" >&2
  exit 2
fi
build=$1 load=$2 rounds=$3 regex=$4
logs=${5:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
case $load in none | pinned | compile) ;; *)
  echo "timing_stress: LOAD must be none, pinned or compile, not '$load'" >&2
  exit 2
  ;;
esac
case $rounds in '' | *[!0-9]* | 0) echo "timing_stress: ROUNDS must be a number above 0, not '$rounds'" >&2; exit 2 ;; esac
[ -f "$build/CTestTestfile.cmake" ] || { echo "timing_stress: $build is no CTest build folder" >&2; exit 2; }
mkdir -p "$logs"
rm -f "$logs"/round-*.log "$logs/summary.txt"  # an earlier run's rounds would be counted too

helpers=()
# Each helper leads a process group of its own (setsid), so that stopping it
# stops the compiler it is running too.
stop_helpers() {
  local p
  for p in "${helpers[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
}
trap stop_helpers EXIT
prefix=()
case $load in
  pinned)
    for _ in 1 2; do setsid taskset -c 0 sh -c 'while :; do :; done' & helpers+=($!); done
    prefix=(taskset -c 0)
    ;;
  compile)
    for _ in 1 2; do
      setsid bash -c 'while :; do c++ -std=c++17 -O2 -I"$1/include" -I"$1/tests" -DCL_TARGET_OPENCL_VERSION=300 \
        -c "$1/tests/soak/soak.cpp" -o /dev/null; done' compile_load "$root" & helpers+=($!)
    done
    ;;
esac

for r in $(seq 1 "$rounds"); do
  "${prefix[@]}" ctest --test-dir "$build" -R "$regex" --output-on-failure >"$logs/round-$r.log" 2>&1 || true
done
stop_helpers
helpers=()

grep -q ' Test \+#' "$logs"/round-*.log || { echo "timing_stress: no entry matched '$regex'" >&2; exit 1; }
# One line per entry: in how many rounds it passed, was skipped, failed.
summary=$(cat "$logs"/round-*.log | awk '
  / Test +#[0-9]+: / {
    name = $0; sub(/.*Test +#[0-9]+: /, "", name); sub(/ .*/, "", name)
    if ($0 ~ /\*\*\*Skipped/) s[name]++; else if ($0 ~ / Passed /) p[name]++; else f[name]++
    seen[name] = 1
  }
  END {
    for (n in seen) printf "%-60s passed %d, skipped %d, failed %d\n", n, p[n], s[n], f[n]
  }' | sort)
summary="load $load, $rounds rounds
$summary"
echo "$summary" | tee "$logs/summary.txt"
[ "$(echo "$summary" | awk '/ failed [1-9]/' | wc -l)" -eq 0 ] || exit 1
