//! ARRAY, MAP and ROW columns (issue 13, part 1), their DDL: tables with them are created and
//! described on both backends (the real 0.9.1 server takes the DDL JSON with its nested field
//! ids and hands the same types back), nested key columns are refused in the server's words, and
//! nested columns added while writers go on (old writers write NULL there, new ones values).
//! Writing and reading the values: nested_values.rs.

mod cluster_support;

use std::time::Duration;

use cluster_support::{bootstrap, bounded, connect, create, database, embedded, unique};
use fluss_writer::{
    ClientCode, Column, Connection, DataType, Nested, RowField, Schema, TableChange, TableDescriptor, TablePath, Value, WriterOptions,
};

const LIMIT: Duration = Duration::from_secs(120);

fn schema(pk: bool) -> Schema {
    let mut b = Schema::builder()
        .column_not_null("id", DataType::Int)
        .column("tags", DataType::parse("ARRAY<STRING>").unwrap())
        .column("attrs", DataType::parse("MAP<STRING, INT NOT NULL>").unwrap())
        .column("point", DataType::Row { fields: vec![RowField::new("x", DataType::Double), RowField::not_null("y", DataType::Double)] })
        .column("deep", DataType::parse("ARRAY<ROW<a INT, b MAP<STRING, ARRAY<BIGINT NOT NULL>>, c CHAR(3)>>").unwrap())
        .column_not_null("n", DataType::Array { element: Box::new(Nested::not_null(DataType::Binary { length: 4 })) });
    if pk {
        b = b.primary_key(["id"]);
    }
    b.build().unwrap()
}

fn ddl(conn: &Connection) {
    for pk in [false, true] {
        let want = schema(pk);
        let d = TableDescriptor::new(want.clone()).with_bucket_count(2);
        let path = create(conn, if pk { "nested_pk" } else { "nested_log" }, &d);
        let table = conn.get_table(&path).unwrap();
        let got = table.info().schema();
        assert_eq!(got.columns(), want.columns(), "the backend hands the nested types back as created");
        let names: Vec<String> = got.columns().iter().map(|c| format!("{} {}", c.name, c.data_type)).collect();
        assert_eq!(names[4], "deep ARRAY<ROW<a INT, b MAP<STRING, ARRAY<BIGINT NOT NULL>>, c CHAR(3)>>");
        if pk {
            table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
        } else {
            table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
        }
    }
    // Nested key columns: refused as the server refuses them (InvalidTableException).
    let cases: Vec<(&str, TableDescriptor)> = vec![
        (
            "Primary key column 'tags' has unsupported data type ARRAY<STRING>",
            TableDescriptor::new(
                Schema::builder()
                    .column_not_null("id", DataType::Int)
                    .column_not_null("tags", DataType::parse("ARRAY<STRING>").unwrap())
                    .primary_key(["id", "tags"])
                    .build()
                    .unwrap(),
            ),
        ),
        ("Bucket key column 'point' has unsupported data type ROW<x DOUBLE, y DOUBLE NOT NULL>", {
            TableDescriptor::new(schema(false)).with_bucket_count(2).with_bucket_key(["point"])
        }),
        ("partition key column \"attrs\" has type MAP<STRING, INT NOT NULL>", {
            TableDescriptor::new(schema(false)).with_partition_keys(["attrs"])
        }),
    ];
    for (words, d) in cases {
        let path = TablePath::new(database(conn), unique("nested_key")).unwrap();
        let e = conn.admin().create_table(&path, &d, false).unwrap_err();
        assert_eq!(e.code(), ClientCode::InvalidTable as i32, "{e}");
        assert!(e.message().contains(words), "{e}");
        assert!(!conn.admin().table_exists(&path).unwrap());
    }
}

/// A nested column added to a table while writers of its older schema go on: they keep writing
/// (the new column is NULL in their rows, including in the changelog the backend builds in the
/// newer schema) and their rows read back with NULL there; a new writer writes values there.
fn added_while_writing(conn: &Connection) {
    for pk in [false, true] {
        let mut b = Schema::builder().column_not_null("id", DataType::Int).column("v", DataType::String);
        if pk {
            b = b.primary_key(["id"]);
        }
        let path = create(conn, "nested_added", &TableDescriptor::new(b.build().unwrap()).with_bucket_count(1));
        let table = conn.get_table(&path).unwrap();
        let add = |i: i32| vec![Value::Int(i), Value::String(format!("v{i}"))];
        let w = if pk {
            let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
            (0..5).for_each(|i| w.upsert_detached(&add(i)).unwrap());
            Err(w)
        } else {
            let w = table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
            (0..5).for_each(|i| w.append_detached(&add(i)).unwrap());
            Ok(w)
        };
        let added = [
            TableChange::AddColumn(Column::new("tags", DataType::parse("ARRAY<STRING>").unwrap())),
            TableChange::AddColumn(Column::new("point", DataType::parse("ROW<x INT, y MAP<STRING, INT>>").unwrap())),
        ];
        conn.admin().alter_table(&path, &added, false).unwrap();
        match &w {
            Ok(w) => (5..10).for_each(|i| w.append_detached(&add(i)).unwrap()),
            Err(w) => (5..10).for_each(|i| w.upsert_detached(&add(i)).unwrap()),
        }
        match &w {
            Ok(w) => w.flush(None).unwrap(),
            Err(w) => w.flush(None).unwrap(),
        }
        let after = conn.get_table(&path).unwrap();
        assert_eq!(after.info().schema().len(), 4);
        let want = |i: i32| vec![Value::Int(i), Value::String(format!("v{i}")), Value::Null, Value::Null];
        let mut rows: Vec<Vec<Value>> = after.scan(0, 0).unwrap().into_iter().map(|s| s.row).collect();
        rows.sort_by_key(|r| if let Value::Int(i) = r[0] { i } else { -1 });
        assert_eq!(rows, (0..10).map(want).collect::<Vec<_>>(), "pk = {pk}");
        if pk {
            for i in 0..10 {
                assert_eq!(after.lookup(&[Value::Int(i)]).unwrap(), Some(want(i)));
            }
        }
        // A writer created after the change writes the new columns.
        let new_row = vec![
            Value::Int(10),
            Value::String("v10".into()),
            Value::Array(vec![Value::String("x".into()), Value::Null]),
            Value::Row(vec![Value::Int(1), Value::Map(vec![(Value::String("k".into()), Value::Null)])]),
        ];
        if pk {
            after.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap().upsert(&new_row).unwrap();
            assert_eq!(after.lookup(&[Value::Int(10)]).unwrap(), Some(new_row.clone()));
        } else {
            after.new_append().unwrap().create_writer(WriterOptions::default()).unwrap().append(&new_row).unwrap();
        }
        let rows: Vec<Vec<Value>> = after.scan(0, 0).unwrap().into_iter().map(|s| s.row).collect();
        assert!(rows.contains(&new_row), "pk = {pk}: the new writer's row reads back with its nested values");
    }
}

#[test]
fn nested_column_added_while_writing_embedded() {
    added_while_writing(&embedded());
}

#[test]
fn nested_column_added_while_writing_cluster() {
    let Some(b) = bootstrap("nested_ddl::nested_column_added_while_writing_cluster") else { return };
    bounded("nested_column_added_while_writing_cluster", LIMIT, move || added_while_writing(&connect(&b, &[])));
}

#[test]
fn nested_ddl_embedded() {
    ddl(&embedded());
}

#[test]
fn nested_ddl_cluster() {
    let Some(b) = bootstrap("nested_ddl::nested_ddl_cluster") else { return };
    bounded("nested_ddl_cluster", LIMIT, move || ddl(&connect(&b, &[])));
}
