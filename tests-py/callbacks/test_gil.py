"""C10: the GIL is taken once per group of jobs, blocking calls release it, Rust logs reach
``logging``."""

from __future__ import annotations

import logging
import threading
import time

import fluss_writer as fw
from fluss_writer import testing
from helpers import Recorder, make_table


def test_gil_acquisitions_at_most_batches_and_fewer_than_callbacks(conn) -> None:
    name = make_table(conn, buckets=4, bucket_keys=["id"])
    w = conn.get_table(name).new_append().create_writer()
    before = testing.dispatch_stats(conn)
    n = 5000
    rec = Recorder()
    for i in range(n):
        w.append({"id": i, "msg": "x"}, callback=rec)
    w.flush()
    s = testing.dispatch_stats(conn)
    acquisitions = s["gil_acquisitions"] - before["gil_acquisitions"]
    jobs = s["jobs_run"] - before["jobs_run"]
    callbacks = s["callbacks_run"] - before["callbacks_run"]
    assert callbacks == n == len(rec.items)
    assert 1 <= acquisitions <= jobs < callbacks
    # Every job was timed from its batch's acknowledgement to its start on the worker.
    assert s["ack_to_callback_count"] >= jobs >= 1
    assert 0 < s["ack_to_callback_p50_nanos"] <= s["ack_to_callback_p99_nanos"] <= s["ack_to_callback_max_nanos"]
    w.close()


def test_another_thread_keeps_running_while_flush_waits(conn, engine, log_table) -> None:
    engine.inject_delay(log_table, 0, 0.5, times=1)
    w = conn.get_table(log_table).new_append().create_writer()
    ticks = [0]
    stop = threading.Event()
    spun = threading.Event()  # set by the spinner at its 10 001st tick

    def spin() -> None:
        while not stop.is_set():
            ticks[0] += 1
            if ticks[0] == 10_001:
                spun.set()

    t0 = time.monotonic()
    # The flush below also waits for this callback, which returns once the spinner ran (or after
    # 10 s): a spinner that a busy machine stalls still gets its ticks in while flush waits.
    w.append({"id": 1}, callback=lambda c: spun.wait(10))
    t = threading.Thread(target=spin)
    t.start()
    w.flush()
    elapsed = time.monotonic() - t0
    stop.set()
    t.join()
    assert elapsed >= 0.3
    assert ticks[0] > 10_000, "a pure-Python thread must run while flush waits"
    w.close()


def test_callbacks_run_while_the_main_thread_is_busy_in_python(conn, log_table) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    rec = Recorder()
    for i in range(200):
        w.append({"id": i}, callback=rec)
    deadline = time.monotonic() + 10
    x = 0
    while len(rec.items) < 200:  # pure Python, never calls into the SDK
        x += 1
        assert time.monotonic() < deadline
    assert len(rec.items) == 200
    w.close()


def test_blocking_append_releases_the_gil(engine) -> None:
    conn = fw.connect("embedded", {"client.writer.buffer.wait-timeout": "10s", "client.writer.batch-timeout": "1ms"})
    try:
        name = make_table(conn)
        w = conn.get_table(name).new_append().create_writer(max_pending_callbacks=1)
        never = 1 << 62
        ticks = [0]
        release_at = [never]  # the tick at which the spinner lets the slot go
        stop = threading.Event()
        spun = threading.Event()

        def spin() -> None:
            while not stop.is_set():
                ticks[0] += 1
                if ticks[0] >= release_at[0]:
                    spun.set()
                    release_at[0] = never

        # The first operation's callback holds the only slot until the spinner has run 10 000
        # ticks past the second append's start (or for 10 s), however slowly either thread runs.
        w.append({"id": 1}, callback=lambda c: spun.wait(10))
        t = threading.Thread(target=spin)
        t.start()
        release_at[0] = ticks[0] + 10_001
        w.append({"id": 2}, callback=lambda c: None)  # waits for the slot
        stop.set()
        t.join()
        assert spun.is_set(), "the slot came free only after the spinner ran"
        assert ticks[0] > 10_000
        w.close()
    finally:
        conn.close()


def test_rust_logs_reach_python_logging(conn, engine, log_table, caplog) -> None:
    engine.inject_error(log_table, 0, 15, "injected for the log test", times=1)
    w = conn.get_table(log_table).new_append().create_writer()
    with caplog.at_level(logging.WARNING):
        w.append({"id": 1}).wait(5)
        deadline = time.monotonic() + 5
        names: set = set()
        while not any(n.startswith("fluss_writer.write") for n in names):
            assert time.monotonic() < deadline, names
            testing.flush_logs()
            names = {r.name for r in caplog.records if "injected for the log test" in r.getMessage()}
            time.sleep(0.01)
    w.close()
