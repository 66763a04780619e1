//! Contract C5-C8 (docs/callback-contract.md): admission, flush, close, isolation.

mod common;

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema};
use common::*;
use fluss_writer::{row, AppendWriter, CallbackError, ClientCode, WriterOptions};

fn code(c: ClientCode) -> i32 {
    c as i32
}

// ===== C5 admission =====

#[test]
fn c5_capacity_exhausted_fails_synchronously_with_zero_wait() {
    let conn = connect(&[("client.writer.buffer.wait-timeout", "0")]);
    let path = log_table(&conn, "c5_cap0", 1);
    let w = append_writer(&conn, &path, WriterOptions::default().max_pending_callbacks(2));
    let gate = Gate::new();
    let g = gate.clone();
    w.append_with_callback(&row![1i64, "x"], move |_| g.wait()).unwrap();
    wait_until("slow callback entered", Duration::from_secs(5), || gate.entered() == 1);
    w.append_detached(&row![2i64, "x"]).unwrap();
    let start = Instant::now();
    let e = w.append_with_callback(&row![3i64, "x"], |_| panic!("rejected")).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(4), "0 means never block");
    assert_eq!(e.code(), code(ClientCode::CapacityExhausted));
    assert_ne!(e.code(), code(ClientCode::BufferExhausted));
    assert!(e.is_retriable(), "back-pressure is retriable");
    assert_eq!(w.append(&row![4i64, "x"]).unwrap_err().code(), code(ClientCode::CapacityExhausted));
    gate.open();
    w.flush(None).unwrap();
    assert_eq!(w.stats().pending_callbacks, 0);
    w.append_with_callback(&row![5i64, "x"], |_| {}).unwrap();
    w.flush(None).unwrap();
    assert_eq!(all_ids(&conn, &path, 1), vec![1, 2, 5]);
}

#[test]
fn c5_wait_timeout_waits_for_a_slot_then_succeeds() {
    let conn = connect(&[("client.writer.buffer.wait-timeout", "5s")]);
    let path = log_table(&conn, "c5_wait_ok", 1);
    let w = append_writer(&conn, &path, WriterOptions::default().max_pending_callbacks(1));
    let gate = Gate::new();
    let g = gate.clone();
    w.append_with_callback(&row![1i64, "x"], move |_| g.wait()).unwrap();
    wait_until("slow callback entered", Duration::from_secs(5), || gate.entered() == 1);
    let opened = Arc::new(AtomicBool::new(false));
    let (g, o) = (gate.clone(), opened.clone());
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        o.store(true, Ordering::SeqCst);
        g.open();
    });
    let rec = Recorder::new();
    w.append_with_callback(&row![2i64, "x"], rec.cb(2)).unwrap();
    assert!(opened.load(Ordering::SeqCst), "admitted only after the slot was released");
    opener.join().unwrap();
    w.flush(None).unwrap();
    rec.assert_exactly_once([2]);
}

#[test]
fn c5_wait_timeout_fails_after_the_budget() {
    let conn = connect(&[("client.writer.buffer.wait-timeout", "200ms")]);
    let path = log_table(&conn, "c5_wait_fail", 1);
    let w = append_writer(&conn, &path, WriterOptions::default().max_pending_callbacks(1));
    let gate = Gate::new();
    let g = gate.clone();
    w.append_with_callback(&row![1i64, "x"], move |_| g.wait()).unwrap();
    wait_until("slow callback entered", Duration::from_secs(5), || gate.entered() == 1);
    let start = Instant::now();
    let e = w.append_with_callback(&row![2i64, "x"], |_| panic!("rejected")).unwrap_err();
    let waited = start.elapsed();
    assert_eq!(e.code(), code(ClientCode::CapacityExhausted));
    assert!(waited >= Duration::from_millis(190), "waited the whole budget, {waited:?}");
    assert!(waited < Duration::from_secs(3), "{waited:?}");
    gate.open();
    w.flush(None).unwrap();
}

/// A writer's open batches together hold at most a quarter of its callback slots: with 4 open
/// batches and 65,536 slots, a batch closes at 4,096 records (not at batch-size, 2 MiB, nor at the
/// linger, 30 s), so the next ones can fill while those are in flight instead of the writer
/// waiting for slots with every batch half full.
#[test]
fn c5_open_batches_hold_at_most_a_quarter_of_the_slots() {
    let conn = connect(&[("client.writer.batch-timeout", "30s")]);
    let path = log_table(&conn, "c5_share", 4);
    let w = append_writer(&conn, &path, WriterOptions::default().max_pending_callbacks(65_536));
    for id in 0..40_000i64 {
        w.append_detached(&row![id, "x"]).unwrap();
    }
    w.flush(Some(Duration::from_secs(20))).unwrap();
    let per_bucket: Vec<usize> = (0..4).map(|b| scan_ids(&conn, &path, b).len()).collect();
    assert_eq!(per_bucket.iter().sum::<usize>(), 40_000);
    let expected: u64 = per_bucket.iter().map(|&n| n.div_ceil(4_096) as u64).sum();
    let stats = w.stats();
    assert_eq!(stats.records_sent, 40_000);
    assert!(
        stats.batches_sent >= expected,
        "{} batches for {per_bucket:?} records per bucket, expected at least {expected}",
        stats.batches_sent
    );
    assert!(stats.batch_records_p99 <= 4_096, "batches of up to {} records", stats.batch_records_p99);
}

/// A submission about to wait for a callback slot sends the open batches that hold the slots,
/// instead of waiting for their linger (30 s here, longer than the 5 s budget).
#[test]
fn c5_waiting_for_a_slot_sends_the_lingering_batch() {
    let conn = connect(&[("client.writer.buffer.wait-timeout", "5s"), ("client.writer.batch-timeout", "30s")]);
    let path = log_table(&conn, "c5_wait_linger", 4);
    let w = append_writer(&conn, &path, WriterOptions::default().max_pending_callbacks(8));
    let rec = Recorder::new();
    for i in 0..8 {
        w.append_with_callback(&row![i, "x"], rec.cb(i)).unwrap();
    }
    assert_eq!(rec.all().len(), 0, "the batches linger: nothing completed yet");
    let start = Instant::now();
    w.append_with_callback(&row![8i64, "x"], rec.cb(8)).unwrap();
    let waited = start.elapsed();
    assert!(waited < Duration::from_secs(3), "admitted once the lingering batches completed, not after the budget: {waited:?}");
    assert!(!rec.all().is_empty(), "a slot came back through a completion");
    w.flush(None).unwrap();
    rec.assert_exactly_once(0..9);
    assert!(rec.all().iter().all(|s| s.completion.is_ok()));
}

/// The same for buffer memory, which the writers of a connection share: a writer that waits for
/// memory sends the open batches of the other writer too.
#[test]
fn c5_waiting_for_buffer_memory_sends_every_writers_lingering_batches() {
    let conn = connect(&[
        ("client.writer.buffer.memory-size", "64kb"),
        ("client.writer.batch-size", "64kb"),
        ("client.writer.buffer.wait-timeout", "5s"),
        ("client.writer.batch-timeout", "30s"),
    ]);
    let (pa, pb) = (log_table(&conn, "c5_mem_linger_a", 1), log_table(&conn, "c5_mem_linger_b", 1));
    let (a, b) = (append_writer(&conn, &pa, WriterOptions::default()), append_writer(&conn, &pb, WriterOptions::default()));
    let text = "y".repeat(1000);
    let (ra, rb) = (Recorder::new(), Recorder::new());
    let mut n = 0i64;
    // Writer a's open batch takes most of the memory and lingers.
    while a.stats().buffer_bytes_in_use < 48 * 1024 {
        a.append_with_callback(&row![n, text.as_str()], ra.cb(n)).unwrap();
        n += 1;
        assert!(n < 1000, "the buffer never filled");
    }
    let start = Instant::now();
    for i in 0..40i64 {
        b.append_with_callback(&row![i, text.as_str()], rb.cb(i)).unwrap();
    }
    let waited = start.elapsed();
    assert!(waited < Duration::from_secs(3), "writer b got memory from writer a's batch, sent at once: {waited:?}");
    wait_until("writer a's lingering batch completed", Duration::from_secs(3), || ra.all().len() as i64 == n);
    a.flush(None).unwrap();
    b.flush(None).unwrap();
    ra.assert_exactly_once(0..n);
    rb.assert_exactly_once(0..40);
}

#[test]
fn c5_buffer_exhausted_when_the_engine_is_slow() {
    let conn = connect(&[
        ("client.writer.buffer.memory-size", "2kb"),
        ("client.writer.batch-size", "1kb"),
        ("client.writer.buffer.wait-timeout", "0"),
    ]);
    let path = log_table(&conn, "c5_buf", 1);
    // Answers held 3 s: no stall of the fill loop below lets a batch complete and free memory.
    engine(&conn).faults().inject(&path, 0, delay(3_000, 20));
    let w = append_writer(&conn, &path, WriterOptions::default());
    let rec = Recorder::new();
    let mut accepted = 0i64;
    let e = loop {
        match w.append_with_callback(&row![accepted, "some message text"], rec.cb(accepted)) {
            Ok(()) => accepted += 1,
            Err(e) => break e,
        }
        assert!(accepted < 10_000, "the buffer never filled up");
    };
    assert_eq!(e.code(), code(ClientCode::BufferExhausted));
    assert!(e.is_retriable());
    assert_eq!(w.stats().pending_callbacks, accepted as u64, "the rejected op holds no slot");
    engine(&conn).faults().clear();
    w.flush(Some(Duration::from_secs(20))).unwrap();
    rec.assert_exactly_once(0..accepted);
    assert!(rec.all().iter().all(|s| s.completion.is_ok()));
}

#[test]
fn c5_submission_inside_a_callback_never_blocks() {
    // Unbounded wait budget: outside a callback this would wait for a slot forever.
    let conn = connect(&[]);
    let path = log_table(&conn, "c5_incb", 1);
    let w = Arc::new(append_writer(&conn, &path, WriterOptions::default().max_pending_callbacks(1)));
    let (tx, rx) = std::sync::mpsc::channel();
    let w2 = w.clone();
    w.append_with_callback(&row![1i64, "x"], move |_| {
        let start = Instant::now();
        let r = w2.append_with_callback(&row![2i64, "x"], |_| {});
        tx.send((r, start.elapsed())).unwrap();
    })
    .unwrap();
    let (r, took) = rx.recv_timeout(Duration::from_secs(5)).expect("the callback must not block");
    let e = r.unwrap_err();
    assert_eq!(e.code(), code(ClientCode::CapacityExhausted));
    assert!(took < Duration::from_secs(4));
    w.flush(None).unwrap();
}

#[test]
fn c5_record_larger_than_batch_size_is_rejected() {
    let conn = connect(&[("client.writer.batch-size", "1kb")]);
    let path = log_table(&conn, "c5_big", 1);
    let pk = pk_table(&conn, "c5_big_pk", 1);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let big = "x".repeat(4096);
    let (f, dropped) = drop_flag();
    let e = w
        .append_with_callback(&row![1i64, big.clone()], move |_| {
            let _f = &f;
            panic!("rejected")
        })
        .unwrap_err();
    assert_eq!(e.code(), code(ClientCode::RecordTooLarge));
    assert!(!e.is_retriable());
    assert!(dropped.load(Ordering::SeqCst));
    let u = upsert_writer(&conn, &pk, WriterOptions::default());
    assert_eq!(u.upsert(&row![1i64, big, 1i64]).unwrap_err().code(), code(ClientCode::RecordTooLarge));
    w.flush(None).unwrap();
    u.flush(None).unwrap();
    assert_eq!(engine(&conn).high_watermark(&path, 0).unwrap(), 0);
    assert_eq!(engine(&conn).high_watermark(&pk, 0).unwrap(), 0);
}

#[test]
fn c5_large_arrow_batch_is_split_and_accepted() {
    let conn = connect(&[("client.writer.batch-size", "1kb")]);
    let path = log_table(&conn, "c5_arrow", 2);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let n = 5_000i64;
    let ids: Vec<i64> = (0..n).collect();
    let msgs: Vec<String> = ids.iter().map(|i| format!("message {i}")).collect();
    let schema = Arc::new(ArrowSchema::new(vec![Field::new("id", ArrowType::Int64, false), Field::new("msg", ArrowType::Utf8, true)]));
    let rb = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(ids)), Arc::new(StringArray::from(msgs))]).unwrap();
    let rec = Recorder::new();
    w.write_arrow_batch_with_callback(&rb, rec.cb(0)).unwrap();
    w.flush(None).unwrap();
    let c = rec.get(0).completion;
    assert!(c.is_ok(), "{:?}", c.error);
    assert_eq!(c.bucket_results.iter().map(|r| r.rows).sum::<usize>(), n as usize);
    assert_eq!(all_ids(&conn, &path, 2), (0..n).collect::<Vec<_>>());
    assert!(engine(&conn).stats().batches_accepted > 2, "split into several batches: {:?}", engine(&conn).stats());
}

// ===== C6 flush =====

#[test]
fn c6_flush_waits_for_slow_callbacks() {
    let conn = connect(&[]);
    let path = log_table(&conn, "c6_slow", 2);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let done = Arc::new(AtomicUsize::new(0));
    for i in 0..6i64 {
        let d = done.clone();
        w.append_with_callback(&row![i, "x"], move |_| {
            std::thread::sleep(Duration::from_millis(50));
            d.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    }
    w.flush(None).unwrap();
    assert_eq!(done.load(Ordering::SeqCst), 6, "flush returned before every callback had returned");
}

#[test]
fn c6_ops_submitted_after_flush_began_do_not_extend_it() {
    let conn = connect(&[]);
    let path = log_table(&conn, "c6_mark", 4);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let stop = AtomicBool::new(false);
    let submitted = Arc::new(AtomicI64::new(0));
    let done: Vec<AtomicBool> = (0..2_000_000).map(|_| AtomicBool::new(false)).collect();
    let done = Arc::new(done);
    // Once the flush begins, the callbacks (of ops accepted before it, which the flush waits for)
    // hold the worker until the submitter has gone on for another 1,000 ops (5 s at most): so the
    // flush cannot return before ops were submitted after it began, however the threads are
    // scheduled on a loaded machine.
    let flush_began_at = Arc::new(AtomicI64::new(i64::MAX));
    std::thread::scope(|s| {
        let submitter = s.spawn(|| {
            let mut i = 0i64;
            while !stop.load(Ordering::SeqCst) && i < 2_000_000 {
                let (d, sub, began) = (done.clone(), submitted.clone(), flush_began_at.clone());
                w.append_with_callback(&row![i, "x"], move |_| {
                    let deadline = Instant::now() + Duration::from_secs(5);
                    while sub.load(Ordering::SeqCst) < began.load(Ordering::SeqCst).saturating_add(1000) && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    d[i as usize].store(true, Ordering::SeqCst)
                })
                .unwrap();
                i += 1;
                submitted.store(i, Ordering::SeqCst);
            }
        });
        wait_until("submitter running", Duration::from_secs(5), || submitted.load(Ordering::SeqCst) > 1000);
        let before = submitted.load(Ordering::SeqCst);
        flush_began_at.store(before, Ordering::SeqCst);
        let r = w.flush(Some(Duration::from_secs(8)));
        let after = submitted.load(Ordering::SeqCst);
        let still_running = !submitter.is_finished();
        stop.store(true, Ordering::SeqCst);
        submitter.join().unwrap();
        r.expect("flush must return while a submitter keeps going");
        assert!(still_running && after > before, "the submitter kept going during the flush");
        for i in 0..before {
            assert!(done[i as usize].load(Ordering::SeqCst), "op {i} was accepted before flush and its callback has not run");
        }
    });
    w.flush(None).unwrap();
}

#[test]
fn c6_blocking_calls_inside_a_callback_fail_at_once() {
    let conn = connect(&[]);
    let path = log_table(&conn, "c6_incb", 1);
    let w = Arc::new(append_writer(&conn, &path, WriterOptions::default()));
    let other = Arc::new(append_writer(&conn, &path, WriterOptions::default()));
    let pending = w.append(&row![0i64, "x"]).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let (w2, o2, c2) = (w.clone(), other.clone(), conn.clone());
    w.append_with_callback(&row![1i64, "x"], move |_| {
        let start = Instant::now();
        let flush = w2.flush(None).map_err(|e| e.code());
        let wait = pending.wait(None).map(|_| ()).map_err(|e| e.code());
        let close = o2.close(None).map_err(|e| e.code());
        let conn_close = c2.close(None).map_err(|e| e.code());
        tx.send((flush, wait, close, conn_close, start.elapsed())).unwrap();
    })
    .unwrap();
    let (flush, wait, close, conn_close, took) = rx.recv_timeout(Duration::from_secs(5)).expect("no deadlock");
    let cfc = Err(code(ClientCode::CalledFromCallback));
    assert_eq!(flush, cfc);
    assert_eq!(wait, cfc);
    assert_eq!(close, cfc);
    assert_eq!(conn_close, cfc);
    assert!(took < Duration::from_secs(4));
    w.flush(None).unwrap();
    assert!(other.is_closed(), "close from a callback still stops accepting");
    assert_eq!(other.append(&row![5i64, "x"]).unwrap_err().code(), code(ClientCode::WriterClosed));
    assert!(!conn.is_closed());
}

// ===== C7 close =====

#[test]
fn c7_close_timeout_fails_pending_with_writer_closed_exactly_once() {
    let conn = connect(&[]);
    let path = pk_table(&conn, "c7_close", 3);
    // Answers held 3 s: long enough that no stall of this thread lets them arrive before
    // close's 150 ms run out.
    for b in 0..3 {
        engine(&conn).faults().inject(&path, b, delay(3_000, 5));
    }
    let w = upsert_writer(&conn, &path, WriterOptions::default());
    let rec = Recorder::new();
    let first_sent = Instant::now();
    for i in 0..30i64 {
        w.upsert_with_callback(&row![i, "n", i], rec.cb(i)).unwrap();
    }
    let start = Instant::now();
    let e = w.close(Some(Duration::from_millis(150))).unwrap_err();
    assert_eq!(e.code(), code(ClientCode::Timeout));
    assert!(start.elapsed() < Duration::from_millis(2_500), "close waited {:?}", start.elapsed());
    wait_until("every pending callback", Duration::from_secs(5), || rec.len() == 30);
    assert!(rec.all().iter().all(|s| s.completion.error_code() == code(ClientCode::WriterClosed)));
    assert_eq!(w.upsert(&row![100i64, "n", 1i64]).unwrap_err().code(), code(ClientCode::WriterClosed));
    assert_eq!(w.delete(&[100i64.into()]).unwrap_err().code(), code(ClientCode::WriterClosed));
    // The late answers arrive (every request went out by the time close returned).
    std::thread::sleep((start.max(first_sent) + Duration::from_millis(3_500)).saturating_duration_since(Instant::now()));
    rec.assert_exactly_once(0..30);
}

#[test]
fn c7_dropping_a_writer_closes_it() {
    let conn = connect(&[("client.writer.batch-timeout", "10s")]);
    let path = log_table(&conn, "c7_drop", 2);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let rec = Recorder::new();
    for i in 0..100i64 {
        w.append_with_callback(&row![i, "x"], rec.cb(i)).unwrap();
    }
    drop(w);
    rec.assert_exactly_once(0..100);
    assert!(rec.all().iter().all(|s| s.completion.is_ok()));
    assert_eq!(all_ids(&conn, &path, 2), (0..100).collect::<Vec<_>>());
}

#[test]
fn c7_drop_inside_a_callback_does_not_block() {
    let conn = connect(&[]);
    let path = log_table(&conn, "c7_dropcb", 1);
    // Pending operations take 3 s; the drop inside the callback must return well before.
    engine(&conn).faults().inject(&path, 0, delay(3_000, 10));
    let w = append_writer(&conn, &path, WriterOptions::default());
    let slot: Arc<Mutex<Option<AppendWriter>>> = Arc::new(Mutex::new(None));
    let gate = Gate::new();
    let (g, s2) = (gate.clone(), slot.clone());
    let (tx, rx) = std::sync::mpsc::channel();
    w.append_with_callback(&row![0i64, "first"], move |c| {
        g.wait();
        let w = s2.lock().unwrap().take().expect("writer");
        let start = Instant::now();
        drop(w);
        tx.send((start.elapsed(), c.is_ok())).unwrap();
    })
    .unwrap();
    wait_until("first request sent", Duration::from_secs(5), || engine(&conn).faults().pending(&path, 0) == 9);
    // Later operations go out in later (delayed) requests: still pending when the drop happens.
    let rec = Recorder::new();
    for i in 0..20i64 {
        w.append_with_callback(&row![1 + i, "later"], rec.cb(i)).unwrap();
    }
    *slot.lock().unwrap() = Some(w);
    gate.open();
    let (took, ok) = rx.recv_timeout(Duration::from_secs(5)).expect("the drop inside the callback returned");
    assert!(ok);
    assert!(took < Duration::from_millis(2_000), "drop inside a callback must not wait for pending ops ({took:?})");
    wait_until("pending ops completed normally", Duration::from_secs(30), || rec.len() == 20);
    rec.assert_exactly_once(0..20);
    assert!(rec.all().iter().all(|s| s.completion.is_ok()), "pending operations complete normally after the drop");
    assert_eq!(all_ids(&conn, &path, 1), (0..21).collect::<Vec<_>>());
}

#[test]
fn c7_every_op_completes_within_delivery_timeout_when_the_engine_never_answers() {
    let conn = connect(&[("client.writer.delivery-timeout", "400ms"), ("client.writer.batch-size", "1kb")]);
    let path = log_table(&conn, "c7_dead", 3);
    for b in 0..3 {
        engine(&conn).faults().inject(&path, b, delay(3_600_000, 1000));
    }
    let w = append_writer(&conn, &path, WriterOptions::default());
    let rec = Recorder::new();
    let start = Instant::now();
    for i in 0..500i64 {
        w.append_with_callback(&row![i, "some text"], rec.cb(i)).unwrap();
    }
    wait_until("every callback within the delivery timeout", Duration::from_secs(5), || rec.len() == 500);
    assert!(start.elapsed() < Duration::from_secs(3));
    rec.assert_exactly_once(0..500);
    // The earliest batch of a bucket fails with DELIVERY_TIMEOUT; that fatal failure of a stamped
    // batch resets the sequence state (sender.rs), so later in-flight batches of the bucket that
    // would need a retry fail with SEQUENCE_RESET instead of being retried.
    let mut first_of_bucket = std::collections::HashSet::new();
    for s in rec.all() {
        let c = s.completion.error_code();
        if first_of_bucket.insert(s.completion.bucket) {
            assert_eq!(c, code(ClientCode::DeliveryTimeout), "op {}: {:?}", s.tag, s.completion.error);
        } else {
            assert!(
                c == code(ClientCode::DeliveryTimeout) || c == code(ClientCode::SequenceReset),
                "op {}: {:?}",
                s.tag,
                s.completion.error
            );
        }
    }
    w.flush(Some(Duration::from_secs(1))).unwrap();
}

// ===== C8 isolation =====

#[test]
fn c8_a_panicking_callback_affects_no_other() {
    let conn = connect(&[]);
    let path = log_table(&conn, "c8_panic", 2);
    let errors: Arc<Mutex<Vec<CallbackError>>> = Arc::default();
    let e2 = errors.clone();
    let w = append_writer(&conn, &path, WriterOptions::default().error_handler(move |e| e2.lock().unwrap().push(e.clone())));
    let rec = Recorder::new();
    for i in 0..100i64 {
        let cb = rec.cb(i);
        w.append_with_callback(&row![i, "x"], move |c| {
            cb(c);
            if i % 10 == 3 {
                panic!("boom from callback {i}");
            }
        })
        .unwrap();
    }
    w.flush(None).unwrap();
    rec.assert_exactly_once(0..100);
    let errs = errors.lock().unwrap().clone();
    assert_eq!(errs.len(), 10);
    for e in &errs {
        assert!(e.message.contains("boom from callback"), "{e:?}");
        assert!(e.operation.contains("c8_panic") && e.operation.contains("bucket"), "operation text: {:?}", e.operation);
    }
    assert_eq!(w.stats().callback_errors, 10);
    assert_eq!(w.stats().pending_callbacks, 0);
    // The worker keeps running, for this writer and for others on the connection.
    let w2 = append_writer(&conn, &path, WriterOptions::default());
    let rec2 = Recorder::new();
    w.append_with_callback(&row![500i64, "x"], rec2.cb(0)).unwrap();
    w2.append_with_callback(&row![501i64, "x"], rec2.cb(1)).unwrap();
    w.flush(None).unwrap();
    w2.flush(None).unwrap();
    rec2.assert_exactly_once([0, 1]);
    assert_eq!(rec.all()[0].thread, rec2.all()[0].thread, "the same worker thread survived the panics");
}
