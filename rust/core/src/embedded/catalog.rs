//! Databases, tables and id counters of the embedded engine, and their durable JSON form.
//!
//! The catalog lives under its own mutex (DDL and `InitWriter` are rare); data requests only
//! take it long enough to clone the `Arc<Table>` they need, then lock single buckets.
//!
//! `catalog.json` (see `store.rs` for how it is replaced atomically):
//!
//! ```json
//! {"version":1,"next_table_id":3,"next_partition_id":2,"next_writer_id":7,"databases":["fluss","shop"],
//!  "tables":[{"database":"shop","table":"orders","table_id":1,"schema_id":2,
//!             "created_time":1733000000000,"modified_time":1733000000000,
//!             "table_json":{ ...TableDescriptor JSON after defaults, schema 2... },
//!             "older_schemas":[{ ...schema 1... }]}],
//!  "partitions":[{"table_id":1,"partition_id":1,"name":"2026-12-03","bucket_count":4}]}
//! ```
//!
//! A table's `bucket_count_epoch` (how often its bucket count changed) and a partition's
//! `bucket_count` (its own, fixed at creation) are written since per-partition bucket counts;
//! older catalogs have neither: epoch 0, and every partition has its table's count.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use serde_json::{json, Value as Json};

use crate::error::{ClientCode, Error, FlussCode, Result};
use crate::metadata::partition::HISTORICAL_PARTITION;
use crate::metadata::{descriptor_from_json, descriptor_to_json, schema_from_json, schema_to_json, Column, Schema, TableInfo, TablePath};

use crate::row::{Row, Value};
use crate::wire::arrow::record_batch_to_rows;
use crate::wire::key::KeyCodec;
use crate::wire::log_batch::LogBatch;

use super::bucket::Bucket;

/// A table and its buckets: a table without partitions, or one partition of a partitioned
/// table (each partition is a physical table of its own, with the table's schema and bucket
/// count). The table entry of a partitioned table has no buckets.
pub(crate) struct Table {
    pub info: TableInfo,
    /// The partition (id, name) for a partition's physical table.
    pub partition: Option<(i64, String)>,
    /// `table_json` after defaults (what GetTableInfo and Metadata return).
    pub table_json: Bytes,
    /// Primary-key column indexes, in key order (empty for log tables).
    pub pk_indexes: Vec<usize>,
    /// The primary-key columns as a schema of their own (to decode and encode keys).
    pub key_schema: Option<Schema>,
    /// Key bytes and buckets (the table's lake format decides them). A server stores a table
    /// whose keys no writer of ours can encode (say an iceberg format with a two-column key), so
    /// the engine does too, and only its keyed writes fail, with this error.
    keys: Result<KeyCodec>,
    /// The schemas before the current one, by id (schema id `i + 1` at index `i`); shared by a
    /// table and its partitions.
    pub older_schemas: Arc<Vec<Schema>>,
    /// Shared with the tables that replace this one when its schema changes.
    pub buckets: Arc<Vec<Mutex<Bucket>>>,
}

impl Table {
    /// The table's key codec, or why its keys cannot be encoded.
    pub(crate) fn keys(&self) -> Result<&KeyCodec> {
        self.keys.as_ref().map_err(Clone::clone)
    }

    pub(crate) fn new(
        info: TableInfo,
        older_schemas: Arc<Vec<Schema>>,
        partition: Option<(i64, String)>,
        buckets: Vec<Bucket>,
    ) -> Result<Table> {
        if older_schemas.len() + 1 != info.schema_id as usize {
            return Err(Error::internal(format!(
                "table {}: schema id {} but {} older schemas",
                info.path,
                info.schema_id,
                older_schemas.len()
            )));
        }
        let schema = info.schema().clone();
        // Keys inside a partition leave out the partition columns (Fluss's physical key).
        let pk_indexes = info.physical_key_indexes();
        let key_schema = if pk_indexes.is_empty() {
            None
        } else {
            let cols: Vec<Column> = pk_indexes.iter().map(|&i| schema.columns()[i].clone()).collect();
            Some(Schema::new(cols, Vec::new())?)
        };
        let keys = KeyCodec::new(&info);
        let table_json = Bytes::from(descriptor_to_json(&info.descriptor));
        Ok(Table {
            info,
            partition,
            table_json,
            pk_indexes,
            key_schema,
            keys,
            older_schemas,
            buckets: Arc::new(buckets.into_iter().map(Mutex::new).collect()),
        })
    }

    /// This table (or partition) with a new schema: `info` has the next schema id and the
    /// schema with the added columns; the buckets (and their rows) are this table's.
    pub(crate) fn evolved(&self, info: &TableInfo) -> Table {
        let mut older = self.older_schemas.as_ref().clone();
        older.push(self.schema().clone());
        Table {
            info: info.clone(),
            partition: self.partition.clone(),
            table_json: Bytes::from(descriptor_to_json(&info.descriptor)),
            pk_indexes: self.pk_indexes.clone(),
            key_schema: self.key_schema.clone(),
            keys: KeyCodec::new(info),
            older_schemas: Arc::new(older),
            buckets: self.buckets.clone(),
        }
    }

    /// The rows of a stored log batch in the current schema: decoded with the schema the batch
    /// names, with nulls in the columns added since.
    pub(crate) fn batch_rows(&self, batch: &LogBatch) -> Result<Vec<Row>> {
        let schema = self.schema_of(batch.schema_id()).ok_or_else(|| {
            Error::internal(format!("{}: a stored batch has schema id {}, which the table never had", self.describe(), batch.schema_id()))
        })?;
        let mut rows = record_batch_to_rows(schema, &batch.decode(schema)?)?;
        for r in &mut rows {
            r.resize(self.schema().len(), Value::Null);
        }
        Ok(rows)
    }

    /// A stored row in the current schema (rows stored before columns were added lack them).
    pub(crate) fn fit(&self, mut row: Row) -> Row {
        row.resize(self.schema().len(), Value::Null);
        row
    }

    /// The schema with id `id`: the current one or an older one.
    pub(crate) fn schema_of(&self, id: i16) -> Option<&Schema> {
        match id as i32 {
            i if i == self.info.schema_id => Some(self.schema()),
            i if i >= 1 => self.older_schemas.get(i as usize - 1),
            _ => None,
        }
    }

    pub(crate) fn id(&self) -> i64 {
        self.info.table_id
    }

    pub(crate) fn path(&self) -> &TablePath {
        &self.info.path
    }

    /// `db.table` or, for a partition, `db.table(p=name)` (as the server names them).
    pub(crate) fn describe(&self) -> String {
        match &self.partition {
            None => self.info.path.to_string(),
            Some((_, name)) => format!("{}(p={name})", self.info.path),
        }
    }

    /// The partition id (`None` for a table without partitions).
    pub(crate) fn partition_id(&self) -> Option<i64> {
        self.partition.as_ref().map(|(id, _)| *id)
    }

    /// The partition name (`None` for a table without partitions).
    pub(crate) fn partition_name(&self) -> Option<&str> {
        self.partition.as_ref().map(|(_, n)| n.as_str())
    }

    /// Whether this is its table's historical partition (Fluss 1.0), which keeps the rows of
    /// expired partitions.
    pub(crate) fn is_historical(&self) -> bool {
        self.partition_name() == Some(HISTORICAL_PARTITION)
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
            format!("bucket {bucket} does not exist in table {} ({} buckets)", self.describe(), self.bucket_count()),
        )
    }
}

/// The catalog proper.
pub(crate) struct Catalog {
    pub databases: BTreeSet<String>,
    pub tables: BTreeMap<TablePath, Arc<Table>>,
    pub by_id: HashMap<i64, Arc<Table>>,
    /// Partitions by table id, then by name.
    pub partitions: HashMap<i64, BTreeMap<String, Arc<Table>>>,
    /// Partitions by partition id (unique across tables, never reused).
    pub partitions_by_id: HashMap<i64, Arc<Table>>,
    pub next_table_id: i64,
    pub next_partition_id: i64,
    pub next_writer_id: i64,
}

impl Catalog {
    /// A fresh catalog: database `fluss`, no tables.
    pub(crate) fn new() -> Catalog {
        Catalog {
            databases: BTreeSet::from(["fluss".to_string()]),
            tables: BTreeMap::new(),
            by_id: HashMap::new(),
            partitions: HashMap::new(),
            partitions_by_id: HashMap::new(),
            next_table_id: 1,
            next_partition_id: 1,
            next_writer_id: 1,
        }
    }

    /// Add a partition's physical table.
    pub(crate) fn insert_partition(&mut self, partition: Arc<Table>) {
        let (id, name) = partition.partition.clone().expect("a partition");
        self.partitions_by_id.insert(id, partition.clone());
        self.partitions.entry(partition.id()).or_default().insert(name, partition);
    }

    /// Remove a partition by table id and name.
    pub(crate) fn remove_partition(&mut self, table_id: i64, name: &str) -> Option<Arc<Table>> {
        let p = self.partitions.get_mut(&table_id)?.remove(name)?;
        self.partitions_by_id.remove(&p.partition_id().expect("a partition"));
        Some(p)
    }

    /// The physical table that holds the buckets of `(table_id, partition_id)`: the table
    /// itself, or one of its partitions. `UNKNOWN_TABLE_OR_BUCKET` otherwise, as a tablet server
    /// answers for a replica it does not host.
    pub(crate) fn physical(&self, table_id: i64, partition_id: Option<i64>) -> Result<Arc<Table>> {
        let unknown = |m: String| Error::server(FlussCode::UNKNOWN_TABLE_OR_BUCKET, m);
        let t = self.by_id.get(&table_id).ok_or_else(|| unknown(format!("table id {table_id} does not exist")))?;
        match (t.info.is_partitioned(), partition_id) {
            (false, None) => Ok(t.clone()),
            (false, Some(p)) => Err(unknown(format!("table {} is not partitioned (request names partition id {p})", t.path()))),
            (true, None) => Err(unknown(format!("table {} is partitioned: the request needs a partition id", t.path()))),
            (true, Some(p)) => match self.partitions_by_id.get(&p) {
                Some(part) if part.id() == table_id => Ok(part.clone()),
                _ => Err(unknown(format!("partition id {p} of table {} does not exist", t.path()))),
            },
        }
    }

    /// Swap a table and its partitions for `evolved` versions of themselves (a schema change).
    pub(crate) fn evolve(&mut self, path: &TablePath, info: &TableInfo) -> Result<()> {
        let t = self.table(path)?;
        self.insert(Arc::new(t.evolved(info)));
        let parts: Vec<Arc<Table>> = self.partitions.get(&t.id()).map(|m| m.values().cloned().collect()).unwrap_or_default();
        for p in parts {
            // A partition keeps its own bucket count.
            self.insert_partition(Arc::new(p.evolved(&partition_info(info, p.bucket_count()))));
        }
        Ok(())
    }

    pub(crate) fn insert(&mut self, table: Arc<Table>) {
        self.by_id.insert(table.id(), table.clone());
        self.tables.insert(table.path().clone(), table);
    }

    /// Remove a table; returns it and its partitions.
    pub(crate) fn remove(&mut self, path: &TablePath) -> Option<(Arc<Table>, Vec<Arc<Table>>)> {
        let t = self.tables.remove(path)?;
        self.by_id.remove(&t.id());
        let parts: Vec<Arc<Table>> = self.partitions.remove(&t.id()).map(|m| m.into_values().collect()).unwrap_or_default();
        for p in &parts {
            self.partitions_by_id.remove(&p.partition_id().expect("a partition"));
        }
        Some((t, parts))
    }

    pub(crate) fn table(&self, path: &TablePath) -> Result<Arc<Table>> {
        self.tables.get(path).cloned().ok_or_else(|| Error::server(FlussCode::TABLE_NOT_EXIST, format!("table {path} does not exist")))
    }

    /// The durable image of the current state (callers change the image, persist it, then
    /// apply the same change in memory, so memory never runs ahead of the disk).
    pub(crate) fn image(&self) -> CatalogImage {
        CatalogImage {
            databases: self.databases.clone(),
            tables: self.tables.values().map(|t| TableRecord { info: t.info.clone(), older_schemas: t.older_schemas.clone() }).collect(),
            partitions: self
                .partitions_by_id
                .values()
                .map(|p| PartitionRecord {
                    table_id: p.id(),
                    partition_id: p.partition_id().expect("a partition"),
                    name: p.partition_name().expect("a partition").to_string(),
                    bucket_count: Some(p.bucket_count()),
                })
                .collect(),
            next_table_id: self.next_table_id,
            next_partition_id: self.next_partition_id,
            next_writer_id: self.next_writer_id,
        }
    }

    /// Parse `catalog.json`: the catalog without tables, plus the tables and partitions (whose
    /// buckets the caller opens and replays).
    pub(crate) fn from_json(bytes: &[u8]) -> Result<(Catalog, Vec<TableRecord>, Vec<PartitionRecord>)> {
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
                bucket_count_epoch: Some(t.get("bucket_count_epoch").and_then(Json::as_i64).unwrap_or(0)),
            };
            // Written since schema changes (absent in older catalogs: schema 1 only).
            let mut older = Vec::new();
            for o in t.get("older_schemas").and_then(Json::as_array).map(Vec::as_slice).unwrap_or_default() {
                older.push(schema_from_json(o).map_err(|e| bad(format!("table {}: older schema: {}", info.path, e.message())))?);
            }
            if older.len() + 1 != info.schema_id as usize {
                return Err(bad(format!("table {} has schema id {} but {} older schemas", info.path, info.schema_id, older.len())));
            }
            records.push(TableRecord { info, older_schemas: Arc::new(older) });
        }
        // Written since partitioned tables (absent in older catalogs: none).
        let mut partitions = Vec::new();
        for p in v.get("partitions").and_then(Json::as_array).map(Vec::as_slice).unwrap_or_default() {
            let i = |k: &str| p.get(k).and_then(Json::as_i64).ok_or_else(|| bad(format!("partition without {k}")));
            let name = p.get("name").and_then(Json::as_str).ok_or_else(|| bad("partition without name".into()))?;
            let bucket_count = match p.get("bucket_count") {
                None => None,
                Some(n) => Some(
                    n.as_i64()
                        .and_then(|n| i32::try_from(n).ok())
                        .filter(|n| *n >= 1)
                        .ok_or_else(|| bad(format!("partition {name}: bad bucket_count {n}")))?,
                ),
            };
            partitions.push(PartitionRecord {
                table_id: i("table_id")?,
                partition_id: i("partition_id")?,
                name: name.to_string(),
                bucket_count,
            });
        }
        let catalog = Catalog {
            databases,
            tables: BTreeMap::new(),
            by_id: HashMap::new(),
            partitions: HashMap::new(),
            partitions_by_id: HashMap::new(),
            next_table_id: int("next_table_id")?,
            next_partition_id: v.get("next_partition_id").and_then(Json::as_i64).unwrap_or(1),
            next_writer_id: int("next_writer_id")?,
        };
        Ok((catalog, records, partitions))
    }
}

/// The info of a partition of the table `info` that has `bucket_count` buckets (the table's
/// info but for the count: a partition keeps the count it was created with).
pub(crate) fn partition_info(info: &TableInfo, bucket_count: i32) -> TableInfo {
    info.with_bucket_count(bucket_count)
}

/// One partition in `catalog.json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PartitionRecord {
    pub table_id: i64,
    pub partition_id: i64,
    pub name: String,
    /// The partition's own bucket count (`None` in catalogs written before per-partition counts:
    /// the table's).
    pub bucket_count: Option<i32>,
}

/// A table in `catalog.json`: its info (current schema) and the schemas before it.
#[derive(Clone)]
pub(crate) struct TableRecord {
    pub info: TableInfo,
    pub older_schemas: Arc<Vec<Schema>>,
}

/// What `catalog.json` holds.
pub(crate) struct CatalogImage {
    pub databases: BTreeSet<String>,
    pub tables: Vec<TableRecord>,
    pub partitions: Vec<PartitionRecord>,
    pub next_table_id: i64,
    pub next_partition_id: i64,
    pub next_writer_id: i64,
}

impl CatalogImage {
    pub(crate) fn to_json(&self) -> Vec<u8> {
        let v = json!({
            "version": 1,
            "next_table_id": self.next_table_id,
            "next_partition_id": self.next_partition_id,
            "next_writer_id": self.next_writer_id,
            "databases": self.databases,
            "tables": self.tables.iter().map(table_to_json).collect::<Vec<_>>(),
            "partitions": self.partitions.iter().map(|p| json!({"table_id": p.table_id, "partition_id": p.partition_id, "name": p.name, "bucket_count": p.bucket_count})).collect::<Vec<_>>(),
        });
        serde_json::to_vec_pretty(&v).expect("JSON of plain values")
    }
}

fn table_to_json(record: &TableRecord) -> Json {
    let info = &record.info;
    let descriptor: Json = serde_json::from_slice(&descriptor_to_json(&info.descriptor)).expect("own JSON");
    json!({
        "older_schemas": record.older_schemas.iter().map(schema_to_json).collect::<Vec<_>>(),
        "database": info.path.database,
        "table": info.path.table,
        "table_id": info.table_id,
        "schema_id": info.schema_id,
        "created_time": info.created_time,
        "modified_time": info.modified_time,
        "bucket_count_epoch": info.bucket_count_epoch.unwrap_or(0),
        "table_json": descriptor,
    })
}

/// The entry of a primary key in a bucket's key-value state. Keys inside a partition leave out
/// the partition columns, so the historical partition, which holds the rows of several expired
/// partitions, keeps each key within the namespace of the partition its row belongs to
/// (`original`, the write's `original_partition_name`), as the Fluss 1.0 tablet server does
/// (apache/fluss#4001). Partition names hold no NUL, so the prefix is unambiguous.
pub(crate) fn kv_key<'a>(original: Option<&str>, key: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
    match original {
        None => std::borrow::Cow::Borrowed(key),
        Some(o) => {
            let mut k = Vec::with_capacity(o.len() + 1 + key.len());
            k.extend_from_slice(o.as_bytes());
            k.push(0);
            k.extend_from_slice(key);
            std::borrow::Cow::Owned(k)
        }
    }
}
