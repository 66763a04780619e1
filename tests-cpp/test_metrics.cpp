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
  // The slow callbacks (here and below) run 1 s against the 50 ms threshold: the check reads a
  // coarse clock that a ticker thread advances, and one tick in the last 950 ms of the run is
  // enough, so a ticker stalled for less than that does not hide them.
  ASSERT_OK(w.Append(Row(1), [](const fw::WriteCompletion&) { std::this_thread::sleep_for(1s); }));
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
  ASSERT_OK(w.Append(Row(3), [](const fw::WriteCompletion&) { std::this_thread::sleep_for(1s); }));
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
  // Every 20 ms: wait (up to 5 s, for a stalled reporter thread) until it has called twice.
  for (auto until = std::chrono::steady_clock::now() + 5s; std::chrono::steady_clock::now() < until;) {
    {
      std::lock_guard<std::mutex> g(mu);
      if (calls.size() >= 2) break;
    }
    std::this_thread::sleep_for(10ms);
  }
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

// The latency histograms of the process JSON (one rendering, the core's): bounds in seconds,
// cumulative counts, sum and count, for acknowledgement-to-callback, request latency and callback
// run time.
TEST_F(Metrics, MetricsJsonCarriesTheLatencyHistograms) {
  fw::Configuration cfg;
  cfg.Set("client.id", "cpp-hist").Set("client.writer.slow-callback-threshold", "20ms");
  Open(cfg);
  fw::TablePath p = LogTable("metrics_hist_cpp");
  fw::AppendWriter w = AppendWriterFor(p);
  // Let the coarse clock's ticker (perhaps in a 100 ms sleep for a coarser watch) take up the
  // 2 ms tick of the 20 ms threshold.
  std::this_thread::sleep_for(150ms);
  const int n = 50;
  for (int i = 0; i < n; ++i) {
    ASSERT_OK(w.Append(Row(i), [i](const fw::WriteCompletion&) {
      if (i == 3) std::this_thread::sleep_for(60ms);
    }));
  }
  ASSERT_OK(w.Flush());
  fw::WriterStats s = w.Stats();
  ASSERT_EQ(s.callbacks_run, static_cast<uint64_t>(n));
  std::string json = fw::MetricsJson();
  size_t mine = json.find("\"client_id\":\"cpp-hist\"");
  ASSERT_NE(mine, std::string::npos) << json;
  size_t hist = json.find("\"histograms\":{", mine);
  ASSERT_NE(hist, std::string::npos) << json;
  std::string h = json.substr(hist, json.find("}}}", hist) + 3 - hist);
  const std::string bounds =
      "\"bounds\":[0.00001,0.000025,0.00005,0.0001,0.00025,0.0005,0.001,0.0025,0.005,0.01,0.025,0.05,0.1,0.25,0.5,1,2.5,5,"
      "10,60]";
  for (const char* name : {"ack_to_callback_seconds", "request_latency_seconds", "callback_run_seconds"}) {
    size_t at = h.find(std::string("\"") + name + "\":{" + bounds + ",\"counts\":[");
    ASSERT_NE(at, std::string::npos) << name << " in " << h;
    // The counts: 20 cumulative numbers, never above the count.
    size_t open = h.find("\"counts\":[", at) + 10;
    std::string counts = h.substr(open, h.find(']', open) - open);
    std::vector<uint64_t> values;
    for (size_t pos = 0; pos <= counts.size();) {
      size_t comma = counts.find(',', pos);
      if (comma == std::string::npos) comma = counts.size();
      values.push_back(std::stoull(counts.substr(pos, comma - pos)));
      pos = comma + 1;
    }
    ASSERT_EQ(values.size(), 20u) << name << ": " << counts;
    for (size_t i = 1; i < values.size(); ++i) EXPECT_LE(values[i - 1], values[i]) << name << ": " << counts;
    size_t count_at = h.find("\"count\":", open) + 8;
    uint64_t count = std::stoull(h.substr(count_at));
    EXPECT_LE(values.back(), count) << name;
    if (std::string(name) == "callback_run_seconds") {
      EXPECT_EQ(count, static_cast<uint64_t>(n)) << "one sample per callback: " << h;
      // The slow-callback check reads the same coarse-clock difference: a callback counted slow
      // (at least 20 ms) is a sample above the 10 ms bound.
      EXPECT_GE(count - values[9], s.slow_callbacks) << h;
    } else if (std::string(name) == "request_latency_seconds") {
      EXPECT_EQ(count, s.requests_sent) << h;
    } else {
      EXPECT_EQ(count, s.ack_to_callback_count) << "the connection's worker runs only this writer: " << h;
    }
  }
  ASSERT_OK(w.Close());
}

}  // namespace
