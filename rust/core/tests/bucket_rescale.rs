//! Per-partition bucket counts (Fluss 1.0; issue 28 item 1), end to end on the embedded engine:
//! `Admin::alter_bucket_count` (ALTER_TABLE v1) applies to partitions created afterwards, a
//! writer created before the change routes each row by its own partition's count and names
//! that count in every request (`routing_bucket_count`), rows routed by a count their partition
//! does not have fail with INVALID_BUCKET_ROUTING (74) exactly once and later rows go right,
//! and nothing is written twice. The `_cluster` test checks that a Fluss 0.9 coordinator is
//! refused locally (UNSUPPORTED) instead of being sent a change it would drop.

mod cluster_support;

use std::collections::BTreeMap;
use std::time::Duration;

use cluster_support::{bootstrap, bounded, connect, database, unique, Seen};
use fluss_writer::embedded::Fault;
use fluss_writer::{
    ClientCode, Config, Connection, DataType, FlussCode, PartitionSpec, Schema, TableDescriptor, TablePath, Value, WriterOptions,
};

const LIMIT: Duration = Duration::from_secs(120);

fn embedded() -> Connection {
    let mut c = Config::default();
    c.set("bootstrap.servers", "embedded").unwrap();
    c.set("client.writer.batch-timeout", "5ms").unwrap();
    Connection::connect(c).unwrap()
}

fn schema(pk: bool) -> Schema {
    let b =
        Schema::builder().column_not_null("id", DataType::BigInt).column_not_null("dt", DataType::String).column("msg", DataType::String);
    if pk { b.primary_key(["id", "dt"]) } else { b }.build().unwrap()
}

/// A table partitioned by `dt` with `buckets` buckets, keyed by `id`.
fn create(conn: &Connection, prefix: &str, pk: bool, buckets: i32) -> TablePath {
    let path = TablePath::new(database(conn), unique(prefix)).unwrap();
    let mut d = TableDescriptor::new(schema(pk)).with_bucket_count(buckets).with_partition_keys(["dt"]);
    if !pk {
        d = d.with_bucket_key(["id"]);
    }
    conn.admin().create_table(&path, &d, false).unwrap();
    path
}

fn row(id: i64, dt: &str) -> Vec<Value> {
    vec![Value::BigInt(id), Value::String(dt.into()), Value::String(format!("m{id}"))]
}

/// Every id stored in the partition, with the bucket it is in (each bucket scanned through the
/// protocol up to the partition's own count; the bucket after the last one must not exist).
fn stored(conn: &Connection, path: &TablePath, partition: &str, buckets: i32) -> BTreeMap<i64, Vec<i32>> {
    let table = conn.get_table(path).unwrap();
    let mut out: BTreeMap<i64, Vec<i32>> = BTreeMap::new();
    for b in 0..buckets {
        for r in table.scan_partition(partition, b, 0).unwrap() {
            let Value::BigInt(id) = r.row[0] else { panic!("id {:?}", r.row[0]) };
            out.entry(id).or_default().push(b);
        }
    }
    let e = table.scan_partition(partition, buckets, 0).unwrap_err();
    assert!(e.to_string().contains("out of range"), "partition {partition} has a bucket {buckets}: {e}");
    out
}

/// A log writer created before the bucket count changes from 4 to 8: rows for the partition
/// that existed keep going to its 4 buckets, rows for a partition created afterwards (by the
/// writer) are spread over 8, every row once, and every request names its partition's count
/// (the engine refuses writes without it once the table was rescaled).
#[test]
fn a_log_writer_routes_each_row_by_its_partitions_count_across_a_rescale() {
    let conn = embedded();
    let path = create(&conn, "rescale_log", false, 4);
    let w = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let seen = Seen::default();
    for id in 0..40 {
        w.append_with_callback(&row(id, "a"), seen.cb()).unwrap();
    }
    w.flush(None).unwrap();
    conn.admin().alter_bucket_count(&path, 8, false).unwrap();
    let info = conn.admin().get_table_info(&path).unwrap();
    assert_eq!((info.bucket_count(), info.bucket_count_epoch), (8, Some(1)));
    for id in 40..80 {
        w.append_with_callback(&row(id, "a"), seen.cb()).unwrap();
        w.append_with_callback(&row(id + 40, "b"), seen.cb()).unwrap();
    }
    w.flush(None).unwrap();
    let all = seen.all();
    assert_eq!(all.len(), 120);
    for c in &all {
        assert!(c.error.is_none(), "{:?}", c.error);
        let limit = if c.partition.as_deref() == Some("a") { 4 } else { 8 };
        assert!(c.bucket < limit, "partition {:?} bucket {}", c.partition, c.bucket);
    }
    let parts = conn.admin().list_partitions(&path).unwrap();
    assert_eq!(parts.iter().map(|p| p.partition_name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    let a = stored(&conn, &path, "a", 4);
    let b = stored(&conn, &path, "b", 8);
    assert_eq!(a.keys().copied().collect::<Vec<_>>(), (0..80).collect::<Vec<_>>());
    assert_eq!(b.keys().copied().collect::<Vec<_>>(), (80..120).collect::<Vec<_>>());
    assert!(a.values().chain(b.values()).all(|bs| bs.len() == 1), "a row stored twice");
    assert!(b.values().any(|bs| bs[0] >= 4), "the new partition's rows use its 8 buckets: {b:?}");
}

/// The same for a primary-key table: every key is found by a lookup, which hashes it by its
/// partition's own count (a key routed by another count would sit in a bucket where the lookup
/// does not look, and the engine refuses keys in a bucket they do not hash to).
#[test]
fn upserts_route_by_each_partitions_count_across_a_rescale() {
    let conn = embedded();
    let path = create(&conn, "rescale_pk", true, 3);
    let table = conn.get_table(&path).unwrap();
    let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    let seen = Seen::default();
    for id in 0..30 {
        w.upsert_with_callback(&row(id, "a"), seen.cb()).unwrap();
    }
    w.flush(None).unwrap();
    conn.admin().alter_bucket_count(&path, 7, false).unwrap();
    for id in 0..30 {
        w.upsert_with_callback(&row(id + 100, "a"), seen.cb()).unwrap();
        w.upsert_with_callback(&row(id, "b"), seen.cb()).unwrap();
    }
    w.flush(None).unwrap();
    assert!(seen.all().iter().all(|c| c.error.is_none()), "{:?}", seen.all().iter().find(|c| c.error.is_some()));
    assert!(seen.all().iter().any(|c| c.partition.as_deref() == Some("b") && c.bucket >= 3));
    for (ids, dt) in [(0..30, "a"), (100..130, "a"), (0..30, "b")] {
        for id in ids {
            let got = table.lookup(&[Value::BigInt(id), Value::String(dt.into())]).unwrap();
            assert_eq!(got, Some(row(id, dt)), "key ({id}, {dt})");
        }
    }
}

/// A partition dropped and created again after a bucket count change has the new count: rows
/// the writer had already routed for it by the old count fail with INVALID_BUCKET_ROUTING, once
/// each (never stored in a bucket the partition does not have); the same rows written again go
/// to a new lane routed by the partition's count, and are stored once.
#[test]
fn rows_routed_by_a_stale_count_fail_with_74_once_and_are_written_again_by_the_right_count() {
    let conn = embedded();
    let path = create(&conn, "rescale_stale", false, 2);
    let admin = conn.admin();
    let spec = PartitionSpec::new([("dt", "d")]);
    let w = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let first = Seen::default();
    for id in 0..10 {
        w.append_with_callback(&row(id, "d"), first.cb()).unwrap();
    }
    w.flush(None).unwrap();
    assert!(first.all().iter().all(|c| c.error.is_none()));
    admin.alter_bucket_count(&path, 5, false).unwrap();
    admin.drop_partition(&path, &spec, false).unwrap();
    admin.create_partition(&path, &spec, false).unwrap();
    // The writer's lane for "d" still routes by 2 buckets.
    let stale = Seen::default();
    for id in 10..30 {
        w.append_with_callback(&row(id, "d"), stale.cb()).unwrap();
    }
    w.flush(None).unwrap();
    let stale = stale.all();
    assert_eq!(stale.len(), 20);
    for c in &stale {
        let e = c.error.as_ref().expect("routed by a stale count");
        assert_eq!(e.code(), FlussCode::INVALID_BUCKET_ROUTING, "{e}");
    }
    let again = Seen::default();
    for id in 10..30 {
        w.append_with_callback(&row(id, "d"), again.cb()).unwrap();
    }
    w.flush(None).unwrap();
    assert!(again.all().iter().all(|c| c.error.is_none()), "{:?}", again.all().iter().find(|c| c.error.is_some()));
    let d = stored(&conn, &path, "d", 5);
    assert_eq!(d.keys().copied().collect::<Vec<_>>(), (10..30).collect::<Vec<_>>(), "the dropped partition's rows are gone");
    assert!(d.values().all(|bs| bs.len() == 1), "a row stored twice: {d:?}");
    w.close(None).unwrap();
}

/// An INVALID_BUCKET_ROUTING answer (here injected) fails its batch with the server's error,
/// not retried, and retires the lane: the partition's next row goes to a new lane and is
/// written.
#[test]
fn an_invalid_bucket_routing_answer_fails_the_batch_and_the_next_row_is_written() {
    let conn = embedded();
    let path = create(&conn, "rescale_74", false, 1);
    let engine = conn.embedded().unwrap().clone();
    conn.admin().create_partition(&path, &PartitionSpec::new([("dt", "x")]), false).unwrap();
    engine.faults().inject_at(
        &path,
        Some("x"),
        0,
        Fault::Error { code: FlussCode::INVALID_BUCKET_ROUTING, message: "stale routing (injected)".into(), times: 1 },
    );
    let w = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let seen = Seen::default();
    w.append_with_callback(&row(1, "x"), seen.cb()).unwrap();
    w.flush(None).unwrap();
    w.append_with_callback(&row(2, "x"), seen.cb()).unwrap();
    w.flush(None).unwrap();
    let all = seen.all();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].error.as_ref().map(|e| e.code()), Some(FlussCode::INVALID_BUCKET_ROUTING));
    assert!(all[1].error.is_none(), "{:?}", all[1].error);
    assert_eq!(stored(&conn, &path, "x", 1).keys().copied().collect::<Vec<_>>(), [2]);
    assert_eq!(w.stats().open_partitions, 1, "the retired lane is not counted");
}

/// Bad counts are refused before anything is sent; the engine changes partitioned tables only.
#[test]
fn alter_bucket_count_checks() {
    let conn = embedded();
    let admin = conn.admin();
    let path = create(&conn, "rescale_bad", false, 2);
    assert_eq!(admin.alter_bucket_count(&path, 0, false).unwrap_err().client_code(), Some(ClientCode::InvalidConfig));
    assert!(admin.server_supports("alter_bucket_count").unwrap());
    assert_eq!(admin.server_supports("no_such_thing").unwrap_err().client_code(), Some(ClientCode::InvalidConfig));
    let plain = TablePath::new(database(&conn), unique("rescale_plain")).unwrap();
    admin.create_table(&plain, &TableDescriptor::new(schema(false)).with_bucket_count(2), false).unwrap();
    assert_eq!(admin.alter_bucket_count(&plain, 3, false).unwrap_err().code(), FlussCode::INVALID_ALTER_TABLE);
    let missing = TablePath::new(database(&conn), "no_such_table").unwrap();
    admin.alter_bucket_count(&missing, 3, true).unwrap();
    assert_eq!(admin.alter_bucket_count(&missing, 3, false).unwrap_err().code(), FlussCode::TABLE_NOT_EXIST);
}

/// A Fluss 0.9.1 coordinator (ALTER_TABLE up to v0) is not asked: UNSUPPORTED naming its range.
/// Writes to a partitioned table there send no routing count (the server does not tell an
/// epoch) and work as before.
#[test]
fn alter_bucket_count_on_a_0_9_cluster_is_unsupported_cluster() {
    let Some(b) = bootstrap("bucket_rescale::alter_bucket_count_on_a_0_9_cluster_is_unsupported_cluster") else { return };
    bounded("alter_bucket_count_on_a_0_9_cluster_is_unsupported_cluster", LIMIT, move || {
        let conn = connect(&b, &[]);
        let path = create(&conn, "route_rescale", false, 2);
        let admin = conn.admin();
        let info = admin.get_table_info(&path).unwrap();
        if info.bucket_count_epoch.is_some() {
            eprintln!("the cluster has per-partition bucket counts (Fluss 1.0): not a 0.9 check");
            return;
        }
        assert!(!admin.server_supports("alter_bucket_count").unwrap());
        let e = admin.alter_bucket_count(&path, 3, false).unwrap_err();
        assert_eq!(e.client_code(), Some(ClientCode::Unsupported), "{e}");
        assert!(e.to_string().contains("versions 0..=0"), "{e}");
        let w = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
        let seen = Seen::default();
        for id in 0..10 {
            w.append_with_callback(&row(id, "p"), seen.cb()).unwrap();
        }
        w.flush(None).unwrap();
        assert!(seen.all().iter().all(|c| c.error.is_none()), "{:?}", seen.all());
        admin.drop_table(&path, true).unwrap();
    });
}
