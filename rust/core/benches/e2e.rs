//! End-to-end append throughput into the embedded engine, side by side in one run:
//! * `detached`: `append_detached` (no notification; flush at the end) — the baseline;
//! * `callback`: `append_with_callback` with a callback that counts (what the SDK is for);
//! * `result`: `append` returning a `WriteResult` per record, all waited for at the end (the
//!   future-per-record style of other clients).
//!
//! Rounds interleave the three modes; medians over rounds are reported, with the ratio of
//! `callback` to `detached`. Run: `cargo bench -p fluss-writer --bench e2e [-- RECORDS ROUNDS]`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use fluss_writer::{row, Connection, DataType, Schema, TableDescriptor, TablePath, WriterOptions, PENDING_ENTRY_BYTES};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Detached,
    /// A callback that captures the record index (8 bytes, one small heap box per record).
    Callback,
    /// A callback without captures (no heap box at all).
    CallbackNoCapture,
    /// A callback sharing an `Arc` counter with the submitter (an atomic increment per submit
    /// and a decrement on the worker: a cache line bounces between the two threads).
    CallbackArc,
    Result,
}

static DONE: AtomicU64 = AtomicU64::new(0);

fn run(conn: &Connection, round: usize, mode: Mode, records: usize) -> f64 {
    let path = TablePath::new("fluss", format!("bench_{round}_{mode:?}").to_lowercase()).unwrap();
    let schema = Schema::builder()
        .column_not_null("id", DataType::BigInt)
        .column("v", DataType::Double)
        .column("msg", DataType::String)
        .build()
        .unwrap();
    conn.admin().create_table(&path, &TableDescriptor::new(schema).with_bucket_count(8).with_bucket_key(["id"]), false).unwrap();
    let writer = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let count = Arc::new(AtomicU64::new(0));
    let msg = "x".repeat(64);
    let start = Instant::now();
    let mut results = Vec::new();
    for i in 0..records {
        let r = row![i as i64, i as f64, msg.as_str()];
        match mode {
            Mode::Detached => writer.append_detached(&r).unwrap(),
            Mode::Callback => writer
                .append_with_callback(&r, move |_| {
                    DONE.fetch_add(i as u64 & 1, Ordering::Relaxed);
                })
                .unwrap(),
            Mode::CallbackNoCapture => writer
                .append_with_callback(&r, |_| {
                    DONE.fetch_add(1, Ordering::Relaxed);
                })
                .unwrap(),
            Mode::CallbackArc => {
                let c = count.clone();
                writer
                    .append_with_callback(&r, move |_| {
                        c.fetch_add(1, Ordering::Relaxed);
                    })
                    .unwrap()
            }
            Mode::Result => results.push(writer.append(&r).unwrap()),
        }
    }
    writer.flush(None).unwrap();
    for r in &results {
        assert!(r.wait(None).unwrap().is_ok());
    }
    let secs = start.elapsed().as_secs_f64();
    if mode == Mode::CallbackArc {
        assert_eq!(count.load(Ordering::Relaxed), records as u64);
    }
    writer.close(None).unwrap();
    conn.admin().drop_table(&path, false).unwrap();
    records as f64 / secs
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().filter(|a| !a.starts_with("--")).collect();
    let records: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(500_000);
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    let conn = Connection::open("embedded").unwrap();
    let modes = [Mode::Detached, Mode::CallbackNoCapture, Mode::Callback, Mode::CallbackArc, Mode::Result];
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    run(&conn, 999, Mode::Detached, records / 5); // warm-up
    for round in 0..rounds {
        for (i, m) in modes.iter().enumerate() {
            rates[i].push(run(&conn, round, *m, records));
        }
    }
    println!("e2e append into the embedded engine: {records} records x {rounds} rounds, 8 buckets, ~90-byte rows");
    let base = median(rates[0].clone());
    for (i, m) in modes.iter().enumerate() {
        let med = median(rates[i].clone());
        println!(
            "{:<18} median {:>10.0} records/s  ({:.3}x detached)  rounds: {:?}",
            format!("{m:?}"),
            med,
            med / base,
            rates[i].iter().map(|r| r.round() as u64).collect::<Vec<_>>()
        );
    }
    println!("bytes held per pending callback beyond the user's callable: {PENDING_ENTRY_BYTES}");
}
