"""ARRAY, MAP and ROW values from Python (issue 13, part 1), on the embedded engine and the real
cluster: lists/tuples for ARRAY, dicts or (key, value) pairs for MAP, dicts or tuples for ROW,
None inside them where the type allows; read back as list, dict and tuple; pyarrow tables with
list, map and struct columns; and the errors that name the place inside the column."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Dict, List, Optional, Tuple

import fluss_writer as fw
import pyarrow as pa
import pytest
from targets import Target

COLUMNS = [
    ("id", "INT", False),
    ("tags", "ARRAY<STRING>", True),
    ("attrs", "MAP<STRING, INT NOT NULL>", True),
    ("point", "ROW<x DOUBLE, y DOUBLE NOT NULL>", True),
    ("deep", "ARRAY<ROW<a INT, b MAP<STRING, ARRAY<BIGINT NOT NULL>>, c DECIMAL(20, 2)>>", True),
    ("blobs", "ARRAY<BYTES>", True),
]


def row(i: int) -> Tuple[Any, ...]:
    """Row ``i`` as it reads back: nested values, empties and None at each level."""
    tags: Optional[List[Optional[str]]] = [None, [], ["a", None, "a longer string"], [f"t{k}" for k in range(i % 9)]][i % 4]
    attrs: Optional[Dict[str, int]] = None if i % 5 == 0 else {f"k{k}": i * k for k in range(i % 4)}
    point = None if i % 6 == 0 else (None if i % 2 == 0 else i / 4, float(-i))
    deep = None if i % 7 == 0 else [(i, {"xs": [i, -1], "none": None}, Decimal(f"{i}.25")), None, (None, None, None)]
    blobs = [bytes([k, i % 256]) for k in range(i % 3)]
    return (i, tags, attrs, point, deep, blobs)


def written(i: int) -> Any:
    """The same row as it is written: other accepted spellings on some rows (tuples for arrays,
    (key, value) pairs for maps, dicts for rows, bytearray and memoryview for bytes)."""
    r = list(row(i))
    if i % 3 == 1:
        if r[1] is not None:
            r[1] = tuple(r[1])
        if r[2] is not None:
            r[2] = list(r[2].items())
        if r[3] is not None:
            r[3] = {"x": r[3][0], "y": r[3][1]}
        r[5] = [bytearray(b) if k % 2 else memoryview(b) for k, b in enumerate(r[5])]
    return r


def read_back(table: fw.Table, buckets: int) -> List[Tuple[Any, ...]]:
    return sorted((s.row for b in range(buckets) for s in table.scan(b)), key=lambda r: r[0])


def test_log_rows_round_trip(target: Target) -> None:
    path = target.create("py_nested_log", fw.TableDescriptor(fw.Schema(COLUMNS), bucket_count=2))
    table = target.conn.get_table(path)
    done: List[Optional[fw.FlussError]] = []
    with table.new_append().create_writer() as w:
        for i in range(120):
            w.append(written(i), lambda c: done.append(c.error))
        w.flush()
    assert done == [None] * 120
    assert read_back(table, 2) == [row(i) for i in range(120)]


def test_primary_key_rows_round_trip(target: Target) -> None:
    schema = fw.Schema(COLUMNS, primary_keys=["id"])
    path = target.create("py_nested_pk", fw.TableDescriptor(schema, bucket_count=3))
    table = target.conn.get_table(path)
    with table.new_upsert().create_writer() as w:
        for i in range(80):
            w.upsert(written(i))
        w.upsert({"id": 5, "tags": ["replaced"], "point": {"y": 1.0}})
        w.delete([6])
        w.flush()
    for i in range(80):
        want: Optional[Tuple[Any, ...]] = row(i)
        if i == 5:
            want = (5, ["replaced"], None, (None, 1.0), None, None)
        elif i == 6:
            want = None
        assert table.lookup([i]) == want, i


def test_pyarrow_list_map_and_struct_columns(target: Target) -> None:
    schema = fw.Schema(COLUMNS[:4])
    path = target.create("py_nested_arrow", fw.TableDescriptor(schema, bucket_count=1))
    table = target.conn.get_table(path)
    data = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int32()),
            "tags": pa.array([["a", None], None, []], pa.list_(pa.string())),
            "attrs": pa.array([[("k", 7)], None, []], pa.map_(pa.string(), pa.int32())),
            "point": pa.array(
                [{"x": 1.5, "y": 2.5}, None, {"x": None, "y": -1.0}], pa.struct([("x", pa.float64()), ("y", pa.float64())])
            ),
        }
    )
    with table.new_append().create_writer() as w:
        w.write_arrow(data)
        w.write_arrow(
            data.cast(
                pa.schema([data.schema[0], pa.field("tags", pa.large_list(pa.large_string())), data.schema[2], data.schema[3]])
            )
        )
        bad = data.set_column(3, "point", pa.array([{"x": 1.0, "y": None}, None, None], data.schema[3].type))
        with pytest.raises(fw.InvalidRowError, match='column "point".*field "y" is NOT NULL'):
            w.write_arrow(bad)
        w.flush()
    want = [(1, ["a", None], {"k": 7}, (1.5, 2.5)), (2, None, None, None), (3, [], {}, (None, -1.0))]
    assert read_back(table, 1) == sorted(want * 2, key=lambda r: r[0])


def test_bad_nested_values_name_the_place(conn: fw.Connection) -> None:
    schema = fw.Schema(COLUMNS, primary_keys=["id"])
    conn.admin().create_table("fluss.py_nested_bad", fw.TableDescriptor(schema, bucket_count=1), ignore_if_exists=True)
    table = conn.get_table("fluss.py_nested_bad")
    cases: List[Tuple[Dict[str, Any], type, str]] = [
        ({"attrs": {"k": None}}, fw.InvalidRowError, r'column "attrs"\{"k"\} is INT NOT NULL but the value is null'),
        ({"attrs": {None: 1}}, fw.InvalidRowError, "map keys cannot be null"),
        ({"attrs": [("k", 1), ("k", 2)]}, fw.InvalidRowError, "map keys must be unique"),
        ({"attrs": [("k",)]}, fw.InvalidRowTypeError, "dict or list of \\(key, value\\) pairs"),
        ({"point": (1.0,)}, fw.InvalidRowError, "the value has 1 fields, the type 2"),
        ({"point": {"x": 1.0}}, fw.InvalidRowError, r'column "point".y is DOUBLE NOT NULL but the value is null'),
        ({"point": {"z": 1.0}}, fw.InvalidRowError, 'has no field "z"'),
        ({"tags": [1]}, fw.InvalidRowTypeError, r'column "tags\[0\]" is STRING and takes str, not int'),
        ({"tags": "abc"}, fw.InvalidRowTypeError, 'column "tags" is ARRAY<STRING> and takes list or tuple, not str'),
        ({"deep": [(1, {"x": [None]}, None)]}, fw.InvalidRowError, r'column "deep"\[0\].b\{"x"\}\[0\] is BIGINT NOT NULL'),
        ({"deep": [(1, None, Decimal("0.125"))]}, fw.InvalidRowError, "more than 2 fractional digits"),
    ]
    with table.new_upsert().create_writer() as w:
        for values, error, words in cases:
            with pytest.raises(error, match=words):
                w.upsert({"id": 1, **values})
        w.flush()
        assert w.stats()["pending_callbacks"] == 0
    assert table.lookup([1]) is None
