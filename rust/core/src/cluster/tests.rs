//! Unit tests of [`NetworkBackend`] routing, refresh, reconnect and close against fake Fluss
//! servers written with tokio (a coordinator and a tablet server on two ports).

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::frame::{decode_request, encode_error_response, encode_success_response, RequestFrame};
use super::*;
use crate::backend::{call, Backend, Dest, LeaderFollowing};
use crate::error::FlussCode;

const COORDINATOR_KEYS: &[i16] = &[1000, 1001, 1002, 1003, 1005, 1006, 1007, 1012];
const TABLET_KEYS: &[i16] = &[1000, 1003, 1007, 1012, 1014, 1015, 1016, 1017, 1021, 1026];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Coordinator,
    Tablet,
}

/// What the fake cluster's Metadata says, shared by both fake servers.
type SharedMeta = Arc<Mutex<proto::MetadataResponse>>;

struct FakeServer {
    kind: Kind,
    port: u16,
    meta: SharedMeta,
    /// (api key, api version) of every request received, in order.
    log: Arc<Mutex<Vec<(i16, i16)>>>,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
    /// A coordinator that is a standby (Fluss 1.0 HA): every request but ApiVersions is refused
    /// with NOT_COORDINATOR_LEADER before it is looked at.
    standby: Arc<AtomicBool>,
}

impl FakeServer {
    async fn start(kind: Kind, port: u16, meta: SharedMeta) -> FakeServer {
        let s = FakeServer { kind, port, meta, log: Arc::default(), tasks: Arc::default(), standby: Arc::default() };
        s.listen().await;
        s
    }

    async fn listen(&self) {
        let l = TcpListener::bind(("127.0.0.1", self.port)).await.unwrap();
        let (kind, meta, log, tasks, standby) = (self.kind, self.meta.clone(), self.log.clone(), self.tasks.clone(), self.standby.clone());
        let accept = tokio::spawn(async move {
            loop {
                let Ok((s, _)) = l.accept().await else { return };
                let t = tokio::spawn(serve(kind, s, meta.clone(), log.clone(), standby.clone()));
                tasks.lock().unwrap().push(t);
            }
        });
        self.tasks.lock().unwrap().push(accept);
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Stop listening and drop every connection.
    fn kill(&self) {
        for t in self.tasks.lock().unwrap().drain(..) {
            t.abort();
        }
    }

    fn keys(&self) -> Vec<i16> {
        self.log.lock().unwrap().iter().map(|k| k.0).collect()
    }

    /// How many requests of `api_key` it received.
    fn count(&self, api_key: i16) -> usize {
        self.keys().iter().filter(|&&k| k == api_key).count()
    }

    fn set_standby(&self, standby: bool) {
        self.standby.store(standby, Ordering::SeqCst);
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn read_request(s: &mut TcpStream) -> Option<RequestFrame> {
    let len = s.read_i32().await.ok()?;
    let mut buf = vec![0u8; len as usize];
    s.read_exact(&mut buf).await.ok()?;
    Some(decode_request(Bytes::from(buf)).unwrap())
}

async fn serve(kind: Kind, mut s: TcpStream, meta: SharedMeta, log: Arc<Mutex<Vec<(i16, i16)>>>, standby: Arc<AtomicBool>) {
    while let Some(req) = read_request(&mut s).await {
        log.lock().unwrap().push((req.api_key, req.api_version));
        let keys = if kind == Kind::Coordinator { COORDINATOR_KEYS } else { TABLET_KEYS };
        if !keys.contains(&req.api_key) {
            continue; // like Fluss: unknown keys are silently dropped
        }
        if req.api_key != 1000 && standby.load(Ordering::SeqCst) {
            let frame = encode_error_response(req.request_id, 65, Some("This coordinator server is not the current leader."));
            if s.write_all(&frame).await.is_err() {
                return;
            }
            continue;
        }
        let body = match req.api_key {
            1000 => proto::ApiVersionsResponse {
                api_versions: keys
                    .iter()
                    .map(|&k| proto::PbApiVersion { api_key: k as i32, min_version: 0, max_version: if k == 1016 { 1 } else { 0 } })
                    .collect(),
                server_type: Some(if kind == Kind::Coordinator { 1 } else { 2 }),
            }
            .encode_to_vec(),
            1012 => meta.lock().unwrap().encode_to_vec(),
            1003 => proto::ListDatabasesResponse { database_name: vec![format!("{kind:?}")] }.encode_to_vec(),
            1026 => proto::InitWriterResponse { writer_id: 42 }.encode_to_vec(),
            1015 => continue, // FetchLog: never answered (a request that hangs)
            1007 => {
                let r = proto::GetTableInfoRequest::decode(req.body).unwrap();
                let frame = encode_error_response(req.request_id, 7, Some(&format!("Table '{}' does not exist.", r.table_path.table_name)));
                if s.write_all(&frame).await.is_err() {
                    return;
                }
                continue;
            }
            _ => Vec::new(),
        };
        if s.write_all(&encode_success_response(req.request_id, &body)).await.is_err() {
            return;
        }
    }
}

fn node(id: i32, port: u16) -> proto::PbServerNode {
    proto::PbServerNode { node_id: id, host: "127.0.0.1".into(), port: port as i32, listeners: None, rack: None }
}

async fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap().port()
}

struct FakeCluster {
    coordinator: FakeServer,
    tablet: FakeServer,
    meta: SharedMeta,
}

async fn fake_cluster() -> FakeCluster {
    let (cp, tp) = (free_port().await, free_port().await);
    let meta: SharedMeta = Arc::new(Mutex::new(proto::MetadataResponse {
        coordinator_server: Some(node(0, cp)),
        tablet_servers: vec![node(1, tp)],
        ..Default::default()
    }));
    let coordinator = FakeServer::start(Kind::Coordinator, cp, meta.clone()).await;
    let tablet = FakeServer::start(Kind::Tablet, tp, meta.clone()).await;
    FakeCluster { coordinator, tablet, meta }
}

fn config(timeout_ms: u64) -> Arc<Config> {
    Arc::new(Config { request_timeout: Duration::from_millis(timeout_ms), retry_backoff: Duration::from_millis(50), ..Config::default() })
}

async fn databases(b: &NetworkBackend, dest: Dest) -> Result<Vec<String>> {
    Ok(call(b, dest, proto::ListDatabasesRequest {}).await?.database_name)
}

#[tokio::test]
async fn routes_by_destination_and_learns_nodes() {
    let c = fake_cluster().await;
    // The first bootstrap address is dead; the second answers.
    let dead = free_port().await;
    let b = NetworkBackend::connect(&format!("127.0.0.1:{dead}, {}", c.coordinator.addr()), config(2000)).await.unwrap();
    let nodes = b.nodes();
    assert_eq!(nodes.coordinator.as_ref().unwrap().addr(), c.coordinator.addr());
    assert_eq!(nodes.tablets.keys().copied().collect::<Vec<_>>(), vec![1]);
    assert!(b.describe().contains("tablet servers [1 at"), "{}", b.describe());

    assert_eq!(databases(&b, Dest::Coordinator).await.unwrap(), vec!["Coordinator"]);
    assert_eq!(databases(&b, Dest::Tablet(1)).await.unwrap(), vec!["Tablet"]);
    // InitWriter with Dest::Any goes to a tablet server even though the coordinator connection
    // is older.
    let w = call(&*b, Dest::Any, proto::InitWriterRequest { table_path: vec![] }).await.unwrap();
    assert_eq!(w.writer_id, 42);
    assert_eq!(c.tablet.keys().iter().filter(|&&k| k == 1026).count(), 1);
    assert!(!c.coordinator.keys().contains(&1026));
    // DDL at a tablet server is refused locally, not sent (the server would never answer).
    let err = call(
        &*b,
        Dest::Tablet(1),
        proto::CreateDatabaseRequest { database_name: "x".into(), ignore_if_exists: false, database_json: None },
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), ClientCode::Protocol as i32, "{err:?}");
    assert!(!c.tablet.keys().contains(&1001));
    // PutKv is negotiated to v1, ProduceLog to v0.
    call(&*b, Dest::Tablet(1), proto::PutKvRequest { acks: -1, table_id: 1, timeout_ms: 100, ..Default::default() }).await.unwrap();
    call(&*b, Dest::Tablet(1), proto::ProduceLogRequest { acks: -1, table_id: 1, timeout_ms: 100, buckets_req: vec![] }).await.unwrap();
    let log = c.tablet.log.lock().unwrap().clone();
    assert!(log.contains(&(1016, 1)) && log.contains(&(1014, 0)), "{log:?}");
    // A write for a historical partition (`original_partition_name`) needs PUT_KV v3 /
    // PRODUCE_LOG v1: refused before anything is sent to a server without them.
    let sent = c.tablet.keys().len();
    let historical = |name: &str| Some(name.to_string());
    let err = call(
        &*b,
        Dest::Tablet(1),
        proto::PutKvRequest {
            acks: -1,
            table_id: 1,
            timeout_ms: 100,
            buckets_req: vec![proto::PbPutKvReqForBucket {
                partition_id: Some(3),
                bucket_id: 0,
                records: Bytes::new(),
                original_partition_name: historical("20200101"),
                routing_bucket_count: None,
            }],
            ..Default::default()
        },
    )
    .await
    .unwrap_err();
    assert_eq!((err.code(), err.is_retriable()), (FlussCode::UNSUPPORTED_VERSION, false), "{err:?}");
    assert!(err.message().contains("PutKv needs version 3") && err.message().contains("supports up to 1"), "{err}");
    let err = call(
        &*b,
        Dest::Tablet(1),
        proto::ProduceLogRequest {
            acks: -1,
            table_id: 1,
            timeout_ms: 100,
            buckets_req: vec![proto::PbProduceLogReqForBucket {
                partition_id: Some(3),
                bucket_id: 0,
                records: Bytes::new(),
                original_partition_name: historical("20200101"),
                routing_bucket_count: None,
            }],
        },
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), FlussCode::UNSUPPORTED_VERSION, "{err:?}");
    assert!(err.message().contains("ProduceLog needs version 1") && err.message().contains("supports up to 0"), "{err}");
    assert_eq!(c.tablet.keys().len(), sent, "nothing was sent");
    // An ERROR_RESPONSE passes through with its code.
    let err = call(
        &*b,
        Dest::Any,
        proto::GetTableInfoRequest { table_path: proto::PbTablePath { database_name: "d".into(), table_name: "t".into() } },
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), 7);
    assert_eq!(b.api_versions(Dest::Tablet(1)).await.unwrap().ranges.get(&1016), Some(&(0, 1)));
    assert_eq!(b.api_versions(Dest::Coordinator).await.unwrap().server_type, Some(1));
}

#[tokio::test]
async fn unknown_tablet_refreshes_nodes_once_then_fails_retriably() {
    let c = fake_cluster().await;
    let b = NetworkBackend::connect(&c.coordinator.addr(), config(2000)).await.unwrap();
    let metadata_requests = |s: &FakeServer| s.keys().iter().filter(|&&k| k == 1012).count();
    let before = metadata_requests(&c.coordinator) + metadata_requests(&c.tablet);
    let err = databases(&b, Dest::Tablet(7)).await.unwrap_err();
    assert_eq!(err.code(), 1, "{err:?}");
    assert!(err.is_retriable());
    assert_eq!(metadata_requests(&c.coordinator) + metadata_requests(&c.tablet), before + 1);

    // A new tablet server appears in Metadata: after a refresh it is routable.
    let extra = FakeServer::start(Kind::Tablet, free_port().await, c.meta.clone()).await;
    c.meta.lock().unwrap().tablet_servers.push(node(7, extra.port));
    assert_eq!(databases(&b, Dest::Tablet(7)).await.unwrap(), vec!["Tablet"]);
    // A Metadata response seen through send() also updates the node table.
    c.meta.lock().unwrap().tablet_servers.retain(|n| n.node_id != 7);
    call(&*b, Dest::Any, proto::MetadataRequest::default()).await.unwrap();
    assert!(!b.nodes().tablets.contains_key(&7));
}

#[tokio::test]
async fn dead_server_fails_retriably_then_reconnects() {
    let c = fake_cluster().await;
    let b = NetworkBackend::connect(&c.coordinator.addr(), config(1000)).await.unwrap();
    assert_eq!(databases(&b, Dest::Tablet(1)).await.unwrap(), vec!["Tablet"]);
    c.tablet.kill();
    tokio::time::sleep(Duration::from_millis(50)).await;
    // The connection died (EOF) and the server is gone: retriable NETWORK_EXCEPTION, fast.
    let started = std::time::Instant::now();
    let err = databases(&b, Dest::Tablet(1)).await.unwrap_err();
    assert_eq!(err.code(), 1, "{err:?}");
    assert!(err.is_retriable());
    // During the backoff, the last error is returned without a new attempt.
    let err = databases(&b, Dest::Tablet(1)).await.unwrap_err();
    assert_eq!(err.code(), 1, "{err:?}");
    assert!(err.message().contains("backoff"), "{err:?}");
    assert!(started.elapsed() < Duration::from_millis(900));
    // The server comes back on the same port: the next request after the backoff reconnects.
    c.tablet.listen().await;
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert_eq!(databases(&b, Dest::Tablet(1)).await.unwrap(), vec!["Tablet"]);
    let handshakes = c.tablet.keys().iter().filter(|&&k| k == 1000).count();
    assert_eq!(handshakes, 2, "one ApiVersions per connection");
}

#[tokio::test]
async fn in_flight_requests_fail_when_the_server_disappears() {
    let c = fake_cluster().await;
    let b = NetworkBackend::connect(&c.coordinator.addr(), config(5000)).await.unwrap();
    databases(&b, Dest::Tablet(1)).await.unwrap();
    // The fake never answers FetchLog: two requests stay in flight until the server dies.
    let fetch = || proto::FetchLogRequest { follower_server_id: -1, max_bytes: 1, ..Default::default() };
    let p1 = b.send(Dest::Tablet(1), Request::FetchLog(fetch()));
    let p2 = b.send(Dest::Tablet(1), Request::FetchLog(fetch()));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = std::time::Instant::now();
    c.tablet.kill();
    for p in [p1, p2] {
        let e = p.await.unwrap_err();
        assert_eq!(e.code(), 1, "{e:?}");
        assert!(e.is_retriable());
    }
    assert!(started.elapsed() < Duration::from_secs(2), "failed at once, not at the 5 s timeout");
}

#[tokio::test]
async fn close_fails_later_requests_with_connection_closed() {
    let c = fake_cluster().await;
    let b = NetworkBackend::connect(&c.coordinator.addr(), config(2000)).await.unwrap();
    databases(&b, Dest::Coordinator).await.unwrap();
    b.close();
    for dest in [Dest::Coordinator, Dest::Any, Dest::Tablet(1)] {
        let err = databases(&b, dest).await.unwrap_err();
        assert_eq!(err.code(), ClientCode::ConnectionClosed as i32, "{dest:?} {err:?}");
    }
}

#[tokio::test]
async fn bootstrap_errors() {
    let err = NetworkBackend::connect("nohostport", config(500)).await.unwrap_err();
    assert_eq!(err.code(), ClientCode::InvalidConfig as i32);
    let err = NetworkBackend::connect(" , ", config(500)).await.unwrap_err();
    assert_eq!(err.code(), ClientCode::InvalidConfig as i32);
    let dead = free_port().await;
    let started = std::time::Instant::now();
    let err = NetworkBackend::connect(&format!("127.0.0.1:{dead}"), config(500)).await.unwrap_err();
    assert_eq!(err.code(), 1);
    assert!(err.is_retriable());
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(parse_bootstrap("a:1, b:2,a:1").unwrap(), vec!["a:1", "b:2"]);
    assert_eq!(ServerNode { id: 1, host: "::1".into(), port: 9 }.addr(), "[::1]:9");
}

/// Fluss 1.0 coordinator high availability: a standby coordinator refuses every request but
/// ApiVersions with NOT_COORDINATOR_LEADER (65) before processing it. The backend skips one in
/// the bootstrap list and for `Dest::Any`, and (through `LeaderFollowing`) a request the
/// coordinator it used refused goes to the leader the tablet server's Metadata names.
#[tokio::test]
async fn follows_the_coordinator_leader_past_standbys() {
    let c = fake_cluster().await;
    let standby = FakeServer::start(Kind::Coordinator, free_port().await, c.meta.clone()).await;
    standby.set_standby(true);
    // Only a standby in the list: a retriable error that names the refusal (a leader may be
    // elected meanwhile), not a final one.
    let err = NetworkBackend::connect(&standby.addr(), config(1000)).await.unwrap_err();
    assert!(err.is_retriable() && err.message().contains("NOT_COORDINATOR_LEADER"), "{err:?}");
    // The standby first in the bootstrap list: skipped, the nodes learnt from the leader.
    let nb = NetworkBackend::connect(&format!("{}, {}", standby.addr(), c.coordinator.addr()), config(3000)).await.unwrap();
    assert_eq!(nb.nodes().coordinator.unwrap().addr(), c.coordinator.addr());
    assert_eq!(standby.count(1012), 2);
    let b = LeaderFollowing::new(nb.clone(), Duration::from_secs(3), Duration::from_millis(20));
    // Dest::Any: the standby's live connection is tried last, so it is not asked again.
    for _ in 0..3 {
        call(&b, Dest::Any, proto::MetadataRequest::default()).await.unwrap();
        databases_of(&b, Dest::Any).await.unwrap();
    }
    assert_eq!(standby.count(1012) + standby.count(1003), 2, "{:?}", standby.keys());

    // The leadership moves: the old leader refuses, the tablet server names the new one.
    c.coordinator.set_standby(true);
    standby.set_standby(false);
    c.meta.lock().unwrap().coordinator_server = Some(node(0, standby.port));
    let created = call(&b, Dest::Coordinator, proto::CreateDatabaseRequest { database_name: "d".into(), ignore_if_exists: false, database_json: None });
    created.await.unwrap();
    assert_eq!(c.coordinator.count(1001), 1, "refused once by the old leader");
    assert_eq!(standby.count(1001), 1, "then sent to the new one, once");
    assert!(c.tablet.count(1012) >= 1, "the leader was looked up at the tablet server");

    // No leader at all: the 65 error, saying so, within the patience.
    standby.set_standby(true);
    let nb = NetworkBackend::connect(&c.tablet.addr(), config(3000)).await.unwrap();
    let b = LeaderFollowing::new(nb, Duration::from_millis(600), Duration::from_millis(20));
    let started = std::time::Instant::now();
    let err = databases_of(&b, Dest::Coordinator).await.unwrap_err();
    assert_eq!(err.code(), 65, "{err:?}");
    assert!(err.message().contains("no leader found"), "{err:?}");
    assert!(started.elapsed() < Duration::from_millis(900), "{:?}", started.elapsed());
    assert!(standby.count(1003) >= 3, "{:?}", standby.keys());
}

/// A coordinator that cannot be reached any more (it died; a standby took over): the next
/// request to the coordinator asks a tablet server which one leads, and goes there.
#[tokio::test]
async fn a_dead_coordinator_is_replaced_by_the_one_the_tablet_servers_name() {
    let c = fake_cluster().await;
    let b = NetworkBackend::connect(&c.coordinator.addr(), config(2000)).await.unwrap();
    databases(&b, Dest::Coordinator).await.unwrap();
    let next = FakeServer::start(Kind::Coordinator, free_port().await, c.meta.clone()).await;
    c.meta.lock().unwrap().coordinator_server = Some(node(0, next.port));
    c.coordinator.kill();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(databases(&b, Dest::Coordinator).await.unwrap(), vec!["Coordinator"]);
    assert_eq!(next.count(1003), 1);
    assert_eq!(b.nodes().coordinator.unwrap().addr(), next.addr());
}

async fn databases_of(b: &dyn Backend, dest: Dest) -> Result<Vec<String>> {
    Ok(call(b, dest, proto::ListDatabasesRequest {}).await?.database_name)
}
