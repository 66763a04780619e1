#!/usr/bin/env bash
# Cargo's runner for the test binaries of `make test` (CARGO_TARGET_<triple>_RUNNER, set by
# scripts/test-all.sh for `cargo test --workspace` only): runs a libtest binary with
# `--report-time`, so that every test's line carries its time (`test x ... ok <1.234s>`) and the
# run's summary can name the slowest tests (scripts/test-summary.py). libtest accepts that option
# only as an unstable one; RUSTC_BOOTSTRAP is set for the test process alone (never for a
# compiler, whose artifacts it would change). The binaries with their own harness (the golden
# runner, libtest-mimic) and any run that lists tests rather than running them get their
# arguments untouched.
#   FLUSS_TEST_DEFER   space-separated test targets (e.g. "cluster_failover") that this run
#                      does not execute: scripts/test-all.sh runs them at the same time in a step
#                      of their own (on a cluster of their own), which says so and checks them.
set -euo pipefail
bin="$1"
shift
name="$(basename "$bin")"
for deferred in ${FLUSS_TEST_DEFER:-}; do
  if [[ "$name" == "$deferred"-* ]]; then
    echo "test-runner: tests/$deferred.rs runs in its own step of scripts/test-all.sh (FLUSS_TEST_DEFER), not here"
    exit 0
  fi
done
case "$name" in
  golden-*) exec "$bin" "$@" ;;
esac
for a in "$@"; do
  case "$a" in --list | --help | -h | --format*) exec "$bin" "$@" ;; esac
done
RUSTC_BOOTSTRAP=1 exec "$bin" -Zunstable-options --report-time "$@"
