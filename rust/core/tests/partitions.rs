//! Partitioned tables, end to end: DDL (create, list, drop partitions), writes routed by value
//! (rows, keys, Arrow batches across partitions), create on write with and without
//! `client.writer.dynamic-create-partition.enabled`, primary-key partitioned tables (upsert,
//! delete, lookup), bad partition values, a partition dropped under pending writes, auto
//! partitions, and read-back per partition.
//!
//! Every test runs on the embedded engine, and those marked `_cluster` also against the real
//! Fluss 0.9.1 cluster at FLUSS_BOOTSTRAP_SERVERS (see `cluster_support`).

mod cluster_support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use cluster_support::{bootstrap, bounded, connect, database, recorder, unique, Seen};
use fluss_writer::embedded::ChangeType;
use fluss_writer::partition::AutoPartition;
use fluss_writer::{
    ClientCode, Connection, DataType, FlussCode, PartitionSpec, Schema, TableDescriptor, TablePath, Value, WriteCompletion, WriterOptions,
};

const LIMIT: Duration = Duration::from_secs(120);

fn embedded(extra: &[(&str, &str)]) -> Connection {
    cluster_support::embedded_with(extra)
}

/// A log table partitioned by `dt` (STRING), 3 buckets keyed by `id`.
fn log_descriptor() -> TableDescriptor {
    cluster_support::partitioned_log_descriptor(3)
}

/// Create `unique(prefix)`: a non-partitioned table the Fluss 0.9.1 coordinator gives no leaders
/// is abandoned for another ([`cluster_support::create`]).
fn create(conn: &Connection, prefix: &str, d: &TableDescriptor) -> TablePath {
    cluster_support::create(conn, prefix, d)
}

fn spec(dt: &str) -> PartitionSpec {
    PartitionSpec::new([("dt", dt)])
}

fn ddl(conn: &Connection) {
    let admin = conn.admin();
    let path = create(conn, "pddl", &log_descriptor());
    assert!(admin.list_partitions(&path).unwrap().is_empty());
    admin.create_partition(&path, &spec("2026-12-03"), false).unwrap();
    admin.create_partition(&path, &spec("2026-12-04"), false).unwrap();
    let e = admin.create_partition(&path, &spec("2026-12-03"), false).unwrap_err();
    assert_eq!(e.code(), FlussCode::PARTITION_ALREADY_EXISTS, "{e}");
    admin.create_partition(&path, &spec("2026-12-03"), true).unwrap();
    let parts = admin.list_partitions(&path).unwrap();
    let names: Vec<&str> = parts.iter().map(|p| p.partition_name.as_str()).collect();
    assert_eq!(names, ["2026-12-03", "2026-12-04"]);
    assert_ne!(parts[0].partition_id, parts[1].partition_id);
    assert_eq!(parts[0].spec.get("dt"), Some("2026-12-03"));

    // Bad specs name the key at fault, before anything is sent.
    for (bad, what) in [
        (PartitionSpec::new([("day", "x")]), "\"day\""),
        (PartitionSpec::new([("dt", "a b")]), "\"dt\""),
        (PartitionSpec::new::<&str, &str>([]), "\"dt\""),
    ] {
        let e = admin.create_partition(&path, &bad, false).unwrap_err();
        assert_eq!(e.code(), ClientCode::InvalidTable as i32, "{e}");
        assert!(e.message().contains(what), "{e}");
    }

    admin.drop_partition(&path, &spec("2026-12-04"), false).unwrap();
    let e = admin.drop_partition(&path, &spec("2026-12-04"), false).unwrap_err();
    assert_eq!(e.code(), FlussCode::PARTITION_NOT_EXISTS, "{e}");
    admin.drop_partition(&path, &spec("2026-12-04"), true).unwrap();
    let names: Vec<String> = admin.list_partitions(&path).unwrap().into_iter().map(|p| p.partition_name).collect();
    assert_eq!(names, ["2026-12-03"]);
    // A recreated partition gets a new id.
    let old = admin.list_partitions(&path).unwrap()[0].partition_id;
    admin.drop_partition(&path, &spec("2026-12-03"), false).unwrap();
    admin.create_partition(&path, &spec("2026-12-03"), false).unwrap();
    assert_ne!(admin.list_partitions(&path).unwrap()[0].partition_id, old);

    // Partition calls on a table without partition keys.
    let plain = create(conn, "pplain", &TableDescriptor::new(log_descriptor().schema).with_bucket_count(1));
    assert_eq!(admin.list_partitions(&plain).unwrap_err().code(), FlussCode::TABLE_NOT_PARTITIONED);
    assert_eq!(admin.create_partition(&plain, &spec("x"), false).unwrap_err().code(), FlussCode::TABLE_NOT_PARTITIONED);

    // Descriptor rules.
    let dec = Schema::builder().column("k", DataType::Decimal { precision: 5, scale: 2 }).column("v", DataType::Int).build().unwrap();
    let e = admin
        .create_table(
            &TablePath::new(database(conn), unique("pdec")).unwrap(),
            &TableDescriptor::new(dec).with_partition_keys(["k"]),
            false,
        )
        .unwrap_err();
    assert_eq!(e.code(), ClientCode::InvalidTable as i32, "{e}");
    let pk = Schema::builder().column_not_null("id", DataType::BigInt).column("dt", DataType::String).primary_key(["id"]).build().unwrap();
    let e = admin
        .create_table(&TablePath::new(database(conn), unique("ppk")).unwrap(), &TableDescriptor::new(pk).with_partition_keys(["dt"]), false)
        .unwrap_err();
    assert!(e.message().contains("primary key"), "{e}");
}

#[test]
fn ddl_embedded() {
    ddl(&embedded(&[]));
}

#[test]
fn ddl_cluster() {
    let Some(b) = bootstrap("partitions::ddl_cluster") else { return };
    bounded("ddl_cluster", LIMIT, move || ddl(&connect(&b, &[])));
}

/// Rows for three partitions (two created beforehand, one created by the writer), with
/// callbacks, an Arrow batch across partitions, and read-back per partition.
fn routing(conn: &Connection) {
    let path = create(conn, "proute", &log_descriptor());
    let admin = conn.admin();
    admin.create_partition(&path, &spec("2026-12-01"), false).unwrap();
    admin.create_partition(&path, &spec("2026-12-02"), false).unwrap();
    let table = conn.get_table(&path).unwrap();
    let w = table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let days = ["2026-12-01", "2026-12-02", "2026-12-03"];
    let seen = Seen::default();
    let n = 600i64;
    for i in 0..n {
        let row = vec![Value::BigInt(i), Value::String(days[i as usize % 3].into()), Value::String(format!("m{i}"))];
        w.append_with_callback(&row, seen.cb()).unwrap();
    }
    // One Arrow batch whose rows go to all three partitions (and several buckets).
    let ids: Vec<i64> = (n..n + 30).collect();
    let dts: Vec<&str> = (0..30).map(|i| days[i % 3]).collect();
    let msgs: Vec<String> = ids.iter().map(|i| format!("m{i}")).collect();
    let rb = RecordBatch::try_new(
        table.info().schema().to_arrow(),
        vec![
            Arc::new(Int64Array::from(ids.clone())) as ArrayRef,
            Arc::new(StringArray::from(dts)) as ArrayRef,
            Arc::new(StringArray::from(msgs)) as ArrayRef,
        ],
    )
    .unwrap();
    let arrow = w.write_arrow_batch(&rb).unwrap();
    w.flush(None).unwrap();
    let done = arrow.wait(Some(Duration::from_secs(30))).unwrap();
    assert!(done.is_ok(), "{:?}", done.error);
    let parts: std::collections::BTreeSet<&str> = done.bucket_results.iter().map(|r| r.partition.as_deref().unwrap()).collect();
    assert_eq!(parts.len(), 3, "{:?}", done.bucket_results);
    assert_eq!(done.bucket_results.iter().map(|r| r.rows).sum::<usize>(), 30);

    let all = seen.all();
    assert_eq!(all.len(), n as usize);
    // Where each record's callback says it went.
    let mut at: BTreeMap<(String, i32, i64), i64> = BTreeMap::new();
    let ids_by_partition: BTreeMap<String, i64> =
        admin.list_partitions(&path).unwrap().into_iter().map(|p| (p.partition_name, p.partition_id)).collect();
    assert_eq!(ids_by_partition.keys().collect::<Vec<_>>(), days.iter().collect::<Vec<_>>(), "the writer created 2026-12-03");
    for c in &all {
        assert!(c.is_ok(), "{:?}", c.error);
        let p = c.partition.as_deref().expect("a partition").to_string();
        assert_eq!(c.partition_id, Some(ids_by_partition[&p]));
        at.insert((p, c.bucket, c.offset), -1);
    }
    // Read every bucket of every partition back: each row is in the partition of its dt, once.
    let mut count = 0;
    let mut stored: BTreeMap<(String, i32), u64> = BTreeMap::new();
    for day in days {
        for b in 0..3 {
            for r in table.scan_partition(day, b, 0).unwrap() {
                *stored.entry((day.to_string(), b)).or_default() += 1;
                assert_eq!(r.change_type, ChangeType::AppendOnly);
                assert_eq!(r.row[1], Value::String(day.into()));
                let Value::BigInt(id) = r.row[0] else { panic!("{:?}", r.row) };
                if id < n {
                    let slot = at.get_mut(&(day.to_string(), b, r.offset)).expect("a callback reported this place");
                    assert_eq!(*slot, -1, "two records at one place");
                    *slot = id;
                }
                count += 1;
            }
        }
    }
    assert_eq!(count, n + 30);
    assert!(at.values().all(|&v| v >= 0));
    // The writer's per-bucket metrics name each (partition, bucket) with what it stored there.
    let counted: BTreeMap<(String, i32), u64> =
        w.bucket_counts().into_iter().map(|c| ((c.partition.clone().expect("a partition"), c.bucket), c.records_sent)).collect();
    assert_eq!(counted, stored);
    let e = table.scan_partition("2027-01-01", 0, 0).unwrap_err();
    assert_eq!(e.code(), FlussCode::PARTITION_NOT_EXISTS, "{e}");
    w.close(None).unwrap();
}

#[test]
fn routing_embedded() {
    routing(&embedded(&[]));
}

#[test]
fn routing_cluster() {
    let Some(b) = bootstrap("partitions::routing_cluster") else { return };
    bounded("routing_cluster", LIMIT, move || routing(&connect(&b, &[])));
}

/// With create on write off, rows for a missing partition fail in their callbacks with
/// PARTITION_NOT_EXISTS, exactly once; rows for an existing partition are unaffected.
fn no_create(conn: &Connection) {
    let path = create(conn, "pnocreate", &log_descriptor());
    conn.admin().create_partition(&path, &spec("here"), false).unwrap();
    let w = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let seen = Seen::default();
    for i in 0..200i64 {
        let dt = if i % 2 == 0 { "here" } else { "missing" };
        w.append_with_callback(&[Value::BigInt(i), Value::String(dt.into()), Value::Null], seen.cb()).unwrap();
    }
    w.flush(Some(Duration::from_secs(60))).unwrap();
    let all = seen.all();
    assert_eq!(all.len(), 200);
    for c in &all {
        match c.partition.as_deref() {
            Some("here") => assert!(c.is_ok(), "{:?}", c.error),
            Some("missing") => assert_eq!(c.error_code(), FlussCode::PARTITION_NOT_EXISTS, "{:?}", c.error),
            other => panic!("{other:?}"),
        }
    }
    let names: Vec<String> = conn.admin().list_partitions(&path).unwrap().into_iter().map(|p| p.partition_name).collect();
    assert_eq!(names, ["here"]);
    // Once the partition exists, the same writer writes to it.
    conn.admin().create_partition(&path, &spec("missing"), false).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = w.append(&[Value::BigInt(1000), Value::String("missing".into()), Value::Null]).unwrap();
        w.flush(None).unwrap();
        let c = r.wait(None).unwrap();
        if c.is_ok() {
            break;
        }
        assert_eq!(c.error_code(), FlussCode::PARTITION_NOT_EXISTS);
        assert!(Instant::now() < deadline, "the created partition was never written");
        std::thread::sleep(Duration::from_millis(500));
    }
    w.close(None).unwrap();
}

#[test]
fn no_create_on_write_embedded() {
    no_create(&embedded(&[("client.writer.dynamic-create-partition.enabled", "false")]));
}

#[test]
fn no_create_on_write_cluster() {
    let Some(b) = bootstrap("partitions::no_create_on_write_cluster") else { return };
    bounded("no_create_on_write_cluster", LIMIT, move || {
        no_create(&connect(&b, &[("client.writer.dynamic-create-partition.enabled", "false")]))
    });
}

/// Writers on several threads (two writers, two connections) create the same new partitions at
/// once: each partition is created once, every write succeeds, nothing is lost.
fn concurrent_create(conns: [Connection; 2]) {
    let path = create(&conns[0], "pconc", &log_descriptor());
    let seen = Seen::default();
    std::thread::scope(|s| {
        for (t, conn) in [(0, &conns[0]), (1, &conns[0]), (2, &conns[1]), (3, &conns[1])] {
            let (seen, path) = (seen.clone(), path.clone());
            s.spawn(move || {
                let w = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
                for i in 0..250i64 {
                    let row = [Value::BigInt(t * 1000 + i), Value::String(format!("d{}", i % 5)), Value::Null];
                    w.append_with_callback(&row, seen.cb()).unwrap();
                }
                w.close(None).unwrap();
            });
        }
    });
    let all = seen.all();
    assert_eq!(all.len(), 1000);
    assert!(all.iter().all(|c| c.is_ok()), "{:?}", all.iter().find(|c| !c.is_ok()));
    let parts = conns[0].admin().list_partitions(&path).unwrap();
    assert_eq!(parts.iter().map(|p| p.partition_name.as_str()).collect::<Vec<_>>(), ["d0", "d1", "d2", "d3", "d4"]);
    let table = conns[0].get_table(&path).unwrap();
    let stored: usize =
        parts.iter().map(|p| (0..3).map(|b| table.scan_partition(&p.partition_name, b, 0).unwrap().len()).sum::<usize>()).sum();
    assert_eq!(stored, 1000);
}

#[test]
fn concurrent_create_on_write_embedded() {
    // One in-memory engine: both handles are the same connection.
    let conn = embedded(&[]);
    concurrent_create([conn.clone(), conn]);
}

#[test]
fn concurrent_create_on_write_cluster() {
    let Some(b) = bootstrap("partitions::concurrent_create_on_write_cluster") else { return };
    bounded("concurrent_create_on_write_cluster", LIMIT, move || concurrent_create([connect(&b, &[]), connect(&b, &[])]));
}

/// A primary-key table partitioned by (region, day): upserts, deletes and lookups per partition;
/// the key inside a partition leaves out the partition columns.
fn pk_partitioned(conn: &Connection) {
    let schema = Schema::builder()
        .column_not_null("region", DataType::String)
        .column_not_null("day", DataType::Date)
        .column_not_null("id", DataType::Int)
        .column("v", DataType::String)
        .primary_key(["region", "day", "id"])
        .build()
        .unwrap();
    let d = TableDescriptor::new(schema).with_bucket_count(2).with_partition_keys(["region", "day"]);
    let path = create(conn, "ppk", &d);
    let table = conn.get_table(&path).unwrap();
    assert_eq!(table.info().bucket_key_indexes(), vec![2], "bucket key = primary key without partition keys");
    let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    let regions = ["eu", "us"];
    let days = [20_425, 20_426]; // 2025-12-03, 2025-12-04
    let seen = Seen::default();
    for r in regions {
        for day in days {
            for id in 0..50 {
                w.upsert_with_callback(
                    &[Value::String(r.into()), Value::Date(day), Value::Int(id), Value::String(format!("{r}-{day}-{id}"))],
                    seen.cb(),
                )
                .unwrap();
            }
        }
    }
    // Same id in every partition; delete id 7 in one partition only.
    w.delete_with_callback(&[Value::String("eu".into()), Value::Date(20_425), Value::Int(7)], seen.cb()).unwrap();
    w.flush(None).unwrap();
    let all = seen.all();
    assert_eq!(all.len(), 201);
    assert!(all.iter().all(|c| c.is_ok()), "{:?}", all.iter().find(|c| !c.is_ok()));
    let parts: std::collections::BTreeSet<String> = all.iter().map(|c| c.partition.as_deref().unwrap().to_string()).collect();
    assert_eq!(parts.into_iter().collect::<Vec<_>>(), ["eu$2025-12-03", "eu$2025-12-04", "us$2025-12-03", "us$2025-12-04"]);
    for r in regions {
        for day in days {
            for id in [0, 7, 49] {
                let got = table.lookup(&[Value::String(r.into()), Value::Date(day), Value::Int(id)]).unwrap();
                if (r, day, id) == ("eu", 20_425, 7) {
                    assert_eq!(got, None);
                } else {
                    assert_eq!(got.unwrap()[3], Value::String(format!("{r}-{day}-{id}")));
                }
            }
        }
    }
    // A partition that does not exist holds no key.
    assert_eq!(table.lookup(&[Value::String("mars".into()), Value::Date(1), Value::Int(1)]).unwrap(), None);
    // The changelog of one partition: 50 inserts and one delete.
    let mut log = Vec::new();
    for b in 0..2 {
        log.extend(table.scan_partition("eu$2025-12-03", b, 0).unwrap());
    }
    assert_eq!(log.iter().filter(|r| r.change_type == ChangeType::Insert).count(), 50);
    assert_eq!(log.iter().filter(|r| r.change_type == ChangeType::Delete).count(), 1);
    w.close(None).unwrap();
}

#[test]
fn pk_partitioned_embedded() {
    pk_partitioned(&embedded(&[]));
}

#[test]
fn pk_partitioned_cluster() {
    let Some(b) = bootstrap("partitions::pk_partitioned_cluster") else { return };
    bounded("pk_partitioned_cluster", LIMIT, move || pk_partitioned(&connect(&b, &[])));
}

/// Values that cannot name a partition are refused synchronously (INVALID_ROW naming the
/// column) and nothing is accepted.
#[test]
fn bad_partition_values_are_refused_synchronously() {
    let conn = embedded(&[]);
    let path = create(&conn, "pbad", &log_descriptor());
    let table = conn.get_table(&path).unwrap();
    let w = table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    for dt in [
        Value::Null,
        Value::String("a b".into()),
        Value::String(String::new()),
        Value::String("__sys".into()),
        Value::String("__historical__".into()),
        Value::String("x".repeat(201)),
    ] {
        let e =
            w.append_with_callback(&[Value::BigInt(1), dt.clone(), Value::Null], |_| panic!("no callback for a refused row")).unwrap_err();
        assert_eq!(e.code(), ClientCode::InvalidRow as i32, "{dt:?}: {e}");
        assert!(e.message().contains("\"dt\""), "{e}");
    }
    let rb = RecordBatch::try_new(
        table.info().schema().to_arrow(),
        vec![
            Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
            Arc::new(StringArray::from(vec![Some("ok"), None])) as ArrayRef,
            Arc::new(StringArray::from(vec![Some("a"), Some("b")])) as ArrayRef,
        ],
    )
    .unwrap();
    let e = w.write_arrow_batch_detached(&rb).unwrap_err();
    assert_eq!(e.code(), ClientCode::InvalidRow as i32, "{e}");
    assert!(e.message().contains("row 1"), "{e}");
    assert_eq!(w.stats().pending_callbacks, 0);
    w.flush(None).unwrap();
    assert!(conn.admin().list_partitions(&path).unwrap().is_empty(), "a refused row created a partition");
}

/// A partition dropped while writes for it are pending: every callback completes exactly once
/// within the delivery timeout (here: the writer recreates it, so they succeed), nothing hangs.
#[test]
fn partition_dropped_under_pending_writes() {
    // Batches linger until a flush: the rows written below are still pending when the drop
    // happens, however slowly this thread runs (with a 50 ms linger, a stall sent them first).
    let conn = embedded(&[("client.writer.delivery-timeout", "10s"), ("client.writer.batch-timeout", "10s")]);
    let path = create(&conn, "pdrop", &log_descriptor());
    let table = conn.get_table(&path).unwrap();
    let w = table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let seen = Seen::default();
    for i in 0..100i64 {
        w.append_with_callback(&[Value::BigInt(i), Value::String("d".into()), Value::Null], seen.cb()).unwrap();
    }
    w.flush(None).unwrap();
    let first = conn.admin().list_partitions(&path).unwrap()[0].partition_id;
    // Fail the next write to every bucket once, so batches are pending while the drop happens.
    let engine = conn.embedded().unwrap();
    for b in 0..3 {
        engine.faults().inject_at(
            &path,
            Some("d"),
            b,
            fluss_writer::embedded::Fault::Delay { delay: Duration::from_millis(300), times: 1 },
        );
    }
    for i in 100..400i64 {
        w.append_with_callback(&[Value::BigInt(i), Value::String("d".into()), Value::Null], seen.cb()).unwrap();
    }
    conn.admin().drop_partition(&path, &spec("d"), false).unwrap();
    let t0 = Instant::now();
    w.flush(Some(Duration::from_secs(20))).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(12), "{:?}", t0.elapsed());
    let all = seen.all();
    assert_eq!(all.len(), 400, "every callback exactly once");
    let later = conn.admin().list_partitions(&path).unwrap();
    assert_eq!(later.len(), 1);
    assert_ne!(later[0].partition_id, first, "the writer recreated the dropped partition");
    // Whatever succeeded after the drop is stored in the new partition, once.
    let ok_after: usize = all[100..].iter().filter(|c| c.is_ok() && c.partition_id == Some(later[0].partition_id)).count();
    let stored: usize = (0..3).map(|b| table.scan_partition("d", b, 0).unwrap().len()).sum();
    assert_eq!(stored, ok_after);
    w.close(None).unwrap();
}

/// What a writer reported while partition `d` of its table was dropped under it: every record's
/// completion (once each, checked), the partition ids before and after, where the drop fell in
/// the record numbers, and the outcome counts after the drop (code -> n).
struct ThroughDrop {
    once: BTreeMap<i64, WriteCompletion>,
    first: i64,
    new: i64,
    after: i64,
    total: i64,
    counts: BTreeMap<i32, usize>,
}

/// The driver of the late-write tests: `write(i)` sends record `i` of partition `d` with a
/// callback that pushes `(i, completion)` into `done`; `before` records are written and flushed,
/// then a thread keeps writing while the partition is dropped and for 500 ms after, then
/// everything is flushed. Asserts every callback exactly once and every record ok.
fn write_through_a_drop(
    conn: &Connection,
    path: &TablePath,
    before: i64,
    write: Arc<dyn Fn(i64) + Send + Sync>,
    flush: &dyn Fn(Duration),
    done: &Mutex<Vec<(i64, WriteCompletion)>>,
) -> ThroughDrop {
    use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
    for i in 0..before {
        write(i);
    }
    flush(Duration::from_secs(60));
    let first = conn.admin().list_partitions(path).unwrap()[0].partition_id;
    let (appended, stop) = (Arc::new(AtomicI64::new(before)), Arc::new(AtomicBool::new(false)));
    let writer = {
        let (write, appended, stop) = (write.clone(), appended.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = before;
            while !stop.load(Ordering::SeqCst) {
                write(i);
                i += 1;
                appended.store(i, Ordering::SeqCst);
                if i % 5 == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        })
    };
    while appended.load(Ordering::SeqCst) < before + 200 {
        std::thread::sleep(Duration::from_millis(1));
    }
    conn.admin().drop_partition(path, &spec("d"), false).unwrap();
    let after = appended.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    let total = appended.load(Ordering::SeqCst);
    flush(Duration::from_secs(90));

    let mut once: BTreeMap<i64, WriteCompletion> = BTreeMap::new();
    for (i, c) in done.lock().unwrap().iter() {
        assert!(once.insert(*i, c.clone()).is_none(), "record {i} completed twice");
    }
    assert_eq!(once.len() as i64, total, "every callback exactly once");
    let mut counts: BTreeMap<i32, usize> = BTreeMap::new();
    for c in once.range(after..).map(|(_, c)| c) {
        *counts.entry(c.error.as_ref().map_or(0, |e| e.code())).or_default() += 1;
    }
    eprintln!("{path}: {} records after the drop: {counts:?}", total - after);
    let failed: Vec<String> = once.iter().filter_map(|(i, c)| c.error.as_ref().map(|e| format!("{i}: {e}"))).take(5).collect();
    assert!(failed.is_empty(), "records failed ({counts:?} after the drop): {failed:?}");
    let later = conn.admin().list_partitions(path).unwrap();
    assert_eq!(later.len(), 1);
    let new = later[0].partition_id;
    assert_ne!(new, first, "the writer recreated the dropped partition");
    assert!(once.values().all(|c| c.partition_id == Some(first) || c.partition_id == Some(new)));
    ThroughDrop { once, first, new, after, total, counts }
}

/// Late rows for a dropped partition (issue 28 item 9): retention drops a partition while a
/// writer with dynamic creation keeps writing to it. The writer recreates it (a new partition
/// id, a new bucket for idempotence on the server) and sends every batch not yet acknowledged
/// there with sequences from 0: every callback completes exactly once, every record succeeds
/// (before the fix 2/3 of the records after the drop failed with OUT_OF_ORDER_SEQUENCE or
/// SEQUENCE_RESET), and the recreated partition holds exactly the records whose callbacks name
/// it, once each: on the embedded engine every record written after the drop. Records the old
/// partition had acknowledged were deleted with it (the drop's doing, not a loss by the
/// writer). Returns the outcome counts after the drop (code -> n).
fn late_rows(conn: &Connection, drop_is_synchronous: bool) -> BTreeMap<i32, usize> {
    let path = create(conn, "plate", &log_descriptor());
    let table = conn.get_table(&path).unwrap();
    let w = Arc::new(table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap());
    let done: Arc<Mutex<Vec<(i64, WriteCompletion)>>> = Arc::default();
    let write = {
        let (w, done) = (w.clone(), done.clone());
        Arc::new(move |i: i64| {
            let done = done.clone();
            let row = [Value::BigInt(i), Value::String("d".into()), Value::String(format!("m{i}"))];
            w.append_with_callback(&row, move |c: &WriteCompletion| done.lock().unwrap().push((i, c.clone()))).unwrap();
        })
    };
    let d = write_through_a_drop(conn, &path, 500, write, &|t| w.flush(Some(t)).unwrap(), &done);
    // Read back: the recreated partition holds exactly the records whose callbacks name it, once
    // each, among them every record written after the drop.
    let named: std::collections::BTreeSet<i64> = d.once.iter().filter(|(_, c)| c.partition_id == Some(d.new)).map(|(i, _)| *i).collect();
    // The embedded engine drops a partition at once. A cluster's tablet servers delete the
    // replicas after the drop call returned, so a few records sent just after it may still be
    // acknowledged by the old id (and deleted with it).
    let old_after = (d.after..d.total).filter(|i| !named.contains(i)).count();
    eprintln!("late_rows: {old_after} records after the drop acknowledged by the old partition id {}", d.first);
    if drop_is_synchronous {
        assert_eq!(old_after, 0, "a record written after the drop is not reported in the new partition");
    }
    let mut stored = std::collections::BTreeSet::new();
    for b in 0..3 {
        for r in table.scan_partition("d", b, 0).unwrap() {
            let Value::BigInt(id) = r.row[0] else { panic!("{:?}", r.row) };
            assert!(stored.insert(id), "record {id} stored twice");
        }
    }
    assert_eq!(stored, named, "the recreated partition holds the records reported there");
    w.close(None).unwrap();
    d.counts
}

#[test]
fn late_rows_for_a_recreated_partition_embedded() {
    let counts = late_rows(&embedded(&[]), true);
    assert_eq!(counts.keys().collect::<Vec<_>>(), [&0]);
}

#[test]
fn late_rows_for_a_recreated_partition_cluster() {
    let Some(b) = bootstrap("partitions::late_rows_for_a_recreated_partition_cluster") else { return };
    bounded("late_rows_for_a_recreated_partition_cluster", Duration::from_secs(180), move || {
        late_rows(&connect(&b, &[]), false);
    });
}

/// [`late_rows`] for a primary-key table (PutKv batches, whose stamps live in the KV batch
/// header): upserts keep arriving while their partition is dropped; every callback once, all
/// ok, and the recreated partition's changelog holds one insert per key reported there.
fn late_upserts(conn: &Connection, drop_is_synchronous: bool) -> BTreeMap<i32, usize> {
    let schema = Schema::builder()
        .column_not_null("dt", DataType::String)
        .column_not_null("id", DataType::BigInt)
        .column("v", DataType::String)
        .primary_key(["dt", "id"])
        .build()
        .unwrap();
    let path = create(conn, "platepk", &TableDescriptor::new(schema).with_bucket_count(3).with_partition_keys(["dt"]));
    let table = conn.get_table(&path).unwrap();
    let w = Arc::new(table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap());
    let done: Arc<Mutex<Vec<(i64, WriteCompletion)>>> = Arc::default();
    let write = {
        let (w, done) = (w.clone(), done.clone());
        Arc::new(move |i: i64| {
            let done = done.clone();
            let row = [Value::String("d".into()), Value::BigInt(i), Value::String(format!("v{i}"))];
            w.upsert_with_callback(&row, move |c: &WriteCompletion| done.lock().unwrap().push((i, c.clone()))).unwrap();
        })
    };
    let d = write_through_a_drop(conn, &path, 300, write, &|t| w.flush(Some(t)).unwrap(), &done);
    let named: std::collections::BTreeSet<i64> = d.once.iter().filter(|(_, c)| c.partition_id == Some(d.new)).map(|(i, _)| *i).collect();
    if drop_is_synchronous {
        assert!((d.after..d.total).all(|i| named.contains(&i)), "an upsert after the drop is not reported in the new partition");
    }
    let mut stored = std::collections::BTreeSet::new();
    for b in 0..3 {
        for r in table.scan_partition("d", b, 0).unwrap() {
            assert_eq!(r.change_type, ChangeType::Insert, "{r:?}");
            let Value::BigInt(id) = r.row[1] else { panic!("{:?}", r.row) };
            assert!(stored.insert(id), "key {id} inserted twice");
        }
    }
    assert_eq!(stored, named, "the recreated partition holds the upserts reported there");
    w.close(None).unwrap();
    d.counts
}

#[test]
fn late_upserts_for_a_recreated_partition_embedded() {
    let counts = late_upserts(&embedded(&[]), true);
    assert_eq!(counts.keys().collect::<Vec<_>>(), [&0]);
}

/// A Fluss 0.9.1 tablet server sometimes leaves the writes to a primary-key partition that was
/// dropped and recreated under load unanswered: they are stored (the log grows) but never
/// acknowledged, so every record after the drop ends in DELIVERY_TIMEOUT (or SEQUENCE_RESET behind
/// one), nothing else (seen once in four `make test` runs, 2026-12-06; the 1.0-SNAPSHOT server
/// exits on the same test instead, docs/server-compatibility.md). That outcome, and only that,
/// gets one more try on a fresh table, noted in the run's summary; any other failure fails.
#[test]
fn late_upserts_for_a_recreated_partition_cluster() {
    let Some(b) = bootstrap("partitions::late_upserts_for_a_recreated_partition_cluster") else { return };
    bounded("late_upserts_for_a_recreated_partition_cluster", Duration::from_secs(240), move || {
        let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| late_upserts(&connect(&b, &[]), false)));
        let Err(panic) = first else { return };
        let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        let unanswered = msg.contains("records failed ({")
            && msg
                .split("records failed ({")
                .nth(1)
                .and_then(|r| r.split('}').next())
                .is_some_and(|counts| counts.split(", ").all(|kv| ["0:", "-1008:", "-1018:"].iter().any(|code| kv.starts_with(code))));
        if !unanswered {
            std::panic::resume_unwind(panic);
        }
        cluster_support::note_retry(format!(
            "late_upserts_for_a_recreated_partition_cluster: the server left the writes to the recreated partition unanswered \
             (Fluss 0.9.1; {}); trying once more on a fresh table",
            msg.lines().next().unwrap_or("")
        ));
        late_upserts(&connect(&b, &[]), false);
    });
}

/// Auto-partitioned tables get their current and next partitions at creation, named in the
/// table's time zone.
fn auto_partitions(conn: &Connection, wait: Duration) {
    let d = log_descriptor()
        .with_property(AutoPartition::ENABLED, "true")
        .with_property(AutoPartition::TIME_UNIT, "DAY")
        .with_property(AutoPartition::NUM_PRECREATE, "3")
        .with_property(AutoPartition::TIME_ZONE, "UTC");
    let expected = AutoPartition::from_descriptor(&d.normalized(1).unwrap()).unwrap().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let path = create(conn, "pauto", &d);
    let deadline = Instant::now() + wait;
    loop {
        let names: Vec<String> = conn.admin().list_partitions(&path).unwrap().into_iter().map(|p| p.partition_name).collect();
        // Around midnight UTC the server may have computed the names a moment earlier or later.
        let want = expected.names_from(now, 0, 3).unwrap();
        let want_later = expected.names_from(now + 60_000, 0, 3).unwrap();
        if names == want || names == want_later {
            break;
        }
        assert!(Instant::now() < deadline, "auto partitions {names:?}, expected {want:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let e = conn
        .admin()
        .create_table(
            &TablePath::new(database(conn), unique("pauto2")).unwrap(),
            &log_descriptor().with_property(AutoPartition::TIME_UNIT, "WEEK").with_property(AutoPartition::ENABLED, "true"),
            false,
        )
        .unwrap_err();
    assert!(e.message().contains("time-unit"), "{e}");
}

#[test]
fn auto_partitions_embedded() {
    auto_partitions(&embedded(&[]), Duration::ZERO);
}

#[test]
fn auto_partitions_cluster() {
    let Some(b) = bootstrap("partitions::auto_partitions_cluster") else { return };
    bounded("auto_partitions_cluster", LIMIT, move || auto_partitions(&connect(&b, &[]), Duration::from_secs(30)));
}

/// `table.auto-partition.time-format` (Fluss 1.0): the server names the auto-created partitions
/// in the table's format, as fluss-writer's `AutoPartition::names_from` does; it refuses to
/// create a partition whose value does not read in the format or is older than the table
/// retains (PARTITION_SPEC_INVALID); a writer creating partitions on write creates one in the
/// format, and its completions name it. A format the server refuses is refused at CreateTable.
fn time_format_partitions(conn: &Connection, wait: Duration) {
    let d = log_descriptor()
        .with_property(AutoPartition::ENABLED, "true")
        .with_property(AutoPartition::TIME_UNIT, "DAY")
        .with_property(AutoPartition::TIME_FORMAT, "yyyy-MM-dd")
        .with_property(AutoPartition::NUM_PRECREATE, "2")
        .with_property(AutoPartition::NUM_RETENTION, "3")
        .with_property(AutoPartition::TIME_ZONE, "UTC");
    let auto = AutoPartition::from_descriptor(&d.normalized(1).unwrap()).unwrap().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let path = create(conn, "ptfmt", &d);
    let deadline = Instant::now() + wait;
    let admin = conn.admin();
    loop {
        let names: Vec<String> = admin.list_partitions(&path).unwrap().into_iter().map(|p| p.partition_name).collect();
        let want = auto.names_from(now, 0, 2).unwrap();
        if names == want || names == auto.names_from(now + 60_000, 0, 2).unwrap() {
            assert!(want[0].len() == 10 && want[0].as_bytes()[4] == b'-', "{want:?}");
            break;
        }
        assert!(Instant::now() < deadline, "auto partitions {names:?}, expected {want:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let yesterday = auto.names_from(now, -1, 1).unwrap().remove(0);
    admin.create_partition(&path, &spec(&yesterday), false).unwrap();
    let default_format = yesterday.replace('-', "");
    let old = auto.names_from(now, -10, 1).unwrap().remove(0);
    for (value, why) in [(default_format.as_str(), "does not match the expected format 'yyyy-MM-dd'"), (old.as_str(), "out-of-date")] {
        let e = admin.create_partition(&path, &spec(value), false).unwrap_err();
        assert_eq!(e.code(), FlussCode::PARTITION_SPEC_INVALID, "{value}: {e}");
        assert!(e.message().contains(why), "{value}: {e}");
    }
    // Create on write, in the table's format.
    let two_days_ago = auto.names_from(now, -2, 1).unwrap().remove(0);
    let table = conn.get_table(&path).unwrap();
    let w = table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let seen = Seen::default();
    w.append_with_callback(&[Value::BigInt(1), Value::String(two_days_ago.clone()), Value::Null], seen.cb()).unwrap();
    w.flush(None).unwrap();
    let all = seen.all();
    assert!(all[0].is_ok(), "{:?}", all[0].error);
    assert_eq!(all[0].partition.as_deref(), Some(two_days_ago.as_str()));
    assert!(admin.list_partitions(&path).unwrap().iter().any(|p| p.partition_name == two_days_ago));
    w.close(None).unwrap();

    let bad = log_descriptor().with_property(AutoPartition::ENABLED, "true").with_property(AutoPartition::TIME_FORMAT, "yyyy/MM/dd");
    let e = admin.create_table(&TablePath::new(database(conn), unique("ptfmt2")).unwrap(), &bad, false).unwrap_err();
    assert!(e.message().contains("table.auto-partition.time-format") && e.message().contains("2024/11/11"), "{e}");
}

#[test]
fn time_format_partitions_embedded() {
    time_format_partitions(&embedded(&[]), Duration::ZERO);
}

/// Against a Fluss 1.0 server (`FLUSS_1_0_BOOTSTRAP_SERVERS`; 0.9.1 does not know the option).
#[test]
fn time_format_partitions_cluster_1_0() {
    let Ok(b) = std::env::var("FLUSS_1_0_BOOTSTRAP_SERVERS") else {
        eprintln!("partitions::time_format_partitions_cluster_1_0: FLUSS_1_0_BOOTSTRAP_SERVERS is not set: not testing against a Fluss 1.0 server");
        return;
    };
    bounded("time_format_partitions_cluster_1_0", LIMIT, move || time_format_partitions(&connect(&b, &[]), Duration::from_secs(30)));
}

/// A Fluss 1.0 server refuses every CreatePartition of a quarterly auto-partitioned table with
/// the default format `yyyyQ` (Java's year reads the quarter's digit too), as
/// `AutoPartition::check_value` says; with `yyyy'Q'Q` it creates them. Only against a 1.0 server
/// (`FLUSS_1_0_BOOTSTRAP_SERVERS`): 0.9.1 checks nothing, nor does the embedded engine without
/// the time-format option.
#[test]
fn quarterly_partitions_cluster_1_0() {
    let Ok(b) = std::env::var("FLUSS_1_0_BOOTSTRAP_SERVERS") else {
        eprintln!(
            "partitions::quarterly_partitions_cluster_1_0: FLUSS_1_0_BOOTSTRAP_SERVERS is not set: not testing against a Fluss 1.0 server"
        );
        return;
    };
    bounded("quarterly_partitions_cluster_1_0", LIMIT, move || {
        let conn = connect(&b, &[]);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
        for (format, created) in [(None, false), (Some("yyyy'Q'Q"), true)] {
            let mut d = log_descriptor()
                .with_property(AutoPartition::ENABLED, "true")
                .with_property(AutoPartition::TIME_UNIT, "QUARTER")
                .with_property(AutoPartition::NUM_PRECREATE, "1")
                .with_property(AutoPartition::TIME_ZONE, "UTC");
            if let Some(f) = format {
                d = d.with_property(AutoPartition::TIME_FORMAT, f);
            }
            let auto = AutoPartition::from_descriptor(&d.normalized(1).unwrap()).unwrap().unwrap();
            let path = create(&conn, "pquarter", &d);
            let later = auto.names_from(now, 3, 1).unwrap().remove(0);
            let ours = auto.check_value(&later, now);
            let theirs = conn.admin().create_partition(&path, &spec(&later), false);
            assert_eq!(ours.is_ok(), created, "{format:?} {later}: {ours:?}");
            match theirs {
                Ok(()) => assert!(created, "{format:?}: the server created {later}"),
                Err(e) => {
                    assert!(!created, "{format:?} {later}: {e}");
                    assert_eq!(e.code(), FlussCode::PARTITION_SPEC_INVALID, "{e}");
                    assert!(e.message().contains("does not match the expected format 'yyyyQ'"), "{e}");
                }
            }
        }
    });
}

/// Historical partitions (Fluss 1.0, FIP-28) need a lake (a 1.0 server refuses the option
/// without `table.datalake.enabled`); the embedded engine has none, and no `__historical__`
/// partition: it refuses the option with INVALID_CONFIG naming it, and accepts it off.
#[test]
fn historical_partitions_are_refused_by_the_embedded_engine() {
    let conn = embedded(&[]);
    let d = log_descriptor().with_property("table.datalake.historical-partition.enabled", "true");
    let e = conn.admin().create_table(&TablePath::new(database(&conn), unique("phist")).unwrap(), &d, false).unwrap_err();
    assert_eq!(e.code(), FlussCode::INVALID_CONFIG, "{e}");
    assert!(e.message().contains("historical-partition.enabled"), "{e}");
    let off = log_descriptor().with_property("table.datalake.historical-partition.enabled", "false");
    conn.admin().create_table(&TablePath::new(database(&conn), unique("phist")).unwrap(), &off, false).unwrap();
}

/// A durable embedded engine keeps partitions and their rows across a reopen.
#[test]
fn durable_embedded_partitions_survive_reopen() {
    let dir = std::env::temp_dir().join(unique("fw-part-durable"));
    let loc = format!("embedded:{}", dir.display());
    let path;
    {
        let conn = Connection::open(&loc).unwrap();
        path = create(&conn, "pdur", &log_descriptor());
        let w = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
        for i in 0..90i64 {
            w.append_detached(&[Value::BigInt(i), Value::String(format!("p{}", i % 3)), Value::Null]).unwrap();
        }
        w.close(None).unwrap();
        conn.admin().drop_partition(&path, &spec("p2"), false).unwrap();
        conn.close(None).unwrap();
    }
    let conn = Connection::open(&loc).unwrap();
    let names: Vec<String> = conn.admin().list_partitions(&path).unwrap().into_iter().map(|p| p.partition_name).collect();
    assert_eq!(names, ["p0", "p1"]);
    let table = conn.get_table(&path).unwrap();
    for p in ["p0", "p1"] {
        let rows: usize = (0..3).map(|b| table.scan_partition(p, b, 0).unwrap().len()).sum();
        assert_eq!(rows, 30, "{p}");
    }
    conn.close(None).unwrap();
    let _ = std::fs::remove_dir_all(dir);
}

/// A writer releases the lane (batches, sender task) of a partition idle for
/// `client.writer.partition-idle-timeout` (IDLE_TIMEOUT); a later row for a released partition
/// opens it again. Every callback once, every row stored once.
fn idle_lanes(conn: &Connection) {
    let path = create(conn, "pidle", &log_descriptor());
    let w = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let seen = Seen::default();
    let days: Vec<String> = (1..=6).map(|d| format!("2026-12-0{d}")).collect();
    // Writes a row for `day`, flushes, and returns the open partitions. A lane the row opened is
    // still open when the count was read less than IDLE_TIMEOUT after the row was written: then
    // the count is checked exactly. A stall of the test thread longer than that (a busy machine)
    // may have released it too: then only "at most one" is checked.
    let write = |id: i64, day: &str| {
        let t = Instant::now();
        w.append_with_callback(&[Value::BigInt(id), Value::String(day.to_string()), Value::Null], seen.cb()).unwrap();
        w.flush(Some(Duration::from_secs(60))).unwrap();
        let open = w.stats().open_partitions;
        if t.elapsed() < IDLE_TIMEOUT {
            assert_eq!(open, 1, "{day}: the partition's lane is open and every other one was released");
        } else {
            assert!(open <= 1, "{day}: {open} lanes open");
        }
    };
    for (i, day) in days.iter().enumerate() {
        write(i as i64, day);
        // Idle for more than the timeout: the next partition's row finds this lane released.
        std::thread::sleep(IDLE_TIMEOUT * 3);
    }
    // The first day again: a new lane, the same partition.
    write(100, &days[0]);
    // Idle for the timeout, the lane is released without any other partition being opened.
    let deadline = Instant::now() + Duration::from_secs(10);
    while w.stats().open_partitions > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(w.stats().open_partitions, 0);
    let all = seen.all();
    assert_eq!(all.len(), 7);
    assert!(all.iter().all(|c| c.is_ok()), "{:?}", all.iter().find(|c| !c.is_ok()).map(|c| &c.error));
    let table = conn.get_table(&path).unwrap();
    let mut ids: Vec<i64> = Vec::new();
    for day in &days {
        for b in 0..3 {
            ids.extend(table.scan_partition(day, b, 0).unwrap().iter().map(|r| match r.row[0] {
                Value::BigInt(id) => id,
                ref v => panic!("{v:?}"),
            }));
        }
    }
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2, 3, 4, 5, 100]);
    w.close(None).unwrap();
}

#[test]
fn idle_partitions_are_released_embedded() {
    idle_lanes(&embedded(&[("client.writer.partition-idle-timeout", "250ms")]));
}

/// The `client.writer.partition-idle-timeout` of the idle_partitions tests.
const IDLE_TIMEOUT: Duration = Duration::from_millis(250);

#[test]
fn idle_partitions_are_released_cluster() {
    let Some(b) = bootstrap("partitions::idle_partitions_are_released_cluster") else { return };
    bounded("idle_partitions_cluster", LIMIT, move || idle_lanes(&connect(&b, &[("client.writer.partition-idle-timeout", "250ms")])));
}

/// Lanes released and opened again all the time (a 1 ms idle timeout: each partition a thread
/// opens releases every other one idle for 1 ms) under four threads that each move through 32
/// partitions in phases of 100 rows (4 partitions a phase, 30 phases, each partition revisited): every callback once and successful, callbacks of one thread's
/// rows to one partition and bucket in submission order, every row stored once.
#[test]
fn lanes_released_under_concurrent_writes_lose_and_reorder_nothing() {
    let conn = embedded(&[("client.writer.partition-idle-timeout", "1ms"), ("client.writer.batch-timeout", "1ms")]);
    let path = create(&conn, "pchurn", &log_descriptor());
    let released = |rec: &cluster_support::Recorder| rec.count(|l| l.contains(path.table.as_str()) && l.contains("its lane is released"));
    let rec = recorder();
    let w = Arc::new(conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap());
    const PER_THREAD: i64 = 3000;
    // (thread, partition, bucket) -> ids in callback order
    type Order = BTreeMap<(i64, String, i32), Vec<i64>>;
    let order: Arc<Mutex<Order>> = Arc::default();
    let threads: Vec<_> = (0..4i64)
        .map(|t| {
            let (w, order) = (w.clone(), order.clone());
            std::thread::spawn(move || {
                let mut x = t as u64 * 7919 + 1;
                for i in 0..PER_THREAD {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let day = format!("d{}", (i / 100 + t) % 8 * 4 + ((x >> 33) % 4) as i64);
                    let id = t * PER_THREAD + i;
                    let order = order.clone();
                    w.append_with_callback(&[Value::BigInt(id), Value::String(day), Value::Null], move |c: &WriteCompletion| {
                        assert!(c.is_ok(), "{:?}", c.error);
                        let key = (t, c.partition.as_deref().unwrap().to_string(), c.bucket);
                        order.lock().unwrap().entry(key).or_default().push(id);
                    })
                    .unwrap();
                    if i % 100 == 99 {
                        std::thread::sleep(Duration::from_millis(3)); // let this phase's lanes go idle
                    }
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    w.flush(Some(Duration::from_secs(60))).unwrap();
    let order = order.lock().unwrap();
    let total: usize = order.values().map(Vec::len).sum();
    assert_eq!(total as i64, 4 * PER_THREAD, "one callback per row");
    for (k, ids) in order.iter() {
        assert!(ids.windows(2).all(|p| p[0] < p[1]), "{k:?}: callbacks out of submission order");
    }
    let table = conn.get_table(&path).unwrap();
    let mut stored: Vec<i64> = Vec::new();
    for p in conn.admin().list_partitions(&path).unwrap() {
        for b in 0..3 {
            stored.extend(table.scan_partition(&p.partition_name, b, 0).unwrap().iter().map(|r| match r.row[0] {
                Value::BigInt(id) => id,
                ref v => panic!("{v:?}"),
            }));
        }
    }
    stored.sort_unstable();
    assert_eq!(stored, (0..4 * PER_THREAD).collect::<Vec<_>>(), "every row stored once");
    // Lanes were in fact released (and opened again) while the threads wrote.
    let n = released(rec);
    eprintln!("{n} lanes released and opened again while writing");
    assert!(n >= 8, "only {n} lanes released");
    w.close(None).unwrap();
}

/// Rows find their partition's lane by their partition-key values (the first eight partitions)
/// or by its name (the others): either way each row lands in the partition its value names.
/// DOUBLE keys are the hard case: 0.0 and -0.0 are equal numbers but name the partitions `0_0`
/// and `-0_0`, and a NaN equals nothing but names `NaN`.
#[test]
fn rows_find_their_partition_by_value_or_by_name() {
    let conn = embedded(&[]);
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("x", DataType::Double).build().unwrap();
    let d = TableDescriptor::new(schema).with_bucket_count(2).with_bucket_key(["id"]).with_partition_keys(["x"]);
    let path = create(&conn, "pbyval", &d);
    let table = conn.get_table(&path).unwrap();
    let w = table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    // 0.0, -0.0 and NaN first (so that they are among the lanes found by value), then twelve
    // more, cycled row by row.
    let mut xs = vec![0.0, -0.0, f64::NAN];
    xs.extend((0..12).map(|i| f64::from(i) + 0.5));
    let names = |x: f64| match x {
        x if x.is_nan() => "NaN".to_string(),
        x if x == 0.0 && x.is_sign_negative() => "-0_0".to_string(),
        x => format!("{x:?}").replace('.', "_"),
    };
    let n = 30 * xs.len() as i64;
    for i in 0..n {
        w.append(&[Value::BigInt(i), Value::Double(xs[i as usize % xs.len()])]).unwrap();
    }
    w.flush(Some(Duration::from_secs(60))).unwrap();
    let listed: std::collections::BTreeSet<String> =
        conn.admin().list_partitions(&path).unwrap().into_iter().map(|p| p.partition_name).collect();
    assert_eq!(listed, xs.iter().map(|&x| names(x)).collect());
    let mut count = 0;
    for &x in &xs {
        for b in 0..2 {
            for r in table.scan_partition(&names(x), b, 0).unwrap() {
                let (Value::BigInt(id), Value::Double(got)) = (&r.row[0], &r.row[1]) else { panic!("{:?}", r.row) };
                let want = xs[*id as usize % xs.len()];
                assert_eq!(names(*got), names(x), "row {id} is in partition {}", names(x));
                assert_eq!(want.to_bits(), got.to_bits(), "row {id}");
                count += 1;
            }
        }
    }
    assert_eq!(count, n);
    w.close(None).unwrap();
}
