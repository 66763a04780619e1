//! fluss-writer-dispatch: completion callbacks dispatched from batch completions.
//!
//! This crate is the heart of fluss-writer's callback contract (C1-C12 in `docs/callback-contract.md`). It
//! has no Arrow, tokio, pyo3 or cxx dependency, so its concurrency can be model-checked with
//! loom (see `README.md`), and all time comes through an injected [`Clock`].
//!
//! # What it promises
//!
//! * **Exactly once (C1).** Every admitted [`Ticket`] is retired exactly once: by the [`Job`]
//!   that carries it (run, or dropped unrun), or by [`Scope::cancel`].
//! * **Where and in which order (C2, C3, C9).** Jobs run on executor threads, never inline on the
//!   submitter. [`Executor::fifo`] runs jobs one at a time in hand-off order;
//!   [`Executor::sharded`] keeps that order per shard key; a [`UserExecutor`] gets hand-off order
//!   only.
//! * **Admission (C5).** One slot per callback, FIFO-fair ([`Permits`]), waited for within one
//!   [`Deadline`] shared with the buffer-memory wait; never blocking inside a callback.
//!   A slot is released only after its callback returned and its captures were dropped.
//! * **Flush (C6).** [`Scope::flush`] waits for the tickets admitted before it; called from a
//!   callback it fails at once. See [`barrier`] for the exact bound under concurrent flushes.
//! * **Close (C7).** [`Scope::close`] stops admitting, [`Scope::wait_idle`] drains;
//!   [`Executor::shutdown`] drains workers with a deadline.
//! * **Isolation (C8).** A panicking callback is caught, counted and reported to the scope's
//!   [`ErrorHandler`] with its operation's description; the worker carries on.
//! * **Cost (C12).** One job per batch; admission is two atomic RMWs; no allocation or lock per
//!   callback in the dispatcher.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use fluss_writer_dispatch::*;
//!
//! let scope = Scope::new(ScopeOptions::default(), Executor::fifo("callbacks", None),
//!                        Arc::new(SystemClock::new()));
//! let mut tickets = TicketSet::default();
//! tickets.add(scope.admit(Deadline::never()).unwrap());
//! let (tx, rx) = std::sync::mpsc::channel();
//! let callback = move |offset: u64| tx.send(offset).unwrap();
//! let ack = scope.clock().now_nanos();
//! scope.dispatch(Job::new(&scope, 0, tickets, ack, Box::new(move |ctx: &mut JobContext<'_>| {
//!     ctx.invoke(|| callback(17), &|| "append to db.t bucket 0 offset 17".to_string());
//! })));
//! scope.flush(Deadline::never()).unwrap();
//! assert_eq!(rx.recv().unwrap(), 17);
//! assert_eq!(scope.stats().pending, 0);
//! ```
//!
//! # Modules, in the order a job flows
//!
//! * [`clock`], [`budget`]: time and deadlines.
//! * [`permits`]: the FIFO-fair semaphore behind admission (slots and buffer bytes).
//! * [`scope`]: per-writer admission, tickets, flush, close, error reporting.
//! * [`job`]: one completed batch and its callbacks.
//! * [`executor`]: FIFO, sharded and user executors, worker groups, shutdown.
//! * [`barrier`]: the flush barrier's algorithm.
//! * [`context`]: the in-callback flag.
//! * [`stats`]: counters and latency histograms.
//! * [`slow`]: slow-callback detection on a coarse clock.

#![warn(missing_docs)]

pub mod barrier;
pub mod budget;
pub mod clock;
pub mod context;
pub mod executor;
pub mod interrupt;
pub mod job;
pub(crate) mod loom;
pub mod permits;
pub mod scope;
pub mod slow;
pub mod stats;
#[cfg(all(test, not(loom)))]
mod test_util;

pub use barrier::FlushError;
pub use budget::{Deadline, WaitBudget};
pub use clock::{Clock, ManualClock, SystemClock};
pub use context::in_callback;
pub use executor::{Executor, UserExecutor, WorkerHooks, GROUP_CAP};
pub use job::{Job, JobBody, JobContext};
pub use permits::{AcquireError, Permits};
pub use scope::{AdmitError, CallbackError, ErrorHandler, Scope, ScopeOptions, ScopeStats, Ticket, TicketSet};
pub use stats::{ExecutorStats, Histogram, LatencyBuckets, LatencyBucketsSnapshot, LatencySnapshot, LATENCY_BUCKET_BOUNDS_NANOS};

#[cfg(test)]
mod send_sync {
    //! Compile-time checks that the public handles can cross threads.
    use super::*;

    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}

    #[test]
    fn handles_are_send_and_sync() {
        send_sync::<Scope>();
        send_sync::<Executor>();
        send_sync::<Permits>();
        send_sync::<ManualClock>();
        send_sync::<SystemClock>();
        send_sync::<CallbackError>();
        send_sync::<Ticket>();
        send_sync::<TicketSet>();
        send::<Job>();
    }
}
