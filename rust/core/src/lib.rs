//! fluss-writer: a write SDK for Apache Fluss with completion callbacks dispatched from batch
//! completions.
//!
//! ```no_run
//! use fluss_writer::{Connection, DataType, Schema, TableDescriptor, TablePath, WriterOptions, row};
//! # fn main() -> fluss_writer::Result<()> {
//! let conn = Connection::open("embedded")?;
//! let path = TablePath::new("fluss", "events")?;
//! let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("msg", DataType::String).build()?;
//! conn.admin().create_table(&path, &TableDescriptor::new(schema).with_bucket_count(4), true)?;
//! let writer = conn.get_table(&path)?.new_append()?.create_writer(WriterOptions::default())?;
//! writer.append_with_callback(&row![1i64, "hi"], |c| assert!(c.is_ok()))?;
//! writer.flush(None)?;
//! # Ok(()) }
//! ```
//!
//! See `docs/architecture.md` and `docs/callback-contract.md` in the repository for the design
//! and the callback contract (C1-C12) that every test suite asserts.
#![warn(missing_docs)]

/// A module that is public (and hidden from the docs) only with the `internals` feature: the
/// crate's own tests, the oracle and the benchmarks reach into it; the API does not expose it.
macro_rules! internal_mod {
    ($name:ident) => {
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        // Without the feature, what only the tests, the oracle and the benchmarks use is unused.
        #[cfg(not(feature = "internals"))]
        #[allow(dead_code, unused_imports)]
        mod $name;
    };
}

/// The README's Rust example, compiled and run by `cargo test --doc` (its other code blocks are
/// not Rust and rustdoc leaves them alone), so that it works as written.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The Rust user guide's code blocks (docs/guide-rust.md), each compiled and run by
/// `cargo test --doc` as written (the cluster one against FLUSS_BOOTSTRAP_SERVERS when it is set;
/// the SASL one is `no_run`: compiled only).
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide-rust.md")]
pub struct GuideRustDoctests;

pub mod acl;
pub mod admin;
internal_mod!(backend);
internal_mod!(cluster);
pub mod config;
pub mod config_reference;
pub mod connection;
pub mod embedded;
pub mod error;
pub mod metadata;
pub mod metrics;
mod readback;
pub mod row;
pub mod table;
pub mod timeouts;
internal_mod!(wire);
pub mod write;

pub use acl::{AclBinding, AclFilter, AclOperation, AclResource};
pub use admin::{Admin, Capability, TableChange};
pub use config::Config;
pub use connection::{ConnectOptions, Connection};
pub use error::{code_info, error_codes, ClientCode, CodeInfo, CodeKind, Error, FlussCode, Result, ServerCode};
pub use fluss_writer_dispatch as dispatch;
pub use fluss_writer_dispatch::interrupt;
pub use fluss_writer_dispatch::{CallbackError, Executor, Job, UserExecutor, WorkerHooks};
pub use metadata::partition::{self, PartitionInfo, PartitionSpec};
pub use metadata::{AggFunction, Column, DataType, Nested, RowField, Schema, TableDescriptor, TableInfo, TablePath};
pub use row::{Decimal, DecimalError, Row, Timestamp, Value};
pub use table::{Table, TableAppend, TableUpsert};
/// One record batch from the batches of an Arrow stream (the one rule every binding uses).
pub use wire::arrow::concat_batches as concat_arrow_batches;
pub use write::{
    AppendWriter, BucketResult, CallbackExecutor, LastReference, SharedCallback, UpsertWriter, WriteCallback, WriteCompletion, WriteResult,
    WriterOptions, WriterStats, MAX_CALLBACK_SHARDS, MAX_PENDING_CALLBACKS, PENDING_ENTRY_BYTES,
};
