//! Counters and latency histograms.
//!
//! Counters are plain `std` atomics updated once per job (never once per callback: a job keeps its
//! own counts while it runs and publishes them when it ends). [`Histogram`] is log-linear with
//! four sub-buckets per power of two, so a reported percentile is the upper bound of its bucket:
//! at most 25% above the true value, and never above the recorded maximum. [`LatencyBuckets`] is
//! the exported kind: the fixed bucket layout [`LATENCY_BUCKET_BOUNDS_NANOS`] (Prometheus `le`
//! bounds), counts and a sum that add up across writers and processes.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

const SUB_BITS: u32 = 2;
const SUB: u64 = 1 << SUB_BITS;
const LINEAR: u64 = 2 * SUB; // values below this have a bucket each
const BUCKETS: usize = (LINEAR + (64 - 3) * SUB) as usize;

/// A snapshot of a latency histogram, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LatencySnapshot {
    /// Number of recorded samples.
    pub count: u64,
    /// Median (upper bound of its bucket).
    pub p50_nanos: u64,
    /// 99th percentile (upper bound of its bucket).
    pub p99_nanos: u64,
    /// Largest sample.
    pub max_nanos: u64,
}

/// Counters of one executor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExecutorStats {
    /// Jobs handed to the executor's workers and not yet taken by one (0 for user executors).
    pub queued_jobs: u64,
    /// Jobs whose body has run (through [`Job::run`](crate::Job::run), on any thread).
    pub jobs_run: u64,
    /// Callbacks invoked by those jobs.
    pub callbacks_run: u64,
    /// Time from batch acknowledgement (the job's `ack_nanos`) to the start of its job.
    pub ack_to_callback: LatencySnapshot,
}

/// A histogram of `u64` samples with fixed memory (about 250 buckets of 8 bytes): lock-free
/// to record, percentiles at most 25% above the true value.
pub struct Histogram {
    buckets: Box<[AtomicU64]>,
    count: AtomicU64,
    max: AtomicU64,
}

fn bucket_of(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // >= 3
    let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
    (LINEAR + u64::from(e - 3) * SUB + sub) as usize
}

fn upper_bound(i: usize) -> u64 {
    let i = i as u64;
    if i < LINEAR {
        return i;
    }
    let e = (i - LINEAR) / SUB + 3;
    let sub = (i - LINEAR) % SUB;
    let width = 1u64 << (e - u64::from(SUB_BITS));
    ((SUB + sub) * width).saturating_add(width - 1)
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Histogram { buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(), count: AtomicU64::new(0), max: AtomicU64::new(0) }
    }

    /// Records one sample.
    pub fn record(&self, v: u64) {
        self.buckets[bucket_of(v)].fetch_add(1, Relaxed);
        self.count.fetch_add(1, Relaxed);
        self.max.fetch_max(v, Relaxed);
    }

    /// Count, median, 99th percentile and maximum (named for nanoseconds, whatever the unit).
    pub fn snapshot(&self) -> LatencySnapshot {
        let counts: Vec<u64> = self.buckets.iter().map(|b| b.load(Relaxed)).collect();
        let total: u64 = counts.iter().sum();
        let max = self.max.load(Relaxed);
        let pct = |q: u64| -> u64 {
            if total == 0 {
                return 0;
            }
            // smallest bucket whose cumulative count reaches ceil(total * q / 100)
            let rank = (total * q).div_ceil(100).max(1);
            let mut acc = 0;
            for (i, c) in counts.iter().enumerate() {
                acc += c;
                if acc >= rank {
                    return upper_bound(i).min(max);
                }
            }
            max
        };
        LatencySnapshot { count: total, p50_nanos: pct(50), p99_nanos: pct(99), max_nanos: max }
    }
}

/// The upper bounds of [`LatencyBuckets`], in nanoseconds, inclusive (Prometheus `le`): 10 us to
/// 60 s, 1-2.5-5 steps per decade up to 10 s, then 60 s; above the last, the `+Inf` bucket.
/// 20 bounds, one layout for every exported latency of every writer, so that buckets add up.
pub const LATENCY_BUCKET_BOUNDS_NANOS: [u64; 20] = [
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
    60_000_000_000,
];

const LATENCY_SLOTS: usize = LATENCY_BUCKET_BOUNDS_NANOS.len() + 1;

/// A latency histogram with the fixed bucket layout [`LATENCY_BUCKET_BOUNDS_NANOS`]: one relaxed
/// add to a bucket and one to the sum per sample (21 counters and a sum, 176 bytes), no lock.
pub struct LatencyBuckets {
    /// Samples per bucket (not cumulative); the last slot is above every bound.
    counts: [AtomicU64; LATENCY_SLOTS],
    sum_nanos: AtomicU64,
}

/// What [`LatencyBuckets`] held when read: Prometheus's view of a histogram.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LatencyBucketsSnapshot {
    /// Cumulative: `buckets[i]` samples were at most `LATENCY_BUCKET_BOUNDS_NANOS[i]`.
    pub buckets: [u64; LATENCY_BUCKET_BOUNDS_NANOS.len()],
    /// Every sample (the `+Inf` bucket).
    pub count: u64,
    /// The samples' sum in nanoseconds.
    pub sum_nanos: u64,
}

/// The slot of a sample: the first bound at or above it (the `+Inf` slot above all).
#[inline]
fn latency_slot(nanos: u64) -> usize {
    LATENCY_BUCKET_BOUNDS_NANOS.partition_point(|&b| b < nanos)
}

impl Default for LatencyBuckets {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyBuckets {
    /// An empty histogram.
    pub const fn new() -> Self {
        LatencyBuckets { counts: [const { AtomicU64::new(0) }; LATENCY_SLOTS], sum_nanos: AtomicU64::new(0) }
    }

    /// Records one sample of `nanos` nanoseconds.
    #[inline]
    pub fn record(&self, nanos: u64) {
        self.counts[latency_slot(nanos)].fetch_add(1, Relaxed);
        self.sum_nanos.fetch_add(nanos, Relaxed);
    }

    /// Records `n` samples of zero (what a coarse clock reads for most short intervals).
    #[inline]
    pub fn record_zeros(&self, n: u64) {
        if n > 0 {
            self.counts[0].fetch_add(n, Relaxed);
        }
    }

    /// The cumulative counts, total and sum. The total is the sum of the buckets read, so the
    /// `+Inf` bucket and `_count` always agree; the sum may be a sample ahead or behind.
    pub fn snapshot(&self) -> LatencyBucketsSnapshot {
        let mut s = LatencyBucketsSnapshot { sum_nanos: self.sum_nanos.load(Relaxed), ..Default::default() };
        let mut acc = 0u64;
        for (i, c) in self.counts.iter().enumerate() {
            acc = acc.saturating_add(c.load(Relaxed));
            if let Some(b) = s.buckets.get_mut(i) {
                *b = acc;
            }
        }
        s.count = acc;
        s
    }
}

/// Shared counters of one executor.
pub(crate) struct ExecCounters {
    pub(crate) queued: AtomicU64,
    pub(crate) jobs_run: AtomicU64,
    pub(crate) callbacks_run: AtomicU64,
    pub(crate) latency: Histogram,
}

impl ExecCounters {
    pub(crate) fn new() -> Self {
        ExecCounters { queued: AtomicU64::new(0), jobs_run: AtomicU64::new(0), callbacks_run: AtomicU64::new(0), latency: Histogram::new() }
    }

    pub(crate) fn record_job(&self, latency_nanos: u64, callbacks: u64) {
        self.latency.record(latency_nanos);
        self.jobs_run.fetch_add(1, Relaxed);
        if callbacks > 0 {
            self.callbacks_run.fetch_add(callbacks, Relaxed);
        }
    }

    pub(crate) fn snapshot(&self) -> ExecutorStats {
        ExecutorStats {
            queued_jobs: self.queued.load(Relaxed),
            jobs_run: self.jobs_run.load(Relaxed),
            callbacks_run: self.callbacks_run.load(Relaxed),
            ack_to_callback: self.latency.snapshot(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_their_values() {
        for v in (0..10_000u64).chain([u64::MAX, u64::MAX / 2, 1 << 40, (1 << 40) - 1]) {
            let i = bucket_of(v);
            assert!(i < BUCKETS, "{v}");
            assert!(upper_bound(i) >= v, "{v} above bucket {i}");
            if i > 0 {
                assert!(upper_bound(i - 1) < v, "{v} below bucket {i}");
            }
        }
    }

    #[test]
    fn latency_samples_land_in_the_first_bucket_at_or_above_them() {
        let bounds = LATENCY_BUCKET_BOUNDS_NANOS;
        assert!(bounds.windows(2).all(|w| w[0] < w[1]), "bounds ascend");
        assert_eq!((bounds[0], bounds[bounds.len() - 1]), (10_000, 60_000_000_000), "10 us to 60 s");
        // Below the first bound, exactly on a bound, just above one, above the last.
        assert_eq!(latency_slot(0), 0);
        assert_eq!(latency_slot(9_999), 0);
        assert_eq!(latency_slot(10_000), 0, "le is inclusive");
        assert_eq!(latency_slot(10_001), 1);
        for (i, &b) in bounds.iter().enumerate() {
            assert_eq!(latency_slot(b), i, "on bound {b}");
            assert_eq!(latency_slot(b + 1), i + 1, "just above {b}");
        }
        assert_eq!(latency_slot(60_000_000_001), bounds.len(), "+Inf");
        assert_eq!(latency_slot(u64::MAX), bounds.len(), "+Inf");
    }

    #[test]
    fn latency_buckets_are_cumulative_and_count_every_sample() {
        let h = LatencyBuckets::new();
        assert_eq!(h.snapshot(), LatencyBucketsSnapshot::default());
        for v in [5_000, 10_000, 10_001, 1_000_000, 1_000_000, 61_000_000_000] {
            h.record(v);
        }
        h.record_zeros(3);
        h.record_zeros(0);
        let s = h.snapshot();
        assert_eq!(s.count, 9);
        assert_eq!(s.sum_nanos, 5_000 + 10_000 + 10_001 + 2_000_000 + 61_000_000_000);
        assert_eq!(s.buckets[0], 5, "three zeros, 5 us and 10 us");
        assert_eq!(s.buckets[1], 6, "10.001 us");
        assert_eq!(s.buckets[6], 8, "two of 1 ms");
        assert_eq!(s.buckets[LATENCY_BUCKET_BOUNDS_NANOS.len() - 1], 8, "61 s is only in +Inf");
        assert!(s.buckets.windows(2).all(|w| w[0] <= w[1]), "{s:?}");
    }

    #[test]
    fn percentiles() {
        let h = Histogram::new();
        assert_eq!(h.snapshot(), LatencySnapshot::default());
        for v in 1..=100u64 {
            h.record(v * 1000);
        }
        let s = h.snapshot();
        assert_eq!(s.count, 100);
        assert_eq!(s.max_nanos, 100_000);
        assert!(s.p50_nanos >= 50_000 && s.p50_nanos <= 50_000 * 5 / 4, "{s:?}");
        assert!(s.p99_nanos >= 99_000 && s.p99_nanos <= 100_000, "{s:?}");
    }
}
