// test_metrics.cpp: writer metrics through the C++ API (issue 17): WriterStats for writes whose
// outcome the test knows, ErrorCounts per code (retried and failed), BucketCounts, MetricsJson for
// the process, and slow callbacks.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

class Metrics : public EmbeddedTest {};

TEST_F(Metrics, StatsCountAcknowledgedAndFailedRecordsAndRetriesPerCode) {
  fw::Configuration cfg;
  cfg.Set("client.writer.batch-timeout", "10s").Set("client.writer.retry-backoff", "1ms").Set("client.id", "cpp-metrics");
  Open(cfg);
  fw::TablePath p = LogTable("metrics_cpp");
  ASSERT_OK(fw::testing::InjectFault(conn, p, 0, fw::testing::Fault::Error(12, "not leader", 2)));
  fw::AppendWriter w = AppendWriterFor(p);
  for (int i = 0; i < 100; ++i) ASSERT_OK(w.AppendDetached(Row(i)));
  ASSERT_OK(w.Flush());
  ASSERT_OK(fw::testing::InjectFault(conn, p, 0, fw::testing::Fault::Error(13, "too large", 1)));
  for (int i = 0; i < 7; ++i) ASSERT_OK(w.AppendDetached(Row(1000 + i)));
  ASSERT_OK(w.Flush());

  fw::WriterStats s = w.Stats();
  EXPECT_EQ(s.records_sent, 100u);
  EXPECT_EQ(s.records_failed, 7u);
  EXPECT_EQ(s.batches_sent, 1u);
  EXPECT_EQ(s.retries, 2u);
  EXPECT_EQ(s.requests_sent, 4u) << "two failed attempts, the success, the final failure";
  EXPECT_EQ(s.request_latency_count, s.requests_sent);
  EXPECT_GT(s.bytes_sent, 0u);
  EXPECT_EQ(s.batch_records_p50, 100u);
  EXPECT_EQ(s.oldest_pending_batch_age_nanos, 0u);

  std::vector<fw::CodeCount> codes = w.ErrorCounts();
  ASSERT_EQ(codes.size(), 2u);
  EXPECT_EQ(codes[0].code, 12);
  EXPECT_EQ(codes[0].name, "NOT_LEADER_OR_FOLLOWER");
  EXPECT_EQ(codes[0].retries, 2u);
  EXPECT_EQ(codes[0].records_failed, 0u);
  EXPECT_EQ(codes[1].code, 13);
  EXPECT_EQ(codes[1].records_failed, 7u);

  std::vector<fw::BucketCount> buckets = w.BucketCounts();
  ASSERT_EQ(buckets.size(), 1u);
  EXPECT_EQ(buckets[0].bucket, 0);
  EXPECT_EQ(buckets[0].partition, "");
  EXPECT_EQ(buckets[0].records_sent, 100u);
  EXPECT_EQ(buckets[0].batches_sent, 1u);
  EXPECT_EQ(buckets[0].bytes_sent, s.bytes_sent);
  EXPECT_EQ(buckets[0].records_failed, 7u);
  EXPECT_EQ(buckets[0].retries, 2u);

  std::string json = fw::MetricsJson();
  EXPECT_NE(json.find("\"buckets\":[{\"partition\":null,\"bucket\":0,\"records_sent\":100,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"client_id\":\"cpp-metrics\",\"table\":\"fluss.metrics_cpp\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"records_sent\":100,"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"code\":13,\"name\":\"RECORD_TOO_LARGE_EXCEPTION\",\"records_failed\":7,\"retries\":0,\"rejected\":0}"),
            std::string::npos)
      << json;
  fw::GenericRow bad(2);
  bad.SetString(0, "not a number");
  EXPECT_TRUE(w.AppendDetached(bad).Is(fw::ClientCode::InvalidRow));
  EXPECT_EQ(w.Stats().operations_rejected, 1u);
  codes = w.ErrorCounts();
  ASSERT_EQ(codes.size(), 3u);
  EXPECT_EQ(codes[0].name, "INVALID_ROW");
  EXPECT_EQ(codes[0].rejected, 1u);
  ASSERT_OK(w.Close());
  EXPECT_EQ(fw::MetricsJson().find("cpp-metrics"), std::string::npos) << "a closed writer leaves the snapshot";
}

TEST_F(Metrics, SlowCallbackIsCountedAndLoggedThroughTheLogCallback) {
  std::mutex mu;
  std::vector<fw::LogRecord> logged;
  fw::SetLogCallback([&](const fw::LogRecord& r) {
    std::lock_guard<std::mutex> g(mu);
    logged.push_back(r);
  });
  fw::Configuration cfg;
  cfg.Set("client.writer.slow-callback-threshold", "50ms");
  Open(cfg);
  fw::TablePath p = LogTable("metrics_slow_cpp");
  fw::AppendWriter w = AppendWriterFor(p);
  ASSERT_OK(w.Append(Row(1), [](const fw::WriteCompletion&) { std::this_thread::sleep_for(150ms); }));
  ASSERT_OK(w.Append(Row(2), [](const fw::WriteCompletion&) {}));
  ASSERT_OK(w.Flush());
  EXPECT_EQ(w.Stats().slow_callbacks, 1u);
  {
    std::lock_guard<std::mutex> g(mu);
    int slow = 0;
    for (const auto& r : logged) {
      if (r.message.find("slow callback") == std::string::npos) continue;
      ++slow;
      EXPECT_EQ(r.level, fw::LogLevel::Warn);
      EXPECT_NE(r.message.find("write to fluss.metrics_slow_cpp bucket 0 offset 0"), std::string::npos) << r.message;
      EXPECT_NE(r.message.find("FIFO callback worker"), std::string::npos) << r.message;
    }
    EXPECT_EQ(slow, 1);
    logged.clear();
  }
  // Off: the next slow callback is counted, not logged.
  fw::SetLogLevel(fw::LogLevel::Off);
  ASSERT_OK(w.Append(Row(3), [](const fw::WriteCompletion&) { std::this_thread::sleep_for(150ms); }));
  ASSERT_OK(w.Flush());
  EXPECT_EQ(w.Stats().slow_callbacks, 2u);
  fw::SetLogLevel(fw::LogLevel::Warn);
  fw::SetLogCallback(nullptr);
  ASSERT_OK(w.Close());
  std::lock_guard<std::mutex> g(mu);
  EXPECT_TRUE(logged.empty()) << logged.front().message;
}

TEST_F(Metrics, StatisticsReporterHandsOverTheJsonAtItsInterval) {
  fw::Configuration cfg;
  cfg.Set("client.id", "cpp-stats");
  Open(cfg);
  fw::TablePath p = LogTable("metrics_stats_cpp");
  fw::AppendWriter w = AppendWriterFor(p);
  for (int i = 0; i < 10; ++i) ASSERT_OK(w.AppendDetached(Row(i)));
  ASSERT_OK(w.Flush());
  std::mutex mu;
  std::vector<std::string> calls;
  fw::StatisticsReporter r;
  EXPECT_FALSE(r.IsRunning());
  ASSERT_OK(fw::StatisticsReporter::Start(20ms, [&](const std::string& json) {
    std::lock_guard<std::mutex> g(mu);
    calls.push_back(json);
  }, r));
  EXPECT_TRUE(r.IsRunning());
  std::this_thread::sleep_for(300ms);
  r.Stop();
  EXPECT_FALSE(r.IsRunning());
  std::lock_guard<std::mutex> g(mu);
  ASSERT_GE(calls.size(), 2u);
  EXPECT_NE(calls.back().find("\"client_id\":\"cpp-stats\""), std::string::npos) << calls.back();
  EXPECT_NE(calls.back().find("\"records_sent\":10,"), std::string::npos) << calls.back();
  size_t n = calls.size();
  std::this_thread::sleep_for(60ms);
  EXPECT_EQ(calls.size(), n) << "no call after Stop";
  fw::StatisticsReporter none;
  fw::Result bad = fw::StatisticsReporter::Start(20ms, nullptr, none);
  EXPECT_TRUE(bad.Is(fw::ClientCode::InvalidConfig)) << bad.ToString();
  ASSERT_OK(w.Close());
}

}  // namespace
