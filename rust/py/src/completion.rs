//! `WriteCompletion`, `BucketResult` and `WriteResult` for Python, and the batching of asyncio
//! future resolutions.
//!
//! Awaiting a `WriteResult` registers a completion callback that only records
//! `(loop, future, completion)` in a per-thread list. The list is flushed at the end of every
//! group a worker runs (and after every job a user executor runs): one
//! `loop.call_soon_threadsafe(_resolve_futures, [...])` per event loop per flush, never one per
//! record (C10).

use std::cell::{RefCell, UnsafeCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fluss_writer::{BucketResult, ClientCode, WriteCompletion, WriteResult};
use pyo3::prelude::*;

use crate::entry::entry_points;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyTuple};

use crate::callbacks::{python_callback, GilCell};
use crate::error::{exception_instance, IntoPyResult};
use crate::gil::{check_fork, drop_core, interruptible};

/// `call_soon_threadsafe` calls made to resolve futures (for tests).
pub static RESOLVE_HOPS: AtomicU64 = AtomicU64::new(0);

/// How an operation ended and where its record went. Passed to callbacks; immutable to Python.
#[pyclass(name = "WriteCompletion", module = "fluss_writer", frozen)]
pub struct PyWriteCompletion {
    inner: Refillable,
}

/// The completion behind a `PyWriteCompletion`: read-only, except for [`PyWriteCompletion::refill`].
struct Refillable(UnsafeCell<WriteCompletion>);

// SAFETY: shared access only reads; the one writer, `refill`, requires that nothing else can
// reach the object (see there).
unsafe impl Sync for Refillable {}

impl PyWriteCompletion {
    pub fn new(c: WriteCompletion) -> PyWriteCompletion {
        PyWriteCompletion { inner: Refillable(UnsafeCell::new(c)) }
    }

    fn c(&self) -> &WriteCompletion {
        // SAFETY: see `Refillable`: no `refill` can run while `&self` is reachable by anyone else.
        unsafe { &*self.inner.0.get() }
    }

    /// Make this completion describe `c`. Within a batch only the offset changes, so the shared
    /// parts are kept when they match.
    ///
    /// # Safety
    /// The GIL is held and the object is referenced by nothing but the caller's argument tuple,
    /// which only the caller holds (both reference counts are 1): no Python code and no Rust
    /// borrow can observe the change.
    pub unsafe fn refill(&self, c: &WriteCompletion) {
        // Destructured so that a new field cannot be forgotten here.
        let WriteCompletion { error, table, table_id, partition, partition_id, bucket, offset, log_end_offset, bucket_results } = c;
        // SAFETY: the caller guarantees exclusive access.
        let i = unsafe { &mut *self.inner.0.get() };
        if error.is_none() && i.error.is_none() && bucket_results.is_empty() && i.bucket_results.is_empty() && Arc::ptr_eq(table, &i.table)
        {
            i.table_id = *table_id;
            if i.partition != *partition {
                i.partition.clone_from(partition);
            }
            i.partition_id = *partition_id;
            i.bucket = *bucket;
            i.offset = *offset;
            i.log_end_offset = *log_end_offset;
        } else {
            i.clone_from(c);
        }
    }
}

entry_points! {
impl PyWriteCompletion {
    #[getter]
    fn ok(&self) -> bool {
        self.c().is_ok()
    }
    #[getter]
    fn error<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.c().error.as_ref().map(|e| exception_instance(py, e)).transpose()
    }
    #[getter]
    fn error_code(&self) -> i32 {
        self.c().error_code()
    }
    #[getter]
    fn message(&self) -> Option<String> {
        self.c().error.as_ref().map(|e| e.message().to_string())
    }
    #[getter]
    fn retriable(&self) -> bool {
        self.c().error.as_ref().is_some_and(|e| e.is_retriable())
    }
    #[getter]
    fn table(&self) -> String {
        self.c().table.to_string()
    }
    #[getter]
    fn bucket(&self) -> i32 {
        self.c().bucket
    }
    /// The id of the table (changes when a table of the same name is recreated).
    #[getter]
    fn table_id(&self) -> i64 {
        self.c().table_id
    }
    /// The name of the partition the record went to; None for a table without partitions.
    #[getter]
    fn partition(&self) -> Option<&str> {
        self.c().partition.as_deref()
    }
    /// The id of that partition, once the writer resolved it (None for a table without
    /// partitions, and for a write that failed before its partition was known).
    #[getter]
    fn partition_id(&self) -> Option<i64> {
        self.c().partition_id
    }
    #[getter]
    fn offset(&self) -> i64 {
        self.c().offset
    }
    #[getter]
    fn log_end_offset(&self) -> i64 {
        self.c().log_end_offset
    }
    #[getter]
    fn bucket_results(&self) -> Vec<PyBucketResult> {
        self.c().bucket_results.iter().cloned().map(|inner| PyBucketResult { inner }).collect()
    }
    /// Raise the operation's error, if any.
    fn raise_for_error(&self, py: Python<'_>) -> PyResult<()> {
        match &self.c().error {
            None => Ok(()),
            Some(e) => Err(PyErr::from_value(exception_instance(py, e)?)),
        }
    }
    fn __repr__(&self) -> String {
        let c = self.c();
        let partition = c.partition.as_deref().map(|p| format!(", partition={p:?}")).unwrap_or_default();
        match &c.error {
            None => format!("WriteCompletion(ok, table={}{partition}, bucket={}, offset={})", c.table, c.bucket, c.offset),
            Some(e) => format!("WriteCompletion(error={e}, table={}{partition}, bucket={})", c.table, c.bucket),
        }
    }
}
}

/// One bucket of a multi-bucket Arrow batch.
#[pyclass(name = "BucketResult", module = "fluss_writer", frozen)]
pub struct PyBucketResult {
    inner: BucketResult,
}

entry_points! {
impl PyBucketResult {
    /// The name of the partition of these rows; None for a table without partitions.
    #[getter]
    fn partition(&self) -> Option<&str> {
        self.inner.partition.as_deref()
    }
    #[getter]
    fn bucket(&self) -> i32 {
        self.inner.bucket
    }
    #[getter]
    fn rows(&self) -> usize {
        self.inner.rows
    }
    #[getter]
    fn base_offset(&self) -> i64 {
        self.inner.base_offset
    }
    #[getter]
    fn ok(&self) -> bool {
        self.inner.error.is_none()
    }
    #[getter]
    fn error<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner.error.as_ref().map(|e| exception_instance(py, e)).transpose()
    }
    fn __repr__(&self) -> String {
        let partition = self.inner.partition.as_deref().map(|p| format!("partition={p:?}, ")).unwrap_or_default();
        format!(
            "BucketResult({partition}bucket={}, rows={}, base_offset={}, error={:?})",
            self.inner.bucket, self.inner.rows, self.inner.base_offset, self.inner.error
        )
    }
}
}

// ===== batched future resolution =====

type Pending = (Py<PyAny>, Py<PyAny>, WriteCompletion);

thread_local! {
    static PENDING: RefCell<Vec<Pending>> = const { RefCell::new(Vec::new()) };
}

/// Resolve the futures recorded on this thread: one `call_soon_threadsafe` per loop.
pub fn flush_resolutions(py: Python<'_>) {
    let pending = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    if pending.is_empty() {
        return;
    }
    let mut groups: Vec<(Py<PyAny>, Vec<Py<PyAny>>)> = Vec::new();
    for (lp, fut, c) in pending {
        let item = match Py::new(py, PyWriteCompletion::new(c)) {
            Ok(comp) => PyTuple::new(py, [fut.into_any(), comp.into_any()]).map(|t| t.into_any().unbind()),
            Err(e) => Err(e),
        };
        let Ok(item) = item else { continue };
        match groups.iter_mut().find(|(l, _)| l.as_ptr() == lp.as_ptr()) {
            Some((_, v)) => v.push(item),
            None => groups.push((lp, vec![item])),
        }
    }
    let resolver = resolver(py);
    for (lp, items) in groups {
        RESOLVE_HOPS.fetch_add(1, Ordering::Relaxed);
        let r = PyList::new(py, items).and_then(|l| lp.bind(py).call_method1("call_soon_threadsafe", (resolver, l)));
        if let Err(e) = r {
            // The loop is closed: nobody can await these futures any more.
            log::debug!("cannot resolve awaitables on a closed event loop: {e}");
        }
    }
}

static RESOLVER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn resolver(py: Python<'_>) -> &Bound<'_, PyAny> {
    RESOLVER.get_or_init(py, || wrap_pyfunction!(_resolve_futures, py).expect("resolver").into_any().unbind()).bind(py)
}

entry_points! {
#[pyfunction]
/// Runs on the event loop: set the result of every `(future, completion)` not yet done.
fn _resolve_futures(items: &Bound<'_, PyList>) -> PyResult<()> {
    for item in items.iter() {
        let (fut, comp): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
        if !fut.call_method0("done")?.is_truthy()? {
            fut.call_method1("set_result", (comp,))?;
        }
    }
    Ok(())
}
}

static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

// ===== WriteResult =====

/// The handle returned by a write call without a callback.
#[pyclass(name = "WriteResult", module = "fluss_writer", frozen)]
pub struct PyWriteResult {
    inner: std::mem::ManuallyDrop<WriteResult>,
    gen: u64,
}

impl PyWriteResult {
    /// The Python object of a write's result, not tracked by the cyclic garbage collector.
    ///
    /// pyo3 makes every class a GC type, but a `WriteResult` holds no Python reference the
    /// collector could see (its `tp_traverse` visits nothing), so tracking it only costs: keeping
    /// many results alive (one per record) made the collector's generation scans walk all of them
    /// again and again, about a fifth of the per-record result path's time (bench/README.md).
    /// Untracking an object the collector cannot learn anything from changes nothing else.
    pub fn create(py: Python<'_>, inner: WriteResult, gen: u64) -> PyResult<Py<PyWriteResult>> {
        let obj = Py::new(py, PyWriteResult { inner: std::mem::ManuallyDrop::new(inner), gen })?;
        // SAFETY: the GIL is held and `obj` is a live, GC-tracked object just created.
        unsafe { pyo3::ffi::PyObject_GC_UnTrack(obj.as_ptr().cast()) };
        Ok(obj)
    }
}

impl Drop for PyWriteResult {
    fn drop(&mut self) {
        // SAFETY: dropped once, here.
        let inner = unsafe { std::mem::ManuallyDrop::take(&mut self.inner) };
        // With the GIL held: a result that shares its batch's state is one atomic decrement; only
        // the last reference (which may drop the writer's scope and join workers) is dropped
        // without the GIL, by `drop_core` (which also leaves it alone in a forked child).
        if let Some(last) = inner.release() {
            drop_core(last, self.gen);
        }
    }
}

/// The completion that `WriteResult.wait` returned last, for the next `wait` to refill when
/// nothing else references it any more (the callback path's `completion_args` does the same):
/// waiting on each of many results whose completions are dropped at once then allocates no
/// completion object. A kept completion is never changed: the next `wait` makes a new one.
static WAITED: GilCell<Py<PyWriteCompletion>> = GilCell::new();

fn waited_completion(py: Python<'_>, c: WriteCompletion) -> PyResult<Py<PyWriteCompletion>> {
    if let Some(last) = WAITED.take(py) {
        // SAFETY: the GIL is held and `last` is a live object we hold a reference to.
        if unsafe { pyo3::ffi::Py_REFCNT(last.as_ptr()) } == 1 {
            // SAFETY: ours is its only reference and the GIL is held: nothing can observe the
            // change.
            unsafe { last.get().refill(&c) };
            drop(WAITED.put(py, last.clone_ref(py)));
            return Ok(last);
        }
    }
    let fresh = Py::new(py, PyWriteCompletion::new(c))?;
    drop(WAITED.put(py, fresh.clone_ref(py)));
    Ok(fresh)
}

/// `fluss_writer._aio.ready`: what `await` on a completed `WriteResult` runs (a generator that
/// returns the completion at its first step; see there why not an iterator).
static READY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A `timeout=` argument in seconds, by the core's one rule (`fluss_writer::timeouts`): None
/// and +inf or anything too long to be a deadline (1e300, 1e19) mean no bound; NaN and negative
/// values are a ValueError.
pub fn timeout(t: Option<f64>) -> PyResult<Option<Duration>> {
    match t {
        None => Ok(None),
        Some(s) => fluss_writer::timeouts::from_secs_f64(s).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.message().to_string())),
    }
}

entry_points! {
impl PyWriteResult {
    /// Block (without the GIL) until the operation completed; return its completion (which
    /// may carry an error). Raises TimeoutError(FlussWriterError) after `timeout` seconds and
    /// CalledFromCallbackError inside a callback.
    #[pyo3(signature = (timeout=None))]
    fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Py<PyWriteCompletion>> {
        check_fork(self.gen).py_err()?;
        let t = self::timeout(timeout)?;
        let r = &*self.inner;
        // Completed already (the usual case once a flush returned): the core answers without
        // blocking, so the GIL stays held; a pending result is waited for without it.
        match r.wait(Some(Duration::ZERO)) {
            Err(e) if e.code() == ClientCode::Timeout as i32 => {}
            done => return waited_completion(py, done.map_err(crate::error::to_py)?),
        }
        let c = interruptible(py, || r.wait(t))?;
        waited_completion(py, c)
    }

    /// Whether the operation has completed.
    fn done(&self) -> bool {
        self.inner.is_done()
    }

    /// The completion if the operation has completed, else None.
    fn try_get(&self) -> Option<PyWriteCompletion> {
        self.inner.try_get().map(PyWriteCompletion::new)
    }

    /// Register `fn(completion)`; see the callback contract on `AppendWriter.append`.
    fn add_callback(&self, callback: Bound<'_, PyAny>) -> PyResult<()> {
        check_fork(self.gen).py_err()?;
        let cb = python_callback(&callback)?;
        self.inner.add_callback(cb);
        Ok(())
    }

    fn __await__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        check_fork(self.gen).py_err()?;
        // Completed already (the usual case after `await flush_async()`): the completion at once,
        // without a future or a trip through the event loop.
        if let Some(c) = self.inner.try_get() {
            let ready = READY.get_or_try_init(py, || py.import("fluss_writer._aio")?.getattr("ready").map(Bound::unbind))?;
            return ready.bind(py).call1((waited_completion(py, c)?,));
        }
        let get_loop = GET_RUNNING_LOOP
            .get_or_init(py, || py.import("asyncio").and_then(|m| m.getattr("get_running_loop")).expect("asyncio").unbind());
        let lp = get_loop.bind(py).call0()?;
        let fut = lp.call_method0("create_future")?;
        let (lp, f) = (lp.unbind(), fut.clone().unbind());
        self.inner.add_callback(move |c: &WriteCompletion| {
            PENDING.with(|p| p.borrow_mut().push((lp, f, c.clone())));
        });
        fut.call_method0("__await__")
    }

    fn __repr__(&self) -> String {
        format!("WriteResult(done={})", self.inner.is_done())
    }
}
}
