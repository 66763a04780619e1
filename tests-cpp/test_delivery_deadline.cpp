// test_delivery_deadline.cpp: issue 11, defect 2, through the C++ API where it was seen.
//
// A table dropped under a live writer (client.writer.delivery-timeout 3 s): 3 appends with
// callbacks used to get no callback at all, Stats().pending_callbacks stayed 3 and every
// Flush(5s) returned TIMEOUT, for as long as one waited. Every operation must complete, with an
// error, within the delivery timeout plus one request timeout, and Flush must then return OK.
#include "test_util.h"

namespace {

constexpr auto kDelivery = 3s;
constexpr auto kRequest = 2s;

class DeliveryDeadlineTest : public EmbeddedTest {
 protected:
  void SetUp() override {
    fw::Configuration c;
    c.Set("client.writer.batch-timeout", "5ms")
        .Set("client.writer.retry-backoff", "5ms")
        .Set("client.writer.delivery-timeout", "3s")
        .Set("client.request-timeout", "2s");
    Open(c);
  }
};

struct Seen {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<int64_t, fw::Result>> calls;

  auto Callback(int64_t tag) {
    return [this, tag](const fw::WriteCompletion& c) {
      std::lock_guard<std::mutex> g(mu);
      calls.emplace_back(tag, c.result);
      cv.notify_all();
    };
  }

  bool WaitFor(size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> g(mu);
    return cv.wait_for(g, timeout, [&] { return calls.size() >= n; });
  }
};

void CheckAllFailedInOrder(Seen& seen) {
  std::lock_guard<std::mutex> g(seen.mu);
  ASSERT_EQ(seen.calls.size(), 3u) << "every callback exactly once";
  for (size_t i = 0; i < seen.calls.size(); ++i) {
    EXPECT_EQ(seen.calls[i].first, static_cast<int64_t>(i)) << "submission order (one bucket)";
    EXPECT_FALSE(seen.calls[i].second.Ok()) << "op " << i << " succeeded on a dropped table";
  }
}

TEST_F(DeliveryDeadlineTest, DroppedTableUnderALiveWriterCompletesEveryAppend) {
  fw::TablePath p = LogTable("dd_cpp_log");
  fw::AppendWriter w = AppendWriterFor(p);
  ASSERT_OK(admin.DropTable(p));
  Seen seen;
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < 3; ++i) ASSERT_OK(w.Append(Row(i), seen.Callback(i)));
  ASSERT_TRUE(seen.WaitFor(3, kDelivery + kRequest + 1s)) << "callbacks missing; pending " << w.Stats().pending_callbacks;
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LE(took, kDelivery + kRequest);
  CheckAllFailedInOrder(seen);
  ASSERT_OK(w.Flush(5000ms));
  EXPECT_EQ(w.Stats().pending_callbacks, 0u);
  ASSERT_OK(w.Close(5000ms));
}

TEST_F(DeliveryDeadlineTest, FlushReturnsAfterTheTableWasDropped) {
  // The report's exact sequence: Flush(5s) right after the appends, without waiting.
  fw::TablePath p = LogTable("dd_cpp_flush");
  fw::AppendWriter w = AppendWriterFor(p);
  ASSERT_OK(admin.DropTable(p));
  Seen seen;
  for (int64_t i = 0; i < 3; ++i) ASSERT_OK(w.Append(Row(i), seen.Callback(i)));
  fw::Result r = w.Flush(5000ms);
  ASSERT_TRUE(r.Ok()) << r.ToString() << "; pending " << w.Stats().pending_callbacks;
  CheckAllFailedInOrder(seen);
}

TEST_F(DeliveryDeadlineTest, DroppedTableUnderALiveUpsertWriter) {
  fw::TablePath p = PkTable("dd_cpp_pk", 1);
  fw::Table t;
  ASSERT_OK(conn.GetTable(p, t));
  fw::UpsertWriter w;
  ASSERT_OK(t.NewUpsert().CreateWriter(w));
  ASSERT_OK(admin.DropTable(p));
  Seen seen;
  for (int32_t i = 0; i < 3; ++i) {
    fw::GenericRow row(3);
    row.SetInt32(0, i);
    row.SetString(1, "n");
    row.SetInt64(2, i);
    ASSERT_OK(w.Upsert(row, seen.Callback(i)));
  }
  fw::Result r = w.Flush(5000ms);
  ASSERT_TRUE(r.Ok()) << r.ToString() << "; pending " << w.Stats().pending_callbacks;
  CheckAllFailedInOrder(seen);
}

}  // namespace
