#!/usr/bin/env bash
# Python benchmarks for scripts/bench-all.sh: JSON lines on stdout, text on stderr.
#
# Builds the fluss_writer wheel with the profiling profile (release code with line tables) and the
# cargo feature `bench` (testing.bench_dispatch, which release wheels lack) (shared CARGO_TARGET_DIR) and installs it, with
# pyfluss==1.0.0 and pyarrow, into its own venv ($REPO/.venv-bench-py), then runs
#   - bench_cluster.py: fluss_writer vs pyfluss on FLUSS_BOOTSTRAP_SERVERS (skipped without it),
#     plus the dispatch figures with an idle and a busy main thread;
#   - bench_callbacks.py: dispatch and end to end on the embedded engine (text only).
# Environment: FLUSS_BOOTSTRAP_SERVERS, BENCH_PY_RECORDS (100000), BENCH_ROUNDS (5), BENCH_PY_VENV,
# BENCH_PY_BUILD_ONLY=1 (build and install, run nothing).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
VENV="${BENCH_PY_VENV:-$REPO/.venv-bench-py}"
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "[bench-py] creating $VENV" >&2
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import importlib.metadata as m; assert m.version('pyfluss') == '1.0.0'; import maturin, pyarrow" 2>/dev/null; then
  "$VENV/bin/pip" install -q --disable-pip-version-check "pyfluss==1.0.0" "maturin>=1.9.4,<2.0" pyarrow >&2
fi
# A release wheel installed (not editable) so that other builds of the source tree do not replace it.
rm -rf "$CARGO_TARGET_DIR/wheels-bench"
(cd "$REPO" && "$VENV/bin/maturin" build --profile profiling --features bench --strip false -i "$VENV/bin/python" -o "$CARGO_TARGET_DIR/wheels-bench" >&2)
"$VENV/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$CARGO_TARGET_DIR"/wheels-bench/fluss_writer-*.whl >&2

if [[ -n "${BENCH_PY_BUILD_ONLY:-}" ]]; then
  echo "[bench-py] BENCH_PY_BUILD_ONLY: wheel and pyfluss installed in $VENV, nothing run" >&2
  exit 0
fi

cd "$HERE"  # not the repo root: import the installed wheel, not ./python
echo "[bench-py] load: $(uptime)" >&2
if [[ -n "${FLUSS_BOOTSTRAP_SERVERS:-}" ]]; then
  "$VENV/bin/python" bench_cluster.py --bootstrap "$FLUSS_BOOTSTRAP_SERVERS" \
    --records "${BENCH_PY_RECORDS:-100000}" --rounds "${BENCH_ROUNDS:-5}"
else
  echo "[bench-py] FLUSS_BOOTSTRAP_SERVERS not set: cluster cases skipped" >&2
fi
if [[ -z "${BENCH_PY_SKIP_EMBEDDED:-}" ]]; then
  "$VENV/bin/python" bench_callbacks.py --runs "${BENCH_ROUNDS:-5}" >&2
fi
# Acknowledgement-to-callback latency (idle and busy main thread), embedded and cluster.
"$VENV/bin/python" bench_latency.py --bootstrap embedded
if [[ -n "${FLUSS_BOOTSTRAP_SERVERS:-}" ]]; then
  "$VENV/bin/python" bench_latency.py --bootstrap "$FLUSS_BOOTSTRAP_SERVERS"
fi
echo "[bench-py] load: $(uptime)" >&2
