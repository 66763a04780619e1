//! Issue 11, defect 2: every batch completes within `client.writer.delivery-timeout` (plus at
//! most one `client.request-timeout`), whatever state it is in when its deadline passes.
//!
//! The scenario that showed it: a table dropped under a live writer. The first send is answered
//! `UNKNOWN_TABLE_OR_BUCKET` (retriable), the metadata refresh then finds the table gone; before
//! the fix the batch waited for a resend that never came and never expired: no callback for as
//! long as one cared to wait, `pending_callbacks` stuck at 3, every `flush(5s)` timing out.
//! The state machine itself is checked under random fault plans in `write/bucket_state.rs`.

mod common;

use std::time::{Duration, Instant};

use common::*;
use fluss_writer::{row, FlussCode, WriterOptions};

const DELIVERY: Duration = Duration::from_secs(3);
const REQUEST: Duration = Duration::from_secs(2);

fn conn_with(extra: &[(&str, &str)]) -> fluss_writer::Connection {
    let mut pairs = vec![("client.writer.delivery-timeout", "3s"), ("client.request-timeout", "2s")];
    pairs.extend_from_slice(extra);
    connect(&pairs)
}

/// Append (or upsert) 3 rows with callbacks after the table was dropped under the live writer;
/// every callback runs once with an error within delivery + request timeout, and flush returns.
fn dropped_table_fails_every_op(extra: &[(&str, &str)], pk: bool, name: &str) {
    let conn = conn_with(extra);
    let path = if pk { pk_table(&conn, name, 2) } else { log_table(&conn, name, 2) };
    let rec = Recorder::new();
    let start;
    let check = |w_stats: &dyn Fn() -> u64, flush: &dyn Fn() -> fluss_writer::Result<()>, start: Instant| {
        wait_until("all 3 callbacks after the table was dropped", DELIVERY + REQUEST + Duration::from_secs(1), || rec.len() == 3);
        let took = start.elapsed();
        assert!(took <= DELIVERY + REQUEST, "callbacks took {took:?}, more than delivery + request timeout");
        rec.assert_exactly_once(0..3);
        for s in rec.all() {
            assert!(!s.completion.is_ok(), "op {} succeeded on a dropped table", s.tag);
        }
        flush().expect("flush returns once every callback ran");
        assert_eq!(w_stats(), 0, "no pending callbacks left");
        assert_per_bucket_order(&rec.all());
    };
    if pk {
        let w = upsert_writer(&conn, &path, WriterOptions::default());
        conn.admin().drop_table(&path, false).unwrap();
        start = Instant::now();
        for i in 0..3i64 {
            w.upsert_with_callback(&row![i, "n", i], rec.cb(i)).unwrap();
        }
        check(&|| w.stats().pending_callbacks, &|| w.flush(Some(Duration::from_secs(5))), start);
    } else {
        let w = append_writer(&conn, &path, WriterOptions::default());
        conn.admin().drop_table(&path, false).unwrap();
        start = Instant::now();
        for i in 0..3i64 {
            w.append_with_callback(&row![i, "some text"], rec.cb(i)).unwrap();
        }
        check(&|| w.stats().pending_callbacks, &|| w.flush(Some(Duration::from_secs(5))), start);
    }
}

#[test]
fn dropped_table_under_a_live_writer_fails_every_op_in_time() {
    dropped_table_fails_every_op(&[], false, "dd_log");
}

#[test]
fn dropped_table_without_idempotence() {
    dropped_table_fails_every_op(&[("client.writer.enable-idempotence", "false")], false, "dd_log_noidem");
}

#[test]
fn dropped_table_primary_key_writer() {
    dropped_table_fails_every_op(&[], true, "dd_pk");
}

/// A batch already waiting for its resend when the table goes away (the first attempt fails
/// retriably, the table is dropped during the backoff) fails too, in time and in order.
#[test]
fn dropped_table_while_a_batch_backs_off() {
    // A 2 s backoff (below the 3 s delivery timeout): the drop below happens during it even if
    // this thread stalls for a while after the error was consumed.
    let conn = conn_with(&[("client.writer.retry-backoff", "2s")]);
    let path = log_table(&conn, "dd_backoff", 1);
    engine(&conn).faults().inject(&path, 0, err(FlussCode::NOT_LEADER_OR_FOLLOWER, "moving", 1));
    let w = append_writer(&conn, &path, WriterOptions::default());
    let rec = Recorder::new();
    let start = Instant::now();
    for i in 0..3i64 {
        w.append_with_callback(&row![i, "x"], rec.cb(i)).unwrap();
    }
    wait_until("the injected error was consumed", Duration::from_secs(10), || engine(&conn).faults().pending(&path, 0) == 0);
    conn.admin().drop_table(&path, false).unwrap();
    wait_until("all 3 callbacks", DELIVERY + REQUEST + Duration::from_secs(1), || rec.len() == 3);
    assert!(start.elapsed() <= DELIVERY + REQUEST, "took {:?}", start.elapsed());
    rec.assert_exactly_once(0..3);
    assert!(rec.all().iter().all(|s| !s.completion.is_ok()));
    assert_per_bucket_order(&rec.all());
    w.flush(Some(Duration::from_secs(5))).unwrap();
}

/// The writer stays usable for other tables' writers and a recreated table gets a new writer:
/// nothing of the dropped table's writer leaks into the connection.
#[test]
fn recreated_table_writes_normally_after_the_old_writer_failed() {
    let conn = conn_with(&[]);
    let path = log_table(&conn, "dd_recreate", 1);
    let w = append_writer(&conn, &path, WriterOptions::default());
    conn.admin().drop_table(&path, false).unwrap();
    let rec = Recorder::new();
    w.append_with_callback(&row![1i64, "x"], rec.cb(1)).unwrap();
    w.flush(Some(DELIVERY + REQUEST)).unwrap();
    assert!(!rec.get(1).completion.is_ok());
    let path = log_table(&conn, "dd_recreate", 1);
    let w2 = append_writer(&conn, &path, WriterOptions::default());
    let rec2 = Recorder::new();
    w2.append_with_callback(&row![2i64, "y"], rec2.cb(2)).unwrap();
    w2.flush(Some(Duration::from_secs(5))).unwrap();
    assert!(rec2.get(2).completion.is_ok(), "{:?}", rec2.get(2).completion.error);
    assert_eq!(all_ids(&conn, &path, 1), vec![2]);
}
