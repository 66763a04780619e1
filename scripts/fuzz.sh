#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo-fuzz, libFuzzer, AddressSanitizer) of every decoder of bytes
# fluss-writer does not control: fuzz/fuzz_targets/*. Each target starts from the committed seeds
# (fuzz/seeds/<target>) and runs for FUZZ_SECONDS (default 60 s); any crash, panic, leak or
# timeout fails the script and leaves the input in fuzz/artifacts/<target>/. Commit such an input
# as fuzz/seeds/<target>/regression-<what> once the core refuses it: `make test` replays every
# committed seed and 2,000 deterministic mutations of each through the same target functions on
# the stable toolchain (rust/core/tests/fuzz_replay.rs); this script is the coverage-guided search
# with its nightly, instrumented build, `make fuzz`.
#
# Usage: scripts/fuzz.sh [target...]      (default: every target)
# Needs a nightly toolchain (rustup) and cargo-fuzz (installed from crates.io when missing).
# Without nightly: under CI=true the script fails; elsewhere it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
export PATH="$HOME/.cargo/bin:$PATH"
SECONDS_PER_TARGET="${FUZZ_SECONDS:-60}"
TARGET_DIR="${FUZZ_TARGET_DIR:-$("$REPO/scripts/cargo-target-dir.sh")/fuzz}"

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  rustup toolchain install nightly --profile minimal >/dev/null 2>&1 || true
fi
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  if [ "${CI:-}" = "true" ]; then
    echo "fuzz: no nightly Rust toolchain, and CI=true: the fuzz targets must run" >&2
    exit 1
  fi
  echo "WARNING: fuzz: no nightly Rust toolchain (rustup toolchain install nightly): fuzz targets not run" >&2
  exit 0
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cd fuzz/fuzz_targets && ls *.rs | sed 's/\.rs$//')
fi

cd fuzz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! cargo +nightly fuzz build --fuzz-dir . --target-dir "$TARGET_DIR" -O >"$work/build.log" 2>&1; then
  tail -n 40 "$work/build.log" >&2
  echo "fuzz: the targets do not build" >&2
  exit 1
fi
failed=0
passed=0
for t in "${targets[@]}"; do
  mkdir -p "$work/$t" "artifacts/$t"
  if [ -d "seeds/$t" ]; then cp "seeds/$t"/* "$work/$t/"; fi
  log="$work/$t.log"
  if cargo +nightly fuzz run --fuzz-dir . --target-dir "$TARGET_DIR" -O "$t" "$work/$t" -- \
      -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="artifacts/$t/" -print_final_stats=1 >"$log" 2>&1; then
    execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
    rate=$(grep -m1 'stat::average_exec_per_sec' "$log" | awk '{print $2}')
    cov=$(grep -E '^#[0-9]+.*(DONE|pulse)' "$log" | tail -n 1 | grep -oE 'cov: [0-9]+' || true)
    echo "fuzz $t: ok, ${execs:-?} execs in ${SECONDS_PER_TARGET} s (${rate:-?}/s), ${cov:-cov: ?}, corpus $(ls "$work/$t" | wc -l)"
    passed=$((passed + 1))
  else
    echo "fuzz $t: FAILED (input saved in fuzz/artifacts/$t/):" >&2
    grep -E 'panicked|ERROR|SUMMARY|Test unit written' "$log" | head -n 20 >&2 || tail -n 40 "$log" >&2
    failed=$((failed + 1))
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
