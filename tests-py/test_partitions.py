"""Partitioned tables through the Python API (issue 12), on the embedded engine and, with
FLUSS_BOOTSTRAP_SERVERS set, again on the real Fluss 0.9.1 cluster (the ``target`` fixture; the
``cluster`` parametrization exists only when the variable is set, and under CI=true without it
``cluster/test_cluster_required.py`` fails instead, as for every other cluster test).

* DDL: ``TableDescriptor(partition_keys=)``, ``Admin.create_partition`` / ``drop_partition`` /
  ``list_partitions`` -> ``PartitionInfo``; PARTITION_ALREADY_EXISTS (42) and PARTITION_NOT_EXISTS
  (36) unless ignored, a spec naming a wrong key or an invalid value (InvalidTableError naming
  the key), TABLE_NOT_PARTITIONED_EXCEPTION (37).
* Rows with callbacks routed to three partitions (two created beforehand, one by the writer):
  ``completion.partition`` is the row's value, ``partition_id`` the listed id, and every row is
  read back through ``Table.scan(partition=)`` at the place its callback reported.
* ``client.writer.dynamic-create-partition.enabled`` off: rows for a missing partition fail in
  their callbacks with PARTITION_NOT_EXISTS exactly once, the other partition is unaffected,
  nothing is created; once the partition exists the same writer writes to it.
* Arrow batches across partitions (pyarrow RecordBatch and Table, pandas): ``bucket_results``
  name the partitions.
* A partitioned primary-key table: upsert, delete, lookup with the whole key.
* Bad partition values (None, "a b", ...) raise InvalidRowError naming the column and accept
  nothing (no callback, no partition).
* Embedded engine only: read-back and fault injection per partition.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections import Counter
from typing import Any, Callable, Dict, List, Optional, Tuple

import fluss_writer as fw
import pandas as pd
import pyarrow as pa
import pytest
from fluss_writer import testing
from helpers import eventually
from targets import EMBEDDED_CONFIG, Target

pytestmark = pytest.mark.timeout(120)

CODES = {name: code for name, code, _retriable in fw.SERVER_CODES}
PARTITION_NOT_EXISTS = CODES["PARTITION_NOT_EXISTS"]
TABLE_NOT_PARTITIONED = CODES["TABLE_NOT_PARTITIONED_EXCEPTION"]
PARTITION_ALREADY_EXISTS = CODES["PARTITION_ALREADY_EXISTS"]
NO_CREATE = {"client.writer.dynamic-create-partition.enabled": "false"}

LOG_COLUMNS = [("id", "BIGINT", False), ("dt", "STRING"), ("msg", "STRING")]
DAYS = ["2026-12-01", "2026-12-02", "2026-12-03"]


def log_descriptor(buckets: int = 3) -> fw.TableDescriptor:
    return fw.TableDescriptor(fw.Schema(LOG_COLUMNS), bucket_count=buckets, bucket_keys=["id"], partition_keys=["dt"])


class Seen:
    """Completions by operation id, every call recorded (to count calls per operation)."""

    def __init__(self) -> None:
        self.calls: List[Tuple[Any, fw.WriteCompletion]] = []
        self.lock = threading.Lock()

    def cb(self, op: Any) -> Callable[[fw.WriteCompletion], None]:
        def done(c: fw.WriteCompletion) -> None:
            with self.lock:
                self.calls.append((op, c))

        return done

    def by_op(self) -> Dict[Any, fw.WriteCompletion]:
        out: Dict[Any, fw.WriteCompletion] = {}
        for op, c in self.calls:
            assert op not in out, f"operation {op} completed twice"
            out[op] = c
        return out


def names(admin: fw.Admin, path: str) -> List[str]:
    return [p.partition_name for p in admin.list_partitions(path)]


def scan_all(table: fw.Table, partition: str, buckets: int) -> Dict[Tuple[int, int], fw.ScannedRow]:
    """(bucket, offset) -> row, for every bucket of one partition."""
    out = {}
    for b in range(buckets):
        for r in table.scan(b, partition=partition):
            out[(b, r.offset)] = r
    return out


# ----------------------------------------------------------------------------------- codes


def test_partition_error_codes_are_named_server_codes() -> None:
    by_code = {code: (name, retriable) for name, code, retriable in fw.SERVER_CODES}
    assert by_code[36] == ("PARTITION_NOT_EXISTS", False)
    assert by_code[37] == ("TABLE_NOT_PARTITIONED_EXCEPTION", False)
    assert by_code[42] == ("PARTITION_ALREADY_EXISTS", False)
    assert by_code[43] == ("PARTITION_SPEC_INVALID_EXCEPTION", False)
    assert by_code[45] == ("PARTITION_MAX_NUM_EXCEPTION", False)


# ----------------------------------------------------------------------------------- DDL


def test_descriptor_takes_partition_keys_and_checks_them() -> None:
    d = log_descriptor()
    assert d.partition_keys == ["dt"] and d.bucket_keys == ["id"]
    assert "partition_keys=[\"dt\"]" in repr(d)
    assert fw.TableDescriptor(fw.Schema(LOG_COLUMNS)).partition_keys == []
    # The core's descriptor rules, at construction.
    with pytest.raises(fw.InvalidTableError, match='"nope"'):
        fw.TableDescriptor(fw.Schema(LOG_COLUMNS), partition_keys=["nope"])
    with pytest.raises(fw.InvalidTableError, match='"k"'):
        fw.TableDescriptor(fw.Schema([("k", "DECIMAL(5, 2)"), ("v", "INT")]), partition_keys=["k"])
    with pytest.raises(fw.InvalidTableError, match="primary key"):
        fw.TableDescriptor(fw.Schema(LOG_COLUMNS, primary_keys=["id"]), partition_keys=["dt"])
    with pytest.raises(fw.InvalidTableError, match="partition key"):
        fw.TableDescriptor(fw.Schema(LOG_COLUMNS), bucket_keys=["dt"], partition_keys=["dt"])
    with pytest.raises(TypeError):
        fw.TableDescriptor(fw.Schema(LOG_COLUMNS), partition_keys=[1])  # type: ignore[list-item]


def test_partition_ddl(target: Target) -> None:
    admin = target.conn.admin()
    path = target.create("pddl", log_descriptor())
    info = admin.get_table_info(path)
    assert info.partition_keys == ["dt"] and info.is_partitioned
    assert target.conn.get_table(path).info.partition_keys == ["dt"]
    assert admin.list_partitions(path) == []

    admin.create_partition(path, {"dt": "2026-12-03"})
    admin.create_partition(path, {"dt": "2026-12-04"}, ignore_if_exists=False)
    with pytest.raises(fw.ServerError) as e:
        admin.create_partition(path, {"dt": "2026-12-03"})
    assert e.value.code == PARTITION_ALREADY_EXISTS and e.value.code_name == "PARTITION_ALREADY_EXISTS"
    assert not e.value.retriable
    admin.create_partition(path, {"dt": "2026-12-03"}, ignore_if_exists=True)

    parts = admin.list_partitions(path)
    assert all(isinstance(p, fw.PartitionInfo) for p in parts)
    assert [p.partition_name for p in parts] == ["2026-12-03", "2026-12-04"]
    assert all(isinstance(p.partition_id, int) for p in parts)
    assert parts[0].partition_id != parts[1].partition_id
    assert parts[0].spec == {"dt": "2026-12-03"} and parts[1].spec == {"dt": "2026-12-04"}
    assert "2026-12-03" in repr(parts[0])
    # Path arguments take what the other Admin calls take.
    db, t = path.split(".")
    assert admin.list_partitions((db, t)) == parts == admin.list_partitions(fw.TablePath(db, t))

    # Bad specs: the key at fault is named; nothing is created.
    for bad, what in [({"day": "x"}, '"day"'), ({"dt": "a b"}, '"dt"'), ({}, '"dt"'), ({"dt": "__x"}, '"dt"')]:
        with pytest.raises(fw.InvalidTableError, match=what):
            admin.create_partition(path, bad)
    with pytest.raises(TypeError, match="dict"):
        admin.create_partition(path, [("dt", "x")])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="str"):
        admin.create_partition(path, {"dt": 20261203})  # type: ignore[dict-item]
    assert names(admin, path) == ["2026-12-03", "2026-12-04"]

    admin.drop_partition(path, {"dt": "2026-12-04"})
    with pytest.raises(fw.ServerError) as e:
        admin.drop_partition(path, {"dt": "2026-12-04"})
    assert e.value.code == PARTITION_NOT_EXISTS and e.value.code_name == "PARTITION_NOT_EXISTS"
    admin.drop_partition(path, {"dt": "2026-12-04"}, ignore_if_not_exists=True)
    assert names(admin, path) == ["2026-12-03"]
    # A recreated partition gets a new id.
    old = admin.list_partitions(path)[0].partition_id
    admin.drop_partition(path, {"dt": "2026-12-03"}, False)
    admin.create_partition(path, {"dt": "2026-12-03"}, False)
    assert admin.list_partitions(path)[0].partition_id != old

    # Reading a partitioned table names the partition; a missing one is PARTITION_NOT_EXISTS.
    table = target.conn.get_table(path)
    with pytest.raises(fw.InvalidTableError, match="name the partition"):
        table.scan(0)
    with pytest.raises(fw.ServerError) as e:
        table.scan(0, partition="2027-01-01")
    assert e.value.code == PARTITION_NOT_EXISTS
    assert table.scan(0, partition="2026-12-03") == []

    # Partition calls on a table without partition keys.
    plain = target.create("pplain", fw.TableDescriptor(fw.Schema(LOG_COLUMNS), bucket_count=1))
    assert not admin.get_table_info(plain).is_partitioned
    for call in (
        lambda: admin.list_partitions(plain),
        lambda: admin.create_partition(plain, {"dt": "x"}),
        lambda: admin.drop_partition(plain, {"dt": "x"}),
    ):
        with pytest.raises(fw.ServerError) as e:
            call()
        assert e.value.code == TABLE_NOT_PARTITIONED, e.value
    with pytest.raises(fw.InvalidTableError, match="not partitioned"):
        target.conn.get_table(plain).scan(0, partition="x")


# ----------------------------------------------------------------------------------- routing


def test_rows_are_routed_to_partitions_with_callbacks(target: Target) -> None:
    admin = target.conn.admin()
    path = target.create("proute", log_descriptor())
    admin.create_partition(path, {"dt": DAYS[0]})
    admin.create_partition(path, {"dt": DAYS[1]})
    table = target.conn.get_table(path)
    seen = Seen()
    n = 300
    with table.new_append().create_writer() as w:
        for i in range(n):
            w.append({"id": i, "dt": DAYS[i % 3], "msg": f"m{i}"}, callback=seen.cb(i))
        w.flush(60)
        got = seen.by_op()
        counted = {(b["partition"], b["bucket"]): b["records_sent"] for b in w.bucket_counts()}
    assert sorted(got) == list(range(n)), "every callback exactly once"
    # The writer's per-bucket metrics name each (partition, bucket) its callbacks reported.
    assert counted == dict(Counter((c.partition, c.bucket) for c in got.values()))

    ids = {p.partition_name: p.partition_id for p in admin.list_partitions(path)}
    assert sorted(ids) == DAYS, "the writer created the third partition"
    where: Dict[Tuple[str, int, int], int] = {}
    for i, c in got.items():
        assert c.ok, c.error
        assert c.partition == DAYS[i % 3], (i, c)
        assert c.partition_id == ids[c.partition]
        assert 0 <= c.bucket < 3 and c.offset >= 0
        assert c.table == path
        where[(c.partition, c.bucket, c.offset)] = i
    assert len(where) == n, "two rows reported at one place"

    # Every row is in the partition of its dt, at the place its callback reported, once.
    found = 0
    for day in DAYS:
        for (b, off), r in scan_all(table, day, 3).items():
            assert r.change_type == "+A" and r.row[1] == day
            assert where[(day, b, off)] == r.row[0], (day, b, off, r)
            assert r.row[2] == f"m{r.row[0]}"
            found += 1
            if target.engine is not None:
                assert r in target.engine.scan(path, b, off, partition=day)
        if target.engine is not None:
            assert sum(target.engine.high_watermark(path, b, partition=day) for b in range(3)) == n // 3
    assert found == n
    if target.engine is not None:
        assert target.engine.partition_names(path) == DAYS


def test_create_on_write_off(target: Target) -> None:
    off = target.with_config(NO_CREATE)
    conn = off.conn
    try:
        path = off.create("pnocreate", log_descriptor())
        admin = conn.admin()
        admin.create_partition(path, {"dt": "here"})
        table = conn.get_table(path)
        seen = Seen()
        w = table.new_append().create_writer()
        for i in range(100):
            w.append({"id": i, "dt": "here" if i % 2 == 0 else "missing", "msg": None}, callback=seen.cb(i))
        w.flush(60)
        got = seen.by_op()
        assert sorted(got) == list(range(100)), "every callback exactly once"
        for i, c in got.items():
            if i % 2 == 0:
                assert c.ok and c.partition == "here" and c.partition_id is not None, c
            else:
                assert not c.ok and c.partition == "missing", c
                assert c.error_code == PARTITION_NOT_EXISTS and c.error.code == PARTITION_NOT_EXISTS, c
                assert isinstance(c.error, fw.ServerError)
        time.sleep(0.2)
        assert len(seen.calls) == 100, "a callback ran again after the flush"
        assert names(admin, path) == ["here"], "a partition was created although create on write is off"
        assert sorted(r.row[0] for b in range(3) for r in table.scan(b, partition="here")) == list(range(0, 100, 2))

        # Once the partition exists, the same writer writes to it.
        admin.create_partition(path, {"dt": "missing"})
        deadline = time.monotonic() + 30
        while True:
            r = w.append({"id": 1000, "dt": "missing", "msg": None})
            w.flush(60)
            c = r.wait(10)
            if c.ok:
                break
            assert c.error_code == PARTITION_NOT_EXISTS, c
            assert time.monotonic() < deadline, "the created partition was never written"
            time.sleep(0.5)
        assert c.partition == "missing"
        assert c.partition_id == {p.partition_name: p.partition_id for p in admin.list_partitions(path)}["missing"]
        w.close()
    finally:
        conn.close(timeout=20)


# ----------------------------------------------------------------------------------- Arrow


def test_arrow_batches_across_partitions(target: Target) -> None:
    path = target.create("parrow", log_descriptor())
    table = target.conn.get_table(path)
    schema = pa.schema(table.info.schema.to_arrow())

    def columns(ids: range) -> Dict[str, Any]:
        return {"id": list(ids), "dt": [DAYS[i % 3] for i in ids], "msg": [f"a{i}" for i in ids]}

    def check_parts(c: fw.WriteCompletion, rows: int) -> None:
        assert c.ok, c.error
        parts = [(b.partition, b.bucket) for b in c.bucket_results]
        assert {p for p, _ in parts} == set(DAYS), c.bucket_results
        assert parts == sorted(parts), "bucket_results in (partition, bucket) order"
        assert sum(b.rows for b in c.bucket_results) == rows
        assert all(b.ok and b.base_offset >= 0 and 0 <= b.bucket < 3 for b in c.bucket_results)
        # The completion names the part of the batch's first row (every batch starts at a
        # multiple of 3: DAYS[0]).
        first = c.bucket_results[parts.index((c.partition, c.bucket))]
        assert c.partition == DAYS[0] and c.offset == first.base_offset
        assert "partition=" in repr(first)

    seen = Seen()
    with table.new_append().create_writer() as w:
        res = w.write_arrow_batch(pa.record_batch(columns(range(0, 30)), schema=schema))
        w.write_arrow_batch(pa.record_batch(columns(range(30, 60)), schema=schema), callback=seen.cb("batch"))
        tbl_results = w.write_arrow(pa.table(columns(range(60, 90)), schema=schema))
        pd_results = w.write_pandas(pd.DataFrame(columns(range(90, 120))))
        w.write_pandas(pd.DataFrame(columns(range(120, 150))), callback=seen.cb("pandas"))
        w.flush(60)
    check_parts(res.wait(10), 30)
    got = seen.by_op()
    check_parts(got["batch"], 30)
    check_parts(got["pandas"], 30)
    assert len(tbl_results) == 1 and len(pd_results) == 1
    check_parts(tbl_results[0].wait(10), 30)
    check_parts(pd_results[0].wait(10), 30)

    ids = []
    for day in DAYS:
        for r in scan_all(table, day, 3).values():
            assert r.row[1] == day and r.row[2] == f"a{r.row[0]}"
            ids.append(r.row[0])
    assert sorted(ids) == list(range(150))
    # The batch's per-bucket results say where its rows are.
    c = res.wait(10)
    for b in c.bucket_results:
        rows = [r for (bucket, off), r in scan_all(table, b.partition, 3).items()
                if bucket == b.bucket and b.base_offset <= off < b.base_offset + b.rows]
        assert len(rows) == b.rows and all(r.row[0] < 30 and r.row[1] == b.partition for r in rows), b


# ----------------------------------------------------------------------------------- primary keys


def test_partitioned_primary_key_table(target: Target) -> None:
    schema = fw.Schema(
        [("region", "STRING", False), ("day", "DATE", False), ("id", "INT", False), ("v", "STRING")],
        primary_keys=["region", "day", "id"],
    )
    path = target.create("ppk", fw.TableDescriptor(schema, bucket_count=2, partition_keys=["region", "day"]))
    table = target.conn.get_table(path)
    assert table.info.bucket_keys == ["id"], "the bucket key is the primary key without the partition keys"
    regions = ["eu", "us"]
    days = [dt.date(2025, 12, 3), dt.date(2025, 12, 4)]
    seen = Seen()
    with table.new_upsert().create_writer() as w:
        for r in regions:
            for d in days:
                for i in range(40):
                    w.upsert({"region": r, "day": d, "id": i, "v": f"{r}-{d}-{i}"}, callback=seen.cb((r, d, i)))
        # The same id in every partition; delete id 7 in one partition, update id 8 in another.
        w.delete({"region": "eu", "day": days[0], "id": 7}, callback=seen.cb("delete"))
        w.upsert(["us", days[1], 8, "updated"], callback=seen.cb("update"))
        w.flush(60)
    got = seen.by_op()
    assert len(got) == 162 and all(c.ok for c in got.values()), [c for c in got.values() if not c.ok][:3]
    assert {c.partition for c in got.values()} == {"eu$2025-12-03", "eu$2025-12-04", "us$2025-12-03", "us$2025-12-04"}
    assert got["delete"].partition == "eu$2025-12-03" and got["update"].partition == "us$2025-12-04"
    assert all(c.offset == -1 and c.log_end_offset > 0 for c in got.values())
    ids = {p.partition_name: p.partition_id for p in target.conn.admin().list_partitions(path)}
    assert all(c.partition_id == ids[c.partition] for c in got.values())

    for r in regions:
        for d in days:
            for i in (0, 7, 8, 39):
                row = table.lookup({"region": r, "day": d, "id": i})
                if (r, d, i) == ("eu", days[0], 7):
                    assert row is None
                elif (r, d, i) == ("us", days[1], 8):
                    assert row == (r, d, i, "updated")
                else:
                    assert row == (r, d, i, f"{r}-{d}-{i}")
                assert table.lookup([r, d, i]) == row
                if target.engine is not None:
                    assert target.engine.lookup(path, [r, d, i]) == row
    # A partition that does not exist holds no key.
    assert table.lookup({"region": "mars", "day": days[0], "id": 1}) is None

    # The changelog of two partitions.
    log = [r for b in range(2) for r in table.scan(b, partition="eu$2025-12-03")]
    assert sorted(r.change_type for r in log) == ["+I"] * 40 + ["-D"]
    assert [r.row for r in log if r.change_type == "-D"] == [("eu", days[0], 7, f"eu-{days[0]}-7")]
    log = [r for b in range(2) for r in table.scan(b, partition="us$2025-12-04")]
    assert [r.change_type for r in log if r.row[2] == 8] == ["+I", "-U", "+U"]


# ----------------------------------------------------------------------------------- bad values


@pytest.mark.parametrize("value", [None, "a b", "", "__sys", "x" * 201, "ü"])
def test_bad_partition_values_are_refused_synchronously(conn: fw.Connection, value: Optional[str]) -> None:
    conn.admin().create_table("fluss.pbad", log_descriptor())
    w = conn.get_table("fluss.pbad").new_append().create_writer()
    calls: List[Any] = []
    with pytest.raises(fw.InvalidRowError, match='"dt"'):
        w.append({"id": 1, "dt": value, "msg": "x"}, callback=calls.append)
    with pytest.raises(fw.InvalidRowError, match='"dt"'):
        w.append_detached([2, value, "x"])
    with pytest.raises(fw.InvalidRowError, match='"dt"'):
        w.append([3, value, "x"])
    # An Arrow batch with one bad row is refused as a whole.
    batch = pa.record_batch({"id": [4, 5], "dt": ["ok", value], "msg": ["a", "b"]},
                            schema=pa.schema(conn.get_table("fluss.pbad").info.schema.to_arrow()))
    with pytest.raises(fw.InvalidRowError, match="row 1"):
        w.write_arrow_batch(batch, callback=calls.append)
    assert w.stats()["pending_callbacks"] == 0
    w.flush(10)
    w.close()
    assert calls == []
    assert conn.admin().list_partitions("fluss.pbad") == [], "a refused row created a partition"
    assert testing.engine(conn).partition_names("fluss.pbad") == []


def test_bad_partition_key_of_a_primary_key_table(conn: fw.Connection) -> None:
    schema = fw.Schema([("region", "STRING", False), ("id", "INT", False), ("v", "STRING")], primary_keys=["region", "id"])
    conn.admin().create_table("fluss.pbadpk", fw.TableDescriptor(schema, bucket_count=1, partition_keys=["region"]))
    w = conn.get_table("fluss.pbadpk").new_upsert().create_writer()
    calls: List[Any] = []
    for op in (lambda: w.upsert({"region": "a/b", "id": 1, "v": "x"}, callback=calls.append),
               lambda: w.delete({"region": "a b", "id": 1}, callback=calls.append)):
        with pytest.raises(fw.InvalidRowError, match='"region"'):
            op()
    w.close()
    assert calls == [] and conn.admin().list_partitions("fluss.pbadpk") == []


# ----------------------------------------------------------------------------------- embedded engine


def test_a_standby_coordinator_is_followed(conn: fw.Connection, engine: testing.EmbeddedEngine) -> None:
    # Fluss 1.0 coordinator high availability: a standby refuses with NOT_COORDINATOR_LEADER
    # before processing; the client asks again (after looking for the leader) within the
    # request timeout, for DDL and for the partitions a writer creates.
    standby = CODES["NOT_COORDINATOR_LEADER_EXCEPTION"]
    path = "fluss.pstandby"
    engine.inject_coordinator_error(standby, "not the leader", times=2)
    assert engine.pending_coordinator_faults() == 2
    conn.admin().create_table(path, log_descriptor(buckets=1))
    assert engine.pending_coordinator_faults() == 0
    engine.inject_coordinator_error(standby, times=3)
    with conn.get_table(path).new_append().create_writer() as w:
        assert w.append({"id": 1, "dt": DAYS[0], "msg": "a"}).wait(10).ok
    assert engine.pending_coordinator_faults() == 0
    assert names(conn.admin(), path) == [DAYS[0]]
    # A leader that never answers: the DDL fails with the standby's code, once it gave up.
    with fw.connect("embedded", {"client.request-timeout": "300ms"}) as short:
        e2 = testing.engine(short)
        e2.inject_coordinator_error(standby, times=100_000)
        with pytest.raises(fw.FlussWriterError, match="no leader found") as err:
            short.admin().create_database("standby_only")
        assert err.value.code == standby
        assert 100_000 - e2.pending_coordinator_faults() >= 2, "asked again before giving up"
        e2.clear_faults()
        assert e2.pending_coordinator_faults() == 0


def test_engine_faults_per_partition(conn: fw.Connection, engine: testing.EmbeddedEngine) -> None:
    path = "fluss.pfaults"
    conn.admin().create_table(path, log_descriptor(buckets=1))
    for day in DAYS[:2]:
        conn.admin().create_partition(path, {"dt": day})
    # A non-retriable error for the first request to partition DAYS[0] only.
    invalid_table = CODES["INVALID_TABLE_EXCEPTION"]
    engine.inject_error(path, 0, invalid_table, "only this partition", times=1, partition=DAYS[0])
    assert engine.pending_faults(path, 0, partition=DAYS[0]) == 1
    assert engine.pending_faults(path, 0, partition=DAYS[1]) == 0
    assert engine.pending_faults(path, 0) == 0
    seen = Seen()
    with conn.get_table(path).new_append().create_writer() as w:
        w.append({"id": 1, "dt": DAYS[0], "msg": None}, callback=seen.cb(1))
        w.append({"id": 2, "dt": DAYS[1], "msg": None}, callback=seen.cb(2))
        w.flush(10)
        got = seen.by_op()
        assert got[1].error_code == invalid_table and got[1].partition == DAYS[0], got[1]
        assert got[2].ok and got[2].partition == DAYS[1], got[2]
        assert engine.pending_faults(path, 0, partition=DAYS[0]) == 0
        # A lost connection for the other partition's next request: retried, stored once.
        engine.inject_drop_connection(path, 0, after_apply=True, times=1, partition=DAYS[1])
        assert engine.pending_faults(path, 0, partition=DAYS[1]) == 1
        assert w.append({"id": 3, "dt": DAYS[1], "msg": None}).wait(10).ok
        assert engine.pending_faults(path, 0, partition=DAYS[1]) == 0
        # A delay on one partition: the other partition's write completes meanwhile. The delayed
        # answer comes 2 s after its request reached the engine; an attempt that took that long
        # (a busy machine stalled this process) may legitimately see it first and is repeated,
        # keeping the rows it wrote. A writer that makes the other partition wait fails them all.
        delay, attempts = 2.0, 0
        while attempts < 3:
            attempts += 1
            engine.inject_delay(path, 0, delay, partition=DAYS[0])
            t = time.monotonic()
            slow = w.append({"id": 4, "dt": DAYS[0], "msg": None})
            eventually(lambda: engine.pending_faults(path, 0, partition=DAYS[0]) == 0)  # slow's request is in
            fast = w.append({"id": 5, "dt": DAYS[1], "msg": None}).wait(10)
            slow_pending = not slow.done()
            if slow_pending or time.monotonic() - t < delay:
                break
        assert fast.ok and slow_pending, "the other partition waited for the delayed one"
        assert slow.wait(10).ok
    assert engine.high_watermark(path, 0, partition=DAYS[0]) == attempts
    assert engine.high_watermark(path, 0, partition=DAYS[1]) == 2 + attempts
    assert [r[2] for r in engine.scan(path, 0, partition=DAYS[1])] == [(2, DAYS[1], None), (3, DAYS[1], None)] + [
        (5, DAYS[1], None)
    ] * attempts
    with pytest.raises(fw.InvalidTableError, match="name the partition"):
        engine.scan(path, 0)
    with pytest.raises(fw.InvalidTableError, match="name the partition"):
        engine.high_watermark(path, 0)
    with pytest.raises(fw.ServerError) as e:
        engine.scan(path, 0, partition="2030-01-01")
    assert e.value.code == PARTITION_NOT_EXISTS


def test_idle_partitions_are_released() -> None:
    """``client.writer.partition-idle-timeout``: a partition idle that long no longer holds a lane
    (``stats()["open_partitions"]``); a later row for it opens one again."""
    idle_timeout = 0.25
    c = fw.connect("embedded", {**EMBEDDED_CONFIG, "client.writer.partition-idle-timeout": "250ms"})
    try:
        c.admin().create_table("fluss.pidle", log_descriptor())
        w = c.get_table("fluss.pidle").new_append().create_writer()
        done: list[fw.WriteCompletion] = []
        for i, day in enumerate(["d1", "d2", "d1"]):
            t = time.monotonic()
            w.append([i, day, "x"], callback=done.append)
            w.flush(10)
            open_now = w.stats()["open_partitions"]
            # Read within the idle timeout of the write, the lane must still be open; a longer
            # stall of this thread (a busy machine) may have released it already.
            if time.monotonic() - t < idle_timeout:
                assert open_now == 1
            else:
                assert open_now <= 1
            deadline = time.monotonic() + 10
            while w.stats()["open_partitions"] > 0 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert w.stats()["open_partitions"] == 0
        assert [d.error for d in done] == [None, None, None]
        assert sorted(d.partition for d in done) == ["d1", "d1", "d2"]
        w.close()
    finally:
        c.close(10)
