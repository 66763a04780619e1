// glue.cc: the C++ trampolines called by Rust (Job's members, which Rust code needs too, are in
// glue_job.cc). Compiled into the Rust static library by build.rs, so the C++ library
// depends on the Rust library and never the reverse.
//
// Nothing here lets an exception escape: every function Rust calls is noexcept and catches
// everything.
//
// The callback path allocates nothing: the callable's bytes come by value (FfiCallback), the
// WriteCompletion is built on the stack, its `table` views a stack buffer that holds
// "database.table" for the duration of the call, and its `partition` views the core's copy of
// the partition name (empty, with no pointer at all, for a table without partitions).
#include "fluss_writer_glue.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "fluss-writer-cxx/src/bridge.rs.h"

namespace fluss_writer {
namespace detail {

namespace {
std::string ToStd(rust::Str s) { return std::string(s.data(), s.size()); }

// How long a "database.table" may be to be built on the stack (Fluss names are far shorter; a
// longer one goes to a std::string).
constexpr size_t kNameBuffer = 400;

// The callable's two words of storage, back in a suitably aligned buffer.
struct Storage {
  alignas(void*) unsigned char bytes[kWriteCallbackInlineSize];
  explicit Storage(const ffi::FfiCallback& cb) noexcept {
    static_assert(sizeof(cb.s0) + sizeof(cb.s1) == kWriteCallbackInlineSize, "two words");
    std::memcpy(bytes, &cb.s0, sizeof(cb.s0));
    std::memcpy(bytes + sizeof(cb.s0), &cb.s1, sizeof(cb.s1));
  }
};

// memcpy for the short strings of a table name: overlapping word moves instead of a libc call.
inline void CopyShort(char* dst, const char* src, size_t n) noexcept {
  if (n >= 16) {
    std::memcpy(dst, src, n);
  } else if (n >= 8) {
    uint64_t a, b;
    std::memcpy(&a, src, 8);
    std::memcpy(&b, src + n - 8, 8);
    std::memcpy(dst, &a, 8);
    std::memcpy(dst + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, src, 4);
    std::memcpy(&b, src + n - 4, 4);
    std::memcpy(dst, &a, 4);
    std::memcpy(dst + n - 4, &b, 4);
  } else {
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

// The fields of a completion (inlined into the callback path).
__attribute__((always_inline)) inline void Fill(const ffi::CompletionHead& head, const ffi::RCompletion& c, std::string_view name,
                 WriteCompletion& out) {
  out.result.error_code = head.code;
  out.result.retriable = head.retriable;
  if (head.code != 0) {
    out.result.error_message = ToStd(ffi::completion_message(c));
  }
  out.table = name;
  if (head.partition_len > 0) {
    out.partition = std::string_view(reinterpret_cast<const char*>(head.partition_ptr), head.partition_len);
  }
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
      r.partition = std::string(b.partition);
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

const CallbackOps* OpsOf(const ffi::FfiCallback& cb) noexcept { return reinterpret_cast<const CallbackOps*>(cb.ops); }

// Builds the completion and calls `f` with it; returns whether it threw (the text in `thrown`).
template <class F>
bool Deliver(const ffi::CompletionHead& head, const ffi::RCompletion& c, rust::String& thrown, F&& f) noexcept {
  try {
    // "database.table" lives in this frame for the duration of the call (the view the callback
    // gets); no allocation, no thread-local state, nested deliveries get their own frame.
    const size_t n = head.database_len + 1 + head.table_len;
    char buf[kNameBuffer];
    std::string spill;
    std::string_view name;
    if (n <= sizeof(buf)) {
      CopyShort(buf, reinterpret_cast<const char*>(head.database_ptr), head.database_len);
      buf[head.database_len] = '.';
      CopyShort(buf + head.database_len + 1, reinterpret_cast<const char*>(head.table_ptr), head.table_len);
      name = std::string_view(buf, n);
    } else {
      spill.reserve(n);
      spill.append(reinterpret_cast<const char*>(head.database_ptr), head.database_len)
          .append(1, '.')
          .append(reinterpret_cast<const char*>(head.table_ptr), head.table_len);
      name = spill;
    }
    WriteCompletion completion;
    Fill(head, c, name, completion);
    f(completion);
    return false;
  } catch (const std::exception& e) {
    thrown = rust::String::lossy(e.what());
  } catch (...) {
    thrown = rust::String::lossy("unknown exception (not derived from std::exception)");
  }
  return true;
}
}  // namespace

void TableName(const ffi::RCompletion& c, std::string& out) {
  ffi::CompletionHead head = ffi::completion_head(c);
  out.assign(reinterpret_cast<const char*>(head.database_ptr), head.database_len)
      .append(1, '.')
      .append(reinterpret_cast<const char*>(head.table_ptr), head.table_len);
}

void FillCompletion(const ffi::CompletionHead& head, const ffi::RCompletion& c, std::string_view name,
                    WriteCompletion& out) {
  Fill(head, c, name, out);
}

bool invoke_write_callback(const ffi::FfiCallback& cb, const ffi::CompletionHead& head, const ffi::RCompletion& c,
                           rust::String& thrown) noexcept {
  const CallbackOps* ops = OpsOf(cb);
  Storage storage(cb);
  bool threw = Deliver(head, c, thrown, [&](const WriteCompletion& wc) { ops->call(storage.bytes, wc); });
  ops->destroy(storage.bytes);  // noexcept: after the call, also when it threw
  return threw;
}

void drop_write_callback(const ffi::FfiCallback& cb) noexcept {
  if (const CallbackOps* ops = OpsOf(cb)) {
    Storage storage(cb);
    ops->destroy(storage.bytes);
  }
}

bool invoke_shared_callback(const SharedCallbackBase& cb, const ffi::CompletionHead& head, const ffi::RCompletion& c,
                            rust::String& thrown) noexcept {
  return Deliver(head, c, thrown, [&](const WriteCompletion& wc) { cb.Call(wc); });
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

void call_log_sink(const LogSinkHolder& h, int32_t level, rust::Str target, rust::Str message) noexcept {
  try {
    if (h.fn) {
      h.fn(LogRecord{static_cast<LogLevel>(level), ToStd(target), ToStd(message)});
    }
  } catch (...) {
    std::fputs("fluss_writer: the log callback threw; ignored\n", stderr);
  }
}

void call_stats_sink(const StatsSinkHolder& h, rust::Str json) noexcept {
  try {
    if (h.fn) {
      h.fn(ToStd(json));
    }
  } catch (...) {
    std::fputs("fluss_writer: the statistics callback threw; ignored\n", stderr);
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

}  // namespace fluss_writer
