// sasl_connect.cpp: connect to a Fluss cluster whose listener requires SASL/PLAIN, write a few
// rows, and see what a wrong password gives.
//
//   FLUSS_SASL_USERNAME=admin FLUSS_SASL_PASSWORD=... ./sasl_connect 127.0.0.1:9223
//
// The user and password come from the environment, never from the command line (where other
// users of the machine could read them) or the code; the library never prints them, in a
// Result's message or its logs. Fluss 0.9 has no TLS: SASL/PLAIN sends the password in clear
// text (SECURITY.md). The user needs CREATE on the cluster for the database and table below.
// Exit code 0 when every row was acknowledged and the wrong password was refused.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fluss_writer.hpp"

namespace fw = fluss_writer;

static int Fail(const char* what, const fw::Result& r) {
  std::fprintf(stderr, "%s: %s\n", what, r.ToString().c_str());
  return 1;
}

static fw::Configuration SaslConfig(const std::string& address, const std::string& user, const std::string& password) {
  fw::Configuration config;
  config.bootstrap_servers = address;
  config.Set("client.security.protocol", "SASL")
      .Set("client.security.sasl.mechanism", "PLAIN")
      .Set("client.security.sasl.username", user)
      .Set("client.security.sasl.password", password)
      .Set("client.request-timeout", "20s");
  return config;
}

int main(int argc, char** argv) {
  const char* user = std::getenv("FLUSS_SASL_USERNAME");
  const char* password = std::getenv("FLUSS_SASL_PASSWORD");
  if (argc != 2 || !user || !password || !*user || !*password) {
    std::fprintf(stderr, "usage: FLUSS_SASL_USERNAME=... FLUSS_SASL_PASSWORD=... %s host:port\n", argv[0]);
    return 2;
  }
  fw::Connection conn;
  fw::Admin admin;
  if (auto r = fw::Connection::Create(SaslConfig(argv[1], user, password), conn); !r.Ok()) return Fail("connect", r);
  if (auto r = conn.GetAdmin(admin); !r.Ok()) return Fail("admin", r);
  if (auto r = admin.CreateDatabase("examples", true); !r.Ok()) return Fail("create database", r);
  fw::TableDescriptor descriptor;
  descriptor.schema = fw::Schema::NewBuilder().AddColumn("id", fw::DataType::BigInt(), false).AddColumn("msg", fw::DataType::String()).Build();
  descriptor.bucket_count = 2;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  fw::TablePath path("examples", "sasl_cpp_" + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()));
  if (auto r = admin.CreateTable(path, descriptor); !r.Ok()) return Fail("create table", r);
  std::atomic<int> acked{0};
  {
    fw::Table table;
    fw::AppendWriter writer;
    if (auto r = conn.GetTable(path, table); !r.Ok()) return Fail("get table", r);
    if (auto r = table.NewAppend().CreateWriter(writer); !r.Ok()) return Fail("writer", r);
    fw::GenericRow row(2);
    for (int64_t i = 0; i < 100; ++i) {
      row.SetInt64(0, i);
      row.SetString(1, "authenticated");
      if (auto r = writer.Append(row, [&acked](const fw::WriteCompletion& c) { acked += c.Ok() ? 1 : 0; }); !r.Ok())
        return Fail("append", r);
    }
    if (auto r = writer.Flush(); !r.Ok()) return Fail("flush", r);
  }
  if (auto r = admin.DropTable(path); !r.Ok()) return Fail("drop table", r);
  std::printf("as '%s': %d of 100 rows acknowledged\n", user, acked.load());

  const std::string wrong = std::string("not-") + password;
  fw::Connection refused;
  fw::Result r = fw::Connection::Create(SaslConfig(argv[1], user, wrong), refused);
  const bool hidden = r.ToString().find(wrong) == std::string::npos;
  std::printf("a wrong password: %s (%d); the message does not show it: %s\n", r.CodeName().c_str(), r.error_code,
              hidden ? "true" : "false");
  return acked == 100 && r.error_code == fw::ErrorCode::kAuthenticateException && hidden ? 0 : 1;
}
