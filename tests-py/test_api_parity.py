"""One API in three languages: every public operation of the Rust API's user-facing types has a
counterpart in the Python stub and in the C++ header, by the same name in each language's style,
or a documented exemption below. The test reads the sources themselves (rust/core/src, the
``_native.pyi`` stub, ``cpp/include/fluss_writer.hpp``), so a new Rust operation without a
binding fails here until it gets one or an exemption with its reason.

Name rules: Python uses the Rust name; C++ the CamelCase of it. The Rust forms ``x``,
``x_with_callback`` and ``x_with_shared_callback`` are one Python method ``x(..., callback=None)``
and one C++ overload set ``X(..., result | callback | shared callback)``; ``x_detached`` keeps its
name (C++: ``XDetached``). In Python and C++, the Rust result form ``x(row) -> WriteResult`` is
``x(row)`` and ``X(row, WriteResult&)``.
"""

from __future__ import annotations

import pathlib
import re
from typing import Dict, Set, Tuple

REPO = pathlib.Path(__file__).resolve().parents[1]

#: Rust type -> (its source file, Python class, C++ class).
TYPES: Dict[str, Tuple[str, str, str]] = {
    "Connection": ("rust/core/src/connection.rs", "Connection", "Connection"),
    "Admin": ("rust/core/src/admin.rs", "Admin", "Admin"),
    "Table": ("rust/core/src/table.rs", "Table", "Table"),
    "TableAppend": ("rust/core/src/table.rs", "TableAppend", "TableAppend"),
    "TableUpsert": ("rust/core/src/table.rs", "TableUpsert", "TableUpsert"),
    "AppendWriter": ("rust/core/src/write/writer.rs", "AppendWriter", "AppendWriter"),
    "UpsertWriter": ("rust/core/src/write/writer.rs", "UpsertWriter", "UpsertWriter"),
    "WriteResult": ("rust/core/src/write/completion.rs", "WriteResult", "WriteResult"),
}

#: (Rust type, Rust operation) -> its name in a language where the rule below does not give it.
ALIASES: Dict[Tuple[str, str], Dict[str, str]] = {
    ("Connection", "admin"): {"cpp": "GetAdmin"},
    ("WriteResult", "add_callback"): {"cpp": "OnComplete"},
    ("WriteResult", "is_done"): {"py": "done"},
}

#: (Rust type, Rust operation) -> why a language has no counterpart: {"py": reason, "cpp": reason}.
EXEMPT: Dict[Tuple[str, str], Dict[str, str]] = {
    ("Connection", "open"): {
        "py": "fluss_writer.connect(address, config) is the constructor",
        "cpp": "Connection::Create(Configuration) is the constructor",
    },
    ("Connection", "connect"): {
        "py": "fluss_writer.connect(address, config) is the constructor",
        "cpp": "Connection::Create(Configuration) is the constructor",
    },
    ("Connection", "connect_with"): {
        "py": "binding-internal: the binding passes its worker hooks",
        "cpp": "binding-internal: the binding passes its worker hooks",
    },
    ("Connection", "block_on"): {
        "py": "Rust-only: runs a future on the connection's tokio runtime",
        "cpp": "Rust-only: runs a future on the connection's tokio runtime",
    },
    ("Connection", "backend"): {
        "py": "Rust-only: the Backend interface is internal to the core",
        "cpp": "Rust-only: the Backend interface is internal to the core",
    },
    ("Connection", "executor"): {
        "py": "Rust-only: dispatcher executors are configured per writer (WriterOptions)",
        "cpp": "Rust-only: dispatcher executors are configured per writer (WriteCallbackOptions)",
    },
    ("Connection", "embedded"): {
        "py": "fluss_writer.testing.engine(conn) reaches the embedded engine",
        "cpp": "fluss_writer::testing reaches the embedded engine",
    },
    ("Connection", "config"): {
        "py": "the Config the application built is its own object",
        "cpp": "the Configuration the application built is its own object",
    },
    ("Table", "info"): {"cpp": "Table::Path, ColumnCount, HasPrimaryKey give what C++ callers use of it"},
    ("WriteResult", "try_get"): {"cpp": "WriteResult::IsDone() then Wait() (which returns at once)"},
}

#: Counterparts that do not exist yet: the test holds them to this list (it fails when one is
#: added without being removed here). Empty since the C++ Admin::GetTableInfo and the writers'
#: Table() closed the last ones of issue 16.
KNOWN_GAPS: Dict[Tuple[str, str], Set[str]] = {}


def snake_to_camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


def rust_operations() -> Dict[str, Set[str]]:
    ops: Dict[str, Set[str]] = {}
    for rust_type, (path, _, _) in TYPES.items():
        src = (REPO / path).read_text()
        names: Set[str] = set()
        for m in re.finditer(rf"^impl(?:<[^>]*>)? {rust_type}(?:<[^>]*>)? \{{\n(.*?)^\}}", src, re.M | re.S):
            names |= set(re.findall(r"^    pub fn (\w+)", m.group(1), re.M))
            if "write_forms!(" in m.group(1):
                for forms in re.findall(r"write_forms!\(\s*(?:///[^\n]*\n\s*)*(\w+), (\w+), (\w+), (\w+)", m.group(1)):
                    names |= set(forms)
            if "writer_common!()" in m.group(1):
                common = re.search(r"macro_rules! writer_common \{(.*?)\n\}\n", src, re.S)
                assert common, "writer_common! not found"
                names |= set(re.findall(r"pub fn (\w+)", common.group(1)))
        assert names, f"no public operation of {rust_type} found in {path}: the parser needs an update"
        ops[rust_type] = names
    return ops


def python_methods() -> Dict[str, Set[str]]:
    stub = (REPO / "python/fluss_writer/_native.pyi").read_text()
    out: Dict[str, Set[str]] = {}
    for m in re.finditer(r"^class (\w+)\b[^\n]*:\n((?:[ \t]+[^\n]*\n|\n)*)", stub, re.M):
        out[m.group(1)] = set(re.findall(r"^    (?:async )?def (\w+)", m.group(2), re.M))
    return out


def cpp_methods() -> Dict[str, Set[str]]:
    header = (REPO / "cpp/include/fluss_writer.hpp").read_text()
    out: Dict[str, Set[str]] = {}
    for m in re.finditer(r"^class (\w+)(?: final)?(?: : public (\w+))? \{\n(.*?)^\};", header, re.M | re.S):
        names = set(re.findall(r"\b([A-Z]\w*)\(", m.group(3)))
        if m.group(2):
            names |= out.get(m.group(2), set())
        out[m.group(1)] = names
    return out


def counterparts(rust_type: str, rust_name: str) -> Tuple[str, str]:
    """(Python name, C++ name) of a Rust operation: the callback forms fold into one name, a
    Python predicate ``is_x`` is the property ``x``, C++ is CamelCase; ALIASES override."""
    base = re.sub(r"_with_(shared_)?callback$", "", rust_name)
    py = base[3:] if base.startswith("is_") else base
    alias = ALIASES.get((rust_type, rust_name), {})
    return alias.get("py", py), alias.get("cpp", snake_to_camel(base))


def test_every_rust_operation_has_a_python_and_a_cpp_counterpart() -> None:
    py, cpp = python_methods(), cpp_methods()
    missing = []
    for rust_type, names in sorted(rust_operations().items()):
        _, py_class, cpp_class = TYPES[rust_type]
        assert py_class in py, f"class {py_class} is not in the Python stub"
        assert cpp_class in cpp, f"class {cpp_class} is not in the C++ header"
        for name in sorted(names):
            py_name, cpp_name = counterparts(rust_type, name)
            skip = set(EXEMPT.get((rust_type, name), {})) | KNOWN_GAPS.get((rust_type, name), set())
            if py_name not in py[py_class] and "py" not in skip:
                missing.append(f"Python {py_class}.{py_name} (Rust {rust_type}::{name})")
            if cpp_name not in cpp[cpp_class] and "cpp" not in skip:
                missing.append(f"C++ {cpp_class}::{cpp_name} (Rust {rust_type}::{name})")
    assert not missing, "operations without a counterpart (add them, or an exemption with its reason):\n  " + "\n  ".join(missing)


def test_exemptions_aliases_and_gaps_are_current() -> None:
    ops = rust_operations()
    listed = [*EXEMPT, *ALIASES, *KNOWN_GAPS]
    stale = [f"{t}::{n}" for (t, n) in listed if n not in ops.get(t, set())]
    assert not stale, f"entries for operations the Rust API no longer has: {stale}"
    py, cpp = python_methods(), cpp_methods()

    def has(t: str, n: str, lang: str) -> bool:
        names = counterparts(t, n)
        return names[0] in py[TYPES[t][1]] if lang == "py" else names[1] in cpp[TYPES[t][2]]

    covered = [f"{t}::{n} ({lang})" for (t, n), why in EXEMPT.items() for lang in why if has(t, n, lang)]
    closed = [f"{t}::{n} ({lang})" for (t, n), langs in KNOWN_GAPS.items() for lang in langs if has(t, n, lang)]
    assert not covered, f"exempt operations that do have a counterpart now (drop the exemption): {covered}"
    assert not closed, f"known gaps that are closed now (drop them from KNOWN_GAPS): {closed}"


def test_the_parser_finds_what_it_must() -> None:
    # A parser that silently found nothing would pass the parity test.
    ops = rust_operations()
    assert {"append", "append_with_callback", "append_detached", "write_arrow_batch", "flush", "close", "stats"} <= ops[
        "AppendWriter"
    ]
    assert {"create_table", "drop_table", "create_acls"} <= ops["Admin"]
    assert {"append", "append_detached", "write_arrow_batch", "flush"} <= python_methods()["AppendWriter"]
    assert {"Append", "AppendDetached", "WriteArrowBatch", "Flush"} <= cpp_methods()["AppendWriter"]
