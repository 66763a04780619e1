"""The Python examples run as a user runs them: ``python examples/python/<name>.py [address]``,
in a fresh working directory, on the embedded engine and (when FLUSS_BOOTSTRAP_SERVERS is set;
under CI=true it must be) against the real cluster."""

from __future__ import annotations

import ast
import os
import pathlib
import re
import socket
import subprocess
import sys

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "python"
CI = os.environ.get("CI", "").lower() in ("true", "1")


def run_example(script: str, *args: str, cwd: pathlib.Path, address: str,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Runs an example; against a cluster (``address`` not ``embedded``) through
    scripts/run-on-cluster.py, which runs it once more (noting the retry) when it failed because
    scripts/fluss-cluster.sh heal-watch was restarting the coordinator, as the tests that call the
    cluster themselves wait for it (cluster/support.py)."""
    cmd = [sys.executable, str(EXAMPLES / script), *args]
    if address != "embedded":
        cmd = [sys.executable, str(REPO / "scripts" / "run-on-cluster.py"), "--bootstrap", address, "--lang", "python",
               "--name", os.environ.get("PYTEST_CURRENT_TEST", script).split(" ")[0], "--", *cmd]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=240,
                          env=None if env is None else {**os.environ, **env})


def run(script: str, address: str, *args: str, cwd: pathlib.Path, env: dict[str, str] | None = None) -> str:
    """``python examples/python/<script> <address> <args...>``: its stdout, once it exited 0."""
    p = run_example(script, address, *args, cwd=cwd, address=address, env=env)
    assert p.returncode == 0, f"{script} {address} {args} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
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


@pytest.mark.parametrize("where", ["embedded", "cluster"])
@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_bulk_load(fmt: str, where: str, tmp_path: pathlib.Path) -> None:
    address = "embedded" if where == "embedded" else cluster_address()
    n = 50_000
    data = pa.table({"id": pa.array(range(n), pa.int64()), "name": [f"n{i}" for i in range(n)]})
    path = tmp_path / f"rows.{fmt}"
    if fmt == "parquet":
        pq.write_table(data, path)
    else:
        pa_csv.write_csv(data, path)
    table = f"examples.bulk_{fmt}_{os.getpid()}"
    p = run_example("bulk_load.py", str(path), table, address, cwd=tmp_path, address=address)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"loaded {n} rows from {path} into {table}" in p.stdout, p.stdout
    assert f"{n}/{n} rows, 0 failed" in p.stderr, p.stderr  # the bar's last state


@pytest.mark.parametrize("where", ["embedded", "cluster"])
def test_asyncio_writer(where: str, tmp_path: pathlib.Path) -> None:
    address = "embedded" if where == "embedded" else cluster_address()
    out = run("asyncio_writer.py", address, cwd=tmp_path)
    assert re.search(r"^10000 of 10000 upserts acknowledged in [0-9.]+ s; last sensor: \(9999, 99\.9, 9\)$", out, re.M), out


@pytest.mark.parametrize("where", ["embedded", "cluster"])
def test_daily_partitions(where: str, tmp_path: pathlib.Path) -> None:
    address = "embedded" if where == "embedded" else cluster_address()
    out = run("daily_partitions.py", address, cwd=tmp_path)
    per_partition = re.search(r"^rows per partition: (\{.*\})$", out, re.M)
    assert per_partition, out
    counts = ast.literal_eval(per_partition.group(1))
    assert len(counts) == 7 and sum(counts.values()) == 1000, out
    kept = re.search(r"^partitions kept \(3 days\): (\[.*\])$", out, re.M)
    assert kept and ast.literal_eval(kept.group(1)) == sorted(counts)[-3:], out


@pytest.mark.parametrize("where", ["embedded", "cluster"])
def test_prometheus_metrics(where: str, tmp_path: pathlib.Path) -> None:
    address = "embedded" if where == "embedded" else cluster_address()
    with socket.socket() as s:  # a free port for the example's HTTP server
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = run("prometheus_metrics.py", address, str(port), cwd=tmp_path)
    assert re.search(r'^fluss_writer_records_sent_total\{client_id="prometheus-example",.*\} 20000\.0$', out, re.M), out


@pytest.mark.parametrize("where", ["embedded", "cluster"])
def test_callbacks_shared_state(where: str, tmp_path: pathlib.Path) -> None:
    address = "embedded" if where == "embedded" else cluster_address()
    out = run("callbacks_shared_state.py", address, cwd=tmp_path)
    line = r"^20000 of 20000 rows acknowledged once each, 0 twice, 0 failed; per bucket: \{0: \d+, 1: \d+, 2: \d+, 3: \d+\}$"
    assert re.search(line, out, re.M), out


@pytest.mark.parametrize("where", ["embedded", "cluster"])
def test_pk_upserts(where: str, tmp_path: pathlib.Path) -> None:
    address = "embedded" if where == "embedded" else cluster_address()
    out = run("pk_upserts.py", address, cwd=tmp_path)
    assert "lookup(1) = (1, 'user 1', 1, 'nl'); lookup(2) = (2, 'user 2 (renamed)', 2, 'be'); " in out, out
    assert "lookup(10) = (10, None, 3, None)" in out, out
    assert "1000 users upserted, 0 writes failed, 0 lookups wrong" in out, out


def test_sasl_connect(tmp_path: pathlib.Path) -> None:
    """Against the SASL test cluster (scripts/test-all.sh starts it; its admin user by default)."""
    address = os.environ.get("FLUSS_SASL_BOOTSTRAP_SERVERS", "")
    if not address:
        if CI:
            pytest.fail("CI=true but FLUSS_SASL_BOOTSTRAP_SERVERS is not set: the SASL example must run against the SASL cluster")
        pytest.skip("FLUSS_SASL_BOOTSTRAP_SERVERS is not set")
    env = {"FLUSS_SASL_USERNAME": os.environ.get("FLUSS_SASL_USERNAME") or "admin",
           "FLUSS_SASL_PASSWORD": os.environ.get("FLUSS_SASL_PASSWORD") or "admin-secret"}
    out = run("sasl_connect.py", address, cwd=tmp_path, env=env)
    assert f"as {env['FLUSS_SASL_USERNAME']!r}: 100 of 100 rows acknowledged" in out, out
    assert "a wrong password: AUTHENTICATE_EXCEPTION (46); the message does not show it: True" in out, out


def test_every_python_example_has_a_test() -> None:
    tested = {"quickstart.py", "bulk_load.py", "asyncio_writer.py", "daily_partitions.py", "prometheus_metrics.py",
              "callbacks_shared_state.py", "pk_upserts.py", "sasl_connect.py"}
    assert {p.name for p in EXAMPLES.glob("*.py")} == tested
