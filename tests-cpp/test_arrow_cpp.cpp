// test_arrow_cpp.cpp: Arrow input produced by the real Arrow C++ library (from the pyarrow
// wheel; C++20 because of its headers), through the C Data Interface. Includes the SDK header
// first, so its vendored ABI structs and Arrow's abi.h must coexist (same include guards).
#include "test_util.h"

#include <arrow/api.h>
#include <arrow/c/bridge.h>

#include <optional>
#include <utility>

namespace {

std::shared_ptr<arrow::RecordBatch> MakeBatch(int64_t first, int64_t n) {
  arrow::Int64Builder ids;
  arrow::StringBuilder msgs;
  for (int64_t i = first; i < first + n; ++i) {
    EXPECT_TRUE(ids.Append(i).ok());
    if (i % 5 == 0) {
      EXPECT_TRUE(msgs.AppendNull().ok());
    } else {
      EXPECT_TRUE(msgs.Append("a" + std::to_string(i)).ok());
    }
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("msg", arrow::utf8())});
  return arrow::RecordBatch::Make(schema, n, {ids.Finish().ValueOrDie(), msgs.Finish().ValueOrDie()});
}

}  // namespace

class ArrowCpp : public EmbeddedTest {};

TEST_F(ArrowCpp, ExportedRecordBatchIsWrittenWithPerBucketResults) {
  fw::TablePath p = LogTable("pyarrow_batch", 3, true);
  fw::AppendWriter w = AppendWriterFor(p);
  ArrowArray array;
  ArrowSchema schema;
  ASSERT_TRUE(arrow::ExportRecordBatch(*MakeBatch(0, 300), &array, &schema).ok());
  std::promise<fw::WriteCompletion> got;
  ASSERT_OK(w.WriteArrowBatch(&array, &schema, [&](const fw::WriteCompletion& c) { got.set_value(c); }));
  EXPECT_EQ(array.release, nullptr);
  EXPECT_EQ(schema.release, nullptr);
  fw::WriteCompletion c = got.get_future().get();
  ASSERT_TRUE(c.Ok()) << c.result.ToString();
  int64_t rows = 0;
  for (const auto& b : c.bucket_results) rows += b.rows;
  EXPECT_EQ(rows, 300);
  int64_t stored = 0;
  for (int b = 0; b < 3; ++b) {
    std::vector<fw::testing::ScannedRow> out;
    ASSERT_OK(fw::testing::Scan(conn, p, b, 0, out));
    for (const auto& r : out) {
      int64_t id = r.row.GetInt64(0);
      if (id % 5 == 0) {
        EXPECT_TRUE(r.row.IsNull(1));
      } else {
        EXPECT_EQ(r.row.GetString(1), "a" + std::to_string(id));
      }
    }
    stored += static_cast<int64_t>(out.size());
  }
  EXPECT_EQ(stored, 300);
}

TEST_F(ArrowCpp, ExportedReaderStreamIsOneOperation) {
  fw::TablePath p = LogTable("pyarrow_stream");
  fw::AppendWriter w = AppendWriterFor(p);
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches{MakeBatch(0, 10), MakeBatch(10, 20), MakeBatch(30, 5)};
  auto reader = arrow::RecordBatchReader::Make(batches).ValueOrDie();
  ArrowArrayStream stream;
  ASSERT_TRUE(arrow::ExportRecordBatchReader(reader, &stream).ok());
  fw::WriteResult res;
  ASSERT_OK(w.WriteArrowBatch(&stream, res));
  EXPECT_EQ(stream.release, nullptr);
  fw::WriteCompletion c;
  ASSERT_OK(res.Wait(&c));
  int64_t hw = 0;
  ASSERT_OK(fw::testing::HighWatermark(conn, p, 0, hw));
  EXPECT_EQ(hw, 35);
}

TEST_F(ArrowCpp, SchemaMismatchRejectedNothingAccepted) {
  fw::TablePath p = LogTable("pyarrow_bad");
  fw::AppendWriter w = AppendWriterFor(p);
  arrow::StringBuilder ids;
  arrow::StringBuilder msgs;
  ASSERT_TRUE(ids.Append("not a number").ok());
  ASSERT_TRUE(msgs.Append("x").ok());
  auto schema = arrow::schema({arrow::field("id", arrow::utf8()), arrow::field("msg", arrow::utf8())});
  auto batch = arrow::RecordBatch::Make(schema, 1, {ids.Finish().ValueOrDie(), msgs.Finish().ValueOrDie()});
  ArrowArray array;
  ArrowSchema cs;
  auto st = arrow::ExportRecordBatch(*batch, &array, &cs);
  ASSERT_TRUE(st.ok());
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  fw::Result r = w.WriteArrowBatch(&array, &cs, [t = Tracked(destroyed)](const fw::WriteCompletion&) {});
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidRow)) << r.ToString();
  EXPECT_EQ(destroyed->load(), 1);
  EXPECT_EQ(array.release, nullptr);
  int64_t hw = -1;
  ASSERT_OK(fw::testing::HighWatermark(conn, p, 0, hw));
  EXPECT_EQ(hw, 0);
}

// ARRAY, MAP and ROW columns from Arrow C++ list<item: utf8>, map<utf8, int32> and
// struct<x, y> arrays (Arrow's own child names, everything nullable): conformed to the table,
// read back as written; a NULL in a NOT NULL ROW field of a non-NULL ROW is InvalidRow naming
// the column, nothing accepted.
TEST_F(ArrowCpp, NestedColumnsAreConformedAndReadBack) {
  using T = fw::DataType;
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("id", T::BigInt(), false)
                 .AddColumn("tags", T::Array(T::String()))
                 .AddColumn("attrs", T::Map(T::String(), T::Int(), false))
                 .AddColumn("point", T::Row({{"x", T::Double()}, {"y", T::Double(), false}}))
                 .Build();
  d.bucket_count = 1;
  fw::TablePath p("fluss", "pyarrow_nested");
  ASSERT_OK(admin.CreateTable(p, d));
  fw::AppendWriter w = AppendWriterFor(p);

  // Rows of (tags, attrs, point); std::nullopt: NULL; y_null: a NULL y in a non-NULL point.
  struct In {
    std::optional<std::vector<std::optional<std::string>>> tags;
    std::optional<std::vector<std::pair<std::string, int32_t>>> attrs;
    std::optional<std::pair<std::optional<double>, std::optional<double>>> point;
  };
  auto make = [](const std::vector<In>& rows) {
    arrow::MemoryPool* pool = arrow::default_memory_pool();
    arrow::Int64Builder ids;
    auto tag_values = std::make_shared<arrow::StringBuilder>(pool);
    arrow::ListBuilder tags(pool, tag_values);
    auto keys = std::make_shared<arrow::StringBuilder>(pool);
    auto items = std::make_shared<arrow::Int32Builder>(pool);
    arrow::MapBuilder attrs(pool, keys, items);
    auto xs = std::make_shared<arrow::DoubleBuilder>(pool);
    auto ys = std::make_shared<arrow::DoubleBuilder>(pool);
    arrow::StructBuilder point(arrow::struct_({arrow::field("x", arrow::float64()), arrow::field("y", arrow::float64())}),
                               pool, {xs, ys});
    for (size_t i = 0; i < rows.size(); ++i) {
      const In& r = rows[i];
      EXPECT_TRUE(ids.Append(static_cast<int64_t>(i)).ok());
      if (!r.tags) {
        EXPECT_TRUE(tags.AppendNull().ok());
      } else {
        EXPECT_TRUE(tags.Append().ok());
        for (const auto& t : *r.tags) EXPECT_TRUE((t ? tag_values->Append(*t) : tag_values->AppendNull()).ok());
      }
      if (!r.attrs) {
        EXPECT_TRUE(attrs.AppendNull().ok());
      } else {
        EXPECT_TRUE(attrs.Append().ok());
        for (const auto& [k, v] : *r.attrs) EXPECT_TRUE(keys->Append(k).ok() && items->Append(v).ok());
      }
      if (!r.point) {
        EXPECT_TRUE(point.AppendNull().ok());
      } else {
        EXPECT_TRUE(point.Append().ok());
        EXPECT_TRUE((r.point->first ? xs->Append(*r.point->first) : xs->AppendNull()).ok());
        EXPECT_TRUE((r.point->second ? ys->Append(*r.point->second) : ys->AppendNull()).ok());
      }
    }
    std::vector<std::shared_ptr<arrow::Array>> cols{ids.Finish().ValueOrDie(), tags.Finish().ValueOrDie(),
                                                    attrs.Finish().ValueOrDie(), point.Finish().ValueOrDie()};
    auto schema = arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("tags", cols[1]->type()),
                                 arrow::field("attrs", cols[2]->type()), arrow::field("point", cols[3]->type())});
    return arrow::RecordBatch::Make(schema, static_cast<int64_t>(rows.size()), cols);
  };

  std::vector<In> rows(4);
  rows[0] = In{std::vector<std::optional<std::string>>{"a", std::nullopt},
               std::vector<std::pair<std::string, int32_t>>{{"k", 1}}, std::make_pair(1.5, 2.5)};
  rows[1] = In{};  // NULL everywhere
  rows[2] = In{std::vector<std::optional<std::string>>{}, std::vector<std::pair<std::string, int32_t>>{},
               std::make_pair(std::optional<double>(), std::optional<double>(3.0))};
  rows[3] = In{std::vector<std::optional<std::string>>{"z"},
               std::vector<std::pair<std::string, int32_t>>{{"b", 2}, {"a", 3}}, std::make_pair(4.0, 5.0)};
  ArrowArray array;
  ArrowSchema schema;
  ASSERT_TRUE(arrow::ExportRecordBatch(*make(rows), &array, &schema).ok());
  fw::WriteResult res;
  ASSERT_OK(w.WriteArrowBatch(&array, &schema, res));
  fw::WriteCompletion c;
  ASSERT_OK(res.Wait(&c));
  ASSERT_TRUE(c.Ok()) << c.result.ToString();

  // A NULL y in a non-NULL point: rejected whole.
  std::vector<In> bad(2);
  bad[1].point = std::make_pair(std::optional<double>(1.0), std::optional<double>());
  ASSERT_TRUE(arrow::ExportRecordBatch(*make(bad), &array, &schema).ok());
  fw::Result r = w.WriteArrowBatch(&array, &schema, res);
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidRow)) << r.ToString();
  EXPECT_NE(r.error_message.find("\"point\""), std::string::npos) << r.error_message;
  ASSERT_OK(w.Close());

  std::vector<fw::testing::ScannedRow> out;
  ASSERT_OK(fw::testing::Scan(conn, p, 0, 0, out));
  ASSERT_EQ(out.size(), 4u);
  const char* want[4][3] = {{"[\"a\", null]", "{\"k\": 1}", "(1.5, 2.5)"},
                            {"null", "null", "null"},
                            {"[]", "{}", "(null, 3)"},
                            {"[\"z\"]", "{\"b\": 2, \"a\": 3}", "(4, 5)"}};
  for (size_t i = 0; i < 4; ++i) {
    const fw::GenericRow& row = out[i].row;
    EXPECT_EQ(row.GetInt64(0), static_cast<int64_t>(i));
    for (size_t col = 0; col < 3; ++col) EXPECT_EQ(row.ToString(col + 1), want[i][col]) << "row " << i;
  }
  // The same through the typed getters, for the last row.
  const fw::GenericRow& last = out[3].row;
  fw::GenericRow tags = last.GetArray(1);
  ASSERT_EQ(tags.FieldCount(), 1u);
  EXPECT_EQ(tags.GetString(0), "z");
  fw::GenericRow keys = last.GetMapKeys(2);
  fw::GenericRow values = last.GetMapValues(2);
  ASSERT_EQ(keys.FieldCount(), 2u);
  ASSERT_EQ(values.FieldCount(), 2u);
  EXPECT_EQ(keys.GetString(0), "b");
  EXPECT_EQ(values.GetInt64(0), 2);
  EXPECT_EQ(keys.GetString(1), "a");
  EXPECT_EQ(values.GetInt64(1), 3);
  fw::GenericRow point = last.GetRow(3);
  ASSERT_EQ(point.FieldCount(), 2u);
  EXPECT_EQ(point.GetFloat64(0), 4.0);
  EXPECT_EQ(point.GetFloat64(1), 5.0);
  EXPECT_EQ(point.TypeName(1), "DOUBLE");
}
