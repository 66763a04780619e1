//! [`EmbeddedEngine`]: opening, the catalog requests (DDL, metadata, `InitWriter`) and the
//! data requests (`ProduceLog`, `PutKv`, `FetchLog`, `ListOffsets`, `Lookup`), answered exactly
//! as a Fluss 0.9.1 cluster of one coordinator and one tablet server (node 0) would answer them.
//!
//! A request is processed synchronously inside [`Backend::send`], on the caller's thread, so the
//! requests of one caller are applied in the order it sent them (as a server processes the
//! requests of one connection); the returned future only waits out an injected delay.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::backend::{Backend, BoxFuture, Dest, Request, Response};
use crate::config::Config;
use crate::error::{ClientCode, Error, FlussCode, Result};
use crate::metadata::partition::{AutoPartition, PartitionSpec, HISTORICAL_ENABLED, HISTORICAL_PARTITION};
use crate::metadata::{
    check_field_ids, data_type_from_json, descriptor_from_json, schema_to_json, validate_name, Column, Schema, TableDescriptor, TableInfo,
    TablePath,
};
use crate::wire::compacted::encode_row;
use crate::wire::key::KV_FORMAT_VERSION_PROPERTY;
use crate::wire::lake::{self, LakeFormat};
use crate::wire::proto;

use super::bucket::Bucket;
use super::catalog::{kv_key, partition_info, Catalog, CatalogImage, PartitionRecord, Table, TableRecord};
use super::faults::{Fault, Faults};
use super::pressure::PressureConfig;
use super::store::Store;
use super::{kv, produce, Counters};

/// The node id of the one embedded "server" (coordinator and tablet server).
pub const NODE_ID: i32 = 0;
/// Host name reported for node 0 in `Metadata`.
pub const NODE_HOST: &str = "embedded";

const INVALID_DATABASE: i32 = 16;
const INVALID_REQUIRED_ACKS: i32 = 18;
const LOG_OFFSET_OUT_OF_RANGE: i32 = 19;
const INVALID_COLUMN_PROJECTION: i32 = 34;
const TABLE_NOT_PARTITIONED: i32 = 37;
/// The partitions a table may have (the server's `max.partition.num` default).
pub const MAX_PARTITIONS: usize = 1000;

/// Table properties whose non-default values change write semantics that the embedded engine
/// does not implement; a table that sets them is refused (`INVALID_CONFIG`, 39) rather than
/// silently behaving like a default table. Value `None` = any value is refused.
const UNSUPPORTED_PROPERTIES: &[(&str, Option<&str>)] = &[
    ("table.merge-engine", None),
    ("table.changelog.image", Some("FULL")),
    ("table.delete.behavior", Some("ALLOW")),
    ("table.log.format", Some("ARROW")),
    ("table.kv.format", Some("COMPACTED")),
];

/// Reserved system column names (Fluss refuses them in user schemas).
const RESERVED_COLUMNS: &[&str] = &["__offset", "__timestamp", "__bucket"];

pub(crate) use crate::timeouts::wall_clock_ms as now_ms;

/// An in-process Fluss "server" with real tables, buckets, offsets and primary-key state, in
/// memory (`embedded`) or durable in a directory (`embedded:<dir>`). See the module docs of
/// `embedded` for the format and the guarantees.
pub struct EmbeddedEngine {
    location: String,
    default_buckets: i32,
    /// `embedded.datalake.format`: the lake of this "cluster" (`None`: none).
    lake: Option<LakeFormat>,
    pressure: PressureConfig,
    store: Option<Store>,
    catalog: Mutex<Catalog>,
    faults: Faults,
    pub(crate) counters: Counters,
    closed: AtomicBool,
}

impl std::fmt::Debug for EmbeddedEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedEngine").field("location", &self.location).field("closed", &self.is_closed()).finish()
    }
}

enum Location<'a> {
    Memory,
    Dir(&'a str),
}

fn parse_location(location: &str) -> Result<Location<'_>> {
    let invalid = |why: &str| Error::client(ClientCode::InvalidConfig, format!("bootstrap.servers = {location:?}: {why}"));
    match location.trim() {
        "embedded" => Ok(Location::Memory),
        l => match l.strip_prefix("embedded:") {
            Some("") => Err(invalid("embedded:<dir> needs a directory")),
            Some(dir) => Ok(Location::Dir(dir)),
            None => Err(invalid("not an embedded location (expected \"embedded\" or \"embedded:<dir>\")")),
        },
    }
}

/// Fluss-style error for a problem in a DDL request.
fn server(code: i32, message: impl Into<String>) -> Error {
    Error::server(code, message)
}

/// What a server answers for a partition that does not exist.
fn partition_not_exists(table: &TablePath, name: &str) -> Error {
    server(FlussCode::PARTITION_NOT_EXISTS, format!("Table partition '{table}(p={name})' does not exist."))
}

/// The catalog record of a partition's physical table.
fn record_of(p: &Table) -> PartitionRecord {
    PartitionRecord {
        table_id: p.id(),
        partition_id: p.partition_id().expect("a partition"),
        name: p.partition_name().unwrap_or_default().to_string(),
        bucket_count: Some(p.bucket_count()),
    }
}

/// Mark a dropped table's or partition's buckets closed (writes still holding them fail) and
/// let go of their files.
fn close_buckets(t: &Table) {
    for b in 0..t.bucket_count() {
        if let Some(mut bucket) = t.bucket(b) {
            bucket.closed = true;
            bucket.file = None;
        }
    }
}

/// What a coordinator checks and adds at CreateTable beyond the descriptor's own rules: a
/// datalake format it knows (kept: the format decides key bytes and buckets); the cluster's lake
/// (`lake`, `embedded.datalake.format`: the server's `datalake.format`) as the format of a table
/// that names none; `table.datalake.enabled` refused without a lake (as on a server without
/// `datalake.format`) and with another format than the lake's; the Fluss 1.0 rules of historical
/// partitions; and primary-key tables stamped with the current kv format version (2) unless they
/// name one. With a lake the engine still keeps every row itself (it tiers nothing).
fn server_table_defaults(path: &TablePath, mut d: TableDescriptor, lake: Option<LakeFormat>) -> Result<TableDescriptor> {
    let config = |m: String| server(FlussCode::INVALID_CONFIG, format!("table {path}: {m}"));
    if let Some(v) = d.properties.get(lake::FORMAT_PROPERTY) {
        LakeFormat::from_property(Some(v)).map_err(|e| config(e.message().to_string()))?;
    }
    if let Some(c) = d.schema.columns().iter().find(|c| c.agg_function.is_some()) {
        return Err(no_agg_table(&c.name, &c.agg_function.as_ref().map_or(String::new(), |f| f.name.clone())));
    }
    // The cluster's lake becomes the table's format, unless the table names one.
    if let Some(f) = lake {
        d.properties.entry(lake::FORMAT_PROPERTY.to_string()).or_insert_with(|| f.name().to_string());
    }
    let lake_enabled = d.flag("table.datalake.enabled");
    if lake_enabled && lake.is_none() {
        return Err(server(
            FlussCode::INVALID_TABLE,
            "'table.datalake.enabled' is enabled for the table, but the Fluss cluster doesn't enable datalake tables.",
        ));
    }
    let table_format = LakeFormat::from_property(d.properties.get(lake::FORMAT_PROPERTY).map(String::as_str)).ok().flatten();
    if let (true, Some(cluster), Some(table)) = (lake_enabled, lake, table_format) {
        if cluster != table {
            return Err(config(format!(
                "'{}' ('{}') must match cluster 'datalake.format' ('{}') when 'table.datalake.enabled' is enabled.",
                lake::FORMAT_PROPERTY,
                table.name(),
                cluster.name()
            )));
        }
    }
    check_historical_partition(&d, table_format).map_err(|m| server(FlussCode::INVALID_CONFIG, m))?;
    if d.schema.has_primary_key() {
        match d.properties.get(KV_FORMAT_VERSION_PROPERTY) {
            None => {
                d.properties.insert(KV_FORMAT_VERSION_PROPERTY.to_string(), CURRENT_KV_FORMAT_VERSION.to_string());
            }
            Some(v) => match v.trim().parse::<i32>() {
                Ok(n) if n > CURRENT_KV_FORMAT_VERSION => {
                    return Err(config(format!(
                        "Unsupported kv format version {n}. The maximum supported version is {CURRENT_KV_FORMAT_VERSION}."
                    )))
                }
                Ok(_) => {}
                Err(_) => return Err(config(format!("{KV_FORMAT_VERSION_PROPERTY} = {v:?} is not an integer"))),
            },
        }
    }
    Ok(d)
}

/// The rules a Fluss 1.0 coordinator applies to `table.datalake.historical-partition.enabled`
/// (its message, INVALID_CONFIG): an auto-partitioned lake table in Paimon with one partition
/// key. (The 1.0-SNAPSHOT coordinator also required a primary key; Fluss 1.0.0 routes log
/// tables too, apache/fluss#4120.)
fn check_historical_partition(d: &TableDescriptor, format: Option<LakeFormat>) -> std::result::Result<(), String> {
    if !d.flag(HISTORICAL_ENABLED) {
        return Ok(());
    }
    let mut unmet = Vec::new();
    if !d.flag(AutoPartition::ENABLED) {
        unmet.push(format!("'{}' must be set to true", AutoPartition::ENABLED));
    }
    if !d.flag("table.datalake.enabled") {
        unmet.push("'table.datalake.enabled' must be set to true".to_string());
    }
    match format {
        None => unmet.push(format!("'{}' must be set to 'paimon' (currently not set)", lake::FORMAT_PROPERTY)),
        Some(LakeFormat::Paimon) => {}
        Some(f) => unmet.push(format!("'{}' must be set to 'paimon' (currently '{}')", lake::FORMAT_PROPERTY, f.name())),
    }
    if d.partition_keys.len() != 1 {
        unmet.push(format!("the table must define exactly one partition key (found {})", d.partition_keys.len()));
    }
    if unmet.is_empty() {
        Ok(())
    } else {
        Err(format!("'{HISTORICAL_ENABLED}' has unmet requirements: {}.", unmet.join("; ")))
    }
}

/// What a server answers for a column with an aggregation function in a table without the
/// aggregation merge engine (every table of the embedded engine).
fn no_agg_table(column: &str, function: &str) -> Error {
    server(
        FlussCode::INVALID_CONFIG,
        format!(
            "Aggregation function is only supported for aggregation merge engine table, but column '{column}' has aggregation \
             function '{function}' (the embedded engine has no aggregation merge engine)."
        ),
    )
}

/// The kv format version a 0.9.1 server gives new primary-key tables.
const CURRENT_KV_FORMAT_VERSION: i32 = 2;

fn table_path(p: &proto::PbTablePath) -> TablePath {
    TablePath { database: p.database_name.clone(), table: p.table_name.clone() }
}

/// A per-bucket error as it goes into a response entry: server codes pass through; a client
/// code raised inside the engine (a wire encoder refusing a row) becomes a non-retriable
/// `UNKNOWN_SERVER_ERROR` that keeps the message.
fn entry_error(e: &Error) -> (i32, String) {
    if e.is_server_error() {
        (e.code(), e.message().to_string())
    } else {
        (FlussCode::UNKNOWN_SERVER_ERROR, format!("{}: {}", e.code_name(), e.message()))
    }
}

/// Faults consumed by one write request.
#[derive(Default)]
struct RequestFaults {
    delay: Option<Duration>,
    drop_before: bool,
    drop_after: bool,
}

impl EmbeddedEngine {
    /// Open an engine. `location` is `"embedded"` (in memory, owned by the caller) or
    /// `"embedded:<dir>"` (durable; the directory is created if missing, replayed if it holds
    /// an engine, and locked against a second engine until `Backend::close` or drop).
    /// `config.default_bucket_number` is the bucket count of tables created without one;
    /// `config.embedded_fsync` is the fsync policy.
    ///
    /// Fails with `IO` if the directory cannot be created, is locked, or holds data this
    /// build cannot read.
    pub fn open(location: &str, config: &Config) -> Result<Arc<EmbeddedEngine>> {
        let (store, catalog) = match parse_location(location)? {
            Location::Memory => (None, Catalog::new()),
            Location::Dir(dir) => {
                let store = Store::open(std::path::Path::new(dir), config.embedded_fsync)?;
                let catalog = Self::recover(&store)?;
                (Some(store), catalog)
            }
        };
        Ok(Arc::new(EmbeddedEngine {
            location: location.trim().to_string(),
            default_buckets: config.default_bucket_number,
            lake: config.embedded_datalake_format,
            pressure: PressureConfig {
                l0_slowdown_trigger: config.embedded_kv_l0_slowdown_trigger,
                write_buffer_size: config.embedded_kv_write_buffer_size,
                compaction_per_file: config.embedded_kv_compaction_time_per_file,
            },
            store,
            catalog: Mutex::new(catalog),
            faults: Faults::default(),
            counters: Counters::default(),
            closed: AtomicBool::new(false),
        }))
    }

    /// Read the catalog and replay every bucket file.
    fn recover(store: &Store) -> Result<Catalog> {
        let Some(bytes) = store.read_catalog()? else {
            let catalog = Catalog::new();
            store.write_catalog(&catalog.image().to_json())?;
            store.remove_orphans(&Default::default())?;
            return Ok(catalog);
        };
        let (mut catalog, records, partitions) = Catalog::from_json(&bytes)?;
        for record in records {
            catalog.insert(Arc::new(Self::reopen(store, record, None)?));
        }
        for PartitionRecord { table_id, partition_id, name, bucket_count } in partitions {
            let record = catalog
                .by_id
                .get(&table_id)
                .map(|t| TableRecord {
                    info: partition_info(&t.info, bucket_count.unwrap_or_else(|| t.info.bucket_count())),
                    older_schemas: t.older_schemas.clone(),
                })
                .ok_or_else(|| {
                    Error::client(ClientCode::Io, format!("catalog.json: partition {partition_id} of unknown table id {table_id}"))
                })?;
            catalog.insert_partition(Arc::new(Self::reopen(store, record, Some((partition_id, name)))?));
        }
        let live = catalog
            .by_id
            .keys()
            .map(|id| (*id, catalog.partitions.get(id).map(|m| m.values().filter_map(|p| p.partition_id()).collect()).unwrap_or_default()))
            .collect();
        store.remove_orphans(&live)?;
        Ok(catalog)
    }

    /// Open the bucket files of a table or partition and replay them.
    fn reopen(store: &Store, record: TableRecord, partition: Option<(i64, String)>) -> Result<Table> {
        let TableRecord { info, older_schemas } = record;
        let id = info.table_id;
        let pid = partition.as_ref().map(|(p, _)| *p);
        let n = if info.is_partitioned() && partition.is_none() { 0 } else { info.bucket_count() };
        let mut buckets = Vec::new();
        let mut payloads = Vec::new();
        for b in 0..n {
            let (file, p) = store.open_bucket(id, pid, b)?;
            buckets.push(Bucket::new(b, Some(file)));
            payloads.push(p);
        }
        let table = Table::new(info, older_schemas, partition, buckets)?;
        for (b, batches) in payloads.into_iter().enumerate() {
            let mut bucket = table.bucket(b as i32).expect("bucket in range");
            for bytes in batches {
                let stored = bucket.replay(bytes)?;
                if table.is_pk() {
                    kv::replay_changelog(&table, &mut bucket, &stored.bytes)
                        .map_err(|e| e.context(format!("replaying table {} bucket {b}", table.describe())))?;
                }
            }
        }
        Ok(table)
    }

    /// `"embedded"` or `"embedded:<dir>"`, as opened.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Whether this engine keeps its data in a directory.
    pub fn is_durable(&self) -> bool {
        self.store.is_some()
    }

    /// Whether `Backend::close` was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The fault-injection handle of this engine (clones share the same faults).
    pub fn faults(&self) -> Faults {
        self.faults.clone()
    }

    fn lock_catalog(&self) -> MutexGuard<'_, Catalog> {
        // DDL changes memory only after the disk, in one step; a panic cannot tear it.
        self.catalog.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The table at `path`, or `TABLE_NOT_EXIST`.
    pub(crate) fn table(&self, path: &TablePath) -> Result<Arc<Table>> {
        self.lock_catalog().table(path)
    }

    /// The physical table of `(table_id, partition_id)` (see [`Catalog::physical`]) that a read
    /// request names, checked like a write: the bucket count the request names must be its
    /// partition's, and it must name one once the table was rescaled; INVALID_BUCKET_ROUTING
    /// otherwise (see [`routing_error`]).
    fn routed(&self, table_id: i64, partition_id: Option<i64>, routing: Option<i32>) -> Result<Arc<Table>> {
        let cat = self.lock_catalog();
        let t = cat.physical(table_id, partition_id)?;
        let epoch = cat.by_id.get(&table_id).and_then(|t| t.info.bucket_count_epoch).unwrap_or(0);
        match routing_error(&t, epoch, routing) {
            Some((code, message)) => Err(server(code, message)),
            None => Ok(t),
        }
    }

    /// The partitions of a partitioned table, in name order (`TABLE_NOT_PARTITIONED` otherwise).
    pub(crate) fn partitions_of(&self, table: &TablePath) -> Result<Vec<Arc<Table>>> {
        let cat = self.lock_catalog();
        let t = cat.table(table)?;
        if !t.info.is_partitioned() {
            return Err(server(TABLE_NOT_PARTITIONED, format!("Table '{table}' is not a partitioned table.")));
        }
        Ok(cat.partitions.get(&t.id()).map(|m| m.values().cloned().collect()).unwrap_or_default())
    }

    /// The partition of `table` called `name`, if it exists.
    pub(crate) fn partition(&self, table: &TablePath, name: &str) -> Result<Arc<Table>> {
        let cat = self.lock_catalog();
        let t = cat.table(table)?;
        cat.partitions.get(&t.id()).and_then(|m| m.get(name)).cloned().ok_or_else(|| partition_not_exists(table, name))
    }

    /// Persist the catalog image (durable engines); a failure is `STORAGE_EXCEPTION`.
    fn persist(&self, image: &CatalogImage) -> Result<()> {
        match &self.store {
            Some(store) => store
                .write_catalog(&image.to_json())
                .map_err(|e| server(FlussCode::STORAGE_EXCEPTION, format!("cannot persist the catalog: {}", e.message()))),
            None => Ok(()),
        }
    }

    // ===== dispatch =====

    /// A request the client addressed to the coordinator: its injected coordinator faults first
    /// (see [`Faults::inject_coordinator`]), then [`Self::handle`].
    fn handle_coordinator(&self, request: Request) -> (Result<Response>, Option<Duration>) {
        match self.faults.take_coordinator() {
            None => self.handle(request),
            // What a server's error response carries; the request is not processed.
            Some(Fault::Error { code, message, .. }) => (Err(Error::server(code, message)), None),
            Some(Fault::Delay { delay, .. }) => {
                let (result, d) = self.handle(request);
                (result, Some(d.map_or(delay, |d| d.max(delay))))
            }
            Some(Fault::DropConnection { after_apply, .. }) => {
                let when = if after_apply {
                    let _ = self.handle(request);
                    "after processing the request"
                } else {
                    "before processing the request"
                };
                (
                    Err(server(
                        FlussCode::NETWORK_EXCEPTION,
                        format!("connection to the coordinator dropped by an injected fault ({when})"),
                    )),
                    None,
                )
            }
        }
    }

    fn handle(&self, request: Request) -> (Result<Response>, Option<Duration>) {
        if self.is_closed() {
            return (Err(Error::client(ClientCode::ConnectionClosed, "the embedded engine is closed")), None);
        }
        let r = match request {
            Request::ApiVersions(_) => Ok(Response::ApiVersions(api_versions())),
            // In-process: there is no listener to authenticate on (what a PLAINTEXT server says).
            Request::Authenticate(_) => {
                Err(Error::server(FlussCode::SECURITY_DISABLED, "the embedded engine has no authentication (it runs in this process)"))
            }
            // What a server without `authorizer.enabled` answers.
            Request::CreateAcls(_) | Request::ListAcls(_) | Request::DropAcls(_) => {
                Err(Error::server(FlussCode::SECURITY_DISABLED, "the embedded engine has no authorizer: ACLs are a cluster feature"))
            }
            Request::CreateDatabase(r) => self.create_database(r).map(Response::CreateDatabase),
            Request::DropDatabase(r) => self.drop_database(r).map(Response::DropDatabase),
            Request::ListDatabases(_) => Ok(Response::ListDatabases(proto::ListDatabasesResponse {
                database_name: self.lock_catalog().databases.iter().cloned().collect(),
            })),
            Request::DatabaseExists(r) => Ok(Response::DatabaseExists(proto::DatabaseExistsResponse {
                exists: self.lock_catalog().databases.contains(&r.database_name),
            })),
            Request::CreateTable(r) => self.create_table(r).map(Response::CreateTable),
            Request::DropTable(r) => self.drop_table(r).map(Response::DropTable),
            Request::GetTableInfo(r) => self.get_table_info(r).map(Response::GetTableInfo),
            Request::GetTableSchema(r) => self.get_table_schema(r).map(Response::GetTableSchema),
            Request::AlterTable(r) => self.alter_table(r).map(Response::AlterTable),
            Request::ListTables(r) => self.list_tables(r).map(Response::ListTables),
            Request::TableExists(r) => Ok(Response::TableExists(proto::TableExistsResponse {
                exists: self.lock_catalog().tables.contains_key(&table_path(&r.table_path)),
            })),
            Request::CreatePartition(r) => self.create_partition(r).map(Response::CreatePartition),
            Request::DropPartition(r) => self.drop_partition(r).map(Response::DropPartition),
            Request::ListPartitionInfos(r) => self.list_partition_infos(r).map(Response::ListPartitionInfos),
            Request::Metadata(r) => self.metadata(r).map(Response::Metadata),
            Request::InitWriter(_) => self.init_writer().map(Response::InitWriter),
            Request::ProduceLog(r) => return self.produce_log(r),
            Request::PutKv(r) => return self.put_kv(r),
            Request::FetchLog(r) => self.fetch_log(r).map(Response::FetchLog),
            Request::ListOffsets(r) => self.list_offsets(r).map(Response::ListOffsets),
            Request::Lookup(r) => self.lookup_request(r).map(Response::Lookup),
        };
        (r, None)
    }

    // ===== catalog requests =====

    fn create_database(&self, r: proto::CreateDatabaseRequest) -> Result<proto::CreateDatabaseResponse> {
        validate_name(&r.database_name, "database").map_err(|e| server(INVALID_DATABASE, e.message()))?;
        let mut cat = self.lock_catalog();
        if cat.databases.contains(&r.database_name) {
            return if r.ignore_if_exists {
                Ok(proto::CreateDatabaseResponse {})
            } else {
                Err(server(FlussCode::DATABASE_ALREADY_EXIST, format!("database {} already exists", r.database_name)))
            };
        }
        let mut image = cat.image();
        image.databases.insert(r.database_name.clone());
        self.persist(&image)?;
        cat.databases.insert(r.database_name);
        Ok(proto::CreateDatabaseResponse {})
    }

    fn drop_database(&self, r: proto::DropDatabaseRequest) -> Result<proto::DropDatabaseResponse> {
        let mut cat = self.lock_catalog();
        let db = r.database_name;
        if !cat.databases.contains(&db) {
            return if r.ignore_if_not_exists {
                Ok(proto::DropDatabaseResponse {})
            } else {
                Err(server(FlussCode::DATABASE_NOT_EXIST, format!("database {db} does not exist")))
            };
        }
        let doomed: Vec<TablePath> = cat.tables.keys().filter(|p| p.database == db).cloned().collect();
        if !doomed.is_empty() && !r.cascade {
            return Err(server(
                FlussCode::DATABASE_NOT_EMPTY,
                format!("database {db} is not empty ({} tables); drop its tables first or use cascade", doomed.len()),
            ));
        }
        let mut image = cat.image();
        image.databases.remove(&db);
        let ids: Vec<i64> = doomed.iter().filter_map(|p| cat.tables.get(p)).map(|t| t.id()).collect();
        image.tables.retain(|t| t.info.path.database != db);
        image.partitions.retain(|p| !ids.contains(&p.table_id));
        self.persist(&image)?;
        cat.databases.remove(&db);
        for p in doomed {
            if let Some((t, parts)) = cat.remove(&p) {
                self.discard(&t, &parts);
            }
        }
        Ok(proto::DropDatabaseResponse {})
    }

    /// Close a dropped table's buckets (and its partitions') and remove its files.
    fn discard(&self, table: &Table, partitions: &[Arc<Table>]) {
        for t in std::iter::once(table).chain(partitions.iter().map(|p| &**p)) {
            close_buckets(t);
        }
        if let Some(store) = &self.store {
            store.remove_table(table.id(), None);
        }
    }

    fn create_table(&self, r: proto::CreateTableRequest) -> Result<proto::CreateTableResponse> {
        let invalid = |m: String| server(FlussCode::INVALID_TABLE, m);
        let path = table_path(&r.table_path);
        validate_name(&path.table, "table").map_err(|e| invalid(e.message().to_string()))?;
        check_field_ids(&r.table_json)?;
        let descriptor = descriptor_from_json(&r.table_json).and_then(|d| d.normalized(self.default_buckets)).map_err(|e| {
            // The server refuses bad options with INVALID_CONFIG, everything else with INVALID_TABLE.
            let code =
                if e.client_code() == Some(ClientCode::InvalidConfig) { FlussCode::INVALID_CONFIG } else { FlussCode::INVALID_TABLE };
            server(code, format!("table {path}: {}", e.message()))
        })?;
        if let Some(c) = descriptor.schema.columns().iter().find(|c| RESERVED_COLUMNS.contains(&c.name.as_str())) {
            return Err(invalid(format!("table {path}: column name {:?} is reserved for system columns", c.name)));
        }
        for (k, v) in &descriptor.properties {
            if !k.starts_with("table.") {
                return Err(server(
                    FlussCode::INVALID_CONFIG,
                    format!("table {path}: property {k:?} is not a table option; put free-form keys in custom_properties"),
                ));
            }
            if let Some((_, default)) = UNSUPPORTED_PROPERTIES.iter().find(|(u, _)| u == k) {
                if default.is_none_or(|d| !d.eq_ignore_ascii_case(v)) {
                    return Err(server(
                        FlussCode::INVALID_CONFIG,
                        format!("table {path}: {k} = {v:?} is not supported by the embedded engine"),
                    ));
                }
            }
        }
        let descriptor = server_table_defaults(&path, descriptor, self.lake)?;
        let mut cat = self.lock_catalog();
        if !cat.databases.contains(&path.database) {
            return Err(server(FlussCode::DATABASE_NOT_EXIST, format!("database {} does not exist", path.database)));
        }
        if cat.tables.contains_key(&path) {
            return if r.ignore_if_exists {
                Ok(proto::CreateTableResponse {})
            } else {
                Err(server(FlussCode::TABLE_ALREADY_EXIST, format!("table {path} already exists")))
            };
        }
        let id = cat.next_table_id;
        let now = now_ms();
        let auto = AutoPartition::from_descriptor(&descriptor)?;
        let info =
            TableInfo { path, table_id: id, schema_id: 1, descriptor, created_time: now, modified_time: now, bucket_count_epoch: Some(0) };
        // A partitioned table's buckets live in its partitions; an auto-partitioned one gets its
        // current and next partitions at once (the server creates them right after CreateTable).
        let mut precreate: Vec<String> = match &auto {
            Some(a) if a.num_precreate > 0 && info.partition_keys().len() == 1 => a
                .names_from(now, 0, a.num_precreate)
                .map_err(|e| server(FlussCode::INVALID_TABLE, format!("table {}: {}", info.path, e.message())))?,
            _ => Vec::new(),
        };
        // A table with historical partitions gets its historical partition with it.
        if info.descriptor.flag(HISTORICAL_ENABLED) {
            precreate.push(HISTORICAL_PARTITION.to_string());
        }
        let table = Arc::new(self.new_physical(&info, Arc::default(), None)?);
        let mut parts = Vec::new();
        for (i, name) in precreate.iter().enumerate() {
            let pid = cat.next_partition_id + i as i64;
            match self.new_physical(&info, Arc::default(), Some((pid, name.clone()))) {
                Ok(p) => parts.push(Arc::new(p)),
                Err(e) => {
                    self.remove_files(id, None);
                    return Err(e);
                }
            }
        }
        let mut image = cat.image();
        image.tables.push(TableRecord { info, older_schemas: Arc::new(Vec::new()) });
        image.next_table_id = id + 1;
        image.next_partition_id = cat.next_partition_id + parts.len() as i64;
        image.partitions.extend(parts.iter().map(|p| record_of(p)));
        if let Err(e) = self.persist(&image) {
            self.remove_files(id, None);
            return Err(e);
        }
        cat.next_table_id = id + 1;
        cat.next_partition_id = image.next_partition_id;
        cat.insert(table);
        for p in parts {
            cat.insert_partition(p);
        }
        Ok(proto::CreateTableResponse {})
    }

    /// A new table (`partition` None) or partition with empty buckets (files created for a
    /// durable engine). The table entry of a partitioned table has no buckets.
    fn new_physical(&self, info: &TableInfo, older_schemas: Arc<Vec<Schema>>, partition: Option<(i64, String)>) -> Result<Table> {
        let pid = partition.as_ref().map(|(p, _)| *p);
        let n = if info.is_partitioned() && partition.is_none() { 0 } else { info.bucket_count() };
        let buckets = match &self.store {
            Some(store) => {
                store.create_table(info.table_id, pid, n)?.into_iter().enumerate().map(|(b, f)| Bucket::new(b as i32, Some(f))).collect()
            }
            None => (0..n).map(|b| Bucket::new(b, None)).collect(),
        };
        Table::new(info.clone(), older_schemas, partition, buckets)
    }

    fn remove_files(&self, table_id: i64, partition_id: Option<i64>) {
        if let Some(store) = &self.store {
            store.remove_table(table_id, partition_id);
        }
    }

    /// The table of a partition request, checked to be partitioned (`TABLE_NOT_EXIST`,
    /// `TABLE_NOT_PARTITIONED` otherwise), and the spec's partition name
    /// (`PARTITION_SPEC_INVALID`).
    fn partition_target(
        cat: &Catalog,
        path: &TablePath,
        spec: Option<&proto::PbPartitionSpec>,
        what: &str,
    ) -> Result<(Arc<Table>, Option<String>)> {
        let t = cat.table(path)?;
        if !t.info.is_partitioned() {
            return Err(server(TABLE_NOT_PARTITIONED, format!("Only partitioned table support {what} partition.")));
        }
        let name = match spec {
            None => None,
            Some(spec) => {
                let spec = PartitionSpec::new(spec.partition_key_values.iter().map(|kv| (kv.key.clone(), kv.value.clone())));
                Some(spec.name(t.info.partition_keys()).map_err(|e| server(FlussCode::PARTITION_SPEC_INVALID, e.message()))?)
            }
        };
        Ok((t, name))
    }

    fn create_partition(&self, r: proto::CreatePartitionRequest) -> Result<proto::CreatePartitionResponse> {
        let path = table_path(&r.table_path);
        let mut cat = self.lock_catalog();
        let (t, name) = Self::partition_target(&cat, &path, Some(&r.partition_spec), "create")?;
        let name = name.expect("a spec");
        // A table with Fluss 1.0's `table.auto-partition.time-format` is checked as a 1.0
        // coordinator checks it: the auto-partition value must read in the format and not be
        // older than the table retains (without the option: no check, as on 0.9.1).
        if let Some(auto) = AutoPartition::from_descriptor(&t.info.descriptor)?.filter(|a| a.time_format.is_some()) {
            let spec = PartitionSpec::from_name(t.info.partition_keys(), &name)?;
            let value = spec.get(&auto.key).unwrap_or_default();
            auto.check_value(value, now_ms()).map_err(|m| server(FlussCode::PARTITION_SPEC_INVALID, m))?;
        }
        let existing = cat.partitions.get(&t.id());
        if existing.is_some_and(|m| m.contains_key(&name)) {
            // Field 3 of CreatePartition means "ignore if it exists".
            return if r.ignore_if_not_exists {
                Ok(proto::CreatePartitionResponse {})
            } else {
                Err(server(FlussCode::PARTITION_ALREADY_EXISTS, format!("Partition '{name}' already exists for table {path}")))
            };
        }
        if existing.map_or(0, |m| m.len()) + 1 > MAX_PARTITIONS {
            return Err(server(
                FlussCode::PARTITION_MAX_NUM,
                format!("Exceed the maximum number of partitions for table {path}, only allow {MAX_PARTITIONS} partitions."),
            ));
        }
        let pid = cat.next_partition_id;
        let part = Arc::new(self.new_physical(&t.info, t.older_schemas.clone(), Some((pid, name)))?);
        let mut image = cat.image();
        image.next_partition_id = pid + 1;
        image.partitions.push(record_of(&part));
        if let Err(e) = self.persist(&image) {
            self.remove_files(t.id(), Some(pid));
            return Err(e);
        }
        cat.next_partition_id = pid + 1;
        cat.insert_partition(part);
        Ok(proto::CreatePartitionResponse {})
    }

    fn drop_partition(&self, r: proto::DropPartitionRequest) -> Result<proto::DropPartitionResponse> {
        let path = table_path(&r.table_path);
        let mut cat = self.lock_catalog();
        let (t, name) = Self::partition_target(&cat, &path, Some(&r.partition_spec), "drop")?;
        let name = name.expect("a spec");
        let Some(pid) = cat.partitions.get(&t.id()).and_then(|m| m.get(&name)).and_then(|p| p.partition_id()) else {
            return if r.ignore_if_not_exists {
                Ok(proto::DropPartitionResponse {})
            } else {
                Err(server(FlussCode::PARTITION_NOT_EXISTS, format!("Partition '{name}' does not exist for table {path}")))
            };
        };
        let mut image = cat.image();
        image.partitions.retain(|p| p.partition_id != pid);
        self.persist(&image)?;
        if let Some(p) = cat.remove_partition(t.id(), &name) {
            close_buckets(&p);
        }
        self.remove_files(t.id(), Some(pid));
        Ok(proto::DropPartitionResponse {})
    }

    fn list_partition_infos(&self, r: proto::ListPartitionInfosRequest) -> Result<proto::ListPartitionInfosResponse> {
        let path = table_path(&r.table_path);
        let cat = self.lock_catalog();
        let t = cat.table(&path)?;
        if !t.info.is_partitioned() {
            return Err(server(TABLE_NOT_PARTITIONED, format!("Table '{path}' is not a partitioned table.")));
        }
        let keys = t.info.partition_keys();
        let filter: Vec<(String, String)> = r
            .partial_partition_spec
            .iter()
            .flat_map(|s| s.partition_key_values.iter().map(|kv| (kv.key.clone(), kv.value.clone())))
            .collect();
        if let Some((k, _)) = filter.iter().find(|(k, _)| !keys.contains(k)) {
            return Err(server(FlussCode::UNKNOWN_SERVER_ERROR, format!("table don't contains this partitionKey: {k}")));
        }
        let mut out = Vec::new();
        let system = r.include_system_partitions.unwrap_or(false);
        for (name, p) in cat.partitions.get(&t.id()).into_iter().flatten() {
            // The historical partition is a system partition: listed only when asked for.
            if p.is_historical() && !system {
                continue;
            }
            let spec = PartitionSpec::from_name(keys, name)?;
            if filter.iter().all(|(k, v)| spec.get(k) == Some(v.as_str())) {
                let partition_key_values =
                    spec.entries().iter().map(|(k, v)| proto::PbKeyValue { key: k.clone(), value: v.clone() }).collect();
                out.push(proto::PbPartitionInfo {
                    partition_id: p.partition_id().expect("a partition"),
                    partition_spec: proto::PbPartitionSpec { partition_key_values },
                    bucket_count: Some(p.bucket_count()),
                });
            }
        }
        Ok(proto::ListPartitionInfosResponse { partitions_info: out })
    }

    fn drop_table(&self, r: proto::DropTableRequest) -> Result<proto::DropTableResponse> {
        let path = table_path(&r.table_path);
        let mut cat = self.lock_catalog();
        if !cat.tables.contains_key(&path) {
            return if r.ignore_if_not_exists {
                Ok(proto::DropTableResponse {})
            } else {
                Err(server(FlussCode::TABLE_NOT_EXIST, format!("table {path} does not exist")))
            };
        }
        let mut image = cat.image();
        let id = cat.tables.get(&path).map(|t| t.id());
        image.tables.retain(|t| t.info.path != path);
        image.partitions.retain(|p| Some(p.table_id) != id);
        self.persist(&image)?;
        if let Some((t, parts)) = cat.remove(&path) {
            self.discard(&t, &parts);
        }
        Ok(proto::DropTableResponse {})
    }

    /// AlterTable as a 0.9.1 coordinator answers it: nullable columns added at the end make the
    /// next schema (its id one higher; rows of the older schemas stay readable, and writes that
    /// carry them are accepted); a column that exists is `INVALID_ALTER_TABLE`; a NOT NULL
    /// column, another position, and dropping, renaming or modifying a column are refused with
    /// the server's messages (`UNKNOWN_SERVER_ERROR`, as the server answers them); table
    /// properties are not changed here (`INVALID_ALTER_TABLE`).
    fn alter_table(&self, r: proto::AlterTableRequest) -> Result<proto::AlterTableResponse> {
        let path = table_path(&r.table_path);
        let unsupported = |m: &str| server(FlussCode::UNKNOWN_SERVER_ERROR, m);
        let schema_changes =
            !(r.add_columns.is_empty() && r.drop_columns.is_empty() && r.rename_columns.is_empty() && r.modify_columns.is_empty());
        if schema_changes && !r.config_changes.is_empty() {
            return Err(server(
                FlussCode::INVALID_ALTER_TABLE,
                "Table alteration can only be applied to one of the following: table properties or table schema.",
            ));
        }
        if let Some(m) = &r.modify_bucket_count {
            if schema_changes || !r.config_changes.is_empty() {
                return Err(server(FlussCode::INVALID_ALTER_TABLE, "A bucket count change cannot be combined with other table changes."));
            }
            return self.alter_bucket_count(&path, m.new_bucket_count, r.ignore_if_not_exists);
        }
        if let Some(c) = r.add_columns.iter().find(|c| c.column_position_type != 0) {
            return Err(unsupported(&format!("Unsupported column position type {} of column {}", c.column_position_type, c.column_name)));
        }
        let mut cat = self.lock_catalog();
        let t = match cat.table(&path) {
            Ok(t) => t,
            Err(_) if r.ignore_if_not_exists => return Ok(proto::AlterTableResponse {}),
            Err(e) => return Err(e),
        };
        if !r.config_changes.is_empty() {
            return Err(server(FlussCode::INVALID_ALTER_TABLE, "the embedded engine does not change table properties"));
        }
        let mut columns = t.schema().columns().to_vec();
        for c in &r.add_columns {
            if columns.iter().any(|x| x.name == c.column_name) {
                return Err(server(FlussCode::INVALID_ALTER_TABLE, format!("Column {} already exists.", c.column_name)));
            }
            let (data_type, nullable) = data_type_from_json(&c.data_type_json)
                .map_err(|e| server(FlussCode::INVALID_ALTER_TABLE, format!("column {}: {}", c.column_name, e.message())))?;
            if !nullable {
                return Err(unsupported(&format!("Column {} must be nullable.", c.column_name)));
            }
            if let Some(f) = &c.agg_function_type {
                // The embedded engine has no aggregation merge engine tables (CreateTable refuses
                // `table.merge-engine`): what a server answers for such a column on any other table.
                return Err(no_agg_table(&c.column_name, f));
            }
            columns.push(Column::new(c.column_name.clone(), data_type));
            if let Some(last) = columns.last_mut() {
                last.comment = c.comment.clone();
            }
        }
        if !r.drop_columns.is_empty() {
            return Err(unsupported("Not support drop column now."));
        }
        if !r.rename_columns.is_empty() {
            return Err(unsupported("Not support rename column now."));
        }
        if !r.modify_columns.is_empty() {
            return Err(unsupported("Not support modify column now."));
        }
        if r.add_columns.is_empty() {
            return Ok(proto::AlterTableResponse {});
        }
        let schema = Schema::new(columns, t.schema().primary_key().to_vec())
            .map_err(|e| server(FlussCode::INVALID_ALTER_TABLE, format!("table {path}: {}", e.message())))?;
        let mut info = t.info.clone();
        info.descriptor.schema = schema;
        info.schema_id += 1;
        info.modified_time = now_ms().max(info.modified_time);
        let mut image = cat.image();
        for rec in image.tables.iter_mut().filter(|rec| rec.info.path == path) {
            let mut older = rec.older_schemas.as_ref().clone();
            older.push(t.schema().clone());
            *rec = TableRecord { info: info.clone(), older_schemas: Arc::new(older) };
        }
        self.persist(&image)?;
        cat.evolve(&path, &info)?;
        Ok(proto::AlterTableResponse {})
    }

    /// ALTER_TABLE v1's bucket count change, as Fluss 1.0 describes it: a partitioned table's
    /// partitions created from now on get `n` buckets, existing ones keep theirs, and the table's
    /// `bucket_count_epoch` goes up by one (writes must then name the count they were routed
    /// by). The engine changes partitioned tables only (`INVALID_ALTER_TABLE` otherwise); the
    /// table's own count unchanged is a no-op.
    fn alter_bucket_count(&self, path: &TablePath, n: i32, ignore_if_not_exists: bool) -> Result<proto::AlterTableResponse> {
        let mut cat = self.lock_catalog();
        let t = match cat.table(path) {
            Ok(t) => t,
            Err(_) if ignore_if_not_exists => return Ok(proto::AlterTableResponse {}),
            Err(e) => return Err(e),
        };
        if !t.info.is_partitioned() {
            return Err(server(
                FlussCode::INVALID_ALTER_TABLE,
                format!("Table {path} is not partitioned: the embedded engine changes the bucket count of partitioned tables only."),
            ));
        }
        if n < 1 {
            return Err(server(FlussCode::INVALID_ALTER_TABLE, format!("Bucket count must be at least 1, not {n}.")));
        }
        if n == t.info.bucket_count() {
            return Ok(proto::AlterTableResponse {});
        }
        let mut info = t.info.clone();
        info.descriptor.bucket_count = Some(n);
        info.bucket_count_epoch = Some(info.bucket_count_epoch.unwrap_or(0) + 1);
        info.modified_time = now_ms().max(info.modified_time);
        let table = Table::new(info.clone(), t.older_schemas.clone(), None, Vec::new())?;
        let mut image = cat.image();
        for rec in image.tables.iter_mut().filter(|rec| rec.info.path == *path) {
            rec.info = info.clone();
        }
        self.persist(&image)?;
        cat.insert(Arc::new(table));
        Ok(proto::AlterTableResponse {})
    }

    /// A schema of a table by id (the current one without an id); `SCHEMA_NOT_EXIST` for an id
    /// the table never had.
    fn get_table_schema(&self, r: proto::GetTableSchemaRequest) -> Result<proto::GetTableSchemaResponse> {
        let path = table_path(&r.table_path);
        let t = self.table(&path)?;
        let id = r.schema_id.unwrap_or(t.info.schema_id);
        let schema = i16::try_from(id)
            .ok()
            .and_then(|i| t.schema_of(i))
            .ok_or_else(|| server(FlussCode::SCHEMA_NOT_EXIST, format!("Schema for table {path} with schema id {id} does not exist.")))?;
        Ok(proto::GetTableSchemaResponse { schema_id: id, schema_json: serde_json::to_vec(&schema_to_json(schema)).expect("JSON").into() })
    }

    fn get_table_info(&self, r: proto::GetTableInfoRequest) -> Result<proto::GetTableInfoResponse> {
        let t = self.table(&table_path(&r.table_path))?;
        Ok(proto::GetTableInfoResponse {
            table_id: t.id(),
            schema_id: t.info.schema_id,
            table_json: t.table_json.clone(),
            created_time: t.info.created_time,
            modified_time: t.info.modified_time,
            bucket_count_epoch: t.info.bucket_count_epoch,
        })
    }

    fn list_tables(&self, r: proto::ListTablesRequest) -> Result<proto::ListTablesResponse> {
        let cat = self.lock_catalog();
        if !cat.databases.contains(&r.database_name) {
            return Err(server(FlussCode::DATABASE_NOT_EXIST, format!("database {} does not exist", r.database_name)));
        }
        Ok(proto::ListTablesResponse {
            table_name: cat.tables.keys().filter(|p| p.database == r.database_name).map(|p| p.table.clone()).collect(),
        })
    }

    /// Metadata as a server answers it: a partitioned table has no buckets of its own; every
    /// partition named (by path, or by id among the tables named) must exist, or the whole
    /// request fails with `PARTITION_NOT_EXISTS`.
    fn metadata(&self, r: proto::MetadataRequest) -> Result<proto::MetadataResponse> {
        let node = || proto::PbServerNode { node_id: NODE_ID, host: NODE_HOST.into(), port: 0, listeners: None, rack: None };
        let buckets = |t: &Table| -> Vec<proto::PbBucketMetadata> {
            (0..t.bucket_count())
                .map(|b| proto::PbBucketMetadata {
                    bucket_id: b,
                    leader_id: Some(NODE_ID),
                    replica_id: vec![NODE_ID],
                    leader_epoch: Some(0),
                })
                .collect()
        };
        let cat = self.lock_catalog();
        let mut table_metadata = Vec::with_capacity(r.table_path.len());
        for p in &r.table_path {
            let t = cat.table(&table_path(p))?;
            table_metadata.push(proto::PbTableMetadata {
                table_path: p.clone(),
                table_id: t.id(),
                schema_id: t.info.schema_id,
                table_json: t.table_json.clone(),
                bucket_metadata: buckets(&t),
                created_time: t.info.created_time,
                modified_time: t.info.modified_time,
                bucket_count_epoch: t.info.bucket_count_epoch,
            });
        }
        let partition_metadata_of = |p: &Table| proto::PbPartitionMetadata {
            table_id: p.id(),
            partition_name: p.partition_name().unwrap_or_default().to_string(),
            partition_id: p.partition_id().unwrap_or(-1),
            bucket_metadata: buckets(p),
            bucket_count: Some(p.bucket_count()),
        };
        let mut partition_metadata = Vec::new();
        for pp in &r.partitions_path {
            let path = TablePath { database: pp.database_name.clone(), table: pp.table_name.clone() };
            let t = cat.table(&path)?;
            let Some(name) = pp.partition_name.as_deref().filter(|_| t.info.is_partitioned()) else {
                return Err(server(FlussCode::UNKNOWN_SERVER_ERROR, format!("{path} is not a partition of a partitioned table")));
            };
            let part = cat.partitions.get(&t.id()).and_then(|m| m.get(name)).ok_or_else(|| partition_not_exists(&path, name))?;
            partition_metadata.push(partition_metadata_of(part));
        }
        for pid in &r.partitions_id {
            match cat.partitions_by_id.get(pid).filter(|p| table_metadata.iter().any(|t| t.table_id == p.id())) {
                Some(part) => partition_metadata.push(partition_metadata_of(part)),
                None => {
                    return Err(server(
                        FlussCode::PARTITION_NOT_EXISTS,
                        format!("The partition id '{pid}' does not exist or you don't have permission to access it."),
                    ))
                }
            }
        }
        Ok(proto::MetadataResponse { coordinator_server: Some(node()), tablet_servers: vec![node()], table_metadata, partition_metadata })
    }

    fn init_writer(&self) -> Result<proto::InitWriterResponse> {
        let mut cat = self.lock_catalog();
        let id = cat.next_writer_id;
        let mut image = cat.image();
        image.next_writer_id = id + 1;
        self.persist(&image)?;
        cat.next_writer_id = id + 1;
        Ok(proto::InitWriterResponse { writer_id: id })
    }

    // ===== write requests =====

    /// Consume the faults of the buckets a write request carries.
    fn take_faults(&self, targets: &[(Result<Arc<Table>>, i32)]) -> (RequestFaults, Vec<Option<(i32, String)>>) {
        let mut rf = RequestFaults::default();
        let errors = targets
            .iter()
            .map(|(t, b)| match t.as_ref().ok().and_then(|t| self.faults.take(t.path(), t.partition_name(), *b)) {
                Some(Fault::Error { code, message, .. }) => Some((code, message)),
                Some(Fault::Delay { delay, .. }) => {
                    rf.delay = Some(rf.delay.map_or(delay, |d| d.max(delay)));
                    None
                }
                Some(Fault::DropConnection { after_apply, .. }) => {
                    if after_apply {
                        rf.drop_after = true;
                    } else {
                        rf.drop_before = true;
                    }
                    None
                }
                None => None,
            })
            .collect();
        (rf, errors)
    }

    /// The common part of ProduceLog and PutKv: faults, per-bucket locking, error mapping.
    /// Returns one `(bucket, Ok(offset) | Err((code, message)))` per entry.
    #[allow(clippy::type_complexity)]
    fn write<F>(
        &self,
        table_id: i64,
        acks: i32,
        entries: &[(Option<i64>, i32, Option<i32>)],
        mut apply: F,
    ) -> (Result<Vec<Result<i64, (i32, String)>>>, Option<Duration>)
    where
        F: FnMut(&Table, &mut Bucket, usize) -> Result<i64>,
    {
        if !matches!(acks, -1..=1) {
            return (Err(server(INVALID_REQUIRED_ACKS, format!("acks {acks} is not one of -1, 0, 1"))), None);
        }
        // Every entry names (partition, bucket) of the request's table; resolve each once.
        let (targets, epoch): (Vec<(Result<Arc<Table>>, i32)>, i64) = {
            let cat = self.lock_catalog();
            let epoch = cat.by_id.get(&table_id).and_then(|t| t.info.bucket_count_epoch).unwrap_or(0);
            (entries.iter().map(|&(p, b, _)| (cat.physical(table_id, p), b)).collect(), epoch)
        };
        let (rf, fault_errors) = self.take_faults(&targets);
        if rf.drop_before {
            let e = server(FlussCode::NETWORK_EXCEPTION, "connection dropped by an injected fault (before applying the writes)");
            return (Err(e), rf.delay);
        }
        let mut out = Vec::with_capacity(entries.len());
        for (i, ((table, b), fault)) in targets.iter().zip(fault_errors).enumerate() {
            if let Some(e) = fault {
                self.counters.rejected();
                out.push(Err(e));
                continue;
            }
            let b = *b;
            if let Some(e) = table.as_ref().ok().and_then(|t| routing_error(t, epoch, entries[i].2)) {
                self.counters.rejected();
                out.push(Err(e));
                continue;
            }
            let result = match table {
                Err(e) => Err(e.clone()),
                Ok(table) => match table.bucket(b) {
                    None => Err(table.no_bucket(b)),
                    Some(mut bucket) => apply(table, &mut bucket, i),
                },
            };
            match result {
                Ok(offset) => out.push(Ok(offset)),
                Err(e) if e.client_code() == Some(ClientCode::ConnectionClosed) => {
                    // The engine was closed, or the table dropped, while this request ran.
                    let e = if self.is_closed() {
                        e
                    } else {
                        let what = table.as_ref().map_or_else(|_| format!("table id {table_id}"), |t| t.describe());
                        server(FlussCode::UNKNOWN_TABLE_OR_BUCKET, format!("table {what} was dropped"))
                    };
                    if e.is_server_error() {
                        out.push(Err(entry_error(&e)));
                    } else {
                        return (Err(e), rf.delay);
                    }
                }
                Err(e) => {
                    self.counters.rejected();
                    out.push(Err(entry_error(&e)));
                }
            }
        }
        if rf.drop_after {
            let e = server(FlussCode::NETWORK_EXCEPTION, "connection dropped by an injected fault (after applying the writes)");
            return (Err(e), rf.delay);
        }
        (Ok(out), rf.delay)
    }

    fn produce_log(&self, r: proto::ProduceLogRequest) -> (Result<Response>, Option<Duration>) {
        let entries: Vec<(Option<i64>, i32, Option<i32>)> =
            r.buckets_req.iter().map(|b| (b.partition_id, b.bucket_id, b.routing_bucket_count)).collect();
        let now = now_ms();
        let (result, delay) = self.write(r.table_id, r.acks, &entries, |table, bucket, i| {
            produce::produce(table, bucket, &r.buckets_req[i].records, now, &self.counters)
        });
        let result = result.map(|entries| {
            Response::ProduceLog(proto::ProduceLogResponse {
                buckets_resp: r
                    .buckets_req
                    .iter()
                    .zip(entries)
                    .map(|(req, e)| {
                        let mut resp = proto::PbProduceLogRespForBucket {
                            partition_id: req.partition_id,
                            bucket_id: req.bucket_id,
                            original_partition_name: req.original_partition_name.clone(),
                            ..Default::default()
                        };
                        match e {
                            Ok(base) => resp.base_offset = Some(base),
                            Err((code, msg)) => {
                                resp.error_code = Some(code);
                                resp.error_message = Some(msg);
                            }
                        }
                        resp
                    })
                    .collect(),
            })
        });
        (result, delay)
    }

    fn put_kv(&self, r: proto::PutKvRequest) -> (Result<Response>, Option<Duration>) {
        let entries: Vec<(Option<i64>, i32, Option<i32>)> =
            r.buckets_req.iter().map(|b| (b.partition_id, b.bucket_id, b.routing_bucket_count)).collect();
        let now = now_ms();
        let mut targets: Option<Result<Option<Vec<bool>>>> = None;
        let mut pressures = vec![0f32; entries.len()];
        let (result, delay) = self.write(r.table_id, r.acks, &entries, |table, bucket, i| {
            let target = targets.get_or_insert_with(|| if table.is_pk() { kv::target_columns(table, &r.target_columns) } else { Ok(None) });
            let target = target.as_ref().map_err(Clone::clone)?;
            let records = &r.buckets_req[i].records;
            let (cfg, at, bytes) = (&self.pressure, Instant::now(), records.len() as u64);
            if table.is_pk() && !bucket.storage.admit(cfg, bytes, at) {
                return Err(server(
                    FlussCode::STORAGE_BACKPRESSURE,
                    format!("Write rejected for bucket {}: flush budget exceeded (storage pressure). Retry after backoff.", bucket.id),
                ));
            }
            let original = r.buckets_req[i].original_partition_name.as_deref();
            let end = kv::put(table, bucket, records, target.as_deref(), original, now, &self.counters)?;
            bucket.storage.written(cfg, bytes, at);
            pressures[i] = bucket.storage.pressure(cfg);
            Ok(end)
        });
        let result = result.map(|entries| {
            Response::PutKv(proto::PutKvResponse {
                buckets_resp: r
                    .buckets_req
                    .iter()
                    .zip(entries)
                    .zip(pressures)
                    .map(|((req, e), pressure)| {
                        // The entry names the request's original partition, as a 1.0.0 server
                        // echoes it (the client matches answers by bucket and that name).
                        let mut resp = proto::PbPutKvRespForBucket {
                            partition_id: req.partition_id,
                            bucket_id: req.bucket_id,
                            original_partition_name: req.original_partition_name.clone(),
                            ..Default::default()
                        };
                        match e {
                            Ok(end) => {
                                resp.log_end_offset = Some(end);
                                // As a 1.0 server: only sent when there is pressure.
                                resp.pressure = (pressure > 0.0).then_some(pressure);
                            }
                            Err((code, msg)) => {
                                resp.error_code = Some(code);
                                resp.error_message = Some(msg);
                            }
                        }
                        resp
                    })
                    .collect(),
            })
        });
        (result, delay)
    }

    // ===== read requests =====

    fn fetch_log(&self, r: proto::FetchLogRequest) -> Result<proto::FetchLogResponse> {
        let mut budget = r.max_bytes.max(0) as usize;
        let mut total = 0usize;
        let mut tables_resp = Vec::with_capacity(r.tables_req.len());
        for treq in &r.tables_req {
            let mut buckets_resp = Vec::with_capacity(treq.buckets_req.len());
            for breq in &treq.buckets_req {
                let mut resp =
                    proto::PbFetchLogRespForBucket { partition_id: breq.partition_id, bucket_id: breq.bucket_id, ..Default::default() };
                let result = (|| -> Result<(i64, Bytes)> {
                    let t = self.routed(treq.table_id, breq.partition_id, breq.routing_bucket_count)?;
                    if treq.projection_pushdown_enabled {
                        return Err(server(INVALID_COLUMN_PROJECTION, "the embedded engine does not support projection pushdown"));
                    }
                    let bucket = t.bucket(breq.bucket_id).ok_or_else(|| t.no_bucket(breq.bucket_id))?;
                    if breq.fetch_offset < 0 || breq.fetch_offset > bucket.end_offset {
                        return Err(server(
                            LOG_OFFSET_OUT_OF_RANGE,
                            format!("fetch offset {} is outside 0..={} of bucket {}", breq.fetch_offset, bucket.end_offset, breq.bucket_id),
                        ));
                    }
                    let limit = (breq.max_fetch_bytes.max(0) as usize).min(budget);
                    let bytes = bucket.read(breq.fetch_offset, limit, total == 0);
                    Ok((bucket.end_offset, Bytes::from(bytes)))
                })();
                match result {
                    Ok((hw, bytes)) => {
                        total += bytes.len();
                        budget = budget.saturating_sub(bytes.len());
                        resp.high_watermark = Some(hw);
                        resp.log_start_offset = Some(0);
                        resp.records = Some(bytes);
                    }
                    Err(e) => {
                        let (code, msg) = entry_error(&e);
                        resp.error_code = Some(code);
                        resp.error_message = Some(msg);
                    }
                }
                buckets_resp.push(resp);
            }
            tables_resp.push(proto::PbFetchLogRespForTable { table_id: treq.table_id, buckets_resp });
        }
        Ok(proto::FetchLogResponse { tables_resp })
    }

    fn list_offsets(&self, r: proto::ListOffsetsRequest) -> Result<proto::ListOffsetsResponse> {
        let table = self.routed(r.table_id, r.partition_id, r.routing_bucket_count);
        let buckets_resp = r
            .bucket_id
            .iter()
            .map(|&b| {
                let mut resp = proto::PbListOffsetsRespForBucket { bucket_id: b, ..Default::default() };
                let result = (|| -> Result<i64> {
                    let t = table.as_ref().map_err(Clone::clone)?;
                    let bucket = t.bucket(b).ok_or_else(|| t.no_bucket(b))?;
                    match r.offset_type {
                        0 => Ok(0),
                        1 => Ok(bucket.end_offset),
                        2 => match r.start_timestamp {
                            Some(ts) => Ok(bucket.offset_for_timestamp(ts)),
                            None => Err(server(38, "offset type 2 (by timestamp) needs start_timestamp")),
                        },
                        other => Err(server(FlussCode::UNKNOWN_SERVER_ERROR, format!("unknown offset type {other}"))),
                    }
                })();
                match result {
                    Ok(o) => resp.offset = Some(o),
                    Err(e) => {
                        let (code, msg) = entry_error(&e);
                        resp.error_code = Some(code);
                        resp.error_message = Some(msg);
                    }
                }
                resp
            })
            .collect();
        Ok(proto::ListOffsetsResponse { buckets_resp })
    }

    fn lookup_request(&self, r: proto::LookupRequest) -> Result<proto::LookupResponse> {
        let buckets_resp = r
            .buckets_req
            .iter()
            .map(|breq| {
                let mut resp =
                    proto::PbLookupRespForBucket { partition_id: breq.partition_id, bucket_id: breq.bucket_id, ..Default::default() };
                let result = (|| -> Result<Vec<proto::PbValue>> {
                    let t = self.routed(r.table_id, breq.partition_id, breq.routing_bucket_count)?;
                    if !t.is_pk() {
                        return Err(server(
                            FlussCode::NON_PRIMARY_KEY_TABLE,
                            format!("table {} is a log table; Lookup needs a primary key", t.path()),
                        ));
                    }
                    let rows: Vec<Option<crate::row::Row>> = {
                        let bucket = t.bucket(breq.bucket_id).ok_or_else(|| t.no_bucket(breq.bucket_id))?;
                        let original = breq.original_partition_name.as_deref();
                        breq.keys.iter().map(|k| bucket.kv.get(kv_key(original, k).as_ref()).cloned().map(|r| t.fit(r))).collect()
                    };
                    rows.into_iter()
                        .map(|row| {
                            let values = match row {
                                None => None,
                                Some(row) => {
                                    let mut v = (t.info.schema_id as i16).to_le_bytes().to_vec();
                                    encode_row(t.schema(), &row, &mut v)?;
                                    Some(Bytes::from(v))
                                }
                            };
                            Ok(proto::PbValue { values })
                        })
                        .collect()
                })();
                match result {
                    Ok(values) => resp.values = values,
                    Err(e) => {
                        let (code, msg) = entry_error(&e);
                        resp.error_code = Some(code);
                        resp.error_message = Some(msg);
                    }
                }
                resp
            })
            .collect();
        Ok(proto::LookupResponse { buckets_resp })
    }

    /// Every table and partition, for close.
    fn all_tables(&self) -> Vec<Arc<Table>> {
        let cat = self.lock_catalog();
        cat.tables.values().chain(cat.partitions_by_id.values()).cloned().collect()
    }
}

/// INVALID_BUCKET_ROUTING (74) for a write to `t` that names `routing` as the bucket count it
/// was routed by, as a Fluss 1.0 tablet server refuses it: a count other than the partition's
/// own, or none once the table's bucket count was changed (`epoch` above 0).
fn routing_error(t: &Table, epoch: i64, routing: Option<i32>) -> Option<(i32, String)> {
    let n = t.bucket_count();
    let why = match routing {
        Some(r) if r != n => format!("was routed by {r} buckets"),
        None if epoch > 0 => "does not name the bucket count it was routed by (the table's bucket count was changed)".to_string(),
        _ => return None,
    };
    Some((
        FlussCode::INVALID_BUCKET_ROUTING,
        format!("The request for {} {why}; it has {n} buckets. Refresh the metadata and route again.", t.describe()),
    ))
}

fn api_versions() -> proto::ApiVersionsResponse {
    // The keys this engine answers, with the 0.9.1 version ranges and the 1.0 ones of what it
    // does as 1.0 does (ALTER_TABLE v1 per-partition bucket counts, PutKv v2 back-pressure, PutKv
    // v3 and ProduceLog v1 for historical partitions).
    let keys: &[(i32, i32)] = &[
        (1000, 0),
        (1001, 0),
        (1002, 0),
        (1003, 0),
        (1004, 0),
        (1005, 0),
        (1006, 0),
        (1007, 0),
        (1008, 0),
        (1009, 0),
        (1010, 0),
        (1012, 0),
        (1014, 1),
        (1015, 0),
        (1016, 3),
        (1017, 1),
        (1021, 0),
        (1026, 0),
        (1036, 0),
        (1037, 0),
        // ALTER_TABLE v1: the bucket count of partitions created afterwards (Fluss 1.0).
        (1044, 1),
    ];
    proto::ApiVersionsResponse {
        api_versions: keys.iter().map(|&(k, max)| proto::PbApiVersion { api_key: k, min_version: 0, max_version: max }).collect(),
        server_type: None,
    }
}

impl Backend for EmbeddedEngine {
    fn send(&self, dest: Dest, request: Request) -> BoxFuture<Response> {
        let (result, delay) =
            if dest == Dest::Coordinator && !self.is_closed() { self.handle_coordinator(request) } else { self.handle(request) };
        Box::pin(async move {
            if let Some(d) = delay {
                tokio::time::sleep(d).await;
            }
            result
        })
    }

    fn describe(&self) -> String {
        match &self.store {
            Some(store) => format!("embedded engine at {} (node {NODE_ID})", store.dir().display()),
            None => format!("embedded engine in memory (node {NODE_ID})"),
        }
    }

    /// Stop answering (later requests fail with `CONNECTION_CLOSED`), fsync and close every
    /// bucket file, and release the directory lock. Read-back calls keep working on the
    /// in-memory state. Idempotent.
    fn close(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        for t in self.all_tables() {
            for b in 0..t.bucket_count() {
                if let Some(mut bucket) = t.bucket(b) {
                    bucket.close();
                }
            }
        }
        if let Some(store) = &self.store {
            store.unlock();
        }
    }
}
