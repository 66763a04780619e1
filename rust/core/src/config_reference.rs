//! The reference of every configuration key: type, unit, default and meaning, in one table
//! ([`REFERENCE`]) that `docs/configuration.md` is rendered from ([`markdown`]).
//!
//! The tests of this module keep the table and the code in step: its keys are exactly
//! [`config::KEYS`](crate::config::KEYS), in that order; each documented default, set on a
//! default [`Config`](crate::config::Config), leaves it unchanged (so it is the code's default); each key accepts a value
//! of its documented type and refuses one of another; and `docs/configuration.md` is what
//! [`markdown`] renders (`FLUSS_WRITER_BLESS=1 cargo test -p fluss-writer --lib config_reference`
//! rewrites it).

/// The kind of value a key takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyType {
    /// A size in bytes: a number, optionally with a unit (`b`, `kb`, `mb`, `gb`, `tb`; binary
    /// multiples, case-insensitive, e.g. `64mb`, `2 MiB`, `512k`).
    Size,
    /// A duration: a number (milliseconds) or a number with a unit (`ns`, `us`, `ms`, `s`, `min`,
    /// `h`, `d`; e.g. `30s`, `100ms`), at most 365 days.
    Duration,
    /// A whole number in the range given in the meaning.
    Integer,
    /// `true` or `false` (also `1`/`0`, `yes`/`no`, `on`/`off`).
    Boolean,
    /// One of the listed words (case-insensitive).
    Choice(&'static [&'static str]),
    /// Free text.
    Text,
    /// Free text that is never shown in errors, logs or printed configurations.
    Secret,
}

impl KeyType {
    /// The type's name in the reference.
    pub fn name(&self) -> String {
        match self {
            KeyType::Size => "size".into(),
            KeyType::Duration => "duration".into(),
            KeyType::Integer => "integer".into(),
            KeyType::Boolean => "boolean".into(),
            KeyType::Choice(words) => words.join(" \\| "),
            KeyType::Text => "string".into(),
            KeyType::Secret => "string (secret)".into(),
        }
    }

    /// The unit of a bare number.
    pub fn unit(&self) -> &'static str {
        match self {
            KeyType::Size => "bytes",
            KeyType::Duration => "milliseconds",
            _ => "",
        }
    }
}

/// One configuration key.
#[derive(Clone, Copy, Debug)]
pub struct KeyReference {
    /// The key, as [`Config::set`](crate::config::Config::set) takes it.
    pub key: &'static str,
    /// What it takes.
    pub kind: KeyType,
    /// The default, as a value of the key (`None`: no default, the key is unset).
    pub default: Option<&'static str>,
    /// Whether Fluss's Java client has the key (`false`: fluss-writer's own).
    pub fluss: bool,
    /// What it does (Markdown, one paragraph).
    pub meaning: &'static str,
}

const fn key(key: &'static str, kind: KeyType, default: Option<&'static str>, fluss: bool, meaning: &'static str) -> KeyReference {
    KeyReference { key, kind, default, fluss, meaning }
}

use KeyType::*;

/// Every configuration key, in the order of [`config::KEYS`](crate::config::KEYS).
pub const REFERENCE: &[KeyReference] = &[
    key(
        "bootstrap.servers",
        Text,
        None,
        true,
        "Where to write: `embedded` (the in-memory engine), `embedded:<dir>` (the embedded engine, durable in `<dir>`) or \
         `host:port[,host:port]` (a Fluss 0.9.x cluster). The bindings also take it as their address argument; the two are \
         one setting, and two different values are an error.",
    ),
    key(
        "client.writer.buffer.memory-size",
        Size,
        Some("64mb"),
        true,
        "Memory for records not yet acknowledged, per writer. A write that needs more waits (see \
         `client.writer.buffer.wait-timeout`).",
    ),
    key(
        "client.writer.buffer.wait-timeout",
        Duration,
        Some("unbounded"),
        true,
        "How long a write waits for buffer memory or a callback slot (`max_pending_callbacks`); one budget for both. \
         `unbounded` (default) waits as long as it takes, `0` never blocks (the write fails at once with `BUFFER_EXHAUSTED` \
         or `CAPACITY_EXHAUSTED`).",
    ),
    key(
        "client.writer.batch-size",
        Size,
        Some("2mb"),
        true,
        "The size at which a batch is closed and sent (at least 1kb). A writer with many open batches closes them earlier, \
         so that together they hold at most a quarter of its callback slots and buffer memory. A record larger than a \
         batch is refused at submission with `RECORD_TOO_LARGE`.",
    ),
    key(
        "client.writer.batch-timeout",
        Duration,
        Some("100ms"),
        true,
        "How long a batch that is not full waits for more records before it is sent.",
    ),
    key(
        "client.writer.acks",
        Choice(&["all", "-1", "0", "1"]),
        Some("all"),
        true,
        "The acknowledgement a produce request asks the server for, as in Fluss: `all` (= `-1`, every in-sync replica), \
         `1` (the leader) or `0`.",
    ),
    key(
        "client.writer.retries",
        Integer,
        Some("2147483647"),
        true,
        "How often a batch that failed with a retriable error is sent again (0 to 2147483647); \
         `client.writer.delivery-timeout` bounds the time in any case.",
    ),
    key(
        "client.writer.retry-backoff",
        Duration,
        Some("100ms"),
        true,
        "The wait before the first retry of a batch, doubled per attempt up to 1 s.",
    ),
    key(
        "client.writer.enable-idempotence",
        Boolean,
        Some("true"),
        true,
        "Idempotent writes: the server drops a batch it already has, so a retry never writes a record twice. Without it, \
         `client.writer.max-inflight-requests-per-bucket` is 1 so that retries cannot reorder a bucket.",
    ),
    key(
        "client.writer.kv-backpressure.max-throttle",
        Duration,
        Some("3s"),
        true,
        "Primary-key tables on Fluss 1.0 servers (PutKv v2): when the server reports storage pressure p (0 to 1) for a bucket, \
         that bucket's next send waits `max-throttle x p^2` (other buckets and requests already sent are not delayed; \
         order is kept). `STORAGE_BACKPRESSURE_EXCEPTION` (72) counts as p = 1 and is retried after this wait. A batch \
         whose `client.writer.delivery-timeout` ends first fails with `DELIVERY_TIMEOUT`. `0` ignores back-pressure.",
    ),
    key(
        "client.writer.dynamic-create-partition.enabled",
        Boolean,
        Some("true"),
        true,
        "A writer creates a partition that its rows name and that does not exist; when `false` their writes fail in their \
         callbacks with `PARTITION_NOT_EXISTS` (36).",
    ),
    key(
        "client.writer.partition-idle-timeout",
        Duration,
        Some("60s"),
        false,
        "A writer of a partitioned table releases what it keeps for a partition (its batches and sender task) once the \
         partition had nothing pending for this long; a later row for the partition opens it again. Writer stats \
         `open_partitions` counts the partitions kept.",
    ),
    key(
        "client.writer.slow-callback-threshold",
        Duration,
        Some("1s"),
        false,
        "A callback that runs this long is counted (writer stats `slow_callbacks`) and logged with its operation and what it \
         held up (at most one line per writer per 10 s). `0` turns it off.",
    ),
    key("client.id", Text, Some(""), true, "Names the connection's writers in metrics (label `client_id`)."),
    key(
        "client.writer.max-inflight-requests-per-bucket",
        Integer,
        Some("5"),
        true,
        "Requests in flight per bucket (1 to 1000; at most 5 with idempotence, 1 without it).",
    ),
    key(
        "client.writer.request-max-size",
        Size,
        Some("10mb"),
        true,
        "The largest produce request: the batches for one server are sent in requests up to this size (one batch per \
         bucket per request).",
    ),
    key(
        "client.request-timeout",
        Duration,
        Some("30s"),
        true,
        "How long the client waits for the answer to one request (writes, admin calls, metadata, read-back).",
    ),
    key(
        "client.response-max-size",
        Size,
        Some("100mb"),
        false,
        "The largest response frame accepted from a server (1kb to 2gb). A larger length prefix is not allocated: that \
         connection is closed with a retriable `PROTOCOL` error.",
    ),
    key(
        "client.writer.delivery-timeout",
        Duration,
        Some("120s"),
        true,
        "Every accepted operation completes within this time of its submission: a batch not acknowledged by then fails in \
         its callbacks with `DELIVERY_TIMEOUT`.",
    ),
    key(
        "client.writer.bucket.no-key-assigner",
        Choice(&["sticky", "round_robin"]),
        Some("sticky"),
        true,
        "How a log table without a bucket key spreads rows: `sticky` fills one bucket's batch before moving to another, \
         `round_robin` (also `round-robin`) takes the buckets in turn, row by row.",
    ),
    key("client.io-threads", Integer, Some("1"), false, "Threads of the connection's I/O runtime (1 to 64)."),
    key(
        "embedded.fsync",
        Choice(&["always", "never"]),
        Some("always"),
        false,
        "`embedded:<dir>` only: whether a write is fsynced before it is acknowledged.",
    ),
    key(
        "embedded.default-bucket-number",
        Integer,
        Some("1"),
        false,
        "Embedded engine only: the bucket count of a table whose descriptor gives none (1 to 128000).",
    ),
    key(
        "embedded.kv.backpressure.l0-slowdown-trigger",
        Integer,
        Some("8"),
        false,
        "Embedded engine only: the Fluss 1.0 server option `kv.backpressure.l0-slowdown-trigger` (1 to 2147483647): the \
         L0 file count of its storage model at which a primary-key bucket starts reporting storage pressure in PutKv \
         answers (rising to 0.999 at 20 files; near 20 writes are refused with `STORAGE_BACKPRESSURE_EXCEPTION`).",
    ),
    key(
        "embedded.kv.rocksdb.writebuffer.size",
        Size,
        Some("64mb"),
        false,
        "Embedded engine only: the Fluss server option `kv.rocksdb.writebuffer.size`: the KV batch bytes a primary-key \
         bucket writes per L0 file of the storage model behind its back-pressure.",
    ),
    key(
        "embedded.kv.compaction-time-per-file",
        Duration,
        Some("10ms"),
        false,
        "Embedded engine only (no server counterpart): how long the storage model's compaction takes per L0 file; it \
         starts at 4 files. Longer = the pressure rises faster under a steady load.",
    ),
    key(
        "embedded.datalake.format",
        Choice(&["paimon", "iceberg", "lance", "hudi"]),
        None,
        false,
        "Embedded engine only: the server option `datalake.format`, the lake of the cluster. New tables get it as their \
         `table.datalake.format` and may set `table.datalake.enabled` (and Fluss 1.0's historical partitions, which need \
         Paimon); the engine keeps their rows itself (it tiers nothing). Unset: no lake, and lake-enabled tables are \
         refused as by a server without one.",
    ),
    key(
        "client.security.protocol",
        Choice(&["PLAINTEXT", "SASL"]),
        Some("PLAINTEXT"),
        true,
        "`SASL` authenticates every connection with SASL (`client.security.sasl.*`). Fluss 0.9 has no TLS: SASL/PLAIN \
         sends the password in clear text (SECURITY.md).",
    ),
    key("client.security.sasl.mechanism", Text, Some("PLAIN"), true, "The SASL mechanism; `PLAIN`, the only one Fluss 0.9 has."),
    key("client.security.sasl.username", Text, None, true, "The SASL/PLAIN user name."),
    key("client.security.sasl.password", Secret, None, true, "The SASL/PLAIN password."),
    key(
        "client.security.sasl.jaas.config",
        Secret,
        None,
        true,
        "A JAAS line as the Java client takes it (`org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required \
         username=\"...\" password=\"...\";`): user name and password are taken from it when the two keys above are absent.",
    ),
    key(
        "client.address-map",
        Text,
        Some(""),
        false,
        "`advertised=reachable` pairs of `host:port`, comma-separated: the client dials `reachable` whenever the cluster \
         names `advertised` (servers behind port forwarding, NAT or a proxy, whose advertised listeners the client cannot \
         reach). Empty: every address is dialled as advertised.",
    ),
];

/// `docs/configuration.md`: the whole reference as Markdown.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Configuration reference\n\n\
         <!-- Generated from rust/core/src/config_reference.rs (REFERENCE); do not edit. Rewrite with\n     \
         FLUSS_WRITER_BLESS=1 cargo test -p fluss-writer --lib config_reference -->\n\n\
         Every key the core understands, the same in Rust (`Config::set`, `Config::from_pairs`, then `Connection::connect`), Python \
         (`fluss_writer.connect(address, {...})`, `fluss_writer.Config`) and C++ (`fluss_writer::Configuration::Set`). Unknown keys \
         are an error (`INVALID_CONFIG`), and so is a value out of range; keys marked *ours* are fluss-writer's own, the \
         others have the names and meanings of Fluss's Java client.\n\n\
         Values are strings (the bindings also take numbers and booleans). A **size** is a number of bytes, optionally \
         with a unit (`b`, `kb`, `mb`, `gb`, `tb`, binary multiples, case-insensitive: `64mb`, `2 MiB`, `512k`). A \
         **duration** is a number of milliseconds or a number with a unit (`ns`, `us`, `ms`, `s`, `min`, `h`, `d`: `30s`, \
         `100ms`, `2min`), at most 365 days. A **boolean** is `true` or `false` (also `1`/`0`, `yes`/`no`, `on`/`off`). \
         Secrets never appear in errors, logs or printed configurations.\n\n\
         | key | type | unit | default | meaning |\n|---|---|---|---|---|\n",
    );
    for k in REFERENCE {
        let default = match k.default {
            None => "none".to_string(),
            Some("") => "empty".to_string(),
            Some(d) => format!("`{d}`"),
        };
        let origin = if k.fluss { "" } else { " *(ours)*" };
        out.push_str(&format!(
            "| `{}`{} | {} | {} | {} | {} |\n",
            k.key,
            origin,
            k.kind.name(),
            k.kind.unit(),
            default,
            k.meaning.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, KEYS};

    #[test]
    fn the_reference_has_every_key_of_the_code_in_order() {
        let documented: Vec<&str> = REFERENCE.iter().map(|k| k.key).collect();
        assert_eq!(documented, KEYS, "config_reference::REFERENCE must list exactly config::KEYS, in order");
    }

    #[test]
    fn each_documented_default_is_the_code_default() {
        for k in REFERENCE {
            if let Some(d) = k.default {
                let mut c = Config::default();
                c.set(k.key, d).unwrap_or_else(|e| panic!("{}: the documented default {d:?} is refused: {e}", k.key));
                assert_eq!(c, Config::default(), "{}: the documented default {d:?} is not the code's default", k.key);
            }
        }
    }

    #[test]
    fn each_key_takes_its_documented_type_and_refuses_another() {
        for k in REFERENCE {
            let (good, bad): (Vec<&str>, &str) = match k.kind {
                KeyType::Size => (vec!["4096", "4kb", "2 MiB"], "4 parsecs"),
                KeyType::Duration => (vec!["250", "250ms", "2s"], "2 fortnights"),
                KeyType::Integer => (vec!["1"], "one"),
                KeyType::Boolean => (vec!["true", "false"], "maybe"),
                KeyType::Choice(words) => (words.to_vec(), "no-such-choice"),
                KeyType::Text | KeyType::Secret => continue,
            };
            for v in good {
                Config::default().set(k.key, v).unwrap_or_else(|e| panic!("{} ({}) refuses {v:?}: {e}", k.key, k.kind.name()));
            }
            assert!(Config::default().set(k.key, bad).is_err(), "{} ({}) accepts {bad:?}", k.key, k.kind.name());
        }
    }

    #[test]
    fn docs_configuration_md_is_the_rendered_reference() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
        let want = markdown();
        if std::env::var("FLUSS_WRITER_BLESS").is_ok_and(|v| v == "1") {
            std::fs::write(path, &want).expect("write docs/configuration.md");
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "docs/configuration.md is not the rendered reference of rust/core/src/config_reference.rs; rewrite it with \
             FLUSS_WRITER_BLESS=1 cargo test -p fluss-writer --lib config_reference"
        );
    }
}
