// test_arrow_c.cpp: Arrow input from a hand-written C Data Interface producer; C11.
#include <numeric>

#include "arrow_c_producer.h"
#include "test_util.h"

class ArrowC : public EmbeddedTest {};

static std::vector<int64_t> Ids(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// C11: a multi-bucket batch is accepted whole and completes once with per-bucket results.
TEST_F(ArrowC, C11_MultiBucketBatchOneCallbackPerBucketResults) {
  fw::TablePath p = LogTable("arrow4", 4, true);
  fw::AppendWriter w = AppendWriterFor(p);
  ArrowArray array;
  ArrowSchema schema;
  producer::MakeArray(Ids(200), &array);
  producer::MakeSchema(&schema);
  std::promise<fw::WriteCompletion> got;
  std::atomic<int> calls{0};
  ASSERT_OK(w.WriteArrowBatch(&array, &schema, [&](const fw::WriteCompletion& c) {
    calls++;
    got.set_value(c);
  }));
  EXPECT_EQ(array.release, nullptr);  // moved from
  EXPECT_EQ(schema.release, nullptr);
  fw::WriteCompletion c = got.get_future().get();
  ASSERT_OK(w.Flush());
  EXPECT_EQ(calls.load(), 1);
  EXPECT_TRUE(c.Ok()) << c.result.ToString();
  ASSERT_GT(c.bucket_results.size(), 1u);
  int64_t rows = 0;
  for (const auto& b : c.bucket_results) {
    EXPECT_TRUE(b.result.Ok());
    EXPECT_GE(b.base_offset, 0);
    rows += b.rows;
  }
  EXPECT_EQ(rows, 200);
  int64_t stored = 0;
  for (int b = 0; b < 4; ++b) {
    std::vector<fw::testing::ScannedRow> out;
    ASSERT_OK(fw::testing::Scan(conn, p, b, 0, out));
    for (const auto& r : out) EXPECT_EQ(r.row.GetString(1), "m" + std::to_string(r.row.GetInt64(0)));
    stored += static_cast<int64_t>(out.size());
  }
  EXPECT_EQ(stored, 200);
}

// C4/C11: a failed bucket is reported in its bucket result; the others succeed.
TEST_F(ArrowC, C11_PartialFailureNamesTheFailedBucket) {
  fw::TablePath p = LogTable("arrowfail", 2, true);
  ASSERT_OK(fw::testing::InjectFault(conn, p, 1, fw::testing::Fault::Error(38, "rejected")));
  fw::AppendWriter w = AppendWriterFor(p);
  ArrowArray array;
  ArrowSchema schema;
  producer::MakeArray(Ids(50), &array);
  producer::MakeSchema(&schema);
  fw::WriteResult res;
  ASSERT_OK(w.WriteArrowBatch(&array, &schema, res));
  fw::WriteCompletion c;
  fw::Result r = res.Wait(&c);
  EXPECT_FALSE(r.Ok());
  ASSERT_EQ(c.bucket_results.size(), 2u);
  for (const auto& b : c.bucket_results) {
    if (b.bucket == 1) {
      EXPECT_EQ(b.result.error_code, 38);
    } else {
      EXPECT_TRUE(b.result.Ok());
    }
  }
}

TEST_F(ArrowC, MissingColumnRejectedAndReleased) {
  fw::AppendWriter w = AppendWriterFor(LogTable("arrowbad"));
  ArrowArray array;
  ArrowSchema schema;
  producer::MakeArray(Ids(3), &array);
  producer::MakeSchema(&schema, "l");
  schema.n_children = 1;  // the table has two columns
  array.n_children = 1;
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  std::atomic<int> ran{0};
  fw::Result r = w.WriteArrowBatch(&array, &schema, [t = Tracked(destroyed), &ran](const fw::WriteCompletion&) { ran++; });
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidRow)) << r.ToString();
  EXPECT_EQ(destroyed->load(), 1);
  EXPECT_EQ(array.release, nullptr);
  EXPECT_EQ(schema.release, nullptr);
  ASSERT_OK(w.Flush());
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(w.WriteArrowBatchDetached(nullptr, nullptr).error_code, Code(fw::ClientCode::InvalidRow));
}

TEST_F(ArrowC, StreamIsOneOperation) {
  fw::TablePath p = LogTable("arrowstream");
  fw::AppendWriter w = AppendWriterFor(p);
  ArrowArrayStream stream;
  producer::MakeStream({{1, 2, 3}, {4, 5}, {6}}, &stream);
  std::atomic<int> calls{0};
  ASSERT_OK(w.WriteArrowBatch(&stream, [&](const fw::WriteCompletion& c) {
    EXPECT_TRUE(c.Ok());
    calls++;
  }));
  EXPECT_EQ(stream.release, nullptr);
  ASSERT_OK(w.Flush());
  EXPECT_EQ(calls.load(), 1);
  int64_t hw = 0;
  ASSERT_OK(fw::testing::HighWatermark(conn, p, 0, hw));
  EXPECT_EQ(hw, 6);
  ArrowArrayStream s2;
  producer::MakeStream({{7}}, &s2);
  ASSERT_OK(w.WriteArrowBatchDetached(&s2));
  ASSERT_OK(w.Flush());
  ASSERT_OK(fw::testing::HighWatermark(conn, p, 0, hw));
  EXPECT_EQ(hw, 7);
}
