//! The flush barrier: which tickets a `flush` waits for.
//!
//! # Algorithm
//!
//! Tickets live in *epochs*. Epoch numbers grow by one at each *flip*; only two epochs can hold
//! tickets at any time, so an epoch is named by its parity. One word holds everything the hot
//! paths touch:
//!
//! ```text
//!   63      62        61 ........... 31   30 ............ 0
//! PARITY  WAITING     count[1] (31 bits)   count[0] (31 bits)
//! ```
//!
//! * **register** (admit): a CAS loop that adds one to `count[PARITY]` and returns the parity it
//!   used. Reading the parity and counting the ticket are one atomic step, so a ticket is in
//!   exactly the epoch that was current at its linearisation point. Counters cannot overflow: a
//!   ticket first takes a callback slot, and the scope caps slots at 2^31 - 1.
//! * **retire** (a job finished, or a submission was cancelled): one `fetch_sub` of the job's
//!   per-parity counts (a [`TicketSet`](crate::TicketSet)), so retiring is O(1) per job. Only if a
//!   counter reached zero *and* `WAITING` is set does it take the barrier mutex to notify.
//! * **flip**: `PARITY ^= 1`, done only by a flusher holding the barrier mutex, and only when the
//!   counter of the other parity is zero (the epoch before the current one has drained). Admits
//!   only ever add to the current parity, so a zero "other" counter stays zero, and the new epoch
//!   starts empty. The mutex also holds the full epoch number `E` (parity = `E & 1`).
//! * **flush**, called while the epoch is `T`: every ticket admitted before the call is in an
//!   epoch `<= T`; it returns once epoch `T` has drained, i.e. when the epoch is `>= T + 2`, or it is
//!   `T + 1` and `count[T & 1] == 0` (a flip to `T + 2` needs epoch `T` drained, so epochs `< T`
//!   are drained too). While the epoch is still `T` it flips as soon as epoch `T - 1` is drained.
//!   It waits on the barrier's condition variable between checks, with its deadline.
//! * **wait_idle**: waits until both counters are zero, without flipping.
//!
//! No lost wake-up: a waiter sets `WAITING` (with `fetch_or`) and re-reads the word while holding
//! the mutex, which it releases only by waiting on the condition variable. A retire ordered
//! before that `fetch_or` in the word's modification order is visible to the re-read; a retire
//! ordered after it sees `WAITING` and must take the mutex to notify, which it can only do once
//! the waiter is asleep. The last waiter to leave clears `WAITING`. (A flip also notifies, for
//! robustness only: any flusher that could progress after a flip was already woken by the
//! retire that drained the previous epoch.)
//!
//! # What a flush waits for
//!
//! * It never returns before every ticket admitted before the call began has retired (its
//!   callback returned and was dropped), also with concurrent flushes: each flush computes its
//!   own target epoch and checks it itself.
//! * A flush that starts when the previous epoch has already drained (no other flush is still
//!   waiting, and no earlier flush timed out with tickets outstanding) flips at once and is never
//!   extended by tickets admitted after it began.
//! * Otherwise (an earlier flush is still waiting, or timed out, with tickets of epoch `T - 1`
//!   outstanding) the flip waits for epoch `T - 1` to drain, and tickets admitted in the meantime
//!   (between this flush's start and its flip) land in epoch `T` and are waited for as well. That
//!   window ends when epoch `T - 1` drains, which every flush must wait for anyway; tickets
//!   admitted after the flip never extend it. Concurrent flushes that start in the same epoch
//!   share one flip.

use std::fmt;

use crate::budget::Deadline;
use crate::clock::Clock;
use crate::interrupt;
use crate::loom::sync::atomic::{AtomicU64, Ordering::*};
use crate::loom::sync::{Condvar, Mutex};
use crate::loom::{lock, wait};

const COUNT_BITS: u32 = 31;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const WAITING: u64 = 1 << 62;
const PARITY: u64 = 1 << 63;

/// Most tickets that can be outstanding at once in one barrier.
pub const MAX_TICKETS: u64 = COUNT_MASK;

/// Why a flush or wait for idle did not complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushError {
    /// Called from inside a callback (on any thread running a dispatcher job). Waiting there could
    /// deadlock, since the callbacks waited for may be queued behind the caller; it fails at once
    /// instead. Not retriable from the callback.
    CalledFromCallback,
    /// The deadline passed before the operations waited for completed. Retriable.
    Timeout,
    /// The thread's interrupt check (`crate::interrupt`) asked to stop waiting. The operations
    /// waited for keep going and complete as usual.
    Interrupted,
}

impl fmt::Display for FlushError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FlushError::CalledFromCallback => "flush, close or wait called from inside a callback",
            FlushError::Timeout => "timed out waiting for pending callbacks",
            FlushError::Interrupted => "interrupted while waiting for pending callbacks",
        })
    }
}

impl std::error::Error for FlushError {}

#[inline]
fn count(s: u64, parity: u64) -> u64 {
    (s >> (parity as u32 * COUNT_BITS)) & COUNT_MASK
}

#[inline]
fn one(parity: u64) -> u64 {
    1 << (parity as u32 * COUNT_BITS)
}

struct Inner {
    /// Full epoch number; its parity always equals the `PARITY` bit (flips happen under this lock).
    epoch: u64,
    /// Threads inside `flush` or `wait_idle`.
    waiters: u32,
}

/// Per-scope flush barrier. See the module documentation.
pub(crate) struct FlushBarrier {
    state: AtomicU64,
    inner: Mutex<Inner>,
    cv: Condvar,
}

impl FlushBarrier {
    pub(crate) fn new() -> Self {
        FlushBarrier { state: AtomicU64::new(0), inner: Mutex::new(Inner { epoch: 0, waiters: 0 }), cv: Condvar::new() }
    }

    /// Counts one ticket in the current epoch; returns the epoch's parity.
    #[inline]
    pub(crate) fn register(&self) -> u8 {
        let mut s = self.state.load(Relaxed);
        loop {
            let p = s >> 63;
            debug_assert!(count(s, p) < COUNT_MASK);
            match self.state.compare_exchange_weak(s, s + one(p), AcqRel, Relaxed) {
                Ok(_) => return p as u8,
                Err(actual) => s = actual,
            }
        }
    }

    /// Retires `counts[p]` tickets of parity `p`, for both parities, in one atomic step.
    #[inline]
    pub(crate) fn retire(&self, counts: [u32; 2]) {
        let dec = u64::from(counts[0]) * one(0) + u64::from(counts[1]) * one(1);
        if dec == 0 {
            return;
        }
        let prev = self.state.fetch_sub(dec, AcqRel);
        debug_assert!(
            count(prev, 0) >= u64::from(counts[0]) && count(prev, 1) >= u64::from(counts[1]),
            "retired more tickets than were admitted"
        );
        let new = prev - dec;
        let hit_zero = (counts[0] > 0 && count(new, 0) == 0) || (counts[1] > 0 && count(new, 1) == 0);
        if hit_zero && new & WAITING != 0 {
            let _g = lock(&self.inner);
            self.cv.notify_all();
        }
    }

    /// Tickets outstanding in both epochs.
    pub(crate) fn pending(&self) -> u64 {
        let s = self.state.load(Acquire);
        count(s, 0) + count(s, 1)
    }

    /// Threads currently inside `flush` or `wait_idle`.
    pub(crate) fn waiters(&self) -> u32 {
        lock(&self.inner).waiters
    }

    /// Waits until every ticket registered before this call has retired.
    pub(crate) fn flush(&self, deadline: Deadline, clock: &dyn Clock) -> Result<(), FlushError> {
        let mut g = lock(&self.inner);
        let target = g.epoch;
        g.waiters += 1;
        self.state.fetch_or(WAITING, AcqRel);
        let result = loop {
            let s = self.state.load(Acquire);
            if g.epoch == target {
                debug_assert_eq!(s >> 63, target & 1);
                if count(s, 1 - (target & 1)) == 0 {
                    // Epoch target-1 has drained: flip, so that later admits go to target+1.
                    self.state.fetch_xor(PARITY, AcqRel);
                    g.epoch += 1;
                    self.cv.notify_all();
                    continue;
                }
            } else if g.epoch == target + 1 {
                if count(s, target & 1) == 0 {
                    break Ok(());
                }
            } else {
                break Ok(());
            }
            if deadline.is_expired(clock) {
                break Err(FlushError::Timeout);
            }
            let (relocked, fired, released) = interrupt::interrupted_releasing(g, || lock(&self.inner));
            g = relocked;
            if fired {
                break Err(FlushError::Interrupted);
            }
            if released {
                continue;
            }
            g = wait(&self.cv, g, interrupt::cap_sleep(deadline.sleep_for(clock)));
        };
        self.leave(&mut g);
        result
    }

    /// Waits until no ticket is outstanding.
    pub(crate) fn wait_idle(&self, deadline: Deadline, clock: &dyn Clock) -> Result<(), FlushError> {
        let mut g = lock(&self.inner);
        g.waiters += 1;
        self.state.fetch_or(WAITING, AcqRel);
        let result = loop {
            let s = self.state.load(Acquire);
            if count(s, 0) == 0 && count(s, 1) == 0 {
                break Ok(());
            }
            if deadline.is_expired(clock) {
                break Err(FlushError::Timeout);
            }
            let (relocked, fired, released) = interrupt::interrupted_releasing(g, || lock(&self.inner));
            g = relocked;
            if fired {
                break Err(FlushError::Interrupted);
            }
            if released {
                continue;
            }
            g = wait(&self.cv, g, interrupt::cap_sleep(deadline.sleep_for(clock)));
        };
        self.leave(&mut g);
        result
    }

    fn leave(&self, g: &mut Inner) {
        g.waiters -= 1;
        if g.waiters == 0 {
            self.state.fetch_and(!WAITING, AcqRel);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    #[test]
    fn packing() {
        let b = FlushBarrier::new();
        assert_eq!(b.register(), 0);
        assert_eq!(b.register(), 0);
        assert_eq!(b.pending(), 2);
        let c = ManualClock::new();
        // Non-blocking flush flips, then times out with epoch 0 still pending.
        assert_eq!(b.flush(Deadline::now(), &c), Err(FlushError::Timeout));
        assert_eq!(b.register(), 1);
        b.retire([2, 0]);
        assert_eq!(b.pending(), 1);
        // Epoch 0 drained; the ticket in epoch 1 was admitted before this flush, so it waits.
        assert_eq!(b.flush(Deadline::now(), &c), Err(FlushError::Timeout));
        b.retire([0, 1]);
        assert_eq!(b.flush(Deadline::now(), &c), Ok(()));
        assert_eq!(b.wait_idle(Deadline::now(), &c), Ok(()));
        assert_eq!(b.state.load(Relaxed) & WAITING, 0);
    }
}
