#!/usr/bin/env bash
# Builds MNN's OpenCL backend twice, as it is and with clzero's patch, and the
# readback benchmark against them.
#
#   examples/engines/mnn/build.sh [--source DIR] [--work DIR] [--jobs N]
#
#   --source DIR  an MNN source tree at the pinned commit (a git checkout or an
#                 exported tree; no network needed). The patch is applied to it
#                 in place, and taken off again at the start of the next run.
#                 Default: WORK/src, cloned from MNN_REPOSITORY (GitHub unless
#                 the environment names another clone, a mirror or a local
#                 path) and checked out at the pinned commit when it is not
#                 there yet.
#   --work DIR    where the builds go (default: .mnn in the repository root,
#                 which git ignores)
#   --jobs N      parallel compile jobs (default: the number of CPUs)
#   --clzero-include DIR  clzero's include directory (default: this
#                 repository's include/)
#
# MNN is built once as it is (WORK/build), its libraries are kept, then the
# patch is applied and the same build directory rebuilt: only the patched
# files compile again. Results, all that a machine without MNN's source needs:
#   WORK/dist/common/     libMNN.so, libMNN_Express.so (the patch does not touch them)
#   WORK/dist/unpatched/  libMNN_CL.so as MNN ships it
#   WORK/dist/patched/    libMNN_CL.so with clzero's readback
#   WORK/dist/shim/       libOpenCL.so that shows CPU devices to MNN as GPUs (for PoCL)
#   WORK/dist/readback_bench
# Run a variant with LD_LIBRARY_PATH=WORK/dist/<variant>:WORK/dist/common.
set -euo pipefail

MNN_REPOSITORY=${MNN_REPOSITORY:-https://github.com/alibaba/MNN.git}
MNN_COMMIT=4d40bdbd7efb73a58383bb5da867a6f41eb1776e  # 2026-08-20, the commit issue 14 read

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
work="$repo/.mnn"
source_dir=""
jobs=$(nproc)
clzero_include="$repo/include"
while [ $# -gt 0 ]; do
  case "$1" in
    --source) source_dir=$(cd "$2" && pwd); shift 2 ;;
    --work) mkdir -p "$2"; work=$(cd "$2" && pwd); shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --clzero-include) clzero_include=$(cd "$2" && pwd); shift 2 ;;
    *) echo "build.sh: unknown argument $1 (see the top of this file)" >&2; exit 2 ;;
  esac
done
patch_file="$here/clzero.patch"

if [ -z "$source_dir" ]; then
  source_dir="$work/src"
  if [ ! -d "$source_dir" ]; then
    git clone "$MNN_REPOSITORY" "$source_dir"
  fi
  if [ -d "$source_dir/.git" ]; then
    git -C "$source_dir" checkout --quiet "$MNN_COMMIT"
  fi
fi
if [ -d "$source_dir/.git" ]; then
  head=$(git -C "$source_dir" rev-parse HEAD)
  if [ "$head" != "$MNN_COMMIT" ]; then
    echo "build.sh: $source_dir is at $head; the patch is made for $MNN_COMMIT (git -C $source_dir checkout $MNN_COMMIT)" >&2
    exit 1
  fi
fi
[ -f "$source_dir/source/backend/opencl/core/OpenCLBackend.cpp" ] ||
  { echo "build.sh: $source_dir is not an MNN source tree" >&2; exit 1; }

# patch(1), not git apply: inside another repository's work tree (as
# .mnn/src is), git apply takes paths from that repository's root and skips
# the patch's files without a word.
apply() { patch -d "$source_dir" -p1 -s -f "$@" <"$patch_file"; }
if apply --reverse --dry-run >/dev/null 2>&1; then
  apply --reverse  # left applied by an earlier run
fi
apply --dry-run >/dev/null || { echo "build.sh: clzero.patch does not apply to $source_dir" >&2; exit 1; }

build="$work/build"
dist="$work/dist"
mkdir -p "$build" "$dist/common" "$dist/unpatched" "$dist/patched" "$dist/shim"

# Only the OpenCL backend among the GPU backends; no tools, tests or demos.
# C++17 because clzero needs it; both variants are built with it.
cmake -G Ninja -S "$source_dir" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 \
  -DMNN_OPENCL=ON -DMNN_VULKAN=OFF -DMNN_CUDA=OFF -DMNN_OPENGL=OFF -DMNN_METAL=OFF \
  -DMNN_BUILD_TOOLS=OFF -DMNN_BUILD_DEMO=OFF -DMNN_BUILD_TEST=OFF -DMNN_BUILD_BENCHMARK=OFF \
  -DMNN_BUILD_CONVERTER=OFF -DMNN_BUILD_SHARED_LIBS=ON -DMNN_SEP_BUILD=ON \
  -DCLZERO_INCLUDE_DIR="$clzero_include" >/dev/null
ninja -C "$build" -j "$jobs"
strip --strip-unneeded -o "$dist/common/libMNN.so" "$build/libMNN.so"
strip --strip-unneeded -o "$dist/common/libMNN_Express.so" "$build/express/libMNN_Express.so"
strip --strip-unneeded -o "$dist/unpatched/libMNN_CL.so" "$build/source/backend/opencl/libMNN_CL.so"

apply
ninja -C "$build" -j "$jobs"
strip --strip-unneeded -o "$dist/patched/libMNN_CL.so" "$build/source/backend/opencl/libMNN_CL.so"

# Inside libMNN_CL every cl* call must resolve to MNN's wrapper (or the
# patch's forwarders): an undefined one would fail only when first called.
undefined=$(nm -D --undefined-only "$dist/patched/libMNN_CL.so" | awk '{print $2}' | grep -E '^cl[A-Z]' || true)
if [ -n "$undefined" ]; then
  echo "build.sh: the patched libMNN_CL.so calls OpenCL functions MNN's wrapper does not define:" $undefined >&2
  echo "build.sh: add them to the forwarders at the end of ClzeroReadback.cpp in clzero.patch" >&2
  exit 1
fi

cmake -G Ninja -S "$here" -B "$work/bench" -DCMAKE_BUILD_TYPE=Release -DMNN_SOURCE_DIR="$source_dir" \
  -DMNN_LIBRARY_DIR="$dist" >/dev/null
ninja -C "$work/bench" -j "$jobs"
cp "$work/bench/readback_bench" "$dist/readback_bench"
cp "$work/bench/libOpenCL.so" "$dist/shim/libOpenCL.so"
echo "build.sh: done; binaries in $dist"
