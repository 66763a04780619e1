//! Injected time.
//!
//! Everything in this crate that needs "now" (deadlines, ack-to-callback latency) asks a
//! [`Clock`], never `Instant::now()` directly, so tests drive time with a [`ManualClock`] and
//! model checking stays deterministic. Time is monotonic nanoseconds from an arbitrary origin.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A monotonic source of time in nanoseconds from an arbitrary, fixed origin.
pub trait Clock: Send + Sync + 'static {
    /// Monotonic nanoseconds. Never decreases.
    fn now_nanos(&self) -> u64;

    /// The longest a blocked waiter sleeps before it looks at this clock again.
    ///
    /// `None` (the default) means waiters may sleep for the whole remaining time, which is right
    /// for clocks that follow real time. A clock that jumps under outside control (such as
    /// [`ManualClock`]) returns a short slice so that waiters notice an expired deadline promptly.
    fn wait_slice(&self) -> Option<Duration> {
        None
    }
}

/// The real clock: nanoseconds since a process-wide origin (the first use of any
/// `SystemClock`), read from [`Instant`]. All `SystemClock` values agree with each other.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

static ORIGIN: OnceLock<Instant> = OnceLock::new();

impl SystemClock {
    /// The system clock (same as the unit value `SystemClock`).
    pub fn new() -> Self {
        SystemClock
    }
}

impl Clock for SystemClock {
    fn now_nanos(&self) -> u64 {
        u64::try_from(ORIGIN.get_or_init(Instant::now).elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// A clock for tests: it only moves when told to.
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicU64,
}

impl ManualClock {
    /// A clock reading 0.
    pub fn new() -> Self {
        ManualClock { now: AtomicU64::new(0) }
    }

    /// Moves the clock forward by `d` (saturating).
    pub fn advance(&self, d: Duration) {
        let d = duration_nanos(d);
        let _ = self.now.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| Some(v.saturating_add(d)));
    }

    /// Sets the clock to `nanos`. Tests must not move it backwards.
    pub fn set(&self, nanos: u64) {
        self.now.store(nanos, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_nanos(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    fn wait_slice(&self) -> Option<Duration> {
        Some(Duration::from_millis(1))
    }
}

/// `d` in nanoseconds, saturating at `u64::MAX` (about 584 years).
pub(crate) fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new();
        assert_eq!(c.now_nanos(), 0);
        c.advance(Duration::from_micros(3));
        assert_eq!(c.now_nanos(), 3_000);
        c.set(10_000);
        assert_eq!(c.now_nanos(), 10_000);
        c.advance(Duration::MAX);
        assert_eq!(c.now_nanos(), u64::MAX);
    }

    #[test]
    fn system_clock_is_monotonic() {
        let a = SystemClock.now_nanos();
        let b = SystemClock::new().now_nanos();
        assert!(b >= a);
    }
}
