// backend_test.h: a GoogleTest fixture run once per backend: Embedded/... on the embedded engine
// (always registered) and Cluster/... on the real Fluss 0.9.1 cluster at FLUSS_BOOTSTRAP_SERVERS
// (registered by tests-cpp/CMakeLists.txt as cluster/Cluster/... only when the variable was set
// at configure time; a Cluster test run without it fails, it never skips).
#pragma once

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "test_util.h"

inline std::string Unique(const std::string& prefix) {
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  return prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(nanos % 1000000000000LL);
}

enum class Backend { Embedded, Cluster };

class BackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(Open({})); }

  void TearDown() override {
    if (conn.Available()) (void)conn.Close(10s);
  }

  bool Embedded() const { return GetParam() == Backend::Embedded; }

  // (Re)opens the connection with `extra` client properties.
  void Open(const std::map<std::string, std::string>& extra) {
    fw::Configuration config;
    if (Embedded()) {
      config.bootstrap_servers = "embedded";
      database = "fluss";
    } else {
      const char* bs = std::getenv("FLUSS_BOOTSTRAP_SERVERS");
      ASSERT_TRUE(bs != nullptr && *bs != '\0')
          << "FLUSS_BOOTSTRAP_SERVERS is not set: the Cluster/ tests need a real Fluss cluster "
             "(export \"$(scripts/fluss-cluster.sh start | tail -n 1)\")";
      config.bootstrap_servers = bs;
      config.Set("client.request-timeout", "20s");
      config.Set("client.writer.delivery-timeout", "60s");
      database = "cpp_it";
    }
    config.Set("client.writer.batch-timeout", "5ms");
    for (const auto& [k, v] : extra) config.Set(k, v);
    admin = fw::Admin();
    if (conn.Available()) (void)conn.Close(10s);
    conn = fw::Connection();
    if (Embedded()) {
      ASSERT_OK(fw::Connection::Create(config, conn));
      ASSERT_OK(conn.GetAdmin(admin));
      return;
    }
    // On a cluster, connecting and creating the database wait for a coordinator that
    // scripts/fluss-cluster.sh heal-watch is restarting (test_util.h).
    ASSERT_OK(WhileCoordinatorRestarts("connect", [&] {
      conn = fw::Connection();
      return fw::Connection::Create(config, conn);
    }));
    ASSERT_OK(conn.GetAdmin(admin));
    ASSERT_OK(WhileCoordinatorRestarts("create database " + database, [&] { return admin.CreateDatabase(database, true); }));
  }

  // Creates a table under a fresh name.
  fw::TablePath Create(const std::string& prefix, const fw::TableDescriptor& d) {
    fw::TablePath p(database, prefix);
    fw::Result r = CreateFreshTable(admin, d, [&] { return fw::TablePath(database, Unique(prefix)); }, p, !Embedded());
    EXPECT_TRUE(r.Ok()) << p.ToString() << ": " << r.ToString();
    return p;
  }

  fw::Table Get(const fw::TablePath& p) {
    fw::Table t;
    fw::Result r = conn.GetTable(p, t);
    EXPECT_TRUE(r.Ok()) << r.ToString();
    return t;
  }

  fw::AppendWriter AppendWriterFor(const fw::Table& t) {
    fw::AppendWriter w;
    fw::Result r = t.NewAppend().CreateWriter(w);
    EXPECT_TRUE(r.Ok()) << r.ToString();
    return w;
  }

  // Every record of every bucket of `partition`.
  std::vector<std::pair<int32_t, fw::ScannedRow>> ScanAll(const fw::Table& t, const std::string& partition) {
    std::vector<std::pair<int32_t, fw::ScannedRow>> out;
    for (int32_t b = 0; b < t.BucketCount(); ++b) {
      std::vector<fw::ScannedRow> rows;
      fw::Result r = t.ScanPartition(partition, b, 0, rows);
      EXPECT_TRUE(r.Ok()) << partition << " bucket " << b << ": " << r.ToString();
      for (auto& row : rows) out.emplace_back(b, std::move(row));
    }
    return out;
  }

  std::string database;
  fw::Connection conn;
  fw::Admin admin;
};

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::Embedded ? "embedded" : "cluster";
}
