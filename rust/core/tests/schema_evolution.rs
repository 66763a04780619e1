//! Schema evolution while writing (issue 13, part 2): `Admin::alter_table` adds nullable columns
//! at the end; a writer created before the change keeps writing its schema (rows, keys and Arrow
//! batches; the server accepts the older schema id), a writer created after it writes the new
//! columns, and read-back mixes both (older rows with nulls in the new columns). Every other
//! change is refused with the server's error. On the embedded engine and, for the tests marked
//! `_cluster`, on the real Fluss 0.9.1 cluster.

mod cluster_support;

use std::sync::Arc;
use std::time::Duration;

use cluster_support::{bootstrap, bounded, connect, create, database, embedded, unique, Seen};
use fluss_writer::{
    Column, Connection, DataType, FlussCode, PartitionSpec, Schema, TableChange, TableDescriptor, TablePath, Value, WriteCompletion,
    WriterOptions,
};

const LIMIT: Duration = Duration::from_secs(120);

impl Seen {
    fn check(&self, n: usize) {
        let all = self.0.lock().unwrap();
        assert_eq!(all.len(), n, "one completion per operation");
        assert!(all.iter().all(WriteCompletion::is_ok), "{:?}", all.iter().find(|c| !c.is_ok()));
    }
}

fn added() -> Vec<TableChange> {
    vec![TableChange::AddColumn(Column::new("extra", DataType::Int)), TableChange::AddColumn(Column::new("note", DataType::String))]
}

/// A log table: 50 rows by the old writer, the change, 50 more by the old writer (rows and an
/// Arrow batch of the old schema), 50 by a new writer with the new columns; read back through
/// the table loaded after the change (every row, old ones with nulls) and through the one
/// loaded before (the old columns only).
fn log_table(conn: &Connection) {
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("msg", DataType::String).build().unwrap();
    let path = create(conn, "evo_log", &TableDescriptor::new(schema).with_bucket_count(2).with_bucket_key(["id"]));
    let before = conn.get_table(&path).unwrap();
    assert_eq!(before.info().schema_id, 1);
    let old = before.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let seen = Seen::default();
    for i in 0..50i64 {
        old.append_with_callback(&[Value::BigInt(i), Value::String(format!("old {i}"))], seen.cb()).unwrap();
    }
    old.flush(None).unwrap();
    conn.admin().alter_table(&path, &added(), false).unwrap();
    let after = conn.get_table(&path).unwrap();
    assert_eq!(after.info().schema_id, 2);
    let names: Vec<&str> = after.info().schema().columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "msg", "extra", "note"]);
    assert!(after.info().schema().columns()[2].nullable);
    // The old writer keeps its schema: a row of the new width is refused, its own width works.
    let e = old.append_detached(&[Value::BigInt(1), Value::Null, Value::Int(1), Value::Null]).unwrap_err();
    assert!(e.message().contains("fields"), "{e}");
    for i in 50..90i64 {
        old.append_with_callback(&[Value::BigInt(i), Value::String(format!("old {i}"))], seen.cb()).unwrap();
    }
    let batch = arrow_array::RecordBatch::try_from_iter([
        ("id", Arc::new(arrow_array::Int64Array::from_iter_values(90..100)) as arrow_array::ArrayRef),
        ("msg", Arc::new(arrow_array::StringArray::from_iter_values((90..100).map(|i| format!("old {i}")))) as _),
    ])
    .unwrap();
    old.write_arrow_batch_with_callback(&batch, seen.cb()).unwrap();
    let new = after.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    for i in 100..150i64 {
        new.append_with_callback(
            &[Value::BigInt(i), Value::String(format!("new {i}")), Value::Int(i as i32 * 2), Value::String(format!("n{i}"))],
            seen.cb(),
        )
        .unwrap();
    }
    old.flush(None).unwrap();
    new.flush(None).unwrap();
    seen.check(50 + 40 + 1 + 50);

    let mut rows: Vec<Vec<Value>> = (0..2).flat_map(|b| after.scan(b, 0).unwrap()).map(|s| s.row).collect();
    rows.sort_by_key(|r| match r[0] {
        Value::BigInt(i) => i,
        _ => unreachable!(),
    });
    assert_eq!(rows.len(), 150);
    for (i, r) in rows.iter().enumerate() {
        let i = i as i64;
        let want = if i < 100 {
            vec![Value::BigInt(i), Value::String(format!("old {i}")), Value::Null, Value::Null]
        } else {
            vec![Value::BigInt(i), Value::String(format!("new {i}")), Value::Int(i as i32 * 2), Value::String(format!("n{i}"))]
        };
        assert_eq!(r, &want);
    }
    let old_view: usize = (0..2).flat_map(|b| before.scan(b, 0).unwrap()).inspect(|s| assert_eq!(s.row.len(), 2)).count();
    assert_eq!(old_view, 150, "the table loaded before the change reads every row in its own columns");
    old.close(None).unwrap();
    new.close(None).unwrap();
}

#[test]
fn log_table_embedded() {
    log_table(&embedded());
}

#[test]
fn log_table_cluster() {
    let Some(b) = bootstrap("schema_evolution::log_table_cluster") else { return };
    bounded("evo_log_cluster", LIMIT, move || log_table(&connect(&b, &[])));
}

/// A primary-key table: upserts of the old writer before and after the change (full rows of the
/// old schema: the new columns become null), upserts and deletes of a new writer with the new
/// columns, lookups and the changelog in the new schema.
fn pk_table(conn: &Connection) {
    let schema = Schema::builder().column_not_null("k", DataType::Int).column("v", DataType::String).primary_key(["k"]).build().unwrap();
    let path = create(conn, "evo_pk", &TableDescriptor::new(schema).with_bucket_count(3));
    let old = conn.get_table(&path).unwrap().new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    let seen = Seen::default();
    for k in 0..40 {
        old.upsert_with_callback(&[Value::Int(k), Value::String(format!("v1 {k}"))], seen.cb()).unwrap();
    }
    old.flush(None).unwrap();
    conn.admin().alter_table(&path, &added(), false).unwrap();
    let table = conn.get_table(&path).unwrap();
    let new = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    // Keys 20..30: the new writer sets the new columns, then the old writer overwrites 25..30.
    for k in 20..40 {
        new.upsert_with_callback(
            &[Value::Int(k), Value::String(format!("v2 {k}")), Value::Int(k * 10), Value::String(format!("note {k}"))],
            seen.cb(),
        )
        .unwrap();
    }
    new.flush(None).unwrap();
    for k in 25..30 {
        old.upsert_with_callback(&[Value::Int(k), Value::String(format!("v3 {k}"))], seen.cb()).unwrap();
    }
    old.delete_with_callback(&[Value::Int(0)], seen.cb()).unwrap();
    new.delete_with_callback(&[Value::Int(39)], seen.cb()).unwrap();
    old.flush(None).unwrap();
    new.flush(None).unwrap();
    seen.check(40 + 20 + 5 + 2);
    for k in 0..40 {
        let got = table.lookup(&[Value::Int(k)]).unwrap();
        let want = match k {
            0 | 39 => None,
            1..=19 => Some(vec![Value::Int(k), Value::String(format!("v1 {k}")), Value::Null, Value::Null]),
            25..=29 => Some(vec![Value::Int(k), Value::String(format!("v3 {k}")), Value::Null, Value::Null]),
            _ => Some(vec![Value::Int(k), Value::String(format!("v2 {k}")), Value::Int(k * 10), Value::String(format!("note {k}"))]),
        };
        assert_eq!(got, want, "key {k}");
    }
    // The changelog: every record in the new width; the first 40 inserts have null new columns.
    let log: Vec<_> = (0..3).flat_map(|b| table.scan(b, 0).unwrap()).collect();
    assert!(log.iter().all(|s| s.row.len() == 4));
    assert_eq!(log.len(), 40 + 20 * 2 + 5 * 2 + 2, "inserts, updates as -U/+U pairs, deletes");
    old.close(None).unwrap();
    new.close(None).unwrap();
}

#[test]
fn pk_table_embedded() {
    pk_table(&embedded());
}

#[test]
fn pk_table_cluster() {
    let Some(b) = bootstrap("schema_evolution::pk_table_cluster") else { return };
    bounded("evo_pk_cluster", LIMIT, move || pk_table(&connect(&b, &[])));
}

/// A partitioned table: a partition created after the change gets rows of the old writer too.
fn partitioned(conn: &Connection) {
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("dt", DataType::String).build().unwrap();
    let path = create(conn, "evo_part", &TableDescriptor::new(schema).with_bucket_count(1).with_partition_keys(["dt"]));
    let old = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let seen = Seen::default();
    old.append_with_callback(&[Value::BigInt(1), Value::String("d1".into())], seen.cb()).unwrap();
    old.flush(None).unwrap();
    conn.admin().alter_table(&path, &[TableChange::AddColumn(Column::new("extra", DataType::Double))], false).unwrap();
    old.append_with_callback(&[Value::BigInt(2), Value::String("d2".into())], seen.cb()).unwrap();
    let table = conn.get_table(&path).unwrap();
    let new = table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    new.append_with_callback(&[Value::BigInt(3), Value::String("d2".into()), Value::Double(0.5)], seen.cb()).unwrap();
    old.flush(None).unwrap();
    new.flush(None).unwrap();
    seen.check(3);
    let rows = |p: &str| table.scan_partition(p, 0, 0).unwrap().into_iter().map(|s| s.row).collect::<Vec<_>>();
    assert_eq!(rows("d1"), [vec![Value::BigInt(1), Value::String("d1".into()), Value::Null]]);
    let mut d2 = rows("d2");
    d2.sort_by_key(|r| format!("{:?}", r[0]));
    assert_eq!(
        d2,
        [
            vec![Value::BigInt(2), Value::String("d2".into()), Value::Null],
            vec![Value::BigInt(3), Value::String("d2".into()), Value::Double(0.5)]
        ]
    );
    conn.admin().create_partition(&path, &PartitionSpec::new([("dt", "d3")]), false).unwrap();
    old.close(None).unwrap();
    new.close(None).unwrap();
}

#[test]
fn partitioned_embedded() {
    partitioned(&embedded());
}

#[test]
fn partitioned_cluster() {
    let Some(b) = bootstrap("schema_evolution::partitioned_cluster") else { return };
    bounded("evo_part_cluster", LIMIT, move || partitioned(&connect(&b, &[])));
}

/// What a 0.9.1 server refuses, with its own errors: a column that exists (56), a NOT NULL
/// column, dropping and renaming; a table that does not exist (7) unless ignored. A refused
/// change leaves the schema as it was.
fn refusals(conn: &Connection) {
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("msg", DataType::String).build().unwrap();
    let path = create(conn, "evo_no", &TableDescriptor::new(schema));
    let admin = conn.admin();
    let e = admin.alter_table(&path, &[TableChange::AddColumn(Column::new("msg", DataType::Int))], false).unwrap_err();
    assert_eq!(e.code(), FlussCode::INVALID_ALTER_TABLE, "{e}");
    assert!(e.message().contains("msg already exists"), "{e}");
    let e = admin.alter_table(&path, &[TableChange::AddColumn(Column::new("x", DataType::Int).not_null())], false).unwrap_err();
    assert!(e.message().contains("must be nullable"), "{e}");
    let e = admin.alter_table(&path, &[TableChange::DropColumn("msg".into())], false).unwrap_err();
    assert!(e.message().contains("Not support drop column"), "{e}");
    let e = admin.alter_table(&path, &[TableChange::RenameColumn { from: "msg".into(), to: "m".into() }], false).unwrap_err();
    assert!(e.message().contains("Not support rename column"), "{e}");
    let info = admin.get_table_info(&path).unwrap();
    assert_eq!((info.schema_id, info.schema().len()), (1, 2), "nothing changed");
    let missing = TablePath::new(database(conn), unique("evo_missing")).unwrap();
    let e = admin.alter_table(&missing, &added(), false).unwrap_err();
    assert_eq!(e.code(), FlussCode::TABLE_NOT_EXIST, "{e}");
    admin.alter_table(&missing, &added(), true).unwrap();
}

#[test]
fn refusals_embedded() {
    refusals(&embedded());
}

#[test]
fn refusals_cluster() {
    let Some(b) = bootstrap("schema_evolution::refusals_cluster") else { return };
    bounded("evo_refusals_cluster", LIMIT, move || refusals(&connect(&b, &[])));
}

/// A durable embedded engine keeps every schema version: after a reopen, rows of both versions
/// read back, and a writer of the new schema writes on.
#[test]
fn durable_embedded_keeps_schema_versions() {
    let dir = std::env::temp_dir().join(unique("fw-evo-durable"));
    let loc = format!("embedded:{}", dir.display());
    let schema = Schema::builder().column_not_null("k", DataType::Int).column("v", DataType::String).primary_key(["k"]).build().unwrap();
    let (log_path, pk_path);
    {
        let conn = Connection::open(&loc).unwrap();
        let log_schema = Schema::builder().column_not_null("id", DataType::BigInt).build().unwrap();
        log_path = create(&conn, "evo_dlog", &TableDescriptor::new(log_schema).with_bucket_count(1));
        pk_path = create(&conn, "evo_dpk", &TableDescriptor::new(schema).with_bucket_count(1));
        let lw = conn.get_table(&log_path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
        let pw = conn.get_table(&pk_path).unwrap().new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
        lw.append_detached(&[Value::BigInt(1)]).unwrap();
        pw.upsert_detached(&[Value::Int(1), Value::String("a".into())]).unwrap();
        lw.flush(None).unwrap();
        pw.flush(None).unwrap();
        conn.admin().alter_table(&log_path, &added(), false).unwrap();
        conn.admin().alter_table(&pk_path, &added(), false).unwrap();
        lw.append_detached(&[Value::BigInt(2)]).unwrap();
        pw.upsert_detached(&[Value::Int(2), Value::String("b".into())]).unwrap();
        lw.close(None).unwrap();
        pw.close(None).unwrap();
        conn.close(None).unwrap();
    }
    let conn = Connection::open(&loc).unwrap();
    let log = conn.get_table(&log_path).unwrap();
    assert_eq!(log.info().schema_id, 2);
    let rows: Vec<_> = log.scan(0, 0).unwrap().into_iter().map(|s| s.row).collect();
    assert_eq!(rows, [vec![Value::BigInt(1), Value::Null, Value::Null], vec![Value::BigInt(2), Value::Null, Value::Null]]);
    let pk = conn.get_table(&pk_path).unwrap();
    let w = pk.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    w.upsert_detached(&[Value::Int(3), Value::String("c".into()), Value::Int(3), Value::String("x".into())]).unwrap();
    w.close(None).unwrap();
    assert_eq!(pk.lookup(&[Value::Int(1)]).unwrap(), Some(vec![Value::Int(1), Value::String("a".into()), Value::Null, Value::Null]));
    assert_eq!(
        pk.lookup(&[Value::Int(3)]).unwrap(),
        Some(vec![Value::Int(3), Value::String("c".into()), Value::Int(3), Value::String("x".into())])
    );
    conn.close(None).unwrap();
    let _ = std::fs::remove_dir_all(dir);
}

/// The embedded engine has no aggregation merge engine: it refuses `table.merge-engine` and, as a
/// server does for a table without that engine, a column with an aggregation function, at
/// CreateTable and at ADD COLUMN (`INVALID_CONFIG`), rather than merging like a default table.
#[test]
fn aggregation_functions_are_refused_by_the_embedded_engine() {
    let conn = embedded();
    let admin = conn.admin();
    let sum = || fluss_writer::AggFunction::new("sum").unwrap();
    let pk = |extra: Column| Schema::new(vec![Column::new("id", DataType::BigInt), extra], vec!["id".into()]).unwrap();
    let db = database(&conn);
    let agg_table = TableDescriptor::new(pk(Column::new("v", DataType::BigInt).with_agg_function(sum())))
        .with_property("table.merge-engine", "aggregation");
    let e = admin.create_table(&TablePath::new(db, unique("agg")).unwrap(), &agg_table, false).unwrap_err();
    assert_eq!(e.code(), FlussCode::INVALID_CONFIG, "{e}");
    assert!(e.message().contains("table.merge-engine") && e.message().contains("not supported by the embedded engine"), "{e}");
    let no_engine = TableDescriptor::new(pk(Column::new("v", DataType::BigInt).with_agg_function(sum())));
    let e = admin.create_table(&TablePath::new(db, unique("agg")).unwrap(), &no_engine, false).unwrap_err();
    assert_eq!(e.code(), FlussCode::INVALID_CONFIG, "{e}");
    assert!(e.message().contains("column 'v' has aggregation function 'sum'"), "{e}");

    let path = create(&conn, "agg_add", &TableDescriptor::new(pk(Column::new("v", DataType::BigInt))));
    let e = admin
        .alter_table(&path, &[TableChange::AddColumn(Column::new("cnt", DataType::BigInt).with_agg_function(sum()))], false)
        .unwrap_err();
    assert_eq!(e.code(), FlussCode::INVALID_CONFIG, "{e}");
    assert!(e.message().contains("column 'cnt' has aggregation function 'sum'"), "{e}");
    assert_eq!(admin.get_table_info(&path).unwrap().schema().len(), 2, "nothing added");
}
