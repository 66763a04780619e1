#!/usr/bin/env bash
# C++ benchmarks for scripts/bench-all.sh: JSON lines on stdout, text on stderr.
#
# Builds bench/cpp in release (the Rust library with the profiling profile: release code with
# line tables; with the test hooks, for RunThroughDispatcher) with the repository's CMake setup (build dir $REPO/build-bench,
# shared CARGO_TARGET_DIR), then runs the embedded dispatch/e2e benchmark (text) and, with
# FLUSS_BOOTSTRAP_SERVERS, the cluster cases (callbacks vs Append + Wait thread; JSON lines).
# Environment: FLUSS_BOOTSTRAP_SERVERS, BENCH_CPP_RECORDS (200000), BENCH_ROUNDS (5), BENCH_CPP_BUILD.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
BUILD="${BENCH_CPP_BUILD:-$REPO/build-bench}"
GEN=()
command -v ninja >/dev/null 2>&1 && [[ ! -f "$BUILD/CMakeCache.txt" ]] && GEN=(-G Ninja)
cmake -S "$REPO" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DFLUSS_WRITER_CARGO_PROFILE=profiling -DFLUSS_WRITER_BUILD_TESTS=OFF \
  -DFLUSS_WRITER_BUILD_BENCH=ON -DFLUSS_WRITER_TEST_HOOKS=ON >&2
cmake --build "$BUILD" --target fluss_writer_bench >&2
BIN="$BUILD/bench/cpp/fluss_writer_bench"
ROUNDS="${BENCH_ROUNDS:-5}"
echo "[bench-cpp] load: $(uptime)" >&2
if [[ -n "${FLUSS_BOOTSTRAP_SERVERS:-}" ]]; then
  "$BIN" cluster "$FLUSS_BOOTSTRAP_SERVERS" "${BENCH_CPP_RECORDS:-200000}" "$ROUNDS"
else
  echo "[bench-cpp] FLUSS_BOOTSTRAP_SERVERS not set: cluster cases skipped" >&2
fi
if [[ -z "${BENCH_CPP_SKIP_EMBEDDED:-}" ]]; then
  "$BIN" 2000000 200000 "$ROUNDS" >&2
fi
# Acknowledgement-to-callback latency, not backlogged (20k records/s, 1 ms batch timeout).
"$BIN" latency embedded 20000 3
if [[ -n "${FLUSS_BOOTSTRAP_SERVERS:-}" ]]; then
  "$BIN" latency "$FLUSS_BOOTSTRAP_SERVERS" 20000 3
fi
echo "[bench-cpp] load: $(uptime)" >&2
