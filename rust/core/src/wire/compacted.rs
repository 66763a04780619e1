//! CompactedRow, the value-row format of primary-key tables (`table.kv.format=COMPACTED`,
//! docs/wire-format.md, "Compacted rows"), and the per-field encodings that the compacted key
//! format ("Key encoding", see [`super::key`]) shares.
//!
//! A row is a null bitset of `ceil(fields / 8)` bytes (bit `i % 8` of byte `i / 8` set = field
//! `i` is null), then every non-null field in schema order:
//!
//! | Type | Encoding |
//! |---|---|
//! | BOOLEAN, TINYINT | 1 byte |
//! | SMALLINT | 2 bytes LE |
//! | INT, DATE (days), TIME (ms of day) | varint of the 32-bit pattern |
//! | BIGINT | varint of the 64-bit pattern |
//! | FLOAT, DOUBLE | 4 / 8 bytes IEEE-754 LE |
//! | STRING, BYTES | varint length + bytes |
//! | DECIMAL(p ≤ 18) | unscaled value as a BIGINT varint |
//! | DECIMAL(p > 18) | varint length + minimal big-endian two's complement (`BigInteger.toByteArray`) |
//! | TIMESTAMP[_LTZ](p ≤ 3) | epoch millis as a BIGINT varint |
//! | TIMESTAMP[_LTZ](p > 3) | epoch millis BIGINT varint, then nanos of the milli as an INT varint |
//!
//! Like Java's `CompactedRowWriter`, a TIMESTAMP(p) with p ≤ 3 keeps only the milliseconds and
//! one with p > 3 keeps the nanos of the millisecond exactly as given, even beyond p digits.

use super::corrupt;
use super::varint::{get_u32, get_u64, put_u32, put_u64};
use crate::error::{Error, Result};
use crate::metadata::{DataType, Schema};
use crate::row::{check_value, Decimal, Row, Timestamp, Value};

/// Largest DECIMAL precision stored as a compact BIGINT varint.
pub const MAX_COMPACT_DECIMAL_PRECISION: u8 = 18;
/// Largest TIMESTAMP precision stored as millis only.
pub const MAX_COMPACT_TIMESTAMP_PRECISION: u8 = 3;

/// Bytes of the null bitset of a row with `fields` fields.
#[inline]
pub fn null_bitset_len(fields: usize) -> usize {
    fields.div_ceil(8)
}

/// Check `row` against `schema` (field count, then every value with [`check_value`]) and append
/// its CompactedRow bytes to `out`. One pass; on error nothing is left appended.
pub fn encode_row(schema: &Schema, row: &[Value], out: &mut Vec<u8>) -> Result<()> {
    let n = schema.len();
    if row.len() != n {
        return Err(Error::invalid_row(format!("the row has {} fields but the table has {n} columns", row.len())));
    }
    let start = out.len();
    let bitset = null_bitset_len(n);
    out.resize(start + bitset, 0);
    for (i, (col, v)) in schema.columns().iter().zip(row).enumerate() {
        if let Err(e) = check_value(col, v) {
            out.truncate(start);
            return Err(e);
        }
        if v.is_null() {
            out[start + i / 8] |= 1 << (i % 8);
        } else {
            encode_value(&col.data_type, v, out);
        }
    }
    Ok(())
}

/// Append the encoding of one non-null value of type `t`. The value must already have passed
/// [`check_value`] for a column of that type; a value of another type is a bug in the caller
/// and panics.
pub fn encode_value(t: &DataType, v: &Value, out: &mut Vec<u8>) {
    match (t, v) {
        (DataType::Boolean, Value::Boolean(b)) => out.push(*b as u8),
        (DataType::TinyInt, Value::TinyInt(x)) => out.push(*x as u8),
        (DataType::SmallInt, Value::SmallInt(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (DataType::Int, Value::Int(x)) | (DataType::Date, Value::Date(x)) | (DataType::Time { .. }, Value::Time(x)) => {
            put_u32(out, *x as u32)
        }
        (DataType::BigInt, Value::BigInt(x)) => put_u64(out, *x as u64),
        (DataType::Float, Value::Float(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (DataType::Double, Value::Double(x)) => out.extend_from_slice(&x.to_le_bytes()),
        // CHAR and BINARY are written like STRING and BYTES (Fluss 0.9.1's CompactedRowWriter).
        (DataType::String | DataType::Char { .. }, Value::String(s)) => put_bytes(out, s.as_bytes()),
        (DataType::Bytes | DataType::Binary { .. }, Value::Bytes(b)) => put_bytes(out, b),
        (DataType::Decimal { precision, .. }, Value::Decimal(d)) => {
            if *precision <= MAX_COMPACT_DECIMAL_PRECISION {
                put_u64(out, d.unscaled as i64 as u64);
            } else {
                put_bytes(out, minimal_be_bytes(&d.unscaled.to_be_bytes()));
            }
        }
        (DataType::Timestamp { precision }, Value::Timestamp(ts)) | (DataType::TimestampLtz { precision }, Value::TimestampLtz(ts)) => {
            put_u64(out, ts.millis as u64);
            if *precision > MAX_COMPACT_TIMESTAMP_PRECISION {
                put_u32(out, ts.nanos_of_milli);
            }
        }
        // A varint length, then the BinaryArray, BinaryMap or nested CompactedRow (the length
        // is known only afterwards: reserve one byte and move the bytes when it needs more).
        (DataType::Array { .. } | DataType::Map { .. } | DataType::Row { .. }, _) => {
            let at = out.len();
            out.push(0);
            super::nested::write_nested(t, v, out);
            let len = out.len() - at - 1;
            if len < 0x80 {
                out[at] = len as u8;
            } else {
                let mut prefix = Vec::with_capacity(5);
                put_u32(&mut prefix, len as u32);
                out.splice(at..at + 1, prefix);
            }
        }
        _ => panic!("encode_value: a {} value for a {t} field (the value was not checked)", v.type_name()),
    }
}

#[inline]
fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u32(out, b.len() as u32);
    out.extend_from_slice(b);
}

/// The shortest big-endian two's-complement form of a 16-byte number, as Java's
/// `BigInteger.toByteArray` writes it (at least one byte).
pub(crate) fn minimal_be_bytes(be: &[u8; 16]) -> &[u8] {
    &be[redundant_sign_bytes(be)..]
}

/// How many leading bytes of a big-endian two's-complement number carry no information
/// (Java's `BigInteger.toByteArray` keeps exactly one sign bit; at least one byte remains).
fn redundant_sign_bytes(be: &[u8; 16]) -> usize {
    let mut skip = 0;
    while skip < 15 {
        let (b, next) = (be[skip], be[skip + 1]);
        if (b == 0x00 && next & 0x80 == 0) || (b == 0xFF && next & 0x80 != 0) {
            skip += 1;
        } else {
            break;
        }
    }
    skip
}

/// Decode a CompactedRow of `schema`. The bytes must hold exactly one row.
pub fn decode_row(schema: &Schema, bytes: &[u8]) -> Result<Row> {
    let n = schema.len();
    let bitset = null_bitset_len(n);
    if bytes.len() < bitset {
        return Err(corrupt(format!("compacted row of {} bytes is shorter than its null bitset", bytes.len())));
    }
    let mut pos = bitset;
    let mut row = Vec::with_capacity(n);
    for (i, col) in schema.columns().iter().enumerate() {
        if bytes[i / 8] & (1 << (i % 8)) != 0 {
            row.push(Value::Null);
        } else {
            row.push(decode_value(&col.data_type, bytes, &mut pos).map_err(|e| e.context(format!("column {:?}", col.name)))?);
        }
    }
    if pos != bytes.len() {
        return Err(corrupt(format!("{} trailing bytes after a compacted row", bytes.len() - pos)));
    }
    Ok(row)
}

fn take<'a>(buf: &'a [u8], pos: &mut usize, n: usize) -> Result<&'a [u8]> {
    let end = pos.checked_add(n).filter(|&e| e <= buf.len()).ok_or_else(|| corrupt("truncated compacted value"))?;
    let s = &buf[*pos..end];
    *pos = end;
    Ok(s)
}

fn take_var<'a>(buf: &'a [u8], pos: &mut usize) -> Result<&'a [u8]> {
    let len = get_u32(buf, pos)? as usize;
    take(buf, pos, len)
}

/// Decode one non-null value of type `t` at `*pos`, advancing `pos`.
pub fn decode_value(t: &DataType, buf: &[u8], pos: &mut usize) -> Result<Value> {
    Ok(match *t {
        DataType::Boolean => match take(buf, pos, 1)?[0] {
            0 => Value::Boolean(false),
            1 => Value::Boolean(true),
            b => return Err(corrupt(format!("BOOLEAN byte {b:#04x}"))),
        },
        DataType::TinyInt => Value::TinyInt(take(buf, pos, 1)?[0] as i8),
        DataType::SmallInt => Value::SmallInt(i16::from_le_bytes(take(buf, pos, 2)?.try_into().unwrap())),
        DataType::Int => Value::Int(get_u32(buf, pos)? as i32),
        DataType::Date => Value::Date(get_u32(buf, pos)? as i32),
        DataType::Time { .. } => Value::Time(get_u32(buf, pos)? as i32),
        DataType::BigInt => Value::BigInt(get_u64(buf, pos)? as i64),
        DataType::Float => Value::Float(f32::from_le_bytes(take(buf, pos, 4)?.try_into().unwrap())),
        DataType::Double => Value::Double(f64::from_le_bytes(take(buf, pos, 8)?.try_into().unwrap())),
        DataType::String | DataType::Char { .. } => {
            let b = take_var(buf, pos)?;
            Value::String(std::str::from_utf8(b).map_err(|e| corrupt(format!("STRING is not UTF-8: {e}")))?.to_owned())
        }
        DataType::Bytes | DataType::Binary { .. } => Value::Bytes(take_var(buf, pos)?.to_vec()),
        DataType::Decimal { precision, scale } => {
            let unscaled = if precision <= MAX_COMPACT_DECIMAL_PRECISION {
                get_u64(buf, pos)? as i64 as i128
            } else {
                decimal_from_be(precision, take_var(buf, pos)?)?
            };
            Value::Decimal(Decimal { unscaled, precision, scale })
        }
        DataType::Timestamp { precision } => Value::Timestamp(decode_timestamp(precision, buf, pos)?),
        DataType::TimestampLtz { precision } => Value::TimestampLtz(decode_timestamp(precision, buf, pos)?),
        DataType::Array { .. } | DataType::Map { .. } | DataType::Row { .. } => super::nested::read_nested(t, take_var(buf, pos)?)?,
    })
}

/// The unscaled value of a DECIMAL(p > 18) from its minimal big-endian two's-complement bytes.
pub(crate) fn decimal_from_be(precision: u8, b: &[u8]) -> Result<i128> {
    if b.is_empty() || b.len() > 16 {
        return Err(corrupt(format!("DECIMAL({precision}) of {} bytes", b.len())));
    }
    let fill = if b[0] & 0x80 != 0 { 0xFF } else { 0x00 };
    let mut be = [fill; 16];
    be[16 - b.len()..].copy_from_slice(b);
    Ok(i128::from_be_bytes(be))
}

fn decode_timestamp(precision: u8, buf: &[u8], pos: &mut usize) -> Result<Timestamp> {
    let millis = get_u64(buf, pos)? as i64;
    let nanos_of_milli = if precision > MAX_COMPACT_TIMESTAMP_PRECISION { get_u32(buf, pos)? } else { 0 };
    if nanos_of_milli >= 1_000_000 {
        return Err(corrupt(format!("timestamp nanos_of_milli {nanos_of_milli} >= 1000000")));
    }
    Ok(Timestamp { millis, nanos_of_milli })
}

#[cfg(test)]
#[allow(clippy::useless_vec)] // `row![..]` builds a Vec; tests pass it as a slice
pub(crate) mod tests {
    use super::*;
    use crate::metadata::Column;
    use proptest::prelude::*;

    fn enc(schema: &Schema, row: &[Value]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_row(schema, row, &mut out).unwrap();
        out
    }

    fn one(t: DataType, v: Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode_value(&t, &v, &mut out);
        out
    }

    fn dec(p: u8, s: u8, unscaled: i128) -> Value {
        Value::Decimal(Decimal { unscaled, precision: p, scale: s })
    }

    #[test]
    fn worked_example_value_row() {
        let schema = Schema::builder()
            .column_not_null("id", DataType::Int)
            .column("name", DataType::String)
            .column("age", DataType::BigInt)
            .primary_key(["id"])
            .build()
            .unwrap();
        let bytes = enc(&schema, &crate::row![1, "Alice", 30i64]);
        assert_eq!(bytes, [0x00, 0x01, 0x05, 0x41, 0x6c, 0x69, 0x63, 0x65, 0x1e]);
        assert_eq!(decode_row(&schema, &bytes).unwrap(), crate::row![1, "Alice", 30i64]);
    }

    #[test]
    fn null_bitset_is_lsb_first_and_nulls_take_no_bytes() {
        let cols: Vec<Column> = (0..10).map(|i| Column::new(format!("c{i}"), DataType::TinyInt)).collect();
        let schema = Schema::new(cols, vec![]).unwrap();
        let mut row: Row = (0..10).map(|i| Value::TinyInt(i as i8)).collect();
        row[0] = Value::Null;
        row[3] = Value::Null;
        row[9] = Value::Null;
        let bytes = enc(&schema, &row);
        assert_eq!(bytes, [0b0000_1001, 0b0000_0010, 1, 2, 4, 5, 6, 7, 8]);
        assert_eq!(decode_row(&schema, &bytes).unwrap(), row);
    }

    #[test]
    fn fixed_encodings_of_every_type() {
        assert_eq!(one(DataType::Boolean, Value::Boolean(true)), [1]);
        assert_eq!(one(DataType::TinyInt, Value::TinyInt(-2)), [0xfe]);
        assert_eq!(one(DataType::SmallInt, Value::SmallInt(-2)), [0xfe, 0xff]);
        assert_eq!(one(DataType::SmallInt, Value::SmallInt(0x1234)), [0x34, 0x12]);
        assert_eq!(one(DataType::Int, Value::Int(-1)), [0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(one(DataType::Date, Value::Date(19_000)), [0xb8, 0x94, 0x01]);
        assert_eq!(one(DataType::Time { precision: 3 }, Value::Time(1000)), [0xe8, 0x07]);
        assert_eq!(one(DataType::BigInt, Value::BigInt(-1)).len(), 10);
        assert_eq!(one(DataType::Float, Value::Float(1.5)), 1.5f32.to_le_bytes());
        assert_eq!(one(DataType::Double, Value::Double(-0.25)), (-0.25f64).to_le_bytes());
        assert_eq!(one(DataType::String, Value::String("ab".into())), [0x02, b'a', b'b']);
        assert_eq!(one(DataType::String, Value::String(String::new())), [0x00]);
        assert_eq!(one(DataType::Bytes, Value::Bytes(vec![0, 0xff])), [0x02, 0x00, 0xff]);
    }

    #[test]
    fn decimals_compact_and_big_integer_bytes() {
        assert_eq!(one(DataType::Decimal { precision: 10, scale: 2 }, dec(10, 2, 12345)), [0xb9, 0x60]);
        assert_eq!(one(DataType::Decimal { precision: 18, scale: 0 }, dec(18, 0, -1)).len(), 10);
        let t = DataType::Decimal { precision: 38, scale: 4 };
        // BigInteger.toByteArray: minimal two's complement with one sign bit.
        assert_eq!(one(t.clone(), dec(38, 4, 0)), [0x01, 0x00]);
        assert_eq!(one(t.clone(), dec(38, 4, 127)), [0x01, 0x7f]);
        assert_eq!(one(t.clone(), dec(38, 4, 128)), [0x02, 0x00, 0x80]);
        assert_eq!(one(t.clone(), dec(38, 4, 255)), [0x02, 0x00, 0xff]);
        assert_eq!(one(t.clone(), dec(38, 4, -1)), [0x01, 0xff]);
        assert_eq!(one(t.clone(), dec(38, 4, -128)), [0x01, 0x80]);
        assert_eq!(one(t.clone(), dec(38, 4, -129)), [0x02, 0xff, 0x7f]);
        assert_eq!(one(t.clone(), dec(38, 4, 65536)), [0x03, 0x01, 0x00, 0x00]);
        let max = 10i128.pow(38) - 1;
        let bytes = one(t.clone(), dec(38, 4, max));
        assert_eq!(bytes[0], 16);
        assert_eq!(&bytes[1..], &max.to_be_bytes());
        for v in [0, 1, -1, 127, 128, -128, -129, 1 << 70, -(1 << 70), max, -max] {
            let b = one(t.clone(), dec(38, 4, v));
            assert_eq!(decode_value(&t, &b, &mut 0).unwrap(), dec(38, 4, v), "{v}");
        }
    }

    #[test]
    fn timestamps_by_precision() {
        let ts = Timestamp { millis: 1_700_000_000_123, nanos_of_milli: 456_789 };
        for p in [0u8, 3] {
            let b = one(DataType::Timestamp { precision: p }, Value::Timestamp(ts));
            let mut want = Vec::new();
            put_u64(&mut want, ts.millis as u64);
            assert_eq!(b, want, "p={p}");
            let back = decode_value(&DataType::Timestamp { precision: p }, &b, &mut 0).unwrap();
            assert_eq!(back, Value::Timestamp(Timestamp::from_millis(ts.millis)));
        }
        let b6 = one(DataType::TimestampLtz { precision: 6 }, Value::TimestampLtz(ts));
        let mut want = Vec::new();
        put_u64(&mut want, ts.millis as u64);
        put_u32(&mut want, 456_789);
        assert_eq!(b6, want, "nanos beyond the precision are kept, as Java does");
        let b9 = one(DataType::Timestamp { precision: 9 }, Value::Timestamp(ts));
        let mut pos = 0;
        assert_eq!(decode_value(&DataType::Timestamp { precision: 9 }, &b9, &mut pos).unwrap(), Value::Timestamp(ts));
        assert_eq!(pos, b9.len());
        // Before the epoch: millis negative (ten bytes), nanos still non-negative.
        let neg = Timestamp::from_nanos(-1);
        let b = one(DataType::Timestamp { precision: 9 }, Value::Timestamp(neg));
        assert_eq!(b.len(), 10 + 3);
        assert_eq!(decode_value(&DataType::Timestamp { precision: 9 }, &b, &mut 0).unwrap(), Value::Timestamp(neg));
    }

    #[test]
    fn rejects_bad_rows_and_appends_nothing() {
        let schema = Schema::builder().column_not_null("a", DataType::Int).column("b", DataType::String).build().unwrap();
        let mut out = vec![9];
        let e = encode_row(&schema, &crate::row![1], &mut out).unwrap_err();
        assert_eq!(e.code(), crate::ClientCode::InvalidRow as i32);
        let e = encode_row(&schema, &crate::row![1, 2], &mut out).unwrap_err();
        assert!(e.message().contains("\"b\""), "{e}");
        let e = encode_row(&schema, &crate::row![None::<i32>, "x"], &mut out).unwrap_err();
        assert!(e.message().contains("NOT NULL"), "{e}");
        assert_eq!(out, [9]);
    }

    #[test]
    fn rejects_corrupt_bytes() {
        let schema = Schema::builder().column("a", DataType::Int).column("b", DataType::String).build().unwrap();
        let good = enc(&schema, &crate::row![1, "hello"]);
        assert!(decode_row(&schema, &good[..good.len() - 1]).is_err());
        let mut long = good.clone();
        long.push(0);
        assert!(decode_row(&schema, &long).is_err());
        assert!(decode_row(&schema, &[]).is_err());
        let bad_utf8 = [0x00, 0x01, 0x01, 0xff];
        let e = decode_row(&schema, &bad_utf8).unwrap_err();
        assert_eq!(e.code(), crate::FlussCode::CORRUPT_MESSAGE);
        assert!(decode_value(&DataType::Boolean, &[2], &mut 0).is_err());
        assert!(decode_value(&DataType::Decimal { precision: 20, scale: 0 }, &[17; 18], &mut 0).is_err());
    }

    // ===== proptest strategies, shared with key.rs and arrow.rs tests =====

    /// Any type: the scalars, and ARRAY, MAP and ROW of them nested up to three levels.
    pub(crate) fn arb_type() -> impl Strategy<Value = DataType> {
        use crate::metadata::{Nested, RowField};
        arb_scalar_type().prop_recursive(3, 12, 4, |inner| {
            prop_oneof![
                (inner.clone(), any::<bool>())
                    .prop_map(|(t, nullable)| DataType::Array { element: Box::new(Nested { data_type: t, nullable }) }),
                (inner.clone(), inner.clone(), any::<bool>()).prop_map(|(k, v, nullable)| DataType::Map {
                    key: Box::new(k),
                    value: Box::new(Nested { data_type: v, nullable })
                }),
                proptest::collection::vec((inner, any::<bool>()), 1..4).prop_map(|fs| DataType::Row {
                    fields: fs
                        .into_iter()
                        .enumerate()
                        .map(|(i, (data_type, nullable))| RowField { name: format!("f{i}"), data_type, nullable })
                        .collect()
                }),
            ]
        })
    }

    fn arb_scalar_type() -> impl Strategy<Value = DataType> {
        prop_oneof![
            Just(DataType::Boolean),
            Just(DataType::TinyInt),
            Just(DataType::SmallInt),
            Just(DataType::Int),
            Just(DataType::BigInt),
            Just(DataType::Float),
            Just(DataType::Double),
            Just(DataType::String),
            Just(DataType::Bytes),
            (1u32..=10).prop_map(|length| DataType::Char { length }),
            (1u32..=8).prop_map(|length| DataType::Binary { length }),
            (1u8..=38).prop_flat_map(|p| (Just(p), 0..=p)).prop_map(|(precision, scale)| DataType::Decimal { precision, scale }),
            Just(DataType::Date),
            (0u8..=9).prop_map(|precision| DataType::Time { precision }),
            (0u8..=9).prop_map(|precision| DataType::Timestamp { precision }),
            (0u8..=9).prop_map(|precision| DataType::TimestampLtz { precision }),
        ]
    }

    fn arb_ts(precision: u8) -> impl Strategy<Value = Timestamp> {
        // Values representable at the column's precision (finer digits would be truncated),
        // within the range every Arrow unit can hold (nanoseconds: about +-292 years).
        let unit = 10i64.pow(9 - precision as u32);
        (-9_000_000_000_000_000_000i64 / unit..9_000_000_000_000_000_000i64 / unit).prop_map(move |x| Timestamp::from_nanos(x * unit))
    }

    /// A non-null value that fits `t` exactly (no digits finer than the type keeps).
    pub(crate) fn arb_value(t: DataType) -> BoxedStrategy<Value> {
        match t {
            DataType::Boolean => any::<bool>().prop_map(Value::Boolean).boxed(),
            DataType::TinyInt => any::<i8>().prop_map(Value::TinyInt).boxed(),
            DataType::SmallInt => any::<i16>().prop_map(Value::SmallInt).boxed(),
            DataType::Int => any::<i32>().prop_map(Value::Int).boxed(),
            DataType::BigInt => any::<i64>().prop_map(Value::BigInt).boxed(),
            DataType::Float => any::<f32>().prop_filter("NaN != NaN", |f| !f.is_nan()).prop_map(Value::Float).boxed(),
            DataType::Double => any::<f64>().prop_filter("NaN != NaN", |f| !f.is_nan()).prop_map(Value::Double).boxed(),
            DataType::String => ".{0,20}".prop_map(Value::String).boxed(),
            // At most `length` characters (code points).
            DataType::Char { length } => proptest::string::string_regex(&format!(".{{0,{}}}", length.min(20))).unwrap().prop_map(Value::String).boxed(),
            DataType::Bytes => proptest::collection::vec(any::<u8>(), 0..20).prop_map(Value::Bytes).boxed(),
            DataType::Binary { length } => proptest::collection::vec(any::<u8>(), length as usize).prop_map(Value::Bytes).boxed(),
            DataType::Decimal { precision, scale } => {
                let max = 10i128.pow(precision as u32) - 1;
                (-max..=max).prop_map(move |unscaled| Value::Decimal(Decimal { unscaled, precision, scale })).boxed()
            }
            DataType::Date => (-1_000_000i32..1_000_000).prop_map(Value::Date).boxed(),
            DataType::Time { precision } => {
                let unit = 10i32.pow(3 - precision.min(3) as u32);
                (0..86_400_000 / unit).prop_map(move |x| Value::Time(x * unit)).boxed()
            }
            DataType::Timestamp { precision } => arb_ts(precision).prop_map(Value::Timestamp).boxed(),
            DataType::TimestampLtz { precision } => arb_ts(precision).prop_map(Value::TimestampLtz).boxed(),
            DataType::Array { element } => {
                proptest::collection::vec(arb_maybe_null(element.data_type, element.nullable), 0..4).prop_map(Value::Array).boxed()
            }
            DataType::Map { key, value } => proptest::collection::vec((arb_value(*key), arb_maybe_null(value.data_type, value.nullable)), 0..4)
                .prop_map(|mut entries| {
                    // Map keys are unique.
                    let mut seen = std::collections::HashSet::new();
                    entries.retain(|(k, _)| seen.insert(format!("{k:?}")));
                    Value::Map(entries)
                })
                .boxed(),
            DataType::Row { fields } => {
                fields.into_iter().map(|f| arb_maybe_null(f.data_type, f.nullable)).collect::<Vec<_>>().prop_map(Value::Row).boxed()
            }
        }
    }

    /// A value of `t`, NULL one time in four when `nullable`.
    fn arb_maybe_null(t: DataType, nullable: bool) -> BoxedStrategy<Value> {
        if nullable {
            prop_oneof![1 => Just(Value::Null), 3 => arb_value(t)].boxed()
        } else {
            arb_value(t)
        }
    }

    /// A schema of 1..12 columns (random types and nullability) and a row that fits it.
    pub(crate) fn arb_schema_and_rows(max_rows: usize) -> impl Strategy<Value = (Schema, Vec<Row>)> {
        proptest::collection::vec((arb_type(), any::<bool>()), 1..12).prop_flat_map(move |cols| {
            let schema = Schema::new(
                cols.iter()
                    .enumerate()
                    .map(|(i, (t, nullable))| {
                        let c = Column::new(format!("c{i}"), t.clone());
                        if *nullable {
                            c
                        } else {
                            c.not_null()
                        }
                    })
                    .collect(),
                vec![],
            )
            .unwrap();
            let row = cols
                .iter()
                .map(
                    |(t, nullable)| {
                        if *nullable {
                            prop_oneof![1 => Just(Value::Null), 3 => arb_value(t.clone())].boxed()
                        } else {
                            arb_value(t.clone())
                        }
                    },
                )
                .collect::<Vec<_>>();
            (Just(schema), proptest::collection::vec(row, 1..=max_rows))
        })
    }

    proptest! {
        #[test]
        fn compacted_rows_round_trip((schema, rows) in arb_schema_and_rows(3)) {
            for row in rows {
                let mut out = vec![0xAB];
                encode_row(&schema, &row, &mut out).unwrap();
                prop_assert_eq!(out[0], 0xAB);
                prop_assert_eq!(decode_row(&schema, &out[1..]).unwrap(), row);
            }
        }
    }
}
