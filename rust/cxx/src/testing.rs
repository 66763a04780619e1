//! `fluss_writer::testing` in C++: read-back and fault injection on the embedded engine behind a
//! connection, and the dispatcher benchmark (C++ callables run as the core runs them: one job per
//! batch on a FIFO worker, one `WriteCompletion` per job updated between callbacks).

use std::sync::Arc;
use std::time::{Duration, Instant};

use fluss_writer::dispatch::{Deadline, Executor, Job, JobContext, Scope, ScopeOptions, SystemClock, TicketSet};
use fluss_writer::embedded::{EmbeddedEngine, Fault, ScannedRow};
use fluss_writer::{ClientCode, Error, Result, TablePath, WriteCompletion};

use crate::bridge::ffi::{FfiCallback, FfiFault, FfiStatus};
use crate::callbacks::CxxCallback;
use crate::handles::RConnection;
use crate::status::{fill, guard, guard_or, status};
use crate::values::RRow;

pub(crate) fn engine(c: &RConnection) -> Result<&Arc<EmbeddedEngine>> {
    c.get()?.embedded().ok_or_else(|| Error::client(ClientCode::Unsupported, "fluss_writer::testing needs an embedded connection"))
}

pub(crate) fn testing_inject_fault(c: &RConnection, db: &str, table: &str, bucket: i32, f: &FfiFault) -> FfiStatus {
    status(guard(|| {
        let fault = match f.kind {
            0 => Fault::Error { code: f.code, message: f.message.clone(), times: f.times },
            1 => Fault::Delay { delay: Duration::from_millis(f.delay_ms), times: f.times },
            2 => Fault::DropConnection { after_apply: f.after_apply, times: f.times },
            k => return Err(Error::client(ClientCode::InvalidConfig, format!("unknown fault kind {k}"))),
        };
        engine(c)?.faults().inject(&TablePath::new(db, table)?, bucket, fault);
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

// ===== dispatcher benchmark =====

/// C++ callables queued for [`bench_run`].
pub struct RBench {
    per_job: usize,
    callbacks: Vec<CxxCallback>,
}

pub(crate) fn bench_new(callbacks_per_job: usize) -> Box<RBench> {
    guard_or(
        || Box::new(RBench { per_job: 1, callbacks: Vec::new() }),
        || Box::new(RBench { per_job: callbacks_per_job.max(1), callbacks: Vec::new() }),
    )
}

pub(crate) fn bench_push(b: &mut RBench, cb: FfiCallback) {
    let cb = CxxCallback::new(cb);
    guard_or(
        || (),
        move || {
            if let Some(cb) = cb {
                b.callbacks.push(cb)
            }
        },
    )
}

/// Admit one slot per callable, dispatch them as jobs of `per_job` callables to a fresh FIFO
/// worker, and wait until every callable ran and was destroyed and every slot was released.
/// Returns the seconds that took.
pub(crate) fn bench_run(b: &mut RBench) -> f64 {
    guard_or(|| -1.0, || bench_run_inner(b))
}

fn bench_run_inner(b: &mut RBench) -> f64 {
    let n = b.callbacks.len() as u64;
    let scope = Scope::new(
        ScopeOptions { max_pending_callbacks: n.max(1), ..ScopeOptions::default() },
        Executor::fifo("fluss-writer-bench", None),
        Arc::new(SystemClock::new()),
    );
    let table = Arc::new(TablePath { database: "bench".into(), table: "t".into() });
    let mut callbacks = std::mem::take(&mut b.callbacks).into_iter();
    let start = Instant::now();
    let mut offset = 0i64;
    loop {
        let chunk: Vec<CxxCallback> = callbacks.by_ref().take(b.per_job).collect();
        if chunk.is_empty() {
            break;
        }
        let mut tickets = TicketSet::default();
        for _ in 0..chunk.len() {
            tickets.add(scope.admit(Deadline::never()).expect("slots for every callable"));
        }
        let base = offset;
        offset += chunk.len() as i64;
        let table = table.clone();
        let body = move |ctx: &mut JobContext<'_>| {
            let mut c = WriteCompletion {
                error: None,
                table,
                table_id: 1,
                partition: None,
                partition_id: None,
                bucket: 0,
                offset: base,
                log_end_offset: -1,
                bucket_results: Vec::new(),
            };
            for (i, cb) in chunk.into_iter().enumerate() {
                c.offset = base + i as i64;
                ctx.invoke(|| cb.call(&c), &|| c.describe());
            }
        };
        let now = scope.clock().now_nanos();
        scope.dispatch(Job::new(&scope, 0, tickets, now, Box::new(body)));
    }
    scope.flush(Deadline::never()).expect("flush outside callbacks");
    start.elapsed().as_secs_f64()
}
