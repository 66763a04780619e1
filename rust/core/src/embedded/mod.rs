//! The embedded engine: an in-process Fluss "server" with real tables, buckets, offsets and
//! primary-key state, in memory (`embedded`) or durable in a directory (`embedded:<dir>`).
//!
//! It is a `Backend` (the crate's internal backend interface): it answers the **same Fluss requests** the
//! network client sends to a real 0.9.x cluster (the protobuf messages of `wire::proto`, with
//! log and KV batches in Fluss's byte formats), so a writer cannot tell the two apart and every
//! test on the embedded engine exercises the exact bytes a server would receive.
//!
//! ```no_run
//! use fluss_writer::embedded::{EmbeddedEngine, Fault};
//! use fluss_writer::{Config, TablePath};
//! let engine = EmbeddedEngine::open("embedded", &Config::default())?;
//! let t = TablePath::new("fluss", "events")?;
//! engine.faults().inject(&t, 0, Fault::Error { code: 12, message: "not leader".into(), times: 2 });
//! // ... write through a connection backed by `engine`, then:
//! let rows = engine.scan(&t, 0, 0)?;
//! # Ok::<(), fluss_writer::Error>(())
//! ```
//!
//! # What it answers
//!
//! One node, id 0, host `"embedded"`, port 0, is both coordinator and the leader of every
//! bucket. Requests: ApiVersions, CreateDatabase, DropDatabase, ListDatabases,
//! DatabaseExists, CreateTable, DropTable, GetTableInfo, GetTableSchema, AlterTable (nullable
//! columns added at the end: the next schema id; older ids stay writable and readable),
//! ListTables, TableExists, the partition requests, Metadata, InitWriter, ProduceLog, PutKv,
//! ListOffsets, FetchLog, Lookup. A database `fluss` exists from the start; a new table has
//! schema id 1; its descriptor is stored after defaults (bucket
//! count from `embedded.default-bucket-number`, bucket key = primary key). Request-level
//! failures are `Err(Error::server(code, ..))`; per-bucket failures are inside the response
//! entries, as on the wire. Error codes follow docs/wire-format.md, "Error codes".
//!
//! The engine validates more than a 0.9.1 server does: log batches must decode against the
//! table schema, KV value rows must decode and respect NOT NULL, key bytes must be the row's
//! primary key, and a key must be sent to its bucket. Such errors are non-retriable
//! `UNKNOWN_SERVER_ERROR` (-1) with a message that names the problem: retrying cannot help.
//! Table properties whose semantics it does not implement (merge engines, non-FULL changelog
//! image, non-default formats) are refused at CreateTable with `INVALID_CONFIG`. Like a server
//! without a configured lake, it keeps `table.datalake.format` (which decides key bytes and
//! buckets, see `wire::lake`), refuses `table.datalake.enabled = true` with `INVALID_TABLE`, and
//! stamps primary-key tables with `table.kv.format-version = 2`. With `embedded.datalake.format`
//! it acts as a server with that lake: new tables get the format, may enable the lake and Fluss
//! 1.0's historical partitions (a `__historical__` partition created with the table, keys kept
//! there per original partition), and their rows stay in the engine (nothing is tiered).
//!
//! # Semantics
//!
//! * Log tables: batches are stored byte for byte; the engine assigns base offsets and commit
//!   timestamps (`max(last, now)`), as a server does; high watermark = log end offset.
//! * Primary-key tables: upsert, delete, partial update and partial delete as in
//!   docs/wire-format.md, "Deletes and partial updates" (details in `kv.rs`); every KV batch
//!   becomes one changelog batch (+I, -U/+U with full images, -D) in the bucket's log; PutKv
//!   answers with the changelog end offset.
//! * Idempotence (docs/wire-format.md, "Idempotence"): per writer id and bucket, shared by log
//!   and KV batches; a duplicate of one of the last 5 accepted batches is answered with its
//!   original offsets and not appended; a gap is `OUT_OF_ORDER_SEQUENCE` (31). Writer ids come from a counter that
//!   survives reopening a durable directory.
//! * Back-pressure (Fluss 1.0, PutKv v2): a primary-key bucket's answers carry the storage
//!   `pressure` a 1.0 server would compute, and its admission gate refuses writes with
//!   `STORAGE_BACKPRESSURE` (72) near a stall, from a model of the bucket's storage (`pressure.rs`;
//!   options `embedded.kv.*`). With the defaults no test load gets near it.
//! * Concurrency: the engine is `Send + Sync`; each bucket has its own lock, so buckets proceed
//!   in parallel; the catalog has its own lock. A request is applied synchronously inside
//!   `send`, so the requests of one caller are applied in the order they were sent.
//!
//! # Durability (`embedded:<dir>`)
//!
//! The directory holds a lock file, an atomically replaced `catalog.json` and one append-only
//! file per bucket of framed log batches (`u32 len | u32 crc32c | u8 kind | payload`); the
//! key-value state and writer state are rebuilt from the changelog on open and a torn tail is
//! cut off. A write is acknowledged after `write(2)` (survives a killed process) and, under
//! `embedded.fsync = always` (the default), after `fdatasync` too (survives power loss). The
//! directory is locked with `flock`: a second engine on it, in any process, fails to open with
//! an `IO` error. Data is also held in memory, so the directory is for durability, not for data
//! larger than memory. Full format in `store.rs`.
//!
//! # Testing API
//!
//! [`EmbeddedEngine::faults`] injects errors, delays and dropped connections per bucket
//! ([`Fault`]); [`EmbeddedEngine::scan`], [`lookup`](EmbeddedEngine::lookup),
//! [`high_watermark`](EmbeddedEngine::high_watermark),
//! [`table_info`](EmbeddedEngine::table_info) and [`stats`](EmbeddedEngine::stats) read the
//! state back without going through requests.
//!
//! Modules, in the order a write meets them: `engine` (open, dispatch, DDL, request
//! handling), `faults`, `produce` (ProduceLog), `kv` (PutKv and changelog), `bucket` (offsets,
//! idempotence, storage of one bucket), `store` (files), `catalog`, `readback`.

mod bucket;
mod catalog;
mod engine;
mod faults;
mod kv;
mod pressure;
mod produce;
mod readback;
mod store;

#[cfg(test)]
mod tests;

pub use engine::{EmbeddedEngine, NODE_HOST, NODE_ID};
pub use faults::{Fault, Faults};
pub use readback::{ChangeType, EngineStats, ScannedRow};

pub(crate) use readback::Counters;
