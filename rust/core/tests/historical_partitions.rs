//! Fluss 1.0 historical partitions (`table.datalake.historical-partition.enabled`, FIP-28), on
//! the embedded engine with a Paimon lake (`embedded.datalake.format`): the server's rules for
//! the option, the `__historical__` partition created with the table and left out of listings,
//! rows of partitions older than the table retains written there (never creating their
//! partition) with completions that name the partition the row asked for, primary keys kept
//! apart per original partition, a partition dropped under a writer, and a durable engine.
//!
//! No Fluss server here can hold such a table (it needs a lake; the 1.0-SNAPSHOT line also
//! predates the write versions), so the request fields are checked against the 1.0.0 Java
//! client's classes (interop_request_fields_java.rs) and the version gate in cluster/tests.rs.

mod cluster_support;

use cluster_support::unique;
use fluss_writer::partition::{AutoPartition, HISTORICAL_ENABLED, HISTORICAL_PARTITION};
use fluss_writer::{
    ClientCode, Config, Connection, DataType, FlussCode, PartitionSpec, Schema, TableDescriptor, TablePath, Value, WriteCompletion,
    WriterOptions,
};

const DB: &str = "fw_hist";

fn engine(lake: Option<&str>) -> Connection {
    let mut extra = vec![];
    if let Some(f) = lake {
        extra.push(("embedded.datalake.format", f));
    }
    let conn = cluster_support::embedded_with(&extra);
    conn.admin().create_database(DB, true).unwrap();
    conn
}

fn spec(dt: &str) -> PartitionSpec {
    PartitionSpec::new([("dt", dt)])
}

/// `dt` (the partition key), `id`, `v`; a primary key (dt, id) when `pk`.
fn schema(pk: bool) -> Schema {
    let b = Schema::builder().column_not_null("dt", DataType::String).column_not_null("id", DataType::BigInt).column("v", DataType::String);
    if pk { b.primary_key(["dt", "id"]) } else { b }.build().unwrap()
}

/// Auto-partitioned by day (UTC, 7 days retained), lake enabled, historical partitions on.
fn historical(schema: Schema) -> TableDescriptor {
    let d = TableDescriptor::new(schema).with_bucket_count(2).with_partition_keys(["dt"]);
    let d = if d.schema.has_primary_key() { d } else { d.with_bucket_key(["id"]) };
    d.with_property(AutoPartition::ENABLED, "true")
        .with_property(AutoPartition::TIME_UNIT, "DAY")
        .with_property(AutoPartition::TIME_ZONE, "UTC")
        .with_property("table.datalake.enabled", "true")
        .with_property(HISTORICAL_ENABLED, "true")
}

fn row(dt: &str, id: i64, v: &str) -> [Value; 3] {
    [Value::String(dt.into()), Value::BigInt(id), Value::String(v.into())]
}

fn names(conn: &Connection, path: &TablePath) -> Vec<String> {
    conn.admin().list_partitions(path).unwrap().into_iter().map(|p| p.partition_name).collect()
}

fn ok(c: WriteCompletion) -> WriteCompletion {
    assert!(c.is_ok(), "{c:?}");
    c
}

#[test]
fn a_historical_table_needs_a_paimon_lake_and_one_auto_partition_key() {
    let path = || TablePath::new(DB, unique("hist")).unwrap();
    // No lake: the table cannot enable one.
    let e = engine(None).admin().create_table(&path(), &historical(schema(true)), false).unwrap_err();
    assert_eq!(e.code(), FlussCode::INVALID_TABLE, "{e}");
    assert!(e.message().contains("doesn't enable datalake tables"), "{e}");
    // Another lake, no auto-partitioning: the server's list of unmet requirements.
    let e = engine(Some("iceberg")).admin().create_table(&path(), &historical(schema(true)), false).unwrap_err();
    assert_eq!(e.code(), FlussCode::INVALID_CONFIG, "{e}");
    assert!(e.message().contains("must be set to 'paimon' (currently 'iceberg')"), "{e}");
    let conn = engine(Some("paimon"));
    let manual = historical(schema(true)).with_property(AutoPartition::ENABLED, "false");
    let e = conn.admin().create_table(&path(), &manual, false).unwrap_err();
    assert_eq!(e.code(), FlussCode::INVALID_CONFIG, "{e}");
    assert!(e.message().contains("'table.auto-partition.enabled' must be set to true"), "{e}");
    // The table gets the cluster's lake format and its historical partition, which is not listed.
    let p = path();
    conn.admin().create_table(&p, &historical(schema(true)), false).unwrap();
    let table = conn.get_table(&p).unwrap();
    assert_eq!(table.info().descriptor.properties.get("table.datalake.format").map(String::as_str), Some("paimon"));
    assert!(names(&conn, &p).iter().all(|n| !n.starts_with("__")), "{:?}", names(&conn, &p));
    assert_eq!(table.scan_partition(HISTORICAL_PARTITION, 0, 0).unwrap().len(), 0);
    // A writer never creates it, nor any `__` partition.
    let e = conn.admin().create_partition(&p, &spec(HISTORICAL_PARTITION), true).unwrap_err();
    assert_eq!(e.code(), ClientCode::InvalidTable as i32, "{e}");
}

#[test]
fn rows_of_expired_partitions_go_to_the_historical_partition() {
    let conn = engine(Some("paimon"));
    let path = TablePath::new(DB, unique("hist_pk")).unwrap();
    conn.admin().create_table(&path, &historical(schema(true)), false).unwrap();
    // An old partition that still exists takes its rows itself.
    conn.admin().create_partition(&path, &spec("20200102"), false).unwrap();
    let old_id = conn.admin().list_partitions(&path).unwrap().into_iter().find(|p| p.partition_name == "20200102").unwrap().partition_id;
    let table = conn.get_table(&path).unwrap();
    let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    let a = w.upsert(&row("20200101", 1, "a")).unwrap();
    let b = w.upsert(&row("20200102", 1, "b")).unwrap();
    let c = w.upsert(&row("20200103", 1, "c")).unwrap();
    let d = w.upsert(&row("20200101", 2, "d")).unwrap();
    w.flush(None).unwrap();
    let (a, b, c, d) = (ok(a.wait(None).unwrap()), ok(b.wait(None).unwrap()), ok(c.wait(None).unwrap()), ok(d.wait(None).unwrap()));
    // Completions name the partition the row asked for, and the id that stored it.
    assert_eq!(
        (a.partition.as_deref(), b.partition.as_deref(), c.partition.as_deref()),
        (Some("20200101"), Some("20200102"), Some("20200103"))
    );
    let historical_id = a.partition_id.expect("the historical partition's id");
    assert_eq!((c.partition_id, d.partition_id), (Some(historical_id), Some(historical_id)));
    assert_eq!(b.partition_id, Some(old_id));
    // Nothing was created for the expired partitions.
    let listed = names(&conn, &path);
    assert!(listed.contains(&"20200102".to_string()) && !listed.iter().any(|n| n == "20200101" || n == "20200103"), "{listed:?}");
    // Keys stay apart per original partition (id 1 in three partitions).
    let look = |dt: &str, id: i64| table.lookup(&[Value::String(dt.into()), Value::BigInt(id)]).unwrap().map(|r| r[2].clone());
    assert_eq!(look("20200101", 1), Some(Value::String("a".into())));
    assert_eq!(look("20200102", 1), Some(Value::String("b".into())));
    assert_eq!(look("20200103", 1), Some(Value::String("c".into())));
    assert_eq!(look("20200101", 2), Some(Value::String("d".into())));
    assert_eq!(look("20200104", 1), None);
    // A delete of a historical row.
    ok(w.delete(&[Value::String("20200101".into()), Value::BigInt(2)]).unwrap().wait(None).unwrap());
    assert_eq!(look("20200101", 2), None);
    assert_eq!(look("20200101", 1), Some(Value::String("a".into())));

    // Retention drops the old partition under the writer: its next rows go to the historical
    // partition (the dropped rows went with the partition: this engine has no lake to keep them).
    conn.admin().drop_partition(&path, &spec("20200102"), false).unwrap();
    let e = ok(w.upsert(&row("20200102", 2, "e")).unwrap().wait(None).unwrap());
    assert_eq!((e.partition.as_deref(), e.partition_id), (Some("20200102"), Some(historical_id)));
    assert_eq!(look("20200102", 2), Some(Value::String("e".into())));
    assert!(!names(&conn, &path).contains(&"20200102".to_string()));
    w.close(None).unwrap();
}

#[test]
fn log_rows_of_expired_partitions_are_appended_to_the_historical_partition() {
    let conn = engine(Some("paimon"));
    let path = TablePath::new(DB, unique("hist_log")).unwrap();
    conn.admin().create_table(&path, &historical(schema(false)), false).unwrap();
    let table = conn.get_table(&path).unwrap();
    // Creating partitions on write is on, and still none is created for an expired name.
    let w = table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let results: Vec<_> = (0..40i64).map(|i| w.append(&row(if i % 2 == 0 { "20200101" } else { "20200103" }, i, "x")).unwrap()).collect();
    w.flush(None).unwrap();
    for (i, r) in results.iter().enumerate() {
        let c = ok(r.wait(None).unwrap());
        assert_eq!(c.partition.as_deref(), Some(if i % 2 == 0 { "20200101" } else { "20200103" }));
    }
    let stored: Vec<i64> = {
        let mut ids: Vec<i64> = (0..2)
            .flat_map(|b| table.scan_partition(HISTORICAL_PARTITION, b, 0).unwrap())
            .map(|r| match r.row[1] {
                Value::BigInt(id) => id,
                ref other => panic!("{other:?}"),
            })
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(stored, (0..40).collect::<Vec<_>>());
    assert!(names(&conn, &path).iter().all(|n| n != "20200101" && n != "20200103"));
    w.close(None).unwrap();
}

#[test]
fn a_durable_engine_keeps_historical_keys_apart_after_a_reopen() {
    let dir = std::env::temp_dir().join(unique("fw-hist-durable"));
    let open = || {
        let mut c = Config::default();
        c.set("bootstrap.servers", &format!("embedded:{}", dir.display())).unwrap();
        c.set("embedded.datalake.format", "paimon").unwrap();
        c.set("client.writer.batch-timeout", "5ms").unwrap();
        Connection::connect(c).unwrap()
    };
    let path = TablePath::new(DB, unique("hist_dur")).unwrap();
    {
        let conn = open();
        conn.admin().create_database(DB, true).unwrap();
        conn.admin().create_table(&path, &historical(schema(true)), false).unwrap();
        let w = conn.get_table(&path).unwrap().new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
        w.upsert_detached(&row("20200101", 1, "a")).unwrap();
        w.upsert_detached(&row("20200103", 1, "c")).unwrap();
        w.upsert_detached(&row("20200103", 2, "gone")).unwrap();
        w.delete_detached(&[Value::String("20200103".into()), Value::BigInt(2)]).unwrap();
        w.close(None).unwrap();
        conn.close(None).unwrap();
    }
    let conn = open();
    let table = conn.get_table(&path).unwrap();
    let look = |dt: &str, id: i64| table.lookup(&[Value::String(dt.into()), Value::BigInt(id)]).unwrap().map(|r| r[2].clone());
    assert_eq!(look("20200101", 1), Some(Value::String("a".into())));
    assert_eq!(look("20200103", 1), Some(Value::String("c".into())));
    assert_eq!(look("20200103", 2), None);
    conn.close(None).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
