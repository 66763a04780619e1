//! C++ callables seen from Rust, and completions seen from C++.
//!
//! A C++ `WriteCallback` arrives as `UniquePtr<CallbackBase>` (the type-erased, move-only
//! callable) and becomes a core callback closure that owns it. When the core runs the closure on
//! its executor thread, the closure calls the `noexcept` trampoline `invoke_callback` (which
//! catches every C++ exception and returns its text), then drops the `UniquePtr`, which destroys
//! the callable and its captures on that thread, and only then, if the callable threw, raises a
//! Rust panic (without the panic hook) that the dispatcher's `JobContext::invoke` catches,
//! counts and reports to the writer's error handler (C8). The dispatcher releases the slot after
//! the closure returned (C5). If the core rejects the operation, it drops the closure before the
//! write call returns, which destroys the callable there (C1).

use std::sync::Arc;

use cxx::{SharedPtr, UniquePtr};
use fluss_writer::dispatch::{CallbackError, Job, UserExecutor};
use fluss_writer::WriteCompletion;

use crate::bridge::ffi::{self, CallbackBase, CallbackExecutor, CompletionHead, ErrorHandlerHolder, FfiBucketResult};

// SAFETY: a `CallbackBase` has exactly one owner at a time: the C++ caller hands it to Rust,
// which moves it into one batch entry and later calls and destroys it on one executor thread.
// The C++ API documents that a callable must be safe to call and destroy on another thread
// (as with `std::thread`).
unsafe impl Send for CallbackBase {}

// SAFETY: the handler is only called through `&` (a `const` `std::function` call); the C++ API
// documents that an error handler may be called from several executor threads at once and must
// be thread-safe.
unsafe impl Send for ErrorHandlerHolder {}
unsafe impl Sync for ErrorHandlerHolder {}

// SAFETY: `CallbackExecutor::Execute` is documented as callable from any thread, concurrently
// (it is called from I/O threads when batches complete).
unsafe impl Send for CallbackExecutor {}
unsafe impl Sync for CallbackExecutor {}

/// A completion as C++ sees it: the core's `WriteCompletion`, by reference, without copying.
#[repr(transparent)]
pub struct RCompletion(WriteCompletion);

impl RCompletion {
    pub(crate) fn from_ref(c: &WriteCompletion) -> &RCompletion {
        // SAFETY: `RCompletion` is `repr(transparent)` over `WriteCompletion`.
        unsafe { &*(c as *const WriteCompletion as *const RCompletion) }
    }
}

/// The fixed-size part of a completion.
pub(crate) fn completion_head(c: &RCompletion) -> CompletionHead {
    let c = &c.0;
    CompletionHead {
        code: c.error_code(),
        retriable: c.error.as_ref().is_some_and(|e| e.is_retriable()),
        table_id: c.table_id,
        partition_id: c.partition_id.unwrap_or(-1),
        bucket: c.bucket,
        offset: c.offset,
        log_end_offset: c.log_end_offset,
        bucket_results: c.bucket_results.len(),
    }
}

pub(crate) fn completion_message(c: &RCompletion) -> &str {
    c.0.error.as_ref().map_or("", |e| e.message())
}

pub(crate) fn completion_database(c: &RCompletion) -> &str {
    &c.0.table.database
}

pub(crate) fn completion_table(c: &RCompletion) -> &str {
    &c.0.table.table
}

pub(crate) fn completion_bucket_results(c: &RCompletion) -> Vec<FfiBucketResult> {
    c.0.bucket_results
        .iter()
        .map(|b| FfiBucketResult {
            bucket: b.bucket,
            rows: b.rows as i64,
            base_offset: b.base_offset,
            code: b.error.as_ref().map_or(0, |e| e.code()),
            retriable: b.error.as_ref().is_some_and(|e| e.is_retriable()),
            message: b.error.as_ref().map_or(String::new(), |e| e.message().to_string()),
        })
        .collect()
}

/// Call a C++ callable with a completion and destroy it; a C++ exception becomes a Rust panic
/// raised after the callable was destroyed (caught by the dispatcher, C8).
#[inline]
pub(crate) fn call_and_destroy(mut cb: UniquePtr<CallbackBase>, c: &WriteCompletion) {
    let thrown = match cb.as_mut() {
        Some(f) => {
            let rc = RCompletion::from_ref(c);
            ffi::invoke_callback(f, &completion_head(rc), rc)
        }
        None => String::new(),
    };
    drop(cb);
    if !thrown.is_empty() {
        std::panic::resume_unwind(Box::new(format!("C++ callback threw: {thrown}")));
    }
}

/// The core callback owning a C++ callable, or `None` for a null pointer.
pub(crate) fn into_callback(cb: UniquePtr<CallbackBase>) -> Option<impl FnOnce(&WriteCompletion) + Send + 'static> {
    if cb.is_null() {
        return None;
    }
    Some(move |c: &WriteCompletion| call_and_destroy(cb, c))
}

/// The writer's error handler: the C++ one, or by default a line on stderr naming the operation
/// (the C++ library installs no `log` backend, so the core's default would be silent).
pub(crate) fn error_handler(h: UniquePtr<ErrorHandlerHolder>) -> impl Fn(&CallbackError) + Send + Sync + 'static {
    let h = Arc::new(h);
    move |e: &CallbackError| match h.as_ref().as_ref() {
        Some(h) => ffi::call_error_handler(h, &e.message, &e.operation),
        None => eprintln!("fluss_writer: callback for {} failed: {}", e.operation, e.message),
    }
}

/// A job handed to a C++ `CallbackExecutor` (C++ `fluss_writer::Job`).
pub struct RJob(pub(crate) Job);

/// Run a job on the calling thread (`Job::Run`).
#[allow(clippy::boxed_local)] // C++ owns the job as a rust::Box and hands it over
pub(crate) fn job_run(job: Box<RJob>) {
    job.0.run();
}

/// A C++ `CallbackExecutor` as the core's [`UserExecutor`].
pub(crate) struct CxxExecutor(pub(crate) SharedPtr<CallbackExecutor>);

impl UserExecutor for CxxExecutor {
    fn execute(&self, job: Job) {
        match self.0.as_ref() {
            Some(e) => ffi::execute_job(e, Box::new(RJob(job))),
            None => drop(job),
        }
    }
}
