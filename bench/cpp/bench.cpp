// bench.cpp: the C++ benchmark (results in bench/README.md, section "C++ binding").
//
//  dispatch  no-op C++ callbacks through the dispatcher: a slot each, one job per 1024
//            callables (one batch), one FIFO worker; the time covers admission, hand-off,
//            the noexcept trampoline, the call, destroying the callable and releasing its slot.
//  e2e       end to end on the embedded engine, four modes interleaved: AppendDetached then
//            Flush; Append(row, callback) then Flush; Append(row, WriteResult&) keeping every
//            result, Flush, then Wait() on each in order; and Append(row, WriteResult&) handed to
//            a waiting thread that calls Wait() on each result in order (the pattern callbacks
//            replace).
//
//  cluster   on a real Fluss cluster: the same two modes (callbacks vs Append + Wait in a waiting
//            thread) at 1, 4 and 16 buckets, 100-byte and 1-KiB rows (BIGINT id + STRING payload of
//            pseudo-random letters, distinct per record), log tables with bucket key id and
//            table.log.arrow.compression.type NONE, default client configuration; modes interleaved
//            (A B, then B A, ...) after a warm-up round, medians; one JSON line per case on stdout.
//            Both modes end with Flush (the wait mode: after the last Append, while the thread waits).
//
//  allocs    heap allocations per record, counted by replacing malloc/calloc/realloc/memalign
//            (every allocation of the process: C++ operator new and the Rust library both end in
//            malloc), after a warm-up round: through the dispatcher alone (the callback path:
//            hand-off, trampoline, call, destroy), and end to end on the embedded engine for
//            Append without notification, with an inline callback, with a SharedWriteCallback and
//            with a callable too large for the inline buffer. The end-to-end figures include
//            per-batch costs of the core and the embedded engine (spread over the records); the
//            callback's own cost is the difference to the no-notification row.
//
// Usage: fluss_writer_bench [dispatch_callbacks=2000000] [e2e_records=300000] [runs=5]
//        fluss_writer_bench dispatch [callbacks=2000000] [runs=7]  (dispatch only)
//        fluss_writer_bench allocs [records=200000]
//        fluss_writer_bench cluster <bootstrap> [records_100B=200000] [rounds=5]
//            (1-KiB rows use a quarter of records_100B)
#include <malloc.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fluss_writer.hpp"
#include "fluss_writer_test_hooks.hpp"  // RunThroughDispatcher (a build with FLUSS_WRITER_TEST_HOOKS)

namespace fw = fluss_writer;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------- counting allocator
// glibc's own entry points; the replacements below count every call of the process.
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}
static std::atomic<uint64_t> g_allocs{0};
extern "C" {
void* malloc(size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, n);
}
void* memalign(size_t a, size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
int posix_memalign(void** out, size_t a, size_t n) {
  void* p = memalign(a, n);
  if (p == nullptr) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void free(void* p) { __libc_free(p); }
}
static uint64_t Allocs() { return g_allocs.load(std::memory_order_relaxed); }

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

static E2E Open(int run, const std::string& prefix = "bench") {
  E2E e;
  fw::Configuration cfg;
  cfg.bootstrap_servers = "embedded";
  cfg.Set("client.writer.batch-timeout", "5ms");
  Check(fw::Connection::Create(cfg, e.conn), "connect");
  fw::Admin admin;
  Check(e.conn.GetAdmin(admin), "admin");
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder().AddColumn("id", fw::DataType::BigInt(), false).AddColumn("msg", fw::DataType::String()).Build();
  d.bucket_count = 4;
  d.bucket_keys = {"id"};
  fw::TablePath p("fluss", prefix + std::to_string(run));
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

static double E2EDetached(size_t n, int run) {
  E2E e = Open(run);
  fw::AppendWriter w;
  Check(e.table.NewAppend().CreateWriter(w), "writer");
  fw::GenericRow row(2);
  row.SetString(1, "payload-0123456789");
  auto t0 = Clock::now();
  for (size_t i = 0; i < n; ++i) {
    row.SetInt64(0, static_cast<int64_t>(i));
    Check(w.AppendDetached(row), "append");
  }
  Check(w.Flush(), "flush");
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  fw::WriterStats st = w.Stats();
  if (st.records_sent != n) {
    std::fprintf(stderr, "detached: %llu of %zu sent\n", static_cast<unsigned long long>(st.records_sent), n);
    std::exit(1);
  }
  return static_cast<double>(n) / secs;
}

// Append(row, WriteResult&) keeping every result in a growing vector, Flush, Wait() on each in
// order, then destroy them (what the Rust e2e benchmark's "append + WriteResult per record, all
// waited at the end" does, which does not time dropping its results; this does).
static double E2EResults(size_t n, int run) {
  E2E e = Open(run);
  fw::AppendWriter w;
  Check(e.table.NewAppend().CreateWriter(w), "writer");
  std::vector<fw::WriteResult> results;
  fw::GenericRow row(2);
  row.SetString(1, "payload-0123456789");
  uint64_t ok = 0;
  auto t0 = Clock::now();
  for (size_t i = 0; i < n; ++i) {
    row.SetInt64(0, static_cast<int64_t>(i));
    Check(w.Append(row, results.emplace_back()), "append");
  }
  Check(w.Flush(), "flush");
  for (const fw::WriteResult& r : results) {
    if (r.Wait().Ok()) ok++;
  }
  results.clear();
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (ok != n) {
    std::fprintf(stderr, "results: %llu of %zu ok\n", static_cast<unsigned long long>(ok), n);
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

// ---------------------------------------------------------------- cluster
struct Payloads {
  std::string pool;  // pseudo-random letters and digits; record i uses a window at a distinct offset
  size_t len;
  explicit Payloads(size_t len_) : len(len_) {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    pool.resize(len + 65536 + 7);
    static const char kAlpha[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (auto& c : pool) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      c = kAlpha[x % 62];
    }
  }
  std::string_view At(size_t i) const { return std::string_view(pool.data() + (i * 7919) % 65536, len); }
};

static double ClusterCallbacks(fw::Table& table, const Payloads& pl, size_t n, size_t base) {
  fw::AppendWriter w;
  Check(table.NewAppend().CreateWriter(w), "writer");
  std::atomic<uint64_t> done{0};
  fw::GenericRow row(2);
  auto t0 = Clock::now();
  for (size_t i = 0; i < n; ++i) {
    row.SetInt64(0, static_cast<int64_t>(base + i));
    row.SetString(1, pl.At(base + i));
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
  Check(w.Close(), "close");
  return static_cast<double>(n) / secs;
}

static double ClusterWait(fw::Table& table, const Payloads& pl, size_t n, size_t base) {
  fw::AppendWriter w;
  Check(table.NewAppend().CreateWriter(w), "writer");
  std::mutex mu;
  std::condition_variable cv;
  std::deque<fw::WriteResult> queue;
  bool finished = false;
  uint64_t ok = 0;
  fw::GenericRow row(2);
  auto t0 = Clock::now();
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
  for (size_t i = 0; i < n; ++i) {
    row.SetInt64(0, static_cast<int64_t>(base + i));
    row.SetString(1, pl.At(base + i));
    fw::WriteResult r;
    Check(w.Append(row, r), "append");
    {
      std::lock_guard<std::mutex> g(mu);
      queue.push_back(std::move(r));
    }
    cv.notify_one();
  }
  Check(w.Flush(), "flush");  // send the last batch now, not after the batch timeout
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
  Check(w.Close(), "close");
  return static_cast<double>(n) / secs;
}

static int ClusterMain(const std::string& bootstrap, size_t n100, int rounds) {
  fw::Configuration cfg;
  cfg.bootstrap_servers = bootstrap;
  fw::Connection conn;
  Check(fw::Connection::Create(cfg, conn), "connect");
  fw::Admin admin;
  Check(conn.GetAdmin(admin), "admin");
  const std::string db = "bench_cpp_peers";
  Check(admin.CreateDatabase(db, true), "create database");
  for (int row_bytes : {100, 1024}) {
    size_t n = row_bytes == 100 ? n100 : std::max<size_t>(1, n100 / 4);
    Payloads pl(static_cast<size_t>(row_bytes - 8));
    for (int buckets : {1, 4, 16}) {
      fw::TableDescriptor d;
      d.schema = fw::Schema::NewBuilder().AddColumn("id", fw::DataType::BigInt(), false).AddColumn("payload", fw::DataType::String()).Build();
      d.bucket_count = buckets;
      d.bucket_keys = {"id"};
      d.properties["table.log.arrow.compression.type"] = "NONE";
      fw::TablePath p(db, "t" + std::to_string(row_bytes) + "_" + std::to_string(buckets) + "_" + std::to_string(static_cast<long long>(std::chrono::system_clock::now().time_since_epoch().count() % 1000000007)));
      Check(admin.CreateTable(p, d), "create table");
      fw::Table table;
      Check(conn.GetTable(p, table), "table");
      size_t base = 0;
      ClusterCallbacks(table, pl, n, base); base += n;  // warm-up
      ClusterWait(table, pl, n, base); base += n;
      std::vector<double> cb, wt;
      for (int r = 0; r < rounds; ++r) {
        if (r % 2 == 0) {
          cb.push_back(ClusterCallbacks(table, pl, n, base)); base += n;
          wt.push_back(ClusterWait(table, pl, n, base)); base += n;
        } else {
          wt.push_back(ClusterWait(table, pl, n, base)); base += n;
          cb.push_back(ClusterCallbacks(table, pl, n, base)); base += n;
        }
      }
      double mcb = Median(cb), mwt = Median(wt);
      std::fprintf(stderr, "cluster %4d B %2d buckets: callback %.3f M rec/s (%.0f MB/s), wait %.3f M rec/s (%.0f MB/s), ratio %.2fx\n",
                   row_bytes, buckets, mcb / 1e6, mcb * row_bytes / 1e6, mwt / 1e6, mwt * row_bytes / 1e6, mcb / mwt);
      auto list = [](const std::vector<double>& v) {
        std::string s = "[";
        for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(static_cast<long long>(v[i]));
        return s + "]";
      };
      for (int m = 0; m < 2; ++m) {
        double med = m == 0 ? mcb : mwt;
        std::printf("{\"bench\": \"cpp_cluster\", \"backend\": \"cluster\", \"client\": \"%s\", \"row_bytes\": %d, \"buckets\": %d, "
                    "\"records\": %zu, \"rounds\": %d, \"median_records_per_s\": %.1f, \"median_mb_per_s\": %.2f, "
                    "\"ratio_callback_vs_wait\": %.4f, \"rounds_records_per_s\": %s}\n",
                    m == 0 ? "fluss-writer-cpp/callback" : "fluss-writer-cpp/wait-thread", row_bytes, buckets, n, rounds, med,
                    med * row_bytes / 1e6, mcb / mwt, list(m == 0 ? cb : wt).c_str());
        std::fflush(stdout);
      }
      Check(admin.DropTable(p, true), "drop table");
    }
  }
  Check(conn.Close(), "close");
  return 0;
}

// Acknowledgement-to-callback latency when not backlogged: a writer paced at `rate` records/s
// for `secs` seconds (1 ms batch timeout), read from the writer's executor stats.
static int LatencyMain(const std::string& bootstrap, double rate, double secs) {
  fw::Configuration cfg;
  cfg.bootstrap_servers = bootstrap;
  cfg.Set("client.writer.batch-timeout", "1ms");
  fw::Connection conn;
  Check(fw::Connection::Create(cfg, conn), "connect");
  fw::Admin admin;
  Check(conn.GetAdmin(admin), "admin");
  Check(admin.CreateDatabase("bench_cpp_latency", true), "create database");
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder().AddColumn("id", fw::DataType::BigInt(), false).AddColumn("msg", fw::DataType::String()).Build();
  d.bucket_count = 4;
  d.bucket_keys = {"id"};
  fw::TablePath p("bench_cpp_latency", "lat" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000000));
  Check(admin.CreateTable(p, d), "create");
  fw::Table table;
  Check(conn.GetTable(p, table), "table");
  fw::AppendWriter w;
  Check(table.NewAppend().CreateWriter(w), "writer");
  fw::GenericRow row(2);
  row.SetString(1, "latency-probe-payload");
  const size_t n = static_cast<size_t>(rate * secs);
  const auto step = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
  auto next = Clock::now();
  for (size_t i = 0; i < n; ++i) {
    row.SetInt64(0, static_cast<int64_t>(i));
    Check(w.Append(row, [](const fw::WriteCompletion&) {}), "append");
    next += step;
    std::this_thread::sleep_until(next);
  }
  Check(w.Flush(), "flush");
  const fw::WriterStats st = w.Stats();
  std::printf("{\"bench\": \"cpp_latency\", \"backend\": \"%s\", \"rate\": %.0f, \"batches\": %llu, \"p50_us\": %.1f, \"p99_us\": %.1f, \"max_us\": %.1f}\n",
              bootstrap == "embedded" ? "embedded" : "cluster", rate, static_cast<unsigned long long>(st.ack_to_callback_count),
              st.ack_to_callback_p50_nanos / 1e3, st.ack_to_callback_p99_nanos / 1e3, st.ack_to_callback_max_nanos / 1e3);
  Check(w.Close(), "close");
  Check(admin.DropTable(p, true), "drop");
  Check(conn.Close(), "close");
  return 0;
}

// ---------------------------------------------------------------- allocations per record
enum class Form { Detached, Inline, Shared, Large };

static const char* FormName(Form f) {
  switch (f) {
    case Form::Detached: return "Append(row), no notification      ";
    case Form::Inline: return "Append(row, inline callback)      ";
    case Form::Shared: return "Append(row, SharedWriteCallback)  ";
    case Form::Large: return "Append(row, 40-byte callable)     ";
  }
  return "";
}

static std::atomic<uint64_t> g_done{0};

// One writer; a warm-up round of n records, then a counted round of n records (+ Flush).
static double AllocsPerRecord(Form form, size_t n, int run) {
  // A realistic name ("fluss.page_view_events_N", longer than std::string's inline buffer).
  E2E e = Open(run, "page_view_events_");
  fw::AppendWriter w;
  Check(e.table.NewAppend().CreateWriter(w), "writer");
  fw::GenericRow row(2);
  row.SetString(1, "payload-0123456789");
#ifdef FLUSS_WRITER_HAS_SHARED_WRITE_CALLBACK
  fw::SharedWriteCallback shared([](const fw::WriteCompletion& c) {
    if (c.Ok()) g_done.fetch_add(1, std::memory_order_relaxed);
  });
#endif
  std::array<uint64_t, 5> pad{1, 2, 3, 4, 5};
  uint64_t counted = 0;
  for (int round = 0; round < 2; ++round) {
    uint64_t before = Allocs();
    for (size_t i = 0; i < n; ++i) {
      row.SetInt64(0, static_cast<int64_t>(i));
      switch (form) {
        case Form::Detached:
          Check(w.AppendDetached(row), "append");
          break;
        case Form::Inline:
          Check(w.Append(row, [](const fw::WriteCompletion& c) {
            if (c.Ok()) g_done.fetch_add(1, std::memory_order_relaxed);
          }), "append");
          break;
        case Form::Shared:
#ifdef FLUSS_WRITER_HAS_SHARED_WRITE_CALLBACK
          Check(w.Append(row, shared), "append");
#endif
          break;
        case Form::Large:
          Check(w.Append(row, [pad](const fw::WriteCompletion& c) {
            if (c.Ok()) g_done.fetch_add(pad[0], std::memory_order_relaxed);
          }), "append");
          break;
      }
    }
    Check(w.Flush(), "flush");
    counted = Allocs() - before;
  }
  Check(w.Close(), "close");
  return static_cast<double>(counted) / static_cast<double>(n);
}

// Dispatcher only: allocations from making each callable to its release through
// RunThroughDispatcher, per callable (after a warm-up run), not counting the std::vector the
// callables are built in.
static double DispatchAllocsPerCallback(size_t n) {
  double per = 0;
  for (int round = 0; round < 2; ++round) {
    std::vector<fw::WriteCallback> cbs;
    cbs.reserve(n);
    uint64_t before = Allocs();  // from making each callable to its release
    for (size_t i = 0; i < n; ++i) {
      cbs.emplace_back([](const fw::WriteCompletion& c) { g_sink.fetch_add(c.table.size() & 1, std::memory_order_relaxed); });
    }
    (void)fw::testing::RunThroughDispatcher(std::move(cbs), 1024);
    per = static_cast<double>(Allocs() - before) / static_cast<double>(n);
  }
  return per;
}

static int AllocsMain(size_t n) {
  std::printf("allocations per record (malloc family, whole process, after warm-up), %zu records:\n", n);
  std::printf("  dispatcher only, inline no-op callback: %.3f per callback (incl. the library's per-job costs)\n",
              DispatchAllocsPerCallback(n));
  int run = 0;
  for (Form f : {Form::Detached, Form::Inline, Form::Shared, Form::Large}) {
#ifndef FLUSS_WRITER_HAS_SHARED_WRITE_CALLBACK
    if (f == Form::Shared) continue;
#endif
    std::printf("  e2e embedded, %s: %.3f per record\n", FormName(f), AllocsPerRecord(f, n, run++));
  }
  return 0;
}

static int DispatchMain(size_t n, int runs) {
  std::vector<double> v;
  DispatchRun(n);  // warm-up
  for (int i = 0; i < runs; ++i) v.push_back(DispatchRun(n));
  std::string all;
  for (double x : v) all += (all.empty() ? "" : " ") + std::to_string(x / 1e6).substr(0, 5);
  std::printf("dispatch: %zu no-op C++ callbacks x %d runs: median %.2f M callbacks/s (runs: %s)\n", n, runs,
              Median(v) / 1e6, all.c_str());
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "allocs") {
    return AllocsMain(argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200000);
  }
  if (argc > 1 && std::string(argv[1]) == "dispatch") {
    return DispatchMain(argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2000000, argc > 3 ? std::atoi(argv[3]) : 7);
  }
  if (argc > 1 && std::string(argv[1]) == "latency") {
    std::string bootstrap = argc > 2 ? argv[2] : "embedded";
    double rate = argc > 3 ? std::atof(argv[3]) : 20000;
    double secs = argc > 4 ? std::atof(argv[4]) : 3;
    return LatencyMain(bootstrap, rate, secs);
  }
  if (argc > 1 && std::string(argv[1]) == "cluster") {
    if (argc < 3) {
      std::fprintf(stderr, "usage: %s cluster <bootstrap> [records_100B] [rounds]\n", argv[0]);
      return 2;
    }
    size_t n = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 200000;
    int rounds = argc > 4 ? std::atoi(argv[4]) : 5;
    return ClusterMain(argv[2], n, rounds);
  }
  size_t dispatch_n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000000;
  size_t e2e_n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 300000;
  int runs = argc > 3 ? std::atoi(argv[3]) : 5;

  std::vector<double> dispatch;
  for (int i = 0; i < runs; ++i) dispatch.push_back(DispatchRun(dispatch_n));
  std::printf("dispatch: %zu no-op C++ callbacks x %d runs: median %.2f M callbacks/s (min %.2f, max %.2f)\n",
              dispatch_n, runs, Median(dispatch) / 1e6, *std::min_element(dispatch.begin(), dispatch.end()) / 1e6,
              *std::max_element(dispatch.begin(), dispatch.end()) / 1e6);

  // The four modes interleaved, each run in its own order (a rotation), and per-run ratios.
  std::vector<double> det, cb, res, wait, res_ratio, cb_ratio;
  for (int i = 0; i < runs; ++i) {
    double r[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; ++k) {
      int m = (k + i) % 4;
      int table = 4 * i + m;
      if (m == 0) r[0] = E2EDetached(e2e_n, table);
      if (m == 1) r[1] = E2ECallbacks(e2e_n, table);
      if (m == 2) r[2] = E2EResults(e2e_n, table);
      if (m == 3) r[3] = E2EWait(e2e_n, table);
    }
    det.push_back(r[0]);
    cb.push_back(r[1]);
    res.push_back(r[2]);
    wait.push_back(r[3]);
    res_ratio.push_back(r[2] / r[0]);
    cb_ratio.push_back(r[1] / r[0]);
  }
  std::printf("e2e: %zu appends x %d runs (embedded, 4 buckets)\n", e2e_n, runs);
  std::printf("  AppendDetached, Flush                  : median %.0f records/s\n", Median(det));
  std::printf("  Append + callback, Flush               : median %.0f records/s\n", Median(cb));
  std::printf("  Append + WriteResult, Flush, Wait each : median %.0f records/s\n", Median(res));
  std::printf("  Append + WriteResult, Wait thread      : median %.0f records/s\n", Median(wait));
  std::printf("  results / detached (median of runs)    : %.2fx (%.2f-%.2f)\n", Median(res_ratio),
              *std::min_element(res_ratio.begin(), res_ratio.end()), *std::max_element(res_ratio.begin(), res_ratio.end()));
  std::printf("  callbacks / detached (median of runs)  : %.2fx (%.2f-%.2f)\n", Median(cb_ratio),
              *std::min_element(cb_ratio.begin(), cb_ratio.end()), *std::max_element(cb_ratio.begin(), cb_ratio.end()));
  std::printf("  ratio callbacks / wait thread          : %.2fx\n", Median(cb) / Median(wait));
  return 0;
}
