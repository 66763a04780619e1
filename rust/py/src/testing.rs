//! The embedded engine's testing API (read-back and fault injection) and a dispatch
//! micro-benchmark, exposed through `fluss_writer.testing`.

use std::sync::Arc;
use std::time::Instant;

use fluss_writer::dispatch::{Deadline, Executor, Job, JobContext, Scope, ScopeOptions, SystemClock, TicketSet};
use fluss_writer::embedded::{EmbeddedEngine, Fault};
use fluss_writer::{TablePath, WriteCompletion};
use pyo3::prelude::*;

use crate::entry::entry_points;
use pyo3::types::{PyDict, PyTuple};

use crate::connection::table_path;
use crate::convert::{from_value, key_from_py, Name};
use crate::error::IntoPyResult;
use crate::gil::{blocking, check_fork, LiveConn, PyWorkerHooks};

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

entry_points! {
#[pyfunction]
/// Dispatch `n` calls of `callback(completion)` in jobs of `per_job` callbacks through a FIFO
/// worker with the binding's hooks (the path of real completions, without I/O). Returns
/// `(seconds, gil_acquisitions, groups)`; the clock runs from the first hand-off until the last
/// callback returned.
#[pyo3(signature = (callback, n, per_job=1000))]
pub fn bench_dispatch(py: Python<'_>, callback: Py<PyAny>, n: usize, per_job: usize) -> PyResult<(f64, u64, u64)> {
    let per_job = per_job.max(1);
    let hooks = Arc::new(PyWorkerHooks::default());
    let exec = Executor::fifo("fluss-writer-bench", Some(hooks.clone()));
    let scope = Scope::new(ScopeOptions { max_pending_callbacks: n as u64 + 1, error_handler: None }, exec, Arc::new(SystemClock::new()));
    let completion = WriteCompletion {
        error: None,
        table: Arc::new(TablePath::new("bench", "t").py_err()?),
        table_id: 0,
        partition: None,
        partition_id: None,
        bucket: 0,
        offset: 0,
        log_end_offset: -1,
        bucket_results: Vec::new(),
    };
    let mut jobs = Vec::new();
    let mut left = n;
    while left > 0 {
        let k = left.min(per_job);
        left -= k;
        let mut tickets = TicketSet::default();
        let mut cbs = Vec::with_capacity(k);
        for _ in 0..k {
            tickets.add(scope.admit(Deadline::never()).map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("admission failed"))?);
            cbs.push(callback.clone_ref(py));
        }
        let c = completion.clone();
        let body = move |ctx: &mut JobContext<'_>| {
            for cb in cbs {
                ctx.invoke(|| crate::callbacks::call_python(cb, &c), &|| "bench".to_string());
            }
        };
        jobs.push(Job::new(&scope, 0, tickets, 0, Box::new(body)));
    }
    let o = std::sync::atomic::Ordering::Relaxed;
    let before = (hooks.counters.acquisitions.load(o), hooks.counters.groups.load(o));
    let sc = scope.clone();
    let secs = blocking(py, move || {
        let t = Instant::now();
        for j in jobs {
            sc.dispatch(j);
        }
        let _ = sc.flush(Deadline::never());
        t.elapsed().as_secs_f64()
    });
    let after = (hooks.counters.acquisitions.load(o), hooks.counters.groups.load(o));
    blocking(py, move || drop(scope));
    Ok((secs, after.0 - before.0, after.1 - before.1))
}
}
