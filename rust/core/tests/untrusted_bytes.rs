//! Every decoder that reads bytes the client does not control, driven with random and mutated
//! input: response frames and protobuf bodies from a server, log batches and CompactedRows read
//! back from a server, and the log and KV batches a client sends to the embedded engine. Each must
//! answer with an error or a value, never a panic, and the engine must stay usable afterwards.
//!
//! Mutations start from valid encodings (byte overwrites, truncation, extension) and re-seal the
//! CRC where one guards the bytes, so the decoders behind the CRC check are reached as well. This
//! is a property test (proptest) rather than a coverage-guided fuzzer: it runs on the stable
//! toolchain inside `cargo test`, with a fixed number of cases.

mod common;

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use bytes::Bytes;
use common::*;
use fluss_writer::backend::{Backend, Dest, Request, Response};
use fluss_writer::cluster::frame::decode_response;
use fluss_writer::wire::proto;
use fluss_writer::wire::{
    arrow_schema, build_arrow_log_batch, decode_row, encode_row, stamp_kv_batch, stamp_log_batch, KvBatch, KvBatchBuilder, LogBatch,
};
use fluss_writer::{DataType, Schema, Value};
use proptest::prelude::*;

/// Every API key whose response the client decodes (`Response::decode`).
const API_KEYS: &[i16] = &[1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1010, 1012, 1014, 1015, 1016, 1017, 1021, 1026];

#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, u8),
    Truncate(usize),
    Extend(Vec<u8>),
}

fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    prop::collection::vec(
        prop_oneof![
            6 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
            1 => any::<usize>().prop_map(Mutation::Truncate),
            1 => prop::collection::vec(any::<u8>(), 0..16).prop_map(Mutation::Extend),
        ],
        1..6,
    )
}

fn mutate(mut bytes: Vec<u8>, plan: &[Mutation]) -> Vec<u8> {
    for m in plan {
        match m {
            Mutation::Set(i, b) if !bytes.is_empty() => {
                let n = bytes.len();
                bytes[i % n] = *b;
            }
            Mutation::Set(..) => {}
            Mutation::Truncate(i) => bytes.truncate(i % (bytes.len() + 1)),
            Mutation::Extend(more) => bytes.extend_from_slice(more),
        }
    }
    bytes
}

fn schema() -> Schema {
    Schema::builder()
        .column_not_null("id", DataType::BigInt)
        .column("msg", DataType::String)
        .column("flag", DataType::Boolean)
        .column("ts", DataType::TimestampLtz { precision: 3 })
        .column("amount", DataType::Decimal { precision: 10, scale: 2 })
        .build()
        .unwrap()
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
        fluss_writer::wire::encode_key(&s, &[0], &[Value::BigInt(id), Value::Null, Value::Null], &mut key).unwrap();
        b.append(&key, Some(&value));
    }
    b.finish()
}

/// Read a log-batch `records` field as read-back does: parse, check CRCs, decode Arrow.
fn read_back(bytes: &[u8]) {
    if let Ok(batches) = LogBatch::parse_all(bytes) {
        for b in batches {
            let _ = b.check_crc();
            let _ = b.change_types();
            let _ = b.decode(&log_schema());
            let _ = b.decode(&schema());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn response_frames_and_bodies_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256), key in prop::sample::select(API_KEYS)) {
        let _ = decode_response(Bytes::from(bytes.clone()));
        let _ = Response::decode(key, &bytes);
    }

    #[test]
    fn read_back_of_mutated_log_batches_never_panics(plan in mutations(), reseal in any::<bool>()) {
        let mut bytes = mutate(valid_log_batch(), &plan);
        if reseal && bytes.len() >= 64 {
            stamp_log_batch(&mut bytes, -1, -1);
        }
        read_back(&bytes);
        let two = [valid_log_batch(), bytes].concat();
        read_back(&two);
    }

    #[test]
    fn compacted_rows_from_a_server_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..96), plan in mutations()) {
        let _ = decode_row(&schema(), &bytes);
        let _ = decode_row(&pk_schema(), &bytes);
        let mut valid = Vec::new();
        encode_row(&pk_schema(), &[Value::BigInt(7), Value::String("seven".into()), Value::Null], &mut valid).unwrap();
        let _ = decode_row(&pk_schema(), &mutate(valid, &plan));
    }

    #[test]
    fn mutated_kv_batches_never_panic(plan in mutations(), reseal in any::<bool>()) {
        let mut bytes = mutate(valid_kv_batch(), &plan);
        if reseal && bytes.len() >= 64 {
            stamp_kv_batch(&mut bytes, -1, -1);
        }
        if let Ok(b) = KvBatch::parse(&bytes) {
            for r in b.records().take(1000).flatten() {
                if let Some(v) = r.value {
                    let _ = decode_row(&pk_schema(), v);
                }
            }
        }
    }
}

/// Inputs the fuzz targets once crashed on (`fuzz/seeds/<target>/regression-*`): each must be
/// refused by the checks before the Arrow reader, which would otherwise panic (the panic is
/// caught as a last resort, so a panic hook counting panics on this thread is the witness).
#[test]
fn fuzz_regressions_are_refused_without_a_panic() {
    let panics_before = panics_on_this_thread();
    let cases: &[(&str, &[u8])] =
        &[("log_batch/regression-offsets-not-whole-i32", include_bytes!("../../../fuzz/seeds/log_batch/regression-offsets-not-whole-i32"))];
    for (name, input) in cases {
        // As the fuzz target reads it: a flags byte (high bit: reseal the CRC), then the batch.
        let mut bytes = input[1..].to_vec();
        if input[0] & 0x80 != 0 && bytes.len() >= 64 {
            stamp_log_batch(&mut bytes, -1, -1);
        }
        let batches = LogBatch::parse_all(&bytes).unwrap();
        let mut refused = 0;
        for b in batches {
            for s in [log_schema(), schema()] {
                if let Err(e) = b.decode(&s) {
                    assert_eq!(e.code(), fluss_writer::FlussCode::CORRUPT_MESSAGE, "{name}: {e:?}");
                    refused += 1;
                }
            }
        }
        assert!(refused > 0, "{name}: the malformed batch was accepted");
        assert_eq!(
            panics_on_this_thread() - panics_before,
            0,
            "{name}: the Arrow reader panicked (caught) instead of a check refusing the input"
        );
    }
}

/// The embedded engine decodes what clients send it; garbage must come back as per-bucket error
/// codes, and the engine must keep serving valid writes.
#[test]
fn the_embedded_engine_answers_garbage_with_errors_and_stays_usable() {
    let conn = connect(&[]);
    let log = log_table(&conn, "garbage_log", 1);
    let pk = pk_table(&conn, "garbage_pk", 1);
    let log_id = conn.get_table(&log).unwrap().info().table_id;
    let pk_id = conn.get_table(&pk).unwrap().info().table_id;
    let engine = engine(&conn).clone();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig { cases: 256, ..ProptestConfig::default() });
    let strategy = (mutations(), any::<bool>(), any::<bool>());
    runner
        .run(&strategy, |(plan, reseal, kv)| {
            let (request, table_id) = if kv {
                let mut bytes = mutate(valid_kv_batch(), &plan);
                if reseal && bytes.len() >= 64 {
                    stamp_kv_batch(&mut bytes, -1, -1);
                }
                let req = proto::PutKvRequest {
                    acks: -1,
                    table_id: pk_id,
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
                };
                (Request::PutKv(req), pk_id)
            } else {
                let mut bytes = mutate(valid_log_batch(), &plan);
                if reseal && bytes.len() >= 64 {
                    stamp_log_batch(&mut bytes, -1, -1);
                }
                let req = proto::ProduceLogRequest {
                    acks: -1,
                    table_id: log_id,
                    timeout_ms: 1000,
                    buckets_req: vec![proto::PbProduceLogReqForBucket {
                        partition_id: None,
                        bucket_id: 0,
                        records: Bytes::from(bytes),
                        routing_bucket_count: None,
                        original_partition_name: None,
                    }],
                };
                (Request::ProduceLog(req), log_id)
            };
            let e2 = engine.clone();
            let response = conn.block_on(async move { e2.send(Dest::Tablet(0), request).await });
            // Either a whole-request error or per-bucket answers: both are fine, a panic is not.
            if let Ok(r) = response {
                match r {
                    Response::ProduceLog(r) => prop_assert_eq!(r.buckets_resp.len(), 1),
                    Response::PutKv(r) => prop_assert_eq!(r.buckets_resp.len(), 1),
                    other => prop_assert!(false, "unexpected response {other:?} for table {table_id}"),
                }
            }
            Ok(())
        })
        .unwrap();
    // Still usable: a valid write through a writer succeeds and reads back.
    let w = append_writer(&conn, &log, fluss_writer::WriterOptions::default());
    w.append(&fluss_writer::row![424242i64, "after the garbage"]).unwrap().wait(None).unwrap();
    assert!(all_ids(&conn, &log, 1).contains(&424242));
}
