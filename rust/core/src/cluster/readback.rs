//! Read-back helpers for tests and examples (docs/wire-format.md, "Read-back"): ListOffsets,
//! FetchLog and Lookup against a bucket leader.
//!
//! They are built only on [`Backend`], so the same code reads back from the embedded engine and
//! from a real cluster. A request-level failure and a per-bucket `error_code` are both `Err`
//! with the server's code.

use bytes::Bytes;

use crate::backend::{call, Backend, Dest};
use crate::error::{Error, Result};
use crate::wire::proto;

/// `offset_type` of ListOffsets: the log start offset.
pub const EARLIEST_OFFSET: i32 = 0;
/// `offset_type` of ListOffsets: the high watermark (what a client may read up to).
pub const LATEST_OFFSET: i32 = 1;

fn bucket_error(what: &str, bucket: i32, code: Option<i32>, message: Option<String>) -> Result<()> {
    match code {
        Some(c) if c != 0 => Err(Error::server(c, message.unwrap_or_default()).context(format!("{what} bucket {bucket}"))),
        _ => Ok(()),
    }
}

/// ListOffsets on tablet server `leader` for `buckets` of a non-partitioned table:
/// `(bucket, offset)` in the order of `buckets`. `offset_type`: [`EARLIEST_OFFSET`] or
/// [`LATEST_OFFSET`].
pub async fn list_offsets(
    backend: &dyn Backend,
    leader: i32,
    table_id: i64,
    partition_id: Option<i64>,
    buckets: &[i32],
    offset_type: i32,
) -> Result<Vec<(i32, i64)>> {
    list_offsets_routed(backend, leader, table_id, partition_id, None, buckets, offset_type).await
}

/// [`list_offsets`] naming the bucket count the buckets belong to (`routing_bucket_count`, Fluss
/// 1.0 per-partition bucket counts; `None` for a server without them).
pub async fn list_offsets_routed(
    backend: &dyn Backend,
    leader: i32,
    table_id: i64,
    partition_id: Option<i64>,
    routing_bucket_count: Option<i32>,
    buckets: &[i32],
    offset_type: i32,
) -> Result<Vec<(i32, i64)>> {
    let req = proto::ListOffsetsRequest {
        follower_server_id: -1,
        offset_type,
        table_id,
        partition_id,
        bucket_id: buckets.to_vec(),
        start_timestamp: None,
        routing_bucket_count,
    };
    let resp = call(backend, Dest::Tablet(leader), req).await?;
    let mut out = Vec::with_capacity(buckets.len());
    for &b in buckets {
        let r = resp
            .buckets_resp
            .iter()
            .find(|r| r.bucket_id == b)
            .ok_or_else(|| Error::protocol(format!("ListOffsets response has no entry for bucket {b}")))?;
        bucket_error("ListOffsets", b, r.error_code, r.error_message.clone())?;
        let offset = r.offset.ok_or_else(|| Error::protocol(format!("ListOffsets response for bucket {b} has no offset")))?;
        out.push((b, offset));
    }
    Ok(out)
}

/// FetchLog of one bucket from `offset` (at most `max_bytes`, without waiting for new data):
/// `(high_watermark, records)`. `records` are concatenated log batches (docs/wire-format.md,
/// "Log record batches"); the last one may be cut short by `max_bytes`.
pub async fn fetch_log(
    backend: &dyn Backend,
    leader: i32,
    table_id: i64,
    partition_id: Option<i64>,
    bucket: i32,
    offset: i64,
    max_bytes: i32,
) -> Result<(i64, Bytes)> {
    fetch_log_routed(backend, leader, table_id, partition_id, None, bucket, offset, max_bytes).await
}

/// [`fetch_log`] naming the bucket count (see [`list_offsets_routed`]).
#[allow(clippy::too_many_arguments)]
pub async fn fetch_log_routed(
    backend: &dyn Backend,
    leader: i32,
    table_id: i64,
    partition_id: Option<i64>,
    routing_bucket_count: Option<i32>,
    bucket: i32,
    offset: i64,
    max_bytes: i32,
) -> Result<(i64, Bytes)> {
    let req = proto::FetchLogRequest {
        follower_server_id: -1,
        max_bytes,
        tables_req: vec![proto::PbFetchLogReqForTable {
            table_id,
            projection_pushdown_enabled: false,
            projected_fields: vec![],
            buckets_req: vec![proto::PbFetchLogReqForBucket {
                partition_id,
                bucket_id: bucket,
                fetch_offset: offset,
                max_fetch_bytes: max_bytes,
                routing_bucket_count,
            }],
        }],
        max_wait_ms: Some(0),
        min_bytes: Some(1),
    };
    let resp = call(backend, Dest::Tablet(leader), req).await?;
    let r = resp
        .tables_resp
        .iter()
        .filter(|t| t.table_id == table_id)
        .flat_map(|t| t.buckets_resp.iter())
        .find(|r| r.bucket_id == bucket)
        .ok_or_else(|| Error::protocol(format!("FetchLog response has no entry for table {table_id} bucket {bucket}")))?;
    bucket_error("FetchLog", bucket, r.error_code, r.error_message.clone())?;
    let hw = r.high_watermark.ok_or_else(|| Error::protocol(format!("FetchLog response for bucket {bucket} has no high watermark")))?;
    Ok((hw, r.records.clone().unwrap_or_default()))
}

/// Lookup of encoded primary keys (exactly as PutKv encodes them) in one bucket of a
/// primary-key table: per key, `None` if absent, else the stored value (`int16 LE schema id` +
/// row bytes).
pub async fn lookup(
    backend: &dyn Backend,
    leader: i32,
    table_id: i64,
    partition_id: Option<i64>,
    bucket: i32,
    keys: Vec<Bytes>,
) -> Result<Vec<Option<Bytes>>> {
    lookup_routed(backend, leader, table_id, partition_id, None, bucket, keys, None).await
}

/// [`lookup`] naming the bucket count (see [`list_offsets_routed`]) and, for a lookup in a
/// table's historical partition (Fluss 1.0), the expired partition the keys belong to.
#[allow(clippy::too_many_arguments)]
pub async fn lookup_routed(
    backend: &dyn Backend,
    leader: i32,
    table_id: i64,
    partition_id: Option<i64>,
    routing_bucket_count: Option<i32>,
    bucket: i32,
    keys: Vec<Bytes>,
    original_partition_name: Option<String>,
) -> Result<Vec<Option<Bytes>>> {
    let n = keys.len();
    let req = proto::LookupRequest {
        table_id,
        buckets_req: vec![proto::PbLookupReqForBucket { partition_id, bucket_id: bucket, keys, routing_bucket_count, original_partition_name }],
    };
    let resp = call(backend, Dest::Tablet(leader), req).await?;
    let r = resp
        .buckets_resp
        .iter()
        .find(|r| r.bucket_id == bucket)
        .ok_or_else(|| Error::protocol(format!("Lookup response has no entry for bucket {bucket}")))?;
    bucket_error("Lookup", bucket, r.error_code, r.error_message.clone())?;
    if r.values.len() != n {
        return Err(Error::protocol(format!("Lookup response has {} values for {n} keys", r.values.len())));
    }
    Ok(r.values.iter().map(|v| v.values.clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{BoxFuture, Request, Response};
    use std::sync::Mutex;

    /// A backend that records requests and answers with canned responses.
    struct Canned {
        seen: Mutex<Vec<(Dest, Request)>>,
        answer: fn(&Request) -> Result<Response>,
    }

    impl Backend for Canned {
        fn send(&self, dest: Dest, request: Request) -> BoxFuture<Response> {
            let r = (self.answer)(&request);
            self.seen.lock().unwrap().push((dest, request));
            Box::pin(async move { r })
        }
        fn describe(&self) -> String {
            "canned".into()
        }
        fn close(&self) {}
    }

    fn block<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    }

    #[test]
    fn list_offsets_maps_buckets_and_errors() {
        let b = Canned {
            seen: Mutex::new(vec![]),
            answer: |_| {
                Ok(Response::ListOffsets(proto::ListOffsetsResponse {
                    buckets_resp: vec![
                        proto::PbListOffsetsRespForBucket { bucket_id: 1, error_code: None, error_message: None, offset: Some(7) },
                        proto::PbListOffsetsRespForBucket { bucket_id: 0, error_code: None, error_message: None, offset: Some(3) },
                        proto::PbListOffsetsRespForBucket { bucket_id: 2, error_code: Some(12), error_message: None, offset: None },
                    ],
                }))
            },
        };
        assert_eq!(block(list_offsets(&b, 5, 9, None, &[0, 1], LATEST_OFFSET)).unwrap(), vec![(0, 3), (1, 7)]);
        let err = block(list_offsets(&b, 5, 9, None, &[2], LATEST_OFFSET)).unwrap_err();
        assert_eq!(err.code(), 12);
        assert!(err.is_retriable());
        let seen = b.seen.lock().unwrap();
        assert_eq!(seen[0].0, Dest::Tablet(5));
        match &seen[0].1 {
            Request::ListOffsets(r) => {
                assert_eq!((r.follower_server_id, r.offset_type, r.table_id, r.bucket_id.clone()), (-1, 1, 9, vec![0, 1]))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fetch_log_and_lookup() {
        let b = Canned {
            seen: Mutex::new(vec![]),
            answer: |req| match req {
                Request::FetchLog(_) => Ok(Response::FetchLog(proto::FetchLogResponse {
                    tables_resp: vec![proto::PbFetchLogRespForTable {
                        table_id: 9,
                        buckets_resp: vec![proto::PbFetchLogRespForBucket {
                            bucket_id: 1,
                            high_watermark: Some(4),
                            records: Some(Bytes::from_static(b"abc")),
                            ..Default::default()
                        }],
                    }],
                })),
                Request::Lookup(_) => Ok(Response::Lookup(proto::LookupResponse {
                    buckets_resp: vec![proto::PbLookupRespForBucket {
                        bucket_id: 0,
                        values: vec![proto::PbValue { values: Some(Bytes::from_static(b"v")) }, proto::PbValue { values: None }],
                        ..Default::default()
                    }],
                })),
                _ => Err(Error::server(7, "")),
            },
        };
        assert_eq!(block(fetch_log(&b, 2, 9, None, 1, 0, 1 << 20)).unwrap(), (4, Bytes::from_static(b"abc")));
        assert_eq!(
            block(lookup(&b, 2, 9, None, 0, vec![Bytes::from_static(b"k1"), Bytes::from_static(b"k2")])).unwrap(),
            vec![Some(Bytes::from_static(b"v")), None]
        );
        assert_eq!(block(lookup(&b, 2, 9, None, 0, vec![Bytes::from_static(b"k1")])).unwrap_err().code(), crate::ClientCode::Protocol as i32);
    }
}
