//! What nested columns cost (issue 13): rows/s of an ARRAY<INT> of 10 elements and of a ROW of 5
//! scalars against the same data flattened into scalar columns, side by side in one run on the
//! embedded engine:
//! * `log`: `append_detached` into a log table (Arrow List / Struct vectors), flushed;
//! * `pk`: `upsert_detached` into a primary-key table (CompactedRow: BinaryArray / nested row),
//!   flushed;
//! * `encode`: the encoders alone, no writer: `RowsToArrow::append` (checks + Arrow builders) and
//!   `compacted::encode_row` (checks + CompactedRow bytes), rows into one reused buffer.
//!
//! Rounds interleave the shapes; medians over rounds, with the ratio nested / flat. Run:
//! `cargo bench -p fluss-writer --bench nested [-- ROWS ROUNDS]`.

use std::time::Instant;

use fluss_writer::wire::arrow::RowsToArrow;
use fluss_writer::wire::compacted::encode_row;
use fluss_writer::{Connection, DataType, Row, Schema, TableDescriptor, TablePath, Value, WriterOptions};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    /// id BIGINT, a ARRAY<INT> (10 elements)
    Array10,
    /// id BIGINT, a0 .. a9 INT
    Flat10,
    /// id BIGINT, r ROW<a INT, b BIGINT, c DOUBLE, d STRING, e BOOLEAN>
    Row5,
    /// id BIGINT, a INT, b BIGINT, c DOUBLE, d STRING, e BOOLEAN
    Flat5,
}

const SHAPES: [Shape; 4] = [Shape::Array10, Shape::Flat10, Shape::Row5, Shape::Flat5];

fn schema(shape: Shape, pk: bool) -> Schema {
    let mut b = Schema::builder().column_not_null("id", DataType::BigInt);
    let p = |s: &str| DataType::parse(s).unwrap();
    b = match shape {
        Shape::Array10 => b.column("a", p("ARRAY<INT>")),
        Shape::Flat10 => (0..10).fold(b, |b, i| b.column(format!("a{i}"), DataType::Int)),
        Shape::Row5 => b.column("r", p("ROW<a INT, b BIGINT, c DOUBLE, d STRING, e BOOLEAN>")),
        Shape::Flat5 => b
            .column("a", DataType::Int)
            .column("b", DataType::BigInt)
            .column("c", DataType::Double)
            .column("d", DataType::String)
            .column("e", DataType::Boolean),
    };
    if pk {
        b = b.primary_key(["id"]);
    }
    b.build().unwrap()
}

fn row(shape: Shape, i: i64) -> Row {
    let ints = (0..10).map(|k| Value::Int((i as i32).wrapping_mul(31) + k));
    let five = || {
        vec![
            Value::Int(i as i32),
            Value::BigInt(i * 7),
            Value::Double(i as f64 / 3.0),
            Value::String(format!("name-{}", i % 1000)),
            Value::Boolean(i % 2 == 0),
        ]
    };
    let mut r = vec![Value::BigInt(i)];
    match shape {
        Shape::Array10 => r.push(Value::Array(ints.collect())),
        Shape::Flat10 => r.extend(ints),
        Shape::Row5 => r.push(Value::Row(five())),
        Shape::Flat5 => r.extend(five()),
    }
    r
}

/// Rows per second of writing `rows` (built beforehand) through a writer and flushing.
fn write(conn: &Connection, round: usize, shape: Shape, pk: bool, rows: &[Row]) -> f64 {
    let path = TablePath::new("fluss", format!("nested_bench_{round}_{shape:?}_{pk}").to_lowercase()).unwrap();
    let d = TableDescriptor::new(schema(shape, pk)).with_bucket_count(4);
    let d = if pk { d } else { d.with_bucket_key(["id"]) };
    conn.admin().create_table(&path, &d, false).unwrap();
    let table = conn.get_table(&path).unwrap();
    let start = Instant::now();
    if pk {
        let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
        rows.iter().for_each(|r| w.upsert_detached(r).unwrap());
        w.flush(None).unwrap();
    } else {
        let w = table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
        rows.iter().for_each(|r| w.append_detached(r).unwrap());
        w.flush(None).unwrap();
    }
    let rate = rows.len() as f64 / start.elapsed().as_secs_f64();
    conn.admin().drop_table(&path, false).unwrap();
    rate
}

/// Rows per second of the encoders alone: (Arrow, CompactedRow).
fn encode(shape: Shape, rows: &[Row]) -> (f64, f64) {
    let (log, pk) = (schema(shape, false), schema(shape, true));
    let mut arrow = RowsToArrow::new(&log);
    let start = Instant::now();
    for (i, r) in rows.iter().enumerate() {
        arrow.append(r).unwrap();
        if i % 4096 == 4095 {
            std::hint::black_box(arrow.finish());
        }
    }
    std::hint::black_box(arrow.finish());
    let arrow_rate = rows.len() as f64 / start.elapsed().as_secs_f64();
    let mut out = Vec::with_capacity(1 << 20);
    let start = Instant::now();
    for r in rows {
        out.clear();
        encode_row(&pk, r, &mut out).unwrap();
        std::hint::black_box(&out);
    }
    (arrow_rate, rows.len() as f64 / start.elapsed().as_secs_f64())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let n = args.first().copied().unwrap_or(200_000);
    let rounds = args.get(1).copied().unwrap_or(5);
    let conn = Connection::open("embedded").unwrap();
    let rows: Vec<(Shape, Vec<Row>)> = SHAPES.iter().map(|&s| (s, (0..n as i64).map(|i| row(s, i)).collect())).collect();
    let mut results: Vec<(String, Vec<f64>)> = Vec::new();
    let mut add = |name: String, v: f64| match results.iter_mut().find(|(k, _)| *k == name) {
        Some((_, xs)) => xs.push(v),
        None => results.push((name, vec![v])),
    };
    for round in 0..rounds {
        for (shape, rs) in &rows {
            let (a, c) = encode(*shape, rs);
            add(format!("encode-arrow {shape:?}"), a);
            add(format!("encode-compacted {shape:?}"), c);
            add(format!("log {shape:?}"), write(&conn, round, *shape, false, rs));
            add(format!("pk {shape:?}"), write(&conn, round, *shape, true, rs));
        }
    }
    println!("nested columns vs flat columns: {n} rows per run, {rounds} rounds, medians (rows/s)");
    let med: Vec<(String, f64)> = results.into_iter().map(|(k, v)| (k, median(v))).collect();
    let get = |k: &str| med.iter().find(|(n, _)| n == k).map(|(_, v)| *v).unwrap();
    for what in ["encode-arrow", "encode-compacted", "log", "pk"] {
        for (nested, flat) in [(Shape::Array10, Shape::Flat10), (Shape::Row5, Shape::Flat5)] {
            let (a, b) = (get(&format!("{what} {nested:?}")), get(&format!("{what} {flat:?}")));
            println!(
                "{what:<17} {:<8} {:>11.0}   {:<7} {:>11.0}   nested/flat {:.2}x",
                format!("{nested:?}"),
                a,
                format!("{flat:?}"),
                b,
                a / b
            );
        }
    }
}
