//! Wait budgets and deadlines.
//!
//! A submission's wait budget (`client.writer.buffer.wait-timeout`) is turned into one
//! [`Deadline`] when the submission starts; that single deadline is then shared by the callback
//! slot wait and the buffer-memory wait (C5), so the two waits together never exceed the budget.
//! All arithmetic saturates: a huge timeout is "practically never", not an overflow (reference
//! weakness 10).

use std::time::Duration;

use crate::clock::{duration_nanos, Clock};

/// How long a submission may block waiting for capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitBudget {
    /// Wait as long as it takes.
    Unbounded,
    /// Never block: fail at once if capacity is not available.
    NonBlocking,
    /// Wait at most this long. `Timeout(Duration::ZERO)` behaves like [`WaitBudget::NonBlocking`].
    Timeout(Duration),
}

/// An absolute point in time on some [`Clock`], or "never".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    /// Clock reading at which the deadline expires; `None` = never.
    at: Option<u64>,
}

impl Deadline {
    /// The deadline for `budget`, starting now on `clock`.
    pub fn from_budget(budget: WaitBudget, clock: &dyn Clock) -> Deadline {
        match budget {
            WaitBudget::Unbounded => Deadline::never(),
            WaitBudget::NonBlocking => Deadline::now(),
            WaitBudget::Timeout(d) => Deadline::after(d, clock),
        }
    }

    /// `d` from now on `clock` (saturating).
    pub fn after(d: Duration, clock: &dyn Clock) -> Deadline {
        Deadline { at: Some(clock.now_nanos().saturating_add(duration_nanos(d))) }
    }

    /// A deadline at clock reading `nanos`.
    pub fn at_nanos(nanos: u64) -> Deadline {
        Deadline { at: Some(nanos) }
    }

    /// A deadline that never expires.
    pub fn never() -> Deadline {
        Deadline { at: None }
    }

    /// A deadline that has already expired, on any clock: "do not wait at all".
    pub fn now() -> Deadline {
        Deadline { at: Some(0) }
    }

    /// Whether this deadline never expires.
    pub fn is_never(&self) -> bool {
        self.at.is_none()
    }

    /// The clock reading at which this deadline expires (`None` = never).
    pub fn at(&self) -> Option<u64> {
        self.at
    }

    /// Whether the deadline has passed on `clock`.
    pub fn is_expired(&self, clock: &dyn Clock) -> bool {
        match self.at {
            None => false,
            Some(at) => clock.now_nanos() >= at,
        }
    }

    /// Time left before the deadline (`None` = unbounded; `Some(ZERO)` once expired).
    pub fn remaining(&self, clock: &dyn Clock) -> Option<Duration> {
        self.at.map(|at| Duration::from_nanos(at.saturating_sub(clock.now_nanos())))
    }

    /// How long one blocking wait may sleep before re-checking: the remaining time, capped by the
    /// clock's [`Clock::wait_slice`]. `None` = sleep until notified.
    pub(crate) fn sleep_for(&self, clock: &dyn Clock) -> Option<Duration> {
        match (self.remaining(clock), clock.wait_slice()) {
            (None, None) => None,
            (None, Some(s)) => Some(s),
            (Some(r), None) => Some(r),
            (Some(r), Some(s)) => Some(r.min(s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    #[test]
    fn budgets_map_to_deadlines() {
        let c = ManualClock::new();
        c.set(1_000);
        assert!(Deadline::from_budget(WaitBudget::Unbounded, &c).is_never());
        assert!(Deadline::from_budget(WaitBudget::NonBlocking, &c).is_expired(&c));
        assert!(Deadline::from_budget(WaitBudget::Timeout(Duration::ZERO), &c).is_expired(&c));
        let d = Deadline::from_budget(WaitBudget::Timeout(Duration::from_nanos(500)), &c);
        assert!(!d.is_expired(&c));
        assert_eq!(d.remaining(&c), Some(Duration::from_nanos(500)));
        c.advance(Duration::from_nanos(499));
        assert!(!d.is_expired(&c));
        c.advance(Duration::from_nanos(1));
        assert!(d.is_expired(&c));
        assert_eq!(d.remaining(&c), Some(Duration::ZERO));
        assert_eq!(Deadline::never().remaining(&c), None);
    }

    #[test]
    fn huge_timeouts_saturate() {
        let c = ManualClock::new();
        c.set(u64::MAX - 5);
        let d = Deadline::from_budget(WaitBudget::Timeout(Duration::MAX), &c);
        assert_eq!(d.at(), Some(u64::MAX));
        assert!(Deadline::now().is_expired(&ManualClock::new()));
    }
}
