//! `connect`, `Config`, `Connection`, `Admin`, `Table`, and the metadata classes (`TablePath`,
//! `Schema`, `TableDescriptor`, `TableInfo`).

use std::collections::BTreeMap;
use std::mem::ManuallyDrop;
use std::sync::Arc;

use fluss_writer::{
    AclBinding, AclFilter, Admin, AggFunction, Column, ConnectOptions, Connection, Schema, Table, TableChange, TableDescriptor, TableInfo,
    TablePath,
};
use pyo3::prelude::*;

use crate::acl::{PyAclBinding, PyAclFilter};
use crate::entry::entry_points;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3_arrow::PySchema as PyArrowSchema;

use crate::completion::timeout;
use crate::convert::{columns_from_arrow, from_value, key_from_py, names, parse_type, utf8, Name};
use crate::error::IntoPyResult;
use crate::gil::{blocking, check_fork, drop_core, interruptible, register_connection, LiveConn, PyWorkerHooks, FORK_GENERATION};
use crate::writer::{PyTableAppend, PyTableUpsert};

// ===== config =====

/// Connection configuration: Fluss client keys (`"client.writer.buffer.wait-timeout": "5s"`).
/// Duration keys take a string (`"30s"`; a bare `"30"` is milliseconds, as in Fluss) or a
/// `datetime.timedelta`. Unknown keys and unparsable values raise InvalidConfigError.
#[pyclass(name = "Config", module = "fluss_writer", frozen)]
#[derive(Clone)]
pub struct PyConfig {
    pairs: BTreeMap<String, String>,
}

fn config_err(m: String) -> PyErr {
    crate::error::client(fluss_writer::ClientCode::InvalidConfig, m)
}

/// A `datetime.timedelta` as a duration string the core parses, exact to the microsecond.
fn timedelta_value(v: &Bound<'_, PyAny>) -> PyResult<String> {
    let part = |name: &str| v.getattr(name).and_then(|x| x.extract::<i64>()).map(i128::from);
    let micros = (part("days")? * 86_400 + part("seconds")?) * 1_000_000 + part("microseconds")?;
    Ok(if micros % 1_000_000 == 0 {
        format!("{}s", micros / 1_000_000)
    } else if micros % 1_000 == 0 {
        format!("{}ms", micros / 1_000)
    } else {
        format!("{micros}us")
    })
}

fn config_value(key: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    let py = v.py();
    let timedelta = py.import("datetime")?.getattr("timedelta")?;
    let kind = fluss_writer::config::key_kind(key);
    if kind == Some(fluss_writer::config::KeyKind::Duration) {
        // A duration is a string with its unit or a timedelta: a bare Python number would be
        // read as milliseconds, which `30` meaning 30 seconds would silently get wrong.
        if v.is_instance(&timedelta)? {
            return timedelta_value(v);
        }
        if !v.is_instance_of::<PyString>() {
            let number = !v.is_instance_of::<PyBool>() && (v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>());
            let n = if number { v.repr()?.to_string() } else { "30".into() };
            return Err(config_err(format!(
                "{key} is a duration, given as {}: pass a string with its unit, such as \"{n}s\" or \"{n}ms\" (a bare \"{n}\" is \
                 milliseconds, as in Fluss), or a datetime.timedelta, such as timedelta(seconds={n})",
                v.get_type().name().map(|t| t.to_string()).unwrap_or_default()
            )));
        }
    } else if kind.is_some() && v.is_instance(&timedelta)? {
        return Err(config_err(format!("{key} is not a duration: a datetime.timedelta is accepted for duration keys only")));
    }
    if v.is_instance_of::<PyBool>() {
        return Ok(if v.is_truthy()? { "true" } else { "false" }.into());
    }
    let what = format!("the value of {key:?}");
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(utf8(s, &what, config_err)?.into_owned());
    }
    Ok(utf8(&v.str()?, &what, config_err)?.into_owned())
}

fn pairs_of(d: &Bound<'_, PyDict>) -> PyResult<BTreeMap<String, String>> {
    let mut m = BTreeMap::new();
    for (k, v) in d.iter() {
        let k =
            k.cast_into::<PyString>().map_err(|e| pyo3::exceptions::PyTypeError::new_err(format!("configuration keys are str: {e}")))?;
        let k = utf8(&k, "a configuration key", config_err)?.into_owned();
        let v = config_value(&k, &v)?;
        m.insert(k, v);
    }
    Ok(m)
}

entry_points! {
impl PyConfig {
    #[new]
    #[pyo3(signature = (properties=None))]
    fn new(properties: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let pairs = match properties {
            Some(d) => pairs_of(d)?,
            None => BTreeMap::new(),
        };
        fluss_writer::Config::from_map(&pairs).py_err()?;
        Ok(PyConfig { pairs })
    }

    /// The keys and values as strings (a timedelta as its duration string), with the values of
    /// secret keys (passwords, JAAS lines) shown as `***` unless `reveal_secrets` is true.
    #[pyo3(signature = (*, reveal_secrets=false))]
    fn to_dict(&self, reveal_secrets: bool) -> BTreeMap<String, String> {
        self.pairs
            .iter()
            .map(|(k, v)| (k.clone(), if reveal_secrets { v.clone() } else { fluss_writer::config::shown_value(k, v).to_string() }))
            .collect()
    }

    /// The pairs, with the values of secret keys (passwords, JAAS strings) shown as `***`.
    fn __repr__(&self) -> String {
        let shown: BTreeMap<&str, &str> = self.pairs.iter().map(|(k, v)| (k.as_str(), fluss_writer::config::shown_value(k, v))).collect();
        format!("Config({shown:?})")
    }
}
}

entry_points! {
#[pyfunction]
/// Open a connection: `"embedded"`, `"embedded:<dir>"` or `"host:port[,host:port]"`, given as
/// `bootstrap` or as the `bootstrap.servers` key of `config` (one setting: both given and
/// different is InvalidConfigError; neither is InvalidConfigError too, saying what to pass).
#[pyo3(signature = (bootstrap=None, config=None))]
pub fn connect(py: Python<'_>, bootstrap: Option<&Bound<'_, PyAny>>, config: Option<&Bound<'_, PyAny>>) -> PyResult<PyConnection> {
    let bootstrap = match bootstrap {
        None => None,
        Some(b) if b.is_none() => None,
        Some(b) => {
            let s = b.cast::<PyString>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "bootstrap must be a str or None, not {}",
                    b.get_type().name().map(|n| n.to_string()).unwrap_or_default()
                ))
            })?;
            Some(utf8(s, "bootstrap", config_err)?.into_owned())
        }
    };
    let pairs = match config {
        None => BTreeMap::new(),
        Some(c) if c.is_none() => BTreeMap::new(),
        Some(c) => {
            if let Ok(cfg) = c.cast::<PyConfig>() {
                cfg.get().pairs.clone()
            } else if let Ok(d) = c.cast::<PyDict>() {
                pairs_of(d)?
            } else {
                return Err(pyo3::exceptions::PyTypeError::new_err("config must be a dict or a fluss_writer.Config"));
            }
        }
    };
    // The argument and the bootstrap.servers key are one setting (the core's rule).
    let cfg = fluss_writer::Config::resolve(bootstrap.as_deref(), &pairs).py_err()?;
    let hooks = Arc::new(PyWorkerHooks::default());
    let h2 = hooks.clone();
    let conn = blocking(py, move || Connection::connect_with(cfg, ConnectOptions::default().with_worker_hooks(h2))).py_err()?;
    let live = Arc::new(LiveConn { conn: ManuallyDrop::new(conn), gen: FORK_GENERATION.load(std::sync::atomic::Ordering::Relaxed) });
    register_connection(&live);
    Ok(PyConnection { live, hooks })
}
}

// ===== connection =====

/// A connection. Use as a context manager, or call `close()`.
#[pyclass(name = "Connection", module = "fluss_writer", frozen, weakref)]
pub struct PyConnection {
    pub live: Arc<LiveConn>,
    pub hooks: Arc<PyWorkerHooks>,
}

pub fn table_path(obj: &Bound<'_, PyAny>) -> PyResult<TablePath> {
    if let Ok(p) = obj.cast::<PyTablePath>() {
        return Ok(p.get().inner.clone());
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return TablePath::parse(&utf8(s, "a table path", |m| crate::error::client(fluss_writer::ClientCode::InvalidTable, m))?).py_err();
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        let (d, n): (Name, Name) = t.extract()?;
        return TablePath::new(d.0, n.0).py_err();
    }
    Err(pyo3::exceptions::PyTypeError::new_err("a table path is a \"db.table\" string, a (db, table) tuple or a TablePath"))
}

entry_points! {
impl PyConnection {
    /// DDL and metadata.
    fn admin(&self) -> PyResult<PyAdmin> {
        check_fork(self.live.gen).py_err()?;
        Ok(PyAdmin { admin: ManuallyDrop::new(self.live.conn.admin()), live: self.live.clone() })
    }

    /// A table handle (`"db.table"`).
    fn get_table(&self, py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<PyTable> {
        check_fork(self.live.gen).py_err()?;
        let p = table_path(path)?;
        let conn = &*self.live.conn;
        let t = blocking(py, || conn.get_table(&p)).py_err()?;
        Ok(PyTable { table: ManuallyDrop::new(t), live: self.live.clone() })
    }

    /// Close every writer of this connection (each gets up to `timeout` seconds to drain; then
    /// pending operations complete with WRITER_CLOSED) and stop the callback worker.
    #[pyo3(signature = (timeout=None))]
    fn close(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<()> {
        check_fork(self.live.gen).py_err()?;
        let t = self::timeout(timeout)?;
        let conn = &*self.live.conn;
        interruptible(py, || conn.close(t))
    }

    #[getter]
    fn closed(&self) -> bool {
        self.live.conn.is_closed()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close(py, None)?;
        Ok(false)
    }

    /// Dispatcher counters of the connection's default executor (for tests and benchmarks):
    /// `gil_acquisitions`, `groups`, `jobs_run`, `callbacks_run`, `queued_jobs`,
    /// `resolve_hops` and `executor_hops` (process-wide).
    fn _dispatch_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let s = self.live.conn.executor().stats();
        let o = std::sync::atomic::Ordering::Relaxed;
        d.set_item("gil_acquisitions", self.hooks.counters.acquisitions.load(o))?;
        d.set_item("groups", self.hooks.counters.groups.load(o))?;
        d.set_item("jobs_run", s.jobs_run)?;
        d.set_item("callbacks_run", s.callbacks_run)?;
        d.set_item("queued_jobs", s.queued_jobs)?;
        d.set_item("ack_to_callback_count", s.ack_to_callback.count)?;
        d.set_item("ack_to_callback_p50_nanos", s.ack_to_callback.p50_nanos)?;
        d.set_item("ack_to_callback_p99_nanos", s.ack_to_callback.p99_nanos)?;
        d.set_item("ack_to_callback_max_nanos", s.ack_to_callback.max_nanos)?;
        d.set_item("resolve_hops", crate::completion::RESOLVE_HOPS.load(o))?;
        d.set_item("executor_hops", crate::callbacks::EXECUTOR_HOPS.load(o))?;
        Ok(d)
    }

    /// Test hook (fluss_writer.testing.panic_in_method): panic inside this method. Only with
    /// the cargo feature `test-hooks` (never in a release build).
    #[cfg(feature = "test-hooks")]
    fn _panic_for_test(&self, message: String) -> PyResult<()> {
        check_fork(self.live.gen).py_err()?;
        panic!("{message}")
    }

    /// The embedded engine's testing handle (see fluss_writer.testing).
    fn _engine(&self) -> PyResult<crate::testing::PyEmbeddedEngine> {
        check_fork(self.live.gen).py_err()?;
        match self.live.conn.embedded() {
            Some(e) => Ok(crate::testing::PyEmbeddedEngine { engine: e.clone(), live: self.live.clone() }),
            None => Err(crate::error::client(fluss_writer::ClientCode::Unsupported, "this connection is not to the embedded engine")),
        }
    }

    fn __repr__(&self) -> String {
        format!("Connection({:?}, closed={})", self.live.conn.config().bootstrap_servers, self.live.conn.is_closed())
    }
}
}

// ===== admin =====

/// Databases and tables.
#[pyclass(name = "Admin", module = "fluss_writer", frozen)]
pub struct PyAdmin {
    admin: ManuallyDrop<Admin>,
    live: Arc<LiveConn>,
}

impl Drop for PyAdmin {
    fn drop(&mut self) {
        // SAFETY: dropped once, here.
        drop_core(unsafe { ManuallyDrop::take(&mut self.admin) }, self.live.gen);
    }
}

impl PyAdmin {
    fn run<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&Admin) -> fluss_writer::Result<T> + Send) -> PyResult<T> {
        check_fork(self.live.gen).py_err()?;
        let a = &*self.admin;
        blocking(py, || f(a)).py_err()
    }
}

entry_points! {
impl PyAdmin {
    #[pyo3(signature = (name, ignore_if_exists=false))]
    fn create_database(&self, py: Python<'_>, name: Name, ignore_if_exists: bool) -> PyResult<()> {
        let name = name.0;
        self.run(py, |a| a.create_database(&name, ignore_if_exists))
    }
    // cascade=false, as in C++ (issue 27): dropping tables is never the default.
    #[pyo3(signature = (name, ignore_if_not_exists=false, cascade=false))]
    fn drop_database(&self, py: Python<'_>, name: Name, ignore_if_not_exists: bool, cascade: bool) -> PyResult<()> {
        let name = name.0;
        self.run(py, |a| a.drop_database(&name, ignore_if_not_exists, cascade))
    }
    fn list_databases(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.run(py, |a| a.list_databases())
    }
    fn database_exists(&self, py: Python<'_>, name: Name) -> PyResult<bool> {
        let name = name.0;
        self.run(py, |a| a.database_exists(&name))
    }
    #[pyo3(signature = (path, descriptor, ignore_if_exists=false))]
    fn create_table(
        &self,
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        descriptor: &Bound<'_, PyTableDescriptor>,
        ignore_if_exists: bool,
    ) -> PyResult<()> {
        let p = table_path(path)?;
        let d = descriptor.get().inner.clone();
        self.run(py, |a| a.create_table(&p, &d, ignore_if_exists))
    }
    #[pyo3(signature = (path, ignore_if_not_exists=false))]
    fn drop_table(&self, py: Python<'_>, path: &Bound<'_, PyAny>, ignore_if_not_exists: bool) -> PyResult<()> {
        let p = table_path(path)?;
        self.run(py, |a| a.drop_table(&p, ignore_if_not_exists))
    }
    fn list_tables(&self, py: Python<'_>, database: Name) -> PyResult<Vec<String>> {
        let database = database.0;
        self.run(py, |a| a.list_tables(&database))
    }
    fn table_exists(&self, py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<bool> {
        let p = table_path(path)?;
        self.run(py, |a| a.table_exists(&p))
    }
    fn get_table_info(&self, py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<PyTableInfo> {
        let p = table_path(path)?;
        Ok(PyTableInfo { inner: self.run(py, |a| a.get_table_info(&p))? })
    }
    fn create_acls(&self, py: Python<'_>, acls: Vec<PyRef<'_, PyAclBinding>>) -> PyResult<()> {
        let acls: Vec<AclBinding> = acls.iter().map(|b| b.inner.clone()).collect();
        self.run(py, |a| a.create_acls(&acls))
    }
    #[pyo3(signature = (filter=None))]
    fn list_acls(&self, py: Python<'_>, filter: Option<PyRef<'_, PyAclFilter>>) -> PyResult<Vec<PyAclBinding>> {
        let f = filter.map_or_else(AclFilter::any, |f| f.inner.clone());
        Ok(self.run(py, |a| a.list_acls(&f))?.into_iter().map(|inner| PyAclBinding { inner }).collect())
    }
    fn drop_acls(&self, py: Python<'_>, filters: Vec<PyRef<'_, PyAclFilter>>) -> PyResult<Vec<PyAclBinding>> {
        let filters: Vec<AclFilter> = filters.iter().map(|f| f.inner.clone()).collect();
        Ok(self.run(py, |a| a.drop_acls(&filters))?.into_iter().map(|inner| PyAclBinding { inner }).collect())
    }
    /// Create the partition of a partitioned table named by `spec` (`{"dt": "2026-12-03"}`).
    #[pyo3(signature = (path, spec, ignore_if_exists=false))]
    fn create_partition(&self, py: Python<'_>, path: &Bound<'_, PyAny>, spec: &Bound<'_, PyAny>, ignore_if_exists: bool) -> PyResult<()> {
        let (p, s) = (table_path(path)?, crate::partition::spec_from_py(spec)?);
        self.run(py, |a| a.create_partition(&p, &s, ignore_if_exists))
    }
    /// Drop the partition named by `spec` (its rows go with it).
    #[pyo3(signature = (path, spec, ignore_if_not_exists=false))]
    fn drop_partition(&self, py: Python<'_>, path: &Bound<'_, PyAny>, spec: &Bound<'_, PyAny>, ignore_if_not_exists: bool) -> PyResult<()> {
        let (p, s) = (table_path(path)?, crate::partition::spec_from_py(spec)?);
        self.run(py, |a| a.drop_partition(&p, &s, ignore_if_not_exists))
    }
    /// Change the table's schema: add `add_columns` (a list of (name, type) tuples, or a pyarrow
    /// schema, as `Schema` takes them) after the last column; `drop_columns` and
    /// `rename_columns` ((old, new) pairs) go to the server, which (0.9.1) refuses them.
    #[pyo3(signature = (path, add_columns=None, drop_columns=None, rename_columns=None, ignore_if_not_exists=false))]
    fn alter_table(
        &self,
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        add_columns: Option<&Bound<'_, PyAny>>,
        drop_columns: Option<Vec<Name>>,
        rename_columns: Option<Vec<(Name, Name)>>,
        ignore_if_not_exists: bool,
    ) -> PyResult<()> {
        let p = table_path(path)?;
        let mut changes: Vec<TableChange> = match add_columns {
            None => Vec::new(),
            Some(c) => columns_from_py(c)?.into_iter().map(TableChange::AddColumn).collect(),
        };
        changes.extend(drop_columns.unwrap_or_default().into_iter().map(|Name(n)| TableChange::DropColumn(n)));
        changes.extend(rename_columns.unwrap_or_default().into_iter().map(|(Name(from), Name(to))| TableChange::RenameColumn { from, to }));
        self.run(py, |a| a.alter_table(&p, &changes, ignore_if_not_exists))
    }
    /// Change the bucket count of a partitioned table's partitions created from now on (Fluss
    /// 1.0, ALTER_TABLE v1); `Admin::alter_bucket_count`.
    #[pyo3(signature = (path, bucket_count, ignore_if_not_exists=false))]
    fn alter_bucket_count(&self, py: Python<'_>, path: &Bound<'_, PyAny>, bucket_count: i32, ignore_if_not_exists: bool) -> PyResult<()> {
        let p = table_path(path)?;
        self.run(py, |a| a.alter_bucket_count(&p, bucket_count, ignore_if_not_exists))
    }
    /// Whether the servers have a capability (`Admin::server_supports`).
    fn server_supports(&self, py: Python<'_>, capability: &str) -> PyResult<bool> {
        self.run(py, |a| a.server_supports(capability))
    }
    /// The partitions of a partitioned table, as `PartitionInfo`s.
    fn list_partitions(&self, py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<Vec<crate::partition::PyPartitionInfo>> {
        let p = table_path(path)?;
        Ok(self.run(py, |a| a.list_partitions(&p))?.into_iter().map(|inner| crate::partition::PyPartitionInfo { inner }).collect())
    }
}
}

// ===== table =====

/// `fluss_writer._readback.ScannedRow`, the named tuple `Table.scan` returns.
static SCANNED_ROW: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A table of a connection.
#[pyclass(name = "Table", module = "fluss_writer", frozen)]
pub struct PyTable {
    pub table: ManuallyDrop<Table>,
    pub live: Arc<LiveConn>,
}

impl Drop for PyTable {
    fn drop(&mut self) {
        // SAFETY: dropped once, here.
        drop_core(unsafe { ManuallyDrop::take(&mut self.table) }, self.live.gen);
    }
}

entry_points! {
impl PyTable {
    /// Builder of append writers (log tables).
    fn new_append(&self) -> PyResult<PyTableAppend> {
        check_fork(self.live.gen).py_err()?;
        self.table.new_append().py_err()?;
        Ok(PyTableAppend { table: ManuallyDrop::new((*self.table).clone()), live: self.live.clone() })
    }
    /// Builder of upsert writers (primary-key tables).
    fn new_upsert(&self) -> PyResult<PyTableUpsert> {
        check_fork(self.live.gen).py_err()?;
        self.table.new_upsert().py_err()?;
        Ok(PyTableUpsert::new((*self.table).clone(), self.live.clone()))
    }
    /// Read `bucket`'s log from `from_offset` to its high watermark through the Fluss protocol
    /// (log tables: the appended rows; primary-key tables: the changelog), as a list of
    /// `ScannedRow(offset, change_type, row)`. Works on the embedded engine and on a cluster
    /// (GIL released); for verification and examples, not for streaming. `partition`: the
    /// partition's name, required for a partitioned table (the core's `scan_partition`).
    #[pyo3(signature = (bucket, from_offset=0, partition=None))]
    fn scan<'py>(&self, py: Python<'py>, bucket: i32, from_offset: i64, partition: Option<Name>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        check_fork(self.live.gen).py_err()?;
        let t = &*self.table;
        let rows = match partition {
            None => blocking(py, || t.scan(bucket, from_offset)),
            Some(Name(p)) => blocking(py, || t.scan_partition(&p, bucket, from_offset)),
        }
        .py_err()?;
        let cls =
            SCANNED_ROW.get_or_try_init(py, || py.import("fluss_writer._readback")?.getattr("ScannedRow").map(Bound::unbind))?.bind(py);
        rows.iter()
            .map(|r| {
                let vals = r.row.iter().map(|v| from_value(py, v)).collect::<PyResult<Vec<_>>>()?;
                cls.call1((r.offset, r.change_type.short_string(), PyTuple::new(py, vals)?))
            })
            .collect()
    }
    /// The current row of a primary key (a dict, or a list/tuple of the key values in
    /// primary-key order) as a tuple, or None; looked up through the Fluss protocol (GIL
    /// released).
    fn lookup<'py>(&self, py: Python<'py>, key: &Bound<'_, PyAny>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        check_fork(self.live.gen).py_err()?;
        let schema = self.table.info().schema();
        // A log table: the core answers UnsupportedError before looking at the key.
        let k = if schema.primary_key_indexes().is_empty() { Vec::new() } else { key_from_py(schema, key)? };
        let t = &*self.table;
        match blocking(py, || t.lookup(&k)).py_err()? {
            None => Ok(None),
            Some(row) => Ok(Some(PyTuple::new(py, row.iter().map(|v| from_value(py, v)).collect::<PyResult<Vec<_>>>()?)?)),
        }
    }
    #[getter]
    fn path(&self) -> String {
        self.table.path().to_string()
    }
    #[getter]
    fn info(&self) -> PyTableInfo {
        PyTableInfo { inner: self.table.info().clone() }
    }
    fn __repr__(&self) -> String {
        format!("Table({})", self.table.path())
    }
}
}

// ===== metadata =====

/// `database.table`.
#[pyclass(name = "TablePath", module = "fluss_writer", frozen)]
pub struct PyTablePath {
    inner: TablePath,
}

entry_points! {
impl PyTablePath {
    #[new]
    fn new(database: Name, table: Name) -> PyResult<Self> {
        Ok(PyTablePath { inner: TablePath::new(database.0, table.0).py_err()? })
    }
    #[getter]
    fn database(&self) -> String {
        self.inner.database.clone()
    }
    #[getter]
    fn table(&self) -> String {
        self.inner.table.clone()
    }
    fn __str__(&self) -> String {
        self.inner.to_string()
    }
    fn __repr__(&self) -> String {
        format!("TablePath({:?}, {:?})", self.inner.database, self.inner.table)
    }
}
}

/// Columns and an optional primary key. `columns` is a pyarrow schema (any object with
/// `__arrow_c_schema__`; list, large_list, map and struct fields make ARRAY, MAP and ROW columns
/// to any depth, fixed_size_binary(n) BINARY(n), each level NOT NULL where its field is not
/// nullable: the core's `DataType::from_arrow`) or a list of `(name, type)` /
/// `(name, type, nullable)` tuples with type names like `"BIGINT"`, `"DECIMAL(10, 2)"`,
/// `"TIMESTAMP_LTZ(3)"`.
#[pyclass(name = "Schema", module = "fluss_writer", frozen)]
pub struct PySchema {
    pub inner: Schema,
}

/// An aggregation function from Python: its name (`"sum"`) or `(name, {param: value})`; the
/// core checks the name (`AggFunction::new`).
fn agg_function_from_py(agg: &Bound<'_, PyAny>) -> PyResult<AggFunction> {
    let (Name(name), params): (Name, BTreeMap<String, String>) = match agg.extract::<Name>() {
        Ok(n) => (n, BTreeMap::new()),
        Err(_) => agg.extract().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err("a column's aggregation function is a name (\"sum\") or a (name, {param: value}) tuple")
        })?,
    };
    let mut f = AggFunction::new(&name).py_err()?;
    f.params = params;
    Ok(f)
}

fn columns_from_py(columns: &Bound<'_, PyAny>) -> PyResult<Vec<Column>> {
    if columns.hasattr("__arrow_c_schema__")? {
        let s: PyArrowSchema = columns.extract()?;
        return columns_from_arrow(s.as_ref());
    }
    let list = columns.cast::<PyList>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err("columns must be a pyarrow schema or a list of (name, type[, nullable[, agg]]) tuples")
    })?;
    let mut out = Vec::new();
    for item in list.iter() {
        let t = item
            .cast::<PyTuple>()
            .map_err(|_| pyo3::exceptions::PyTypeError::new_err("each column is a (name, type[, nullable[, agg]]) tuple"))?;
        let (Name(name), Name(ty), nullable, agg) = match t.len() {
            2 => {
                let (n, ty): (Name, Name) = t.extract()?;
                (n, ty, true, None)
            }
            3 => {
                let (n, ty, nullable): (Name, Name, bool) = t.extract()?;
                (n, ty, nullable, None)
            }
            4 => {
                let (n, ty, nullable, agg): (Name, Name, bool, Bound<'_, PyAny>) = t.extract()?;
                (n, ty, nullable, if agg.is_none() { None } else { Some(agg_function_from_py(&agg)?) })
            }
            _ => return Err(pyo3::exceptions::PyTypeError::new_err("each column is a (name, type[, nullable[, agg]]) tuple")),
        };
        let mut c = Column::new(name, parse_type(&ty)?);
        c.agg_function = agg;
        out.push(if nullable { c } else { c.not_null() });
    }
    Ok(out)
}

entry_points! {
impl PySchema {
    #[new]
    #[pyo3(signature = (columns, primary_keys=None))]
    fn new(columns: &Bound<'_, PyAny>, primary_keys: Option<Vec<Name>>) -> PyResult<Self> {
        let cols = columns_from_py(columns)?;
        Ok(PySchema { inner: Schema::new(cols, names(primary_keys.unwrap_or_default())).py_err()? })
    }
    /// `(name, type, nullable)` per column.
    #[getter]
    fn columns(&self) -> Vec<(String, String, bool)> {
        self.inner.columns().iter().map(|c| (c.name.clone(), c.data_type.to_string(), c.nullable)).collect()
    }
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.inner.columns().iter().map(|c| c.name.clone()).collect()
    }
    #[getter]
    fn primary_keys(&self) -> Vec<String> {
        self.inner.primary_key().to_vec()
    }
    /// `{column: (function, {param: value})}` for the columns with an aggregation function.
    #[getter]
    fn agg_functions(&self) -> BTreeMap<String, (String, BTreeMap<String, String>)> {
        self.inner
            .columns()
            .iter()
            .filter_map(|c| c.agg_function.as_ref().map(|f| (c.name.clone(), (f.name.clone(), f.params.clone()))))
            .collect()
    }
    /// The Arrow schema rows are written with (an `__arrow_c_schema__` object; `pa.schema(x)`).
    fn to_arrow(&self) -> PyArrowSchema {
        PyArrowSchema::new(self.inner.to_arrow())
    }
    fn __repr__(&self) -> String {
        format!("Schema({:?}, primary_keys={:?})", self.columns()?, self.inner.primary_key())
    }
}
}

/// What `Admin.create_table` takes.
#[pyclass(name = "TableDescriptor", module = "fluss_writer", frozen)]
pub struct PyTableDescriptor {
    pub inner: TableDescriptor,
}

entry_points! {
impl PyTableDescriptor {
    #[new]
    #[pyo3(signature = (
        schema, bucket_count=None, primary_keys=None, bucket_keys=None, properties=None, comment=None, partition_keys=None
    ))]
    fn new(
        schema: &Bound<'_, PyAny>,
        bucket_count: Option<i32>,
        primary_keys: Option<Vec<Name>>,
        bucket_keys: Option<Vec<Name>>,
        properties: Option<&Bound<'_, PyDict>>,
        comment: Option<Name>,
        partition_keys: Option<Vec<Name>>,
    ) -> PyResult<Self> {
        let primary_keys = primary_keys.map(names);
        let comment = comment.map(|c| c.0);
        let schema = if let Ok(s) = schema.cast::<PySchema>() {
            let s = s.get().inner.clone();
            match primary_keys {
                Some(pk) => Schema::new(s.columns().to_vec(), pk).py_err()?,
                None => s,
            }
        } else {
            Schema::new(columns_from_py(schema)?, primary_keys.unwrap_or_default()).py_err()?
        };
        let mut d = TableDescriptor::new(schema);
        d.bucket_count = bucket_count;
        d.bucket_key = names(bucket_keys.unwrap_or_default());
        d.partition_keys = names(partition_keys.unwrap_or_default());
        if let Some(p) = properties {
            d.properties = pairs_of(p)?;
        }
        d.comment = comment;
        d.normalized(1).py_err()?;
        Ok(PyTableDescriptor { inner: d })
    }
    #[getter]
    fn schema(&self) -> PySchema {
        PySchema { inner: self.inner.schema.clone() }
    }
    #[getter]
    fn bucket_count(&self) -> Option<i32> {
        self.inner.bucket_count
    }
    #[getter]
    fn bucket_keys(&self) -> Vec<String> {
        self.inner.bucket_key.clone()
    }
    #[getter]
    fn partition_keys(&self) -> Vec<String> {
        self.inner.partition_keys.clone()
    }
    fn __repr__(&self) -> String {
        format!(
            "TableDescriptor(bucket_count={:?}, bucket_keys={:?}, partition_keys={:?})",
            self.inner.bucket_count, self.inner.bucket_key, self.inner.partition_keys
        )
    }
}
}

/// A table as the server knows it.
#[pyclass(name = "TableInfo", module = "fluss_writer", frozen)]
pub struct PyTableInfo {
    inner: TableInfo,
}

entry_points! {
impl PyTableInfo {
    #[getter]
    fn path(&self) -> String {
        self.inner.path.to_string()
    }
    #[getter]
    fn table_id(&self) -> i64 {
        self.inner.table_id
    }
    #[getter]
    fn schema_id(&self) -> i32 {
        self.inner.schema_id
    }
    #[getter]
    fn bucket_count(&self) -> i32 {
        self.inner.bucket_count()
    }
    #[getter]
    fn bucket_count_epoch(&self) -> Option<i64> {
        self.inner.bucket_count_epoch
    }
    #[getter]
    fn bucket_keys(&self) -> Vec<String> {
        self.inner.descriptor.bucket_key.clone()
    }
    #[getter]
    fn primary_keys(&self) -> Vec<String> {
        self.inner.schema().primary_key().to_vec()
    }
    #[getter]
    fn has_primary_key(&self) -> bool {
        self.inner.has_primary_key()
    }
    #[getter]
    fn partition_keys(&self) -> Vec<String> {
        self.inner.partition_keys().to_vec()
    }
    #[getter]
    fn is_partitioned(&self) -> bool {
        self.inner.is_partitioned()
    }
    #[getter]
    fn schema(&self) -> PySchema {
        PySchema { inner: self.inner.schema().clone() }
    }
    fn __repr__(&self) -> String {
        format!("TableInfo({}, id={}, buckets={})", self.inner.path, self.inner.table_id, self.inner.bucket_count())
    }
}
}
