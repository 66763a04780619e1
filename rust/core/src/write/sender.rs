//! The sender: one tokio task per writer that drains batches, sends them to bucket leaders,
//! retries, and completes batches **strictly in order per bucket** (C3).
//!
//! ## Algorithm
//!
//! Every bucket has a queue of *flights* (batches that left the accumulator), in send order.
//! A flight is `Sent` (a request is out), `AwaitRetry` (the last attempt failed with a
//! retriable error) or `Done` (final outcome known). Completion only ever pops `Done` flights
//! **from the front** of a bucket's queue, so a later batch acknowledged before an earlier,
//! retried one waits for it, and callbacks of a bucket run in submission order.
//!
//! * Normal mode: up to `max-inflight-requests-per-bucket` flights per bucket (1 without
//!   idempotence, so a retry can never overtake a later batch). A flight counts until it
//!   completes in order, also once answered: so a batch awaiting a retry never has more than 4
//!   later batches accepted by the server, and its resend stays inside the server's dedup window
//!   of the last 5 batches.
//! * Retry mode (some flight of the bucket awaits a retry): nothing new is sent for the bucket;
//!   once no request of the bucket is out, the first flight awaiting a retry is resent with the
//!   same bytes (same writer id and sequence), one at a time.
//! * Idempotence (fluss-protocol.md section 6): batches are stamped with (writer id, next
//!   sequence of the bucket) when first drained and keep that stamp for every retry.
//!   `OUT_OF_ORDER_SEQUENCE` is retried when the batch is not the next one the server expects (an
//!   earlier batch failed); otherwise it is fatal. A fatal failure of a stamped batch **resets
//!   the sequence state**: the writer asks for a new writer id, the bucket's later flights are
//!   not retried any more (each completes with the server's answer to its original send, and a
//!   later batch that would need a retry fails with `SEQUENCE_RESET`), and new batches start at
//!   sequence 0 under the new id.
//! * Delivery timeout: every batch completes within `client.writer.delivery-timeout` of its
//!   creation: requests are cut at the earliest deadline they carry, retries stop at the deadline
//!   (`DELIVERY_TIMEOUT`), and a queued batch past its deadline fails as soon as nothing earlier
//!   of its bucket is still pending.
//! * Abort (close timeout, connection close): every pending batch fails with `WRITER_CLOSED`,
//!   in order; late responses are ignored.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use bytes::Bytes;
use fluss_writer_dispatch::{Clock, Job, Permits, Scope, TicketSet};
use tokio::sync::mpsc;

use super::accumulator::{Accumulator, BatchKind};
use super::batch::{shard_key, BatchJob, BatchOutcome, JobTarget, Payload, WriteBatch};
use super::completion::BucketResult;
use crate::backend::{Backend, Dest, Request, Response};
use crate::config::Config;
use crate::error::{ClientCode, Error, FlussCode, Result};
use crate::metadata::TablePath;
use crate::wire::kv_batch::stamp_kv_batch;
use crate::wire::log_batch::{build_arrow_log_batch_compressed, stamp_log_batch, ArrowCompression};
use crate::wire::proto;

/// State shared between a writer and its sender task.
pub(crate) struct SenderShared {
    pub acc: Arc<Accumulator>,
    pub backend: Arc<dyn Backend>,
    pub scope: Scope,
    pub buffer: Arc<Permits>,
    pub config: Arc<Config>,
    pub target: Arc<JobTarget>,
    pub path: TablePath,
    pub schema_id: i16,
    pub kind: BatchKind,
    /// Body compression of log batches (`table.log.arrow.compression.type`).
    pub compression: ArrowCompression,
    /// Partial update columns (PutKv `target_columns`); empty = all.
    pub target_columns: Vec<i32>,
    /// Leaders known when the writer was created (index = bucket).
    pub initial_leaders: Vec<Option<i32>>,
    pub clock: Arc<dyn Clock>,
    /// Stop accepting; exit once everything completed.
    pub closing: AtomicBool,
    /// Fail everything pending now.
    pub abort: AtomicBool,
    exited: Mutex<bool>,
    exited_cv: Condvar,
}

impl SenderShared {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        acc: Arc<Accumulator>,
        backend: Arc<dyn Backend>,
        scope: Scope,
        buffer: Arc<Permits>,
        config: Arc<Config>,
        target: Arc<JobTarget>,
        path: TablePath,
        schema_id: i16,
        kind: BatchKind,
        compression: ArrowCompression,
        target_columns: Vec<i32>,
        initial_leaders: Vec<Option<i32>>,
        clock: Arc<dyn Clock>,
    ) -> SenderShared {
        SenderShared {
            acc,
            backend,
            scope,
            buffer,
            config,
            target,
            path,
            schema_id,
            kind,
            compression,
            target_columns,
            initial_leaders,
            clock,
            closing: AtomicBool::new(false),
            abort: AtomicBool::new(false),
            exited: Mutex::new(false),
            exited_cv: Condvar::new(),
        }
    }

    /// Ask the sender to finish: it exits once every batch completed.
    pub fn close(&self) {
        self.closing.store(true, Ordering::Release);
        self.acc.close_all_open();
    }

    /// Fail everything pending now (close timeout).
    pub fn abort(&self) {
        self.closing.store(true, Ordering::Release);
        self.abort.store(true, Ordering::Release);
        self.acc.wake.notify_one();
    }

    fn mark_exited(&self) {
        *self.exited.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.exited_cv.notify_all();
    }

    pub fn has_exited(&self) -> bool {
        *self.exited.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wait until the sender task exited (every batch completed and dispatched); `false` if
    /// `timeout` passed first.
    pub fn wait_exited(&self, timeout: Option<Duration>) -> bool {
        let deadline = crate::timeouts::deadline_after(timeout);
        let mut g = self.exited.lock().unwrap_or_else(|p| p.into_inner());
        while !*g {
            let left = match deadline {
                None => None,
                Some(d) => match d.checked_duration_since(std::time::Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return false,
                },
            };
            if crate::interrupt::interrupted() {
                return false;
            }
            g = match crate::interrupt::cap_sleep(left) {
                None => self.exited_cv.wait(g).unwrap_or_else(|p| p.into_inner()),
                Some(d) => self.exited_cv.wait_timeout(g, d).unwrap_or_else(|p| p.into_inner()).0,
            };
        }
        true
    }

    fn delivery_deadline(&self, b: &WriteBatch) -> u64 {
        b.created.saturating_add(self.config.delivery_timeout.as_nanos() as u64)
    }
}

enum FlightState {
    Sent,
    AwaitRetry { at: u64 },
    Done(BatchOutcome),
}

struct Flight {
    id: u64,
    batch: WriteBatch,
    bytes: Bytes,
    state: FlightState,
    /// Set by a sequence reset: this flight is not retried any more.
    no_retry: bool,
}

#[derive(Default)]
struct BucketFlights {
    flights: VecDeque<Flight>,
}

impl BucketFlights {
    fn sent(&self) -> usize {
        self.flights.iter().filter(|f| matches!(f.state, FlightState::Sent)).count()
    }

    fn in_retry(&self) -> bool {
        self.flights.iter().any(|f| matches!(f.state, FlightState::AwaitRetry { .. }))
    }
}

struct RequestOutcome {
    /// (bucket, flight id) carried by the request.
    parts: Vec<(i32, u64)>,
    result: Result<Response>,
}

struct SenderState {
    shared: Arc<SenderShared>,
    buckets: Vec<BucketFlights>,
    leaders: Vec<Option<i32>>,
    metadata_stale: bool,
    metadata_retry_at: u64,
    /// `Some(-1)` without idempotence; `None` while a writer id is needed.
    writer_id: Option<i64>,
    init_retry_at: u64,
    init_attempts: u32,
    next_seq: Vec<i32>,
    /// Last acknowledged (writer id, sequence) per bucket.
    last_acked: Vec<Option<(i64, i32)>>,
    /// A non-retriable error that stops the writer from sending (table dropped, not authorized).
    fatal: Option<Error>,
    next_flight: u64,
    tx: mpsc::UnboundedSender<RequestOutcome>,
    rx: mpsc::UnboundedReceiver<RequestOutcome>,
    idempotent: bool,
    max_inflight: usize,
}

fn backoff(base: Duration, attempts: u32) -> u64 {
    let factor = 1u64 << attempts.saturating_sub(1).min(10);
    (base.as_nanos() as u64).saturating_mul(factor).min(1_000_000_000)
}

/// Run the sender of one writer until it closed and everything completed.
pub(crate) async fn run(shared: Arc<SenderShared>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let n = shared.acc.bucket_count();
    let idempotent = shared.config.enable_idempotence;
    let mut s = SenderState {
        buckets: (0..n).map(|_| BucketFlights::default()).collect(),
        leaders: shared.initial_leaders.clone(),
        metadata_stale: shared.initial_leaders.iter().any(Option::is_none),
        metadata_retry_at: 0,
        writer_id: if idempotent { None } else { Some(-1) },
        init_retry_at: 0,
        init_attempts: 0,
        next_seq: vec![0; n],
        last_acked: vec![None; n],
        fatal: None,
        next_flight: 0,
        tx,
        rx,
        idempotent,
        max_inflight: shared.config.effective_inflight_per_bucket(),
        shared: shared.clone(),
    };
    loop {
        while let Ok(r) = s.rx.try_recv() {
            s.on_response(r);
        }
        if shared.abort.load(Ordering::Acquire) {
            s.abort_all();
        }
        s.complete_ready();
        if shared.closing.load(Ordering::Acquire) && s.all_idle() && shared.scope.slots_in_use() == 0 {
            break;
        }
        let now = shared.clock.now_nanos();
        if !shared.abort.load(Ordering::Acquire) {
            if s.writer_id.is_none() && now >= s.init_retry_at && (!shared.acc.is_empty() || s.buckets.iter().any(BucketFlights::in_retry))
            {
                s.init_writer().await;
            }
            if s.metadata_stale && now >= s.metadata_retry_at {
                s.refresh_metadata().await;
            }
        }
        let now = shared.clock.now_nanos();
        let next = s.drain_and_send(now);
        s.complete_ready();
        let mut next = next;
        if shared.closing.load(Ordering::Acquire) && s.all_idle() {
            // An append admitted just before close may still be on its way into the
            // accumulator: exit only once every admitted operation has retired.
            if shared.scope.slots_in_use() == 0 {
                break;
            }
            let soon = shared.clock.now_nanos() + 5_000_000;
            next = Some(next.map_or(soon, |n| n.min(soon)));
        }
        let wait = next.map(|t| Duration::from_nanos(t.saturating_sub(shared.clock.now_nanos()).max(200_000)));
        let sleep = tokio::time::sleep(wait.unwrap_or(Duration::from_secs(3600)));
        tokio::select! {
            _ = shared.acc.wake.notified() => {}
            r = s.rx.recv() => { if let Some(r) = r { s.on_response(r) } }
            _ = sleep => {}
        }
    }
    shared.mark_exited();
}

impl SenderState {
    fn all_idle(&self) -> bool {
        self.buckets.iter().all(|b| b.flights.is_empty()) && self.shared.acc.is_empty()
    }

    async fn init_writer(&mut self) {
        let req = proto::InitWriterRequest {
            table_path: vec![proto::PbTablePath {
                database_name: self.shared.path.database.clone(),
                table_name: self.shared.path.table.clone(),
            }],
        };
        let fut = self.shared.backend.send(Dest::Any, Request::InitWriter(req));
        let res = match tokio::time::timeout(self.shared.config.request_timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err(Error::server(FlussCode::NETWORK_EXCEPTION, "InitWriter timed out")),
        };
        match res {
            Ok(Response::InitWriter(r)) => {
                log::debug!("writer for {} got writer id {}", self.shared.path, r.writer_id);
                self.writer_id = Some(r.writer_id);
                self.next_seq.iter_mut().for_each(|s| *s = 0);
                self.init_attempts = 0;
                self.fatal = None;
            }
            Ok(other) => self.fatal = Some(Error::protocol(format!("InitWriter answered with {other:?}"))),
            Err(e) if e.is_retriable() => {
                self.init_attempts += 1;
                if FlussCode::is_invalid_metadata(e.code()) {
                    self.metadata_stale = true;
                }
                log::warn!("InitWriter for {} failed, will retry: {e}", self.shared.path);
                self.init_retry_at = self.shared.clock.now_nanos() + backoff(self.shared.config.retry_backoff, self.init_attempts);
            }
            Err(e) => {
                log::error!("InitWriter for {} failed: {e}", self.shared.path);
                self.fatal = Some(e);
                self.init_retry_at = self.shared.clock.now_nanos() + 1_000_000_000;
            }
        }
    }

    async fn refresh_metadata(&mut self) {
        let req = proto::MetadataRequest {
            table_path: vec![proto::PbTablePath {
                database_name: self.shared.path.database.clone(),
                table_name: self.shared.path.table.clone(),
            }],
            ..Default::default()
        };
        let fut = self.shared.backend.send(Dest::Any, Request::Metadata(req));
        let res = match tokio::time::timeout(self.shared.config.request_timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err(Error::server(FlussCode::NETWORK_EXCEPTION, "Metadata request timed out")),
        };
        let now = self.shared.clock.now_nanos();
        match res {
            Ok(Response::Metadata(m)) => {
                let Some(t) = m.table_metadata.iter().find(|t| t.table_id == self.shared.target.table_id) else {
                    self.fatal = Some(Error::server(
                        FlussCode::TABLE_NOT_EXIST,
                        format!("table {} no longer exists (or was recreated)", self.shared.path),
                    ));
                    self.metadata_retry_at = now + 1_000_000_000;
                    return;
                };
                for bm in &t.bucket_metadata {
                    if let Some(slot) = self.leaders.get_mut(bm.bucket_id as usize) {
                        *slot = bm.leader();
                    }
                }
                self.metadata_stale = self.leaders.iter().any(Option::is_none);
                self.metadata_retry_at = now + backoff(self.shared.config.retry_backoff, 1);
                self.fatal = None;
            }
            Ok(other) => self.fatal = Some(Error::protocol(format!("Metadata answered with {other:?}"))),
            Err(e) if e.is_retriable() => {
                log::warn!("metadata refresh for {} failed, will retry: {e}", self.shared.path);
                self.metadata_retry_at = now + backoff(self.shared.config.retry_backoff, 2);
            }
            Err(e) => {
                log::error!("metadata refresh for {} failed: {e}", self.shared.path);
                self.fatal = Some(e);
                self.metadata_retry_at = now + 1_000_000_000;
            }
        }
    }

    /// Encode a drained batch into wire bytes (not stamped yet).
    fn encode(&self, batch: &mut WriteBatch) -> Result<Bytes> {
        let payload = std::mem::replace(&mut batch.payload, Payload::Encoded(Bytes::new()));
        let bytes = match payload {
            Payload::Rows(mut rows) => {
                build_arrow_log_batch_compressed(&rows.finish(), self.shared.schema_id, None, self.shared.compression)?
            }
            Payload::Arrow(rb) => build_arrow_log_batch_compressed(&rb, self.shared.schema_id, None, self.shared.compression)?,
            Payload::Kv(kv) => kv.finish(),
            Payload::Encoded(b) => return Ok(b),
        };
        Ok(Bytes::from(bytes))
    }

    fn push_done(&mut self, bucket: usize, batch: WriteBatch, error: Error) {
        let id = self.next_flight;
        self.next_flight += 1;
        self.buckets[bucket].flights.push_back(Flight {
            id,
            batch,
            bytes: Bytes::new(),
            state: FlightState::Done(BatchOutcome { result: Err(error), base_offset: -1, log_end_offset: -1 }),
            no_retry: true,
        });
    }

    /// Drain sendable batches, fail expired ones, resend retries, and send requests. Returns the
    /// next time something becomes due.
    fn drain_and_send(&mut self, now: u64) -> Option<u64> {
        let linger = self.shared.config.batch_timeout.as_nanos() as u64;
        let closing = self.shared.closing.load(Ordering::Acquire);
        let mut next: Option<u64> = None;
        let due = |t: u64, next: &mut Option<u64>| *next = Some(next.map_or(t, |n: u64| n.min(t)));
        // (leader) -> [(bucket, flight id)]
        let mut out: HashMap<i32, Vec<(i32, u64)>> = HashMap::new();
        for b in 0..self.buckets.len() {
            // 1. Expire (or fail with the writer's fatal error) queued batches when nothing earlier
            //    of the bucket is pending.
            if self.buckets[b].flights.is_empty() {
                loop {
                    let mut q = self.shared.acc.lock(b);
                    let front_created = q.closed.front().map(|x| x.created).or_else(|| q.open.as_ref().map(|x| x.created));
                    let Some(created) = front_created else { break };
                    let deadline = created.saturating_add(self.shared.config.delivery_timeout.as_nanos() as u64);
                    let error = if let Some(f) = &self.fatal {
                        f.clone()
                    } else if now >= deadline {
                        Error::client(
                            ClientCode::DeliveryTimeout,
                            format!("not delivered within client.writer.delivery-timeout ({:?})", self.shared.config.delivery_timeout),
                        )
                    } else {
                        due(deadline, &mut next);
                        break;
                    };
                    let batch = q.closed.pop_front().or_else(|| q.take_open()).expect("front exists");
                    drop(q);
                    self.push_done(b, batch, error);
                }
            }
            let leader = self.leaders.get(b).copied().flatten();
            let can_send = leader.is_some() && self.writer_id.is_some() && self.fatal.is_none();
            if leader.is_none() {
                self.metadata_stale = true;
            }
            // 2. Retry mode: resend the first flight awaiting a retry once nothing is out.
            if self.buckets[b].in_retry() {
                if self.buckets[b].sent() == 0 {
                    let idx =
                        self.buckets[b].flights.iter().position(|f| matches!(f.state, FlightState::AwaitRetry { .. })).expect("in retry");
                    let FlightState::AwaitRetry { at } = self.buckets[b].flights[idx].state else { unreachable!() };
                    if at > now || !can_send {
                        due(at.max(now + 1_000_000), &mut next);
                    } else {
                        let f = &mut self.buckets[b].flights[idx];
                        f.state = FlightState::Sent;
                        f.batch.attempts += 1;
                        out.entry(leader.expect("can_send")).or_default().push((b as i32, f.id));
                    }
                }
                continue;
            }
            // 3. Normal mode: drain new batches up to the in-flight limit.
            // In flight = left the accumulator and not yet completed in order (sent, awaiting a
            // retry, or answered but waiting behind an earlier batch). Counting only batches with
            // a request out would let a bucket run ahead of the server's 5-batch dedup window
            // while an earlier batch still needs its retry.
            while can_send && self.buckets[b].flights.len() < self.max_inflight {
                let mut q = self.shared.acc.lock(b);
                let batch = if let Some(x) = q.closed.pop_front() {
                    x
                } else if let Some(open) = &q.open {
                    if closing || now >= open.created + linger {
                        q.take_open().expect("open")
                    } else {
                        due(open.created + linger, &mut next);
                        break;
                    }
                } else {
                    break;
                };
                drop(q);
                let mut batch = batch;
                let bytes = match self.encode(&mut batch) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        self.push_done(b, batch, Error::internal(format!("encoding a batch failed: {e}")));
                        continue;
                    }
                };
                let mut bytes_mut = bytes.to_vec();
                if self.idempotent {
                    let wid = self.writer_id.expect("can_send");
                    let seq = self.next_seq[b];
                    self.next_seq[b] = if seq == i32::MAX { 0 } else { seq + 1 };
                    match self.shared.kind {
                        BatchKind::Log => stamp_log_batch(&mut bytes_mut, wid, seq),
                        BatchKind::Kv => stamp_kv_batch(&mut bytes_mut, wid, seq),
                    }
                    batch.stamp = Some((wid, seq));
                }
                batch.attempts = 1;
                let id = self.next_flight;
                self.next_flight += 1;
                self.buckets[b].flights.push_back(Flight {
                    id,
                    batch,
                    bytes: Bytes::from(bytes_mut),
                    state: FlightState::Sent,
                    no_retry: false,
                });
                out.entry(leader.expect("can_send")).or_default().push((b as i32, id));
            }
            // Timers of what is left.
            if let Some(f) = self.buckets[b].flights.iter().find_map(|f| match f.state {
                FlightState::AwaitRetry { at } => Some(at),
                _ => None,
            }) {
                due(f, &mut next);
            }
            let q = self.shared.acc.lock(b);
            if let Some(open) = &q.open {
                due(open.created + linger, &mut next);
            }
            if !can_send && !q.is_empty() {
                due(now + 50_000_000, &mut next);
            }
        }
        for (leader, parts) in out {
            self.send_requests(leader, parts, now);
        }
        next
    }

    fn flight(&self, bucket: i32, id: u64) -> Option<&Flight> {
        self.buckets.get(bucket as usize)?.flights.iter().find(|f| f.id == id)
    }

    fn flight_mut(&mut self, bucket: i32, id: u64) -> Option<&mut Flight> {
        self.buckets.get_mut(bucket as usize)?.flights.iter_mut().find(|f| f.id == id)
    }

    /// Split the parts for one leader into requests within `client.writer.request-max-size`
    /// (one batch per bucket per request) and send them.
    fn send_requests(&mut self, leader: i32, parts: Vec<(i32, u64)>, now: u64) {
        let max = self.shared.config.request_max_size as usize;
        let mut groups: Vec<Vec<(i32, u64)>> = Vec::new();
        let mut size = 0usize;
        for p in parts {
            let len = self.flight(p.0, p.1).map_or(0, |f| f.bytes.len());
            let start_new = match groups.last() {
                None => true,
                Some(g) => size + len > max || g.iter().any(|(b, _)| *b == p.0),
            };
            if start_new {
                groups.push(Vec::new());
                size = 0;
            }
            size += len;
            groups.last_mut().expect("pushed").push(p);
        }
        for parts in groups {
            self.send_one(leader, parts, now);
        }
    }

    fn send_one(&mut self, leader: i32, parts: Vec<(i32, u64)>, now: u64) {
        let cfg = &self.shared.config;
        let timeout_ms = cfg.request_timeout.as_millis().min(i32::MAX as u128) as i32;
        let mut earliest = u64::MAX;
        let mut items: Vec<(i32, Bytes)> = Vec::with_capacity(parts.len());
        for &(b, id) in &parts {
            let f = self.flight(b, id).expect("flight exists");
            earliest = earliest.min(self.shared.delivery_deadline(&f.batch));
            items.push((b, f.bytes.clone()));
        }
        let request = match self.shared.kind {
            BatchKind::Log => Request::ProduceLog(proto::ProduceLogRequest {
                acks: cfg.acks,
                table_id: self.shared.target.table_id,
                timeout_ms,
                buckets_req: items
                    .into_iter()
                    .map(|(b, records)| proto::PbProduceLogReqForBucket { partition_id: None, bucket_id: b, records })
                    .collect(),
            }),
            BatchKind::Kv => Request::PutKv(proto::PutKvRequest {
                acks: cfg.acks,
                table_id: self.shared.target.table_id,
                timeout_ms,
                target_columns: self.shared.target_columns.clone(),
                buckets_req: items
                    .into_iter()
                    .map(|(b, records)| proto::PbPutKvReqForBucket { partition_id: None, bucket_id: b, records })
                    .collect(),
                agg_mode: None,
            }),
        };
        // A request never outlives the earliest delivery deadline it carries.
        let budget = Duration::from_nanos(earliest.saturating_sub(now)).min(cfg.request_timeout).max(Duration::from_millis(1));
        let fut = self.shared.backend.send(Dest::Tablet(leader), request);
        let tx = self.tx.clone();
        let wake = self.shared.acc.wake.clone();
        tokio::spawn(async move {
            let result = match tokio::time::timeout(budget, fut).await {
                Ok(r) => r,
                Err(_) => Err(Error::server(FlussCode::NETWORK_EXCEPTION, format!("request timed out after {budget:?}"))),
            };
            let _ = tx.send(RequestOutcome { parts, result });
            wake.notify_one();
        });
    }

    fn on_response(&mut self, r: RequestOutcome) {
        for &(bucket, id) in &r.parts {
            let res: Result<(i64, i64)> = match &r.result {
                Err(e) => Err(e.clone()),
                Ok(Response::ProduceLog(p)) => match p.buckets_resp.iter().find(|x| x.bucket_id == bucket) {
                    None => {
                        Err(Error::server(FlussCode::UNKNOWN_SERVER_ERROR, format!("no answer for bucket {bucket} in ProduceLog response")))
                    }
                    Some(x) => match x.error_code.filter(|c| *c != 0) {
                        Some(code) => Err(Error::server(code, x.error_message.clone().unwrap_or_default())),
                        None => Ok((x.base_offset.unwrap_or(-1), -1)),
                    },
                },
                Ok(Response::PutKv(p)) => match p.buckets_resp.iter().find(|x| x.bucket_id == bucket) {
                    None => Err(Error::server(FlussCode::UNKNOWN_SERVER_ERROR, format!("no answer for bucket {bucket} in PutKv response"))),
                    Some(x) => match x.error_code.filter(|c| *c != 0) {
                        Some(code) => Err(Error::server(code, x.error_message.clone().unwrap_or_default())),
                        None => Ok((-1, x.log_end_offset.unwrap_or(-1))),
                    },
                },
                Ok(other) => Err(Error::protocol(format!("unexpected response {other:?}"))),
            };
            self.on_flight_result(bucket, id, res);
        }
    }

    fn on_flight_result(&mut self, bucket: i32, id: u64, res: Result<(i64, i64)>) {
        let now = self.shared.clock.now_nanos();
        let idempotent = self.idempotent;
        let retries = self.shared.config.retries;
        let backoff_base = self.shared.config.retry_backoff;
        let expected = {
            let Some(f) = self.flight(bucket, id) else { return };
            if !matches!(f.state, FlightState::Sent) {
                return; // aborted meanwhile; a late answer changes nothing
            }
            f.batch.stamp.map(|(wid, _)| match self.last_acked[bucket as usize] {
                Some((w, s)) if w == wid => {
                    if s == i32::MAX {
                        0
                    } else {
                        s + 1
                    }
                }
                _ => 0,
            })
        };
        let deadline_of = |f: &Flight, shared: &SenderShared| shared.delivery_deadline(&f.batch);
        let shared = self.shared.clone();
        let f = self.flight_mut(bucket, id).expect("checked");
        let mut reset = false;
        match res {
            Ok((base_offset, log_end_offset)) => {
                f.state = FlightState::Done(BatchOutcome { result: Ok(()), base_offset, log_end_offset });
            }
            Err(e) if e.code() == FlussCode::DUPLICATE_SEQUENCE => {
                f.state = FlightState::Done(BatchOutcome { result: Ok(()), base_offset: -1, log_end_offset: -1 });
            }
            Err(e) => {
                let seq = f.batch.stamp.map(|(_, s)| s);
                // Whether the normal rules would retry it; after a sequence reset it is not
                // retried any more (and then fails with SEQUENCE_RESET below).
                let would_retry =
                    if idempotent && e.code() == FlussCode::OUT_OF_ORDER_SEQUENCE { seq != expected } else { e.is_retriable() };
                let retriable = would_retry && !f.no_retry;
                let expired = now >= deadline_of(f, &shared);
                if retriable && f.batch.attempts <= retries && !expired {
                    log::debug!("{} bucket {bucket}: attempt {} failed, retrying: {e}", shared.path, f.batch.attempts);
                    f.state = FlightState::AwaitRetry { at: now + backoff(backoff_base, f.batch.attempts) };
                    if FlussCode::is_invalid_metadata(e.code()) {
                        self.metadata_stale = true;
                    }
                } else {
                    let err = if f.no_retry && would_retry {
                        Error::client(
                            ClientCode::SequenceReset,
                            format!("not retried after the writer's sequence state was reset by an earlier batch of bucket {bucket}: {e}"),
                        )
                    } else if expired && retriable {
                        Error::client(
                            ClientCode::DeliveryTimeout,
                            format!("not delivered within client.writer.delivery-timeout; last error: {e}"),
                        )
                    } else {
                        e
                    };
                    log::warn!("{} bucket {bucket}: batch failed: {err}", shared.path);
                    reset = idempotent && f.batch.stamp.is_some() && !f.no_retry;
                    f.state = FlightState::Done(BatchOutcome { result: Err(err), base_offset: -1, log_end_offset: -1 });
                }
            }
        }
        if let Some(f) = self.flight(bucket, id) {
            if let (FlightState::Done(o), Some(stamp)) = (&f.state, f.batch.stamp) {
                if o.result.is_ok() {
                    self.last_acked[bucket as usize] = Some(stamp);
                }
            }
        }
        if reset {
            self.reset_sequences(bucket, id);
        }
    }

    /// A stamped batch of `bucket` failed for good: start a new writer id and stop retrying the
    /// bucket's later flights.
    fn reset_sequences(&mut self, bucket: i32, failed: u64) {
        log::warn!("{} bucket {bucket}: resetting the idempotent writer's sequence state", self.shared.path);
        self.writer_id = None;
        self.init_retry_at = 0;
        let flights = &mut self.buckets[bucket as usize].flights;
        let mut after = false;
        for f in flights.iter_mut() {
            if f.id == failed {
                after = true;
                continue;
            }
            if !after {
                continue;
            }
            f.no_retry = true;
            if let FlightState::AwaitRetry { .. } = f.state {
                f.state = FlightState::Done(BatchOutcome {
                    result: Err(Error::client(
                        ClientCode::SequenceReset,
                        format!("not retried after the writer's sequence state was reset by an earlier batch of bucket {bucket}"),
                    )),
                    base_offset: -1,
                    log_end_offset: -1,
                });
            }
        }
    }

    fn abort_all(&mut self) {
        let err = || Error::client(ClientCode::WriterClosed, "the writer was closed before this operation completed");
        for b in 0..self.buckets.len() {
            for f in self.buckets[b].flights.iter_mut() {
                if !matches!(f.state, FlightState::Done(_)) {
                    f.state = FlightState::Done(BatchOutcome { result: Err(err()), base_offset: -1, log_end_offset: -1 });
                }
            }
            loop {
                let mut q = self.shared.acc.lock(b);
                let Some(batch) = q.closed.pop_front().or_else(|| q.take_open()) else { break };
                drop(q);
                self.push_done(b, batch, err());
            }
        }
    }

    /// Pop `Done` flights from the front of every bucket and dispatch them, in order.
    fn complete_ready(&mut self) {
        for b in 0..self.buckets.len() {
            while matches!(self.buckets[b].flights.front().map(|f| &f.state), Some(FlightState::Done(_))) {
                let f = self.buckets[b].flights.pop_front().expect("front");
                let FlightState::Done(outcome) = f.state else { unreachable!() };
                finish_batch(&self.shared, f.batch, outcome);
            }
        }
    }
}

/// Release a completed batch's buffer bytes and hand its callbacks to the dispatcher as one job.
fn finish_batch(shared: &SenderShared, batch: WriteBatch, outcome: BatchOutcome) {
    shared.buffer.release(batch.reserved);
    let now = shared.clock.now_nanos();
    let WriteBatch { bucket, entries, joins, tickets, .. } = batch;
    let mut finals = Vec::new();
    for (join, rows) in joins {
        let part = BucketResult { bucket, rows, base_offset: outcome.base_offset, error: outcome.result.clone().err() };
        if let Some(done) = join.record(part, &shared.target) {
            finals.push((done, join.first_bucket));
        }
    }
    if !entries.is_empty() || !tickets.is_empty() {
        let body = BatchJob { target: shared.target.clone(), bucket, outcome, entries };
        let key = shard_key(shared.target.table_id, None, bucket);
        shared.scope.dispatch(Job::new(&shared.scope, key, tickets, now, Box::new(body)));
    }
    for ((job, ticket), first_bucket) in finals {
        let mut t = TicketSet::default();
        t.add(ticket);
        let key = shard_key(shared.target.table_id, None, first_bucket);
        shared.scope.dispatch(Job::new(&shared.scope, key, t, now, Box::new(job)));
    }
}
