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

Data types (``DATA_TYPES``: descriptors, completions, partitions) are compared member by member:
a Rust public field or method ``x`` is Python ``x`` (a constructor keyword, a property or a
method; ``is_x`` is ``x``) and a C++ field ``x`` or method ``X``; a Rust builder ``with_x`` sets
``x``.
"""

from __future__ import annotations

import pathlib
import re
from typing import Dict, Optional, Set, Tuple

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

#: Rust data type -> (its source file, Python class or None, C++ struct or class). None: Python
#: uses a builtin instead (``BUILTIN``).
DATA_TYPES: Dict[str, Tuple[str, Optional[str], str]] = {
    "TableDescriptor": ("rust/core/src/metadata/types.rs", "TableDescriptor", "TableDescriptor"),
    "PartitionSpec": ("rust/core/src/metadata/partition.rs", None, "PartitionSpec"),
    "PartitionInfo": ("rust/core/src/metadata/partition.rs", "PartitionInfo", "PartitionInfo"),
    "WriteCompletion": ("rust/core/src/write/completion.rs", "WriteCompletion", "WriteCompletion"),
    "BucketResult": ("rust/core/src/write/completion.rs", "BucketResult", "BucketResult"),
    "TablePath": ("rust/core/src/metadata/types.rs", "TablePath", "TablePath"),
}

#: Data types a language has as a builtin value instead of a class: (Rust type, language) -> how.
BUILTIN: Dict[Tuple[str, str], str] = {
    ("PartitionSpec", "py"): "a dict of partition key to value (str to str): new is dict(...), entries .items(), get .get",
    ("PartitionSpec", "cpp"): "a std::map<std::string, std::string> of key to value: constructor, iteration, find/at",
}

#: (Rust type, Rust operation) -> its name in a language where the rule below does not give it.
ALIASES: Dict[Tuple[str, str], Dict[str, str]] = {
    ("Connection", "admin"): {"cpp": "GetAdmin"},
    ("WriteResult", "add_callback"): {"cpp": "OnComplete"},
    ("WriteResult", "is_done"): {"py": "done"},
    # Python reads a partition with the same call as a table's bucket: scan(bucket, partition=).
    ("Table", "scan_partition"): {"py": "scan"},
    ("TableDescriptor", "bucket_key"): {"py": "bucket_keys", "cpp": "bucket_keys"},
    ("TableDescriptor", "with_bucket_key"): {"py": "bucket_keys", "cpp": "bucket_keys"},
    ("TableDescriptor", "with_property"): {"py": "properties", "cpp": "properties"},
    ("WriteCompletion", "error"): {"cpp": "result"},
    ("WriteCompletion", "is_ok"): {"cpp": "Ok"},
    ("WriteCompletion", "result"): {"py": "raise_for_error"},
    ("BucketResult", "error"): {"cpp": "result"},
}

#: (Rust type, Rust operation) -> why a language has no counterpart: {"py": reason, "cpp": reason}.
EXEMPT: Dict[Tuple[str, str], Dict[str, str]] = {
    ("AppendWriter", "record_rejected"): {
        "py": "binding-internal: the binding counts the values it cannot convert",
        "cpp": "binding-internal: the binding counts the values it cannot convert",
    },
    ("UpsertWriter", "record_rejected"): {
        "py": "binding-internal: the binding counts the values it cannot convert",
        "cpp": "binding-internal: the binding counts the values it cannot convert",
    },
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
    ("WriteResult", "wait_outcome"): {
        "py": "wait() then .ok / .error: the binding refills one completion, building none per record",
        "cpp": "Wait() without a completion to fill returns the outcome (it calls wait_outcome)",
    },
    ("WriteResult", "release"): {
        "py": "dropping the last reference to a Python WriteResult calls it",
        "cpp": "the WriteResult destructor",
    },
    ("TableDescriptor", "new"): {
        "py": "the constructor TableDescriptor(schema, bucket_count=..., partition_keys=..., ...)",
        "cpp": "an aggregate: TableDescriptor{schema, ...} and its fields",
    },
    ("TableDescriptor", "normalized"): {
        "py": "core rule: the constructor and Admin.create_table run it",
        "cpp": "core rule: Admin::CreateTable runs it",
    },
    ("TableDescriptor", "bucket_count_or"): {
        "py": "Rust convenience: bucket_count is None for the server's default",
        "cpp": "Rust convenience: bucket_count is 0 for the server's default",
    },
    ("PartitionSpec", "from_name"): {
        "py": "core rule: the core splits names (PartitionInfo.spec gives the values)",
        "cpp": "core rule: the core splits names (PartitionInfo gives the values)",
    },
    ("PartitionSpec", "resolve"): {
        "py": "core rule: create_partition / drop_partition check the spec in the core",
        "cpp": "core rule: CreatePartition / DropPartition check the spec in the core",
    },
    ("PartitionSpec", "name"): {
        "py": "core rule: the core names partitions (PartitionInfo.partition_name)",
        "cpp": "core rule: the core names partitions (PartitionInfo's name)",
    },
    ("TablePath", "new"): {
        "py": "the constructor TablePath(database, table)",
        "cpp": "the constructor TablePath(database, table)",
    },
    ("TablePath", "parse"): {
        "py": 'a "db.table" string is taken wherever a path is (PathArg); the core parses it',
        "cpp": "C++ takes the two names (TablePath(database, table))",
    },
    ("WriteCompletion", "error_code"): {"cpp": "WriteCompletion::result.error_code"},
    ("WriteCompletion", "describe"): {"py": "repr(completion)", "cpp": "WriteCompletion::result.ToString()"},
}

#: Counterparts that do not exist yet: the test holds them to this list (it fails when one is
#: added without being removed here).
KNOWN_GAPS: Dict[Tuple[str, str], Set[str]] = {
    # Free-form table properties: no binding exposes them (older than issue 12).
    ("TableDescriptor", "custom_properties"): {"py", "cpp"},
}


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


def rust_members() -> Dict[str, Set[str]]:
    """Public fields and methods of each of DATA_TYPES."""
    out: Dict[str, Set[str]] = {}
    for rust_type, (path, _, _) in DATA_TYPES.items():
        src = (REPO / path).read_text()
        names: Set[str] = set()
        for m in re.finditer(rf"^pub struct {rust_type} \{{\n(.*?)^\}}", src, re.M | re.S):
            names |= set(re.findall(r"^    pub (\w+):", m.group(1), re.M))
        for m in re.finditer(rf"^impl {rust_type} \{{\n(.*?)^\}}", src, re.M | re.S):
            names |= set(re.findall(r"^    pub fn (\w+)", m.group(1), re.M))
        assert names, f"no public member of {rust_type} found in {path}: the parser needs an update"
        out[rust_type] = names
    return out


def python_members() -> Dict[str, Set[str]]:
    """Methods and properties of each stub class, and the keywords of its constructor."""
    stub = (REPO / "python/fluss_writer/_native.pyi").read_text()
    out: Dict[str, Set[str]] = {}
    for m in re.finditer(r"^class (\w+)\b[^\n]*:\n((?:[ \t]+[^\n]*\n|\n)*)", stub, re.M):
        names = set(re.findall(r"^    (?:async )?def (\w+)", m.group(2), re.M))
        new = re.search(r"^    def __new__\((.*?)\)\s*->", m.group(2), re.M | re.S)
        if new:
            names |= set(re.findall(r"(\w+):", new.group(1)))
        out[m.group(1)] = names
    return out


def cpp_members() -> Dict[str, Set[str]]:
    """Public fields and methods of each C++ struct and class (up to a ``private:`` label)."""
    header = (REPO / "cpp/include/fluss_writer.hpp").read_text()
    out: Dict[str, Set[str]] = {}
    decl = r"^(?:struct|class) (?:\[\[\w+\]\] )?(\w+)(?: final)?(?: : public \w+)? \{\n(.*?)^\};"
    for m in re.finditer(decl, header, re.M | re.S):
        body = re.split(r"^ ?private:", m.group(2), flags=re.M)[0]
        names = set(re.findall(r"\b([A-Z]\w*)\(", body))
        names |= set(re.findall(r"^  [\w:][\w:<>, ]*[ &*]+(\w+)(?: = [^;]*|\{[^;]*\})?;", body, re.M))
        # Accessors named like the Rust field (TablePath::database()).
        names |= set(re.findall(r"^  (?:const )?[\w:<>]+[ &*]+([a-z]\w*)\(\) const", body, re.M))
        out[m.group(1)] = names
    return out


def member_counterparts(rust_type: str, rust_name: str) -> Tuple[str, Tuple[str, ...]]:
    """(Python name, C++ names) of a data type's member: ``with_x`` is ``x``, ``is_x`` is
    Python ``x``; C++ has it as a field ``x`` or a method ``X``; ALIASES override."""
    base = rust_name[5:] if rust_name.startswith("with_") else rust_name
    py = base[3:] if base.startswith("is_") else base
    alias = ALIASES.get((rust_type, rust_name), {})
    cpp = (alias["cpp"],) if "cpp" in alias else (base, snake_to_camel(base))
    return alias.get("py", py), cpp


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


def has_member(rust_type: str, name: str, lang: str) -> bool:
    _, py_class, cpp_class = DATA_TYPES[rust_type]
    py_name, cpp_names = member_counterparts(rust_type, name)
    if lang == "py":
        return py_class is not None and py_name in python_members().get(py_class, set())
    return any(n in cpp_members().get(cpp_class, set()) for n in cpp_names)


def test_every_rust_data_type_member_has_a_python_and_a_cpp_counterpart() -> None:
    missing = []
    for rust_type, names in sorted(rust_members().items()):
        for name in sorted(names):
            skip = set(EXEMPT.get((rust_type, name), {})) | KNOWN_GAPS.get((rust_type, name), set())
            skip |= {lang for (t, lang) in BUILTIN if t == rust_type}
            for lang in ("py", "cpp"):
                if lang not in skip and not has_member(rust_type, name, lang):
                    missing.append(f"{'Python' if lang == 'py' else 'C++'} {rust_type} member for Rust {rust_type}::{name}")
    assert not missing, "data type members without a counterpart (add them, or an exemption with its reason):\n  " + "\n  ".join(
        missing
    )


def test_exemptions_aliases_and_gaps_are_current() -> None:
    ops = rust_operations()
    ops.update(rust_members())
    listed = [*EXEMPT, *ALIASES, *KNOWN_GAPS]
    stale = [f"{t}::{n}" for (t, n) in listed if n not in ops.get(t, set())]
    assert not stale, f"entries for operations the Rust API no longer has: {stale}"
    py, cpp = python_methods(), cpp_methods()

    def has(t: str, n: str, lang: str) -> bool:
        if t in DATA_TYPES:
            return has_member(t, n, lang)
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
    members = rust_members()
    assert {"schema", "bucket_count", "partition_keys", "with_partition_keys", "new"} <= members["TableDescriptor"]
    assert {"partition", "partition_id", "bucket", "is_ok"} <= members["WriteCompletion"]
    assert {"partition_id", "partition_name", "spec"} == members["PartitionInfo"]
    assert {"new", "entries", "get"} <= members["PartitionSpec"]
    descriptor = {"schema", "bucket_count", "bucket_keys", "partition_keys", "properties", "comment"}
    assert descriptor <= python_members()["TableDescriptor"]
    assert {"partition", "partition_id", "ok"} <= python_members()["WriteCompletion"]
    assert {"schema", "bucket_count", "bucket_keys", "properties", "comment"} <= cpp_members()["TableDescriptor"]
    assert {"result", "table", "partition_id", "bucket", "Ok"} <= cpp_members()["WriteCompletion"]
    assert {"result", "bucket", "rows", "base_offset"} <= cpp_members()["BucketResult"]
    assert {"database", "table", "new", "parse"} == members["TablePath"]
    assert {"database", "table"} <= python_members()["TablePath"]
    assert {"database", "table", "ToString"} <= cpp_members()["TablePath"]


def camel_to_snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def python_flag_defaults(cls: str) -> Dict[Tuple[str, str], bool]:
    """(method, parameter) -> default of every ``bool`` parameter with a default in the stub class."""
    stub = (REPO / "python/fluss_writer/_native.pyi").read_text()
    body = re.search(rf"^class {cls}\b[^\n]*:\n((?:[ \t]+[^\n]*\n|\n)*)", stub, re.M)
    assert body, f"class {cls} is not in the stub"
    out: Dict[Tuple[str, str], bool] = {}
    for m in re.finditer(r"^    def (\w+)\((.*?)\)\s*->", body.group(1), re.M | re.S):
        for p, v in re.findall(r"(\w+): bool = (True|False)", m.group(2)):
            out[(m.group(1), p)] = v == "True"
    return out


def cpp_flag_defaults(cls: str) -> Dict[Tuple[str, str], bool]:
    """The same for the C++ class (method names in snake_case; deleted overloads skipped)."""
    header = (REPO / "cpp/include/fluss_writer.hpp").read_text()
    body = re.search(rf"^class {cls} \{{\n(.*?)^\}};", header, re.M | re.S)
    assert body, f"class {cls} is not in the header"
    out: Dict[Tuple[str, str], bool] = {}
    for m in re.finditer(r"^  Result (\w+)\(([^;]*?)\);", body.group(1), re.M | re.S):
        for p, v in re.findall(r"\bbool (\w+) = (true|false)", m.group(2)):
            out[(camel_to_snake(m.group(1)), p)] = v == "true"
    return out


def test_admin_flags_have_one_default_the_safe_one() -> None:
    # Issue 27: drop_database cascaded by default in Python and not in C++. Every flag of Admin
    # (ignore_if_exists, ignore_if_not_exists, cascade) has the same default in both bindings
    # (Rust has no defaults: every flag is an argument), and it is False: nothing is ignored or
    # dropped unless asked.
    py, cpp = python_flag_defaults("Admin"), cpp_flag_defaults("Admin")
    assert ("drop_database", "cascade") in py and ("drop_database", "cascade") in cpp, "the parser found no flags"
    assert len(py) >= 7 and len(cpp) >= 7, (py, cpp)
    assert set(py) == set(cpp), f"flags with a default in one binding only: {sorted(set(py) ^ set(cpp))}"
    differ = {k: (py[k], cpp[k]) for k in py if py[k] != cpp[k]}
    assert not differ, f"flags whose default differs (Python, C++): {differ}"
    unsafe = sorted(k for k, v in py.items() if v)
    assert not unsafe, f"flags that default to True: {unsafe}"
