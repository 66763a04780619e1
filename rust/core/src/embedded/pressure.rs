//! Storage back-pressure of primary-key buckets, as a Fluss 1.0 tablet server computes it
//! (apache/fluss 545c553, `RocksDBKv.currentPressure` and `KvTablet.putAsLeader`), on a model of
//! the storage instead of RocksDB.
//!
//! The server's signal comes from the number of level-0 SST files of the bucket's RocksDB:
//!
//! * `pressure = min(L0 - trigger, window - 1) / window` once `L0 >= trigger`, 0 below, where
//!   `trigger` is the server option `kv.backpressure.l0-slowdown-trigger` (default 8) and
//!   `window = level0_slowdown_writes_trigger (RocksDB's, 20) - trigger`; at least 0.8 after a
//!   write was refused until a later write succeeds; at most 0.999. Sent in
//!   `PbPutKvRespForBucket.pressure` when above 0.
//! * The admission gate refuses a write with `STORAGE_BACKPRESSURE` (72) when
//!   `L0 + flushes the write needs + max_write_buffer_number (2) >= 20` (a PutKv v0/v1 client gets
//!   the retriable `KV_STORAGE_EXCEPTION` instead; this engine's only client speaks v2).
//!
//! The model of the storage: a bucket's writes fill a memtable of
//! `kv.rocksdb.writebuffer.size` bytes (the encoded KV batch size); each full memtable becomes
//! one L0 file. Once there are 4 L0 files (RocksDB's `level0_file_num_compaction_trigger`), a
//! compaction takes all of them, and completes `embedded.kv.compaction-time-per-file` per file
//! later (an embedded-only knob standing for the machine's compaction speed); files flushed
//! meanwhile wait for the next one. So under a steady load the pressure rises while compaction
//! lags and falls once it caught up, like a real server's, with no fault injected. The options
//! are this engine's `embedded.`-prefixed copies of the server's (see docs/configuration.md).

use std::time::{Duration, Instant};

/// RocksDB's `level0_slowdown_writes_trigger` (a Fluss server does not change it).
const ROCKSDB_L0_SLOWDOWN: u64 = 20;
/// RocksDB's `level0_file_num_compaction_trigger`.
const L0_COMPACTION_TRIGGER: u64 = 4;
/// Fluss's `kv.rocksdb.writebuffer.count` (2): memtables that may still become L0 files.
const MAX_WRITE_BUFFER_NUMBER: u64 = 2;
/// The floor of the pressure after a refused write (`DELAYED_WRITE_PRESSURE_FLOOR`).
const REJECTED_FLOOR: f32 = 0.8;

/// The engine's storage options (from the connection configuration).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PressureConfig {
    /// `embedded.kv.backpressure.l0-slowdown-trigger`.
    pub l0_slowdown_trigger: u64,
    /// `embedded.kv.rocksdb.writebuffer.size`.
    pub write_buffer_size: u64,
    /// `embedded.kv.compaction-time-per-file`.
    pub compaction_per_file: Duration,
}

/// One bucket's storage model.
#[derive(Debug, Default)]
pub(crate) struct Storage {
    memtable: u64,
    l0_files: u64,
    /// A compaction running: (files it takes, when it completes).
    compaction: Option<(u64, Instant)>,
    rejected: bool,
}

impl Storage {
    /// Let time pass: a compaction done by `now` removes its files; start the next one when due.
    fn advance(&mut self, cfg: &PressureConfig, now: Instant) {
        if let Some((files, done)) = self.compaction {
            if now >= done {
                self.l0_files -= files.min(self.l0_files);
                self.compaction = None;
            }
        }
        if self.compaction.is_none() && self.l0_files >= L0_COMPACTION_TRIGGER {
            let time = cfg.compaction_per_file.saturating_mul(u32::try_from(self.l0_files).unwrap_or(u32::MAX));
            self.compaction = Some((self.l0_files, now + time));
        }
    }

    /// The admission gate for a write of `bytes` at `now`: `false` = refused with
    /// `STORAGE_BACKPRESSURE` (and the pressure floor is latched).
    pub(crate) fn admit(&mut self, cfg: &PressureConfig, bytes: u64, now: Instant) -> bool {
        self.advance(cfg, now);
        let flushes = (self.memtable + bytes).div_ceil(cfg.write_buffer_size.max(1));
        if self.l0_files + flushes + MAX_WRITE_BUFFER_NUMBER >= ROCKSDB_L0_SLOWDOWN {
            self.rejected = true;
            return false;
        }
        true
    }

    /// A write of `bytes` was applied at `now`: full memtables become L0 files.
    pub(crate) fn written(&mut self, cfg: &PressureConfig, bytes: u64, now: Instant) {
        self.rejected = false;
        self.memtable += bytes;
        let size = cfg.write_buffer_size.max(1);
        self.l0_files += self.memtable / size;
        self.memtable %= size;
        self.advance(cfg, now);
    }

    /// The pressure a PutKv answer carries now (0..0.999).
    pub(crate) fn pressure(&self, cfg: &PressureConfig) -> f32 {
        let trigger = cfg.l0_slowdown_trigger;
        let mut p = if ROCKSDB_L0_SLOWDOWN <= trigger || self.l0_files < trigger {
            0.0
        } else {
            let window = ROCKSDB_L0_SLOWDOWN - trigger;
            (self.l0_files - trigger).min(window - 1) as f32 / window as f32
        };
        if self.rejected {
            p = p.max(REJECTED_FLOOR);
        }
        p.min(0.999)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(trigger: u64) -> PressureConfig {
        PressureConfig { l0_slowdown_trigger: trigger, write_buffer_size: 1024, compaction_per_file: Duration::from_millis(10) }
    }

    #[test]
    fn pressure_follows_l0_files_between_the_two_triggers() {
        let c = cfg(8);
        let mut s = Storage::default();
        let t = Instant::now();
        for files in 0..8 {
            s.l0_files = files;
            assert_eq!(s.pressure(&c), 0.0, "{files} files");
        }
        s.l0_files = 8;
        assert_eq!(s.pressure(&c), 0.0);
        s.l0_files = 11;
        assert!((s.pressure(&c) - 3.0 / 12.0).abs() < 1e-6);
        s.l0_files = 40;
        assert!((s.pressure(&c) - 11.0 / 12.0).abs() < 1e-6, "capped at (window - 1) / window");
        // A trigger at or above RocksDB's disables it.
        s.l0_files = 25;
        assert_eq!(s.pressure(&cfg(20)), 0.0);
        let _ = t;
    }

    #[test]
    fn writes_flush_memtables_compaction_catches_up_and_the_gate_refuses_near_the_stall() {
        let c = cfg(1);
        let mut s = Storage::default();
        let t0 = Instant::now();
        // 3 full memtables: 3 L0 files, below the compaction trigger; pressure (3-1)/19.
        assert!(s.admit(&c, 3 * 1024, t0));
        s.written(&c, 3 * 1024, t0);
        assert_eq!(s.l0_files, 3);
        assert!((s.pressure(&c) - 2.0 / 19.0).abs() < 1e-6);
        // A 4th starts a compaction of 4 files, done 40 ms later; meanwhile more files arrive.
        s.written(&c, 1024, t0);
        assert_eq!(s.compaction.map(|(n, _)| n), Some(4));
        s.written(&c, 5 * 1024, t0 + Duration::from_millis(5));
        assert_eq!(s.l0_files, 9);
        let high = s.pressure(&c);
        s.advance(&c, t0 + Duration::from_millis(40));
        assert_eq!(s.l0_files, 5, "the compaction took its 4 files");
        assert!(s.pressure(&c) < high, "pressure falls once compaction caught up");
        // Near RocksDB's stall the gate refuses, latching the 0.8 floor until a write succeeds.
        s.l0_files = 17;
        s.compaction = Some((0, t0 + Duration::from_secs(3600)));
        assert!(!s.admit(&c, 1, t0 + Duration::from_millis(41)));
        assert!(s.pressure(&c) >= 0.8);
        s.l0_files = 0;
        assert!(s.admit(&c, 1, t0 + Duration::from_millis(42)));
        s.written(&c, 1, t0 + Duration::from_millis(42));
        assert_eq!(s.pressure(&c), 0.0);
    }
}
