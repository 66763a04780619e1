//! What partitions cost: the same rows written into a partitioned table (3 partitions, rows
//! cycling through them) and into a table without partitions, with callbacks, side by side in one
//! run; and, on the cluster, fluss-writer callbacks against fluss-rs 1.0.0 futures on the same
//! partitioned table layout.
//!
//! Rows: `id BIGINT` (bucket key), `dt STRING` (the partition key: `p0`, `p1`, `p2` by `id % 3`),
//! `payload STRING` (about 100 bytes of field data per row). Tables have 4 buckets (`--buckets`;
//! `--plain-buckets` for the table without partitions); partitions are
//! created before the timed region (fluss-rs does not create partitions on write). Every round
//! runs each mode once, in alternating order, into its own table; round 0 (a tenth of the
//! records) warms up. Ratios are taken per round (adjacent runs share the machine's conditions);
//! the summary prints their median and spread.
//!
//! Modes:
//! * `fluss-writer/callback` into the table without partitions (the reference);
//! * `fluss-writer/callback partitioned`;
//! * cluster only: `fluss-rs/future partitioned` (`append` futures awaited by a second task, then
//!   `flush`), as in `peers`.
//!
//! ```text
//! cargo run --profile profiling -p fluss-writer-bench --bin partitions -- [--bootstrap 127.0.0.1:9123]
//!     [--records 200000] [--rounds 5] [--no-embedded] [--no-cluster] [--only plain,part,rspart]
//!     [--buckets 4] [--plain-buckets N] [--max-pending-callbacks N]
//!     [--config key=value,...] [--json out.jsonl]
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use fluss_writer::{row, Config, Connection, DataType, PartitionSpec, Schema, TableDescriptor, TablePath, Value, WriterOptions};
use fluss_writer_bench::{arg, emit, flag, init_json, load1, median, min_max, payload_pool, process_cpu_secs};
use serde_json::json;

const PARTS: [&str; 3] = ["p0", "p1", "p2"];
/// Buckets per table (per partition): `--buckets`, 4 by default.
fn buckets() -> i32 {
    arg("--buckets", "4").parse().expect("--buckets is a number")
}

/// Buckets of the table without partitions: `--plain-buckets`, `--buckets` by default (12 gives
/// it as many buckets as the 3 partitions have together).
fn plain_buckets() -> i32 {
    arg("--plain-buckets", &buckets().to_string()).parse().expect("--plain-buckets is a number")
}

static DONE: AtomicU64 = AtomicU64::new(0);
static FAILED: AtomicU64 = AtomicU64::new(0);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Plain,
    Partitioned,
    RsPartitioned,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Plain => "fluss-writer/callback",
            Mode::Partitioned => "fluss-writer/callback partitioned",
            Mode::RsPartitioned => "fluss-rs/future partitioned",
        }
    }
    /// Buckets of this mode's table (per partition for a partitioned one).
    fn buckets(self) -> i32 {
        if self == Mode::Plain {
            plain_buckets()
        } else {
            buckets()
        }
    }
    fn tag(self) -> &'static str {
        match self {
            Mode::Plain => "plain",
            Mode::Partitioned => "part",
            Mode::RsPartitioned => "rspart",
        }
    }
}

fn create(conn: &Connection, table: &str, partitioned: bool, buckets: i32) -> TablePath {
    let schema = Schema::builder()
        .column_not_null("id", DataType::BigInt)
        .column_not_null("dt", DataType::String)
        .column("payload", DataType::String)
        .build()
        .unwrap();
    let mut d = TableDescriptor::new(schema)
        .with_bucket_count(buckets)
        .with_bucket_key(["id"])
        .with_property("table.log.arrow.compression.type", "NONE");
    if partitioned {
        d = d.with_partition_keys(["dt"]);
    }
    let path = TablePath::new("bench", table).unwrap();
    conn.admin().drop_table(&path, true).unwrap();
    conn.admin().create_table(&path, &d, false).unwrap();
    if partitioned {
        for p in PARTS {
            conn.admin().create_partition(&path, &PartitionSpec::new([("dt", p)]), true).unwrap();
        }
    }
    path
}

/// One fluss-writer run (callbacks, then flush), seconds.
fn run_fw(w: &fluss_writer::AppendWriter, records: u64, base: i64, rows: &mut [fluss_writer::Row]) -> f64 {
    DONE.store(0, Ordering::Relaxed);
    FAILED.store(0, Ordering::Relaxed);
    let start = Instant::now();
    for i in 0..records {
        let id = base + i as i64;
        let r = &mut rows[i as usize % rows.len()];
        r[0] = Value::BigInt(id);
        w.append_with_callback(r, |c| {
            if c.error.is_some() {
                FAILED.fetch_add(1, Ordering::Relaxed);
            }
            DONE.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    }
    w.flush(None).unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!((DONE.load(Ordering::Relaxed), FAILED.load(Ordering::Relaxed)), (records, 0), "every callback ran, none failed");
    secs
}

/// One fluss-rs run (futures awaited by a second task, then flush), seconds.
fn run_rs(rt: &tokio::runtime::Runtime, w: &fluss::client::AppendWriter, records: u64, base: i64, pool: &[String]) -> f64 {
    let mut row = fluss::row::GenericRow::new(3);
    let start = Instant::now();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<fluss::client::WriteResultFuture>();
    let waiter = rt.spawn(async move {
        let (mut ok, mut failed) = (0u64, 0u64);
        while let Some(f) = rx.recv().await {
            match f.await {
                Ok(()) => ok += 1,
                Err(_) => failed += 1,
            }
        }
        (ok, failed)
    });
    for i in 0..records {
        let idx = i as usize % pool.len();
        row.set_field(0, base + i as i64);
        row.set_field(1, PARTS[idx % 3]);
        row.set_field(2, pool[idx].as_str());
        tx.send(w.append(&row).unwrap()).unwrap();
    }
    drop(tx);
    rt.block_on(w.flush()).unwrap();
    let (ok, failed) = rt.block_on(waiter).unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!((ok, failed), (records, 0), "every future resolved Ok");
    secs
}

fn summarize(backend: &str, modes: &[Mode], rates: &[Vec<f64>], cpus: &[Vec<f64>], loads: &[f64], records: u64) {
    let (lo_load, hi_load) = min_max(loads);
    for (mi, m) in modes.iter().enumerate() {
        let med = median(&rates[mi]);
        let mut line = format!("{backend:<8} {:<34} median {med:>9.0} rec/s  cpu {:>5.2} us/rec", m.name(), median(&cpus[mi]));
        let mut extra = json!({});
        for (other, label) in [(Mode::Plain, "vs_plain"), (Mode::RsPartitioned, "vs_fluss_rs")] {
            let Some(oi) = modes.iter().position(|x| *x == other) else { continue };
            if oi == mi || (other == Mode::Plain && *m != Mode::Partitioned) || (other == Mode::RsPartitioned && *m != Mode::Partitioned) {
                continue;
            }
            let per_round: Vec<f64> = rates[mi].iter().zip(&rates[oi]).map(|(a, b)| a / b).collect();
            let (lo, hi) = min_max(&per_round);
            line += &format!("  {label}: per round median {:.2}x ({lo:.2}..{hi:.2}x)", median(&per_round));
            extra[label] = json!({"median_round_ratio": median(&per_round), "min": lo, "max": hi, "round_ratios": per_round});
        }
        println!("{line}  load {lo_load:.1}-{hi_load:.1}");
        emit(
            json!({"bench": "partitions_summary", "backend": backend, "client": m.name(), "records": records, "buckets": buckets(), "plain_buckets": plain_buckets(),
            "partitions": PARTS.len(), "rates": rates[mi], "median_records_per_s": med, "cpu_us_per_record": cpus[mi],
            "median_cpu_us_per_record": median(&cpus[mi]), "ratios": extra, "load1_min": lo_load, "load1_max": hi_load}),
        );
    }
}

fn main() {
    init_json();
    let bootstrap = if flag("--bootstrap") {
        arg("--bootstrap", "")
    } else {
        std::env::var("FLUSS_BOOTSTRAP_SERVERS").unwrap_or_else(|_| "127.0.0.1:9123".to_string())
    };
    let records: u64 = arg("--records", "200000").parse().unwrap();
    let rounds: usize = arg("--rounds", "5").parse().unwrap();
    let pid = std::process::id();
    let pool = payload_pool(80, 4096);
    // Rows cycle through the partitions with the id: row i goes to PARTS[i % 3].
    let mut fw_rows: Vec<fluss_writer::Row> = pool.iter().enumerate().map(|(i, p)| row![0i64, PARTS[i % 3], p.as_str()]).collect();
    println!(
        "partitions: {records} records per run, {rounds} rounds, {} buckets per partition, {} without partitions, 3 partitions, load {:.2}",
        buckets(),
        plain_buckets(),
        load1()
    );
    emit(json!({"bench": "partitions_meta", "records": records, "rounds": rounds, "bootstrap": bootstrap, "load1": load1()}));

    let backends: Vec<&str> =
        [(!flag("--no-embedded")).then_some("embedded"), (!flag("--no-cluster")).then_some("cluster")].into_iter().flatten().collect();
    for backend in backends {
        // `--config key=value,...`: client settings for fluss-writer's connection.
        let settings = arg("--config", "");
        let settings: Vec<(&str, &str)> = settings.split(',').filter_map(|kv| kv.split_once('=')).collect();
        let mut c = Config::default();
        for (k, v) in &settings {
            c.set(k, v).unwrap();
        }
        let (conn, rs, rt) = if backend == "embedded" {
            c.set("bootstrap.servers", "embedded").unwrap();
            (Connection::connect(c).unwrap(), None, None)
        } else {
            c.set("bootstrap.servers", &bootstrap).unwrap();
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            let rs_config = fluss::config::Config { bootstrap_servers: bootstrap.clone(), ..Default::default() };
            let rs = rt.block_on(fluss::client::FlussConnection::new(rs_config)).unwrap();
            (Connection::connect(c).unwrap(), Some(rs), Some(rt))
        };
        let _enter = rt.as_ref().map(|r| r.enter());
        conn.admin().create_database("bench", true).unwrap();
        let only = arg("--only", "");
        let modes: Vec<Mode> =
            if rs.is_some() { vec![Mode::Plain, Mode::Partitioned, Mode::RsPartitioned] } else { vec![Mode::Plain, Mode::Partitioned] };
        let modes: Vec<Mode> = modes.into_iter().filter(|m| only.is_empty() || only.split(',').any(|t| t == m.tag())).collect();
        let paths: Vec<TablePath> =
            modes.iter().map(|m| create(&conn, &format!("parts_{pid}_{}", m.tag()), *m != Mode::Plain, m.buckets())).collect();
        let mut opts = WriterOptions::default();
        if flag("--max-pending-callbacks") {
            opts = opts.max_pending_callbacks(arg("--max-pending-callbacks", "").parse().expect("--max-pending-callbacks is a number"));
        }
        let fw_writers: Vec<Option<fluss_writer::AppendWriter>> = modes
            .iter()
            .zip(&paths)
            .map(|(m, p)| {
                (*m != Mode::RsPartitioned).then(|| conn.get_table(p).unwrap().new_append().unwrap().create_writer(opts.clone()).unwrap())
            })
            .collect();
        let rs_writer = match (&rs, &rt, modes.iter().position(|m| *m == Mode::RsPartitioned)) {
            (Some(rs), Some(rt), Some(i)) => {
                let t = rt.block_on(rs.get_table(&fluss::metadata::TablePath::new("bench", paths[i].table.as_str()))).unwrap();
                Some(t.new_append().unwrap().create_writer().unwrap())
            }
            _ => None,
        };
        let mut rates = vec![Vec::new(); modes.len()];
        let mut cpus = vec![Vec::new(); modes.len()];
        let mut loads = Vec::new();
        let mut next_id = 0i64;
        for round in 0..=rounds {
            let n = if round == 0 { records / 10 } else { records };
            let order: Vec<usize> = if round % 2 == 0 { (0..modes.len()).collect() } else { (0..modes.len()).rev().collect() };
            for mi in order {
                let c0 = process_cpu_secs();
                let secs = match (&fw_writers[mi], &rs_writer, &rt) {
                    (Some(w), _, _) => run_fw(w, n, next_id, &mut fw_rows),
                    (None, Some(w), Some(rt)) => run_rs(rt, w, n, next_id, &pool),
                    _ => unreachable!(),
                };
                let cpu = (process_cpu_secs() - c0) / n as f64 * 1e6;
                if round > 0 {
                    rates[mi].push(n as f64 / secs);
                    cpus[mi].push(cpu);
                    loads.push(load1());
                    emit(json!({"bench": "partitions_run", "backend": backend, "client": modes[mi].name(), "records": n,
                            "buckets": modes[mi].buckets(), "round": round, "secs": secs, "cpu_us_per_record": cpu, "load1": load1()}));
                }
            }
            next_id += n as i64;
        }
        summarize(backend, &modes, &rates, &cpus, &loads, records);
        for w in fw_writers.into_iter().flatten() {
            w.close(None).unwrap();
        }
        drop(rs_writer);
        for p in &paths {
            conn.admin().drop_table(p, true).unwrap();
        }
        conn.close(None).unwrap();
    }
}
