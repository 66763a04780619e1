"""A Python str that is not valid Unicode (a lone surrogate, as ``surrogateescape`` decoding
produces) cannot be encoded: a row holding one is an InvalidRowError naming the column, and a
name or configuration value holding one is a clear FlussWriterError, never a bare
UnicodeEncodeError (issue 11, defect 5)."""

from __future__ import annotations

import os

import fluss_writer as fw
import pytest
from helpers import make_table

BAD = b"caf\xff".decode("utf-8", "surrogateescape")  # 'caf\udcff'
assert BAD == "caf\udcff"


def _no_unicode_error(e: BaseException) -> None:
    assert not isinstance(e, UnicodeError), type(e)
    assert isinstance(e, fw.FlussWriterError)


@pytest.mark.parametrize("form", ["dict", "tuple", "list", "callback", "detached"])
def test_a_row_with_a_lone_surrogate_is_an_invalid_row_naming_the_column(conn, engine, form, rec) -> None:
    name = make_table(conn)
    w = conn.get_table(name).new_append().create_writer()
    with pytest.raises(fw.InvalidRowError, match=r'column "msg".*not valid Unicode.*index 3') as info:
        if form == "dict":
            w.append({"id": 1, "msg": BAD})
        elif form == "tuple":
            w.append((1, BAD))
        elif form == "list":
            w.append([1, BAD])
        elif form == "callback":
            w.append({"id": 1, "msg": BAD}, callback=rec)
        else:
            w.append_detached({"id": 1, "msg": BAD})
    _no_unicode_error(info.value)
    w.flush(10)
    assert rec.items == [] and engine.high_watermark(name, 0) == 0
    w.append({"id": 2, "msg": "ok"}).wait(10)
    assert [r[2] for r in engine.scan(name, 0)] == [(2, "ok")]


def test_a_row_key_with_a_lone_surrogate(conn) -> None:
    name = make_table(conn)
    w = conn.get_table(name).new_append().create_writer()
    with pytest.raises(fw.InvalidRowError, match="row key.*not valid Unicode") as info:
        w.append({"id": 1, "ms\udc80g": "x"})
    _no_unicode_error(info.value)


def test_keys_upserts_deletes_and_partial_updates(conn, engine) -> None:
    name = make_table(conn, [("k", "STRING", False), ("v", "STRING"), ("n", "INT")], pk=["k"])
    t = conn.get_table(name)
    w = t.new_upsert().create_writer()
    for call in (
        lambda: w.upsert({"k": BAD, "v": "x"}),
        lambda: w.upsert({"k": "a", "v": BAD}),
        lambda: w.delete({"k": BAD}),
        lambda: w.delete([BAD]),
        lambda: w.delete({"k\udcff": "a"}),
        lambda: t.lookup({"k": BAD}),
        lambda: t.lookup([BAD]),
    ):
        with pytest.raises(fw.InvalidRowError, match="not valid Unicode") as info:
            call()
        _no_unicode_error(info.value)
    with pytest.raises(fw.InvalidRowError, match="column name.*not valid Unicode"):
        t.new_upsert().partial_update_by_name(["k", "v\udcff"])
    p = t.new_upsert().partial_update_by_name(["k", "v"]).create_writer()
    with pytest.raises(fw.InvalidRowError, match='column "v".*not valid Unicode'):
        p.upsert({"k": "a", "v": BAD})
    p.upsert({"k": "a", "v": "fine"}).wait(10)
    assert t.lookup(["a"]) == ("a", "fine", None)
    assert engine.high_watermark(name, 0) == 1


def test_names_in_ddl_and_paths(conn) -> None:
    admin = conn.admin()
    calls = [
        lambda: admin.create_database("db\udcff"),
        lambda: admin.database_exists("db\udcff"),
        lambda: admin.drop_database("db\udcff"),
        lambda: admin.list_tables("db\udcff"),
        lambda: admin.table_exists("fluss.t\udcff"),
        lambda: admin.table_exists(("fluss", "t\udcff")),
        lambda: conn.get_table("fluss.t\udcff"),
        lambda: fw.TablePath("fluss", "t\udcff"),
        lambda: fw.Schema([("c\udcff", "INT")]),
        lambda: fw.Schema([("c", "INT\udcff")]),
        lambda: fw.Schema([("c", "INT", True)], primary_keys=["c\udcff"]),
        lambda: fw.TableDescriptor(fw.Schema([("c", "INT")]), bucket_keys=["c\udcff"]),
        lambda: fw.TableDescriptor(fw.Schema([("c", "INT")]), comment="\udcff"),
    ]
    for call in calls:
        with pytest.raises(fw.InvalidTableError, match="not valid Unicode") as info:
            call()
        _no_unicode_error(info.value)
    assert not admin.database_exists("db")


def test_configuration_keys_and_values(tmp_path) -> None:
    for cfg in ({"client.request-timeout": "10s\udcff"}, {"client.request\udcff": "10s"}):
        for make in (fw.Config, lambda c: fw.connect("embedded", c)):
            with pytest.raises(fw.InvalidConfigError, match="not valid Unicode") as info:
                make(cfg)
            _no_unicode_error(info.value)
    # A surrogateescape'd directory name (what os.fsdecode gives for a non-UTF-8 path).
    d = os.fsdecode(os.fsencode(str(tmp_path)) + b"/x\xff")
    with pytest.raises(fw.FlussWriterError, match="not valid Unicode") as info:
        fw.connect("embedded:" + d)
    _no_unicode_error(info.value)
