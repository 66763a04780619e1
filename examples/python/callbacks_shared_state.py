"""Callbacks with shared state: several threads write, the callbacks count per thread and per
bucket, and the main thread reads the totals while callbacks still run.

    python examples/python/callbacks_shared_state.py                  # the embedded engine
    python examples/python/callbacks_shared_state.py 127.0.0.1:9123   # a Fluss cluster

Callbacks run on the connection's callback worker, never on the writing threads, one at a time;
the writing threads and the main thread run at the same time as them, so the state they share is
guarded by a lock. One bound method serves every row (no closure per row). Exits with 1 unless
every row was acknowledged exactly once.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter

import fluss_writer as fw

THREADS = 4
ROWS_PER_THREAD = 5_000


class Acks:
    """State shared by the callbacks and the threads that read it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.per_thread: Counter = Counter()
        self.per_bucket: Counter = Counter()
        self.seen: set = set()
        self.duplicates = 0
        self.failed: list = []

    def on_done(self, c: fw.WriteCompletion) -> None:  # on the callback worker
        with self.lock:
            if not c.ok:
                self.failed.append((c.error_code, c.message))
                return
            self.per_bucket[c.bucket] += 1
            key = (c.bucket, c.offset)
            if key in self.seen:
                self.duplicates += 1
            self.seen.add(key)

    def total(self) -> int:
        with self.lock:
            return len(self.seen)


def main(address: str) -> int:
    acks = Acks()
    table = f"examples.shared_state_{int(time.time() * 1000)}"
    with fw.connect(address, {"client.id": "shared-state-example"}) as conn:
        conn.admin().create_database("examples", ignore_if_exists=True)
        schema = fw.Schema([("thread", "INT", False), ("seq", "BIGINT", False)])
        conn.admin().create_table(table, fw.TableDescriptor(schema, bucket_count=4, bucket_keys=["seq"]))
        with conn.get_table(table).new_append().create_writer() as writer:  # one writer, many threads

            def produce(t: int) -> None:
                for i in range(ROWS_PER_THREAD):
                    writer.append({"thread": t, "seq": t * ROWS_PER_THREAD + i}, callback=acks.on_done)
                with acks.lock:
                    acks.per_thread[t] = ROWS_PER_THREAD

            threads = [threading.Thread(target=produce, args=(t,)) for t in range(THREADS)]
            for th in threads:
                th.start()
            while any(th.is_alive() for th in threads):
                print(f"acknowledged so far: {acks.total()}", file=sys.stderr)  # read under the lock
                time.sleep(0.05)
            writer.flush()  # every callback of every thread's rows has returned
        conn.admin().drop_table(table)
    expected = THREADS * ROWS_PER_THREAD
    with acks.lock:
        acked = len(acks.seen)
        print(f"{acked} of {expected} rows acknowledged once each, {acks.duplicates} twice, "
              f"{len(acks.failed)} failed; per bucket: {dict(sorted(acks.per_bucket.items()))}")
        return 0 if acked == expected and not acks.duplicates and not acks.failed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "embedded"))
