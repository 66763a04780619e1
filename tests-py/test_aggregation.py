"""Aggregation merge engine tables through the Python API (the Rust core's ``AggFunction``): a
column tuple's fourth element names how a table with ``table.merge-engine = aggregation`` merges
the column (``"sum"`` or ``(name, {param: value})``), checked by the core. On the embedded engine
(which has no aggregation engine and refuses such columns, as a server does for a table without
it) and, with FLUSS_BOOTSTRAP_SERVERS set, on the real cluster: upserts and partial updates read
back aggregated (Fluss 0.9.1 and 1.0 both have the engine).
"""

from __future__ import annotations

import fluss_writer as fw
import pytest
from targets import Target

pytestmark = pytest.mark.timeout(120)

CODES = {name: code for name, code, _ in fw.SERVER_CODES}


def agg_schema() -> fw.Schema:
    return fw.Schema(
        [
            ("id", "BIGINT", False),
            ("total", "BIGINT", True, "SUM"),
            ("hi", "INT", True, "max"),
            ("name", "STRING", True, None),
            ("tags", "STRING", True, ("listagg", {"delimiter": ";"})),
        ],
        primary_keys=["id"],
    )


def test_columns_carry_aggregation_functions_checked_by_the_core() -> None:
    s = agg_schema()
    assert s.agg_functions == {"total": ("sum", {}), "hi": ("max", {}), "tags": ("listagg", {"delimiter": ";"})}
    assert s.columns[1] == ("total", "BIGINT", True)
    with pytest.raises(fw.InvalidTableError, match='unknown aggregation function "median"'):
        fw.Schema([("id", "BIGINT", False), ("v", "INT", True, "median")], primary_keys=["id"])
    with pytest.raises(fw.InvalidTableError, match='primary key column "id" cannot have an aggregation function'):
        fw.Schema([("id", "BIGINT", False, "sum"), ("v", "INT")], primary_keys=["id"])
    with pytest.raises(TypeError, match="aggregation function"):
        fw.Schema([("id", "BIGINT", False), ("v", "INT", True, 7)], primary_keys=["id"])


def test_aggregation_tables_merge_upserts_and_partial_updates(target: Target) -> None:
    d = fw.TableDescriptor(agg_schema(), bucket_count=2, properties={"table.merge-engine": "aggregation"})
    if target.kind == "embedded":
        with pytest.raises(fw.ServerError) as e:
            target.create("agg", d)
        assert e.value.code == CODES["INVALID_CONFIG_EXCEPTION"]
        assert "not supported by the embedded engine" in str(e.value)
        plain = fw.TableDescriptor(agg_schema(), bucket_count=1)
        with pytest.raises(fw.ServerError, match="column 'total' has aggregation function 'sum'"):
            target.create("agg_plain", plain)
        return
    path = target.create("agg", d)
    assert target.conn.admin().get_table_info(path).schema.agg_functions == agg_schema().agg_functions
    table = target.conn.get_table(path)
    with table.new_upsert().create_writer() as w:
        w.upsert((1, 10, 3, "a", "x"))
        w.upsert((1, 5, 7, None, "y"))
        w.flush(30)
    assert table.lookup((1,)) == (1, 15, 7, "a", "x;y")
    with table.new_upsert().partial_update_by_name(["id", "total"]).create_writer() as p:
        p.upsert((1, 100, 99, "ignored", "ignored"))
        p.flush(30)
    assert table.lookup((1,)) == (1, 115, 7, "a", "x;y")
