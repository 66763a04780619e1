//! Contract C9, C11, C12 (docs/callback-contract.md), bad input (distinct error codes, no callback), and
//! durability of `embedded:<dir>` (reopen, killed process).

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema};
use common::*;
use fluss_writer::{
    row, CallbackExecutor, ClientCode, Connection, Executor, FlussCode, Job, TablePath, UserExecutor, Value, WriterOptions,
};

fn code(c: ClientCode) -> i32 {
    c as i32
}

fn arrow_batch(ids: &[i64]) -> RecordBatch {
    let schema = Arc::new(ArrowSchema::new(vec![Field::new("id", ArrowType::Int64, false), Field::new("msg", ArrowType::Utf8, true)]));
    let msgs: Vec<String> = ids.iter().map(|i| format!("m{i}")).collect();
    RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(ids.to_vec())), Arc::new(StringArray::from(msgs))]).unwrap()
}

// ===== C9 executors =====

#[test]
fn c9_sharded_keeps_per_bucket_order_and_runs_buckets_in_parallel_threads() {
    let conn = connect(&[("client.writer.batch-size", "1kb"), ("client.writer.batch-timeout", "1ms")]);
    let path = log_table(&conn, "c9_sharded", 8);
    let w = append_writer(&conn, &path, WriterOptions::default().executor(CallbackExecutor::Sharded(4)));
    let rec = Recorder::new();
    for i in 0..2000i64 {
        w.append_with_callback(&row![i, "x"], rec.cb(i)).unwrap();
    }
    w.flush(None).unwrap();
    rec.assert_exactly_once(0..2000);
    let all = rec.all();
    assert_per_bucket_order(&all);
    let mut thread_of_bucket: HashMap<i32, std::thread::ThreadId> = HashMap::new();
    let mut names = HashSet::new();
    for s in &all {
        let t = *thread_of_bucket.entry(s.completion.bucket).or_insert(s.thread);
        assert_eq!(t, s.thread, "one bucket always runs on the same shard");
        let name = s.thread_name.clone().unwrap_or_default();
        assert!(name.starts_with("fluss-writer-cb-"), "{name}");
        names.insert(name);
    }
    let threads: HashSet<_> = thread_of_bucket.values().collect();
    assert!(threads.len() >= 2, "8 buckets over 4 shards use more than one thread: {names:?}");
}

struct ThreadExecutor {
    tx: Mutex<std::sync::mpsc::Sender<Job>>,
    jobs: AtomicUsize,
}

impl UserExecutor for ThreadExecutor {
    fn execute(&self, job: Job) {
        self.jobs.fetch_add(1, Ordering::SeqCst);
        self.tx.lock().unwrap().send(job).unwrap();
    }
}

fn thread_executor() -> Arc<ThreadExecutor> {
    let (tx, rx) = std::sync::mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("my-executor".into())
        .spawn(move || {
            for job in rx {
                job.run();
            }
        })
        .unwrap();
    Arc::new(ThreadExecutor { tx: Mutex::new(tx), jobs: AtomicUsize::new(0) })
}

#[test]
fn c9_user_executor_gets_one_job_per_batch_and_runs_them_on_its_thread() {
    let conn = connect(&[("client.writer.batch-timeout", "10s")]);
    let path = log_table(&conn, "c9_user", 4);
    let ex = thread_executor();
    let w = append_writer(&conn, &path, WriterOptions::default().executor(CallbackExecutor::User(ex.clone())));
    let rec = Recorder::new();
    for i in 0..1000i64 {
        w.append_with_callback(&row![i, "x"], rec.cb(i)).unwrap();
    }
    w.flush(None).unwrap();
    rec.assert_exactly_once(0..1000);
    let jobs = ex.jobs.load(Ordering::SeqCst);
    assert!((1..=4).contains(&jobs), "one job per completed batch (4 buckets, one batch each), got {jobs}");
    assert!(rec.all().iter().all(|s| s.thread_name.as_deref() == Some("my-executor")));
    assert_per_bucket_order(&rec.all());
}

#[test]
fn c9_executor_is_chosen_per_writer() {
    let conn = connect(&[]);
    let path = log_table(&conn, "c9_choice", 2);
    let mine = Executor::fifo("my-fifo", None);
    let w1 = append_writer(&conn, &path, WriterOptions::default());
    let w2 = append_writer(&conn, &path, WriterOptions::default().executor(CallbackExecutor::Shared(mine.clone())));
    let w3 = append_writer(&conn, &path, WriterOptions::default().executor(CallbackExecutor::Shared(mine)));
    let (r1, r2) = (Recorder::new(), Recorder::new());
    for i in 0..50i64 {
        w1.append_with_callback(&row![i, "a"], r1.cb(i)).unwrap();
        w2.append_with_callback(&row![i, "b"], r2.cb(i)).unwrap();
        w3.append_with_callback(&row![i, "c"], r2.cb(100 + i)).unwrap();
    }
    for w in [&w1, &w2, &w3] {
        w.flush(None).unwrap();
    }
    assert!(r1.all().iter().all(|s| s.thread_name.as_deref() == Some("fluss-writer-callbacks")));
    assert!(r2.all().iter().all(|s| s.thread_name.as_deref() == Some("my-fifo")));
    assert_eq!(r2.len(), 100);
}

// ===== C11 Arrow batches =====

#[test]
fn c11_bad_arrow_batch_is_rejected_synchronously_and_nothing_is_accepted() {
    let conn = connect(&[]);
    let path = log_table(&conn, "c11_bad", 2);
    let w = append_writer(&conn, &path, WriterOptions::default());
    // id column as strings.
    let schema = Arc::new(ArrowSchema::new(vec![Field::new("id", ArrowType::Utf8, false), Field::new("msg", ArrowType::Utf8, true)]));
    let bad = RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(vec!["1", "2"])), Arc::new(StringArray::from(vec!["a", "b"]))])
        .unwrap();
    let (f, dropped) = drop_flag();
    let called = Arc::new(AtomicUsize::new(0));
    let c2 = called.clone();
    let e = w
        .write_arrow_batch_with_callback(&bad, move |_| {
            let _f = &f;
            c2.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap_err();
    assert_eq!(e.code(), code(ClientCode::InvalidRow));
    assert!(dropped.load(Ordering::SeqCst));
    // Null in the NOT NULL id column.
    let schema = Arc::new(ArrowSchema::new(vec![Field::new("id", ArrowType::Int64, true), Field::new("msg", ArrowType::Utf8, true)]));
    let nulls =
        RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![Some(1), None])), Arc::new(StringArray::from(vec!["a", "b"]))])
            .unwrap();
    let c3 = called.clone();
    assert_eq!(
        w.write_arrow_batch_with_callback(&nulls, move |_| {
            c3.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap_err()
        .code(),
        code(ClientCode::InvalidRow)
    );
    assert_eq!(w.stats().pending_callbacks, 0, "nothing admitted");
    w.flush(None).unwrap();
    assert_eq!(called.load(Ordering::SeqCst), 0);
    for b in 0..2 {
        assert_eq!(engine(&conn).high_watermark(&path, b).unwrap(), 0);
    }
}

#[test]
fn c11_one_callback_after_all_groups_completed() {
    let conn = connect(&[]);
    let path = log_table(&conn, "c11_join", 4);
    engine(&conn).faults().inject(&path, 3, delay(300, 1));
    let w = append_writer(&conn, &path, WriterOptions::default());
    let ids: Vec<i64> = (0..400).collect();
    let per_bucket: Vec<i64> = (0..4).map(|b| ids.iter().filter(|&&i| bucket_of(i, 4) == b).count() as i64).collect();
    let seen_hw = Arc::new(Mutex::new(Vec::new()));
    let (count, hw, conn2, p2) = (Arc::new(AtomicUsize::new(0)), seen_hw.clone(), conn.clone(), path.clone());
    let c2 = count.clone();
    w.write_arrow_batch_with_callback(&arrow_batch(&ids), move |c| {
        c2.fetch_add(1, Ordering::SeqCst);
        assert!(c.is_ok());
        *hw.lock().unwrap() = (0..4).map(|b| engine(&conn2).high_watermark(&p2, b).unwrap()).collect();
        assert_eq!(c.bucket_results.len(), 4);
    })
    .unwrap();
    w.flush(None).unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 1, "one callback for the whole batch");
    assert_eq!(*seen_hw.lock().unwrap(), per_bucket, "it ran after every group was written");
}

// ===== C12 cost =====

#[test]
fn c12_one_job_per_batch_not_per_record() {
    let conn = connect(&[("client.writer.batch-timeout", "10s")]);
    let path = log_table(&conn, "c12_jobs", 4);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let before = conn.executor().stats();
    for i in 0..2000i64 {
        w.append_with_callback(&row![i, "x"], |c| assert!(c.is_ok())).unwrap();
    }
    w.flush(None).unwrap();
    let after = conn.executor().stats();
    let jobs = after.jobs_run - before.jobs_run;
    let callbacks = after.callbacks_run - before.callbacks_run;
    assert_eq!(callbacks, 2000);
    assert!(jobs <= 4, "one job per batch (4 buckets, one batch each), got {jobs} jobs for {callbacks} callbacks");
}

#[test]
fn c12_bytes_per_pending_callback_are_small_and_fixed() {
    let entry = fluss_writer::PENDING_ENTRY_BYTES;
    println!("bytes per pending callback entry (beyond the user's callable, inline up to 24 bytes): {entry}");
    assert!(entry <= 64, "a pending callback costs {entry} bytes");
    let callable_box = std::mem::size_of::<fluss_writer::write::Callback>();
    println!("inline callable holder: {callable_box} bytes");
    assert!(callable_box <= 40);
}

// ===== bad input: distinct codes, nothing accepted, no callback =====

#[test]
fn bad_input_gets_distinct_synchronous_errors_and_no_callback() {
    let conn = connect(&[("client.writer.batch-size", "1kb")]);
    let path = log_table(&conn, "bad_input", 1);
    let pk = pk_table(&conn, "bad_input_pk", 1);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let u = upsert_writer(&conn, &pk, WriterOptions::default());
    let called = Arc::new(AtomicUsize::new(0));
    let cb = || {
        let c = called.clone();
        move |_: &fluss_writer::WriteCompletion| {
            c.fetch_add(1, Ordering::SeqCst);
        }
    };
    let invalid = code(ClientCode::InvalidRow);
    assert_eq!(w.append_with_callback(&row![1i32, "x"], cb()).unwrap_err().code(), invalid, "wrong type");
    assert_eq!(w.append_with_callback(&row![1i64], cb()).unwrap_err().code(), invalid, "too few fields");
    assert_eq!(w.append_with_callback(&row![1i64, "x", "y"], cb()).unwrap_err().code(), invalid, "too many fields");
    assert_eq!(w.append_with_callback(&row![Value::Null, "x"], cb()).unwrap_err().code(), invalid, "null in NOT NULL");
    assert_eq!(u.upsert_with_callback(&row![Value::Null, "x", 1i64], cb()).unwrap_err().code(), invalid, "null key");
    assert_eq!(u.upsert_with_callback(&row![1i64, 2i64, 1i64], cb()).unwrap_err().code(), invalid, "wrong type (pk)");
    assert_eq!(u.delete_with_callback(&[Value::BigInt(1), Value::BigInt(2)], cb()).unwrap_err().code(), invalid, "key width");
    let too_large = w.append_with_callback(&row![1i64, "x".repeat(5000)], cb()).unwrap_err();
    assert_eq!(too_large.code(), code(ClientCode::RecordTooLarge));
    let missing = conn.get_table(&TablePath::new("fluss", "no_such_table").unwrap()).err().expect("missing table");
    assert_eq!(missing.code(), FlussCode::TABLE_NOT_EXIST);
    assert!(!missing.is_retriable());
    let wrong_kind = conn.get_table(&path).unwrap().new_upsert().err().expect("a log table has no upsert writer");
    assert_eq!(wrong_kind.code(), code(ClientCode::Unsupported));
    w.close(None).unwrap();
    let closed = w.append_with_callback(&row![1i64, "x"], cb()).unwrap_err();
    assert_eq!(closed.code(), code(ClientCode::WriterClosed));
    conn.close(None).unwrap();
    let conn_closed = u.upsert_with_callback(&row![1i64, "x", 1i64], cb()).unwrap_err();
    assert!(
        conn_closed.code() == code(ClientCode::ConnectionClosed) || conn_closed.code() == code(ClientCode::WriterClosed),
        "{conn_closed:?}"
    );
    let codes: HashSet<i32> =
        [invalid, too_large.code(), missing.code(), wrong_kind.code(), closed.code(), code(ClientCode::ConnectionClosed)].into();
    assert_eq!(codes.len(), 6, "distinct causes have distinct codes");
    assert_eq!(called.load(Ordering::SeqCst), 0, "no callback for a rejected submission");
    assert_eq!(engine(&conn).high_watermark(&path, 0).unwrap(), 0);
}

// ===== durability =====

#[test]
fn durable_dir_survives_close_and_reopen() {
    let dir = TempDir::new("reopen");
    {
        let conn = connect_at(&dir.location(), &[]);
        let path = log_table(&conn, "events", 2);
        let pk = pk_table(&conn, "users", 2);
        let w = append_writer(&conn, &path, WriterOptions::default());
        let u = upsert_writer(&conn, &pk, WriterOptions::default());
        for i in 0..300i64 {
            w.append_detached(&row![i, "x"]).unwrap();
            u.upsert_detached(&row![i % 50, format!("n{i}"), i]).unwrap();
        }
        w.close(None).unwrap();
        u.close(None).unwrap();
        conn.close(None).unwrap();
    }
    let conn = connect_at(&dir.location(), &[]);
    let path = TablePath::new("fluss", "events").unwrap();
    assert_eq!(all_ids(&conn, &path, 2), (0..300).collect::<Vec<_>>());
    let pk = TablePath::new("fluss", "users").unwrap();
    assert_eq!(engine(&conn).lookup(&pk, &[Value::BigInt(7)]).unwrap(), Some(row![7i64, "n257", 257i64]));
    assert_eq!(engine(&conn).kv_len(&pk).unwrap(), 50);
    // And it keeps accepting writes after the reopen.
    let w = append_writer(&conn, &path, WriterOptions::default());
    w.append(&row![300i64, "after"]).unwrap().wait(Some(Duration::from_secs(5))).unwrap().result().unwrap();
}

const KILL_ENV: &str = "FLUSS_CONTRACT_KILL_CHILD";

/// Child half of `durable_acknowledged_writes_survive_a_killed_process`: only active when the
/// parent sets the variable. Writes, waits for the acknowledgements, reports them, keeps
/// writing, and aborts without closing anything.
#[test]
fn durable_kill_child() {
    let Ok(loc) = std::env::var(KILL_ENV) else {
        return;
    };
    let conn = Connection::open(&loc).unwrap();
    let path = log_table(&conn, "events", 3);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let acked = Arc::new(Mutex::new(Vec::new()));
    for i in 0..500i64 {
        let a = acked.clone();
        w.append_with_callback(&row![i, "x"], move |c| {
            if c.is_ok() {
                a.lock().unwrap().push(i);
            }
        })
        .unwrap();
    }
    w.flush(None).unwrap();
    let acked = acked.lock().unwrap().clone();
    println!("ACKED {}", acked.iter().map(i64::to_string).collect::<Vec<_>>().join(","));
    for i in 500..1000i64 {
        let _ = w.append_detached(&row![i, "unacked"]);
    }
    std::process::abort();
}

#[test]
fn durable_acknowledged_writes_survive_a_killed_process() {
    let dir = TempDir::new("kill");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "durable_kill_child", "--nocapture", "--test-threads=1"])
        .env(KILL_ENV, dir.location())
        .output()
        .unwrap();
    assert!(!out.status.success(), "the child must have aborted");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().find_map(|l| l.find("ACKED ").map(|at| &l[at + 6..])).expect("the child reported its acknowledged writes");
    let acked: Vec<i64> = line.split(',').map(|x| x.parse().unwrap()).collect();
    assert_eq!(acked.len(), 500);
    let conn = connect_at(&dir.location(), &[]);
    let path = TablePath::new("fluss", "events").unwrap();
    let ids = all_ids(&conn, &path, 3);
    let present: HashSet<i64> = ids.iter().copied().collect();
    assert_eq!(present.len(), ids.len(), "no duplicates");
    for id in &acked {
        assert!(present.contains(id), "acknowledged record {id} was lost");
    }
    assert!(ids.iter().all(|&i| (0..1000).contains(&i)));
}
