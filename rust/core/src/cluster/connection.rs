//! One TCP connection to one Fluss server (docs/wire-format.md, "RPC framing").
//!
//! A [`Connection`] owns two tokio tasks: a **writer** that drains a queue of request frames
//! into the socket (coalescing whatever is queued into one flush), and a **reader** that decodes
//! response frames and completes the matching in-flight request by its request id. Responses
//! may arrive out of order; nothing here assumes FIFO. There is no thread or task per request:
//! a request is an entry `request_id -> oneshot sender` in the in-flight map and a future that
//! awaits the receiver with a deadline.
//!
//! Failure model:
//! * ERROR_RESPONSE fails only its request, with the server's code ([`Error::server`]).
//! * SERVER_FAILURE, EOF or an I/O error kill the connection: every in-flight request fails
//!   with `NETWORK_EXCEPTION` (1, retriable) and later sends fail the same way, so the owner
//!   opens a new connection.
//! * A server that breaks the framing kills the connection the same way, with a retriable
//!   `PROTOCOL` error ([`frame::protocol_violation`]): a length prefix below 1 or above the
//!   configured maximum (`client.response-max-size`; the body is never read nor allocated), a
//!   frame cut short by EOF, an undecodable frame header, or an answer to a request id this
//!   connection never sent. A frame body is read as its bytes arrive (the buffer grows by at
//!   most [`frame::READ_CHUNK`] ahead of them), so a length prefix alone allocates nothing large.
//! * A request that is not answered within `request_timeout` fails with `NETWORK_EXCEPTION`
//!   ("timed out") and its entry is removed. If the server answered other requests meanwhile,
//!   the connection stays usable (the server is slow on that request; a late answer is
//!   dropped). If nothing at all arrived since the request was sent, the connection is
//!   unresponsive (a stalled or black-holed peer, a half-open TCP connection): it is killed like
//!   on EOF, so that retries go out on a new connection instead of into the same silence.
//! * [`Connection::close`] fails in-flight and later requests with `CONNECTION_CLOSED`.
//!
//! Every new connection first sends ApiVersions (1000 v0) and records the server's ranges. A
//! request whose API key the server does not list is refused locally with
//! [`ClientCode::Protocol`], because a Fluss server silently drops unknown keys (the request
//! would otherwise hang until its timeout). The version sent is `min(ours, server max)`.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::frame::{self, network_error, ResponseFrame};
use crate::backend::{Request, Response};
use crate::config::SaslPlain;
use crate::error::{ClientCode, Error, FlussCode, Result};
use crate::wire::proto;

/// API key of ApiVersions.
pub const API_VERSIONS_KEY: i16 = 1000;
/// API key of Authenticate (SASL).
pub const AUTHENTICATE_KEY: i16 = 1038;
/// `client_software_name` sent in ApiVersions.
pub const CLIENT_SOFTWARE_NAME: &str = "fluss-writer";
/// `client_software_version` sent in ApiVersions.
pub const CLIENT_SOFTWARE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What a server said in its ApiVersions response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiVersions {
    /// `server_type`: 1 coordinator, 2 tablet server, -1 or `None` unknown.
    pub server_type: Option<i32>,
    /// Supported `(min, max)` version per API key.
    pub ranges: BTreeMap<i16, (i16, i16)>,
}

impl ApiVersions {
    /// Parse an ApiVersions response.
    pub fn from_response(r: &proto::ApiVersionsResponse) -> ApiVersions {
        let ranges = r
            .api_versions
            .iter()
            .filter_map(|v| {
                let key = i16::try_from(v.api_key).ok()?;
                let min = i16::try_from(v.min_version).ok()?;
                let max = i16::try_from(v.max_version).ok()?;
                Some((key, (min, max)))
            })
            .collect();
        ApiVersions { server_type: r.server_type, ranges }
    }

    /// Whether the server registered this API key.
    pub fn supports(&self, api_key: i16) -> bool {
        self.ranges.contains_key(&api_key)
    }

    /// The version to send for `api_key` when fluss-writer supports versions `0..=ours`:
    /// `min(ours, server max)`, or a [`ClientCode::Protocol`] error if the server does not list
    /// the key or the ranges do not overlap.
    pub fn negotiate(&self, api_key: i16, name: &str, ours: i16) -> Result<i16> {
        let Some(&(min, max)) = self.ranges.get(&api_key) else {
            return Err(Error::client(
                ClientCode::Protocol,
                format!(
                    "{} server does not support {name} (api key {api_key}); a Fluss server drops unknown requests, so it was not sent",
                    self.kind()
                ),
            ));
        };
        let version = ours.min(max);
        if version < min.max(0) {
            return Err(Error::client(
                ClientCode::Protocol,
                format!("{name} (api key {api_key}): server supports versions {min}..={max}, fluss-writer supports 0..={ours}"),
            ));
        }
        Ok(version)
    }

    /// "coordinator", "tablet" or "unknown".
    pub fn kind(&self) -> &'static str {
        match self.server_type {
            Some(1) => "coordinator",
            Some(2) => "tablet",
            _ => "unknown",
        }
    }
}

/// A request frame waiting for the writer task. The header and body are written separately, so
/// the body is never copied into a frame buffer.
struct Outgoing {
    header: [u8; frame::LENGTH_LEN + frame::REQUEST_HEADER_LEN],
    body: Vec<u8>,
}

struct State {
    inflight: HashMap<i32, oneshot::Sender<Result<Bytes>>>,
    /// Set once the connection is dead or closed; later sends fail with this error.
    failed: Option<Error>,
    /// Response frames read so far (answered, late or unknown): a request that times out with
    /// this count unchanged since it was sent met a silent connection.
    frames_read: u64,
    /// When the last response frame arrived (or the connection opened).
    last_frame: Instant,
}

/// The least silence (no response frame at all) after which a timed-out request closes its
/// connection as dead. A request timeout far below a server's answer time (a few milliseconds)
/// says the server is slower than the budget, not that the connection died: its late answers
/// still arrive there (and prove, for a resent batch, that the server had taken the first send).
const SILENCE_FLOOR: Duration = Duration::from_millis(250);

/// State shared by the connection handle, its two tasks and the pending request futures.
struct Shared {
    addr: String,
    /// Request ids handed out so far (wrapping); ids are this counter masked to 31 bits.
    next_id: AtomicU32,
    /// `client.response-max-size`.
    max_response: usize,
    /// How long the rest of a frame may take once its first byte arrived (the request timeout).
    stall: Duration,
    state: Mutex<State>,
    tasks: OnceLock<[AbortHandle; 2]>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hand the answer to its request. `Err` when `request_id` was never sent on this
    /// connection: the server broke the protocol and the connection must die.
    fn complete(&self, request_id: i32, result: Result<Bytes>) -> Result<()> {
        let tx = {
            let mut st = self.lock();
            st.frames_read += 1;
            st.last_frame = Instant::now();
            st.inflight.remove(&request_id)
        };
        match tx {
            // The receiver may be gone (caller dropped the future): nothing to do.
            Some(tx) => drop(tx.send(result)),
            None if !self.was_issued(request_id) => {
                return Err(frame::protocol_violation(format!(
                    "{} answered request id {request_id}, which this connection never sent",
                    self.addr
                )));
            }
            None => log::debug!("fluss connection {}: response to timed-out or dropped request {request_id} ignored", self.addr),
        }
        Ok(())
    }

    /// Whether `request_id` was handed out on this connection. Ids are a counter masked to 31
    /// bits: until the counter passed 2^31, exactly the ids below it were issued; after that
    /// every non-negative id has been.
    fn was_issued(&self, request_id: i32) -> bool {
        if request_id < 0 {
            return false;
        }
        let issued = self.next_id.load(Ordering::Relaxed);
        issued > 0x7FFF_FFFF || (request_id as u32) < issued
    }

    /// Mark the connection dead (first error wins), fail every in-flight request with `error`
    /// and stop both tasks.
    fn fail_all(&self, error: Error) {
        let drained: Vec<_> = {
            let mut st = self.lock();
            if st.failed.is_none() {
                st.failed = Some(error.clone());
            }
            st.inflight.drain().map(|(_, tx)| tx).collect()
        };
        if !drained.is_empty() {
            log::debug!("fluss connection {}: failing {} in-flight request(s): {error}", self.addr, drained.len());
        }
        for tx in drained {
            let _ = tx.send(Err(error.clone()));
        }
        if let Some(tasks) = self.tasks.get() {
            for t in tasks {
                t.abort();
            }
        }
    }
}

/// Removes a request's in-flight entry when its future ends (answered, timed out or dropped).
struct InflightGuard {
    shared: Arc<Shared>,
    request_id: i32,
}

impl Drop for InflightGuard {
    fn drop(&mut self) {
        self.shared.lock().inflight.remove(&self.request_id);
    }
}

/// One TCP connection to one Fluss server. See the module docs.
pub struct Connection {
    shared: Arc<Shared>,
    queue: mpsc::UnboundedSender<Outgoing>,
    versions: OnceLock<ApiVersions>,
    request_timeout: Duration,
}

impl Connection {
    /// Connect to `addr` ("host:port"), start the reader and writer tasks on `runtime`, and run
    /// the ApiVersions handshake. Connecting and the handshake each take at most
    /// `request_timeout`. Failures are `NETWORK_EXCEPTION` (1, retriable).
    pub async fn open(addr: &str, request_timeout: Duration, runtime: &Handle) -> Result<Arc<Connection>> {
        Connection::open_with(addr, request_timeout, runtime, None, frame::DEFAULT_MAX_RESPONSE_FRAME).await
    }

    /// [`open`](Self::open), then, with `sasl`, authenticate with SASL/PLAIN (Authenticate, 1038)
    /// before anything else is sent. A refused authentication is the server's
    /// `AUTHENTICATE_EXCEPTION` (46, not retriable; 51 is its retriable form); a server that
    /// does not answer it within `request_timeout` (a plaintext listener ignores the request)
    /// fails with a non-retriable error that says so. The password never appears in an error.
    /// Response frames longer than `max_response` bytes (`client.response-max-size`) kill the
    /// connection with a `PROTOCOL` error.
    pub async fn open_with(
        addr: &str,
        request_timeout: Duration,
        runtime: &Handle,
        sasl: Option<&SaslPlain>,
        max_response: usize,
    ) -> Result<Arc<Connection>> {
        let stream = match tokio::time::timeout(request_timeout, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return Err(network_error(format!("cannot connect to {addr}: {e}"))),
            Err(_) => return Err(network_error(format!("connecting to {addr} timed out after {} ms", request_timeout.as_millis()))),
        };
        stream.set_nodelay(true).map_err(|e| network_error(format!("TCP_NODELAY on {addr}: {e}")))?;
        let conn = Connection::start(addr, stream, request_timeout, runtime, max_response);
        let body = proto::ApiVersionsRequest {
            client_software_name: CLIENT_SOFTWARE_NAME.into(),
            client_software_version: CLIENT_SOFTWARE_VERSION.into(),
        }
        .encode_to_vec();
        let handshake = async {
            let body = conn.enqueue(API_VERSIONS_KEY, 0, "ApiVersions", body)?.await?;
            proto::ApiVersionsResponse::decode(body).map_err(|e| Error::protocol(format!("bad ApiVersionsResponse from {addr}: {e}")))
        };
        match handshake.await {
            Ok(resp) => {
                let v = ApiVersions::from_response(&resp);
                log::debug!("fluss connection {addr}: {} server, {} api keys", v.kind(), v.ranges.len());
                let _ = conn.versions.set(v);
            }
            Err(e) => {
                conn.shared.fail_all(e.clone());
                return Err(e.context(format!("ApiVersions handshake with {addr}")));
            }
        }
        if let Some(sasl) = sasl {
            if let Err(e) = conn.authenticate(sasl).await {
                conn.shared.fail_all(e.clone());
                return Err(e.context(format!("SASL/PLAIN authentication of user {:?} with {addr}", sasl.username)));
            }
            log::debug!("fluss connection {addr}: authenticated as {:?}", sasl.username);
        }
        Ok(conn)
    }

    /// One SASL/PLAIN exchange: PLAIN sends its single token and expects no further challenge.
    async fn authenticate(&self, sasl: &SaslPlain) -> Result<()> {
        if !self.api_versions().ranges.is_empty() && !self.api_versions().ranges.contains_key(&AUTHENTICATE_KEY) {
            return Err(Error::server(
                FlussCode::AUTHENTICATE_EXCEPTION,
                "the server does not offer Authenticate: is this a PLAINTEXT listener while client.security.protocol = SASL?",
            ));
        }
        let body = proto::AuthenticateRequest { protocol: "PLAIN".into(), token: sasl.token().into() }.encode_to_vec();
        let answer = match self.enqueue(AUTHENTICATE_KEY, 0, "Authenticate", body) {
            Ok(f) => f.await,
            Err(e) => Err(e),
        };
        match answer {
            Ok(body) => {
                let resp =
                    proto::AuthenticateResponse::decode(body).map_err(|e| Error::protocol(format!("bad AuthenticateResponse: {e}")))?;
                match resp.challenge {
                    Some(c) if !c.is_empty() => Err(Error::protocol("the server sent a SASL challenge after the PLAIN token")),
                    _ => Ok(()),
                }
            }
            // No answer in time: a plaintext listener drops an Authenticate it does not expect.
            Err(e) if e.code() == FlussCode::REQUEST_TIME_OUT || e.code() == FlussCode::NETWORK_EXCEPTION => Err(Error::server(
                FlussCode::AUTHENTICATE_EXCEPTION,
                format!(
                    "the server did not complete SASL authentication ({e}); is client.security.protocol = SASL right for this listener?"
                ),
            )),
            // RETRIABLE_AUTHENTICATE (51) is no RetriableException in Fluss's table: only the
            // authentication handshake treats it as one, so a `connect` that meets it may be
            // tried again (and the bootstrap loop does not take it for a refusal).
            Err(e) if e.code() == FlussCode::RETRIABLE_AUTHENTICATE_EXCEPTION => {
                Err(Error::from_parts(e.code(), e.message().to_string(), true))
            }
            Err(e) => Err(e),
        }
    }

    /// Wrap an already connected stream (no handshake): spawn the two tasks.
    fn start(addr: &str, stream: TcpStream, request_timeout: Duration, runtime: &Handle, max_response: usize) -> Arc<Connection> {
        let (rd, wr) = stream.into_split();
        let shared = Arc::new(Shared {
            addr: addr.to_string(),
            next_id: AtomicU32::new(0),
            max_response,
            stall: request_timeout,
            state: Mutex::new(State { inflight: HashMap::new(), failed: None, frames_read: 0, last_frame: Instant::now() }),
            tasks: OnceLock::new(),
        });
        let (queue, rx) = mpsc::unbounded_channel();
        let reader = runtime.spawn(read_loop(shared.clone(), rd));
        let writer = runtime.spawn(write_loop(shared.clone(), wr, rx));
        let _ = shared.tasks.set([reader.abort_handle(), writer.abort_handle()]);
        // A task that already failed before the handles were stored could not abort its peer.
        if shared.lock().failed.is_some() {
            reader.abort();
            writer.abort();
        }
        Arc::new(Connection { shared, queue, versions: OnceLock::new(), request_timeout })
    }

    /// The address this connection was opened to.
    pub fn addr(&self) -> &str {
        &self.shared.addr
    }

    /// The server's ApiVersions (empty before the handshake finished).
    pub fn api_versions(&self) -> &ApiVersions {
        static EMPTY: OnceLock<ApiVersions> = OnceLock::new();
        self.versions.get().unwrap_or_else(|| EMPTY.get_or_init(ApiVersions::default))
    }

    /// False once the connection failed or was closed; the owner should open a new one.
    pub fn is_alive(&self) -> bool {
        self.shared.lock().failed.is_none()
    }

    /// Why the connection is dead, if it is.
    pub fn failure(&self) -> Option<Error> {
        self.shared.lock().failed.clone()
    }

    /// Number of requests waiting for a response.
    pub fn in_flight(&self) -> usize {
        self.shared.lock().inflight.len()
    }

    /// Send a request. The frame is queued **before this returns** (so frames go out in call
    /// order); the returned future only waits for the response, at most `request_timeout`.
    /// Dropping the future forgets the request.
    pub fn send(&self, request: &Request) -> impl Future<Output = Result<Response>> + Send + 'static {
        let api_key = request.api_key();
        let name = request.name();
        let queued = self
            .api_versions()
            .negotiate(api_key, name, request.api_version())
            .and_then(|version| match request.min_version() {
                min if version < min => Err(Error::server(
                    FlussCode::UNSUPPORTED_VERSION,
                    format!("{name} needs version {min} (Fluss 1.0.0) for writes to a historical partition; the server supports up to {version}"),
                )),
                _ => Ok(version),
            })
            .and_then(|version| self.enqueue(api_key, version, name, request.encode_body()));
        async move {
            let body = queued?.await?;
            Response::decode(api_key, &body)
        }
    }

    /// Queue one frame with an explicit version (no ApiVersions check) and return the future of
    /// its raw response body.
    pub fn send_raw(&self, api_key: i16, api_version: i16, body: Vec<u8>) -> impl Future<Output = Result<Bytes>> + Send + 'static {
        let queued = self.enqueue(api_key, api_version, "request", body);
        async move { queued?.await }
    }

    fn enqueue(
        &self,
        api_key: i16,
        api_version: i16,
        name: &'static str,
        body: Vec<u8>,
    ) -> Result<impl Future<Output = Result<Bytes>> + Send + 'static> {
        let request_id = (self.shared.next_id.fetch_add(1, Ordering::Relaxed) & 0x7FFF_FFFF) as i32;
        let header = frame::request_header(api_key, api_version, request_id, body.len())?;
        let (tx, rx) = oneshot::channel();
        let frames_at_send = {
            let mut st = self.shared.lock();
            if let Some(e) = &st.failed {
                return Err(e.clone());
            }
            st.inflight.insert(request_id, tx);
            st.frames_read
        };
        let guard = InflightGuard { shared: self.shared.clone(), request_id };
        if self.queue.send(Outgoing { header, body }).is_err() {
            // The writer task is gone; the reader's failure (or close) says why.
            let e = self.failure().unwrap_or_else(|| network_error(format!("connection to {} is closed", self.shared.addr)));
            return Err(e);
        }
        let deadline = Instant::now() + self.request_timeout;
        let timeout = self.request_timeout;
        Ok(async move {
            let guard = guard;
            match tokio::time::timeout_at(deadline, rx).await {
                Ok(Ok(result)) => result,
                Ok(Err(_)) => Err(guard
                    .shared
                    .lock()
                    .failed
                    .clone()
                    .unwrap_or_else(|| network_error(format!("connection to {} dropped {name}", guard.shared.addr)))),
                Err(_) => {
                    let silent = {
                        let st = guard.shared.lock();
                        st.frames_read == frames_at_send && st.last_frame.elapsed() >= SILENCE_FLOOR
                    };
                    let e = network_error(format!(
                        "{name} (request id {request_id}) to {} timed out after {} ms{}",
                        guard.shared.addr,
                        timeout.as_millis(),
                        if silent { "; nothing arrived on the connection meanwhile: closing it" } else { "" }
                    ));
                    if silent {
                        guard.shared.fail_all(e.clone());
                    }
                    Err(e)
                }
            }
        })
    }

    /// Close the connection: in-flight and later requests fail with `CONNECTION_CLOSED`.
    pub fn close(&self) {
        self.shared.fail_all(Error::client(ClientCode::ConnectionClosed, format!("connection to {} was closed", self.shared.addr)));
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.close();
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("addr", &self.shared.addr)
            .field("alive", &self.is_alive())
            .field("server", &self.api_versions().kind())
            .finish()
    }
}

/// Read one response frame: `Ok(None)` at a clean EOF (between frames). The length prefix is
/// checked against `max` before anything is allocated, and the body buffer grows only as its
/// bytes arrive (doubling, at most [`frame::READ_CHUNK`] past twice what was received), so a
/// lying prefix costs nothing.
/// Errors are the connection's: `NETWORK_EXCEPTION` for I/O, retriable `PROTOCOL` for framing.
///
/// Once a frame's first byte arrived, the rest of it must arrive within `stall` (the request
/// timeout): a server that trickles a frame (slow-loris) would otherwise hold every request of
/// the connection behind it forever. Past it, the connection dies with a retriable `PROTOCOL`.
pub(crate) async fn read_frame<R: tokio::io::AsyncRead + Unpin>(
    rd: &mut R,
    max: usize,
    stall: Duration,
    addr: &str,
) -> Result<Option<Bytes>> {
    let first = match rd.read_u8().await {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(network_error(format!("reading from {addr}: {e}"))),
    };
    let mut prefix = [first, 0, 0, 0];
    let mut buf: Vec<u8> = Vec::new();
    let mut len = 0usize;
    let whole = async {
        match rd.read_exact(&mut prefix[1..]).await {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return Err(frame::protocol_violation(format!("{addr} closed the connection inside a frame's length prefix")))
            }
            Err(e) => return Err(network_error(format!("reading from {addr}: {e}"))),
        }
        len = frame::check_response_length(i32::from_be_bytes(prefix), max)
            .map_err(|e| frame::protocol_violation(format!("{addr}: {}", e.message())))?;
        read_body(rd, len, &mut buf, addr).await
    };
    match tokio::time::timeout(stall, whole).await {
        Ok(r) => r?,
        Err(_) => {
            return Err(frame::protocol_violation(format!(
                "{addr} sent {} of {len} bytes of a response frame in {} ms (client.request-timeout); the connection is stalled",
                buf.len(),
                stall.as_millis()
            )))
        }
    }
    Ok(Some(Bytes::from(buf)))
}

/// Read `len` body bytes into `buf`, growing it as bytes arrive: doubling, but never past `len`
/// nor more than [`frame::READ_CHUNK`] past twice what was received.
async fn read_body<R: tokio::io::AsyncRead + Unpin>(rd: &mut R, len: usize, buf: &mut Vec<u8>, addr: &str) -> Result<()> {
    while buf.len() < len {
        let start = buf.len();
        let want = (len - start).min(frame::READ_CHUNK);
        if buf.capacity() < start + want {
            let target = (buf.capacity() * 2).max(start + want).min(len);
            buf.reserve_exact(target - start);
        }
        // Into the spare capacity: `buf.len()` is always the bytes received, also when the
        // frame's deadline cancels this read.
        let mut room = bytes::BufMut::limit(&mut *buf, want);
        let n = match rd.read_buf(&mut room).await {
            Ok(n) => n,
            Err(e) => return Err(network_error(format!("reading from {addr}: {e}"))),
        };
        if n == 0 {
            return Err(frame::protocol_violation(format!(
                "{addr} closed the connection inside a response frame ({} of {len} bytes received)",
                buf.len()
            )));
        }
    }
    Ok(())
}

async fn read_loop(shared: Arc<Shared>, rd: OwnedReadHalf) {
    let mut rd = BufReader::with_capacity(64 << 10, rd);
    let addr = shared.addr.clone();
    let error = loop {
        match read_frame(&mut rd, shared.max_response, shared.stall, &addr).await {
            Ok(Some(bytes)) => {
                let done = match frame::decode_response(bytes) {
                    Ok(ResponseFrame::Success { request_id, body }) => shared.complete(request_id, Ok(body)),
                    Ok(ResponseFrame::Error { request_id, error }) => shared.complete(request_id, Err(error)),
                    Ok(ResponseFrame::ServerFailure { error }) => break network_error(format!("server failure from {addr}: {error}")),
                    Err(e) => break frame::protocol_violation(format!("undecodable response from {addr}: {}", e.message())),
                };
                if let Err(e) = done {
                    break e;
                }
            }
            Ok(None) => break network_error(format!("connection closed by {addr}")),
            Err(e) => break e,
        }
    };
    log::debug!("fluss connection {addr} is dead: {error}");
    shared.fail_all(error);
}

async fn write_loop(shared: Arc<Shared>, wr: OwnedWriteHalf, mut queue: mpsc::UnboundedReceiver<Outgoing>) {
    let mut wr = BufWriter::with_capacity(64 << 10, wr);
    while let Some(first) = queue.recv().await {
        let mut next = Some(first);
        let result: io::Result<()> = async {
            while let Some(out) = next.take() {
                wr.write_all(&out.header).await?;
                wr.write_all(&out.body).await?;
                next = queue.try_recv().ok();
            }
            wr.flush().await
        }
        .await;
        if let Err(e) = result {
            shared.fail_all(network_error(format!("writing to {}: {e}", shared.addr)));
            return;
        }
    }
    // The connection handle was dropped: close our side.
    let _ = wr.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::frame::{decode_request, encode_error_response, encode_server_failure, encode_success_response};
    use tokio::net::TcpListener;

    /// Read one request frame from a test server's socket.
    pub(crate) async fn read_request(s: &mut TcpStream) -> Option<frame::RequestFrame> {
        let len = s.read_i32().await.ok()?;
        let mut buf = vec![0u8; len as usize];
        s.read_exact(&mut buf).await.ok()?;
        Some(decode_request(Bytes::from(buf)).unwrap())
    }

    fn versions_body(keys: &[(i16, i16, i16)], server_type: i32) -> Vec<u8> {
        proto::ApiVersionsResponse {
            api_versions: keys
                .iter()
                .map(|&(k, min, max)| proto::PbApiVersion { api_key: k as i32, min_version: min as i32, max_version: max as i32 })
                .collect(),
            server_type: Some(server_type),
        }
        .encode_to_vec()
    }

    /// Accept one connection, answer the ApiVersions handshake, return the socket.
    async fn accept_with_handshake(l: &TcpListener, keys: &[(i16, i16, i16)]) -> TcpStream {
        let (mut s, _) = l.accept().await.unwrap();
        let req = read_request(&mut s).await.unwrap();
        assert_eq!((req.api_key, req.api_version), (1000, 0));
        let body = proto::ApiVersionsRequest::decode(req.body).unwrap();
        assert_eq!(body.client_software_name, "fluss-writer");
        assert_eq!(body.client_software_version, env!("CARGO_PKG_VERSION"));
        s.write_all(&encode_success_response(req.request_id, &versions_body(keys, 2))).await.unwrap();
        s
    }

    fn list_dbs() -> Request {
        Request::ListDatabases(proto::ListDatabasesRequest {})
    }

    fn dbs_body(names: &[&str]) -> Vec<u8> {
        proto::ListDatabasesResponse { database_name: names.iter().map(|s| s.to_string()).collect() }.encode_to_vec()
    }

    fn db_names(r: Response) -> Vec<String> {
        match r {
            Response::ListDatabases(r) => r.database_name,
            other => panic!("{other:?}"),
        }
    }

    async fn listener() -> (TcpListener, String) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap().to_string();
        (l, addr)
    }

    /// The handshake's own rule: RETRIABLE_AUTHENTICATE (51) answering Authenticate is
    /// retriable, AUTHENTICATE_EXCEPTION (46) is not.
    #[tokio::test]
    async fn retriable_authenticate_is_retriable_in_the_handshake_only() {
        for (answer, retriable) in [(51, true), (46, false)] {
            let (l, addr) = listener().await;
            let server = tokio::spawn(async move {
                let mut s = accept_with_handshake(&l, &[(1000, 0, 0), (AUTHENTICATE_KEY, 0, 0)]).await;
                let req = read_request(&mut s).await.unwrap();
                assert_eq!(req.api_key, AUTHENTICATE_KEY);
                s.write_all(&encode_error_response(req.request_id, answer, Some("not now"))).await.unwrap();
                let _ = read_request(&mut s).await;
            });
            let sasl = crate::config::SaslPlain { username: "u".into(), password: crate::config::Secret::new("p") };
            let Err(e) = Connection::open_with(&addr, Duration::from_secs(5), &Handle::current(), Some(&sasl), frame::DEFAULT_MAX_RESPONSE_FRAME).await else {
                panic!("authentication refused, yet the connection opened");
            };
            assert_eq!((e.code(), e.is_retriable()), (answer, retriable), "{e}");
            assert!(e.message().contains("not now"), "{e}");
            server.abort();
        }
        // Anywhere else 51 is what Fluss's table says: not retriable.
        assert!(!Error::server(FlussCode::RETRIABLE_AUTHENTICATE_EXCEPTION, "x").is_retriable());
    }

    #[tokio::test]
    async fn out_of_order_responses_error_response_server_failure_and_eof() {
        let (l, addr) = listener().await;
        let server = tokio::spawn(async move {
            let mut s = accept_with_handshake(&l, &[(1000, 0, 0), (1003, 0, 0), (1016, 0, 1)]).await;
            // Two requests, answered in reverse order.
            let a = read_request(&mut s).await.unwrap();
            let b = read_request(&mut s).await.unwrap();
            assert_eq!((a.api_key, b.api_key), (1003, 1003));
            assert_ne!(a.request_id, b.request_id);
            s.write_all(&encode_success_response(b.request_id, &dbs_body(&["second"]))).await.unwrap();
            s.write_all(&encode_success_response(a.request_id, &dbs_body(&["first"]))).await.unwrap();
            // An ERROR_RESPONSE fails only its request.
            let c = read_request(&mut s).await.unwrap();
            s.write_all(&encode_error_response(c.request_id, 7, Some("table does not exist"))).await.unwrap();
            // Two in flight, then SERVER_FAILURE (no request id) and close.
            let d = read_request(&mut s).await.unwrap();
            let e = read_request(&mut s).await.unwrap();
            assert_eq!(e.request_id, d.request_id + 1);
            s.write_all(&encode_server_failure(-1, Some("frame too large"))).await.unwrap();
            drop(s);
        });
        let conn = Connection::open(&addr, Duration::from_secs(5), &Handle::current()).await.unwrap();
        assert_eq!(conn.api_versions().kind(), "tablet");
        assert_eq!(conn.api_versions().ranges.get(&1016), Some(&(0, 1)));
        let fa = conn.send(&list_dbs());
        let fb = conn.send(&list_dbs());
        // Await the first one first: it is answered second.
        assert_eq!(db_names(fa.await.unwrap()), vec!["first"]);
        assert_eq!(db_names(fb.await.unwrap()), vec!["second"]);
        let err = conn.send(&list_dbs()).await.unwrap_err();
        assert_eq!((err.code(), err.message(), err.is_retriable()), (7, "table does not exist", false));
        assert!(conn.is_alive());
        let fd = conn.send(&list_dbs());
        let fe = conn.send(&list_dbs());
        for f in [fd, fe] {
            let err = f.await.unwrap_err();
            assert_eq!(err.code(), 1, "{err:?}");
            assert!(err.is_retriable());
            assert!(err.message().contains("server failure"), "{err:?}");
        }
        assert!(!conn.is_alive());
        assert_eq!(conn.in_flight(), 0);
        let err = conn.send(&list_dbs()).await.unwrap_err();
        assert_eq!(err.code(), 1);
        server.await.unwrap();
    }

    #[tokio::test]
    async fn eof_fails_in_flight_with_network_exception() {
        let (l, addr) = listener().await;
        let server = tokio::spawn(async move {
            let mut s = accept_with_handshake(&l, &[(1003, 0, 0)]).await;
            let _ = read_request(&mut s).await.unwrap();
            drop(s); // close without answering
        });
        let conn = Connection::open(&addr, Duration::from_secs(5), &Handle::current()).await.unwrap();
        let err = conn.send(&list_dbs()).await.unwrap_err();
        assert_eq!(err.code(), 1);
        assert!(err.is_retriable());
        assert!(!conn.is_alive());
        server.await.unwrap();
    }

    #[tokio::test]
    async fn unanswered_request_times_out_and_connection_survives() {
        let (l, addr) = listener().await;
        let server = tokio::spawn(async move {
            let mut s = accept_with_handshake(&l, &[(1003, 0, 0)]).await;
            let ignored = read_request(&mut s).await.unwrap();
            let answered = read_request(&mut s).await.unwrap();
            s.write_all(&encode_success_response(answered.request_id, &dbs_body(&["x"]))).await.unwrap();
            // A late answer to the timed-out request (after the client gave up on it) is dropped.
            tokio::time::sleep(Duration::from_millis(2_500)).await;
            s.write_all(&encode_success_response(ignored.request_id, &dbs_body(&["late"]))).await.unwrap();
            let again = read_request(&mut s).await.unwrap();
            s.write_all(&encode_success_response(again.request_id, &dbs_body(&["y"]))).await.unwrap();
            let _ = read_request(&mut s).await;
        });
        // A 2 s request timeout: a stall of this (single) runtime thread shorter than that cannot
        // make the answered request look unanswered too.
        let conn = Connection::open(&addr, Duration::from_millis(2_000), &Handle::current()).await.unwrap();
        let started = std::time::Instant::now();
        let (ignored, answered) = tokio::join!(conn.send(&list_dbs()), conn.send(&list_dbs()));
        let took = started.elapsed();
        let err = ignored.unwrap_err();
        assert_eq!(err.code(), 1);
        assert!(err.is_retriable());
        assert!(err.message().contains("timed out") && !err.message().contains("closing"), "{err:?}");
        assert!(took >= Duration::from_millis(1_990) && took < Duration::from_secs(6), "{took:?}");
        assert_eq!(db_names(answered.unwrap()), vec!["x"]);
        assert_eq!(conn.in_flight(), 0);
        // The server answered another request meanwhile: slow on one request, not dead.
        assert!(conn.is_alive());
        assert_eq!(db_names(conn.send(&list_dbs()).await.unwrap()), vec!["y"]);
        conn.close();
        server.await.unwrap();
    }

    #[tokio::test]
    async fn a_silent_connection_is_closed_when_a_request_times_out() {
        let (l, addr) = listener().await;
        let server = tokio::spawn(async move {
            let mut s = accept_with_handshake(&l, &[(1003, 0, 0)]).await;
            // Read both requests, answer neither, keep the socket open (a stalled peer).
            let _ = read_request(&mut s).await.unwrap();
            let _ = read_request(&mut s).await.unwrap();
            // The client closes the connection: EOF here.
            assert!(read_request(&mut s).await.is_none());
        });
        let conn = Connection::open(&addr, Duration::from_millis(300), &Handle::current()).await.unwrap();
        let first = conn.send(&list_dbs());
        let second = conn.send(&list_dbs());
        let (a, b) = tokio::join!(first, second);
        let (a, b) = (a.unwrap_err(), b.unwrap_err());
        assert!(a.message().contains("timed out") && a.message().contains("closing it"), "{a:?}");
        assert_eq!(b.code(), 1, "the other in-flight request fails with the connection: {b:?}");
        assert!(b.is_retriable());
        assert!(!conn.is_alive(), "a connection on which nothing arrived is closed");
        assert_eq!(conn.send(&list_dbs()).await.unwrap_err().code(), 1, "later sends fail: the owner opens a new connection");
        tokio::time::timeout(Duration::from_secs(5), server).await.expect("the client closed the socket").unwrap();
    }

    #[tokio::test]
    async fn unsupported_key_is_refused_without_sending_and_versions_are_negotiated() {
        let (l, addr) = listener().await;
        let server = tokio::spawn(async move {
            // A "tablet" that lists PutKv 0..1 and Lookup 0..0 but no ListDatabases.
            let mut s = accept_with_handshake(&l, &[(1016, 0, 1), (1017, 0, 0)]).await;
            let put = read_request(&mut s).await.unwrap();
            assert_eq!((put.api_key, put.api_version), (1016, 1));
            s.write_all(&encode_success_response(put.request_id, &[])).await.unwrap();
            let lookup = read_request(&mut s).await.unwrap();
            assert_eq!((lookup.api_key, lookup.api_version), (1017, 0));
            s.write_all(&encode_success_response(lookup.request_id, &[])).await.unwrap();
            // Nothing else may arrive.
            assert!(read_request(&mut s).await.is_none());
        });
        let conn = Connection::open(&addr, Duration::from_secs(5), &Handle::current()).await.unwrap();
        let err = conn.send(&list_dbs()).await.unwrap_err();
        assert_eq!(err.code(), ClientCode::Protocol as i32, "{err:?}");
        assert!(err.message().contains("1003"), "{err:?}");
        let put = Request::PutKv(proto::PutKvRequest { acks: -1, table_id: 1, timeout_ms: 1000, ..Default::default() });
        assert!(matches!(conn.send(&put).await.unwrap(), Response::PutKv(_)));
        let lookup = Request::Lookup(proto::LookupRequest { table_id: 1, buckets_req: vec![] });
        assert!(matches!(conn.send(&lookup).await.unwrap(), Response::Lookup(_)));
        drop(conn);
        server.await.unwrap();
    }

    #[tokio::test]
    async fn close_fails_in_flight_with_connection_closed() {
        let (l, addr) = listener().await;
        let server = tokio::spawn(async move {
            let mut s = accept_with_handshake(&l, &[(1003, 0, 0)]).await;
            let _ = read_request(&mut s).await;
            let _ = read_request(&mut s).await; // EOF after close
        });
        let conn = Connection::open(&addr, Duration::from_secs(5), &Handle::current()).await.unwrap();
        let pending = conn.send(&list_dbs());
        tokio::time::sleep(Duration::from_millis(50)).await;
        conn.close();
        let err = pending.await.unwrap_err();
        assert_eq!(err.code(), ClientCode::ConnectionClosed as i32);
        let err = conn.send(&list_dbs()).await.unwrap_err();
        assert_eq!(err.code(), ClientCode::ConnectionClosed as i32);
        server.await.unwrap();
    }

    #[tokio::test]
    async fn connect_refused_is_retriable_network_exception() {
        let (l, addr) = listener().await;
        drop(l);
        let err = Connection::open(&addr, Duration::from_secs(2), &Handle::current()).await.unwrap_err();
        assert_eq!(err.code(), 1);
        assert!(err.is_retriable());
    }

    /// Open a connection to a server that answers the handshake and then the first request
    /// with `reply` (raw bytes), and return the error of that request and the connection.
    async fn first_request_after(reply: Vec<u8>, max: usize) -> (Error, Arc<Connection>) {
        let (l, addr) = listener().await;
        tokio::spawn(async move {
            let mut s = accept_with_handshake(&l, &[(1003, 0, 0)]).await;
            let _ = read_request(&mut s).await;
            let _ = s.write_all(&reply).await;
            // Keep the socket open for a while: the client must not wait for a close.
            tokio::time::sleep(Duration::from_secs(5)).await;
        });
        let conn = Connection::open_with(&addr, Duration::from_secs(5), &Handle::current(), None, max).await.unwrap();
        let started = std::time::Instant::now();
        let err = conn.send(&list_dbs()).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        (err, conn)
    }

    #[tokio::test]
    async fn length_prefix_over_the_limit_kills_the_connection_with_a_retriable_protocol_error() {
        for (prefix, max) in [(i32::MAX, frame::DEFAULT_MAX_RESPONSE_FRAME), (2048, 2047), (0, 100), (-5, 100), (i32::MIN, 100)] {
            let (err, conn) = first_request_after(prefix.to_be_bytes().to_vec(), max).await;
            assert_eq!(err.code(), ClientCode::Protocol as i32, "{prefix}: {err:?}");
            assert!(err.is_retriable(), "{err:?}");
            if prefix > 0 {
                assert!(err.message().contains("client.response-max-size"), "{err:?}");
            }
            assert!(!conn.is_alive());
            assert_eq!(conn.failure().unwrap().code(), ClientCode::Protocol as i32);
            assert_eq!(conn.in_flight(), 0);
        }
    }

    #[tokio::test]
    async fn a_frame_cut_short_by_eof_is_a_protocol_error() {
        let (l, addr) = listener().await;
        tokio::spawn(async move {
            let mut s = accept_with_handshake(&l, &[(1003, 0, 0)]).await;
            let r = read_request(&mut s).await.unwrap();
            let full = encode_success_response(r.request_id, &dbs_body(&["abcdefgh"]));
            let _ = s.write_all(&full[..full.len() - 3]).await;
            // then close
        });
        let conn = Connection::open(&addr, Duration::from_secs(5), &Handle::current()).await.unwrap();
        let err = conn.send(&list_dbs()).await.unwrap_err();
        assert_eq!(err.code(), ClientCode::Protocol as i32, "{err:?}");
        assert!(err.is_retriable());
        assert!(err.message().contains("inside a response frame"), "{err:?}");
        assert!(!conn.is_alive());
    }

    #[tokio::test]
    async fn an_answer_to_a_request_never_sent_kills_the_connection() {
        for wrong in [12345, -7] {
            let (err, conn) = first_request_after(encode_success_response(wrong, &dbs_body(&["x"])), 1 << 20).await;
            assert_eq!(err.code(), ClientCode::Protocol as i32, "{err:?}");
            assert!(err.is_retriable());
            assert!(err.message().contains("never sent"), "{err:?}");
            assert!(!conn.is_alive());
        }
    }

    #[tokio::test]
    async fn an_unknown_response_type_kills_the_connection() {
        let frame = vec![0, 0, 0, 5, 9, 0, 0, 0, 0];
        let (err, conn) = first_request_after(frame, 1 << 20).await;
        assert_eq!(err.code(), ClientCode::Protocol as i32, "{err:?}");
        assert!(err.is_retriable());
        assert!(!conn.is_alive());
    }

    #[tokio::test]
    async fn a_trickled_frame_kills_the_connection_after_the_request_timeout() {
        let (l, addr) = listener().await;
        tokio::spawn(async move {
            let mut s = accept_with_handshake(&l, &[(1003, 0, 0)]).await;
            let r = read_request(&mut s).await.unwrap();
            for b in encode_success_response(r.request_id, &dbs_body(&["slow"])) {
                if s.write_all(&[b]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        let conn = Connection::open(&addr, Duration::from_millis(700), &Handle::current()).await.unwrap();
        let started = std::time::Instant::now();
        let err = conn.send(&list_dbs()).await.unwrap_err();
        // The request's own timeout and the stalled frame race: either way within ~the timeout.
        // (3 s: slack for a busy machine, still well before the last byte would arrive.)
        assert!(started.elapsed() < Duration::from_millis(3_000), "{:?}", started.elapsed());
        assert!(err.is_retriable(), "{err:?}");
        // The connection dies once the frame stalled for the request timeout after its first byte.
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while conn.is_alive() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Whichever rule fires first closes it: the frame's own deadline (PROTOCOL, "stalled")
        // or the request's timeout with no frame read since it was sent ("nothing arrived").
        let failure = conn.failure().expect("the stalled connection was not closed");
        assert!(failure.is_retriable(), "{failure:?}");
        assert!(
            (failure.code() == ClientCode::Protocol as i32 && failure.message().contains("stalled"))
                || (failure.code() == FlussCode::NETWORK_EXCEPTION && failure.message().contains("nothing arrived")),
            "{failure:?}"
        );
    }

    /// The frame deadline alone: a frame whose first byte came must end within `stall`.
    #[tokio::test]
    async fn a_frame_that_stops_arriving_fails_at_its_deadline() {
        let (mut server, mut client) = tokio::io::duplex(1024);
        server.write_all(&[0, 0, 1, 0, 0, 0, 0]).await.unwrap(); // 256-byte frame, 3 bytes of it
        let started = std::time::Instant::now();
        let err = read_frame(&mut client, 1 << 20, Duration::from_millis(300), "test").await.unwrap_err();
        let took = started.elapsed();
        assert_eq!(err.code(), ClientCode::Protocol as i32, "{err:?}");
        assert!(err.is_retriable());
        assert!(err.message().contains("sent 3 of 256 bytes") && err.message().contains("stalled"), "{err:?}");
        assert!(took >= Duration::from_millis(290) && took < Duration::from_secs(2), "{took:?}");
        // Between frames a connection may stay idle for any time: no deadline before a first byte.
        let (_server, mut idle) = tokio::io::duplex(1024);
        let waited = tokio::time::timeout(Duration::from_millis(500), read_frame(&mut idle, 1 << 20, Duration::from_millis(100), "test")).await;
        assert!(waited.is_err(), "an idle connection must not fail: {waited:?}");
        drop(server);
    }

    #[tokio::test]
    async fn garbage_protobuf_fails_only_its_request() {
        let (l, addr) = listener().await;
        tokio::spawn(async move {
            let mut s = accept_with_handshake(&l, &[(1003, 0, 0)]).await;
            let r = read_request(&mut s).await.unwrap();
            s.write_all(&encode_success_response(r.request_id, &[0xFF, 0xFF, 0xFF])).await.unwrap();
            let r = read_request(&mut s).await.unwrap();
            s.write_all(&encode_success_response(r.request_id, &dbs_body(&["ok"]))).await.unwrap();
            let _ = read_request(&mut s).await;
        });
        let conn = Connection::open(&addr, Duration::from_secs(5), &Handle::current()).await.unwrap();
        let err = conn.send(&list_dbs()).await.unwrap_err();
        assert_eq!(err.code(), ClientCode::Protocol as i32, "{err:?}");
        assert!(!err.is_retriable());
        assert!(conn.is_alive());
        assert_eq!(db_names(conn.send(&list_dbs()).await.unwrap()), vec!["ok"]);
    }

    /// A reader that announces a huge frame and then trickles bytes: the buffer must grow with
    /// what arrived, not with what was announced.
    #[tokio::test]
    async fn a_frame_body_is_allocated_as_it_arrives() {
        let announced = 1_000_000_000i32;
        let mut bytes = announced.to_be_bytes().to_vec();
        bytes.extend(std::iter::repeat_n(7u8, 300_000));
        let mut rd: &[u8] = &bytes;
        // The announced length is under the limit: the read ends at EOF with a protocol error,
        // after having allocated for the 300 kB that came (not 1 GB).
        let err = read_frame(&mut rd, usize::MAX, Duration::from_secs(5), "test").await.unwrap_err();
        assert_eq!(err.code(), ClientCode::Protocol as i32, "{err:?}");
        assert!(err.message().contains("300000 of 1000000000"), "{err:?}");
        let mut rd: &[u8] = &bytes[4..];
        let mut buf = Vec::new();
        assert!(read_body(&mut rd, announced as usize, &mut buf, "test").await.is_err());
        assert_eq!(buf.len(), 300_000);
        assert!(buf.capacity() <= 2 * 300_000 + frame::READ_CHUNK, "capacity {}", buf.capacity());
        // A whole frame comes back exactly.
        let mut rd: &[u8] = &bytes[4..];
        let mut buf = Vec::new();
        read_body(&mut rd, 300_000, &mut buf, "test").await.unwrap();
        assert_eq!((buf.len(), buf.capacity()), (300_000, 300_000));
    }

    #[tokio::test]
    async fn request_ids_are_masked_to_positive() {
        let (l, addr) = listener().await;
        let server = tokio::spawn(async move {
            let mut s = accept_with_handshake(&l, &[(1003, 0, 0)]).await;
            for expect in [0x7FFF_FFFF, 0] {
                let r = read_request(&mut s).await.unwrap();
                assert_eq!(r.request_id, expect);
                s.write_all(&encode_success_response(r.request_id, &dbs_body(&[]))).await.unwrap();
            }
        });
        let conn = Connection::open(&addr, Duration::from_secs(5), &Handle::current()).await.unwrap();
        conn.shared.next_id.store(0x7FFF_FFFF, Ordering::Relaxed);
        conn.send(&list_dbs()).await.unwrap();
        conn.send(&list_dbs()).await.unwrap();
        server.await.unwrap();
    }
}
