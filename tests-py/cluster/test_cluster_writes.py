"""Every Python write API against a real Fluss 0.9.1 cluster, read back with ``Table.scan`` /
``Table.lookup`` (the Fluss protocol) and compared row for row.

* Log tables (with and without a bucket key): ``append`` with a callback, ``append`` returning a
  ``WriteResult`` (``wait`` and ``await`` in asyncio), ``append_detached``, ``write_arrow_batch``
  with multi-bucket pyarrow batches (callback and WriteResult), ``write_pandas``. Every
  completion's bucket and offset must be where the record is scanned from.
* Primary-key tables (bucket key = primary key, and partial updates): ``upsert`` and ``delete``
  with callbacks and WriteResults, ``partial_update_by_name`` / ``partial_update_by_index``;
  read back by lookup and by scanning the changelog (+I, -U/+U, -D).

Every column type the binding writes is covered, with nulls. Collected only when
FLUSS_BOOTSTRAP_SERVERS is set (tests-py/conftest.py); each test is bounded by pytest-timeout.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
import uuid
from decimal import Decimal
from typing import Any, Dict, List, Optional, Tuple

import fluss_writer as fw
import pandas as pd
import pyarrow as pa
import pytest
from cluster.support import create_table

pytestmark = pytest.mark.timeout(60)

UTC = dt.timezone.utc

COLUMNS: List[Tuple[str, str, bool]] = [
    ("id", "INT", False),
    ("region", "STRING", True),
    ("b", "BOOLEAN", True),
    ("ti", "TINYINT", True),
    ("si", "SMALLINT", True),
    ("bi", "BIGINT", True),
    ("f", "FLOAT", True),
    ("d", "DOUBLE", True),
    ("s", "STRING", True),
    ("by", "BYTES", True),
    ("dec10", "DECIMAL(10, 2)", True),
    ("dec28", "DECIMAL(28, 6)", True),
    ("dt", "DATE", True),
    ("tm", "TIME(3)", True),
    ("ts3", "TIMESTAMP(3)", True),
    ("ts6", "TIMESTAMP(6)", True),
    ("ltz", "TIMESTAMP_LTZ(6)", True),
]
NAMES = [c[0] for c in COLUMNS]
REGIONS = ["eu", "us", "apac", "latam", "mea"]


def row_for(id_: int, version: int = 0) -> Tuple[Any, ...]:
    """A deterministic row of ``id_`` in ``version``; column ``c`` (>= 2) is null when
    ``(id + version + c) % 6 == 0``, so every column sees nulls. Values are exact at the
    column's precision (and as Python values: floats are multiples of 0.25)."""
    v = id_ * 7919 + version * 1_000_003
    neg = -1 if id_ % 11 == 0 else 1
    r: List[Any] = [
        id_,
        REGIONS[id_ % len(REGIONS)],
        v % 2 == 0,
        v % 256 - 128,
        v % 65_536 - 32_768,
        neg * v * 1_000_000_007,
        neg * (v % 100_000) * 0.25,
        neg * v / 3.0,
        f"s-{id_}-{version}-ünïcødé-{'x' * (id_ % 40)}",
        bytes(((i * 37 + version) & 0xFF) ^ 0x80 for i in range(id_ % 17)),
        Decimal(neg * (v * 101 % 9_999_999_999)).scaleb(-2),
        Decimal(neg * (v * 1_000_000_000_000_007 % 9_999_999_999_999_999_999_999_999_999)).scaleb(-6),
        dt.date(1970, 1, 1) + dt.timedelta(days=neg * (18_000 + id_)),
        (dt.datetime(2000, 1, 1) + dt.timedelta(milliseconds=(v * 1_237) % 86_400_000)).time(),
        dt.datetime(2023, 11, 14) + dt.timedelta(milliseconds=neg * v * 13),
        dt.datetime(2023, 11, 14) + dt.timedelta(microseconds=neg * v * 1_301),
        dt.datetime(2020, 9, 13, tzinfo=UTC) + dt.timedelta(microseconds=neg * v * 977),
    ]
    for c in range(2, len(r)):
        if (id_ + version + c) % 6 == 0:
            r[c] = None
    return tuple(r)


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def create(conn: fw.Connection, db: str, prefix: str, *, buckets: int, pk: Optional[List[str]] = None,
           bucket_keys: Optional[List[str]] = None) -> fw.Table:
    desc = fw.TableDescriptor(fw.Schema(COLUMNS, primary_keys=pk), bucket_count=buckets, bucket_keys=bucket_keys)
    return conn.get_table(create_table(conn, lambda: f"{db}.{unique(prefix)}", desc))


def arrow_batch(table: fw.Table, rows: List[Tuple[Any, ...]]) -> pa.RecordBatch:
    schema = pa.schema(table.info.schema.to_arrow())
    return pa.RecordBatch.from_pylist([dict(zip(NAMES, r)) for r in rows], schema=schema)


class Seen:
    """Per id: the completions its callback saw (thread-safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_id: Dict[int, List[fw.WriteCompletion]] = {}

    def cb(self, id_: int) -> Any:
        def on_done(c: fw.WriteCompletion) -> None:
            with self.lock:
                self.by_id.setdefault(id_, []).append(c)

        return on_done


def scan_all(table: fw.Table) -> List[Tuple[int, fw.ScannedRow]]:
    """``(bucket, record)`` for every record of every bucket."""
    return [(b, rec) for b in range(table.info.bucket_count) for rec in table.scan(b)]


def check_arrow(c: fw.WriteCompletion, rows: List[Tuple[Any, ...]], bucket_of: Dict[int, int],
                where: Dict[int, Tuple[int, int]], keyed: bool) -> None:
    """Rows of each bucket keep their input order, from that bucket's base offset on."""
    assert c.ok, c.error
    assert sum(br.rows for br in c.bucket_results) == len(rows), c.bucket_results
    if keyed:
        assert len(c.bucket_results) > 1, f"a keyed batch of {len(rows)} rows spans several buckets"
    for br in c.bucket_results:
        assert br.ok and br.base_offset >= 0, br
        ids = [r[0] for r in rows if bucket_of[r[0]] == br.bucket]
        assert len(ids) == br.rows, f"rows of bucket {br.bucket}: {len(ids)} scanned there, {br.rows} reported"
        for i, id_ in enumerate(ids):
            where[id_] = (br.bucket, br.base_offset + i)


async def _append_async(w: fw.AppendWriter, rows: List[Tuple[Any, ...]]) -> List[fw.WriteCompletion]:
    results = [w.append(r) for r in rows]
    return list(await asyncio.gather(*results))


@pytest.mark.parametrize("keyed", [True, False], ids=["bucket_key", "no_bucket_key"])
def test_log_table_every_append_api(cluster_conn: fw.Connection, cluster_db: str, keyed: bool) -> None:
    table = create(cluster_conn, cluster_db, "log_k" if keyed else "log", buckets=3,
                   bucket_keys=["region", "id"] if keyed else None)
    expected = {i: row_for(i) for i in range(700)}
    seen = Seen()
    w = table.new_append().create_writer()
    for i in range(0, 200):
        w.append(expected[i], callback=seen.cb(i))
    waited = [(i, w.append(expected[i])) for i in range(200, 250)]
    waited_c = [(i, r.wait(30)) for i, r in waited]
    awaited = asyncio.run(asyncio.wait_for(_append_async(w, [expected[i] for i in range(250, 300)]), 30))
    for i in range(300, 350):
        w.append_detached(expected[i])
    arrow_rows = [[expected[i] for i in range(a, b)] for a, b in [(350, 500), (500, 600)]]
    arrow_seen: List[fw.WriteCompletion] = []
    w.write_arrow_batch(arrow_batch(table, arrow_rows[0]), callback=arrow_seen.append)
    arrow_result = w.write_arrow_batch(arrow_batch(table, arrow_rows[1]))
    df = pd.DataFrame([list(expected[i]) for i in range(600, 700)], columns=NAMES, dtype=object)
    pandas_results = w.write_pandas(df)
    w.flush(45)

    # Read back, then check every completion against where its record is.
    scanned = scan_all(table)
    assert len(scanned) == len(expected), f"{len(scanned)} records in the table, {len(expected)} written"
    found: Dict[int, Tuple[int, int]] = {}
    for b, rec in scanned:
        id_ = rec.row[0]
        assert id_ not in found, f"id {id_} twice: {found[id_]} and {(b, rec.offset)}"
        found[id_] = (b, rec.offset)
        assert rec.change_type == "+A", rec
        assert rec.row == expected[id_], f"id {id_} at bucket {b} offset {rec.offset}"
    bucket_of = {i: bo[0] for i, bo in found.items()}
    if keyed:  # same key, same bucket: ids with equal (region, id) are unique, so check spread
        assert len(set(bucket_of.values())) == 3, "a keyed table uses every bucket"

    where: Dict[int, Tuple[int, int]] = {}
    with seen.lock:
        assert sorted(seen.by_id) == list(range(200)), "every append callback ran"
        for i, cs in seen.by_id.items():
            assert len(cs) == 1, f"callback of {i} ran {len(cs)} times"
            assert cs[0].ok, cs[0].error
            where[i] = (cs[0].bucket, cs[0].offset)
    for i, c in waited_c + list(zip(range(250, 300), awaited)):
        assert c.ok, c.error
        where[i] = (c.bucket, c.offset)
    assert len(arrow_seen) == 1
    check_arrow(arrow_seen[0], arrow_rows[0], bucket_of, where, keyed)
    c = arrow_result.try_get()
    assert c is not None
    check_arrow(c, arrow_rows[1], bucket_of, where, keyed)
    df_rows = [expected[i] for i in range(600, 700)]
    pandas_done = [r.try_get() for r in pandas_results]
    assert all(x is not None for x in pandas_done)
    # write_pandas splits the frame into Arrow batches; rows keep their order across them.
    start = 0
    for pc in pandas_done:
        assert pc is not None
        n = sum(br.rows for br in pc.bucket_results)
        check_arrow(pc, df_rows[start:start + n], bucket_of, where, keyed=False)
        start += n
    assert start == len(df_rows)
    assert len(where) == 650, "completions told where every non-detached record went"
    for i, bo in where.items():
        assert found[i] == bo, f"id {i}: the completion said (bucket, offset) {bo}, scanned at {found[i]}"
    w.close(20)


def _upsert_model(model: Dict[int, List[Tuple[str, Tuple[Any, ...]]]], current: Dict[int, Tuple[Any, ...]],
                  row: Tuple[Any, ...]) -> None:
    id_ = row[0]
    ch = model.setdefault(id_, [])
    if id_ in current:
        ch += [("-U", current[id_]), ("+U", row)]
    else:
        ch.append(("+I", row))
    current[id_] = row


def test_pk_table_upsert_delete_partial_update(cluster_conn: fw.Connection, cluster_db: str) -> None:
    table = create(cluster_conn, cluster_db, "pk", buckets=3, pk=["id"])
    model: Dict[int, List[Tuple[str, Tuple[Any, ...]]]] = {}
    current: Dict[int, Tuple[Any, ...]] = {}
    seen = Seen()
    w = table.new_upsert().create_writer()
    ops: List[Tuple[int, str, Any]] = []  # (id, what, WriteResult)

    # Inserts (callbacks), updates (WriteResults), deletes (both forms).
    for i in range(150):
        r = row_for(i, 0)
        w.upsert(r, callback=seen.cb(i))
        _upsert_model(model, current, r)
    for i in range(0, 150, 3):
        r = row_for(i, 1)
        ops.append((i, "update", w.upsert(list(r) if i % 2 else dict(zip(NAMES, r)))))
        _upsert_model(model, current, r)
    for i in range(1, 150, 10):
        w.delete([i], callback=seen.cb(1000 + i))
        model[i].append(("-D", current.pop(i)))
    for i in range(2, 150, 10):
        ops.append((i, "delete", w.delete({"id": i})))
        model[i].append(("-D", current.pop(i)))
    w.flush(45)

    # Partial updates: by name (s, dec10) and by index (b, ltz); the other columns keep their values.
    by_name = table.new_upsert().partial_update_by_name(["id", "s", "dec10"]).create_writer()
    by_index = table.new_upsert().partial_update_by_index([0, NAMES.index("b"), NAMES.index("ltz")]).create_writer()
    partial_seen = Seen()
    for i in range(3, 150, 7):
        if i not in current:
            continue
        src = row_for(i, 5)
        new = list(current[i])
        new[NAMES.index("s")] = src[NAMES.index("s")]
        new[NAMES.index("dec10")] = src[NAMES.index("dec10")]
        by_name.upsert({"id": i, "s": new[NAMES.index("s")], "dec10": new[NAMES.index("dec10")]},
                       callback=partial_seen.cb(i))
        _upsert_model(model, current, tuple(new))
    by_name.flush(45)
    for i in range(4, 150, 7):
        if i not in current:
            continue
        src = row_for(i, 6)
        new = list(current[i])
        new[NAMES.index("b")] = src[NAMES.index("b")]
        new[NAMES.index("ltz")] = src[NAMES.index("ltz")]
        full = [None] * len(NAMES)
        full[0], full[NAMES.index("b")], full[NAMES.index("ltz")] = i, new[NAMES.index("b")], new[NAMES.index("ltz")]
        ops.append((i, "partial", by_index.upsert(full)))
        _upsert_model(model, current, tuple(new))
    by_index.flush(45)

    # Completions: exactly once, all OK.
    with seen.lock:
        assert len(seen.by_id) == 150 + 15
        assert all(len(cs) == 1 and cs[0].ok for cs in seen.by_id.values()), seen.by_id
    with partial_seen.lock:
        assert partial_seen.by_id and all(len(cs) == 1 and cs[0].ok for cs in partial_seen.by_id.values())
    for i, what, res in ops:
        c = res.try_get()
        assert c is not None and c.ok, (i, what, c and c.error)

    # Lookup: every id (deleted ones absent), by list and by dict.
    for i in range(150):
        got = table.lookup([i]) if i % 2 else table.lookup({"id": i})
        assert got == current.get(i), f"lookup of id {i}"
    assert table.lookup([10_000]) is None

    # The changelog, per id in order.
    per_id: Dict[int, List[Tuple[str, Tuple[Any, ...]]]] = {}
    buckets_of: Dict[int, int] = {}
    for b, rec in scan_all(table):
        per_id.setdefault(rec.row[0], []).append((rec.change_type, rec.row))
        assert buckets_of.setdefault(rec.row[0], b) == b, f"id {rec.row[0]} in two buckets"
    for i in range(150):
        assert per_id.get(i) == model[i], f"changelog of id {i}"
    # Callbacks of upserts carry the bucket the key lives in.
    with seen.lock:
        for i in range(150):
            assert seen.by_id[i][0].bucket == buckets_of[i], f"id {i}"
    for w_ in (w, by_name, by_index):
        w_.close(20)


def test_pk_table_bucket_key_subset_of_primary_key(cluster_conn: fw.Connection, cluster_db: str) -> None:
    table = create(cluster_conn, cluster_db, "pk2", buckets=3, pk=["region", "id"], bucket_keys=["region"])
    w = table.new_upsert().create_writer()
    rows = [row_for(i, 0) for i in range(60)]
    results = [w.upsert(r) for r in rows]
    w.delete([rows[7][1], 7])
    w.flush(45)
    for r, res in zip(rows, results):
        c = res.try_get()
        assert c is not None and c.ok
        assert table.lookup([r[1], r[0]]) == (None if r[0] == 7 else r)
        assert table.lookup({"region": r[1], "id": r[0]}) == (None if r[0] == 7 else r)
    # Rows of one region share a bucket.
    region_bucket: Dict[str, int] = {}
    for b, rec in scan_all(table):
        assert region_bucket.setdefault(rec.row[1], b) == b, f"region {rec.row[1]} in two buckets"
    w.close(20)


def test_readback_errors(cluster_conn: fw.Connection, cluster_db: str) -> None:
    log = create(cluster_conn, cluster_db, "err", buckets=1)
    assert log.scan(0) == []
    with pytest.raises(fw.UnsupportedError):
        log.lookup([1])
    with pytest.raises(fw.InvalidRowError):
        log.scan(5)
