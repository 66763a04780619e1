// partitions.cpp: partitioned tables (Admin::CreatePartition, DropPartition, ListPartitions,
// Table::ScanPartition, and the fluss_writer::testing helpers of one partition). Conversions
// only: the core checks specs and names. (TableDescriptor::partition_keys goes with the rest of
// the descriptor in connection.cpp; WriteCompletion::partition is filled in rust/cxx/src/glue.cc.)
#include <utility>

#include "internal.h"

namespace fluss_writer {

using internal::Str;
using internal::ToResult;

namespace {

Result NotOpen() { return internal::ClientError(ClientCode::ConnectionClosed, "the connection is not open"); }

// A spec as the bridge's parallel key / value lists.
void SpecToFfi(const std::map<std::string, std::string>& spec, rust::Vec<rust::String>& keys,
               rust::Vec<rust::String>& values) {
  keys.reserve(spec.size());
  values.reserve(spec.size());
  for (const auto& [k, v] : spec) {
    keys.push_back(rust::String::lossy(k));
    values.push_back(rust::String::lossy(v));
  }
}

}  // namespace

// ===== Admin =====

Result Admin::CreatePartition(const TablePath& path, const std::map<std::string, std::string>& spec,
                              bool ignore_if_exists) {
  if (impl_ == nullptr) return NotOpen();
  rust::Vec<rust::String> keys;
  rust::Vec<rust::String> values;
  SpecToFfi(spec, keys, values);
  return ToResult(ffi::admin_create_partition(*impl_, Str(path.database()), Str(path.table()), keys, values,
                                              ignore_if_exists));
}

Result Admin::DropPartition(const TablePath& path, const std::map<std::string, std::string>& spec,
                            bool ignore_if_not_exists) {
  if (impl_ == nullptr) return NotOpen();
  rust::Vec<rust::String> keys;
  rust::Vec<rust::String> values;
  SpecToFfi(spec, keys, values);
  return ToResult(ffi::admin_drop_partition(*impl_, Str(path.database()), Str(path.table()), keys, values,
                                            ignore_if_not_exists));
}

Result Admin::ListPartitions(const TablePath& path, std::vector<PartitionInfo>& out) {
  out.clear();
  if (impl_ == nullptr) return NotOpen();
  rust::Vec<ffi::FfiPartitionInfo> v;
  Result r = ToResult(ffi::admin_list_partitions(*impl_, Str(path.database()), Str(path.table()), v));
  if (!r.Ok()) return r;
  out.reserve(v.size());
  for (const ffi::FfiPartitionInfo& f : v) {
    PartitionInfo p;
    p.partition_id = f.partition_id;
    p.partition_name = std::string(f.partition_name);
    for (size_t i = 0; i < f.spec_keys.size() && i < f.spec_values.size(); ++i) {
      p.spec.emplace(std::string(f.spec_keys[i]), std::string(f.spec_values[i]));
    }
    out.push_back(std::move(p));
  }
  return r;
}

// ===== Table =====

Result Table::ScanPartition(std::string_view partition, int32_t bucket, int64_t from_offset,
                            std::vector<ScannedRow>& out) const {
  if (!table_) return internal::ClientError(ClientCode::InvalidTable, "the table handle is empty");
  ffi::FfiStatus st;
  rust::Box<ffi::RScan> s = ffi::table_scan_partition(*table_, Str(partition), bucket, from_offset, st);
  if (st.code != 0) return ToResult(st);
  internal::ScanToRows(*s, out);
  return Result{};
}

// ===== testing: the embedded engine, per partition =====

namespace testing {

Result InjectFault(const Connection& conn, const TablePath& path, std::string_view partition, int32_t bucket,
                   const Fault& fault) {
  ffi::RConnection* c = detail::Access::Get(conn);
  if (c == nullptr) return NotOpen();
  return ToResult(ffi::testing_inject_fault_partition(*c, Str(path.database()), Str(path.table()),
                                                      Str(partition), bucket, internal::ToFfiFault(fault)));
}

Result ScanPartition(const Connection& conn, const TablePath& path, std::string_view partition, int32_t bucket,
                     int64_t from_offset, std::vector<ScannedRow>& out) {
  ffi::RConnection* c = detail::Access::Get(conn);
  if (c == nullptr) return NotOpen();
  ffi::FfiStatus st;
  rust::Box<ffi::RScan> s = ffi::testing_scan_partition(*c, Str(path.database()), Str(path.table()),
                                                        Str(partition), bucket, from_offset, st);
  if (st.code != 0) return ToResult(st);
  internal::ScanToRows(*s, out);
  return Result{};
}

Result HighWatermarkPartition(const Connection& conn, const TablePath& path, std::string_view partition, int32_t bucket,
                              int64_t& out) {
  ffi::RConnection* c = detail::Access::Get(conn);
  if (c == nullptr) return NotOpen();
  ffi::FfiStatus st;
  out = ffi::testing_high_watermark_partition(*c, Str(path.database()), Str(path.table()), Str(partition),
                                              bucket, st);
  return ToResult(st);
}

}  // namespace testing
}  // namespace fluss_writer
