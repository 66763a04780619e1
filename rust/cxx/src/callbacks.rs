//! C++ callables seen from Rust, and completions seen from C++.
//!
//! A C++ `WriteCallback` arrives as an [`FfiCallback`]: three words (its operations table and
//! two words of storage: an inline trivially copyable callable or a pointer to a heap one).
//! [`CxxCallback`] owns those words and becomes the core's callback closure, which is exactly
//! three words, so the core stores it inline in the batch: no allocation per record on the Rust
//! side. When the core runs the closure on its executor thread, the closure calls the
//! `noexcept` trampoline `invoke_write_callback`, which calls the callable and destroys it on
//! that thread (also when it threw) and reports whether (and what) it threw; only then, if it threw,
//! the closure raises a Rust panic (without the panic hook) that the dispatcher's
//! `JobContext::invoke` catches, counts and reports to the writer's error handler (C8). The
//! dispatcher releases the slot after the closure returned (C5). If the core rejects the
//! operation, it drops the closure before the write call returns, and `CxxCallback`'s `Drop`
//! destroys the callable there (C1).
//!
//! A C++ `SharedWriteCallback` is one `UniquePtr<SharedCallbackBase>` inside the core's
//! [`SharedCallback`] (`Arc<dyn Fn>`): the core's `*_with_shared_callback` forms register runs of
//! records, no storage per record.

use std::mem::ManuallyDrop;
use std::sync::Arc;

use cxx::{SharedPtr, UniquePtr};
use fluss_writer::dispatch::{CallbackError, Job, UserExecutor};
use fluss_writer::{SharedCallback, WriteCompletion};

use crate::bridge::ffi::{self, CallbackExecutor, CompletionHead, ErrorHandlerHolder, FfiBucketResult, FfiCallback, SharedCallbackBase};
use crate::status::guard_or;

// SAFETY: the shared callable is only called through `&` (a `const` call) and destroyed once,
// by the last owner; the C++ API documents that a SharedWriteCallback may be called from several
// executor threads at once and destroyed on any thread, and must be thread-safe.
unsafe impl Send for SharedCallbackBase {}
unsafe impl Sync for SharedCallbackBase {}

// SAFETY: the handler is only called through `&` (a `const` `std::function` call); the C++ API
// documents that an error handler may be called from several executor threads at once and must
// be thread-safe.
unsafe impl Send for ErrorHandlerHolder {}
// SAFETY: the holder wraps a std::function that SetLogCallback's contract requires to be callable
// from any thread; Rust only calls it through a shared reference.
unsafe impl Send for crate::bridge::ffi::LogSinkHolder {}
unsafe impl Sync for crate::bridge::ffi::LogSinkHolder {}
// SAFETY: as the log sink: StatisticsReporter::Start requires a callable that may run on another
// thread; Rust only calls it through a shared reference.
unsafe impl Send for crate::bridge::ffi::StatsSinkHolder {}
unsafe impl Sync for crate::bridge::ffi::StatsSinkHolder {}
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
#[inline]
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
        database_ptr: c.table.database.as_ptr() as usize,
        database_len: c.table.database.len(),
        table_ptr: c.table.table.as_ptr() as usize,
        table_len: c.table.table.len(),
        // A view of the core's `Arc<str>` (no copy); none: a null view.
        partition_ptr: c.partition.as_deref().map_or(0, |p| p.as_ptr() as usize),
        partition_len: c.partition.as_deref().map_or(0, str::len),
    }
}

// These accessors only read fields (no arithmetic, no indexing): they cannot panic, so they take
// no guard (they run once per callback).
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
    guard_or(Vec::new, || completion_bucket_results_inner(c))
}

fn completion_bucket_results_inner(c: &RCompletion) -> Vec<FfiBucketResult> {
    c.0.bucket_results
        .iter()
        .map(|b| FfiBucketResult {
            partition: b.partition.as_deref().map_or(String::new(), str::to_string),
            bucket: b.bucket,
            rows: b.rows as i64,
            base_offset: b.base_offset,
            code: b.error.as_ref().map_or(0, |e| e.code()),
            retriable: b.error.as_ref().is_some_and(|e| e.is_retriable()),
            message: b.error.as_ref().map_or(String::new(), |e| e.message().to_string()),
        })
        .collect()
}

/// A C++ `WriteCallback` owned by Rust: called once ([`CxxCallback::call`]) or destroyed unrun
/// (`Drop`), in either case on the thread that does it.
pub(crate) struct CxxCallback(FfiCallback);

// SAFETY: a C++ callable has exactly one owner at a time: the C++ caller hands it to Rust, which
// moves it into one batch entry and later calls and destroys it on one executor thread. The C++
// API documents that a callable must be safe to call and destroy on another thread (as with
// `std::thread`).
unsafe impl Send for CxxCallback {}

impl CxxCallback {
    /// `None` for an empty C++ `WriteCallback`.
    pub(crate) fn new(cb: FfiCallback) -> Option<CxxCallback> {
        (cb.ops != 0).then_some(CxxCallback(cb))
    }

    /// Call the callable and destroy it; a C++ exception becomes a Rust panic raised after the
    /// callable was destroyed (caught by the dispatcher, C8).
    #[inline]
    pub(crate) fn call(self, c: &WriteCompletion) {
        let me = ManuallyDrop::new(self);
        let rc = RCompletion::from_ref(c);
        let mut thrown = String::new();
        if ffi::invoke_write_callback(&me.0, &completion_head(rc), rc, &mut thrown) {
            std::panic::resume_unwind(Box::new(format!("C++ callback threw: {thrown}")));
        }
    }

    /// The core callback (three words: stored inline by the core, no allocation).
    #[inline]
    pub(crate) fn into_closure(self) -> impl FnOnce(&WriteCompletion) + Send + 'static {
        move |c: &WriteCompletion| self.call(c)
    }
}

impl Drop for CxxCallback {
    fn drop(&mut self) {
        ffi::drop_write_callback(&self.0);
    }
}

/// A C++ `SharedWriteCallback`: the core's shared callable.
pub struct RSharedCallback(pub(crate) SharedCallback);

pub(crate) fn shared_callback_new(cb: UniquePtr<SharedCallbackBase>) -> Box<RSharedCallback> {
    // If building it panicked, every record given this callable reports that to the writer's
    // error handler (a callback error) instead of running nothing silently.
    let failed = || {
        let f: SharedCallback = Arc::new(|_: &WriteCompletion| {
            std::panic::resume_unwind(Box::new("the SharedWriteCallback could not be created (panic in the binding)".to_string()))
        });
        Box::new(RSharedCallback(f))
    };
    guard_or(failed, move || shared_callback_of(cb))
}

fn shared_callback_of(cb: UniquePtr<SharedCallbackBase>) -> Box<RSharedCallback> {
    let f: SharedCallback = Arc::new(move |c: &WriteCompletion| {
        let Some(h) = cb.as_ref() else { return };
        let rc = RCompletion::from_ref(c);
        let mut thrown = String::new();
        if ffi::invoke_shared_callback(h, &completion_head(rc), rc, &mut thrown) {
            std::panic::resume_unwind(Box::new(format!("C++ callback threw: {thrown}")));
        }
    });
    Box::new(RSharedCallback(f))
}

#[allow(clippy::boxed_local)] // C++ owns it as a rust::Box and hands it over
pub(crate) fn shared_callback_destroy(cb: Box<RSharedCallback>) {
    guard_or(|| (), move || drop(cb))
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
    guard_or(|| (), move || job.0.run())
}

/// Drop a job unrun (`~Job`): its callbacks are retired and the drop is reported.
#[allow(clippy::boxed_local)] // C++ owns the job as a rust::Box and hands it over
pub(crate) fn job_drop(job: Box<RJob>) {
    guard_or(|| (), move || drop(job))
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
