//! Shared callbacks (`*_with_shared_callback`): one `Arc` for many operations, registered once
//! per run of consecutive records of a batch. The contract is the one of per-operation
//! callbacks (C1-C4, C8, C12); these tests check it holds across runs, run boundaries and
//! failures, and that a run really costs one registration.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema};
use common::*;
use fluss_writer::{row, ClientCode, FlussCode, SharedCallback, Value, WriteCompletion, WriterOptions};

const LONG_LINGER: &[(&str, &str)] = &[("client.writer.batch-timeout", "10s")];

/// A shared callback that records every completion it gets, in call order.
fn recording() -> (SharedCallback, Arc<Mutex<Vec<WriteCompletion>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    (Arc::new(move |c: &WriteCompletion| s.lock().unwrap().push(c.clone())), seen)
}

/// A shared callback that counts its calls.
fn counting() -> (SharedCallback, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    (
        Arc::new(move |_: &WriteCompletion| {
            c.fetch_add(1, Ordering::SeqCst);
        }),
        calls,
    )
}

/// id of each stored record by (bucket, offset).
fn stored(conn: &fluss_writer::Connection, path: &fluss_writer::TablePath, buckets: i32) -> HashMap<(i32, i64), i64> {
    (0..buckets).flat_map(|b| scan_ids(conn, path, b).into_iter().map(move |(off, id)| ((b, off), id))).collect()
}

#[test]
fn runs_call_back_once_per_record_with_its_own_offset_across_run_boundaries() {
    let conn = connect(&[]);
    let path = log_table(&conn, "shared_runs", 4);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let (a, seen_a) = recording();
    let (b, seen_b) = recording();
    let rec = Recorder::new();
    // Runs of A broken by detached records, one-shot callbacks and runs of B.
    let mut want_a = Vec::new();
    let mut want_b = Vec::new();
    for i in 0..3000i64 {
        let r = row![i, format!("m{i}")];
        match i % 13 {
            5 => w.append_detached(&r).unwrap(),
            7 => w.append_with_callback(&r, rec.cb(i)).unwrap(),
            9..=11 => {
                w.append_with_shared_callback(&r, &b).unwrap();
                want_b.push(i);
            }
            _ => {
                w.append_with_shared_callback(&r, &a).unwrap();
                want_a.push(i);
            }
        }
    }
    w.flush(None).unwrap();
    let at = stored(&conn, &path, 4);
    assert_eq!(at.len(), 3000);
    for (seen, want) in [(&seen_a, &want_a), (&seen_b, &want_b)] {
        let seen = seen.lock().unwrap();
        let mut got: Vec<i64> = seen
            .iter()
            .map(|c| {
                assert!(c.is_ok(), "{c:?}");
                assert_eq!(&*c.table, &path);
                *at.get(&(c.bucket, c.offset)).unwrap_or_else(|| panic!("no record at bucket {} offset {}", c.bucket, c.offset))
            })
            .collect();
        // Per bucket the calls come in submission order.
        for bucket in 0..4 {
            let ids: Vec<i64> = got.iter().copied().filter(|id| bucket_of(*id, 4) == bucket).collect();
            assert!(ids.windows(2).all(|p| p[0] < p[1]), "bucket {bucket} out of order: {ids:?}");
        }
        got.sort_unstable();
        assert_eq!(&got, want, "each record's shared callback ran exactly once, with that record's offset");
    }
    rec.assert_exactly_once((0..3000).filter(|i| i % 13 == 7));
    w.close(None).unwrap();
    assert_eq!(Arc::strong_count(&a), 1, "the batches released their clones");
    assert_eq!(Arc::strong_count(&b), 1);
}

#[test]
fn a_run_holds_one_clone_of_the_callback_however_many_records_it_covers() {
    let conn = connect(LONG_LINGER);
    let path = log_table(&conn, "shared_one_clone", 1);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let (cb, calls) = counting();
    for i in 0..500i64 {
        w.append_with_shared_callback(&row![i, "x"], &cb).unwrap();
    }
    assert_eq!(Arc::strong_count(&cb), 2, "500 pending records of one run: one registration");
    assert_eq!(w.stats().pending_callbacks, 500, "each record still holds its own slot");
    // A one-shot callback in between starts a new run afterwards.
    w.append_with_callback(&row![500i64, "x"], |_| {}).unwrap();
    w.append_with_shared_callback(&row![501i64, "x"], &cb).unwrap();
    assert_eq!(Arc::strong_count(&cb), 3);
    w.flush(None).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 501);
    assert_eq!(Arc::strong_count(&cb), 1);
    assert_eq!(w.stats().pending_callbacks, 0);
}

#[test]
fn a_failed_batch_calls_back_every_record_of_its_runs_with_the_error() {
    let conn = connect(LONG_LINGER);
    let path = log_table(&conn, "shared_fail", 2);
    engine(&conn).faults().inject(&path, 0, err(FlussCode::RECORD_TOO_LARGE, "too large here", 1));
    let w = append_writer(&conn, &path, WriterOptions::default());
    let (cb, seen) = recording();
    let ids: Vec<i64> = ids_in_bucket(0, 2, 30, 0).into_iter().chain(ids_in_bucket(1, 2, 30, 0)).collect();
    for &id in &ids {
        w.append_with_shared_callback(&row![id, "x"], &cb).unwrap();
    }
    w.flush(None).unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 60);
    let failed: Vec<&WriteCompletion> = seen.iter().filter(|c| c.bucket == 0).collect();
    assert_eq!(failed.len(), 30);
    for c in failed {
        let e = c.error.as_ref().expect("bucket 0 failed");
        assert_eq!(e.code(), FlussCode::RECORD_TOO_LARGE);
        assert_eq!(c.offset, -1, "a failed record has no offset");
    }
    let mut offsets: Vec<i64> = seen.iter().filter(|c| c.bucket == 1).map(|c| c.offset).collect();
    assert!(seen.iter().filter(|c| c.bucket == 1).all(|c| c.is_ok()));
    offsets.sort_unstable();
    assert_eq!(offsets, (0..30).collect::<Vec<_>>());
}

#[test]
fn a_panic_on_one_record_of_a_run_does_not_skip_the_rest() {
    let conn = connect(&[]);
    let path = log_table(&conn, "shared_panic", 1);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let calls = Arc::new(AtomicUsize::new(0));
    let c2 = calls.clone();
    let cb: SharedCallback = Arc::new(move |c: &WriteCompletion| {
        c2.fetch_add(1, Ordering::SeqCst);
        if c.offset % 10 == 3 {
            panic!("callback failed on offset {}", c.offset);
        }
    });
    for i in 0..100i64 {
        w.append_with_shared_callback(&row![i, "x"], &cb).unwrap();
    }
    w.flush(None).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 100);
    assert_eq!(w.stats().callback_errors, 10);
}

#[test]
fn a_rejected_submission_neither_calls_nor_keeps_the_shared_callback() {
    let conn = connect(&[("client.writer.buffer.wait-timeout", "0")]);
    let path = log_table(&conn, "shared_reject", 1);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let (cb, calls) = counting();
    let e = w.append_with_shared_callback(&row!["not a number", "x"], &cb).unwrap_err();
    assert_eq!(e.code(), ClientCode::InvalidRow as i32);
    assert_eq!(Arc::strong_count(&cb), 1);
    // Arrow input: the clone for its own slot is taken before admission and dropped on failure.
    let bad = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![Field::new("id", ArrowType::Int64, false)])),
        vec![Arc::new(Int64Array::from(vec![1i64]))],
    )
    .unwrap();
    assert!(w.write_arrow_batch_with_shared_callback(&bad, &cb).is_err());
    assert_eq!(Arc::strong_count(&cb), 1);
    w.close(None).unwrap();
    let e = w.append_with_shared_callback(&row![1i64, "x"], &cb).unwrap_err();
    assert_eq!(e.code(), ClientCode::WriterClosed as i32);
    assert_eq!(Arc::strong_count(&cb), 1);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn arrow_batches_and_primary_key_writes_take_shared_callbacks_too() {
    let conn = connect(&[]);
    let path = log_table(&conn, "shared_arrow", 3);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let (cb, seen) = recording();
    let ids: Vec<i64> = (0..50).collect();
    let batch = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![Field::new("id", ArrowType::Int64, false), Field::new("msg", ArrowType::Utf8, true)])),
        vec![Arc::new(Int64Array::from(ids.clone())), Arc::new(StringArray::from(ids.iter().map(|i| format!("a{i}")).collect::<Vec<_>>()))],
    )
    .unwrap();
    w.write_arrow_batch_with_shared_callback(&batch, &cb).unwrap();
    w.write_arrow_batch_with_shared_callback(&batch, &cb).unwrap();
    w.flush(None).unwrap();
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2, "one call per Arrow operation");
        for c in seen.iter() {
            assert!(c.is_ok());
            assert_eq!(c.bucket_results.iter().map(|r| r.rows).sum::<usize>(), 50);
        }
    }
    assert_eq!(all_ids(&conn, &path, 3).len(), 100);

    let pk = pk_table(&conn, "shared_pk", 2);
    let u = upsert_writer(&conn, &pk, WriterOptions::default());
    let (cb, seen) = recording();
    for i in 0..40i64 {
        u.upsert_with_shared_callback(&row![i, "n", i], &cb).unwrap();
    }
    for i in 0..10i64 {
        u.delete_with_shared_callback(&[Value::BigInt(i)], &cb).unwrap();
    }
    u.flush(None).unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 50);
    assert!(seen.iter().all(|c| c.is_ok() && c.offset == -1 && c.log_end_offset >= 0));
}
