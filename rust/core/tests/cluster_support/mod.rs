//! Helpers shared by the tests that run against a real Fluss 0.9.1 cluster
//! (`cluster_writes`, `cluster_interop_java`, `cluster_restart`).
//!
//! Start the cluster with `scripts/fluss-cluster.sh start` and export the line it prints
//! (`FLUSS_BOOTSTRAP_SERVERS=127.0.0.1:9123`). Without the variable the tests print a loud banner
//! and pass, except under `CI=true`, where they fail.
#![allow(dead_code)]

pub mod proxy;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use fluss_writer::backend::{call, Dest};
use fluss_writer::cluster::readback::{fetch_log, list_offsets, lookup, EARLIEST_OFFSET, LATEST_OFFSET};
use fluss_writer::wire::log_batch::LogBatch;
use fluss_writer::wire::proto;
use fluss_writer::wire::{bucket_for_key, decode_row, encode_key, record_batch_to_rows};
use fluss_writer::{Config, Connection, Row, TableInfo, TablePath, Value};

/// The bootstrap address of the real cluster, or `None` (after a banner) outside CI.
pub fn bootstrap(test: &str) -> Option<String> {
    cluster_address("FLUSS_BOOTSTRAP_SERVERS", "", test)
}

/// The address of the cluster with a Paimon data lake (`FLUSS_LAKE_BOOTSTRAP_SERVERS`, which
/// scripts/test-all.sh exports), with the same rule as [`bootstrap`].
#[allow(dead_code)]
pub fn lake_bootstrap(test: &str) -> Option<String> {
    cluster_address("FLUSS_LAKE_BOOTSTRAP_SERVERS", "FLUSS_LAKE=paimon FLUSS_OUT_VAR=FLUSS_LAKE_BOOTSTRAP_SERVERS ", test)
}

/// The address of a Fluss 1.0-SNAPSHOT cluster started with low KV back-pressure thresholds
/// (`FLUSS_PRESSURE_BOOTSTRAP_SERVERS`; see rust/core/tests/kv_backpressure.rs), with the same rule
/// as [`bootstrap`].
#[allow(dead_code)]
pub fn pressure_bootstrap(test: &str) -> Option<String> {
    cluster_address(
        "FLUSS_PRESSURE_BOOTSTRAP_SERVERS",
        "FLUSS_VERSION=1.0-SNAPSHOT FLUSS_RUN_DIR=.fluss/run-pressure FLUSS_COORDINATOR_PORT=9500 FLUSS_TABLET_PORT=9501 \
         FLUSS_ZK_PORT=9502 FLUSS_OUT_VAR=FLUSS_PRESSURE_BOOTSTRAP_SERVERS \
         FLUSS_EXTRA_CONF=$'kv.backpressure.l0-slowdown-trigger: 1\\nkv.rocksdb.writebuffer.size: 64kb\\nserver.data-disk.write-limit-ratio: 0.99' ",
        test,
    )
}

/// The address of the 1.0-line cluster whose client listener takes SASL/PLAIN
/// (`FLUSS_SASL_V1_BOOTSTRAP_SERVERS`; see rust/core/tests/cluster_sasl_v1.rs), with the same rule.
#[allow(dead_code)]
pub fn sasl_v1_bootstrap(test: &str) -> Option<String> {
    cluster_address(
        "FLUSS_SASL_V1_BOOTSTRAP_SERVERS",
        "FLUSS_VERSION=1.0-SNAPSHOT FLUSS_SASL=1 FLUSS_RUN_DIR=.fluss/run-sasl-v1 FLUSS_COORDINATOR_PORT=9600 \
         FLUSS_TABLET_PORT=9601 FLUSS_ZK_PORT=9610 FLUSS_OUT_VAR=FLUSS_SASL_V1_BOOTSTRAP_SERVERS ",
        test,
    )
}

/// `var`'s cluster address; unset: `None` with a loud banner, or a panic under CI=true.
fn cluster_address(var: &str, start_env: &str, test: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(s) if !s.trim().is_empty() => Some(s),
        _ => {
            let ci = std::env::var("CI").map(|v| v.eq_ignore_ascii_case("true") || v == "1").unwrap_or(false);
            if ci {
                panic!(
                    "{var} is not set but CI=true: {test} must run against a real Fluss cluster \
                     (export \"$({start_env}scripts/fluss-cluster.sh start | tail -n 1)\")"
                );
            }
            // Straight to stderr: the harness would swallow eprintln! of a passing test.
            use std::io::Write;
            let bar = "!".repeat(88);
            let _ = writeln!(
                std::io::stderr(),
                "\n{bar}\n!!! {test}: {var} is not set: NOT testing against a real Fluss cluster.\n\
                 !!! Run: export \"$({start_env}scripts/fluss-cluster.sh start | tail -n 1)\"\n{bar}"
            );
            None
        }
    }
}

/// How long the helpers wait for a coordinator that cannot be reached: heal-watch
/// (`scripts/fluss-cluster.sh heal-watch`) restarts a Fluss 0.9.1 coordinator that lost a table,
/// which refuses connections for about 6 s.
const COORDINATOR_WAIT: Duration = Duration::from_secs(60);

/// A connection to the cluster with test-friendly timeouts plus `extra` settings. A retriable
/// failure (the coordinator refusing connections while heal-watch restarts it) is retried for
/// up to a minute, and noted.
pub fn connect(bootstrap: &str, extra: &[(&str, &str)]) -> Connection {
    while_coordinator_unreachable(&format!("connect to {bootstrap}"), || try_connect(bootstrap, extra))
}

/// Calls `f` until it succeeds, for up to COORDINATOR_WAIT while it fails as a restarting
/// coordinator makes it fail (heal-watch restarting it: connections refused, a retriable error,
/// then, while it starts, UNKNOWN_SERVER_ERROR "CoordinatorEventProcessor is not initialized
/// yet", as the C++ test fixture also knows), noting each retry.
fn while_coordinator_unreachable<T>(what: &str, mut f: impl FnMut() -> fluss_writer::Result<T>) -> T {
    let deadline = Instant::now() + COORDINATOR_WAIT;
    let starting = |e: &fluss_writer::Error| e.code() == -1 && e.message().contains("is not initialized yet");
    loop {
        match f() {
            Ok(v) => return v,
            Err(e) if (e.is_retriable() || starting(&e)) && Instant::now() < deadline => {
                note_retry(format_args!("{what}: {e}; waiting for the coordinator"));
                std::thread::sleep(Duration::from_secs(1));
            }
            Err(e) => panic!("{what}: {e}"),
        }
    }
}

/// [`connect`], returning the error (a tiny request timeout can make connecting itself fail).
pub fn try_connect(bootstrap: &str, extra: &[(&str, &str)]) -> fluss_writer::Result<Connection> {
    let mut c = Config::default();
    c.set("bootstrap.servers", bootstrap)?;
    for (k, v) in [("client.writer.batch-timeout", "5ms"), ("client.request-timeout", "20s"), ("client.writer.delivery-timeout", "45s")]
        .iter()
        .chain(extra)
    {
        c.set(k, v)?;
    }
    Connection::connect(c)
}

/// Create a table named `unique(prefix)` in the test database and return its path once every
/// bucket has a leader. A table whose buckets get no leader (`LEADER_NOT_AVAILABLE` from
/// create_table, or no leader in Metadata within 20 s: a Fluss 0.9.1 coordinator now and then
/// never processes a new table, more often just after it restarted) is abandoned and another one
/// created, up to three times.
pub fn create_fresh_table(conn: &Connection, prefix: &str, descriptor: &fluss_writer::TableDescriptor) -> TablePath {
    create_retrying(conn, database(conn), prefix, descriptor, true)
}

/// An embedded connection with a 5 ms batch timeout: the other backend of the tests that run on
/// both (lake tables, schema changes, CHAR/BINARY).
pub fn embedded() -> Connection {
    embedded_with(&[])
}

/// [`embedded`] with `extra` settings.
pub fn embedded_with(extra: &[(&str, &str)]) -> Connection {
    let mut c = Config::default();
    c.set("bootstrap.servers", "embedded").unwrap();
    c.set("client.writer.batch-timeout", "5ms").unwrap();
    for (k, v) in extra {
        c.set(k, v).unwrap();
    }
    Connection::connect(c).unwrap()
}

/// Create `unique(prefix)` in the test database with `d`: the tests that run on both backends
/// use it. `create_table` waits for a non-partitioned table's leaders; a table that gets none
/// (`LEADER_NOT_AVAILABLE`: the Fluss 0.9.1 coordinator missed it, see [`create_fresh_table`]) is
/// abandoned and another one created, up to three times. The embedded engine never refuses so.
pub fn create(conn: &Connection, prefix: &str, d: &fluss_writer::TableDescriptor) -> TablePath {
    create_in(conn, database(conn), prefix, d)
}

/// [`create`] in database `db` (which must exist).
pub fn create_in(conn: &Connection, db: &str, prefix: &str, d: &fluss_writer::TableDescriptor) -> TablePath {
    create_retrying(conn, db, prefix, d, false)
}

/// Create `unique(prefix)` in `db`, abandoning a table the coordinator missed (and, with
/// `leaders`, one whose buckets have no leader in Metadata within 20 s) for another, up to three
/// times.
fn create_retrying(conn: &Connection, db: &str, prefix: &str, d: &fluss_writer::TableDescriptor, leaders: bool) -> TablePath {
    let mut failures = Vec::new();
    let unreachable_until = Instant::now() + COORDINATOR_WAIT;
    while failures.len() < 3 {
        let path = TablePath::new(db, unique(prefix)).unwrap();
        let missed = match conn.admin().create_table(&path, d, false) {
            Ok(()) if leaders => leaders_within(conn, &table_info(conn, &path), Duration::from_secs(20)).err(),
            Ok(()) => None,
            Err(e) if e.code() == fluss_writer::FlussCode::LEADER_NOT_AVAILABLE => Some(e.to_string()),
            // The coordinator cannot be reached (heal-watch restarting it): wait, then create
            // another table (this one may have been created before the connection broke).
            Err(e) if e.code() == fluss_writer::FlussCode::NETWORK_EXCEPTION && Instant::now() < unreachable_until => {
                note_retry(format_args!("{path}: {e}; waiting for the coordinator"));
                std::thread::sleep(Duration::from_secs(1));
                continue;
            }
            Err(e) => panic!("create table {path}: {e}"),
        };
        let Some(e) = missed else { return path };
        note_retry(format_args!("{path}: {e}; creating another table"));
        failures.push(format!("{path}: {e}"));
    }
    panic!("create table failed three times: {}", failures.join("; "))
}

/// Drop a test's table, retrying while the coordinator cannot be reached (`scripts/fluss-cluster.sh
/// heal-watch` may be restarting it); dropping with `ignore_if_not_exists` is safe to repeat.
pub fn drop_table_when_reachable(conn: &Connection, path: &TablePath) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match conn.admin().drop_table(path, true) {
            Ok(()) => return,
            Err(e) if e.is_retriable() && Instant::now() < deadline => std::thread::sleep(Duration::from_millis(500)),
            Err(e) => panic!("drop table {path}: {e}"),
        }
    }
}

/// A log table (`id` BIGINT NOT NULL, `dt` STRING, `msg` STRING) partitioned by `dt`, with
/// `buckets` buckets keyed by `id`.
pub fn partitioned_log_descriptor(buckets: i32) -> fluss_writer::TableDescriptor {
    use fluss_writer::{DataType, Schema, TableDescriptor};
    let schema = Schema::builder()
        .column_not_null("id", DataType::BigInt)
        .column("dt", DataType::String)
        .column("msg", DataType::String)
        .build()
        .unwrap();
    TableDescriptor::new(schema).with_bucket_count(buckets).with_bucket_key(["id"]).with_partition_keys(["dt"])
}

/// Completions collected by callbacks.
#[derive(Clone, Default)]
pub struct Seen(pub std::sync::Arc<Mutex<Vec<fluss_writer::WriteCompletion>>>);

impl Seen {
    /// A callback that keeps its completion.
    pub fn cb(&self) -> impl FnOnce(&fluss_writer::WriteCompletion) + Send + 'static {
        let s = self.0.clone();
        move |c: &fluss_writer::WriteCompletion| s.lock().unwrap().push(c.clone())
    }

    /// Every completion so far.
    pub fn all(&self) -> Vec<fluss_writer::WriteCompletion> {
        self.0.lock().unwrap().clone()
    }
}

/// A table name unique to this process and moment.
pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{prefix}_{}_{}", std::process::id(), nanos % 1_000_000_000)
}

/// The database every cluster test uses (created if missing).
pub fn database(conn: &Connection) -> &'static str {
    let db = "fw_it";
    while_coordinator_unreachable(&format!("create database {db}"), || conn.admin().create_database(db, true));
    db
}

/// Run `f` on its own thread and fail if it takes longer than `limit` (every cluster test is
/// bounded).
pub fn bounded<F: FnOnce() + Send + 'static>(name: &str, limit: Duration, f: F) {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            let _ = tx.send(r);
        })
        .unwrap();
    match rx.recv_timeout(limit) {
        Ok(Ok(())) => {
            let _ = h.join();
        }
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("{name} did not finish within {limit:?}"),
    }
}

/// Says that a test had to try something again (a table the coordinator missed, a leader move
/// that did not happen): on stderr, and as a line of `$FLUSS_TEST_LOGS/retries.log`, which the
/// summary of `make test` lists (scripts/test-summary.py), so that a run that passed only after
/// retries says so.
pub fn note_retry(what: impl std::fmt::Display) {
    let test = std::thread::current().name().unwrap_or("?").to_string();
    eprintln!("{what}");
    if let Some(dir) = std::env::var_os("FLUSS_TEST_LOGS") {
        use std::io::Write as _;
        let file = std::fs::OpenOptions::new().create(true).append(true).open(std::path::Path::new(&dir).join("retries.log"));
        if let Ok(mut f) = file {
            let _ = writeln!(f, "rust {test}: {what}");
        }
    }
}

/// Retry `f` while it fails with a retriable error (fresh buckets answer NOT_LEADER_OR_FOLLOWER
/// or LEADER_NOT_AVAILABLE for a moment; a restarted tablet server refuses connections), for at
/// most `limit`.
pub fn retry<T>(conn: &Connection, what: &str, limit: Duration, mut f: impl FnMut(&Connection) -> fluss_writer::Result<T>) -> T {
    let deadline = Instant::now() + limit;
    let mut attempts = 0;
    loop {
        attempts += 1;
        match f(conn) {
            Ok(v) => return v,
            Err(e) if e.is_retriable() && Instant::now() < deadline => {
                if attempts <= 3 || attempts % 20 == 0 {
                    eprintln!("{what}: attempt {attempts} failed, retrying: {e}");
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("{what} failed after {attempts} attempts: {e}"),
        }
    }
}

/// Leader (tablet server id) of every bucket of `info`'s table (waits up to 30 s for buckets
/// without a leader; panics after that).
pub fn leaders(conn: &Connection, info: &TableInfo) -> Vec<i32> {
    leaders_within(conn, info, Duration::from_secs(30)).unwrap_or_else(|e| panic!("{e}"))
}

/// Leader of every bucket of `info`'s table, asking Metadata again while a bucket has none or
/// the request fails with a retriable error, for at most `limit`.
pub fn leaders_within(conn: &Connection, info: &TableInfo, limit: Duration) -> Result<Vec<i32>, String> {
    let path = proto::PbTablePath { database_name: info.path.database.clone(), table_name: info.path.table.clone() };
    let n = info.bucket_count() as usize;
    let deadline = Instant::now() + limit;
    loop {
        let backend = conn.backend().clone();
        let request = proto::MetadataRequest { table_path: vec![path.clone()], ..Default::default() };
        let last = match conn.block_on(async move { call(&*backend, Dest::Any, request).await }) {
            Ok(m) => {
                let mut out = vec![None; n];
                if let Some(t) = m.table_metadata.iter().find(|t| t.table_id == info.table_id) {
                    for b in &t.bucket_metadata {
                        if let Some(slot) = out.get_mut(b.bucket_id as usize) {
                            *slot = b.leader();
                        }
                    }
                }
                if out.iter().all(Option::is_some) {
                    return Ok(out.into_iter().map(Option::unwrap).collect());
                }
                format!("buckets without a leader: {out:?}")
            }
            Err(e) if e.is_retriable() => e.to_string(),
            Err(e) => return Err(format!("Metadata of {}: {e}", info.path)),
        };
        if Instant::now() >= deadline {
            return Err(format!("{}: no leader for every bucket within {limit:?} ({last})", info.path));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// [`retry`] against the leader of `bucket`: after an error that means the leader is unknown or
/// moved (a restarted tablet server, a new election), the next attempt looks it up again.
pub fn retry_at_leader<T>(
    conn: &Connection,
    info: &TableInfo,
    bucket: i32,
    what: &str,
    limit: Duration,
    mut f: impl FnMut(&Connection, i32) -> fluss_writer::Result<T>,
) -> T {
    let mut leader = None;
    retry(conn, what, limit, |c| {
        let l = *leader.get_or_insert_with(|| leaders(c, info)[bucket as usize]);
        let r = f(c, l);
        if matches!(&r, Err(e) if fluss_writer::FlussCode::is_invalid_metadata(e.code())) {
            leader = None;
        }
        r
    })
}

/// One record read back from a bucket's log.
#[derive(Clone, Debug, PartialEq)]
pub struct LogRecord {
    pub bucket: i32,
    pub offset: i64,
    /// 0 append-only, 1 +I, 2 -U, 3 +U, 4 -D.
    pub change_type: u8,
    pub writer_id: i64,
    pub batch_sequence: i32,
    pub row: Row,
}

/// The (earliest, high watermark) offsets of every bucket.
pub fn offsets(conn: &Connection, info: &TableInfo) -> Vec<(i64, i64)> {
    let table_id = info.table_id;
    (0..info.bucket_count())
        .map(|b| {
            retry_at_leader(conn, info, b, "ListOffsets", Duration::from_secs(30), |c, leader| {
                let backend = c.backend().clone();
                c.block_on(async move {
                    let e = list_offsets(&*backend, leader, table_id, None, &[b], EARLIEST_OFFSET).await?[0].1;
                    let l = list_offsets(&*backend, leader, table_id, None, &[b], LATEST_OFFSET).await?[0].1;
                    Ok((e, l))
                })
            })
        })
        .collect()
}

/// Every record of every bucket, from the log start to the high watermark, decoded with the
/// table schema (ListOffsets + FetchLog + LogBatch decode).
pub fn read_log(conn: &Connection, info: &TableInfo) -> Vec<LogRecord> {
    read_log_and_offsets(conn, info).0
}

/// [`read_log`], with the (log start, high watermark) of every bucket it read up to and the
/// number of empty batches it met: a primary-key table's server appends one, which takes an
/// offset, for a batch that changed nothing (deletes of keys that do not exist), so the records
/// and the empty batches together fill the offsets.
pub fn read_log_and_offsets(conn: &Connection, info: &TableInfo) -> (Vec<LogRecord>, Vec<(i64, i64)>, usize) {
    let ranges = offsets(conn, info);
    let mut empty_batches = 0;
    let schema = info.schema().clone();
    let mut out = Vec::new();
    for b in 0..info.bucket_count() {
        let (mut next, hw) = ranges[b as usize];
        while next < hw {
            let table_id = info.table_id;
            let (_, bytes): (i64, Bytes) = retry_at_leader(conn, info, b, "FetchLog", Duration::from_secs(30), |c, leader| {
                let backend = c.backend().clone();
                c.block_on(async move { fetch_log(&*backend, leader, table_id, None, b, next, 8 << 20).await })
            });
            let batches = LogBatch::parse_all(&bytes).unwrap();
            assert!(!batches.is_empty(), "FetchLog of bucket {b} from {next} (hw {hw}) returned no complete batch");
            for batch in batches {
                assert_eq!(batch.magic(), 0, "a 0.9.1 server returns magic-0 batches");
                batch.check_crc().unwrap();
                if batch.last_offset() < next {
                    continue;
                }
                if batch.record_count() == 0 {
                    empty_batches += 1;
                }
                let rb = batch.decode(&schema).unwrap();
                let rows = record_batch_to_rows(&schema, &rb).unwrap();
                let cts = batch.change_types().map(<[u8]>::to_vec);
                for (i, row) in rows.into_iter().enumerate() {
                    let offset = batch.base_offset() + i as i64;
                    if offset < next || offset >= hw {
                        continue;
                    }
                    out.push(LogRecord {
                        bucket: b,
                        offset,
                        change_type: cts.as_ref().map_or(0, |c| c[i]),
                        writer_id: batch.writer_id(),
                        batch_sequence: batch.batch_sequence(),
                        row,
                    });
                }
                next = next.max(batch.last_offset() + 1);
            }
        }
    }
    (out, ranges, empty_batches)
}

/// Encoded primary key and bucket of a full row of a primary-key table (as the writer computes
/// them).
pub fn key_and_bucket(info: &TableInfo, row: &[Value]) -> (Vec<u8>, i32) {
    let schema = info.schema();
    let pk = schema.primary_key_indexes();
    let mut key = Vec::new();
    encode_key(schema, &pk, row, &mut key).unwrap();
    let bk = info.bucket_key_indexes();
    let bucket = if bk == pk {
        bucket_for_key(&key, info.bucket_count())
    } else {
        let mut b = Vec::new();
        encode_key(schema, &bk, row, &mut b).unwrap();
        bucket_for_key(&b, info.bucket_count())
    };
    (key, bucket)
}

/// Look up full rows (only their key columns matter) by primary key: per row, the stored row or
/// `None`. Retries while the bucket leaders are not ready.
pub fn lookup_rows(conn: &Connection, info: &TableInfo, rows: &[Row]) -> Vec<Option<Row>> {
    let mut per_bucket: BTreeMap<i32, Vec<(usize, Bytes)>> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        let (k, b) = key_and_bucket(info, r);
        per_bucket.entry(b).or_default().push((i, Bytes::from(k)));
    }
    let mut out = vec![None; rows.len()];
    for (b, keys) in per_bucket {
        for chunk in keys.chunks(500) {
            let table_id = info.table_id;
            let ks: Vec<Bytes> = chunk.iter().map(|(_, k)| k.clone()).collect();
            let values = retry_at_leader(conn, info, b, "Lookup", Duration::from_secs(45), |c, leader| {
                let backend = c.backend().clone();
                let ks = ks.clone();
                c.block_on(async move { lookup(&*backend, leader, table_id, None, b, ks).await })
            });
            for ((i, _), v) in chunk.iter().zip(values) {
                out[*i] = v.map(|v| {
                    assert!(v.len() >= 2, "a Lookup value starts with the int16 schema id");
                    assert_eq!(i16::from_le_bytes([v[0], v[1]]) as i32, info.schema_id, "schema id of a looked-up row");
                    decode_row(info.schema(), &v[2..]).unwrap()
                });
            }
        }
    }
    out
}

/// The full key row (key values in place, nulls elsewhere) of `key` values in primary-key order.
pub fn key_row(info: &TableInfo, key: &[Value]) -> Row {
    let mut row = vec![Value::Null; info.schema().len()];
    for (v, i) in key.iter().zip(info.schema().primary_key_indexes()) {
        row[i] = v.clone();
    }
    row
}

/// Load a table's info, waiting out a coordinator that heal-watch is restarting.
pub fn table_info(conn: &Connection, path: &TablePath) -> TableInfo {
    while_coordinator_unreachable(&format!("table info of {path}"), || conn.admin().get_table_info(path))
}

/// A `log` logger that keeps the SDK's debug messages so tests can count events the SDK only
/// logs (retries, responses to requests that had already timed out). Installed once per test
/// binary; messages at warn and above are also printed.
pub struct Recorder {
    lines: Mutex<Vec<String>>,
}

impl log::Log for Recorder {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.target().starts_with("fluss_writer") && m.level() <= log::Level::Debug
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            let line = format!("{}", r.args());
            if r.level() <= log::Level::Warn {
                eprintln!("[{}] {line}", r.level());
            }
            self.lines.lock().unwrap().push(line);
        }
    }
    fn flush(&self) {}
}

/// The recorder (installing it on first use).
pub fn recorder() -> &'static Recorder {
    static R: std::sync::OnceLock<&'static Recorder> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        let r: &'static Recorder = Box::leak(Box::new(Recorder { lines: Mutex::new(Vec::new()) }));
        if log::set_logger(r).is_ok() {
            log::set_max_level(log::LevelFilter::Debug);
        }
        r
    })
}

impl Recorder {
    /// How many recorded messages satisfy `pred`.
    pub fn count(&self, pred: impl Fn(&str) -> bool) -> usize {
        self.lines.lock().unwrap().iter().filter(|l| pred(l)).count()
    }
}

/// A writer kept busy by a producer thread: batches of `burst` appends with callbacks, a short
/// pause between bursts, ids 0, 1, 2, ... in submission order, each row `(id, "record {id}")`.
/// Used by the fault tests (tablet restart, leader failover).
pub struct Load {
    outcomes: Outcomes,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    producer: Option<std::thread::JoinHandle<i64>>,
}

/// A test that panics drops its load while unwinding: the producer stops after its burst and
/// lets go of the writer, so the next test of the process does not inherit its connections
/// (the soak counts descriptors and memory).
impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Per record id: how many times its callback ran, and the last outcome (error code, bucket,
/// offset).
pub type Outcomes = std::sync::Arc<Mutex<Vec<(u32, i32, i32, i64)>>>;

impl Load {
    pub fn start(writer: std::sync::Arc<fluss_writer::AppendWriter>, burst: usize, pause: Duration) -> Load {
        use std::sync::atomic::Ordering;
        let outcomes: Outcomes = Default::default();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let producer = {
            let (outcomes, stop) = (outcomes.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut id: i64 = 0;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..burst {
                        outcomes.lock().unwrap().push((0, 0, -1, -1));
                        let o = outcomes.clone();
                        writer
                            .append_with_callback(&[Value::BigInt(id), Value::String(format!("record {id}"))], move |c| {
                                let mut v = o.lock().unwrap();
                                let e = &mut v[id as usize];
                                *e = (e.0 + 1, c.error_code(), c.bucket, c.offset);
                            })
                            .expect("append is accepted (the buffer wait is unbounded)");
                        id += 1;
                    }
                    std::thread::sleep(pause);
                }
                id
            })
        };
        Load { outcomes, stop, producer: Some(producer) }
    }

    /// Operations acknowledged so far.
    pub fn acked(&self) -> usize {
        self.outcomes.lock().unwrap().iter().filter(|o| o.0 == 1 && o.1 == 0).count()
    }

    /// Stop the producer; returns how many records it submitted and the outcomes so far.
    pub fn stop(mut self) -> (i64, Outcomes) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let written = self.producer.take().expect("running").join().unwrap();
        (written, self.outcomes.clone())
    }
}

/// Error codes that may legitimately end a record whose delivery overlapped a server fault
/// (restart, crash, leader move): the fault tests accept these in callbacks and no others.
/// `UNKNOWN_SERVER_ERROR` is here because a 0.9.1 tablet server answers some produce requests with
/// it while connections are being reset (netty's `IllegalReferenceCountException` from
/// `PbProduceLogReqForBucket.getRecordsSlice`, before any append: docs/server-compatibility.md,
/// note 7); it is not retriable, as in Fluss's own client.
pub const FAULT_CODES: &[i32] = &[
    fluss_writer::FlussCode::UNKNOWN_SERVER_ERROR,
    fluss_writer::ClientCode::DeliveryTimeout as i32,
    fluss_writer::ClientCode::SequenceReset as i32,
    fluss_writer::FlussCode::OUT_OF_ORDER_SEQUENCE,
    fluss_writer::FlussCode::NETWORK_EXCEPTION,
    fluss_writer::FlussCode::NOT_LEADER_OR_FOLLOWER,
    fluss_writer::FlussCode::LEADER_NOT_AVAILABLE,
    fluss_writer::FlussCode::UNKNOWN_TABLE_OR_BUCKET,
    fluss_writer::FlussCode::NOT_ENOUGH_REPLICAS,
    fluss_writer::FlussCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND,
];

/// What [`verify_exactly_once`] found.
#[derive(Debug)]
pub struct Verdict {
    pub written: i64,
    pub acked: usize,
    pub by_code: BTreeMap<i32, usize>,
    /// Operations whose callback reported an error but whose record is stored (at most once):
    /// the protocol could not know (a response lost with the connection).
    pub failed_but_stored: usize,
}

/// The invariants of a write under faults, checked against the table read back from the leaders:
/// every callback ran exactly once with a code from `documented`; every acknowledged record is
/// stored exactly once, at the bucket and offset its callback reported; no record is stored twice;
/// within a bucket, acknowledged records are stored in submission order.
pub fn verify_exactly_once(conn: &Connection, info: &TableInfo, written: i64, outcomes: &Outcomes, documented: &[i32]) -> Verdict {
    let outcomes = outcomes.lock().unwrap().clone();
    assert_eq!(outcomes.len() as i64, written);
    let mut by_code: BTreeMap<i32, usize> = BTreeMap::new();
    for (id, o) in outcomes.iter().enumerate() {
        assert_eq!(o.0, 1, "the callback of record {id} ran {} times", o.0);
        *by_code.entry(o.1).or_default() += 1;
    }
    for code in by_code.keys() {
        assert!(*code == 0 || documented.contains(code), "undocumented error code {code} in callbacks: {by_code:?}");
    }
    let log = read_log(conn, info);
    let mut count = vec![0u32; written as usize];
    let mut last_acked_id_in_bucket: BTreeMap<i32, (i64, i64)> = BTreeMap::new();
    for rec in &log {
        let Value::BigInt(id) = rec.row[0] else { panic!("{rec:?}") };
        count[id as usize] += 1;
        assert_eq!(rec.row[1], Value::String(format!("record {id}")));
        let o = outcomes[id as usize];
        if o.1 == 0 {
            assert_eq!((rec.bucket, rec.offset), (o.2, o.3), "record {id} is not where its callback said");
            // `read_log` returns each bucket in offset order.
            if let Some(&(prev, prev_offset)) = last_acked_id_in_bucket.get(&rec.bucket) {
                assert!(
                    prev < id,
                    "bucket {}: record {id} at offset {} is stored after record {prev} (offset {prev_offset})",
                    rec.bucket,
                    rec.offset
                );
            }
            last_acked_id_in_bucket.insert(rec.bucket, (id, rec.offset));
        }
    }
    let dup = count.iter().filter(|&&n| n > 1).count();
    assert_eq!(dup, 0, "{dup} records stored more than once");
    let lost: Vec<usize> = outcomes.iter().enumerate().filter(|(i, o)| o.1 == 0 && count[*i] != 1).map(|(i, _)| i).collect();
    assert!(lost.is_empty(), "{} acknowledged records are missing, first ids {:?}", lost.len(), &lost[..lost.len().min(10)]);
    Verdict {
        written,
        acked: outcomes.iter().filter(|o| o.1 == 0).count(),
        by_code,
        failed_but_stored: outcomes.iter().enumerate().filter(|(i, o)| o.1 != 0 && count[*i] == 1).count(),
    }
}

/// What [`count_stored`] found for a write without the exactly-once promise (`acks = 1`,
/// idempotence off): how many acknowledged records the table lacks.
#[derive(Debug)]
pub struct Tally {
    pub written: i64,
    pub acked: usize,
    pub by_code: BTreeMap<i32, usize>,
    /// Acknowledged records that are not stored (lost with a crashed leader's unreplicated tail).
    pub lost_acked: usize,
    /// Records stored more than once (a retry without idempotence).
    pub stored_twice: usize,
    /// Records whose callback reported an error but that are stored.
    pub failed_but_stored: usize,
}

/// Count, without asserting them, the outcomes [`verify_exactly_once`] asserts: only "every
/// callback ran exactly once" is checked; lost acknowledged records and duplicates are counted
/// (by record id, reading the table back from the leaders).
pub fn count_stored(conn: &Connection, info: &TableInfo, written: i64, outcomes: &Outcomes) -> Tally {
    let outcomes = outcomes.lock().unwrap().clone();
    assert_eq!(outcomes.len() as i64, written);
    let mut by_code: BTreeMap<i32, usize> = BTreeMap::new();
    for (id, o) in outcomes.iter().enumerate() {
        assert_eq!(o.0, 1, "the callback of record {id} ran {} times", o.0);
        *by_code.entry(o.1).or_default() += 1;
    }
    let mut count = vec![0u32; written as usize];
    for rec in read_log(conn, info) {
        let Value::BigInt(id) = rec.row[0] else { panic!("{rec:?}") };
        count[id as usize] += 1;
        assert_eq!(rec.row[1], Value::String(format!("record {id}")));
    }
    Tally {
        written,
        acked: outcomes.iter().filter(|o| o.1 == 0).count(),
        by_code,
        lost_acked: outcomes.iter().zip(&count).filter(|(o, &n)| o.1 == 0 && n == 0).count(),
        stored_twice: count.iter().filter(|&&n| n > 1).count(),
        failed_but_stored: outcomes.iter().zip(&count).filter(|(o, &n)| o.1 != 0 && n > 0).count(),
    }
}
