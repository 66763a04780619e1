// test_arrow_cpp.cpp: Arrow input produced by the real Arrow C++ library (from the pyarrow
// wheel; C++20 because of its headers), through the C Data Interface. Includes the SDK header
// first, so its vendored ABI structs and Arrow's abi.h must coexist (same include guards).
#include "test_util.h"

#include <arrow/api.h>
#include <arrow/c/bridge.h>

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
