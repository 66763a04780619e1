"""Helpers of the Python tests against a real Fluss cluster (importable as ``cluster.support``)."""

from __future__ import annotations

import os
import threading
import time
import warnings
from typing import Callable, List

import fluss_writer as fw

#: How long one table gets to have a leader for every bucket before the tests give up on it.
CREATE_WAIT_S = 8.0


def note_retry(what: str) -> None:
    """Say that a test had to try again: a warning, and a line of ``$FLUSS_TEST_LOGS/retries.log``,
    which the summary of ``make test`` lists (scripts/test-summary.py)."""
    warnings.warn(what, stacklevel=3)
    logs = os.environ.get("FLUSS_TEST_LOGS")
    if logs:
        test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
        with open(os.path.join(logs, "retries.log"), "a", encoding="utf-8") as f:
            f.write(f"python {test}: {what}\n")


def create_table(conn: fw.Connection, new_path: Callable[[], str], descriptor: fw.TableDescriptor,
                 attempts: int = 3) -> str:
    """Create a table under a fresh name from ``new_path()`` and return its path.

    Works around a Fluss 0.9.1 coordinator problem seen on the shared test cluster: now and then
    the coordinator never processes a newly registered table (no "New table" event, its buckets
    stay without a leader until the client gives up, 60 s later). ``Admin.create_table`` waits
    for the leaders; if that takes longer than ``CREATE_WAIT_S``, the table is abandoned (the
    blocked call ends when the connection closes) and another one is created; likewise when the
    call itself gives up with LEADER_NOT_AVAILABLE (the same coordinator problem, answered within
    the wait). Every attempt is reported in the error if all fail.
    """
    failures: List[str] = []
    for _ in range(attempts):
        path = new_path()
        done = threading.Event()
        err: List[BaseException] = []

        def run(p: str = path, d: threading.Event = done, e: List[BaseException] = err) -> None:
            try:
                conn.admin().create_table(p, descriptor, False)
            except BaseException as x:  # noqa: BLE001 - handed to the caller
                e.append(x)
            finally:
                d.set()

        threading.Thread(target=run, name=f"create {path}", daemon=True).start()
        if done.wait(CREATE_WAIT_S):
            if not err:
                return path
            if not (isinstance(err[0], fw.ServerError) and err[0].code == fw.ErrorCode.LEADER_NOT_AVAILABLE_EXCEPTION):
                raise err[0]
            failures.append(f"{path}: {err[0]}")
        else:
            failures.append(f"{path}: buckets without a leader after {CREATE_WAIT_S:.0f} s")
        note_retry(f"Fluss server: {failures[-1]}; retrying with a new table")
    raise RuntimeError("create table failed: " + "; ".join(failures))


def drop_table_when_reachable(conn: fw.Connection, path: str, limit_s: float = 30.0) -> None:
    """Drop a test's table, retrying while the coordinator cannot be reached (``scripts/
    fluss-cluster.sh heal-watch`` may be restarting it); dropping with ``ignore_if_not_exists`` is
    safe to repeat."""
    deadline = time.monotonic() + limit_s
    while True:
        try:
            conn.admin().drop_table(path, ignore_if_not_exists=True)
            return
        except fw.FlussWriterError as e:
            if not e.retriable or time.monotonic() > deadline:
                raise
            time.sleep(0.5)
