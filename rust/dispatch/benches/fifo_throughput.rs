//! Callbacks per second on one FIFO worker.
//!
//! Jobs of `CALLBACKS_PER_JOB` callbacks are queued while the worker is held, then released; the
//! time is measured from release until `flush` returns, so it covers the worker alone (dequeue,
//! group, `Job::run`, `catch_unwind` per callback, retire). Two bodies: inline no-op closures
//! (dispatcher overhead only) and a `Vec<Box<dyn FnOnce()>>` (what a writer's batch holds:
//! one virtual call and one free per callback).
//!
//! Run: `cargo bench -p fluss-writer-dispatch --bench fifo_throughput`

use std::hint::black_box;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

use fluss_writer_dispatch::*;

const CALLBACKS_PER_JOB: usize = 256;
const JOBS: usize = 40_000;

fn run(boxed: bool, jobs: usize) -> f64 {
    let scope = Scope::new(
        ScopeOptions { max_pending_callbacks: u64::MAX, error_handler: None, slow_callback_threshold: None },
        Executor::fifo("bench", None),
        Arc::new(SystemClock::new()),
    );
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let go_rx = std::sync::Mutex::new(go_rx);
    let t = scope.admit(Deadline::never()).unwrap();
    scope.dispatch(Job::new(
        &scope,
        0,
        t.into(),
        0,
        Box::new(move |_: &mut JobContext<'_>| {
            started_tx.send(()).unwrap();
            go_rx.lock().unwrap().recv().unwrap();
        }),
    ));
    started_rx.recv().unwrap();
    for _ in 0..jobs {
        let mut tickets = TicketSet::default();
        for _ in 0..CALLBACKS_PER_JOB {
            tickets.add(scope.admit(Deadline::never()).unwrap());
        }
        let body: Box<dyn JobBody> = if boxed {
            let cbs: Vec<Box<dyn FnOnce() + Send>> = (0..CALLBACKS_PER_JOB)
                .map(|i| {
                    Box::new(move || {
                        black_box(i);
                    }) as Box<dyn FnOnce() + Send>
                })
                .collect();
            Box::new(move |ctx: &mut JobContext<'_>| {
                for cb in cbs {
                    ctx.invoke(cb, &|| String::new());
                }
            })
        } else {
            Box::new(|ctx: &mut JobContext<'_>| {
                for i in 0..CALLBACKS_PER_JOB {
                    ctx.invoke(
                        || {
                            black_box(i);
                        },
                        &|| String::new(),
                    );
                }
            })
        };
        scope.dispatch(Job::new(&scope, 0, tickets, 0, body));
    }
    let start = Instant::now();
    go_tx.send(()).unwrap();
    scope.flush(Deadline::never()).unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(scope.stats().callbacks_run, (jobs * CALLBACKS_PER_JOB) as u64);
    (jobs * CALLBACKS_PER_JOB) as f64 / secs
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` does not: then only smoke-test.
    if !std::env::args().any(|a| a == "--bench") {
        run(false, 10);
        run(true, 10);
        return;
    }
    for boxed in [false, true] {
        let mut best: f64 = 0.0;
        for _ in 0..3 {
            best = best.max(run(boxed, JOBS));
        }
        println!(
            "fifo worker, {} callbacks/job, {}: {:.1} M callbacks/s (best of 3)",
            CALLBACKS_PER_JOB,
            if boxed { "boxed FnOnce" } else { "inline no-op" },
            best / 1e6
        );
    }
}
