#!/usr/bin/env bash
# The Python test command: venv, build (maturin develop), ruff, stubtest, pytest.
# Exits non-zero on any failure. Usage: tests-py/run.sh [pytest args...]
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
VENV="$REPO/.venv"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"
"$PY" -m pip install -q --disable-pip-version-check \
    'maturin>=1.9.4,<2' pytest pytest-asyncio pytest-timeout 'pyarrow>=14' polars pandas mypy ruff hypothesis
echo "== golden-check (the checker of the golden traces, tests-py/golden)"
cargo build -q -p fluss-writer-golden --bin golden-check
export GOLDEN_CHECK="$CARGO_TARGET_DIR/debug/golden-check"
echo "== maturin develop"
"$VENV/bin/maturin" develop -q ${MATURIN_ARGS:-}
echo "== ruff"
"$VENV/bin/ruff" check python tests-py bench/python
echo "== stubtest"
"$PY" -m mypy.stubtest fluss_writer._native --allowlist "$REPO/tests-py/stubtest-allowlist.txt"
echo "== pytest"
"$PY" -m pytest -q -p no:cacheprovider --timeout=60 tests-py "$@"
