"""Issue 11, defect 2: a table dropped under a live writer must not hold its operations forever.

With ``client.writer.delivery-timeout`` 3 s, 3 appends after the table was dropped used to get
no callback at all (``pending_callbacks`` stuck at 3, every ``flush(5)`` raising TimeoutError):
the batch waited for a resend that the sender never made and never expired. Every operation
must complete, with an error, within the delivery timeout plus one request timeout.
"""

from __future__ import annotations

import time
from typing import Iterator

import fluss_writer as fw
import pytest
from helpers import Recorder, make_table

DELIVERY_S = 3.0
REQUEST_S = 2.0


@pytest.fixture
def deadline_conn() -> Iterator[fw.Connection]:
    c = fw.connect(
        "embedded",
        {
            "client.writer.batch-timeout": "5ms",
            "client.writer.retry-backoff": "5ms",
            "client.writer.delivery-timeout": "3s",
            "client.request-timeout": "2s",
        },
    )
    yield c
    c.close()


@pytest.mark.parametrize("pk", [False, True], ids=["log", "primary_key"])
def test_dropped_table_under_a_live_writer_completes_every_operation(deadline_conn: fw.Connection, pk: bool) -> None:
    conn = deadline_conn
    if pk:
        name = make_table(conn, [("id", "BIGINT", False), ("msg", "STRING")], pk=["id"])
        w = conn.get_table(name).new_upsert().create_writer()
    else:
        name = make_table(conn)
        w = conn.get_table(name).new_append().create_writer()
    conn.admin().drop_table(name)
    rec = Recorder()
    start = time.monotonic()
    for i in range(3):
        if pk:
            w.upsert({"id": i, "msg": "x"}, rec)
        else:
            w.append({"id": i, "msg": "x"}, rec)
    rec.wait_for(3, timeout=DELIVERY_S + REQUEST_S + 1.0)
    took = time.monotonic() - start
    assert took <= DELIVERY_S + REQUEST_S, f"callbacks took {took:.2f} s"
    assert len(rec.items) == 3
    for c in rec.items:
        assert not c.ok
        assert isinstance(c.error, fw.FlussWriterError)
    w.flush(5.0)
    assert w.stats()["pending_callbacks"] == 0
    w.close(5.0)


def test_write_result_of_a_dropped_table_resolves(deadline_conn: fw.Connection) -> None:
    conn = deadline_conn
    name = make_table(conn)
    w = conn.get_table(name).new_append().create_writer()
    conn.admin().drop_table(name)
    results = [w.append({"id": i}) for i in range(3)]
    w.flush(DELIVERY_S + REQUEST_S)
    for r in results:
        c = r.wait(1.0)
        assert not c.ok and c.error_code != 0
    w.close(5.0)
