// internal.h: helpers shared by the C++ library's sources (not installed).
#pragma once

#include <chrono>
#include <string>
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

// Milliseconds for the bridge; negative means "no bound".
inline int64_t Millis(std::chrono::milliseconds t) { return t.count() < 0 ? -1 : static_cast<int64_t>(t.count()); }

inline rust::Str Str(const std::string& s) { return rust::Str(s.data(), s.size()); }

template <class T>
void DropBox(T* p) noexcept {
  if (p != nullptr) {
    (void)rust::Box<T>::from_raw(p);
  }
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

}  // namespace internal
}  // namespace fluss_writer
