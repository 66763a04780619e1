//! Values across the bridge: rows ([`RRow`], the storage of C++ `GenericRow`) and table
//! descriptors. Only conversion happens here; whether a row fits a table is decided by the core
//! when the row is written.

use fluss_writer::{
    ClientCode, Column, DataType, Decimal, Error, Nested, Result, RowField, Schema, TableDescriptor, TableInfo, Timestamp, Value,
};

use crate::bridge::ffi::{FfiColumn, FfiDescriptor, FfiTableInfo, FfiTypeNode};
use crate::status::guard_or;

/// The most fields a C++ row may have (Fluss tables are far narrower). A setter or resize past
/// it records the error (writing the row fails with `INVALID_ROW`) instead of trying to
/// allocate an absurd row.
pub(crate) const MAX_ROW_FIELDS: usize = 1 << 16;

/// A row being built by C++ (`GenericRow`): values in schema order. A setter whose input could
/// not be converted (a decimal string that is not an integer) records the problem; writing the
/// row then fails with `INVALID_ROW` and registers nothing.
#[derive(Clone, Default)]
pub struct RRow {
    pub(crate) values: Vec<Value>,
    pub(crate) bad: Option<String>,
}

impl RRow {
    /// The values, or the conversion error recorded by a setter.
    pub(crate) fn values(&self) -> Result<&[Value]> {
        match &self.bad {
            None => Ok(&self.values),
            Some(m) => Err(Error::invalid_row(m.clone())),
        }
    }

    fn set(&mut self, i: usize, v: Value) {
        if i >= MAX_ROW_FIELDS {
            self.mark_bad(format!("field index {i} is out of range (a row has at most {MAX_ROW_FIELDS} fields)"));
            return;
        }
        if i >= self.values.len() {
            self.values.resize(i + 1, Value::Null);
        }
        self.values[i] = v;
    }

    /// Keep the first problem: it is the one the caller made first.
    fn mark_bad(&mut self, message: String) {
        if self.bad.is_none() {
            self.bad = Some(message);
        }
    }

    fn get(&self, i: usize) -> &Value {
        self.values.get(i).unwrap_or(&Value::Null)
    }
}

pub(crate) fn row_new(fields: usize) -> Box<RRow> {
    guard_or(Box::default, || {
        let mut r = RRow::default();
        row_resize(&mut r, fields);
        Box::new(r)
    })
}

pub(crate) fn row_clone(r: &RRow) -> Box<RRow> {
    guard_or(Box::default, || Box::new(r.clone()))
}

pub(crate) fn row_len(r: &RRow) -> usize {
    r.values.len()
}

pub(crate) fn row_resize(r: &mut RRow, fields: usize) {
    guard_or(
        || (),
        || {
            if fields > MAX_ROW_FIELDS {
                r.mark_bad(format!("{fields} fields is out of range (a row has at most {MAX_ROW_FIELDS} fields)"));
            } else {
                r.values.resize(fields, Value::Null);
            }
        },
    )
}

pub(crate) fn row_mark_bad(r: &mut RRow, message: &str) {
    guard_or(|| (), || r.mark_bad(message.to_string()))
}

pub(crate) fn row_set_null(r: &mut RRow, i: usize) {
    guard_or(|| (), || r.set(i, Value::Null))
}
pub(crate) fn row_set_bool(r: &mut RRow, i: usize, v: bool) {
    guard_or(|| (), || r.set(i, Value::Boolean(v)))
}
pub(crate) fn row_set_i8(r: &mut RRow, i: usize, v: i8) {
    guard_or(|| (), || r.set(i, Value::TinyInt(v)))
}
pub(crate) fn row_set_i16(r: &mut RRow, i: usize, v: i16) {
    guard_or(|| (), || r.set(i, Value::SmallInt(v)))
}
pub(crate) fn row_set_i32(r: &mut RRow, i: usize, v: i32) {
    guard_or(|| (), || r.set(i, Value::Int(v)))
}
pub(crate) fn row_set_i64(r: &mut RRow, i: usize, v: i64) {
    guard_or(|| (), || r.set(i, Value::BigInt(v)))
}
pub(crate) fn row_set_f32(r: &mut RRow, i: usize, v: f32) {
    guard_or(|| (), || r.set(i, Value::Float(v)))
}
pub(crate) fn row_set_f64(r: &mut RRow, i: usize, v: f64) {
    guard_or(|| (), || r.set(i, Value::Double(v)))
}

pub(crate) fn row_set_string(r: &mut RRow, i: usize, v: &[u8]) {
    guard_or(
        || (),
        || match std::str::from_utf8(v) {
            Ok(s) => r.set(i, Value::String(s.to_string())),
            Err(e) => {
                r.mark_bad(format!("field {i}: the string is not valid UTF-8 ({e})"));
                r.set(i, Value::Null)
            }
        },
    )
}

pub(crate) fn row_set_bytes(r: &mut RRow, i: usize, v: &[u8]) {
    guard_or(|| (), || r.set(i, Value::Bytes(v.to_vec())))
}

pub(crate) fn row_set_decimal_i64(r: &mut RRow, i: usize, unscaled: i64, precision: u8, scale: u8) {
    guard_or(|| (), || r.set(i, Value::Decimal(Decimal { unscaled: unscaled as i128, precision, scale })))
}

pub(crate) fn row_set_decimal_str(r: &mut RRow, i: usize, unscaled: &str, precision: u8, scale: u8) {
    guard_or(
        || (),
        || match unscaled.trim().parse::<i128>() {
            Ok(u) => r.set(i, Value::Decimal(Decimal { unscaled: u, precision, scale })),
            Err(_) => {
                r.mark_bad(format!("field {i}: {unscaled:?} is not an unscaled decimal integer"));
                r.set(i, Value::Null)
            }
        },
    )
}

pub(crate) fn row_set_date(r: &mut RRow, i: usize, days: i32) {
    guard_or(|| (), || r.set(i, Value::Date(days)))
}
pub(crate) fn row_set_time(r: &mut RRow, i: usize, millis: i32) {
    guard_or(|| (), || r.set(i, Value::Time(millis)))
}
pub(crate) fn row_set_timestamp_ntz(r: &mut RRow, i: usize, millis: i64, nanos_of_milli: u32) {
    guard_or(|| (), || r.set(i, Value::Timestamp(Timestamp { millis, nanos_of_milli })))
}
pub(crate) fn row_set_timestamp_ltz(r: &mut RRow, i: usize, millis: i64, nanos_of_milli: u32) {
    guard_or(|| (), || r.set(i, Value::TimestampLtz(Timestamp { millis, nanos_of_milli })))
}

pub(crate) fn row_type_name(r: &RRow, i: usize) -> &str {
    guard_or(|| "", || r.get(i).type_name())
}
pub(crate) fn row_is_null(r: &RRow, i: usize) -> bool {
    r.get(i).is_null()
}
pub(crate) fn row_get_bool(r: &RRow, i: usize) -> bool {
    matches!(r.get(i), Value::Boolean(true))
}

/// Integers, dates, times, decimals (unscaled, truncated) and timestamps (epoch millis).
pub(crate) fn row_get_i64(r: &RRow, i: usize) -> i64 {
    match r.get(i) {
        Value::TinyInt(v) => *v as i64,
        Value::SmallInt(v) => *v as i64,
        Value::Int(v) | Value::Date(v) | Value::Time(v) => *v as i64,
        Value::BigInt(v) => *v,
        Value::Decimal(d) => d.unscaled as i64,
        Value::Timestamp(t) | Value::TimestampLtz(t) => t.millis,
        Value::Boolean(b) => *b as i64,
        _ => 0,
    }
}

pub(crate) fn row_get_f64(r: &RRow, i: usize) -> f64 {
    match r.get(i) {
        Value::Float(v) => *v as f64,
        Value::Double(v) => *v,
        _ => row_get_i64(r, i) as f64,
    }
}

pub(crate) fn row_get_str(r: &RRow, i: usize) -> &str {
    match r.get(i) {
        Value::String(s) => s,
        _ => "",
    }
}

pub(crate) fn row_get_bytes(r: &RRow, i: usize) -> &[u8] {
    match r.get(i) {
        Value::Bytes(b) => b,
        Value::String(s) => s.as_bytes(),
        _ => &[],
    }
}

pub(crate) fn row_to_string(r: &RRow, i: usize) -> String {
    guard_or(String::new, || row_to_string_inner(r, i))
}

fn row_to_string_inner(r: &RRow, i: usize) -> String {
    r.get(i).to_string()
}

// ----- ARRAY, MAP and ROW values: rows of their parts -----

/// The values of a part row (elements, keys, values, fields), noting its recorded bad input in
/// `r` (`what` names the part).
fn part(r: &mut RRow, i: usize, what: &str, p: &RRow) -> Vec<Value> {
    if let Some(m) = &p.bad {
        r.mark_bad(format!("field {i}: {what}: {m}"));
    }
    p.values.clone()
}

pub(crate) fn row_set_array(r: &mut RRow, i: usize, elements: &RRow) {
    guard_or(
        || (),
        || {
            let v = part(r, i, "the ARRAY elements", elements);
            r.set(i, Value::Array(v))
        },
    )
}

pub(crate) fn row_set_map(r: &mut RRow, i: usize, keys: &RRow, values: &RRow) {
    guard_or(
        || (),
        || {
            let (k, v) = (part(r, i, "the MAP keys", keys), part(r, i, "the MAP values", values));
            if k.len() != v.len() {
                r.mark_bad(format!("field {i}: a MAP needs as many values as keys, got {} keys and {} values", k.len(), v.len()));
                return r.set(i, Value::Null);
            }
            r.set(i, Value::Map(k.into_iter().zip(v).collect()))
        },
    )
}

pub(crate) fn row_set_row(r: &mut RRow, i: usize, fields: &RRow) {
    guard_or(
        || (),
        || {
            let v = part(r, i, "the ROW fields", fields);
            r.set(i, Value::Row(v))
        },
    )
}

/// A new row of `values`.
fn part_row(values: Vec<Value>) -> Box<RRow> {
    Box::new(RRow { values, bad: None })
}

pub(crate) fn row_get_array(r: &RRow, i: usize) -> Box<RRow> {
    guard_or(Box::default, || part_row(if let Value::Array(v) = r.get(i) { v.clone() } else { Vec::new() }))
}

pub(crate) fn row_get_map_keys(r: &RRow, i: usize) -> Box<RRow> {
    guard_or(Box::default, || part_row(if let Value::Map(m) = r.get(i) { m.iter().map(|(k, _)| k.clone()).collect() } else { Vec::new() }))
}

pub(crate) fn row_get_map_values(r: &RRow, i: usize) -> Box<RRow> {
    guard_or(Box::default, || part_row(if let Value::Map(m) = r.get(i) { m.iter().map(|(_, v)| v.clone()).collect() } else { Vec::new() }))
}

pub(crate) fn row_get_row(r: &RRow, i: usize) -> Box<RRow> {
    guard_or(Box::default, || part_row(if let Value::Row(v) = r.get(i) { v.clone() } else { Vec::new() }))
}

/// The core type of a C++ `TypeId` with its parameters.
pub(crate) fn data_type(type_id: i32, precision: i32, scale: i32) -> Result<DataType> {
    // CHAR and BINARY carry their length in `precision`.
    if let 14 | 15 = type_id {
        let length = u32::try_from(precision)
            .map_err(|_| Error::client(fluss_writer::ClientCode::InvalidTable, format!("length {precision} is out of range")))?;
        let t = if type_id == 14 { DataType::Char { length } } else { DataType::Binary { length } };
        t.validate()?;
        return Ok(t);
    }
    let p = u8::try_from(precision)
        .map_err(|_| Error::client(fluss_writer::ClientCode::InvalidTable, format!("precision {precision} is out of range")))?;
    let s =
        u8::try_from(scale).map_err(|_| Error::client(fluss_writer::ClientCode::InvalidTable, format!("scale {scale} is out of range")))?;
    let t = match type_id {
        0 => DataType::Boolean,
        1 => DataType::TinyInt,
        2 => DataType::SmallInt,
        3 => DataType::Int,
        4 => DataType::BigInt,
        5 => DataType::Float,
        6 => DataType::Double,
        7 => DataType::String,
        8 => DataType::Bytes,
        9 => DataType::decimal(p, s)?,
        10 => DataType::Date,
        11 => DataType::Time { precision: p },
        12 => DataType::Timestamp { precision: p },
        13 => DataType::TimestampLtz { precision: p },
        _ => return Err(Error::client(fluss_writer::ClientCode::InvalidTable, format!("unknown type id {type_id}"))),
    };
    t.validate()?;
    Ok(t)
}

/// How deep a C++ type may nest (an ARRAY of ARRAYs of ...): deeper is `INVALID_TABLE` (no real
/// schema comes close; the bound keeps the recursion below short).
const MAX_TYPE_DEPTH: usize = 64;

fn invalid_table(m: String) -> Error {
    Error::client(ClientCode::InvalidTable, m)
}

/// The core type of one node of a C++ type (a column's own type or a node below it, at
/// `place`): a scalar from its `TypeId` and parameters, an ARRAY, MAP or ROW from its
/// `child_count` children, taken from `rest` (the nodes below, in pre-order). A MAP key's
/// nullability is ignored (Fluss map keys are always NOT NULL); the names of an ARRAY element
/// and of a MAP key and value too.
fn node_type(
    place: &str,
    type_id: i32,
    precision: i32,
    scale: i32,
    child_count: usize,
    rest: &mut NodeIter<'_>,
    depth: usize,
) -> Result<DataType> {
    let expected = match type_id {
        16 => Some((1, "an ARRAY type has exactly one child (its element type)")),
        17 => Some((2, "a MAP type has exactly two children (its key and value types)")),
        18 => None,
        _ => Some((0, "only ARRAY, MAP and ROW types have children")),
    };
    if let Some((n, what)) = expected {
        if child_count != n {
            return Err(invalid_table(format!("{place}: {what}, got {child_count}")));
        }
    }
    if child_count > rest.len() {
        return Err(invalid_table(format!("{place}: {child_count} children but only {} type nodes follow", rest.len())));
    }
    if child_count > 0 && depth >= MAX_TYPE_DEPTH {
        return Err(invalid_table(format!("{place}: the type nests deeper than {MAX_TYPE_DEPTH} levels")));
    }
    let t = match type_id {
        16 => {
            let (nullable, t) = child(place, "element", rest, depth)?;
            DataType::Array { element: Box::new(Nested { data_type: t, nullable }) }
        }
        17 => {
            let (_, key) = child(place, "key", rest, depth)?;
            let (nullable, value) = child(place, "value", rest, depth)?;
            DataType::Map { key: Box::new(key), value: Box::new(Nested { data_type: value, nullable }) }
        }
        18 => {
            let mut fields = Vec::with_capacity(child_count);
            for _ in 0..child_count {
                let name = rest.as_slice().first().map(|n| n.name.clone()).unwrap_or_default();
                let (nullable, t) = child(place, &format!("field {name:?}"), rest, depth)?;
                fields.push(RowField { name, data_type: t, nullable });
            }
            // The parts were checked at their own nodes; this checks the field names.
            let t = DataType::Row { fields };
            t.validate().map_err(|e| invalid_table(format!("{place}: {}", e.message())))?;
            t
        }
        _ => data_type(type_id, precision, scale).map_err(|e| invalid_table(format!("{place}: {}", e.message())))?,
    };
    Ok(t)
}

type NodeIter<'a> = std::slice::Iter<'a, FfiTypeNode>;

/// The next node of `rest` as the child `what` of the node at `place`: its nullability and type.
fn child(place: &str, what: &str, rest: &mut NodeIter<'_>, depth: usize) -> Result<(bool, DataType)> {
    let n = rest.next().ok_or_else(|| invalid_table(format!("{place}: the type nodes end before its {what}")))?;
    let t = node_type(&format!("{place} {what}"), n.type_id, n.precision, n.scale, n.child_count, rest, depth + 1)?;
    Ok((n.nullable, t))
}

/// A C++ column as a core column (its type rebuilt from the flattened nodes and validated).
fn column(c: &FfiColumn) -> Result<Column> {
    let place = format!("column {:?}", c.name);
    let mut rest = c.nested.iter();
    let t = node_type(&place, c.type_id, c.precision, c.scale, c.child_count, &mut rest, 0)?;
    if rest.len() > 0 {
        return Err(invalid_table(format!("{place}: {} type nodes are left over after its type", rest.len())));
    }
    let mut col = Column::new(c.name.clone(), t);
    col.nullable = c.nullable;
    if !c.comment.is_empty() {
        col.comment = Some(c.comment.clone());
    }
    if !c.agg_function.is_empty() {
        if c.agg_param_keys.len() != c.agg_param_values.len() {
            return Err(invalid_table(format!("{place}: aggregation parameter keys and values differ in number")));
        }
        let mut f = fluss_writer::AggFunction::new(&c.agg_function)?;
        f.params = c.agg_param_keys.iter().cloned().zip(c.agg_param_values.iter().cloned()).collect();
        col.agg_function = Some(f);
    } else if !c.agg_param_keys.is_empty() {
        return Err(invalid_table(format!("{place}: aggregation parameters without an aggregation function")));
    }
    Ok(col)
}

/// C++ columns as core columns.
pub(crate) fn columns(cols: &[FfiColumn]) -> Result<Vec<Column>> {
    cols.iter().map(column).collect()
}

/// A core descriptor from the C++ one.
pub(crate) fn descriptor(d: &FfiDescriptor) -> Result<TableDescriptor> {
    let schema = Schema::new(columns(&d.columns)?, d.primary_key.clone())?;
    let mut t = TableDescriptor::new(schema);
    if d.bucket_count > 0 {
        t = t.with_bucket_count(d.bucket_count);
    }
    if !d.bucket_keys.is_empty() {
        t = t.with_bucket_key(d.bucket_keys.iter().cloned());
    }
    if d.property_keys.len() != d.property_values.len() {
        return Err(Error::internal("property keys and values differ in length"));
    }
    for (k, v) in d.property_keys.iter().zip(&d.property_values) {
        t = t.with_property(k.clone(), v.clone());
    }
    if !d.comment.is_empty() {
        t.comment = Some(d.comment.clone());
    }
    if !d.partition_keys.is_empty() {
        t = t.with_partition_keys(d.partition_keys.iter().cloned());
    }
    Ok(t)
}

/// The C++ `TypeId` number and parameters of a core type (the inverse of [`data_type`]; the match
/// is exhaustive, so a type added to the core fails to compile here until it has a `TypeId`).
/// ARRAY, MAP and ROW are 16, 17 and 18; their parts are nodes ([`push_children`]).
fn ffi_type(t: &DataType) -> (i32, i32, i32) {
    match *t {
        DataType::Boolean => (0, 0, 0),
        DataType::TinyInt => (1, 0, 0),
        DataType::SmallInt => (2, 0, 0),
        DataType::Int => (3, 0, 0),
        DataType::BigInt => (4, 0, 0),
        DataType::Float => (5, 0, 0),
        DataType::Double => (6, 0, 0),
        DataType::String => (7, 0, 0),
        DataType::Bytes => (8, 0, 0),
        DataType::Decimal { precision, scale } => (9, precision.into(), scale.into()),
        DataType::Date => (10, 0, 0),
        DataType::Time { precision } => (11, precision.into(), 0),
        DataType::Timestamp { precision } => (12, precision.into(), 0),
        DataType::TimestampLtz { precision } => (13, precision.into(), 0),
        DataType::Char { length } => (14, length as i32, 0),
        DataType::Binary { length } => (15, length as i32, 0),
        DataType::Array { .. } => (16, 0, 0),
        DataType::Map { .. } => (17, 0, 0),
        DataType::Row { .. } => (18, 0, 0),
    }
}

/// How many children the node of `t` has (element; key and value; fields).
fn child_count(t: &DataType) -> usize {
    match t {
        DataType::Array { .. } => 1,
        DataType::Map { .. } => 2,
        DataType::Row { fields } => fields.len(),
        _ => 0,
    }
}

/// The children of `t` (and theirs) in pre-order: the inverse of [`node_type`].
fn push_children(t: &DataType, out: &mut Vec<FfiTypeNode>) {
    let mut push = |name: &str, t: &DataType, nullable: bool| {
        let (type_id, precision, scale) = ffi_type(t);
        out.push(FfiTypeNode { name: name.to_string(), type_id, precision, scale, nullable, child_count: child_count(t) });
        push_children(t, out);
    };
    match t {
        DataType::Array { element } => push("element", &element.data_type, element.nullable),
        DataType::Map { key, value } => {
            push("key", key, false);
            push("value", &value.data_type, value.nullable);
        }
        DataType::Row { fields } => fields.iter().for_each(|f| push(&f.name, &f.data_type, f.nullable)),
        _ => {}
    }
}

/// A core column for C++ (the inverse of [`column`]).
pub(crate) fn ffi_column(c: &Column) -> FfiColumn {
    let (type_id, precision, scale) = ffi_type(&c.data_type);
    let mut nested = Vec::new();
    push_children(&c.data_type, &mut nested);
    FfiColumn {
        name: c.name.clone(),
        type_id,
        precision,
        scale,
        nullable: c.nullable,
        child_count: child_count(&c.data_type),
        nested,
        comment: c.comment.clone().unwrap_or_default(),
        agg_function: c.agg_function.as_ref().map(|f| f.name.clone()).unwrap_or_default(),
        agg_param_keys: c.agg_function.iter().flat_map(|f| f.params.keys().cloned()).collect(),
        agg_param_values: c.agg_function.iter().flat_map(|f| f.params.values().cloned()).collect(),
    }
}

fn split_map<'a>(m: impl IntoIterator<Item = (&'a String, &'a String)>) -> (Vec<String>, Vec<String>) {
    m.into_iter().map(|(k, v)| (k.clone(), v.clone())).unzip()
}

/// A core descriptor for C++ (the inverse of [`descriptor`]; `custom_properties` travel apart).
fn ffi_descriptor(d: &TableDescriptor) -> FfiDescriptor {
    let (property_keys, property_values) = split_map(&d.properties);
    FfiDescriptor {
        columns: d.schema.columns().iter().map(ffi_column).collect(),
        primary_key: d.schema.primary_key().to_vec(),
        bucket_count: d.bucket_count.unwrap_or(0),
        bucket_keys: d.bucket_key.clone(),
        partition_keys: d.partition_keys.clone(),
        property_keys,
        property_values,
        comment: d.comment.clone().unwrap_or_default(),
    }
}

/// The core's `TableInfo` for C++ (`Admin::GetTableInfo`).
pub(crate) fn ffi_table_info(info: &TableInfo) -> FfiTableInfo {
    let (custom_property_keys, custom_property_values) = split_map(&info.descriptor.custom_properties);
    FfiTableInfo {
        database: info.path.database.clone(),
        table: info.path.table.clone(),
        table_id: info.table_id,
        schema_id: info.schema_id,
        descriptor: ffi_descriptor(&info.descriptor),
        custom_property_keys,
        custom_property_values,
        created_time: info.created_time,
        modified_time: info.modified_time,
    }
}
