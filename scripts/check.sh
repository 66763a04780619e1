#!/usr/bin/env bash
# `make check`: the inner loop, about 5 minutes once the cache is warm (scripts/README.md has the
# figures). Formatting and clippy; the core's and the dispatcher's unit and property tests and the
# replay of the fuzz targets' inputs; the golden scenarios on the embedded engine in all three
# languages; and the Python suite on the embedded engine on one CPython, against a debug build with
# the test hooks (`maturin develop` into .venv). No cluster, no wheel, no sanitizers, no packages:
# `make test` runs all of that before anything lands.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="$("$REPO/scripts/cargo-target-dir.sh")"
# The embedded engine only, whatever the shell has exported.
unset CI FLUSS_BOOTSTRAP_SERVERS FLUSS_SASL_BOOTSTRAP_SERVERS FLUSS_REPLICATED_BOOTSTRAP_SERVERS FLUSS_REPLICATED_CLUSTER_ENV
JOBS="${JOBS:-2}"
step() { printf '\n=== check: %s === (%d:%02d elapsed)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }

step "rustfmt and clippy (all features)"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "Rust: the dispatcher's and the core's unit and property tests, the fuzz replay, the golden scenarios (embedded)"
cargo test -q -p fluss-writer-dispatch --lib --tests
cargo test -q -p fluss-writer --lib --test fuzz_replay
cargo test -q -p fluss-writer-golden

# The C++ golden scenarios run beside the Python step (their log is printed when both are done):
# pytest is mostly one busy thread, so the C++ build and ctest fill the other core. The two
# cargo builds take turns on cargo's lock.
cpp_golden() {
  cmake -S . -B build-check -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="-Werror=all -Werror=extra" \
    -DFLUSS_WRITER_BUILD_TESTS=ON -DFLUSS_WRITER_TEST_HOOKS=ON -DFLUSS_WRITER_BUILD_BENCH=OFF \
    -DFLUSS_WRITER_CARGO_TARGET_DIR="$CARGO_TARGET_DIR" >/dev/null
  cmake --build build-check -j "$JOBS" --target golden_runner
  (cd build-check && ctest --output-on-failure -j "$JOBS" --timeout 120 -R '^golden/')
}
step "Python: debug build with the test hooks (.venv), ruff, stubtest, the suite on the embedded engine; beside it, C++: the golden scenarios (embedded)"
mkdir -p build-logs
cpp_golden >build-logs/check-cpp.log 2>&1 &
cpp_pid=$!
py_rc=0
FLUSS_PY_DEVELOP=1 tests-py/run.sh -x || py_rc=$?
cpp_rc=0
wait "$cpp_pid" || cpp_rc=$?
step "C++: the golden scenarios (embedded), run beside the Python step: its output"
cat build-logs/check-cpp.log
if [ "$py_rc" != 0 ] || [ "$cpp_rc" != 0 ]; then
  echo "check FAILED: Python step status $py_rc, C++ golden step status $cpp_rc" >&2
  exit 1
fi

step "check passed"
