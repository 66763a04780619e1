//! The one place that deals with the GIL (C10), fork and interpreter exit.
//!
//! * [`blocking`]: every call into the core that can block (append waiting for a callback slot
//!   or buffer memory, write_arrow_batch, flush, close, wait, admin calls, dropping a handle)
//!   runs through it. It releases the GIL for the duration, so that the callback worker, other
//!   Python threads and the asyncio loop keep running; without it a full buffer would freeze the
//!   interpreter (confluent-kafka-python #412, pulsar-client-python #87, pyfluss today).
//! * [`PyWorkerHooks`]: installed on the connection's worker threads (default FIFO worker and
//!   `sharded(n)` workers). Each worker creates **one** Python thread state when it starts and
//!   keeps it for its life (an outer `PyGILState_Ensure`, then the GIL is released at once);
//!   then it attaches **once per group of queued jobs** (`around_group`), never per callback.
//!   Inside a group every Python callback call is a plain call on an attached thread. The
//!   hooks count their acquisitions so that tests can assert `acquisitions <= jobs < callbacks`.
//! * Fork: `os.register_at_fork(after_in_child=...)` bumps [`FORK_GENERATION`]; handles created
//!   in an earlier generation refuse to work ([`check_fork`]) and are leaked rather than
//!   dropped in the child (their worker and I/O threads do not exist there, so a drop would
//!   wait forever).
//! * Interpreter exit: an `atexit` hook closes every live connection (draining its writers)
//!   before finalization, then sets [`FINALIZING`]; afterwards workers never attach again.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use fluss_writer::{ClientCode, Connection, Error, WorkerHooks};
use pyo3::ffi;
use pyo3::prelude::*;

use crate::entry::entry_points;

use crate::completion::flush_resolutions;

/// Set at the end of the `atexit` hook: from then on no thread of ours attaches to Python.
pub static FINALIZING: AtomicBool = AtomicBool::new(false);

/// Bumped in every child after `fork()`.
pub static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);

/// Whether a handle created in fork generation `gen` may be used here.
pub fn check_fork(gen: u64) -> Result<(), Error> {
    if FORK_GENERATION.load(Ordering::Relaxed) != gen {
        return Err(Error::client(
            ClientCode::ForkedProcess,
            "this connection was created before fork(); it cannot be used in the child process, open a new one",
        ));
    }
    Ok(())
}

/// The GIL wrapper for every call that can block: release the GIL, run `f`, take it back.
#[inline]
pub fn blocking<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, f: F) -> T {
    py.detach(f)
}

/// The thread identifier (`threading.get_ident()`) of the interpreter's main thread, the only
/// thread where Python runs signal handlers; set at import.
static MAIN_THREAD: AtomicU64 = AtomicU64::new(0);

/// Record the main thread (module init).
pub fn init_main_thread(py: Python<'_>) -> PyResult<()> {
    let ident: u64 = py.import("threading")?.call_method0("main_thread")?.getattr("ident")?.extract()?;
    MAIN_THREAD.store(ident, Ordering::Relaxed);
    Ok(())
}

/// [`blocking`] for the calls that wait on the core (flush, close, `WriteResult.wait`,
/// `Connection.close`, a write waiting for admission), made interruptible (issue 11, defect 4).
///
/// On the main thread, the core's waits wake at least every 100 ms
/// (`fluss_writer::interrupt::with_check`) and call a check that attaches to Python and runs the
/// signal handlers (`PyErr_CheckSignals`). When a handler raises (`KeyboardInterrupt` on Ctrl-C,
/// or anything a custom handler raises), the wait ends with the core's `Interrupted` error and
/// that exception is raised here instead. The core guarantees what an interruption leaves
/// behind: an interrupted admission accepted nothing; an interrupted flush, close or wait leaves
/// every pending operation to complete exactly once, as after a timeout. On other threads,
/// where Python runs no handlers, nothing is installed: plain [`blocking`].
#[inline]
// `c_ulong` is u64 on Unix but u32 on Windows.
#[allow(clippy::useless_conversion)]
pub fn interruptible<T: Send, F: FnOnce() -> Result<T, Error> + Send>(py: Python<'_>, f: F) -> PyResult<T> {
    // SAFETY: a plain C call with no preconditions (stable ABI).
    if u64::from(unsafe { ffi::PyThread_get_thread_ident() }) != MAIN_THREAD.load(Ordering::Relaxed) {
        return blocking(py, f).map_err(crate::error::to_py);
    }
    interruptible_main(py, f)
}

#[inline(never)]
fn interruptible_main<T: Send, F: FnOnce() -> Result<T, Error> + Send>(py: Python<'_>, f: F) -> PyResult<T> {
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let r = blocking(py, || {
        let check = || {
            // Once a handler raised, every later wait of this call ends at its first check
            // (Connection.close waits for each writer in turn).
            if raised.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
                return true;
            }
            if FINALIZING.load(Ordering::Acquire) {
                return false;
            }
            Python::attach(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    *raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    true
                }
            })
        };
        fluss_writer::interrupt::with_check(&check, f)
    });
    let raised = raised.into_inner().unwrap_or_else(|p| p.into_inner());
    match r {
        Err(e) if e.code() == ClientCode::Interrupted as i32 => Err(raised.unwrap_or_else(|| crate::error::to_py(e))),
        Err(e) => Err(crate::error::to_py(e)),
        // The core ends a wait as Interrupted whenever the check said so; a handler that raised
        // while the call completed anyway cannot happen, but must not be lost: raise it.
        Ok(_) if raised.is_some() => Err(raised.expect("checked")),
        Ok(v) => Ok(v),
    }
}

/// Drop `value` without holding the GIL (a core handle's drop may wait for the callback worker,
/// which needs the GIL); leak it in a forked child, where that wait could never end.
pub fn drop_core<T: Send>(value: T, gen: u64) {
    if FORK_GENERATION.load(Ordering::Relaxed) != gen || FINALIZING.load(Ordering::Relaxed) {
        std::mem::forget(value);
        return;
    }
    Python::attach(|py| py.detach(move || drop(value)));
}

// ===== worker hooks =====

/// Counters of the hooks of one connection.
#[derive(Default)]
pub struct HookCounters {
    /// Times a worker attached to Python (one per group).
    pub acquisitions: AtomicU64,
    /// Groups run.
    pub groups: AtomicU64,
}

/// Worker hooks that keep one thread state per worker and attach once per group.
#[derive(Default)]
pub struct PyWorkerHooks {
    pub counters: HookCounters,
}

struct ThreadState {
    gstate: ffi::PyGILState_STATE,
    tstate: *mut ffi::PyThreadState,
}

thread_local! {
    static THREAD_STATE: std::cell::Cell<Option<ThreadState>> = const { std::cell::Cell::new(None) };
}

impl WorkerHooks for PyWorkerHooks {
    fn on_thread_start(&self) {
        if FINALIZING.load(Ordering::Acquire) || unsafe { ffi::Py_IsInitialized() } == 0 {
            return;
        }
        // SAFETY: the interpreter is initialized and not finalizing; this thread holds nothing.
        // The outer Ensure creates this thread's state; SaveThread releases the GIL but keeps the
        // state, so later attaches (PyGILState_Ensure inside Python::attach) only restore it.
        unsafe {
            let gstate = ffi::PyGILState_Ensure();
            let tstate = ffi::PyEval_SaveThread();
            THREAD_STATE.with(|s| s.set(Some(ThreadState { gstate, tstate })));
        }
    }

    fn on_thread_stop(&self) {
        let Some(ts) = THREAD_STATE.with(|s| s.take()) else { return };
        if FINALIZING.load(Ordering::Acquire) {
            // Leak the thread state: attaching now could hang or kill this thread.
            return;
        }
        // SAFETY: the state was created on this thread by on_thread_start and is not current.
        unsafe {
            ffi::PyEval_RestoreThread(ts.tstate);
            ffi::PyGILState_Release(ts.gstate);
        }
    }

    fn around_group(&self, run: &mut dyn FnMut()) {
        self.counters.groups.fetch_add(1, Ordering::Relaxed);
        if FINALIZING.load(Ordering::Acquire) {
            // Jobs not run are dropped: retired and reported (C1 still holds for flush/close).
            return;
        }
        Python::attach(|py| {
            self.counters.acquisitions.fetch_add(1, Ordering::Relaxed);
            run();
            crate::callbacks::release_call_args(py);
            flush_resolutions(py);
        });
    }
}

// ===== live connections (interpreter exit, fork) =====

/// What the atexit hook needs of a connection.
pub struct LiveConn {
    pub conn: std::mem::ManuallyDrop<Connection>,
    pub gen: u64,
}

impl Drop for LiveConn {
    fn drop(&mut self) {
        // SAFETY: dropped once, here.
        drop_core(unsafe { std::mem::ManuallyDrop::take(&mut self.conn) }, self.gen);
    }
}

static LIVE: Mutex<Vec<Weak<LiveConn>>> = Mutex::new(Vec::new());

pub fn register_connection(c: &Arc<LiveConn>) {
    let mut l = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    l.retain(|w| w.strong_count() > 0);
    l.push(Arc::downgrade(c));
}

entry_points! {
#[pyfunction]
/// `atexit` hook: close (drain) every live connection of this process, then stop attaching.
pub fn _at_exit(py: Python<'_>) {
    let conns: Vec<Arc<LiveConn>> = {
        let l = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        l.iter().filter_map(Weak::upgrade).collect()
    };
    let gen = FORK_GENERATION.load(Ordering::Relaxed);
    for c in &conns {
        if c.gen == gen && !c.conn.is_closed() {
            let conn: Connection = (*c.conn).clone();
            // Unbounded (every accepted operation completes and its callback runs: C1), but
            // interruptible: Ctrl-C ends the drain, and the exit goes on.
            if let Err(e) = interruptible(py, move || conn.close(None)) {
                log::warn!("closing a connection at interpreter exit: {}", e.value(py));
            }
        }
    }
    crate::logging::drain(py);
    FINALIZING.store(true, Ordering::Release);
    // Never drop these at finalization time.
    for c in conns {
        std::mem::forget(c);
    }
}
}

entry_points! {
#[pyfunction]
/// `os.register_at_fork(after_in_child=...)`: every existing handle becomes unusable.
pub fn _after_fork_in_child() {
    FORK_GENERATION.fetch_add(1, Ordering::Relaxed);
}
}
