// fluss_writer_glue.h: the C++ side of the cxx bridge (private to the library).
//
// Declares the C++ types Rust owns (CallbackBase, ErrorHandlerHolder, CallbackExecutor come from
// fluss_writer.hpp) and the noexcept trampolines Rust calls. Defined in src/glue.cc, which is
// compiled into the Rust static library.
#pragma once

#include <functional>

#include "fluss_writer.hpp"
#include "rust/cxx.h"

namespace fluss_writer {
namespace ffi {
struct CompletionHead;
struct RCompletion;
struct FfiCallback;
}  // namespace ffi

namespace detail {

struct ErrorHandlerHolder {
  std::function<void(const CallbackError&)> fn;
};

struct LogSinkHolder {
  std::function<void(const LogRecord&)> fn;
};

struct StatsSinkHolder {
  std::function<void(const std::string&)> fn;
};

// Calls a WriteCallback's callable and destroys it (also when it threw); returns whether it threw
// (then `thrown` holds the text). Never throws.
bool invoke_write_callback(const ffi::FfiCallback& cb, const ffi::CompletionHead& head, const ffi::RCompletion& c,
                           rust::String& thrown) noexcept;
// Destroys a WriteCallback's callable that will not run.
void drop_write_callback(const ffi::FfiCallback& cb) noexcept;
// Calls a SharedWriteCallback's callable; returns whether it threw (then `thrown` holds the text).
bool invoke_shared_callback(const SharedCallbackBase& cb, const ffi::CompletionHead& head, const ffi::RCompletion& c,
                            rust::String& thrown) noexcept;
// Calls the error handler; swallows what it throws.
void call_error_handler(const ErrorHandlerHolder& h, rust::Str message, rust::Str operation) noexcept;
// Calls the log sink; swallows what it throws.
void call_log_sink(const LogSinkHolder& h, int32_t level, rust::Str target, rust::Str message) noexcept;
// Calls the statistics callback; swallows what it throws.
void call_stats_sink(const StatsSinkHolder& h, rust::Str json) noexcept;
// Hands a job to a user executor; a throwing Execute drops the job (retired and reported).
void execute_job(const CallbackExecutor& e, rust::Box<ffi::RJob> job) noexcept;
// Fills a C++ completion from the Rust one; `table` is set to `name` ("database.table", which the
// caller keeps alive); `partition` views the Rust completion's name (valid while `c` is).
void FillCompletion(const ffi::CompletionHead& head, const ffi::RCompletion& c, std::string_view name,
                    WriteCompletion& out);
// Writes "database.table" of `c` into `out` (reusing its capacity).
void TableName(const ffi::RCompletion& c, std::string& out);

// Reaches the private parts of the public classes.
struct Access {
  static Job MakeJob(ffi::RJob* p) noexcept { return Job(p); }
  // The callable's operations (nullptr for none) and its two words of storage; Disarm gives up
  // ownership (the library then owns the callable).
  static const CallbackOps* Ops(const WriteCallback& cb) noexcept { return cb.ops_; }
  static const unsigned char* Storage(const WriteCallback& cb) noexcept { return cb.storage_; }
  static void Disarm(WriteCallback& cb) noexcept { cb.ops_ = nullptr; }
  static std::shared_ptr<ffi::RSharedCallback>& Ref(SharedWriteCallback& cb) noexcept { return cb.impl_; }
  static const ffi::RSharedCallback* Get(const SharedWriteCallback& cb) noexcept { return cb.impl_.get(); }
  static std::string& OwnedName(WriteCompletion& c) noexcept { return c.table_storage_; }
  static std::string& OwnedPartition(WriteCompletion& c) noexcept { return c.partition_storage_; }
  static std::chrono::milliseconds& CloseTimeout(WriterBase& w) noexcept { return w.close_timeout_; }
  static ffi::RConnection* Get(const Connection& c) noexcept { return c.impl_; }
  static ffi::RWriter* Get(const WriterBase& w) noexcept { return w.impl_; }
  static ffi::RWriter*& Ref(WriterBase& w) noexcept { return w.impl_; }
  static ffi::RRow* Get(const GenericRow& r) noexcept { return r.impl_; }
  // The inline storage of a WriteResult as the library's handle (valid to read when Set()).
  static ffi::RWriteResult* Handle(const WriteResult& r) noexcept {
    return reinterpret_cast<ffi::RWriteResult*>(const_cast<unsigned char*>(r.storage_));
  }
  static bool& Set(WriteResult& r) noexcept { return r.set_; }
  static ffi::RConnection*& Ref(Connection& c) noexcept { return c.impl_; }
  static std::shared_ptr<ffi::RTable>& Ref(Table& t) noexcept { return t.table_; }
  static ffi::RRow*& Ref(GenericRow& r) noexcept { return r.impl_; }
};

}  // namespace detail
}  // namespace fluss_writer
