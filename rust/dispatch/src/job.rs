//! Jobs: one completed batch with all its callbacks.
//!
//! A [`Job`] is created when a batch completes, carries the batch's [`TicketSet`] and a
//! [`JobBody`] (core's code that builds each record's completion and calls its callback through
//! [`JobContext::invoke`]), and is handed to an executor. There is one job per batch, never one
//! per record (C12).
//!
//! Exactly one of two things retires a job's tickets:
//!
//! * [`Job::run`]: marks the thread as running callbacks ([`in_callback`](crate::in_callback)),
//!   runs the body, and retires the tickets only *after* the body has returned, i.e. after every
//!   callable and its captures were consumed or dropped (C5: "the slot is released after the
//!   callback returns and its captures are destroyed").
//! * `Drop` of a job that never ran (an executor that discarded it, a shutdown): the body is
//!   dropped, the tickets are retired anyway so that flush and close never hang, and a
//!   [`CallbackError`] "job dropped without running" goes to the error handler.
//!
//! Panics in callbacks are caught per callback (C8); a panic in the body outside any callback is
//! caught too. Neither stops the worker.

use std::any::Any;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::context::CallbackGuard;
use crate::scope::{CallbackError, Scope, TicketSet};

/// The code of one job: invokes the batch's callbacks, each through [`JobContext::invoke`].
///
/// Implemented for every `FnOnce(&mut JobContext<'_>) + Send + 'static`.
pub trait JobBody: Send + 'static {
    /// Runs the callbacks. Everything the body owns is dropped when this returns.
    fn run(self: Box<Self>, ctx: &mut JobContext<'_>);
}

impl<F> JobBody for F
where
    F: FnOnce(&mut JobContext<'_>) + Send + 'static,
{
    fn run(self: Box<Self>, ctx: &mut JobContext<'_>) {
        (*self)(ctx)
    }
}

struct JobInner {
    scope: Scope,
    shard_key: u64,
    tickets: TicketSet,
    ack_nanos: u64,
    body: Box<dyn JobBody>,
}

/// One completed batch with all its callbacks, ready to run on an executor.
pub struct Job {
    inner: Option<JobInner>,
}

impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Job");
        if let Some(i) = &self.inner {
            d.field("shard_key", &i.shard_key).field("tickets", &i.tickets.len()).field("ack_nanos", &i.ack_nanos);
        }
        d.finish()
    }
}

impl Job {
    /// A job of `scope` carrying `tickets`, acknowledged at clock reading `ack_nanos`.
    /// `shard_key` picks the worker of a sharded executor.
    pub fn new(scope: &Scope, shard_key: u64, tickets: TicketSet, ack_nanos: u64, body: Box<dyn JobBody>) -> Job {
        Job { inner: Some(JobInner { scope: scope.clone(), shard_key, tickets, ack_nanos, body }) }
    }

    /// The key that selects a worker of a sharded executor.
    pub fn shard_key(&self) -> u64 {
        self.inner.as_ref().map_or(0, |i| i.shard_key)
    }

    /// Number of tickets this job retires.
    pub fn tickets(&self) -> u64 {
        self.inner.as_ref().map_or(0, |i| i.tickets.len())
    }

    /// The scope this job belongs to.
    pub fn scope(&self) -> Option<&Scope> {
        self.inner.as_ref().map(|i| &i.scope)
    }

    /// Runs the job on the current thread: what a user executor calls.
    ///
    /// Sets the in-callback flag for the duration, records the ack-to-callback latency (clock now
    /// minus `ack_nanos`, at the start), runs the body, and then, after the body returned and
    /// dropped every callable, publishes the counters and retires the tickets. Latency and job
    /// counts go to the stats of the scope's executor, whichever thread runs the job; the latency
    /// also to the scope's own [`Scope::ack_to_callback_buckets`].
    pub fn run(mut self) {
        let Some(JobInner { scope, tickets, ack_nanos, body, .. }) = self.inner.take() else {
            return;
        };
        let latency = scope.clock().now_nanos().saturating_sub(ack_nanos);
        let guard = CallbackGuard::enter();
        let mut ctx = JobContext { scope: &scope, callbacks: 0, errors: 0, ticked: 0 };
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| body.run(&mut ctx))) {
            ctx.errors += 1;
            scope.report_error(&CallbackError {
                message: panic_message(&*payload),
                operation: "completion job (outside any callback)".to_string(),
            });
        }
        let (callbacks, errors, ticked) = (ctx.callbacks, ctx.errors, ctx.ticked);
        // The body and every capture are gone now. Publish counters before retiring, so that
        // whoever a retire releases (flush, wait_idle) sees them.
        scope.count_callbacks(callbacks, errors);
        scope.executor().counters().record_job(latency, callbacks);
        scope.record_ack_to_callback(latency);
        if let Some(watch) = scope.slow_watch() {
            // The callbacks no tick fell inside ran "0 ms": counted here, once per job.
            watch.run_time.record_zeros(callbacks - ticked);
        }
        scope.retire(tickets);
        drop(guard);
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        let Some(JobInner { scope, shard_key, tickets, body, .. }) = self.inner.take() else {
            return;
        };
        let dropped = catch_unwind(AssertUnwindSafe(move || drop(body)));
        scope.count_dropped_job();
        scope.report_error(&CallbackError {
            message: "job dropped without running".to_string(),
            operation: format!("completion job with {} callback(s), shard key {shard_key}", tickets.len()),
        });
        if let Err(payload) = dropped {
            log::error!("dropping an unrun job panicked: {}", panic_message(&*payload));
        }
        scope.retire(tickets);
    }
}

/// What a [`JobBody`] uses to invoke callbacks.
pub struct JobContext<'a> {
    scope: &'a Scope,
    callbacks: u64,
    errors: u64,
    /// Callbacks of this job that a tick of the coarse clock fell inside (recorded in the run
    /// time histogram as they ended; the others are recorded as 0 when the job ends).
    ticked: u64,
}

impl JobContext<'_> {
    /// Runs one callback under `catch_unwind` (C8).
    ///
    /// A panic is caught, counted as a callback error and reported to the scope's error handler
    /// with `operation()` as the operation's description (`operation` is only called on error).
    /// The callable and its captures are dropped before this returns, panic or not.
    #[inline]
    pub fn invoke<F: FnOnce()>(&mut self, f: F, operation: &dyn Fn() -> String) {
        self.callbacks += 1;
        let started = self.scope.slow_watch().map(|_| crate::slow::now_ms());
        if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
            self.on_panic(payload, operation);
        }
        if let (Some(started), Some(watch)) = (started, self.scope.slow_watch()) {
            let ran = crate::slow::now_ms().saturating_sub(started);
            // The same two readings time the run time histogram: no other clock read.
            if ran > 0 {
                self.ticked += 1;
                watch.run_time.record(ran.saturating_mul(1_000_000));
                if ran >= watch.threshold_ms {
                    self.on_slow(ran, operation);
                }
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn on_slow(&mut self, ran_ms: u64, operation: &dyn Fn() -> String) {
        let Some(watch) = self.scope.slow_watch() else { return };
        let Some(unlogged) = watch.record(crate::slow::now_ms()) else { return };
        let operation = catch_unwind(AssertUnwindSafe(operation)).unwrap_or_else(|_| "<operation description panicked>".to_string());
        let more = if unlogged > 0 { format!(" ({unlogged} more slow callbacks since the last warning)") } else { String::new() };
        log::warn!(
            "slow callback: the callback of {operation} ran for about {ran_ms} ms (threshold {} ms){more}; {}",
            watch.threshold_ms,
            self.scope.executor().stall_advice()
        );
    }

    #[cold]
    #[inline(never)]
    fn on_panic(&mut self, payload: Box<dyn Any + Send>, operation: &dyn Fn() -> String) {
        self.errors += 1;
        let operation = catch_unwind(AssertUnwindSafe(operation)).unwrap_or_else(|_| "<operation description panicked>".to_string());
        self.scope.report_error(&CallbackError { message: panic_message(&*payload), operation });
        // The payload may itself panic on drop; contain it.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    }

    /// The scope of the running job.
    pub fn scope(&self) -> &Scope {
        self.scope
    }

    /// Callbacks invoked so far by this job.
    pub fn callbacks_invoked(&self) -> u64 {
        self.callbacks
    }
}

/// The text of a panic payload (`&str` or `String`), or a placeholder.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_string()
    }
}
