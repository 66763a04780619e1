"""Writer metrics of the whole process, for dashboards.

``snapshot()`` returns every open writer's ``stats()``, ``error_counts()``, ``bucket_counts()``
and latency histograms with the labels
``client_id`` (the connection's ``client.id``), ``table`` and ``writer`` (a number that tells
writers of one table apart). ``register(registry)`` adds a ``prometheus_client`` collector that
reports them on every scrape (``pip install fluss-writer[prometheus]``); ``prometheus_text()``
renders the same exposition without ``prometheus_client``. ``METRICS`` describes each stats
field: ``(field, prometheus_name, kind, unit, help)``; every Prometheus name is prefixed
``fluss_writer_``. ``BUCKET_METRICS`` describes the per-bucket counters of ``bucket_counts()``:
``(field, prometheus_name, help)``, scraped as ``fluss_writer_bucket_<name>`` with the labels
``partition`` (empty for a table without partitions) and ``bucket`` added. ``HISTOGRAMS``
describes the latency histograms of a snapshot's ``histograms``: ``(name, help)``, scraped as
Prometheus histograms ``fluss_writer_<name>`` (``_bucket`` with ``le`` in seconds, ``_sum`` in
seconds, ``_count``). Stats fields of kind ``"quantile"`` (p50, p99, max of a latency) are in
``stats()`` only; the histogram named by their ``prometheus_name`` is scraped instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, cast

from . import _native

if TYPE_CHECKING:
    from ._native import WriterMetrics

__all__ = ["METRICS", "BUCKET_METRICS", "HISTOGRAMS", "snapshot", "prometheus_text", "register", "FlussWriterCollector"]

METRICS = _native.METRICS
BUCKET_METRICS = _native.BUCKET_METRICS
HISTOGRAMS = _native.HISTOGRAMS

_LABELS = ["client_id", "table", "writer"]


def snapshot() -> List[WriterMetrics]:
    """Every open writer of the process, in creation order."""
    return _native.metrics_snapshot()


def prometheus_text() -> str:
    """Every open writer in the Prometheus text exposition format (version 0.0.4)."""
    return _native.metrics_prometheus_text()


class FlussWriterCollector:
    """A ``prometheus_client`` collector of every live writer of the process."""

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        writers = snapshot()
        for field, name, kind, unit, help_text in METRICS:
            text = f"{help_text} ({unit})"
            if kind == "quantile":
                # Scraped as the histogram `name` below.
                continue
            if kind == "counter":
                # prometheus_client adds the _total suffix itself.
                family: Any = CounterMetricFamily(f"fluss_writer_{name.removesuffix('_total')}", text, labels=_LABELS)
            else:
                family = GaugeMetricFamily(f"fluss_writer_{name}", text, labels=_LABELS)
            for w in writers:
                family.add_metric([w["client_id"], w["table"], str(w["writer"])], cast(Dict[str, int], w["stats"])[field])
            yield family
        for name, help_text in HISTOGRAMS:
            histogram = HistogramMetricFamily(f"fluss_writer_{name}", help_text, labels=_LABELS)
            for w in writers:
                h = w["histograms"][name]
                # The core's spelling of each bound, so that series of every binding sum by `le`.
                buckets = [(le, c) for le, c in zip(_native.LATENCY_BUCKET_LE, h["counts"])]
                buckets.append(("+Inf", h["count"]))
                histogram.add_metric([w["client_id"], w["table"], str(w["writer"])], buckets, sum_value=h["sum"])
            yield histogram
        for name, key, help_text in (
            ("records_failed_by_code", "records_failed", "Records whose batch failed for good, by error code."),
            ("retries_by_code", "retries", "Retried attempts, by the error code that caused them."),
            ("rejected_by_code", "rejected", "Write calls refused synchronously, by error code."),
        ):
            by_code = CounterMetricFamily(f"fluss_writer_{name}", help_text, labels=[*_LABELS, "code"])
            for w in writers:
                for c in w["errors"]:
                    n = cast(Dict[str, int], c)[key]
                    if n:
                        by_code.add_metric([w["client_id"], w["table"], str(w["writer"]), c["name"]], n)
            yield by_code
        for field, name, help_text in BUCKET_METRICS:
            per_bucket = CounterMetricFamily(
                f"fluss_writer_bucket_{name.removesuffix('_total')}", help_text, labels=[*_LABELS, "partition", "bucket"]
            )
            for w in writers:
                for b in w["buckets"]:
                    labels = [w["client_id"], w["table"], str(w["writer"]), b["partition"] or "", str(b["bucket"])]
                    per_bucket.add_metric(labels, cast(Dict[str, int], b)[field])
            yield per_bucket

    def describe(self) -> List[Any]:
        # No families at registration time: the set of writers changes, names do not.
        return []


def register(registry: Optional[Any] = None) -> FlussWriterCollector:
    """Registers a collector of every live writer with ``registry`` (default: the global
    ``prometheus_client.REGISTRY``) and returns it (``registry.unregister(c)`` removes it)."""
    if registry is None:
        from prometheus_client import REGISTRY

        registry = REGISTRY
    collector = FlussWriterCollector()
    registry.register(collector)
    return collector
