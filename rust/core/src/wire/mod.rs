//! Fluss's own byte formats: protobuf messages, log and KV record batches, row and key
//! encodings, bucketing. Everything here is pure (no I/O) and shared by the sender, the
//! embedded engine and the network client.

/// Generated protobuf messages (proto/fluss_api.proto).
pub mod proto {
    #![allow(clippy::all, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/fluss_api.rs"));
}
