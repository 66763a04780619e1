//! Per-writer callback state: admission (callback slots), the flush barrier, close, error
//! reporting and counters.
//!
//! A [`Scope`] is what a writer holds. The life of one operation through it:
//!
//! 1. [`Scope::admit`] reserves one of `max_pending_callbacks` slots (a [`Permits`], FIFO-fair)
//!    and counts a [`Ticket`] in the current flush epoch. On the fast path that is two atomic
//!    read-modify-writes, no lock and no allocation (C5, C12).
//! 2. If the submission is then rejected (e.g. its buffer-memory wait failed), [`Scope::cancel`]
//!    gives the slot back; no callback runs (C1).
//! 3. Otherwise the ticket joins its batch's [`TicketSet`]; when the batch completes, a
//!    [`Job`] carrying it goes to the scope's executor ([`Scope::dispatch`]). The job
//!    *retires* all its tickets at once, after its callbacks returned and were dropped.
//! 4. [`Scope::flush`] waits for every ticket admitted before it (C6); [`Scope::close`] stops
//!    admitting and [`Scope::wait_idle`] waits for all tickets (C7).
//!
//! The flush algorithm and its exact guarantee under concurrent flushes are in
//! [`barrier`](crate::barrier).

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64 as StdAtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::barrier::{FlushBarrier, FlushError, MAX_TICKETS};
use crate::budget::Deadline;
use crate::clock::Clock;
use crate::context::in_callback;
use crate::executor::Executor;
use crate::job::Job;
use crate::loom::sync::atomic::{AtomicBool, Ordering::*};
use crate::permits::{AcquireError, Permits};
use crate::slow::SlowWatch;
use crate::stats::{LatencyBuckets, LatencyBucketsSnapshot};

/// Receives errors raised by callbacks (panics) and by the dispatcher (jobs dropped unrun).
pub type ErrorHandler = Arc<dyn Fn(&CallbackError) + Send + Sync>;

/// An error raised while running callbacks, reported to the scope's [`ErrorHandler`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackError {
    /// What went wrong: the panic payload's text, or a dispatcher message.
    pub message: String,
    /// The operation concerned, e.g. `"append to db.t bucket 3 offset 17"`.
    pub operation: String,
}

impl fmt::Display for CallbackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "callback for {} failed: {}", self.operation, self.message)
    }
}

impl std::error::Error for CallbackError {}

/// Options of one [`Scope`].
#[derive(Clone)]
pub struct ScopeOptions {
    /// Callbacks that may be pending (admitted, not yet retired) at once. Default 262144. Clamped
    /// to `1..=2^31 - 1`.
    pub max_pending_callbacks: u64,
    /// Where callback errors go; `None` logs them with `log::error!` and the operation's identity.
    pub error_handler: Option<ErrorHandler>,
    /// A callback that runs at least this long is counted in [`ScopeStats::slow_callbacks`] and
    /// logged with its operation (`log::warn!`, at most one line per 10 s per scope, which counts
    /// the ones in between). `None`: not watched. Measured with a coarse clock (see
    /// [`crate::slow`]), in real time whatever the scope's [`Clock`].
    pub slow_callback_threshold: Option<std::time::Duration>,
}

impl ScopeOptions {
    /// The largest `max_pending_callbacks` (2^31 - 1: the flush barrier counts tickets in 31 bits).
    pub const MAX_PENDING_CALLBACKS: u64 = MAX_TICKETS;

    /// The default `max_pending_callbacks`.
    pub const DEFAULT_MAX_PENDING_CALLBACKS: u64 = 262_144;
}

impl Default for ScopeOptions {
    fn default() -> Self {
        ScopeOptions { max_pending_callbacks: Self::DEFAULT_MAX_PENDING_CALLBACKS, error_handler: None, slow_callback_threshold: None }
    }
}

impl fmt::Debug for ScopeOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopeOptions")
            .field("max_pending_callbacks", &self.max_pending_callbacks)
            .field("error_handler", &self.error_handler.is_some())
            .field("slow_callback_threshold", &self.slow_callback_threshold)
            .finish()
    }
}

/// Why [`Scope::admit`] refused an operation. Nothing was accepted; no callback will run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdmitError {
    /// All callback slots stayed taken until the wait budget ran out (or the budget was
    /// non-blocking). Retriable.
    Exhausted,
    /// All slots are taken and the caller is running a callback, which never blocks. Retriable,
    /// but not from inside the callback.
    WouldBlockInCallback,
    /// The scope was closed. Not retriable.
    Closed,
    /// The thread's interrupt check (`crate::interrupt`) asked to stop waiting for a slot.
    /// Nothing was accepted.
    Interrupted,
}

impl fmt::Display for AdmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AdmitError::Exhausted => "callback capacity exhausted: the wait budget ran out",
            AdmitError::WouldBlockInCallback => "callback capacity exhausted inside a callback, which never blocks",
            AdmitError::Closed => "writer closed",
            AdmitError::Interrupted => "interrupted while waiting for a callback slot",
        })
    }
}

impl std::error::Error for AdmitError {}

/// A reservation made by [`Scope::admit`]: one slot, counted in one flush epoch.
///
/// A plain `Copy` token, not RAII: it must end up either in exactly one job's [`TicketSet`] or in
/// one [`Scope::cancel`] call, and only in the scope that issued it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket {
    parity: u8,
}

/// The tickets of one job, counted per flush epoch so that retiring a job is O(1).
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct TicketSet {
    counts: [u32; 2],
}

impl TicketSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one ticket.
    #[inline]
    pub fn add(&mut self, t: Ticket) {
        self.counts[t.parity as usize] += 1;
    }

    /// Adds every ticket of `other`.
    pub fn extend(&mut self, other: TicketSet) {
        self.counts[0] += other.counts[0];
        self.counts[1] += other.counts[1];
    }

    /// Number of tickets.
    pub fn len(&self) -> u64 {
        u64::from(self.counts[0]) + u64::from(self.counts[1])
    }

    /// Whether the set holds no ticket.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl From<Ticket> for TicketSet {
    fn from(t: Ticket) -> Self {
        let mut s = TicketSet::default();
        s.add(t);
        s
    }
}

/// Counters of one scope.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScopeStats {
    /// Tickets admitted and not yet retired or cancelled.
    pub pending: u64,
    /// Callbacks invoked (including those that panicked).
    pub callbacks_run: u64,
    /// Errors reported to the error handler: panics in callbacks or in a job body, and one per
    /// job dropped without being run.
    pub callback_errors: u64,
    /// Jobs dropped without being run (their tickets were retired anyway; each is also counted
    /// in `callback_errors`).
    pub jobs_dropped_unrun: u64,
    /// Callbacks that ran at least `slow_callback_threshold`.
    pub slow_callbacks: u64,
}

struct ScopeInner {
    slots: Permits,
    barrier: FlushBarrier,
    closed: AtomicBool,
    executor: Executor,
    clock: Arc<dyn Clock>,
    error_handler: Option<ErrorHandler>,
    callbacks_run: StdAtomicU64,
    callback_errors: StdAtomicU64,
    jobs_dropped_unrun: StdAtomicU64,
    slow: Option<SlowWatch>,
    /// Ack-to-callback latency of this scope's jobs (the executor's [`Histogram`] may be shared
    /// by several scopes).
    ///
    /// [`Histogram`]: crate::Histogram
    ack_to_callback: LatencyBuckets,
}

/// Per-writer callback state. Cheap to clone (one `Arc`).
#[derive(Clone)]
pub struct Scope {
    inner: Arc<ScopeInner>,
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope").field("slots", &self.inner.slots).field("closed", &self.is_closed()).field("stats", &self.stats()).finish()
    }
}

impl Scope {
    /// A scope whose jobs run on `executor`, timed by `clock`.
    pub fn new(opts: ScopeOptions, executor: Executor, clock: Arc<dyn Clock>) -> Scope {
        let max = opts.max_pending_callbacks.clamp(1, MAX_TICKETS);
        Scope {
            inner: Arc::new(ScopeInner {
                slots: Permits::new(max),
                barrier: FlushBarrier::new(),
                closed: AtomicBool::new(false),
                executor,
                clock,
                error_handler: opts.error_handler,
                callbacks_run: StdAtomicU64::new(0),
                callback_errors: StdAtomicU64::new(0),
                jobs_dropped_unrun: StdAtomicU64::new(0),
                slow: opts.slow_callback_threshold.filter(|t| !t.is_zero()).map(SlowWatch::new),
                ack_to_callback: LatencyBuckets::new(),
            }),
        }
    }

    // ===== admission =====

    /// Reserves one callback slot (waiting until `deadline` if all are taken) and registers it in
    /// the current flush epoch.
    ///
    /// Fast path: two atomic read-modify-writes, no lock, no allocation. Never blocks inside a
    /// callback ([`AdmitError::WouldBlockInCallback`] where it would wait).
    #[inline]
    pub fn admit(&self, deadline: Deadline) -> Result<Ticket, AdmitError> {
        let i = &*self.inner;
        if !i.slots.try_acquire(1) {
            i.slots.acquire(1, deadline, &*i.clock).map_err(|e| match e {
                AcquireError::Exhausted | AcquireError::TooLarge => AdmitError::Exhausted,
                AcquireError::WouldBlockInCallback => AdmitError::WouldBlockInCallback,
                AcquireError::Closed => AdmitError::Closed,
                AcquireError::Interrupted => AdmitError::Interrupted,
            })?;
        }
        Ok(Ticket { parity: i.barrier.register() })
    }

    /// [`Scope::admit`] without waiting: `None` when no slot is free now (or the scope is closed,
    /// or another submission is already waiting for a slot).
    #[inline]
    pub fn try_admit(&self) -> Option<Ticket> {
        let i = &*self.inner;
        i.slots.try_acquire(1).then(|| Ticket { parity: i.barrier.register() })
    }

    /// Gives back the slot of a submission rejected after [`Scope::admit`]. No callback runs.
    pub fn cancel(&self, t: Ticket) {
        self.retire(TicketSet::from(t));
    }

    /// Releases the slots of `tickets` and removes them from the flush accounting.
    pub(crate) fn retire(&self, tickets: TicketSet) {
        if tickets.is_empty() {
            return;
        }
        // Slots first, so that when a flush or wait_idle returns the slots are free too.
        self.inner.slots.release(tickets.len());
        self.inner.barrier.retire(tickets.counts);
    }

    /// Callback slots currently taken.
    pub fn slots_in_use(&self) -> u64 {
        self.inner.slots.in_use()
    }

    /// The `max_pending_callbacks` in force (after clamping).
    pub fn max_pending_callbacks(&self) -> u64 {
        self.inner.slots.capacity()
    }

    // ===== dispatch =====

    /// Hands one completed batch to this scope's executor.
    pub fn dispatch(&self, job: Job) {
        self.inner.executor.submit(job);
    }

    /// The executor this scope's jobs run on.
    pub fn executor(&self) -> &Executor {
        &self.inner.executor
    }

    /// The scope's clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.inner.clock
    }

    // ===== flush and close =====

    /// Returns once every ticket admitted before this call has been retired (its callback
    /// returned and was dropped), or fails at `deadline` with [`FlushError::Timeout`] (C6).
    ///
    /// Fails at once with [`FlushError::CalledFromCallback`] when called from a callback. See
    /// [`barrier`](crate::barrier) for the exact guarantee when flushes run concurrently.
    pub fn flush(&self, deadline: Deadline) -> Result<(), FlushError> {
        if in_callback() {
            return Err(FlushError::CalledFromCallback);
        }
        self.inner.barrier.flush(deadline, &*self.inner.clock)
    }

    /// Stops admitting: later [`Scope::admit`] calls and current slot waiters fail with
    /// [`AdmitError::Closed`]. Admitted operations complete normally. Idempotent; never blocks.
    pub fn close(&self) {
        self.inner.closed.store(true, Release);
        self.inner.slots.close();
    }

    /// Whether [`Scope::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Acquire)
    }

    /// Waits until no ticket is outstanding (used by close, after [`Scope::close`]).
    ///
    /// Fails at once with [`FlushError::CalledFromCallback`] when called from a callback.
    pub fn wait_idle(&self, deadline: Deadline) -> Result<(), FlushError> {
        if in_callback() {
            return Err(FlushError::CalledFromCallback);
        }
        self.inner.barrier.wait_idle(deadline, &*self.inner.clock)
    }

    /// Threads currently waiting in [`Scope::flush`] or [`Scope::wait_idle`].
    pub fn flush_waiters(&self) -> u32 {
        self.inner.barrier.waiters()
    }

    // ===== errors and stats =====

    /// Reports `err` to the error handler (or logs it). A panicking handler is caught and logged.
    /// Does not count anything.
    pub fn report_error(&self, err: &CallbackError) {
        match &self.inner.error_handler {
            Some(h) => {
                if catch_unwind(AssertUnwindSafe(|| h(err))).is_err() {
                    log::error!("error handler panicked while handling: {err}");
                }
            }
            None => log::error!("{err}"),
        }
    }

    pub(crate) fn count_callbacks(&self, run: u64, errors: u64) {
        if run > 0 {
            self.inner.callbacks_run.fetch_add(run, Relaxed);
        }
        if errors > 0 {
            self.inner.callback_errors.fetch_add(errors, Relaxed);
        }
    }

    /// The slow-callback watch, if this scope has one.
    #[inline]
    pub(crate) fn slow_watch(&self) -> Option<&SlowWatch> {
        self.inner.slow.as_ref()
    }

    /// A job of this scope started `nanos` after its batch's acknowledgement.
    #[inline]
    pub(crate) fn record_ack_to_callback(&self, nanos: u64) {
        self.inner.ack_to_callback.record(nanos);
    }

    /// Time from a batch's acknowledgement to the start of its job, for this scope's jobs only
    /// (what [`ExecutorStats::ack_to_callback`](crate::ExecutorStats::ack_to_callback) measures
    /// over every scope of the executor).
    pub fn ack_to_callback_buckets(&self) -> LatencyBucketsSnapshot {
        self.inner.ack_to_callback.snapshot()
    }

    /// How long each callback ran, on the slow-callback check's coarse clock: samples are whole
    /// ticks (a callback that no tick fell inside counts as 0). Empty without a
    /// `slow_callback_threshold`.
    pub fn callback_run_buckets(&self) -> LatencyBucketsSnapshot {
        self.inner.slow.as_ref().map(|w| w.run_time.snapshot()).unwrap_or_default()
    }

    pub(crate) fn count_dropped_job(&self) {
        self.inner.jobs_dropped_unrun.fetch_add(1, Relaxed);
        self.inner.callback_errors.fetch_add(1, Relaxed);
    }

    /// A snapshot of this scope's counters.
    pub fn stats(&self) -> ScopeStats {
        ScopeStats {
            pending: self.inner.barrier.pending(),
            callbacks_run: self.inner.callbacks_run.load(Relaxed),
            callback_errors: self.inner.callback_errors.load(Relaxed),
            jobs_dropped_unrun: self.inner.jobs_dropped_unrun.load(Relaxed),
            slow_callbacks: self.inner.slow.as_ref().map_or(0, |w| w.count.load(Relaxed)),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::test_util::{eventually, held_scope, one_callback_job};
    use crate::{Executor, ManualClock, SystemClock, WaitBudget};
    use std::sync::atomic::AtomicBool as StdAtomicBool;
    use std::time::Duration;

    #[test]
    fn admit_cancel_and_exhaustion() {
        let (scope, _h, _e) = held_scope(2);
        let a = scope.admit(Deadline::never()).unwrap();
        let _b = scope.admit(Deadline::never()).unwrap();
        assert_eq!(scope.stats().pending, 2);
        assert_eq!(scope.admit(Deadline::now()), Err(AdmitError::Exhausted));
        scope.cancel(a);
        assert_eq!(scope.stats().pending, 1);
        assert_eq!(scope.slots_in_use(), 1);
        assert!(scope.admit(Deadline::now()).is_ok());
        assert_eq!(scope.stats().callbacks_run, 0);
    }

    #[test]
    fn admit_waits_for_a_slot_and_times_out_on_the_injected_clock() {
        let holding = std::sync::Arc::new(crate::test_util::Holding::default());
        let clock = Arc::new(ManualClock::new());
        let scope = Scope::new(
            ScopeOptions { max_pending_callbacks: 1, error_handler: None, slow_callback_threshold: None },
            Executor::user(holding),
            clock.clone(),
        );
        let t0 = scope.admit(Deadline::never()).unwrap();
        // Times out when the manual clock passes the deadline.
        let s2 = scope.clone();
        let c2 = clock.clone();
        let waiter = std::thread::spawn(move || s2.admit(Deadline::from_budget(WaitBudget::Timeout(Duration::from_secs(1)), &*c2)));
        eventually("admit waiting", || scope.inner.slots.waiters() == 1);
        clock.advance(Duration::from_secs(1));
        assert_eq!(waiter.join().unwrap(), Err(AdmitError::Exhausted));
        // Succeeds when a slot frees up before the deadline.
        let s3 = scope.clone();
        let waiter = std::thread::spawn(move || s3.admit(Deadline::never()));
        eventually("admit waiting", || scope.inner.slots.waiters() == 1);
        scope.cancel(t0);
        let t1 = waiter.join().unwrap().unwrap();
        scope.cancel(t1);
        assert_eq!(scope.stats().pending, 0);
    }

    #[test]
    fn flush_is_not_extended_by_later_admits() {
        let (scope, holding, _e) = held_scope(16);
        let before = TicketSet::from(scope.admit(Deadline::never()).unwrap());
        scope.dispatch(one_callback_job(&scope, 0, before, || {}));
        let s2 = scope.clone();
        let flusher = std::thread::spawn(move || s2.flush(Deadline::never()));
        eventually("flush waiting", || scope.flush_waiters() == 1);
        // Admitted after the flush began: must not hold it up.
        let after = TicketSet::from(scope.admit(Deadline::never()).unwrap());
        scope.dispatch(one_callback_job(&scope, 0, after, || {}));
        let mut jobs = holding.take();
        assert_eq!(jobs.len(), 2);
        let later = jobs.pop().unwrap();
        assert!(!flusher.is_finished());
        jobs.pop().unwrap().run();
        assert_eq!(flusher.join().unwrap(), Ok(()));
        assert_eq!(scope.stats().pending, 1, "the later ticket is still pending");
        // A new flush does wait for it.
        assert_eq!(scope.flush(Deadline::now()), Err(FlushError::Timeout));
        later.run();
        assert_eq!(scope.flush(Deadline::now()), Ok(()));
        assert_eq!(scope.stats().callbacks_run, 2);
    }

    #[test]
    fn flush_waits_for_earlier_epochs_after_a_timed_out_flush() {
        let (scope, holding, _e) = held_scope(16);
        let a = TicketSet::from(scope.admit(Deadline::never()).unwrap());
        assert_eq!(scope.flush(Deadline::now()), Err(FlushError::Timeout));
        let b = TicketSet::from(scope.admit(Deadline::never()).unwrap());
        scope.dispatch(one_callback_job(&scope, 0, a, || {}));
        scope.dispatch(one_callback_job(&scope, 0, b, || {}));
        let mut jobs = holding.take();
        let job_b = jobs.pop().unwrap();
        let job_a = jobs.pop().unwrap();
        job_b.run();
        // `a` (older epoch) is still pending: the flush must not return.
        assert_eq!(scope.flush(Deadline::now()), Err(FlushError::Timeout));
        job_a.run();
        assert_eq!(scope.flush(Deadline::now()), Ok(()));
    }

    /// Submitters admit and dispatch continuously to a FIFO worker while flushers check that every
    /// operation whose admit returned before the flush began has run when the flush returns.
    #[test]
    fn flush_watermark_under_concurrent_admits_and_flushes() {
        const OPS: usize = 4000;
        let scope = Scope::new(
            ScopeOptions { max_pending_callbacks: 64, error_handler: None, slow_callback_threshold: None },
            Executor::fifo("flush-stress", None),
            Arc::new(SystemClock::new()),
        );
        let done: Arc<Vec<StdAtomicBool>> = Arc::new((0..OPS).map(|_| StdAtomicBool::new(false)).collect());
        // admitted[i] is set once op i's admit has returned (and it was dispatched).
        let admitted: Arc<Vec<StdAtomicBool>> = Arc::new((0..OPS).map(|_| StdAtomicBool::new(false)).collect());
        let stop = Arc::new(StdAtomicBool::new(false));
        let submitters: Vec<_> = (0..2)
            .map(|k| {
                let (scope, done, admitted) = (scope.clone(), done.clone(), admitted.clone());
                std::thread::spawn(move || {
                    for i in (k..OPS).step_by(2) {
                        let t = scope.admit(Deadline::never()).unwrap();
                        admitted[i].store(true, SeqCst);
                        let d = done.clone();
                        scope.dispatch(one_callback_job(&scope, 0, t.into(), move || {
                            d[i].store(true, SeqCst);
                        }));
                    }
                })
            })
            .collect();
        let flushers: Vec<_> = (0..2)
            .map(|_| {
                let (scope, done, admitted, stop) = (scope.clone(), done.clone(), admitted.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut rounds = 0;
                    while !stop.load(SeqCst) {
                        let seen: Vec<usize> = (0..OPS).filter(|&i| admitted[i].load(SeqCst)).collect();
                        scope.flush(Deadline::never()).unwrap();
                        for i in seen {
                            assert!(done[i].load(SeqCst), "op {i} admitted before flush, not run");
                        }
                        rounds += 1;
                    }
                    rounds
                })
            })
            .collect();
        for s in submitters {
            s.join().unwrap();
        }
        stop.store(true, SeqCst);
        for f in flushers {
            assert!(f.join().unwrap() > 0);
        }
        scope.flush(Deadline::never()).unwrap();
        assert!(done.iter().all(|d| d.load(SeqCst)));
        assert_eq!(scope.stats().pending, 0);
        assert_eq!(scope.stats().callbacks_run, OPS as u64);
    }

    #[test]
    fn close_stops_admitting_wakes_waiters_and_lets_pending_complete() {
        let (scope, holding, _e) = held_scope(1);
        let t = scope.admit(Deadline::never()).unwrap();
        let s2 = scope.clone();
        let waiter = std::thread::spawn(move || s2.admit(Deadline::never()));
        eventually("admit waiting", || scope.inner.slots.waiters() == 1);
        scope.close();
        assert!(scope.is_closed());
        assert_eq!(waiter.join().unwrap(), Err(AdmitError::Closed));
        assert_eq!(scope.admit(Deadline::now()), Err(AdmitError::Closed));
        assert_eq!(scope.admit(Deadline::never()), Err(AdmitError::Closed));
        let ran = Arc::new(StdAtomicBool::new(false));
        let r2 = ran.clone();
        scope.dispatch(one_callback_job(&scope, 0, t.into(), move || r2.store(true, SeqCst)));
        assert_eq!(scope.wait_idle(Deadline::now()), Err(FlushError::Timeout));
        let s3 = scope.clone();
        let idle = std::thread::spawn(move || s3.wait_idle(Deadline::never()));
        eventually("wait_idle waiting", || scope.flush_waiters() == 1);
        holding.take().pop().unwrap().run();
        assert_eq!(idle.join().unwrap(), Ok(()));
        assert!(ran.load(SeqCst));
        assert_eq!(scope.slots_in_use(), 0);
    }

    #[test]
    fn wait_idle_times_out_on_the_injected_clock() {
        let clock = Arc::new(ManualClock::new());
        let scope = Scope::new(ScopeOptions::default(), Executor::user(Arc::new(crate::test_util::Holding::default())), clock.clone());
        let t = scope.admit(Deadline::never()).unwrap();
        let s2 = scope.clone();
        let d = Deadline::after(Duration::from_secs(3), &*clock);
        let w = std::thread::spawn(move || s2.wait_idle(d));
        eventually("wait_idle waiting", || scope.flush_waiters() == 1);
        clock.advance(Duration::from_secs(3));
        assert_eq!(w.join().unwrap(), Err(FlushError::Timeout));
        scope.cancel(t);
        assert_eq!(scope.wait_idle(Deadline::now()), Ok(()));
    }

    #[test]
    fn options_are_clamped() {
        let h = Executor::user(Arc::new(crate::test_util::Holding::default()));
        let clock: Arc<dyn Clock> = Arc::new(SystemClock::new());
        let s = Scope::new(
            ScopeOptions { max_pending_callbacks: 0, error_handler: None, slow_callback_threshold: None },
            h.clone(),
            clock.clone(),
        );
        assert_eq!(s.max_pending_callbacks(), 1);
        let s = Scope::new(ScopeOptions { max_pending_callbacks: u64::MAX, error_handler: None, slow_callback_threshold: None }, h, clock);
        assert_eq!(s.max_pending_callbacks(), MAX_TICKETS);
        assert_eq!(ScopeOptions::default().max_pending_callbacks, 262_144);
    }
}
