//! The embedded engine's testing API (read-back and fault injection), exposed through
//! `fluss_writer.testing`: a documented product feature for users' own tests, part of every
//! build (the benchmark and test hooks are elsewhere: `bench`, `test_hooks`).

use std::sync::Arc;

use fluss_writer::embedded::{EmbeddedEngine, Fault};
use fluss_writer::TablePath;
use pyo3::prelude::*;

use crate::entry::entry_points;
use pyo3::types::{PyDict, PyTuple};

use crate::connection::table_path;
use crate::convert::{from_value, key_from_py, Name};
use crate::error::IntoPyResult;
use crate::gil::{blocking, check_fork, LiveConn};

/// Read-back and fault injection on the embedded engine of a connection.
#[pyclass(name = "EmbeddedEngine", module = "fluss_writer.testing", frozen)]
pub struct PyEmbeddedEngine {
    pub engine: Arc<EmbeddedEngine>,
    pub live: Arc<LiveConn>,
}

impl PyEmbeddedEngine {
    fn path(&self, t: &Bound<'_, PyAny>) -> PyResult<TablePath> {
        check_fork(self.live.gen).py_err()?;
        table_path(t)
    }
}

/// A `partition=` argument as the engine takes it.
fn part(p: &Option<Name>) -> Option<&str> {
    p.as_ref().map(|p| p.0.as_str())
}

entry_points! {
impl PyEmbeddedEngine {
    /// Answer the next `times` requests carrying `bucket` of `table` (of its partition named
    /// `partition`, for a partitioned table) with error `code`.
    #[pyo3(signature = (table, bucket, code, message="injected fault".to_string(), times=1, partition=None))]
    fn inject_error(
        &self,
        table: &Bound<'_, PyAny>,
        bucket: i32,
        code: i32,
        message: String,
        times: u32,
        partition: Option<Name>,
    ) -> PyResult<()> {
        self.engine.faults().inject_at(&self.path(table)?, part(&partition), bucket, Fault::Error { code, message, times });
        Ok(())
    }
    /// Delay the responses of the next `times` requests carrying `bucket` by `seconds`.
    #[pyo3(signature = (table, bucket, seconds, times=1, partition=None))]
    fn inject_delay(&self, table: &Bound<'_, PyAny>, bucket: i32, seconds: f64, times: u32, partition: Option<Name>) -> PyResult<()> {
        // The core's timeout rule: NaN or negative is a ValueError; +inf or beyond what a
        // deadline holds is the longest bounded delay.
        let delay = fluss_writer::timeouts::from_secs_f64(seconds)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.message().to_string()))?
            .unwrap_or(fluss_writer::timeouts::MAX_BOUNDED);
        self.engine.faults().inject_at(&self.path(table)?, part(&partition), bucket, Fault::Delay { delay, times });
        Ok(())
    }
    /// Fail the next `times` requests carrying `bucket` as a lost connection would
    /// (`after_apply`: after applying their writes).
    #[pyo3(signature = (table, bucket, after_apply=false, times=1, partition=None))]
    fn inject_drop_connection(
        &self,
        table: &Bound<'_, PyAny>,
        bucket: i32,
        after_apply: bool,
        times: u32,
        partition: Option<Name>,
    ) -> PyResult<()> {
        self.engine.faults().inject_at(&self.path(table)?, part(&partition), bucket, Fault::DropConnection { after_apply, times });
        Ok(())
    }
    /// Answer the next `times` requests addressed to the coordinator (DDL, the CreatePartition of
    /// create-on-write) with error `code`, before processing them: NOT_COORDINATOR_LEADER (65)
    /// is what a standby coordinator of a Fluss 1.0 cluster answers.
    #[pyo3(signature = (code, message="injected fault".to_string(), times=1))]
    fn inject_coordinator_error(&self, code: i32, message: String, times: u32) {
        self.engine.faults().inject_coordinator(Fault::Error { code, message, times });
    }
    /// How many more coordinator requests the injected coordinator faults will hit.
    fn pending_coordinator_faults(&self) -> usize {
        self.engine.faults().pending_coordinator()
    }
    fn clear_faults(&self) {
        self.engine.faults().clear();
    }
    #[pyo3(signature = (table, bucket, partition=None))]
    fn pending_faults(&self, table: &Bound<'_, PyAny>, bucket: i32, partition: Option<Name>) -> PyResult<usize> {
        Ok(self.engine.faults().pending_at(&self.path(table)?, part(&partition), bucket))
    }
    /// Rows of a bucket (of the partition named `partition`, for a partitioned table) from
    /// `from_offset`: `(offset, change_type, row_tuple)`.
    #[pyo3(signature = (table, bucket, from_offset=0, partition=None))]
    fn scan<'py>(
        &self,
        py: Python<'py>,
        table: &Bound<'_, PyAny>,
        bucket: i32,
        from_offset: i64,
        partition: Option<Name>,
    ) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let p = self.path(table)?;
        let e = &self.engine;
        let rows = blocking(py, || e.scan_partition(&p, part(&partition), bucket, from_offset)).py_err()?;
        rows.iter()
            .map(|r| {
                let vals = r.row.iter().map(|v| from_value(py, v)).collect::<PyResult<Vec<_>>>()?;
                PyTuple::new(
                    py,
                    [
                        r.offset.into_pyobject(py)?.into_any(),
                        r.change_type.short_string().into_pyobject(py)?.into_any(),
                        PyTuple::new(py, vals)?.into_any(),
                    ],
                )
            })
            .collect()
    }
    /// The current row of a primary key (dict or list/tuple of key values), or None.
    fn lookup<'py>(&self, py: Python<'py>, table: &Bound<'_, PyAny>, key: &Bound<'_, PyAny>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let p = self.path(table)?;
        let info = self.engine.table_info(&p).py_err()?;
        let k = key_from_py(info.schema(), key)?;
        let e = &self.engine;
        match blocking(py, || e.lookup(&p, &k)).py_err()? {
            None => Ok(None),
            Some(row) => Ok(Some(PyTuple::new(py, row.iter().map(|v| from_value(py, v)).collect::<PyResult<Vec<_>>>()?)?)),
        }
    }
    #[pyo3(signature = (table, bucket, partition=None))]
    fn high_watermark(&self, table: &Bound<'_, PyAny>, bucket: i32, partition: Option<Name>) -> PyResult<i64> {
        self.engine.high_watermark_partition(&self.path(table)?, part(&partition), bucket).py_err()
    }
    /// The names of the table's partitions, in name order.
    fn partition_names(&self, table: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        self.engine.partition_names(&self.path(table)?).py_err()
    }
    /// batches_accepted, records_accepted, duplicates_dropped, batches_rejected.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.engine.stats();
        let d = PyDict::new(py);
        d.set_item("batches_accepted", s.batches_accepted)?;
        d.set_item("records_accepted", s.records_accepted)?;
        d.set_item("duplicates_dropped", s.duplicates_dropped)?;
        d.set_item("batches_rejected", s.batches_rejected)?;
        Ok(d)
    }
}
}
