// test_sasl.cpp: SASL/PLAIN authentication and ACLs from C++ against a real Fluss 0.9.1 cluster
// whose client listener requires SASL and whose authorizer is on (FLUSS_SASL_BOOTSTRAP_SERVERS;
// scripts/test-all.sh starts it: users admin/admin-secret (super user) and fluss/fluss-secret).
//
// Registered by tests-cpp/CMakeLists.txt only when FLUSS_SASL_BOOTSTRAP_SERVERS was set at
// configure time (under CI=true configuring without it fails); a run without the variable
// fails, it never skips. Every table has a name of its own, so the tests run in parallel with
// each other and with the other suites.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "test_util.h"

namespace {

constexpr const char* kDatabase = "cpp_sasl";
constexpr const char* kAdminPassword = "admin-secret";
constexpr const char* kUserPassword = "fluss-secret";
constexpr const char* kWrongPassword = "not-the-admin-secret-4711";
constexpr int32_t kAuthenticate = 46;  // AUTHENTICATE_EXCEPTION
constexpr int32_t kAuthorization = 48;  // AUTHORIZATION_EXCEPTION
constexpr auto kRequestTimeout = 10s;

std::string Unique(const std::string& prefix) {
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  return prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(nanos % 1000000000000LL);
}

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

class SaslTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bs = std::getenv("FLUSS_SASL_BOOTSTRAP_SERVERS");
    ASSERT_TRUE(bs != nullptr && *bs != '\0')
        << "FLUSS_SASL_BOOTSTRAP_SERVERS is not set: these tests need the SASL cluster (scripts/test-all.sh starts it)";
    bootstrap = bs;
  }

  fw::Configuration Config(const std::string& user, const std::string& password) const {
    fw::Configuration c;
    c.bootstrap_servers = bootstrap;
    c.Set("client.writer.batch-timeout", "5ms");
    c.Set("client.request-timeout", std::to_string(kRequestTimeout.count()) + "s");
    c.Set("client.writer.delivery-timeout", "30s");
    c.Set("client.security.protocol", "SASL");
    c.Set("client.security.sasl.username", user);
    c.Set("client.security.sasl.password", password);
    return c;
  }

  // A fresh log table (id BIGINT NOT NULL, msg STRING), created by the super user (test_util.h:
  // another name if its buckets get no leader).
  fw::TablePath CreateTable(fw::Admin& admin, const std::string& prefix, int32_t buckets) {
    fw::Result r = WhileCoordinatorRestarts("create database", [&] { return admin.CreateDatabase(kDatabase, true); });
    EXPECT_TRUE(r.Ok()) << r.ToString();
    fw::TableDescriptor d;
    d.schema = fw::Schema::NewBuilder()
                   .AddColumn("id", fw::DataType::BigInt(), false)
                   .AddColumn("msg", fw::DataType::String())
                   .Build();
    d.bucket_count = buckets;
    fw::TablePath p(kDatabase, prefix);
    r = CreateFreshTable(admin, d, [&] { return fw::TablePath(kDatabase, Unique(prefix)); }, p);
    EXPECT_TRUE(r.Ok()) << p.ToString() << ": " << r.ToString();
    return p;
  }

  // Every id stored in the table, bucket by bucket, with its bucket and offset.
  static std::map<int64_t, std::vector<std::pair<int32_t, int64_t>>> Stored(const fw::Table& t) {
    std::map<int64_t, std::vector<std::pair<int32_t, int64_t>>> out;
    for (int32_t b = 0; b < t.BucketCount(); ++b) {
      std::vector<fw::ScannedRow> rows;
      fw::Result r = t.Scan(b, 0, rows);
      EXPECT_TRUE(r.Ok()) << "scan bucket " << b << ": " << r.ToString();
      for (const fw::ScannedRow& row : rows) out[row.row.GetInt64(0)].emplace_back(b, row.offset);
    }
    return out;
  }

  std::string bootstrap;
};

// One callback per record: how often it ran, and the last completion.
struct Outcomes {
  std::mutex m;
  std::map<int64_t, std::pair<int, fw::WriteCompletion>> by_id;

  fw::WriteCallback For(int64_t id) {
    return [this, id](const fw::WriteCompletion& c) {
      std::lock_guard<std::mutex> g(m);
      auto& e = by_id[id];
      e.first++;
      e.second = c;
    };
  }
};

TEST_F(SaslTest, UsernameAndPasswordConnectWriteAndReadBack) {
  fw::Connection conn;
  ASSERT_OK(WhileCoordinatorRestarts("sasl connect", [&] { return fw::Connection::Create(Config("admin", kAdminPassword), conn); }));
  fw::Admin admin;
  ASSERT_OK(conn.GetAdmin(admin));
  fw::TablePath path = CreateTable(admin, "sasl_rw", 2);
  fw::Table table;
  ASSERT_OK(conn.GetTable(path, table));
  fw::AppendWriter w;
  ASSERT_OK(table.NewAppend().CreateWriter(w));
  Outcomes outcomes;
  constexpr int64_t kRows = 200;
  for (int64_t id = 0; id < kRows; ++id) {
    fw::GenericRow row(2);
    row.SetInt64(0, id);
    row.SetString(1, "m" + std::to_string(id));
    ASSERT_OK(w.Append(row, outcomes.For(id)));
  }
  ASSERT_OK(w.Flush(30s));
  auto stored = Stored(table);
  ASSERT_EQ(stored.size(), static_cast<size_t>(kRows));
  std::lock_guard<std::mutex> g(outcomes.m);
  ASSERT_EQ(outcomes.by_id.size(), static_cast<size_t>(kRows));
  for (const auto& [id, e] : outcomes.by_id) {
    EXPECT_EQ(e.first, 1) << "callback of " << id;
    ASSERT_TRUE(e.second.Ok()) << id << ": " << e.second.result.ToString();
    ASSERT_EQ(stored[id].size(), 1u) << "id " << id << " stored once";
    EXPECT_EQ(stored[id][0], std::make_pair(e.second.bucket, e.second.offset)) << "id " << id;
  }
  ASSERT_OK(w.Close());
  ASSERT_OK(admin.DropTable(path, true));
  ASSERT_OK(conn.Close(10s));
}

TEST_F(SaslTest, JaasConfigConnects) {
  fw::Configuration c;
  c.bootstrap_servers = bootstrap;
  c.Set("client.request-timeout", "10s");
  c.Set("client.security.protocol", "sasl");
  c.Set("client.security.sasl.jaas.config",
        std::string("org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required username=\"admin\" "
                    "password=\"") +
            kAdminPassword + "\";");
  fw::Connection conn;
  ASSERT_OK(WhileCoordinatorRestarts("sasl connect", [&] { return fw::Connection::Create(c, conn); }));
  fw::Admin admin;
  ASSERT_OK(conn.GetAdmin(admin));
  bool exists = false;
  ASSERT_OK(admin.DatabaseExists("no_such_db_" + std::to_string(::getpid()), exists));
  EXPECT_FALSE(exists);
}

TEST_F(SaslTest, WrongPasswordIsAuthenticateExceptionNotRetriableWithinTheRequestTimeoutAndHidesThePassword) {
  auto t0 = std::chrono::steady_clock::now();
  fw::Connection conn;
  fw::Result r = fw::Connection::Create(Config("admin", kWrongPassword), conn);
  auto took = std::chrono::steady_clock::now() - t0;
  std::cerr << "wrong password, as a C++ user sees it (after " << Seconds(took) << " s): " << r.ToString() << "\n";
  EXPECT_EQ(r.error_code, kAuthenticate) << r.ToString();
  EXPECT_EQ(r.CodeName(), "AUTHENTICATE_EXCEPTION");
  EXPECT_FALSE(r.IsRetriable()) << r.ToString();
  EXPECT_LT(took, kRequestTimeout) << "failed after " << Seconds(took) << " s, beyond the request timeout";
  EXPECT_FALSE(conn.Available());
  EXPECT_EQ(r.error_message.find(kWrongPassword), std::string::npos) << "the message shows the password";
  EXPECT_EQ(r.ToString().find(kWrongPassword), std::string::npos);
  // The user it was refused for is named, so the message is actionable.
  EXPECT_NE(r.error_message.find("admin"), std::string::npos) << r.ToString();
}

TEST_F(SaslTest, PlaintextClientAtTheSaslListenerIsRefusedClearly) {
  fw::Configuration c;
  c.bootstrap_servers = bootstrap;
  c.Set("client.request-timeout", "10s");
  auto t0 = std::chrono::steady_clock::now();
  fw::Connection conn;
  fw::Result r = fw::Connection::Create(c, conn);
  auto took = std::chrono::steady_clock::now() - t0;
  std::cerr << "PLAINTEXT client at a SASL listener: " << r.ToString() << "\n";
  EXPECT_EQ(r.error_code, kAuthenticate) << r.ToString();
  EXPECT_FALSE(r.IsRetriable());
  EXPECT_LT(took, kRequestTimeout);
}

// Without WRITE the user's writes fail, each callback once with AUTHORIZATION_EXCEPTION, not
// retried until the delivery timeout; a WRITE ACL granted with Admin::CreateAcls lets a new
// writer write. ListAcls and DropAcls see exactly this table's ACLs.
TEST_F(SaslTest, WriteAclGrantedThroughTheCppApiLetsAUserWrite) {
  fw::Connection admin_conn;
  ASSERT_OK(WhileCoordinatorRestarts("sasl connect", [&] { return fw::Connection::Create(Config("admin", kAdminPassword), admin_conn); }));
  fw::Admin admin;
  ASSERT_OK(admin_conn.GetAdmin(admin));
  fw::TablePath path = CreateTable(admin, "sasl_acl", 1);
  fw::AclResource resource = fw::AclResource::Table(path);
  fw::AclBinding read = fw::AclBinding::Allow(resource, "fluss", fw::AclOperation::Read);
  fw::AclBinding write = fw::AclBinding::Allow(resource, "fluss", fw::AclOperation::Write);
  // READ lets the user load the table's metadata; no WRITE yet.
  ASSERT_OK(admin.CreateAcls({read}));
  fw::AclFilter mine;
  mine.resource = resource;
  std::vector<fw::AclBinding> listed;
  ASSERT_OK(admin.ListAcls(mine, listed));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_TRUE(listed[0] == read) << listed[0].principal << " " << static_cast<int>(listed[0].operation);
  EXPECT_EQ(listed[0].resource.database_name, path.database());
  EXPECT_EQ(listed[0].resource.table_name, path.table());
  EXPECT_EQ(listed[0].host, "*");
  EXPECT_EQ(listed[0].principal_type, "User");

  fw::Connection user_conn;
  ASSERT_OK(WhileCoordinatorRestarts("sasl connect", [&] { return fw::Connection::Create(Config("fluss", kUserPassword), user_conn); }));
  // ACLs reach the servers asynchronously: the user may not even see the table for a moment.
  fw::Table user_table;
  fw::Result r;
  auto t_read = std::chrono::steady_clock::now();
  while (!(r = user_conn.GetTable(path, user_table)).Ok() && r.error_code == kAuthorization &&
         std::chrono::steady_clock::now() - t_read < 20s) {
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_OK(r);

  {
    fw::AppendWriter denied;
    ASSERT_OK(user_table.NewAppend().CreateWriter(denied));
    Outcomes outcomes;
    constexpr int64_t kDenied = 5;
    for (int64_t id = 0; id < kDenied; ++id) {
      fw::GenericRow row(2);
      row.SetInt64(0, id);
      row.SetString(1, "denied");
      ASSERT_OK(denied.Append(row, outcomes.For(id)));
    }
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_OK(denied.Flush(40s));
    auto took = std::chrono::steady_clock::now() - t0;
    std::lock_guard<std::mutex> g(outcomes.m);
    ASSERT_EQ(outcomes.by_id.size(), static_cast<size_t>(kDenied)) << "every callback ran";
    std::cerr << "no WRITE: callbacks see " << outcomes.by_id.begin()->second.second.result.ToString() << " after "
              << Seconds(took) << " s\n";
    for (const auto& [id, e] : outcomes.by_id) {
      EXPECT_EQ(e.first, 1) << "callback of " << id << " ran " << e.first << " times";
      EXPECT_EQ(e.second.result.error_code, kAuthorization) << id << ": " << e.second.result.ToString();
      EXPECT_FALSE(e.second.result.IsRetriable()) << id;
      EXPECT_EQ(e.second.result.error_message.find(kUserPassword), std::string::npos);
    }
    EXPECT_LT(took, 20s) << "an authorization error is not retried until the delivery timeout";
    ASSERT_OK(denied.Close(10s));
  }

  ASSERT_OK(admin.CreateAcls({write}));
  auto granted_at = std::chrono::steady_clock::now();
  fw::WriteCompletion done;
  int attempts = 0;
  for (;;) {
    ++attempts;
    fw::Table t;
    fw::AppendWriter w;
    r = user_conn.GetTable(path, t);
    if (r.Ok()) r = t.NewAppend().CreateWriter(w);
    if (r.Ok()) {
      fw::GenericRow row(2);
      row.SetInt64(0, 42);
      row.SetString(1, "granted");
      fw::WriteResult res;
      r = w.Append(row, res);
      if (r.Ok()) r = res.Wait(30s, &done);
      if (r.Ok()) r = done.result;
    }
    if (r.error_code == kAuthorization && std::chrono::steady_clock::now() - granted_at < 20s) {
      std::this_thread::sleep_for(200ms);
      continue;
    }
    break;
  }
  std::cerr << "WRITE took effect after " << Seconds(std::chrono::steady_clock::now() - granted_at) << " s ("
            << attempts << " attempts)\n";
  ASSERT_OK(r);

  fw::Table admin_table;
  ASSERT_OK(admin_conn.GetTable(path, admin_table));
  auto stored = Stored(admin_table);
  ASSERT_EQ(stored.size(), 1u) << "only the granted write is stored (the denied ones are not)";
  ASSERT_EQ(stored.count(42), 1u);
  ASSERT_EQ(stored[42].size(), 1u) << "stored exactly once";
  EXPECT_EQ(stored[42][0], std::make_pair(done.bucket, done.offset));

  std::vector<fw::AclBinding> dropped;
  ASSERT_OK(admin.DropAcls({mine}, dropped));
  ASSERT_EQ(dropped.size(), 2u);
  std::set<int> ops;
  for (const fw::AclBinding& b : dropped) {
    EXPECT_TRUE(b.resource == resource);
    EXPECT_EQ(b.principal, "fluss");
    ops.insert(static_cast<int>(b.operation));
  }
  EXPECT_EQ(ops, (std::set<int>{static_cast<int>(fw::AclOperation::Read), static_cast<int>(fw::AclOperation::Write)}));
  ASSERT_OK(admin.ListAcls(mine, listed));
  EXPECT_TRUE(listed.empty());
  ASSERT_OK(admin.DropTable(path, true));
}

// Creating ACLs needs ALTER on the cluster: the user without it gets the server's refusal.
TEST_F(SaslTest, CreateAclsWithoutAlterIsAuthorizationException) {
  fw::Connection conn;
  ASSERT_OK(WhileCoordinatorRestarts("sasl connect", [&] { return fw::Connection::Create(Config("fluss", kUserPassword), conn); }));
  fw::Admin admin;
  ASSERT_OK(conn.GetAdmin(admin));
  fw::Result r = admin.CreateAcls(
      {fw::AclBinding::Allow(fw::AclResource::Database(Unique("cpp_nope")), "fluss", fw::AclOperation::All)});
  std::cerr << "CreateAcls without ALTER: " << r.ToString() << "\n";
  EXPECT_EQ(r.error_code, kAuthorization) << r.ToString();
  EXPECT_FALSE(r.IsRetriable());
}

}  // namespace
