// writer.cpp: AppendWriter, UpsertWriter and WriteResult. Each call converts its arguments and
// makes one bridge call; the callable is handed to Rust as a unique_ptr (destroyed by Rust, on
// the executor thread after it ran, or before the call returns if the write is rejected).
#include <utility>

#include "internal.h"

namespace fluss_writer {

using internal::DropBox;
using internal::ToResult;

namespace {

Result NoWriter() {
  return internal::ClientError(ClientCode::WriterClosed, "the writer was not created or was moved from");
}

Result NoRow() { return internal::ClientError(ClientCode::InvalidRow, "the GenericRow was moved from"); }

// Empties a WriteResult: its handle, if any, is dropped.
void Reset(WriteResult& r) noexcept {
  if (std::exchange(detail::Access::Set(r), false)) ffi::result_drop(detail::Access::Handle(r));
}

// The storage for a call in the WriteResult form: emptied first; the call writes a handle into
// it exactly when it succeeds (Filled below records that), and not at all without a writer.
ffi::RWriteResult* Slot(WriteResult& r) noexcept {
  Reset(r);
  return detail::Access::Handle(r);
}

// `r` is the outcome of a call that was given Slot(result).
Result Filled(WriteResult& result, Result r) {
  detail::Access::Set(result) = r.Ok();
  return r;
}

using RowCall = ffi::FfiStatus (*)(const ffi::RWriter&, const ffi::RRow&, ffi::FfiCallback, ffi::RWriteResult*);

// `cb` is consumed: on an early error its callable is destroyed here, before the call returns.
Result RowWrite(ffi::RWriter* w, const GenericRow& row, RowCall call, WriteCallback cb, ffi::RWriteResult* result) {
  if (w == nullptr) return NoWriter();
  ffi::RRow* r = detail::Access::Get(row);
  if (r == nullptr) return NoRow();
  return ToResult(call(*w, *r, internal::TakeCallback(cb), result));
}

// 0 append, 1 upsert, 2 delete.
Result SharedWrite(ffi::RWriter* w, const GenericRow& row, int32_t kind, const SharedWriteCallback& cb) {
  if (w == nullptr) return NoWriter();
  ffi::RRow* r = detail::Access::Get(row);
  if (r == nullptr) return NoRow();
  const ffi::RSharedCallback* f = detail::Access::Get(cb);
  if (f == nullptr) return internal::ClientError(ClientCode::Unsupported, "the SharedWriteCallback is empty");
  return ToResult(ffi::writer_write_shared(*w, kind, *r, *f));
}

}  // namespace

// ===== WriterBase =====

namespace {
// Closes (bounded by `close_timeout`) and drops a writer.
void DestroyWriter(ffi::RWriter* w, std::chrono::milliseconds close_timeout) noexcept {
  if (w != nullptr) {
    ffi::writer_destroy(rust::Box<ffi::RWriter>::from_raw(w), internal::Millis(close_timeout));
  }
}
}  // namespace

WriterBase::~WriterBase() { DestroyWriter(std::exchange(impl_, nullptr), close_timeout_); }

WriterBase& WriterBase::operator=(WriterBase&& other) noexcept {
  if (this != &other) {
    DestroyWriter(std::exchange(impl_, std::exchange(other.impl_, nullptr)), close_timeout_);
    close_timeout_ = other.close_timeout_;
  }
  return *this;
}

Result WriterBase::Flush() { return Flush(std::chrono::milliseconds(-1)); }

Result WriterBase::Flush(std::chrono::milliseconds timeout) {
  if (impl_ == nullptr) return NoWriter();
  return ToResult(ffi::writer_flush(*impl_, internal::Millis(timeout)));
}

Result WriterBase::Close() { return Close(std::chrono::milliseconds(-1)); }

Result WriterBase::Close(std::chrono::milliseconds timeout) {
  if (impl_ == nullptr) return NoWriter();
  return ToResult(ffi::writer_close(*impl_, internal::Millis(timeout)));
}

bool WriterBase::IsClosed() const noexcept { return impl_ == nullptr || ffi::writer_is_closed(*impl_); }

WriterStats WriterBase::Stats() const {
  WriterStats s;
  if (impl_ != nullptr) {
    ffi::FfiWriterStats f = ffi::writer_stats(*impl_);
    s.pending_callbacks = f.pending_callbacks;
    s.callbacks_run = f.callbacks_run;
    s.callback_errors = f.callback_errors;
    s.queued_jobs = f.queued_jobs;
    s.buffer_bytes_in_use = f.buffer_bytes_in_use;
    s.ack_to_callback_count = f.ack_to_callback_count;
    s.ack_to_callback_p50_nanos = f.ack_to_callback_p50_nanos;
    s.ack_to_callback_p99_nanos = f.ack_to_callback_p99_nanos;
    s.ack_to_callback_max_nanos = f.ack_to_callback_max_nanos;
    s.jobs_dropped = f.jobs_dropped;
    s.open_partitions = f.open_partitions;
    s.records_sent = f.records_sent;
    s.bytes_sent = f.bytes_sent;
    s.batches_sent = f.batches_sent;
    s.records_failed = f.records_failed;
    s.operations_rejected = f.operations_rejected;
    s.requests_sent = f.requests_sent;
    s.retries = f.retries;
    s.kv_throttled_sends = f.kv_throttled_sends;
    s.kv_throttle_nanos = f.kv_throttle_nanos;
    s.kv_pressure_permille = f.kv_pressure_permille;
    s.slow_callbacks = f.slow_callbacks;
    s.oldest_pending_batch_age_nanos = f.oldest_pending_batch_age_nanos;
    s.request_latency_count = f.request_latency_count;
    s.request_latency_p50_nanos = f.request_latency_p50_nanos;
    s.request_latency_p99_nanos = f.request_latency_p99_nanos;
    s.request_latency_max_nanos = f.request_latency_max_nanos;
    s.batch_records_p50 = f.batch_records_p50;
    s.batch_records_p99 = f.batch_records_p99;
    s.batch_bytes_p50 = f.batch_bytes_p50;
    s.batch_bytes_p99 = f.batch_bytes_p99;
  }
  return s;
}

std::vector<CodeCount> WriterBase::ErrorCounts() const {
  std::vector<CodeCount> out;
  if (impl_ == nullptr) return out;
  for (const auto& c : ffi::writer_error_counts(*impl_)) {
    out.push_back(CodeCount{c.code, std::string(c.name), c.records_failed, c.retries, c.rejected});
  }
  return out;
}

std::vector<BucketCount> WriterBase::BucketCounts() const {
  std::vector<BucketCount> out;
  if (impl_ == nullptr) return out;
  for (const auto& b : ffi::writer_bucket_counts(*impl_)) {
    out.push_back(BucketCount{std::string(b.partition), b.bucket, b.records_sent, b.bytes_sent, b.batches_sent,
                              b.records_failed, b.retries});
  }
  return out;
}

std::string MetricsJson() { return std::string(ffi::metrics_json()); }

void SetLogCallback(std::function<void(const LogRecord&)> sink) {
  std::unique_ptr<detail::LogSinkHolder> h;
  if (sink) h = std::make_unique<detail::LogSinkHolder>(detail::LogSinkHolder{std::move(sink)});
  ffi::set_log_sink(std::move(h));
}

void SetLogLevel(LogLevel level) { ffi::set_log_level(static_cast<int32_t>(level)); }

StatisticsReporter& StatisticsReporter::operator=(StatisticsReporter&& o) noexcept {
  if (this != &o) {
    Stop();
    impl_ = std::exchange(o.impl_, nullptr);
  }
  return *this;
}

Result StatisticsReporter::Start(std::chrono::milliseconds interval, std::function<void(const std::string&)> callback,
                                 StatisticsReporter& out) {
  if (!callback) return internal::ClientError(ClientCode::InvalidConfig, "StatisticsReporter::Start: no callback");
  auto h = std::make_unique<detail::StatsSinkHolder>(detail::StatsSinkHolder{std::move(callback)});
  ffi::FfiStatus st;
  rust::Box<ffi::RStatsReporter> r = ffi::stats_reporter_start(interval.count(), std::move(h), st);
  if (st.code != 0) return ToResult(st);
  out.Stop();
  out.impl_ = r.into_raw();
  return Result{};
}

void StatisticsReporter::Stop() noexcept {
  if (impl_ != nullptr) ffi::stats_reporter_destroy(rust::Box<ffi::RStatsReporter>::from_raw(std::exchange(impl_, nullptr)));
}

fluss_writer::Table WriterBase::Table() const {
  fluss_writer::Table t;
  if (impl_ == nullptr) return t;
  ffi::FfiStatus st;
  rust::Box<ffi::RTable> r = ffi::writer_table(*impl_, st);
  if (st.code == 0) {
    detail::Access::Ref(t) = std::shared_ptr<ffi::RTable>(r.into_raw(), [](ffi::RTable* p) { DropBox(p); });
  }
  return t;
}

// ===== AppendWriter =====

Result AppendWriter::AppendDetached(const GenericRow& row) { return RowWrite(impl_, row, ffi::writer_append, nullptr, nullptr); }

Result AppendWriter::Append(const GenericRow& row, WriteResult& result) {
  return Filled(result, RowWrite(impl_, row, ffi::writer_append, nullptr, Slot(result)));
}

Result AppendWriter::Append(const GenericRow& row, WriteCallback callback) {
  return RowWrite(impl_, row, ffi::writer_append, std::move(callback), nullptr);
}

Result AppendWriter::Append(const GenericRow& row, const SharedWriteCallback& callback) {
  return SharedWrite(impl_, row, 0, callback);
}

static Result ArrowWrite(ffi::RWriter* w, ArrowArray* array, ArrowSchema* schema, WriteCallback cb,
                         ffi::RWriteResult* result) {
  if (w == nullptr) {
    // Still honour "the callee moves from the structs".
    if (array != nullptr && array->release != nullptr) array->release(array);
    if (schema != nullptr && schema->release != nullptr) schema->release(schema);
    return NoWriter();
  }
  return ToResult(ffi::writer_append_arrow(*w, reinterpret_cast<size_t>(array), reinterpret_cast<size_t>(schema),
                                           internal::TakeCallback(cb), result));
}

static Result StreamWrite(ffi::RWriter* w, ArrowArrayStream* stream, WriteCallback cb, ffi::RWriteResult* result) {
  if (w == nullptr) {
    if (stream != nullptr && stream->release != nullptr) stream->release(stream);
    return NoWriter();
  }
  return ToResult(ffi::writer_append_arrow_stream(*w, reinterpret_cast<size_t>(stream), internal::TakeCallback(cb), result));
}

Result AppendWriter::WriteArrowBatchDetached(ArrowArray* array, ArrowSchema* schema) {
  return ArrowWrite(impl_, array, schema, nullptr, nullptr);
}

Result AppendWriter::WriteArrowBatch(ArrowArray* array, ArrowSchema* schema, WriteResult& result) {
  return Filled(result, ArrowWrite(impl_, array, schema, nullptr, Slot(result)));
}

Result AppendWriter::WriteArrowBatch(ArrowArray* array, ArrowSchema* schema, WriteCallback callback) {
  return ArrowWrite(impl_, array, schema, std::move(callback), nullptr);
}

Result AppendWriter::WriteArrowBatchDetached(ArrowArrayStream* stream) { return StreamWrite(impl_, stream, nullptr, nullptr); }

Result AppendWriter::WriteArrowBatch(ArrowArrayStream* stream, WriteResult& result) {
  return Filled(result, StreamWrite(impl_, stream, nullptr, Slot(result)));
}

Result AppendWriter::WriteArrowBatch(ArrowArrayStream* stream, WriteCallback callback) {
  return StreamWrite(impl_, stream, std::move(callback), nullptr);
}

// ===== UpsertWriter =====

Result UpsertWriter::UpsertDetached(const GenericRow& row) { return RowWrite(impl_, row, ffi::writer_upsert, nullptr, nullptr); }

Result UpsertWriter::Upsert(const GenericRow& row, WriteResult& result) {
  return Filled(result, RowWrite(impl_, row, ffi::writer_upsert, nullptr, Slot(result)));
}

Result UpsertWriter::Upsert(const GenericRow& row, WriteCallback callback) {
  return RowWrite(impl_, row, ffi::writer_upsert, std::move(callback), nullptr);
}

Result UpsertWriter::Upsert(const GenericRow& row, const SharedWriteCallback& callback) {
  return SharedWrite(impl_, row, 1, callback);
}

Result UpsertWriter::DeleteDetached(const GenericRow& key) { return RowWrite(impl_, key, ffi::writer_delete, nullptr, nullptr); }

Result UpsertWriter::Delete(const GenericRow& key, WriteResult& result) {
  return Filled(result, RowWrite(impl_, key, ffi::writer_delete, nullptr, Slot(result)));
}

Result UpsertWriter::Delete(const GenericRow& key, WriteCallback callback) {
  return RowWrite(impl_, key, ffi::writer_delete, std::move(callback), nullptr);
}

Result UpsertWriter::Delete(const GenericRow& key, const SharedWriteCallback& callback) {
  return SharedWrite(impl_, key, 2, callback);
}

// ===== SharedWriteCallback =====

void SharedWriteCallback::Init(std::unique_ptr<detail::SharedCallbackBase> f) {
  rust::Box<ffi::RSharedCallback> b = ffi::shared_callback_new(std::move(f));
  impl_ = std::shared_ptr<ffi::RSharedCallback>(b.into_raw(), [](ffi::RSharedCallback* p) { DropBox(p); });
}

// ===== WriteResult =====
//
// The handle is a Rust value kept in `storage_`; Rust values move by copying their bytes (the
// source is then never dropped), which is what the moves below do.

WriteResult::~WriteResult() { Reset(*this); }

WriteResult::WriteResult(WriteResult&& other) noexcept {
  if (std::exchange(other.set_, false)) {
    std::memcpy(storage_, other.storage_, kStorageBytes);
    set_ = true;
  }
}

WriteResult& WriteResult::operator=(WriteResult&& other) noexcept {
  if (this != &other) {
    Reset(*this);
    if (std::exchange(other.set_, false)) {
      std::memcpy(storage_, other.storage_, kStorageBytes);
      set_ = true;
    }
  }
  return *this;
}

static Result NotFilled() {
  return internal::ClientError(ClientCode::Unsupported, "this WriteResult was not filled by a write call");
}

Result WriteResult::Wait(WriteCompletion* out) const { return Wait(std::chrono::milliseconds(-1), out); }

Result WriteResult::Wait(std::chrono::milliseconds timeout, WriteCompletion* out) const {
  if (!set_) return NotFilled();
  const ffi::RWriteResult& h = *detail::Access::Handle(*this);
  // Only the outcome: a success is one call returning 0 (no completion, no status string);
  // anything else is read again as a whole status, at once (it completed, or fails the same way).
  if (out == nullptr) {
    if (ffi::result_wait_code(h, internal::Millis(timeout)) == 0) return Result{};
    return ToResult(ffi::result_wait_status(h, 0));
  }
  ffi::FfiStatus st;
  rust::Box<ffi::ROwnedCompletion> owned = ffi::result_wait(h, internal::Millis(timeout), st);
  if (st.code != 0) {
    return ToResult(st);
  }
  const ffi::RCompletion& c = ffi::owned_completion_get(*owned);
  ffi::CompletionHead head = ffi::completion_head(c);
  *out = WriteCompletion{};
  std::string& name = detail::Access::OwnedName(*out);  // `out` owns its table name
  detail::TableName(c, name);
  detail::FillCompletion(head, c, name, *out);
  // `out` owns its partition name too (the view above points into `owned`).
  if (!out->partition.empty()) {
    std::string& partition = detail::Access::OwnedPartition(*out);
    partition.assign(out->partition.data(), out->partition.size());
    out->partition = partition;
  }
  return out->result;
}

Result WriteResult::OnComplete(WriteCallback callback) const {
  if (!set_) {
    WriteCallback dropped = std::move(callback);  // destroyed before the call returns, as elsewhere
    return NotFilled();
  }
  return ToResult(ffi::result_add_callback(*detail::Access::Handle(*this), internal::TakeCallback(callback)));
}

bool WriteResult::IsDone() const { return set_ && ffi::result_is_done(*detail::Access::Handle(*this)); }

bool WriteResult::Valid() const { return set_; }

}  // namespace fluss_writer
