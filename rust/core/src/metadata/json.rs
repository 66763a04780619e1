//! Fluss's JSON forms of table descriptors and schemas (`table_json` in CreateTable and
//! GetTableInfo, `schema_json` in GetTableSchema). See docs/wire-format.md, "Table and schema JSON".

use std::collections::BTreeMap;

use serde_json::{json, Map, Value as Json};

use super::{AggFunction, Column, DataType, Nested, RowField, Schema, TableDescriptor};
use crate::error::{Error, Result};

/// A column type in Fluss's data-type JSON (`data_type_json` of AlterTable's added columns).
pub(crate) fn data_type_json(t: &DataType, nullable: bool) -> Vec<u8> {
    // The server numbers the fields of an added column itself (-1: unassigned, as Java writes it).
    serde_json::to_vec(&type_to_json(t, nullable, &mut None)).expect("JSON of plain values")
}

/// Parse Fluss's data-type JSON: the type and whether it is nullable.
pub(crate) fn data_type_from_json(bytes: &[u8]) -> Result<(DataType, bool)> {
    let v: Json = serde_json::from_slice(bytes).map_err(|e| Error::protocol(format!("data type JSON: {e}")))?;
    type_from_json(&v)
}

/// `ids`: the schema's field-id counter, which ROW fields draw from depth-first (each field its
/// id before its own type), as Fluss's schema builder numbers them; `None` writes -1.
fn type_to_json(t: &DataType, nullable: bool, ids: &mut Option<i64>) -> Json {
    let mut m = Map::new();
    let nested = |m: &mut Map<String, Json>, ids: &mut Option<i64>| match t {
        DataType::Array { element } => {
            m.insert("element_type".into(), type_to_json(&element.data_type, element.nullable, ids));
        }
        DataType::Map { key, value } => {
            m.insert("key_type".into(), type_to_json(key, false, ids));
            m.insert("value_type".into(), type_to_json(&value.data_type, value.nullable, ids));
        }
        DataType::Row { fields } => {
            let fields: Vec<Json> = fields
                .iter()
                .map(|f| {
                    let id = ids.as_mut().map_or(-1, |n| {
                        *n += 1;
                        *n
                    });
                    let mut o = Map::new();
                    o.insert("name".into(), json!(f.name));
                    o.insert("field_type".into(), type_to_json(&f.data_type, f.nullable, ids));
                    o.insert("field_id".into(), json!(id));
                    Json::Object(o)
                })
                .collect();
            m.insert("fields".into(), Json::Array(fields));
        }
        _ => {}
    };
    let (name, params): (&str, Vec<(&str, i64)>) = match *t {
        DataType::Array { .. } => ("ARRAY", vec![]),
        DataType::Map { .. } => ("MAP", vec![]),
        DataType::Row { .. } => ("ROW", vec![]),
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
    nested(&mut m, ids);
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
        "ARRAY" => {
            let (t, nullable) = type_from_json(v.get("element_type").ok_or_else(|| bad("no element_type"))?)?;
            DataType::Array { element: Box::new(Nested { data_type: t, nullable }) }
        }
        "MAP" => {
            let (key, _) = type_from_json(v.get("key_type").ok_or_else(|| bad("no key_type"))?)?;
            let (t, nullable) = type_from_json(v.get("value_type").ok_or_else(|| bad("no value_type"))?)?;
            DataType::Map { key: Box::new(key), value: Box::new(Nested { data_type: t, nullable }) }
        }
        "ROW" => {
            let fields = v.get("fields").and_then(Json::as_array).ok_or_else(|| bad("no fields"))?;
            let fields = fields
                .iter()
                .map(|f| {
                    let name = f.get("name").and_then(Json::as_str).ok_or_else(|| bad("a field without name"))?;
                    let (t, nullable) = type_from_json(f.get("field_type").ok_or_else(|| bad("a field without field_type"))?)?;
                    Ok(RowField { name: name.to_string(), data_type: t, nullable })
                })
                .collect::<Result<_>>()?;
            DataType::Row { fields }
        }
        other => {
            return Err(Error::client(
                crate::error::ClientCode::Unsupported,
                format!("column type {other} is not supported by fluss-writer"),
            ))
        }
    };
    Ok((t, nullable))
}

/// The server's check of a table's field ids (Fluss 0.9.1 `Schema.checkFieldIds`): column ids
/// (0..n-1 when the columns carry none) and the `field_id`s of every nested ROW field must all
/// differ, and `highest_field_id`, when given, must be at least the largest. The embedded engine
/// runs it on CreateTable, as the server does.
pub(crate) fn check_field_ids(table_json: &[u8]) -> Result<()> {
    fn nested(t: &Json, out: &mut Vec<i64>) {
        for k in ["element_type", "key_type", "value_type"] {
            if let Some(x) = t.get(k) {
                nested(x, out);
            }
        }
        for f in t.get("fields").and_then(Json::as_array).into_iter().flatten() {
            out.push(f.get("field_id").and_then(Json::as_i64).unwrap_or(-1));
            if let Some(x) = f.get("field_type") {
                nested(x, out);
            }
        }
    }
    // JSON that does not parse is refused by the descriptor's own parse, with its message.
    let Ok(v) = serde_json::from_slice::<Json>(table_json) else { return Ok(()) };
    let Some(schema) = v.get("schema") else { return Ok(()) };
    let columns = schema.get("columns").and_then(Json::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut ids = Vec::new();
    for (i, c) in columns.iter().enumerate() {
        ids.push(c.get("id").and_then(Json::as_i64).unwrap_or(i as i64));
        if let Some(t) = c.get("data_type") {
            nested(t, &mut ids);
        }
    }
    let unique: std::collections::HashSet<i64> = ids.iter().copied().collect();
    let invalid = |m: String| Error::server(crate::error::FlussCode::INVALID_TABLE, m);
    if unique.len() != ids.len() {
        return Err(invalid(format!(
            "All field IDs (including nested fields) must be unique. Found {} unique IDs but expected {}.",
            unique.len(),
            ids.len()
        )));
    }
    let max = ids.iter().copied().max().unwrap_or(-1);
    match schema.get("highest_field_id").and_then(Json::as_i64) {
        Some(h) if h < max => Err(invalid(format!(
            "Highest field ID ({h}) must be greater than or equal to the maximum field ID ({max}) including nested fields."
        ))),
        _ => Ok(()),
    }
}

/// The schema part (`schema` object / `schema_json`).
pub fn schema_to_json(s: &Schema) -> Json {
    // Ids as Fluss's schema builder gives them: each column the next, then the fields of the
    // ROWs in its type, depth-first.
    let mut ids = Some(-1i64);
    let columns: Vec<Json> = s
        .columns()
        .iter()
        .map(|c| {
            let id = ids.map_or(0, |n| n + 1);
            ids = Some(id);
            let mut m = Map::new();
            m.insert("name".into(), json!(c.name));
            m.insert("data_type".into(), type_to_json(&c.data_type, c.nullable, &mut ids));
            if let Some(cm) = &c.comment {
                m.insert("comment".into(), json!(cm));
            }
            if let Some(f) = &c.agg_function {
                // As Fluss's ColumnJsonSerde writes it: {"type": "sum", "parameters": {...}}.
                let mut a = Map::new();
                a.insert("type".into(), json!(f.name));
                if !f.params.is_empty() {
                    a.insert("parameters".into(), json!(f.params));
                }
                m.insert("agg_function".into(), Json::Object(a));
            }
            m.insert("id".into(), json!(id));
            Json::Object(m)
        })
        .collect();
    let mut m = Map::new();
    m.insert("version".into(), json!(1));
    m.insert("columns".into(), Json::Array(columns));
    if s.has_primary_key() {
        m.insert("primary_key".into(), json!(s.primary_key()));
    }
    m.insert("highest_field_id".into(), json!(ids.unwrap_or(-1)));
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
        if let Some(a) = c.get("agg_function").filter(|a| !a.is_null()) {
            let t =
                a.get("type").and_then(Json::as_str).ok_or_else(|| Error::protocol(format!("column {name}: agg_function without type")))?;
            // A function this library does not know (a newer server's) is kept as named.
            let mut f = AggFunction::new(t).unwrap_or_else(|_| AggFunction { name: t.to_string(), params: BTreeMap::new() });
            f.params = string_map(a.get("parameters"));
            col.agg_function = Some(f);
        }
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

    /// The schema JSON Fluss 0.9.1's own schema builder writes for these columns (probed with
    /// the 0.9.1 client jar; docs/nested-types.md, section 1.3): nested ROW fields numbered
    /// depth-first after their column, every id unique, `highest_field_id` the last one. The
    /// server refuses a ROW of two fields without ids.
    #[test]
    fn nested_types_get_the_ids_and_json_of_the_java_schema_builder() {
        let schema = Schema::builder()
            .column_not_null("id", DataType::Int)
            .column("r", DataType::parse("ROW<x INT, y ROW<z STRING>>").unwrap())
            .column("m", DataType::parse("MAP<STRING, INT>").unwrap())
            .column("l", DataType::parse("ARRAY<ROW<a INT, b STRING>>").unwrap())
            .primary_key(["id"])
            .build()
            .unwrap();
        let expected = r#"{"version":1,"columns":[
 {"name":"id","data_type":{"type":"INTEGER","nullable":false},"id":0},
 {"name":"r","data_type":{"type":"ROW","fields":[
    {"name":"x","field_type":{"type":"INTEGER"},"field_id":2},
    {"name":"y","field_type":{"type":"ROW","fields":[{"name":"z","field_type":{"type":"STRING"},"field_id":4}]},"field_id":3}]},"id":1},
 {"name":"m","data_type":{"type":"MAP","key_type":{"type":"STRING","nullable":false},"value_type":{"type":"INTEGER"}},"id":5},
 {"name":"l","data_type":{"type":"ARRAY","element_type":{"type":"ROW","fields":[
    {"name":"a","field_type":{"type":"INTEGER"},"field_id":7},{"name":"b","field_type":{"type":"STRING"},"field_id":8}]}},"id":6}],
 "primary_key":["id"],"highest_field_id":8}"#;
        let ours = schema_to_json(&schema);
        assert_eq!(ours, serde_json::from_str::<Json>(expected).unwrap());
        assert_eq!(schema_from_json(&ours).unwrap(), schema);
    }

    #[test]
    fn field_ids_are_checked_as_the_server_checks_them() {
        let d = TableDescriptor::new(Schema::builder().column("r", DataType::parse("ROW<a INT, b INT>").unwrap()).build().unwrap());
        let good = descriptor_to_json(&d);
        check_field_ids(&good).unwrap();
        let without: Json = serde_json::from_str(
            &String::from_utf8(good.clone())
                .unwrap()
                .replace(r#""field_id":1"#, r#""field_id":-1"#)
                .replace(r#""field_id":2"#, r#""field_id":-1"#),
        )
        .unwrap();
        let e = check_field_ids(&serde_json::to_vec(&without).unwrap()).unwrap_err();
        assert_eq!(e.message(), "All field IDs (including nested fields) must be unique. Found 2 unique IDs but expected 3.");
        let low = String::from_utf8(good).unwrap().replace(r#""highest_field_id":2"#, r#""highest_field_id":1"#);
        assert!(check_field_ids(low.as_bytes()).unwrap_err().message().starts_with("Highest field ID (1)"));
    }

    /// Single types as the 0.9.1 jar serializes them (docs/nested-types.md, section 1.1), and back.
    #[test]
    fn nested_type_json_matches_java() {
        for (name, nullable, java) in [
            ("ARRAY<INT>", true, r#"{"type":"ARRAY","element_type":{"type":"INTEGER"}}"#),
            ("ARRAY<INT NOT NULL>", false, r#"{"type":"ARRAY","nullable":false,"element_type":{"type":"INTEGER","nullable":false}}"#),
            ("MAP<STRING,INT>", true, r#"{"type":"MAP","key_type":{"type":"STRING","nullable":false},"value_type":{"type":"INTEGER"}}"#),
            ("ARRAY<CHAR(3)>", true, r#"{"type":"ARRAY","element_type":{"type":"CHAR","length":3}}"#),
            (
                "ROW<a INT, b STRING>",
                true,
                r#"{"type":"ROW","fields":[{"name":"a","field_type":{"type":"INTEGER"},"field_id":-1},{"name":"b","field_type":{"type":"STRING"},"field_id":-1}]}"#,
            ),
        ] {
            let t = DataType::parse(name).unwrap();
            let java: Json = serde_json::from_str(java).unwrap();
            assert_eq!(serde_json::from_slice::<Json>(&data_type_json(&t, nullable)).unwrap(), java, "{name}");
            assert_eq!(data_type_from_json(&serde_json::to_vec(&java).unwrap()).unwrap(), (t, nullable), "{name}");
        }
        // A nullable map key in the JSON is read as NOT NULL, as Fluss's MapType makes it.
        let (t, _) = data_type_from_json(br#"{"type":"MAP","key_type":{"type":"INTEGER"},"value_type":{"type":"INTEGER"}}"#).unwrap();
        assert_eq!(t.to_string(), "MAP<INT, INT>");
    }

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
                assert_eq!(type_from_json(&type_to_json(&t, nullable, &mut None)).unwrap(), (t.clone(), nullable));
            }
        }
    }

    /// Aggregation functions as Fluss's `ColumnJsonSerde` writes them (`agg_function`: `type`
    /// and, when there are any, `parameters`), and back.
    #[test]
    fn aggregation_functions_round_trip_in_the_schema_json() {
        let schema = Schema::new(
            vec![
                Column::new("id", DataType::BigInt),
                Column::new("total", DataType::BigInt).with_agg_function(AggFunction::new("Sum").unwrap()),
                Column::new("tags", DataType::String).with_agg_function(AggFunction::new("listagg").unwrap().with_param("delimiter", ";")),
                Column::new("seen", DataType::Bytes).with_agg_function(AggFunction::new("RBM64").unwrap()),
                Column::new("name", DataType::String),
            ],
            vec!["id".into()],
        )
        .unwrap();
        let expected = r#"{"version":1,"columns":[
 {"name":"id","data_type":{"type":"BIGINT","nullable":false},"id":0},
 {"name":"total","data_type":{"type":"BIGINT"},"agg_function":{"type":"sum"},"id":1},
 {"name":"tags","data_type":{"type":"STRING"},"agg_function":{"type":"listagg","parameters":{"delimiter":";"}},"id":2},
 {"name":"seen","data_type":{"type":"BYTES"},"agg_function":{"type":"rbm64"},"id":3},
 {"name":"name","data_type":{"type":"STRING"},"id":4}],
 "primary_key":["id"],"highest_field_id":4}"#;
        let ours = schema_to_json(&schema);
        assert_eq!(ours, serde_json::from_str::<Json>(expected).unwrap());
        assert_eq!(schema_from_json(&ours).unwrap(), schema);
        // A function a newer server knows and this library does not is kept as named.
        let newer = expected.replace(r#"{"type":"sum"}"#, r#"{"type":"hll_sketch"}"#);
        let parsed = schema_from_json(&serde_json::from_str::<Json>(&newer).unwrap()).unwrap();
        assert_eq!(parsed.columns()[1].agg_function.as_ref().map(|f| f.name.as_str()), Some("hll_sketch"));
    }

    #[test]
    fn aggregation_function_names_are_checked_and_key_columns_take_none() {
        assert_eq!(AggFunction::new(" LAST-VALUE-ignore_nulls ").unwrap().name, "last_value_ignore_nulls");
        let e = AggFunction::new("median").unwrap_err();
        assert!(e.message().contains("unknown aggregation function \"median\"") && e.message().contains("rbm32"), "{e}");
        let key = Column::new("id", DataType::BigInt).with_agg_function(AggFunction::new("max").unwrap());
        let e = Schema::new(vec![key, Column::new("v", DataType::Int)], vec!["id".into()]).unwrap_err();
        assert!(e.message().contains("primary key column \"id\" cannot have an aggregation function"), "{e}");
    }
}
