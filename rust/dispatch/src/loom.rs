//! Sync shim: `std` normally, [loom](https://docs.rs/loom) under `cfg(loom)`.
//!
//! Modelled on tokio's `src/loom/`. Every primitive whose interleavings matter for the
//! dispatcher's invariants (mutexes, condition variables, the atomics of the permits and of the
//! flush barrier, worker threads, the in-callback thread-local, declared in `context.rs` with `loom::thread_local!` under loom) is imported from here, so the
//! models in `tests/loom_*.rs` explore them. Statistics counters and the test clock use plain
//! `std` atomics on purpose: they carry no synchronisation the invariants rely on, and keeping
//! them out of the model keeps its state space small.
//!
//! Under loom, `Condvar::wait_timeout` does not time out (it waits for a notification), so the
//! models use `Deadline::never()`.

#[cfg(not(loom))]
pub(crate) mod sync {
    pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};

    pub(crate) mod atomic {
        pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    }
}

#[cfg(loom)]
pub(crate) mod sync {
    pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};

    pub(crate) mod atomic {
        pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    }
}

#[cfg(not(loom))]
pub(crate) mod thread {
    pub(crate) use std::thread::{Builder, JoinHandle};
}

#[cfg(loom)]
pub(crate) mod thread {
    pub(crate) use loom::thread::{Builder, JoinHandle};
}

use std::sync::PoisonError;

/// Locks `m`, ignoring poisoning: no code in this crate panics while holding a lock (callbacks run
/// outside every lock), and a poisoned queue must not take the dispatcher down with it.
pub(crate) fn lock<T>(m: &sync::Mutex<T>) -> sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Waits on `cv` for at most `dur` (`None` = until notified), ignoring poisoning.
pub(crate) fn wait<'a, T>(cv: &sync::Condvar, g: sync::MutexGuard<'a, T>, dur: Option<std::time::Duration>) -> sync::MutexGuard<'a, T> {
    match dur {
        None => cv.wait(g).unwrap_or_else(PoisonError::into_inner),
        Some(d) => cv.wait_timeout(g, d).unwrap_or_else(PoisonError::into_inner).0,
    }
}
