"""A user executor that is gone (a shut-down ThreadPoolExecutor, a closed asyncio loop) drops
the completion jobs handed to it: each dropped job is reported to ``on_callback_error`` and
counted in ``stats()``: ``jobs_dropped`` and ``callback_errors`` (issue 11, defect 9). Stats
carry the core's WriterStats fields, the ack-to-callback latency included."""

from __future__ import annotations

import asyncio
import concurrent.futures

from helpers import Recorder, make_table

FIELDS = {
    "pending_callbacks",
    "callbacks_run",
    "callback_errors",
    "jobs_dropped",
    "queued_jobs",
    "buffer_bytes_in_use",
    "ack_to_callback_count",
    "ack_to_callback_p50_nanos",
    "ack_to_callback_p99_nanos",
    "ack_to_callback_max_nanos",
    "open_partitions",
    "records_sent",
    "bytes_sent",
    "batches_sent",
    "records_failed",
    "operations_rejected",
    "requests_sent",
    "retries",
    "kv_throttled_sends",
    "kv_throttle_nanos",
    "kv_pressure_permille",
    "slow_callbacks",
    "oldest_pending_batch_age_nanos",
    "request_latency_count",
    "request_latency_p50_nanos",
    "request_latency_p99_nanos",
    "request_latency_max_nanos",
    "batch_records_p50",
    "batch_records_p99",
    "batch_bytes_p50",
    "batch_bytes_p99",
}


def test_stats_have_the_core_fields_and_latency(conn, log_table) -> None:
    rec = Recorder()
    w = conn.get_table(log_table).new_append().create_writer()
    for i in range(50):
        w.append({"id": i, "msg": "x"}, callback=rec)
    w.flush(10)
    s = w.stats()
    assert set(s) == FIELDS
    assert s["callbacks_run"] == 50 and s["callback_errors"] == 0 and s["jobs_dropped"] == 0
    assert s["ack_to_callback_count"] >= 1
    assert 0 < s["ack_to_callback_p50_nanos"] <= s["ack_to_callback_p99_nanos"] <= s["ack_to_callback_max_nanos"] * 2
    u = conn.get_table(make_table(conn, pk=["id"])).new_upsert().create_writer()
    assert set(u.stats()) == FIELDS


def _drops(conn, executor, gone) -> None:
    errors: list = []
    name = make_table(conn, buckets=2)
    w = conn.get_table(name).new_append().create_writer(
        executor=executor, on_callback_error=lambda e, op: errors.append((type(e).__name__, op))
    )
    rec = Recorder()
    gone()
    for i in range(20):
        w.append({"id": i, "msg": "x"}, callback=rec)
    w.flush(10)
    s = w.stats()
    assert rec.items == []  # the executor is gone: no callback ran
    assert s["pending_callbacks"] == 0
    assert s["jobs_dropped"] >= 1
    assert s["callback_errors"] == s["jobs_dropped"] == len(errors), (s, errors)
    w.close(10)


def test_a_shut_down_thread_pool_drops_jobs_and_stats_count_them(conn) -> None:
    pool = concurrent.futures.ThreadPoolExecutor(2)
    _drops(conn, pool, lambda: pool.shutdown(wait=True))


def test_a_closed_event_loop_drops_jobs_and_stats_count_them(conn) -> None:
    loop = asyncio.new_event_loop()
    _drops(conn, loop, loop.close)
