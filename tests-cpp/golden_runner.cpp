// The C++ runner of the golden scenarios (golden/*.json; format: golden/README.md and
// golden/schema/scenario.schema.json). It only runs: every step through the public C++ API,
// recording a trace of events (submit begin/end, callback start/return with a global sequence
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

// Error code names (fault injection only; the checker resolves every other name).
int32_t CodeOf(const std::string& name) {
  for (fw::ClientCode c : fw::kAllClientCodes) {
    fw::Result r;
    r.error_code = static_cast<int32_t>(c);
    if (r.CodeName() == name) return r.error_code;
  }
  for (int32_t code = -1; code <= 1000; ++code) {
    fw::Result r;
    r.error_code = code;
    if (code != 0 && name != "SERVER_ERROR" && r.CodeName() == name) return code;
  }
  throw RunnerError("unknown error code name \"" + name + "\"");
}

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

// ----- values: a row of the file (in column order) or a key (in primary-key order)

std::string Text(const Json& v) {
  if (v.is_object()) {
    std::string out;
    for (uint64_t i = 0; i < v.at("count").get<uint64_t>(); ++i) out += v.at("repeat").get<std::string>();
    return out;
  }
  return v.get<std::string>();
}

fw::GenericRow ToRow(const Json& values, const std::vector<std::string>& types) {
  fw::GenericRow row(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const Json& v = values[i];
    const std::string& t = types.at(i);
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
      row.SetString(i, Text(v));
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
        if (!v.is_null()) col->chars += Text(v);
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
    int64_t flags = columns[i].value("nullable", true) ? ARROW_FLAG_NULLABLE : 0;
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
  Json sc, trace, events = Json::array();
  fw::Connection conn;
  fw::Admin admin;
  fw::TablePath path{"fluss", "golden"};
  fw::Table table;
  bool have_table = false;
  bool cluster = false;
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
  std::string WriterOf(const Json& step) { return step.value("writer", sc["writers"][0]["name"].get<std::string>()); }
  std::shared_ptr<WriterHandle> Writer(const Json& step) {
    std::lock_guard<std::mutex> g(m);
    return writers.at(WriterOf(step));
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
  // Every column the table gets (alter_table steps add at the end): a row of width n has the
  // first n of them.
  Json Columns(size_t width = SIZE_MAX) const {
    Json out = Json::array();
    for (const Json& c : sc["table"]["columns"]) out.push_back(c);
    for (const Json& st : sc["steps"]) {
      if (st["op"] == "alter_table" && st.value("expect", Json("ok")) == Json("ok")) {
        for (const Json& c : st["add_columns"]) out.push_back(c);
      }
    }
    while (out.size() > width) out.erase(out.end() - 1);
    return out;
  }
  std::vector<std::string> Types(bool key) {
    std::map<std::string, std::string> by_name;
    std::vector<std::string> out;
    for (const Json& c : Columns()) {
      by_name[c["name"]] = c["type"];
      out.push_back(c["type"]);
    }
    if (!key) return out;
    out.clear();
    for (const Json& k : sc["table"]["primary_key"]) out.push_back(by_name[k]);
    return out;
  }
  // A partition's spec from its name (values in partition-key order, joined by '$').
  std::map<std::string, std::string> Spec(const std::string& name) const {
    std::map<std::string, std::string> spec;
    size_t from = 0;
    for (const Json& k : sc["table"]["partition_keys"]) {
      size_t to = name.find('$', from);
      spec[k.get<std::string>()] = name.substr(from, to == std::string::npos ? std::string::npos : to - from);
      from = to == std::string::npos ? name.size() : to + 1;
    }
    return spec;
  }
  void Inject(const Json& faults) {
    if (cluster) throw RunnerError("faults need the embedded engine");
    for (const Json& f : faults) {
      const std::string kind = f["fault"];
      uint32_t times = f["times"];
      fw::testing::Fault fault =
          kind == "error" ? fw::testing::Fault::Error(CodeOf(f["code"]), f.value("message", "injected by a golden scenario"), times)
          : kind == "delay" ? fw::testing::Fault::Delay(milliseconds(f["ms"].get<int64_t>()), times)
                            : fw::testing::Fault::DropConnection(f["after_apply"], times);
      fw::Result r = f.contains("partition")
                         ? fw::testing::InjectFault(conn, path, f["partition"].get<std::string>(), f["bucket"], fault)
                         : fw::testing::InjectFault(conn, path, f["bucket"], fault);
      if (!r.Ok()) throw RunnerError("inject fault: " + r.ToString());
    }
  }
};

void RunStep(const std::shared_ptr<Run>& run, const Json& step, const std::string& path);

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
  auto spec = std::make_shared<Json>(spec_json.is_object() ? spec_json : Json::object());
  return [run = r, id = op_id, spec, alive](const fw::WriteCompletion& c) {
    Json start = CompletionJson(c);
    {
      std::lock_guard<std::mutex> g(run->m);
      start.update({{"seq", run->events.size()}, {"ev", "callback_start"}, {"id", id}, {"thread", ThreadName()}});
      run->events.push_back(std::move(start));
      run->ops[id].started = true;
    }
    ReturnedGuard returned{run.get(), id};
    std::this_thread::sleep_for(milliseconds(spec->value("sleep_ms", 0)));
    if (spec->contains("gate")) {
      auto gate = run->GetGate((*spec)["gate"]);
      std::unique_lock<std::mutex> l(gate->m);
      if (!gate->cv.wait_for(l, std::chrono::seconds(30), [&] { return gate->open; })) {
        run->Ev({{"ev", "runner_error"}, {"message", "callback of " + id + ": gate never opened"}});
      }
    }
    if (spec->contains("call")) {
      try {
        RunStep(run, (*spec)["call"], id + ".call");
      } catch (const std::exception& e) {
        run->Ev({{"ev", "runner_error"}, {"message", id + ".call: " + e.what()}});
      }
    }
    if (spec->value("raise", false)) throw std::runtime_error("golden: the callback of " + id + " raises on purpose");
  };
}

void Submit(const std::shared_ptr<Run>& run, const Json& step) {
  const std::string op = step["op"], id = step["id"], notify = step.value("notify", "callback");
  {
    std::lock_guard<std::mutex> g(run->m);
    run->ops[id].writer = run->WriterOf(step);
    run->ops[id].notify = notify;
  }
  std::shared_ptr<WriterHandle> w = run->Writer(step);
  if ((op == "upsert" || op == "delete") != w->upsert) throw RunnerError(id + ": this op does not fit its writer");
  auto alive = std::make_shared<int>(0);
  fw::WriteCallback cb = MakeCallback(run, id, step.value("callback", Json()), alive);
  fw::GenericRow row = op == "append_arrow" ? fw::GenericRow(0)
                       : op == "delete"     ? ToRow(step["key"], run->Types(true))
                                            : ToRow(step["row"], run->Types(false));
  ArrowArray array{};
  ArrowSchema schema{};
  if (op == "append_arrow") MakeArrow(run->Columns(step["rows"][0].size()), step["rows"], &array, &schema);
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

void Call(const std::shared_ptr<Run>& run, const Json& step, const std::string& path) {
  const std::string op = step["op"];
  std::optional<milliseconds> timeout;
  if (step.contains("timeout_ms")) timeout = milliseconds(step["timeout_ms"].get<int64_t>());
  std::shared_ptr<fw::WriteResult> result = op == "wait" ? ResultOf(*run, step["target"]) : nullptr;
  std::shared_ptr<WriterHandle> w = op == "wait" ? nullptr : run->Writer(step);
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
  } else {
    res = timeout ? w->base().Close(*timeout) : w->base().Close();
  }
  double elapsed = Ms(Clock::now() - t0);
  Json done = Json::array();
  if (op != "wait") {
    std::lock_guard<std::mutex> g(run->m);
    for (const auto& [id, r] : run->ops) {
      if (r.writer == run->WriterOf(step) && r.result && r.result->IsDone()) done.push_back(id);
    }
  }
  run->Ev({{"ev", "call_end"}, {"step", path}, {"code", res.error_code}, {"elapsed_ms", elapsed}, {"results_done", done}});
}

void PartitionDdl(const std::shared_ptr<Run>& run, const Json& step, const std::string& path) {
  const std::string op = step["op"];
  const auto spec = run->Spec(step["partition"]);
  run->Ev({{"ev", "call_begin"}, {"step", path}, {"call", op}, {"thread", ThreadName()}});
  auto t0 = Clock::now();
  fw::Result res = op == "create_partition" ? run->admin.CreatePartition(run->path, spec, false)
                                            : run->admin.DropPartition(run->path, spec, false);
  run->Ev({{"ev", "call_end"}, {"step", path}, {"code", res.error_code}, {"elapsed_ms", Ms(Clock::now() - t0)},
           {"results_done", Json::array()}});
}

fw::DataType TypeOf(const std::string& ty) {
  return ty == "INT"       ? fw::DataType::Int()
         : ty == "BIGINT"  ? fw::DataType::BigInt()
         : ty == "DOUBLE"  ? fw::DataType::Double()
         : ty == "BOOLEAN" ? fw::DataType::Boolean()
                           : fw::DataType::String();
}

fw::Column ColumnOf(const Json& c) { return fw::Column{c["name"], TypeOf(c["type"]), c.value("nullable", true)}; }

// A writer of the table as it is now (loaded again: a writer created after a schema change writes
// the new columns), with an error handler that counts.
fw::Result OpenWriter(Run& run, const Json& ws, std::shared_ptr<WriterHandle>& out) {
  auto counter = run.cb_errors[ws["name"]];
  fw::WriteCallbackOptions opts =
      ws.contains("executor") && ws["executor"].is_object() ? fw::WriteCallbackOptions::Sharded(ws["executor"]["sharded"])
                                                            : fw::WriteCallbackOptions{};
  opts.error_handler = [counter](const fw::CallbackError&) { counter->fetch_add(1); };
  if (ws.contains("max_pending_callbacks")) opts.max_pending_callbacks = ws["max_pending_callbacks"];
  fw::Table table;
  fw::Result r = run.conn.GetTable(run.path, table);
  if (!r.Ok()) return r;
  auto h = std::make_shared<WriterHandle>();
  h->upsert = ws["kind"] == "upsert";
  if (h->upsert) {
    fw::TableUpsert up = table.NewUpsert();
    if (ws.contains("partial_update")) up.PartialUpdateByName(ws["partial_update"].get<std::vector<std::string>>());
    r = up.CreateWriter(h->up, opts);
  } else {
    r = table.NewAppend().CreateWriter(h->append, opts);
  }
  if (r.Ok()) out = h;
  return r;
}

// alter_table (columns added at the end) and create_writer (a deferred writer).
void SchemaDdl(const std::shared_ptr<Run>& run, const Json& step, const std::string& path) {
  const std::string op = step["op"];
  run->Ev({{"ev", "call_begin"}, {"step", path}, {"call", op}, {"thread", ThreadName()}});
  auto t0 = Clock::now();
  fw::Result res;
  if (op == "alter_table") {
    std::vector<fw::TableChange> changes;
    for (const Json& c : step["add_columns"]) changes.push_back(fw::TableChange::AddColumn(ColumnOf(c)));
    res = run->admin.AlterTable(run->path, changes);
  } else {
    const std::string name = step["writer"];
    for (const Json& ws : run->sc["writers"]) {
      if (ws["name"] != name) continue;
      std::shared_ptr<WriterHandle> h;
      res = OpenWriter(*run, ws, h);
      std::lock_guard<std::mutex> g(run->m);
      if (h) run->writers[name] = h;
    }
  }
  run->Ev({{"ev", "call_end"}, {"step", path}, {"code", res.error_code}, {"elapsed_ms", Ms(Clock::now() - t0)},
           {"results_done", Json::array()}});
}

void RunStep(const std::shared_ptr<Run>& run, const Json& step, const std::string& path) {
  const std::string op = step["op"];
  if (op == "append" || op == "upsert" || op == "delete" || op == "append_arrow") {
    Submit(run, step);
  } else if (op == "flush" || op == "close" || op == "wait") {
    Call(run, step, path);
  } else if (op == "create_partition" || op == "drop_partition") {
    PartitionDdl(run, step, path);
  } else if (op == "alter_table" || op == "create_writer") {
    SchemaDdl(run, step, path);
  } else if (op == "add_callback") {
    const std::string id = step["id"], target = step["target"];
    auto result = ResultOf(*run, target);
    {
      std::lock_guard<std::mutex> g(run->m);
      run->ops[id] = OpState{run->ops[target].writer, "callback", true, false, false, nullptr};
    }
    run->Ev({{"ev", "add_callback"}, {"id", id}, {"target", target}, {"thread", ThreadName()}});
    fw::Result r = result->OnComplete(MakeCallback(run, id, step.value("callback", Json()), std::make_shared<int>(0)));
    if (!r.Ok()) throw RunnerError(path + ": OnComplete: " + r.ToString());
  } else if (op == "sleep") {
    std::this_thread::sleep_for(milliseconds(step["ms"].get<int64_t>()));
  } else if (op == "open_gate") {
    run->OpenGate(step["gate"]);
  } else if (op == "await_callback") {
    auto deadline = Clock::now() + milliseconds(step.value("timeout_ms", 10000));
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
    size_t i = 0;
    for (const auto& [name, steps] : step["threads"].items()) {  // nlohmann orders keys: as the checker's paths
      threads.emplace_back([&, i, name = name, steps = steps] {
        run->Ev({{"ev", "thread"}, {"thread", ThreadName()}, {"name", name}});
        {
          std::unique_lock<std::mutex> l(m);
          if (++arrived == n) cv.notify_all();
          cv.wait(l, [&] { return arrived == n; });
        }
        try {
          for (size_t j = 0; j < steps.size(); ++j) RunStep(run, steps[j], path + "." + name + "[" + std::to_string(j) + "]");
        } catch (const std::exception& e) {
          errors[i] = "thread " + name + ": " + e.what();
        }
      });
      ++i;
    }
    for (auto& t : threads) t.join();
    std::string all;
    for (const auto& e : errors) all += e.empty() ? "" : e + "\n";
    if (!all.empty()) throw RunnerError(all);
  } else {
    throw RunnerError(path + ": op \"" + op + "\" is not known to this runner");
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

void ReadBack(Run& run) {
  const Json& t = run.sc["table"];
  // Loaded now: after a schema change it reads every column.
  fw::Result loaded = run.conn.GetTable(run.path, run.table);
  if (!loaded.Ok()) throw RunnerError("read-back: " + loaded.ToString());
  if (t["kind"] == "log" && t.contains("partition_keys")) {
    Json partitions = Json::object();
    const Json names =
        run.sc.value("expect", Json::object()).value("read_back", Json::object()).value("partitions", Json::object());
    for (const auto& [name, _] : names.items()) {
      Json buckets = Json::object();
      for (int32_t b = 0; b < t["bucket_count"].get<int32_t>(); ++b) {
        std::vector<fw::ScannedRow> rows;
        fw::Result r = run.table.ScanPartition(name, b, 0, rows);
        if (!r.Ok()) throw RunnerError("read-back partition " + name + " bucket " + std::to_string(b) + ": " + r.ToString());
        Json& out = buckets[std::to_string(b)] = Json::array();
        for (const auto& sr : rows) out.push_back(FromRow(sr.row));
      }
      partitions[name] = buckets;
    }
    run.trace["read_back"] = {{"partitions", partitions}};
    return;
  }
  if (t["kind"] == "log") {
    Json buckets = Json::object();
    for (int32_t b = 0; b < t["bucket_count"].get<int32_t>(); ++b) {
      std::vector<fw::ScannedRow> rows;
      fw::Result r = run.table.Scan(b, 0, rows);
      if (!r.Ok()) throw RunnerError("read-back bucket " + std::to_string(b) + ": " + r.ToString());
      Json& out = buckets[std::to_string(b)] = Json::array();
      for (const auto& sr : rows) out.push_back(FromRow(sr.row));
    }
    run.trace["read_back"] = {{"buckets", buckets}};
    return;
  }
  Json lookups = Json::array();
  const Json expected = run.sc.value("expect", Json::object()).value("read_back", Json::object()).value("lookups", Json::array());
  for (const Json& l : expected) {
    fw::GenericRow out;
    bool found = false;
    fw::Result r = run.table.Lookup(ToRow(l["key"], run.Types(true)), out, found);
    if (!r.Ok()) throw RunnerError("lookup " + l["key"].dump() + ": " + r.ToString());
    lookups.push_back({{"key", l["key"]}, {"row", found ? FromRow(out) : Json(nullptr)}});
  }
  run.trace["read_back"] = {{"lookups", lookups}};
}

void Setup(Run& run, const std::string& bootstrap) {
  const Json& sc = run.sc;
  fw::Configuration config;
  config.bootstrap_servers = bootstrap.empty() ? std::string("embedded") : bootstrap;
  const Json settings = sc.value("config", Json::object());
  for (const auto& [k, v] : settings.items()) config.Set(k, v.get<std::string>());
  fw::Result r = fw::Connection::Create(config, run.conn);
  if (!r.Ok()) throw RunnerError("connect: " + r.ToString());
  fw::Admin& admin = run.admin;
  if (!(r = run.conn.GetAdmin(admin)).Ok()) throw RunnerError("admin: " + r.ToString());
  fw::TableDescriptor desc;
  const Json& t = sc["table"];
  for (const Json& c : t["columns"]) desc.schema.columns.push_back(ColumnOf(c));
  desc.schema.primary_keys = t.value("primary_key", std::vector<std::string>{});
  desc.bucket_count = t["bucket_count"];
  desc.bucket_keys = t.value("bucket_key", std::vector<std::string>{});
  desc.partition_keys = t.value("partition_keys", std::vector<std::string>{});
  if (run.cluster) {
    // A table of its own per run: the cluster is shared and outlives this process.
    auto nanos = std::chrono::system_clock::now().time_since_epoch() / std::chrono::nanoseconds(1);
    run.path = fw::TablePath("golden_cpp", "g_" + std::to_string(::getpid()) + "_" + std::to_string(nanos % 1000000000000LL));
    if (!(r = admin.CreateDatabase(run.path.database_name, true)).Ok()) throw RunnerError("create database: " + r.ToString());
  }
  r = admin.CreateTable(run.path, desc, false);
  // On a cluster, a table whose buckets get no leader (a Fluss 0.9.1 coordinator now and then
  // never processes a new table) is abandoned for another one under a fresh name.
  for (int attempt = 1; run.cluster && !r.Ok() && r.error_code == 44 && attempt <= 2; ++attempt) {
    std::fprintf(stderr, "golden: %s: %s; creating another table\n", run.path.ToString().c_str(), r.ToString().c_str());
    run.path = fw::TablePath(run.path.database_name, run.path.table_name + "_r" + std::to_string(attempt));
    r = admin.CreateTable(run.path, desc, false);
  }
  if (!r.Ok()) throw RunnerError("create table " + run.path.ToString() + ": " + r.ToString());
  for (const Json& p : t.value("partitions", Json::array())) {
    if (!(r = admin.CreatePartition(run.path, run.Spec(p), false)).Ok()) {
      throw RunnerError("create partition " + p.get<std::string>() + ": " + r.ToString());
    }
  }
  if (!(r = run.conn.GetTable(run.path, run.table)).Ok()) throw RunnerError("get table: " + r.ToString());
  run.have_table = true;
  if (run.cluster && desc.partition_keys.empty()) {
    // Every bucket of the fresh table has a leader that answers before the steps start.
    for (int32_t b = 0; b < run.table.BucketCount(); ++b) {
      std::vector<fw::ScannedRow> rows;
      if (!(r = run.table.Scan(b, 0, rows)).Ok()) throw RunnerError("table not ready: " + r.ToString());
    }
  }
  if (sc.contains("faults")) run.Inject(sc["faults"]);
}

Json RunScenario(const Json& sc, const std::string& bootstrap) {
  auto run = std::make_shared<Run>();
  run->sc = sc;
  run->cluster = !bootstrap.empty();
  run->trace = {{"runner", "cpp"}, {"target", run->cluster ? "cluster" : "embedded"}};
  for (const Json& ws : sc["writers"]) run->cb_errors[ws["name"]] = std::make_shared<std::atomic<uint64_t>>(0);
  try {
    Setup(*run, bootstrap);
    for (const Json& ws : sc["writers"]) {
      if (ws.value("deferred", false)) continue;
      std::shared_ptr<WriterHandle> h;
      fw::Result r = OpenWriter(*run, ws, h);
      if (!r.Ok()) throw RunnerError("writer " + ws["name"].get<std::string>() + ": " + r.ToString());
      run->writers[ws["name"]] = h;
    }
    run->Ev({{"ev", "thread"}, {"thread", ThreadName()}, {"name", "main"}});
    for (size_t i = 0; i < sc["steps"].size(); ++i) RunStep(run, sc["steps"][i], "steps[" + std::to_string(i) + "]");
  } catch (const std::exception& e) {
    run->Ev({{"ev", "runner_error"}, {"message", e.what()}});
  }
  Settle(*run, sc.value("settle_timeout_ms", 10000));
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
  std::lock_guard<std::mutex> g(run->m);
  run->trace["events"] = run->events;
  return run->trace;
}

bool UsesFaults(const Json& v) {
  if (v.is_object()) {
    if ((v.contains("faults") && !v["faults"].empty()) || v.value("op", "") == "inject") return true;
    for (const auto& kv : v.items()) {
      if (UsesFaults(kv.value())) return true;
    }
  }
  if (v.is_array()) {
    for (const auto& x : v) {
      if (UsesFaults(x)) return true;
    }
  }
  return false;
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
  std::ifstream in(file);
  Json sc = Json::parse(in, nullptr, false);
  Json trace = {{"runner", "cpp"}, {"target", bootstrap.empty() ? "embedded" : "cluster"}, {"events", Json::array()}};
  // A file this runner cannot read, or one with faults on a cluster, is still judged: the
  // checker says what is wrong with it.
  if (sc.is_object() && (bootstrap.empty() || !UsesFaults(sc))) {
    try {
      trace = RunScenario(sc, bootstrap);
    } catch (const Json::exception& e) {
      trace["events"].push_back({{"seq", 0}, {"ev", "runner_error"}, {"message", e.what()}});
    }
  }
  std::string stem = file.substr(file.find_last_of('/') + 1);
  std::string out = traces + "/cpp-" + trace["target"].get<std::string>() + "-" + stem;
  std::ofstream(out) << trace.dump(1);
  std::string cmd = "'" + check + "' '" + file + "' '" + out + "'";
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
