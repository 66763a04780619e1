//! Key bytes and buckets of tables with a datalake format (fluss-protocol.md §5.2).
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
}

impl LakeFormat {
    /// The format a table's `table.datalake.format` value names: `None` for no value; a value
    /// Fluss 0.9.1 does not know is `UNSUPPORTED`, naming it, so that no row is ever placed by a
    /// guessed rule.
    pub fn from_property(value: Option<&str>) -> Result<Option<LakeFormat>> {
        let Some(v) = value else { return Ok(None) };
        match v.trim().to_ascii_lowercase().as_str() {
            "paimon" => Ok(Some(LakeFormat::Paimon)),
            "iceberg" => Ok(Some(LakeFormat::Iceberg)),
            "lance" => Ok(Some(LakeFormat::Lance)),
            _ => Err(Error::client(
                ClientCode::Unsupported,
                format!("{FORMAT_PROPERTY} = {v:?} is not a datalake format this writer can key rows for (paimon, iceberg, lance)"),
            )),
        }
    }

    /// The property value, lower case.
    pub fn name(self) -> &'static str {
        match self {
            LakeFormat::Paimon => "paimon",
            LakeFormat::Iceberg => "iceberg",
            LakeFormat::Lance => "lance",
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
        assert_eq!(LakeFormat::from_property(None).unwrap(), None);
        let e = LakeFormat::from_property(Some("hudi")).unwrap_err();
        assert_eq!(e.code(), ClientCode::Unsupported as i32);
        assert!(e.message().contains("\"hudi\""), "{e}");
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
            }
        }
    }
}
