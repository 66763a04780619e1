//! ARRAY, MAP and ROW values inside a CompactedRow (docs/nested-types.md, section 2): a field of
//! one of these types is a varint byte length followed by a **BinaryArray**, a **BinaryMap** or a
//! nested **CompactedRow**. This module writes and reads those three forms, byte for byte as
//! Fluss 0.9.1's `ArraySerializer` / `MapSerializer` / `RowSerializer` (format COMPACTED) do.
//!
//! BinaryArray:
//!
//! ```text
//! [count: i32 LE][null bits: ceil(count/32)*4 bytes][count fixed-size slots][zeros to a multiple of 8]
//! [variable part: one chunk per long value, each zero-padded to a multiple of 8]
//! ```
//!
//! A slot is 1 (BOOLEAN, TINYINT), 2 (SMALLINT), 4 (INT, FLOAT, DATE, TIME) or 8 bytes (all other
//! types). Strings and bytes of at most 7 bytes live in their slot (data, then byte 7 =
//! `0x80 | len`); longer ones, DECIMAL(p > 18) (16 bytes), TIMESTAMP(p > 3) (the millis) and
//! nested values go to the variable part and the slot holds `offset << 32 | length` (for a
//! timestamp: `offset << 32 | nanos_of_milli`). A NULL element sets its bit and leaves its slot
//! zero. BinaryMap: `[key array size: i32 LE][key BinaryArray][value BinaryArray]`.

use super::compacted::{self, MAX_COMPACT_DECIMAL_PRECISION, MAX_COMPACT_TIMESTAMP_PRECISION};
use super::corrupt;
use crate::error::Result;
use crate::metadata::{DataType, RowField};
use crate::row::{Decimal, Timestamp, Value};

/// Bytes of one element's slot in a BinaryArray (`BinaryArray.calculateFixLengthPartSize`).
fn slot_size(t: &DataType) -> usize {
    match t {
        DataType::Boolean | DataType::TinyInt => 1,
        DataType::SmallInt => 2,
        DataType::Int | DataType::Float | DataType::Date | DataType::Time { .. } => 4,
        _ => 8,
    }
}

#[inline]
fn round_to_word(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// Bytes before the slots: the count and the null bits in whole 32-bit words.
#[inline]
fn header_size(n: usize) -> usize {
    4 + n.div_ceil(32) * 4
}

/// Append the BinaryArray of `items` (elements of type `elem`, already checked) to `out`.
pub(crate) fn encode_array<'a>(elem: &DataType, items: impl ExactSizeIterator<Item = &'a Value>, out: &mut Vec<u8>) {
    let base = out.len();
    let n = items.len();
    let slot = slot_size(elem);
    let fixed = round_to_word(header_size(n) + n * slot);
    out.resize(base + fixed, 0);
    out[base..base + 4].copy_from_slice(&(n as i32).to_le_bytes());
    let first_slot = base + header_size(n);
    for (i, v) in items.enumerate() {
        let at = first_slot + i * slot;
        match v {
            Value::Null => out[base + 4 + i / 8] |= 1 << (i % 8),
            v => write_element(elem, v, base, at, out),
        }
    }
}

/// Write one non-null element into its slot at `at` (and the variable part at the end of `out`;
/// offsets count from `base`, the start of the array).
fn write_element(t: &DataType, v: &Value, base: usize, at: usize, out: &mut Vec<u8>) {
    let put = |out: &mut Vec<u8>, b: &[u8]| out[at..at + b.len()].copy_from_slice(b);
    match (t, v) {
        (_, Value::Boolean(b)) => out[at] = *b as u8,
        (_, Value::TinyInt(x)) => out[at] = *x as u8,
        (_, Value::SmallInt(x)) => put(out, &x.to_le_bytes()),
        (_, Value::Int(x) | Value::Date(x) | Value::Time(x)) => put(out, &x.to_le_bytes()),
        (_, Value::BigInt(x)) => put(out, &x.to_le_bytes()),
        // Java's BinaryArrayWriter stores the canonical NaN.
        (_, Value::Float(x)) => put(out, &(if x.is_nan() { f32::NAN } else { *x }).to_le_bytes()),
        (_, Value::Double(x)) => put(out, &(if x.is_nan() { f64::NAN } else { *x }).to_le_bytes()),
        (_, Value::String(s)) => write_var(s.as_bytes(), base, at, out),
        (_, Value::Bytes(b)) => write_var(b, base, at, out),
        (DataType::Decimal { precision, .. }, Value::Decimal(d)) => {
            if *precision <= MAX_COMPACT_DECIMAL_PRECISION {
                put(out, &(d.unscaled as i64).to_le_bytes());
            } else {
                let be = d.unscaled.to_be_bytes();
                let bytes = compacted::minimal_be_bytes(&be);
                let offset = append_chunk(bytes, 16, base, out);
                out[at..at + 8].copy_from_slice(&((offset << 32) | bytes.len() as u64).to_le_bytes());
            }
        }
        (DataType::Timestamp { precision } | DataType::TimestampLtz { precision }, Value::Timestamp(ts) | Value::TimestampLtz(ts)) => {
            if *precision <= MAX_COMPACT_TIMESTAMP_PRECISION {
                put(out, &ts.millis.to_le_bytes());
            } else {
                let offset = append_chunk(&ts.millis.to_le_bytes(), 8, base, out);
                out[at..at + 8].copy_from_slice(&((offset << 32) | ts.nanos_of_milli as u64).to_le_bytes());
            }
        }
        (DataType::Array { .. } | DataType::Map { .. } | DataType::Row { .. }, _) => {
            let start = out.len();
            write_nested(t, v, out);
            let size = out.len() - start;
            out.resize(start + round_to_word(size), 0);
            out[at..at + 8].copy_from_slice(&((((start - base) as u64) << 32) | size as u64).to_le_bytes());
        }
        _ => panic!("nested::write_element: a {} value for a {t} element (the value was not checked)", v.type_name()),
    }
}

/// A string or bytes element: inline when at most 7 bytes, else in the variable part.
fn write_var(b: &[u8], base: usize, at: usize, out: &mut Vec<u8>) {
    if b.len() <= 7 {
        out[at..at + b.len()].copy_from_slice(b);
        out[at + 7] = 0x80 | b.len() as u8;
    } else {
        let offset = append_chunk(b, b.len(), base, out);
        out[at..at + 8].copy_from_slice(&((offset << 32) | b.len() as u64).to_le_bytes());
    }
}

/// Append `b` to the variable part in a chunk of at least `reserve` bytes, zero-padded to a
/// multiple of 8; its offset from `base`.
fn append_chunk(b: &[u8], reserve: usize, base: usize, out: &mut Vec<u8>) -> u64 {
    let start = out.len();
    out.extend_from_slice(b);
    out.resize(start + round_to_word(reserve.max(b.len())), 0);
    (start - base) as u64
}

/// Append the binary form of a non-null ARRAY, MAP or ROW value (without a length prefix): a
/// BinaryArray, a BinaryMap or a nested CompactedRow.
pub(crate) fn write_nested(t: &DataType, v: &Value, out: &mut Vec<u8>) {
    match (t, v) {
        (DataType::Array { element }, Value::Array(items)) => encode_array(&element.data_type, items.iter(), out),
        (DataType::Map { key, value }, Value::Map(entries)) => {
            let size_at = out.len();
            out.extend_from_slice(&[0; 4]);
            encode_array(key, entries.iter().map(|(k, _)| k), out);
            let key_size = (out.len() - size_at - 4) as i32;
            out[size_at..size_at + 4].copy_from_slice(&key_size.to_le_bytes());
            encode_array(&value.data_type, entries.iter().map(|(_, x)| x), out);
        }
        (DataType::Row { fields }, Value::Row(values)) => encode_row_fields(fields, values, out),
        _ => panic!("nested::write_nested: a {} value for {t} (the value was not checked)", v.type_name()),
    }
}

/// A nested CompactedRow: the null bitset of the fields, then each non-null field.
fn encode_row_fields(fields: &[RowField], values: &[Value], out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + compacted::null_bitset_len(fields.len()), 0);
    for (i, (f, v)) in fields.iter().zip(values).enumerate() {
        if v.is_null() {
            out[start + i / 8] |= 1 << (i % 8);
        } else {
            compacted::encode_value(&f.data_type, v, out);
        }
    }
}

// ===== reading =====

fn read_at<const N: usize>(buf: &[u8], at: usize) -> Result<[u8; N]> {
    at.checked_add(N)
        .and_then(|end| buf.get(at..end))
        .map(|s| s.try_into().expect("N bytes"))
        .ok_or_else(|| corrupt(format!("a nested value of {} bytes is truncated at byte {at}", buf.len())))
}

fn chunk(buf: &[u8], offset: u64, len: u64) -> Result<&[u8]> {
    let start = usize::try_from(offset).ok();
    let end = start.and_then(|s| s.checked_add(usize::try_from(len).ok()?));
    match (start, end) {
        (Some(s), Some(e)) if e <= buf.len() => Ok(&buf[s..e]),
        _ => Err(corrupt(format!("a nested value points at bytes {offset}+{len} of a {}-byte array", buf.len()))),
    }
}

/// Decode a BinaryArray holding exactly `buf`.
pub(crate) fn decode_array(elem: &DataType, buf: &[u8]) -> Result<Vec<Value>> {
    let n = i32::from_le_bytes(read_at::<4>(buf, 0)?);
    let slot = slot_size(elem);
    let n = usize::try_from(n).ok().filter(|&n| header_size(n).saturating_add(n.saturating_mul(slot)) <= buf.len());
    let n = n.ok_or_else(|| corrupt(format!("a BinaryArray of {} bytes cannot hold its element count", buf.len())))?;
    let first_slot = header_size(n);
    let mut items = Vec::with_capacity(n);
    for i in 0..n {
        if buf[4 + i / 8] & (1 << (i % 8)) != 0 {
            items.push(Value::Null);
        } else {
            items.push(read_element(elem, buf, first_slot + i * slot)?);
        }
    }
    Ok(items)
}

fn read_element(t: &DataType, buf: &[u8], at: usize) -> Result<Value> {
    let long = |buf: &[u8]| read_at::<8>(buf, at).map(u64::from_le_bytes);
    Ok(match t {
        DataType::Boolean => match read_at::<1>(buf, at)?[0] {
            0 => Value::Boolean(false),
            1 => Value::Boolean(true),
            b => return Err(corrupt(format!("BOOLEAN element byte {b:#04x}"))),
        },
        DataType::TinyInt => Value::TinyInt(read_at::<1>(buf, at)?[0] as i8),
        DataType::SmallInt => Value::SmallInt(i16::from_le_bytes(read_at(buf, at)?)),
        DataType::Int => Value::Int(i32::from_le_bytes(read_at(buf, at)?)),
        DataType::Date => Value::Date(i32::from_le_bytes(read_at(buf, at)?)),
        DataType::Time { .. } => Value::Time(i32::from_le_bytes(read_at(buf, at)?)),
        DataType::Float => Value::Float(f32::from_le_bytes(read_at(buf, at)?)),
        DataType::BigInt => Value::BigInt(long(buf)? as i64),
        DataType::Double => Value::Double(f64::from_le_bytes(read_at(buf, at)?)),
        DataType::String | DataType::Char { .. } => {
            let b = read_var(buf, at, long(buf)?)?;
            Value::String(String::from_utf8(b.to_vec()).map_err(|e| corrupt(format!("STRING element is not UTF-8: {e}")))?)
        }
        DataType::Bytes | DataType::Binary { .. } => Value::Bytes(read_var(buf, at, long(buf)?)?.to_vec()),
        DataType::Decimal { precision, scale } => {
            let slot = long(buf)?;
            let unscaled = if *precision <= MAX_COMPACT_DECIMAL_PRECISION {
                slot as i64 as i128
            } else {
                let b = chunk(buf, slot >> 32, slot & 0xffff_ffff)?;
                compacted::decimal_from_be(*precision, b)?
            };
            Value::Decimal(Decimal { unscaled, precision: *precision, scale: *scale })
        }
        DataType::Timestamp { precision } | DataType::TimestampLtz { precision } => {
            let slot = long(buf)?;
            let ts = if *precision <= MAX_COMPACT_TIMESTAMP_PRECISION {
                Timestamp::from_millis(slot as i64)
            } else {
                let millis = i64::from_le_bytes(read_at(chunk(buf, slot >> 32, 8)?, 0)?);
                let nanos_of_milli = (slot & 0xffff_ffff) as u32;
                if nanos_of_milli >= 1_000_000 {
                    return Err(corrupt(format!("timestamp element nanos_of_milli {nanos_of_milli} >= 1000000")));
                }
                Timestamp { millis, nanos_of_milli }
            };
            if matches!(t, DataType::Timestamp { .. }) {
                Value::Timestamp(ts)
            } else {
                Value::TimestampLtz(ts)
            }
        }
        DataType::Array { .. } | DataType::Map { .. } | DataType::Row { .. } => {
            let slot = long(buf)?;
            read_nested(t, chunk(buf, slot >> 32, slot & 0xffff_ffff)?)?
        }
    })
}

/// The bytes of a string or bytes element whose slot is at `at`: inline in the slot (bit 63
/// set: data first, length in byte 7) or in the variable part.
fn read_var(buf: &[u8], at: usize, slot: u64) -> Result<&[u8]> {
    if slot >> 63 == 1 {
        let len = ((slot >> 56) & 0x7f) as usize;
        if len > 7 {
            return Err(corrupt(format!("an inline element of {len} bytes")));
        }
        return Ok(&buf[at..at + len]);
    }
    chunk(buf, slot >> 32, slot & 0xffff_ffff)
}

/// Decode the binary form of an ARRAY, MAP or ROW value that fills `buf` exactly.
pub(crate) fn read_nested(t: &DataType, buf: &[u8]) -> Result<Value> {
    match t {
        DataType::Array { element } => Ok(Value::Array(decode_array(&element.data_type, buf)?)),
        DataType::Map { key, value } => {
            let key_size = i32::from_le_bytes(read_at(buf, 0)?);
            let key_end = usize::try_from(key_size)
                .ok()
                .and_then(|k| k.checked_add(4))
                .filter(|&e| e <= buf.len())
                .ok_or_else(|| corrupt(format!("a BinaryMap of {} bytes with a key array of {key_size} bytes", buf.len())))?;
            let keys = decode_array(key, &buf[4..key_end])?;
            let values = decode_array(&value.data_type, &buf[key_end..])?;
            if keys.len() != values.len() {
                return Err(corrupt(format!("a BinaryMap with {} keys and {} values", keys.len(), values.len())));
            }
            Ok(Value::Map(keys.into_iter().zip(values).collect()))
        }
        DataType::Row { fields } => {
            let bitset = compacted::null_bitset_len(fields.len());
            if buf.len() < bitset {
                return Err(corrupt(format!("a nested row of {} bytes is shorter than its null bitset", buf.len())));
            }
            let mut pos = bitset;
            let mut values = Vec::with_capacity(fields.len());
            for (i, f) in fields.iter().enumerate() {
                if buf[i / 8] & (1 << (i % 8)) != 0 {
                    values.push(Value::Null);
                } else {
                    values.push(compacted::decode_value(&f.data_type, buf, &mut pos)?);
                }
            }
            if pos != buf.len() {
                return Err(corrupt(format!("{} trailing bytes after a nested row", buf.len() - pos)));
            }
            Ok(Value::Row(values))
        }
        _ => Err(corrupt(format!("{t} is not a nested type"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{Column, Schema};
    use crate::wire::compacted::{decode_row, encode_row};
    use proptest::prelude::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
        (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
    }

    /// One column of type `t` holding `v`: the CompactedRow bytes, checked to decode back.
    fn one(t: &str, v: Value) -> Vec<u8> {
        let schema = Schema::new(vec![Column::new("c", DataType::parse(t).unwrap())], vec![]).unwrap();
        let mut out = Vec::new();
        encode_row(&schema, std::slice::from_ref(&v), &mut out).unwrap();
        assert_eq!(decode_row(&schema, &out).unwrap(), vec![v], "{t}");
        out
    }

    fn s(x: &str) -> Value {
        Value::String(x.into())
    }

    /// The worked examples of docs/nested-types.md (2.6, 2.7), which the Fluss 0.9.1 jar produced.
    #[test]
    fn documented_examples() {
        assert_eq!(one("ARRAY<INT>", Value::Array(vec![Value::Int(1), Value::Null, Value::Int(3)])), hex("00 18 03000000 02000000 0100000000000000 0300000000000000"));
        assert_eq!(
            one("ARRAY<STRING>", Value::Array(vec![s("a"), s("bcdefghij")])),
            hex("00 28 0200000000000000 6100000000000081 0900000018000000 6263646566676869 6a00000000000000")
        );
        assert_eq!(one("ARRAY<STRING>", Value::Array(vec![s("abcdefg")]))[10..18], hex("61626364656667 87")[..]);
        assert_eq!(
            one("MAP<STRING, INT>", Value::Map(vec![(s("k"), Value::Int(1))])),
            hex("00 24 10000000 0100000000000000 6b00000000000081 0100000000000000 0100000000000000")
        );
        assert_eq!(one("ROW<a INT, b STRING>", Value::Row(vec![Value::Int(7), s("x")])), hex("00 04 00 07 01 78"));
        assert_eq!(one("ROW<a INT, b STRING>", Value::Row(vec![Value::Null, s("x")])), hex("00 03 01 01 78"));
        assert_eq!(one("ROW<r ROW<a INT>>", Value::Row(vec![Value::Row(vec![Value::Int(5)])])), hex("00 04 00 02 00 05"));
        assert_eq!(one("ARRAY<BIGINT>", Value::Array(vec![Value::BigInt(5), Value::Null])), hex("00 18 02000000 02000000 0500000000000000 0000000000000000"));
        assert_eq!(one("ARRAY<BOOLEAN>", Value::Array(vec![Value::Boolean(true), Value::Null, Value::Boolean(false)])), hex("00 10 03000000 02000000 0100000000000000"));
        assert_eq!(one("ARRAY<SMALLINT>", Value::Array(vec![Value::SmallInt(7)])), hex("00 10 01000000 00000000 0700000000000000"));
        let ints = |v: &[i32]| Value::Array(v.iter().map(|&x| Value::Int(x)).collect());
        assert_eq!(
            one("ARRAY<ARRAY<INT>>", Value::Array(vec![ints(&[1]), ints(&[2, 3])])),
            hex("00 38 0200000000000000 1000000018000000 1000000028000000 0100000000000000 0100000000000000 0200000000000000 0200000003000000")
        );
        assert_eq!(
            one("ARRAY<ROW<a INT, b STRING>>", Value::Array(vec![Value::Row(vec![Value::Int(7), s("x")])])),
            hex("00 18 0100000000000000 0400000010000000 0007017800000000")
        );
        assert_eq!(one("ARRAY<CHAR(5)>", Value::Array(vec![s("ab")]))[10..18], hex("6162000000000082")[..]);
        assert_eq!(one("ARRAY<BINARY(2)>", Value::Array(vec![Value::Bytes(vec![1, 2])]))[10..18], hex("0102000000000082")[..]);
        assert_eq!(one("ROW<a CHAR(3), b BINARY(2)>", Value::Row(vec![s("ab"), Value::Bytes(vec![1, 0])])), hex("00 07 00 02 61 62 02 01 00"));
        assert_eq!(one("ARRAY<INT>", Value::Array(vec![])), hex("00 08 0000000000000000"));
        assert_eq!(one("MAP<STRING, INT>", Value::Map(vec![])), hex("00 14 08000000 0000000000000000 0000000000000000"));
    }

    /// DECIMAL(p > 18) and TIMESTAMP(p > 3) elements live in the variable part (the oracle's
    /// sample: ARRAY<DECIMAL(20, 2)> [123.45, NULL, -0.01]).
    #[test]
    fn long_decimals_and_precise_timestamps_in_arrays() {
        let d = |u: i128| Value::Decimal(crate::row::Decimal { unscaled: u, precision: 20, scale: 2 });
        assert_eq!(
            one("ARRAY<DECIMAL(20, 2)>", Value::Array(vec![d(12345), Value::Null, d(-1)])),
            hex("00 40 03000000 02000000 0200000020000000 0000000000000000 0100000030000000 3039000000000000 0000000000000000 ff00000000000000 0000000000000000")
        );
        let ts = Value::Timestamp(Timestamp { millis: 1_000_123, nanos_of_milli: 456_000 });
        let bytes = one("ARRAY<TIMESTAMP(6)>", Value::Array(vec![ts, Value::Null]));
        assert_eq!(bytes, hex("00 20 02000000 02000000 40f5060018000000 0000000000000000 bb420f0000000000"));
    }

    proptest! {
        /// Damaged bytes of any nested row decode to an error or to some row, never a panic.
        #[test]
        fn damaged_nested_rows_never_panic(
            (schema, rows) in crate::wire::compacted::tests::arb_schema_and_rows(1),
            cut in any::<prop::sample::Index>(),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        ) {
            let mut bytes = Vec::new();
            encode_row(&schema, &rows[0], &mut bytes).unwrap();
            let _ = decode_row(&schema, &bytes[..cut.index(bytes.len() + 1)]);
            for (at, x) in flips {
                let i = at.index(bytes.len());
                bytes[i] ^= x;
            }
            let _ = decode_row(&schema, &bytes);
        }
    }
}
