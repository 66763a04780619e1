"""ARRAY, MAP and ROW columns (issue 13, part 1), their DDL: tables with them are created from
type names and described on the embedded engine and the real cluster, and nested type names and
key columns are checked. Values: test_nested_values.py."""

from __future__ import annotations

import fluss_writer as fw
import pytest
from targets import Target

COLUMNS = [
    ("id", "INT", False),
    ("tags", "ARRAY<STRING>", True),
    ("attrs", "MAP<STRING, INT NOT NULL>", True),
    ("point", "ROW<x DOUBLE, y DOUBLE NOT NULL>", True),
    ("deep", "ARRAY<ROW<a INT, b MAP<STRING, ARRAY<BIGINT NOT NULL>>, c CHAR(3)>>", True),
]


@pytest.mark.parametrize("pk", [False, True])
def test_tables_with_nested_columns_are_created_and_described(target: Target, pk: bool) -> None:
    schema = fw.Schema(COLUMNS, primary_keys=["id"] if pk else None)
    path = target.create("nested_pk" if pk else "nested_log", fw.TableDescriptor(schema, bucket_count=2))
    info = target.conn.admin().get_table_info(path)
    assert info.schema.columns == COLUMNS
    table = target.conn.get_table(path)
    assert [c[1] for c in table.info.schema.columns] == [c[1] for c in COLUMNS]


def test_nested_type_names_are_checked(conn: fw.Connection) -> None:
    for bad in ["ARRAY<INT", "ROW<a INT, a STRING>", "MAP<INT>", "ROW<>"]:
        with pytest.raises(fw.InvalidTableError):
            fw.Schema([("c", bad)])
    with pytest.raises(fw.InvalidTableError, match="Bucket key column 'tags' has unsupported data type ARRAY<STRING>"):
        descriptor = fw.TableDescriptor(fw.Schema(COLUMNS), bucket_count=1, bucket_keys=["tags"])
        conn.admin().create_table("fluss.nested_key", descriptor)
