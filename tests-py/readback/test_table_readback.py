"""``Table.scan`` / ``Table.lookup`` on the embedded engine: the same records, in the same
shape, as ``fluss_writer.testing``'s engine read-back (the protocol path vs the engine's own
state)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import fluss_writer as fw
import pytest
from fluss_writer import testing
from helpers import make_table

COLS = [("id", "INT", False), ("s", "STRING"), ("d", "DECIMAL(10, 2)"), ("ts", "TIMESTAMP_LTZ(6)"), ("dt", "DATE")]


def _row(i: int, v: int = 0) -> tuple:
    ts = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=i + v)
    day = None if i % 4 == 0 else dt.date(2024, 2, i % 28 + 1)
    return (i, None if i % 3 == 0 else f"r{i}-{v}", Decimal(i * 100 + v).scaleb(-2), ts, day)


def test_scan_log_table_matches_engine(conn: fw.Connection, engine: testing.EmbeddedEngine) -> None:
    name = make_table(conn, COLS, buckets=3, bucket_keys=["id"])
    t = conn.get_table(name)
    w = t.new_append().create_writer()
    results = [w.append(_row(i)) for i in range(60)]
    w.flush(10)
    total = 0
    for b in range(3):
        got = t.scan(b)
        assert got == engine.scan(name, b)
        total += len(got)
        for rec in got:
            assert isinstance(rec, fw.ScannedRow) and isinstance(rec, tuple)
            offset, kind, row = rec
            assert (offset, kind, row) == (rec.offset, rec.change_type, rec.row)
            assert kind == "+A" and isinstance(row, tuple) and row == _row(row[0])
        if got:
            assert t.scan(b, from_offset=1) == got[1:]
            assert t.scan(b, from_offset=len(got)) == []
    assert total == 60
    for i, r in enumerate(results):
        c = r.wait(5)
        assert t.scan(c.bucket, c.offset)[0].row == _row(i)


def test_scan_and_lookup_pk_table_match_engine(conn: fw.Connection, engine: testing.EmbeddedEngine) -> None:
    name = make_table(conn, COLS, buckets=2, pk=["id"])
    t = conn.get_table(name)
    w = t.new_upsert().create_writer()
    for i in range(20):
        w.upsert(_row(i))
    for i in range(0, 20, 4):
        w.upsert(_row(i, 1))
    for i in range(1, 20, 5):
        w.delete([i])
    w.flush(10)
    kinds = set()
    for b in range(2):
        got = t.scan(b)
        assert got == engine.scan(name, b)
        kinds |= {r.change_type for r in got}
    assert kinds == {"+I", "-U", "+U", "-D"}
    for i in range(20):
        want = engine.lookup(name, [i])
        assert t.lookup([i]) == want
        assert t.lookup((i,)) == want
        assert t.lookup({"id": i}) == want
        assert want == (None if i % 5 == 1 else _row(i, 1 if i % 4 == 0 else 0))
    assert t.lookup([999]) is None


def test_readback_errors(conn: fw.Connection) -> None:
    log = conn.get_table(make_table(conn, buckets=2))
    assert log.scan(1) == []
    with pytest.raises(fw.UnsupportedError):
        log.lookup([1])
    with pytest.raises(fw.InvalidRowError):
        log.scan(2)
    with pytest.raises(fw.InvalidRowError):
        log.scan(-1)
    pk = conn.get_table(make_table(conn, COLS, pk=["id"]))
    with pytest.raises(fw.InvalidRowError):
        pk.lookup([1, 2])
    with pytest.raises(fw.InvalidRowError):
        pk.lookup({"id": 1, "nope": 2})
    with pytest.raises(TypeError):
        pk.lookup(1)  # type: ignore[arg-type]


def test_readback_after_close_raises(conn: fw.Connection) -> None:
    t = conn.get_table(make_table(conn, buckets=1))
    conn.close(5)
    with pytest.raises(fw.FlussWriterError):
        t.scan(0)
