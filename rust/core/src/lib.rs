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

pub mod acl;
pub mod admin;
pub mod backend;
pub mod cluster;
pub mod config;
pub mod connection;
pub mod embedded;
pub mod error;
pub mod metadata;
mod readback;
pub mod row;
pub mod table;
pub mod timeouts;
pub mod wire;
pub mod write;

pub use acl::{AclBinding, AclFilter, AclOperation, AclResource};
pub use admin::Admin;
pub use config::Config;
pub use connection::{ConnectOptions, Connection};
pub use error::{ClientCode, Error, FlussCode, Result};
pub use fluss_writer_dispatch as dispatch;
pub use fluss_writer_dispatch::interrupt;
pub use fluss_writer_dispatch::{CallbackError, Executor, Job, UserExecutor, WorkerHooks};
pub use metadata::{Column, DataType, Schema, TableDescriptor, TableInfo, TablePath};
pub use row::{Decimal, Row, Timestamp, Value};
pub use table::{Table, TableAppend, TableUpsert};
pub use write::{
    AppendWriter, BucketResult, CallbackExecutor, SharedCallback, UpsertWriter, WriteCallback, WriteCompletion, WriteResult, WriterOptions,
    WriterStats, MAX_CALLBACK_SHARDS, MAX_PENDING_CALLBACKS, PENDING_ENTRY_BYTES,
};
