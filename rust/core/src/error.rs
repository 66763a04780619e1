//! One error type for the whole SDK.
//!
//! An [`Error`] carries a numeric [`code`](Error::code), a message and whether retrying the same
//! operation can succeed ([`is_retriable`](Error::is_retriable)). Codes come from two disjoint
//! ranges:
//!
//! * **Fluss server codes** (`-1..=999`) pass through unchanged with their Fluss meaning (see
//!   [`ServerCode`]); a server that answers `NOT_LEADER_OR_FOLLOWER` reaches the user as code 12.
//! * **Client codes** (`-1999..=-1001`, see [`ClientCode`]) name causes that happen inside the
//!   SDK: bad input, admission, closed writers, timeouts. They can never collide with Fluss's
//!   codes, which are `-1` and the non-negative integers.
//!
//! One table below (`code_table!`) holds every code's number, name, retriability and meaning:
//! every code Fluss 0.9 and 1.0 define (their Java `Errors`; tests-interop checks the rows against
//! the Java clients) and every client code. [`error_codes`] lists it for the bindings;
//! docs/error-codes.md, Python's `ErrorCode` and C++'s `ErrorCode` are generated from it
//! (rust/core/tests/error_code_table.rs). Retries read it through [`Error::is_retriable`].

use std::fmt;

/// Whether a code names a Fluss server error or an error raised inside the SDK.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodeKind {
    /// A Fluss server code (`-1` and up), passed through unchanged.
    Server,
    /// A client code (`-1999..=-1001`), see [`ClientCode`].
    Client,
}

impl CodeKind {
    /// `"server"` or `"client"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CodeKind::Server => "server",
            CodeKind::Client => "client",
        }
    }
}

/// One row of the error-code table ([`error_codes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeInfo {
    /// The number an [`Error`] carries.
    pub code: i32,
    /// Stable upper-snake name (Fluss's `Errors` name for server codes).
    pub name: &'static str,
    /// Server or client.
    pub kind: CodeKind,
    /// Whether retrying the same operation can succeed (for server codes: Fluss's exception
    /// extends `RetriableException`).
    pub retriable: bool,
    /// Server codes only: the error means the client's metadata (bucket leaders) is stale, so
    /// the table's metadata is refreshed before a retry (Fluss's `InvalidMetadataException`).
    pub invalid_metadata: bool,
    /// The first Fluss version that defines the server code (`"0.9"` or `"1.0"`); the SDK
    /// version for client codes (`"0.1"`).
    pub since: &'static str,
    /// One line on what the code means.
    pub description: &'static str,
}

/// Each table generates its enum, `ALL`, `TABLE` (the rows) and the lookups, so that a code's
/// name, retriability and description live in one row.
macro_rules! code_table {
    (
        $(#[$meta:meta])*
        enum $Enum:ident, kind $kind:ident;
        $( $code:literal $Variant:ident $name:literal $retriable:literal $metadata:literal $since:literal $desc:literal; )+
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(i32)]
        #[non_exhaustive]
        pub enum $Enum {
            $( #[doc = $desc] $Variant = $code, )+
        }

        impl $Enum {
            /// Every code of this table, in numeric table order.
            pub const ALL: [$Enum; [$($code),+].len()] = [$($Enum::$Variant),+];

            /// The table rows, in the order of [`ALL`](Self::ALL).
            pub const TABLE: [CodeInfo; [$($code),+].len()] = [$(CodeInfo {
                code: $code,
                name: $name,
                kind: CodeKind::$kind,
                retriable: $retriable,
                invalid_metadata: $metadata,
                since: $since,
                description: $desc,
            }),+];

            /// The number.
            pub const fn code(self) -> i32 {
                self as i32
            }

            /// This code's table row.
            pub fn info(self) -> &'static CodeInfo {
                match self {
                    $( $Enum::$Variant => &Self::TABLE[Self::index($code)], )+
                }
            }

            const fn index(code: i32) -> usize {
                let mut i = 0;
                while i < Self::TABLE.len() {
                    if Self::TABLE[i].code == code {
                        return i;
                    }
                    i += 1;
                }
                panic!("code missing from its own table")
            }

            /// Stable upper-snake name.
            pub fn name(self) -> &'static str {
                self.info().name
            }

            /// Whether retrying the same operation later can succeed.
            pub fn is_retriable(self) -> bool {
                self.info().retriable
            }

            /// The code for a number, if this table has it.
            pub fn from_code(code: i32) -> Option<$Enum> {
                match code {
                    $( $code => Some($Enum::$Variant), )+
                    _ => None,
                }
            }
        }
    };
}

code_table! {
    /// Errors raised inside the SDK. The discriminant is the wire-visible code.
    enum ClientCode, kind Client;
    -1001 InvalidRow "INVALID_ROW" false false "0.1"
        "A row or Arrow batch does not match the table schema: wrong type, wrong field count, unknown column, null in a non-null column, value out of range.";
    -1002 RecordTooLarge "RECORD_TOO_LARGE" false false "0.1"
        "A single record is larger than `client.writer.batch-size` (or the buffer).";
    -1003 CapacityExhausted "CAPACITY_EXHAUSTED" true false "0.1"
        "`max_pending_callbacks` slots stayed taken for the whole wait budget: back-pressure, not a fault.";
    -1004 BufferExhausted "BUFFER_EXHAUSTED" true false "0.1"
        "`client.writer.buffer.memory-size` stayed exhausted for the whole wait budget.";
    -1005 WriterClosed "WRITER_CLOSED" false false "0.1"
        "The writer was closed (or dropped) before the operation was accepted or completed.";
    -1006 ConnectionClosed "CONNECTION_CLOSED" true false "0.1"
        "The connection was closed before the operation completed.";
    -1007 CalledFromCallback "CALLED_FROM_CALLBACK" false false "0.1"
        "`flush`, `close` or `wait` was called from inside a completion callback, where it would deadlock: a programming error.";
    -1008 DeliveryTimeout "DELIVERY_TIMEOUT" true false "0.1"
        "The operation did not complete within `client.writer.delivery-timeout`.";
    -1009 InvalidConfig "INVALID_CONFIG" false false "0.1"
        "A configuration key is unknown or its value cannot be parsed.";
    -1010 Timeout "TIMEOUT" true false "0.1"
        "A blocking call (`flush`, `wait`, `close`) reached its own timeout; the operation may still complete later.";
    -1011 InvalidTable "INVALID_TABLE" false false "0.1"
        "A table descriptor or schema is invalid (unsupported type, bad key columns).";
    -1012 Unsupported "UNSUPPORTED" false false "0.1"
        "A call that this table type does not support (upsert on a log table, append on a primary-key table).";
    -1013 Protocol "PROTOCOL" false false "0.1"
        "The peer sent bytes that do not follow the Fluss protocol.";
    -1014 Io "IO" true false "0.1"
        "A local I/O failure (embedded engine files, sockets).";
    -1015 ForkedProcess "FORKED_PROCESS" false false "0.1"
        "The connection was created in a parent process before `fork()`; it cannot be used in the child.";
    -1016 Internal "INTERNAL" false false "0.1"
        "An invariant broke inside the SDK. Please report it.";
    -1017 CallbackFailed "CALLBACK_FAILED" false false "0.1"
        "A completion callback raised or panicked (reported to the error handler, never to the operation itself).";
    -1018 SequenceReset "SEQUENCE_RESET" false false "0.1"
        "An idempotent writer's sequence state was reset after an earlier batch of the bucket failed for good; this in-flight batch may or may not have been written, so it is not retried.";
    -1019 Interrupted "WAIT_INTERRUPTED" false false "0.1"
        "A blocking call was interrupted by the binding's interrupt check (Python: a signal handler raised); nothing was accepted by an interrupted admission.";
}

code_table! {
    /// Every error code a Fluss 0.9 or 1.0 server defines (Fluss's `Errors`), with its
    /// retriability. A code a newer server sends and this table lacks passes through as a plain
    /// number: not retriable, named `SERVER_ERROR`, its number in the message.
    enum ServerCode, kind Server;
    -1 UnknownServerError "UNKNOWN_SERVER_ERROR" false false "0.9" "An unexpected error on the server.";
    0 NoError "NONE" false false "0.9" "No error.";
    1 Network "NETWORK_EXCEPTION" true true "0.9" "The connection failed or a request timed out (also the client's mapping of lost connections).";
    2 UnsupportedVersion "UNSUPPORTED_VERSION" false false "0.9" "The server does not support this version of the request.";
    3 CorruptMessage "CORRUPT_MESSAGE" true false "0.9" "A message failed its size or format checks.";
    4 DatabaseNotExist "DATABASE_NOT_EXIST" false false "0.9" "The database does not exist.";
    5 DatabaseNotEmpty "DATABASE_NOT_EMPTY" false false "0.9" "The database still has tables (drop without cascade).";
    6 DatabaseAlreadyExist "DATABASE_ALREADY_EXIST" false false "0.9" "A database of that name exists.";
    7 TableNotExist "TABLE_NOT_EXIST" false false "0.9" "The table does not exist.";
    8 TableAlreadyExist "TABLE_ALREADY_EXIST" false false "0.9" "A table of that name exists.";
    9 SchemaNotExist "SCHEMA_NOT_EXIST" true false "0.9" "The schema id is unknown to the server.";
    10 LogStorage "LOG_STORAGE_EXCEPTION" true false "0.9" "The server's log storage failed.";
    11 KvStorage "KV_STORAGE_EXCEPTION" true false "0.9" "The server's key-value storage failed.";
    12 NotLeaderOrFollower "NOT_LEADER_OR_FOLLOWER" true true "0.9" "The server is not the bucket's leader: metadata is stale.";
    13 RecordTooLarge "RECORD_TOO_LARGE_EXCEPTION" false false "0.9" "A record or batch exceeds the server's limit.";
    14 CorruptRecord "CORRUPT_RECORD_EXCEPTION" true false "0.9" "A record failed its CRC or format checks on the server.";
    15 InvalidTable "INVALID_TABLE_EXCEPTION" false false "0.9" "The table definition is invalid.";
    16 InvalidDatabase "INVALID_DATABASE_EXCEPTION" false false "0.9" "The database name is invalid.";
    17 InvalidReplicationFactor "INVALID_REPLICATION_FACTOR" false false "0.9" "The replication factor exceeds the number of tablet servers.";
    18 InvalidRequiredAcks "INVALID_REQUIRED_ACKS" false false "0.9" "The produce request's acks value is not -1, 0 or 1.";
    19 LogOffsetOutOfRange "LOG_OFFSET_OUT_OF_RANGE_EXCEPTION" false false "0.9" "A fetch offset outside the log.";
    20 NonPrimaryKeyTable "NON_PRIMARY_KEY_TABLE_EXCEPTION" false false "0.9" "A key operation on a table without a primary key.";
    21 UnknownTableOrBucket "UNKNOWN_TABLE_OR_BUCKET_EXCEPTION" true true "0.9" "The server does not host this table or bucket: metadata is stale.";
    22 InvalidUpdateVersion "INVALID_UPDATE_VERSION_EXCEPTION" false false "0.9" "An update carries an invalid version.";
    23 InvalidCoordinator "INVALID_COORDINATOR_EXCEPTION" false false "0.9" "The request came from an invalid coordinator (epoch).";
    24 FencedLeaderEpoch "FENCED_LEADER_EPOCH_EXCEPTION" false false "0.9" "A stale leader epoch.";
    25 RequestTimeOut "REQUEST_TIME_OUT" true false "0.9" "The server timed out waiting (for example for replicas).";
    26 Storage "STORAGE_EXCEPTION" true false "0.9" "A storage failure on the server.";
    27 OperationNotAttempted "OPERATION_NOT_ATTEMPTED_EXCEPTION" false false "0.9" "The server did not attempt the operation.";
    28 NotEnoughReplicasAfterAppend "NOT_ENOUGH_REPLICAS_AFTER_APPEND_EXCEPTION" true false "0.9" "Appended on the leader, but too few in-sync replicas acknowledged.";
    29 NotEnoughReplicas "NOT_ENOUGH_REPLICAS_EXCEPTION" true false "0.9" "Too few in-sync replicas to accept the write.";
    30 SecurityToken "SECURITY_TOKEN_EXCEPTION" false false "0.9" "The server could not issue a file-access security token.";
    31 OutOfOrderSequence "OUT_OF_ORDER_SEQUENCE_EXCEPTION" false false "0.9" "An idempotent batch arrived with an unexpected sequence number (the writer's idempotence rules decide).";
    32 DuplicateSequence "DUPLICATE_SEQUENCE_EXCEPTION" false false "0.9" "An idempotent batch was already written (the writer counts it as success).";
    33 UnknownWriterId "UNKNOWN_WRITER_ID_EXCEPTION" false false "0.9" "The server does not know the idempotent writer id (the writer's idempotence rules decide).";
    34 InvalidColumnProjection "INVALID_COLUMN_PROJECTION" false false "0.9" "A fetch asked for an invalid column projection.";
    35 InvalidTargetColumn "INVALID_TARGET_COLUMN" false false "0.9" "A partial update names columns that cannot be updated.";
    36 PartitionNotExists "PARTITION_NOT_EXISTS" false false "0.9" "The partition does not exist (never created, or dropped).";
    37 TableNotPartitioned "TABLE_NOT_PARTITIONED_EXCEPTION" false false "0.9" "A partition operation on a table without partition keys.";
    38 InvalidTimestamp "INVALID_TIMESTAMP_EXCEPTION" false false "0.9" "An invalid timestamp (for example a list-offsets time in the future).";
    39 InvalidConfig "INVALID_CONFIG_EXCEPTION" false false "0.9" "A configuration value or table property is invalid.";
    40 LakeStorageNotConfigured "LAKE_STORAGE_NOT_CONFIGURED_EXCEPTION" false false "0.9" "A lake operation on a cluster without lake storage.";
    41 KvSnapshotNotExist "KV_SNAPSHOT_NOT_EXIST" false false "0.9" "The key-value snapshot does not exist.";
    42 PartitionAlreadyExists "PARTITION_ALREADY_EXISTS" false false "0.9" "The partition exists already.";
    43 PartitionSpecInvalid "PARTITION_SPEC_INVALID_EXCEPTION" false false "0.9" "A partition spec that does not fit the table's partition keys, or an invalid value.";
    44 LeaderNotAvailable "LEADER_NOT_AVAILABLE_EXCEPTION" true true "0.9" "The bucket has no leader right now.";
    45 PartitionMaxNum "PARTITION_MAX_NUM_EXCEPTION" false false "0.9" "The cluster's or the table's limit of partitions is reached.";
    46 Authenticate "AUTHENTICATE_EXCEPTION" false false "0.9" "Authentication failed (wrong credentials, mechanism not enabled).";
    47 SecurityDisabled "SECURITY_DISABLED_EXCEPTION" false false "0.9" "A security operation (ACLs) on a cluster without an authorizer.";
    48 Authorization "AUTHORIZATION_EXCEPTION" false false "0.9" "The principal lacks the permission for the operation.";
    49 BucketMaxNum "BUCKET_MAX_NUM_EXCEPTION" false false "0.9" "The cluster's limit of buckets is reached.";
    50 FencedTieringEpoch "FENCED_TIERING_EPOCH_EXCEPTION" false false "0.9" "A stale lake-tiering epoch.";
    51 RetriableAuthenticate "RETRIABLE_AUTHENTICATE_EXCEPTION" false false "0.9" "Authentication could not complete for now; only the connection's authentication handshake retries it.";
    52 InvalidServerRackInfo "INVALID_SERVER_RACK_INFO_EXCEPTION" false false "0.9" "The servers' rack information is invalid.";
    53 LakeSnapshotNotExist "LAKE_SNAPSHOT_NOT_EXIST" false false "0.9" "The lake snapshot does not exist.";
    54 LakeTableAlreadyExist "LAKE_TABLE_ALREADY_EXIST" false false "0.9" "The lake table exists already.";
    55 IneligibleReplica "INELIGIBLE_REPLICA_EXCEPTION" false false "0.9" "A new in-sync replica set contains an ineligible replica.";
    56 InvalidAlterTable "INVALID_ALTER_TABLE_EXCEPTION" false false "0.9" "An AlterTable the server refuses (a column that exists, properties and schema at once).";
    57 DeletionDisabled "DELETION_DISABLED_EXCEPTION" false false "0.9" "Deletes on a table whose deletion is disabled.";
    58 ServerNotExist "SERVER_NOT_EXIST_EXCEPTION" false false "0.9" "The named server does not exist.";
    59 SeverTagAlreadyExist "SEVER_TAG_ALREADY_EXIST_EXCEPTION" false false "0.9" "The server tag exists already (Fluss spells it SEVER).";
    60 SeverTagNotExist "SEVER_TAG_NOT_EXIST_EXCEPTION" false false "0.9" "The server tag does not exist (Fluss spells it SEVER).";
    61 RebalanceFailure "REBALANCE_FAILURE_EXCEPTION" false false "0.9" "A rebalance task failed.";
    62 NoRebalanceInProgress "NO_REBALANCE_IN_PROGRESS_EXCEPTION" false false "0.9" "No rebalance task is in progress.";
    63 InvalidProducerId "INVALID_PRODUCER_ID_EXCEPTION" false false "0.9" "An operation with an invalid producer id.";
    64 Config "CONFIG_EXCEPTION" false false "1.0" "A configuration error on the server.";
    65 NotCoordinatorLeader "NOT_COORDINATOR_LEADER_EXCEPTION" false false "1.0" "The coordinator is not the leader (coordinator high availability); the leader must be asked.";
    66 ScannerExpired "SCANNER_EXPIRED" false false "1.0" "A key-value scanner session expired.";
    67 UnknownScannerId "UNKNOWN_SCANNER_ID" false false "1.0" "The server does not know the scanner id.";
    68 InvalidScanRequest "INVALID_SCAN_REQUEST" false false "1.0" "The scan request is invalid.";
    69 TooManyScanners "TOO_MANY_SCANNERS" false false "1.0" "The bucket's or server's limit of scanner sessions is reached.";
    70 DiskWriteLocked "DISK_WRITE_LOCKED" true false "1.0" "The tablet server refuses writes while its data disk is fuller than its write limit.";
    71 InsufficientKvLeaderReplicaCapacity "INSUFFICIENT_KV_LEADER_REPLICA_CAPACITY" false false "1.0" "The cluster lacks capacity for more primary-key bucket leaders.";
    72 StorageBackpressure "STORAGE_BACKPRESSURE_EXCEPTION" true false "1.0" "The key-value storage engine is under write pressure (only sent to PutKv v2 and later).";
    73 HistoricalPartitionThrottled "HISTORICAL_PARTITION_THROTTLED" true false "1.0" "Too many writes to historical partitions are in flight.";
    74 InvalidBucketRouting "INVALID_BUCKET_ROUTING" false false "1.0" "The request's bucket routing is missing or stale (per-partition bucket counts).";
}

impl ServerCode {
    /// Whether the error means the client's metadata (bucket leaders) is stale.
    pub fn is_invalid_metadata(self) -> bool {
        self.info().invalid_metadata
    }
}

/// Every row of the error-code table: the server codes in numeric order, then the client codes
/// from -1001 down. The bindings build their code lists (Python `ErrorCode`, C++ `ErrorCode`)
/// and docs/error-codes.md from it.
pub fn error_codes() -> impl Iterator<Item = &'static CodeInfo> {
    ServerCode::TABLE.iter().chain(ClientCode::TABLE.iter())
}

/// The table row of a code, if the table has it.
pub fn code_info(code: i32) -> Option<&'static CodeInfo> {
    match ClientCode::from_code(code) {
        Some(c) => Some(c.info()),
        None => ServerCode::from_code(code).map(ServerCode::info),
    }
}

/// Fluss server codes as plain `i32` constants (the numbers of [`ServerCode`], for code that
/// compares [`Error::code`]), and lookups by number that also answer for codes the table lacks.
pub struct FlussCode;

impl FlussCode {
    /// An unexpected error on the server.
    pub const UNKNOWN_SERVER_ERROR: i32 = ServerCode::UnknownServerError.code();
    /// No error.
    pub const NONE: i32 = ServerCode::NoError.code();
    /// The connection failed or a request timed out (retriable).
    pub const NETWORK_EXCEPTION: i32 = ServerCode::Network.code();
    /// The server does not support the version of a request that its content needs.
    pub const UNSUPPORTED_VERSION: i32 = ServerCode::UnsupportedVersion.code();
    /// A message failed its checks (retriable).
    pub const CORRUPT_MESSAGE: i32 = ServerCode::CorruptMessage.code();
    /// The database does not exist.
    pub const DATABASE_NOT_EXIST: i32 = ServerCode::DatabaseNotExist.code();
    /// The database still has tables (drop without cascade).
    pub const DATABASE_NOT_EMPTY: i32 = ServerCode::DatabaseNotEmpty.code();
    /// A database of that name exists.
    pub const DATABASE_ALREADY_EXIST: i32 = ServerCode::DatabaseAlreadyExist.code();
    /// The table does not exist.
    pub const TABLE_NOT_EXIST: i32 = ServerCode::TableNotExist.code();
    /// A table of that name exists.
    pub const TABLE_ALREADY_EXIST: i32 = ServerCode::TableAlreadyExist.code();
    /// The schema id is unknown to the server (retriable).
    pub const SCHEMA_NOT_EXIST: i32 = ServerCode::SchemaNotExist.code();
    /// The server's log storage failed (retriable).
    pub const LOG_STORAGE_EXCEPTION: i32 = ServerCode::LogStorage.code();
    /// The server's key-value storage failed (retriable).
    pub const KV_STORAGE_EXCEPTION: i32 = ServerCode::KvStorage.code();
    /// The key-value storage is under write pressure (retriable; PutKv v2 and later): back-pressure
    /// at its strongest (pressure 1).
    pub const STORAGE_BACKPRESSURE: i32 = ServerCode::StorageBackpressure.code();
    /// The server is not the bucket's leader: metadata is stale (retriable).
    pub const NOT_LEADER_OR_FOLLOWER: i32 = ServerCode::NotLeaderOrFollower.code();
    /// A record or batch exceeds the server's limit.
    pub const RECORD_TOO_LARGE: i32 = ServerCode::RecordTooLarge.code();
    /// A record failed its CRC or format checks on the server (retriable).
    pub const CORRUPT_RECORD: i32 = ServerCode::CorruptRecord.code();
    /// The table definition is invalid.
    pub const INVALID_TABLE: i32 = ServerCode::InvalidTable.code();
    /// The database name is invalid.
    pub const INVALID_DATABASE: i32 = ServerCode::InvalidDatabase.code();
    /// A key operation on a table without a primary key.
    pub const NON_PRIMARY_KEY_TABLE: i32 = ServerCode::NonPrimaryKeyTable.code();
    /// The server does not host this table or bucket (retriable: metadata is stale).
    pub const UNKNOWN_TABLE_OR_BUCKET: i32 = ServerCode::UnknownTableOrBucket.code();
    /// The server timed out waiting (e.g. for replicas) (retriable).
    pub const REQUEST_TIME_OUT: i32 = ServerCode::RequestTimeOut.code();
    /// A storage failure on the server (retriable).
    pub const STORAGE_EXCEPTION: i32 = ServerCode::Storage.code();
    /// Appended on the leader, but too few replicas acknowledged (retriable).
    pub const NOT_ENOUGH_REPLICAS_AFTER_APPEND: i32 = ServerCode::NotEnoughReplicasAfterAppend.code();
    /// Too few in-sync replicas to accept the write (retriable).
    pub const NOT_ENOUGH_REPLICAS: i32 = ServerCode::NotEnoughReplicas.code();
    /// An idempotent batch arrived with an unexpected sequence number.
    pub const OUT_OF_ORDER_SEQUENCE: i32 = ServerCode::OutOfOrderSequence.code();
    /// An idempotent batch was already written (the client counts it as success).
    pub const DUPLICATE_SEQUENCE: i32 = ServerCode::DuplicateSequence.code();
    /// The server does not know the idempotent writer id.
    pub const UNKNOWN_WRITER_ID: i32 = ServerCode::UnknownWriterId.code();
    /// A partial update names columns that cannot be updated.
    pub const INVALID_TARGET_COLUMN: i32 = ServerCode::InvalidTargetColumn.code();
    /// A configuration value is invalid.
    pub const INVALID_CONFIG: i32 = ServerCode::InvalidConfig.code();
    /// The partition does not exist (never created, or dropped).
    pub const PARTITION_NOT_EXISTS: i32 = ServerCode::PartitionNotExists.code();
    /// A partition operation on a table without partition keys.
    pub const TABLE_NOT_PARTITIONED: i32 = ServerCode::TableNotPartitioned.code();
    /// The partition exists already.
    pub const PARTITION_ALREADY_EXISTS: i32 = ServerCode::PartitionAlreadyExists.code();
    /// A partition spec that does not fit the table's partition keys, or an invalid value.
    pub const PARTITION_SPEC_INVALID: i32 = ServerCode::PartitionSpecInvalid.code();
    /// The cluster's (`max.partition.num`) or the table's limit of partitions is reached.
    pub const PARTITION_MAX_NUM: i32 = ServerCode::PartitionMaxNum.code();
    /// The bucket has no leader right now (retriable).
    pub const LEADER_NOT_AVAILABLE: i32 = ServerCode::LeaderNotAvailable.code();
    /// Authentication failed (wrong credentials, mechanism not enabled).
    pub const AUTHENTICATE_EXCEPTION: i32 = ServerCode::Authenticate.code();
    /// A security operation (ACLs) on a cluster without an authorizer.
    pub const SECURITY_DISABLED: i32 = ServerCode::SecurityDisabled.code();
    /// The principal lacks the permission for the operation.
    pub const AUTHORIZATION_EXCEPTION: i32 = ServerCode::Authorization.code();
    /// Authentication could not complete for now (the authentication handshake retries it).
    pub const RETRIABLE_AUTHENTICATE_EXCEPTION: i32 = ServerCode::RetriableAuthenticate.code();
    /// An AlterTable the server refuses (a column that exists, properties and schema at once).
    pub const INVALID_ALTER_TABLE: i32 = ServerCode::InvalidAlterTable.code();
    /// A write routed by a bucket count its partition does not have, or without one once the
    /// table's bucket count was changed (Fluss 1.0).
    pub const INVALID_BUCKET_ROUTING: i32 = ServerCode::InvalidBucketRouting.code();
    /// A standby coordinator refused the request before processing it (Fluss 1.0 coordinator
    /// high availability): the leader must be asked.
    pub const NOT_COORDINATOR_LEADER: i32 = ServerCode::NotCoordinatorLeader.code();

    /// Whether Fluss marks this server code retriable (its exception extends
    /// `RetriableException`); `false` for a code the table lacks. Codes 31-33 follow the
    /// idempotence rules instead.
    pub fn is_retriable(code: i32) -> bool {
        ServerCode::from_code(code).is_some_and(ServerCode::is_retriable)
    }

    /// Whether the error means the client's metadata (bucket leaders) is stale.
    pub fn is_invalid_metadata(code: i32) -> bool {
        ServerCode::from_code(code).is_some_and(ServerCode::is_invalid_metadata)
    }

    /// Every server code of the table with its name, in numeric order (for bindings).
    pub fn named() -> impl Iterator<Item = (i32, &'static str)> {
        ServerCode::TABLE.iter().map(|i| (i.code, i.name))
    }

    /// Upper-snake name of a server code, for messages; `SERVER_ERROR` for a code the table
    /// lacks (a newer server's).
    pub fn name(code: i32) -> &'static str {
        ServerCode::from_code(code).map_or("SERVER_ERROR", ServerCode::name)
    }
}

/// The SDK's error: a code, a message, and whether a retry can succeed.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    code: i32,
    message: String,
    retriable: bool,
}

/// `Result` with the SDK's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A client-side error.
    pub fn client(code: ClientCode, message: impl Into<String>) -> Error {
        Error { code: code as i32, message: message.into(), retriable: code.is_retriable() }
    }

    /// A Fluss server error, passed through unchanged. Retriability follows Fluss's classes.
    pub fn server(code: i32, message: impl Into<String>) -> Error {
        let message = message.into();
        if code < FlussCode::UNKNOWN_SERVER_ERROR {
            // Fluss codes are -1 and up; a lower one would pose as a client code.
            return Error::protocol(format!("the server sent error code {code}, outside Fluss's range (-1 and up): {message}"));
        }
        let message = match ServerCode::from_code(code) {
            _ if !message.is_empty() => message,
            Some(known) => known.name().to_string(),
            // A newer server's code: not retriable (nothing says a retry can succeed), and the
            // message keeps its number.
            None => format!("server error code {code}, which this version of fluss-writer does not know"),
        };
        Error { code, message, retriable: FlussCode::is_retriable(code) }
    }

    /// Rebuild an error from its parts (bindings, embedded engine replies).
    pub fn from_parts(code: i32, message: impl Into<String>, retriable: bool) -> Error {
        Error { code, message: message.into(), retriable }
    }

    /// Shorthand for [`ClientCode::InvalidRow`].
    pub fn invalid_row(message: impl Into<String>) -> Error {
        Error::client(ClientCode::InvalidRow, message)
    }

    /// Shorthand for [`ClientCode::Protocol`].
    pub fn protocol(message: impl Into<String>) -> Error {
        Error::client(ClientCode::Protocol, message)
    }

    /// Shorthand for [`ClientCode::Internal`].
    pub fn internal(message: impl Into<String>) -> Error {
        Error::client(ClientCode::Internal, message)
    }

    /// The numeric code: a Fluss server code or a [`ClientCode`].
    pub fn code(&self) -> i32 {
        self.code
    }

    /// The human-readable message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether retrying the same operation can succeed.
    pub fn is_retriable(&self) -> bool {
        self.retriable
    }

    /// The client code, if this is a client-side error.
    pub fn client_code(&self) -> Option<ClientCode> {
        ClientCode::from_code(self.code)
    }

    /// The server code, if this is a server error whose code the table has.
    pub fn server_code(&self) -> Option<ServerCode> {
        if self.client_code().is_some() {
            return None;
        }
        ServerCode::from_code(self.code)
    }

    /// The table row of the code (`None` for a code the table lacks, e.g. a newer server's).
    pub fn code_info(&self) -> Option<&'static CodeInfo> {
        code_info(self.code)
    }

    /// Whether this error came from a Fluss server (or the embedded engine answering like one).
    pub fn is_server_error(&self) -> bool {
        self.client_code().is_none()
    }

    /// Stable upper-snake name of the code.
    pub fn code_name(&self) -> &'static str {
        match self.client_code() {
            Some(c) => c.name(),
            None => FlussCode::name(self.code),
        }
    }

    /// The same error with context prepended to the message.
    pub fn context(mut self, ctx: impl fmt::Display) -> Error {
        self.message = format!("{ctx}: {}", self.message);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.code_name(), self.code, self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error {{ code: {} {}, retriable: {}, message: {:?} }}", self.code, self.code_name(), self.retriable, self.message)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::client(ClientCode::Io, e.to_string())
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Error {
        Error::invalid_row(format!("arrow: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_codes_are_distinct_and_outside_fluss_range() {
        let mut seen = std::collections::HashSet::new();
        for c in ClientCode::ALL {
            let n = c as i32;
            assert!((-1999..=-1001).contains(&n), "{c:?} out of range");
            assert!(seen.insert(n), "duplicate code {n}");
            assert_eq!(ClientCode::from_code(n), Some(c));
        }
        assert_eq!(ClientCode::from_code(-1), None);
        assert_eq!(ClientCode::from_code(12), None);
    }

    #[test]
    fn server_errors_pass_through_with_fluss_retriability() {
        let e = Error::server(12, "");
        assert_eq!(e.code(), 12);
        assert!(e.is_retriable());
        assert_eq!(e.code_name(), "NOT_LEADER_OR_FOLLOWER");
        assert!(e.is_server_error());
        let e = Error::server(7, "no such table");
        assert!(!e.is_retriable());
        assert_eq!(e.message(), "no such table");
    }

    /// The retriable server codes: exactly those whose Java exception extends
    /// `RetriableException` in Fluss 0.9.1 and 1.0.0 (tests-interop checks the whole table
    /// against the Java client's `Errors`).
    #[test]
    fn server_retriability_is_flusss() {
        let retriable: Vec<i32> = ServerCode::ALL.iter().filter(|c| c.is_retriable()).map(|c| c.code()).collect();
        assert_eq!(retriable, [1, 3, 9, 10, 11, 12, 14, 21, 25, 26, 28, 29, 44, 70, 72, 73]);
        let metadata: Vec<i32> = ServerCode::ALL.iter().filter(|c| c.is_invalid_metadata()).map(|c| c.code()).collect();
        assert_eq!(metadata, [1, 12, 21, 44]);
        // RETRIABLE_AUTHENTICATE is no RetriableException in Java: only the authentication
        // handshake retries it (cluster::connection).
        assert!(!Error::server(51, "").is_retriable());
        assert!(Error::server(70, "disk full").is_retriable());
        assert!(Error::server(72, "").is_retriable());
        assert!(!Error::server(65, "").is_retriable());
    }

    #[test]
    fn the_table_is_complete_and_consistent() {
        let codes: Vec<i32> = ServerCode::ALL.iter().map(|c| c.code()).collect();
        assert_eq!(codes, (-1..=74).collect::<Vec<_>>(), "Fluss 0.9 and 1.0 define -1..=74 without gaps");
        let clients: Vec<i32> = ClientCode::ALL.iter().map(|c| *c as i32).collect();
        assert_eq!(clients, (-1019..=-1001).rev().collect::<Vec<_>>());
        let mut names = std::collections::HashSet::new();
        for info in error_codes() {
            assert!(names.insert(info.name), "duplicate name {}", info.name);
            assert!(info.name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'), "{}", info.name);
            assert!(!info.description.is_empty());
            assert_eq!(code_info(info.code), Some(info));
            match info.kind {
                CodeKind::Server => {
                    let c = ServerCode::from_code(info.code).unwrap();
                    assert_eq!((c.name(), c.is_retriable(), c.info()), (info.name, info.retriable, info));
                    assert_eq!(FlussCode::name(info.code), info.name);
                    assert_eq!(info.since, if info.code <= 63 { "0.9" } else { "1.0" });
                }
                CodeKind::Client => {
                    let c = ClientCode::from_code(info.code).unwrap();
                    assert_eq!((c.name(), c.is_retriable(), c.info()), (info.name, info.retriable, info));
                    assert!(!info.invalid_metadata);
                }
            }
        }
        assert!(!names.contains("SERVER_ERROR"), "the name of unknown codes is no table name");
        assert_eq!(names.len(), 76 + 19);
    }

    /// A code a newer server sends and the table lacks: a clear, non-retriable error that keeps
    /// its number.
    #[test]
    fn an_unknown_server_code_is_a_plain_non_retriable_number() {
        let e = Error::server(99, "");
        assert_eq!(e.code(), 99);
        assert!(!e.is_retriable());
        assert_eq!(e.code_name(), "SERVER_ERROR");
        assert_eq!(e.server_code(), None);
        assert_eq!(e.code_info(), None);
        assert!(e.message().contains("99"), "{}", e.message());
        assert_eq!(e.to_string(), "SERVER_ERROR (99): server error code 99, which this version of fluss-writer does not know");
        let e = Error::server(99, "brand new failure");
        assert_eq!(e.to_string(), "SERVER_ERROR (99): brand new failure");
        let e = Error::server(74, "");
        assert_eq!(e.server_code(), Some(ServerCode::InvalidBucketRouting));
        assert_eq!(e.code_name(), "INVALID_BUCKET_ROUTING");
        assert_eq!(Error::invalid_row("x").server_code(), None);
    }

    #[test]
    fn client_errors_say_if_retriable() {
        assert!(Error::client(ClientCode::CapacityExhausted, "x").is_retriable());
        assert!(Error::client(ClientCode::BufferExhausted, "x").is_retriable());
        assert!(!Error::client(ClientCode::WriterClosed, "x").is_retriable());
        assert!(!Error::invalid_row("x").is_retriable());
    }
}
