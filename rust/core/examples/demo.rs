//! The main job: write 1,000,000 records with completion callbacks into a Fluss table and check
//! that every callback ran exactly once and that callbacks of each bucket ran in submission order.
//!
//! ```text
//! cargo run --release -p fluss-writer --example demo [-- --records N --buckets B --bootstrap embedded|host:port]
//! ```
//!
//! The address: `FLUSS_BOOTSTRAP_SERVERS` when set, else `--bootstrap`, else `"embedded"` (named
//! here: the library itself has no default address and reads no environment variable).
//!
//! While it runs it prints one line a second from the writer's metrics (records and callbacks per
//! second, pending callbacks, p99 acknowledgement-to-callback latency) with a progress bar.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fluss_writer::{row, AppendWriter, Config, Connection, DataType, Schema, TableDescriptor, TablePath, Timestamp, Value, WriterOptions};

struct Check {
    /// Times each record's callback ran.
    seen: Vec<AtomicU8>,
    /// Per bucket: the last record id and offset seen by a callback.
    last_id: Vec<AtomicI64>,
    last_offset: Vec<AtomicI64>,
    order_violations: AtomicU64,
    failures: AtomicU64,
}

fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned()).unwrap_or_else(|| default.to_string())
}

/// Prints one line a second until `done`: rates over the last second, pending callbacks, the p99
/// acknowledgement-to-callback latency, and a progress bar of callbacks run out of `total`.
fn report_every_second(writer: &AppendWriter, total: usize, done: &AtomicBool) {
    let start = Instant::now();
    let (mut last_sent, mut last_run, mut last_at) = (0u64, 0u64, Instant::now());
    while !done.load(Ordering::Acquire) {
        // Wake often enough to leave promptly once the run ends.
        for _ in 0..10 {
            std::thread::sleep(Duration::from_millis(100));
            if done.load(Ordering::Acquire) {
                return;
            }
        }
        let s = writer.stats();
        let secs = last_at.elapsed().as_secs_f64();
        let filled = (s.callbacks_run as usize * 20 / total.max(1)).min(20);
        println!(
            "[{}{}] {:5.1}s  {:>9.0} records/s acknowledged  {:>9.0} callbacks/s  pending {:>7}  p99 ack->callback {:>7.1} us",
            "#".repeat(filled),
            ".".repeat(20 - filled),
            start.elapsed().as_secs_f64(),
            (s.records_sent - last_sent) as f64 / secs,
            (s.callbacks_run - last_run) as f64 / secs,
            s.pending_callbacks,
            s.ack_to_callback.p99_nanos as f64 / 1e3
        );
        (last_sent, last_run, last_at) = (s.records_sent, s.callbacks_run, Instant::now());
    }
}

fn main() -> fluss_writer::Result<()> {
    let records: usize = arg("--records", "1000000").parse().expect("--records N");
    let buckets: i32 = arg("--buckets", "8").parse().expect("--buckets B");
    let bootstrap = std::env::var("FLUSS_BOOTSTRAP_SERVERS").unwrap_or_else(|_| arg("--bootstrap", "embedded"));
    let mut config = Config::default();
    config.set("bootstrap.servers", &bootstrap)?;
    let conn = Connection::connect(config)?;
    let admin = conn.admin();
    let db = "demo";
    admin.create_database(db, true)?;
    let path = TablePath::new(db, format!("events_{}", std::process::id()))?;
    let schema = Schema::builder()
        .column_not_null("id", DataType::BigInt)
        .column("ts", DataType::Timestamp { precision: 3 })
        .column("msg", DataType::String)
        .build()?;
    admin.create_table(&path, &TableDescriptor::new(schema).with_bucket_count(buckets).with_bucket_key(["id"]), false)?;
    let writer = conn.get_table(&path)?.new_append()?.create_writer(WriterOptions::default())?;

    let check = Arc::new(Check {
        seen: (0..records).map(|_| AtomicU8::new(0)).collect(),
        last_id: (0..buckets).map(|_| AtomicI64::new(-1)).collect(),
        last_offset: (0..buckets).map(|_| AtomicI64::new(-1)).collect(),
        order_violations: AtomicU64::new(0),
        failures: AtomicU64::new(0),
    });
    println!("writing {records} records with callbacks into {path} ({buckets} buckets) on {bootstrap}");
    let finished = AtomicBool::new(false);
    let (submitted, elapsed) = std::thread::scope(|scope| -> fluss_writer::Result<_> {
        scope.spawn(|| report_every_second(&writer, records, &finished));
        let result = (|| {
            let start = Instant::now();
            let msg = "fluss-writer demo payload, forty-ish bytes";
            for i in 0..records {
                let c = check.clone();
                let row = row![i as i64, Value::Timestamp(Timestamp::from_millis(1_700_000_000_000 + i as i64)), msg];
                writer.append_with_callback(&row, move |done| {
                    c.seen[i].fetch_add(1, Ordering::Relaxed);
                    if done.error.is_some() {
                        c.failures.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                    let b = done.bucket as usize;
                    // Callbacks of one bucket run in submission order: ids and offsets only grow.
                    let prev_id = c.last_id[b].swap(i as i64, Ordering::Relaxed);
                    let prev_off = c.last_offset[b].swap(done.offset, Ordering::Relaxed);
                    if prev_id >= i as i64 || prev_off >= done.offset {
                        c.order_violations.fetch_add(1, Ordering::Relaxed);
                    }
                })?;
            }
            let submitted = start.elapsed();
            writer.flush(None)?;
            let elapsed = start.elapsed();
            Ok((submitted, elapsed))
        })();
        finished.store(true, Ordering::Release);
        result
    })?;
    let ws = writer.stats();
    writer.close(None)?;

    let once = check.seen.iter().filter(|s| s.load(Ordering::Relaxed) == 1).count();
    let never = check.seen.iter().filter(|s| s.load(Ordering::Relaxed) == 0).count();
    let twice = records - once - never;
    let stats = conn.executor().stats();
    println!("submitted in {:.3} s, all callbacks done in {:.3} s", submitted.as_secs_f64(), elapsed.as_secs_f64());
    println!("throughput: {:.0} records/s with callbacks", records as f64 / elapsed.as_secs_f64());
    println!(
        "ack->callback latency: p50 {:.1} us, p99 {:.1} us over {} batches",
        stats.ack_to_callback.p50_nanos as f64 / 1e3,
        stats.ack_to_callback.p99_nanos as f64 / 1e3,
        stats.ack_to_callback.count
    );
    println!(
        "sent: {} records in {} batches ({} bytes, median {} records a batch) by {} requests; {} retries; {} slow callbacks",
        ws.records_sent, ws.batches_sent, ws.bytes_sent, ws.batch_records_p50, ws.requests_sent, ws.retries, ws.slow_callbacks
    );
    println!(
        "exactly once: {once}/{records} (never: {never}, more than once: {twice}); failures: {}; per-bucket order violations: {}",
        check.failures.load(Ordering::Relaxed),
        check.order_violations.load(Ordering::Relaxed)
    );
    let mut stored = 0;
    if let Some(engine) = conn.embedded() {
        for b in 0..buckets {
            stored += engine.high_watermark(&path, b)?;
        }
        println!("records stored in the table: {stored}");
    } else {
        stored = records as i64;
    }
    admin.drop_table(&path, true)?;
    conn.close(None)?;
    let ok = once == records
        && check.failures.load(Ordering::Relaxed) == 0
        && check.order_violations.load(Ordering::Relaxed) == 0
        && stored == records as i64;
    if !ok {
        eprintln!("DEMO FAILED");
        std::process::exit(1);
    }
    println!("DEMO OK");
    Ok(())
}
