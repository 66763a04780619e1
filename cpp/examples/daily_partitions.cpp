// daily_partitions.cpp: a table partitioned by day. The writer creates each day's partition on
// its first row (client.writer.dynamic-create-partition.enabled, on by default), each callback
// names the partition of its row, and the days past a retention of 3 are dropped.
//
//   ./daily_partitions [address]   # default: the embedded engine
//
// Exit code 0 when every row was acknowledged and the 3 newest days are kept.
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fluss_writer.hpp"

namespace fw = fluss_writer;

static int Fail(const char* what, const fw::Result& r) {
  std::fprintf(stderr, "%s: %s\n", what, r.ToString().c_str());
  return 1;
}

int main(int argc, char** argv) {
  constexpr int kDays = 7, kKeep = 3, kRows = 1000;
  fw::Configuration config;
  config.bootstrap_servers = argc > 1 ? argv[1] : "embedded";
  fw::Connection conn;
  fw::Admin admin;
  if (auto r = fw::Connection::Create(config, conn); !r.Ok()) return Fail("connect", r);
  if (auto r = conn.GetAdmin(admin); !r.Ok()) return Fail("admin", r);
  if (auto r = admin.CreateDatabase("examples", true); !r.Ok()) return Fail("create database", r);
  fw::TableDescriptor descriptor;
  descriptor.schema = fw::Schema::NewBuilder()
                          .AddColumn("id", fw::DataType::BigInt(), false)
                          .AddColumn("dt", fw::DataType::String(), false)
                          .AddColumn("msg", fw::DataType::String())
                          .Build();
  descriptor.bucket_count = 2;
  descriptor.partition_keys = {"dt"};
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  fw::TablePath path("examples", "daily_cpp_" + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()));
  if (auto r = admin.CreateTable(path, descriptor); !r.Ok()) return Fail("create table", r);

  std::mutex mu;
  std::map<std::string, int> per_partition;  // what the callbacks saw
  int failed = 0;
  {
    fw::Table table;
    fw::AppendWriter writer;
    if (auto r = conn.GetTable(path, table); !r.Ok()) return Fail("get table", r);
    if (auto r = table.NewAppend().CreateWriter(writer); !r.Ok()) return Fail("writer", r);
    fw::SharedWriteCallback on_done([&](const fw::WriteCompletion& c) {
      std::lock_guard<std::mutex> lock(mu);
      if (c.Ok()) ++per_partition[std::string(c.partition)];  // c.partition views the library's buffer: copy it
      else ++failed;
    });
    fw::GenericRow row(3);
    for (int i = 0; i < kRows; ++i) {
      char day[16];
      std::snprintf(day, sizeof day, "2026-12-%02d", 1 + i % kDays);
      row.SetInt64(0, i);
      row.SetString(1, day);
      row.SetString(2, "hello");
      if (auto r = writer.Append(row, on_done); !r.Ok()) return Fail("append", r);
    }
    if (auto r = writer.Flush(); !r.Ok()) return Fail("flush", r);
  }
  std::vector<fw::PartitionInfo> partitions;
  if (auto r = admin.ListPartitions(path, partitions); !r.Ok()) return Fail("list partitions", r);
  for (size_t i = 0; i + kKeep < partitions.size(); ++i)  // ordered by name: the oldest days first
    if (auto r = admin.DropPartition(path, partitions[i].spec); !r.Ok()) return Fail("drop partition", r);
  std::vector<fw::PartitionInfo> kept;
  if (auto r = admin.ListPartitions(path, kept); !r.Ok()) return Fail("list partitions", r);

  std::lock_guard<std::mutex> lock(mu);
  std::printf("rows per partition:");
  for (const auto& [name, n] : per_partition) std::printf(" %s=%d", name.c_str(), n);
  std::printf("\npartitions kept (%d days):", kKeep);
  for (const auto& p : kept) std::printf(" %s", p.partition_name.c_str());
  std::printf("\n");
  if (auto r = admin.DropTable(path); !r.Ok()) return Fail("drop table", r);
  int total = 0;
  for (const auto& entry : per_partition) total += entry.second;
  return failed == 0 && total == kRows && per_partition.size() == kDays && kept.size() == kKeep &&
                 kept.back().partition_name == "2026-12-07"
             ? 0
             : 1;
}
