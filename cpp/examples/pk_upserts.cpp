// pk_upserts.cpp: a primary-key table of user profiles kept up to date with upserts, a second
// version of some rows, deletes and a partial update of one column, then read back with lookups.
//
//   ./pk_upserts [address]   # default: the embedded engine
//
// Exit code 0 when every write succeeded and every lookup returned what was written.
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

static fw::GenericRow User(int64_t id, const std::string& name, int64_t visits, const std::string& country) {
  fw::GenericRow row(4);
  row.SetInt64(0, id);
  row.SetString(1, name);
  row.SetInt64(2, visits);
  row.SetString(3, country);
  return row;
}

int main(int argc, char** argv) {
  constexpr int64_t kUsers = 1000;
  fw::Configuration config;
  config.bootstrap_servers = argc > 1 ? argv[1] : "embedded";
  fw::Connection conn;
  fw::Admin admin;
  if (auto r = fw::Connection::Create(config, conn); !r.Ok()) return Fail("connect", r);
  if (auto r = conn.GetAdmin(admin); !r.Ok()) return Fail("admin", r);
  if (auto r = admin.CreateDatabase("examples", true); !r.Ok()) return Fail("create database", r);
  fw::TableDescriptor descriptor;
  descriptor.schema = fw::Schema::NewBuilder()
                          .AddColumn("user_id", fw::DataType::BigInt(), false)
                          .AddColumn("name", fw::DataType::String())
                          .AddColumn("visits", fw::DataType::BigInt())
                          .AddColumn("country", fw::DataType::String())
                          .SetPrimaryKeys({"user_id"})
                          .Build();
  descriptor.bucket_count = 4;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  fw::TablePath path("examples", "users_cpp_" + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()));
  if (auto r = admin.CreateTable(path, descriptor); !r.Ok()) return Fail("create table", r);
  fw::Table table;
  if (auto r = conn.GetTable(path, table); !r.Ok()) return Fail("get table", r);

  std::atomic<int> failed{0};
  fw::SharedWriteCallback check([&failed](const fw::WriteCompletion& c) {
    if (!c.Ok() && ++failed == 1) std::fprintf(stderr, "a write failed: %s\n", c.result.ToString().c_str());
  });
  {
    fw::UpsertWriter writer;
    if (auto r = table.NewUpsert().CreateWriter(writer); !r.Ok()) return Fail("writer", r);
    for (int64_t i = 0; i < kUsers; ++i)
      if (auto r = writer.Upsert(User(i, "user " + std::to_string(i), 0, "nl"), check); !r.Ok()) return Fail("upsert", r);
    for (int64_t i = 0; i < kUsers; i += 2)  // a second version of every even user replaces the first
      if (auto r = writer.Upsert(User(i, "user " + std::to_string(i) + " (renamed)", 0, "be"), check); !r.Ok()) return Fail("upsert", r);
    fw::GenericRow key(1);
    for (int64_t i = 0; i < kUsers; i += 10) {
      key.SetInt64(0, i);
      if (auto r = writer.Delete(key, check); !r.Ok()) return Fail("delete", r);
    }
    if (auto r = writer.Flush(); !r.Ok()) return Fail("flush", r);
  }
  {
    // Only the key and "visits": name and country stay as they are (their values here are ignored).
    fw::UpsertWriter visits;
    if (auto r = table.NewUpsert().PartialUpdateByName({"user_id", "visits"}).CreateWriter(visits); !r.Ok()) return Fail("writer", r);
    for (int64_t i = 0; i < kUsers; ++i) {
      fw::GenericRow row(4);
      row.SetInt64(0, i);
      row.SetInt64(2, i % 7);
      if (auto r = visits.Upsert(row, check); !r.Ok()) return Fail("partial update", r);
    }
    if (auto r = visits.Flush(); !r.Ok()) return Fail("flush", r);
  }

  int wrong = 0;
  for (int64_t id : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{10}, int64_t{11}, kUsers - 1}) {
    fw::GenericRow key(1), got;
    key.SetInt64(0, id);
    bool found = false;
    if (auto r = table.Lookup(key, got, found); !r.Ok()) return Fail("lookup", r);
    std::string want_name = id % 10 == 0 ? "" : "user " + std::to_string(id) + (id % 2 == 0 ? " (renamed)" : "");
    std::string want_country = id % 10 == 0 ? "" : (id % 2 == 0 ? "be" : "nl");
    // A deleted user that the partial update wrote again has only its key and visits.
    bool ok = found && got.GetInt64(2) == id % 7 && (id % 10 == 0 ? got.IsNull(1) && got.IsNull(3)
                                                                  : got.GetString(1) == want_name && got.GetString(3) == want_country);
    std::printf("lookup(%lld) = (%s, %s, %s, %s)%s\n", static_cast<long long>(id), got.ToString(0).c_str(), got.ToString(1).c_str(),
                got.ToString(2).c_str(), got.ToString(3).c_str(), ok ? "" : "  WRONG");
    wrong += ok ? 0 : 1;
  }
  if (auto r = admin.DropTable(path); !r.Ok()) return Fail("drop table", r);
  std::printf("%lld users upserted, %d writes failed, %d lookups wrong\n", static_cast<long long>(kUsers), failed.load(), wrong);
  return failed == 0 && wrong == 0 ? 0 : 1;
}
