//! Leader failover on a replicated cluster: three tablet servers, tables with three replicas,
//! `acks = all`, idempotence on. While a writer appends at full speed with callbacks, the leader of
//! a busy bucket is killed with SIGKILL (a crash, not a graceful stop) three times, and brought
//! back each time. Afterwards (`cluster_support::verify_exactly_once`):
//!
//! * every callback ran exactly once, with success or a documented error;
//! * every acknowledged record is stored exactly once, at the bucket and offset its callback
//!   reported, read back from the new leaders; no record is stored twice;
//! * within each bucket, acknowledged records are stored in submission order.
//!
//! The cluster is the third one `make test` starts (`FLUSS_TABLETS=3`, see scripts/README.md);
//! it exports `FLUSS_REPLICATED_BOOTSTRAP_SERVERS` and, for the script calls of this test,
//! `FLUSS_REPLICATED_CLUSTER_ENV` (the `KEY=VALUE` words that select that cluster). The test kills
//! servers of that cluster only, so it runs beside the other suites.

mod cluster_support;

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cluster_support::*;
use fluss_writer::{Connection, DataType, Schema, TableDescriptor, WriterOptions};

struct Cluster {
    bootstrap: String,
    env: Vec<(String, String)>,
}

fn replicated(test: &str) -> Option<Cluster> {
    let bootstrap = std::env::var("FLUSS_REPLICATED_BOOTSTRAP_SERVERS").ok().filter(|s| !s.trim().is_empty());
    let env = std::env::var("FLUSS_REPLICATED_CLUSTER_ENV").ok().filter(|s| !s.trim().is_empty());
    match (bootstrap, env) {
        (Some(bootstrap), Some(env)) => Some(Cluster {
            bootstrap,
            env: env.split_whitespace().filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }),
        _ => {
            let ci = std::env::var("CI").map(|v| v.eq_ignore_ascii_case("true") || v == "1").unwrap_or(false);
            assert!(!ci, "CI=true but the replicated cluster is not set up: {test} must run (scripts/test-all.sh starts it)");
            eprintln!("\n!!! {test}: FLUSS_REPLICATED_BOOTSTRAP_SERVERS / FLUSS_REPLICATED_CLUSTER_ENV are not set: NOT testing failover.");
            None
        }
    }
}

impl Cluster {
    fn script(&self, args: &[&str]) -> Duration {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/fluss-cluster.sh");
        let t0 = Instant::now();
        let out = Command::new(script).args(args).envs(self.env.iter().cloned()).output().expect("run scripts/fluss-cluster.sh");
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "fluss-cluster.sh {args:?} failed: {}", out.status);
        t0.elapsed()
    }
}

#[test]
fn sigkill_of_the_leader_three_times_loses_and_duplicates_nothing() {
    let Some(cluster) = replicated("cluster_failover") else { return };
    bounded("leader_sigkill", Duration::from_secs(300), move || {
        let rec = recorder();
        let conn: Connection = connect(
            &cluster.bootstrap,
            &[
                ("client.request-timeout", "5s"),
                ("client.writer.delivery-timeout", "90s"),
                ("client.writer.retry-backoff", "50ms"),
                ("client.writer.batch-size", "64kb"),
                ("client.writer.acks", "all"),
            ],
        );
        let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("payload", DataType::String).build().unwrap();
        let descriptor =
            TableDescriptor::new(schema).with_bucket_count(3).with_bucket_key(["id"]).with_property("table.replication.factor", "3");
        let path = create_fresh_table(&conn, "failover", &descriptor);
        let info = table_info(&conn, &path);
        let writer = Arc::new(conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap());

        let load = Load::start(writer.clone(), 100, Duration::from_millis(2));
        let t_write = Instant::now();
        while load.acked() < 10_000 && t_write.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(100));
        }
        let acked_before = load.acked();
        let mut kills = Vec::new();
        for round in 0..3 {
            let bucket = round % 3;
            let leader = leaders(&conn, &info)[bucket];
            let acked = load.acked();
            cluster.script(&["kill-tablet", &leader.to_string(), "KILL"]);
            let killed_at = Instant::now();
            // Writing goes on without the server until the others took over its buckets.
            let new_leader = loop {
                let l = leaders(&conn, &info)[bucket];
                if l != leader || killed_at.elapsed() > Duration::from_secs(60) {
                    break l;
                }
                std::thread::sleep(Duration::from_millis(100));
            };
            let failover = killed_at.elapsed();
            std::thread::sleep(Duration::from_millis(1000));
            let progressed = load.acked() - acked;
            cluster.script(&["start-tablet", &leader.to_string()]);
            // Let it catch up as a follower before the next crash.
            std::thread::sleep(Duration::from_millis(3000));
            eprintln!(
                "round {round}: killed tablet server {leader} (leader of bucket {bucket}); new leader {new_leader} after {:.1} s; \
                 {progressed} records acknowledged meanwhile",
                failover.as_secs_f64()
            );
            assert_ne!(new_leader, leader, "no new leader for bucket {bucket} within 60 s");
            kills.push(failover);
        }
        let (written, outcomes) = load.stop();
        let t_flush = Instant::now();
        writer.flush(Some(Duration::from_secs(120))).expect("every operation completes within the delivery timeout");
        let flush_time = t_flush.elapsed();
        let write_time = t_write.elapsed();

        let t_read = Instant::now();
        let v = verify_exactly_once(&conn, &info, written, &outcomes, FAULT_CODES);
        let table = path.to_string();
        let retries = rec.count(|l| l.contains(&table) && l.contains("failed, retrying"));
        eprintln!(
            "three leader SIGKILLs while writing: {written} records in {:.1} s ({acked_before} acknowledged before the first), \
             failovers {kills:?}; outcomes by code {:?}; {} acknowledged, all stored exactly once and in order; {} failed ones \
             were stored anyway (at most once); {retries} batch retries; flush {:.1} s, read-back {:.0} ms",
            write_time.as_secs_f64(),
            v.by_code,
            v.acked,
            v.failed_but_stored,
            flush_time.as_secs_f64(),
            t_read.elapsed().as_secs_f64() * 1e3
        );
        assert!(acked_before > 0, "records were acknowledged before the first crash");
        assert!(v.acked as i64 > written * 9 / 10, "most records were acknowledged: {:?}", v.by_code);
        writer.close(None).unwrap();
        conn.admin().drop_table(&path, true).unwrap();
        conn.close(None).unwrap();
    });
}
