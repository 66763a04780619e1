//! The sender's state machine, without I/O: where every batch of a writer is, what happens to it
//! on each event, and when it must complete.
//!
//! The sender (`sender.rs`) is a thin shell around [`Machine`]: it feeds it events (responses,
//! lost responses, metadata and writer-id answers, the clock) and carries out what it asks for
//! (send these batches to that leader, refresh metadata, ask for a writer id, wake me at `t`).
//! Nothing here touches tokio, the network or the dispatcher, so the rules below are checked by a
//! property test that drives the machine with random fault plans and clock advances.
//!
//! ## States of a batch and their deadlines
//!
//! `deadline = created + client.writer.delivery-timeout` (`created`: when the batch opened).
//!
//! | state | leaves it | at the deadline |
//! |---|---|---|
//! | open (accumulator) | full, flush/close, or lingered `batch-timeout` | fails `DELIVERY_TIMEOUT` |
//! | ready (closed, queued) | drained when the bucket can send | fails `DELIVERY_TIMEOUT` |
//! | waiting for a leader / a writer id (queued or to be resent) | metadata / InitWriter answer | fails `DELIVERY_TIMEOUT` |
//! | table gone or writer fatal (`fatal`) | at once: fails with that error (a batch in flight: when an answer that would be retried comes) | - |
//! | backing off (a retriable error, resend due at `at`) | resent at `at` | fails `DELIVERY_TIMEOUT` (last error in the message) |
//! | in flight (request out) | answer, or lost at `until` = min(sent + request-timeout, max(deadline, sent + 1 ms)) | cut at `until` |
//! | done (outcome known) | completes once every earlier batch of its bucket completed | bounded by the earlier ones |
//!
//! A batch is never sent at or after its deadline, so an attempt ends by `deadline + 1 ms`, and a
//! batch that failed or expired completes as soon as every earlier batch of its bucket completed
//! (per-bucket order, C3; the earlier ones have earlier deadlines). So no batch outlives its
//! deadline by more than one request timeout, provided the shell wakes the machine at the time
//! [`Poll::next`] asks for, and it asks for one whenever anything is pending.
//!
//! ## Sending rules (see `sender.rs` for the why)
//!
//! * Normal mode: up to `max_inflight` flights per bucket (drained and not yet completed).
//! * Retry mode (some flight backs off): nothing new is sent; once nothing of the bucket is in
//!   flight the first backing-off flight is resent with the same bytes and stamp.
//! * Idempotence: a batch is stamped (writer id, next sequence of the bucket) when drained; a
//!   final failure (or expiry) of a stamped batch resets the sequence state (C4): new writer id,
//!   the bucket's later flights are not retried any more (`SEQUENCE_RESET` where a retry would be
//!   needed), new batches start at sequence 0.
//! * Partition epoch: the machine owns the id of the lane's partition (from metadata answers;
//!   requests go there). A new id (the partition was dropped and recreated) is a new bucket for
//!   the server's idempotence, whose first batch must have sequence 0: the epoch is bumped, every
//!   bucket's numbering restarts at 0, and each batch not yet acknowledged is restamped with the
//!   next sequence of the new id when it is resent (retry mode: in order, one at a time). An
//!   answer to an attempt sent under an older epoch: a success stands (the old partition stored
//!   it); an error means not delivered: resent to the new id, not counted against `retries`, no
//!   sequence reset. While such attempts are out, nothing new is sent for the bucket.
//! * Abort: everything pending fails with `WRITER_CLOSED`, in order; late answers are ignored.
//! * Back-pressure (primary-key tables, PutKv v2): an answer for a bucket carries the server's
//!   storage `pressure` p in [0, 1] (`STORAGE_BACKPRESSURE` (72) counts as p = 1, and is retried).
//!   The bucket then sends nothing new and resends nothing for `max_throttle x p^2` from that
//!   answer (an answer that carries a pressure replaces the bucket's throttle, latest wins; one
//!   without, as a 1.0 server sends at pressure 0, lets it run out). Requests already out
//!   are not touched, other buckets not at all, and order never changes: only the next send of
//!   the bucket waits. A batch whose delivery deadline comes first fails with `DELIVERY_TIMEOUT`
//!   at that deadline, as any batch that cannot be sent in time (the throttle never stretches the
//!   deadline). Time a bucket held batches back is reported by [`Machine::take_throttled`].

use std::collections::VecDeque;

use super::batch::BatchOutcome;
use crate::error::{ClientCode, Error, FlussCode, Result};

const MS: u64 = 1_000_000;
/// How often metadata or a writer id is asked for again after a non-retriable failure.
const FATAL_RECHECK: u64 = 1_000 * MS;

/// The configuration the machine needs, in clock nanoseconds.
#[derive(Clone, Debug)]
pub(crate) struct Params {
    /// The table, for log messages.
    pub table: String,
    pub delivery_timeout: u64,
    pub request_timeout: u64,
    /// `client.writer.batch-timeout`.
    pub linger: u64,
    pub retries: u32,
    pub retry_backoff: u64,
    pub max_inflight: usize,
    pub idempotent: bool,
    /// `client.writer.kv-backpressure.max-throttle`: the throttle at pressure 1.
    pub max_throttle: u64,
}

/// The wait a bucket owes the server after an answer with storage `pressure`:
/// `max_throttle x p^2`, p clamped to [0, 1] (not a number: 0).
pub(crate) fn throttle_for(max_throttle: u64, pressure: f32) -> u64 {
    let p = if pressure.is_nan() { 0.0 } else { f64::from(pressure).clamp(0.0, 1.0) };
    (max_throttle as f64 * p * p) as u64
}

/// Exponential backoff: `base * 2^(attempts-1)`, at most 1 s.
pub(crate) fn backoff(base: u64, attempts: u32) -> u64 {
    let factor = 1u64 << attempts.saturating_sub(1).min(10);
    base.saturating_mul(factor).min(1_000 * MS)
}

/// Where batches wait before the machine takes them (the accumulator), and how a taken batch
/// is prepared for the wire. Per bucket, batches are taken oldest first.
pub(crate) trait Queue {
    type Batch;
    /// Creation time of the oldest queued batch of `bucket`, if any.
    fn front_created(&mut self, bucket: usize) -> Option<u64>;
    /// The oldest queued batch if it may be sent now (closed, or open and lingered past
    /// `linger`, or `flush_all`). `Err(t)`: the open batch becomes ready at `t`. `Ok(None)`:
    /// nothing queued.
    fn take_ready(&mut self, bucket: usize, now: u64, linger: u64, flush_all: bool) -> std::result::Result<Option<Self::Batch>, u64>;
    /// The oldest queued batch, ready or not (to fail it).
    fn take_front(&mut self, bucket: usize) -> Option<Self::Batch>;
    fn created(&self, batch: &Self::Batch) -> u64;
    /// Encode a taken batch and stamp it with (writer id, sequence). On `Err` the batch fails
    /// with that error (and its sequence number is not used).
    fn prepare(&mut self, bucket: usize, batch: &mut Self::Batch, stamp: Option<(i64, i32)>) -> Result<()>;
    /// Stamp an already prepared batch with a new (writer id, sequence): its partition was
    /// recreated under a new id before the batch was acknowledged.
    fn restamp(&mut self, bucket: usize, batch: &mut Self::Batch, stamp: (i64, i32));
}

/// One attempt of one flight, as carried by a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Part {
    pub bucket: i32,
    pub id: u64,
    pub attempt: u32,
}

#[derive(Debug)]
enum State {
    /// A request is out; it is considered lost at `until`.
    InFlight {
        attempt: u32,
        until: u64,
    },
    /// The last attempt failed retriably; resend due at `at`.
    Backoff {
        at: u64,
    },
    Done(BatchOutcome),
}

struct Flight<B> {
    id: u64,
    batch: B,
    created: u64,
    stamp: Option<(i64, i32)>,
    attempts: u32,
    state: State,
    /// Set by a sequence reset: this flight is not retried any more.
    no_retry: bool,
    last_error: Option<Error>,
    /// When (clock nanos) `last_error` came.
    last_error_at: u64,
    /// The partition epoch of its last attempt (and of its stamp once stamped).
    epoch: u32,
    /// Attempts that went to a replaced partition id and failed: they do not count against
    /// `retries`.
    stale_attempts: u32,
    /// The partition id of its last attempt.
    sent_to: Option<i64>,
}

/// A metadata or InitWriter request of the writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Idle { retry_at: u64 },
    InFlight { token: u64, until: u64 },
}

/// What a metadata answer said about the writer's table.
#[derive(Debug)]
pub(crate) enum MetadataAnswer {
    /// The table exists: (bucket, leader) pairs (`None`: no leader known), and the id of the
    /// partition the lane writes to (`None`: a table without partitions); `historical`: that
    /// partition is the table's historical partition, standing in for the lane's expired one
    /// (its requests carry the lane's partition name as `original_partition_name`).
    Leaders { leaders: Vec<(i32, Option<i32>)>, partition_id: Option<i64>, historical: bool },
    /// The table is gone (dropped, or recreated with another id).
    TableGone(Error),
}

/// What the shell must do after a [`Machine::poll`].
#[derive(Debug, Default)]
pub(crate) struct Poll {
    /// What to send, per leader, in send order (several parts of one bucket when it has more
    /// than one batch to send: the shell puts them in separate requests, in this order).
    pub sends: Vec<(i32, Vec<Part>)>,
    /// Send a metadata request with this token, cut at `request_timeout`.
    pub metadata: Option<u64>,
    /// Send an InitWriter request with this token, cut at `request_timeout`.
    pub writer_id: Option<u64>,
    /// Call `poll` again at this time at the latest. `Some` whenever anything is pending.
    pub next: Option<u64>,
}

fn due(next: &mut Option<u64>, t: u64) {
    *next = Some(next.map_or(t, |n| n.min(t)));
}

fn done_err(error: Error) -> State {
    State::Done(BatchOutcome { result: Err(error), base_offset: -1, log_end_offset: -1, acked_by: None })
}

fn delivery_timeout_error(dt: u64, last: Option<&Error>) -> Error {
    let dt = std::time::Duration::from_nanos(dt);
    match last {
        Some(e) => Error::client(
            ClientCode::DeliveryTimeout,
            format!("not delivered within client.writer.delivery-timeout ({dt:?}); last error: {e}"),
        ),
        None => Error::client(ClientCode::DeliveryTimeout, format!("not delivered within client.writer.delivery-timeout ({dt:?})")),
    }
}

/// The delivery timeout of a batch that was sent: how often, and how long before its deadline
/// its last error came (an error long before the deadline means it waited, not retried, since).
fn flight_timeout_error(dt: u64, attempts: u32, last: Option<&Error>, last_at: u64, deadline: u64) -> Error {
    let dt = std::time::Duration::from_nanos(dt);
    let tries = if attempts == 1 { "1 attempt".to_string() } else { format!("{attempts} attempts") };
    let message = match last {
        Some(e) if last_at < deadline => {
            let before = std::time::Duration::from_millis((deadline - last_at) / MS);
            format!("not delivered within client.writer.delivery-timeout ({dt:?}) after {tries}; last error ({before:?} before the deadline): {e}")
        }
        Some(e) => format!("not delivered within client.writer.delivery-timeout ({dt:?}) after {tries}; last error: {e}"),
        None => format!("not delivered within client.writer.delivery-timeout ({dt:?}) after {tries}"),
    };
    Error::client(ClientCode::DeliveryTimeout, message)
}

fn sequence_reset_error(bucket: usize, e: Option<&Error>) -> Error {
    let base = format!("not retried after the writer's sequence state was reset by an earlier batch of bucket {bucket}");
    Error::client(
        ClientCode::SequenceReset,
        match e {
            Some(e) => format!("{base}: {e}"),
            None => base,
        },
    )
}

/// The per-writer state machine: per bucket, a queue of flights in send order.
pub(crate) struct Machine<B> {
    p: Params,
    buckets: Vec<VecDeque<Flight<B>>>,
    leaders: Vec<Option<i32>>,
    /// `Some(-1)` without idempotence; `None` while a writer id is needed.
    writer_id: Option<i64>,
    next_seq: Vec<i32>,
    /// Last acknowledged (writer id, sequence) per bucket.
    last_acked: Vec<Option<(i64, i32)>>,
    /// A non-retriable error that stops the writer from sending (table dropped, not authorized).
    fatal: Option<Error>,
    next_flight: u64,
    /// Flights that completed in order, not yet handed to the shell.
    completed: VecDeque<(usize, B, BatchOutcome)>,
    next_token: u64,
    metadata_wanted: bool,
    metadata: Side,
    init: Side,
    init_attempts: u32,
    aborted: bool,
    /// (bucket, code) of the attempts retried since the shell last asked ([`Machine::take_retried`]).
    retried: Vec<(usize, i32)>,
    /// The id of the lane's partition, once known (requests go there).
    partition_id: Option<i64>,
    /// Whether `partition_id` is the table's historical partition (see [`MetadataAnswer`]).
    historical: bool,
    /// Partition ids the lane left under its current writer id. The server keeps that writer's
    /// sequences per id, so going back to one of them (a lane that returns to the historical
    /// partition) must not restart at sequence 0 under the same writer id.
    left_ids: Vec<i64>,
    /// Bumped whenever the partition id changes (the partition was dropped and recreated).
    epoch: u32,
    /// Per bucket: the storage pressure of the server's latest answer (0 for log tables).
    pressure: Vec<f32>,
    /// Per bucket: nothing is sent before this time (server back-pressure).
    throttle_until: Vec<u64>,
    /// Per bucket: since when batches wait only because of the throttle.
    held_since: Vec<Option<u64>>,
    /// (bucket, nanos) of each time a bucket held batches back for the throttle, since the
    /// shell last asked ([`Machine::take_throttled`]).
    throttled: Vec<(usize, u64)>,
}

impl<B> Machine<B> {
    /// `partition_id`: the id of the lane's partition if already known.
    pub fn new(p: Params, leaders: Vec<Option<i32>>, partition_id: Option<i64>) -> Machine<B> {
        let n = leaders.len();
        Machine {
            buckets: (0..n).map(|_| VecDeque::new()).collect(),
            metadata_wanted: leaders.iter().any(Option::is_none),
            leaders,
            writer_id: if p.idempotent { None } else { Some(-1) },
            next_seq: vec![0; n],
            last_acked: vec![None; n],
            fatal: None,
            next_flight: 0,
            completed: VecDeque::new(),
            next_token: 0,
            metadata: Side::Idle { retry_at: 0 },
            init: Side::Idle { retry_at: 0 },
            init_attempts: 0,
            aborted: false,
            retried: Vec::new(),
            partition_id,
            historical: false,
            left_ids: Vec::new(),
            epoch: 0,
            pressure: vec![0.0; n],
            throttle_until: vec![0; n],
            held_since: vec![None; n],
            throttled: Vec::new(),
            p,
        }
    }

    /// The storage pressure the server reported in its latest answer for `bucket` (0..1).
    pub fn pressure(&self, bucket: usize) -> f32 {
        self.pressure.get(bucket).copied().unwrap_or(0.0)
    }

    /// The bucket and duration (nanos) of each time a bucket held batches back because the
    /// server asked it to slow down, since the last call.
    pub fn take_throttled(&mut self) -> Vec<(usize, u64)> {
        std::mem::take(&mut self.throttled)
    }

    /// The server reported storage `pressure` for `bucket` in an answer received at `now` (a
    /// PutKv v2 answer; 0 when it carried none): the bucket's next sends wait
    /// `max_throttle x pressure^2` from now, replacing any earlier throttle (latest wins).
    pub fn on_pressure(&mut self, bucket: i32, pressure: f32, now: u64) {
        let Some(b) = usize::try_from(bucket).ok().filter(|b| *b < self.pressure.len()) else { return };
        let p = if pressure.is_nan() { 0.0 } else { pressure.clamp(0.0, 1.0) };
        self.pressure[b] = p;
        self.throttle_until[b] = now.saturating_add(throttle_for(self.p.max_throttle, p));
    }

    /// A successful answer for `bucket` without a pressure (a 1.0 server sends none at 0, a 0.9
    /// server never does): the bucket's current pressure reads 0; a throttle already set runs
    /// out as it was (the answer may predate the one that set it).
    pub fn on_no_pressure(&mut self, bucket: i32) {
        if let Some(p) = usize::try_from(bucket).ok().and_then(|b| self.pressure.get_mut(b)) {
            *p = 0.0;
        }
    }

    /// Close bucket `b`'s hold (if any) at `now`: it lasted until the throttle ended.
    fn end_hold(&mut self, b: usize, now: u64) {
        if let Some(since) = self.held_since[b].take() {
            let end = now.min(self.throttle_until[b]).max(since);
            self.throttled.push((b, end - since));
        }
    }

    /// The partition id requests of this poll go to (`None`: a table without partitions, or
    /// not known yet).
    pub fn partition_id(&self) -> Option<i64> {
        self.partition_id
    }

    /// Whether the lane writes to the table's historical partition (see [`MetadataAnswer`]).
    pub fn historical(&self) -> bool {
        self.historical
    }

    /// The bucket and error code of each attempt that failed and was scheduled for a retry since
    /// the last call.
    pub fn take_retried(&mut self) -> Vec<(usize, i32)> {
        std::mem::take(&mut self.retried)
    }

    /// When the oldest flight (sent, backing off, or done and not yet handed over) was created.
    pub fn oldest_created(&self) -> Option<u64> {
        self.buckets.iter().filter_map(|q| q.front().map(|f| f.created)).min()
    }

    /// No flight left and nothing completed left to hand over (queued batches are the shell's
    /// to check).
    pub fn idle(&self) -> bool {
        self.buckets.iter().all(VecDeque::is_empty) && self.completed.is_empty()
    }

    fn deadline(&self, created: u64) -> u64 {
        created.saturating_add(self.p.delivery_timeout)
    }

    fn find(&self, bucket: i32, id: u64) -> Option<&Flight<B>> {
        self.buckets.get(usize::try_from(bucket).ok()?)?.iter().find(|f| f.id == id)
    }

    /// The batch a part carries (for the request body).
    pub fn batch(&self, part: &Part) -> Option<&B> {
        self.find(part.bucket, part.id).map(|f| &f.batch)
    }

    /// When the attempt `part` is considered lost (the request must be cut then).
    pub fn until(&self, part: &Part) -> Option<u64> {
        match self.find(part.bucket, part.id)?.state {
            State::InFlight { attempt, until } if attempt == part.attempt => Some(until),
            _ => None,
        }
    }

    fn push(&mut self, bucket: usize, batch: B, created: u64, state: State) -> u64 {
        let id = self.next_flight;
        self.next_flight += 1;
        let epoch = self.epoch;
        self.buckets[bucket].push_back(Flight {
            id,
            batch,
            created,
            stamp: None,
            attempts: 0,
            state,
            no_retry: false,
            last_error: None,
            last_error_at: 0,
            stale_attempts: 0,
            epoch,
            sent_to: None,
        });
        id
    }

    /// Fail everything pending with `WRITER_CLOSED` (close timeout, connection close). Later
    /// batches taken from `q` fail the same way on every poll.
    pub fn abort<Q: Queue<Batch = B>>(&mut self, q: &mut Q) {
        self.aborted = true;
        let err = || Error::client(ClientCode::WriterClosed, "the writer was closed before this operation completed");
        for b in 0..self.buckets.len() {
            for f in self.buckets[b].iter_mut() {
                if !matches!(f.state, State::Done(_)) {
                    f.state = done_err(err());
                }
            }
            while let Some(batch) = q.take_front(b) {
                let created = q.created(&batch);
                self.push(b, batch, created, done_err(err()));
            }
        }
    }

    /// Move the flights of bucket `b` whose outcome is known and whose earlier flights all
    /// completed out of the bucket (they no longer count against the in-flight limit).
    fn settle(&mut self, b: usize) {
        while matches!(self.buckets[b].front().map(|f| &f.state), Some(State::Done(_))) {
            let f = self.buckets[b].pop_front().expect("front");
            let State::Done(mut outcome) = f.state else { unreachable!() };
            if outcome.result.is_ok() {
                outcome.acked_by = f.sent_to;
            }
            self.completed.push_back((b, f.batch, outcome));
        }
    }

    /// Hand every flight whose outcome is known and whose earlier flights all completed to
    /// `complete`, bucket by bucket, in send order.
    pub fn pop_completed(&mut self, mut complete: impl FnMut(usize, B, BatchOutcome)) {
        for b in 0..self.buckets.len() {
            self.settle(b);
        }
        while let Some((b, batch, outcome)) = self.completed.pop_front() {
            complete(b, batch, outcome);
        }
    }

    /// The answer to one part of a produce request. Answers to an attempt that is no longer
    /// in flight (lost, aborted) change nothing.
    pub fn on_response(&mut self, part: Part, result: Result<(i64, i64)>, now: u64) {
        let Ok(b) = usize::try_from(part.bucket) else { return };
        if matches!(&result, Err(e) if e.code() == FlussCode::STORAGE_BACKPRESSURE) {
            // Back-pressure at its strongest, also when the attempt is no longer awaited.
            self.on_pressure(part.bucket, 1.0, now);
        }
        let Some(idx) = self.buckets.get(b).and_then(|q| q.iter().position(|f| f.id == part.id)) else { return };
        match self.buckets[b][idx].state {
            State::InFlight { attempt, .. } if attempt == part.attempt => self.on_attempt_result(b, idx, result, now),
            _ => {}
        }
    }

    fn on_attempt_result(&mut self, b: usize, idx: usize, res: Result<(i64, i64)>, now: u64) {
        let deadline = self.deadline(self.buckets[b][idx].created);
        if self.buckets[b][idx].epoch != self.epoch {
            self.on_stale_attempt_result(b, idx, res, now, deadline);
            return;
        }
        let expected = self.buckets[b][idx].stamp.map(|(wid, _)| match self.last_acked[b] {
            Some((w, s)) if w == wid => {
                if s == i32::MAX {
                    0
                } else {
                    s + 1
                }
            }
            _ => 0,
        });
        let idempotent = self.p.idempotent;
        let (retries, backoff_base, dt) = (self.p.retries, self.p.retry_backoff, self.p.delivery_timeout);
        let f = &mut self.buckets[b][idx];
        let mut reset = false;
        match res {
            Ok((base_offset, log_end_offset)) => {
                f.state = State::Done(BatchOutcome { result: Ok(()), base_offset, log_end_offset, acked_by: None })
            }
            Err(e) if e.code() == FlussCode::DUPLICATE_SEQUENCE => {
                f.state = State::Done(BatchOutcome { result: Ok(()), base_offset: -1, log_end_offset: -1, acked_by: None })
            }
            Err(e) => {
                let seq = f.stamp.map(|(_, s)| s);
                // Whether the normal rules would retry it; after a sequence reset it is not
                // retried any more (and then fails with SEQUENCE_RESET below).
                let would_retry =
                    if idempotent && e.code() == FlussCode::OUT_OF_ORDER_SEQUENCE { seq != expected } else { e.is_retriable() };
                let retriable = would_retry && !f.no_retry;
                let expired = now >= deadline;
                if FlussCode::is_invalid_metadata(e.code()) {
                    self.metadata_wanted = true;
                }
                if let (true, Some(fatal)) = (would_retry, &self.fatal) {
                    // The writer cannot send any more (the table or partition is gone, or no
                    // writer id can be had): a batch whose answer would be retried fails with
                    // that error, as the batches backing off did when it was learnt (even after
                    // their sequence reset: the lane's error says what happened, SEQUENCE_RESET
                    // would not).
                    let err = fatal.clone();
                    log::warn!("{} bucket {b}: batch failed: {err} (answered {e})", self.p.table);
                    reset = idempotent && f.stamp.is_some() && !f.no_retry;
                    f.state = done_err(err);
                } else if retriable && f.attempts - f.stale_attempts <= retries && !expired {
                    tracing::debug!(target: "fluss_writer::batch", table = %self.p.table, bucket = b, attempt = f.attempts, code = e.code(), error = %e, "batch attempt failed, retrying");
                    self.retried.push((b, e.code()));
                    f.state = State::Backoff { at: now.saturating_add(backoff(backoff_base, f.attempts)) };
                    f.last_error = Some(e);
                    f.last_error_at = now;
                } else {
                    let err = if f.no_retry && would_retry {
                        sequence_reset_error(b, Some(&e))
                    } else if expired && retriable {
                        flight_timeout_error(dt, f.attempts, Some(&e), now, deadline)
                    } else {
                        e
                    };
                    log::warn!("{} bucket {b}: batch failed: {err}", self.p.table);
                    reset = idempotent && f.stamp.is_some() && !f.no_retry;
                    f.state = done_err(err);
                }
            }
        }
        let f = &self.buckets[b][idx];
        if let (State::Done(o), Some(stamp)) = (&f.state, f.stamp) {
            if o.result.is_ok() {
                self.last_acked[b] = Some(stamp);
            }
        }
        if reset {
            self.reset_sequences(b, idx);
        }
    }

    /// The answer to an attempt sent to a partition id that has since been replaced (the
    /// partition was dropped and recreated). A success was acknowledged by the old partition
    /// (durable then; the drop deleted it later, as the user's retention asked). Any error means
    /// not delivered: the batch goes to the new id with a fresh sequence, without counting the
    /// attempt and without a sequence reset (its old sequence is not part of the new numbering).
    fn on_stale_attempt_result(&mut self, b: usize, idx: usize, res: Result<(i64, i64)>, now: u64, deadline: u64) {
        let dt = self.p.delivery_timeout;
        let f = &mut self.buckets[b][idx];
        match res {
            Ok((base_offset, log_end_offset)) => {
                f.state = State::Done(BatchOutcome { result: Ok(()), base_offset, log_end_offset, acked_by: None })
            }
            Err(e) if e.code() == FlussCode::DUPLICATE_SEQUENCE => {
                f.state = State::Done(BatchOutcome { result: Ok(()), base_offset: -1, log_end_offset: -1, acked_by: None })
            }
            Err(e) if now >= deadline => {
                let err = flight_timeout_error(dt, f.attempts, Some(&e), now, deadline);
                log::warn!("{} bucket {b}: batch failed: {err}", self.p.table);
                f.state = done_err(err);
            }
            Err(e) => {
                tracing::debug!(target: "fluss_writer::batch", table = %self.p.table, bucket = b, code = e.code(), error = %e, "batch sent to the replaced partition id, resending to the new one");
                self.retried.push((b, e.code()));
                f.stale_attempts += 1;
                f.state = State::Backoff { at: now };
                f.last_error = Some(e);
                f.last_error_at = now;
            }
        }
    }

    /// The lane's partition has a new id (dropped and recreated, or dropped and replaced by the
    /// table's historical partition): a new bucket for idempotence on the server, whose first
    /// batch must have sequence 0. Every batch not yet acknowledged is (re)sent there, restamped
    /// in order from 0 when it is sent; answers still to come from the old id are handled by
    /// [`Self::on_stale_attempt_result`].
    fn partition_recreated(&mut self, id: i64, historical: bool) {
        let what = if historical { "partition dropped, its rows go to the historical partition" } else { "partition recreated" };
        log::warn!(
            "{}: {what} (id {:?} -> {id}); batches not yet acknowledged go to the new id with sequences from 0",
            self.p.table,
            self.partition_id
        );
        self.epoch = self.epoch.wrapping_add(1);
        self.next_seq.iter_mut().for_each(|s| *s = 0);
        self.last_acked.iter_mut().for_each(|s| *s = None);
        if let Some(old) = self.partition_id.filter(|old| !self.left_ids.contains(old)) {
            self.left_ids.push(old);
        }
        if self.p.idempotent && self.left_ids.contains(&id) {
            // This writer id wrote there before: a new writer id starts every id at sequence 0
            // (the batches wait for it; they are restamped when resent).
            log::warn!("{}: back to partition id {id}: asking for a new writer id", self.p.table);
            self.writer_id = None;
            self.init = Side::Idle { retry_at: 0 };
            self.left_ids.clear();
        }
        for q in &mut self.buckets {
            for f in q.iter_mut().filter(|f| !matches!(f.state, State::Done(_))) {
                // A sequence reset of the old id stopped retries to avoid gaps there; the new
                // numbering has none.
                f.no_retry = false;
            }
        }
    }

    /// The stamped flight at `idx` of bucket `b` failed for good: ask for a new writer id and
    /// stop retrying the bucket's later flights.
    fn reset_sequences(&mut self, b: usize, idx: usize) {
        log::warn!("{} bucket {b}: resetting the idempotent writer's sequence state", self.p.table);
        self.writer_id = None;
        // An InitWriter already out was asked for before this failure: ask again.
        self.init = Side::Idle { retry_at: 0 };
        for f in self.buckets[b].iter_mut().skip(idx + 1) {
            f.no_retry = true;
            if let State::Backoff { .. } = f.state {
                f.state = done_err(sequence_reset_error(b, f.last_error.as_ref()));
            }
        }
    }

    /// The flight at `idx` of bucket `b` fails now with `err` (not an answer: expiry, fatal).
    fn fail_flight(&mut self, b: usize, idx: usize, err: Error) {
        let f = &mut self.buckets[b][idx];
        // A stamp of a replaced partition id is not part of the current numbering: no gap.
        let reset = self.p.idempotent && f.stamp.is_some() && !f.no_retry && f.epoch == self.epoch;
        log::warn!("{} bucket {b}: batch failed: {err}", self.p.table);
        f.state = done_err(err);
        if reset {
            self.reset_sequences(b, idx);
        }
    }

    /// The answer to the metadata request `token`.
    pub fn on_metadata(&mut self, token: u64, res: Result<MetadataAnswer>, now: u64) {
        if !matches!(self.metadata, Side::InFlight { token: t, .. } if t == token) {
            return;
        }
        let retry_at = match res {
            Ok(MetadataAnswer::Leaders { leaders, partition_id, historical }) => {
                if let Some(id) = partition_id {
                    if self.partition_id.is_some_and(|old| old != id) {
                        self.partition_recreated(id, historical);
                    }
                    self.partition_id = Some(id);
                    self.historical = historical;
                }
                for (bucket, leader) in leaders {
                    if let Some(slot) = usize::try_from(bucket).ok().and_then(|b| self.leaders.get_mut(b)) {
                        *slot = leader;
                    }
                }
                self.metadata_wanted = self.leaders.iter().any(Option::is_none);
                self.fatal = None;
                now.saturating_add(backoff(self.p.retry_backoff, 1))
            }
            Ok(MetadataAnswer::TableGone(e)) => {
                log::error!("{}: {e}", self.p.table);
                self.fatal = Some(e);
                now.saturating_add(FATAL_RECHECK)
            }
            Err(e) if e.is_retriable() => {
                log::warn!("metadata refresh for {} failed, will retry: {e}", self.p.table);
                now.saturating_add(backoff(self.p.retry_backoff, 2))
            }
            Err(e) => {
                log::error!("metadata refresh for {} failed: {e}", self.p.table);
                self.fatal = Some(e);
                now.saturating_add(FATAL_RECHECK)
            }
        };
        self.metadata = Side::Idle { retry_at };
    }

    /// The answer to the InitWriter request `token`.
    pub fn on_writer_id(&mut self, token: u64, res: Result<i64>, now: u64) {
        if !matches!(self.init, Side::InFlight { token: t, .. } if t == token) {
            return;
        }
        let retry_at = match res {
            Ok(id) => {
                log::debug!("writer for {} got writer id {id}", self.p.table);
                self.writer_id = Some(id);
                self.left_ids.clear();
                self.next_seq.iter_mut().for_each(|s| *s = 0);
                self.init_attempts = 0;
                self.fatal = None;
                0
            }
            Err(e) if e.is_retriable() => {
                self.init_attempts += 1;
                if FlussCode::is_invalid_metadata(e.code()) {
                    self.metadata_wanted = true;
                }
                log::warn!("InitWriter for {} failed, will retry: {e}", self.p.table);
                now.saturating_add(backoff(self.p.retry_backoff, self.init_attempts))
            }
            Err(e) => {
                log::error!("InitWriter for {} failed: {e}", self.p.table);
                self.fatal = Some(e);
                now.saturating_add(FATAL_RECHECK)
            }
        };
        self.init = Side::Idle { retry_at };
    }

    /// Advance to `now`: cut lost attempts, fail expired and fatally blocked batches, drain and
    /// stamp new batches from `q`, pick resends, and say what to send and when to come back.
    /// `flush_all`: send open batches without waiting for their linger (closing).
    pub fn poll<Q: Queue<Batch = B>>(&mut self, now: u64, q: &mut Q, flush_all: bool) -> Poll {
        let mut out = Poll::default();
        if self.aborted {
            self.abort(q);
            return out;
        }
        let mut next = None;
        // 1. Lost attempts and side requests.
        for b in 0..self.buckets.len() {
            for idx in 0..self.buckets[b].len() {
                if let State::InFlight { until, .. } = self.buckets[b][idx].state {
                    if now >= until {
                        let e = Error::server(
                            FlussCode::NETWORK_EXCEPTION,
                            "no answer within client.request-timeout (cut at the delivery deadline)",
                        );
                        self.on_attempt_result(b, idx, Err(e), now);
                    }
                }
            }
        }
        if let Side::InFlight { until, .. } = self.metadata {
            if now >= until {
                log::warn!("metadata request for {} timed out, will retry", self.p.table);
                self.metadata = Side::Idle { retry_at: now };
            }
        }
        if let Side::InFlight { until, .. } = self.init {
            if now >= until {
                log::warn!("InitWriter for {} timed out, will retry", self.p.table);
                self.init_attempts += 1;
                self.init = Side::Idle { retry_at: now };
            }
        }
        // 2. Per bucket.
        let mut want_writer_id = false;
        let mut pending = false;
        let mut sends: Vec<(i32, Part)> = Vec::new();
        for b in 0..self.buckets.len() {
            // 2a. Queued batches: fail them when the writer cannot send any more, or once past
            //     their deadline (also behind flights of the bucket: they complete in order).
            while let Some(created) = q.front_created(b) {
                let deadline = self.deadline(created);
                let err = if let Some(f) = &self.fatal {
                    f.clone()
                } else if now >= deadline {
                    delivery_timeout_error(self.p.delivery_timeout, self.throttle_note(b, now).as_ref())
                } else {
                    due(&mut next, deadline);
                    break;
                };
                let Some(batch) = q.take_front(b) else { break };
                let created = q.created(&batch);
                self.push(b, batch, created, done_err(err));
            }
            // 2b. Flights backing off: fail them when the writer cannot send any more (all with
            //     that error, then one sequence reset) or past their deadline.
            if let Some(e) = &self.fatal {
                let epoch = self.epoch;
                let mut first_stamped = None;
                for (idx, f) in self.buckets[b].iter_mut().enumerate() {
                    if matches!(f.state, State::Backoff { .. }) {
                        if f.stamp.is_some() && !f.no_retry && f.epoch == epoch && first_stamped.is_none() {
                            first_stamped = Some(idx);
                        }
                        f.state = done_err(e.clone());
                    }
                }
                if let (true, Some(idx)) = (self.p.idempotent, first_stamped) {
                    self.reset_sequences(b, idx);
                }
            }
            for idx in 0..self.buckets[b].len() {
                let f = &self.buckets[b][idx];
                if !matches!(f.state, State::Backoff { .. }) {
                    continue;
                }
                let deadline = self.deadline(f.created);
                let err = if now >= deadline {
                    flight_timeout_error(self.p.delivery_timeout, f.attempts, f.last_error.as_ref(), f.last_error_at, deadline)
                } else {
                    due(&mut next, deadline);
                    continue;
                };
                self.fail_flight(b, idx, err);
            }
            for f in &self.buckets[b] {
                if let State::InFlight { until, .. } = f.state {
                    due(&mut next, until);
                }
            }
            let leader = self.leaders[b];
            if leader.is_none() {
                self.metadata_wanted = true;
            }
            let can_send = leader.is_some() && self.writer_id.is_some() && self.fatal.is_none();
            let in_flight = self.buckets[b].iter().any(|f| matches!(f.state, State::InFlight { .. }));
            // Attempts still out to a replaced partition id: nothing new is sent before their
            // answers (a batch that must be resent to the new id goes before later batches).
            let stale_in_flight = self.buckets[b].iter().any(|f| f.epoch != self.epoch && matches!(f.state, State::InFlight { .. }));
            // 2c. Retry mode: resend the first flight backing off once nothing is out.
            if let Some(idx) = self.buckets[b].iter().position(|f| matches!(f.state, State::Backoff { .. })) {
                want_writer_id = true;
                let State::Backoff { at } = self.buckets[b][idx].state else { unreachable!() };
                // A resend waits for the bucket's throttle too.
                let at = at.max(self.throttle_until[b]);
                if in_flight {
                    // Waits for the bucket's answers (their `until` is due).
                } else if at > now {
                    due(&mut next, at);
                } else if can_send {
                    let until = self.attempt_until(self.buckets[b][idx].created, now);
                    let epoch = self.epoch;
                    let f = &mut self.buckets[b][idx];
                    if f.epoch != epoch {
                        if let (Some(_), Some(wid)) = (f.stamp, self.writer_id) {
                            let stamp = (wid, self.next_seq[b]);
                            q.restamp(b, &mut f.batch, stamp);
                            f.stamp = Some(stamp);
                            let seq = self.next_seq[b];
                            self.next_seq[b] = if seq == i32::MAX { 0 } else { seq + 1 };
                        }
                        f.epoch = epoch;
                    }
                    f.attempts += 1;
                    f.sent_to = self.partition_id;
                    f.state = State::InFlight { attempt: f.attempts, until };
                    due(&mut next, until);
                    sends.push((leader.expect("can_send"), Part { bucket: b as i32, id: f.id, attempt: f.attempts }));
                }
                // Out of retry mode once no flight backs off any more: new batches may follow
                // the resend (as after any send, up to the in-flight limit).
                if self.buckets[b].iter().any(|f| matches!(f.state, State::Backoff { .. })) {
                    continue;
                }
            }
            // 2d. Normal mode: drain new batches up to the in-flight limit.
            loop {
                // Completed flights make room at once (not only once the shell collected them).
                self.settle(b);
                if !can_send || stale_in_flight || self.buckets[b].len() >= self.p.max_inflight {
                    break;
                }
                if now < self.throttle_until[b] {
                    // Server back-pressure: the bucket's next send waits (its batches keep their
                    // deadlines, see 2a).
                    if q.front_created(b).is_some() {
                        due(&mut next, self.throttle_until[b]);
                    }
                    break;
                }
                let mut batch = match q.take_ready(b, now, self.p.linger, flush_all) {
                    Ok(Some(batch)) => batch,
                    Ok(None) => break,
                    Err(t) => {
                        due(&mut next, t);
                        break;
                    }
                };
                let created = q.created(&batch);
                let stamp = self.writer_id.filter(|_| self.p.idempotent).map(|wid| (wid, self.next_seq[b]));
                if let Err(e) = q.prepare(b, &mut batch, stamp) {
                    self.push(b, batch, created, done_err(Error::internal(format!("encoding a batch failed: {e}"))));
                    continue;
                }
                if stamp.is_some() {
                    let seq = self.next_seq[b];
                    self.next_seq[b] = if seq == i32::MAX { 0 } else { seq + 1 };
                }
                let until = self.attempt_until(created, now);
                let id = self.push(b, batch, created, State::InFlight { attempt: 1, until });
                let f = self.buckets[b].back_mut().expect("pushed");
                f.stamp = stamp;
                f.attempts = 1;
                f.sent_to = self.partition_id;
                due(&mut next, until);
                sends.push((leader.expect("can_send"), Part { bucket: b as i32, id, attempt: 1 }));
            }
            // Throttle accounting: a bucket holds batches back while it is throttled and has a
            // batch queued or awaiting a resend.
            let waiting = q.front_created(b).is_some() || self.buckets[b].iter().any(|f| matches!(f.state, State::Backoff { .. }));
            if waiting && now < self.throttle_until[b] && can_send {
                self.held_since[b].get_or_insert(now);
            } else {
                self.end_hold(b, now);
            }
            if q.front_created(b).is_some() {
                want_writer_id = true;
                pending = true;
            }
            pending |= !self.buckets[b].is_empty();
        }
        // 3. Writer id and metadata requests.
        if self.p.idempotent && self.writer_id.is_none() && want_writer_id {
            match self.init {
                Side::Idle { retry_at } if retry_at <= now => {
                    let token = self.token();
                    let until = now.saturating_add(self.p.request_timeout);
                    self.init = Side::InFlight { token, until };
                    out.writer_id = Some(token);
                    due(&mut next, until);
                }
                Side::Idle { retry_at } => due(&mut next, retry_at),
                Side::InFlight { until, .. } => due(&mut next, until),
            }
        }
        if self.metadata_wanted || self.fatal.is_some() {
            match self.metadata {
                Side::Idle { retry_at } if retry_at <= now => {
                    let token = self.token();
                    let until = now.saturating_add(self.p.request_timeout);
                    self.metadata = Side::InFlight { token, until };
                    out.metadata = Some(token);
                    due(&mut next, until);
                }
                Side::Idle { retry_at } => {
                    // Only worth a timer while something waits for it.
                    if pending {
                        due(&mut next, retry_at)
                    }
                }
                Side::InFlight { until, .. } => due(&mut next, until),
            }
        }
        // 4. Group the sends per leader (in bucket order).
        for (leader, part) in sends {
            match out.sends.iter_mut().find(|(l, _)| *l == leader) {
                Some((_, parts)) => parts.push(part),
                None => out.sends.push((leader, vec![part])),
            }
        }
        out.next = next;
        out
    }

    /// When an attempt sent at `now` of a batch created at `created` is considered lost: one
    /// request timeout, cut at the batch's deadline (at least 1 ms).
    fn attempt_until(&self, created: u64, now: u64) -> u64 {
        let deadline = self.deadline(created);
        let budget = deadline.saturating_sub(now).min(self.p.request_timeout).max(MS);
        now.saturating_add(budget)
    }

    /// For a batch expiring in a throttled bucket: the reason it was not sent.
    fn throttle_note(&self, b: usize, now: u64) -> Option<Error> {
        (now < self.throttle_until[b]).then(|| {
            Error::server(
                FlussCode::STORAGE_BACKPRESSURE,
                format!("held back by server back-pressure (pressure {:.3}, client.writer.kv-backpressure.max-throttle)", self.pressure[b]),
            )
        })
    }

    fn token(&mut self) -> u64 {
        self.next_token += 1;
        self.next_token
    }
}

#[cfg(test)]
mod tests {
    //! The machine under random fault plans: every batch completes exactly once (C1), per
    //! bucket in creation order (C3), and never later than its delivery deadline plus one request
    //! timeout (C7; in fact by 1 ms at most); sequences sent are consecutive from 0 per writer id,
    //! partition id and bucket (C4, also across a partition dropped and recreated under a new id); the machine asks to be woken whenever anything is pending; and a bucket that
    //! can send, has room and is not retrying never leaves a ready batch behind.

    use std::collections::{HashMap, VecDeque};

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug)]
    struct TestBatch {
        id: u64,
        created: u64,
        /// The (writer id, sequence) its bytes carry.
        stamp: Option<(i64, i32)>,
    }

    /// A model accumulator: one open batch and a queue of closed ones per bucket.
    struct Model {
        open: Vec<Option<TestBatch>>,
        closed: Vec<VecDeque<TestBatch>>,
        fail_next_prepare: bool,
    }

    impl Queue for Model {
        type Batch = TestBatch;

        fn front_created(&mut self, bucket: usize) -> Option<u64> {
            self.closed[bucket].front().or(self.open[bucket].as_ref()).map(|b| b.created)
        }

        fn take_ready(&mut self, bucket: usize, now: u64, linger: u64, flush_all: bool) -> std::result::Result<Option<TestBatch>, u64> {
            if let Some(b) = self.closed[bucket].pop_front() {
                return Ok(Some(b));
            }
            match &self.open[bucket] {
                None => Ok(None),
                Some(b) if flush_all || now >= b.created + linger => Ok(self.open[bucket].take()),
                Some(b) => Err(b.created + linger),
            }
        }

        fn take_front(&mut self, bucket: usize) -> Option<TestBatch> {
            self.closed[bucket].pop_front().or_else(|| self.open[bucket].take())
        }

        fn created(&self, batch: &TestBatch) -> u64 {
            batch.created
        }

        fn prepare(&mut self, _bucket: usize, batch: &mut TestBatch, stamp: Option<(i64, i32)>) -> Result<()> {
            if std::mem::take(&mut self.fail_next_prepare) {
                return Err(Error::internal("injected encoding failure"));
            }
            batch.stamp = stamp;
            Ok(())
        }

        fn restamp(&mut self, _bucket: usize, batch: &mut TestBatch, stamp: (i64, i32)) {
            assert!(batch.stamp.is_some(), "only a stamped batch is restamped");
            batch.stamp = Some(stamp);
        }
    }

    /// Error classes a produce answer can carry.
    const CODES: [i32; 10] = [
        FlussCode::NETWORK_EXCEPTION,
        FlussCode::NOT_LEADER_OR_FOLLOWER,
        FlussCode::UNKNOWN_TABLE_OR_BUCKET,
        FlussCode::REQUEST_TIME_OUT,
        FlussCode::OUT_OF_ORDER_SEQUENCE,
        FlussCode::DUPLICATE_SEQUENCE,
        FlussCode::RECORD_TOO_LARGE,
        FlussCode::UNKNOWN_WRITER_ID,
        FlussCode::INVALID_TABLE,
        FlussCode::STORAGE_BACKPRESSURE,
    ];

    #[derive(Clone, Debug)]
    enum Op {
        /// Add a record to the bucket: opens a batch, or (`new_batch`) closes the open one first.
        Append {
            bucket: usize,
            new_batch: bool,
        },
        Flush {
            bucket: usize,
        },
        /// Advance the clock by `ms`, but never past the time the machine asked to be woken.
        Advance {
            ms: u64,
        },
        /// Answer outstanding request `req`: `whole` fails the whole request with a network
        /// error; otherwise part i gets `outcomes[i]` (0 = success, k = CODES[k-1]).
        Respond {
            req: usize,
            whole: bool,
            outcomes: Vec<usize>,
        },
        /// The answer to outstanding request `req` never comes.
        Lose {
            req: usize,
        },
        /// 0: every leader known, 1: leaders of `mask` unknown, 2: table gone, 3: retriable
        /// error, 4: fatal error, 5: lost.
        Metadata {
            kind: u8,
            mask: u8,
        },
        /// 0: a new writer id, 1: retriable error, 2: fatal error, 3: lost.
        WriterId {
            kind: u8,
        },
        FailNextPrepare,
        Abort,
        /// The partition is dropped and recreated under a new id: requests already out were
        /// sent to the old id; metadata answers from now on name the new id.
        Recreate,
        /// An answer for `bucket` reported storage pressure `permille` / 1000 (PutKv v2).
        Pressure {
            bucket: usize,
            permille: u16,
        },
    }

    fn op(buckets: usize) -> impl Strategy<Value = Op> {
        prop_oneof![
            600 => (0..buckets, any::<bool>()).prop_map(|(bucket, new_batch)| Op::Append { bucket, new_batch }),
            100 => (0..buckets).prop_map(|bucket| Op::Flush { bucket }),
            600 => prop_oneof![0u64..20, 0u64..2_000].prop_map(|ms| Op::Advance { ms }),
            600 => (0usize..8, prop::bool::weighted(0.15), prop::collection::vec(prop_oneof![3 => Just(0usize), 2 => 1usize..=CODES.len()], 1..4))
                .prop_map(|(req, whole, outcomes)| Op::Respond { req, whole, outcomes }),
            100 => (0usize..8).prop_map(|req| Op::Lose { req }),
            // Mostly good answers; each failure kind now and then.
            200 => (prop_oneof![6 => Just(0u8), 4 => 1u8..6], any::<u8>()).prop_map(|(kind, mask)| Op::Metadata { kind, mask }),
            200 => prop_oneof![4 => Just(0u8), 3 => 1u8..4].prop_map(|kind| Op::WriterId { kind }),
            50 => Just(Op::FailNextPrepare),
            3 => Just(Op::Abort),
            20 => Just(Op::Recreate),
            100 => (0..buckets, prop_oneof![Just(0u16), 0u16..=1000]).prop_map(|(bucket, permille)| Op::Pressure { bucket, permille }),
        ]
    }

    fn params() -> impl Strategy<Value = Params> {
        (50u64..3_000, 10u64..1_000, 0u64..50, prop_oneof![0u32..4, Just(u32::MAX)], 1u64..200, 1usize..=5, any::<bool>()).prop_map(
            |(dt, rt, linger, retries, backoff, inflight, idempotent)| Params {
                table: "db.t".into(),
                delivery_timeout: dt * MS,
                request_timeout: rt * MS,
                linger: linger * MS,
                retries,
                retry_backoff: backoff * MS,
                max_inflight: if idempotent { inflight } else { 1 },
                idempotent,
                max_throttle: 300 * MS,
            },
        )
    }

    struct Harness {
        p: Params,
        m: Machine<TestBatch>,
        q: Model,
        now: u64,
        next: Option<u64>,
        next_batch: u64,
        next_writer_id: i64,
        /// id -> (bucket, created)
        batches: HashMap<u64, (usize, u64)>,
        completed: HashMap<u64, BatchOutcome>,
        last_completed: Vec<Option<u64>>,
        requests: Vec<Vec<Part>>,
        metadata: Option<u64>,
        writer_id: Option<u64>,
        /// The partition's id on the server (changed by [`Op::Recreate`]).
        server_pid: i64,
        /// (writer id, partition id, bucket) -> distinct sequences in the order they were first
        /// sent there: what the server sees, which must be 0, 1, 2, ...
        sent: HashMap<(i64, i64, usize), Vec<i32>>,
    }

    impl Harness {
        fn new(p: Params, buckets: usize, leaders_known: bool) -> Harness {
            let leaders = (0..buckets).map(|b| leaders_known.then_some(b as i32 % 2)).collect();
            Harness {
                m: Machine::new(p.clone(), leaders, Some(7)),
                p,
                q: Model {
                    open: (0..buckets).map(|_| None).collect(),
                    closed: (0..buckets).map(|_| VecDeque::new()).collect(),
                    fail_next_prepare: false,
                },
                now: 1_000 * MS,
                next: None,
                next_batch: 0,
                next_writer_id: 100,
                batches: HashMap::new(),
                completed: HashMap::new(),
                last_completed: vec![None; buckets],
                requests: Vec::new(),
                metadata: None,
                writer_id: None,
                server_pid: 7,
                sent: HashMap::new(),
            }
        }

        /// The partition id requests go to now (what the shell sends them to).
        fn send_pid(&self) -> i64 {
            self.m.partition_id().unwrap_or(-1)
        }

        fn new_batch(&mut self, bucket: usize) -> TestBatch {
            let id = self.next_batch;
            self.next_batch += 1;
            self.batches.insert(id, (bucket, self.now));
            TestBatch { id, created: self.now, stamp: None }
        }

        fn queued(&self) -> bool {
            self.q.open.iter().any(Option::is_some) || self.q.closed.iter().any(|c| !c.is_empty())
        }

        fn poll(&mut self) {
            let poll = self.m.poll(self.now, &mut self.q, false);
            // Split as the sender does: a new request when the bucket already has a part in it.
            let pid = self.send_pid();
            for (_, parts) in poll.sends {
                let mut group: Vec<Part> = Vec::new();
                for p in parts {
                    if let Some((wid, seq)) = self.m.batch(&p).and_then(|b| b.stamp) {
                        let seqs = self.sent.entry((wid, pid, p.bucket as usize)).or_default();
                        if !seqs.contains(&seq) {
                            seqs.push(seq);
                        }
                    }
                    if group.iter().any(|x| x.bucket == p.bucket) {
                        self.requests.push(std::mem::take(&mut group));
                    }
                    group.push(p);
                }
                self.requests.push(group);
            }
            if let Some(t) = poll.metadata {
                self.metadata = Some(t);
            }
            if let Some(t) = poll.writer_id {
                self.writer_id = Some(t);
            }
            self.next = poll.next;
            // Progress: a bucket that can send and has room left no ready batch behind.
            let m = &self.m;
            for b in 0..self.q.open.len() {
                let fl = &m.buckets[b];
                let can_send = m.leaders[b].is_some() && m.writer_id.is_some() && m.fatal.is_none() && !m.aborted;
                let retrying = fl.iter().any(|f| matches!(f.state, State::Backoff { .. }));
                let stale = fl.iter().any(|f| f.epoch != m.epoch && matches!(f.state, State::InFlight { .. }));
                let throttled = self.now < m.throttle_until[b];
                let ready = !self.q.closed[b].is_empty() || self.q.open[b].as_ref().is_some_and(|o| self.now >= o.created + self.p.linger);
                // Flights done at the front of the bucket have completed (in order).
                let open_flights = fl.len() - fl.iter().take_while(|f| matches!(f.state, State::Done(_))).count();
                assert!(
                    !can_send || retrying || stale || throttled || open_flights >= self.p.max_inflight || !ready,
                    "bucket {b}: a ready batch was left unsent with room for it: flights {:?}, {} closed, open {:?}",
                    fl.iter().map(|f| (f.id, &f.state)).collect::<Vec<_>>(),
                    self.q.closed[b].len(),
                    self.q.open[b]
                );
            }
            self.collect();
            if !self.m.idle() || self.queued() {
                assert!(self.next.is_some(), "something is pending, so the machine must ask to be woken");
            }
        }

        fn collect(&mut self) {
            let mut done = Vec::new();
            self.m.pop_completed(|bucket, b, outcome| done.push((bucket, b, outcome)));
            for (bucket, b, outcome) in done {
                let (bk, created) = self.batches[&b.id];
                assert_eq!(bk, bucket, "batch {} completed in the wrong bucket", b.id);
                assert!(self.completed.insert(b.id, outcome).is_none(), "batch {} completed twice", b.id);
                if let Some(last) = self.last_completed[bucket] {
                    assert!(b.id > last, "bucket {bucket}: batch {} completed after {last}", b.id);
                }
                self.last_completed[bucket] = Some(b.id);
                let limit = created + self.p.delivery_timeout + self.p.request_timeout;
                assert!(
                    self.now <= limit,
                    "batch {} completed at {} ms after creation (delivery {} ms, request {} ms)",
                    b.id,
                    (self.now - created) / MS,
                    self.p.delivery_timeout / MS,
                    self.p.request_timeout / MS
                );
                // The tighter bound the machine is built for: an attempt ends 1 ms past the
                // deadline at the latest.
                assert!(
                    self.now <= created + self.p.delivery_timeout + MS,
                    "batch {} late by {} ns",
                    b.id,
                    self.now - created - self.p.delivery_timeout
                );
            }
        }

        fn apply(&mut self, op: Op) {
            match op {
                Op::Append { bucket, new_batch } => {
                    if self.q.open[bucket].is_some() && new_batch {
                        let b = self.q.open[bucket].take().expect("open");
                        self.q.closed[bucket].push_back(b);
                    }
                    if self.q.open[bucket].is_none() {
                        let b = self.new_batch(bucket);
                        self.q.open[bucket] = Some(b);
                    }
                }
                Op::Flush { bucket } => {
                    if let Some(b) = self.q.open[bucket].take() {
                        self.q.closed[bucket].push_back(b);
                    }
                }
                Op::Advance { ms } => {
                    let to = self.now + ms * MS;
                    self.now = self.next.map_or(to, |n| n.min(to)).max(self.now);
                }
                Op::Respond { req, whole, outcomes } => {
                    if self.requests.is_empty() {
                        return;
                    }
                    let parts = self.requests.remove(req % self.requests.len());
                    for (i, part) in parts.into_iter().enumerate() {
                        let res = if whole {
                            Err(Error::server(FlussCode::NETWORK_EXCEPTION, "connection lost"))
                        } else {
                            match outcomes[i % outcomes.len()] {
                                0 => Ok((i as i64 * 10, -1)),
                                k => Err(Error::server(CODES[k - 1], "injected")),
                            }
                        };
                        self.m.on_response(part, res, self.now);
                    }
                }
                Op::Lose { req } => {
                    if !self.requests.is_empty() {
                        self.requests.remove(req % self.requests.len());
                    }
                }
                Op::Metadata { kind, mask } => {
                    let Some(token) = self.metadata.take() else { return };
                    let n = self.q.open.len();
                    let res = match kind {
                        0 => Ok(MetadataAnswer::Leaders {
                            leaders: (0..n).map(|b| (b as i32, Some(b as i32 % 2))).collect(),
                            partition_id: Some(self.server_pid),
                            historical: false,
                        }),
                        1 => Ok(MetadataAnswer::Leaders {
                            leaders: (0..n)
                                .map(|b| (b as i32, if (mask >> (b % 8)) & 1 == 0 { Some(b as i32 % 2) } else { None }))
                                .collect(),
                            partition_id: Some(self.server_pid),
                            historical: false,
                        }),
                        2 => Ok(MetadataAnswer::TableGone(Error::server(FlussCode::TABLE_NOT_EXIST, "dropped"))),
                        3 => Err(Error::server(FlussCode::NETWORK_EXCEPTION, "metadata lost")),
                        4 => Err(Error::server(FlussCode::INVALID_TABLE, "not authorized")),
                        _ => return,
                    };
                    self.m.on_metadata(token, res, self.now);
                }
                Op::WriterId { kind } => {
                    let Some(token) = self.writer_id.take() else { return };
                    let res = match kind {
                        0 => {
                            self.next_writer_id += 1;
                            Ok(self.next_writer_id)
                        }
                        1 => Err(Error::server(FlussCode::NETWORK_EXCEPTION, "lost")),
                        2 => Err(Error::server(FlussCode::TABLE_NOT_EXIST, "dropped")),
                        _ => return,
                    };
                    self.m.on_writer_id(token, res, self.now);
                }
                Op::FailNextPrepare => self.q.fail_next_prepare = true,
                Op::Abort => self.m.abort(&mut self.q),
                Op::Recreate => self.server_pid += 1,
                Op::Pressure { bucket, permille } => self.m.on_pressure(bucket as i32, f32::from(permille) / 1000.0, self.now),
            }
        }

        /// No more writes or answers: only the clock runs, as fast as the machine asks.
        fn run_out(&mut self) {
            self.requests.clear();
            self.metadata = None;
            self.writer_id = None;
            for _ in 0..100_000 {
                self.poll();
                self.requests.clear();
                self.metadata = None;
                self.writer_id = None;
                if self.m.idle() && !self.queued() {
                    break;
                }
                self.now = self.next.expect("pending").max(self.now);
            }
            assert!(self.m.idle() && !self.queued(), "batches left after the clock ran out");
        }

        fn check_end(&self) {
            for id in self.batches.keys() {
                assert!(self.completed.contains_key(id), "batch {id} never completed");
            }
            for ((wid, pid, bucket), seqs) in &self.sent {
                let want: Vec<i32> = (0..seqs.len() as i32).collect();
                assert_eq!(seqs, &want, "writer {wid} partition {pid} bucket {bucket}: sequences sent not consecutive from 0");
            }
        }
    }

    fn fixed(idempotent: bool) -> Params {
        Params {
            table: "db.t".into(),
            delivery_timeout: 3_000 * MS,
            request_timeout: 2_000 * MS,
            linger: 0,
            retries: u32::MAX,
            retry_backoff: 100 * MS,
            max_inflight: if idempotent { 5 } else { 1 },
            idempotent,
            max_throttle: 3_000 * MS,
        }
    }

    fn code(o: &BatchOutcome) -> i32 {
        o.result.as_ref().err().map_or(0, Error::code)
    }

    /// Until a batch completes: every metadata request is answered "no leader", and nothing may
    /// be sent; 10 s pass between turns. Returns how many metadata requests there were.
    fn run_without_leaders(h: &mut Harness) -> usize {
        let mut refreshes = 0;
        loop {
            h.poll();
            if h.metadata.is_some() {
                refreshes += 1;
                h.apply(Op::Metadata { kind: 1, mask: 0xff });
                h.poll();
            }
            assert!(h.requests.is_empty(), "nothing is sent without a leader");
            if !h.completed.is_empty() {
                return refreshes;
            }
            h.apply(Op::Advance { ms: 10_000 });
        }
    }

    /// Metadata keeps reporting no leader for the bucket: the batch waits for one, metadata is
    /// asked for again and again, and at the deadline the batch fails with DELIVERY_TIMEOUT.
    #[test]
    fn a_leader_that_stays_unknown_expires_the_batch_at_its_deadline() {
        let mut h = Harness::new(fixed(false), 1, false);
        h.apply(Op::Append { bucket: 0, new_batch: false });
        let created = h.now;
        let refreshes = run_without_leaders(&mut h);
        assert!(refreshes >= 5, "metadata refreshed {refreshes} times");
        let o = &h.completed[&0];
        assert_eq!(code(o), ClientCode::DeliveryTimeout as i32);
        assert!(h.now <= created + 3_000 * MS);
    }

    /// A batch answered NOT_LEADER_OR_FOLLOWER whose bucket then has no leader is not resent; its
    /// DELIVERY_TIMEOUT says how often it was sent and how long before the deadline its last
    /// error came (so a batch that stopped being resent is told from one resent until the end).
    #[test]
    fn an_expired_batch_names_its_attempts_and_when_its_last_error_came() {
        let mut h = Harness::new(fixed(false), 1, true);
        h.apply(Op::Append { bucket: 0, new_batch: true });
        h.poll();
        assert_eq!(h.requests.len(), 1);
        let n = CODES.iter().position(|&c| c == FlussCode::NOT_LEADER_OR_FOLLOWER).unwrap() + 1;
        h.apply(Op::Respond { req: 0, whole: false, outcomes: vec![n] });
        run_without_leaders(&mut h);
        let o = &h.completed[&0];
        assert_eq!(code(o), ClientCode::DeliveryTimeout as i32);
        let message = o.result.as_ref().unwrap_err().message().to_string();
        assert!(message.contains("after 1 attempt; last error ("), "{message}");
        assert!(message.contains("before the deadline): NOT_LEADER_OR_FOLLOWER"), "{message}");
    }

    /// The scenario: the first send is answered UNKNOWN_TABLE_OR_BUCKET, the metadata
    /// refresh finds the table gone. The batch awaiting its resend and the ones queued behind it
    /// fail at once with TABLE_NOT_EXIST, in order.
    #[test]
    fn a_dropped_table_fails_backing_off_and_queued_batches_at_once() {
        for idempotent in [false, true] {
            let mut h = Harness::new(fixed(idempotent), 1, true);
            h.poll();
            if idempotent {
                h.apply(Op::Append { bucket: 0, new_batch: false });
                h.poll();
                h.apply(Op::WriterId { kind: 0 });
            }
            let first = 0;
            h.apply(Op::Append { bucket: 0, new_batch: true });
            h.poll();
            assert!(!h.requests.is_empty());
            while !h.requests.is_empty() {
                let n = CODES.iter().position(|&c| c == FlussCode::UNKNOWN_TABLE_OR_BUCKET).unwrap() + 1;
                h.apply(Op::Respond { req: 0, whole: false, outcomes: vec![n] });
                h.poll();
            }
            h.apply(Op::Append { bucket: 0, new_batch: true });
            h.apply(Op::Append { bucket: 0, new_batch: true });
            h.poll();
            assert!(h.metadata.is_some(), "UNKNOWN_TABLE_OR_BUCKET asks for metadata");
            h.apply(Op::Metadata { kind: 2, mask: 0 });
            h.poll();
            assert_eq!(h.completed.len() as u64, h.next_batch, "every batch failed at once");
            for id in first..h.next_batch {
                assert_eq!(code(&h.completed[&id]), FlussCode::TABLE_NOT_EXIST, "batch {id}");
            }
            h.run_out();
            h.check_end();
        }
    }

    /// Sends `n` batches of bucket `b` one by one and answers each with success; returns when
    /// nothing is out.
    fn send_and_answer(h: &mut Harness, b: usize) -> Part {
        h.apply(Op::Append { bucket: b, new_batch: true });
        h.apply(Op::Flush { bucket: b });
        h.poll();
        let parts: Vec<Part> = h.requests.drain(..).flatten().collect();
        assert_eq!(parts.len(), 1, "one send of bucket {b}");
        parts[0]
    }

    /// A PutKv answer with pressure 0.5 (max-throttle 3 s): bucket 0's next send waits
    /// 3 s x 0.25 = 750 ms from the answer, bucket 1 is not delayed, the wait is reported once
    /// with its length, and the batch then goes out in order; a pressure of 0 lifts a throttle at
    /// once, an answer without a pressure does not.
    #[test]
    fn pressure_delays_only_the_next_send_of_its_bucket_by_max_throttle_times_p_squared() {
        let mut h = Harness::new(fixed(false), 2, true);
        let first = send_and_answer(&mut h, 0);
        h.m.on_pressure(0, 0.5, h.now);
        h.m.on_response(first, Ok((0, 1)), h.now);
        let answered = h.now;
        h.poll();
        assert_eq!(h.m.pressure(0), 0.5);
        h.apply(Op::Append { bucket: 0, new_batch: true });
        h.apply(Op::Append { bucket: 1, new_batch: true });
        h.apply(Op::Flush { bucket: 0 });
        h.apply(Op::Flush { bucket: 1 });
        h.poll();
        let sent: Vec<i32> = h.requests.drain(..).flatten().map(|p| p.bucket).collect();
        assert_eq!(sent, vec![1], "only bucket 1 sends while bucket 0 is throttled");
        assert_eq!(h.next, Some(answered + 750 * MS).min(h.next), "the machine asks to be woken when the throttle ends");
        h.now = answered + 749 * MS;
        h.poll();
        assert!(h.requests.is_empty(), "still throttled 1 ms before the end");
        h.now = answered + 750 * MS;
        h.poll();
        let sent: Vec<Part> = h.requests.drain(..).flatten().collect();
        assert_eq!(sent.iter().map(|p| p.bucket).collect::<Vec<_>>(), vec![0], "bucket 0 sends when its throttle ends");
        let held = h.m.take_throttled();
        assert_eq!(held.len(), 1, "{held:?}");
        assert_eq!(held[0].0, 0);
        assert!(held[0].1 > 700 * MS && held[0].1 <= 750 * MS, "{held:?}");
        // Pressure 0 lifts the throttle at once (bucket 0's batch answered first: one in flight).
        h.m.on_response(sent[0], Ok((1, 2)), h.now);
        h.m.on_pressure(0, 0.9, h.now);
        h.m.on_pressure(0, 0.0, h.now);
        h.apply(Op::Append { bucket: 0, new_batch: true });
        h.apply(Op::Flush { bucket: 0 });
        h.poll();
        let sent: Vec<Part> = h.requests.drain(..).flatten().collect();
        assert_eq!(sent.iter().map(|p| p.bucket).collect::<Vec<_>>(), vec![0]);
        assert_eq!(h.m.pressure(0), 0.0);
        // An answer without a pressure reads as 0 but lets a throttle set meanwhile run out.
        h.m.on_pressure(0, 0.5, h.now);
        h.m.on_no_pressure(0);
        h.m.on_response(sent[0], Ok((2, 3)), h.now);
        assert_eq!(h.m.pressure(0), 0.0);
        h.apply(Op::Append { bucket: 0, new_batch: true });
        h.apply(Op::Flush { bucket: 0 });
        h.poll();
        assert!(h.requests.is_empty(), "the 750 ms throttle still runs");
    }

    /// The throttle never stretches a delivery deadline: with a max-throttle longer than the
    /// delivery timeout, a batch queued behind STORAGE_BACKPRESSURE (pressure 1) fails with
    /// DELIVERY_TIMEOUT at its deadline, naming the back-pressure; the 72 batch itself is resent
    /// only after the throttle or fails at its own deadline, in order.
    #[test]
    fn a_throttled_bucket_fails_its_batches_at_their_deadline() {
        let mut p = fixed(true);
        p.max_throttle = 60_000 * MS;
        let mut h = Harness::new(p, 1, true);
        h.poll();
        h.apply(Op::Append { bucket: 0, new_batch: false });
        h.poll();
        h.apply(Op::WriterId { kind: 0 });
        h.apply(Op::Flush { bucket: 0 });
        h.poll();
        let parts: Vec<Part> = h.requests.drain(..).flatten().collect();
        assert_eq!(parts.len(), 1);
        h.m.on_response(parts[0], Err(Error::server(FlussCode::STORAGE_BACKPRESSURE, "flush budget exceeded")), h.now);
        assert_eq!(h.m.pressure(0), 1.0, "72 is pressure 1");
        h.apply(Op::Append { bucket: 0, new_batch: true });
        h.apply(Op::Flush { bucket: 0 });
        let start = h.now;
        while h.completed.len() < 2 {
            h.poll();
            assert!(h.requests.is_empty(), "nothing is sent while throttled");
            if h.completed.len() < 2 {
                h.now = h
                    .next
                    .unwrap_or_else(|| panic!("pending: {:?}", h.m.buckets[0].iter().map(|f| &f.state).collect::<Vec<_>>()))
                    .max(h.now);
            }
        }
        for id in [0, 1] {
            let o = &h.completed[&id];
            assert_eq!(code(o), ClientCode::DeliveryTimeout as i32, "batch {id}");
        }
        let e = h.completed[&1].result.as_ref().unwrap_err().to_string();
        assert!(e.contains("back-pressure"), "{e}");
        assert!(h.now <= start + 3_000 * MS, "failed at the deadline, not after the throttle");
        h.check_end();
    }

    /// Retries follow the one error-code table: 1.0's DISK_WRITE_LOCKED (70),
    /// STORAGE_BACKPRESSURE (72) and HISTORICAL_PARTITION_THROTTLED (73) are resent after the
    /// backoff (72, pressure 1, after the whole max-throttle of 3 s); NOT_COORDINATOR_LEADER (65) and a code the table lacks (a newer server's, 99)
    /// fail the batch at once, the unknown one with its number in the message.
    #[test]
    fn the_code_table_decides_which_server_answers_are_retried() {
        for (answer, retried) in [(70, true), (72, true), (73, true), (65, false), (99, false)] {
            let mut p = fixed(false);
            p.delivery_timeout = 10_000 * MS;
            let mut h = Harness::new(p, 1, true);
            h.apply(Op::Append { bucket: 0, new_batch: false });
            h.apply(Op::Flush { bucket: 0 });
            h.poll();
            let parts: Vec<Part> = h.requests.drain(..).flatten().collect();
            assert_eq!(parts.len(), 1, "code {answer}");
            h.m.on_response(parts[0], Err(Error::server(answer, "")), h.now);
            h.poll();
            if retried {
                assert!(h.completed.is_empty(), "code {answer} is retriable: the batch waits for its resend");
                h.apply(Op::Advance { ms: 200 });
                h.poll();
                if answer == FlussCode::STORAGE_BACKPRESSURE {
                    assert!(h.requests.is_empty(), "72 = pressure 1: the resend waits the max throttle");
                    h.now += 3_000 * MS;
                    h.poll();
                }
                assert_eq!(h.requests.len(), 1, "code {answer}: resent after the backoff");
            } else {
                let o = &h.completed[&0];
                assert_eq!(code(o), answer);
                let e = o.result.as_ref().unwrap_err();
                assert!(!e.is_retriable());
                assert!(e.to_string().contains(&answer.to_string()), "{e}");
            }
        }
    }

    /// C4 kept: a stamped batch failing for good resets the sequence state; the next batch goes
    /// out under a new writer id from sequence 0; a later in-flight batch that would need a
    /// retry fails with SEQUENCE_RESET, one the server accepted succeeds.
    #[test]
    fn a_final_failure_of_a_stamped_batch_resets_sequences() {
        let mut h = Harness::new(fixed(true), 1, true);
        h.apply(Op::Append { bucket: 0, new_batch: false });
        h.poll();
        h.apply(Op::WriterId { kind: 0 });
        for _ in 0..2 {
            h.apply(Op::Append { bucket: 0, new_batch: true });
        }
        h.apply(Op::Flush { bucket: 0 });
        h.poll();
        let parts: Vec<Part> = h.requests.drain(..).flatten().collect();
        assert_eq!(parts.len(), 3);
        let fatal = Error::server(FlussCode::RECORD_TOO_LARGE, "too large");
        h.m.on_response(parts[0], Err(fatal), h.now);
        h.m.on_response(parts[1], Err(Error::server(FlussCode::NOT_LEADER_OR_FOLLOWER, "moved")), h.now);
        h.m.on_response(parts[2], Ok((7, -1)), h.now);
        h.poll();
        assert_eq!(code(&h.completed[&0]), FlussCode::RECORD_TOO_LARGE);
        assert_eq!(code(&h.completed[&1]), ClientCode::SequenceReset as i32);
        assert!(h.completed[&2].result.is_ok());
        h.apply(Op::Append { bucket: 0, new_batch: false });
        h.poll();
        assert!(h.requests.is_empty(), "nothing is stamped before the new writer id");
        assert!(h.writer_id.is_some(), "a new writer id is asked for");
        h.apply(Op::WriterId { kind: 0 });
        h.poll();
        assert_eq!(h.requests.len(), 1);
        assert_eq!(h.sent[&(102, 7, 0)], vec![0], "the new writer id starts at sequence 0");
        assert_eq!(h.sent[&(101, 7, 0)], vec![0, 1, 2]);
    }

    /// A lane that goes back to a partition id it wrote to before (it left the historical
    /// partition for a recreated one, which was dropped again) asks for a new writer id: the
    /// server still holds the old writer's sequences there, and sequence 0 again would be taken
    /// for a duplicate. Moving to the historical partition marks the lane's requests.
    #[test]
    fn a_lane_back_at_a_partition_id_it_left_gets_a_new_writer_id() {
        let mut h = Harness::new(fixed(true), 1, true);
        h.apply(Op::Append { bucket: 0, new_batch: false });
        h.poll();
        h.apply(Op::WriterId { kind: 0 });
        // A new batch, flushed; every send answered with success.
        let answer = |h: &mut Harness| {
            h.apply(Op::Append { bucket: 0, new_batch: true });
            h.apply(Op::Flush { bucket: 0 });
            h.poll();
            for part in h.requests.drain(..).flatten().collect::<Vec<_>>() {
                h.m.on_response(part, Ok((0, -1)), h.now);
            }
            h.poll();
        };
        answer(&mut h);
        assert_eq!(h.sent[&(101, 7, 0)], vec![0, 1]);
        let moved = |h: &mut Harness, pid: i64, historical: bool| {
            let token = h.m.token();
            h.m.metadata = Side::InFlight { token, until: u64::MAX };
            h.m.on_metadata(token, Ok(MetadataAnswer::Leaders { leaders: vec![(0, Some(0))], partition_id: Some(pid), historical }), h.now);
            h.server_pid = pid;
        };
        moved(&mut h, 8, true);
        assert!(h.m.historical());
        answer(&mut h);
        assert_eq!(h.sent[&(101, 8, 0)], vec![0], "the historical partition from sequence 0");
        moved(&mut h, 7, false);
        assert!(!h.m.historical());
        assert_eq!(h.m.writer_id, None, "back at partition 7: a new writer id first");
        h.apply(Op::Append { bucket: 0, new_batch: true });
        h.apply(Op::Flush { bucket: 0 });
        h.poll();
        assert!(h.requests.is_empty(), "nothing goes out before the new writer id");
        h.apply(Op::WriterId { kind: 0 });
        h.poll();
        let sent: Vec<Part> = h.requests.drain(..).flatten().collect();
        assert_eq!(sent.len(), 1);
        assert_eq!(h.sent[&(101, 7, 0)], vec![0, 1], "nothing more under the old writer id at partition 7");
        assert_eq!(h.sent[&(102, 7, 0)], vec![0]);
        h.m.on_response(sent[0], Ok((1, -1)), h.now);
        h.run_out();
        h.check_end();
    }

    /// Issue 28 item 9: the partition is dropped and recreated (new id) while batches are in
    /// flight and backing off. Answers from the old id: a success stays a success (acknowledged
    /// before the drop); an error means not delivered, does not count against `retries` and does
    /// not reset the writer. Nothing new goes out while attempts to the old id are pending;
    /// then every batch not yet acknowledged goes to the new id, in order, restamped from
    /// sequence 0, and new batches follow. Every batch succeeds under the same writer id.
    #[test]
    fn a_recreated_partition_restarts_sequences_and_resends_unacknowledged_batches() {
        let mut p = fixed(true);
        p.retries = 1;
        let mut h = Harness::new(p, 1, true);
        h.apply(Op::Append { bucket: 0, new_batch: false });
        h.poll();
        h.apply(Op::WriterId { kind: 0 });
        for _ in 0..3 {
            h.apply(Op::Append { bucket: 0, new_batch: true });
        }
        h.apply(Op::Flush { bucket: 0 });
        h.poll();
        let parts: Vec<Part> = h.requests.drain(..).flatten().collect();
        assert_eq!(parts.len(), 4);
        assert_eq!(h.sent[&(101, 7, 0)], vec![0, 1, 2, 3]);
        let gone = || Err(Error::server(FlussCode::UNKNOWN_TABLE_OR_BUCKET, "partition dropped"));
        // Batch 0 was acknowledged before the drop; batch 1's answer says the partition is gone.
        h.m.on_response(parts[0], Ok((0, -1)), h.now);
        h.apply(Op::Recreate);
        h.m.on_response(parts[1], gone(), h.now);
        h.poll();
        assert!(h.metadata.is_some(), "UNKNOWN_TABLE_OR_BUCKET asks for metadata");
        h.apply(Op::Metadata { kind: 0, mask: 0 });
        assert_eq!(h.m.partition_id(), Some(8));
        h.apply(Op::Append { bucket: 0, new_batch: false });
        h.apply(Op::Flush { bucket: 0 });
        h.apply(Op::Advance { ms: 150 });
        h.poll();
        assert!(h.requests.is_empty(), "nothing is sent while attempts to the old id are out");
        // The old id's last answers: one error (not delivered), one success.
        h.m.on_response(parts[2], gone(), h.now);
        h.m.on_response(parts[3], Ok((2, -1)), h.now);
        // Every resend and the new batch succeed at the new id, one at a time.
        for _ in 0..10 {
            h.apply(Op::Advance { ms: 150 });
            h.poll();
            let Some(req) = h.requests.pop() else { break };
            assert_eq!(req.len(), 1);
            h.m.on_response(req[0], Ok((0, -1)), h.now);
        }
        h.poll();
        assert_eq!(h.completed.len(), 5);
        for id in 0..5 {
            assert!(h.completed[&id].result.is_ok(), "batch {id}: {:?}", h.completed[&id].result);
        }
        assert_eq!(h.sent[&(101, 8, 0)], vec![0, 1, 2], "batches 1, 2 and 4 at the new id from sequence 0");
        assert_eq!(h.m.writer_id, Some(101), "no sequence reset");
        let acked_by: Vec<Option<i64>> = (0..5).map(|id| h.completed[&id].acked_by).collect();
        assert_eq!(acked_by, [Some(7), Some(8), Some(8), Some(7), Some(8)], "each batch names the partition id that acknowledged it");
        h.run_out();
        h.check_end();
    }

    /// Two batches of a bucket are out when the partition is dropped. The first answer
    /// (UNKNOWN_TABLE_OR_BUCKET, retriable) asks for metadata, which says the lane cannot write
    /// any more (here TABLE_NOT_EXIST; INVALID_BUCKET_ROUTING for a partition recreated with
    /// another bucket count): the backing-off batch fails with that error and resets the
    /// sequences. The second batch's answer (also retriable) then fails it with the same error,
    /// not with SEQUENCE_RESET (seen in `make test`: bucket_rescale's stale-count test).
    #[test]
    fn a_retriable_answer_after_the_lane_turned_fatal_fails_with_the_lanes_error() {
        let mut h = Harness::new(fixed(true), 1, true);
        h.apply(Op::Append { bucket: 0, new_batch: false });
        h.poll();
        h.apply(Op::WriterId { kind: 0 });
        h.apply(Op::Append { bucket: 0, new_batch: true });
        h.apply(Op::Flush { bucket: 0 });
        h.poll();
        let parts: Vec<Part> = h.requests.drain(..).flatten().collect();
        assert_eq!(parts.len(), 2);
        let gone = || Err(Error::server(FlussCode::UNKNOWN_TABLE_OR_BUCKET, "partition dropped"));
        h.m.on_response(parts[0], gone(), h.now);
        h.poll();
        assert!(h.metadata.is_some(), "UNKNOWN_TABLE_OR_BUCKET asks for metadata");
        h.apply(Op::Metadata { kind: 2, mask: 0 });
        h.poll();
        h.m.on_response(parts[1], gone(), h.now);
        h.poll();
        assert_eq!(h.completed.len(), 2);
        for id in 0..2 {
            assert_eq!(code(&h.completed[&id]), FlussCode::TABLE_NOT_EXIST, "batch {id}: {:?}", h.completed[&id].result);
        }
        h.run_out();
        h.check_end();
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn every_batch_completes_once_in_order_before_its_deadline(
            p in params(),
            leaders_known in prop::bool::weighted(0.8),
            ops in prop::collection::vec(op(3), 1..200),
        ) {
            let mut h = Harness::new(p, 3, leaders_known);
            h.poll();
            for op in ops {
                h.apply(op);
                h.poll();
            }
            h.run_out();
            h.check_end();
        }
    }
}
