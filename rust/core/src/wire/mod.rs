//! Fluss's own byte formats: protobuf messages, log and KV record batches, row and key
//! encodings, bucketing. Everything here is pure (no I/O) and shared by the sender, the
//! embedded engine and the network client.
//!
//! Modules, in the order a record meets them (the quoted names are sections of
//! docs/wire-format.md, which also names the tests that pin each format against Fluss; the
//! Fluss Java classes each module names are the reference):
//!
//! * [`compacted`]: CompactedRow value rows of primary-key tables ("Compacted rows").
//! * [`key`]: compacted key encoding of primary and bucket keys ("Key encoding").
//! * [`bucketing`]: bucket of a key, Fluss's MurmurHash3 variant ("Bucketing").
//! * [`lake`]: key bytes and buckets of tables with a datalake format ("Lake formats").
//! * [`arrow`]: the Fluss → Arrow type mapping, rows → Arrow, and checking user batches ("Arrow
//!   type mapping").
//! * [`kv_batch`]: KV record batches for PutKv ("KV record batches").
//! * [`log_batch`]: ARROW log record batches, magic 0, for ProduceLog and FetchLog ("Log record
//!   batches").
//! * [`crc`], [`varint`]: the checksum and the integer encoding the formats share ("CRC-32C",
//!   "Conventions").
//!
//! Corrupt input bytes are reported as server-style errors (`CORRUPT_MESSAGE`, 3, or
//! `CORRUPT_RECORD_EXCEPTION`, 14, for a CRC mismatch), so the embedded engine can answer like a
//! server; bad user input is [`Error::invalid_row`](crate::Error::invalid_row).

/// Generated protobuf messages (proto/fluss_api.proto).
pub mod proto {
    #![allow(clippy::all, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/fluss_api.rs"));

    impl PbBucketMetadata {
        /// The tablet server that leads this bucket, if one does now. The field is absent before
        /// the first election, and a 0.9 server reports -1 while the bucket has no leader (for
        /// example while its only replica's tablet server restarts); both mean "ask again later".
        pub fn leader(&self) -> Option<i32> {
            self.leader_id.filter(|&id| id >= 0)
        }
    }
}

pub mod arrow;
pub mod bucketing;
pub mod compacted;
pub mod crc;
pub mod key;
pub mod lake;
pub mod kv_batch;
pub mod log_batch;
mod nested;
pub mod varint;

pub use self::arrow::{arrow_schema, arrow_value, conform_record_batch, record_batch_to_rows, RowsToArrow};
pub use bucketing::{bucket_for_key, fluss_murmur3_32};
pub use compacted::{decode_row, decode_value, encode_row, encode_value};
pub use crc::crc32c;
pub use key::{encode_key, KeyCodec};
pub use lake::LakeFormat;
pub use kv_batch::{stamp_kv_batch, KvBatch, KvBatchBuilder, KvRecord};
pub use log_batch::{build_arrow_log_batch, set_log_batch_offset, stamp_log_batch, LogBatch};

use crate::error::{Error, FlussCode};

/// A `CORRUPT_MESSAGE` (3) error for bytes that do not follow the format.
pub(crate) fn corrupt(message: impl Into<String>) -> Error {
    Error::server(FlussCode::CORRUPT_MESSAGE, message)
}

// Little-endian readers for header fields; callers check the length first.
#[inline]
pub(crate) fn le_i16(b: &[u8], at: usize) -> i16 {
    i16::from_le_bytes([b[at], b[at + 1]])
}

#[inline]
pub(crate) fn le_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

#[inline]
pub(crate) fn le_i64(b: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::proto::PbBucketMetadata;

    /// Fluss 1.0's historical-partition fields carry the numbers of the 1.0.0 jar's generated
    /// classes (`_ORIGINAL_PARTITION_NAME_FIELD_NUMBER` 4 in both write requests and the Lookup
    /// request entry, 6 in the
    /// ProduceLog response entry, 7 in the PutKv one; `_INCLUDE_SYSTEM_PARTITIONS_FIELD_NUMBER`
    /// 3), and are absent from the wire when unset, so requests stay what 0.9.1 reads.
    #[test]
    fn historical_partition_fields_have_the_1_0_numbers() {
        use super::proto::*;
        use prost::Message;
        let name = Some("20261201".to_string());
        let tail = |bytes: Vec<u8>, tag: u8| {
            let mut want = vec![tag, 8];
            want.extend_from_slice(b"20261201");
            assert!(bytes.ends_with(&want), "{bytes:02x?} ends with field tag {tag:#x}");
        };
        let records = bytes::Bytes::from_static(b"r");
        let req = PbProduceLogReqForBucket { partition_id: None, bucket_id: 0, records: records.clone(), original_partition_name: None, routing_bucket_count: None };
        assert_eq!(req.encode_to_vec(), [0x10, 0, 0x1a, 1, b'r']);
        tail(PbProduceLogReqForBucket { original_partition_name: name.clone(), ..req }.encode_to_vec(), 4 << 3 | 2);
        tail(PbPutKvReqForBucket { partition_id: None, bucket_id: 0, records, original_partition_name: name.clone(), routing_bucket_count: None }.encode_to_vec(), 4 << 3 | 2);
        tail(PbProduceLogRespForBucket { original_partition_name: name.clone(), ..Default::default() }.encode_to_vec(), 6 << 3 | 2);
        tail(PbPutKvRespForBucket { original_partition_name: name.clone(), ..Default::default() }.encode_to_vec(), 7 << 3 | 2);
        let lookup = PbLookupReqForBucket { partition_id: None, bucket_id: 0, keys: vec![], original_partition_name: name, routing_bucket_count: None };
        tail(lookup.encode_to_vec(), 4 << 3 | 2);
        let list = ListPartitionInfosRequest { include_system_partitions: Some(true), ..Default::default() };
        assert!(list.encode_to_vec().ends_with(&[3 << 3, 1]));
    }

    #[test]
    fn a_negative_or_absent_leader_id_means_no_leader() {
        let bm = |leader_id| PbBucketMetadata { bucket_id: 0, leader_id, replica_id: vec![0], leader_epoch: None };
        assert_eq!(bm(Some(3)).leader(), Some(3));
        assert_eq!(bm(Some(0)).leader(), Some(0));
        assert_eq!(bm(Some(-1)).leader(), None, "0.9 reports -1 while a bucket's tablet server is down");
        assert_eq!(bm(None).leader(), None);
    }
}
