//! Handles behind the C++ classes: [`RConnection`] (`Connection`, `Admin`), [`RTable`]
//! (`Table`, `TableAppend`, `TableUpsert`), [`RWriter`] (`AppendWriter`, `UpsertWriter`) and
//! [`RWriteResult`] (`WriteResult`). Each function converts its arguments, calls the core once,
//! and converts the outcome.

use std::time::Duration;

use cxx::{SharedPtr, UniquePtr};
use fluss_writer::{
    AppendWriter, CallbackExecutor as CoreExecutor, ClientCode, Config, Connection, Error, Result, Table, TableChange, TablePath,
    UpsertWriter, WriteCompletion, WriteResult, WriterOptions,
};

use crate::bridge::ffi::{
    CallbackExecutor, ErrorHandlerHolder, FfiBucketCount, FfiCallback, FfiCodeCount, FfiColumn, FfiDescriptor, FfiStatus, FfiTableInfo,
    FfiWriterOptions, FfiWriterStats,
};
use crate::callbacks::{error_handler, CxxCallback, CxxExecutor, RCompletion, RSharedCallback};
use crate::status::{fill, guard, guard_or, ok, status, status_of};
use crate::testing::RScan;
use crate::values::{descriptor, ffi_table_info, RRow};

/// A C++ timeout in milliseconds, converted by the core's one rule: negative, or beyond what a
/// deadline can hold, is `None` (no bound). Never panics.
pub(crate) fn timeout(ms: i64) -> Option<Duration> {
    fluss_writer::timeouts::from_millis_i64(ms)
}

fn path(db: &str, table: &str) -> Result<TablePath> {
    TablePath::new(db, table)
}

// ===== connection and admin =====

/// A connection; `None` after a failed `connection_create`.
pub struct RConnection(pub(crate) Option<Connection>);

impl RConnection {
    pub(crate) fn get(&self) -> Result<&Connection> {
        self.0.as_ref().ok_or_else(|| Error::client(ClientCode::ConnectionClosed, "the connection is not open"))
    }
}

#[allow(clippy::ptr_arg)] // cxx passes rust::Vec as &Vec
pub(crate) fn connection_create(bootstrap: &str, keys: &Vec<String>, values: &Vec<String>, st: &mut FfiStatus) -> Box<RConnection> {
    crate::logging::install();
    fill(
        st,
        || Box::new(RConnection(None)),
        || {
            // One rule for every binding (the core's): the explicit address and the
            // `bootstrap.servers` key are one setting.
            let explicit = (!bootstrap.is_empty()).then_some(bootstrap);
            let config = Config::resolve(explicit, keys.iter().zip(values.iter()))?;
            Ok(Box::new(RConnection(Some(Connection::connect(config)?))))
        },
    )
}

pub(crate) fn connection_clone(c: &RConnection) -> Box<RConnection> {
    guard_or(|| Box::new(RConnection(None)), || Box::new(RConnection(c.0.clone())))
}

#[allow(clippy::boxed_local)] // C++ owns it as a rust::Box and hands it over
pub(crate) fn connection_destroy(c: Box<RConnection>) {
    guard_or(|| (), move || drop(c))
}

pub(crate) fn connection_close(c: &RConnection, timeout_ms: i64) -> FfiStatus {
    status(guard(|| c.get()?.close(timeout(timeout_ms))))
}

/// An empty handle counts as closed.
pub(crate) fn connection_is_closed(c: &RConnection) -> bool {
    guard_or(|| true, || c.get().map_or(true, |c| c.is_closed()))
}

#[allow(clippy::ptr_arg)] // cxx passes rust::Vec as &mut Vec
pub(crate) fn admin_list_databases(c: &RConnection, out: &mut Vec<String>) -> FfiStatus {
    status(guard(|| {
        *out = c.get()?.admin().list_databases()?;
        Ok(())
    }))
}

#[allow(clippy::ptr_arg)] // cxx passes rust::Vec as &mut Vec
pub(crate) fn admin_list_tables(c: &RConnection, database: &str, out: &mut Vec<String>) -> FfiStatus {
    status(guard(|| {
        *out = c.get()?.admin().list_tables(database)?;
        Ok(())
    }))
}

pub(crate) fn admin_create_database(c: &RConnection, name: &str, ignore_if_exists: bool) -> FfiStatus {
    status(guard(|| c.get()?.admin().create_database(name, ignore_if_exists)))
}

pub(crate) fn admin_drop_database(c: &RConnection, name: &str, ignore_if_not_exists: bool, cascade: bool) -> FfiStatus {
    status(guard(|| c.get()?.admin().drop_database(name, ignore_if_not_exists, cascade)))
}

pub(crate) fn admin_database_exists(c: &RConnection, name: &str, out: &mut bool) -> FfiStatus {
    status(guard(|| {
        *out = c.get()?.admin().database_exists(name)?;
        Ok(())
    }))
}

pub(crate) fn admin_create_table(c: &RConnection, db: &str, table: &str, d: &FfiDescriptor, ignore_if_exists: bool) -> FfiStatus {
    status(guard(|| c.get()?.admin().create_table(&path(db, table)?, &descriptor(d)?, ignore_if_exists)))
}

pub(crate) fn admin_drop_table(c: &RConnection, db: &str, table: &str, ignore_if_not_exists: bool) -> FfiStatus {
    status(guard(|| c.get()?.admin().drop_table(&path(db, table)?, ignore_if_not_exists)))
}

#[allow(clippy::too_many_arguments, clippy::ptr_arg)] // the cxx bridge passes each list on its own, as a &Vec
pub(crate) fn admin_alter_table(
    c: &RConnection,
    db: &str,
    table: &str,
    add: &Vec<FfiColumn>,
    drop: &Vec<String>,
    rename_from: &Vec<String>,
    rename_to: &Vec<String>,
    ignore_if_not_exists: bool,
) -> FfiStatus {
    status(guard(|| {
        if rename_from.len() != rename_to.len() {
            return Err(Error::internal("rename lists differ in length"));
        }
        let mut changes: Vec<TableChange> = crate::values::columns(add)?.into_iter().map(TableChange::AddColumn).collect();
        changes.extend(drop.iter().map(|n| TableChange::DropColumn(n.clone())));
        changes.extend(rename_from.iter().zip(rename_to).map(|(f, t)| TableChange::RenameColumn { from: f.clone(), to: t.clone() }));
        c.get()?.admin().alter_table(&path(db, table)?, &changes, ignore_if_not_exists)
    }))
}

pub(crate) fn admin_table_exists(c: &RConnection, db: &str, table: &str, out: &mut bool) -> FfiStatus {
    status(guard(|| {
        *out = c.get()?.admin().table_exists(&path(db, table)?)?;
        Ok(())
    }))
}

pub(crate) fn admin_alter_bucket_count(c: &RConnection, db: &str, table: &str, bucket_count: i32, ignore_if_not_exists: bool) -> FfiStatus {
    status(guard(|| c.get()?.admin().alter_bucket_count(&path(db, table)?, bucket_count, ignore_if_not_exists)))
}

pub(crate) fn admin_server_supports(c: &RConnection, capability: &str, out: &mut bool) -> FfiStatus {
    status(guard(|| {
        *out = c.get()?.admin().server_supports(capability)?;
        Ok(())
    }))
}

/// `Admin::get_table_info`, converted for C++ (`values::ffi_table_info`).
pub(crate) fn admin_get_table_info(c: &RConnection, db: &str, table: &str, out: &mut FfiTableInfo) -> FfiStatus {
    status(guard(|| {
        *out = ffi_table_info(&c.get()?.admin().get_table_info(&path(db, table)?)?);
        Ok(())
    }))
}

// ===== tables =====

/// A table; `None` after a failed `table_get`.
pub struct RTable(Option<Table>);

impl RTable {
    pub(crate) fn get(&self) -> Result<&Table> {
        self.0.as_ref().ok_or_else(|| Error::client(ClientCode::InvalidTable, "the table handle is empty"))
    }
}

pub(crate) fn table_get(c: &RConnection, db: &str, table: &str, st: &mut FfiStatus) -> Box<RTable> {
    fill(st, || Box::new(RTable(None)), || Ok(Box::new(RTable(Some(c.get()?.get_table(&path(db, table)?)?)))))
}

pub(crate) fn table_clone(t: &RTable) -> Box<RTable> {
    guard_or(|| Box::new(RTable(None)), || Box::new(RTable(t.0.clone())))
}

pub(crate) fn table_has_primary_key(t: &RTable) -> bool {
    guard_or(|| false, || t.0.as_ref().is_some_and(|t| t.info().has_primary_key()))
}

pub(crate) fn table_bucket_count(t: &RTable) -> i32 {
    guard_or(|| 0, || t.0.as_ref().map_or(0, |t| t.info().bucket_count()))
}

pub(crate) fn table_column_count(t: &RTable) -> usize {
    guard_or(|| 0, || t.0.as_ref().map_or(0, |t| t.info().schema().len()))
}

pub(crate) fn table_path(t: &RTable) -> String {
    guard_or(String::new, || t.0.as_ref().map_or(String::new(), |t| t.path().to_string()))
}

/// `Table::scan`: `bucket`'s log from `from_offset` to the high watermark, through the protocol.
pub(crate) fn table_scan(t: &RTable, bucket: i32, from_offset: i64, st: &mut FfiStatus) -> Box<RScan> {
    fill(st, || Box::new(RScan(Vec::new())), || Ok(Box::new(RScan(t.get()?.scan(bucket, from_offset)?))))
}

/// `Table::lookup`: the stored row of a primary key (`key`: the key values in primary-key order).
pub(crate) fn table_lookup(t: &RTable, key: &RRow, found: &mut bool, st: &mut FfiStatus) -> Box<RRow> {
    *found = false;
    fill(
        st,
        || Box::new(RRow::default()),
        || {
            let row = t.get()?.lookup(key.values()?)?;
            *found = row.is_some();
            Ok(Box::new(RRow { values: row.unwrap_or_default(), bad: None }))
        },
    )
}

fn writer_options(
    o: &FfiWriterOptions,
    user: SharedPtr<CallbackExecutor>,
    handler: UniquePtr<ErrorHandlerHolder>,
) -> Result<WriterOptions> {
    let executor = match o.executor_kind {
        0 => CoreExecutor::Connection,
        1 => CoreExecutor::Sharded(o.shards),
        2 => {
            if user.is_null() {
                return Err(Error::client(ClientCode::InvalidConfig, "a user executor was chosen but none was given"));
            }
            CoreExecutor::User(std::sync::Arc::new(CxxExecutor(user)))
        }
        k => return Err(Error::client(ClientCode::InvalidConfig, format!("unknown executor kind {k}"))),
    };
    Ok(WriterOptions::default().max_pending_callbacks(o.max_pending_callbacks).executor(executor).error_handler(error_handler(handler)))
}

pub(crate) fn table_create_append_writer(
    t: &RTable,
    o: &FfiWriterOptions,
    user: SharedPtr<CallbackExecutor>,
    handler: UniquePtr<ErrorHandlerHolder>,
    st: &mut FfiStatus,
) -> Box<RWriter> {
    fill(
        st,
        || Box::new(RWriter::None),
        || {
            let opts = writer_options(o, user, handler)?;
            Ok(Box::new(RWriter::Append(t.get()?.new_append()?.create_writer(opts)?)))
        },
    )
}

#[allow(clippy::too_many_arguments, clippy::ptr_arg)] // the bridge signature: cxx passes rust::Vec as &Vec
pub(crate) fn table_create_upsert_writer(
    t: &RTable,
    partial: i32,
    names: &Vec<String>,
    indexes: &Vec<usize>,
    o: &FfiWriterOptions,
    user: SharedPtr<CallbackExecutor>,
    handler: UniquePtr<ErrorHandlerHolder>,
    st: &mut FfiStatus,
) -> Box<RWriter> {
    fill(
        st,
        || Box::new(RWriter::None),
        || {
            let opts = writer_options(o, user, handler)?;
            let mut up = t.get()?.new_upsert()?;
            up = match partial {
                1 => up.partial_update_by_name(names)?,
                2 => up.partial_update_by_index(indexes)?,
                _ => up,
            };
            Ok(Box::new(RWriter::Upsert(up.create_writer(opts)?)))
        },
    )
}

// ===== writers =====

/// An append or upsert writer; `None` after a failed creation (or a moved-from C++ writer).
pub enum RWriter {
    None,
    Append(AppendWriter),
    Upsert(UpsertWriter),
}

impl RWriter {
    fn append(&self) -> Result<&AppendWriter> {
        match self {
            RWriter::Append(w) => Ok(w),
            RWriter::Upsert(_) => Err(Error::client(ClientCode::Unsupported, "append on an upsert writer")),
            RWriter::None => Err(no_writer()),
        }
    }

    fn upsert(&self) -> Result<&UpsertWriter> {
        match self {
            RWriter::Upsert(w) => Ok(w),
            RWriter::Append(_) => Err(Error::client(ClientCode::Unsupported, "upsert on an append writer")),
            RWriter::None => Err(no_writer()),
        }
    }
}

fn no_writer() -> Error {
    Error::client(ClientCode::WriterClosed, "the writer was not created or was moved from")
}

/// How a C++ write call wants to hear about its outcome.
pub(crate) enum CompletionTarget {
    Callback(CxxCallback),
    Result(*mut RWriteResult),
    Detached,
}

/// Decode the (callback, result pointer) pair of a write call.
pub(crate) fn completion_target(cb: FfiCallback, result: *mut RWriteResult) -> CompletionTarget {
    match CxxCallback::new(cb) {
        Some(f) => CompletionTarget::Callback(f),
        None if !result.is_null() => CompletionTarget::Result(result),
        None => CompletionTarget::Detached,
    }
}

/// Run one write in the form `n` asks for: `detached`, `with_cb` or `with_result`.
pub(crate) fn write<D, C, R>(n: CompletionTarget, detached: D, with_cb: C, with_result: R) -> FfiStatus
where
    D: FnOnce() -> Result<()>,
    C: FnOnce(CxxCallback) -> Result<()>,
    R: FnOnce() -> Result<WriteResult>,
{
    let r = guard(move || match n {
        CompletionTarget::Detached => detached(),
        CompletionTarget::Callback(f) => with_cb(f),
        CompletionTarget::Result(p) => {
            let wr = with_result()?;
            // SAFETY: `p` is the storage of a live C++ `WriteResult` the caller holds by `&` for
            // the duration of this call, emptied before it (nothing there is read or dropped);
            // the C++ side records that it holds a handle when this call returns success, which
            // it does from here on.
            unsafe { std::ptr::write(p, RWriteResult(wr)) };
            Ok(())
        }
    });
    status(r)
}

/// The writer and the row's values, or the status of why not (the callback in `n`, if any, is
/// dropped, which destroys the C++ callable before the call returns).
fn writer_and_row<'a, W>(w: Result<&'a W>, row: &'a RRow) -> Result<(&'a W, &'a [fluss_writer::Value])> {
    let w = w?;
    Ok((w, row.values()?))
}

pub(crate) unsafe fn writer_append(w: &RWriter, row: &RRow, cb: FfiCallback, result: *mut RWriteResult) -> FfiStatus {
    let n = completion_target(cb, result);
    let (w, vals) = match guard(|| writer_and_row(w.append(), row)) {
        Ok(x) => x,
        Err(e) => return status_of(&e),
    };
    write(n, || w.append_detached(vals), |f| w.append_with_callback(vals, f.into_closure()), || w.append(vals))
}

pub(crate) unsafe fn writer_upsert(w: &RWriter, row: &RRow, cb: FfiCallback, result: *mut RWriteResult) -> FfiStatus {
    let n = completion_target(cb, result);
    let (w, vals) = match guard(|| writer_and_row(w.upsert(), row)) {
        Ok(x) => x,
        Err(e) => return status_of(&e),
    };
    write(n, || w.upsert_detached(vals), |f| w.upsert_with_callback(vals, f.into_closure()), || w.upsert(vals))
}

pub(crate) unsafe fn writer_delete(w: &RWriter, key: &RRow, cb: FfiCallback, result: *mut RWriteResult) -> FfiStatus {
    let n = completion_target(cb, result);
    let (w, vals) = match guard(|| writer_and_row(w.upsert(), key)) {
        Ok(x) => x,
        Err(e) => return status_of(&e),
    };
    write(n, || w.delete_detached(vals), |f| w.delete_with_callback(vals, f.into_closure()), || w.delete(vals))
}

/// One record with a shared callable (`kind`: 0 append, 1 upsert, 2 delete).
pub(crate) fn writer_write_shared(w: &RWriter, kind: i32, row: &RRow, cb: &RSharedCallback) -> FfiStatus {
    status(guard(|| {
        let f = &cb.0;
        match kind {
            0 => w.append()?.append_with_shared_callback(row.values()?, f),
            1 => w.upsert()?.upsert_with_shared_callback(row.values()?, f),
            2 => w.upsert()?.delete_with_shared_callback(row.values()?, f),
            k => Err(Error::internal(format!("unknown shared write kind {k}"))),
        }
    }))
}

pub(crate) fn writer_append_batch(w: &RWriter, batch: Result<arrow_array::RecordBatch>, n: CompletionTarget) -> FfiStatus {
    let (w, batch) = match w.append().and_then(|w| Ok((w, batch?))) {
        Ok(x) => x,
        Err(e) => return status_of(&e),
    };
    let b = &batch;
    write(n, || w.write_arrow_batch_detached(b), |f| w.write_arrow_batch_with_callback(b, f.into_closure()), || w.write_arrow_batch(b))
}

pub(crate) fn writer_flush(w: &RWriter, timeout_ms: i64) -> FfiStatus {
    let t = timeout(timeout_ms);
    status(guard(|| match w {
        RWriter::Append(w) => w.flush(t),
        RWriter::Upsert(w) => w.flush(t),
        RWriter::None => Err(no_writer()),
    }))
}

pub(crate) fn writer_close(w: &RWriter, timeout_ms: i64) -> FfiStatus {
    let t = timeout(timeout_ms);
    status(guard(|| match w {
        RWriter::Append(w) => w.close(t),
        RWriter::Upsert(w) => w.close(t),
        RWriter::None => Err(no_writer()),
    }))
}

/// An empty handle counts as closed.
pub(crate) fn writer_is_closed(w: &RWriter) -> bool {
    guard_or(
        || true,
        || match w {
            RWriter::Append(w) => w.is_closed(),
            RWriter::Upsert(w) => w.is_closed(),
            RWriter::None => true,
        },
    )
}

pub(crate) fn writer_stats(w: &RWriter) -> FfiWriterStats {
    guard_or(|| writer_stats_of(Default::default()), || writer_stats_of(writer_stats_inner(w)))
}

/// The writer's table (the core's `writer.table()`, a handle sharing its metadata).
pub(crate) fn writer_table(w: &RWriter, st: &mut FfiStatus) -> Box<RTable> {
    fill(
        st,
        || Box::new(RTable(None)),
        || {
            let t = match w {
                RWriter::Append(w) => w.table(),
                RWriter::Upsert(w) => w.table(),
                RWriter::None => return Err(no_writer()),
            };
            Ok(Box::new(RTable(Some(t.clone()))))
        },
    )
}

fn writer_stats_inner(w: &RWriter) -> fluss_writer::WriterStats {
    match w {
        RWriter::Append(w) => w.stats(),
        RWriter::Upsert(w) => w.stats(),
        RWriter::None => Default::default(),
    }
}

fn writer_stats_of(s: fluss_writer::WriterStats) -> FfiWriterStats {
    FfiWriterStats {
        pending_callbacks: s.pending_callbacks,
        callbacks_run: s.callbacks_run,
        callback_errors: s.callback_errors,
        queued_jobs: s.queued_jobs,
        buffer_bytes_in_use: s.buffer_bytes_in_use,
        ack_to_callback_count: s.ack_to_callback.count,
        ack_to_callback_p50_nanos: s.ack_to_callback.p50_nanos,
        ack_to_callback_p99_nanos: s.ack_to_callback.p99_nanos,
        ack_to_callback_max_nanos: s.ack_to_callback.max_nanos,
        jobs_dropped: s.jobs_dropped,
        open_partitions: s.open_partitions,
        records_sent: s.records_sent,
        bytes_sent: s.bytes_sent,
        batches_sent: s.batches_sent,
        records_failed: s.records_failed,
        operations_rejected: s.operations_rejected,
        requests_sent: s.requests_sent,
        retries: s.retries,
        kv_throttled_sends: s.kv_throttled_sends,
        kv_throttle_nanos: s.kv_throttle_nanos,
        kv_pressure_permille: s.kv_pressure_permille,
        slow_callbacks: s.slow_callbacks,
        oldest_pending_batch_age_nanos: s.oldest_pending_batch_age_nanos,
        request_latency_count: s.request_latency.count,
        request_latency_p50_nanos: s.request_latency.p50_nanos,
        request_latency_p99_nanos: s.request_latency.p99_nanos,
        request_latency_max_nanos: s.request_latency.max_nanos,
        batch_records_p50: s.batch_records_p50,
        batch_records_p99: s.batch_records_p99,
        batch_bytes_p50: s.batch_bytes_p50,
        batch_bytes_p99: s.batch_bytes_p99,
    }
}

pub(crate) fn writer_error_counts(w: &RWriter) -> Vec<FfiCodeCount> {
    guard_or(Vec::new, || {
        let codes = match w {
            RWriter::Append(w) => w.error_counts(),
            RWriter::Upsert(w) => w.error_counts(),
            RWriter::None => Vec::new(),
        };
        codes
            .into_iter()
            .map(|c| FfiCodeCount {
                code: c.code,
                name: c.name.to_string(),
                records_failed: c.records_failed,
                retries: c.retries,
                rejected: c.rejected,
            })
            .collect()
    })
}

pub(crate) fn writer_bucket_counts(w: &RWriter) -> Vec<FfiBucketCount> {
    guard_or(Vec::new, || {
        let buckets = match w {
            RWriter::Append(w) => w.bucket_counts(),
            RWriter::Upsert(w) => w.bucket_counts(),
            RWriter::None => Vec::new(),
        };
        buckets
            .into_iter()
            .map(|b| FfiBucketCount {
                partition: b.partition.unwrap_or_default(),
                bucket: b.bucket,
                records_sent: b.records_sent,
                bytes_sent: b.bytes_sent,
                batches_sent: b.batches_sent,
                records_failed: b.records_failed,
                retries: b.retries,
            })
            .collect()
    })
}

pub(crate) use crate::logging::{set_log_level, set_log_sink, stats_reporter_destroy, stats_reporter_start, RStatsReporter};

pub(crate) fn metrics_json() -> String {
    guard_or(|| "{\"writers\":[]}".to_string(), || fluss_writer::metrics::to_json(&fluss_writer::metrics::snapshot()))
}

/// `~AppendWriter`/`~UpsertWriter`: close with the C++ close timeout, then drop. When the close
/// timed out, the operations still pending were completed with `WRITER_CLOSED` (exactly once);
/// the core's drop would wait again (up to the delivery timeout) for their callbacks, so it
/// happens on a background thread and the C++ destructor returns within its bound.
pub(crate) fn writer_destroy(w: Box<RWriter>, timeout_ms: i64) {
    guard_or(
        || (),
        move || {
            let closed = match &*w {
                RWriter::Append(x) => x.close(timeout(timeout_ms)),
                RWriter::Upsert(x) => x.close(timeout(timeout_ms)),
                RWriter::None => Ok(()),
            };
            match closed {
                Err(e) if e.code() == ClientCode::Timeout as i32 => {
                    let spawned = std::thread::Builder::new().name("fluss-writer-drop".into()).spawn(move || drop(w));
                    if let Err(e) = spawned {
                        eprintln!("fluss_writer: cannot start a thread to finish dropping a writer ({e}); leaking it");
                    }
                }
                _ => drop(w),
            }
        },
    )
}

// ===== write results =====

/// A C++ `WriteResult`'s handle of its operation: the core's `WriteResult`, kept inline in the
/// C++ object (`WriteResult::storage_`, 16 bytes aligned to 8, checked below), never boxed. The
/// C++ side tracks whether its storage holds one (`set_`); a write in the `WriteResult` form
/// writes it, `result_drop` drops it, and C++ moves it by copying its bytes.
#[repr(transparent)]
pub struct RWriteResult(WriteResult);

// The C++ storage (`WriteResult::kStorageBytes` in cpp/include/fluss_writer.hpp).
const _: () = assert!(std::mem::size_of::<RWriteResult>() <= 16 && std::mem::align_of::<RWriteResult>() <= 8);

/// A completion owned by C++ (`WriteResult::Wait`); `None` when the wait failed.
pub struct ROwnedCompletion(Option<WriteCompletion>);

/// # Safety
/// `r` is the storage of a C++ `WriteResult` that holds a handle; it holds none afterwards.
pub(crate) unsafe fn result_drop(r: *mut RWriteResult) {
    // SAFETY: the caller's contract; dropping it is the last use of the value.
    guard_or(|| (), || unsafe { std::ptr::drop_in_place(r) })
}

pub(crate) fn result_is_done(r: &RWriteResult) -> bool {
    guard_or(|| false, || r.0.is_done())
}

pub(crate) fn result_wait(r: &RWriteResult, timeout_ms: i64, st: &mut FfiStatus) -> Box<ROwnedCompletion> {
    fill(st, || Box::new(ROwnedCompletion(None)), || Ok(Box::new(ROwnedCompletion(Some(r.0.wait(timeout(timeout_ms))?)))))
}

/// The operation's outcome (`Ok`: it succeeded), or why the wait failed: what `Wait()` with no
/// completion to fill returns. Builds no completion (core `wait_outcome`).
fn wait_outcome(r: &RWriteResult, timeout_ms: i64) -> Result<()> {
    guard(|| r.0.wait_outcome(timeout(timeout_ms)))?
}

/// [`wait_outcome`] as a status; a success allocates nothing (the per-record path, issue 29).
pub(crate) fn result_wait_status(r: &RWriteResult, timeout_ms: i64) -> FfiStatus {
    status(wait_outcome(r, timeout_ms))
}

/// The code alone of [`result_wait_status`] (0: the operation succeeded); a caller that gets
/// another code asks `result_wait_status` for the whole status (with no timeout: the operation
/// has completed, or the wait fails the same way again). Returns no `FfiStatus`, whose string a
/// C++ caller would construct and destroy through the bridge on every call.
pub(crate) fn result_wait_code(r: &RWriteResult, timeout_ms: i64) -> i32 {
    wait_outcome(r, timeout_ms).err().map_or(0, |e| e.code())
}

pub(crate) fn result_add_callback(r: &RWriteResult, cb: FfiCallback) -> FfiStatus {
    match CxxCallback::new(cb) {
        Some(f) => status(guard(|| {
            r.0.add_callback(f.into_closure());
            Ok(())
        })),
        None => ok(),
    }
}

pub(crate) fn owned_completion_get(o: &ROwnedCompletion) -> &RCompletion {
    // Reads a field and at worst initializes a static once: no guard needed.
    static EMPTY: std::sync::OnceLock<WriteCompletion> = std::sync::OnceLock::new();
    let c = o.0.as_ref().unwrap_or_else(|| {
        EMPTY.get_or_init(|| WriteCompletion {
            error: None,
            table: std::sync::Arc::new(TablePath { database: String::new(), table: String::new() }),
            table_id: -1,
            partition: None,
            partition_id: None,
            bucket: -1,
            offset: -1,
            log_end_offset: -1,
            bucket_results: Vec::new(),
        })
    });
    RCompletion::from_ref(c)
}
