//! The panic backstop of every Python entry point.
//!
//! No input should make the binding or the core panic; if one does anyway (a bug), Python must
//! see a `fluss_writer.InternalError` (a `FlussWriterError`, code INTERNAL), not pyo3's
//! `PanicException` (a `BaseException`, which `except Exception` does not catch), and stderr must
//! not get a Rust backtrace.
//!
//! * [`entry_points!`] wraps a `#[pymethods]` block or `#[pyfunction]` items: it emits the
//!   attribute itself and runs every method body inside [`guard`]. A method returning `T` is
//!   rewritten to return `PyResult<T>` (the same to Python). Every `#[pymethods]` and
//!   `#[pyfunction]` of this crate goes through it (tests-py/errors/test_panics.py checks the
//!   sources), and the vectorcall entry points of `fastcall.rs` use [`guard`] too.
//! * [`install_panic_hook`]: the panic hook of this extension module (a cdylib has its own copy
//!   of `std`, so this affects no other extension) records the message and location of a panic
//!   for the error text and sends them to the `fluss_writer` logger at ERROR (the backtrace, when
//!   `RUST_BACKTRACE` asks for one, at DEBUG), never straight to stderr.

use std::cell::RefCell;
use std::panic::AssertUnwindSafe;

use fluss_writer::ClientCode;
use pyo3::prelude::*;

/// Panic if the test hook asks for it (called by row conversion). Without the `test-hooks`
/// feature (every release build) it is empty.
#[inline(always)]
pub fn maybe_test_panic() {
    #[cfg(feature = "test-hooks")]
    crate::test_hooks::maybe_panic_on_this_write();
}

thread_local! {
    /// "message at file:line" of the last panic on this thread, set by the hook.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Run an entry point's body; a panic becomes an `InternalError`.
#[inline(always)]
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    // A forced unwind (CPython ending a daemon thread at finalization, while Python code that
    // this entry point called waits for the GIL) must not reach the catch below: park instead.
    // The exit gate (crate::gil): counted while inside; parks a thread that calls in after exit.
    let _pass = crate::gil::entry_pass();
    let body = || {
        let stop = crate::gil::ForcedUnwindStop::arm();
        let r = f();
        stop.disarm();
        r
    };
    match std::panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(payload) => Err(internal_error(payload)),
    }
}

/// The `InternalError` for a caught panic payload.
pub fn internal_error(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into())
    });
    // The payload may own Python objects: drop it while attached (we are, in an entry point).
    drop(payload);
    crate::error::client(ClientCode::Internal, format!("internal error in fluss-writer (a bug, please report it): panicked: {what}"))
}

/// Install the module's panic hook (once, at import).
pub fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let msg = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            let what = match info.location() {
                Some(l) => format!("{msg} at {}:{}", l.file(), l.line()),
                None => msg.to_string(),
            };
            let thread = std::thread::current().name().map(str::to_string).unwrap_or_else(|| "unnamed".into());
            let bt = std::backtrace::Backtrace::capture();
            log::error!(target: "fluss_writer", "internal error (a bug, please report it): thread {thread:?} panicked: {what}");
            if bt.status() == std::backtrace::BacktraceStatus::Captured {
                log::debug!(target: "fluss_writer", "backtrace of that panic:\n{bt}");
            }
            let _ = LAST_PANIC.try_with(|p| p.try_borrow_mut().map(|mut p| *p = Some(what)));
        }));
    });
}

/// Emit `#[pymethods]` blocks and `#[pyfunction]`s whose bodies run inside [`guard`].
///
/// ```ignore
/// entry_points! {
///     impl PyThing {
///         #[getter]
///         fn closed(&self) -> bool { ... }            // becomes -> PyResult<bool>
///     }
/// }
/// entry_points! {
///     #[pyfunction]
///     pub fn connect(...) -> PyResult<PyConnection> { ... }
/// }
/// ```
macro_rules! entry_points {
    // A #[pymethods] block.
    (impl $ty:ident { $($items:tt)* }) => {
        $crate::entry::entry_points!(@munch (impl $ty) [] $($items)*);
    };
    // #[pyfunction] items (each with its own #[pyfunction] attribute).
    (#[pyfunction] $($items:tt)*) => {
        $crate::entry::entry_points!(@munch (fns) [] #[pyfunction] $($items)*);
    };
    (@munch (impl $ty:ident) [$($out:tt)*]) => {
        #[pymethods]
        impl $ty { $($out)* }
    };
    (@munch (fns) [$($out:tt)*]) => {
        $($out)*
    };
    (@munch $k:tt [$($out:tt)*]
        $(#[$($m:tt)*])* $vis:vis fn $name:ident $(<$($lt:lifetime),*>)? ($($args:tt)*) -> PyResult<$t:ty> $body:block
        $($rest:tt)*) => {
        $crate::entry::entry_points!(@munch $k [$($out)*
            $(#[$($m)*])* $vis fn $name $(<$($lt),*>)? ($($args)*) -> PyResult<$t> { $crate::entry::guard(|| $body) }
        ] $($rest)*);
    };
    (@munch $k:tt [$($out:tt)*]
        $(#[$($m:tt)*])* $vis:vis fn $name:ident $(<$($lt:lifetime),*>)? ($($args:tt)*) -> $t:ty $body:block
        $($rest:tt)*) => {
        $crate::entry::entry_points!(@munch $k [$($out)*
            $(#[$($m)*])* $vis fn $name $(<$($lt),*>)? ($($args)*) -> PyResult<$t> { $crate::entry::guard(|| Ok($body)) }
        ] $($rest)*);
    };
    (@munch $k:tt [$($out:tt)*]
        $(#[$($m:tt)*])* $vis:vis fn $name:ident $(<$($lt:lifetime),*>)? ($($args:tt)*) $body:block
        $($rest:tt)*) => {
        $crate::entry::entry_points!(@munch $k [$($out)*
            $(#[$($m)*])* $vis fn $name $(<$($lt),*>)? ($($args)*) -> PyResult<()> { $crate::entry::guard(|| Ok($body)) }
        ] $($rest)*);
    };
}
pub(crate) use entry_points;
