"""asyncio: write from coroutines and await each write's acknowledgement, without blocking the loop.

    python examples/python/asyncio_writer.py                   # the embedded engine
    python examples/python/asyncio_writer.py 127.0.0.1:9123    # a cluster

Ten producer coroutines each write 1,000 rows to a primary-key table and await the results in
windows of 100 (bounded memory, back-pressure through the awaits); callbacks are not needed: a
``WriteResult`` is awaitable. The writer is an ``async with`` block (``close_async`` at its end).
Exits with 1 if any row failed.
"""

from __future__ import annotations

import asyncio
import sys
import time

import fluss_writer as fw

PRODUCERS = 10
ROWS_EACH = 1_000
WINDOW = 100


async def produce(writer: fw.UpsertWriter, producer: int) -> int:
    """Write this producer's rows; returns how many were acknowledged."""
    acked = 0
    pending: list[fw.WriteResult] = []
    for i in range(ROWS_EACH):
        pending.append(writer.upsert({"sensor": producer * ROWS_EACH + i, "reading": i * 0.1, "producer": producer}))
        if len(pending) == WINDOW:
            acked += sum(c.ok for c in await asyncio.gather(*pending))
            pending.clear()
    acked += sum(c.ok for c in await asyncio.gather(*pending))
    return acked


async def main(address: str) -> int:
    started = time.monotonic()
    with fw.connect(address) as conn:
        admin = conn.admin()
        admin.create_database("examples", ignore_if_exists=True)
        schema = fw.Schema([("sensor", "BIGINT", False), ("reading", "DOUBLE"), ("producer", "INT")], primary_keys=["sensor"])
        admin.create_table("examples.sensors", fw.TableDescriptor(schema, bucket_count=4), ignore_if_exists=True)
        async with conn.get_table("examples.sensors").new_upsert().create_writer() as writer:
            acked = sum(await asyncio.gather(*(produce(writer, p) for p in range(PRODUCERS))))
        latest = conn.get_table("examples.sensors").lookup([PRODUCERS * ROWS_EACH - 1])
    total = PRODUCERS * ROWS_EACH
    print(f"{acked} of {total} upserts acknowledged in {time.monotonic() - started:.2f} s; last sensor: {latest}")
    return 0 if acked == total else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "embedded")))
