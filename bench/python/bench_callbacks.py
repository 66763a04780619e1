"""Python callback benchmark for fluss_writer (issue 3).

1. Dispatch: no-op Python callbacks per second through a worker with the binding's hooks
   (``testing.bench_dispatch``: jobs of 1000 callbacks, the path of real completions without
   I/O), next to a plain Python call of the same callable.
2. End to end into the embedded engine (in memory): ``append(row, callback=noop)`` vs
   ``append_detached(row)`` vs ``append(row)`` keeping every WriteResult, waiting on each and
   freeing them (timed too) vs the same in asyncio (``await w.flush_async()``, then ``await``
   each result, on one event loop kept for the run).
   The modes are interleaved chunk by chunk (each chunk ends with a flush), so that a noisy
   machine slows every mode alike; the ratio is the median over adjacent chunk pairs.

Dispatch figures are the median of ``--runs`` runs. Build a release wheel first (bench/python/run.sh).
Usage: python bench/python/bench_callbacks.py [--runs 5] [--dispatch 1000000] [--chunks 40] [--chunk 50000]
"""

from __future__ import annotations

import argparse
import asyncio
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


def _writer(conn: fw.Connection) -> fw.AppendWriter:
    name = f"fluss.bench{next(_tables)}"
    conn.admin().create_table(name, fw.TableDescriptor(fw.Schema([("id", "BIGINT", False), ("msg", "STRING")]),
                                                       bucket_count=4))
    return conn.get_table(name).new_append().create_writer()


def _chunk(w: fw.AppendWriter, mode: str, rows: list) -> float:
    """Seconds to write ``rows`` in ``mode`` and see them complete."""
    cb = noop
    t = time.perf_counter()
    if mode == "callback":
        for r in rows:
            w.append(r, callback=cb)
        w.flush()
    elif mode == "detached":
        for r in rows:
            w.append_detached(r)
        w.flush()
    elif mode == "await":
        _LOOP.run_until_complete(_await_chunk(w, rows))
    else:
        results = [w.append(r) for r in rows]
        for res in results:
            res.wait()
        del results  # freeing them is part of the cost (the other modes keep nothing)
    return time.perf_counter() - t


#: The event loop of the ``await`` mode (one for the whole run).
_LOOP = asyncio.new_event_loop()


async def _await_chunk(w: fw.AppendWriter, rows: list) -> None:
    """The ``await`` mode: keep every WriteResult, ``await w.flush_async()``, ``await`` each."""
    results = [w.append(r) for r in rows]
    await w.flush_async()
    for res in results:
        c = await res
        assert c.ok
    del results


def end_to_end(conn: fw.Connection, modes: list, chunks: int, chunk: int) -> dict:
    """Every mode writes ``chunks`` chunks of ``chunk`` rows, the modes interleaved chunk by
    chunk (rotating which goes first), so that the machine's drift hits every mode alike."""
    writers = {m: _writer(conn) for m in modes}
    rows = [(i, f"payload-{i:08d}") for i in range(chunk)]
    for m in modes:  # warm-up
        _chunk(writers[m], m, rows[: chunk // 10])
    secs: dict = {m: [] for m in modes}
    for i in range(chunks):
        for m in modes[i % len(modes):] + modes[: i % len(modes)]:
            secs[m].append(_chunk(writers[m], m, rows))
    for w in writers.values():
        w.close()
    return secs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dispatch", type=int, default=1_000_000)
    ap.add_argument("--chunks", type=int, default=40, help="chunks per mode, interleaved")
    ap.add_argument("--chunk", type=int, default=50_000, help="rows per chunk")
    a = ap.parse_args()

    plain = statistics.median(plain_call_ns(a.dispatch) for _ in range(a.runs))
    d = [dispatch(a.dispatch) for _ in range(a.runs)]
    rate = statistics.median(x[0] for x in d)
    ns = statistics.median(x[1] for x in d)
    acq = statistics.median(x[2] for x in d)
    print(f"dispatch: {rate:,.0f} callbacks/s, {ns:.0f} ns/callback, GIL acquisitions per run {acq:.0f} "
          f"(plain Python call: {plain:.0f} ns)")

    conn = fw.connect("embedded", {"client.writer.batch-timeout": "5ms"})
    modes = ["detached", "callback", "wait", "await"]
    secs = end_to_end(conn, modes, a.chunks, a.chunk)
    conn.close()
    for m in modes:
        per = [x / a.chunk * 1e9 for x in secs[m]]
        print(f"end-to-end {m:9s}: {a.chunk / statistics.median(secs[m]):,.0f} records/s "
              f"(median {statistics.median(per):.0f} ns/record over {a.chunks} chunks of {a.chunk:,})")
    pairs = [d / c for d, c in zip(secs["detached"], secs["callback"])]
    q1, q2, q3 = statistics.quantiles(pairs, n=4)
    total = sum(secs["detached"]) / sum(secs["callback"])
    print(f"callback vs detached: {q2 * 100:.1f}% of the detached rate (median of {len(pairs)} chunk pairs; "
          f"quartiles {q1 * 100:.1f}%-{q3 * 100:.1f}%; ratio of totals {total * 100:.1f}%)")
    pairs = [c / w for c, w in zip(secs["callback"], secs["wait"])]
    q1, q2, q3 = statistics.quantiles(pairs, n=4)
    print(f"per-record results (wait) vs callbacks: {q2 * 100:.1f}% of the callback rate (median of {len(pairs)} chunk "
          f"pairs; quartiles {q1 * 100:.1f}%-{q3 * 100:.1f}%)")
    pairs = [c / w for c, w in zip(secs["callback"], secs["await"])]
    q1, q2, q3 = statistics.quantiles(pairs, n=4)
    print(f"per-record results awaited in asyncio vs callbacks: {q2 * 100:.1f}% of the callback rate (median of "
          f"{len(pairs)} chunk pairs; quartiles {q1 * 100:.1f}%-{q3 * 100:.1f}%)")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {platform.machine()}, {platform.processor() or '?'}; python {sys.version.split()[0]}; "
          f"fluss_writer {fw.__version__}; commit {commit}")


if __name__ == "__main__":
    main()
