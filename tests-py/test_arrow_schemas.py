"""Tables made from pyarrow schemas (issue 27, defect 2): list, large_list, fixed-size list, map and
struct fields, nested to any depth, become ARRAY, MAP and ROW columns and fixed_size_binary(n)
becomes BINARY(n), keeping the nullability of every level; the table then takes batches of that
schema and reads them back. ``Schema.to_arrow()`` and ``Schema(pyarrow schema)`` are inverses on
these types. Arrow types with no Fluss type raise InvalidTableError naming the column. The
mapping is the core's (``DataType::from_arrow``); these tests check that Python reaches it."""

from __future__ import annotations

import fluss_writer as fw
import pyarrow as pa
import pytest
from targets import Target

pytestmark = pytest.mark.timeout(120)

ITEM = pa.struct([pa.field("a", pa.int32(), nullable=False), pa.field("b", pa.string())])
ARROW_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("grid", pa.large_list(pa.field("row", pa.list_(pa.int32()), nullable=False))),
        pa.field("attrs", pa.map_(pa.string(), pa.list_(ITEM))),
        pa.field("point", pa.struct([pa.field("x", pa.float64()), pa.field("y", pa.float64(), nullable=False)])),
        pa.field("digest", pa.binary(4)),
        pa.field("pair", pa.list_(pa.int16(), 2)),
    ]
)
COLUMNS = [
    ("id", "BIGINT", False),
    ("tags", "ARRAY<STRING>", True),
    ("grid", "ARRAY<ARRAY<INT> NOT NULL>", True),
    ("attrs", "MAP<STRING, ARRAY<ROW<a INT NOT NULL, b STRING>>>", True),
    ("point", "ROW<x DOUBLE, y DOUBLE NOT NULL>", True),
    ("digest", "BINARY(4)", True),
    ("pair", "ARRAY<SMALLINT>", True),
]


def test_nested_pyarrow_schema_makes_columns_of_every_level() -> None:
    schema = fw.Schema(ARROW_SCHEMA)
    assert schema.columns == COLUMNS
    # Fluss -> Arrow -> Fluss: the same columns (the ARRAY<STRING> among them).
    assert fw.Schema(pa.schema(schema.to_arrow())).columns == schema.columns
    back = pa.schema(fw.Schema([("tags", "ARRAY<STRING>")]).to_arrow())
    assert back.field("tags").type == pa.list_(pa.field("element", pa.string()))
    assert fw.Schema(back).columns == [("tags", "ARRAY<STRING>", True)]


def test_nested_pyarrow_schema_creates_a_table_that_takes_its_batches(target: Target) -> None:
    path = target.create("arrow_nested", fw.TableDescriptor(fw.Schema(ARROW_SCHEMA), bucket_count=1))
    table = target.conn.get_table(path)
    assert table.info.schema.columns == COLUMNS
    rows = [
        {
            "id": 1,
            "tags": ["a", None],
            "grid": [[1, 2], []],
            "attrs": [("k", [{"a": 1, "b": "x"}, None]), ("z", None)],
            "point": {"x": None, "y": 2.5},
            "digest": b"\x00\x01\x02\x03",
            "pair": [7, None],
        },
        {"id": 2, "tags": None, "grid": None, "attrs": None, "point": None, "digest": None, "pair": None},
    ]
    batch = pa.RecordBatch.from_pylist(rows, schema=ARROW_SCHEMA)
    with table.new_append().create_writer() as w:
        w.write_arrow_batch(batch).wait(30).raise_for_error()
        w.flush(30)
    got = [r.row for r in table.scan(0)]
    assert got == [
        (1, ["a", None], [[1, 2], []], {"k": [(1, "x"), None], "z": None}, (None, 2.5), b"\x00\x01\x02\x03", [7, None]),
        (2, None, None, None, None, None, None),
    ]


@pytest.mark.parametrize(
    ("field", "words"),
    [
        (pa.field("u", pa.uint64()), 'column "u": Arrow type UInt64 has no Fluss equivalent'),
        (pa.field("u", pa.list_(pa.uint64())), r'column "u"\[\]: Arrow type UInt64'),
        (pa.field("s", pa.struct([pa.field("d", pa.duration("s"))])), 'column "s".d: Arrow type Duration'),
        (pa.field("s", pa.struct([])), "a ROW needs at least one field"),
        (pa.field("n", pa.null()), 'column "n": Arrow type Null'),
        (pa.field("x", pa.dense_union([pa.field("a", pa.int32())])), 'column "x": Arrow type Union'),
    ],
)
def test_arrow_types_without_a_fluss_type_are_refused_by_name(field: pa.Field, words: str) -> None:
    with pytest.raises(fw.InvalidTableError, match=words):
        fw.Schema(pa.schema([pa.field("id", pa.int32()), field]))
