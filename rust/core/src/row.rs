//! Row values: [`Value`] (one datum) and [`Row`] (a full row in schema order).
//!
//! A row handed to a writer is checked against the table schema before anything is accepted:
//! field count, each value's type, and nulls in NOT NULL columns. [`check_value`] is the one
//! place that rule lives; every encoder calls it.

use crate::error::{Error, Result};
use crate::metadata::{Column, DataType, Schema};

/// A DECIMAL value: the unscaled integer plus precision and scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decimal {
    /// The value times 10^scale.
    pub unscaled: i128,
    /// Total digits, 1..=38.
    pub precision: u8,
    /// Digits after the point.
    pub scale: u8,
}

/// Why a number cannot be a DECIMAL of a given scale ([`Decimal::from_digits`],
/// [`Decimal::from_integer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecimalError {
    /// It has non-zero digits beyond the scale: decimals are never rounded implicitly.
    TooManyFractionalDigits,
    /// Its unscaled value does not fit in 128 bits.
    DoesNotFit,
}

impl Decimal {
    /// The decimal `±digits × 10^exponent` at `scale` (digits most significant first, each
    /// 0..=9), exactly: trailing fractional zeros beyond the scale are dropped, any other digit
    /// beyond it is [`DecimalError::TooManyFractionalDigits`]. Whether it fits `precision` is
    /// checked with the row, like every value. The rule every binding converts decimals with.
    pub fn from_digits(negative: bool, digits: &[u8], exponent: i64, precision: u8, scale: u8) -> Result<Decimal, DecimalError> {
        let pow = |n: i64| u32::try_from(n).ok().and_then(|n| 10i128.checked_pow(n)).ok_or(DecimalError::DoesNotFit);
        let shift = exponent.saturating_add(scale as i64);
        let mut digits = digits;
        if shift < 0 {
            let cut = digits.len().saturating_sub(shift.unsigned_abs().min(usize::MAX as u64) as usize);
            if digits[cut..].iter().any(|&d| d != 0) {
                return Err(DecimalError::TooManyFractionalDigits);
            }
            digits = &digits[..cut];
        }
        let mut v: i128 = 0;
        for &d in digits {
            v = v.checked_mul(10).and_then(|v| v.checked_add(d as i128)).ok_or(DecimalError::DoesNotFit)?;
        }
        if shift > 0 {
            v = v.checked_mul(pow(shift)?).ok_or(DecimalError::DoesNotFit)?;
        }
        Ok(Decimal { unscaled: if negative { -v } else { v }, precision, scale })
    }

    /// The integer `v` as a DECIMAL of `scale` (unscaled `v × 10^scale`).
    pub fn from_integer(v: i128, precision: u8, scale: u8) -> Result<Decimal, DecimalError> {
        let f = 10i128.checked_pow(scale as u32).ok_or(DecimalError::DoesNotFit)?;
        Ok(Decimal { unscaled: v.checked_mul(f).ok_or(DecimalError::DoesNotFit)?, precision, scale })
    }
}

/// A timestamp as Fluss stores it: epoch milliseconds plus nanoseconds within the millisecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp {
    /// Milliseconds since 1970-01-01T00:00:00 (UTC for TIMESTAMP_LTZ).
    pub millis: i64,
    /// 0..=999_999
    pub nanos_of_milli: u32,
}

impl Timestamp {
    /// From epoch milliseconds.
    pub fn from_millis(millis: i64) -> Timestamp {
        Timestamp { millis, nanos_of_milli: 0 }
    }

    /// From epoch microseconds.
    pub fn from_micros(micros: i64) -> Timestamp {
        Timestamp { millis: micros.div_euclid(1000), nanos_of_milli: (micros.rem_euclid(1000) * 1000) as u32 }
    }

    /// From epoch nanoseconds.
    pub fn from_nanos(nanos: i64) -> Timestamp {
        Timestamp { millis: nanos.div_euclid(1_000_000), nanos_of_milli: nanos.rem_euclid(1_000_000) as u32 }
    }

    /// From epoch seconds.
    pub fn from_seconds(s: i64) -> Timestamp {
        Timestamp::from_millis(s * 1000)
    }

    /// Total nanoseconds since the epoch (saturating).
    pub fn as_nanos(&self) -> i64 {
        self.millis.saturating_mul(1_000_000).saturating_add(self.nanos_of_milli as i64)
    }

    /// Total microseconds since the epoch (saturating).
    pub fn as_micros(&self) -> i64 {
        self.millis.saturating_mul(1000).saturating_add((self.nanos_of_milli / 1000) as i64)
    }
}

/// One datum.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// NULL.
    Null,
    /// A BOOLEAN.
    Boolean(bool),
    /// A TINYINT.
    TinyInt(i8),
    /// A SMALLINT.
    SmallInt(i16),
    /// An INT.
    Int(i32),
    /// A BIGINT.
    BigInt(i64),
    /// A FLOAT.
    Float(f32),
    /// A DOUBLE.
    Double(f64),
    /// A STRING.
    String(String),
    /// A BYTES value.
    Bytes(Vec<u8>),
    /// A DECIMAL.
    Decimal(Decimal),
    /// Days since 1970-01-01.
    Date(i32),
    /// Milliseconds of the day.
    Time(i32),
    /// A TIMESTAMP (without time zone).
    Timestamp(Timestamp),
    /// A TIMESTAMP_LTZ (an instant).
    TimestampLtz(Timestamp),
    /// An ARRAY: the elements in order (NULL elements as [`Value::Null`]).
    Array(Vec<Value>),
    /// A MAP: the entries in order, as Fluss keeps them (not sorted; keys are never NULL).
    Map(Vec<(Value, Value)>),
    /// A ROW: one value per field, in field order.
    Row(Vec<Value>),
}

impl Value {
    /// Whether this is NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Short type name for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Boolean(_) => "BOOLEAN",
            Value::TinyInt(_) => "TINYINT",
            Value::SmallInt(_) => "SMALLINT",
            Value::Int(_) => "INT",
            Value::BigInt(_) => "BIGINT",
            Value::Float(_) => "FLOAT",
            Value::Double(_) => "DOUBLE",
            Value::String(_) => "STRING",
            Value::Bytes(_) => "BYTES",
            Value::Decimal(_) => "DECIMAL",
            Value::Date(_) => "DATE",
            Value::Time(_) => "TIME",
            Value::Timestamp(_) => "TIMESTAMP",
            Value::TimestampLtz(_) => "TIMESTAMP_LTZ",
            Value::Array(_) => "ARRAY",
            Value::Map(_) => "MAP",
            Value::Row(_) => "ROW",
        }
    }
}

/// A value as text: numbers in decimal, strings as they are (quoted inside ARRAY, MAP and ROW
/// values), bytes in hex, DECIMAL as `<unscaled>e-<scale>`, timestamps as `<millis>ms+<nanos>ns`,
/// `null`; ARRAY as `[a, b]`, MAP as `{k: v}`, ROW as `(a, b)`. The C++ binding's `to_string`.
impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn inner(v: &Value, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match v {
                Value::String(s) => write!(f, "{s:?}"),
                v => write!(f, "{v}"),
            }
        }
        fn list<'a>(f: &mut std::fmt::Formatter<'_>, items: impl Iterator<Item = &'a Value>) -> std::fmt::Result {
            for (i, x) in items.enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                inner(x, f)?;
            }
            Ok(())
        }
        match self {
            Value::Null => f.write_str("null"),
            Value::Boolean(v) => write!(f, "{v}"),
            Value::TinyInt(v) => write!(f, "{v}"),
            Value::SmallInt(v) => write!(f, "{v}"),
            Value::Int(v) | Value::Date(v) | Value::Time(v) => write!(f, "{v}"),
            Value::BigInt(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Double(v) => write!(f, "{v}"),
            Value::String(s) => f.write_str(s),
            Value::Bytes(b) => b.iter().try_for_each(|x| write!(f, "{x:02x}")),
            Value::Decimal(d) => write!(f, "{}e-{}", d.unscaled, d.scale),
            Value::Timestamp(t) | Value::TimestampLtz(t) => write!(f, "{}ms+{}ns", t.millis, t.nanos_of_milli),
            Value::Array(items) => {
                f.write_str("[")?;
                list(f, items.iter())?;
                f.write_str("]")
            }
            Value::Map(entries) => {
                f.write_str("{")?;
                for (i, (k, x)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    inner(k, f)?;
                    f.write_str(": ")?;
                    inner(x, f)?;
                }
                f.write_str("}")
            }
            Value::Row(values) => {
                f.write_str("(")?;
                list(f, values.iter())?;
                f.write_str(")")
            }
        }
    }
}

macro_rules! from_prim {
    ($t:ty, $v:ident) => {
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                Value::$v(x)
            }
        }
    };
}
from_prim!(bool, Boolean);
from_prim!(i8, TinyInt);
from_prim!(i16, SmallInt);
from_prim!(i32, Int);
from_prim!(i64, BigInt);
from_prim!(f32, Float);
from_prim!(f64, Double);
from_prim!(String, String);
from_prim!(Vec<u8>, Bytes);
from_prim!(Decimal, Decimal);

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Value {
        o.map_or(Value::Null, Into::into)
    }
}

/// A full row in schema order (the `GenericRow` of the official clients).
pub type Row = Vec<Value>;

/// Build a [`Row`] from heterogeneous values: `row![1, "a", None::<i64>]`.
#[macro_export]
macro_rules! row {
    ($($v:expr),* $(,)?) => {{
        #[allow(clippy::useless_vec)]
        let row: $crate::Row = vec![$($crate::Value::from($v)),*];
        row
    }};
}

/// Check one value against its column: the type must match exactly and NOT NULL columns take no
/// null. A CHAR(n) value has at most n characters (code points; shorter values are kept as they
/// are, not padded) and a BINARY(n) value exactly n bytes. DECIMAL values must fit the column's
/// precision and carry its scale; timestamps must
/// have `nanos_of_milli < 1_000_000`. ARRAY, MAP and ROW values are checked to the bottom: no
/// NULL where the element, value or field type is NOT NULL, no NULL map key, one value per ROW
/// field. Errors name the column and the place inside it (`column "tags"[2]`, `column "r".a`,
/// `column "m"{"k"}`).
#[inline]
pub fn check_value(col: &Column, v: &Value) -> Result<()> {
    let at = Place { parent: None, step: Step::Column(&col.name) };
    if v.is_null() {
        return if col.nullable { Ok(()) } else { Err(Error::invalid_row(format!("{at} is NOT NULL but the value is null"))) };
    }
    if plain_match(&col.data_type, v) {
        return Ok(());
    }
    if col.data_type.is_nested() || matches!(v, Value::Array(_) | Value::Map(_) | Value::Row(_)) {
        return check_at(&at, &col.data_type, true, v);
    }
    check_scalar(&at, &col.data_type, v)
}

/// Whether a non-null value fits its type with nothing more to check (the common case, kept
/// inline on the append path).
#[inline(always)]
fn plain_match(t: &DataType, v: &Value) -> bool {
    matches!(
        (t, v),
        (DataType::Boolean, Value::Boolean(_))
            | (DataType::TinyInt, Value::TinyInt(_))
            | (DataType::SmallInt, Value::SmallInt(_))
            | (DataType::Int, Value::Int(_))
            | (DataType::BigInt, Value::BigInt(_))
            | (DataType::Float, Value::Float(_))
            | (DataType::Double, Value::Double(_))
            | (DataType::String, Value::String(_))
            | (DataType::Bytes, Value::Bytes(_))
            | (DataType::Date, Value::Date(_))
    )
}

/// Where a value sits, built on the stack while the check descends (no allocation unless an
/// error is written): `column "deep"[0].b{"x"}[1]`.
struct Place<'a> {
    parent: Option<&'a Place<'a>>,
    step: Step<'a>,
}

enum Step<'a> {
    Column(&'a str),
    Element(usize),
    Key(usize),
    Value(&'a Value),
    Field(&'a str),
}

impl std::fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(p) = self.parent {
            write!(f, "{p}")?;
        }
        match self.step {
            Step::Column(name) => write!(f, "column {name:?}"),
            Step::Element(i) => write!(f, "[{i}]"),
            Step::Key(i) => write!(f, " key {i}"),
            Step::Value(k) => write!(f, "{{{}}}", brief(k)),
            Step::Field(name) => write!(f, ".{name}"),
        }
    }
}

/// The rule of [`check_value`] for a non-null scalar value at `at`.
fn check_scalar(at: &Place<'_>, t: &DataType, v: &Value) -> Result<()> {
    let mismatch = || Error::invalid_row(format!("{at} is {t} but the value is {}", v.type_name()));
    if plain_match(t, v) {
        return Ok(());
    }
    match (t, v) {
        (DataType::Char { length }, Value::String(s)) => match char_excess(s, *length) {
            None => Ok(()),
            Some(n) => Err(Error::invalid_row(format!("{at} is CHAR({length}) but the value has {n} characters"))),
        },
        (DataType::Binary { length }, Value::Bytes(b)) => {
            if b.len() as u64 == u64::from(*length) {
                Ok(())
            } else {
                Err(Error::invalid_row(format!("{at} is BINARY({length}) but the value has {} bytes", b.len())))
            }
        }
        (DataType::Time { .. }, Value::Time(ms)) => {
            if (0..86_400_000).contains(ms) {
                Ok(())
            } else {
                Err(Error::invalid_row(format!("{at}: TIME value {ms} ms is outside one day")))
            }
        }
        (DataType::Timestamp { .. }, Value::Timestamp(ts)) | (DataType::TimestampLtz { .. }, Value::TimestampLtz(ts)) => {
            if ts.nanos_of_milli < 1_000_000 {
                Ok(())
            } else {
                Err(Error::invalid_row(format!("{at}: nanos_of_milli {} >= 1000000", ts.nanos_of_milli)))
            }
        }
        (DataType::Decimal { precision, scale }, Value::Decimal(d)) => {
            if d.scale != *scale {
                return Err(Error::invalid_row(format!("{at} is {t} but the value has scale {}", d.scale)));
            }
            if decimal_digits(d.unscaled) > *precision as u32 {
                return Err(Error::invalid_row(format!("{at} is {t}: unscaled value {} has more than {precision} digits", d.unscaled)));
            }
            Ok(())
        }
        _ => Err(mismatch()),
    }
}

/// The number of characters of `s` when it has more than CHAR(`length`) allows, else `None`.
/// Characters are Unicode code points (Fluss's `BinaryString.numChars`, Flink's and Paimon's
/// CHAR(n)); a value of at most `length` bytes is never counted.
#[inline]
pub(crate) fn char_excess(s: &str, length: u32) -> Option<usize> {
    if s.len() as u64 <= u64::from(length) {
        return None;
    }
    let n = s.chars().count();
    (n as u64 > u64::from(length)).then_some(n)
}

/// Check `v` (of type `t`, NULL allowed when `nullable`) at `at`, descending into ARRAY, MAP and
/// ROW values.
fn check_at(at: &Place<'_>, t: &DataType, nullable: bool, v: &Value) -> Result<()> {
    if v.is_null() {
        return if nullable { Ok(()) } else { Err(Error::invalid_row(format!("{at} is {t} NOT NULL but the value is null"))) };
    }
    let child = |step| Place { parent: Some(at), step };
    match (t, v) {
        (DataType::Array { element }, Value::Array(items)) => {
            for (i, x) in items.iter().enumerate() {
                check_at(&child(Step::Element(i)), &element.data_type, element.nullable, x)?;
            }
        }
        (DataType::Map { key, value }, Value::Map(entries)) => {
            if let Some((i, j)) = duplicate_key(key, entries) {
                return Err(Error::invalid_row(format!(
                    "{at}: entries {i} and {j} have the same key {} (map keys must be unique)",
                    brief(&entries[j].0)
                )));
            }
            for (i, (k, x)) in entries.iter().enumerate() {
                if k.is_null() {
                    return Err(Error::invalid_row(format!("{at}: the key of entry {i} is null (map keys cannot be null)")));
                }
                check_at(&child(Step::Key(i)), key, false, k)?;
                check_at(&child(Step::Value(k)), &value.data_type, value.nullable, x)?;
            }
        }
        (DataType::Row { fields }, Value::Row(values)) => {
            if values.len() != fields.len() {
                return Err(Error::invalid_row(format!("{at} is {t}: the value has {} fields, the type {}", values.len(), fields.len())));
            }
            for (f, x) in fields.iter().zip(values) {
                check_at(&child(Step::Field(&f.name)), &f.data_type, f.nullable, x)?;
            }
        }
        (DataType::Array { .. } | DataType::Map { .. } | DataType::Row { .. }, _)
        | (_, Value::Array(_) | Value::Map(_) | Value::Row(_)) => {
            return Err(Error::invalid_row(format!("{at} is {t} but the value is {}", v.type_name())));
        }
        _ => check_scalar(at, t, v)?,
    }
    Ok(())
}

/// The first two entries with equal keys (floats compare by their bits, as Java's `Map` does).
/// Small maps compare pairwise; larger ones by the keys' encoded bytes.
/// Whether two values are the same datum: `==`, except that floating-point values, at any depth,
/// compare by their bits as their encodings do (0.0 and -0.0 differ; a NaN is itself). The rule
/// for map keys and for partition-key values.
pub(crate) fn same_datum(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Double(x), Value::Double(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) | (Value::Row(x), Value::Row(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_datum(a, b))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((ka, va), (kb, vb))| same_datum(ka, kb) && same_datum(va, vb))
        }
        _ => a == b,
    }
}

fn duplicate_key(t: &DataType, entries: &[(Value, Value)]) -> Option<(usize, usize)> {
    if entries.len() <= 16 {
        for j in 1..entries.len() {
            if let Some(i) = (0..j).find(|&i| same_datum(&entries[i].0, &entries[j].0)) {
                return Some((i, j));
            }
        }
        return None;
    }
    let mut seen = std::collections::HashMap::with_capacity(entries.len());
    for (j, (k, _)) in entries.iter().enumerate() {
        let at = Place { parent: None, step: Step::Column("") };
        if k.is_null() || check_at(&at, t, false, k).is_err() {
            continue; // reported by the caller's check with its place
        }
        let mut bytes = Vec::new();
        crate::wire::compacted::encode_value(t, k, &mut bytes);
        if let Some(i) = seen.insert(bytes, j) {
            return Some((i, j));
        }
    }
    None
}

/// A short form of a map key for error paths.
fn brief(v: &Value) -> String {
    let s = match v {
        Value::String(s) => format!("{s:?}"),
        Value::Int(x) => x.to_string(),
        Value::BigInt(x) => x.to_string(),
        Value::SmallInt(x) => x.to_string(),
        Value::TinyInt(x) => x.to_string(),
        Value::Boolean(x) => x.to_string(),
        other => other.type_name().to_string(),
    };
    if s.len() > 40 {
        format!("{}…", &s[..s.char_indices().nth(39).map_or(s.len(), |(i, _)| i)])
    } else {
        s
    }
}

fn decimal_digits(v: i128) -> u32 {
    let mut n = v.unsigned_abs();
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Check a full row against a schema: field count, then every value.
pub fn check_row(schema: &Schema, row: &[Value]) -> Result<()> {
    if row.len() != schema.len() {
        return Err(Error::invalid_row(format!("the row has {} fields but the table has {} columns", row.len(), schema.len())));
    }
    for (c, v) in schema.columns().iter().zip(row) {
        check_value(c, v)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Schema {
        Schema::builder()
            .column_not_null("id", DataType::Int)
            .column("name", DataType::String)
            .column("d", DataType::Decimal { precision: 5, scale: 2 })
            .build()
            .unwrap()
    }

    #[test]
    fn accepts_matching_rows() {
        let d = Decimal { unscaled: 12345, precision: 5, scale: 2 };
        check_row(&schema(), &row![1, "x", d]).unwrap();
        check_row(&schema(), &row![1, None::<String>, Value::Null]).unwrap();
    }

    #[test]
    fn rejects_bad_rows_with_clear_messages() {
        let e = check_row(&schema(), &row![1, "x"]).unwrap_err();
        assert!(e.message().contains("2 fields but the table has 3"), "{e}");
        let e = check_row(&schema(), &row![Value::Null, "x", Value::Null]).unwrap_err();
        assert!(e.message().contains("NOT NULL"), "{e}");
        let e = check_row(&schema(), &row![1i64, "x", Value::Null]).unwrap_err();
        assert!(e.message().contains("is INT but the value is BIGINT"), "{e}");
        let big = Decimal { unscaled: 123456, precision: 6, scale: 2 };
        assert!(check_row(&schema(), &row![1, "x", big]).is_err());
        let wrong_scale = Decimal { unscaled: 1, precision: 5, scale: 1 };
        assert!(check_row(&schema(), &row![1, "x", wrong_scale]).is_err());
        assert_eq!(e.code(), crate::ClientCode::InvalidRow as i32);
    }

    /// CHAR(n) takes at most n characters (Unicode code points, not bytes and not UTF-16
    /// units), at the column and at any depth; shorter values are fine as they are.
    #[test]
    fn char_values_have_at_most_n_characters() {
        use crate::metadata::{Nested, RowField};
        let c3 = Column::new("c", DataType::Char { length: 3 });
        for ok in ["", "a", "abc", "日本語", "😀😀😀", "é\u{301}"] {
            check_value(&c3, &Value::String(ok.into())).unwrap();
        }
        for (bad, n) in [("abcd", 4), ("日本語!", 4), ("😀😀😀😀", 4)] {
            let e = check_value(&c3, &Value::String(bad.into())).unwrap_err();
            assert_eq!(e.code(), crate::ClientCode::InvalidRow as i32);
            assert_eq!(e.message(), format!("column \"c\" is CHAR(3) but the value has {n} characters"));
        }
        let nested = Column::new(
            "n",
            DataType::Array {
                element: Box::new(Nested::nullable(DataType::Map {
                    key: Box::new(DataType::Char { length: 1 }),
                    value: Box::new(Nested::nullable(DataType::Row { fields: vec![RowField::new("c", DataType::Char { length: 2 })] })),
                })),
            },
        );
        let v =
            |k: &str, c: &str| Value::Array(vec![Value::Map(vec![(Value::String(k.into()), Value::Row(vec![Value::String(c.into())]))])]);
        check_value(&nested, &v("k", "ab")).unwrap();
        let e = check_value(&nested, &v("kk", "ab")).unwrap_err();
        assert_eq!(e.message(), "column \"n\"[0] key 0 is CHAR(1) but the value has 2 characters");
        let e = check_value(&nested, &v("k", "abc")).unwrap_err();
        assert_eq!(e.message(), "column \"n\"[0]{\"k\"}.c is CHAR(2) but the value has 3 characters");
    }

    /// Map keys are the same when their bytes would be: floating-point values by their bits,
    /// also inside ROW keys (a proptest found ROW keys that differ only by 0.0 and -0.0 refused).
    #[test]
    fn map_keys_compare_floats_by_bits_at_any_depth() {
        use crate::metadata::{Nested, RowField};
        let key = DataType::Row { fields: vec![RowField::not_null("x", DataType::Double)] };
        let col = Column::new("m", DataType::Map { key: Box::new(key), value: Box::new(Nested::nullable(DataType::Int)) });
        let map = |a: f64, b: f64| {
            Value::Map(vec![(Value::Row(vec![Value::Double(a)]), Value::Int(1)), (Value::Row(vec![Value::Double(b)]), Value::Int(2))])
        };
        check_value(&col, &map(0.0, -0.0)).unwrap();
        check_value(&col, &map(f64::NAN, 1.0)).unwrap();
        let e = check_value(&col, &map(-0.0, -0.0)).unwrap_err();
        assert!(e.message().contains("entries 0 and 1 have the same key"), "{e}");
        let e = check_value(&col, &map(f64::NAN, f64::NAN)).unwrap_err();
        assert!(e.message().contains("entries 0 and 1 have the same key"), "{e}");
    }

    #[test]
    fn timestamps_split_into_millis_and_nanos() {
        assert_eq!(Timestamp::from_micros(-1), Timestamp { millis: -1, nanos_of_milli: 999_000 });
        assert_eq!(Timestamp::from_nanos(1_500_000_123), Timestamp { millis: 1500, nanos_of_milli: 123 });
        assert_eq!(Timestamp::from_nanos(1_500_000_123).as_nanos(), 1_500_000_123);
    }

    #[test]
    fn decimals_from_digits_and_integers_exactly() {
        let d = |neg, digits: &[u8], exp, scale| Decimal::from_digits(neg, digits, exp, 10, scale).map(|d| d.unscaled);
        assert_eq!(d(false, &[1, 2, 3, 4, 5], -2, 2), Ok(12345)); // 123.45 at scale 2
        assert_eq!(d(true, &[1, 2, 3, 4, 5], -2, 4), Ok(-1234500)); // -123.45 at scale 4
        assert_eq!(d(false, &[1, 2, 0, 0], -3, 1), Ok(12)); // 1.200 at scale 1: trailing zeros drop
        assert_eq!(d(false, &[1, 2, 5], -3, 1), Err(DecimalError::TooManyFractionalDigits)); // 0.125
        assert_eq!(d(false, &[7], 3, 0), Ok(7000)); // 7E+3
        assert_eq!(d(false, &[1], 40, 0), Err(DecimalError::DoesNotFit));
        assert_eq!(d(false, &[9; 40], 0, 0), Err(DecimalError::DoesNotFit));
        assert_eq!(d(false, &[], 0, 2), Ok(0));
        assert_eq!(d(false, &[1], i64::MIN, 2), Err(DecimalError::TooManyFractionalDigits));
        assert_eq!(d(false, &[1], i64::MAX, 2), Err(DecimalError::DoesNotFit));
        assert_eq!(Decimal::from_integer(-42, 10, 3).map(|d| d.unscaled), Ok(-42000));
        assert_eq!(Decimal::from_integer(i128::MAX / 10, 38, 2), Err(DecimalError::DoesNotFit));
    }
}
