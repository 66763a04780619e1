//! Which thread is running callbacks.
//!
//! A thread-local depth counter is raised for the whole of [`Job::run`](crate::Job::run), on our
//! own workers and on a user executor's threads alike. Blocking entry points consult
//! [`in_callback`] and fail fast instead of deadlocking: acquiring permits fails with
//! `WouldBlockInCallback` where it would wait (C5), and flush / wait-idle fail with
//! `CalledFromCallback` (C6). The flag is per thread, not per writer: a callback of writer A that
//! flushes writer B also fails fast, because B's callbacks may be queued behind it on the same
//! worker.

use std::cell::Cell;

#[cfg(not(loom))]
std::thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static WORKER_OF: Cell<u64> = const { Cell::new(0) };
}

// loom's `thread_local!` has no `const` form.
#[cfg(loom)]
loom::thread_local! {
    static DEPTH: Cell<u32> = Cell::new(0);
    static WORKER_OF: Cell<u64> = Cell::new(0);
}

/// True while the current thread is running a dispatcher job (on one of our workers, or inside
/// [`Job::run`](crate::Job::run) on a user executor's thread).
pub fn in_callback() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// Marks the current thread as running a job until dropped (also on unwind).
pub(crate) struct CallbackGuard(());

impl CallbackGuard {
    pub(crate) fn enter() -> CallbackGuard {
        DEPTH.with(|d| d.set(d.get() + 1));
        CallbackGuard(())
    }
}

impl Drop for CallbackGuard {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}

/// Records that the current thread is a worker of the executor with id `id` (0 = none).
pub(crate) fn set_worker_of(id: u64) {
    WORKER_OF.with(|w| w.set(id));
}

/// The id of the executor whose worker the current thread is (0 = none).
pub(crate) fn worker_of() -> u64 {
    WORKER_OF.with(|w| w.get())
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn guard_nests_and_unwinds() {
        assert!(!in_callback());
        {
            let _a = CallbackGuard::enter();
            assert!(in_callback());
            {
                let _b = CallbackGuard::enter();
                assert!(in_callback());
            }
            assert!(in_callback());
        }
        assert!(!in_callback());
        let r = std::panic::catch_unwind(|| {
            let _g = CallbackGuard::enter();
            panic!("boom");
        });
        assert!(r.is_err());
        assert!(!in_callback());
    }
}
