"""Acknowledgement-to-callback latency of Python callbacks when not backlogged.

A producer thread appends at a fixed rate (1 ms batch timeout) with a no-op callback; the
connection's worker measures the time from each batch's acknowledgement to the start of its job
(``fluss_writer.testing.dispatch_stats``). Two runs per backend: the main thread idle (sleeping)
and the main thread busy in a pure-Python loop, which competes for the GIL.

Usage: python bench_latency.py [--bootstrap embedded|host:port] [--rate 20000] [--seconds 3]
Prints one JSON line per run.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import uuid

import fluss_writer as fw
from fluss_writer import testing


def run(bootstrap: str, rate: float, seconds: float, busy: bool) -> dict:
    conn = fw.connect(bootstrap, {"client.writer.batch-timeout": "1ms"})
    db = "bench_py_latency"
    conn.admin().create_database(db, ignore_if_exists=True)
    name = f"{db}.lat_{uuid.uuid4().hex[:10]}"
    schema = fw.Schema([("id", "BIGINT", False), ("msg", "STRING")])
    conn.admin().create_table(name, fw.TableDescriptor(schema, bucket_count=4, bucket_keys=["id"]))
    writer = conn.get_table(name).new_append().create_writer()
    n = int(rate * seconds)
    step = 1.0 / rate

    def noop(_c: object) -> None:
        pass

    def produce() -> None:
        nxt = time.perf_counter()
        for i in range(n):
            writer.append((i, "latency-probe-payload"), callback=noop)
            nxt += step
            delay = nxt - time.perf_counter()
            if delay > 0:
                time.sleep(delay)

    t = threading.Thread(target=produce)
    t.start()
    spins = 0
    while t.is_alive():
        if busy:
            for _ in range(10_000):
                spins += 1
        else:
            time.sleep(0.01)
    t.join()
    writer.flush()
    s = testing.dispatch_stats(conn)
    writer.close()
    conn.admin().drop_table(name, ignore_if_not_exists=True)
    conn.close()
    return {
        "bench": "py_latency",
        "backend": "embedded" if bootstrap.startswith("embedded") else "cluster",
        "main_thread": "busy" if busy else "idle",
        "rate": rate,
        "batches": s["ack_to_callback_count"],
        "p50_us": s["ack_to_callback_p50_nanos"] / 1e3,
        "p99_us": s["ack_to_callback_p99_nanos"] / 1e3,
        "max_us": s["ack_to_callback_max_nanos"] / 1e3,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", default="embedded")
    ap.add_argument("--rate", type=float, default=20000)
    ap.add_argument("--seconds", type=float, default=3)
    a = ap.parse_args()
    for busy in (False, True):
        print(json.dumps(run(a.bootstrap, a.rate, a.seconds, busy)), flush=True)


if __name__ == "__main__":
    main()
