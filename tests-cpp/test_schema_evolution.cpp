// test_schema_evolution.cpp: Admin::AlterTable through the C++ API, on the embedded engine and on
// a real Fluss 0.9.1 cluster (fixture: backend_test.h): a nullable column added while a writer
// is open; the old writer keeps writing its schema, a new writer writes the new column, and a
// scan of the table loaded after the change reads both (NULL in the old rows); a primary-key
// table's lookups across the change; refused changes return the server's codes; column comments.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backend_test.h"

namespace {

constexpr int32_t kTableNotExist = 7;
constexpr int32_t kInvalidAlterTable = 56;

class SchemaEvolutionTest : public BackendTest {
 protected:
  // Counts completions and their failures.
  struct Done {
    std::mutex m;
    int ok = 0;
    int failed = 0;
    fw::WriteCallback Cb() {
      return [this](const fw::WriteCompletion& c) {
        std::lock_guard<std::mutex> g(m);
        (c.Ok() ? ok : failed) += 1;
      };
    }
  };
};

fw::GenericRow OldRow(int64_t id) {
  fw::GenericRow r(2);
  r.SetInt64(0, id);
  r.SetString(1, "old " + std::to_string(id));
  return r;
}

TEST_P(SchemaEvolutionTest, LogTableAcrossAnAddedColumn) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("id", fw::DataType::BigInt(), false)
                 .AddColumn("msg", fw::DataType::String())
                 .Build();
  d.bucket_count = 1;
  fw::TablePath p = Create("evo_log", d);
  fw::Table before = Get(p);
  fw::AppendWriter old = AppendWriterFor(before);
  Done done;
  for (int64_t i = 0; i < 10; ++i) ASSERT_OK(old.Append(OldRow(i), done.Cb()));
  ASSERT_OK(old.Flush());
  ASSERT_OK(admin.AlterTable(p, {fw::TableChange::AddColumn(fw::Column{"extra", fw::DataType::Int(), true})}));
  fw::TableInfo info;
  ASSERT_OK(admin.GetTableInfo(p, info));
  EXPECT_EQ(info.schema_id, 2);
  ASSERT_EQ(info.descriptor.schema.columns.size(), 3u);
  EXPECT_EQ(info.descriptor.schema.columns[2].name, "extra");
  for (int64_t i = 10; i < 20; ++i) ASSERT_OK(old.Append(OldRow(i), done.Cb()));
  fw::Table after = Get(p);
  fw::AppendWriter neu = AppendWriterFor(after);
  for (int64_t i = 20; i < 30; ++i) {
    fw::GenericRow r(3);
    r.SetInt64(0, i);
    r.SetString(1, "new " + std::to_string(i));
    r.SetInt32(2, static_cast<int32_t>(i * 2));
    ASSERT_OK(neu.Append(r, done.Cb()));
  }
  ASSERT_OK(old.Flush());
  ASSERT_OK(neu.Flush());
  EXPECT_EQ(done.ok, 30);
  EXPECT_EQ(done.failed, 0);
  std::vector<fw::ScannedRow> rows;
  ASSERT_OK(after.Scan(0, 0, rows));
  ASSERT_EQ(rows.size(), 30u);
  std::map<int64_t, const fw::GenericRow*> by_id;
  for (const auto& s : rows) by_id[s.row.GetInt64(0)] = &s.row;
  for (int64_t i = 0; i < 30; ++i) {
    const fw::GenericRow& r = *by_id.at(i);
    ASSERT_EQ(r.FieldCount(), 3u);
    if (i < 20) {
      EXPECT_TRUE(r.IsNull(2)) << i;
      EXPECT_EQ(r.GetString(1), "old " + std::to_string(i));
    } else {
      EXPECT_EQ(r.GetInt64(2), i * 2);
    }
  }
  ASSERT_OK(old.Close());
  ASSERT_OK(neu.Close());
}

TEST_P(SchemaEvolutionTest, RefusedChangesReturnTheServersCodes) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("id", fw::DataType::BigInt(), false)
                 .AddColumn("msg", fw::DataType::String())
                 .Build();
  fw::TablePath p = Create("evo_no", d);
  fw::Result r = admin.AlterTable(p, {fw::TableChange::AddColumn(fw::Column{"msg", fw::DataType::Int(), true})});
  EXPECT_EQ(r.error_code, kInvalidAlterTable) << r.ToString();
  r = admin.AlterTable(p, {fw::TableChange::AddColumn(fw::Column{"x", fw::DataType::Int(), false})});
  EXPECT_NE(r.error_message.find("must be nullable"), std::string::npos) << r.ToString();
  r = admin.AlterTable(p, {fw::TableChange::DropColumn("msg")});
  EXPECT_NE(r.error_message.find("Not support drop column"), std::string::npos) << r.ToString();
  r = admin.AlterTable(p, {fw::TableChange::RenameColumn("msg", "m")});
  EXPECT_NE(r.error_message.find("Not support rename column"), std::string::npos) << r.ToString();
  fw::TableInfo info;
  ASSERT_OK(admin.GetTableInfo(p, info));
  EXPECT_EQ(info.schema_id, 1);
  fw::TablePath missing(database, Unique("evo_missing"));
  r = admin.AlterTable(missing, {fw::TableChange::DropColumn("x")});
  EXPECT_EQ(r.error_code, kTableNotExist) << r.ToString();
  ASSERT_OK(admin.AlterTable(missing, {fw::TableChange::DropColumn("x")}, true));
}

// Issue 27: a column's comment is stored with the table and read back by GetTableInfo, whether
// given to AddColumn (name, type, nullable, comment), as a Column, or to AlterTable; a column
// without one reads back without one. (Before, C++ columns had no comment, and
// AddColumn(name, type, "a comment") compiled and dropped it: tests-cpp/compile_fail.)
TEST_P(SchemaEvolutionTest, ColumnCommentsAreKept) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("id", fw::DataType::BigInt(), false, "the key")
                 .AddColumn(fw::Column{"who", fw::DataType::String(), true, "a name, ünïcode"})
                 .AddColumn("plain", fw::DataType::Int())
                 .AddColumn("tags", fw::DataType::Array(fw::DataType::String()), true, "a nested type")
                 .SetPrimaryKeys({"id"})
                 .Build();
  d.bucket_count = 1;
  fw::TablePath p = Create("evo_comment", d);
  fw::Column added{"added", fw::DataType::Int(), true, "added later"};
  ASSERT_OK(admin.AlterTable(p, {fw::TableChange::AddColumn(added)}));
  fw::TableInfo info;
  ASSERT_OK(admin.GetTableInfo(p, info));
  std::vector<std::string> comments;
  for (const fw::Column& c : info.descriptor.schema.columns) comments.push_back(c.comment);
  EXPECT_EQ(comments, (std::vector<std::string>{"the key", "a name, ünïcode", "", "a nested type", "added later"}));
  std::vector<fw::Column> want = d.schema.columns;
  want.push_back(added);
  EXPECT_EQ(info.descriptor.schema.columns, want);
}

// Aggregation merge engine tables: Column::agg_function / agg_params go to the server and come
// back from GetTableInfo; the server merges upserts and partial updates column by column
// (Fluss 0.9.1 and 1.0). The embedded engine has no aggregation engine and refuses both the
// property and such columns (INVALID_CONFIG), like a server does for a default-engine table;
// the Rust core refuses an unknown function name (INVALID_TABLE) before anything is sent.
TEST_P(SchemaEvolutionTest, AggregationMergeEngineTables) {
  fw::Column total{"total", fw::DataType::BigInt()};
  total.agg_function = "SUM";
  fw::Column tags{"tags", fw::DataType::String()};
  tags.agg_function = "listagg";
  tags.agg_params = {{"delimiter", ";"}};
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("id", fw::DataType::BigInt(), false)
                 .AddColumn(total)
                 .AddColumn(tags)
                 .SetPrimaryKeys({"id"})
                 .Build();
  d.bucket_count = 1;
  d.properties["table.merge-engine"] = "aggregation";

  fw::TableDescriptor unknown = d;
  unknown.schema.columns[1].agg_function = "median";
  fw::Result r = admin.CreateTable(fw::TablePath(database, Unique("agg_unknown")), unknown);
  EXPECT_EQ(r.error_code, static_cast<int32_t>(fw::ClientCode::InvalidTable)) << r.ToString();
  EXPECT_NE(r.error_message.find("unknown aggregation function"), std::string::npos) << r.ToString();

  if (Embedded()) {
    constexpr int32_t kInvalidConfig = 39;
    r = admin.CreateTable(fw::TablePath(database, Unique("agg")), d);
    EXPECT_EQ(r.error_code, kInvalidConfig) << r.ToString();
    fw::TableDescriptor plain = d;
    plain.properties.clear();
    r = admin.CreateTable(fw::TablePath(database, Unique("agg_plain")), plain);
    EXPECT_EQ(r.error_code, kInvalidConfig) << r.ToString();
    EXPECT_NE(r.error_message.find("column 'total' has aggregation function 'sum'"), std::string::npos) << r.ToString();
    return;
  }
  fw::TablePath p = Create("agg", d);
  fw::TableInfo info;
  ASSERT_OK(admin.GetTableInfo(p, info));
  total.agg_function = "sum";  // as the core names it
  EXPECT_EQ(info.descriptor.schema.columns[1], total);
  EXPECT_EQ(info.descriptor.schema.columns[2], tags);

  fw::Table t = Get(p);
  auto row = [](int64_t id, int64_t n, const std::string& tag) {
    fw::GenericRow r(3);
    r.SetInt64(0, id);
    r.SetInt64(1, n);
    r.SetString(2, tag);
    return r;
  };
  fw::UpsertWriter w;
  ASSERT_OK(t.NewUpsert().CreateWriter(w));
  fw::WriteResult a, b;
  ASSERT_OK(w.Upsert(row(1, 10, "x"), a));
  ASSERT_OK(w.Upsert(row(1, 5, "y"), b));
  ASSERT_OK(w.Flush());
  ASSERT_OK(a.Wait());
  ASSERT_OK(b.Wait());
  fw::UpsertWriter partial;
  ASSERT_OK(t.NewUpsert().PartialUpdateByName({"id", "total"}).CreateWriter(partial));
  fw::WriteResult c;
  ASSERT_OK(partial.Upsert(row(1, 100, "ignored"), c));
  ASSERT_OK(partial.Flush());
  ASSERT_OK(c.Wait());
  fw::GenericRow key(1);
  key.SetInt64(0, 1);
  fw::GenericRow out;
  bool found = false;
  ASSERT_OK(Get(p).Lookup(key, out, found));
  ASSERT_TRUE(found);
  EXPECT_EQ(out.GetInt64(1), 115);
  EXPECT_EQ(out.GetString(2), "x;y");
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Embedded, SchemaEvolutionTest, ::testing::Values(Backend::Embedded), BackendName);
INSTANTIATE_TEST_SUITE_P(Cluster, SchemaEvolutionTest, ::testing::Values(Backend::Cluster), BackendName);
