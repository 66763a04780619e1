"""Python callback benchmark for fluss_writer (issue 3).

1. Dispatch: no-op Python callbacks per second through a worker with the binding's hooks
   (``testing.bench_dispatch``: jobs of 1000 callbacks, the path of real completions without
   I/O), next to a plain Python call of the same callable.
2. End to end into the embedded engine (in memory): ``append(row, callback=noop)`` vs
   ``append_detached(row)`` vs ``append(row)`` keeping every WriteResult and waiting on each.

Every figure is the median of ``--runs`` runs. Build with ``maturin develop --release`` first.
Usage: python bench/python/bench_callbacks.py [--runs 5] [--dispatch 1000000] [--records 200000]
"""

from __future__ import annotations

import argparse
import itertools
import platform
import statistics
import subprocess
import sys
import time

import fluss_writer as fw
from fluss_writer import testing

_tables = itertools.count()


def noop(c: object) -> None:
    pass


def plain_call_ns(n: int) -> float:
    c = object()
    f = noop
    t = time.perf_counter()
    for _ in range(n):
        f(c)
    return (time.perf_counter() - t) / n * 1e9


def dispatch(n: int) -> tuple:
    secs, acq, groups = testing.bench_dispatch(noop, n, 1000)
    return n / secs, secs / n * 1e9, acq


def end_to_end(conn: fw.Connection, mode: str, n: int) -> float:
    name = f"fluss.bench{next(_tables)}"
    conn.admin().create_table(name, fw.TableDescriptor(fw.Schema([("id", "BIGINT", False), ("msg", "STRING")]),
                                                       bucket_count=4))
    w = conn.get_table(name).new_append().create_writer()
    rows = [(i, f"payload-{i:08d}") for i in range(n)]
    t = time.perf_counter()
    if mode == "callback":
        for r in rows:
            w.append(r, callback=noop)
        w.flush()
    elif mode == "detached":
        for r in rows:
            w.append_detached(r)
        w.flush()
    else:
        results = [w.append(r) for r in rows]
        for res in results:
            res.wait()
    secs = time.perf_counter() - t
    w.close()
    return n / secs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dispatch", type=int, default=1_000_000)
    ap.add_argument("--records", type=int, default=200_000)
    a = ap.parse_args()

    plain = statistics.median(plain_call_ns(a.dispatch) for _ in range(a.runs))
    d = [dispatch(a.dispatch) for _ in range(a.runs)]
    rate = statistics.median(x[0] for x in d)
    ns = statistics.median(x[1] for x in d)
    acq = statistics.median(x[2] for x in d)
    print(f"dispatch: {rate:,.0f} callbacks/s, {ns:.0f} ns/callback, GIL acquisitions per run {acq:.0f} "
          f"(plain Python call: {plain:.0f} ns)")

    conn = fw.connect("embedded", {"client.writer.batch-timeout": "5ms"})
    modes = ["detached", "callback", "wait"]
    res = {m: [] for m in modes}
    for _ in range(a.runs):  # interleaved so that drift hits every mode alike
        for m in modes:
            res[m].append(end_to_end(conn, m, a.records))
    conn.close()
    med = {m: statistics.median(v) for m, v in res.items()}
    for m in modes:
        print(f"end-to-end {m:9s}: {med[m]:,.0f} records/s ({1e9 / med[m]:.0f} ns/record)")
    print(f"callback vs detached: {med['callback'] / med['detached'] * 100:.1f}% of the detached rate")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {platform.machine()}, {platform.processor() or '?'}; python {sys.version.split()[0]}; "
          f"fluss_writer {fw.__version__}; commit {commit}")


if __name__ == "__main__":
    main()
