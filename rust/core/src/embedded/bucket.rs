//! One table bucket: its log, its writer (idempotence) state and, for primary-key tables, its
//! key-value state.
//!
//! A bucket is guarded by its own mutex, so requests for different buckets proceed in
//! parallel. Everything that changes a bucket goes through [`Bucket::append`], which assigns
//! the offsets, writes the batch to the bucket file (durable engines) *before* touching memory,
//! and records the batch in the writer state; replay on open goes through the same bookkeeping
//! ([`Bucket::replay`]), so a reopened bucket is the bucket that was closed.
//!
//! # Idempotence (docs/wire-format.md, "Idempotence")
//!
//! For a batch with `writer_id != -1`, per (writer id, bucket), shared by log and KV writes:
//! the batch is accepted iff its sequence is `last + 1` (wrapping from `i32::MAX` to 0), or 0
//! for a writer this bucket has not seen. A batch whose sequence equals one of the writer's last
//! [`DEDUP_WINDOW`] accepted batches is a duplicate: it is answered with success and the
//! original offsets and is not appended again. Anything else is `OUT_OF_ORDER_SEQUENCE` (31).

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;

use crate::error::{ClientCode, Error, FlussCode, Result};
use crate::row::Row;
use crate::wire::log_batch::{set_log_batch_offset, LogBatch};

use super::store::{BucketFile, KIND_LOG_BATCH};

/// How many accepted batches per writer a bucket remembers for deduplication (Fluss: 5).
pub(crate) const DEDUP_WINDOW: usize = 5;

/// Offsets of one accepted batch, remembered for deduplication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BatchMeta {
    pub seq: i32,
    pub base_offset: i64,
    /// Offset after the batch (its last offset + 1).
    pub end_offset: i64,
}

/// What the sequence rule says about a batch.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SeqCheck {
    /// Append it.
    Append,
    /// Already appended: answer with these offsets.
    Duplicate(BatchMeta),
}

#[derive(Clone, Debug, Default)]
pub(crate) struct WriterState {
    last_seq: i32,
    recent: VecDeque<BatchMeta>,
}

/// One stored log batch.
#[derive(Clone, Debug)]
pub(crate) struct StoredBatch {
    pub base_offset: i64,
    /// Offset after the batch.
    pub end_offset: i64,
    pub commit_timestamp: i64,
    pub bytes: Bytes,
}

pub(crate) fn next_seq(seq: i32) -> i32 {
    if seq == i32::MAX {
        0
    } else {
        seq + 1
    }
}

/// A table bucket.
pub(crate) struct Bucket {
    pub id: i32,
    pub log: Vec<StoredBatch>,
    /// Log end offset = high watermark (every write is committed at once).
    pub end_offset: i64,
    pub last_commit_timestamp: i64,
    pub writers: HashMap<i64, WriterState>,
    /// Key bytes (compacted key) -> current row. Empty for log tables.
    pub kv: HashMap<Vec<u8>, Row>,
    /// The bucket file of a durable engine; `None` in memory, and after close.
    pub file: Option<BucketFile>,
    pub durable: bool,
    /// Set when the table is dropped or the engine closed; later writes fail.
    pub closed: bool,
    /// The storage model behind the back-pressure of a primary-key bucket.
    pub storage: super::pressure::Storage,
}

impl Bucket {
    pub(crate) fn new(id: i32, file: Option<BucketFile>) -> Bucket {
        Bucket {
            id,
            log: Vec::new(),
            end_offset: 0,
            last_commit_timestamp: 0,
            writers: HashMap::new(),
            kv: HashMap::new(),
            durable: file.is_some(),
            file,
            closed: false,
            storage: Default::default(),
        }
    }

    /// Apply the sequence rule to a batch of `writer_id` with sequence `seq`, as if the batches
    /// in `pending` (writer id, seq) had been appended first (several batches in one request).
    pub(crate) fn check_sequence(&self, writer_id: i64, seq: i32, pending: &[(i64, i32)]) -> Result<SeqCheck> {
        if writer_id == -1 {
            return Ok(SeqCheck::Append);
        }
        let state = self.writers.get(&writer_id);
        if let Some(meta) = state.and_then(|s| s.recent.iter().find(|m| m.seq == seq)) {
            return Ok(SeqCheck::Duplicate(*meta));
        }
        let last = pending.iter().rev().find(|(w, _)| *w == writer_id).map(|(_, s)| *s).or(state.map(|s| s.last_seq));
        let expected = last.map_or(0, next_seq);
        if seq == expected {
            Ok(SeqCheck::Append)
        } else {
            let why = match last {
                Some(last) => format!("last accepted sequence is {last}"),
                None => "the first batch of a writer on a bucket must have sequence 0".to_string(),
            };
            Err(Error::server(
                FlussCode::OUT_OF_ORDER_SEQUENCE,
                format!("out of order batch sequence {seq} for writer {writer_id} on bucket {}: expected {expected} ({why})", self.id),
            ))
        }
    }

    fn record_writer(&mut self, writer_id: i64, meta: BatchMeta) {
        if writer_id == -1 {
            return;
        }
        let state = self.writers.entry(writer_id).or_default();
        state.last_seq = meta.seq;
        state.recent.push_back(meta);
        while state.recent.len() > DEDUP_WINDOW {
            state.recent.pop_front();
        }
    }

    /// Append one validated log batch (bytes as received or generated): assign its base offset
    /// and commit timestamp (`max(last, now_ms)`), write it to the bucket file, keep it, and
    /// record it in the writer state. A failed file write leaves the bucket unchanged and is
    /// `LOG_STORAGE_EXCEPTION` (retriable).
    pub(crate) fn append(&mut self, mut bytes: Vec<u8>, now_ms: i64) -> Result<StoredBatch> {
        if self.closed || (self.durable && self.file.is_none()) {
            return Err(Error::client(ClientCode::ConnectionClosed, "the embedded engine is closed"));
        }
        let (delta, writer_id, seq) = {
            let b = LogBatch::parse_one(&bytes)?;
            (b.last_offset_delta(), b.writer_id(), b.batch_sequence())
        };
        let base = self.end_offset;
        let ts = self.last_commit_timestamp.max(now_ms);
        set_log_batch_offset(&mut bytes, base, ts);
        if let Some(file) = self.file.as_mut() {
            file.append(KIND_LOG_BATCH, &bytes)
                .map_err(|e| Error::server(FlussCode::LOG_STORAGE_EXCEPTION, format!("cannot write {}: {e}", file.path().display())))?;
        }
        let stored = StoredBatch { base_offset: base, end_offset: base + delta as i64 + 1, commit_timestamp: ts, bytes: bytes.into() };
        self.push(stored.clone(), writer_id, seq);
        Ok(stored)
    }

    fn push(&mut self, stored: StoredBatch, writer_id: i64, seq: i32) {
        self.end_offset = stored.end_offset;
        self.last_commit_timestamp = self.last_commit_timestamp.max(stored.commit_timestamp);
        self.record_writer(writer_id, BatchMeta { seq, base_offset: stored.base_offset, end_offset: stored.end_offset });
        self.log.push(stored);
    }

    /// Re-add a batch read back from the bucket file on open. Its offset must continue the log.
    pub(crate) fn replay(&mut self, bytes: Vec<u8>) -> Result<StoredBatch> {
        let b = LogBatch::parse_one(&bytes).map_err(|e| e.context(format!("bucket {} file", self.id)))?;
        if b.base_offset() != self.end_offset {
            return Err(Error::client(
                ClientCode::Io,
                format!("bucket {} file: batch at offset {} does not follow offset {}", self.id, b.base_offset(), self.end_offset),
            ));
        }
        let stored = StoredBatch {
            base_offset: b.base_offset(),
            end_offset: b.base_offset() + b.last_offset_delta() as i64 + 1,
            commit_timestamp: b.commit_timestamp(),
            bytes: Bytes::new(),
        };
        let (writer_id, seq) = (b.writer_id(), b.batch_sequence());
        let stored = StoredBatch { bytes: bytes.into(), ..stored };
        self.push(stored.clone(), writer_id, seq);
        Ok(stored)
    }

    /// Index of the batch holding `offset` (or the first batch after it).
    fn batch_index(&self, offset: i64) -> usize {
        self.log.partition_point(|b| b.end_offset <= offset)
    }

    /// Batches from `offset` on, concatenated, within `max_bytes` but at least one batch when
    /// `at_least_one`. `offset` must be in `0..=end_offset`.
    pub(crate) fn read(&self, offset: i64, max_bytes: usize, at_least_one: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for b in &self.log[self.batch_index(offset)..] {
            if out.len() + b.bytes.len() > max_bytes && !(at_least_one && out.is_empty()) {
                break;
            }
            out.extend_from_slice(&b.bytes);
        }
        out
    }

    /// Stored batches from `offset` on.
    pub(crate) fn batches_from(&self, offset: i64) -> &[StoredBatch] {
        &self.log[self.batch_index(offset)..]
    }

    /// First offset whose batch was committed at or after `timestamp`, else the end offset.
    pub(crate) fn offset_for_timestamp(&self, timestamp: i64) -> i64 {
        self.log.iter().find(|b| b.commit_timestamp >= timestamp).map_or(self.end_offset, |b| b.base_offset)
    }

    /// fsync and release the bucket file; later writes fail.
    pub(crate) fn close(&mut self) {
        self.closed = true;
        if let Some(mut f) = self.file.take() {
            if let Err(e) = f.sync() {
                log::warn!("embedded engine: cannot fsync {}: {e}", f.path().display());
            }
        }
    }
}
