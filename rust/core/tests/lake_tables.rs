//! Tables with a datalake format (`table.datalake.format` = paimon, iceberg or lance): rows are
//! keyed and bucketed by the lake format's rule (docs/wire-format.md, "Lake formats"), on the
//! embedded engine and on the real Fluss 0.9.1 cluster (tests marked `_cluster`).
//!
//! The expected buckets are computed here from the lake encoders and hash functions, which
//! `cluster_interop_java::lake_key_bytes_and_buckets_match_java` holds to Fluss's own Java classes;
//! what these tests add is the table-level choice (which key uses which encoding, after the
//! server's defaults such as `table.kv.format-version` = 2) and the write path end to end.
//! `cluster_interop_java::java_client_finds_rows_of_lake_format_tables` has the Java client look
//! the rows up.

mod cluster_support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use cluster_support::{bootstrap, bounded, connect, create, database, drop_table_when_reachable, embedded, unique, Seen};
use fluss_writer::embedded::ChangeType;
use fluss_writer::wire::{bucket_for_key, encode_key, lake};
use fluss_writer::{
    ClientCode, Connection, DataType, FlussCode, Schema, TableDescriptor, TablePath, Value, WriteCompletion, WriterOptions,
};

const LIMIT: Duration = Duration::from_secs(120);

/// The bucket a lake format gives a key of `(type, value)` columns, from the format's encoder and
/// hash (not from the writer's per-table codec).
fn lake_bucket(format: &str, key: &[(&DataType, &Value)], buckets: i32) -> i32 {
    let mut bytes = Vec::new();
    match format {
        "paimon" => {
            lake::encode_paimon(key, &mut bytes);
            lake::paimon_bucket(&bytes, buckets)
        }
        "iceberg" => {
            lake::encode_iceberg(key[0].0, key[0].1, &mut bytes);
            lake::iceberg_bucket(&bytes, buckets)
        }
        "hudi" => {
            let named: Vec<(&str, &DataType, &Value)> = key.iter().map(|&(t, v)| ("k", t, v)).collect();
            lake::encode_hudi(&named, &mut bytes).unwrap();
            lake::hudi_bucket(&bytes, buckets)
        }
        _ => fluss_bucket(key, buckets),
    }
}

/// The bucket without a lake (compacted key bytes, Fluss's hash).
fn fluss_bucket(key: &[(&DataType, &Value)], buckets: i32) -> i32 {
    let mut b = Schema::builder();
    for (i, (t, _)) in key.iter().enumerate() {
        b = b.column_not_null(format!("c{i}"), (*t).clone());
    }
    let schema = b.build().unwrap();
    let row: Vec<Value> = key.iter().map(|(_, v)| (*v).clone()).collect();
    let mut bytes = Vec::new();
    encode_key(&schema, &(0..key.len()).collect::<Vec<_>>(), &row, &mut bytes).unwrap();
    bucket_for_key(&bytes, buckets)
}

fn row(k: i32, s: &str, i: i64) -> Vec<Value> {
    vec![Value::Int(k), Value::String(s.into()), if i % 4 == 0 { Value::Null } else { Value::String(format!("v{i}")) }, Value::BigInt(i)]
}

fn pk_schema(pk: &[&str]) -> Schema {
    Schema::builder()
        .column_not_null("k", DataType::Int)
        .column_not_null("s", DataType::String)
        .column("v", DataType::String)
        .column("n", DataType::BigInt)
        .primary_key(pk.iter().copied())
        .build()
        .unwrap()
}

/// Primary-key tables of each format: upserts and deletes complete once each, every row sits in
/// the bucket of the lake rule (the changelog per bucket shows it), lookups find exactly the
/// live rows, and the server stamps kv format version 2.
fn pk_tables(conn: &Connection) {
    let buckets = 5;
    // (format, descriptor, the columns whose lake encoding decides the bucket)
    let cases: Vec<(&str, TableDescriptor, Vec<usize>)> = vec![
        ("paimon", TableDescriptor::new(pk_schema(&["k"])), vec![0]),
        ("iceberg", TableDescriptor::new(pk_schema(&["k"])), vec![0]),
        ("lance", TableDescriptor::new(pk_schema(&["k"])), vec![0]),
        ("paimon", TableDescriptor::new(pk_schema(&["s", "k"])), vec![1, 0]),
        ("paimon", TableDescriptor::new(pk_schema(&["k", "s"])).with_bucket_key(["s"]), vec![1]),
        ("iceberg", TableDescriptor::new(pk_schema(&["k", "s"])).with_bucket_key(["s"]), vec![1]),
    ];
    for (format, d, bucket_cols) in cases {
        let d = d.with_bucket_count(buckets).with_property("table.datalake.format", format);
        let path = create(conn, &format!("lake_{format}"), &d);
        let table = conn.get_table(&path).unwrap();
        let props = &table.info().descriptor.properties;
        assert_eq!(props.get("table.kv.format-version").map(String::as_str), Some("2"), "{path}: {props:?}");
        let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
        let seen = Seen::default();
        let rows: Vec<Vec<Value>> = (0..200i64).map(|i| row((i * 7_919 % 10_007) as i32 - 5_000, &format!("s{}é", i % 37), i)).collect();
        for r in &rows {
            w.upsert_with_callback(r, seen.cb()).unwrap();
        }
        let pk = table.info().schema().primary_key_indexes();
        let deleted: Vec<&Vec<Value>> = rows.iter().step_by(10).collect();
        for r in &deleted {
            let key: Vec<Value> = pk.iter().map(|&i| r[i].clone()).collect();
            w.delete_with_callback(&key, seen.cb()).unwrap();
        }
        w.flush(None).unwrap();
        let all = seen.all();
        assert_eq!(all.len(), rows.len() + deleted.len(), "{path}: one completion per operation");
        assert!(all.iter().all(WriteCompletion::is_ok), "{path}: {:?}", all.iter().find(|c| !c.is_ok()));
        // Where every row went.
        let types: Vec<DataType> = table.info().schema().columns().iter().map(|c| c.data_type.clone()).collect();
        let mut in_bucket: BTreeMap<i32, i32> = BTreeMap::new();
        let mut differs = 0;
        for b in 0..buckets {
            for s in table.scan(b, 0).unwrap() {
                let key: Vec<(&DataType, &Value)> = bucket_cols.iter().map(|&c| (&types[c], &s.row[c])).collect();
                let want = lake_bucket(format, &key, buckets);
                assert_eq!(b, want, "{path} ({format}): row {:?} in bucket {b}, the lake rule says {want}", s.row);
                if s.change_type == ChangeType::Insert {
                    *in_bucket.entry(b).or_default() += 1;
                    differs += (fluss_bucket(&key, buckets) != want) as usize;
                }
            }
        }
        assert_eq!(in_bucket.values().sum::<i32>(), rows.len() as i32, "{path}: every row inserted once");
        if format != "lance" {
            assert!(differs > rows.len() / 2, "{path}: the lake rule must place most rows elsewhere than Fluss's ({differs})");
        }
        for (i, r) in rows.iter().enumerate() {
            let key: Vec<Value> = pk.iter().map(|&c| r[c].clone()).collect();
            let got = table.lookup(&key).unwrap();
            assert_eq!(got.as_ref(), if i % 10 == 0 { None } else { Some(r) }, "{path}: lookup {key:?}");
        }
        w.close(None).unwrap();
        drop_table_when_reachable(conn, &path);
    }
}

/// HUDI tables (Fluss 1.0): rows of primary-key tables (one key column, two, and a bucket key
/// that is a part of the key) sit in the bucket of Hudi's rule, every live row is found by
/// lookups (whose key bytes stay compacted), and a multi-column key holding a ',' is refused
/// synchronously (INVALID_ROW naming the column) with nothing written.
fn hudi_tables(conn: &Connection) {
    let buckets = 6;
    let cases: Vec<(TableDescriptor, Vec<usize>)> = vec![
        (TableDescriptor::new(pk_schema(&["k"])), vec![0]),
        (TableDescriptor::new(pk_schema(&["s", "k"])), vec![1, 0]),
        (TableDescriptor::new(pk_schema(&["k", "s"])).with_bucket_key(["s"]), vec![1]),
    ];
    for (d, bucket_cols) in cases {
        let d = d.with_bucket_count(buckets).with_property("table.datalake.format", "hudi");
        let path = create(conn, "lake_hudi", &d);
        let table = conn.get_table(&path).unwrap();
        let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
        let seen = Seen::default();
        let rows: Vec<Vec<Value>> = (0..150i64).map(|i| row((i * 7_919 % 10_007) as i32 - 5_000, &format!("s{}é", i % 37), i)).collect();
        for r in &rows {
            w.upsert_with_callback(r, seen.cb()).unwrap();
        }
        if bucket_cols.len() == 2 {
            let e = w.upsert_detached(&row(1, "a,b", 1)).unwrap_err();
            assert_eq!(e.client_code(), Some(ClientCode::InvalidRow), "{e}");
            assert!(e.message().contains("\"s\"") && e.message().contains("','"), "{e}");
        }
        w.flush(None).unwrap();
        let all = seen.all();
        assert_eq!(all.len(), rows.len(), "{path}: one completion per row");
        assert!(all.iter().all(WriteCompletion::is_ok), "{path}: {:?}", all.iter().find(|c| !c.is_ok()));
        let types: Vec<DataType> = table.info().schema().columns().iter().map(|c| c.data_type.clone()).collect();
        let (mut stored, mut differs) = (0, 0);
        for b in 0..buckets {
            for s in table.scan(b, 0).unwrap() {
                let key: Vec<(&DataType, &Value)> = bucket_cols.iter().map(|&c| (&types[c], &s.row[c])).collect();
                let want = lake_bucket("hudi", &key, buckets);
                assert_eq!(b, want, "{path}: row {:?} in bucket {b}, Hudi's rule says {want}", s.row);
                stored += 1;
                differs += (fluss_bucket(&key, buckets) != want) as usize;
            }
        }
        assert_eq!(stored, rows.len(), "{path}: every row once, the refused one not at all");
        assert!(differs > rows.len() / 2, "{path}: Hudi's rule must place most rows elsewhere than Fluss's ({differs})");
        let pk = table.info().schema().primary_key_indexes();
        for r in &rows {
            let key: Vec<Value> = pk.iter().map(|&c| r[c].clone()).collect();
            assert_eq!(table.lookup(&key).unwrap().as_ref(), Some(r), "{path}: lookup {key:?}");
        }
        w.close(None).unwrap();
        drop_table_when_reachable(conn, &path);
    }
}

#[test]
fn hudi_tables_embedded() {
    hudi_tables(&embedded());
}

/// Against a Fluss 1.0 server (`FLUSS_1_0_BOOTSTRAP_SERVERS`; 0.9.1 does not know HUDI).
#[test]
fn hudi_tables_cluster_1_0() {
    let Ok(b) = std::env::var("FLUSS_1_0_BOOTSTRAP_SERVERS") else {
        eprintln!("lake_tables::hudi_tables_cluster_1_0: FLUSS_1_0_BOOTSTRAP_SERVERS is not set: not testing against a Fluss 1.0 server");
        return;
    };
    bounded("lake_hudi_tables_cluster_1_0", LIMIT, move || hudi_tables(&connect(&b, &[])));
}

#[test]
fn pk_tables_embedded() {
    pk_tables(&embedded());
}

#[test]
fn pk_tables_cluster() {
    let Some(b) = bootstrap("lake_tables::pk_tables_cluster") else { return };
    bounded("lake_pk_tables_cluster", LIMIT, move || pk_tables(&connect(&b, &[])));
}

/// A log table with a two-column bucket key in a paimon-format table, a partitioned one, and an
/// Arrow batch: rows land in the paimon bucket of (k, s).
fn log_tables(conn: &Connection) {
    let schema = Schema::builder()
        .column_not_null("k", DataType::Int)
        .column_not_null("s", DataType::String)
        .column("v", DataType::String)
        .column("n", DataType::BigInt)
        .build()
        .unwrap();
    let buckets = 4;
    let d = TableDescriptor::new(schema)
        .with_bucket_count(buckets)
        .with_bucket_key(["k", "s"])
        .with_property("table.datalake.format", "paimon");
    let path = create(conn, "lake_log", &d);
    let table = conn.get_table(&path).unwrap();
    let w = table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let seen = Seen::default();
    let rows: Vec<Vec<Value>> = (0..300i64).map(|i| row(i as i32 - 150, &format!("a long string key {}", i % 11), i)).collect();
    for r in &rows[..200] {
        w.append_with_callback(r, seen.cb()).unwrap();
    }
    let tail = 200..300i64;
    let batch = arrow_array::RecordBatch::try_from_iter([
        ("k", Arc::new(arrow_array::Int32Array::from_iter_values(tail.clone().map(|i| i as i32 - 150))) as arrow_array::ArrayRef),
        ("s", Arc::new(arrow_array::StringArray::from_iter_values(tail.clone().map(|i| format!("a long string key {}", i % 11)))) as _),
        ("v", Arc::new(arrow_array::StringArray::from_iter(tail.clone().map(|i| (i % 4 != 0).then(|| format!("v{i}"))))) as _),
        ("n", Arc::new(arrow_array::Int64Array::from_iter_values(tail)) as _),
    ])
    .unwrap();
    w.write_arrow_batch_with_callback(&batch, seen.cb()).unwrap();
    w.flush(None).unwrap();
    assert!(seen.all().iter().all(WriteCompletion::is_ok));
    let mut count = 0;
    for b in 0..buckets {
        for s in table.scan(b, 0).unwrap() {
            let want = lake_bucket("paimon", &[(&DataType::Int, &s.row[0]), (&DataType::String, &s.row[1])], buckets);
            assert_eq!(b, want, "{path}: row {:?}", s.row);
            count += 1;
        }
    }
    assert_eq!(count, rows.len());
    w.close(None).unwrap();
    drop_table_when_reachable(conn, &path);
}

#[test]
fn log_tables_embedded() {
    log_tables(&embedded());
}

#[test]
fn log_tables_cluster() {
    let Some(b) = bootstrap("lake_tables::log_tables_cluster") else { return };
    bounded("lake_log_tables_cluster", LIMIT, move || log_tables(&connect(&b, &[])));
}

/// What is refused, and how: a lake-enabled table on a cluster without a lake (the server's
/// INVALID_TABLE); an unknown format (the server's INVALID_CONFIG); keys an iceberg table cannot bucket (the table is created, as on a server, but
/// its writers and lookups are refused with INVALID_TABLE naming why); an empty iceberg key
/// (INVALID_ROW, synchronously, nothing written).
fn refusals(conn: &Connection) {
    let enabled = TableDescriptor::new(pk_schema(&["k"])).with_property("table.datalake.enabled", "true");
    let path = TablePath::new(database(conn), unique("lake_on")).unwrap();
    let e = conn.admin().create_table(&path, &enabled, false).unwrap_err();
    assert_eq!(e.code(), FlussCode::INVALID_TABLE, "{e}");
    assert!(e.message().contains("table.datalake.enabled"), "{e}");

    // A format Fluss does not know: the server's INVALID_CONFIG (39) at CreateTable.
    let delta = TableDescriptor::new(pk_schema(&["k"])).with_property("table.datalake.format", "delta");
    let path = TablePath::new(database(conn), unique("lake_delta")).unwrap();
    let e = conn.admin().create_table(&path, &delta, false).unwrap_err();
    assert_eq!(e.code(), FlussCode::INVALID_CONFIG, "{e}");
    assert!(e.message().contains("delta"), "{e}");

    let two = TableDescriptor::new(pk_schema(&["k", "s"])).with_property("table.datalake.format", "iceberg");
    let path = create(conn, "lake_ice2", &two);
    let table = conn.get_table(&path).unwrap();
    let e = table.new_upsert().unwrap().create_writer(WriterOptions::default()).err().expect("the writer is refused");
    assert_eq!(e.client_code(), Some(ClientCode::InvalidTable), "{e}");
    assert!(e.message().contains("exactly one column"), "{e}");
    let e = table.lookup(&[Value::Int(1), Value::String("x".into())]).unwrap_err();
    assert_eq!(e.client_code(), Some(ClientCode::InvalidTable), "{e}");
    drop_table_when_reachable(conn, &path);

    let boolean =
        Schema::builder().column_not_null("b", DataType::Boolean).column("v", DataType::String).primary_key(["b"]).build().unwrap();
    let path = create(conn, "lake_iceb", &TableDescriptor::new(boolean).with_property("table.datalake.format", "iceberg"));
    let e =
        conn.get_table(&path).unwrap().new_upsert().unwrap().create_writer(WriterOptions::default()).err().expect("the writer is refused");
    assert_eq!(e.client_code(), Some(ClientCode::InvalidTable), "{e}");
    assert!(e.message().contains("\"b\"") && e.message().contains("BOOLEAN"), "{e}");
    drop_table_when_reachable(conn, &path);

    let strings =
        Schema::builder().column_not_null("s", DataType::String).column("v", DataType::String).primary_key(["s"]).build().unwrap();
    let path = create(conn, "lake_ices", &TableDescriptor::new(strings).with_property("table.datalake.format", "iceberg"));
    let w = conn.get_table(&path).unwrap().new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    let e = w.upsert_detached(&[Value::String(String::new()), Value::Null]).unwrap_err();
    assert_eq!(e.client_code(), Some(ClientCode::InvalidRow), "{e}");
    assert!(e.message().contains("empty"), "{e}");
    w.upsert_detached(&[Value::String("x".into()), Value::Null]).unwrap();
    w.close(None).unwrap();
    let table = conn.get_table(&path).unwrap();
    let stored: usize = (0..table.info().bucket_count()).map(|b| table.scan(b, 0).unwrap().len()).sum();
    assert_eq!(stored, 1, "only the valid row was written");
    drop_table_when_reachable(conn, &path);
}

#[test]
fn refusals_embedded() {
    refusals(&embedded());
}

#[test]
fn refusals_cluster() {
    let Some(b) = bootstrap("lake_tables::refusals_cluster") else { return };
    bounded("lake_refusals_cluster", LIMIT, move || refusals(&connect(&b, &[])));
}

/// A durable embedded engine rebuilds a paimon-keyed table's state from its changelog on reopen.
#[test]
fn durable_embedded_lake_table_survives_reopen() {
    let dir = std::env::temp_dir().join(unique("fw-lake-durable"));
    let loc = format!("embedded:{}", dir.display());
    let d = TableDescriptor::new(pk_schema(&["s", "k"])).with_bucket_count(3).with_property("table.datalake.format", "paimon");
    let path;
    {
        let conn = Connection::open(&loc).unwrap();
        path = create(&conn, "lake_dur", &d);
        let w = conn.get_table(&path).unwrap().new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
        for i in 0..60i64 {
            w.upsert_detached(&row(i as i32, "a string longer than seven bytes", i)).unwrap();
        }
        w.delete_detached(&[Value::String("a string longer than seven bytes".into()), Value::Int(5)]).unwrap();
        w.close(None).unwrap();
        conn.close(None).unwrap();
    }
    let conn = Connection::open(&loc).unwrap();
    let table = conn.get_table(&path).unwrap();
    for i in 0..60 {
        let got = table.lookup(&[Value::String("a string longer than seven bytes".into()), Value::Int(i)]).unwrap();
        assert_eq!(got.is_some(), i != 5, "key {i} after reopen");
    }
    conn.close(None).unwrap();
    let _ = std::fs::remove_dir_all(dir);
}
