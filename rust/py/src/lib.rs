//! fluss-writer-py: the Python binding of fluss-writer, module `fluss_writer._native`.
//!
//! Thin by design: conversion of values, errors and callables only; every rule of the callback
//! contract (C1-C12, docs/callback-contract.md) lives in the Rust crates. Modules, in the order a write
//! meets them:
//!
//! * `connection`: `connect`, `Config`, `Connection`, `Admin`, `Table` and metadata classes.
//! * `partition`: `PartitionInfo` and partition specs (dicts) for the partition calls of `Admin`.
//! * `writer`: writer builders and writers; inputs converted under the GIL, core calls without.
//! * `convert`: Python values to core values by column type, and back; type names; Arrow schemas.
//! * `callbacks`: Python callables as callbacks, error handlers, `executor=` choices.
//! * `completion`: `WriteCompletion`, `WriteResult` (awaitable) and batched future resolution.
//! * `gil`: the one GIL wrapper, worker hooks (one thread state per worker, one attach per
//!   group), fork and interpreter-exit handling.
//! * `exceptions`, `error`: the exception hierarchy and the single conversion into it.
//! * `logging`: Rust logs to Python `logging`.
//! * `testing`: embedded-engine read-back and fault injection (`fluss_writer.testing`, part of
//!   every build: users' own tests use it).
//! * `bench` (cargo feature `bench`) and `test_hooks` (cargo feature `test-hooks`): the dispatch
//!   micro-benchmark and the forced panics, for our own benchmarks and tests only. Release builds
//!   (scripts/dist.sh) enable neither: the shipped module does not have them.

use pyo3::prelude::*;

mod acl;
#[cfg(feature = "bench")]
mod bench;
mod callbacks;
mod completion;
mod connection;
mod convert;
mod entry;
mod error;
mod exceptions;
mod fastcall;
mod gil;
mod logging;
mod metrics;
mod partition;
#[cfg(feature = "test-hooks")]
mod test_hooks;
mod testing;
mod writer;

#[pymodule(gil_used = true)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    entry::install_panic_hook();
    gil::init_main_thread(py)?;
    logging::init(py);
    exceptions::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(connection::connect, m)?)?;
    m.add_function(wrap_pyfunction!(gil::_at_exit, m)?)?;
    m.add_function(wrap_pyfunction!(gil::_after_fork_in_child, m)?)?;
    m.add_function(wrap_pyfunction!(logging::_flush_logs, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::metrics_snapshot, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::metrics_prometheus_text, m)?)?;
    m.add("METRICS", metrics::metric_table(m.py())?)?;
    m.add("BUCKET_METRICS", metrics::bucket_metric_table(m.py())?)?;
    m.add("HISTOGRAMS", metrics::histogram_table(m.py())?)?;
    m.add("LATENCY_BUCKET_LE", metrics::latency_bucket_le(m.py())?)?;
    #[cfg(feature = "bench")]
    m.add_function(wrap_pyfunction!(bench::bench_dispatch, m)?)?;
    // Plain attributes, not exports: `add_function` would list them in `__all__`, which the stub
    // (checked by stubtest against the release wheel, which lacks them) declares.
    #[cfg(feature = "test-hooks")]
    {
        m.setattr("_panic_for_test", wrap_pyfunction!(test_hooks::_panic_for_test, m)?)?;
        m.setattr("_panic_on_next_write", wrap_pyfunction!(test_hooks::_panic_on_next_write, m)?)?;
    }
    m.add_class::<connection::PyConfig>()?;
    m.add_class::<connection::PyConnection>()?;
    m.add_class::<connection::PyAdmin>()?;
    m.add_class::<connection::PyTable>()?;
    m.add_class::<connection::PyTablePath>()?;
    m.add_class::<acl::PyAclResource>()?;
    m.add_class::<acl::PyAclBinding>()?;
    m.add_class::<acl::PyAclFilter>()?;
    m.add_class::<connection::PySchema>()?;
    m.add_class::<connection::PyTableDescriptor>()?;
    m.add_class::<connection::PyTableInfo>()?;
    m.add_class::<partition::PyPartitionInfo>()?;
    m.add_class::<writer::PyTableAppend>()?;
    m.add_class::<writer::PyTableUpsert>()?;
    m.add_class::<writer::PyAppendWriter>()?;
    m.add_class::<writer::PyUpsertWriter>()?;
    m.add_class::<completion::PyWriteCompletion>()?;
    m.add_class::<completion::PyBucketResult>()?;
    m.add_class::<completion::PyWriteResult>()?;
    m.add_class::<callbacks::JobRunner>()?;
    m.add_class::<testing::PyEmbeddedEngine>()?;
    fastcall::install(m)?;
    Ok(())
}
