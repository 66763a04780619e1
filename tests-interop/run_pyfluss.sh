#!/usr/bin/env bash
# Interop with the official Python client, both ways:
#  1. fluss-writer writes (rust/core/examples/interop_writer.rs prints a JSON manifest of what it
#     wrote: log, primary-key and partitioned tables), pyfluss 1.0.0 lists the partitions and reads
#     back and compares row for row (tests-interop/pyfluss_readback.py);
#  2. pyfluss creates partitioned tables and their partitions and writes them (the same script,
#     --written: a second manifest), fluss-writer lists and reads them back row for row
#     (interop_writer --read-back).
# Needs FLUSS_BOOTSTRAP_SERVERS (a running cluster).
#
# pyfluss lives in its own venv, $REPO/.venv-interop (created on first use from PyPI:
# `pyfluss==1.0.0`, which pulls pyarrow and pandas). Exit code 0 = match, non-zero = mismatch or error.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
: "${FLUSS_BOOTSTRAP_SERVERS:?FLUSS_BOOTSTRAP_SERVERS is not set: start the cluster (scripts/fluss-cluster.sh start) and export the line it prints}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
VENV="${FLUSS_INTEROP_VENV:-$REPO/.venv-interop}"
PYFLUSS_VERSION="${PYFLUSS_VERSION:-1.0.0}"
PYTHON="${PYTHON:-python3}"

if ! "$VENV/bin/python" -c "import fluss, importlib.metadata as m; assert m.version('pyfluss') == '$PYFLUSS_VERSION'" 2>/dev/null; then
  echo "[pyfluss-interop] creating $VENV with pyfluss==$PYFLUSS_VERSION" >&2
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "pyfluss==$PYFLUSS_VERSION"
fi

manifest="$(mktemp "${TMPDIR:-/tmp}/fluss-interop-manifest.XXXXXX.json")"
written="$(mktemp "${TMPDIR:-/tmp}/fluss-interop-written.XXXXXX.json")"
trap 'rm -f "$manifest" "$written"' EXIT
# --workspace: the workspace's feature set, which `cargo test --workspace` built the example with
# (an example may use dev-dependencies, so it gets their features, as in `cargo test`; with
# -p fluss-writer, cargo resolved other features and compiled the core a second time).
(cd "$REPO" && cargo build -q --workspace --example interop_writer)
"$CARGO_TARGET_DIR/debug/examples/interop_writer" > "$manifest"
"$VENV/bin/python" "$HERE/pyfluss_readback.py" "$manifest" --written "$written"
"$CARGO_TARGET_DIR/debug/examples/interop_writer" --read-back "$written"
