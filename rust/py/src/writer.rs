//! Writer builders (`TableAppend`, `TableUpsert`) and the writers (`AppendWriter`,
//! `UpsertWriter`).
//!
//! Every write converts its Python input while holding the GIL (a bad row raises here, before
//! anything is accepted, and the callback is released before the call returns), then calls the
//! core through [`blocking`], which releases the GIL for the admission wait (C5, C10).

use std::mem::ManuallyDrop;
use std::sync::Arc;

use arrow_array::RecordBatch;
use fluss_writer::{AppendWriter, Schema, Table, UpsertWriter, WriterStats};
use pyo3::prelude::*;

use crate::entry::entry_points;
use pyo3::types::{PyDict, PyList, PyTuple};
use pyo3_arrow::input::AnyRecordBatch;

use crate::callbacks::{python_callback, writer_options, SharedSlot};
use crate::completion::{timeout, PyWriteResult};
use crate::convert::{key_from_py, row_from_py};

/// The code a value the binding cannot convert is refused with.
const INVALID_ROW: i32 = fluss_writer::ClientCode::InvalidRow as i32;
use crate::error::{invalid_row, IntoPyResult};
use crate::gil::{blocking, check_fork, drop_core, interruptible, LiveConn};

fn has_cb<'a, 'py>(cb: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    cb.filter(|c| !c.is_none())
}

/// Builder of append writers.
#[pyclass(name = "TableAppend", module = "fluss_writer", frozen)]
pub struct PyTableAppend {
    pub table: ManuallyDrop<Table>,
    pub live: Arc<LiveConn>,
}

impl Drop for PyTableAppend {
    fn drop(&mut self) {
        // SAFETY: dropped once, here.
        drop_core(unsafe { ManuallyDrop::take(&mut self.table) }, self.live.gen);
    }
}

entry_points! {
impl PyTableAppend {
    /// A new writer. `executor`: None (the connection's FIFO worker), an int n (n sharded
    /// workers), a concurrent.futures.Executor or an asyncio loop (one job per completed batch).
    #[pyo3(signature = (max_pending_callbacks=None, executor=None, on_callback_error=None))]
    fn create_writer(
        &self,
        py: Python<'_>,
        max_pending_callbacks: Option<&Bound<'_, PyAny>>,
        executor: Option<&Bound<'_, PyAny>>,
        on_callback_error: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyAppendWriter> {
        check_fork(self.live.gen).py_err()?;
        let (opts, _) = writer_options(py, max_pending_callbacks, executor, on_callback_error)?;
        let table = &*self.table;
        let w = blocking(py, || table.new_append()?.create_writer(opts)).py_err()?;
        Ok(PyAppendWriter {
            schema: Arc::new(self.table.info().schema().clone()),
            w: ManuallyDrop::new(w),
            live: self.live.clone(),
            shared: SharedSlot::default(),
        })
    }
}
}

enum Targets {
    All,
    Names(Vec<String>),
    Indexes(Vec<usize>),
}

/// Builder of upsert writers, optionally for a partial update.
#[pyclass(name = "TableUpsert", module = "fluss_writer", frozen)]
pub struct PyTableUpsert {
    table: ManuallyDrop<Table>,
    live: Arc<LiveConn>,
    targets: Targets,
}

impl PyTableUpsert {
    pub fn new(table: Table, live: Arc<LiveConn>) -> Self {
        PyTableUpsert { table: ManuallyDrop::new(table), live, targets: Targets::All }
    }
    fn with(&self, targets: Targets) -> PyResult<Self> {
        let t = self.table.new_upsert().py_err()?;
        match &targets {
            Targets::All => {}
            Targets::Names(n) => drop(t.partial_update_by_name(n).py_err()?),
            Targets::Indexes(i) => drop(t.partial_update_by_index(i).py_err()?),
        }
        Ok(PyTableUpsert { table: ManuallyDrop::new((*self.table).clone()), live: self.live.clone(), targets })
    }
}

impl Drop for PyTableUpsert {
    fn drop(&mut self) {
        // SAFETY: dropped once, here.
        drop_core(unsafe { ManuallyDrop::take(&mut self.table) }, self.live.gen);
    }
}

entry_points! {
impl PyTableUpsert {
    /// Write only these columns (they must include the primary key).
    fn partial_update_by_name(&self, names: Vec<crate::convert::ColumnName>) -> PyResult<Self> {
        self.with(Targets::Names(names.into_iter().map(|n| n.0).collect()))
    }
    /// Write only the columns at these indexes.
    fn partial_update_by_index(&self, indexes: Vec<usize>) -> PyResult<Self> {
        self.with(Targets::Indexes(indexes))
    }
    /// A new writer; options as for `TableAppend.create_writer`.
    #[pyo3(signature = (max_pending_callbacks=None, executor=None, on_callback_error=None))]
    fn create_writer(
        &self,
        py: Python<'_>,
        max_pending_callbacks: Option<&Bound<'_, PyAny>>,
        executor: Option<&Bound<'_, PyAny>>,
        on_callback_error: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyUpsertWriter> {
        check_fork(self.live.gen).py_err()?;
        let (opts, _) = writer_options(py, max_pending_callbacks, executor, on_callback_error)?;
        let table = &*self.table;
        let targets = &self.targets;
        let w = blocking(py, || {
            let u = table.new_upsert()?;
            let u = match targets {
                Targets::All => u,
                Targets::Names(n) => u.partial_update_by_name(n)?,
                Targets::Indexes(i) => u.partial_update_by_index(i)?,
            };
            u.create_writer(opts)
        })
        .py_err()?;
        Ok(PyUpsertWriter {
            schema: Arc::new(self.table.info().schema().clone()),
            w: ManuallyDrop::new(w),
            live: self.live.clone(),
            shared: SharedSlot::default(),
        })
    }
}
}

/// The core's `WriterStats` as a dict, field for field (the latency snapshot flattened as in
/// C++: `ack_to_callback_count`, `..._p50_nanos`, `..._p99_nanos`, `..._max_nanos`).
pub(crate) fn stats_dict<'py>(py: Python<'py>, s: WriterStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, value) in s.fields() {
        d.set_item(name, value)?;
    }
    Ok(d)
}

/// An Arrow PyCapsule exporter (`__arrow_c_array__` or `__arrow_c_stream__`), else a TypeError.
fn arrow_input(obj: &Bound<'_, PyAny>) -> PyResult<AnyRecordBatch> {
    if !(obj.hasattr("__arrow_c_array__")? || obj.hasattr("__arrow_c_stream__")?) {
        return Err(crate::error::wrong_type(format!(
            "expected an Arrow object (__arrow_c_array__ or __arrow_c_stream__: pyarrow, polars, nanoarrow...), not {}",
            obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        )));
    }
    obj.extract()
}

/// Read every batch of an Arrow input into one RecordBatch.
fn one_batch(data: AnyRecordBatch) -> PyResult<RecordBatch> {
    let reader = data.into_reader()?;
    let schema = reader.schema();
    let batches = reader.collect::<Result<Vec<_>, _>>().map_err(|e| invalid_row(format!("reading the Arrow input: {e}")))?;
    fluss_writer::concat_arrow_batches(&schema, batches).map_err(crate::error::to_py)
}

fn all_batches(data: AnyRecordBatch) -> PyResult<Vec<RecordBatch>> {
    let reader = data.into_reader()?;
    reader
        .filter(|b| b.as_ref().map_or(true, |b| b.num_rows() > 0))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid_row(format!("reading the Arrow input: {e}")))
}

macro_rules! writer_common {
    ($ty:ident) => {
        impl Drop for $ty {
            fn drop(&mut self) {
                // SAFETY: dropped once, here. The core's drop closes the writer (draining it)
                // and must not hold the GIL meanwhile.
                drop_core(unsafe { ManuallyDrop::take(&mut self.w) }, self.live.gen);
            }
        }

        impl $ty {
            fn check(&self) -> PyResult<()> {
                check_fork(self.live.gen).py_err()
            }
        }
    };
}

macro_rules! pymethods_with_common {
    ($ty:ident { $($body:tt)* }) => {
        $crate::entry::entry_points! {
        impl $ty {
        $($body)*
        /// Block (without the GIL) until every operation accepted before this call has completed
        /// and its callback has returned. Raises CalledFromCallbackError inside a callback and
        /// TimeoutError (fluss_writer's) after `timeout` seconds.
        #[pyo3(signature = (timeout=None))]
        fn flush(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<()> {
            self.check()?;
            let t = self::timeout(timeout)?;
            let w = &*self.w;
            interruptible(py, || w.flush(t))
        }

        /// `await writer.flush_async()`: flush on the loop's default executor.
        #[pyo3(signature = (timeout=None))]
        fn flush_async<'py>(slf: &Bound<'py, Self>, timeout: Option<f64>) -> PyResult<Bound<'py, PyAny>> {
            let py = slf.py();
            let lp = py.import("asyncio")?.call_method0("get_running_loop")?;
            lp.call_method1("run_in_executor", (py.None(), slf.getattr("flush")?, timeout))
        }

        /// Stop accepting, flush, and wait up to `timeout` seconds (None: no bound); at the
        /// timeout pending operations complete with WRITER_CLOSED and this raises.
        #[pyo3(signature = (timeout=None))]
        fn close(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<()> {
            self.check()?;
            let t = self::timeout(timeout)?;
            let w = &*self.w;
            interruptible(py, || w.close(t))
        }

        /// `await writer.close_async()`.
        #[pyo3(signature = (timeout=None))]
        fn close_async<'py>(slf: &Bound<'py, Self>, timeout: Option<f64>) -> PyResult<Bound<'py, PyAny>> {
            let py = slf.py();
            let lp = py.import("asyncio")?.call_method0("get_running_loop")?;
            lp.call_method1("run_in_executor", (py.None(), slf.getattr("close")?, timeout))
        }

        #[getter]
        fn closed(&self) -> bool {
            self.w.is_closed()
        }

        /// Counters, gauges and latency percentiles (the core's WriterStats, field for field;
        /// ``fluss_writer.metrics.METRICS`` describes each).
        fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
            stats_dict(py, self.w.stats())
        }

        /// Records that failed for good and attempts that were retried, per error code: a list
        /// of dicts with ``code``, ``name``, ``records_failed`` and ``retries``.
        fn error_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
            crate::metrics::code_counts(py, &self.w.error_counts())
        }

        /// What each bucket (of each open partition) sent, failed and retried: a list of dicts
        /// with ``partition`` (None for a table without partitions), ``bucket``,
        /// ``records_sent``, ``bytes_sent``, ``batches_sent``, ``records_failed`` and ``retries``;
        /// buckets with nothing yet are left out.
        fn bucket_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
            crate::metrics::bucket_counts(py, &self.w.bucket_counts())
        }

        #[getter]
        fn table(&self) -> String {
            self.w.table().path().to_string()
        }

        fn __enter__(slf: Py<Self>) -> Py<Self> {
            slf
        }

        #[pyo3(signature = (*_args))]
        fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
            self.close(py, None)?;
            Ok(false)
        }

        fn __aenter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
            let py = slf.py();
            let lp = py.import("asyncio")?.call_method0("get_running_loop")?;
            let fut = lp.call_method0("create_future")?;
            fut.call_method1("set_result", (slf,))?;
            Ok(fut)
        }

        #[pyo3(signature = (*_args))]
        fn __aexit__<'py>(slf: &Bound<'py, Self>, _args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
            Self::close_async(slf, None)
        }
        }
        }
    };
}

/// Appends rows and Arrow batches to a log table. Thread-safe.
#[pyclass(name = "AppendWriter", module = "fluss_writer", frozen, weakref)]
pub struct PyAppendWriter {
    w: ManuallyDrop<AppendWriter>,
    schema: Arc<Schema>,
    live: Arc<LiveConn>,
    shared: SharedSlot,
}

writer_common!(PyAppendWriter);

pymethods_with_common!(PyAppendWriter {
    /// Append one row (dict by column name, or list/tuple in column order). With `callback`,
    /// it is called once with a WriteCompletion and None is returned; without, a WriteResult.
    #[pyo3(signature = (row, callback=None))]
    pub(crate) fn append(&self, py: Python<'_>, row: &Bound<'_, PyAny>, callback: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Py<PyWriteResult>>> {
        self.check()?;
        let values = row_from_py(&self.schema, row).inspect_err(|_| self.w.record_rejected(INVALID_ROW))?;
        let w = &*self.w;
        match has_cb(callback) {
            Some(cb) => {
                let f = self.shared.get(cb)?;
                interruptible(py, || w.append_with_shared_callback(&values, &f))?;
                Ok(None)
            }
            None => {
                let r = interruptible(py, || w.append(&values))?;
                Ok(Some(PyWriteResult::create(py, r, self.live.gen)?))
            }
        }
    }

    /// Append one row without any notification (`flush` still covers it).
    pub(crate) fn append_detached(&self, py: Python<'_>, row: &Bound<'_, PyAny>) -> PyResult<()> {
        self.check()?;
        let values = row_from_py(&self.schema, row).inspect_err(|_| self.w.record_rejected(INVALID_ROW))?;
        let w = &*self.w;
        interruptible(py, || w.append_detached(&values))
    }

    /// Append an Arrow batch (any `__arrow_c_array__` or `__arrow_c_stream__` object: pyarrow,
    /// polars, nanoarrow...) as ONE operation: admitted as a whole, one completion with
    /// `bucket_results` per bucket.
    #[pyo3(signature = (batch, callback=None))]
    fn write_arrow_batch(&self, py: Python<'_>, batch: &Bound<'_, PyAny>, callback: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Py<PyWriteResult>>> {
        self.check()?;
        let rb = one_batch(arrow_input(batch)?)?;
        self.write_batch(py, rb, callback)
    }

    /// `write_arrow_batch` without any notification (`flush` still covers it).
    fn write_arrow_batch_detached(&self, py: Python<'_>, batch: &Bound<'_, PyAny>) -> PyResult<()> {
        self.check()?;
        let rb = one_batch(arrow_input(batch)?)?;
        let w = &*self.w;
        interruptible(py, || w.write_arrow_batch_detached(&rb))
    }

    /// Write every record batch of an Arrow stream (pyarrow Table, polars DataFrame, ...), one
    /// operation per batch. With `callback`, it is called once per batch and None is returned;
    /// without, the list of WriteResults. A synchronous error leaves earlier batches accepted.
    #[pyo3(signature = (table, callback=None))]
    fn write_arrow(&self, py: Python<'_>, table: &Bound<'_, PyAny>, callback: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<Py<PyWriteResult>>>> {
        self.check()?;
        let batches = all_batches(arrow_input(table)?)?;
        self.write_all(py, batches, callback)
    }

    /// Write a pandas DataFrame (converted with pyarrow: the columns the table has to their
    /// Arrow types; a column the table lacks is passed on, and rejected by the core as
    /// INVALID_ROW naming it).
    #[pyo3(signature = (df, callback=None))]
    fn write_pandas(&self, py: Python<'_>, df: &Bound<'_, PyAny>, callback: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<Py<PyWriteResult>>>> {
        self.check()?;
        let schema = pyo3_arrow::PySchema::new(self.schema.to_arrow());
        let tbl = py.import("fluss_writer._pandas")?.call_method1("to_arrow", (df, schema))?;
        let data: AnyRecordBatch = tbl.extract()?;
        let batches = all_batches(data)?;
        self.write_all(py, batches, callback)
    }

});

impl PyAppendWriter {
    fn write_batch(&self, py: Python<'_>, rb: RecordBatch, callback: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Py<PyWriteResult>>> {
        let w = &*self.w;
        match has_cb(callback) {
            Some(cb) => {
                let f = python_callback(cb)?;
                interruptible(py, || w.write_arrow_batch_with_callback(&rb, f))?;
                Ok(None)
            }
            None => Ok(Some(PyWriteResult::create(py, interruptible(py, || w.write_arrow_batch(&rb))?, self.live.gen)?)),
        }
    }

    fn write_all(
        &self,
        py: Python<'_>,
        batches: Vec<RecordBatch>,
        callback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Vec<Py<PyWriteResult>>>> {
        if batches.is_empty() {
            return Err(invalid_row("the Arrow input has no rows"));
        }
        let mut results = Vec::new();
        for rb in batches {
            if let Some(r) = self.write_batch(py, rb, callback)? {
                results.push(r);
            }
        }
        Ok(if has_cb(callback).is_some() { None } else { Some(results) })
    }
}

/// Upserts and deletes rows of a primary-key table. Thread-safe.
#[pyclass(name = "UpsertWriter", module = "fluss_writer", frozen, weakref)]
pub struct PyUpsertWriter {
    w: ManuallyDrop<UpsertWriter>,
    schema: Arc<Schema>,
    live: Arc<LiveConn>,
    shared: SharedSlot,
}

writer_common!(PyUpsertWriter);

pymethods_with_common!(PyUpsertWriter {
    /// Insert or update one row (dict or list/tuple). For a partial-update writer only the
    /// target columns and the key are written. Callback/return value as for `append`.
    #[pyo3(signature = (row, callback=None))]
    pub(crate) fn upsert(&self, py: Python<'_>, row: &Bound<'_, PyAny>, callback: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Py<PyWriteResult>>> {
        self.check()?;
        let values = row_from_py(&self.schema, row).inspect_err(|_| self.w.record_rejected(INVALID_ROW))?;
        let w = &*self.w;
        match has_cb(callback) {
            Some(cb) => {
                let f = self.shared.get(cb)?;
                interruptible(py, || w.upsert_with_shared_callback(&values, &f))?;
                Ok(None)
            }
            None => Ok(Some(PyWriteResult::create(py, interruptible(py, || w.upsert(&values))?, self.live.gen)?)),
        }
    }

    /// Delete by primary key: a dict with the key columns, or a list/tuple of the key values
    /// in primary-key order.
    #[pyo3(signature = (key, callback=None))]
    pub(crate) fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>, callback: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Py<PyWriteResult>>> {
        self.check()?;
        let values = key_from_py(&self.schema, key).inspect_err(|_| self.w.record_rejected(INVALID_ROW))?;
        let w = &*self.w;
        match has_cb(callback) {
            Some(cb) => {
                let f = self.shared.get(cb)?;
                interruptible(py, || w.delete_with_shared_callback(&values, &f))?;
                Ok(None)
            }
            None => Ok(Some(PyWriteResult::create(py, interruptible(py, || w.delete(&values))?, self.live.gen)?)),
        }
    }

    /// `upsert` without any notification (`flush` still covers it).
    pub(crate) fn upsert_detached(&self, py: Python<'_>, row: &Bound<'_, PyAny>) -> PyResult<()> {
        self.check()?;
        let values = row_from_py(&self.schema, row).inspect_err(|_| self.w.record_rejected(INVALID_ROW))?;
        let w = &*self.w;
        interruptible(py, || w.upsert_detached(&values))
    }

    /// `delete` without any notification (`flush` still covers it).
    pub(crate) fn delete_detached(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.check()?;
        let values = key_from_py(&self.schema, key).inspect_err(|_| self.w.record_rejected(INVALID_ROW))?;
        let w = &*self.w;
        interruptible(py, || w.delete_detached(&values))
    }

});
