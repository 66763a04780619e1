// internal.h: helpers shared by the C++ library's sources (not installed).
#pragma once

#include <chrono>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fluss_writer.hpp"
#include "fluss_writer_glue.h"
#include "fluss-writer-cxx/src/bridge.rs.h"

namespace fluss_writer {
namespace internal {

inline Result ToResult(const ffi::FfiStatus& st) {
  Result r;
  r.error_code = st.code;
  r.retriable = st.retriable;
  if (st.code != 0) {
    r.error_message = std::string(st.message);
  }
  return r;
}

inline Result ClientError(ClientCode code, std::string message) {
  Result r;
  r.error_code = static_cast<int32_t>(code);
  r.error_message = std::move(message);
  return r;
}

// Milliseconds for the bridge; negative means "no bound". Any duration converts: the core
// turns it into a Duration with fluss_writer::timeouts::from_millis_i64 (negative: unbounded;
// values a deadline cannot hold saturate to unbounded), so no timeout panics.
inline int64_t Millis(std::chrono::milliseconds t) { return t.count() < 0 ? -1 : static_cast<int64_t>(t.count()); }

// Moves a WriteCallback's callable into the bridge struct (the library owns it from here).
inline ffi::FfiCallback TakeCallback(WriteCallback& cb) noexcept {
  ffi::FfiCallback f{0, 0, 0};
  if (const detail::CallbackOps* ops = detail::Access::Ops(cb)) {
    f.ops = reinterpret_cast<size_t>(ops);
    const unsigned char* s = detail::Access::Storage(cb);
    std::memcpy(&f.s0, s, sizeof(f.s0));
    std::memcpy(&f.s1, s + sizeof(f.s0), sizeof(f.s1));
    detail::Access::Disarm(cb);
  }
  return f;
}

inline ffi::FfiCallback NoCallback() noexcept { return ffi::FfiCallback{0, 0, 0}; }

// Whether `s` is valid UTF-8 (what rust::Str demands; its constructor throws otherwise).
inline bool IsUtf8(std::string_view s) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    unsigned char c = *p;
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
      ++p;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (static_cast<size_t>(end - p) <= n) return false;
    for (size_t k = 1; k <= n; ++k) {
      if ((p[k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[k] & 0x3F);
    }
    static constexpr uint32_t kMin[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    p += n + 1;
  }
  return true;
}

// A rust::Str of `s` that never throws: text that is not UTF-8 becomes a lossy copy (U+FFFD for
// bad bytes; names then fail the core's checks, decimal strings fail to parse), kept in a small
// thread-local ring until later calls on this thread reuse it (enough for one bridge call's
// arguments).
inline rust::Str Str(std::string_view s) noexcept {
  if (IsUtf8(s)) return rust::Str(s.data(), s.size());
  thread_local rust::String ring[4];
  thread_local unsigned next = 0;
  rust::String& slot = ring[next++ % 4];
  slot = rust::String::lossy(s.data(), s.size());
  return rust::Str(slot);
}

template <class T>
void DropBox(T* p) noexcept {
  if (p != nullptr) {
    (void)rust::Box<T>::from_raw(p);
  }
}

// Handles whose drop runs core code go through a guarded bridge function (a panic in a cxx
// drop shim would abort).
inline void DropBox(ffi::RConnection* p) noexcept {
  if (p != nullptr) ffi::connection_destroy(rust::Box<ffi::RConnection>::from_raw(p));
}
inline void DropBox(ffi::RSharedCallback* p) noexcept {
  if (p != nullptr) ffi::shared_callback_destroy(rust::Box<ffi::RSharedCallback>::from_raw(p));
}

// Moves a scan's rows into `out` (replacing its contents).
inline void ScanToRows(const ffi::RScan& s, std::vector<ScannedRow>& out) {
  out.clear();
  size_t n = ffi::scan_len(s);
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    ScannedRow r;
    r.offset = ffi::scan_offset(s, i);
    r.change_type = std::string(ffi::scan_change_type(s, i));
    DropBox(std::exchange(detail::Access::Ref(r.row), ffi::scan_row(s, i).into_raw()));
    out.push_back(std::move(r));
  }
}

// A testing::Fault as the bridge takes it.
inline ffi::FfiFault ToFfiFault(const testing::Fault& fault) {
  ffi::FfiFault f;
  f.kind = static_cast<int32_t>(fault.kind);
  f.code = fault.code;
  f.message = rust::String::lossy(fault.message);
  f.times = fault.times;
  f.delay_ms = fault.delay.count() < 0 ? 0 : static_cast<uint64_t>(fault.delay.count());
  f.after_apply = fault.after_apply;
  return f;
}

}  // namespace internal
}  // namespace fluss_writer
