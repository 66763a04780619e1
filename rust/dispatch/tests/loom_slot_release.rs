//! Loom model: a callback slot is released only after the callback's captures were dropped.
//!
//! With one slot, a second submitter blocks in `admit` until the running job retires its ticket.
//! Invariant: when that `admit` returns, the first callback's capture has already been dropped
//! (C5: "the slot is released after the callback returns and its captures are destroyed").
#![cfg(loom)]

use std::sync::Arc;

use fluss_writer_dispatch::*;
use loom::sync::atomic::{AtomicBool, Ordering::SeqCst};

struct Never;
impl UserExecutor for Never {
    fn execute(&self, _job: Job) {}
}

struct Capture(Arc<AtomicBool>);
impl Drop for Capture {
    fn drop(&mut self) {
        self.0.store(true, SeqCst);
    }
}

#[test]
fn slot_released_after_captures_dropped() {
    loom::model(|| {
        let scope = Scope::new(
            ScopeOptions { max_pending_callbacks: 1, error_handler: None, slow_callback_threshold: None },
            Executor::user(Arc::new(Never)),
            Arc::new(ManualClock::new()),
        );
        let dropped = Arc::new(AtomicBool::new(false));
        let capture = Capture(dropped.clone());
        let t = scope.admit(Deadline::never()).unwrap();
        let job =
            Job::new(&scope, 0, t.into(), 0, Box::new(move |ctx: &mut JobContext<'_>| ctx.invoke(move || drop(capture), &|| "op".into())));
        let worker = loom::thread::spawn(move || job.run());
        let t2 = scope.admit(Deadline::never()).unwrap();
        assert!(dropped.load(SeqCst), "slot was handed on before the capture was dropped");
        scope.cancel(t2);
        worker.join().unwrap();
        assert_eq!(scope.slots_in_use(), 0);
    });
}
