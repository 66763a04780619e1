"""Python values to column types and back (read back through the embedded engine)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from helpers import make_table

COLS = [
    ("id", "INT", False),
    ("t", "TINYINT"),
    ("s", "SMALLINT"),
    ("big", "BIGINT"),
    ("b", "BOOLEAN"),
    ("f", "FLOAT"),
    ("d2", "DOUBLE"),
    ("name", "STRING"),
    ("raw", "BYTES"),
    ("dec", "DECIMAL(10, 3)"),
    ("day", "DATE"),
    ("tod", "TIME(3)"),
    ("ts", "TIMESTAMP(6)"),
    ("ltz", "TIMESTAMP_LTZ(6)"),
]


def test_every_type_round_trips(conn, engine) -> None:
    name = make_table(conn, COLS)
    w = conn.get_table(name).new_append().create_writer()
    aware = dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    row = {
        "id": 1, "t": -128, "s": 32767, "big": -(2**63), "b": True, "f": 1.5, "d2": 2,
        "name": "héllo", "raw": b"\x00\xff", "dec": Decimal("-1234567.5"), "day": dt.date(1969, 12, 31),
        "tod": dt.time(23, 59, 58, 999000), "ts": dt.datetime(2024, 2, 29, 12, 0, 0, 1),
        "ltz": aware,
    }
    assert w.append(row).wait(5).ok
    assert w.append((2, None, None, None, None, None, None, None, bytearray(b"x"), 7, None, None, None, None)).wait(5).ok
    assert w.append([3] + [None] * 13).wait(5).ok
    assert w.append({"id": 4}).wait(5).ok  # missing nullable columns are null
    rows = [r[2] for r in engine.scan(name, 0)]
    r0 = rows[0]
    assert r0[:9] == (1, -128, 32767, -(2**63), True, 1.5, 2.0, "héllo", b"\x00\xff")
    assert r0[9] == Decimal("-1234567.500")
    assert r0[10] == dt.date(1969, 12, 31)
    assert r0[11] == dt.time(23, 59, 58, 999000)
    assert r0[12] == dt.datetime(2024, 2, 29, 12, 0, 0, 1)
    assert r0[13] == aware.astimezone(dt.timezone.utc)
    assert rows[1][8] == b"x" and rows[1][9] == Decimal("7.000")
    assert rows[2] == (3,) + (None,) * 13
    assert rows[3] == (4,) + (None,) * 13
    w.close()
