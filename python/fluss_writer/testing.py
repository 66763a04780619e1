"""Testing helpers: the embedded engine's read-back and fault injection, dispatch counters.

``engine(conn)`` returns the ``EmbeddedEngine`` of a connection opened with ``"embedded"`` or
``"embedded:<dir>"``: ``inject_error``, ``inject_delay``, ``inject_drop_connection``,
``clear_faults``, ``pending_faults``, ``scan``, ``lookup``, ``high_watermark``, ``partition_names``,
``stats`` (``partition=<name>`` addresses a bucket of a partitioned table's partition).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

from . import _native
from ._native import EmbeddedEngine

__all__ = [
    "EmbeddedEngine",
    "bench_dispatch",
    "dispatch_stats",
    "engine",
    "flush_logs",
    "panic_in_method",
    "panic_now",
    "panic_on_next_write",
]


def engine(conn: _native.Connection) -> EmbeddedEngine:
    """The embedded engine behind ``conn`` (raises UnsupportedError for a cluster)."""
    return conn._engine()


def dispatch_stats(conn: _native.Connection) -> Dict[str, int]:
    """Counters of the connection's callback worker: ``gil_acquisitions`` (one per group of
    jobs), ``groups``, ``jobs_run`` (one job per completed batch), ``callbacks_run``,
    ``queued_jobs``, the acknowledgement-to-callback latency of its batches
    (``ack_to_callback_count``, ``..._p50_nanos``, ``..._p99_nanos``, ``..._max_nanos``), and the
    process-wide ``resolve_hops`` (``call_soon_threadsafe`` calls that
    resolved awaitables) and ``executor_hops`` (jobs handed to user executors)."""
    return dict(conn._dispatch_stats())


def flush_logs() -> None:
    """Emit the queued Rust log records to ``logging`` now."""
    _native._flush_logs()


def bench_dispatch(callback: Callable[[Any], Any], n: int, per_job: int = 1000) -> Tuple[float, int, int]:
    """Dispatch ``n`` calls of ``callback(completion)`` in jobs of ``per_job`` through a worker
    with the binding's hooks; returns ``(seconds, gil_acquisitions, groups)``."""
    return _native.bench_dispatch(callback, n, per_job)


def panic_now(message: str = "forced panic") -> None:
    """Force a Rust panic inside a module-level entry point. It raises ``InternalError`` (a
    ``FlussWriterError``), as any panic that reaches a Python call does."""
    _native._panic_for_test(message)


def panic_in_method(conn: _native.Connection, message: str = "forced panic") -> None:
    """Force a Rust panic inside a method of ``conn`` (raises ``InternalError``); the
    connection stays usable."""
    conn._panic_for_test(message)


def panic_on_next_write() -> None:
    """Make the next ``append``/``upsert``/``delete`` (any writer, any thread) panic while
    converting its row: it raises ``InternalError`` and accepts nothing."""
    _native._panic_on_next_write()
