"""``fluss_writer.ErrorCode`` (generated from the core's table), ``e.code`` as a member, the
package's typing exports and the stub's docstrings (issue 27)."""

from __future__ import annotations

import ast
import enum
import pathlib
import typing

import fluss_writer as fw
import pytest
from fluss_writer import testing

STUB = pathlib.Path(fw.__file__).with_name("_native.pyi")


def test_error_code_is_an_int_enum_equal_to_the_core_table() -> None:
    assert issubclass(fw.ErrorCode, enum.IntEnum)
    core = {name: code for name, code, *_ in fw.SERVER_CODES} | {name: code for name, code, *_ in fw.CLIENT_CODES}
    assert {m.name: m.value for m in fw.ErrorCode} == core
    # Every code Fluss 0.9 and 1.0 define, and every client code.
    assert [c for c in fw.ErrorCode if c >= -1] == list(range(-1, 75))
    assert fw.ErrorCode.NOT_LEADER_OR_FOLLOWER == 12
    assert fw.ErrorCode.INVALID_BUCKET_ROUTING == 74
    assert fw.ErrorCode.SEQUENCE_RESET == -1018
    retriable = {name for name, _, r, *_ in fw.SERVER_CODES if r}
    assert {"DISK_WRITE_LOCKED", "STORAGE_BACKPRESSURE_EXCEPTION", "HISTORICAL_PARTITION_THROTTLED"} <= retriable
    assert "RETRIABLE_AUTHENTICATE_EXCEPTION" not in retriable


def test_a_client_error_code_is_a_member() -> None:
    with fw.connect("embedded") as conn:
        with pytest.raises(fw.ServerError) as info:
            conn.get_table("nope.nope")
    assert info.value.code is fw.ErrorCode.TABLE_NOT_EXIST
    assert info.value.code == 7
    with pytest.raises(fw.InvalidRowError) as bad:
        with fw.connect("embedded") as conn:
            conn.admin().create_database("d", ignore_if_exists=True)
            conn.admin().create_table("d.t", fw.TableDescriptor([("a", "INT")]), ignore_if_exists=True)
            with conn.get_table("d.t").new_append().create_writer() as w:
                w.append(["not an int"])
    assert bad.value.code is fw.ErrorCode.INVALID_ROW
    assert fw.CapacityExhaustedError.code is fw.ErrorCode.CAPACITY_EXHAUSTED


def test_a_server_code_the_table_lacks_stays_a_plain_int() -> None:
    with fw.connect("embedded") as conn:
        conn.admin().create_database("d", ignore_if_exists=True)
        conn.admin().create_table("d.t", fw.TableDescriptor([("a", "INT")], bucket_count=1), ignore_if_exists=True)
        testing.engine(conn).inject_error("d.t", 0, 999, "from a newer server")
        with conn.get_table("d.t").new_append().create_writer() as w:
            done = w.append([1]).wait()
    assert not done.ok and done.error is not None
    e = done.error
    assert isinstance(e, fw.ServerError)
    assert type(e.code) is int and e.code == 999
    assert not e.retriable
    assert e.code_name == "SERVER_ERROR"
    assert "999" in str(e)


def test_typing_exports() -> None:
    for name in ("WriterStats", "ErrorCount", "BucketCount", "Row", "Callback", "ErrorCode"):
        assert name in fw.__all__ and getattr(fw, name) is not None
    assert typing.get_type_hints(fw.ErrorCount)["name"] is str
    # The run-time TypedDicts have the stub's fields.
    tree = ast.parse(STUB.read_text())
    for cls in ("WriterStats", "ErrorCount", "BucketCount"):
        node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
        fields = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        assert list(getattr(fw, cls).__annotations__) == fields, cls
    with fw.connect("embedded") as conn:
        conn.admin().create_database("d", ignore_if_exists=True)
        conn.admin().create_table("d.t", fw.TableDescriptor([("a", "INT")]), ignore_if_exists=True)
        with conn.get_table("d.t").new_append().create_writer() as w:
            assert set(w.stats()) == set(fw.WriterStats.__annotations__)


#: Dunder methods whose docstring IDEs show (construction, context managers, awaiting, calling).
DOCUMENTED_DUNDERS = {"__new__", "__init__", "__call__", "__await__", "__enter__", "__exit__", "__aenter__", "__aexit__"}
#: Classes that exist for typing only (the Arrow PyCapsule protocols).
TYPING_ONLY = {"ArrowArrayExportable", "ArrowStreamExportable", "ArrowSchemaExportable"}


def test_every_public_stub_class_function_and_overload_has_a_docstring() -> None:
    missing = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for n in body:
            if isinstance(n, ast.FunctionDef):
                public = not n.name.startswith("_") or n.name in DOCUMENTED_DUNDERS
                if public and ast.get_docstring(n) is None:
                    missing.append(f"{prefix}{n.name} (line {n.lineno})")
            elif isinstance(n, ast.ClassDef) and not n.name.startswith("_") and n.name not in TYPING_ONLY:
                if ast.get_docstring(n) is None:
                    missing.append(f"class {prefix}{n.name} (line {n.lineno})")
                visit(n.body, f"{prefix}{n.name}.")

    visit(ast.parse(STUB.read_text()).body, "")
    assert missing == [], f"{len(missing)} stub definitions without a docstring: {missing}"
