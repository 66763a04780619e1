//! Regression tests of the core rules behind issue 11 ("hardening"): each of these inputs once
//! lost data, panicked, or was silently changed. The bindings test the same rules through their
//! own APIs (tests-py, tests-cpp); these hold the rules where they live.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema};
use common::*;
use fluss_writer::{interrupt, CallbackExecutor, ClientCode, Config, Connection, Job, UserExecutor, WriterOptions};

fn batch(ids: Vec<i64>, msgs: Vec<String>, extra: Option<(&str, ArrayRef)>) -> RecordBatch {
    let mut fields = vec![Field::new("id", ArrowType::Int64, false), Field::new("msg", ArrowType::Utf8, true)];
    let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(ids)), Arc::new(StringArray::from(msgs))];
    if let Some((name, col)) = extra {
        fields.push(Field::new(name, col.data_type().clone(), true));
        cols.push(col);
    }
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), cols).unwrap()
}

// ----- defect 3: a column the table lacks -----

#[test]
fn arrow_batch_with_an_unknown_column_is_rejected_naming_it_and_writes_nothing() {
    let conn = connect(&[]);
    let path = log_table(&conn, "unknown_col", 2);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let extra: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
    let e = w.write_arrow_batch(&batch(vec![1, 2], vec!["a".into(), "b".into()], Some(("surprise", extra)))).unwrap_err();
    assert_eq!(e.code(), ClientCode::InvalidRow as i32);
    assert!(e.message().contains("unknown column \"surprise\""), "{}", e.message());
    w.flush(None).unwrap();
    assert!(all_ids(&conn, &path, 2).is_empty(), "nothing of the batch was written");
    assert_eq!(w.stats().pending_callbacks, 0);
}

// ----- defect 8: per-row sizes decide the split -----

#[test]
fn one_oversized_row_in_an_arrow_batch_rejects_the_whole_call() {
    let conn = connect(&[("client.writer.batch-size", "64kb")]);
    let path = log_table(&conn, "oversized_row", 2);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let mut msgs: Vec<String> = (0..1000).map(|i| format!("row {i}")).collect();
    msgs[500] = "x".repeat(100 * 1024);
    let e = w.write_arrow_batch(&batch((0..1000).collect(), msgs, None)).unwrap_err();
    assert_eq!(e.code(), ClientCode::RecordTooLarge as i32, "{e}");
    assert!(e.message().contains("row 500"), "{}", e.message());
    w.flush(None).unwrap();
    assert!(all_ids(&conn, &path, 2).is_empty(), "nothing of the batch was written");
    assert_eq!(w.stats().buffer_bytes_in_use, 0);
}

#[test]
fn skewed_rows_are_split_so_that_no_chunk_exceeds_the_batch_size() {
    let conn = connect(&[("client.writer.batch-size", "64kb")]);
    let path = log_table(&conn, "skewed_rows", 1);
    let w = append_writer(&conn, &path, WriterOptions::default());
    // 40 rows of 40 KB each after 960 tiny ones: the average (~1.6 KB) would put ~40 rows,
    // 1.6 MB, into one "64 KB" chunk.
    let msgs: Vec<String> = (0..1000).map(|i| if i >= 960 { "y".repeat(40 * 1024) } else { "s".into() }).collect();
    let res = w.write_arrow_batch(&batch((0..1000).collect(), msgs.clone(), None)).unwrap();
    let done = res.wait(Some(Duration::from_secs(20))).unwrap();
    assert!(done.error.is_none(), "{:?}", done.error);
    assert_eq!(all_ids(&conn, &path, 1), (0..1000).collect::<Vec<i64>>());
    let batches = engine(&conn).stats().batches_accepted;
    // Each 40 KB row needs a chunk of its own (two do not fit in 64 KB): at least 40 batches,
    // where splitting by the average row (~1.6 KB) made 25 chunks of 40 rows (~1.6 MB each).
    assert!(batches >= 40, "{batches} log batches for 40 rows of 40 KB in 64 KB batches");
}

// ----- defect 6: no input makes the core panic -----

#[test]
fn huge_config_durations_are_invalid_config_not_panics() {
    for v in ["100000000000000000000000s", "9223372036854775807s", "18446744073709551615ms"] {
        for key in ["client.request-timeout", "client.writer.delivery-timeout", "client.writer.batch-timeout"] {
            let e = Config::from_pairs([(key, v)]).unwrap_err();
            assert_eq!(e.code(), ClientCode::InvalidConfig as i32, "{key} = {v}");
        }
    }
}

#[test]
fn unbounded_timeouts_in_every_blocking_call_do_not_panic() {
    let conn = connect(&[]);
    let path = log_table(&conn, "max_timeouts", 1);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let r = w.append(&fluss_writer::row![1i64, "a"]).unwrap();
    w.flush(Some(Duration::MAX)).unwrap();
    assert!(r.wait(Some(Duration::MAX)).unwrap().error.is_none());
    w.close(Some(Duration::MAX)).unwrap();
    conn.close(Some(Duration::MAX)).unwrap();
}

// ----- defect 11 and the executor bound -----

#[test]
fn writer_options_out_of_range_are_invalid_config() {
    let conn = connect(&[]);
    let path = log_table(&conn, "bad_options", 1);
    let table = conn.get_table(&path).unwrap();
    let cases = [
        WriterOptions::default().max_pending_callbacks(0),
        WriterOptions::default().max_pending_callbacks(fluss_writer::MAX_PENDING_CALLBACKS + 1),
        WriterOptions::default().executor(CallbackExecutor::Sharded(0)),
        WriterOptions::default().executor(CallbackExecutor::Sharded(fluss_writer::MAX_CALLBACK_SHARDS + 1)),
        WriterOptions::default().executor(CallbackExecutor::Sharded(1_000_000)),
    ];
    for opts in cases {
        let what = format!("{opts:?}");
        let Err(e) = table.new_append().unwrap().create_writer(opts) else { panic!("{what} was accepted") };
        assert_eq!(e.code(), ClientCode::InvalidConfig as i32, "{what}");
    }
    let ok = table.new_append().unwrap().create_writer(WriterOptions::default().executor(CallbackExecutor::Sharded(64)));
    assert!(ok.is_ok());
}

// ----- defect 9: dropped jobs are counted -----

/// A user executor that drops every job it is given (a pool that was shut down).
struct Discarding(AtomicUsize);

impl UserExecutor for Discarding {
    fn execute(&self, job: Job) {
        self.0.fetch_add(1, Ordering::SeqCst);
        drop(job);
    }
}

#[test]
fn jobs_a_user_executor_drops_are_counted_and_reported() {
    let conn = connect(&[]);
    let path = log_table(&conn, "dropped_jobs", 1);
    let reported = Arc::new(Mutex::new(Vec::new()));
    let r2 = reported.clone();
    let exec = Arc::new(Discarding(AtomicUsize::new(0)));
    let opts = WriterOptions::default()
        .executor(CallbackExecutor::User(exec.clone()))
        .error_handler(move |e| r2.lock().unwrap().push(e.message.clone()));
    let w = append_writer(&conn, &path, opts);
    let ran = Arc::new(AtomicBool::new(false));
    for i in 0..3 {
        let ran = ran.clone();
        w.append_with_callback(&fluss_writer::row![i as i64, "x"], move |_| ran.store(true, Ordering::SeqCst)).unwrap();
        w.flush(None).unwrap();
    }
    let st = w.stats();
    let jobs = exec.0.load(Ordering::SeqCst) as u64;
    assert_eq!(jobs, 3, "one job per flushed batch");
    assert_eq!(st.jobs_dropped, jobs);
    assert_eq!(st.callback_errors, jobs, "each dropped job is an error reported to the handler");
    assert_eq!(reported.lock().unwrap().len() as u64, jobs);
    assert_eq!(st.pending_callbacks, 0);
    assert!(!ran.load(Ordering::SeqCst));
}

// ----- defect 4: interruptible waits -----

#[test]
fn an_installed_interrupt_check_ends_a_blocked_flush_and_admission_promptly() {
    let conn = connect(&[("client.writer.delivery-timeout", "60s")]);
    let path = log_table(&conn, "interrupt", 1);
    let w = append_writer(&conn, &path, WriterOptions::default().max_pending_callbacks(1));
    // The answer is held 5 s; the interrupt comes after 0.3 s and must end the flush within
    // 2.5 s (slack for a busy machine), long before the answer.
    engine(&conn).faults().inject(&path, 0, delay(5_000, 1));
    let seen = Recorder::new();
    w.append_with_callback(&fluss_writer::row![1i64, "slow"], seen.cb(1)).unwrap();
    let stop = AtomicBool::new(false);
    let calls = AtomicUsize::new(0);
    let check = || {
        calls.fetch_add(1, Ordering::SeqCst);
        stop.load(Ordering::SeqCst)
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            stop.store(true, Ordering::SeqCst);
        });
        let t = Instant::now();
        let e = interrupt::with_check(&check, || w.flush(None)).unwrap_err();
        assert_eq!(e.code(), ClientCode::Interrupted as i32, "{e}");
        let took = t.elapsed();
        assert!(took < Duration::from_millis(2_500), "interrupted after {took:?}");
    });
    assert!(calls.load(Ordering::SeqCst) >= 2, "the check ran while the flush waited");
    // The only slot is taken: an append waits for it and is interrupted, accepting nothing.
    let t = Instant::now();
    let never = Recorder::new();
    let e = interrupt::with_check(&|| true, || w.append_with_callback(&fluss_writer::row![2i64, "no"], never.cb(2))).unwrap_err();
    assert_eq!(e.code(), ClientCode::Interrupted as i32, "{e}");
    assert!(t.elapsed() < Duration::from_millis(2_500));
    // Nothing was lost or duplicated: the first operation completes exactly once.
    w.flush(None).unwrap();
    seen.assert_exactly_once([1]);
    assert_eq!(never.len(), 0);
    assert_eq!(all_ids(&conn, &path, 1), vec![1]);
    // Without a check the same calls never consult one.
    assert!(!interrupt::installed());
}

// ----- defect 7: a forked child never keeps the directory locked -----

#[cfg(target_os = "linux")]
#[test]
fn a_forked_child_does_not_keep_the_embedded_directory_locked() {
    let dir = TempDir::new("fork-lock");
    let conn = Connection::open(&dir.location()).unwrap();
    let lock_path = std::ffi::CString::new(dir.0.join("LOCK").to_str().unwrap()).unwrap();
    // SAFETY: the child makes only async-signal-safe calls (readlink, open, close, _exit, nanosleep).
    let child = unsafe { libc::fork() };
    assert!(child >= 0, "fork failed");
    if child == 0 {
        // Child: no descriptor of ours may still refer to the LOCK file.
        let mut code = 0;
        for fd in 0..1024u32 {
            // "/proc/self/fd/<fd>\0" built on the stack: no allocation after fork().
            let mut link = *b"/proc/self/fd/\0\0\0\0\0";
            let (mut digits, mut n, mut len) = ([0u8; 4], fd, 0);
            loop {
                digits[len] = b'0' + (n % 10) as u8;
                len += 1;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            for i in 0..len {
                link[14 + i] = digits[len - 1 - i];
            }
            let mut buf = [0u8; 512];
            let n = unsafe { libc::readlink(link.as_ptr().cast(), buf.as_mut_ptr().cast(), buf.len()) };
            if n > 0 && buf[..n as usize] == *lock_path.as_bytes() {
                code = 3;
            }
        }
        unsafe {
            libc::sleep(2);
            libc::_exit(code);
        }
    }
    // Parent: close while the child lives, then reopen at once.
    conn.close(None).unwrap();
    drop(conn);
    let t = Instant::now();
    let again = Connection::open(&dir.location());
    let reopen = t.elapsed();
    let mut status = 0;
    unsafe { libc::waitpid(child, &mut status, 0) };
    assert!(again.is_ok(), "reopening failed while the child lived: {:?}", again.err());
    // Well below the child's 2 s: the reopen did not wait for the child to exit.
    assert!(reopen < Duration::from_millis(1_500), "{reopen:?}");
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child still had the LOCK file open (status {status})");
}

// ----- an interrupt check that takes the binding's lock (Python: the GIL) -----

/// The worker takes a "GIL" around every group of jobs (as the Python binding's hooks do) while
/// the waiting thread's interrupt check takes the same lock. The check used to run under the
/// locks of the wait (the result's cell, the flush barrier, the buffer queue), which the worker
/// takes while holding the GIL: both threads then waited on each other forever. Every wait must
/// run the check with its own lock released.
#[test]
fn an_interrupt_check_taking_the_workers_lock_never_deadlocks_a_wait() {
    struct GilHooks(Arc<Mutex<()>>);
    impl fluss_writer::WorkerHooks for GilHooks {
        fn around_group(&self, run: &mut dyn FnMut()) {
            let _gil = self.0.lock().unwrap_or_else(|p| p.into_inner());
            // Hold it a while before running the group (as slow Python callbacks would): a wait
            // that wakes in this window and runs its check under a lock the job needs deadlocks.
            std::thread::sleep(Duration::from_millis(50));
            run();
        }
    }
    let gil = Arc::new(Mutex::new(()));
    let (tx, rx) = std::sync::mpsc::channel();
    let g = gil.clone();
    std::thread::spawn(move || {
        let mut c = Config::default();
        c.set("bootstrap.servers", "embedded").unwrap();
        // Batches linger longer than one check interval, so each wait runs the check.
        c.set("client.writer.batch-timeout", "150ms").unwrap();
        let conn =
            Connection::connect_with(c, fluss_writer::ConnectOptions::default().with_worker_hooks(Arc::new(GilHooks(g.clone())))).unwrap();
        let path = log_table(&conn, "gil_check", 2);
        let w = append_writer(&conn, &path, WriterOptions::default());
        // Like Python's check: take the "GIL" (and run no handler).
        let check = || {
            let _gil = g.lock().unwrap_or_else(|p| p.into_inner());
            false
        };
        let t0 = Instant::now();
        let mut waits = 0;
        while t0.elapsed() < Duration::from_secs(4) {
            let results: Vec<_> = (0..20).map(|i| w.append(&fluss_writer::row![i as i64, "x"]).unwrap()).collect();
            interrupt::with_check(&check, || {
                for r in &results {
                    assert!(r.wait(Some(Duration::from_secs(20))).unwrap().is_ok());
                    waits += 1;
                }
                w.flush(Some(Duration::from_secs(20))).unwrap();
            });
        }
        w.close(None).unwrap();
        conn.close(None).unwrap();
        let _ = tx.send(waits);
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(waits) => assert!(waits > 0),
        Err(_) => panic!("a wait with an interrupt check that takes the worker's lock deadlocked"),
    }
}
