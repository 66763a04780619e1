//! The cxx bridge: declarations only. Every function named here is implemented in a sibling
//! module (`status`, `acl`, `values`, `callbacks`, `handles`, `arrow`, `testing`, `test_hooks`,
//! `partitions`);
//! the C++ side of the `extern "C++"` block lives in `src/glue.cc` (compiled into this static
//! library).
//!
//! Failure rules (see cxx's book, "binding/result"): no function here returns `Result`, so cxx
//! never throws a `rust::Error` into C++. Fallible calls return (or fill) an [`ffi::FfiStatus`]
//! whose `code` is 0 on success. Every `extern "Rust"` body runs under `catch_unwind`, so a Rust
//! panic becomes an `INTERNAL` status instead of an abort (`status::guard`, `fill`, `guard_or`):
//! also the functions that return values, references or nothing, and the destructors (the C++
//! destructors call `*_destroy` / `job_drop` instead of dropping a `Box` directly), because a
//! panic reaching a cxx shim aborts the process. The only bodies without a guard are the ones
//! that cannot panic: field reads and `Option`/slice `get`s with a default (`row_len`,
//! `row_is_null`, the scalar `row_get_*`, `scan_len`, `scan_offset`,
//! `completion_head`/`_message`/`_database`/`_table`, `owned_completion_get`,
//! `testing_force_panic`); the callback path stays free of a `catch_unwind` per record that way
//! (its C++ exceptions are caught in C++, its Rust panics by the dispatcher). The `extern "C++"` functions are
//! `noexcept` trampolines that catch every C++ exception themselves.

use crate::acl::*;
use crate::arrow::*;
use crate::callbacks::*;
use crate::handles::*;
use crate::partitions::*;
use crate::status::*;
#[cfg(feature = "test-hooks")]
use crate::test_hooks::*;
use crate::testing::*;
use crate::values::*;

// cxx generates one Rust shim per declaration; their argument lists follow these signatures.
#[allow(clippy::too_many_arguments)]
#[cxx::bridge(namespace = "fluss_writer::ffi")]
pub mod ffi {
    // ===== shared structs =====

    /// The outcome of a fallible call: `code == 0` means success.
    #[derive(Default)]
    struct FfiStatus {
        code: i32,
        retriable: bool,
        message: String,
    }

    /// A C++ `WriteCallback` handed to Rust: its operations table (`detail::CallbackOps*`, 0 for
    /// none) and its two words of storage (an inline trivially copyable callable, or a pointer to a
    /// heap one). Rust holds these three words per record (inside the core's inline `Callback`)
    /// and calls or destroys them through `invoke_write_callback` / `drop_write_callback`.
    struct FfiCallback {
        ops: usize,
        s0: usize,
        s1: usize,
    }

    /// The fixed-size part of a completion, filled without allocating.
    struct CompletionHead {
        code: i32,
        retriable: bool,
        table_id: i64,
        /// -1 for non-partitioned tables.
        partition_id: i64,
        bucket: i32,
        offset: i64,
        log_end_offset: i64,
        bucket_results: usize,
        /// The table's database and table names (UTF-8, not NUL-terminated), borrowed from the
        /// completion: valid while it is.
        database_ptr: usize,
        database_len: usize,
        table_ptr: usize,
        table_len: usize,
        /// The partition's name (UTF-8, not NUL-terminated), borrowed from the completion: valid
        /// while it is. Length 0 for a table without partitions (a partition name is never empty).
        partition_ptr: usize,
        partition_len: usize,
    }

    /// One bucket of a multi-bucket Arrow batch.
    struct FfiBucketResult {
        /// The partition's name; empty for a table without partitions.
        partition: String,
        bucket: i32,
        rows: i64,
        base_offset: i64,
        code: i32,
        retriable: bool,
        message: String,
    }

    /// One node of an ARRAY, MAP or ROW type below a column: the element of an ARRAY, the key
    /// and value of a MAP, the fields of a ROW (`fluss_writer::Column` of a C++
    /// `DataType::children`). `type_id` follows `fluss_writer::TypeId` in the C++ header;
    /// `child_count` says how many of the nodes that follow (in pre-order) are its children.
    struct FfiTypeNode {
        name: String,
        type_id: i32,
        precision: i32,
        scale: i32,
        nullable: bool,
        child_count: usize,
    }

    /// One column: `type_id` follows `fluss_writer::TypeId` in the C++ header. A column of an
    /// ARRAY, MAP or ROW type has `child_count` children; `nested` holds every node below the
    /// column's type in pre-order (each node followed by its own children), empty for a scalar
    /// column. C++ only flattens and rebuilds; Rust checks the shape (`values::column`).
    struct FfiColumn {
        name: String,
        type_id: i32,
        precision: i32,
        scale: i32,
        nullable: bool,
        child_count: usize,
        nested: Vec<FfiTypeNode>,
        /// The column's comment; empty: none.
        comment: String,
        /// Its aggregation function (`table.merge-engine = aggregation`); empty: none.
        agg_function: String,
        /// The function's parameters, keys and values in the same order.
        agg_param_keys: Vec<String>,
        agg_param_values: Vec<String>,
    }

    /// What `create_table` takes.
    struct FfiDescriptor {
        columns: Vec<FfiColumn>,
        primary_key: Vec<String>,
        /// 0: the server's default.
        bucket_count: i32,
        bucket_keys: Vec<String>,
        property_keys: Vec<String>,
        property_values: Vec<String>,
        comment: String,
        /// Partition columns; empty: not partitioned.
        partition_keys: Vec<String>,
    }

    /// What `admin_get_table_info` fills (`fluss_writer::TableInfo` in the C++ header): the core's
    /// `TableInfo` field for field; `descriptor` as the core normalized it (bucket count and
    /// bucket keys set), its `property_*` the `table.*` properties; `custom_property_*` the
    /// free-form ones.
    struct FfiTableInfo {
        database: String,
        table: String,
        table_id: i64,
        schema_id: i32,
        descriptor: FfiDescriptor,
        custom_property_keys: Vec<String>,
        custom_property_values: Vec<String>,
        created_time: i64,
        modified_time: i64,
    }

    /// Per-writer callback options (the user executor and error handler travel apart).
    struct FfiWriterOptions {
        max_pending_callbacks: u64,
        /// 0 connection worker, 1 sharded, 2 user executor.
        executor_kind: i32,
        shards: usize,
    }

    struct FfiWriterStats {
        pending_callbacks: u64,
        callbacks_run: u64,
        callback_errors: u64,
        queued_jobs: u64,
        buffer_bytes_in_use: u64,
        ack_to_callback_count: u64,
        ack_to_callback_p50_nanos: u64,
        ack_to_callback_p99_nanos: u64,
        ack_to_callback_max_nanos: u64,
        jobs_dropped: u64,
        open_partitions: u64,
        records_sent: u64,
        bytes_sent: u64,
        batches_sent: u64,
        records_failed: u64,
        operations_rejected: u64,
        requests_sent: u64,
        retries: u64,
        kv_throttled_sends: u64,
        kv_throttle_nanos: u64,
        kv_pressure_permille: u64,
        slow_callbacks: u64,
        oldest_pending_batch_age_nanos: u64,
        request_latency_count: u64,
        request_latency_p50_nanos: u64,
        request_latency_p99_nanos: u64,
        request_latency_max_nanos: u64,
        batch_records_p50: u64,
        batch_records_p99: u64,
        batch_bytes_p50: u64,
        batch_bytes_p99: u64,
    }

    /// How often one error code ended batches or caused retries (`fluss_writer::CodeCount`).
    struct FfiCodeCount {
        code: i32,
        name: String,
        records_failed: u64,
        retries: u64,
        rejected: u64,
    }

    /// What one bucket sent, failed and retried (`fluss_writer::BucketCount`); `partition` empty
    /// for a table without partitions.
    struct FfiBucketCount {
        partition: String,
        bucket: i32,
        records_sent: u64,
        bytes_sent: u64,
        batches_sent: u64,
        records_failed: u64,
        retries: u64,
    }

    /// One ACL (`fluss_writer::AclBinding` in the C++ header). `resource_type` and `operation`
    /// are the numbers of the C++ enums `AclResourceType` and `AclOperation`; `database` is the
    /// database of a Database or Table resource, `table` the table of a Table resource.
    struct FfiAclBinding {
        resource_type: i32,
        database: String,
        table: String,
        principal: String,
        principal_type: String,
        host: String,
        operation: i32,
    }

    /// Which ACLs to list or drop (`fluss_writer::AclFilter`): a field whose `has_*` flag is
    /// false matches everything; `operation` 1 (Any) matches every operation.
    struct FfiAclFilter {
        has_resource: bool,
        resource_type: i32,
        database: String,
        table: String,
        has_principal: bool,
        principal: String,
        has_host: bool,
        host: String,
        operation: i32,
    }

    /// A fault for the embedded engine: kind 0 error, 1 delay, 2 dropped connection.
    struct FfiFault {
        kind: i32,
        code: i32,
        message: String,
        times: u32,
        delay_ms: u64,
        after_apply: bool,
    }

    // ===== partitions (shared structs) =====

    /// One partition of a table (`fluss_writer::PartitionInfo`); the spec as parallel key and
    /// value lists, in partition-key order.
    struct FfiPartitionInfo {
        partition_id: i64,
        partition_name: String,
        spec_keys: Vec<String>,
        spec_values: Vec<String>,
    }

    // ===== Rust types and functions exposed to C++ =====

    extern "Rust" {
        type RConnection;
        /// `fluss_writer::metrics::StatisticsReporter` (C++ `StatisticsReporter`).
        type RStatsReporter;
        type RTable;
        type RWriter;
        type RWriteResult;
        type ROwnedCompletion;
        type RCompletion;
        type RRow;
        type RJob;
        type RScan;
        #[cfg(feature = "test-hooks")]
        type RBench;
        type RSharedCallback;

        // status
        fn client_codes() -> Vec<i32>;
        fn code_name(code: i32) -> String;

        // connection and admin
        /// `bootstrap`: the explicit address (`Configuration::bootstrap_servers`), "" when not set;
        /// the core resolves it together with a `bootstrap.servers` key in the properties.
        fn connection_create(bootstrap: &str, keys: &Vec<String>, values: &Vec<String>, st: &mut FfiStatus) -> Box<RConnection>;
        fn connection_clone(c: &RConnection) -> Box<RConnection>;
        fn connection_close(c: &RConnection, timeout_ms: i64) -> FfiStatus;
        fn connection_is_closed(c: &RConnection) -> bool;
        /// Drops the connection (`~Connection`, `~Admin`) with panics caught.
        fn connection_destroy(c: Box<RConnection>);
        fn admin_create_database(c: &RConnection, name: &str, ignore_if_exists: bool) -> FfiStatus;
        fn admin_drop_database(c: &RConnection, name: &str, ignore_if_not_exists: bool, cascade: bool) -> FfiStatus;
        fn admin_database_exists(c: &RConnection, name: &str, out: &mut bool) -> FfiStatus;
        fn admin_list_databases(c: &RConnection, out: &mut Vec<String>) -> FfiStatus;
        fn admin_list_tables(c: &RConnection, database: &str, out: &mut Vec<String>) -> FfiStatus;
        fn admin_create_table(c: &RConnection, db: &str, table: &str, d: &FfiDescriptor, ignore_if_exists: bool) -> FfiStatus;
        fn admin_drop_table(c: &RConnection, db: &str, table: &str, ignore_if_not_exists: bool) -> FfiStatus;
        /// `Admin::alter_table`: columns to add (after the last one), columns to drop, and
        /// renames (`rename_from[i]` to `rename_to[i]`).
        fn admin_alter_table(
            c: &RConnection,
            db: &str,
            table: &str,
            add: &Vec<FfiColumn>,
            drop: &Vec<String>,
            rename_from: &Vec<String>,
            rename_to: &Vec<String>,
            ignore_if_not_exists: bool,
        ) -> FfiStatus;
        fn admin_table_exists(c: &RConnection, db: &str, table: &str, out: &mut bool) -> FfiStatus;
        /// `Admin::alter_bucket_count` (Fluss 1.0, ALTER_TABLE v1).
        fn admin_alter_bucket_count(c: &RConnection, db: &str, table: &str, bucket_count: i32, ignore_if_not_exists: bool) -> FfiStatus;
        /// `Admin::server_supports`.
        fn admin_server_supports(c: &RConnection, capability: &str, out: &mut bool) -> FfiStatus;
        /// `Admin::get_table_info`: `out` is replaced (left as it was on error).
        fn admin_get_table_info(c: &RConnection, db: &str, table: &str, out: &mut FfiTableInfo) -> FfiStatus;
        fn admin_create_acls(c: &RConnection, acls: &Vec<FfiAclBinding>) -> FfiStatus;
        /// `out` is replaced by the matching ACLs.
        fn admin_list_acls(c: &RConnection, filter: &FfiAclFilter, out: &mut Vec<FfiAclBinding>) -> FfiStatus;
        /// `dropped` is replaced by the ACLs dropped.
        fn admin_drop_acls(c: &RConnection, filters: &Vec<FfiAclFilter>, dropped: &mut Vec<FfiAclBinding>) -> FfiStatus;

        // tables and writers
        fn table_get(c: &RConnection, db: &str, table: &str, st: &mut FfiStatus) -> Box<RTable>;
        fn table_clone(t: &RTable) -> Box<RTable>;
        fn table_has_primary_key(t: &RTable) -> bool;
        fn table_bucket_count(t: &RTable) -> i32;
        fn table_column_count(t: &RTable) -> usize;
        fn table_path(t: &RTable) -> String;
        /// Read-back through the Fluss protocol (embedded engine or cluster).
        fn table_scan(t: &RTable, bucket: i32, from_offset: i64, st: &mut FfiStatus) -> Box<RScan>;
        /// `key`: the primary-key values in key order.
        fn table_lookup(t: &RTable, key: &RRow, found: &mut bool, st: &mut FfiStatus) -> Box<RRow>;
        fn table_create_append_writer(
            t: &RTable,
            o: &FfiWriterOptions,
            user: SharedPtr<CallbackExecutor>,
            handler: UniquePtr<ErrorHandlerHolder>,
            st: &mut FfiStatus,
        ) -> Box<RWriter>;
        /// `partial`: 0 full rows, 1 by `names`, 2 by `indexes`.
        fn table_create_upsert_writer(
            t: &RTable,
            partial: i32,
            names: &Vec<String>,
            indexes: &Vec<usize>,
            o: &FfiWriterOptions,
            user: SharedPtr<CallbackExecutor>,
            handler: UniquePtr<ErrorHandlerHolder>,
            st: &mut FfiStatus,
        ) -> Box<RWriter>;

        // writes: a non-null `cb` asks for a callback, else a non-null `result` for a
        // WriteResult, else no notification.
        unsafe fn writer_append(w: &RWriter, row: &RRow, cb: FfiCallback, result: *mut RWriteResult) -> FfiStatus;
        unsafe fn writer_upsert(w: &RWriter, row: &RRow, cb: FfiCallback, result: *mut RWriteResult) -> FfiStatus;
        unsafe fn writer_delete(w: &RWriter, key: &RRow, cb: FfiCallback, result: *mut RWriteResult) -> FfiStatus;
        /// `Schema::FromArrow`: `schema` is an `ArrowSchema*`, only read (not moved from).
        unsafe fn schema_from_arrow(schema: usize, out: &mut Vec<FfiColumn>) -> FfiStatus;
        /// `Schema::ToArrow`: `out` is an `ArrowSchema*`, overwritten with a schema the caller
        /// releases.
        unsafe fn schema_to_arrow(columns: &Vec<FfiColumn>, primary_key: &Vec<String>, out: usize) -> FfiStatus;
        /// `array`, `schema`: `ArrowArray*`, `ArrowSchema*`; both are moved from, also on error.
        unsafe fn writer_append_arrow(w: &RWriter, array: usize, schema: usize, cb: FfiCallback, result: *mut RWriteResult) -> FfiStatus;
        /// `stream`: `ArrowArrayStream*`, moved from, also on error.
        unsafe fn writer_append_arrow_stream(w: &RWriter, stream: usize, cb: FfiCallback, result: *mut RWriteResult) -> FfiStatus;
        /// `kind`: 0 append, 1 upsert, 2 delete; one shared callable for many records.
        fn writer_write_shared(w: &RWriter, kind: i32, row: &RRow, cb: &RSharedCallback) -> FfiStatus;
        fn shared_callback_new(cb: UniquePtr<SharedCallbackBase>) -> Box<RSharedCallback>;
        fn shared_callback_destroy(cb: Box<RSharedCallback>);
        fn writer_flush(w: &RWriter, timeout_ms: i64) -> FfiStatus;
        fn writer_close(w: &RWriter, timeout_ms: i64) -> FfiStatus;
        fn writer_is_closed(w: &RWriter) -> bool;
        fn writer_stats(w: &RWriter) -> FfiWriterStats;
        fn writer_error_counts(w: &RWriter) -> Vec<FfiCodeCount>;
        fn writer_bucket_counts(w: &RWriter) -> Vec<FfiBucketCount>;
        /// Every live writer of the process as JSON (`fluss_writer::metrics::to_json`).
        fn metrics_json() -> String;
        /// `SetLogCallback` (null: back to stderr) and `SetLogLevel` (0 off .. 5 trace).
        fn set_log_sink(sink: UniquePtr<LogSinkHolder>);
        fn set_log_level(level: i32);
        /// `StatisticsReporter::Start`: `sink` gets `MetricsJson()` every `interval_ms`.
        fn stats_reporter_start(interval_ms: i64, sink: UniquePtr<StatsSinkHolder>, st: &mut FfiStatus) -> Box<RStatsReporter>;
        /// `StatisticsReporter::Stop` and its destructor (the drop stops too).
        fn stats_reporter_destroy(r: Box<RStatsReporter>);
        /// The writer's table (`AppendWriter::table` / `UpsertWriter::table`).
        fn writer_table(w: &RWriter, st: &mut FfiStatus) -> Box<RTable>;
        /// `~AppendWriter`/`~UpsertWriter`: close with `timeout_ms` (negative: no bound) and drop;
        /// when the bound passes, the rest of the drop happens on a background thread.
        fn writer_destroy(w: Box<RWriter>, timeout_ms: i64);

        // results and completions
        /// Drops the handle in a C++ `WriteResult`'s storage (which then holds none).
        unsafe fn result_drop(r: *mut RWriteResult);
        fn result_is_done(r: &RWriteResult) -> bool;
        fn result_wait(r: &RWriteResult, timeout_ms: i64, st: &mut FfiStatus) -> Box<ROwnedCompletion>;
        fn result_wait_status(r: &RWriteResult, timeout_ms: i64) -> FfiStatus;
        fn result_wait_code(r: &RWriteResult, timeout_ms: i64) -> i32;
        fn result_add_callback(r: &RWriteResult, cb: FfiCallback) -> FfiStatus;
        fn owned_completion_get(o: &ROwnedCompletion) -> &RCompletion;
        fn completion_head(c: &RCompletion) -> CompletionHead;
        fn completion_message(c: &RCompletion) -> &str;
        fn completion_database(c: &RCompletion) -> &str;
        fn completion_table(c: &RCompletion) -> &str;
        fn completion_bucket_results(c: &RCompletion) -> Vec<FfiBucketResult>;

        // user executors
        fn job_run(job: Box<RJob>);
        /// `~Job` without `Run`: the job is dropped (its callbacks retired unrun and reported).
        fn job_drop(job: Box<RJob>);

        // rows
        fn row_new(fields: usize) -> Box<RRow>;
        fn row_clone(r: &RRow) -> Box<RRow>;
        fn row_len(r: &RRow) -> usize;
        fn row_resize(r: &mut RRow, fields: usize);
        /// Records a setter's bad input: writing the row fails with `INVALID_ROW` and `message`.
        fn row_mark_bad(r: &mut RRow, message: &str);
        fn row_set_null(r: &mut RRow, i: usize);
        fn row_set_bool(r: &mut RRow, i: usize, v: bool);
        fn row_set_i8(r: &mut RRow, i: usize, v: i8);
        fn row_set_i16(r: &mut RRow, i: usize, v: i16);
        fn row_set_i32(r: &mut RRow, i: usize, v: i32);
        fn row_set_i64(r: &mut RRow, i: usize, v: i64);
        fn row_set_f32(r: &mut RRow, i: usize, v: f32);
        fn row_set_f64(r: &mut RRow, i: usize, v: f64);
        fn row_set_string(r: &mut RRow, i: usize, v: &[u8]);
        fn row_set_bytes(r: &mut RRow, i: usize, v: &[u8]);
        fn row_set_decimal_i64(r: &mut RRow, i: usize, unscaled: i64, precision: u8, scale: u8);
        fn row_set_decimal_str(r: &mut RRow, i: usize, unscaled: &str, precision: u8, scale: u8);
        fn row_set_date(r: &mut RRow, i: usize, days: i32);
        fn row_set_time(r: &mut RRow, i: usize, millis: i32);
        fn row_set_timestamp_ntz(r: &mut RRow, i: usize, millis: i64, nanos_of_milli: u32);
        fn row_set_timestamp_ltz(r: &mut RRow, i: usize, millis: i64, nanos_of_milli: u32);
        fn row_type_name(r: &RRow, i: usize) -> &str;
        fn row_is_null(r: &RRow, i: usize) -> bool;
        fn row_get_bool(r: &RRow, i: usize) -> bool;
        fn row_get_i64(r: &RRow, i: usize) -> i64;
        fn row_get_f64(r: &RRow, i: usize) -> f64;
        fn row_get_str(r: &RRow, i: usize) -> &str;
        fn row_get_bytes(r: &RRow, i: usize) -> &[u8];
        fn row_to_string(r: &RRow, i: usize) -> String;
        /// ARRAY, MAP and ROW values from rows of their parts (copied; `elements`, `keys`,
        /// `values` and `fields` are never `r` itself: C++ copies first). A part's recorded bad
        /// input and keys and values of different lengths are recorded in `r`.
        fn row_set_array(r: &mut RRow, i: usize, elements: &RRow);
        fn row_set_map(r: &mut RRow, i: usize, keys: &RRow, values: &RRow);
        fn row_set_row(r: &mut RRow, i: usize, fields: &RRow);
        /// The parts of an ARRAY, MAP or ROW value as a new row (empty for another value).
        fn row_get_array(r: &RRow, i: usize) -> Box<RRow>;
        fn row_get_map_keys(r: &RRow, i: usize) -> Box<RRow>;
        fn row_get_map_values(r: &RRow, i: usize) -> Box<RRow>;
        fn row_get_row(r: &RRow, i: usize) -> Box<RRow>;

        // testing (embedded engine)
        fn testing_inject_fault(c: &RConnection, db: &str, table: &str, bucket: i32, f: &FfiFault) -> FfiStatus;
        fn testing_inject_coordinator_fault(c: &RConnection, f: &FfiFault) -> FfiStatus;
        fn testing_clear_faults(c: &RConnection) -> FfiStatus;
        fn testing_scan(c: &RConnection, db: &str, table: &str, bucket: i32, from_offset: i64, st: &mut FfiStatus) -> Box<RScan>;
        fn scan_len(s: &RScan) -> usize;
        fn scan_offset(s: &RScan, i: usize) -> i64;
        fn scan_change_type(s: &RScan, i: usize) -> &str;
        fn scan_row(s: &RScan, i: usize) -> Box<RRow>;
        fn testing_lookup(c: &RConnection, db: &str, table: &str, key: &RRow, found: &mut bool, st: &mut FfiStatus) -> Box<RRow>;
        fn testing_high_watermark(c: &RConnection, db: &str, table: &str, bucket: i32, st: &mut FfiStatus) -> i64;

        // test and benchmark hooks (cargo feature `test-hooks` only; cxx-build evaluates the cfg,
        // so the generated header declares them only then)
        /// Test hook: the next guarded bridge call (on any thread) panics inside its guard.
        #[cfg(feature = "test-hooks")]
        fn testing_force_panic();
        #[cfg(feature = "test-hooks")]
        fn bench_new(callbacks_per_job: usize) -> Box<RBench>;
        #[cfg(feature = "test-hooks")]
        fn bench_push(b: &mut RBench, cb: FfiCallback);
        #[cfg(feature = "test-hooks")]
        fn bench_run(b: &mut RBench) -> f64;
    }

    // ===== partitions (src/partitions.rs) =====

    extern "Rust" {
        /// A spec is the parallel lists `keys` / `values` (the C++ std::map's entries).
        fn admin_create_partition(
            c: &RConnection,
            db: &str,
            table: &str,
            keys: &Vec<String>,
            values: &Vec<String>,
            ignore_if_exists: bool,
        ) -> FfiStatus;
        fn admin_drop_partition(
            c: &RConnection,
            db: &str,
            table: &str,
            keys: &Vec<String>,
            values: &Vec<String>,
            ignore_if_not_exists: bool,
        ) -> FfiStatus;
        /// `out` is replaced by the table's partitions, ordered by name.
        fn admin_list_partitions(c: &RConnection, db: &str, table: &str, out: &mut Vec<FfiPartitionInfo>) -> FfiStatus;
        /// `Table::scan_partition`: a bucket of one partition (by name), through the protocol.
        fn table_scan_partition(t: &RTable, partition: &str, bucket: i32, from_offset: i64, st: &mut FfiStatus) -> Box<RScan>;
        fn testing_inject_fault_partition(c: &RConnection, db: &str, table: &str, partition: &str, bucket: i32, f: &FfiFault) -> FfiStatus;
        fn testing_scan_partition(
            c: &RConnection,
            db: &str,
            table: &str,
            partition: &str,
            bucket: i32,
            from_offset: i64,
            st: &mut FfiStatus,
        ) -> Box<RScan>;
        fn testing_high_watermark_partition(
            c: &RConnection,
            db: &str,
            table: &str,
            partition: &str,
            bucket: i32,
            st: &mut FfiStatus,
        ) -> i64;
    }

    // ===== C++ types and trampolines called by Rust (src/glue.cc) =====

    #[namespace = "fluss_writer::detail"]
    unsafe extern "C++" {
        include!("fluss_writer_glue.h");

        /// The callable of a `SharedWriteCallback`.
        type SharedCallbackBase;
        /// A user error handler (`std::function<void(const CallbackError&)>`).
        type ErrorHandlerHolder;
        /// The application's log sink (`std::function<void(const LogRecord&)>`).
        type LogSinkHolder;
        /// A statistics callback (`std::function<void(const std::string&)>`).
        type StatsSinkHolder;
        /// The user's `fluss_writer::CallbackExecutor`.
        #[namespace = "fluss_writer"]
        type CallbackExecutor;

        /// Calls the callable, then destroys it (also when it threw); returns whether it threw
        /// (then `thrown` holds the exception's text).
        fn invoke_write_callback(cb: &FfiCallback, head: &CompletionHead, c: &RCompletion, thrown: &mut String) -> bool;
        /// Destroys a callable that will not run.
        fn drop_write_callback(cb: &FfiCallback);
        /// Calls a shared callable; returns whether it threw (then `thrown` holds the text).
        fn invoke_shared_callback(cb: &SharedCallbackBase, head: &CompletionHead, c: &RCompletion, thrown: &mut String) -> bool;
        /// Calls the handler; exceptions are swallowed.
        fn call_error_handler(h: &ErrorHandlerHolder, message: &str, operation: &str);
        /// Calls the log sink; exceptions are swallowed.
        fn call_log_sink(h: &LogSinkHolder, level: i32, target: &str, message: &str);
        /// Calls the statistics callback; exceptions are swallowed.
        fn call_stats_sink(h: &StatsSinkHolder, json: &str);
        /// Hands a job to the user executor; if it throws, the job is dropped (and reported).
        fn execute_job(e: &CallbackExecutor, job: Box<RJob>);
    }
}
