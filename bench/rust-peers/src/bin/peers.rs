//! fluss-writer against fluss-rs 1.0.0 on the same Fluss cluster, in one run.
//!
//! Cases: log tables (bucket key `id`, BIGINT) with 1, 4 and 16 buckets, rows of 100 bytes and
//! 1 KiB of field data (id BIGINT + payload STRING of pseudo-random letters and digits, distinct
//! per record up to 32 MiB of payload), tables with `table.log.arrow.compression.type` NONE and
//! ZSTD (Fluss's default; fluss-rs compresses with it, fluss-writer 0.1 sends uncompressed Arrow
//! whatever the table says). Per case and round, modes run interleaved (the order alternates
//! between rounds) into their own table; medians over rounds. Round 0 (a tenth of the records)
//! warms up and is not counted.
//!
//! * `fluss-writer/callback`: `append_with_callback` per record (a callback that counts and
//!   checks the outcome), then `flush` (which returns after every callback returned).
//! * `fluss-rs/future`: `AppendWriter::append` per record returning a `WriteResultFuture`; each
//!   future is sent to a second task that awaits them in submission order (the usual way to get
//!   told about every record without blocking the submitter), then `flush().await` and the
//!   awaiting task finishes.
//! * with `--extra`: `fluss-writer/detached` (`append_detached` + flush) and `fluss-rs/dropped`
//!   (futures dropped, `flush().await`): what each client costs without per-record notification.
//!
//! The submitter is a plain thread for both clients (fluss-rs's `append` may block on buffer
//! memory; fluss-writer's is synchronous). Both use their defaults (64 MiB buffer, 2 MiB batches,
//! 100 ms batch timeout, acks all, idempotence on). The timed region is first append to "every
//! record acknowledged and its notification delivered". Rows are built once and only the id is
//! changed per record, for both clients.
//!
//! Also runs `fluss-writer/callback` alone on the embedded engine (fluss-rs cannot write to it).
//!
//! Replicated tables: `--replication-factor N` creates the tables with `table.replication.factor`
//! N; `--acks all|1|0` sets the acks of both clients (`client.writer.acks` for fluss-writer,
//! `Config::writer_acks` for fluss-rs; both default to all; with 0 or 1 idempotence is turned off
//! in both, which both require).
//!
//! Every run also measures the CPU time of the whole process (`getrusage(RUSAGE_SELF)`, user +
//! system, every thread: submitter, I/O threads, callback worker, tokio workers) over the timed
//! region, per record. The ratio callback / future is also taken per round (the two runs of a
//! round are adjacent, so they share the machine's conditions): the summary gives its median and
//! its spread (min..max over rounds) beside the ratio of the medians.
//!
//! ```text
//! cargo run --release -p fluss-writer-bench --bin peers -- [--bootstrap 127.0.0.1:9123] [--records 200000]
//!     [--rounds 3] [--buckets 1,4,16] [--rows 100,1024] [--compression NONE,ZSTD] [--extra]
//!     [--replication-factor 3] [--acks all] [--label NAME]
//!     [--no-embedded] [--no-cluster] [--json out.jsonl]
//! ```
//!
//! `--bootstrap` wins over `FLUSS_BOOTSTRAP_SERVERS` (which is used when `--bootstrap` is absent).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use fluss_writer::{row, Config, Connection, DataType, Schema, TableDescriptor, TablePath, Value, WriterOptions};
use fluss_writer_bench::{arg, emit, flag, init_json, list, load1, median, min_max, payload_pool, pool_size, process_cpu_secs};
use serde_json::json;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    FwCallback,
    RsFuture,
    FwDetached,
    RsDropped,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::FwCallback => "fluss-writer/callback",
            Mode::RsFuture => "fluss-rs/future",
            Mode::FwDetached => "fluss-writer/detached",
            Mode::RsDropped => "fluss-rs/dropped",
        }
    }
    fn tag(self) -> &'static str {
        match self {
            Mode::FwCallback => "fwcb",
            Mode::RsFuture => "rsfut",
            Mode::FwDetached => "fwdet",
            Mode::RsDropped => "rsdrop",
        }
    }
}

static DONE: AtomicU64 = AtomicU64::new(0);
static FAILED: AtomicU64 = AtomicU64::new(0);

fn schema() -> Schema {
    Schema::builder().column_not_null("id", DataType::BigInt).column("payload", DataType::String).build().unwrap()
}

/// `compression`: the table's `table.log.arrow.compression.type` (fluss-rs follows it; fluss-writer
/// 0.1 always sends uncompressed Arrow).
/// `replication`: the table's `table.replication.factor` (`None`: the servers' default).
/// Returns the path created: a table whose buckets get no leader (`LEADER_NOT_AVAILABLE`: a
/// loaded Fluss 0.9.1 cluster, or a tablet server stopping at that moment) is dropped and another
/// one created under a new name, up to three times.
fn create_table(conn: &Connection, path: &TablePath, buckets: i32, compression: &str, replication: Option<u32>) -> TablePath {
    let mut d = TableDescriptor::new(schema())
        .with_bucket_count(buckets)
        .with_bucket_key(["id"])
        .with_property("table.log.arrow.compression.type", compression);
    if let Some(rf) = replication {
        d = d.with_property("table.replication.factor", rf.to_string());
    }
    let mut failures = Vec::new();
    for attempt in 0..3 {
        let p = if attempt == 0 { path.clone() } else { TablePath::new(&path.database, format!("{}_r{attempt}", path.table)).unwrap() };
        match conn.admin().create_table(&p, &d, true) {
            Ok(()) => return p,
            Err(e) if e.code() == fluss_writer::FlussCode::LEADER_NOT_AVAILABLE => {
                eprintln!("{p}: {e}; creating another table");
                failures.push(format!("{p}: {e}"));
                conn.admin().drop_table(&p, true).ok();
                std::thread::sleep(std::time::Duration::from_secs(2));
            }
            Err(e) => panic!("create table {p}: {e}"),
        }
    }
    panic!("create table failed three times: {}", failures.join("; "))
}

fn fw_rows(pool: &[String]) -> Vec<fluss_writer::Row> {
    pool.iter().map(|p| row![0i64, p.as_str()]).collect()
}

/// fluss-writer: one run, returns seconds.
fn run_fw(writer: &fluss_writer::AppendWriter, mode: Mode, records: u64, base: i64, pool: &mut [fluss_writer::Row]) -> f64 {
    DONE.store(0, Ordering::Relaxed);
    FAILED.store(0, Ordering::Relaxed);
    let start = Instant::now();
    for i in 0..records {
        let r = &mut pool[i as usize % pool.len()];
        r[0] = Value::BigInt(base + i as i64);
        let r = &*r;
        match mode {
            Mode::FwCallback => writer
                .append_with_callback(r, |c| {
                    if c.error.is_some() {
                        FAILED.fetch_add(1, Ordering::Relaxed);
                    }
                    DONE.fetch_add(1, Ordering::Relaxed);
                })
                .unwrap(),
            Mode::FwDetached => writer.append_detached(r).unwrap(),
            _ => unreachable!(),
        }
    }
    writer.flush(None).unwrap();
    let secs = start.elapsed().as_secs_f64();
    if mode == Mode::FwCallback {
        assert_eq!(DONE.load(Ordering::Relaxed), records, "every callback ran before flush returned");
        assert_eq!(FAILED.load(Ordering::Relaxed), 0, "no record failed");
    }
    secs
}

/// fluss-rs: one run, returns seconds.
fn run_rs(rt: &tokio::runtime::Runtime, writer: &fluss::client::AppendWriter, mode: Mode, records: u64, base: i64, pool: &[String]) -> f64 {
    let mut row = fluss::row::GenericRow::new(2);
    let start = Instant::now();
    if mode == Mode::RsFuture {
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
            row.set_field(0, base + i as i64);
            row.set_field(1, pool[i as usize % pool.len()].as_str());
            tx.send(writer.append(&row).unwrap()).unwrap();
        }
        drop(tx);
        rt.block_on(writer.flush()).unwrap();
        let (ok, failed) = rt.block_on(waiter).unwrap();
        let secs = start.elapsed().as_secs_f64();
        assert_eq!((ok, failed), (records, 0), "every future resolved Ok");
        secs
    } else {
        for i in 0..records {
            row.set_field(0, base + i as i64);
            row.set_field(1, pool[i as usize % pool.len()].as_str());
            drop(writer.append(&row).unwrap());
        }
        rt.block_on(writer.flush()).unwrap();
        start.elapsed().as_secs_f64()
    }
}

/// What a summary line says about one case (table settings and row size).
struct Case<'a> {
    backend: &'a str,
    label: &'a str,
    compression: &'a str,
    row_bytes: usize,
    buckets: i32,
    records: u64,
    replication: Option<u32>,
    acks: &'a str,
}

/// Summary of one mode of a case. `rates` and `cpus` (CPU microseconds per record) are per round;
/// `base` is the fluss-rs future's per-round rates and CPU, when the case has that mode.
fn report(case: &Case<'_>, mode: Mode, rates: &[f64], cpus: &[f64], loads: &[f64], base: Option<(&[f64], &[f64])>) -> f64 {
    let med = median(rates);
    let cpu = median(cpus);
    let mbps = med * case.row_bytes as f64 / 1e6;
    // Per-round ratios: the two runs of one round are adjacent in time.
    let round_ratios: Option<Vec<f64>> = base.map(|(b, _)| rates.iter().zip(b).map(|(a, b)| a / b).collect());
    let ratio = base.map(|(b, _)| med / median(b));
    let cpu_ratio = base.map(|(_, c)| cpu / median(c));
    let (lo, hi) = round_ratios.as_deref().map(min_max).unwrap_or((f64::NAN, f64::NAN));
    let (load_lo, load_hi) = min_max(loads);
    println!(
        "{:<8} {:<10} {:<4} {:<22} row {:>5} B  buckets {:>2}: median {med:>10.0} rec/s {mbps:>7.1} MB/s  cpu {cpu:>6.2} us/rec{}  load {load_lo:.1}-{load_hi:.1}  rounds {:?}",
        case.backend,
        case.label,
        case.compression,
        mode.name(),
        case.row_bytes,
        case.buckets,
        match (ratio, &round_ratios) {
            (Some(r), Some(rr)) => format!(
                "  ({r:.2}x fluss-rs/future; per round median {:.2}x, {lo:.2}..{hi:.2}x; cpu {:.2}x)",
                median(rr),
                cpu_ratio.unwrap()
            ),
            _ => String::new(),
        },
        rates.iter().map(|r| r.round() as u64).collect::<Vec<_>>()
    );
    emit(json!({
        "bench": "peers_summary", "backend": case.backend, "label": case.label, "compression": case.compression,
        "client": mode.name(), "row_bytes": case.row_bytes, "buckets": case.buckets, "records": case.records,
        "replication_factor": case.replication, "acks": case.acks, "rounds": rates.len(),
        "median_records_per_s": med, "median_mb_per_s": mbps, "ratio_vs_fluss_rs_future": ratio,
        "round_ratios_vs_fluss_rs_future": round_ratios,
        "median_round_ratio_vs_fluss_rs_future": round_ratios.as_deref().map(median),
        "min_round_ratio": round_ratios.as_ref().map(|_| lo), "max_round_ratio": round_ratios.as_ref().map(|_| hi),
        "rates": rates, "cpu_us_per_record": cpus, "median_cpu_us_per_record": cpu, "cpu_ratio_vs_fluss_rs_future": cpu_ratio,
        "load1_min": load_lo, "load1_max": load_hi,
    }));
    med
}

fn main() {
    init_json();
    let bootstrap = if flag("--bootstrap") {
        arg("--bootstrap", "")
    } else {
        std::env::var("FLUSS_BOOTSTRAP_SERVERS").unwrap_or_else(|_| "127.0.0.1:9123".to_string())
    };
    let records: u64 = arg("--records", "200000").parse().unwrap();
    let rounds: usize = arg("--rounds", "3").parse().unwrap();
    let buckets_list: Vec<i32> = list("--buckets", "1,4,16").into_iter().map(|b| b as i32).collect();
    let rows: Vec<usize> = list("--rows", "100,1024").into_iter().map(|r| r as usize).collect();
    let extra = flag("--extra");
    let compressions: Vec<String> = arg("--compression", "NONE,ZSTD").split(',').map(|c| c.trim().to_uppercase()).collect();
    let replication: Option<u32> =
        flag("--replication-factor").then(|| arg("--replication-factor", "").parse().expect("--replication-factor N"));
    let acks = arg("--acks", "all").to_ascii_lowercase();
    assert!(matches!(acks.as_str(), "all" | "-1" | "0" | "1"), "--acks all|-1|0|1");
    let acks_all = matches!(acks.as_str(), "all" | "-1");
    let label = arg("--label", if replication.is_some() { "replicated" } else { "single" });
    let modes: Vec<Mode> = if extra {
        vec![Mode::FwCallback, Mode::RsFuture, Mode::FwDetached, Mode::RsDropped]
    } else {
        vec![Mode::FwCallback, Mode::RsFuture]
    };
    let pid = std::process::id();
    println!(
        "peers: {records} records per run, {rounds} rounds, buckets {buckets_list:?}, rows {rows:?} B, replication {replication:?}, acks {acks}, bootstrap {bootstrap}, load {:.2}",
        load1()
    );
    emit(json!({"bench": "peers_meta", "label": label, "bootstrap": bootstrap, "records": records, "rounds": rounds,
        "replication_factor": replication, "acks": acks, "load1": load1()}));

    // Embedded engine: fluss-writer alone.
    if !flag("--no-embedded") {
        let conn = Connection::open("embedded").unwrap();
        conn.admin().create_database("bench", true).unwrap();
        let emb_modes: Vec<Mode> = if extra { vec![Mode::FwCallback, Mode::FwDetached] } else { vec![Mode::FwCallback] };
        for &row_bytes in &rows {
            let pool = payload_pool(row_bytes, pool_size(row_bytes, records));
            let mut rows = fw_rows(&pool);
            for &b in &buckets_list {
                let mut rates = vec![Vec::new(); emb_modes.len()];
                let mut cpus = vec![Vec::new(); emb_modes.len()];
                let mut loads = Vec::new();
                for round in 0..=rounds {
                    for (mi, &m) in emb_modes.iter().enumerate() {
                        // A table per run, dropped after: the in-memory engine keeps what it stores.
                        let path = TablePath::new("bench", format!("emb_{}_{row_bytes}_{b}_{round}", m.tag())).unwrap();
                        let path = create_table(&conn, &path, b, "NONE", None);
                        let w = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
                        let n = if round == 0 { records / 10 } else { records }; // round 0 warms up
                        let c0 = process_cpu_secs();
                        let secs = run_fw(&w, m, n, 0, &mut rows);
                        let cpu = (process_cpu_secs() - c0) / n as f64 * 1e6;
                        w.close(None).unwrap();
                        conn.admin().drop_table(&path, true).unwrap();
                        if round > 0 {
                            rates[mi].push(n as f64 / secs);
                            cpus[mi].push(cpu);
                            loads.push(load1());
                            emit(
                                json!({"bench": "peers_run", "backend": "embedded", "label": label, "compression": "NONE", "client": m.name(), "row_bytes": row_bytes, "buckets": b, "records": n, "round": round, "secs": secs, "cpu_us_per_record": cpu, "load1": load1()}),
                            );
                        }
                    }
                }
                let case = Case {
                    backend: "embedded",
                    label: &label,
                    compression: "NONE",
                    row_bytes,
                    buckets: b,
                    records,
                    replication: None,
                    acks: &acks,
                };
                for (mi, &m) in emb_modes.iter().enumerate() {
                    report(&case, m, &rates[mi], &cpus[mi], &loads, None);
                }
            }
        }
        conn.close(None).unwrap();
    }

    // The cluster: both clients.
    if flag("--no-cluster") {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    // fluss-rs spawns its sender from `new_append`: the submitting thread needs the runtime context.
    let _enter = rt.enter();
    let mut fw_config = Config::default();
    fw_config.set("bootstrap.servers", &bootstrap).unwrap();
    fw_config.set("client.writer.acks", &acks).unwrap();
    let mut rs_config = fluss::config::Config {
        bootstrap_servers: bootstrap.clone(),
        writer_acks: if acks_all { "all".to_string() } else { acks.clone() },
        ..Default::default()
    };
    if !acks_all {
        // Both clients refuse idempotent writes without acks = all.
        fw_config.set("client.writer.enable-idempotence", "false").unwrap();
        rs_config.writer_enable_idempotence = false;
    }
    let fw = Connection::connect(fw_config).unwrap();
    fw.admin().create_database("bench", true).unwrap();
    let rs = rt.block_on(fluss::client::FlussConnection::new(rs_config)).unwrap();

    for &row_bytes in &rows {
        let pool = payload_pool(row_bytes, pool_size(row_bytes, records));
        let mut fw_pool = fw_rows(&pool);
        for compression in &compressions {
            for &b in &buckets_list {
                // One table per mode and case, reused across rounds (log tables: appends only).
                let paths: Vec<TablePath> = modes
                    .iter()
                    .map(|m| {
                        let p = TablePath::new("bench", format!("peers_{pid}_{}_{}_{row_bytes}_{b}", m.tag(), compression.to_lowercase()))
                            .unwrap();
                        create_table(&fw, &p, b, compression, replication)
                    })
                    .collect();
                let mut fw_writers = Vec::new();
                let mut rs_writers = Vec::new();
                for (m, path) in modes.iter().zip(&paths) {
                    if matches!(m, Mode::FwCallback | Mode::FwDetached) {
                        fw_writers
                            .push(Some(fw.get_table(path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap()));
                        rs_writers.push(None);
                    } else {
                        let rp = fluss::metadata::TablePath::new("bench", path.table.as_str());
                        let t = rt.block_on(rs.get_table(&rp)).unwrap();
                        rs_writers.push(Some(t.new_append().unwrap().create_writer().unwrap()));
                        fw_writers.push(None);
                    }
                }
                let mut rates = vec![Vec::new(); modes.len()];
                let mut cpus = vec![Vec::new(); modes.len()];
                let mut loads = Vec::new();
                let mut next_id = 0i64;
                for round in 0..=rounds {
                    let n = if round == 0 { records / 10 } else { records }; // round 0 warms up
                    let order: Vec<usize> = if round % 2 == 0 { (0..modes.len()).collect() } else { (0..modes.len()).rev().collect() };
                    for mi in order {
                        let m = modes[mi];
                        let c0 = process_cpu_secs();
                        let secs = match (&fw_writers[mi], &rs_writers[mi]) {
                            (Some(w), _) => run_fw(w, m, n, next_id, &mut fw_pool),
                            (_, Some(w)) => run_rs(&rt, w, m, n, next_id, &pool),
                            _ => unreachable!(),
                        };
                        let cpu = (process_cpu_secs() - c0) / n as f64 * 1e6;
                        if round > 0 {
                            rates[mi].push(n as f64 / secs);
                            cpus[mi].push(cpu);
                            loads.push(load1());
                            emit(
                                json!({"bench": "peers_run", "backend": "cluster", "label": label, "compression": compression, "client": m.name(), "row_bytes": row_bytes, "buckets": b, "records": n, "round": round, "secs": secs, "cpu_us_per_record": cpu, "replication_factor": replication, "acks": acks, "load1": load1()}),
                            );
                        }
                    }
                    next_id += n as i64;
                }
                let bi = modes.iter().position(|m| *m == Mode::RsFuture).unwrap();
                let case =
                    Case { backend: "cluster", label: &label, compression, row_bytes, buckets: b, records, replication, acks: &acks };
                for (mi, &m) in modes.iter().enumerate() {
                    let base = (mi != bi).then(|| (rates[bi].as_slice(), cpus[bi].as_slice()));
                    report(&case, m, &rates[mi], &cpus[mi], &loads, base);
                }
                for w in fw_writers.into_iter().flatten() {
                    w.close(None).unwrap();
                }
                drop(rs_writers);
                for path in &paths {
                    fw.admin().drop_table(path, true).unwrap();
                }
            }
        }
    }
    fw.close(None).unwrap();
    drop(rs);
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
}
