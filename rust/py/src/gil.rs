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
//! * Interpreter exit (issue 27): see [`_at_exit`]. Once finalization has begun, CPython <= 3.13
//!   ends any other thread that takes the GIL with `pthread_exit` from inside `take_gil` (3.14
//!   hangs it there instead). A thread with Rust frames on its stack must never get there:
//!   `pthread_exit` unwinds it by force through those frames (their destructors, `catch_unwind`,
//!   `extern "C"` frames), which is undefined behaviour: a crash at exit. So every place where a
//!   thread of ours, or a Python thread inside one of our calls, takes the GIL goes through one
//!   gate, [`Inside::enter`]: after the atexit hook closed it ([`EXITING`]), a thread never takes
//!   the GIL again. A worker leaves its group; a Python thread whose blocking call ends parks for
//!   good (the call never returns; the process exits around it, as 3.14 does with daemon threads).
//!   The hook waits, with the GIL released, until no thread is between "passed the gate" and
//!   "holds the GIL" or inside a worker group, so after the hook none of ours enters `take_gil`.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use fluss_writer::{ClientCode, Connection, Error, WorkerHooks};
use pyo3::ffi;
use pyo3::prelude::*;

use crate::entry::entry_points;

use crate::completion::flush_resolutions;

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

// ===== the exit gate =====

/// Closed by the atexit hook once its drain is over: from then on no thread of ours takes the GIL
/// (except the thread that runs the hook, which goes on to finalize the interpreter).
static EXITING: AtomicBool = AtomicBool::new(false);

/// Passes through the gate that are held: one per thread of ours inside a worker group, and one
/// per entry point running on a thread attached to Python (taking the GIL or holding it with our
/// frames on its stack, including while Python code that it called waits for the GIL), except
/// while the entry point waits in [`blocking`].
static INSIDE: AtomicUsize = AtomicUsize::new(0);

/// Set during the exit drain once its callback budget ([`EXIT_CALLBACK_BUDGET`]) is spent, and
/// with [`EXITING`]: Python callbacks not started by then are abandoned (never called).
static ABANDON_CALLBACKS: AtomicBool = AtomicBool::new(false);

/// Python callbacks abandoned at exit (reported once by the hook).
static ABANDONED: AtomicU64 = AtomicU64::new(0);

/// `PyThread_get_thread_ident()` of the thread running the atexit hook (0: not yet run).
static EXIT_THREAD: AtomicU64 = AtomicU64::new(0);

/// How long callbacks keep running during the exit drain (from its start).
pub const EXIT_CALLBACK_BUDGET: Duration = Duration::from_secs(5);

/// How long the hook waits, after closing the gate, for threads of ours to leave Python (a
/// callback that began before the budget ran out and is still running).
const EXIT_LEAVE_WAIT: Duration = Duration::from_secs(2);

/// Whether the atexit hook has closed the gate.
#[inline]
pub fn exiting() -> bool {
    EXITING.load(Ordering::SeqCst)
}

/// Whether a Python callback about to run must be abandoned instead (interpreter exit). The
/// caller holds the GIL and leaks the callable rather than dropping it.
#[inline]
pub fn abandon_callback() -> bool {
    if ABANDON_CALLBACKS.load(Ordering::Relaxed) {
        ABANDONED.fetch_add(1, Ordering::Relaxed);
        return true;
    }
    false
}

#[allow(clippy::useless_conversion)]
fn thread_ident() -> u64 {
    // SAFETY: a plain C call with no preconditions (stable ABI).
    u64::from(unsafe { ffi::PyThread_get_thread_ident() })
}

/// A pass through the exit gate: while it lives, the atexit hook waits (bounded) for it.
pub struct Inside(());

impl Inside {
    /// Pass the gate before taking the GIL, or at the start of an entry point; `None` once the
    /// atexit hook closed it (then the GIL must not be taken, or must be let go: the
    /// interpreter may be finalizing). The thread running the hook always passes (it is the
    /// one finalizing).
    ///
    /// SeqCst on both sides: either this increment comes before the hook's `EXITING` store in
    /// the single total order, and the hook sees the count and waits for it, or it comes after,
    /// and this load sees `EXITING`.
    #[inline]
    pub fn enter() -> Option<Inside> {
        if enter_count() {
            Some(Inside(()))
        } else {
            None
        }
    }
}

impl Drop for Inside {
    #[inline]
    fn drop(&mut self) {
        INSIDE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// [`Inside::enter`] without the guard: whether the count was taken.
#[inline]
fn enter_count() -> bool {
    INSIDE.fetch_add(1, Ordering::SeqCst);
    if EXITING.load(Ordering::SeqCst) && EXIT_THREAD.load(Ordering::Relaxed) != thread_ident() {
        INSIDE.fetch_sub(1, Ordering::SeqCst);
        return false;
    }
    true
}

/// The pass of an entry point ([`crate::entry::guard`]), which the interpreter called with the
/// GIL held. Once the atexit hook closed the gate, a thread that calls in (a daemon thread) lets
/// the GIL go and parks for good instead: it must not be running our frames when the
/// interpreter finalizes.
#[inline]
pub fn entry_pass() -> Inside {
    match Inside::enter() {
        Some(pass) => pass,
        None => {
            // SAFETY: the GIL is held (an entry point); released for good, never restored.
            unsafe { ffi::PyEval_SaveThread() };
            park_forever()
        }
    }
}

/// Block this thread for good: what a thread of ours does instead of taking the GIL after
/// interpreter exit began. The process exits around it (CPython 3.14 does the same with daemon
/// threads).
#[cold]
pub fn park_forever() -> ! {
    loop {
        std::thread::park();
    }
}

/// Parks the thread if a forced unwind (`pthread_exit` from CPython's `take_gil` at
/// finalization) passes through the frame that holds it, so that the unwind never reaches a
/// `catch_unwind` or `extern "C"` frame above (pyo3-ffi does the same around
/// `PyEval_RestoreThread`). Only a backstop for Python code that a callback or a conversion runs
/// while the interpreter finalizes; the gate keeps our own GIL acquisitions from ever getting
/// there. Disarmed with [`ForcedUnwindStop::disarm`] on the normal path; a Rust panic unwinds
/// through it as usual.
pub struct ForcedUnwindStop(());

impl ForcedUnwindStop {
    #[inline(always)]
    pub fn arm() -> ForcedUnwindStop {
        ForcedUnwindStop(())
    }

    #[inline(always)]
    pub fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for ForcedUnwindStop {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            park_forever();
        }
    }
}

/// The GIL wrapper for every call that can block: release the GIL, run `f`, take it back
/// through the exit gate. The caller holds a pass ([`entry_pass`], [`Inside`]); it is given back
/// for the wait (so that a long wait does not hold up the atexit hook) and taken again before
/// the GIL is. A call that ends after the atexit hook closed the gate never takes the GIL back:
/// its thread (a daemon thread: every other thread was joined before atexit) parks until the
/// process exits.
#[inline]
pub fn blocking<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, f: F) -> T {
    /// Dropped (also when `f` panics) just before pyo3 takes the GIL back.
    struct Reattach;
    impl Drop for Reattach {
        #[inline]
        fn drop(&mut self) {
            if !enter_count() {
                park_forever();
            }
        }
    }
    INSIDE.fetch_sub(1, Ordering::SeqCst);
    py.detach(move || {
        let _reattach = Reattach;
        f()
    })
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
pub fn interruptible<T: Send, F: FnOnce() -> Result<T, Error> + Send>(py: Python<'_>, f: F) -> PyResult<T> {
    if thread_ident() != MAIN_THREAD.load(Ordering::Relaxed) {
        return blocking(py, f).map_err(crate::error::to_py);
    }
    interruptible_main(py, &|| {}, f)
}

/// [`interruptible`] on the main thread; `tick` also runs at every check (every 100 ms at most).
#[inline(never)]
fn interruptible_main<T: Send, F: FnOnce() -> Result<T, Error> + Send>(py: Python<'_>, tick: &(dyn Fn() + Sync), f: F) -> PyResult<T> {
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let r = blocking(py, || {
        let check = || {
            tick();
            // Once a handler raised, every later wait of this call ends at its first check
            // (Connection.close waits for each writer in turn).
            if raised.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
                return true;
            }
            let Some(_pass) = Inside::enter() else { return false };
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
/// which needs the GIL); leak it in a forked child, where that wait could never end, and once
/// interpreter exit began (the drop could wait for a worker that will not run again).
/// The caller holds the GIL.
pub fn drop_core<T: Send>(value: T, gen: u64) {
    if FORK_GENERATION.load(Ordering::Relaxed) != gen || exiting() {
        std::mem::forget(value);
        return;
    }
    // Called by a deallocation, not an entry point: take a pass for `blocking`.
    let Some(pass) = Inside::enter() else {
        std::mem::forget(value);
        return;
    };
    Python::attach(|py| blocking(py, move || drop(value)));
    drop(pass);
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
        let Some(_pass) = Inside::enter() else { return };
        // SAFETY: a plain C call with no preconditions.
        if unsafe { ffi::Py_IsInitialized() } == 0 {
            return;
        }
        // SAFETY: the interpreter is initialized and, past the gate, not finalizing; this thread
        // holds nothing. The outer Ensure creates this thread's state; SaveThread releases the GIL
        // but keeps the state, so later attaches (PyGILState_Ensure inside Python::attach) only
        // restore it.
        unsafe {
            let gstate = ffi::PyGILState_Ensure();
            let tstate = ffi::PyEval_SaveThread();
            THREAD_STATE.with(|s| s.set(Some(ThreadState { gstate, tstate })));
        }
    }

    fn on_thread_stop(&self) {
        let Some(ts) = THREAD_STATE.with(|s| s.take()) else { return };
        // Past exit: leak the thread state, taking the GIL could end this thread.
        let Some(_pass) = Inside::enter() else { return };
        // SAFETY: the state was created on this thread by on_thread_start and is not current.
        unsafe {
            ffi::PyEval_RestoreThread(ts.tstate);
            ffi::PyGILState_Release(ts.gstate);
        }
    }

    fn around_group(&self, run: &mut dyn FnMut()) {
        self.counters.groups.fetch_add(1, Ordering::Relaxed);
        // Past exit the jobs are not run; the worker drops them (retired; their Python
        // callables, dropped without the GIL, go to pyo3's deferred pool: never released by
        // this thread).
        let Some(_pass) = Inside::enter() else { return };
        Python::attach(|py| {
            self.counters.acquisitions.fetch_add(1, Ordering::Relaxed);
            run();
            crate::callbacks::release_call_args(py);
            if !exiting() {
                flush_resolutions(py);
            }
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
/// `atexit` hook (registered at import, so it runs after `threading` joined every non-daemon
/// thread and after the atexit functions registered later; before finalization):
///
/// 1. **Drain**: close every live connection of this process as `Connection.close()` does:
///    everything accepted is sent and its answer awaited (bounded by
///    `client.writer.delivery-timeout`, C7), callbacks run meanwhile. Callbacks run for at most
///    [`EXIT_CALLBACK_BUDGET`] from the start of the drain; one not started by then is
///    abandoned: never called, its callable leaked (never released without the GIL), counted in
///    one warning. Ctrl-C ends the drain. Writes of daemon threads during the drain fail with
///    `WRITER_CLOSED` (the writers are closed first).
/// 2. **Gate**: close the exit gate, then, with the GIL released, wait (at most
///    `EXIT_LEAVE_WAIT`) until no thread of ours is taking the GIL or running Python. After
///    that no worker, relay or log thread runs Python again, and a daemon thread whose
///    fluss_writer call ends never takes the GIL back (it stays blocked in the call until the
///    process exits), so none of them meets CPython's finalization with Rust frames on its stack.
pub fn _at_exit(py: Python<'_>) {
    EXIT_THREAD.store(thread_ident(), Ordering::Relaxed);
    let conns: Vec<Arc<LiveConn>> = {
        let l = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        l.iter().filter_map(Weak::upgrade).collect()
    };
    let gen = FORK_GENERATION.load(Ordering::Relaxed);
    let started = Instant::now();
    // Runs at every check of the drain's waits (every 100 ms at most).
    let tick = || {
        if started.elapsed() >= EXIT_CALLBACK_BUDGET {
            ABANDON_CALLBACKS.store(true, Ordering::Relaxed);
        }
    };
    for c in &conns {
        if c.gen == gen && !c.conn.is_closed() {
            let conn: Connection = (*c.conn).clone();
            if let Err(e) = interruptible_main(py, &tick, move || conn.close(None)) {
                log::warn!("closing a connection at interpreter exit: {}", e.value(py));
                let ours = e.value(py).is_instance(crate::exceptions::get(py).base.bind(py)).unwrap_or(false);
                if !ours {
                    // Interrupted (Ctrl-C, or another signal handler raised): the exit goes on
                    // without draining the other connections.
                    break;
                }
            }
        }
    }
    ABANDON_CALLBACKS.store(true, Ordering::Relaxed);
    EXITING.store(true, Ordering::SeqCst);
    let left_inside = blocking(py, || {
        let until = Instant::now() + EXIT_LEAVE_WAIT;
        loop {
            // This thread's own pass (this entry point's) is given back while `blocking` waits.
            let n = INSIDE.load(Ordering::SeqCst);
            if n == 0 || Instant::now() >= until {
                return n;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let abandoned = ABANDONED.load(Ordering::Relaxed);
    if abandoned > 0 {
        log::warn!(
            "interpreter exit: {abandoned} completion callbacks were not run (callbacks run for at most {} s of the exit drain; close writers before exiting to run them all)",
            EXIT_CALLBACK_BUDGET.as_secs()
        );
    }
    if left_inside > 0 {
        log::warn!("interpreter exit: {left_inside} threads were still running fluss_writer code (a callback?) when the interpreter began to finalize");
    }
    crate::logging::drain(py);
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
