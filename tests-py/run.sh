#!/usr/bin/env bash
# The Python test command: the suite runs against the wheel a user installs, not an editable build.
#  1. scripts/dist.sh python: the sdist and, built from it, the manylinux2014 abi3 wheel (release
#     profile, zig), checked there (auditwheel show, wheel and module sizes, version);
#  2. ruff on the sources;
#  3. for each interpreter: a fresh venv, the wheel installed from dist/ with the test
#     dependencies (by uv, from its cache: seconds where pip took over a minute), stubtest against
#     the installed module; then pytest on all of them at once (TEST_SERIAL=1: in turn);
#  4. the sdist as pip installs it where no wheel fits: a fresh venv (the newest interpreter),
#     `pip install dist/fluss_writer-V.tar.gz` (maturin from PyPI in pip's isolated build, the
#     host's toolchain), then writes with callbacks through the embedded engine.
#  5. the test hooks, which the wheel does not have (cargo feature `test-hooks`; the wheel's runs
#     check that with tests-py/test_release_surface.py and skip the tests that need them): a
#     debug build with the feature (`maturin develop --features test-hooks`, the core's debug
#     build reused) in its own venv (.venv-hooks, kept between runs), the newest interpreter,
#     pytest of just those tests with FLUSS_WRITER_EXPECT_HOOKS=1 (a missing hook fails, nothing
#     skips). Always run; FLUSS_PY_HOOKS=0 leaves it out outside CI (under CI=true it is an error).
# Interpreters: the newest and the oldest CPython >= 3.9 found on PATH or in pyenv (3.13 and 3.9
# here), or PY_VERSIONS="3.13 3.9". Each runs the whole suite, real-cluster tests included (about
# 75 s of pytest each here; timings in docs/distribution.md): 3.9 has no vectorcall fast path
# (rust/py/src/fastcall.rs), 3.13 does. Under CI=true a missing 3.9 is an error.
#
# FLUSS_PY_WHEEL=path.whl: test that wheel (a CI artifact, a wheel built elsewhere) instead of
# building one. FLUSS_PY_DEVELOP=1: the quick development loop instead (maturin develop, debug
# build with the test hooks, into .venv; the whole suite, the hooks' tests included).
# Exits non-zero on any failure. Usage: tests-py/run.sh [pytest args...]
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
export CARGO_TARGET_DIR="$("$REPO/scripts/cargo-target-dir.sh")"
DEPS=(pytest pytest-asyncio pytest-timeout 'pyarrow>=14' polars pandas mypy hypothesis prometheus_client)
CI_MODE=0
if [ "${CI:-}" = true ] || [ "${CI:-}" = 1 ]; then CI_MODE=1; fi

# The checker of the golden traces (tests-py/golden), built once for either mode, as a dependency of
# the golden package's test (cargo builds a package's binaries for its integration tests): then it
# is the binary `cargo test --workspace` (scripts/test-all.sh) built, with the workspace's feature
# set for tests. `cargo build -p fluss-writer-golden --bin golden-check` resolved other features
# and compiled the core and its dependencies once more.
echo "== golden-check"
cargo test -q --workspace --no-run --test golden
export GOLDEN_CHECK="$CARGO_TARGET_DIR/debug/golden-check"

if [ "${FLUSS_PY_DEVELOP:-}" = 1 ]; then
  VENV="$REPO/.venv"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  PY="$VENV/bin/python"
  "$PY" -m pip install -q --disable-pip-version-check 'maturin>=1.9.4,<2' ruff "${DEPS[@]}"
  echo "== maturin develop --features test-hooks"
  "$VENV/bin/maturin" develop -q --features test-hooks ${MATURIN_ARGS:-}
  echo "== ruff"
  "$VENV/bin/ruff" check python tests-py bench/python examples
  echo "== stubtest"
  "$PY" -m mypy.stubtest fluss_writer._native --allowlist "$REPO/tests-py/stubtest-allowlist.txt"
  echo "== pytest"
  FLUSS_WRITER_EXPECT_HOOKS=1 "$PY" -m pytest -q -p no:cacheprovider --timeout=60 tests-py "$@"
  exit 0
fi

# ----- tools: uv and ruff, in a venv of the user's cache (scripts/tools-venv.sh) -----
# uv makes the test venvs: the same wheel and packages as pip would install, in seconds instead of
# a minute or more per interpreter (it links them from its cache). The sdist is installed with pip
# (step 4), as a user does. uv trusts the system's certificates and pip's find-links here, as pip does.
TOOLS="$(scripts/tools-venv.sh test 'uv>=0.5,<1' ruff)"
export UV_NATIVE_TLS=1
[ -n "${PIP_FIND_LINKS:-}" ] && export UV_FIND_LINKS="${UV_FIND_LINKS:-$PIP_FIND_LINKS}"
uv() { "$TOOLS/bin/uv" "$@"; }

# ----- interpreters -----
find_python() {  # find_python 3.X: prints a working interpreter path, or nothing
  local v="$1" c
  for c in "$(command -v "python$v" 2>/dev/null || true)" "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/"$v".*/bin/"python$v"; do
    if [ -n "$c" ] && [ -x "$c" ] && "$c" -c 'import sys, venv' >/dev/null 2>&1; then
      echo "$c"
      return
    fi
  done
}
if [ -n "${PY_VERSIONS:-}" ]; then
  read -r -a VERSIONS <<<"$PY_VERSIONS"
else
  found=()
  for v in 3.14 3.13 3.12 3.11 3.10 3.9; do
    [ -n "$(find_python "$v")" ] && found+=("$v")
  done
  [ "${#found[@]}" -gt 0 ] || { echo "run.sh: no CPython >= 3.9 found" >&2; exit 1; }
  VERSIONS=("${found[0]}")
  [ "${#found[@]}" -gt 1 ] && VERSIONS+=("${found[-1]}")
fi
if [ "${#VERSIONS[@]}" -lt 2 ] || [ "${VERSIONS[-1]}" != 3.9 ]; then
  msg="run.sh: the oldest supported CPython, 3.9, was not found (testing ${VERSIONS[*]} only)"
  if [ "$CI_MODE" = 1 ]; then echo "$msg; pyenv install 3.9" >&2; exit 1; fi
  echo "!!!!! $msg !!!!!" >&2
fi

# ----- 1. the sdist and the wheel -----
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
if [ -n "${FLUSS_PY_WHEEL:-}" ]; then
  WHEEL="$FLUSS_PY_WHEEL"
  echo "== testing the given wheel $WHEEL (no build)"
  [ -f "$WHEEL" ] || { echo "run.sh: no such wheel: $WHEEL" >&2; exit 1; }
else
  scripts/dist.sh python
  WHEEL="$(ls "$REPO"/dist/fluss_writer-"$VERSION"-cp39-abi3-*manylinux_2_17_x86_64*.whl)"
fi

# ----- 2. lint the sources (once; it does not depend on the interpreter) -----
echo "== ruff"
"$TOOLS/bin/ruff" check python tests-py bench/python examples

# ----- 3. each interpreter: a fresh venv with the wheel -----
for v in "${VERSIONS[@]}"; do
  py="$(find_python "$v")"
  [ -n "$py" ] || { echo "run.sh: no python$v" >&2; exit 1; }
  VENV="$REPO/.venv-py$v"
  echo "== Python $v ($py): fresh venv $VENV, $(basename "$WHEEL")"
  t0=$SECONDS
  rm -rf "$VENV"
  uv venv -q --seed --python "$py" "$VENV"
  uv pip install -q --python "$VENV/bin/python" "$WHEEL" "${DEPS[@]}"
  echo "   venv ready in $((SECONDS - t0)) s; installed module: $(stat -c %s "$("$VENV/bin/python" -c 'import fluss_writer._native as m; print(m.__file__)')") bytes"
  echo "== stubtest (Python $v)"
  "$VENV/bin/python" -m mypy.stubtest fluss_writer._native --allowlist "$REPO/tests-py/stubtest-allowlist.txt"
done
# pytest on every interpreter at once (TEST_SERIAL=1: one after the other): the suite waits on
# the clusters and on timers more than it computes, and each run has tables and directories of
# its own. Each run's output goes to build-logs/pytest-py<v>.log (FLUSS_TEST_LOGS when set) and
# is printed when it ends. The installed package, never the source tree (tests-py/test_version.py
# checks it). With FLUSS_TEST_LOGS (scripts/test-all.sh), a JUnit report per interpreter for the
# run's summary.
PYTEST_LOGS="${FLUSS_TEST_LOGS:-$REPO/build-logs}"
mkdir -p "$PYTEST_LOGS"
run_pytest() {  # run_pytest V ARGS...: the whole suite on .venv-pyV, output to its log
  local v="$1" t0=$SECONDS junit=() rc=0
  shift
  [ -n "${FLUSS_TEST_LOGS:-}" ] && junit=(--junitxml="$FLUSS_TEST_LOGS/pytest-py$v.xml")
  FLUSS_WRITER_EXPECT_INSTALLED="$VERSION" "$REPO/.venv-py$v/bin/python" -m pytest -q -p no:cacheprovider --timeout=60 \
    "${junit[@]}" tests-py "$@" >"$PYTEST_LOGS/pytest-py$v.log" 2>&1 || rc=$?
  echo "== pytest (Python $v) took $((SECONDS - t0)) s (status $rc)" >>"$PYTEST_LOGS/pytest-py$v.log"
  return "$rc"
}
pytest_rc=0
if [ "${TEST_SERIAL:-0}" = 1 ]; then
  for v in "${VERSIONS[@]}"; do
    echo "== pytest (Python $v)"
    run_pytest "$v" "$@" || pytest_rc=1
    cat "$PYTEST_LOGS/pytest-py$v.log"
  done
else
  echo "== pytest on Python ${VERSIONS[*]} at once (logs: $PYTEST_LOGS/pytest-py<version>.log)"
  pids=()
  for v in "${VERSIONS[@]}"; do
    run_pytest "$v" "$@" &
    pids+=("$!")
  done
  for i in "${!VERSIONS[@]}"; do
    wait "${pids[$i]}" || pytest_rc=1
    echo "== pytest (Python ${VERSIONS[$i]}):"
    cat "$PYTEST_LOGS/pytest-py${VERSIONS[$i]}.log"
  done
fi
[ "$pytest_rc" = 0 ] || { echo "run.sh: pytest failed (the output above)" >&2; exit 1; }

# The golden cluster scenarios against a Fluss 1.0-line cluster too, when scripts/test-all.sh
# started one (newest CPython, the installed wheel).
if [ -n "${FLUSS_1_0_BOOTSTRAP_SERVERS:-}" ]; then
  echo "== pytest tests-py/golden against Fluss ${FLUSS_1_0_VERSION:-1.0} at $FLUSS_1_0_BOOTSTRAP_SERVERS (Python ${VERSIONS[0]})"
  junit=()
  [ -n "${FLUSS_TEST_LOGS:-}" ] && junit=(--junitxml="$FLUSS_TEST_LOGS/pytest-fluss10.xml")
  FLUSS_BOOTSTRAP_SERVERS="$FLUSS_1_0_BOOTSTRAP_SERVERS" FLUSS_WRITER_EXPECT_INSTALLED="$VERSION" \
    "$REPO/.venv-py${VERSIONS[0]}/bin/python" -m pytest -q -p no:cacheprovider --timeout=60 "${junit[@]}" tests-py/golden -k test_golden_cluster
fi

# ----- 4. the test hooks: a debug build with --features test-hooks -----
HOOK_TESTS=(tests-py/errors/test_panics.py tests-py/test_release_surface.py)
if [ "${FLUSS_PY_HOOKS:-1}" = 0 ]; then
  if [ "$CI_MODE" = 1 ]; then echo "run.sh: FLUSS_PY_HOOKS=0 under CI=true: the tests of the test hooks must run" >&2; exit 1; fi
  echo "!!!!! run.sh: FLUSS_PY_HOOKS=0: the tests that need the test hooks (${HOOK_TESTS[*]}) did NOT run !!!!!" >&2
else
  py="$(find_python "${VERSIONS[0]}")"
  VENV="$REPO/.venv-hooks"
  echo "== test hooks: debug build with --features test-hooks into $VENV (Python ${VERSIONS[0]}), ${HOOK_TESTS[*]}"
  t0=$SECONDS
  [ -x "$VENV/bin/python" ] || uv venv -q --seed --python "$py" "$VENV"
  uv pip install -q --python "$VENV/bin/python" 'maturin>=1.9.4,<2' pytest pytest-asyncio pytest-timeout
  VIRTUAL_ENV="$VENV" "$VENV/bin/maturin" develop -q --features test-hooks
  echo "   built and installed in $((SECONDS - t0)) s"
  t0=$SECONDS
  FLUSS_WRITER_EXPECT_HOOKS=1 "$VENV/bin/python" -m pytest -q -p no:cacheprovider --timeout=60 "${HOOK_TESTS[@]}"
  echo "== test hooks: pytest took $((SECONDS - t0)) s"
fi

# ----- 5. the sdist installed by pip into a clean venv -----
# pip builds it from source through the sdist's pyproject.toml (maturin's PEP 517 backend, in an
# isolated build environment), as a user without a matching wheel does. In the dev profile
# (MATURIN_PEP517_ARGS): the release build of the sdist's sources is the shipped wheel's, made
# from the unpacked sdist by scripts/dist.sh above; a second release build of the same sources
# cost this step 4-5 minutes of a cold run, where the dev build reuses what the test hooks'
# build above compiled (the same target directory and features).
if [ -z "${FLUSS_PY_WHEEL:-}" ]; then
  SDIST="$REPO/dist/fluss_writer-$VERSION.tar.gz"
  py="$(find_python "${VERSIONS[0]}")"
  VENV="$REPO/.venv-sdist"
  echo "== sdist: pip install $(basename "$SDIST") into a fresh venv (Python ${VERSIONS[0]})"
  t0=$SECONDS
  rm -rf "$VENV"
  "$py" -m venv "$VENV"
  MATURIN_PEP517_ARGS="--profile dev" "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$SDIST"
  echo "   built (dev profile) and installed in $((SECONDS - t0)) s"
  (cd "$VENV" && "$VENV/bin/python" - "$VERSION" <<'EOF'
import sys

import fluss_writer as fw

assert fw.__version__ == sys.argv[1], (fw.__version__, sys.argv[1])
assert "site-packages" in fw._native.__file__, fw._native.__file__
with fw.connect("embedded") as conn:
    conn.admin().create_table("fluss.t", fw.TableDescriptor(fw.Schema([("id", "BIGINT", False), ("msg", "STRING")])))
    done = []
    with conn.get_table("fluss.t").new_append().create_writer() as w:
        for i in range(100):
            w.append({"id": i, "msg": "x"}, callback=lambda c: done.append(c.ok))
        w.flush()
    assert done == [True] * 100, done
print(f"   sdist install: fluss_writer {fw.__version__} from {fw._native.__file__}: 100 writes, 100 callbacks ok")
EOF
  )
  rm -rf "$VENV"
fi

