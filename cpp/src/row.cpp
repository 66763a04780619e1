// row.cpp: GenericRow, a C++ face on the Rust row (values converted once, when set).
#include <utility>

#include "internal.h"

namespace fluss_writer {

using internal::DropBox;

GenericRow::GenericRow(size_t fields) : impl_(ffi::row_new(fields).into_raw()) {}

GenericRow::~GenericRow() { DropBox(std::exchange(impl_, nullptr)); }

GenericRow::GenericRow(const GenericRow& other)
    : impl_(other.impl_ ? ffi::row_clone(*other.impl_).into_raw() : ffi::row_new(0).into_raw()) {}

GenericRow& GenericRow::operator=(const GenericRow& other) {
  if (this != &other) {
    ffi::RRow* copy = other.impl_ ? ffi::row_clone(*other.impl_).into_raw() : ffi::row_new(0).into_raw();
    DropBox(std::exchange(impl_, copy));
  }
  return *this;
}

GenericRow::GenericRow(GenericRow&& other) noexcept : impl_(std::exchange(other.impl_, nullptr)) {}

GenericRow& GenericRow::operator=(GenericRow&& other) noexcept {
  if (this != &other) {
    DropBox(std::exchange(impl_, std::exchange(other.impl_, nullptr)));
  }
  return *this;
}

ffi::RRow& GenericRow::Mut() {
  if (impl_ == nullptr) {
    impl_ = ffi::row_new(0).into_raw();
  }
  return *impl_;
}

size_t GenericRow::FieldCount() const { return impl_ ? ffi::row_len(*impl_) : 0; }
void GenericRow::Resize(size_t fields) { ffi::row_resize(Mut(), fields); }

void GenericRow::SetNull(size_t i) { ffi::row_set_null(Mut(), i); }
void GenericRow::SetBool(size_t i, bool v) { ffi::row_set_bool(Mut(), i, v); }
void GenericRow::SetInt8(size_t i, int8_t v) { ffi::row_set_i8(Mut(), i, v); }
void GenericRow::SetInt16(size_t i, int16_t v) { ffi::row_set_i16(Mut(), i, v); }
void GenericRow::SetInt32(size_t i, int32_t v) { ffi::row_set_i32(Mut(), i, v); }
void GenericRow::SetInt64(size_t i, int64_t v) { ffi::row_set_i64(Mut(), i, v); }
void GenericRow::SetFloat32(size_t i, float v) { ffi::row_set_f32(Mut(), i, v); }
void GenericRow::SetFloat64(size_t i, double v) { ffi::row_set_f64(Mut(), i, v); }

void GenericRow::SetString(size_t i, std::string_view v) {
  ffi::row_set_string(Mut(), i, rust::Slice<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size()));
}

void GenericRow::SetBytes(size_t i, const uint8_t* data, size_t len) {
  static const uint8_t kEmpty = 0;
  if (data == nullptr && len > 0) {
    // Never read through a null pointer; writing the row fails with InvalidRow.
    ffi::row_mark_bad(Mut(), rust::Str("SetBytes: a null pointer with a non-zero length"));
    ffi::row_set_null(Mut(), i);
    return;
  }
  ffi::row_set_bytes(Mut(), i, rust::Slice<const uint8_t>(data != nullptr ? data : &kEmpty, len));
}

static uint8_t Param(int32_t v) { return v < 0 || v > 255 ? uint8_t{255} : static_cast<uint8_t>(v); }

void GenericRow::SetDecimal(size_t i, int64_t unscaled, int32_t precision, int32_t scale) {
  ffi::row_set_decimal_i64(Mut(), i, unscaled, Param(precision), Param(scale));
}

void GenericRow::SetDecimal(size_t i, std::string_view unscaled, int32_t precision, int32_t scale) {
  ffi::row_set_decimal_str(Mut(), i, internal::Str(unscaled), Param(precision), Param(scale));
}

void GenericRow::SetDate(size_t i, int32_t days) { ffi::row_set_date(Mut(), i, days); }
void GenericRow::SetTime(size_t i, int32_t millis) { ffi::row_set_time(Mut(), i, millis); }

void GenericRow::SetTimestampNtz(size_t i, int64_t millis, int32_t nanos) {
  ffi::row_set_timestamp_ntz(Mut(), i, millis, nanos < 0 ? 1000000u : static_cast<uint32_t>(nanos));
}

void GenericRow::SetTimestampLtz(size_t i, int64_t millis, int32_t nanos) {
  ffi::row_set_timestamp_ltz(Mut(), i, millis, nanos < 0 ? 1000000u : static_cast<uint32_t>(nanos));
}

namespace {
// A part's storage for the bridge: an empty row for a moved-from part (no storage).
struct Part {
  explicit Part(const GenericRow& row) : ref(detail::Access::Get(row)) {
    if (ref == nullptr) {
      empty = ffi::row_new(0).into_raw();
      ref = empty;
    }
  }
  ~Part() { DropBox(empty); }
  Part(const Part&) = delete;
  Part& operator=(const Part&) = delete;
  const ffi::RRow& operator*() const { return *ref; }

  const ffi::RRow* ref;
  ffi::RRow* empty = nullptr;
};

GenericRow Wrap(rust::Box<ffi::RRow> b) {
  GenericRow row;
  DropBox(std::exchange(detail::Access::Ref(row), b.into_raw()));
  return row;
}
}  // namespace

// A part that is this row itself is copied first: the bridge never sees a row as both the one it
// changes and a part.
void GenericRow::SetArray(size_t i, const GenericRow& elements) {
  if (&elements == this) return SetArray(i, GenericRow(elements));
  ffi::row_set_array(Mut(), i, *Part(elements));
}

void GenericRow::SetMap(size_t i, const GenericRow& keys, const GenericRow& values) {
  if (&keys == this) return SetMap(i, GenericRow(keys), values);
  if (&values == this) return SetMap(i, keys, GenericRow(values));
  ffi::row_set_map(Mut(), i, *Part(keys), *Part(values));
}

void GenericRow::SetRow(size_t i, const GenericRow& fields) {
  if (&fields == this) return SetRow(i, GenericRow(fields));
  ffi::row_set_row(Mut(), i, *Part(fields));
}

GenericRow GenericRow::GetArray(size_t i) const {
  return impl_ ? Wrap(ffi::row_get_array(*impl_, i)) : GenericRow();
}
GenericRow GenericRow::GetMapKeys(size_t i) const {
  return impl_ ? Wrap(ffi::row_get_map_keys(*impl_, i)) : GenericRow();
}
GenericRow GenericRow::GetMapValues(size_t i) const {
  return impl_ ? Wrap(ffi::row_get_map_values(*impl_, i)) : GenericRow();
}
GenericRow GenericRow::GetRow(size_t i) const {
  return impl_ ? Wrap(ffi::row_get_row(*impl_, i)) : GenericRow();
}

bool GenericRow::IsNull(size_t i) const { return impl_ == nullptr || ffi::row_is_null(*impl_, i); }

std::string GenericRow::TypeName(size_t i) const {
  return impl_ ? std::string(ffi::row_type_name(*impl_, i)) : std::string("NULL");
}

bool GenericRow::GetBool(size_t i) const { return impl_ && ffi::row_get_bool(*impl_, i); }
int64_t GenericRow::GetInt64(size_t i) const { return impl_ ? ffi::row_get_i64(*impl_, i) : 0; }
double GenericRow::GetFloat64(size_t i) const { return impl_ ? ffi::row_get_f64(*impl_, i) : 0.0; }
std::string GenericRow::GetString(size_t i) const { return impl_ ? std::string(ffi::row_get_str(*impl_, i)) : ""; }

std::vector<uint8_t> GenericRow::GetBytes(size_t i) const {
  if (impl_ == nullptr) return {};
  rust::Slice<const uint8_t> s = ffi::row_get_bytes(*impl_, i);
  return std::vector<uint8_t>(s.begin(), s.end());
}

std::string GenericRow::ToString(size_t i) const {
  return impl_ ? std::string(ffi::row_to_string(*impl_, i)) : std::string("null");
}

}  // namespace fluss_writer
