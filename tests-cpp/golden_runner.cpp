// The C++ runner of the golden scenarios (golden/*.json; format: golden/README.md and
// golden/schema/scenario.schema.json). It runs a scenario's plan (`golden-check --plan`: the file
// validated and resolved once, in rust/golden) and only runs: every step through the public C++
// API, recording a trace of events (submit begin/end, callback start/return with a global sequence
// number, flush/close/wait begin/end, read-back rows). The one checker, golden-check
// (rust/golden; the Rust and Python runners' traces go through the same one), judges the trace;
// its exit status and message are this test's.
//
// Usage: golden_runner --check <golden-check> --traces <dir> [--bootstrap <host:port>] <file>
// (tests-cpp/CMakeLists.txt registers one ctest per file, and per fault-free file on a cluster).

#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fluss_writer.hpp"

namespace fw = fluss_writer;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using Spec = std::map<std::string, std::string>;  // a partition's spec
using std::chrono::milliseconds;

namespace {

// Something the runner could not do: recorded in the trace, and the steps stop.
struct RunnerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string ThreadName() {
  std::ostringstream s;
  s << std::this_thread::get_id();
  return s.str();
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

Json CompletionJson(const fw::WriteCompletion& c) {
  Json brs = Json::array();
  for (const fw::BucketResult& b : c.bucket_results) {
    brs.push_back({{"partition", b.partition.empty() ? Json(nullptr) : Json(b.partition)},
                   {"bucket", b.bucket},
                   {"rows", b.rows},
                   {"code", b.result.error_code}});
  }
  return {{"code", c.result.error_code}, {"bucket", c.bucket},
          {"partition", c.partition.empty() ? Json(nullptr) : Json(std::string(c.partition))},
          {"offset", c.offset}, {"bucket_results", brs}};
}

// ----- values: a row of the plan (its values resolved) with the columns it has

fw::GenericRow ToRow(const Json& values, const Json& columns) {
  fw::GenericRow row(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const Json& v = values[i];
    const std::string t = columns.at(i).at("type");
    if (v.is_null()) {
      row.SetNull(i);
    } else if (t == "INT") {
      row.SetInt32(i, v.get<int32_t>());
    } else if (t == "BIGINT") {
      row.SetInt64(i, v.get<int64_t>());
    } else if (t == "DOUBLE") {
      row.SetFloat64(i, v.get<double>());
    } else if (t == "BOOLEAN") {
      row.SetBool(i, v.get<bool>());
    } else {
      row.SetString(i, v.get<std::string>());
    }
  }
  return row;
}

Json FromRow(const fw::GenericRow& row) {
  Json out = Json::array();
  for (size_t i = 0; i < row.FieldCount(); ++i) {
    std::string t = row.TypeName(i);
    if (row.IsNull(i)) {
      out.push_back(nullptr);
    } else if (t == "INT" || t == "BIGINT") {
      out.push_back(row.GetInt64(i));
    } else if (t == "DOUBLE") {
      out.push_back(row.GetFloat64(i));
    } else if (t == "BOOLEAN") {
      out.push_back(row.GetBool(i));
    } else if (t == "STRING") {
      out.push_back(row.GetString(i));
    } else {
      out.push_back(t + " " + row.ToString(i));
    }
  }
  return out;
}

// ----- Arrow input through the C Data Interface, built by hand (no Arrow library): INT "i",
// BIGINT "l", STRING "u", DOUBLE "g", BOOLEAN "b" (bit-packed); validity bitmaps.

struct ArrowColumn {
  std::vector<uint8_t> validity, bits;
  std::vector<int32_t> i32, offsets{0};
  std::vector<int64_t> i64;
  std::vector<double> f64;
  std::string chars;
  const void* buffers[3] = {nullptr, nullptr, nullptr};
  ArrowArray array{};
};

struct ArrowBatch {
  std::vector<std::unique_ptr<ArrowColumn>> columns;
  std::vector<ArrowArray*> children;
  const void* struct_buffers[1] = {nullptr};
  std::vector<std::string> names;
  std::vector<ArrowSchema> fields;
  std::vector<ArrowSchema*> field_ptrs;
};

void ReleaseChild(ArrowArray* a) { a->release = nullptr; }
void ReleaseChildSchema(ArrowSchema* s) { s->release = nullptr; }
void ReleaseBatch(ArrowArray* a) {
  delete static_cast<ArrowBatch*>(a->private_data);
  a->release = nullptr;
}
void ReleaseSchema(ArrowSchema* s) { s->release = nullptr; }

// `schema` borrows names and fields from the batch, which lives until `array` is released.
void MakeArrow(const Json& columns, const Json& rows, ArrowArray* array, ArrowSchema* schema) {
  auto* b = new ArrowBatch();
  const int64_t n = static_cast<int64_t>(rows.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    const std::string type = columns[c].at("type");
    auto col = std::make_unique<ArrowColumn>();
    col->validity.assign(rows.size() / 8 + 1, 0);
    col->bits.assign(rows.size() / 8 + 1, 0);
    int64_t nulls = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      const Json& v = rows[r][c];
      if (v.is_null()) ++nulls;
      else col->validity[r / 8] |= static_cast<uint8_t>(1u << (r % 8));
      if (type == "INT") col->i32.push_back(v.is_null() ? 0 : v.get<int32_t>());
      if (type == "BIGINT") col->i64.push_back(v.is_null() ? 0 : v.get<int64_t>());
      if (type == "DOUBLE") col->f64.push_back(v.is_null() ? 0 : v.get<double>());
      if (type == "BOOLEAN" && !v.is_null() && v.get<bool>()) col->bits[r / 8] |= static_cast<uint8_t>(1u << (r % 8));
      if (type == "STRING") {
        if (!v.is_null()) col->chars += v.get<std::string>();
        col->offsets.push_back(static_cast<int32_t>(col->chars.size()));
      }
    }
    col->i32.reserve(1), col->i64.reserve(1), col->f64.reserve(1), col->chars.reserve(1);
    col->buffers[0] = nulls > 0 ? col->validity.data() : nullptr;
    col->buffers[1] = type == "INT" ? static_cast<const void*>(col->i32.data())
                      : type == "BIGINT" ? static_cast<const void*>(col->i64.data())
                      : type == "DOUBLE" ? static_cast<const void*>(col->f64.data())
                      : type == "BOOLEAN" ? static_cast<const void*>(col->bits.data())
                                          : static_cast<const void*>(col->offsets.data());
    col->buffers[2] = col->chars.data();
    const int64_t n_buffers = type == "STRING" ? 3 : 2;
    col->array = ArrowArray{n, nulls, 0, n_buffers, 0, col->buffers, nullptr, nullptr, ReleaseChild, nullptr};
    b->children.push_back(&col->array);
    b->columns.push_back(std::move(col));
    b->names.push_back(columns[c].at("name"));
  }
  b->fields.resize(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string type = columns[i].at("type");
    const char* format = type == "INT" ? "i" : type == "BIGINT" ? "l" : type == "DOUBLE" ? "g" : type == "BOOLEAN" ? "b" : "u";
    int64_t flags = columns[i]["nullable"].get<bool>() ? ARROW_FLAG_NULLABLE : 0;
    b->fields[i] = ArrowSchema{format, b->names[i].c_str(), nullptr, flags, 0, nullptr, nullptr, ReleaseChildSchema, nullptr};
    b->field_ptrs.push_back(&b->fields[i]);
  }
  *schema = ArrowSchema{"+s", "", nullptr, 0, static_cast<int64_t>(columns.size()), b->field_ptrs.data(), nullptr,
                        ReleaseSchema, nullptr};
  *array = ArrowArray{n, 0, 0, 1, static_cast<int64_t>(b->children.size()), b->struct_buffers, b->children.data(),
                      nullptr, ReleaseBatch, b};
}

// ----- one run of one scenario

struct WriterHandle {
  bool upsert = false;
  fw::AppendWriter append;
  fw::UpsertWriter up;
  fw::WriterBase& base() { return upsert ? static_cast<fw::WriterBase&>(up) : static_cast<fw::WriterBase&>(append); }
};

struct OpState {
  std::string writer, notify;
  bool accepted = false, started = false, returned = false;
  std::shared_ptr<fw::WriteResult> result;
};

struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
};

struct Run {
  Json plan, trace, events = Json::array();
  fw::Connection conn;
  fw::Admin admin;
  fw::TablePath path{"fluss", "golden"};
  bool have_table = false;
  bool cluster = false;
  // The servers lack a capability the scenario requires: nothing of it runs.
  bool unsupported = false;
  std::mutex m;  // events, ops, gates, writers
  std::map<std::string, OpState> ops;
  std::map<std::string, std::shared_ptr<Gate>> gates;
  std::map<std::string, std::shared_ptr<WriterHandle>> writers;
  // Callback errors each writer's error handler counted.
  std::map<std::string, std::shared_ptr<std::atomic<uint64_t>>> cb_errors;

  void Ev(Json e) {
    std::lock_guard<std::mutex> g(m);
    e["seq"] = events.size();
    events.push_back(std::move(e));
  }
  std::shared_ptr<WriterHandle> Writer(const Json& step) {
    std::lock_guard<std::mutex> g(m);
    return writers.at(step["writer"]);
  }
  std::shared_ptr<Gate> GetGate(const std::string& name) {
    std::lock_guard<std::mutex> g(m);
    auto& p = gates[name];
    if (!p) p = std::make_shared<Gate>();
    return p;
  }
  void OpenGate(const std::string& name) {
    auto g = GetGate(name);
    std::lock_guard<std::mutex> l(g->m);
    g->open = true;
    g->cv.notify_all();
  }
  std::string CbState(const std::string& id) {
    std::lock_guard<std::mutex> g(m);
    const OpState& r = ops[id];
    return r.returned ? "returned" : r.started ? "running" : "not_started";
  }
  void Inject(const Json& faults) {
    if (cluster && !faults.empty()) throw RunnerError("faults need the embedded engine");
    for (const Json& f : faults) {
      const std::string kind = f["kind"];
      uint32_t times = f["times"];
      fw::testing::Fault fault = kind == "error" ? fw::testing::Fault::Error(f["code"], f["message"].get<std::string>(), times)
                                 : kind == "delay" ? fw::testing::Fault::Delay(milliseconds(f["ms"].get<int64_t>()), times)
                                                   : fw::testing::Fault::DropConnection(f["after_apply"], times);
      fw::Result r = f["coordinator"].get<bool>()   ? fw::testing::InjectCoordinatorFault(conn, fault)
                     : f["partition"].is_string() ? fw::testing::InjectFault(conn, path, f["partition"].get<std::string>(), f["bucket"], fault)
                                                  : fw::testing::InjectFault(conn, path, f["bucket"], fault);
      if (!r.Ok()) throw RunnerError("inject fault: " + r.ToString());
    }
  }
};

void RunStep(const std::shared_ptr<Run>& run, const Json& step);

// Records the callback's return when destroyed (also when the callback throws).
struct ReturnedGuard {
  Run* run;
  const std::string& id;
  ~ReturnedGuard() {
    std::lock_guard<std::mutex> g(run->m);
    run->events.push_back({{"seq", run->events.size()}, {"ev", "callback_return"}, {"id", id}, {"thread", ThreadName()}});
    run->ops[id].returned = true;
  }
};

// The recording callback of `id`; `alive` is captured: its use_count() shows whether the callable
// still exists (a rejected callback must be destroyed before the call returns).
fw::WriteCallback MakeCallback(const std::shared_ptr<Run>& r, const std::string& op_id, const Json& spec_json,
                               const std::shared_ptr<int>& alive) {
  auto spec = std::make_shared<Json>(spec_json);
  return [run = r, id = op_id, spec, alive](const fw::WriteCompletion& c) {
    Json start = CompletionJson(c);
    {
      std::lock_guard<std::mutex> g(run->m);
      start.update({{"seq", run->events.size()}, {"ev", "callback_start"}, {"id", id}, {"thread", ThreadName()}});
      run->events.push_back(std::move(start));
      run->ops[id].started = true;
    }
    ReturnedGuard returned{run.get(), id};
    std::this_thread::sleep_for(milliseconds((*spec)["sleep_ms"].get<int64_t>()));
    if ((*spec)["gate"].is_string()) {
      auto gate = run->GetGate((*spec)["gate"]);
      std::unique_lock<std::mutex> l(gate->m);
      if (!gate->cv.wait_for(l, std::chrono::seconds(30), [&] { return gate->open; })) {
        run->Ev({{"ev", "runner_error"}, {"message", "callback of " + id + ": gate never opened"}});
      }
    }
    if ((*spec)["call"].is_object()) {
      try {
        RunStep(run, (*spec)["call"]);
      } catch (const std::exception& e) {
        run->Ev({{"ev", "runner_error"}, {"message", id + ".call: " + e.what()}});
      }
    }
    if ((*spec)["raise"].get<bool>()) throw std::runtime_error("golden: the callback of " + id + " raises on purpose");
  };
}

void Submit(const std::shared_ptr<Run>& run, const Json& step) {
  const std::string op = step["op"], id = step["id"], notify = step["notify"];
  {
    std::lock_guard<std::mutex> g(run->m);
    run->ops[id].writer = step["writer"];
    run->ops[id].notify = notify;
  }
  std::shared_ptr<WriterHandle> w = run->Writer(step);
  if ((op == "upsert" || op == "delete") != w->upsert) throw RunnerError(id + ": this op does not fit its writer");
  auto alive = std::make_shared<int>(0);
  fw::WriteCallback cb = MakeCallback(run, id, step["callback"], alive);
  fw::GenericRow row = op == "append_arrow" ? fw::GenericRow(0) : ToRow(step["rows"][0], step["columns"]);
  ArrowArray array{};
  ArrowSchema schema{};
  if (op == "append_arrow") MakeArrow(step["columns"], step["rows"], &array, &schema);
  auto result = std::make_shared<fw::WriteResult>();
  const bool callback = notify == "callback", with_result = notify == "result";
  run->Ev({{"ev", "submit_begin"}, {"id", id}, {"thread", ThreadName()}});
  fw::Result res;
  auto t0 = Clock::now();
  if (op == "append") {
    res = callback ? w->append.Append(row, std::move(cb)) : with_result ? w->append.Append(row, *result) : w->append.AppendDetached(row);
  } else if (op == "append_arrow") {
    res = callback      ? w->append.WriteArrowBatch(&array, &schema, std::move(cb))
          : with_result ? w->append.WriteArrowBatch(&array, &schema, *result)
                        : w->append.WriteArrowBatchDetached(&array, &schema);
  } else if (op == "upsert") {
    res = callback ? w->up.Upsert(row, std::move(cb)) : with_result ? w->up.Upsert(row, *result) : w->up.UpsertDetached(row);
  } else {
    res = callback ? w->up.Delete(row, std::move(cb)) : with_result ? w->up.Delete(row, *result) : w->up.DeleteDetached(row);
  }
  double elapsed = Ms(Clock::now() - t0);
  if (array.release != nullptr) array.release(&array);  // not moved from (a rejected call may leave it)
  if (schema.release != nullptr) schema.release(&schema);
  {
    std::lock_guard<std::mutex> g(run->m);
    run->ops[id].accepted = res.Ok();
    if (res.Ok() && with_result) run->ops[id].result = result;
  }
  Json destroyed = res.Ok() || !callback ? Json(nullptr) : Json(alive.use_count() == 1);
  run->Ev({{"ev", "submit_end"}, {"id", id}, {"thread", ThreadName()}, {"code", res.error_code}, {"elapsed_ms", elapsed},
           {"callback_destroyed", destroyed}});
}

std::shared_ptr<fw::WriteResult> ResultOf(Run& run, const std::string& target) {
  std::lock_guard<std::mutex> g(run.m);
  auto r = run.ops[target].result;
  if (!r) throw RunnerError(target + " has no accepted WriteResult");
  return r;
}

fw::DataType TypeOf(const std::string& ty) {
  return ty == "INT"       ? fw::DataType::Int()
         : ty == "BIGINT"  ? fw::DataType::BigInt()
         : ty == "DOUBLE"  ? fw::DataType::Double()
         : ty == "BOOLEAN" ? fw::DataType::Boolean()
                           : fw::DataType::String();
}

fw::Column ColumnOf(const Json& c) { return fw::Column{c["name"], TypeOf(c["type"]), c["nullable"]}; }

// A writer of the table as it is now (loaded again: a writer created after a schema change writes
// the new columns), with an error handler that counts.
fw::Result OpenWriter(Run& run, const Json& ws) {
  auto counter = run.cb_errors[ws["name"]];
  fw::WriteCallbackOptions opts =
      ws["sharded"].is_number() ? fw::WriteCallbackOptions::Sharded(ws["sharded"]) : fw::WriteCallbackOptions{};
  opts.error_handler = [counter](const fw::CallbackError&) { counter->fetch_add(1); };
  if (ws["max_pending_callbacks"].is_number()) opts.max_pending_callbacks = ws["max_pending_callbacks"];
  fw::Table table;
  fw::Result r = run.conn.GetTable(run.path, table);
  if (!r.Ok()) return r;
  auto h = std::make_shared<WriterHandle>();
  h->upsert = ws["upsert"];
  if (h->upsert) {
    fw::TableUpsert up = table.NewUpsert();
    if (ws["partial_update"].is_array()) up.PartialUpdateByName(ws["partial_update"].get<std::vector<std::string>>());
    r = up.CreateWriter(h->up, opts);
  } else {
    r = table.NewAppend().CreateWriter(h->append, opts);
  }
  std::lock_guard<std::mutex> g(run.m);
  if (r.Ok()) run.writers[ws["name"]] = h;
  return r;
}

// flush, close, wait and the DDL steps: one call, recorded from begin to end.
void Call(const std::shared_ptr<Run>& run, const Json& step) {
  const std::string op = step["op"], path = step["path"];
  std::optional<milliseconds> timeout;
  if (step["timeout_ms"].is_number()) timeout = milliseconds(step["timeout_ms"].get<int64_t>());
  std::shared_ptr<fw::WriteResult> result = op == "wait" ? ResultOf(*run, step["target"]) : nullptr;
  std::shared_ptr<WriterHandle> w = op == "flush" || op == "close" ? run->Writer(step) : nullptr;
  run->Ev({{"ev", "call_begin"}, {"step", path}, {"call", op}, {"thread", ThreadName()}});
  auto t0 = Clock::now();
  fw::Result res;
  if (op == "wait") {
    fw::WriteCompletion out;
    res = timeout ? result->Wait(*timeout, &out) : result->Wait(&out);
    if (!out.table.empty()) res = fw::Result();  // "ok": Wait returned a completion, whatever its outcome
    else if (res.Ok()) throw RunnerError(path + ": Wait returned OK without a completion");
  } else if (op == "flush") {
    res = timeout ? w->base().Flush(*timeout) : w->base().Flush();
  } else if (op == "close") {
    res = timeout ? w->base().Close(*timeout) : w->base().Close();
  } else if (op == "create_partition") {
    res = run->admin.CreatePartition(run->path, step["spec"].get<Spec>(), false);
  } else if (op == "drop_partition") {
    res = run->admin.DropPartition(run->path, step["spec"].get<Spec>(), false);
  } else if (op == "alter_table") {
    std::vector<fw::TableChange> changes;
    for (const Json& c : step["columns"]) changes.push_back(fw::TableChange::AddColumn(ColumnOf(c)));
    res = run->admin.AlterTable(run->path, changes);
  } else if (op == "create_writer") {
    res = OpenWriter(*run, step["writer_spec"]);
  } else if (op == "alter_bucket_count") {
    res = run->admin.AlterBucketCount(run->path, step["bucket_count"].get<int32_t>());
  } else {
    throw RunnerError(path + ": op \"" + op + "\" is not known to this runner");
  }
  double elapsed = Ms(Clock::now() - t0);
  Json done = Json::array();
  if (op == "flush" || op == "close") {
    std::lock_guard<std::mutex> g(run->m);
    for (const auto& [id, r] : run->ops) {
      if (r.writer == step["writer"] && r.result && r.result->IsDone()) done.push_back(id);
    }
  }
  run->Ev({{"ev", "call_end"}, {"step", path}, {"code", res.error_code}, {"elapsed_ms", elapsed}, {"results_done", done}});
}

void RunStep(const std::shared_ptr<Run>& run, const Json& step) {
  const std::string op = step["op"], path = step["path"];
  if (op == "append" || op == "upsert" || op == "delete" || op == "append_arrow") {
    Submit(run, step);
  } else if (op == "add_callback") {
    const std::string id = step["id"], target = step["target"];
    auto result = ResultOf(*run, target);
    {
      std::lock_guard<std::mutex> g(run->m);
      run->ops[id] = OpState{run->ops[target].writer, "callback", true, false, false, nullptr};
    }
    run->Ev({{"ev", "add_callback"}, {"id", id}, {"target", target}, {"thread", ThreadName()}});
    fw::Result r = result->OnComplete(MakeCallback(run, id, step["callback"], std::make_shared<int>(0)));
    if (!r.Ok()) throw RunnerError(path + ": OnComplete: " + r.ToString());
  } else if (op == "sleep") {
    std::this_thread::sleep_for(milliseconds(step["ms"].get<int64_t>()));
  } else if (op == "open_gate") {
    run->OpenGate(step["gate"]);
  } else if (op == "stats") {
    fw::WriterStats s = run->Writer(step)->base().Stats();
    Json stats = Json::object();
#define FW_STAT(f) stats[#f] = s.f;
    FW_STAT(pending_callbacks)
    FW_STAT(callbacks_run)
    FW_STAT(callback_errors)
    FW_STAT(jobs_dropped)
    FW_STAT(queued_jobs)
    FW_STAT(buffer_bytes_in_use)
    FW_STAT(ack_to_callback_count)
    FW_STAT(ack_to_callback_p50_nanos)
    FW_STAT(ack_to_callback_p99_nanos)
    FW_STAT(ack_to_callback_max_nanos)
    FW_STAT(open_partitions)
    FW_STAT(records_sent)
    FW_STAT(bytes_sent)
    FW_STAT(batches_sent)
    FW_STAT(records_failed)
    FW_STAT(operations_rejected)
    FW_STAT(requests_sent)
    FW_STAT(retries)
    FW_STAT(kv_throttled_sends)
    FW_STAT(kv_throttle_nanos)
    FW_STAT(kv_pressure_permille)
    FW_STAT(slow_callbacks)
    FW_STAT(oldest_pending_batch_age_nanos)
    FW_STAT(request_latency_count)
    FW_STAT(request_latency_p50_nanos)
    FW_STAT(request_latency_p99_nanos)
    FW_STAT(request_latency_max_nanos)
    FW_STAT(batch_records_p50)
    FW_STAT(batch_records_p99)
    FW_STAT(batch_bytes_p50)
    FW_STAT(batch_bytes_p99)
#undef FW_STAT
    run->Ev({{"ev", "stats"}, {"step", path}, {"writer", step["writer"]}, {"stats", stats}});
  } else if (op == "await_callback") {
    auto deadline = Clock::now() + milliseconds(step["timeout_ms"].get<int64_t>());
    auto reached = [&](const std::string& s) { return step["state"] == "running" ? s != "not_started" : s == "returned"; };
    std::string s = run->CbState(step["target"]);
    while (!reached(s) && Clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(1));
      s = run->CbState(step["target"]);
    }
    run->Ev({{"ev", "await"}, {"step", path}, {"target", step["target"]}, {"state", s}});
    if (!reached(s)) throw RunnerError(path + ": stopped: the callback is still " + s);
  } else if (op == "assert_callback") {
    run->Ev({{"ev", "observe"}, {"step", path}, {"target", step["target"]}, {"state", run->CbState(step["target"])}});
  } else if (op == "inject") {
    run->Inject(step["faults"]);
  } else if (op == "parallel") {
    std::mutex m;
    std::condition_variable cv;
    size_t arrived = 0, n = step["threads"].size();
    std::vector<std::string> errors(n);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < n; ++i) {
      threads.emplace_back([&, i, t = step["threads"][i]] {
        run->Ev({{"ev", "thread"}, {"thread", ThreadName()}, {"name", t["name"]}});
        {
          std::unique_lock<std::mutex> l(m);
          if (++arrived == n) cv.notify_all();
          cv.wait(l, [&] { return arrived == n; });
        }
        try {
          for (const Json& s : t["steps"]) RunStep(run, s);
        } catch (const std::exception& e) {
          errors[i] = "thread " + t["name"].get<std::string>() + ": " + e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    std::string all;
    for (const auto& e : errors) all += e.empty() ? "" : e + "\n";
    if (!all.empty()) throw RunnerError(all);
  } else {
    Call(run, step);
  }
}

void Settle(Run& run, uint64_t ms) {
  auto pending = [&] {
    std::lock_guard<std::mutex> g(run.m);
    for (const auto& [id, r] : run.ops) {
      if (r.accepted && ((r.notify == "callback" && !r.returned) || (r.notify == "result" && !r.result->IsDone()))) return true;
    }
    return false;
  };
  auto deadline = Clock::now() + milliseconds(ms);
  while (pending() && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(2));
  run.Ev({{"ev", "settled"}});
  std::vector<std::string> gates;
  std::vector<std::pair<std::string, std::shared_ptr<fw::WriteResult>>> results;
  {
    std::lock_guard<std::mutex> g(run.m);
    for (const auto& kv : run.gates) gates.push_back(kv.first);
    for (const auto& [id, r] : run.ops) {
      if (r.result) results.emplace_back(id, r.result);
    }
  }
  for (const auto& g : gates) run.OpenGate(g);
  for (const auto& [id, r] : results) {
    fw::WriteCompletion out;
    bool done = r->IsDone() && (static_cast<void>(r->Wait(milliseconds(0), &out)), !out.table.empty());
    run.Ev({{"ev", "result"}, {"id", id}, {"completion", done ? CompletionJson(out) : Json(nullptr)}});
  }
}

// The plan's read-back, with the table loaded now (after a schema change it reads every column).
void ReadBack(Run& run) {
  fw::Table table;
  fw::Result r = run.conn.GetTable(run.path, table);
  if (!r.Ok()) throw RunnerError("read-back: " + r.ToString());
  Json scans = Json::array(), lookups = Json::array();
  for (const Json& s : run.plan["read_back"]["scans"]) {
    std::vector<fw::ScannedRow> rows;
    const int32_t b = s["bucket"];
    r = s["partition"].is_string() ? table.ScanPartition(s["partition"].get<std::string>(), b, 0, rows) : table.Scan(b, 0, rows);
    if (!r.Ok()) throw RunnerError("read-back " + s.dump() + ": " + r.ToString());
    Json out = Json::array();
    for (const auto& sr : rows) out.push_back(FromRow(sr.row));
    scans.push_back({{"partition", s["partition"]}, {"bucket", b}, {"rows", out}});
  }
  for (const Json& key : run.plan["read_back"]["lookups"]) {
    fw::GenericRow out;
    bool found = false;
    r = table.Lookup(ToRow(key, run.plan["read_back"]["key_columns"]), out, found);
    if (!r.Ok()) throw RunnerError("lookup " + key.dump() + ": " + r.ToString());
    lookups.push_back({{"key", key}, {"row", found ? FromRow(out) : Json(nullptr)}});
  }
  run.trace["read_back"] = {{"scans", scans}, {"lookups", lookups}};
}

void Setup(Run& run, const std::string& bootstrap) {
  const Json& plan = run.plan;
  fw::Configuration config;
  config.bootstrap_servers = bootstrap.empty() ? std::string("embedded") : bootstrap;
  for (const auto& [k, v] : plan["config"].items()) config.Set(k, v.get<std::string>());
  fw::Result r = fw::Connection::Create(config, run.conn);
  // A refused connection while scripts/fluss-cluster.sh heal-watch restarts the coordinator
  // (Fluss 0.9.1's lost table) is tried again for up to 30 s, and so is UNKNOWN_SERVER_ERROR (-1),
  // which a starting coordinator answers; noted in retries.log.
  for (int i = 0; !bootstrap.empty() && !r.Ok() && (r.error_code == 1 || r.error_code == -1) && i < 60; ++i) {
    if (i == 0) {
      std::fprintf(stderr, "golden: connect: %s; trying again while the coordinator restarts\n", r.ToString().c_str());
      if (const char* dir = std::getenv("FLUSS_TEST_LOGS"); dir != nullptr && *dir != '\0') {
        if (std::FILE* f = std::fopen((std::string(dir) + "/retries.log").c_str(), "a")) {
          std::fprintf(f, "c++ golden: connect: %s; trying again while the coordinator restarts\n", r.ToString().c_str());
          std::fclose(f);
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    run.conn = fw::Connection();
    r = fw::Connection::Create(config, run.conn);
  }
  if (!r.Ok()) throw RunnerError("connect: " + r.ToString());
  fw::Admin& admin = run.admin;
  if (!(r = run.conn.GetAdmin(admin)).Ok()) throw RunnerError("admin: " + r.ToString());
  for (const Json& c : plan["requires"]) {
    bool ok = false;
    if (!(r = admin.ServerSupports(c.get<std::string>(), ok)).Ok()) throw RunnerError("requires: " + r.ToString());
    if (!ok) {
      run.Ev({{"ev", "unsupported"}, {"capability", c}});
      run.unsupported = true;
    }
  }
  if (run.unsupported) return;
  fw::TableDescriptor desc;
  const Json& t = plan["table"];
  for (const Json& c : t["columns"]) desc.schema.columns.push_back(ColumnOf(c));
  using Names = std::vector<std::string>;
  desc.schema.primary_keys = t["primary_key"].get<Names>();
  desc.bucket_count = t["bucket_count"];
  desc.bucket_keys = t["bucket_key"].get<Names>();
  desc.partition_keys = t["partition_keys"].get<Names>();
  desc.properties = t["properties"].get<std::map<std::string, std::string>>();
  if (run.cluster) {
    // A table of its own per run: the cluster is shared and outlives this process.
    auto nanos = std::chrono::system_clock::now().time_since_epoch() / std::chrono::nanoseconds(1);
    run.path = fw::TablePath("golden_cpp", "g_" + std::to_string(::getpid()) + "_" + std::to_string(nanos % 1000000000000LL));
    if (!(r = admin.CreateDatabase(run.path.database(), true)).Ok()) throw RunnerError("create database: " + r.ToString());
  }
  r = admin.CreateTable(run.path, desc, false);
  // On a cluster, a table whose buckets get no leader (a Fluss 0.9.1 coordinator now and then
  // never processes a new table) is abandoned for another one under a fresh name, and so is one
  // whose creation met the coordinator restarting (scripts/fluss-cluster.sh heal-watch: refused
  // or closed connections, a retriable error; the table may exist or not), a second later, for
  // up to 60 s.
  auto again = [&](int attempt) {
    if (r.error_code == 44) return attempt <= 2;
    return r.retriable && attempt <= 60 && (std::this_thread::sleep_for(std::chrono::seconds(1)), true);
  };
  for (int attempt = 1; run.cluster && !r.Ok() && again(attempt); ++attempt) {
    std::fprintf(stderr, "golden: %s: %s; creating another table\n", run.path.ToString().c_str(), r.ToString().c_str());
    // A line of $FLUSS_TEST_LOGS/retries.log, which the summary of `make test` lists.
    if (const char* dir = std::getenv("FLUSS_TEST_LOGS"); dir != nullptr && *dir != '\0') {
      if (std::FILE* f = std::fopen((std::string(dir) + "/retries.log").c_str(), "a")) {
        std::fprintf(f, "c++ golden: %s: %s; creating another table\n", run.path.ToString().c_str(), r.ToString().c_str());
        std::fclose(f);
      }
    }
        run.path = fw::TablePath(run.path.database(), run.path.table() + "_r" + std::to_string(attempt));
    r = admin.CreateTable(run.path, desc, false);
  }
  if (!r.Ok()) throw RunnerError("create table " + run.path.ToString() + ": " + r.ToString());
  for (const Json& spec : plan["partitions"]) {
    if (!(r = admin.CreatePartition(run.path, spec.get<Spec>(), false)).Ok()) throw RunnerError("create partition " + spec.dump() + ": " + r.ToString());
  }
  fw::Table table;
  if (!(r = run.conn.GetTable(run.path, table)).Ok()) throw RunnerError("get table: " + r.ToString());
  run.have_table = true;
  if (run.cluster && desc.partition_keys.empty()) {
    // Every bucket of the fresh table has a leader that answers before the steps start.
    for (int32_t b = 0; b < table.BucketCount(); ++b) {
      std::vector<fw::ScannedRow> rows;
      if (!(r = table.Scan(b, 0, rows)).Ok()) throw RunnerError("table not ready: " + r.ToString());
    }
  }
  run.Inject(plan["faults"]);
  for (const Json& ws : plan["writers"]) {
    if (!ws["deferred"].get<bool>() && !(r = OpenWriter(run, ws)).Ok()) throw RunnerError("writer " + ws["name"].get<std::string>() + ": " + r.ToString());
  }
}

void RunScenario(const std::shared_ptr<Run>& run, const std::string& bootstrap) {
  try {
    Setup(*run, bootstrap);
    if (run->unsupported) {
      (void)run->conn.Close(std::chrono::seconds(10));
      run->Ev({{"ev", "teardown"}});
      return;
    }
    run->Ev({{"ev", "thread"}, {"thread", ThreadName()}, {"name", "main"}});
    for (const Json& step : run->plan["steps"]) RunStep(run, step);
  } catch (const std::exception& e) {
    run->Ev({{"ev", "runner_error"}, {"message", e.what()}});
  }
  Settle(*run, run->plan["settle_ms"]);
  for (const auto& [name, c] : run->cb_errors) run->trace["callback_errors"][name] = c->load();
  try {
    if (run->have_table) ReadBack(*run);
  } catch (const std::exception& e) {
    run->Ev({{"ev", "runner_error"}, {"message", e.what()}});
  }
  // Tear down on this thread: close every writer (bounded), then the connection.
  std::map<std::string, std::shared_ptr<WriterHandle>> writers;
  {
    std::lock_guard<std::mutex> g(run->m);
    writers.swap(run->writers);
  }
  for (auto& kv : writers) (void)kv.second->base().Close(milliseconds(10000));
  writers.clear();
  (void)run->conn.Close(std::chrono::seconds(10));
  run->Ev({{"ev", "teardown"}});
}

}  // namespace

int main(int argc, char** argv) {
  std::string check, traces, bootstrap, file;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--check" && i + 1 < argc) check = argv[++i];
    else if (a == "--traces" && i + 1 < argc) traces = argv[++i];
    else if (a == "--bootstrap" && i + 1 < argc) bootstrap = argv[++i];
    else file = a;
  }
  if (check.empty() || traces.empty() || file.empty()) {
    std::cerr << "usage: golden_runner --check <golden-check> --traces <dir> [--bootstrap <host:port>] <file>\n";
    return 2;
  }
  const std::string out = traces + "/cpp-" + (bootstrap.empty() ? "embedded" : "cluster") + "-" + file.substr(file.find_last_of('/') + 1);
  auto run = std::make_shared<Run>();
  run->cluster = !bootstrap.empty();
  run->trace = {{"runner", "cpp"}, {"target", run->cluster ? "cluster" : "embedded"}};
  // A file that does not validate, or one with faults on a cluster, is still judged (with an
  // empty trace): the checker says what is wrong with it.
  if (std::system(("'" + check + "' --plan '" + file + "' > '" + out + ".plan'").c_str()) == 0) {
    run->plan = Json::parse(std::ifstream(out + ".plan"));
    for (const Json& w : run->plan["writers"]) run->cb_errors[w["name"]] = std::make_shared<std::atomic<uint64_t>>(0);
    if (!run->cluster || run->plan["cluster_ok"].get<bool>()) RunScenario(run, bootstrap);
  }
  {
    std::lock_guard<std::mutex> g(run->m);
    run->trace["events"] = run->events;
  }
  std::ofstream(out) << run->trace.dump(1);
  int status = std::system(("'" + check + "' '" + file + "' '" + out + "'").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
