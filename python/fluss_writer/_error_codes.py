# Generated from the core's error-code table (rust/core/src/error.rs) by
# rust/core/tests/error_code_table.rs. Do not edit: run
# FLUSS_WRITER_BLESS=1 cargo test -p fluss-writer --test error_code_table
"""``ErrorCode``: every error code fluss-writer names (docs/error-codes.md)."""

from __future__ import annotations

import enum


class ErrorCode(enum.IntEnum):
    """Every Fluss server code (Fluss 0.9 and 1.0) and every fluss-writer client code.

    ``FlussWriterError.code`` is a member of this enum; a code a newer server sends that the
    table lacks stays a plain ``int`` (its number is in the message). Members compare equal
    to their numbers.
    """

    UNKNOWN_SERVER_ERROR = -1
    """An unexpected error on the server. (server code)"""
    NONE = 0
    """No error. (server code)"""
    NETWORK_EXCEPTION = 1
    """The connection failed or a request timed out (also the client's mapping of lost connections). (server code, retriable)"""
    UNSUPPORTED_VERSION = 2
    """The server does not support this version of the request. (server code)"""
    CORRUPT_MESSAGE = 3
    """A message failed its size or format checks. (server code, retriable)"""
    DATABASE_NOT_EXIST = 4
    """The database does not exist. (server code)"""
    DATABASE_NOT_EMPTY = 5
    """The database still has tables (drop without cascade). (server code)"""
    DATABASE_ALREADY_EXIST = 6
    """A database of that name exists. (server code)"""
    TABLE_NOT_EXIST = 7
    """The table does not exist. (server code)"""
    TABLE_ALREADY_EXIST = 8
    """A table of that name exists. (server code)"""
    SCHEMA_NOT_EXIST = 9
    """The schema id is unknown to the server. (server code, retriable)"""
    LOG_STORAGE_EXCEPTION = 10
    """The server's log storage failed. (server code, retriable)"""
    KV_STORAGE_EXCEPTION = 11
    """The server's key-value storage failed. (server code, retriable)"""
    NOT_LEADER_OR_FOLLOWER = 12
    """The server is not the bucket's leader: metadata is stale. (server code, retriable)"""
    RECORD_TOO_LARGE_EXCEPTION = 13
    """A record or batch exceeds the server's limit. (server code)"""
    CORRUPT_RECORD_EXCEPTION = 14
    """A record failed its CRC or format checks on the server. (server code, retriable)"""
    INVALID_TABLE_EXCEPTION = 15
    """The table definition is invalid. (server code)"""
    INVALID_DATABASE_EXCEPTION = 16
    """The database name is invalid. (server code)"""
    INVALID_REPLICATION_FACTOR = 17
    """The replication factor exceeds the number of tablet servers. (server code)"""
    INVALID_REQUIRED_ACKS = 18
    """The produce request's acks value is not -1, 0 or 1. (server code)"""
    LOG_OFFSET_OUT_OF_RANGE_EXCEPTION = 19
    """A fetch offset outside the log. (server code)"""
    NON_PRIMARY_KEY_TABLE_EXCEPTION = 20
    """A key operation on a table without a primary key. (server code)"""
    UNKNOWN_TABLE_OR_BUCKET_EXCEPTION = 21
    """The server does not host this table or bucket: metadata is stale. (server code, retriable)"""
    INVALID_UPDATE_VERSION_EXCEPTION = 22
    """An update carries an invalid version. (server code)"""
    INVALID_COORDINATOR_EXCEPTION = 23
    """The request came from an invalid coordinator (epoch). (server code)"""
    FENCED_LEADER_EPOCH_EXCEPTION = 24
    """A stale leader epoch. (server code)"""
    REQUEST_TIME_OUT = 25
    """The server timed out waiting (for example for replicas). (server code, retriable)"""
    STORAGE_EXCEPTION = 26
    """A storage failure on the server. (server code, retriable)"""
    OPERATION_NOT_ATTEMPTED_EXCEPTION = 27
    """The server did not attempt the operation. (server code)"""
    NOT_ENOUGH_REPLICAS_AFTER_APPEND_EXCEPTION = 28
    """Appended on the leader, but too few in-sync replicas acknowledged. (server code, retriable)"""
    NOT_ENOUGH_REPLICAS_EXCEPTION = 29
    """Too few in-sync replicas to accept the write. (server code, retriable)"""
    SECURITY_TOKEN_EXCEPTION = 30
    """The server could not issue a file-access security token. (server code)"""
    OUT_OF_ORDER_SEQUENCE_EXCEPTION = 31
    """An idempotent batch arrived with an unexpected sequence number (the writer's idempotence rules decide). (server code)"""
    DUPLICATE_SEQUENCE_EXCEPTION = 32
    """An idempotent batch was already written (the writer counts it as success). (server code)"""
    UNKNOWN_WRITER_ID_EXCEPTION = 33
    """The server does not know the idempotent writer id (the writer's idempotence rules decide). (server code)"""
    INVALID_COLUMN_PROJECTION = 34
    """A fetch asked for an invalid column projection. (server code)"""
    INVALID_TARGET_COLUMN = 35
    """A partial update names columns that cannot be updated. (server code)"""
    PARTITION_NOT_EXISTS = 36
    """The partition does not exist (never created, or dropped). (server code)"""
    TABLE_NOT_PARTITIONED_EXCEPTION = 37
    """A partition operation on a table without partition keys. (server code)"""
    INVALID_TIMESTAMP_EXCEPTION = 38
    """An invalid timestamp (for example a list-offsets time in the future). (server code)"""
    INVALID_CONFIG_EXCEPTION = 39
    """A configuration value or table property is invalid. (server code)"""
    LAKE_STORAGE_NOT_CONFIGURED_EXCEPTION = 40
    """A lake operation on a cluster without lake storage. (server code)"""
    KV_SNAPSHOT_NOT_EXIST = 41
    """The key-value snapshot does not exist. (server code)"""
    PARTITION_ALREADY_EXISTS = 42
    """The partition exists already. (server code)"""
    PARTITION_SPEC_INVALID_EXCEPTION = 43
    """A partition spec that does not fit the table's partition keys, or an invalid value. (server code)"""
    LEADER_NOT_AVAILABLE_EXCEPTION = 44
    """The bucket has no leader right now. (server code, retriable)"""
    PARTITION_MAX_NUM_EXCEPTION = 45
    """The cluster's or the table's limit of partitions is reached. (server code)"""
    AUTHENTICATE_EXCEPTION = 46
    """Authentication failed (wrong credentials, mechanism not enabled). (server code)"""
    SECURITY_DISABLED_EXCEPTION = 47
    """A security operation (ACLs) on a cluster without an authorizer. (server code)"""
    AUTHORIZATION_EXCEPTION = 48
    """The principal lacks the permission for the operation. (server code)"""
    BUCKET_MAX_NUM_EXCEPTION = 49
    """The cluster's limit of buckets is reached. (server code)"""
    FENCED_TIERING_EPOCH_EXCEPTION = 50
    """A stale lake-tiering epoch. (server code)"""
    RETRIABLE_AUTHENTICATE_EXCEPTION = 51
    """Authentication could not complete for now; only the connection's authentication handshake retries it. (server code)"""
    INVALID_SERVER_RACK_INFO_EXCEPTION = 52
    """The servers' rack information is invalid. (server code)"""
    LAKE_SNAPSHOT_NOT_EXIST = 53
    """The lake snapshot does not exist. (server code)"""
    LAKE_TABLE_ALREADY_EXIST = 54
    """The lake table exists already. (server code)"""
    INELIGIBLE_REPLICA_EXCEPTION = 55
    """A new in-sync replica set contains an ineligible replica. (server code)"""
    INVALID_ALTER_TABLE_EXCEPTION = 56
    """An AlterTable the server refuses (a column that exists, properties and schema at once). (server code)"""
    DELETION_DISABLED_EXCEPTION = 57
    """Deletes on a table whose deletion is disabled. (server code)"""
    SERVER_NOT_EXIST_EXCEPTION = 58
    """The named server does not exist. (server code)"""
    SEVER_TAG_ALREADY_EXIST_EXCEPTION = 59
    """The server tag exists already (Fluss spells it SEVER). (server code)"""
    SEVER_TAG_NOT_EXIST_EXCEPTION = 60
    """The server tag does not exist (Fluss spells it SEVER). (server code)"""
    REBALANCE_FAILURE_EXCEPTION = 61
    """A rebalance task failed. (server code)"""
    NO_REBALANCE_IN_PROGRESS_EXCEPTION = 62
    """No rebalance task is in progress. (server code)"""
    INVALID_PRODUCER_ID_EXCEPTION = 63
    """An operation with an invalid producer id. (server code)"""
    CONFIG_EXCEPTION = 64
    """A configuration error on the server. (server code)"""
    NOT_COORDINATOR_LEADER_EXCEPTION = 65
    """The coordinator is not the leader (coordinator high availability); the leader must be asked. (server code)"""
    SCANNER_EXPIRED = 66
    """A key-value scanner session expired. (server code)"""
    UNKNOWN_SCANNER_ID = 67
    """The server does not know the scanner id. (server code)"""
    INVALID_SCAN_REQUEST = 68
    """The scan request is invalid. (server code)"""
    TOO_MANY_SCANNERS = 69
    """The bucket's or server's limit of scanner sessions is reached. (server code)"""
    DISK_WRITE_LOCKED = 70
    """The tablet server refuses writes while its data disk is fuller than its write limit. (server code, retriable)"""
    INSUFFICIENT_KV_LEADER_REPLICA_CAPACITY = 71
    """The cluster lacks capacity for more primary-key bucket leaders. (server code)"""
    STORAGE_BACKPRESSURE_EXCEPTION = 72
    """The key-value storage engine is under write pressure (only sent to PutKv v2 and later). (server code, retriable)"""
    HISTORICAL_PARTITION_THROTTLED = 73
    """Too many writes to historical partitions are in flight. (server code, retriable)"""
    INVALID_BUCKET_ROUTING = 74
    """The request's bucket routing is missing or stale (per-partition bucket counts). (server code)"""
    INVALID_ROW = -1001
    """A row or Arrow batch does not match the table schema: wrong type, wrong field count, unknown column, null in a non-null
    column, value out of range. (client code)"""
    RECORD_TOO_LARGE = -1002
    """A single record is larger than ``client.writer.batch-size`` (or the buffer). (client code)"""
    CAPACITY_EXHAUSTED = -1003
    """``max_pending_callbacks`` slots stayed taken for the whole wait budget: back-pressure, not a fault. (client code,
    retriable)"""
    BUFFER_EXHAUSTED = -1004
    """``client.writer.buffer.memory-size`` stayed exhausted for the whole wait budget. (client code, retriable)"""
    WRITER_CLOSED = -1005
    """The writer was closed (or dropped) before the operation was accepted or completed. (client code)"""
    CONNECTION_CLOSED = -1006
    """The connection was closed before the operation completed. (client code, retriable)"""
    CALLED_FROM_CALLBACK = -1007
    """``flush``, ``close`` or ``wait`` was called from inside a completion callback, where it would deadlock: a programming
    error. (client code)"""
    DELIVERY_TIMEOUT = -1008
    """The operation did not complete within ``client.writer.delivery-timeout``. (client code, retriable)"""
    INVALID_CONFIG = -1009
    """A configuration key is unknown or its value cannot be parsed. (client code)"""
    TIMEOUT = -1010
    """A blocking call (``flush``, ``wait``, ``close``) reached its own timeout; the operation may still complete later.
    (client code, retriable)"""
    INVALID_TABLE = -1011
    """A table descriptor or schema is invalid (unsupported type, bad key columns). (client code)"""
    UNSUPPORTED = -1012
    """A call that this table type does not support (upsert on a log table, append on a primary-key table). (client code)"""
    PROTOCOL = -1013
    """The peer sent bytes that do not follow the Fluss protocol. (client code)"""
    IO = -1014
    """A local I/O failure (embedded engine files, sockets). (client code, retriable)"""
    FORKED_PROCESS = -1015
    """The connection was created in a parent process before ``fork()``; it cannot be used in the child. (client code)"""
    INTERNAL = -1016
    """An invariant broke inside the SDK. Please report it. (client code)"""
    CALLBACK_FAILED = -1017
    """A completion callback raised or panicked (reported to the error handler, never to the operation itself). (client code)"""
    SEQUENCE_RESET = -1018
    """An idempotent writer's sequence state was reset after an earlier batch of the bucket failed for good; this in-flight
    batch may or may not have been written, so it is not retried. (client code)"""
    WAIT_INTERRUPTED = -1019
    """A blocking call was interrupted by the binding's interrupt check (Python: a signal handler raised); nothing was accepted
    by an interrupted admission. (client code)"""
