//! Fault injection: make the embedded engine misbehave on purpose, per table bucket.
//!
//! Tests in Rust, Python and C++ use this to drive the writer through server errors, slow
//! responses and lost connections without a real cluster. A fault is attached to one bucket of
//! one table and applies to the `ProduceLog` and `PutKv` requests that carry that bucket:
//!
//! * [`Fault::Error`] answers that bucket's entry with the given error code and message, without
//!   applying its batch. Other buckets of the same request proceed normally.
//! * [`Fault::Delay`] delays the whole response (the writes are applied at once; only the answer
//!   is late, as with a slow replication round).
//! * [`Fault::DropConnection`] fails the whole request with `NETWORK_EXCEPTION` (1), as a broken
//!   connection would. With `after_apply: true` the request's writes are applied first, so the
//!   client sees a failure for data the server already holds: an idempotent retry must then be
//!   answered as a duplicate and must not duplicate data.
//!
//! Each fault carries `times`: how many requests it hits. Every request that carries the bucket
//! consumes one hit of the oldest fault of that bucket; faults of one bucket are consumed in
//! injection order, one fault per request.
//!
//! Faults can also target **the coordinator** ([`Faults::inject_coordinator`]): they apply to the
//! requests the client addresses to the coordinator (DDL, CreatePartition of create-on-write,
//! ACLs; not Metadata or writes), one hit per request, oldest first. An error fails the whole
//! request with its code, as a server's error response does: `NOT_COORDINATOR_LEADER` (65) is
//! what a Fluss 1.0 standby coordinator answers, so a test can move the leadership away for a
//! number of requests. A delay delays the answer; a dropped connection fails the request with
//! `NETWORK_EXCEPTION`, after processing it with `after_apply`.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::metadata::TablePath;

/// One kind of misbehaviour, applied to the next `times` requests that carry its bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Answer the bucket's entry with `code` and `message` without applying its batch.
    Error {
        /// The Fluss error code to answer with.
        code: i32,
        /// The error message to answer with.
        message: String,
        /// How many requests it hits.
        times: u32,
    },
    /// Delay the whole response by `delay`.
    Delay {
        /// How long to hold the response.
        delay: Duration,
        /// How many requests it hits.
        times: u32,
    },
    /// Fail the whole request with `NETWORK_EXCEPTION`; with `after_apply` the writes are
    /// applied before the failure.
    DropConnection {
        /// Apply the request's writes before failing it.
        after_apply: bool,
        /// How many requests it hits.
        times: u32,
    },
}

impl Fault {
    fn times(&self) -> u32 {
        match self {
            Fault::Error { times, .. } | Fault::Delay { times, .. } | Fault::DropConnection { times, .. } => *times,
        }
    }

    fn times_mut(&mut self) -> &mut u32 {
        match self {
            Fault::Error { times, .. } | Fault::Delay { times, .. } | Fault::DropConnection { times, .. } => times,
        }
    }
}

/// What one request must do for one of its buckets: the fault it consumed, with `times` = 1.
pub(crate) type Hit = Fault;

/// Pending faults per (table, bucket), oldest first.
type FaultMap = HashMap<(TablePath, Option<String>, i32), VecDeque<Fault>>;

/// Handle on an engine's pending faults. Cheap to clone; every clone sees the same faults.
#[derive(Clone, Default)]
pub struct Faults {
    inner: Arc<Mutex<FaultMap>>,
    /// Faults for requests addressed to the coordinator, oldest first.
    coordinator: Arc<Mutex<VecDeque<Fault>>>,
}

impl std::fmt::Debug for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let map = self.lock();
        f.debug_map()
            .entries(map.iter().map(|((t, p, b), q)| match p {
                None => (format!("{t}/{b}"), q),
                Some(p) => (format!("{t}/{p}/{b}"), q),
            }))
            .finish()
    }
}

impl Faults {
    fn lock(&self) -> std::sync::MutexGuard<'_, FaultMap> {
        // A panic while holding this lock cannot leave the map inconsistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queue `fault` for `bucket` of `table`, behind the faults already queued there. A fault
    /// with `times == 0` does nothing. The table does not have to exist yet.
    pub fn inject(&self, table: &TablePath, bucket: i32, fault: Fault) {
        self.inject_at(table, None, bucket, fault)
    }

    /// Queue `fault` for `bucket` of partition `partition` (its name) of `table`, as
    /// [`inject`](Self::inject) does for a table without partitions. With `None`, the table's
    /// own buckets.
    pub fn inject_at(&self, table: &TablePath, partition: Option<&str>, bucket: i32, fault: Fault) {
        if fault.times() == 0 {
            return;
        }
        self.lock().entry((table.clone(), partition.map(str::to_string), bucket)).or_default().push_back(fault);
    }

    /// Remove every pending fault of every table and of the coordinator.
    pub fn clear(&self) {
        self.lock().clear();
        self.lock_coordinator().clear();
    }

    fn lock_coordinator(&self) -> std::sync::MutexGuard<'_, VecDeque<Fault>> {
        self.coordinator.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queue `fault` for the next requests addressed to the coordinator (see the module docs),
    /// behind the coordinator faults already queued. A fault with `times == 0` does nothing.
    pub fn inject_coordinator(&self, fault: Fault) {
        if fault.times() > 0 {
            self.lock_coordinator().push_back(fault);
        }
    }

    /// How many more coordinator requests the queued coordinator faults will hit.
    pub fn pending_coordinator(&self) -> usize {
        self.lock_coordinator().iter().map(|f| f.times() as usize).sum()
    }

    /// Consume one hit of the oldest coordinator fault, if any.
    pub(crate) fn take_coordinator(&self) -> Option<Hit> {
        take_one(&mut self.lock_coordinator())
    }

    /// How many more requests the faults queued for this bucket will hit (the sum of their
    /// remaining `times`). 0 once they are all consumed.
    pub fn pending(&self, table: &TablePath, bucket: i32) -> usize {
        self.pending_at(table, None, bucket)
    }

    /// [`pending`](Self::pending) for a partition's bucket.
    pub fn pending_at(&self, table: &TablePath, partition: Option<&str>, bucket: i32) -> usize {
        self.lock().get(&(table.clone(), partition.map(str::to_string), bucket)).map_or(0, |q| q.iter().map(|f| f.times() as usize).sum())
    }

    /// Consume one hit of the oldest fault of this bucket, if any.
    pub(crate) fn take(&self, table: &TablePath, partition: Option<&str>, bucket: i32) -> Option<Hit> {
        let mut map = self.lock();
        let key = (table.clone(), partition.map(str::to_string), bucket);
        let queue = map.get_mut(&key)?;
        let hit = take_one(queue);
        if queue.is_empty() {
            map.remove(&key);
        }
        hit
    }
}

/// One hit of the oldest fault of `queue` (with `times` = 1), dropping the fault when spent.
fn take_one(queue: &mut VecDeque<Fault>) -> Option<Hit> {
    let front = queue.front_mut()?;
    let mut hit = front.clone();
    *hit.times_mut() = 1;
    *front.times_mut() -= 1;
    if front.times() == 0 {
        queue.pop_front();
    }
    Some(hit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_are_consumed_in_injection_order() {
        let f = Faults::default();
        let t = TablePath::new("db", "t").unwrap();
        f.inject(&t, 0, Fault::Error { code: 12, message: "x".into(), times: 2 });
        f.inject(&t, 0, Fault::Delay { delay: Duration::from_millis(5), times: 1 });
        f.inject(&t, 1, Fault::DropConnection { after_apply: true, times: 0 });
        assert_eq!(f.pending(&t, 0), 3);
        assert_eq!(f.pending(&t, 1), 0);
        assert!(matches!(f.take(&t, None, 0), Some(Fault::Error { code: 12, times: 1, .. })));
        assert!(matches!(f.take(&t, None, 0), Some(Fault::Error { code: 12, .. })));
        assert!(matches!(f.take(&t, None, 0), Some(Fault::Delay { .. })));
        assert_eq!(f.take(&t, None, 0), None);
        assert_eq!(f.pending(&t, 0), 0);
        f.inject(&t, 2, Fault::DropConnection { after_apply: false, times: 4 });
        f.clear();
        assert_eq!(f.pending(&t, 2), 0);
    }

    #[test]
    fn coordinator_faults_are_a_queue_of_their_own() {
        let f = Faults::default();
        let t = TablePath::new("db", "t").unwrap();
        f.inject_coordinator(Fault::Error { code: 65, message: "standby".into(), times: 2 });
        f.inject_coordinator(Fault::Delay { delay: Duration::from_millis(5), times: 0 });
        f.inject_coordinator(Fault::Delay { delay: Duration::from_millis(5), times: 1 });
        assert_eq!(f.pending_coordinator(), 3);
        assert_eq!(f.pending(&t, 0), 0);
        assert_eq!(f.take(&t, None, 0), None);
        assert!(matches!(f.take_coordinator(), Some(Fault::Error { code: 65, times: 1, .. })));
        assert!(matches!(f.take_coordinator(), Some(Fault::Error { code: 65, .. })));
        assert!(matches!(f.take_coordinator(), Some(Fault::Delay { times: 1, .. })));
        assert_eq!(f.take_coordinator(), None);
        f.inject_coordinator(Fault::Error { code: 65, message: String::new(), times: 3 });
        f.clear();
        assert_eq!(f.pending_coordinator(), 0);
    }
}
