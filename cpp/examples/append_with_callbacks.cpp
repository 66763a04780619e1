// append_with_callbacks.cpp: create a table in the embedded engine, append rows with move-only
// callbacks, with small inline callbacks and with one shared callback, flush, and read the rows
// back. Exit code 0 on success.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>

#include "fluss_writer.hpp"

namespace fw = fluss_writer;

static int Fail(const char* what, const fw::Result& r) {
  std::fprintf(stderr, "%s: %s\n", what, r.ToString().c_str());
  return 1;
}

int main() {
  // FLUSS_WRITER_VERSION_STRING: the headers compiled against; Version(): the library linked.
  if (std::strcmp(fw::Version(), FLUSS_WRITER_VERSION_STRING) != 0) {
    std::fprintf(stderr, "headers %s, library %s\n", FLUSS_WRITER_VERSION_STRING, fw::Version());
    return 1;
  }
  fw::Configuration config;
  config.bootstrap_servers = "embedded";  // in memory; "embedded:/path" is durable, "host:port" a cluster
  config.Set("client.writer.buffer.wait-timeout", "5s");
  fw::Connection conn;
  if (auto r = fw::Connection::Create(config, conn); !r.Ok()) return Fail("connect", r);
  fw::Admin admin;
  if (auto r = conn.GetAdmin(admin); !r.Ok()) return Fail("admin", r);

  fw::TableDescriptor descriptor;
  descriptor.schema = fw::Schema::NewBuilder()
                          .AddColumn("id", fw::DataType::BigInt(), /*nullable=*/false)
                          .AddColumn("msg", fw::DataType::String())
                          .Build();
  descriptor.bucket_count = 4;
  descriptor.bucket_keys = {"id"};
  fw::TablePath path("fluss", "events");
  if (auto r = admin.CreateTable(path, descriptor, /*ignore_if_exists=*/true); !r.Ok()) return Fail("create", r);

  fw::Table table;
  if (auto r = conn.GetTable(path, table); !r.Ok()) return Fail("table", r);
  fw::AppendWriter writer;
  fw::WriteCallbackOptions options;
  options.max_pending_callbacks = 100000;
  if (auto r = table.NewAppend().CreateWriter(writer, options); !r.Ok()) return Fail("writer", r);

  std::atomic<int> ok{0};
  for (int64_t i = 0; i < 1000; ++i) {
    fw::GenericRow row(2);
    row.SetInt64(0, i);
    row.SetString(1, "hello");
    auto tag = std::make_unique<int64_t>(i);  // move-only capture
    fw::Result r = writer.Append(row, [tag = std::move(tag), &ok](const fw::WriteCompletion& c) {
      if (c.Ok()) ok++;
      else std::fprintf(stderr, "record %lld failed: %s\n", static_cast<long long>(*tag), c.result.ToString().c_str());
    });
    if (!r.Ok()) return Fail("append", r);
  }
  // A lambda capturing only a reference (or a pointer, `this`, an integer) is stored inline in
  // the WriteCallback: no allocation per record.
  for (int64_t i = 1000; i < 2000; ++i) {
    fw::GenericRow row(2);
    row.SetInt64(0, i);
    row.SetString(1, "inline");
    if (auto r = writer.Append(row, [&ok](const fw::WriteCompletion& c) { ok += c.Ok() ? 1 : 0; }); !r.Ok())
      return Fail("append", r);
  }
  // One callable for many records.
  fw::SharedWriteCallback shared([&ok](const fw::WriteCompletion& c) { ok += c.Ok() ? 1 : 0; });
  for (int64_t i = 2000; i < 3000; ++i) {
    fw::GenericRow row(2);
    row.SetInt64(0, i);
    row.SetString(1, "shared");
    if (auto r = writer.Append(row, shared); !r.Ok()) return Fail("append", r);
  }
  if (auto r = writer.Flush(); !r.Ok()) return Fail("flush", r);

  int64_t stored = 0;
  for (int32_t b = 0; b < 4; ++b) {
    int64_t hw = 0;
    if (auto r = fw::testing::HighWatermark(conn, path, b, hw); !r.Ok()) return Fail("read back", r);
    stored += hw;
  }
  std::printf("example (fluss-writer %s): %d callbacks ok, %lld rows stored\n", fw::Version(), ok.load(),
              static_cast<long long>(stored));
  return ok.load() == 3000 && stored == 3000 ? 0 : 1;
}
