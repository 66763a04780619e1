//! Conversion of Python values to the core's [`Value`]s (by column type, with range checks) and
//! back, and of type names and Arrow schemas to the core's [`DataType`]s.
//!
//! Accepted Python types per column type (anything else is `InvalidRowTypeError`, a
//! `TypeError`; a value of the right type that does not fit is `InvalidRowError`, a
//! `ValueError`); `None` is null everywhere (NOT NULL columns refuse it):
//!
//! | column | Python |
//! |---|---|
//! | BOOLEAN | `bool` |
//! | TINYINT .. BIGINT | `int` (not `bool`; anything with `__index__`), range-checked |
//! | FLOAT, DOUBLE | `float` or `int` |
//! | STRING, CHAR(n) | `str` |
//! | BYTES, BINARY(n) | `bytes`, `bytearray`, `memoryview` (BINARY: exactly n bytes) |
//! | DECIMAL(p, s) | `decimal.Decimal` (no rounding: more than `s` fractional digits is an error) or `int` |
//! | DATE | `datetime.date` (not a `datetime`) |
//! | TIME | `datetime.time` (stored in milliseconds; sub-millisecond digits are truncated) |
//! | TIMESTAMP | naive `datetime.datetime` |
//! | TIMESTAMP_LTZ | timezone-aware `datetime.datetime` (converted to UTC) |
//! | ARRAY<T> | `list` or `tuple` of T values (`None` where T is nullable) |
//! | MAP<K, V> | `dict`, or a `list`/`tuple` of `(key, value)` pairs (order kept; keys never `None`) |
//! | ROW<...> | `dict` by field name (missing fields are null) or `tuple`/`list` of every field in order |
//!
//! Read back (`from_value`), ARRAY is a `list`, MAP a `dict` (a list of `(key, value)` tuples
//! when a key is unhashable, such as a list), ROW a `tuple`.

use arrow_schema::Schema as ArrowSchema;
use fluss_writer::{Column, DataType, Decimal, DecimalError, Schema, Timestamp, Value};
use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMemoryView, PyString, PyTuple, PyType};

use crate::error::{invalid_row, wrong_type};

struct PyTypes {
    date: Py<PyType>,
    datetime: Py<PyType>,
    time: Py<PyType>,
    timedelta: Py<PyType>,
    decimal: Py<PyType>,
    utc: Py<PyAny>,
}

static TYPES: PyOnceLock<PyTypes> = PyOnceLock::new();

fn types(py: Python<'_>) -> &PyTypes {
    TYPES.get_or_init(py, || {
        let dt = py.import("datetime").expect("datetime");
        let dec = py.import("decimal").expect("decimal");
        let t = |m: &Bound<'_, PyModule>, n: &str| m.getattr(n).expect(n).cast_into::<PyType>().expect(n).unbind();
        PyTypes {
            date: t(&dt, "date"),
            datetime: t(&dt, "datetime"),
            time: t(&dt, "time"),
            timedelta: t(&dt, "timedelta"),
            decimal: t(&dec, "Decimal"),
            utc: dt.getattr("timezone").and_then(|tz| tz.getattr("utc")).expect("utc").unbind(),
        }
    })
}

/// A Python str as UTF-8; a str that is not valid Unicode (a lone surrogate, as
/// `surrogateescape` decoding produces) cannot be written anywhere, so it is turned into the
/// caller's error (`what` names the place: a column, a key, a table name) instead of a bare
/// `UnicodeEncodeError`.
pub fn utf8<'a>(s: &'a Bound<'_, PyString>, what: &str, err: impl FnOnce(String) -> PyErr) -> PyResult<std::borrow::Cow<'a, str>> {
    match s.to_cow() {
        Ok(c) => Ok(c),
        Err(_) => {
            let mut shown = s.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into());
            if shown.chars().count() > 80 {
                shown = shown.chars().take(77).collect::<String>() + "...";
            }
            let at = s.to_string_lossy().chars().position(|c| c == char::REPLACEMENT_CHARACTER);
            let at = at.map(|i| format!(" (a lone surrogate at index {i})")).unwrap_or_default();
            Err(err(format!("{what}: {shown} is not valid Unicode{at}; it cannot be encoded as UTF-8")))
        }
    }
}

/// A name (database, table, column, key) given as a Python str: not valid Unicode is
/// `InvalidTableError` naming the argument.
pub struct Name(pub String);

impl<'a, 'py> FromPyObject<'a, 'py> for Name {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let s = obj
            .cast::<PyString>()
            .map_err(|_| pyo3::exceptions::PyTypeError::new_err(format!("a name must be a str, not {}", type_name(&obj))))?;
        Ok(Name(utf8(&s, "a name", |m| crate::error::client(fluss_writer::ClientCode::InvalidTable, m))?.into_owned()))
    }
}

/// `Vec<Name>` as `Vec<String>`.
pub fn names(v: Vec<Name>) -> Vec<String> {
    v.into_iter().map(|n| n.0).collect()
}

/// A column name of a partial update: not valid Unicode is `InvalidRowError`.
pub struct ColumnName(pub String);

impl<'a, 'py> FromPyObject<'a, 'py> for ColumnName {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let s = obj.cast::<PyString>().map_err(|_| wrong_type(format!("a column name must be a str, not {}", type_name(&obj))))?;
        Ok(ColumnName(utf8(&s, "a column name", invalid_row)?.into_owned()))
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

/// Where a value goes: a column, or a place inside an ARRAY, MAP or ROW column (`tags[2]`,
/// `r.a`), with its type; built on the stack while the conversion descends (its name is only
/// formed for an error). Errors name it like a column.
#[derive(Clone, Copy)]
pub struct Place<'a> {
    parent: Option<&'a Place<'a>>,
    step: Step<'a>,
    data_type: &'a DataType,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Column(&'a str),
    Element(usize),
    Key(usize),
    Value(&'a Bound<'a, PyAny>),
    Field(&'a str),
}

impl<'a> Place<'a> {
    fn child(&'a self, step: Step<'a>, data_type: &'a DataType) -> Place<'a> {
        Place { parent: Some(self), step, data_type }
    }

    /// The place's name for messages: the column name, or the path inside it.
    fn name(&self) -> std::borrow::Cow<'a, str> {
        match (self.parent, self.step) {
            (None, Step::Column(n)) => std::borrow::Cow::Borrowed(n),
            _ => std::borrow::Cow::Owned(self.to_string()),
        }
    }
}

impl std::fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(p) = self.parent {
            write!(f, "{p}")?;
        }
        match self.step {
            Step::Column(n) => f.write_str(n),
            Step::Element(i) => write!(f, "[{i}]"),
            Step::Key(i) => write!(f, " key {i}"),
            Step::Value(k) => write!(f, "[{k}]"),
            Step::Field(n) => write!(f, ".{n}"),
        }
    }
}

fn mismatch(col: Place<'_>, obj: &Bound<'_, PyAny>, want: &str) -> PyErr {
    wrong_type(format!("column {:?} is {} and takes {want}, not {}", col.name(), col.data_type, type_name(obj)))
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn get_i64(obj: &Bound<'_, PyAny>, attr: &str) -> PyResult<i64> {
    obj.getattr(attr)?.extract()
}

fn date_days(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    Ok(days_from_civil(get_i64(obj, "year")?, get_i64(obj, "month")?, get_i64(obj, "day")?))
}

/// Microseconds since the epoch of the wall-clock fields of a datetime (ignoring tzinfo).
fn wall_micros(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    let days = date_days(obj)?;
    let secs = days * 86_400 + get_i64(obj, "hour")? * 3600 + get_i64(obj, "minute")? * 60 + get_i64(obj, "second")?;
    Ok(secs * 1_000_000 + get_i64(obj, "microsecond")?)
}

fn timedelta_micros(td: &Bound<'_, PyAny>) -> PyResult<i64> {
    Ok((get_i64(td, "days")? * 86_400 + get_i64(td, "seconds")?) * 1_000_000 + get_i64(td, "microseconds")?)
}

fn extra_nanos(obj: &Bound<'_, PyAny>) -> i64 {
    // pandas.Timestamp carries nanoseconds beyond the microsecond.
    obj.getattr("nanosecond").and_then(|n| n.extract::<i64>()).unwrap_or(0)
}

fn int_value(col: Place<'_>, obj: &Bound<'_, PyAny>, lo: i64, hi: i64) -> PyResult<i64> {
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyFloat>() {
        return Err(mismatch(col, obj, "int"));
    }
    let v: i64 = match obj.extract::<i64>() {
        Ok(v) => v,
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
            return Err(invalid_row(format!("column {:?} is {}: {} is out of range", col.name(), col.data_type, obj)))
        }
        Err(_) => return Err(mismatch(col, obj, "int")),
    };
    if v < lo || v > hi {
        return Err(invalid_row(format!("column {:?} is {}: {v} is out of range [{lo}, {hi}]", col.name(), col.data_type)));
    }
    Ok(v)
}

fn decimal_value(col: Place<'_>, obj: &Bound<'_, PyAny>, precision: u8, scale: u8) -> PyResult<Value> {
    let py = obj.py();
    let too_big = || invalid_row(format!("column {:?} is {}: {} does not fit", col.name(), col.data_type, obj));
    let fractional = || {
        invalid_row(format!(
            "column {:?} is {}: {} has more than {scale} fractional digits (no implicit rounding)",
            col.name(),
            col.data_type,
            obj
        ))
    };
    let converted = if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        let v: i128 = obj.extract().map_err(|_| too_big())?;
        Decimal::from_integer(v, precision, scale)
    } else if obj.is_instance(types(py).decimal.bind(py))? {
        let t = obj.call_method0("as_tuple")?;
        let (sign, digits, exp): (i64, Vec<u8>, Bound<'_, PyAny>) = t.extract()?;
        let Ok(exp) = exp.extract::<i64>() else {
            return Err(invalid_row(format!("column {:?} is {}: {} is not a finite number", col.name(), col.data_type, obj)));
        };
        Decimal::from_digits(sign == 1, &digits, exp, precision, scale)
    } else {
        return Err(mismatch(col, obj, "decimal.Decimal or int"));
    };
    match converted {
        Ok(d) => Ok(Value::Decimal(d)),
        Err(DecimalError::TooManyFractionalDigits) => Err(fractional()),
        Err(DecimalError::DoesNotFit) => Err(too_big()),
    }
}

/// One Python value for one column.
pub fn to_value(col: &Column, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    value_at(Place { parent: None, step: Step::Column(&col.name), data_type: &col.data_type }, obj)
}

/// A sequence given as a list or tuple (not a str, bytes or dict).
fn items<'py>(obj: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    if let Ok(l) = obj.cast::<PyList>() {
        Some(l.iter().collect())
    } else {
        obj.cast::<PyTuple>().ok().map(|t| t.iter().collect())
    }
}

/// One Python value for the place `col` (nulls are checked by the core, with the whole row).
fn value_at(col: Place<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    let py = obj.py();
    Ok(match *col.data_type {
        DataType::Array { ref element } => {
            let Some(xs) = items(obj) else { return Err(mismatch(col, obj, "list or tuple")) };
            Value::Array(
                xs.iter()
                    .enumerate()
                    .map(|(i, x)| value_at(col.child(Step::Element(i), &element.data_type), x))
                    .collect::<PyResult<_>>()?,
            )
        }
        DataType::Map { ref key, ref value } => {
            let entry = |i: usize, k: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>| -> PyResult<(Value, Value)> {
                Ok((value_at(col.child(Step::Key(i), key), k)?, value_at(col.child(Step::Value(k), &value.data_type), v)?))
            };
            if let Ok(d) = obj.cast::<PyDict>() {
                Value::Map(d.iter().enumerate().map(|(i, (k, v))| entry(i, &k, &v)).collect::<PyResult<_>>()?)
            } else if let Some(pairs) = items(obj) {
                let mut entries = Vec::with_capacity(pairs.len());
                for (i, p) in pairs.iter().enumerate() {
                    match items(p).filter(|kv| kv.len() == 2) {
                        Some(kv) => entries.push(entry(i, &kv[0], &kv[1])?),
                        None => return Err(mismatch(col, obj, "dict or list of (key, value) pairs")),
                    }
                }
                Value::Map(entries)
            } else {
                return Err(mismatch(col, obj, "dict or list of (key, value) pairs"));
            }
        }
        DataType::Row { ref fields } => {
            if let Ok(d) = obj.cast::<PyDict>() {
                let mut values = vec![Value::Null; fields.len()];
                for (k, v) in d.iter() {
                    let name = k.cast::<PyString>().map_err(|_| {
                        wrong_type(format!("column {:?}: ROW dict keys must be field names (str), not {}", col.name(), type_name(&k)))
                    })?;
                    let name = utf8(name, "a ROW field name", invalid_row)?;
                    let Some(i) = fields.iter().position(|f| f.name == *name) else {
                        return Err(invalid_row(format!("column {:?} is {}: it has no field {name:?}", col.name(), col.data_type)));
                    };
                    values[i] = value_at(col.child(Step::Field(&fields[i].name), &fields[i].data_type), &v)?;
                }
                Value::Row(values)
            } else if let Some(xs) = items(obj) {
                if xs.len() != fields.len() {
                    return Err(invalid_row(format!(
                        "column {:?} is {}: the value has {} fields, the type {}",
                        col.name(),
                        col.data_type,
                        xs.len(),
                        fields.len()
                    )));
                }
                Value::Row(
                    fields
                        .iter()
                        .zip(&xs)
                        .map(|(f, x)| value_at(col.child(Step::Field(&f.name), &f.data_type), x))
                        .collect::<PyResult<_>>()?,
                )
            } else {
                return Err(mismatch(col, obj, "dict, tuple or list"));
            }
        }
        DataType::Boolean => {
            if !obj.is_instance_of::<PyBool>() {
                return Err(mismatch(col, obj, "bool"));
            }
            Value::Boolean(obj.is_truthy()?)
        }
        DataType::TinyInt => Value::TinyInt(int_value(col, obj, i8::MIN as i64, i8::MAX as i64)? as i8),
        DataType::SmallInt => Value::SmallInt(int_value(col, obj, i16::MIN as i64, i16::MAX as i64)? as i16),
        DataType::Int => Value::Int(int_value(col, obj, i32::MIN as i64, i32::MAX as i64)? as i32),
        DataType::BigInt => Value::BigInt(int_value(col, obj, i64::MIN, i64::MAX)?),
        DataType::Float | DataType::Double => {
            if obj.is_instance_of::<PyBool>() || !(obj.is_instance_of::<PyFloat>() || obj.is_instance_of::<PyInt>()) {
                return Err(mismatch(col, obj, "float or int"));
            }
            // An int beyond the range of a double raises OverflowError in the conversion.
            let v: f64 =
                obj.extract().map_err(|_| invalid_row(format!("column {:?} is {}: {} is out of range", col.name(), col.data_type, obj)))?;
            if *col.data_type == DataType::Float {
                if v.is_finite() && v.abs() > f32::MAX as f64 {
                    return Err(invalid_row(format!("column {:?} is FLOAT: {v} is out of range", col.name())));
                }
                Value::Float(v as f32)
            } else {
                Value::Double(v)
            }
        }
        DataType::String | DataType::Char { .. } => match obj.cast::<PyString>() {
            Ok(s) => Value::String(utf8(s, &format!("column {:?} is {}", col.name(), col.data_type), invalid_row)?.into_owned()),
            Err(_) => return Err(mismatch(col, obj, "str")),
        },
        DataType::Bytes | DataType::Binary { .. } => {
            if let Ok(b) = obj.cast::<PyBytes>() {
                Value::Bytes(b.as_bytes().to_vec())
            } else if let Ok(b) = obj.cast::<PyByteArray>() {
                Value::Bytes(b.to_vec())
            } else if let Ok(m) = obj.cast::<PyMemoryView>() {
                Value::Bytes(m.call_method0("tobytes")?.cast::<PyBytes>()?.as_bytes().to_vec())
            } else {
                return Err(mismatch(col, obj, "bytes, bytearray or memoryview"));
            }
        }
        DataType::Decimal { precision, scale } => decimal_value(col, obj, precision, scale)?,
        DataType::Date => {
            let t = types(py);
            if !obj.is_instance(t.date.bind(py))? || obj.is_instance(t.datetime.bind(py))? {
                return Err(mismatch(col, obj, "datetime.date"));
            }
            Value::Date(date_days(obj)? as i32)
        }
        DataType::Time { .. } => {
            if !obj.is_instance(types(py).time.bind(py))? {
                return Err(mismatch(col, obj, "datetime.time"));
            }
            let ms = get_i64(obj, "hour")? * 3_600_000
                + get_i64(obj, "minute")? * 60_000
                + get_i64(obj, "second")? * 1000
                + get_i64(obj, "microsecond")? / 1000;
            Value::Time(ms as i32)
        }
        DataType::Timestamp { .. } | DataType::TimestampLtz { .. } => {
            if !obj.is_instance(types(py).datetime.bind(py))? {
                return Err(mismatch(col, obj, "datetime.datetime"));
            }
            let offset = obj.call_method0("utcoffset")?;
            let ltz = matches!(*col.data_type, DataType::TimestampLtz { .. });
            match (ltz, offset.is_none()) {
                (false, false) => {
                    return Err(invalid_row(format!(
                        "column {:?} is {} (no time zone) but the datetime is timezone-aware; pass a naive datetime or use TIMESTAMP_LTZ",
                        col.name(),
                        col.data_type
                    )))
                }
                (true, true) => {
                    return Err(invalid_row(format!(
                        "column {:?} is {} (an instant) but the datetime is naive; pass a timezone-aware datetime",
                        col.name(),
                        col.data_type
                    )))
                }
                _ => {}
            }
            let mut micros = wall_micros(obj)?;
            if ltz {
                micros -= timedelta_micros(&offset)?;
            }
            let nanos = micros.checked_mul(1000).map(|n| n + extra_nanos(obj));
            let ts = match nanos {
                Some(n) => Timestamp::from_nanos(n),
                None => Timestamp::from_micros(micros),
            };
            if ltz {
                Value::TimestampLtz(ts)
            } else {
                Value::Timestamp(ts)
            }
        }
    })
}

/// A row given as a dict (by column name; missing columns are null, unknown ones an error), a
/// list or a tuple (exactly one value per column, in schema order).
pub fn row_from_py(schema: &Schema, obj: &Bound<'_, PyAny>) -> PyResult<Vec<Value>> {
    crate::entry::maybe_test_panic();
    let cols = schema.columns();
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut row = vec![Value::Null; cols.len()];
        for (k, v) in d.iter() {
            let name =
                k.cast::<PyString>().map_err(|_| wrong_type(format!("row keys must be column names (str), not {}", type_name(&k))))?;
            let name = utf8(name, "a row key", invalid_row)?;
            let name: &str = &name;
            let i = schema.index_of(name).ok_or_else(|| {
                invalid_row(format!(
                    "unknown column {name:?} (the table has {})",
                    cols.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
                ))
            })?;
            row[i] = to_value(&cols[i], &v)?;
        }
        return Ok(row);
    }
    let seq_len = |n: usize| {
        if n != cols.len() {
            Err(invalid_row(format!("the row has {n} fields but the table has {} columns", cols.len())))
        } else {
            Ok(())
        }
    };
    if let Ok(t) = obj.cast::<PyTuple>() {
        seq_len(t.len())?;
        return cols.iter().zip(t.iter()).map(|(c, v)| to_value(c, &v)).collect();
    }
    if let Ok(l) = obj.cast::<PyList>() {
        seq_len(l.len())?;
        return cols.iter().zip(l.iter()).map(|(c, v)| to_value(c, &v)).collect();
    }
    Err(wrong_type(format!("a row must be a dict, list or tuple, not {}", type_name(obj))))
}

/// A primary key given as a dict (at least the key columns, by name; other known columns are
/// ignored) or a list/tuple of the key values in primary-key order.
pub fn key_from_py(schema: &Schema, obj: &Bound<'_, PyAny>) -> PyResult<Vec<Value>> {
    crate::entry::maybe_test_panic();
    let pk = schema.primary_key_indexes();
    let cols = schema.columns();
    if let Ok(d) = obj.cast::<PyDict>() {
        for k in d.keys() {
            let k = k.cast_into::<PyString>().map_err(|_| wrong_type("key dict keys must be column names (str)"))?;
            let name = utf8(&k, "a key's column name", invalid_row)?;
            if schema.index_of(&name).is_none() {
                return Err(invalid_row(format!("unknown column {name:?}")));
            }
        }
        return pk
            .iter()
            .map(|&i| match d.get_item(&cols[i].name)? {
                Some(v) => to_value(&cols[i], &v),
                None => Err(invalid_row(format!("the key lacks primary-key column {:?}", cols[i].name))),
            })
            .collect();
    }
    let items: Vec<Bound<'_, PyAny>> = if let Ok(t) = obj.cast::<PyTuple>() {
        t.iter().collect()
    } else if let Ok(l) = obj.cast::<PyList>() {
        l.iter().collect()
    } else {
        return Err(wrong_type(format!("a key must be a dict, list or tuple, not {}", type_name(obj))));
    };
    if items.len() != pk.len() {
        return Err(invalid_row(format!("the key has {} values but the primary key has {} columns", items.len(), pk.len())));
    }
    pk.iter().zip(items.iter()).map(|(&i, v)| to_value(&cols[i], v)).collect()
}

/// A core value as a Python object.
pub fn from_value<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    let t = types(py);
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Boolean(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::TinyInt(x) => x.into_pyobject(py)?.into_any(),
        Value::SmallInt(x) => x.into_pyobject(py)?.into_any(),
        Value::Int(x) => x.into_pyobject(py)?.into_any(),
        Value::BigInt(x) => x.into_pyobject(py)?.into_any(),
        Value::Float(x) => x.into_pyobject(py)?.into_any(),
        Value::Double(x) => x.into_pyobject(py)?.into_any(),
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Bytes(b) => PyBytes::new(py, b).into_any(),
        Value::Decimal(d) => t.decimal.bind(py).call1((format!("{}E-{}", d.unscaled, d.scale),))?,
        Value::Date(days) => t.date.bind(py).call_method1("fromordinal", (*days as i64 + 719_163,))?,
        Value::Time(ms) => {
            let ms = *ms as i64;
            t.time.bind(py).call1((ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000 * 1000))?
        }
        Value::Timestamp(ts) | Value::TimestampLtz(ts) => {
            let ltz = matches!(v, Value::TimestampLtz(_));
            let epoch = if ltz {
                t.datetime.bind(py).call1((1970, 1, 1, 0, 0, 0, 0, t.utc.bind(py)))?
            } else {
                t.datetime.bind(py).call1((1970, 1, 1))?
            };
            let td = t.timedelta.bind(py).call1((0, 0, ts.as_micros()))?;
            epoch.call_method1("__add__", (td,))?
        }
        Value::Array(items) => PyList::new(py, items.iter().map(|x| from_value(py, x)).collect::<PyResult<Vec<_>>>()?)?.into_any(),
        Value::Row(values) => PyTuple::new(py, values.iter().map(|x| from_value(py, x)).collect::<PyResult<Vec<_>>>()?)?.into_any(),
        // A dict, or a list of (key, value) tuples when a key cannot be a dict key (a list).
        Value::Map(entries) => {
            let pairs = entries.iter().map(|(k, x)| Ok((from_value(py, k)?, from_value(py, x)?))).collect::<PyResult<Vec<_>>>()?;
            let d = PyDict::new(py);
            if pairs.iter().all(|(k, _)| k.hash().is_ok()) {
                for (k, x) in &pairs {
                    d.set_item(k, x)?;
                }
                d.into_any()
            } else {
                PyList::new(py, pairs.into_iter().map(|(k, x)| PyTuple::new(py, [k, x])).collect::<PyResult<Vec<_>>>()?)?.into_any()
            }
        }
    })
}

// ===== types =====

/// Parse a type name (the core's rule, `DataType::parse`).
pub fn parse_type(s: &str) -> PyResult<DataType> {
    DataType::parse(s).map_err(crate::error::to_py)
}

/// Columns of an Arrow schema (the core's rule, `Schema::columns_from_arrow`).
pub fn columns_from_arrow(s: &ArrowSchema) -> PyResult<Vec<Column>> {
    fluss_writer::Schema::columns_from_arrow(s).map_err(crate::error::to_py)
}
