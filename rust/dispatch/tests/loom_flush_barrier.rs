//! Loom model: the flush barrier against concurrent admits.
//!
//! Invariants: (1) a flush never returns before a ticket admitted before it began has retired;
//! (2) a lone flush is not extended by a ticket admitted after it began: that ticket is retired
//! only after the flush has returned, so if the flush waited for it the model would never finish
//! (loom reports the livelock).
#![cfg(loom)]

use std::sync::Arc;

use fluss_writer_dispatch::*;
use loom::sync::atomic::{AtomicBool, Ordering::SeqCst};

struct Never;
impl UserExecutor for Never {
    fn execute(&self, _job: Job) {}
}

fn scope() -> Scope {
    Scope::new(
        ScopeOptions { max_pending_callbacks: 4, error_handler: None, slow_callback_threshold: None },
        Executor::user(Arc::new(Never)),
        Arc::new(ManualClock::new()),
    )
}

fn flag_job(scope: &Scope, tickets: TicketSet, flag: Arc<AtomicBool>) -> Job {
    Job::new(scope, 0, tickets, 0, Box::new(move |ctx: &mut JobContext<'_>| ctx.invoke(move || flag.store(true, SeqCst), &|| "op".into())))
}

#[test]
fn flush_waits_for_earlier_and_not_for_later_tickets() {
    loom::model(|| {
        let scope = scope();
        let ran = Arc::new(AtomicBool::new(false));
        let before = scope.admit(Deadline::never()).unwrap();
        let job = flag_job(&scope, before.into(), ran.clone());
        let flushed = Arc::new(AtomicBool::new(false));

        let (s2, f2) = (scope.clone(), flushed.clone());
        let other = loom::thread::spawn(move || {
            // Admit strictly after the flush began (it registers as a waiter when it starts).
            while s2.flush_waiters() == 0 {
                loom::thread::yield_now();
            }
            let after = s2.admit(Deadline::never()).unwrap();
            job.run();
            // Retire the later ticket only once the flush has returned.
            while !f2.load(SeqCst) {
                loom::thread::yield_now();
            }
            s2.cancel(after);
        });

        scope.flush(Deadline::never()).unwrap();
        assert!(ran.load(SeqCst), "flush returned before an earlier ticket retired");
        flushed.store(true, SeqCst);
        other.join().unwrap();
        assert_eq!(scope.stats().pending, 0);
    });
}

#[test]
fn concurrent_flushes_never_return_early() {
    loom::model(|| {
        let scope = scope();
        let ran_a = Arc::new(AtomicBool::new(false));
        let ran_b = Arc::new(AtomicBool::new(false));
        let a = scope.admit(Deadline::never()).unwrap();
        let job_a = flag_job(&scope, a.into(), ran_a.clone());

        let (s2, rb) = (scope.clone(), ran_b.clone());
        let submitter = loom::thread::spawn(move || {
            let b = s2.admit(Deadline::never()).unwrap();
            // b's admit has returned: a flush that starts from here on must wait for it.
            let job_b = flag_job(&s2, b.into(), rb);
            job_a.run();
            job_b.run();
        });
        let (s3, ra) = (scope.clone(), ran_a.clone());
        let flusher = loom::thread::spawn(move || {
            s3.flush(Deadline::never()).unwrap();
            assert!(ra.load(SeqCst), "concurrent flush returned before ticket a retired");
        });
        scope.flush(Deadline::never()).unwrap();
        assert!(ran_a.load(SeqCst), "flush returned before ticket a retired");
        submitter.join().unwrap();
        flusher.join().unwrap();
        scope.flush(Deadline::never()).unwrap();
        assert!(ran_b.load(SeqCst));
        assert_eq!(scope.stats().pending, 0);
    });
}
