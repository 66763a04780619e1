//! fluss-writer's error-code table equals the official Java client's `Errors` enum: every code,
//! its name, whether its exception is a `RetriableException` and whether it is an
//! `InvalidMetadataException` — all of `org.apache.fluss:fluss-client:1.0.0`, and the rows marked
//! "0.9" are exactly `fluss-client:0.9.1-incubating`'s (tests-interop/java/error_codes.sh prints
//! the Java tables; no cluster needed).
//!
//! Run it with `cargo test -p fluss-writer --test interop_error_codes_java -- --ignored`
//! (tests-interop/run.sh does). Needs `java` on PATH (Maven and javac on first use, to fetch the
//! client jar and compile the oracle into .fluss/). Without java it prints a banner and passes,
//! except under CI=true.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use fluss_writer::{error_codes, CodeKind};

fn java_available() -> bool {
    let ok = Command::new("java").arg("-version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
    if !ok {
        let ci = std::env::var("CI").map(|v| v.eq_ignore_ascii_case("true") || v == "1").unwrap_or(false);
        assert!(!ci, "java is not on PATH but CI=true: the Java error-code check must run in CI");
        let _ = writeln!(std::io::stderr(), "\n!!! interop_error_codes_java: no `java` on PATH: NOT checking the error-code table\n");
    }
    ok
}

/// code -> (name, retriable, invalid metadata)
type Table = BTreeMap<i32, (String, bool, bool)>;

fn java_table(version: &str) -> Table {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests-interop/java/error_codes.sh");
    let out = Command::new(script).arg(version).stderr(Stdio::inherit()).output().expect("run tests-interop/java/error_codes.sh");
    assert!(out.status.success(), "error_codes.sh {version} failed: {}", out.status);
    let mut table = Table::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let row = (v["name"].as_str().unwrap().to_string(), v["retriable"].as_bool().unwrap(), v["invalid_metadata"].as_bool().unwrap());
        assert!(table.insert(v["code"].as_i64().unwrap() as i32, row).is_none(), "duplicate code in {line}");
    }
    assert!(table.len() > 60, "the Java {version} table has {} codes", table.len());
    table
}

fn ours(since: &[&str]) -> Table {
    error_codes()
        .filter(|i| i.kind == CodeKind::Server && since.contains(&i.since))
        .map(|i| (i.code, (i.name.to_string(), i.retriable, i.invalid_metadata)))
        .collect()
}

fn assert_same(java: &Table, ours: &Table, what: &str) {
    for (code, row) in java {
        assert_eq!(ours.get(code), Some(row), "{what}: code {code} (Java: {row:?})");
    }
    for (code, row) in ours {
        assert!(java.contains_key(code), "{what}: code {code} {row:?} is not in the Java client's table");
    }
}

#[test]
#[ignore = "needs java (and Maven once); run by tests-interop/run.sh"]
fn the_table_equals_the_java_clients_errors() {
    if !java_available() {
        return;
    }
    assert_same(&java_table("1.0.0"), &ours(&["0.9", "1.0"]), "fluss-client 1.0.0");
    assert_same(&java_table("0.9.1-incubating"), &ours(&["0.9"]), "fluss-client 0.9.1 (the rows since 0.9)");
}
