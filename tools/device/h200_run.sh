#!/usr/bin/env bash
# The GPU test machine's run, in one go: builds clzero, then runs the whole
# test suite and the examples on NVIDIA's OpenCL and on PoCL, clzero-info,
# and (with "bench") the benchmarks and the CUDA comparison. Full logs go to
# $OUT (or ./device-logs), a short table is printed last.
#
#   tools/device/h200_run.sh [tests] [info] [bench] [cuda]   (default: all)
set -uo pipefail
cd "$(dirname "$0")/../.."
# Logs are written to device-logs/ and, on the GPU test machine, also packed
# into $OUT/logs.tgz (the machine returns few files).
out=$PWD/device-logs
rm -rf "$out"
mkdir -p "$out"
stages=${*:-tests info bench cuda}
has() { [[ " $stages " == *" $1 "* ]]; }

# NVIDIA's OpenCL driver is installed but not registered with the ICD loader.
echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
{
  date -u
  uname -a
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  clinfo -l 2>&1
  clinfo 2>&1 | grep -E "Platform Name|Platform Version|Device Name|Device Version|Driver Version|SVM|Unified memory|Extensions  " 
  g++ --version | head -1
  cmake --version | head -1
  nvcc --version 2>&1 | tail -2
} > "$out/machine.txt" 2>&1

summary=()
note() { summary+=("$1"); echo "== $1"; }

jobs=$(nproc)
# Google Benchmark is not installed there: Debian's packages, carried in .deb/.
bench_args=(-DCLZERO_BUILD_BENCHMARKS=OFF)
if has bench && ls .deb/*.deb > /dev/null 2>&1; then
  for f in .deb/*.deb; do dpkg -x "$f" /tmp/debroot; done
  bench_args=(-DCLZERO_BUILD_BENCHMARKS=ON -DCMAKE_PREFIX_PATH=/tmp/debroot/usr)
  export LD_LIBRARY_PATH=/tmp/debroot/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
cmake -S . -B build-h200 -DCMAKE_BUILD_TYPE=Release "${bench_args[@]}" > "$out/configure.log" 2>&1
if cmake --build build-h200 -j"$jobs" > "$out/build.log" 2>&1; then note "build: ok"; else note "build: FAILED (build.log)"; tail -40 "$out/build.log"; fi

if has tests; then
  g++ -std=c++17 -O2 tools/device/nv_quirks.cpp -o build-h200/nv_quirks -lOpenCL > "$out/nv_quirks-build.log" 2>&1 &&
    build-h200/nv_quirks NVIDIA 262144 > "$out/nv_quirks.log" 2>&1
  note "nv_quirks: rc=$?"
  for platform in "NVIDIA CUDA" "Portable Computing Language"; do
    tag=$([ "$platform" = "NVIDIA CUDA" ] && echo nvidia || echo pocl)
    export CLZERO_TEST_PLATFORM="$platform" CLZERO_TEST_LARGE=1
    start=$(date +%s)
    build-h200/tests/clzero_tests --durations yes > "$out/tests-$tag.log" 2>&1
    rc=$?
    note "tests on $platform: rc=$rc, $(tail -3 "$out/tests-$tag.log" | grep -E 'passed|failed' | tr -s ' ' | tr '\n' ' ') ($(( $(date +%s) - start )) s)"
    build-h200/examples/dense_softmax "${platform%% *}" > "$out/example-$tag.log" 2>&1
    note "dense_softmax on $platform: rc=$? $(tail -1 "$out/example-$tag.log" | cut -c1-60)"
    unset CLZERO_TEST_PLATFORM CLZERO_TEST_LARGE
  done
fi

if has info && [ -x build-h200/tools/clzero-info ]; then
  build-h200/tools/clzero-info > "$out/clzero-info.txt" 2>&1
  note "clzero-info: rc=$?"
fi

if has bench && [ -x build-h200/benchmarks/clzero_bench ]; then
  for platform in "NVIDIA CUDA" "Portable Computing Language"; do
    tag=$([ "$platform" = "NVIDIA CUDA" ] && echo nvidia || echo pocl)
    CLZERO_BENCH_PLATFORM="$platform" build-h200/benchmarks/clzero_bench --benchmark_out="$out/bench-$tag.json" \
      --benchmark_out_format=json --benchmark_repetitions=${BENCH_REPS:-5} > "$out/bench-$tag.log" 2>&1
    note "benchmarks on $platform: rc=$?"
  done
fi

if has cuda && [ -f benchmarks/cuda/cuda_zero_copy.cu ] && command -v nvcc > /dev/null; then
  nvcc -O2 -std=c++17 -o build-h200/cuda_zero_copy benchmarks/cuda/cuda_zero_copy.cu > "$out/cuda-build.log" 2>&1 &&
    build-h200/cuda_zero_copy --json "$out/bench-cuda.json" > "$out/bench-cuda.log" 2>&1
  note "CUDA comparison: rc=$?"
fi

echo
echo "==== summary"
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
if [ -n "${OUT:-}" ]; then
  tar czf "$OUT/logs.tgz" -C "$out" .
  cp "$out/summary.txt" "$OUT/"
fi
