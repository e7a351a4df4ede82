#!/usr/bin/env bash
# Runs the readback benchmark with MNN as it is and with clzero's patch, in
# alternating processes (two builds of MNN cannot share one process: same
# symbols), the order flipping every round (U P, P U, U P, ...).
#
#   run_bench.sh DIST OUT PLATFORM [ROUNDS] [ITERATIONS] [--shim]
#
#   DIST        build.sh's dist folder
#   OUT         folder for the JSON files and logs
#   PLATFORM    a substring of the OpenCL platform's name (NVIDIA, Portable)
#   ROUNDS      rounds, each one process per variant (default 3)
#   ITERATIONS  inferences per way of reading, per model and process (default 300)
#   --shim      show the platform's CPU devices to MNN as GPUs (PoCL)
#
# READBACK_ARGS, if set, is passed on to every readback_bench (e.g.
# "--read-layout c4": the outputs read in another layout than stored, so
# through MNN's conversion kernel; engines_report takes only stored ones).
#
# The CPU backend check runs in round 0 only (it is slow on big outputs);
# the bit-identical check covers every inference of every round.
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,20p "$0" >&2; exit 2; }
dist=$(cd "$1" && pwd); out="$2"; platform="$3"
rounds="${4:-3}"; iterations="${5:-300}"; shim="${6:-}"
mkdir -p "$out"

extra_path=""
if [ "$shim" = "--shim" ]; then
  extra_path="$dist/shim"
else
  # MNN dlopens "libOpenCL.so" (no version): a development package's link,
  # which may be another loader than the libOpenCL.so.1 programs link to (on
  # the H200 machine, ocl-icd, which knows only PoCL's ICD, against CUDA's
  # loader, which also finds NVIDIA's). Point that name at the loader
  # programs get: the first on LD_LIBRARY_PATH, else ldconfig's first.
  loader=""
  for d in $(echo "${LD_LIBRARY_PATH:-}" | tr : " "); do
    if [ -e "$d/libOpenCL.so.1" ]; then loader="$d/libOpenCL.so.1"; break; fi
  done
  [ -n "$loader" ] || loader=$(ldconfig -p | awk '/libOpenCL\.so\.1 /{print $NF; exit}')
  [ -n "$loader" ] || { echo "run_bench.sh: no libOpenCL.so.1 found" >&2; exit 1; }
  extra_path=$(mktemp -d)
  ln -s "$loader" "$extra_path/libOpenCL.so"
  echo "run_bench.sh: libOpenCL.so -> $loader" | tee -a "$out/run.log"
fi

failed=0  # a failed process does not stop the others: every log is kept
for ((r = 0; r < rounds; r++)); do
  if ((r % 2 == 0)); then order="unpatched patched"; else order="patched unpatched"; fi
  for variant in $order; do
    check=""
    ((r == 0)) || check="--no-cpu-check"
    echo "round $r $variant" | tee -a "$out/run.log"
    LD_LIBRARY_PATH="$extra_path${extra_path:+:}$dist/$variant:$dist/common${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      MNN_CLZERO_VERBOSE=1 "$dist/readback_bench" --variant "$variant" --round "$r" --platform "$platform" \
      --iterations "$iterations" $check ${READBACK_ARGS:-} --out "$out/$variant-$r.json" >>"$out/run.log" 2>&1 ||
      { echo "run_bench.sh: round $r $variant failed" | tee -a "$out/run.log" >&2; failed=1; }
  done
done
echo "run_bench.sh: done, exit status $failed" | tee -a "$out/run.log"
exit $failed
