"""A forked child never keeps ``embedded:<dir>`` locked: once the parent closed its connection,
reopening the directory succeeds at once, while the child (a plain fork or a multiprocessing
fork pool's worker) is still alive (issue 11, defect 7). Each scenario runs in a subprocess so
that a lock that is not released cannot hang this test run."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run(code: str, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), str(tmp_path / "data")], capture_output=True, text=True, timeout=60
    )


PRELUDE = """
import os, sys, time
import fluss_writer as fw
d = "embedded:" + sys.argv[1]
conn = fw.connect(d)
conn.admin().create_table("fluss.t", fw.TableDescriptor(fw.Schema([("id", "BIGINT")]), bucket_count=1))
w = conn.get_table("fluss.t").new_append().create_writer()
w.append({"id": 1}).wait(10)

def reopen_at_once():
    # fw.connect does not wait for the lock: it raises at once if the directory is still locked,
    # so succeeding is the check. The time bound only catches a reopen that waited, loosely
    # enough that a stall of a busy machine does not fail it.
    t = time.monotonic()
    c2 = fw.connect(d)  # raises if the directory is still locked
    rows = [r[2] for r in c2.get_table("fluss.t").scan(0)]
    c2.close(5)
    return time.monotonic() - t, rows
"""


def test_a_forked_child_does_not_keep_the_directory_locked(tmp_path) -> None:
    p = run(
        PRELUDE
        + """
r, wfd = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    os.write(wfd, b"up")
    time.sleep(20)  # holds on, never touches the inherited connection
    os._exit(0)
os.close(wfd)
assert os.read(r, 2) == b"up"
conn.close(10)
secs, rows = reopen_at_once()
alive = os.waitpid(pid, os.WNOHANG) == (0, 0)
os.kill(pid, 9)
os.waitpid(pid, 0)
print("reopened", secs < 5.0, rows, "child alive", alive)
""",
        tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["reopened", "True", "[(1,)]", "child", "alive", "True"]


def test_a_multiprocessing_fork_pool_does_not_keep_the_directory_locked(tmp_path) -> None:
    p = run(
        PRELUDE
        + """
import multiprocessing as mp
pool = mp.get_context("fork").Pool(2)
assert pool.map(abs, range(-4, 0)) == [4, 3, 2, 1]  # the workers are forked and running
conn.close(10)
secs, rows = reopen_at_once()
still_running = pool.apply(os.getpid) > 0
pool.terminate()
pool.join()
print("reopened", secs < 5.0, rows, "pool alive", still_running)
""",
        tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["reopened", "True", "[(1,)]", "pool", "alive", "True"]
