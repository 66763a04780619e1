"""Type stubs of the native module ``fluss_writer._native`` (mirrors rust/py/src).

The callback contract, for every ``callback=`` parameter below: the callback is called exactly
once with a ``WriteCompletion`` when the operation is durable or failed, on the writer's
executor (default: the connection's single FIFO worker thread), never on the submitting thread.
Callbacks of one bucket run in submission order; with the default executor, all callbacks of a
connection run one at a time in completion order. Inside a callback, ``flush``, ``close`` and
``WriteResult.wait`` raise ``CalledFromCallbackError`` at once, and a submission never blocks
(it raises ``CapacityExhaustedError``/``BufferExhaustedError`` where it would wait). A callback
that raises goes to ``on_callback_error(exception, operation)`` (default: logged on the
``fluss_writer`` logger) and stops nothing else. The callable and its captures are released
before the operation's ``max_pending_callbacks`` slot. A write that raises synchronously
accepted nothing and never calls its callback. Checked by golden scenarios and tests-py.
"""

from __future__ import annotations

import asyncio
import builtins
import concurrent.futures
from typing import (
    Any,
    Callable,
    Dict,
    Generator,
    List,
    Literal,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    TypedDict,
    Union,
    final,
    overload,
)

from ._readback import ScannedRow

class ArrowArrayExportable(Protocol):
    def __arrow_c_array__(self, requested_schema: object | None = None) -> Tuple[object, object]: ...

class ArrowStreamExportable(Protocol):
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...

class ArrowSchemaExportable(Protocol):
    def __arrow_c_schema__(self) -> object: ...

ArrowInput = Union[ArrowArrayExportable, ArrowStreamExportable]
Row = Union[Mapping[str, Any], Sequence[Any]]
Callback = Callable[[WriteCompletion], object]
ErrorHandler = Callable[[BaseException, str], object]
ExecutorArg = Union[None, int, concurrent.futures.Executor, asyncio.AbstractEventLoop]

__version__: str
__all__ = [
    "AclBinding",
    "AclFilter",
    "AclResource",
    "Admin",
    "AppendWriter",
    "BucketResult",
    "BufferExhaustedError",
    "CLIENT_CODES",
    "METRICS",
    "BUCKET_METRICS",
    "SERVER_CODES",
    "CallbackFailedError",
    "CalledFromCallbackError",
    "CapacityExhaustedError",
    "Config",
    "Connection",
    "ConnectionClosedError",
    "DeliveryTimeoutError",
    "EmbeddedEngine",
    "FlussWriterError",
    "ForkedProcessError",
    "InternalError",
    "InvalidConfigError",
    "InvalidRowError",
    "InvalidRowTypeError",
    "InvalidTableError",
    "IoError",
    "JobRunner",
    "PartitionInfo",
    "ProtocolError",
    "RecordTooLargeError",
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
    "__version__",
    "_after_fork_in_child",
    "_at_exit",
    "_flush_logs",
    "connect",
    "metrics_prometheus_text",
    "metrics_snapshot",
]
CLIENT_CODES: List[Tuple[str, int, bool, str]]
#: Fluss server codes that have a name: (name, code, retriable). A ServerError carries the code
#: as ``code`` and the name as ``code_name``; the partition codes are PARTITION_NOT_EXISTS (36),
#: TABLE_NOT_PARTITIONED_EXCEPTION (37), PARTITION_ALREADY_EXISTS (42),
#: PARTITION_SPEC_INVALID_EXCEPTION (43) and PARTITION_MAX_NUM_EXCEPTION (45).
SERVER_CODES: List[Tuple[str, int, bool]]

class WriterStats(TypedDict):
    """``AppendWriter.stats()`` / ``UpsertWriter.stats()``: the core's WriterStats, field for
    field (the same names as the C++ ``WriterStats``)."""

    pending_callbacks: int
    callbacks_run: int
    callback_errors: int
    jobs_dropped: int
    queued_jobs: int
    buffer_bytes_in_use: int
    ack_to_callback_count: int
    ack_to_callback_p50_nanos: int
    ack_to_callback_p99_nanos: int
    ack_to_callback_max_nanos: int
    open_partitions: int
    records_sent: int
    bytes_sent: int
    batches_sent: int
    records_failed: int
    operations_rejected: int
    requests_sent: int
    retries: int
    slow_callbacks: int
    oldest_pending_batch_age_nanos: int
    request_latency_count: int
    request_latency_p50_nanos: int
    request_latency_p99_nanos: int
    request_latency_max_nanos: int
    batch_records_p50: int
    batch_records_p99: int
    batch_bytes_p50: int
    batch_bytes_p99: int

class ErrorCount(TypedDict):
    """``error_counts()``: how often one error code ended batches or caused retries."""

    code: int
    name: str
    records_failed: int
    retries: int
    rejected: int

class BucketCount(TypedDict):
    """``bucket_counts()``: what one bucket (of one open partition) sent, failed and retried."""

    partition: Optional[str]
    bucket: int
    records_sent: int
    bytes_sent: int
    batches_sent: int
    records_failed: int
    retries: int

class WriterMetrics(TypedDict):
    """One live writer in ``metrics_snapshot()``."""

    client_id: str
    table: str
    writer: int
    stats: WriterStats
    errors: List[ErrorCount]
    buckets: List[BucketCount]

#: ``(field, prometheus_name, kind, unit, help)`` per ``WriterStats`` field, in order.
METRICS: List[Tuple[str, str, str, str, str]]
#: ``(field, prometheus_name, help)`` per ``BucketCount`` counter; the Prometheus name follows
#: ``fluss_writer_bucket_``.
BUCKET_METRICS: List[Tuple[str, str, str]]

def metrics_snapshot() -> List[WriterMetrics]: ...
def metrics_prometheus_text() -> str: ...

# ----- exceptions -----

class FlussWriterError(Exception):
    code: int
    code_name: str
    retriable: bool
    message: str

class ServerError(FlussWriterError): ...
class InvalidRowError(FlussWriterError, ValueError): ...
class InvalidRowTypeError(InvalidRowError, TypeError): ...
class RecordTooLargeError(FlussWriterError): ...
class CapacityExhaustedError(FlussWriterError): ...
class BufferExhaustedError(FlussWriterError): ...
class WriterClosedError(FlussWriterError): ...
class ConnectionClosedError(FlussWriterError): ...
class CalledFromCallbackError(FlussWriterError): ...
class DeliveryTimeoutError(FlussWriterError): ...
class InvalidConfigError(FlussWriterError): ...
class TimeoutError(FlussWriterError, builtins.TimeoutError): ...
class InvalidTableError(FlussWriterError): ...
class UnsupportedError(FlussWriterError): ...
class ProtocolError(FlussWriterError): ...
class IoError(FlussWriterError, OSError): ...
class ForkedProcessError(FlussWriterError): ...
class InternalError(FlussWriterError): ...
class CallbackFailedError(FlussWriterError): ...
class SequenceResetError(FlussWriterError): ...
class WaitInterruptedError(FlussWriterError): ...

# ----- connection -----

@final
class Config:
    def __new__(cls, properties: Optional[Mapping[str, object]] = None) -> Config: ...
    def to_dict(self) -> Dict[str, str]: ...

def connect(bootstrap: Optional[str] = None, config: Union[None, Mapping[str, object], Config] = None) -> Connection:
    """Open a connection: ``"embedded"``, ``"embedded:<dir>"`` or ``"host:port[,host:port]"``,
    given as ``bootstrap`` or as the ``bootstrap.servers`` key of ``config`` (one setting: both
    given and different is InvalidConfigError; neither means ``"embedded"``).

    ``config`` takes Fluss client keys (README "Configuration"). ``client.response-max-size``
    (default ``"100mb"``, 1kb to 2gb) bounds every response frame read from a server: a
    larger length prefix is never allocated; it closes that connection with a retriable
    ProtocolError and the affected requests are retried on a new one."""

@final
class Connection:
    @property
    def closed(self) -> bool: ...
    def admin(self) -> Admin: ...
    def get_table(self, path: Union[str, TablePath, Tuple[str, str]]) -> Table: ...
    def close(self, timeout: Optional[float] = None) -> None: ...
    def __enter__(self) -> Connection: ...
    def __exit__(self, *_args: object) -> bool: ...
    def _dispatch_stats(self) -> Dict[str, int]: ...
    def _engine(self) -> EmbeddedEngine: ...

PathArg = Union[str, TablePath, Tuple[str, str]]

@final
class Admin:
    def create_database(self, name: str, ignore_if_exists: bool = False) -> None: ...
    def drop_database(self, name: str, ignore_if_not_exists: bool = False, cascade: bool = False) -> None:
        """Drop a database. One that still has tables raises ServerError DATABASE_NOT_EMPTY (5)
        unless ``cascade``, which drops its tables and their data too (0.1 did that by
        default); a missing one raises DATABASE_NOT_EXIST (4) unless ``ignore_if_not_exists``."""
    def list_databases(self) -> List[str]: ...
    def database_exists(self, name: str) -> bool: ...
    def create_table(
        self, path: PathArg, descriptor: TableDescriptor, ignore_if_exists: bool = False
    ) -> None: ...
    def drop_table(self, path: PathArg, ignore_if_not_exists: bool = False) -> None: ...
    def list_tables(self, database: str) -> List[str]: ...
    def table_exists(self, path: PathArg) -> bool: ...
    def get_table_info(self, path: PathArg) -> TableInfo: ...
    def create_acls(self, acls: Sequence[AclBinding]) -> None:
        """Create every ACL (needs ALTER on the cluster, which super users have). When the
        server refuses one (AUTHORIZATION_EXCEPTION, 48), the ServerError names it and the ones
        it accepted stay. Servers learn of a new ACL asynchronously (within about 100 ms on the
        test cluster). The embedded engine has no authorizer: every ACL call raises ServerError
        with code 47 (SECURITY_DISABLED_EXCEPTION). GIL released."""
    def list_acls(self, filter: Optional[AclFilter] = None) -> List[AclBinding]:
        """The ACLs matching ``filter`` (every ACL when None)."""
    def drop_acls(self, filters: Sequence[AclFilter]) -> List[AclBinding]:
        """Drop every ACL matching one of ``filters``; return the ACLs dropped."""
    def create_partition(self, path: PathArg, spec: Dict[str, str], ignore_if_exists: bool = False) -> None:
        """Create the partition of a partitioned table whose partition-key values are ``spec``
        (``{"dt": "2026-12-03"}``: every partition key, values as Fluss names them, e.g. DATE
        ``yyyy-MM-dd``). A spec that does not fit the table's partition keys, or a value that
        cannot name a partition (1 to 200 of ``[A-Za-z0-9_-]``, not ``__``-prefixed), raises
        InvalidTableError naming the key, and nothing is created. ServerError codes:
        PARTITION_ALREADY_EXISTS (42; not with ``ignore_if_exists``),
        TABLE_NOT_PARTITIONED_EXCEPTION (37), PARTITION_MAX_NUM_EXCEPTION (45). GIL released."""
    def drop_partition(self, path: PathArg, spec: Dict[str, str], ignore_if_not_exists: bool = False) -> None:
        """Drop the partition named by ``spec`` with its rows. A missing partition raises
        ServerError PARTITION_NOT_EXISTS (36) unless ``ignore_if_not_exists``."""
    def alter_table(
        self,
        path: PathArg,
        add_columns: Optional[Union[ArrowSchemaExportable, Sequence[Union[Tuple[str, str], Tuple[str, str, bool]]]]] = None,
        drop_columns: Optional[Sequence[str]] = None,
        rename_columns: Optional[Sequence[Tuple[str, str]]] = None,
        ignore_if_not_exists: bool = False,
    ) -> None:
        """Change the table's schema. ``add_columns`` (as ``Schema`` takes columns) are added
        after the last column: the table gets the next schema id, rows written before read back
        with None in them. Fluss 0.9.1 adds nullable columns only and refuses dropping and
        renaming (its errors raise as ServerError); a column that exists is
        INVALID_ALTER_TABLE_EXCEPTION (56). Writers created before keep writing their schema;
        get the table again and create a writer to write the new columns."""
    def list_partitions(self, path: PathArg) -> List[PartitionInfo]:
        """The table's partitions; a table without partition keys raises ServerError
        TABLE_NOT_PARTITIONED_EXCEPTION (37)."""

@final
class PartitionInfo:
    """One partition of a partitioned table (``Admin.list_partitions``)."""
    @property
    def partition_id(self) -> int:
        """The server's id of the partition (a recreated partition gets a new id)."""
    @property
    def partition_name(self) -> str:
        """The partition's values joined by ``$`` in partition-key order: ``"2026-12-03"``,
        ``"eu$2026-12-03"``. ``WriteCompletion.partition`` and ``Table.scan(partition=)`` use it."""
    @property
    def spec(self) -> Dict[str, str]:
        """The partition's values by partition key."""
    def __eq__(self, value: object, /) -> bool: ...

# ----- access control lists -----

AclOperationName = Literal["ANY", "ALL", "READ", "WRITE", "CREATE", "DROP", "ALTER", "DESCRIBE"]
"""An ACL operation by its Fluss name; any case is accepted. ``"ANY"`` belongs in filters only;
``"ALL"`` allows every operation. Another name raises InvalidConfigError before any request."""

@final
class AclResource:
    """What an ACL is about: the cluster, a database or a table (the same resources as the Rust
    ``AclResource`` and the C++ ``AclResource``)."""
    @staticmethod
    def cluster() -> AclResource: ...
    @staticmethod
    def database(name: str) -> AclResource: ...
    @staticmethod
    def table(path: PathArg) -> AclResource: ...
    @property
    def type(self) -> Literal["CLUSTER", "DATABASE", "TABLE"]: ...
    @property
    def name(self) -> str:
        """The name the server stores: ``"fluss-cluster"``, the database, or ``"db.table"``."""
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class AclBinding:
    """One ACL: user ``principal`` may do ``operation`` on ``resource`` from ``host`` (``"*"``:
    any host). Fluss 0.9 has ALLOW ACLs only."""
    def __new__(
        cls,
        resource: AclResource,
        principal: str,
        operation: Union[AclOperationName, str],
        host: str = "*",
        principal_type: str = "User",
    ) -> AclBinding: ...
    @property
    def resource(self) -> AclResource: ...
    @property
    def principal(self) -> str: ...
    @property
    def principal_type(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def operation(self) -> AclOperationName:
        """Upper case, e.g. ``"WRITE"``."""
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class AclFilter:
    """Which ACLs ``list_acls`` and ``drop_acls`` act on: a field left None (operation None or
    ``"ANY"``) matches every ACL; set fields must all match. ``AclFilter()`` matches all."""
    def __new__(
        cls,
        resource: Optional[AclResource] = None,
        principal: Optional[str] = None,
        host: Optional[str] = None,
        operation: Union[AclOperationName, str, None] = None,
    ) -> AclFilter: ...
    @property
    def resource(self) -> Optional[AclResource]: ...
    @property
    def principal(self) -> Optional[str]: ...
    @property
    def host(self) -> Optional[str]: ...
    @property
    def operation(self) -> AclOperationName:
        """``"ANY"`` when not set."""

@final
class Table:
    @property
    def path(self) -> str: ...
    @property
    def info(self) -> TableInfo: ...
    def new_append(self) -> TableAppend: ...
    def new_upsert(self) -> TableUpsert: ...
    def scan(self, bucket: int, from_offset: int = 0, partition: Optional[str] = None) -> List[ScannedRow]:
        """Read ``bucket``'s log from ``from_offset`` to its high watermark through the Fluss
        protocol (log tables: the appended rows, ``"+A"``; primary-key tables: the changelog,
        ``"+I"``/``"-U"``/``"+U"``/``"-D"``). Each item is a ``ScannedRow(offset, change_type,
        row)`` named tuple, ``row`` a tuple in schema order; the same shape as
        ``fluss_writer.testing.engine(conn).scan``. Works on the embedded engine and on a
        cluster (transient errors retried for up to ``client.request-timeout``; GIL released).
        For verification and examples, not for streaming.

        ``partition``: the partition's name (``PartitionInfo.partition_name``,
        ``WriteCompletion.partition``), required for a partitioned table and refused for any
        other (InvalidTableError); a partition that does not exist raises ServerError
        PARTITION_NOT_EXISTS (36)."""
    def lookup(self, key: Row) -> Optional[Tuple[Any, ...]]:
        """The current row (a tuple in schema order) of a primary key, or None if absent.
        ``key``: the key values in primary-key order (list/tuple) or a dict by column name;
        for a partitioned table the whole primary key, partition columns included (they name
        the partition; a partition that does not exist holds no key).
        Raises UnsupportedError on a log table. Through the Fluss protocol (GIL released)."""

@final
class TablePath:
    def __new__(cls, database: str, table: str) -> TablePath: ...
    @property
    def database(self) -> str: ...
    @property
    def table(self) -> str: ...

@final
class Schema:
    def __new__(
        cls,
        columns: Union[ArrowSchemaExportable, Sequence[Union[Tuple[str, str], Tuple[str, str, bool]]]],
        primary_keys: Optional[Sequence[str]] = None,
    ) -> Schema: ...
    @property
    def columns(self) -> List[Tuple[str, str, bool]]: ...
    @property
    def column_names(self) -> List[str]: ...
    @property
    def primary_keys(self) -> List[str]: ...
    def to_arrow(self) -> ArrowSchemaExportable: ...

@final
class TableDescriptor:
    def __new__(
        cls,
        schema: Union[Schema, ArrowSchemaExportable, Sequence[Union[Tuple[str, str], Tuple[str, str, bool]]]],
        bucket_count: Optional[int] = None,
        primary_keys: Optional[Sequence[str]] = None,
        bucket_keys: Optional[Sequence[str]] = None,
        properties: Optional[Mapping[str, object]] = None,
        comment: Optional[str] = None,
        partition_keys: Optional[Sequence[str]] = None,
    ) -> TableDescriptor:
        """``partition_keys``: the partition columns (none: not partitioned). Each distinct
        combination of their values is a partition with its own ``bucket_count`` buckets,
        named by the values joined by ``$`` (README "Partitioned tables"). A primary-key
        table's primary key must contain them (and the bucket key defaults to the primary key
        without them); DECIMAL columns cannot be partition keys. ``properties`` may turn on
        auto-partitioning (``table.auto-partition.*``). Checked by the core at construction
        (InvalidTableError)."""
    @property
    def schema(self) -> Schema: ...
    @property
    def bucket_count(self) -> Optional[int]: ...
    @property
    def bucket_keys(self) -> List[str]: ...
    @property
    def partition_keys(self) -> List[str]: ...

@final
class TableInfo:
    @property
    def path(self) -> str: ...
    @property
    def table_id(self) -> int: ...
    @property
    def schema_id(self) -> int: ...
    @property
    def bucket_count(self) -> int: ...
    @property
    def bucket_keys(self) -> List[str]: ...
    @property
    def primary_keys(self) -> List[str]: ...
    @property
    def has_primary_key(self) -> bool: ...
    @property
    def partition_keys(self) -> List[str]: ...
    @property
    def is_partitioned(self) -> bool: ...
    @property
    def schema(self) -> Schema: ...

# ----- writers -----

@final
class TableAppend:
    def create_writer(
        self,
        max_pending_callbacks: Optional[int] = None,
        executor: ExecutorArg = None,
        on_callback_error: Optional[ErrorHandler] = None,
    ) -> AppendWriter:
        """``executor``: None (the connection's FIFO worker), n (1 to 64 sharded workers keyed
        by bucket), a ``concurrent.futures.Executor`` or an asyncio loop (one job per completed
        batch). ``max_pending_callbacks``: 1 to 2**31 - 1. Out-of-range ints (2**70 and
        negative ones included) are InvalidConfigError. ``on_callback_error(exception,
        operation)`` receives raising callbacks and jobs a gone executor dropped."""

@final
class TableUpsert:
    def partial_update_by_name(self, names: Sequence[str]) -> TableUpsert: ...
    def partial_update_by_index(self, indexes: Sequence[int]) -> TableUpsert: ...
    def create_writer(
        self,
        max_pending_callbacks: Optional[int] = None,
        executor: ExecutorArg = None,
        on_callback_error: Optional[ErrorHandler] = None,
    ) -> UpsertWriter: ...

@final
class AppendWriter:
    @property
    def closed(self) -> bool: ...
    @property
    def table(self) -> str: ...
    def flush(self, timeout: Optional[float] = None) -> None:
        """Block (GIL released) until every operation accepted before the call completed and its
        callback returned; raises CalledFromCallbackError inside a callback."""
    def flush_async(self, timeout: Optional[float] = None) -> asyncio.Future[None]: ...
    def close(self, timeout: Optional[float] = None) -> None:
        """Stop accepting, flush and drain (GIL released); at the timeout pending operations
        complete with WRITER_CLOSED and this raises TimeoutError."""
    def close_async(self, timeout: Optional[float] = None) -> asyncio.Future[None]: ...
    def stats(self) -> WriterStats: ...
    def error_counts(self) -> List[ErrorCount]: ...
    def bucket_counts(self) -> List[BucketCount]: ...
    def __exit__(self, *_args: object) -> bool: ...
    def __aexit__(self, *_args: object) -> asyncio.Future[None]: ...
    @overload
    def append(self, row: Row, callback: None = None) -> WriteResult: ...
    @overload
    def append(self, row: Row, callback: Callback) -> None: ...
    def append_detached(self, row: Row) -> None: ...
    @overload
    def write_arrow_batch(self, batch: ArrowInput, callback: None = None) -> WriteResult: ...
    @overload
    def write_arrow_batch(self, batch: ArrowInput, callback: Callback) -> None: ...
    def write_arrow_batch_detached(self, batch: ArrowInput) -> None: ...
    @overload
    def write_arrow(self, table: ArrowInput, callback: None = None) -> List[WriteResult]: ...
    @overload
    def write_arrow(self, table: ArrowInput, callback: Callback) -> None: ...
    @overload
    def write_pandas(self, df: Any, callback: None = None) -> List[WriteResult]: ...
    @overload
    def write_pandas(self, df: Any, callback: Callback) -> None: ...
    def __enter__(self) -> AppendWriter: ...
    def __aenter__(self) -> asyncio.Future[AppendWriter]: ...

@final
class UpsertWriter:
    @property
    def closed(self) -> bool: ...
    @property
    def table(self) -> str: ...
    def flush(self, timeout: Optional[float] = None) -> None:
        """Block (GIL released) until every operation accepted before the call completed and its
        callback returned; raises CalledFromCallbackError inside a callback."""
    def flush_async(self, timeout: Optional[float] = None) -> asyncio.Future[None]: ...
    def close(self, timeout: Optional[float] = None) -> None:
        """Stop accepting, flush and drain (GIL released); at the timeout pending operations
        complete with WRITER_CLOSED and this raises TimeoutError."""
    def close_async(self, timeout: Optional[float] = None) -> asyncio.Future[None]: ...
    def stats(self) -> WriterStats: ...
    def error_counts(self) -> List[ErrorCount]: ...
    def bucket_counts(self) -> List[BucketCount]: ...
    def __exit__(self, *_args: object) -> bool: ...
    def __aexit__(self, *_args: object) -> asyncio.Future[None]: ...
    @overload
    def upsert(self, row: Row, callback: None = None) -> WriteResult: ...
    @overload
    def upsert(self, row: Row, callback: Callback) -> None: ...
    @overload
    def delete(self, key: Row, callback: None = None) -> WriteResult: ...
    @overload
    def delete(self, key: Row, callback: Callback) -> None: ...
    def upsert_detached(self, row: Row) -> None: ...
    def delete_detached(self, key: Row) -> None: ...
    def __enter__(self) -> UpsertWriter: ...
    def __aenter__(self) -> asyncio.Future[UpsertWriter]: ...

# ----- completions -----

@final
class WriteCompletion:
    """How a write ended and where its record went. Immutable once a callback kept it; one that
    no callback kept may be refilled for a later callback."""

    @property
    def ok(self) -> bool: ...
    @property
    def error(self) -> Optional[FlussWriterError]: ...
    @property
    def error_code(self) -> int: ...
    @property
    def message(self) -> Optional[str]: ...
    @property
    def retriable(self) -> bool: ...
    @property
    def table(self) -> str: ...
    @property
    def table_id(self) -> int: ...
    @property
    def partition(self) -> Optional[str]:
        """The name of the partition the record went to (its partition-key values joined by
        ``$``); None for a table without partitions. For a multi-bucket Arrow batch, the
        partition of its first part (``bucket_results`` name each)."""
    @property
    def partition_id(self) -> Optional[int]:
        """The id of that partition once the writer resolved it; None for a table without
        partitions (and for a write that failed before its partition was known, e.g. with
        PARTITION_NOT_EXISTS when create on write is off)."""
    @property
    def bucket(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def log_end_offset(self) -> int: ...
    @property
    def bucket_results(self) -> List[BucketResult]: ...
    def raise_for_error(self) -> None: ...

@final
class BucketResult:
    @property
    def partition(self) -> Optional[str]:
        """The partition of these rows (None for a table without partitions)."""
    @property
    def bucket(self) -> int: ...
    @property
    def rows(self) -> int: ...
    @property
    def base_offset(self) -> int: ...
    @property
    def ok(self) -> bool: ...
    @property
    def error(self) -> Optional[FlussWriterError]: ...

@final
class WriteResult:
    def wait(self, timeout: Optional[float] = None) -> WriteCompletion:
        """Block (GIL released) until completed; raises CalledFromCallbackError in a callback."""
    def done(self) -> bool: ...
    def try_get(self) -> Optional[WriteCompletion]: ...
    def add_callback(self, callback: Callback) -> None: ...
    def __await__(self) -> Generator[Any, None, WriteCompletion]: ...

@final
class JobRunner:
    def __call__(self, *args: object, **kwargs: object) -> None: ...

# ----- testing -----

@final
class EmbeddedEngine:
    """Read-back and fault injection. ``partition`` (a partition's name) addresses a bucket of
    a partitioned table's partition; leave it None for a table without partitions."""
    def inject_error(
        self,
        table: PathArg,
        bucket: int,
        code: int,
        message: str = ...,
        times: int = 1,
        partition: Optional[str] = None,
    ) -> None: ...
    def inject_delay(
        self, table: PathArg, bucket: int, seconds: float, times: int = 1, partition: Optional[str] = None
    ) -> None: ...
    def inject_drop_connection(
        self,
        table: PathArg,
        bucket: int,
        after_apply: bool = False,
        times: int = 1,
        partition: Optional[str] = None,
    ) -> None: ...
    def clear_faults(self) -> None: ...
    def pending_faults(self, table: PathArg, bucket: int, partition: Optional[str] = None) -> int: ...
    def scan(
        self, table: PathArg, bucket: int, from_offset: int = 0, partition: Optional[str] = None
    ) -> List[Tuple[int, str, Tuple[Any, ...]]]: ...
    def lookup(self, table: PathArg, key: Row) -> Optional[Tuple[Any, ...]]: ...
    def high_watermark(self, table: PathArg, bucket: int, partition: Optional[str] = None) -> int: ...
    def partition_names(self, table: PathArg) -> List[str]:
        """The names of the table's partitions, in name order."""
    def stats(self) -> Dict[str, int]: ...

def _at_exit() -> None: ...
def _after_fork_in_child() -> None: ...
def _flush_logs() -> None: ...

# Not declared here: the hooks of builds for fluss-writer's own benchmarks and tests
# (bench_dispatch: cargo feature `bench`; _panic_for_test, _panic_on_next_write and
# Connection._panic_for_test: cargo feature `test-hooks`). The released wheel, which stubtest
# checks this stub against, has neither feature; fluss_writer.testing wraps them when present.
