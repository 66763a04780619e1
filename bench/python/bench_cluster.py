"""fluss_writer vs pyfluss 1.0.0 on the same real Fluss cluster, side by side in one process.

Modes (each case: 1, 4 and 16 buckets x 100-byte and 1-KiB rows; BIGINT id + STRING payload of
pseudo-random letters, distinct per record; log tables with bucket key ``id`` and
``table.log.arrow.compression.type`` NONE, created once per case and shared by the modes):

- ``fw/callback``: ``append(row, callback=cb)`` per record, then ``flush()`` (returns after every
  callback returned; the callback checks ``c.ok``).
- ``fw/wait``: ``append(row)`` keeping every ``WriteResult``, then ``flush()`` and ``wait()`` on each.
- ``pyfluss/handles``: ``AppendWriter.append(row)`` keeping every ``WriteResultHandle``, then
  ``await flush()`` (success of the flush acknowledges every record; handles not awaited one by
  one). The headline comparison: the cheapest way to learn that every record was written.
- ``pyfluss/handles-wait``: the same, then ``await handle.wait()`` on each handle (per-record
  acknowledgement, what callbacks give). About 50 to 120 us per ``wait()`` (an asyncio future per
  handle), so this mode writes at most ``--await-records`` records per round.
- ``fw/arrow``: ``write_arrow_batch(batch, callback=cb)`` per RecordBatch, then ``flush()``.
- ``pyfluss/arrow``: ``write_arrow_batch(batch)`` per RecordBatch (handles kept), ``await flush()``,
  ``await handle.wait()`` on each.

Both clients with their default configuration. One warm-up round, then ``--rounds`` rounds with
the modes interleaved (forward, then reversed, ...); medians. Rows and Arrow batches are built
before the timed region. Each round also records the CPU time of the whole client process per
record (``time.process_time``: every thread, the clients' own I/O threads included), a figure
the machine's load disturbs less than the wall-clock rate. Also: the Python dispatch micro-benchmark (``testing.bench_dispatch``)
with an idle main thread and with a busy one (a pure-Python loop runs on the main thread while
another thread dispatches). Prints a table on stderr and one JSON object per line on stdout.

Replicated tables: ``--replication-factor N`` creates the tables with ``table.replication.factor``
N, ``--acks all|1|0`` sets both clients' acks (fluss_writer ``client.writer.acks``, pyfluss
``writer.acks``; both default to all; with 0 or 1 idempotence is turned off in both
(``client.writer.enable-idempotence`` / ``writer.enable-idempotence``), which both require).
``--modes`` picks a subset of the modes (e.g. ``fw/callback,pyfluss/handles``: the headline pair,
adjacent in every round). Each case also reports the ratio fw/callback / pyfluss/handles per round
(the runs of one round are close in time, so they share the machine's conditions): its median and
its spread (min..max over rounds), and the same for CPU per record.

Usage: python bench_cluster.py --bootstrap 127.0.0.1:9123 [--records 100000] [--rounds 5]
       [--modes M1,M2] [--replication-factor 3] [--acks all] [--label NAME]
       (1-KiB rows use a quarter of --records)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import threading
import time

import fluss
import fluss_writer as fw
import pyarrow as pa
from fluss_writer import testing

DB = "bench_py_peers"
MODES = ["fw/callback", "fw/wait", "pyfluss/handles", "pyfluss/handles-wait", "fw/arrow", "pyfluss/arrow"]


def log(*a: object) -> None:
    print(*a, file=sys.stderr, flush=True)


def emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


class Pool:
    def __init__(self, length: int) -> None:
        rnd = random.Random(7)
        alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        self.pool = "".join(rnd.choice(alpha) for _ in range(65536 + length))
        self.len = length

    def rows(self, base: int, n: int) -> list:
        p, ln = self.pool, self.len
        return [(base + i, p[((base + i) * 7919) % 65536:][:ln]) for i in range(n)]


def arrow_batches(rows: list, per_batch: int, schema: pa.Schema) -> list:
    out = []
    for s in range(0, len(rows), per_batch):
        chunk = rows[s:s + per_batch]
        out.append(pa.RecordBatch.from_arrays([pa.array([r[0] for r in chunk], pa.int64()),
                                               pa.array([r[1] for r in chunk], pa.string())], schema=schema))
    return out


class Bench:
    def __init__(self, bootstrap: str, acks: str = "all") -> None:
        fw_conf = {"client.writer.acks": acks}
        py_conf = {"bootstrap.servers": bootstrap, "writer.acks": acks}
        if acks not in ("all", "-1"):  # both clients refuse idempotent writes without acks = all
            fw_conf["client.writer.enable-idempotence"] = "false"
            py_conf["writer.enable-idempotence"] = "false"
        self.conn = fw.connect(bootstrap, config=fw_conf)
        self.loop = asyncio.new_event_loop()

        async def connect():
            return await fluss.FlussConnection.create(fluss.Config(py_conf))

        self.pconn = self.loop.run_until_complete(connect())
        self.conn.admin().create_database(DB, ignore_if_exists=True)

    def run(self, coro):
        return self.loop.run_until_complete(coro)

    def fw_callback(self, path: str, rows: list, batches: list) -> float:
        w = self.conn.get_table(path).new_append().create_writer()
        bad = []

        def cb(c) -> None:
            if not c.ok:
                bad.append(c)

        t = time.perf_counter()
        for r in rows:
            w.append(r, callback=cb)
        w.flush()
        secs = time.perf_counter() - t
        w.close()
        assert not bad, bad[0].message
        return secs

    def fw_wait(self, path: str, rows: list, batches: list) -> float:
        w = self.conn.get_table(path).new_append().create_writer()
        t = time.perf_counter()
        results = [w.append(r) for r in rows]
        w.flush()  # as pyfluss's flush: send the last batch now instead of after the batch timeout
        for res in results:
            if not res.wait().ok:
                raise RuntimeError("write failed")
        secs = time.perf_counter() - t
        w.close()
        return secs

    def fw_arrow(self, path: str, rows: list, batches: list) -> float:
        w = self.conn.get_table(path).new_append().create_writer()
        bad = []

        def cb(c) -> None:
            if not c.ok:
                bad.append(c)

        t = time.perf_counter()
        for b in batches:
            w.write_arrow_batch(b, callback=cb)
        w.flush()
        secs = time.perf_counter() - t
        w.close()
        assert not bad, bad[0].message
        return secs

    async def _pyfluss(self, path: str, items: list, arrow: bool, wait: bool = True) -> float:
        table = await self.pconn.get_table(fluss.TablePath(DB, path.split(".", 1)[1]))
        w = table.new_append().create_writer()
        t = time.perf_counter()
        if arrow:
            handles = [w.write_arrow_batch(b) for b in items]
        else:
            handles = [w.append(r) for r in items]
        await w.flush()
        if wait:
            for h in handles:
                await h.wait()
        return time.perf_counter() - t

    def pyfluss_handles(self, path: str, rows: list, batches: list) -> float:
        return self.run(self._pyfluss(path, rows, False, wait=False))

    def pyfluss_handles_wait(self, path: str, rows: list, batches: list) -> float:
        return self.run(self._pyfluss(path, rows, False, wait=True))

    def pyfluss_arrow(self, path: str, rows: list, batches: list) -> float:
        return self.run(self._pyfluss(path, batches, True))


def create_ready_table(conn, path: str, buckets: int, props: dict, attempts: int = 3) -> str:
    """Create the table and check that it takes writes (a loaded 0.9.1 cluster now and then leaves a
    new table's buckets without a leader): 64 probe rows (ids -1..-64, spread over the buckets) must
    be acknowledged within 30 s; otherwise the table is dropped and another one created under a new
    name. Returns the path used. (Added for hangs in flush() that turned out to be a deadlock in the
    SDK, bench/results/2026-12-03-90215e6-python-flush-deadlock.txt, which this does not prevent.)"""
    desc = fw.TableDescriptor(fw.Schema([("id", "BIGINT", False), ("payload", "STRING")]), bucket_count=buckets,
                              bucket_keys=["id"], properties=props)
    for attempt in range(attempts):
        p = path if attempt == 0 else f"{path}_r{attempt}"
        conn.admin().create_table(p, desc)
        w = conn.get_table(p).new_append().create_writer()
        try:
            for i in range(1, 65):
                w.append_detached((-i, "probe"))
            w.flush(timeout=30)
            w.close()
            return p
        except Exception as e:  # noqa: BLE001 - any failure of the probe means "use another table"
            log(f"{p}: probe write failed ({e}); dropping it and creating another table")
            try:
                w.close(timeout=1)
            except Exception:  # noqa: BLE001
                pass
            conn.admin().drop_table(p, ignore_if_not_exists=True)
    raise RuntimeError(f"{path}: no table took writes after {attempts} attempts")


def dispatch_figures(n: int, runs: int) -> dict:
    def noop(c: object) -> None:
        pass

    idle = [testing.bench_dispatch(noop, n, 1000) for _ in range(runs)]
    busy = []
    loops = []
    for _ in range(runs):
        out = []
        th = threading.Thread(target=lambda out=out: out.append(testing.bench_dispatch(noop, n, 1000)))
        x = 0
        th.start()
        t = time.perf_counter()
        while th.is_alive():  # the busy main thread: pure Python, holds the GIL whenever it runs
            x += 1
        busy.append(out[0])
        loops.append(x / (time.perf_counter() - t))
    res = {}
    for name, d in (("idle", idle), ("busy", busy)):
        secs = statistics.median(r[0] for r in d)
        res[name] = {"callbacks_per_s": n / secs, "ns_per_callback": secs / n * 1e9,
                     "gil_acquisitions": statistics.median(r[1] for r in d), "runs_s": [r[0] for r in d]}
    res["busy"]["main_loop_iterations_per_s"] = statistics.median(loops)
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", default=os.environ.get("FLUSS_BOOTSTRAP_SERVERS", "127.0.0.1:9123"))
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--await-records", type=int, default=20_000)
    ap.add_argument("--arrow-batch-rows", type=int, default=4096)
    ap.add_argument("--dispatch", type=int, default=1_000_000)
    ap.add_argument("--buckets", default="1,4,16")
    ap.add_argument("--row-bytes", default="100,1024")
    ap.add_argument("--skip-dispatch", action="store_true")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of " + ",".join(MODES))
    ap.add_argument("--replication-factor", type=int, default=None)
    ap.add_argument("--acks", default="all", choices=["all", "-1", "0", "1"])
    ap.add_argument("--label", default=None)
    a = ap.parse_args()
    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    assert all(m in MODES for m in modes), f"--modes: unknown mode in {modes}"
    label = a.label or ("replicated" if a.replication_factor else "single")

    load = os.getloadavg()
    emit({"bench": "py_meta", "label": label, "python": sys.version.split()[0], "pyarrow": pa.__version__,
          "fluss_writer": getattr(fw, "__version__", "?"), "pyfluss": "1.0.0", "loadavg_start": load,
          "bootstrap": a.bootstrap, "replication_factor": a.replication_factor, "acks": a.acks, "modes": modes})
    if not a.skip_dispatch:
        d = dispatch_figures(a.dispatch, a.rounds)
        for name in ("idle", "busy"):
            emit({"bench": "py_dispatch", "main_thread": name, "callbacks": a.dispatch, **d[name]})
            log(f"python dispatch, {name} main thread: {d[name]['callbacks_per_s'] / 1e6:.2f} M callbacks/s, "
                f"{d[name]['ns_per_callback']:.0f} ns/callback, {d[name]['gil_acquisitions']:.0f} GIL acquisitions")

    b = Bench(a.bootstrap, a.acks)
    schema = pa.schema([("id", pa.int64(), False), ("payload", pa.string())])
    stamp = int(time.time()) % 1_000_000
    for rb in [int(x) for x in a.row_bytes.split(",")]:
        n = a.records if rb <= 100 else max(1, a.records // 4)
        pool = Pool(rb - 8)
        for nb in [int(x) for x in a.buckets.split(",")]:
            path = f"{DB}.t{rb}_{nb}_{stamp}"
            props = {"table.log.arrow.compression.type": "NONE"}
            if a.replication_factor:
                props["table.replication.factor"] = str(a.replication_factor)
            path = create_ready_table(b.conn, path, nb, props)
            times = {m: [] for m in modes}
            cpus = {m: [] for m in modes}
            loads = []
            base = 0
            l0 = os.getloadavg()[0]
            for rnd in range(a.rounds + 1):
                order = modes if rnd % 2 == 0 else modes[::-1]
                for m in order:
                    k = min(n, a.await_records) if m == "pyfluss/handles-wait" else n
                    rows = pool.rows(base, k)
                    base += k
                    batches = arrow_batches(rows, a.arrow_batch_rows, schema) if "arrow" in m else []
                    c0 = time.process_time()  # CPU of every thread of this process (client threads included)
                    secs = getattr(b, m.replace("/", "_").replace("-", "_"))(path, rows, batches)
                    cpu = time.process_time() - c0
                    if rnd > 0:  # round 0: warm-up
                        times[m].append(k / secs)
                        cpus[m].append(cpu / k * 1e6)
                        loads.append(os.getloadavg()[0])
            med = {m: statistics.median(v) for m, v in times.items()}
            l1 = os.getloadavg()[0]
            pairs = [(x, y) for x, y in (("fw/callback", "pyfluss/handles"), ("fw/wait", "pyfluss/handles-wait"),
                                         ("fw/arrow", "pyfluss/arrow")) if x in modes and y in modes]
            spread = {}
            for x, y in pairs:
                rr = [p / q for p, q in zip(times[x], times[y])]
                cr = [p / q for p, q in zip(cpus[x], cpus[y])]
                spread[x] = {"peer": y, "ratio_of_medians": med[x] / med[y], "round_ratios": rr,
                             "median_round_ratio": statistics.median(rr), "min_round_ratio": min(rr),
                             "max_round_ratio": max(rr), "round_cpu_ratios": cr,
                             "cpu_ratio_of_medians": statistics.median(cpus[x]) / statistics.median(cpus[y])}
            log(f"[{label}] {rb:5d} B {nb:2d} buckets: " + ", ".join(f"{m} {med[m] / 1e6:.3f} M/s" for m in modes)
                + "; client CPU us/record: " + ", ".join(f"{m} {statistics.median(cpus[m]):.2f}" for m in modes)
                + "".join(f"; {x}/{v['peer']} {v['ratio_of_medians']:.2f}x (per round median "
                          f"{v['median_round_ratio']:.2f}x, {v['min_round_ratio']:.2f}..{v['max_round_ratio']:.2f}x; "
                          f"cpu {v['cpu_ratio_of_medians']:.2f}x)" for x, v in spread.items())
                + f" (load {min(loads):.1f}..{max(loads):.1f})")
            for m in modes:
                peer = "pyfluss/arrow" if "arrow" in m else "pyfluss/handles"
                k = min(n, a.await_records) if m == "pyfluss/handles-wait" else n
                emit({"bench": "py_cluster", "backend": "cluster", "label": label, "client": m, "row_bytes": rb,
                      "buckets": nb, "replication_factor": a.replication_factor, "acks": a.acks,
                      "records": k, "rounds": a.rounds, "arrow_batch_rows": a.arrow_batch_rows if "arrow" in m else None,
                      "median_records_per_s": med[m], "median_mb_per_s": med[m] * rb / 1e6,
                      "ratio_vs_pyfluss": med[m] / med[peer] if peer in med else None,
                      "rounds_records_per_s": times[m], "rounds_client_cpu_us_per_record": cpus[m],
                      "median_client_cpu_us_per_record": statistics.median(cpus[m]),
                      "spread_vs_peer": spread.get(m), "loadavg_1m": [l0, l1],
                      "loadavg_1m_rounds": [min(loads), max(loads)]})
            b.conn.admin().drop_table(path, ignore_if_not_exists=True)
    b.conn.close()
    async def close():
        await b.pconn.close()

    b.run(close())


if __name__ == "__main__":
    main()
    # pyfluss 1.0.0's tokio runtime (pyo3-async-runtimes, process-global) can abort the process
    # during interpreter finalization; the results are printed, so leave without finalizing.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
