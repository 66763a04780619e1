// arrow_c_producer.h: a tiny hand-written Arrow C Data Interface producer (no Arrow library):
// a struct array {id: int64 not null, msg: utf8} and a stream of such batches.
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fluss_writer.hpp"

namespace producer {

struct ColumnData {
  std::vector<int64_t> ids;
  std::vector<int32_t> offsets;
  std::string chars;
  const void* id_buffers[2];
  const void* msg_buffers[3];
  const void* struct_buffers[1];
  ArrowArray id_child;
  ArrowArray msg_child;
  ArrowArray* children[2];
};

inline void ReleaseChild(ArrowArray* a) { a->release = nullptr; }

inline void ReleaseArray(ArrowArray* a) {
  delete static_cast<ColumnData*>(a->private_data);
  a->release = nullptr;
}

// A struct array of `ids` with messages "m<id>". `id_format` lets a test send a wrong type.
inline void MakeArray(const std::vector<int64_t>& ids, ArrowArray* out) {
  auto* d = new ColumnData();
  d->ids = ids;
  d->offsets.push_back(0);
  for (int64_t id : ids) {
    d->chars += "m" + std::to_string(id);
    d->offsets.push_back(static_cast<int32_t>(d->chars.size()));
  }
  d->id_buffers[0] = nullptr;
  d->id_buffers[1] = d->ids.data();
  d->msg_buffers[0] = nullptr;
  d->msg_buffers[1] = d->offsets.data();
  d->msg_buffers[2] = d->chars.data();
  d->struct_buffers[0] = nullptr;
  const int64_t n = static_cast<int64_t>(ids.size());
  d->id_child = ArrowArray{n, 0, 0, 2, 0, d->id_buffers, nullptr, nullptr, ReleaseChild, nullptr};
  d->msg_child = ArrowArray{n, 0, 0, 3, 0, d->msg_buffers, nullptr, nullptr, ReleaseChild, nullptr};
  d->children[0] = &d->id_child;
  d->children[1] = &d->msg_child;
  *out = ArrowArray{n, 0, 0, 1, 2, d->struct_buffers, d->children, nullptr, ReleaseArray, d};
}

struct SchemaData {
  ArrowSchema id;
  ArrowSchema msg;
  ArrowSchema* children[2];
};

inline void ReleaseChildSchema(ArrowSchema* s) { s->release = nullptr; }

inline void ReleaseSchema(ArrowSchema* s) {
  delete static_cast<SchemaData*>(s->private_data);
  s->release = nullptr;
}

inline void MakeSchema(ArrowSchema* out, const char* id_format = "l") {
  auto* d = new SchemaData();
  d->id = ArrowSchema{id_format, "id", nullptr, 0, 0, nullptr, nullptr, ReleaseChildSchema, nullptr};
  d->msg = ArrowSchema{"u", "msg", nullptr, ARROW_FLAG_NULLABLE, 0, nullptr, nullptr, ReleaseChildSchema, nullptr};
  d->children[0] = &d->id;
  d->children[1] = &d->msg;
  *out = ArrowSchema{"+s", "", nullptr, 0, 2, d->children, nullptr, ReleaseSchema, d};
}

// A stream of `batches` batches of ids.
struct StreamData {
  std::vector<std::vector<int64_t>> batches;
  size_t next = 0;
};

inline int StreamGetSchema(ArrowArrayStream*, ArrowSchema* out) {
  MakeSchema(out);
  return 0;
}

inline int StreamGetNext(ArrowArrayStream* s, ArrowArray* out) {
  auto* d = static_cast<StreamData*>(s->private_data);
  if (d->next >= d->batches.size()) {
    out->release = nullptr;  // end of stream
    return 0;
  }
  MakeArray(d->batches[d->next++], out);
  return 0;
}

inline const char* StreamLastError(ArrowArrayStream*) { return nullptr; }

inline void StreamRelease(ArrowArrayStream* s) {
  delete static_cast<StreamData*>(s->private_data);
  s->release = nullptr;
}

inline void MakeStream(std::vector<std::vector<int64_t>> batches, ArrowArrayStream* out) {
  auto* d = new StreamData{std::move(batches), 0};
  *out = ArrowArrayStream{StreamGetSchema, StreamGetNext, StreamLastError, StreamRelease, d};
}

}  // namespace producer
