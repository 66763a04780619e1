//! The process's writer metrics for Python: `_native.metrics_snapshot()`, the metric table, and
//! per-code counts. `fluss_writer.metrics` builds the Prometheus collector on these.

use fluss_writer::metrics::{self, BucketCount, CodeCount, LatencyBucketsSnapshot, MetricKind};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::entry::entry_points;
use crate::writer::stats_dict;

/// Per-code counts as a list of dicts (`code`, `name`, `records_failed`, `retries`, `rejected`).
pub(crate) fn code_counts<'py>(py: Python<'py>, codes: &[CodeCount]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for c in codes {
        let d = PyDict::new(py);
        d.set_item("code", c.code)?;
        d.set_item("name", c.name)?;
        d.set_item("records_failed", c.records_failed)?;
        d.set_item("retries", c.retries)?;
        d.set_item("rejected", c.rejected)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Per-bucket counts as a list of dicts (`partition` (a name or None), `bucket`, then the
/// counters of `BUCKET_METRICS`).
pub(crate) fn bucket_counts<'py>(py: Python<'py>, buckets: &[BucketCount]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for b in buckets {
        let d = PyDict::new(py);
        d.set_item("partition", b.partition.as_deref())?;
        d.set_item("bucket", b.bucket)?;
        for (name, v) in b.fields() {
            d.set_item(name, v)?;
        }
        out.append(d)?;
    }
    Ok(out)
}

/// The per-bucket metric table: `(field, prometheus_name, help)`, the Prometheus name after
/// `fluss_writer_bucket_`.
pub(crate) fn bucket_metric_table(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for m in metrics::BUCKET_METRICS {
        out.append(m)?;
    }
    Ok(out)
}

/// The latency histograms of a report as a dict: name -> `{"bounds": [seconds], "counts":
/// [cumulative], "sum": seconds, "count": n}` (the core's JSON, as Python objects).
fn histograms<'py>(py: Python<'py>, hs: &[LatencyBucketsSnapshot]) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let bounds = metrics::latency_bounds_seconds();
    for ((name, _), h) in metrics::HISTOGRAMS.iter().zip(hs) {
        let d = PyDict::new(py);
        d.set_item("bounds", bounds.to_vec())?;
        d.set_item("counts", h.buckets.to_vec())?;
        d.set_item("sum", h.sum_nanos as f64 / 1e9)?;
        d.set_item("count", h.count)?;
        out.set_item(*name, d)?;
    }
    Ok(out)
}

/// The histogram table: `(name, help)` per latency histogram, the Prometheus name after
/// `fluss_writer_`.
pub(crate) fn histogram_table(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for h in metrics::HISTOGRAMS {
        out.append(h)?;
    }
    Ok(out)
}

/// The `le` label of each latency bucket bound, as the core writes it.
pub(crate) fn latency_bucket_le(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    PyList::new(py, metrics::latency_bucket_le())
}

/// The metric table: `(field, prometheus_name, kind, unit, help)` per stats field, in order;
/// `kind` is `"counter"`, `"gauge"` or `"quantile"` (not exported; `prometheus_name` is the
/// histogram exported in its place).
pub(crate) fn metric_table(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for m in metrics::METRICS {
        let kind = match m.kind {
            MetricKind::Counter => "counter",
            MetricKind::Quantile => "quantile",
            _ => "gauge",
        };
        out.append((m.field, m.prometheus, kind, m.unit, m.help))?;
    }
    Ok(out)
}

entry_points! {
#[pyfunction]
/// Every open writer of the process: a list of dicts with `client_id`, `table`, `writer`,
/// `stats` (the writer's `stats()` dict), `errors` (its `error_counts()`), `buckets` (its
/// `bucket_counts()`) and `histograms` (its latency histograms, by name).
pub(crate) fn metrics_snapshot(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let reports = py.detach(metrics::snapshot);
    let out = PyList::empty(py);
    for r in reports {
        let d = PyDict::new(py);
        d.set_item("client_id", &r.client_id)?;
        d.set_item("table", &r.table)?;
        d.set_item("writer", r.writer)?;
        d.set_item("stats", stats_dict(py, r.stats)?)?;
        d.set_item("errors", code_counts(py, &r.codes)?)?;
        d.set_item("buckets", bucket_counts(py, &r.buckets)?)?;
        d.set_item("histograms", histograms(py, &r.histograms)?)?;
        out.append(d)?;
    }
    Ok(out)
}
}

entry_points! {
#[pyfunction]
/// Every open writer of the process in the Prometheus text format (what
/// `fluss_writer.metrics.register` serves through `prometheus_client`, for a scrape without it).
pub(crate) fn metrics_prometheus_text(py: Python<'_>) -> PyResult<String> {
    Ok(py.detach(|| metrics::to_prometheus(&metrics::snapshot())))
}
}
