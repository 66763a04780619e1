//! [`Admin`]: databases and tables (DDL goes to the coordinator, reads to any server).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::acl::{AclBinding, AclFilter};
use crate::backend::{call, Backend, Dest};
use crate::connection::ConnInner;
use crate::error::{ClientCode, Error, Result};
use crate::metadata::partition::{PartitionInfo, PartitionSpec};
use crate::metadata::{
    data_type_json, descriptor_from_json, descriptor_to_json, schema_from_json, validate_name, Column, Schema, TableDescriptor, TableInfo,
    TablePath,
};
use crate::wire::proto;

/// One change of [`Admin::alter_table`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableChange {
    /// Add a column after the last one. Fluss 0.9.1 adds nullable columns only. A column with an
    /// [`AggFunction`](crate::AggFunction) (tables with `table.merge-engine = aggregation`) needs a
    /// Fluss 1.0 server: 0.9.1 adds it without the function, and `alter_table` then fails with
    /// `UNSUPPORTED` saying so.
    AddColumn(Column),
    /// Drop a column (Fluss 0.9.1 refuses it).
    DropColumn(String),
    /// Rename a column (Fluss 0.9.1 refuses it).
    RenameColumn {
        /// The column's name now.
        from: String,
        /// Its new name.
        to: String,
    },
}

/// What a principal needs to create or drop ACLs, for the message of an authorization error.
pub(crate) const ACL_PERMISSION_HINT: &str = "creating or dropping ACLs needs the ALL operation on each ACL's resource \
     (for a table ACL: on its database) on Fluss 1.0 servers, ALTER on 0.9.1 servers; super users have both";

/// An authorization error of CreateAcls / DropAcls, with the permission it needs named.
fn acl_permission_context(e: Error, what: &str) -> Error {
    if e.code() == crate::FlussCode::AUTHORIZATION_EXCEPTION {
        e.context(format!("{what} ({ACL_PERMISSION_HINT})"))
    } else {
        e
    }
}

/// A server capability that a call or a golden scenario (`requires`) needs, decided from the
/// servers' ApiVersions answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Capability {
    /// `alter_bucket_count`: ALTER_TABLE v1 on the coordinator (Fluss 1.0 per-partition bucket
    /// counts).
    AlterBucketCount,
    /// `historical_partitions`: PUT_KV v3 on the tablet servers (Fluss 1.0.0 writes to
    /// historical partitions; a table with them also needs the cluster's lake).
    HistoricalPartitions,
}

impl Capability {
    /// The capability of a name in golden scenarios' `requires`.
    pub fn from_name(name: &str) -> Result<Capability> {
        match name {
            "alter_bucket_count" => Ok(Capability::AlterBucketCount),
            "historical_partitions" => Ok(Capability::HistoricalPartitions),
            other => Err(Error::client(
                ClientCode::InvalidConfig,
                format!("unknown server capability {other:?} (known: alter_bucket_count, historical_partitions)"),
            )),
        }
    }

    /// Where it is asked (`Dest::Tablet(-1)`: any tablet server), its API key, the lowest
    /// version that has it, the API's name.
    fn needs(self) -> (Dest, i16, i16, &'static str) {
        match self {
            Capability::AlterBucketCount => (Dest::Coordinator, 1044, 1, "ALTER_TABLE"),
            // Any tablet server (the one the cluster's metadata names first).
            Capability::HistoricalPartitions => (Dest::Tablet(-1), 1016, 3, "PUT_KV"),
        }
    }
}

fn pb_path(p: &TablePath) -> proto::PbTablePath {
    proto::PbTablePath { database_name: p.database.clone(), table_name: p.table.clone() }
}

/// DDL and metadata of a connection.
#[derive(Clone)]
pub struct Admin {
    conn: Arc<ConnInner>,
}

impl Admin {
    pub(crate) fn new(conn: Arc<ConnInner>) -> Admin {
        Admin { conn }
    }

    fn run<R: crate::backend::Rpc>(&self, dest: Dest, req: R) -> Result<R::Response> {
        self.conn.check_usable()?;
        let backend = self.conn.backend.clone();
        let timeout = self.conn.config.request_timeout;
        let name = req_name::<R>();
        self.conn.block_on(async move {
            match tokio::time::timeout(timeout, call(&*backend, dest, req)).await {
                Ok(r) => r,
                Err(_) => Err(Error::server(crate::FlussCode::NETWORK_EXCEPTION, format!("{name} timed out after {timeout:?}"))),
            }
        })
    }

    /// [`run`](Self::run) for a request that changes nothing: one that fails in a retriable way
    /// (a connection refused or closed while the coordinator restarts, a server not ready) is sent
    /// again, with a growing pause, until `client.request-timeout` has passed.
    fn run_read<R: crate::backend::Rpc + Clone + Sync>(&self, dest: Dest, req: R) -> Result<R::Response> {
        self.conn.check_usable()?;
        let backend = self.conn.backend.clone();
        let timeout = self.conn.config.request_timeout;
        self.conn.block_on(retrying(timeout, req_name::<R>(), move || {
            let (backend, req) = (backend.clone(), req.clone());
            async move { call(&*backend, dest, req).await }
        }))
    }

    /// Create a database; with `ignore_if_exists`, an existing one is not an error.
    pub fn create_database(&self, name: &str, ignore_if_exists: bool) -> Result<()> {
        validate_name(name, "database")?;
        self.run(Dest::Coordinator, proto::CreateDatabaseRequest { database_name: name.into(), ignore_if_exists, database_json: None })
            .map(|_| ())
    }

    /// Drop a database; `cascade` drops its tables too, else a non-empty database is an error.
    pub fn drop_database(&self, name: &str, ignore_if_not_exists: bool, cascade: bool) -> Result<()> {
        self.run(Dest::Coordinator, proto::DropDatabaseRequest { database_name: name.into(), ignore_if_not_exists, cascade }).map(|_| ())
    }

    /// Names of every database.
    pub fn list_databases(&self) -> Result<Vec<String>> {
        Ok(self.run_read(Dest::Any, proto::ListDatabasesRequest {})?.database_name)
    }

    /// Whether a database of that name exists.
    ///
    /// On a Fluss 1.0 server whose authorizer is on, `false` may also mean that the principal
    /// lacks DESCRIBE on the database (the server answers `false` rather than an authorization
    /// error; the default database `fluss` is exempt). A 0.9.1 server answers without checking.
    pub fn database_exists(&self, name: &str) -> Result<bool> {
        Ok(self.run_read(Dest::Any, proto::DatabaseExistsRequest { database_name: name.into() })?.exists)
    }

    /// Create a table and wait, up to 30 s or `client.request-timeout` if longer (leader election
    /// is not one request), until every bucket has a leader
    /// (so writers can start at once). `LEADER_NOT_AVAILABLE` (retriable) if that does not happen:
    /// the table exists but cannot be written yet (a Fluss 0.9.1 coordinator in the state that
    /// docs/architecture.md, "Known server issues", describes elects no leaders at all).
    pub fn create_table(&self, path: &TablePath, descriptor: &TableDescriptor, ignore_if_exists: bool) -> Result<()> {
        validate_name(&path.database, "database")?;
        validate_name(&path.table, "table")?;
        descriptor.normalized(1)?; // client-side checks; the server fills its own defaults
        let table_json = descriptor_to_json(descriptor).into();
        self.run(Dest::Coordinator, proto::CreateTableRequest { table_path: pb_path(path), table_json, ignore_if_exists })?;
        if !descriptor.partition_keys.is_empty() {
            // A partitioned table has buckets only in its partitions (which the server creates
            // on its own for auto-partitioned tables, asynchronously). Nothing to wait for: a
            // Fluss 0.9.1 coordinator may miss a new table altogether (docs/architecture.md,
            // "Known server issues"), and no request shows whether it did.
            return Ok(());
        }
        let deadline = Instant::now() + self.conn.config.request_timeout.max(Duration::from_secs(30));
        loop {
            // The table exists now: a metadata request that fails in a retriable way (the
            // coordinator restarting, a connection closed) is asked again until the deadline.
            match load_table(&self.conn, path) {
                Ok((_, leaders)) if leaders.iter().all(Option::is_some) => return Ok(()),
                Ok(_) => {}
                Err(e) if e.is_retriable() && Instant::now() < deadline => {}
                Err(e) => return Err(e.context(format!("{path} was created; waiting for its leaders"))),
            }
            if Instant::now() >= deadline {
                return Err(Error::server(
                    crate::FlussCode::LEADER_NOT_AVAILABLE,
                    format!("{path} has buckets without a leader after creation"),
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Drop a table; with `ignore_if_not_exists`, a missing one is not an error.
    pub fn drop_table(&self, path: &TablePath, ignore_if_not_exists: bool) -> Result<()> {
        self.run(Dest::Coordinator, proto::DropTableRequest { table_path: pb_path(path), ignore_if_not_exists }).map(|_| ())
    }

    /// Change a table's schema. A Fluss 0.9.1 server (and the embedded engine) adds nullable
    /// columns after the last one: the table gets the next schema id, and rows written before
    /// read back with nulls in the new columns. Every other change (a NOT NULL column, dropping,
    /// renaming) is refused with the server's own error, passed through; a column that exists
    /// is `INVALID_ALTER_TABLE_EXCEPTION` (56). With `ignore_if_not_exists`, a missing table is
    /// not an error.
    ///
    /// A column with an aggregation function goes to the server with it (PbAddColumn fields 5,
    /// 6); afterwards the table's schema is read back, and if the server added the column without
    /// that function (Fluss 0.9.1 does not know the fields) this fails with `UNSUPPORTED` naming
    /// the column, which stays as added. A 1.0 server refuses such a column on a table without
    /// the aggregation merge engine (`INVALID_CONFIG`, 39), as the embedded engine does always.
    ///
    /// Writers created before the change keep writing the schema they were created with (the
    /// server accepts it; the new columns of their rows are null). To write the new columns,
    /// get the table again and create a new writer.
    pub fn alter_table(&self, path: &TablePath, changes: &[TableChange], ignore_if_not_exists: bool) -> Result<()> {
        let mut r = proto::AlterTableRequest { table_path: pb_path(path), ignore_if_not_exists, ..Default::default() };
        for c in changes {
            match c {
                TableChange::AddColumn(col) => r.add_columns.push(proto::PbAddColumn {
                    column_name: col.name.clone(),
                    data_type_json: data_type_json(&col.data_type, col.nullable).into(),
                    comment: col.comment.clone(),
                    column_position_type: 0, // LAST
                    agg_function_type: col.agg_function.as_ref().map(|f| f.name.clone()),
                    agg_function_params: col
                        .agg_function
                        .iter()
                        .flat_map(|f| &f.params)
                        .map(|(k, v)| proto::PbKeyValue { key: k.clone(), value: v.clone() })
                        .collect(),
                }),
                TableChange::DropColumn(name) => r.drop_columns.push(proto::PbDropColumn { column_name: name.clone() }),
                TableChange::RenameColumn { from, to } => {
                    r.rename_columns.push(proto::PbRenameColumn { old_column_name: from.clone(), new_column_name: to.clone() })
                }
            }
        }
        self.run(Dest::Coordinator, r)?;
        // A server without ADD COLUMN aggregation functions (0.9.1: no PbAddColumn fields 5/6)
        // skips them and adds a column the table merges with its default function: say so.
        let agg: Vec<&Column> = changes
            .iter()
            .filter_map(|c| match c {
                TableChange::AddColumn(col) if col.agg_function.is_some() => Some(col),
                _ => None,
            })
            .collect();
        if agg.is_empty() {
            return Ok(());
        }
        let info = self.get_table_info(path)?;
        for want in agg {
            let got = info.descriptor.schema.columns().iter().find(|c| c.name == want.name).and_then(|c| c.agg_function.as_ref());
            if got != want.agg_function.as_ref() {
                return Err(Error::client(
                    crate::ClientCode::Unsupported,
                    format!(
                        "{path}: the server added column {:?} with aggregation function {:?}, not {:?}: it does not take \
                         aggregation functions in ADD COLUMN (Fluss 1.0 servers do, 0.9.1 servers ignore them); the column \
                         stays as added",
                        want.name,
                        got.map(|f| f.name.as_str()),
                        want.agg_function.as_ref().map(|f| f.name.as_str()),
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Change the bucket count of a partitioned table (Fluss 1.0, ALTER_TABLE v1; Java
    /// `TableChange.ModifyBucketCount`): partitions created from now on get `bucket_count`
    /// buckets, partitions that exist keep theirs. The table's `bucket_count_epoch` goes up by
    /// one. Writers route each row by its own partition's count (docs/architecture.md,
    /// "Per-partition bucket counts").
    ///
    /// A coordinator that cannot do this (Fluss 0.9, ALTER_TABLE up to v0) is not asked:
    /// `UNSUPPORTED` naming its ALTER_TABLE versions, since a v0 request would silently drop
    /// the change.
    pub fn alter_bucket_count(&self, path: &TablePath, bucket_count: i32, ignore_if_not_exists: bool) -> Result<()> {
        if bucket_count < 1 {
            return Err(Error::client(ClientCode::InvalidConfig, format!("a table needs at least one bucket, not {bucket_count}")));
        }
        if let Some(why) = self.capability_missing(Capability::AlterBucketCount)? {
            return Err(Error::client(ClientCode::Unsupported, format!("cannot change the bucket count of {path}: {why}")));
        }
        let r = proto::AlterTableRequest {
            table_path: pb_path(path),
            ignore_if_not_exists,
            modify_bucket_count: Some(proto::PbModifyBucketCount { new_bucket_count: bucket_count }),
            ..Default::default()
        };
        self.run(Dest::Coordinator, r).map(|_| ())
    }

    /// Whether the servers have a capability, by its name in golden scenarios' `requires`
    /// (see [`Capability`]); decided from their ApiVersions. An unknown name is `INVALID_CONFIG`.
    pub fn server_supports(&self, capability: &str) -> Result<bool> {
        let c = Capability::from_name(capability)?;
        Ok(self.capability_missing(c)?.is_none())
    }

    /// Why the servers lack `c` (`None`: they have it).
    fn capability_missing(&self, c: Capability) -> Result<Option<String>> {
        self.conn.check_usable()?;
        let (dest, key, min, name) = c.needs();
        let dest = match dest {
            Dest::Tablet(-1) => match self.run_read(Dest::Any, proto::MetadataRequest::default())?.tablet_servers.first() {
                Some(n) => Dest::Tablet(n.node_id),
                None => return Ok(Some("the cluster names no tablet server".to_string())),
            },
            d => d,
        };
        let backend = self.conn.backend.clone();
        let range = self.conn.block_on(async move { backend.api_version_range(dest, key).await })?;
        Ok(match range {
            None => Some(format!("the server does not support {name} at all (api key {key})")),
            Some((lo, hi)) if hi < min => {
                Some(format!("the server supports {name} versions {lo}..={hi}; this needs version {min} or later (Fluss 1.0)"))
            }
            Some(_) => None,
        })
    }

    /// Names of the tables of a database.
    pub fn list_tables(&self, database: &str) -> Result<Vec<String>> {
        Ok(self.run_read(Dest::Any, proto::ListTablesRequest { database_name: database.into() })?.table_name)
    }

    /// Whether the table exists.
    ///
    /// On a Fluss 1.0 server whose authorizer is on, `false` may also mean that the principal
    /// lacks DESCRIBE on the table (directly, or through its database or the cluster): the server
    /// answers `false` rather than an authorization error. A 0.9.1 server answers without checking.
    pub fn table_exists(&self, path: &TablePath) -> Result<bool> {
        Ok(self.run_read(Dest::Any, proto::TableExistsRequest { table_path: pb_path(path) })?.exists)
    }

    /// Create ACLs. The principal needs, for each ACL's resource (for a table ACL: the table's
    /// database), ALL on a Fluss 1.0 server, ALTER on a 0.9.1 server; super users have both.
    /// Without it the whole request fails with `AUTHORIZATION_EXCEPTION` (48), whose message
    /// names that requirement, and nothing is created. Each entry the server refuses otherwise
    /// makes this an error naming it; entries it accepted stay.
    pub fn create_acls(&self, acls: &[AclBinding]) -> Result<()> {
        let r = self
            .run(Dest::Coordinator, proto::CreateAclsRequest { acl: acls.iter().map(AclBinding::to_pb).collect() })
            .map_err(|e| acl_permission_context(e, "create ACLs"))?;
        for res in r.acl_res {
            if let Some(code) = res.error_code.filter(|c| *c != 0) {
                let what = AclBinding::from_pb(&res.acl).map_or_else(|_| format!("{:?}", res.acl), |b| format!("{b:?}"));
                return Err(Error::server(code, res.error_message.unwrap_or_default()).context(format!("create ACL {what}")));
            }
        }
        Ok(())
    }

    /// The ACLs that match `filter`.
    pub fn list_acls(&self, filter: &AclFilter) -> Result<Vec<AclBinding>> {
        let r = self.run_read(Dest::Coordinator, proto::ListAclsRequest { acl_filter: filter.to_pb() })?;
        r.acl.iter().map(AclBinding::from_pb).collect()
    }

    /// Drop every ACL that matches one of `filters`; returns the ACLs dropped. The principal
    /// needs, for each resource with a matching ACL (for a table: its database), ALL on a
    /// Fluss 1.0 server, ALTER on a 0.9.1 server; without it the whole request fails with
    /// `AUTHORIZATION_EXCEPTION` (48), whose message names that requirement, and nothing is
    /// dropped. Filters that match nothing drop nothing and need no permission.
    pub fn drop_acls(&self, filters: &[AclFilter]) -> Result<Vec<AclBinding>> {
        let r = self
            .run(Dest::Coordinator, proto::DropAclsRequest { acl_filter: filters.iter().map(AclFilter::to_pb).collect() })
            .map_err(|e| acl_permission_context(e, "drop ACLs"))?;
        let mut dropped = Vec::new();
        for f in r.filter_results {
            if let Some(code) = f.error_code.filter(|c| *c != 0) {
                return Err(Error::server(code, f.error_message.unwrap_or_default()).context("drop ACLs"));
            }
            for m in f.matching_acls {
                if let Some(code) = m.error_code.filter(|c| *c != 0) {
                    return Err(Error::server(code, m.error_message.unwrap_or_default()).context("drop ACL"));
                }
                dropped.push(AclBinding::from_pb(&m.acl)?);
            }
        }
        Ok(dropped)
    }

    /// The table as the server knows it.
    pub fn get_table_info(&self, path: &TablePath) -> Result<TableInfo> {
        self.conn.check_usable()?;
        Ok(load_table(&self.conn, path)?.0)
    }

    /// The spec checked against the table's partition keys: `INVALID_TABLE` naming the key at
    /// fault, `TABLE_NOT_PARTITIONED` for a table without partition keys.
    fn checked_spec(&self, path: &TablePath, spec: &PartitionSpec) -> Result<proto::PbPartitionSpec> {
        let info = self.get_table_info(path)?;
        if !info.is_partitioned() {
            return Err(Error::server(crate::FlussCode::TABLE_NOT_PARTITIONED, format!("table {path} is not partitioned")));
        }
        let values = spec.resolve(info.partition_keys())?;
        Ok(spec_pb(info.partition_keys(), &values))
    }

    /// Create a partition of a partitioned table; with `ignore_if_exists`, an existing one is not
    /// an error (`PARTITION_ALREADY_EXISTS` otherwise). Returns once the partition exists; its
    /// buckets may take a moment longer to get leaders (writers wait for them).
    pub fn create_partition(&self, path: &TablePath, spec: &PartitionSpec, ignore_if_exists: bool) -> Result<()> {
        let partition_spec = self.checked_spec(path, spec)?;
        self.run(
            Dest::Coordinator,
            proto::CreatePartitionRequest { table_path: pb_path(path), partition_spec, ignore_if_not_exists: ignore_if_exists },
        )
        .map(|_| ())
    }

    /// Drop a partition and its data; with `ignore_if_not_exists`, a missing one is not an error
    /// (`PARTITION_NOT_EXISTS` otherwise). Writes still pending for it complete with an error, or
    /// recreate it when `client.writer.dynamic-create-partition.enabled` is on.
    pub fn drop_partition(&self, path: &TablePath, spec: &PartitionSpec, ignore_if_not_exists: bool) -> Result<()> {
        let partition_spec = self.checked_spec(path, spec)?;
        self.run(Dest::Coordinator, proto::DropPartitionRequest { table_path: pb_path(path), partition_spec, ignore_if_not_exists })
            .map(|_| ())
    }

    /// The partitions of a partitioned table, ordered by name (`TABLE_NOT_PARTITIONED` for a
    /// table without partition keys).
    pub fn list_partitions(&self, path: &TablePath) -> Result<Vec<PartitionInfo>> {
        let info = self.get_table_info(path)?;
        let r = self.run_read(
            Dest::Any,
            proto::ListPartitionInfosRequest { table_path: pb_path(path), partial_partition_spec: None, include_system_partitions: None },
        )?;
        let mut out = r.partitions_info.into_iter().map(|p| partition_info(info.partition_keys(), p)).collect::<Result<Vec<_>>>()?;
        out.sort_by(|a, b| a.partition_name.cmp(&b.partition_name));
        Ok(out)
    }
}

/// The wire form of a spec whose values are in the order of `keys`.
pub(crate) fn spec_pb(keys: &[String], values: &[&str]) -> proto::PbPartitionSpec {
    proto::PbPartitionSpec {
        partition_key_values: keys.iter().zip(values).map(|(k, v)| proto::PbKeyValue { key: k.clone(), value: v.to_string() }).collect(),
    }
}

/// A `PbPartitionInfo` as a [`PartitionInfo`]: the name is the values in partition-key order.
fn partition_info(keys: &[String], p: proto::PbPartitionInfo) -> Result<PartitionInfo> {
    let spec = PartitionSpec::new(p.partition_spec.partition_key_values.into_iter().map(|kv| (kv.key, kv.value)));
    let values = keys
        .iter()
        .map(|k| spec.get(k).ok_or_else(|| Error::protocol(format!("partition {} has no value for key {k:?}", p.partition_id))))
        .collect::<Result<Vec<_>>>()?;
    let partition_name = values.join(&crate::metadata::partition::PARTITION_SEPARATOR.to_string());
    Ok(PartitionInfo { partition_id: p.partition_id, partition_name, spec })
}

fn req_name<R>() -> &'static str {
    let n = std::any::type_name::<R>();
    n.rsplit("::").next().unwrap_or(n)
}

async fn fetch_table(backend: Arc<dyn Backend>, path: TablePath, default_buckets: i32) -> Result<(TableInfo, Vec<Option<i32>>)> {
    let r = call(&*backend, Dest::Any, proto::GetTableInfoRequest { table_path: pb_path(&path) }).await?;
    let descriptor = descriptor_from_json(&r.table_json)?.normalized(default_buckets)?;
    let info = TableInfo {
        path: path.clone(),
        table_id: r.table_id,
        schema_id: r.schema_id,
        descriptor,
        created_time: r.created_time,
        modified_time: r.modified_time,
        bucket_count_epoch: r.bucket_count_epoch,
    };
    let m = call(&*backend, Dest::Any, proto::MetadataRequest { table_path: vec![pb_path(&path)], ..Default::default() }).await?;
    let mut leaders = vec![None; info.bucket_count() as usize];
    if let Some(t) = m.table_metadata.iter().find(|t| t.table_id == info.table_id) {
        for b in &t.bucket_metadata {
            if let Some(slot) = leaders.get_mut(b.bucket_id as usize) {
                *slot = b.leader();
            }
        }
    }
    Ok((info, leaders))
}

/// The id and bucket leaders of the partition called `name` of a partitioned table
/// (`PARTITION_NOT_EXISTS` if there is none).
pub(crate) fn load_partition(conn: &Arc<ConnInner>, info: &TableInfo, name: &str) -> Result<(i64, Vec<Option<i32>>)> {
    load_partition_counted(conn, info, name).map(|(id, leaders, _)| (id, leaders))
}

/// [`load_partition`] with the partition's own bucket count (the table's when the server does
/// not tell it: a Fluss 0.9 server, where every partition has the table's count).
pub(crate) fn load_partition_counted(conn: &Arc<ConnInner>, info: &TableInfo, name: &str) -> Result<(i64, Vec<Option<i32>>, i32)> {
    let backend = conn.backend.clone();
    let timeout = conn.config.request_timeout;
    let req = proto::MetadataRequest {
        partitions_path: vec![proto::PbPhysicalTablePath {
            database_name: info.path.database.clone(),
            table_name: info.path.table.clone(),
            partition_name: Some(name.to_string()),
        }],
        ..Default::default()
    };
    let (table_id, buckets, path) = (info.table_id, info.bucket_count() as usize, info.path.clone());
    let name = name.to_string();
    conn.block_on(async move {
        let m = match tokio::time::timeout(timeout, call(&*backend, Dest::Any, req)).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(Error::server(crate::FlussCode::NETWORK_EXCEPTION, format!("metadata of {path} partition {name} timed out")))
            }
        };
        let pm =
            m.partition_metadata.iter().find(|p| p.partition_name == name && p.table_id == table_id).ok_or_else(|| {
                Error::server(crate::FlussCode::PARTITION_NOT_EXISTS, format!("partition {name} of {path} does not exist"))
            })?;
        let count = match pm.bucket_count {
            Some(n) if n >= 1 => n,
            Some(n) => return Err(Error::protocol(format!("partition {name} of {path} has {n} buckets"))),
            None => buckets as i32,
        };
        let mut leaders = vec![None; count as usize];
        for b in &pm.bucket_metadata {
            if let Some(slot) = leaders.get_mut(b.bucket_id as usize) {
                *slot = b.leader();
            }
        }
        Ok((pm.partition_id, leaders, count))
    })
}

/// Table info and current bucket leaders.
pub(crate) fn load_table(conn: &Arc<ConnInner>, path: &TablePath) -> Result<(TableInfo, Vec<Option<i32>>)> {
    let backend = conn.backend.clone();
    let timeout = conn.config.request_timeout;
    let path = path.clone();
    conn.block_on(retrying(timeout, "loading the table's metadata", move || fetch_table(backend.clone(), path.clone(), 1)))
}

/// The schema of `path` with id `schema_id` (GetTableSchema), retried like the other reads.
pub(crate) fn load_schema(conn: &Arc<ConnInner>, path: &TablePath, schema_id: i32) -> Result<Schema> {
    let backend = conn.backend.clone();
    let timeout = conn.config.request_timeout;
    let req = proto::GetTableSchemaRequest { table_path: pb_path(path), schema_id: Some(schema_id) };
    let r = conn.block_on(retrying(timeout, "loading a schema of the table", move || {
        let (backend, req) = (backend.clone(), req.clone());
        async move { call(&*backend, Dest::Any, req).await }
    }))?;
    let v: serde_json::Value =
        serde_json::from_slice(&r.schema_json).map_err(|e| Error::protocol(format!("schema {schema_id} of {path}: {e}")))?;
    schema_from_json(&v)
}

/// Run `attempt` until it succeeds, fails in a way that is not retriable, or `timeout` has
/// passed (each attempt bounded by what is left of it), with a pause growing from 100 ms to 1 s
/// between attempts: for requests that change nothing (metadata, lists), so that a coordinator
/// restarting or a connection closed under them does not fail the call.
async fn retrying<T, F, Fut>(timeout: Duration, what: &str, mut attempt: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pause = Duration::from_millis(100);
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let r = match tokio::time::timeout(left, attempt()).await {
            Ok(r) => r,
            Err(_) => Err(Error::server(crate::FlussCode::NETWORK_EXCEPTION, format!("{what} timed out after {timeout:?}"))),
        };
        match r {
            Err(e) if e.is_retriable() && tokio::time::Instant::now() + pause < deadline => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
            r => return r,
        }
    }
}
