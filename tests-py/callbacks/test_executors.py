"""C9: executor choices: sharded workers, a concurrent.futures executor, an asyncio loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

from fluss_writer import testing
from helpers import Recorder, eventually, make_table


def test_sharded_workers_keep_per_bucket_order(conn) -> None:
    name = make_table(conn, buckets=4, bucket_keys=["id"])
    w = conn.get_table(name).new_append().create_writer(executor=2)
    rec = Recorder()
    for i in range(2000):
        w.append({"id": i}, callback=rec)
    w.flush()
    assert len(rec.items) == 2000
    for b in range(4):
        offs = [c.offset for c in rec.items if c.bucket == b]
        assert offs == sorted(offs)
    assert len(set(rec.threads)) <= 2 and threading.get_ident() not in rec.threads
    w.close()


def test_thread_pool_executor_gets_one_job_per_batch(conn, log_table) -> None:
    with concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="userpool") as pool:
        w = conn.get_table(log_table).new_append().create_writer(executor=pool)
        names = []
        before = testing.dispatch_stats(conn)["executor_hops"]
        for i in range(500):
            w.append({"id": i}, callback=lambda c: names.append(threading.current_thread().name))
        w.flush()
        assert len(names) == 500 and all(n.startswith("userpool") for n in names)
        hops = testing.dispatch_stats(conn)["executor_hops"] - before
        assert 1 <= hops < 500
        w.close()


def test_asyncio_loop_executor_runs_callbacks_on_the_loop(conn, log_table) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop_thread = threading.get_ident()
        w = conn.get_table(log_table).new_append().create_writer(executor=loop)
        seen = []
        for i in range(300):
            w.append({"id": i}, callback=lambda c: seen.append(threading.get_ident()))
        while len(seen) < 300:
            await asyncio.sleep(0.005)
        assert set(seen) == {loop_thread}
        await w.flush_async()
        await w.close_async()

    asyncio.run(main())


def test_executor_shutdown_still_completes_flush(conn, log_table) -> None:
    pool = concurrent.futures.ThreadPoolExecutor(1)
    pool.shutdown()
    errors = []
    w = conn.get_table(log_table).new_append().create_writer(executor=pool, on_callback_error=lambda e, op: errors.append(op))
    w.append({"id": 1}, callback=lambda c: None)
    w.flush(timeout=10)
    eventually(lambda: len(errors) == 1)
    w.close()
