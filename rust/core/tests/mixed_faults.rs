//! One request carrying a bucket that fails for good and a bucket that must be retried: the
//! retried bucket still completes (its retry waits for the new writer id the reset asks for).

use std::sync::mpsc;
use std::time::Duration;

use fluss_writer::embedded::Fault;
use fluss_writer::wire::bucketing::bucket_for_key;
use fluss_writer::wire::key::encode_key;
use fluss_writer::{row, Config, Connection, DataType, Schema, TableDescriptor, TablePath, WriterOptions};

fn id_for_bucket(schema: &Schema, bucket: i32, buckets: i32) -> i64 {
    (0..1000i64)
        .find(|&i| {
            let mut k = Vec::new();
            encode_key(schema, &[0], &row![i, "x"], &mut k).unwrap();
            bucket_for_key(&k, buckets) == bucket
        })
        .unwrap()
}

#[test]
fn fatal_and_retriable_buckets_in_one_request_both_complete() {
    for idempotent in [true, false] {
        let mut cfg = Config::default();
        cfg.set("bootstrap.servers", "embedded").unwrap();
        cfg.set("client.writer.batch-timeout", "50ms").unwrap();
        cfg.set("client.writer.retry-backoff", "10ms").unwrap();
        cfg.set("client.writer.enable-idempotence", if idempotent { "true" } else { "false" }).unwrap();
        let conn = Connection::connect(cfg).unwrap();
        let path = TablePath::new("fluss", format!("mixed_{idempotent}")).unwrap();
        let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("s", DataType::String).build().unwrap();
        conn.admin()
            .create_table(&path, &TableDescriptor::new(schema.clone()).with_bucket_count(2).with_bucket_key(["id"]), false)
            .unwrap();
        let engine = conn.embedded().unwrap();
        engine.faults().inject(&path, 0, Fault::Error { code: 13, message: "too large".into(), times: 1 });
        engine.faults().inject(&path, 1, Fault::Error { code: 12, message: "not leader".into(), times: 1 });
        let writer = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
        let (tx, rx) = mpsc::channel();
        for b in 0..2 {
            let tx = tx.clone();
            let id = id_for_bucket(&schema, b, 2);
            writer.append_with_callback(&row![id, "x"], move |c| tx.send((b, c.error_code())).unwrap()).unwrap();
        }
        writer.flush(Some(Duration::from_secs(10))).expect("flush completes: no bucket is left without a retry");
        let mut got: Vec<(i32, i32)> = rx.try_iter().collect();
        got.sort();
        assert_eq!(got, vec![(0, 13), (1, 0)], "idempotent = {idempotent}");
        assert_eq!(engine.high_watermark(&path, 1).unwrap(), 1);
        assert_eq!(engine.high_watermark(&path, 0).unwrap(), 0);
    }
}
