//! Storage back-pressure on primary-key tables (Fluss 1.0, PutKv v2): a steady upsert load on a
//! bucket whose storage falls behind makes the server report rising pressure, the writer throttles
//! the bucket (`client.writer.kv-backpressure.max-throttle` x pressure²), compaction catches up and
//! the pressure falls again; nothing is lost, duplicated or reordered, and the throttle shows in
//! the writer's stats.
//!
//! Two backends:
//! * the embedded engine, whose PutKv answers carry the pressure a 1.0 server computes from its
//!   storage (`embedded.kv.*` options: one L0 file per KiB, pressure from the first file);
//! * a Fluss 1.0-SNAPSHOT (545c553) cluster started with low back-pressure thresholds, at
//!   `FLUSS_PRESSURE_BOOTSTRAP_SERVERS` (without it: a banner and a pass, a failure under CI=true):
//!
//!   ```text
//!   FLUSS_VERSION=1.0-SNAPSHOT FLUSS_RUN_DIR=.fluss/run-pressure FLUSS_COORDINATOR_PORT=9500 \
//!     FLUSS_TABLET_PORT=9501 FLUSS_ZK_PORT=9502 FLUSS_OUT_VAR=FLUSS_PRESSURE_BOOTSTRAP_SERVERS \
//!     FLUSS_EXTRA_CONF=$'kv.backpressure.l0-slowdown-trigger: 1\nkv.rocksdb.writebuffer.size: 64kb\nserver.data-disk.write-limit-ratio: 0.99' \
//!     scripts/fluss-cluster.sh start
//!   ```
//!
//!   (`kv.backpressure.l0-slowdown-trigger: 1`: pressure = (L0 files - 1) / 19; 64 KiB memtables
//!   make L0 files quickly; RocksDB compacts at 4 files, so the pressure rises and falls. A 1.0
//!   server refuses every write with DISK_WRITE_LOCKED (70) once its data disk is 85% full
//!   (`server.data-disk.write-limit-ratio`), which a shared test machine reaches.)

mod cluster_support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cluster_support::{bounded, connect, create};
use fluss_writer::{Config, Connection, DataType, Schema, TableDescriptor, Value, WriterOptions};

const KEYS: i32 = 40;

fn schema() -> Schema {
    Schema::builder().column_not_null("id", DataType::Int).column("v", DataType::String).primary_key(["id"]).build().unwrap()
}

/// What a steady load saw.
struct Observed {
    /// kv_pressure_permille sampled while writing, in order.
    pressure: Vec<u64>,
    throttled_sends: u64,
    throttle_nanos: u64,
    ops: usize,
    /// How long the final flush took.
    flush: Duration,
}

/// Upsert `value_len`-byte rows over [`KEYS`] keys for `load`, one every `pace`, from one thread;
/// then flush. Checks: every callback ran once and succeeded, per bucket in submission order, and
/// every key reads back with its last value.
fn steady_upserts(conn: &Connection, bucket_count: i32, load: Duration, pace: Duration, value_len: usize) -> Observed {
    let path = create(conn, "pressure", &TableDescriptor::new(schema()).with_bucket_count(bucket_count));
    let table = conn.get_table(&path).unwrap();
    let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    // (op index, bucket, ok) in callback order.
    let done: Arc<Mutex<Vec<(usize, i32, bool)>>> = Arc::default();
    let mut last: BTreeMap<i32, String> = BTreeMap::new();
    let mut pressure = Vec::new();
    let start = Instant::now();
    let mut i = 0usize;
    while start.elapsed() < load {
        let id = (i as i32) % KEYS;
        let v = format!("{i:08}{}", "x".repeat(value_len));
        let d = done.clone();
        w.upsert_with_callback(&[Value::Int(id), Value::String(v.clone())], move |c| {
            d.lock().unwrap().push((i, c.bucket, c.error.is_none()));
            if let Some(e) = &c.error {
                eprintln!("op {i}: {e}");
            }
        })
        .unwrap();
        last.insert(id, v);
        i += 1;
        if i.is_multiple_of(10) {
            pressure.push(w.stats().kv_pressure_permille);
        }
        std::thread::sleep(pace);
    }
    let t = Instant::now();
    w.flush(None).unwrap();
    let flush = t.elapsed();
    pressure.push(w.stats().kv_pressure_permille);
    let s = w.stats();
    w.close(Some(Duration::from_secs(10))).unwrap();
    let done = done.lock().unwrap().clone();
    assert_eq!(done.len(), i, "every op completed exactly once");
    let mut seen = vec![false; i];
    let mut last_per_bucket: BTreeMap<i32, usize> = BTreeMap::new();
    for &(op, bucket, ok) in &done {
        assert!(ok, "op {op} failed");
        assert!(!std::mem::replace(&mut seen[op], true), "op {op} completed twice");
        if let Some(prev) = last_per_bucket.insert(bucket, op) {
            assert!(op > prev, "bucket {bucket}: op {op} completed after op {prev}");
        }
    }
    for (id, v) in &last {
        let row = table.lookup(&[Value::Int(*id)]).unwrap().unwrap_or_else(|| panic!("key {id} missing"));
        assert_eq!(row[1], Value::String(v.clone()), "key {id}: the last upsert wins");
    }
    Observed { pressure, throttled_sends: s.kv_throttled_sends, throttle_nanos: s.kv_throttle_nanos, ops: i, flush }
}

/// The pressure rose above 0 and fell below its peak afterwards.
fn assert_rose_and_fell(o: &Observed, what: &str) {
    let peak = *o.pressure.iter().max().unwrap();
    let at = o.pressure.iter().position(|p| *p == peak).unwrap();
    assert!(peak > 0, "{what}: no pressure seen in {} ops: {:?}", o.ops, o.pressure);
    assert!(o.pressure[at..].iter().any(|p| *p < peak), "{what}: the pressure never fell after its peak {peak}: {:?}", o.pressure);
    assert!(o.throttled_sends > 0 && o.throttle_nanos > 0, "{what}: no throttle in the stats ({} sends)", o.throttled_sends);
}

/// An embedded engine whose storage comes under pressure quickly (one L0 file slows writes
/// down, 1 KiB memtables, each file compacted in `compaction_per_file`), and a writer with
/// `client.writer.kv-backpressure.max-throttle` = `max_throttle`.
fn embedded_under_pressure(max_throttle: &str, compaction_per_file: &str) -> Connection {
    let mut c = Config::default();
    for (k, v) in [
        ("bootstrap.servers", "embedded"),
        ("client.writer.batch-timeout", "2ms"),
        // A batch must fit the gate: L0 files + its flushes + 2 < 20 (1 KiB memtables here).
        ("client.writer.batch-size", "4kb"),
        ("client.writer.delivery-timeout", "20s"),
        ("client.writer.kv-backpressure.max-throttle", max_throttle),
        ("embedded.kv.backpressure.l0-slowdown-trigger", "1"),
        ("embedded.kv.rocksdb.writebuffer.size", "1kb"),
        ("embedded.kv.compaction-time-per-file", compaction_per_file),
    ] {
        c.set(k, v).unwrap();
    }
    Connection::connect(c).unwrap()
}

#[test]
fn embedded_pressure_rises_and_falls_under_a_steady_upsert_load_and_the_writer_throttles() {
    let conn = embedded_under_pressure("400ms", "4ms");
    // About 250 KiB/s into storage that compacts about 250 files of 1 KiB per second.
    let o = steady_upserts(&conn, 2, Duration::from_millis(1500), Duration::from_millis(2), 500);
    assert_rose_and_fell(&o, "embedded");
    eprintln!(
        "embedded: {} ops, pressure samples {:?}, {} throttled sends, {:?} throttled, final flush {:?}",
        o.ops,
        o.pressure,
        o.throttled_sends,
        Duration::from_nanos(o.throttle_nanos),
        o.flush
    );
}

/// With back-pressure ignored (max-throttle 0) the same load is not throttled: the stats count
/// nothing (the test above fails before the throttle existed; this one pins the off switch).
#[test]
fn embedded_max_throttle_zero_ignores_pressure() {
    let conn = embedded_under_pressure("0", "25ms");
    let o = steady_upserts(&conn, 2, Duration::from_millis(400), Duration::from_millis(2), 1000);
    assert!(o.pressure.iter().any(|p| *p > 0), "the engine reported pressure: {:?}", o.pressure);
    assert_eq!(o.throttle_nanos, 0);
}

#[test]
fn cluster_1_0_pressure_rises_and_falls_and_the_writer_throttles_losing_nothing() {
    let Some(addr) = cluster_support::pressure_bootstrap("cluster_1_0_pressure") else { return };
    bounded("cluster_1_0_pressure", Duration::from_secs(180), move || {
        // Batches well under the 64 KiB memtable, so that the admission gate takes each.
        let conn = connect(&addr, &[("client.writer.kv-backpressure.max-throttle", "2s"), ("client.writer.batch-size", "32kb")]);
        let o = steady_upserts(&conn, 1, Duration::from_secs(8), Duration::from_millis(2), 2000);
        eprintln!(
            "1.0-SNAPSHOT: {} ops, pressure samples {:?}, {} throttled sends, {:?} throttled, final flush {:?}",
            o.ops,
            o.pressure,
            o.throttled_sends,
            Duration::from_nanos(o.throttle_nanos),
            o.flush
        );
        assert_rose_and_fell(&o, "1.0-SNAPSHOT");
    });
}
