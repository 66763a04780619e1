#!/usr/bin/env bash
# Side-by-side C++ dispatch throughput and allocations of two builds of fluss_writer_bench
# (e.g. one built from an older commit in its own checkout, copied out before the current one
# was built: the binaries are statically linked, so the shared cargo target dir does not mix them).
#   bench/cpp/compare.sh OLD_BIN NEW_BIN [rounds=7] [callbacks=2000000] [alloc_records=100000]
# Rounds alternate OLD NEW, NEW OLD, ... (one warm-up + one timed run each); prints every run and
# the medians, then the allocation table of each.
set -euo pipefail
OLD="$1"; NEW="$2"; ROUNDS="${3:-7}"; N="${4:-2000000}"; AN="${5:-100000}"
echo "load: $(uptime)"
run() { "$1" dispatch "$N" 1 | sed -E 's/.*median ([0-9.]+) M.*/\1/'; }
old=(); new=()
for ((i = 0; i < ROUNDS; i++)); do
  if ((i % 2 == 0)); then old+=("$(run "$OLD")"); new+=("$(run "$NEW")"); else new+=("$(run "$NEW")"); old+=("$(run "$OLD")"); fi
done
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "old runs (M callbacks/s): ${old[*]}"
echo "new runs (M callbacks/s): ${new[*]}"
echo "median old $(med "${old[@]}") M/s, new $(med "${new[@]}") M/s"
echo "load: $(uptime)"
echo "== old"; "$OLD" allocs "$AN"
echo "== new"; "$NEW" allocs "$AN"
