// test_cluster.cpp: the C++ API against a real Fluss 0.9.1 cluster (FLUSS_BOOTSTRAP_SERVERS).
// Creates a database and tables (log with and without a bucket key, primary key, primary key
// with partial updates), writes through every write API, flushes, reads everything back with
// Table::Scan / Table::Lookup and compares row for row, and checks that the callbacks' offsets
// are the offsets the records were stored at.
//
// Registered by tests-cpp/CMakeLists.txt only when FLUSS_BOOTSTRAP_SERVERS was set at configure
// time; a run without the variable fails (it never skips).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "arrow_c_producer.h"
#include "fluss_writer.hpp"
#include "test_util.h"

namespace {

constexpr const char* kDatabase = "cpp_it";

std::string Unique(const std::string& prefix) {
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  return prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(nanos % 1000000000000LL);
}

// Field-by-field equality through the public read accessors.
void ExpectSameRow(const fw::GenericRow& got, const fw::GenericRow& want, const std::string& what) {
  ASSERT_EQ(got.FieldCount(), want.FieldCount()) << what;
  for (size_t i = 0; i < got.FieldCount(); ++i) {
    EXPECT_EQ(got.IsNull(i), want.IsNull(i)) << what << " field " << i;
    if (!want.IsNull(i)) {
      EXPECT_EQ(got.ToString(i), want.ToString(i)) << what << " field " << i;
    }
  }
}

// id INT NOT NULL first, then a column of every type GenericRow writes (all nullable).
fw::Schema AllTypes(std::vector<std::string> pk) {
  auto b = fw::Schema::NewBuilder();
  b.AddColumn("id", fw::DataType::Int(), false)
      .AddColumn("region", fw::DataType::String())
      .AddColumn("b", fw::DataType::Boolean())
      .AddColumn("ti", fw::DataType::TinyInt())
      .AddColumn("si", fw::DataType::SmallInt())
      .AddColumn("bi", fw::DataType::BigInt())
      .AddColumn("f", fw::DataType::Float())
      .AddColumn("d", fw::DataType::Double())
      .AddColumn("s", fw::DataType::String())
      .AddColumn("by", fw::DataType::Bytes())
      .AddColumn("dec10", fw::DataType::Decimal(10, 2))
      .AddColumn("dec28", fw::DataType::Decimal(28, 6))
      .AddColumn("dt", fw::DataType::Date())
      .AddColumn("tm", fw::DataType::Time(3))
      .AddColumn("ts3", fw::DataType::Timestamp(3))
      .AddColumn("ts6", fw::DataType::Timestamp(6))
      .AddColumn("ts9", fw::DataType::Timestamp(9))
      .AddColumn("ltz", fw::DataType::TimestampLtz(6));
  if (!pk.empty()) b.SetPrimaryKeys(std::move(pk));
  return b.Build();
}
constexpr size_t kAllTypesColumns = 18;

// A deterministic row of `id` in `version`; column c >= 2 is null when (id + version + c) % 6
// == 0, so every column sees nulls. Values are exact at each column's precision.
fw::GenericRow RowFor(int32_t id, int32_t version) {
  static const char* regions[] = {"eu", "us", "apac", "latam", "mea"};
  int64_t v = int64_t{id} * 7919 + int64_t{version} * 1000003;
  int64_t neg = id % 11 == 0 ? -1 : 1;
  fw::GenericRow r(kAllTypesColumns);
  r.SetInt32(0, id);
  r.SetString(1, regions[id % 5]);
  r.SetBool(2, v % 2 == 0);
  r.SetInt8(3, static_cast<int8_t>(v % 256 - 128));
  r.SetInt16(4, static_cast<int16_t>(v % 65536 - 32768));
  r.SetInt64(5, neg * v * 1000000007LL);
  r.SetFloat32(6, static_cast<float>(neg) * static_cast<float>(v) * 0.25f);
  r.SetFloat64(7, static_cast<double>(neg * v) / 3.0);
  r.SetString(8, "s-" + std::to_string(id) + "-" + std::to_string(version) + "-\xc3\xbc" "n" "\xc3\xaf" "c\xc3\xb8" +
                     std::string(static_cast<size_t>(id % 40), 'x'));
  std::vector<uint8_t> bytes;
  for (int i = 0; i < id % 17; ++i) bytes.push_back(static_cast<uint8_t>((i * 37 + version) ^ 0x80));
  r.SetBytes(9, bytes);
  r.SetDecimal(10, neg * (v * 101 % 9999999999LL), 10, 2);
  std::string big = std::to_string(v) + "000000000000" + std::to_string(id % 10);  // up to 28 digits
  r.SetDecimal(11, std::string_view((neg < 0 ? "-" : "") + big), 28, 6);
  r.SetDate(12, static_cast<int32_t>(neg * (18000 + id)));
  r.SetTime(13, static_cast<int32_t>((v * 1237) % 86400000));
  r.SetTimestampNtz(14, 1700000000000LL + neg * v * 13);
  int64_t micros = 1700000000000000LL + neg * v * 1301;
  r.SetTimestampNtz(15, micros / 1000, static_cast<int32_t>(micros % 1000) * 1000);
  int64_t nanos = 1700000000000000000LL + neg * v * 130017;
  r.SetTimestampNtz(16, nanos / 1000000, static_cast<int32_t>(nanos % 1000000));
  int64_t ltz = 1600000000000000LL + neg * v * 977;
  r.SetTimestampLtz(17, ltz / 1000, static_cast<int32_t>(ltz % 1000) * 1000);
  for (size_t c = 2; c < kAllTypesColumns; ++c) {
    if ((static_cast<size_t>(id) + static_cast<size_t>(version) + c) % 6 == 0) r.SetNull(c);
  }
  return r;
}

fw::GenericRow Key(int32_t id) {
  fw::GenericRow k(1);
  k.SetInt32(0, id);
  return k;
}

// One completion per callback, counted.
struct Completions {
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

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bs = std::getenv("FLUSS_BOOTSTRAP_SERVERS");
    ASSERT_TRUE(bs != nullptr && *bs != '\0')
        << "FLUSS_BOOTSTRAP_SERVERS is not set: the cluster tests need a real Fluss cluster "
           "(export \"$(scripts/fluss-cluster.sh start | tail -n 1)\")";
    fw::Configuration config;
    config.bootstrap_servers = bs;
    config.Set("client.writer.batch-timeout", "5ms");
    config.Set("client.request-timeout", "20s");
    config.Set("client.writer.delivery-timeout", "45s");
    // Waiting for a coordinator that scripts/fluss-cluster.sh heal-watch restarts (test_util.h).
    ASSERT_OK(WhileCoordinatorRestarts("connect", [&] {
      conn = fw::Connection();
      return fw::Connection::Create(config, conn);
    }));
    ASSERT_OK(conn.GetAdmin(admin));
    ASSERT_OK(WhileCoordinatorRestarts("create database", [&] { return admin.CreateDatabase(kDatabase, true); }));
  }

  void TearDown() override {
    if (conn.Available()) (void)conn.Close(10s);
  }

  // Creates a fresh table and waits until every bucket has a leader that answers.
  fw::Table Create(const std::string& prefix, const fw::TableDescriptor& d) {
    fw::TablePath p(kDatabase, prefix);
    fw::Result r = CreateFreshTable(admin, d, [&] { return fw::TablePath(kDatabase, Unique(prefix)); }, p);
    EXPECT_TRUE(r.Ok()) << p.ToString() << ": " << r.ToString();
    fw::Table t;
    r = conn.GetTable(p, t);
    EXPECT_TRUE(r.Ok()) << r.ToString();
    for (int32_t b = 0; b < t.BucketCount(); ++b) {
      std::vector<fw::ScannedRow> rows;
      r = t.Scan(b, 0, rows);
      EXPECT_TRUE(r.Ok()) << "bucket " << b << ": " << r.ToString();
      EXPECT_TRUE(rows.empty());
    }
    EXPECT_EQ(t.BucketCount(), d.bucket_count);
    return t;
  }

  struct Stored {
    int32_t bucket;
    fw::ScannedRow rec;
  };

  // Every record of every bucket.
  std::vector<Stored> ScanAll(const fw::Table& t) {
    std::vector<Stored> out;
    for (int32_t b = 0; b < t.BucketCount(); ++b) {
      std::vector<fw::ScannedRow> rows;
      fw::Result r = t.Scan(b, 0, rows);
      EXPECT_TRUE(r.Ok()) << "scan bucket " << b << ": " << r.ToString();
      int64_t expect_offset = 0;
      for (auto& row : rows) {
        EXPECT_EQ(row.offset, expect_offset++) << "bucket " << b << ": offsets are dense from 0";
        out.push_back(Stored{b, std::move(row)});
      }
    }
    return out;
  }

  fw::Connection conn;
  fw::Admin admin;
};

TEST_F(ClusterTest, LogTableWithoutBucketKeyEveryAppendApi) {
  fw::TableDescriptor d;
  d.schema = AllTypes({});
  d.bucket_count = 3;
  fw::Table t = Create("log_nokey", d);
  fw::AppendWriter w;
  ASSERT_OK(t.NewAppend().CreateWriter(w));
  constexpr int32_t kRows = 240;
  Completions cbs;
  std::map<int32_t, fw::WriteResult> results;
  for (int32_t id = 0; id < kRows; ++id) {
    fw::GenericRow row = RowFor(id, 0);
    switch (id % 3) {
      case 0: ASSERT_OK(w.Append(row, cbs.For(id))); break;
      case 1: ASSERT_OK(w.Append(row, results[id])); break;
      default: ASSERT_OK(w.AppendDetached(row)); break;
    }
  }
  ASSERT_OK(w.Flush());
  std::map<int32_t, std::pair<int32_t, int64_t>> acked;  // id -> (bucket, offset)
  {
    std::lock_guard<std::mutex> g(cbs.m);
    EXPECT_EQ(cbs.by_id.size(), static_cast<size_t>(kRows / 3));
    for (const auto& [id, e] : cbs.by_id) {
      EXPECT_EQ(e.first, 1) << "callback of id " << id << " ran " << e.first << " times";
      EXPECT_TRUE(e.second.Ok()) << id << ": " << e.second.result.ToString();
      EXPECT_GE(e.second.offset, 0);
      acked[static_cast<int32_t>(id)] = {e.second.bucket, e.second.offset};
    }
  }
  for (auto& [id, res] : results) {
    fw::WriteCompletion c;
    ASSERT_OK(res.Wait(5s, &c));
    EXPECT_TRUE(c.Ok()) << c.result.ToString();
    EXPECT_EQ(c.table, t.Path());
    acked[id] = {c.bucket, c.offset};
  }
  std::vector<Stored> all = ScanAll(t);
  ASSERT_EQ(all.size(), static_cast<size_t>(kRows));
  std::set<int32_t> seen;
  for (const Stored& s : all) {
    int32_t id = static_cast<int32_t>(s.rec.row.GetInt64(0));
    EXPECT_TRUE(seen.insert(id).second) << "id " << id << " stored twice";
    EXPECT_EQ(s.rec.change_type, "+A");
    ExpectSameRow(s.rec.row, RowFor(id, 0), "id " + std::to_string(id));
    auto a = acked.find(id);
    if (a != acked.end()) {
      EXPECT_EQ(a->second, std::make_pair(s.bucket, s.rec.offset)) << "id " << id << ": the completion's bucket/offset";
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kRows));
  EXPECT_EQ(acked.size(), static_cast<size_t>(kRows / 3 * 2));
  ASSERT_OK(w.Close());
}

TEST_F(ClusterTest, LogTableWithBucketKeyAppendAndArrow) {
  // The hand-written Arrow producer makes {id: int64 not null, msg: utf8 "m<id>"}.
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("id", fw::DataType::BigInt(), false)
                 .AddColumn("msg", fw::DataType::String())
                 .Build();
  d.bucket_count = 4;
  d.bucket_keys = {"id"};
  fw::Table t = Create("log_keyed", d);
  fw::AppendWriter w;
  ASSERT_OK(t.NewAppend().CreateWriter(w));
  std::map<int64_t, std::string> expected;  // id -> msg ("" for null)
  Completions cbs;
  fw::WriteResult r1;
  for (int64_t id = 0; id < 60; ++id) {
    fw::GenericRow row(2);
    row.SetInt64(0, id);
    if (id % 5 == 0) {
      row.SetNull(1);
      expected[id] = "";
    } else {
      row.SetString(1, "m" + std::to_string(id));
      expected[id] = "m" + std::to_string(id);
    }
    if (id % 3 == 0) {
      ASSERT_OK(w.Append(row, cbs.For(id)));
    } else if (id == 1) {
      ASSERT_OK(w.Append(row, r1));
    } else {
      ASSERT_OK(w.AppendDetached(row));
    }
  }
  // A multi-bucket Arrow batch with a callback (bucket results), a stream with a WriteResult,
  // and a plain batch.
  std::vector<int64_t> arrow_ids;
  for (int64_t id = 100; id < 160; ++id) arrow_ids.push_back(id);
  ArrowArray array;
  ArrowSchema schema;
  producer::MakeArray(arrow_ids, &array);
  producer::MakeSchema(&schema);
  std::mutex am;
  std::vector<fw::WriteCompletion> arrow_done;
  ASSERT_OK(w.WriteArrowBatch(&array, &schema, [&](const fw::WriteCompletion& c) {
    std::lock_guard<std::mutex> g(am);
    arrow_done.push_back(c);
  }));
  EXPECT_EQ(array.release, nullptr);
  EXPECT_EQ(schema.release, nullptr);
  ArrowArrayStream stream;
  producer::MakeStream({{200, 201, 202, 203}, {204, 205, 206}}, &stream);
  fw::WriteResult stream_result;
  ASSERT_OK(w.WriteArrowBatch(&stream, stream_result));
  ArrowArray plain;
  ArrowSchema plain_schema;
  producer::MakeArray({300, 301, 302, 303, 304, 305}, &plain);
  producer::MakeSchema(&plain_schema);
  ASSERT_OK(w.WriteArrowBatchDetached(&plain, &plain_schema));
  for (int64_t id : arrow_ids) expected[id] = "m" + std::to_string(id);
  for (int64_t id = 200; id < 207; ++id) expected[id] = "m" + std::to_string(id);
  for (int64_t id = 300; id < 306; ++id) expected[id] = "m" + std::to_string(id);
  ASSERT_OK(w.Flush());
  ASSERT_OK(r1.Wait(5s));
  fw::WriteCompletion sc;
  ASSERT_OK(stream_result.Wait(5s, &sc));
  EXPECT_TRUE(sc.Ok()) << sc.result.ToString();

  std::vector<Stored> all = ScanAll(t);
  ASSERT_EQ(all.size(), expected.size());
  std::map<int64_t, std::pair<int32_t, int64_t>> where;
  for (const Stored& s : all) {
    int64_t id = s.rec.row.GetInt64(0);
    EXPECT_TRUE(where.emplace(id, std::make_pair(s.bucket, s.rec.offset)).second) << "id " << id << " stored twice";
    ASSERT_TRUE(expected.count(id)) << "unexpected id " << id;
    EXPECT_EQ(s.rec.change_type, "+A");
    if (expected[id].empty()) {
      EXPECT_TRUE(s.rec.row.IsNull(1)) << id;
    } else {
      EXPECT_EQ(s.rec.row.GetString(1), expected[id]) << id;
    }
  }
  {
    std::lock_guard<std::mutex> g(cbs.m);
    EXPECT_EQ(cbs.by_id.size(), 20u);
    for (const auto& [id, e] : cbs.by_id) {
      EXPECT_EQ(e.first, 1) << id;
      EXPECT_TRUE(e.second.Ok()) << e.second.result.ToString();
      EXPECT_EQ(where.at(id), std::make_pair(e.second.bucket, e.second.offset)) << "id " << id;
    }
  }
  std::lock_guard<std::mutex> g(am);
  ASSERT_EQ(arrow_done.size(), 1u) << "one callback for the Arrow batch";
  const fw::WriteCompletion& ac = arrow_done[0];
  ASSERT_TRUE(ac.Ok()) << ac.result.ToString();
  EXPECT_GT(ac.bucket_results.size(), 1u) << "60 keyed rows over 4 buckets span several buckets";
  int64_t total = 0;
  for (const fw::BucketResult& br : ac.bucket_results) {
    EXPECT_TRUE(br.result.Ok()) << br.result.ToString();
    EXPECT_GE(br.base_offset, 0);
    total += br.rows;
    // The batch's rows of this bucket, in batch order, are at base_offset, base_offset+1, ...
    int64_t next = br.base_offset;
    for (int64_t id : arrow_ids) {
      if (where.at(id).first != br.bucket) continue;
      EXPECT_EQ(where.at(id).second, next++) << "Arrow id " << id << " in bucket " << br.bucket;
    }
    EXPECT_EQ(next - br.base_offset, br.rows) << "bucket " << br.bucket;
  }
  EXPECT_EQ(total, static_cast<int64_t>(arrow_ids.size()));
  // The bucket key spread the table over more than one bucket.
  std::set<int32_t> used;
  for (const auto& kv : where) used.insert(kv.second.first);
  EXPECT_GT(used.size(), 1u);
}

TEST_F(ClusterTest, PkTableUpsertDeleteEveryForm) {
  fw::TableDescriptor d;
  d.schema = AllTypes({"id"});
  d.bucket_count = 3;
  fw::Table t = Create("pk", d);
  ASSERT_TRUE(t.HasPrimaryKey());
  fw::UpsertWriter w;
  ASSERT_OK(t.NewUpsert().CreateWriter(w));
  Completions cbs;
  std::vector<fw::WriteResult> results;
  results.reserve(200);
  auto write = [&](int32_t id, int form, bool del, int32_t version) -> fw::Result {
    fw::GenericRow row = del ? Key(id) : RowFor(id, version);
    int64_t tag = int64_t{id} * 10 + version + (del ? 5 : 0);
    switch (form % 3) {
      case 0: return del ? w.Delete(row, cbs.For(tag)) : w.Upsert(row, cbs.For(tag));
      case 1:
        results.emplace_back();
        return del ? w.Delete(row, results.back()) : w.Upsert(row, results.back());
      default: return del ? w.DeleteDetached(row) : w.UpsertDetached(row);
    }
  };
  for (int32_t id = 0; id < 90; ++id) ASSERT_OK(write(id, id, false, 0));
  ASSERT_OK(w.Flush());
  for (int32_t id = 0; id < 30; ++id) ASSERT_OK(write(id, id + 1, false, 1));    // updates
  for (int32_t id = 30; id < 45; ++id) ASSERT_OK(write(id, id + 2, true, 0));    // deletes
  ASSERT_OK(write(1000, 0, true, 0));                                          // delete of an absent key
  ASSERT_OK(w.Flush());

  std::vector<Stored> all = ScanAll(t);
  std::map<int32_t, int64_t> records_in_bucket;
  for (const Stored& s : all) records_in_bucket[s.bucket]++;
  {
    std::lock_guard<std::mutex> g(cbs.m);
    // The absent key's delete changes nothing; when it went out in a batch of its own, the server
    // stored an empty batch, which takes one offset of its bucket (seen under ASan: 53 vs 52).
    const int32_t absent_bucket = cbs.by_id.count(10005) ? cbs.by_id[10005].second.bucket : -1;
    for (const auto& [tag, e] : cbs.by_id) {
      EXPECT_EQ(e.first, 1) << tag;
      EXPECT_TRUE(e.second.Ok()) << tag << ": " << e.second.result.ToString();
      EXPECT_EQ(e.second.offset, -1) << "primary-key writes have no per-record offset";
      EXPECT_GT(e.second.log_end_offset, 0);
      const int64_t offsets = records_in_bucket[e.second.bucket] + (e.second.bucket == absent_bucket ? 1 : 0);
      EXPECT_LE(e.second.log_end_offset, offsets) << tag;
    }
    EXPECT_GE(cbs.by_id.size(), 40u);
  }
  for (fw::WriteResult& r : results) {
    fw::WriteCompletion c;
    ASSERT_OK(r.Wait(5s, &c));
    EXPECT_TRUE(c.Ok()) << c.result.ToString();
  }
  // Lookups: the current state.
  for (int32_t id = 0; id < 95; ++id) {
    fw::GenericRow out;
    bool found = false;
    ASSERT_OK(t.Lookup(Key(id), out, found));
    bool present = id < 90 && !(id >= 30 && id < 45);
    ASSERT_EQ(found, present) << "lookup " << id;
    if (found) {
      ExpectSameRow(out, RowFor(id, id < 30 ? 1 : 0), "lookup " + std::to_string(id));
    }
  }
  // The changelog, per key in offset order.
  std::map<int32_t, std::vector<const Stored*>> per_id;
  std::map<int32_t, int32_t> bucket_of;
  for (const Stored& s : all) {
    int32_t id = static_cast<int32_t>(s.rec.row.GetInt64(0));
    per_id[id].push_back(&s);
    auto [it, fresh] = bucket_of.emplace(id, s.bucket);
    EXPECT_TRUE(fresh || it->second == s.bucket) << "all changes of key " << id << " in one bucket";
  }
  EXPECT_EQ(per_id.size(), 90u) << "no changelog for the absent key";
  for (const auto& [id, recs] : per_id) {
    std::string what = "changelog of " + std::to_string(id);
    if (id < 30) {
      ASSERT_EQ(recs.size(), 3u) << what;
      EXPECT_EQ(recs[0]->rec.change_type, "+I");
      EXPECT_EQ(recs[1]->rec.change_type, "-U");
      EXPECT_EQ(recs[2]->rec.change_type, "+U");
      ExpectSameRow(recs[0]->rec.row, RowFor(id, 0), what);
      ExpectSameRow(recs[1]->rec.row, RowFor(id, 0), what);
      ExpectSameRow(recs[2]->rec.row, RowFor(id, 1), what);
    } else if (id < 45) {
      ASSERT_EQ(recs.size(), 2u) << what;
      EXPECT_EQ(recs[0]->rec.change_type, "+I");
      EXPECT_EQ(recs[1]->rec.change_type, "-D");
      ExpectSameRow(recs[0]->rec.row, RowFor(id, 0), what);
      ExpectSameRow(recs[1]->rec.row, RowFor(id, 0), what);
    } else {
      ASSERT_EQ(recs.size(), 1u) << what;
      EXPECT_EQ(recs[0]->rec.change_type, "+I");
      ExpectSameRow(recs[0]->rec.row, RowFor(id, 0), what);
    }
  }
  ASSERT_OK(w.Close());
}

TEST_F(ClusterTest, PkTablePartialUpdateByNameAndIndex) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("id", fw::DataType::Int(), false)
                 .AddColumn("a", fw::DataType::String())
                 .AddColumn("b", fw::DataType::BigInt())
                 .AddColumn("c", fw::DataType::Double())
                 .SetPrimaryKeys({"id"})
                 .Build();
  d.bucket_count = 2;
  fw::Table t = Create("pk_partial", d);
  auto full = [](int32_t id, const std::string& a, int64_t b, double c) {
    fw::GenericRow r(4);
    r.SetInt32(0, id);
    r.SetString(1, a);
    r.SetInt64(2, b);
    r.SetFloat64(3, c);
    return r;
  };
  std::map<int32_t, fw::GenericRow> model;
  fw::UpsertWriter w;
  ASSERT_OK(t.NewUpsert().CreateWriter(w));
  for (int32_t id = 0; id < 20; ++id) {
    model[id] = full(id, "a" + std::to_string(id), id * 10, id * 0.5);
    ASSERT_OK(w.UpsertDetached(model[id]));
  }
  ASSERT_OK(w.Flush());

  Completions cbs;
  fw::UpsertWriter by_name;
  ASSERT_OK(t.NewUpsert().PartialUpdateByName({"id", "b"}).CreateWriter(by_name));
  for (int32_t id = 0; id < 12; ++id) {
    fw::GenericRow r(4);
    r.SetInt32(0, id);
    if (id % 4 == 0) {
      r.SetNull(2);
      model[id].SetNull(2);
    } else {
      r.SetInt64(2, 1000 + id);
      model[id].SetInt64(2, 1000 + id);
    }
    ASSERT_OK(by_name.Upsert(r, cbs.For(id)));
  }
  ASSERT_OK(by_name.Flush());
  fw::UpsertWriter by_index;
  ASSERT_OK(t.NewUpsert().PartialUpdateByIndex({0, 3}).CreateWriter(by_index));
  fw::WriteResult last;
  for (int32_t id = 8; id < 25; ++id) {
    fw::GenericRow r(4);
    r.SetInt32(0, id);
    r.SetFloat64(3, id * 1.25);
    if (!model.count(id)) {
      model[id] = fw::GenericRow(4);
      model[id].SetInt32(0, id);
      model[id].SetNull(1);
      model[id].SetNull(2);
    }
    model[id].SetFloat64(3, id * 1.25);
    ASSERT_OK(id == 24 ? by_index.Upsert(r, last) : by_index.UpsertDetached(r));
  }
  // A partial-update writer deletes too, with Fluss's partial-delete semantics: the target
  // columns become null, and the row goes only when every non-key column is then null.
  ASSERT_OK(by_index.Delete(Key(19), cbs.For(19)));  // a and b stay: the row stays, c is null
  model[19].SetNull(3);
  ASSERT_OK(by_index.Delete(Key(24), cbs.For(24)));  // inserted by this writer: a, b null: gone
  model.erase(24);
  ASSERT_OK(by_index.Flush());
  ASSERT_OK(last.Wait(5s));
  {
    std::lock_guard<std::mutex> g(cbs.m);
    EXPECT_EQ(cbs.by_id.size(), 14u);
    for (const auto& [id, e] : cbs.by_id) {
      EXPECT_EQ(e.first, 1) << id;
      EXPECT_TRUE(e.second.Ok()) << id << ": " << e.second.result.ToString();
    }
  }
  for (int32_t id = 0; id < 26; ++id) {
    fw::GenericRow out;
    bool found = false;
    ASSERT_OK(t.Lookup(Key(id), out, found));
    auto m = model.find(id);
    ASSERT_EQ(found, m != model.end()) << "lookup " << id;
    if (found) {
      ExpectSameRow(out, m->second, "lookup " + std::to_string(id));
    }
  }
  ASSERT_OK(by_name.Close());
  ASSERT_OK(by_index.Close());
  ASSERT_OK(w.Close());
}

TEST_F(ClusterTest, ReadbackErrors) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder().AddColumn("id", fw::DataType::Int(), false).Build();
  d.bucket_count = 2;
  fw::Table t = Create("log_err", d);
  std::vector<fw::ScannedRow> rows;
  EXPECT_FALSE(t.Scan(2, 0, rows).Ok());
  fw::GenericRow out;
  bool found = true;
  fw::Result r = t.Lookup(Key(1), out, found);
  EXPECT_EQ(r.error_code, static_cast<int32_t>(fw::ClientCode::Unsupported)) << r.ToString();
  EXPECT_FALSE(found);
}

}  // namespace
