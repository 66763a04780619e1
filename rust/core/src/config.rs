//! Connection configuration: Fluss's client keys where they exist, plus ours.
//!
//! Values take Fluss's forms (`"64mb"`, `"30s"`, `"100 ms"`) or plain numbers (bytes,
//! milliseconds). Unknown keys are an error, so a typo never silently falls back to a default.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::error::{ClientCode, Error, Result};

/// How rows of a log table without bucket key are spread over buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoKeyAssigner {
    /// Keep one bucket until its batch is full, then move to another (default).
    Sticky,
    /// One bucket after another, per record.
    RoundRobin,
}

/// When the durable embedded engine calls fsync.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsyncPolicy {
    /// fsync every touched file before a write is acknowledged (survives power loss).
    Always,
    /// Only write(2) before acknowledging: survives a killed process, not a crashed machine.
    Never,
}

/// `client.security.protocol`: how the client authenticates to the servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecurityProtocol {
    /// No authentication (default).
    Plaintext,
    /// SASL (`client.security.sasl.mechanism`, only PLAIN in Fluss 0.9) on every connection,
    /// right after ApiVersions and before any other request.
    Sasl,
}

/// A value that must never be shown: its `Debug` and `Display` print `***`. Used for passwords
/// and for JAAS configurations (which carry one).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    /// Wrap a secret value (its `Debug` shows `***`).
    pub fn new(s: impl Into<String>) -> Secret {
        Secret(s.into())
    }

    /// The secret itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// SASL/PLAIN credentials resolved from the configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaslPlain {
    /// The SASL/PLAIN user name.
    pub username: String,
    /// The SASL/PLAIN password.
    pub password: Secret,
}

impl SaslPlain {
    /// The PLAIN initial response (RFC 4616): empty authorization id, NUL, user, NUL, password.
    pub fn token(&self) -> Vec<u8> {
        let mut t = Vec::with_capacity(2 + self.username.len() + self.password.0.len());
        t.push(0);
        t.extend_from_slice(self.username.as_bytes());
        t.push(0);
        t.extend_from_slice(self.password.0.as_bytes());
        t
    }
}

/// What a configuration key's value is. Bindings use it to take native values (a Python
/// `timedelta` for a [`KeyKind::Duration`] key) and to redact [`KeyKind::Secret`] values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyKind {
    /// `bootstrap.servers`.
    Address,
    /// A size: `"64mb"`, `"2 MiB"`, or a plain number of bytes.
    Size,
    /// A duration: `"30s"`, `"100 ms"`, `"2min"`, or a plain number of milliseconds (as the Java
    /// client reads it: a bare `"30"` is 30 ms).
    Duration,
    /// An integer.
    Integer,
    /// `true` or `false`.
    Bool,
    /// One of a few words (`all`, `sticky`, `SASL`, ...).
    Choice,
    /// Free text.
    Text,
    /// A secret (a password, a JAAS line carrying one): never echoed in errors, logs, `repr`s or
    /// a binding's dictionary of the configuration unless the caller asks for it.
    Secret,
}

/// Whether `key`'s value must never be shown (bindings use it to redact configurations).
pub fn is_secret_key(key: &str) -> bool {
    key_kind(key) == Some(KeyKind::Secret)
}

/// What is shown for the value of `key`: `***` for a [`KeyKind::Secret`] key, the value otherwise.
pub fn shown_value<'a>(key: &str, value: &'a str) -> &'a str {
    if is_secret_key(key) {
        "***"
    } else {
        value
    }
}

/// Parsed configuration. Build it with [`Config::from_pairs`] or start from
/// [`Config::default`] and set fields. Its `Debug` never shows a secret.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// `bootstrap.servers`: `"embedded"`, `"embedded:<dir>"` or `"host:port[,host:port]"`. Empty
    /// (the default) means not set: connecting without an address is
    /// [`ClientCode::InvalidConfig`], never a silent in-memory engine.
    pub bootstrap_servers: String,
    /// `client.writer.buffer.memory-size` (64 MiB).
    pub buffer_memory_size: u64,
    /// `client.writer.buffer.wait-timeout`: `None` = unbounded (default), `Some(0)` = never block.
    pub buffer_wait_timeout: Option<Duration>,
    /// `client.writer.batch-size` (2 MiB).
    pub batch_size: u64,
    /// `client.writer.batch-timeout` (100 ms): how long a non-full batch lingers.
    pub batch_timeout: Duration,
    /// `client.writer.acks`: -1 (all, default), 0 or 1.
    pub acks: i32,
    /// `client.writer.retries` (i32::MAX).
    pub retries: u32,
    /// `client.writer.retry-backoff` (100 ms), doubled per attempt up to 1 s.
    pub retry_backoff: Duration,
    /// `client.writer.enable-idempotence` (true).
    pub enable_idempotence: bool,
    /// `client.writer.kv-backpressure.max-throttle` (3 s): how long a bucket of a primary-key
    /// table waits before its next send when the server reports storage pressure 1; pressure p
    /// waits `max-throttle x p^2`.
    pub kv_backpressure_max_throttle: Duration,
    /// `client.writer.dynamic-create-partition.enabled` (true): a writer creates a partition
    /// that its rows name and that does not exist; when false their writes fail with
    /// `PARTITION_NOT_EXISTS`.
    pub dynamic_create_partition: bool,
    /// `client.writer.partition-idle-timeout` (60 s, ours): a writer of a partitioned table
    /// releases what it keeps for a partition (its batches and sender task) once the partition had
    /// nothing pending for this long; checked when the writer next opens a partition, and a later
    /// row for the partition opens it again.
    pub partition_idle_timeout: Duration,
    /// `client.writer.slow-callback-threshold` (1 s, ours; 0 turns it off): a callback that runs
    /// this long is counted (`WriterStats::slow_callbacks`) and logged with its operation and
    /// what it held up.
    pub slow_callback_threshold: Duration,
    /// `client.id` (empty): names this connection in metrics (`fluss_writer::metrics`).
    pub client_id: String,
    /// `client.writer.max-inflight-requests-per-bucket` (5; at most 5 with idempotence, forced to 1
    /// without it so that retries cannot reorder a bucket).
    pub max_inflight_per_bucket: usize,
    /// `client.writer.request-max-size` (10 MiB).
    pub request_max_size: u64,
    /// `client.request-timeout` (30 s).
    pub request_timeout: Duration,
    /// `client.response-max-size` (100 MiB): the largest response frame accepted from a server.
    /// A larger length prefix is a `PROTOCOL` error of that connection (closed, in-flight
    /// requests retried on a new one); the body is read as it arrives, never allocated in
    /// advance from the prefix.
    pub response_max_size: u64,
    /// `client.writer.delivery-timeout` (120 s): every operation completes within it.
    pub delivery_timeout: Duration,
    /// `client.writer.bucket.no-key-assigner` (sticky).
    pub no_key_assigner: NoKeyAssigner,
    /// `client.io-threads` (1): tokio worker threads of the connection's I/O runtime.
    pub io_threads: usize,
    /// `embedded.fsync` (always): fsync policy of `embedded:<dir>`.
    pub embedded_fsync: FsyncPolicy,
    /// `embedded.default-bucket-number` (1): bucket count when a descriptor gives none.
    pub default_bucket_number: i32,
    /// `embedded.kv.backpressure.l0-slowdown-trigger` (8): the embedded engine's copy of the Fluss
    /// 1.0 server option `kv.backpressure.l0-slowdown-trigger` (L0 files at which primary-key
    /// buckets start reporting storage pressure).
    pub embedded_kv_l0_slowdown_trigger: u64,
    /// `embedded.kv.rocksdb.writebuffer.size` (64 MiB): the embedded engine's copy of the server
    /// option `kv.rocksdb.writebuffer.size` (bytes a bucket writes per L0 file of its model).
    pub embedded_kv_write_buffer_size: u64,
    /// `embedded.kv.compaction-time-per-file` (10 ms, embedded only): how long the model's
    /// compaction takes per L0 file.
    pub embedded_kv_compaction_time_per_file: Duration,
    /// `embedded.datalake.format` (none): the embedded engine's copy of the server option
    /// `datalake.format` (the cluster's lake): new tables get it as their `table.datalake.format`
    /// and may turn `table.datalake.enabled` on (no tiering: the rows stay in the engine).
    pub embedded_datalake_format: Option<crate::wire::lake::LakeFormat>,
    /// `client.security.protocol` (PLAINTEXT).
    pub security_protocol: SecurityProtocol,
    /// `client.security.sasl.mechanism` (PLAIN, the only one Fluss 0.9 has), upper case.
    pub sasl_mechanism: String,
    /// `client.security.sasl.username`.
    pub sasl_username: Option<String>,
    /// `client.security.sasl.password`.
    pub sasl_password: Option<Secret>,
    /// `client.security.sasl.jaas.config`: `username` and `password` are taken from it when the
    /// two keys above are absent.
    pub sasl_jaas_config: Option<Secret>,
    /// `client.address-map`: `advertised=reachable` pairs of `host:port`, comma-separated. The
    /// client dials `reachable` whenever the cluster names `advertised` (servers behind port
    /// forwarding, NAT or a proxy, whose advertised listeners the client cannot reach). Empty by
    /// default; an address not in the map is dialled as advertised.
    pub address_map: Vec<(String, String)>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            bootstrap_servers: String::new(),
            buffer_memory_size: 64 << 20,
            buffer_wait_timeout: None,
            batch_size: 2 << 20,
            batch_timeout: Duration::from_millis(100),
            acks: -1,
            retries: i32::MAX as u32,
            retry_backoff: Duration::from_millis(100),
            enable_idempotence: true,
            kv_backpressure_max_throttle: Duration::from_secs(3),
            dynamic_create_partition: true,
            partition_idle_timeout: Duration::from_secs(60),
            slow_callback_threshold: Duration::from_secs(1),
            client_id: String::new(),
            max_inflight_per_bucket: 5,
            request_max_size: 10 << 20,
            request_timeout: Duration::from_secs(30),
            response_max_size: DEFAULT_RESPONSE_MAX_SIZE,
            delivery_timeout: Duration::from_secs(120),
            no_key_assigner: NoKeyAssigner::Sticky,
            io_threads: 1,
            embedded_fsync: FsyncPolicy::Always,
            default_bucket_number: 1,
            embedded_kv_l0_slowdown_trigger: 8,
            embedded_kv_write_buffer_size: 64 << 20,
            embedded_kv_compaction_time_per_file: Duration::from_millis(10),
            embedded_datalake_format: None,
            security_protocol: SecurityProtocol::Plaintext,
            sasl_mechanism: "PLAIN".into(),
            sasl_username: None,
            sasl_password: None,
            sasl_jaas_config: None,
            address_map: Vec::new(),
        }
    }
}

/// Default of `client.response-max-size`: 100 MiB, far above the largest legitimate answer to
/// this client (read-back fetches at most 8 MiB per FetchLog; metadata and lookups are smaller).
pub const DEFAULT_RESPONSE_MAX_SIZE: u64 = 100 << 20;
/// Smallest accepted `client.response-max-size` (1 KiB): below it, ApiVersions could not fit.
pub const MIN_RESPONSE_MAX_SIZE: u64 = 1 << 10;
/// Largest accepted `client.response-max-size`, 2 GiB: a frame length is an `int32`, so this
/// admits every length a server can announce (no limit beyond the protocol's).
pub const MAX_RESPONSE_MAX_SIZE: u64 = 2 << 30;

macro_rules! key_table {
    ($($key:literal => $kind:ident,)*) => {
        /// Every key [`Config::set`] understands.
        pub const KEYS: &[&str] = &[$($key),*];

        /// What the value of `key` is; `None` for a key that [`Config::set`] does not know.
        pub fn key_kind(key: &str) -> Option<KeyKind> {
            match key {
                $($key => Some(KeyKind::$kind),)*
                _ => None,
            }
        }
    };
}

// The one table of keys and their kinds (`Config::set` parses each; a test checks they agree).
key_table! {
    "bootstrap.servers" => Address,
    "client.writer.buffer.memory-size" => Size,
    "client.writer.buffer.wait-timeout" => Duration,
    "client.writer.batch-size" => Size,
    "client.writer.batch-timeout" => Duration,
    "client.writer.acks" => Choice,
    "client.writer.retries" => Integer,
    "client.writer.retry-backoff" => Duration,
    "client.writer.enable-idempotence" => Bool,
    "client.writer.kv-backpressure.max-throttle" => Duration,
    "client.writer.dynamic-create-partition.enabled" => Bool,
    "client.writer.partition-idle-timeout" => Duration,
    "client.writer.slow-callback-threshold" => Duration,
    "client.id" => Text,
    "client.writer.max-inflight-requests-per-bucket" => Integer,
    "client.writer.request-max-size" => Size,
    "client.request-timeout" => Duration,
    "client.response-max-size" => Size,
    "client.writer.delivery-timeout" => Duration,
    "client.writer.bucket.no-key-assigner" => Choice,
    "client.io-threads" => Integer,
    "embedded.fsync" => Choice,
    "embedded.default-bucket-number" => Integer,
    "embedded.kv.backpressure.l0-slowdown-trigger" => Integer,
    "embedded.kv.rocksdb.writebuffer.size" => Size,
    "embedded.kv.compaction-time-per-file" => Duration,
    "embedded.datalake.format" => Choice,
    "client.security.protocol" => Choice,
    "client.security.sasl.mechanism" => Text,
    "client.security.sasl.username" => Text,
    "client.security.sasl.password" => Secret,
    "client.security.sasl.jaas.config" => Secret,
    "client.address-map" => Text,
}

fn invalid(key: &str, value: &str, why: &str) -> Error {
    Error::client(ClientCode::InvalidConfig, format!("{key} = {value:?}: {why}"))
}

/// What to pass as the address, in every error about a missing or empty one.
const ADDRESS_FORMS: &str =
    "pass \"host:port[,host:port]\" for a Fluss cluster, or \"embedded\" (in memory) / \"embedded:/path\" (durable) for the embedded engine";

/// The error of a connection without an address (`what`: "is not set", "is empty").
fn address_error(what: &str) -> Error {
    Error::client(ClientCode::InvalidConfig, format!("bootstrap.servers {what}: {ADDRESS_FORMS}"))
}

/// Keys of pyfluss and fluss-rs (Apache Fluss's Rust client and its Python binding, up to 1.0)
/// that fluss-writer spells differently, with fluss-writer's key; `None` where nothing here
/// corresponds. An unknown key found here gets a "did you mean" naming ours.
const OTHER_CLIENT_KEYS: &[(&str, Option<&str>)] = &[
    ("writer.acks", Some("client.writer.acks")),
    ("writer.retries", Some("client.writer.retries")),
    ("writer.batch-size", Some("client.writer.batch-size")),
    ("writer.batch-timeout-ms", Some("client.writer.batch-timeout")),
    ("writer.request-max-size", Some("client.writer.request-max-size")),
    ("writer.enable-idempotence", Some("client.writer.enable-idempotence")),
    ("writer.max-inflight-requests-per-bucket", Some("client.writer.max-inflight-requests-per-bucket")),
    ("writer.buffer.memory-size", Some("client.writer.buffer.memory-size")),
    ("writer.buffer.wait-timeout-ms", Some("client.writer.buffer.wait-timeout")),
    ("writer.bucket.no-key-assigner", Some("client.writer.bucket.no-key-assigner")),
    // fluss-writer bounds connecting by the request timeout.
    ("connect-timeout", Some("client.request-timeout")),
    ("security.protocol", Some("client.security.protocol")),
    ("security.sasl.mechanism", Some("client.security.sasl.mechanism")),
    ("security.sasl.username", Some("client.security.sasl.username")),
    ("security.sasl.password", Some("client.security.sasl.password")),
    ("writer.dynamic-batch-size.enabled", None),
    ("writer.dynamic-batch-size-min", None),
    ("writer.kv-backpressure.max-throttle-ms", Some("client.writer.kv-backpressure.max-throttle")),
];

/// Levenshtein distance between two short ASCII-ish strings (by `char`).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(diag + usize::from(ca != *cb));
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The key fluss-writer knows that an unknown `key` most likely meant, and whether `key` is a
/// pyfluss / fluss-rs name. `Some((None, true))`: a key of those clients with no counterpart here.
fn suggest_key(key: &str) -> Option<(Option<&'static str>, bool)> {
    let k = key.trim().to_ascii_lowercase();
    if let Some((_, ours)) = OTHER_CLIENT_KEYS.iter().find(|(theirs, _)| *theirs == k) {
        return Some((*ours, true));
    }
    if k.starts_with("scanner.") || k.starts_with("remote-file.") {
        return Some((None, true));
    }
    // The Java client's names without their `client.` prefix, or with a `-ms` suffix.
    let stem = k.strip_suffix("-ms").unwrap_or(&k);
    for candidate in [k.as_str(), stem] {
        for prefixed in [candidate.to_string(), format!("client.{candidate}")] {
            if let Some(known) = KEYS.iter().find(|known| **known == prefixed) {
                return Some((Some(*known), false));
            }
        }
    }
    // A typo: the nearest key within a few edits (at most one edit per four characters).
    KEYS.iter()
        .map(|known| (edit_distance(&k, known), *known))
        .filter(|(d, known)| *d <= 3 && *d * 4 <= known.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, known)| (Some(known), false))
}

/// The error of an unknown key, with a "did you mean" when a known key is close.
fn unknown_key(key: &str) -> Error {
    let message = match suggest_key(key) {
        Some((Some(ours), true)) => {
            format!("unknown configuration key {key:?}, a pyfluss / fluss-rs name; did you mean {ours:?} (fluss-writer's name for it)?")
        }
        Some((None, _)) => format!(
            "unknown configuration key {key:?}, a pyfluss / fluss-rs setting that fluss-writer (a writer) has no counterpart of; remove it"
        ),
        Some((Some(ours), false)) => format!("unknown configuration key {key:?}; did you mean {ours:?}?"),
        None => format!("unknown configuration key {key:?}; known keys: {}", KEYS.join(", ")),
    };
    Error::client(ClientCode::InvalidConfig, message)
}

/// Parse a size: `"64mb"`, `"2 MiB"`, `"512k"`, `"1g"`, or plain bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit.trim() {
        "" | "b" | "bytes" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// The longest duration a configuration key accepts (365 days). Longer values are
/// [`ClientCode::InvalidConfig`]: they mean a typo or a wish for "no bound", which the keys that
/// allow it spell `unbounded`.
pub const MAX_CONFIG_DURATION: Duration = Duration::from_secs(365 * 86_400);

/// Parse a duration: `"30s"`, `"100 ms"`, `"2min"`, `"1h"`, `"500us"`, or plain milliseconds.
/// `None` for anything unparsable, negative, or longer than [`MAX_CONFIG_DURATION`].
pub fn parse_duration(s: &str) -> Option<Duration> {
    let t = s.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    if !n.is_finite() || n < 0.0 {
        return None;
    }
    let secs = match unit.trim() {
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => n / 1e3,
        "us" | "micros" | "microsecond" | "microseconds" => n / 1e6,
        "ns" | "nanos" | "nanosecond" | "nanoseconds" => n / 1e9,
        "s" | "sec" | "secs" | "second" | "seconds" => n,
        "m" | "min" | "mins" | "minute" | "minutes" => n * 60.0,
        "h" | "hour" | "hours" => n * 3600.0,
        "d" | "day" | "days" => n * 86400.0,
        _ => return None,
    };
    if secs > MAX_CONFIG_DURATION.as_secs_f64() {
        return None;
    }
    Some(Duration::from_secs_f64(secs))
}

/// Parse `client.address-map`: `advertised=reachable` pairs of `host:port`, separated by commas;
/// an empty value clears the map.
fn parse_address_map(value: &str) -> std::result::Result<Vec<(String, String)>, String> {
    fn host_port(s: &str) -> std::result::Result<String, String> {
        let s = s.trim();
        match s.rsplit_once(':') {
            Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) => Ok(s.to_string()),
            _ => Err(format!("{s:?} is not host:port")),
        }
    }
    let mut map: Vec<(String, String)> = Vec::new();
    for pair in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (from, to) = pair.split_once('=').ok_or_else(|| format!("{pair:?} is not advertised=reachable"))?;
        let (from, to) = (host_port(from)?, host_port(to)?);
        if map.iter().any(|(f, _)| *f == from) {
            return Err(format!("{from} is mapped twice"));
        }
        map.push((from, to));
    }
    Ok(map)
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

impl Config {
    /// Set one key. Unknown keys and unparsable values are [`ClientCode::InvalidConfig`].
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let size = || parse_size(value).ok_or_else(|| invalid(key, value, "expected a size such as \"64mb\" or a number of bytes"));
        let dur = || {
            parse_duration(value)
                .ok_or_else(|| invalid(key, value, "expected a duration such as \"30s\" or a number of milliseconds, at most 365 days"))
        };
        let int = |lo: i64, hi: i64| {
            value
                .trim()
                .parse::<i64>()
                .ok()
                .filter(|n| (lo..=hi).contains(n))
                .ok_or_else(|| invalid(key, value, &format!("expected an integer in {lo}..={hi}")))
        };
        match key {
            "bootstrap.servers" => {
                if value.trim().is_empty() {
                    return Err(address_error("is empty"));
                }
                self.bootstrap_servers = value.trim().to_string();
            }
            "client.writer.buffer.memory-size" => self.buffer_memory_size = size()?.max(1),
            "client.writer.buffer.wait-timeout" => {
                self.buffer_wait_timeout = match value.trim().to_ascii_lowercase().as_str() {
                    "unbounded" | "infinite" | "inf" | "max" | "-1" => None,
                    _ => Some(dur()?),
                }
            }
            "client.writer.batch-size" => {
                let n = size()?;
                if n < 1024 {
                    return Err(invalid(key, value, "must be at least 1kb"));
                }
                self.batch_size = n;
            }
            "client.writer.batch-timeout" => self.batch_timeout = dur()?,
            "client.writer.acks" => {
                self.acks = match value.trim().to_ascii_lowercase().as_str() {
                    "all" | "-1" => -1,
                    "0" => 0,
                    "1" => 1,
                    _ => return Err(invalid(key, value, "expected all, -1, 0 or 1")),
                }
            }
            "client.writer.retries" => self.retries = int(0, i32::MAX as i64)? as u32,
            "client.writer.retry-backoff" => self.retry_backoff = dur()?,
            "client.writer.enable-idempotence" => {
                self.enable_idempotence = parse_bool(value).ok_or_else(|| invalid(key, value, "expected true or false"))?
            }
            "client.writer.kv-backpressure.max-throttle" => self.kv_backpressure_max_throttle = dur()?,
            "client.writer.dynamic-create-partition.enabled" => {
                self.dynamic_create_partition = parse_bool(value).ok_or_else(|| invalid(key, value, "expected true or false"))?
            }
            "client.writer.partition-idle-timeout" => self.partition_idle_timeout = dur()?,
            "client.writer.slow-callback-threshold" => self.slow_callback_threshold = dur()?,
            "client.id" => self.client_id = value.to_string(),
            "client.writer.max-inflight-requests-per-bucket" => self.max_inflight_per_bucket = int(1, 1000)? as usize,
            "client.writer.request-max-size" => self.request_max_size = size()?,
            "client.request-timeout" => self.request_timeout = dur()?,
            "client.response-max-size" => {
                let v = size()?;
                if !(MIN_RESPONSE_MAX_SIZE..=MAX_RESPONSE_MAX_SIZE).contains(&v) {
                    return Err(invalid(key, value, "expected a size from 1kb to 2gb"));
                }
                self.response_max_size = v;
            }
            "client.writer.delivery-timeout" => self.delivery_timeout = dur()?,
            "client.writer.bucket.no-key-assigner" => {
                self.no_key_assigner = match value.trim().to_ascii_lowercase().as_str() {
                    "sticky" => NoKeyAssigner::Sticky,
                    "round_robin" | "round-robin" => NoKeyAssigner::RoundRobin,
                    _ => return Err(invalid(key, value, "expected sticky or round_robin")),
                }
            }
            "client.io-threads" => self.io_threads = int(1, 64)? as usize,
            "embedded.fsync" => {
                self.embedded_fsync = match value.trim().to_ascii_lowercase().as_str() {
                    "always" => FsyncPolicy::Always,
                    "never" => FsyncPolicy::Never,
                    _ => return Err(invalid(key, value, "expected always or never")),
                }
            }
            "embedded.default-bucket-number" => self.default_bucket_number = int(1, 128_000)? as i32,
            "embedded.kv.backpressure.l0-slowdown-trigger" => self.embedded_kv_l0_slowdown_trigger = int(1, i32::MAX as i64)? as u64,
            "embedded.kv.rocksdb.writebuffer.size" => {
                let n = size()?;
                if n < 1 {
                    return Err(invalid(key, value, "must be at least 1 byte"));
                }
                self.embedded_kv_write_buffer_size = n;
            }
            "embedded.kv.compaction-time-per-file" => self.embedded_kv_compaction_time_per_file = dur()?,
            "embedded.datalake.format" => {
                self.embedded_datalake_format = match crate::wire::lake::LakeFormat::from_property(Some(value)) {
                    Ok(f) => f,
                    Err(_) => return Err(invalid(key, value, "expected paimon, iceberg, lance or hudi")),
                }
            }
            "client.security.protocol" => {
                self.security_protocol = match value.trim().to_ascii_uppercase().as_str() {
                    "PLAINTEXT" => SecurityProtocol::Plaintext,
                    "SASL" => SecurityProtocol::Sasl,
                    _ => return Err(invalid(key, value, "expected PLAINTEXT or SASL")),
                }
            }
            "client.security.sasl.mechanism" => self.sasl_mechanism = value.trim().to_ascii_uppercase(),
            "client.security.sasl.username" => self.sasl_username = Some(value.to_string()),
            // Never echo these values, not even in an error.
            "client.security.sasl.password" => self.sasl_password = Some(Secret::new(value)),
            "client.security.sasl.jaas.config" => self.sasl_jaas_config = Some(Secret::new(value)),
            "client.address-map" => self.address_map = parse_address_map(value).map_err(|why| invalid(key, value, &why))?,
            _ => return Err(unknown_key(key)),
        }
        Ok(())
    }

    /// The address to dial for a server the cluster names `advertised` (`client.address-map`).
    pub fn dial_address<'a>(&'a self, advertised: &'a str) -> &'a str {
        self.address_map.iter().find(|(from, _)| from == advertised).map_or(advertised, |(_, to)| to.as_str())
    }

    /// Build from key/value pairs, then check cross-key rules.
    pub fn from_pairs<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Config> {
        let mut c = Config::default();
        for (k, v) in pairs {
            c.set(k.as_ref(), v.as_ref())?;
        }
        c.validate()?;
        Ok(c)
    }

    /// Build from an explicit address (a binding's `bootstrap` argument or field) and key/value
    /// pairs. The address argument and the `bootstrap.servers` key are one setting: either may
    /// give it; both given and different (after trimming) is [`ClientCode::InvalidConfig`];
    /// neither given is [`ClientCode::InvalidConfig`] too (see [`Config::check_address`]): the
    /// embedded engine is opened only when named. Every binding builds its configuration here.
    pub fn resolve<K: AsRef<str>, V: AsRef<str>>(bootstrap: Option<&str>, pairs: impl IntoIterator<Item = (K, V)>) -> Result<Config> {
        let mut c = Config::default();
        let mut from_key: Option<String> = None;
        for (k, v) in pairs {
            let (k, v) = (k.as_ref(), v.as_ref());
            c.set(k, v)?;
            if k == "bootstrap.servers" {
                from_key = Some(c.bootstrap_servers.clone());
            }
        }
        match (bootstrap, from_key) {
            (Some(arg), Some(key)) if arg.trim() != key => {
                return Err(Error::client(
                    ClientCode::InvalidConfig,
                    format!(
                        "two different addresses: the bootstrap argument is {:?} but the bootstrap.servers key is {key:?}; give one, or the same in both",
                        arg.trim()
                    ),
                ))
            }
            (Some(arg), _) => c.set("bootstrap.servers", arg)?,
            (None, _) => {}
        }
        c.validate()?;
        c.check_address()?;
        Ok(c)
    }

    /// A connection needs an address: `bootstrap.servers` not set is
    /// [`ClientCode::InvalidConfig`] saying what to pass. Nothing is read from the environment.
    pub fn check_address(&self) -> Result<()> {
        if self.bootstrap_servers.trim().is_empty() {
            return Err(address_error("is not set"));
        }
        Ok(())
    }

    /// Build from a map.
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Config> {
        Config::from_pairs(map.iter())
    }

    /// Cross-key rules: idempotence needs acks=all and at most 5 requests in flight per bucket.
    pub fn validate(&self) -> Result<()> {
        self.sasl_credentials()?;
        if self.enable_idempotence {
            if self.acks != -1 {
                return Err(Error::client(ClientCode::InvalidConfig, "client.writer.enable-idempotence requires client.writer.acks = all"));
            }
            if self.max_inflight_per_bucket > 5 {
                return Err(Error::client(
                    ClientCode::InvalidConfig,
                    "client.writer.max-inflight-requests-per-bucket must be at most 5 with idempotence (the server's dedup window)",
                ));
            }
        }
        if self.batch_size > self.buffer_memory_size {
            return Err(Error::client(
                ClientCode::InvalidConfig,
                "client.writer.batch-size must not exceed client.writer.buffer.memory-size",
            ));
        }
        Ok(())
    }

    /// The SASL/PLAIN credentials to authenticate with, `None` for PLAINTEXT. Errors
    /// ([`ClientCode::InvalidConfig`]) name the keys, never a secret value.
    pub fn sasl_credentials(&self) -> Result<Option<SaslPlain>> {
        if self.security_protocol == SecurityProtocol::Plaintext {
            return Ok(None);
        }
        if self.sasl_mechanism != "PLAIN" {
            return Err(Error::client(
                ClientCode::InvalidConfig,
                format!("client.security.sasl.mechanism = {:?}: only PLAIN is supported (as in Fluss 0.9)", self.sasl_mechanism),
            ));
        }
        let (username, password) = match (&self.sasl_username, &self.sasl_password) {
            (Some(u), Some(p)) => (u.clone(), p.clone()),
            (Some(_), None) | (None, Some(_)) => {
                return Err(Error::client(
                    ClientCode::InvalidConfig,
                    "client.security.sasl.username and client.security.sasl.password must be set together",
                ))
            }
            (None, None) => match &self.sasl_jaas_config {
                Some(jaas) => parse_jaas_plain(jaas.expose())?,
                None => {
                    return Err(Error::client(
                        ClientCode::InvalidConfig,
                        "client.security.protocol = SASL needs client.security.sasl.username and client.security.sasl.password, or client.security.sasl.jaas.config",
                    ))
                }
            },
        };
        if username.is_empty() || username.contains('\0') || password.expose().contains('\0') {
            return Err(Error::client(
                ClientCode::InvalidConfig,
                "the SASL username must be non-empty, and neither it nor the password may contain a NUL character",
            ));
        }
        Ok(Some(SaslPlain { username, password }))
    }

    /// Requests in flight per bucket that the sender actually allows: without idempotence a retry
    /// could overtake a later batch, so it is 1 (C3).
    pub fn effective_inflight_per_bucket(&self) -> usize {
        if self.enable_idempotence {
            self.max_inflight_per_bucket
        } else {
            1
        }
    }
}

/// `username` and `password` of a JAAS configuration as the Java client reads it:
/// `<LoginModule class> <flag> key="value" ... ;` (values may be quoted with `"` and use `\"`).
/// Errors never include the configuration text, which holds the password.
fn parse_jaas_plain(jaas: &str) -> Result<(String, Secret)> {
    let bad = |why: &str| Error::client(ClientCode::InvalidConfig, format!("client.security.sasl.jaas.config: {why} (value not shown)"));
    let body = jaas.trim().strip_suffix(';').unwrap_or(jaas.trim());
    let mut chars = body.chars().peekable();
    let mut word = || -> Option<String> {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut w = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            if c == '"' {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => w.push(chars.next()?),
                        '"' => break,
                        c => w.push(c),
                    }
                }
            } else {
                w.push(c);
            }
        }
        (!w.is_empty()).then_some(w)
    };
    let module = word().ok_or_else(|| bad("empty"))?;
    if !module.contains('.') {
        return Err(bad("expected a login module class first"));
    }
    let flag = word().ok_or_else(|| bad("expected a control flag (required) after the login module"))?;
    if !["required", "requisite", "sufficient", "optional"].contains(&flag.to_ascii_lowercase().as_str()) {
        return Err(bad("expected a control flag (required) after the login module"));
    }
    let (mut user, mut pass) = (None, None);
    while let Some(option) = word() {
        let (k, v) = option.split_once('=').ok_or_else(|| bad("expected key=\"value\" options"))?;
        match k {
            "username" => user = Some(v.to_string()),
            "password" => pass = Some(Secret::new(v)),
            _ => {}
        }
    }
    match (user, pass) {
        (Some(u), Some(p)) => Ok((u, p)),
        _ => Err(bad("needs both username=\"...\" and password=\"...\"")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fluss_forms() {
        assert_eq!(parse_size("64mb"), Some(64 << 20));
        assert_eq!(parse_size("2 MiB"), Some(2 << 20));
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("100 ms"), Some(Duration::from_millis(100)));
        assert_eq!(parse_duration("250"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("2min"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("soon"), None);
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors() {
        let e = Config::from_pairs([("client.writer.batchsize", "1mb")]).unwrap_err();
        assert_eq!(e.code(), ClientCode::InvalidConfig as i32);
        assert!(e.message().contains("unknown configuration key"));
        let e = Config::from_pairs([("client.writer.batch-size", "lots")]).unwrap_err();
        assert!(e.message().contains("client.writer.batch-size"));
    }

    #[test]
    fn no_address_is_invalid_config_saying_what_to_pass() {
        let none: [(&str, &str); 0] = [];
        let expect = |e: Error, what: &str| {
            assert_eq!(e.code(), ClientCode::InvalidConfig as i32, "{what}");
            assert!(e.message().starts_with(&format!("bootstrap.servers {what}:")), "{}", e.message());
            for form in ["\"host:port[,host:port]\"", "\"embedded\"", "\"embedded:/path\""] {
                assert!(e.message().contains(form), "{what}: {form} missing from {}", e.message());
            }
        };
        assert_eq!(Config::default().bootstrap_servers, "", "no address by default");
        expect(Config::resolve(None, none).unwrap_err(), "is not set");
        expect(Config::resolve(None, [("client.writer.batch-timeout", "5ms")]).unwrap_err(), "is not set");
        expect(Config::default().check_address().unwrap_err(), "is not set");
        expect(Config::resolve(Some(""), none).unwrap_err(), "is empty");
        expect(Config::resolve(Some("  "), none).unwrap_err(), "is empty");
        expect(Config::resolve(None, [("bootstrap.servers", "")]).unwrap_err(), "is empty");
        // A configuration without an address is still a valid value (it can be completed later).
        assert!(Config::from_pairs([("client.writer.batch-timeout", "5ms")]).is_ok());
        assert_eq!(Config::resolve(Some("embedded"), none).unwrap().bootstrap_servers, "embedded");
    }

    #[test]
    fn key_kinds_agree_with_set() {
        for key in KEYS {
            let kind = key_kind(key).unwrap_or_else(|| panic!("{key} has no kind"));
            let mut c = Config::default();
            match kind {
                KeyKind::Duration => {
                    c.set(key, "30s").unwrap();
                    c.set(key, "250").unwrap();
                    assert!(c.set(key, "64mb").is_err(), "{key} takes a size");
                }
                KeyKind::Size => {
                    c.set(key, "64mb").unwrap();
                    assert!(c.set(key, "30s").is_err(), "{key} takes a duration");
                }
                _ => assert!(c.set(key, "30s").is_err() || matches!(kind, KeyKind::Text | KeyKind::Secret | KeyKind::Address), "{key}"),
            }
        }
        assert_eq!(key_kind("client.request-timeout"), Some(KeyKind::Duration));
        assert_eq!(key_kind("client.writer.batch-size"), Some(KeyKind::Size));
        assert_eq!(key_kind("no.such.key"), None);
        assert!(is_secret_key("client.security.sasl.password") && is_secret_key("client.security.sasl.jaas.config"));
        assert!(!is_secret_key("client.security.sasl.username"));
        assert_eq!(shown_value("client.security.sasl.password", "hunter2"), "***");
        assert_eq!(shown_value("client.id", "app"), "app");
    }

    #[test]
    fn unknown_keys_of_other_clients_and_typos_get_a_did_you_mean() {
        let msg = |k: &str| {
            let e = Config::from_pairs([(k, "1")]).unwrap_err();
            assert_eq!(e.code(), ClientCode::InvalidConfig as i32, "{k}");
            e.message().to_string()
        };
        for (theirs, ours) in [
            ("writer.batch-timeout-ms", "client.writer.batch-timeout"),
            ("writer.batch-size", "client.writer.batch-size"),
            ("writer.acks", "client.writer.acks"),
            ("writer.retries", "client.writer.retries"),
            ("writer.request-max-size", "client.writer.request-max-size"),
            ("writer.buffer.wait-timeout-ms", "client.writer.buffer.wait-timeout"),
            ("connect-timeout", "client.request-timeout"),
            ("security.sasl.password", "client.security.sasl.password"),
        ] {
            let m = msg(theirs);
            assert!(m.contains("pyfluss") && m.contains(&format!("did you mean {ours:?}")), "{theirs}: {m}");
        }
        for (typo, ours) in [
            ("client.writer.batchsize", "client.writer.batch-size"),
            ("bootstrap_servers", "bootstrap.servers"),
            ("bootstrap.server", "bootstrap.servers"),
            ("Client.Request-Timeout", "client.request-timeout"),
            ("request-timeout", "client.request-timeout"),
            ("writer.delivery-timeout-ms", "client.writer.delivery-timeout"),
            ("client.writer.retry-backof", "client.writer.retry-backoff"),
        ] {
            let m = msg(typo);
            assert!(m.starts_with("unknown configuration key") && m.contains(&format!("did you mean {ours:?}?")), "{typo}: {m}");
        }
        let m = msg("scanner.log.max-poll-records");
        assert!(m.contains("no counterpart") && !m.contains("did you mean"), "{m}");
        let m = msg("writer.dynamic-batch-size.enabled");
        assert!(m.contains("no counterpart"), "{m}");
        let m = msg("client.no.such.key");
        assert!(!m.contains("did you mean") && m.contains("known keys: bootstrap.servers"), "{m}");
        // A suggestion never echoes a secret: only the key is named.
        let e = Config::from_pairs([("client.security.sasl.pasword", "hunter2")]).unwrap_err();
        assert!(e.message().contains("did you mean \"client.security.sasl.password\"") && !e.message().contains("hunter2"));
    }

    #[test]
    fn bootstrap_argument_and_key_are_one_setting() {
        let none: [(&str, &str); 0] = [];
        let c = Config::resolve(None, [("bootstrap.servers", "h:9123")]).unwrap();
        assert_eq!(c.bootstrap_servers, "h:9123");
        let c = Config::resolve(Some("h:9123"), none).unwrap();
        assert_eq!(c.bootstrap_servers, "h:9123");
        let c = Config::resolve(Some(" h:9123 "), [("bootstrap.servers", "h:9123")]).unwrap();
        assert_eq!(c.bootstrap_servers, "h:9123");
        let e = Config::resolve(Some("embedded"), [("bootstrap.servers", "h:9123")]).unwrap_err();
        assert_eq!(e.code(), ClientCode::InvalidConfig as i32);
        assert!(e.message().contains("h:9123") && e.message().contains("embedded"), "{}", e.message());
        assert!(Config::resolve(Some(""), none).is_err(), "an empty address is no address");
        assert!(Config::resolve(Some(""), [("bootstrap.servers", "h:9123")]).is_err(), "an empty argument is not a missing one");
    }

    #[test]
    fn durations_beyond_a_year_are_invalid_not_panics() {
        for v in ["100000000000000000000000s", "9223372036854775807s", "18446744073709551615", "1e308s", "366d"] {
            let e = Config::from_pairs([("client.request-timeout", v)]).unwrap_err();
            assert_eq!(e.code(), ClientCode::InvalidConfig as i32, "{v}");
        }
        assert_eq!(Config::from_pairs([("client.request-timeout", "365d")]).unwrap().request_timeout, MAX_CONFIG_DURATION);
    }

    #[test]
    fn sasl_credentials_from_keys_or_jaas_and_never_shown() {
        let none: [(&str, &str); 0] = [];
        assert_eq!(Config::from_pairs(none).unwrap().sasl_credentials().unwrap(), None);
        let keys = Config::from_pairs([
            ("client.security.protocol", "sasl"),
            ("client.security.sasl.username", "alice"),
            ("client.security.sasl.password", "s3cr3t-pw"),
        ])
        .unwrap();
        let c = keys.sasl_credentials().unwrap().unwrap();
        assert_eq!((c.username.as_str(), c.password.expose()), ("alice", "s3cr3t-pw"));
        assert_eq!(c.token(), b"\0alice\0s3cr3t-pw");
        assert!(!format!("{keys:?}").contains("s3cr3t-pw"), "Debug of a Config shows no password");
        assert!(!format!("{c:?}").contains("s3cr3t-pw"));
        let jaas = r#"org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required username="bob" password="p\"w d";"#;
        let c = Config::from_pairs([("client.security.protocol", "SASL"), ("client.security.sasl.jaas.config", jaas)]).unwrap();
        let cred = c.sasl_credentials().unwrap().unwrap();
        assert_eq!((cred.username.as_str(), cred.password.expose()), ("bob", "p\"w d"));
        assert!(!format!("{c:?}").contains("p\"w d"));
        for (pairs, what) in [
            (vec![("client.security.protocol", "SASL")], "no credentials"),
            (vec![("client.security.protocol", "SASL"), ("client.security.sasl.username", "a")], "user without password"),
            (
                vec![
                    ("client.security.protocol", "SASL"),
                    ("client.security.sasl.jaas.config", "PlainLoginModule required password=\"hunter2\";"),
                ],
                "no module class",
            ),
            (
                vec![("client.security.protocol", "SASL"), ("client.security.sasl.jaas.config", "a.b.C required password=\"hunter2\";")],
                "no username",
            ),
            (
                vec![
                    ("client.security.protocol", "SASL"),
                    ("client.security.sasl.mechanism", "SCRAM-SHA-256"),
                    ("client.security.sasl.username", "a"),
                    ("client.security.sasl.password", "hunter2"),
                ],
                "mechanism",
            ),
        ] {
            // `from_pairs` validates the credentials, so a connection never starts without them.
            let e = Config::from_pairs(pairs).unwrap_err();
            assert_eq!(e.code(), ClientCode::InvalidConfig as i32, "{what}");
            assert!(!e.message().contains("hunter2"), "{what}: {}", e.message());
        }
        let e = Config::from_pairs([("client.security.protocol", "kerberos")]).unwrap_err();
        assert_eq!(e.code(), ClientCode::InvalidConfig as i32);
    }

    #[test]
    fn response_max_size_is_bounded() {
        assert_eq!(Config::default().response_max_size, 100 << 20);
        assert_eq!(Config::from_pairs([("client.response-max-size", "16mb")]).unwrap().response_max_size, 16 << 20);
        assert_eq!(Config::from_pairs([("client.response-max-size", "2gb")]).unwrap().response_max_size, 2 << 30);
        for bad in ["0", "1023", "2049mb", "-1", "huge"] {
            let e = Config::from_pairs([("client.response-max-size", bad)]).unwrap_err();
            assert_eq!(e.code(), ClientCode::InvalidConfig as i32, "{bad}");
            assert!(e.message().contains("client.response-max-size"), "{e:?}");
        }
    }

    #[test]
    fn wait_timeout_forms() {
        let c = Config::from_pairs([("client.writer.buffer.wait-timeout", "0")]).unwrap();
        assert_eq!(c.buffer_wait_timeout, Some(Duration::ZERO));
        let c = Config::from_pairs([("client.writer.buffer.wait-timeout", "5s")]).unwrap();
        assert_eq!(c.buffer_wait_timeout, Some(Duration::from_secs(5)));
        assert_eq!(Config::default().buffer_wait_timeout, None);
    }

    #[test]
    fn idempotence_rules() {
        assert!(Config::from_pairs([("client.writer.acks", "1")]).is_err());
        let c = Config::from_pairs([("client.writer.acks", "1"), ("client.writer.enable-idempotence", "false")]).unwrap();
        assert_eq!(c.effective_inflight_per_bucket(), 1);
        assert!(Config::from_pairs([("client.writer.max-inflight-requests-per-bucket", "6")]).is_err());
    }

    #[test]
    fn address_map() {
        let c = Config::from_pairs([("client.address-map", " 10.0.0.1:9123=127.0.0.1:19123 , host-b:9124=localhost:19124,")]).unwrap();
        assert_eq!(c.dial_address("10.0.0.1:9123"), "127.0.0.1:19123");
        assert_eq!(c.dial_address("host-b:9124"), "localhost:19124");
        assert_eq!(c.dial_address("host-c:9125"), "host-c:9125");
        assert!(Config::default().address_map.is_empty());
        assert!(Config::from_pairs([("client.address-map", "")]).unwrap().address_map.is_empty());
        for bad in ["a:1", "a:1=b", "a:1=b:0", "a:x=b:2", ":1=b:2", "a:1=b:2,a:1=c:3"] {
            let e = Config::from_pairs([("client.address-map", bad)]).unwrap_err();
            assert_eq!(e.code(), ClientCode::InvalidConfig as i32, "{bad}");
            assert!(e.message().contains("client.address-map"), "{bad}: {}", e.message());
        }
    }
}
