//! What a callback receives ([`WriteCompletion`]) and the future-like handle returned by the
//! write calls that take no callback ([`WriteResult`]).
//!
//! A callback is registered **on its batch**: the batch holds a small `Entry` per operation
//! (a boxed callable, or a shared result cell for the `WriteResult` form). When the batch
//! completes, the whole batch becomes one dispatcher job; the job builds one
//! `WriteCompletion`, updates the per-record fields (offset) between callbacks, and hands each
//! callback a reference. No allocation happens per callback on that path.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex};
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

/// The handle returned by write calls without a callback: wait for it, `.await` it, or register
/// callbacks on it later.
#[derive(Clone)]
pub struct WriteResult {
    cell: Arc<ResultCell>,
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
        WriteResult { cell }
    }

    /// Block until the operation completed (its completion has been dispatched) and return
    /// the completion. `timeout = None` waits without bound. Fails at once with
    /// `CALLED_FROM_CALLBACK` inside a callback, and with `TIMEOUT` when the timeout passes.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<WriteCompletion> {
        if in_callback() {
            return Err(Error::client(ClientCode::CalledFromCallback, "WriteResult::wait called from inside a completion callback"));
        }
        let deadline = crate::timeouts::deadline_after(timeout);
        let mut st = self.cell.lock();
        loop {
            if let CellState::Done(c) = &st.state {
                return Ok(c.clone());
            }
            let left = match deadline {
                None => None,
                Some(d) => match d.checked_duration_since(std::time::Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return Err(Error::client(ClientCode::Timeout, "WriteResult::wait timed out; the operation is still pending")),
                },
            };
            let (g, fired, released) = crate::interrupt::interrupted_releasing(st, || self.cell.lock());
            st = g;
            if fired {
                return Err(crate::write::writer::interrupted_error("waiting for a WriteResult; the operation is still pending"));
            }
            if released {
                continue;
            }
            st.sleepers += 1;
            st = match crate::interrupt::cap_sleep(left) {
                None => self.cell.cond.wait(st).unwrap_or_else(|p| p.into_inner()),
                Some(d) => self.cell.cond.wait_timeout(st, d).unwrap_or_else(|p| p.into_inner()).0,
            };
            st.sleepers -= 1;
        }
    }

    /// The completion, if the operation has completed.
    pub fn try_get(&self) -> Option<WriteCompletion> {
        match &self.cell.lock().state {
            CellState::Done(c) => Some(c.clone()),
            CellState::Pending { .. } => None,
        }
    }

    /// Whether the operation has completed.
    pub fn is_done(&self) -> bool {
        matches!(self.cell.lock().state, CellState::Done(_))
    }

    /// Register a callback. Before completion it runs with the operation's own job, after the
    /// callbacks registered earlier. After completion it is queued on the writer's executor, so
    /// it runs after the callbacks already queued there (never inline on this thread).
    pub fn add_callback(&self, callback: impl FnOnce(&WriteCompletion) + Send + 'static) {
        let mut st = self.cell.lock();
        match &mut st.state {
            CellState::Pending { callbacks, .. } => callbacks.push(Box::new(callback)),
            CellState::Done(c) => {
                let body = LateCallbacks { completion: c.clone(), callback: Box::new(callback) };
                drop(st);
                let scope = &self.cell.scope;
                let now = scope.clock().now_nanos();
                scope.dispatch(Job::new(scope, 0, TicketSet::default(), now, Box::new(body)));
            }
        }
    }
}

impl Future for WriteResult {
    type Output = WriteCompletion;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<WriteCompletion> {
        let mut st = self.cell.lock();
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
}

impl std::fmt::Debug for WriteResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteResult").field("done", &self.is_done()).finish()
    }
}
