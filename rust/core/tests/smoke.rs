//! End-to-end smoke test on the embedded engine: log and primary-key tables, every write form.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use fluss_writer::{row, Connection, DataType, Schema, TableDescriptor, TablePath, Value, WriterOptions};

#[test]
fn log_table_round_trip_with_callbacks() {
    let conn = Connection::open("embedded").unwrap();
    let path = TablePath::new("fluss", "smoke_log").unwrap();
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("msg", DataType::String).build().unwrap();
    conn.admin().create_table(&path, &TableDescriptor::new(schema).with_bucket_count(3).with_bucket_key(["id"]), false).unwrap();
    let writer = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    for i in 0..1000i64 {
        let seen = seen.clone();
        writer
            .append_with_callback(&row![i, format!("m{i}")], move |c| {
                assert!(c.is_ok(), "{:?}", c.error);
                seen.lock().unwrap().push((i, c.bucket, c.offset));
            })
            .unwrap();
    }
    let r = writer.append(&row![1000i64, "last"]).unwrap();
    writer.flush(None).unwrap();
    assert!(r.is_done());
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1000);
    let engine = conn.embedded().unwrap();
    let mut total = 0;
    for b in 0..3 {
        let rows = engine.scan(&path, b, 0).unwrap();
        for r in &rows {
            let id = match r.row[0] {
                Value::BigInt(x) => x,
                _ => panic!(),
            };
            if id < 1000 {
                let (_, bucket, offset) = seen.iter().find(|s| s.0 == id).unwrap();
                assert_eq!((*bucket, *offset), (b, r.offset));
            }
        }
        total += rows.len();
    }
    assert_eq!(total, 1001);
    writer.close(None).unwrap();
}

#[test]
fn pk_table_upsert_delete() {
    let conn = Connection::open("embedded").unwrap();
    let path = TablePath::new("fluss", "smoke_pk").unwrap();
    let schema = Schema::builder()
        .column_not_null("id", DataType::Int)
        .column("name", DataType::String)
        .column("age", DataType::BigInt)
        .primary_key(["id"])
        .build()
        .unwrap();
    conn.admin().create_table(&path, &TableDescriptor::new(schema).with_bucket_count(4), false).unwrap();
    let table = conn.get_table(&path).unwrap();
    let writer = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    let ok = Arc::new(AtomicUsize::new(0));
    for i in 0..200 {
        let ok = ok.clone();
        writer
            .upsert_with_callback(&row![i, format!("n{i}"), i as i64], move |c| {
                assert!(c.is_ok(), "{:?}", c.error);
                ok.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
    }
    writer.delete(&[Value::Int(5)]).unwrap();
    writer.flush(None).unwrap();
    assert_eq!(ok.load(Ordering::SeqCst), 200);
    let engine = conn.embedded().unwrap();
    assert_eq!(engine.lookup(&path, &[Value::Int(7)]).unwrap(), Some(row![7, "n7", 7i64]));
    assert_eq!(engine.lookup(&path, &[Value::Int(5)]).unwrap(), None);
    let partial =
        table.new_upsert().unwrap().partial_update_by_name(&["id", "age"]).unwrap().create_writer(WriterOptions::default()).unwrap();
    partial.upsert(&row![7, Value::Null, 70i64]).unwrap().wait(None).unwrap().result().unwrap();
    assert_eq!(engine.lookup(&path, &[Value::Int(7)]).unwrap(), Some(row![7, "n7", 70i64]));
}

#[test]
fn read_back_through_the_protocol_matches_the_engine() {
    let conn = Connection::open("embedded").unwrap();
    let path = TablePath::new("fluss", "smoke_readback").unwrap();
    let schema = Schema::builder().column_not_null("id", DataType::Int).column("v", DataType::String).primary_key(["id"]).build().unwrap();
    conn.admin().create_table(&path, &TableDescriptor::new(schema).with_bucket_count(3), false).unwrap();
    let table = conn.get_table(&path).unwrap();
    let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    for i in 0..50 {
        w.upsert_detached(&row![i, format!("v{i}")]).unwrap();
    }
    w.upsert_detached(&row![3, "again"]).unwrap();
    w.delete_detached(&[Value::Int(4)]).unwrap();
    w.flush(None).unwrap();
    let engine = conn.embedded().unwrap();
    for b in 0..3 {
        assert_eq!(table.scan(b, 0).unwrap(), engine.scan(&path, b, 0).unwrap(), "bucket {b}");
        assert_eq!(table.scan(b, 2).unwrap(), engine.scan(&path, b, 2).unwrap(), "bucket {b} from 2");
    }
    for k in [0, 3, 4, 49, 77] {
        assert_eq!(table.lookup(&[Value::Int(k)]).unwrap(), engine.lookup(&path, &[Value::Int(k)]).unwrap(), "key {k}");
    }
    assert_eq!(table.lookup(&[Value::Int(3)]).unwrap(), Some(row![3, "again"]));
    assert!(table.scan(9, 0).is_err());
}

#[test]
fn out_of_range_timestamp_is_a_clear_synchronous_error() {
    let conn = Connection::open("embedded").unwrap();
    let path = TablePath::new("fluss", "smoke_ts_range").unwrap();
    let schema = Schema::builder().column_not_null("id", DataType::Int).column("ts", DataType::Timestamp { precision: 9 }).build().unwrap();
    conn.admin().create_table(&path, &TableDescriptor::new(schema).with_bucket_count(1), false).unwrap();
    let w = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    // Fits a TIMESTAMP value (millis) but not Arrow's nanosecond unit (i64 nanoseconds).
    let far = Value::Timestamp(fluss_writer::Timestamp { millis: i64::MAX / 100, nanos_of_milli: 0 });
    let called = Arc::new(AtomicUsize::new(0));
    let c = called.clone();
    let e = w
        .append_with_callback(&row![1, far], move |_| {
            c.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap_err();
    assert_eq!(e.code(), fluss_writer::ClientCode::InvalidRow as i32, "{e}");
    w.append(&row![2, Value::Null]).unwrap().wait(None).unwrap().result().unwrap();
    w.flush(None).unwrap();
    assert_eq!(called.load(Ordering::SeqCst), 0);
    assert_eq!(w.stats().pending_callbacks, 0);
}

#[test]
fn out_of_range_timestamp_in_an_upsert_is_a_clear_synchronous_error() {
    let conn = Connection::open("embedded").unwrap();
    let path = TablePath::new("fluss", "smoke_ts_range_pk").unwrap();
    let schema = Schema::builder()
        .column_not_null("id", DataType::Int)
        .column("ts", DataType::Timestamp { precision: 9 })
        .primary_key(["id"])
        .build()
        .unwrap();
    conn.admin().create_table(&path, &TableDescriptor::new(schema).with_bucket_count(1), false).unwrap();
    let w = conn.get_table(&path).unwrap().new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    let far = Value::Timestamp(fluss_writer::Timestamp { millis: i64::MAX / 100, nanos_of_milli: 0 });
    let e = w.upsert(&row![1, far]).unwrap_err();
    assert_eq!(e.code(), fluss_writer::ClientCode::InvalidRow as i32, "{e}");
    // The rest of the batch is unaffected.
    w.upsert(&row![2, Value::Null]).unwrap().wait(None).unwrap().result().unwrap();
    assert_eq!(conn.embedded().unwrap().lookup(&path, &[Value::Int(2)]).unwrap(), Some(row![2, Value::Null]));
}

/// No address is an error that says what to pass, never a silent in-memory engine.
#[test]
fn connecting_without_an_address_is_invalid_config() {
    use fluss_writer::{ClientCode, Config};
    let e = Connection::connect(Config::default()).err().expect("no address must not connect");
    assert_eq!(e.code(), ClientCode::InvalidConfig as i32);
    assert_eq!(
        e.message(),
        "bootstrap.servers is not set: pass \"host:port[,host:port]\" for a Fluss cluster, or \"embedded\" (in memory) / \
         \"embedded:/path\" (durable) for the embedded engine"
    );
    let e = Connection::open("").err().expect("an empty address must not connect");
    assert_eq!(e.code(), ClientCode::InvalidConfig as i32);
    assert!(e.message().starts_with("bootstrap.servers is empty: pass \"host:port"), "{}", e.message());
    let mut c = Config::default();
    c.set("client.writer.batch-timeout", "5ms").unwrap();
    assert_eq!(Connection::connect(c).err().expect("still no address").code(), ClientCode::InvalidConfig as i32);
}
