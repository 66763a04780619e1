//! The error-code table of the core (`fluss_writer::error_codes`) is the one source of three
//! generated files, and this test keeps them equal to it:
//!
//! * docs/error-codes.md (the reference table),
//! * python/fluss_writer/_error_codes.py (Python's `fluss_writer.ErrorCode`),
//! * the block between the `BEGIN/END GENERATED ERROR CODES` markers of cpp/include/fluss_writer.hpp
//!   (C++'s `fluss_writer::ErrorCode` and `kErrorCodes`).
//!
//! After a change to the table, regenerate them with
//! `FLUSS_WRITER_BLESS=1 cargo test -p fluss-writer --test error_code_table`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use fluss_writer::{error_codes, CodeInfo, CodeKind};

const REGENERATE: &str = "FLUSS_WRITER_BLESS=1 cargo test -p fluss-writer --test error_code_table";
const CPP_BEGIN: &str = "// ----- BEGIN GENERATED ERROR CODES";
const CPP_END: &str = "// ----- END GENERATED ERROR CODES -----\n";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Markdown and comments (Doxygen's `///` in the C++ header): backticks stay, nothing else needs escaping in the descriptions.
fn doc(i: &CodeInfo) -> &'static str {
    i.description
}

/// `NOT_LEADER_OR_FOLLOWER` -> `kNotLeaderOrFollower`.
fn cpp_name(name: &str) -> String {
    let mut out = String::from("k");
    for part in name.split('_') {
        let mut c = part.chars();
        if let Some(f) = c.next() {
            out.push(f);
            out.extend(c.map(|x| x.to_ascii_lowercase()));
        }
    }
    out
}

/// Wrap `text` into comment lines of at most `width` characters, each starting with `prefix`.
fn wrap(prefix: &str, text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::from(prefix);
    for word in text.split(' ') {
        if line.len() > prefix.len() && line.len() + 1 + word.len() > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = String::from(prefix);
        }
        if line.len() > prefix.len() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

fn render_markdown() -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "<!-- Generated from the core's error-code table (rust/core/src/error.rs) by \
         rust/core/tests/error_code_table.rs. Do not edit: run `{REGENERATE}`. -->\n\n"
    ));
    s.push_str(
        "# Error codes\n\n\
         Every error fluss-writer reports carries a numeric code, the same in Rust (`Error::code`, \
         `ServerCode`, `ClientCode`), Python (`FlussWriterError.code`, a `fluss_writer.ErrorCode` \
         member) and C++ (`Result::error_code`, the `fluss_writer::ErrorCode` constants). Codes come \
         from two disjoint ranges:\n\n\
         * **Server codes** (`-1` and up) are Apache Fluss's own (its `Errors` enum), passed through \
         unchanged: every code Fluss 0.9 and 1.0 define is listed. A code a newer server sends that \
         this table lacks still reaches you, as a plain number (Python: an `int`, not an `ErrorCode` \
         member) named `SERVER_ERROR`, with the number in the message; it is not retriable.\n\
         * **Client codes** (`-1001` down to `-1999`) name causes inside the SDK.\n\n\
         *Retriable*: retrying the same operation can succeed (`retriable` / `IsRetriable()`); for \
         server codes, Fluss's exception for the code is a `RetriableException`, and the writer \
         itself resends a batch that failed with one until `client.writer.delivery-timeout`. The \
         idempotence rules decide for `OUT_OF_ORDER_SEQUENCE_EXCEPTION` and \
         `UNKNOWN_WRITER_ID_EXCEPTION`; `DUPLICATE_SEQUENCE_EXCEPTION` counts as success. \
         `RETRIABLE_AUTHENTICATE_EXCEPTION` is retried by the connection's authentication \
         handshake only. *Metadata*: the error means the client's bucket leaders are stale; the \
         writer refreshes the table's metadata before the retry. *Since*: the first Fluss version \
         that defines the code.\n\n",
    );
    for (kind, title) in [(CodeKind::Server, "Server codes"), (CodeKind::Client, "Client codes")] {
        s.push_str(&format!("## {title}\n\n"));
        if kind == CodeKind::Server {
            s.push_str("| Code | Name | Retriable | Metadata | Since | Meaning |\n|---:|---|---|---|---|---|\n");
        } else {
            s.push_str("| Code | Name | Retriable | Meaning |\n|---:|---|---|---|\n");
        }
        for i in error_codes().filter(|i| i.kind == kind) {
            let yes = |b: bool| if b { "yes" } else { "" };
            if kind == CodeKind::Server {
                let _ = writeln!(
                    s,
                    "| {} | `{}` | {} | {} | {} | {} |",
                    i.code,
                    i.name,
                    yes(i.retriable),
                    yes(i.invalid_metadata),
                    i.since,
                    doc(i)
                );
            } else {
                let _ = writeln!(s, "| {} | `{}` | {} | {} |", i.code, i.name, yes(i.retriable), doc(i));
            }
        }
        s.push('\n');
    }
    s.truncate(s.trim_end().len());
    s.push('\n');
    s
}

fn render_python() -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "# Generated from the core's error-code table (rust/core/src/error.rs) by\n\
         # rust/core/tests/error_code_table.rs. Do not edit: run\n\
         # {REGENERATE}\n"
    ));
    s.push_str(
        "\"\"\"``ErrorCode``: every error code fluss-writer names (docs/error-codes.md).\"\"\"\n\n\
         from __future__ import annotations\n\n\
         import enum\n\n\n\
         class ErrorCode(enum.IntEnum):\n    \
         \"\"\"Every Fluss server code (Fluss 0.9 and 1.0) and every fluss-writer client code.\n\n    \
         ``FlussWriterError.code`` is a member of this enum; a code a newer server sends that the\n    \
         table lacks stays a plain ``int`` (its number is in the message). Members compare equal\n    \
         to their numbers.\n    \"\"\"\n\n",
    );
    for i in error_codes() {
        let _ = writeln!(s, "    {} = {}", i.name, i.code);
        let text = format!("{} ({} code{})", doc(i).replace('`', "``"), i.kind.as_str(), if i.retriable { ", retriable" } else { "" });
        let text = text.replace('"', "'");
        if text.len() + 10 <= 130 {
            let _ = writeln!(s, "    \"\"\"{text}\"\"\"");
        } else {
            let wrapped = wrap("    ", &text, 124);
            let _ = writeln!(s, "    \"\"\"{}\"\"\"", wrapped.trim_start().trim_end());
        }
    }
    s
}

fn render_cpp() -> String {
    let mut s = String::new();
    s.push_str(CPP_BEGIN);
    s.push_str(&format!(" (from the core's table, rust/core/src/error.rs; do not edit: run\n// {REGENERATE}) -----\n"));
    s.push_str(
        "/// Every Fluss server code (Fluss 0.9 and 1.0, passed through unchanged) and every client code,\n\
         /// as the numbers Result::error_code carries: `r.error_code == ErrorCode::kNotLeaderOrFollower`.\n\
         /// A code a newer server sends that this list lacks is still reported, named SERVER_ERROR, its\n\
         /// number in the message, not retriable. docs/error-codes.md explains every code.\n\
         struct ErrorCode {\n  ErrorCode() = delete;\n",
    );
    for i in error_codes() {
        s.push_str(&wrap("  /// ", doc(i), 110));
        let _ = writeln!(s, "  static constexpr int32_t {} = {};", cpp_name(i.name), i.code);
    }
    s.push_str(
        "};\n\n\
         /// One row of the table: the code, its stable name (Result::CodeName) and whether retrying the\n\
         /// same operation can succeed (Result::IsRetriable).\n\
         struct ErrorCodeInfo {\n  int32_t code;\n  const char* name;\n  bool retriable;\n};\n\n\
         /// Every code in the table: server codes in numeric order, then client codes from -1001 down.\n\
         inline constexpr ErrorCodeInfo kErrorCodes[] = {\n",
    );
    for i in error_codes() {
        let _ = writeln!(s, "    {{{}, \"{}\", {}}},", i.code, i.name, i.retriable);
    }
    s.push_str("};\n");
    s.push_str(CPP_END);
    s
}

/// Compare `path` with `want`; with FLUSS_WRITER_BLESS=1 write it instead.
fn check(path: &Path, want: &str, got: &str, apply: impl FnOnce(&str) -> String) {
    if std::env::var("FLUSS_WRITER_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(path, apply(want)).unwrap();
        return;
    }
    if want != got {
        let line = want.lines().zip(got.lines()).position(|(a, b)| a != b).unwrap_or(want.lines().count().min(got.lines().count()));
        panic!(
            "{} does not match the core's error-code table (first difference at line {} of the generated part): run `{REGENERATE}`",
            path.display(),
            line + 1
        );
    }
}

#[test]
fn docs_error_codes_md_is_generated_from_the_table() {
    let path = repo().join("docs/error-codes.md");
    let got = std::fs::read_to_string(&path).unwrap_or_default();
    check(&path, &render_markdown(), &got, |w| w.to_string());
}

#[test]
fn python_error_code_enum_is_generated_from_the_table() {
    let path = repo().join("python/fluss_writer/_error_codes.py");
    let got = std::fs::read_to_string(&path).unwrap_or_default();
    check(&path, &render_python(), &got, |w| w.to_string());
}

#[test]
fn cpp_error_code_constants_are_generated_from_the_table() {
    let path = repo().join("cpp/include/fluss_writer.hpp");
    let header = std::fs::read_to_string(&path).unwrap();
    let begin = header.find(CPP_BEGIN).expect("the header has the BEGIN GENERATED ERROR CODES marker");
    let end = header[begin..].find(CPP_END).map(|e| begin + e + CPP_END.len()).expect("the header has the END marker");
    let got = header[begin..end].to_string();
    check(&path, &render_cpp(), &got, |w| format!("{}{}{}", &header[..begin], w, &header[end..]));
}

#[test]
fn generated_names_are_unique_in_every_language() {
    let mut seen = std::collections::HashSet::new();
    for i in error_codes() {
        assert!(seen.insert(cpp_name(i.name)), "two codes map to the C++ name {}", cpp_name(i.name));
    }
    assert!(seen.len() > 90);
}
