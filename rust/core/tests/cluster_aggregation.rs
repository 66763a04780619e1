//! Tables with `table.merge-engine = aggregation` on a real cluster (`FLUSS_BOOTSTRAP_SERVERS`;
//! Fluss 0.9.1 and 1.0 both have the engine): per-column aggregation functions given at
//! CreateTable (schema JSON `agg_function`), full-row upserts and partial updates merged by the
//! server, read back by lookup; ADD COLUMN with an aggregation function (PbAddColumn fields 5 and
//! 6, Fluss 1.0 only: a 0.9.1 server skips them, which `alter_table` reports as `UNSUPPORTED`).
//! Without the variable the tests print a banner and pass, except under `CI=true`.

mod cluster_support;

use std::time::Duration;

use cluster_support::{bootstrap, bounded, connect, create, drop_table_when_reachable};
use fluss_writer::{AggFunction, Column, DataType, Schema, TableChange, TableDescriptor, Value, WriterOptions};

/// A 32-bit Roaring bitmap of a few small values (< 4096, one array container) in the portable
/// serialization without runs (cookie 12346), which Java's `RoaringBitmap.serialize` writes for
/// such a set.
fn rbm32(values: &[u16]) -> Vec<u8> {
    let mut v = values.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out = Vec::new();
    out.extend_from_slice(&12346u32.to_le_bytes()); // cookie: no run containers
    out.extend_from_slice(&1u32.to_le_bytes()); // containers
    out.extend_from_slice(&0u16.to_le_bytes()); // container key (high 16 bits)
    out.extend_from_slice(&((v.len() - 1) as u16).to_le_bytes()); // cardinality - 1
    out.extend_from_slice(&16u32.to_le_bytes()); // offset of the container's data
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

fn agg(name: &str) -> AggFunction {
    AggFunction::new(name).unwrap()
}

#[test]
fn aggregation_merge_engine_merges_upserts_and_partial_updates() {
    let Some(bs) = bootstrap("cluster_aggregation") else { return };
    bounded("aggregation", Duration::from_secs(120), move || {
        let conn = connect(&bs, &[]);
        let schema = Schema::new(
            vec![
                Column::new("id", DataType::BigInt),
                Column::new("total", DataType::BigInt).with_agg_function(agg("sum")),
                Column::new("hi", DataType::Int).with_agg_function(agg("MAX")),
                Column::new("name", DataType::String), // the default: last_value_ignore_nulls
                Column::new("tags", DataType::String).with_agg_function(agg("listagg").with_param("delimiter", ";")),
                Column::new("seen", DataType::Bytes).with_agg_function(agg("rbm32")),
            ],
            vec!["id".into()],
        )
        .unwrap();
        let d = TableDescriptor::new(schema.clone()).with_bucket_count(2).with_property("table.merge-engine", "aggregation");
        let path = create(&conn, "agg", &d);
        // The functions round-trip through the server's table JSON.
        let info = conn.admin().get_table_info(&path).unwrap();
        let stored: Vec<Option<AggFunction>> = info.descriptor.schema.columns().iter().map(|c| c.agg_function.clone()).collect();
        let want: Vec<Option<AggFunction>> = schema.columns().iter().map(|c| c.agg_function.clone()).collect();
        assert_eq!(stored, want, "aggregation functions as the server stored them");

        let table = conn.get_table(&path).unwrap();
        let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
        let s = |x: &str| Value::String(x.into());
        w.upsert(&[Value::BigInt(1), Value::BigInt(10), Value::Int(3), s("a"), s("x"), Value::Bytes(rbm32(&[1, 2]))]).unwrap();
        w.upsert(&[Value::BigInt(1), Value::BigInt(5), Value::Int(7), Value::Null, s("y"), Value::Bytes(rbm32(&[5, 9]))]).unwrap();
        w.upsert(&[Value::BigInt(2), Value::BigInt(1), Value::Int(1), s("b"), s("z"), Value::Null]).unwrap();
        w.flush(Some(Duration::from_secs(45))).unwrap();
        let one = table.lookup(&[Value::BigInt(1)]).unwrap().expect("key 1");
        assert_eq!(
            one.to_vec(),
            vec![Value::BigInt(1), Value::BigInt(15), Value::Int(7), s("a"), s("x;y"), Value::Bytes(rbm32(&[1, 2, 5, 9]))],
            "sum, max, last non-null, listagg, bitmap union"
        );

        // A partial update (id, total) aggregates only the columns it names.
        let p =
            table.new_upsert().unwrap().partial_update_by_name(&["id", "total"]).unwrap().create_writer(WriterOptions::default()).unwrap();
        p.upsert(&[Value::BigInt(1), Value::BigInt(100), Value::Int(99), s("ignored"), s("ignored"), Value::Null]).unwrap();
        p.upsert(&[Value::BigInt(3), Value::BigInt(4), Value::Null, Value::Null, Value::Null, Value::Null]).unwrap();
        p.flush(Some(Duration::from_secs(45))).unwrap();
        let one = table.lookup(&[Value::BigInt(1)]).unwrap().expect("key 1");
        assert_eq!(
            one.to_vec(),
            vec![Value::BigInt(1), Value::BigInt(115), Value::Int(7), s("a"), s("x;y"), Value::Bytes(rbm32(&[1, 2, 5, 9]))]
        );
        let three = table.lookup(&[Value::BigInt(3)]).unwrap().expect("key 3, inserted by a partial update");
        assert_eq!(three.to_vec(), vec![Value::BigInt(3), Value::BigInt(4), Value::Null, Value::Null, Value::Null, Value::Null]);

        // ADD COLUMN with an aggregation function.
        let cnt = Column::new("cnt", DataType::BigInt).with_agg_function(agg("sum"));
        match conn.admin().alter_table(&path, &[TableChange::AddColumn(cnt.clone())], false) {
            Ok(()) => {
                // A Fluss 1.0 server: the column is summed.
                let info = conn.admin().get_table_info(&path).unwrap();
                assert_eq!(info.descriptor.schema.columns().last(), Some(&cnt));
                let table = conn.get_table(&path).unwrap();
                let w = table
                    .new_upsert()
                    .unwrap()
                    .partial_update_by_name(&["id", "cnt"])
                    .unwrap()
                    .create_writer(WriterOptions::default())
                    .unwrap();
                let row = |n: i64| [Value::BigInt(2), Value::Null, Value::Null, Value::Null, Value::Null, Value::Null, Value::BigInt(n)];
                w.upsert(&row(2)).unwrap();
                w.upsert(&row(3)).unwrap();
                w.flush(Some(Duration::from_secs(45))).unwrap();
                let two = table.lookup(&[Value::BigInt(2)]).unwrap().expect("key 2");
                assert_eq!(
                    two.to_vec(),
                    vec![Value::BigInt(2), Value::BigInt(1), Value::Int(1), s("b"), s("z"), Value::Null, Value::BigInt(5)]
                );
            }
            Err(e) => {
                // A Fluss 0.9.1 server skips PbAddColumn 5/6: the column is added without its
                // function, and alter_table says so rather than succeeding.
                eprintln!("ADD COLUMN with an aggregation function, as the user sees it: {e}");
                assert_eq!(e.code(), fluss_writer::ClientCode::Unsupported.code(), "{e}");
                assert!(e.message().contains("0.9.1") && e.message().contains("cnt"), "{e}");
                let info = conn.admin().get_table_info(&path).unwrap();
                assert_eq!(info.descriptor.schema.columns().last().map(|c| (&c.name, &c.agg_function)), Some((&cnt.name, &None)));
            }
        }
        drop_table_when_reachable(&conn, &path);
        conn.close(None).unwrap();
    });
}

#[test]
fn an_aggregation_function_on_a_table_without_the_aggregation_engine_is_refused() {
    let Some(bs) = bootstrap("cluster_aggregation") else { return };
    bounded("aggregation_refused", Duration::from_secs(60), move || {
        let conn = connect(&bs, &[]);
        let schema =
            Schema::builder().column_not_null("id", DataType::BigInt).column("v", DataType::BigInt).primary_key(["id"]).build().unwrap();
        let path = create(&conn, "noagg", &TableDescriptor::new(schema).with_bucket_count(1));
        let cnt = Column::new("cnt", DataType::BigInt).with_agg_function(agg("sum"));
        let e = conn.admin().alter_table(&path, &[TableChange::AddColumn(cnt)], false).unwrap_err();
        eprintln!("ADD COLUMN with an aggregation function to a default-engine table: {e}");
        // 1.0: the server refuses it (INVALID_CONFIG); 0.9.1 skips the function (UNSUPPORTED, above).
        assert!(e.code() == fluss_writer::FlussCode::INVALID_CONFIG || e.code() == fluss_writer::ClientCode::Unsupported.code(), "{e}");
        drop_table_when_reachable(&conn, &path);
        conn.close(None).unwrap();
    });
}
