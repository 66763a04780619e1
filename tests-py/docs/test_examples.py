"""The Python examples run as a user runs them: ``python examples/python/<name>.py [address]``,
in a fresh working directory, on the embedded engine and (when FLUSS_BOOTSTRAP_SERVERS is set;
under CI=true it must be) against the real cluster."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "python"
CI = os.environ.get("CI", "").lower() in ("true", "1")


def run(script: str, *args: str, cwd: pathlib.Path) -> str:
    p = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, f"{script} {args} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p.stdout


def cluster_address() -> str:
    address = os.environ.get("FLUSS_BOOTSTRAP_SERVERS", "")
    if not address:
        if CI:
            pytest.fail("CI=true but FLUSS_BOOTSTRAP_SERVERS is not set: the examples must run against the cluster")
        pytest.skip("FLUSS_BOOTSTRAP_SERVERS is not set")
    return address


@pytest.mark.parametrize("where", ["embedded", "cluster"])
def test_quickstart(where: str, tmp_path: pathlib.Path) -> None:
    address = "embedded" if where == "embedded" else cluster_address()
    out = run("quickstart.py", address, cwd=tmp_path)
    assert re.search(r": 10000 of 10000 rows acknowledged in [0-9.]+ s", out), out
    assert "failed" not in out, out


def test_every_python_example_has_a_test() -> None:
    tested = {"quickstart.py"}
    assert {p.name for p in EXAMPLES.glob("*.py")} == tested
