"""A Rust panic never reaches Python as pyo3's PanicException (a BaseException that
``except Exception`` misses) and never prints a Rust backtrace: every entry point turns it into
``InternalError`` (a FlussWriterError, code INTERNAL), and the process, the connection and the
writer stay usable (issue 11, defect 6)."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import fluss_writer as fw
import pytest
from fluss_writer import testing
from helpers import make_table

SRC = pathlib.Path(__file__).resolve().parents[2] / "rust" / "py" / "src"
INTERNAL = dict((name, code) for name, code, _, _ in fw.CLIENT_CODES)["INTERNAL"]

# The forced panics are hooks of the cargo feature `test-hooks`, which the released wheel does not
# have (tests-py/test_release_surface.py). tests-py/run.sh runs this file in its step "test
# hooks" against a debug build with the feature (venv .venv-hooks), where FLUSS_WRITER_EXPECT_HOOKS=1
# turns a missing hook into a failure; in the runs against the wheel these tests skip.
HAS_HOOKS = hasattr(testing, "panic_now")
if os.environ.get("FLUSS_WRITER_EXPECT_HOOKS") == "1":
    assert HAS_HOOKS, "FLUSS_WRITER_EXPECT_HOOKS=1 but fluss_writer was built without the cargo feature test-hooks"
needs_hooks = pytest.mark.skipif(
    not HAS_HOOKS,
    reason="needs the test hooks (cargo feature test-hooks), absent from the release wheel: "
    "tests-py/run.sh runs these tests in its step 'test hooks' (maturin, --features test-hooks, .venv-hooks)",
)


def _is_internal(e: BaseException) -> None:
    assert type(e) is fw.InternalError, type(e)
    assert isinstance(e, fw.FlussWriterError) and isinstance(e, Exception)
    assert e.code == INTERNAL and e.code_name == "INTERNAL" and not e.retriable


@needs_hooks
def test_a_panic_in_a_module_function_is_an_internal_error() -> None:
    with pytest.raises(fw.InternalError, match="boom in a function") as info:
        testing.panic_now("boom in a function")
    _is_internal(info.value)
    # The message says where (file:line) and that it is a bug.
    assert "a bug" in str(info.value) and re.search(r"\.rs:\d+", str(info.value))
    # `except Exception` catches it.
    try:
        testing.panic_now("again")
    except Exception as e:  # noqa: BLE001 - the point of the test
        _is_internal(e)


@needs_hooks
def test_a_panic_in_a_method_leaves_the_connection_usable(conn, engine, rec) -> None:
    with pytest.raises(fw.InternalError, match="boom in a method") as info:
        testing.panic_in_method(conn, "boom in a method")
    _is_internal(info.value)
    name = make_table(conn)
    w = conn.get_table(name).new_append().create_writer()
    w.append({"id": 1, "msg": "after"}, callback=rec)
    w.flush(10)
    assert [c.ok for c in rec.items] == [True]
    assert [r[2] for r in engine.scan(name, 0)] == [(1, "after")]


@needs_hooks
@pytest.mark.parametrize("form", ["callback", "result", "detached", "upsert", "delete"])
def test_a_panic_in_a_write_accepts_nothing_and_the_writer_goes_on(conn, engine, rec, form) -> None:
    pk = form in ("upsert", "delete")
    name = make_table(conn, pk=["id"] if pk else None)
    t = conn.get_table(name)
    w = t.new_upsert().create_writer() if pk else t.new_append().create_writer()
    row = {"id": 7, "msg": "x"}
    testing.panic_on_next_write()
    with pytest.raises(fw.InternalError, match="panic_on_next_write") as info:
        if form == "callback":
            w.append(row, callback=rec)
        elif form == "result":
            w.append(row)
        elif form == "detached":
            w.append_detached(row)
        elif form == "upsert":
            w.upsert(row, callback=rec)
        else:
            w.delete({"id": 7}, callback=rec)
    _is_internal(info.value)
    w.flush(10)
    assert rec.items == [] and w.stats()["pending_callbacks"] == 0
    assert engine.high_watermark(name, 0) == 0
    # The same writer still works, and exactly one record is written afterwards.
    if pk:
        w.upsert(row, callback=rec)
    else:
        w.append(row, callback=rec)
    w.flush(10)
    assert [c.ok for c in rec.items] == [True]
    assert engine.high_watermark(name, 0) == 1
    w.close(10)


@needs_hooks
def test_no_rust_backtrace_reaches_stderr() -> None:
    code = textwrap.dedent(
        """
        import fluss_writer as fw
        from fluss_writer import testing
        with fw.connect("embedded") as c:
            for f in (lambda: testing.panic_now("p1"), lambda: testing.panic_in_method(c, "p2")):
                try:
                    f()
                except fw.InternalError as e:
                    print("caught", e.code_name)
            c.admin().create_database("d")
            c.admin().create_table("d.t", fw.TableDescriptor(fw.Schema([("id", "INT")]), bucket_count=1))
            w = c.get_table("d.t").new_append().create_writer()
            testing.panic_on_next_write()
            try:
                w.append([1])
            except fw.InternalError as e:
                print("caught", e.code_name)
            w.append([2]).wait(10)
            print("done")
        """
    )
    env = {"RUST_BACKTRACE": "1", "PYTHONPATH": ":".join(sys.path)}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["caught", "INTERNAL"] * 3 + ["done"]
    for rust_text in ("stack backtrace", "RUST_BACKTRACE", "panicked at", "PanicException", "pyo3_runtime"):
        assert rust_text not in p.stderr, p.stderr


def test_every_entry_point_goes_through_the_guard() -> None:
    """Every #[pymethods] block and #[pyfunction] of the binding is emitted by entry_points!
    (which wraps each body in entry::guard), so a new one cannot forget the backstop."""
    files = sorted(SRC.glob("*.rs"))
    assert files
    offenders = []
    for f in files:
        lines = f.read_text().splitlines()
        for i, line in enumerate(lines):
            s = line.strip()
            if s.startswith("//"):
                continue
            if "#[pymethods]" in s and f.name != "entry.rs":
                offenders.append(f"{f.name}:{i + 1}: a bare #[pymethods]")
            if s == "#[pyfunction]" and lines[i - 1].strip() != "entry_points! {":
                offenders.append(f"{f.name}:{i + 1}: a #[pyfunction] outside entry_points!")
    assert offenders == []
