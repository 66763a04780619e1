"""Append and upsert writers, partial updates, Arrow (pyarrow, polars), pandas, admin."""

from __future__ import annotations

import fluss_writer as fw
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from helpers import Recorder, make_table


def test_admin_round_trip(conn) -> None:
    a = conn.admin()
    a.create_database("db1", ignore_if_exists=True)
    assert a.database_exists("db1") and "db1" in a.list_databases()
    schema = pa.schema([pa.field("k", pa.int32(), nullable=False), pa.field("v", pa.string())])
    a.create_table("db1.t", fw.TableDescriptor(schema, bucket_count=3, primary_keys=["k"]))
    info = a.get_table_info("db1.t")
    assert info.bucket_count == 3 and info.primary_keys == ["k"] and info.has_primary_key
    assert info.schema.columns == [("k", "INT", False), ("v", "STRING", True)]
    assert a.table_exists(fw.TablePath("db1", "t")) and a.list_tables("db1") == ["t"]
    with pytest.raises(fw.ServerError):
        a.create_table("db1.t", fw.TableDescriptor(schema, primary_keys=["k"]))
    a.drop_table(("db1", "t"))
    assert not a.table_exists("db1.t")
    a.drop_database("db1")


def test_upsert_delete_and_partial_update(conn, engine) -> None:
    name = make_table(conn, [("k", "INT"), ("a", "STRING"), ("b", "BIGINT")], pk=["k"], buckets=2)
    t = conn.get_table(name)
    with t.new_upsert().create_writer() as w:
        rec = Recorder()
        w.upsert({"k": 1, "a": "x", "b": 1}, callback=rec)
        w.upsert((2, "y", 2), callback=rec)
        w.flush()
        assert all(c.ok for c in rec.items)
    with t.new_upsert().partial_update_by_name(["k", "b"]).create_writer() as pw:
        pw.upsert({"k": 1, "b": 10}).wait(5)
    assert engine.lookup(name, [1]) == (1, "x", 10)
    with t.new_upsert().partial_update_by_index([0, 1]).create_writer() as pw:
        pw.upsert({"k": 2, "a": "z"}).wait(5)
    assert engine.lookup(name, {"k": 2}) == (2, "z", 2)
    with t.new_upsert().create_writer() as w:
        assert w.delete({"k": 1}).wait(5).ok
        w.delete([2], callback=lambda c: None)
    assert engine.lookup(name, [1]) is None and engine.lookup(name, [2]) is None
    with pytest.raises(fw.InvalidRowError):
        t.new_upsert().partial_update_by_name(["a"])
    with pytest.raises(fw.InvalidRowError):
        t.new_upsert().create_writer().delete({"a": "x"})


def test_pyarrow_batch_multi_bucket_results(conn, engine) -> None:
    name = make_table(conn, buckets=3, bucket_keys=["id"])
    w = conn.get_table(name).new_append().create_writer()
    batch = pa.record_batch({"id": pa.array(range(100), pa.int64()), "msg": pa.array([str(i) for i in range(100)])})
    rec = Recorder()
    w.write_arrow_batch(batch, callback=rec)
    w.flush()
    assert len(rec.items) == 1
    c = rec.items[0]
    assert c.ok and sum(b.rows for b in c.bucket_results) == 100
    assert {b.bucket for b in c.bucket_results} == {0, 1, 2}
    assert sum(engine.high_watermark(name, b) for b in range(3)) == 100
    w.close()


def test_arrow_batch_failed_bucket_only(conn, engine) -> None:
    name = make_table(conn, buckets=2, bucket_keys=["id"])
    engine.inject_error(name, 1, 15, "only bucket 1", times=1)
    w = conn.get_table(name).new_append().create_writer()
    batch = pa.record_batch({"id": pa.array(range(50), pa.int64()), "msg": pa.array(["m"] * 50)})
    c = w.write_arrow_batch(batch).wait(5)
    assert not c.ok
    by_bucket = {b.bucket: b for b in c.bucket_results}
    assert by_bucket[0].ok and not by_bucket[1].ok and by_bucket[1].error.code == 15
    w.close()


def test_pyarrow_table_polars_and_pandas(conn, engine, log_table) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    tbl = pa.table({"id": pa.array([1, 2], pa.int64()), "msg": ["a", "b"]})
    res = w.write_arrow(tbl)
    assert [r.wait(5).ok for r in res] == [True]
    df = pl.DataFrame({"id": [3, 4], "msg": ["c", "d"]})
    assert w.write_arrow_batch(df).wait(5).ok
    rec = Recorder()
    w.write_arrow(df, callback=rec)
    pdf = pd.DataFrame({"id": [5, 6], "msg": ["e", "f"]})
    w.write_pandas(pdf, callback=rec)
    w.flush()
    assert len(rec.items) == 2 and all(c.ok for c in rec.items)
    ids = [r[2][0] for r in engine.scan(log_table, 0)]
    assert ids == [1, 2, 3, 4, 3, 4, 5, 6]
    w.close()


def test_schema_from_pyarrow_and_to_arrow() -> None:
    s = fw.Schema(pa.schema([pa.field("a", pa.int8()), pa.field("ts", pa.timestamp("ms", tz="UTC"))]))
    assert s.columns == [("a", "TINYINT", True), ("ts", "TIMESTAMP_LTZ(3)", True)]
    assert pa.schema(s.to_arrow()).names == ["a", "ts"]


def _stub_typeddict_fields(name: str) -> set:
    """The fields a TypedDict of the ``_native`` stub declares (TypedDicts exist only there)."""
    import ast
    import pathlib

    stub = pathlib.Path(fw.__file__).with_name("_native.pyi")
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return {n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    raise AssertionError(f"{name} is not in {stub}")


def test_stats_and_config_object(log_table) -> None:
    cfg = fw.Config({"client.writer.batch-timeout": "5ms", "client.writer.enable-idempotence": True})
    assert cfg.to_dict()["client.writer.enable-idempotence"] == "true"
    with fw.connect("embedded", cfg) as conn:
        name = make_table(conn)
        w = conn.get_table(name).new_append().create_writer()
        w.append_detached({"id": 1})
        w.flush()
        s = w.stats()
        assert s["pending_callbacks"] == 0 and s["callbacks_run"] == 0
        # The core's WriterStats::fields, no more, no less, as the typed stub declares them.
        declared = _stub_typeddict_fields("WriterStats")
        assert set(s) == declared, sorted(set(s) ^ declared)
        assert all(isinstance(v, int) for v in s.values())
    assert conn.closed
