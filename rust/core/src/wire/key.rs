//! Compacted key encoding (fluss-protocol.md §4.3): the primary-key (or bucket-key) columns of
//! a row, each in its CompactedRow field encoding (§4.4, [`super::compacted`]), concatenated in
//! key-column order with **no null bitset**. Key columns may not be null.
//!
//! These bytes are the key of a PutKv record, the key of a Lookup, and, when the bucket key is
//! the primary key, the input of [`super::bucketing::bucket_for_key`]. This is the encoder for
//! tables without a datalake format (the Paimon/Iceberg key encoders are not implemented).

use super::compacted::encode_value;
use crate::error::{Error, Result};
use crate::metadata::Schema;
use crate::row::{check_value, Value};

/// Append the compacted key of `row` (a full row of `schema`) made of the columns at
/// `key_indexes`, in that order. Only the key columns are checked; a null key value, a value of
/// the wrong type, a short row or an index outside the schema is [`Error::invalid_row`], and on
/// error nothing is left appended.
pub fn encode_key(schema: &Schema, key_indexes: &[usize], row: &[Value], out: &mut Vec<u8>) -> Result<()> {
    if row.len() != schema.len() {
        return Err(Error::invalid_row(format!("the row has {} fields but the table has {} columns", row.len(), schema.len())));
    }
    if key_indexes.is_empty() {
        return Err(Error::invalid_row("a key needs at least one column"));
    }
    let start = out.len();
    for &i in key_indexes {
        let result = match schema.columns().get(i) {
            None => Err(Error::invalid_row(format!("key column index {i} is outside the schema ({} columns)", schema.len()))),
            Some(col) if row[i].is_null() => Err(Error::invalid_row(format!("key column {:?} is null", col.name))),
            Some(col) => check_value(col, &row[i]).map(|()| encode_value(col.data_type, &row[i], out)),
        };
        if let Err(e) = result {
            out.truncate(start);
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::useless_vec)] // `row![..]` builds a Vec; tests pass it as a slice
mod tests {
    use super::*;
    use crate::metadata::DataType;
    use crate::row;
    use crate::wire::bucketing::bucket_for_key;

    fn schema() -> Schema {
        Schema::builder()
            .column_not_null("id", DataType::Int)
            .column("name", DataType::String)
            .column("age", DataType::BigInt)
            .primary_key(["id"])
            .build()
            .unwrap()
    }

    fn key(schema: &Schema, idx: &[usize], row: &[Value]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        encode_key(schema, idx, row, &mut out).map(|()| out)
    }

    #[test]
    fn doc_examples() {
        assert_eq!(key(&schema(), &[0], &row![1, "Alice", 30i64]).unwrap(), [0x01]);
        assert_eq!(key(&schema(), &[1], &row![1, "ab", 30i64]).unwrap(), [0x02, 0x61, 0x62]);
        assert_eq!(key(&schema(), &[0], &row![128, None::<String>, None::<i64>]).unwrap(), [0x80, 0x01]);
        assert_eq!(key(&schema(), &[0], &row![200, "x", 1i64]).unwrap(), [0xc8, 0x01]);
    }

    #[test]
    fn multi_column_keys_concatenate_in_key_order_without_bitset() {
        let k = key(&schema(), &[2, 0], &row![1, "ab", 2i64]).unwrap();
        assert_eq!(k, [0x02, 0x01]);
        let k = key(&schema(), &[0, 1], &row![1, "ab", 2i64]).unwrap();
        assert_eq!(k, [0x01, 0x02, 0x61, 0x62]);
    }

    #[test]
    fn int_keys_bucket_like_java() {
        let s = schema();
        let b = |id: i32| bucket_for_key(&key(&s, &[0], &row![id, "x", 1i64]).unwrap(), 16);
        assert_eq!((b(1), b(128), b(200)), (12, 2, 6));
    }

    #[test]
    fn rejects_null_and_mistyped_keys() {
        let mut out = vec![7];
        let e = encode_key(&schema(), &[1], &row![1, None::<String>, 1i64], &mut out).unwrap_err();
        assert_eq!(e.code(), crate::ClientCode::InvalidRow as i32);
        assert!(e.message().contains("\"name\" is null"), "{e}");
        assert!(encode_key(&schema(), &[0, 1], &row![1, 2, 1i64], &mut out).is_err());
        assert!(encode_key(&schema(), &[5], &row![1, "x", 1i64], &mut out).is_err());
        assert!(encode_key(&schema(), &[0], &row![1], &mut out).is_err());
        assert!(encode_key(&schema(), &[], &row![1, "x", 1i64], &mut out).is_err());
        // The non-key NOT NULL rule does not apply to columns outside the key.
        encode_key(&schema(), &[0], &row![3, None::<String>, None::<i64>], &mut out).unwrap();
        assert_eq!(out, [7, 3]);
    }
}
