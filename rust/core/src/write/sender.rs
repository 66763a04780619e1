//! The sender: one tokio task per writer that drains batches, sends them to bucket leaders,
//! retries, and completes batches **strictly in order per bucket** (C3).
//!
//! The rules live in [`bucket_state`](super::bucket_state), a state machine without I/O; this
//! file is its I/O shell: it feeds it responses, metadata and writer-id answers and the clock,
//! sends what it asks for, and dispatches the batches it completes.
//!
//! ## Algorithm
//!
//! Every bucket has a queue of *flights* (batches that left the accumulator), in send order.
//! A flight is in flight (a request is out), backing off (the last attempt failed with a
//! retriable error) or done (final outcome known). Completion only ever pops `Done` flights
//! **from the front** of a bucket's queue, so a later batch acknowledged before an earlier,
//! retried one waits for it, and callbacks of a bucket run in submission order.
//!
//! * Normal mode: up to `max-inflight-requests-per-bucket` flights per bucket (1 without
//!   idempotence, so a retry can never overtake a later batch). A flight counts until it
//!   completes in order, also once answered: so a batch awaiting a retry never has more than 4
//!   later batches accepted by the server, and its resend stays inside the server's dedup window
//!   of the last 5 batches.
//! * Retry mode (some flight of the bucket backs off): nothing new is sent for the bucket;
//!   once no request of the bucket is out, the first flight backing off is resent with the
//!   same bytes (same writer id and sequence), one at a time.
//! * Idempotence (docs/wire-format.md, "Idempotence"): batches are stamped with (writer id, next
//!   sequence of the bucket) when first drained and keep that stamp for every retry.
//!   `OUT_OF_ORDER_SEQUENCE` is retried when the batch is not the next one the server expects (an
//!   earlier batch failed); otherwise it is fatal. A fatal failure of a stamped batch **resets
//!   the sequence state**: the writer asks for a new writer id, the bucket's later flights are
//!   not retried any more (each completes with the server's answer to its original send, and a
//!   later batch that would need a retry fails with `SEQUENCE_RESET`), and new batches start at
//!   sequence 0 under the new id.
//! * Delivery timeout: every state a batch can be in has a deadline (see `bucket_state.rs`):
//!   open, ready, waiting for a leader or a writer id, backing off, in flight, done. A batch
//!   never outlives `client.writer.delivery-timeout` by more than one `client.request-timeout`
//!   (in practice by at most 1 ms plus scheduling: requests are cut at the earliest deadline they
//!   carry, and nothing is sent past its deadline). Metadata and InitWriter requests run as
//!   tasks of their own, so they never hold up expiry.
//! * A table gone (metadata no longer lists it) or a non-retriable InitWriter error is fatal:
//!   queued batches and batches awaiting a resend fail with it at once.
//! * Partitions: a writer of a partitioned table has one sender (a *lane*) per partition it
//!   wrote to. A lane learns its partition's id and leaders from Metadata by partition path. A
//!   partition that does not exist is created once (CreatePartition, "ignore if it exists") when
//!   `client.writer.dynamic-create-partition.enabled` is on, while its first batches wait for a
//!   leader under their delivery deadlines; with it off, the lane is fatal with
//!   `PARTITION_NOT_EXISTS` until the partition appears (re-checked every few seconds). A
//!   partition dropped under pending writes answers `UNKNOWN_TABLE_OR_BUCKET` (retriable), and
//!   the metadata refresh that follows decides as above. A partition recreated under a new id
//!   (found by that refresh, or created by this lane) is a new bucket for the server's
//!   idempotence: the machine restarts the lane's sequences at 0 and resends what the old id did
//!   not acknowledge (see `bucket_state.rs`). Requests take the partition id from the machine.
//!   On a table with historical partitions (Fluss 1.0), a partition older than the table retains
//!   is never created: while it does not exist the lane writes to the table's `__historical__`
//!   partition (the same way: a new id, sequences from 0), every entry naming the lane's
//!   partition as `original_partition_name`.
//! * Abort (close timeout, connection close): every pending batch fails with `WRITER_CLOSED`,
//!   in order; late responses are ignored.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use bytes::Bytes;
use fluss_writer_dispatch::{Clock, Job, Permits, Scope, TicketSet};
use tokio::sync::mpsc;

use super::accumulator::{Accumulator, BatchKind};
use super::batch::{shard_key, BatchJob, BatchOutcome, JobTarget, Payload, WriteBatch};
use super::bucket_state::{Machine, MetadataAnswer, Params, Part, Queue};
use super::completion::BucketResult;
use crate::backend::{Backend, Dest, Request, Response};
use crate::config::Config;
use crate::error::{Error, FlussCode, Result};
use crate::metadata::partition::HISTORICAL_PARTITION;
use crate::metadata::TablePath;
use crate::metrics::{BucketCounters, WriterMetrics};
use crate::wire::kv_batch::stamp_kv_batch;
use crate::wire::log_batch::{build_arrow_log_batch_compressed, stamp_log_batch, ArrowCompression};
use crate::wire::proto;

/// How often (clock nanos) a busy sender refreshes its lane's oldest-pending-batch time.
const AGE_REFRESH: u64 = 10_000_000;

/// State shared between a writer and its sender task.
pub(crate) struct SenderShared {
    pub acc: Arc<Accumulator>,
    pub backend: Arc<dyn Backend>,
    pub scope: Scope,
    pub buffer: Arc<Permits>,
    pub config: Arc<Config>,
    pub target: Arc<JobTarget>,
    pub path: TablePath,
    pub schema_id: i16,
    pub kind: BatchKind,
    /// Body compression of log batches (`table.log.arrow.compression.type`).
    pub compression: ArrowCompression,
    /// Partial update columns (PutKv `target_columns`); empty = all.
    pub target_columns: Vec<i32>,
    /// The writer's metrics.
    pub metrics: Arc<WriterMetrics>,
    /// This lane's counters per bucket (index = bucket).
    pub buckets: Box<[BucketCounters]>,
    /// Clock nanos when the oldest batch of this lane that is not yet complete was opened (0:
    /// none); refreshed by the sender when a batch completed, otherwise at most every 10 ms.
    oldest_pending: AtomicU64,
    /// The partition of this lane (`None`: a table without partitions).
    pub partition: Option<LanePartition>,
    /// Leaders known when the writer was created (index = bucket).
    pub initial_leaders: Vec<Option<i32>>,
    pub clock: Arc<dyn Clock>,
    /// Stop accepting; exit once everything completed.
    pub closing: AtomicBool,
    /// Fail everything pending now.
    pub abort: AtomicBool,
    /// The writer dropped this lane (a partition idle for `client.writer.partition-idle-timeout`):
    /// exit as soon as nothing is pending, whatever the writer's other lanes hold.
    evicted: AtomicBool,
    /// The lane's rows were routed by a bucket count that its partition does not have
    /// (INVALID_BUCKET_ROUTING, or its metadata names another count): the writer opens a new lane
    /// for the partition's next row.
    stale: Arc<AtomicBool>,
    /// `routing_bucket_count` sent with every batch: the lane's bucket count, when the server has
    /// per-partition bucket counts (the table's `bucket_count_epoch` is known); `None` otherwise.
    pub routing_count: Option<i32>,
    /// Since when (clock nanos) this sender has had nothing pending and nothing queued; 0 while it
    /// has work (set at the start of each turn of its loop, so never stale-idle).
    idle_since: AtomicU64,
    exited: Mutex<bool>,
    exited_cv: Condvar,
}

impl SenderShared {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        acc: Arc<Accumulator>,
        backend: Arc<dyn Backend>,
        scope: Scope,
        buffer: Arc<Permits>,
        config: Arc<Config>,
        target: Arc<JobTarget>,
        path: TablePath,
        schema_id: i16,
        kind: BatchKind,
        compression: ArrowCompression,
        target_columns: Vec<i32>,
        metrics: Arc<WriterMetrics>,
        partition: Option<LanePartition>,
        initial_leaders: Vec<Option<i32>>,
        clock: Arc<dyn Clock>,
        routing_count: Option<i32>,
    ) -> SenderShared {
        SenderShared {
            acc,
            backend,
            scope,
            buffer,
            config,
            target,
            path,
            schema_id,
            kind,
            compression,
            target_columns,
            metrics,
            buckets: (0..initial_leaders.len()).map(|_| BucketCounters::default()).collect(),
            oldest_pending: AtomicU64::new(0),
            partition,
            initial_leaders,
            clock,
            closing: AtomicBool::new(false),
            abort: AtomicBool::new(false),
            evicted: AtomicBool::new(false),
            stale: Arc::new(AtomicBool::new(false)),
            routing_count,
            idle_since: AtomicU64::new(0),
            exited: Mutex::new(false),
            exited_cv: Condvar::new(),
        }
    }

    /// Clock nanos when the lane's oldest incomplete batch was opened, if it has one.
    pub fn oldest_pending(&self) -> Option<u64> {
        Some(self.oldest_pending.load(Ordering::Relaxed)).filter(|&t| t > 0)
    }

    /// Ask the sender to finish: it exits once every batch completed.
    pub fn close(&self) {
        self.closing.store(true, Ordering::Release);
        self.acc.close_all_open();
    }

    /// Since when (clock nanos) the sender has been idle (nothing pending or queued), if it is.
    pub fn idle_since(&self) -> Option<u64> {
        Some(self.idle_since.load(Ordering::SeqCst)).filter(|&t| t != 0)
    }

    /// The writer dropped this lane, idle: the sender exits once nothing is pending (the writer
    /// made sure that no write can reach this lane any more).
    pub fn evict(&self) {
        self.evicted.store(true, Ordering::SeqCst);
        self.close();
    }

    /// Whether the lane was found routed by a wrong bucket count (see `stale`).
    pub fn is_stale(&self) -> bool {
        self.stale.load(Ordering::Acquire)
    }

    /// Fail everything pending now (close timeout).
    pub fn abort(&self) {
        self.closing.store(true, Ordering::Release);
        self.abort.store(true, Ordering::Release);
        self.acc.wake.notify_one();
    }

    fn mark_exited(&self) {
        *self.exited.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.exited_cv.notify_all();
    }

    pub fn has_exited(&self) -> bool {
        *self.exited.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wait until the sender task exited (every batch completed and dispatched); `false` if
    /// `timeout` passed first.
    pub fn wait_exited(&self, timeout: Option<Duration>) -> bool {
        let deadline = crate::timeouts::deadline_after(timeout);
        let mut g = self.exited.lock().unwrap_or_else(|p| p.into_inner());
        while !*g {
            let left = match deadline {
                None => None,
                Some(d) => match d.checked_duration_since(std::time::Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return false,
                },
            };
            let (relocked, fired, released) =
                crate::interrupt::interrupted_releasing(g, || self.exited.lock().unwrap_or_else(|p| p.into_inner()));
            g = relocked;
            if fired {
                return false;
            }
            if released {
                continue;
            }
            g = match crate::interrupt::cap_sleep(left) {
                None => self.exited_cv.wait(g).unwrap_or_else(|p| p.into_inner()),
                Some(d) => self.exited_cv.wait_timeout(g, d).unwrap_or_else(|p| p.into_inner()).0,
            };
        }
        true
    }
}

const IDLE_WAIT: Duration = Duration::from_secs(3600);

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A batch taken from the accumulator, with its wire bytes once prepared.
struct Outgoing {
    batch: WriteBatch,
    bytes: Bytes,
}

/// The accumulator as the state machine's [`Queue`]; encoding and stamping happen here.
struct AccQueue<'a> {
    shared: &'a SenderShared,
}

impl Queue for AccQueue<'_> {
    type Batch = Outgoing;

    fn front_created(&mut self, bucket: usize) -> Option<u64> {
        let q = self.shared.acc.lock(bucket);
        q.closed.front().map(|x| x.created).or_else(|| q.open.as_ref().map(|x| x.created))
    }

    fn take_ready(&mut self, bucket: usize, now: u64, linger: u64, flush_all: bool) -> std::result::Result<Option<Outgoing>, u64> {
        let mut q = self.shared.acc.lock(bucket);
        let batch = if let Some(x) = q.closed.pop_front() {
            x
        } else if let Some(open) = &q.open {
            let ready_at = open.created.saturating_add(linger);
            if flush_all || now >= ready_at {
                self.shared.acc.take_open(&mut q).expect("open")
            } else {
                return Err(ready_at);
            }
        } else {
            return Ok(None);
        };
        Ok(Some(Outgoing { batch, bytes: Bytes::new() }))
    }

    fn take_front(&mut self, bucket: usize) -> Option<Outgoing> {
        let mut q = self.shared.acc.lock(bucket);
        let batch = match q.closed.pop_front() {
            Some(b) => b,
            None => self.shared.acc.take_open(&mut q)?,
        };
        Some(Outgoing { batch, bytes: Bytes::new() })
    }

    fn created(&self, batch: &Outgoing) -> u64 {
        batch.batch.created
    }

    fn prepare(&mut self, _bucket: usize, o: &mut Outgoing, stamp: Option<(i64, i32)>) -> Result<()> {
        let payload = std::mem::replace(&mut o.batch.payload, Payload::Encoded(Bytes::new()));
        let (schema_id, compression) = (self.shared.schema_id, self.shared.compression);
        let bytes = match payload {
            Payload::Rows(mut rows) => build_arrow_log_batch_compressed(&rows.finish(), schema_id, None, compression)?,
            Payload::Arrow(rb) => build_arrow_log_batch_compressed(&rb, schema_id, None, compression)?,
            Payload::Kv(kv) => kv.finish(),
            Payload::Encoded(b) => b.to_vec(),
        };
        let mut bytes = bytes;
        if let Some((wid, seq)) = stamp {
            match self.shared.kind {
                BatchKind::Log => stamp_log_batch(&mut bytes, wid, seq),
                BatchKind::Kv => stamp_kv_batch(&mut bytes, wid, seq),
            }
        }
        o.bytes = Bytes::from(bytes);
        Ok(())
    }

    fn restamp(&mut self, _bucket: usize, o: &mut Outgoing, (wid, seq): (i64, i32)) {
        let mut bytes = o.bytes.to_vec();
        match self.shared.kind {
            BatchKind::Log => stamp_log_batch(&mut bytes, wid, seq),
            BatchKind::Kv => stamp_kv_batch(&mut bytes, wid, seq),
        }
        o.bytes = Bytes::from(bytes);
    }
}

/// What the I/O tasks report back to the sender loop.
enum Event {
    Produce { parts: Vec<Part>, result: Result<Response> },
    Metadata { token: u64, result: Result<MetadataAnswer> },
    WriterId { token: u64, result: Result<i64> },
}

/// Run the sender of one writer until it closed and everything completed.
pub(crate) async fn run(shared: Arc<SenderShared>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Event>();
    let cfg = &shared.config;
    let params = Params {
        table: shared.path.to_string(),
        delivery_timeout: nanos(cfg.delivery_timeout),
        request_timeout: nanos(cfg.request_timeout),
        linger: nanos(cfg.batch_timeout),
        retries: cfg.retries,
        retry_backoff: nanos(cfg.retry_backoff),
        max_inflight: cfg.effective_inflight_per_bucket(),
        idempotent: cfg.enable_idempotence,
        max_throttle: nanos(cfg.kv_backpressure_max_throttle),
    };
    let mut leaders = shared.initial_leaders.clone();
    leaders.resize(shared.acc.bucket_count(), None);
    let mut m: Machine<Outgoing> = Machine::new(params, leaders, shared.target.partition_id());
    let mut idle_from: Option<u64> = None;
    // When this partition lane next asks the writer to release it (idle since `idle_from`).
    let mut release_at: Option<u64> = None;
    let mut age_refresh_at = 0u64;
    loop {
        shared.idle_since.store(0, Ordering::SeqCst);
        while let Ok(e) = rx.try_recv() {
            on_event(&shared, &mut m, e);
        }
        if shared.abort.load(Ordering::Acquire) {
            m.abort(&mut AccQueue { shared: &shared });
        }
        let closing = shared.closing.load(Ordering::Acquire);
        let now = shared.clock.now_nanos();
        let poll = m.poll(now, &mut AccQueue { shared: &shared }, closing);
        let mut completed_any = false;
        m.pop_completed(|_, o, outcome| {
            completed_any = true;
            let code = outcome.result.as_ref().err().map(Error::code);
            tracing::debug!(
                target: "fluss_writer::batch",
                table = %shared.path,
                bucket = o.batch.bucket,
                records = o.batch.records,
                bytes = o.bytes.len(),
                base_offset = outcome.base_offset,
                error_code = code.unwrap_or(0),
                "batch completed"
            );
            let (records, bytes) = (u64::from(o.batch.records), o.bytes.len() as u64);
            shared.metrics.batch_done(records, bytes, code);
            if let Some(c) = shared.buckets.get(o.batch.bucket as usize) {
                c.batch_done(records, bytes, code.is_some());
            }
            finish_batch(&shared, o.batch, outcome)
        });
        for (bucket, nanos) in m.take_throttled() {
            shared.metrics.throttled(nanos);
            if let Some(c) = shared.buckets.get(bucket) {
                c.set_pressure(m.pressure(bucket));
            }
        }
        for (bucket, code) in m.take_retried() {
            shared.metrics.retried(code);
            if let Some(c) = shared.buckets.get(bucket) {
                c.retried();
            }
        }
        // The age gauge looks at every bucket's queue (one lock each), so it is refreshed when a
        // batch completed and otherwise at most every 10 ms, not on every turn of a busy loop;
        // and on any turn while it says "nothing pending": a batch opened since (which woke this
        // turn) would otherwise stay unseen until the next completion, up to the linger time.
        if completed_any || now >= age_refresh_at || shared.oldest_pending.load(Ordering::Relaxed) == 0 {
            let oldest = [m.oldest_created(), shared.acc.oldest_created()].into_iter().flatten().min();
            shared.oldest_pending.store(oldest.map_or(0, |t| t.max(1)), Ordering::Relaxed);
            age_refresh_at = now.saturating_add(AGE_REFRESH);
        }
        if let Some(token) = poll.metadata {
            spawn_metadata(&shared, token, tx.clone());
        }
        if let Some(token) = poll.writer_id {
            spawn_init_writer(&shared, token, tx.clone());
        }
        for (leader, parts) in poll.sends {
            send_requests(&shared, &m, leader, parts, now, &tx);
        }
        let mut next = poll.next;
        let idle = m.idle() && shared.acc.is_empty();
        if closing && idle && shared.evicted.load(Ordering::SeqCst) {
            break;
        }
        if closing && idle {
            // An append admitted just before close may still be on its way into the
            // accumulator: exit only once every admitted operation has retired.
            if shared.scope.slots_in_use() == 0 {
                break;
            }
            let soon = shared.clock.now_nanos() + 5_000_000;
            next = Some(next.map_or(soon, |n| n.min(soon)));
        }
        idle_from = if idle { Some(idle_from.unwrap_or_else(|| shared.clock.now_nanos()).max(1)) } else { None };
        shared.idle_since.store(idle_from.unwrap_or(0), Ordering::SeqCst);
        if let (Some(p), Some(since), false) = (&shared.partition, idle_from, closing) {
            let due = release_at.unwrap_or(since.saturating_add(p.idle_timeout));
            if shared.clock.now_nanos() >= due {
                (p.on_idle)();
                // Still here (a write call held the lane): ask again after another timeout.
                release_at = Some(shared.clock.now_nanos().saturating_add(p.idle_timeout.max(1_000_000)));
            } else {
                release_at = Some(due);
            }
            next = Some(next.map_or(release_at.unwrap_or(due), |n| n.min(release_at.unwrap_or(due))));
        } else {
            release_at = None;
        }
        // At most an hour: an unbounded delivery timeout has its deadline at the end of time.
        let wait = next.map_or(IDLE_WAIT, |t| Duration::from_nanos(t.saturating_sub(shared.clock.now_nanos()).max(200_000)).min(IDLE_WAIT));
        let sleep = tokio::time::sleep(wait);
        tokio::select! {
            _ = shared.acc.wake.notified() => {}
            e = rx.recv() => { if let Some(e) = e { on_event(&shared, &mut m, e) } }
            _ = sleep => {}
        }
    }
    shared.mark_exited();
}

fn on_event(shared: &SenderShared, m: &mut Machine<Outgoing>, e: Event) {
    let now = shared.clock.now_nanos();
    match e {
        Event::Produce { parts, result } => {
            for part in parts {
                match bucket_pressure(&result, part.bucket) {
                    Some(Some(p)) => m.on_pressure(part.bucket, p, now),
                    Some(None) => m.on_no_pressure(part.bucket),
                    None => {}
                }
                let r = bucket_result(&result, part.bucket);
                if r.as_ref().is_err_and(|e| e.code() == FlussCode::INVALID_BUCKET_ROUTING) {
                    // The batch fails with the server's error (its records were routed by a count
                    // the partition does not have; they cannot be re-routed once encoded, see
                    // docs/architecture.md). Later rows go to a new lane with the right count.
                    log::warn!("{}: INVALID_BUCKET_ROUTING for bucket {}: the lane is retired", shared.path, part.bucket);
                    shared.stale.store(true, Ordering::Release);
                }
                m.on_response(part, r, now);
                if let Some(c) = shared.buckets.get(part.bucket as usize) {
                    c.set_pressure(m.pressure(part.bucket as usize));
                }
            }
        }
        Event::Metadata { token, result } => {
            m.on_metadata(token, result, now);
            // Completions report the id the lane writes to now.
            if let Some(id) = m.partition_id() {
                shared.target.partition_id.store(id, Ordering::Release);
            }
        }
        Event::WriterId { token, result } => m.on_writer_id(token, result, now),
    }
}

/// One bucket's answer in a produce response: (base offset, log end offset).
fn bucket_result(result: &Result<Response>, bucket: i32) -> Result<(i64, i64)> {
    match result {
        Err(e) => Err(e.clone()),
        Ok(Response::ProduceLog(p)) => match p.buckets_resp.iter().find(|x| x.bucket_id == bucket) {
            None => Err(no_answer_for("ProduceLog", bucket, p.buckets_resp.iter().map(|x| x.bucket_id))),
            Some(x) => match x.error_code.filter(|c| *c != 0) {
                Some(code) => Err(Error::server(code, x.error_message.clone().unwrap_or_default())),
                None => match x.base_offset {
                    Some(o) if o < 0 => Err(Error::protocol(format!("ProduceLog answered bucket {bucket} with base offset {o}"))),
                    o => Ok((o.unwrap_or(-1), -1)),
                },
            },
        },
        Ok(Response::PutKv(p)) => match p.buckets_resp.iter().find(|x| x.bucket_id == bucket) {
            None => Err(no_answer_for("PutKv", bucket, p.buckets_resp.iter().map(|x| x.bucket_id))),
            Some(x) => match x.error_code.filter(|c| *c != 0) {
                Some(code) => Err(Error::server(code, x.error_message.clone().unwrap_or_default())),
                None => match x.log_end_offset {
                    Some(o) if o < 0 => Err(Error::protocol(format!("PutKv answered bucket {bucket} with log end offset {o}"))),
                    o => Ok((-1, o.unwrap_or(-1))),
                },
            },
        },
        Ok(other) => Err(Error::protocol(format!("unexpected response {other:?}"))),
    }
}

/// The storage pressure of a successful PutKv answer for `bucket`: `Some(Some(p))` (PutKv v2,
/// pressure above 0), `Some(None)` (no pressure field); `None` for anything else (log tables,
/// errors: `STORAGE_BACKPRESSURE` is the machine's to read).
fn bucket_pressure(result: &Result<Response>, bucket: i32) -> Option<Option<f32>> {
    match result {
        Ok(Response::PutKv(p)) => {
            let x = p.buckets_resp.iter().find(|x| x.bucket_id == bucket)?;
            x.error_code.filter(|c| *c != 0).is_none().then_some(x.pressure)
        }
        _ => None,
    }
}

/// A produce response without an answer for a bucket that was sent: the server broke the
/// protocol (it may have answered for buckets that were not sent instead).
fn no_answer_for(api: &str, bucket: i32, answered: impl Iterator<Item = i32>) -> Error {
    let answered: Vec<i32> = answered.collect();
    Error::protocol(format!("{api} response has no answer for bucket {bucket} (answered buckets: {answered:?})"))
}

fn table_path_pb(shared: &SenderShared) -> Vec<proto::PbTablePath> {
    vec![proto::PbTablePath { database_name: shared.path.database.clone(), table_name: shared.path.table.clone() }]
}

/// Send `request` on the I/O runtime, cut at `budget`, and report the result as `event`.
fn spawn_request(
    shared: &SenderShared,
    dest: Dest,
    request: Request,
    budget: Duration,
    what: &'static str,
    tx: mpsc::UnboundedSender<Event>,
    event: impl FnOnce(Result<Response>) -> Event + Send + 'static,
) {
    let fut = shared.backend.send(dest, request);
    let wake = shared.acc.wake.clone();
    tokio::spawn(async move {
        let result = match tokio::time::timeout(budget, fut).await {
            Ok(r) => r,
            Err(_) => Err(Error::server(FlussCode::NETWORK_EXCEPTION, format!("{what} timed out after {budget:?}"))),
        };
        let _ = tx.send(event(result));
        wake.notify_one();
    });
}

fn spawn_metadata(shared: &SenderShared, token: u64, tx: mpsc::UnboundedSender<Event>) {
    if let Some(p) = &shared.partition {
        spawn_partition_metadata(shared, p, token, tx);
        return;
    }
    let req = proto::MetadataRequest { table_path: table_path_pb(shared), ..Default::default() };
    let table_id = shared.target.table_id;
    let path = shared.path.clone();
    spawn_request(shared, Dest::Any, Request::Metadata(req), shared.config.request_timeout, "Metadata request", tx, move |r| {
        let result = match r {
            Ok(Response::Metadata(m)) => match m.table_metadata.iter().find(|t| t.table_id == table_id) {
                None => Ok(MetadataAnswer::TableGone(Error::server(
                    FlussCode::TABLE_NOT_EXIST,
                    format!("table {path} no longer exists (or was recreated)"),
                ))),
                Some(t) => Ok(MetadataAnswer::Leaders {
                    leaders: t.bucket_metadata.iter().map(|bm| (bm.bucket_id, bm.leader())).collect(),
                    partition_id: None,
                    historical: false,
                }),
            },
            Ok(other) => Err(Error::protocol(format!("Metadata answered with {other:?}"))),
            Err(e) => Err(e),
        };
        Event::Metadata { token, result }
    });
}

/// The partition a lane writes to.
pub(crate) struct LanePartition {
    /// Its values as a spec, in partition-key order (for CreatePartition).
    pub spec: proto::PbPartitionSpec,
    /// `client.writer.dynamic-create-partition.enabled`.
    pub create: bool,
    /// The table's auto-partitioning when it has historical partitions (Fluss 1.0): whenever
    /// the partition turns out not to exist, the sender asks whether it is older than the table
    /// retains now; then it is never created, and its rows go to the table's historical
    /// partition (a lane outlives its partition's expiry when late rows keep it busy).
    pub historical: Option<crate::metadata::partition::AutoPartition>,
    /// `client.writer.partition-idle-timeout`, nanos.
    pub idle_timeout: u64,
    /// Called by the sender once it has been idle for `idle_timeout`: the writer releases its
    /// idle lanes (this one among them, unless a write call holds it right now).
    pub on_idle: Box<dyn Fn() + Send + Sync>,
}

/// Metadata of a lane's partition: its id and leaders. A partition that does not exist is
/// created first when the lane may (then its leaders are looked up again), or is fatal with
/// `PARTITION_NOT_EXISTS`. An expired partition of a table with historical partitions is never
/// created: once it does not exist, the lane writes to the table's historical partition.
fn spawn_partition_metadata(shared: &SenderShared, p: &LanePartition, token: u64, tx: mpsc::UnboundedSender<Event>) {
    let name = shared.target.partition.clone().expect("a partition lane");
    let path = shared.path.clone();
    let backend = shared.backend.clone();
    let target = shared.target.clone();
    let budget = shared.config.request_timeout;
    let wake = shared.acc.wake.clone();
    let (spec, create) = (p.spec.clone(), p.create);
    // Decided when the partition is looked up, not when the lane was made.
    let expired = p.historical.as_ref().is_some_and(|a| a.is_expired(&name, crate::timeouts::wall_clock_ms()));
    let lane_count = shared.acc.bucket_count() as i32;
    let stale = shared.stale.clone();
    let query = {
        let path = path.clone();
        move |partition: &str| proto::MetadataRequest {
            partitions_path: vec![proto::PbPhysicalTablePath {
                database_name: path.database.clone(),
                table_name: path.table.clone(),
                partition_name: Some(partition.to_string()),
            }],
            ..Default::default()
        }
    };
    // The answer for `partition` (the lane's own, or the historical one standing in for it).
    let lookup = {
        let path = path.clone();
        move |r: Result<Response>, partition: &str| -> Result<Option<MetadataAnswer>> {
            let is_historical = partition == HISTORICAL_PARTITION;
            match r {
                Ok(Response::Metadata(m)) => match m.partition_metadata.iter().find(|pm| pm.partition_name == partition) {
                    Some(pm) if pm.table_id != target.table_id => Ok(Some(MetadataAnswer::TableGone(Error::server(
                        FlussCode::TABLE_NOT_EXIST,
                        format!("table {path} no longer exists (or was recreated)"),
                    )))),
                    // A changed id (the partition was dropped and recreated, or replaced by the
                    // historical one) is the machine's to act on: it restarts the lane's
                    // sequences for the new id.
                    // The lane's rows were routed by `lane_count` buckets: a partition with another
                    // count (recreated, or created after a bucket count change) cannot take them.
                    Some(pm) if pm.bucket_count.is_some_and(|n| n != lane_count) => {
                        stale.store(true, Ordering::Release);
                        Ok(Some(MetadataAnswer::TableGone(Error::server(
                            FlussCode::INVALID_BUCKET_ROUTING,
                            format!(
                                "partition {partition} of {path} has {} buckets, but these rows were routed by {lane_count}; they were not written (write them again: the writer routes new rows by the partition's count)",
                                pm.bucket_count.unwrap_or_default()
                            ),
                        ))))
                    }
                    Some(pm) => Ok(Some(MetadataAnswer::Leaders {
                        leaders: pm.bucket_metadata.iter().map(|bm| (bm.bucket_id, bm.leader())).collect(),
                        partition_id: Some(pm.partition_id),
                        historical: is_historical,
                    })),
                    None => Err(Error::protocol(format!("Metadata for partition {partition} of {path} did not answer for it"))),
                },
                Ok(other) => Err(Error::protocol(format!("Metadata answered with {other:?}"))),
                Err(e) if e.code() == FlussCode::PARTITION_NOT_EXISTS => Ok(None),
                Err(e) => Err(e),
            }
        }
    };
    let pb_path = proto::PbTablePath { database_name: shared.path.database.clone(), table_name: shared.path.table.clone() };
    let missing = format!("partition {} of table {} does not exist", shared.target.partition.as_deref().unwrap_or_default(), shared.path);
    tokio::spawn(async move {
        let timed = |req: Request, dest: Dest| {
            let fut = backend.send(dest, req);
            async move {
                match tokio::time::timeout(budget, fut).await {
                    Ok(r) => r,
                    Err(_) => Err(Error::server(FlussCode::NETWORK_EXCEPTION, format!("request timed out after {budget:?}"))),
                }
            }
        };
        let result = match lookup(timed(Request::Metadata(query(&name)), Dest::Any).await, &name) {
            Ok(Some(answer)) => Ok(answer),
            // Expired and gone: the table's historical partition takes its rows (the coordinator
            // creates and keeps that partition; a writer never does).
            Ok(None) if expired => {
                match lookup(timed(Request::Metadata(query(HISTORICAL_PARTITION)), Dest::Any).await, HISTORICAL_PARTITION) {
                    Ok(Some(answer)) => Ok(answer),
                    Ok(None) => Ok(MetadataAnswer::TableGone(Error::server(
                        FlussCode::PARTITION_NOT_EXISTS,
                        format!("{missing} (it is older than the table retains), and the table has no {HISTORICAL_PARTITION} partition to take its rows"),
                    ))),
                    Err(e) => Err(e),
                }
            }
            Ok(None) if !create => Ok(MetadataAnswer::TableGone(Error::server(
                FlussCode::PARTITION_NOT_EXISTS,
                format!("{missing} (client.writer.dynamic-create-partition.enabled is false)"),
            ))),
            Ok(None) => {
                log::info!("{missing}: creating it");
                let req = proto::CreatePartitionRequest { table_path: pb_path, partition_spec: spec, ignore_if_not_exists: true };
                match timed(Request::CreatePartition(req), Dest::Coordinator).await {
                    Ok(_) => match lookup(timed(Request::Metadata(query(&name)), Dest::Any).await, &name) {
                        Ok(Some(answer)) => Ok(answer),
                        // Created but not visible yet: ask again after the usual backoff.
                        Ok(None) => Err(Error::server(FlussCode::LEADER_NOT_AVAILABLE, format!("{missing} yet (just created)"))),
                        Err(e) => Err(e),
                    },
                    Err(e) if e.code() == FlussCode::PARTITION_ALREADY_EXISTS => {
                        Err(Error::server(FlussCode::LEADER_NOT_AVAILABLE, format!("{missing} yet (created by another writer)")))
                    }
                    Err(e) if e.is_retriable() => Err(e.context(format!("creating {missing}"))),
                    Err(e) => Ok(MetadataAnswer::TableGone(e.context("creating the partition"))),
                }
            }
            Err(e) => Err(e),
        };
        let _ = tx.send(Event::Metadata { token, result });
        wake.notify_one();
    });
}

fn spawn_init_writer(shared: &SenderShared, token: u64, tx: mpsc::UnboundedSender<Event>) {
    let req = proto::InitWriterRequest { table_path: table_path_pb(shared) };
    let path = shared.path.clone();
    spawn_request(shared, Dest::Any, Request::InitWriter(req), shared.config.request_timeout, "InitWriter", tx, move |r| {
        let result = match r {
            Ok(Response::InitWriter(r)) => {
                log::debug!("writer for {path} got writer id {}", r.writer_id);
                Ok(r.writer_id)
            }
            Ok(other) => Err(Error::protocol(format!("InitWriter answered with {other:?}"))),
            Err(e) => Err(e),
        };
        Event::WriterId { token, result }
    });
}

/// Split the parts for one leader into requests within `client.writer.request-max-size`
/// (one batch per bucket per request) and send them.
fn send_requests(shared: &SenderShared, m: &Machine<Outgoing>, leader: i32, parts: Vec<Part>, now: u64, tx: &mpsc::UnboundedSender<Event>) {
    let max = shared.config.request_max_size as usize;
    let mut groups: Vec<Vec<Part>> = Vec::new();
    let mut size = 0usize;
    for p in parts {
        let len = m.batch(&p).map_or(0, |o| o.bytes.len());
        let start_new = match groups.last() {
            None => true,
            Some(g) => size + len > max || g.iter().any(|x| x.bucket == p.bucket),
        };
        if start_new {
            groups.push(Vec::new());
            size = 0;
        }
        size += len;
        groups.last_mut().expect("pushed").push(p);
    }
    for parts in groups {
        send_one(shared, m, leader, parts, now, tx.clone());
    }
}

fn send_one(shared: &SenderShared, m: &Machine<Outgoing>, leader: i32, parts: Vec<Part>, now: u64, tx: mpsc::UnboundedSender<Event>) {
    let cfg = &shared.config;
    let timeout_ms = cfg.request_timeout.as_millis().min(i32::MAX as u128) as i32;
    let mut until = u64::MAX;
    let mut items: Vec<(i32, Bytes)> = Vec::with_capacity(parts.len());
    for p in &parts {
        let o = m.batch(p).expect("flight exists");
        until = until.min(m.until(p).unwrap_or(now));
        items.push((p.bucket, o.bytes.clone()));
    }
    // The machine's partition id: the one the batches' sequences were stamped for. Batches for
    // the historical partition name the partition their rows belong to.
    let partition_id = m.partition_id();
    let original = if m.historical() { shared.target.partition.as_deref().map(str::to_string) } else { None };
    let request = match shared.kind {
        BatchKind::Log => Request::ProduceLog(proto::ProduceLogRequest {
            acks: cfg.acks,
            table_id: shared.target.table_id,
            timeout_ms,
            buckets_req: items
                .into_iter()
                .map(|(b, records)| proto::PbProduceLogReqForBucket {
                    partition_id,
                    bucket_id: b,
                    records,
                    routing_bucket_count: shared.routing_count,
                    original_partition_name: original.clone(),
                })
                .collect(),
        }),
        BatchKind::Kv => Request::PutKv(proto::PutKvRequest {
            acks: cfg.acks,
            table_id: shared.target.table_id,
            timeout_ms,
            target_columns: shared.target_columns.clone(),
            buckets_req: items
                .into_iter()
                .map(|(b, records)| proto::PbPutKvReqForBucket {
                    partition_id,
                    bucket_id: b,
                    records,
                    routing_bucket_count: shared.routing_count,
                    original_partition_name: original.clone(),
                })
                .collect(),
            agg_mode: None,
        }),
    };
    // A request never outlives the earliest attempt deadline it carries (the machine's `until`:
    // one request timeout, cut at the earliest delivery deadline).
    let budget = Duration::from_nanos(until.saturating_sub(now)).max(Duration::from_millis(1));
    shared.metrics.requests_sent.fetch_add(1, Ordering::Relaxed);
    tracing::debug!(target: "fluss_writer::batch", table = %shared.path, leader, batches = parts.len(), "produce request sent");
    let (metrics, clock) = (shared.metrics.clone(), shared.clock.clone());
    spawn_request(shared, Dest::Tablet(leader), request, budget, "request", tx, move |result| {
        metrics.request_done(clock.now_nanos().saturating_sub(now));
        Event::Produce { parts, result }
    });
}
/// Release a completed batch's buffer bytes and hand its callbacks to the dispatcher as one job.
fn finish_batch(shared: &SenderShared, batch: WriteBatch, outcome: BatchOutcome) {
    shared.buffer.release(batch.reserved);
    let now = shared.clock.now_nanos();
    let WriteBatch { bucket, entries, joins, tickets, .. } = batch;
    let mut finals = Vec::new();
    let partition = shared.target.partition.clone();
    for (join, rows) in joins {
        let part = BucketResult {
            partition: partition.clone(),
            bucket,
            rows,
            base_offset: outcome.base_offset,
            error: outcome.result.clone().err(),
        };
        if let Some(done) = join.record(part) {
            finals.push((done, join.first_target.shard_partition(), join.first_bucket));
        }
    }
    if !entries.is_empty() || !tickets.is_empty() {
        let body = BatchJob { target: shared.target.clone(), bucket, outcome, entries };
        let key = shard_key(shared.target.table_id, shared.target.shard_partition(), bucket);
        shared.scope.dispatch(Job::new(&shared.scope, key, tickets, now, Box::new(body)));
    }
    for ((job, ticket), first_partition, first_bucket) in finals {
        let mut t = TicketSet::default();
        t.add(ticket);
        let key = shard_key(shared.target.table_id, first_partition, first_bucket);
        shared.scope.dispatch(Job::new(&shared.scope, key, t, now, Box::new(job)));
    }
}
