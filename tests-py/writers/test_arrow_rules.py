"""Arrow input follows the core's rules, whatever form it comes in (issue 11):

* defect 3: a column the table lacks is INVALID_ROW naming it, nothing accepted, for DataFrames,
  pyarrow Tables, RecordBatches, streams and polars frames (the binding drops no column itself);
* defect 8: with ``client.writer.batch-size`` 64kb, a row over the batch size inside a batch
  rejects the whole call with RECORD_TOO_LARGE, nothing accepted; per-row sizes, not the average,
  decide how a batch is split.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import fluss_writer as fw
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from fluss_writer import testing
from helpers import Recorder, make_table

EXTRA = "surplus_col"


def _stream(d: dict) -> pa.RecordBatchReader:
    t = pa.table(d)
    return pa.RecordBatchReader.from_batches(t.schema, t.to_batches())


def _forms() -> list:
    return [
        ("write_pandas", "DataFrame", lambda w, d, cb: w.write_pandas(pd.DataFrame(d), callback=cb)),
        ("write_arrow", "pyarrow.Table", lambda w, d, cb: w.write_arrow(pa.table(d), callback=cb)),
        ("write_arrow_batch", "RecordBatch", lambda w, d, cb: w.write_arrow_batch(pa.RecordBatch.from_pydict(d), callback=cb)),
        ("write_arrow", "Table as one batch", lambda w, d, cb: w.write_arrow_batch(pa.table(d), callback=cb)),
        ("write_arrow", "RecordBatchReader", lambda w, d, cb: w.write_arrow(_stream(d), callback=cb)),
        ("write_arrow", "polars.DataFrame", lambda w, d, cb: w.write_arrow(pl.DataFrame(d), callback=cb)),
    ]


FORMS = _forms()
IDS = [f"{m}-{k}" for m, k, _ in FORMS]


@pytest.mark.parametrize("callback", [True, False], ids=["callback", "result"])
@pytest.mark.parametrize("where", ["last", "first", "middle"])
@pytest.mark.parametrize("form", FORMS, ids=IDS)
def test_a_column_the_table_lacks_is_an_invalid_row_naming_it(conn, engine, form, where, callback) -> None:
    name = make_table(conn, buckets=2)
    w = conn.get_table(name).new_append().create_writer()
    rec = Recorder()
    data = {"id": [1, 2, 3], "msg": ["a", "b", "c"]}
    extra = {EXTRA: [7, 8, 9]}
    if where == "last":
        d = {**data, **extra}
    elif where == "first":
        d = {**extra, **data}
    else:
        d = {"id": data["id"], **extra, "msg": data["msg"]}
    with pytest.raises(fw.InvalidRowError, match=EXTRA) as info:
        form[2](w, d, rec if callback else None)
    assert info.value.code_name == "INVALID_ROW"
    w.flush(10)
    assert rec.items == []
    assert w.stats()["pending_callbacks"] == 0
    assert [engine.high_watermark(name, b) for b in (0, 1)] == [0, 0]
    assert engine.stats()["records_accepted"] == 0
    # Without the extra column the same data is written.
    form[2](w, data, None)
    w.flush(10)
    assert sorted(r[2] for b in (0, 1) for r in engine.scan(name, b)) == [(1, "a"), (2, "b"), (3, "c")]


def test_a_dataframe_in_another_column_order_is_still_written(conn, engine) -> None:
    name = make_table(conn)
    w = conn.get_table(name).new_append().create_writer()
    w.write_pandas(pd.DataFrame({"msg": ["a", "b"], "id": [1, 2]}))
    w.flush(10)
    assert [r[2] for r in engine.scan(name, 0)] == [(1, "a"), (2, "b")]


# ----- defect 8: per-row sizes -----

BIG = 100_000


@pytest.fixture
def small_batches() -> Iterator[fw.Connection]:
    c = fw.connect("embedded", {"client.writer.batch-size": "64kb", "client.writer.batch-timeout": "5ms"})
    yield c
    c.close(10)


def _rows(n: int, big_at: int, big: int) -> dict:
    return {"id": list(range(n)), "msg": ["x" * (big if i == big_at else 10) for i in range(n)]}


OVERSIZE: list[tuple[str, Callable[[Any, dict], Any]]] = [
    ("RecordBatch", lambda w, d: w.write_arrow_batch(pa.RecordBatch.from_pydict(d))),
    ("RecordBatch-callback", lambda w, d: w.write_arrow_batch(pa.RecordBatch.from_pydict(d), callback=lambda c: None)),
    ("Table", lambda w, d: w.write_arrow(pa.table(d))),
    ("DataFrame", lambda w, d: w.write_pandas(pd.DataFrame(d))),
]


@pytest.mark.parametrize("big_at", [0, 500, 999])
@pytest.mark.parametrize("form", OVERSIZE, ids=[f[0] for f in OVERSIZE])
def test_one_oversized_row_rejects_the_whole_batch(small_batches, form, big_at) -> None:
    conn = small_batches
    engine = testing.engine(conn)
    name = make_table(conn, buckets=3)
    w = conn.get_table(name).new_append().create_writer()
    with pytest.raises(fw.RecordTooLargeError):
        w.append({"id": 1, "msg": "x" * BIG})
    with pytest.raises(fw.RecordTooLargeError):
        form[1](w, _rows(1000, big_at, BIG))
    w.flush(10)
    assert w.stats()["pending_callbacks"] == 0
    assert engine.stats()["records_accepted"] == 0
    assert [engine.high_watermark(name, b) for b in range(3)] == [0, 0, 0]


@pytest.mark.parametrize("form", ["RecordBatch", "DataFrame"])
def test_rows_under_the_batch_size_with_a_misleading_average_are_split_per_row(small_batches, form) -> None:
    conn = small_batches
    engine = testing.engine(conn)
    name = make_table(conn, buckets=1)
    w = conn.get_table(name).new_append().create_writer()
    n, big = 1000, 50_000
    # Ten 50 KB rows first, then 990 tiny ones: the average (~510 B) would put ~128 rows, all ten
    # big ones among them (~500 KB), into the first chunk.
    d = {"id": list(range(n)), "msg": ["y" * (big if i < 10 else 10) for i in range(n)]}
    if form == "RecordBatch":
        r = w.write_arrow_batch(pa.RecordBatch.from_pydict(d))
    else:
        (r,) = w.write_pandas(pd.DataFrame(d))
    c = r.wait(30)
    assert c.ok, c.error
    # Each big row fits a chunk only on its own: at least ten chunks, each under 64 KB.
    assert engine.stats()["batches_accepted"] >= 10
    rows = [x[2] for x in engine.scan(name, 0)]
    assert rows == list(zip(d["id"], d["msg"]))
