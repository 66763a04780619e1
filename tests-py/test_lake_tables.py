"""Tables with a datalake format (issue 13, part 3) through the Python API, on the embedded engine
and, with FLUSS_BOOTSTRAP_SERVERS set, on the real Fluss 0.9.1 cluster.

The key bytes and buckets themselves are the Rust core's (held to Fluss's Java classes by
``rust/core/tests/cluster_interop_java.rs``); these tests show that a table's
``table.datalake.format`` property reaches that rule from Python, and that what the rule refuses
surfaces as the documented exceptions:

* paimon and iceberg primary-key tables place the same keys differently from a table without a
  lake (callbacks report the bucket), lance places them like no lake; every key is found by
  lookup, and Arrow rows land where single rows of the same key do;
* an iceberg table whose key has two columns is created, but its writer is refused
  (InvalidTableError naming the reason); an empty iceberg key is refused synchronously
  (InvalidRowError), nothing written;
* ``table.datalake.enabled = true`` on a cluster without a lake: the server's INVALID_TABLE (15).
* hudi (Fluss 1.0; embedded engine only, as 0.9.1 does not know the format): every key lands in
  the bucket of Hudi's rule, recomputed here from the rule's definition (the Java hash of the
  key's decimal string as a one-element ``List<String>``), and is found by lookup.
"""

from __future__ import annotations

import uuid
from typing import Dict, Optional, Tuple

import fluss_writer as fw
import pyarrow as pa
import pytest
from targets import Target

pytestmark = pytest.mark.timeout(120)

INVALID_TABLE = {name: code for name, code, _ in fw.SERVER_CODES}["INVALID_TABLE_EXCEPTION"]
BUCKETS = 4
KEYS = list(range(-40, 40))


def descriptor(fmt: Optional[str], primary_keys: Tuple[str, ...] = ("k",)) -> fw.TableDescriptor:
    schema = fw.Schema([("k", "INT", False), ("s", "STRING", False), ("v", "STRING")], primary_keys=list(primary_keys))
    props = {"table.datalake.format": fmt} if fmt else {}
    return fw.TableDescriptor(schema, bucket_count=BUCKETS, properties=props)


def placements(target: Target, fmt: Optional[str]) -> Dict[int, int]:
    """Upsert KEYS into a fresh primary-key table of format ``fmt``; return each key's bucket as
    its callback reported it, after checking that lookups find every key."""
    path = target.create(f"lake_{fmt or 'none'}", descriptor(fmt))
    table = target.conn.get_table(path)
    done: Dict[int, fw.WriteCompletion] = {}
    with table.new_upsert().create_writer() as w:
        for k in KEYS:
            w.upsert({"k": k, "s": f"s{k}", "v": "row"}, callback=lambda c, k=k: done.setdefault(k, c))
        w.flush(60)
    assert len(done) == len(KEYS) and all(c.ok for c in done.values()), [c for c in done.values() if not c.ok][:3]
    for k in KEYS:
        assert table.lookup([k]) == (k, f"s{k}", "row"), (fmt, k)
    return {k: c.bucket for k, c in done.items()}


def log_placements(target: Target, fmt: Optional[str]) -> Dict[int, int]:
    """Append KEYS as rows, then again as one Arrow batch, into a fresh log table keyed by ``k``
    of format ``fmt``; check that the Arrow rows land in the buckets of the same keys' rows, and
    return each key's bucket."""
    schema = fw.Schema([("k", "INT", False), ("s", "STRING", False), ("v", "STRING")])
    props = {"table.datalake.format": fmt} if fmt else {}
    path = target.create(
        f"lakelog_{fmt or 'none'}", fw.TableDescriptor(schema, bucket_count=BUCKETS, bucket_keys=["k"], properties=props)
    )
    table = target.conn.get_table(path)
    done: Dict[int, fw.WriteCompletion] = {}
    with table.new_append().create_writer() as w:
        for k in KEYS:
            w.append([k, f"s{k}", "row"], callback=lambda c, k=k: done.setdefault(k, c))
        batch = pa.RecordBatch.from_pydict(
            {"k": pa.array(KEYS, pa.int32()), "s": [f"s{k}" for k in KEYS], "v": ["arrow"] * len(KEYS)},
            schema=pa.schema([pa.field("k", pa.int32(), False), pa.field("s", pa.string(), False), pa.field("v", pa.string())]),
        )
        arrow = w.write_arrow_batch(batch).wait(60)
        w.flush(60)
    assert arrow.ok, arrow
    assert len(done) == len(KEYS) and all(c.ok for c in done.values())
    buckets = {k: c.bucket for k, c in done.items()}
    assert {b.bucket for b in arrow.bucket_results} == set(buckets.values())
    for b in range(BUCKETS):
        for r in table.scan(b):
            assert buckets[r.row[0]] == b, (fmt, r.row, b)
    return buckets


def test_lake_formats_place_keys_by_their_rule(target: Target) -> None:
    none = placements(target, None)
    paimon = placements(target, "paimon")
    iceberg = placements(target, "ICEBERG")
    lance = placements(target, "lance")
    assert lance == none, "lance keys and buckets like a table without a lake"
    for name, got in (("paimon", paimon), ("iceberg", iceberg)):
        moved = sum(got[k] != none[k] for k in KEYS)
        assert moved > len(KEYS) // 2, f"{name} must place most keys elsewhere than Fluss's rule ({moved} of {len(KEYS)})"
    assert paimon != iceberg
    log_none = log_placements(target, None)
    log_paimon = log_placements(target, "paimon")
    assert log_none == none and log_paimon == paimon, "a log table's bucket key buckets like the same primary key"


def test_keys_a_lake_format_cannot_bucket_are_refused(target: Target) -> None:
    path = target.create("lake_ice2", descriptor("iceberg", ("k", "s")))
    table = target.conn.get_table(path)
    with pytest.raises(fw.InvalidTableError, match="exactly one column"):
        table.new_upsert().create_writer()

    schema = fw.Schema([("s", "STRING", False), ("v", "STRING")], primary_keys=["s"])
    path = target.create("lake_ices", fw.TableDescriptor(schema, properties={"table.datalake.format": "iceberg"}))
    table = target.conn.get_table(path)
    with table.new_upsert().create_writer() as w:
        with pytest.raises(fw.InvalidRowError, match="empty"):
            w.upsert(["", "x"])
        w.upsert(["a", "x"]).wait(30)
    assert sum(len(table.scan(b)) for b in range(table.info.bucket_count)) == 1

    with pytest.raises(fw.ServerError) as e:
        target.conn.admin().create_table(
            f"{target.db}.lake_on_{uuid.uuid4().hex[:10]}",
            fw.TableDescriptor(schema, properties={"table.datalake.enabled": "true"}),
        )
    assert e.value.code == INVALID_TABLE and "table.datalake.enabled" in e.value.message


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    units = s.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def hudi_bucket(values: Tuple[str, ...], buckets: int) -> int:
    """Hudi's bucket (Fluss 1.0 HudiBucketingFunction) of key values in their Java string form."""
    h = 1
    for v in values:
        h = (31 * h + java_string_hash(v)) & 0xFFFFFFFF
    return (h & 0x7FFFFFFF) % buckets


def test_hudi_places_keys_by_hudis_rule(target_1_0: Target) -> None:
    """HUDI is a Fluss 1.0 lake format: the embedded engine and the 1.0-line cluster (0.9.1 has none)."""
    target = target_1_0
    hudi = placements(target, "hudi")
    none = placements(target, None)
    assert hudi == {k: hudi_bucket((str(k),), BUCKETS) for k in KEYS}
    assert sum(hudi[k] != none[k] for k in KEYS) > len(KEYS) // 2, "hudi must place most keys elsewhere than Fluss's rule"
    # Two key columns: the key is the list of both strings.
    path = target.create("lake_hudi2", descriptor("hudi", ("s", "k")))
    table = target.conn.get_table(path)
    done: Dict[int, fw.WriteCompletion] = {}
    with table.new_upsert().create_writer() as w:
        for k in KEYS:
            w.upsert({"k": k, "s": f"s{k}é", "v": "row"}, callback=lambda c, k=k: done.setdefault(k, c))
        with pytest.raises(fw.InvalidRowError, match="','"):
            w.upsert({"k": 1, "s": "a,b", "v": "row"})
        w.flush(60)
    assert all(c.ok for c in done.values()) and len(done) == len(KEYS)
    assert {k: c.bucket for k, c in done.items()} == {k: hudi_bucket((f"s{k}é", str(k)), BUCKETS) for k in KEYS}
