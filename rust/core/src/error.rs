//! One error type for the whole SDK.
//!
//! An [`Error`] carries a numeric [`code`](Error::code), a message and whether retrying the same
//! operation can succeed ([`is_retriable`](Error::is_retriable)). Codes come from two disjoint
//! ranges:
//!
//! * **Fluss server codes** (`-1..=999`) pass through unchanged with their Fluss meaning (see
//!   `FlussCode`); a server that answers `NOT_LEADER_OR_FOLLOWER` reaches the user as code 12.
//! * **Client codes** (`-1999..=-1001`, see [`ClientCode`]) name causes that happen inside the
//!   SDK: bad input, admission, closed writers, timeouts. They can never collide with Fluss's
//!   codes, which are `-1` and the non-negative integers.

use std::fmt;

/// Errors raised inside the SDK. The discriminant is the wire-visible code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
#[non_exhaustive]
pub enum ClientCode {
    /// A row or Arrow batch does not match the table schema: wrong type, wrong field count,
    /// unknown column, null in a non-null column, value out of range. Not retriable.
    InvalidRow = -1001,
    /// A single record is larger than `client.writer.batch-size` (or the buffer). Not retriable.
    RecordTooLarge = -1002,
    /// `max_pending_callbacks` slots stayed taken for the whole wait budget. Retriable:
    /// back-pressure, not a fault.
    CapacityExhausted = -1003,
    /// `client.writer.buffer.memory-size` stayed exhausted for the whole wait budget. Retriable.
    BufferExhausted = -1004,
    /// The writer was closed (or dropped) before the operation was accepted or completed.
    WriterClosed = -1005,
    /// The connection was closed before the operation completed.
    ConnectionClosed = -1006,
    /// `flush`, `close` or `wait` was called from inside a completion callback, where it would
    /// deadlock. Not retriable: it is a programming error.
    CalledFromCallback = -1007,
    /// The operation did not complete within `client.writer.delivery-timeout`. Retriable.
    DeliveryTimeout = -1008,
    /// A configuration key is unknown or its value cannot be parsed.
    InvalidConfig = -1009,
    /// A blocking call (`flush`, `wait`, `close`) reached its own timeout. Retriable: the
    /// operation may still complete later.
    Timeout = -1010,
    /// A table descriptor or schema is invalid (unsupported type, bad key columns).
    InvalidTable = -1011,
    /// A call that this table type does not support (upsert on a log table, append on a
    /// primary-key table, partitioned tables).
    Unsupported = -1012,
    /// The peer sent bytes that do not follow the Fluss protocol.
    Protocol = -1013,
    /// A local I/O failure (embedded engine files, sockets).
    Io = -1014,
    /// The connection was created in a parent process before `fork()`; it cannot be used in
    /// the child.
    ForkedProcess = -1015,
    /// An invariant broke inside the SDK. Please report it.
    Internal = -1016,
    /// A completion callback raised/panicked (reported to the error handler, never to the
    /// operation itself).
    CallbackFailed = -1017,
    /// The sequence state of an idempotent writer was reset after a non-retriable failure of an
    /// earlier batch of the same bucket; this in-flight batch was not retried. Its last attempt
    /// had no final answer, so it may or may not have been written: not retriable, because a
    /// blind resubmission could duplicate it.
    SequenceReset = -1018,
    /// A blocking call (`flush`, `close`, `wait`, an admission wait) was interrupted by the
    /// binding's interrupt check (in Python: a signal handler raised, e.g. Ctrl-C). Nothing was
    /// accepted by an interrupted admission; pending operations still complete exactly once.
    Interrupted = -1019,
}

impl ClientCode {
    /// Every client code, in numeric order (for bindings and drift tests).
    pub const ALL: [ClientCode; 19] = [
        ClientCode::InvalidRow,
        ClientCode::RecordTooLarge,
        ClientCode::CapacityExhausted,
        ClientCode::BufferExhausted,
        ClientCode::WriterClosed,
        ClientCode::ConnectionClosed,
        ClientCode::CalledFromCallback,
        ClientCode::DeliveryTimeout,
        ClientCode::InvalidConfig,
        ClientCode::Timeout,
        ClientCode::InvalidTable,
        ClientCode::Unsupported,
        ClientCode::Protocol,
        ClientCode::Io,
        ClientCode::ForkedProcess,
        ClientCode::Internal,
        ClientCode::CallbackFailed,
        ClientCode::SequenceReset,
        ClientCode::Interrupted,
    ];

    /// Stable upper-snake name, used by the bindings for exception class lookup.
    pub fn name(self) -> &'static str {
        match self {
            ClientCode::InvalidRow => "INVALID_ROW",
            ClientCode::RecordTooLarge => "RECORD_TOO_LARGE",
            ClientCode::CapacityExhausted => "CAPACITY_EXHAUSTED",
            ClientCode::BufferExhausted => "BUFFER_EXHAUSTED",
            ClientCode::WriterClosed => "WRITER_CLOSED",
            ClientCode::ConnectionClosed => "CONNECTION_CLOSED",
            ClientCode::CalledFromCallback => "CALLED_FROM_CALLBACK",
            ClientCode::DeliveryTimeout => "DELIVERY_TIMEOUT",
            ClientCode::InvalidConfig => "INVALID_CONFIG",
            ClientCode::Timeout => "TIMEOUT",
            ClientCode::InvalidTable => "INVALID_TABLE",
            ClientCode::Unsupported => "UNSUPPORTED",
            ClientCode::Protocol => "PROTOCOL",
            ClientCode::Io => "IO",
            ClientCode::ForkedProcess => "FORKED_PROCESS",
            ClientCode::Internal => "INTERNAL",
            ClientCode::CallbackFailed => "CALLBACK_FAILED",
            ClientCode::SequenceReset => "SEQUENCE_RESET",
            ClientCode::Interrupted => "WAIT_INTERRUPTED",
        }
    }

    /// Whether retrying the same operation later can succeed.
    pub fn is_retriable(self) -> bool {
        matches!(
            self,
            ClientCode::CapacityExhausted
                | ClientCode::BufferExhausted
                | ClientCode::DeliveryTimeout
                | ClientCode::Timeout
                | ClientCode::ConnectionClosed
                | ClientCode::Io
        )
    }

    /// The code for a number, if it is a client code.
    pub fn from_code(code: i32) -> Option<ClientCode> {
        ClientCode::ALL.iter().copied().find(|c| *c as i32 == code)
    }
}

/// Fluss server error codes that the SDK treats specially. Every other server code passes
/// through as a plain number; see `fluss-protocol.md` section 7 for the full table.
pub struct FlussCode;

impl FlussCode {
    /// An unexpected error on the server.
    pub const UNKNOWN_SERVER_ERROR: i32 = -1;
    /// No error.
    pub const NONE: i32 = 0;
    /// The connection failed or a request timed out (retriable).
    pub const NETWORK_EXCEPTION: i32 = 1;
    /// A message failed its checks (retriable).
    pub const CORRUPT_MESSAGE: i32 = 3;
    /// The database does not exist.
    pub const DATABASE_NOT_EXIST: i32 = 4;
    /// The database still has tables (drop without cascade).
    pub const DATABASE_NOT_EMPTY: i32 = 5;
    /// A database of that name exists.
    pub const DATABASE_ALREADY_EXIST: i32 = 6;
    /// The table does not exist.
    pub const TABLE_NOT_EXIST: i32 = 7;
    /// A table of that name exists.
    pub const TABLE_ALREADY_EXIST: i32 = 8;
    /// The schema id is unknown to the server (retriable).
    pub const SCHEMA_NOT_EXIST: i32 = 9;
    /// The server's log storage failed (retriable).
    pub const LOG_STORAGE_EXCEPTION: i32 = 10;
    /// The server's key-value storage failed (retriable).
    pub const KV_STORAGE_EXCEPTION: i32 = 11;
    /// The server is not the bucket's leader: metadata is stale (retriable).
    pub const NOT_LEADER_OR_FOLLOWER: i32 = 12;
    /// A record or batch exceeds the server's limit.
    pub const RECORD_TOO_LARGE: i32 = 13;
    /// A record failed its CRC or format checks on the server (retriable).
    pub const CORRUPT_RECORD: i32 = 14;
    /// The table definition is invalid.
    pub const INVALID_TABLE: i32 = 15;
    /// The database name is invalid.
    pub const INVALID_DATABASE: i32 = 16;
    /// A key operation on a table without a primary key.
    pub const NON_PRIMARY_KEY_TABLE: i32 = 20;
    /// The server does not host this table or bucket (retriable: metadata is stale).
    pub const UNKNOWN_TABLE_OR_BUCKET: i32 = 21;
    /// The server timed out waiting (e.g. for replicas) (retriable).
    pub const REQUEST_TIME_OUT: i32 = 25;
    /// A storage failure on the server (retriable).
    pub const STORAGE_EXCEPTION: i32 = 26;
    /// Appended on the leader, but too few replicas acknowledged (retriable).
    pub const NOT_ENOUGH_REPLICAS_AFTER_APPEND: i32 = 28;
    /// Too few in-sync replicas to accept the write (retriable).
    pub const NOT_ENOUGH_REPLICAS: i32 = 29;
    /// An idempotent batch arrived with an unexpected sequence number.
    pub const OUT_OF_ORDER_SEQUENCE: i32 = 31;
    /// An idempotent batch was already written (the client counts it as success).
    pub const DUPLICATE_SEQUENCE: i32 = 32;
    /// The server does not know the idempotent writer id.
    pub const UNKNOWN_WRITER_ID: i32 = 33;
    /// A partial update names columns that cannot be updated.
    pub const INVALID_TARGET_COLUMN: i32 = 35;
    /// A configuration value is invalid.
    pub const INVALID_CONFIG: i32 = 39;
    /// The partition does not exist (never created, or dropped).
    pub const PARTITION_NOT_EXISTS: i32 = 36;
    /// A partition operation on a table without partition keys.
    pub const TABLE_NOT_PARTITIONED: i32 = 37;
    /// The partition exists already.
    pub const PARTITION_ALREADY_EXISTS: i32 = 42;
    /// A partition spec that does not fit the table's partition keys, or an invalid value.
    pub const PARTITION_SPEC_INVALID: i32 = 43;
    /// The cluster's (`max.partition.num`) or the table's limit of partitions is reached.
    pub const PARTITION_MAX_NUM: i32 = 45;
    /// The bucket has no leader right now (retriable).
    pub const LEADER_NOT_AVAILABLE: i32 = 44;
    /// Authentication failed (wrong credentials, mechanism not enabled).
    pub const AUTHENTICATE_EXCEPTION: i32 = 46;
    /// A security operation (ACLs) on a cluster without an authorizer.
    pub const SECURITY_DISABLED: i32 = 47;
    /// The principal lacks the permission for the operation.
    pub const AUTHORIZATION_EXCEPTION: i32 = 48;
    /// Authentication could not complete for now (retriable).
    pub const RETRIABLE_AUTHENTICATE_EXCEPTION: i32 = 51;
    /// An AlterTable the server refuses (a column that exists, properties and schema at once).
    pub const INVALID_ALTER_TABLE: i32 = 56;

    /// Whether Fluss marks this server code retriable (its exception extends
    /// `RetriableException`). Codes 31-33 follow the idempotence rules instead.
    pub fn is_retriable(code: i32) -> bool {
        matches!(code, 1 | 3 | 9 | 10 | 11 | 12 | 14 | 21 | 25 | 26 | 28 | 29 | 44 | 51)
    }

    /// Whether the error means the client's metadata (bucket leaders) is stale.
    pub fn is_invalid_metadata(code: i32) -> bool {
        matches!(code, 1 | 12 | 21 | 44)
    }

    /// Every server code that has a name, with its name, in numeric order (for bindings).
    pub fn named() -> impl Iterator<Item = (i32, &'static str)> {
        (-1..=200).map(|c| (c, FlussCode::name(c))).filter(|(_, n)| *n != "SERVER_ERROR")
    }

    /// Upper-snake name of a server code, for messages.
    pub fn name(code: i32) -> &'static str {
        match code {
            -1 => "UNKNOWN_SERVER_ERROR",
            0 => "NONE",
            1 => "NETWORK_EXCEPTION",
            2 => "UNSUPPORTED_VERSION",
            3 => "CORRUPT_MESSAGE",
            4 => "DATABASE_NOT_EXIST",
            5 => "DATABASE_NOT_EMPTY",
            6 => "DATABASE_ALREADY_EXIST",
            7 => "TABLE_NOT_EXIST",
            8 => "TABLE_ALREADY_EXIST",
            9 => "SCHEMA_NOT_EXIST",
            10 => "LOG_STORAGE_EXCEPTION",
            11 => "KV_STORAGE_EXCEPTION",
            12 => "NOT_LEADER_OR_FOLLOWER",
            13 => "RECORD_TOO_LARGE_EXCEPTION",
            14 => "CORRUPT_RECORD_EXCEPTION",
            15 => "INVALID_TABLE_EXCEPTION",
            16 => "INVALID_DATABASE_EXCEPTION",
            17 => "INVALID_REPLICATION_FACTOR",
            18 => "INVALID_REQUIRED_ACKS",
            19 => "LOG_OFFSET_OUT_OF_RANGE_EXCEPTION",
            20 => "NON_PRIMARY_KEY_TABLE_EXCEPTION",
            21 => "UNKNOWN_TABLE_OR_BUCKET_EXCEPTION",
            22 => "INVALID_UPDATE_VERSION_EXCEPTION",
            23 => "INVALID_COORDINATOR_EXCEPTION",
            24 => "FENCED_LEADER_EPOCH_EXCEPTION",
            25 => "REQUEST_TIME_OUT",
            26 => "STORAGE_EXCEPTION",
            27 => "OPERATION_NOT_ATTEMPTED_EXCEPTION",
            28 => "NOT_ENOUGH_REPLICAS_AFTER_APPEND_EXCEPTION",
            29 => "NOT_ENOUGH_REPLICAS_EXCEPTION",
            30 => "SECURITY_TOKEN_EXCEPTION",
            31 => "OUT_OF_ORDER_SEQUENCE_EXCEPTION",
            32 => "DUPLICATE_SEQUENCE_EXCEPTION",
            33 => "UNKNOWN_WRITER_ID_EXCEPTION",
            34 => "INVALID_COLUMN_PROJECTION",
            35 => "INVALID_TARGET_COLUMN",
            36 => "PARTITION_NOT_EXISTS",
            37 => "TABLE_NOT_PARTITIONED_EXCEPTION",
            38 => "INVALID_TIMESTAMP_EXCEPTION",
            39 => "INVALID_CONFIG_EXCEPTION",
            40 => "LAKE_STORAGE_NOT_CONFIGURED_EXCEPTION",
            41 => "KV_SNAPSHOT_NOT_EXIST",
            42 => "PARTITION_ALREADY_EXISTS",
            43 => "PARTITION_SPEC_INVALID_EXCEPTION",
            44 => "LEADER_NOT_AVAILABLE_EXCEPTION",
            45 => "PARTITION_MAX_NUM_EXCEPTION",
            46 => "AUTHENTICATE_EXCEPTION",
            47 => "SECURITY_DISABLED_EXCEPTION",
            48 => "AUTHORIZATION_EXCEPTION",
            49 => "BUCKET_MAX_NUM_EXCEPTION",
            51 => "RETRIABLE_AUTHENTICATE_EXCEPTION",
            56 => "INVALID_ALTER_TABLE_EXCEPTION",
            57 => "DELETION_DISABLED_EXCEPTION",
            _ => "SERVER_ERROR",
        }
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
        let message = if message.is_empty() { FlussCode::name(code).to_string() } else { message };
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

    #[test]
    fn client_errors_say_if_retriable() {
        assert!(Error::client(ClientCode::CapacityExhausted, "x").is_retriable());
        assert!(Error::client(ClientCode::BufferExhausted, "x").is_retriable());
        assert!(!Error::client(ClientCode::WriterClosed, "x").is_retriable());
        assert!(!Error::invalid_row("x").is_retriable());
    }
}
