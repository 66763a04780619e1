//! Fluss tables as Arrow data (docs/wire-format.md, "Arrow type mapping").
//!
//! | Fluss | Arrow |
//! |---|---|
//! | BOOLEAN | Boolean |
//! | TINYINT / SMALLINT / INT / BIGINT | Int8 / Int16 / Int32 / Int64 |
//! | FLOAT / DOUBLE | Float32 / Float64 |
//! | STRING | Utf8 |
//! | BYTES | Binary |
//! | DECIMAL(p, s) | Decimal128(p, s) |
//! | DATE | Date32 |
//! | TIME(p) | Time32(s) p=0; Time32(ms) p 1-3; Time64(µs) p 4-6; Time64(ns) p 7-9 |
//! | TIMESTAMP(p), TIMESTAMP_LTZ(p) | Timestamp(unit, no time zone), unit by p as for TIME |
//!
//! The log batches sent to the server carry no schema: readers rebuild it from the table schema,
//! so every batch written must have exactly these physical types, in column order.
//!
//! * [`arrow_schema`]: the Arrow schema of a table.
//! * [`RowsToArrow`]: rows ([`Value`]s) into column builders, then a `RecordBatch`.
//! * [`conform_record_batch`]: check a user's batch against the table and perform the lossless
//!   conversions (string/binary variants, dictionaries, integer and float widening, decimal
//!   widths, timestamp units and zones, Date64, time units); anything lossy is rejected.
//! * [`arrow_value`] / [`record_batch_to_rows`]: back from Arrow to [`Value`]s.
//!
//! Values finer than the column's precision (nanoseconds in a TIMESTAMP(3), milliseconds in a
//! TIME(0)) are truncated by [`RowsToArrow`], as Java's Arrow writer does.

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, FixedSizeBinaryBuilder, Float32Builder, Float64Builder, Int16Builder, Int32Builder,
    Int64Builder, Int8Builder, StringBuilder, Time32MillisecondBuilder, Time32SecondBuilder, Time64MicrosecondBuilder,
    Time64NanosecondBuilder, TimestampMicrosecondBuilder, TimestampMillisecondBuilder, TimestampNanosecondBuilder, TimestampSecondBuilder,
};
use arrow_array::types::{
    Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{
    cast::AsArray, make_array, Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray, Float32Array, Float64Array,
    Int16Array, Int32Array, Int64Array, Int8Array, RecordBatch, StringArray,
};
use arrow_array::{ListArray, MapArray, StructArray};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType as ArrowType, Field, FieldRef, Fields, Schema as ArrowSchema, SchemaRef, TimeUnit};

use crate::error::{Error, Result};
use crate::metadata::{DataType, Nested, RowField, Schema};
use crate::row::{check_row, Decimal, Row, Timestamp, Value};

/// Arrow time unit of a TIME or TIMESTAMP precision.
pub fn time_unit(precision: u8) -> TimeUnit {
    match precision {
        0 => TimeUnit::Second,
        1..=3 => TimeUnit::Millisecond,
        4..=6 => TimeUnit::Microsecond,
        _ => TimeUnit::Nanosecond,
    }
}

fn per_second(u: TimeUnit) -> i64 {
    match u {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// The Fluss type of an Arrow type (see [`DataType::from_arrow`]): the inverse of
/// [`arrow_type`] on the types it produces, plus the Arrow types that [`conform_record_batch`]
/// converts losslessly into one of them, so a table created from an Arrow schema accepts batches
/// of that schema.
///
/// * Boolean, Int8..Int64, Float32/Float64, Decimal*(p, s) (`p` ≤ 38, 0 ≤ `s` ≤ `p`), Date32,
///   Time32/Time64, Timestamp: as in the module table; a timestamp with a time zone is
///   TIMESTAMP_LTZ, the precision is the unit's (0, 3, 6, 9); UInt8/UInt16/UInt32 widen to
///   SMALLINT/INT/BIGINT, Float16 to FLOAT, Date64 is DATE.
/// * Utf8, LargeUtf8, Utf8View: STRING. Binary, LargeBinary, BinaryView: BYTES.
///   FixedSizeBinary(n): BINARY(n).
/// * List, LargeList, FixedSizeList: ARRAY of the item field's type, NOT NULL where the item
///   field is not nullable. Map: MAP of the key and value fields' types (the key is always NOT
///   NULL, as Fluss makes it; the value NOT NULL where its field is not nullable). Struct: ROW of
///   the fields' names and types, each NOT NULL where its field is not nullable. To any depth.
/// * A dictionary maps as its value type.
///
/// Anything else (UInt64, Float of other widths, Null, Duration, Interval, unions, list views,
/// run-end encoded, a decimal out of range, an empty struct, duplicate field names) is
/// `INVALID_TABLE` naming the column, the place inside it and the Arrow type.
pub fn fluss_type(column: &str, t: &ArrowType) -> Result<DataType> {
    to_fluss(t, 0).map_err(|(place, why)| {
        Error::client(crate::error::ClientCode::InvalidTable, format!("column {column:?}{place}: Arrow type {why}"))
    })
}

/// How deep an Arrow type may nest before [`fluss_type`] refuses it (a real schema never comes
/// close; the bound keeps the recursion short).
const MAX_ARROW_DEPTH: usize = 64;

/// [`fluss_type`] below the column: `Err((place, reason))`, `place` as in row errors
/// (`[]` an element, ` key` / ` value` a map's, `.name` a field).
fn to_fluss(t: &ArrowType, depth: usize) -> std::result::Result<DataType, (String, String)> {
    use ArrowType as A;
    let none = || Err((String::new(), format!("{t} has no Fluss equivalent")));
    let unit_precision = |u: &TimeUnit| match u {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
    };
    if depth > MAX_ARROW_DEPTH {
        return Err((String::new(), format!("{t} nests deeper than {MAX_ARROW_DEPTH} levels")));
    }
    let child = |f: &Field, step: String| to_fluss(f.data_type(), depth + 1).map_err(|(place, why)| (format!("{step}{place}"), why));
    Ok(match t {
        A::Boolean => DataType::Boolean,
        A::Int8 => DataType::TinyInt,
        A::Int16 | A::UInt8 => DataType::SmallInt,
        A::Int32 | A::UInt16 => DataType::Int,
        A::Int64 | A::UInt32 => DataType::BigInt,
        A::Float16 | A::Float32 => DataType::Float,
        A::Float64 => DataType::Double,
        A::Utf8 | A::LargeUtf8 | A::Utf8View => DataType::String,
        A::Binary | A::LargeBinary | A::BinaryView => DataType::Bytes,
        A::FixedSizeBinary(n) => match u32::try_from(*n) {
            Ok(length) if length >= 1 => DataType::Binary { length },
            _ => return Err((String::new(), format!("{t} has no Fluss equivalent (BINARY(n) needs n >= 1)"))),
        },
        A::Decimal32(p, s) | A::Decimal64(p, s) | A::Decimal128(p, s) | A::Decimal256(p, s) => {
            match u8::try_from(*s).ok().and_then(|s| DataType::decimal(*p, s).ok()) {
                Some(d) => d,
                None => return Err((String::new(), format!("{t} has no Fluss equivalent (DECIMAL(p, s) needs 1 <= p <= 38, 0 <= s <= p)"))),
            }
        }
        A::Date32 | A::Date64 => DataType::Date,
        A::Time32(u) | A::Time64(u) => DataType::Time { precision: unit_precision(u) },
        A::Timestamp(u, None) => DataType::Timestamp { precision: unit_precision(u) },
        A::Timestamp(u, Some(_)) => DataType::TimestampLtz { precision: unit_precision(u) },
        A::Dictionary(_, v) => return to_fluss(v, depth + 1),
        A::List(f) | A::LargeList(f) | A::FixedSizeList(f, _) => {
            DataType::Array { element: Box::new(Nested { data_type: child(f, "[]".into())?, nullable: f.is_nullable() }) }
        }
        A::Map(entries, _) => {
            let kv = match entries.data_type() {
                A::Struct(kv) if kv.len() == 2 => kv,
                _ => return Err((String::new(), format!("{t} has no Fluss equivalent (map entries are not a key-value struct)"))),
            };
            // Fluss map keys are NOT NULL whatever the key field says (MapType does the same).
            DataType::Map {
                key: Box::new(child(&kv[0], " key".into())?),
                value: Box::new(Nested { data_type: child(&kv[1], " value".into())?, nullable: kv[1].is_nullable() }),
            }
        }
        A::Struct(fields) => {
            let mut out = Vec::with_capacity(fields.len());
            for f in fields {
                out.push(RowField { name: f.name().clone(), data_type: child(f, format!(".{}", f.name()))?, nullable: f.is_nullable() });
            }
            let row = DataType::Row { fields: out };
            // Field names: not blank, unique, at least one field (the core's ROW rule).
            if let Err(e) = row.validate() {
                return Err((String::new(), format!("{t} has no Fluss equivalent ({})", e.message())));
            }
            row
        }
        _ => return none(),
    })
}

/// One record batch from the batches of an Arrow stream: the single batch itself, or their
/// concatenation. No batches at all is a batch of zero rows, which every write then refuses
/// like any empty input. Every binding reads Arrow streams through this one rule.
pub fn concat_batches(schema: &SchemaRef, batches: Vec<RecordBatch>) -> Result<RecordBatch> {
    if batches.len() == 1 {
        return Ok(batches.into_iter().next().expect("one batch"));
    }
    arrow_select::concat::concat_batches(schema, &batches).map_err(|e| Error::invalid_row(format!("concatenating the Arrow input: {e}")))
}

/// The Arrow physical type of a Fluss type (module table).
pub fn arrow_type(t: &DataType) -> ArrowType {
    match *t {
        DataType::Boolean => ArrowType::Boolean,
        DataType::TinyInt => ArrowType::Int8,
        DataType::SmallInt => ArrowType::Int16,
        DataType::Int => ArrowType::Int32,
        DataType::BigInt => ArrowType::Int64,
        DataType::Float => ArrowType::Float32,
        DataType::Double => ArrowType::Float64,
        DataType::String | DataType::Char { .. } => ArrowType::Utf8,
        DataType::Bytes => ArrowType::Binary,
        DataType::Binary { length } => ArrowType::FixedSizeBinary(length as i32),
        DataType::Decimal { precision, scale } => ArrowType::Decimal128(precision, scale as i8),
        DataType::Date => ArrowType::Date32,
        DataType::Time { precision } => match time_unit(precision) {
            u @ (TimeUnit::Second | TimeUnit::Millisecond) => ArrowType::Time32(u),
            u => ArrowType::Time64(u),
        },
        DataType::Timestamp { precision } | DataType::TimestampLtz { precision } => ArrowType::Timestamp(time_unit(precision), None),
        // As Fluss 0.9.1's ArrowUtils names them (docs/nested-types.md, section 5).
        DataType::Array { ref element } => {
            ArrowType::List(Arc::new(Field::new("element", arrow_type(&element.data_type), element.nullable)))
        }
        DataType::Map { ref key, ref value } => {
            let entries = vec![Field::new("key", arrow_type(key), false), Field::new("value", arrow_type(&value.data_type), value.nullable)];
            ArrowType::Map(Arc::new(Field::new("entries", ArrowType::Struct(entries.into()), false)), false)
        }
        DataType::Row { ref fields } => {
            ArrowType::Struct(fields.iter().map(|f| Field::new(f.name.clone(), arrow_type(&f.data_type), f.nullable)).collect())
        }
    }
}

/// The Arrow schema of a table: one field per column, same names, nullability and the mapped
/// physical types.
pub fn arrow_schema(schema: &Schema) -> SchemaRef {
    Arc::new(ArrowSchema::new(
        schema.columns().iter().map(|c| Field::new(c.name.clone(), arrow_type(&c.data_type), c.nullable)).collect::<Vec<_>>(),
    ))
}

// ===== rows -> Arrow =====

enum ColumnBuilder {
    Boolean(BooleanBuilder),
    Int8(Int8Builder),
    Int16(Int16Builder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Utf8(StringBuilder),
    Binary(BinaryBuilder),
    FixedBinary(FixedSizeBinaryBuilder),
    Decimal(Decimal128Builder),
    Date32(Date32Builder),
    TimeS(Time32SecondBuilder),
    TimeMs(Time32MillisecondBuilder),
    TimeUs(Time64MicrosecondBuilder),
    TimeNs(Time64NanosecondBuilder),
    TsS(TimestampSecondBuilder),
    TsMs(TimestampMillisecondBuilder),
    TsUs(TimestampMicrosecondBuilder),
    TsNs(TimestampNanosecondBuilder),
    /// An ARRAY: the element builder, the element type, offsets and validity.
    List { field: FieldRef, element: Box<ColumnBuilder>, element_type: DataType, offsets: Vec<i32>, nulls: NullBufferBuilder },
    /// A MAP: key and value builders, their types, offsets and validity.
    Map { entries: FieldRef, keys: Box<ColumnBuilder>, values: Box<ColumnBuilder>, types: Box<(DataType, DataType)>, offsets: Vec<i32>, nulls: NullBufferBuilder },
    /// A ROW: one builder per field, the field types, and validity.
    Struct { fields: Fields, children: Vec<ColumnBuilder>, types: Vec<DataType>, nulls: NullBufferBuilder },
}

impl ColumnBuilder {
    fn new(t: &DataType) -> ColumnBuilder {
        use ColumnBuilder as B;
        match *t {
            DataType::Boolean => B::Boolean(BooleanBuilder::new()),
            DataType::TinyInt => B::Int8(Int8Builder::new()),
            DataType::SmallInt => B::Int16(Int16Builder::new()),
            DataType::Int => B::Int32(Int32Builder::new()),
            DataType::BigInt => B::Int64(Int64Builder::new()),
            DataType::Float => B::Float32(Float32Builder::new()),
            DataType::Double => B::Float64(Float64Builder::new()),
            DataType::String | DataType::Char { .. } => B::Utf8(StringBuilder::new()),
            DataType::Bytes => B::Binary(BinaryBuilder::new()),
            DataType::Binary { length } => B::FixedBinary(FixedSizeBinaryBuilder::new(length as i32)),
            DataType::Decimal { precision, scale } => B::Decimal(
                Decimal128Builder::new().with_precision_and_scale(precision, scale as i8).expect("validated DECIMAL precision and scale"),
            ),
            DataType::Date => B::Date32(Date32Builder::new()),
            DataType::Time { precision } => match time_unit(precision) {
                TimeUnit::Second => B::TimeS(Time32SecondBuilder::new()),
                TimeUnit::Millisecond => B::TimeMs(Time32MillisecondBuilder::new()),
                TimeUnit::Microsecond => B::TimeUs(Time64MicrosecondBuilder::new()),
                TimeUnit::Nanosecond => B::TimeNs(Time64NanosecondBuilder::new()),
            },
            DataType::Timestamp { precision } | DataType::TimestampLtz { precision } => match time_unit(precision) {
                TimeUnit::Second => B::TsS(TimestampSecondBuilder::new()),
                TimeUnit::Millisecond => B::TsMs(TimestampMillisecondBuilder::new()),
                TimeUnit::Microsecond => B::TsUs(TimestampMicrosecondBuilder::new()),
                TimeUnit::Nanosecond => B::TsNs(TimestampNanosecondBuilder::new()),
            },
            DataType::Array { ref element } => {
                let ArrowType::List(field) = arrow_type(t) else { unreachable!("ARRAY maps to List") };
                B::List {
                    field,
                    element: Box::new(ColumnBuilder::new(&element.data_type)),
                    element_type: element.data_type.clone(),
                    offsets: vec![0],
                    nulls: NullBufferBuilder::new(0),
                }
            }
            DataType::Map { ref key, ref value } => {
                let ArrowType::Map(entries, _) = arrow_type(t) else { unreachable!("MAP maps to Map") };
                B::Map {
                    entries,
                    keys: Box::new(ColumnBuilder::new(key)),
                    values: Box::new(ColumnBuilder::new(&value.data_type)),
                    types: Box::new(((**key).clone(), value.data_type.clone())),
                    offsets: vec![0],
                    nulls: NullBufferBuilder::new(0),
                }
            }
            DataType::Row { ref fields } => {
                let ArrowType::Struct(arrow_fields) = arrow_type(t) else { unreachable!("ROW maps to Struct") };
                B::Struct {
                    fields: arrow_fields,
                    children: fields.iter().map(|f| ColumnBuilder::new(&f.data_type)).collect(),
                    types: fields.iter().map(|f| f.data_type.clone()).collect(),
                    nulls: NullBufferBuilder::new(0),
                }
            }
        }
    }

    /// Append a value that passed `check_value` (and `ts_fits`). Returns the bytes it adds.
    fn append(&mut self, v: &Value) -> usize {
        use ColumnBuilder as B;
        match (self, v) {
            (B::Boolean(b), Value::Null) => b.append_null(),
            (B::Int8(b), Value::Null) => b.append_null(),
            (B::Int16(b), Value::Null) => b.append_null(),
            (B::Int32(b), Value::Null) => b.append_null(),
            (B::Int64(b), Value::Null) => b.append_null(),
            (B::Float32(b), Value::Null) => b.append_null(),
            (B::Float64(b), Value::Null) => b.append_null(),
            (B::Utf8(b), Value::Null) => b.append_null(),
            (B::Binary(b), Value::Null) => b.append_null(),
            (B::FixedBinary(b), Value::Null) => b.append_null(),
            (B::Decimal(b), Value::Null) => b.append_null(),
            (B::Date32(b), Value::Null) => b.append_null(),
            (B::TimeS(b), Value::Null) => b.append_null(),
            (B::TimeMs(b), Value::Null) => b.append_null(),
            (B::TimeUs(b), Value::Null) => b.append_null(),
            (B::TimeNs(b), Value::Null) => b.append_null(),
            (B::TsS(b), Value::Null) => b.append_null(),
            (B::TsMs(b), Value::Null) => b.append_null(),
            (B::TsUs(b), Value::Null) => b.append_null(),
            (B::TsNs(b), Value::Null) => b.append_null(),
            (B::List { offsets, nulls, .. } | B::Map { offsets, nulls, .. }, Value::Null) => {
                offsets.push(*offsets.last().expect("offsets start with 0"));
                nulls.append_null();
            }
            (B::Struct { children, nulls, .. }, Value::Null) => {
                for c in children {
                    c.append(&Value::Null);
                }
                nulls.append_null();
            }
            (B::List { element, element_type, offsets, nulls, .. }, Value::Array(items)) => {
                let mut bytes = 4;
                for x in items {
                    bytes += fixed_width(element_type) + element.append(x);
                }
                offsets.push(offsets.last().expect("offsets start with 0") + items.len() as i32);
                nulls.append_non_null();
                return bytes;
            }
            (B::Map { keys, values, types, offsets, nulls, .. }, Value::Map(entries)) => {
                let mut bytes = 4;
                for (k, x) in entries {
                    bytes += fixed_width(&types.0) + keys.append(k) + fixed_width(&types.1) + values.append(x);
                }
                offsets.push(offsets.last().expect("offsets start with 0") + entries.len() as i32);
                nulls.append_non_null();
                return bytes;
            }
            (B::Struct { children, types, nulls, .. }, Value::Row(values)) => {
                let mut bytes = 0;
                for ((c, t), x) in children.iter_mut().zip(types.iter()).zip(values) {
                    bytes += fixed_width(t) + c.append(x);
                }
                nulls.append_non_null();
                return bytes;
            }
            (B::Boolean(b), Value::Boolean(x)) => b.append_value(*x),
            (B::Int8(b), Value::TinyInt(x)) => b.append_value(*x),
            (B::Int16(b), Value::SmallInt(x)) => b.append_value(*x),
            (B::Int32(b), Value::Int(x)) => b.append_value(*x),
            (B::Int64(b), Value::BigInt(x)) => b.append_value(*x),
            (B::Float32(b), Value::Float(x)) => b.append_value(*x),
            (B::Float64(b), Value::Double(x)) => b.append_value(*x),
            (B::Utf8(b), Value::String(s)) => {
                b.append_value(s);
                return 4 + s.len();
            }
            (B::Binary(b), Value::Bytes(x)) => {
                b.append_value(x);
                return 4 + x.len();
            }
            (B::FixedBinary(b), Value::Bytes(x)) => {
                b.append_value(x).expect("a checked BINARY(n) value has n bytes");
                return x.len();
            }
            (B::Decimal(b), Value::Decimal(d)) => b.append_value(d.unscaled),
            (B::Date32(b), Value::Date(x)) => b.append_value(*x),
            (B::TimeS(b), Value::Time(ms)) => b.append_value(ms / 1000),
            (B::TimeMs(b), Value::Time(ms)) => b.append_value(*ms),
            (B::TimeUs(b), Value::Time(ms)) => b.append_value(*ms as i64 * 1000),
            (B::TimeNs(b), Value::Time(ms)) => b.append_value(*ms as i64 * 1_000_000),
            (B::TsS(b), Value::Timestamp(t) | Value::TimestampLtz(t)) => b.append_value(t.millis.div_euclid(1000)),
            (B::TsMs(b), Value::Timestamp(t) | Value::TimestampLtz(t)) => b.append_value(t.millis),
            (B::TsUs(b), Value::Timestamp(t) | Value::TimestampLtz(t)) => b.append_value(t.as_micros()),
            (B::TsNs(b), Value::Timestamp(t) | Value::TimestampLtz(t)) => b.append_value(t.as_nanos()),
            (_, v) => unreachable!("a checked {} value does not fit its column builder", v.type_name()),
        }
        0
    }

    fn finish(&mut self) -> ArrayRef {
        use ColumnBuilder as B;
        match self {
            B::Boolean(b) => Arc::new(b.finish()),
            B::Int8(b) => Arc::new(b.finish()),
            B::Int16(b) => Arc::new(b.finish()),
            B::Int32(b) => Arc::new(b.finish()),
            B::Int64(b) => Arc::new(b.finish()),
            B::Float32(b) => Arc::new(b.finish()),
            B::Float64(b) => Arc::new(b.finish()),
            B::Utf8(b) => Arc::new(b.finish()),
            B::Binary(b) => Arc::new(b.finish()),
            B::FixedBinary(b) => Arc::new(b.finish()),
            B::Decimal(b) => Arc::new(b.finish()),
            B::Date32(b) => Arc::new(b.finish()),
            B::TimeS(b) => Arc::new(b.finish()),
            B::TimeMs(b) => Arc::new(b.finish()),
            B::TimeUs(b) => Arc::new(b.finish()),
            B::TimeNs(b) => Arc::new(b.finish()),
            B::TsS(b) => Arc::new(b.finish()),
            B::TsMs(b) => Arc::new(b.finish()),
            B::TsUs(b) => Arc::new(b.finish()),
            B::TsNs(b) => Arc::new(b.finish()),
            B::List { field, element, offsets, nulls, .. } => {
                let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
                Arc::new(ListArray::try_new(field.clone(), offsets, element.finish(), nulls.finish()).expect("checked ARRAY values build a List"))
            }
            B::Map { entries, keys, values, offsets, nulls, .. } => {
                let ArrowType::Struct(kv) = entries.data_type() else { unreachable!("map entries are a Struct") };
                let kv = StructArray::try_new(kv.clone(), vec![keys.finish(), values.finish()], None).expect("checked MAP entries build a Struct");
                let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
                Arc::new(MapArray::try_new(entries.clone(), offsets, kv, nulls.finish(), false).expect("checked MAP values build a Map"))
            }
            B::Struct { fields, children, nulls, .. } => {
                let arrays = children.iter_mut().map(ColumnBuilder::finish).collect();
                Arc::new(StructArray::try_new(fields.clone(), arrays, nulls.finish()).expect("checked ROW values build a Struct"))
            }
        }
    }
}

/// Fixed bytes a value of `t` takes in an Arrow column (variable-length types add their data).
fn fixed_width(t: &DataType) -> usize {
    match *t {
        DataType::Boolean | DataType::TinyInt => 1,
        DataType::SmallInt => 2,
        DataType::Int | DataType::Float | DataType::Date => 4,
        DataType::Time { precision } if precision <= 3 => 4,
        DataType::Decimal { .. } => 16,
        DataType::String | DataType::Bytes | DataType::Char { .. } | DataType::Binary { .. } => 0,
        _ => 8,
    }
}

/// Whether a timestamp fits the Arrow unit of its column (µs and ns hold about ±292 000 and ±292
/// years around 1970).
fn ts_fits(precision: u8, ts: &Timestamp) -> bool {
    match time_unit(precision) {
        TimeUnit::Second | TimeUnit::Millisecond => true,
        TimeUnit::Microsecond => ts.millis.checked_mul(1000).is_some_and(|m| m.checked_add((ts.nanos_of_milli / 1000) as i64).is_some()),
        TimeUnit::Nanosecond => ts.millis.checked_mul(1_000_000).is_some_and(|m| m.checked_add(ts.nanos_of_milli as i64).is_some()),
    }
}

/// Check a row for an Arrow log batch of `schema`: [`check_row`] plus the range of each
/// timestamp in its column's Arrow unit (a TIMESTAMP(9) value must fit i64 nanoseconds).
pub fn check_arrow_row(schema: &Schema, row: &[Value]) -> Result<()> {
    check_row(schema, row)?;
    check_arrow_ranges(schema, row)
}

/// The part of [`check_arrow_row`] beyond [`check_row`]: every timestamp fits its column's Arrow
/// unit. Primary-key rows need it too, because the server turns them into an Arrow changelog.
pub fn check_arrow_ranges(schema: &Schema, row: &[Value]) -> Result<()> {
    for (c, v) in schema.columns().iter().zip(row) {
        let out = match (&c.data_type, v) {
            (DataType::Timestamp { precision } | DataType::TimestampLtz { precision }, Value::Timestamp(ts) | Value::TimestampLtz(ts)) => {
                (!ts_fits(*precision, ts)).then_some((&c.data_type, ts))
            }
            (t, _) if t.is_nested() => ts_out_of_range(t, v),
            _ => None,
        };
        if let Some((t, ts)) = out {
            return Err(Error::invalid_row(format!("column {:?}: {ts:?} is outside the range of {t}", c.name)));
        }
    }
    Ok(())
}

/// The first timestamp in `v` (of type `t`, nested values included) that its Arrow unit cannot
/// hold, with its type.
fn ts_out_of_range<'a>(t: &'a DataType, v: &'a Value) -> Option<(&'a DataType, &'a Timestamp)> {
    match (t, v) {
        (DataType::Timestamp { precision } | DataType::TimestampLtz { precision }, Value::Timestamp(ts) | Value::TimestampLtz(ts)) => {
            (!ts_fits(*precision, ts)).then_some((t, ts))
        }
        (DataType::Array { element }, Value::Array(items)) => items.iter().find_map(|x| ts_out_of_range(&element.data_type, x)),
        (DataType::Map { key, value }, Value::Map(entries)) => {
            entries.iter().find_map(|(k, x)| ts_out_of_range(key, k).or_else(|| ts_out_of_range(&value.data_type, x)))
        }
        (DataType::Row { fields }, Value::Row(values)) => fields.iter().zip(values).find_map(|(f, x)| ts_out_of_range(&f.data_type, x)),
        _ => None,
    }
}

/// Accumulates rows of one table into Arrow column builders.
pub struct RowsToArrow {
    schema: Schema,
    arrow: SchemaRef,
    columns: Vec<ColumnBuilder>,
    fixed_row_bytes: usize,
    var_bytes: usize,
    len: usize,
}

impl RowsToArrow {
    /// Empty builders for the columns of `schema`.
    pub fn new(schema: &Schema) -> Self {
        RowsToArrow {
            schema: schema.clone(),
            arrow: arrow_schema(schema),
            columns: schema.columns().iter().map(|c| ColumnBuilder::new(&c.data_type)).collect(),
            fixed_row_bytes: schema.columns().iter().map(|c| fixed_width(&c.data_type)).sum(),
            var_bytes: 0,
            len: 0,
        }
    }

    /// Check `row` against the schema (as [`encode_row`](super::compacted::encode_row) does)
    /// and append it. On error nothing is appended.
    pub fn append(&mut self, row: &[Value]) -> Result<()> {
        check_arrow_row(&self.schema, row)?;
        self.push_checked(row);
        Ok(())
    }

    /// Append a row that [`check_arrow_row`] accepted for this schema (the writer checks before
    /// admission, outside the bucket lock, and does not check twice).
    pub fn push_checked(&mut self, row: &[Value]) {
        debug_assert!(check_arrow_row(&self.schema, row).is_ok());
        for (b, v) in self.columns.iter_mut().zip(row) {
            self.var_bytes += b.append(v);
        }
        self.len += 1;
    }

    /// Rows appended since the last [`finish`](Self::finish).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Approximate bytes of the Arrow data so far (values, offsets and string/binary data;
    /// validity bitmaps and padding are not counted). O(1).
    pub fn estimated_size(&self) -> usize {
        self.len * self.fixed_row_bytes + self.var_bytes
    }

    /// The rows appended so far as a `RecordBatch` of [`arrow_schema`]; the builders are reset
    /// for reuse.
    pub fn finish(&mut self) -> RecordBatch {
        let arrays: Vec<ArrayRef> = self.columns.iter_mut().map(ColumnBuilder::finish).collect();
        self.len = 0;
        self.var_bytes = 0;
        RecordBatch::try_new(self.arrow.clone(), arrays).expect("checked rows build a valid batch")
    }
}

impl std::fmt::Debug for RowsToArrow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowsToArrow").field("columns", &self.columns.len()).field("len", &self.len).finish()
    }
}

// ===== user batches =====

/// Check a user-supplied batch against the table and return it with exactly the table's Arrow
/// schema ([`arrow_schema`]).
///
/// Columns are matched by position and must carry the table's column names. A column whose
/// type differs from the mapped type is converted when that is lossless:
///
/// * LargeUtf8, Utf8View and dictionaries of strings → Utf8; LargeBinary, BinaryView,
///   FixedSizeBinary and dictionaries of binaries → Binary;
/// * narrower signed integers, and unsigned integers into a strictly wider signed type
///   (UInt8 → SMALLINT, INT, BIGINT; UInt16 → INT, BIGINT; UInt32 → BIGINT); Float16/Float32 →
///   wider floats;
/// * Decimal32/64/256 of the same precision and scale → Decimal128;
/// * timestamps of any unit and any time zone → the column's unit, keeping the stored epoch
///   value (no time-zone shift), when no value overflows or loses digits; the same for TIME
///   units; Date64 → Date32 when every value is a whole day;
/// * an all-null (Null type) column → a nullable column of any type.
///
/// Anything else, including lossy conversions and different DECIMAL precision or scale, is
/// [`Error::invalid_row`] naming the column and both types; so are nulls in a NOT NULL column.
pub fn conform_record_batch(schema: &Schema, batch: &RecordBatch) -> Result<RecordBatch> {
    let fields = batch.schema();
    // Columns the table lacks are named first: a batch (or DataFrame) with an extra column is
    // rejected whole, never written without it.
    let unknown: Vec<String> = fields
        .fields()
        .iter()
        .filter(|f| !schema.columns().iter().any(|c| &c.name == f.name()))
        .map(|f| format!("{:?}", f.name()))
        .collect();
    if !unknown.is_empty() {
        return Err(Error::invalid_row(format!(
            "unknown column{} {}: the table has {}",
            if unknown.len() > 1 { "s" } else { "" },
            unknown.join(", "),
            schema.columns().iter().map(|c| format!("{:?}", c.name)).collect::<Vec<_>>().join(", ")
        )));
    }
    if batch.num_columns() != schema.len() {
        return Err(Error::invalid_row(format!(
            "the batch has {} columns but the table has {} ({})",
            batch.num_columns(),
            schema.len(),
            schema.columns().iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
        )));
    }
    let mut arrays = Vec::with_capacity(schema.len());
    for (i, col) in schema.columns().iter().enumerate() {
        let field = fields.field(i);
        if field.name() != &col.name {
            return Err(Error::invalid_row(format!("batch column {i} is named {:?} but the table column is {:?}", field.name(), col.name)));
        }
        let target = arrow_type(&col.data_type);
        let array = batch.column(i);
        let converted = if array.data_type() == &target {
            array.clone()
        } else {
            conform_array(array, &col.data_type).map_err(|why| {
                Error::invalid_row(format!(
                    "column {:?} is {} (Arrow {target}) but the batch column is {}{}",
                    col.name,
                    col.data_type,
                    array.data_type(),
                    why.map(|w| format!(": {w}")).unwrap_or_default()
                ))
            })?
        };
        if has_char(&col.data_type) {
            if let Some((row, place, n, length)) = (0..converted.len()).find_map(|i| char_too_long(converted.as_ref(), &col.data_type, i)) {
                return Err(Error::invalid_row(format!(
                    "column {:?}{place} is CHAR({length}) but the value in batch row {row} has {n} characters",
                    col.name
                )));
            }
        }
        if !col.nullable && converted.null_count() > 0 {
            return Err(Error::invalid_row(format!(
                "column {:?} is NOT NULL but the batch has {} null values in it",
                col.name,
                converted.null_count()
            )));
        }
        arrays.push(converted);
    }
    Ok(RecordBatch::try_new(arrow_schema(schema), arrays)?)
}

/// Whether `t` is CHAR or holds a CHAR at some depth.
fn has_char(t: &DataType) -> bool {
    match t {
        DataType::Char { .. } => true,
        DataType::Array { element } => has_char(&element.data_type),
        DataType::Map { key, value } => has_char(key) || has_char(&value.data_type),
        DataType::Row { fields } => fields.iter().any(|f| has_char(&f.data_type)),
        _ => false,
    }
}

/// The first CHAR value in cell `i` of a conformed `array` (of type `t`) with more characters
/// than its CHAR(n) allows, as (row `i`, its place below the column as row errors write it, its
/// characters, n). The Arrow side of the rule of [`check_value`](crate::row::check_value); values
/// under a NULL list, map or row are not looked at.
fn char_too_long(array: &dyn Array, t: &DataType, i: usize) -> Option<(usize, String, usize, u32)> {
    if array.is_null(i) || !has_char(t) {
        return None;
    }
    let below = |step: String, found: Option<(usize, String, usize, u32)>| found.map(|(_, place, n, len)| (i, format!("{step}{place}"), n, len));
    match t {
        DataType::Char { length } => {
            crate::row::char_excess(array.as_string::<i32>().value(i), *length).map(|n| (i, String::new(), n, *length))
        }
        DataType::Array { element } => {
            let l = array.as_list::<i32>();
            let (start, end) = (l.value_offsets()[i] as usize, l.value_offsets()[i + 1] as usize);
            (start..end).find_map(|j| below(format!("[{}]", j - start), char_too_long(l.values().as_ref(), &element.data_type, j)))
        }
        DataType::Map { key, value } => {
            let m = array.as_map();
            let (start, end) = (m.value_offsets()[i] as usize, m.value_offsets()[i + 1] as usize);
            (start..end).find_map(|j| {
                below(format!(" key {}", j - start), char_too_long(m.keys().as_ref(), key, j))
                    .or_else(|| below(format!(" value {}", j - start), char_too_long(m.values().as_ref(), &value.data_type, j)))
            })
        }
        DataType::Row { fields } => {
            let s = array.as_struct();
            fields.iter().zip(s.columns()).find_map(|(f, c)| below(format!(".{}", f.name), char_too_long(c.as_ref(), &f.data_type, i)))
        }
        _ => None,
    }
}

/// The bytes each row of a conformed batch adds to an Arrow log batch: the fixed width of every
/// fixed-width column, the length of every string or binary value plus its offset, one byte for
/// a boolean. Splitting a user batch by these per-row sizes (not by the average) keeps every
/// chunk within `client.writer.batch-size` however skewed the rows are.
pub fn arrow_row_sizes(batch: &RecordBatch) -> Vec<usize> {
    let rows = batch.num_rows();
    let mut sizes = vec![0usize; rows];
    for col in batch.columns() {
        let col = col.as_ref();
        match col.data_type() {
            ArrowType::Utf8 => add_lengths(&mut sizes, |i| col.as_string::<i32>().value_length(i) as usize + 4),
            ArrowType::Binary => add_lengths(&mut sizes, |i| col.as_binary::<i32>().value_length(i) as usize + 4),
            ArrowType::FixedSizeBinary(n) => add_lengths(&mut sizes, |_| *n as usize),
            ArrowType::Boolean | ArrowType::Null => add_lengths(&mut sizes, |_| 1),
            t => match t.primitive_width() {
                Some(w) => add_lengths(&mut sizes, |_| w),
                // ARRAY, MAP and ROW columns: an even share of their memory keeps them counted.
                None => {
                    let share = col.get_array_memory_size().div_ceil(rows.max(1));
                    add_lengths(&mut sizes, |_| share)
                }
            },
        }
    }
    sizes
}

fn add_lengths(sizes: &mut [usize], f: impl Fn(usize) -> usize) {
    for (i, s) in sizes.iter_mut().enumerate() {
        *s = s.saturating_add(f(i));
    }
}

/// `array` as the Arrow type of `t`: unchanged when it has that type, else converted as
/// [`convert`] does, and for ARRAY, MAP and ROW by [`conform_nested`].
fn conform_array(array: &ArrayRef, t: &DataType) -> std::result::Result<ArrayRef, Option<String>> {
    let target = arrow_type(t);
    if array.data_type() == &target {
        Ok(array.clone())
    } else if let ArrowType::Dictionary(_, values) = array.data_type() {
        // A dictionary is its values (what `fluss_type` maps it as), whatever their type.
        let plain = arrow_cast::cast(array, values).map_err(|e| Some(e.to_string()))?;
        conform_array(&plain, t)
    } else if t.is_nested() {
        conform_nested(array, t)
    } else {
        convert(array, &target)
    }
}

/// A List, LargeList or FixedSizeList (for ARRAY), Map (for MAP) or Struct (for ROW) whatever its child field
/// names and nullability flags (pyarrow names list elements "item"), with its children conformed
/// to the element, key, value and field types: rebuilt with exactly [`arrow_type`]. NULL is
/// refused where the type says NOT NULL, and as a map key; ROW fields must carry the type's
/// field names in order.
fn conform_nested(array: &ArrayRef, t: &DataType) -> std::result::Result<ArrayRef, Option<String>> {
    let not_null = |what: &str, n: usize| Err(Some(format!("{what} is NOT NULL but {n} of them are null")));
    match (t, array.data_type()) {
        (DataType::Array { element }, ArrowType::List(_) | ArrowType::LargeList(_) | ArrowType::FixedSizeList(_, _)) => {
            let (offsets, values, nulls) = list_parts(array)?;
            let values = conform_array(&values, &element.data_type).map_err(|why| Some(format!("its elements: {}", why.unwrap_or_else(|| format!("{} cannot hold {}", values.data_type(), element.data_type)))))?;
            if !element.nullable && values.null_count() > 0 {
                return not_null("the element type", values.null_count());
            }
            let ArrowType::List(field) = arrow_type(t) else { unreachable!("ARRAY maps to List") };
            Ok(Arc::new(ListArray::try_new(field, offsets, values, nulls).map_err(|e| Some(e.to_string()))?))
        }
        (DataType::Map { key, value }, ArrowType::Map(_, _)) => {
            let (offsets, entries, nulls) = list_parts(array)?;
            let entries = entries.as_struct_opt().filter(|e| e.num_columns() == 2).ok_or_else(|| Some("map entries are not key-value structs".to_string()))?;
            let keys = conform_array(entries.column(0), key).map_err(|why| Some(format!("its keys: {}", why.unwrap_or_else(|| format!("{} cannot hold {key}", entries.column(0).data_type())))))?;
            if keys.null_count() > 0 {
                return Err(Some(format!("{} map keys are null (map keys cannot be null)", keys.null_count())));
            }
            let values = conform_array(entries.column(1), &value.data_type)
                .map_err(|why| Some(format!("its values: {}", why.unwrap_or_else(|| format!("{} cannot hold {}", entries.column(1).data_type(), value.data_type)))))?;
            if !value.nullable && values.null_count() > 0 {
                return not_null("the value type", values.null_count());
            }
            let ArrowType::Map(entries_field, _) = arrow_type(t) else { unreachable!("MAP maps to Map") };
            let ArrowType::Struct(kv) = entries_field.data_type() else { unreachable!("map entries are a Struct") };
            let kv = StructArray::try_new(kv.clone(), vec![keys, values], None).map_err(|e| Some(e.to_string()))?;
            Ok(Arc::new(MapArray::try_new(entries_field, offsets, kv, nulls, false).map_err(|e| Some(e.to_string()))?))
        }
        (DataType::Row { fields }, ArrowType::Struct(given)) => {
            let names: Vec<&str> = given.iter().map(|f| f.name().as_str()).collect();
            if names.len() != fields.len() || fields.iter().zip(&names).any(|(f, n)| f.name != *n) {
                return Err(Some(format!(
                    "its fields are ({}), the type's are ({})",
                    names.join(", "),
                    fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")
                )));
            }
            let s = array.as_struct();
            let mut children = Vec::with_capacity(fields.len());
            for (f, c) in fields.iter().zip(s.columns()) {
                let c = conform_array(c, &f.data_type)
                    .map_err(|why| Some(format!("field {:?}: {}", f.name, why.unwrap_or_else(|| format!("{} cannot hold {}", c.data_type(), f.data_type)))))?;
                // NULL in a NOT NULL field counts only where the row itself is not NULL.
                let unmasked = match (c.logical_nulls(), s.nulls()) {
                    (None, _) => 0,
                    (Some(cn), None) => cn.null_count(),
                    (Some(cn), Some(sn)) => (0..c.len()).filter(|&i| cn.is_null(i) && sn.is_valid(i)).count(),
                };
                if !f.nullable && unmasked > 0 {
                    return not_null(&format!("field {:?}", f.name), unmasked);
                }
                children.push(c);
            }
            let ArrowType::Struct(target) = arrow_type(t) else { unreachable!("ROW maps to Struct") };
            Ok(Arc::new(StructArray::try_new(target, children, s.nulls().cloned()).map_err(|e| Some(e.to_string()))?))
        }
        _ => Err(None),
    }
}

/// The offsets (rebased to start at 0, as i32), the child values they cover and the validity of
/// a List, LargeList, FixedSizeList or Map array.
fn list_parts(array: &ArrayRef) -> std::result::Result<(OffsetBuffer<i32>, ArrayRef, Option<arrow_buffer::NullBuffer>), Option<String>> {
    let (raw, values): (Vec<i64>, ArrayRef) = match array.data_type() {
        ArrowType::List(_) => {
            let l = array.as_list::<i32>();
            (l.value_offsets().iter().map(|&o| o as i64).collect(), l.values().clone())
        }
        ArrowType::LargeList(_) => {
            let l = array.as_list::<i64>();
            (l.value_offsets().to_vec(), l.values().clone())
        }
        ArrowType::FixedSizeList(_, _) => {
            let l = array.as_fixed_size_list();
            ((0..=l.len() as i64).map(|i| i * i64::from(l.value_length())).collect(), l.values().clone())
        }
        ArrowType::Map(_, _) => {
            let m = array.as_map();
            (m.value_offsets().iter().map(|&o| o as i64).collect(), Arc::new(m.entries().clone()) as ArrayRef)
        }
        other => return Err(Some(format!("{other} is not a list"))),
    };
    let (first, last) = (raw[0], raw[raw.len() - 1]);
    let rebased = raw.iter().map(|&o| i32::try_from(o - first)).collect::<std::result::Result<Vec<i32>, _>>().map_err(|_| Some("more than 2^31 elements".to_string()))?;
    let values = values.slice(first as usize, (last - first) as usize);
    Ok((OffsetBuffer::new(ScalarBuffer::from(rebased)), values, array.logical_nulls()))
}

/// Lossless conversion of `array` to `target`; `Err(None)` = not a supported conversion,
/// `Err(Some(reason))` = supported but these values cannot be converted exactly.
fn convert(array: &ArrayRef, target: &ArrowType) -> std::result::Result<ArrayRef, Option<String>> {
    use ArrowType as A;
    let source = array.data_type();
    let plain_cast = match (source, target) {
        (A::Null, _) => true,
        (A::LargeUtf8 | A::Utf8View, A::Utf8) => true,
        (A::LargeBinary | A::BinaryView | A::FixedSizeBinary(_), A::Binary) => true,
        // BINARY(n): variable-length binary whose every value has n bytes (a value of another
        // length becomes null in the cast, which the null count below refuses).
        (A::Binary | A::LargeBinary | A::BinaryView, A::FixedSizeBinary(_)) => true,
        (A::Dictionary(_, v), A::Utf8) => matches!(**v, A::Utf8 | A::LargeUtf8 | A::Utf8View),
        (A::Dictionary(_, v), A::Binary) => {
            matches!(**v, A::Binary | A::LargeBinary | A::BinaryView)
        }
        (A::Int8, A::Int16 | A::Int32 | A::Int64) | (A::Int16, A::Int32 | A::Int64) | (A::Int32, A::Int64) => true,
        (A::UInt8, A::Int16 | A::Int32 | A::Int64) | (A::UInt16, A::Int32 | A::Int64) | (A::UInt32, A::Int64) => true,
        (A::Float16, A::Float32 | A::Float64) | (A::Float32, A::Float64) => true,
        (A::Decimal32(p, s) | A::Decimal64(p, s) | A::Decimal256(p, s), A::Decimal128(tp, ts)) => p == tp && s == ts,
        _ => false,
    };
    if plain_cast {
        let out = arrow_cast::cast(array, target).map_err(|e| Some(e.to_string()))?;
        if out.logical_null_count() != array.logical_null_count() {
            return Err(Some("some values do not fit".into()));
        }
        return Ok(out);
    }
    // Rescaling of temporal values: (units per second or per day of the source, of the target).
    let factors = match (source, target) {
        (A::Timestamp(from, _), A::Timestamp(to, None)) => (per_second(*from), per_second(*to)),
        (A::Time32(from) | A::Time64(from), A::Time32(to) | A::Time64(to)) => (per_second(*from), per_second(*to)),
        (A::Date64, A::Date32) => (86_400_000, 1),
        _ => return Err(None),
    };
    rescale(array, factors.0, factors.1, target).map_err(Some)
}

/// Convert the integer values behind a temporal array from `from` units to `to` units,
/// exactly, and give them the type `target`.
fn rescale(array: &ArrayRef, from: i64, to: i64, target: &ArrowType) -> std::result::Result<ArrayRef, String> {
    let data = array.to_data();
    let raw: Int64Array = if data.data_type().primitive_width() == Some(4) {
        let ints = Int32Array::from(data.into_builder().data_type(ArrowType::Int32).build().map_err(|e| e.to_string())?);
        ints.unary(|v| v as i64)
    } else {
        Int64Array::from(data.into_builder().data_type(ArrowType::Int64).build().map_err(|e| e.to_string())?)
    };
    let scaled: Int64Array = if to >= from {
        let f = to / from;
        raw.try_unary(|v| v.checked_mul(f).ok_or_else(|| format!("value {v} overflows when converted")))?
    } else {
        let f = from / to;
        raw.try_unary(|v| if v % f == 0 { Ok(v / f) } else { Err(format!("value {v} would lose precision")) })?
    };
    let data = if target.primitive_width() == Some(4) {
        let narrow: Int32Array = scaled.try_unary(|v| i32::try_from(v).map_err(|_| format!("value {v} does not fit in 32 bits")))?;
        narrow.into_data()
    } else {
        scaled.into_data()
    };
    Ok(make_array(data.into_builder().data_type(target.clone()).build().map_err(|e| e.to_string())?))
}

// ===== Arrow -> values =====

fn downcast<'a, T: 'static>(array: &'a dyn Array, t: &DataType) -> Result<&'a T> {
    array
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| Error::invalid_row(format!("an Arrow {} array cannot hold {t} (expected {})", array.data_type(), arrow_type(t))))
}

/// One cell of `array` (of the table type `t`, already conformed to [`arrow_type`]) as a
/// [`Value`]. Timestamp arrays of any time zone are accepted.
pub fn arrow_value(array: &dyn Array, t: &DataType, row: usize) -> Result<Value> {
    if row >= array.len() {
        return Err(Error::invalid_row(format!("row {row} is outside an array of {} values", array.len())));
    }
    if array.is_null(row) {
        return Ok(Value::Null);
    }
    Ok(match *t {
        DataType::Boolean => Value::Boolean(downcast::<BooleanArray>(array, t)?.value(row)),
        DataType::TinyInt => Value::TinyInt(downcast::<Int8Array>(array, t)?.value(row)),
        DataType::SmallInt => Value::SmallInt(downcast::<Int16Array>(array, t)?.value(row)),
        DataType::Int => Value::Int(downcast::<Int32Array>(array, t)?.value(row)),
        DataType::BigInt => Value::BigInt(downcast::<Int64Array>(array, t)?.value(row)),
        DataType::Float => Value::Float(downcast::<Float32Array>(array, t)?.value(row)),
        DataType::Double => Value::Double(downcast::<Float64Array>(array, t)?.value(row)),
        DataType::String | DataType::Char { .. } => Value::String(downcast::<StringArray>(array, t)?.value(row).to_owned()),
        DataType::Bytes => Value::Bytes(downcast::<BinaryArray>(array, t)?.value(row).to_vec()),
        DataType::Binary { .. } => Value::Bytes(downcast::<FixedSizeBinaryArray>(array, t)?.value(row).to_vec()),
        DataType::Decimal { precision, scale } => {
            Value::Decimal(Decimal { unscaled: downcast::<Decimal128Array>(array, t)?.value(row), precision, scale })
        }
        DataType::Date => Value::Date(downcast::<Date32Array>(array, t)?.value(row)),
        DataType::Time { .. } => Value::Time(match array.data_type() {
            ArrowType::Time32(TimeUnit::Second) => array.as_primitive::<Time32SecondType>().value(row) * 1000,
            ArrowType::Time32(TimeUnit::Millisecond) => array.as_primitive::<Time32MillisecondType>().value(row),
            ArrowType::Time64(TimeUnit::Microsecond) => (array.as_primitive::<Time64MicrosecondType>().value(row) / 1000) as i32,
            ArrowType::Time64(TimeUnit::Nanosecond) => (array.as_primitive::<Time64NanosecondType>().value(row) / 1_000_000) as i32,
            other => return Err(Error::invalid_row(format!("an Arrow {other} array cannot hold {t}"))),
        }),
        DataType::Timestamp { .. } | DataType::TimestampLtz { .. } => {
            let ts = match array.data_type() {
                ArrowType::Timestamp(TimeUnit::Second, _) => {
                    Timestamp::from_seconds(array.as_primitive::<TimestampSecondType>().value(row))
                }
                ArrowType::Timestamp(TimeUnit::Millisecond, _) => {
                    Timestamp::from_millis(array.as_primitive::<TimestampMillisecondType>().value(row))
                }
                ArrowType::Timestamp(TimeUnit::Microsecond, _) => {
                    Timestamp::from_micros(array.as_primitive::<TimestampMicrosecondType>().value(row))
                }
                ArrowType::Timestamp(TimeUnit::Nanosecond, _) => {
                    Timestamp::from_nanos(array.as_primitive::<TimestampNanosecondType>().value(row))
                }
                other => return Err(Error::invalid_row(format!("an Arrow {other} array cannot hold {t}"))),
            };
            if matches!(t, DataType::Timestamp { .. }) {
                Value::Timestamp(ts)
            } else {
                Value::TimestampLtz(ts)
            }
        }
        DataType::Array { ref element } => {
            let items = downcast::<ListArray>(array, t)?.value(row);
            Value::Array((0..items.len()).map(|i| arrow_value(items.as_ref(), &element.data_type, i)).collect::<Result<_>>()?)
        }
        DataType::Map { ref key, ref value } => {
            let entries = downcast::<MapArray>(array, t)?.value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            Value::Map(
                (0..entries.len())
                    .map(|i| Ok((arrow_value(keys.as_ref(), key, i)?, arrow_value(values.as_ref(), &value.data_type, i)?)))
                    .collect::<Result<_>>()?,
            )
        }
        DataType::Row { ref fields } => {
            let s = downcast::<StructArray>(array, t)?;
            if s.num_columns() != fields.len() {
                return Err(Error::invalid_row(format!("an Arrow struct of {} fields cannot hold {t}", s.num_columns())));
            }
            Value::Row(fields.iter().zip(s.columns()).map(|(f, c)| arrow_value(c.as_ref(), &f.data_type, row)).collect::<Result<_>>()?)
        }
    })
}

/// All rows of a batch (conformed first with [`conform_record_batch`]) as [`Row`]s.
pub fn record_batch_to_rows(schema: &Schema, batch: &RecordBatch) -> Result<Vec<Row>> {
    let batch = conform_record_batch(schema, batch)?;
    let types = schema.types();
    (0..batch.num_rows()).map(|r| types.iter().zip(batch.columns()).map(|(t, a)| arrow_value(a.as_ref(), t, r)).collect()).collect()
}

#[cfg(test)]
#[allow(clippy::useless_vec)] // `row![..]` builds a Vec; tests pass it as a slice
mod tests {
    use super::*;
    use crate::metadata::Column;
    use crate::row;
    use crate::wire::compacted::tests::arb_schema_and_rows;
    use arrow_array::types::Int64Type;
    use arrow_array::{
        Date64Array, DictionaryArray, FixedSizeBinaryArray, Int32Array, LargeBinaryArray, LargeStringArray, NullArray, StringViewArray,
        Time32MillisecondArray, Time64NanosecondArray, TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray,
        TimestampSecondArray, UInt32Array, UInt64Array,
    };
    use proptest::prelude::*;

    fn every_type_schema() -> Schema {
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
            DataType::Decimal { precision: 10, scale: 2 },
            DataType::Decimal { precision: 38, scale: 5 },
            DataType::Date,
            DataType::Time { precision: 0 },
            DataType::Time { precision: 3 },
            DataType::Time { precision: 6 },
            DataType::Time { precision: 9 },
            DataType::Timestamp { precision: 0 },
            DataType::Timestamp { precision: 3 },
            DataType::Timestamp { precision: 6 },
            DataType::Timestamp { precision: 9 },
            DataType::TimestampLtz { precision: 0 },
            DataType::TimestampLtz { precision: 3 },
            DataType::TimestampLtz { precision: 6 },
            DataType::TimestampLtz { precision: 9 },
        ];
        Schema::new(types.iter().enumerate().map(|(i, t)| Column::new(format!("c{i}"), t.clone())).collect(), vec![]).unwrap()
    }

    fn every_type_row() -> Row {
        let ts = |nanos: i64| Timestamp::from_nanos(nanos);
        vec![
            Value::Boolean(true),
            Value::TinyInt(-128),
            Value::SmallInt(-300),
            Value::Int(i32::MIN),
            Value::BigInt(i64::MIN),
            Value::Float(-1.5),
            Value::Double(f64::MAX),
            Value::String("héllo".into()),
            Value::Bytes(vec![0, 255]),
            Value::Decimal(Decimal { unscaled: -99_999_999, precision: 10, scale: 2 }),
            Value::Decimal(Decimal { unscaled: -(10i128.pow(38) - 1), precision: 38, scale: 5 }),
            Value::Date(-719_162),
            Value::Time(86_399_000),
            Value::Time(86_399_999),
            Value::Time(1),
            Value::Time(0),
            Value::Timestamp(ts(-1_000_000_000)),
            Value::Timestamp(ts(-1_000_000)),
            Value::Timestamp(ts(-1_000)),
            Value::Timestamp(ts(-1)),
            Value::TimestampLtz(ts(1_700_000_000_000_000_000)),
            Value::TimestampLtz(ts(1_700_000_000_123_000_000)),
            Value::TimestampLtz(ts(1_700_000_000_123_456_000)),
            Value::TimestampLtz(ts(1_700_000_000_123_456_789)),
        ]
    }

    fn batch_of(fields: Vec<(&str, ArrayRef)>) -> RecordBatch {
        RecordBatch::try_from_iter(fields).unwrap()
    }

    fn one_col(name: &str, t: DataType, nullable: bool) -> Schema {
        let c = Column::new(name, t);
        Schema::new(vec![if nullable { c } else { c.not_null() }], vec![]).unwrap()
    }

    #[test]
    fn schema_mapping_follows_the_table() {
        let s = arrow_schema(&every_type_schema());
        let types: Vec<String> = s.fields().iter().map(|f| f.data_type().to_string()).collect();
        assert_eq!(
            types,
            [
                "Boolean",
                "Int8",
                "Int16",
                "Int32",
                "Int64",
                "Float32",
                "Float64",
                "Utf8",
                "Binary",
                "Decimal128(10, 2)",
                "Decimal128(38, 5)",
                "Date32",
                "Time32(s)",
                "Time32(ms)",
                "Time64(µs)",
                "Time64(ns)",
                "Timestamp(s)",
                "Timestamp(ms)",
                "Timestamp(µs)",
                "Timestamp(ns)",
                "Timestamp(s)",
                "Timestamp(ms)",
                "Timestamp(µs)",
                "Timestamp(ns)",
            ]
        );
        let pk = Schema::builder().column_not_null("id", DataType::Int).column("v", DataType::String).build().unwrap();
        let s = arrow_schema(&pk);
        assert_eq!((s.field(0).name().as_str(), s.field(0).is_nullable(), s.field(1).is_nullable()), ("id", false, true));
    }

    #[test]
    fn every_type_round_trips_through_arrow_with_nulls() {
        let schema = every_type_schema();
        let mut b = RowsToArrow::new(&schema);
        let nulls: Row = vec![Value::Null; schema.len()];
        b.append(&every_type_row()).unwrap();
        b.append(&nulls).unwrap();
        assert_eq!(b.len(), 2);
        let batch = b.finish();
        assert_eq!(b.len(), 0);
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(record_batch_to_rows(&schema, &batch).unwrap(), vec![every_type_row(), nulls]);
        // Reuse after finish.
        b.append(&every_type_row()).unwrap();
        assert_eq!(record_batch_to_rows(&schema, &b.finish()).unwrap(), vec![every_type_row()]);
    }

    #[test]
    fn append_checks_rows_and_appends_nothing_on_error() {
        let schema = Schema::builder().column_not_null("a", DataType::Int).column("b", DataType::String).build().unwrap();
        let mut b = RowsToArrow::new(&schema);
        b.append(&row![1, "x"]).unwrap();
        assert!(b.append(&row![2, 3]).is_err());
        assert!(b.append(&row![None::<i32>, "y"]).is_err());
        assert!(b.append(&row![2]).is_err());
        assert_eq!(b.len(), 1);
        let batch = b.finish();
        assert_eq!(batch.num_rows(), 1);
        assert_eq!(batch.column(1).len(), 1);
        // Out of range for nanoseconds.
        let s = one_col("t", DataType::Timestamp { precision: 9 }, true);
        let mut b = RowsToArrow::new(&s);
        assert!(b.append(&[Value::Timestamp(Timestamp::from_millis(i64::MAX / 10))]).is_err());
        assert_eq!(b.len(), 0);
    }

    #[test]
    fn estimated_size_grows_with_data() {
        let schema = Schema::builder().column("a", DataType::BigInt).column("b", DataType::String).build().unwrap();
        let mut b = RowsToArrow::new(&schema);
        assert_eq!(b.estimated_size(), 0);
        b.append(&row![1i64, "hello"]).unwrap();
        assert_eq!(b.estimated_size(), 8 + 4 + 5);
        b.append(&row![None::<i64>, None::<String>]).unwrap();
        assert_eq!(b.estimated_size(), 2 * 8 + 4 + 5);
        b.finish();
        assert_eq!(b.estimated_size(), 0);
    }

    #[test]
    fn conform_accepts_exact_batches_unchanged() {
        let schema = every_type_schema();
        let mut b = RowsToArrow::new(&schema);
        b.append(&every_type_row()).unwrap();
        let batch = b.finish();
        let out = conform_record_batch(&schema, &batch).unwrap();
        assert_eq!(out, batch);
        assert!(Arc::ptr_eq(out.column(3), batch.column(3)));
    }

    #[test]
    fn conform_casts_lossless_variants() {
        let schema = Schema::builder()
            .column("s", DataType::String)
            .column("v", DataType::String)
            .column("d", DataType::String)
            .column("b", DataType::Bytes)
            .column("f", DataType::Bytes)
            .column("i", DataType::BigInt)
            .column("u", DataType::BigInt)
            .column("ts", DataType::Timestamp { precision: 6 })
            .column("ltz", DataType::TimestampLtz { precision: 3 })
            .column("date", DataType::Date)
            .column("time", DataType::Time { precision: 9 })
            .column("n", DataType::Double)
            .build()
            .unwrap();
        let dict: DictionaryArray<arrow_array::types::Int8Type> = vec!["x", "y", "x"].into_iter().collect();
        let batch = batch_of(vec![
            ("s", Arc::new(LargeStringArray::from(vec!["a", "b", "c"]))),
            ("v", Arc::new(StringViewArray::from(vec![Some("p"), None, Some("q")]))),
            ("d", Arc::new(dict)),
            ("b", Arc::new(LargeBinaryArray::from(vec![&b"1"[..], b"", b"3"]))),
            ("f", Arc::new(FixedSizeBinaryArray::try_from_iter(vec![vec![1u8, 2], vec![3, 4], vec![5, 6]].into_iter()).unwrap())),
            ("i", Arc::new(Int32Array::from(vec![-1, 0, i32::MAX]))),
            ("u", Arc::new(UInt32Array::from(vec![0, 1, u32::MAX]))),
            ("ts", Arc::new(TimestampSecondArray::from(vec![-1, 0, 1]).with_timezone("Asia/Tokyo"))),
            ("ltz", Arc::new(TimestampNanosecondArray::from(vec![Some(1_000_000), None, Some(-3_000_000)]).with_timezone("UTC"))),
            ("date", Arc::new(Date64Array::from(vec![0, 86_400_000, -86_400_000]))),
            ("time", Arc::new(Time32MillisecondArray::from(vec![0, 1, 86_399_999]))),
            ("n", Arc::new(NullArray::new(3))),
        ]);
        let out = conform_record_batch(&schema, &batch).unwrap();
        assert_eq!(out.schema(), arrow_schema(&schema));
        let rows = record_batch_to_rows(&schema, &out).unwrap();
        assert_eq!(
            rows[0],
            vec![
                Value::String("a".into()),
                Value::String("p".into()),
                Value::String("x".into()),
                Value::Bytes(b"1".to_vec()),
                Value::Bytes(vec![1, 2]),
                Value::BigInt(-1),
                Value::BigInt(0),
                Value::Timestamp(Timestamp::from_seconds(-1)),
                Value::TimestampLtz(Timestamp::from_millis(1)),
                Value::Date(0),
                Value::Time(0),
                Value::Null,
            ]
        );
        assert_eq!(rows[1][1], Value::Null);
        assert_eq!(rows[1][8], Value::Null);
        assert_eq!(rows[2][6], Value::BigInt(u32::MAX as i64));
        assert_eq!(rows[2][8], Value::TimestampLtz(Timestamp::from_millis(-3)));
        assert_eq!(rows[2][9], Value::Date(-1));
        assert_eq!(rows[2][10], Value::Time(86_399_999));
        let ns = out.column(10).as_any().downcast_ref::<Time64NanosecondArray>().unwrap();
        assert_eq!(ns.value(2), 86_399_999_000_000);
        // Time zones are dropped without shifting the stored instant.
        let us = out.column(7).as_any().downcast_ref::<TimestampMicrosecondArray>().unwrap();
        assert_eq!(us.values().to_vec(), vec![-1_000_000, 0, 1_000_000]);
    }

    #[test]
    fn conform_rejects_lossy_or_different_types() {
        let check = |t: DataType, array: ArrayRef, want: &str| {
            let schema = one_col("c", t, true);
            let e = conform_record_batch(&schema, &batch_of(vec![("c", array)])).unwrap_err();
            assert_eq!(e.code(), crate::ClientCode::InvalidRow as i32);
            assert!(e.message().contains("\"c\"") && e.message().contains(want), "{e}");
        };
        check(DataType::Int, Arc::new(Int64Array::from(vec![1])), "INT (Arrow Int32) but the batch column is Int64");
        check(DataType::BigInt, Arc::new(UInt64Array::from(vec![1])), "UInt64");
        check(DataType::String, Arc::new(Int32Array::from(vec![1])), "Int32");
        check(DataType::Bytes, Arc::new(StringArray::from(vec!["x"])), "Utf8");
        check(
            DataType::Decimal { precision: 10, scale: 2 },
            Arc::new(Decimal128Array::from(vec![1]).with_precision_and_scale(10, 3).unwrap()),
            "Decimal128(10, 3)",
        );
        check(
            DataType::Decimal { precision: 10, scale: 2 },
            Arc::new(Decimal128Array::from(vec![1]).with_precision_and_scale(12, 2).unwrap()),
            "Decimal128(12, 2)",
        );
        check(
            DataType::Timestamp { precision: 3 },
            Arc::new(TimestampMicrosecondArray::from(vec![1_000, 1_001])),
            "value 1001 would lose precision",
        );
        check(DataType::Timestamp { precision: 9 }, Arc::new(TimestampSecondArray::from(vec![i64::MAX / 100])), "overflows");
        check(DataType::Date, Arc::new(Date64Array::from(vec![86_400_001])), "lose precision");
        check(DataType::Time { precision: 0 }, Arc::new(Time32MillisecondArray::from(vec![1500])), "lose precision");
        check(DataType::Timestamp { precision: 6 }, Arc::new(Date64Array::from(vec![0])), "Date64");
        check(DataType::Double, Arc::new(Int32Array::from(vec![1])), "Int32");
    }

    #[test]
    fn conform_rebuilds_nested_columns_of_other_names_and_slices() {
        use arrow_array::builder::{Int64Builder, LargeListBuilder, ListBuilder};
        let schema = Schema::builder()
            .column("l", DataType::parse("ARRAY<BIGINT NOT NULL>").unwrap())
            .column("r", DataType::parse("ROW<a INT, b STRING>").unwrap())
            .build()
            .unwrap();
        // pyarrow-style: elements named "item", nullable; a batch sliced away from offset 0.
        let mut l = ListBuilder::new(Int64Builder::new());
        l.values().append_null(); // only in the sliced-off first row
        l.append(true);
        l.values().append_value(7);
        l.append(true);
        l.append(false);
        let r = StructArray::from(vec![
            (Arc::new(Field::new("a", ArrowType::Int32, true)), Arc::new(Int32Array::from(vec![Some(1), Some(2), None])) as ArrayRef),
            (Arc::new(Field::new("b", ArrowType::Utf8, true)), Arc::new(StringArray::from(vec![Some("x"), None, Some("z")])) as ArrayRef),
        ]);
        let full = batch_of(vec![("l", Arc::new(l.finish()) as ArrayRef), ("r", Arc::new(r) as ArrayRef)]);
        let rows = record_batch_to_rows(&schema, &full.slice(1, 2)).unwrap();
        assert_eq!(
            rows,
            vec![
                vec![Value::Array(vec![Value::BigInt(7)]), Value::Row(vec![Value::Int(2), Value::Null])],
                vec![Value::Null, Value::Row(vec![Value::Null, Value::String("z".into())])]
            ]
        );
        let conformed = conform_record_batch(&schema, &full.slice(1, 2)).unwrap();
        assert_eq!(conformed.schema(), arrow_schema(&schema));
        // The whole batch has a NULL element where the type says NOT NULL.
        let e = conform_record_batch(&schema, &full).unwrap_err();
        assert!(e.message().contains("column \"l\"") && e.message().contains("element type is NOT NULL"), "{e}");
        // LargeList converts; a ROW with other field names does not.
        let mut big = LargeListBuilder::new(Int64Builder::new());
        big.values().append_value(1);
        big.append(true);
        let r2 = StructArray::from(vec![
            (Arc::new(Field::new("a", ArrowType::Int32, true)), Arc::new(Int32Array::from(vec![1])) as ArrayRef),
            (Arc::new(Field::new("c", ArrowType::Utf8, true)), Arc::new(StringArray::from(vec!["x"])) as ArrayRef),
        ]);
        let e = conform_record_batch(&schema, &batch_of(vec![("l", Arc::new(big.finish()) as ArrayRef), ("r", Arc::new(r2) as ArrayRef)])).unwrap_err();
        assert!(e.message().contains("its fields are (a, c), the type's are (a, b)"), "{e}");
    }

    #[test]
    fn conform_checks_names_counts_and_not_null() {
        let schema = Schema::builder().column_not_null("id", DataType::Int).column("v", DataType::String).build().unwrap();
        let ok = || -> Vec<(&str, ArrayRef)> {
            vec![("id", Arc::new(Int32Array::from(vec![1, 2]))), ("v", Arc::new(StringArray::from(vec![Some("a"), None])))]
        };
        assert!(conform_record_batch(&schema, &batch_of(ok())).is_ok());
        let e = conform_record_batch(&schema, &batch_of(ok()[..1].to_vec())).unwrap_err();
        assert!(e.message().contains("1 columns but the table has 2"), "{e}");
        let mut renamed = ok();
        renamed[1].0 = "w";
        let e = conform_record_batch(&schema, &batch_of(renamed)).unwrap_err();
        assert!(e.message().contains("\"w\"") && e.message().contains("\"v\""), "{e}");
        let mut nulls = ok();
        nulls[0].1 = Arc::new(Int32Array::from(vec![Some(1), None]));
        let e = conform_record_batch(&schema, &batch_of(nulls)).unwrap_err();
        assert!(e.message().contains("\"id\" is NOT NULL"), "{e}");
        let mut all_null = ok();
        all_null[0].1 = Arc::new(NullArray::new(2));
        assert!(conform_record_batch(&schema, &batch_of(all_null)).is_err());
    }

    #[test]
    fn arrow_value_checks_type_and_bounds() {
        let a = Int32Array::from(vec![Some(5), None]);
        assert_eq!(arrow_value(&a, &DataType::Int, 0).unwrap(), Value::Int(5));
        assert_eq!(arrow_value(&a, &DataType::Int, 1).unwrap(), Value::Null);
        assert!(arrow_value(&a, &DataType::Int, 2).is_err());
        assert!(arrow_value(&a, &DataType::BigInt, 0).is_err());
        let t = arrow_array::PrimitiveArray::<Int64Type>::from(vec![1]);
        assert!(arrow_value(&t, &DataType::Timestamp { precision: 6 }, 0).is_err());
        let ts = TimestampMillisecondArray::from(vec![7]).with_timezone("UTC");
        assert_eq!(arrow_value(&ts, &DataType::TimestampLtz { precision: 3 }, 0).unwrap(), Value::TimestampLtz(Timestamp::from_millis(7)));
    }

    proptest! {
        #[test]
        fn rows_round_trip_through_arrow((schema, rows) in arb_schema_and_rows(5)) {
            let mut b = RowsToArrow::new(&schema);
            for r in &rows {
                b.append(r).unwrap();
            }
            let batch = b.finish();
            prop_assert_eq!(conform_record_batch(&schema, &batch).unwrap(), batch.clone());
            prop_assert_eq!(record_batch_to_rows(&schema, &batch).unwrap(), rows);
        }
    }

    #[test]
    fn type_names_and_arrow_types_map_by_one_rule() {
        use crate::metadata::{Column, Schema};
        assert_eq!(DataType::parse(" decimal(10, 2) ").unwrap(), DataType::Decimal { precision: 10, scale: 2 });
        assert_eq!(DataType::parse("DECIMAL(7)").unwrap(), DataType::Decimal { precision: 7, scale: 0 });
        assert_eq!(DataType::parse("timestamp_ltz(3)").unwrap(), DataType::TimestampLtz { precision: 3 });
        assert_eq!(DataType::parse("TIMESTAMP").unwrap(), DataType::Timestamp { precision: 6 });
        assert_eq!(DataType::parse("Integer").unwrap(), DataType::Int);
        for bad in ["", "VARCHAR", "DECIMAL", "DECIMAL(40, 2)", "DECIMAL(5, 6)", "INT(3)", "TIME(1, 2)", "TIMESTAMP(10)", "BIGINT(x)"] {
            let e = DataType::parse(bad).unwrap_err();
            assert_eq!(e.code(), crate::error::ClientCode::InvalidTable as i32, "{bad}: {e}");
        }
        // Every Fluss type but TIMESTAMP_LTZ goes to Arrow and back to itself (Fluss's Arrow
        // format stores TIMESTAMP_LTZ without a time zone; an Arrow timestamp with one is LTZ).
        assert_eq!(
            DataType::from_arrow("c", &ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))).unwrap(),
            DataType::TimestampLtz { precision: 6 }
        );
        for t in ["BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "STRING", "BYTES", "DECIMAL(12, 3)", "DATE", "TIME(3)", "TIMESTAMP(9)"] {
            let t = DataType::parse(t).unwrap();
            assert_eq!(DataType::from_arrow("c", &arrow_type(&t)).unwrap(), t);
        }
        let e = DataType::from_arrow("tags", &ArrowType::List(Arc::new(Field::new("x", ArrowType::UInt64, true)))).unwrap_err();
        assert!(e.message().contains("column \"tags\"[]: Arrow type UInt64"), "{e}");
        let schema = Schema::new(vec![Column::new("id", DataType::BigInt).not_null(), Column::new("msg", DataType::String)], vec![]).unwrap();
        assert_eq!(Schema::columns_from_arrow(&schema.to_arrow()).unwrap(), schema.columns());
    }

    /// What the Arrow form of `t` keeps: CHAR(n) becomes STRING, TIMESTAMP_LTZ (stored without a
    /// time zone, as Fluss's ArrowUtils does) TIMESTAMP, and TIME / TIMESTAMP precisions the
    /// precision of their Arrow unit (0, 3, 6 or 9); everything else, nested, as it is.
    fn arrow_canonical(t: &DataType) -> DataType {
        let p = |p: u8| match time_unit(p) {
            TimeUnit::Second => 0,
            TimeUnit::Millisecond => 3,
            TimeUnit::Microsecond => 6,
            TimeUnit::Nanosecond => 9,
        };
        match t {
            DataType::Char { .. } => DataType::String,
            DataType::Time { precision } => DataType::Time { precision: p(*precision) },
            DataType::Timestamp { precision } | DataType::TimestampLtz { precision } => DataType::Timestamp { precision: p(*precision) },
            DataType::Array { element } => {
                DataType::Array { element: Box::new(Nested { data_type: arrow_canonical(&element.data_type), nullable: element.nullable }) }
            }
            DataType::Map { key, value } => DataType::Map {
                key: Box::new(arrow_canonical(key)),
                value: Box::new(Nested { data_type: arrow_canonical(&value.data_type), nullable: value.nullable }),
            },
            DataType::Row { fields } => DataType::Row {
                fields: fields.iter().map(|f| RowField { name: f.name.clone(), data_type: arrow_canonical(&f.data_type), nullable: f.nullable }).collect(),
            },
            other => other.clone(),
        }
    }

    proptest! {
        /// Arrow -> Fluss is the inverse of Fluss -> Arrow: every type (nested three deep, every
        /// nullability) comes back as itself when Arrow keeps all of it, and otherwise as the
        /// type whose Arrow form is the same.
        #[test]
        fn fluss_types_round_trip_through_arrow_types(t in crate::wire::compacted::tests::arb_type()) {
            let canonical = arrow_canonical(&t);
            let back = DataType::from_arrow("c", &arrow_type(&t)).unwrap();
            prop_assert_eq!(&back, &canonical);
            prop_assert_eq!(arrow_type(&back), arrow_type(&t));
            prop_assert_eq!(DataType::from_arrow("c", &arrow_type(&canonical)).unwrap(), canonical);
        }

        /// A table made from a table's Arrow schema takes the batches of that schema: the same
        /// rows come back.
        #[test]
        fn tables_made_from_arrow_schemas_take_their_batches((schema, rows) in arb_schema_and_rows(3)) {
            let columns = Schema::columns_from_arrow(&schema.to_arrow()).unwrap();
            for (c, d) in schema.columns().iter().zip(&columns) {
                prop_assert_eq!((&c.name, c.nullable, arrow_canonical(&c.data_type)), (&d.name, d.nullable, d.data_type.clone()));
            }
            let derived = Schema::new(columns, vec![]).unwrap();
            let mut b = RowsToArrow::new(&schema);
            for r in &rows {
                b.append(r).unwrap();
            }
            let batch = b.finish();
            // TIMESTAMP_LTZ values read back as TIMESTAMP values of the same instant.
            fn plain(v: Value) -> Value {
                match v {
                    Value::TimestampLtz(ts) => Value::Timestamp(ts),
                    Value::Array(xs) => Value::Array(xs.into_iter().map(plain).collect()),
                    Value::Row(xs) => Value::Row(xs.into_iter().map(plain).collect()),
                    Value::Map(xs) => Value::Map(xs.into_iter().map(|(k, v)| (plain(k), plain(v))).collect()),
                    v => v,
                }
            }
            let back = record_batch_to_rows(&derived, &batch).unwrap();
            let want: Vec<Row> = record_batch_to_rows(&schema, &batch).unwrap().into_iter().map(|r| r.into_iter().map(plain).collect()).collect();
            prop_assert_eq!(back, want);
        }
    }

    /// Nested Arrow types as pyarrow and Arrow C++ write them (elements named "item", everything
    /// nullable, LargeList, FixedSizeList, FixedSizeBinary, dictionaries, a map with a nullable
    /// key field) make ARRAY, MAP, ROW and BINARY(n) columns, NOT NULL where the field says so,
    /// and a batch of that schema is accepted by the table made from it.
    #[test]
    fn nested_arrow_schemas_make_nested_columns_that_take_their_batches() {
        use arrow_array::builder::{FixedSizeListBuilder, Int32Builder, LargeListBuilder, ListBuilder, MapBuilder, MapFieldNames, StringBuilder};
        let mut tags = ListBuilder::new(StringBuilder::new());
        tags.values().append_value("a");
        tags.values().append_null();
        tags.append(true);
        tags.append(false);
        let mut big = LargeListBuilder::new(ListBuilder::new(Int32Builder::new()));
        big.values().values().append_value(1);
        big.values().append(true);
        big.append(true);
        big.append(true);
        let mut fixed = FixedSizeListBuilder::new(Int32Builder::new(), 2).with_field(Field::new("item", ArrowType::Int32, false));
        fixed.values().append_value(1);
        fixed.values().append_value(2);
        fixed.append(true);
        fixed.values().append_value(3);
        fixed.values().append_value(4);
        fixed.append(true);
        let names = MapFieldNames { entry: "entries".into(), key: "k".into(), value: "v".into() };
        let mut m = MapBuilder::new(Some(names), StringBuilder::new(), Int32Builder::new());
        m.keys().append_value("x");
        m.values().append_value(1);
        m.append(true).unwrap();
        m.append(false).unwrap();
        let r = StructArray::from(vec![
            (Arc::new(Field::new("a", ArrowType::Int32, false)), Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef),
            (
                Arc::new(Field::new("b", ArrowType::FixedSizeBinary(2), true)),
                Arc::new(FixedSizeBinaryArray::try_from_sparse_iter_with_size(vec![Some(vec![1u8, 2]), None].into_iter(), 2).unwrap()) as ArrayRef,
            ),
        ]);
        let dict = DictionaryArray::new(arrow_array::Int8Array::from(vec![Some(0), None]), Arc::new(Int32Array::from(vec![5])));
        let batch = batch_of(vec![
            ("tags", Arc::new(tags.finish()) as ArrayRef),
            ("big", Arc::new(big.finish()) as ArrayRef),
            ("fixed", Arc::new(fixed.finish()) as ArrayRef),
            ("m", Arc::new(m.finish()) as ArrayRef),
            ("r", Arc::new(r) as ArrayRef),
            ("bin", Arc::new(FixedSizeBinaryArray::try_from_iter(vec![vec![9u8; 3], vec![8u8; 3]].into_iter()).unwrap()) as ArrayRef),
            ("dict", Arc::new(dict) as ArrayRef),
        ]);
        let columns = Schema::columns_from_arrow(&batch.schema()).unwrap();
        let types: Vec<String> = columns.iter().map(|c| c.data_type.to_string()).collect();
        assert_eq!(
            types,
            [
                "ARRAY<STRING>",
                "ARRAY<ARRAY<INT>>",
                "ARRAY<INT NOT NULL>",
                "MAP<STRING, INT>",
                "ROW<a INT NOT NULL, b BINARY(2)>",
                "BINARY(3)",
                "INT"
            ]
        );
        let schema = Schema::new(columns, vec![]).unwrap();
        let rows = record_batch_to_rows(&schema, &batch).unwrap();
        assert_eq!(
            rows[0],
            vec![
                Value::Array(vec![Value::String("a".into()), Value::Null]),
                Value::Array(vec![Value::Array(vec![Value::Int(1)])]),
                Value::Array(vec![Value::Int(1), Value::Int(2)]),
                Value::Map(vec![(Value::String("x".into()), Value::Int(1))]),
                Value::Row(vec![Value::Int(1), Value::Bytes(vec![1, 2])]),
                Value::Bytes(vec![9; 3]),
                Value::Int(5),
            ]
        );
        assert_eq!(rows[1], vec![Value::Null, Value::Array(vec![]), Value::Array(vec![Value::Int(3), Value::Int(4)]), Value::Null, Value::Row(vec![Value::Int(2), Value::Null]), Value::Bytes(vec![8; 3]), Value::Null]);
        // The Arrow schema of the made table is Fluss's form of the same types.
        assert_eq!(conform_record_batch(&schema, &batch).unwrap().schema(), schema.to_arrow());
    }

    /// What has no Fluss type is INVALID_TABLE naming the column, the place inside it and the
    /// Arrow type.
    #[test]
    fn arrow_types_without_a_fluss_type_are_named_with_their_place() {
        use arrow_schema::UnionFields;
        let list = |t: ArrowType| ArrowType::List(Arc::new(Field::new("item", t, true)));
        let strct = |fs: Vec<Field>| ArrowType::Struct(fs.into());
        let union = ArrowType::Union(UnionFields::try_new(vec![0], vec![Field::new("a", ArrowType::Int32, true)]).unwrap(), arrow_schema::UnionMode::Dense);
        let cases = [
            (ArrowType::UInt64, "column \"c\": Arrow type UInt64 has no Fluss equivalent"),
            (ArrowType::Null, "column \"c\": Arrow type Null has no Fluss equivalent"),
            (list(union.clone()), "column \"c\"[]: Arrow type Union"),
            (list(strct(vec![Field::new("x", ArrowType::Duration(TimeUnit::Second), true)])), "column \"c\"[].x: Arrow type Duration"),
            (strct(vec![]), "a ROW needs at least one field"),
            (strct(vec![Field::new("a", ArrowType::Int32, true), Field::new("a", ArrowType::Utf8, true)]), "field names must be unique"),
            (ArrowType::Decimal256(50, 2), "Decimal256(50, 2) has no Fluss equivalent (DECIMAL(p, s) needs"),
            (ArrowType::Decimal128(10, -2), "Decimal128(10, -2) has no Fluss equivalent"),
            (ArrowType::FixedSizeBinary(0), "FixedSizeBinary(0) has no Fluss equivalent (BINARY(n) needs n >= 1)"),
            (ArrowType::ListView(Arc::new(Field::new("item", ArrowType::Int32, true))), "column \"c\": Arrow type ListView"),
        ];
        for (t, want) in cases {
            let e = DataType::from_arrow("c", &t).unwrap_err();
            assert_eq!(e.code(), crate::error::ClientCode::InvalidTable as i32, "{t}: {e}");
            assert!(e.message().contains(want), "{t}: {e}");
        }
        let m = ArrowType::Map(
            Arc::new(Field::new("entries", strct(vec![Field::new("key", ArrowType::Utf8, true), Field::new("value", ArrowType::UInt64, true)]), false)),
            false,
        );
        let e = DataType::from_arrow("attrs", &m).unwrap_err();
        assert!(e.message().contains("column \"attrs\" value: Arrow type UInt64"), "{e}");
    }

    /// CHAR(n) in an Arrow batch: at most n characters (code points), at any depth; a longer
    /// value is INVALID_ROW naming the column, the place and the batch row, and nothing of the
    /// batch is accepted. Values under a NULL row are not looked at.
    #[test]
    fn arrow_batches_respect_char_lengths_at_any_depth() {
        let schema = Schema::builder()
            .column("c", DataType::Char { length: 3 })
            .column("deep", DataType::parse("ARRAY<ROW<a INT, c CHAR(2)>>").unwrap())
            .column("m", DataType::parse("MAP<CHAR(1), CHAR(2)>").unwrap())
            .build()
            .unwrap();
        let mut ok = RowsToArrow::new(&schema);
        let deep = |s: &str| Value::Array(vec![Value::Null, Value::Row(vec![Value::Int(1), Value::String(s.into())])]);
        // Three code points: 3 bytes, 9 bytes (CJK), 12 bytes and 6 UTF-16 units (emoji).
        for c in ["abc", "日本語", "😀😀😀", ""] {
            ok.append(&vec![Value::String(c.into()), deep("xy"), Value::Map(vec![(Value::String("k".into()), Value::String("éé".into()))])]).unwrap();
        }
        let good = ok.finish();
        assert_eq!(conform_record_batch(&schema, &good).unwrap(), good);
        // The same batches with one value too long, built as a plain STRING table would build them.
        let loose = Schema::builder()
            .column("c", DataType::String)
            .column("deep", DataType::parse("ARRAY<ROW<a INT, c STRING>>").unwrap())
            .column("m", DataType::parse("MAP<STRING, STRING>").unwrap())
            .build()
            .unwrap();
        let batch = |c: &str, d: &str, k: &str, v: &str| {
            let mut b = RowsToArrow::new(&loose);
            b.append(&vec![Value::String("ok".into()), deep("ok"), Value::Null]).unwrap();
            b.append(&vec![Value::String(c.into()), deep(d), Value::Map(vec![(Value::String(k.into()), Value::String(v.into()))])]).unwrap();
            b.finish()
        };
        let cases = [
            (batch("abcd", "x", "k", "v"), "column \"c\" is CHAR(3) but the value in batch row 1 has 4 characters"),
            (batch("😀😀😀😀", "x", "k", "v"), "column \"c\" is CHAR(3) but the value in batch row 1 has 4 characters"),
            (batch("abc", "xyz", "k", "v"), "column \"deep\"[1].c is CHAR(2) but the value in batch row 1 has 3 characters"),
            (batch("abc", "x", "kk", "v"), "column \"m\" key 0 is CHAR(1) but the value in batch row 1 has 2 characters"),
            (batch("abc", "x", "k", "vvv"), "column \"m\" value 0 is CHAR(2) but the value in batch row 1 has 3 characters"),
        ];
        for (b, want) in cases {
            let e = conform_record_batch(&schema, &b).unwrap_err();
            assert_eq!(e.code(), crate::error::ClientCode::InvalidRow as i32, "{e}");
            assert!(e.message().contains(want), "{want}: {e}");
        }
        // A too-long value under a NULL row of a ROW column is not a value of the table.
        let row_schema = one_col("r", DataType::parse("ROW<c CHAR(1)>").unwrap(), true);
        let hidden = StructArray::try_new(
            vec![Field::new("c", ArrowType::Utf8, true)].into(),
            vec![Arc::new(StringArray::from(vec!["a", "too long"])) as ArrayRef],
            Some(vec![true, false].into()),
        )
        .unwrap();
        let b = batch_of(vec![("r", Arc::new(hidden) as ArrayRef)]);
        assert_eq!(record_batch_to_rows(&row_schema, &b).unwrap(), vec![vec![Value::Row(vec![Value::String("a".into())])], vec![Value::Null]]);
    }

    #[test]
    fn an_arrow_stream_is_one_batch_and_no_batches_is_zero_rows() {
        let schema = Arc::new(ArrowSchema::new(vec![Field::new("id", ArrowType::Int64, false)]));
        let batch = |v: Vec<i64>| RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(v))]).unwrap();
        assert_eq!(concat_batches(&schema, vec![]).unwrap().num_rows(), 0);
        assert_eq!(concat_batches(&schema, vec![batch(vec![1, 2])]).unwrap().num_rows(), 2);
        let joined = concat_batches(&schema, vec![batch(vec![1]), batch(vec![2, 3])]).unwrap();
        assert_eq!(joined.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values(), &[1, 2, 3]);
    }
}
