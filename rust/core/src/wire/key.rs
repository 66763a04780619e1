//! Key encoding (docs/wire-format.md, "Key encoding" and "Lake formats"): the bytes of a primary
//! key or a bucket key, and the bucket of a keyed row.
//!
//! Without a datalake format a key is the compacted encoding of its columns ("Compacted rows",
//! [`super::compacted`]), concatenated in key-column order with **no null bitset**, and the
//! bucket is Fluss's hash of those bytes ([`super::bucketing`]). A table with
//! `table.datalake.format` keys some columns the lake's way ([`super::lake`]); [`KeyCodec`]
//! holds which, per table, as Fluss 0.9.1's Java client decides it. Key columns may not be null.

use super::compacted::encode_value;
use super::lake::{self, LakeFormat};
use crate::error::{ClientCode, Error, Result};
use crate::metadata::{Schema, TableInfo};
use crate::row::{check_value, Value};

/// The table property with the primary-key format version the server gave the table (2 for
/// tables created by 0.9 servers; absent = 1, a table from before the property existed).
pub const KV_FORMAT_VERSION_PROPERTY: &str = "table.kv.format-version";

/// Append the compacted key of `row` (a full row of `schema`) made of the columns at
/// `key_indexes`, in that order. Only the key columns are checked; a null key value, a value of
/// the wrong type, a short row or an index outside the schema is [`Error::invalid_row`], and on
/// error nothing is left appended.
pub fn encode_key(schema: &Schema, key_indexes: &[usize], row: &[Value], out: &mut Vec<u8>) -> Result<()> {
    check_key(schema, key_indexes, row)?;
    for &i in key_indexes {
        encode_value(&schema.columns()[i].data_type, &row[i], out);
    }
    Ok(())
}

/// Check the key columns of `row`: present, not null, of their column's type.
fn check_key(schema: &Schema, key_indexes: &[usize], row: &[Value]) -> Result<()> {
    if row.len() != schema.len() {
        return Err(Error::invalid_row(format!("the row has {} fields but the table has {} columns", row.len(), schema.len())));
    }
    if key_indexes.is_empty() {
        return Err(Error::invalid_row("a key needs at least one column"));
    }
    for &i in key_indexes {
        match schema.columns().get(i) {
            None => return Err(Error::invalid_row(format!("key column index {i} is outside the schema ({} columns)", schema.len()))),
            Some(col) if row[i].is_null() => return Err(Error::invalid_row(format!("key column {:?} is null", col.name))),
            Some(col) => check_value(col, &row[i])?,
        }
    }
    Ok(())
}

/// One way of turning key columns into bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Compacted,
    Paimon,
    Iceberg,
    Hudi,
}

impl Encoding {
    fn encode(self, schema: &Schema, key_indexes: &[usize], row: &[Value], out: &mut Vec<u8>) -> Result<()> {
        match self {
            Encoding::Compacted => encode_key(schema, key_indexes, row, out),
            Encoding::Paimon => {
                check_key(schema, key_indexes, row)?;
                let fields: Vec<_> = key_indexes.iter().map(|&i| (&schema.columns()[i].data_type, &row[i])).collect();
                lake::encode_paimon(&fields, out);
                Ok(())
            }
            Encoding::Iceberg => {
                check_key(schema, key_indexes, row)?;
                let i = key_indexes[0];
                let start = out.len();
                lake::encode_iceberg(&schema.columns()[i].data_type, &row[i], out);
                if out.len() == start {
                    return Err(Error::invalid_row(format!(
                        "key column {:?} is empty, and an iceberg-format table cannot bucket an empty key",
                        schema.columns()[i].name
                    )));
                }
                Ok(())
            }
            Encoding::Hudi => {
                check_key(schema, key_indexes, row)?;
                let fields: Vec<_> = key_indexes
                    .iter()
                    .map(|&i| (schema.columns()[i].name.as_str(), &schema.columns()[i].data_type, &row[i]))
                    .collect();
                lake::encode_hudi(&fields, out)
            }
        }
    }
}

/// How one table's keys become bytes and buckets: Fluss 0.9.1's `KeyEncoder.ofPrimaryKeyEncoder`,
/// `KeyEncoder.ofBucketKeyEncoder` and `BucketingFunction.of`, decided once per table.
///
/// * The bucket key is encoded in the lake format's way (compacted without a lake, or for
///   lance) and bucketed by the format's function.
/// * A hudi table (Fluss 1.0) buckets by Hudi's key and keeps a compacted primary key.
/// * The primary key (the physical one: partition columns left out) uses the lake's encoding
///   when the table's kv format version is 1, or when the bucket key is the primary key (then
///   the key bytes are also the bucket bytes); otherwise (version 2 with a bucket key that is a
///   part of the primary key) it is compacted, so that prefix lookups work.
#[derive(Debug, Clone)]
pub struct KeyCodec {
    lake: Option<LakeFormat>,
    pk: Vec<usize>,
    bucket_key: Vec<usize>,
    pk_encoding: Encoding,
    bucket_encoding: Encoding,
    bucket_count: i32,
}

impl KeyCodec {
    /// The codec of a table. A lake format this writer does not know is `UNSUPPORTED`; an
    /// iceberg-format table whose lake-encoded key has more than one column, or a column type
    /// Iceberg cannot key by, is `INVALID_TABLE` (the Java client refuses to write it too); an
    /// unknown kv format version is `UNSUPPORTED`.
    pub fn new(info: &TableInfo) -> Result<KeyCodec> {
        let props = &info.descriptor.properties;
        let lake = LakeFormat::from_property(props.get(lake::FORMAT_PROPERTY).map(String::as_str))?;
        let lake_encoding = match lake {
            Some(LakeFormat::Paimon) => Encoding::Paimon,
            Some(LakeFormat::Iceberg) => Encoding::Iceberg,
            Some(LakeFormat::Hudi) => Encoding::Hudi,
            Some(LakeFormat::Lance) | None => Encoding::Compacted,
        };
        let pk = info.physical_key_indexes();
        let bucket_key = info.bucket_key_indexes();
        let pk_encoding = if pk.is_empty() {
            Encoding::Compacted
        } else {
            let version = match props.get(KV_FORMAT_VERSION_PROPERTY) {
                None => 1,
                Some(v) => v.trim().parse::<i32>().map_err(|_| {
                    Error::client(ClientCode::InvalidTable, format!("{KV_FORMAT_VERSION_PROPERTY} = {v:?} is not a number"))
                })?,
            };
            match version {
                // Fluss 1.0: a hudi table's primary key is compacted whatever its version.
                1 | 2 if lake == Some(LakeFormat::Hudi) => Encoding::Compacted,
                1 => lake_encoding,
                2 if bucket_key == pk => lake_encoding,
                2 => Encoding::Compacted,
                v => {
                    return Err(Error::client(
                        ClientCode::Unsupported,
                        format!("{KV_FORMAT_VERSION_PROPERTY} = {v}: this writer knows versions 1 and 2"),
                    ))
                }
            }
        };
        let schema = info.schema();
        for (encoding, columns, what) in [(pk_encoding, &pk, "primary key"), (lake_encoding, &bucket_key, "bucket key")] {
            if encoding != Encoding::Iceberg || columns.is_empty() {
                continue;
            }
            if columns.len() != 1 {
                return Err(Error::client(
                    ClientCode::InvalidTable,
                    format!("an iceberg-format table keys by exactly one column, but its {what} has {}", columns.len()),
                ));
            }
            let col = &schema.columns()[columns[0]];
            lake::check_iceberg_key_type(&col.name, &col.data_type)?;
        }
        if lake_encoding == Encoding::Hudi {
            for &i in &bucket_key {
                let col = &schema.columns()[i];
                lake::check_hudi_key_type(&col.name, &col.data_type)?;
            }
        }
        Ok(KeyCodec { lake, pk, bucket_key, pk_encoding, bucket_encoding: lake_encoding, bucket_count: info.bucket_count() })
    }

    /// The table's lake format, if it has one.
    pub fn lake(&self) -> Option<LakeFormat> {
        self.lake
    }

    /// Whether the bucket key is the (physical) primary key: then its bytes are the key bytes.
    pub fn bucket_is_pk(&self) -> bool {
        !self.pk.is_empty() && self.bucket_key == self.pk && self.pk_encoding == self.bucket_encoding
    }

    /// Whether the primary key is compacted (decodable with the key columns' schema).
    pub fn pk_is_compacted(&self) -> bool {
        self.pk_encoding == Encoding::Compacted
    }

    /// The (physical) primary-key columns.
    pub fn pk(&self) -> &[usize] {
        &self.pk
    }

    /// The bucket-key columns (empty: a log table without bucket key).
    pub fn bucket_key(&self) -> &[usize] {
        &self.bucket_key
    }

    /// Append the primary-key bytes of `row` (a full row of `schema`); nothing on error.
    pub fn encode_pk(&self, schema: &Schema, row: &[Value], out: &mut Vec<u8>) -> Result<()> {
        let start = out.len();
        self.pk_encoding.encode(schema, &self.pk, row, out).inspect_err(|_| out.truncate(start))
    }

    /// Append the bucket-key bytes of `row`; nothing on error.
    pub fn encode_bucket_key(&self, schema: &Schema, row: &[Value], out: &mut Vec<u8>) -> Result<()> {
        let start = out.len();
        self.bucket_encoding.encode(schema, &self.bucket_key, row, out).inspect_err(|_| out.truncate(start))
    }

    /// The bucket of bucket-key bytes.
    pub fn bucket_of(&self, bucket_bytes: &[u8]) -> i32 {
        match self.lake {
            Some(LakeFormat::Paimon) => lake::paimon_bucket(bucket_bytes, self.bucket_count),
            Some(LakeFormat::Iceberg) => lake::iceberg_bucket(bucket_bytes, self.bucket_count),
            Some(LakeFormat::Hudi) => lake::hudi_bucket(bucket_bytes, self.bucket_count),
            Some(LakeFormat::Lance) | None => super::bucketing::bucket_for_key(bucket_bytes, self.bucket_count),
        }
    }

    /// The bucket of a row of a primary-key table whose key bytes are `pk_bytes`
    /// (`scratch` holds the bucket key when it is not the primary key).
    pub fn kv_bucket(&self, schema: &Schema, row: &[Value], pk_bytes: &[u8], scratch: &mut Vec<u8>) -> Result<i32> {
        if self.bucket_is_pk() {
            return Ok(self.bucket_of(pk_bytes));
        }
        self.row_bucket(schema, row, scratch)
    }

    /// The bucket of a row by its bucket key (the table has one), encoded into `scratch`.
    pub fn row_bucket(&self, schema: &Schema, row: &[Value], scratch: &mut Vec<u8>) -> Result<i32> {
        scratch.clear();
        self.encode_bucket_key(schema, row, scratch)?;
        Ok(self.bucket_of(scratch))
    }
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
