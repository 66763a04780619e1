//! Read-back through the Fluss protocol, for verification and examples: scan a bucket's log and
//! look up primary keys. Built only on [`Backend`](crate::backend::Backend), so it works the same
//! on the embedded engine and on a real cluster (ListOffsets, FetchLog, Lookup to the bucket's
//! leader). Transient errors right after a table was created or a leader changed
//! (`NOT_LEADER_OR_FOLLOWER`, `LEADER_NOT_AVAILABLE`, ...) are retried for up to
//! `client.request-timeout`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::backend::Backend;
use crate::cluster::readback::{fetch_log_routed, list_offsets_routed, lookup_routed, LATEST_OFFSET};
use crate::connection::ConnInner;
use crate::embedded::{ChangeType, ScannedRow};
use crate::error::{ClientCode, Error, FlussCode, Result};
use crate::metadata::partition::{expired_to_historical, split_partitioned_key, HISTORICAL_PARTITION};
use crate::metadata::{Schema, TableInfo};
use crate::row::{Row, Value};
use crate::wire::arrow::record_batch_to_rows;
use crate::wire::compacted::decode_row;
use crate::wire::key::KeyCodec;
use crate::wire::log_batch::LogBatch;

/// Run `attempt` against the leader of `bucket` (of `partition`, by name, for a partitioned
/// table) until it succeeds, fails for good, or the retry budget (`client.request-timeout`) is
/// spent. After an error that means the leader is unknown or moved (`NETWORK_EXCEPTION`,
/// `NOT_LEADER_OR_FOLLOWER`, ...), the next attempt looks it up again. `attempt` gets the leader
/// the partition id and the bucket count to name in the request (`routing_bucket_count`: the
/// partition's own, when the server has per-partition bucket counts).
fn at_leader<T, F, Fut>(conn: &Arc<ConnInner>, info: &TableInfo, partition: Option<&str>, bucket: i32, what: &str, attempt: F) -> Result<T>
where
    T: Send + 'static,
    F: Fn(i32, Option<i64>, Option<i32>) -> Fut,
    Fut: Future<Output = Result<T>> + Send + 'static,
{
    // A partition has its own bucket count (Fluss 1.0): its range is checked with its metadata.
    if bucket < 0 || (!info.is_partitioned() && bucket >= info.bucket_count()) {
        return Err(Error::invalid_row(format!("bucket {bucket} is out of range (the table has {} buckets)", info.bucket_count())));
    }
    match (info.is_partitioned(), partition) {
        (true, None) => return Err(Error::client(ClientCode::InvalidTable, format!("{} is partitioned: name the partition", info.path))),
        (false, Some(_)) => return Err(Error::client(ClientCode::InvalidTable, format!("{} is not partitioned", info.path))),
        _ => {}
    }
    let deadline = Instant::now() + conn.config.request_timeout;
    let mut leader = None;
    loop {
        let result = match leader {
            Some((l, p, n)) => conn.block_on(attempt(l, p, n)),
            None => leader_of(conn, info, partition, bucket).and_then(|(l, p, n)| {
                leader = Some((l, p, n));
                conn.block_on(attempt(l, p, n))
            }),
        };
        match result {
            Ok(v) => return Ok(v),
            Err(e) if e.is_retriable() && Instant::now() < deadline => {
                if FlussCode::is_invalid_metadata(e.code()) {
                    leader = None;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e.context(what)),
        }
    }
}

/// The current leader of `bucket` and the partition id, or `LEADER_NOT_AVAILABLE` (retriable)
/// if it has no leader; `PARTITION_NOT_EXISTS` for a partition that does not exist.
fn leader_of(conn: &Arc<ConnInner>, info: &TableInfo, partition: Option<&str>, bucket: i32) -> Result<(i32, Option<i64>, Option<i32>)> {
    let (pid, leaders) = match partition {
        None => (None, crate::admin::load_table(conn, &info.path)?.1),
        Some(p) => {
            let (id, leaders) = crate::admin::load_partition(conn, info, p)?;
            if bucket as usize >= leaders.len() {
                return Err(Error::invalid_row(format!(
                    "bucket {bucket} is out of range (partition {p} of {} has {} buckets)",
                    info.path,
                    leaders.len()
                )));
            }
            (Some(id), leaders)
        }
    };
    let leader = leaders
        .get(bucket as usize)
        .copied()
        .flatten()
        .ok_or_else(|| Error::server(FlussCode::LEADER_NOT_AVAILABLE, format!("bucket {bucket} of {} has no leader", info.path)))?;
    let routing = info.bucket_count_epoch.map(|_| leaders.len() as i32);
    Ok((leader, pid, routing))
}

/// The schemas of a table by id, loaded when a batch or value names one: rows are read with the
/// schema they were written with and returned in the schema of `info` (nulls in the columns
/// added since; columns added after `info` was loaded are left out: get the table again to see
/// them).
struct Schemas<'a> {
    conn: &'a Arc<ConnInner>,
    info: &'a TableInfo,
    by_id: HashMap<i16, Schema>,
}

impl<'a> Schemas<'a> {
    fn new(conn: &'a Arc<ConnInner>, info: &'a TableInfo) -> Schemas<'a> {
        Schemas { conn, info, by_id: HashMap::new() }
    }

    fn get(&mut self, id: i16) -> Result<&Schema> {
        if id as i32 == self.info.schema_id {
            return Ok(self.info.schema());
        }
        if !self.by_id.contains_key(&id) {
            let s = crate::admin::load_schema(self.conn, &self.info.path, id as i32)?;
            self.by_id.insert(id, s);
        }
        Ok(&self.by_id[&id])
    }
}

/// Every record of `bucket` (of `partition` for a partitioned table) from `from_offset` to the
/// high watermark, in the table schema (log tables: appended rows; primary-key tables: the
/// changelog).
pub(crate) fn scan(
    conn: &Arc<ConnInner>,
    info: &TableInfo,
    partition: Option<&str>,
    bucket: i32,
    from_offset: i64,
) -> Result<Vec<ScannedRow>> {
    let backend: Arc<dyn Backend> = conn.backend.clone();
    let table_id = info.table_id;
    let hw = at_leader(conn, info, partition, bucket, "ListOffsets", |leader, pid, n| {
        let b = backend.clone();
        async move { Ok(list_offsets_routed(&*b, leader, table_id, pid, n, &[bucket], LATEST_OFFSET).await?.first().map_or(0, |x| x.1)) }
    })?;
    let mut schemas = Schemas::new(conn, info);
    let mut out = Vec::new();
    let mut next = from_offset.max(0);
    while next < hw {
        let (_, bytes): (i64, Bytes) = at_leader(conn, info, partition, bucket, "FetchLog", |leader, pid, n| {
            let b = backend.clone();
            async move { fetch_log_routed(&*b, leader, table_id, pid, n, bucket, next, 8 << 20).await }
        })?;
        let batches = LogBatch::parse_all(&bytes)?;
        if batches.is_empty() {
            return Err(Error::protocol(format!("FetchLog of bucket {bucket} from offset {next} returned no complete batch")));
        }
        for batch in batches {
            if batch.last_offset() < next {
                continue;
            }
            batch.check_crc()?;
            if batch.record_count() > 0 {
                let schema = schemas.get(batch.schema_id())?;
                let mut rows = record_batch_to_rows(schema, &batch.decode(schema)?)?;
                rows.iter_mut().for_each(|r| r.resize(info.schema().len(), Value::Null));
                let cts = batch.change_types();
                for (i, row) in rows.into_iter().enumerate() {
                    let offset = batch.base_offset() + i as i64;
                    if offset < next || offset >= hw {
                        continue;
                    }
                    let ct = cts.map_or(0, |c| c[i]);
                    let change_type = ChangeType::from_byte(ct).ok_or_else(|| Error::protocol(format!("unknown change type {ct}")))?;
                    out.push(ScannedRow { offset, change_type, row });
                }
            }
            next = next.max(batch.last_offset() + 1);
        }
    }
    Ok(out)
}

/// The stored row of a primary key (`key`: the key values in primary-key order, partition
/// columns included for a partitioned table), or `None` (also for a partition that does not
/// exist).
pub(crate) fn lookup_key(conn: &Arc<ConnInner>, info: &TableInfo, key: &[Value]) -> Result<Option<Row>> {
    let schema = info.schema();
    let pk_full = schema.primary_key_indexes();
    if pk_full.is_empty() {
        return Err(Error::client(
            crate::ClientCode::Unsupported,
            format!("{} is a log table: it has no primary key to look up", info.path),
        ));
    }
    if key.len() != pk_full.len() {
        return Err(Error::invalid_row(format!("the key has {} values but the primary key has {} columns", key.len(), pk_full.len())));
    }
    let mut row = vec![Value::Null; schema.len()];
    for (v, &i) in key.iter().zip(&pk_full) {
        row[i] = v.clone();
    }
    let mut partition = if info.is_partitioned() { Some(split_partitioned_key(info, key)?.0) } else { None };
    // The expired partition the key belongs to, when its rows are read from the table's
    // historical partition (Fluss 1.0).
    let mut original = None;
    // The key's bucket by its partition's own bucket count (Fluss 1.0 per-partition counts).
    let keys = match partition.clone() {
        Some(p) if info.bucket_count_epoch.is_some() => match crate::admin::load_partition_counted(conn, info, &p) {
            Ok((_, _, n)) => KeyCodec::new(&info.with_bucket_count(n))?,
            Err(e) if e.code() == FlussCode::PARTITION_NOT_EXISTS => {
                // Gone: an expired partition of a table with historical partitions lives on in
                // its historical partition; any other holds no key.
                if !expired_to_historical(&info.descriptor, &p) {
                    return Ok(None);
                }
                match crate::admin::load_partition_counted(conn, info, HISTORICAL_PARTITION) {
                    Ok((_, _, n)) => {
                        partition = Some(HISTORICAL_PARTITION.to_string());
                        original = Some(p);
                        KeyCodec::new(&info.with_bucket_count(n))?
                    }
                    Err(e) if e.code() == FlussCode::PARTITION_NOT_EXISTS => return Ok(None),
                    Err(e) => return Err(e.context("Lookup")),
                }
            }
            Err(e) => return Err(e.context("Lookup")),
        },
        _ => KeyCodec::new(info)?,
    };
    let mut key_bytes = Vec::new();
    keys.encode_pk(schema, &row, &mut key_bytes)?;
    let bucket = keys.kv_bucket(schema, &row, &key_bytes, &mut Vec::new())?;
    let backend: Arc<dyn Backend> = conn.backend.clone();
    let table_id = info.table_id;
    let key_bytes = Bytes::from(key_bytes);
    let values = match at_leader(conn, info, partition.as_deref(), bucket, "Lookup", |leader, pid, n| {
        let b = backend.clone();
        let (k, o) = (key_bytes.clone(), original.clone());
        async move { lookup_routed(&*b, leader, table_id, pid, n, bucket, vec![k], o).await }
    }) {
        Err(e) if e.code() == FlussCode::PARTITION_NOT_EXISTS => return Ok(None),
        other => other?,
    };
    match values.into_iter().next().flatten() {
        None => Ok(None),
        Some(v) if v.len() >= 2 => {
            // The value is stored in the schema it was written with (its id leads it).
            let mut schemas = Schemas::new(conn, info);
            let mut row = decode_row(schemas.get(i16::from_le_bytes([v[0], v[1]]))?, &v[2..])?;
            row.resize(schema.len(), Value::Null);
            Ok(Some(row))
        }
        Some(_) => Err(Error::protocol("a Lookup value shorter than its schema id")),
    }
}
