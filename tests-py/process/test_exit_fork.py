"""Interpreter exit drains open writers (C7) and a forked child refuses inherited connections
(C10); both run in subprocesses."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)


def test_open_writers_are_drained_at_interpreter_exit() -> None:
    p = run(
        """
        import sys
        import fluss_writer as fw
        conn = fw.connect("embedded", {"client.writer.batch-timeout": "10s"})
        conn.admin().create_table("fluss.e", fw.TableDescriptor(fw.Schema([("id", "BIGINT")])))
        w = conn.get_table("fluss.e").new_append().create_writer()
        def cb(c):
            sys.stdout.write(f"done {c.offset} {c.ok}\\n")
        for i in range(100):
            w.append({"id": i}, callback=cb)
        print("exiting", flush=True)
        """
    )
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "exiting"
    assert sorted(lines[1:]) == sorted(f"done {i} True" for i in range(100))


def test_forked_child_gets_a_clear_error() -> None:
    p = run(
        """
        import os, sys
        import fluss_writer as fw
        conn = fw.connect("embedded")
        conn.admin().create_table("fluss.f", fw.TableDescriptor(fw.Schema([("id", "BIGINT")])))
        w = conn.get_table("fluss.f").new_append().create_writer()
        w.append({"id": 1}).wait(5)
        pid = os.fork()
        if pid == 0:
            code = 3
            try:
                w.append({"id": 2}, callback=lambda c: None)
            except fw.ForkedProcessError as e:
                code = 0 if (e.code == fw.ForkedProcessError.code and "fork" in str(e)) else 4
            try:
                conn.get_table("fluss.f")
                code = 5
            except fw.ForkedProcessError:
                pass
            try:
                fw.connect("embedded").close()  # a new connection in the child works
            except Exception:
                code = 6
            sys.stdout.flush()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        w.append({"id": 3}).wait(5)
        print("child", os.waitstatus_to_exitcode(status))
        """
    )
    assert p.returncode == 0, p.stderr
    assert "child 0" in p.stdout, p.stdout + p.stderr
