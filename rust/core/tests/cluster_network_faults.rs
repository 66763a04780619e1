//! Network faults between the client and the servers of a real Fluss 0.9.1 cluster: every server
//! (coordinator and tablet servers) is reached through its own loopback proxy
//! (`cluster_support::proxy`, wired in with `client.address-map`), which the tests make stall,
//! black-hole, reset, cut or delay connections while a writer writes with callbacks.
//!
//! * Responses stalled for longer than the request timeout: the client gives up on the
//!   connection, resends on a new one, the server deduplicates (idempotence), every callback runs
//!   once with success, every record is stored once.
//! * A partition (black hole) longer than the delivery timeout: every pending operation completes
//!   with DELIVERY_TIMEOUT within delivery timeout + one request timeout, none hangs, none is
//!   stored; once the proxy heals, the same writer writes again.
//! * Resets (RST), cuts (FIN) and a delay on every chunk while writing: exactly once.
//!
//! They use the plain cluster (`FLUSS_BOOTSTRAP_SERVERS`) and proxies of their own, so they run
//! beside every other suite.

mod cluster_support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cluster_support::proxy::{proxied, Stall};
use cluster_support::*;
use fluss_writer::{ClientCode, Connection, DataType, Schema, TableDescriptor, TableInfo, TablePath, Value, WriterOptions};

fn log_table(conn: &Connection, prefix: &str) -> (TablePath, TableInfo) {
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("payload", DataType::String).build().unwrap();
    let descriptor = TableDescriptor::new(schema).with_bucket_count(3).with_bucket_key(["id"]);
    let path = create_fresh_table(conn, prefix, &descriptor);
    let info = table_info(conn, &path);
    (path, info)
}

fn wait_for(limit: Duration, mut pred: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if pred() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    pred()
}

#[test]
fn stalled_responses_are_resent_on_a_new_connection_and_deduplicated() {
    let Some(bootstrap) = bootstrap("cluster_network_faults") else { return };
    bounded("stalled_responses", Duration::from_secs(120), move || {
        let rec = recorder();
        let proxies = proxied(&bootstrap);
        let conn = proxies.connect(&[("client.request-timeout", "2s"), ("client.writer.delivery-timeout", "60s")]);
        let (path, info) = log_table(&conn, "net_stall");
        let writer = Arc::new(conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap());
        let load = Load::start(writer.clone(), 100, Duration::from_millis(2));
        assert!(wait_for(Duration::from_secs(30), || load.acked() >= 5_000), "records were acknowledged through the proxies");
        let accepted_before = proxies.tablet_connections_accepted();
        let acked_at_stall = load.acked();
        let stalled_at = Instant::now();
        for p in &proxies.tablets {
            p.stall_existing(Stall::Responses);
        }
        // The server keeps applying requests whose responses are held; after the request
        // timeout the client resends on a new connection.
        assert!(
            wait_for(Duration::from_secs(30), || load.acked() > acked_at_stall + 5_000),
            "writing resumed after the stall (acked {} at the stall, {} now)",
            acked_at_stall,
            load.acked()
        );
        let resumed_after = stalled_at.elapsed();
        let (written, outcomes) = load.stop();
        writer.flush(Some(Duration::from_secs(60))).expect("every operation completes");
        let reconnects = proxies.tablet_connections_accepted() - accepted_before;
        let v = verify_exactly_once(&conn, &info, written, &outcomes, &[]);
        let table = path.to_string();
        let retries = rec.count(|l| l.contains(&table) && l.contains("failed, retrying"));
        eprintln!(
            "responses stalled on every tablet connection: writing resumed after {:.1} s with {reconnects} new connection(s); \
             {written} records, outcomes by code {:?}, all stored exactly once and in order; {retries} batch retries",
            resumed_after.as_secs_f64(),
            v.by_code
        );
        assert!(reconnects >= 1, "the client opened a new connection after the stall");
        assert!(resumed_after >= Duration::from_secs(2), "nothing was acknowledged through a stalled connection");
        assert_eq!(v.by_code.keys().copied().collect::<Vec<_>>(), vec![0], "an error reached a callback: {:?}", v.by_code);
        writer.close(None).unwrap();
        drop_table_when_reachable(&conn, &path);
        conn.close(None).unwrap();
    });
}

#[test]
fn partition_longer_than_the_delivery_timeout_fails_pending_operations_in_time_then_heals() {
    let Some(bootstrap) = bootstrap("cluster_network_faults") else { return };
    bounded("partition", Duration::from_secs(120), move || {
        let (request_timeout, delivery_timeout) = (Duration::from_secs(2), Duration::from_secs(6));
        let proxies = proxied(&bootstrap);
        let conn = proxies.connect(&[("client.request-timeout", "2s"), ("client.writer.delivery-timeout", "6s")]);
        let (path, info) = log_table(&conn, "net_partition");
        let writer = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();

        // Per id: (calls, code, bucket, offset) and how long after submission its callback ran.
        let outcomes: Outcomes = Default::default();
        let latency: Arc<Mutex<Vec<Option<Duration>>>> = Default::default();
        let submit = |from: i64, to: i64| {
            for id in from..to {
                outcomes.lock().unwrap().push((0, 0, -1, -1));
                latency.lock().unwrap().push(None);
                let (o, l, t0) = (outcomes.clone(), latency.clone(), Instant::now());
                writer
                    .append_with_callback(&[Value::BigInt(id), Value::String(format!("record {id}"))], move |c| {
                        l.lock().unwrap()[id as usize] = Some(t0.elapsed());
                        let mut v = o.lock().unwrap();
                        let e = &mut v[id as usize];
                        *e = (e.0 + 1, c.error_code(), c.bucket, c.offset);
                    })
                    .unwrap();
            }
        };
        submit(0, 1000);
        writer.flush(Some(Duration::from_secs(30))).expect("writes before the partition");

        for p in &proxies.tablets {
            p.black_hole();
        }
        let cut_at = Instant::now();
        submit(1000, 3000);
        let bound = delivery_timeout + request_timeout + Duration::from_secs(3);
        let all_done = wait_for(bound, || outcomes.lock().unwrap().iter().all(|o| o.0 >= 1));
        let waited = cut_at.elapsed();
        let partition_codes;
        {
            let o = outcomes.lock().unwrap();
            let pending = o.iter().filter(|o| o.0 == 0).count();
            assert!(all_done, "{pending} operations still pending {:.1} s into the partition", waited.as_secs_f64());
            let codes: std::collections::BTreeMap<i32, usize> = o[1000..].iter().fold(Default::default(), |mut m, e| {
                *m.entry(e.1).or_default() += 1;
                m
            });
            // DELIVERY_TIMEOUT, or SEQUENCE_RESET for a later batch of a bucket whose earlier
            // batch timed out (contract C4: it is not retried after the sequence reset).
            let (timeout, reset) = (ClientCode::DeliveryTimeout as i32, ClientCode::SequenceReset as i32);
            assert!(codes.keys().all(|c| *c == timeout || *c == reset), "operations during the partition: {codes:?}");
            assert!(codes.contains_key(&timeout), "operations during the partition: {codes:?}");
            partition_codes = codes;
        }
        let slowest = latency.lock().unwrap()[1000..].iter().map(|l| l.unwrap()).max().unwrap();
        assert!(
            slowest <= delivery_timeout + request_timeout + Duration::from_millis(500),
            "an operation took {slowest:?} to fail (delivery timeout {delivery_timeout:?} + request timeout {request_timeout:?})"
        );

        // Heal: the same writer writes again.
        for p in &proxies.tablets {
            p.heal();
        }
        let healed_at = Instant::now();
        submit(3000, 4000);
        writer.flush(Some(Duration::from_secs(60))).expect("writes after the partition");
        let after = healed_at.elapsed();
        let o = outcomes.lock().unwrap().clone();
        assert!(o.iter().all(|e| e.0 == 1), "every callback ran exactly once");
        let failed_after: Vec<_> = o[3000..].iter().filter(|e| e.1 != 0).collect();
        assert!(failed_after.is_empty(), "writes after healing failed: {:?}", &failed_after[..failed_after.len().min(3)]);

        // Read back: the records before and after are stored once at their offsets, none of
        // those that timed out is stored.
        let stored = read_log(&conn, &info);
        let mut seen = std::collections::HashMap::new();
        for r in &stored {
            let id = match &r.row[0] {
                Value::BigInt(id) => *id,
                v => panic!("unexpected id {v:?}"),
            };
            assert!(seen.insert(id, (r.bucket, r.offset)).is_none(), "record {id} stored twice");
        }
        for (id, e) in o.iter().enumerate() {
            let ok = e.1 == 0;
            match seen.get(&(id as i64)) {
                Some(&(b, off)) => {
                    assert!(ok, "record {id} failed with {} but is stored", e.1);
                    assert_eq!((b, off), (e.2, e.3), "record {id} stored elsewhere than its callback said");
                }
                None => assert!(!ok, "acknowledged record {id} is not stored"),
            }
        }
        eprintln!(
            "partition of {:.1} s: the 2000 operations submitted during it ended with {partition_codes:?} (DELIVERY_TIMEOUT \
             -1008, SEQUENCE_RESET -1018), the slowest {:.2} s after submission (bound {:.1} s); after healing 1000 records \
             written in {:.2} s; 2000 stored, none twice",
            waited.as_secs_f64(),
            slowest.as_secs_f64(),
            (delivery_timeout + request_timeout).as_secs_f64(),
            after.as_secs_f64()
        );
        drop(o);
        writer.close(None).unwrap();
        drop_table_when_reachable(&conn, &path);
        conn.close(None).unwrap();
    });
}

#[test]
fn resets_cuts_and_delays_lose_and_duplicate_nothing() {
    let Some(bootstrap) = bootstrap("cluster_network_faults") else { return };
    bounded("resets_cuts_delays", Duration::from_secs(120), move || {
        let proxies = proxied(&bootstrap);
        let conn = proxies.connect(&[("client.request-timeout", "3s"), ("client.writer.delivery-timeout", "60s")]);
        let (path, info) = log_table(&conn, "net_reset");
        let writer = Arc::new(conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap());
        let load = Load::start(writer.clone(), 100, Duration::from_millis(2));
        assert!(wait_for(Duration::from_secs(30), || load.acked() >= 5_000), "records were acknowledged through the proxies");
        let accepted_before = proxies.tablet_connections_accepted();
        let mut faults = Vec::new();
        for round in 0..3 {
            let (acked, accepted) = (load.acked(), proxies.tablet_connections_accepted());
            for p in &proxies.tablets {
                if round == 1 {
                    p.cut_existing();
                } else {
                    p.reset_existing();
                }
            }
            assert!(
                wait_for(Duration::from_secs(20), || proxies.tablet_connections_accepted() > accepted),
                "the client reconnected after round {round}"
            );
            assert!(wait_for(Duration::from_secs(20), || load.acked() > acked + 2_000), "writing resumed after round {round}");
            faults.push(if round == 1 { "FIN" } else { "RST" });
        }
        let acked = load.acked();
        for p in &proxies.tablets {
            p.set_delay(Duration::from_millis(30));
        }
        assert!(wait_for(Duration::from_secs(20), || load.acked() > acked + 2_000), "writing went on with a 30 ms delay per chunk");
        for p in &proxies.tablets {
            p.set_delay(Duration::ZERO);
        }
        let (written, outcomes) = load.stop();
        writer.flush(Some(Duration::from_secs(60))).expect("every operation completes");
        let reconnects = proxies.tablet_connections_accepted() - accepted_before;
        let v = verify_exactly_once(&conn, &info, written, &outcomes, FAULT_CODES);
        eprintln!(
            "connections {faults:?} three times, then a 30 ms delay per chunk: {reconnects} new connections; {written} records, \
             outcomes by code {:?}, every acknowledged one stored exactly once and in order, {} failed ones stored anyway",
            v.by_code, v.failed_but_stored
        );
        assert!(reconnects >= 3, "the client reconnected after each fault ({reconnects})");
        assert!(v.acked as i64 > written * 9 / 10, "most records were acknowledged: {:?}", v.by_code);
        writer.close(None).unwrap();
        drop_table_when_reachable(&conn, &path);
        conn.close(None).unwrap();
    });
}
