"""CHAR(n) and BINARY(n) columns (issue 13, part 1) through the Python API, on the embedded engine
and, with FLUSS_BOOTSTRAP_SERVERS set, on the real cluster: ``str`` values for CHAR (neither padded
nor checked against n, as Fluss's Java client does), ``bytes`` / ``bytearray`` of exactly n bytes
for BINARY (another length raises InvalidRowError naming the column), pyarrow ``fixed_size_binary``
and ``binary`` columns, and lookups by such keys."""

from __future__ import annotations

import fluss_writer as fw
import pyarrow as pa
import pytest
from targets import Target

pytestmark = pytest.mark.timeout(120)


def test_char_and_binary_columns(target: Target) -> None:
    schema = fw.Schema([("k", "INT", False), ("c", "CHAR(3)"), ("b", "BINARY(4)")])
    assert schema.columns == [("k", "INT", False), ("c", "CHAR(3)", True), ("b", "BINARY(4)", True)]
    path = target.create("cb_log", fw.TableDescriptor(schema, bucket_count=1))
    table = target.conn.get_table(path)
    assert table.info.schema.columns == schema.columns
    with table.new_append().create_writer() as w:
        w.append([0, "ab", b"\x00\x01\x02\x03"])
        w.append({"k": 1, "c": "longer than three", "b": bytearray(b"wxyz")})
        w.append([2, None, None])
        with pytest.raises(fw.InvalidRowError, match=r'"b" is BINARY\(4\) but the value has 3 bytes'):
            w.append([3, "x", b"abc"])
        fixed = pa.RecordBatch.from_pydict(
            {"k": pa.array([4, 5], pa.int32()), "c": ["p", "q"], "b": pa.array([b"1234", b"5678"], pa.binary(4))}
        )
        w.write_arrow_batch(fixed).wait(30).raise_for_error()
        variable = pa.RecordBatch.from_pydict({"k": pa.array([6], pa.int32()), "c": ["r"], "b": pa.array([b"abcd"], pa.binary())})
        w.write_arrow_batch(variable).wait(30).raise_for_error()
        wrong = pa.RecordBatch.from_pydict({"k": pa.array([7], pa.int32()), "c": ["s"], "b": pa.array([b"abcde"], pa.binary())})
        with pytest.raises(fw.InvalidRowError):
            w.write_arrow_batch(wrong)
        w.flush(30)
    rows = [r.row for r in table.scan(0)]
    assert rows == [
        (0, "ab", b"\x00\x01\x02\x03"),
        (1, "longer than three", b"wxyz"),
        (2, None, None),
        (4, "p", b"1234"),
        (5, "q", b"5678"),
        (6, "r", b"abcd"),
    ]


def test_char_and_binary_keys(target: Target) -> None:
    schema = fw.Schema([("c", "CHAR(4)", False), ("b", "BINARY(2)", False), ("v", "STRING")], primary_keys=["c", "b"])
    path = target.create("cb_pk", fw.TableDescriptor(schema, bucket_count=3))
    table = target.conn.get_table(path)
    with table.new_upsert().create_writer() as w:
        for i in range(20):
            w.upsert([f"k{i}", i.to_bytes(2, "big"), f"v{i}"])
        w.delete([f"k{3}", (3).to_bytes(2, "big")])
        w.flush(30)
    for i in range(20):
        got = table.lookup([f"k{i}", i.to_bytes(2, "big")])
        assert got == (None if i == 3 else (f"k{i}", i.to_bytes(2, "big"), f"v{i}"))
