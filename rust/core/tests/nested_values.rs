//! ARRAY, MAP and ROW values written and read back on both backends (issue 13, part 1): rows
//! appended to a log table (Arrow, by rows and by a user's Arrow batch with pyarrow-style field
//! names) and upserted into a primary-key table (CompactedRow: BinaryArray, BinaryMap, nested
//! rows), NULL at every level, read back by scan and lookup with the same values; partial
//! updates of nested columns; and the synchronous INVALID_ROW errors that name the place inside
//! the column. The byte formats themselves are compared with Fluss's Java classes in
//! cluster_interop_java.rs (`nested_values_match_java`).

mod cluster_support;

use std::sync::Arc;
use std::time::Duration;

use arrow_array::builder::{Int32Builder, ListBuilder, MapBuilder, StringBuilder};
use arrow_array::{Array, ArrayRef, Float64Array, Int32Array, RecordBatch, StructArray};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema};
use cluster_support::{bootstrap, bounded, connect, create, embedded};
use fluss_writer::{ClientCode, Connection, DataType, Row, Schema, TableDescriptor, Value, WriterOptions};

const LIMIT: Duration = Duration::from_secs(120);

fn schema(pk: bool) -> Schema {
    let p = |s: &str| DataType::parse(s).unwrap();
    let mut b = Schema::builder()
        .column_not_null("id", DataType::Int)
        .column("tags", p("ARRAY<STRING>"))
        .column("attrs", p("MAP<STRING, INT NOT NULL>"))
        .column("point", p("ROW<x DOUBLE, y DOUBLE NOT NULL>"))
        .column("deep", p("ARRAY<ROW<a INT, b MAP<STRING, ARRAY<BIGINT NOT NULL>>, c CHAR(3)>>"))
        .column_not_null("n", p("ARRAY<BINARY(4) NOT NULL>"));
    if pk {
        b = b.primary_key(["id"]);
    }
    b.build().unwrap()
}

fn s(x: &str) -> Value {
    Value::String(x.to_string())
}

/// Row `i`: every nested column with values, empties and NULLs at each level, varying with `i`.
fn row(i: i32) -> Row {
    let tags = match i % 4 {
        0 => Value::Null,
        1 => Value::Array(vec![]),
        2 => Value::Array(vec![s("a"), Value::Null, s("a longer string than seven bytes")]),
        _ => Value::Array((0..i % 9).map(|k| s(&format!("t{k}"))).collect()),
    };
    let attrs = if i % 5 == 0 { Value::Null } else { Value::Map((0..i % 4).map(|k| (s(&format!("k{k}")), Value::Int(i * k))).collect()) };
    let point = if i % 6 == 0 {
        Value::Null
    } else {
        Value::Row(vec![if i % 2 == 0 { Value::Null } else { Value::Double(i as f64 / 3.0) }, Value::Double(-i as f64)])
    };
    let deep = if i % 7 == 0 {
        Value::Null
    } else {
        Value::Array(vec![
            Value::Row(vec![
                Value::Int(i),
                Value::Map(vec![(s("xs"), Value::Array(vec![Value::BigInt(i as i64), Value::BigInt(-1)])), (s("none"), Value::Null)]),
                s("abc"),
            ]),
            Value::Null,
            Value::Row(vec![Value::Null, Value::Null, Value::Null]),
        ])
    };
    let n = Value::Array((0..i % 3).map(|k| Value::Bytes(vec![k as u8, 1, 2, i as u8])).collect());
    vec![Value::Int(i), tags, attrs, point, deep, n]
}

fn id_of(r: &Row) -> i32 {
    match r[0] {
        Value::Int(i) => i,
        _ => panic!("id is INT"),
    }
}

fn read_all(conn: &Connection, path: &fluss_writer::TablePath, buckets: i32) -> Vec<Row> {
    let t = conn.get_table(path).unwrap();
    let mut rows: Vec<Row> = (0..buckets).flat_map(|b| t.scan(b, 0).unwrap()).map(|r| r.row).collect();
    rows.sort_by_key(id_of);
    rows
}

fn log_rows_and_arrow(conn: &Connection) {
    let path = create(conn, "nested_values_log", &TableDescriptor::new(schema(false)).with_bucket_count(2));
    let table = conn.get_table(&path).unwrap();
    let w = table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let ok = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for i in 0..200 {
        let ok = ok.clone();
        w.append_with_callback(&row(i), move |c| {
            assert!(c.is_ok(), "{c:?}");
            ok.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })
        .unwrap();
    }
    w.flush(None).unwrap();
    assert_eq!(ok.load(std::sync::atomic::Ordering::Relaxed), 200);
    assert_eq!(read_all(conn, &path, 2), (0..200).map(row).collect::<Vec<_>>());

    // A user's Arrow batch with pyarrow's names ("item" elements, nullable everything) is
    // conformed to the table's Arrow types; NULL in a NOT NULL place is refused whole.
    let arrow_path = create(
        conn,
        "nested_values_arrow",
        &TableDescriptor::new(
            Schema::builder()
                .column_not_null("id", DataType::Int)
                .column("tags", DataType::parse("ARRAY<STRING>").unwrap())
                .column("attrs", DataType::parse("MAP<STRING, INT NOT NULL>").unwrap())
                .column("point", DataType::parse("ROW<x DOUBLE, y DOUBLE NOT NULL>").unwrap())
                .build()
                .unwrap(),
        )
        .with_bucket_count(1),
    );
    let batch = |y_null: bool| {
        let mut tags = ListBuilder::new(StringBuilder::new());
        tags.values().append_value("a");
        tags.values().append_null();
        tags.append(true);
        tags.append(false);
        tags.append(true);
        let mut attrs = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
        attrs.keys().append_value("k");
        attrs.values().append_value(7);
        attrs.append(true).unwrap();
        attrs.append(false).unwrap();
        attrs.append(true).unwrap();
        let point = StructArray::from(vec![
            (Arc::new(Field::new("x", ArrowType::Float64, true)), Arc::new(Float64Array::from(vec![Some(1.5), None, None])) as ArrayRef),
            (
                Arc::new(Field::new("y", ArrowType::Float64, true)),
                Arc::new(Float64Array::from(vec![Some(2.5), Some(0.0), if y_null { None } else { Some(-1.0) }])) as ArrayRef,
            ),
        ]);
        let columns: Vec<ArrayRef> =
            vec![Arc::new(Int32Array::from(vec![1, 2, 3])), Arc::new(tags.finish()), Arc::new(attrs.finish()), Arc::new(point)];
        let fields: Vec<Field> =
            ["id", "tags", "attrs", "point"].iter().zip(&columns).map(|(n, c)| Field::new(*n, c.data_type().clone(), *n != "id")).collect();
        RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns).unwrap()
    };
    let w = conn.get_table(&arrow_path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let e = w.write_arrow_batch(&batch(true)).unwrap_err();
    assert_eq!(e.code(), ClientCode::InvalidRow as i32, "{e}");
    assert!(e.message().contains("column \"point\"") && e.message().contains("field \"y\" is NOT NULL"), "{e}");
    w.write_arrow_batch(&batch(false)).unwrap();
    w.flush(None).unwrap();
    assert_eq!(
        read_all(conn, &arrow_path, 1),
        vec![
            vec![
                Value::Int(1),
                Value::Array(vec![s("a"), Value::Null]),
                Value::Map(vec![(s("k"), Value::Int(7))]),
                Value::Row(vec![Value::Double(1.5), Value::Double(2.5)])
            ],
            vec![Value::Int(2), Value::Null, Value::Null, Value::Row(vec![Value::Null, Value::Double(0.0)])],
            vec![Value::Int(3), Value::Array(vec![]), Value::Map(vec![]), Value::Row(vec![Value::Null, Value::Double(-1.0)])],
        ]
    );
}

fn primary_key_rows(conn: &Connection) {
    let path = create(conn, "nested_values_pk", &TableDescriptor::new(schema(true)).with_bucket_count(3));
    let table = conn.get_table(&path).unwrap();
    let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    for i in 0..150 {
        w.upsert(&row(i)).unwrap();
    }
    // Upserts that replace nested values, and deletes.
    for i in 0..20 {
        w.upsert(&row(i + 1000).into_iter().enumerate().map(|(c, v)| if c == 0 { Value::Int(i) } else { v }).collect::<Vec<_>>()).unwrap();
    }
    for i in 140..150 {
        w.delete(&[Value::Int(i)]).unwrap();
    }
    w.flush(None).unwrap();
    let want = |i: i32| -> Option<Row> {
        match i {
            0..20 => Some(row(i + 1000).into_iter().enumerate().map(|(c, v)| if c == 0 { Value::Int(i) } else { v }).collect()),
            20..140 => Some(row(i)),
            _ => None,
        }
    };
    for i in 0..150 {
        assert_eq!(table.lookup(&[Value::Int(i)]).unwrap(), want(i), "lookup of {i}");
    }
    // Partial update of two nested columns (Fluss requires every non-key column to be nullable,
    // so a table without column "n"): the others keep their values.
    let p = |t: &str| DataType::parse(t).unwrap();
    let partial_schema = Schema::builder()
        .column_not_null("id", DataType::Int)
        .column("tags", p("ARRAY<STRING>"))
        .column("attrs", p("MAP<STRING, INT NOT NULL>"))
        .column("point", p("ROW<x DOUBLE, y DOUBLE NOT NULL>"))
        .column("deep", p("ARRAY<ROW<a INT, b MAP<STRING, ARRAY<BIGINT NOT NULL>>, c CHAR(3)>>"))
        .primary_key(["id"])
        .build()
        .unwrap();
    let path = create(conn, "nested_values_partial", &TableDescriptor::new(partial_schema).with_bucket_count(1));
    let table = conn.get_table(&path).unwrap();
    let full = |i: i32| row(i)[..5].to_vec();
    let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    (0..10).for_each(|i| w.upsert_detached(&full(i)).unwrap());
    w.flush(None).unwrap();
    let partial = table
        .new_upsert()
        .unwrap()
        .partial_update_by_name(&["id", "tags", "point"])
        .unwrap()
        .create_writer(WriterOptions::default())
        .unwrap();
    let update = vec![
        Value::Int(3),
        Value::Array(vec![s("new")]),
        Value::Null,
        Value::Row(vec![Value::Double(9.0), Value::Double(8.0)]),
        Value::Null,
    ];
    let done = partial.upsert(&update).unwrap().wait(None).unwrap();
    assert!(done.is_ok(), "{done:?}");
    let mut expect = full(3);
    expect[1] = update[1].clone();
    expect[3] = update[3].clone();
    assert_eq!(table.lookup(&[Value::Int(3)]).unwrap(), Some(expect));
}

fn bad_values(conn: &Connection) {
    let path = create(conn, "nested_values_bad", &TableDescriptor::new(schema(true)).with_bucket_count(1));
    let table = conn.get_table(&path).unwrap();
    let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    let with = |c: usize, v: Value| {
        let mut r = row(1);
        r[c] = v;
        r
    };
    let cases = [
        (with(2, Value::Map(vec![(s("k"), Value::Null)])), "column \"attrs\"{\"k\"} is INT NOT NULL but the value is null"),
        (with(2, Value::Map(vec![(Value::Null, Value::Int(1))])), "map keys cannot be null"),
        (with(2, Value::Map(vec![(s("k"), Value::Int(1)), (s("k"), Value::Int(2))])), "map keys must be unique"),
        (
            with(3, Value::Row(vec![Value::Double(1.0)])),
            "column \"point\" is ROW<x DOUBLE, y DOUBLE NOT NULL>: the value has 1 fields, the type 2",
        ),
        (with(3, Value::Row(vec![Value::Double(1.0), Value::Null])), "column \"point\".y is DOUBLE NOT NULL but the value is null"),
        (with(1, Value::Array(vec![Value::Int(1)])), "column \"tags\"[0] is STRING but the value is INT"),
        (with(1, s("not a list")), "column \"tags\" is ARRAY<STRING> but the value is STRING"),
        (with(5, Value::Array(vec![Value::Bytes(vec![1, 2, 3])])), "column \"n\"[0] is BINARY(4) but the value has 3 bytes"),
        (with(5, Value::Array(vec![Value::Null])), "column \"n\"[0] is BINARY(4) NOT NULL but the value is null"),
        (
            with(
                4,
                Value::Array(vec![Value::Row(vec![
                    Value::Int(1),
                    Value::Map(vec![(s("x"), Value::Array(vec![Value::Null]))]),
                    Value::Null,
                ])]),
            ),
            "column \"deep\"[0].b{\"x\"}[0] is BIGINT NOT NULL",
        ),
        (
            with(4, Value::Array(vec![Value::Null, Value::Row(vec![Value::Null, Value::Null, s("abcd")])])),
            "column \"deep\"[1].c is CHAR(3) but the value has 4 characters",
        ),
    ];
    for (r, words) in cases {
        let e = w.upsert(&r).unwrap_err();
        assert_eq!(e.code(), ClientCode::InvalidRow as i32, "{e}");
        assert!(e.message().contains(words), "{e}\nexpected: {words}");
    }
    w.flush(None).unwrap();
    assert_eq!(table.lookup(&[Value::Int(1)]).unwrap(), None, "nothing was accepted");
    assert_eq!(w.stats().pending_callbacks, 0);
}

#[test]
fn nested_log_rows_and_arrow_batches_embedded() {
    log_rows_and_arrow(&embedded());
}

#[test]
fn nested_primary_key_rows_embedded() {
    primary_key_rows(&embedded());
}

#[test]
fn nested_bad_values_are_refused_embedded() {
    bad_values(&embedded());
}

#[test]
fn nested_values_cluster() {
    let Some(b) = bootstrap("nested_values::nested_values_cluster") else { return };
    bounded("nested_values_cluster", LIMIT, move || {
        let conn = connect(&b, &[]);
        log_rows_and_arrow(&conn);
        primary_key_rows(&conn);
        bad_values(&conn);
    });
}
