//! A misbehaving Fluss server on loopback, for `hostile_server.rs`.
//!
//! It speaks enough of the protocol for a client writer: it answers ApiVersions itself (every
//! API key the client knows) and hands every other request to an in-memory embedded engine,
//! whose answers it sends back (Metadata rewritten to name this listener as coordinator and
//! tablet server). A [`Rule`] makes it misbehave on chosen requests, a given number of times:
//! the request still reaches the engine first (so a batch may be stored although its answer is
//! broken, as with a real server that fails after writing), then the answer is broken.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use fluss_writer::backend::{Backend, Dest, Request, Response};
use fluss_writer::cluster::frame::{decode_request, encode_error_response, encode_success_response};
use fluss_writer::embedded::EmbeddedEngine;
use fluss_writer::wire::proto;
use fluss_writer::Config;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

/// API keys this server lists in ApiVersions, with the highest version it accepts.
const KEYS: &[(i16, i16)] = &[
    (1000, 0),
    (1001, 0),
    (1002, 0),
    (1003, 0),
    (1004, 0),
    (1005, 0),
    (1006, 0),
    (1007, 0),
    (1008, 0),
    (1010, 0),
    (1012, 0),
    (1014, 0),
    (1015, 0),
    (1016, 1),
    (1017, 1),
    (1021, 0),
    (1026, 0),
];

/// A way to break an answer.
#[derive(Clone)]
pub enum Misbehave {
    /// Send the first half of the answer's frame, then close the connection.
    TruncateThenClose,
    /// Send the answer under a request id that was never sent on this connection.
    WrongCorrelationId,
    /// Send a SUCCESS frame whose body is not the expected protobuf message.
    GarbageBody,
    /// Send a length prefix of `i32::MAX` (2 GiB - 1) followed by `then` bytes of filler, and
    /// keep the connection open.
    HugeLength { then: usize },
    /// Send the answer one byte every `every` (slow-loris); stop when the client closes.
    SlowLoris { every: Duration },
    /// Send a valid frame with a response changed by this function (impossible values).
    Rewrite(fn(&mut Response)),
}

/// Misbehave on the next `times` requests with this API key.
#[derive(Clone)]
pub struct Rule {
    pub api_key: i16,
    pub times: u32,
    pub how: Misbehave,
}

struct Inner {
    engine: Arc<EmbeddedEngine>,
    port: u16,
    rules: Mutex<Vec<Rule>>,
    /// Connections accepted so far.
    accepted: AtomicUsize,
    /// Answers broken so far.
    broken: AtomicUsize,
}

/// The server. Dropping it stops its runtime (every connection is closed).
pub struct HostileServer {
    inner: Arc<Inner>,
    runtime: Option<Runtime>,
}

impl HostileServer {
    /// Listen on an ephemeral loopback port.
    pub fn start(rules: Vec<Rule>) -> HostileServer {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let engine = EmbeddedEngine::open("embedded", &Config::default()).unwrap();
        let inner = Arc::new(Inner { engine, port, rules: Mutex::new(rules), accepted: AtomicUsize::new(0), broken: AtomicUsize::new(0) });
        let i = inner.clone();
        runtime.spawn(async move {
            while let Ok((s, _)) = listener.accept().await {
                i.accepted.fetch_add(1, Ordering::SeqCst);
                let _ = s.set_nodelay(true);
                tokio::spawn(serve(i.clone(), s));
            }
        });
        HostileServer { inner, runtime: Some(runtime) }
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.inner.port)
    }

    pub fn engine(&self) -> &Arc<EmbeddedEngine> {
        &self.inner.engine
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.inner.accepted.load(Ordering::SeqCst)
    }

    /// Answers broken so far.
    pub fn broken(&self) -> usize {
        self.inner.broken.load(Ordering::SeqCst)
    }

    /// Add rules (e.g. once the table exists).
    pub fn add(&self, rule: Rule) {
        self.inner.rules.lock().unwrap().push(rule);
    }
}

impl Drop for HostileServer {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// Read one request frame (the client's own requests are small; 64 MiB is plenty).
async fn read_request(s: &mut TcpStream) -> Option<fluss_writer::cluster::frame::RequestFrame> {
    let len = s.read_i32().await.ok()?;
    if !(8..=64 << 20).contains(&len) {
        return None;
    }
    let mut buf = vec![0u8; len as usize];
    s.read_exact(&mut buf).await.ok()?;
    decode_request(Bytes::from(buf)).ok()
}

fn api_versions() -> Response {
    Response::ApiVersions(proto::ApiVersionsResponse {
        api_versions: KEYS
            .iter()
            .map(|&(k, max)| proto::PbApiVersion { api_key: k as i32, min_version: 0, max_version: max as i32 })
            .collect(),
        server_type: Some(2),
    })
}

/// Take one misbehaviour for `api_key`, if a rule has one left.
fn take_rule(inner: &Inner, api_key: i16) -> Option<Misbehave> {
    let mut rules = inner.rules.lock().unwrap();
    let r = rules.iter_mut().find(|r| r.api_key == api_key && r.times > 0)?;
    r.times -= 1;
    inner.broken.fetch_add(1, Ordering::SeqCst);
    Some(r.how.clone())
}

async fn serve(inner: Arc<Inner>, mut s: TcpStream) {
    while let Some(req) = read_request(&mut s).await {
        let answer: Result<Response, fluss_writer::Error> = if req.api_key == 1000 {
            Ok(api_versions())
        } else {
            match Request::decode(req.api_key, &req.body) {
                Ok(r) => inner.engine.send(Dest::Any, r).await,
                Err(e) => Err(e),
            }
        };
        let answer = answer.map(|mut r| {
            if let Response::Metadata(m) = &mut r {
                let here = |n: &mut proto::PbServerNode| {
                    n.host = "127.0.0.1".into();
                    n.port = inner.port as i32;
                };
                m.coordinator_server.as_mut().map(here);
                m.tablet_servers.iter_mut().for_each(here);
            }
            r
        });
        let misbehave = take_rule(&inner, req.api_key);
        let frame = match (&answer, &misbehave) {
            (Ok(r), Some(Misbehave::Rewrite(f))) => {
                let mut r = r.clone();
                f(&mut r);
                encode_success_response(req.request_id, &r.encode_body())
            }
            (Ok(r), _) => encode_success_response(req.request_id, &r.encode_body()),
            (Err(e), _) => encode_error_response(req.request_id, e.code(), Some(e.message())),
        };
        let ok = match misbehave {
            None | Some(Misbehave::Rewrite(_)) => s.write_all(&frame).await.is_ok(),
            Some(Misbehave::TruncateThenClose) => {
                let _ = s.write_all(&frame[..frame.len() / 2]).await;
                return;
            }
            Some(Misbehave::WrongCorrelationId) => {
                let wrong = req.request_id.wrapping_add(1_000_000) & 0x7FFF_FFFF;
                let mut f = frame.clone();
                f[5..9].copy_from_slice(&wrong.to_be_bytes());
                s.write_all(&f).await.is_ok()
            }
            Some(Misbehave::GarbageBody) => {
                // Field 1 as a length-delimited value that runs past the end: never valid protobuf.
                let garbage = [0x0A, 0xFF, 0xFF, 0xFF, 0x0F, 0x01, 0x02];
                s.write_all(&encode_success_response(req.request_id, &garbage)).await.is_ok()
            }
            Some(Misbehave::HugeLength { then }) => {
                let mut f = i32::MAX.to_be_bytes().to_vec();
                f.extend(std::iter::repeat_n(0x5Au8, then));
                let _ = s.write_all(&f).await;
                // Keep the socket open and drain: the client must give up by itself.
                let mut sink = [0u8; 4096];
                while matches!(s.read(&mut sink).await, Ok(n) if n > 0) {}
                return;
            }
            Some(Misbehave::SlowLoris { every }) => {
                for b in frame {
                    if s.write_all(&[b]).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(every).await;
                }
                true
            }
        };
        if !ok {
            return;
        }
    }
}

/// Peak virtual memory of this process (`VmPeak`, bytes): an allocation taken from a length
/// prefix shows here at once, even before its pages are touched.
pub fn vm_peak() -> u64 {
    proc_status_kb("VmPeak:") * 1024
}

/// Peak resident memory of this process (`VmHWM`, bytes).
pub fn vm_hwm() -> u64 {
    proc_status_kb("VmHWM:") * 1024
}

fn proc_status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok()).unwrap_or(0)
}
