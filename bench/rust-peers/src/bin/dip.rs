//! Throughput around a leader crash on the replicated cluster: the dip and the recovery.
//!
//! One fluss-writer connection writes at full speed with `append_with_callback` (one submitting
//! thread, rows of `--row-bytes` bytes of field data, ids 0, 1, 2, ... as the bucket key) into a
//! fresh log table with `table.replication.factor` `--replication-factor` (3) and `--buckets` (4)
//! buckets, `client.writer.acks` `--acks` (all). A sampler thread reads every 100 ms how many
//! records were submitted (`append_with_callback` returned), how many callbacks ran (successful and
//! failed) and how many ran per bucket. After `--before-secs`, the leader of bucket `--bucket` (0)
//! gets SIGKILL (`scripts/fluss-cluster.sh kill-tablet I KILL` with the words of
//! `FLUSS_REPLICATED_CLUSTER_ENV`); `--down-secs` later it is started again (`start-tablet I`),
//! and the writer goes on for `--after-secs` more.
//!
//! The killed tablet server is always started again: on the normal path, when the run fails
//! (a `Drop` guard, which also runs while a panic unwinds), and on SIGINT/SIGTERM (the handler
//! only sets a flag; the run stops early and the guard starts the server).
//!
//! Output: the series as JSON lines (`--series PATH`: one object per 100 ms with the rates per
//! second over that interval, plus event lines), a summary (`--json PATH`, `bench: "dip_summary"`)
//! with the pre-kill rate, the depth of the dip and the time to recover to `--recover-frac` (0.8)
//! of the pre-kill rate. Recovery: from the kill to the start of the first 1-s window, after the
//! rate first fell under the threshold, whose mean callbacks/s is at or above the threshold.
//!
//! ```text
//! cargo run --release -p fluss-writer-bench --bin dip -- [--bootstrap 127.0.0.1:9323]
//!     [--cluster-env "FLUSS_TABLETS=3 ..."] [--script scripts/fluss-cluster.sh] [--buckets 4]
//!     [--row-bytes 100] [--replication-factor 3] [--acks all] [--bucket 0] [--before-secs 10]
//!     [--down-secs 20] [--after-secs 30] [--recover-frac 0.8] [--series dip.jsonl] [--json out.jsonl]
//! ```

use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fluss_writer::{row, Config, Connection, DataType, Schema, TableDescriptor, TablePath, Value, WriterOptions};
use fluss_writer_bench::{arg, emit, flag, init_json, load1, payload_pool, process_cpu_secs};
use serde_json::json;

const MAX_BUCKETS: usize = 64;
const TICK: Duration = Duration::from_millis(100);

static SUBMITTED: AtomicU64 = AtomicU64::new(0);
static CALLBACKS_OK: AtomicU64 = AtomicU64::new(0);
static CALLBACKS_ERR: AtomicU64 = AtomicU64::new(0);
static PER_BUCKET: [AtomicU64; MAX_BUCKETS] = [const { AtomicU64::new(0) }; MAX_BUCKETS];
static STOP_SIGNAL: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP_SIGNAL.store(true, Ordering::SeqCst);
}

/// The cluster script with the replicated cluster's environment.
struct Cluster {
    script: String,
    env: Vec<(String, String)>,
    repo: std::path::PathBuf,
}

impl Cluster {
    fn run(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new(&self.script)
            .args(args)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .current_dir(&self.repo)
            .output()
            .map_err(|e| format!("{} {args:?}: {e}", self.script))?;
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        if !stderr.is_empty() {
            eprintln!("[cluster {}] {stderr}", args.join(" "));
        }
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!("{} {args:?} exited with {}: {stderr}", self.script, out.status))
        }
    }

    /// Leader tablet server id of every bucket (`leaders DB.TABLE`: "bucket 0: leader 2, replicas [...]").
    fn leaders(&self, table: &str) -> Result<Vec<Option<i32>>, String> {
        let out = self.run(&["leaders", table])?;
        let mut v = Vec::new();
        for line in out.lines() {
            let Some(rest) = line.strip_prefix("bucket ") else { continue };
            let (b, rest) = rest.split_once(": leader ").ok_or_else(|| format!("unexpected line {line:?}"))?;
            let b: usize = b.trim().parse().map_err(|_| format!("unexpected line {line:?}"))?;
            let l = rest.split(',').next().unwrap_or("").trim();
            if v.len() <= b {
                v.resize(b + 1, None);
            }
            v[b] = l.parse().ok();
        }
        Ok(v)
    }
}

/// Starts the killed tablet server again when dropped, unless that already happened.
struct Revive<'a> {
    cluster: &'a Cluster,
    tablet: Option<i32>,
}

impl Revive<'_> {
    fn start(&mut self) -> Result<(), String> {
        let Some(i) = self.tablet else { return Ok(()) };
        let mut last = String::new();
        for attempt in 1..=3 {
            match self.cluster.run(&["start-tablet", &i.to_string()]) {
                Ok(_) => {
                    self.tablet = None;
                    return Ok(());
                }
                Err(e) => {
                    eprintln!("dip: start-tablet {i}, attempt {attempt}: {e}");
                    last = e;
                    std::thread::sleep(Duration::from_secs(2));
                }
            }
        }
        Err(last)
    }
}

impl Drop for Revive<'_> {
    fn drop(&mut self) {
        if let Some(i) = self.tablet {
            eprintln!("dip: starting tablet server {i} again (cleanup)");
            if let Err(e) = self.start() {
                eprintln!("dip: COULD NOT START tablet server {i} again: {e}; run `scripts/fluss-cluster.sh start-tablet {i}` with the replicated cluster's environment");
            }
        }
    }
}

/// One 100-ms sample: seconds since the start, cumulative counters.
#[derive(Clone)]
struct Sample {
    t: f64,
    submitted: u64,
    ok: u64,
    err: u64,
    buckets: Vec<u64>,
}

/// Sleep `d`, in small steps, returning early (false) on SIGINT/SIGTERM.
fn sleep_unless_stopped(d: Duration) -> bool {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if STOP_SIGNAL.load(Ordering::SeqCst) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20).min(end.saturating_duration_since(Instant::now())));
    }
    !STOP_SIGNAL.load(Ordering::SeqCst)
}

/// Mean of `rates[i..j]` (clamped).
fn mean(rates: &[f64], i: usize, j: usize) -> f64 {
    let j = j.min(rates.len());
    if i >= j {
        return f64::NAN;
    }
    rates[i..j].iter().sum::<f64>() / (j - i) as f64
}

/// Dip and recovery of one per-interval rate series around the event at sample index `ev`:
/// `pre` (mean over the 5 s before), the time from the event to the first interval under
/// `frac * pre` (or `None`), the lowest 1-s mean after the event (as a fraction of `pre`), the
/// longest run of intervals with a rate of 0 (seconds) and the time from the event to the start of
/// the first 1-s window at or above `frac * pre` after the drop (`None`: no drop, or no recovery).
fn dip_figures(rates: &[f64], ev: usize, until: usize, frac: f64) -> serde_json::Value {
    let per_s = (1.0 / TICK.as_secs_f64()).round() as usize; // intervals per second
    let pre = mean(rates, ev.saturating_sub(5 * per_s), ev);
    let thr = frac * pre;
    let until = until.min(rates.len());
    let drop_at = (ev..until).find(|&i| rates[i] < thr);
    let mut lowest = f64::INFINITY;
    for i in ev..until.saturating_sub(per_s - 1) {
        lowest = lowest.min(mean(rates, i, i + per_s));
    }
    let (mut zero_run, mut longest_zero) = (0usize, 0usize);
    for &r in &rates[ev.min(until)..until] {
        zero_run = if r == 0.0 { zero_run + 1 } else { 0 };
        longest_zero = longest_zero.max(zero_run);
    }
    let recover_at = drop_at.and_then(|d| (d..until.saturating_sub(per_s - 1)).find(|&i| mean(rates, i, i + per_s) >= thr));
    let secs = |i: usize| (i as f64 - ev as f64) * TICK.as_secs_f64();
    json!({
        "pre_rate": pre, "threshold": thr, "drop_after_s": drop_at.map(secs),
        "lowest_1s_mean": if lowest.is_finite() { lowest } else { f64::NAN }, "lowest_1s_frac": if pre > 0.0 { lowest / pre } else { f64::NAN },
        "longest_zero_s": longest_zero as f64 * TICK.as_secs_f64(), "recover_after_s": recover_at.map(secs),
        "recovered": drop_at.is_none() || recover_at.is_some(),
    })
}

fn main() {
    init_json();
    let bootstrap = if flag("--bootstrap") {
        arg("--bootstrap", "")
    } else {
        std::env::var("FLUSS_REPLICATED_BOOTSTRAP_SERVERS").unwrap_or_else(|_| "127.0.0.1:9323".to_string())
    };
    let cluster_env = if flag("--cluster-env") {
        arg("--cluster-env", "")
    } else {
        std::env::var("FLUSS_REPLICATED_CLUSTER_ENV")
            .expect("FLUSS_REPLICATED_CLUSTER_ENV or --cluster-env: the replicated cluster's KEY=VALUE words")
    };
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let script = arg("--script", repo.join("scripts/fluss-cluster.sh").to_str().unwrap());
    let buckets: i32 = arg("--buckets", "4").parse().unwrap();
    assert!((1..=MAX_BUCKETS as i32).contains(&buckets), "--buckets 1..={MAX_BUCKETS}");
    let row_bytes: usize = arg("--row-bytes", "100").parse().unwrap();
    let rf: u32 = arg("--replication-factor", "3").parse().unwrap();
    let acks = arg("--acks", "all");
    let kill_bucket: usize = arg("--bucket", "0").parse().unwrap();
    let before = Duration::from_secs_f64(arg("--before-secs", "10").parse().unwrap());
    let down = Duration::from_secs_f64(arg("--down-secs", "20").parse().unwrap());
    let after = Duration::from_secs_f64(arg("--after-secs", "30").parse().unwrap());
    let frac: f64 = arg("--recover-frac", "0.8").parse().unwrap();
    let series_path = arg("--series", "");
    let label = arg("--label", "dip");

    let env: Vec<(String, String)> = cluster_env
        .split_whitespace()
        .map(|w| {
            let (k, v) = w.split_once('=').expect("--cluster-env: KEY=VALUE words");
            (k.to_string(), v.to_string())
        })
        .collect();
    let cluster = Cluster { script, env, repo };
    let status =
        cluster.run(&["status"]).expect("the replicated cluster runs (status): refusing to kill a server of a cluster that is not all up");
    eprintln!("dip: cluster status OK\n{status}");

    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }

    let mut config = Config::default();
    config.set("bootstrap.servers", &bootstrap).unwrap();
    config.set("client.writer.acks", &acks).unwrap();
    if !matches!(acks.as_str(), "all" | "-1") {
        config.set("client.writer.enable-idempotence", "false").unwrap();
    }
    let conn = Connection::connect(config).unwrap();
    conn.admin().create_database("bench", true).unwrap();
    let table = format!("dip_{}_{}", std::process::id(), row_bytes);
    let path = TablePath::new("bench", &table).unwrap();
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("payload", DataType::String).build().unwrap();
    let d = TableDescriptor::new(schema)
        .with_bucket_count(buckets)
        .with_bucket_key(["id"])
        .with_property("table.log.arrow.compression.type", "NONE")
        .with_property("table.replication.factor", rf.to_string());
    let mut created = conn.admin().create_table(&path, &d, true);
    for _ in 0..3 {
        // A table whose buckets get no leader (a loaded 0.9.1 cluster): drop it and try again.
        match &created {
            Err(e) if e.code() == fluss_writer::FlussCode::LEADER_NOT_AVAILABLE => {
                eprintln!("dip: {path}: {e}; dropping it and creating it again");
                conn.admin().drop_table(&path, true).ok();
                std::thread::sleep(Duration::from_secs(2));
                created = conn.admin().create_table(&path, &d, true);
            }
            _ => break,
        }
    }
    created.unwrap();
    let full = format!("bench.{table}");
    // Wait until every bucket has a leader (a new table's buckets get theirs within a second or so).
    let mut leaders = Vec::new();
    for _ in 0..100 {
        leaders = cluster.leaders(&full).unwrap_or_default();
        if leaders.len() == buckets as usize && leaders.iter().all(Option::is_some) {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("dip: leaders before: {leaders:?}");
    let writer = Arc::new(conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap());

    let stop = Arc::new(AtomicBool::new(false));
    let t0 = Instant::now();
    let producer = {
        let (writer, stop) = (writer.clone(), stop.clone());
        std::thread::spawn(move || {
            let pool = payload_pool(row_bytes, 4096);
            let mut rows: Vec<fluss_writer::Row> = pool.iter().map(|p| row![0i64, p.as_str()]).collect();
            let mut id = 0i64;
            let mut append_errors = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let r = &mut rows[id as usize % pool.len()];
                r[0] = Value::BigInt(id);
                let res = writer.append_with_callback(&*r, |c| {
                    if c.error.is_some() {
                        CALLBACKS_ERR.fetch_add(1, Ordering::Relaxed);
                    } else {
                        CALLBACKS_OK.fetch_add(1, Ordering::Relaxed);
                    }
                    if let Some(b) = PER_BUCKET.get(c.bucket.max(0) as usize) {
                        b.fetch_add(1, Ordering::Relaxed);
                    }
                });
                match res {
                    Ok(()) => {
                        id += 1;
                        SUBMITTED.store(id as u64, Ordering::Relaxed);
                    }
                    Err(e) => {
                        append_errors += 1;
                        if append_errors <= 5 {
                            eprintln!("dip: append refused: {e}");
                        }
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
            }
            (id, append_errors)
        })
    };
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let mut next = t0;
            while !stop.load(Ordering::Relaxed) {
                out.push(Sample {
                    t: t0.elapsed().as_secs_f64(),
                    submitted: SUBMITTED.load(Ordering::Relaxed),
                    ok: CALLBACKS_OK.load(Ordering::Relaxed),
                    err: CALLBACKS_ERR.load(Ordering::Relaxed),
                    buckets: PER_BUCKET[..buckets as usize].iter().map(|b| b.load(Ordering::Relaxed)).collect(),
                });
                next += TICK;
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
            }
            out
        })
    };

    // The events, in seconds since t0.
    let mut events: Vec<(String, f64)> = Vec::new();
    let mut revive = Revive { cluster: &cluster, tablet: None };
    let mut victim = None;
    let mut killed_buckets = Vec::new();
    let cpu0 = process_cpu_secs();
    let load_start = load1();
    let mut completed = false;
    if sleep_unless_stopped(before) {
        // The leader of the busy bucket, asked right before the kill (leaders can move).
        let now = cluster.leaders(&full).unwrap_or_else(|e| panic!("leaders: {e}"));
        let leader = now.get(kill_bucket).copied().flatten().expect("the bucket has a leader");
        killed_buckets = now.iter().enumerate().filter(|(_, l)| **l == Some(leader)).map(|(b, _)| b).collect::<Vec<_>>();
        eprintln!("dip: leaders {now:?}; SIGKILL of tablet server {leader}, which leads buckets {killed_buckets:?}");
        revive.tablet = Some(leader); // set before the kill: whatever happens next, it is started again
        events.push(("kill".into(), t0.elapsed().as_secs_f64()));
        let r = cluster.run(&["kill-tablet", &leader.to_string(), "KILL"]);
        events.push(("killed".into(), t0.elapsed().as_secs_f64()));
        if let Err(e) = r {
            panic!("kill-tablet: {e}");
        }
        victim = Some(leader);
        if sleep_unless_stopped(down) {
            eprintln!("dip: leaders while down: {:?}", cluster.leaders(&full));
            events.push(("start".into(), t0.elapsed().as_secs_f64()));
            if let Err(e) = revive.start() {
                panic!("start-tablet: {e}");
            }
            events.push(("started".into(), t0.elapsed().as_secs_f64()));
            completed = sleep_unless_stopped(after);
        }
    }
    // Start the server again now if the run was cut short (before the writer winds down).
    drop(revive);
    stop.store(true, Ordering::Relaxed);
    let (submitted, append_errors) = producer.join().unwrap();
    let samples = sampler.join().unwrap();
    let cpu = process_cpu_secs() - cpu0;
    let flushed = writer.flush(Some(Duration::from_secs(120)));
    eprintln!("dip: flush: {flushed:?}; leaders after: {:?}", cluster.leaders(&full));
    let ok = CALLBACKS_OK.load(Ordering::Relaxed);
    let err = CALLBACKS_ERR.load(Ordering::Relaxed);
    if let Err(e) = writer.close(Some(Duration::from_secs(30))) {
        eprintln!("dip: close: {e}");
    }
    conn.admin().drop_table(&path, true).ok();
    conn.close(None).ok();

    // Per-interval rates.
    let dt: Vec<f64> = samples.windows(2).map(|w| w[1].t - w[0].t).collect();
    let rate =
        |f: &dyn Fn(&Sample) -> u64| -> Vec<f64> { samples.windows(2).zip(&dt).map(|(w, dt)| (f(&w[1]) - f(&w[0])) as f64 / dt).collect() };
    let submitted_rate = rate(&|s| s.submitted);
    let callback_rate = rate(&|s| s.ok + s.err);
    let err_rate = rate(&|s| s.err);
    let killed_rate = rate(&|s| killed_buckets.iter().map(|&b| s.buckets[b]).sum::<u64>());
    let t_mid: Vec<f64> = samples.windows(2).map(|w| w[1].t).collect();
    if !series_path.is_empty() {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&series_path).unwrap());
        writeln!(f, "{}", json!({"kind": "meta", "label": label, "bootstrap": bootstrap, "buckets": buckets, "row_bytes": row_bytes, "replication_factor": rf, "acks": acks, "killed_tablet": victim, "killed_bucket": kill_bucket, "buckets_led_by_killed": killed_buckets, "tick_s": TICK.as_secs_f64()})).unwrap();
        for (name, t) in &events {
            writeln!(f, "{}", json!({"kind": "event", "event": name, "t": t})).unwrap();
        }
        for (i, t) in t_mid.iter().enumerate() {
            writeln!(f, "{}", json!({"kind": "sample", "t": t, "records_per_s": submitted_rate[i], "callbacks_per_s": callback_rate[i], "errors_per_s": err_rate[i], "killed_leader_buckets_callbacks_per_s": killed_rate[i]})).unwrap();
        }
    }
    let at = |name: &str| events.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
    let index_at = |t: f64| t_mid.iter().position(|&x| x >= t).unwrap_or(t_mid.len());
    let end = t_mid.len();
    let (kill_i, start_i) = (at("kill").map(index_at), at("started").map(index_at));
    let summary = json!({
        "bench": "dip_summary", "label": label, "bootstrap": bootstrap, "buckets": buckets, "row_bytes": row_bytes,
        "replication_factor": rf, "acks": acks, "killed_tablet": victim, "killed_bucket": kill_bucket,
        "buckets_led_by_killed": killed_buckets, "completed": completed, "events": events.iter().map(|(n, t)| json!({"event": n, "t": t})).collect::<Vec<_>>(),
        "submitted": submitted, "callbacks_ok": ok, "callbacks_failed": err, "append_errors": append_errors,
        "flush": format!("{flushed:?}"), "client_cpu_us_per_record": cpu / submitted.max(1) as f64 * 1e6,
        "load1_start": load_start, "load1_end": load1(), "recover_frac": frac,
        "kill_callbacks": kill_i.map(|k| dip_figures(&callback_rate, k, start_i.unwrap_or(end), frac)),
        "kill_records": kill_i.map(|k| dip_figures(&submitted_rate, k, start_i.unwrap_or(end), frac)),
        "restart_callbacks": start_i.map(|s| dip_figures(&callback_rate, s, end, frac)),
        "restart_records": start_i.map(|s| dip_figures(&submitted_rate, s, end, frac)),
        "series": series_path,
    });
    println!("{summary:#}");
    emit(summary);
    assert_eq!(ok + err, submitted as u64, "every submitted record got its callback");
    if STOP_SIGNAL.load(Ordering::SeqCst) {
        eprintln!("dip: stopped by a signal; the tablet server was started again");
        std::process::exit(130);
    }
}
