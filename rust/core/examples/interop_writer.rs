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
//!   (`+I`, `-U`, `+U`, `-D`) and the final rows.
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

use fluss_writer::wire::{bucket_for_key, encode_key, RowsToArrow};
use fluss_writer::{Config, Connection, DataType, Decimal, Row, Schema, TableDescriptor, TablePath, Timestamp, Value, WriterOptions};
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
        .column("ltz6", DataType::TimestampLtz { precision: 6 });
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

fn main() -> fluss_writer::Result<()> {
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
    let failures: Arc<Mutex<Vec<String>>> = Arc::default();
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
