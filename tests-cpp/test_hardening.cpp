// test_hardening.cpp: issue 11 from C++: configuration (defect 1), panics and timeouts at the
// FFI boundary (6), dropped-job stats (9), shared callbacks and completion names (10), the
// bounded writer destructor (11), and fuzz-like bad input for row setters and the Arrow C Data
// Interface import (a clear error, nothing accepted, no crash under ASan/UBSan).
#include <array>
#include <cstring>
#include <limits>
#include <random>

#include "arrow_c_producer.h"
#include "fluss_writer_test_hooks.hpp"  // ForcePanicInNextCall
#include "test_util.h"

class Hardening : public EmbeddedTest {
 protected:
  int64_t Hw(const fw::TablePath& p, int32_t bucket = 0) {
    int64_t hw = -1;
    fw::Result r = fw::testing::HighWatermark(conn, p, bucket, hw);
    EXPECT_TRUE(r.Ok()) << r.ToString();
    return hw;
  }
};

// ===== defect 6: panics become Internal, timeouts of any size =====

TEST_F(Hardening, ForcedPanicInAWriteIsInternalAndDestroysTheCallable) {
  fw::TablePath p = LogTable("panicwrite");
  fw::AppendWriter w = AppendWriterFor(p);
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  std::atomic<int> ran{0};
  fw::GenericRow row = Row(1);  // (making a row is a bridge call too)
  fw::WriteCallback cb = [t = Tracked(destroyed), &ran](const fw::WriteCompletion&) { ran++; };
  fw::testing::ForcePanicInNextCall();
  fw::Result r = w.Append(row, std::move(cb));
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::Internal)) << r.ToString();
  EXPECT_NE(r.error_message.find("panic"), std::string::npos) << r.error_message;
  EXPECT_EQ(destroyed->load(), 1);
  // The process and the writer are fine; nothing was written.
  ASSERT_OK(w.Append(Row(2), [&ran](const fw::WriteCompletion& c) {
    if (c.Ok()) ran++;
  }));
  ASSERT_OK(w.Flush());
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(Hw(p), 1);
}

TEST_F(Hardening, ForcedPanicEverywhereKeepsTheProcessAlive) {
  fw::TablePath p = LogTable("paniceverywhere");
  fw::AppendWriter w = AppendWriterFor(p);
  fw::Configuration cfg;
  cfg.bootstrap_servers = "embedded";
  fw::Connection c2;
  fw::testing::ForcePanicInNextCall();
  EXPECT_EQ(fw::Connection::Create(cfg, c2).error_code, Code(fw::ClientCode::Internal));
  EXPECT_FALSE(c2.Available());
  fw::testing::ForcePanicInNextCall();
  EXPECT_EQ(w.Flush(std::chrono::milliseconds::max()).error_code, Code(fw::ClientCode::Internal));
  fw::testing::ForcePanicInNextCall();
  fw::Table t;
  EXPECT_EQ(conn.GetTable(p, t).error_code, Code(fw::ClientCode::Internal));
  // Calls that return no Result: a neutral value, no crash.
  fw::GenericRow row(2);
  fw::testing::ForcePanicInNextCall();
  row.SetInt64(0, 5);  // the setter panicked: the field stays null
  row.SetString(1, "x");
  fw::testing::ForcePanicInNextCall();
  fw::WriterStats st = w.Stats();
  EXPECT_EQ(st.callbacks_run, 0u);
  {
    fw::AppendWriter doomed = AppendWriterFor(p);
    fw::testing::ForcePanicInNextCall();
  }  // the destructor's guarded call panicked: no abort
  // A user executor path: the job runs through guarded calls too.
  ASSERT_OK(w.AppendDetached(Row(7)));
  ASSERT_OK(w.Flush());
  EXPECT_EQ(Hw(p), 1);
}

TEST_F(Hardening, HugeTimeoutsAreUnboundedNotPanics) {
  fw::TablePath p = LogTable("hugetimeouts");
  ASSERT_OK(fw::testing::InjectFault(conn, p, 0, fw::testing::Fault::Delay(150ms)));
  fw::AppendWriter w = AppendWriterFor(p);
  fw::WriteResult res;
  ASSERT_OK(w.Append(Row(1), res));
  ASSERT_OK(res.Wait(std::chrono::milliseconds::max()));
  ASSERT_OK(w.AppendDetached(Row(2)));
  ASSERT_OK(w.Flush(std::chrono::milliseconds::max()));
  ASSERT_OK(w.Flush(std::chrono::milliseconds(std::numeric_limits<int64_t>::max() / 2)));
  ASSERT_OK(w.Close(std::chrono::milliseconds::max()));
  ASSERT_OK(conn.Close(std::chrono::milliseconds::max()));
}

TEST_F(Hardening, ExecutorSizesAreCheckedByTheCore) {
  fw::TablePath p = LogTable("executorsizes");
  fw::Table t;
  ASSERT_OK(conn.GetTable(p, t));
  for (size_t n : {size_t{0}, size_t{65}, size_t{1000000}, std::numeric_limits<size_t>::max()}) {
    fw::AppendWriter w;
    fw::Result r = t.NewAppend().CreateWriter(w, fw::WriteCallbackOptions::Sharded(n));
    EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidConfig)) << n << ": " << r.ToString();
    EXPECT_FALSE(w.Available());
  }
  fw::WriteCallbackOptions o;
  o.max_pending_callbacks = 0;
  fw::AppendWriter w;
  EXPECT_EQ(t.NewAppend().CreateWriter(w, o).error_code, Code(fw::ClientCode::InvalidConfig));
  ASSERT_OK(t.NewAppend().CreateWriter(w, fw::WriteCallbackOptions::Sharded(64)));
}

// ===== defect 9: dropped jobs are counted =====

namespace {
// Destroys every job without running it (an executor that was shut down).
struct DroppingExecutor : fw::CallbackExecutor {
  std::atomic<int> jobs{0};
  void Execute(fw::Job job) override {
    jobs++;
    fw::Job gone = std::move(job);
  }
};
// Refuses every job by throwing.
struct ThrowingExecutor : fw::CallbackExecutor {
  void Execute(fw::Job) override { throw std::runtime_error("executor is shut down"); }
};
}  // namespace

TEST_F(Hardening, DroppedJobsAreCountedInStats) {
  for (int kind = 0; kind < 2; ++kind) {
    fw::TablePath p = LogTable("dropped" + std::to_string(kind));
    std::shared_ptr<fw::CallbackExecutor> ex;
    if (kind == 0) {
      ex = std::make_shared<DroppingExecutor>();
    } else {
      ex = std::make_shared<ThrowingExecutor>();
    }
    fw::WriteCallbackOptions o = fw::WriteCallbackOptions::User(ex);
    std::atomic<int> handler_calls{0};
    o.error_handler = [&handler_calls](const fw::CallbackError&) { handler_calls++; };
    fw::AppendWriter w = AppendWriterFor(p, o);
    auto destroyed = std::make_shared<std::atomic<int>>(0);
    std::atomic<int> ran{0};
    for (int i = 0; i < 3; ++i) {
      ASSERT_OK(w.Append(Row(i), [t = Tracked(destroyed), &ran](const fw::WriteCompletion&) { ran++; }));
    }
    ASSERT_OK(w.Flush(10s));
    const fw::WriterStats st = w.Stats();
    EXPECT_EQ(ran.load(), 0);
    EXPECT_EQ(destroyed->load(), 3);
    EXPECT_GE(st.jobs_dropped, 1u) << "kind " << kind;
    EXPECT_EQ(st.callback_errors, st.jobs_dropped) << "kind " << kind;
    EXPECT_EQ(static_cast<uint64_t>(handler_calls.load()), st.jobs_dropped) << "kind " << kind;
    EXPECT_EQ(st.pending_callbacks, 0u);
  }
}

// ===== defect 10: shared callbacks, the completion's table name =====

TEST_F(Hardening, SharedCallbackRunsOncePerRecordAndIsDestroyedOnce) {
  fw::TablePath p = LogTable("sharedcb", 3);
  fw::AppendWriter w = AppendWriterFor(p);
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  auto calls = std::make_shared<std::vector<std::atomic<int>>>(300);
  {
    fw::SharedWriteCallback cb([t = std::make_shared<Tracked>(destroyed), calls](const fw::WriteCompletion& c) {
      EXPECT_TRUE(c.Ok());
      EXPECT_EQ(c.table, "fluss.sharedcb");
    });
    fw::SharedWriteCallback copy = cb;
    for (int i = 0; i < 300; ++i) ASSERT_OK(w.Append(Row(i), i % 2 ? cb : copy));
  }
  // The handles are gone; the pending records keep the callable alive.
  ASSERT_OK(w.Flush());
  EXPECT_EQ(w.Stats().callbacks_run, 300u);
  EXPECT_EQ(destroyed->load(), 1);
  // Throwing shared callbacks are reported, once per record.
  std::atomic<int> errors{0};
  fw::WriteCallbackOptions o;
  o.error_handler = [&errors](const fw::CallbackError& e) {
    if (e.message.find("shared boom") != std::string::npos) errors++;
  };
  fw::AppendWriter w2 = AppendWriterFor(p, o);
  fw::SharedWriteCallback thrower([](const fw::WriteCompletion&) { throw std::runtime_error("shared boom"); });
  for (int i = 0; i < 5; ++i) ASSERT_OK(w2.Append(Row(i), thrower));
  ASSERT_OK(w2.Flush());
  EXPECT_EQ(errors.load(), 5);
  EXPECT_EQ(w2.Append(Row(1), fw::SharedWriteCallback()).error_code, Code(fw::ClientCode::Unsupported));
}

TEST_F(Hardening, SharedCallbackOnUpsertAndDelete) {
  fw::TablePath p = PkTable("sharedpk");
  fw::Table t;
  ASSERT_OK(conn.GetTable(p, t));
  fw::UpsertWriter w;
  ASSERT_OK(t.NewUpsert().CreateWriter(w));
  std::atomic<int> ok{0};
  fw::SharedWriteCallback cb([&ok](const fw::WriteCompletion& c) {
    if (c.Ok() && c.table == "fluss.sharedpk") ok++;
  });
  fw::GenericRow row(3);
  row.SetInt32(0, 1);
  row.SetString(1, "a");
  row.SetInt64(2, 3);
  ASSERT_OK(w.Upsert(row, cb));
  fw::GenericRow key(1);
  key.SetInt32(0, 1);
  ASSERT_OK(w.Delete(key, cb));
  ASSERT_OK(w.Flush());
  EXPECT_EQ(ok.load(), 2);
}

TEST_F(Hardening, CompletionNameIsAViewACopyOwnsIt) {
  const std::string name = "a_table_name_longer_than_any_small_string_buffer";
  fw::TablePath p = LogTable(name);
  fw::AppendWriter w = AppendWriterFor(p);
  std::promise<fw::WriteCompletion> kept;
  ASSERT_OK(w.Append(Row(1), [&kept](const fw::WriteCompletion& c) { kept.set_value(c); }));
  ASSERT_OK(w.Append(Row(2), [](const fw::WriteCompletion&) {}));  // reuses the name buffer
  ASSERT_OK(w.Flush());
  fw::WriteCompletion c = kept.get_future().get();
  EXPECT_EQ(c.table, "fluss." + name);
  fw::WriteCompletion moved = std::move(c);
  EXPECT_EQ(moved.table, "fluss." + name);
  fw::WriteCompletion assigned;
  assigned = moved;
  EXPECT_EQ(assigned.table, "fluss." + name);
  fw::WriteResult res;
  ASSERT_OK(w.Append(Row(3), res));
  fw::WriteCompletion waited;
  ASSERT_OK(res.Wait(&waited));
  res = fw::WriteResult();  // the Rust completion is gone; the name is owned
  EXPECT_EQ(waited.table, "fluss." + name);
  EXPECT_EQ(waited.offset, 2);
}

// ===== defect 11: the destructor is bounded by close_timeout =====

TEST_F(Hardening, DestructorIsBoundedByCloseTimeoutAndCallbacksCompleteOnce) {
  fw::TablePath p = LogTable("boundeddtor");
  ASSERT_OK(fw::testing::InjectFault(conn, p, 0, fw::testing::Fault::Delay(4000ms)));
  auto calls = std::make_shared<std::array<std::atomic<int>, 3>>();
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  fw::WriteCallbackOptions o;
  o.close_timeout = 300ms;
  auto t0 = std::chrono::steady_clock::now();
  {
    fw::AppendWriter w = AppendWriterFor(p, o);
    for (int i = 0; i < 3; ++i) {
      ASSERT_OK(w.Append(Row(i), [calls, i, t = Tracked(destroyed)](const fw::WriteCompletion& c) {
        EXPECT_FALSE(c.Ok());
        (*calls)[static_cast<size_t>(i)]++;
      }));
    }
    t0 = std::chrono::steady_clock::now();
  }
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(took, 1500ms) << "the destructor blocked for "
                          << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (destroyed->load() < 3 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(4500ms - (std::chrono::steady_clock::now() - t0));  // the late response
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*calls)[static_cast<size_t>(i)].load(), 1) << i;
  EXPECT_EQ(destroyed->load(), 3);
}

// ===== defect 1: bootstrap.servers as a property =====

// Issue 27, defect 3: no address is InvalidConfig saying what to pass, never the embedded engine.
TEST(Configuration, NoAddressIsInvalidConfigSayingWhatToPass) {
  const std::string forms =
      ": pass \"host:port[,host:port]\" for a Fluss cluster, or \"embedded\" (in memory) / "
      "\"embedded:/path\" (durable) for the embedded engine";
  fw::Configuration none;
  EXPECT_TRUE(none.bootstrap_servers.empty());  // not set
  none.Set("client.writer.batch-timeout", "5ms");
  fw::Connection c;
  fw::Result r = fw::Connection::Create(none, c);
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidConfig)) << r.ToString();
  EXPECT_EQ(r.error_message, "bootstrap.servers is not set" + forms);
  EXPECT_FALSE(c.Available());
  fw::Configuration empty_property;
  empty_property.Set("bootstrap.servers", "");
  r = fw::Connection::Create(empty_property, c);
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidConfig)) << r.ToString();
  EXPECT_EQ(r.error_message, "bootstrap.servers is empty" + forms);
  fw::Configuration blank;
  blank.bootstrap_servers = "  ";  // not empty, so given: a blank address
  r = fw::Connection::Create(blank, c);
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidConfig)) << r.ToString();
  EXPECT_EQ(r.error_message, "bootstrap.servers is empty" + forms);
  EXPECT_FALSE(c.Available());
}

TEST(Configuration, UnknownKeysOfOtherClientsGetADidYouMean) {
  fw::Configuration cfg;
  cfg.bootstrap_servers = "embedded";
  cfg.Set("writer.batch-timeout-ms", "100");
  fw::Connection c;
  fw::Result r = fw::Connection::Create(cfg, c);
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidConfig)) << r.ToString();
  EXPECT_NE(r.error_message.find("did you mean \"client.writer.batch-timeout\""), std::string::npos) << r.ToString();
}

TEST(Configuration, BootstrapServersPropertyIsHonoured) {
  int64_t hw = 0;

  // Only the property, an unreachable address: never the embedded engine.
  fw::Configuration net;
  net.Set("bootstrap.servers", "127.0.0.1:1").Set("client.request-timeout", "500ms");
  fw::Connection c;
  fw::Result r = fw::Connection::Create(net, c);
  if (r.Ok()) {
    fw::Result e = fw::testing::HighWatermark(c, fw::TablePath("fluss", "none"), 0, hw);
    EXPECT_EQ(e.error_code, Code(fw::ClientCode::Unsupported)) << "opened the embedded engine: " << e.ToString();
    fw::Admin admin;
    ASSERT_OK(c.GetAdmin(admin));
    bool exists = true;
    EXPECT_FALSE(admin.DatabaseExists("fluss", exists).Ok());
  } else {
    EXPECT_NE(r.error_code, Code(fw::ClientCode::InvalidConfig)) << r.ToString();
  }

  // Both, different: InvalidConfig. Both, equal (after trimming): fine.
  fw::Configuration both;
  both.bootstrap_servers = "embedded";
  both.Set("bootstrap.servers", "127.0.0.1:1");
  fw::Connection c2;
  r = fw::Connection::Create(both, c2);
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidConfig)) << r.ToString();
  EXPECT_FALSE(c2.Available());
  fw::Configuration same;
  same.bootstrap_servers = "embedded";
  same.Set("bootstrap.servers", " embedded ");
  fw::Connection c3;
  ASSERT_OK(fw::Connection::Create(same, c3));
}

// ===== fuzz-like: row setters =====

TEST_F(Hardening, FuzzRowSettersClearErrorsNothingAcceptedNoCrash) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("b", fw::DataType::Boolean())
                 .AddColumn("i", fw::DataType::Int(), false)
                 .AddColumn("s", fw::DataType::String())
                 .AddColumn("y", fw::DataType::Bytes())
                 .AddColumn("d", fw::DataType::Decimal(10, 2))
                 .AddColumn("t", fw::DataType::TimestampLtz(6))
                 .AddColumn("dt", fw::DataType::Date())
                 .Build();
  fw::TablePath p("fluss", "fuzzrows");
  ASSERT_OK(admin.CreateTable(p, d));
  fw::AppendWriter w = AppendWriterFor(p);
  std::mt19937_64 rng(11);
  auto pick = [&rng](uint64_t n) { return static_cast<size_t>(rng() % n); };
  const size_t kIdx[] = {0, 1, 2, 3, 4, 5, 6, 7, 100, 70000, size_t{1} << 40, std::numeric_limits<size_t>::max()};
  const std::string kBadUtf8[] = {"\xff", "a\xc3", "\xed\xa0\x80", std::string("nul\0in", 6), ""};
  int accepted = 0;
  int rejected = 0;
  const auto until = std::chrono::steady_clock::now() + 8s;
  for (int iter = 0; iter < 3000 && std::chrono::steady_clock::now() < until; ++iter) {
    fw::GenericRow row(7);
    row.SetBool(0, true);
    row.SetInt32(1, iter);
    int ops = 1 + static_cast<int>(pick(4));
    for (int k = 0; k < ops; ++k) {
      size_t i = pick(5) == 0 ? kIdx[pick(std::size(kIdx))] : pick(7);
      switch (pick(12)) {
        case 0: row.SetNull(i); break;
        case 1: row.SetInt64(i, static_cast<int64_t>(rng())); break;
        case 2: row.SetString(i, kBadUtf8[pick(std::size(kBadUtf8))]); break;
        case 3: row.SetBytes(i, nullptr, pick(3) == 0 ? 0 : 16); break;
        case 4: row.SetDecimal(i, static_cast<int64_t>(rng()), static_cast<int32_t>(rng() % 80) - 20,
                               static_cast<int32_t>(rng() % 80) - 20); break;
        case 5: {
          const char* kDec[] = {"99999999999999999999999999999999999999999", "-x1", "\xff" "12", "", " 12 "};
          row.SetDecimal(i, std::string_view(kDec[pick(5)]), 10, 2);
          break;
        }
        case 6: row.SetTimestampLtz(i, static_cast<int64_t>(rng()), static_cast<int32_t>(rng())); break;
        case 7: row.SetFloat64(i, pick(2) ? std::numeric_limits<double>::quiet_NaN() : 1e308); break;
        case 8: row.Resize(pick(3) == 0 ? kIdx[pick(std::size(kIdx))] : pick(9)); break;
        case 9: row.SetInt8(i, static_cast<int8_t>(rng())); break;
        case 10: row.SetDate(i, static_cast<int32_t>(rng())); break;
        default: row.SetTime(i, static_cast<int32_t>(rng())); break;
      }
    }
    auto destroyed = std::make_shared<std::atomic<int>>(0);
    fw::Result r = w.Append(row, [t = Tracked(destroyed)](const fw::WriteCompletion& c) { EXPECT_TRUE(c.Ok()); });
    if (r.Ok()) {
      accepted++;
    } else {
      rejected++;
      ASSERT_EQ(r.error_code, Code(fw::ClientCode::InvalidRow)) << r.ToString();
      ASSERT_FALSE(r.error_message.empty());
      ASSERT_EQ(destroyed->load(), 1);
    }
  }
  ASSERT_OK(w.Flush());
  // Names that are not UTF-8 are errors, not exceptions.
  fw::Table t;
  EXPECT_FALSE(conn.GetTable(fw::TablePath("fluss", "bad\xffname"), t).Ok());
  EXPECT_FALSE(admin.CreateDatabase("\xc3").Ok());
  EXPECT_GT(rejected, 100);
  EXPECT_GT(accepted, 10);
  EXPECT_EQ(Hw(p), accepted);  // exactly the accepted rows were written
}

// ===== fuzz-like: the Arrow C Data Interface import =====

namespace {
// A fresh valid batch (id BIGINT NOT NULL, msg STRING) with `rows` rows, then `mutate`.
struct Batch {
  ArrowArray array;
  ArrowSchema schema;
  explicit Batch(int64_t rows) {
    std::vector<int64_t> ids(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) ids[static_cast<size_t>(i)] = i;
    producer::MakeArray(ids, &array);
    producer::MakeSchema(&schema);
  }
  ~Batch() {
    if (array.release != nullptr) array.release(&array);
    if (schema.release != nullptr) schema.release(&schema);
  }
  producer::ColumnData& data() { return *static_cast<producer::ColumnData*>(array.private_data); }
};

struct Mutation {
  const char* name;
  void (*apply)(Batch& b);
};

const void* g_null_buffers[3] = {nullptr, nullptr, nullptr};
ArrowArray* g_null_children[2] = {nullptr, nullptr};
const int32_t g_bad_offsets[5] = {0, 2, 1, 5, 6};   // not monotonic (within the data)
const int32_t g_neg_offsets[5] = {-4, -3, -2, -1, -1};

const Mutation kMutations[] = {
    {"negative length", [](Batch& b) { b.array.length = -1; }},
    {"length beyond the children", [](Batch& b) { b.array.length = 1000; }},
    {"negative offset", [](Batch& b) { b.array.offset = -3; }},
    {"offset beyond the children", [](Batch& b) { b.array.offset = 2; }},
    {"huge length", [](Batch& b) { b.array.length = std::numeric_limits<int64_t>::max(); }},
    {"null_count above length", [](Batch& b) { b.array.null_count = 99; }},
    {"null_count below -1", [](Batch& b) { b.array.null_count = -7; }},
    {"nulls without a validity buffer", [](Batch& b) { b.data().id_child.null_count = 1; }},
    {"struct buffer count", [](Batch& b) { b.array.n_buffers = 3; }},
    {"child buffer count", [](Batch& b) { b.data().msg_child.n_buffers = 2; }},
    {"child buffer count too many", [](Batch& b) { b.data().id_child.n_buffers = 5; }},
    {"null buffers array", [](Batch& b) { b.data().id_child.buffers = nullptr; }},
    {"null data buffer", [](Batch& b) { b.data().id_child.buffers = g_null_buffers; }},
    {"null string data", [](Batch& b) { b.data().msg_child.buffers = g_null_buffers; }},
    {"non-monotonic offsets", [](Batch& b) { b.data().msg_buffers[1] = g_bad_offsets; }},
    {"negative offsets", [](Batch& b) { b.data().msg_buffers[1] = g_neg_offsets; }},
    {"invalid UTF-8", [](Batch& b) { b.data().chars[1] = '\xff'; }},
    {"array has fewer children", [](Batch& b) { b.array.n_children = 1; }},
    {"array has more children", [](Batch& b) { b.array.n_children = 3; }},
    {"schema has fewer children", [](Batch& b) { b.schema.n_children = 1; }},
    {"negative children count", [](Batch& b) { b.array.n_children = -2; b.schema.n_children = -2; }},
    {"null children array", [](Batch& b) { b.array.children = nullptr; }},
    {"null child", [](Batch& b) { b.array.children = g_null_children; }},
    {"null schema children", [](Batch& b) { b.schema.children = nullptr; }},
    {"child shorter than parent", [](Batch& b) { b.data().msg_child.length = 1; }},
    {"null format", [](Batch& b) { b.schema.format = nullptr; }},
    {"unknown format", [](Batch& b) { b.schema.format = "q"; }},
    {"empty format", [](Batch& b) { b.schema.format = ""; }},
    {"not a struct", [](Batch& b) { b.schema.format = "l"; b.schema.n_children = 0; b.array.n_children = 0; }},
    {"wrong column type", [](Batch& b) { static_cast<producer::SchemaData*>(b.schema.private_data)->id.format = "u"; }},
    {"released array", [](Batch& b) {
       b.array.release(&b.array);
     }},
    {"released child schema", [](Batch& b) { static_cast<producer::SchemaData*>(b.schema.private_data)->msg.release = nullptr; }},
    {"dictionary on one side", [](Batch& b) { b.array.dictionary = &b.data().id_child; }},
};
}  // namespace

TEST_F(Hardening, FuzzArrowImportMalformedBatchesAreRejected) {
  fw::TablePath p = LogTable("fuzzarrow");
  fw::AppendWriter w = AppendWriterFor(p);
  // A valid batch is accepted (the producer is right).
  {
    Batch b(4);
    ASSERT_OK(w.WriteArrowBatchDetached(&b.array, &b.schema));
    ASSERT_OK(w.Flush());
  }
  ASSERT_EQ(Hw(p), 4);
  for (const Mutation& m : kMutations) {
    SCOPED_TRACE(m.name);
    Batch b(4);
    m.apply(b);
    auto destroyed = std::make_shared<std::atomic<int>>(0);
    std::atomic<int> ran{0};
    fw::Result r =
        w.WriteArrowBatch(&b.array, &b.schema, [t = Tracked(destroyed), &ran](const fw::WriteCompletion&) { ran++; });
    EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidRow)) << r.ToString();
    EXPECT_FALSE(r.error_message.empty());
    EXPECT_EQ(b.array.release, nullptr);  // moved from, also on error
    EXPECT_EQ(b.schema.release, nullptr);
    EXPECT_EQ(destroyed->load(), 1);
    ASSERT_OK(w.Flush());
    EXPECT_EQ(ran.load(), 0);
  }
  EXPECT_EQ(Hw(p), 4);  // nothing of the malformed batches was written
  // A stream whose second batch is malformed (each kind of mutation): the whole stream is
  // rejected, nothing written, the stream released.
  for (const Mutation& m : kMutations) {
    SCOPED_TRACE(std::string("stream: ") + m.name);
    struct State {
      int next = 0;
      const Mutation* m;
    };
    ArrowArrayStream st;
    st.get_schema = [](ArrowArrayStream*, ArrowSchema* out) {
      producer::MakeSchema(out);
      return 0;
    };
    st.get_next = [](ArrowArrayStream* self, ArrowArray* out) {
      auto* state = static_cast<State*>(self->private_data);
      int k = state->next++;
      if (k >= 2) {
        out->release = nullptr;
        return 0;
      }
      Batch b(3);
      if (k == 1) {
        // Mutate a full batch, then hand over its array (the schema stays with the stream).
        if (std::string(state->m->name).find("schema") != std::string::npos ||
            std::string(state->m->name).find("format") != std::string::npos ||
            std::string(state->m->name) == "not a struct" || std::string(state->m->name) == "wrong column type" ||
            std::string(state->m->name) == "released array") {
          b.array.n_children = 5;  // schema mutations (and a released array, which is the end of a
                                   // stream) do not apply to a stream's arrays
        } else {
          state->m->apply(b);
        }
      }
      *out = b.array;
      b.array.release = nullptr;  // moved out
      return 0;
    };
    st.get_last_error = [](ArrowArrayStream*) -> const char* { return nullptr; };
    st.release = [](ArrowArrayStream* self) {
      delete static_cast<State*>(self->private_data);
      self->release = nullptr;
    };
    st.private_data = new State{0, &m};
    fw::Result r = w.WriteArrowBatchDetached(&st);
    EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidRow)) << r.ToString();
    EXPECT_EQ(st.release, nullptr);
    ASSERT_OK(w.Flush());
  }
  EXPECT_EQ(Hw(p), 4);
  // Null and released streams.
  EXPECT_EQ(w.WriteArrowBatchDetached(static_cast<ArrowArrayStream*>(nullptr)).error_code, Code(fw::ClientCode::InvalidRow));
  ArrowArrayStream s;
  producer::MakeStream({{1, 2}}, &s);
  s.get_next = nullptr;
  EXPECT_EQ(w.WriteArrowBatchDetached(&s).error_code, Code(fw::ClientCode::InvalidRow));
  EXPECT_EQ(s.release, nullptr);
  ASSERT_OK(w.Flush());
  EXPECT_EQ(Hw(p), 4);
}
