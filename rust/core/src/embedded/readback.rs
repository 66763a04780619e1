//! Reading an embedded engine back directly, without Fluss requests: for tests that check what
//! a writer stored, and for users who want to look at their data.
//!
//! These calls are synchronous, lock one bucket at a time only long enough to copy what they
//! need, and keep working after the engine is closed (on the state it had).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{ClientCode, Error, FlussCode, Result};
use crate::metadata::{TableInfo, TablePath};
use crate::row::{Row, Value};
use crate::wire::log_batch::LogBatch;

use super::engine::EmbeddedEngine;

/// The kind of change a log row records (Fluss's `ChangeType`; the byte is its wire value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChangeType {
    /// `+A` (0): a row of a log table.
    AppendOnly,
    /// `+I` (1): a new key in a primary-key table.
    Insert,
    /// `-U` (2): the row of a key before an update.
    UpdateBefore,
    /// `+U` (3): the row of a key after an update.
    UpdateAfter,
    /// `-D` (4): the last row of a deleted key.
    Delete,
}

impl ChangeType {
    /// The change type of a wire byte.
    pub fn from_byte(b: u8) -> Option<ChangeType> {
        Some(match b {
            0 => ChangeType::AppendOnly,
            1 => ChangeType::Insert,
            2 => ChangeType::UpdateBefore,
            3 => ChangeType::UpdateAfter,
            4 => ChangeType::Delete,
            _ => return None,
        })
    }

    /// The wire byte.
    pub fn to_byte(self) -> u8 {
        match self {
            ChangeType::AppendOnly => 0,
            ChangeType::Insert => 1,
            ChangeType::UpdateBefore => 2,
            ChangeType::UpdateAfter => 3,
            ChangeType::Delete => 4,
        }
    }

    /// `+A`, `+I`, `-U`, `+U` or `-D`.
    pub fn short_string(self) -> &'static str {
        match self {
            ChangeType::AppendOnly => "+A",
            ChangeType::Insert => "+I",
            ChangeType::UpdateBefore => "-U",
            ChangeType::UpdateAfter => "+U",
            ChangeType::Delete => "-D",
        }
    }
}

/// One row of a bucket's log, with its offset.
#[derive(Clone, Debug, PartialEq)]
pub struct ScannedRow {
    /// Offset in the bucket's log (changelog for primary-key tables).
    pub offset: i64,
    /// Append, insert, update before/after or delete.
    pub change_type: ChangeType,
    /// The row's values in schema order.
    pub row: Row,
}

/// Counters of an engine since it was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// Log and KV batches appended (duplicates not counted).
    pub batches_accepted: u64,
    /// Records in those batches (rows of log batches, records of KV batches).
    pub records_accepted: u64,
    /// Batches recognised as retries of an accepted batch and answered without appending.
    pub duplicates_dropped: u64,
    /// Bucket entries answered with an error (injected faults included).
    pub batches_rejected: u64,
}

/// Live counters behind [`EngineStats`].
#[derive(Default)]
pub(crate) struct Counters {
    batches: AtomicU64,
    records: AtomicU64,
    duplicates: AtomicU64,
    rejected: AtomicU64,
}

impl Counters {
    pub(crate) fn accepted(&self, records: u64) {
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.records.fetch_add(records, Ordering::Relaxed);
    }

    pub(crate) fn duplicate(&self) {
        self.duplicates.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn rejected(&self) {
        self.rejected.fetch_add(1, Ordering::Relaxed);
    }

    fn snapshot(&self) -> EngineStats {
        EngineStats {
            batches_accepted: self.batches.load(Ordering::Relaxed),
            records_accepted: self.records.load(Ordering::Relaxed),
            duplicates_dropped: self.duplicates.load(Ordering::Relaxed),
            batches_rejected: self.rejected.load(Ordering::Relaxed),
        }
    }
}

impl EmbeddedEngine {
    /// Every row of `bucket` from `from_offset` on, in offset order: the appended rows of a log
    /// table (`AppendOnly`), or the changelog of a primary-key table (`Insert`, `UpdateBefore`,
    /// `UpdateAfter`, `Delete`). Empty changelog batches take an offset but yield no row.
    pub fn scan(&self, table: &TablePath, bucket: i32, from_offset: i64) -> Result<Vec<ScannedRow>> {
        self.scan_partition(table, None, bucket, from_offset)
    }

    /// [`scan`](Self::scan) of a bucket of partition `partition` (its name) of a partitioned
    /// table (`None`: a table without partitions). `PARTITION_NOT_EXISTS` if there is no such
    /// partition.
    pub fn scan_partition(&self, table: &TablePath, partition: Option<&str>, bucket: i32, from_offset: i64) -> Result<Vec<ScannedRow>> {
        let t = self.physical_table(table, partition)?;
        let batches = {
            let b = t.bucket(bucket).ok_or_else(|| t.no_bucket(bucket))?;
            b.batches_from(from_offset.max(0)).to_vec()
        };
        let mut out = Vec::new();
        for stored in batches {
            let batch = LogBatch::parse_one(&stored.bytes)?;
            if batch.record_count() == 0 {
                continue;
            }
            let rows = t.batch_rows(&batch)?;
            let types = batch.change_types();
            for (i, row) in rows.into_iter().enumerate() {
                let offset = stored.base_offset + i as i64;
                if offset < from_offset {
                    continue;
                }
                let change_type = match types {
                    None => ChangeType::AppendOnly,
                    Some(ct) => ct.get(i).copied().and_then(ChangeType::from_byte).ok_or_else(|| {
                        Error::internal(format!("batch at offset {} has a bad change type for row {i}", stored.base_offset))
                    })?,
                };
                out.push(ScannedRow { offset, change_type, row });
            }
        }
        Ok(out)
    }

    /// The current row of a primary-key table for `key` (the primary-key values, in key
    /// order), or `None` if the key is absent. Fails with `NON_PRIMARY_KEY_TABLE_EXCEPTION` on
    /// a log table and with `INVALID_ROW` if the values do not fit the key columns.
    ///
    /// For a partitioned table the key holds every primary-key column, partition columns
    /// included: they name the partition (a partition that does not exist holds no key).
    pub fn lookup(&self, table: &TablePath, key: &[Value]) -> Result<Option<Row>> {
        let t = self.table(table)?;
        if t.key_schema.is_none() {
            return Err(Error::server(FlussCode::NON_PRIMARY_KEY_TABLE, format!("table {table} has no primary key")));
        }
        // The expired partition the key belongs to, when its rows live in the table's
        // historical partition (Fluss 1.0): the key is looked up in that partition's namespace.
        let mut original = None;
        let (t, key) = if t.info.is_partitioned() {
            let (name, physical) = crate::metadata::partition::split_partitioned_key(&t.info, key)?;
            match self.partition(table, &name) {
                Ok(p) => (p, physical),
                Err(e) if e.code() == FlussCode::PARTITION_NOT_EXISTS => {
                    let expired = crate::metadata::partition::expired_to_historical(&t.info.descriptor, &name);
                    match self.partition(table, crate::metadata::partition::HISTORICAL_PARTITION) {
                        Ok(h) if expired => {
                            original = Some(name);
                            (h, physical)
                        }
                        _ => return Ok(None),
                    }
                }
                Err(e) => return Err(e),
            }
        } else {
            (t, key.to_vec())
        };
        let key = &key[..];
        let ks = t.key_schema.as_ref().expect("a primary-key table");
        if key.len() != ks.len() {
            return Err(Error::invalid_row(format!(
                "table {table} has {} primary-key columns but {} key values were given",
                ks.len(),
                key.len()
            )));
        }
        let mut row = vec![Value::Null; t.schema().len()];
        for (v, &i) in key.iter().zip(&t.pk_indexes) {
            row[i] = v.clone();
        }
        let keys = t.keys()?;
        let mut key_bytes = Vec::new();
        keys.encode_pk(t.schema(), &row, &mut key_bytes)?;
        let bucket = keys.kv_bucket(t.schema(), &row, &key_bytes, &mut Vec::new())?;
        let b = t.bucket(bucket).ok_or_else(|| t.no_bucket(bucket))?;
        Ok(b.kv.get(super::catalog::kv_key(original.as_deref(), &key_bytes).as_ref()).cloned().map(|r| t.fit(r)))
    }

    /// The table as the engine stores it (descriptor after defaults).
    pub fn table_info(&self, table: &TablePath) -> Result<TableInfo> {
        Ok(self.table(table)?.info.clone())
    }

    /// The high watermark (= log end offset) of a bucket.
    pub fn high_watermark(&self, table: &TablePath, bucket: i32) -> Result<i64> {
        self.high_watermark_partition(table, None, bucket)
    }

    /// [`high_watermark`](Self::high_watermark) of a partition's bucket.
    pub fn high_watermark_partition(&self, table: &TablePath, partition: Option<&str>, bucket: i32) -> Result<i64> {
        let t = self.physical_table(table, partition)?;
        let b = t.bucket(bucket).ok_or_else(|| t.no_bucket(bucket))?;
        Ok(b.end_offset)
    }

    /// Number of keys a primary-key table holds in all buckets (of all partitions; 0 for a log
    /// table).
    pub fn kv_len(&self, table: &TablePath) -> Result<usize> {
        let t = self.table(table)?;
        let tables = if t.info.is_partitioned() { self.partitions_of(table)? } else { vec![t] };
        Ok(tables.iter().map(|t| (0..t.bucket_count()).map(|b| t.bucket(b).map_or(0, |b| b.kv.len())).sum::<usize>()).sum())
    }

    /// The names of a partitioned table's partitions, in name order.
    pub fn partition_names(&self, table: &TablePath) -> Result<Vec<String>> {
        Ok(self.partitions_of(table)?.iter().filter_map(|p| p.partition_name().map(str::to_string)).collect())
    }

    /// The physical table of `(table, partition)`: `INVALID_TABLE` if `partition` is given for
    /// a table without partitions or missing for a partitioned one.
    fn physical_table(&self, table: &TablePath, partition: Option<&str>) -> Result<std::sync::Arc<super::catalog::Table>> {
        let t = self.table(table)?;
        match (t.info.is_partitioned(), partition) {
            (false, None) => Ok(t),
            (true, Some(p)) => self.partition(table, p),
            (false, Some(_)) => Err(Error::client(ClientCode::InvalidTable, format!("table {table} is not partitioned"))),
            (true, None) => Err(Error::client(ClientCode::InvalidTable, format!("table {table} is partitioned: name the partition"))),
        }
    }

    /// Counters since the engine was opened.
    pub fn stats(&self) -> EngineStats {
        self.counters.snapshot()
    }
}
