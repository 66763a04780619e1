//! Writes deterministic rows into a real Fluss cluster and prints a JSON manifest of exactly what
//! it wrote, for other clients to read back and compare (tests-interop/pyfluss_readback.py).
//!
//! ```text
//! FLUSS_BOOTSTRAP_SERVERS=127.0.0.1:9123 cargo run --release -p fluss-writer --example interop_writer > manifest.json
//! ```
//!
//! It creates, in database `fw_interop`:
//! * a log table (bucket key `id`, 4 buckets) with 600 rows: 400 appended one by one with
//!   callbacks, 200 as one multi-bucket Arrow batch; the manifest gives each row's bucket and
//!   offset as the completions reported them;
//! * a primary-key table (key `id`, 4 buckets): 300 inserts, 60 updates, 30 deletes and a partial
//!   update; the manifest gives the changelog the server must have produced, per bucket in order
//!   (`+I`, `-U`, `+U`, `-D`) and the final rows;
//! * a partitioned log table (partition keys `region` STRING and `day` DATE, bucket key `id`, 3
//!   buckets; two of its six partitions created beforehand, four by the writer): 300 rows
//!   appended with callbacks and 150 as one Arrow batch across partitions; the manifest gives the
//!   partitions (name and id) and each row's partition, bucket and offset as reported;
//! * a partitioned primary-key table (partition keys `shard` INT and `region` STRING, key
//!   `(shard, region, id)`, 2 buckets): the same ids in four partitions, inserts, updates and
//!   deletes; the manifest gives the partitions and the changelog per partition and bucket.
//!
//! With `--read-back <file>` it does the opposite: it reads, through fluss-writer
//! (`Admin::list_partitions`, `Table::scan_partition`, `Table::lookup`), the partitioned tables
//! another client wrote and described in `<file>` (tests-interop/pyfluss_readback.py writes them
//! with pyfluss), compares them row for row and drops them; exit code 1 on any mismatch.
//!
//! Values in the manifest use one canonical text form per type (null is JSON null): BOOLEAN
//! `true`/`false`; integers, DATE (days) and TIME (ms of day) in decimal; FLOAT `f:<8 hex digits
//! of the bits>`, DOUBLE `d:<16 hex digits>`; STRING as is; BYTES `x:<hex>`; DECIMAL the unscaled
//! integer; TIMESTAMP and TIMESTAMP_LTZ `<epoch millis>.<nanos of milli>`.
//!
//! The tables are left in place for the reader (which drops them).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fluss_writer::embedded::ChangeType;
use fluss_writer::wire::{bucket_for_key, encode_key, RowsToArrow};
use fluss_writer::{
    Config, Connection, DataType, Decimal, PartitionSpec, Row, Schema, TableDescriptor, TablePath, Timestamp, Value, WriterOptions,
};
use serde_json::{json, Value as Json};

fn schema(pk: bool) -> Schema {
    let mut b = Schema::builder()
        .column_not_null("id", DataType::Int)
        .column("b", DataType::Boolean)
        .column("ti", DataType::TinyInt)
        .column("si", DataType::SmallInt)
        .column("bi", DataType::BigInt)
        .column("f", DataType::Float)
        .column("d", DataType::Double)
        .column("s", DataType::String)
        .column("by", DataType::Bytes)
        .column("dec10", DataType::Decimal { precision: 10, scale: 2 })
        .column("dec28", DataType::Decimal { precision: 28, scale: 6 })
        .column("dt", DataType::Date)
        .column("tm", DataType::Time { precision: 3 })
        .column("ts3", DataType::Timestamp { precision: 3 })
        .column("ts6", DataType::Timestamp { precision: 6 })
        .column("ts9", DataType::Timestamp { precision: 9 })
        .column("ltz3", DataType::TimestampLtz { precision: 3 })
        .column("ltz6", DataType::TimestampLtz { precision: 6 })
        .column("ch", DataType::Char { length: 6 })
        .column("bn", DataType::Binary { length: 4 });
    if pk {
        b = b.primary_key(["id"]);
    }
    b.build().unwrap()
}

/// A deterministic row; column `c >= 1` is null when `(id + version + c) % 7 == 0`.
fn row_for(id: i32, version: i32) -> Row {
    let v = id as i64 * 104_729 + version as i64 * 7_777_777;
    let neg = if id % 13 == 0 { -1 } else { 1 };
    let mut r = vec![
        Value::Int(id),
        Value::Boolean(v % 3 == 0),
        Value::TinyInt((v % 256 - 128) as i8),
        Value::SmallInt((v % 65_536 - 32_768) as i16),
        Value::BigInt(neg * v * 999_999_937),
        Value::Float(neg as f32 * v as f32 / 8.0),
        Value::Double(neg as f64 * v as f64 / 7.0),
        Value::String(format!("interop {id} v{version} ✓ {}", "z".repeat((id % 23) as usize))),
        Value::Bytes((0..(id % 11) as u8).map(|i| i.wrapping_mul(53) ^ 0xa5).collect()),
        Value::Decimal(Decimal { unscaled: neg as i128 * (v as i128 % 9_999_999_999), precision: 10, scale: 2 }),
        Value::Decimal(Decimal {
            unscaled: neg as i128 * (v as i128 * 100_000_000_000_000_003 % 9_999_999_999_999_999_999_999_999_999),
            precision: 28,
            scale: 6,
        }),
        Value::Date(neg as i32 * (19_000 + id)),
        Value::Time(((v * 4_099) % 86_400_000) as i32),
        Value::Timestamp(Timestamp::from_millis(1_710_000_000_000 + neg * v * 31)),
        Value::Timestamp(Timestamp::from_micros(1_710_000_000_000_000 + neg * v * 3_001)),
        Value::Timestamp(Timestamp::from_nanos(1_710_000_000_000_000_000 + neg * v * 300_007)),
        Value::TimestampLtz(Timestamp::from_millis(1_600_000_000_000 + neg * v * 17)),
        Value::TimestampLtz(Timestamp::from_micros(1_600_000_000_000_000 + neg * v * 1_717)),
        // CHAR(6) values are not padded; at most 6 characters (code points, not bytes: the
        // non-ASCII ones take 5 characters in 7 to 8 bytes).
        Value::String(if id % 5 == 0 { format!("ü€{}", id % 1000) } else { format!("c{}", id % 1000) }),
        Value::Bytes((v as u32).to_le_bytes().to_vec()),
    ];
    for (c, x) in r.iter_mut().enumerate().skip(1) {
        if (id as usize + version as usize + c).is_multiple_of(7) {
            *x = Value::Null;
        }
    }
    r
}

fn canon(v: &Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Boolean(b) => json!(b.to_string()),
        Value::TinyInt(x) => json!(x.to_string()),
        Value::SmallInt(x) => json!(x.to_string()),
        Value::Int(x) | Value::Date(x) | Value::Time(x) => json!(x.to_string()),
        Value::BigInt(x) => json!(x.to_string()),
        Value::Float(f) => json!(format!("f:{:08x}", f.to_bits())),
        Value::Double(d) => json!(format!("d:{:016x}", d.to_bits())),
        Value::String(s) => json!(s),
        Value::Bytes(b) => json!(format!("x:{}", b.iter().map(|x| format!("{x:02x}")).collect::<String>())),
        Value::Decimal(d) => json!(d.unscaled.to_string()),
        Value::Timestamp(t) | Value::TimestampLtz(t) => json!(format!("{}.{}", t.millis, t.nanos_of_milli)),
        Value::Array(items) | Value::Row(items) => Json::Array(items.iter().map(canon).collect()),
        Value::Map(entries) => Json::Array(entries.iter().map(|(k, x)| json!([canon(k), canon(x)])).collect()),
    }
}

fn canon_row(r: &[Value]) -> Json {
    Json::Array(r.iter().map(canon).collect())
}

fn columns(s: &Schema) -> Json {
    Json::Array(s.columns().iter().map(|c| json!([c.name, c.data_type.to_string()])).collect())
}

fn bucket_of(s: &Schema, row: &[Value], buckets: i32) -> i32 {
    let mut k = Vec::new();
    encode_key(s, &[0], row, &mut k).unwrap();
    bucket_for_key(&k, buckets)
}

/// Failed writes and mismatches, reported at the end.
type Failures = Arc<Mutex<Vec<String>>>;

/// The schema of the partitioned tables written here: partition keys are NOT NULL.
fn partitioned_schema(pk: bool) -> Schema {
    let mut b = Schema::builder()
        .column_not_null("id", DataType::Int)
        .column_not_null("region", DataType::String)
        .column_not_null("day", DataType::Date)
        .column_not_null("shard", DataType::Int)
        .column("b", DataType::Boolean)
        .column("bi", DataType::BigInt)
        .column("d", DataType::Double)
        .column("s", DataType::String)
        .column("by", DataType::Bytes)
        .column("dec10", DataType::Decimal { precision: 10, scale: 2 })
        .column("ts6", DataType::Timestamp { precision: 6 })
        .column("ltz3", DataType::TimestampLtz { precision: 3 });
    if pk {
        b = b.primary_key(["shard", "region", "id"]);
    }
    b.build().unwrap()
}

const REGIONS: [&str; 3] = ["eu", "us", "apac"];

/// A deterministic row of a partitioned table; value column `c >= 4` is null when
/// `(id + version + c) % 5 == 0`.
fn partitioned_row(id: i32, region: &str, day: i32, shard: i32, version: i32) -> Row {
    let v = id as i64 * 7_919 + version as i64 * 1_000_003 + shard as i64 * 17;
    let mut r = vec![
        Value::Int(id),
        Value::String(region.into()),
        Value::Date(day),
        Value::Int(shard),
        Value::Boolean(v % 2 == 0),
        Value::BigInt(v * 1_000_000_007),
        Value::Double(v as f64 / 3.0),
        Value::String(format!("p {id} {region} v{version} ✓")),
        Value::Bytes((0..(id % 7) as u8).map(|i| i.wrapping_mul(91) ^ 0x5a).collect()),
        Value::Decimal(Decimal { unscaled: v as i128 * 101 % 9_999_999_999, precision: 10, scale: 2 }),
        Value::Timestamp(Timestamp::from_micros(1_760_000_000_000_000 + v * 3_001)),
        Value::TimestampLtz(Timestamp::from_millis(1_700_000_000_000 + v * 13)),
    ];
    for (c, x) in r.iter_mut().enumerate().skip(4) {
        if (id as usize + version as usize + c).is_multiple_of(5) {
            *x = Value::Null;
        }
    }
    r
}

/// `{name: id}` of a table's partitions.
fn partition_ids(conn: &Connection, path: &TablePath) -> fluss_writer::Result<BTreeMap<String, i64>> {
    Ok(conn.admin().list_partitions(path)?.into_iter().map(|p| (p.partition_name, p.partition_id)).collect())
}

/// The partitioned log table: rows with callbacks and one Arrow batch across partitions.
fn partitioned_log(conn: &Connection, db: &str, tag: &str, failures: &Failures) -> fluss_writer::Result<Json> {
    let schema = partitioned_schema(false);
    let buckets = 3;
    let path = TablePath::new(db, format!("plog_{tag}"))?;
    let d = TableDescriptor::new(schema.clone()).with_bucket_count(buckets).with_bucket_key(["id"]).with_partition_keys(["region", "day"]);
    conn.admin().create_table(&path, &d, false)?;
    // Two partitions exist beforehand, the writer creates the other four.
    conn.admin().create_partition(&path, &PartitionSpec::new([("region", "eu"), ("day", "2025-12-03")]), false)?;
    conn.admin().create_partition(&path, &PartitionSpec::new([("region", "us"), ("day", "2025-12-04")]), false)?;
    let row = |id: i32| partitioned_row(id, REGIONS[id as usize % 3], 20_425 + id % 2, 0, 0);
    let writer = conn.get_table(&path)?.new_append()?.create_writer(WriterOptions::default())?;
    type Placed = Arc<Mutex<BTreeMap<i32, (String, i32, i64, u32)>>>;
    let placed: Placed = Arc::default();
    let rows: Vec<Row> = (0..450).map(row).collect();
    for (id, r) in rows[..300].iter().enumerate() {
        let id = id as i32;
        let (p, f) = (placed.clone(), failures.clone());
        writer.append_with_callback(r, move |c| match (&c.error, &c.partition) {
            (None, Some(part)) => {
                p.lock().unwrap().entry(id).or_insert((part.to_string(), c.bucket, c.offset, 0)).3 += 1;
            }
            (None, None) => f.lock().unwrap().push(format!("partitioned log id {id}: a completion without a partition")),
            (Some(e), _) => f.lock().unwrap().push(format!("partitioned log id {id}: {e}")),
        })?;
    }
    let mut arrow = RowsToArrow::new(&schema);
    for r in &rows[300..] {
        arrow.append(r)?;
    }
    let arrow_result = writer.write_arrow_batch(&arrow.finish())?;
    writer.flush(Some(Duration::from_secs(60)))?;
    let c = arrow_result.try_get().expect("flushed");
    if let Some(e) = &c.error {
        failures.lock().unwrap().push(format!("partitioned Arrow batch: {e}"));
    }
    let name_of = |r: &Row| match (&r[1], &r[2]) {
        (Value::String(region), Value::Date(20_425)) => format!("{region}$2025-12-03"),
        (Value::String(region), Value::Date(20_426)) => format!("{region}$2025-12-04"),
        _ => unreachable!(),
    };
    {
        let mut p = placed.lock().unwrap();
        for br in &c.bucket_results {
            let part = br.partition.as_deref().unwrap_or("?");
            let ids = rows[300..].iter().filter(|r| name_of(r) == part && bucket_of(&schema, r, buckets) == br.bucket);
            for (i, r) in ids.enumerate() {
                let Value::Int(id) = r[0] else { unreachable!() };
                p.insert(id, (part.to_string(), br.bucket, br.base_offset + i as i64, 1));
            }
        }
    }
    writer.close(None)?;
    let placed = placed.lock().unwrap().clone();
    let out: Vec<Json> = rows
        .iter()
        .map(|r| {
            let Value::Int(id) = r[0] else { unreachable!() };
            let (part, b, o, n) = placed.get(&id).cloned().unwrap_or_else(|| ("?".into(), -1, -1, 0));
            if n != 1 {
                failures.lock().unwrap().push(format!("partitioned log id {id}: callback ran {n} times"));
            }
            if part != name_of(r) {
                failures.lock().unwrap().push(format!("partitioned log id {id}: reported partition {part:?}, expected {:?}", name_of(r)));
            }
            json!({"partition": part, "bucket": b, "offset": o, "row": canon_row(r)})
        })
        .collect();
    let partitions = partition_ids(conn, &path)?;
    if partitions.len() != 6 {
        failures.lock().unwrap().push(format!("partitioned log table: partitions {partitions:?}, expected 6"));
    }
    Ok(json!({"name": path.table, "buckets": buckets, "columns": columns(&schema), "partitions": partitions, "rows": out}))
}

/// The partitioned primary-key table: the same ids in four partitions; the changelog per
/// partition and bucket.
fn partitioned_pk(conn: &Connection, db: &str, tag: &str, failures: &Failures) -> fluss_writer::Result<Json> {
    let schema = partitioned_schema(true);
    let buckets = 2;
    let path = TablePath::new(db, format!("ppk_{tag}"))?;
    let d = TableDescriptor::new(schema.clone()).with_bucket_count(buckets).with_partition_keys(["shard", "region"]);
    conn.admin().create_table(&path, &d, false)?;
    let table = conn.get_table(&path)?;
    let w = table.new_upsert()?.create_writer(WriterOptions::default())?;
    // (partition, bucket) -> changelog; (partition, id) -> row.
    let mut changelog: BTreeMap<String, Vec<Json>> = BTreeMap::new();
    let mut state: BTreeMap<(String, i32), Row> = BTreeMap::new();
    let check = |what: String, part: String, bucket: i32| {
        let f = failures.clone();
        move |c: &fluss_writer::WriteCompletion| {
            if let Some(e) = &c.error {
                f.lock().unwrap().push(format!("{what}: {e}"));
            } else if c.partition.as_deref() != Some(part.as_str()) || c.bucket != bucket {
                f.lock().unwrap().push(format!("{what}: reported {:?}/{}, expected {part}/{bucket}", c.partition, c.bucket));
            }
        }
    };
    let parts: Vec<(i32, &str)> = vec![(0, "eu"), (0, "us"), (1, "eu"), (7, "apac")];
    for version in [1, 2] {
        for &(shard, region) in &parts {
            let part = format!("{shard}${region}");
            for id in 0..80 {
                if version == 2 && id % 4 != 0 {
                    continue;
                }
                let r = partitioned_row(id, region, 20_425 + shard, shard, version);
                let b = bucket_of(&schema, &r, buckets);
                w.upsert_with_callback(&r, check(format!("upsert {part} {id} v{version}"), part.clone(), b))?;
                let log = changelog.entry(format!("{part}|{b}")).or_default();
                match state.insert((part.clone(), id), r.clone()) {
                    None => log.push(json!({"change": "+I", "row": canon_row(&r)})),
                    Some(old) => {
                        log.push(json!({"change": "-U", "row": canon_row(&old)}));
                        log.push(json!({"change": "+U", "row": canon_row(&r)}));
                    }
                }
            }
        }
    }
    for &(shard, region) in &parts {
        let part = format!("{shard}${region}");
        for id in (shard..80).step_by(9) {
            let old = state.remove(&(part.clone(), id)).expect("present");
            let b = bucket_of(&schema, &old, buckets);
            let key = [Value::Int(shard), Value::String(region.into()), Value::Int(id)];
            w.delete_with_callback(&key, check(format!("delete {part} {id}"), part.clone(), b))?;
            changelog.entry(format!("{part}|{b}")).or_default().push(json!({"change": "-D", "row": canon_row(&old)}));
        }
    }
    w.flush(Some(Duration::from_secs(60)))?;
    w.close(None)?;
    let partitions = partition_ids(conn, &path)?;
    let want: Vec<String> = parts.iter().map(|(s, r)| format!("{s}${r}")).collect();
    if partitions.keys().cloned().collect::<std::collections::BTreeSet<_>>() != want.into_iter().collect() {
        failures.lock().unwrap().push(format!("partitioned primary-key table: partitions {partitions:?}"));
    }
    Ok(json!({
        "name": path.table,
        "buckets": buckets,
        "columns": columns(&schema),
        "partitions": partitions,
        "changelog": changelog,
        "final_rows": state.values().map(|r| canon_row(r)).collect::<Vec<_>>(),
    }))
}

/// A log table with ARRAY, MAP and ROW columns (NULL at every level, empties), written row by row;
/// where each row went (bucket, offset) and its canonical value, for pyfluss to scan.
fn nested_log(conn: &Connection, db: &str, tag: &str, failures: &Failures) -> fluss_writer::Result<Json> {
    let p = |s: &str| DataType::parse(s).expect("a valid type");
    let schema = Schema::builder()
        .column_not_null("id", DataType::Int)
        .column("tags", p("ARRAY<STRING>"))
        .column("nums", p("ARRAY<BIGINT NOT NULL>"))
        .column("attrs", p("MAP<STRING, DOUBLE>"))
        .column("point", p("ROW<x INT, y STRING, d DECIMAL(10, 2), at TIMESTAMP(3), day DATE, b BYTES>"))
        .column("deep", p("ARRAY<ROW<k STRING, v MAP<INT, ARRAY<FLOAT>>>>"))
        .column("flags", p("MAP<INT, BOOLEAN>"))
        .build()?;
    let path = TablePath::new(db, format!("nested_{tag}"))?;
    let buckets = 2;
    conn.admin().create_table(&path, &TableDescriptor::new(schema.clone()).with_bucket_count(buckets), false)?;
    let s = |x: String| Value::String(x);
    let row = |i: i32| -> Row {
        let null_or = |k: i32, v: Value| if i % k == 0 { Value::Null } else { v };
        vec![
            Value::Int(i),
            null_or(5, Value::Array((0..i % 4).map(|k| if k == 2 { Value::Null } else { s(format!("tag{i}-{k}")) }).collect())),
            null_or(7, Value::Array((0..i % 3).map(|k| Value::BigInt((i as i64) << (k * 20))).collect())),
            null_or(
                6,
                Value::Map(
                    (0..i % 3).map(|k| (s(format!("k{k}")), if k == 1 { Value::Null } else { Value::Double(i as f64 / 7.0) })).collect(),
                ),
            ),
            null_or(
                4,
                Value::Row(vec![
                    Value::Int(-i),
                    if i % 3 == 0 { Value::Null } else { s(format!("p{i}")) },
                    Value::Decimal(fluss_writer::Decimal { unscaled: i as i128 * 101 - 5000, precision: 10, scale: 2 }),
                    Value::Timestamp(Timestamp::from_millis(1_700_000_000_000 + i as i64 * 1_001)),
                    Value::Date(19_000 + i),
                    Value::Bytes(vec![i as u8, 0xff, 0]),
                ]),
            ),
            null_or(
                9,
                Value::Array(vec![
                    Value::Row(vec![
                        s(format!("d{i}")),
                        Value::Map(vec![(Value::Int(i), Value::Array(vec![Value::Float(i as f32 / 3.0), Value::Null]))]),
                    ]),
                    Value::Null,
                    Value::Row(vec![Value::Null, Value::Null]),
                ]),
            ),
            null_or(8, Value::Map(vec![(Value::Int(1), Value::Boolean(i % 2 == 0)), (Value::Int(2), Value::Null)])),
        ]
    };
    let writer = conn.get_table(&path)?.new_append()?.create_writer(WriterOptions::default())?;
    type Placed = Arc<Mutex<BTreeMap<i32, (i32, i64)>>>;
    let placed: Placed = Arc::default();
    let rows: Vec<Row> = (0..200).map(row).collect();
    for (i, r) in rows.iter().enumerate() {
        let (pl, f) = (placed.clone(), failures.clone());
        writer.append_with_callback(r, move |c| match &c.error {
            None => {
                pl.lock().unwrap().insert(i as i32, (c.bucket, c.offset));
            }
            Some(e) => f.lock().unwrap().push(format!("nested log row {i}: {e}")),
        })?;
    }
    writer.flush(Some(Duration::from_secs(60)))?;
    writer.close(None)?;
    let placed = placed.lock().unwrap().clone();
    let out: Vec<Json> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let (b, o) = placed.get(&(i as i32)).copied().unwrap_or((-1, -1));
            json!({"bucket": b, "offset": o, "row": canon_row(r)})
        })
        .collect();
    Ok(json!({"name": path.table, "buckets": buckets, "columns": columns(&schema), "rows": out}))
}

fn main() -> fluss_writer::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--read-back" {
        std::process::exit(read_back(&args[2]));
    }
    let bootstrap = std::env::var("FLUSS_BOOTSTRAP_SERVERS").unwrap_or_else(|_| "127.0.0.1:9123".into());
    let mut config = Config::default();
    config.set("bootstrap.servers", &bootstrap)?;
    config.set("client.writer.batch-timeout", "5ms")?;
    config.set("client.writer.batch-size", "16kb")?; // several batches per bucket
    let conn = Connection::connect(config)?;
    let admin = conn.admin();
    let db = "fw_interop";
    admin.create_database(db, true)?;
    let tag = format!(
        "{}_{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() % 1_000_000
    );
    let buckets = 4;
    let t0 = Instant::now();

    // ----- log table
    let log_schema = schema(false);
    let log_path = TablePath::new(db, format!("log_{tag}"))?;
    admin.create_table(&log_path, &TableDescriptor::new(log_schema.clone()).with_bucket_count(buckets).with_bucket_key(["id"]), false)?;
    let writer = conn.get_table(&log_path)?.new_append()?.create_writer(WriterOptions::default())?;
    /// Per id: bucket, offset, times its callback ran.
    type Placed = Arc<Mutex<BTreeMap<i32, (i32, i64, u32)>>>;
    let placed: Placed = Arc::default();
    let failures: Failures = Arc::default();
    let rows: Vec<Row> = (0..600).map(|id| row_for(id, 0)).collect();
    for r in &rows[..400] {
        let Value::Int(id) = r[0] else { unreachable!() };
        let (p, f) = (placed.clone(), failures.clone());
        writer.append_with_callback(r, move |c| match &c.error {
            None => {
                p.lock().unwrap().entry(id).or_insert((c.bucket, c.offset, 0)).2 += 1;
            }
            Some(e) => f.lock().unwrap().push(format!("log id {id}: {e}")),
        })?;
    }
    let mut arrow = RowsToArrow::new(&log_schema);
    for r in &rows[400..] {
        arrow.append(r)?;
    }
    let arrow_result = writer.write_arrow_batch(&arrow.finish())?;
    writer.flush(Some(Duration::from_secs(60)))?;
    let c = arrow_result.try_get().expect("flushed");
    if let Some(e) = &c.error {
        failures.lock().unwrap().push(format!("Arrow batch: {e}"));
    }
    {
        let mut p = placed.lock().unwrap();
        for br in &c.bucket_results {
            let ids = rows[400..].iter().filter(|r| bucket_of(&log_schema, r, buckets) == br.bucket);
            for (i, r) in ids.enumerate() {
                let Value::Int(id) = r[0] else { unreachable!() };
                p.insert(id, (br.bucket, br.base_offset + i as i64, 1));
            }
        }
    }
    writer.close(None)?;
    let placed = placed.lock().unwrap().clone();
    let log_rows: Vec<Json> = rows
        .iter()
        .map(|r| {
            let Value::Int(id) = r[0] else { unreachable!() };
            let (b, o, n) = placed.get(&id).copied().unwrap_or((-1, -1, 0));
            if n != 1 {
                failures.lock().unwrap().push(format!("log id {id}: callback ran {n} times"));
            }
            json!({"bucket": b, "offset": o, "row": canon_row(r)})
        })
        .collect();

    // ----- primary-key table: the changelog the server must produce, per bucket in order
    let pk_schema = schema(true);
    let pk_path = TablePath::new(db, format!("pk_{tag}"))?;
    admin.create_table(&pk_path, &TableDescriptor::new(pk_schema.clone()).with_bucket_count(buckets), false)?;
    let table = conn.get_table(&pk_path)?;
    let upserts = table.new_upsert()?.create_writer(WriterOptions::default())?;
    let mut state: BTreeMap<i32, Row> = BTreeMap::new();
    let mut changelog: BTreeMap<i32, Vec<Json>> = BTreeMap::new();
    let mut record = |bucket: i32, change: &str, row: &Row| {
        changelog.entry(bucket).or_default().push(json!({"change": change, "row": canon_row(row)}));
    };
    let check = |f: &Arc<Mutex<Vec<String>>>, what: String| {
        let f = f.clone();
        move |c: &fluss_writer::WriteCompletion| {
            if let Some(e) = &c.error {
                f.lock().unwrap().push(format!("{what}: {e}"));
            }
        }
    };
    let upsert = |id: i32, version: i32, state: &mut BTreeMap<i32, Row>, record: &mut dyn FnMut(i32, &str, &Row)| {
        let r = row_for(id, version);
        let b = bucket_of(&pk_schema, &r, buckets);
        upserts.upsert_with_callback(&r, check(&failures, format!("upsert {id} v{version}"))).unwrap();
        match state.insert(id, r.clone()) {
            None => record(b, "+I", &r),
            Some(old) => {
                record(b, "-U", &old);
                record(b, "+U", &r);
            }
        }
    };
    for id in 0..300 {
        upsert(id, 1, &mut state, &mut record);
    }
    for id in (0..300).step_by(5) {
        upsert(id, 2, &mut state, &mut record);
    }
    for id in (1..300).step_by(10) {
        upserts.delete_with_callback(&[Value::Int(id)], check(&failures, format!("delete {id}"))).unwrap();
        let old = state.remove(&id).expect("present");
        record(bucket_of(&pk_schema, &old, buckets), "-D", &old);
    }
    upserts.flush(Some(Duration::from_secs(60)))?;
    // Partial update of (id, s, ts9) for a few keys.
    let partial = table.new_upsert()?.partial_update_by_name(&["id", "s", "ts9"])?.create_writer(WriterOptions::default())?;
    for id in [3, 128, 200, 299] {
        let r = row_for(id, 3);
        partial.upsert_with_callback(&r, check(&failures, format!("partial {id}"))).unwrap();
        let old = state.get(&id).cloned().expect("present");
        let mut new = old.clone();
        for c in [0, 7, 15] {
            new[c] = r[c].clone();
        }
        let b = bucket_of(&pk_schema, &new, buckets);
        record(b, "-U", &old);
        record(b, "+U", &new);
        state.insert(id, new);
    }
    partial.flush(Some(Duration::from_secs(60)))?;
    partial.close(None)?;
    upserts.close(None)?;
    let plog = partitioned_log(&conn, db, &tag, &failures)?;
    let ppk = partitioned_pk(&conn, db, &tag, &failures)?;
    let nested = nested_log(&conn, db, &tag, &failures)?;
    let failures = failures.lock().unwrap().clone();
    if !failures.is_empty() {
        eprintln!("interop_writer: {} writes failed, first: {}", failures.len(), failures[0]);
        std::process::exit(1);
    }
    let manifest = json!({
        "bootstrap": bootstrap,
        "database": db,
        "log_table": {"name": log_path.table, "buckets": buckets, "columns": columns(&log_schema), "rows": log_rows},
        "pk_table": {
            "name": pk_path.table,
            "buckets": buckets,
            "columns": columns(&pk_schema),
            "changelog": changelog.iter().map(|(b, v)| (b.to_string(), Json::Array(v.clone()))).collect::<serde_json::Map<_, _>>(),
            "final_rows": state.values().map(|r| canon_row(r)).collect::<Vec<_>>(),
        },
        "partitioned_log_table": plog,
        "partitioned_pk_table": ppk,
        "nested_log_table": nested,
    });
    println!("{}", serde_json::to_string(&manifest).unwrap());
    eprintln!(
        "interop_writer: wrote {} log rows into {log_path} and {} changelog records into {pk_path} in {:.0} ms",
        rows.len(),
        changelog.values().map(Vec::len).sum::<usize>(),
        t0.elapsed().as_secs_f64() * 1e3
    );
    conn.close(None)?;
    Ok(())
}

// ----- --read-back: partitioned tables another client wrote, read through fluss-writer

/// A key value from its canonical text (the key types the read-back uses).
fn uncanon(data_type: &DataType, v: &Json) -> Value {
    let s = v.as_str().expect("a key value is not null");
    match data_type {
        DataType::Int => Value::Int(s.parse().unwrap()),
        DataType::BigInt => Value::BigInt(s.parse().unwrap()),
        DataType::Date => Value::Date(s.parse().unwrap()),
        DataType::String => Value::String(s.into()),
        other => panic!("key type {other} is not used by the read-back"),
    }
}

/// Read back one table the manifest describes; mismatches go to `failures`.
fn read_back_table(conn: &Connection, db: &str, t: &Json, failures: &mut Vec<String>) -> fluss_writer::Result<()> {
    let name = t["name"].as_str().unwrap();
    let path = TablePath::new(db, name)?;
    let table = conn.get_table(&path)?;
    let info = table.info().clone();
    let schema = info.schema();
    let keys: Vec<String> = t["partition_keys"].as_array().unwrap().iter().map(|k| k.as_str().unwrap().to_string()).collect();
    if info.partition_keys() != keys.as_slice() {
        failures.push(format!("{name}: partition keys {:?}, the writer made {keys:?}", info.partition_keys()));
    }
    // The same partitions, by name and id, as the writer's client lists them.
    let want: BTreeMap<String, i64> = t["partitions"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_i64().unwrap())).collect();
    let listed = partition_ids(conn, &path)?;
    if listed != want {
        failures.push(format!("{name}: fluss-writer lists partitions {listed:?}, the writer's client {want:?}"));
    }
    let buckets = info.bucket_count();
    let pk = info.has_primary_key();
    let mut read = 0;
    for (part, rows) in t["rows"].as_object().unwrap() {
        let mut want: Vec<String> = rows.as_array().unwrap().iter().map(|r| r.to_string()).collect();
        want.sort();
        // Every bucket of the partition, in offset order: the rows (log) or the changelog (pk),
        // whose end state must be the final rows.
        let mut state: BTreeMap<String, Json> = BTreeMap::new();
        let mut got: Vec<String> = Vec::new();
        let mut records = 0;
        for b in 0..buckets {
            let mut last = -1;
            for r in table.scan_partition(part, b, 0)? {
                if r.offset <= last {
                    failures.push(format!("{name}/{part} bucket {b}: offset {} after {last}", r.offset));
                }
                last = r.offset;
                records += 1;
                let row = canon_row(&r.row);
                let key = info.physical_key_indexes().iter().map(|&i| canon(&r.row[i]).to_string()).collect::<Vec<_>>().join("|");
                match r.change_type {
                    ChangeType::AppendOnly if !pk => got.push(row.to_string()),
                    ChangeType::Insert | ChangeType::UpdateAfter if pk => {
                        state.insert(key, row);
                    }
                    ChangeType::UpdateBefore if pk => {}
                    ChangeType::Delete if pk => {
                        state.remove(&key);
                    }
                    other => failures.push(format!("{name}/{part} bucket {b} offset {}: change type {other:?}", r.offset)),
                }
            }
        }
        if pk {
            got = state.values().map(|r| r.to_string()).collect();
            let want_records = t["changelog_len"][part].as_i64().unwrap_or(-1);
            if records != want_records {
                failures.push(format!("{name}/{part}: {records} changelog records, the writer produced {want_records}"));
            }
        }
        got.sort();
        read += got.len();
        if got != want {
            let missing: Vec<&String> = want.iter().filter(|w| !got.contains(w)).take(3).collect();
            let extra: Vec<&String> = got.iter().filter(|g| !want.contains(g)).take(3).collect();
            failures.push(format!(
                "{name}/{part}: {} rows read, {} written; e.g. missing {missing:?}, unexpected {extra:?}",
                got.len(),
                want.len()
            ));
        }
        if pk {
            // Lookups with the whole key (partition columns included) find every final row and
            // none of the deleted keys.
            let pk_idx = schema.primary_key_indexes();
            for r in rows.as_array().unwrap() {
                let key: Vec<Value> = pk_idx.iter().map(|&i| uncanon(&schema.columns()[i].data_type, &r[i])).collect();
                match table.lookup(&key)? {
                    Some(found) if canon_row(&found) == *r => {}
                    other => failures.push(format!("{name}/{part}: lookup of {key:?} gave {other:?}, expected {r}")),
                }
            }
            for k in t["deleted"][part].as_array().into_iter().flatten() {
                let key: Vec<Value> =
                    pk_idx.iter().zip(k.as_array().unwrap()).map(|(&i, v)| uncanon(&schema.columns()[i].data_type, v)).collect();
                if let Some(found) = table.lookup(&key)? {
                    failures.push(format!("{name}/{part}: deleted key {key:?} found: {found:?}"));
                }
            }
        }
    }
    eprintln!("interop_writer --read-back: {name}: {} partitions, {read} rows read through fluss-writer", listed.len());
    Ok(())
}

/// `--read-back <file>`: 0 if every table matched (then they are dropped), 1 otherwise.
fn read_back(file: &str) -> i32 {
    let m: Json = serde_json::from_str(&std::fs::read_to_string(file).expect("the read-back manifest")).expect("JSON");
    let mut config = Config::default();
    config.set("bootstrap.servers", m["bootstrap"].as_str().unwrap()).unwrap();
    let conn = Connection::connect(config).expect("connect");
    let db = m["database"].as_str().unwrap();
    let mut failures = Vec::new();
    for t in m["tables"].as_array().unwrap() {
        if let Err(e) = read_back_table(&conn, db, t, &mut failures) {
            failures.push(format!("{}: {e}", t["name"]));
        }
    }
    for f in failures.iter().take(20) {
        eprintln!("MISMATCH: {f}");
    }
    if !failures.is_empty() {
        eprintln!("interop_writer --read-back: {} MISMATCHES", failures.len());
        return 1;
    }
    for t in m["tables"].as_array().unwrap() {
        let _ = conn.admin().drop_table(&TablePath::new(db, t["name"].as_str().unwrap()).unwrap(), true);
    }
    let _ = conn.close(None);
    eprintln!("interop_writer --read-back: OK (partitions and rows written by the other client match)");
    0
}
