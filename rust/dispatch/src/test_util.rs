//! Helpers shared by the unit tests.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::{CallbackError, ErrorHandler, Executor, Job, Scope, ScopeOptions, SystemClock, TicketSet, UserExecutor};

/// Polls `cond` until true; panics after 10 s so a broken test fails instead of hanging.
pub(crate) fn eventually(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < Duration::from_secs(10), "timed out: {what}");
        std::thread::yield_now();
    }
}

/// An error handler that records every error.
pub(crate) fn recording_handler() -> (ErrorHandler, Arc<Mutex<Vec<CallbackError>>>) {
    let errors = Arc::new(Mutex::new(Vec::new()));
    let e2 = errors.clone();
    let h: ErrorHandler = Arc::new(move |e: &CallbackError| e2.lock().unwrap().push(e.clone()));
    (h, errors)
}

/// A user executor that keeps jobs until the test runs or drops them.
#[derive(Default)]
pub(crate) struct Holding {
    pub(crate) jobs: Mutex<Vec<Job>>,
}

impl UserExecutor for Holding {
    fn execute(&self, job: Job) {
        self.jobs.lock().unwrap().push(job);
    }
}

impl Holding {
    pub(crate) fn take(&self) -> Vec<Job> {
        std::mem::take(&mut *self.jobs.lock().unwrap())
    }
}

/// A scope on a [`Holding`] executor with `max` slots and a recording error handler.
pub(crate) fn held_scope(max: u64) -> (Scope, Arc<Holding>, Arc<Mutex<Vec<CallbackError>>>) {
    let holding = Arc::new(Holding::default());
    let (h, errors) = recording_handler();
    let scope = Scope::new(
        ScopeOptions { max_pending_callbacks: max, error_handler: Some(h), slow_callback_threshold: None },
        Executor::user(holding.clone()),
        Arc::new(SystemClock::new()),
    );
    (scope, holding, errors)
}

/// A job of `scope` that runs `f` as its only callback.
pub(crate) fn one_callback_job(scope: &Scope, key: u64, tickets: TicketSet, f: impl FnOnce() + Send + 'static) -> Job {
    Job::new(
        scope,
        key,
        tickets,
        scope.clock().now_nanos(),
        Box::new(move |ctx: &mut crate::JobContext<'_>| ctx.invoke(f, &|| "test op".to_string())),
    )
}
