#!/usr/bin/env bash
# Interoperability checks against the official clients (FLUSS_BOOTSTRAP_SERVERS must be set for 1 and 2):
#
#   0. Java, no cluster: fluss-writer's error-code table equals the Errors enum of fluss-client 1.0.0
#      (codes, names, retriability, metadata refresh), its 0.9 rows that of 0.9.1
#      (rust/core/tests/interop_error_codes_java.rs, driving tests-interop/java/error_codes.sh);
#      and the Fluss 1.0 per-partition bucket count fields (routing_bucket_count, modify_bucket_count,
#      bucket_count_epoch, partition bucket_count) decode in fluss-client 1.0.0's message classes
#      to what fluss-writer encoded (rust/core/tests/interop_request_fields_java.rs, request_fields.sh).
#   1. Java: the official Java client (fluss-client 0.9.1) finds every row fluss-writer upserted,
#      by primary-key lookup, with identical values, also in lake-enabled tables of the cluster
#      with a Paimon lake (FLUSS_LAKE_BOOTSTRAP_SERVERS), and Fluss's own Java encoders write
#      nested values byte for byte as fluss-writer does (rust/core/tests/cluster_interop_java.rs,
#      driving tests-interop/java/run.sh). The same file checks the Fluss 1.0 rules, HUDI key bytes
#      and buckets and auto-partition time formats, against fluss-client 1.0.0's classes (no
#      cluster; FLOAT/DOUBLE Hudi keys only when JAVA is a JDK 19+).
#   2. Python: the official Python client (pyfluss 1.0.0) reads back a log table and the changelog
#      of a primary-key table written by fluss-writer, row for row, and lists and reads every
#      partition of a partitioned log table and a partitioned primary-key table; fluss-writer
#      reads back, row for row, partitioned tables pyfluss wrote (tests-interop/run_pyfluss.sh).
#
# Any mismatch fails the script (non-zero exit). scripts/test-all.sh runs it after the Rust tests.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
echo "--- interop 0/2: error-code table against the Java clients 1.0.0 and 0.9.1 (no cluster)" >&2
CI="${CI:-}" CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}" \
  cargo test -q --manifest-path "$REPO/Cargo.toml" --workspace --test interop_error_codes_java --test interop_request_fields_java -- --ignored --nocapture
: "${FLUSS_BOOTSTRAP_SERVERS:?FLUSS_BOOTSTRAP_SERVERS is not set: start the cluster (scripts/fluss-cluster.sh start) and export the line it prints}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
cd "$REPO"

echo "--- interop 1/2: Java client 0.9.1 primary-key lookups" >&2
t0=$SECONDS
# CI=true makes the test fail (not skip) if java is missing.
# The debug build that `cargo test --workspace` made (a release build of the core costs minutes).
CI="${CI:-}" cargo test --workspace --test cluster_interop_java -- --ignored --nocapture
echo "--- Java interop passed ($((SECONDS - t0)) s)" >&2

echo "--- interop 2/2: pyfluss 1.0.0 log scan, changelog and partitions, both ways" >&2
t0=$SECONDS
"$HERE/run_pyfluss.sh"
echo "--- pyfluss interop passed ($((SECONDS - t0)) s)" >&2
