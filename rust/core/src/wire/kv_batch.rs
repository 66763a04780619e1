//! KV record batches, the `records` of a PutKv bucket request (docs/wire-format.md, "KV record batches").
//!
//! Header (28 bytes, little-endian, KV magic 0):
//!
//! | Offset | Size | Field |
//! |---|---|---|
//! | 0 | i32 | Length = total bytes − 4 |
//! | 4 | i8 | Magic = 0 |
//! | 5 | u32 | CRC-32C of bytes `[9, end)` |
//! | 9 | i16 | SchemaId of the value rows |
//! | 11 | i8 | Attributes = 0 |
//! | 12 | i64 | WriterId (−1 if not idempotent) |
//! | 20 | i32 | BatchSequence (−1 if not idempotent) |
//! | 24 | i32 | RecordCount |
//!
//! Then the records, each `i32 LE length` (bytes after the field) · `varint key length` · key ·
//! value. A record with no value bytes is a delete.
//!
//! [`KvBatchBuilder`] writes a batch with writer id and sequence −1; the sender stamps the
//! idempotence fields once, when the batch is first drained, with [`stamp_kv_batch`].
//! [`KvBatch`] reads one back (embedded engine, tests).

use super::crc::crc32c;
use super::varint::{get_u32, put_u32, size_u32};
use super::{corrupt, le_i16, le_i32, le_i64};
use crate::error::{Error, FlussCode, Result};

/// Bytes of the KV batch header.
pub const KV_HEADER_LEN: usize = 28;
/// The only KV batch magic.
pub const KV_MAGIC: u8 = 0;
const LENGTH_OFFSET: usize = 0;
const MAGIC_OFFSET: usize = 4;
const CRC_OFFSET: usize = 5;
const SCHEMA_ID_OFFSET: usize = 9;
const ATTRIBUTES_OFFSET: usize = 11;
const WRITER_ID_OFFSET: usize = 12;
const SEQUENCE_OFFSET: usize = 20;
const RECORD_COUNT_OFFSET: usize = 24;

/// Builds one KV batch in a single buffer. Appending copies the key and value bytes; nothing
/// else is allocated per record.
#[derive(Debug)]
pub struct KvBatchBuilder {
    buf: Vec<u8>,
    schema_id: i16,
    count: usize,
}

impl KvBatchBuilder {
    /// An empty batch for value rows of `schema_id`.
    pub fn new(schema_id: i16) -> Self {
        KvBatchBuilder { buf: vec![0; KV_HEADER_LEN], schema_id, count: 0 }
    }

    /// Append a record: `value` is the encoded row (CompactedRow), or `None` for a delete. An
    /// upsert value is never empty (a CompactedRow has at least its null bitset).
    pub fn append(&mut self, key: &[u8], value: Option<&[u8]>) {
        debug_assert!(value.is_none_or(|v| !v.is_empty()), "an upsert value cannot be empty");
        let body = size_u32(key.len() as u32) + key.len() + value.map_or(0, <[u8]>::len);
        self.buf.reserve(4 + body);
        self.buf.extend_from_slice(&(body as i32).to_le_bytes());
        put_u32(&mut self.buf, key.len() as u32);
        self.buf.extend_from_slice(key);
        if let Some(v) = value {
            self.buf.extend_from_slice(v);
        }
        self.count += 1;
    }

    /// Records appended so far.
    pub fn record_count(&self) -> usize {
        self.count
    }

    /// Bytes of the batch if it were finished now (header included).
    pub fn size_in_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Bytes one record adds to a batch.
    pub fn record_size(key_len: usize, value_len: Option<usize>) -> usize {
        4 + size_u32(key_len as u32) + key_len + value_len.unwrap_or(0)
    }

    /// The finished batch: header filled, writer id and sequence −1, CRC set.
    pub fn finish(self) -> Vec<u8> {
        let mut buf = self.buf;
        let len = buf.len();
        buf[LENGTH_OFFSET..LENGTH_OFFSET + 4].copy_from_slice(&((len - 4) as i32).to_le_bytes());
        buf[MAGIC_OFFSET] = KV_MAGIC;
        buf[SCHEMA_ID_OFFSET..SCHEMA_ID_OFFSET + 2].copy_from_slice(&self.schema_id.to_le_bytes());
        buf[ATTRIBUTES_OFFSET] = 0;
        buf[RECORD_COUNT_OFFSET..RECORD_COUNT_OFFSET + 4].copy_from_slice(&(self.count as i32).to_le_bytes());
        stamp_kv_batch(&mut buf, -1, -1);
        buf
    }
}

/// Set WriterId and BatchSequence of a finished KV batch and recompute its CRC.
///
/// Panics if `buf` is shorter than a KV batch header.
pub fn stamp_kv_batch(buf: &mut [u8], writer_id: i64, batch_sequence: i32) {
    assert!(buf.len() >= KV_HEADER_LEN, "not a KV batch: {} bytes", buf.len());
    buf[WRITER_ID_OFFSET..WRITER_ID_OFFSET + 8].copy_from_slice(&writer_id.to_le_bytes());
    buf[SEQUENCE_OFFSET..SEQUENCE_OFFSET + 4].copy_from_slice(&batch_sequence.to_le_bytes());
    let crc = crc32c(&buf[SCHEMA_ID_OFFSET..]);
    buf[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_le_bytes());
}

/// A parsed KV batch borrowing its bytes.
#[derive(Clone, Copy, Debug)]
pub struct KvBatch<'a> {
    bytes: &'a [u8],
}

/// One record of a [`KvBatch`]: the key bytes and the value row bytes (`None` = delete).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KvRecord<'a> {
    pub key: &'a [u8],
    pub value: Option<&'a [u8]>,
}

impl<'a> KvBatch<'a> {
    /// Check the header of one KV batch that spans all of `bytes`: length, magic 0 and a
    /// non-negative record count (else `CORRUPT_MESSAGE`, 3), then the CRC (else
    /// `CORRUPT_RECORD_EXCEPTION`, 14). Records are checked as they are iterated.
    pub fn parse(bytes: &'a [u8]) -> Result<KvBatch<'a>> {
        if bytes.len() < KV_HEADER_LEN {
            return Err(corrupt(format!("KV batch of {} bytes is shorter than its {KV_HEADER_LEN}-byte header", bytes.len())));
        }
        let length = le_i32(bytes, LENGTH_OFFSET);
        if length < 0 || length as usize + 4 != bytes.len() {
            return Err(corrupt(format!("KV batch length field {length} does not match its {} bytes", bytes.len())));
        }
        if bytes[MAGIC_OFFSET] != KV_MAGIC {
            return Err(corrupt(format!("unsupported KV batch magic {}", bytes[MAGIC_OFFSET])));
        }
        let batch = KvBatch { bytes };
        if batch.record_count() < 0 {
            return Err(corrupt(format!("negative KV record count {}", batch.record_count())));
        }
        let stored = batch.crc();
        let computed = crc32c(&bytes[SCHEMA_ID_OFFSET..]);
        if stored != computed {
            return Err(Error::server(
                FlussCode::CORRUPT_RECORD,
                format!("KV batch CRC mismatch: stored {stored:#010x}, computed {computed:#010x}"),
            ));
        }
        Ok(batch)
    }

    /// The whole batch.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn crc(&self) -> u32 {
        le_i32(self.bytes, CRC_OFFSET) as u32
    }

    pub fn schema_id(&self) -> i16 {
        le_i16(self.bytes, SCHEMA_ID_OFFSET)
    }

    pub fn attributes(&self) -> u8 {
        self.bytes[ATTRIBUTES_OFFSET]
    }

    pub fn writer_id(&self) -> i64 {
        le_i64(self.bytes, WRITER_ID_OFFSET)
    }

    pub fn batch_sequence(&self) -> i32 {
        le_i32(self.bytes, SEQUENCE_OFFSET)
    }

    pub fn record_count(&self) -> i32 {
        le_i32(self.bytes, RECORD_COUNT_OFFSET)
    }

    /// The records in order. A malformed record (or bytes left over after the last one) ends
    /// the iteration with one `CORRUPT_MESSAGE` error.
    pub fn records(&self) -> impl Iterator<Item = Result<KvRecord<'a>>> {
        KvRecords { buf: self.bytes, pos: KV_HEADER_LEN, remaining: self.record_count().max(0) as usize, done: false }
    }
}

struct KvRecords<'a> {
    buf: &'a [u8],
    pos: usize,
    remaining: usize,
    done: bool,
}

impl<'a> KvRecords<'a> {
    fn read(&mut self) -> Result<KvRecord<'a>> {
        let rest = &self.buf[self.pos..];
        if rest.len() < 4 {
            return Err(corrupt("truncated KV record length"));
        }
        let len = le_i32(rest, 0);
        if len < 0 || 4 + len as usize > rest.len() {
            return Err(corrupt(format!("KV record length {len} exceeds the batch")));
        }
        let rec = &rest[4..4 + len as usize];
        let mut p = 0;
        let key_len = get_u32(rec, &mut p)? as usize;
        if key_len > rec.len() - p {
            return Err(corrupt(format!("KV key length {key_len} exceeds its record")));
        }
        let key = &rec[p..p + key_len];
        let value = &rec[p + key_len..];
        self.pos += 4 + len as usize;
        Ok(KvRecord { key, value: (!value.is_empty()).then_some(value) })
    }
}

impl<'a> Iterator for KvRecords<'a> {
    type Item = Result<KvRecord<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.remaining == 0 {
            self.done = true;
            return (self.pos != self.buf.len())
                .then(|| Err(corrupt(format!("{} bytes after the last KV record", self.buf.len() - self.pos))));
        }
        self.remaining -= 1;
        let r = self.read();
        self.done = r.is_err();
        Some(r)
    }
}

#[cfg(test)]
#[allow(clippy::useless_vec)] // `row![..]` builds a Vec; tests pass it as a slice
mod tests {
    use super::*;
    use crate::metadata::{DataType, Schema};
    use crate::row;
    use crate::wire::{compacted::encode_row, key::encode_key};

    const WORKED_EXAMPLE: [u8; 43] = [
        0x27, 0x00, 0x00, 0x00, 0x00, 0xa6, 0x31, 0xa6, 0x0e, 0x01, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0x01, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x01, 0x05, 0x41, 0x6c, 0x69, 0x63, 0x65, 0x1e,
    ];

    fn schema() -> Schema {
        Schema::builder()
            .column_not_null("id", DataType::Int)
            .column("name", DataType::String)
            .column("age", DataType::BigInt)
            .primary_key(["id"])
            .build()
            .unwrap()
    }

    fn alice() -> (Vec<u8>, Vec<u8>) {
        let s = schema();
        let r = row![1, "Alice", 30i64];
        let (mut k, mut v) = (Vec::new(), Vec::new());
        encode_key(&s, &[0], &r, &mut k).unwrap();
        encode_row(&s, &r, &mut v).unwrap();
        (k, v)
    }

    #[test]
    fn worked_example_byte_for_byte() {
        let (k, v) = alice();
        let mut b = KvBatchBuilder::new(1);
        assert_eq!(KvBatchBuilder::record_size(k.len(), Some(v.len())), 15);
        b.append(&k, Some(&v));
        assert_eq!(b.size_in_bytes(), 43);
        assert_eq!(b.record_count(), 1);
        let bytes = b.finish();
        assert_eq!(bytes, WORKED_EXAMPLE);
        let batch = KvBatch::parse(&bytes).unwrap();
        assert_eq!(batch.crc(), 0x0EA6_31A6);
        assert_eq!((batch.schema_id(), batch.writer_id(), batch.batch_sequence(), batch.record_count()), (1, -1, -1, 1));
        let recs: Vec<_> = batch.records().collect::<Result<_>>().unwrap();
        assert_eq!(recs, [KvRecord { key: &[0x01], value: Some(&v[..]) }]);
    }

    #[test]
    fn delete_record_bytes() {
        let mut b = KvBatchBuilder::new(1);
        b.append(&[0x01], None);
        assert_eq!(KvBatchBuilder::record_size(1, None), 6);
        let bytes = b.finish();
        assert_eq!(&bytes[KV_HEADER_LEN..], [0x02, 0x00, 0x00, 0x00, 0x01, 0x01]);
        let batch = KvBatch::parse(&bytes).unwrap();
        let recs: Vec<_> = batch.records().collect::<Result<_>>().unwrap();
        assert_eq!(recs, [KvRecord { key: &[0x01], value: None }]);
    }

    #[test]
    fn size_accounting_matches_the_output() {
        let mut b = KvBatchBuilder::new(3);
        let mut expected = KV_HEADER_LEN;
        for i in 0..300usize {
            let key = vec![7u8; i];
            let value = (i % 3 != 0).then(|| vec![1u8; i * 2 + 1]);
            expected += KvBatchBuilder::record_size(key.len(), value.as_ref().map(Vec::len));
            b.append(&key, value.as_deref());
            assert_eq!(b.size_in_bytes(), expected);
        }
        let bytes = b.finish();
        assert_eq!(bytes.len(), expected);
        let batch = KvBatch::parse(&bytes).unwrap();
        assert_eq!(batch.record_count(), 300);
        for (i, r) in batch.records().enumerate() {
            let r = r.unwrap();
            assert_eq!(r.key.len(), i);
            assert_eq!(r.value.map(<[u8]>::len), (i % 3 != 0).then_some(i * 2 + 1));
        }
    }

    #[test]
    fn stamp_then_verify_crc() {
        let (k, v) = alice();
        let mut b = KvBatchBuilder::new(1);
        b.append(&k, Some(&v));
        let mut bytes = b.finish();
        let before = bytes.clone();
        stamp_kv_batch(&mut bytes, 1234, 7);
        let batch = KvBatch::parse(&bytes).unwrap();
        assert_eq!((batch.writer_id(), batch.batch_sequence()), (1234, 7));
        assert_ne!(batch.crc(), 0x0EA6_31A6);
        assert_eq!(&bytes[28..], &before[28..]);
        stamp_kv_batch(&mut bytes, -1, -1);
        assert_eq!(bytes, before);
    }

    #[test]
    fn detects_corruption() {
        for i in 9..WORKED_EXAMPLE.len() {
            let mut bad = WORKED_EXAMPLE;
            bad[i] ^= 0x10;
            let e = KvBatch::parse(&bad).unwrap_err();
            assert_eq!(e.code(), FlussCode::CORRUPT_RECORD, "byte {i}");
        }
        let mut bad = WORKED_EXAMPLE;
        bad[4] = 1;
        assert_eq!(KvBatch::parse(&bad).unwrap_err().code(), FlussCode::CORRUPT_MESSAGE);
        assert_eq!(KvBatch::parse(&WORKED_EXAMPLE[..42]).unwrap_err().code(), FlussCode::CORRUPT_MESSAGE);
        assert_eq!(KvBatch::parse(&WORKED_EXAMPLE[..20]).unwrap_err().code(), FlussCode::CORRUPT_MESSAGE);
        let mut longer = WORKED_EXAMPLE.to_vec();
        longer.push(0);
        assert!(KvBatch::parse(&longer).is_err());
    }

    #[test]
    fn malformed_records_end_iteration_with_an_error() {
        // Record count says 2 but there is one record.
        let mut bytes = WORKED_EXAMPLE.to_vec();
        bytes[RECORD_COUNT_OFFSET] = 2;
        stamp_kv_batch(&mut bytes, -1, -1);
        let batch = KvBatch::parse(&bytes).unwrap();
        let recs: Vec<_> = batch.records().collect();
        assert_eq!(recs.len(), 2);
        assert!(recs[0].is_ok());
        assert_eq!(recs[1].as_ref().unwrap_err().code(), FlussCode::CORRUPT_MESSAGE);
        // Record count says 0 but there is a record.
        bytes[RECORD_COUNT_OFFSET] = 0;
        stamp_kv_batch(&mut bytes, -1, -1);
        let recs: Vec<_> = KvBatch::parse(&bytes).unwrap().records().collect();
        assert_eq!(recs.len(), 1);
        assert!(recs[0].is_err());
        // Key length larger than the record.
        let mut bytes = WORKED_EXAMPLE.to_vec();
        bytes[32] = 0x20;
        stamp_kv_batch(&mut bytes, -1, -1);
        assert!(KvBatch::parse(&bytes).unwrap().records().next().unwrap().is_err());
    }
}
