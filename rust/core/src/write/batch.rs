//! Write batches and the dispatcher jobs they become.
//!
//! A [`WriteBatch`] collects the records of one bucket together with one small [`Entry`] per
//! operation that wants to hear about it. When the batch completes, [`BatchJob`] carries the
//! whole batch to the dispatcher as **one job**; the job runs every callback in append order.
//! A multi-bucket Arrow input is split into groups, one per bucket; every group batch points to a
//! shared [`ArrowJoin`], and the last group to complete dispatches one final job that calls the
//! user's callback with the per-bucket results.

use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use bytes::Bytes;
use fluss_writer_dispatch::{JobBody, JobContext, Ticket, TicketSet};

use super::callback::Callback;
use super::completion::{BatchResults, BucketResult, ResultCell, SharedCallback, WriteCompletion, WriteResult};
use crate::error::Error;
use crate::metadata::TablePath;
use crate::wire::arrow::RowsToArrow;
use crate::wire::kv_batch::KvBatchBuilder;

/// What an operation registered on its batch.
pub enum Entry {
    /// A user callback (inline when small).
    Callback(Callback),
    /// `count` consecutive records of the batch (from the slot's index on) that passed the same
    /// [`SharedCallback`]: one slot for the whole run.
    Run { cb: SharedCallback, count: u32 },
    /// The cell behind the `WriteResult` of an Arrow operation (which spans batches).
    Result(Arc<ResultCell>),
    /// `count` consecutive records of the batch, from record `first` on, whose operations
    /// returned a `WriteResult`: one slot for the run, the batch's [`BatchResults`] for them all.
    Results { results: Arc<BatchResults>, first: u32, count: u32 },
}

/// An entry on its way to a batch: owned, a shared callback that joins the batch's last run
/// when it can (cloned only when it starts a new run), or a `WriteResult` the batch makes (from
/// its [`BatchResults`], created with the first; `Scope`: the writer's).
pub(crate) enum NewEntry<'a> {
    Owned(Entry),
    Shared(&'a SharedCallback),
    Result(&'a fluss_writer_dispatch::Scope),
}

impl Entry {
    /// Complete the operation(s) of this entry with `c` (a run: each of its records, with `c`
    /// as is; batches set per-record offsets themselves, see [`BatchJob`]).
    fn complete(self, c: &WriteCompletion, ctx: &mut JobContext<'_>) {
        match self {
            Entry::Callback(cb) => ctx.invoke(|| cb.call(c), &|| c.describe()),
            Entry::Run { cb, count } => {
                for _ in 0..count {
                    ctx.invoke(|| cb(c), &|| c.describe());
                }
            }
            Entry::Result(cell) => cell.complete(c, ctx),
            // Outside a batch's job (which passes the offsets itself): no per-record offsets.
            Entry::Results { results, first, count } => results.complete_run(c, -1, first, count, ctx),
        }
    }
}

/// Bytes a batch holds per pending operation that registered a callback or a result, beyond the
/// user's callable itself (which lives in its own heap box, sized by its captures). Slot and
/// flush accounting add no per-operation storage: a batch counts its tickets.
pub const PENDING_ENTRY_BYTES: usize = std::mem::size_of::<EntrySlot>();

/// An entry together with the index of its record in the batch.
pub struct EntrySlot {
    pub index: u32,
    pub entry: Entry,
}

/// The records of a batch before it is encoded.
pub(crate) enum Payload {
    /// Log table rows, appended one by one into Arrow builders.
    Rows(RowsToArrow),
    /// One group of a user-supplied Arrow batch (already conformed to the table schema).
    Arrow(RecordBatch),
    /// Primary-key table records.
    Kv(KvBatchBuilder),
    /// Encoded wire bytes (after the sender drained it); kept for retries.
    Encoded(Bytes),
}

/// The batch of one bucket.
pub(crate) struct WriteBatch {
    pub bucket: i32,
    pub payload: Payload,
    pub records: u32,
    /// Estimated encoded size, for `client.writer.batch-size`.
    pub size: usize,
    /// Buffer bytes reserved by the batch's records; released when it completes.
    pub reserved: u64,
    pub entries: Vec<EntrySlot>,
    /// The results of its `WriteResult`-form records (created with the first).
    results: Option<Arc<BatchResults>>,
    /// Arrow groups in this batch: (join, rows of the group).
    pub joins: Vec<(Arc<ArrowJoin>, usize)>,
    pub tickets: TicketSet,
    /// Clock nanos when the batch was opened (linger and delivery timeout start here).
    pub created: u64,
}

impl WriteBatch {
    pub fn new(bucket: i32, payload: Payload, created: u64) -> WriteBatch {
        WriteBatch {
            bucket,
            payload,
            records: 0,
            size: 0,
            reserved: 0,
            entries: Vec::new(),
            results: None,
            joins: Vec::new(),
            tickets: TicketSet::default(),
            created,
        }
    }

    /// Register an operation on the record just appended at `index`; its `WriteResult` when it
    /// asked for one.
    pub fn register(&mut self, index: u32, entry: Option<NewEntry<'_>>, ticket: Ticket) -> Option<WriteResult> {
        self.tickets.add(ticket);
        let entry = match entry {
            None => return None,
            Some(NewEntry::Owned(e)) => e,
            Some(NewEntry::Shared(cb)) => {
                if let Some(EntrySlot { index: start, entry: Entry::Run { cb: last, count } }) = self.entries.last_mut() {
                    if *start + *count == index && Arc::ptr_eq(last, cb) {
                        *count += 1;
                        return None;
                    }
                }
                Entry::Run { cb: cb.clone(), count: 1 }
            }
            Some(NewEntry::Result(scope)) => {
                if let Some(EntrySlot { entry: Entry::Results { results, first, count }, .. }) = self.entries.last_mut() {
                    if *first + *count == index {
                        *count += 1;
                        return Some(WriteResult::in_batch(results.clone(), index));
                    }
                }
                let results = self.results.get_or_insert_with(|| BatchResults::new(scope.clone())).clone();
                let r = WriteResult::in_batch(results.clone(), index);
                self.entries.push(EntrySlot { index, entry: Entry::Results { results, first: index, count: 1 } });
                return Some(r);
            }
        };
        self.entries.push(EntrySlot { index, entry });
        None
    }
}

/// How a batch ended, from the server's answer.
#[derive(Clone, Debug)]
pub(crate) struct BatchOutcome {
    /// `Err` when the batch failed.
    pub result: Result<(), Error>,
    /// Log tables: offset of the first record; otherwise -1.
    pub base_offset: i64,
    /// Primary-key tables: changelog end offset after the write; otherwise -1.
    pub log_end_offset: i64,
    /// The partition id that acknowledged the batch (`None`: failed, or no partitions). Differs
    /// from the lane's current id when the partition was recreated after the acknowledgement.
    pub acked_by: Option<i64>,
}

/// Where a batch's table (or partition) lives (shared by every job of a writer's lane).
pub(crate) struct JobTarget {
    pub table: Arc<TablePath>,
    pub table_id: i64,
    /// Whether records have offsets (log tables).
    pub per_record_offsets: bool,
    /// The partition's name (`None` for a table without partitions).
    pub partition: Option<Arc<str>>,
    /// The partition's id once known (-1 before).
    pub partition_id: std::sync::atomic::AtomicI64,
}

impl JobTarget {
    pub fn new(table: Arc<TablePath>, table_id: i64, per_record_offsets: bool, partition: Option<Arc<str>>) -> JobTarget {
        JobTarget { table, table_id, per_record_offsets, partition, partition_id: std::sync::atomic::AtomicI64::new(-1) }
    }

    /// What identifies the partition in shard keys: a hash of its name (stable, unlike the id,
    /// which is unknown until the partition is resolved and changes if it is recreated).
    pub fn shard_partition(&self) -> Option<i64> {
        use std::hash::{Hash, Hasher};
        let p = self.partition.as_ref()?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        p.hash(&mut h);
        Some(h.finish() as i64)
    }

    /// The partition id, if this is a partition and its id is known.
    pub fn partition_id(&self) -> Option<i64> {
        self.partition.as_ref()?;
        Some(self.partition_id.load(std::sync::atomic::Ordering::Acquire)).filter(|&p| p >= 0)
    }
}

/// One completed batch on its way to the dispatcher.
pub(crate) struct BatchJob {
    pub target: Arc<JobTarget>,
    pub bucket: i32,
    pub outcome: BatchOutcome,
    pub entries: Vec<EntrySlot>,
}

impl JobBody for BatchJob {
    fn run(self: Box<Self>, ctx: &mut JobContext<'_>) {
        let BatchJob { target, bucket, outcome, entries } = *self;
        let ok = outcome.result.is_ok();
        let partition_id = outcome.acked_by.or_else(|| target.partition_id());
        let mut c = WriteCompletion {
            error: outcome.result.err(),
            table: target.table.clone(),
            table_id: target.table_id,
            partition: target.partition.clone(),
            partition_id,
            bucket,
            offset: -1,
            log_end_offset: outcome.log_end_offset,
            bucket_results: Vec::new(),
        };
        let offsets = ok && target.per_record_offsets && outcome.base_offset >= 0;
        for slot in entries {
            match slot.entry {
                Entry::Run { cb, count } => {
                    for i in 0..count {
                        if offsets {
                            c.offset = outcome.base_offset + i64::from(slot.index + i);
                        }
                        ctx.invoke(|| cb(&c), &|| c.describe());
                    }
                }
                Entry::Results { results, first, count } => {
                    results.complete_run(&c, if offsets { outcome.base_offset } else { -1 }, first, count, ctx)
                }
                entry => {
                    if offsets {
                        c.offset = outcome.base_offset + i64::from(slot.index);
                    }
                    entry.complete(&c, ctx);
                }
            }
        }
    }
}

// ===== Arrow joins =====

struct JoinState {
    remaining: usize,
    /// (bucket, rows, base offset, error) per group part, in group order.
    parts: Vec<BucketResult>,
    target: Option<Entry>,
    ticket: Option<Ticket>,
}

/// The shared state of one multi-bucket Arrow operation.
pub(crate) struct ArrowJoin {
    state: Mutex<JoinState>,
    /// First bucket of the input: the final callback runs on its shard.
    pub first_bucket: i32,
    /// The lane (table or partition) of the first bucket: the completion's partition.
    pub first_target: Arc<JobTarget>,
}

impl ArrowJoin {
    pub fn new(groups: usize, first_bucket: i32, first_target: Arc<JobTarget>, target: Option<Entry>, ticket: Ticket) -> Arc<ArrowJoin> {
        Arc::new(ArrowJoin {
            state: Mutex::new(JoinState { remaining: groups, parts: Vec::with_capacity(groups), target, ticket: Some(ticket) }),
            first_bucket,
            first_target,
        })
    }

    /// Record one group part's result. Returns the final job (and its ticket) when this was the
    /// last part.
    pub fn record(&self, part: BucketResult) -> Option<(JoinJob, Ticket)> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.parts.push(part);
        st.remaining -= 1;
        if st.remaining > 0 {
            return None;
        }
        let parts = std::mem::take(&mut st.parts);
        let entry = st.target.take();
        let ticket = st.ticket.take().expect("join finalized once");
        Some((JoinJob { target: self.first_target.clone(), first_bucket: self.first_bucket, results: merge_parts(parts), entry }, ticket))
    }
}

/// Merge the parts of the same bucket (a large group is split into several batches).
fn merge_parts(parts: Vec<BucketResult>) -> Vec<BucketResult> {
    let mut out: Vec<BucketResult> = Vec::new();
    for p in parts {
        match out.iter_mut().find(|r| r.bucket == p.bucket && r.partition == p.partition) {
            Some(r) => {
                r.rows += p.rows;
                if r.error.is_none() {
                    r.error = p.error;
                }
                if r.base_offset < 0 {
                    r.base_offset = p.base_offset;
                }
            }
            None => out.push(p),
        }
    }
    out.sort_by(|a, b| (&a.partition, a.bucket).cmp(&(&b.partition, b.bucket)));
    out
}

/// The final job of an Arrow operation.
pub(crate) struct JoinJob {
    target: Arc<JobTarget>,
    first_bucket: i32,
    results: Vec<BucketResult>,
    entry: Option<Entry>,
}

impl JobBody for JoinJob {
    fn run(self: Box<Self>, ctx: &mut JobContext<'_>) {
        let JoinJob { target, first_bucket, results, entry } = *self;
        let error = results.iter().find_map(|r| r.error.clone()).map(|e| {
            let failed: Vec<String> = results
                .iter()
                .filter(|r| r.error.is_some())
                .map(|r| match &r.partition {
                    None => r.bucket.to_string(),
                    Some(p) => format!("{p}/{}", r.bucket),
                })
                .collect();
            e.context(format!("Arrow batch: buckets [{}] failed", failed.join(", ")))
        });
        let offset = results.iter().find(|r| r.bucket == first_bucket && r.partition == target.partition).map_or(-1, |r| r.base_offset);
        let c = WriteCompletion {
            error,
            table: target.table.clone(),
            table_id: target.table_id,
            partition: target.partition.clone(),
            partition_id: target.partition_id(),
            bucket: first_bucket,
            offset: if target.per_record_offsets { offset } else { -1 },
            log_end_offset: -1,
            bucket_results: results,
        };
        if let Some(entry) = entry {
            entry.complete(&c, ctx);
        }
    }
}

/// Shard key of a table bucket: hash of (table, partition, bucket), as C9 states.
pub(crate) fn shard_key(table_id: i64, partition: Option<i64>, bucket: i32) -> u64 {
    let mut h = (table_id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= (partition.unwrap_or(-1) as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^= (bucket as u32 as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
    h ^ (h >> 29)
}

/// Benchmark support: dispatch `jobs` completed batches of `per_job` no-op callbacks (each
/// capturing one word, stored inline) through `scope`, exactly as the sender does, and return
/// once they all ran. Not part of the API (the `internals` feature).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub fn bench_dispatch_batches(
    scope: &fluss_writer_dispatch::Scope,
    jobs: usize,
    per_job: usize,
    sink: &'static std::sync::atomic::AtomicU64,
) {
    use fluss_writer_dispatch::{Deadline, Job};
    let target = Arc::new(JobTarget::new(Arc::new(TablePath { database: "b".into(), table: "t".into() }), 1, true, None));
    for j in 0..jobs {
        let mut tickets = TicketSet::default();
        let mut entries = Vec::with_capacity(per_job);
        for i in 0..per_job {
            tickets.add(scope.admit(Deadline::never()).expect("bench scope admits"));
            let x = i as u64;
            entries.push(EntrySlot {
                index: i as u32,
                entry: Entry::Callback(Callback::new(move |_c: &WriteCompletion| {
                    sink.fetch_add(x & 1, std::sync::atomic::Ordering::Relaxed);
                })),
            });
        }
        let body = BatchJob {
            target: target.clone(),
            bucket: (j % 8) as i32,
            outcome: BatchOutcome { result: Ok(()), base_offset: 0, log_end_offset: -1, acked_by: None },
            entries,
        };
        scope.dispatch(Job::new(scope, j as u64, tickets, scope.clock().now_nanos(), Box::new(body)));
    }
    scope.flush(Deadline::never()).expect("bench flush");
}
