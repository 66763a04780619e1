//! The dispatch micro-benchmark (`fluss_writer.testing.bench_dispatch`), compiled only with the
//! cargo feature `bench` (bench/python/run.sh): never in a release build of the binding.

use std::sync::Arc;
use std::time::Instant;

use fluss_writer::dispatch::{Deadline, Executor, Job, JobContext, Scope, ScopeOptions, SystemClock, TicketSet};
use fluss_writer::{TablePath, WriteCompletion};
use pyo3::prelude::*;

use crate::entry::entry_points;
use crate::error::IntoPyResult;
use crate::gil::{blocking, PyWorkerHooks};

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
    let scope = Scope::new(ScopeOptions { max_pending_callbacks: n as u64 + 1, error_handler: None, slow_callback_threshold: None }, exec, Arc::new(SystemClock::new()));
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
