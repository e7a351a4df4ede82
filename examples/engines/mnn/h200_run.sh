#!/usr/bin/env bash
# The run behind docs/engines.md: the machine's strings, then run_bench.sh
# on NVIDIA's OpenCL and on PoCL (through the CPU-as-GPU shim), with the
# binaries build.sh left in .mnn/dist (carried to a machine without MNN's
# source or network).
#
#   examples/engines/mnn/h200_run.sh OUT COMMIT
set -uo pipefail
out="$1"; commit="$2"
here=$(cd "$(dirname "$0")" && pwd)
dist="$here/../../../.mnn/dist"
mkdir -p "$out"
{
  echo "clzero commit of the patch and the benchmark: $commit"
  date -u; uname -a; echo "cpus: $(nproc)"
  nvidia-smi --query-gpu=name,driver_version --format=csv
  clinfo -l
  clinfo | grep -E "Platform Name|Platform Version|Device Name|Device Version|Driver Version"
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  ldconfig -p | grep -i opencl
  ls /etc/OpenCL/vendors
  echo "where MNN looks for libOpenCL.so (OpenCLWrapper.cpp), in order:"
  ls -la /usr/lib/libOpenCL.so /usr/local/lib/libOpenCL.so /usr/local/lib/libpocl.so /usr/lib64/libOpenCL.so \
    /usr/lib32/libOpenCL.so 2>&1
  (cd "$dist" && sha256sum readback_bench common/*.so unpatched/*.so patched/*.so shim/*.so)
} >"$out/machine.txt" 2>&1
status=0
"$here/run_bench.sh" "$dist" "$out/nvidia" NVIDIA 3 300 || status=1
# PoCL: with the machine's default loader (CUDA's, which also loads
# NVIDIA's ICD) every process crashed in PoCL's clCreateCommandQueue while
# MNN made its runtime. Through the ocl-icd loader with PoCL's ICD alone it
# runs; MNN crashes making the 1x1 convolution's session on PoCL 5 before
# any clzero code runs, so only the element-wise model is timed there.
pocl_icd=$(ls /etc/OpenCL/vendors/*pocl*.icd 2>/dev/null | head -1)
ocl_icd_dir=$(dirname "$(ls /lib/x86_64-linux-gnu/libOpenCL.so.1 /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 2>/dev/null | head -1)")
if [ -n "$pocl_icd" ] && [ "$ocl_icd_dir" != "." ]; then
  vendors=$(mktemp -d)
  cp "$pocl_icd" "$vendors/"
  mkdir -p "$out/pocl"
  echo "OCL_ICD_VENDORS=$vendors ($(basename "$pocl_icd")), LD_LIBRARY_PATH=$ocl_icd_dir," \
    "READBACK_ARGS=--only elementwise" >"$out/pocl/COMMAND"
  OCL_ICD_VENDORS="$vendors" LD_LIBRARY_PATH="$ocl_icd_dir" READBACK_ARGS="--only elementwise" \
    "$here/run_bench.sh" "$dist" "$out/pocl" Portable 3 300 --shim || status=1
else
  echo "h200_run.sh: no PoCL ICD or no ocl-icd loader; PoCL not run" | tee -a "$out/machine.txt"
  status=1
fi
echo "h200_run.sh: exit status $status" | tee -a "$out/machine.txt"
exit $status
