//! What the fuzz targets share: the schemas they decode with, the decoders as the client and
//! the embedded engine run them, and valid encodings for the seed corpus.

use std::sync::{Arc, OnceLock};

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use bytes::Bytes;
use fluss_writer::backend::{Backend, Dest, Request, Response};
use fluss_writer::cluster::frame::{decode_request, decode_response};
use fluss_writer::wire::proto;
use fluss_writer::wire::{
    arrow_schema, build_arrow_log_batch, decode_row, encode_key, encode_row, stamp_kv_batch, stamp_log_batch, KvBatch, KvBatchBuilder,
    LogBatch,
};
use fluss_writer::{Connection, DataType, Schema, TableDescriptor, TablePath, Value};

/// Every API key whose response the client decodes (`Response::decode`) and whose request the
/// embedded engine decodes (`Request::decode`).
pub const API_KEYS: &[i16] =
    &[1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1010, 1012, 1014, 1015, 1016, 1017, 1021, 1026, 1038, 1039, 1040, 1041];

/// `(id BIGINT NOT NULL, msg STRING)`: the log table of the seeds.
pub fn log_schema() -> Schema {
    Schema::builder().column_not_null("id", DataType::BigInt).column("msg", DataType::String).build().unwrap()
}

/// `(id BIGINT NOT NULL PK, name STRING, age BIGINT)`.
pub fn pk_schema() -> Schema {
    Schema::builder()
        .column_not_null("id", DataType::BigInt)
        .column("name", DataType::String)
        .column("age", DataType::BigInt)
        .primary_key(["id"])
        .build()
        .unwrap()
}

/// A wider schema: booleans, timestamps and decimals.
pub fn wide_schema() -> Schema {
    Schema::builder()
        .column_not_null("id", DataType::BigInt)
        .column("msg", DataType::String)
        .column("flag", DataType::Boolean)
        .column("ts", DataType::TimestampLtz { precision: 3 })
        .column("amount", DataType::Decimal { precision: 10, scale: 2 })
        .build()
        .unwrap()
}

struct Schemas {
    log: Schema,
    pk: Schema,
    wide: Schema,
}

fn schemas() -> &'static Schemas {
    static S: OnceLock<Schemas> = OnceLock::new();
    S.get_or_init(|| Schemas { log: log_schema(), pk: pk_schema(), wide: wide_schema() })
}

/// A response frame and its body under one API key (chosen by the first byte), and the same
/// bytes as a request frame and body (what the embedded engine's test servers decode).
pub fn response_frame(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else { return };
    let key = API_KEYS[pick as usize % API_KEYS.len()];
    let _ = decode_response(Bytes::copy_from_slice(rest));
    let _ = Response::decode(key, rest);
    let _ = decode_request(Bytes::copy_from_slice(rest));
    let _ = Request::decode(key, rest);
}

/// A log batch `records` field as read-back does: parse, check CRCs, decode Arrow. With the
/// first byte's high bit set the CRC is resealed first, so the decoders behind it are reached.
pub fn log_batch(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else { return };
    let mut bytes = rest.to_vec();
    if flags & 0x80 != 0 && bytes.len() >= 64 {
        stamp_log_batch(&mut bytes, -1, -1);
    }
    if let Ok(batches) = LogBatch::parse_all(&bytes) {
        let s = schemas();
        for b in batches {
            let _ = b.check_crc();
            let _ = b.change_types();
            let _ = b.decode(&s.log);
            let _ = b.decode(&s.wide);
        }
    }
}

/// A CompactedRow (a Lookup answer's value, a KV batch's value) under three schemas.
pub fn compacted_row(data: &[u8]) {
    let s = schemas();
    let _ = decode_row(&s.log, data);
    let _ = decode_row(&s.pk, data);
    let _ = decode_row(&s.wide, data);
}

/// A KV batch as the embedded engine reads it, values decoded as rows.
pub fn kv_batch(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else { return };
    let mut bytes = rest.to_vec();
    if flags & 0x80 != 0 && bytes.len() >= 64 {
        stamp_kv_batch(&mut bytes, -1, -1);
    }
    if let Ok(b) = KvBatch::parse(&bytes) {
        for r in b.records().take(10_000).flatten() {
            if let Some(v) = r.value {
                let _ = decode_row(&schemas().pk, v);
            }
        }
    }
}

struct Engine {
    conn: Connection,
    log_id: i64,
    pk_id: i64,
}

fn engine() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    E.get_or_init(|| {
        let conn = Connection::open("embedded").unwrap();
        let log = TablePath::new("fluss", "fuzz_log").unwrap();
        let pk = TablePath::new("fluss", "fuzz_pk").unwrap();
        let admin = conn.admin();
        admin.create_table(&log, &TableDescriptor::new(log_schema()).with_bucket_count(1), false).unwrap();
        admin.create_table(&pk, &TableDescriptor::new(pk_schema()).with_bucket_count(1), false).unwrap();
        let log_id = conn.get_table(&log).unwrap().info().table_id;
        let pk_id = conn.get_table(&pk).unwrap().info().table_id;
        Engine { conn, log_id, pk_id }
    })
}

/// What a client sends the embedded engine: a ProduceLog or PutKv whose records are the input
/// (CRC resealed when the high bit of the first byte is set), or any request body under an API
/// key chosen by the second byte. The engine must answer, never panic.
pub fn engine_request(data: &[u8]) {
    let [flags, pick, rest @ ..] = data else { return };
    let e = engine();
    let mut bytes = rest.to_vec();
    let request = match flags & 0x3 {
        0 => {
            if flags & 0x80 != 0 && bytes.len() >= 64 {
                stamp_log_batch(&mut bytes, -1, -1);
            }
            Request::ProduceLog(proto::ProduceLogRequest {
                acks: -1,
                table_id: e.log_id,
                timeout_ms: 1000,
                buckets_req: vec![proto::PbProduceLogReqForBucket {
                    partition_id: None,
                    bucket_id: 0,
                    records: Bytes::from(bytes),
                    routing_bucket_count: None,
                    original_partition_name: None,
                }],
            })
        }
        1 => {
            if flags & 0x80 != 0 && bytes.len() >= 64 {
                stamp_kv_batch(&mut bytes, -1, -1);
            }
            Request::PutKv(proto::PutKvRequest {
                acks: -1,
                table_id: e.pk_id,
                timeout_ms: 1000,
                target_columns: vec![],
                buckets_req: vec![proto::PbPutKvReqForBucket {
                    partition_id: None,
                    bucket_id: 0,
                    records: Bytes::from(bytes),
                    routing_bucket_count: None,
                    original_partition_name: None,
                }],
                agg_mode: None,
            })
        }
        _ => {
            // Any request, except DDL that would grow the engine without bound across runs.
            let key = API_KEYS[*pick as usize % API_KEYS.len()];
            if matches!(key, 1001 | 1005) {
                return;
            }
            match Request::decode(key, &bytes) {
                Ok(r) => r,
                Err(_) => return,
            }
        }
    };
    let engine: Arc<dyn Backend> = e.conn.backend().clone();
    let _ = e.conn.block_on(async move { engine.send(Dest::Tablet(0), request).await });
}

/// Valid encodings to start the corpus from: `(target, name, bytes)`.
pub fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let mut out = Vec::new();
    let log = valid_log_batch();
    let kv = valid_kv_batch();
    out.push(("log_batch", "valid".into(), [&[0u8][..], &log].concat()));
    out.push(("log_batch", "valid_resealed".into(), [&[0x80u8][..], &log].concat()));
    out.push(("kv_batch", "valid".into(), [&[0u8][..], &kv].concat()));
    out.push(("kv_batch", "valid_resealed".into(), [&[0x80u8][..], &kv].concat()));
    out.push(("engine_request", "produce".into(), [&[0x80u8, 0][..], &log].concat()));
    out.push(("engine_request", "put_kv".into(), [&[0x81u8, 0][..], &kv].concat()));
    let mut row = Vec::new();
    encode_row(&pk_schema(), &[Value::BigInt(7), Value::String("seven".into()), Value::Null], &mut row).unwrap();
    out.push(("compacted_row", "pk".into(), row));
    let mut row = Vec::new();
    encode_row(&log_schema(), &[Value::BigInt(-1), Value::String("a longer string value".into())], &mut row).unwrap();
    out.push(("compacted_row", "log".into(), row));
    // Response frames: a success frame and an error frame for a few API keys.
    let metadata = proto::MetadataResponse {
        coordinator_server: Some(proto::PbServerNode { node_id: 0, host: "127.0.0.1".into(), port: 9123, listeners: None, rack: None }),
        tablet_servers: vec![],
        table_metadata: vec![],
        partition_metadata: vec![],
    };
    let produce = proto::ProduceLogResponse {
        buckets_resp: vec![proto::PbProduceLogRespForBucket { bucket_id: 0, base_offset: Some(5), ..Default::default() }],
    };
    use prost::Message as _;
    for (key, body) in [(1012i16, metadata.encode_to_vec()), (1014, produce.encode_to_vec())] {
        let pick = API_KEYS.iter().position(|k| *k == key).unwrap() as u8;
        let frame = fluss_writer::cluster::frame::encode_success_response(3, &body);
        out.push(("response_frame", format!("success_{key}"), [&[pick][..], &frame[4..]].concat()));
        out.push(("response_frame", format!("body_{key}"), [&[pick][..], &body].concat()));
    }
    let err = fluss_writer::cluster::frame::encode_error_response(9, 48, Some("denied"));
    out.push(("response_frame", "error".into(), [&[0u8][..], &err[4..]].concat()));
    let req = fluss_writer::cluster::frame::encode_request(1012, 0, 1, &proto::MetadataRequest::default().encode_to_vec()).unwrap();
    out.push(("engine_request", "metadata".into(), [&[0x2u8, 10][..], &req[12..]].concat()));
    out
}

fn valid_log_batch() -> Vec<u8> {
    let s = log_schema();
    let cols: Vec<ArrayRef> =
        vec![Arc::new(Int64Array::from(vec![1, 2, 3])), Arc::new(StringArray::from(vec![Some("a"), None, Some("ccc")]))];
    let rb = RecordBatch::try_new(arrow_schema(&s), cols).unwrap();
    build_arrow_log_batch(&rb, 1, None).unwrap()
}

fn valid_kv_batch() -> Vec<u8> {
    let s = pk_schema();
    let mut b = KvBatchBuilder::new(1);
    for id in 0..3i64 {
        let mut value = Vec::new();
        encode_row(&s, &[Value::BigInt(id), Value::String(format!("n{id}")), Value::BigInt(id * 10)], &mut value).unwrap();
        let mut key = Vec::new();
        encode_key(&s, &[0], &[Value::BigInt(id), Value::Null, Value::Null], &mut key).unwrap();
        b.append(&key, Some(&value));
    }
    b.finish()
}
