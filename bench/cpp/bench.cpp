// bench.cpp: the C++ benchmark (results in bench/README.md, section "C++ binding").
//
//  dispatch  no-op C++ callbacks through the dispatcher: a slot each, one job per 1024
//            callables (one batch), one FIFO worker; the time covers admission, hand-off,
//            the noexcept trampoline, the call, destroying the callable and releasing its slot.
//  e2e       end to end on the embedded engine: Append(row, callback) then Flush, side by side
//            with Append(row, WriteResult&) handed to a waiting thread that calls Wait() on
//            each result in order (the pattern callbacks replace).
//
// Usage: fluss_writer_bench [dispatch_callbacks=2000000] [e2e_records=300000] [runs=5]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fluss_writer.hpp"

namespace fw = fluss_writer;
using Clock = std::chrono::steady_clock;

static double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static void Check(const fw::Result& r, const char* what) {
  if (!r.Ok()) {
    std::fprintf(stderr, "%s: %s\n", what, r.ToString().c_str());
    std::exit(1);
  }
}

static std::atomic<uint64_t> g_sink{0};

static double DispatchRun(size_t n) {
  std::vector<fw::WriteCallback> cbs;
  cbs.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    cbs.emplace_back([](const fw::WriteCompletion& c) { g_sink.fetch_add(static_cast<uint64_t>(c.offset) & 1, std::memory_order_relaxed); });
  }
  double secs = fw::testing::RunThroughDispatcher(std::move(cbs), 1024);
  return static_cast<double>(n) / secs;
}

struct E2E {
  fw::Connection conn;
  fw::Table table;
};

static E2E Open(int run) {
  E2E e;
  fw::Configuration cfg;
  cfg.Set("client.writer.batch-timeout", "5ms");
  Check(fw::Connection::Create(cfg, e.conn), "connect");
  fw::Admin admin;
  Check(e.conn.GetAdmin(admin), "admin");
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder().AddColumn("id", fw::DataType::BigInt(), false).AddColumn("msg", fw::DataType::String()).Build();
  d.bucket_count = 4;
  d.bucket_keys = {"id"};
  fw::TablePath p("fluss", "bench" + std::to_string(run));
  Check(admin.CreateTable(p, d), "create");
  Check(e.conn.GetTable(p, e.table), "table");
  return e;
}

static double E2ECallbacks(size_t n, int run) {
  E2E e = Open(run);
  fw::AppendWriter w;
  Check(e.table.NewAppend().CreateWriter(w), "writer");
  std::atomic<uint64_t> done{0};
  fw::GenericRow row(2);
  row.SetString(1, "payload-0123456789");
  auto t0 = Clock::now();
  for (size_t i = 0; i < n; ++i) {
    row.SetInt64(0, static_cast<int64_t>(i));
    Check(w.Append(row, [&done](const fw::WriteCompletion& c) {
      if (c.Ok()) done.fetch_add(1, std::memory_order_relaxed);
    }), "append");
  }
  Check(w.Flush(), "flush");
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (done.load() != n) {
    std::fprintf(stderr, "callbacks: %llu of %zu ok\n", static_cast<unsigned long long>(done.load()), n);
    std::exit(1);
  }
  return static_cast<double>(n) / secs;
}

static double E2EWait(size_t n, int run) {
  E2E e = Open(run);
  fw::AppendWriter w;
  Check(e.table.NewAppend().CreateWriter(w), "writer");
  std::mutex mu;
  std::condition_variable cv;
  std::deque<fw::WriteResult> queue;
  bool finished = false;
  uint64_t ok = 0;
  std::thread waiter([&] {
    for (;;) {
      fw::WriteResult r;
      {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [&] { return finished || !queue.empty(); });
        if (queue.empty()) return;
        r = std::move(queue.front());
        queue.pop_front();
      }
      if (r.Wait().Ok()) ok++;
    }
  });
  fw::GenericRow row(2);
  row.SetString(1, "payload-0123456789");
  auto t0 = Clock::now();
  for (size_t i = 0; i < n; ++i) {
    row.SetInt64(0, static_cast<int64_t>(i));
    fw::WriteResult r;
    Check(w.Append(row, r), "append");
    {
      std::lock_guard<std::mutex> g(mu);
      queue.push_back(std::move(r));
    }
    cv.notify_one();
  }
  {
    std::lock_guard<std::mutex> g(mu);
    finished = true;
  }
  cv.notify_one();
  waiter.join();
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (ok != n) {
    std::fprintf(stderr, "waits: %llu of %zu ok\n", static_cast<unsigned long long>(ok), n);
    std::exit(1);
  }
  return static_cast<double>(n) / secs;
}

int main(int argc, char** argv) {
  size_t dispatch_n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000000;
  size_t e2e_n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 300000;
  int runs = argc > 3 ? std::atoi(argv[3]) : 5;

  std::vector<double> dispatch;
  for (int i = 0; i < runs; ++i) dispatch.push_back(DispatchRun(dispatch_n));
  std::printf("dispatch: %zu no-op C++ callbacks x %d runs: median %.2f M callbacks/s (min %.2f, max %.2f)\n",
              dispatch_n, runs, Median(dispatch) / 1e6, *std::min_element(dispatch.begin(), dispatch.end()) / 1e6,
              *std::max_element(dispatch.begin(), dispatch.end()) / 1e6);

  std::vector<double> cb, wait;
  for (int i = 0; i < runs; ++i) {
    cb.push_back(E2ECallbacks(e2e_n, 2 * i));
    wait.push_back(E2EWait(e2e_n, 2 * i + 1));
  }
  std::printf("e2e: %zu appends x %d runs (embedded, 4 buckets)\n", e2e_n, runs);
  std::printf("  Append + callback, Flush         : median %.0f records/s\n", Median(cb));
  std::printf("  Append + WriteResult, Wait thread: median %.0f records/s\n", Median(wait));
  std::printf("  ratio callbacks / wait           : %.2fx\n", Median(cb) / Median(wait));
  return 0;
}
