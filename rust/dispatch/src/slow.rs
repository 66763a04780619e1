//! Slow-callback detection.
//!
//! Timing every callback with the system clock would cost two clock reads per record on the
//! worker. Instead, one background thread (`fluss-writer-ticker`, running while any scope asks
//! for detection) advances a coarse millisecond clock, and [`JobContext::invoke`] reads that
//! atomic before and after each callback: two relaxed loads of a cache line written a few times a
//! second. The resolution is the tick: a tenth of the smallest threshold in use, between 1 ms and
//! 100 ms, so a callback is reported when it ran at least `threshold - tick`.
//!
//! [`JobContext::invoke`]: crate::JobContext::invoke

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::time::Duration;

/// The coarse clock, in milliseconds since the ticker started.
static NOW_MS: AtomicU64 = AtomicU64::new(0);
/// The ticker's period in milliseconds (the smallest any scope asked for).
static TICK_MS: AtomicU64 = AtomicU64::new(u64::MAX);

/// The coarse clock in milliseconds (0 until a scope with a threshold exists).
#[inline]
pub(crate) fn now_ms() -> u64 {
    NOW_MS.load(Relaxed)
}

/// Slow-callback watches alive (one per scope that has a threshold).
static LIVE: AtomicU64 = AtomicU64::new(0);
/// Whether the ticker thread runs.
static RUNNING: AtomicBool = AtomicBool::new(false);

/// Makes sure the ticker runs, fine enough for `threshold_ms`. It runs while any watch is alive
/// and exits after the last one is gone (a process whose writers are all closed keeps no thread
/// for this).
#[cfg(not(loom))]
pub(crate) fn watch(threshold_ms: u64) {
    TICK_MS.fetch_min((threshold_ms / 10).clamp(1, 100), Relaxed);
    LIVE.fetch_add(1, SeqCst);
    start_ticker();
}

#[cfg(not(loom))]
fn start_ticker() {
    if RUNNING.compare_exchange(false, true, SeqCst, SeqCst).is_err() {
        return;
    }
    let origin = *ORIGIN.get_or_init(std::time::Instant::now);
    // Catch the clock up before any callback of the new watch can read it: a stale reading
    // (from before an earlier ticker stopped) would make the first callback look slow.
    NOW_MS.store(u64::try_from(origin.elapsed().as_millis()).unwrap_or(u64::MAX), Relaxed);
    let spawned = std::thread::Builder::new().name("fluss-writer-ticker".into()).spawn(move || loop {
        std::thread::sleep(Duration::from_millis(TICK_MS.load(Relaxed).min(100)));
        NOW_MS.store(u64::try_from(origin.elapsed().as_millis()).unwrap_or(u64::MAX), Relaxed);
        if LIVE.load(SeqCst) == 0 {
            RUNNING.store(false, SeqCst);
            // A watch created between the check and the store found the ticker still running:
            // carry on for it, unless another ticker has started meanwhile.
            if LIVE.load(SeqCst) == 0 || RUNNING.compare_exchange(false, true, SeqCst, SeqCst).is_err() {
                return;
            }
        }
    });
    if let Err(e) = spawned {
        RUNNING.store(false, SeqCst);
        log::warn!("slow-callback detection is off: cannot start its ticker thread: {e}");
    }
}

/// The coarse clock's origin: the first ticker's start, kept for later tickers so that the
/// clock never goes back.
#[cfg(not(loom))]
static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

#[cfg(not(loom))]
fn unwatch() {
    LIVE.fetch_sub(1, SeqCst);
}

#[cfg(loom)]
fn unwatch() {}

/// Model checking runs no ticker: the coarse clock stays at 0 and nothing is ever slow.
#[cfg(loom)]
pub(crate) fn watch(_threshold_ms: u64) {}

/// Where slow callbacks of one scope are counted, and when they were last logged.
pub(crate) struct SlowWatch {
    pub(crate) threshold_ms: u64,
    pub(crate) count: AtomicU64,
    /// Coarse time of the last warning (`u64::MAX`: none yet).
    last_log_ms: AtomicU64,
    /// Slow callbacks since the last warning that were not logged on their own.
    unlogged: AtomicU64,
    /// How long each callback ran, in whole ticks of the coarse clock (most read 0).
    pub(crate) run_time: crate::stats::LatencyBuckets,
}

/// At most one warning per scope per this many milliseconds; the next one says how many slow
/// callbacks it stands for.
const LOG_EVERY_MS: u64 = 10_000;

impl Drop for SlowWatch {
    fn drop(&mut self) {
        unwatch();
    }
}

impl SlowWatch {
    pub(crate) fn new(threshold: Duration) -> SlowWatch {
        let threshold_ms = u64::try_from(threshold.as_millis()).unwrap_or(u64::MAX).max(1);
        watch(threshold_ms);
        SlowWatch {
            threshold_ms,
            count: AtomicU64::new(0),
            last_log_ms: AtomicU64::new(u64::MAX),
            unlogged: AtomicU64::new(0),
            run_time: crate::stats::LatencyBuckets::new(),
        }
    }

    /// Counts a slow callback; true when it should be logged now (the first one, then at most
    /// once per [`LOG_EVERY_MS`]), with the number of earlier ones that were not.
    pub(crate) fn record(&self, now_ms: u64) -> Option<u64> {
        self.count.fetch_add(1, Relaxed);
        let last = self.last_log_ms.load(Relaxed);
        let due = last == u64::MAX || now_ms.saturating_sub(last) >= LOG_EVERY_MS;
        if due && self.last_log_ms.compare_exchange(last, now_ms, Relaxed, Relaxed).is_ok() {
            Some(self.unlogged.swap(0, Relaxed))
        } else {
            self.unlogged.fetch_add(1, Relaxed);
            None
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_first_slow_callback_is_logged_then_one_per_period_with_the_rest_counted() {
        let w = SlowWatch::new(Duration::from_millis(50));
        assert_eq!(w.record(1_000), Some(0));
        assert_eq!(w.record(1_001), None);
        assert_eq!(w.record(5_000), None);
        assert_eq!(w.record(1_000 + LOG_EVERY_MS), Some(2));
        assert_eq!(w.count.load(Relaxed), 4);
    }

    #[test]
    fn the_ticker_moves_the_coarse_clock_while_a_watch_lives() {
        let w = SlowWatch::new(Duration::from_millis(20));
        let a = now_ms();
        std::thread::sleep(Duration::from_millis(60));
        assert!(now_ms() > a, "coarse clock did not move: {a}");
        assert!(RUNNING.load(SeqCst));
        let again = SlowWatch::new(Duration::from_millis(20));
        drop(w);
        std::thread::sleep(Duration::from_millis(30));
        assert!(RUNNING.load(SeqCst), "one watch is still alive");
        drop(again);
        // Other tests of this binary may hold watches; the ticker stops once none is left.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while LIVE.load(SeqCst) == 0 && RUNNING.load(SeqCst) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(LIVE.load(SeqCst) > 0 || !RUNNING.load(SeqCst), "the ticker outlived every watch");
    }
}
