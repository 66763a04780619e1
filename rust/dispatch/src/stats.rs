//! Counters and the ack-to-callback latency histogram.
//!
//! Counters are plain `std` atomics updated once per job (never once per callback: a job keeps its
//! own counts while it runs and publishes them when it ends). The histogram is log-linear with
//! four sub-buckets per power of two, so a reported percentile is the upper bound of its bucket:
//! at most 25% above the true value, and never above the recorded maximum.

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
