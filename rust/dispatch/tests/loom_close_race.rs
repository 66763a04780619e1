//! Loom model: exactly-once retire when `close` races a completion.
//!
//! A job carrying one admitted ticket completes on one thread while another thread closes the
//! scope and waits for it to go idle, and a third submission races the close. Invariant: the
//! callback runs exactly once, `wait_idle` returns only after it ran, every ticket is retired
//! exactly once (pending and slots back to zero, no underflow), and a submission racing close is
//! either admitted (and then cancelled) or refused with `Closed`, never lost.
#![cfg(loom)]

use std::sync::Arc;

use fluss_writer_dispatch::*;
use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};

struct Drop1;
impl UserExecutor for Drop1 {
    fn execute(&self, _job: Job) {}
}

fn scope() -> Scope {
    Scope::new(
        ScopeOptions { max_pending_callbacks: 2, error_handler: Some(Arc::new(|_: &CallbackError| {})), slow_callback_threshold: None },
        Executor::user(Arc::new(Drop1)),
        Arc::new(ManualClock::new()),
    )
}

fn model(run_job: bool) {
    loom::model(move || {
        let scope = scope();
        let ran = Arc::new(AtomicUsize::new(0));
        let t1 = scope.admit(Deadline::never()).unwrap();
        let r = ran.clone();
        let job = Job::new(
            &scope,
            0,
            t1.into(),
            0,
            Box::new(move |ctx: &mut JobContext<'_>| {
                ctx.invoke(
                    move || {
                        r.fetch_add(1, SeqCst);
                    },
                    &|| "op".into(),
                )
            }),
        );

        let completer = loom::thread::spawn(move || {
            if run_job {
                job.run();
            } else {
                drop(job);
            }
        });
        let (s2, r2) = (scope.clone(), ran.clone());
        let closer = loom::thread::spawn(move || {
            s2.close();
            s2.wait_idle(Deadline::never()).unwrap();
            // Idle means the completion finished: run (callback ran) or dropped (retired unrun).
            assert_eq!(r2.load(SeqCst), usize::from(run_job));
        });
        match scope.admit(Deadline::now()) {
            Ok(t) => scope.cancel(t),
            Err(e) => assert_eq!(e, AdmitError::Closed),
        }
        completer.join().unwrap();
        closer.join().unwrap();

        assert_eq!(ran.load(SeqCst), usize::from(run_job));
        let st = scope.stats();
        assert_eq!(st.pending, 0);
        assert_eq!(st.jobs_dropped_unrun, u64::from(!run_job));
        assert_eq!(scope.slots_in_use(), 0);
        assert_eq!(scope.admit(Deadline::now()), Err(AdmitError::Closed));
    });
}

#[test]
fn close_races_completion_run() {
    model(true);
}

#[test]
fn close_races_completion_dropped_unrun() {
    model(false);
}

/// Executor shutdown races the hand-off of a completed batch to the FIFO worker: the job either
/// runs on the worker or is dropped unrun (retired and reported), exactly one of the two, and
/// `wait_idle` returns in both cases.
#[test]
fn shutdown_races_dispatch_on_fifo_worker() {
    loom::model(|| {
        let ex = Executor::fifo("loom-close", None);
        let reported = Arc::new(AtomicUsize::new(0));
        let rep = reported.clone();
        let scope = Scope::new(
            ScopeOptions {
                max_pending_callbacks: 1,
                error_handler: Some(Arc::new(move |_: &CallbackError| {
                    rep.fetch_add(1, SeqCst);
                })),
                slow_callback_threshold: None,
            },
            ex.clone(),
            Arc::new(ManualClock::new()),
        );
        let ran = Arc::new(AtomicUsize::new(0));
        let t = scope.admit(Deadline::never()).unwrap();
        let r = ran.clone();
        let job = Job::new(
            &scope,
            0,
            t.into(),
            0,
            Box::new(move |ctx: &mut JobContext<'_>| {
                ctx.invoke(
                    move || {
                        r.fetch_add(1, SeqCst);
                    },
                    &|| "op".into(),
                )
            }),
        );
        let (s2, ex2) = (scope.clone(), ex.clone());
        let closer = loom::thread::spawn(move || {
            s2.close();
            assert!(ex2.shutdown(Deadline::never()));
        });
        scope.dispatch(job);
        closer.join().unwrap();
        scope.wait_idle(Deadline::never()).unwrap();
        let st = scope.stats();
        assert_eq!(ran.load(SeqCst) + st.jobs_dropped_unrun as usize, 1);
        assert_eq!(reported.load(SeqCst), st.jobs_dropped_unrun as usize);
        assert_eq!(st.pending, 0);
        assert_eq!(scope.slots_in_use(), 0);
    });
}
