//! The accumulator: one open batch and a queue of closed batches per bucket.
//!
//! Appending threads add records to the open batch of their bucket under that bucket's mutex
//! (one uncontended lock per append, shared by all records of the bucket; no lock object per
//! record). A batch closes when the next record would overflow its limit (see [`BatchLimits`]),
//! when a flush or close asks for it, or when the sender finds it lingered past
//! `client.writer.batch-timeout`. Closed batches wait in their bucket's queue, in append order,
//! until the sender drains them.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use arrow_array::RecordBatch;
use fluss_writer_dispatch::{Clock, Ticket};
use tokio::sync::Notify;

use super::batch::{ArrowJoin, NewEntry, Payload, WriteBatch};
use super::completion::WriteResult;
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
    pub fn is_empty(&self) -> bool {
        self.open.is_none() && self.closed.is_empty()
    }
}

/// Share of the writer's callback slots, and of the connection's buffer memory, that its open
/// batches may hold together: one part fills while the rest is in flight.
const OPEN_SHARE: usize = 4;
/// A batch may always take this many records and bytes, however many are open (so a small
/// `max_pending_callbacks` or memory size does not shrink batches to single records).
const MIN_RECORDS: usize = 1024;
const MIN_BYTES: usize = 64 << 10;

/// How full a batch of one writer may get: `client.writer.batch-size`, and never so full that
/// the writer's open batches together hold more than 1/[`OPEN_SHARE`] of its callback slots or of
/// the buffer memory. Without the second rule a writer with many buckets (or partitions) fills
/// all of them at about the same pace: twelve 2 MiB batches hold about 190,000 rows, close
/// together, and leave too few slots and too little memory for the next twelve to fill while
/// those are in flight, so writing stops until they complete. Shared by every lane of a writer;
/// the limit is recomputed when a batch opens or closes, not per record.
pub(crate) struct BatchLimits {
    batch_size: usize,
    slots: usize,
    memory: usize,
    /// Open batches of the writer, over all its lanes.
    open: AtomicUsize,
    /// The current limit: records in the high 32 bits, bytes in the low 32.
    packed: AtomicU64,
}

impl BatchLimits {
    pub fn new(batch_size: usize, slots: usize, memory: usize) -> BatchLimits {
        let l = BatchLimits { batch_size, slots, memory, open: AtomicUsize::new(0), packed: AtomicU64::new(0) };
        l.update(0);
        l
    }

    /// Store the limit for `open` open batches. Two threads that open or close batches at once
    /// may store their limits in the other order, leaving the limit of a count one off until
    /// the next open or close: harmless for a sizing rule, and cheaper than a lock.
    fn update(&self, open: usize) {
        let parts = OPEN_SHARE * open.max(1);
        let bytes = self.batch_size.min((self.memory / parts).max(MIN_BYTES)).min(u32::MAX as usize);
        let records = (self.slots / parts).max(MIN_RECORDS).min(u32::MAX as usize);
        self.packed.store(((records as u64) << 32) | bytes as u64, Ordering::Relaxed);
    }

    fn opened(&self) {
        self.update(self.open.fetch_add(1, Ordering::Relaxed) + 1);
    }

    fn closed(&self, n: usize) {
        if n > 0 {
            self.update(self.open.fetch_sub(n, Ordering::Relaxed).saturating_sub(n));
        }
    }

    /// Whether an open batch of `records` records and `size` bytes takes `more` bytes more.
    #[inline]
    fn fits(&self, records: u32, size: usize, more: usize) -> bool {
        let packed = self.packed.load(Ordering::Relaxed);
        records < (packed >> 32) as u32 && size + more <= (packed as u32) as usize
    }

    /// The current limit: (records, bytes).
    #[cfg(test)]
    fn current(&self) -> (usize, usize) {
        let packed = self.packed.load(Ordering::Relaxed);
        ((packed >> 32) as usize, (packed as u32) as usize)
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
    limits: Arc<BatchLimits>,
    /// Wakes the sender: a batch closed, or a new batch opened (a new linger timer).
    pub wake: Arc<Notify>,
}

/// What an append did to its bucket.
pub(crate) struct Appended {
    /// The previous open batch was full and got closed.
    pub closed_full: bool,
    /// The operation's `WriteResult`, when it asked for one.
    pub result: Option<WriteResult>,
}

impl Accumulator {
    pub fn new(bucket_count: usize, schema: Arc<Schema>, schema_id: i16, kind: BatchKind, limits: Arc<BatchLimits>) -> Accumulator {
        Accumulator {
            buckets: (0..bucket_count).map(|_| Mutex::new(BucketQueue::default())).collect(),
            schema,
            schema_id,
            kind,
            limits,
            wake: Arc::new(Notify::new()),
        }
    }

    /// Take the bucket's open batch (to send it before it is full).
    pub fn take_open(&self, q: &mut BucketQueue) -> Option<WriteBatch> {
        let b = q.open.take()?;
        q.entries_hint = b.entries.len();
        self.limits.closed(1);
        Some(b)
    }

    fn close_open(&self, q: &mut BucketQueue) -> bool {
        match self.take_open(q) {
            Some(b) => {
                q.closed.push_back(b);
                true
            }
            None => false,
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
            let fits = open.records == 0 || self.limits.fits(open.records, open.size, size);
            let same_kind = !matches!(open.payload, Payload::Arrow(_));
            if !fits || !same_kind {
                self.close_open(q);
                closed = true;
            }
        }
        if q.open.is_none() {
            self.limits.opened();
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
        let result = b.register(index, entry, ticket);
        Appended { closed_full, result }
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
    ) -> Option<WriteResult> {
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
        b.register(index, entry, ticket)
    }

    /// Queue one group of an Arrow input as its own closed batch (after closing the bucket's
    /// open batch, so that submission order is kept).
    pub fn append_arrow_group(&self, bucket: i32, group: RecordBatch, size: usize, join: Arc<ArrowJoin>, now: u64) {
        let mut q = self.lock(bucket as usize);
        self.close_open(&mut q);
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
            self.close_open(&mut self.lock(i));
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

/// A lane dropped with open batches (its writer is going away) gives their count back.
impl Drop for Accumulator {
    fn drop(&mut self) {
        let open = self.buckets.iter_mut().map(|q| q.get_mut().unwrap_or_else(|p| p.into_inner())).filter(|q| q.open.is_some()).count();
        self.limits.closed(open);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_batches_share_slots_and_memory() {
        let l = BatchLimits::new(2 << 20, 262_144, 64 << 20);
        // One open batch: batch-size binds (a quarter of the slots is 65,536 records).
        assert_eq!(l.current(), (65_536, 2 << 20));
        for _ in 0..12 {
            l.opened();
        }
        // Twelve: together at most a quarter of the slots and of the memory.
        assert_eq!(l.current(), (262_144 / 48, (64 << 20) / 48));
        assert!(l.fits(5_460, 1_000, 100) && !l.fits(5_461, 1_000, 100));
        assert!(!l.fits(10, (64 << 20) / 48 - 99, 100));
        l.closed(11);
        assert_eq!(l.current(), (65_536, 2 << 20));
        l.closed(1);
        assert_eq!(l.open.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn small_budgets_keep_the_floors() {
        // A tiny slot count does not shrink batches to single records; a memory size at or
        // below the floor leaves batch-size (which config keeps at most the memory) to bind.
        let l = BatchLimits::new(32 << 10, 4, 32 << 10);
        for _ in 0..100 {
            l.opened();
        }
        assert_eq!(l.current(), (MIN_RECORDS, 32 << 10));
    }
}
