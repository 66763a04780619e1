"""CHAR(n) and BINARY(n) columns (issue 13, part 1; issue 27) through the Python API, on the embedded
engine and, with FLUSS_BOOTSTRAP_SERVERS set, on the real cluster: ``str`` values for CHAR (not
padded; more than n characters, counted as Unicode code points, raises InvalidRowError naming the
column, for rows and Arrow batches, at any depth, and nothing is written), ``bytes`` /
``bytearray`` of exactly n bytes for BINARY (another length raises InvalidRowError naming the
column), pyarrow ``fixed_size_binary`` and ``binary`` columns, and lookups by such keys."""

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
        w.append({"k": 1, "c": "日本語", "b": bytearray(b"wxyz")})
        for long in ["abcd", "longer than three", "😀😀😀😀"]:
            with pytest.raises(fw.InvalidRowError, match=r'column "c" is CHAR\(3\) but the value has (4|17) characters'):
                w.append([9, long, None])
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
        long = pa.RecordBatch.from_pydict(
            {"k": pa.array([8, 9], pa.int32()), "c": ["ok", "abcd"], "b": pa.array([b"1234", b"5678"], pa.binary(4))}
        )
        with pytest.raises(fw.InvalidRowError, match=r'column "c" is CHAR\(3\) but the value in batch row 1 has 4 characters'):
            w.write_arrow_batch(long)
        w.flush(30)
    rows = [r.row for r in table.scan(0)]
    assert rows == [
        (0, "ab", b"\x00\x01\x02\x03"),
        (1, "日本語", b"wxyz"),
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


def test_char_inside_nested_types_is_checked_too(target: Target) -> None:
    schema = fw.Schema([("k", "INT", False), ("n", "ARRAY<ROW<c CHAR(2)>>"), ("m", "MAP<CHAR(1), STRING>")])
    path = target.create("cb_nested", fw.TableDescriptor(schema, bucket_count=1))
    table = target.conn.get_table(path)
    with table.new_append().create_writer() as w:
        with pytest.raises(fw.InvalidRowError, match=r'column "n"\[1\]\.c is CHAR\(2\) but the value has 3 characters'):
            w.append([0, [{"c": "ab"}, {"c": "abc"}], None])
        with pytest.raises(fw.InvalidRowError, match=r'column "m" key 0 is CHAR\(1\) but the value has 2 characters'):
            w.append([0, None, {"xy": "v"}])
        arrow = pa.schema(table.info.schema.to_arrow())
        rows = [{"k": 1, "n": [{"c": "é"}], "m": None}, {"k": 2, "n": [None, {"c": "abc"}], "m": None}]
        batch = pa.RecordBatch.from_pylist(rows, schema=arrow)
        with pytest.raises(fw.InvalidRowError, match=r'column "n"\[1\]\.c is CHAR\(2\) but the value in batch row 1 has 3'):
            w.write_arrow_batch(batch)
        # Nothing of the refused rows and batch was written: the next row is the first.
        assert w.append([3, [{"c": "ab"}], {"x": "v"}]).wait(30).offset == 0
    assert [r.row for r in table.scan(0)] == [(3, [("ab",)], {"x": "v"})]
