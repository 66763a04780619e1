// internal.h: helpers shared by the C++ library's sources (not installed).
#pragma once

#include <chrono>
#include <string>

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

}  // namespace internal
}  // namespace fluss_writer
