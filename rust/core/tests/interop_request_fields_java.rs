//! The per-partition bucket count fields (Fluss 1.0) sit where the official Java client reads
//! them: request bodies as fluss-writer encodes them (`Request::encode_body`, what goes on the
//! wire) and the embedded engine's answers after a bucket count change are decoded by the
//! generated message classes of `org.apache.fluss:fluss-client:1.0.0`
//! (tests-interop/java/FlussRequestFieldsOracle.java, via request_fields.sh), and the values
//! read must be the ones written: `routing_bucket_count` and `original_partition_name`
//! (historical partitions) of ProduceLog, PutKv and Lookup bucket entries, `routing_bucket_count` of
//! FetchLog and ListOffsets (field 7 there), AlterTable's `modify_bucket_count`, `bucket_count_epoch` of GetTableInfo and table metadata,
//! `bucket_count` of partition metadata and partition infos.
//!
//! Run it with `cargo test -p fluss-writer --test interop_request_fields_java -- --ignored`
//! (tests-interop/run.sh does). Needs `java` on PATH (Maven and javac on first use). Without java
//! it prints a banner and passes, except under CI=true.

use std::io::Write;
use std::process::{Command, Stdio};

use fluss_writer::backend::{call, Backend, Dest, Request, Response};
use fluss_writer::wire::proto;
use fluss_writer::{Config, Connection, DataType, PartitionSpec, Schema, TableDescriptor, TablePath};
use serde_json::{json, Value};

fn java_available() -> bool {
    let ok = Command::new("java").arg("-version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
    if !ok {
        let ci = std::env::var("CI").map(|v| v.eq_ignore_ascii_case("true") || v == "1").unwrap_or(false);
        assert!(!ci, "java is not on PATH but CI=true: the Java request-field check must run in CI");
        let _ = writeln!(std::io::stderr(), "\n!!! interop_request_fields_java: no `java` on PATH: NOT checking the 1.0 fields\n");
    }
    ok
}

/// Decode `(message name, body)` pairs with the Java 1.0.0 classes: one JSON value each.
fn java_decode(messages: &[(&str, Vec<u8>)]) -> Vec<Value> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests-interop/java/request_fields.sh");
    let mut child =
        Command::new(script).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().expect("run request_fields.sh");
    let mut input = String::new();
    for (name, body) in messages {
        input.push_str(name);
        input.push('\t');
        input.extend(body.iter().map(|b| format!("{b:02x}")));
        input.push('\n');
    }
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "request_fields.sh failed: {}", out.status);
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

fn pb_path(p: &TablePath) -> proto::PbTablePath {
    proto::PbTablePath { database_name: p.database.clone(), table_name: p.table.clone() }
}

#[test]
#[ignore = "needs java (and Maven once); run by tests-interop/run.sh"]
fn the_1_0_fields_are_where_the_java_client_reads_them() {
    if !java_available() {
        return;
    }
    // Requests, encoded as the connection encodes them.
    let produce = Request::ProduceLog(proto::ProduceLogRequest {
        acks: -1,
        table_id: 7,
        timeout_ms: 1000,
        buckets_req: vec![
            proto::PbProduceLogReqForBucket {
                partition_id: Some(11),
                bucket_id: 5,
                records: vec![1, 2].into(),
                routing_bucket_count: Some(8),
                original_partition_name: Some("20200101".into()),
            },
            proto::PbProduceLogReqForBucket {
                partition_id: None,
                bucket_id: 0,
                records: vec![3].into(),
                routing_bucket_count: None,
                original_partition_name: None,
            },
        ],
    });
    let put = Request::PutKv(proto::PutKvRequest {
        acks: -1,
        table_id: 9,
        timeout_ms: 1000,
        target_columns: vec![],
        buckets_req: vec![proto::PbPutKvReqForBucket {
            partition_id: Some(12),
            bucket_id: 2,
            records: vec![4].into(),
            routing_bucket_count: Some(3),
            original_partition_name: Some("20200102".into()),
        }],
        agg_mode: None,
    });
    let lookup = Request::Lookup(proto::LookupRequest {
        table_id: 9,
        buckets_req: vec![proto::PbLookupReqForBucket {
            partition_id: Some(12),
            bucket_id: 4,
            keys: vec![vec![1u8].into()],
            routing_bucket_count: Some(6),
            original_partition_name: Some("20200103".into()),
        }],
    });
    let fetch = Request::FetchLog(proto::FetchLogRequest {
        follower_server_id: -1,
        max_bytes: 1024,
        tables_req: vec![proto::PbFetchLogReqForTable {
            table_id: 9,
            projection_pushdown_enabled: false,
            projected_fields: vec![],
            buckets_req: vec![proto::PbFetchLogReqForBucket {
                partition_id: Some(12),
                bucket_id: 3,
                fetch_offset: 0,
                max_fetch_bytes: 1024,
                routing_bucket_count: Some(7),
            }],
        }],
        max_wait_ms: Some(0),
        min_bytes: Some(1),
    });
    let offsets = Request::ListOffsets(proto::ListOffsetsRequest {
        follower_server_id: -1,
        offset_type: 1,
        table_id: 9,
        partition_id: Some(12),
        bucket_id: vec![0],
        start_timestamp: None,
        routing_bucket_count: Some(5),
    });
    let path = TablePath::new("fluss", "rescaled").unwrap();
    let alter = Request::AlterTable(proto::AlterTableRequest {
        table_path: pb_path(&path),
        ignore_if_not_exists: false,
        modify_bucket_count: Some(proto::PbModifyBucketCount { new_bucket_count: 8 }),
        ..Default::default()
    });

    // Answers of the embedded engine for a table rescaled from 2 to 5 buckets between two partitions.
    let mut c = Config::default();
    c.set("bootstrap.servers", "embedded").unwrap();
    let conn = Connection::connect(c).unwrap();
    let admin = conn.admin();
    admin.create_database("fluss", true).unwrap();
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("dt", DataType::String).build().unwrap();
    admin.create_table(&path, &TableDescriptor::new(schema).with_bucket_count(2).with_partition_keys(["dt"]), false).unwrap();
    admin.create_partition(&path, &PartitionSpec::new([("dt", "old")]), false).unwrap();
    admin.alter_bucket_count(&path, 5, false).unwrap();
    admin.create_partition(&path, &PartitionSpec::new([("dt", "new")]), false).unwrap();
    let engine: std::sync::Arc<dyn Backend> = conn.embedded().unwrap().clone();
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let ask = |r: Request| -> Response { rt.block_on(engine.send(Dest::Any, r)).unwrap() };
    let info = ask(Request::GetTableInfo(proto::GetTableInfoRequest { table_path: pb_path(&path) }));
    let part = |n: &str| proto::PbPhysicalTablePath {
        database_name: path.database.clone(),
        table_name: path.table.clone(),
        partition_name: Some(n.to_string()),
    };
    let metadata = ask(Request::Metadata(proto::MetadataRequest {
        table_path: vec![pb_path(&path)],
        partitions_path: vec![part("old"), part("new")],
        ..Default::default()
    }));
    let list = rt
        .block_on(call(
            &*engine,
            Dest::Any,
            proto::ListPartitionInfosRequest { table_path: pb_path(&path), partial_partition_spec: None, include_system_partitions: None },
        ))
        .unwrap();
    let table_id = conn.admin().get_table_info(&path).unwrap().table_id;
    let mut ids: Vec<(i64, i32)> = list.partitions_info.iter().map(|p| (p.partition_id, p.bucket_count.unwrap())).collect();
    ids.sort();

    let got = java_decode(&[
        ("ProduceLogRequest", produce.encode_body()),
        ("PutKvRequest", put.encode_body()),
        ("AlterTableRequest", alter.encode_body()),
        ("GetTableInfoResponse", info.encode_body()),
        ("MetadataResponse", metadata.encode_body()),
        ("ListPartitionInfosResponse", Response::ListPartitionInfos(list).encode_body()),
        ("LookupRequest", lookup.encode_body()),
        ("FetchLogRequest", fetch.encode_body()),
        ("ListOffsetsRequest", offsets.encode_body()),
    ]);
    assert_eq!(
        got[6..],
        [
            json!({"msg": "LookupRequest", "table_id": 9, "buckets": [{"bucket_id": 4, "routing_bucket_count": 6, "original_partition_name": "20200103"}]}),
            json!({"msg": "FetchLogRequest", "buckets": [{"bucket_id": 3, "routing_bucket_count": 7}]}),
            json!({"msg": "ListOffsetsRequest", "table_id": 9, "routing_bucket_count": 5}),
        ]
    );
    let listed: Vec<Value> = ids.iter().map(|(id, n)| json!({"partition_id": id, "bucket_count": n})).collect();
    let mut java_listed = got[5]["partitions"].as_array().unwrap().clone();
    java_listed.sort_by_key(|v| v["partition_id"].as_i64());
    assert_eq!(
        got[..5],
        [
            json!({"msg": "ProduceLogRequest", "table_id": 7, "buckets": [
                {"partition_id": 11, "bucket_id": 5, "routing_bucket_count": 8, "original_partition_name": "20200101"},
                {"partition_id": null, "bucket_id": 0, "routing_bucket_count": null, "original_partition_name": null}]}),
            json!({"msg": "PutKvRequest", "table_id": 9, "buckets": [
                {"partition_id": 12, "bucket_id": 2, "routing_bucket_count": 3, "original_partition_name": "20200102"}]}),
            json!({"msg": "AlterTableRequest", "table": "rescaled", "new_bucket_count": 8}),
            json!({"msg": "GetTableInfoResponse", "table_id": table_id, "bucket_count_epoch": 1}),
            json!({"msg": "MetadataResponse", "tables": [{"table_id": table_id, "bucket_count_epoch": 1}], "partitions": [
                {"partition_name": "old", "bucket_count": 2}, {"partition_name": "new", "bucket_count": 5}]}),
        ]
    );
    assert_eq!(java_listed, listed);
    assert_eq!(ids.iter().map(|x| x.1).collect::<Vec<_>>(), [2, 5]);
}
