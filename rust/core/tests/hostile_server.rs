//! A writer against a misbehaving server (`hostile_support`): truncated frames, answers under
//! request ids never sent, garbage protobuf, a 2 GiB length prefix, a slow-loris answer, and
//! well-formed answers with impossible values. For each: the error is a clear `PROTOCOL`, no
//! panic, no wait past the request timeout (plus slack), bounded memory, a new connection that
//! works afterwards, and every accepted operation's callback exactly once.
//!
//! Framing violations close the connection with a retriable `PROTOCOL` error, so the writer
//! retries the batch on a new connection (the server stored it the first time: idempotence makes
//! the retry a duplicate, and each row is stored once). Impossible values inside a well-formed
//! answer fail that batch with a non-retriable `PROTOCOL` error; the writer goes on.

mod common;
mod hostile_support;

use std::time::{Duration, Instant};

use common::Recorder;
use fluss_writer::backend::Response;
use fluss_writer::cluster::connection::Connection as RawConnection;
use fluss_writer::wire::proto;
use fluss_writer::{row, AppendWriter, ClientCode, Config, Connection, DataType, Schema, TableDescriptor, TablePath, WriterOptions};
use hostile_support::{vm_hwm, vm_peak, HostileServer, Misbehave, Rule};

const PRODUCE_LOG: i16 = 1014;
const LIST_DATABASES: i16 = 1003;
const PROTOCOL: i32 = ClientCode::Protocol as i32;
/// `client.request-timeout` of the tests whose misbehaviour only a request timeout detects
/// (a slow-loris answer, a server that always breaks its framing) and of the raw connections.
/// The others keep the 10 s default of `client`: a stall of a busy machine during their setup
/// must not time a request out.
const REQUEST_TIMEOUT: Duration = Duration::from_millis(1000);
/// `client.request-timeout` with REQUEST_TIMEOUT.
const SHORT_TIMEOUT: (&str, &str) = ("client.request-timeout", "1000ms");

fn client(server: &HostileServer, extra: &[(&str, &str)]) -> Connection {
    let mut c = Config::default();
    c.set("bootstrap.servers", &server.addr()).unwrap();
    for (k, v) in [
        ("client.request-timeout", "10s"),
        ("client.writer.delivery-timeout", "6s"),
        ("client.writer.batch-timeout", "5ms"),
        ("client.writer.retry-backoff", "10ms"),
    ]
    .iter()
    .chain(extra)
    {
        c.set(k, v).unwrap();
    }
    c.validate().unwrap();
    Connection::connect(c).unwrap()
}

/// A one-bucket log table `(id BIGINT NOT NULL, msg STRING)` and an append writer on it.
fn table_and_writer(conn: &Connection) -> (TablePath, AppendWriter) {
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("msg", DataType::String).build().unwrap();
    let path = TablePath::new("fluss", "hostile").unwrap();
    conn.admin().create_table(&path, &TableDescriptor::new(schema).with_bucket_count(1), false).unwrap();
    let w = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    (path, w)
}

/// Append `ids` with recorded callbacks and flush.
fn write(w: &AppendWriter, rec: &Recorder, ids: std::ops::Range<i64>) -> Duration {
    let started = Instant::now();
    for i in ids {
        w.append_with_callback(&row![i, format!("m{i}")], rec.cb(i)).unwrap();
    }
    w.flush(Some(Duration::from_secs(20))).unwrap();
    started.elapsed()
}

/// Ids stored in bucket 0, in offset order.
fn stored(server: &HostileServer, path: &TablePath) -> Vec<i64> {
    server.engine().scan(path, 0, 0).unwrap().iter().map(|r| common::id_of(&r.row)).collect()
}

/// A framing violation on the first ProduceLog: retried on a new connection, stored once, every
/// callback exactly once with success. Returns how long the flush took.
fn framing_violation_is_retried_on_a_new_connection(how: Misbehave) -> Duration {
    let server = HostileServer::start(vec![]);
    let short: &[(&str, &str)] = if matches!(how, Misbehave::SlowLoris { .. }) { &[SHORT_TIMEOUT] } else { &[] };
    let conn = client(&server, short);
    let (path, w) = table_and_writer(&conn);
    server.add(Rule { api_key: PRODUCE_LOG, times: 1, how });
    let before = server.accepted();
    let rec = Recorder::new();
    let took = write(&w, &rec, 0..20);
    rec.assert_exactly_once(0..20);
    for s in rec.all() {
        assert!(s.completion.is_ok(), "{:?}", s.completion.error);
        assert_eq!(s.completion.offset, s.tag, "offsets follow the stored order");
    }
    assert_eq!(server.broken(), 1, "the rule fired once");
    assert!(server.accepted() > before, "no new connection after the broken one");
    assert_eq!(stored(&server, &path), (0..20).collect::<Vec<_>>(), "each row stored exactly once");
    // The new connection keeps working.
    let rec2 = Recorder::new();
    write(&w, &rec2, 20..25);
    rec2.assert_exactly_once(20..25);
    assert!(rec2.all().iter().all(|s| s.completion.is_ok()));
    w.close(Some(Duration::from_secs(10))).unwrap();
    took
}

/// The raw connection's view of one broken answer to ListDatabases: the request's error, how
/// long it took, and whether the connection died (then its failure).
fn raw_answer(how: Misbehave, max_response: usize) -> (fluss_writer::Error, Duration, Option<fluss_writer::Error>, HostileServer) {
    let server = HostileServer::start(vec![Rule { api_key: LIST_DATABASES, times: 1, how }]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let addr = server.addr();
    let (err, took, failure) = rt.block_on(async move {
        let conn = RawConnection::open_with(&addr, REQUEST_TIMEOUT, &tokio::runtime::Handle::current(), None, max_response).await.unwrap();
        let started = Instant::now();
        let req = fluss_writer::backend::Request::ListDatabases(proto::ListDatabasesRequest {});
        let err = conn.send(&req).await.unwrap_err();
        let took = started.elapsed();
        // A stalled frame may outlive the request by a little: give the reader its own timeout.
        let end = Instant::now() + REQUEST_TIMEOUT * 2;
        while conn.is_alive() && Instant::now() < end {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        (err, took, conn.failure())
    });
    (err, took, failure, server)
}

/// A stalled frame closes the connection within about one request timeout, by whichever rule
/// fires first: the frame's own deadline (retriable PROTOCOL, "stalled") or the request's
/// timeout on a connection where no frame was read since it was sent (retriable
/// NETWORK_EXCEPTION, "nothing arrived").
fn assert_closed_as_stalled(err: &fluss_writer::Error, failure: &Option<fluss_writer::Error>) {
    let failure = failure.as_ref().expect("the connection must be closed");
    assert!(failure.is_retriable() && err.is_retriable(), "{err:?} / {failure:?}");
    assert!(
        (failure.code() == PROTOCOL && failure.message().contains("stalled"))
            || (failure.code() == fluss_writer::FlussCode::NETWORK_EXCEPTION && failure.message().contains("nothing arrived")),
        "{failure:?}"
    );
}

fn assert_protocol_and_closed(err: &fluss_writer::Error, failure: &Option<fluss_writer::Error>, needle: &str) {
    let failure = failure.as_ref().expect("the connection must be closed");
    assert_eq!(failure.code(), PROTOCOL, "{failure:?}");
    assert!(failure.is_retriable(), "{failure:?}");
    assert!(failure.message().contains(needle), "{failure:?}");
    assert!(err.is_retriable(), "{err:?}");
}

#[test]
fn truncated_frame_then_close() {
    let (err, _took, failure, _s) = raw_answer(Misbehave::TruncateThenClose, 1 << 20);
    assert_eq!(err.code(), PROTOCOL, "{err:?}");
    assert_protocol_and_closed(&err, &failure, "inside a response frame");
    // PROTOCOL, not the request timeout's NETWORK_EXCEPTION: it failed before the timeout.
    framing_violation_is_retried_on_a_new_connection(Misbehave::TruncateThenClose);
}

#[test]
fn wrong_correlation_id() {
    let (err, _took, failure, _s) = raw_answer(Misbehave::WrongCorrelationId, 1 << 20);
    assert_eq!(err.code(), PROTOCOL, "{err:?}");
    assert_protocol_and_closed(&err, &failure, "never sent");
    // PROTOCOL, not the request timeout's NETWORK_EXCEPTION: it failed before the timeout.
    framing_violation_is_retried_on_a_new_connection(Misbehave::WrongCorrelationId);
}

#[test]
fn huge_length_prefix_allocates_nothing_and_fails_at_once() {
    // Default limit (100 MiB): the 2 GiB prefix is refused before its body is read.
    let (peak0, hwm0) = (vm_peak(), vm_hwm());
    let (err, took, failure, _s) = raw_answer(Misbehave::HugeLength { then: 1 << 20 }, 100 << 20);
    assert_eq!(err.code(), PROTOCOL, "{err:?}");
    assert_protocol_and_closed(&err, &failure, "client.response-max-size");
    // PROTOCOL, not the request timeout's NETWORK_EXCEPTION: it failed before the timeout.
    let refused_after = took;
    // Largest limit (2 GiB): the prefix is accepted, 16 MiB arrive, then nothing. The buffer
    // grows with the bytes (never 2 GiB at once) and the stalled frame fails at the timeout.
    let (err, took, failure, _s) = raw_answer(Misbehave::HugeLength { then: 16 << 20 }, 2 << 30);
    assert!(err.is_retriable(), "{err:?}");
    assert_closed_as_stalled(&err, &failure);
    assert!(took < REQUEST_TIMEOUT + Duration::from_millis(1500), "{took:?}");
    let (peak1, hwm1) = (vm_peak(), vm_hwm());
    eprintln!(
        "huge length prefix: refused after {refused_after:?} (limit 100 MiB); with the limit at 2 GiB, 16 MiB received then stalled: \
         error after {took:?}, VmPeak +{} MiB, VmHWM +{} MiB",
        (peak1 - peak0) >> 20,
        (hwm1.saturating_sub(hwm0)) >> 20
    );
    assert!(peak1 - peak0 < 1 << 30, "virtual memory grew by {} MiB", (peak1 - peak0) >> 20);
    framing_violation_is_retried_on_a_new_connection(Misbehave::HugeLength { then: 64 });
}

#[test]
fn slow_loris_answer_fails_within_the_request_timeout() {
    let (err, took, failure, _s) = raw_answer(Misbehave::SlowLoris { every: Duration::from_millis(300) }, 1 << 20);
    assert!(err.is_retriable(), "{err:?}");
    assert_closed_as_stalled(&err, &failure);
    eprintln!("slow-loris: request error after {took:?}: {err}");
    assert!(took >= REQUEST_TIMEOUT - Duration::from_millis(50) && took < REQUEST_TIMEOUT + Duration::from_millis(2_000), "{took:?}");
    let flush = framing_violation_is_retried_on_a_new_connection(Misbehave::SlowLoris { every: Duration::from_millis(300) });
    eprintln!("slow-loris: writer flush took {flush:?}");
    assert!(flush < REQUEST_TIMEOUT * 2 + Duration::from_secs(2), "{flush:?}");
}

/// A non-retriable PROTOCOL error of one batch's answer: the batch's callbacks get it exactly
/// once, and the writer goes on over the same connection.
fn batch_fails_with_protocol(how: Misbehave, needle: &str) {
    let server = HostileServer::start(vec![]);
    let conn = client(&server, &[]);
    let (_path, w) = table_and_writer(&conn);
    server.add(Rule { api_key: PRODUCE_LOG, times: 1, how });
    let rec = Recorder::new();
    let started = Instant::now();
    w.append_with_callback(&row![0i64, "m0"], rec.cb(0)).unwrap();
    w.flush(Some(Duration::from_secs(20))).unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "failed at once, not at the 10 s request timeout: {:?}", started.elapsed());
    let e = rec.get(0).completion.error.expect("the broken answer must fail its batch");
    assert_eq!(e.code(), PROTOCOL, "{e:?}");
    assert!(!e.is_retriable(), "{e:?}");
    assert!(e.message().contains(needle), "{e:?}");
    assert_eq!(server.broken(), 1);
    let connections = server.accepted();
    write(&w, &rec, 1..10);
    rec.assert_exactly_once(0..10);
    assert!(rec.all().iter().filter(|s| s.tag > 0).all(|s| s.completion.is_ok()));
    assert_eq!(server.accepted(), connections, "a bad body does not cost the connection");
    w.close(Some(Duration::from_secs(10))).unwrap();
}

#[test]
fn garbage_protobuf() {
    batch_fails_with_protocol(Misbehave::GarbageBody, "ProduceLogResponse");
}

#[test]
fn negative_base_offset() {
    fn rewrite(r: &mut Response) {
        if let Response::ProduceLog(p) = r {
            p.buckets_resp.iter_mut().for_each(|b| b.base_offset = Some(-5));
        }
    }
    batch_fails_with_protocol(Misbehave::Rewrite(rewrite), "base offset -5");
}

#[test]
fn answer_for_an_unknown_bucket() {
    fn rewrite(r: &mut Response) {
        if let Response::ProduceLog(p) = r {
            p.buckets_resp.iter_mut().for_each(|b| b.bucket_id = 977);
        }
    }
    batch_fails_with_protocol(Misbehave::Rewrite(rewrite), "no answer for bucket 0 (answered buckets: [977])");
}

#[test]
fn error_code_out_of_range() {
    fn rewrite(r: &mut Response) {
        if let Response::ProduceLog(p) = r {
            p.buckets_resp.iter_mut().for_each(|b| {
                b.error_code = Some(-1013);
                b.error_message = Some("posing as a client code".into());
            });
        }
    }
    batch_fails_with_protocol(Misbehave::Rewrite(rewrite), "outside Fluss's range");
    fn rewrite_min(r: &mut Response) {
        if let Response::ProduceLog(p) = r {
            p.buckets_resp.iter_mut().for_each(|b| b.error_code = Some(i32::MIN));
        }
    }
    batch_fails_with_protocol(Misbehave::Rewrite(rewrite_min), "error code -2147483648");
}

/// A server that breaks the framing of every produce answer: the batch is retried on new
/// connections until its delivery timeout, then every callback fails exactly once with
/// DELIVERY_TIMEOUT naming the last PROTOCOL error, within the delivery timeout plus one request
/// timeout (C7).
#[test]
fn a_server_that_always_breaks_framing_fails_each_operation_once_at_its_delivery_timeout() {
    let server = HostileServer::start(vec![]);
    let conn = client(&server, &[("client.writer.delivery-timeout", "3s"), SHORT_TIMEOUT]);
    let (_path, w) = table_and_writer(&conn);
    server.add(Rule { api_key: PRODUCE_LOG, times: u32::MAX, how: Misbehave::HugeLength { then: 16 } });
    let rec = Recorder::new();
    let started = Instant::now();
    for i in 0..5 {
        w.append_with_callback(&row![i, format!("m{i}")], rec.cb(i)).unwrap();
    }
    w.flush(Some(Duration::from_secs(20))).unwrap();
    let took = started.elapsed();
    eprintln!("always broken: every callback failed after {took:?}, {} broken answers", server.broken());
    rec.assert_exactly_once(0..5);
    for s in rec.all() {
        let e = s.completion.error.expect("no answer was readable: the operation must fail");
        assert_eq!(e.code(), ClientCode::DeliveryTimeout as i32, "{e:?}");
        assert!(e.message().contains("client.response-max-size"), "the last error must be named: {e:?}");
    }
    assert!(server.broken() >= 2, "retried on new connections: {} answers broken", server.broken());
    assert!(took < Duration::from_secs(3) + REQUEST_TIMEOUT + Duration::from_secs(2), "{took:?}");
    w.close(Some(Duration::from_secs(5))).unwrap();
}
