// test_contract.cpp: the callback contract C1-C9 and C12 from C++ (C10 is Python's; C11 is in
// test_arrow_c.cpp and test_arrow_cpp.cpp).
#include <algorithm>
#include <array>
#include <cstdlib>
#include <new>
#include <map>
#include <set>

#include "test_util.h"

class Contract : public EmbeddedTest {};

// C1: every accepted operation's callback runs exactly once.
TEST_F(Contract, C1_ExactlyOnce) {
  fw::TablePath p = LogTable("c1", 3);
  fw::AppendWriter w = AppendWriterFor(p);
  constexpr int kN = 3000;
  std::vector<std::atomic<int>> calls(kN);
  for (int i = 0; i < kN; ++i) {
    ASSERT_OK(w.Append(Row(i), [&calls, i](const fw::WriteCompletion& c) {
      EXPECT_TRUE(c.Ok());
      calls[i]++;
    }));
  }
  ASSERT_OK(w.Flush());
  for (int i = 0; i < kN; ++i) ASSERT_EQ(calls[i].load(), 1) << i;
  EXPECT_EQ(w.Stats().callbacks_run, static_cast<uint64_t>(kN));
  EXPECT_EQ(w.Stats().pending_callbacks, 0u);
  // Every completed batch was timed from its acknowledgement to its callbacks.
  const fw::WriterStats st = w.Stats();
  EXPECT_GE(st.ack_to_callback_count, 1u);
  EXPECT_LE(st.ack_to_callback_p50_nanos, st.ack_to_callback_p99_nanos);
  EXPECT_LE(st.ack_to_callback_p99_nanos, st.ack_to_callback_max_nanos);
}

// C1 + C4: a non-retriable server error reaches the callback once, with its Fluss code.
TEST_F(Contract, C1_C4_ServerErrorDeliveredOnce) {
  fw::TablePath p = LogTable("c1err");
  ASSERT_OK(fw::testing::InjectFault(conn, p, 0, fw::testing::Fault::Error(38, "bad timestamp")));
  fw::AppendWriter w = AppendWriterFor(p);
  std::atomic<int> calls{0};
  std::atomic<int32_t> code{0};
  std::atomic<bool> retriable{true};
  ASSERT_OK(w.Append(Row(1), [&](const fw::WriteCompletion& c) {
    calls++;
    code = c.result.error_code;
    retriable = c.result.IsRetriable();
  }));
  ASSERT_OK(w.Flush());
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(code.load(), 38);
  EXPECT_FALSE(retriable.load());
}

// C2: never on the submitting thread; by default all on one worker thread.
TEST_F(Contract, C2_OnTheConnectionWorker) {
  fw::TablePath p = LogTable("c2", 4);
  fw::AppendWriter w = AppendWriterFor(p);
  std::mutex mu;
  std::set<std::thread::id> threads;
  for (int i = 0; i < 500; ++i) {
    ASSERT_OK(w.Append(Row(i), [&](const fw::WriteCompletion&) {
      std::lock_guard<std::mutex> g(mu);
      threads.insert(std::this_thread::get_id());
    }));
  }
  ASSERT_OK(w.Flush());
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_NE(*threads.begin(), std::this_thread::get_id());
}

// C3: same bucket in submission order, across retries of a retriable error.
TEST_F(Contract, C3_OrderPerBucketAcrossRetries) {
  fw::Configuration cfg;
  cfg.Set("client.writer.batch-size", "1kb").Set("client.writer.retry-backoff", "5ms");
  Open(cfg);
  fw::TablePath p = LogTable("c3");
  ASSERT_OK(fw::testing::InjectFault(conn, p, 0, fw::testing::Fault::Error(12, "not leader", 3)));
  fw::AppendWriter w = AppendWriterFor(p);
  std::mutex mu;
  std::vector<int> order;
  std::vector<int64_t> offsets;
  for (int i = 0; i < 400; ++i) {
    ASSERT_OK(w.Append(Row(i, std::string(40, 'x')), [&, i](const fw::WriteCompletion& c) {
      EXPECT_TRUE(c.Ok()) << c.result.ToString();
      std::lock_guard<std::mutex> g(mu);
      order.push_back(i);
      offsets.push_back(c.offset);
    }));
  }
  ASSERT_OK(w.Flush());
  ASSERT_EQ(order.size(), 400u);
  for (int i = 0; i < 400; ++i) {
    EXPECT_EQ(order[i], i);
    EXPECT_EQ(offsets[i], i);
  }
}

// C4: the completion says where the record went.
TEST_F(Contract, C4_WhereTheRecordWent) {
  fw::TablePath p = LogTable("c4", 4, true);
  fw::AppendWriter w = AppendWriterFor(p);
  std::mutex mu;
  std::map<int64_t, std::pair<int32_t, int64_t>> where;  // id -> (bucket, offset)
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK(w.Append(Row(i), [&, i](const fw::WriteCompletion& c) {
      EXPECT_EQ(c.table, "fluss.c4");
      EXPECT_GE(c.table_id, 0);
      EXPECT_EQ(c.partition_id, -1);
      std::lock_guard<std::mutex> g(mu);
      where[i] = {c.bucket, c.offset};
    }));
  }
  ASSERT_OK(w.Flush());
  int seen = 0;
  for (int b = 0; b < 4; ++b) {
    std::vector<fw::testing::ScannedRow> rows;
    ASSERT_OK(fw::testing::Scan(conn, p, b, 0, rows));
    for (const auto& r : rows) {
      auto it = where.find(r.row.GetInt64(0));
      ASSERT_NE(it, where.end());
      EXPECT_EQ(it->second.first, b);
      EXPECT_EQ(it->second.second, r.offset);
      seen++;
    }
  }
  EXPECT_EQ(seen, 100);
}

// C5: move-only captures; captures destroyed before the slot is released.
TEST_F(Contract, C5_MoveOnlyCapturesDestroyedBeforeSlotRelease) {
  fw::TablePath p = LogTable("c5");
  fw::WriteCallbackOptions o;
  o.max_pending_callbacks = 1;
  fw::AppendWriter w = AppendWriterFor(p, o);
  std::atomic<uint64_t> pending_at_destruction{99};
  std::atomic<bool> on_other_thread{false};
  struct Probe {
    fw::AppendWriter* w;
    std::atomic<uint64_t>* pending;
    std::atomic<bool>* other;
    std::thread::id main;
    ~Probe() {
      *pending = w->Stats().pending_callbacks;
      *other = std::this_thread::get_id() != main;
    }
  };
  auto probe = std::make_unique<Probe>(Probe{&w, &pending_at_destruction, &on_other_thread, std::this_thread::get_id()});
  std::atomic<int> ran{0};
  ASSERT_OK(w.Append(Row(1), [probe = std::move(probe), &ran](const fw::WriteCompletion& c) {
    EXPECT_TRUE(c.Ok());
    ran++;
  }));
  ASSERT_OK(w.Flush());
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(pending_at_destruction.load(), 1u);  // slot still held while captures die
  EXPECT_TRUE(on_other_thread.load());
  EXPECT_EQ(w.Stats().pending_callbacks, 0u);
}

// C5: with the budget at 0, a full writer fails fast with a distinct, retriable error, and the
// rejected callable is destroyed before the call returns and never runs.
TEST_F(Contract, C5_CapacityExhaustedFailsFastAndRetriable) {
  fw::Configuration cfg;
  cfg.Set("client.writer.buffer.wait-timeout", "0");
  Open(cfg);
  fw::TablePath p = LogTable("c5cap");
  fw::WriteCallbackOptions o;
  o.max_pending_callbacks = 1;
  fw::AppendWriter w = AppendWriterFor(p, o);
  // The only slot stays taken until the test releases it: Append(1)'s callback waits for
  // `release` (however long the test thread takes to reach Append(2)). Declared after the
  // writer, the promise dies first on an early exit, which also ends the wait.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  ASSERT_OK(w.Append(Row(1), [released](const fw::WriteCompletion&) { released.wait(); }));
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  std::atomic<int> ran{0};
  fw::Result r = w.Append(Row(2), [t = Tracked(destroyed), &ran](const fw::WriteCompletion&) { ran++; });
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::CapacityExhausted)) << r.ToString();
  EXPECT_TRUE(r.IsRetriable());
  EXPECT_EQ(destroyed->load(), 1);
  release.set_value();
  ASSERT_OK(w.Flush());
  EXPECT_EQ(ran.load(), 0);
}

// C6: Flush returns after earlier operations completed and their callbacks returned.
TEST_F(Contract, C6_FlushWaitsForCallbacks) {
  fw::TablePath p = LogTable("c6");
  fw::AppendWriter w = AppendWriterFor(p);
  std::atomic<int> done{0};
  for (int i = 0; i < 20; ++i) {
    ASSERT_OK(w.Append(Row(i), [&](const fw::WriteCompletion&) {
      std::this_thread::sleep_for(2ms);
      done++;
    }));
  }
  ASSERT_OK(w.Flush());
  EXPECT_EQ(done.load(), 20);
}

// C6: Flush, Close and Wait from inside a callback fail at once with a distinct error.
TEST_F(Contract, C6_ReentrancyFailsFast) {
  fw::TablePath p = LogTable("c6re");
  fw::AppendWriter w = AppendWriterFor(p);
  fw::WriteResult other;
  ASSERT_OK(w.Append(Row(0), other));
  ASSERT_OK(other.Wait());
  std::promise<std::vector<int32_t>> codes;
  ASSERT_OK(w.Append(Row(1), [&](const fw::WriteCompletion&) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<int32_t> v{w.Flush().error_code, w.Flush(10s).error_code, other.Wait().error_code,
                           conn.Close().error_code};
    // At once: a call that blocked would take Flush's 10 s or forever; 5 s leaves room for stalls.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
    codes.set_value(v);
  }));
  auto v = codes.get_future().get();
  for (int32_t c : v) EXPECT_EQ(c, Code(fw::ClientCode::CalledFromCallback));
  ASSERT_OK(w.Flush());
  // Close from a callback: fails with the same code, stops accepting, does not block.
  std::promise<int32_t> close_code;
  ASSERT_OK(w.Append(Row(2), [&](const fw::WriteCompletion&) { close_code.set_value(w.Close().error_code); }));
  EXPECT_EQ(close_code.get_future().get(), Code(fw::ClientCode::CalledFromCallback));
  EXPECT_EQ(w.AppendDetached(Row(3)).error_code, Code(fw::ClientCode::WriterClosed));
}

// C7: Close with a timeout completes what is still pending with an error, exactly once.
TEST_F(Contract, C7_CloseTimeoutCompletesPendingOnce) {
  fw::TablePath p = LogTable("c7");
  // The answer is held 4.5 s: no stall (up to ~3 s) around Close(100ms) lets it arrive before
  // close gives up, and the 4 s bound below still tells the two completions apart.
  ASSERT_OK(fw::testing::InjectFault(conn, p, 0, fw::testing::Fault::Delay(4500ms)));
  fw::AppendWriter w = AppendWriterFor(p);
  std::atomic<int> calls{0};
  std::promise<int32_t> code;
  // Taken before the append: the request goes out after it, so its answer comes 4.5 s or more later.
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_OK(w.Append(Row(1), [&](const fw::WriteCompletion& c) {
    calls++;
    code.set_value(c.result.error_code);
  }));
  // Close once the request is in flight (the engine applies a write at once and holds only the
  // answer), so that a late answer surely comes; a close before the send would never send it.
  int64_t hw = 0;
  for (auto until = std::chrono::steady_clock::now() + 10s; hw == 0 && std::chrono::steady_clock::now() < until;) {
    ASSERT_OK(fw::testing::HighWatermark(conn, p, 0, hw));
    if (hw == 0) std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(hw, 1) << "the request never reached the engine";
  auto answered_by = std::chrono::steady_clock::now() + 4700ms;
  fw::Result r = w.Close(100ms);
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::Timeout)) << r.ToString();
  // The pending operation completes with WriterClosed, before the delayed answer could arrive.
  auto f = code.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get(), Code(fw::ClientCode::WriterClosed));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s);
  EXPECT_EQ(w.AppendDetached(Row(2)).error_code, Code(fw::ClientCode::WriterClosed));
  // The late answer arrives 4.5 s after the request reached the engine and must not call back
  // again: wait until then, and a moment longer for a wrong second callback to run.
  std::this_thread::sleep_until(answered_by);
  EXPECT_EQ(calls.load(), 1);
}

// C7: destroying a writer with pending callbacks drains them first.
TEST_F(Contract, C7_DestructionWithPendingCallbacks) {
  fw::TablePath p = LogTable("c7drop");
  ASSERT_OK(fw::testing::InjectFault(conn, p, 0, fw::testing::Fault::Delay(200ms)));
  std::atomic<int> calls{0};
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  {
    fw::AppendWriter w = AppendWriterFor(p);
    for (int i = 0; i < 50; ++i) {
      ASSERT_OK(w.Append(Row(i), [&calls, t = Tracked(destroyed)](const fw::WriteCompletion& c) {
        EXPECT_TRUE(c.Ok());
        calls++;
      }));
    }
  }
  EXPECT_EQ(calls.load(), 50);
  EXPECT_EQ(destroyed->load(), 50);
}

// C7: destroying a writer inside one of its callbacks does not block.
TEST_F(Contract, C7_DestroyWriterInsideCallback) {
  fw::TablePath p = LogTable("c7in");
  auto holder = std::make_shared<std::unique_ptr<fw::AppendWriter>>(
      std::make_unique<fw::AppendWriter>(AppendWriterFor(p)));
  std::atomic<int> calls{0};
  std::promise<void> destroyed;
  fw::AppendWriter* w = holder->get();
  for (int i = 0; i < 10; ++i) ASSERT_OK(w->Append(Row(i), [&](const fw::WriteCompletion&) { calls++; }));
  ASSERT_OK(w->Append(Row(10), [holder, &destroyed](const fw::WriteCompletion&) {
    holder->reset();
    destroyed.set_value();
  }));
  ASSERT_EQ(destroyed.get_future().wait_for(10s), std::future_status::ready);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(calls.load(), 10);
}

// C8: a throwing callback affects no other callback; the error handler hears of it.
TEST_F(Contract, C8_ThrowingCallbacksAreIsolated) {
  fw::TablePath p = LogTable("c8");
  std::mutex mu;
  std::vector<fw::CallbackError> errors;
  fw::WriteCallbackOptions o;
  o.error_handler = [&](const fw::CallbackError& e) {
    std::lock_guard<std::mutex> g(mu);
    errors.push_back(e);
  };
  fw::AppendWriter w = AppendWriterFor(p, o);
  std::atomic<int> ok{0};
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  for (int i = 0; i < 30; ++i) {
    ASSERT_OK(w.Append(Row(i), [&ok, i, t = Tracked(destroyed)](const fw::WriteCompletion&) {
      if (i % 10 == 3) throw std::runtime_error("boom " + std::to_string(i));
      if (i % 10 == 7) throw 42;
      ok++;
    }));
  }
  ASSERT_OK(w.Flush());
  EXPECT_EQ(ok.load(), 24);
  EXPECT_EQ(destroyed->load(), 30);
  EXPECT_EQ(w.Stats().callback_errors, 6u);
  std::lock_guard<std::mutex> g(mu);
  ASSERT_EQ(errors.size(), 6u);
  EXPECT_NE(errors[0].message.find("boom 3"), std::string::npos) << errors[0].message;
  EXPECT_NE(errors[0].operation.find("fluss.c8"), std::string::npos) << errors[0].operation;
  EXPECT_NE(errors[1].message.find("unknown exception"), std::string::npos) << errors[1].message;
}

// C9: sharded workers keep per-bucket order.
TEST_F(Contract, C9_ShardedKeepsBucketOrder) {
  fw::TablePath p = LogTable("c9", 8, true);
  fw::AppendWriter w = AppendWriterFor(p, fw::WriteCallbackOptions::Sharded(4));
  std::mutex mu;
  std::map<int32_t, std::vector<int64_t>> offsets;
  std::set<std::thread::id> threads;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_OK(w.Append(Row(i), [&](const fw::WriteCompletion& c) {
      std::lock_guard<std::mutex> g(mu);
      offsets[c.bucket].push_back(c.offset);
      threads.insert(std::this_thread::get_id());
    }));
  }
  ASSERT_OK(w.Flush());
  size_t total = 0;
  for (auto& [b, v] : offsets) {
    total += v.size();
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end())) << "bucket " << b;
  }
  EXPECT_EQ(total, 2000u);
  EXPECT_GE(threads.size(), 1u);
  EXPECT_LE(threads.size(), 4u);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
}

// C9: a user executor receives jobs and runs them on its own thread; a dropped job releases
// its slots and is reported.
class ThreadExecutor : public fw::CallbackExecutor {
 public:
  ThreadExecutor() : thread_([this] { Loop(); }) {}
  ~ThreadExecutor() override {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Execute(fw::Job job) override {
    {
      std::lock_guard<std::mutex> g(mu_);
      jobs_.push_back(std::move(job));
      executed_++;
    }
    cv_.notify_all();
  }
  std::thread::id id() const { return thread_.get_id(); }
  std::atomic<int> executed_{0};
  std::atomic<bool> drop_next{false};

 private:
  void Loop() {
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      cv_.wait(lk, [this] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      fw::Job j = std::move(jobs_.front());
      jobs_.erase(jobs_.begin());
      lk.unlock();
      if (drop_next.exchange(false)) {
        // destroyed unrun
      } else {
        j.Run();
      }
      lk.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<fw::Job> jobs_;
  bool stop_ = false;
  std::thread thread_;
};

TEST_F(Contract, C9_UserExecutor) {
  fw::TablePath p = LogTable("c9user");
  auto exec = std::make_shared<ThreadExecutor>();
  std::atomic<int> errors{0};
  fw::WriteCallbackOptions o = fw::WriteCallbackOptions::User(exec);
  o.error_handler = [&](const fw::CallbackError&) { errors++; };
  fw::AppendWriter w = AppendWriterFor(p, o);
  std::atomic<int> on_exec{0};
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK(w.Append(Row(i), [&](const fw::WriteCompletion&) {
      if (std::this_thread::get_id() == exec->id()) on_exec++;
    }));
  }
  ASSERT_OK(w.Flush());
  EXPECT_EQ(on_exec.load(), 100);
  EXPECT_GE(exec->executed_.load(), 1);
  // A job destroyed without running: its callback never runs, flush does not hang.
  exec->drop_next = true;
  std::atomic<int> ran{0};
  ASSERT_OK(w.Append(Row(1000), [&](const fw::WriteCompletion&) { ran++; }));
  ASSERT_OK(w.Flush(10s));
  EXPECT_EQ(ran.load(), 0);
  EXPECT_GE(errors.load(), 1);
  EXPECT_EQ(w.Stats().pending_callbacks, 0u);
  ASSERT_OK(w.Close());
}

// Fault injection: a dropped connection after the write was applied is retried idempotently
// without duplicating data.
TEST_F(Contract, FaultDropConnectionAfterApplyNoDuplicates) {
  fw::Configuration cfg;
  cfg.Set("client.writer.retry-backoff", "5ms");
  Open(cfg);
  fw::TablePath p = LogTable("dropconn");
  ASSERT_OK(fw::testing::InjectFault(conn, p, 0, fw::testing::Fault::DropConnection(true, 1)));
  fw::AppendWriter w = AppendWriterFor(p);
  std::atomic<int> ok{0};
  for (int i = 0; i < 20; ++i) {
    ASSERT_OK(w.Append(Row(i), [&](const fw::WriteCompletion& c) {
      if (c.Ok()) ok++;
    }));
  }
  ASSERT_OK(w.Flush());
  EXPECT_EQ(ok.load(), 20);
  int64_t hw = -1;
  ASSERT_OK(fw::testing::HighWatermark(conn, p, 0, hw));
  EXPECT_EQ(hw, 20);
}

// C12: no per-record allocation in C++ beyond the callable itself.
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

// Issue 11, defect 10: an inline callable (here a lambda capturing one reference) costs no C++
// allocation at all: not for the callable, not for the completion or its table name (the old
// binding made one allocation per callable plus the name's). The name is longer than
// std::string's inline buffer on purpose.
TEST_F(Contract, C12_NoCxxAllocationPerInlineCallback) {
  fw::TablePath p = LogTable("c12_page_view_events");
  fw::AppendWriter w = AppendWriterFor(p);
  fw::GenericRow row = Row(1, "short");
  std::atomic<int> n{0};
  constexpr int kN = 2000;
  g_allocs = 0;
  g_counting = true;
  for (int i = 0; i < kN; ++i) {
    fw::Result r = w.Append(row, [&n](const fw::WriteCompletion& c) {
      if (c.table == "fluss.c12_page_view_events") n++;
    });
    if (!r.Ok()) break;
  }
  fw::Result f = w.Flush();
  g_counting = false;
  ASSERT_TRUE(f.Ok());
  EXPECT_EQ(n.load(), kN);
  EXPECT_LE(g_allocs.load(), 16) << "C++ allocations for " << kN << " inline callbacks";
}

// The shared form: one callable for every record, no C++ allocation per record.
TEST_F(Contract, C12_SharedCallbackNoCxxAllocationPerRecord) {
  fw::TablePath p = LogTable("c12shared");
  fw::AppendWriter w = AppendWriterFor(p);
  fw::GenericRow row = Row(1, "short");
  std::atomic<int> n{0};
  fw::SharedWriteCallback cb([&n](const fw::WriteCompletion& c) {
    if (c.Ok()) n++;
  });
  constexpr int kN = 2000;
  g_allocs = 0;
  g_counting = true;
  for (int i = 0; i < kN; ++i) {
    fw::Result r = w.Append(row, cb);
    if (!r.Ok()) break;
  }
  fw::Result f = w.Flush();
  g_counting = false;
  ASSERT_TRUE(f.Ok());
  EXPECT_EQ(n.load(), kN);
  EXPECT_LE(g_allocs.load(), 16) << "C++ allocations for " << kN << " shared callbacks";
}

// A callable too large for the inline buffer still works (one allocation each).
TEST_F(Contract, C12_LargeCallableOneCxxAllocation) {
  fw::TablePath p = LogTable("c12");
  fw::AppendWriter w = AppendWriterFor(p);
  fw::GenericRow row = Row(1, "short");
  std::atomic<int> n{0};
  constexpr int kN = 2000;
  std::array<int64_t, 4> pad{1, 1, 1, 1};
  g_allocs = 0;
  g_counting = true;
  for (int i = 0; i < kN; ++i) {
    fw::Result r = w.Append(row, [&n, pad](const fw::WriteCompletion&) { n += static_cast<int>(pad[0]); });
    if (!r.Ok()) break;
  }
  fw::Result f = w.Flush();
  g_counting = false;
  ASSERT_TRUE(f.Ok());
  EXPECT_EQ(n.load(), kN);
  EXPECT_LE(g_allocs.load(), kN + 16) << "C++ allocations for " << kN << " callbacks";
}
