"""Bad input raises synchronously (TypeError/ValueError-derived), accepts nothing and never
calls (and releases) the callback (C1)."""

from __future__ import annotations

import datetime as dt
import gc
import os
import weakref
from decimal import Decimal

import fluss_writer as fw
import pytest
from helpers import make_table

COLS = [
    ("id", "INT", False),
    ("t", "TINYINT"),
    ("s", "SMALLINT"),
    ("b", "BOOLEAN"),
    ("f", "FLOAT"),
    ("name", "STRING"),
    ("raw", "BYTES"),
    ("d", "DECIMAL(5, 2)"),
    ("day", "DATE"),
    ("ts", "TIMESTAMP(6)"),
    ("ltz", "TIMESTAMP_LTZ(6)"),
]

CASES = [
    ({"id": None}, fw.InvalidRowError, "NOT NULL"),
    ({"id": 1, "nope": 2}, fw.InvalidRowError, "unknown column"),
    ((1, 2), fw.InvalidRowError, "fields but the table has"),
    ([1] * 12, fw.InvalidRowError, "fields but the table has"),
    ({"id": "1"}, fw.InvalidRowTypeError, "takes int"),
    ({"id": 1.5}, fw.InvalidRowTypeError, "takes int"),
    ({"id": True}, fw.InvalidRowTypeError, "takes int"),
    ({"id": 2**31}, fw.InvalidRowError, "out of range"),
    ({"id": 2**70}, fw.InvalidRowError, "out of range"),
    ({"id": 1, "t": 128}, fw.InvalidRowError, "out of range"),
    ({"id": 1, "t": -129}, fw.InvalidRowError, "out of range"),
    ({"id": 1, "s": 40000}, fw.InvalidRowError, "out of range"),
    ({"id": 1, "b": 1}, fw.InvalidRowTypeError, "takes bool"),
    ({"id": 1, "f": "x"}, fw.InvalidRowTypeError, "float"),
    ({"id": 1, "f": 1e300}, fw.InvalidRowError, "out of range"),
    # An int beyond a double's range was a bare OverflowError (found by tests-py/rows/test_property.py).
    ({"id": 1, "f": 10**400}, fw.InvalidRowError, 'column "f".*out of range'),
    # An exponent beyond 32 bits was truncated: 1E+4294967297 was written as 10.00.
    ({"id": 1, "d": Decimal("1E+4294967297")}, fw.InvalidRowError, 'column "d".*does not fit'),
    ({"id": 1, "name": b"x"}, fw.InvalidRowTypeError, "takes str"),
    ({"id": 1, "raw": "x"}, fw.InvalidRowTypeError, "bytes"),
    ({"id": 1, "d": Decimal("1.234")}, fw.InvalidRowError, "fractional digits"),
    ({"id": 1, "d": Decimal("12345.6")}, fw.InvalidRowError, "digits"),
    ({"id": 1, "d": Decimal("NaN")}, fw.InvalidRowError, "finite"),
    ({"id": 1, "d": 1.5}, fw.InvalidRowTypeError, "Decimal"),
    ({"id": 1, "day": dt.datetime(2024, 1, 1)}, fw.InvalidRowTypeError, "date"),
    ({"id": 1, "day": "2024-01-01"}, fw.InvalidRowTypeError, "date"),
    ({"id": 1, "ts": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)}, fw.InvalidRowError, "timezone-aware"),
    ({"id": 1, "ltz": dt.datetime(2024, 1, 1)}, fw.InvalidRowError, "naive"),
    ({"id": 1, "ts": 17}, fw.InvalidRowTypeError, "datetime"),
    ({1: 1}, fw.InvalidRowTypeError, "column names"),
    (42, fw.InvalidRowTypeError, "dict, list or tuple"),
    ("id=1", fw.InvalidRowTypeError, "dict, list or tuple"),
]


@pytest.mark.parametrize("row,exc,text", CASES)
def test_bad_rows_raise_synchronously_and_release_the_callback(conn, engine, row, exc, text) -> None:
    name = make_table(conn, COLS)
    w = conn.get_table(name).new_append().create_writer()

    class Cb:
        called = False

        def __call__(self, c: fw.WriteCompletion) -> None:
            Cb.called = True

    cb = Cb()
    ref = weakref.ref(cb)
    with pytest.raises(exc, match=text) as info:
        w.append(row, callback=cb)
    assert info.value.code == fw.InvalidRowError.code
    assert not info.value.retriable
    del cb, info
    gc.collect()
    assert ref() is None, "the callback of a rejected write must be released before the call returns"
    w.flush()
    assert not Cb.called
    assert engine.high_watermark(name, 0) == 0
    w.close()


def test_non_callable_callback_is_a_type_error(conn, log_table) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    with pytest.raises(TypeError):
        w.append({"id": 1}, callback=5)
    w.close()


def test_bad_arrow_batch_accepts_nothing(conn, engine, log_table) -> None:
    import pyarrow as pa
    w = conn.get_table(log_table).new_append().create_writer()
    bad = pa.record_batch({"id": pa.array(["x"]), "msg": pa.array(["a"])})
    with pytest.raises(fw.InvalidRowError):
        w.write_arrow_batch(bad, callback=lambda c: None)
    wrong_names = pa.record_batch({"x": pa.array([1], pa.int64()), "msg": pa.array(["a"])})
    with pytest.raises(fw.InvalidRowError, match="unknown column \"x\""):
        w.write_arrow_batch(wrong_names)
    nulls = pa.record_batch({"id": pa.array([None], pa.int64()), "msg": pa.array(["a"])})
    with pytest.raises(fw.InvalidRowError, match="NOT NULL"):
        w.write_arrow_batch(nulls)
    with pytest.raises(TypeError):
        w.write_arrow_batch([1, 2, 3])
    w.flush()
    assert engine.high_watermark(log_table, 0) == 0
    w.close()


def test_bad_config_and_paths(conn) -> None:
    with pytest.raises(fw.InvalidConfigError, match="unknown"):
        fw.connect("embedded", {"client.writer.nope": "1"})
    with pytest.raises(fw.InvalidConfigError):
        fw.Config({"client.writer.buffer.memory-size": "lots"})
    with pytest.raises(fw.InvalidTableError):
        conn.get_table("no-dot")
    with pytest.raises(fw.ServerError) as e:
        conn.get_table("fluss.missing")
    assert e.value.code == 7  # TABLE_NOT_EXIST
    with pytest.raises(fw.InvalidTableError):
        fw.Schema([("a", "WHATEVER")])
    with pytest.raises(fw.UnsupportedError):
        conn.get_table(make_table(conn)).new_upsert()


def test_bad_writer_options(conn, log_table) -> None:
    ta = conn.get_table(log_table).new_append()
    with pytest.raises(TypeError):
        ta.create_writer(executor="threads")
    # Out-of-range sizes are the core's rule (INVALID_CONFIG, as in C++ and Rust), checked
    # before any worker thread starts (executor=10**6 used to start threads until the limit).
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None
    for bad in (0, -1, 65, 10**6, 2**64, 2**70):
        with pytest.raises(fw.InvalidConfigError, match="1 to 64 workers"):
            ta.create_writer(executor=bad)
    for bad in (0, -1, 2**31, 2**70):
        with pytest.raises(fw.InvalidConfigError, match="max_pending_callbacks must be 1 to 2147483647"):
            ta.create_writer(max_pending_callbacks=bad)
    with pytest.raises(TypeError):
        ta.create_writer(max_pending_callbacks=1.5)
    if threads is not None:
        assert len(os.listdir("/proc/self/task")) < threads + 8, "no thread storm"
    assert ta.create_writer(executor=64, max_pending_callbacks=2**31 - 1).stats()["pending_callbacks"] == 0
    with pytest.raises(TypeError):
        ta.create_writer(on_callback_error=3)
