//! Shared helpers of the `peers` and `micro` benchmark binaries: argument parsing, medians,
//! percentiles, machine-readable output (one JSON object per line), process RSS and CPU time.

use std::fs::OpenOptions;
use std::io::Write;
use std::sync::Mutex;

/// `--name VALUE` from the command line, or `default`.
pub fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned()).unwrap_or_else(|| default.to_string())
}

/// Whether the flag `name` is present.
pub fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

/// A comma-separated list of numbers.
pub fn list(name: &str, default: &str) -> Vec<u64> {
    arg(name, default).split(',').filter(|s| !s.is_empty()).map(|s| s.trim().parse().expect("number")).collect()
}

pub fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Nearest-rank percentile of unsorted samples (`p` in 0..=100).
pub fn percentile(v: &mut [u64], p: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

static JSON_OUT: Mutex<Option<String>> = Mutex::new(None);

/// Where [`emit`] appends JSON lines (`--json PATH`); stdout gets a copy prefixed by `JSON `.
pub fn init_json() {
    let path = arg("--json", "");
    if !path.is_empty() {
        *JSON_OUT.lock().unwrap() = Some(path);
    }
}

/// Write one result object as a JSON line.
pub fn emit(v: serde_json::Value) {
    let line = v.to_string();
    if let Some(path) = JSON_OUT.lock().unwrap().as_ref() {
        let mut f = OpenOptions::new().create(true).append(true).open(path).expect("open --json file");
        writeln!(f, "{line}").unwrap();
    }
}

/// Resident set size of this process in bytes (from /proc/self/statm).
pub fn rss_bytes() -> u64 {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = s.split_whitespace().nth(1).and_then(|x| x.parse().ok()).unwrap_or(0);
    pages * 4096
}

/// CPU time (user + system) of this whole process so far, in seconds: every thread, the clients'
/// I/O threads and tokio workers included (`getrusage(RUSAGE_SELF)`, microsecond resolution).
pub fn process_cpu_secs() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    assert_eq!(rc, 0, "getrusage failed");
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// `(min, max)` of the samples (NaN for none).
pub fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter().fold((f64::NAN, f64::NAN), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

/// The 1-minute load average (from /proc/loadavg).
pub fn load1() -> f64 {
    std::fs::read_to_string("/proc/loadavg").ok().and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok())).unwrap_or(0.0)
}

/// A payload string such that an (id BIGINT, payload STRING) row carries `row_bytes` bytes of
/// field data (8 for the id, the rest for the string).
pub fn payload(row_bytes: usize) -> String {
    let n = row_bytes.saturating_sub(8).max(1);
    (0..n).map(|i| (b'a' + (i % 26) as u8) as char).collect()
}

/// `n` distinct pseudo-random alphanumeric payloads (about 6 bits of entropy per byte, so a
/// compressor gains a little, as on real text), for rows of `row_bytes` bytes of field data.
pub fn payload_pool(row_bytes: usize, n: usize) -> Vec<String> {
    let len = row_bytes.saturating_sub(8).max(1);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    (0..n)
        .map(|_| {
            (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    ALNUM[(x % 62) as usize] as char
                })
                .collect()
        })
        .collect()
}

/// How many distinct payloads a run cycles through: every record distinct up to 32 MiB of
/// payload, so that no batch repeats a row.
pub fn pool_size(row_bytes: usize, records: u64) -> usize {
    ((32usize << 20) / row_bytes.max(1)).min(records as usize).max(1)
}
