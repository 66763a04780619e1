// quickstart.cpp: connect, create a database and a table, append 10,000 rows with a callback
// each, flush, and report what the callbacks saw.
//
//   ./quickstart                  # the embedded engine, in memory
//   ./quickstart 127.0.0.1:9123   # a Fluss cluster (scripts/fluss-cluster.sh start)
//
// Exit code 0 when every row was acknowledged.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>

#include "fluss_writer.hpp"

namespace fw = fluss_writer;

static int Fail(const char* what, const fw::Result& r) {
  std::fprintf(stderr, "%s: %s\n", what, r.ToString().c_str());
  return 1;
}

int main(int argc, char** argv) {
  const std::string address = argc > 1 ? argv[1] : "embedded";
  constexpr int64_t kRows = 10000;
  fw::Configuration config;
  config.bootstrap_servers = address;
  config.Set("client.id", "quickstart-cpp");
  fw::Connection conn;
  if (auto r = fw::Connection::Create(config, conn); !r.Ok()) return Fail("connect", r);
  fw::Admin admin;
  if (auto r = conn.GetAdmin(admin); !r.Ok()) return Fail("admin", r);
  if (auto r = admin.CreateDatabase("examples", /*ignore_if_exists=*/true); !r.Ok()) return Fail("create database", r);

  fw::TableDescriptor descriptor;
  descriptor.schema = fw::Schema::NewBuilder()
                          .AddColumn("id", fw::DataType::BigInt(), /*nullable=*/false)
                          .AddColumn("msg", fw::DataType::String())
                          .Build();
  descriptor.bucket_count = 3;
  descriptor.bucket_keys = {"id"};
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  fw::TablePath path("examples", "quickstart_cpp_" + std::to_string(now_ms.count()));
  if (auto r = admin.CreateTable(path, descriptor); !r.Ok()) return Fail("create table", r);

  std::atomic<int64_t> ok{0};
  std::atomic<int64_t> failed{0};
  const auto started = std::chrono::steady_clock::now();
  {
    fw::Table table;
    fw::AppendWriter writer;
    if (auto r = conn.GetTable(path, table); !r.Ok()) return Fail("get table", r);
    if (auto r = table.NewAppend().CreateWriter(writer); !r.Ok()) return Fail("writer", r);
    fw::GenericRow row(2);
    for (int64_t i = 0; i < kRows; ++i) {
      row.SetInt64(0, i);
      row.SetString(1, "event " + std::to_string(i));
      // Runs once, on the connection's callback thread; captures only references: no allocation.
      auto r = writer.Append(row, [&ok, &failed](const fw::WriteCompletion& c) {
        if (c.Ok()) ++ok;
        else if (++failed == 1) std::fprintf(stderr, "first failure: %s\n", c.result.ToString().c_str());
      });
      if (!r.Ok()) return Fail("append", r);  // nothing accepted; its callback never runs
    }
    if (auto r = writer.Flush(); !r.Ok()) return Fail("flush", r);  // every callback above has returned
    if (auto r = writer.Close(); !r.Ok()) return Fail("close", r);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("%s: %lld of %lld rows acknowledged in %.2f s, %lld failed\n", address.c_str(), static_cast<long long>(ok.load()),
              static_cast<long long>(kRows), seconds, static_cast<long long>(failed.load()));
  if (auto r = admin.DropTable(path); !r.Ok()) return Fail("drop table", r);
  return ok == kRows ? 0 : 1;
}
