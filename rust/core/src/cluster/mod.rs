//! The network backend: a [`Backend`] that talks to a real Fluss 0.9.x cluster over the Fluss
//! wire protocol (docs/wire-format.md, "RPC framing" and "API keys and request versions").
//!
//! * [`frame`]: request/response frame layout.
//! * [`connection`]: one TCP connection per server, with request-id matching, timeouts and the
//!   ApiVersions handshake.
//! * [`NetworkBackend`]: the node table (coordinator and tablet servers, learnt from Metadata),
//!   one lazily opened connection per server address, and routing of [`Dest`]s.
//! * [`readback`]: ListOffsets / FetchLog / Lookup helpers built only on [`Backend`], so tests and
//!   examples read back the same way from the embedded engine and from a cluster.
//!
//! Routing:
//! * `Dest::Coordinator` goes to the coordinator of the latest Metadata. If it cannot be reached
//!   (nothing was sent), the node table is refreshed once and the request goes to the coordinator
//!   the answer names, if that is another one (a standby of a Fluss 1.0 cluster took over).
//! * An address that answers NOT_COORDINATOR_LEADER (65: a standby coordinator, which processed
//!   nothing) is remembered as a standby until it answers a request; `Dest::Any` tries it last
//!   and, when one refuses, the next candidate. Resending a refused `Dest::Coordinator` request
//!   to the leader is [`crate::backend::LeaderFollowing`]'s job ([`Backend::find_coordinator_leader`]
//!   refreshes the node table from the other servers).
//! * `Dest::Tablet(id)` goes to that tablet server. An id missing from the node table triggers
//!   one node refresh (Metadata); if it is still missing the request fails with
//!   `NETWORK_EXCEPTION` (1, retriable) so that the writer refreshes its table metadata.
//! * `Dest::Any` goes to a server that already has a live connection, else to the tablet
//!   servers, the coordinator and finally the bootstrap addresses, trying the next one when a
//!   server cannot be reached (never after the request was sent). `InitWriter` with `Dest::Any`
//!   goes to tablet servers only (a coordinator does not serve it).
//!
//! Every Metadata response that passes through [`Backend::send`] also refreshes the node table,
//! so the writer's own metadata refreshes keep the routing current.
//!
//! Reconnects: a dead connection is replaced at the next request for its server. The first
//! reconnect is immediate; after a failed attempt, requests for that server fail fast with the
//! last connect error (retriable) until a backoff has passed (`client.writer.retry-backoff`,
//! doubled per consecutive failure, at most 1 s). Concurrent requests for one server share one
//! connection attempt.
//!
//! The futures returned by [`NetworkBackend::send`](Backend::send) must be polled inside a tokio
//! runtime (they use its timer); the connections' reader and writer tasks always run on the
//! runtime that ran [`NetworkBackend::connect`].

pub mod connection;
pub mod frame;
pub mod readback;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::runtime::Handle;

pub use connection::{ApiVersions, Connection};
pub use frame::network_error;

use crate::backend::{Backend, BoxFuture, Dest, Request, Response};
use crate::config::{Config, SaslPlain};
use crate::error::{ClientCode, Error, Result};
use crate::wire::proto;

/// Longest wait between two connection attempts to the same server.
pub const MAX_RECONNECT_BACKOFF: Duration = Duration::from_secs(1);

/// A server as listed in a Metadata response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerNode {
    pub id: i32,
    pub host: String,
    pub port: i32,
}

impl ServerNode {
    fn from_proto(n: &proto::PbServerNode) -> ServerNode {
        ServerNode { id: n.node_id, host: n.host.clone(), port: n.port }
    }

    /// `host:port` (IPv6 hosts in brackets).
    pub fn addr(&self) -> String {
        if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// The cluster's servers, from the latest Metadata response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Nodes {
    pub coordinator: Option<ServerNode>,
    /// Tablet servers by node id.
    pub tablets: BTreeMap<i32, ServerNode>,
}

/// Split `"host:port[,host:port]"` into addresses.
pub fn parse_bootstrap(bootstrap: &str) -> Result<Vec<String>> {
    let bad = |why: String| Error::client(ClientCode::InvalidConfig, format!("bootstrap.servers = {bootstrap:?}: {why}"));
    let mut out = Vec::new();
    for part in bootstrap.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (host, port) = part.rsplit_once(':').ok_or_else(|| bad(format!("{part:?} is not host:port")))?;
        if host.is_empty() || port.parse::<u16>().is_err() {
            return Err(bad(format!("{part:?} is not host:port")));
        }
        if !out.iter().any(|a| a == part) {
            out.push(part.to_string());
        }
    }
    if out.is_empty() {
        return Err(bad("no server address".into()));
    }
    Ok(out)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn closed_error() -> Error {
    Error::client(ClientCode::ConnectionClosed, "the connection to the Fluss cluster was closed")
}

#[derive(Default)]
struct SlotState {
    conn: Option<Arc<Connection>>,
    /// Consecutive failed connection attempts.
    failures: u32,
    /// No new attempt before this instant (after a failed attempt).
    retry_at: Option<Instant>,
    last_error: Option<Error>,
}

/// The connection to one server address, and its reconnect state.
struct Slot {
    state: Mutex<SlotState>,
    /// Serializes connection attempts: concurrent requests share one attempt.
    connecting: tokio::sync::Mutex<()>,
}

impl Slot {
    fn alive(&self) -> Option<Arc<Connection>> {
        lock(&self.state).conn.as_ref().filter(|c| c.is_alive()).cloned()
    }
}

struct Inner {
    config: Arc<Config>,
    /// SASL/PLAIN credentials when `client.security.protocol = SASL`: every connection
    /// authenticates with them before its first request.
    sasl: Option<SaslPlain>,
    bootstrap: Vec<String>,
    runtime: Handle,
    nodes: Mutex<Nodes>,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    closed: AtomicBool,
    /// Single-flight node refreshes: a caller that waited for a running refresh reuses it.
    refresh: tokio::sync::Mutex<()>,
    refresh_generation: AtomicU64,
    /// Addresses whose last answer was NOT_COORDINATOR_LEADER (standby coordinators of a Fluss
    /// 1.0 cluster): tried last for `Dest::Any`, until they answer a request.
    standbys: Mutex<HashSet<String>>,
}

/// A [`Backend`] over the Fluss wire protocol. See the module docs for routing and reconnects.
pub struct NetworkBackend {
    inner: Arc<Inner>,
}

impl NetworkBackend {
    /// Connect to a cluster: try the bootstrap servers (`"host:port[,host:port]"`) in order
    /// until one answers Metadata, and learn the coordinator and tablet servers from it. Run it
    /// on the tokio runtime that should own the connections (`runtime.block_on(...)` is fine).
    pub fn connect(bootstrap: &str, config: Arc<Config>) -> impl Future<Output = Result<Arc<NetworkBackend>>> + Send + 'static {
        let bootstrap = bootstrap.to_string();
        async move {
            let addrs = parse_bootstrap(&bootstrap)?;
            let runtime = Handle::try_current().map_err(|_| Error::internal("NetworkBackend::connect must run inside a tokio runtime"))?;
            let sasl = config.sasl_credentials()?;
            let inner = Arc::new(Inner {
                sasl,
                config,
                bootstrap: addrs.clone(),
                runtime,
                nodes: Mutex::new(Nodes::default()),
                slots: Mutex::new(HashMap::new()),
                closed: AtomicBool::new(false),
                refresh: tokio::sync::Mutex::new(()),
                refresh_generation: AtomicU64::new(0),
                standbys: Mutex::new(HashSet::new()),
            });
            let mut errors = String::new();
            let mut fatal: Option<Error> = None;
            for addr in &addrs {
                let attempt = async {
                    let conn = inner.connection(addr).await?;
                    inner.send_on(addr, &conn, &Request::Metadata(proto::MetadataRequest::default())).await
                };
                match attempt.await {
                    Ok(_) => {
                        let nodes = inner.nodes();
                        if nodes.coordinator.is_none() {
                            log::warn!("fluss cluster at {addr}: Metadata names no coordinator");
                        }
                        log::info!("connected to Fluss cluster via {addr}: {}", describe_nodes(&nodes));
                        return Ok(Arc::new(NetworkBackend { inner }));
                    }
                    Err(e) => {
                        log::debug!("bootstrap server {addr}: {e}");
                        let _ = write!(errors, "; {addr}: {e}");
                        // A standby coordinator (65) says nothing about the cluster: another
                        // server answers, or the leader is being elected (retriable then).
                        let standby = e.code() == crate::error::FlussCode::NOT_COORDINATOR_LEADER;
                        if !e.is_retriable() && !standby && fatal.is_none() {
                            fatal = Some(e.context(format!("bootstrap server {addr}")));
                        }
                    }
                }
            }
            // A non-retriable answer (failed authentication, ...) is the error to report: a
            // retry of `connect` would meet it again.
            Err(fatal.unwrap_or_else(|| network_error(format!("no bootstrap server of {bootstrap:?} answered{errors}"))))
        }
    }

    /// A snapshot of the node table.
    pub fn nodes(&self) -> Nodes {
        self.inner.nodes()
    }

    /// The configuration this backend was created with.
    pub fn config(&self) -> &Arc<Config> {
        &self.inner.config
    }

    /// Re-read the coordinator and tablet servers from Metadata. Concurrent calls share one
    /// request.
    pub async fn refresh_nodes(&self) -> Result<()> {
        self.inner.refresh_nodes().await
    }

    /// The ApiVersions of the server `dest` routes to (connecting if needed). For `Dest::Any`,
    /// the server a ListDatabases request would go to.
    pub async fn api_versions(&self, dest: Dest) -> Result<ApiVersions> {
        api_versions_of(&self.inner, dest).await
    }
}

/// [`NetworkBackend::api_versions`] on the shared state (for futures that outlive a borrow).
async fn api_versions_of(inner: &Arc<Inner>, dest: Dest) -> Result<ApiVersions> {
    {
        let conn = match dest {
            Dest::Any => {
                let probe = Request::ListDatabases(proto::ListDatabasesRequest {});
                let mut last = None;
                let mut found = None;
                for addr in inner.any_candidates(&probe) {
                    match inner.connection(&addr).await {
                        Ok(c) => {
                            found = Some(c);
                            break;
                        }
                        Err(e) => last = Some(e),
                    }
                }
                found.ok_or_else(|| last.unwrap_or_else(|| network_error("no Fluss server known")))?
            }
            dest => {
                let addr = inner.resolve(dest).await?;
                inner.connection(&addr).await?
            }
        };
        Ok(conn.api_versions().clone())
    }
}

fn describe_nodes(n: &Nodes) -> String {
    let coord = match &n.coordinator {
        Some(c) => format!("coordinator {} at {}", c.id, c.addr()),
        None => "no coordinator".to_string(),
    };
    let tablets: Vec<String> = n.tablets.values().map(|t| format!("{} at {}", t.id, t.addr())).collect();
    format!("{coord}, tablet servers [{}]", tablets.join(", "))
}

impl Inner {
    fn nodes(&self) -> Nodes {
        lock(&self.nodes).clone()
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    fn slot(&self, addr: &str) -> Arc<Slot> {
        lock(&self.slots)
            .entry(addr.to_string())
            .or_insert_with(|| Arc::new(Slot { state: Mutex::new(SlotState::default()), connecting: tokio::sync::Mutex::new(()) }))
            .clone()
    }

    fn cached(&self, addr: &str) -> Option<Arc<Connection>> {
        lock(&self.slots).get(addr).and_then(|s| s.alive())
    }

    /// The live connection to `addr`, opening one if needed (see the module docs on backoff).
    async fn connection(&self, addr: &str) -> Result<Arc<Connection>> {
        if self.is_closed() {
            return Err(closed_error());
        }
        let slot = self.slot(addr);
        if let Some(c) = slot.alive() {
            return Ok(c);
        }
        let _attempt = slot.connecting.lock().await;
        if let Some(c) = slot.alive() {
            return Ok(c);
        }
        {
            let st = lock(&slot.state);
            if let (Some(at), Some(e)) = (st.retry_at, &st.last_error) {
                if Instant::now() < at {
                    return Err(e.clone().context(format!("{addr} is in reconnect backoff")));
                }
            }
        }
        // `client.address-map`: the slot stays keyed by the advertised address; only the dial
        // goes elsewhere (and errors name both).
        let dial = self.config.dial_address(addr);
        let max_response = usize::try_from(self.config.response_max_size).unwrap_or(usize::MAX);
        let result = Connection::open_with(dial, self.config.request_timeout, &self.runtime, self.sasl.as_ref(), max_response)
            .await
            .map_err(|e| if dial == addr { e } else { e.context(format!("{addr} (dialled as {dial})")) });
        let mut st = lock(&slot.state);
        match result {
            Ok(conn) => {
                if self.is_closed() {
                    conn.close();
                    return Err(closed_error());
                }
                st.conn = Some(conn.clone());
                st.failures = 0;
                st.retry_at = None;
                st.last_error = None;
                Ok(conn)
            }
            Err(e) => {
                st.conn = None;
                st.failures = st.failures.saturating_add(1);
                let base = self.config.retry_backoff.max(Duration::from_millis(10));
                let backoff = base.saturating_mul(1u32 << (st.failures - 1).min(16)).min(MAX_RECONNECT_BACKOFF);
                st.retry_at = Some(Instant::now() + backoff);
                st.last_error = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Send on the connection to `addr` and learn from the answer (see [`Self::learn`]).
    async fn send_on(&self, addr: &str, conn: &Connection, request: &Request) -> Result<Response> {
        let answer = conn.send(request).await;
        self.learn(addr, &answer);
        answer
    }

    /// Learn nodes from a Metadata response, and which addresses are standby coordinators: one
    /// that answers NOT_COORDINATOR_LEADER is one until it answers a request.
    fn learn(&self, addr: &str, answer: &Result<Response>) {
        match answer {
            Ok(response) => {
                self.observe(response);
                let mut standbys = lock(&self.standbys);
                if !standbys.is_empty() && standbys.remove(addr) {
                    log::info!("{addr} answers as the coordinator leader again");
                }
            }
            Err(e) if e.code() == crate::error::FlussCode::NOT_COORDINATOR_LEADER => {
                if lock(&self.standbys).insert(addr.to_string()) {
                    log::info!("{addr} is a standby coordinator (NOT_COORDINATOR_LEADER): looking for the leader");
                }
            }
            Err(_) => {}
        }
    }

    fn observe(&self, response: &Response) {
        if let Response::Metadata(m) = response {
            if m.coordinator_server.is_none() && m.tablet_servers.is_empty() {
                return;
            }
            let nodes = Nodes {
                coordinator: m.coordinator_server.as_ref().map(ServerNode::from_proto),
                tablets: m.tablet_servers.iter().map(|n| (n.node_id, ServerNode::from_proto(n))).collect(),
            };
            let mut cur = lock(&self.nodes);
            if *cur != nodes {
                log::debug!("fluss nodes: {}", describe_nodes(&nodes));
                *cur = nodes;
            }
        }
    }

    /// Address for `Dest::Coordinator` / `Dest::Tablet` from the node table as it is now.
    fn resolve_now(&self, dest: Dest) -> Option<String> {
        let nodes = lock(&self.nodes);
        match dest {
            Dest::Coordinator => nodes.coordinator.as_ref().map(ServerNode::addr),
            Dest::Tablet(id) => nodes.tablets.get(&id).map(ServerNode::addr),
            Dest::Any => None,
        }
    }

    /// Address for `Dest::Coordinator` / `Dest::Tablet`, refreshing the node table once if the
    /// destination is unknown.
    async fn resolve(&self, dest: Dest) -> Result<String> {
        if let Some(a) = self.resolve_now(dest) {
            return Ok(a);
        }
        if let Err(e) = self.refresh_nodes().await {
            log::debug!("node refresh for {dest:?} failed: {e}");
        }
        self.resolve_now(dest).ok_or_else(|| match dest {
            Dest::Tablet(id) => network_error(format!("tablet server {id} is not in the cluster metadata")),
            _ => network_error("the cluster metadata names no coordinator"),
        })
    }

    /// Candidate addresses for `Dest::Any`, best first: live connections, tablet servers,
    /// the coordinator, the bootstrap servers; standby coordinators last. InitWriter: tablet
    /// servers only.
    fn any_candidates(&self, request: &Request) -> Vec<String> {
        let nodes = self.nodes();
        let mut addrs: Vec<String> = nodes.tablets.values().map(ServerNode::addr).collect();
        if !matches!(request, Request::InitWriter(_)) {
            addrs.extend(nodes.coordinator.as_ref().map(ServerNode::addr));
            addrs.extend(self.bootstrap.iter().cloned());
        }
        let mut seen = std::collections::HashSet::new();
        addrs.retain(|a| seen.insert(a.clone()));
        // Stable sort: servers with a live connection first, standbys last.
        let standbys = lock(&self.standbys).clone();
        addrs.sort_by_key(|a| (standbys.contains(a), self.cached(a).is_none()));
        addrs
    }

    /// A live connection for `dest` that can take `request` now, without waiting (fast path),
    /// with the address it is to.
    fn ready_connection(&self, dest: Dest, request: &Request) -> Option<(String, Arc<Connection>)> {
        match dest {
            Dest::Any => {
                let key = request.api_key();
                self.any_candidates(request)
                    .into_iter()
                    .filter_map(|a| self.cached(&a).map(|c| (a, c)))
                    .find(|(_, c)| c.api_versions().supports(key))
            }
            dest => self.resolve_now(dest).and_then(|a| self.cached(&a).map(|c| (a, c))),
        }
    }

    async fn send_slow(self: Arc<Self>, dest: Dest, request: Request) -> Result<Response> {
        match dest {
            Dest::Any => self.send_any(&request).await,
            dest => {
                let addr = self.resolve(dest).await?;
                let conn = match self.connection(&addr).await {
                    Ok(conn) => conn,
                    // The coordinator cannot be reached (nothing was sent): if it was replaced
                    // (a standby of a Fluss 1.0 cluster took over), the tablet servers name the
                    // new leader; ask once and go there.
                    Err(e) if dest == Dest::Coordinator && e.code() != ClientCode::ConnectionClosed as i32 => {
                        if let Err(r) = self.refresh_nodes().await {
                            log::debug!("node refresh after {addr} failed: {r}");
                        }
                        match self.resolve_now(dest).filter(|a| *a != addr) {
                            Some(moved) => {
                                log::info!("the coordinator moved from {addr} to {moved}");
                                let conn = self.connection(&moved).await?;
                                return self.send_on(&moved, &conn, &request).await;
                            }
                            None => return Err(e),
                        }
                    }
                    Err(e) => return Err(e),
                };
                self.send_on(&addr, &conn, &request).await
            }
        }
    }

    async fn send_any(&self, request: &Request) -> Result<Response> {
        let key = request.api_key();
        let mut last: Option<Error> = None;
        for addr in self.any_candidates(request) {
            match self.connection(&addr).await {
                Ok(conn) if conn.api_versions().supports(key) => match self.send_on(&addr, &conn, request).await {
                    // A standby coordinator refused it without processing it: the next one.
                    Err(e) if e.code() == crate::error::FlussCode::NOT_COORDINATOR_LEADER => last = Some(e),
                    answer => return answer,
                },
                Ok(conn) => {
                    last.get_or_insert_with(|| {
                        Error::client(
                            ClientCode::Protocol,
                            format!("{} server {addr} does not support {} (api key {key})", conn.api_versions().kind(), request.name()),
                        )
                    });
                }
                Err(e) => {
                    if e.code() == ClientCode::ConnectionClosed as i32 {
                        return Err(e);
                    }
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| network_error(format!("no Fluss server available for {}", request.name()))))
    }

    async fn refresh_nodes(&self) -> Result<()> {
        let seen = self.refresh_generation.load(Ordering::SeqCst);
        let _one = self.refresh.lock().await;
        if self.refresh_generation.load(Ordering::SeqCst) != seen {
            return Ok(()); // someone refreshed while we waited
        }
        let result = self.send_any(&Request::Metadata(proto::MetadataRequest::default())).await.map(|_| ());
        self.refresh_generation.fetch_add(1, Ordering::SeqCst);
        result
    }

    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let slots: Vec<Arc<Slot>> = lock(&self.slots).values().cloned().collect();
        for slot in slots {
            let conn = lock(&slot.state).conn.take();
            if let Some(c) = conn {
                c.close();
            }
        }
    }
}

impl Backend for NetworkBackend {
    fn send(&self, dest: Dest, request: Request) -> BoxFuture<Response> {
        let inner = self.inner.clone();
        if inner.is_closed() {
            return Box::pin(async { Err(closed_error()) });
        }
        // Fast path: queue the frame now, so requests to one server leave in call order.
        if let Some((addr, conn)) = inner.ready_connection(dest, &request) {
            let pending = conn.send(&request);
            return Box::pin(async move {
                let answer = pending.await;
                if matches!(dest, Dest::Tablet(_)) {
                    if let Ok(response) = &answer {
                        inner.observe(response);
                    }
                } else {
                    inner.learn(&addr, &answer);
                }
                answer
            });
        }
        Box::pin(inner.send_slow(dest, request))
    }

    fn describe(&self) -> String {
        format!("Fluss cluster ({})", describe_nodes(&self.inner.nodes()))
    }

    fn close(&self) {
        self.inner.close();
    }

    fn api_version_range(&self, dest: Dest, api_key: i16) -> BoxFuture<Option<(i16, i16)>> {
        let inner = self.inner.clone();
        Box::pin(async move { Ok(api_versions_of(&inner, dest).await?.ranges.get(&api_key).copied()) })
    }

    /// Metadata from a server other than a known standby (the tablet servers name the leader).
    fn find_coordinator_leader(&self) -> BoxFuture<()> {
        let inner = self.inner.clone();
        Box::pin(async move { inner.refresh_nodes().await })
    }
}

impl Drop for NetworkBackend {
    fn drop(&mut self) {
        self.inner.close();
    }
}

impl std::fmt::Debug for NetworkBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetworkBackend").field("bootstrap", &self.inner.bootstrap).field("nodes", &self.inner.nodes()).finish()
    }
}

#[cfg(test)]
mod tests;
