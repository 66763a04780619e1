"""Quickstart: write rows with a callback each, and see every one of them acknowledged.

    python examples/python/quickstart.py                    # the embedded engine, in memory
    python examples/python/quickstart.py 127.0.0.1:9123     # a Fluss cluster (scripts/fluss-cluster.sh start)

Creates the table ``quickstart.events`` if it does not exist (3 buckets by ``id``), appends 10,000 rows
with a callback each, flushes, and prints what the callbacks saw. Exits with 1 if any row failed.
"""

from __future__ import annotations

import sys
import threading
import time

import fluss_writer as fw

ROWS = 10_000


class Tally:
    """What the callbacks saw. They run on the connection's callback worker, one at a time; the
    lock is for the main thread, which reads the tally while callbacks may still run."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ok = 0
        self.errors: dict[str, int] = {}
        self.last_offset: dict[int, int] = {}

    def on_done(self, c: fw.WriteCompletion) -> None:
        with self.lock:
            if c.ok:
                self.ok += 1
                self.last_offset[c.bucket] = c.offset
            else:
                key = f"{c.error_code} {c.message}"
                self.errors[key] = self.errors.get(key, 0) + 1


def main(address: str) -> int:
    tally = Tally()
    started = time.monotonic()
    with fw.connect(address, {"client.id": "quickstart"}) as conn:
        admin = conn.admin()
        admin.create_database("quickstart", ignore_if_exists=True)
        schema = fw.Schema([("id", "BIGINT", False), ("msg", "STRING"), ("at_ms", "BIGINT")])
        descriptor = fw.TableDescriptor(schema, bucket_count=3, bucket_keys=["id"])
        admin.create_table("quickstart.events", descriptor, ignore_if_exists=True)
        with conn.get_table("quickstart.events").new_append().create_writer() as writer:
            for i in range(ROWS):
                writer.append({"id": i, "msg": f"event {i}", "at_ms": int(time.time() * 1000)}, callback=tally.on_done)
            writer.flush()  # every callback above has returned
            stats = writer.stats()
    elapsed = time.monotonic() - started
    with tally.lock:
        print(f"{address}: {tally.ok} of {ROWS} rows acknowledged in {elapsed:.2f} s, "
              f"{stats['batches_sent']} batches; last offset per bucket: {dict(sorted(tally.last_offset.items()))}")
        for error, n in tally.errors.items():
            print(f"  {n} failed: {error}")
        return 0 if tally.ok == ROWS else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "embedded"))
