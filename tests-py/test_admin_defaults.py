"""Issue 27: one default per flag in every language, the safe one. ``Admin.drop_database`` does
not cascade unless asked (it did in 0.1, unlike C++); a flag takes a bool only, so a string
cannot silently mean True. tests-py/test_api_parity.py checks that the stub and the C++ header
give every Admin flag the same default, and that it is False."""

from __future__ import annotations

import fluss_writer as fw
import pytest


def test_drop_database_does_not_cascade_by_default(conn: fw.Connection) -> None:
    a = conn.admin()
    a.create_database("keep")
    a.create_table("keep.t", fw.TableDescriptor([("a", "INT")]))
    with pytest.raises(fw.ServerError) as e:
        a.drop_database("keep")
    assert e.value.code == 5  # DATABASE_NOT_EMPTY
    with pytest.raises(fw.ServerError) as e:
        a.drop_database("keep", ignore_if_not_exists=True)
    assert e.value.code == 5, "ignore_if_not_exists is not cascade"
    assert a.table_exists("keep.t")
    a.drop_database("keep", cascade=True)
    assert not a.database_exists("keep")


def test_a_flag_takes_a_bool_only(conn: fw.Connection) -> None:
    a = conn.admin()
    with pytest.raises(TypeError):
        a.create_database("db", "a comment")  # type: ignore[arg-type]
    assert not a.database_exists("db")
    a.create_database("db")
    with pytest.raises(TypeError):
        a.drop_database("db", False, "yes")  # type: ignore[arg-type]
    assert a.database_exists("db")
