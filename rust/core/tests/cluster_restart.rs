//! Faults against the real server: the tablet server restarts while an idempotent writer keeps
//! appending with callbacks.
//!
//! * every callback fires exactly once (success, or a documented error);
//! * afterwards the table holds every acknowledged record exactly once, at the bucket and offset
//!   its callback reported, and no record at all twice (resent batches are deduplicated).
//!
//! The restart affects every client of the cluster, so this test is `#[ignore]`d and runs in its
//! own step of scripts/test-all.sh, after the other suites:
//!
//! ```text
//! FLUSS_BOOTSTRAP_SERVERS=127.0.0.1:9123 cargo test -p fluss-writer --test cluster_restart -- --ignored --nocapture
//! ```
//!
//! It restarts the tablet server with `scripts/fluss-cluster.sh restart-tablet` (graceful stop,
//! same data dir); `FLUSS_RESTART_SIGNAL=KILL` in the environment makes it a crash instead.

mod cluster_support;

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cluster_support::*;
use fluss_writer::{DataType, Schema, TableDescriptor, WriterOptions};

fn restart_tablet() -> Duration {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/fluss-cluster.sh");
    let t0 = Instant::now();
    let out = Command::new(script).arg("restart-tablet").output().expect("run scripts/fluss-cluster.sh restart-tablet");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "restart-tablet failed: {}", out.status);
    t0.elapsed()
}

#[test]
#[ignore = "restarts the shared cluster's tablet server: run alone with --ignored (scripts/test-all.sh does)"]
fn tablet_restart_while_writing_loses_and_duplicates_nothing() {
    let Some(bs) = bootstrap("cluster_restart") else { return };
    bounded("tablet_restart", Duration::from_secs(60), move || {
        let rec = recorder();
        let conn = connect(
            &bs,
            &[
                ("client.request-timeout", "5s"),
                ("client.writer.delivery-timeout", "40s"),
                ("client.writer.retry-backoff", "50ms"),
                ("client.writer.batch-size", "64kb"),
            ],
        );
        let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("payload", DataType::String).build().unwrap();
        let path = create_fresh_table(&conn, "restart", &TableDescriptor::new(schema).with_bucket_count(4).with_bucket_key(["id"]));
        let info = table_info(&conn, &path);
        let writer = Arc::new(conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap());

        let load = Load::start(writer.clone(), 100, Duration::from_millis(5));
        let t_write = Instant::now();
        std::thread::sleep(Duration::from_millis(1500));
        let acked_before = load.acked();
        let restart = restart_tablet();
        std::thread::sleep(Duration::from_millis(1500));
        let (written, outcomes) = load.stop();
        let t_flush = Instant::now();
        writer.flush(Some(Duration::from_secs(45))).expect("every operation completes within the delivery timeout");
        let flush_time = t_flush.elapsed();
        let write_time = t_write.elapsed();

        let t_read = Instant::now();
        let Verdict { acked, by_code, failed_but_stored, .. } = verify_exactly_once(&conn, &info, written, &outcomes, FAULT_CODES);
        let read_time = t_read.elapsed();
        let table = path.to_string();
        let retries = rec.count(|l| l.contains(&table) && l.contains("failed, retrying"));
        let resets = rec.count(|l| l.contains(&table) && l.contains("resetting the idempotent writer"));
        eprintln!(
            "tablet restart ({:.1} s) while writing: {written} records in {:.1} s ({acked_before} acknowledged before the restart), \
             outcomes by code {by_code:?}; {acked} acknowledged, all stored exactly once; {failed_but_stored} failed ones were \
             stored anyway (at most once); {retries} batch retries, {resets} sequence resets; flush took {:.1} s, \
             read-back {:.0} ms",
            restart.as_secs_f64(),
            write_time.as_secs_f64(),
            flush_time.as_secs_f64(),
            read_time.as_secs_f64() * 1e3
        );
        assert!(acked_before > 0, "records were acknowledged before the restart");
        assert!(acked as i64 > written / 2, "most records were acknowledged: {by_code:?}");
        writer.close(None).unwrap();
        drop_table_when_reachable(&conn, &path);
        conn.close(None).unwrap();
    });
}
