//! The accumulator: one open batch and a queue of closed batches per bucket.
//!
//! Appending threads add records to the open batch of their bucket under that bucket's mutex
//! (one uncontended lock per append, shared by all records of the bucket; no lock object per
//! record). A batch closes when the next record would overflow `client.writer.batch-size`, when
//! a flush or close asks for it, or when the sender finds it lingered past
//! `client.writer.batch-timeout`. Closed batches wait in their bucket's queue, in append order,
//! until the sender drains them.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use arrow_array::RecordBatch;
use fluss_writer_dispatch::{Clock, Ticket};
use tokio::sync::Notify;

use super::batch::{ArrowJoin, NewEntry, Payload, WriteBatch};
use crate::metadata::Schema;
use crate::row::Value;
use crate::wire::arrow::RowsToArrow;
use crate::wire::kv_batch::KvBatchBuilder;

/// Per-bucket state.
#[derive(Default)]
pub(crate) struct BucketQueue {
    pub open: Option<WriteBatch>,
    pub closed: VecDeque<WriteBatch>,
    /// Entries the last closed batch held: the next batch reserves that many at once instead of
    /// growing (and copying) its entry list record by record.
    entries_hint: usize,
}

impl BucketQueue {
    /// Take the open batch (to send it before it is full).
    pub fn take_open(&mut self) -> Option<WriteBatch> {
        let b = self.open.take()?;
        self.entries_hint = b.entries.len();
        Some(b)
    }

    fn close_open(&mut self) -> bool {
        match self.take_open() {
            Some(b) => {
                self.closed.push_back(b);
                true
            }
            None => false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.open.is_none() && self.closed.is_empty()
    }
}

/// The kind of records a writer's batches hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BatchKind {
    Log,
    Kv,
}

pub(crate) struct Accumulator {
    buckets: Box<[Mutex<BucketQueue>]>,
    schema: Arc<Schema>,
    schema_id: i16,
    kind: BatchKind,
    batch_size: usize,
    /// Wakes the sender: a batch closed, or a new batch opened (a new linger timer).
    pub wake: Arc<Notify>,
}

/// What an append did to its bucket.
pub(crate) struct Appended {
    /// The previous open batch was full and got closed.
    pub closed_full: bool,
}

impl Accumulator {
    pub fn new(bucket_count: usize, schema: Arc<Schema>, schema_id: i16, kind: BatchKind, batch_size: usize) -> Accumulator {
        Accumulator {
            buckets: (0..bucket_count).map(|_| Mutex::new(BucketQueue::default())).collect(),
            schema,
            schema_id,
            kind,
            batch_size,
            wake: Arc::new(Notify::new()),
        }
    }

    pub fn bucket_count(&self) -> usize {
        self.buckets.len()
    }

    pub fn lock(&self, bucket: usize) -> MutexGuard<'_, BucketQueue> {
        self.buckets[bucket].lock().unwrap_or_else(|p| p.into_inner())
    }

    fn new_payload(&self) -> Payload {
        match self.kind {
            BatchKind::Log => Payload::Rows(RowsToArrow::new(&self.schema)),
            BatchKind::Kv => Payload::Kv(KvBatchBuilder::new(self.schema_id)),
        }
    }

    /// Make sure the bucket's open batch can take `size` more bytes of the same payload kind;
    /// closes a full (or differently-kinded) batch first. Returns whether it closed one.
    fn ensure_room(&self, q: &mut BucketQueue, bucket: i32, size: usize, clock: &dyn Clock) -> bool {
        let mut closed = false;
        if let Some(open) = &q.open {
            let fits = open.records == 0 || open.size + size <= self.batch_size;
            let same_kind = !matches!(open.payload, Payload::Arrow(_));
            if !fits || !same_kind {
                q.close_open();
                closed = true;
            }
        }
        if q.open.is_none() {
            // The clock is read only when a batch opens (linger and delivery timeout start here),
            // not once per record.
            let mut b = WriteBatch::new(bucket, self.new_payload(), clock.now_nanos());
            tracing::debug!(target: "fluss_writer::batch", bucket, "batch opened");
            b.entries.reserve_exact(q.entries_hint);
            q.open = Some(b);
            self.wake.notify_one();
        }
        if closed {
            self.wake.notify_one();
        }
        closed
    }

    /// Append one log row (already accepted by `check_arrow_row`) and register its entry.
    pub fn append_row(
        &self,
        bucket: i32,
        row: &[Value],
        size: usize,
        entry: Option<NewEntry<'_>>,
        ticket: Ticket,
        clock: &dyn Clock,
    ) -> Appended {
        let mut q = self.lock(bucket as usize);
        let closed_full = self.ensure_room(&mut q, bucket, size, clock);
        let b = q.open.as_mut().expect("open batch");
        if let Payload::Rows(rows) = &mut b.payload {
            rows.push_checked(row);
        }
        let index = b.records;
        b.records += 1;
        b.size += size;
        b.reserved += size as u64;
        b.register(index, entry, ticket);
        Appended { closed_full }
    }

    /// Append one KV record (key and optional value already encoded) and register its entry.
    #[allow(clippy::too_many_arguments)]
    pub fn append_kv(
        &self,
        bucket: i32,
        key: &[u8],
        value: Option<&[u8]>,
        size: usize,
        entry: Option<NewEntry<'_>>,
        ticket: Ticket,
        clock: &dyn Clock,
    ) {
        let mut q = self.lock(bucket as usize);
        self.ensure_room(&mut q, bucket, size, clock);
        let b = q.open.as_mut().expect("open batch");
        if let Payload::Kv(kv) = &mut b.payload {
            kv.append(key, value);
        }
        let index = b.records;
        b.records += 1;
        b.size += size;
        b.reserved += size as u64;
        b.register(index, entry, ticket);
    }

    /// Queue one group of an Arrow input as its own closed batch (after closing the bucket's
    /// open batch, so that submission order is kept).
    pub fn append_arrow_group(&self, bucket: i32, group: RecordBatch, size: usize, join: Arc<ArrowJoin>, now: u64) {
        let mut q = self.lock(bucket as usize);
        q.close_open();
        let rows = group.num_rows();
        let mut b = WriteBatch::new(bucket, Payload::Arrow(group), now);
        b.records = rows as u32;
        b.size = size;
        b.reserved = size as u64;
        b.joins.push((join, rows));
        q.closed.push_back(b);
        drop(q);
        self.wake.notify_one();
    }

    /// Close every open batch now (flush, close). The sender is woken.
    pub fn close_all_open(&self) {
        for i in 0..self.buckets.len() {
            self.lock(i).close_open();
        }
        self.wake.notify_one();
    }

    /// When the oldest batch still in the accumulator (closed or open) was opened.
    pub fn oldest_created(&self) -> Option<u64> {
        (0..self.buckets.len())
            .filter_map(|i| {
                let q = self.lock(i);
                q.closed.front().map(|x| x.created).or_else(|| q.open.as_ref().map(|x| x.created))
            })
            .min()
    }

    /// Whether every bucket is empty.
    pub fn is_empty(&self) -> bool {
        (0..self.buckets.len()).all(|i| self.lock(i).is_empty())
    }
}
