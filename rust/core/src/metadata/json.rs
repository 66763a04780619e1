//! Fluss's JSON forms of table descriptors and schemas (`table_json` in CreateTable and
//! GetTableInfo, `schema_json` in GetTableSchema). See fluss-protocol.md section 2.5.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value as Json};

use super::{Column, DataType, Schema, TableDescriptor};
use crate::error::{Error, Result};

/// A column type in Fluss's data-type JSON (`data_type_json` of AlterTable's added columns).
pub(crate) fn data_type_json(t: DataType, nullable: bool) -> Vec<u8> {
    serde_json::to_vec(&type_to_json(t, nullable)).expect("JSON of plain values")
}

/// Parse Fluss's data-type JSON: the type and whether it is nullable.
pub(crate) fn data_type_from_json(bytes: &[u8]) -> Result<(DataType, bool)> {
    let v: Json = serde_json::from_slice(bytes).map_err(|e| Error::protocol(format!("data type JSON: {e}")))?;
    type_from_json(&v)
}

fn type_to_json(t: DataType, nullable: bool) -> Json {
    let mut m = Map::new();
    let (name, params): (&str, Vec<(&str, i64)>) = match t {
        DataType::Char { length } => ("CHAR", vec![("length", length as i64)]),
        DataType::Binary { length } => ("BINARY", vec![("length", length as i64)]),
        DataType::Boolean => ("BOOLEAN", vec![]),
        DataType::TinyInt => ("TINYINT", vec![]),
        DataType::SmallInt => ("SMALLINT", vec![]),
        DataType::Int => ("INTEGER", vec![]),
        DataType::BigInt => ("BIGINT", vec![]),
        DataType::Float => ("FLOAT", vec![]),
        DataType::Double => ("DOUBLE", vec![]),
        DataType::String => ("STRING", vec![]),
        DataType::Bytes => ("BYTES", vec![]),
        DataType::Decimal { precision, scale } => ("DECIMAL", vec![("precision", precision as i64), ("scale", scale as i64)]),
        DataType::Date => ("DATE", vec![]),
        DataType::Time { precision } => ("TIME_WITHOUT_TIME_ZONE", vec![("precision", precision as i64)]),
        DataType::Timestamp { precision } => ("TIMESTAMP_WITHOUT_TIME_ZONE", vec![("precision", precision as i64)]),
        DataType::TimestampLtz { precision } => ("TIMESTAMP_WITH_LOCAL_TIME_ZONE", vec![("precision", precision as i64)]),
    };
    m.insert("type".into(), json!(name));
    if !nullable {
        m.insert("nullable".into(), json!(false));
    }
    for (k, v) in params {
        m.insert(k.into(), json!(v));
    }
    Json::Object(m)
}

fn type_from_json(v: &Json) -> Result<(DataType, bool)> {
    let bad = |m: &str| Error::protocol(format!("data type JSON {v}: {m}"));
    let name = v.get("type").and_then(Json::as_str).ok_or_else(|| bad("no type"))?;
    let nullable = v.get("nullable").and_then(Json::as_bool).unwrap_or(true);
    let int = |k: &str| v.get(k).and_then(Json::as_u64).map(|x| x as u8);
    let t = match name {
        "BOOLEAN" => DataType::Boolean,
        "TINYINT" => DataType::TinyInt,
        "SMALLINT" => DataType::SmallInt,
        "INTEGER" | "INT" => DataType::Int,
        "BIGINT" => DataType::BigInt,
        "FLOAT" => DataType::Float,
        "DOUBLE" => DataType::Double,
        "STRING" => DataType::String,
        "BYTES" => DataType::Bytes,
        "CHAR" | "BINARY" => {
            let length = v.get("length").and_then(Json::as_u64).and_then(|n| u32::try_from(n).ok()).ok_or_else(|| bad("no length"))?;
            if name == "CHAR" {
                DataType::Char { length }
            } else {
                DataType::Binary { length }
            }
        }
        "DECIMAL" => {
            DataType::Decimal { precision: int("precision").ok_or_else(|| bad("no precision"))?, scale: int("scale").unwrap_or(0) }
        }
        "DATE" => DataType::Date,
        "TIME_WITHOUT_TIME_ZONE" => DataType::Time { precision: int("precision").unwrap_or(0) },
        "TIMESTAMP_WITHOUT_TIME_ZONE" => DataType::Timestamp { precision: int("precision").unwrap_or(6) },
        "TIMESTAMP_WITH_LOCAL_TIME_ZONE" => DataType::TimestampLtz { precision: int("precision").unwrap_or(6) },
        other => {
            return Err(Error::client(
                crate::error::ClientCode::Unsupported,
                format!("column type {other} is not supported by fluss-writer"),
            ))
        }
    };
    Ok((t, nullable))
}

/// The schema part (`schema` object / `schema_json`).
pub fn schema_to_json(s: &Schema) -> Json {
    let columns: Vec<Json> = s
        .columns()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut m = Map::new();
            m.insert("name".into(), json!(c.name));
            m.insert("data_type".into(), type_to_json(c.data_type, c.nullable));
            if let Some(cm) = &c.comment {
                m.insert("comment".into(), json!(cm));
            }
            m.insert("id".into(), json!(i));
            Json::Object(m)
        })
        .collect();
    let mut m = Map::new();
    m.insert("version".into(), json!(1));
    m.insert("columns".into(), Json::Array(columns));
    if s.has_primary_key() {
        m.insert("primary_key".into(), json!(s.primary_key()));
    }
    m.insert("highest_field_id".into(), json!(s.len() as i64 - 1));
    Json::Object(m)
}

/// Parse a schema object.
pub fn schema_from_json(v: &Json) -> Result<Schema> {
    let cols = v.get("columns").and_then(Json::as_array).ok_or_else(|| Error::protocol("schema JSON has no columns"))?;
    let mut columns = Vec::with_capacity(cols.len());
    for c in cols {
        let name = c.get("name").and_then(Json::as_str).ok_or_else(|| Error::protocol("column without name"))?;
        let (t, nullable) = type_from_json(c.get("data_type").ok_or_else(|| Error::protocol("column without data_type"))?)?;
        let mut col = Column::new(name, t);
        col.nullable = nullable;
        col.comment = c.get("comment").and_then(Json::as_str).map(str::to_string);
        columns.push(col);
    }
    let pk = strings(v.get("primary_key"));
    Schema::new(columns, pk)
}

fn strings(v: Option<&Json>) -> Vec<String> {
    v.and_then(Json::as_array).map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

fn string_map(v: Option<&Json>) -> BTreeMap<String, String> {
    v.and_then(Json::as_object)
        .map(|o| o.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string()))).collect())
        .unwrap_or_default()
}

/// A descriptor as `table_json` bytes. Always writes `partition_key`, `bucket_key`, `properties`
/// and `custom_properties` (possibly empty): the 0.9.1 parser dereferences them.
pub fn descriptor_to_json(d: &TableDescriptor) -> Vec<u8> {
    let mut m = Map::new();
    m.insert("version".into(), json!(1));
    m.insert("schema".into(), schema_to_json(&d.schema));
    if let Some(c) = &d.comment {
        m.insert("comment".into(), json!(c));
    }
    m.insert("partition_key".into(), json!(d.partition_keys));
    m.insert("bucket_key".into(), json!(d.bucket_key));
    if let Some(n) = d.bucket_count {
        m.insert("bucket_count".into(), json!(n));
    }
    m.insert("properties".into(), json!(d.properties));
    m.insert("custom_properties".into(), json!(d.custom_properties));
    serde_json::to_vec(&Json::Object(m)).expect("JSON of plain values")
}

/// Parse `table_json` bytes.
pub fn descriptor_from_json(bytes: &[u8]) -> Result<TableDescriptor> {
    let v: Json = serde_json::from_slice(bytes).map_err(|e| Error::protocol(format!("table JSON: {e}")))?;
    let schema = schema_from_json(v.get("schema").ok_or_else(|| Error::protocol("table JSON has no schema"))?)?;
    Ok(TableDescriptor {
        schema,
        bucket_count: v.get("bucket_count").and_then(Json::as_i64).map(|n| n as i32),
        bucket_key: strings(v.get("bucket_key")),
        partition_keys: strings(v.get("partition_key")),
        properties: string_map(v.get("properties")),
        custom_properties: string_map(v.get("custom_properties")),
        comment: v.get("comment").and_then(Json::as_str).map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_documented_example_and_round_trips() {
        let schema = Schema::builder()
            .column_not_null("id", DataType::Int)
            .column("name", DataType::String)
            .column("ts", DataType::Timestamp { precision: 3 })
            .primary_key(["id"])
            .build()
            .unwrap();
        let d = TableDescriptor::new(schema).with_bucket_count(4).with_bucket_key(["id"]);
        let bytes = descriptor_to_json(&d);
        let expected = r#"{"version":1,"schema":{"version":1,"columns":[{"name":"id","data_type":{"type":"INTEGER","nullable":false},"id":0},{"name":"name","data_type":{"type":"STRING"},"id":1},{"name":"ts","data_type":{"type":"TIMESTAMP_WITHOUT_TIME_ZONE","precision":3},"id":2}],"primary_key":["id"],"highest_field_id":2},"partition_key":[],"bucket_key":["id"],"bucket_count":4,"properties":{},"custom_properties":{}}"#;
        let a: Json = serde_json::from_slice(&bytes).unwrap();
        let b: Json = serde_json::from_str(expected).unwrap();
        assert_eq!(a, b);
        assert_eq!(descriptor_from_json(&bytes).unwrap(), d);
    }

    #[test]
    fn every_type_round_trips() {
        let types = [
            DataType::Boolean,
            DataType::TinyInt,
            DataType::SmallInt,
            DataType::Int,
            DataType::BigInt,
            DataType::Float,
            DataType::Double,
            DataType::String,
            DataType::Bytes,
            DataType::Decimal { precision: 20, scale: 4 },
            DataType::Date,
            DataType::Time { precision: 3 },
            DataType::Timestamp { precision: 9 },
            DataType::TimestampLtz { precision: 0 },
        ];
        for t in types {
            for nullable in [true, false] {
                assert_eq!(type_from_json(&type_to_json(t, nullable)).unwrap(), (t, nullable));
            }
        }
    }
}
