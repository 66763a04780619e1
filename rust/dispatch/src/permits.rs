//! A FIFO-fair counting semaphore, used for callback slots and for buffer bytes.
//!
//! # Algorithm
//!
//! The whole fast path is one word, `state`:
//!
//! ```text
//!  63      62       61 ........................ 0
//! CLOSED  WAITERS   available permits (up to 2^62 - 1)
//! ```
//!
//! * `try_acquire(n)` is a CAS loop that subtracts `n` from the available count. It fails, without
//!   touching the queue, if `CLOSED` or `WAITERS` is set or fewer than `n` permits are available.
//!   Failing when somebody is queued is what makes the semaphore fair: a stream of small requests
//!   cannot barge past a large one that is already waiting (a large Arrow batch asking for many
//!   buffer bytes is not starved by single-record appends).
//! * `acquire` that cannot take the fast path locks the wait queue (a `VecDeque` of waiters, each
//!   with its own condition variable, so a release wakes exactly the waiters it satisfied: no
//!   thundering herd, reference weakness 12). With the lock held it retries once if the queue is
//!   empty; otherwise, unless the deadline has expired (`Exhausted`) or the thread is running a
//!   callback (`WouldBlockInCallback`: never block inside a callback, C5), it enqueues itself, sets
//!   `WAITERS` and runs the *assign* step.
//! * *assign* (always under the queue lock) moves available permits from `state` to the head
//!   waiter, possibly in several instalments, like tokio's `batch_semaphore`: the head keeps what it
//!   was given while it waits for the rest. A head that has all it asked for is popped, marked
//!   granted and notified; the next waiter becomes the head. When the queue empties, `WAITERS` is
//!   cleared, re-opening the fast path.
//! * `release(n)` is one `fetch_add`. Only if the previous value had `WAITERS` set does it take the
//!   lock and run *assign*. No wake-up is lost: a waiter sets `WAITERS` and then assigns under the
//!   lock, so a release ordered before that `fetch_or` is seen by the waiter's own assign step, and
//!   a release ordered after it sees `WAITERS` and assigns itself.
//! * A waiter whose deadline expires removes itself from the queue, returns what it had been
//!   assigned and re-runs *assign* (the next waiter may now be satisfiable). A grant that raced the
//!   timeout wins: the waiter returns `Ok`.
//! * `close` sets `CLOSED`, then under the lock fails every waiter with `Closed`, returning their
//!   partial assignments. Later acquires fail with `Closed`; `release` keeps working so that
//!   [`Permits::in_use`] stays exact while the holders finish.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64 as StdAtomicU64, AtomicU8, Ordering as StdOrdering};
use std::sync::Arc;

use crate::budget::Deadline;
use crate::clock::Clock;
use crate::context::in_callback;
use crate::interrupt;
use crate::loom::sync::atomic::{AtomicU64, Ordering::*};
use crate::loom::sync::{Condvar, Mutex};
use crate::loom::{lock, wait};

const CLOSED: u64 = 1 << 63;
const WAITERS: u64 = 1 << 62;
const AVAIL: u64 = WAITERS - 1;

/// Why [`Permits::acquire`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AcquireError {
    /// The wait budget ran out (or it was non-blocking) before the permits were available.
    /// Retriable: capacity frees up as in-flight work completes.
    Exhausted,
    /// The calling thread is running a callback and would have had to wait; it fails fast instead
    /// of blocking (or deadlocking) the worker. Retriable, but not from inside the callback.
    WouldBlockInCallback,
    /// More permits were asked for than the semaphore will ever have. Not retriable.
    TooLarge,
    /// The semaphore was closed. Not retriable.
    Closed,
    /// The thread's interrupt check (`crate::interrupt`) asked to stop waiting. Nothing was taken.
    Interrupted,
}

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AcquireError::Exhausted => "capacity exhausted: the wait budget ran out",
            AcquireError::WouldBlockInCallback => "capacity exhausted inside a callback, which never blocks",
            AcquireError::TooLarge => "request larger than the total capacity",
            AcquireError::Closed => "closed",
            AcquireError::Interrupted => "interrupted while waiting for capacity",
        })
    }
}

impl std::error::Error for AcquireError {}

const PENDING: u8 = 0;
const GRANTED: u8 = 1;
const CANCELLED: u8 = 2;

/// One queued acquire. Its mutable fields are only touched with the queue lock held; they are
/// atomics merely to make `Waiter` `Sync`.
struct Waiter {
    need: u64,
    assigned: StdAtomicU64,
    outcome: AtomicU8,
    cv: Condvar,
}

/// A counting semaphore, FIFO-fair among waiters, with a lock-free fast path.
///
/// See the module documentation for the algorithm.
pub struct Permits {
    state: AtomicU64,
    capacity: u64,
    queue: Mutex<VecDeque<Arc<Waiter>>>,
}

impl fmt::Debug for Permits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permits")
            .field("capacity", &self.capacity)
            .field("in_use", &self.in_use())
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl Permits {
    /// The largest supported capacity (2^62 - 1).
    pub const MAX_CAPACITY: u64 = AVAIL;

    /// A semaphore with `capacity` permits, all available. Capacity is clamped to
    /// [`Permits::MAX_CAPACITY`].
    pub fn new(capacity: u64) -> Self {
        let capacity = capacity.min(AVAIL);
        Permits { state: AtomicU64::new(capacity), capacity, queue: Mutex::new(VecDeque::new()) }
    }

    /// Takes `n` permits if they are available right now and nobody is queued. Never blocks.
    pub fn try_acquire(&self, n: u64) -> bool {
        if n == 0 {
            return true;
        }
        let mut s = self.state.load(Acquire);
        loop {
            if s & (CLOSED | WAITERS) != 0 || s & AVAIL < n {
                return false;
            }
            match self.state.compare_exchange_weak(s, s - n, AcqRel, Acquire) {
                Ok(_) => return true,
                Err(actual) => s = actual,
            }
        }
    }

    /// Takes `n` permits, waiting in FIFO order until `deadline` if needed.
    ///
    /// Never blocks when [`in_callback`] is true: where it would wait it fails with
    /// [`AcquireError::WouldBlockInCallback`]. An already-expired deadline (non-blocking budget)
    /// fails with [`AcquireError::Exhausted`] where it would wait.
    pub fn acquire(&self, n: u64, deadline: Deadline, clock: &dyn Clock) -> Result<(), AcquireError> {
        if n > self.capacity {
            return Err(AcquireError::TooLarge);
        }
        if self.try_acquire(n) {
            return Ok(());
        }
        if self.state.load(Acquire) & CLOSED != 0 {
            return Err(AcquireError::Closed);
        }
        let mut q = lock(&self.queue);
        if self.state.load(Acquire) & CLOSED != 0 {
            return Err(AcquireError::Closed);
        }
        if q.is_empty() && self.try_acquire(n) {
            return Ok(());
        }
        if deadline.is_expired(clock) {
            return Err(AcquireError::Exhausted);
        }
        if in_callback() {
            return Err(AcquireError::WouldBlockInCallback);
        }
        let w = Arc::new(Waiter { need: n, assigned: StdAtomicU64::new(0), outcome: AtomicU8::new(PENDING), cv: Condvar::new() });
        q.push_back(w.clone());
        self.state.fetch_or(WAITERS, AcqRel);
        self.assign_locked(&mut q);
        loop {
            match w.outcome.load(StdOrdering::Relaxed) {
                GRANTED => return Ok(()),
                CANCELLED => return Err(AcquireError::Closed),
                _ => {}
            }
            let expired = deadline.is_expired(clock);
            let (relocked, fired, released) =
                if expired { (q, false, false) } else { interrupt::interrupted_releasing(q, || lock(&self.queue)) };
            q = relocked;
            if released && !fired {
                continue;
            }
            if expired || fired {
                if let Some(pos) = q.iter().position(|x| Arc::ptr_eq(x, &w)) {
                    q.remove(pos);
                }
                let given = w.assigned.swap(0, StdOrdering::Relaxed);
                if given > 0 {
                    self.state.fetch_add(given, AcqRel);
                }
                self.assign_locked(&mut q);
                return Err(if expired { AcquireError::Exhausted } else { AcquireError::Interrupted });
            }
            q = wait(&w.cv, q, interrupt::cap_sleep(deadline.sleep_for(clock)));
        }
    }

    /// Returns `n` permits, handing them to queued waiters in FIFO order.
    pub fn release(&self, n: u64) {
        if n == 0 {
            return;
        }
        let prev = self.state.fetch_add(n, AcqRel);
        debug_assert!((prev & AVAIL) + n <= self.capacity, "released more permits than were acquired");
        if prev & WAITERS != 0 {
            let mut q = lock(&self.queue);
            self.assign_locked(&mut q);
        }
    }

    /// Closes the semaphore: every waiter and every later `acquire` fails with
    /// [`AcquireError::Closed`], `try_acquire` returns false. `release` keeps working.
    pub fn close(&self) {
        self.state.fetch_or(CLOSED, AcqRel);
        let mut q = lock(&self.queue);
        for w in q.drain(..) {
            let given = w.assigned.swap(0, StdOrdering::Relaxed);
            if given > 0 {
                self.state.fetch_add(given, AcqRel);
            }
            w.outcome.store(CANCELLED, StdOrdering::Relaxed);
            w.cv.notify_one();
        }
        self.state.fetch_and(!WAITERS, AcqRel);
    }

    /// Whether [`Permits::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.state.load(Acquire) & CLOSED != 0
    }

    /// Total number of permits.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Permits currently taken (including those already assigned to a waiter still queued).
    pub fn in_use(&self) -> u64 {
        self.capacity - (self.state.load(Acquire) & AVAIL).min(self.capacity)
    }

    /// Number of queued waiters (takes the queue lock; for tests and diagnostics).
    pub fn waiters(&self) -> usize {
        lock(&self.queue).len()
    }

    /// Moves available permits to queued waiters, head first. Caller holds the queue lock.
    fn assign_locked(&self, q: &mut VecDeque<Arc<Waiter>>) {
        'waiters: while let Some(head) = q.front() {
            let assigned = head.assigned.load(StdOrdering::Relaxed);
            let need = head.need - assigned;
            let mut s = self.state.load(Acquire);
            loop {
                let avail = s & AVAIL;
                if avail == 0 {
                    break 'waiters;
                }
                let take = avail.min(need);
                match self.state.compare_exchange_weak(s, s - take, AcqRel, Acquire) {
                    Ok(_) => {
                        head.assigned.store(assigned + take, StdOrdering::Relaxed);
                        if take < need {
                            break 'waiters;
                        }
                        break;
                    }
                    Err(actual) => s = actual,
                }
            }
            let head = q.pop_front().expect("head exists");
            head.outcome.store(GRANTED, StdOrdering::Relaxed);
            head.cv.notify_one();
        }
        if q.is_empty() {
            self.state.fetch_and(!WAITERS, AcqRel);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::budget::WaitBudget;
    use crate::clock::{ManualClock, SystemClock};
    use crate::context::CallbackGuard;
    use crate::test_util::eventually;
    use std::time::{Duration, Instant};

    #[test]
    fn fast_path_and_accounting() {
        let p = Permits::new(10);
        assert!(p.try_acquire(4));
        assert!(p.try_acquire(6));
        assert!(!p.try_acquire(1));
        assert_eq!(p.in_use(), 10);
        p.release(3);
        assert_eq!(p.in_use(), 7);
        assert!(p.try_acquire(0));
        assert_eq!(p.capacity(), 10);
    }

    #[test]
    fn too_large_and_non_blocking() {
        let p = Permits::new(4);
        let c = SystemClock::new();
        assert_eq!(p.acquire(5, Deadline::never(), &c), Err(AcquireError::TooLarge));
        assert_eq!(p.acquire(4, Deadline::now(), &c), Ok(()));
        assert_eq!(p.acquire(1, Deadline::from_budget(WaitBudget::NonBlocking, &c), &c), Err(AcquireError::Exhausted));
        assert_eq!(p.waiters(), 0);
    }

    #[test]
    fn timeout_on_manual_clock_returns_partial_assignment() {
        let p = Arc::new(Permits::new(4));
        let clock = Arc::new(ManualClock::new());
        assert!(p.try_acquire(4));
        let (p2, c2) = (p.clone(), clock.clone());
        let t = std::thread::spawn(move || {
            let d = Deadline::from_budget(WaitBudget::Timeout(Duration::from_secs(5)), &*c2);
            p2.acquire(3, d, &*c2)
        });
        eventually("waiter queued", || p.waiters() == 1);
        p.release(2); // assigned to the waiter, which still needs 1 more
        assert_eq!(p.in_use(), 4);
        clock.advance(Duration::from_secs(5));
        assert_eq!(t.join().unwrap(), Err(AcquireError::Exhausted));
        assert_eq!(p.waiters(), 0);
        assert_eq!(p.in_use(), 2, "partial assignment returned on timeout");
        assert!(p.try_acquire(2));
    }

    #[test]
    fn timeout_on_system_clock() {
        let p = Permits::new(1);
        let c = SystemClock::new();
        assert!(p.try_acquire(1));
        let start = Instant::now();
        let d = Deadline::after(Duration::from_millis(20), &c);
        assert_eq!(p.acquire(1, d, &c), Err(AcquireError::Exhausted));
        assert!(start.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn fifo_large_request_is_not_starved() {
        let p = Arc::new(Permits::new(10));
        let clock: Arc<dyn Clock> = Arc::new(SystemClock::new());
        assert!(p.try_acquire(10));
        let (pa, ca) = (p.clone(), clock.clone());
        let a = std::thread::spawn(move || pa.acquire(8, Deadline::never(), &*ca));
        eventually("A queued", || p.waiters() == 1);
        p.release(5);
        // A holds 5 of its 8; a small request may not barge past it.
        assert!(!p.try_acquire(1));
        assert_eq!(p.in_use(), 10);
        let (pb, cb) = (p.clone(), clock.clone());
        let b = std::thread::spawn(move || pb.acquire(2, Deadline::never(), &*cb));
        eventually("B queued", || p.waiters() == 2);
        p.release(3); // exactly completes A; nothing left for B
        assert_eq!(a.join().unwrap(), Ok(()));
        assert_eq!(p.waiters(), 1, "B still waits behind A's grant");
        assert!(!b.is_finished());
        p.release(2);
        assert_eq!(b.join().unwrap(), Ok(()));
        assert_eq!(p.in_use(), 10);
        assert_eq!(p.waiters(), 0);
        p.release(10);
        assert!(p.try_acquire(1), "fast path re-opened after the queue emptied");
    }

    #[test]
    fn close_wakes_waiters_and_fails_later_acquires() {
        let p = Arc::new(Permits::new(3));
        let clock: Arc<dyn Clock> = Arc::new(SystemClock::new());
        assert!(p.try_acquire(3));
        let mut ts = Vec::new();
        for (k, n) in [2, 1].into_iter().enumerate() {
            let (p2, c2) = (p.clone(), clock.clone());
            ts.push(std::thread::spawn(move || p2.acquire(n, Deadline::never(), &*c2)));
            eventually("queued in order", || p.waiters() == k + 1);
        }
        p.release(1); // partially assigned to the first waiter
        p.close();
        for t in ts {
            assert_eq!(t.join().unwrap(), Err(AcquireError::Closed));
        }
        assert_eq!(p.in_use(), 2);
        assert!(!p.try_acquire(1));
        assert_eq!(p.acquire(1, Deadline::never(), &*clock), Err(AcquireError::Closed));
        p.release(2);
        assert_eq!(p.in_use(), 0);
        assert!(p.is_closed());
    }

    #[test]
    fn in_callback_fails_fast_instead_of_waiting() {
        let p = Permits::new(1);
        let c = SystemClock::new();
        let _g = CallbackGuard::enter();
        assert_eq!(p.acquire(1, Deadline::never(), &c), Ok(()));
        assert_eq!(p.acquire(1, Deadline::never(), &c), Err(AcquireError::WouldBlockInCallback));
        // A non-blocking budget reports what it is: exhausted.
        assert_eq!(p.acquire(1, Deadline::now(), &c), Err(AcquireError::Exhausted));
        assert_eq!(p.waiters(), 0);
    }

    #[test]
    fn many_threads_never_exceed_capacity() {
        let p = Arc::new(Permits::new(5));
        let held = Arc::new(StdAtomicU64::new(0));
        let clock: Arc<dyn Clock> = Arc::new(SystemClock::new());
        let ts: Vec<_> = (0..4)
            .map(|i| {
                let (p, held, clock) = (p.clone(), held.clone(), clock.clone());
                std::thread::spawn(move || {
                    for k in 0..2000u64 {
                        let n = 1 + (k + i) % 3;
                        p.acquire(n, Deadline::never(), &*clock).unwrap();
                        let h = held.fetch_add(n, StdOrdering::SeqCst) + n;
                        assert!(h <= 5, "over capacity: {h}");
                        held.fetch_sub(n, StdOrdering::SeqCst);
                        p.release(n);
                    }
                })
            })
            .collect();
        for t in ts {
            t.join().unwrap();
        }
        assert_eq!(p.in_use(), 0);
    }
}
