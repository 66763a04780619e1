//! fluss-writer: a write SDK for Apache Fluss with completion callbacks dispatched from batch
//! completions.
//!
//! See `docs/architecture.md` and `docs/callback-contract.md` in the repository for the design
//! and the callback contract (C1-C12) that every test suite asserts.

pub mod backend;
pub mod config;
pub mod error;
pub mod metadata;
pub mod row;
pub mod wire;

pub use config::Config;
pub use error::{ClientCode, Error, FlussCode, Result};
pub use metadata::{Column, DataType, Schema, TableDescriptor, TableInfo, TablePath};
pub use row::{Decimal, Row, Timestamp, Value};
