//! CHAR(n) and BINARY(n) columns (issue 13, part 1; issue 27), on the embedded engine and, for
//! the tests marked `_cluster`, on the real Fluss 0.9.1 cluster. CHAR values are strings written
//! like STRING and not padded (as Fluss 0.9.1's Java client writes them: `CompactedRowWriter.writeChar`
//! ignores the length, Arrow carries Utf8); unlike the Java client, which stores a longer value,
//! fluss-writer refuses a value of more than n characters (Unicode code points) as INVALID_ROW
//! naming the column, for rows and Arrow batches, and writes nothing of it. BINARY(n) values are
//! written like BYTES in primary-key tables and as Arrow FixedSizeBinary(n) in log tables, so a
//! value must have exactly n bytes (refused otherwise, the same way).

mod cluster_support;

use std::sync::Arc;
use std::time::Duration;

use arrow_array::{ArrayRef, BinaryArray, FixedSizeBinaryArray, Int32Array, RecordBatch, StringArray};
use cluster_support::{bootstrap, bounded, connect, create, embedded};
use fluss_writer::{ClientCode, Connection, DataType, Schema, TableDescriptor, Value, WriterOptions};

const LIMIT: Duration = Duration::from_secs(120);

fn bin(i: i32) -> Vec<u8> {
    (i as u32).to_be_bytes().to_vec()
}

/// A log table with CHAR(3) and BINARY(4): rows and Arrow batches (FixedSizeBinary, and
/// variable-length Binary whose values all have 4 bytes) read back as written, shorter CHAR
/// values unpadded; a CHAR value of more than 3 characters and a BINARY value of another length
/// are refused, naming the column, and nothing of them is written.
fn log_table(conn: &Connection) {
    let schema = Schema::builder()
        .column_not_null("k", DataType::Int)
        .column("c", DataType::Char { length: 3 })
        .column("b", DataType::Binary { length: 4 })
        .build()
        .unwrap();
    let path = create(conn, "cb_log", &TableDescriptor::new(schema).with_bucket_count(1));
    let table = conn.get_table(&path).unwrap();
    assert_eq!(table.info().schema().columns()[1].data_type, DataType::Char { length: 3 }, "the server keeps CHAR(3)");
    assert_eq!(table.info().schema().columns()[2].data_type, DataType::Binary { length: 4 });
    let w = table.new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let mut want: Vec<Vec<Value>> = Vec::new();
    for i in 0..10 {
        let row = vec![Value::Int(i), Value::String(["ab", "abc", "日本語", "é"][i as usize % 4].into()), Value::Bytes(bin(i))];
        w.append_detached(&row).unwrap();
        want.push(row);
    }
    w.append_detached(&[Value::Int(10), Value::Null, Value::Null]).unwrap();
    want.push(vec![Value::Int(10), Value::Null, Value::Null]);
    let e = w.append_detached(&[Value::Int(99), Value::Null, Value::Bytes(vec![1, 2, 3])]).unwrap_err();
    assert_eq!(e.client_code(), Some(ClientCode::InvalidRow), "{e}");
    assert!(e.message().contains("BINARY(4)") && e.message().contains("3 bytes"), "{e}");
    for long in ["abcd", "longer than three", "日本語!"] {
        let e = w.append_detached(&[Value::Int(98), Value::String(long.into()), Value::Null]).unwrap_err();
        assert_eq!(e.client_code(), Some(ClientCode::InvalidRow), "{e}");
        assert!(e.message().contains("column \"c\" is CHAR(3) but the value has"), "{e}");
    }
    let fixed = FixedSizeBinaryArray::try_from_iter((11..14).map(bin)).unwrap();
    let batch = RecordBatch::try_from_iter([
        ("k", Arc::new(Int32Array::from_iter_values(11..14)) as ArrayRef),
        ("c", Arc::new(StringArray::from(vec!["x", "y", "z"])) as _),
        ("b", Arc::new(fixed) as _),
    ])
    .unwrap();
    w.write_arrow_batch(&batch).unwrap().wait(Some(Duration::from_secs(30))).unwrap().result().unwrap();
    let variable = BinaryArray::from_iter_values((14..16).map(bin));
    let batch = RecordBatch::try_from_iter([
        ("k", Arc::new(Int32Array::from_iter_values(14..16)) as ArrayRef),
        ("c", Arc::new(StringArray::from(vec!["p", "q"])) as _),
        ("b", Arc::new(variable) as _),
    ])
    .unwrap();
    w.write_arrow_batch(&batch).unwrap().wait(Some(Duration::from_secs(30))).unwrap().result().unwrap();
    let wrong = RecordBatch::try_from_iter([
        ("k", Arc::new(Int32Array::from_iter_values([20])) as ArrayRef),
        ("c", Arc::new(StringArray::from(vec!["r"])) as _),
        ("b", Arc::new(BinaryArray::from_iter_values([vec![1u8; 5]])) as _),
    ])
    .unwrap();
    let e = w.write_arrow_batch(&wrong).unwrap_err();
    assert_eq!(e.client_code(), Some(ClientCode::InvalidRow), "{e}");
    let long = RecordBatch::try_from_iter([
        ("k", Arc::new(Int32Array::from_iter_values([21, 22])) as ArrayRef),
        ("c", Arc::new(StringArray::from(vec!["ok", "abcd"])) as _),
        ("b", Arc::new(FixedSizeBinaryArray::try_from_iter([bin(21), bin(22)].into_iter()).unwrap()) as _),
    ])
    .unwrap();
    let e = w.write_arrow_batch(&long).unwrap_err();
    assert_eq!(e.client_code(), Some(ClientCode::InvalidRow), "{e}");
    assert!(e.message().contains("column \"c\" is CHAR(3) but the value in batch row 1 has 4 characters"), "{e}");
    w.close(None).unwrap();
    for (i, c) in (11..16).zip(["x", "y", "z", "p", "q"]) {
        want.push(vec![Value::Int(i), Value::String(c.into()), Value::Bytes(bin(i))]);
    }
    let got: Vec<Vec<Value>> = table.scan(0, 0).unwrap().into_iter().map(|s| s.row).collect();
    assert_eq!(got, want);
}

#[test]
fn log_table_embedded() {
    log_table(&embedded());
}

#[test]
fn log_table_cluster() {
    let Some(b) = bootstrap("char_binary::log_table_cluster") else { return };
    bounded("cb_log_cluster", LIMIT, move || log_table(&connect(&b, &[])));
}

/// A primary-key table keyed by CHAR(6) and BINARY(2), with a CHAR partition: upserts, a
/// delete, lookups.
fn pk_table(conn: &Connection) {
    let schema = Schema::builder()
        .column_not_null("region", DataType::Char { length: 2 })
        .column_not_null("c", DataType::Char { length: 6 })
        .column_not_null("b", DataType::Binary { length: 2 })
        .column("v", DataType::Binary { length: 3 })
        .primary_key(["region", "c", "b"])
        .build()
        .unwrap();
    let d = TableDescriptor::new(schema).with_bucket_count(3).with_partition_keys(["region"]);
    let path = create(conn, "cb_pk", &d);
    let table = conn.get_table(&path).unwrap();
    let w = table.new_upsert().unwrap().create_writer(WriterOptions::default()).unwrap();
    let key = |r: &str, i: u16| vec![Value::String(r.into()), Value::String(format!("c{i}")), Value::Bytes(i.to_be_bytes().to_vec())];
    for r in ["eu", "us"] {
        for i in 0..30u16 {
            let mut row = key(r, i);
            row.push(Value::Bytes(vec![i as u8, 1, 2]));
            w.upsert_detached(&row).unwrap();
        }
    }
    w.delete_detached(&key("eu", 7)).unwrap();
    // Too long for CHAR(6), as a key column and in the partition column CHAR(2).
    let e = w
        .upsert_detached(&[Value::String("eu".into()), Value::String("abcdefg".into()), Value::Bytes(vec![0, 1]), Value::Null])
        .unwrap_err();
    assert!(
        e.client_code() == Some(ClientCode::InvalidRow) && e.message().contains("column \"c\" is CHAR(6) but the value has 7 characters"),
        "{e}"
    );
    let e =
        w.upsert_detached(&[Value::String("eur".into()), Value::String("c1".into()), Value::Bytes(vec![0, 1]), Value::Null]).unwrap_err();
    assert!(
        e.client_code() == Some(ClientCode::InvalidRow)
            && e.message().contains("column \"region\" is CHAR(2) but the value has 3 characters"),
        "{e}"
    );
    w.close(None).unwrap();
    for r in ["eu", "us"] {
        for i in 0..30u16 {
            let got = table.lookup(&key(r, i)).unwrap();
            if (r, i) == ("eu", 7) {
                assert_eq!(got, None);
            } else {
                let mut want = key(r, i);
                want.push(Value::Bytes(vec![i as u8, 1, 2]));
                assert_eq!(got, Some(want), "{r} {i}");
            }
        }
    }
}

#[test]
fn pk_table_embedded() {
    pk_table(&embedded());
}

#[test]
fn pk_table_cluster() {
    let Some(b) = bootstrap("char_binary::pk_table_cluster") else { return };
    bounded("cb_pk_cluster", LIMIT, move || pk_table(&connect(&b, &[])));
}

#[test]
fn type_names_parse_and_print() {
    assert_eq!(DataType::parse("char(5)").unwrap(), DataType::Char { length: 5 });
    assert_eq!(DataType::parse("CHAR").unwrap(), DataType::Char { length: 1 });
    assert_eq!(DataType::parse("BINARY(300)").unwrap(), DataType::Binary { length: 300 });
    assert_eq!(DataType::Binary { length: 300 }.to_string(), "BINARY(300)");
    assert!(DataType::parse("CHAR(0)").is_err());
    assert!(DataType::parse("BINARY(1, 2)").is_err());
    assert!(DataType::parse("DECIMAL(300, 2)").is_err(), "DECIMAL keeps its 8-bit parameters");
}
