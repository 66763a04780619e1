//! Writer metrics (issue 17): what WriterStats, error_counts, the process snapshot and its JSON /
//! Prometheus renderings report for writes whose outcome the test knows, and slow callbacks.

mod common;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use common::*;
use fluss_writer::metrics::{self, MetricKind, HISTOGRAMS, LATENCY_BUCKET_BOUNDS_NANOS, METRICS};
use fluss_writer::{row, FlussCode, WriterOptions};

/// Warnings logged by this test binary (a logger installed once).
fn warnings() -> &'static Mutex<Vec<String>> {
    static LOGGED: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    struct Capture;
    impl log::Log for Capture {
        fn enabled(&self, m: &log::Metadata<'_>) -> bool {
            m.level() <= log::Level::Warn || m.target() == "fluss_writer::batch"
        }
        fn log(&self, r: &log::Record<'_>) {
            if self.enabled(r.metadata()) {
                warnings().lock().unwrap().push(r.args().to_string());
            }
        }
        fn flush(&self) {}
    }
    LOGGED.get_or_init(|| {
        static CAPTURE: Capture = Capture;
        let _ = log::set_logger(&CAPTURE);
        log::set_max_level(log::LevelFilter::Debug);
        Mutex::new(Vec::new())
    })
}

#[test]
fn acknowledged_records_bytes_batches_and_requests_are_counted() {
    let conn = connect(&[("client.id", "metrics-ok")]);
    let path = log_table(&conn, "metrics_ok", 4);
    let w = append_writer(&conn, &path, WriterOptions::default());
    for i in 0..2_000i64 {
        w.append_detached(&row![i, format!("message {i}")]).unwrap();
    }
    w.flush(None).unwrap();
    let s = w.stats();
    assert_eq!(s.records_sent, 2_000);
    assert_eq!(s.records_failed, 0);
    assert!(s.batches_sent >= 4, "{s:?}");
    assert!(s.requests_sent >= 1 && s.requests_sent <= s.batches_sent, "{s:?}");
    assert_eq!(s.request_latency.count, s.requests_sent);
    assert!(s.request_latency.max_nanos > 0 && s.request_latency.p50_nanos <= s.request_latency.max_nanos);
    // Arrow bodies are compressed (ZSTD by default): bytes are what went on the wire.
    assert!(s.bytes_sent > 0 && s.batch_bytes_p50 <= s.bytes_sent, "{s:?}");
    assert!(s.batch_records_p50 >= 1 && s.batch_records_p99 <= 2_000, "{s:?}");
    assert!(s.batch_bytes_p50 > 0, "{s:?}");
    assert_eq!(s.retries, 0);
    assert_eq!(s.oldest_pending_batch_age_nanos, 0, "nothing pending after flush");
    assert!(w.error_counts().is_empty());
    // Per bucket: every record in the bucket its key hashes to.
    let mut by_bucket = [0u64; 4];
    for i in 0..2_000i64 {
        by_bucket[bucket_of(i, 4) as usize] += 1;
    }
    let buckets = w.bucket_counts();
    assert_eq!(
        buckets.iter().map(|b| (b.bucket, b.records_sent)).collect::<Vec<_>>(),
        (0..4).map(|b| (b, by_bucket[b as usize])).collect::<Vec<_>>()
    );
    assert!(buckets.iter().all(|b| b.partition.is_none() && b.records_failed == 0 && b.retries == 0 && b.batches_sent >= 1));
    assert_eq!(buckets.iter().map(|b| b.bytes_sent).sum::<u64>(), s.bytes_sent);

    // The process snapshot has this writer, labelled, and both renderings carry its numbers.
    let reports = metrics::snapshot();
    let mine: Vec<_> = reports.iter().filter(|r| r.client_id == "metrics-ok").collect();
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].table, "fluss.metrics_ok");
    assert_eq!(mine[0].stats.records_sent, 2_000);
    let number = mine[0].writer;
    let prom = metrics::to_prometheus(&reports);
    let line = format!("fluss_writer_records_sent_total{{client_id=\"metrics-ok\",table=\"fluss.metrics_ok\",writer=\"{number}\"}} 2000\n");
    assert!(prom.contains(&line), "{prom}");
    let json = metrics::to_json(&reports);
    assert!(json.contains("\"client_id\":\"metrics-ok\""), "{json}");
    let bucket_line = format!(
        "fluss_writer_bucket_records_sent_total{{client_id=\"metrics-ok\",table=\"fluss.metrics_ok\",writer=\"{number}\",partition=\"\",bucket=\"0\"}} {}\n",
        by_bucket[0]
    );
    assert!(prom.contains(&bucket_line), "{prom}");
    assert!(json.contains(&format!("{{\"partition\":null,\"bucket\":0,\"records_sent\":{},", by_bucket[0])), "{json}");
    assert_eq!(json.matches("\"stats\":{").count(), reports.len());
    assert_eq!(s.fields().len(), METRICS.len());

    // A closed writer leaves the snapshot.
    w.close(None).unwrap();
    assert!(metrics::snapshot().iter().all(|r| r.writer != number));
}

#[test]
fn retries_and_final_failures_are_counted_by_code() {
    let conn = connect(&[("client.writer.batch-timeout", "10s"), ("client.writer.retry-backoff", "1ms")]);
    let path = log_table(&conn, "metrics_err", 2);
    engine(&conn).faults().inject(&path, 0, err(FlussCode::NOT_LEADER_OR_FOLLOWER, "moved", 2));
    engine(&conn).faults().inject(&path, 1, err(FlussCode::RECORD_TOO_LARGE, "too large here", 1));
    let w = append_writer(&conn, &path, WriterOptions::default());
    let ids: Vec<i64> = ids_in_bucket(0, 2, 30, 0).into_iter().chain(ids_in_bucket(1, 2, 20, 0)).collect();
    for &id in &ids {
        w.append_detached(&row![id, "x"]).unwrap();
    }
    w.flush(None).unwrap();
    let s = w.stats();
    assert_eq!((s.records_sent, s.records_failed), (30, 20), "{s:?}");
    assert_eq!(s.retries, 2, "{s:?}");
    assert_eq!(s.requests_sent, s.request_latency.count);
    let codes = w.error_counts();
    let moved = codes.iter().find(|c| c.code == FlussCode::NOT_LEADER_OR_FOLLOWER).expect("retry cause counted");
    assert_eq!((moved.retries, moved.records_failed, moved.name), (2, 0, "NOT_LEADER_OR_FOLLOWER"));
    let big = codes.iter().find(|c| c.code == FlussCode::RECORD_TOO_LARGE).expect("failure counted");
    assert_eq!((big.retries, big.records_failed), (0, 20));
    assert_eq!(codes.len(), 2, "{codes:?}");
    // Per bucket: bucket 0 retried twice and stored its 30, bucket 1 failed its 20.
    let b: Vec<(i32, u64, u64, u64)> = w.bucket_counts().iter().map(|c| (c.bucket, c.records_sent, c.records_failed, c.retries)).collect();
    assert_eq!(b, [(0, 30, 0, 2), (1, 0, 20, 0)]);
    // A refused call is counted by its code (the caller got the error, nothing was accepted).
    assert!(w.append_detached(&row!["not a number", "x"]).is_err());
    w.close(None).unwrap();
    assert!(w.append_detached(&row![1i64, "x"]).is_err());
    let s = w.stats();
    assert_eq!(s.operations_rejected, 2, "{s:?}");
    let codes = w.error_counts();
    let rejected: Vec<(&str, u64)> = codes.iter().filter(|c| c.rejected > 0).map(|c| (c.name, c.rejected)).collect();
    assert_eq!(rejected, [("WRITER_CLOSED", 1), ("INVALID_ROW", 1)]);
}

#[test]
fn the_oldest_pending_batch_ages_until_it_completes() {
    let conn = connect(&[("client.writer.batch-timeout", "10s")]);
    let path = log_table(&conn, "metrics_age", 1);
    let w = append_writer(&conn, &path, WriterOptions::default());
    w.append_detached(&row![1i64, "a"]).unwrap();
    wait_until("the sender saw the open batch", Duration::from_secs(5), || w.stats().oldest_pending_batch_age_nanos > 0);
    std::thread::sleep(Duration::from_millis(50));
    assert!(w.stats().oldest_pending_batch_age_nanos >= 50_000_000, "{:?}", w.stats());
    w.flush(None).unwrap();
    wait_until("no batch pending", Duration::from_secs(5), || w.stats().oldest_pending_batch_age_nanos == 0);
}

#[test]
fn a_slow_callback_is_counted_and_logged_once_with_its_operation_and_the_stall() {
    warnings();
    // A 500 ms threshold and a 1.5 s callback: a stall of a busy machine can neither make a fast
    // callback slow nor hide the slow one from the coarse clock.
    let conn = connect(&[("client.writer.slow-callback-threshold", "500ms")]);
    let path = log_table(&conn, "metrics_slow", 1);
    let w = append_writer(&conn, &path, WriterOptions::default());
    let ran = Arc::new(Mutex::new(0));
    for i in 0..20i64 {
        let ran = ran.clone();
        w.append_with_callback(&row![i, "x"], move |_| {
            if i == 3 {
                std::thread::sleep(Duration::from_millis(1_500));
            }
            *ran.lock().unwrap() += 1;
        })
        .unwrap();
    }
    w.flush(None).unwrap();
    assert_eq!(*ran.lock().unwrap(), 20);
    assert_eq!(w.stats().slow_callbacks, 1, "{:?}", w.stats());
    let logged: Vec<String> =
        warnings().lock().unwrap().iter().filter(|l| l.starts_with("slow callback") && l.contains("metrics_slow ")).cloned().collect();
    assert_eq!(logged.len(), 1, "{logged:?}");
    let l = &logged[0];
    assert!(l.contains("slow callback") && l.contains("write to fluss.metrics_slow bucket 0 offset 3"), "{l}");
    assert!(l.contains("threshold 500 ms") && l.contains("FIFO callback worker"), "{l}");
}

#[test]
fn a_zero_threshold_turns_slow_callback_detection_off() {
    let conn = connect(&[("client.writer.slow-callback-threshold", "0")]);
    let path = log_table(&conn, "metrics_slow_off", 1);
    let w = append_writer(&conn, &path, WriterOptions::default());
    w.append_with_callback(&row![1i64, "x"], |_| std::thread::sleep(Duration::from_millis(120))).unwrap();
    w.flush(None).unwrap();
    assert_eq!(w.stats().slow_callbacks, 0);
}

#[test]
fn the_path_of_a_batch_is_traced_at_debug_level() {
    warnings();
    let conn = connect(&[("client.writer.batch-timeout", "10s"), ("client.writer.retry-backoff", "1ms")]);
    let path = log_table(&conn, "metrics_traced", 1);
    engine(&conn).faults().inject(&path, 0, err(FlussCode::NOT_LEADER_OR_FOLLOWER, "moved", 1));
    let w = append_writer(&conn, &path, WriterOptions::default());
    for i in 0..5i64 {
        w.append_detached(&row![i, "x"]).unwrap();
    }
    w.flush(None).unwrap();
    let logged = warnings().lock().unwrap().clone();
    let mine = |what: &str| logged.iter().filter(|l| l.starts_with(what) && l.contains("fluss.metrics_traced")).count();
    assert!(logged.iter().any(|l| l.starts_with("batch opened")), "{logged:?}");
    assert_eq!(mine("produce request sent"), 2, "{logged:?}");
    assert_eq!(mine("batch attempt failed, retrying"), 1, "{logged:?}");
    let done: Vec<&String> = logged.iter().filter(|l| l.starts_with("batch completed") && l.contains("fluss.metrics_traced")).collect();
    assert_eq!(done.len(), 1, "{logged:?}");
    assert!(done[0].contains("records=5") && done[0].contains("base_offset=0") && done[0].contains("error_code=0"), "{}", done[0]);
}

/// A `metrics` recorder that keeps the last value of every series.
#[derive(Default)]
struct Recorded(Arc<Mutex<std::collections::HashMap<String, f64>>>);

struct Series(String, Arc<Mutex<std::collections::HashMap<String, f64>>>);

impl ::metrics::CounterFn for Series {
    fn increment(&self, v: u64) {
        *self.1.lock().unwrap().entry(self.0.clone()).or_default() += v as f64;
    }
    fn absolute(&self, v: u64) {
        self.1.lock().unwrap().insert(self.0.clone(), v as f64);
    }
}

impl ::metrics::GaugeFn for Series {
    fn increment(&self, v: f64) {
        *self.1.lock().unwrap().entry(self.0.clone()).or_default() += v;
    }
    fn decrement(&self, v: f64) {
        *self.1.lock().unwrap().entry(self.0.clone()).or_default() -= v;
    }
    fn set(&self, v: f64) {
        self.1.lock().unwrap().insert(self.0.clone(), v);
    }
}

impl Recorded {
    fn series(&self, key: &::metrics::Key) -> Arc<Series> {
        let labels: Vec<String> = key.labels().map(|l| format!("{}={}", l.key(), l.value())).collect();
        Arc::new(Series(format!("{}{{{}}}", key.name(), labels.join(",")), self.0.clone()))
    }
}

impl ::metrics::Recorder for Recorded {
    fn describe_counter(&self, _: ::metrics::KeyName, _: Option<::metrics::Unit>, _: ::metrics::SharedString) {}
    fn describe_gauge(&self, _: ::metrics::KeyName, _: Option<::metrics::Unit>, _: ::metrics::SharedString) {}
    fn describe_histogram(&self, _: ::metrics::KeyName, _: Option<::metrics::Unit>, _: ::metrics::SharedString) {}
    fn register_counter(&self, key: &::metrics::Key, _: &::metrics::Metadata<'_>) -> ::metrics::Counter {
        ::metrics::Counter::from_arc(self.series(key))
    }
    fn register_gauge(&self, key: &::metrics::Key, _: &::metrics::Metadata<'_>) -> ::metrics::Gauge {
        ::metrics::Gauge::from_arc(self.series(key))
    }
    fn register_histogram(&self, _: &::metrics::Key, _: &::metrics::Metadata<'_>) -> ::metrics::Histogram {
        ::metrics::Histogram::noop()
    }
}

#[test]
fn publish_hands_every_metric_to_the_metrics_crate_recorder() {
    // A linger longer than the test: the 40 records go in one batch, sent by the flush (with a
    // short one a loaded machine sent two, and the second was retried behind the first).
    let conn = connect(&[("client.id", "metrics-rs"), ("client.writer.retry-backoff", "1ms"), ("client.writer.batch-timeout", "10s")]);
    let path = log_table(&conn, "metrics_published", 1);
    engine(&conn).faults().inject(&path, 0, err(FlussCode::NOT_LEADER_OR_FOLLOWER, "moved", 1));
    let w = append_writer(&conn, &path, WriterOptions::default());
    for i in 0..40i64 {
        w.append_detached(&row![i, "x"]).unwrap();
    }
    w.flush(None).unwrap();
    let rec = Recorded::default();
    ::metrics::with_local_recorder(&rec, metrics::publish);
    let values = rec.0.lock().unwrap().clone();
    let number = metrics::snapshot().iter().find(|r| r.client_id == "metrics-rs").expect("the writer").writer;
    let labels = format!("client_id=metrics-rs,table=fluss.metrics_published,writer={number}");
    assert_eq!(values.get(&format!("fluss_writer_records_sent_total{{{labels}}}")), Some(&40.0), "{values:?}");
    assert_eq!(values.get(&format!("fluss_writer_pending_callbacks{{{labels}}}")), Some(&0.0));
    assert_eq!(values.get(&format!("fluss_writer_retries_by_code_total{{{labels},code=NOT_LEADER_OR_FOLLOWER}}")), Some(&1.0));
    for d in METRICS.iter().filter(|d| d.kind != MetricKind::Quantile) {
        assert!(values.contains_key(&format!("fluss_writer_{}{{{labels}}}", d.prometheus)), "{} missing", d.prometheus);
    }
    assert!(!values.keys().any(|k| k.contains("_p50_") || k.contains("_p99_nanoseconds") || k.contains("_max_nanoseconds")), "{values:?}");
    // The histograms as their Prometheus series: cumulative `_bucket` counters with `le`, then
    // `_count` and `_sum` (seconds).
    let requests = values[&format!("fluss_writer_requests_answered_total{{{labels}}}")];
    assert_eq!(requests, 2.0, "one failed attempt, one success");
    assert_eq!(values.get(&format!("fluss_writer_request_latency_seconds_count{{{labels}}}")), Some(&requests));
    assert_eq!(values.get(&format!("fluss_writer_request_latency_seconds_bucket{{{labels},le=+Inf}}")), Some(&requests));
    assert!(values[&format!("fluss_writer_request_latency_seconds_sum{{{labels}}}")] > 0.0);
    for (name, _) in HISTOGRAMS {
        let mut last = 0.0;
        for le in LATENCY_BUCKET_BOUNDS_NANOS.iter().map(|&b| (b as f64 / 1e9).to_string()).chain(["+Inf".to_string()]) {
            let v = *values.get(&format!("fluss_writer_{name}_bucket{{{labels},le={le}}}")).unwrap_or_else(|| panic!("{name} le={le}"));
            assert!(v >= last, "{name} le={le}: {v} < {last}");
            last = v;
        }
        assert_eq!(values.get(&format!("fluss_writer_{name}_count{{{labels}}}")), Some(&last), "{name}");
    }
    let bucket = format!("{labels},partition=,bucket=0");
    assert_eq!(values.get(&format!("fluss_writer_bucket_records_sent_total{{{bucket}}}")), Some(&40.0), "{values:?}");
    assert_eq!(values.get(&format!("fluss_writer_bucket_retries_total{{{bucket}}}")), Some(&1.0), "{values:?}");
}

#[test]
fn latency_histograms_count_every_callback_batch_and_request() {
    // A 20 ms threshold: the coarse clock ticks every 2 ms.
    let conn = connect(&[("client.id", "metrics-hist"), ("client.writer.slow-callback-threshold", "20ms")]);
    let path = log_table(&conn, "metrics_hist", 2);
    let w = append_writer(&conn, &path, WriterOptions::default());
    // The ticker may be in a 100 ms sleep of an earlier, coarser watch of this process: let it
    // pick up the 2 ms tick first.
    std::thread::sleep(Duration::from_millis(150));
    let n = 300u64;
    for i in 0..n as i64 {
        w.append_with_callback(&row![i, "x"], move |_| {
            if i == 7 {
                std::thread::sleep(Duration::from_millis(60));
            }
        })
        .unwrap();
    }
    w.flush(None).unwrap();
    let s = w.stats();
    assert_eq!(s.callbacks_run, n);
    let reports = metrics::snapshot();
    let r = reports.iter().find(|r| r.client_id == "metrics-hist").expect("the writer");
    let [ack, request, run] = r.histograms;
    assert_eq!(run.count, n, "one run time sample per callback: {run:?}");
    // The slow-callback check and the histogram read the same coarse-clock difference: a callback
    // counted slow (at least 20 ms) is a sample above the 10 ms bound. (Whether the 60 ms one is
    // counted depends on the ticker being scheduled, which a loaded machine does not promise.)
    assert_eq!(LATENCY_BUCKET_BOUNDS_NANOS[9], 10_000_000);
    assert!(run.sum_nanos >= s.slow_callbacks * 20_000_000, "{run:?} {s:?}");
    assert!(run.count - run.buckets[9] >= s.slow_callbacks, "slow callbacks are above the 10 ms bound: {run:?} {s:?}");
    assert_eq!(request.count, s.requests_sent, "{request:?}");
    assert_eq!(request.count, s.request_latency.count);
    // This writer is the only one on its connection's worker: the executor-wide count is its own.
    assert_eq!(ack.count, s.ack_to_callback.count, "{ack:?}");
    assert!(ack.count >= 2 && ack.count <= n, "one sample per batch: {ack:?}");
    for h in [ack, request, run] {
        assert!(h.buckets.windows(2).all(|b| b[0] <= b[1]), "cumulative: {h:?}");
        assert!(h.buckets[h.buckets.len() - 1] <= h.count, "{h:?}");
    }
    // The Prometheus rendering says the same.
    let prom = metrics::to_prometheus(&reports);
    let labels = format!("client_id=\"metrics-hist\",table=\"fluss.metrics_hist\",writer=\"{}\"", r.writer);
    assert!(prom.contains(&format!("fluss_writer_callback_run_seconds_count{{{labels}}} {n}\n")), "{prom}");
    assert!(prom.contains(&format!("fluss_writer_callback_run_seconds_bucket{{{labels},le=\"+Inf\"}} {n}\n")), "{prom}");
    let json = metrics::to_json(&reports);
    assert!(json.contains(&format!("\"count\":{n}}}")), "{json}");
    w.close(None).unwrap();
}

#[test]
fn without_a_slow_callback_threshold_the_run_time_histogram_stays_empty() {
    let conn = connect(&[("client.id", "metrics-hist-off"), ("client.writer.slow-callback-threshold", "0")]);
    let path = log_table(&conn, "metrics_hist_off", 1);
    let w = append_writer(&conn, &path, WriterOptions::default());
    for i in 0..10i64 {
        w.append_with_callback(&row![i, "x"], |_| {}).unwrap();
    }
    w.flush(None).unwrap();
    let reports = metrics::snapshot();
    let r = reports.iter().find(|r| r.client_id == "metrics-hist-off").expect("the writer");
    assert_eq!(r.histograms[2], Default::default());
    assert!(r.histograms[0].count >= 1, "{:?}", r.histograms[0]);
    w.close(None).unwrap();
}
