// glue.cc: the C++ trampolines called by Rust, and the parts of the public API (Job) that Rust
// code constructs. Compiled into the Rust static library by build.rs, so the C++ library
// depends on the Rust library and never the reverse.
//
// Nothing here lets an exception escape: every function Rust calls is noexcept and catches
// everything.
#include "fluss_writer_glue.h"

#include <cstdio>
#include <exception>
#include <new>

#include "fluss-writer-cxx/src/bridge.rs.h"

namespace fluss_writer {
namespace detail {

namespace {
std::string ToStd(rust::Str s) { return std::string(s.data(), s.size()); }
}  // namespace

void FillCompletion(const ffi::CompletionHead& head, const ffi::RCompletion& c, WriteCompletion& out) {
  out.result.error_code = head.code;
  out.result.retriable = head.retriable;
  if (head.code != 0) {
    out.result.error_message = ToStd(ffi::completion_message(c));
  }
  rust::Str db = ffi::completion_database(c);
  rust::Str table = ffi::completion_table(c);
  out.table.reserve(db.size() + 1 + table.size());
  out.table.append(db.data(), db.size()).append(1, '.').append(table.data(), table.size());
  out.table_id = head.table_id;
  out.partition_id = head.partition_id;
  out.bucket = head.bucket;
  out.offset = head.offset;
  out.log_end_offset = head.log_end_offset;
  if (head.bucket_results > 0) {
    rust::Vec<ffi::FfiBucketResult> v = ffi::completion_bucket_results(c);
    out.bucket_results.reserve(v.size());
    for (const auto& b : v) {
      BucketResult r;
      r.bucket = b.bucket;
      r.rows = b.rows;
      r.base_offset = b.base_offset;
      r.result.error_code = b.code;
      r.result.retriable = b.retriable;
      r.result.error_message = std::string(b.message);
      out.bucket_results.push_back(std::move(r));
    }
  }
}

rust::String invoke_callback(CallbackBase& cb, const ffi::CompletionHead& head, const ffi::RCompletion& c) noexcept {
  try {
    WriteCompletion completion;
    FillCompletion(head, c, completion);
    cb.Call(completion);
    return rust::String();
  } catch (const std::exception& e) {
    return rust::String::lossy(e.what());
  } catch (...) {
    return rust::String::lossy("unknown exception (not derived from std::exception)");
  }
}

void call_error_handler(const ErrorHandlerHolder& h, rust::Str message, rust::Str operation) noexcept {
  try {
    if (h.fn) {
      h.fn(CallbackError{ToStd(message), ToStd(operation)});
    }
  } catch (...) {
    std::fputs("fluss_writer: the error handler threw; ignored\n", stderr);
  }
}

void execute_job(const CallbackExecutor& e, rust::Box<ffi::RJob> job) noexcept {
  try {
    // Execute is non-const; the executor object itself is not const (it is held by shared_ptr).
    const_cast<CallbackExecutor&>(e).Execute(Access::MakeJob(job.into_raw()));
  } catch (...) {
    // The Job was moved into Execute and destroyed during unwinding: its callbacks were
    // dropped unrun, their slots released and the error handler told.
    std::fputs("fluss_writer: CallbackExecutor::Execute threw; the job was dropped\n", stderr);
  }
}

}  // namespace detail

Job::~Job() {
  if (impl_ != nullptr) {
    // Dropping the Rust job retires its tickets and reports it to the error handler.
    (void)rust::Box<ffi::RJob>::from_raw(std::exchange(impl_, nullptr));
  }
}

void Job::Run() {
  if (impl_ != nullptr) {
    ffi::job_run(rust::Box<ffi::RJob>::from_raw(std::exchange(impl_, nullptr)));
  }
}

}  // namespace fluss_writer
