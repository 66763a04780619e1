// test_util.h: shared fixtures for the C++ suite: an embedded connection, tables, counters.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <cstdio>
#include <cstdlib>

#include "fluss_writer.hpp"

namespace fw = fluss_writer;
using namespace std::chrono_literals;

#define ASSERT_OK(expr)                            \
  do {                                             \
    fw::Result _r = (expr);                        \
    ASSERT_TRUE(_r.Ok()) << #expr << ": " << _r.ToString(); \
  } while (0)

inline int32_t Code(fw::ClientCode c) { return static_cast<int32_t>(c); }

// Says that a test had to try again (a table the coordinator missed): on stderr, and as a line of
// $FLUSS_TEST_LOGS/retries.log, which the summary of `make test` lists (scripts/test-summary.py).
inline void NoteRetry(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  const char* dir = std::getenv("FLUSS_TEST_LOGS");
  if (dir == nullptr || *dir == '\0') return;
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = t ? std::string(t->test_suite_name()) + "." + t->name() : "?";
  if (std::FILE* f = std::fopen((std::string(dir) + "/retries.log").c_str(), "a")) {
    std::fprintf(f, "c++ %s: %s\n", test.c_str(), what.c_str());
    std::fclose(f);
  }
}

// The Fluss code of a bucket without a leader (a table the coordinator never took in).
constexpr int32_t kLeaderNotAvailable = 44;

// Whether `r` is how a restarting coordinator fails a call (scripts/fluss-cluster.sh heal-watch
// restarts the Fluss 0.9.1 coordinator when it lost a table, docs/architecture.md "Known server
// issues"): unreachable (a retriable error other than a table's missing leaders) or, while it
// starts, UNKNOWN_SERVER_ERROR (-1) "CoordinatorEventProcessor is not initialized yet".
inline bool CoordinatorRestarting(const fw::Result& r) {
  if (r.error_code == -1) return r.error_message.find("is not initialized yet") != std::string::npos;
  return r.retriable && r.error_code != kLeaderNotAvailable;
}

// Calls `f` (returning a fw::Result) until it succeeds, for up to 60 s while it fails as a
// restarting coordinator makes it fail, noting each retry; returns the last Result.
template <typename F>
fw::Result WhileCoordinatorRestarts(const std::string& what, F&& f) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  fw::Result r = f();
  while (!r.Ok() && CoordinatorRestarting(r) && std::chrono::steady_clock::now() < deadline) {
    NoteRetry(what + ": " + r.ToString() + "; waiting for the coordinator");
    std::this_thread::sleep_for(1s);
    r = f();
  }
  return r;
}

// Creates a table described by `d` under the name `fresh()` returns, a new name on every try (a
// table created before a lost answer must not be met again), into `p`. On a cluster
// (`wait_for_coordinator`) it waits for a coordinator that heal-watch restarts, and a table whose
// buckets get no leader (a Fluss 0.9.1 coordinator now and then never processes a new table) is
// abandoned for another one, twice at most; each retry is noted. Returns the last Result.
template <typename Fresh>
fw::Result CreateFreshTable(fw::Admin& admin, const fw::TableDescriptor& d, Fresh&& fresh, fw::TablePath& p,
                            bool wait_for_coordinator = true) {
  auto create = [&] {
    p = fresh();
    return admin.CreateTable(p, d);
  };
  fw::Result r = wait_for_coordinator ? WhileCoordinatorRestarts("create table", create) : create();
  for (int attempt = 0; !r.Ok() && r.error_code == kLeaderNotAvailable && attempt < 2; ++attempt) {
    NoteRetry(p.ToString() + ": " + r.ToString() + "; creating another table");
    r = WhileCoordinatorRestarts("create table", create);
  }
  return r;
}

// Counts live instances: a capture whose destruction a test observes.
struct Tracked {
  explicit Tracked(std::shared_ptr<std::atomic<int>> d) : destroyed(std::move(d)) {}
  Tracked(Tracked&& o) noexcept : destroyed(std::move(o.destroyed)) {}
  Tracked(const Tracked&) = delete;
  ~Tracked() {
    if (destroyed) destroyed->fetch_add(1);
  }
  std::shared_ptr<std::atomic<int>> destroyed;
};

// An embedded connection plus a log table "fluss.<name>" (id BIGINT NOT NULL, msg STRING).
class EmbeddedTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open(fw::Configuration config = {}) {
    config.bootstrap_servers = "embedded";
    ASSERT_OK(fw::Connection::Create(config, conn));
    ASSERT_OK(conn.GetAdmin(admin));
  }

  fw::TablePath LogTable(const std::string& name, int32_t buckets = 1, bool keyed = false) {
    fw::TableDescriptor d;
    d.schema = fw::Schema::NewBuilder()
                   .AddColumn("id", fw::DataType::BigInt(), false)
                   .AddColumn("msg", fw::DataType::String())
                   .Build();
    d.bucket_count = buckets;
    if (keyed) d.bucket_keys = {"id"};
    fw::TablePath p("fluss", name);
    fw::Result r = admin.CreateTable(p, d);
    EXPECT_TRUE(r.Ok()) << r.ToString();
    return p;
  }

  fw::TablePath PkTable(const std::string& name, int32_t buckets = 2) {
    fw::TableDescriptor d;
    d.schema = fw::Schema::NewBuilder()
                   .AddColumn("id", fw::DataType::Int(), false)
                   .AddColumn("name", fw::DataType::String())
                   .AddColumn("score", fw::DataType::BigInt())
                   .SetPrimaryKeys({"id"})
                   .Build();
    d.bucket_count = buckets;
    fw::TablePath p("fluss", name);
    fw::Result r = admin.CreateTable(p, d);
    EXPECT_TRUE(r.Ok()) << r.ToString();
    return p;
  }

  fw::AppendWriter AppendWriterFor(const fw::TablePath& p, const fw::WriteCallbackOptions& o = {}) {
    fw::Table t;
    fw::Result r = conn.GetTable(p, t);
    EXPECT_TRUE(r.Ok()) << r.ToString();
    fw::AppendWriter w;
    r = t.NewAppend().CreateWriter(w, o);
    EXPECT_TRUE(r.Ok()) << r.ToString();
    return w;
  }

  static fw::GenericRow Row(int64_t id, const std::string& msg = "m") {
    fw::GenericRow row(2);
    row.SetInt64(0, id);
    row.SetString(1, msg);
    return row;
  }

  fw::Connection conn;
  fw::Admin admin;
};
