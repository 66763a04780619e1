//! `PutKv` for one bucket entry: upserts, deletes and partial updates of a primary-key table,
//! and the changelog they produce (docs/wire-format.md, "KV record batches" and
//! "Deletes and partial updates").
//!
//! A KV batch is atomic: every record is decoded and checked, and the whole batch is applied
//! against a private overlay of the bucket's state, before anything is written. The changes
//! become one changelog batch in the bucket's log (ARROW, with a change-type vector, carrying
//! the KV batch's writer id and sequence, as the Fluss server writes it):
//!
//! | operation | key absent | key present (old row) |
//! |---|---|---|
//! | upsert | +I new | -U old, +U new |
//! | delete | nothing | -D old |
//! | partial upsert (`target_columns`) | +I (target columns, nulls elsewhere) | -U old, +U old with target columns replaced |
//! | partial delete | nothing | -D old if every non-target non-key column of old is null, else -U old, +U old with target non-key columns nulled |
//!
//! A batch that changes nothing still takes one offset (an empty changelog batch), like Fluss,
//! so its sequence number is recorded. The key-value state is the changelog applied in order
//! (+I/+U put, -D remove): replaying the changelog on open rebuilds it exactly.
//!
//! Checks beyond a 0.9.1 server (each a non-retriable `UNKNOWN_SERVER_ERROR`, -1, naming the
//! record): the value row must decode against the table schema and respect NOT NULL; the key
//! bytes must be the key of the row's primary-key columns (compacted, or the lake format's
//! encoding, as [`KeyCodec`](crate::wire::key::KeyCodec) says); and the bucket must be the bucket
//! of the row's bucket key. The last two catch client bucketing and encoding bugs that a real
//! server would silently store where no reader finds them. (A delete's key that is neither
//! compacted nor the bucket key, which only tables of kv format version 1 have, is checked
//! against the stored row it deletes.)

use std::collections::HashMap;

use crate::error::{Error, FlussCode, Result};
use crate::metadata::partition::PartitionRouter;
use crate::row::{check_row, Row, Value};
use crate::wire::arrow::RowsToArrow;
use crate::wire::compacted::{decode_row, null_bitset_len};
use crate::wire::key::KeyCodec;
use crate::wire::kv_batch::KvBatch;
use crate::wire::log_batch::{build_arrow_log_batch, stamp_log_batch, LogBatch};

use super::bucket::{Bucket, SeqCheck};
use super::catalog::{kv_key, Table};
use super::produce::mismatch;
use super::Counters;

/// Change-type bytes of changelog batches.
pub(crate) const INSERT: u8 = 1;
pub(crate) const UPDATE_BEFORE: u8 = 2;
pub(crate) const UPDATE_AFTER: u8 = 3;
pub(crate) const DELETE: u8 = 4;

/// Validate the request's `target_columns` against the table. Empty = all columns (`None`).
pub(crate) fn target_columns(table: &Table, target: &[i32]) -> Result<Option<Vec<bool>>> {
    if target.is_empty() {
        return Ok(None);
    }
    let bad = |m: String| Error::server(FlussCode::INVALID_TARGET_COLUMN, format!("table {}: {m}", table.path()));
    let schema = table.schema();
    let mut is_target = vec![false; schema.len()];
    for &c in target {
        match usize::try_from(c).ok().filter(|&c| c < schema.len()) {
            Some(c) => is_target[c] = true,
            None => return Err(bad(format!("target column {c} is outside the schema ({} columns)", schema.len()))),
        }
    }
    // The table's whole primary key, partition columns included, as the server's PartialUpdater
    // checks it (`pk_indexes` is the key inside a partition).
    let pk = schema.primary_key_indexes();
    for &k in &pk {
        if !is_target[k] {
            return Err(bad(format!(
                "partial update target columns must include every primary-key column; {:?} is missing",
                schema.columns()[k].name
            )));
        }
    }
    for (i, col) in schema.columns().iter().enumerate() {
        if !pk.contains(&i) && !col.nullable {
            return Err(bad(format!(
                "partial update requires every non-primary-key column to be nullable, but {:?} is NOT NULL",
                col.name
            )));
        }
    }
    Ok(Some(is_target))
}

/// One change of the changelog, with the key it belongs to.
struct Change {
    change_type: u8,
    key: Vec<u8>,
    row: Row,
}

/// Decode compacted key bytes into a full-width row with the primary-key values in place (the
/// key schema has no null bitset on the wire, so one of zeros is prepended), and check the row
/// re-encodes to the same bytes.
fn decode_key(table: &Table, keys: &KeyCodec, key: &[u8]) -> Result<Row> {
    let ks = table.key_schema.as_ref().expect("primary-key table");
    let mut buf = vec![0u8; null_bitset_len(ks.len())];
    buf.extend_from_slice(key);
    let values = decode_row(ks, &buf)?;
    let mut row = vec![Value::Null; table.schema().len()];
    for (v, &i) in values.into_iter().zip(&table.pk_indexes) {
        row[i] = v;
    }
    let mut again = Vec::with_capacity(key.len());
    keys.encode_pk(table.schema(), &row, &mut again)?;
    if again != key {
        return Err(Error::invalid_row("the key bytes are not in canonical compacted form"));
    }
    Ok(row)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Check that a key belongs to this bucket. `row` is a full-width row with at least the
/// primary-key values in place (`None`: none is known, and the key bytes must be the bucket key).
fn check_bucket(table: &Table, keys: &KeyCodec, bucket: i32, key: &[u8], row: Option<&[Value]>) -> Result<(), String> {
    let expected = match row {
        Some(row) => keys.kv_bucket(table.schema(), row, key, &mut Vec::new()).map_err(|e| e.message().to_string())?,
        None => keys.bucket_of(key),
    };
    if expected == bucket {
        Ok(())
    } else {
        Err(format!(
            "key {} belongs to bucket {expected} of {}, not to bucket {bucket} (client bucketing bug?)",
            hex(key),
            table.bucket_count()
        ))
    }
}

/// Handle one `PbPutKvReqForBucket`; returns the changelog end offset after the write.
/// `original`: its `original_partition_name` (a write to the historical partition for an
/// expired one: its keys live in that partition's namespace, see [`kv_key`]).
pub(crate) fn put(
    table: &Table,
    bucket: &mut Bucket,
    records: &[u8],
    target: Option<&[bool]>,
    original: Option<&str>,
    now_ms: i64,
    counters: &Counters,
) -> Result<i64> {
    let b = bucket.id;
    if table.is_historical() && original.is_none() {
        // Its keys live per original partition: a write that names none has no place there.
        return Err(Error::server(
            FlussCode::UNKNOWN_SERVER_ERROR,
            format!("a write to {} must name the partition its rows belong to (original_partition_name)", table.describe()),
        ));
    }
    if !table.is_pk() {
        return Err(Error::server(
            FlussCode::NON_PRIMARY_KEY_TABLE,
            format!("table {} is a log table; PutKv needs a primary-key table", table.path()),
        ));
    }
    let keys = table.keys().map_err(|e| mismatch(table, b, e.message().to_string()))?;
    let batch = KvBatch::parse(records)?;
    // Rows of an older schema (a writer created before columns were added) are read with it
    // and get nulls in the newer columns; the changelog is written in the current schema, as a
    // 0.9.1 server does. A newer id than the table has is the server's SCHEMA_NOT_EXIST.
    let Some(batch_schema) = table.schema_of(batch.schema_id()) else {
        return Err(Error::server(
            FlussCode::SCHEMA_NOT_EXIST,
            format!("Invalid schema id: {}, latest schema id: {}", batch.schema_id(), table.schema_id()),
        ));
    };
    let (writer_id, seq) = (batch.writer_id(), batch.batch_sequence());
    if let SeqCheck::Duplicate(meta) = bucket.check_sequence(writer_id, seq, &[])? {
        counters.duplicate();
        return Ok(meta.end_offset);
    }
    let schema = table.schema();
    let mut overlay: HashMap<Vec<u8>, Option<Row>> = HashMap::new();
    let mut changes: Vec<Change> = Vec::new();
    let mut count = 0u64;
    for (i, record) in batch.records().enumerate() {
        let record = record?;
        count += 1;
        let at = |m: String| mismatch(table, b, format!("record {i}: {m}"));
        let entry = kv_key(original, record.key);
        let old = match overlay.get(entry.as_ref()) {
            Some(v) => v.clone(),
            None => bucket.kv.get(entry.as_ref()).cloned().map(|r| table.fit(r)),
        };
        let value = match record.value {
            Some(v) => {
                let mut row = decode_row(batch_schema, v)
                    .and_then(|r| check_row(batch_schema, &r).map(|()| r))
                    .map_err(|e| at(format!("the value row does not match the table schema: {}", e.message())))?;
                row.resize(schema.len(), Value::Null);
                let mut key = Vec::with_capacity(record.key.len());
                keys.encode_pk(schema, &row, &mut key).map_err(|e| at(e.message().to_string()))?;
                if key != record.key {
                    return Err(at(format!(
                        "the key bytes {} are not the primary key of the value row (expected {})",
                        hex(record.key),
                        hex(&key)
                    )));
                }
                check_bucket(table, keys, b, record.key, Some(&row)).map_err(at)?;
                Some(row)
            }
            None if keys.pk_is_compacted() => {
                let row = decode_key(table, keys, record.key)
                    .map_err(|e| at(format!("the key bytes {} are not a key of this table: {}", hex(record.key), e.message())))?;
                check_bucket(table, keys, b, record.key, Some(&row)).map_err(at)?;
                None
            }
            None if keys.bucket_is_pk() => {
                check_bucket(table, keys, b, record.key, None).map_err(at)?;
                None
            }
            None => {
                if let Some(o) = &old {
                    check_bucket(table, keys, b, record.key, Some(o)).map_err(at)?;
                }
                None
            }
        };
        let new = apply_one(table, old.as_ref(), value, target);
        let key = entry.into_owned();
        match (old, &new) {
            (None, None) => {}
            (None, Some(n)) => changes.push(Change { change_type: INSERT, key: key.clone(), row: n.clone() }),
            (Some(o), Some(n)) => {
                changes.push(Change { change_type: UPDATE_BEFORE, key: key.clone(), row: o });
                changes.push(Change { change_type: UPDATE_AFTER, key: key.clone(), row: n.clone() });
            }
            (Some(o), None) => changes.push(Change { change_type: DELETE, key: key.clone(), row: o }),
        }
        overlay.insert(key, new);
    }
    if count != batch.record_count().max(0) as u64 {
        return Err(mismatch(table, b, format!("KV batch header says {} records but holds {count}", batch.record_count())));
    }
    let bytes = changelog_batch(table, &changes, writer_id, seq)?;
    let stored = bucket.append(bytes, now_ms)?;
    for c in changes {
        apply_change(bucket, c.change_type, c.key, c.row);
    }
    counters.accepted(count);
    Ok(stored.end_offset)
}

/// The row after one record: `value` is the upsert row, `None` a delete.
fn apply_one(table: &Table, old: Option<&Row>, value: Option<Row>, target: Option<&[bool]>) -> Option<Row> {
    let is_pk = |i: usize| table.pk_indexes.contains(&i);
    match (target, value) {
        (None, value) => value,
        (Some(t), Some(v)) => Some(match old {
            None => v.into_iter().enumerate().map(|(i, x)| if t[i] { x } else { Value::Null }).collect(),
            Some(o) => o.iter().zip(v).enumerate().map(|(i, (o, x))| if t[i] { x } else { o.clone() }).collect(),
        }),
        (Some(t), None) => {
            let o = old?;
            let others_null = o.iter().enumerate().all(|(i, x)| t[i] || is_pk(i) || x.is_null());
            if others_null {
                None
            } else {
                Some(o.iter().enumerate().map(|(i, x)| if t[i] && !is_pk(i) { Value::Null } else { x.clone() }).collect())
            }
        }
    }
}

fn apply_change(bucket: &mut Bucket, change_type: u8, key: Vec<u8>, row: Row) {
    match change_type {
        INSERT | UPDATE_AFTER => {
            bucket.kv.insert(key, row);
        }
        DELETE => {
            bucket.kv.remove(&key);
        }
        _ => {}
    }
}

/// The changelog batch for `changes`, stamped with the KV batch's writer id and sequence.
fn changelog_batch(table: &Table, changes: &[Change], writer_id: i64, seq: i32) -> Result<Vec<u8>> {
    let mut bytes = if changes.is_empty() {
        empty_log_batch(table.schema_id())
    } else {
        let mut rows = RowsToArrow::new(table.schema());
        for c in changes {
            rows.append(&c.row)?;
        }
        let types: Vec<u8> = changes.iter().map(|c| c.change_type).collect();
        build_arrow_log_batch(&rows.finish(), table.schema_id(), Some(&types))?
    };
    stamp_log_batch(&mut bytes, writer_id, seq);
    Ok(bytes)
}

/// A V0 log batch with no records (header only, attributes 0, last offset delta 0): it takes
/// one offset, as the Fluss server's empty changelog batches do.
pub(crate) fn empty_log_batch(schema_id: i16) -> Vec<u8> {
    let mut b = vec![0u8; 48];
    b[8..12].copy_from_slice(&36i32.to_le_bytes());
    b[25..27].copy_from_slice(&schema_id.to_le_bytes());
    b[32..40].copy_from_slice(&(-1i64).to_le_bytes());
    b[40..44].copy_from_slice(&(-1i32).to_le_bytes());
    b
}

/// Re-apply a changelog batch read back on open to the bucket's key-value state.
pub(crate) fn replay_changelog(table: &Table, bucket: &mut Bucket, bytes: &[u8]) -> Result<()> {
    let batch = LogBatch::parse_one(bytes)?;
    if batch.record_count() == 0 {
        return Ok(());
    }
    let types = batch.change_types().map(<[u8]>::to_vec).unwrap_or_default();
    let rows = table.batch_rows(&batch)?;
    if types.len() != rows.len() {
        return Err(Error::internal(format!("changelog batch at offset {} has no change type per row", batch.base_offset())));
    }
    let keys = table.keys()?;
    // The historical partition's rows name the partition they belong to by their values.
    let router = if table.is_historical() { PartitionRouter::new(table.schema(), table.info.partition_keys())? } else { None };
    let mut original = String::new();
    for (ct, row) in types.into_iter().zip(rows) {
        let mut key = Vec::new();
        keys.encode_pk(table.schema(), &row, &mut key)?;
        let key = match &router {
            Some(router) => {
                original.clear();
                router.name_of(table.schema(), &row, &mut original)?;
                kv_key(Some(&original), &key).into_owned()
            }
            None => key,
        };
        apply_change(bucket, ct, key, row);
    }
    Ok(())
}
