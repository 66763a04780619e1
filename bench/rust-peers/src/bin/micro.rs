//! Dispatcher micro-benchmarks of fluss-writer (Rust), each printed and written as JSON lines:
//!
//! * `dispatch`: callbacks per second and ns per callback through the whole completion path on
//!   one FIFO worker (batch jobs of 256 inline callbacks, the code of
//!   `cargo bench -p fluss-writer --bench dispatch`).
//! * `bytes`: heap bytes held per pending callback, measured with a counting global allocator:
//!   N records are appended into the embedded engine while the worker is held by a gate, so
//!   their batches are acknowledged and wait as jobs; live heap growth minus the same run with
//!   `append_detached`, divided by N. For callables capturing 0, 8, 24, 32, 64 and 256 bytes.
//! * `latency`: acknowledgement-to-callback latency (`ExecutorStats::ack_to_callback`, from the
//!   connection's executor) and submit-to-callback latency, for a paced writer (not backlogged;
//!   `client.writer.batch-timeout` 1 ms), on the embedded engine and on the cluster.
//! * `backlog`: process RSS over time while a writer with `max_pending_callbacks` = N and a
//!   callback that sleeps 50 us is fed as fast as possible (wait-timeout unbounded); each N runs
//!   in a child process so that one run's heap does not serve the next.
//!
//! ```text
//! cargo run --release -p fluss-writer-bench --bin micro -- [--only dispatch,bytes,latency,backlog]
//!     [--bootstrap 127.0.0.1:9123 | --no-cluster] [--backlog-n 10000,100000,1000000] [--backlog-secs 8]
//!     [--rate 20000] [--json out.jsonl]
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use fluss_writer::dispatch::{Executor, Scope, ScopeOptions, SystemClock};
use fluss_writer::{row, Config, Connection, DataType, Schema, TableDescriptor, TablePath, Value, WriterOptions, PENDING_ENTRY_BYTES};
use fluss_writer_bench::{arg, emit, init_json, list, load1, median, payload, percentile, rss_bytes};
use serde_json::json;

/// Counts live heap bytes (one relaxed atomic add per allocation and free).
struct Counting;

static LIVE: AtomicI64 = AtomicI64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as i64, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as i64, Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as i64, Ordering::Relaxed);
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as i64 - l.size() as i64, Ordering::Relaxed);
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

static SINK: AtomicU64 = AtomicU64::new(0);

fn schema() -> Schema {
    Schema::builder().column_not_null("id", DataType::BigInt).column("payload", DataType::String).build().unwrap()
}

fn connect(bootstrap: &str, extra: &[(&str, &str)]) -> Connection {
    let mut c = Config::default();
    c.set("bootstrap.servers", bootstrap).unwrap();
    for (k, v) in extra {
        c.set(k, v).unwrap();
    }
    Connection::connect(c).unwrap()
}

fn table(conn: &Connection, name: &str, buckets: i32) -> TablePath {
    conn.admin().create_database("bench", true).unwrap();
    let path = TablePath::new("bench", format!("{name}_{}", std::process::id())).unwrap();
    conn.admin().create_table(&path, &TableDescriptor::new(schema()).with_bucket_count(buckets).with_bucket_key(["id"]), true).unwrap();
    path
}

// ---------------------------------------------------------------------------------------------

fn bench_dispatch() {
    let (jobs, per_job, rounds) = (4000usize, 256usize, 7usize);
    let scope = Scope::new(
        ScopeOptions { max_pending_callbacks: (jobs * per_job) as u64 + 1, error_handler: None, slow_callback_threshold: None },
        Executor::fifo("bench", None),
        Arc::new(SystemClock::new()),
    );
    let mut rates = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        fluss_writer::write::batch_bench::bench_dispatch_batches(&scope, jobs, per_job, &SINK);
        rates.push((jobs * per_job) as f64 / start.elapsed().as_secs_f64());
    }
    let med = median(&rates);
    println!(
        "dispatch: batch jobs of {per_job} inline callbacks, one FIFO worker: median {:.1} M callbacks/s, {:.1} ns/callback",
        med / 1e6,
        1e9 / med
    );
    emit(
        json!({"bench": "dispatch", "path": "full completion path (bench_dispatch_batches)", "per_job": per_job, "callbacks": jobs * per_job,
        "rounds": rounds, "median_callbacks_per_s": med, "ns_per_callback": 1e9 / med, "rates": rates, "load1": load1()}),
    );
}

// ---------------------------------------------------------------------------------------------

/// Appends `n` records while the worker is held, waits until all are acknowledged, returns the
/// live-heap growth in bytes. `K` = bytes captured by the callback; `None` = detached.
fn held_growth<const K: usize>(conn: &Connection, n: u64, detached: bool, tag: &str) -> (i64, usize) {
    let path = table(conn, &format!("bytes_{tag}"), 1);
    let w =
        conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default().max_pending_callbacks(n + 16)).unwrap();
    // Hold the worker with a first callback that waits for the gate.
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let gate_rx = Mutex::new(gate_rx);
    w.append_with_callback(&row![-1i64, "gate"], move |_| {
        started_tx.send(()).unwrap();
        gate_rx.lock().unwrap().recv().unwrap();
    })
    .unwrap();
    started_rx.recv().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let mut r = row![0i64, "x"];
    let before = LIVE.load(Ordering::Relaxed);
    let cap = [7u8; K];
    let mut size = 0;
    for i in 0..n {
        r[0] = Value::BigInt(i as i64);
        if detached {
            w.append_detached(&r).unwrap();
        } else {
            let f = move |_c: &fluss_writer::WriteCompletion| {
                black_box(&cap);
            };
            size = std::mem::size_of_val(&f);
            w.append_with_callback(&r, f).unwrap();
        }
    }
    // Wait until every batch was acknowledged (no buffer bytes held) and the heap is steady.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = i64::MIN;
    loop {
        std::thread::sleep(Duration::from_millis(150));
        let s = w.stats();
        let now = LIVE.load(Ordering::Relaxed);
        if (s.buffer_bytes_in_use == 0 && now == last) || Instant::now() > deadline {
            break;
        }
        last = now;
    }
    let grown = LIVE.load(Ordering::Relaxed) - before;
    gate_tx.send(()).unwrap();
    w.flush(None).unwrap();
    w.close(None).unwrap();
    conn.admin().drop_table(&path, true).unwrap();
    (grown, size)
}

fn bench_bytes() {
    let n = 200_000u64;
    let conn = Connection::open("embedded").unwrap();
    held_growth::<0>(&conn, n / 10, false, "warm");
    let (base, _) = held_growth::<0>(&conn, n, true, "det");
    println!("bytes: {n} records held pending; detached growth (stored rows, engine) {:.1} B/record; PENDING_ENTRY_BYTES = {PENDING_ENTRY_BYTES}", base as f64 / n as f64);
    emit(
        json!({"bench": "bytes_per_callback", "case": "detached baseline", "records": n, "growth_bytes": base, "bytes_per_record": base as f64 / n as f64}),
    );
    macro_rules! case {
        ($k:expr) => {{
            let (g, size) = held_growth::<$k>(&conn, n, false, concat!("k", stringify!($k)));
            let per = (g - base) as f64 / n as f64;
            println!("bytes: callable capturing {:>3} B (size_of {:>3} B): {:>6.1} heap bytes per pending callback beyond a detached record", $k, size, per);
            emit(json!({"bench": "bytes_per_callback", "capture_bytes": $k, "size_of_callable": size, "records": n, "growth_bytes": g,
                "bytes_per_pending_callback": per, "pending_entry_bytes": PENDING_ENTRY_BYTES, "boxed": size > 24}));
        }};
    }
    case!(0);
    case!(8);
    case!(24);
    case!(32);
    case!(64);
    case!(256);
    conn.close(None).unwrap();
}

// ---------------------------------------------------------------------------------------------

fn bench_latency(bootstrap: &str, backend: &str, rate: u64, secs: f64) {
    let conn = connect(bootstrap, &[("client.writer.batch-timeout", "1ms")]);
    let path = table(&conn, "lat", 4);
    let w = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let p = payload(100);
    let mut r = row![0i64, p.as_str()];
    // Warm-up: connections, metadata, writer id.
    for i in 0..1000 {
        r[0] = Value::BigInt(i);
        w.append_with_callback(&r, |_| {}).unwrap();
    }
    w.flush(None).unwrap();
    let warm = conn.executor().stats().ack_to_callback;
    let records = (rate as f64 * secs) as u64;
    let samples: Arc<Vec<AtomicU64>> = Arc::new((0..records).map(|_| AtomicU64::new(0)).collect());
    let start = Instant::now();
    for i in 0..records {
        let due = start + Duration::from_secs_f64(i as f64 / rate as f64);
        let now = Instant::now();
        if due > now + Duration::from_micros(200) {
            std::thread::sleep(due - now);
        }
        r[0] = Value::BigInt(1000 + i as i64);
        let t0 = Instant::now();
        let s = samples.clone();
        w.append_with_callback(&r, move |c| {
            assert!(c.is_ok());
            s[i as usize].store(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        })
        .unwrap();
    }
    w.flush(None).unwrap();
    let took = start.elapsed().as_secs_f64();
    let st = conn.executor().stats();
    let mut v: Vec<u64> = samples.iter().map(|a| a.load(Ordering::Relaxed)).collect();
    let (s50, s99, smax) = (percentile(&mut v, 50.0), percentile(&mut v, 99.0), *v.iter().max().unwrap());
    let a = st.ack_to_callback;
    println!(
        "latency {backend}: {records} records at {:.0}/s, 4 buckets, batch-timeout 1 ms: ack->callback p50 {:.1} us p99 {:.1} us max {:.1} us over {} batches ({} of them warm-up); submit->callback p50 {:.1} us p99 {:.1} us max {:.1} us",
        records as f64 / took,
        a.p50_nanos as f64 / 1e3,
        a.p99_nanos as f64 / 1e3,
        a.max_nanos as f64 / 1e3,
        a.count,
        warm.count,
        s50 as f64 / 1e3,
        s99 as f64 / 1e3,
        smax as f64 / 1e3
    );
    emit(
        json!({"bench": "ack_latency", "backend": backend, "records": records, "target_rate": rate, "achieved_rate": records as f64 / took,
        "batch_timeout_ms": 1, "buckets": 4, "ack_to_callback_p50_ns": a.p50_nanos, "ack_to_callback_p99_ns": a.p99_nanos,
        "ack_to_callback_max_ns": a.max_nanos, "batches": a.count, "warmup_batches_included": warm.count,
        "submit_to_callback_p50_ns": s50, "submit_to_callback_p99_ns": s99, "submit_to_callback_max_ns": smax, "load1": load1()}),
    );
    w.close(None).unwrap();
    conn.admin().drop_table(&path, true).unwrap();
    conn.close(None).unwrap();
}

// ---------------------------------------------------------------------------------------------

static STOP: AtomicBool = AtomicBool::new(false);
static RUN: AtomicU64 = AtomicU64::new(0);

/// In a child process: feed a writer with slow callbacks, sample RSS every 100 ms.
fn backlog_child(bootstrap: &str, backend: &str, n: u64, secs: f64, sleep_us: u64) {
    let conn = connect(bootstrap, &[]);
    let path = table(&conn, &format!("backlog_{n}"), 4);
    let w = Arc::new(
        conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default().max_pending_callbacks(n)).unwrap(),
    );
    let rss0 = rss_bytes();
    let heap0 = LIVE.load(Ordering::Relaxed);
    let submitted = Arc::new(AtomicU64::new(0));
    let producer = {
        let (w, submitted) = (w.clone(), submitted.clone());
        std::thread::spawn(move || {
            let p = payload(100);
            let mut r = row![0i64, p.as_str()];
            let mut i = 0i64;
            while !STOP.load(Ordering::Relaxed) {
                r[0] = Value::BigInt(i);
                w.append_with_callback(&r, move |_| {
                    RUN.fetch_add(1, Ordering::Relaxed);
                    if !STOP.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_micros(sleep_us));
                    }
                })
                .unwrap();
                i += 1;
                submitted.store(i as u64, Ordering::Relaxed);
            }
        })
    };
    let start = Instant::now();
    let mut max_pending = 0;
    let mut rss_max = 0;
    while start.elapsed().as_secs_f64() < secs {
        std::thread::sleep(Duration::from_millis(100));
        let s = w.stats();
        let rss = rss_bytes();
        max_pending = max_pending.max(s.pending_callbacks);
        rss_max = rss_max.max(rss);
        emit(json!({"bench": "backlog_rss", "backend": backend, "max_pending_callbacks": n, "callback_sleep_us": sleep_us,
            "t_s": start.elapsed().as_secs_f64(), "rss_bytes": rss, "rss_growth_bytes": rss as i64 - rss0 as i64,
            "heap_live_growth_bytes": LIVE.load(Ordering::Relaxed) - heap0, "pending_callbacks": s.pending_callbacks,
            "submitted": submitted.load(Ordering::Relaxed), "callbacks_run": RUN.load(Ordering::Relaxed)}));
    }
    STOP.store(true, Ordering::Relaxed);
    producer.join().unwrap();
    w.flush(None).unwrap();
    let total = submitted.load(Ordering::Relaxed);
    assert_eq!(RUN.load(Ordering::Relaxed), total, "every callback ran");
    println!(
        "backlog {backend}: max_pending_callbacks {n}, callback sleeps {sleep_us} us: {total} records in {secs:.0} s; pending peaked at {max_pending} (<= {n}: {}); RSS {:.1} MiB at start, peak {:.1} MiB (+{:.1} MiB)",
        max_pending <= n,
        rss0 as f64 / 1048576.0,
        rss_max as f64 / 1048576.0,
        (rss_max as f64 - rss0 as f64) / 1048576.0
    );
    emit(json!({"bench": "backlog_summary", "backend": backend, "max_pending_callbacks": n, "callback_sleep_us": sleep_us, "secs": secs,
        "submitted": total, "pending_peak": max_pending, "bounded": max_pending <= n, "rss_start_bytes": rss0, "rss_peak_bytes": rss_max}));
    w.close(None).unwrap();
    conn.admin().drop_table(&path, true).unwrap();
    conn.close(None).unwrap();
}

fn main() {
    init_json();
    let args: Vec<String> = std::env::args().collect();
    let bootstrap = std::env::var("FLUSS_BOOTSTRAP_SERVERS").unwrap_or_else(|_| arg("--bootstrap", "127.0.0.1:9123"));
    let cluster = !args.iter().any(|a| a == "--no-cluster");
    let secs: f64 = arg("--backlog-secs", "8").parse().unwrap();
    let sleep_us: u64 = arg("--sleep-us", "50").parse().unwrap();
    if args.get(1).map(String::as_str) == Some("backlog-child") {
        let backend = if arg("--backend", "embedded") == "cluster" { "cluster" } else { "embedded" };
        let b = if backend == "cluster" { bootstrap.clone() } else { "embedded".to_string() };
        backlog_child(&b, backend, arg("--n", "10000").parse().unwrap(), secs, sleep_us);
        return;
    }
    let only = arg("--only", "dispatch,bytes,latency,backlog");
    let only: Vec<&str> = only.split(',').collect();
    println!("micro: load {:.2}", load1());
    if only.contains(&"dispatch") {
        bench_dispatch();
    }
    if only.contains(&"bytes") {
        bench_bytes();
    }
    if only.contains(&"latency") {
        let rate: u64 = arg("--rate", "20000").parse().unwrap();
        bench_latency("embedded", "embedded", rate, 3.0);
        if cluster {
            bench_latency(&bootstrap, "cluster", rate, 3.0);
        }
    }
    if only.contains(&"backlog") {
        // On the cluster the rows leave the process; the in-memory embedded engine keeps every
        // stored row, which would grow RSS by itself.
        let backend = if cluster { "cluster" } else { "embedded" };
        for n in list("--backlog-n", "10000,100000,1000000") {
            let exe = std::env::current_exe().unwrap();
            let mut cmd = std::process::Command::new(exe);
            cmd.args([
                "backlog-child",
                "--backend",
                backend,
                "--n",
                &n.to_string(),
                "--backlog-secs",
                &secs.to_string(),
                "--sleep-us",
                &sleep_us.to_string(),
            ]);
            cmd.args(["--bootstrap", &bootstrap]);
            let json = arg("--json", "");
            if !json.is_empty() {
                cmd.args(["--json", &json]);
            }
            let st = cmd.status().unwrap();
            assert!(st.success(), "backlog child failed");
        }
    }
}
