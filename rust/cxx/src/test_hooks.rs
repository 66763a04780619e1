//! Hooks for our own tests and benchmarks, compiled only with the cargo feature `test-hooks` (the
//! CMake option FLUSS_WRITER_TEST_HOOKS; never in a shipped package): the forced panic behind
//! `fluss_writer::testing::ForcePanicInNextCall`, and the dispatcher benchmark behind
//! `RunThroughDispatcher` (C++ callables run as the core runs them: one job per batch on a FIFO
//! worker, one `WriteCompletion` per job updated between callbacks).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use fluss_writer::dispatch::{Deadline, Executor, Job, JobContext, Scope, ScopeOptions, SystemClock, TicketSet};
use fluss_writer::{TablePath, WriteCompletion};

use crate::bridge::ffi::FfiCallback;
use crate::callbacks::CxxCallback;
use crate::status::guard_or;

// ===== forced panics =====

/// Set by `testing_force_panic`: the next guarded call panics inside its guard.
static FORCE_PANIC: AtomicBool = AtomicBool::new(false);

/// The test hook behind `fluss_writer::testing::ForcePanicInNextCall`.
pub(crate) fn testing_force_panic() {
    FORCE_PANIC.store(true, Ordering::SeqCst);
}

/// Panic if `testing_force_panic` asked for it (called by `status::guard`).
#[inline]
pub(crate) fn forced_panic() {
    if FORCE_PANIC.load(Ordering::Relaxed) && FORCE_PANIC.swap(false, Ordering::SeqCst) {
        panic!("forced by fluss_writer::testing::ForcePanicInNextCall");
    }
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
