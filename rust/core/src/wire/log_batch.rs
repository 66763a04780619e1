//! ARROW log record batches, magic 0 only (docs/wire-format.md, "Log record batches"): the `records` of
//! ProduceLog and FetchLog.
//!
//! Header (48 bytes, little-endian):
//!
//! | Offset | Size | Field |
//! |---|---|---|
//! | 0 | i64 | BaseOffset (0 from clients; the server assigns it) |
//! | 8 | i32 | Length = total bytes − 12 |
//! | 12 | i8 | Magic = 0 |
//! | 13 | i64 | CommitTimestamp (0 from clients; the server assigns it) |
//! | 21 | u32 | CRC-32C of bytes `[25, end)` |
//! | 25 | i16 | SchemaId |
//! | 27 | i8 | Attributes: bit 0 = append-only |
//! | 28 | i32 | LastOffsetDelta = RecordCount − 1 |
//! | 32 | i64 | WriterId (−1 if not idempotent) |
//! | 40 | i32 | BatchSequence (−1 if not idempotent) |
//! | 44 | i32 | RecordCount |
//!
//! Then, if the batch is not append-only, one change-type byte per record (0 +A, 1 +I,
//! 2 -U, 3 +U, 4 -D), then exactly one Arrow IPC encapsulated RecordBatch message
//! (continuation `0xFFFFFFFF`, metadata length, flatbuffer `Message` V5, body) with no schema
//! message and no end-of-stream marker. Readers rebuild the schema from the table schema.
//!
//! Writing: [`build_arrow_log_batch`] (uncompressed body, 8-byte alignment like Java's writer),
//! then [`stamp_log_batch`] for idempotent writers. The server assigns offsets with
//! [`set_log_batch_offset`] (both fields lie outside the CRC). Reading: [`LogBatch`]; bodies
//! compressed with LZ4_FRAME or ZSTD (the server default for its changelogs) are decoded too.

use std::collections::HashMap;

use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_ipc::writer::{write_message, DictionaryTracker, IpcDataGenerator, IpcWriteContext, IpcWriteOptions};
use arrow_ipc::MetadataVersion;

use super::arrow::arrow_schema;
use super::crc::crc32c;
use super::{corrupt, le_i16, le_i32, le_i64};
use crate::error::{Error, FlussCode, Result};
use crate::metadata::Schema;

/// Bytes of the magic-0 log batch header.
pub const LOG_HEADER_LEN: usize = 48;
/// The only log batch magic this SDK writes or reads.
pub const LOG_MAGIC: u8 = 0;
/// Attributes bit 0: the batch holds appends only (no change-type vector).
pub const APPEND_ONLY_FLAG: u8 = 0x01;
/// Bytes before the Length field ends (BaseOffset + Length); `Length` counts the rest.
pub const LOG_OVERHEAD: usize = 12;

const BASE_OFFSET_OFFSET: usize = 0;
const LENGTH_OFFSET: usize = 8;
const MAGIC_OFFSET: usize = 12;
const COMMIT_TIMESTAMP_OFFSET: usize = 13;
const CRC_OFFSET: usize = 21;
const SCHEMA_ID_OFFSET: usize = 25;
const ATTRIBUTES_OFFSET: usize = 27;
const LAST_OFFSET_DELTA_OFFSET: usize = 28;
const WRITER_ID_OFFSET: usize = 32;
const SEQUENCE_OFFSET: usize = 40;
const RECORD_COUNT_OFFSET: usize = 44;

/// Change-type bytes of non-append-only batches (docs/wire-format.md, "Log record batches").
pub mod change_type {
    pub const APPEND_ONLY: u8 = 0;
    pub const INSERT: u8 = 1;
    pub const UPDATE_BEFORE: u8 = 2;
    pub const UPDATE_AFTER: u8 = 3;
    pub const DELETE: u8 = 4;
}

/// Build one log batch from `batch`, whose columns must already have the table's physical
/// types (see [`conform_record_batch`](super::arrow::conform_record_batch)).
///
/// `change_types`: `None` for an append-only batch (Attributes bit 0 set); `Some(v)` with one
/// byte per row for a changelog batch (bit 0 clear, vector before the Arrow payload). The batch
/// is not idempotent yet (writer id and sequence −1) and its CRC is set. Empty batches and
/// dictionary-encoded columns are rejected.
pub fn build_arrow_log_batch(batch: &RecordBatch, schema_id: i16, change_types: Option<&[u8]>) -> Result<Vec<u8>> {
    build_arrow_log_batch_compressed(batch, schema_id, change_types, ArrowCompression::None)
}

/// Body compression of ARROW log batches: the table property `table.log.arrow.compression.type`
/// (Fluss's default is ZSTD). Compressed buffers use the standard Arrow IPC `BodyCompression`
/// (each buffer prefixed by its uncompressed length), which every Fluss reader handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrowCompression {
    None,
    Lz4Frame,
    Zstd,
}

impl ArrowCompression {
    /// The table property's name.
    pub const PROPERTY: &'static str = "table.log.arrow.compression.type";

    /// From the property's value; absent means Fluss's default, ZSTD.
    pub fn from_property(value: Option<&str>) -> Result<ArrowCompression> {
        match value.map(|v| v.trim().to_ascii_uppercase()) {
            None => Ok(ArrowCompression::Zstd),
            Some(v) if v == "ZSTD" => Ok(ArrowCompression::Zstd),
            Some(v) if v == "LZ4_FRAME" => Ok(ArrowCompression::Lz4Frame),
            Some(v) if v == "NONE" => Ok(ArrowCompression::None),
            Some(v) => Err(Error::client(crate::ClientCode::Unsupported, format!("{} = {v:?} is not supported", Self::PROPERTY))),
        }
    }
}

/// [`build_arrow_log_batch`] with a body compression.
pub fn build_arrow_log_batch_compressed(
    batch: &RecordBatch,
    schema_id: i16,
    change_types: Option<&[u8]>,
    compression: ArrowCompression,
) -> Result<Vec<u8>> {
    let rows = batch.num_rows();
    if rows == 0 {
        return Err(Error::invalid_row("a log batch needs at least one row"));
    }
    if rows > i32::MAX as usize {
        return Err(Error::invalid_row(format!("{rows} rows do not fit in one log batch")));
    }
    if let Some(ct) = change_types {
        if ct.len() != rows {
            return Err(Error::invalid_row(format!("{} change types for {rows} rows", ct.len())));
        }
    }
    let options = IpcWriteOptions::try_new(8, false, MetadataVersion::V5)?;
    let options = match compression {
        ArrowCompression::None => options,
        ArrowCompression::Lz4Frame => options.try_with_compression(Some(arrow_ipc::CompressionType::LZ4_FRAME))?,
        ArrowCompression::Zstd => options.try_with_compression(Some(arrow_ipc::CompressionType::ZSTD))?,
    };
    build_with_options(batch, schema_id, change_types, &options)
}

fn build_with_options(batch: &RecordBatch, schema_id: i16, change_types: Option<&[u8]>, options: &IpcWriteOptions) -> Result<Vec<u8>> {
    let rows = batch.num_rows();
    let (dictionaries, message) =
        IpcDataGenerator::default().encode(batch, &mut DictionaryTracker::new(false), options, &mut IpcWriteContext::default())?;
    if !dictionaries.is_empty() {
        return Err(Error::invalid_row("dictionary-encoded columns cannot be written to a log batch"));
    }
    let ct_len = change_types.map_or(0, <[u8]>::len);
    let mut buf = Vec::with_capacity(LOG_HEADER_LEN + ct_len + 16 + message.ipc_message.len() + message.arrow_data.len());
    buf.resize(LOG_HEADER_LEN, 0);
    if let Some(ct) = change_types {
        buf.extend_from_slice(ct);
    }
    write_message(&mut buf, message, options)?;

    let total = buf.len();
    let length =
        i32::try_from(total - LOG_OVERHEAD).map_err(|_| Error::invalid_row(format!("a log batch of {total} bytes is too large")))?;
    buf[BASE_OFFSET_OFFSET..BASE_OFFSET_OFFSET + 8].copy_from_slice(&0i64.to_le_bytes());
    buf[LENGTH_OFFSET..LENGTH_OFFSET + 4].copy_from_slice(&length.to_le_bytes());
    buf[MAGIC_OFFSET] = LOG_MAGIC;
    buf[COMMIT_TIMESTAMP_OFFSET..COMMIT_TIMESTAMP_OFFSET + 8].copy_from_slice(&0i64.to_le_bytes());
    buf[SCHEMA_ID_OFFSET..SCHEMA_ID_OFFSET + 2].copy_from_slice(&schema_id.to_le_bytes());
    buf[ATTRIBUTES_OFFSET] = if change_types.is_none() { APPEND_ONLY_FLAG } else { 0 };
    buf[LAST_OFFSET_DELTA_OFFSET..LAST_OFFSET_DELTA_OFFSET + 4].copy_from_slice(&(rows as i32 - 1).to_le_bytes());
    buf[RECORD_COUNT_OFFSET..RECORD_COUNT_OFFSET + 4].copy_from_slice(&(rows as i32).to_le_bytes());
    stamp_log_batch(&mut buf, -1, -1);
    Ok(buf)
}

/// Set WriterId and BatchSequence of a finished log batch and recompute its CRC.
///
/// Panics if `buf` is shorter than a log batch header.
pub fn stamp_log_batch(buf: &mut [u8], writer_id: i64, batch_sequence: i32) {
    assert!(buf.len() >= LOG_HEADER_LEN, "not a log batch: {} bytes", buf.len());
    buf[WRITER_ID_OFFSET..WRITER_ID_OFFSET + 8].copy_from_slice(&writer_id.to_le_bytes());
    buf[SEQUENCE_OFFSET..SEQUENCE_OFFSET + 4].copy_from_slice(&batch_sequence.to_le_bytes());
    let crc = crc32c(&buf[SCHEMA_ID_OFFSET..]);
    buf[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_le_bytes());
}

/// Set BaseOffset and CommitTimestamp (what a server does on append). Neither field is covered
/// by the CRC, which is left as it is.
///
/// Panics if `buf` is shorter than a log batch header.
pub fn set_log_batch_offset(buf: &mut [u8], base_offset: i64, commit_timestamp: i64) {
    assert!(buf.len() >= LOG_HEADER_LEN, "not a log batch: {} bytes", buf.len());
    buf[BASE_OFFSET_OFFSET..BASE_OFFSET_OFFSET + 8].copy_from_slice(&base_offset.to_le_bytes());
    buf[COMMIT_TIMESTAMP_OFFSET..COMMIT_TIMESTAMP_OFFSET + 8].copy_from_slice(&commit_timestamp.to_le_bytes());
}

/// A parsed magic-0 log batch borrowing its bytes.
#[derive(Clone, Copy, Debug)]
pub struct LogBatch<'a> {
    bytes: &'a [u8],
}

impl<'a> LogBatch<'a> {
    /// All batches of a `records` field (FetchLog may cut the last one short: an incomplete
    /// tail is ignored). A complete batch with a bad header is `CORRUPT_MESSAGE`.
    pub fn parse_all(bytes: &'a [u8]) -> Result<Vec<LogBatch<'a>>> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while rest.len() >= LOG_OVERHEAD {
            let length = le_i32(rest, LENGTH_OFFSET);
            if length < (LOG_HEADER_LEN - LOG_OVERHEAD) as i32 {
                return Err(corrupt(format!("log batch length field {length} is shorter than its header")));
            }
            let total = LOG_OVERHEAD + length as usize;
            if total > rest.len() {
                break;
            }
            out.push(LogBatch::parse_one(&rest[..total])?);
            rest = &rest[total..];
        }
        Ok(out)
    }

    /// Exactly one batch spanning all of `bytes`. Checks the header (length, magic 0, record
    /// count, room for the change-type vector), not the CRC: see [`verify_crc`](Self::verify_crc)
    /// and [`check_crc`](Self::check_crc).
    pub fn parse_one(bytes: &'a [u8]) -> Result<LogBatch<'a>> {
        if bytes.len() < LOG_HEADER_LEN {
            return Err(corrupt(format!("log batch of {} bytes is shorter than its {LOG_HEADER_LEN}-byte header", bytes.len())));
        }
        let length = le_i32(bytes, LENGTH_OFFSET);
        if length < 0 || length as usize + LOG_OVERHEAD != bytes.len() {
            return Err(corrupt(format!("log batch length field {length} does not match its {} bytes", bytes.len())));
        }
        if bytes[MAGIC_OFFSET] != LOG_MAGIC {
            return Err(corrupt(format!("unsupported log batch magic {} (only magic 0 is supported)", bytes[MAGIC_OFFSET])));
        }
        let batch = LogBatch { bytes };
        let count = batch.record_count();
        if count < 0 {
            return Err(corrupt(format!("negative log record count {count}")));
        }
        if !batch.is_append_only() && LOG_HEADER_LEN + count as usize > bytes.len() {
            return Err(corrupt(format!("{count} change types do not fit in a log batch of {} bytes", bytes.len())));
        }
        Ok(batch)
    }

    /// The whole batch.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn base_offset(&self) -> i64 {
        le_i64(self.bytes, BASE_OFFSET_OFFSET)
    }

    pub fn magic(&self) -> u8 {
        self.bytes[MAGIC_OFFSET]
    }

    pub fn commit_timestamp(&self) -> i64 {
        le_i64(self.bytes, COMMIT_TIMESTAMP_OFFSET)
    }

    /// The stored CRC.
    pub fn crc(&self) -> u32 {
        le_i32(self.bytes, CRC_OFFSET) as u32
    }

    /// Whether the stored CRC matches the bytes it covers.
    pub fn verify_crc(&self) -> bool {
        self.crc() == crc32c(&self.bytes[SCHEMA_ID_OFFSET..])
    }

    /// [`verify_crc`](Self::verify_crc) as a server answers it: `CORRUPT_RECORD_EXCEPTION` (14).
    pub fn check_crc(&self) -> Result<()> {
        if self.verify_crc() {
            Ok(())
        } else {
            Err(Error::server(
                FlussCode::CORRUPT_RECORD,
                format!("log batch CRC mismatch: stored {:#010x}, computed {:#010x}", self.crc(), crc32c(&self.bytes[SCHEMA_ID_OFFSET..])),
            ))
        }
    }

    pub fn schema_id(&self) -> i16 {
        le_i16(self.bytes, SCHEMA_ID_OFFSET)
    }

    pub fn attributes(&self) -> u8 {
        self.bytes[ATTRIBUTES_OFFSET]
    }

    pub fn is_append_only(&self) -> bool {
        self.attributes() & APPEND_ONLY_FLAG != 0
    }

    pub fn last_offset_delta(&self) -> i32 {
        le_i32(self.bytes, LAST_OFFSET_DELTA_OFFSET)
    }

    /// BaseOffset + LastOffsetDelta.
    pub fn last_offset(&self) -> i64 {
        self.base_offset() + self.last_offset_delta() as i64
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

    /// One change-type byte per record, for batches that are not append-only.
    pub fn change_types(&self) -> Option<&'a [u8]> {
        (!self.is_append_only()).then(|| &self.bytes[LOG_HEADER_LEN..LOG_HEADER_LEN + self.record_count() as usize])
    }

    /// The Arrow IPC RecordBatch message (empty for a server-written batch without records).
    pub fn arrow_payload(&self) -> &'a [u8] {
        let ct = if self.is_append_only() { 0 } else { self.record_count() as usize };
        &self.bytes[LOG_HEADER_LEN + ct..]
    }

    /// Decode the Arrow payload with the Arrow schema of `schema` (the table schema of
    /// [`schema_id`](Self::schema_id)). Uncompressed, LZ4_FRAME and ZSTD bodies are supported.
    pub fn decode(&self, schema: &Schema) -> Result<RecordBatch> {
        let arrow = arrow_schema(schema);
        let payload = self.arrow_payload();
        let count = self.record_count() as usize;
        if payload.is_empty() && count == 0 {
            return Ok(RecordBatch::new_empty(arrow));
        }
        let (meta_start, meta_len) = match payload {
            [0xFF, 0xFF, 0xFF, 0xFF, rest @ ..] if rest.len() >= 4 => (8, le_i32(rest, 0)),
            _ if payload.len() >= 4 => (4, le_i32(payload, 0)), // pre-1.0 IPC: no continuation marker
            _ => return Err(corrupt("log batch Arrow payload is truncated")),
        };
        if meta_len < 0 || meta_start + meta_len as usize > payload.len() {
            return Err(corrupt(format!("Arrow metadata length {meta_len} exceeds the payload")));
        }
        let body_start = meta_start + meta_len as usize;
        let message = arrow_ipc::root_as_message(&payload[meta_start..body_start])
            .map_err(|e| corrupt(format!("Arrow IPC message does not parse: {e}")))?;
        let header = message.header_as_record_batch().ok_or_else(|| corrupt("the Arrow IPC message is not a RecordBatch"))?;
        let body_len = usize::try_from(message.bodyLength()).map_err(|_| corrupt("negative Arrow body length"))?;
        if body_len > payload.len() - body_start {
            return Err(corrupt(format!("Arrow body of {body_len} bytes exceeds the payload")));
        }
        check_ipc_layout(header, &payload[body_start..body_start + body_len], count, &arrow)?;
        let body = Buffer::from(&payload[body_start..body_start + body_len]);
        // Backstop: the checks above cover the layouts this crate writes and reads; arrow-rs still
        // asserts on some malformed bodies (misaligned typed views), so a panic of the reader is
        // turned into the same error as any other corrupt batch.
        let version = message.version();
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            arrow_ipc::reader::read_record_batch(&body, header, arrow, &HashMap::new(), None, &version)
        }))
        .map_err(|_| corrupt("Arrow RecordBatch does not decode: the Arrow reader rejected its buffers"))?;
        let batch = read.map_err(|e| corrupt(format!("Arrow RecordBatch does not decode: {e}")))?;
        if batch.num_rows() != count {
            return Err(corrupt(format!("the Arrow batch has {} rows but the header says {count}", batch.num_rows())));
        }
        Ok(batch)
    }
}

/// The largest buffer a compressed Arrow body may declare once decompressed (1 GiB, the largest
/// response frame): a hostile length prefix must not make the client allocate more.
const MAX_DECOMPRESSED_BUFFER: i64 = 1 << 30;

/// Buffers the Arrow IPC format stores per column of a flat (non-nested) type: validity, then
/// offsets and data for variable-length types, data otherwise. `None` for types whose layout this
/// check does not know (they are left to the Arrow reader's own validation).
fn ipc_buffers(t: &arrow_schema::DataType) -> Option<(usize, BufferKind)> {
    use arrow_schema::DataType as A;
    match t {
        A::Utf8 | A::Binary => Some((3, BufferKind::VarLen)),
        A::Boolean => Some((2, BufferKind::Bits)),
        t => t.primitive_width().map(|w| (2, BufferKind::Fixed(w))),
    }
}

#[derive(Clone, Copy)]
enum BufferKind {
    Bits,
    Fixed(usize),
    VarLen,
}

/// Check an Arrow IPC RecordBatch message against its body before the Arrow reader touches it.
/// The reader trusts buffer offsets and lengths (a bad one panics inside arrow-buffer), so a
/// batch from a server or a client is checked here first: every buffer inside the body, one node
/// per column with the batch's row count, buffers large enough for that many rows, and compressed
/// buffers declaring a sane decompressed size. Anything else is `CORRUPT_MESSAGE`.
fn check_ipc_layout(header: arrow_ipc::RecordBatch<'_>, body: &[u8], rows: usize, schema: &arrow_schema::SchemaRef) -> Result<()> {
    if header.length() != rows as i64 {
        return Err(corrupt(format!("the Arrow batch says {} rows but the log batch header says {rows}", header.length())));
    }
    let nodes = header.nodes().ok_or_else(|| corrupt("the Arrow batch has no field nodes"))?;
    let buffers = header.buffers().ok_or_else(|| corrupt("the Arrow batch has no buffers"))?;
    for b in buffers.iter() {
        let end = b.offset().checked_add(b.length());
        if b.offset() < 0 || b.length() < 0 || end.is_none_or(|e| e as u64 > body.len() as u64) {
            return Err(corrupt(format!(
                "Arrow buffer at {} of {} bytes lies outside the {}-byte body",
                b.offset(),
                b.length(),
                body.len()
            )));
        }
        // The format aligns every buffer to 8 bytes; the reader views them as typed slices and
        // panics on a misaligned one.
        if b.offset() % 8 != 0 {
            return Err(corrupt(format!("Arrow buffer at offset {} is not 8-byte aligned", b.offset())));
        }
    }
    let layouts: Option<Vec<(usize, BufferKind)>> = schema.fields().iter().map(|f| ipc_buffers(f.data_type())).collect();
    let Some(layouts) = layouts else { return Ok(()) };
    if nodes.len() != layouts.len() || buffers.len() != layouts.iter().map(|l| l.0).sum::<usize>() {
        return Err(corrupt(format!(
            "the Arrow batch has {} field nodes and {} buffers, not what the table's {} columns need",
            nodes.len(),
            buffers.len(),
            layouts.len()
        )));
    }
    let compressed = header.compression().is_some();
    // The size a buffer has once read: its length, or for a compressed body the decompressed
    // length in its 8-byte prefix (-1 = stored uncompressed after the prefix).
    let size_of = |b: &arrow_ipc::Buffer| -> Result<u64> {
        let (off, len) = (b.offset() as usize, b.length() as usize);
        if !compressed || len == 0 {
            return Ok(len as u64);
        }
        if len < 8 {
            return Err(corrupt("a compressed Arrow buffer is shorter than its length prefix"));
        }
        let declared = le_i64(body, off);
        match declared {
            -1 => Ok((len - 8) as u64),
            d if (0..=MAX_DECOMPRESSED_BUFFER).contains(&d) => Ok(d as u64),
            d => Err(corrupt(format!("a compressed Arrow buffer declares {d} bytes once decompressed"))),
        }
    };
    let rows = rows as u64;
    let mut next = 0;
    for (node, (count, kind)) in nodes.iter().zip(&layouts) {
        if node.length() != rows as i64 || node.null_count() < 0 || node.null_count() > node.length() {
            return Err(corrupt(format!(
                "an Arrow field node has {} rows and {} nulls in a batch of {rows}",
                node.length(),
                node.null_count()
            )));
        }
        let bufs: Vec<u64> = (next..next + count).map(|i| size_of(buffers.get(i))).collect::<Result<_>>()?;
        next += count;
        let bitmap = rows.div_ceil(8);
        let validity_ok = bufs[0] == 0 && node.null_count() == 0 || bufs[0] >= bitmap;
        let values_ok = match kind {
            BufferKind::Bits => bufs[1] >= bitmap,
            BufferKind::Fixed(w) => bufs[1] >= rows.saturating_mul(*w as u64),
            BufferKind::VarLen => rows == 0 || bufs[1] >= (rows + 1) * 4,
        };
        if !(validity_ok && values_ok) {
            return Err(corrupt(format!("Arrow buffers of {bufs:?} bytes are too small for {rows} rows")));
        }
        // The reader views value and offset buffers as whole typed slices and asserts that no
        // byte is left over (found by fuzz/fuzz_targets/log_batch: a 17-byte offsets buffer).
        let width = match kind {
            BufferKind::Bits => 1,
            BufferKind::Fixed(w) => *w as u64,
            BufferKind::VarLen => 4,
        };
        if !bufs[1].is_multiple_of(width) {
            return Err(corrupt(format!("an Arrow buffer of {} bytes is not a whole number of {width}-byte values", bufs[1])));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::useless_vec)] // `row![..]` builds a Vec; tests pass it as a slice
mod tests {
    use super::*;
    use crate::metadata::DataType;
    use crate::row::{Decimal, Timestamp, Value};
    use crate::wire::arrow::{record_batch_to_rows, RowsToArrow};
    use crate::{row, Row};

    fn schema() -> Schema {
        Schema::builder()
            .column_not_null("id", DataType::Int)
            .column("name", DataType::String)
            .column("amount", DataType::Decimal { precision: 20, scale: 2 })
            .column("ts", DataType::TimestampLtz { precision: 6 })
            .column("raw", DataType::Bytes)
            .build()
            .unwrap()
    }

    fn rows() -> Vec<Row> {
        vec![
            row![
                1,
                "a",
                Decimal { unscaled: -12345, precision: 20, scale: 2 },
                Value::TimestampLtz(Timestamp::from_micros(-5)),
                vec![1u8, 2]
            ],
            row![2, None::<String>, Value::Null, Value::Null, Value::Null],
            row![
                3,
                "ccc",
                Decimal { unscaled: 10i128.pow(19), precision: 20, scale: 2 },
                Value::TimestampLtz(Timestamp::from_micros(1_700_000_000_000_001)),
                Vec::<u8>::new()
            ],
        ]
    }

    fn arrow_batch() -> RecordBatch {
        let mut b = RowsToArrow::new(&schema());
        for r in rows() {
            b.append(&r).unwrap();
        }
        b.finish()
    }

    #[test]
    fn build_parse_decode_round_trip() {
        let bytes = build_arrow_log_batch(&arrow_batch(), 7, None).unwrap();
        let b = LogBatch::parse_one(&bytes).unwrap();
        assert_eq!(b.base_offset(), 0);
        assert_eq!(b.magic(), 0);
        assert_eq!(b.commit_timestamp(), 0);
        assert_eq!(b.schema_id(), 7);
        assert_eq!(b.attributes(), 1);
        assert!(b.is_append_only());
        assert_eq!(b.last_offset_delta(), 2);
        assert_eq!((b.writer_id(), b.batch_sequence(), b.record_count()), (-1, -1, 3));
        assert!(b.verify_crc());
        assert_eq!(b.change_types(), None);
        assert_eq!(le_i32(&bytes, LENGTH_OFFSET) as usize, bytes.len() - 12);
        // The payload is one encapsulated message: continuation marker then metadata length.
        let p = b.arrow_payload();
        assert_eq!(&p[..4], &[0xFF; 4]);
        assert_eq!(p.as_ptr(), bytes[48..].as_ptr());
        let decoded = b.decode(&schema()).unwrap();
        assert_eq!(decoded, arrow_batch());
        assert_eq!(record_batch_to_rows(&schema(), &decoded).unwrap(), rows());
    }

    #[test]
    fn changelog_batches_carry_change_types() {
        let ct = [change_type::INSERT, change_type::UPDATE_BEFORE, change_type::DELETE];
        let bytes = build_arrow_log_batch(&arrow_batch(), 1, Some(&ct)).unwrap();
        let b = LogBatch::parse_one(&bytes).unwrap();
        assert!(!b.is_append_only());
        assert_eq!(b.attributes(), 0);
        assert_eq!(b.change_types(), Some(&ct[..]));
        assert_eq!(&bytes[48..51], &ct);
        assert_eq!(&b.arrow_payload()[..4], &[0xFF; 4]);
        assert_eq!(b.decode(&schema()).unwrap(), arrow_batch());
        assert!(build_arrow_log_batch(&arrow_batch(), 1, Some(&ct[..2])).is_err());
    }

    #[test]
    fn rejects_empty_batches() {
        let empty = RowsToArrow::new(&schema()).finish();
        let e = build_arrow_log_batch(&empty, 1, None).unwrap_err();
        assert_eq!(e.code(), crate::ClientCode::InvalidRow as i32);
    }

    #[test]
    fn stamp_then_verify_and_offsets_leave_crc_alone() {
        let mut bytes = build_arrow_log_batch(&arrow_batch(), 1, None).unwrap();
        let crc0 = LogBatch::parse_one(&bytes).unwrap().crc();
        stamp_log_batch(&mut bytes, 99, 5);
        let b = LogBatch::parse_one(&bytes).unwrap();
        assert_eq!((b.writer_id(), b.batch_sequence()), (99, 5));
        assert!(b.verify_crc());
        let crc1 = b.crc();
        assert_ne!(crc0, crc1);
        set_log_batch_offset(&mut bytes, 1000, 1_700_000_000_000);
        let b = LogBatch::parse_one(&bytes).unwrap();
        assert_eq!((b.base_offset(), b.commit_timestamp(), b.last_offset()), (1000, 1_700_000_000_000, 1002));
        assert_eq!(b.crc(), crc1);
        assert!(b.verify_crc());
        b.check_crc().unwrap();
    }

    #[test]
    fn corrupted_bytes_are_detected() {
        let bytes = build_arrow_log_batch(&arrow_batch(), 1, None).unwrap();
        for i in (25..bytes.len()).step_by(7) {
            let mut bad = bytes.clone();
            bad[i] ^= 0x01;
            let b = LogBatch::parse_one(&bad).unwrap();
            assert!(!b.verify_crc(), "flip at {i} not detected");
            assert_eq!(b.check_crc().unwrap_err().code(), FlussCode::CORRUPT_RECORD);
        }
        // Outside the CRC range: offsets and timestamp are not covered.
        let mut bad = bytes.clone();
        bad[3] ^= 1;
        bad[15] ^= 1;
        assert!(LogBatch::parse_one(&bad).unwrap().verify_crc());
        let mut bad = bytes.clone();
        bad[MAGIC_OFFSET] = 1;
        assert_eq!(LogBatch::parse_one(&bad).unwrap_err().code(), FlussCode::CORRUPT_MESSAGE);
        assert!(LogBatch::parse_one(&bytes[..bytes.len() - 1]).is_err());
        assert!(LogBatch::parse_one(&bytes[..40]).is_err());
        // A broken Arrow payload fails to decode with CORRUPT_MESSAGE.
        let mut bad = bytes.clone();
        bad[52..56].copy_from_slice(&i32::MAX.to_le_bytes());
        assert_eq!(LogBatch::parse_one(&bad).unwrap().decode(&schema()).unwrap_err().code(), FlussCode::CORRUPT_MESSAGE);
    }

    #[test]
    fn parse_all_reads_concatenated_batches_and_ignores_a_truncated_tail() {
        let a = build_arrow_log_batch(&arrow_batch(), 1, None).unwrap();
        let mut b = build_arrow_log_batch(&arrow_batch(), 2, Some(&[1, 1, 1])).unwrap();
        set_log_batch_offset(&mut b, 3, 0);
        let mut all = a.clone();
        all.extend_from_slice(&b);
        all.extend_from_slice(&a[..30]);
        let batches = LogBatch::parse_all(&all).unwrap();
        assert_eq!(batches.len(), 2);
        assert_eq!(batches[0].bytes(), &a[..]);
        assert_eq!(batches[1].bytes(), &b[..]);
        assert_eq!((batches[1].schema_id(), batches[1].base_offset()), (2, 3));
        assert_eq!(LogBatch::parse_all(&all[..a.len() + 5]).unwrap().len(), 1);
        assert!(LogBatch::parse_all(&[]).unwrap().is_empty());
    }

    #[test]
    fn decodes_compressed_bodies() {
        for codec in [arrow_ipc::CompressionType::ZSTD, arrow_ipc::CompressionType::LZ4_FRAME] {
            let options = IpcWriteOptions::try_new(8, false, MetadataVersion::V5).unwrap().try_with_compression(Some(codec)).unwrap();
            let bytes = build_with_options(&arrow_batch(), 1, Some(&[1, 3, 4]), &options).unwrap();
            let plain = build_arrow_log_batch(&arrow_batch(), 1, Some(&[1, 3, 4])).unwrap();
            assert_ne!(bytes, plain);
            let b = LogBatch::parse_one(&bytes).unwrap();
            assert!(b.verify_crc());
            assert_eq!(b.decode(&schema()).unwrap(), arrow_batch(), "{codec:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn random_tables_round_trip_through_log_batches(
            (schema, rows) in crate::wire::compacted::tests::arb_schema_and_rows(6),
            schema_id in 1i16..100,
        ) {
            let mut b = RowsToArrow::new(&schema);
            for r in &rows {
                b.append(r).unwrap();
            }
            let batch = b.finish();
            let bytes = build_arrow_log_batch(&batch, schema_id, None).unwrap();
            let parsed = LogBatch::parse_all(&bytes).unwrap();
            proptest::prop_assert_eq!(parsed.len(), 1);
            proptest::prop_assert!(parsed[0].verify_crc());
            proptest::prop_assert_eq!(parsed[0].record_count() as usize, rows.len());
            proptest::prop_assert_eq!(parsed[0].schema_id(), schema_id);
            let decoded = parsed[0].decode(&schema).unwrap();
            proptest::prop_assert_eq!(record_batch_to_rows(&schema, &decoded).unwrap(), rows);
        }
    }

    #[test]
    fn server_empty_batch_decodes_to_no_rows() {
        // RecordCount 0, no Arrow bytes (what a server writes for a no-op KV batch).
        let mut bytes = vec![0u8; LOG_HEADER_LEN];
        bytes[LENGTH_OFFSET..LENGTH_OFFSET + 4].copy_from_slice(&36i32.to_le_bytes());
        bytes[ATTRIBUTES_OFFSET] = 0;
        stamp_log_batch(&mut bytes, 5, 0);
        let b = LogBatch::parse_one(&bytes).unwrap();
        assert_eq!(b.record_count(), 0);
        assert_eq!(b.change_types(), Some(&[][..]));
        assert_eq!(b.decode(&schema()).unwrap().num_rows(), 0);
    }

    #[test]
    fn compressed_batches_round_trip_and_shrink() {
        let schema =
            crate::Schema::builder().column_not_null("id", crate::DataType::BigInt).column("s", crate::DataType::String).build().unwrap();
        let mut rows = crate::wire::arrow::RowsToArrow::new(&schema);
        for i in 0..2000i64 {
            rows.append(&crate::row![i, "the same text again and again"]).unwrap();
        }
        let rb = rows.finish();
        let plain = build_arrow_log_batch(&rb, 1, None).unwrap();
        for c in [ArrowCompression::Zstd, ArrowCompression::Lz4Frame] {
            let bytes = build_arrow_log_batch_compressed(&rb, 1, None, c).unwrap();
            assert!(bytes.len() * 3 < plain.len(), "{c:?}: {} vs {}", bytes.len(), plain.len());
            let b = LogBatch::parse_one(&bytes).unwrap();
            assert!(b.verify_crc());
            assert_eq!(b.decode(&schema).unwrap(), rb);
        }
        assert_eq!(ArrowCompression::from_property(None).unwrap(), ArrowCompression::Zstd);
        assert_eq!(ArrowCompression::from_property(Some("none")).unwrap(), ArrowCompression::None);
        assert!(ArrowCompression::from_property(Some("GZIP")).is_err());
    }
}
