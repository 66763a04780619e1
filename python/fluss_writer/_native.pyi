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

from ._error_codes import ErrorCode
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
    "HISTOGRAMS",
    "LATENCY_BUCKET_LE",
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
    kv_throttled_sends: int
    kv_throttle_nanos: int
    kv_pressure_permille: int
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

class LatencyHistogram(TypedDict):
    """One latency histogram of ``metrics_snapshot()``: the bucket bounds in seconds, the
    cumulative count at or below each, the sum in seconds and the count (the ``+Inf`` bucket)."""

    bounds: List[float]
    counts: List[int]
    sum: float
    count: int

class WriterMetrics(TypedDict):
    """One live writer in ``metrics_snapshot()``."""

    client_id: str
    table: str
    writer: int
    stats: WriterStats
    errors: List[ErrorCount]
    buckets: List[BucketCount]
    histograms: Dict[str, LatencyHistogram]

#: ``(field, prometheus_name, kind, unit, help)`` per ``WriterStats`` field, in order; ``kind``
#: is ``"counter"``, ``"gauge"`` or ``"quantile"`` (not exported: ``prometheus_name`` is then the
#: histogram exported in its place).
METRICS: List[Tuple[str, str, str, str, str]]
#: ``(name, help)`` per latency histogram of ``WriterMetrics.histograms``; the Prometheus name
#: follows ``fluss_writer_``.
HISTOGRAMS: List[Tuple[str, str]]
#: The ``le`` label of each bucket bound of a latency histogram, as every exporter of the library
#: writes it (``"0.00001"`` ... ``"60"``), so that series from different processes sum by ``le``.
LATENCY_BUCKET_LE: List[str]
#: ``(field, prometheus_name, help)`` per ``BucketCount`` counter; the Prometheus name follows
#: ``fluss_writer_bucket_``.
BUCKET_METRICS: List[Tuple[str, str, str]]

def metrics_snapshot() -> List[WriterMetrics]:
    """Every live writer's stats, per-code and per-bucket counts (``fluss_writer.metrics.snapshot()``)."""
def metrics_prometheus_text() -> str:
    """Every live writer's metrics in the Prometheus text format (docs/metrics.md)."""

# ----- exceptions -----

class FlussWriterError(Exception):
    """Base of every fluss_writer error.

    ``code`` is an ``ErrorCode`` member (a plain ``int`` for a server code this version does not
    know; the message has its number), ``code_name`` its name, ``retriable`` whether retrying the
    same operation can succeed, ``message`` the text without the code.
    """

    code: Union[ErrorCode, int]
    code_name: str
    retriable: bool
    message: str

class ServerError(FlussWriterError):
    """An error answered by a Fluss server (or the embedded engine acting as one); ``code`` is the Fluss
    code unchanged: an ``ErrorCode`` member, or a plain ``int`` for a code this version does not know."""
class InvalidRowError(FlussWriterError, ValueError):
    """A row or Arrow batch does not match the table schema (INVALID_ROW, -1001). Also a ``ValueError``."""
class InvalidRowTypeError(InvalidRowError, TypeError):
    """A row value has a Python type its column cannot take (INVALID_ROW). Also a ``TypeError``."""
class RecordTooLargeError(FlussWriterError):
    """One record is larger than ``client.writer.batch-size`` or the buffer (RECORD_TOO_LARGE, -1002)."""
class CapacityExhaustedError(FlussWriterError):
    """``max_pending_callbacks`` stayed taken for the whole wait budget (CAPACITY_EXHAUSTED, -1003; retriable)."""
class BufferExhaustedError(FlussWriterError):
    """The writer's buffer memory stayed exhausted for the whole wait budget (BUFFER_EXHAUSTED, -1004; retriable)."""
class WriterClosedError(FlussWriterError):
    """The writer was closed before the operation was accepted or completed (WRITER_CLOSED, -1005)."""
class ConnectionClosedError(FlussWriterError):
    """The connection was closed before the operation completed (CONNECTION_CLOSED, -1006; retriable)."""
class CalledFromCallbackError(FlussWriterError):
    """``flush``, ``close`` or ``wait`` called inside a completion callback (CALLED_FROM_CALLBACK, -1007)."""
class DeliveryTimeoutError(FlussWriterError):
    """Not completed within ``client.writer.delivery-timeout`` (DELIVERY_TIMEOUT, -1008; retriable)."""
class InvalidConfigError(FlussWriterError, ValueError):
    """An unknown configuration key, a value that cannot be parsed, or a bad argument (INVALID_CONFIG, -1009).
    Also a ``ValueError``."""
class TimeoutError(FlussWriterError, builtins.TimeoutError):
    """A blocking call reached its own timeout (TIMEOUT, -1010; retriable). Also the builtin ``TimeoutError``."""
class InvalidTableError(FlussWriterError):
    """An invalid table descriptor, schema, name or partition spec (INVALID_TABLE, -1011)."""
class UnsupportedError(FlussWriterError):
    """A call this table or writer does not support (UNSUPPORTED, -1012)."""
class ProtocolError(FlussWriterError):
    """The peer broke the Fluss protocol (PROTOCOL, -1013)."""
class IoError(FlussWriterError, OSError):
    """A local I/O failure (IO, -1014; retriable). Also an ``OSError``."""
class ForkedProcessError(FlussWriterError):
    """A connection used in a child process after ``fork()`` (FORKED_PROCESS, -1015)."""
class InternalError(FlussWriterError):
    """An invariant broke inside fluss-writer: please report it (INTERNAL, -1016)."""
class CallbackFailedError(FlussWriterError):
    """A completion callback raised; reported to ``on_callback_error`` only (CALLBACK_FAILED, -1017)."""
class SequenceResetError(FlussWriterError):
    """An idempotent in-flight batch not retried after its bucket's sequence reset (SEQUENCE_RESET, -1018)."""
class WaitInterruptedError(FlussWriterError):
    """A blocking call interrupted by a signal handler that raised (WAIT_INTERRUPTED, -1019)."""

# ----- connection -----

@final
class Config:
    """Fluss client keys and their values. Duration keys take a string with its unit (``"30s"``)
    or a ``datetime.timedelta``; a Python number there is InvalidConfigError. Unknown keys are
    InvalidConfigError (with a "did you mean" for pyfluss names and near misses)."""

    def __new__(cls, properties: Optional[Mapping[str, object]] = None) -> Config:
        """Check ``properties`` now: an unknown key or a bad value raises InvalidConfigError."""
    def to_dict(self, *, reveal_secrets: bool = False) -> Dict[str, str]:
        """The keys and values as strings; secret values (passwords, JAAS lines) are ``"***"``
        unless ``reveal_secrets=True``."""

def connect(bootstrap: Optional[str] = None, config: Union[None, Mapping[str, object], Config] = None) -> Connection:
    """Open a connection: ``"embedded"``, ``"embedded:<dir>"`` or ``"host:port[,host:port]"``,
    given as ``bootstrap`` or as the ``bootstrap.servers`` key of ``config`` (one setting: both
    given and different is InvalidConfigError; neither is InvalidConfigError too: the embedded
    engine is opened only when named). No environment variable is read.

    ``config`` takes Fluss client keys (README "Configuration"). ``client.response-max-size``
    Duration keys take a string with its unit (``"30s"``; a bare ``"30"`` is milliseconds, as in
    Fluss) or a ``datetime.timedelta``; a Python number for them is InvalidConfigError.
    ``client.response-max-size`` (default ``"100mb"``, 1kb to 2gb) bounds every response frame read from a server: a
    larger length prefix is never allocated; it closes that connection with a retriable
    ProtocolError and the affected requests are retried on a new one."""

@final
class Connection:
    """A connection to a Fluss cluster or the embedded engine (``connect``); a context manager that closes it."""
    @property
    def closed(self) -> bool:
        """Whether ``close`` was called."""
    def admin(self) -> Admin:
        """The admin client: databases, tables, partitions, ACLs."""
    def get_table(self, path: Union[str, TablePath, Tuple[str, str]]) -> Table:
        """The table at ``path`` (``"db.table"``, a TablePath or a tuple); raises ServerError TABLE_NOT_EXIST (7)."""
    def close(self, timeout: Optional[float] = None) -> None:
        """Close every writer of the connection (flushing them) and the connection; GIL released."""
    def __enter__(self) -> Connection:
        """The connection itself."""
    def __exit__(self, *_args: object) -> bool:
        """Close the connection; exceptions propagate."""
    def _dispatch_stats(self) -> Dict[str, int]: ...
    def _engine(self) -> EmbeddedEngine: ...

PathArg = Union[str, TablePath, Tuple[str, str]]
AggFunctionArg = Union[str, Tuple[str, Mapping[str, str]]]
ColumnTuple = Union[Tuple[str, str], Tuple[str, str, bool], Tuple[str, str, bool, Optional[AggFunctionArg]]]

@final
class Admin:
    """Databases, tables, partitions and ACLs (``Connection.admin()``); every call releases the GIL."""
    def create_database(self, name: str, ignore_if_exists: bool = False) -> None:
        """Create a database; one that exists raises ServerError DATABASE_ALREADY_EXIST (6) unless ``ignore_if_exists``."""
    def drop_database(self, name: str, ignore_if_not_exists: bool = False, cascade: bool = False) -> None:
        """Drop a database. One that still has tables raises ServerError DATABASE_NOT_EMPTY (5)
        unless ``cascade``, which drops its tables and their data too (0.1 did that by
        default); a missing one raises DATABASE_NOT_EXIST (4) unless ``ignore_if_not_exists``."""
    def list_databases(self) -> List[str]:
        """The names of every database."""
    def database_exists(self, name: str) -> bool:
        """Whether the database exists. On a Fluss 1.0 server whose authorizer is on, False may
        also mean that the user lacks DESCRIBE on the database (the server answers False, not an
        error; the default database ``fluss`` is exempt). 0.9.1 servers do not check."""
    def create_table(
        self, path: PathArg, descriptor: TableDescriptor, ignore_if_exists: bool = False
    ) -> None:
        """Create a table; one that exists raises ServerError TABLE_ALREADY_EXIST (8) unless ``ignore_if_exists``."""
    def drop_table(self, path: PathArg, ignore_if_not_exists: bool = False) -> None:
        """Drop a table; a missing one raises ServerError TABLE_NOT_EXIST (7) unless ``ignore_if_not_exists``."""
    def list_tables(self, database: str) -> List[str]:
        """The names of the database's tables."""
    def table_exists(self, path: PathArg) -> bool:
        """Whether the table exists. On a Fluss 1.0 server whose authorizer is on, False may also
        mean that the user lacks DESCRIBE on the table (the server answers False, not an error).
        0.9.1 servers do not check."""
    def get_table_info(self, path: PathArg) -> TableInfo:
        """The table's id, schema, keys and buckets as the server has them."""
    def create_acls(self, acls: Sequence[AclBinding]) -> None:
        """Create every ACL. The user needs, on each ACL's resource (for a table ACL: its
        database), ALL on a Fluss 1.0 server, ALTER on a 0.9.1 server (super users have both);
        without it the whole call raises ServerError AUTHORIZATION_EXCEPTION (48), whose message
        names that requirement, and nothing is created. When the server refuses one entry
        otherwise, the ServerError names it and the ones it accepted stay. Servers learn of a
        new ACL asynchronously (within about 100 ms on the test cluster). The embedded engine
        has no authorizer: every ACL call raises ServerError with code 47
        (SECURITY_DISABLED_EXCEPTION). GIL released."""
    def list_acls(self, filter: Optional[AclFilter] = None) -> List[AclBinding]:
        """The ACLs matching ``filter`` (every ACL when None)."""
    def drop_acls(self, filters: Sequence[AclFilter]) -> List[AclBinding]:
        """Drop every ACL matching one of ``filters``; return the ACLs dropped. Needs the same
        permission as ``create_acls`` (ALL on a 1.0 server, ALTER on 0.9.1) on every resource
        with a matching ACL; without it AUTHORIZATION_EXCEPTION (48) and nothing is dropped."""
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
        add_columns: Optional[Union[ArrowSchemaExportable, Sequence[ColumnTuple]]] = None,
        drop_columns: Optional[Sequence[str]] = None,
        rename_columns: Optional[Sequence[Tuple[str, str]]] = None,
        ignore_if_not_exists: bool = False,
    ) -> None:
        """Change the table's schema. ``add_columns`` (as ``Schema`` takes columns) are added
        after the last column: the table gets the next schema id, rows written before read back
        with None in them. Fluss 0.9.1 adds nullable columns only and refuses dropping and
        renaming (its errors raise as ServerError); a column that exists is
        INVALID_ALTER_TABLE_EXCEPTION (56). A column with an aggregation function needs a Fluss
        1.0 server: a 0.9.1 server adds it without the function, and this then raises
        UNSUPPORTED saying so. Writers created before keep writing their schema;
        get the table again and create a writer to write the new columns."""
    def alter_bucket_count(self, path: PathArg, bucket_count: int, ignore_if_not_exists: bool = False) -> None:
        """Change the bucket count of a partitioned table (Fluss 1.0, ALTER_TABLE v1): partitions
        created from now on get ``bucket_count`` buckets, existing ones keep theirs; writers route
        each row by its own partition's count. A coordinator without ALTER_TABLE v1 (Fluss 0.9)
        raises UnsupportedError naming its versions, without being asked. GIL released."""
    def server_supports(self, capability: str) -> bool:
        """Whether the servers have ``capability`` (``"alter_bucket_count"``, ``"historical_partitions"``), from their
        ApiVersions; an unknown name raises InvalidConfigError."""
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
    def cluster() -> AclResource:
        """The cluster as an ACL resource."""
    @staticmethod
    def database(name: str) -> AclResource:
        """A database as an ACL resource."""
    @staticmethod
    def table(path: PathArg) -> AclResource:
        """A table as an ACL resource."""
    @property
    def type(self) -> Literal["CLUSTER", "DATABASE", "TABLE"]:
        """``"CLUSTER"``, ``"DATABASE"`` or ``"TABLE"``."""
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
    ) -> AclBinding:
        """An ACL; an unknown ``operation`` raises InvalidConfigError."""
    @property
    def resource(self) -> AclResource:
        """What the ACL is about."""
    @property
    def principal(self) -> str:
        """The user name."""
    @property
    def principal_type(self) -> str:
        """The principal's type (``"User"``)."""
    @property
    def host(self) -> str:
        """The host the ACL applies to (``"*"``: any)."""
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
    ) -> AclFilter:
        """A filter; fields left None match every ACL."""
    @property
    def resource(self) -> Optional[AclResource]:
        """The resource to match (None: any)."""
    @property
    def principal(self) -> Optional[str]:
        """The user name to match (None: any)."""
    @property
    def host(self) -> Optional[str]:
        """The host to match (None: any)."""
    @property
    def operation(self) -> AclOperationName:
        """``"ANY"`` when not set."""

@final
class Table:
    """A table of the connection (``Connection.get_table``): its info, writers, scan and lookup."""
    @property
    def path(self) -> str:
        """``"db.table"``."""
    @property
    def info(self) -> TableInfo:
        """The table's info as fetched with the table."""
    def new_append(self) -> TableAppend:
        """A builder of append writers (log tables)."""
    def new_upsert(self) -> TableUpsert:
        """A builder of upsert writers (primary-key tables)."""
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
    """A table's database and name."""
    def __new__(cls, database: str, table: str) -> TablePath:
        """A path; an invalid name raises InvalidTableError."""
    @property
    def database(self) -> str:
        """The database name."""
    @property
    def table(self) -> str:
        """The table name."""

@final
class Schema:
    """A table's columns (name, Fluss type, nullable) and primary key."""
    def __new__(
        cls,
        columns: Union[ArrowSchemaExportable, Sequence[ColumnTuple]],
        primary_keys: Optional[Sequence[str]] = None,
    ) -> Schema:
        """Columns from a pyarrow schema or (name, type[, nullable[, agg]]) tuples; checked by the
        core (InvalidTableError). ``agg``: how a table with ``table.merge-engine`` =
        ``aggregation`` merges the column, a function name (``"sum"``, ``"max"``, ``"rbm32"``,
        ...; None: the server's default, ``last_value_ignore_nulls``) or ``(name, {param:
        value})`` (``("listagg", {"delimiter": ";"})``). Not on primary-key columns."""
    @property
    def columns(self) -> List[Tuple[str, str, bool]]:
        """(name, Fluss type, nullable) per column, in order."""
    @property
    def column_names(self) -> List[str]:
        """The column names, in order."""
    @property
    def primary_keys(self) -> List[str]:
        """The primary-key columns (empty for a log table)."""
    @property
    def agg_functions(self) -> Dict[str, Tuple[str, Dict[str, str]]]:
        """``{column: (function, {param: value})}`` for the columns with an aggregation function."""
    def to_arrow(self) -> ArrowSchemaExportable:
        """The schema as an Arrow schema (Arrow PyCapsule interface)."""

@final
class TableDescriptor:
    """What ``Admin.create_table`` creates: schema, buckets, keys, partitions, properties."""
    def __new__(
        cls,
        schema: Union[Schema, ArrowSchemaExportable, Sequence[ColumnTuple]],
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
    def schema(self) -> Schema:
        """The schema."""
    @property
    def bucket_count(self) -> Optional[int]:
        """The number of buckets (None: the server's default)."""
    @property
    def bucket_keys(self) -> List[str]:
        """The bucket-key columns."""
    @property
    def partition_keys(self) -> List[str]:
        """The partition-key columns (empty: not partitioned)."""

@final
class TableInfo:
    """A table as the server describes it (``Admin.get_table_info``, ``Table.info``)."""
    @property
    def path(self) -> str:
        """``"db.table"``."""
    @property
    def table_id(self) -> int:
        """The server's table id (a recreated table gets a new one)."""
    @property
    def schema_id(self) -> int:
        """The id of the table's current schema."""
    @property
    def bucket_count(self) -> int:
        """The number of buckets; of a partitioned table, the count of partitions created from now
        on (each partition keeps the count it was created with)."""
    @property
    def bucket_count_epoch(self) -> Optional[int]:
        """How often the bucket count was changed (``Admin.alter_bucket_count``); None on a server
        without per-partition bucket counts (Fluss 0.9)."""
    @property
    def bucket_keys(self) -> List[str]:
        """The bucket-key columns."""
    @property
    def primary_keys(self) -> List[str]:
        """The primary-key columns (empty for a log table)."""
    @property
    def has_primary_key(self) -> bool:
        """Whether this is a primary-key table."""
    @property
    def partition_keys(self) -> List[str]:
        """The partition-key columns (empty: not partitioned)."""
    @property
    def is_partitioned(self) -> bool:
        """Whether the table has partition keys."""
    @property
    def schema(self) -> Schema:
        """The current schema."""

# ----- writers -----

@final
class TableAppend:
    """Builds append writers for a log table (``Table.new_append()``)."""
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
    """Builds upsert writers for a primary-key table (``Table.new_upsert()``), optionally partial."""
    def partial_update_by_name(self, names: Sequence[str]) -> TableUpsert:
        """Write only these columns (the primary key included); the others keep their values."""
    def partial_update_by_index(self, indexes: Sequence[int]) -> TableUpsert:
        """Write only the columns at these indexes (the primary key included)."""
    def create_writer(
        self,
        max_pending_callbacks: Optional[int] = None,
        executor: ExecutorArg = None,
        on_callback_error: Optional[ErrorHandler] = None,
    ) -> UpsertWriter:
        """An upsert writer; the parameters are those of ``TableAppend.create_writer``."""

@final
class AppendWriter:
    """Appends rows and Arrow data to a log table; every accepted write completes exactly once."""
    @property
    def closed(self) -> bool:
        """Whether the writer is closed."""
    @property
    def table(self) -> str:
        """``"db.table"`` of the writer's table."""
    def flush(self, timeout: Optional[float] = None) -> None:
        """Block (GIL released) until every operation accepted before the call completed and its
        callback returned; raises CalledFromCallbackError inside a callback."""
    def flush_async(self, timeout: Optional[float] = None) -> asyncio.Future[None]:
        """``flush`` for asyncio: a future that completes when the flush does."""
    def close(self, timeout: Optional[float] = None) -> None:
        """Stop accepting, flush and drain (GIL released); at the timeout pending operations
        complete with WRITER_CLOSED and this raises TimeoutError."""
    def close_async(self, timeout: Optional[float] = None) -> asyncio.Future[None]:
        """``close`` for asyncio: a future that completes when the close does."""
    def stats(self) -> WriterStats:
        """Counters, gauges and latency percentiles of this writer (docs/metrics.md)."""
    def error_counts(self) -> List[ErrorCount]:
        """Per error code: records failed, retries and rejected calls."""
    def bucket_counts(self) -> List[BucketCount]:
        """Per bucket (and partition): records and bytes sent, records failed, retries."""
    def __exit__(self, *_args: object) -> bool:
        """Close the writer (flushing it); exceptions propagate."""
    def __aexit__(self, *_args: object) -> asyncio.Future[None]:
        """Close the writer without blocking the event loop."""
    @overload
    def append(self, row: Row, callback: None = None) -> WriteResult:
        """Append one row; returns a WriteResult to wait for or await. Raises synchronously (nothing accepted) on a bad row."""
    @overload
    def append(self, row: Row, callback: Callback) -> None:
        """Append one row; ``callback(completion)`` runs exactly once when it is durable or failed."""
    def append_detached(self, row: Row) -> None:
        """Append one row with no completion to observe (failures are counted in ``error_counts``)."""
    @overload
    def write_arrow_batch(self, batch: ArrowInput, callback: None = None) -> WriteResult:
        """Append an Arrow batch as ONE operation; returns its WriteResult."""
    @overload
    def write_arrow_batch(self, batch: ArrowInput, callback: Callback) -> None:
        """Append an Arrow batch as ONE operation; ``callback`` runs once for the whole batch."""
    def write_arrow_batch_detached(self, batch: ArrowInput) -> None:
        """Append an Arrow batch with no completion to observe."""
    @overload
    def write_arrow(self, table: ArrowInput, callback: None = None) -> List[WriteResult]:
        """Append an Arrow table or stream, one operation per batch; returns their WriteResults."""
    @overload
    def write_arrow(self, table: ArrowInput, callback: Callback) -> None:
        """Append an Arrow table or stream, one operation per batch; ``callback`` runs once per batch."""
    @overload
    def write_pandas(self, df: Any, callback: None = None) -> List[WriteResult]:
        """Append a pandas DataFrame (converted through pyarrow); returns one WriteResult per batch."""
    @overload
    def write_pandas(self, df: Any, callback: Callback) -> None:
        """Append a pandas DataFrame (converted through pyarrow); ``callback`` runs once per batch."""
    def __enter__(self) -> AppendWriter:
        """The writer itself."""
    def __aenter__(self) -> asyncio.Future[AppendWriter]:
        """The writer itself, for ``async with``."""

@final
class UpsertWriter:
    """Upserts and deletes rows of a primary-key table; every accepted write completes exactly once."""
    @property
    def closed(self) -> bool:
        """Whether the writer is closed."""
    @property
    def table(self) -> str:
        """``"db.table"`` of the writer's table."""
    def flush(self, timeout: Optional[float] = None) -> None:
        """Block (GIL released) until every operation accepted before the call completed and its
        callback returned; raises CalledFromCallbackError inside a callback."""
    def flush_async(self, timeout: Optional[float] = None) -> asyncio.Future[None]:
        """``flush`` for asyncio: a future that completes when the flush does."""
    def close(self, timeout: Optional[float] = None) -> None:
        """Stop accepting, flush and drain (GIL released); at the timeout pending operations
        complete with WRITER_CLOSED and this raises TimeoutError."""
    def close_async(self, timeout: Optional[float] = None) -> asyncio.Future[None]:
        """``close`` for asyncio: a future that completes when the close does."""
    def stats(self) -> WriterStats:
        """Counters, gauges and latency percentiles of this writer (docs/metrics.md)."""
    def error_counts(self) -> List[ErrorCount]:
        """Per error code: records failed, retries and rejected calls."""
    def bucket_counts(self) -> List[BucketCount]:
        """Per bucket (and partition): records and bytes sent, records failed, retries."""
    def __exit__(self, *_args: object) -> bool:
        """Close the writer (flushing it); exceptions propagate."""
    def __aexit__(self, *_args: object) -> asyncio.Future[None]:
        """Close the writer without blocking the event loop."""
    @overload
    def upsert(self, row: Row, callback: None = None) -> WriteResult:
        """Insert or update one row by its primary key; returns a WriteResult."""
    @overload
    def upsert(self, row: Row, callback: Callback) -> None:
        """Insert or update one row by its primary key; ``callback`` runs exactly once."""
    @overload
    def delete(self, key: Row, callback: None = None) -> WriteResult:
        """Delete the row with this primary key; returns a WriteResult."""
    @overload
    def delete(self, key: Row, callback: Callback) -> None:
        """Delete the row with this primary key; ``callback`` runs exactly once."""
    def upsert_detached(self, row: Row) -> None:
        """Upsert one row with no completion to observe."""
    def delete_detached(self, key: Row) -> None:
        """Delete one row with no completion to observe."""
    def __enter__(self) -> UpsertWriter:
        """The writer itself."""
    def __aenter__(self) -> asyncio.Future[UpsertWriter]:
        """The writer itself, for ``async with``."""

# ----- completions -----

@final
class WriteCompletion:
    """How a write ended and where its record went. Immutable once a callback kept it; one that
    no callback kept may be refilled for a later callback."""

    @property
    def ok(self) -> bool:
        """Whether the write is durable."""
    @property
    def error(self) -> Optional[FlussWriterError]:
        """The exception of a failed write (a FlussWriterError), else None."""
    @property
    def error_code(self) -> int:
        """0 on success, else the error's code."""
    @property
    def message(self) -> Optional[str]:
        """The error message of a failed write, else None."""
    @property
    def retriable(self) -> bool:
        """Whether writing the same record again can succeed (False on success)."""
    @property
    def table(self) -> str:
        """``"db.table"``."""
    @property
    def table_id(self) -> int:
        """The server's id of the table written."""
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
    def bucket(self) -> int:
        """The bucket the record went to (for a multi-bucket Arrow batch: its first part's)."""
    @property
    def offset(self) -> int:
        """The record's log offset (primary-key tables: the changelog offset), or -1 if unknown."""
    @property
    def log_end_offset(self) -> int:
        """The bucket's log end offset the server reported with the ack, or -1."""
    @property
    def bucket_results(self) -> List[BucketResult]:
        """Per bucket part of an Arrow batch: rows, offsets and outcome."""
    def raise_for_error(self) -> None:
        """Raise the write's exception if it failed; do nothing if it succeeded."""

@final
class BucketResult:
    """The part of an Arrow batch that went to one bucket, and how it ended."""
    @property
    def partition(self) -> Optional[str]:
        """The partition of these rows (None for a table without partitions)."""
    @property
    def bucket(self) -> int:
        """The bucket."""
    @property
    def rows(self) -> int:
        """How many rows of the batch went to it."""
    @property
    def base_offset(self) -> int:
        """The log offset of the part's first row, or -1 if it failed."""
    @property
    def ok(self) -> bool:
        """Whether the part is durable."""
    @property
    def error(self) -> Optional[FlussWriterError]:
        """The part's exception if it failed, else None."""

@final
class WriteResult:
    """The pending outcome of one write: wait for it, await it or add a callback."""
    def wait(self, timeout: Optional[float] = None) -> WriteCompletion:
        """Block (GIL released) until completed; raises CalledFromCallbackError in a callback."""
    def done(self) -> bool:
        """Whether the operation has completed."""
    def try_get(self) -> Optional[WriteCompletion]:
        """The completion if the operation has completed, else None."""
    def add_callback(self, callback: Callback) -> None:
        """Run ``callback(completion)`` once, on the writer's executor (at once if already completed)."""
    def __await__(self) -> Generator[Any, None, WriteCompletion]:
        """Await the completion without blocking the event loop."""

@final
class JobRunner:
    """Runs one batch of completion callbacks; handed to a user executor (``executor=``)."""
    def __call__(self, *args: object, **kwargs: object) -> None:
        """Run the callbacks (exactly once; later calls do nothing)."""

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
    ) -> None:
        """Answer the next ``times`` requests for the bucket with error ``code`` (without applying them)."""
    def inject_delay(
        self, table: PathArg, bucket: int, seconds: float, times: int = 1, partition: Optional[str] = None
    ) -> None:
        """Delay the answers to the next ``times`` requests for the bucket by ``seconds``."""
    def inject_drop_connection(
        self,
        table: PathArg,
        bucket: int,
        after_apply: bool = False,
        times: int = 1,
        partition: Optional[str] = None,
    ) -> None:
        """Drop the connection at the next ``times`` requests for the bucket (after applying them if ``after_apply``)."""
    def inject_coordinator_error(self, code: int, message: str = ..., times: int = 1) -> None:
        """Answer the next ``times`` requests addressed to the coordinator (DDL, the partitions
        the writer creates) with error ``code`` before processing them; 65
        (NOT_COORDINATOR_LEADER) is what a standby coordinator of a Fluss 1.0 cluster answers."""
    def pending_coordinator_faults(self) -> int:
        """How many more coordinator requests the injected coordinator faults will hit."""
    def clear_faults(self) -> None:
        """Remove every fault not yet triggered."""
    def pending_faults(self, table: PathArg, bucket: int, partition: Optional[str] = None) -> int:
        """How many injected faults of the bucket have not triggered yet."""
    def scan(
        self, table: PathArg, bucket: int, from_offset: int = 0, partition: Optional[str] = None
    ) -> List[Tuple[int, str, Tuple[Any, ...]]]:
        """The bucket's log from ``from_offset``: (offset, change type, row tuple) per record."""
    def lookup(self, table: PathArg, key: Row) -> Optional[Tuple[Any, ...]]:
        """The current row of a primary key, or None."""
    def high_watermark(self, table: PathArg, bucket: int, partition: Optional[str] = None) -> int:
        """The bucket's high watermark (the next offset)."""
    def partition_names(self, table: PathArg) -> List[str]:
        """The names of the table's partitions, in name order."""
    def stats(self) -> Dict[str, int]:
        """The engine's counters: batches and records accepted, duplicates dropped, batches rejected."""

def _at_exit() -> None: ...
def _after_fork_in_child() -> None: ...
def _flush_logs() -> None: ...

# Not declared here: the hooks of builds for fluss-writer's own benchmarks and tests
# (bench_dispatch: cargo feature `bench`; _panic_for_test, _panic_on_next_write and
# Connection._panic_for_test: cargo feature `test-hooks`). The released wheel, which stubtest
# checks this stub against, has neither feature; fluss_writer.testing wraps them when present.
