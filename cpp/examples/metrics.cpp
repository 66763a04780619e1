// metrics.cpp: a writer's metrics while it writes. A StatisticsReporter hands the process's
// metrics as JSON (MetricsJson(), like librdkafka's statistics callback) to a function every
// 100 ms, which a real program would pass to its monitoring; the library's logs go to a sink of
// ours (SetLogCallback). At the end: the writer's Stats(), ErrorCounts() and BucketCounts().
// docs/metrics.md describes every field.
//
//   ./metrics [address]   # default: the embedded engine
//
// Exit code 0 when every row was acknowledged and the reporter reported them.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "fluss_writer.hpp"

namespace fw = fluss_writer;

static int Fail(const char* what, const fw::Result& r) {
  std::fprintf(stderr, "%s: %s\n", what, r.ToString().c_str());
  return 1;
}

int main(int argc, char** argv) {
  constexpr int64_t kRows = 20000;
  fw::SetLogLevel(fw::LogLevel::Info);
  fw::SetLogCallback([](const fw::LogRecord& r) {  // on the library's threads: quick and thread-safe
    std::fprintf(stderr, "log %d [%s] %s\n", static_cast<int>(r.level), r.target.c_str(), r.message.c_str());
  });

  fw::Configuration config;
  config.bootstrap_servers = argc > 1 ? argv[1] : "embedded";
  config.Set("client.id", "metrics-example");  // labels this connection's writers in the metrics
  fw::Connection conn;
  fw::Admin admin;
  if (auto r = fw::Connection::Create(config, conn); !r.Ok()) return Fail("connect", r);
  if (auto r = conn.GetAdmin(admin); !r.Ok()) return Fail("admin", r);
  if (auto r = admin.CreateDatabase("examples", true); !r.Ok()) return Fail("create database", r);
  fw::TableDescriptor descriptor;
  descriptor.schema = fw::Schema::NewBuilder().AddColumn("id", fw::DataType::BigInt(), false).AddColumn("msg", fw::DataType::String()).Build();
  descriptor.bucket_count = 4;
  descriptor.bucket_keys = {"id"};
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  fw::TablePath path("examples", "metrics_cpp_" + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()));
  if (auto r = admin.CreateTable(path, descriptor); !r.Ok()) return Fail("create table", r);

  std::mutex mu;
  std::string last_json;  // the reporter's last report
  std::atomic<int> reports{0};
  fw::StatisticsReporter reporter;
  auto report = [&](const std::string& json) {  // on the reporter's thread
    std::lock_guard<std::mutex> lock(mu);
    last_json = json;
    ++reports;
  };
  if (auto r = fw::StatisticsReporter::Start(std::chrono::milliseconds(100), report, reporter); !r.Ok()) return Fail("reporter", r);

  fw::WriterStats stats;
  bool reported = false;
  {
    fw::Table table;
    fw::AppendWriter writer;
    if (auto r = conn.GetTable(path, table); !r.Ok()) return Fail("get table", r);
    if (auto r = table.NewAppend().CreateWriter(writer); !r.Ok()) return Fail("writer", r);
    fw::GenericRow row(2);
    for (int64_t i = 0; i < kRows; ++i) {
      row.SetInt64(0, i);
      row.SetString(1, "measured");
      if (auto r = writer.AppendDetached(row); !r.Ok()) return Fail("append", r);  // failures still count in the stats
    }
    if (auto r = writer.Flush(); !r.Ok()) return Fail("flush", r);
    stats = writer.Stats();
    std::printf("records_sent %llu, batches_sent %llu, requests_sent %llu, retries %llu, records_failed %llu, pending %llu\n",
                static_cast<unsigned long long>(stats.records_sent), static_cast<unsigned long long>(stats.batches_sent),
                static_cast<unsigned long long>(stats.requests_sent), static_cast<unsigned long long>(stats.retries),
                static_cast<unsigned long long>(stats.records_failed), static_cast<unsigned long long>(stats.pending_callbacks));
    std::printf("request latency p50 %.3f ms, p99 %.3f ms\n", stats.request_latency_p50_nanos / 1e6, stats.request_latency_p99_nanos / 1e6);
    for (const auto& b : writer.BucketCounts())
      std::printf("bucket %d: %llu records in %llu batches\n", b.bucket, static_cast<unsigned long long>(b.records_sent),
                  static_cast<unsigned long long>(b.batches_sent));
    for (const auto& c : writer.ErrorCounts())
      std::printf("%s: %llu failed, %llu retried\n", c.name.c_str(), static_cast<unsigned long long>(c.records_failed),
                  static_cast<unsigned long long>(c.retries));
    // Wait for a report that shows the writer's rows (the writer is in the metrics while it lives).
    const std::string sent = "\"records_sent\":" + std::to_string(kRows);
    for (int i = 0; i < 100 && !reported; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::lock_guard<std::mutex> lock(mu);
      reported = last_json.find("\"client_id\":\"metrics-example\"") != std::string::npos && last_json.find(sent) != std::string::npos;
    }
  }
  reporter.Stop();
  fw::SetLogCallback(nullptr);
  {
    std::lock_guard<std::mutex> lock(mu);
    std::printf("%d reports; the last: %.100s...\n", reports.load(), last_json.c_str());
  }
  if (auto r = admin.DropTable(path); !r.Ok()) return Fail("drop table", r);
  return stats.records_sent == static_cast<uint64_t>(kRows) && stats.pending_callbacks == 0 && reported ? 0 : 1;
}
