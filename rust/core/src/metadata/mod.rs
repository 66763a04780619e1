//! Tables, schemas and data types: the data model shared by the writers, the wire formats, the
//! embedded engine and the network client.
//!
//! * [`DataType`] and [`Column`]: the Fluss types this SDK writes (BOOLEAN … TIMESTAMP_LTZ) with
//!   nullability.
//! * [`Schema`]: columns plus an optional primary key. A schema with a primary key makes a
//!   primary-key table; without one, a log table.
//! * [`TableDescriptor`]: what `create_table` takes (schema, bucket count, bucket key,
//!   properties); [`TableInfo`]: what the server hands back after applying its defaults.
//! * `json`: Fluss's own JSON forms of these (carried by CreateTable / GetTableInfo).

mod json;
pub mod partition;
mod types;

pub(crate) use json::{check_field_ids, data_type_from_json, data_type_json, schema_from_json, schema_to_json};
pub use json::{descriptor_from_json, descriptor_to_json};
pub use types::*;
