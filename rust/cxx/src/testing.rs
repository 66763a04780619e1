//! `fluss_writer::testing` in C++: read-back and fault injection on the embedded engine behind a
//! connection, a documented part of the API for users' own tests, in every build. (The test and
//! benchmark hooks are in `test_hooks`, only with the cargo feature `test-hooks`.)

use std::sync::Arc;

use fluss_writer::embedded::{EmbeddedEngine, ScannedRow};
use fluss_writer::{ClientCode, Error, Result, TablePath};

use crate::bridge::ffi::{FfiFault, FfiStatus};
use crate::handles::RConnection;
use crate::status::{fill, guard, guard_or, status};
use crate::values::RRow;

pub(crate) fn engine(c: &RConnection) -> Result<&Arc<EmbeddedEngine>> {
    c.get()?.embedded().ok_or_else(|| Error::client(ClientCode::Unsupported, "fluss_writer::testing needs an embedded connection"))
}

pub(crate) fn testing_inject_fault(c: &RConnection, db: &str, table: &str, bucket: i32, f: &FfiFault) -> FfiStatus {
    status(guard(|| {
        let fault = crate::partitions::fault(f)?;
        engine(c)?.faults().inject(&TablePath::new(db, table)?, bucket, fault);
        Ok(())
    }))
}

pub(crate) fn testing_inject_coordinator_fault(c: &RConnection, f: &FfiFault) -> FfiStatus {
    status(guard(|| {
        let fault = crate::partitions::fault(f)?;
        engine(c)?.faults().inject_coordinator(fault);
        Ok(())
    }))
}

pub(crate) fn testing_clear_faults(c: &RConnection) -> FfiStatus {
    status(guard(|| {
        engine(c)?.faults().clear();
        Ok(())
    }))
}

/// The rows of a scan (`testing_scan` on the embedded engine, `table_scan` through the protocol).
pub struct RScan(pub(crate) Vec<ScannedRow>);

pub(crate) fn testing_scan(c: &RConnection, db: &str, table: &str, bucket: i32, from_offset: i64, st: &mut FfiStatus) -> Box<RScan> {
    fill(st, || Box::new(RScan(Vec::new())), || Ok(Box::new(RScan(engine(c)?.scan(&TablePath::new(db, table)?, bucket, from_offset)?))))
}

pub(crate) fn scan_len(s: &RScan) -> usize {
    s.0.len()
}

pub(crate) fn scan_offset(s: &RScan, i: usize) -> i64 {
    s.0.get(i).map_or(-1, |r| r.offset)
}

pub(crate) fn scan_change_type(s: &RScan, i: usize) -> &str {
    guard_or(|| "", || s.0.get(i).map_or("", |r| r.change_type.short_string()))
}

pub(crate) fn scan_row(s: &RScan, i: usize) -> Box<RRow> {
    guard_or(Box::default, || Box::new(RRow { values: s.0.get(i).map(|r| r.row.clone()).unwrap_or_default(), bad: None }))
}

pub(crate) fn testing_lookup(c: &RConnection, db: &str, table: &str, key: &RRow, found: &mut bool, st: &mut FfiStatus) -> Box<RRow> {
    *found = false;
    fill(
        st,
        || Box::new(RRow::default()),
        || {
            let row = engine(c)?.lookup(&TablePath::new(db, table)?, key.values()?)?;
            *found = row.is_some();
            Ok(Box::new(RRow { values: row.unwrap_or_default(), bad: None }))
        },
    )
}

pub(crate) fn testing_high_watermark(c: &RConnection, db: &str, table: &str, bucket: i32, st: &mut FfiStatus) -> i64 {
    fill(st, || -1, || engine(c)?.high_watermark(&TablePath::new(db, table)?, bucket))
}
