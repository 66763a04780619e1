//! The one interface between the write path and whatever answers Fluss requests.
//!
//! The sender, the admin API and the read-back helpers speak **Fluss requests** (the protobuf
//! messages of `wire::proto`) to a [`Backend`]. Two backends answer the same requests:
//! the embedded engine (`embedded`), in process, and the network client (`cluster`), over the
//! Fluss wire protocol. So the write path cannot tell them apart, and every test of it on the
//! embedded engine exercises the exact bytes a real server would receive.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, FlussCode, Result};
use crate::wire::proto;

/// A boxed future returned by a backend.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'static>>;

/// Where a request goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dest {
    /// The coordinator (DDL).
    Coordinator,
    /// Any server (read-only metadata, InitWriter goes to any tablet server).
    Any,
    /// A tablet server by node id (bucket leaders).
    Tablet(i32),
}

macro_rules! requests {
    ($($name:ident($req:ident, $resp:ident) = $key:expr, $version:expr;)*) => {
        /// One Fluss request.
        #[derive(Clone, Debug)]
        pub enum Request { $($name(proto::$req),)* }
        /// One Fluss response (success body; request-level errors are `Err`).
        #[derive(Clone, Debug)]
        pub enum Response { $($name(proto::$resp),)* }

        impl Request {
            /// The Fluss API key.
            pub fn api_key(&self) -> i16 { match self { $(Request::$name(_) => $key,)* } }
            /// The highest API version fluss-writer sends (a server gets `min(this, its max)`).
            pub fn api_version(&self) -> i16 { match self { $(Request::$name(_) => $version,)* } }
            /// Short name for logs and errors.
            pub fn name(&self) -> &'static str { match self { $(Request::$name(_) => stringify!($name),)* } }
            /// Protobuf body.
            pub fn encode_body(&self) -> Vec<u8> {
                use prost::Message;
                match self { $(Request::$name(r) => r.encode_to_vec(),)* }
            }
            /// Decode a request body received with this API key (test servers, fuzzing).
            pub fn decode(api_key: i16, body: &[u8]) -> Result<Request> {
                use prost::Message;
                match api_key {
                    $($key => proto::$req::decode(body).map(Request::$name)
                        .map_err(|e| Error::protocol(format!("bad {} body: {e}", stringify!($req)))),)*
                    k => Err(Error::protocol(format!("unexpected api key {k}"))),
                }
            }
        }

        impl Response {
            /// Decode the success body of the response to a request with this API key.
            pub fn decode(api_key: i16, body: &[u8]) -> Result<Response> {
                use prost::Message;
                match api_key {
                    $($key => proto::$resp::decode(body).map(Response::$name)
                        .map_err(|e| Error::protocol(format!("bad {} body: {e}", stringify!($resp)))),)*
                    k => Err(Error::protocol(format!("unexpected api key {k}"))),
                }
            }
            /// The API key this response answers.
            pub fn api_key(&self) -> i16 { match self { $(Response::$name(_) => $key,)* } }
            /// Protobuf body (test servers).
            pub fn encode_body(&self) -> Vec<u8> {
                use prost::Message;
                match self { $(Response::$name(r) => r.encode_to_vec(),)* }
            }
        }

        $(
            impl Rpc for proto::$req {
                type Response = proto::$resp;
                fn into_request(self) -> Request { Request::$name(self) }
                fn from_response(r: Response) -> Result<proto::$resp> {
                    match r {
                        Response::$name(x) => Ok(x),
                        other => Err(Error::protocol(format!("expected {} but got {:?}", stringify!($resp), other))),
                    }
                }
            }
        )*
    };
}

requests! {
    ApiVersions(ApiVersionsRequest, ApiVersionsResponse) = 1000, 0;
    Authenticate(AuthenticateRequest, AuthenticateResponse) = 1038, 0;
    CreateAcls(CreateAclsRequest, CreateAclsResponse) = 1039, 0;
    ListAcls(ListAclsRequest, ListAclsResponse) = 1040, 0;
    DropAcls(DropAclsRequest, DropAclsResponse) = 1041, 0;
    CreateDatabase(CreateDatabaseRequest, CreateDatabaseResponse) = 1001, 0;
    DropDatabase(DropDatabaseRequest, DropDatabaseResponse) = 1002, 0;
    ListDatabases(ListDatabasesRequest, ListDatabasesResponse) = 1003, 0;
    DatabaseExists(DatabaseExistsRequest, DatabaseExistsResponse) = 1004, 0;
    CreateTable(CreateTableRequest, CreateTableResponse) = 1005, 0;
    DropTable(DropTableRequest, DropTableResponse) = 1006, 0;
    GetTableInfo(GetTableInfoRequest, GetTableInfoResponse) = 1007, 0;
    GetTableSchema(GetTableSchemaRequest, GetTableSchemaResponse) = 1011, 0;
    AlterTable(AlterTableRequest, AlterTableResponse) = 1044, 1;
    ListTables(ListTablesRequest, ListTablesResponse) = 1008, 0;
    TableExists(TableExistsRequest, TableExistsResponse) = 1010, 0;
    ListPartitionInfos(ListPartitionInfosRequest, ListPartitionInfosResponse) = 1009, 0;
    CreatePartition(CreatePartitionRequest, CreatePartitionResponse) = 1036, 0;
    DropPartition(DropPartitionRequest, DropPartitionResponse) = 1037, 0;
    Metadata(MetadataRequest, MetadataResponse) = 1012, 0;
    // v1 (Fluss 1.0.0): bucket entries may name `original_partition_name` (writes to a historical
    // partition), which only v1 carries (`Request::min_version`); 0.9.x and the 1.0 snapshots
    // (max v0) get v0.
    ProduceLog(ProduceLogRequest, ProduceLogResponse) = 1014, 1;
    FetchLog(FetchLogRequest, FetchLogResponse) = 1015, 0;
    // v2 (Fluss 1.0): the client understands STORAGE_BACKPRESSURE (72) and `pressure`; a 0.9.x
    // server (max v1) gets v1. v3 (Fluss 1.0.0): bucket entries may name
    // `original_partition_name` (historical partitions), which needs v3 (`Request::min_version`).
    PutKv(PutKvRequest, PutKvResponse) = 1016, 3;
    Lookup(LookupRequest, LookupResponse) = 1017, 1;
    ListOffsets(ListOffsetsRequest, ListOffsetsResponse) = 1021, 0;
    InitWriter(InitWriterRequest, InitWriterResponse) = 1026, 0;
}

impl Request {
    /// The lowest API version that carries everything in this request: a write with a bucket
    /// entry for a historical partition (`original_partition_name`) needs PRODUCE_LOG v1 or
    /// PUT_KV v3 (Fluss 1.0.0), as the Fluss 1.0 Java client requires; an older version would
    /// drop the field and write the rows as if they belonged to the historical partition itself.
    pub fn min_version(&self) -> i16 {
        match self {
            Request::ProduceLog(r) if r.buckets_req.iter().any(|b| b.original_partition_name.is_some()) => 1,
            Request::PutKv(r) if r.buckets_req.iter().any(|b| b.original_partition_name.is_some()) => 3,
            _ => 0,
        }
    }
}

/// A typed request: its response type and its place in [`Request`] / [`Response`].
pub trait Rpc: Sized + Send + 'static {
    type Response: Send + 'static;
    fn into_request(self) -> Request;
    fn from_response(r: Response) -> Result<Self::Response>;
}

/// What answers Fluss requests: the embedded engine or the network client.
///
/// A request-level failure (a Fluss ERROR_RESPONSE, a dropped connection, a timeout) is `Err`
/// with the Fluss code (`NETWORK_EXCEPTION` = 1 for transport failures); per-bucket failures are
/// inside the response, as on the wire.
pub trait Backend: Send + Sync + 'static {
    /// Send one request and await its response.
    fn send(&self, dest: Dest, request: Request) -> BoxFuture<Response>;
    /// Node ids of the live tablet servers, for logs (the embedded engine has one, id 0).
    fn describe(&self) -> String;
    /// Release connections and files. Later requests fail with `CONNECTION_CLOSED`.
    fn close(&self);
    /// The `(min, max)` versions of `api_key` that the server at `dest` supports (from its
    /// ApiVersions answer), `None` if it does not list the key. Backends that cannot tell answer
    /// `(0, i16::MAX)`: "send and see".
    fn api_version_range(&self, dest: Dest, api_key: i16) -> BoxFuture<Option<(i16, i16)>> {
        let _ = (dest, api_key);
        Box::pin(async { Ok(Some((0, i16::MAX))) })
    }
    /// Find out which coordinator leads now, after one answered `NOT_COORDINATOR_LEADER` (65):
    /// the network backend reads Metadata from a tablet server (which names the leader) instead
    /// of the coordinator it used. A backend with one coordinator has nothing to learn.
    fn find_coordinator_leader(&self) -> BoxFuture<()> {
        Box::pin(async { Ok(()) })
    }
}

/// Longest pause between two attempts of a request that a standby coordinator refused.
pub const MAX_LEADER_PAUSE: Duration = Duration::from_secs(1);

/// A [`Backend`] that follows the coordinator leader of a Fluss 1.0 cluster with standby
/// coordinators (coordinator high availability). A standby answers every request but
/// ApiVersions with `NOT_COORDINATOR_LEADER` (65) **before processing it**, so such a request is
/// always safe to send again, DDL included. This layer does that for every request addressed to
/// the coordinator or to any server: it asks the inner backend to find the leader
/// ([`Backend::find_coordinator_leader`]), pauses (`client.writer.retry-backoff`, doubled per
/// attempt, at most [`MAX_LEADER_PAUSE`]) and sends the request again, until it is answered
/// otherwise or `client.request-timeout` (less a margin of two pauses) has passed since it was
/// first sent; then the last 65 error is returned, saying how long the leader was looked for.
/// Requests to tablet servers pass through untouched (a tablet server never answers 65). Both
/// backends are wrapped in it, so the embedded engine's coordinator faults test the same rule.
pub struct LeaderFollowing {
    inner: Arc<dyn Backend>,
    patience: Duration,
    first_pause: Duration,
}

impl LeaderFollowing {
    /// Wrap `inner`; give up after `patience`, pausing `first_pause` (at least 10 ms) first.
    pub fn new(inner: Arc<dyn Backend>, patience: Duration, first_pause: Duration) -> LeaderFollowing {
        LeaderFollowing { inner, patience, first_pause: first_pause.max(Duration::from_millis(10)) }
    }
}

fn refused_by_a_standby(r: &Result<Response>) -> bool {
    matches!(r, Err(e) if e.code() == FlussCode::NOT_COORDINATOR_LEADER)
}

impl Backend for LeaderFollowing {
    fn send(&self, dest: Dest, request: Request) -> BoxFuture<Response> {
        if matches!(dest, Dest::Tablet(_)) {
            return self.inner.send(dest, request);
        }
        // Sent now (the network backend queues the frame in call order); kept for a resend.
        let start = tokio::time::Instant::now();
        let first = self.inner.send(dest, request.clone());
        let (inner, patience, mut pause) = (self.inner.clone(), self.patience, self.first_pause);
        Box::pin(async move {
            let mut answer = first.await;
            if !refused_by_a_standby(&answer) {
                return answer;
            }
            let mut attempts = 1u32;
            // One pause of margin for the last answer, so that a caller's timeout of the same
            // length hears this error rather than its own.
            while refused_by_a_standby(&answer) && start.elapsed() + pause * 2 <= patience {
                if let Err(e) = inner.find_coordinator_leader().await {
                    log::debug!("looking for the coordinator leader: {e}");
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_LEADER_PAUSE);
                attempts += 1;
                log::info!("{}: the coordinator is a standby (NOT_COORDINATOR_LEADER); attempt {attempts} after looking for the leader", request.name());
                answer = inner.send(dest, request.clone()).await;
            }
            answer.map_err(|e| {
                if e.code() == FlussCode::NOT_COORDINATOR_LEADER {
                    e.context(format!("{} refused by a standby coordinator {attempts} times in {:?}; no leader found", request.name(), start.elapsed()))
                } else {
                    e
                }
            })
        })
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn close(&self) {
        self.inner.close()
    }

    fn api_version_range(&self, dest: Dest, api_key: i16) -> BoxFuture<Option<(i16, i16)>> {
        self.inner.api_version_range(dest, api_key)
    }

    fn find_coordinator_leader(&self) -> BoxFuture<()> {
        self.inner.find_coordinator_leader()
    }
}

/// Send a typed request through a backend.
pub async fn call<R: Rpc>(backend: &dyn Backend, dest: Dest, req: R) -> Result<R::Response> {
    let resp = backend.send(dest, req.into_request()).await?;
    R::from_response(resp)
}
