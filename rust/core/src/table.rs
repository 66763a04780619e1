//! [`Table`] handles and the writer builders hanging off them.

use std::sync::Arc;

use crate::connection::ConnInner;
use crate::error::{ClientCode, Error, Result};
use crate::metadata::{TableInfo, TablePath};
use crate::write::{AppendWriter, UpsertWriter, WriterCore, WriterOptions};

pub(crate) struct TableInner {
    conn: Arc<ConnInner>,
    info: TableInfo,
    leaders: Vec<Option<i32>>,
}

/// A table of a connection. Cheap to clone.
#[derive(Clone)]
pub struct Table {
    inner: Arc<TableInner>,
}

impl Table {
    pub(crate) fn load(conn: Arc<ConnInner>, path: &TablePath) -> Result<Table> {
        conn.check_usable()?;
        let (info, leaders) = crate::admin::load_table(&conn, path)?;
        Ok(Table { inner: Arc::new(TableInner { conn, info, leaders }) })
    }

    /// Id, schema and descriptor (after server defaults).
    pub fn info(&self) -> &TableInfo {
        &self.inner.info
    }

    /// The table's path.
    pub fn path(&self) -> &TablePath {
        &self.inner.info.path
    }

    pub(crate) fn leaders(&self) -> Vec<Option<i32>> {
        self.inner.leaders.clone()
    }

    /// Read `bucket`'s log from `from_offset` to its high watermark through the Fluss protocol
    /// (log tables: the appended rows; primary-key tables: the changelog). Works on the embedded
    /// engine and on a cluster; meant for verification and examples, not for streaming. Needs
    /// READ on the table, and DESCRIBE (implied by READ) for its ListOffsets on Fluss 1.0.
    pub fn scan(&self, bucket: i32, from_offset: i64) -> Result<Vec<crate::embedded::ScannedRow>> {
        self.inner.conn.check_usable()?;
        crate::readback::scan(&self.inner.conn, &self.inner.info, None, bucket, from_offset)
    }

    /// [`scan`](Self::scan) of a bucket of one partition (by name, e.g. `"2026-12-03"` or
    /// `"eu$2026-12-03"`) of a partitioned table. `PARTITION_NOT_EXISTS` if it does not exist.
    pub fn scan_partition(&self, partition: &str, bucket: i32, from_offset: i64) -> Result<Vec<crate::embedded::ScannedRow>> {
        self.inner.conn.check_usable()?;
        crate::readback::scan(&self.inner.conn, &self.inner.info, Some(partition), bucket, from_offset)
    }

    /// Look up a primary key (`key`: the key values in primary-key order, partition columns
    /// included for a partitioned table) through the Fluss protocol; `None` if absent.
    pub fn lookup(&self, key: &[crate::Value]) -> Result<Option<crate::Row>> {
        self.inner.conn.check_usable()?;
        crate::readback::lookup_key(&self.inner.conn, &self.inner.info, key)
    }

    /// Start an append writer (log tables).
    pub fn new_append(&self) -> Result<TableAppend> {
        if self.inner.info.has_primary_key() {
            return Err(Error::client(ClientCode::Unsupported, format!("{} has a primary key: use new_upsert()", self.path())));
        }
        Ok(TableAppend { table: self.clone() })
    }

    /// Start an upsert writer (primary-key tables).
    pub fn new_upsert(&self) -> Result<TableUpsert> {
        if !self.inner.info.has_primary_key() {
            return Err(Error::client(ClientCode::Unsupported, format!("{} is a log table: use new_append()", self.path())));
        }
        Ok(TableUpsert { table: self.clone(), target_columns: None })
    }
}

/// Builder of [`AppendWriter`]s.
pub struct TableAppend {
    table: Table,
}

impl TableAppend {
    /// A writer that appends rows (log tables), with `opts` for its callbacks.
    pub fn create_writer(&self, opts: WriterOptions) -> Result<AppendWriter> {
        let core = WriterCore::new(self.table.inner.conn.clone(), self.table.clone(), opts, None)?;
        Ok(AppendWriter::new(core))
    }
}

/// Builder of [`UpsertWriter`]s, optionally for a partial update.
pub struct TableUpsert {
    table: Table,
    target_columns: Option<Vec<usize>>,
}

impl TableUpsert {
    /// Write only these columns (they must include the primary key; the others must be
    /// nullable, which the server checks).
    pub fn partial_update_by_name<S: AsRef<str>>(mut self, names: &[S]) -> Result<TableUpsert> {
        let schema = self.table.info().schema();
        let mut idx = Vec::with_capacity(names.len());
        for n in names {
            idx.push(schema.index_of(n.as_ref()).ok_or_else(|| Error::invalid_row(format!("unknown column {:?}", n.as_ref())))?);
        }
        self.target_columns = Some(check_targets(self.table.info(), idx)?);
        Ok(self)
    }

    /// Write only the columns at these indexes.
    pub fn partial_update_by_index(mut self, indexes: &[usize]) -> Result<TableUpsert> {
        self.target_columns = Some(check_targets(self.table.info(), indexes.to_vec())?);
        Ok(self)
    }

    /// A writer that upserts and deletes by primary key (primary-key tables), with `opts` for its callbacks.
    pub fn create_writer(&self, opts: WriterOptions) -> Result<UpsertWriter> {
        let core = WriterCore::new(self.table.inner.conn.clone(), self.table.clone(), opts, self.target_columns.clone())?;
        Ok(UpsertWriter::new(core))
    }
}

fn check_targets(info: &TableInfo, mut idx: Vec<usize>) -> Result<Vec<usize>> {
    let schema = info.schema();
    if let Some(bad) = idx.iter().find(|&&i| i >= schema.len()) {
        return Err(Error::invalid_row(format!("column index {bad} is out of range (the table has {} columns)", schema.len())));
    }
    idx.sort_unstable();
    idx.dedup();
    for k in schema.primary_key_indexes() {
        if !idx.contains(&k) {
            return Err(Error::invalid_row(format!(
                "a partial update must include every primary-key column; {:?} is missing",
                schema.columns()[k].name
            )));
        }
    }
    Ok(idx)
}
