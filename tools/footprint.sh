#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The host's footprint of one inference, counted under Callgrind: every serial
# sequence of clzero_sequences (hand-written and clzero) on the null device,
# each inference after 4 MiB were written, so that its last-level misses are
# the cache lines it touches (benchmarks/sequences/main.cpp, footprint_run).
# The level-1 instruction cache is simulated tiny, so that every line of
# code an inference runs reaches the last level and is counted there.
#
#   tools/footprint.sh BINARY OUT_DIR [clzero_sequences options...]
#
# Writes OUT_DIR/callgrind.out.<pid>.<n>, one profile per variant and mode,
# OUT_DIR/variants.json (what each variant is) and OUT_DIR/COMMAND (with
# CLZERO_HOST_WAIT, which sets how clzero's views wait);
# tools/footprint_report.py --import reads them.
set -eu
if [ $# -lt 2 ]; then
  echo "usage: tools/footprint.sh BINARY OUT_DIR [clzero_sequences options...]" >&2
  exit 2
fi
binary=$1
out=$2
shift 2
# How clzero's views wait is measured per device by timing, which under
# Callgrind comes out differently from run to run: name it.
case "${CLZERO_HOST_WAIT:-}" in
  map|poll|wait) ;;
  *) echo "footprint.sh: set CLZERO_HOST_WAIT=map, poll or wait (how clzero's views wait while counted)" >&2; exit 2 ;;
esac
command -v valgrind >/dev/null || { echo "footprint.sh: valgrind is not installed (Debian: apt-get install valgrind)" >&2; exit 2; }
mkdir -p "$out"
# What an earlier count left there must not pass for this one.
rm -f "$out"/callgrind.out.* "$out/variants.json" "$out/COMMIT" "$out/COMMAND" "$out/valgrind.log"
echo "CLZERO_HOST_WAIT=${CLZERO_HOST_WAIT:-} valgrind --tool=callgrind --cache-sim=yes --I1=1024,2,64 --D1=32768,8,64 --LL=1048576,16,64 clzero_sequences --sections footprint --no-calls $*" > "$out/COMMAND"
valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no --cache-sim=yes \
  --I1=1024,2,64 --D1=32768,8,64 --LL=1048576,16,64 \
  --callgrind-out-file="$out/callgrind.out.%p" \
  "$binary" --sections footprint --no-calls --out "$out/variants.json" "$@" 2> "$out/valgrind.log"
