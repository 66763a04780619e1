// test_partitions.cpp: partitioned tables through the C++ API, on the embedded engine and on a
// real Fluss 0.9.1 cluster: partition DDL (create, list, drop; exists / ignore; bad specs; a table
// without partitions), rows routed by value with callbacks into three partitions (the
// completion's partition is the row's value; read back per partition), create on write turned
// off (PARTITION_NOT_EXISTS once per callback, the other partition unaffected), one Arrow batch
// across partitions (bucket results name them), a partitioned primary-key table (upsert, delete,
// lookup with the whole key), and partition values refused synchronously.
//
// Every TEST_P runs twice: Embedded/... (always registered) and Cluster/... (registered by
// tests-cpp/CMakeLists.txt as cluster/Cluster/... only when FLUSS_BOOTSTRAP_SERVERS was set at
// configure time; a Cluster test run without the variable fails, it never skips). The TEST_Fs
// below use the embedded engine only (fault injection per partition, the callback path's
// allocations, WriteCompletion's ownership of the partition name).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <unistd.h>

#include "backend_test.h"

namespace {

// The Fluss codes of partitions.
constexpr int32_t kPartitionNotExists = 36;
constexpr int32_t kTableNotPartitioned = 37;
constexpr int32_t kPartitionAlreadyExists = 42;

// A log table partitioned by dt (STRING): id BIGINT NOT NULL, dt STRING, msg STRING; 3 buckets
// keyed by id.
fw::TableDescriptor LogDescriptor(int32_t buckets = 3) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("id", fw::DataType::BigInt(), false)
                 .AddColumn("dt", fw::DataType::String())
                 .AddColumn("msg", fw::DataType::String())
                 .Build();
  d.bucket_count = buckets;
  d.bucket_keys = {"id"};
  d.partition_keys = {"dt"};
  return d;
}

// A row of LogDescriptor's table; `dt` nullptr: NULL.
fw::GenericRow LogRow(int64_t id, const char* dt, const std::string& msg = "m") {
  fw::GenericRow r(3);
  r.SetInt64(0, id);
  if (dt == nullptr) {
    r.SetNull(1);
  } else {
    r.SetString(1, dt);
  }
  r.SetString(2, msg);
  return r;
}

std::map<std::string, std::string> Spec(const std::string& dt) { return {{"dt", dt}}; }

std::vector<std::string> Names(const std::vector<fw::PartitionInfo>& parts) {
  std::vector<std::string> out;
  for (const auto& p : parts) out.push_back(p.partition_name);
  return out;
}

// Every call of every callback, by operation id (a copy of each completion: the copy owns the
// table and partition names).
struct Seen {
  std::mutex m;
  std::map<int64_t, std::vector<fw::WriteCompletion>> by_id;

  // Captures `this` and an integer: stored inline.
  fw::WriteCallback For(int64_t id) {
    return [this, id](const fw::WriteCompletion& c) {
      std::lock_guard<std::mutex> g(m);
      by_id[id].push_back(c);
    };
  }
  size_t Calls() {
    std::lock_guard<std::mutex> g(m);
    size_t n = 0;
    for (const auto& [id, v] : by_id) n += v.size();
    return n;
  }
};

// ===== a hand-written Arrow C Data Interface batch of LogDescriptor's table =====

struct BatchData {
  std::vector<int64_t> ids;
  std::vector<uint8_t> dt_valid;
  std::vector<int32_t> dt_offsets{0};
  std::string dt_chars;
  std::vector<int32_t> msg_offsets{0};
  std::string msg_chars;
  const void* id_buffers[2];
  const void* dt_buffers[3];
  const void* msg_buffers[3];
  const void* struct_buffers[1];
  ArrowArray id_child;
  ArrowArray dt_child;
  ArrowArray msg_child;
  ArrowArray* children[3];
};

void ReleaseChild(ArrowArray* a) { a->release = nullptr; }
void ReleaseBatch(ArrowArray* a) {
  delete static_cast<BatchData*>(a->private_data);
  a->release = nullptr;
}

// A struct array {id: int64, dt: utf8 (nullopt: null), msg: utf8 "m<id>"}.
void MakeBatch(const std::vector<int64_t>& ids, const std::vector<std::optional<std::string>>& dts, ArrowArray* out) {
  auto* d = new BatchData();
  d->ids = ids;
  d->dt_valid.assign((ids.size() + 7) / 8, 0);
  int64_t nulls = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (dts[i]) {
      d->dt_valid[i / 8] = static_cast<uint8_t>(d->dt_valid[i / 8] | (1u << (i % 8)));
      d->dt_chars += *dts[i];
    } else {
      ++nulls;
    }
    d->dt_offsets.push_back(static_cast<int32_t>(d->dt_chars.size()));
    d->msg_chars += "m" + std::to_string(ids[i]);
    d->msg_offsets.push_back(static_cast<int32_t>(d->msg_chars.size()));
  }
  d->id_buffers[0] = nullptr;
  d->id_buffers[1] = d->ids.data();
  d->dt_buffers[0] = nulls > 0 ? d->dt_valid.data() : nullptr;
  d->dt_buffers[1] = d->dt_offsets.data();
  d->dt_buffers[2] = d->dt_chars.data();
  d->msg_buffers[0] = nullptr;
  d->msg_buffers[1] = d->msg_offsets.data();
  d->msg_buffers[2] = d->msg_chars.data();
  d->struct_buffers[0] = nullptr;
  const auto n = static_cast<int64_t>(ids.size());
  d->id_child = ArrowArray{n, 0, 0, 2, 0, d->id_buffers, nullptr, nullptr, ReleaseChild, nullptr};
  d->dt_child = ArrowArray{n, nulls, 0, 3, 0, d->dt_buffers, nullptr, nullptr, ReleaseChild, nullptr};
  d->msg_child = ArrowArray{n, 0, 0, 3, 0, d->msg_buffers, nullptr, nullptr, ReleaseChild, nullptr};
  d->children[0] = &d->id_child;
  d->children[1] = &d->dt_child;
  d->children[2] = &d->msg_child;
  *out = ArrowArray{n, 0, 0, 1, 3, d->struct_buffers, d->children, nullptr, ReleaseBatch, d};
}

struct SchemaData {
  ArrowSchema id;
  ArrowSchema dt;
  ArrowSchema msg;
  ArrowSchema* children[3];
};

void ReleaseChildSchema(ArrowSchema* s) { s->release = nullptr; }
void ReleaseSchema(ArrowSchema* s) {
  delete static_cast<SchemaData*>(s->private_data);
  s->release = nullptr;
}

void MakeSchema(ArrowSchema* out) {
  auto* d = new SchemaData();
  d->id = ArrowSchema{"l", "id", nullptr, 0, 0, nullptr, nullptr, ReleaseChildSchema, nullptr};
  d->dt = ArrowSchema{"u", "dt", nullptr, ARROW_FLAG_NULLABLE, 0, nullptr, nullptr, ReleaseChildSchema, nullptr};
  d->msg = ArrowSchema{"u", "msg", nullptr, ARROW_FLAG_NULLABLE, 0, nullptr, nullptr, ReleaseChildSchema, nullptr};
  d->children[0] = &d->id;
  d->children[1] = &d->dt;
  d->children[2] = &d->msg;
  *out = ArrowSchema{"+s", "", nullptr, 0, 3, d->children, nullptr, ReleaseSchema, d};
}

// ===== the fixture: one backend per instantiation =====

class PartitionTest : public BackendTest {};

}  // namespace

INSTANTIATE_TEST_SUITE_P(Embedded, PartitionTest, ::testing::Values(Backend::Embedded), BackendName);
INSTANTIATE_TEST_SUITE_P(Cluster, PartitionTest, ::testing::Values(Backend::Cluster), BackendName);

// ===== DDL =====

TEST_P(PartitionTest, CreateListDropPartitions) {
  fw::TablePath p = Create("pddl", LogDescriptor());
  fw::TableInfo info;
  ASSERT_OK(admin.GetTableInfo(p, info));
  EXPECT_EQ(info.descriptor.partition_keys, std::vector<std::string>{"dt"});
  std::vector<fw::PartitionInfo> parts{fw::PartitionInfo{}};
  ASSERT_OK(admin.ListPartitions(p, parts));
  EXPECT_TRUE(parts.empty());

  ASSERT_OK(admin.CreatePartition(p, Spec("2026-12-04")));
  ASSERT_OK(admin.CreatePartition(p, Spec("2026-12-03"), false));
  fw::Result r = admin.CreatePartition(p, Spec("2026-12-03"), false);
  EXPECT_EQ(r.error_code, kPartitionAlreadyExists) << r.ToString();
  EXPECT_EQ(r.CodeName(), "PARTITION_ALREADY_EXISTS");
  ASSERT_OK(admin.CreatePartition(p, Spec("2026-12-03"), true));

  ASSERT_OK(admin.ListPartitions(p, parts));
  ASSERT_EQ(Names(parts), (std::vector<std::string>{"2026-12-03", "2026-12-04"})) << "ordered by name";
  EXPECT_GE(parts[0].partition_id, 0);
  EXPECT_NE(parts[0].partition_id, parts[1].partition_id);
  EXPECT_EQ(parts[0].spec, Spec("2026-12-03"));
  EXPECT_EQ(parts[1].spec, Spec("2026-12-04"));

  // Bad specs are InvalidTable naming the key at fault, before anything is sent.
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> bad = {
      {{{"day", "x"}}, "\"day\""},
      {{{"dt", "a b"}}, "\"dt\""},
      {{}, "\"dt\""},
      {{{"dt", "x"}, {"msg", "y"}}, "\"msg\""},
  };
  for (const auto& [spec, names] : bad) {
    r = admin.CreatePartition(p, spec);
    EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidTable)) << names << ": " << r.ToString();
    EXPECT_NE(r.error_message.find(names), std::string::npos) << r.ToString();
    r = admin.DropPartition(p, spec);
    EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidTable)) << names << ": " << r.ToString();
  }
  ASSERT_OK(admin.ListPartitions(p, parts));
  EXPECT_EQ(parts.size(), 2u) << "a bad spec created nothing";

  ASSERT_OK(admin.DropPartition(p, Spec("2026-12-04")));
  r = admin.DropPartition(p, Spec("2026-12-04"), false);
  EXPECT_EQ(r.error_code, kPartitionNotExists) << r.ToString();
  EXPECT_EQ(r.CodeName(), "PARTITION_NOT_EXISTS");
  ASSERT_OK(admin.DropPartition(p, Spec("2026-12-04"), true));
  ASSERT_OK(admin.ListPartitions(p, parts));
  ASSERT_EQ(Names(parts), std::vector<std::string>{"2026-12-03"});

  // A recreated partition gets a new id.
  const int64_t old = parts[0].partition_id;
  ASSERT_OK(admin.DropPartition(p, Spec("2026-12-03")));
  ASSERT_OK(admin.CreatePartition(p, Spec("2026-12-03")));
  ASSERT_OK(admin.ListPartitions(p, parts));
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_NE(parts[0].partition_id, old);

  // A missing table.
  parts.assign(1, fw::PartitionInfo{});
  EXPECT_FALSE(admin.ListPartitions(fw::TablePath(database, Unique("nosuch")), parts).Ok());
  EXPECT_TRUE(parts.empty()) << "out is emptied on error";
}

TEST_P(PartitionTest, TableWithoutPartitionKeys) {
  fw::TableDescriptor d = LogDescriptor(1);
  d.partition_keys.clear();
  fw::TablePath p = Create("pplain", d);
  std::vector<fw::PartitionInfo> parts;
  fw::Result r = admin.ListPartitions(p, parts);
  EXPECT_EQ(r.error_code, kTableNotPartitioned) << r.ToString();
  r = admin.CreatePartition(p, Spec("x"));
  EXPECT_EQ(r.error_code, kTableNotPartitioned) << r.ToString();
  r = admin.DropPartition(p, Spec("x"), true);
  EXPECT_EQ(r.error_code, kTableNotPartitioned) << r.ToString();
  fw::Table t = Get(p);
  std::vector<fw::ScannedRow> rows;
  r = t.ScanPartition("x", 0, 0, rows);
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidTable)) << r.ToString();

  // Completions of a table without partitions: no partition name, partition id -1.
  fw::AppendWriter w = AppendWriterFor(t);
  Seen seen;
  ASSERT_OK(w.Append(LogRow(1, "x"), seen.For(1)));
  fw::WriteResult wr;
  ASSERT_OK(w.Append(LogRow(2, "y"), wr));
  ASSERT_OK(w.Flush());
  fw::WriteCompletion c;
  ASSERT_OK(wr.Wait(&c));
  EXPECT_TRUE(c.partition.empty());
  EXPECT_EQ(c.partition_id, -1);
  ASSERT_EQ(seen.by_id[1].size(), 1u);
  const fw::WriteCompletion& cb = seen.by_id[1][0];
  EXPECT_TRUE(cb.Ok()) << cb.result.ToString();
  EXPECT_TRUE(cb.partition.empty());
  EXPECT_EQ(cb.partition_id, -1);
  EXPECT_EQ(cb.table, p.ToString());
}

TEST_P(PartitionTest, DescriptorRules) {
  // partition_keys reach the server: a DECIMAL partition key is refused; so is a primary key
  // without the partition column.
  fw::TableDescriptor dec;
  dec.schema = fw::Schema::NewBuilder()
                   .AddColumn("k", fw::DataType::Decimal(5, 2))
                   .AddColumn("v", fw::DataType::Int())
                   .Build();
  dec.partition_keys = {"k"};
  fw::Result r = admin.CreateTable(fw::TablePath(database, Unique("pdec")), dec);
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidTable)) << r.ToString();

  fw::TableDescriptor pk;
  pk.schema = fw::Schema::NewBuilder()
                  .AddColumn("id", fw::DataType::BigInt(), false)
                  .AddColumn("dt", fw::DataType::String())
                  .SetPrimaryKeys({"id"})
                  .Build();
  pk.partition_keys = {"dt"};
  r = admin.CreateTable(fw::TablePath(database, Unique("ppkbad")), pk);
  EXPECT_FALSE(r.Ok());
  EXPECT_NE(r.error_message.find("primary key"), std::string::npos) << r.ToString();

  fw::TableDescriptor unknown = LogDescriptor();
  unknown.partition_keys = {"nope"};
  r = admin.CreateTable(fw::TablePath(database, Unique("pnope")), unknown);
  EXPECT_FALSE(r.Ok());
  EXPECT_NE(r.error_message.find("nope"), std::string::npos) << r.ToString();
}

// ===== writes =====

// Rows for three partitions (two created beforehand, one created by the writer) with callbacks,
// one WriteResult and a shared callback; each completion names the row's partition; every row is
// read back from its partition at the place its callback reported, once.
TEST_P(PartitionTest, RowsRoutedToThreePartitionsWithCallbacks) {
  fw::TablePath p = Create("proute", LogDescriptor());
  ASSERT_OK(admin.CreatePartition(p, Spec("2026-12-01")));
  ASSERT_OK(admin.CreatePartition(p, Spec("2026-12-02")));
  fw::Table t = Get(p);
  fw::AppendWriter w = AppendWriterFor(t);
  const char* days[] = {"2026-12-01", "2026-12-02", "2026-12-03"};
  constexpr int64_t kN = 600;
  Seen seen;
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_OK(w.Append(LogRow(i, days[i % 3], "m" + std::to_string(i)), seen.For(i)));
  }
  // The other two forms: a WriteResult and a shared callback.
  fw::WriteResult wr;
  ASSERT_OK(w.Append(LogRow(kN, days[2]), wr));
  std::atomic<int> shared_calls{0};
  fw::SharedWriteCallback shared([&](const fw::WriteCompletion& c) {
    if (c.Ok() && c.partition == days[1] && c.partition_id >= 0) shared_calls++;
  });
  for (int64_t i = kN + 1; i < kN + 11; ++i) ASSERT_OK(w.Append(LogRow(i, days[1]), shared));
  ASSERT_OK(w.Flush());

  EXPECT_EQ(w.Stats().open_partitions, 3u) << "a lane per partition written to (idle for less than 60 s)";
  fw::WriteCompletion owned;
  ASSERT_OK(wr.Wait(&owned));
  EXPECT_EQ(owned.partition, days[2]);
  EXPECT_EQ(shared_calls.load(), 10);

  std::vector<fw::PartitionInfo> parts;
  ASSERT_OK(admin.ListPartitions(p, parts));
  ASSERT_EQ(Names(parts), (std::vector<std::string>{days[0], days[1], days[2]})) << "the writer created 2026-12-03";
  std::map<std::string, int64_t> ids;
  for (const auto& pi : parts) ids[pi.partition_name] = pi.partition_id;
  EXPECT_EQ(owned.partition_id, ids[days[2]]);

  // Where each record's callback says it went.
  std::map<std::tuple<std::string, int32_t, int64_t>, int64_t> at;
  ASSERT_EQ(seen.by_id.size(), static_cast<size_t>(kN));
  for (const auto& [id, calls] : seen.by_id) {
    ASSERT_EQ(calls.size(), 1u) << "id " << id << ": exactly one callback";
    const fw::WriteCompletion& c = calls[0];
    ASSERT_TRUE(c.Ok()) << id << ": " << c.result.ToString();
    EXPECT_EQ(c.partition, days[id % 3]) << "id " << id;
    EXPECT_EQ(c.partition_id, ids[std::string(c.partition)]) << "id " << id;
    EXPECT_EQ(c.table, p.ToString());
    EXPECT_GE(c.offset, 0);
    EXPECT_TRUE(at.emplace(std::make_tuple(std::string(c.partition), c.bucket, c.offset), id).second)
        << "two callbacks report one place";
  }
  // Read back every bucket of every partition: each row is in the partition of its dt, at its
  // reported place.
  size_t total = 0;
  for (const char* day : days) {
    for (const auto& [b, rec] : ScanAll(t, day)) {
      EXPECT_EQ(rec.change_type, "+A");
      EXPECT_EQ(rec.row.GetString(1), day);
      const int64_t id = rec.row.GetInt64(0);
      if (id < kN) {
        auto it = at.find(std::make_tuple(std::string(day), b, rec.offset));
        ASSERT_NE(it, at.end()) << day << " bucket " << b << " offset " << rec.offset << ": no callback reported it";
        EXPECT_EQ(it->second, id);
        at.erase(it);
      }
      ++total;
    }
  }
  EXPECT_EQ(total, static_cast<size_t>(kN + 11));
  EXPECT_TRUE(at.empty()) << at.size() << " reported places hold nothing";

  std::vector<fw::ScannedRow> rows;
  fw::Result r = t.ScanPartition("2027-01-01", 0, 0, rows);
  EXPECT_EQ(r.error_code, kPartitionNotExists) << r.ToString();
  r = t.Scan(0, 0, rows);
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidTable)) << "Scan of a partitioned table: " << r.ToString();
  ASSERT_OK(w.Close());
}

// With create on write off, rows for a missing partition complete with PARTITION_NOT_EXISTS,
// exactly once each; rows for an existing partition are unaffected; once the partition exists the
// same writer writes to it.
TEST_P(PartitionTest, CreateOnWriteOff) {
  ASSERT_NO_FATAL_FAILURE(Open({{"client.writer.dynamic-create-partition.enabled", "false"}}));
  fw::TablePath p = Create("pnocreate", LogDescriptor());
  ASSERT_OK(admin.CreatePartition(p, Spec("here")));
  fw::Table t = Get(p);
  fw::AppendWriter w = AppendWriterFor(t);
  Seen seen;
  constexpr int64_t kN = 200;
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_OK(w.Append(LogRow(i, i % 2 == 0 ? "here" : "missing"), seen.For(i)));
  }
  ASSERT_OK(w.Flush(60s));
  ASSERT_EQ(seen.by_id.size(), static_cast<size_t>(kN));
  for (const auto& [id, calls] : seen.by_id) {
    ASSERT_EQ(calls.size(), 1u) << "id " << id << ": exactly one callback";
    const fw::WriteCompletion& c = calls[0];
    if (id % 2 == 0) {
      EXPECT_TRUE(c.Ok()) << id << ": " << c.result.ToString();
      EXPECT_EQ(c.partition, "here");
      EXPECT_GE(c.partition_id, 0);
    } else {
      EXPECT_EQ(c.result.error_code, kPartitionNotExists) << id << ": " << c.result.ToString();
      EXPECT_EQ(c.result.CodeName(), "PARTITION_NOT_EXISTS");
      EXPECT_EQ(c.partition, "missing");
      EXPECT_EQ(c.partition_id, -1) << "a partition that does not exist has no id";
    }
  }
  std::vector<fw::PartitionInfo> parts;
  ASSERT_OK(admin.ListPartitions(p, parts));
  EXPECT_EQ(Names(parts), std::vector<std::string>{"here"}) << "nothing created the missing partition";
  EXPECT_EQ(ScanAll(t, "here").size(), static_cast<size_t>(kN / 2));

  // Once the partition exists, the same writer writes to it (the lane re-checks every few seconds).
  ASSERT_OK(admin.CreatePartition(p, Spec("missing")));
  const auto deadline = std::chrono::steady_clock::now() + 40s;
  for (;;) {
    fw::WriteResult wr;
    ASSERT_OK(w.Append(LogRow(1000, "missing"), wr));
    fw::WriteCompletion c;
    fw::Result outcome = wr.Wait(60s, &c);  // the operation's outcome (or Timeout)
    if (outcome.Ok()) {
      EXPECT_EQ(c.partition, "missing");
      EXPECT_GE(c.partition_id, 0);
      break;
    }
    ASSERT_EQ(outcome.error_code, kPartitionNotExists) << outcome.ToString();
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the created partition was never written";
    std::this_thread::sleep_for(500ms);
  }
  ASSERT_OK(w.Close());
}

// One Arrow batch whose rows go to three partitions and several buckets: one callback, its
// bucket results name each part's partition, and each part is stored where it says.
TEST_P(PartitionTest, ArrowBatchAcrossPartitions) {
  fw::TablePath p = Create("parrow", LogDescriptor());
  fw::Table t = Get(p);
  fw::AppendWriter w = AppendWriterFor(t);
  const std::vector<std::string> days = {"2026-12-01", "2026-12-02", "2026-12-03"};
  std::vector<int64_t> ids;
  std::vector<std::optional<std::string>> dts;
  for (int64_t i = 0; i < 30; ++i) {
    ids.push_back(i);
    dts.emplace_back(days[static_cast<size_t>(i) % 3]);
  }
  ArrowArray array;
  ArrowSchema schema;
  MakeBatch(ids, dts, &array);
  MakeSchema(&schema);
  Seen seen;
  ASSERT_OK(w.WriteArrowBatch(&array, &schema, seen.For(0)));
  EXPECT_EQ(array.release, nullptr) << "moved from";
  ASSERT_OK(w.Flush());
  ASSERT_EQ(seen.by_id[0].size(), 1u) << "one callback for the batch";
  const fw::WriteCompletion& c = seen.by_id[0][0];
  ASSERT_TRUE(c.Ok()) << c.result.ToString();
  ASSERT_FALSE(c.bucket_results.empty());
  // The completion names the part of the batch's first row (id 0, in days[0]); the bucket
  // results are ordered by (partition, bucket).
  EXPECT_EQ(c.partition, days[0]);
  EXPECT_GE(c.partition_id, 0);
  std::set<std::string> named;
  int64_t rows = 0;
  std::set<int64_t> stored;
  bool first_row_seen = false;
  for (size_t i = 0; i < c.bucket_results.size(); ++i) {
    const fw::BucketResult& br = c.bucket_results[i];
    if (i > 0) {
      const fw::BucketResult& prev = c.bucket_results[i - 1];
      EXPECT_LT(std::make_pair(prev.partition, prev.bucket), std::make_pair(br.partition, br.bucket));
    }
    ASSERT_TRUE(br.result.Ok()) << br.partition << "/" << br.bucket << ": " << br.result.ToString();
    named.insert(br.partition);
    rows += br.rows;
    ASSERT_GE(br.base_offset, 0);
    std::vector<fw::ScannedRow> got;
    ASSERT_OK(t.ScanPartition(br.partition, br.bucket, br.base_offset, got));
    ASSERT_GE(got.size(), static_cast<size_t>(br.rows));
    for (int64_t k = 0; k < br.rows; ++k) {
      const fw::ScannedRow& rec = got[static_cast<size_t>(k)];
      EXPECT_EQ(rec.offset, br.base_offset + k);
      EXPECT_EQ(rec.row.GetString(1), br.partition) << "a row of this part is in another partition";
      EXPECT_TRUE(stored.insert(rec.row.GetInt64(0)).second) << "id " << rec.row.GetInt64(0) << " twice";
      if (rec.row.GetInt64(0) == 0) {
        first_row_seen = true;
        EXPECT_EQ(br.partition, c.partition);
        EXPECT_EQ(br.bucket, c.bucket) << "the completion's bucket is the first row's";
        EXPECT_EQ(c.offset, br.base_offset);
      }
    }
  }
  EXPECT_TRUE(first_row_seen);
  EXPECT_EQ(named, std::set<std::string>(days.begin(), days.end()));
  EXPECT_EQ(rows, 30);
  EXPECT_EQ(stored.size(), 30u);
  ASSERT_OK(w.Close());
}

// A primary-key table partitioned by (region, day): upserts and a delete with callbacks naming
// their partitions, lookups with the whole key, the changelog of one partition.
TEST_P(PartitionTest, PrimaryKeyTableUpsertDeleteLookup) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("region", fw::DataType::String(), false)
                 .AddColumn("day", fw::DataType::Date(), false)
                 .AddColumn("id", fw::DataType::Int(), false)
                 .AddColumn("v", fw::DataType::String())
                 .SetPrimaryKeys({"region", "day", "id"})
                 .Build();
  d.bucket_count = 2;
  d.partition_keys = {"region", "day"};
  fw::TablePath p = Create("ppk", d);
  fw::Table t = Get(p);
  ASSERT_TRUE(t.HasPrimaryKey());
  fw::UpsertWriter w;
  ASSERT_OK(t.NewUpsert().CreateWriter(w));
  const char* regions[] = {"eu", "us"};
  const int32_t days[] = {20425, 20426};  // 2025-12-03, 2025-12-04
  auto name = [](const char* region, int32_t day) {
    return std::string(region) + (day == 20425 ? "$2025-12-03" : "$2025-12-04");
  };
  auto value = [](const char* region, int32_t day, int32_t id) {
    return std::string(region) + "-" + std::to_string(day) + "-" + std::to_string(id);
  };
  Seen seen;
  std::map<int64_t, std::string> want_partition;
  int64_t op = 0;
  for (const char* r : regions) {
    for (int32_t day : days) {
      for (int32_t id = 0; id < 20; ++id) {
        fw::GenericRow row(4);
        row.SetString(0, r);
        row.SetDate(1, day);
        row.SetInt32(2, id);
        row.SetString(3, value(r, day, id));
        want_partition[op] = name(r, day);
        ASSERT_OK(w.Upsert(row, seen.For(op++)));
      }
    }
  }
  fw::GenericRow key(3);
  key.SetString(0, "eu");
  key.SetDate(1, 20425);
  key.SetInt32(2, 7);
  want_partition[op] = "eu$2025-12-03";
  ASSERT_OK(w.Delete(key, seen.For(op++)));
  ASSERT_OK(w.Flush());

  ASSERT_EQ(seen.by_id.size(), static_cast<size_t>(op));
  for (const auto& [id, calls] : seen.by_id) {
    ASSERT_EQ(calls.size(), 1u) << "op " << id;
    const fw::WriteCompletion& c = calls[0];
    ASSERT_TRUE(c.Ok()) << id << ": " << c.result.ToString();
    EXPECT_EQ(c.partition, want_partition[id]) << "op " << id;
    EXPECT_GE(c.partition_id, 0);
    EXPECT_EQ(c.offset, -1) << "primary-key writes have no per-record offset";
    EXPECT_GE(c.log_end_offset, 1);
  }
  std::vector<fw::PartitionInfo> parts;
  ASSERT_OK(admin.ListPartitions(p, parts));
  ASSERT_EQ(Names(parts),
            (std::vector<std::string>{"eu$2025-12-03", "eu$2025-12-04", "us$2025-12-03", "us$2025-12-04"}));
  EXPECT_EQ(parts[0].spec, (std::map<std::string, std::string>{{"region", "eu"}, {"day", "2025-12-03"}}));

  for (const char* r : regions) {
    for (int32_t day : days) {
      for (int32_t id : {0, 7, 19}) {
        fw::GenericRow k(3);
        k.SetString(0, r);
        k.SetDate(1, day);
        k.SetInt32(2, id);
        fw::GenericRow got;
        bool found = true;
        ASSERT_OK(t.Lookup(k, got, found));
        if (std::string(r) == "eu" && day == 20425 && id == 7) {
          EXPECT_FALSE(found) << "deleted";
          EXPECT_EQ(got.FieldCount(), 0u);
        } else {
          ASSERT_TRUE(found) << name(r, day) << " id " << id;
          EXPECT_EQ(got.GetString(3), value(r, day, id));
          EXPECT_EQ(got.GetString(0), r);
        }
      }
    }
  }
  // A partition that does not exist holds no key.
  fw::GenericRow mars(3);
  mars.SetString(0, "mars");
  mars.SetDate(1, 1);
  mars.SetInt32(2, 1);
  fw::GenericRow got;
  bool found = true;
  ASSERT_OK(t.Lookup(mars, got, found));
  EXPECT_FALSE(found);

  // The changelog of one partition: 20 inserts and one delete.
  int inserts = 0;
  int deletes = 0;
  for (const auto& [b, rec] : ScanAll(t, "eu$2025-12-03")) {
    inserts += rec.change_type == "+I";
    deletes += rec.change_type == "-D";
    EXPECT_EQ(rec.row.GetString(0), "eu");
  }
  EXPECT_EQ(inserts, 20);
  EXPECT_EQ(deletes, 1);
  ASSERT_OK(w.Close());
}

// Values that cannot name a partition are refused synchronously (InvalidRow naming the column):
// the callback never runs and is destroyed before the call returns, nothing is accepted, no
// partition is created.
TEST_P(PartitionTest, BadPartitionValuesRefusedSynchronously) {
  fw::TablePath p = Create("pbad", LogDescriptor());
  fw::Table t = Get(p);
  fw::AppendWriter w = AppendWriterFor(t);
  const std::string too_long(201, 'x');
  const char* bad[] = {nullptr, "a b", "", "__sys", too_long.c_str(), "caf\xc3\xa9", "a/b"};
  std::atomic<int> ran{0};
  for (const char* dt : bad) {
    auto destroyed = std::make_shared<std::atomic<int>>(0);
    struct Probe {
      std::shared_ptr<std::atomic<int>> destroyed;
      std::atomic<int>* ran;
      Probe(std::shared_ptr<std::atomic<int>> d, std::atomic<int>* r) : destroyed(std::move(d)), ran(r) {}
      Probe(Probe&& o) noexcept : destroyed(std::move(o.destroyed)), ran(o.ran) {}
      ~Probe() {
        if (destroyed) destroyed->fetch_add(1);
      }
      void operator()(const fw::WriteCompletion&) const { ran->fetch_add(1); }
    };
    const std::string what = dt == nullptr ? "NULL" : "\"" + std::string(dt) + "\"";
    fw::Result r = w.Append(LogRow(1, dt), Probe(destroyed, &ran));
    EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidRow)) << what << ": " << r.ToString();
    EXPECT_NE(r.error_message.find("\"dt\""), std::string::npos) << what << ": " << r.ToString();
    EXPECT_EQ(destroyed->load(), 1) << what << ": the callable is destroyed before the call returns";
    fw::WriteResult wr;
    r = w.Append(LogRow(2, dt), wr);
    EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidRow)) << what;
    EXPECT_FALSE(wr.Valid());
    EXPECT_EQ(w.AppendDetached(LogRow(3, dt)).error_code, Code(fw::ClientCode::InvalidRow)) << what;
  }
  // An Arrow batch with one bad row: nothing of it is accepted.
  ArrowArray array;
  ArrowSchema schema;
  MakeBatch({1, 2, 3}, {std::string("ok"), std::nullopt, std::string("ok2")}, &array);
  MakeSchema(&schema);
  fw::Result r = w.WriteArrowBatch(&array, &schema, [&ran](const fw::WriteCompletion&) { ran++; });
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidRow)) << r.ToString();
  EXPECT_NE(r.error_message.find("row 1"), std::string::npos) << r.ToString();
  EXPECT_EQ(w.Stats().pending_callbacks, 0u);
  ASSERT_OK(w.Flush());
  EXPECT_EQ(ran.load(), 0) << "a refused write's callback ran";
  std::vector<fw::PartitionInfo> parts;
  ASSERT_OK(admin.ListPartitions(p, parts));
  EXPECT_TRUE(parts.empty()) << "a refused row created partition " << Names(parts)[0];
  // A good row still works after the refusals.
  Seen seen;
  ASSERT_OK(w.Append(LogRow(9, "ok"), seen.For(9)));
  ASSERT_OK(w.Flush());
  ASSERT_EQ(seen.by_id[9].size(), 1u);
  EXPECT_TRUE(seen.by_id[9][0].Ok()) << seen.by_id[9][0].result.ToString();
  ASSERT_OK(w.Close());
}

// ===== the embedded engine only =====

namespace {

class EmbeddedPartitionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fw::Configuration config;
    config.bootstrap_servers = "embedded";
    config.Set("client.writer.batch-timeout", "5ms");
    ASSERT_OK(fw::Connection::Create(config, conn));
    ASSERT_OK(conn.GetAdmin(admin));
  }

  fw::TablePath Create(const std::string& name, const fw::TableDescriptor& d) {
    fw::TablePath p("fluss", name);
    fw::Result r = admin.CreateTable(p, d);
    EXPECT_TRUE(r.Ok()) << r.ToString();
    return p;
  }

  fw::Connection conn;
  fw::Admin admin;
};

}  // namespace

// testing::InjectFault with a partition hits that partition's bucket only; testing::ScanPartition
// and HighWatermarkPartition read one partition of the engine.
TEST_F(EmbeddedPartitionTest, FaultsAndReadBackPerPartition) {
  fw::TablePath p = Create("pfault", LogDescriptor(1));
  ASSERT_OK(admin.CreatePartition(p, Spec("a")));
  ASSERT_OK(admin.CreatePartition(p, Spec("b")));
  ASSERT_OK(fw::testing::InjectFault(conn, p, "a", 0, fw::testing::Fault::Error(38, "rejected in a")));
  fw::Table t;
  ASSERT_OK(conn.GetTable(p, t));
  fw::AppendWriter w;
  ASSERT_OK(t.NewAppend().CreateWriter(w));
  Seen seen;
  for (int64_t i = 0; i < 10; ++i) ASSERT_OK(w.Append(LogRow(i, i < 5 ? "a" : "b"), seen.For(i)));
  ASSERT_OK(w.Flush());
  int failed_in_a = 0;
  int ok_in_a = 0;
  for (const auto& [id, calls] : seen.by_id) {
    ASSERT_EQ(calls.size(), 1u);
    const fw::WriteCompletion& c = calls[0];
    if (id < 5) {
      EXPECT_EQ(c.partition, "a");
      if (c.Ok()) {
        ok_in_a++;
      } else {
        EXPECT_EQ(c.result.error_code, 38) << c.result.ToString();
        EXPECT_NE(c.result.error_message.find("rejected in a"), std::string::npos);
        failed_in_a++;
      }
    } else {
      EXPECT_EQ(c.partition, "b");
      EXPECT_TRUE(c.Ok()) << "partition b has no fault: " << c.result.ToString();
    }
  }
  EXPECT_GE(failed_in_a, 1) << "the fault of partition a hit nothing";
  std::vector<fw::testing::ScannedRow> rows;
  ASSERT_OK(fw::testing::ScanPartition(conn, p, "a", 0, 0, rows));
  EXPECT_EQ(rows.size(), static_cast<size_t>(ok_in_a));
  for (const auto& r : rows) EXPECT_EQ(r.row.GetString(1), "a");
  ASSERT_OK(fw::testing::ScanPartition(conn, p, "b", 0, 0, rows));
  EXPECT_EQ(rows.size(), 5u);
  for (const auto& r : rows) EXPECT_EQ(r.row.GetString(1), "b");
  int64_t hw = -1;
  ASSERT_OK(fw::testing::HighWatermarkPartition(conn, p, "b", 0, hw));
  EXPECT_EQ(hw, 5);
  ASSERT_OK(fw::testing::HighWatermarkPartition(conn, p, "a", 0, hw));
  EXPECT_EQ(hw, ok_in_a);
  fw::Result r = fw::testing::ScanPartition(conn, p, "c", 0, 0, rows);
  EXPECT_EQ(r.error_code, kPartitionNotExists) << r.ToString();
  r = fw::testing::HighWatermarkPartition(conn, p, "c", 0, hw);
  EXPECT_EQ(r.error_code, kPartitionNotExists) << r.ToString();
  // The partition-less helpers refuse a partitioned table.
  EXPECT_FALSE(fw::testing::Scan(conn, p, 0, 0, rows).Ok());
  ASSERT_OK(w.Close());
}

// C12 for partitioned tables: a callback's completion, with its table and partition names, costs
// no C++ allocation (the partition name is a view of the library's copy). The name is longer
// than std::string's inline buffer on purpose.
static std::atomic<long> g_allocs{0};
static std::atomic<bool> g_counting{false};
void* operator new(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

TEST_F(EmbeddedPartitionTest, NoCxxAllocationPerCallbackOnAPartitionedTable) {
  fw::TablePath p = Create("pc12", LogDescriptor(1));
  const std::string part = "a-partition-name-longer-than-sso";
  ASSERT_OK(admin.CreatePartition(p, Spec(part)));
  fw::Table t;
  ASSERT_OK(conn.GetTable(p, t));
  fw::AppendWriter w;
  ASSERT_OK(t.NewAppend().CreateWriter(w));
  fw::GenericRow row = LogRow(1, part.c_str());
  // Warm up the partition's lane (created by its first row).
  fw::WriteResult first;
  ASSERT_OK(w.Append(row, first));
  ASSERT_OK(first.Wait());
  std::atomic<int> n{0};
  constexpr int kN = 2000;
  g_allocs = 0;
  g_counting = true;
  for (int i = 0; i < kN; ++i) {
    fw::Result r = w.Append(row, [&n](const fw::WriteCompletion& c) {
      if (c.partition == "a-partition-name-longer-than-sso" && c.table == "fluss.pc12") n++;
    });
    if (!r.Ok()) break;
  }
  fw::Result f = w.Flush();
  g_counting = false;
  ASSERT_TRUE(f.Ok()) << f.ToString();
  EXPECT_EQ(n.load(), kN);
  EXPECT_LE(g_allocs.load(), 16) << "C++ allocations for " << kN << " inline callbacks";
}

// A WriteCompletion's partition name: a copy owns it (valid after the viewed buffer is gone), a
// move takes it along, assignments too.
TEST(WriteCompletionPartition, CopiesOwnAndMovesTakeTheName) {
  std::string table = "db.table_with_a_long_name_beyond_sso";
  std::string partition = "eu$2026-12-03-partition-beyond-sso";
  fw::WriteCompletion viewing;
  viewing.table = table;
  viewing.partition = partition;
  viewing.partition_id = 7;
  fw::WriteCompletion copy(viewing);
  table.assign(table.size(), 'x');
  partition.assign(partition.size(), 'y');
  EXPECT_EQ(copy.table, "db.table_with_a_long_name_beyond_sso");
  EXPECT_EQ(copy.partition, "eu$2026-12-03-partition-beyond-sso");
  EXPECT_EQ(copy.partition_id, 7);
  EXPECT_NE(copy.partition.data(), partition.data());

  const char* owned = copy.partition.data();
  fw::WriteCompletion moved(std::move(copy));
  EXPECT_EQ(moved.partition, "eu$2026-12-03-partition-beyond-sso");
  EXPECT_EQ(moved.partition.data(), owned) << "a move steals the owned name";
  EXPECT_TRUE(copy.partition.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty

  fw::WriteCompletion assigned;
  assigned = moved;
  EXPECT_EQ(assigned.partition, "eu$2026-12-03-partition-beyond-sso");
  EXPECT_NE(assigned.partition.data(), moved.partition.data());
  fw::WriteCompletion move_assigned;
  move_assigned = std::move(assigned);
  EXPECT_EQ(move_assigned.partition, "eu$2026-12-03-partition-beyond-sso");
  EXPECT_EQ(move_assigned.table, "db.table_with_a_long_name_beyond_sso");

  // A short (inline) name and none at all.
  fw::WriteCompletion small;
  std::string s = "p1";
  small.partition = s;
  fw::WriteCompletion small_copy = small;
  s = "zz";
  fw::WriteCompletion small_moved = std::move(small_copy);
  EXPECT_EQ(small_moved.partition, "p1");
  fw::WriteCompletion none;
  fw::WriteCompletion none_copy = none;
  EXPECT_TRUE(none_copy.partition.empty());
  EXPECT_EQ(none_copy.partition_id, -1);
}
