"""Interpreter exit with daemon threads inside fluss_writer calls (issue 27, defect 1).

Daemon threads keep calling into fluss_writer (every blocking call, on every executor kind)
while the main thread returns. The process must exit promptly with status 0: never a crash
(CPython <= 3.13 ends a daemon thread that takes the GIL during finalization with
``pthread_exit``, which must never unwind Rust frames), never a hang. The exit drain runs
callbacks for at most 5 s; every callback that ran, ran once; the rest are abandoned with one
warning. Each call kind runs on every executor kind, twice, all in separate interpreters at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytestmark = pytest.mark.timeout(120)

EXIT_WITHIN = 20.0  # seconds from "main returns" to the process gone (budget 5 s + a loaded machine)

SCRIPT = textwrap.dedent(
    """
    import atexit, itertools, sys, threading, time

    ran = []
    # Registered before fluss_writer's own hook, so it runs after it (LIFO): proves that the
    # process got past the drain and the exit gate into finalization.
    atexit.register(lambda: print(f"atexit-marker ran={len(ran)} unique={len(set(ran))}", flush=True))

    import fluss_writer as fw

    CALL, EXECUTOR = sys.argv[1], sys.argv[2]
    conn = fw.connect("embedded", {"client.writer.batch-timeout": "1ms"})
    conn.admin().create_table("fluss.t", fw.TableDescriptor(fw.Schema([("id", "BIGINT")]), bucket_count=1))
    table = conn.get_table("fluss.t")

    def executor():
        if EXECUTOR == "fifo":
            return None
        if EXECUTOR == "sharded":
            return 4
        if EXECUTOR == "pool":
            from concurrent.futures import ThreadPoolExecutor
            return ThreadPoolExecutor(2)
        import asyncio
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, daemon=True).start()
        return loop

    ex = executor()
    def writer(**kw):
        return table.new_append().create_writer(executor=ex, **kw)
    w = writer(max_pending_callbacks=1 if CALL == "slot" else None)
    ids = itertools.count()

    def slow(i):
        def cb(c):
            ran.append(i)
            time.sleep(0.01)
        return cb

    def one(i):
        n = next(ids)
        if CALL == "slot":  # waits for the one callback slot
            w.append({"id": n}, callback=slow(n))
        elif CALL in ("wait", "backlog"):
            if CALL == "wait":
                w.append({"id": n}).wait()
            else:  # a growing backlog of slow callbacks
                w.append({"id": n}, callback=slow(n))
        elif CALL == "flush":
            w.append({"id": n}, callback=slow(n))
            w.flush()
        elif CALL == "close":
            w2 = writer()
            w2.append({"id": n}, callback=slow(n))
            w2.close()
        elif CALL == "arrow":
            import pyarrow as pa
            w.write_arrow_batch(pa.record_batch({"id": pa.array([n], pa.int64())})).wait()
        else:
            raise AssertionError(CALL)

    def producer(i):
        if CALL == "await":
            import asyncio
            async def go():
                while True:
                    try:
                        await w.append({"id": next(ids)})
                    except fw.FlussWriterError:
                        pass
            asyncio.run(go())
        while True:  # a producer that retries: it calls in again during and after the drain
            try:
                one(i)
            except fw.FlussWriterError:
                pass

    for i in range(3):
        threading.Thread(target=producer, args=(i,), daemon=True).start()
    time.sleep(0.3)
    print("main returns", flush=True)
    """
)

CALLS = ["slot", "wait", "flush", "close", "arrow", "await", "backlog"]
EXECUTORS = ["fifo", "sharded", "pool", "loop"]
RUNS = 2  # interpreters per case


def _run(call: str, executor: str) -> tuple[int, str, str, float]:
    # Unbuffered bytes: readline() then reads one byte at a time and leaves the rest in the pipe
    # for communicate(), which reads the pipe itself, not a reader's buffer.
    p = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, call, executor], stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
    )
    assert p.stdout is not None
    first = p.stdout.readline()
    t = time.monotonic()  # the main thread has returned (or is about to)
    try:
        out, err = p.communicate(timeout=EXIT_WITHIN)
    except subprocess.TimeoutExpired:
        os.kill(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return -999, (first + out).decode(), err.decode(), time.monotonic() - t
    return p.returncode, (first + out).decode(), err.decode(), time.monotonic() - t


@pytest.mark.parametrize("call", CALLS)
def test_daemon_threads_in_calls_exit_cleanly(call: str) -> None:
    if call == "arrow":
        pytest.importorskip("pyarrow")
    # A thread pool runs the jobs it already queued when Python joins its threads, before any
    # atexit hook: with a backlog of slow callbacks that is the application's own wait.
    executors = [e for e in EXECUTORS if not (call == "backlog" and e == "pool")]
    cases = [e for e in executors for _ in range(RUNS)]
    with ThreadPoolExecutor(len(cases)) as pool:  # all at once: more interleavings, less wall time
        runs = list(zip(cases, pool.map(lambda e: _run(call, e), cases)))
    failures = [_check(call, e, *r) for e, r in runs]
    assert not any(failures), "\n\n".join(f for f in failures if f)


def _check(call: str, executor: str, rc: int, out: str, err: str, took: float) -> str:
    """What is wrong with one run ("" if nothing)."""
    what = f"{call}/{executor}: rc={rc} after {took:.1f} s\nstdout:\n{out}\nstderr:\n{err[-2000:]}"
    if rc == -999:
        return "hung: " + what
    if rc != 0:  # a negative code is a signal (SIGSEGV, SIGABRT)
        return what
    if "Fatal Python error" in err or "panicked" in err:
        return what
    lines = out.splitlines()
    marker = [line for line in lines if line.startswith("atexit-marker")]
    if not lines or lines[0] != "main returns" or len(marker) != 1:
        return what
    ran, unique = (int(part.split("=")[1]) for part in marker[0].split()[1:])
    if ran != unique:
        return "a callback ran twice: " + what
    # Thousands of 10 ms callbacks queued: the drain runs them for 5 s and abandons the rest.
    if call == "backlog" and "completion callbacks were not run" not in err:
        return "no warning about abandoned callbacks: " + what
    return ""


def test_non_daemon_producer_is_joined_before_the_drain() -> None:
    """A non-daemon thread is joined by Python before any atexit hook: its writes are drained and
    every callback runs exactly once, as before (the exit gate closes only after the drain)."""
    code = textwrap.dedent(
        """
        import threading
        import fluss_writer as fw
        conn = fw.connect("embedded", {"client.writer.batch-timeout": "10s"})
        conn.admin().create_table("fluss.t", fw.TableDescriptor(fw.Schema([("id", "BIGINT")])))
        w = conn.get_table("fluss.t").new_append().create_writer()
        def produce():
            for i in range(200):
                w.append({"id": i}, callback=lambda c, i=i: print(f"done {i} {c.ok}", flush=True))
        threading.Thread(target=produce).start()
        """
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert sorted(p.stdout.splitlines()) == sorted(f"done {i} True" for i in range(200)), p.stderr
