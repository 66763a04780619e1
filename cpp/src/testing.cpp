// testing.cpp: fluss_writer::testing (embedded engine read-back, fault injection and the
// client-code list for the drift test). The test hooks are in test_hooks.cpp.
#include <utility>

#include "internal.h"

namespace fluss_writer {
namespace testing {

using internal::Str;
using internal::ToFfiFault;
using internal::ToResult;

namespace {
Result NotOpen() { return internal::ClientError(ClientCode::ConnectionClosed, "the connection is not open"); }
}  // namespace

Result InjectFault(const Connection& conn, const TablePath& path, int32_t bucket, const Fault& fault) {
  ffi::RConnection* c = detail::Access::Get(conn);
  if (c == nullptr) return NotOpen();
  return ToResult(ffi::testing_inject_fault(*c, Str(path.database()), Str(path.table()), bucket, ToFfiFault(fault)));
}

Result InjectCoordinatorFault(const Connection& conn, const Fault& fault) {
  ffi::RConnection* c = detail::Access::Get(conn);
  if (c == nullptr) return NotOpen();
  return ToResult(ffi::testing_inject_coordinator_fault(*c, ToFfiFault(fault)));
}

Result ClearFaults(const Connection& conn) {
  ffi::RConnection* c = detail::Access::Get(conn);
  if (c == nullptr) return NotOpen();
  return ToResult(ffi::testing_clear_faults(*c));
}

Result Scan(const Connection& conn, const TablePath& path, int32_t bucket, int64_t from_offset,
            std::vector<ScannedRow>& out) {
  ffi::RConnection* c = detail::Access::Get(conn);
  if (c == nullptr) return NotOpen();
  ffi::FfiStatus st;
  rust::Box<ffi::RScan> s = ffi::testing_scan(*c, Str(path.database()), Str(path.table()), bucket, from_offset, st);
  if (st.code != 0) return ToResult(st);
  internal::ScanToRows(*s, out);
  return Result{};
}

Result Lookup(const Connection& conn, const TablePath& path, const GenericRow& key, GenericRow& out, bool& found) {
  ffi::RConnection* c = detail::Access::Get(conn);
  if (c == nullptr) return NotOpen();
  ffi::RRow* k = detail::Access::Get(key);
  if (k == nullptr) return internal::ClientError(ClientCode::InvalidRow, "the key GenericRow was moved from");
  ffi::FfiStatus st;
  rust::Box<ffi::RRow> row = ffi::testing_lookup(*c, Str(path.database()), Str(path.table()), *k, found, st);
  if (st.code != 0) return ToResult(st);
  internal::DropBox(std::exchange(detail::Access::Ref(out), row.into_raw()));
  return Result{};
}

Result HighWatermark(const Connection& conn, const TablePath& path, int32_t bucket, int64_t& out) {
  ffi::RConnection* c = detail::Access::Get(conn);
  if (c == nullptr) return NotOpen();
  ffi::FfiStatus st;
  out = ffi::testing_high_watermark(*c, Str(path.database()), Str(path.table()), bucket, st);
  return ToResult(st);
}

std::vector<int32_t> CoreClientCodes() {
  rust::Vec<int32_t> v = ffi::client_codes();
  return std::vector<int32_t>(v.begin(), v.end());
}

}  // namespace testing
}  // namespace fluss_writer
