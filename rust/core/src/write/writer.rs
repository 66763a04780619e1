//! The writers: [`AppendWriter`] for log tables, [`UpsertWriter`] for primary-key tables.
//!
//! Every write call exists in three forms:
//! * `*_with_callback(.., callback)`: the callback runs exactly once when the operation is
//!   durable or failed (see [`WriteCallback`](super::WriteCallback) for where and how);
//! * the plain form returns a [`WriteResult`] to wait on, `.await`, or register callbacks on;
//! * `*_detached(..)` asks for no notification (flush still covers it).
//!
//! The path of one record on the caller's thread: check the row against the schema and encode
//! what can be encoded outside the bucket lock, pick the bucket, compute one deadline from
//! `client.writer.buffer.wait-timeout`, reserve a callback slot (`max_pending_callbacks`), then
//! buffer bytes (`client.writer.buffer.memory-size`) under the same deadline, and append the
//! record and its entry to the open batch of its bucket. Any failure before the append is a
//! synchronous error: nothing was accepted and a given callback is dropped unused before the call
//! returns.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use arrow_array::{RecordBatch, UInt32Array};
use fluss_writer_dispatch::{
    in_callback, AcquireError, AdmitError, Clock, Deadline, ErrorHandler, Executor, FlushError, LatencyBucketsSnapshot, LatencySnapshot,
    Permits, Scope, ScopeOptions, Ticket, UserExecutor, WaitBudget,
};

use super::accumulator::{Accumulator, BatchKind, BatchLimits};
use super::batch::{ArrowJoin, Entry, JobTarget, NewEntry};
use super::callback::Callback;
use super::completion::{ResultCell, SharedCallback, WriteCompletion, WriteResult};
use super::sender::{self, LanePartition, SenderShared};
use crate::config::NoKeyAssigner;
use crate::connection::ConnInner;
use crate::error::{ClientCode, Error, Result};
use crate::metadata::partition::{historical_partitions, AutoPartition, PartitionRouter, HISTORICAL_PARTITION, PARTITION_SEPARATOR};
use crate::metadata::{Schema, TableInfo};
use crate::metrics::{BucketCount, BucketCounters, CodeCount, Report, Reports, WriterMetrics};
use crate::row::{check_value, Value};
use crate::table::Table;
use crate::wire::arrow::{arrow_row_sizes, arrow_value, check_arrow_ranges, check_arrow_row, conform_record_batch};
use crate::wire::compacted::encode_row;
use crate::wire::key::KeyCodec;
use crate::wire::kv_batch::KvBatchBuilder;
use crate::wire::log_batch::ArrowCompression;

/// The most workers a [`CallbackExecutor::Sharded`] executor may have (64). Each is an OS
/// thread; more than the machine has cores only adds context switches.
pub const MAX_CALLBACK_SHARDS: usize = 64;

/// The most operations a writer may have pending (`max_pending_callbacks`, 2^31 - 1).
pub const MAX_PENDING_CALLBACKS: u64 = ScopeOptions::MAX_PENDING_CALLBACKS;

/// Where a writer's callbacks run.
#[derive(Clone, Default)]
pub enum CallbackExecutor {
    /// The connection's single FIFO worker thread (default): all callbacks of the connection
    /// run one at a time in completion order.
    #[default]
    Connection,
    /// `n` FIFO workers owned by this writer; a bucket always maps to the same worker (hash of
    /// table, partition and bucket mod n), so per-bucket order holds and buckets run in parallel.
    /// `n` is 1 to [`MAX_CALLBACK_SHARDS`]; anything else is `INVALID_CONFIG`.
    Sharded(usize),
    /// An executor of the application's: it receives one job per completed batch and must call
    /// `Job::run` on it. Only the order of hand-off is promised.
    User(Arc<dyn UserExecutor>),
    /// An existing executor (for example one shared by several writers).
    Shared(Executor),
}

impl std::fmt::Debug for CallbackExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallbackExecutor::Connection => write!(f, "Connection"),
            CallbackExecutor::Sharded(n) => write!(f, "Sharded({n})"),
            CallbackExecutor::User(_) => write!(f, "User"),
            CallbackExecutor::Shared(e) => write!(f, "Shared({e:?})"),
        }
    }
}

/// Per-writer callback options.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct WriterOptions {
    /// Operations that may be pending at once (accepted, callback not yet returned). Default
    /// 262144.
    pub max_pending_callbacks: u64,
    /// Where callbacks run (default: the connection's FIFO worker).
    pub executor: CallbackExecutor,
    /// Receives panics of this writer's callbacks; default: logged with the operation.
    pub error_handler: Option<ErrorHandlerBox>,
}

/// A clonable, debuggable error handler.
#[derive(Clone)]
pub struct ErrorHandlerBox(pub ErrorHandler);

impl std::fmt::Debug for ErrorHandlerBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ErrorHandler")
    }
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            max_pending_callbacks: ScopeOptions::DEFAULT_MAX_PENDING_CALLBACKS,
            executor: CallbackExecutor::Connection,
            error_handler: None,
        }
    }
}

impl WriterOptions {
    /// Set `max_pending_callbacks` (checked when the writer is created).
    pub fn max_pending_callbacks(mut self, n: u64) -> Self {
        self.max_pending_callbacks = n;
        self
    }

    /// Set where callbacks run.
    pub fn executor(mut self, e: CallbackExecutor) -> Self {
        self.executor = e;
        self
    }

    /// Set the handler told about callbacks that panicked or raised.
    pub fn error_handler(mut self, h: impl Fn(&fluss_writer_dispatch::CallbackError) + Send + Sync + 'static) -> Self {
        self.error_handler = Some(ErrorHandlerBox(Arc::new(h)));
        self
    }
}

/// Counters of one writer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriterStats {
    /// Operations accepted and not yet retired (callback not yet returned).
    pub pending_callbacks: u64,
    /// Callbacks that ran (each completion once).
    pub callbacks_run: u64,
    /// Errors reported to the writer's error handler: callbacks that panicked (raised, threw) and
    /// jobs that a user executor dropped without running them (one per job).
    pub callback_errors: u64,
    /// Jobs (completed batches) that a user executor dropped without running them: their
    /// callbacks never ran, their slots were released, and each was reported as an error.
    pub jobs_dropped: u64,
    /// Jobs queued on the writer's executor, not yet run.
    pub queued_jobs: u64,
    /// Buffer bytes held by this connection's unsent or unacknowledged batches.
    pub buffer_bytes_in_use: u64,
    /// Time from a batch's acknowledgement to the start of its job on the writer's executor
    /// (for the connection's worker: over every writer that uses it).
    pub ack_to_callback: LatencySnapshot,
    /// Partitions this writer keeps batches and a sender task for (those written to less than
    /// `client.writer.partition-idle-timeout` ago, or with writes pending); 1 for a table without
    /// partitions.
    pub open_partitions: u64,
    /// Records the server acknowledged.
    pub records_sent: u64,
    /// Encoded bytes of the acknowledged batches.
    pub bytes_sent: u64,
    /// Batches the server acknowledged.
    pub batches_sent: u64,
    /// Records whose batch failed for good (their callbacks carry the error); per code in
    /// `error_counts()`.
    pub records_failed: u64,
    /// Write calls refused synchronously (the caller got the error; nothing was accepted), per
    /// code in `error_counts()`.
    pub operations_rejected: u64,
    /// Produce requests sent, retries included.
    pub requests_sent: u64,
    /// Batch attempts that failed with a retriable error and were tried again.
    pub retries: u64,
    /// Times a bucket of a primary-key table held its next send back because the server reported
    /// storage pressure (PutKv v2, Fluss 1.0; `client.writer.kv-backpressure.max-throttle`).
    pub kv_throttled_sends: u64,
    /// Total time buckets held sends back for server storage pressure, in nanoseconds.
    pub kv_throttle_nanos: u64,
    /// The highest storage pressure the server reported in its latest answer for any bucket of
    /// this writer, in thousandths (0: none; 1000: `STORAGE_BACKPRESSURE`).
    pub kv_pressure_permille: u64,
    /// Callbacks that ran at least `client.writer.slow-callback-threshold` (each also logged,
    /// at most one line per 10 s).
    pub slow_callbacks: u64,
    /// Age of the oldest batch of this writer that is open, in flight or waiting for a retry
    /// (0: none).
    pub oldest_pending_batch_age_nanos: u64,
    /// Produce request latency, from sending to the answer (or the request's failure).
    pub request_latency: LatencySnapshot,
    /// Median records per acknowledged batch.
    pub batch_records_p50: u64,
    /// 99th percentile of records per acknowledged batch.
    pub batch_records_p99: u64,
    /// Median encoded bytes per acknowledged batch.
    pub batch_bytes_p50: u64,
    /// 99th percentile of encoded bytes per acknowledged batch.
    pub batch_bytes_p99: u64,
}

impl WriterStats {
    /// Every counter as `(name, value)`, the latency snapshots flattened (`ack_to_callback_count`,
    /// `..._p50_nanos`, `..._p99_nanos`, `..._max_nanos`, and the same for `request_latency`):
    /// the one list of names the bindings expose (a Python dict, the C++ struct's fields, the
    /// JSON and Prometheus exports). [`crate::metrics::METRICS`] describes each, in this order.
    pub fn fields(&self) -> [(&'static str, u64); 31] {
        // Destructured so that a new field cannot be forgotten here.
        let WriterStats {
            pending_callbacks,
            callbacks_run,
            callback_errors,
            jobs_dropped,
            queued_jobs,
            buffer_bytes_in_use,
            ack_to_callback,
            open_partitions,
            records_sent,
            bytes_sent,
            batches_sent,
            records_failed,
            operations_rejected,
            requests_sent,
            retries,
            kv_throttled_sends,
            kv_throttle_nanos,
            kv_pressure_permille,
            slow_callbacks,
            oldest_pending_batch_age_nanos,
            request_latency,
            batch_records_p50,
            batch_records_p99,
            batch_bytes_p50,
            batch_bytes_p99,
        } = *self;
        [
            ("pending_callbacks", pending_callbacks),
            ("callbacks_run", callbacks_run),
            ("callback_errors", callback_errors),
            ("jobs_dropped", jobs_dropped),
            ("queued_jobs", queued_jobs),
            ("buffer_bytes_in_use", buffer_bytes_in_use),
            ("ack_to_callback_count", ack_to_callback.count),
            ("ack_to_callback_p50_nanos", ack_to_callback.p50_nanos),
            ("ack_to_callback_p99_nanos", ack_to_callback.p99_nanos),
            ("ack_to_callback_max_nanos", ack_to_callback.max_nanos),
            ("open_partitions", open_partitions),
            ("records_sent", records_sent),
            ("bytes_sent", bytes_sent),
            ("batches_sent", batches_sent),
            ("records_failed", records_failed),
            ("operations_rejected", operations_rejected),
            ("requests_sent", requests_sent),
            ("retries", retries),
            ("kv_throttled_sends", kv_throttled_sends),
            ("kv_throttle_nanos", kv_throttle_nanos),
            ("kv_pressure_permille", kv_pressure_permille),
            ("slow_callbacks", slow_callbacks),
            ("oldest_pending_batch_age_nanos", oldest_pending_batch_age_nanos),
            ("request_latency_count", request_latency.count),
            ("request_latency_p50_nanos", request_latency.p50_nanos),
            ("request_latency_p99_nanos", request_latency.p99_nanos),
            ("request_latency_max_nanos", request_latency.max_nanos),
            ("batch_records_p50", batch_records_p50),
            ("batch_records_p99", batch_records_p99),
            ("batch_bytes_p50", batch_bytes_p50),
            ("batch_bytes_p99", batch_bytes_p99),
        ]
    }
}

/// How an operation wants to hear about its completion.
pub(crate) enum CompletionTarget<'a> {
    Callback(Callback),
    Shared(&'a SharedCallback),
    Result,
    Detached,
}

impl<'a> CompletionTarget<'a> {
    /// The entry of a one-record operation (its batch makes its `WriteResult`).
    fn into_entry<'s>(self, scope: &'s Scope) -> Option<NewEntry<'s>>
    where
        'a: 's,
    {
        match self {
            CompletionTarget::Callback(cb) => Some(NewEntry::Owned(Entry::Callback(cb))),
            CompletionTarget::Shared(cb) => Some(NewEntry::Shared(cb)),
            CompletionTarget::Result => Some(NewEntry::Result(scope)),
            CompletionTarget::Detached => None,
        }
    }

    /// The entry of an Arrow operation (one for the whole operation, held by its join), and its
    /// `WriteResult` (a cell of its own: the operation spans batches).
    fn into_join_entry(self, scope: &Scope) -> (Option<Entry>, Option<WriteResult>) {
        match self {
            CompletionTarget::Callback(cb) => (Some(Entry::Callback(cb)), None),
            CompletionTarget::Shared(cb) => (Some(Entry::Run { cb: cb.clone(), count: 1 }), None),
            CompletionTarget::Result => {
                let cell = ResultCell::new(scope.clone());
                (Some(Entry::Result(cell.clone())), Some(WriteResult::new(cell)))
            }
            CompletionTarget::Detached => (None, None),
        }
    }
}

/// One destination of a writer: the table, or one partition of a partitioned table. Each has
/// its own batches (accumulator) and its own sender task; all lanes of a writer share its
/// scope (callback slots, flush, close) and the connection's buffer memory.
pub(crate) struct Lane {
    acc: Arc<Accumulator>,
    shared: Arc<SenderShared>,
    /// The sticky bucket of rows without a bucket key.
    sticky: AtomicI32,
    /// The bucket count its rows are routed by: the table's, or its partition's own (Fluss 1.0
    /// per-partition bucket counts), fixed for the lane's life.
    bucket_count: i32,
    /// Buckets of keys by `bucket_count`.
    keys: KeyCodec,
}

/// The lanes of a writer.
enum Lanes {
    /// A table without partitions: one lane, created with the writer.
    Single(Lane),
    /// A partitioned table: a lane per partition written to, created by the first row for it.
    /// `historical`: the table's auto-partitioning when it has historical partitions (rows of
    /// partitions older than it retains go to its historical partition once theirs is gone).
    Partitioned { router: PartitionRouter, keys: Vec<String>, lanes: RwLock<PartitionLanes>, historical: Option<AutoPartition> },
}

/// How many partitions' lanes [`PartitionLanes::by_values`] finds by their key values.
const LANES_BY_VALUES: usize = 8;

/// The open lanes of a partitioned writer, under one lock.
#[derive(Default)]
struct PartitionLanes {
    /// Every open lane, by partition name: what holds them.
    by_name: HashMap<Arc<str>, Arc<Lane>>,
    /// Up to [`LANES_BY_VALUES`] of them by the partition-key values of a row that opened or
    /// found them: a row with the same values finds its lane without its partition name being
    /// formed, checked and hashed. Weak, so that an idle lane is released as if this were not
    /// here; taken (upgraded) under the read lock only, so never while one is being released.
    by_values: Vec<(Box<[Value]>, std::sync::Weak<Lane>)>,
    /// Lanes replaced because their rows were routed by a bucket count their partition does not
    /// have: no new rows reach them; they finish what they hold, are closed with the writer, and
    /// are released once idle like any lane.
    retired: Vec<Arc<Lane>>,
}

/// A lane in use by one write call.
enum LaneRef<'a> {
    Borrowed(&'a Lane),
    Shared(Arc<Lane>),
}

impl std::ops::Deref for LaneRef<'_> {
    type Target = Lane;
    fn deref(&self) -> &Lane {
        match self {
            LaneRef::Borrowed(l) => l,
            LaneRef::Shared(l) => l,
        }
    }
}

/// What every lane of a writer is built with.
struct LaneConfig {
    kind: BatchKind,
    compression: ArrowCompression,
    /// PutKv target columns (partial update); empty = all.
    target_columns: Vec<i32>,
    /// The writer's metrics, which its lanes' senders update.
    metrics: Arc<WriterMetrics>,
    /// How full the batches of every lane may get.
    limits: Arc<BatchLimits>,
}

/// What both writers share.
pub(crate) struct WriterCore {
    /// Itself, for the lanes' senders (which ask it to release idle lanes).
    me: std::sync::Weak<WriterCore>,
    conn: Arc<ConnInner>,
    table: Table,
    pub(crate) scope: Scope,
    lanes: Lanes,
    lane_config: LaneConfig,
    budget: WaitBudget,
    buffer: Arc<Permits>,
    clock: Arc<dyn Clock>,
    schema: Arc<Schema>,
    /// The bucket-key columns (empty: no bucket key).
    bucket_key: Vec<usize>,
    /// Key bytes and buckets (the table's lake format decides them).
    keys: KeyCodec,
    /// The whole primary key (what `delete` takes).
    pk_full: Vec<usize>,
    batch_size: usize,
    assigner: NoKeyAssigner,
    round_robin: AtomicU32,
    /// Partial update: the target columns (all others are written as null and left alone).
    target_columns: Option<Vec<usize>>,
    closed: AtomicBool,
}

fn estimate_value(v: &Value) -> usize {
    match v {
        Value::Null => 0,
        Value::Boolean(_) | Value::TinyInt(_) => 1,
        Value::SmallInt(_) => 2,
        Value::Int(_) | Value::Date(_) | Value::Time(_) | Value::Float(_) => 4,
        Value::BigInt(_) | Value::Double(_) | Value::Timestamp(_) | Value::TimestampLtz(_) => 8,
        Value::Decimal(_) => 16,
        Value::String(s) => s.len() + 4,
        Value::Bytes(b) => b.len() + 4,
        // Offsets and validity of the nested vectors, plus the values.
        Value::Array(items) | Value::Row(items) => 5 + items.iter().map(estimate_value).sum::<usize>(),
        Value::Map(entries) => 5 + entries.iter().map(|(k, v)| 1 + estimate_value(k) + estimate_value(v)).sum::<usize>(),
    }
}

/// Bytes a log row adds to an Arrow batch (values, offsets, validity), a close upper estimate.
fn estimate_row_size(row: &[Value]) -> usize {
    row.iter().map(estimate_value).sum::<usize>() + row.len().div_ceil(8) + 8
}

impl WriterCore {
    pub(crate) fn new(
        conn: Arc<ConnInner>,
        table: Table,
        opts: WriterOptions,
        target_columns: Option<Vec<usize>>,
    ) -> Result<Arc<WriterCore>> {
        conn.check_usable()?;
        if !(1..=MAX_PENDING_CALLBACKS).contains(&opts.max_pending_callbacks) {
            return Err(Error::client(
                ClientCode::InvalidConfig,
                format!("max_pending_callbacks must be 1 to {MAX_PENDING_CALLBACKS}, not {}", opts.max_pending_callbacks),
            ));
        }
        let info: &TableInfo = table.info();
        let schema = Arc::new(info.schema().clone());
        let kind = if info.has_primary_key() { BatchKind::Kv } else { BatchKind::Log };
        let executor = match opts.executor {
            CallbackExecutor::Connection => conn.executor.clone(),
            CallbackExecutor::Sharded(n) => {
                if !(1..=MAX_CALLBACK_SHARDS).contains(&n) {
                    return Err(Error::client(
                        ClientCode::InvalidConfig,
                        format!("a sharded executor needs 1 to {MAX_CALLBACK_SHARDS} workers, not {n}"),
                    ));
                }
                Executor::sharded(&format!("fluss-writer-cb-{}", info.path), n, conn.worker_hooks.clone())
            }
            CallbackExecutor::User(u) => Executor::user(u),
            CallbackExecutor::Shared(e) => e,
        };
        let scope = Scope::new(
            ScopeOptions {
                max_pending_callbacks: opts.max_pending_callbacks,
                error_handler: opts.error_handler.map(|h| h.0),
                slow_callback_threshold: Some(conn.config.slow_callback_threshold),
            },
            executor,
            conn.clock.clone(),
        );
        let config = conn.config.clone();
        let lane_config = LaneConfig {
            kind,
            compression: ArrowCompression::from_property(info.descriptor.properties.get(ArrowCompression::PROPERTY).map(String::as_str))?,
            target_columns: target_columns.as_ref().map(|c| c.iter().map(|&i| i as i32).collect()).unwrap_or_default(),
            metrics: Arc::new(WriterMetrics::new()),
            limits: Arc::new(BatchLimits::new(
                config.batch_size as usize,
                usize::try_from(scope.max_pending_callbacks()).unwrap_or(usize::MAX),
                usize::try_from(config.buffer_memory_size).unwrap_or(usize::MAX),
            )),
        };
        // Before any lane: a lane builds its own codec from the same table (and its count).
        let keys = KeyCodec::new(info)?;
        let lanes = match PartitionRouter::new(info.schema(), info.partition_keys())? {
            None => Lanes::Single(build_lane(&conn, info, &schema, &scope, &lane_config, None, table.leaders())),
            Some(router) => Lanes::Partitioned {
                router,
                keys: info.partition_keys().to_vec(),
                lanes: RwLock::default(),
                historical: historical_partitions(&info.descriptor),
            },
        };
        let budget = match config.buffer_wait_timeout {
            None => WaitBudget::Unbounded,
            Some(d) if d.is_zero() => WaitBudget::NonBlocking,
            Some(d) => WaitBudget::Timeout(d),
        };
        let bucket_key = info.bucket_key_indexes();
        let pk_full = info.schema().primary_key_indexes();
        let core = Arc::new_cyclic(|me| WriterCore {
            me: me.clone(),
            bucket_key,
            keys,
            pk_full,
            batch_size: config.batch_size as usize,
            assigner: config.no_key_assigner,
            round_robin: AtomicU32::new(0),
            target_columns,
            closed: AtomicBool::new(false),
            budget,
            buffer: conn.buffer.clone(),
            clock: conn.clock.clone(),
            schema,
            lanes,
            lane_config,
            scope,
            table,
            conn: conn.clone(),
        });
        conn.register_writer(&core);
        let weak: std::sync::Weak<dyn Reports> = Arc::downgrade(&core) as std::sync::Weak<dyn Reports>;
        crate::metrics::register(weak);
        Ok(core)
    }

    /// The lane of a row (already checked against the schema): the table's, or its
    /// partition's. A row whose partition values do not form a partition name is `INVALID_ROW`.
    fn lane_for_row(&self, row: &[Value]) -> Result<LaneRef<'_>> {
        let (router, lanes) = match &self.lanes {
            Lanes::Single(l) => return Ok(LaneRef::Borrowed(l)),
            Lanes::Partitioned { router, lanes, .. } => (router, lanes),
        };
        let cols = router.columns();
        let is_row_of = |values: &[Value]| cols.iter().zip(values).all(|(&c, v)| crate::row::same_datum(&row[c], v));
        let room = {
            let map = lanes.read().unwrap_or_else(|p| p.into_inner());
            if let Some(lane) =
                map.by_values.iter().find(|(v, _)| is_row_of(v)).and_then(|(_, l)| l.upgrade()).filter(|l| !l.shared.is_stale())
            {
                return Ok(LaneRef::Shared(lane));
            }
            map.by_values.len() < LANES_BY_VALUES
        };
        let lane = NAME.with(|n| {
            let mut n = n.borrow_mut();
            router.name_of(&self.schema, row, &mut n)?;
            self.lane_named(&n)
        })?;
        if room {
            let mut map = lanes.write().unwrap_or_else(|p| p.into_inner());
            map.by_values.retain(|(_, l)| l.upgrade().is_some_and(|l| !l.shared.is_stale()));
            if map.by_values.len() < LANES_BY_VALUES && !map.by_values.iter().any(|(v, _)| is_row_of(v)) {
                map.by_values.push((cols.iter().map(|&c| row[c].clone()).collect(), Arc::downgrade(&lane)));
            }
        }
        Ok(LaneRef::Shared(lane))
    }

    /// The lane of the partition called `name`, created (with its sender) on first use.
    fn lane_named(&self, name: &str) -> Result<Arc<Lane>> {
        let Lanes::Partitioned { keys, lanes, historical, .. } = &self.lanes else { unreachable!("a partitioned writer") };
        if let Some(l) = lanes.read().unwrap_or_else(|p| p.into_inner()).by_name.get(name).filter(|l| !l.shared.is_stale()) {
            return Ok(l.clone());
        }
        // A partition older than the table retains, on a table with historical partitions.
        let expired = historical.as_ref().is_some_and(|a| a.is_expired(name, crate::timeouts::wall_clock_ms()));
        // Outside the lock: the partition's own bucket count (a request to the server).
        let bucket_count = self.partition_bucket_count(name, expired);
        let mut map = lanes.write().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = map.by_name.get(name) {
            if !l.shared.is_stale() {
                return Ok(l.clone());
            }
            let old = map.by_name.remove(name).expect("present");
            log::info!("{}: partition {name}: rows are routed by {bucket_count} buckets from now on", self.table.info().path);
            map.by_values.retain(|(_, l)| !std::ptr::eq(l.as_ptr(), Arc::as_ptr(&old)));
            map.retired.push(old);
        }
        // Under the write lock, so that close (which sets the flag, then takes this lock to
        // close every lane) never misses a lane.
        self.check_open()?;
        self.evict_idle_lanes(&mut map);
        let values: Vec<&str> = name.split(PARTITION_SEPARATOR).collect();
        let spec = crate::admin::spec_pb(keys, &values);
        let name: Arc<str> = name.into();
        let leaders = vec![None; bucket_count as usize];
        let info = &self.table.info().with_bucket_count(bucket_count);
        let me = self.me.clone();
        let on_idle: OnIdle = Box::new(move || {
            if let Some(core) = me.upgrade() {
                core.release_idle_lanes();
            }
        });
        let lane = Arc::new(build_lane(
            &self.conn,
            info,
            &self.schema,
            &self.scope,
            &self.lane_config,
            Some((name.clone(), spec, on_idle, historical.clone())),
            leaders,
        ));
        map.by_name.insert(name, lane.clone());
        Ok(lane)
    }

    /// The bucket count that rows of the partition called `name` are routed by. A server without
    /// per-partition bucket counts (the table's `bucket_count_epoch` unknown: Fluss 0.9) gives
    /// every partition the table's count: no request. Otherwise the partition's own count, from
    /// Metadata; for a partition that does not exist yet, the table's count as the server has it
    /// now (what the partition will get when it is created). If neither can be asked (a network
    /// error), the table's count as loaded: should the partition have another one, the lane's
    /// sender finds out before it sends and the rows fail with INVALID_BUCKET_ROUTING. An
    /// `expired` partition that does not exist (its rows go to the historical partition) has the
    /// historical partition's count.
    fn partition_bucket_count(&self, name: &str, expired: bool) -> i32 {
        let info = self.table.info();
        if info.bucket_count_epoch.is_none() {
            return info.bucket_count();
        }
        match crate::admin::load_partition_counted(&self.conn, info, name) {
            Ok((_, _, n)) => n,
            Err(e) if e.code() == crate::FlussCode::PARTITION_NOT_EXISTS && expired => {
                match crate::admin::load_partition_counted(&self.conn, info, HISTORICAL_PARTITION) {
                    Ok((_, _, n)) => n,
                    Err(_) => info.bucket_count(),
                }
            }
            Err(e) if e.code() == crate::FlussCode::PARTITION_NOT_EXISTS => match crate::admin::load_table(&self.conn, &info.path) {
                Ok((fresh, _)) if fresh.table_id == info.table_id => fresh.bucket_count(),
                _ => info.bucket_count(),
            },
            Err(e) => {
                log::warn!("{}: bucket count of partition {name} unknown ({e}); routing by the table's {}", info.path, info.bucket_count());
                info.bucket_count()
            }
        }
    }

    /// [`evict_idle_lanes`](Self::evict_idle_lanes) now (a lane's sender found itself idle for
    /// the timeout).
    fn release_idle_lanes(&self) {
        if let Lanes::Partitioned { lanes, .. } = &self.lanes {
            if self.closed.load(Ordering::Acquire) {
                return; // close takes care of every lane
            }
            self.evict_idle_lanes(&mut lanes.write().unwrap_or_else(|p| p.into_inner()));
        }
    }

    /// Drop the lanes of partitions that had nothing pending for
    /// `client.writer.partition-idle-timeout` (called under the lane map's write lock when a lane
    /// is opened, and when a lane's sender has been idle that long). A lane is dropped only if nothing but the map holds it: a write call
    /// holds its lane (an `Arc` taken under the read lock) from lookup until its row is in the
    /// lane's batches, and no call can take it once it left the map. Its accumulator is looked at
    /// before its sender's idle mark, which the sender clears before it takes batches, so a batch
    /// on its way is never missed. The sender exits by itself; a later row for the partition opens
    /// a new lane (with its own writer id), whose callbacks come after the old lane's, which had
    /// all been dispatched.
    fn evict_idle_lanes(&self, lanes: &mut PartitionLanes) {
        let timeout = self.conn.config.partition_idle_timeout.as_nanos() as u64;
        let now = self.conn.clock.now_nanos();
        let idle = |lane: &Arc<Lane>| {
            Arc::strong_count(lane) == 1
                && lane.acc.is_empty()
                && lane.shared.idle_since().is_some_and(|t| now.saturating_sub(t) >= timeout)
        };
        lanes.by_name.retain(|name, lane| {
            let idle = idle(lane);
            if idle {
                log::debug!("{}: partition {name} idle: its lane is released", self.table.info().path);
                lane.shared.evict();
            }
            !idle
        });
        lanes.retired.retain(|lane| {
            let idle = idle(lane);
            if idle {
                lane.shared.evict();
            }
            !idle
        });
        // A released lane is gone (the map held the only strong reference): so is its entry.
        lanes.by_values.retain(|(_, l)| l.strong_count() > 0);
    }

    /// The number of lanes (`WriterStats::open_partitions`).
    fn lane_count(&self) -> usize {
        match &self.lanes {
            Lanes::Single(_) => 1,
            Lanes::Partitioned { lanes, .. } => lanes.read().unwrap_or_else(|p| p.into_inner()).by_name.len(),
        }
    }

    /// Run `f` on every lane. For a partitioned writer the lanes are taken under the lane map's
    /// write lock (so a close that set `closed` before cannot miss a lane being created), and `f`
    /// runs after the lock is released (it may block: waiting for a sender to exit).
    fn each_lane(&self, mut f: impl FnMut(&Lane)) {
        match &self.lanes {
            Lanes::Single(l) => f(l),
            Lanes::Partitioned { lanes, .. } => {
                let all: Vec<Arc<Lane>> = {
                    let map = lanes.write().unwrap_or_else(|p| p.into_inner());
                    map.by_name.values().chain(&map.retired).cloned().collect()
                };
                all.iter().for_each(|l| f(l));
            }
        }
    }

    fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::client(ClientCode::WriterClosed, "the writer is closed"));
        }
        if self.conn.is_closed() {
            return Err(Error::client(ClientCode::ConnectionClosed, "the connection is closed"));
        }
        Ok(())
    }

    /// Close every open batch of this writer, so that its sender sends them now.
    pub(crate) fn send_open_batches(&self) {
        self.each_lane(|l| l.acc.close_all_open());
    }

    /// Reserve one callback slot, then `bytes` of buffer memory, under one deadline (C5).
    ///
    /// Before a wait, the open batches that hold what it waits for are sent (this writer's for a
    /// slot, every writer's of the connection for memory): slots and memory come back only when
    /// batches complete, and a batch that is not full would otherwise linger for
    /// `client.writer.batch-timeout` while the writer waits. This happens once per wait: a batch
    /// that another thread opens after the wait began lingers as usual (sending every batch as it
    /// opens while anyone waits made the partitions benchmark fall to a third in some runs: a
    /// stream of one-row batches).
    fn admit(&self, bytes: u64) -> Result<Ticket> {
        let deadline = Deadline::from_budget(self.budget, &*self.clock);
        let ticket = match self.scope.try_admit() {
            Some(t) => Ok(t),
            None => {
                // Slots are this writer's own: only its batches give them back.
                self.send_open_batches();
                self.scope.admit(deadline)
            }
        };
        let ticket = ticket.map_err(|e| match e {
            AdmitError::Exhausted => Error::client(
                ClientCode::CapacityExhausted,
                format!("max_pending_callbacks ({}) slots stayed taken for the whole wait budget", self.scope.max_pending_callbacks()),
            ),
            AdmitError::WouldBlockInCallback => Error::client(
                ClientCode::CapacityExhausted,
                "no callback slot is free and a submission from inside a callback never blocks",
            ),
            AdmitError::Closed => Error::client(ClientCode::WriterClosed, "the writer is closed"),
            AdmitError::Interrupted => interrupted_error("waiting for a callback slot"),
        })?;
        if self.buffer.try_acquire(bytes) {
            return Ok(ticket);
        }
        self.conn.send_open_batches();
        if let Err(e) = self.buffer.acquire(bytes, deadline, &*self.clock) {
            self.scope.cancel(ticket);
            return Err(match e {
                AcquireError::Exhausted => Error::client(
                    ClientCode::BufferExhausted,
                    format!(
                        "client.writer.buffer.memory-size ({} bytes) stayed exhausted for the whole wait budget",
                        self.buffer.capacity()
                    ),
                ),
                AcquireError::WouldBlockInCallback => Error::client(
                    ClientCode::BufferExhausted,
                    "buffer memory is exhausted and a submission from inside a callback never blocks",
                ),
                AcquireError::TooLarge => {
                    Error::client(ClientCode::RecordTooLarge, format!("{bytes} bytes exceed client.writer.buffer.memory-size"))
                }
                AcquireError::Closed => Error::client(ClientCode::ConnectionClosed, "the connection is closed"),
                AcquireError::Interrupted => interrupted_error("waiting for buffer memory"),
            });
        }
        Ok(ticket)
    }

    fn too_large(&self, size: usize) -> Result<()> {
        if size > self.batch_size {
            return Err(Error::client(
                ClientCode::RecordTooLarge,
                format!("the record needs about {size} bytes, more than client.writer.batch-size ({} bytes)", self.batch_size),
            ));
        }
        Ok(())
    }

    /// The bucket of a log row: hash of its bucket key, or the no-key assigner.
    fn log_bucket(&self, lane: &Lane, row: &[Value], scratch: &mut Vec<u8>) -> Result<i32> {
        if self.bucket_key.is_empty() {
            return Ok(match self.assigner {
                NoKeyAssigner::Sticky => lane.sticky.load(Ordering::Relaxed),
                NoKeyAssigner::RoundRobin => (self.round_robin.fetch_add(1, Ordering::Relaxed) % lane.bucket_count as u32) as i32,
            });
        }
        lane.keys.row_bucket(&self.schema, row, scratch)
    }

    /// Move a lane's sticky bucket on after its batch filled.
    fn next_sticky(&self, lane: &Lane, from: i32) {
        let n = lane.bucket_count;
        if n > 1 {
            let step = 1 + (self.clock.now_nanos() % (n as u64 - 1)) as i32;
            let _ = lane.sticky.compare_exchange(from, (from + step) % n, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    pub(crate) fn append_row(&self, row: &[Value], notify: CompletionTarget) -> Result<Option<WriteResult>> {
        self.check_open()?;
        check_arrow_row(&self.schema, row)?;
        let size = estimate_row_size(row);
        self.too_large(size)?;
        let lane = self.lane_for_row(row)?;
        let bucket = SCRATCH.with(|s| self.log_bucket(&lane, row, &mut s.borrow_mut().0))?;
        let entry = notify.into_entry(&self.scope);
        let ticket = self.admit(size as u64)?;
        let appended = lane.acc.append_row(bucket, row, size, entry, ticket, &*self.clock);
        if appended.closed_full && self.bucket_key.is_empty() && self.assigner == NoKeyAssigner::Sticky {
            self.next_sticky(&lane, bucket);
        }
        Ok(appended.result)
    }

    /// Upsert (value = Some(row)) or delete (value = None, `row` carries the key columns).
    pub(crate) fn write_kv(&self, row: &[Value], delete: bool, notify: CompletionTarget) -> Result<Option<WriteResult>> {
        self.check_open()?;
        SCRATCH.with(|s| {
            let mut guard = s.borrow_mut();
            let (key, value) = &mut *guard;
            key.clear();
            value.clear();
            if row.len() != self.schema.len() {
                return Err(Error::invalid_row(format!(
                    "the row has {} fields but the table has {} columns",
                    row.len(),
                    self.schema.len()
                )));
            }
            for &i in &self.pk_full {
                check_value(&self.schema.columns()[i], &row[i])?;
            }
            let lane = self.lane_for_row(row)?;
            self.keys.encode_pk(&self.schema, row, key)?;
            if !delete {
                match &self.target_columns {
                    None => {
                        encode_row(&self.schema, row, value)?;
                        check_arrow_ranges(&self.schema, row)?;
                    }
                    Some(targets) => {
                        let partial: Vec<Value> =
                            row.iter().enumerate().map(|(i, v)| if targets.contains(&i) { v.clone() } else { Value::Null }).collect();
                        for &i in targets {
                            check_value(&self.schema.columns()[i], &partial[i])?;
                        }
                        encode_row(&self.schema, &partial, value)?;
                        check_arrow_ranges(&self.schema, &partial)?;
                    }
                }
            }
            let bucket = lane.keys.kv_bucket(&self.schema, row, key, &mut Vec::new())?;
            let value_ref = if delete { None } else { Some(&value[..]) };
            let size = KvBatchBuilder::record_size(key.len(), value_ref.map(<[u8]>::len));
            self.too_large(size)?;
            let entry = notify.into_entry(&self.scope);
            let ticket = self.admit(size as u64)?;
            Ok(lane.acc.append_kv(bucket, key, value_ref, size, entry, ticket, &*self.clock))
        })
    }

    /// A full-width row with the primary-key values in place and nulls elsewhere.
    pub(crate) fn key_row(&self, key: &[Value]) -> Result<Vec<Value>> {
        if key.len() != self.pk_full.len() {
            return Err(Error::invalid_row(format!(
                "the key has {} values but the primary key has {} columns",
                key.len(),
                self.pk_full.len()
            )));
        }
        let mut row = vec![Value::Null; self.schema.len()];
        for (v, &i) in key.iter().zip(&self.pk_full) {
            row[i] = v.clone();
        }
        Ok(row)
    }

    /// Write a user Arrow batch: conform it, split it per bucket (and into batch-size chunks),
    /// admit it as a whole (one slot, all bytes), then enqueue every group (C11).
    pub(crate) fn write_arrow(&self, batch: &RecordBatch, notify: CompletionTarget) -> Result<Option<WriteResult>> {
        self.check_open()?;
        let rb = conform_record_batch(&self.schema, batch)?;
        let rows = rb.num_rows();
        if rows == 0 {
            return Err(Error::invalid_row("the Arrow batch has no rows"));
        }
        // Per-row sizes decide the split: one row over the batch size rejects the whole call
        // before anything is admitted (C5, C11), however small the average row is.
        let sizes = arrow_row_sizes(&rb);
        if let Some((r, &size)) = sizes.iter().enumerate().find(|(_, &s)| s > self.batch_size) {
            return Err(Error::client(
                ClientCode::RecordTooLarge,
                format!(
                    "row {r} of the Arrow batch needs about {size} bytes, more than client.writer.batch-size ({} bytes); nothing was written",
                    self.batch_size
                ),
            ));
        }
        // The lane (table or partition) of every row, then the bucket of every row in its lane.
        let types = self.schema.types();
        let by_lane: Vec<(LaneRef<'_>, RecordBatch, Vec<usize>)> = match &self.lanes {
            Lanes::Single(l) => vec![(LaneRef::Borrowed(l), rb.clone(), sizes)],
            Lanes::Partitioned { router, .. } => {
                let mut names: Vec<String> = Vec::new();
                let mut idx: Vec<Vec<u32>> = Vec::new();
                let mut vals = vec![Value::Null; self.schema.len()];
                let mut name = String::new();
                for r in 0..rows {
                    for &c in router.columns() {
                        vals[c] = arrow_value(rb.column(c).as_ref(), &types[c], r)?;
                    }
                    router.name_of(&self.schema, &vals, &mut name).map_err(|e| e.context(format!("row {r} of the Arrow batch")))?;
                    match names.iter().position(|n| *n == name) {
                        Some(p) => idx[p].push(r as u32),
                        None => {
                            names.push(name.clone());
                            idx.push(vec![r as u32]);
                        }
                    }
                }
                let mut out = Vec::with_capacity(names.len());
                for (n, ix) in names.iter().zip(idx) {
                    let part_sizes: Vec<usize> = ix.iter().map(|&r| sizes[r as usize]).collect();
                    out.push((LaneRef::Shared(self.lane_named(n)?), take_rows(&rb, ix)?, part_sizes));
                }
                out
            }
        };
        let mut groups: Vec<(usize, i32, RecordBatch, Vec<usize>)> = Vec::new();
        for (li, (lane, lb, lane_sizes)) in by_lane.iter().enumerate() {
            if self.bucket_key.is_empty() {
                let bucket = match self.assigner {
                    NoKeyAssigner::Sticky => lane.sticky.load(Ordering::Relaxed),
                    NoKeyAssigner::RoundRobin => (self.round_robin.fetch_add(1, Ordering::Relaxed) % lane.bucket_count as u32) as i32,
                };
                groups.push((li, bucket, lb.clone(), lane_sizes.clone()));
                continue;
            }
            let mut order: Vec<i32> = Vec::new();
            let mut idx: Vec<Vec<u32>> = Vec::new();
            let mut key = Vec::new();
            let mut vals = vec![Value::Null; self.schema.len()];
            for r in 0..lb.num_rows() {
                for &c in &self.bucket_key {
                    vals[c] = arrow_value(lb.column(c).as_ref(), &types[c], r)?;
                }
                let b = lane.keys.row_bucket(&self.schema, &vals, &mut key)?;
                match order.iter().position(|&x| x == b) {
                    Some(p) => idx[p].push(r as u32),
                    None => {
                        order.push(b);
                        idx.push(vec![r as u32]);
                    }
                }
            }
            for (b, ix) in order.into_iter().zip(idx) {
                let group_sizes: Vec<usize> = ix.iter().map(|&r| lane_sizes[r as usize]).collect();
                groups.push((li, b, take_rows(lb, ix)?, group_sizes));
            }
        }
        // Chunks of consecutive rows whose sizes add up to at most a batch.
        let mut chunks: Vec<(usize, i32, RecordBatch, usize)> = Vec::new();
        for (li, b, g, group_sizes) in groups {
            let (mut start, mut bytes) = (0, 0usize);
            for (r, &s) in group_sizes.iter().enumerate() {
                if r > start && bytes + s > self.batch_size {
                    chunks.push((li, b, g.slice(start, r - start), bytes.max(1)));
                    (start, bytes) = (r, 0);
                }
                bytes += s;
            }
            chunks.push((li, b, g.slice(start, group_sizes.len() - start), bytes.max(1)));
        }
        let total: usize = chunks.iter().map(|c| c.3).sum();
        let (first_lane, first_bucket) = (chunks[0].0, chunks[0].1);
        let (entry, result) = notify.into_join_entry(&self.scope);
        let ticket = self.admit(total as u64)?;
        let first_target = by_lane[first_lane].0.shared.target.clone();
        let join = ArrowJoin::new(chunks.len(), first_bucket, first_target, entry, ticket);
        let now = self.clock.now_nanos();
        let mut used: Vec<Option<i32>> = vec![None; by_lane.len()];
        for (li, b, chunk, size) in chunks {
            by_lane[li].0.acc.append_arrow_group(b, chunk, size, join.clone(), now);
            used[li].get_or_insert(b);
        }
        if self.bucket_key.is_empty() && self.assigner == NoKeyAssigner::Sticky {
            for (lane, b) in by_lane.iter().zip(used) {
                if let Some(b) = b {
                    self.next_sticky(&lane.0, b);
                }
            }
        }
        Ok(result)
    }

    pub(crate) fn flush(&self, timeout: Option<Duration>) -> Result<()> {
        if in_callback() {
            return Err(Error::client(ClientCode::CalledFromCallback, "flush called from inside a completion callback"));
        }
        self.conn.check_usable()?;
        self.each_lane(|l| l.acc.close_all_open());
        let deadline = match timeout {
            None => Deadline::never(),
            Some(t) => Deadline::after(t, &*self.clock),
        };
        self.scope.flush(deadline).map_err(flush_error)
    }

    /// Stop accepting, flush, and wait up to `timeout` for every operation to complete; at the
    /// timeout, operations still pending complete with `WRITER_CLOSED` (exactly once) and this
    /// returns `TIMEOUT`.
    pub(crate) fn close(&self, timeout: Option<Duration>) -> Result<()> {
        if in_callback() {
            self.close_nonblocking();
            return Err(Error::client(ClientCode::CalledFromCallback, "close called from inside a completion callback; the writer stops accepting and completes pending operations in the background"));
        }
        self.closed.store(true, Ordering::Release);
        self.scope.close();
        self.each_lane(|l| l.shared.close());
        let deadline = match timeout {
            None => Deadline::never(),
            Some(t) => Deadline::after(t, &*self.clock),
        };
        match self.scope.wait_idle(deadline) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.each_lane(|l| l.shared.abort());
                Err(flush_error(e).context("close"))
            }
        }
    }

    /// Stop accepting and let pending operations complete normally, without waiting.
    pub(crate) fn close_nonblocking(&self) {
        self.closed.store(true, Ordering::Release);
        self.scope.close();
        self.each_lane(|l| l.shared.close());
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Wait (up to `timeout`) until the sender exited: every batch completed and its job was
    /// handed to the executor.
    pub(crate) fn wait_sender_exited(&self, timeout: Option<Duration>) -> bool {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut all = true;
        self.each_lane(|l| {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            all &= l.shared.wait_exited(left);
        });
        all
    }

    /// Whether every lane's sender exited.
    fn senders_exited(&self) -> bool {
        let mut all = true;
        self.each_lane(|l| all &= l.shared.has_exited());
        all
    }

    pub(crate) fn stats(&self) -> WriterStats {
        let s = self.scope.stats();
        let e = self.scope.executor().stats();
        let mut stats = WriterStats {
            pending_callbacks: s.pending,
            callbacks_run: s.callbacks_run,
            callback_errors: s.callback_errors,
            jobs_dropped: s.jobs_dropped_unrun,
            queued_jobs: e.queued_jobs,
            buffer_bytes_in_use: self.buffer.in_use(),
            ack_to_callback: e.ack_to_callback,
            open_partitions: self.lane_count() as u64,
            slow_callbacks: s.slow_callbacks,
            // The senders update their lanes' ages once per turn: with nothing pending, nothing ages.
            oldest_pending_batch_age_nanos: if s.pending == 0 { 0 } else { self.oldest_pending_batch_age() },
            ..WriterStats::default()
        };
        self.lane_config.metrics.fill(&mut stats);
        let lane_pressure = |l: &Lane| l.shared.buckets.iter().map(BucketCounters::pressure_permille).max().unwrap_or(0);
        stats.kv_pressure_permille = match &self.lanes {
            Lanes::Single(l) => lane_pressure(l),
            Lanes::Partitioned { lanes, .. } => {
                lanes.read().unwrap_or_else(|p| p.into_inner()).by_name.values().map(|l| lane_pressure(l)).max().unwrap_or(0)
            }
        };
        stats
    }

    /// `r`, with a synchronous error counted (by code) in the writer's metrics.
    #[inline]
    pub(crate) fn counted<T>(&self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            self.lane_config.metrics.rejected(e.code());
        }
        r
    }

    /// The latency histograms of [`crate::metrics::HISTOGRAMS`], in its order.
    pub(crate) fn latency_histograms(&self) -> [LatencyBucketsSnapshot; 3] {
        [
            self.scope.ack_to_callback_buckets(),
            self.lane_config.metrics.request_latency_buckets.snapshot(),
            self.scope.callback_run_buckets(),
        ]
    }

    /// Failed records, retries and rejected operations per error code.
    pub(crate) fn error_counts(&self) -> Vec<CodeCount> {
        self.lane_config.metrics.code_counts()
    }

    /// What each bucket of each open lane sent, failed and retried (buckets with nothing yet
    /// left out), by partition name and bucket.
    pub(crate) fn bucket_counts(&self) -> Vec<BucketCount> {
        let mut out = Vec::new();
        let mut add = |l: &Lane| {
            let partition = l.shared.target.partition.as_deref();
            out.extend(l.shared.buckets.iter().enumerate().filter_map(|(b, c)| c.count(partition, b as i32)));
        };
        match &self.lanes {
            Lanes::Single(l) => add(l),
            Lanes::Partitioned { lanes, .. } => lanes.read().unwrap_or_else(|p| p.into_inner()).by_name.values().for_each(|l| add(l)),
        }
        out.sort_by(|a, b| (&a.partition, a.bucket).cmp(&(&b.partition, b.bucket)));
        out
    }

    fn oldest_pending_batch_age(&self) -> u64 {
        let oldest = match &self.lanes {
            Lanes::Single(l) => l.shared.oldest_pending(),
            Lanes::Partitioned { lanes, .. } => {
                lanes.read().unwrap_or_else(|p| p.into_inner()).by_name.values().filter_map(|l| l.shared.oldest_pending()).min()
            }
        };
        oldest.map_or(0, |t| self.clock.now_nanos().saturating_sub(t))
    }

    pub(crate) fn table(&self) -> &Table {
        &self.table
    }
}

fn flush_error(e: FlushError) -> Error {
    match e {
        FlushError::CalledFromCallback => Error::client(ClientCode::CalledFromCallback, "called from inside a completion callback"),
        FlushError::Timeout => Error::client(ClientCode::Timeout, "timed out waiting for pending operations"),
        FlushError::Interrupted => interrupted_error("waiting for pending operations"),
    }
}

/// The error of a wait that the thread's interrupt check ended (`crate::interrupt`).
pub(crate) fn interrupted_error(what: &str) -> Error {
    Error::client(ClientCode::Interrupted, format!("interrupted while {what}"))
}

thread_local! {
    /// Per-thread scratch buffers for key and value encoding (no allocation per record).
    static SCRATCH: std::cell::RefCell<(Vec<u8>, Vec<u8>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    /// Per-thread scratch for partition names.
    static NAME: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// The rows `ix` of `rb`, in that order.
fn take_rows(rb: &RecordBatch, ix: Vec<u32>) -> Result<RecordBatch> {
    let indices = UInt32Array::from(ix);
    let cols =
        rb.columns().iter().map(|c| arrow_select::take::take(c.as_ref(), &indices, None)).collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(RecordBatch::try_new(rb.schema(), cols)?)
}

/// What a partition lane's sender calls once it has been idle for the timeout.
type OnIdle = Box<dyn Fn() + Send + Sync>;

/// A lane of a writer with its sender task running: the table's (`partition` None) or a
/// partition's (its name and spec), starting from `leaders` (index = bucket).
fn build_lane(
    conn: &Arc<ConnInner>,
    info: &TableInfo,
    schema: &Arc<Schema>,
    scope: &Scope,
    lc: &LaneConfig,
    partition: Option<(Arc<str>, crate::wire::proto::PbPartitionSpec, OnIdle, Option<AutoPartition>)>,
    leaders: Vec<Option<i32>>,
) -> Lane {
    let config = conn.config.clone();
    let buckets = info.bucket_count();
    let keys = KeyCodec::new(info).expect("the writer's key codec was built from the same table");
    let routing_count = info.bucket_count_epoch.map(|_| buckets);
    let acc = Arc::new(Accumulator::new(buckets as usize, schema.clone(), info.schema_id as i16, lc.kind, lc.limits.clone()));
    let (name, lane_partition) = match partition {
        None => (None, None),
        Some((name, spec, on_idle, historical)) => (
            Some(name),
            Some(LanePartition {
                spec,
                create: config.dynamic_create_partition,
                historical,
                idle_timeout: config.partition_idle_timeout.as_nanos().min(u64::MAX as u128) as u64,
                on_idle,
            }),
        ),
    };
    let target = Arc::new(JobTarget::new(Arc::new(info.path.clone()), info.table_id, lc.kind == BatchKind::Log, name));
    let shared = Arc::new(SenderShared::new(
        acc.clone(),
        conn.backend.clone(),
        scope.clone(),
        conn.buffer.clone(),
        config,
        target,
        info.path.clone(),
        info.schema_id as i16,
        lc.kind,
        lc.compression,
        lc.target_columns.clone(),
        lc.metrics.clone(),
        lane_partition,
        leaders,
        conn.clock.clone(),
        routing_count,
    ));
    conn.spawn_sender(sender::run(shared.clone()));
    Lane { acc, shared, sticky: AtomicI32::new((conn.clock.now_nanos() % buckets as u64) as i32), bucket_count: buckets, keys }
}

macro_rules! write_forms {
    ($(#[$doc:meta])* $name:ident, $cb:ident, $shared:ident, $det:ident, |$core:ident, $arg:ident: $ty:ty, $n:ident| $body:expr) => {
        $(#[$doc])*
        /// Returns a [`WriteResult`].
        pub fn $name(&self, $arg: $ty) -> Result<WriteResult> {
            let $core = &self.core;
            let $n = CompletionTarget::Result;
            $core.counted($body).map(|r| r.expect("result form"))
        }
        $(#[$doc])*
        /// `callback` runs exactly once with the outcome (see [`WriteCallback`](super::WriteCallback)).
        /// On a synchronous error it is dropped unused before this returns.
        pub fn $cb(&self, $arg: $ty, callback: impl FnOnce(&WriteCompletion) + Send + 'static) -> Result<()> {
            let $core = &self.core;
            let $n = CompletionTarget::Callback(Callback::new(callback));
            $core.counted($body).map(|_| ())
        }
        $(#[$doc])*
        /// `callback` runs once for this operation (see [`SharedCallback`]): pass the same `Arc`
        /// for many operations and consecutive records share one registration. On a synchronous
        /// error it is not called and no clone of it is kept.
        pub fn $shared(&self, $arg: $ty, callback: &SharedCallback) -> Result<()> {
            let $core = &self.core;
            let $n = CompletionTarget::Shared(callback);
            $core.counted($body).map(|_| ())
        }
        $(#[$doc])*
        /// No notification; `flush` still waits for it.
        pub fn $det(&self, $arg: $ty) -> Result<()> {
            let $core = &self.core;
            let $n = CompletionTarget::Detached;
            $core.counted($body).map(|_| ())
        }
    };
}

macro_rules! writer_common {
    () => {
        /// Wait until every operation accepted before this call has completed and its callback
        /// has returned. Operations submitted meanwhile do not extend it. Fails at once with
        /// `CALLED_FROM_CALLBACK` inside a callback; `TIMEOUT` when `timeout` passes.
        pub fn flush(&self, timeout: Option<Duration>) -> Result<()> {
            self.core.flush(timeout)
        }

        /// Stop accepting (later calls fail with `WRITER_CLOSED`), flush, and wait up to
        /// `timeout` (`None`: no bound). At the timeout, operations still pending complete with
        /// `WRITER_CLOSED`, exactly once, and this returns `TIMEOUT`.
        pub fn close(&self, timeout: Option<Duration>) -> Result<()> {
            self.core.close(timeout)
        }

        /// Whether `close` was called.
        pub fn is_closed(&self) -> bool {
            self.core.is_closed()
        }

        /// Counters, gauges and latency percentiles ([`crate::metrics::METRICS`] describes each).
        pub fn stats(&self) -> WriterStats {
            self.core.stats()
        }

        /// Counts a write call that a binding refused with `code` before it reached the writer
        /// (the binding could not convert the language's values), as the writer counts its own
        /// refusals (`operations_rejected`, `error_counts`).
        pub fn record_rejected(&self, code: i32) {
            self.core.lane_config.metrics.rejected(code);
        }

        /// Records that failed for good, attempts that were retried and write calls that were
        /// refused, per error code (codes that never occurred are left out).
        pub fn error_counts(&self) -> Vec<CodeCount> {
            self.core.error_counts()
        }

        /// What each bucket (of each open partition) sent, failed and retried, ordered by
        /// partition and bucket; buckets with nothing yet are left out.
        pub fn bucket_counts(&self) -> Vec<BucketCount> {
            self.core.bucket_counts()
        }

        /// The table written to.
        pub fn table(&self) -> &Table {
            self.core.table()
        }
    };
}

/// Appends rows and Arrow batches to a log table. Safe to share between threads.
///
/// Dropping it closes it: outside a callback, the drop waits (at most
/// `client.writer.delivery-timeout`) for pending operations; inside a callback it only stops
/// accepting and lets them complete in the background.
pub struct AppendWriter {
    core: Arc<WriterCore>,
}

impl AppendWriter {
    pub(crate) fn new(core: Arc<WriterCore>) -> AppendWriter {
        AppendWriter { core }
    }

    write_forms!(
        /// Append one row (values in schema order).
        append, append_with_callback, append_with_shared_callback, append_detached, |core, row: &[Value], n| core.append_row(row, n)
    );
    write_forms!(
        /// Append an Arrow batch whose rows may span several buckets. It is checked and admitted
        /// as a whole: a synchronous error means nothing was accepted. Once accepted, one
        /// completion reports every bucket (`bucket_results`).
        write_arrow_batch, write_arrow_batch_with_callback, write_arrow_batch_with_shared_callback, write_arrow_batch_detached, |core, batch: &RecordBatch, n| core.write_arrow(batch, n)
    );
    writer_common!();
}

/// Upserts, deletes and partially updates rows of a primary-key table. Safe to share between
/// threads. Dropping it closes it (see [`AppendWriter`]).
pub struct UpsertWriter {
    core: Arc<WriterCore>,
}

impl UpsertWriter {
    pub(crate) fn new(core: Arc<WriterCore>) -> UpsertWriter {
        UpsertWriter { core }
    }

    write_forms!(
        /// Insert or update one row (values in schema order). For a partial-update writer only the
        /// target columns (and the key) are written; other values are ignored.
        upsert, upsert_with_callback, upsert_with_shared_callback, upsert_detached, |core, row: &[Value], n| core.write_kv(row, false, n)
    );
    write_forms!(
        /// Delete by primary key (`key`: the key values in primary-key order). For a
        /// partial-update writer this is a partial delete of the target columns.
        delete, delete_with_callback, delete_with_shared_callback, delete_detached, |core, key: &[Value], n| core.write_kv(&core.key_row(key)?, true, n)
    );
    writer_common!();
}

fn drop_writer(core: &WriterCore) {
    if core.is_closed() && core.senders_exited() {
        return;
    }
    if in_callback() {
        core.close_nonblocking();
    } else {
        let _ = core.close(Some(core.conn.config.delivery_timeout + Duration::from_secs(1)));
    }
}

impl Drop for AppendWriter {
    fn drop(&mut self) {
        drop_writer(&self.core);
    }
}

impl Drop for UpsertWriter {
    fn drop(&mut self) {
        drop_writer(&self.core);
    }
}

const _: () = {
    fn assert_send_sync<T: Send + Sync>() {}
    fn check() {
        assert_send_sync::<AppendWriter>();
        assert_send_sync::<UpsertWriter>();
        assert_send_sync::<WriteResult>();
        assert_send_sync::<WriteCompletion>();
    }
    let _ = check;
};

impl Reports for WriterCore {
    fn report(&self) -> Option<Report> {
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        Some(Report {
            client_id: self.conn.config.client_id.clone(),
            table: self.table.path().to_string(),
            stats: self.stats(),
            codes: self.error_counts(),
            buckets: self.bucket_counts(),
            histograms: self.latency_histograms(),
        })
    }
}
