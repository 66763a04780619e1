//! Tests of the embedded engine through the Fluss requests a writer sends, plus the read-back
//! and fault-injection APIs. Inputs are built with the wire builders, so these also check that
//! the engine accepts exactly what the SDK's encoders produce.

// `&row![..]` reads better than a slice literal for key values.
#![allow(clippy::useless_vec)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::*;
use crate::backend::{call, Backend, Dest, Rpc};
use crate::config::{Config, FsyncPolicy};
use crate::error::{ClientCode, Error, FlussCode, Result};
use crate::metadata::{descriptor_to_json, DataType, Schema, TableDescriptor, TablePath};
use crate::row::{Row, Value};
use crate::wire::arrow::{record_batch_to_rows, RowsToArrow};
use crate::wire::bucketing::bucket_for_key;
use crate::wire::compacted::{decode_row, encode_row};
use crate::wire::key::encode_key;
use crate::wire::kv_batch::{stamp_kv_batch, KvBatchBuilder};
use crate::wire::log_batch::{build_arrow_log_batch, stamp_log_batch, LogBatch};
use crate::wire::proto;
use crate::{row, Column};

// ===== helpers =====

/// A unique directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!("fluss-embedded-{}-{name}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_dir_all(&p);
        TempDir(p)
    }

    fn location(&self) -> String {
        format!("embedded:{}", self.0.display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap()
}

fn send<R: Rpc>(engine: &EmbeddedEngine, req: R) -> Result<R::Response> {
    rt().block_on(call(engine, Dest::Any, req))
}

fn memory() -> Arc<EmbeddedEngine> {
    EmbeddedEngine::open("embedded", &Config::default()).unwrap()
}

fn pb(path: &TablePath) -> proto::PbTablePath {
    proto::PbTablePath { database_name: path.database.clone(), table_name: path.table.clone() }
}

fn create_table(engine: &EmbeddedEngine, path: &TablePath, d: &TableDescriptor) -> Result<()> {
    send(
        engine,
        proto::CreateTableRequest { table_path: pb(path), table_json: Bytes::from(descriptor_to_json(d)), ignore_if_exists: false },
    )
    .map(|_| ())
}

fn log_schema() -> Schema {
    Schema::builder().column_not_null("id", DataType::BigInt).column("msg", DataType::String).build().unwrap()
}

fn pk_schema() -> Schema {
    Schema::builder()
        .column_not_null("id", DataType::Int)
        .column("name", DataType::String)
        .column("age", DataType::BigInt)
        .primary_key(["id"])
        .build()
        .unwrap()
}

/// A log table with `buckets` buckets in database `fluss`; returns (path, table id).
fn log_table(engine: &EmbeddedEngine, name: &str, buckets: i32) -> (TablePath, i64) {
    let path = TablePath::new("fluss", name).unwrap();
    create_table(engine, &path, &TableDescriptor::new(log_schema()).with_bucket_count(buckets)).unwrap();
    let id = engine.table_info(&path).unwrap().table_id;
    (path, id)
}

fn pk_table(engine: &EmbeddedEngine, name: &str, buckets: i32) -> (TablePath, i64) {
    let path = TablePath::new("fluss", name).unwrap();
    create_table(engine, &path, &TableDescriptor::new(pk_schema()).with_bucket_count(buckets)).unwrap();
    let id = engine.table_info(&path).unwrap().table_id;
    (path, id)
}

/// An ARROW log batch of `rows`, stamped with writer id and sequence.
fn log_batch(schema: &Schema, rows: &[Row], writer_id: i64, seq: i32) -> Vec<u8> {
    let mut b = RowsToArrow::new(schema);
    for r in rows {
        b.append(r).unwrap();
    }
    let mut bytes = build_arrow_log_batch(&b.finish(), 1, None).unwrap();
    stamp_log_batch(&mut bytes, writer_id, seq);
    bytes
}

fn produce_req(table_id: i64, entries: Vec<(i32, Vec<u8>)>) -> proto::ProduceLogRequest {
    proto::ProduceLogRequest {
        acks: -1,
        table_id,
        timeout_ms: 30_000,
        buckets_req: entries
            .into_iter()
            .map(|(b, records)| proto::PbProduceLogReqForBucket {
                partition_id: None,
                bucket_id: b,
                records: records.into(),
                routing_bucket_count: None,
                original_partition_name: None,
            })
            .collect(),
    }
}

/// Produce one batch to one bucket: Ok(base offset) or Err((code, message)).
fn produce(engine: &EmbeddedEngine, table_id: i64, bucket: i32, batch: Vec<u8>) -> std::result::Result<i64, (i32, String)> {
    let resp = send(engine, produce_req(table_id, vec![(bucket, batch)])).unwrap();
    entry(&resp.buckets_resp[0].error_code, &resp.buckets_resp[0].error_message, resp.buckets_resp[0].base_offset)
}

fn entry(code: &Option<i32>, msg: &Option<String>, value: Option<i64>) -> std::result::Result<i64, (i32, String)> {
    match code {
        Some(c) => Err((*c, msg.clone().unwrap_or_default())),
        None => Ok(value.expect("a successful entry carries its offset")),
    }
}

/// One KV record: an upsert of a full row, or a delete of the key values.
enum Op {
    Upsert(Row),
    Delete(Row),
}

fn key_of(schema: &Schema, op: &Op) -> Vec<u8> {
    let mut key = Vec::new();
    match op {
        Op::Upsert(r) => encode_key(schema, &schema.primary_key_indexes(), r, &mut key).unwrap(),
        Op::Delete(k) => {
            let cols: Vec<Column> = schema.primary_key_indexes().iter().map(|&i| schema.columns()[i].clone()).collect();
            let ks = Schema::new(cols, vec![]).unwrap();
            encode_key(&ks, &(0..ks.len()).collect::<Vec<_>>(), k, &mut key).unwrap()
        }
    }
    key
}

fn kv_batch(schema: &Schema, ops: &[Op], writer_id: i64, seq: i32) -> Vec<u8> {
    let mut b = KvBatchBuilder::new(1);
    for op in ops {
        let key = key_of(schema, op);
        match op {
            Op::Upsert(r) => {
                let mut v = Vec::new();
                encode_row(schema, r, &mut v).unwrap();
                b.append(&key, Some(&v));
            }
            Op::Delete(_) => b.append(&key, None),
        }
    }
    let mut bytes = b.finish();
    stamp_kv_batch(&mut bytes, writer_id, seq);
    bytes
}

/// The bucket of a PK-table key (bucket key = primary key).
fn bucket_of(schema: &Schema, op: &Op, buckets: i32) -> i32 {
    bucket_for_key(&key_of(schema, op), buckets)
}

fn put_req(table_id: i64, target: Vec<i32>, entries: Vec<(i32, Vec<u8>)>) -> proto::PutKvRequest {
    proto::PutKvRequest {
        acks: -1,
        table_id,
        timeout_ms: 30_000,
        target_columns: target,
        buckets_req: entries
            .into_iter()
            .map(|(b, records)| proto::PbPutKvReqForBucket {
                partition_id: None,
                bucket_id: b,
                records: records.into(),
                routing_bucket_count: None,
                original_partition_name: None,
            })
            .collect(),
        agg_mode: None,
    }
}

fn put(engine: &EmbeddedEngine, table_id: i64, target: Vec<i32>, bucket: i32, batch: Vec<u8>) -> std::result::Result<i64, (i32, String)> {
    let resp = send(engine, put_req(table_id, target, vec![(bucket, batch)])).unwrap();
    let e = &resp.buckets_resp[0];
    entry(&e.error_code, &e.error_message, e.log_end_offset)
}

fn init_writer(engine: &EmbeddedEngine) -> i64 {
    send(engine, proto::InitWriterRequest { table_path: vec![] }).unwrap().writer_id
}

fn changes(rows: &[ScannedRow]) -> Vec<(i64, &'static str, Row)> {
    rows.iter().map(|r| (r.offset, r.change_type.short_string(), r.row.clone())).collect()
}

fn assert_code<T: std::fmt::Debug>(r: Result<T>, code: i32) -> Error {
    let e = r.expect_err("expected an error");
    assert_eq!(e.code(), code, "{e}");
    e
}

// ===== DDL =====

#[test]
fn ddl_happy_and_error_paths() {
    let e = memory();
    let dbs = send(&e, proto::ListDatabasesRequest {}).unwrap().database_name;
    assert_eq!(dbs, vec!["fluss".to_string()]);
    let create_db = |name: &str, ignore: bool| {
        send(&e, proto::CreateDatabaseRequest { database_name: name.into(), ignore_if_exists: ignore, database_json: None })
    };
    create_db("shop", false).unwrap();
    assert_code(create_db("shop", false), FlussCode::DATABASE_ALREADY_EXIST);
    create_db("shop", true).unwrap();
    assert_code(create_db("bad name", false), 16);
    assert!(send(&e, proto::DatabaseExistsRequest { database_name: "shop".into() }).unwrap().exists);
    assert!(!send(&e, proto::DatabaseExistsRequest { database_name: "nope".into() }).unwrap().exists);

    let orders = TablePath::new("shop", "orders").unwrap();
    let d = TableDescriptor::new(pk_schema());
    assert_code(create_table(&e, &TablePath::new("nope", "t").unwrap(), &d), FlussCode::DATABASE_NOT_EXIST);
    create_table(&e, &orders, &d).unwrap();
    assert_code(create_table(&e, &orders, &d), FlussCode::TABLE_ALREADY_EXIST);
    send(&e, proto::CreateTableRequest { table_path: pb(&orders), table_json: descriptor_to_json(&d).into(), ignore_if_exists: true })
        .unwrap();
    let bad_json = proto::CreateTableRequest {
        table_path: pb(&TablePath::new("shop", "x").unwrap()),
        table_json: Bytes::from_static(b"{"),
        ignore_if_exists: false,
    };
    assert_code(send(&e, bad_json), FlussCode::INVALID_TABLE);
    let merge = TableDescriptor::new(pk_schema()).with_property("table.merge-engine", "first_row");
    let err = assert_code(create_table(&e, &TablePath::new("shop", "m").unwrap(), &merge), FlussCode::INVALID_CONFIG);
    assert!(err.message().contains("not supported by the embedded engine"), "{err}");
    let free = TableDescriptor::new(pk_schema()).with_property("owner", "me");
    assert_code(create_table(&e, &TablePath::new("shop", "f").unwrap(), &free), FlussCode::INVALID_CONFIG);

    // GetTableInfo returns the descriptor after defaults.
    let info = send(&e, proto::GetTableInfoRequest { table_path: pb(&orders) }).unwrap();
    assert_eq!(info.schema_id, 1);
    let stored = crate::metadata::descriptor_from_json(&info.table_json).unwrap();
    assert_eq!(stored.bucket_count, Some(1));
    assert_eq!(stored.bucket_key, vec!["id".to_string()]);
    assert_eq!(e.table_info(&orders).unwrap().descriptor, stored);
    assert_code(
        send(&e, proto::GetTableInfoRequest { table_path: pb(&TablePath::new("shop", "none").unwrap()) }),
        FlussCode::TABLE_NOT_EXIST,
    );

    let tables = send(&e, proto::ListTablesRequest { database_name: "shop".into() }).unwrap().table_name;
    assert_eq!(tables, vec!["orders".to_string()]);
    assert_code(send(&e, proto::ListTablesRequest { database_name: "nope".into() }), FlussCode::DATABASE_NOT_EXIST);
    assert!(send(&e, proto::TableExistsRequest { table_path: pb(&orders) }).unwrap().exists);

    // Metadata: one node, leader 0 for every bucket; a missing table fails the request.
    let (events, _) = log_table(&e, "events", 3);
    let md = send(&e, proto::MetadataRequest { table_path: vec![pb(&events)], ..Default::default() }).unwrap();
    assert_eq!(md.coordinator_server.as_ref().unwrap().node_id, 0);
    assert_eq!(md.tablet_servers.len(), 1);
    let buckets = &md.table_metadata[0].bucket_metadata;
    assert_eq!(buckets.len(), 3);
    assert!(buckets.iter().all(|b| b.leader_id == Some(0)));
    let missing =
        proto::MetadataRequest { table_path: vec![pb(&events), pb(&TablePath::new("fluss", "gone").unwrap())], ..Default::default() };
    assert_code(send(&e, missing), FlussCode::TABLE_NOT_EXIST);

    // Drops.
    let drop_db = |name: &str, cascade: bool| {
        send(&e, proto::DropDatabaseRequest { database_name: name.into(), ignore_if_not_exists: false, cascade })
    };
    assert_code(drop_db("shop", false), FlussCode::DATABASE_NOT_EMPTY);
    assert_code(drop_db("nope", false), FlussCode::DATABASE_NOT_EXIST);
    drop_db("shop", true).unwrap();
    assert!(!send(&e, proto::TableExistsRequest { table_path: pb(&orders) }).unwrap().exists);
    let drop_t = |p: &TablePath, ignore: bool| send(&e, proto::DropTableRequest { table_path: pb(p), ignore_if_not_exists: ignore });
    drop_t(&events, false).unwrap();
    assert_code(drop_t(&events, false), FlussCode::TABLE_NOT_EXIST);
    drop_t(&events, true).unwrap();
    // Table ids are never reused.
    let (_, id) = log_table(&e, "events", 1);
    assert!(id > 2, "table id {id}");
}

#[test]
fn api_versions_and_closed_engine() {
    let e = memory();
    let v = send(&e, proto::ApiVersionsRequest { client_software_name: "t".into(), client_software_version: "0".into() }).unwrap();
    let putkv = v.api_versions.iter().find(|a| a.api_key == 1016).unwrap();
    assert_eq!((putkv.min_version, putkv.max_version), (0, 3), "PutKv v2 (back-pressure) and v3 (historical partitions), Fluss 1.0");
    let produce = v.api_versions.iter().find(|a| a.api_key == 1014).unwrap();
    assert_eq!(produce.max_version, 1, "ProduceLog v1 (historical partitions), Fluss 1.0.0");
    e.close();
    let err = send(&e, proto::ListDatabasesRequest {}).unwrap_err();
    assert_eq!(err.client_code(), Some(ClientCode::ConnectionClosed));
    assert!(e.describe().contains("embedded"));
}

// ===== log tables =====

#[test]
fn produce_fetch_scan_round_trip() {
    let e = memory();
    let (path, id) = log_table(&e, "events", 2);
    let s = log_schema();
    let b0 = log_batch(&s, &[row![1i64, "a"], row![2i64, "b"], row![3i64, None::<String>]], -1, -1);
    assert_eq!(produce(&e, id, 0, b0.clone()), Ok(0));
    assert_eq!(produce(&e, id, 0, log_batch(&s, &[row![4i64, "d"]], -1, -1)), Ok(3));
    assert_eq!(produce(&e, id, 1, log_batch(&s, &[row![9i64, "z"]], -1, -1)), Ok(0));
    assert_eq!(e.high_watermark(&path, 0).unwrap(), 4);

    let offsets = |t: i32| {
        send(
            &e,
            proto::ListOffsetsRequest {
                follower_server_id: -1,
                offset_type: t,
                table_id: id,
                partition_id: None,
                bucket_id: vec![0, 1, 5],
                start_timestamp: None,
                routing_bucket_count: None,
            },
        )
        .unwrap()
        .buckets_resp
    };
    let latest = offsets(1);
    assert_eq!((latest[0].offset, latest[1].offset), (Some(4), Some(1)));
    assert_eq!(latest[2].error_code, Some(FlussCode::UNKNOWN_TABLE_OR_BUCKET));
    assert_eq!(offsets(0)[0].offset, Some(0));

    // Fetch returns the stored batches, identical to what was produced except offset and time.
    let fetch = |offset: i64, max: i32| {
        let r = send(
            &e,
            proto::FetchLogRequest {
                follower_server_id: -1,
                max_bytes: max,
                tables_req: vec![proto::PbFetchLogReqForTable {
                    table_id: id,
                    projection_pushdown_enabled: false,
                    projected_fields: vec![],
                    buckets_req: vec![proto::PbFetchLogReqForBucket {
                        partition_id: None,
                        bucket_id: 0,
                        fetch_offset: offset,
                        max_fetch_bytes: max,
                        routing_bucket_count: None,
                    }],
                }],
                max_wait_ms: None,
                min_bytes: None,
            },
        )
        .unwrap();
        r.tables_resp[0].buckets_resp[0].clone()
    };
    let all = fetch(0, 1 << 20);
    assert_eq!(all.high_watermark, Some(4));
    let records = all.records.unwrap();
    let batches = LogBatch::parse_all(&records).unwrap();
    assert_eq!(batches.len(), 2);
    assert_eq!((batches[0].base_offset(), batches[1].base_offset()), (0, 3));
    assert!(batches[0].commit_timestamp() > 0 && batches[0].verify_crc());
    assert_eq!(&batches[0].bytes()[21..], &b0[21..], "stored bytes differ beyond offset/timestamp");
    let rows = record_batch_to_rows(&s, &batches[0].decode(&s).unwrap()).unwrap();
    assert_eq!(rows[2], row![3i64, Value::Null]);
    // A small max_bytes still returns one whole batch; fetching from the middle of a batch
    // returns that batch; the high watermark gives an empty answer; beyond it is an error.
    assert_eq!(LogBatch::parse_all(&fetch(0, 10).records.unwrap()).unwrap().len(), 1);
    assert_eq!(LogBatch::parse_all(&fetch(1, 1 << 20).records.unwrap()).unwrap()[0].base_offset(), 0);
    assert!(fetch(4, 1 << 20).records.unwrap().is_empty());
    assert_eq!(fetch(5, 1 << 20).error_code, Some(19));

    let scanned = e.scan(&path, 0, 2).unwrap();
    assert_eq!(changes(&scanned), vec![(2, "+A", row![3i64, Value::Null]), (3, "+A", row![4i64, "d"])]);
    assert_eq!(e.stats().batches_accepted, 3);
    assert_eq!(e.stats().records_accepted, 5);

    // Unknown bucket / table.
    assert_eq!(produce(&e, id, 2, log_batch(&s, &[row![1i64, "a"]], -1, -1)).unwrap_err().0, FlussCode::UNKNOWN_TABLE_OR_BUCKET);
    assert_eq!(produce(&e, 999, 0, log_batch(&s, &[row![1i64, "a"]], -1, -1)).unwrap_err().0, FlussCode::UNKNOWN_TABLE_OR_BUCKET);
    let mut bad_acks = produce_req(id, vec![(0, log_batch(&s, &[row![1i64, "a"]], -1, -1))]);
    bad_acks.acks = 2;
    assert_code(send(&e, bad_acks), 18);
}

#[test]
fn idempotent_duplicate_returns_original_offset_and_appends_nothing() {
    let e = memory();
    let (path, id) = log_table(&e, "events", 1);
    let s = log_schema();
    let w = init_writer(&e);
    let first = log_batch(&s, &[row![1i64, "a"], row![2i64, "b"]], w, 0);
    assert_eq!(produce(&e, id, 0, first.clone()), Ok(0));
    assert_eq!(produce(&e, id, 0, log_batch(&s, &[row![3i64, "c"]], w, 1)), Ok(2));
    assert_eq!(produce(&e, id, 0, first), Ok(0));
    assert_eq!(e.high_watermark(&path, 0).unwrap(), 3);
    assert_eq!(e.scan(&path, 0, 0).unwrap().len(), 3);
    assert_eq!(e.stats().duplicates_dropped, 1);
    // Another writer has its own sequence; a non-idempotent batch is never deduplicated.
    let w2 = init_writer(&e);
    assert!(w2 > w);
    assert_eq!(produce(&e, id, 0, log_batch(&s, &[row![4i64, "d"]], w2, 0)), Ok(3));
    let plain = log_batch(&s, &[row![5i64, "e"]], -1, -1);
    assert_eq!(produce(&e, id, 0, plain.clone()), Ok(4));
    assert_eq!(produce(&e, id, 0, plain), Ok(5));
}

#[test]
fn out_of_order_sequences_are_rejected() {
    let e = memory();
    let (path, id) = log_table(&e, "events", 1);
    let s = log_schema();
    let w = init_writer(&e);
    let (code, msg) = produce(&e, id, 0, log_batch(&s, &[row![1i64, "a"]], w, 1)).unwrap_err();
    assert_eq!(code, FlussCode::OUT_OF_ORDER_SEQUENCE, "{msg}");
    assert!(msg.contains("must have sequence 0"), "{msg}");
    assert_eq!(produce(&e, id, 0, log_batch(&s, &[row![1i64, "a"]], w, 0)), Ok(0));
    assert_eq!(produce(&e, id, 0, log_batch(&s, &[row![2i64, "b"]], w, 2)).unwrap_err().0, FlussCode::OUT_OF_ORDER_SEQUENCE);
    assert_eq!(produce(&e, id, 0, log_batch(&s, &[row![2i64, "b"]], w, 1)), Ok(1));
    assert_eq!(e.high_watermark(&path, 0).unwrap(), 2);
    // Only the last 5 batches are remembered: seq 0 after 6 more batches is out of order.
    for seq in 2..7 {
        produce(&e, id, 0, log_batch(&s, &[row![seq as i64, "x"]], w, seq)).unwrap();
    }
    assert_eq!(produce(&e, id, 0, log_batch(&s, &[row![1i64, "a"]], w, 0)).unwrap_err().0, FlussCode::OUT_OF_ORDER_SEQUENCE);
    assert_eq!(produce(&e, id, 0, log_batch(&s, &[row![1i64, "a"]], w, 2)), Ok(2));
    assert_eq!(bucket::next_seq(i32::MAX), 0);
    assert_eq!(bucket::next_seq(7), 8);
}

#[test]
fn batches_that_do_not_match_the_table_are_rejected() {
    let e = memory();
    let (path, id) = log_table(&e, "events", 1);
    // Arrow columns of the wrong type: INT instead of BIGINT.
    let other = Schema::builder().column_not_null("id", DataType::Int).column("msg", DataType::String).build().unwrap();
    let (code, msg) = produce(&e, id, 0, log_batch(&other, &[row![1, "a"]], -1, -1)).unwrap_err();
    assert_eq!(code, FlussCode::UNKNOWN_SERVER_ERROR);
    assert!(msg.contains("does not match the table schema"), "{msg}");
    // A null in a NOT NULL column (the nullable twin of the table schema lets it through).
    let lax = Schema::builder().column("id", DataType::BigInt).column("msg", DataType::String).build().unwrap();
    let (code, msg) = produce(&e, id, 0, log_batch(&lax, &[row![Value::Null, "a"]], -1, -1)).unwrap_err();
    assert_eq!(code, FlussCode::UNKNOWN_SERVER_ERROR);
    assert!(msg.contains("non-nullable"), "{msg}");
    // Wrong schema id.
    let mut b = log_batch(&log_schema(), &[row![1i64, "a"]], -1, -1);
    b[25..27].copy_from_slice(&7i16.to_le_bytes());
    stamp_log_batch(&mut b, -1, -1);
    let (code, msg) = produce(&e, id, 0, b).unwrap_err();
    assert_eq!(code, FlussCode::UNKNOWN_SERVER_ERROR);
    assert!(msg.contains("schema id 7"), "{msg}");
    // Corrupted byte: CRC mismatch.
    let mut b = log_batch(&log_schema(), &[row![1i64, "a"]], -1, -1);
    let last = b.len() - 1;
    b[last] ^= 0xff;
    assert_eq!(produce(&e, id, 0, b).unwrap_err().0, FlussCode::CORRUPT_RECORD);
    // Truncated.
    let b = log_batch(&log_schema(), &[row![1i64, "a"]], -1, -1);
    assert_eq!(produce(&e, id, 0, b[..b.len() - 3].to_vec()).unwrap_err().0, FlussCode::CORRUPT_MESSAGE);
    assert_eq!(e.high_watermark(&path, 0).unwrap(), 0);
    assert_eq!(e.stats().batches_rejected, 5);
    // Log batches to a primary-key table, KV batches to a log table.
    let (_, pk) = pk_table(&e, "users", 1);
    assert_eq!(produce(&e, pk, 0, log_batch(&log_schema(), &[row![1i64, "a"]], -1, -1)).unwrap_err().0, -1);
    let kv = kv_batch(&pk_schema(), &[Op::Upsert(row![1, "a", 1i64])], -1, -1);
    assert_eq!(put(&e, id, vec![], 0, kv).unwrap_err().0, FlussCode::NON_PRIMARY_KEY_TABLE);
}

// ===== primary-key tables =====

#[test]
fn put_kv_upsert_update_delete_with_lookup_and_changelog() {
    let e = memory();
    let (path, id) = pk_table(&e, "users", 3);
    let s = pk_schema();
    let n = 3;
    let w = init_writer(&e);
    let ins = Op::Upsert(row![1, "ann", 30i64]);
    let b = bucket_of(&s, &ins, n);
    let mut seq = 0;
    let mut put_ops = |ops: &[Op]| {
        let r = put(&e, id, vec![], b, kv_batch(&s, ops, w, seq));
        seq += 1;
        r
    };
    // PutKv answers with the changelog end offset.
    assert_eq!(put_ops(&[ins]), Ok(1));
    assert_eq!(e.lookup(&path, &row![1]).unwrap(), Some(row![1, "ann", 30i64]));
    assert_eq!(put_ops(&[Op::Upsert(row![1, "ann", 31i64])]), Ok(3));
    assert_eq!(put_ops(&[Op::Delete(row![1])]), Ok(4));
    assert_eq!(e.lookup(&path, &row![1]).unwrap(), None);
    assert_eq!(
        changes(&e.scan(&path, b, 0).unwrap()),
        vec![
            (0, "+I", row![1, "ann", 30i64]),
            (1, "-U", row![1, "ann", 30i64]),
            (2, "+U", row![1, "ann", 31i64]),
            (3, "-D", row![1, "ann", 31i64]),
        ]
    );
    // One batch with several ops on the same key, applied in order.
    let r = put(
        &e,
        id,
        vec![],
        b,
        kv_batch(&s, &[Op::Upsert(row![1, "bo", 1i64]), Op::Upsert(row![1, "bo", 2i64]), Op::Delete(row![1]), Op::Delete(row![1])], -1, -1),
    );
    assert_eq!(r, Ok(8));
    assert_eq!(e.lookup(&path, &row![1]).unwrap(), None);

    // A delete of an absent key: one offset, no row.
    let absent = Op::Delete(row![77]);
    let ab = bucket_of(&s, &absent, n);
    let before = e.high_watermark(&path, ab).unwrap();
    assert_eq!(put(&e, id, vec![], ab, kv_batch(&s, &[absent], -1, -1)), Ok(before + 1));
    assert!(e.scan(&path, ab, before).unwrap().is_empty());

    // Lookup through the request: int16 LE schema id + CompactedRow; absent = no value.
    let up = Op::Upsert(row![5, "eve", Value::Null]);
    let b5 = bucket_of(&s, &up, n);
    put(&e, id, vec![], b5, kv_batch(&s, &[up], -1, -1)).unwrap();
    let keys = vec![Bytes::from(key_of(&s, &Op::Delete(row![5]))), Bytes::from(key_of(&s, &Op::Delete(row![6])))];
    let resp = send(
        &e,
        proto::LookupRequest {
            table_id: id,
            buckets_req: vec![proto::PbLookupReqForBucket {
                partition_id: None,
                routing_bucket_count: None,
                bucket_id: b5,
                keys,
                original_partition_name: None,
            }],
        },
    )
    .unwrap();
    let values = &resp.buckets_resp[0].values;
    let v = values[0].values.as_ref().unwrap();
    assert_eq!(i16::from_le_bytes([v[0], v[1]]), 1);
    assert_eq!(decode_row(&s, &v[2..]).unwrap(), row![5, "eve", Value::Null]);
    assert!(values[1].values.is_none());
    assert_eq!(e.kv_len(&path).unwrap(), 1);
    // Lookup on a log table.
    let (_, log_id) = log_table(&e, "events", 1);
    let resp = send(
        &e,
        proto::LookupRequest {
            table_id: log_id,
            buckets_req: vec![proto::PbLookupReqForBucket {
                partition_id: None,
                bucket_id: 0,
                keys: vec![],
                routing_bucket_count: None,
                original_partition_name: None,
            }],
        },
    )
    .unwrap();
    assert_eq!(resp.buckets_resp[0].error_code, Some(FlussCode::NON_PRIMARY_KEY_TABLE));
}

#[test]
fn partial_update_and_partial_delete() {
    let e = memory();
    let (path, id) = pk_table(&e, "users", 1);
    let s = pk_schema();
    let target = vec![0, 1]; // id, name
                             // Partial insert: non-target columns are null.
    put(&e, id, target.clone(), 0, kv_batch(&s, &[Op::Upsert(row![1, "x", 99i64])], -1, -1)).unwrap();
    assert_eq!(e.lookup(&path, &row![1]).unwrap(), Some(row![1, "x", Value::Null]));
    put(&e, id, vec![], 0, kv_batch(&s, &[Op::Upsert(row![2, "y", 5i64])], -1, -1)).unwrap();
    // Partial update keeps non-target columns.
    put(&e, id, target.clone(), 0, kv_batch(&s, &[Op::Upsert(row![2, "z", Value::Null])], -1, -1)).unwrap();
    assert_eq!(e.lookup(&path, &row![2]).unwrap(), Some(row![2, "z", 5i64]));
    // Partial delete: nulls the target columns while another non-key column is set...
    put(&e, id, target.clone(), 0, kv_batch(&s, &[Op::Delete(row![2])], -1, -1)).unwrap();
    assert_eq!(e.lookup(&path, &row![2]).unwrap(), Some(row![2, Value::Null, 5i64]));
    // ...and deletes the row when every non-target non-key column is null.
    put(&e, id, target.clone(), 0, kv_batch(&s, &[Op::Delete(row![1])], -1, -1)).unwrap();
    assert_eq!(e.lookup(&path, &row![1]).unwrap(), None);
    let tail: Vec<_> = changes(&e.scan(&path, 0, 2).unwrap()).into_iter().map(|(_, c, r)| (c, r)).collect();
    assert_eq!(
        tail,
        vec![
            ("-U", row![2, "y", 5i64]),
            ("+U", row![2, "z", 5i64]),
            ("-U", row![2, "z", 5i64]),
            ("+U", row![2, Value::Null, 5i64]),
            ("-D", row![1, "x", Value::Null]),
        ]
    );
    // Invalid targets.
    let one = || kv_batch(&s, &[Op::Upsert(row![3, "q", 1i64])], -1, -1);
    let (code, msg) = put(&e, id, vec![1, 2], 0, one()).unwrap_err();
    assert_eq!(code, FlussCode::INVALID_TARGET_COLUMN);
    assert!(msg.contains("primary-key column"), "{msg}");
    assert_eq!(put(&e, id, vec![0, 9], 0, one()).unwrap_err().0, FlussCode::INVALID_TARGET_COLUMN);
    let strict = Schema::builder()
        .column_not_null("id", DataType::Int)
        .column_not_null("name", DataType::String)
        .primary_key(["id"])
        .build()
        .unwrap();
    let sp = TablePath::new("fluss", "strict").unwrap();
    create_table(&e, &sp, &TableDescriptor::new(strict.clone())).unwrap();
    let sid = e.table_info(&sp).unwrap().table_id;
    let (code, msg) = put(&e, sid, vec![0], 0, kv_batch(&strict, &[Op::Upsert(row![1, "a"])], -1, -1)).unwrap_err();
    assert_eq!(code, FlussCode::INVALID_TARGET_COLUMN);
    assert!(msg.contains("nullable"), "{msg}");
}

#[test]
fn kv_checks_catch_client_bugs_and_batches_are_atomic() {
    let e = memory();
    let (path, id) = pk_table(&e, "users", 4);
    let s = pk_schema();
    let op = Op::Upsert(row![1, "a", 1i64]);
    let right = bucket_of(&s, &op, 4);
    let wrong = (right + 1) % 4;
    let (code, msg) = put(&e, id, vec![], wrong, kv_batch(&s, &[op], -1, -1)).unwrap_err();
    assert_eq!(code, FlussCode::UNKNOWN_SERVER_ERROR);
    assert!(msg.contains(&format!("belongs to bucket {right}")), "{msg}");
    // A delete sent to the wrong bucket is caught too.
    let (_, msg) = put(&e, id, vec![], wrong, kv_batch(&s, &[Op::Delete(row![1])], -1, -1)).unwrap_err();
    assert!(msg.contains("belongs to bucket"), "{msg}");

    // Key bytes that are not the row's primary key.
    let mut b = KvBatchBuilder::new(1);
    let mut v = Vec::new();
    encode_row(&s, &row![1, "a", 1i64], &mut v).unwrap();
    b.append(&key_of(&s, &Op::Delete(row![2])), Some(&v));
    let (_, msg) = put(&e, id, vec![], right, b.finish()).unwrap_err();
    assert!(msg.contains("not the primary key of the value row"), "{msg}");

    // A value row that does not decode: nothing of the batch is applied.
    let good = Op::Upsert(row![1, "a", 1i64]);
    let mut b = KvBatchBuilder::new(1);
    let mut v = Vec::new();
    encode_row(&s, &row![1, "a", 1i64], &mut v).unwrap();
    b.append(&key_of(&s, &good), Some(&v));
    b.append(&key_of(&s, &good), Some(&[0x00, 0x01])); // truncated row
    let (code, msg) = put(&e, id, vec![], right, b.finish()).unwrap_err();
    assert_eq!(code, FlussCode::UNKNOWN_SERVER_ERROR);
    assert!(msg.contains("record 1"), "{msg}");
    assert_eq!(e.lookup(&path, &row![1]).unwrap(), None);
    assert_eq!(e.high_watermark(&path, right).unwrap(), 0);

    // A bucket key that is a strict subset of the primary key.
    let s2 = Schema::builder()
        .column_not_null("tenant", DataType::String)
        .column_not_null("id", DataType::BigInt)
        .column("v", DataType::Double)
        .primary_key(["tenant", "id"])
        .build()
        .unwrap();
    let p2 = TablePath::new("fluss", "multi").unwrap();
    create_table(&e, &p2, &TableDescriptor::new(s2.clone()).with_bucket_count(8).with_bucket_key(["tenant"])).unwrap();
    let id2 = e.table_info(&p2).unwrap().table_id;
    let r = row!["acme", 7i64, 1.5f64];
    let mut bk = Vec::new();
    encode_key(&s2, &[0], &r, &mut bk).unwrap();
    let b2 = bucket_for_key(&bk, 8);
    put(&e, id2, vec![], b2, kv_batch(&s2, &[Op::Upsert(r.clone())], -1, -1)).unwrap();
    assert_eq!(e.lookup(&p2, &row!["acme", 7i64]).unwrap(), Some(r));
    assert_eq!(put(&e, id2, vec![], (b2 + 1) % 8, kv_batch(&s2, &[Op::Delete(row!["acme", 7i64])], -1, -1)).unwrap_err().0, -1);
    put(&e, id2, vec![], b2, kv_batch(&s2, &[Op::Delete(row!["acme", 7i64])], -1, -1)).unwrap();
    assert_eq!(e.lookup(&p2, &row!["acme", 7i64]).unwrap(), None);
}

#[test]
fn kv_idempotence_shares_the_bucket_writer_state() {
    let e = memory();
    let (path, id) = pk_table(&e, "users", 1);
    let s = pk_schema();
    let w = init_writer(&e);
    let first = kv_batch(&s, &[Op::Upsert(row![1, "a", 1i64])], w, 0);
    assert_eq!(put(&e, id, vec![], 0, first.clone()), Ok(1));
    assert_eq!(put(&e, id, vec![], 0, kv_batch(&s, &[Op::Upsert(row![1, "b", 1i64])], w, 1)), Ok(3));
    assert_eq!(put(&e, id, vec![], 0, first), Ok(1), "a duplicate answers with the original end offset");
    assert_eq!(e.lookup(&path, &row![1]).unwrap(), Some(row![1, "b", 1i64]));
    assert_eq!(put(&e, id, vec![], 0, kv_batch(&s, &[Op::Delete(row![1])], w, 3)).unwrap_err().0, FlussCode::OUT_OF_ORDER_SEQUENCE);
    assert_eq!(e.high_watermark(&path, 0).unwrap(), 3);
}

// ===== faults =====

#[test]
fn injected_error_fails_only_its_bucket() {
    let e = memory();
    let (path, id) = log_table(&e, "events", 2);
    let s = log_schema();
    e.faults().inject(&path, 0, Fault::Error { code: 12, message: "not leader".into(), times: 2 });
    assert_eq!(e.faults().pending(&path, 0), 2);
    let req = || produce_req(id, vec![(0, log_batch(&s, &[row![1i64, "a"]], -1, -1)), (1, log_batch(&s, &[row![2i64, "b"]], -1, -1))]);
    let r = send(&e, req()).unwrap();
    assert_eq!(r.buckets_resp[0].error_code, Some(12));
    assert_eq!(r.buckets_resp[0].error_message.as_deref(), Some("not leader"));
    assert_eq!(r.buckets_resp[1].base_offset, Some(0));
    assert_eq!(e.faults().pending(&path, 0), 1);
    assert_eq!(e.high_watermark(&path, 0).unwrap(), 0);
    send(&e, req()).unwrap();
    let r = send(&e, req()).unwrap();
    assert_eq!(r.buckets_resp[0].base_offset, Some(0));
    assert_eq!(e.faults().pending(&path, 0), 0);
    // PutKv entries are hit the same way.
    let (pk, pid) = pk_table(&e, "users", 1);
    e.faults().inject(&pk, 0, Fault::Error { code: 44, message: String::new(), times: 1 });
    assert_eq!(put(&e, pid, vec![], 0, kv_batch(&pk_schema(), &[Op::Upsert(row![1, "a", 1i64])], -1, -1)).unwrap_err().0, 44);
    assert_eq!(e.lookup(&pk, &row![1]).unwrap(), None);
    e.faults().inject(&pk, 0, Fault::Error { code: 44, message: String::new(), times: 3 });
    e.faults().clear();
    assert_eq!(e.faults().pending(&pk, 0), 0);
}

#[test]
fn injected_delay_delays_the_response() {
    let e = memory();
    let (path, id) = log_table(&e, "events", 1);
    e.faults().inject(&path, 0, Fault::Delay { delay: Duration::from_millis(1_000), times: 1 });
    let start = Instant::now();
    assert_eq!(produce(&e, id, 0, log_batch(&log_schema(), &[row![1i64, "a"]], -1, -1)), Ok(0));
    assert!(start.elapsed() >= Duration::from_millis(1_000), "{:?}", start.elapsed());
    assert_eq!(e.faults().pending(&path, 0), 0, "the delay was used up");
    // The next one is not delayed (with slack for a busy machine: it would take 1 s if it were).
    let start = Instant::now();
    assert_eq!(produce(&e, id, 0, log_batch(&log_schema(), &[row![1i64, "a"]], -1, -1)), Ok(1));
    assert!(start.elapsed() < Duration::from_millis(900), "{:?}", start.elapsed());
}

#[test]
fn dropped_connection_before_and_after_apply() {
    let e = memory();
    let (path, id) = log_table(&e, "events", 1);
    let s = log_schema();
    let w = init_writer(&e);
    let batch = log_batch(&s, &[row![1i64, "a"], row![2i64, "b"]], w, 0);
    e.faults().inject(&path, 0, Fault::DropConnection { after_apply: false, times: 1 });
    e.faults().inject(&path, 0, Fault::DropConnection { after_apply: true, times: 1 });
    let err = send(&e, produce_req(id, vec![(0, batch.clone())])).unwrap_err();
    assert_eq!(err.code(), FlussCode::NETWORK_EXCEPTION);
    assert!(err.is_retriable());
    assert_eq!(e.high_watermark(&path, 0).unwrap(), 0, "dropped before apply: nothing stored");
    let err = send(&e, produce_req(id, vec![(0, batch.clone())])).unwrap_err();
    assert_eq!(err.code(), FlussCode::NETWORK_EXCEPTION);
    assert_eq!(e.high_watermark(&path, 0).unwrap(), 2, "dropped after apply: stored");
    // The idempotent retry is a duplicate: original offset, no second copy.
    assert_eq!(produce(&e, id, 0, batch), Ok(0));
    assert_eq!(e.scan(&path, 0, 0).unwrap().len(), 2);
    assert_eq!(e.stats().duplicates_dropped, 1);

    // Same for PutKv: the retried batch must not produce a second changelog.
    let (pk, pid) = pk_table(&e, "users", 1);
    let kv = kv_batch(&pk_schema(), &[Op::Upsert(row![1, "a", 1i64])], w, 0);
    e.faults().inject(&pk, 0, Fault::DropConnection { after_apply: true, times: 1 });
    assert_eq!(send(&e, put_req(pid, vec![], vec![(0, kv.clone())])).unwrap_err().code(), 1);
    assert_eq!(put(&e, pid, vec![], 0, kv), Ok(1));
    assert_eq!(changes(&e.scan(&pk, 0, 0).unwrap()), vec![(0, "+I", row![1, "a", 1i64])]);
}

// ===== durability =====

fn durable(dir: &TempDir) -> Result<Arc<EmbeddedEngine>> {
    EmbeddedEngine::open(&dir.location(), &Config::default())
}

#[test]
fn durable_reopen_restores_logs_kv_writer_state_and_counters() {
    let dir = TempDir::new("reopen");
    let s = log_schema();
    let ps = pk_schema();
    let (w, batch0, kv1);
    {
        let e = durable(&dir).unwrap();
        assert!(e.is_durable());
        send(&e, proto::CreateDatabaseRequest { database_name: "shop".into(), ignore_if_exists: false, database_json: None }).unwrap();
        log_table(&e, "events", 2);
        pk_table(&e, "users", 1);
        let id = e.table_info(&TablePath::new("fluss", "events").unwrap()).unwrap().table_id;
        let pid = e.table_info(&TablePath::new("fluss", "users").unwrap()).unwrap().table_id;
        init_writer(&e);
        w = init_writer(&e);
        batch0 = log_batch(&s, &[row![1i64, "a"], row![2i64, "b"]], w, 0);
        assert_eq!(produce(&e, id, 1, batch0.clone()), Ok(0));
        assert_eq!(produce(&e, id, 1, log_batch(&s, &[row![3i64, "c"]], w, 1)), Ok(2));
        put(&e, pid, vec![], 0, kv_batch(&ps, &[Op::Upsert(row![1, "a", 1i64]), Op::Upsert(row![2, "b", 2i64])], w, 0)).unwrap();
        kv1 = kv_batch(&ps, &[Op::Upsert(row![1, "a2", 1i64]), Op::Delete(row![2])], w, 1);
        assert_eq!(put(&e, pid, vec![], 0, kv1.clone()), Ok(5));
        e.close();
    }
    let e = durable(&dir).unwrap();
    let events = TablePath::new("fluss", "events").unwrap();
    let users = TablePath::new("fluss", "users").unwrap();
    assert!(send(&e, proto::DatabaseExistsRequest { database_name: "shop".into() }).unwrap().exists);
    let id = e.table_info(&events).unwrap().table_id;
    let pid = e.table_info(&users).unwrap().table_id;
    assert_eq!(e.table_info(&events).unwrap().bucket_count(), 2);
    assert_eq!(e.high_watermark(&events, 1).unwrap(), 3);
    assert_eq!(
        e.scan(&events, 1, 0).unwrap().iter().map(|r| r.row.clone()).collect::<Vec<_>>(),
        vec![row![1i64, "a"], row![2i64, "b"], row![3i64, "c"]]
    );
    assert_eq!(e.lookup(&users, &row![1]).unwrap(), Some(row![1, "a2", 1i64]));
    assert_eq!(e.lookup(&users, &row![2]).unwrap(), None);
    assert_eq!(e.scan(&users, 0, 0).unwrap().len(), 5);
    // Writer state: duplicates still recognised, next sequence accepted, gaps rejected.
    assert_eq!(produce(&e, id, 1, batch0), Ok(0));
    assert_eq!(put(&e, pid, vec![], 0, kv1), Ok(5));
    assert_eq!(produce(&e, id, 1, log_batch(&s, &[row![4i64, "d"]], w, 3)).unwrap_err().0, FlussCode::OUT_OF_ORDER_SEQUENCE);
    assert_eq!(produce(&e, id, 1, log_batch(&s, &[row![4i64, "d"]], w, 2)), Ok(3));
    // Counters: writer ids and table ids continue.
    assert_eq!(init_writer(&e), w + 1);
    let (_, tid) = log_table(&e, "more", 1);
    assert!(tid > pid);
    // Dropped tables stay dropped, and their files go.
    send(&e, proto::DropTableRequest { table_path: pb(&events), ignore_if_not_exists: false }).unwrap();
    assert!(!dir.0.join("tables").join(id.to_string()).exists());
    drop(e);
    let e = durable(&dir).unwrap();
    assert_code(e.table_info(&events), FlussCode::TABLE_NOT_EXIST);
    assert_eq!(e.lookup(&users, &row![1]).unwrap(), Some(row![1, "a2", 1i64]));
}

fn bucket_file(dir: &Path, table_id: i64, bucket: i32) -> PathBuf {
    dir.join("tables").join(table_id.to_string()).join(format!("{bucket}.log"))
}

#[test]
fn torn_tail_is_cut_off_on_open() {
    let dir = TempDir::new("torn");
    let s = log_schema();
    let id;
    let good_len;
    {
        let e = durable(&dir).unwrap();
        id = log_table(&e, "events", 1).1;
        produce(&e, id, 0, log_batch(&s, &[row![1i64, "a"]], -1, -1)).unwrap();
        produce(&e, id, 0, log_batch(&s, &[row![2i64, "b"]], -1, -1)).unwrap();
        good_len = std::fs::metadata(bucket_file(&dir.0, id, 0)).unwrap().len();
        produce(&e, id, 0, log_batch(&s, &[row![3i64, "c"]], -1, -1)).unwrap();
    }
    let path = bucket_file(&dir.0, id, 0);
    let full = std::fs::read(&path).unwrap();
    // Cut the last frame in the middle, as a killed process might leave it.
    std::fs::write(&path, &full[..(good_len as usize + full.len()) / 2]).unwrap();
    let events = TablePath::new("fluss", "events").unwrap();
    {
        let e = durable(&dir).unwrap();
        assert_eq!(e.high_watermark(&events, 0).unwrap(), 2);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), good_len);
        assert_eq!(produce(&e, id, 0, log_batch(&s, &[row![4i64, "d"]], -1, -1)), Ok(2));
    }
    // A flipped byte in the last frame: that frame (and only it) is dropped.
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    let e = durable(&dir).unwrap();
    assert_eq!(e.high_watermark(&events, 0).unwrap(), 2);
    assert_eq!(
        e.scan(&events, 0, 0).unwrap().iter().map(|r| r.row[0].clone()).collect::<Vec<_>>(),
        vec![Value::BigInt(1), Value::BigInt(2)]
    );
}

#[test]
fn a_locked_directory_cannot_be_opened_twice() {
    let dir = TempDir::new("lock");
    let e = durable(&dir).unwrap();
    let err = durable(&dir).unwrap_err();
    assert_eq!(err.client_code(), Some(ClientCode::Io));
    assert!(err.message().contains("locked"), "{err}");
    e.close();
    let again = durable(&dir).unwrap();
    drop(again);
    drop(e);
    durable(&dir).unwrap();
}

#[test]
fn bad_locations_are_config_errors() {
    for loc in ["embedded:", "localhost:9123", ""] {
        let err = EmbeddedEngine::open(loc, &Config::default()).unwrap_err();
        assert_eq!(err.client_code(), Some(ClientCode::InvalidConfig), "{loc}");
    }
}

#[test]
fn fsync_never_and_default_bucket_number() {
    let dir = TempDir::new("never");
    let cfg = Config { embedded_fsync: FsyncPolicy::Never, default_bucket_number: 3, ..Config::default() };
    let e = EmbeddedEngine::open(&dir.location(), &cfg).unwrap();
    let p = TablePath::new("fluss", "t").unwrap();
    create_table(&e, &p, &TableDescriptor::new(log_schema())).unwrap();
    assert_eq!(e.table_info(&p).unwrap().bucket_count(), 3);
    let id = e.table_info(&p).unwrap().table_id;
    produce(&e, id, 2, log_batch(&log_schema(), &[row![1i64, "a"]], -1, -1)).unwrap();
    drop(e);
    let e = EmbeddedEngine::open(&dir.location(), &cfg).unwrap();
    assert_eq!(e.high_watermark(&p, 2).unwrap(), 1);
}

// ===== concurrency =====

#[test]
fn buckets_are_written_in_parallel_from_many_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<EmbeddedEngine>();
    assert_send_sync::<Faults>();
    let e = memory();
    let (path, id) = log_table(&e, "events", 4);
    let threads: Vec<_> = (0..4)
        .map(|b| {
            let e = e.clone();
            std::thread::spawn(move || {
                let w = init_writer(&e);
                for seq in 0..50 {
                    let batch = log_batch(&log_schema(), &[row![seq as i64, "x"]], w, seq);
                    assert_eq!(produce(&e, id, b, batch), Ok(seq as i64));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    for b in 0..4 {
        assert_eq!(e.high_watermark(&path, b).unwrap(), 50);
    }
    assert_eq!(e.stats().batches_accepted, 200);
}

/// Child half of `acknowledged_writes_survive_a_killed_process`: runs only when the parent
/// sets the variable, writes, then aborts without closing anything.
#[test]
fn kill_child_writes_then_aborts() {
    let Ok(loc) = std::env::var("FLUSS_EMBEDDED_KILL_CHILD") else {
        return;
    };
    let e = EmbeddedEngine::open(&loc, &Config::default()).unwrap();
    let (_, id) = log_table(&e, "events", 1);
    let (_, pid) = pk_table(&e, "users", 1);
    let w = init_writer(&e);
    for seq in 0..10 {
        produce(&e, id, 0, log_batch(&log_schema(), &[row![seq as i64, "x"]], w, seq)).unwrap();
    }
    put(&e, pid, vec![], 0, kv_batch(&pk_schema(), &[Op::Upsert(row![1, "a", 1i64])], w, 0)).unwrap();
    std::process::abort();
}

#[test]
fn acknowledged_writes_survive_a_killed_process() {
    let dir = TempDir::new("kill");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "embedded::tests::kill_child_writes_then_aborts", "--nocapture", "--test-threads=1"])
        .env("FLUSS_EMBEDDED_KILL_CHILD", dir.location())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "the child must have aborted");
    let e = durable(&dir).unwrap();
    let events = TablePath::new("fluss", "events").unwrap();
    assert_eq!(e.high_watermark(&events, 0).unwrap(), 10);
    assert_eq!(e.lookup(&TablePath::new("fluss", "users").unwrap(), &row![1]).unwrap(), Some(row![1, "a", 1i64]));
    // The child's writer id was persisted before it was handed out.
    assert!(init_writer(&e) >= 2);
}

/// A recreated partition is a new bucket for idempotence, as on a 0.9.1 server (writer state per
/// (table, partition id, bucket)): the same writer id must start it at sequence 0, whatever it
/// sent to the dropped partition; a batch for the dropped partition's id is
/// UNKNOWN_TABLE_OR_BUCKET (issue 28 item 9).
#[test]
fn a_recreated_partition_has_fresh_writer_state() {
    let e = memory();
    let path = TablePath::new("fluss", "late").unwrap();
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("dt", DataType::String).build().unwrap();
    create_table(&e, &path, &TableDescriptor::new(schema.clone()).with_bucket_count(1).with_partition_keys(["dt"])).unwrap();
    let id = e.table_info(&path).unwrap().table_id;
    let spec = proto::PbPartitionSpec { partition_key_values: vec![proto::PbKeyValue { key: "dt".into(), value: "d".into() }] };
    let create = || {
        send(&e, proto::CreatePartitionRequest { table_path: pb(&path), partition_spec: spec.clone(), ignore_if_not_exists: false })
            .unwrap();
        e.partition(&path, "d").unwrap().partition_id().unwrap()
    };
    let to = |pid: i64, batch: Vec<u8>| {
        let req = proto::ProduceLogRequest {
            acks: -1,
            table_id: id,
            timeout_ms: 30_000,
            buckets_req: vec![proto::PbProduceLogReqForBucket {
                partition_id: Some(pid),
                bucket_id: 0,
                records: batch.into(),
                routing_bucket_count: None,
                original_partition_name: None,
            }],
        };
        let resp = send(&e, req).unwrap();
        entry(&resp.buckets_resp[0].error_code, &resp.buckets_resp[0].error_message, resp.buckets_resp[0].base_offset)
    };
    let w = init_writer(&e);
    let old = create();
    for seq in 0..3 {
        assert_eq!(to(old, log_batch(&schema, &[row![seq as i64, "d"]], w, seq)), Ok(seq as i64));
    }
    send(&e, proto::DropPartitionRequest { table_path: pb(&path), partition_spec: spec.clone(), ignore_if_not_exists: false }).unwrap();
    let (code, msg) = to(old, log_batch(&schema, &[row![3i64, "d"]], w, 3)).unwrap_err();
    assert_eq!(code, FlussCode::UNKNOWN_TABLE_OR_BUCKET, "{msg}");
    let new = create();
    assert_ne!(new, old);
    let (code, msg) = to(new, log_batch(&schema, &[row![3i64, "d"]], w, 3)).unwrap_err();
    assert_eq!(code, FlussCode::OUT_OF_ORDER_SEQUENCE, "{msg}");
    assert!(msg.contains("must have sequence 0"), "{msg}");
    assert_eq!(to(new, log_batch(&schema, &[row![3i64, "d"]], w, 0)), Ok(0));
    assert_eq!(to(new, log_batch(&schema, &[row![4i64, "d"]], w, 1)), Ok(1));
}

/// Per-partition bucket counts (Fluss 1.0, issue 28 item 1): ALTER_TABLE v1 changes the count of
/// partitions created afterwards; existing ones keep theirs; Metadata, ListPartitionInfos and
/// GetTableInfo tell each partition's count and the table's epoch; ApiVersions advertises v1.
#[test]
fn a_bucket_count_change_applies_to_partitions_created_afterwards() {
    let e = memory();
    let v = send(&e, proto::ApiVersionsRequest { client_software_name: "t".into(), client_software_version: "0".into() }).unwrap();
    let alter = v.api_versions.iter().find(|a| a.api_key == 1044).expect("ALTER_TABLE listed");
    assert_eq!((alter.min_version, alter.max_version), (0, 1));
    let path = TablePath::new("fluss", "rescaled").unwrap();
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("dt", DataType::String).build().unwrap();
    create_table(&e, &path, &TableDescriptor::new(schema).with_bucket_count(4).with_partition_keys(["dt"])).unwrap();
    let spec = |v: &str| proto::PbPartitionSpec { partition_key_values: vec![proto::PbKeyValue { key: "dt".into(), value: v.into() }] };
    let create = |v: &str| {
        send(&e, proto::CreatePartitionRequest { table_path: pb(&path), partition_spec: spec(v), ignore_if_not_exists: false }).unwrap()
    };
    let rescale = |n: i32| {
        send(
            &e,
            proto::AlterTableRequest {
                table_path: pb(&path),
                ignore_if_not_exists: false,
                modify_bucket_count: Some(proto::PbModifyBucketCount { new_bucket_count: n }),
                ..Default::default()
            },
        )
    };
    let epoch = || send(&e, proto::GetTableInfoRequest { table_path: pb(&path) }).unwrap().bucket_count_epoch;
    create("a");
    assert_eq!(epoch(), Some(0));
    rescale(8).unwrap();
    assert_eq!(epoch(), Some(1));
    rescale(8).unwrap(); // the count it has: nothing changes
    assert_eq!(epoch(), Some(1));
    create("b");
    let parts =
        send(&e, proto::ListPartitionInfosRequest { table_path: pb(&path), partial_partition_spec: None, include_system_partitions: None })
            .unwrap();
    let counts: std::collections::BTreeMap<String, Option<i32>> =
        parts.partitions_info.iter().map(|p| (p.partition_spec.partition_key_values[0].value.clone(), p.bucket_count)).collect();
    assert_eq!(counts, [("a".to_string(), Some(4)), ("b".to_string(), Some(8))].into_iter().collect());
    let m = send(
        &e,
        proto::MetadataRequest {
            table_path: vec![pb(&path)],
            partitions_path: ["a", "b"]
                .iter()
                .map(|n| proto::PbPhysicalTablePath {
                    database_name: "fluss".into(),
                    table_name: "rescaled".into(),
                    partition_name: Some(n.to_string()),
                })
                .collect(),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(m.table_metadata[0].bucket_count_epoch, Some(1));
    let by_name: Vec<(String, Option<i32>, usize)> =
        m.partition_metadata.iter().map(|p| (p.partition_name.clone(), p.bucket_count, p.bucket_metadata.len())).collect();
    assert_eq!(by_name, vec![("a".into(), Some(4), 4), ("b".into(), Some(8), 8)]);
    // Only partitioned tables, at least one bucket, not with other changes.
    assert_code(rescale(0), FlussCode::INVALID_ALTER_TABLE);
    let (plain, _) = log_table(&e, "plain", 2);
    let r = send(
        &e,
        proto::AlterTableRequest {
            table_path: pb(&plain),
            ignore_if_not_exists: false,
            modify_bucket_count: Some(proto::PbModifyBucketCount { new_bucket_count: 3 }),
            ..Default::default()
        },
    );
    assert_code(r, FlussCode::INVALID_ALTER_TABLE);
}

/// After a bucket count change, a write must name the count it was routed by, and that must be
/// its partition's: otherwise INVALID_BUCKET_ROUTING (74), nothing applied (what a Fluss 1.0
/// tablet server answers). Before any change, a write without a count is accepted (0.9 clients).
#[test]
fn writes_without_or_with_a_stale_routing_count_are_refused_after_a_rescale() {
    let e = memory();
    let path = TablePath::new("fluss", "routed").unwrap();
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("dt", DataType::String).build().unwrap();
    create_table(&e, &path, &TableDescriptor::new(schema.clone()).with_bucket_count(2).with_partition_keys(["dt"])).unwrap();
    let id = e.table_info(&path).unwrap().table_id;
    let spec = proto::PbPartitionSpec { partition_key_values: vec![proto::PbKeyValue { key: "dt".into(), value: "d".into() }] };
    send(&e, proto::CreatePartitionRequest { table_path: pb(&path), partition_spec: spec, ignore_if_not_exists: false }).unwrap();
    let pid = e.partition(&path, "d").unwrap().partition_id().unwrap();
    let to = |routing: Option<i32>, n: i64| {
        let req = proto::ProduceLogRequest {
            acks: -1,
            table_id: id,
            timeout_ms: 30_000,
            buckets_req: vec![proto::PbProduceLogReqForBucket {
                partition_id: Some(pid),
                bucket_id: 1,
                records: log_batch(&schema, &[row![n, "d"]], -1, -1).into(),
                routing_bucket_count: routing,
                original_partition_name: None,
            }],
        };
        let resp = send(&e, req).unwrap();
        entry(&resp.buckets_resp[0].error_code, &resp.buckets_resp[0].error_message, resp.buckets_resp[0].base_offset)
    };
    assert_eq!(to(None, 0), Ok(0));
    assert_eq!(to(Some(2), 1), Ok(1));
    assert_eq!(to(Some(3), 2).unwrap_err().0, FlussCode::INVALID_BUCKET_ROUTING);
    send(
        &e,
        proto::AlterTableRequest {
            table_path: pb(&path),
            ignore_if_not_exists: false,
            modify_bucket_count: Some(proto::PbModifyBucketCount { new_bucket_count: 5 }),
            ..Default::default()
        },
    )
    .unwrap();
    let (code, msg) = to(None, 2).unwrap_err();
    assert_eq!(code, FlussCode::INVALID_BUCKET_ROUTING, "{msg}");
    assert!(msg.contains("does not name the bucket count"), "{msg}");
    // The table's new count is not this partition's.
    assert_eq!(to(Some(5), 2).unwrap_err().0, FlussCode::INVALID_BUCKET_ROUTING);
    assert_eq!(to(Some(2), 2), Ok(2));
    assert_eq!(e.high_watermark_partition(&path, Some("d"), 1).unwrap(), 3, "refused writes applied nothing");
    // Reads are checked the same way (ListOffsets here; FetchLog and Lookup share the check).
    let offsets = |routing: Option<i32>| {
        let r = send(
            &e,
            proto::ListOffsetsRequest {
                follower_server_id: -1,
                offset_type: 1,
                table_id: id,
                partition_id: Some(pid),
                bucket_id: vec![1],
                start_timestamp: None,
                routing_bucket_count: routing,
            },
        )
        .unwrap();
        entry(&r.buckets_resp[0].error_code, &r.buckets_resp[0].error_message, r.buckets_resp[0].offset)
    };
    assert_eq!(offsets(None).unwrap_err().0, FlussCode::INVALID_BUCKET_ROUTING);
    assert_eq!(offsets(Some(5)).unwrap_err().0, FlussCode::INVALID_BUCKET_ROUTING);
    assert_eq!(offsets(Some(2)), Ok(3));
}

/// A durable engine keeps each partition's count and the table's epoch across a reopen.
#[test]
fn per_partition_bucket_counts_survive_a_reopen() {
    let dir = TempDir::new("rescale");
    let path = TablePath::new("fluss", "kept").unwrap();
    let spec = |v: &str| proto::PbPartitionSpec { partition_key_values: vec![proto::PbKeyValue { key: "dt".into(), value: v.into() }] };
    {
        let e = durable(&dir).unwrap();
        let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("dt", DataType::String).build().unwrap();
        create_table(&e, &path, &TableDescriptor::new(schema).with_bucket_count(2).with_partition_keys(["dt"])).unwrap();
        send(&e, proto::CreatePartitionRequest { table_path: pb(&path), partition_spec: spec("a"), ignore_if_not_exists: false }).unwrap();
        send(
            &e,
            proto::AlterTableRequest {
                table_path: pb(&path),
                ignore_if_not_exists: false,
                modify_bucket_count: Some(proto::PbModifyBucketCount { new_bucket_count: 3 }),
                ..Default::default()
            },
        )
        .unwrap();
        send(&e, proto::CreatePartitionRequest { table_path: pb(&path), partition_spec: spec("b"), ignore_if_not_exists: false }).unwrap();
        e.close();
    }
    let e = durable(&dir).unwrap();
    assert_eq!(e.partition(&path, "a").unwrap().bucket_count(), 2);
    assert_eq!(e.partition(&path, "b").unwrap().bucket_count(), 3);
    let info = send(&e, proto::GetTableInfoRequest { table_path: pb(&path) }).unwrap();
    assert_eq!(info.bucket_count_epoch, Some(1));
    send(&e, proto::CreatePartitionRequest { table_path: pb(&path), partition_spec: spec("c"), ignore_if_not_exists: false }).unwrap();
    assert_eq!(e.partition(&path, "c").unwrap().bucket_count(), 3);
}
