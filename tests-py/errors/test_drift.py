"""The Rust code list, the .pyi stub and the Python classes agree (pydantic-core style)."""

from __future__ import annotations

import pathlib
import re

import fluss_writer as fw
from fluss_writer import _native

STUB = pathlib.Path(fw.__file__).with_name("_native.pyi").read_text()


def test_every_client_code_has_a_class_in_module_stub_and_all() -> None:
    assert len(fw.CLIENT_CODES) >= 18
    for name, code, retriable, cls_name in fw.CLIENT_CODES:
        expected = "".join(p.capitalize() for p in name.split("_")) + "Error"
        assert cls_name == expected
        cls = getattr(fw, cls_name)
        assert issubclass(cls, fw.FlussWriterError)
        assert cls.code == code and cls.code_name == name and cls.retriable == retriable
        assert re.search(rf"^class {cls_name}\(", STUB, re.M), f"{cls_name} missing from _native.pyi"
        assert cls_name in fw.__all__


def test_stub_declares_no_extra_error_classes() -> None:
    declared = set(re.findall(r"^class (\w+Error)\(", STUB, re.M))
    runtime = {c[3] for c in fw.CLIENT_CODES} | {"FlussWriterError", "ServerError", "InvalidRowTypeError"}
    assert declared == runtime
    assert {n for n in dir(_native) if n.endswith("Error")} == runtime


def test_hierarchy() -> None:
    assert issubclass(fw.InvalidRowError, ValueError)
    assert issubclass(fw.InvalidRowTypeError, TypeError)
    assert issubclass(fw.InvalidRowTypeError, fw.InvalidRowError)
    assert issubclass(fw.ServerError, fw.FlussWriterError)
    assert fw.CapacityExhaustedError.retriable and fw.BufferExhaustedError.retriable
    assert not fw.CalledFromCallbackError.retriable
    # Classes that share a builtin's name (or meaning) derive from it: `except TimeoutError`
    # and `except OSError` catch them.
    import builtins

    assert issubclass(fw.TimeoutError, builtins.TimeoutError) and issubclass(fw.TimeoutError, fw.FlussWriterError)
    assert issubclass(fw.IoError, OSError) and issubclass(fw.IoError, fw.FlussWriterError)
    e = fw.TimeoutError("flush did not finish")
    assert isinstance(e, builtins.TimeoutError) and str(e) == "flush did not finish"


def test_codes_are_outside_the_fluss_range() -> None:
    for _, code, _, _ in fw.CLIENT_CODES:
        assert -1999 <= code <= -1001


def test_server_code_table_comes_from_the_core() -> None:
    table = {name: (code, retriable) for name, code, retriable in fw.SERVER_CODES}
    assert table["NOT_LEADER_OR_FOLLOWER"] == (12, True)
    assert table["TABLE_NOT_EXIST"] == (7, False)
    assert table["UNKNOWN_SERVER_ERROR"] == (-1, False)
    assert "SERVER_ERROR" not in table
    assert not set(table) & {c[0] for c in fw.CLIENT_CODES}
