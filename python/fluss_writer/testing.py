"""Testing helpers for your own tests: the embedded engine's read-back and fault injection, and
dispatch counters. A documented part of the API, in every build (the released wheel included).

``engine(conn)`` returns the ``EmbeddedEngine`` of a connection opened with ``"embedded"`` or
``"embedded:<dir>"``: ``inject_error``, ``inject_delay``, ``inject_drop_connection``,
``inject_coordinator_error``, ``clear_faults``, ``pending_faults``, ``pending_coordinator_faults``,
``scan``, ``lookup``, ``high_watermark``, ``partition_names``, ``stats`` (``partition=<name>``
addresses a bucket of a partitioned table's partition).

Builds of the binding for fluss-writer's own benchmarks and tests also define ``bench_dispatch``
(cargo feature ``bench``) and ``panic_now``, ``panic_in_method``, ``panic_on_next_write``
(cargo feature ``test-hooks``). The released wheel has neither feature, so neither these names
nor the native hooks behind them exist there (tests-py/test_release_surface.py checks it).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple, cast

from . import _native
from ._native import EmbeddedEngine

__all__: List[str] = [
    "EmbeddedEngine",
    "dispatch_stats",
    "engine",
    "flush_logs",
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


# ----- hooks of builds for fluss-writer's own benchmarks and tests (not in the released wheel) -----

#: The native module, untyped: its stub declares only what every build has.
_hooks: Any = _native

if hasattr(_hooks, "bench_dispatch"):  # cargo feature `bench` (bench/python/run.sh)

    def bench_dispatch(callback: Callable[[Any], Any], n: int, per_job: int = 1000) -> Tuple[float, int, int]:
        """Dispatch ``n`` calls of ``callback(completion)`` in jobs of ``per_job`` through a worker
        with the binding's hooks; returns ``(seconds, gil_acquisitions, groups)``."""
        return _hooks.bench_dispatch(callback, n, per_job)

    __all__.append("bench_dispatch")

if hasattr(_hooks, "_panic_for_test"):  # cargo feature `test-hooks` (tests-py/run.sh, step "test hooks")

    def panic_now(message: str = "forced panic") -> None:
        """Force a Rust panic inside a module-level entry point. It raises ``InternalError`` (a
        ``FlussWriterError``), as any panic that reaches a Python call does."""
        _hooks._panic_for_test(message)

    def panic_in_method(conn: _native.Connection, message: str = "forced panic") -> None:
        """Force a Rust panic inside a method of ``conn`` (raises ``InternalError``); the
        connection stays usable."""
        cast(Any, conn)._panic_for_test(message)

    def panic_on_next_write() -> None:
        """Make the next ``append``/``upsert``/``delete`` (any writer, any thread) panic while
        converting its row: it raises ``InternalError`` and accepts nothing."""
        _hooks._panic_on_next_write()

    __all__ += ["panic_in_method", "panic_now", "panic_on_next_write"]
