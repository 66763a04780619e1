//! Network backend against a real Fluss 0.9.x cluster.
//!
//! Start one with `scripts/fluss-cluster.sh start` and export the line it prints
//! (`FLUSS_BOOTSTRAP_SERVERS=127.0.0.1:9123`). Without the variable these tests print a loud
//! notice and pass, except under `CI=true`, where they fail: CI must run them against a cluster.
//! `dead_address_*` needs no cluster and always runs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use fluss_writer::backend::{call, Backend, Dest, Rpc};
use fluss_writer::cluster::readback::{fetch_log, list_offsets, lookup, EARLIEST_OFFSET, LATEST_OFFSET};
use fluss_writer::cluster::NetworkBackend;
use fluss_writer::metadata::{descriptor_from_json, descriptor_to_json};
use fluss_writer::wire::proto;
use fluss_writer::{ClientCode, Config, DataType, Error, Schema, TableDescriptor};

fn bootstrap() -> Option<String> {
    match std::env::var("FLUSS_BOOTSTRAP_SERVERS") {
        Ok(s) if !s.trim().is_empty() => Some(s),
        _ => {
            let ci = std::env::var("CI").map(|v| v.eq_ignore_ascii_case("true") || v == "1").unwrap_or(false);
            if ci {
                panic!("FLUSS_BOOTSTRAP_SERVERS is not set but CI=true: the real-cluster tests must run in CI (export \"$(scripts/fluss-cluster.sh start | tail -n 1)\")");
            }
            // Written to the real stderr, not through eprintln!, so that the test harness does
            // not swallow it for a passing test.
            use std::io::Write;
            let bar = "!".repeat(88);
            let _ = writeln!(
                std::io::stderr(),
                "\n{bar}\n!!! cluster_network: FLUSS_BOOTSTRAP_SERVERS is not set: NOT testing against a real Fluss cluster.\n!!! Run: export \"$(scripts/fluss-cluster.sh start | tail -n 1)\"\n{bar}"
            );
            None
        }
    }
}

fn config() -> Arc<Config> {
    Arc::new({
        let mut c = Config::default();
        c.request_timeout = Duration::from_secs(20);
        c
    })
}

fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{prefix}_{}_{}", std::process::id(), nanos % 1_000_000_000)
}

fn path(db: &str, table: &str) -> proto::PbTablePath {
    proto::PbTablePath { database_name: db.into(), table_name: table.into() }
}

/// Retry `f` while it fails with a retriable error (a new bucket leader may not be ready yet:
/// NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE), for at most 30 s.
async fn retry<T, Fut: std::future::Future<Output = fluss_writer::Result<T>>>(
    what: &str,
    mut f: impl FnMut() -> Fut,
) -> fluss_writer::Result<T> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match f().await {
            Err(e) if e.is_retriable() && Instant::now() < deadline => {
                eprintln!("{what}: retrying after {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            r => return r,
        }
    }
}

/// Metadata for `tables`, polled until every bucket has a leader.
async fn wait_for_leaders(b: &NetworkBackend, tables: &[proto::PbTablePath]) -> proto::MetadataResponse {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let m = call(b, Dest::Any, proto::MetadataRequest { table_path: tables.to_vec(), ..Default::default() }).await;
        match m {
            Ok(m)
                if m.table_metadata.len() == tables.len()
                    && m.table_metadata
                        .iter()
                        .all(|t| !t.bucket_metadata.is_empty() && t.bucket_metadata.iter().all(|bm| bm.leader().is_some())) =>
            {
                return m
            }
            Ok(_) => {}
            Err(e) => eprintln!("metadata while waiting for leaders: {e}"),
        }
        assert!(Instant::now() < deadline, "buckets got no leader within 60 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_versions_of_a_0_9_cluster() {
    let Some(bootstrap) = bootstrap() else { return };
    let b = NetworkBackend::connect(&bootstrap, config()).await.unwrap();
    let nodes = b.nodes();
    assert!(nodes.coordinator.is_some(), "{nodes:?}");
    assert!(!nodes.tablets.is_empty(), "{nodes:?}");
    eprintln!("{}", b.describe());

    let coord = b.api_versions(Dest::Coordinator).await.unwrap();
    assert_eq!(coord.server_type, Some(1));
    for key in [1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1010, 1011, 1012, 1036, 1038] {
        assert_eq!(coord.ranges.get(&key), Some(&(0, 0)), "coordinator key {key}: {:?}", coord.ranges);
    }
    for key in [1014, 1015, 1016, 1017, 1021, 1026] {
        assert!(!coord.supports(key), "coordinator should not list {key}");
    }
    for &id in nodes.tablets.keys() {
        let t = b.api_versions(Dest::Tablet(id)).await.unwrap();
        assert_eq!(t.server_type, Some(2));
        assert_eq!(t.ranges.get(&1016), Some(&(0, 1)), "PutKv on tablet {id}");
        assert_eq!(t.ranges.get(&1017), Some(&(0, 1)), "Lookup on tablet {id}");
        assert_eq!(t.ranges.get(&1034), Some(&(0, 1)), "PrefixLookup on tablet {id}");
        for key in [1000, 1003, 1004, 1007, 1008, 1010, 1011, 1012, 1014, 1015, 1021, 1026, 1038] {
            assert_eq!(t.ranges.get(&key), Some(&(0, 0)), "tablet key {key}: {:?}", t.ranges);
        }
        for key in [1001, 1002, 1005, 1006, 1036] {
            assert!(!t.supports(key), "tablet should not list DDL key {key}");
        }
        for key in 1060..=1064 {
            assert!(!t.supports(key) && !coord.supports(key), "1.x-only key {key} listed by a 0.9 server");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_keys_and_unknown_tablets_fail_fast() {
    let Some(bootstrap) = bootstrap() else { return };
    let b = NetworkBackend::connect(&bootstrap, config()).await.unwrap();
    let tablet = *b.nodes().tablets.keys().next().unwrap();
    // DDL at a tablet server would be dropped silently by the server: refused locally at once.
    let started = Instant::now();
    let err = call(
        &*b,
        Dest::Tablet(tablet),
        proto::CreateDatabaseRequest { database_name: unique("never"), ignore_if_exists: false, database_json: None },
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), ClientCode::Protocol as i32, "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    // ProduceLog at the coordinator likewise.
    let err = call(&*b, Dest::Coordinator, proto::ProduceLogRequest { acks: -1, table_id: 1, timeout_ms: 1000, buckets_req: vec![] })
        .await
        .unwrap_err();
    assert_eq!(err.code(), ClientCode::Protocol as i32, "{err:?}");
    // An unknown node id: retriable NETWORK_EXCEPTION after one refresh.
    let err = call(&*b, Dest::Tablet(987_654), proto::ListDatabasesRequest {}).await.unwrap_err();
    assert_eq!(err.code(), 1, "{err:?}");
    assert!(err.is_retriable());
    // close(): later requests fail with CONNECTION_CLOSED.
    b.close();
    let err = call(&*b, Dest::Any, proto::ListDatabasesRequest {}).await.unwrap_err();
    assert_eq!(err.code(), ClientCode::ConnectionClosed as i32, "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_round_trip_and_read_back() {
    let Some(bootstrap) = bootstrap() else { return };
    let b = NetworkBackend::connect(&bootstrap, config()).await.unwrap();
    let db = unique("fw_net");
    let body = tokio::spawn(admin_round_trip(b.clone(), db.clone()));
    let result = body.await;
    // Always clean up, even after a failed assertion.
    let _ =
        call(&*b, Dest::Coordinator, proto::DropDatabaseRequest { database_name: db.clone(), ignore_if_not_exists: true, cascade: true })
            .await;
    if let Err(e) = result {
        std::panic::resume_unwind(e.into_panic());
    }
}

async fn admin_round_trip(b: Arc<NetworkBackend>, db: String) {
    let dbs = call(&*b, Dest::Any, proto::ListDatabasesRequest {}).await.unwrap().database_name;
    assert!(dbs.iter().any(|d| d == "fluss"), "{dbs:?}");
    assert!(!dbs.contains(&db));

    call(&*b, Dest::Coordinator, proto::CreateDatabaseRequest { database_name: db.clone(), ignore_if_exists: false, database_json: None })
        .await
        .unwrap();
    let err = call(
        &*b,
        Dest::Coordinator,
        proto::CreateDatabaseRequest { database_name: db.clone(), ignore_if_exists: false, database_json: None },
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), 6, "DATABASE_ALREADY_EXIST: {err:?}");
    assert!(call(&*b, Dest::Any, proto::DatabaseExistsRequest { database_name: db.clone() }).await.unwrap().exists);
    let dbs = call(&*b, Dest::Any, proto::ListDatabasesRequest {}).await.unwrap().database_name;
    assert!(dbs.contains(&db), "{dbs:?}");

    // A log table and a primary-key table.
    let log_schema = Schema::builder()
        .column_not_null("id", DataType::Int)
        .column("msg", DataType::String)
        .column("ts", DataType::Timestamp { precision: 3 })
        .build()
        .unwrap();
    let log_desc = TableDescriptor::new(log_schema.clone()).with_bucket_count(3);
    let pk_schema = Schema::builder()
        .column_not_null("id", DataType::Int)
        .column("name", DataType::String)
        .column("amount", DataType::BigInt)
        .primary_key(["id"])
        .build()
        .unwrap();
    let pk_desc = TableDescriptor::new(pk_schema.clone()).with_bucket_count(2);
    for (name, desc) in [("events", &log_desc), ("accounts", &pk_desc)] {
        call(
            &*b,
            Dest::Coordinator,
            proto::CreateTableRequest {
                table_path: path(&db, name),
                table_json: Bytes::from(descriptor_to_json(desc)),
                ignore_if_exists: false,
            },
        )
        .await
        .unwrap();
    }
    let err = call(
        &*b,
        Dest::Coordinator,
        proto::CreateTableRequest {
            table_path: path(&db, "events"),
            table_json: Bytes::from(descriptor_to_json(&log_desc)),
            ignore_if_exists: false,
        },
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), 8, "TABLE_ALREADY_EXIST: {err:?}");
    let mut tables = call(&*b, Dest::Any, proto::ListTablesRequest { database_name: db.clone() }).await.unwrap().table_name;
    tables.sort();
    assert_eq!(tables, vec!["accounts", "events"]);

    let meta = wait_for_leaders(&b, &[path(&db, "events"), path(&db, "accounts")]).await;
    let mut ids = std::collections::HashMap::new();
    for (name, desc, buckets) in [("events", &log_desc, 3usize), ("accounts", &pk_desc, 2usize)] {
        let info = call(&*b, Dest::Any, proto::GetTableInfoRequest { table_path: path(&db, name) }).await.unwrap();
        assert!(info.table_id >= 0);
        assert_eq!(info.schema_id, 1, "first schema id");
        let parsed = descriptor_from_json(&info.table_json).unwrap();
        eprintln!("{name}: table_json = {}", String::from_utf8_lossy(&info.table_json));
        assert_eq!(
            parsed.schema.columns().iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
            desc.schema.columns().iter().map(|c| c.name.clone()).collect::<Vec<_>>()
        );
        assert_eq!(parsed.schema.types(), desc.schema.types());
        assert_eq!(parsed.schema.primary_key(), desc.schema.primary_key());
        assert_eq!(parsed.bucket_count, Some(buckets as i32));
        if desc.schema.has_primary_key() {
            assert_eq!(parsed.bucket_key, vec!["id".to_string()], "default bucket key = primary key");
        }
        let tm = meta.table_metadata.iter().find(|t| t.table_path.table_name == name).unwrap();
        assert_eq!(tm.table_id, info.table_id);
        assert_eq!(tm.bucket_metadata.len(), buckets);
        ids.insert(name, (info.table_id, tm.bucket_metadata.iter().map(|bm| (bm.bucket_id, bm.leader().unwrap())).collect::<Vec<_>>()));
    }

    // Read back an empty log table: offsets 0, no records.
    let (log_id, log_leaders) = ids["events"].clone();
    for &(bucket, leader) in &log_leaders {
        let one = [bucket];
        let latest = retry("ListOffsets", || list_offsets(&*b, leader, log_id, None, &one, LATEST_OFFSET)).await.unwrap();
        assert_eq!(latest, vec![(bucket, 0)]);
        let earliest = list_offsets(&*b, leader, log_id, None, &[bucket], EARLIEST_OFFSET).await.unwrap();
        assert_eq!(earliest, vec![(bucket, 0)]);
        let (hw, records) = retry("FetchLog", || fetch_log(&*b, leader, log_id, None, bucket, 0, 1 << 20)).await.unwrap();
        assert_eq!((hw, records.len()), (0, 0));
    }
    // ListOffsets for a bucket that does not exist is a per-bucket error.
    let (_, leader0) = log_leaders[0];
    let err = list_offsets(&*b, leader0, log_id, None, &[99], LATEST_OFFSET).await.unwrap_err();
    eprintln!("ListOffsets of bucket 99: {err:?}");
    assert!(err.is_server_error());
    // Lookup of an absent key in the PK table.
    let (pk_id, pk_leaders) = ids["accounts"].clone();
    let (bucket, leader) = pk_leaders[0];
    let values = retry("Lookup", || lookup(&*b, leader, pk_id, None, bucket, vec![Bytes::from_static(&[0x05])])).await.unwrap();
    assert_eq!(values, vec![None]);

    // InitWriter on any tablet server.
    let w = call(&*b, Dest::Any, proto::InitWriterRequest { table_path: vec![path(&db, "events")] }).await.unwrap();
    assert!(w.writer_id >= 0, "writer id {}", w.writer_id);
    let w2 = call(&*b, Dest::Any, proto::InitWriterRequest { table_path: vec![path(&db, "accounts")] }).await.unwrap();
    assert_ne!(w.writer_id, w2.writer_id, "writer ids are cluster-unique");

    // Unknown table: TABLE_NOT_EXIST.
    let err = call(&*b, Dest::Any, proto::GetTableInfoRequest { table_path: path(&db, "no_such_table") }).await.unwrap_err();
    assert_eq!(err.code(), 7, "{err:?}");
    assert!(!err.is_retriable());
    let err = call(&*b, Dest::Any, proto::MetadataRequest { table_path: vec![path(&db, "no_such_table")], ..Default::default() })
        .await
        .unwrap_err();
    eprintln!("Metadata of an unknown table: {err:?}");
    assert!(err.code() == 7 || err.code() == -1, "{err:?}");

    // Drop database without cascade while it has tables: DATABASE_NOT_EMPTY.
    let err =
        call(&*b, Dest::Coordinator, proto::DropDatabaseRequest { database_name: db.clone(), ignore_if_not_exists: false, cascade: false })
            .await
            .unwrap_err();
    assert_eq!(err.code(), 5, "{err:?}");

    for name in ["events", "accounts"] {
        call(&*b, Dest::Coordinator, proto::DropTableRequest { table_path: path(&db, name), ignore_if_not_exists: false }).await.unwrap();
    }
    let err = call(&*b, Dest::Coordinator, proto::DropTableRequest { table_path: path(&db, "events"), ignore_if_not_exists: false })
        .await
        .unwrap_err();
    assert_eq!(err.code(), 7, "{err:?}");
    assert!(!call(&*b, Dest::Any, proto::TableExistsRequest { table_path: path(&db, "events") }).await.unwrap().exists);

    call(&*b, Dest::Coordinator, proto::DropDatabaseRequest { database_name: db.clone(), ignore_if_not_exists: false, cascade: false })
        .await
        .unwrap();
    assert!(!call(&*b, Dest::Any, proto::DatabaseExistsRequest { database_name: db.clone() }).await.unwrap().exists);
    let err =
        call(&*b, Dest::Coordinator, proto::DropDatabaseRequest { database_name: db.clone(), ignore_if_not_exists: false, cascade: false })
            .await
            .unwrap_err();
    assert_eq!(err.code(), 4, "DATABASE_NOT_EXIST: {err:?}");
}

fn assert_network_error(err: &Error, started: Instant, timeout: Duration) {
    assert_eq!(err.code(), 1, "{err:?}");
    assert!(err.is_retriable(), "{err:?}");
    assert!(started.elapsed() < timeout + Duration::from_secs(3), "took {:?}", started.elapsed());
}

/// Needs no cluster: a dead address fails with a retriable error within the request timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_address_fails_retriably_within_the_timeout() {
    let timeout = Duration::from_millis(800);
    let mut cfg = Config::default();
    cfg.request_timeout = timeout;
    let cfg = Arc::new(cfg);
    // A closed port: refused at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let started = Instant::now();
    let err = NetworkBackend::connect(&format!("127.0.0.1:{port}"), cfg.clone()).await.unwrap_err();
    assert_network_error(&err, started, timeout);
    // A listener that accepts but never answers: ApiVersions times out.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_addr = silent.local_addr().unwrap();
    let keep = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            held.push(s);
        }
    });
    let started = Instant::now();
    let err = NetworkBackend::connect(&silent_addr.to_string(), cfg.clone()).await.unwrap_err();
    assert_network_error(&err, started, timeout);
    assert!(err.message().contains("timed out"), "{err:?}");
    keep.abort();
    // An unroutable address (TEST-NET-1): connect times out or is refused by the network.
    let started = Instant::now();
    let err = NetworkBackend::connect("192.0.2.1:9123", cfg).await.unwrap_err();
    assert_network_error(&err, started, timeout);
}

/// Many requests pipelined on one connection per server, mixing answers: each future gets the
/// answer to its own request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_requests_are_matched_by_id() {
    let Some(bootstrap) = bootstrap() else { return };
    let b = NetworkBackend::connect(&bootstrap, config()).await.unwrap();
    let tablet = *b.nodes().tablets.keys().next().unwrap();
    let mut pending = Vec::new();
    for i in 0..200 {
        let (name, expect) = if i % 3 == 0 { ("fluss".to_string(), true) } else { (format!("fw_absent_{i}"), false) };
        let dest = [Dest::Coordinator, Dest::Tablet(tablet), Dest::Any][i % 3];
        // Queued in call order; awaited all together below.
        pending.push((expect, b.send(dest, proto::DatabaseExistsRequest { database_name: name }.into_request())));
    }
    let bad = proto::GetTableInfoRequest { table_path: path("fluss", "fw_absent_table") };
    let err_fut = b.send(Dest::Tablet(tablet), bad.into_request());
    for (expect, fut) in pending {
        match fut.await.unwrap() {
            fluss_writer::backend::Response::DatabaseExists(r) => assert_eq!(r.exists, expect),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(err_fut.await.unwrap_err().code(), 7);
}

/// Why unsupported keys are refused locally: a 0.9 tablet server drops a request whose API key
/// it does not register (no response at all), and keeps the connection open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tablet_server_silently_drops_unregistered_keys() {
    use fluss_writer::cluster::Connection;
    use prost::Message;
    let Some(bootstrap) = bootstrap() else { return };
    let b = NetworkBackend::connect(&bootstrap, config()).await.unwrap();
    let tablet = b.nodes().tablets.values().next().unwrap().addr();
    let conn = Connection::open(&tablet, Duration::from_millis(1500), &tokio::runtime::Handle::current()).await.unwrap();
    let body =
        proto::CreateDatabaseRequest { database_name: unique("dropped"), ignore_if_exists: true, database_json: None }.encode_to_vec();
    let err = conn.send_raw(1001, 0, body).await.unwrap_err();
    assert_eq!(err.code(), 1, "{err:?}");
    assert!(err.message().contains("timed out"), "{err:?}");
    // Nothing at all arrived on the connection: the client closes it as silent (a timed-out
    // request on a connection that answers other requests would leave it open).
    assert!(!conn.is_alive(), "a connection on which nothing arrived is closed");
    assert!(err.message().contains("closing it"), "{err:?}");
    // The server itself is fine: a new connection is answered.
    let conn = Connection::open(&tablet, Duration::from_millis(1500), &tokio::runtime::Handle::current()).await.unwrap();
    let dbs = conn.send(&proto::ListDatabasesRequest {}.into_request()).await.unwrap();
    assert!(matches!(dbs, fluss_writer::backend::Response::ListDatabases(_)));
}
