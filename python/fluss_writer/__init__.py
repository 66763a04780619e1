"""fluss_writer: a write SDK for Apache Fluss with completion callbacks.

Every accepted write is reported exactly once, to a callback (``callback=``) or a
``WriteResult`` (``wait()``, ``await``, ``add_callback``), when it is durable or failed.

The callback contract: a callback runs exactly once, with a ``WriteCompletion``, on the
writer's executor (by default the connection's single FIFO worker thread), never on the
submitting thread; callbacks of one bucket run in submission order, and with the default
executor all callbacks of a connection run one at a time in completion order. ``flush``,
``close`` and ``WriteResult.wait`` called inside a callback raise ``CalledFromCallbackError``
at once; a submission inside a callback never blocks. A callback that raises is reported to
``on_callback_error(exception, operation)`` (default: the ``fluss_writer`` logger) and stops
nothing else. The worker takes the GIL once per group of completed batches, never per
callback; every blocking call releases the GIL. Open connections and writers are drained at
interpreter exit, callbacks running for at most 5 s of that drain (later ones are abandoned, with
a warning); a daemon thread inside a fluss_writer call at exit stays blocked there until the
process exits. After ``fork()`` inherited connections raise ``ForkedProcessError``.

On the main thread, every blocking call (``flush``, ``close``, ``WriteResult.wait``,
``Connection.close``, a write waiting for capacity) runs the signal handlers at least every
100 ms: Ctrl-C raises ``KeyboardInterrupt`` (and an exception raised by any signal handler is
raised) promptly. An interrupted write accepted nothing; an interrupted flush or wait leaves
every pending operation to complete exactly once; an interrupted close ends as a close at its
timeout does (operations still pending complete with ``WRITER_CLOSED``). A Rust panic, which
no input should cause, is raised as ``InternalError`` (a ``FlussWriterError``) and logged on the
``fluss_writer`` logger, never printed as a Rust backtrace.

A callback may keep its ``WriteCompletion``: a kept completion never changes. One it does not
keep may be reused, refilled, for a later callback (so do not rely on the identity of
completion objects). Passing the same callable to many writes (``callback=on_done``) is the
cheapest form: consecutive records share one registration; the writer keeps the callable only
while operations that use it are pending.
"""

from __future__ import annotations

import atexit
import os
from typing import TYPE_CHECKING

from . import _native, metrics
from ._error_codes import ErrorCode
from ._native import (
    CLIENT_CODES,
    SERVER_CODES,
    AclBinding,
    AclFilter,
    AclResource,
    Admin,
    AppendWriter,
    BucketResult,
    BufferExhaustedError,
    CallbackFailedError,
    CalledFromCallbackError,
    CapacityExhaustedError,
    Config,
    Connection,
    ConnectionClosedError,
    DeliveryTimeoutError,
    FlussWriterError,
    ForkedProcessError,
    InternalError,
    InvalidConfigError,
    InvalidRowError,
    InvalidRowTypeError,
    InvalidTableError,
    IoError,
    PartitionInfo,
    ProtocolError,
    RecordTooLargeError,
    Schema,
    SequenceResetError,
    ServerError,
    Table,
    TableAppend,
    TableDescriptor,
    TableInfo,
    TablePath,
    TableUpsert,
    TimeoutError,
    UnsupportedError,
    UpsertWriter,
    WaitInterruptedError,
    WriteCompletion,
    WriterClosedError,
    WriteResult,
    __version__,
    connect,
)
from ._readback import ScannedRow

if TYPE_CHECKING:
    from ._native import BucketCount, Callback, ErrorCount, Row, WriterStats
else:
    # The stub (_native.pyi) declares these for type checkers; at run time they are built here,
    # WriterStats and BucketCount from the core's own field lists, so that they can be used in
    # annotations evaluated at run time and in isinstance-free code alike.
    from typing import Any, Callable, Mapping, Optional, Sequence, TypedDict, Union

    #: A row for ``append``/``upsert``/``delete``: a mapping of column name to value, or a
    #: sequence of values in column order.
    Row = Union[Mapping[str, Any], Sequence[Any]]
    #: A completion callback: called exactly once with the operation's ``WriteCompletion``.
    Callback = Callable[[WriteCompletion], object]
    WriterStats = TypedDict("WriterStats", {m[0]: int for m in _native.METRICS})
    class ErrorCount(TypedDict):
        code: int
        name: str
        records_failed: int
        retries: int
        rejected: int

    BucketCount = TypedDict(
        "BucketCount", {"partition": Optional[str], "bucket": int, **{m[0]: int for m in _native.BUCKET_METRICS}}
    )

__all__ = [
    "CLIENT_CODES",
    "SERVER_CODES",
    "AclBinding",
    "AclFilter",
    "AclResource",
    "Admin",
    "AppendWriter",
    "BucketCount",
    "BucketResult",
    "BufferExhaustedError",
    "CalledFromCallbackError",
    "Callback",
    "CallbackFailedError",
    "CapacityExhaustedError",
    "Config",
    "Connection",
    "ConnectionClosedError",
    "DeliveryTimeoutError",
    "ErrorCode",
    "ErrorCount",
    "FlussWriterError",
    "ForkedProcessError",
    "InternalError",
    "InvalidConfigError",
    "InvalidRowError",
    "InvalidRowTypeError",
    "InvalidTableError",
    "IoError",
    "PartitionInfo",
    "ProtocolError",
    "RecordTooLargeError",
    "Row",
    "ScannedRow",
    "Schema",
    "SequenceResetError",
    "ServerError",
    "Table",
    "TableAppend",
    "TableDescriptor",
    "TableInfo",
    "TablePath",
    "TableUpsert",
    "TimeoutError",
    "UnsupportedError",
    "UpsertWriter",
    "WaitInterruptedError",
    "WriteCompletion",
    "WriteResult",
    "WriterClosedError",
    "WriterStats",
    "__version__",
    "connect",
    "metrics",
]

# Drain open connections (and their writers) before the interpreter finalizes.
atexit.register(_native._at_exit)
# A connection inherited through fork() refuses to work in the child instead of hanging.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_native._after_fork_in_child)
