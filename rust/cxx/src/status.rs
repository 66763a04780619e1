//! Errors across the bridge: a core [`Error`] becomes an [`FfiStatus`] (code, message,
//! retriable); a panic inside a bridge function becomes `INTERNAL` instead of an abort.

use std::panic::{catch_unwind, AssertUnwindSafe};

use fluss_writer::{ClientCode, Error, Result};

use crate::bridge::ffi::FfiStatus;

/// Success.
pub(crate) fn ok() -> FfiStatus {
    FfiStatus::default()
}

/// The status of an error.
pub(crate) fn status_of(e: &Error) -> FfiStatus {
    FfiStatus { code: e.code(), retriable: e.is_retriable(), message: e.message().to_string() }
}

/// The status of a result.
pub(crate) fn status(r: Result<()>) -> FfiStatus {
    match r {
        Ok(()) => ok(),
        Err(e) => status_of(&e),
    }
}

/// Run `f`, turning a panic into an `INTERNAL` error.
pub(crate) fn guard<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(|| {
        // The test hook `ForcePanicInNextCall` (cargo feature `test-hooks` only).
        #[cfg(feature = "test-hooks")]
        crate::test_hooks::forced_panic();
        f()
    })) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            Err(Error::internal(format!("panic inside the C++ binding: {msg}")))
        }
    }
}

/// Run a fallible call returning `T`; on error fill `st` and return `fallback`.
pub(crate) fn fill<T>(st: &mut FfiStatus, fallback: impl FnOnce() -> T, f: impl FnOnce() -> Result<T>) -> T {
    match guard(f) {
        Ok(v) => {
            *st = ok();
            v
        }
        Err(e) => {
            *st = status_of(&e);
            fallback()
        }
    }
}

/// Run an infallible bridge body; a panic yields `fallback()` instead of reaching the cxx shim
/// (which would abort). For getters, setters and destructors.
#[inline]
pub(crate) fn guard_or<T>(fallback: impl FnOnce() -> T, f: impl FnOnce() -> T) -> T {
    match guard(|| Ok(f())) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("fluss_writer: {}", e.message());
            fallback()
        }
    }
}

/// Every client code, in the order of `ClientCode::ALL` (the C++ drift test compares it with
/// the header's enum).
pub(crate) fn client_codes() -> Vec<i32> {
    guard_or(Vec::new, || ClientCode::ALL.iter().map(|c| *c as i32).collect())
}

/// The stable name of a code (client or Fluss server).
pub(crate) fn code_name(code: i32) -> String {
    guard_or(|| "UNKNOWN".to_string(), || Error::from_parts(code, "", false).code_name().to_string())
}
