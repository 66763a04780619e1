"""Awaitable results, async flush/close and context managers (C10: one call_soon_threadsafe
per loop per batch)."""

from __future__ import annotations

import asyncio
import threading

import fluss_writer as fw
from fluss_writer import testing
from helpers import make_table


async def test_await_results_with_one_hop_per_batch(conn) -> None:
    name = make_table(conn, buckets=2, bucket_keys=["id"])
    w = conn.get_table(name).new_append().create_writer()
    before = testing.dispatch_stats(conn)
    # Results complete on the connection's callback worker, in order per bucket. A callback
    # that holds the worker until every result below is awaited keeps them pending when
    # awaited, however slowly this thread runs (at least the ones of its bucket).
    gate = threading.Event()
    w.append({"id": -1, "msg": "gate"}, callback=lambda c: gate.wait(30))
    try:
        results = [w.append({"id": i, "msg": "a"}) for i in range(1000)]
        gathered = asyncio.gather(*results)  # schedules the first step (the await) of each task
        asyncio.get_running_loop().call_soon(gate.set)  # runs after all of them
        completions = await gathered
    finally:
        gate.set()
    assert all(isinstance(c, fw.WriteCompletion) and c.ok for c in completions)
    after = testing.dispatch_stats(conn)
    hops = after["resolve_hops"] - before["resolve_hops"]
    jobs = after["jobs_run"] - before["jobs_run"]
    assert 1 <= hops <= jobs < 1000
    await w.close_async()


async def test_await_completed_result_and_errors(conn, engine) -> None:
    name = make_table(conn)
    engine.inject_error(name, 0, 15, "nope", times=1)
    async with conn.get_table(name).new_append().create_writer() as w:
        c = await w.append({"id": 1})
        assert not c.ok and c.error_code == 15
        try:
            c.raise_for_error()
        except fw.ServerError as e:
            assert e.code == 15
        else:
            raise AssertionError("raise_for_error must raise")
        r = w.append({"id": 2})
        r.wait()
        assert (await r).ok
        await w.flush_async()
    assert w.closed


async def test_callbacks_and_awaits_mix(conn, log_table) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    got = []
    r = w.append({"id": 1})
    r.add_callback(got.append)
    c = await r
    await w.flush_async()
    assert c.ok and len(got) == 1 and got[0].offset == c.offset
    await w.close_async()


def test_a_completed_result_is_awaited_without_an_event_loop(conn, log_table) -> None:
    """``await`` on a completed result ends at its first step with the completion: no future, no
    trip through an event loop (the coroutine below is driven by hand, with no loop running)."""
    w = conn.get_table(log_table).new_append().create_writer()
    results = [w.append({"id": i}) for i in range(3)]
    w.flush()

    async def get(r: fw.WriteResult) -> fw.WriteCompletion:
        return await r

    got = []
    for r in results:
        coro = get(r)
        try:
            coro.send(None)
        except StopIteration as stop:
            got.append((stop.value.ok, stop.value.offset))
        else:
            raise AssertionError("awaiting a completed result must not suspend")
    assert got == [(True, r.wait().offset) for r in results]
    assert len({offset for _, offset in got}) == 3
    w.close()
