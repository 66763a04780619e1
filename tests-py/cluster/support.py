"""Helpers of the Python tests against a real Fluss cluster (importable as ``cluster.support``)."""

from __future__ import annotations

import os
import threading
import time
import warnings
from typing import Callable, Dict, List, TypeVar

import fluss_writer as fw

T = TypeVar("T")

#: How long one table gets to have a leader for every bucket before the tests give up on it.
CREATE_WAIT_S = 8.0
#: How long a test waits for a coordinator that is restarting (``scripts/fluss-cluster.sh
#: heal-watch`` restarts the Fluss 0.9.1 coordinator when it lost a table; it refuses connections
#: for some seconds, then answers "CoordinatorEventProcessor is not initialized yet" for a while).
COORDINATOR_WAIT_S = 60.0


def note_retry(what: str) -> None:
    """Say that a test had to try again: a warning, and a line of ``$FLUSS_TEST_LOGS/retries.log``,
    which the summary of ``make test`` lists (scripts/test-summary.py)."""
    warnings.warn(what, stacklevel=3)
    logs = os.environ.get("FLUSS_TEST_LOGS")
    if logs:
        test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
        with open(os.path.join(logs, "retries.log"), "a", encoding="utf-8") as f:
            f.write(f"python {test}: {what}\n")


def coordinator_restarting(e: fw.FlussWriterError) -> bool:
    """Whether ``e`` is how a restarting coordinator fails a call: unreachable (a retriable error
    that is not about a table's buckets) or UNKNOWN_SERVER_ERROR "... is not initialized yet"."""
    if int(e.code) == -1 and "is not initialized yet" in str(e):
        return True
    return e.retriable and e.code != fw.ErrorCode.LEADER_NOT_AVAILABLE_EXCEPTION


def while_coordinator_unreachable(what: str, f: Callable[[], T]) -> T:
    """Call ``f`` until it succeeds, for up to ``COORDINATOR_WAIT_S`` while it fails the way a
    restarting coordinator makes it fail (a retriable error, or UNKNOWN_SERVER_ERROR saying the
    coordinator "is not initialized yet"), noting each retry. Any other error is raised at once."""
    deadline = time.monotonic() + COORDINATOR_WAIT_S
    while True:
        try:
            return f()
        except fw.FlussWriterError as e:
            if not coordinator_restarting(e) or time.monotonic() > deadline:
                raise
            note_retry(f"{what}: {e}; waiting for the coordinator")
            time.sleep(1.0)


def connect(bootstrap: str, config: Dict[str, str]) -> fw.Connection:
    """``fw.connect`` to a cluster, waiting for a restarting coordinator."""
    return while_coordinator_unreachable(f"connect to {bootstrap}", lambda: fw.connect(bootstrap, config))


def create_database(conn: fw.Connection, db: str) -> None:
    """Create a test's database (it may exist: a retry after a lost answer), waiting for a
    restarting coordinator."""
    admin = conn.admin()
    while_coordinator_unreachable(f"create database {db}", lambda: admin.create_database(db, ignore_if_exists=True))


def create_table(conn: fw.Connection, new_path: Callable[[], str], descriptor: fw.TableDescriptor,
                 attempts: int = 3) -> str:
    """Create a table under a fresh name from ``new_path()`` and return its path.

    Works around a Fluss 0.9.1 coordinator problem seen on the shared test cluster: now and then
    the coordinator never processes a newly registered table (no "New table" event, its buckets
    stay without a leader until the client gives up, 60 s later). ``Admin.create_table`` waits
    for the leaders; if that takes longer than ``CREATE_WAIT_S``, the table is abandoned (the
    blocked call ends when the connection closes) and another one is created; likewise when the
    call itself gives up with LEADER_NOT_AVAILABLE (the same coordinator problem, answered within
    the wait). Every attempt is reported in the error if all fail. While the coordinator is
    restarting (see ``while_coordinator_unreachable``) it waits for it, up to
    ``COORDINATOR_WAIT_S``, and then tries a new name without counting that as an attempt.
    """
    failures: List[str] = []
    deadline = time.monotonic() + COORDINATOR_WAIT_S
    tried = 0
    while tried < attempts:
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
            e = err[0]
            if isinstance(e, fw.FlussWriterError) and coordinator_restarting(e) and time.monotonic() < deadline:
                note_retry(f"create table {path}: {e}; waiting for the coordinator")
                time.sleep(1.0)
                continue
            if not (isinstance(e, fw.ServerError) and e.code == fw.ErrorCode.LEADER_NOT_AVAILABLE_EXCEPTION):
                raise e
            failures.append(f"{path}: {err[0]}")
        else:
            failures.append(f"{path}: buckets without a leader after {CREATE_WAIT_S:.0f} s")
        tried += 1
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
