//! `ProduceLog` for one bucket entry: validate the batches, apply the idempotence rule, append.
//!
//! Checks, in order (the first failure answers the entry and nothing of it is appended):
//!
//! 1. the table is a log table (a primary-key table takes `PutKv`);
//! 2. the bytes parse as one or more V0 log batches (else `CORRUPT_MESSAGE`, 3);
//! 3. each batch's CRC (else `CORRUPT_RECORD_EXCEPTION`, 14);
//! 4. schema id = the table's, append-only attribute, at least one record, and the Arrow
//!    payload decodes against the table schema with exactly `RecordCount` rows and no null in
//!    a NOT NULL column (else
//!    `UNKNOWN_SERVER_ERROR`, -1, with the reason: retrying the same bytes cannot help, so a
//!    retriable code would only make the writer loop);
//! 5. the sequence rule (`OUT_OF_ORDER_SEQUENCE`, 31, or a duplicate, answered with the
//!    original base offset and not appended).
//!
//! The embedded engine is stricter than a 0.9.1 server, which checks only sizes and CRCs: bytes
//! that a real server would store and later fail to read are rejected here, at write time, with
//! a message that says what is wrong.

use crate::error::{Error, FlussCode, Result};
use crate::wire::log_batch::LogBatch;

use super::bucket::{Bucket, SeqCheck};
use super::catalog::Table;
use super::Counters;

/// A non-retriable rejection of bytes that do not match the table.
pub(crate) fn mismatch(table: &Table, bucket: i32, message: impl std::fmt::Display) -> Error {
    Error::server(FlussCode::UNKNOWN_SERVER_ERROR, format!("table {} bucket {bucket}: {message}", table.path()))
}

/// Handle one `PbProduceLogReqForBucket`; returns the base offset of its first batch.
pub(crate) fn produce(table: &Table, bucket: &mut Bucket, records: &[u8], now_ms: i64, counters: &Counters) -> Result<i64> {
    let b = bucket.id;
    if table.is_pk() {
        return Err(mismatch(table, b, "ProduceLog to a primary-key table; primary-key tables are written with PutKv"));
    }
    let batches = LogBatch::parse_all(records)?;
    let parsed: usize = batches.iter().map(|x| x.bytes().len()).sum();
    if parsed != records.len() {
        return Err(Error::server(
            FlussCode::CORRUPT_MESSAGE,
            format!("table {} bucket {b}: {} bytes after the last complete log batch", table.path(), records.len() - parsed),
        ));
    }
    if batches.is_empty() {
        return Err(mismatch(table, b, "ProduceLog entry carries no record batch"));
    }
    let mut decisions = Vec::with_capacity(batches.len());
    let mut pending: Vec<(i64, i32)> = Vec::new();
    for (i, batch) in batches.iter().enumerate() {
        let at = |m: String| mismatch(table, b, format!("batch {i}: {m}"));
        if !batch.verify_crc() {
            return Err(Error::server(FlussCode::CORRUPT_RECORD, format!("table {} bucket {b}: batch {i}: CRC mismatch", table.path())));
        }
        // A batch of an older schema (a writer created before a column was added) is stored
        // as it is, as a server does; readers decode it with its schema.
        let Some(schema) = table.schema_of(batch.schema_id()) else {
            return Err(at(format!("schema id {} but the table's schema ids are 1 to {}", batch.schema_id(), table.schema_id())));
        };
        if !batch.is_append_only() {
            return Err(at("the append-only attribute is not set (log tables take append-only batches)".into()));
        }
        let count = batch.record_count();
        if count <= 0 {
            return Err(at(format!("record count {count}; empty batches must not be sent")));
        }
        if batch.last_offset_delta() != count - 1 {
            return Err(at(format!("last offset delta {} does not match record count {count}", batch.last_offset_delta())));
        }
        let decoded =
            batch.decode(schema).map_err(|e| at(format!("the Arrow payload does not match the table schema: {}", e.message())))?;
        if decoded.num_rows() != count as usize {
            return Err(at(format!("the Arrow payload has {} rows but the header says {count}", decoded.num_rows())));
        }
        let decision = bucket.check_sequence(batch.writer_id(), batch.batch_sequence(), &pending)?;
        if decision == SeqCheck::Append && batch.writer_id() != -1 {
            pending.push((batch.writer_id(), batch.batch_sequence()));
        }
        decisions.push(decision);
    }
    let mut first = None;
    for (batch, decision) in batches.iter().zip(decisions) {
        let base = match decision {
            SeqCheck::Duplicate(meta) => {
                counters.duplicate();
                meta.base_offset
            }
            SeqCheck::Append => {
                let stored = bucket.append(batch.bytes().to_vec(), now_ms)?;
                counters.accepted(batch.record_count() as u64);
                stored.base_offset
            }
        };
        first.get_or_insert(base);
    }
    Ok(first.expect("at least one batch"))
}
