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

// The WriteResult slot for a call in the WriteResult form (created on first use).
ffi::RWriteResult* Slot(WriteResult& r) {
  ffi::RWriteResult*& p = detail::Access::Ref(r);
  if (p == nullptr) {
    p = ffi::result_new().into_raw();
  }
  return p;
}

using RowCall = ffi::FfiStatus (*)(const ffi::RWriter&, const ffi::RRow&, std::unique_ptr<detail::CallbackBase>,
                                   ffi::RWriteResult*);

Result RowWrite(ffi::RWriter* w, const GenericRow& row, RowCall call, std::unique_ptr<detail::CallbackBase> cb,
                ffi::RWriteResult* result) {
  if (w == nullptr) return NoWriter();
  ffi::RRow* r = detail::Access::Get(row);
  if (r == nullptr) return NoRow();
  return ToResult(call(*w, *r, std::move(cb), result));
}

}  // namespace

// ===== WriterBase =====

WriterBase::~WriterBase() { DropBox(std::exchange(impl_, nullptr)); }

WriterBase& WriterBase::operator=(WriterBase&& other) noexcept {
  if (this != &other) {
    DropBox(std::exchange(impl_, std::exchange(other.impl_, nullptr)));
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
  }
  return s;
}

// ===== AppendWriter =====

Result AppendWriter::Append(const GenericRow& row) { return RowWrite(impl_, row, ffi::writer_append, nullptr, nullptr); }

Result AppendWriter::Append(const GenericRow& row, WriteResult& result) {
  if (impl_ == nullptr) return NoWriter();
  return RowWrite(impl_, row, ffi::writer_append, nullptr, Slot(result));
}

Result AppendWriter::Append(const GenericRow& row, WriteCallback callback) {
  return RowWrite(impl_, row, ffi::writer_append, detail::Access::Release(callback), nullptr);
}

static Result ArrowWrite(ffi::RWriter* w, ArrowArray* array, ArrowSchema* schema,
                         std::unique_ptr<detail::CallbackBase> cb, ffi::RWriteResult* result) {
  if (w == nullptr) {
    // Still honour "the callee moves from the structs".
    if (array != nullptr && array->release != nullptr) array->release(array);
    if (schema != nullptr && schema->release != nullptr) schema->release(schema);
    return NoWriter();
  }
  return ToResult(ffi::writer_append_arrow(*w, reinterpret_cast<size_t>(array), reinterpret_cast<size_t>(schema),
                                           std::move(cb), result));
}

static Result StreamWrite(ffi::RWriter* w, ArrowArrayStream* stream, std::unique_ptr<detail::CallbackBase> cb,
                          ffi::RWriteResult* result) {
  if (w == nullptr) {
    if (stream != nullptr && stream->release != nullptr) stream->release(stream);
    return NoWriter();
  }
  return ToResult(ffi::writer_append_arrow_stream(*w, reinterpret_cast<size_t>(stream), std::move(cb), result));
}

Result AppendWriter::AppendArrowBatch(ArrowArray* array, ArrowSchema* schema) {
  return ArrowWrite(impl_, array, schema, nullptr, nullptr);
}

Result AppendWriter::AppendArrowBatch(ArrowArray* array, ArrowSchema* schema, WriteResult& result) {
  return ArrowWrite(impl_, array, schema, nullptr, impl_ ? Slot(result) : nullptr);
}

Result AppendWriter::AppendArrowBatch(ArrowArray* array, ArrowSchema* schema, WriteCallback callback) {
  return ArrowWrite(impl_, array, schema, detail::Access::Release(callback), nullptr);
}

Result AppendWriter::AppendArrowBatch(ArrowArrayStream* stream) { return StreamWrite(impl_, stream, nullptr, nullptr); }

Result AppendWriter::AppendArrowBatch(ArrowArrayStream* stream, WriteResult& result) {
  return StreamWrite(impl_, stream, nullptr, impl_ ? Slot(result) : nullptr);
}

Result AppendWriter::AppendArrowBatch(ArrowArrayStream* stream, WriteCallback callback) {
  return StreamWrite(impl_, stream, detail::Access::Release(callback), nullptr);
}

// ===== UpsertWriter =====

Result UpsertWriter::Upsert(const GenericRow& row) { return RowWrite(impl_, row, ffi::writer_upsert, nullptr, nullptr); }

Result UpsertWriter::Upsert(const GenericRow& row, WriteResult& result) {
  if (impl_ == nullptr) return NoWriter();
  return RowWrite(impl_, row, ffi::writer_upsert, nullptr, Slot(result));
}

Result UpsertWriter::Upsert(const GenericRow& row, WriteCallback callback) {
  return RowWrite(impl_, row, ffi::writer_upsert, detail::Access::Release(callback), nullptr);
}

Result UpsertWriter::Delete(const GenericRow& key) { return RowWrite(impl_, key, ffi::writer_delete, nullptr, nullptr); }

Result UpsertWriter::Delete(const GenericRow& key, WriteResult& result) {
  if (impl_ == nullptr) return NoWriter();
  return RowWrite(impl_, key, ffi::writer_delete, nullptr, Slot(result));
}

Result UpsertWriter::Delete(const GenericRow& key, WriteCallback callback) {
  return RowWrite(impl_, key, ffi::writer_delete, detail::Access::Release(callback), nullptr);
}

// ===== WriteResult =====

WriteResult::~WriteResult() { DropBox(std::exchange(impl_, nullptr)); }

WriteResult& WriteResult::operator=(WriteResult&& other) noexcept {
  if (this != &other) {
    DropBox(std::exchange(impl_, std::exchange(other.impl_, nullptr)));
  }
  return *this;
}

static Result NotFilled() {
  return internal::ClientError(ClientCode::Unsupported, "this WriteResult was not filled by a write call");
}

Result WriteResult::Wait(WriteCompletion* out) const { return Wait(std::chrono::milliseconds(-1), out); }

Result WriteResult::Wait(std::chrono::milliseconds timeout, WriteCompletion* out) const {
  if (impl_ == nullptr) return NotFilled();
  ffi::FfiStatus st;
  rust::Box<ffi::ROwnedCompletion> owned = ffi::result_wait(*impl_, internal::Millis(timeout), st);
  if (st.code != 0) {
    return ToResult(st);
  }
  const ffi::RCompletion& c = ffi::owned_completion_get(*owned);
  ffi::CompletionHead head = ffi::completion_head(c);
  if (out != nullptr) {
    *out = WriteCompletion{};
    detail::FillCompletion(head, c, *out);
    return out->result;
  }
  Result r;
  r.error_code = head.code;
  r.retriable = head.retriable;
  if (head.code != 0) r.error_message = std::string(ffi::completion_message(c));
  return r;
}

Result WriteResult::OnComplete(WriteCallback callback) const {
  if (impl_ == nullptr) return NotFilled();
  return ToResult(ffi::result_add_callback(*impl_, detail::Access::Release(callback)));
}

bool WriteResult::IsDone() const { return impl_ != nullptr && ffi::result_is_done(*impl_); }

bool WriteResult::Valid() const { return impl_ != nullptr && ffi::result_is_set(*impl_); }

}  // namespace fluss_writer
