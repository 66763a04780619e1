//! What a callback receives ([`WriteCompletion`]) and the future-like handle returned by the
//! write calls that take no callback ([`WriteResult`]).
//!
//! A callback is registered **on its batch**: the batch holds a small `Entry` per operation
//! (a boxed callable), or per run of consecutive operations (one shared callable; the
//! `WriteResult` form). When the batch completes, the whole batch becomes one dispatcher job; the
//! job builds one `WriteCompletion`, updates the per-record fields (offset) between callbacks,
//! and hands each callback a reference. No allocation happens per callback on that path.
//!
//! The `WriteResult`s of a batch's records share one `BatchResults`: one allocation per batch,
//! written once by the worker when the job reaches them; a result is that and its record's index
//! in the batch, and builds its `WriteCompletion` when asked. (A cell per record, allocated by the
//! submitter and written by the worker, cost more than the rest of the write path.) An Arrow
//! operation, which spans batches, keeps a `ResultCell` of its own.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use fluss_writer_dispatch::{in_callback, Job, JobBody, JobContext, Scope, TicketSet};

use crate::error::{ClientCode, Error, Result};
use crate::metadata::TablePath;

/// A completion callback. It runs exactly once, on the writer's executor (by default the
/// connection's single FIFO worker thread), never on the submitting thread and never on an I/O
/// thread. It must not block for long: it delays every callback queued behind it. Calling
/// `flush`, `close` or `WriteResult::wait` from inside it fails at once with
/// `CALLED_FROM_CALLBACK`. A panic is caught, reported to the writer's error handler and stops
/// nothing else. The callable (and everything it captured) is dropped before the operation's
/// `max_pending_callbacks` slot is released.
pub type WriteCallback = Box<dyn FnOnce(&WriteCompletion) + Send + 'static>;

/// A completion callable shared by many operations, typically one function for every record
/// (`append_with_shared_callback` and the like). It is called once per operation, under the same
/// rules as a [`WriteCallback`]. Consecutive records of a batch that pass the same `Arc` are
/// registered as one run: a pending operation then costs no storage of its own and no reference
/// count traffic. The batch holds one clone of the `Arc` per run and drops it after the run's
/// calls, before their slots are released.
pub type SharedCallback = Arc<dyn Fn(&WriteCompletion) + Send + Sync + 'static>;

/// The outcome of one bucket of a multi-bucket Arrow batch.
#[derive(Clone, Debug, PartialEq)]
pub struct BucketResult {
    /// The partition's name (`None` for a table without partitions).
    pub partition: Option<Arc<str>>,
    /// The bucket.
    pub bucket: i32,
    /// Rows of the input that went to this bucket.
    pub rows: usize,
    /// Offset of the first of those rows (log tables), or -1.
    pub base_offset: i64,
    /// `None` on success.
    pub error: Option<Error>,
}

/// Where an operation went and how it ended. Passed by reference to callbacks; clone it to keep
/// it.
#[derive(Clone, Debug, PartialEq)]
pub struct WriteCompletion {
    /// `None` on success.
    pub error: Option<Error>,
    /// The table written to.
    pub table: Arc<TablePath>,
    /// The table's id (changes when a table of the same name is recreated).
    pub table_id: i64,
    /// The partition's name: its values joined by `$` in partition-key order (for an Arrow
    /// batch, the partition of its first bucket). `None` for a table without partitions.
    pub partition: Option<Arc<str>>,
    /// The partition's id, once the writer knew it (`None` for a table without partitions, and
    /// for a partition that could not be resolved).
    pub partition_id: Option<i64>,
    /// The bucket (for an Arrow batch, its first bucket).
    pub bucket: i32,
    /// Log tables: the record's offset (batch base offset + its index). Primary-key tables and
    /// failures: -1.
    pub offset: i64,
    /// Primary-key tables: the bucket's changelog end offset after the write; otherwise -1.
    pub log_end_offset: i64,
    /// Multi-bucket Arrow batches: one result per bucket, so that only failed buckets need a
    /// retry. Empty for single-record operations.
    pub bucket_results: Vec<BucketResult>,
}

impl WriteCompletion {
    /// Whether the operation is durable.
    pub fn is_ok(&self) -> bool {
        self.error.is_none()
    }

    /// The outcome as a `Result`.
    pub fn result(&self) -> Result<()> {
        match &self.error {
            None => Ok(()),
            Some(e) => Err(e.clone()),
        }
    }

    /// Error code, 0 on success.
    pub fn error_code(&self) -> i32 {
        self.error.as_ref().map_or(0, Error::code)
    }

    /// Human-readable text of the operation (for error handlers and logs).
    pub fn describe(&self) -> String {
        let partition = self.partition.as_deref().map(|p| format!(" partition {p}")).unwrap_or_default();
        if self.offset >= 0 {
            format!("write to {}{partition} bucket {} offset {}", self.table, self.bucket, self.offset)
        } else {
            format!("write to {}{partition} bucket {}", self.table, self.bucket)
        }
    }
}

// ===== Result cells =====

enum CellState {
    Pending { callbacks: Vec<WriteCallback>, wakers: Vec<Waker> },
    Done(WriteCompletion),
}

/// What the cell's lock guards: the state, and how many threads sleep on the condition variable.
struct Guarded {
    state: CellState,
    /// Threads inside `WriteResult::wait`'s condition-variable wait. The completion notifies only
    /// when this is not zero: a notify is a system call whether anybody sleeps or not, and most
    /// results are waited for after they completed (or never).
    sleepers: u32,
}

/// Shared state behind a [`WriteResult`].
pub(crate) struct ResultCell {
    state: Mutex<Guarded>,
    cond: Condvar,
    scope: Scope,
}

impl ResultCell {
    pub(crate) fn new(scope: Scope) -> Arc<ResultCell> {
        Arc::new(ResultCell {
            state: Mutex::new(Guarded { state: CellState::Pending { callbacks: Vec::new(), wakers: Vec::new() }, sleepers: 0 }),
            cond: Condvar::new(),
            scope,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Guarded> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Complete the cell from inside a dispatcher job: store the completion, then run the
    /// callbacks registered so far, in registration order.
    pub(crate) fn complete(&self, c: &WriteCompletion, ctx: &mut JobContext<'_>) {
        let (prev, sleepers) = {
            let mut g = self.lock();
            (std::mem::replace(&mut g.state, CellState::Done(c.clone())), g.sleepers)
        };
        // A waiter counts itself under the lock before it sleeps and the completion reads the
        // count under the same lock after storing `Done`: a waiter either saw `Done` or is
        // counted here, so no wake-up is lost.
        if sleepers > 0 {
            self.cond.notify_all();
        }
        if let CellState::Pending { callbacks, wakers } = prev {
            for w in wakers {
                w.wake();
            }
            for cb in callbacks {
                ctx.invoke(|| cb(c), &|| c.describe());
            }
        }
    }
}

// ===== Per-batch results =====

/// A batch's completion as its results see it: `completion` with offset -1, and the offset its
/// records' offsets count from (-1: the records have none).
struct BatchDone {
    completion: WriteCompletion,
    base_offset: i64,
}

impl BatchDone {
    /// The completion of the record at `index` of the batch.
    fn of(&self, index: u32) -> WriteCompletion {
        let mut c = self.completion.clone();
        if self.base_offset >= 0 {
            c.offset = self.base_offset + i64::from(index);
        }
        c
    }
}

struct BatchGuarded {
    /// The results of the records whose index is below this one are complete (the job completes
    /// them in record order).
    upto: u32,
    /// Callbacks registered on results still pending: (record index, callback), in registration
    /// order.
    callbacks: Vec<(u32, WriteCallback)>,
    wakers: Vec<(u32, Waker)>,
    /// Threads inside `WriteResult::wait`'s condition-variable wait (see [`Guarded::sleepers`]).
    sleepers: u32,
}

/// The results of a batch's `WriteResult`-form operations (see the module's documentation).
pub(crate) struct BatchResults {
    state: Mutex<BatchGuarded>,
    cond: Condvar,
    scope: Scope,
    /// The batch's completion, set once (under `state`'s lock) before any result is visible.
    done: OnceLock<BatchDone>,
    /// `BatchGuarded::upto`, published (Release, after `done` is set) for waits on results that
    /// have completed, which then read `done` without taking the lock.
    visible: AtomicU32,
}

impl BatchResults {
    pub(crate) fn new(scope: Scope) -> Arc<BatchResults> {
        Arc::new(BatchResults {
            state: Mutex::new(BatchGuarded { upto: 0, callbacks: Vec::new(), wakers: Vec::new(), sleepers: 0 }),
            cond: Condvar::new(),
            scope,
            done: OnceLock::new(),
            visible: AtomicU32::new(0),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BatchGuarded> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Complete the results of the records `first .. first + count` from inside the batch's job:
    /// `c` is the batch's completion (its offset is not used), `base_offset` the offset of the
    /// batch's record 0 (-1: records have no offsets). The run becomes visible at once, but for a
    /// record with callbacks registered on its result: the records up to it become visible, then
    /// its callbacks run (in registration order), then the rest, so that a callback runs after its
    /// result completed and before any later record's.
    pub(crate) fn complete_run(&self, c: &WriteCompletion, base_offset: i64, first: u32, count: u32, ctx: &mut JobContext<'_>) {
        let end = first.saturating_add(count);
        let mut at = first;
        while at < end {
            let (ready, wakers, sleepers, completion) = {
                let mut g = self.lock();
                let done = self.done.get_or_init(|| BatchDone { completion: WriteCompletion { offset: -1, ..c.clone() }, base_offset });
                let next = g.callbacks.iter().map(|(i, _)| *i).filter(|&i| i >= at && i < end).min();
                let upto = next.map_or(end, |i| i + 1);
                g.upto = upto;
                self.visible.store(upto, Ordering::Release);
                let mut ready = Vec::new();
                if let Some(i) = next {
                    let mut k = 0;
                    while k < g.callbacks.len() {
                        if g.callbacks[k].0 == i {
                            ready.push(g.callbacks.remove(k).1);
                        } else {
                            k += 1;
                        }
                    }
                }
                let mut wakers = Vec::new();
                if !g.wakers.is_empty() {
                    let (woken, waiting) = std::mem::take(&mut g.wakers).into_iter().partition(|(i, _)| *i < upto);
                    g.wakers = waiting;
                    wakers = woken;
                }
                let completion = next.map(|i| done.of(i));
                at = upto;
                (ready, wakers, g.sleepers, completion)
            };
            // As in `ResultCell::complete`: a sleeper counted itself under the lock, so no
            // wake-up is lost when nobody is counted.
            if sleepers > 0 {
                self.cond.notify_all();
            }
            for (_, w) in wakers {
                w.wake();
            }
            if let Some(rc) = completion {
                for cb in ready {
                    ctx.invoke(|| cb(&rc), &|| rc.describe());
                }
            }
        }
    }

    /// The completion of the record at `index`, if its result is complete (`g`: the state, locked).
    fn get(&self, g: &BatchGuarded, index: u32) -> Option<WriteCompletion> {
        self.done_upto(g.upto, index).map(|d| d.of(index))
    }

    /// The batch's completion if the record at `index` is below `upto` (its result is complete).
    fn done_upto(&self, upto: u32, index: u32) -> Option<&BatchDone> {
        if index < upto {
            self.done.get()
        } else {
            None
        }
    }
}

/// The handle returned by write calls without a callback: wait for it, `.await` it, or register
/// callbacks on it later.
#[derive(Clone)]
pub struct WriteResult {
    inner: Inner,
}

#[derive(Clone)]
enum Inner {
    /// An operation of its own (an Arrow batch).
    Cell(Arc<ResultCell>),
    /// The record at `index` of a batch.
    Batch { results: Arc<BatchResults>, index: u32 },
}

struct LateCallbacks {
    completion: WriteCompletion,
    callback: WriteCallback,
}

impl JobBody for LateCallbacks {
    fn run(self: Box<Self>, ctx: &mut JobContext<'_>) {
        let LateCallbacks { completion, callback } = *self;
        ctx.invoke(|| callback(&completion), &|| completion.describe());
    }
}

impl WriteResult {
    pub(crate) fn new(cell: Arc<ResultCell>) -> WriteResult {
        WriteResult { inner: Inner::Cell(cell) }
    }

    /// The result of the record at `index` of the batch that `results` belongs to.
    pub(crate) fn in_batch(results: Arc<BatchResults>, index: u32) -> WriteResult {
        WriteResult { inner: Inner::Batch { results, index } }
    }

    /// Block until the operation completed (its completion has been dispatched) and return
    /// the completion. `timeout = None` waits without bound. Fails at once with
    /// `CALLED_FROM_CALLBACK` inside a callback, and with `TIMEOUT` when the timeout passes.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<WriteCompletion> {
        self.wait_with(timeout, WriteCompletion::clone, BatchDone::of)
    }

    /// [`wait`](Self::wait) for callers that need only whether the operation succeeded: the
    /// inner result is the operation's outcome (its error, if it failed), the outer one why the
    /// wait failed, as for `wait`. Builds no completion (for the bindings' per-record results).
    pub fn wait_outcome(&self, timeout: Option<Duration>) -> Result<std::result::Result<(), Error>> {
        fn outcome(c: &WriteCompletion) -> std::result::Result<(), Error> {
            c.error.as_ref().map_or(Ok(()), |e| Err(e.clone()))
        }
        self.wait_with(timeout, outcome, |d, _| outcome(&d.completion))
    }

    /// Wait as [`wait`](Self::wait) does and read the completion with `cell` (an operation of
    /// its own) or `batch` (the batch's completion and the record's index).
    fn wait_with<T>(
        &self,
        timeout: Option<Duration>,
        cell: impl Fn(&WriteCompletion) -> T,
        batch: impl Fn(&BatchDone, u32) -> T,
    ) -> Result<T> {
        if in_callback() {
            return Err(Error::client(ClientCode::CalledFromCallback, "WriteResult::wait called from inside a completion callback"));
        }
        match &self.inner {
            Inner::Cell(c) => wait_on(
                || c.lock(),
                &c.cond,
                timeout,
                |g| match &g.state {
                    CellState::Done(done) => Some(cell(done)),
                    CellState::Pending { .. } => None,
                },
                |g| &mut g.sleepers,
            ),
            Inner::Batch { results, index } => {
                // A completed result (the usual case once a flush returned) is read without the lock.
                if let Some(d) = results.done_upto(results.visible.load(Ordering::Acquire), *index) {
                    return Ok(batch(d, *index));
                }
                wait_on(
                    || results.lock(),
                    &results.cond,
                    timeout,
                    |g| results.done_upto(g.upto, *index).map(|d| batch(d, *index)),
                    |g| &mut g.sleepers,
                )
            }
        }
    }

    /// Drop this handle without blocking. While anything else (another handle of the batch, the
    /// writer) still shares the operation's state, that is one atomic decrement and `None` is
    /// returned. When this was the last reference, the state is handed back instead, for the
    /// caller to drop where blocking is allowed: it holds the writer's callback scope, whose last
    /// drop joins the executor's workers. The Python binding drops most results this way with the
    /// GIL held, and releases the GIL only for the last one of a batch.
    pub fn release(self) -> Option<LastReference> {
        match self.inner {
            Inner::Cell(cell) => Arc::into_inner(cell).map(|c| LastReference(Last::Cell(c))),
            Inner::Batch { results, .. } => Arc::into_inner(results).map(|r| LastReference(Last::Batch(r))),
        }
    }

    /// The completion, if the operation has completed.
    pub fn try_get(&self) -> Option<WriteCompletion> {
        match &self.inner {
            Inner::Cell(cell) => match &cell.lock().state {
                CellState::Done(c) => Some(c.clone()),
                CellState::Pending { .. } => None,
            },
            Inner::Batch { results, index } => results.done_upto(results.visible.load(Ordering::Acquire), *index).map(|d| d.of(*index)),
        }
    }

    /// Whether the operation has completed.
    pub fn is_done(&self) -> bool {
        match &self.inner {
            Inner::Cell(cell) => matches!(cell.lock().state, CellState::Done(_)),
            Inner::Batch { results, index } => *index < results.visible.load(Ordering::Acquire),
        }
    }

    /// Register a callback. Before completion it runs with the operation's own job, after the
    /// callbacks registered earlier. After completion it is queued on the writer's executor, so
    /// it runs after the callbacks already queued there (never inline on this thread).
    pub fn add_callback(&self, callback: impl FnOnce(&WriteCompletion) + Send + 'static) {
        let (done, scope) = match &self.inner {
            Inner::Cell(cell) => {
                let mut st = cell.lock();
                match &mut st.state {
                    CellState::Pending { callbacks, .. } => {
                        callbacks.push(Box::new(callback));
                        return;
                    }
                    CellState::Done(c) => (c.clone(), &cell.scope),
                }
            }
            Inner::Batch { results, index } => {
                let mut g = results.lock();
                match results.get(&g, *index) {
                    None => {
                        g.callbacks.push((*index, Box::new(callback)));
                        return;
                    }
                    Some(c) => (c, &results.scope),
                }
            }
        };
        let body = LateCallbacks { completion: done, callback: Box::new(callback) };
        let now = scope.clock().now_nanos();
        scope.dispatch(Job::new(scope, 0, TicketSet::default(), now, Box::new(body)));
    }
}

/// The state of an operation whose last [`WriteResult`] was released
/// ([`WriteResult::release`]): dropping it may block (see there).
pub struct LastReference(#[allow(dead_code)] Last);

/// What a [`LastReference`] holds (only dropped).
#[allow(dead_code)]
enum Last {
    Cell(ResultCell),
    Batch(BatchResults),
}

/// `WriteResult::wait` on the state behind `lock`: until `done` finds the completion, the
/// timeout passes, or an installed interrupt check fires. A sleeper counts itself in
/// `sleepers` under the lock (the completing side notifies only when some are counted).
fn wait_on<'a, G: 'a, T>(
    lock: impl Fn() -> std::sync::MutexGuard<'a, G>,
    cond: &Condvar,
    timeout: Option<Duration>,
    done: impl Fn(&G) -> Option<T>,
    sleepers: impl Fn(&mut G) -> &mut u32,
) -> Result<T> {
    let deadline = crate::timeouts::deadline_after(timeout);
    let mut st = lock();
    loop {
        if let Some(c) = done(&st) {
            return Ok(c);
        }
        let left = match deadline {
            None => None,
            Some(d) => match d.checked_duration_since(std::time::Instant::now()) {
                Some(left) if !left.is_zero() => Some(left),
                _ => return Err(Error::client(ClientCode::Timeout, "WriteResult::wait timed out; the operation is still pending")),
            },
        };
        let (g, fired, released) = crate::interrupt::interrupted_releasing(st, &lock);
        st = g;
        if fired {
            return Err(crate::write::writer::interrupted_error("waiting for a WriteResult; the operation is still pending"));
        }
        if released {
            continue;
        }
        *sleepers(&mut st) += 1;
        st = match crate::interrupt::cap_sleep(left) {
            None => cond.wait(st).unwrap_or_else(|p| p.into_inner()),
            Some(d) => cond.wait_timeout(st, d).unwrap_or_else(|p| p.into_inner()).0,
        };
        *sleepers(&mut st) -= 1;
    }
}

impl Future for WriteResult {
    type Output = WriteCompletion;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<WriteCompletion> {
        match &self.inner {
            Inner::Cell(cell) => {
                let mut st = cell.lock();
                match &mut st.state {
                    CellState::Done(c) => Poll::Ready(c.clone()),
                    CellState::Pending { wakers, .. } => {
                        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
                            wakers.push(cx.waker().clone());
                        }
                        Poll::Pending
                    }
                }
            }
            Inner::Batch { results, index } => {
                let mut g = results.lock();
                if let Some(c) = results.get(&g, *index) {
                    return Poll::Ready(c);
                }
                if !g.wakers.iter().any(|(i, w)| i == index && w.will_wake(cx.waker())) {
                    g.wakers.push((*index, cx.waker().clone()));
                }
                Poll::Pending
            }
        }
    }
}

impl std::fmt::Debug for WriteResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteResult").field("done", &self.is_done()).finish()
    }
}
