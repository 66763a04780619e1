// test_lake.cpp: tables with a datalake format (table.datalake.format) through the C++ API, on
// the embedded engine and on a real Fluss 0.9.1 cluster (fixture: backend_test.h). The key bytes
// and buckets are the Rust core's, held to Fluss's Java classes by
// rust/core/tests/cluster_interop_java.rs; these tests show that the table property reaches that
// rule from C++ and that its refusals arrive as documented:
//
// * paimon and iceberg primary-key tables place the same keys differently from a table without a
//   lake (the callbacks report the bucket; a scan of each bucket agrees), lance places them like
//   no lake, and every key is found by lookup;
// * an iceberg table whose key has two columns is created, but its writer is refused with
//   INVALID_TABLE; an empty iceberg key is refused synchronously with INVALID_ROW;
// * table.datalake.enabled = true on a cluster without a lake: the server's INVALID_TABLE (15);
// * hudi (Fluss 1.0; embedded engine only, 0.9.1 does not know the format): every key lands in the
//   bucket of Hudi's rule, recomputed here from its definition (the Java hash of the key's decimal
//   string as a one-element List<String>).
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backend_test.h"

namespace {

constexpr int32_t kInvalidTable = 15;
constexpr int32_t kBuckets = 4;

class LakeTest : public BackendTest {
 protected:
  // A primary-key table (k INT, s STRING, v STRING) keyed by `pk`, with `format` ("" = none).
  fw::TablePath CreatePk(const std::string& format, const std::vector<std::string>& pk) {
    fw::TableDescriptor d;
    d.schema = fw::Schema::NewBuilder()
                   .AddColumn("k", fw::DataType::Int(), false)
                   .AddColumn("s", fw::DataType::String(), false)
                   .AddColumn("v", fw::DataType::String())
                   .SetPrimaryKeys(pk)
                   .Build();
    d.bucket_count = kBuckets;
    if (!format.empty()) d.properties["table.datalake.format"] = format;
    return Create("lake_" + (format.empty() ? std::string("none") : format), d);
  }

  // Upserts keys -40..39 into a fresh table of `format`; each key's bucket as its callback said,
  // after checking every callback ran once and succeeded, a scan of each bucket holds exactly
  // its keys, and every key is found by lookup.
  std::map<int32_t, int32_t> Placements(const std::string& format) {
    fw::TablePath p = CreatePk(format, {"k"});
    fw::Table t = Get(p);
    fw::UpsertWriter w;
    fw::Result r = t.NewUpsert().CreateWriter(w);
    EXPECT_TRUE(r.Ok()) << r.ToString();
    std::mutex m;
    std::map<int32_t, std::vector<fw::WriteCompletion>> seen;
    for (int32_t k = -40; k < 40; ++k) {
      fw::GenericRow row(3);
      row.SetInt32(0, k);
      row.SetString(1, "s" + std::to_string(k));
      row.SetString(2, "v");
      r = w.Upsert(row, [&m, &seen, k](const fw::WriteCompletion& c) {
        std::lock_guard<std::mutex> g(m);
        seen[k].push_back(c);
      });
      EXPECT_TRUE(r.Ok()) << r.ToString();
    }
    r = w.Flush();
    EXPECT_TRUE(r.Ok()) << r.ToString();
    r = w.Close();
    EXPECT_TRUE(r.Ok()) << r.ToString();
    std::map<int32_t, int32_t> out;
    for (const auto& [k, calls] : seen) {
      EXPECT_EQ(calls.size(), 1u) << format << " key " << k;
      EXPECT_TRUE(calls[0].Ok()) << format << " key " << k << ": " << calls[0].result.ToString();
      out[k] = calls[0].bucket;
    }
    EXPECT_EQ(out.size(), 80u);
    for (int32_t b = 0; b < kBuckets; ++b) {
      std::vector<fw::ScannedRow> rows;
      r = t.Scan(b, 0, rows);
      EXPECT_TRUE(r.Ok()) << r.ToString();
      for (const auto& rec : rows) {
        const auto k = static_cast<int32_t>(rec.row.GetInt64(0));
        EXPECT_EQ(out[k], b) << format << " key " << k;
      }
    }
    for (int32_t k = -40; k < 40; ++k) {
      fw::GenericRow key(1);
      key.SetInt32(0, k);
      fw::GenericRow got;
      bool found = false;
      r = t.Lookup(key, got, found);
      EXPECT_TRUE(r.Ok()) << r.ToString();
      EXPECT_TRUE(found) << format << " key " << k;
    }
    return out;
  }
};

int Moved(const std::map<int32_t, int32_t>& a, const std::map<int32_t, int32_t>& b) {
  int n = 0;
  for (const auto& [k, bucket] : a) n += b.at(k) != bucket;
  return n;
}

TEST_P(LakeTest, FormatsPlaceKeysByTheirRule) {
  auto none = Placements("");
  auto paimon = Placements("paimon");
  auto iceberg = Placements("iceberg");
  auto lance = Placements("lance");
  EXPECT_EQ(lance, none) << "lance keys and buckets like a table without a lake";
  EXPECT_GT(Moved(paimon, none), 40) << "paimon places most keys elsewhere than Fluss's rule";
  EXPECT_GT(Moved(iceberg, none), 40) << "iceberg places most keys elsewhere than Fluss's rule";
  EXPECT_NE(paimon, iceberg);
}

// Hudi's bucket of an INT key (Fluss 1.0 HudiKeyEncoder + HudiBucketingFunction): Java's
// List.of(String.valueOf(k)).hashCode(), then (hash & INT_MAX) % buckets.
int32_t HudiBucket(int32_t k) {
  uint32_t s = 0;
  for (char c : std::to_string(k)) s = 31 * s + static_cast<uint32_t>(static_cast<unsigned char>(c));
  const uint32_t list = 31 * 1u + s;
  return static_cast<int32_t>((list & 0x7fffffffu) % static_cast<uint32_t>(kBuckets));
}

// HUDI is a Fluss 1.0 lake format, which the 0.9.1 test cluster does not have: this test runs on
// the embedded engine only (the Rust and Python suites also run it against the 1.0-line cluster).
class HudiTest : public LakeTest {};

TEST_P(HudiTest, HudiPlacesKeysByHudisRule) {
  auto hudi = Placements("hudi");
  auto none = Placements("");
  for (const auto& [k, bucket] : hudi) EXPECT_EQ(bucket, HudiBucket(k)) << "key " << k;
  EXPECT_GT(Moved(hudi, none), 40) << "hudi places most keys elsewhere than Fluss's rule";
}

TEST_P(LakeTest, KeysAFormatCannotBucketAreRefused) {
  fw::Table two = Get(CreatePk("iceberg", {"k", "s"}));
  fw::UpsertWriter w;
  fw::Result r = two.NewUpsert().CreateWriter(w);
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidTable)) << r.ToString();
  EXPECT_NE(r.error_message.find("exactly one column"), std::string::npos) << r.error_message;

  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("s", fw::DataType::String(), false)
                 .AddColumn("v", fw::DataType::String())
                 .SetPrimaryKeys({"s"})
                 .Build();
  d.properties["table.datalake.format"] = "iceberg";
  fw::Table t = Get(Create("lake_ices", d));
  ASSERT_OK(t.NewUpsert().CreateWriter(w));
  fw::GenericRow empty(2);
  empty.SetString(0, "");
  empty.SetNull(1);
  r = w.Upsert(empty, [](const fw::WriteCompletion&) { ADD_FAILURE() << "a refused row has no callback"; });
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidRow)) << r.ToString();
  EXPECT_NE(r.error_message.find("empty"), std::string::npos) << r.error_message;
  ASSERT_OK(w.Close());

  d.properties = {{"table.datalake.enabled", "true"}};
  r = admin.CreateTable(fw::TablePath(database, Unique("lake_on")), d);
  EXPECT_EQ(r.error_code, kInvalidTable) << r.ToString();
  EXPECT_NE(r.error_message.find("table.datalake.enabled"), std::string::npos) << r.error_message;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Embedded, LakeTest, ::testing::Values(Backend::Embedded), BackendName);
INSTANTIATE_TEST_SUITE_P(Cluster, LakeTest, ::testing::Values(Backend::Cluster), BackendName);
INSTANTIATE_TEST_SUITE_P(Embedded, HudiTest, ::testing::Values(Backend::Embedded), BackendName);
