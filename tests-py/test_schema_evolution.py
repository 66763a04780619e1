"""Schema evolution while writing (issue 13, part 2) through the Python API, on the embedded engine
and, with FLUSS_BOOTSTRAP_SERVERS set, on the real Fluss 0.9.1 cluster (the ``target`` fixture):

* ``Admin.alter_table(path, add_columns=[...])`` adds nullable columns at the end: the table's
  schema id goes up and ``get_table_info`` shows the columns;
* a writer created before keeps writing its schema (dicts, tuples and pyarrow batches of the
  old columns), a writer created after writes the new columns; a ``Table`` loaded after the change
  reads every row (old rows with None in the new columns), one loaded before reads its columns;
* primary-key tables: lookups across the change;
* refused changes raise the server's errors: an existing column (INVALID_ALTER_TABLE_EXCEPTION,
  56), a NOT NULL column, dropping and renaming; a missing table unless ``ignore_if_not_exists``.
"""

from __future__ import annotations

from typing import Callable, List, Tuple

import fluss_writer as fw
import pyarrow as pa
import pytest
from targets import Target

pytestmark = pytest.mark.timeout(120)

CODES = {name: code for name, code, _ in fw.SERVER_CODES}


def completions() -> Tuple[List[fw.WriteCompletion], Callable[[fw.WriteCompletion], None]]:
    done: List[fw.WriteCompletion] = []
    return done, done.append


def test_log_table_across_a_column_change(target: Target) -> None:
    schema = fw.Schema([("id", "BIGINT", False), ("msg", "STRING")])
    path = target.create("evo_log", fw.TableDescriptor(schema, bucket_count=2, bucket_keys=["id"]))
    before = target.conn.get_table(path)
    done, cb = completions()
    with before.new_append().create_writer() as old:
        for i in range(20):
            old.append({"id": i, "msg": f"old {i}"}, callback=cb)
        old.flush(30)
        target.conn.admin().alter_table(path, add_columns=[("extra", "INT"), ("note", "STRING")])
        info = target.conn.admin().get_table_info(path)
        assert info.schema_id == 2
        assert info.schema.columns == [
            ("id", "BIGINT", False),
            ("msg", "STRING", True),
            ("extra", "INT", True),
            ("note", "STRING", True),
        ]
        for i in range(20, 30):
            old.append((i, f"old {i}"), callback=cb)
        batch = pa.RecordBatch.from_pydict(
            {"id": pa.array(range(30, 40), pa.int64()), "msg": [f"old {i}" for i in range(30, 40)]},
            schema=pa.schema([pa.field("id", pa.int64(), False), pa.field("msg", pa.string())]),
        )
        old.write_arrow_batch(batch, callback=cb)
        after = target.conn.get_table(path)
        with after.new_append().create_writer() as new:
            for i in range(40, 60):
                new.append({"id": i, "msg": f"new {i}", "extra": i * 2, "note": f"n{i}"}, callback=cb)
            new.flush(30)
        old.flush(30)
    assert len(done) == 20 + 10 + 1 + 20 and all(c.ok for c in done), [c for c in done if not c.ok][:3]
    rows = sorted((r.row for b in range(2) for r in after.scan(b)), key=lambda r: r[0])
    assert rows == [(i, f"old {i}", None, None) for i in range(40)] + [(i, f"new {i}", i * 2, f"n{i}") for i in range(40, 60)]
    old_view = [r.row for b in range(2) for r in before.scan(b)]
    assert len(old_view) == 60 and all(len(r) == 2 for r in old_view)


def test_primary_key_table_across_a_column_change(target: Target) -> None:
    schema = fw.Schema([("k", "INT", False), ("v", "STRING")], primary_keys=["k"])
    path = target.create("evo_pk", fw.TableDescriptor(schema, bucket_count=2))
    done, cb = completions()
    with target.conn.get_table(path).new_upsert().create_writer() as old:
        for k in range(10):
            old.upsert([k, f"v1 {k}"], callback=cb)
        old.flush(30)
        target.conn.admin().alter_table(path, add_columns=[("n", "BIGINT")])
        table = target.conn.get_table(path)
        with table.new_upsert().create_writer() as new:
            for k in range(5, 15):
                new.upsert({"k": k, "v": f"v2 {k}", "n": k * 100}, callback=cb)
            new.flush(30)
        old.upsert([7, "v3 7"], callback=cb)
        old.delete([0], callback=cb)
        old.flush(30)
    assert len(done) == 10 + 10 + 2 and all(c.ok for c in done)
    assert table.lookup([0]) is None
    assert table.lookup([1]) == (1, "v1 1", None)
    assert table.lookup([6]) == (6, "v2 6", 600)
    assert table.lookup([7]) == (7, "v3 7", None), "a full row of the old schema sets the new column to null"
    assert table.lookup([14]) == (14, "v2 14", 1400)


def test_refused_changes_raise_the_servers_errors(target: Target) -> None:
    schema = fw.Schema([("id", "BIGINT", False), ("msg", "STRING")])
    path = target.create("evo_no", fw.TableDescriptor(schema))
    admin = target.conn.admin()
    with pytest.raises(fw.ServerError) as e:
        admin.alter_table(path, add_columns=[("msg", "INT")])
    assert e.value.code == CODES["INVALID_ALTER_TABLE_EXCEPTION"] and "already exists" in e.value.message
    with pytest.raises(fw.ServerError, match="must be nullable"):
        admin.alter_table(path, add_columns=[("x", "INT", False)])
    with pytest.raises(fw.ServerError, match="Not support drop column"):
        admin.alter_table(path, drop_columns=["msg"])
    with pytest.raises(fw.ServerError, match="Not support rename column"):
        admin.alter_table(path, rename_columns=[("msg", "m")])
    assert admin.get_table_info(path).schema_id == 1
    missing = f"{target.db}.evo_missing_table"
    with pytest.raises(fw.ServerError) as e:
        admin.alter_table(missing, add_columns=[("x", "INT")])
    assert e.value.code == CODES["TABLE_NOT_EXIST"]
    admin.alter_table(missing, add_columns=[("x", "INT")], ignore_if_not_exists=True)
