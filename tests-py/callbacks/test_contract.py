"""The callback contract C1-C9 from Python, on the embedded engine with fault injection."""

from __future__ import annotations

import gc
import logging
import threading
import time
import weakref

import fluss_writer as fw
import pytest
from helpers import Recorder, eventually, make_table

NON_RETRIABLE = 15  # INVALID_TABLE_EXCEPTION
RETRIABLE = 12  # NOT_LEADER_OR_FOLLOWER


def comm_of_current_thread() -> str:
    with open(f"/proc/self/task/{threading.get_native_id()}/comm") as f:
        return f.read().strip()


# ----- C1 exactly once -----


def test_c1_exactly_once_on_success_and_server_errors(conn, engine, rec) -> None:
    name = make_table(conn, buckets=2, bucket_keys=["id"])
    engine.inject_error(name, 0, NON_RETRIABLE, "boom", times=1)
    w = conn.get_table(name).new_append().create_writer()
    for i in range(200):
        w.append({"id": i, "msg": "x"}, callback=rec)
    w.flush()
    assert len(rec.items) == 200
    failed = [c for c in rec.items if not c.ok]
    assert failed, "the non-retriable fault must fail its batch"
    for c in failed:
        assert c.bucket == 0 and c.error_code == NON_RETRIABLE and not c.retriable
        assert isinstance(c.error, fw.ServerError) and c.error.code == NON_RETRIABLE
    assert all(c.ok for c in rec.items if c.bucket == 1)
    w.flush()
    assert len(rec.items) == 200
    w.close()


def test_c1_delivery_timeout_and_close_complete_every_callback(conn, engine, rec) -> None:
    name = make_table(conn)
    # Every request is answered 5 s late (nothing waits that out: the close gives up after
    # 0.2 s), so all 10 rows are still pending then, even when a stall of this thread split them
    # into several batches or delayed the close.
    engine.inject_delay(name, 0, 5.0, times=10)
    w = conn.get_table(name).new_append().create_writer()
    for i in range(10):
        w.append({"id": i}, callback=rec)
    with pytest.raises(fw.TimeoutError):
        w.close(timeout=0.2)
    rec.wait_for(10)
    assert all(c.error_code == fw.WriterClosedError.code for c in rec.items)
    time.sleep(0.05)
    assert len(rec.items) == 10, "exactly once: nothing more runs after the close completed them"


# ----- C2 where -----


def test_c2_callbacks_run_on_the_connection_worker(conn, log_table) -> None:
    seen = []
    w = conn.get_table(log_table).new_append().create_writer()
    for i in range(50):
        w.append({"id": i}, callback=lambda c: seen.append((threading.get_ident(), comm_of_current_thread())))
    w.flush()
    idents = {s[0] for s in seen}
    assert threading.get_ident() not in idents
    assert len(idents) == 1
    assert all(s[1].startswith("fluss-writer-ca") for s in seen), seen[:1]
    w.close()


# ----- C3 order -----


def test_c3_per_bucket_order_under_retries(conn, engine, rec) -> None:
    name = make_table(conn, buckets=3, bucket_keys=["id"])
    for b in range(3):
        engine.inject_error(name, b, RETRIABLE, "retry me", times=2)
    w = conn.get_table(name).new_append().create_writer()
    for i in range(600):
        w.append({"id": i, "msg": str(i)}, callback=rec)
    w.flush()
    assert all(c.ok for c in rec.items)
    for b in range(3):
        offsets = [c.offset for c in rec.items if c.bucket == b]
        assert offsets == sorted(offsets) and offsets == list(range(len(offsets)))
    w.close()


def test_c3_late_add_callback_runs_after_queued_ones(conn, log_table) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    order = []
    started = threading.Event()
    gate = threading.Event()
    r = w.append({"id": 0})
    r.wait()

    def slow(c: fw.WriteCompletion) -> None:
        started.set()
        gate.wait(10)  # held until the late callback is registered
        order.append("slow")

    w.append({"id": 1}, callback=slow)
    try:
        assert started.wait(5)
        w.append({"id": 2}, callback=lambda c: order.append("queued"))
        # Its batch completes and its job queues behind the slow callback.
        eventually(lambda: w.stats()["queued_jobs"] >= 1)
        r.add_callback(lambda c: order.append("late"))
    finally:
        gate.set()
    w.flush()
    eventually(lambda: len(order) == 3)
    assert order == ["slow", "queued", "late"]
    w.close()


# ----- C4 what -----


def test_c4_completion_fields_log_table(conn, engine, rec) -> None:
    name = make_table(conn, buckets=2, bucket_keys=["id"])
    w = conn.get_table(name).new_append().create_writer()
    for i in range(20):
        w.append({"id": i, "msg": f"m{i}"}, callback=rec)
    w.flush()
    for c in rec.items:
        assert c.ok and c.error is None and c.error_code == 0 and c.message is None
        assert c.table == name and c.partition is None and c.partition_id is None and c.bucket in (0, 1)
        row = [r for r in engine.scan(name, c.bucket) if r[0] == c.offset][0]
        assert row[2][1] == f"m{row[2][0]}"
    w.close()


def test_c4_primary_key_completion_reports_log_end_offset(conn, engine, rec) -> None:
    name = make_table(conn, [("k", "INT"), ("v", "STRING")], pk=["k"], buckets=1)
    w = conn.get_table(name).new_upsert().create_writer()
    w.upsert({"k": 1, "v": "a"}, callback=rec)
    w.flush()
    c = rec.items[0]
    assert c.ok and c.offset == -1 and c.log_end_offset >= 1
    w.close()


# ----- C5 admission -----


def test_c5_capacity_exhausted_is_retriable_and_synchronous(engine) -> None:
    conn = fw.connect("embedded", {"client.writer.buffer.wait-timeout": "0", "client.writer.batch-timeout": "1ms"})
    try:
        name = make_table(conn)
        w = conn.get_table(name).new_append().create_writer(max_pending_callbacks=3)
        rec = Recorder()
        # The first callback holds the connection's FIFO worker, so no slot comes free until the
        # gate opens, however long the appends take.
        gate = threading.Event()

        def held(c: fw.WriteCompletion) -> None:
            gate.wait(10)
            rec(c)

        try:
            w.append({"id": 0}, callback=held)
            for i in range(1, 3):
                w.append({"id": i}, callback=rec)
            with pytest.raises(fw.CapacityExhaustedError) as e:
                w.append({"id": 9}, callback=rec)
            assert e.value.retriable
        finally:
            gate.set()
        w.flush()
        assert len(rec.items) == 3
        w.close()
    finally:
        conn.close()


def test_c5_wait_budget_then_success(conn, engine) -> None:
    c2 = fw.connect("embedded", {"client.writer.buffer.wait-timeout": "5s", "client.writer.batch-timeout": "1ms"})
    try:
        name = make_table(c2)
        fw.testing.engine(c2).inject_delay(name, 0, 0.2, times=1)
        w = c2.get_table(name).new_append().create_writer(max_pending_callbacks=1)
        rec = Recorder()
        t0 = time.monotonic()
        w.append({"id": 1}, callback=rec)
        w.append({"id": 2}, callback=rec)  # waits (GIL released) for the first slot
        assert time.monotonic() - t0 >= 0.1
        w.flush()
        assert [c.ok for c in rec.items] == [True, True]
        w.close()
    finally:
        c2.close()


def test_c5_submission_inside_a_callback_never_blocks(engine) -> None:
    conn = fw.connect("embedded", {"client.writer.batch-timeout": "1ms"})
    try:
        name = make_table(conn)
        w = conn.get_table(name).new_append().create_writer(max_pending_callbacks=1)
        errors = []

        def cb(c):
            try:
                w.append({"id": 2}, callback=lambda c: None)
            except fw.CapacityExhaustedError as e:
                errors.append(e)

        w.append({"id": 1}, callback=cb)
        w.flush()
        assert len(errors) == 1
        w.close()
    finally:
        conn.close()


def test_c5_record_too_large(engine) -> None:
    conn = fw.connect("embedded", {"client.writer.batch-size": "1kb"})
    try:
        w = conn.get_table(make_table(conn)).new_append().create_writer()
        with pytest.raises(fw.RecordTooLargeError):
            w.append({"id": 1, "msg": "x" * 5000}, callback=lambda c: None)
        w.close()
    finally:
        conn.close()


# ----- C6 flush -----


def test_c6_flush_returns_after_callbacks_returned(conn, log_table) -> None:
    done = []
    w = conn.get_table(log_table).new_append().create_writer()
    for i in range(20):
        w.append({"id": i}, callback=lambda c: (time.sleep(0.002), done.append(1)))
    w.flush()
    assert len(done) == 20
    w.close()


def test_c6_flush_close_wait_inside_a_callback_raise_at_once(conn, log_table) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    first = w.append({"id": 0})
    first.wait()
    caught = []

    def cb(c):
        for f in (w.flush, first.wait, lambda: w.close(1)):
            try:
                f()
            except fw.CalledFromCallbackError as e:
                caught.append(e.code)

    w.append({"id": 1}, callback=cb)
    eventually(lambda: len(caught) == 3)
    assert caught == [fw.CalledFromCallbackError.code] * 3
    with pytest.raises(fw.WriterClosedError):
        w.append({"id": 2})


# ----- C7 close -----


def test_c7_close_stops_accepting_and_drains(conn, log_table, rec) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    for i in range(100):
        w.append({"id": i}, callback=rec)
    w.close()
    assert len(rec.items) == 100 and w.closed
    with pytest.raises(fw.WriterClosedError):
        w.append({"id": 1}, callback=rec)
    assert len(rec.items) == 100


def test_c7_dropping_a_writer_closes_it(conn, log_table, rec) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    for i in range(30):
        w.append({"id": i}, callback=rec)
    del w
    gc.collect()
    assert len(rec.items) == 30


def test_c7_callback_capturing_its_writer_does_not_leak(conn, log_table) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    ref = weakref.ref(w)
    ran = []
    w.append({"id": 1}, callback=lambda c, w=w: ran.append(w.closed))
    del w
    eventually(lambda: ran == [False])
    gc.collect()
    eventually(lambda: ref() is None)


def test_c7_connection_close_closes_writers(log_table) -> None:
    conn = fw.connect("embedded")
    name = make_table(conn)
    rec = Recorder()
    w = conn.get_table(name).new_append().create_writer()
    for i in range(10):
        w.append({"id": i}, callback=rec)
    conn.close()
    assert len(rec.items) == 10
    with pytest.raises((fw.WriterClosedError, fw.ConnectionClosedError)):
        w.append({"id": 1})
    with pytest.raises(fw.ConnectionClosedError):
        conn.get_table(name)


# ----- C8 isolation -----


def test_c8_raising_callback_goes_to_handler_and_stops_nothing(conn, log_table, rec) -> None:
    reported = []
    w = conn.get_table(log_table).new_append().create_writer(
        on_callback_error=lambda exc, op: reported.append((exc, op)))
    for i in range(10):
        w.append({"id": i}, callback=(lambda c: 1 / 0) if i % 2 else rec)
    w.flush()
    assert len(rec.items) == 5
    assert len(reported) == 5
    exc, op = reported[0]
    assert isinstance(exc, ZeroDivisionError)
    assert log_table in op and "offset" in op
    assert w.stats()["callback_errors"] == 5
    w.close()


def test_c8_default_handler_logs_naming_the_operation(conn, log_table, caplog) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    with caplog.at_level(logging.ERROR, logger="fluss_writer"):
        w.append({"id": 1}, callback=lambda c: {}["missing"])
        w.flush()
    recs = [r for r in caplog.records if r.name == "fluss_writer"]
    assert recs and log_table in recs[0].getMessage() and "KeyError" in recs[0].getMessage()
    assert recs[0].exc_info is not None
    w.close()


def test_c8_raising_error_handler_is_contained(conn, log_table, rec) -> None:
    def bad_handler(exc, op):
        raise RuntimeError("handler broke")

    w = conn.get_table(log_table).new_append().create_writer(on_callback_error=bad_handler)
    w.append({"id": 1}, callback=lambda c: 1 / 0)
    w.append({"id": 2}, callback=rec)
    w.flush()
    assert len(rec.items) == 1
    w.close()
