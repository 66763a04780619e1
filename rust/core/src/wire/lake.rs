//! Key bytes and buckets of tables with a datalake format (docs/wire-format.md, "Lake formats").
//!
//! A table whose properties name `table.datalake.format` places its keyed rows the way the lake
//! format buckets them, so that the lake's files line up with Fluss's buckets. Fluss 0.9.1's
//! Java client (`BucketingFunction.of`, `KeyEncoder.of`) decides per format:
//!
//! | format  | key bytes                                   | bucket of the key bytes                      |
//! |---------|---------------------------------------------|----------------------------------------------|
//! | paimon  | a Paimon `BinaryRow` of the key columns     | `abs(murmur3_fluss(bytes, 42) % n)`          |
//! | iceberg | the one key column in Iceberg's hash input  | `(murmur3_32(bytes, 0) & i32::MAX) % n`      |
//! | lance   | compacted (as without a lake)               | Fluss's rule ([`super::bucketing`])          |
//! | hudi    | the 4-byte big-endian Java `List<String>` hash of the key values' strings | `(hash & i32::MAX) % n` |
//!
//! Hudi (Fluss 1.0, `HudiKeyEncoder` / `HudiBucketingFunction`) is the one format whose bucket
//! bytes are never the primary key's: its primary key stays compacted.
//!
//! The format is read from the table's properties whether or not `table.datalake.enabled` is
//! set: the server copies the cluster's format into every new table, and the Java client keys by
//! it from then on. Which columns use which encoding (primary key, bucket key, the table's kv
//! format version) is [`super::key::KeyCodec`]'s business; this module only encodes and hashes.

use super::bucketing::{fluss_murmur3_32, fmix, mix_h1, mix_k1, BUCKET_SEED};
use super::compacted::{minimal_be_bytes, MAX_COMPACT_DECIMAL_PRECISION, MAX_COMPACT_TIMESTAMP_PRECISION};
use crate::error::{ClientCode, Error, Result};
use crate::metadata::DataType;
use crate::row::Value;

/// The table property that names a table's lake format.
pub const FORMAT_PROPERTY: &str = "table.datalake.format";

/// A datalake format, as `table.datalake.format` names it (case-insensitive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LakeFormat {
    /// Apache Paimon.
    Paimon,
    /// Apache Iceberg.
    Iceberg,
    /// Lance (keys and buckets as without a lake).
    Lance,
    /// Apache Hudi (Fluss 1.0): buckets by the Java hash of the key values' strings.
    Hudi,
}

impl LakeFormat {
    /// The format a table's `table.datalake.format` value names: `None` for no value; a value
    /// Fluss 1.0 does not know is `UNSUPPORTED`, naming it, so that no row is ever placed by a
    /// guessed rule.
    pub fn from_property(value: Option<&str>) -> Result<Option<LakeFormat>> {
        let Some(v) = value else { return Ok(None) };
        match v.trim().to_ascii_lowercase().as_str() {
            "paimon" => Ok(Some(LakeFormat::Paimon)),
            "iceberg" => Ok(Some(LakeFormat::Iceberg)),
            "lance" => Ok(Some(LakeFormat::Lance)),
            "hudi" => Ok(Some(LakeFormat::Hudi)),
            _ => Err(Error::client(
                ClientCode::Unsupported,
                format!("{FORMAT_PROPERTY} = {v:?} is not a datalake format this writer can key rows for (paimon, iceberg, lance, hudi)"),
            )),
        }
    }

    /// The property value, lower case.
    pub fn name(self) -> &'static str {
        match self {
            LakeFormat::Paimon => "paimon",
            LakeFormat::Iceberg => "iceberg",
            LakeFormat::Lance => "lance",
            LakeFormat::Hudi => "hudi",
        }
    }
}

/// Paimon's bucket of key bytes: Fluss's MurmurHash3 (seed 42) without the second mix, then
/// `abs(hash % n)` with Java's truncating `%`.
pub fn paimon_bucket(key: &[u8], bucket_count: i32) -> i32 {
    ((fluss_murmur3_32(key, BUCKET_SEED) as i32) % bucket_count).abs()
}

/// Iceberg's bucket of key bytes: standard MurmurHash3 x86 32-bit, seed 0 (Guava's
/// `murmur3_32_fixed`: the tail bytes form one zero-extended block), then
/// `(hash & i32::MAX) % n`.
pub fn iceberg_bucket(key: &[u8], bucket_count: i32) -> i32 {
    ((murmur3_32(key, 0) & 0x7fff_ffff) as i32) % bucket_count
}

/// Hudi's bucket of its 4-byte key (a big-endian `List<String>` hash, [`encode_hudi`]):
/// `(hash & i32::MAX) % n`. Key bytes of another length are a bug in the caller.
pub fn hudi_bucket(key: &[u8], bucket_count: i32) -> i32 {
    let hash = i32::from_be_bytes(key.try_into().expect("a hudi key is 4 bytes"));
    (hash & i32::MAX) % bucket_count
}

/// Hudi's placeholder for a null key value, and for an empty one (Hudi's record-key strings).
const HUDI_NULL: &str = "__null__";
const HUDI_EMPTY: &str = "__empty__";

/// Whether a column of type `t` can be part of a Hudi bucket key; the error names the column.
/// Fluss 1.0's `HudiKeyEncoder` takes the scalar types with a deterministic string form: not
/// BYTES / BINARY (nor nested types).
pub fn check_hudi_key_type(column: &str, t: &DataType) -> Result<()> {
    match *t {
        DataType::Char { .. }
        | DataType::String
        | DataType::Boolean
        | DataType::Decimal { .. }
        | DataType::TinyInt
        | DataType::SmallInt
        | DataType::Int
        | DataType::BigInt
        | DataType::Float
        | DataType::Double
        | DataType::Date
        | DataType::Time { .. }
        | DataType::Timestamp { .. }
        | DataType::TimestampLtz { .. } => Ok(()),
        _ => Err(Error::client(
            ClientCode::InvalidTable,
            format!("key column {column:?} has type {t}, which a hudi-format table cannot bucket by (Fluss 1.0's Hudi key encoder refuses it)"),
        )),
    }
}

/// Append Hudi's 4-byte key of non-null, type-checked key values `(column, type, value)`: each
/// value as the string Java's `String.valueOf` gives Fluss's internal value (DATE as its day
/// number, TIME as its millisecond of the day, DECIMAL as `toPlainString`, TIMESTAMP as
/// `LocalDateTime.toString`, TIMESTAMP_LTZ as `Instant.toString`, FLOAT / DOUBLE as Java prints
/// them), hashed as a Java `List<String>` (`31 * h + String.hashCode`, from 1), big-endian.
/// A key of several columns is refused (`INVALID_ROW`, naming the column) where Hudi's
/// record-key string could not carry it: a value containing `,`, or equal to `__null__` or
/// `__empty__`. Nothing is appended on error.
pub fn encode_hudi(fields: &[(&str, &DataType, &Value)], out: &mut Vec<u8>) -> Result<()> {
    let composite = fields.len() > 1;
    let mut hash: i32 = 1;
    let mut s = String::new();
    for &(column, t, v) in fields {
        s.clear();
        hudi_string(t, v, &mut s).map_err(|why| Error::invalid_row(format!("key column {column:?}: {why}")))?;
        if composite && !s.is_empty() {
            if s.contains(',') {
                return Err(Error::invalid_row(format!(
                    "key column {column:?}: the value {s:?} contains ',', which Hudi's record key cannot carry in a key of several columns"
                )));
            }
            if s == HUDI_NULL || s == HUDI_EMPTY {
                return Err(Error::invalid_row(format!(
                    "key column {column:?}: the value {s:?} is Hudi's placeholder for a null or empty value, which a key of several columns cannot carry"
                )));
            }
        }
        hash = hash.wrapping_mul(31).wrapping_add(java_string_hash(&s));
    }
    out.extend_from_slice(&hash.to_be_bytes());
    Ok(())
}

/// Java's `String.hashCode`: over the UTF-16 code units, `31 * h + c`.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// Java's `String.valueOf` of Fluss's internal form of a key value (see [`encode_hudi`]).
fn hudi_string(t: &DataType, v: &Value, out: &mut String) -> std::result::Result<(), String> {
    use std::fmt::Write as _;
    use crate::metadata::partition::java_float;
    match v {
        Value::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::TinyInt(x) => write!(out, "{x}").expect("String"),
        Value::SmallInt(x) => write!(out, "{x}").expect("String"),
        Value::Int(x) | Value::Date(x) | Value::Time(x) => write!(out, "{x}").expect("String"),
        Value::BigInt(x) => write!(out, "{x}").expect("String"),
        Value::Float(x) => java_float(f64::from(*x), format!("{x:e}"), format!("{:.1e}", x.abs()), '.', out),
        Value::Double(x) => java_float(*x, format!("{x:e}"), format!("{:.1e}", x.abs()), '.', out),
        Value::String(x) => out.push_str(x),
        Value::Decimal(d) => {
            let digits = d.unscaled.unsigned_abs().to_string();
            let scale = usize::from(d.scale);
            if d.unscaled < 0 {
                out.push('-');
            }
            if scale == 0 {
                out.push_str(&digits);
            } else if digits.len() > scale {
                let (int, frac) = digits.split_at(digits.len() - scale);
                write!(out, "{int}.{frac}").expect("String");
            } else {
                write!(out, "0.{:0>scale$}", digits).expect("String");
            }
        }
        Value::Timestamp(ts) => java_local_date_time(ts, out),
        Value::TimestampLtz(ts) => java_instant(ts, out)?,
        _ => panic!("hudi_string: a {} value for a {t} key (the key type was not checked)", v.type_name()),
    }
    Ok(())
}

/// Java's `LocalDate.toString` year: 4 digits at least, `-` for years before 1, `+` after 9999.
fn java_year(y: i64, out: &mut String) {
    use std::fmt::Write as _;
    if y.abs() < 1000 {
        write!(out, "{}{:04}", if y < 0 { "-" } else { "" }, y.abs()).expect("String");
    } else if y > 9999 {
        write!(out, "+{y}").expect("String");
    } else {
        write!(out, "{y}").expect("String");
    }
}

/// Java's fraction of a second in `LocalTime.toString` / `Instant.toString`: none for 0, else
/// `.` and 3, 6 or 9 digits, whichever is the fewest that hold it.
fn java_nanos(nanos: u32, out: &mut String) {
    use std::fmt::Write as _;
    if nanos == 0 {
    } else if nanos.is_multiple_of(1_000_000) {
        write!(out, ".{:03}", nanos / 1_000_000).expect("String");
    } else if nanos.is_multiple_of(1000) {
        write!(out, ".{:06}", nanos / 1000).expect("String");
    } else {
        write!(out, ".{nanos:09}").expect("String");
    }
}

/// The fields of a timestamp: (year, month, day, hour, minute, second, nano of second).
fn civil(ts: &crate::row::Timestamp) -> (i64, u32, u32, i64, i64, i64, u32) {
    let days = ts.millis.div_euclid(86_400_000);
    let ms = ts.millis.rem_euclid(86_400_000);
    let (y, m, d) = crate::metadata::partition::civil_from_days(days);
    let nanos = (ms % 1000) as u32 * 1_000_000 + ts.nanos_of_milli;
    (y, m, d, ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, nanos)
}

/// Java's `LocalDateTime.toString`: `yyyy-MM-ddTHH:mm`, then `:ss` when the seconds or the
/// fraction are not 0, then the fraction.
fn java_local_date_time(ts: &crate::row::Timestamp, out: &mut String) {
    use std::fmt::Write as _;
    let (y, mo, d, h, mi, s, nanos) = civil(ts);
    java_year(y, out);
    write!(out, "-{mo:02}-{d:02}T{h:02}:{mi:02}").expect("String");
    if s > 0 || nanos > 0 {
        write!(out, ":{s:02}").expect("String");
    }
    java_nanos(nanos, out);
}

/// Java's `Instant.toString` (ISO_INSTANT): `yyyy-MM-ddTHH:mm:ss`, the fraction, `Z`. Years
/// before -9999 (which Java writes in a form of its own) are refused.
fn java_instant(ts: &crate::row::Timestamp, out: &mut String) -> std::result::Result<(), String> {
    use std::fmt::Write as _;
    let (y, mo, d, h, mi, s, nanos) = civil(ts);
    if y < -9999 {
        return Err(format!("a TIMESTAMP_LTZ in the year {y} has no Hudi key string this writer can form (years from -9999)"));
    }
    java_year(y, out);
    write!(out, "-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}").expect("String");
    java_nanos(nanos, out);
    out.push('Z');
    Ok(())
}

/// Textbook MurmurHash3 x86 32-bit.
pub fn murmur3_32(bytes: &[u8], seed: u32) -> u32 {
    let mut h = seed;
    let mut blocks = bytes.chunks_exact(4);
    for b in &mut blocks {
        h = mix_h1(h, mix_k1(u32::from_le_bytes([b[0], b[1], b[2], b[3]])));
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let k = tail.iter().enumerate().fold(0u32, |k, (i, &b)| k | (b as u32) << (8 * i));
        h ^= mix_k1(k);
    }
    fmix(h, bytes.len() as u32)
}

/// Whether a column of type `t` can be part of an Iceberg key; the error names the column.
pub fn check_iceberg_key_type(column: &str, t: &DataType) -> Result<()> {
    match *t {
        DataType::Int
        | DataType::Date
        | DataType::Time { .. }
        | DataType::BigInt
        | DataType::Float
        | DataType::Double
        | DataType::Timestamp { .. }
        | DataType::Decimal { .. }
        | DataType::String
        | DataType::Bytes
        | DataType::Char { .. }
        | DataType::Binary { .. } => Ok(()),
        _ => Err(Error::client(
            ClientCode::InvalidTable,
            format!("key column {column:?} has type {t}, which an iceberg-format table cannot key by (Fluss 0.9.1's Iceberg key encoder refuses it)"),
        )),
    }
}

/// Append Iceberg's hash input for one non-null, type-checked key value.
pub fn encode_iceberg(t: &DataType, v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Int(x) | Value::Date(x) => out.extend_from_slice(&(*x as i64).to_le_bytes()),
        Value::Time(ms) => out.extend_from_slice(&(*ms as i64 * 1000).to_le_bytes()),
        Value::BigInt(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::Float(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::Double(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::Timestamp(ts) => {
            let micros = ts.millis.wrapping_mul(1000).wrapping_add(ts.nanos_of_milli as i64 / 1000);
            out.extend_from_slice(&micros.to_le_bytes())
        }
        Value::Decimal(d) => out.extend_from_slice(minimal_be_bytes(&d.unscaled.to_be_bytes())),
        Value::String(s) => out.extend_from_slice(s.as_bytes()),
        Value::Bytes(b) => out.extend_from_slice(b),
        _ => panic!("encode_iceberg: a {} value for a {t} key (the key type was not checked)", v.type_name()),
    }
}

/// Bits of a Paimon `BinaryRow` header (the row kind byte) before the null bits.
const PAIMON_HEADER_BITS: usize = 8;

/// Append the Paimon `BinaryRow` of non-null, type-checked key values: a null bitset with the
/// row-kind byte (INSERT, 0) in front, one 8-byte little-endian slot per field, then the
/// variable-length part in 8-byte words. Values of at most 7 bytes live in their slot (their
/// length with the top bit set in the slot's last byte); longer ones, DECIMALs of precision
/// above 18 and TIMESTAMPs of precision above 3 store `offset << 32 | size` in the slot.
pub fn encode_paimon(fields: &[(&DataType, &Value)], out: &mut Vec<u8>) {
    let start = out.len();
    let bitset = (fields.len() + 63 + PAIMON_HEADER_BITS) / 64 * 8;
    let fixed = bitset + 8 * fields.len();
    out.resize(start + fixed, 0);
    let slot = |i: usize| start + bitset + 8 * i;
    let put = |out: &mut Vec<u8>, i: usize, word: u64| out[slot(i)..slot(i) + 8].copy_from_slice(&word.to_le_bytes());
    // Appends `bytes` to the variable part in whole words; returns their offset in the row.
    let var = |out: &mut Vec<u8>, bytes: &[u8], reserve: usize| {
        let offset = (out.len() - start) as u64;
        out.extend_from_slice(bytes);
        out.resize(out.len() + reserve.max(bytes.len()).next_multiple_of(8) - bytes.len(), 0);
        offset
    };
    for (i, &(t, v)) in fields.iter().enumerate() {
        let small = |out: &mut Vec<u8>, b: &[u8]| {
            if b.len() <= 7 {
                let mut w = [0u8; 8];
                w[..b.len()].copy_from_slice(b);
                w[7] = 0x80 | b.len() as u8;
                put(out, i, u64::from_le_bytes(w));
            } else {
                let offset = var(out, b, 0);
                put(out, i, offset << 32 | b.len() as u64);
            }
        };
        match (t, v) {
            (_, Value::Boolean(b)) => out[slot(i)] = *b as u8,
            (_, Value::TinyInt(x)) => out[slot(i)] = *x as u8,
            (_, Value::SmallInt(x)) => out[slot(i)..slot(i) + 2].copy_from_slice(&x.to_le_bytes()),
            (_, Value::Int(x) | Value::Date(x) | Value::Time(x)) => out[slot(i)..slot(i) + 4].copy_from_slice(&x.to_le_bytes()),
            (_, Value::Float(x)) => out[slot(i)..slot(i) + 4].copy_from_slice(&x.to_le_bytes()),
            (_, Value::BigInt(x)) => put(out, i, *x as u64),
            (_, Value::Double(x)) => put(out, i, x.to_bits()),
            (_, Value::String(s)) => small(out, s.as_bytes()),
            (_, Value::Bytes(b)) => small(out, b),
            (DataType::Decimal { precision, .. }, Value::Decimal(d)) if *precision <= MAX_COMPACT_DECIMAL_PRECISION => {
                put(out, i, d.unscaled as i64 as u64)
            }
            (DataType::Decimal { .. }, Value::Decimal(d)) => {
                let be = d.unscaled.to_be_bytes();
                let b = minimal_be_bytes(&be);
                let offset = var(out, b, 16);
                put(out, i, offset << 32 | b.len() as u64);
            }
            (DataType::Timestamp { precision } | DataType::TimestampLtz { precision }, Value::Timestamp(ts) | Value::TimestampLtz(ts)) => {
                if *precision <= MAX_COMPACT_TIMESTAMP_PRECISION {
                    put(out, i, ts.millis as u64);
                } else {
                    let offset = var(out, &ts.millis.to_le_bytes(), 8);
                    put(out, i, offset << 32 | ts.nanos_of_milli as u64);
                }
            }
            _ => panic!("encode_paimon: a {} value for a {t} key (the value was not checked)", v.type_name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::{Decimal, Timestamp};

    #[test]
    fn format_names_are_case_insensitive_and_unknown_ones_are_refused() {
        assert_eq!(LakeFormat::from_property(Some("Paimon")).unwrap(), Some(LakeFormat::Paimon));
        assert_eq!(LakeFormat::from_property(Some("ICEBERG")).unwrap(), Some(LakeFormat::Iceberg));
        assert_eq!(LakeFormat::from_property(Some("lance")).unwrap(), Some(LakeFormat::Lance));
        assert_eq!(LakeFormat::from_property(Some("Hudi")).unwrap(), Some(LakeFormat::Hudi));
        assert_eq!(LakeFormat::from_property(None).unwrap(), None);
        let e = LakeFormat::from_property(Some("delta")).unwrap_err();
        assert_eq!(e.code(), ClientCode::Unsupported as i32);
        assert!(e.message().contains("\"delta\""), "{e}");
    }

    fn hudi_str(t: DataType, v: Value) -> String {
        let mut s = String::new();
        hudi_string(&t, &v, &mut s).unwrap();
        s
    }

    #[test]
    fn hudi_key_strings_are_java_string_value_of() {
        assert_eq!(hudi_str(DataType::Boolean, Value::Boolean(true)), "true");
        assert_eq!(hudi_str(DataType::Int, Value::Int(-7)), "-7");
        assert_eq!(hudi_str(DataType::Date, Value::Date(20_000)), "20000");
        assert_eq!(hudi_str(DataType::Time { precision: 3 }, Value::Time(45_296_789)), "45296789");
        assert_eq!(hudi_str(DataType::Double, Value::Double(0.1)), "0.1");
        assert_eq!(hudi_str(DataType::Double, Value::Double(100.0)), "100.0");
        assert_eq!(hudi_str(DataType::Double, Value::Double(1e7)), "1.0E7");
        assert_eq!(hudi_str(DataType::Double, Value::Double(-1.5e-4)), "-1.5E-4");
        assert_eq!(hudi_str(DataType::Double, Value::Double(f64::NEG_INFINITY)), "-Infinity");
        assert_eq!(hudi_str(DataType::Double, Value::Double(-0.0)), "-0.0");
        assert_eq!(hudi_str(DataType::Float, Value::Float(1.1)), "1.1");
        assert_eq!(hudi_str(DataType::Float, Value::Float(f32::from_bits(1))), "1.4E-45");
        let dec = |unscaled, scale| Value::Decimal(Decimal { unscaled, precision: 20, scale });
        let dt = DataType::Decimal { precision: 20, scale: 2 };
        assert_eq!(hudi_str(dt.clone(), dec(-5, 2)), "-0.05");
        assert_eq!(hudi_str(dt.clone(), dec(0, 2)), "0.00");
        assert_eq!(hudi_str(dt.clone(), dec(12_345, 2)), "123.45");
        assert_eq!(hudi_str(dt, dec(12_345, 0)), "12345");
        let ts = |millis, nanos_of_milli| Timestamp { millis, nanos_of_milli };
        let ntz = DataType::Timestamp { precision: 9 };
        assert_eq!(hudi_str(ntz.clone(), Value::Timestamp(ts(0, 0))), "1970-01-01T00:00");
        assert_eq!(hudi_str(ntz.clone(), Value::Timestamp(ts(1500, 0))), "1970-01-01T00:00:01.500");
        assert_eq!(hudi_str(ntz.clone(), Value::Timestamp(ts(-1, 1000))), "1969-12-31T23:59:59.999001");
        assert_eq!(hudi_str(ntz, Value::Timestamp(ts(-62_167_219_200_000 - 86_400_000, 1))), "-0001-12-31T00:00:00.000000001");
        let ltz = DataType::TimestampLtz { precision: 6 };
        assert_eq!(hudi_str(ltz.clone(), Value::TimestampLtz(ts(0, 0))), "1970-01-01T00:00:00Z");
        assert_eq!(hudi_str(ltz.clone(), Value::TimestampLtz(ts(1_700_000_000_123, 0))), "2023-11-14T22:13:20.123Z");
        assert_eq!(hudi_str(ltz, Value::TimestampLtz(ts(253_402_300_800_000, 0))), "+10000-01-01T00:00:00Z");
    }

    #[test]
    fn hudi_keys_hash_as_a_java_list_of_strings() {
        // "abc".hashCode() = 96354; List.of("abc").hashCode() = 31 + 96354.
        assert_eq!(java_string_hash("abc"), 96_354);
        assert_eq!(java_string_hash("日本"), 26_085 * 31 + 26_412);
        // A character outside the BMP hashes as its two UTF-16 units.
        assert_eq!(java_string_hash("\u{1F600}"), 0xD83D * 31 + 0xDE00);
        let mut out = Vec::new();
        encode_hudi(&[("s", &DataType::String, &Value::String("abc".into()))], &mut out).unwrap();
        assert_eq!(out, (31 + 96_354i32).to_be_bytes());
        assert_eq!(hudi_bucket(&out, 7), (31 + 96_354) % 7);
        // ("a", 1): 31 * (31 + 97) + 49.
        out.clear();
        encode_hudi(&[("s", &DataType::String, &Value::String("a".into())), ("k", &DataType::Int, &Value::Int(1))], &mut out).unwrap();
        assert_eq!(out, 4017i32.to_be_bytes());
        // A negative hash keeps its low 31 bits.
        assert_eq!(hudi_bucket(&(-1i32).to_be_bytes(), 1000), i32::MAX % 1000);
    }

    #[test]
    fn hudi_refuses_what_its_record_keys_cannot_carry() {
        let s = |v: &str| Value::String(v.into());
        let mut out = Vec::new();
        // One column: anything goes, the placeholders and commas included.
        for v in ["a,b", "__null__", "__empty__", ""] {
            encode_hudi(&[("s", &DataType::String, &s(v))], &mut out).unwrap();
        }
        out.clear();
        for v in ["a,b", "__null__", "__empty__"] {
            let e = encode_hudi(&[("s", &DataType::String, &s(v)), ("t", &DataType::String, &s("x"))], &mut out).unwrap_err();
            assert_eq!(e.code(), ClientCode::InvalidRow as i32);
            assert!(e.message().contains("\"s\""), "{e}");
            assert!(out.is_empty());
        }
        encode_hudi(&[("s", &DataType::String, &s("")), ("t", &DataType::String, &s("x"))], &mut out).unwrap();
        assert!(check_hudi_key_type("b", &DataType::Bytes).is_err());
        assert!(check_hudi_key_type("b", &DataType::Binary { length: 3 }).is_err());
        assert!(check_hudi_key_type("t", &DataType::TimestampLtz { precision: 3 }).is_ok());
    }

    #[test]
    fn murmur3_matches_the_reference_implementation() {
        // Reference values of MurmurHash3_x86_32 (seed 0), tails included.
        assert_eq!(murmur3_32(b"", 0), 0);
        assert_eq!(murmur3_32(b"a", 0), 0x3c25_69b2);
        assert_eq!(murmur3_32(b"abc", 0), 0xb3dd_93fa);
        assert_eq!(murmur3_32(b"abcd", 0), 0x43ed_676a);
        assert_eq!(murmur3_32(b"Hello, world!", 0), 0xc036_3e43);
        assert_eq!(murmur3_32(b"The quick brown fox jumps over the lazy dog", 0), 0x2e4f_f723);
    }

    #[test]
    fn iceberg_int_keys_hash_as_longs() {
        // Iceberg's documented bucket hash: hash(int 34) = hash(long 34) = 2017239379.
        let mut b = Vec::new();
        encode_iceberg(&DataType::Int, &Value::Int(34), &mut b);
        assert_eq!(b, 34i64.to_le_bytes());
        assert_eq!(murmur3_32(&b, 0) as i32, 2_017_239_379);
        // Iceberg's spec: hash("iceberg") = 1210000089.
        assert_eq!(murmur3_32(b"iceberg", 0) as i32, 1_210_000_089);
    }

    #[test]
    fn paimon_rows_lay_out_like_binary_row() {
        let mut out = Vec::new();
        encode_paimon(&[(&DataType::Int, &Value::Int(5)), (&DataType::String, &Value::String("abc".into()))], &mut out);
        let mut want = vec![0u8; 8 + 16];
        want[8] = 5;
        want[16..19].copy_from_slice(b"abc");
        want[23] = 0x83;
        assert_eq!(out, want);
        // A long string goes to the variable part, zero padded to a word.
        out.clear();
        encode_paimon(&[(&DataType::String, &Value::String("0123456789".into()))], &mut out);
        assert_eq!(out.len(), 8 + 8 + 16);
        assert_eq!(&out[8..16], &((16u64 << 32) | 10).to_le_bytes());
        assert_eq!(&out[16..26], b"0123456789");
        assert_eq!(&out[26..], &[0; 6]);
        // Wide decimals reserve 16 bytes; precise timestamps 8 bytes, nanos in the slot.
        out.clear();
        let d = Decimal { unscaled: -1, precision: 20, scale: 2 };
        let ts = Timestamp { millis: 7, nanos_of_milli: 999_999 };
        encode_paimon(&[(&DataType::Decimal { precision: 20, scale: 2 }, &Value::Decimal(d)), (&DataType::Timestamp { precision: 6 }, &Value::Timestamp(ts))], &mut out);
        assert_eq!(out.len(), 8 + 16 + 16 + 8);
        assert_eq!(&out[8..16], &((24u64 << 32) | 1).to_le_bytes());
        assert_eq!(out[24], 0xff);
        assert_eq!(&out[16..24], &((40u64 << 32) | 999_999).to_le_bytes());
        assert_eq!(&out[40..48], &7i64.to_le_bytes());
    }

    #[test]
    fn buckets_stay_in_range() {
        for n in [1, 2, 3, 7, 16, 1000] {
            for k in 0..200u32 {
                let bytes = k.to_le_bytes();
                assert!((0..n).contains(&paimon_bucket(&bytes, n)));
                assert!((0..n).contains(&iceberg_bucket(&bytes, n)));
                assert!((0..n).contains(&hudi_bucket(&(k as i32).wrapping_mul(-7_919).to_be_bytes(), n)));
            }
        }
    }
}
