// test_security.cpp: the ACL API and the SASL settings without a cluster (the embedded engine).
// What a real SASL cluster does is in test_sasl.cpp.
#include <string>
#include <vector>

#include "test_util.h"

namespace {

constexpr int32_t kSecurityDisabled = 47;  // SECURITY_DISABLED_EXCEPTION

fw::AclBinding Junk() {
  return fw::AclBinding::Allow(fw::AclResource::Database("junk"), "junk", fw::AclOperation::All);
}

class SecurityTest : public EmbeddedTest {};

TEST_F(SecurityTest, AclCallsOnTheEmbeddedEngineAreSecurityDisabled) {
  fw::TablePath path("fluss", "acl_t");
  std::vector<fw::AclBinding> acls = {
      fw::AclBinding::Allow(fw::AclResource::Table(path), "alice", fw::AclOperation::Write),
      fw::AclBinding::Allow(fw::AclResource::Database("fluss"), "bob", fw::AclOperation::Read),
      fw::AclBinding::Allow(fw::AclResource::Cluster(), "carol", fw::AclOperation::Create),
  };
  fw::Result r = admin.CreateAcls(acls);
  EXPECT_EQ(r.error_code, kSecurityDisabled) << r.ToString();
  EXPECT_FALSE(r.IsRetriable());
  EXPECT_EQ(r.CodeName(), "SECURITY_DISABLED_EXCEPTION");

  std::vector<fw::AclBinding> out = {Junk()};
  r = admin.ListAcls(fw::AclFilter{}, out);
  EXPECT_EQ(r.error_code, kSecurityDisabled) << r.ToString();
  EXPECT_TRUE(out.empty()) << "ListAcls replaces `out`, also on error";

  std::vector<fw::AclBinding> dropped = {Junk()};
  fw::AclFilter f;
  f.principal = "alice";
  r = admin.DropAcls({f}, dropped);
  EXPECT_EQ(r.error_code, kSecurityDisabled) << r.ToString();
  EXPECT_TRUE(dropped.empty());
}

// The core converts and checks every value before anything is sent: a bad one fails with the
// core's code even where the server would have answered SECURITY_DISABLED.
TEST_F(SecurityTest, BadAclValuesAreRejectedByTheCoreBeforeAnyRequest) {
  fw::AclBinding bad_op = fw::AclBinding::Allow(fw::AclResource::Cluster(), "alice", fw::AclOperation::Read);
  bad_op.operation = static_cast<fw::AclOperation>(42);
  fw::Result r = admin.CreateAcls({bad_op});
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidConfig)) << r.ToString();
  EXPECT_NE(r.error_message.find("42"), std::string::npos) << r.ToString();

  fw::AclBinding bad_type = fw::AclBinding::Allow(fw::AclResource::Cluster(), "alice", fw::AclOperation::Read);
  bad_type.resource.type = static_cast<fw::AclResourceType>(1);
  r = admin.CreateAcls({bad_type});
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidConfig)) << r.ToString();

  // A table resource names a valid table path (Fluss's naming rules, checked by the core).
  r = admin.CreateAcls(
      {fw::AclBinding::Allow(fw::AclResource::Table(fw::TablePath("fluss", "no spaces")), "a", fw::AclOperation::Read)});
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidTable)) << r.ToString();

  fw::AclFilter f;
  f.operation = static_cast<fw::AclOperation>(0);
  std::vector<fw::AclBinding> out;
  r = admin.ListAcls(f, out);
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidConfig)) << r.ToString();
  f = fw::AclFilter{};
  f.resource = fw::AclResource::Table(fw::TablePath("", "t"));
  r = admin.DropAcls({fw::AclFilter{}, f}, out);
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidTable)) << r.ToString();
}

TEST_F(SecurityTest, AclCallsOnAClosedOrEmptyAdminFailCleanly) {
  fw::Admin empty;
  std::vector<fw::AclBinding> out = {Junk()};
  fw::Result r = empty.ListAcls(fw::AclFilter{}, out);
  EXPECT_TRUE(r.Is(fw::ClientCode::ConnectionClosed)) << r.ToString();
  EXPECT_TRUE(out.empty());
  ASSERT_OK(conn.Close());
  r = admin.CreateAcls({Junk()});
  EXPECT_TRUE(r.Is(fw::ClientCode::ConnectionClosed)) << r.ToString();
}

// Configuration errors about credentials never show the secret.
TEST(SaslConfig, CredentialErrorsAreInvalidConfigAndNeverShowThePassword) {
  const std::string secret = "s3cr3t-Pa55word-0815";
  struct Case {
    std::map<std::string, std::string> props;
    const char* what;
  };
  std::vector<Case> cases = {
      {{{"client.security.protocol", "SASL"}, {"client.security.sasl.password", secret}}, "password without username"},
      {{{"client.security.protocol", "SASL"},
        {"client.security.sasl.jaas.config",
         "org.apache.fluss.security.auth.sasl.plain.PlainLoginModule username=\"admin\" password=\"" + secret + "\";"}},
       "JAAS line without a control flag"},
      {{{"client.security.protocol", "SASL"},
        {"client.security.sasl.jaas.config",
         "org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required password=\"" + secret + "\";"}},
       "JAAS line without a username"},
      {{{"client.security.protocol", "SASL"},
        {"client.security.sasl.mechanism", "SCRAM-SHA-256"},
        {"client.security.sasl.username", "admin"},
        {"client.security.sasl.password", secret}},
       "unsupported mechanism"},
      {{{"client.security.protocol", "KERBEROS"}}, "unknown protocol"},
  };
  for (const Case& c : cases) {
    fw::Configuration config;
    config.bootstrap_servers = "127.0.0.1:1";  // never reached: the configuration is refused first
    config.properties = c.props;
    fw::Connection conn;
    fw::Result r = fw::Connection::Create(config, conn);
    EXPECT_TRUE(r.Is(fw::ClientCode::InvalidConfig)) << c.what << ": " << r.ToString();
    EXPECT_FALSE(r.IsRetriable()) << c.what;
    EXPECT_EQ(r.ToString().find(secret), std::string::npos) << c.what << ": the message shows the password: " << r.ToString();
    EXPECT_FALSE(conn.Available());
  }
}

}  // namespace
