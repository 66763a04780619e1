// fluss_writer.hpp: the C++ API of fluss-writer, a write SDK for Apache Fluss.
//
// C++17, standard headers only. Calls return a `Result` (code, message, retriable) and fill
// out-parameters; handles are move-only. Writes come in three forms: fire-and-forget, with a
// `WriteResult` to wait on, and with a `WriteCallback` that runs exactly once when the
// operation is durable or failed (the callback contract C1-C12 of docs/callback-contract.md).
//
// Where callbacks run: never on the submitting thread, never on I/O threads; by default on the
// connection's single FIFO worker thread, one at a time, in completion order (per bucket: in
// submission order). A callback must not block for long. Calling Flush, Close or
// WriteResult::Wait from inside a callback fails at once with ClientCode::CalledFromCallback.
// A callback that throws is caught; the exception text goes to the writer's error handler and
// nothing else is affected. The callable and its captures are destroyed on the worker thread
// after it ran and before its max_pending_callbacks slot is released; if the write call is
// rejected (a synchronous error), the callable is destroyed before the call returns and never
// runs. Callables (and error handlers, user executors) must be safe to call and destroy on
// another thread.
//
// No exception crosses into or out of the library: errors are Results. `Result` is
// [[nodiscard]] (on the class, so every call returning one is covered): a Result you do not
// look at is a compiler warning; write `(void)call;` to ignore one on purpose.
//
// Allocation on the callback path: a WriteCallback whose callable is trivially copyable and at
// most kWriteCallbackInlineSize bytes (a lambda capturing a pointer, a reference, `this`, or an
// integer or two) is stored inline: a write with it, its dispatch and its call allocate nothing
// per record. Larger callables cost one allocation per record. A SharedWriteCallback (one
// callable for many records) costs nothing per record. The completion a callback receives is
// built on the stack; its `table` and `partition` are std::string_views (no std::string per
// callback).
#pragma once

// FLUSS_WRITER_VERSION_MAJOR, _MINOR, _PATCH, _STRING and _NUMBER: the version of these headers.
#include "fluss_writer_version.h"

// Feature macros (for code that builds against several versions of this header).
#define FLUSS_WRITER_HAS_SHARED_WRITE_CALLBACK 1  // SharedWriteCallback, inline WriteCallback storage
#define FLUSS_WRITER_HAS_AGG_FUNCTIONS 1  // Column::agg_function / agg_params (aggregation merge engine)
#define FLUSS_WRITER_HAS_PARTITIONS 1  // partitioned tables: partition_keys, partition DDL, WriteCompletion::partition

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

// ===== Arrow C Data Interface (ABI-stable; copied from the Arrow specification) =====

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

extern "C" {
struct ArrowSchema {
  /// Array type description
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;

  /// Release callback
  void (*release)(struct ArrowSchema*);
  /// Opaque producer-specific data
  void* private_data;
};

struct ArrowArray {
  /// Array data description
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;

  /// Release callback
  void (*release)(struct ArrowArray*);
  /// Opaque producer-specific data
  void* private_data;
};
}  // extern "C"

#endif  // ARROW_C_DATA_INTERFACE

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

extern "C" {
struct ArrowArrayStream {
  /// Callbacks providing stream functionality
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);

  /// Release callback
  void (*release)(struct ArrowArrayStream*);

  /// Opaque producer-specific data
  void* private_data;
};
}  // extern "C"

#endif  // ARROW_C_STREAM_INTERFACE

namespace fluss_writer {

/// The version of the library linked at run time ("0.1.0"; FLUSS_WRITER_VERSION_STRING is the
/// version of the headers the caller was compiled with).
const char* Version() noexcept;

// Opaque handles owned by the Rust library.
namespace ffi {
struct RConnection;
struct RStatsReporter;
struct RTable;
struct RWriter;
struct RWriteResult;
struct RRow;
struct RJob;
struct RSharedCallback;
}  // namespace ffi

namespace detail {
struct Access;
}  // namespace detail

// ===== errors =====

/// Errors raised inside the SDK (the Rust core's ClientCode; a drift test keeps the two lists
/// equal). Fluss server codes (-1 and 0..999) pass through unchanged with their Fluss meaning.
enum class ClientCode : int32_t {
  InvalidRow = -1001,          ///< row/batch does not match the schema
  RecordTooLarge = -1002,      ///< one record larger than client.writer.batch-size
  CapacityExhausted = -1003,   ///< max_pending_callbacks slots taken for the whole wait budget (retriable)
  BufferExhausted = -1004,     ///< buffer memory exhausted for the whole wait budget (retriable)
  WriterClosed = -1005,        ///< the writer was closed
  ConnectionClosed = -1006,    ///< the connection was closed (retriable)
  CalledFromCallback = -1007,  ///< Flush/Close/Wait called inside a callback
  DeliveryTimeout = -1008,     ///< not completed within client.writer.delivery-timeout (retriable)
  InvalidConfig = -1009,       ///< unknown configuration key or bad value
  Timeout = -1010,             ///< a blocking call reached its own timeout (retriable)
  InvalidTable = -1011,        ///< bad descriptor, schema or table name
  Unsupported = -1012,         ///< not supported for this table or writer
  Protocol = -1013,            ///< the peer broke the Fluss protocol
  Io = -1014,                  ///< local I/O failure (retriable)
  ForkedProcess = -1015,       ///< connection used in a child after fork()
  Internal = -1016,            ///< an SDK invariant broke
  CallbackFailed = -1017,      ///< a callback threw (reported to the error handler only)
  SequenceReset = -1018,       ///< idempotent sequence reset; this in-flight batch was not retried
  Interrupted = -1019,         ///< a blocking call was interrupted (Python: a signal handler raised)
};

/// Every client code, in numeric order.
inline constexpr ClientCode kAllClientCodes[] = {
    ClientCode::InvalidRow,         ClientCode::RecordTooLarge, ClientCode::CapacityExhausted,
    ClientCode::BufferExhausted,    ClientCode::WriterClosed,   ClientCode::ConnectionClosed,
    ClientCode::CalledFromCallback, ClientCode::DeliveryTimeout, ClientCode::InvalidConfig,
    ClientCode::Timeout,            ClientCode::InvalidTable,   ClientCode::Unsupported,
    ClientCode::Protocol,           ClientCode::Io,             ClientCode::ForkedProcess,
    ClientCode::Internal,           ClientCode::CallbackFailed, ClientCode::SequenceReset,
    ClientCode::Interrupted,
};

// ----- BEGIN GENERATED ERROR CODES (from the core's table, rust/core/src/error.rs; do not edit: run
// FLUSS_WRITER_BLESS=1 cargo test -p fluss-writer --test error_code_table) -----
/// Every Fluss server code (Fluss 0.9 and 1.0, passed through unchanged) and every client code,
/// as the numbers Result::error_code carries: `r.error_code == ErrorCode::kNotLeaderOrFollower`.
/// A code a newer server sends that this list lacks is still reported, named SERVER_ERROR, its
/// number in the message, not retriable. docs/error-codes.md explains every code.
struct ErrorCode {
  ErrorCode() = delete;
  /// An unexpected error on the server.
  static constexpr int32_t kUnknownServerError = -1;
  /// No error.
  static constexpr int32_t kNone = 0;
  /// The connection failed or a request timed out (also the client's mapping of lost connections).
  static constexpr int32_t kNetworkException = 1;
  /// The server does not support this version of the request.
  static constexpr int32_t kUnsupportedVersion = 2;
  /// A message failed its size or format checks.
  static constexpr int32_t kCorruptMessage = 3;
  /// The database does not exist.
  static constexpr int32_t kDatabaseNotExist = 4;
  /// The database still has tables (drop without cascade).
  static constexpr int32_t kDatabaseNotEmpty = 5;
  /// A database of that name exists.
  static constexpr int32_t kDatabaseAlreadyExist = 6;
  /// The table does not exist.
  static constexpr int32_t kTableNotExist = 7;
  /// A table of that name exists.
  static constexpr int32_t kTableAlreadyExist = 8;
  /// The schema id is unknown to the server.
  static constexpr int32_t kSchemaNotExist = 9;
  /// The server's log storage failed.
  static constexpr int32_t kLogStorageException = 10;
  /// The server's key-value storage failed.
  static constexpr int32_t kKvStorageException = 11;
  /// The server is not the bucket's leader: metadata is stale.
  static constexpr int32_t kNotLeaderOrFollower = 12;
  /// A record or batch exceeds the server's limit.
  static constexpr int32_t kRecordTooLargeException = 13;
  /// A record failed its CRC or format checks on the server.
  static constexpr int32_t kCorruptRecordException = 14;
  /// The table definition is invalid.
  static constexpr int32_t kInvalidTableException = 15;
  /// The database name is invalid.
  static constexpr int32_t kInvalidDatabaseException = 16;
  /// The replication factor exceeds the number of tablet servers.
  static constexpr int32_t kInvalidReplicationFactor = 17;
  /// The produce request's acks value is not -1, 0 or 1.
  static constexpr int32_t kInvalidRequiredAcks = 18;
  /// A fetch offset outside the log.
  static constexpr int32_t kLogOffsetOutOfRangeException = 19;
  /// A key operation on a table without a primary key.
  static constexpr int32_t kNonPrimaryKeyTableException = 20;
  /// The server does not host this table or bucket: metadata is stale.
  static constexpr int32_t kUnknownTableOrBucketException = 21;
  /// An update carries an invalid version.
  static constexpr int32_t kInvalidUpdateVersionException = 22;
  /// The request came from an invalid coordinator (epoch).
  static constexpr int32_t kInvalidCoordinatorException = 23;
  /// A stale leader epoch.
  static constexpr int32_t kFencedLeaderEpochException = 24;
  /// The server timed out waiting (for example for replicas).
  static constexpr int32_t kRequestTimeOut = 25;
  /// A storage failure on the server.
  static constexpr int32_t kStorageException = 26;
  /// The server did not attempt the operation.
  static constexpr int32_t kOperationNotAttemptedException = 27;
  /// Appended on the leader, but too few in-sync replicas acknowledged.
  static constexpr int32_t kNotEnoughReplicasAfterAppendException = 28;
  /// Too few in-sync replicas to accept the write.
  static constexpr int32_t kNotEnoughReplicasException = 29;
  /// The server could not issue a file-access security token.
  static constexpr int32_t kSecurityTokenException = 30;
  /// An idempotent batch arrived with an unexpected sequence number (the writer's idempotence rules decide).
  static constexpr int32_t kOutOfOrderSequenceException = 31;
  /// An idempotent batch was already written (the writer counts it as success).
  static constexpr int32_t kDuplicateSequenceException = 32;
  /// The server does not know the idempotent writer id (the writer's idempotence rules decide).
  static constexpr int32_t kUnknownWriterIdException = 33;
  /// A fetch asked for an invalid column projection.
  static constexpr int32_t kInvalidColumnProjection = 34;
  /// A partial update names columns that cannot be updated.
  static constexpr int32_t kInvalidTargetColumn = 35;
  /// The partition does not exist (never created, or dropped).
  static constexpr int32_t kPartitionNotExists = 36;
  /// A partition operation on a table without partition keys.
  static constexpr int32_t kTableNotPartitionedException = 37;
  /// An invalid timestamp (for example a list-offsets time in the future).
  static constexpr int32_t kInvalidTimestampException = 38;
  /// A configuration value or table property is invalid.
  static constexpr int32_t kInvalidConfigException = 39;
  /// A lake operation on a cluster without lake storage.
  static constexpr int32_t kLakeStorageNotConfiguredException = 40;
  /// The key-value snapshot does not exist.
  static constexpr int32_t kKvSnapshotNotExist = 41;
  /// The partition exists already.
  static constexpr int32_t kPartitionAlreadyExists = 42;
  /// A partition spec that does not fit the table's partition keys, or an invalid value.
  static constexpr int32_t kPartitionSpecInvalidException = 43;
  /// The bucket has no leader right now.
  static constexpr int32_t kLeaderNotAvailableException = 44;
  /// The cluster's or the table's limit of partitions is reached.
  static constexpr int32_t kPartitionMaxNumException = 45;
  /// Authentication failed (wrong credentials, mechanism not enabled).
  static constexpr int32_t kAuthenticateException = 46;
  /// A security operation (ACLs) on a cluster without an authorizer.
  static constexpr int32_t kSecurityDisabledException = 47;
  /// The principal lacks the permission for the operation.
  static constexpr int32_t kAuthorizationException = 48;
  /// The cluster's limit of buckets is reached.
  static constexpr int32_t kBucketMaxNumException = 49;
  /// A stale lake-tiering epoch.
  static constexpr int32_t kFencedTieringEpochException = 50;
  /// Authentication could not complete for now; only the connection's authentication handshake retries it.
  static constexpr int32_t kRetriableAuthenticateException = 51;
  /// The servers' rack information is invalid.
  static constexpr int32_t kInvalidServerRackInfoException = 52;
  /// The lake snapshot does not exist.
  static constexpr int32_t kLakeSnapshotNotExist = 53;
  /// The lake table exists already.
  static constexpr int32_t kLakeTableAlreadyExist = 54;
  /// A new in-sync replica set contains an ineligible replica.
  static constexpr int32_t kIneligibleReplicaException = 55;
  /// An AlterTable the server refuses (a column that exists, properties and schema at once).
  static constexpr int32_t kInvalidAlterTableException = 56;
  /// Deletes on a table whose deletion is disabled.
  static constexpr int32_t kDeletionDisabledException = 57;
  /// The named server does not exist.
  static constexpr int32_t kServerNotExistException = 58;
  /// The server tag exists already (Fluss spells it SEVER).
  static constexpr int32_t kSeverTagAlreadyExistException = 59;
  /// The server tag does not exist (Fluss spells it SEVER).
  static constexpr int32_t kSeverTagNotExistException = 60;
  /// A rebalance task failed.
  static constexpr int32_t kRebalanceFailureException = 61;
  /// No rebalance task is in progress.
  static constexpr int32_t kNoRebalanceInProgressException = 62;
  /// An operation with an invalid producer id.
  static constexpr int32_t kInvalidProducerIdException = 63;
  /// A configuration error on the server.
  static constexpr int32_t kConfigException = 64;
  /// The coordinator is not the leader (coordinator high availability); the leader must be asked.
  static constexpr int32_t kNotCoordinatorLeaderException = 65;
  /// A key-value scanner session expired.
  static constexpr int32_t kScannerExpired = 66;
  /// The server does not know the scanner id.
  static constexpr int32_t kUnknownScannerId = 67;
  /// The scan request is invalid.
  static constexpr int32_t kInvalidScanRequest = 68;
  /// The bucket's or server's limit of scanner sessions is reached.
  static constexpr int32_t kTooManyScanners = 69;
  /// The tablet server refuses writes while its data disk is fuller than its write limit.
  static constexpr int32_t kDiskWriteLocked = 70;
  /// The cluster lacks capacity for more primary-key bucket leaders.
  static constexpr int32_t kInsufficientKvLeaderReplicaCapacity = 71;
  /// The key-value storage engine is under write pressure (only sent to PutKv v2 and later).
  static constexpr int32_t kStorageBackpressureException = 72;
  /// Too many writes to historical partitions are in flight.
  static constexpr int32_t kHistoricalPartitionThrottled = 73;
  /// The request's bucket routing is missing or stale (per-partition bucket counts).
  static constexpr int32_t kInvalidBucketRouting = 74;
  /// A row or Arrow batch does not match the table schema: wrong type, wrong field count, unknown column,
  /// null in a non-null column, value out of range.
  static constexpr int32_t kInvalidRow = -1001;
  /// A single record is larger than `client.writer.batch-size` (or the buffer).
  static constexpr int32_t kRecordTooLarge = -1002;
  /// `max_pending_callbacks` slots stayed taken for the whole wait budget: back-pressure, not a fault.
  static constexpr int32_t kCapacityExhausted = -1003;
  /// `client.writer.buffer.memory-size` stayed exhausted for the whole wait budget.
  static constexpr int32_t kBufferExhausted = -1004;
  /// The writer was closed (or dropped) before the operation was accepted or completed.
  static constexpr int32_t kWriterClosed = -1005;
  /// The connection was closed before the operation completed.
  static constexpr int32_t kConnectionClosed = -1006;
  /// `flush`, `close` or `wait` was called from inside a completion callback, where it would deadlock: a
  /// programming error.
  static constexpr int32_t kCalledFromCallback = -1007;
  /// The operation did not complete within `client.writer.delivery-timeout`.
  static constexpr int32_t kDeliveryTimeout = -1008;
  /// A configuration key is unknown or its value cannot be parsed.
  static constexpr int32_t kInvalidConfig = -1009;
  /// A blocking call (`flush`, `wait`, `close`) reached its own timeout; the operation may still complete
  /// later.
  static constexpr int32_t kTimeout = -1010;
  /// A table descriptor or schema is invalid (unsupported type, bad key columns).
  static constexpr int32_t kInvalidTable = -1011;
  /// A call that this table type does not support (upsert on a log table, append on a primary-key table).
  static constexpr int32_t kUnsupported = -1012;
  /// The peer sent bytes that do not follow the Fluss protocol.
  static constexpr int32_t kProtocol = -1013;
  /// A local I/O failure (embedded engine files, sockets).
  static constexpr int32_t kIo = -1014;
  /// The connection was created in a parent process before `fork()`; it cannot be used in the child.
  static constexpr int32_t kForkedProcess = -1015;
  /// An invariant broke inside the SDK. Please report it.
  static constexpr int32_t kInternal = -1016;
  /// A completion callback raised or panicked (reported to the error handler, never to the operation itself).
  static constexpr int32_t kCallbackFailed = -1017;
  /// An idempotent writer's sequence state was reset after an earlier batch of the bucket failed for good;
  /// this in-flight batch may or may not have been written, so it is not retried.
  static constexpr int32_t kSequenceReset = -1018;
  /// A blocking call was interrupted by the binding's interrupt check (Python: a signal handler raised);
  /// nothing was accepted by an interrupted admission.
  static constexpr int32_t kWaitInterrupted = -1019;
};

/// One row of the table: the code, its stable name (Result::CodeName) and whether retrying the
/// same operation can succeed (Result::IsRetriable).
struct ErrorCodeInfo {
  int32_t code;
  const char* name;
  bool retriable;
};

/// Every code in the table: server codes in numeric order, then client codes from -1001 down.
inline constexpr ErrorCodeInfo kErrorCodes[] = {
    {-1, "UNKNOWN_SERVER_ERROR", false},
    {0, "NONE", false},
    {1, "NETWORK_EXCEPTION", true},
    {2, "UNSUPPORTED_VERSION", false},
    {3, "CORRUPT_MESSAGE", true},
    {4, "DATABASE_NOT_EXIST", false},
    {5, "DATABASE_NOT_EMPTY", false},
    {6, "DATABASE_ALREADY_EXIST", false},
    {7, "TABLE_NOT_EXIST", false},
    {8, "TABLE_ALREADY_EXIST", false},
    {9, "SCHEMA_NOT_EXIST", true},
    {10, "LOG_STORAGE_EXCEPTION", true},
    {11, "KV_STORAGE_EXCEPTION", true},
    {12, "NOT_LEADER_OR_FOLLOWER", true},
    {13, "RECORD_TOO_LARGE_EXCEPTION", false},
    {14, "CORRUPT_RECORD_EXCEPTION", true},
    {15, "INVALID_TABLE_EXCEPTION", false},
    {16, "INVALID_DATABASE_EXCEPTION", false},
    {17, "INVALID_REPLICATION_FACTOR", false},
    {18, "INVALID_REQUIRED_ACKS", false},
    {19, "LOG_OFFSET_OUT_OF_RANGE_EXCEPTION", false},
    {20, "NON_PRIMARY_KEY_TABLE_EXCEPTION", false},
    {21, "UNKNOWN_TABLE_OR_BUCKET_EXCEPTION", true},
    {22, "INVALID_UPDATE_VERSION_EXCEPTION", false},
    {23, "INVALID_COORDINATOR_EXCEPTION", false},
    {24, "FENCED_LEADER_EPOCH_EXCEPTION", false},
    {25, "REQUEST_TIME_OUT", true},
    {26, "STORAGE_EXCEPTION", true},
    {27, "OPERATION_NOT_ATTEMPTED_EXCEPTION", false},
    {28, "NOT_ENOUGH_REPLICAS_AFTER_APPEND_EXCEPTION", true},
    {29, "NOT_ENOUGH_REPLICAS_EXCEPTION", true},
    {30, "SECURITY_TOKEN_EXCEPTION", false},
    {31, "OUT_OF_ORDER_SEQUENCE_EXCEPTION", false},
    {32, "DUPLICATE_SEQUENCE_EXCEPTION", false},
    {33, "UNKNOWN_WRITER_ID_EXCEPTION", false},
    {34, "INVALID_COLUMN_PROJECTION", false},
    {35, "INVALID_TARGET_COLUMN", false},
    {36, "PARTITION_NOT_EXISTS", false},
    {37, "TABLE_NOT_PARTITIONED_EXCEPTION", false},
    {38, "INVALID_TIMESTAMP_EXCEPTION", false},
    {39, "INVALID_CONFIG_EXCEPTION", false},
    {40, "LAKE_STORAGE_NOT_CONFIGURED_EXCEPTION", false},
    {41, "KV_SNAPSHOT_NOT_EXIST", false},
    {42, "PARTITION_ALREADY_EXISTS", false},
    {43, "PARTITION_SPEC_INVALID_EXCEPTION", false},
    {44, "LEADER_NOT_AVAILABLE_EXCEPTION", true},
    {45, "PARTITION_MAX_NUM_EXCEPTION", false},
    {46, "AUTHENTICATE_EXCEPTION", false},
    {47, "SECURITY_DISABLED_EXCEPTION", false},
    {48, "AUTHORIZATION_EXCEPTION", false},
    {49, "BUCKET_MAX_NUM_EXCEPTION", false},
    {50, "FENCED_TIERING_EPOCH_EXCEPTION", false},
    {51, "RETRIABLE_AUTHENTICATE_EXCEPTION", false},
    {52, "INVALID_SERVER_RACK_INFO_EXCEPTION", false},
    {53, "LAKE_SNAPSHOT_NOT_EXIST", false},
    {54, "LAKE_TABLE_ALREADY_EXIST", false},
    {55, "INELIGIBLE_REPLICA_EXCEPTION", false},
    {56, "INVALID_ALTER_TABLE_EXCEPTION", false},
    {57, "DELETION_DISABLED_EXCEPTION", false},
    {58, "SERVER_NOT_EXIST_EXCEPTION", false},
    {59, "SEVER_TAG_ALREADY_EXIST_EXCEPTION", false},
    {60, "SEVER_TAG_NOT_EXIST_EXCEPTION", false},
    {61, "REBALANCE_FAILURE_EXCEPTION", false},
    {62, "NO_REBALANCE_IN_PROGRESS_EXCEPTION", false},
    {63, "INVALID_PRODUCER_ID_EXCEPTION", false},
    {64, "CONFIG_EXCEPTION", false},
    {65, "NOT_COORDINATOR_LEADER_EXCEPTION", false},
    {66, "SCANNER_EXPIRED", false},
    {67, "UNKNOWN_SCANNER_ID", false},
    {68, "INVALID_SCAN_REQUEST", false},
    {69, "TOO_MANY_SCANNERS", false},
    {70, "DISK_WRITE_LOCKED", true},
    {71, "INSUFFICIENT_KV_LEADER_REPLICA_CAPACITY", false},
    {72, "STORAGE_BACKPRESSURE_EXCEPTION", true},
    {73, "HISTORICAL_PARTITION_THROTTLED", true},
    {74, "INVALID_BUCKET_ROUTING", false},
    {-1001, "INVALID_ROW", false},
    {-1002, "RECORD_TOO_LARGE", false},
    {-1003, "CAPACITY_EXHAUSTED", true},
    {-1004, "BUFFER_EXHAUSTED", true},
    {-1005, "WRITER_CLOSED", false},
    {-1006, "CONNECTION_CLOSED", true},
    {-1007, "CALLED_FROM_CALLBACK", false},
    {-1008, "DELIVERY_TIMEOUT", true},
    {-1009, "INVALID_CONFIG", false},
    {-1010, "TIMEOUT", true},
    {-1011, "INVALID_TABLE", false},
    {-1012, "UNSUPPORTED", false},
    {-1013, "PROTOCOL", false},
    {-1014, "IO", true},
    {-1015, "FORKED_PROCESS", false},
    {-1016, "INTERNAL", false},
    {-1017, "CALLBACK_FAILED", false},
    {-1018, "SEQUENCE_RESET", false},
    {-1019, "WAIT_INTERRUPTED", false},
};
// ----- END GENERATED ERROR CODES -----

/// The outcome of a call or of an operation: code 0 is success. [[nodiscard]]: every function
/// returning a Result warns when the caller drops it.
struct [[nodiscard]] Result {
  int32_t error_code = 0;
  std::string error_message;
  bool retriable = false;

  bool Ok() const noexcept { return error_code == 0; }
  bool IsRetriable() const noexcept { return retriable; }
  bool Is(ClientCode c) const noexcept { return error_code == static_cast<int32_t>(c); }
  /// Stable upper-snake name of the code ("WRITER_CLOSED", "NOT_LEADER_OR_FOLLOWER", "OK").
  std::string CodeName() const;
  /// "NAME (code): message", or "OK".
  std::string ToString() const;
};

// ===== data model =====
//
// A column has a DataType and a nullability. Scalar types are a TypeId plus `precision` and
// `scale` where the type has them (DECIMAL; TIME and the timestamps' fractional digits; the
// length of CHAR and BINARY). ARRAY, MAP and ROW types are nested: their parts are
// `DataType::children`, each a Column (a name, a type, a nullability), built with the factories
// DataType::Array, Map and Row:
//   ARRAY<T>        one child "element": T and whether elements may be NULL;
//   MAP<K, V>       two children, "key" (K; Fluss map keys are always NOT NULL, so the key's
//                   `nullable` is ignored) and "value" (V and whether values may be NULL);
//   ROW<a T, ...>   one child per field, in order (names unique and not blank, at least one).
// For example ARRAY<ROW<a INT, b MAP<STRING, ARRAY<BIGINT NOT NULL>>>> is
//   DataType::Array(DataType::Row({{"a", DataType::Int()},
//                                  {"b", DataType::Map(DataType::String(),
//                                                      DataType::Array(DataType::BigInt(), false))}}))
// Types nest up to 64 levels. The library checks types (Admin::CreateTable, AlterTable): a
// malformed one (an ARRAY without exactly one child, a scalar with children, a ROW without
// fields or with a repeated field name, bad parameters anywhere) is ClientCode::InvalidTable
// naming the place (column "deep" element field "b": ...). Admin::GetTableInfo returns
// nested types the same way (children named "element", "key" and "value" for ARRAY and MAP).
//
// Values of nested types are GenericRows of their parts (see GenericRow::SetArray, SetMap,
// SetRow and their getters): an ARRAY's elements in order, a MAP's keys and values (two rows of
// the same length, entry i is keys[i] -> values[i], kept in that order), a ROW's fields in
// order. Parts are set with the same typed setters, NULL with SetNull, nested values with
// SetArray/SetMap/SetRow again. When a row is written the library checks every level against
// the table: a wrong type, a NULL where the type says NOT NULL (an element, a map value, a ROW
// field), a NULL map key, two equal keys in one map and a ROW value with the wrong number of
// fields are ClientCode::InvalidRow naming the place (column "tags"[2], column "attrs"{"k"},
// column "deep"[0].b ...), and nothing is written.

enum class TypeId : int32_t {
  Boolean = 0,
  TinyInt = 1,
  SmallInt = 2,
  Int = 3,
  BigInt = 4,
  Float = 5,
  Double = 6,
  String = 7,
  Bytes = 8,
  Decimal = 9,
  Date = 10,
  Time = 11,
  Timestamp = 12,     ///< without time zone
  TimestampLtz = 13,  ///< with local time zone (an instant)
  Char = 14,          ///< CHAR(length): strings of at most `length` code points (SetString), not padded
  Binary = 15,        ///< BINARY(length): exactly `length` bytes (SetBytes)
  Array = 16,         ///< ARRAY<element>: children {element} (SetArray)
  Map = 17,           ///< MAP<key, value>: children {key, value} (SetMap)
  Row = 18,           ///< ROW<field, ...>: one child per field (SetRow)
};

struct Column;

/// A type: `{TypeId::Int, 0, 0}` and the factories below. `children` (empty for scalars) are the
/// parts of an ARRAY, MAP or ROW type (see "data model" above). Compare with == (every member,
/// children included).
struct DataType {
  TypeId id = TypeId::Int;
  int32_t precision = 0;
  int32_t scale = 0;
  std::vector<Column> children{};

  static DataType Boolean();
  static DataType TinyInt();
  static DataType SmallInt();
  static DataType Int();
  static DataType BigInt();
  static DataType Float();
  static DataType Double();
  static DataType String();
  static DataType Bytes();
  static DataType Decimal(int32_t precision, int32_t scale);
  static DataType Date();
  static DataType Time(int32_t precision = 0);
  static DataType Timestamp(int32_t precision = 6);
  static DataType TimestampLtz(int32_t precision = 6);
  /// The length travels in `precision`.
  static DataType Char(int32_t length);
  static DataType Binary(int32_t length);
  /// ARRAY<element>, elements nullable or NOT NULL.
  static DataType Array(DataType element, bool element_nullable = true);
  template <class T>
  static DataType Array(DataType, T*) = delete;  ///< a pointer is no nullability (see Admin)
  /// MAP<key, value> (the key NOT NULL), values nullable or NOT NULL.
  static DataType Map(DataType key, DataType value, bool value_nullable = true);
  template <class T>
  static DataType Map(DataType, DataType, T*) = delete;
  /// ROW<name type [NOT NULL], ...>: the fields in order.
  static DataType Row(std::vector<Column> fields);

  bool operator==(const DataType& o) const;
  bool operator!=(const DataType& o) const { return !(*this == o); }
};

/// A column of a schema, or a part of a nested type (DataType::children). `comment` (empty: none)
/// is stored with the table and comes back from Admin::GetTableInfo; parts of nested types have
/// none (the library ignores it there).
struct Column {
  std::string name;
  DataType type;
  bool nullable = true;
  std::string comment{};
  /// How a table with table property `table.merge-engine` = `aggregation` merges this non-key
  /// column when a row with the same key is written again: "sum", "max", "min", "product",
  /// "last_value", "first_value" (and their "_ignore_nulls" forms), "listagg" / "string_agg"
  /// (parameter "delimiter"), "bool_and", "bool_or", "rbm32" / "rbm64" (a BYTES column holding a
  /// serialized Roaring bitmap). Empty: the server's default, "last_value_ignore_nulls". The Rust
  /// core checks the name (INVALID_TABLE). AlterTable adds such a column on Fluss 1.0 servers; a
  /// 0.9.1 server adds it without the function, and AlterTable then returns UNSUPPORTED. The
  /// embedded engine refuses such columns (INVALID_CONFIG).
  std::string agg_function{};
  std::map<std::string, std::string> agg_params{};

  bool operator==(const Column& o) const {
    return name == o.name && type == o.type && nullable == o.nullable && comment == o.comment &&
           agg_function == o.agg_function && agg_params == o.agg_params;
  }
  bool operator!=(const Column& o) const { return !(*this == o); }
};

inline DataType DataType::Boolean() { return {TypeId::Boolean, 0, 0}; }
inline DataType DataType::TinyInt() { return {TypeId::TinyInt, 0, 0}; }
inline DataType DataType::SmallInt() { return {TypeId::SmallInt, 0, 0}; }
inline DataType DataType::Int() { return {TypeId::Int, 0, 0}; }
inline DataType DataType::BigInt() { return {TypeId::BigInt, 0, 0}; }
inline DataType DataType::Float() { return {TypeId::Float, 0, 0}; }
inline DataType DataType::Double() { return {TypeId::Double, 0, 0}; }
inline DataType DataType::String() { return {TypeId::String, 0, 0}; }
inline DataType DataType::Bytes() { return {TypeId::Bytes, 0, 0}; }
inline DataType DataType::Decimal(int32_t precision, int32_t scale) { return {TypeId::Decimal, precision, scale}; }
inline DataType DataType::Date() { return {TypeId::Date, 0, 0}; }
inline DataType DataType::Time(int32_t precision) { return {TypeId::Time, precision, 0}; }
inline DataType DataType::Timestamp(int32_t precision) { return {TypeId::Timestamp, precision, 0}; }
inline DataType DataType::TimestampLtz(int32_t precision) { return {TypeId::TimestampLtz, precision, 0}; }
inline DataType DataType::Char(int32_t length) { return {TypeId::Char, length, 0}; }
inline DataType DataType::Binary(int32_t length) { return {TypeId::Binary, length, 0}; }

inline DataType DataType::Array(DataType element, bool element_nullable) {
  DataType t{TypeId::Array, 0, 0};
  t.children.push_back(Column{"element", std::move(element), element_nullable});
  return t;
}

inline DataType DataType::Map(DataType key, DataType value, bool value_nullable) {
  DataType t{TypeId::Map, 0, 0};
  t.children.reserve(2);
  t.children.push_back(Column{"key", std::move(key), false});
  t.children.push_back(Column{"value", std::move(value), value_nullable});
  return t;
}

inline DataType DataType::Row(std::vector<Column> fields) {
  DataType t{TypeId::Row, 0, 0};
  t.children = std::move(fields);
  return t;
}

inline bool DataType::operator==(const DataType& o) const {
  return id == o.id && precision == o.precision && scale == o.scale && children == o.children;
}

class SchemaBuilder;

/// Columns plus an optional primary key (a primary key makes a primary-key table).
struct Schema {
  std::vector<Column> columns;
  std::vector<std::string> primary_keys;

  static SchemaBuilder NewBuilder();

  /// The columns of an Arrow C Data Interface schema of a record batch (a struct, one child per
  /// column) into `out` (no primary key), by the same rule as Python's Schema(pyarrow schema):
  /// List, LargeList and FixedSizeList are ARRAY, Map is MAP (keys NOT NULL), Struct is ROW (its
  /// field names), to any depth, each level NOT NULL where its field lacks ARROW_FLAG_NULLABLE;
  /// FixedSizeBinary(n) is BINARY(n); a time zone makes TIMESTAMP_LTZ; a dictionary is its
  /// values. An Arrow type with no Fluss type is ClientCode::InvalidTable naming the column.
  /// `schema` is only read: the caller still owns and releases it.
  static Result FromArrow(const ArrowSchema& schema, Schema& out);
  /// This schema as an Arrow C Data Interface schema, as Fluss's Arrow log format stores the
  /// types (what WriteArrowBatch converts batches to: CHAR is utf8, TIMESTAMP_LTZ a timestamp
  /// without a zone, ARRAY a list of "element", MAP a map of "entries" with "key" and "value").
  /// `*out` is overwritten (not released first); the caller releases it. FromArrow(ToArrow(s)) gives s's columns back, except that
  /// CHAR(n) comes back as STRING, TIMESTAMP_LTZ as TIMESTAMP and TIME/TIMESTAMP precisions as
  /// 0, 3, 6 or 9 (what Arrow keeps).
  Result ToArrow(ArrowSchema* out) const;
};

class SchemaBuilder {
 public:
  /// A column: its name, its type, whether it may be NULL (primary-key columns never are) and a
  /// comment (empty: none).
  SchemaBuilder& AddColumn(std::string name, DataType type, bool nullable = true) {
    return AddColumn(Column{std::move(name), std::move(type), nullable});
  }
  SchemaBuilder& AddColumn(std::string name, DataType type, bool nullable, std::string comment) {
    return AddColumn(Column{std::move(name), std::move(type), nullable, std::move(comment)});
  }
  SchemaBuilder& AddColumn(Column column) {
    schema_.columns.push_back(std::move(column));
    return *this;
  }
  /// Not a nullability: AddColumn(name, type, "a comment") would otherwise compile, the string
  /// converted to `nullable = true` and the comment lost. Write AddColumn(name, type, true, "a comment").
  template <class T>
  SchemaBuilder& AddColumn(std::string, DataType, T*) = delete;
  template <class T, class C>
  SchemaBuilder& AddColumn(std::string, DataType, T*, C) = delete;
  SchemaBuilder& SetPrimaryKeys(std::vector<std::string> keys) {
    schema_.primary_keys = std::move(keys);
    return *this;
  }
  Schema Build() const { return schema_; }

 private:
  Schema schema_;
};

inline SchemaBuilder Schema::NewBuilder() { return SchemaBuilder(); }

struct TableDescriptor {
  Schema schema;
  int32_t bucket_count = 0;  ///< 0: the server's default
  std::vector<std::string> bucket_keys;
  std::map<std::string, std::string> properties;
  std::string comment;
  /// Partition columns (empty: not partitioned; see "partitioned tables" below).
  std::vector<std::string> partition_keys;
};

// `database.table`: `database()` and `table()`, the names Rust (`TablePath::database`, `table`)
// and Python (`TablePath.database`, `.table`) use. The core checks the names when the path is used
// (1 to 200 ASCII letters, digits, '_' or '-', not starting with "__"; else InvalidTable).
//
// `database_name` and `table_name`, the fields of 0.1, are deprecated and go in the next minor
// release: read database() and table() instead, and construct a new path instead of assigning
// them. (They still hold the names; the pragmas keep the class's own uses of them quiet.)
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
struct TablePath {
  TablePath() = default;
  TablePath(std::string database, std::string table)
      : database_name(std::move(database)), table_name(std::move(table)) {}
  TablePath(const TablePath&) = default;
  TablePath(TablePath&&) noexcept = default;
  TablePath& operator=(const TablePath&) = default;
  TablePath& operator=(TablePath&&) noexcept = default;
  ~TablePath() = default;

  const std::string& database() const noexcept { return database_name; }
  const std::string& table() const noexcept { return table_name; }
  std::string ToString() const { return database_name + "." + table_name; }

  [[deprecated("use database()")]] std::string database_name;
  [[deprecated("use table()")]] std::string table_name;
};
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/// A table as the server knows it (Admin::GetTableInfo; Rust `Admin::get_table_info`, Python
/// `Admin.get_table_info`). `descriptor` is the one the table was created with as the core
/// normalized it: `bucket_count` is the table's number of buckets and a primary-key table's
/// `bucket_keys` are set (its primary key unless given otherwise); `descriptor.properties` are the
/// `table.*` options, `custom_properties` the free-form ones.
struct TableInfo {
  TablePath path;
  int64_t table_id = -1;  ///< changes when a table of the same name is created again
  int32_t schema_id = -1;
  TableDescriptor descriptor;
  std::map<std::string, std::string> custom_properties;
  int64_t created_time = 0;   ///< epoch milliseconds
  int64_t modified_time = 0;  ///< epoch milliseconds
};

/// A row in schema order, with a typed setter for every type the SDK writes. Setting a field
/// past the end grows the row (new fields are null). Whether the row fits the table (field
/// count, types, NOT NULL, at every level of nested values) is checked when it is written: a
/// mismatch is ClientCode::InvalidRow. Setters never fail on their own: bad input (a field index
/// or size beyond 65536 fields, a string that is not UTF-8, a null pointer with a non-zero
/// length, a decimal string that is not an integer, MAP keys and values of different lengths,
/// bad input recorded in a part given to SetArray/SetMap/SetRow) is recorded, and writing the row
/// then fails with InvalidRow naming the problem.
///
/// A GenericRow also holds the parts of a nested value (see "data model"): the elements of an
/// ARRAY, the keys or the values of a MAP, the fields of a ROW, each a "field" set with the typed
/// setters (so an ARRAY or MAP set this way has at most 65536 elements or entries; larger ones go
/// through WriteArrowBatch). SetArray, SetMap and SetRow copy the parts into the field.
class GenericRow {
 public:
  explicit GenericRow(size_t fields = 0);
  ~GenericRow();
  GenericRow(const GenericRow& other);
  GenericRow& operator=(const GenericRow& other);
  GenericRow(GenericRow&& other) noexcept;
  GenericRow& operator=(GenericRow&& other) noexcept;

  size_t FieldCount() const;
  void Resize(size_t fields);

  void SetNull(size_t i);
  void SetBool(size_t i, bool v);
  template <class T>
  void SetBool(size_t, T*) = delete;  ///< SetBool(i, "false") would set true
  void SetInt8(size_t i, int8_t v);
  void SetInt16(size_t i, int16_t v);
  void SetInt32(size_t i, int32_t v);
  void SetInt64(size_t i, int64_t v);
  void SetFloat32(size_t i, float v);
  void SetFloat64(size_t i, double v);
  void SetString(size_t i, std::string_view v);
  void SetBytes(size_t i, const uint8_t* data, size_t len);
  void SetBytes(size_t i, const std::vector<uint8_t>& v) { SetBytes(i, v.data(), v.size()); }
  /// DECIMAL(precision, scale) from its unscaled value: 12345 with scale 2 is 123.45.
  void SetDecimal(size_t i, int64_t unscaled, int32_t precision, int32_t scale);
  /// The unscaled value as decimal digits (up to 38), for values beyond int64.
  void SetDecimal(size_t i, std::string_view unscaled, int32_t precision, int32_t scale);
  void SetDate(size_t i, int32_t days_since_epoch);
  void SetTime(size_t i, int32_t millis_of_day);
  void SetTimestampNtz(size_t i, int64_t epoch_millis, int32_t nanos_of_milli = 0);
  void SetTimestampLtz(size_t i, int64_t epoch_millis, int32_t nanos_of_milli = 0);
  /// ARRAY: field j of `elements` is element j (NULL elements with SetNull).
  void SetArray(size_t i, const GenericRow& elements);
  /// MAP: entry j is keys[j] -> values[j], in that order; `keys` and `values` must have the same
  /// FieldCount (else the mismatch is recorded and the field set to NULL).
  void SetMap(size_t i, const GenericRow& keys, const GenericRow& values);
  /// ROW: field j of `fields` is the ROW's field j.
  void SetRow(size_t i, const GenericRow& fields);

  /// Read access (read-back in tests). A getter of another type than the field's returns a
  /// default (0, "", an empty row); TypeName says what the field holds.
  bool IsNull(size_t i) const;
  std::string TypeName(size_t i) const;  ///< "INT", "STRING", "ARRAY", "MAP", "ROW", "NULL", ...
  bool GetBool(size_t i) const;
  /// Integers, DATE, TIME, DECIMAL (unscaled) and timestamps (epoch millis).
  int64_t GetInt64(size_t i) const;
  double GetFloat64(size_t i) const;
  std::string GetString(size_t i) const;
  std::vector<uint8_t> GetBytes(size_t i) const;
  /// The parts of an ARRAY, MAP or ROW value as a new row (copies; empty for another value or
  /// NULL), read with the same getters: an ARRAY's elements, a MAP's keys and its values (entry j
  /// is GetMapKeys(i)[j] -> GetMapValues(i)[j]), a ROW's fields.
  GenericRow GetArray(size_t i) const;
  GenericRow GetMapKeys(size_t i) const;
  GenericRow GetMapValues(size_t i) const;
  GenericRow GetRow(size_t i) const;
  /// The value as text: numbers in decimal, strings as they are, bytes in hex, DECIMAL as
  /// `<unscaled>e-<scale>`, timestamps as `<millis>ms+<nanos>ns`, null; ARRAY as [a, b], MAP as
  /// {k: v}, ROW as (a, b), with strings quoted inside them.
  std::string ToString(size_t i) const;

 private:
  ffi::RRow& Mut();
  ffi::RRow* impl_ = nullptr;
  friend struct detail::Access;
};

// ===== completions and callbacks =====

struct BucketResult {
  std::string partition;  ///< the partition's name; empty for a table without partitions
  int32_t bucket = -1;
  int64_t rows = 0;
  int64_t base_offset = -1;  ///< log tables; -1 otherwise or on failure
  Result result;
};

/// Where an operation went and how it ended. A callback gets it by const reference; copy the
/// WriteCompletion (a copy owns everything, including the table and partition names) to keep it.
struct WriteCompletion {
  Result result;
  /// "database.table". Inside a callback it views a buffer of the library's (no allocation),
  /// valid for the duration of the call: copy it (std::string(c.table)) or copy the whole
  /// WriteCompletion to keep it. A WriteCompletion filled by WriteResult::Wait, and every copy of
  /// one, owns its name.
  std::string_view table;
  int64_t table_id = -1;
  /// The partition's name (its values joined by '$' in partition-key order, e.g. "2026-12-03" or
  /// "eu$2026-12-03"; for an Arrow batch, the partition of its first bucket); empty for a table
  /// without partitions. The same lifetime as `table`: inside a callback it views the library's
  /// copy of the name (no allocation, also none for a table without partitions), valid for the
  /// duration of the call; a copy of the WriteCompletion and one filled by WriteResult::Wait own it.
  std::string_view partition;
  /// The partition's id once the writer knew it; -1 for a table without partitions and for a
  /// partition that could not be resolved (e.g. PARTITION_NOT_EXISTS).
  int64_t partition_id = -1;
  int32_t bucket = -1;        ///< for an Arrow batch: its first bucket
  int64_t offset = -1;        ///< log tables: the record's offset; otherwise -1
  int64_t log_end_offset = -1;  ///< primary-key tables: the bucket's changelog end offset
  std::vector<BucketResult> bucket_results;  ///< multi-bucket Arrow batches: one per bucket

  bool Ok() const noexcept { return result.Ok(); }

  WriteCompletion() = default;
  ~WriteCompletion() = default;
  WriteCompletion(const WriteCompletion& o)
      : result(o.result),
        table_id(o.table_id),
        partition_id(o.partition_id),
        bucket(o.bucket),
        offset(o.offset),
        log_end_offset(o.log_end_offset),
        bucket_results(o.bucket_results),
        table_storage_(o.table),
        partition_storage_(o.partition) {
    table = table_storage_;
    partition = partition_storage_;
  }
  WriteCompletion(WriteCompletion&& o) noexcept
      : result(std::move(o.result)),
        table_id(o.table_id),
        partition_id(o.partition_id),
        bucket(o.bucket),
        offset(o.offset),
        log_end_offset(o.log_end_offset),
        bucket_results(std::move(o.bucket_results)) {
    TakeName(o.table, o.table_storage_, table, table_storage_);
    TakeName(o.partition, o.partition_storage_, partition, partition_storage_);
  }
  WriteCompletion& operator=(const WriteCompletion& o) {
    if (this != &o) {
      WriteCompletion tmp(o);
      *this = std::move(tmp);
    }
    return *this;
  }
  WriteCompletion& operator=(WriteCompletion&& o) noexcept {
    if (this != &o) {
      result = std::move(o.result);
      table_id = o.table_id;
      partition_id = o.partition_id;
      bucket = o.bucket;
      offset = o.offset;
      log_end_offset = o.log_end_offset;
      bucket_results = std::move(o.bucket_results);
      TakeName(o.table, o.table_storage_, table, table_storage_);
      TakeName(o.partition, o.partition_storage_, partition, partition_storage_);
    }
    return *this;
  }

 private:
  /// Makes (`view`, `storage`) own the name of (`from`, `from_storage`): steals it when the source
  /// owns it, else copies the view; the source's view is emptied.
  static void TakeName(std::string_view& from, std::string& from_storage, std::string_view& view,
                       std::string& storage) noexcept {
    if (from.data() == from_storage.data() && !from_storage.empty()) {
      storage = std::move(from_storage);
    } else {
      try {
        storage.assign(from.data(), from.size());
      } catch (...) {
        storage.clear();  // out of memory: an empty name rather than a dangling view
      }
    }
    view = storage;
    from = std::string_view();
  }
  std::string table_storage_;      ///< the table name when this completion owns it
  std::string partition_storage_;  ///< the partition name when this completion owns it
  friend struct detail::Access;
};

/// How many bytes of captures a WriteCallback stores inline (with no allocation).
inline constexpr size_t kWriteCallbackInlineSize = 2 * sizeof(void*);

namespace detail {
/// The operations of a stored callable (one static table per callable type).
struct CallbackOps {
  void (*call)(void* storage, const WriteCompletion& completion);
  void (*destroy)(void* storage) noexcept;
};

/// Stored inline: trivially copyable (so the library may move its bytes), small, word-aligned.
template <class F>
inline constexpr bool kCallbackInline = std::is_trivially_copyable_v<F> && sizeof(F) <= kWriteCallbackInlineSize &&
                                        alignof(F) <= alignof(void*);

template <class F>
struct InlineCallbackOps {
  static void Call(void* s, const WriteCompletion& c) { (*static_cast<F*>(s))(c); }
  static void Destroy(void*) noexcept {}  // trivially destructible
  static constexpr CallbackOps kOps{&Call, &Destroy};
};

template <class F>
struct HeapCallbackOps {
  static void Call(void* s, const WriteCompletion& c) { (**static_cast<F**>(s))(c); }
  static void Destroy(void* s) noexcept { delete *static_cast<F**>(s); }
  static constexpr CallbackOps kOps{&Call, &Destroy};
};

class SharedCallbackBase {
 public:
  virtual ~SharedCallbackBase() = default;
  virtual void Call(const WriteCompletion& completion) const = 0;
};

template <class F>
class SharedCallbackImpl final : public SharedCallbackBase {
 public:
  template <class G>
  explicit SharedCallbackImpl(G&& f) : f_(std::forward<G>(f)) {}
  void Call(const WriteCompletion& completion) const override { f_(completion); }

 private:
  F f_;
};
}  // namespace detail

/// A type-erased, move-only callable `void(const WriteCompletion&)`, called once. Unlike
/// std::function it accepts move-only callables (lambdas capturing std::unique_ptr). A callable
/// that is trivially copyable and fits kWriteCallbackInlineSize bytes (word-aligned) is stored
/// inline and costs no allocation (see WriteCallback::kInline); any other costs one.
class WriteCallback {
 public:
  /// Whether callables of type F are stored without allocating.
  template <class F>
  static constexpr bool kInline = detail::kCallbackInline<std::decay_t<F>>;

  WriteCallback() noexcept = default;
  WriteCallback(std::nullptr_t) noexcept {}  // NOLINT: implicit like std::function
  template <class F, class D = std::decay_t<F>,
            std::enable_if_t<!std::is_same_v<D, WriteCallback> && !std::is_same_v<D, std::nullptr_t> &&
                                 std::is_invocable_v<D&, const WriteCompletion&>,
                             int> = 0>
  WriteCallback(F&& f) {  // NOLINT: implicit from any callable
    if constexpr (detail::kCallbackInline<D>) {
      ::new (static_cast<void*>(storage_)) D(std::forward<F>(f));
      ops_ = &detail::InlineCallbackOps<D>::kOps;
    } else {
      D* p = new D(std::forward<F>(f));
      std::memcpy(storage_, &p, sizeof(p));
      ops_ = &detail::HeapCallbackOps<D>::kOps;
    }
  }
  /// The stored bytes are trivially copyable (an inline callable or a pointer): moving copies them.
  WriteCallback(WriteCallback&& o) noexcept : ops_(o.ops_) {
    std::memcpy(storage_, o.storage_, sizeof(storage_));
    o.ops_ = nullptr;
  }
  WriteCallback& operator=(WriteCallback&& o) noexcept {
    if (this != &o) {
      Reset();
      ops_ = o.ops_;
      std::memcpy(storage_, o.storage_, sizeof(storage_));
      o.ops_ = nullptr;
    }
    return *this;
  }
  WriteCallback(const WriteCallback&) = delete;
  WriteCallback& operator=(const WriteCallback&) = delete;
  ~WriteCallback() { Reset(); }

  explicit operator bool() const noexcept { return ops_ != nullptr; }

 private:
  void Reset() noexcept {
    if (ops_ != nullptr) std::exchange(ops_, nullptr)->destroy(storage_);
  }
  const detail::CallbackOps* ops_ = nullptr;
  alignas(void*) unsigned char storage_[kWriteCallbackInlineSize] = {};
  friend struct detail::Access;
};

/// One callable for many operations: `void(const WriteCompletion&) const`, called once per
/// operation it was passed to (Append/Upsert/Delete(row, const SharedWriteCallback&)), possibly
/// from several executor threads at once (a Sharded or User executor), so it must be thread-safe.
/// Creating one allocates once; each write with it costs no allocation and no per-record storage
/// (consecutive records of a batch share one registration). Copies share the callable; it is
/// destroyed when the last copy and the last pending operation using it are gone (possibly on an
/// executor thread). A throw is reported to the writer's error handler, like a WriteCallback's.
class SharedWriteCallback {
 public:
  SharedWriteCallback() noexcept = default;
  template <class F, class D = std::decay_t<F>,
            std::enable_if_t<!std::is_same_v<D, SharedWriteCallback> && std::is_invocable_v<const D&, const WriteCompletion&>,
                             int> = 0>
  explicit SharedWriteCallback(F&& f) {
    Init(std::unique_ptr<detail::SharedCallbackBase>(new detail::SharedCallbackImpl<D>(std::forward<F>(f))));
  }
  explicit operator bool() const noexcept { return impl_ != nullptr; }

 private:
  void Init(std::unique_ptr<detail::SharedCallbackBase> f);
  std::shared_ptr<ffi::RSharedCallback> impl_;
  friend struct detail::Access;
};

// ===== Logs =====
//
// The library logs (slow callbacks, failed batches, retries at debug level, connection events)
// to stderr by default, warnings and errors only. SetLogCallback hands every record at or above
// the level to `sink` instead (nullptr: back to stderr); the sink is called on the library's own
// threads (I/O and callback workers), so it must be quick and thread-safe; what it throws is
// swallowed. SetLogLevel changes the level at run time.
enum class LogLevel : int32_t { Off = 0, Error = 1, Warn = 2, Info = 3, Debug = 4, Trace = 5 };
struct LogRecord {
  LogLevel level = LogLevel::Warn;
  std::string target;   ///< the Rust module, e.g. "fluss_writer_dispatch::job"
  std::string message;  ///< one line
};
void SetLogCallback(std::function<void(const LogRecord&)> sink);
void SetLogLevel(LogLevel level);

/// What an error handler receives: a callback threw (or a job was dropped unrun).
struct CallbackError {
  std::string message;    ///< e.g. "C++ callback threw: boom"
  std::string operation;  ///< e.g. "write to fluss.t bucket 0 offset 17"
};

/// One completed batch with its callbacks, handed to a user CallbackExecutor. Call Run() once on
/// a thread of your choosing; destroying a Job without running it drops its callbacks unrun
/// (their slots are released and the error handler is told).
class Job {
 public:
  Job(Job&& other) noexcept : impl_(std::exchange(other.impl_, nullptr)) {}
  Job& operator=(Job&& other) noexcept {
    if (this != &other) {
      Job tmp(std::move(*this));
      impl_ = std::exchange(other.impl_, nullptr);
    }
    return *this;
  }
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  ~Job();

  void Run();
  explicit operator bool() const noexcept { return impl_ != nullptr; }

 private:
  explicit Job(ffi::RJob* impl) noexcept : impl_(impl) {}
  ffi::RJob* impl_ = nullptr;
  friend struct detail::Access;
};

/// An executor of the application's: it receives one Job per completed batch (possibly from
/// several threads at once) and must eventually Run or destroy it. Only the order of the
/// Execute calls is promised. Execute must not throw (if it does, the job is dropped).
class CallbackExecutor {
 public:
  virtual ~CallbackExecutor() = default;
  virtual void Execute(Job job) = 0;
};

enum class ExecutorKind {
  Connection,  ///< the connection's single FIFO worker (default)
  Sharded,     ///< `shards` FIFO workers owned by the writer, keyed by bucket
  User,        ///< `user_executor`
};

struct WriteCallbackOptions {
  /// Operations accepted and not yet retired; a write waits for a slot. 1..2^31-1 (checked by the
  /// core: 0 or anything larger is InvalidConfig).
  uint64_t max_pending_callbacks = 262144;
  ExecutorKind executor = ExecutorKind::Connection;
  /// For ExecutorKind::Sharded: 1..64 workers (checked by the core: anything else is InvalidConfig).
  size_t shards = 0;
  /// How long destroying the writer may block (outside a callback) while it closes: the
  /// destructor calls Close(close_timeout). When the bound passes, the destructor returns and
  /// the operations still pending complete with WriterClosed, each exactly once, on the
  /// executor afterwards (so what their callbacks capture must outlive that; call Close() with
  /// your own timeout to wait longer). 30 s by default: long enough for a healthy cluster to
  /// acknowledge what is buffered, short enough for a shutdown path (Kubernetes' default grace
  /// period). Negative: no bound (the destructor waits as long as the delivery timeout allows).
  /// Inside a callback the destructor never waits.
  std::chrono::milliseconds close_timeout = std::chrono::seconds(30);
  std::shared_ptr<CallbackExecutor> user_executor;
  /// Receives callback failures; default: a line on stderr. Called from executor threads.
  std::function<void(const CallbackError&)> error_handler;

  static WriteCallbackOptions Sharded(size_t n) {
    WriteCallbackOptions o;
    o.executor = ExecutorKind::Sharded;
    o.shards = n;
    return o;
  }
  static WriteCallbackOptions User(std::shared_ptr<CallbackExecutor> e) {
    WriteCallbackOptions o;
    o.executor = ExecutorKind::User;
    o.user_executor = std::move(e);
    return o;
  }
};

/// The handle of a write made without a callback. A write call that takes it replaces what it
/// held; a write that fails leaves it empty (Valid() is false).
class WriteResult {
 public:
  WriteResult() noexcept = default;
  ~WriteResult();
  WriteResult(WriteResult&& other) noexcept;
  WriteResult& operator=(WriteResult&& other) noexcept;
  WriteResult(const WriteResult&) = delete;
  WriteResult& operator=(const WriteResult&) = delete;

  /// Blocks until the operation completed; returns its outcome (and fills `out`). Fails at once
  /// with CalledFromCallback inside a callback, and with Timeout when `timeout` passes.
  Result Wait(WriteCompletion* out = nullptr) const;
  Result Wait(std::chrono::milliseconds timeout, WriteCompletion* out = nullptr) const;
  /// Registers a callback: before completion it runs with the operation's batch; after, it is
  /// queued on the writer's executor (never inline).
  Result OnComplete(WriteCallback callback) const;
  bool IsDone() const;
  bool Valid() const;

 private:
  // The library's handle of the operation, kept inline (no allocation per write); `set_` says
  // whether it holds one. The library checks at compile time that the handle fits.
  static constexpr std::size_t kStorageBytes = 16;
  alignas(8) unsigned char storage_[kStorageBytes] = {};
  bool set_ = false;
  friend struct detail::Access;
};

struct WriterStats {
  uint64_t pending_callbacks = 0;
  uint64_t callbacks_run = 0;
  uint64_t callback_errors = 0;
  uint64_t queued_jobs = 0;
  uint64_t buffer_bytes_in_use = 0;
  /// Acknowledgement-to-callback latency on the writer's executor (batches measured; p50, p99
  /// and max in nanoseconds; percentiles are histogram bucket tops, at most 25% high).
  uint64_t ack_to_callback_count = 0;
  uint64_t ack_to_callback_p50_nanos = 0;
  uint64_t ack_to_callback_p99_nanos = 0;
  uint64_t ack_to_callback_max_nanos = 0;
  /// Jobs a user executor dropped without running them (destroyed the Job, or Execute threw);
  /// each is also one callback_errors and one error-handler call.
  uint64_t jobs_dropped = 0;
  /// Partitions this writer keeps batches and a sender task for: those written to less than
  /// client.writer.partition-idle-timeout ago, or with writes pending; 1 without partitions.
  uint64_t open_partitions = 0;
  /// Records / encoded bytes / batches the server acknowledged; records whose batch failed for
  /// good (per code: ErrorCounts()); produce requests sent (retries included); attempts retried.
  uint64_t records_sent = 0;
  uint64_t bytes_sent = 0;
  uint64_t batches_sent = 0;
  uint64_t records_failed = 0;
  /// Write calls refused synchronously (the caller got the Result; nothing was accepted).
  uint64_t operations_rejected = 0;
  uint64_t requests_sent = 0;
  uint64_t retries = 0;
  /// Primary-key tables on Fluss 1.0 (PutKv v2): times a bucket held its next send back because the
  /// server reported storage pressure, the total time held (nanoseconds), and the highest pressure
  /// of the latest answers, in thousandths (client.writer.kv-backpressure.max-throttle).
  uint64_t kv_throttled_sends = 0;
  uint64_t kv_throttle_nanos = 0;
  uint64_t kv_pressure_permille = 0;
  /// Callbacks that ran at least client.writer.slow-callback-threshold (each also logged).
  uint64_t slow_callbacks = 0;
  /// Age of the oldest batch not yet completed (0: none).
  uint64_t oldest_pending_batch_age_nanos = 0;
  /// Produce request latency, send to answer (requests measured; p50, p99, max in nanoseconds).
  uint64_t request_latency_count = 0;
  uint64_t request_latency_p50_nanos = 0;
  uint64_t request_latency_p99_nanos = 0;
  uint64_t request_latency_max_nanos = 0;
  /// Records and encoded bytes per acknowledged batch (median, 99th percentile).
  uint64_t batch_records_p50 = 0;
  uint64_t batch_records_p99 = 0;
  uint64_t batch_bytes_p50 = 0;
  uint64_t batch_bytes_p99 = 0;
};

/// How often one error code ended batches (records_failed), caused retries, or refused write calls
/// (WriterBase::ErrorCounts).
struct CodeCount {
  int32_t code = 0;
  std::string name;
  uint64_t records_failed = 0;
  uint64_t retries = 0;
  uint64_t rejected = 0;  ///< write calls refused synchronously with this code
};

/// What one bucket of the table (or of one open partition) sent, failed and retried
/// (WriterBase::BucketCounts): to see skew between buckets and a bucket whose leader keeps failing.
struct BucketCount {
  std::string partition;  ///< the partition's name; empty for a table without partitions
  int32_t bucket = 0;
  uint64_t records_sent = 0;    ///< records the server acknowledged
  uint64_t bytes_sent = 0;      ///< encoded bytes of acknowledged batches
  uint64_t batches_sent = 0;    ///< batches the server acknowledged
  uint64_t records_failed = 0;  ///< records whose batch failed for good
  uint64_t retries = 0;         ///< batch attempts retried
};

/// Every live writer of the process as JSON, like librdkafka's statistics (docs/metrics.md,
/// "Latency histograms"):
/// \verbatim
/// {"writers":[{"client_id","table","writer","stats":{<WriterStats fields>},"errors":[<CodeCount>],
/// "buckets":[<BucketCount; partition null for a table without partitions>],
/// "histograms":{"ack_to_callback_seconds"|"request_latency_seconds"|"callback_run_seconds":
/// {"bounds":[<20 upper bounds in seconds>],"counts":[<cumulative count at or below each>],
/// "sum":<seconds>,"count":<all samples>}}}]}
/// \endverbatim
std::string MetricsJson();

/// Calls `callback` with MetricsJson() every `interval` on a thread of the library's
/// ("fluss-writer-stats"), like librdkafka's statistics callback, until Stop() or destruction
/// (which wait for a call in progress, except from inside the callback). What the callback throws
/// is swallowed.
class StatisticsReporter {
 public:
  StatisticsReporter() = default;
  ~StatisticsReporter() { Stop(); }
  StatisticsReporter(StatisticsReporter&& o) noexcept : impl_(std::exchange(o.impl_, nullptr)) {}
  StatisticsReporter& operator=(StatisticsReporter&& o) noexcept;
  StatisticsReporter(const StatisticsReporter&) = delete;
  StatisticsReporter& operator=(const StatisticsReporter&) = delete;

  static Result Start(std::chrono::milliseconds interval, std::function<void(const std::string&)> callback,
                      StatisticsReporter& out);
  void Stop() noexcept;
  bool IsRunning() const noexcept { return impl_ != nullptr; }

 private:
  ffi::RStatsReporter* impl_ = nullptr;
};

class Table;

/// Common part of both writers.
class WriterBase {
 public:
  WriterBase() noexcept = default;
  /// Closes the writer, blocking at most WriteCallbackOptions::close_timeout (see there).
  ~WriterBase();
  WriterBase(WriterBase&& other) noexcept
      : impl_(std::exchange(other.impl_, nullptr)), close_timeout_(other.close_timeout_) {}
  WriterBase& operator=(WriterBase&& other) noexcept;
  WriterBase(const WriterBase&) = delete;
  WriterBase& operator=(const WriterBase&) = delete;

  /// Returns after every operation accepted before the call has completed and its callback has
  /// returned. CalledFromCallback inside a callback; Timeout when `timeout` passes.
  Result Flush();
  Result Flush(std::chrono::milliseconds timeout);
  /// Stops accepting, flushes and drains. At the timeout, pending operations complete with
  /// WriterClosed (exactly once) and Timeout is returned. Destroying a writer closes it with
  /// WriteCallbackOptions::close_timeout (inside a callback: without waiting). Timeouts of any
  /// size are accepted (milliseconds::max() is "no bound"); negative means no bound.
  Result Close();
  Result Close(std::chrono::milliseconds timeout);
  /// Whether Close ran (or the writer is empty): writes are then refused with WriterClosed.
  bool IsClosed() const noexcept;
  WriterStats Stats() const;
  /// Records that failed for good and attempts that were retried, per error code.
  std::vector<CodeCount> ErrorCounts() const;
  /// What each bucket (of each open partition) sent, failed and retried, ordered by partition and
  /// bucket; buckets with nothing yet are left out.
  std::vector<BucketCount> BucketCounts() const;
  /// The table this writer writes to (Rust `writer.table()`), a handle sharing the writer's view
  /// of it; an empty Table (not Available) for an empty writer.
  fluss_writer::Table Table() const;
  bool Available() const noexcept { return impl_ != nullptr; }

 protected:
  ffi::RWriter* impl_ = nullptr;
  std::chrono::milliseconds close_timeout_ = std::chrono::seconds(30);
  friend struct detail::Access;
};

// Every write call comes in the three forms of the Rust and Python APIs, with the same words:
// with a callback (`Append(row, callback)`), with a result to wait on (`Append(row, result)`,
// Rust's and Python's `append(row)`), and detached (`AppendDetached(row)`: only flush or close
// tell that it ended). The returned Result is the synchronous outcome: not ok means nothing was
// accepted.

/// Appends rows and Arrow batches to a log table. Thread-safe.
class AppendWriter : public WriterBase {
 public:
  Result Append(const GenericRow& row, WriteResult& result);
  Result Append(const GenericRow& row, WriteCallback callback);
  Result Append(const GenericRow& row, const SharedWriteCallback& callback);
  Result AppendDetached(const GenericRow& row);

  /// One record batch as a struct array (Rust and Python: write_arrow_batch). Both structs are
  /// moved from (release set to NULL), also when the call fails. Admitted as a whole: an error
  /// means nothing was accepted. Once accepted, one completion reports every bucket
  /// (bucket_results).
  Result WriteArrowBatch(ArrowArray* array, ArrowSchema* schema, WriteResult& result);
  Result WriteArrowBatch(ArrowArray* array, ArrowSchema* schema, WriteCallback callback);
  Result WriteArrowBatchDetached(ArrowArray* array, ArrowSchema* schema);
  /// Every batch of a stream, written as one operation. The stream is moved from.
  Result WriteArrowBatch(ArrowArrayStream* stream, WriteResult& result);
  Result WriteArrowBatch(ArrowArrayStream* stream, WriteCallback callback);
  Result WriteArrowBatchDetached(ArrowArrayStream* stream);
};

/// Upserts and deletes rows of a primary-key table. Thread-safe.
class UpsertWriter : public WriterBase {
 public:
  Result Upsert(const GenericRow& row, WriteResult& result);
  Result Upsert(const GenericRow& row, WriteCallback callback);
  Result Upsert(const GenericRow& row, const SharedWriteCallback& callback);
  Result UpsertDetached(const GenericRow& row);
  /// `key`: the primary-key values, in primary-key order.
  Result Delete(const GenericRow& key, WriteResult& result);
  Result Delete(const GenericRow& key, WriteCallback callback);
  Result Delete(const GenericRow& key, const SharedWriteCallback& callback);
  Result DeleteDetached(const GenericRow& key);
};

// ===== connection, admin, tables =====

/// What Connection::Create takes. The address is one setting that can be given two ways: the
/// `bootstrap_servers` field or the "bootstrap.servers" property. Give either (or both with the
/// same value, compared after trimming); both with different values is InvalidConfig; neither
/// (or an empty one) is InvalidConfig too, with a message saying what to pass: the in-process
/// engine is opened only when named ("embedded" in memory, "embedded:/path" durable). No
/// environment variable is read. The core applies these rules for every binding.
///
/// Values are strings, in Fluss's forms: sizes "64mb" (a bare number is bytes), durations "30s",
/// "100ms", "2min" (a bare number is milliseconds, as the Java client reads it: "30" is 30 ms).
/// Unknown keys are InvalidConfig; a key of pyfluss / fluss-rs ("writer.batch-timeout-ms") or a
/// near miss gets a "did you mean" naming the key meant.
///
/// Authentication (SASL/PLAIN, as Fluss 0.9 has it): set "client.security.protocol" to "SASL"
/// and either "client.security.sasl.username" + "client.security.sasl.password" or
/// "client.security.sasl.jaas.config" (a Java JAAS line with username="..." password="...").
/// A refused login fails Connection::Create with AUTHENTICATE_EXCEPTION (46, not retriable)
/// within client.request-timeout; a refused operation later is AUTHORIZATION_EXCEPTION (48, not
/// retriable: in a Result, or in every callback of the refused writes). The password and the JAAS
/// line never appear in a Result's message or in the library's logs.
///
/// Untrusted servers: "client.response-max-size" (default "100mb", 1kb to 2gb) bounds every
/// response frame. A larger length prefix is never allocated: it closes that connection with a
/// retriable PROTOCOL error (-1013) and the affected requests are retried on a new connection.
struct Configuration {
  std::string bootstrap_servers;  ///< empty: not set (InvalidConfig unless the property gives it).
                                  // "embedded", "embedded:<dir>" or "host:port,..."
  std::map<std::string, std::string> properties;  ///< Fluss client keys, e.g. client.writer.batch-size

  Configuration& Set(std::string key, std::string value) {
    properties[std::move(key)] = std::move(value);
    return *this;
  }
};

class TableAppend {
 public:
  Result CreateWriter(AppendWriter& out, const WriteCallbackOptions& options = {}) const;

 private:
  std::shared_ptr<ffi::RTable> table_;
  friend class Table;
};

class TableUpsert {
 public:
  TableUpsert& PartialUpdateByName(std::vector<std::string> columns);
  TableUpsert& PartialUpdateByIndex(std::vector<size_t> columns);
  Result CreateWriter(UpsertWriter& out, const WriteCallbackOptions& options = {}) const;

 private:
  std::shared_ptr<ffi::RTable> table_;
  int32_t partial_ = 0;
  std::vector<std::string> names_;
  std::vector<size_t> indexes_;
  friend class Table;
};

/// One record read back from a bucket's log.
struct ScannedRow {
  int64_t offset = -1;
  std::string change_type;  ///< "+A" (log tables), "+I", "-U", "+U", "-D" (primary-key tables)
  GenericRow row;
};

class Table {
 public:
  Table() noexcept = default;
  TableAppend NewAppend() const;
  TableUpsert NewUpsert() const;
  bool HasPrimaryKey() const;
  int32_t BucketCount() const;
  size_t ColumnCount() const;
  std::string Path() const;
  bool Available() const noexcept { return table_ != nullptr; }

  /// Read-back through the Fluss protocol, for verification and examples (not for streaming);
  /// the same on the embedded engine and on a cluster. Transient errors (a fresh bucket without
  /// a leader yet, ...) are retried for up to client.request-timeout.
  ///
  /// Every record of `bucket` from `from_offset` up to the high watermark, in offset order
  /// (log tables: the appended rows; primary-key tables: the changelog). `out` is replaced.
  Result Scan(int32_t bucket, int64_t from_offset, std::vector<ScannedRow>& out) const;
  /// The stored row of a primary key. `key` holds the primary-key values in key order; `found`
  /// says whether the key exists (then `out` is the whole row, else `out` is empty). For a
  /// partitioned table the key holds every primary-key column, partition columns included: they
  /// name the partition (a partition that does not exist holds no key: `found` is false).
  Result Lookup(const GenericRow& key, GenericRow& out, bool& found) const;
  /// Scan of a bucket of one partition (by name, e.g. "2026-12-03" or "eu$2026-12-03") of a
  /// partitioned table. PARTITION_NOT_EXISTS (36) if it does not exist; InvalidTable for a table
  /// without partitions (and Scan is InvalidTable for a partitioned one).
  Result ScanPartition(std::string_view partition, int32_t bucket, int64_t from_offset,
                       std::vector<ScannedRow>& out) const;

 private:
  std::shared_ptr<ffi::RTable> table_;
  friend struct detail::Access;
};

// ===== access control lists (a cluster whose authorizer is on; SASL authentication) =====
//
// Who (a principal, a user authenticated with SASL/PLAIN: client.security.protocol = SASL,
// client.security.sasl.username / .password) may do what (an operation) on which resource
// (the cluster, a database or a table), from which host. Managed with Admin::CreateAcls,
// ListAcls and DropAcls. Creating and dropping ACLs needs, on each ACL's resource (for a table
// ACL: its database), ALL on a Fluss 1.0 server and ALTER on a 0.9.1 server (super users have
// both); without it the whole call is AUTHORIZATION_EXCEPTION (48), whose message names that
// requirement. On a 1.0 server DatabaseExists / TableExists answer false to a user without
// DESCRIBE on the database / table (0.9.1 does not check). Servers learn of a new or dropped ACL asynchronously (through ZooKeeper): for a moment
// after CreateAcls returns, the user may still be refused with AUTHORIZATION_EXCEPTION (48).
// The embedded engine has no authorizer: every ACL call fails with SECURITY_DISABLED_EXCEPTION
// (47). These types are plain values; the Rust core does every check and conversion (an enum
// value outside the lists below is ClientCode::InvalidConfig, a bad table name InvalidTable).

/// What an ACL is about. The numbers are Fluss's resource type codes.
enum class AclResourceType : int32_t {
  Cluster = 2,   ///< the whole cluster (the server names it "fluss-cluster"): creating databases, ...
  Database = 3,  ///< a database and its tables
  Table = 4,     ///< one table
};

/// An operation an ACL allows. The numbers are Fluss's operation codes. Any matches every
/// operation and belongs in filters only; All allows every operation.
enum class AclOperation : int32_t {
  Any = 1,
  All = 2,
  Read = 3,
  Write = 4,
  Create = 5,
  Drop = 6,
  Alter = 7,
  Describe = 8,
};

struct AclResource {
  AclResourceType type = AclResourceType::Cluster;
  std::string database_name;  ///< Database and Table resources
  std::string table_name;     ///< Table resources

  static AclResource Cluster() { return AclResource{}; }
  static AclResource Database(std::string name) {
    AclResource r;
    r.type = AclResourceType::Database;
    r.database_name = std::move(name);
    return r;
  }
  static AclResource Table(const TablePath& path) {
    AclResource r;
    r.type = AclResourceType::Table;
    r.database_name = path.database();
    r.table_name = path.table();
    return r;
  }
  bool operator==(const AclResource& o) const {
    return type == o.type && database_name == o.database_name && table_name == o.table_name;
  }
  bool operator!=(const AclResource& o) const { return !(*this == o); }
};

/// One ACL: `principal` (a user name, of type `principal_type`) may do `operation` on `resource`
/// from `host` ("*": any host). Fluss 0.9 has ALLOW ACLs only.
struct AclBinding {
  AclResource resource;
  std::string principal;
  std::string principal_type = "User";
  std::string host = "*";
  AclOperation operation = AclOperation::Read;

  /// Allow user `principal` to do `operation` on `resource` from any host.
  static AclBinding Allow(AclResource resource, std::string principal, AclOperation operation) {
    AclBinding b;
    b.resource = std::move(resource);
    b.principal = std::move(principal);
    b.operation = operation;
    return b;
  }
  bool operator==(const AclBinding& o) const {
    return resource == o.resource && principal == o.principal && principal_type == o.principal_type &&
           host == o.host && operation == o.operation;
  }
  bool operator!=(const AclBinding& o) const { return !(*this == o); }
};

/// Which ACLs ListAcls and DropAcls act on: a field left empty (std::nullopt, or
/// AclOperation::Any) matches every ACL; set fields must all match. A default AclFilter matches
/// every ACL of the cluster.
struct AclFilter {
  std::optional<AclResource> resource;  ///< exactly this resource
  std::optional<std::string> principal;  ///< a user name (principal type "User")
  std::optional<std::string> host;
  AclOperation operation = AclOperation::Any;
};

// ===== partitioned tables =====
//
// A table with TableDescriptor::partition_keys has no buckets of its own: each partition (one
// combination of partition-key values) has the table's bucket count, its own id and leaders.
// Rows are routed by their partition values; a partition is named by them, each converted as
// Fluss does (strings as they are, integers in decimal, DATE yyyy-MM-dd, ...) and joined by '$'
// in partition-key order ("eu$2026-12-03"). A value that cannot name a partition (NULL, a
// character outside [A-Za-z0-9_-], empty, longer than 200, "__"-prefixed) fails the write call
// synchronously with ClientCode::InvalidRow naming the column (nothing accepted). A write to a
// partition that does not exist creates it when "client.writer.dynamic-create-partition.enabled"
// is "true" (the default), else its operations complete with PARTITION_NOT_EXISTS (36), each
// once, other partitions unaffected. DECIMAL columns cannot be partition keys; a primary-key
// table's primary key must contain them (the bucket key then defaults to the primary key
// without them). The Fluss codes of partitions, as Result::CodeName names them:
// PARTITION_NOT_EXISTS (36), TABLE_NOT_PARTITIONED_EXCEPTION (37), PARTITION_ALREADY_EXISTS (42),
// PARTITION_SPEC_INVALID_EXCEPTION (43), PARTITION_MAX_NUM_EXCEPTION (45: the cluster's or the
// table's limit of partitions is reached).

/// One partition of a table, as Admin::ListPartitions returns it.
struct PartitionInfo {
  int64_t partition_id = -1;   ///< the server's id (a recreated partition gets a new one)
  std::string partition_name;  ///< its values joined by '$' in partition-key order
  std::map<std::string, std::string> spec;  ///< its values by partition key
};

/// One change of Admin::AlterTable. A Fluss 0.9.1 server adds nullable columns after the last one
/// (the table gets the next schema id; rows written before read back with NULL in them) and
/// refuses dropping and renaming with its own error, passed through.
struct TableChange {
  enum class Kind { AddColumn, DropColumn, RenameColumn };
  Kind kind = Kind::AddColumn;
  Column column;         ///< AddColumn: the column to add
  std::string name;      ///< DropColumn, RenameColumn: the column's name now
  std::string new_name;  ///< RenameColumn: its new name

  static TableChange AddColumn(Column c) {
    TableChange t;
    t.column = std::move(c);
    return t;
  }
  static TableChange DropColumn(std::string column) {
    TableChange t;
    t.kind = Kind::DropColumn;
    t.name = std::move(column);
    return t;
  }
  static TableChange RenameColumn(std::string from, std::string to) {
    TableChange t;
    t.kind = Kind::RenameColumn;
    t.name = std::move(from);
    t.new_name = std::move(to);
    return t;
  }
};

class Connection;

class Admin {
 public:
  Admin() noexcept = default;
  ~Admin();
  Admin(Admin&& other) noexcept : impl_(std::exchange(other.impl_, nullptr)) {}
  Admin& operator=(Admin&& other) noexcept;
  Admin(const Admin&) = delete;
  Admin& operator=(const Admin&) = delete;

  /// Every flag defaults to false, the safe side, as in Python (Rust takes each as an argument):
  /// nothing is ignored and nothing is dropped that was not named (DropDatabase of a database that
  /// still has tables is DATABASE_NOT_EMPTY (5) unless `cascade`).
  ///
  /// A flag takes a bool only: a pointer or a string literal (CreateDatabase("db", "a comment"))
  /// would otherwise convert to `true` and silently mean something else, so the deleted overloads
  /// below refuse to compile it.
  Result CreateDatabase(const std::string& name, bool ignore_if_exists = false);
  Result DropDatabase(const std::string& name, bool ignore_if_not_exists = false, bool cascade = false);
  /// Sets `out`. On a Fluss 1.0 server whose authorizer is on, false may also mean no DESCRIBE
  /// on the database (the default database `fluss` is exempt); likewise TableExists (DESCRIBE on
  /// the table). 0.9.1 servers do not check.
  Result DatabaseExists(const std::string& name, bool& out);
  /// Replace `out` with the names of every database / of the tables of `database`.
  Result ListDatabases(std::vector<std::string>& out);
  Result ListTables(const std::string& database, std::vector<std::string>& out);
  Result CreateTable(const TablePath& path, const TableDescriptor& descriptor, bool ignore_if_exists = false);
  Result DropTable(const TablePath& path, bool ignore_if_not_exists = false);
  /// Change the table's schema (see TableChange). A column that exists is
  /// INVALID_ALTER_TABLE_EXCEPTION (56); a missing table is TABLE_NOT_EXIST (7) unless
  /// `ignore_if_not_exists`. Writers created before keep writing their schema (the server accepts
  /// it; their rows get NULL in the new columns): get the table again and create a writer to write
  /// the new columns.
  Result AlterTable(const TablePath& path, const std::vector<TableChange>& changes, bool ignore_if_not_exists = false);
  Result TableExists(const TablePath& path, bool& out);
  /// Change the bucket count of a partitioned table (Fluss 1.0, ALTER_TABLE v1): partitions
  /// created from now on get `bucket_count` buckets, existing ones keep theirs; writers route each
  /// row by its own partition's count. A coordinator without ALTER_TABLE v1 (Fluss 0.9) is not
  /// asked: UNSUPPORTED naming its versions.
  Result AlterBucketCount(const TablePath& path, int32_t bucket_count, bool ignore_if_not_exists = false);
  /// Set `out` to whether the servers have `capability` ("alter_bucket_count", "historical_partitions"), decided from
  /// their ApiVersions; an unknown name is INVALID_CONFIG.
  Result ServerSupports(const std::string& capability, bool& out);
  /// Replace `out` with what the server knows of the table (left as it was on error, e.g.
  /// TABLE_NOT_EXIST).
  Result GetTableInfo(const TablePath& path, TableInfo& out);

  /// Partitions (see "partitioned tables" above). `spec` maps every partition key to its value
  /// (as a string, in the partition-name form: {"dt", "2026-12-03"}). A spec naming a column that
  /// is not a partition key, missing one, or with a value that cannot name a partition is
  /// InvalidTable naming the key, before anything is sent; a table without partition keys is
  /// TABLE_NOT_PARTITIONED (37). CreatePartition returns once the partition exists (its buckets
  /// may take a moment longer to get leaders; writers wait for them); an existing one is
  /// PARTITION_ALREADY_EXISTS (42) unless `ignore_if_exists`. DropPartition drops it and its
  /// data; a missing one is PARTITION_NOT_EXISTS (36) unless `ignore_if_not_exists`.
  /// ListPartitions replaces `out` with the table's partitions, ordered by name (empty on error).
  Result CreatePartition(const TablePath& path, const std::map<std::string, std::string>& spec,
                         bool ignore_if_exists = false);
  Result DropPartition(const TablePath& path, const std::map<std::string, std::string>& spec,
                       bool ignore_if_not_exists = false);
  Result ListPartitions(const TablePath& path, std::vector<PartitionInfo>& out);

  /// Flags that are not bools (see CreateDatabase).
  template <class T>
  Result CreateDatabase(const std::string&, T*) = delete;
  template <class T>
  Result DropDatabase(const std::string&, T*, bool = false) = delete;
  template <class T>
  Result DropDatabase(const std::string&, bool, T*) = delete;
  template <class T>
  Result CreateTable(const TablePath&, const TableDescriptor&, T*) = delete;
  template <class T>
  Result DropTable(const TablePath&, T*) = delete;
  template <class T>
  Result AlterTable(const TablePath&, const std::vector<TableChange>&, T*) = delete;
  template <class T>
  Result AlterBucketCount(const TablePath&, int32_t, T*) = delete;
  template <class T>
  Result CreatePartition(const TablePath&, const std::map<std::string, std::string>&, T*) = delete;
  template <class T>
  Result DropPartition(const TablePath&, const std::map<std::string, std::string>&, T*) = delete;

  /// ACLs (see "access control lists" above). CreateAcls creates every binding; when the server
  /// refuses one, the Result names it and the ones it accepted stay; without the permission to
  /// manage ACLs (ALL on 1.0 servers, ALTER on 0.9.1; see above) the whole call is
  /// AUTHORIZATION_EXCEPTION and nothing is created or dropped. ListAcls replaces `out` with the ACLs matching `filter`. DropAcls
  /// drops every ACL matching one of `filters` and replaces `dropped` with them (on error
  /// `dropped` is empty, though the server may have dropped some: list to find out).
  Result CreateAcls(const std::vector<AclBinding>& acls);
  Result ListAcls(const AclFilter& filter, std::vector<AclBinding>& out);
  Result DropAcls(const std::vector<AclFilter>& filters, std::vector<AclBinding>& dropped);

 private:
  ffi::RConnection* impl_ = nullptr;
  friend class Connection;
};

class Connection {
 public:
  Connection() noexcept = default;
  ~Connection();
  Connection(Connection&& other) noexcept : impl_(std::exchange(other.impl_, nullptr)) {}
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  static Result Create(const Configuration& config, Connection& out);
  Result GetAdmin(Admin& out) const;
  Result GetTable(const TablePath& path, Table& out) const;
  /// Closes every writer (each gets `timeout` to drain), stops the callback worker.
  Result Close();
  Result Close(std::chrono::milliseconds timeout);
  /// Whether Close ran (or the connection is empty).
  bool IsClosed() const noexcept;
  bool Available() const noexcept { return impl_ != nullptr; }

 private:
  ffi::RConnection* impl_ = nullptr;
  friend struct detail::Access;
};

// ===== testing: embedded engine read-back and fault injection =====

namespace testing {

struct Fault {
  enum class Kind { Error, Delay, DropConnection };
  Kind kind = Kind::Error;
  int32_t code = 0;
  std::string message;
  uint32_t times = 1;
  std::chrono::milliseconds delay{0};
  bool after_apply = false;

  /// Answer the bucket's entry with `code` without applying it.
  static Fault Error(int32_t code, std::string message, uint32_t times = 1) {
    Fault f;
    f.kind = Kind::Error;
    f.code = code;
    f.message = std::move(message);
    f.times = times;
    return f;
  }
  /// Delay the whole response.
  static Fault Delay(std::chrono::milliseconds delay, uint32_t times = 1) {
    Fault f;
    f.kind = Kind::Delay;
    f.delay = delay;
    f.times = times;
    return f;
  }
  /// Fail the whole request with NETWORK_EXCEPTION (after applying it, if `after_apply`).
  template <class T>
  static Fault DropConnection(T*, uint32_t = 1) = delete;  ///< a flag takes a bool only (see Admin)
  static Fault DropConnection(bool after_apply, uint32_t times = 1) {
    Fault f;
    f.kind = Kind::DropConnection;
    f.after_apply = after_apply;
    f.times = times;
    return f;
  }
};

/// The same shape as Table::Scan's rows.
using ScannedRow = fluss_writer::ScannedRow;

Result InjectFault(const Connection& conn, const TablePath& path, int32_t bucket, const Fault& fault);
/// The fault for the next requests addressed to the coordinator (DDL, the CreatePartition of
/// create-on-write) instead of a bucket's: an error fails the whole request before it is
/// processed. Fault::Error(65, ...) (NOT_COORDINATOR_LEADER) is what a standby coordinator of a
/// Fluss 1.0 cluster answers.
Result InjectCoordinatorFault(const Connection& conn, const Fault& fault);
Result ClearFaults(const Connection& conn);
Result Scan(const Connection& conn, const TablePath& path, int32_t bucket, int64_t from_offset,
            std::vector<ScannedRow>& out);
Result Lookup(const Connection& conn, const TablePath& path, const GenericRow& key, GenericRow& out, bool& found);
Result HighWatermark(const Connection& conn, const TablePath& path, int32_t bucket, int64_t& out);

/// The same for one partition (by name) of a partitioned table: PARTITION_NOT_EXISTS (36) if the
/// engine has no such partition. (Lookup takes the whole primary key, partition columns
/// included.) The fault applies to writes to `bucket` of that partition only.
Result InjectFault(const Connection& conn, const TablePath& path, std::string_view partition, int32_t bucket,
                   const Fault& fault);
Result ScanPartition(const Connection& conn, const TablePath& path, std::string_view partition, int32_t bucket,
                     int64_t from_offset, std::vector<ScannedRow>& out);
Result HighWatermarkPartition(const Connection& conn, const TablePath& path, std::string_view partition, int32_t bucket,
                              int64_t& out);

/// The client codes as the Rust core lists them (for the drift test against kAllClientCodes).
std::vector<int32_t> CoreClientCodes();

// Not here: the hooks of fluss-writer's own tests and benchmark (a forced panic, a dispatcher
// benchmark). Only a build with the CMake option FLUSS_WRITER_TEST_HOOKS has them, declared in a
// header of the source tree (cpp/test_hooks) that is not installed.

}  // namespace testing
}  // namespace fluss_writer
