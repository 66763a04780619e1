//! Python callables as completion callbacks, the per-writer error handler, and the
//! `executor=` choices.
//!
//! **The callback contract** (the same paragraph as on the Rust `WriteCallback` and the C++
//! overloads): a callback runs exactly once, with a `WriteCompletion`, on the writer's executor
//! (by default the connection's single FIFO worker thread), never on the submitting thread and
//! never on an I/O thread; callbacks of one bucket run in submission order, and with the
//! default executor all callbacks of a connection run one at a time in completion order.
//! `flush`, `close` and `WriteResult.wait` called inside a callback raise
//! `CalledFromCallbackError` at once; a submission inside a callback never blocks. A callback
//! that raises is reported to `on_callback_error(exception, operation)` (default: the
//! `fluss_writer` logger) and stops nothing else. The callable and what it captured are released
//! before the operation's `max_pending_callbacks` slot is.
//!
//! A raising callback is turned into an unwinding payload (`resume_unwind`, so no panic hook
//! prints) after its exception is parked in a thread-local; the core catches the unwind, counts
//! it, and calls the writer's error handler on the same thread, which takes the exception back.

use std::cell::{RefCell, UnsafeCell};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};

use fluss_writer::dispatch::{CallbackError, Job};
use fluss_writer::{CallbackExecutor, SharedCallback, UserExecutor, WorkerHooks, WriteCompletion, WriterOptions};
use pyo3::ffi;
use pyo3::prelude::*;

use crate::entry::entry_points;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyInt, PyTuple};

use crate::completion::{flush_resolutions, PyWriteCompletion};
use crate::gil::{abandon_callback, ForcedUnwindStop, Inside, PyWorkerHooks};

thread_local! {
    /// The exception of the callback that is unwinding on this thread.
    static RAISED: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// A value that is only ever moved in or out with the GIL held (the `Python` token is the proof)
/// and never borrowed across Python code, so the GIL serializes every access. Cheaper than a
/// thread-local in an extension module, where each access is a `__tls_get_addr` call.
pub struct GilCell<T>(UnsafeCell<Option<T>>);

// SAFETY: every access goes through `take`/`put`, which need the GIL; the GIL admits one thread
// at a time, and neither method runs Python code or lets a reference out.
unsafe impl<T: Send> Sync for GilCell<T> {}

impl<T> GilCell<T> {
    pub const fn new() -> Self {
        GilCell(UnsafeCell::new(None))
    }

    pub fn take(&self, _py: Python<'_>) -> Option<T> {
        // SAFETY: see the Sync impl.
        unsafe { (*self.0.get()).take() }
    }

    /// Store `v`; the previous value is returned (for the caller to drop, GIL still held).
    pub fn put(&self, _py: Python<'_>, v: T) -> Option<T> {
        // SAFETY: see the Sync impl.
        unsafe { (*self.0.get()).replace(v) }
    }
}

/// The argument tuple and completion of the last callback, for [`completion_args`].
static CALL_ARGS: GilCell<Parked> = GilCell::new();

/// A `(completion,)` tuple and, borrowed from it, its item.
struct Parked {
    args: Py<PyTuple>,
    comp: std::ptr::NonNull<ffi::PyObject>,
}

// SAFETY: `comp` is the item of `args` and lives as long as it; both are only used with the GIL.
unsafe impl Send for Parked {}

/// Hops of user-executor jobs onto an asyncio loop or a concurrent.futures executor.
pub static EXECUTOR_HOPS: AtomicU64 = AtomicU64::new(0);

/// Where a writer's callback errors go: `None` = the `fluss_writer` logger.
#[derive(Clone, Default)]
pub struct ErrorSink(Option<Arc<Py<PyAny>>>);

/// Wrap a Python callable as a core callback.
pub fn python_callback(cb: &Bound<'_, PyAny>) -> PyResult<impl FnOnce(&WriteCompletion) + Send + 'static> {
    check_callable(cb)?;
    let cb = cb.clone().unbind();
    Ok(move |c: &WriteCompletion| call_python(cb, c))
}

/// A writer's most recent callback callable, as a core [`SharedCallback`]. Consecutive writes
/// that pass the same callable (the usual `callback=on_done`) get the same `Arc`, so the core
/// registers each run of records once, and the callable is checked only when it changes.
///
/// The slot holds the `Arc` weakly: only pending operations keep it (and so the callable)
/// alive, as with one-shot callbacks. A callable that captures its writer therefore makes no
/// cycle the garbage collector cannot see, and nothing is held once the operations completed.
/// While the `Arc` lives it owns the callable, so the address used as the key cannot be reused.
pub struct SharedSlot(GilCell<(usize, WeakShared)>);

impl Default for SharedSlot {
    fn default() -> Self {
        SharedSlot(GilCell::new())
    }
}

type WeakShared = Weak<dyn Fn(&WriteCompletion) + Send + Sync>;

impl SharedSlot {
    /// The shared callback for `cb` (the GIL is held: `cb` is bound).
    pub fn get(&self, cb: &Bound<'_, PyAny>) -> PyResult<SharedCallback> {
        let py = cb.py();
        let key = cb.as_ptr() as usize;
        if let Some((k, weak)) = self.0.take(py) {
            if k == key {
                if let Some(f) = weak.upgrade() {
                    self.0.put(py, (k, weak));
                    return Ok(f);
                }
            }
        }
        check_callable(cb)?;
        let obj = cb.clone().unbind();
        let f: SharedCallback = Arc::new(move |c: &WriteCompletion| invoke(c, |py, args| obj.bind(py).call1(args).map(drop)));
        // Dropping a Weak runs no Python code.
        self.0.put(py, (key, Arc::downgrade(&f)));
        Ok(f)
    }
}

fn check_callable(cb: &Bound<'_, PyAny>) -> PyResult<()> {
    if cb.is_callable() {
        return Ok(());
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "callback must be callable, not {}",
        cb.get_type().name().map(|n| n.to_string()).unwrap_or_default()
    )))
}

/// Call a one-shot callback; its callable is released (attached) right after the call.
#[inline]
pub(crate) fn call_python(cb: Py<PyAny>, c: &WriteCompletion) {
    invoke(c, move |py, args| {
        let r = cb.bind(py).call1(args).map(drop);
        drop(cb);
        r
    });
}

/// Run `call` with the `(WriteCompletion,)` arguments for `c`; a raised exception unwinds to the
/// core as described in the module doc.
///
/// The thread is already attached: a callback only ever runs inside `Job::run`, and every job of
/// this binding runs either in `PyWorkerHooks::around_group` (attached once per group) or in
/// `JobRunner.__call__` (called by Python). So no attach per callback, which would cost two
/// thread-local round trips.
#[inline]
fn invoke(c: &WriteCompletion, call: impl FnOnce(Python<'_>, &Bound<'_, PyTuple>) -> PyResult<()>) {
    // Not in the limited API (so not in python3.dll), but exported by every CPython this binding
    // loads into on Unix, where an extension resolves its symbols at load time.
    #[cfg(all(debug_assertions, unix))]
    {
        extern "C" {
            fn PyGILState_Check() -> std::ffi::c_int;
        }
        assert_eq!(unsafe { PyGILState_Check() }, 1, "a callback runs attached");
    }
    // Interpreter exit: the callable is leaked, not called (crate::gil::_at_exit).
    if abandon_callback() {
        std::mem::forget(call);
        return;
    }
    // SAFETY: attached, see above; the token does not outlive this call.
    let py = unsafe { Python::assume_attached() };
    let failed = completion_args(py, c)
        .and_then(|a| {
            // A callback still running when the interpreter finalizes may be ended by CPython
            // (pthread_exit) when it takes the GIL back: park here rather than unwind further.
            let stop = ForcedUnwindStop::arm();
            let r = call(py, &a.args);
            stop.disarm();
            a.park(py);
            r
        })
        .err();
    if let Some(e) = failed {
        let msg = e.to_string_with(py);
        RAISED.with(|r| *r.borrow_mut() = Some(e));
        std::panic::resume_unwind(Box::new(msg));
    }
}

/// The `(completion,)` argument tuple for the next callback.
///
/// The tuple and completion of the previous call are reused when nothing else holds them (both
/// reference counts are ours alone, checked with the GIL held, so no Python code can observe the
/// change): a no-op callback then costs no allocation. A callback that keeps its completion (or
/// the tuple) gets fresh objects next time, so what it kept never changes.
fn completion_args<'py>(py: Python<'py>, c: &WriteCompletion) -> PyResult<CallArgs<'py>> {
    if let Some(Parked { args, comp }) = CALL_ARGS.take(py) {
        let args = args.into_bound(py);
        let comp = comp.as_ptr();
        // SAFETY (all blocks): the GIL is held; `args` is a 1-tuple built below and `comp` its
        // item, a PyWriteCompletion the tuple keeps alive.
        if unsafe { ffi::Py_REFCNT(args.as_ptr()) } == 1 {
            if unsafe { ffi::Py_REFCNT(comp) } == 1 {
                let item = unsafe { Borrowed::from_ptr(py, comp).cast_unchecked::<PyWriteCompletion>() };
                // SAFETY: only `args` references it, and only we hold `args`.
                unsafe { item.get().refill(c) };
                return Ok(CallArgs { args, comp });
            }
            // The last callback kept its completion: a new one in the same tuple, which drops
            // only the tuple's reference to the kept one.
            let comp = Py::new(py, PyWriteCompletion::new(c.clone()))?.into_ptr();
            if unsafe { ffi::PyTuple_SetItem(args.as_ptr(), 0, comp) } != 0 {
                return Err(PyErr::fetch(py));
            }
            return Ok(CallArgs { args, comp });
        }
    }
    let item = Py::new(py, PyWriteCompletion::new(c.clone()))?;
    let comp = item.as_ptr();
    Ok(CallArgs { args: PyTuple::new(py, [item])?, comp })
}

/// Callback arguments: the tuple and (borrowed from it) its completion.
struct CallArgs<'py> {
    args: Bound<'py, PyTuple>,
    comp: *mut ffi::PyObject,
}

impl CallArgs<'_> {
    /// Keep them for the next callback.
    fn park(self, py: Python<'_>) {
        let CallArgs { args, comp } = self;
        let comp = std::ptr::NonNull::new(comp).expect("a tuple item");
        drop(CALL_ARGS.put(py, Parked { args: args.unbind(), comp }));
    }
}

/// Release the cached callback arguments; called at the end of every group and executor job.
pub fn release_call_args(py: Python<'_>) {
    drop(CALL_ARGS.take(py));
}

trait ErrText {
    fn to_string_with(&self, py: Python<'_>) -> String;
}

impl ErrText for PyErr {
    fn to_string_with(&self, py: Python<'_>) -> String {
        let v = self.value(py);
        let t = v.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        format!("{t}: {}", v.str().map(|s| s.to_string()).unwrap_or_default())
    }
}

static DEFAULT_REPORT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn report(sink: &ErrorSink, err: &CallbackError) {
    let exc = RAISED.with(|r| r.borrow_mut().take());
    // Past interpreter exit no thread of ours takes the GIL (crate::gil): log only.
    let Some(_pass) = Inside::enter() else {
        log::error!("completion callback for {} failed: {}", err.operation, err.message);
        return;
    };
    Python::attach(|py| {
        let exc_obj: Bound<'_, PyAny> = match exc {
            Some(e) => e.into_value(py).into_bound(py).into_any(),
            None => match crate::error::exception_instance(
                py,
                &fluss_writer::Error::client(fluss_writer::ClientCode::CallbackFailed, err.message.clone()),
            ) {
                Ok(x) => x,
                Err(e) => e.into_value(py).into_bound(py).into_any(),
            },
        };
        let r = match &sink.0 {
            Some(h) => h.bind(py).call1((exc_obj, err.operation.as_str())),
            None => {
                let f = DEFAULT_REPORT.get_or_init(py, || {
                    py.import("fluss_writer._callbacks")
                        .and_then(|m| m.getattr("default_on_callback_error"))
                        .expect("fluss_writer._callbacks")
                        .unbind()
                });
                f.bind(py).call1((exc_obj, err.operation.as_str()))
            }
        };
        if let Err(e) = r {
            e.write_unraisable(py, None);
        }
    });
}

// ===== executors =====

/// A relay thread that hands each job to a Python executor or event loop. It keeps the GIL
/// acquisition off the I/O threads and batches it: one attach per group of queued jobs, one
/// `submit` / `call_soon_threadsafe` per job (= per completed batch).
struct Relay {
    q: Mutex<(VecDeque<Job>, bool)>,
    cv: Condvar,
}

struct RelayHandle {
    relay: Arc<Relay>,
}

impl UserExecutor for RelayHandle {
    fn execute(&self, job: Job) {
        let mut q = self.relay.q.lock().unwrap_or_else(|p| p.into_inner());
        q.0.push_back(job);
        self.relay.cv.notify_one();
    }
}

impl Drop for RelayHandle {
    fn drop(&mut self) {
        let mut q = self.relay.q.lock().unwrap_or_else(|p| p.into_inner());
        q.1 = true;
        self.relay.cv.notify_one();
    }
}

#[derive(Clone, Copy)]
enum Target {
    Pool,
    Loop,
}

fn spawn_relay(target_obj: Py<PyAny>, kind: Target) -> RelayHandle {
    let relay = Arc::new(Relay { q: Mutex::new((VecDeque::new(), false)), cv: Condvar::new() });
    let r = relay.clone();
    let hooks = PyWorkerHooks::default();
    std::thread::Builder::new()
        .name("fluss-writer-relay".into())
        .spawn(move || {
            hooks.on_thread_start();
            loop {
                let jobs: VecDeque<Job> = {
                    let mut q = r.q.lock().unwrap_or_else(|p| p.into_inner());
                    while q.0.is_empty() && !q.1 {
                        q = r.cv.wait(q).unwrap_or_else(|p| p.into_inner());
                    }
                    if q.0.is_empty() {
                        break;
                    }
                    std::mem::take(&mut q.0)
                };
                let mut jobs = Some(jobs);
                hooks.around_group(&mut || {
                    let Some(jobs) = jobs.take() else { return };
                    Python::attach(|py| {
                        let t = target_obj.bind(py);
                        for job in jobs {
                            let runner = match Py::new(py, JobRunner { job: Mutex::new(Some(job)) }) {
                                Ok(r) => r,
                                Err(e) => {
                                    e.write_unraisable(py, None);
                                    continue;
                                }
                            };
                            EXECUTOR_HOPS.fetch_add(1, Ordering::Relaxed);
                            let res = match kind {
                                Target::Pool => t.call_method1("submit", (runner,)).map(|_| ()),
                                Target::Loop => t.call_method1("call_soon_threadsafe", (runner,)).map(|_| ()),
                            };
                            if let Err(e) = res {
                                // Executor shut down / loop closed: the runner (and its job) is
                                // dropped, which completes the job's tickets and reports it.
                                log::error!("cannot hand a completion job to the executor: {e}");
                            }
                        }
                    });
                });
                // A group the hooks did not run (interpreter exit) is dropped here: retired.
                drop(jobs);
            }
            hooks.on_thread_stop();
            drop(target_obj);
        })
        .expect("cannot spawn the relay thread");
    RelayHandle { relay }
}

/// One completion job, run by a Python executor or event loop when called.
#[pyclass(module = "fluss_writer", frozen)]
pub struct JobRunner {
    job: Mutex<Option<Job>>,
}

entry_points! {
impl JobRunner {
    fn __call__(&self, py: Python<'_>) {
        let job = self.job.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(job) = job {
            job.run();
        }
        release_call_args(py);
        flush_resolutions(py);
    }
}
}

/// An int option as u64: not an int is a TypeError; an int outside u64 is InvalidConfigError
/// with `message`.
fn int_option(v: &Bound<'_, PyAny>, name: &str, message: impl FnOnce() -> String) -> PyResult<u64> {
    if !v.is_instance_of::<PyInt>() || v.is_instance_of::<PyBool>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{name} must be an int, not {}",
            v.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        )));
    }
    v.extract::<u64>().map_err(|_| crate::error::client(fluss_writer::ClientCode::InvalidConfig, message()))
}

static EXEC_TYPES: PyOnceLock<(Py<PyAny>, Py<PyAny>)> = PyOnceLock::new();

/// Writer options from `create_writer(max_pending_callbacks=, executor=, on_callback_error=)`.
pub fn writer_options(
    py: Python<'_>,
    max_pending_callbacks: Option<&Bound<'_, PyAny>>,
    executor: Option<&Bound<'_, PyAny>>,
    on_callback_error: Option<&Bound<'_, PyAny>>,
) -> PyResult<(WriterOptions, ErrorSink)> {
    let mut opts = WriterOptions::default();
    // Integers go to the core unclamped: it owns the bounds (1..=MAX_PENDING_CALLBACKS,
    // Sharded(1..=MAX_CALLBACK_SHARDS)) and answers InvalidConfigError outside them. An int no
    // u64/usize can hold (negative, 2**70) is out of those bounds too: InvalidConfigError here,
    // with the same wording.
    if let Some(n) = max_pending_callbacks.filter(|n| !n.is_none()) {
        let n = int_option(n, "max_pending_callbacks", || {
            format!("max_pending_callbacks must be 1 to {}, not {n}", fluss_writer::MAX_PENDING_CALLBACKS)
        })?;
        opts = opts.max_pending_callbacks(n);
    }
    let sink = match on_callback_error {
        None => ErrorSink(None),
        Some(h) if h.is_none() => ErrorSink(None),
        Some(h) if h.is_callable() => ErrorSink(Some(Arc::new(h.clone().unbind()))),
        Some(_) => return Err(pyo3::exceptions::PyTypeError::new_err("on_callback_error must be callable")),
    };
    let s2 = sink.clone();
    opts = opts.error_handler(move |e: &CallbackError| report(&s2, e));
    if let Some(e) = executor {
        if e.is_none() {
        } else if e.is_instance_of::<PyInt>() && !e.is_instance_of::<PyBool>() {
            let n = int_option(e, "executor", || {
                format!("a sharded executor needs 1 to {} workers, not {e}", fluss_writer::MAX_CALLBACK_SHARDS)
            })?;
            let n = usize::try_from(n).map_err(|_| {
                crate::error::client(
                    fluss_writer::ClientCode::InvalidConfig,
                    format!("a sharded executor needs 1 to {} workers, not {e}", fluss_writer::MAX_CALLBACK_SHARDS),
                )
            })?;
            opts = opts.executor(CallbackExecutor::Sharded(n));
        } else {
            let (loop_t, pool_t) = EXEC_TYPES.get_or_init(py, || {
                let a = py.import("asyncio").and_then(|m| m.getattr("AbstractEventLoop")).expect("asyncio").unbind();
                let c = py.import("concurrent.futures").and_then(|m| m.getattr("Executor")).expect("concurrent.futures").unbind();
                (a, c)
            });
            let kind = if e.is_instance(loop_t.bind(py))? {
                Target::Loop
            } else if e.is_instance(pool_t.bind(py))? {
                Target::Pool
            } else {
                return Err(pyo3::exceptions::PyTypeError::new_err(
                    "executor must be None, an int (sharded workers), a concurrent.futures.Executor or an asyncio event loop",
                ));
            };
            let handle = spawn_relay(e.clone().unbind(), kind);
            opts = opts.executor(CallbackExecutor::User(Arc::new(handle)));
        }
    }
    Ok((opts, sink))
}
