// callbacks_shared_state.cpp: four threads share one writer; one callable (SharedWriteCallback)
// serves every row and counts per bucket under a mutex, while the main thread reads the running
// total. Callbacks run on the connection's callback thread, never on the writing threads, one at
// a time; the state they share with other threads needs the lock.
//
//   ./callbacks_shared_state [address]   # default: the embedded engine
//
// Exit code 0 when every row was acknowledged exactly once.
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fluss_writer.hpp"

namespace fw = fluss_writer;

// What the callbacks saw. Declared before the writer, so that it outlives the writer's close.
struct Acks {
  std::mutex mu;
  std::map<int32_t, int64_t> per_bucket;
  std::set<std::pair<int32_t, int64_t>> seen;  // (bucket, offset): each row once
  int64_t duplicates = 0;
  std::vector<std::string> failed;

  void OnDone(const fw::WriteCompletion& c) {
    std::lock_guard<std::mutex> lock(mu);
    if (!c.Ok()) {
      failed.push_back(c.result.ToString());
      return;
    }
    ++per_bucket[c.bucket];
    if (!seen.insert({c.bucket, c.offset}).second) ++duplicates;
  }
  size_t Total() {
    std::lock_guard<std::mutex> lock(mu);
    return seen.size();
  }
};

static int Fail(const char* what, const fw::Result& r) {
  std::fprintf(stderr, "%s: %s\n", what, r.ToString().c_str());
  return 1;
}

int main(int argc, char** argv) {
  constexpr int kThreads = 4;
  constexpr int64_t kRowsPerThread = 5000;
  fw::Configuration config;
  config.bootstrap_servers = argc > 1 ? argv[1] : "embedded";
  fw::Connection conn;
  fw::Admin admin;
  if (auto r = fw::Connection::Create(config, conn); !r.Ok()) return Fail("connect", r);
  if (auto r = conn.GetAdmin(admin); !r.Ok()) return Fail("admin", r);
  if (auto r = admin.CreateDatabase("examples", true); !r.Ok()) return Fail("create database", r);
  fw::TableDescriptor descriptor;
  descriptor.schema = fw::Schema::NewBuilder()
                          .AddColumn("thread", fw::DataType::Int(), false)
                          .AddColumn("seq", fw::DataType::BigInt(), false)
                          .Build();
  descriptor.bucket_count = 4;
  descriptor.bucket_keys = {"seq"};
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  fw::TablePath path("examples", "shared_state_cpp_" + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()));
  if (auto r = admin.CreateTable(path, descriptor); !r.Ok()) return Fail("create table", r);

  Acks acks;
  {
    fw::Table table;
    fw::AppendWriter writer;  // thread-safe: one writer for every thread
    if (auto r = conn.GetTable(path, table); !r.Ok()) return Fail("get table", r);
    if (auto r = table.NewAppend().CreateWriter(writer); !r.Ok()) return Fail("writer", r);
    fw::SharedWriteCallback on_done([&acks](const fw::WriteCompletion& c) { acks.OnDone(c); });

    std::vector<std::thread> threads;
    std::vector<fw::Result> refused(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        fw::GenericRow row(2);
        for (int64_t i = 0; i < kRowsPerThread; ++i) {
          row.SetInt32(0, t);
          row.SetInt64(1, t * kRowsPerThread + i);
          if (fw::Result r = writer.Append(row, on_done); !r.Ok()) {
            refused[t] = r;
            return;
          }
        }
      });
    }
    for (int polls = 0; acks.Total() < static_cast<size_t>(kThreads * kRowsPerThread) && polls < 20; ++polls) {
      std::fprintf(stderr, "acknowledged so far: %zu\n", acks.Total());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (auto& th : threads) th.join();
    for (const auto& r : refused)
      if (!r.Ok()) return Fail("append", r);
    if (auto r = writer.Flush(); !r.Ok()) return Fail("flush", r);  // every thread's callbacks have returned
  }
  if (auto r = admin.DropTable(path); !r.Ok()) return Fail("drop table", r);

  std::lock_guard<std::mutex> lock(acks.mu);
  std::printf("%zu of %lld rows acknowledged once each, %lld twice, %zu failed; per bucket:", acks.seen.size(),
              static_cast<long long>(kThreads * kRowsPerThread), static_cast<long long>(acks.duplicates), acks.failed.size());
  for (const auto& [bucket, n] : acks.per_bucket) std::printf(" %d=%lld", bucket, static_cast<long long>(n));
  std::printf("\n");
  return acks.seen.size() == static_cast<size_t>(kThreads * kRowsPerThread) && acks.duplicates == 0 && acks.failed.empty() ? 0 : 1;
}
