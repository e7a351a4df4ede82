#!/usr/bin/env bash
# The GPU test machine's run, in one go (Ubuntu 24.04, NVIDIA H200 with
# NVIDIA's OpenCL, PoCL 5 on the host CPU, CUDA 13, no network):
#
#   build      Release build with tests, examples, tools and benchmarks.
#              Google Benchmark and CLBlast are not installed there: their
#              Debian packages travel in .deb/ (git-ignored; fill it with
#              `apt-get download libbenchmark-dev libbenchmark1debian
#              libclblast-dev libclblast1` inside .deb/) and are unpacked
#              into /tmp/debroot.
#   tests      the CTest suite on each platform, or the one TESTS_PLATFORMS
#              names ("nvidia", "pocl") (CLZERO_TEST_PLATFORM and
#              CLZERO_BENCH_PLATFORM select it), except what does not
#              depend on the device and is run by CI instead: the labels
#              build_matrix (other compilers, clang-tidy, Doxygen),
#              sanitizers (whole suites rebuilt under ASan/UBSan/TSan) and
#              consumption (install and package-consumption projects). The
#              suite runs with Ubuntu's ocl-icd preloaded (CUDA's loader,
#              first in the linker's cache, loads no OpenCL layers), then
#              clzero's own suites and the from_docs programs again with CUDA's loader. The Oclgrind tests are
#              defined only where oclgrind is installed (not there). The examples in CTest run on the first
#              platform; the "examples" stage runs each on both.
#   examples   porting_check, mlp_digits (CLBlast), dense_softmax on each platform
#   info       clzero-info (every platform and device)
#   sequences  clzero_sequences on each platform: every legal sequence and
#              every clzero policy interleaved (docs/bench/sequences/);
#              SEQUENCES_RUNS whole runs (numbered from SEQUENCES_FIRST_RUN,
#              default 1), each NVIDIA run preceded by CUDA's zero copy
#              where the cuda stage ran before it;
#              SEQUENCES_PLATFORMS ("nvidia", "pocl"; both by default)
#              keeps one platform, SEQUENCES_ARGS adds arguments
#   paced      clzero_sequences' serial section paced like an engine that
#              waits for its input (--gap-us): PACED_GAPS ("none sleep1000"),
#              PACED_SIZES, PACED_BUDGET_S (30 per run)
#   host       clzero_sequences --sections host on each platform: the host's
#              own cost per inference, the device's calls made free, with
#              warm and evicted caches (docs/bench/sequences/host/)
#   bench      clzero_bench (Google Benchmark) on each platform
#   cuda       the CUDA comparison (benchmarks/cuda)
#   quirks     tools/device/nv_quirks.cpp (NVIDIA's early-completing map; the
#              producer on another queue; a map after a failed user event;
#              maps for writing and reading under load)
#   afterfailed  nv_quirks after-failed: the inferences after a producer that
#              ended in error, on NVIDIA and PoCL
#   stress     tests/from_docs/usage.cpp, six processes at once on NVIDIA
#   churn      tools/device/alloc_churn.cpp: allocation refusals of the raw
#              driver under threads, with and without the fault layer
#   soak       the soak alone, repeated, with and without the fault layer on
#              NVIDIA (SOAK_REPEATS), counting allocation refusals
#   mnn        examples/engines/mnn/h200_run.sh: MNN's readback, as it is and
#              with clzero's patch (needs .mnn/dist, built by
#              examples/engines/mnn/build.sh and carried: MNN's source is
#              never in the repository)
#
#   tools/device/h200_run.sh [stage ...]     (in that order; default: every stage)
#
# The whole run keeps within H200_RUN_LIMIT_S seconds (default 530): each
# stage gets at most what is left, a stage that cannot start in time is
# skipped and says so. Logs go to device-logs/; on the GPU machine $OUT gets
# logs.tgz (every log), summary.txt and the JSON files (at most 8 files come
# back from there).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
root=$PWD
out=$root/device-logs
rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)
limit=${H200_RUN_LIMIT_S:-530}
# Stages run in the order given; by default the most important first, so
# that a run short of time loses the least.
stages=${*:-build quirks tests stress examples info sequences cuda mnn bench}
left() { echo $((limit - ($(date +%s) - start))); }

summary=()
note() {
  summary+=("$1")
  echo "== [$(($(date +%s) - start)) s] $1"
}

# run_for MAX LOG CMD...: runs CMD with at most MAX seconds (less if less is
# left, keeping 15 s for packing), output to LOG. Returns CMD's status, 124 on
# timeout, 125 when there was no time to start it.
run_for() {
  local max=$1 log=$2
  shift 2
  local t
  t=$(left)
  t=$((t - 15))
  if ((t < 10)); then
    echo "not run: no time left" > "$log"
    return 125
  fi
  ((t > max)) && t=$max
  timeout --kill-after=5 "$t" "$@" > "$log" 2>&1
}
status() { # "ok", "TIMED OUT", "NOT RUN (no time left)" or "FAILED (rc=N)"
  case $1 in
    0) echo ok ;;
    124 | 137) echo "TIMED OUT" ;;
    125) echo "NOT RUN (no time left)" ;;
    *) echo "FAILED (rc=$1)" ;;
  esac
}

platforms=("NVIDIA CUDA" "Portable Computing Language")
tag_of() { [ "$1" = "NVIDIA CUDA" ] && echo nvidia || echo pocl; }

# NVIDIA's OpenCL driver is installed but not registered with the ICD loader.
if [ -w /etc/OpenCL/vendors ] || mkdir -p /etc/OpenCL/vendors 2> /dev/null; then
  [ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
{
  date -u
  uname -a
  nproc
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv 2>&1
  clinfo -l 2>&1
  clinfo 2>&1 | grep -E "Platform Name|Platform Version|Device Name|Device Version|Driver Version|SVM|Unified memory|Extensions  "
  g++ --version | head -1
  cmake --version | head -1
  nvcc --version 2>&1 | tail -2
  dpkg -l ocl-icd-libopencl1 pocl-opencl-icd 2>&1 | tail -2
  # The tree built: COMMIT where the caller wrote one (the machine's copy of
  # the repository's history may be older than the working tree it got).
  if [ -f "$root/COMMIT" ]; then echo "tree of commit $(cat "$root/COMMIT") (COMMIT)"; else git -C "$root" log --oneline -1 2>&1; fi
  echo "clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>&1)"
  c++ -O2 -std=c++17 tools/device/clock_cost.cpp -o /tmp/clzero_clock_cost && /tmp/clzero_clock_cost
} > "$out/machine.txt" 2>&1

jobs=$(nproc)
build=${H200_BUILD_DIR:-$root/build-h200}
if ls .deb/*.deb > /dev/null 2>&1; then
  mkdir -p /tmp/debroot
  for f in .deb/*.deb; do dpkg -x "$f" /tmp/debroot; done
  export CMAKE_PREFIX_PATH=/tmp/debroot/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  export LD_LIBRARY_PATH=/tmp/debroot/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  note "no .deb/ here: clzero_bench and mlp_digits are built only where the machine has Google Benchmark and CLBlast"
fi

exe() { [ -x "$build/$1" ]; }

stage_build() {
  # Makefiles with -k: a target that fails to build costs only the stages
  # that need it, each of which says so.
  run_for 300 "$out/configure.log" cmake -S . -B "$build" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release \
    -DCLZERO_BUILD_BENCHMARKS=ON -DCLZERO_SANITIZER_TESTS=OFF
  rc=$?
  [ $rc -eq 0 ] && { run_for 300 "$out/build.log" cmake --build "$build" -j"$jobs" -- -k; rc=$?; }
  note "build: $(status $rc) ($(grep -cE 'warning:' "$out/build.log" 2> /dev/null) warnings)"
  [ $rc -eq 0 ] || tail -30 "$out/build.log" "$out/configure.log" 2> /dev/null
}

stage_quirks() {
  mkdir -p "$build"
  g++ -std=c++17 -O2 tools/device/nv_quirks.cpp -o "$build/nv_quirks" -lOpenCL > "$out/nv_quirks-build.log" 2>&1 &&
    run_for 60 "$out/nv_quirks.log" "$build/nv_quirks" NVIDIA 262144
  note "nv_quirks: $(status $?)"
  [ -x "$build/nv_quirks" ] && run_for 60 "$out/nv_quirks-cross.log" "$build/nv_quirks" NVIDIA 262161 cross 60
  note "nv_quirks, the producer on another queue: $(status $?)"
  [ -x "$build/nv_quirks" ] || return 0
  for n in 3 4107 262161; do "$build/nv_quirks" NVIDIA $n failed; done > "$out/nv_quirks-failed.log" 2>&1
  note "nv_quirks, a map after a failed user event: $(status $?)"
  # Seven processes side by side load the GPU: six write inputs while the
  # last inference runs (war), one reads outputs mapped at rest (read).
  local pids=()
  for i in 1 2 3 4 5 6; do
    run_for 150 "$out/nv_quirks-war-loaded-$i.log" "$build/nv_quirks" NVIDIA 3 war 3000 &
    pids+=($!)
  done
  run_for 150 "$out/nv_quirks-read-loaded.log" "$build/nv_quirks" NVIDIA 3 read 3000 &
  pids+=($!)
  wait "${pids[@]}"
  note "nv_quirks, maps under load (war x6, read): $(grep -h 'wrong [1-9]' "$out"/nv_quirks-war-loaded-*.log "$out/nv_quirks-read-loaded.log" | grep -vc 'NV host') wrong lines outside host-located memory"
}

# tests/from_docs/usage.cpp in six processes at once on NVIDIA, four with
# the view's map enqueued when the access ends (CLZERO_HOST_WAIT=poll), one
# each with map and wait: the suite's ctest -j load found stale data there
# that a lone run did not (docs/logs/h200/28-from-docs/).
# The inferences after a producer that ended in error, on the same in-order
# queue (nv_quirks after-failed), on NVIDIA and PoCL 5: 100 trials of each
# staging memory and pause.
stage_afterfailed() {
  mkdir -p "$build"
  g++ -std=c++17 -O2 tools/device/nv_quirks.cpp -o "$build/nv_quirks" -lOpenCL > "$out/nv_quirks-build.log" 2>&1 || {
    note "nv_quirks after-failed: $(status 1) (build)"
    return 0
  }
  run_for 90 "$out/nv_quirks-after-failed.log" "$build/nv_quirks" NVIDIA 4107 after-failed 100
  note "nv_quirks after-failed, NVIDIA: $(status $?)"
  run_for 60 "$out/nv_quirks-after-failed-pocl.log" "$build/nv_quirks" Portable 4107 after-failed 100
  note "nv_quirks after-failed, PoCL: $(status $?)"
}

stage_stress() {
  exe tests/from_docs/clzero_from_docs_usage || return 0
  mkdir -p "$out/stress"
  local pids=() i
  for i in poll-1 poll-2 poll-3 poll-4 map wait; do
    run_for 200 "$out/stress/usage-$i.log" env CLZERO_TEST_PLATFORM="NVIDIA CUDA" CLZERO_HOST_WAIT="${i%%-*}" \
      "$build/tests/from_docs/clzero_from_docs_usage" &
    pids+=($!)
  done
  local failed=0
  for i in "${pids[@]}"; do wait "$i" || failed=$((failed + 1)); done
  note "usage.cpp x6 at once on NVIDIA: $failed of 6 failed; $(grep -h '^FAIL' "$out"/stress/*.log | wc -l) failed scenarios"
  grep -h '^FAIL' "$out"/stress/*.log | head -5 | while read -r line; do note "  ${line:0:160}"; done
}

# Two ICD loaders are installed there: CUDA 13's libOpenCL.so.1, first in the
# linker's cache, which does not load OpenCL layers, and Ubuntu's ocl-icd
# 2.3.2, which does (OPENCL_LAYERS; probe of 2026-12-01: the fault layer's own
# check passed with ocl-icd and failed with CUDA's). The whole suite runs with
# ocl-icd, the one the fault layer, the hazard checker and the no-exceptions
# fault cases need; clzero's own suites then run once more with CUDA's loader.
ocl_icd=/usr/lib/x86_64-linux-gnu/libOpenCL.so.1
# On NVIDIA's OpenCL the fault layer's emulated failures do not happen: the
# layer makes a command end in error by having it wait on a user event set
# to an error status, and that driver runs such commands and completes them
# (clWaitForEvents returned CL_SUCCESS where the layer's own check expects
# CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST; docs/logs/h200/5-full-run/).
# Its shadow maps copy when a map completes, which on host-located memory is
# before the data lands (docs/drivers.md). So on NVIDIA the entries that
# inject failures or shadow maps are left out; the hazard checker's entries
# over the main suite, arena, ring, queues, review defects and soak run there.
nvidia_skip='^(fault_injection\.(layer_checks|matrix|matrix_out_of_order|regressions|shadow_maps)(\.map_at_view)?|hazard\.fault_.*)$'

stage_tests() {
  [ -d "$build" ] || return 0
  {
    ldd "$build/tests/clzero_tests" | grep -i opencl
    ldconfig -p | grep -i 'libOpenCL.so.1 '
  } >> "$out/machine.txt" 2>&1
  for platform in "${platforms[@]}"; do
    tag=$(tag_of "$platform")
    # TESTS_PLATFORMS="nvidia" or "pocl" keeps one platform (a call too short for both).
    case " ${TESTS_PLATFORMS:-nvidia pocl} " in *" $tag "*) ;; *) continue ;; esac
    t0=$(date +%s)
    skip=()
    [ "$tag" = nvidia ] && skip=(-E "$nvidia_skip")
    run_for 220 "$out/ctest-$tag.log" env LD_PRELOAD="$ocl_icd" CLZERO_TEST_PLATFORM="$platform" \
      CLZERO_BENCH_PLATFORM="$platform" CLZERO_TEST_LARGE=1 ctest --test-dir "$build" \
      -LE "build_matrix|sanitizers|consumption" "${skip[@]}" -j"$((jobs / 2 > 1 ? jobs / 2 : 1))" --timeout 180 \
      --output-on-failure
    rc=$?
    note "ctest on $platform (ocl-icd): $(status $rc), $(grep -E 'tests passed|tests failed' "$out/ctest-$tag.log" | tail -1) ($(($(date +%s) - t0)) s)"
    while read -r line; do note "  $tag: $line"; done < <(grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|Not Run|SEGFAULT|Subprocess aborted)' "$out/ctest-$tag.log" | head -20)
    t0=$(date +%s)
    run_for 120 "$out/ctest-$tag-cuda-loader.log" env CLZERO_TEST_PLATFORM="$platform" CLZERO_TEST_LARGE=1 \
      ctest --test-dir "$build" -R '^(clzero|from_docs)\.' -j"$((jobs / 2 > 1 ? jobs / 2 : 1))" --timeout 180 --output-on-failure
    rc=$?
    note "ctest clzero.* and from_docs.* on $platform (CUDA's loader): $(status $rc), $(grep -E 'tests passed|tests failed' "$out/ctest-$tag-cuda-loader.log" | tail -1) ($(($(date +%s) - t0)) s)"
  done
}

# soak.shadow_maps' command alone, SOAK_REPEATS times (default 20) in each of
# four set-ups on NVIDIA, ocl-icd preloaded as in the tests stage: under the
# fault layer with shadow maps (the CTest entry), under the layer without
# them, without the layer, and the first with one thread. Where an
# implementation refuses an allocation the soak says what the process held
# and whether the same tensor was made after clFinish and 10 ms; the failed
# runs' output is kept (soak/), with that of runs that met a refusal, and
# the summary counts both in each set-up.
stage_soak() {
  exe tests/soak/clzero_soak || { note "soak: not built"; return 0; }
  mkdir -p "$out/soak"
  local layer=$build/tests/fault_injection/libclzero_fault_layer.so
  local setup i log rc failed made
  for setup in shadow layer none shadow-1thread; do
    local envs=(LD_PRELOAD="$ocl_icd" CLZERO_TEST_PLATFORM="NVIDIA CUDA")
    local threads=2
    case $setup in
      shadow) envs+=(OPENCL_LAYERS="$layer" CLZERO_FAULT_SHADOW_MAPS=1 CLZERO_FAULT_STRICT=1 CLZERO_FAULT_REPORT=1) ;;
      layer) envs+=(OPENCL_LAYERS="$layer" CLZERO_FAULT_STRICT=1 CLZERO_FAULT_REPORT=1) ;;
      shadow-1thread)
        envs+=(OPENCL_LAYERS="$layer" CLZERO_FAULT_SHADOW_MAPS=1 CLZERO_FAULT_STRICT=1 CLZERO_FAULT_REPORT=1)
        threads=1
        ;;
    esac
    failed=0 made=0 met=0
    for i in $(seq 1 "${SOAK_REPEATS:-20}"); do
      log=$out/soak/$setup-$i.log
      run_for 60 "$log" env "${envs[@]}" "$build/tests/soak/clzero_soak" --inferences 1500 --threads "$threads" --seed 2
      rc=$?
      # Refusals the soak's second request met (soaks since 9e8080e), and
      # failed runs whose error says the retry made the tensor (before).
      local n
      n=$(grep -ho '[0-9]* refused allocation(s) made when asked again,' "$log" | awk '{s += $1} END {print s + 0}')
      met=$((met + n))
      if [ $rc -eq 0 ] && grep -q '^PASS' "$log"; then
        [ "$n" -eq 0 ] && rm -f "$log"
      else
        failed=$((failed + 1))
        grep -q 'after clFinish and 10 ms: made' "$log" && made=$((made + 1))
      fi
    done
    note "soak ($setup, $threads thread(s)) alone: $failed of ${SOAK_REPEATS:-20} failed (the same tensor made on retry in $made of them); refusals met by the soak's second request: $met"
  done
  grep -ho 'error: .*' "$out"/soak/*.log 2> /dev/null | sed 's/\[process:.*//' | sort | uniq -c | sort -rn | head -8 |
    while read -r line; do note "  ${line:0:200}"; done
}

# tools/device/alloc_churn.cpp on NVIDIA, raw OpenCL without clzero: threads
# with a queue each make, use and free memory of the soak's kinds and sizes,
# counting the allocations the driver refuses and whether a retry met them;
# with 2 and 4 threads, then with 2 under the fault layer without and with
# shadow maps (ocl-icd preloaded in every run, as in the tests stage).
stage_churn() {
  mkdir -p "$build"
  g++ -std=c++17 -O2 tools/device/alloc_churn.cpp -o "$build/alloc_churn" -lOpenCL -pthread > "$out/alloc_churn-build.log" 2>&1 ||
    { note "alloc_churn: not built"; return 0; }
  local layer=$build/tests/fault_injection/libclzero_fault_layer.so setup
  for setup in raw-2 raw-4 layer-2 shadow-2; do
    local envs=(LD_PRELOAD="$ocl_icd")
    case $setup in
      layer-*) envs+=(OPENCL_LAYERS="$layer" CLZERO_FAULT_REPORT=1) ;;
      shadow-*) envs+=(OPENCL_LAYERS="$layer" CLZERO_FAULT_SHADOW_MAPS=1 CLZERO_FAULT_REPORT=1) ;;
    esac
    run_for 40 "$out/alloc_churn-$setup.log" env "${envs[@]}" "$build/alloc_churn" NVIDIA "${setup##*-}" "${CHURN_SECONDS:-10}" 2
    note "alloc_churn ($setup): $(status $?) $(grep -h '^total' "$out/alloc_churn-$setup.log" | cut -c1-150)"
  done
}

stage_examples() {
  for platform in "${platforms[@]}"; do
    tag=$(tag_of "$platform")
    if exe examples/porting/porting_check; then
      run_for 60 "$out/porting_check-$tag.log" "$build/examples/porting/porting_check" "${platform%% *}"
      note "porting_check on $platform: $(status $?) $(tail -1 "$out/porting_check-$tag.log" | cut -c1-80)"
    fi
    if exe examples/mlp_digits/mlp_digits; then
      run_for 60 "$out/mlp_digits-$tag.log" "$build/examples/mlp_digits/mlp_digits" --platform "${platform%% *}"
      note "mlp_digits on $platform: $(status $?) $(tail -1 "$out/mlp_digits-$tag.log" | cut -c1-80)"
    else
      note "mlp_digits: not built (CLBlast missing?)"
    fi
    if exe examples/dense_softmax; then
      run_for 60 "$out/dense_softmax-$tag.log" "$build/examples/dense_softmax" "${platform%% *}"
      note "dense_softmax on $platform: $(status $?) $(tail -1 "$out/dense_softmax-$tag.log" | cut -c1-80)"
    fi
  done
}

stage_info() {
  exe tools/clzero-info || return 0
  run_for 60 "$out/clzero-info.txt" "$build/tools/clzero-info"
  note "clzero-info: $(status $?)"
}

stage_sequences() {
  exe benchmarks/clzero_sequences || { note "clzero_sequences: not built"; return 0; }
  # SEQUENCES_RUNS whole runs per platform (fresh process, fresh buffers),
  # alternating platforms, so that a ratio can be claimed only where it
  # holds in every run.
  # Where the cuda stage built cuda_zero_copy, its zero copy runs just before
  # each NVIDIA run (cuda-zero-copy-runN.json), so that clzero's Auto is held
  # against a CUDA run minutes, not a stage, apart.
  # SEQUENCES_FIRST_RUN (default 1) starts the numbering later, for the
  # rest of the runs in a second call (SEQUENCES_RUNS is the last number).
  for run in $(seq "${SEQUENCES_FIRST_RUN:-1}" "${SEQUENCES_RUNS:-1}"); do
    # Only where an NVIDIA run follows: before PoCL runs a CUDA run
    # compares nothing.
    if [ -x "$build/cuda_zero_copy" ] && [[ " ${SEQUENCES_PLATFORMS:-nvidia pocl} " == *" nvidia "* ]]; then
      run_for 60 "$out/cuda-zero-copy-run$run.log" "$build/cuda_zero_copy" --filter cuda.zero_copy \
        --json "$out/cuda-zero-copy-run$run.json"
      note "CUDA zero copy (before run $run): $(status $?)"
    fi
    for platform in "${platforms[@]}"; do
      tag=$(tag_of "$platform")
      # SEQUENCES_PLATFORMS="nvidia" or "pocl" keeps one platform (a call
      # each, when the runs of both would not fit one call).
      case " ${SEQUENCES_PLATFORMS:-nvidia pocl} " in *" $tag "*) ;; *) continue ;; esac
      name=sequences-$tag
      [ "${SEQUENCES_RUNS:-1}" -gt 1 ] && name=sequences-$tag-run$run
      # The budget covers the timed rounds, and the confirmation's as much
      # again; set-up, the 64 MiB allocations and the call count come on
      # top, hence three times the budget as the limit.
      run_for ${SEQUENCES_RUN_LIMIT_S:-$((3 * ${SEQUENCES_BUDGET_S:-55} + 60))} "$out/$name.log" "$build/benchmarks/clzero_sequences" \
        --platform "$platform" --budget-s "${SEQUENCES_BUDGET_S:-55}" --out "$out/$name.json" ${SEQUENCES_ARGS:-}
      rc=$?
      note "clzero_sequences on $platform (run $run): $(status $rc)$(grep -E 'STALE|done in' "$out/$name.log" | tr '\n' ' ' | cut -c1-200)"
    done
  done
}

stage_paced() {
  exe benchmarks/clzero_sequences || { note "clzero_sequences: not built"; return 0; }
  # The serial section as a paced engine runs it (clzero_sequences
  # --gap-us): PACED_GAPS lists the paces, "none" (back to back, the same
  # variants and sizes, for comparison), "sleepUS" (the host thread sleeps
  # US microseconds before each inference) or "spinUS" (it spins them);
  # every pace on each platform in turn.
  local gap args
  for gap in ${PACED_GAPS:-none sleep1000}; do
    case $gap in
      none) args=() ;;
      sleep*) args=(--gap-us "${gap#sleep}") ;;
      spin*) args=(--gap-us "${gap#spin}" --gap-spin) ;;
      *) note "paced: unknown pace '$gap'" && continue ;;
    esac
    for platform in "${platforms[@]}"; do
      tag=$(tag_of "$platform")
      run_for $((2 * ${PACED_BUDGET_S:-30} + 60)) "$out/paced-$tag-$gap.log" "$build/benchmarks/clzero_sequences" \
        --platform "$platform" --sections serial --sizes "${PACED_SIZES:-4096,262144,4194304}" --reps 2 \
        --budget-s "${PACED_BUDGET_S:-30}" --confirm-budget-s 0 --no-calls --no-cuda "${args[@]}" \
        --out "$out/paced-$tag-$gap.json"
      note "paced ($gap) on $platform: $(status $?)"
    done
  done
}

stage_host() {
  exe benchmarks/clzero_sequences || { note "host costs: not built"; return 0; }
  for platform in "${platforms[@]}"; do
    tag=$(tag_of "$platform")
    run_for 120 "$out/host-$tag.log" "$build/benchmarks/clzero_sequences" --platform "$platform" \
      --sections host --reps 3 --no-calls --out "$out/host-$tag.json"
    note "host costs on $platform: $(status $?)"
  done
}

stage_mnn() {
  [ -x .mnn/dist/readback_bench ] || { note "MNN readback: no .mnn/dist (examples/engines/mnn/build.sh)"; return 0; }
  run_for 240 "$out/mnn.log" bash examples/engines/mnn/h200_run.sh "$out/mnn" "$(cat COMMIT 2> /dev/null || git log --format=%h -1)"
  note "MNN readback: $(status $?) $(tail -1 "$out/mnn.log" | cut -c1-120)"
}

stage_cuda() {
  command -v nvcc > /dev/null || { note "CUDA comparison: no nvcc"; return 0; }
  nvcc -O2 -std=c++17 -arch=sm_90 -o "$build/cuda_zero_copy" benchmarks/cuda/cuda_zero_copy.cu > "$out/cuda-build.log" 2>&1 &&
    run_for 90 "$out/bench-cuda.log" "$build/cuda_zero_copy" --json "$out/bench-cuda.json"
  note "CUDA comparison: $(status $?)"
}

stage_bench() {
  exe benchmarks/clzero_bench || { note "clzero_bench: not built"; return 0; }
  for platform in "${platforms[@]}"; do
    tag=$(tag_of "$platform")
    run_for 90 "$out/bench-$tag.log" env CLZERO_BENCH_PLATFORM="$platform" "$build/benchmarks/clzero_bench" \
      --benchmark_out="$out/bench-$tag.json" --benchmark_out_format=json \
      --benchmark_repetitions="${BENCH_REPS:-1}" --benchmark_min_time="${BENCH_MIN_TIME:-0.03}"
    note "clzero_bench on $platform: $(status $?)"
  done
}

for stage in $stages; do
  if declare -F "stage_$stage" > /dev/null; then
    "stage_$stage"
  else
    note "unknown stage '$stage' (known: build quirks stress churn soak tests examples info sequences paced host cuda mnn bench)"
  fi
done

note "total: $(($(date +%s) - start)) s of $limit"
echo
echo "==== summary"
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
if [ -n "${OUT:-}" ]; then
  tar czf "$OUT/logs.tgz" -C "$out" .
  cp "$out/summary.txt" "$OUT/"
  for f in "$out"/sequences-nvidia.json "$out"/sequences-pocl.json "$out"/bench-*.json; do
    [ -f "$f" ] && cp "$f" "$OUT/"
  done
fi
exit 0
