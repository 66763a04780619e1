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
}  // namespace ffi

namespace detail {

struct ErrorHandlerHolder {
  std::function<void(const CallbackError&)> fn;
};

// Calls the callable; returns "" or the text of what it threw. Never throws.
rust::String invoke_callback(CallbackBase& cb, const ffi::CompletionHead& head, const ffi::RCompletion& c) noexcept;
// Calls the error handler; swallows what it throws.
void call_error_handler(const ErrorHandlerHolder& h, rust::Str message, rust::Str operation) noexcept;
// Hands a job to a user executor; a throwing Execute drops the job (retired and reported).
void execute_job(const CallbackExecutor& e, rust::Box<ffi::RJob> job) noexcept;
// Fills a C++ completion from the Rust one.
void FillCompletion(const ffi::CompletionHead& head, const ffi::RCompletion& c, WriteCompletion& out);

// Reaches the private parts of the public classes.
struct Access {
  static Job MakeJob(ffi::RJob* p) noexcept { return Job(p); }
  static std::unique_ptr<CallbackBase> Release(WriteCallback& cb) noexcept { return std::move(cb.impl_); }
  static ffi::RConnection* Get(const Connection& c) noexcept { return c.impl_; }
  static ffi::RWriter* Get(const WriterBase& w) noexcept { return w.impl_; }
  static ffi::RWriter*& Ref(WriterBase& w) noexcept { return w.impl_; }
  static ffi::RRow* Get(const GenericRow& r) noexcept { return r.impl_; }
  static ffi::RWriteResult*& Ref(WriteResult& r) noexcept { return r.impl_; }
  static ffi::RConnection*& Ref(Connection& c) noexcept { return c.impl_; }
  static std::shared_ptr<ffi::RTable>& Ref(Table& t) noexcept { return t.table_; }
  static ffi::RRow*& Ref(GenericRow& r) noexcept { return r.impl_; }
};

}  // namespace detail
}  // namespace fluss_writer
