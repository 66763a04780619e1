//! Test hooks that force a panic inside an entry point (tests-py/errors/test_panics.py),
//! compiled only with the cargo feature `test-hooks` (tests-py/run.sh, step "test hooks"):
//! never in a release build of the binding. `fluss_writer.testing` wraps them
//! (`panic_now`, `panic_in_method`, `panic_on_next_write`) when they are there.

use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::prelude::*;

use crate::entry::entry_points;

/// The next row conversion (append, upsert, delete) panics.
static PANIC_ON_NEXT_WRITE: AtomicBool = AtomicBool::new(false);

/// Panic if [`_panic_on_next_write`] asked for it (through `entry::maybe_test_panic`).
#[inline(always)]
pub fn maybe_panic_on_this_write() {
    if PANIC_ON_NEXT_WRITE.load(Ordering::Relaxed) && PANIC_ON_NEXT_WRITE.swap(false, Ordering::Relaxed) {
        panic!("panic forced by fluss_writer.testing.panic_on_next_write()");
    }
}

entry_points! {
    #[pyfunction]
    /// Test hook: panic inside this entry point (fluss_writer.testing.panic_now).
    pub fn _panic_for_test(message: String) -> PyResult<()> {
        panic!("{message}")
    }
}

entry_points! {
    #[pyfunction]
    /// Test hook: make the next append/upsert/delete panic inside its entry point.
    pub fn _panic_on_next_write() -> () {
        PANIC_ON_NEXT_WRITE.store(true, Ordering::Relaxed)
    }
}
