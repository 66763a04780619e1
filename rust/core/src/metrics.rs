//! Writer metrics: what they are, how they are kept, and how they leave the process.
//!
//! Every metric is updated per batch or per request by the sender task and the dispatcher, never
//! per record on the appending thread: atomics and fixed-size histograms, no lock and no
//! allocation. [`METRICS`] is the one table of names, kinds, units and help texts; the Rust
//! [`WriterStats`], the Python dict and Prometheus collector, and the C++
//! struct and JSON all follow it. [`HISTOGRAMS`] are the latencies exported as histograms with
//! one fixed bucket layout ([`LATENCY_BUCKET_BOUNDS_NANOS`]), so that they add up across writers
//! and processes. [`snapshot`] reads every live writer of the process, and [`to_json`] /
//! [`to_prometheus`] render such a snapshot.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, Weak};

use fluss_writer_dispatch::{Histogram, LatencyBuckets};
pub use fluss_writer_dispatch::{LatencyBucketsSnapshot, LATENCY_BUCKET_BOUNDS_NANOS};

use crate::error::{ClientCode, FlussCode};
use crate::write::WriterStats;

/// How a metric behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetricKind {
    /// Only ever grows (Prometheus `counter`, name ends in `_total`).
    Counter,
    /// A current value (Prometheus `gauge`).
    Gauge,
    /// A percentile or maximum of a latency, in [`WriterStats`] and the JSON only: quantiles do
    /// not add up across writers, so the exporters carry the histogram named by
    /// [`MetricDef::prometheus`] (one of [`HISTOGRAMS`]) instead.
    Quantile,
}

/// One metric of [`WriterStats`]: its field name there (and in the Python dict, the C++ struct and
/// the JSON), its Prometheus name (without the `fluss_writer_` prefix), kind, unit and meaning.
#[derive(Clone, Copy, Debug)]
pub struct MetricDef {
    /// The field of [`WriterStats::fields`].
    pub field: &'static str,
    /// The Prometheus name after `fluss_writer_` (for a [`MetricKind::Quantile`], the
    /// histogram that is exported in its place).
    pub prometheus: &'static str,
    /// Counter, gauge or quantile.
    pub kind: MetricKind,
    /// `records`, `bytes`, `batches`, `requests`, `callbacks`, `jobs`, `nanoseconds`, `partitions`,
    /// `operations`, `sends`, `permille`.
    pub unit: &'static str,
    /// One line for humans.
    pub help: &'static str,
}

macro_rules! defs {
    ($($field:literal, $prom:literal, $kind:ident, $unit:literal, $help:literal;)*) => {
        /// Every field of [`WriterStats::fields`], in that order.
        pub const METRICS: &[MetricDef] = &[$(MetricDef { field: $field, prometheus: $prom, kind: MetricKind::$kind, unit: $unit, help: $help }),*];
    };
}

defs! {
    "pending_callbacks", "pending_callbacks", Gauge, "callbacks", "Operations accepted whose callback has not returned yet.";
    "callbacks_run", "callbacks_total", Counter, "callbacks", "Callbacks that ran.";
    "callback_errors", "callback_errors_total", Counter, "callbacks", "Callbacks that raised or panicked, and jobs a user executor dropped.";
    "jobs_dropped", "jobs_dropped_total", Counter, "jobs", "Completed batches a user executor dropped without running their callbacks.";
    "queued_jobs", "queued_jobs", Gauge, "jobs", "Completed batches waiting for the callback executor.";
    "buffer_bytes_in_use", "buffer_bytes_in_use", Gauge, "bytes", "Buffer memory held by unsent or unacknowledged batches (per connection).";
    "ack_to_callback_count", "ack_to_callback_jobs_total", Counter, "jobs", "Batches whose callbacks started after acknowledgement.";
    "ack_to_callback_p50_nanos", "ack_to_callback_seconds", Quantile, "nanoseconds", "Median time from a batch's acknowledgement to the start of its callbacks.";
    "ack_to_callback_p99_nanos", "ack_to_callback_seconds", Quantile, "nanoseconds", "99th percentile of the time from acknowledgement to callbacks.";
    "ack_to_callback_max_nanos", "ack_to_callback_seconds", Quantile, "nanoseconds", "Longest time from acknowledgement to callbacks.";
    "open_partitions", "open_partitions", Gauge, "partitions", "Partitions with batches and a sender task (1 for a table without partitions).";
    "records_sent", "records_sent_total", Counter, "records", "Records the server acknowledged.";
    "bytes_sent", "bytes_sent_total", Counter, "bytes", "Encoded bytes of acknowledged batches.";
    "batches_sent", "batches_sent_total", Counter, "batches", "Batches the server acknowledged.";
    "records_failed", "records_failed_total", Counter, "records", "Records whose batch failed for good (their callbacks carry the error).";
    "operations_rejected", "operations_rejected_total", Counter, "operations", "Write calls refused synchronously (nothing accepted; the caller got the error).";
    "requests_sent", "requests_sent_total", Counter, "requests", "Produce requests sent, retries included.";
    "retries", "retries_total", Counter, "batches", "Batch attempts that failed with a retriable error and were tried again.";
    "kv_throttled_sends", "kv_throttled_sends_total", Counter, "sends", "Times a bucket of a primary-key table held its next send back because the server reported storage pressure (PutKv v2).";
    "kv_throttle_nanos", "kv_throttle_nanoseconds_total", Counter, "nanoseconds", "Total time buckets held sends back for server storage pressure.";
    "kv_pressure_permille", "kv_pressure_permille", Gauge, "permille", "Highest storage pressure the server reported in its latest answer for any bucket of this writer, in thousandths (1000: STORAGE_BACKPRESSURE).";
    "slow_callbacks", "slow_callbacks_total", Counter, "callbacks", "Callbacks that ran at least client.writer.slow-callback-threshold.";
    "oldest_pending_batch_age_nanos", "oldest_pending_batch_age_nanoseconds", Gauge, "nanoseconds", "Age of the oldest batch not yet completed (0: none).";
    "request_latency_count", "requests_answered_total", Counter, "requests", "Produce requests answered (or failed).";
    "request_latency_p50_nanos", "request_latency_seconds", Quantile, "nanoseconds", "Median produce request latency, send to answer.";
    "request_latency_p99_nanos", "request_latency_seconds", Quantile, "nanoseconds", "99th percentile of produce request latency.";
    "request_latency_max_nanos", "request_latency_seconds", Quantile, "nanoseconds", "Longest produce request latency.";
    "batch_records_p50", "batch_records_p50", Gauge, "records", "Median records per acknowledged batch.";
    "batch_records_p99", "batch_records_p99", Gauge, "records", "99th percentile of records per acknowledged batch.";
    "batch_bytes_p50", "batch_bytes_p50", Gauge, "bytes", "Median encoded bytes per acknowledged batch.";
    "batch_bytes_p99", "batch_bytes_p99", Gauge, "bytes", "99th percentile of encoded bytes per acknowledged batch.";
}

/// The latencies exported as histograms, in the order of [`WriterReport::histograms`]: (name
/// (the JSON key, and the Prometheus name after `fluss_writer_`), help). Buckets:
/// [`LATENCY_BUCKET_BOUNDS_NANOS`], in seconds in every rendering.
pub const HISTOGRAMS: [(&str, &str); 3] = [
    ("ack_to_callback_seconds", "Time from a batch's acknowledgement to the start of its callbacks (this writer's batches)."),
    ("request_latency_seconds", "Produce request latency, send to answer (or failure)."),
    (
        "callback_run_seconds",
        "How long each callback ran, in whole ticks of the slow-callback check's coarse clock (most short callbacks read 0).",
    ),
];

/// The bucket bounds in seconds (what `le` and the JSON's `bounds` say).
pub fn latency_bounds_seconds() -> [f64; LATENCY_BUCKET_BOUNDS_NANOS.len()] {
    LATENCY_BUCKET_BOUNDS_NANOS.map(seconds)
}

/// The `le` label of each bound, as every exporter of this library writes it (the shortest
/// decimal, no exponent: `0.00001` ... `60`): series of different processes and bindings must
/// spell a bound alike to be summed by `le` (Prometheus before 3.0 compares the text).
pub fn latency_bucket_le() -> [String; LATENCY_BUCKET_BOUNDS_NANOS.len()] {
    latency_bounds_seconds().map(|b| b.to_string())
}

fn seconds(nanos: u64) -> f64 {
    nanos as f64 / 1e9
}

/// Error codes get a counter slot each: server codes -1..=62, client codes -1001..=-1031, one
/// slot for anything else (counted as `UNKNOWN_SERVER_ERROR`'s).
const CODE_SLOTS: usize = 64 + 31;

fn code_slot(code: i32) -> usize {
    match code {
        -1..=62 => (code + 1) as usize,
        -1031..=-1001 => (64 - 1001 - code) as usize,
        _ => 0,
    }
}

fn slot_code(slot: usize) -> i32 {
    if slot < 64 {
        slot as i32 - 1
    } else {
        -1001 - (slot as i32 - 64)
    }
}

/// The name of a server or client code.
pub fn code_name(code: i32) -> &'static str {
    ClientCode::from_code(code).map_or_else(|| FlussCode::name(code), |c| c.name())
}

/// Counts per error code in fixed memory.
pub(crate) struct CodeCounts([AtomicU64; CODE_SLOTS]);

impl CodeCounts {
    fn new() -> Self {
        CodeCounts(std::array::from_fn(|_| AtomicU64::new(0)))
    }

    pub(crate) fn add(&self, code: i32, n: u64) {
        self.0[code_slot(code)].fetch_add(n, Relaxed);
    }

    fn nonzero(&self) -> impl Iterator<Item = (i32, u64)> + '_ {
        self.0.iter().enumerate().map(|(i, c)| (slot_code(i), c.load(Relaxed))).filter(|(_, n)| *n > 0)
    }
}

/// The counters of one writer (shared by its lanes' sender tasks).
pub(crate) struct WriterMetrics {
    pub records_sent: AtomicU64,
    pub bytes_sent: AtomicU64,
    pub batches_sent: AtomicU64,
    pub records_failed: AtomicU64,
    pub requests_sent: AtomicU64,
    pub retries: AtomicU64,
    pub request_latency: Histogram,
    /// The same samples as `request_latency`, in the exported bucket layout.
    pub request_latency_buckets: LatencyBuckets,
    pub batch_records: Histogram,
    pub batch_bytes: Histogram,
    /// Records that failed for good, by the code of their batch's error.
    pub failed_by_code: CodeCounts,
    /// Retried attempts, by the code of the error that caused the retry.
    pub retried_by_code: CodeCounts,
    pub operations_rejected: AtomicU64,
    /// Write calls refused synchronously, by code.
    pub rejected_by_code: CodeCounts,
    /// Times a bucket held sends back for server back-pressure, and for how long in total.
    pub kv_throttled_sends: AtomicU64,
    pub kv_throttle_nanos: AtomicU64,
}

impl WriterMetrics {
    pub(crate) fn new() -> Self {
        WriterMetrics {
            records_sent: AtomicU64::new(0),
            bytes_sent: AtomicU64::new(0),
            batches_sent: AtomicU64::new(0),
            records_failed: AtomicU64::new(0),
            requests_sent: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            request_latency: Histogram::new(),
            request_latency_buckets: LatencyBuckets::new(),
            batch_records: Histogram::new(),
            batch_bytes: Histogram::new(),
            failed_by_code: CodeCounts::new(),
            retried_by_code: CodeCounts::new(),
            operations_rejected: AtomicU64::new(0),
            rejected_by_code: CodeCounts::new(),
            kv_throttled_sends: AtomicU64::new(0),
            kv_throttle_nanos: AtomicU64::new(0),
        }
    }

    /// A produce request was answered (or failed) `nanos` after it was sent.
    pub(crate) fn request_done(&self, nanos: u64) {
        self.request_latency.record(nanos);
        self.request_latency_buckets.record(nanos);
    }

    /// A batch of `records` records and `bytes` encoded bytes completed: acknowledged, or failed
    /// for good with `error_code`.
    pub(crate) fn batch_done(&self, records: u64, bytes: u64, error_code: Option<i32>) {
        match error_code {
            None => {
                self.records_sent.fetch_add(records, Relaxed);
                self.bytes_sent.fetch_add(bytes, Relaxed);
                self.batches_sent.fetch_add(1, Relaxed);
                self.batch_records.record(records);
                self.batch_bytes.record(bytes);
            }
            Some(code) => {
                self.records_failed.fetch_add(records, Relaxed);
                self.failed_by_code.add(code, records);
            }
        }
    }

    /// An attempt failed with `code` and will be retried.
    pub(crate) fn retried(&self, code: i32) {
        self.retries.fetch_add(1, Relaxed);
        self.retried_by_code.add(code, 1);
    }

    /// A bucket held its sends back for `nanos` because the server reported storage pressure.
    pub(crate) fn throttled(&self, nanos: u64) {
        self.kv_throttled_sends.fetch_add(1, Relaxed);
        self.kv_throttle_nanos.fetch_add(nanos, Relaxed);
    }

    /// A write call was refused with `code` (cold: the caller is getting an error).
    #[cold]
    pub(crate) fn rejected(&self, code: i32) {
        self.operations_rejected.fetch_add(1, Relaxed);
        self.rejected_by_code.add(code, 1);
    }

    /// The fields of [`WriterStats`] kept here.
    pub(crate) fn fill(&self, s: &mut WriterStats) {
        s.records_sent = self.records_sent.load(Relaxed);
        s.bytes_sent = self.bytes_sent.load(Relaxed);
        s.batches_sent = self.batches_sent.load(Relaxed);
        s.records_failed = self.records_failed.load(Relaxed);
        s.operations_rejected = self.operations_rejected.load(Relaxed);
        s.requests_sent = self.requests_sent.load(Relaxed);
        s.retries = self.retries.load(Relaxed);
        s.kv_throttled_sends = self.kv_throttled_sends.load(Relaxed);
        s.kv_throttle_nanos = self.kv_throttle_nanos.load(Relaxed);
        s.request_latency = self.request_latency.snapshot();
        let (r, b) = (self.batch_records.snapshot(), self.batch_bytes.snapshot());
        (s.batch_records_p50, s.batch_records_p99, s.batch_bytes_p50, s.batch_bytes_p99) =
            (r.p50_nanos, r.p99_nanos, b.p50_nanos, b.p99_nanos);
    }

    /// Failed records, retries and rejected calls per error code, codes in numeric order.
    pub(crate) fn code_counts(&self) -> Vec<CodeCount> {
        let mut out: Vec<CodeCount> = Vec::new();
        let mut entry = |code: i32| -> usize {
            match out.iter().position(|c| c.code == code) {
                Some(i) => i,
                None => {
                    out.push(CodeCount { code, name: code_name(code), records_failed: 0, retries: 0, rejected: 0 });
                    out.len() - 1
                }
            }
        };
        let mut rows: Vec<(usize, u8, u64)> = Vec::new();
        for (code, n) in self.failed_by_code.nonzero() {
            rows.push((entry(code), 0, n));
        }
        for (code, n) in self.retried_by_code.nonzero() {
            rows.push((entry(code), 1, n));
        }
        for (code, n) in self.rejected_by_code.nonzero() {
            rows.push((entry(code), 2, n));
        }
        for (i, which, n) in rows {
            let c = &mut out[i];
            match which {
                0 => c.records_failed = n,
                1 => c.retries = n,
                _ => c.rejected = n,
            }
        }
        out.sort_by_key(|c| c.code);
        out
    }
}

/// The counters of one bucket of one lane (a table, or one partition), updated per batch by
/// the lane's sender.
#[derive(Default)]
pub(crate) struct BucketCounters {
    records_sent: AtomicU64,
    bytes_sent: AtomicU64,
    batches_sent: AtomicU64,
    records_failed: AtomicU64,
    retries: AtomicU64,
    /// The storage pressure of the server's latest answer for the bucket, in thousandths.
    pressure_permille: AtomicU64,
}

impl BucketCounters {
    /// A batch of this bucket completed (see [`WriterMetrics::batch_done`]).
    pub(crate) fn batch_done(&self, records: u64, bytes: u64, failed: bool) {
        if failed {
            self.records_failed.fetch_add(records, Relaxed);
        } else {
            self.records_sent.fetch_add(records, Relaxed);
            self.bytes_sent.fetch_add(bytes, Relaxed);
            self.batches_sent.fetch_add(1, Relaxed);
        }
    }

    /// An attempt of a batch of this bucket will be retried.
    pub(crate) fn retried(&self) {
        self.retries.fetch_add(1, Relaxed);
    }

    /// The server's latest storage pressure for the bucket (0..1).
    pub(crate) fn set_pressure(&self, pressure: f32) {
        self.pressure_permille.store((f64::from(pressure.clamp(0.0, 1.0)) * 1000.0).round() as u64, Relaxed);
    }

    /// The server's latest storage pressure for the bucket, in thousandths.
    pub(crate) fn pressure_permille(&self) -> u64 {
        self.pressure_permille.load(Relaxed)
    }

    /// The counts, if any is not zero.
    pub(crate) fn count(&self, partition: Option<&str>, bucket: i32) -> Option<BucketCount> {
        let c = BucketCount {
            partition: partition.map(str::to_string),
            bucket,
            records_sent: self.records_sent.load(Relaxed),
            bytes_sent: self.bytes_sent.load(Relaxed),
            batches_sent: self.batches_sent.load(Relaxed),
            records_failed: self.records_failed.load(Relaxed),
            retries: self.retries.load(Relaxed),
        };
        (c.records_sent | c.records_failed | c.retries > 0).then_some(c)
    }
}

/// What one bucket of a writer's table (or of one of its partitions) sent, failed and retried:
/// to see skew between buckets and a bucket whose leader keeps failing. Kept while the
/// partition's lane is open (a partition idle for `client.writer.partition-idle-timeout` starts
/// again from zero).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BucketCount {
    /// The partition's name (`None`: a table without partitions).
    pub partition: Option<String>,
    /// The bucket.
    pub bucket: i32,
    /// Records the server acknowledged.
    pub records_sent: u64,
    /// Encoded bytes of acknowledged batches.
    pub bytes_sent: u64,
    /// Batches the server acknowledged.
    pub batches_sent: u64,
    /// Records whose batch failed for good.
    pub records_failed: u64,
    /// Batch attempts that failed with a retriable error and were tried again.
    pub retries: u64,
}

/// The per-bucket counters, in the order of [`BucketCount`]'s fields: (field, Prometheus name
/// after `fluss_writer_bucket_`, help).
pub const BUCKET_METRICS: [(&str, &str, &str); 5] = [
    ("records_sent", "records_sent_total", "Records the server acknowledged, per bucket."),
    ("bytes_sent", "bytes_sent_total", "Encoded bytes of acknowledged batches, per bucket."),
    ("batches_sent", "batches_sent_total", "Batches the server acknowledged, per bucket."),
    ("records_failed", "records_failed_total", "Records whose batch failed for good, per bucket."),
    ("retries", "retries_total", "Retried batch attempts, per bucket."),
];

impl BucketCount {
    /// The counters, named and ordered as [`BUCKET_METRICS`].
    pub fn fields(&self) -> [(&'static str, u64); 5] {
        let values = [self.records_sent, self.bytes_sent, self.batches_sent, self.records_failed, self.retries];
        std::array::from_fn(|i| (BUCKET_METRICS[i].0, values[i]))
    }
}

/// How often one error code ended batches or caused retries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeCount {
    /// The server or client code.
    pub code: i32,
    /// Its upper-snake name.
    pub name: &'static str,
    /// Records whose batch failed for good with this code.
    pub records_failed: u64,
    /// Attempts that failed with this code and were retried.
    pub retries: u64,
    /// Write calls refused synchronously with this code.
    pub rejected: u64,
}

/// One live writer in a [`snapshot`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct WriterReport {
    /// The connection's `client.id`.
    pub client_id: String,
    /// `database.table`.
    pub table: String,
    /// A number that tells writers of the same table apart (process-wide, in creation order).
    pub writer: u64,
    /// The writer's metrics.
    pub stats: WriterStats,
    /// Its failures and retries per error code.
    pub codes: Vec<CodeCount>,
    /// What each bucket sent, failed and retried (buckets with nothing yet are left out).
    pub buckets: Vec<BucketCount>,
    /// The latency histograms, in the order of [`HISTOGRAMS`].
    pub histograms: [LatencyBucketsSnapshot; HISTOGRAMS.len()],
}

/// What a live writer tells the registry (its number is added there).
pub(crate) struct Report {
    pub client_id: String,
    pub table: String,
    pub stats: WriterStats,
    pub codes: Vec<CodeCount>,
    pub buckets: Vec<BucketCount>,
    pub histograms: [LatencyBucketsSnapshot; HISTOGRAMS.len()],
}

/// What the registry needs of a live writer: its labels and numbers, `None` once it is closed.
pub(crate) trait Reports: Send + Sync {
    fn report(&self) -> Option<Report>;
}

struct Registered {
    id: u64,
    writer: Weak<dyn Reports>,
}

static REGISTRY: Mutex<Vec<Registered>> = Mutex::new(Vec::new());
static NEXT_WRITER: AtomicU64 = AtomicU64::new(1);

/// Adds a writer to the process's registry (it leaves when dropped); returns its number.
pub(crate) fn register(w: Weak<dyn Reports>) -> u64 {
    let id = NEXT_WRITER.fetch_add(1, Relaxed);
    let mut r = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    r.retain(|x| x.writer.strong_count() > 0);
    r.push(Registered { id, writer: w });
    id
}

/// Every open writer of the process, in creation order (a closed writer leaves, so that its
/// series end).
pub fn snapshot() -> Vec<WriterReport> {
    let live: Vec<(u64, Arc<dyn Reports>)> = {
        let mut r = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        r.retain(|x| x.writer.strong_count() > 0);
        r.iter().filter_map(|x| x.writer.upgrade().map(|w| (x.id, w))).collect()
    };
    live.into_iter()
        .filter_map(|(writer, w)| {
            let Report { client_id, table, stats, codes, buckets, histograms } = w.report()?;
            Some(WriterReport { client_id, table, writer, stats, codes, buckets, histograms })
        })
        .collect()
}

fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A snapshot as JSON: `{"writers": [{"client_id", "table", "writer", "stats": {field: n},
/// "errors": [{"code", "name", "records_failed", "retries", "rejected"}],
/// "buckets": [{"partition": name or null, "bucket", "records_sent", ...}],
/// "histograms": {name: {"bounds": [seconds], "counts": [cumulative], "sum": seconds,
/// "count": n}}}]}`, the histograms named and ordered as [`HISTOGRAMS`].
pub fn to_json(reports: &[WriterReport]) -> String {
    let mut out = String::from("{\"writers\":[");
    for (i, r) in reports.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"client_id\":");
        json_str(&mut out, &r.client_id);
        out.push_str(",\"table\":");
        json_str(&mut out, &r.table);
        let _ = write!(out, ",\"writer\":{},\"stats\":{{", r.writer);
        for (j, (name, v)) in r.stats.fields().iter().enumerate() {
            let _ = write!(out, "{}\"{name}\":{v}", if j > 0 { "," } else { "" });
        }
        out.push_str("},\"errors\":[");
        for (j, c) in r.codes.iter().enumerate() {
            let _ = write!(
                out,
                "{}{{\"code\":{},\"name\":\"{}\",\"records_failed\":{},\"retries\":{},\"rejected\":{}}}",
                if j > 0 { "," } else { "" },
                c.code,
                c.name,
                c.records_failed,
                c.retries,
                c.rejected
            );
        }
        out.push_str("],\"buckets\":[");
        for (j, b) in r.buckets.iter().enumerate() {
            out.push_str(if j > 0 { ",{\"partition\":" } else { "{\"partition\":" });
            match &b.partition {
                Some(p) => json_str(&mut out, p),
                None => out.push_str("null"),
            }
            let _ = write!(out, ",\"bucket\":{}", b.bucket);
            for (name, v) in b.fields() {
                let _ = write!(out, ",\"{name}\":{v}");
            }
            out.push('}');
        }
        out.push_str("],\"histograms\":{");
        for (j, ((name, _), h)) in HISTOGRAMS.iter().zip(&r.histograms).enumerate() {
            let _ = write!(out, "{}\"{name}\":{{\"bounds\":[", if j > 0 { "," } else { "" });
            for (k, b) in latency_bounds_seconds().iter().enumerate() {
                let _ = write!(out, "{}{b}", if k > 0 { "," } else { "" });
            }
            out.push_str("],\"counts\":[");
            for (k, c) in h.buckets.iter().enumerate() {
                let _ = write!(out, "{}{c}", if k > 0 { "," } else { "" });
            }
            let _ = write!(out, "],\"sum\":{},\"count\":{}}}", seconds(h.sum_nanos), h.count);
        }
        out.push_str("}}");
    }
    out.push_str("]}");
    out
}

fn prom_label(out: &mut String, s: &str) {
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// A snapshot in the Prometheus text exposition format (version 0.0.4), every metric prefixed
/// `fluss_writer_` and labelled `client_id`, `table`, `writer`; per-code counts as
/// `fluss_writer_records_failed_by_code_total` and `fluss_writer_retries_by_code_total` with a
/// `code` label (the code's name); per-bucket counts as `fluss_writer_bucket_*` (see
/// [`BUCKET_METRICS`]) with the labels `partition` (empty for a table without partitions) and
/// `bucket` added; the latencies of [`HISTOGRAMS`] as histograms (`_bucket` with `le` in seconds,
/// cumulative, up to `+Inf`; `_sum` in seconds; `_count`). [`MetricKind::Quantile`] fields are
/// left out (their histogram stands for them).
pub fn to_prometheus(reports: &[WriterReport]) -> String {
    let mut out = String::new();
    let labels = |out: &mut String, r: &WriterReport| {
        out.push_str("client_id=\"");
        prom_label(out, &r.client_id);
        out.push_str("\",table=\"");
        prom_label(out, &r.table);
        let _ = write!(out, "\",writer=\"{}\"", r.writer);
    };
    let fields: Vec<Vec<(&'static str, u64)>> = reports.iter().map(|r| r.stats.fields().to_vec()).collect();
    for (i, def) in METRICS.iter().enumerate() {
        let kind = match def.kind {
            MetricKind::Counter => "counter",
            MetricKind::Gauge => "gauge",
            MetricKind::Quantile => continue,
        };
        let _ = writeln!(out, "# HELP fluss_writer_{} {} ({})", def.prometheus, def.help, def.unit);
        let _ = writeln!(out, "# TYPE fluss_writer_{} {kind}", def.prometheus);
        for (r, f) in reports.iter().zip(&fields) {
            let _ = write!(out, "fluss_writer_{}{{", def.prometheus);
            labels(&mut out, r);
            let _ = writeln!(out, "}} {}", f[i].1);
        }
    }
    for (name, help, pick) in [
        (
            "records_failed_by_code_total",
            "Records whose batch failed for good, by error code.",
            (|c: &CodeCount| c.records_failed) as fn(&CodeCount) -> u64,
        ),
        ("retries_by_code_total", "Retried attempts, by the error code that caused them.", |c: &CodeCount| c.retries),
        ("rejected_by_code_total", "Write calls refused synchronously, by error code.", |c: &CodeCount| c.rejected),
    ] {
        let _ = writeln!(out, "# HELP fluss_writer_{name} {help}");
        let _ = writeln!(out, "# TYPE fluss_writer_{name} counter");
        for r in reports {
            for c in r.codes.iter().filter(|c| pick(c) > 0) {
                let _ = write!(out, "fluss_writer_{name}{{");
                labels(&mut out, r);
                let _ = writeln!(out, ",code=\"{}\"}} {}", c.name, pick(c));
            }
        }
    }
    let bounds = latency_bucket_le();
    for (i, (name, help)) in HISTOGRAMS.iter().enumerate() {
        let _ = writeln!(out, "# HELP fluss_writer_{name} {help}");
        let _ = writeln!(out, "# TYPE fluss_writer_{name} histogram");
        for r in reports {
            let h = &r.histograms[i];
            for (b, c) in bounds.iter().zip(h.buckets) {
                let _ = write!(out, "fluss_writer_{name}_bucket{{");
                labels(&mut out, r);
                let _ = writeln!(out, ",le=\"{b}\"}} {c}");
            }
            let _ = write!(out, "fluss_writer_{name}_bucket{{");
            labels(&mut out, r);
            let _ = writeln!(out, ",le=\"+Inf\"}} {}", h.count);
            let _ = write!(out, "fluss_writer_{name}_sum{{");
            labels(&mut out, r);
            let _ = writeln!(out, "}} {}", seconds(h.sum_nanos));
            let _ = write!(out, "fluss_writer_{name}_count{{");
            labels(&mut out, r);
            let _ = writeln!(out, "}} {}", h.count);
        }
    }
    for (i, (_, name, help)) in BUCKET_METRICS.iter().enumerate() {
        let _ = writeln!(out, "# HELP fluss_writer_bucket_{name} {help}");
        let _ = writeln!(out, "# TYPE fluss_writer_bucket_{name} counter");
        for r in reports {
            for b in &r.buckets {
                let _ = write!(out, "fluss_writer_bucket_{name}{{");
                labels(&mut out, r);
                out.push_str(",partition=\"");
                prom_label(&mut out, b.partition.as_deref().unwrap_or(""));
                let _ = writeln!(out, "\",bucket=\"{}\"}} {}", b.bucket, b.fields()[i].1);
            }
        }
    }
    out
}

/// Every open writer's metrics to the recorder of the [`metrics`](::metrics) crate (feature
/// `metrics-exporter`): counters with `absolute`, gauges with `set`, under the Prometheus names
/// (`fluss_writer_` + [`MetricDef::prometheus`]) with the labels `client_id`, `table`, `writer`
/// (and `code` for the per-code counters). Call it before each scrape or on an interval; the
/// values are read when called, not pushed on the hot path.
///
/// The [`HISTOGRAMS`] arrive as the series of a Prometheus histogram, not as `metrics`
/// histograms (those take samples one by one, and this reads totals): a counter
/// `fluss_writer_<name>_bucket` per bound with an `le` label (cumulative, seconds, `+Inf`
/// last), a counter `_count`, and a gauge `_sum` in seconds (the crate's counters are
/// integers). `histogram_quantile` and `rate` work on them as on any histogram.
/// [`MetricKind::Quantile`] fields are left out.
#[cfg(feature = "metrics-exporter")]
pub fn publish() {
    static DESCRIBED: std::sync::Once = std::sync::Once::new();
    DESCRIBED.call_once(|| {
        for d in METRICS {
            let name = format!("fluss_writer_{}", d.prometheus);
            match d.kind {
                MetricKind::Counter => ::metrics::describe_counter!(name, d.help),
                MetricKind::Gauge => ::metrics::describe_gauge!(name, d.help),
                MetricKind::Quantile => {}
            }
        }
        for (name, help) in HISTOGRAMS {
            ::metrics::describe_counter!(format!("fluss_writer_{name}_bucket"), help);
            ::metrics::describe_counter!(format!("fluss_writer_{name}_count"), help);
            ::metrics::describe_gauge!(format!("fluss_writer_{name}_sum"), help);
        }
        for (_, name, help) in BUCKET_METRICS {
            ::metrics::describe_counter!(format!("fluss_writer_bucket_{name}"), help);
        }
    });
    for r in snapshot() {
        let labels = [("client_id", r.client_id.clone()), ("table", r.table.clone()), ("writer", r.writer.to_string())];
        for (d, (_, v)) in METRICS.iter().zip(r.stats.fields()) {
            let name = format!("fluss_writer_{}", d.prometheus);
            match d.kind {
                MetricKind::Counter => ::metrics::counter!(name, &labels).absolute(v),
                MetricKind::Gauge => ::metrics::gauge!(name, &labels).set(v as f64),
                MetricKind::Quantile => {}
            }
        }
        let bounds = latency_bucket_le();
        for ((name, _), h) in HISTOGRAMS.iter().zip(&r.histograms) {
            let bucket = format!("fluss_writer_{name}_bucket");
            for (le, c) in bounds.iter().map(String::as_str).chain(["+Inf"]).zip(h.buckets.iter().chain([&h.count])) {
                let mut with_le = labels.to_vec();
                with_le.push(("le", le.to_string()));
                ::metrics::counter!(bucket.clone(), &with_le).absolute(*c);
            }
            ::metrics::counter!(format!("fluss_writer_{name}_count"), &labels).absolute(h.count);
            ::metrics::gauge!(format!("fluss_writer_{name}_sum"), &labels).set(seconds(h.sum_nanos));
        }
        for c in &r.codes {
            let mut with_code = labels.to_vec();
            with_code.push(("code", c.name.to_string()));
            if c.records_failed > 0 {
                ::metrics::counter!("fluss_writer_records_failed_by_code_total", &with_code).absolute(c.records_failed);
            }
            if c.retries > 0 {
                ::metrics::counter!("fluss_writer_retries_by_code_total", &with_code).absolute(c.retries);
            }
            if c.rejected > 0 {
                ::metrics::counter!("fluss_writer_rejected_by_code_total", &with_code).absolute(c.rejected);
            }
        }
        for b in &r.buckets {
            let mut with_bucket = labels.to_vec();
            with_bucket.push(("partition", b.partition.clone().unwrap_or_default()));
            with_bucket.push(("bucket", b.bucket.to_string()));
            for ((_, name, _), (_, v)) in BUCKET_METRICS.iter().zip(b.fields()) {
                ::metrics::counter!(format!("fluss_writer_bucket_{name}"), &with_bucket).absolute(v);
            }
        }
    }
}

/// Hands [`to_json`] of a fresh [`snapshot`] to a function at a fixed interval, on a thread of
/// its own (`fluss-writer-stats`), like librdkafka's statistics callback. Stops when dropped (or
/// [`StatisticsReporter::stop`]), after the call in progress returns.
pub struct StatisticsReporter {
    stop: Arc<(Mutex<bool>, std::sync::Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StatisticsReporter {
    /// Calls `f` with the JSON every `interval` (at least 1 ms), the first time one interval
    /// from now. A panic in `f` is logged and the reporting goes on.
    pub fn start(interval: std::time::Duration, f: impl Fn(&str) + Send + 'static) -> crate::Result<StatisticsReporter> {
        let interval = interval.max(std::time::Duration::from_millis(1));
        let stop = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("fluss-writer-stats".into())
            .spawn(move || {
                let (lock, cv) = &*flag;
                let mut stopped = lock.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    let deadline = std::time::Instant::now() + interval;
                    while !*stopped {
                        let left = deadline.saturating_duration_since(std::time::Instant::now());
                        if left.is_zero() {
                            break;
                        }
                        stopped = cv.wait_timeout(stopped, left).unwrap_or_else(|p| p.into_inner()).0;
                    }
                    if *stopped {
                        return;
                    }
                    drop(stopped);
                    let json = to_json(&snapshot());
                    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&json))).is_err() {
                        log::error!("the statistics callback panicked; reporting goes on");
                    }
                    stopped = lock.lock().unwrap_or_else(|p| p.into_inner());
                }
            })
            .map_err(|e| crate::Error::client(ClientCode::Internal, format!("cannot start the statistics thread: {e}")))?;
        Ok(StatisticsReporter { stop, thread: Some(thread) })
    }

    /// Stops reporting: returns once no call of the function is running (at once when called
    /// from inside it).
    pub fn stop(&mut self) {
        let (lock, cv) = &*self.stop;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_all();
        if let Some(t) = self.thread.take() {
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}

impl Drop for StatisticsReporter {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_every_stats_field_in_order() {
        let names: Vec<&str> = WriterStats::default().fields().iter().map(|(n, _)| *n).collect();
        let defs: Vec<&str> = METRICS.iter().map(|d| d.field).collect();
        assert_eq!(names, defs);
        for d in METRICS {
            assert_eq!(d.kind == MetricKind::Counter, d.prometheus.ends_with("_total"), "{d:?}");
            if d.kind == MetricKind::Quantile {
                assert!(HISTOGRAMS.iter().any(|(h, _)| *h == d.prometheus), "{d:?} names no histogram");
            }
        }
    }

    #[test]
    fn docs_metrics_md_describes_every_metric() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/metrics.md")).unwrap();
        for d in METRICS {
            let row = format!("| `{}` | `{}` |", d.field, d.prometheus);
            assert!(doc.contains(&row), "docs/metrics.md has no row for {d:?}");
        }
        for (field, prom, _) in BUCKET_METRICS {
            let row = format!("| `{field}` | `{prom}` |");
            assert!(doc.contains(&row), "docs/metrics.md has no row for the bucket metric {field}");
        }
        for (name, _) in HISTOGRAMS {
            assert!(doc.contains(&format!("| `{name}` |")), "docs/metrics.md has no row for the histogram {name}");
        }
        let bounds: Vec<String> = latency_bounds_seconds().iter().map(f64::to_string).collect();
        assert!(doc.contains(&bounds.join(", ")), "docs/metrics.md does not list the bucket bounds {bounds:?}");
    }

    #[test]
    fn code_slots_round_trip_and_unknown_codes_share_one() {
        for code in (-1..=62).chain(-1031..=-1001) {
            assert_eq!(slot_code(code_slot(code)), code);
            assert!(code_slot(code) < CODE_SLOTS);
        }
        assert_eq!(code_slot(999), code_slot(-1));
        assert_eq!(code_slot(-5000), code_slot(-1));
    }

    #[test]
    fn counts_by_code_merge_failures_and_retries() {
        let m = WriterMetrics::new();
        m.batch_done(10, 1000, None);
        m.batch_done(3, 100, Some(FlussCode::RECORD_TOO_LARGE));
        m.retried(FlussCode::NOT_LEADER_OR_FOLLOWER);
        m.retried(FlussCode::NOT_LEADER_OR_FOLLOWER);
        m.retried(FlussCode::RECORD_TOO_LARGE);
        let c = m.code_counts();
        assert_eq!(c.len(), 2, "{c:?}");
        let leader = c.iter().find(|x| x.code == FlussCode::NOT_LEADER_OR_FOLLOWER).unwrap();
        assert_eq!((leader.records_failed, leader.retries), (0, 2));
        let big = c.iter().find(|x| x.code == FlussCode::RECORD_TOO_LARGE).unwrap();
        assert_eq!((big.records_failed, big.retries, big.name), (3, 1, "RECORD_TOO_LARGE_EXCEPTION"));
        let mut s = WriterStats::default();
        m.fill(&mut s);
        assert_eq!((s.records_sent, s.bytes_sent, s.batches_sent, s.records_failed, s.retries), (10, 1000, 1, 3, 3));
        assert_eq!((s.batch_records_p50, s.batch_bytes_p99), (10, 1000));
    }

    #[test]
    fn the_reporter_calls_at_its_interval_until_stopped() {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let seen = calls.clone();
        let mut r =
            StatisticsReporter::start(std::time::Duration::from_millis(20), move |j| seen.lock().unwrap().push(j.to_string())).unwrap();
        // At least two calls (polled for up to 5 s: a busy machine may stall the reporter), and
        // never more than one per interval of the time it ran.
        let started = std::time::Instant::now();
        let deadline = started + std::time::Duration::from_secs(5);
        while calls.lock().unwrap().len() < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        r.stop();
        let ran = started.elapsed();
        let n = calls.lock().unwrap().len();
        let most = (ran.as_millis() / 20) as usize + 2;
        assert!((2..=most).contains(&n), "{n} calls in {ran:?} at 20 ms");
        assert!(calls.lock().unwrap().iter().all(|j| j.starts_with("{\"writers\":[")));
        std::thread::sleep(std::time::Duration::from_millis(60));
        assert_eq!(calls.lock().unwrap().len(), n, "no call after stop");
    }

    #[test]
    fn json_and_prometheus_escape_labels_and_carry_every_metric() {
        let stats = WriterStats { records_sent: 42, ..WriterStats::default() };
        let r = WriterReport {
            client_id: "a\"b\\c".into(),
            table: "db.t".into(),
            writer: 7,
            stats,
            codes: vec![CodeCount { code: 3, name: "CORRUPT_MESSAGE", records_failed: 2, retries: 0, rejected: 0 }],
            buckets: vec![BucketCount {
                partition: Some("2026-12-04\"x".into()),
                bucket: 2,
                records_sent: 40,
                bytes_sent: 400,
                batches_sent: 1,
                records_failed: 2,
                retries: 5,
            }],
            histograms: Default::default(),
        };
        let j = to_json(std::slice::from_ref(&r));
        assert!(j.contains(r#""client_id":"a\"b\\c""#), "{j}");
        assert!(j.contains(r#""records_sent":42"#), "{j}");
        assert!(j.contains(r#"{"code":3,"name":"CORRUPT_MESSAGE","records_failed":2,"retries":0,"rejected":0}"#), "{j}");
        let p = to_prometheus(&[r]);
        assert!(p.contains("fluss_writer_records_sent_total{client_id=\"a\\\"b\\\\c\",table=\"db.t\",writer=\"7\"} 42\n"), "{p}");
        assert!(p.contains(",code=\"CORRUPT_MESSAGE\"} 2\n"), "{p}");
        assert!(
            j.contains(r#""buckets":[{"partition":"2026-12-04\"x","bucket":2,"records_sent":40,"bytes_sent":400,"batches_sent":1,"records_failed":2,"retries":5}]"#),
            "{j}"
        );
        assert!(p.contains("fluss_writer_bucket_retries_total{client_id=\"a\\\"b\\\\c\",table=\"db.t\",writer=\"7\",partition=\"2026-12-04\\\"x\",bucket=\"2\"} 5\n"), "{p}");
        let quantiles = METRICS.iter().filter(|d| d.kind == MetricKind::Quantile).count();
        assert_eq!(quantiles, 6);
        assert_eq!(p.matches("# TYPE ").count(), METRICS.len() - quantiles + HISTOGRAMS.len() + 3 + BUCKET_METRICS.len());
        for gone in ["_p50_nanoseconds", "_p99_nanoseconds", "_max_nanoseconds"] {
            assert!(!p.contains(gone), "{gone} in {p}");
        }
    }

    /// A report of one writer whose request latencies were `samples` (nanoseconds).
    fn report_with_request_latencies(samples: &[u64]) -> WriterReport {
        let m = WriterMetrics::new();
        for &v in samples {
            m.request_done(v);
        }
        let mut stats = WriterStats::default();
        m.fill(&mut stats);
        WriterReport {
            client_id: "c".into(),
            table: "db.t".into(),
            writer: 3,
            stats,
            codes: vec![],
            buckets: vec![],
            histograms: [LatencyBucketsSnapshot::default(), m.request_latency_buckets.snapshot(), LatencyBucketsSnapshot::default()],
        }
    }

    #[test]
    fn latencies_render_as_prometheus_histograms_in_seconds() {
        // 5 us (below the first bound), exactly 1 ms (on a bound), 1.5 ms, 2 min (above 60 s).
        let r = report_with_request_latencies(&[5_000, 1_000_000, 1_500_000, 120_000_000_000]);
        assert_eq!(r.stats.request_latency.count, 4, "the quantiles stay in stats()");
        let p = to_prometheus(std::slice::from_ref(&r));
        let l = "client_id=\"c\",table=\"db.t\",writer=\"3\"";
        assert!(p.contains("# TYPE fluss_writer_request_latency_seconds histogram\n"), "{p}");
        for (le, n) in [("0.00001", 1), ("0.0005", 1), ("0.001", 2), ("0.0025", 3), ("10", 3), ("60", 3), ("+Inf", 4)] {
            let line = format!("fluss_writer_request_latency_seconds_bucket{{{l},le=\"{le}\"}} {n}\n");
            assert!(p.contains(&line), "{line} in {p}");
        }
        assert!(p.contains(&format!("fluss_writer_request_latency_seconds_sum{{{l}}} 120.002505\n")), "{p}");
        assert!(p.contains(&format!("fluss_writer_request_latency_seconds_count{{{l}}} 4\n")), "{p}");
        // Cumulative and monotone, ending at the count; bounds in seconds, one series per bound.
        let counts: Vec<u64> = p
            .lines()
            .filter(|x| x.starts_with("fluss_writer_request_latency_seconds_bucket{"))
            .map(|x| x.rsplit(' ').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(counts.len(), LATENCY_BUCKET_BOUNDS_NANOS.len() + 1);
        assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
        assert_eq!(counts.last(), Some(&4));
        // Writers without samples still have every series (at zero).
        assert!(p.contains(&format!("fluss_writer_callback_run_seconds_bucket{{{l},le=\"+Inf\"}} 0\n")), "{p}");
        assert!(p.contains(&format!("fluss_writer_ack_to_callback_seconds_count{{{l}}} 0\n")), "{p}");

        let j = to_json(&[r]);
        let bounds = "[0.00001,0.000025,0.00005,0.0001,0.00025,0.0005,0.001,0.0025,0.005,0.01,0.025,0.05,0.1,0.25,0.5,1,2.5,5,10,60]";
        let counts = "[1,1,1,1,1,1,2,3,3,3,3,3,3,3,3,3,3,3,3,3]";
        let want = format!(r#""request_latency_seconds":{{"bounds":{bounds},"counts":{counts},"sum":120.002505,"count":4}}"#);
        assert!(j.contains(&want), "{want} in {j}");
        assert!(j.contains(r#""histograms":{"ack_to_callback_seconds":{"bounds":["#), "{j}");
        assert!(j.ends_with(r#""sum":0,"count":0}}}]}"#), "{j}");
    }
}
