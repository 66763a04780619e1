//! Databases, tables and id counters of the embedded engine, and their durable JSON form.
//!
//! The catalog lives under its own mutex (DDL and `InitWriter` are rare); data requests only
//! take it long enough to clone the `Arc<Table>` they need, then lock single buckets.
//!
//! `catalog.json` (see `store.rs` for how it is replaced atomically):
//!
//! ```json
//! {"version":1,"next_table_id":3,"next_writer_id":7,"databases":["fluss","shop"],
//!  "tables":[{"database":"shop","table":"orders","table_id":1,"schema_id":1,
//!             "created_time":1733000000000,"modified_time":1733000000000,
//!             "table_json":{ ...TableDescriptor JSON after defaults... }}]}
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use serde_json::{json, Value as Json};

use crate::error::{ClientCode, Error, FlussCode, Result};
use crate::metadata::{descriptor_from_json, descriptor_to_json, Column, Schema, TableInfo, TablePath};

use super::bucket::Bucket;

/// A table and its buckets.
pub(crate) struct Table {
    pub info: TableInfo,
    /// `table_json` after defaults (what GetTableInfo and Metadata return).
    pub table_json: Bytes,
    /// Primary-key column indexes, in key order (empty for log tables).
    pub pk_indexes: Vec<usize>,
    /// The primary-key columns as a schema of their own (to decode and encode keys).
    pub key_schema: Option<Schema>,
    /// Bucket-key column indexes in `key_schema` (primary-key tables).
    pub bucket_key_in_key: Vec<usize>,
    /// Whether the bucket key is the whole primary key in order (then key bytes = bucket bytes).
    pub bucket_key_is_pk: bool,
    pub buckets: Vec<Mutex<Bucket>>,
}

impl Table {
    pub(crate) fn new(info: TableInfo, buckets: Vec<Bucket>) -> Result<Table> {
        let schema = info.schema().clone();
        let pk_indexes = schema.primary_key_indexes();
        let bucket_key_indexes = info.bucket_key_indexes();
        let key_schema = if pk_indexes.is_empty() {
            None
        } else {
            let cols: Vec<Column> = pk_indexes.iter().map(|&i| schema.columns()[i].clone()).collect();
            Some(Schema::new(cols, Vec::new())?)
        };
        let bucket_key_in_key = bucket_key_indexes.iter().filter_map(|i| pk_indexes.iter().position(|p| p == i)).collect::<Vec<_>>();
        let bucket_key_is_pk = !pk_indexes.is_empty() && bucket_key_indexes == pk_indexes;
        let table_json = Bytes::from(descriptor_to_json(&info.descriptor));
        Ok(Table {
            info,
            table_json,
            pk_indexes,
            key_schema,
            bucket_key_in_key,
            bucket_key_is_pk,
            buckets: buckets.into_iter().map(Mutex::new).collect(),
        })
    }

    pub(crate) fn id(&self) -> i64 {
        self.info.table_id
    }

    pub(crate) fn path(&self) -> &TablePath {
        &self.info.path
    }

    pub(crate) fn schema(&self) -> &Schema {
        self.info.schema()
    }

    pub(crate) fn schema_id(&self) -> i16 {
        self.info.schema_id as i16
    }

    pub(crate) fn is_pk(&self) -> bool {
        !self.pk_indexes.is_empty()
    }

    pub(crate) fn bucket_count(&self) -> i32 {
        self.buckets.len() as i32
    }

    /// Lock one bucket; `None` if out of range.
    pub(crate) fn bucket(&self, bucket: i32) -> Option<MutexGuard<'_, Bucket>> {
        let b = self.buckets.get(usize::try_from(bucket).ok()?)?;
        // A panic while a bucket was locked cannot leave it half-updated: every update is
        // computed first and applied after the last fallible step.
        Some(b.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The `UNKNOWN_TABLE_OR_BUCKET` error for a bucket outside the table.
    pub(crate) fn no_bucket(&self, bucket: i32) -> Error {
        Error::server(
            FlussCode::UNKNOWN_TABLE_OR_BUCKET,
            format!("bucket {bucket} does not exist in table {} ({} buckets)", self.path(), self.bucket_count()),
        )
    }
}

/// The catalog proper.
pub(crate) struct Catalog {
    pub databases: BTreeSet<String>,
    pub tables: BTreeMap<TablePath, Arc<Table>>,
    pub by_id: HashMap<i64, Arc<Table>>,
    pub next_table_id: i64,
    pub next_writer_id: i64,
}

impl Catalog {
    /// A fresh catalog: database `fluss`, no tables.
    pub(crate) fn new() -> Catalog {
        Catalog {
            databases: BTreeSet::from(["fluss".to_string()]),
            tables: BTreeMap::new(),
            by_id: HashMap::new(),
            next_table_id: 1,
            next_writer_id: 1,
        }
    }

    pub(crate) fn insert(&mut self, table: Arc<Table>) {
        self.by_id.insert(table.id(), table.clone());
        self.tables.insert(table.path().clone(), table);
    }

    pub(crate) fn remove(&mut self, path: &TablePath) -> Option<Arc<Table>> {
        let t = self.tables.remove(path)?;
        self.by_id.remove(&t.id());
        Some(t)
    }

    pub(crate) fn table(&self, path: &TablePath) -> Result<Arc<Table>> {
        self.tables.get(path).cloned().ok_or_else(|| Error::server(FlussCode::TABLE_NOT_EXIST, format!("table {path} does not exist")))
    }

    /// The durable image of the current state (callers change the image, persist it, then
    /// apply the same change in memory, so memory never runs ahead of the disk).
    pub(crate) fn image(&self) -> CatalogImage {
        CatalogImage {
            databases: self.databases.clone(),
            tables: self.tables.values().map(|t| t.info.clone()).collect(),
            next_table_id: self.next_table_id,
            next_writer_id: self.next_writer_id,
        }
    }

    /// Parse `catalog.json`: the catalog without tables, plus the tables (whose buckets
    /// the caller opens and replays).
    pub(crate) fn from_json(bytes: &[u8]) -> Result<(Catalog, Vec<TableInfo>)> {
        let bad = |m: String| Error::client(ClientCode::Io, format!("catalog.json: {m}"));
        let v: Json = serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
        if v.get("version").and_then(Json::as_i64) != Some(1) {
            return Err(bad(format!("unsupported version {:?}", v.get("version"))));
        }
        let int = |k: &str| v.get(k).and_then(Json::as_i64).ok_or_else(|| bad(format!("missing {k}")));
        let databases = v
            .get("databases")
            .and_then(Json::as_array)
            .ok_or_else(|| bad("missing databases".into()))?
            .iter()
            .map(|d| d.as_str().map(str::to_string).ok_or_else(|| bad("database name is not a string".into())))
            .collect::<Result<BTreeSet<_>>>()?;
        let mut records = Vec::new();
        for t in v.get("tables").and_then(Json::as_array).ok_or_else(|| bad("missing tables".into()))? {
            let s = |k: &str| t.get(k).and_then(Json::as_str).ok_or_else(|| bad(format!("table without {k}")));
            let i = |k: &str| t.get(k).and_then(Json::as_i64).ok_or_else(|| bad(format!("table without {k}")));
            let json = t.get("table_json").ok_or_else(|| bad("table without table_json".into()))?;
            let descriptor = descriptor_from_json(&serde_json::to_vec(json).expect("JSON"))
                .map_err(|e| bad(format!("table {}.{}: {}", s("database").unwrap_or("?"), s("table").unwrap_or("?"), e.message())))?;
            let info = TableInfo {
                path: TablePath { database: s("database")?.to_string(), table: s("table")?.to_string() },
                table_id: i("table_id")?,
                schema_id: i("schema_id")? as i32,
                descriptor,
                created_time: i("created_time")?,
                modified_time: i("modified_time")?,
            };
            records.push(info);
        }
        let catalog = Catalog {
            databases,
            tables: BTreeMap::new(),
            by_id: HashMap::new(),
            next_table_id: int("next_table_id")?,
            next_writer_id: int("next_writer_id")?,
        };
        Ok((catalog, records))
    }
}

/// What `catalog.json` holds.
pub(crate) struct CatalogImage {
    pub databases: BTreeSet<String>,
    pub tables: Vec<TableInfo>,
    pub next_table_id: i64,
    pub next_writer_id: i64,
}

impl CatalogImage {
    pub(crate) fn to_json(&self) -> Vec<u8> {
        let v = json!({
            "version": 1,
            "next_table_id": self.next_table_id,
            "next_writer_id": self.next_writer_id,
            "databases": self.databases,
            "tables": self.tables.iter().map(table_to_json).collect::<Vec<_>>(),
        });
        serde_json::to_vec_pretty(&v).expect("JSON of plain values")
    }
}

fn table_to_json(info: &TableInfo) -> Json {
    let descriptor: Json = serde_json::from_slice(&descriptor_to_json(&info.descriptor)).expect("own JSON");
    json!({
        "database": info.path.database,
        "table": info.path.table,
        "table_id": info.table_id,
        "schema_id": info.schema_id,
        "created_time": info.created_time,
        "modified_time": info.modified_time,
        "table_json": descriptor,
    })
}
