//! Shared helpers of the contract and property tests (C1-C12 of docs/callback-contract.md).
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fluss_writer::embedded::{EmbeddedEngine, Fault};
use fluss_writer::wire::{bucket_for_key, encode_key};
use fluss_writer::{
    row, AppendWriter, Config, Connection, DataType, Schema, TableDescriptor, TablePath, UpsertWriter, Value, WriteCompletion,
    WriterOptions,
};

/// Defaults for tests: short linger and backoff, bounded delivery timeout.
pub const BASE: &[(&str, &str)] =
    &[("client.writer.batch-timeout", "5ms"), ("client.writer.retry-backoff", "5ms"), ("client.writer.delivery-timeout", "8s")];

/// An in-memory embedded connection with [`BASE`] overridden by `extra`.
pub fn connect(extra: &[(&str, &str)]) -> Connection {
    connect_at("embedded", extra)
}

pub fn connect_at(bootstrap: &str, extra: &[(&str, &str)]) -> Connection {
    let mut c = Config::default();
    c.set("bootstrap.servers", bootstrap).unwrap();
    for (k, v) in BASE.iter().chain(extra) {
        c.set(k, v).unwrap();
    }
    c.validate().unwrap();
    Connection::connect(c).unwrap()
}

pub fn engine(conn: &Connection) -> &Arc<EmbeddedEngine> {
    conn.embedded().expect("embedded connection")
}

pub fn log_schema() -> Schema {
    Schema::builder().column_not_null("id", DataType::BigInt).column("msg", DataType::String).build().unwrap()
}

pub fn pk_schema() -> Schema {
    Schema::builder()
        .column_not_null("id", DataType::BigInt)
        .column("name", DataType::String)
        .column("age", DataType::BigInt)
        .primary_key(["id"])
        .build()
        .unwrap()
}

/// A log table `(id BIGINT NOT NULL, msg STRING)` bucketed by `id`.
pub fn log_table(conn: &Connection, name: &str, buckets: i32) -> TablePath {
    let path = TablePath::new("fluss", name).unwrap();
    conn.admin()
        .create_table(&path, &TableDescriptor::new(log_schema()).with_bucket_count(buckets).with_bucket_key(["id"]), false)
        .unwrap();
    path
}

/// A primary-key table `(id BIGINT NOT NULL PK, name STRING, age BIGINT)`.
pub fn pk_table(conn: &Connection, name: &str, buckets: i32) -> TablePath {
    let path = TablePath::new("fluss", name).unwrap();
    conn.admin().create_table(&path, &TableDescriptor::new(pk_schema()).with_bucket_count(buckets), false).unwrap();
    path
}

pub fn append_writer(conn: &Connection, path: &TablePath, opts: WriterOptions) -> AppendWriter {
    conn.get_table(path).unwrap().new_append().unwrap().create_writer(opts).unwrap()
}

pub fn upsert_writer(conn: &Connection, path: &TablePath, opts: WriterOptions) -> UpsertWriter {
    conn.get_table(path).unwrap().new_upsert().unwrap().create_writer(opts).unwrap()
}

/// The bucket of `id` in a table bucketed by its first BIGINT column (both schemas above).
pub fn bucket_of(id: i64, buckets: i32) -> i32 {
    let schema = log_schema();
    let mut key = Vec::new();
    encode_key(&schema, &[0], &row![id, Value::Null], &mut key).unwrap();
    bucket_for_key(&key, buckets)
}

/// `count` ids, starting the search at `from`, that land in `bucket`.
pub fn ids_in_bucket(bucket: i32, buckets: i32, count: usize, from: i64) -> Vec<i64> {
    (from..).filter(|&i| bucket_of(i, buckets) == bucket).take(count).collect()
}

pub fn id_of(row: &[Value]) -> i64 {
    match row[0] {
        Value::BigInt(x) => x,
        ref v => panic!("not a BIGINT id: {v:?}"),
    }
}

/// (offset, id) of every row of a log bucket, in offset order.
pub fn scan_ids(conn: &Connection, path: &TablePath, bucket: i32) -> Vec<(i64, i64)> {
    engine(conn).scan(path, bucket, 0).unwrap().iter().map(|r| (r.offset, id_of(&r.row))).collect()
}

pub fn all_ids(conn: &Connection, path: &TablePath, buckets: i32) -> Vec<i64> {
    let mut v: Vec<i64> = (0..buckets).flat_map(|b| scan_ids(conn, path, b).into_iter().map(|x| x.1)).collect();
    v.sort_unstable();
    v
}

pub fn err(code: i32, message: &str, times: u32) -> Fault {
    Fault::Error { code, message: message.into(), times }
}

pub fn delay(ms: u64, times: u32) -> Fault {
    Fault::Delay { delay: Duration::from_millis(ms), times }
}

/// What a callback saw.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The test's tag of the operation (usually its submission index).
    pub tag: i64,
    pub completion: WriteCompletion,
    pub thread: std::thread::ThreadId,
    pub thread_name: Option<String>,
}

/// Records every callback invocation in invocation order.
#[derive(Clone, Default)]
pub struct Recorder {
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder::default()
    }

    /// A callback that records `tag`.
    pub fn cb(&self, tag: i64) -> impl FnOnce(&WriteCompletion) + Send + 'static {
        let seen = self.seen.clone();
        move |c: &WriteCompletion| {
            let t = std::thread::current();
            seen.lock().unwrap().push(Seen { tag, completion: c.clone(), thread: t.id(), thread_name: t.name().map(str::to_string) });
        }
    }

    pub fn all(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    pub fn len(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// Every tag in `tags` was seen exactly once and nothing else was seen.
    pub fn assert_exactly_once(&self, tags: impl IntoIterator<Item = i64>) {
        let mut expected: Vec<i64> = tags.into_iter().collect();
        expected.sort_unstable();
        let mut got: Vec<i64> = self.all().iter().map(|s| s.tag).collect();
        got.sort_unstable();
        assert_eq!(got, expected, "every accepted operation's callback must run exactly once");
    }

    pub fn get(&self, tag: i64) -> Seen {
        let all = self.all();
        let mut it = all.iter().filter(|s| s.tag == tag);
        let s = it.next().unwrap_or_else(|| panic!("no callback for {tag}")).clone();
        assert!(it.next().is_none(), "callback for {tag} ran more than once");
        s
    }
}

/// Sets its flag when dropped (to see that captures were destroyed).
pub struct DropFlag(pub Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

pub fn drop_flag() -> (DropFlag, Arc<AtomicBool>) {
    let f = Arc::new(AtomicBool::new(false));
    (DropFlag(f.clone()), f)
}

/// Poll `cond` every millisecond until it holds; panic after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + timeout;
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A gate a callback can wait on (to make a slow callback on purpose).
#[derive(Clone, Default)]
pub struct Gate {
    inner: Arc<(Mutex<bool>, std::sync::Condvar)>,
    pub entered: Arc<AtomicUsize>,
}

impl Gate {
    pub fn new() -> Gate {
        Gate::default()
    }

    /// Block (at most 10 s) until opened.
    pub fn wait(&self) {
        self.entered.fetch_add(1, Ordering::SeqCst);
        let (m, cv) = &*self.inner;
        let g = m.lock().unwrap();
        let _g = cv.wait_timeout_while(g, Duration::from_secs(10), |open| !*open).unwrap();
    }

    pub fn open(&self) {
        let (m, cv) = &*self.inner;
        *m.lock().unwrap() = true;
        cv.notify_all();
    }

    pub fn entered(&self) -> usize {
        self.entered.load(Ordering::SeqCst)
    }
}

/// A directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!("fluss-contract-{}-{name}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_dir_all(&p);
        TempDir(p)
    }

    pub fn location(&self) -> String {
        format!("embedded:{}", self.0.display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Check per-bucket order of recorded callbacks: tags (submission indexes) and offsets increase
/// within every bucket, in invocation order.
pub fn assert_per_bucket_order(seen: &[Seen]) {
    let mut last: std::collections::HashMap<i32, (i64, i64)> = std::collections::HashMap::new();
    for s in seen {
        let b = s.completion.bucket;
        if let Some(&(tag, off)) = last.get(&b) {
            assert!(s.tag > tag, "bucket {b}: callback of op {} ran after op {tag} (submission order broken)", s.tag);
            if s.completion.offset >= 0 && off >= 0 {
                assert!(s.completion.offset > off, "bucket {b}: offset {} after {off}", s.completion.offset);
            }
        }
        let off = if s.completion.offset >= 0 { s.completion.offset } else { last.get(&b).map_or(-1, |x| x.1) };
        last.insert(b, (s.tag, off));
    }
}

/// How many panics this thread has had since the first call, caught or not: a process-wide panic
/// hook (installed once, keeping the previous one) counts them per thread. The witness of the
/// tests that feed untrusted bytes to decoders, since libFuzzer aborts even on a panic the code
/// under test catches.
pub fn panics_on_this_thread() -> u32 {
    use std::cell::Cell;
    thread_local!(static PANICS: Cell<u32> = const { Cell::new(0) });
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.with(|p| p.set(p.get() + 1));
            previous(info)
        }));
    });
    PANICS.with(|p| p.get())
}
