// golden_runner.cpp: the C++ runner of the golden scenarios (golden/*.json, format in
// golden/README.md; the Rust runner rust/core/tests/golden.rs is the reference).
//
// `golden_runner <file.json>` runs one scenario with the C++ API on the embedded engine and exits
// 0 when every expectation holds, 1 otherwise (with the reasons on stderr). ctest registers one
// test per golden file (tests-cpp/CMakeLists.txt globs the directory). Anything the runner does
// not understand (unknown field, op, type, value form, code name) is a failure, never a skip; a
// file marked `known_bug` is run and reported as failed either way.
//
// JSON: nlohmann/json (Debian nlohmann-json3-dev; tests-cpp/run.sh installs it when missing).
// Error code names are resolved through the binding's own table: fluss_writer::kAllClientCodes
// and Result::CodeName(), which asks the Rust core for the name of a code (ClientCode::name /
// FlussCode::name), exactly as the Rust runner searches the core's tables.
//
// Not checked here (Rust runner only): recomputing each stated bucket with the core's bucketing;
// every accepted op's stated bucket is still asserted against its completion's bucket.
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "fluss_writer.hpp"

namespace fw = fluss_writer;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// ----- cluster mode (golden_runner --bootstrap <addr> <file>) -----
// Empty: the embedded engine. Otherwise the scenario runs against that real Fluss cluster, in a
// table of its own (database golden_cpp), and reads back with Table::Scan / Table::Lookup.
std::string g_bootstrap;

// Fault-free scenarios that cannot be deterministic against a real server, with the reason.
// The runner reports them as skipped (exit 77, ctest SKIP_RETURN_CODE) instead of running them.
// Keep this minimal: every other fault-free scenario must pass against the cluster.
const std::map<std::string, std::string>& ClusterExclusions() {
  static const std::map<std::string, std::string> m = {};
  return m;
}

// Whether a scenario asks for fault injection anywhere (a top-level "faults" or an "inject"
// step, also nested in callbacks): a real cluster cannot inject faults.
bool UsesFaults(const nlohmann::json& v, bool top) {
  if (v.is_object()) {
    if (top && v.contains("faults")) return true;
    auto op = v.find("op");
    if (op != v.end() && op->is_string() && *op == "inject") return true;
    for (const auto& kv : v.items()) {
      if (UsesFaults(kv.value(), false)) return true;
    }
  } else if (v.is_array()) {
    for (const auto& x : v) {
      if (UsesFaults(x, false)) return true;
    }
  }
  return false;
}

// A failure of the scenario: parsing, a step or an expectation.
struct Fail : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class... A>
std::string Cat(const A&... a) {
  std::ostringstream s;
  (s << ... << a);
  return s.str();
}

std::string Show(const Json& v) { return v.dump(); }

// ===================================================================================== codes

// Name -> code, through the binding's table (client codes) and the core's names of the Fluss
// server codes (-1..1000, as the Rust runner searches; SERVER_ERROR is the generic fallback and
// not a name; 0 is "OK" in C++ and never a failure code of a scenario).
const std::map<std::string, int32_t>& CodeTable() {
  static const std::map<std::string, int32_t> table = [] {
    std::map<std::string, int32_t> t;
    for (fw::ClientCode c : fw::kAllClientCodes) {
      fw::Result r;
      r.error_code = static_cast<int32_t>(c);
      t.emplace(r.CodeName(), r.error_code);
    }
    for (int32_t code = -1; code <= 1000; ++code) {
      if (code == 0) continue;
      fw::Result r;
      r.error_code = code;
      std::string name = r.CodeName();
      if (name != "SERVER_ERROR") t.emplace(name, code);  // emplace keeps the first, like find()
    }
    return t;
  }();
  return table;
}

int32_t CodeOf(const std::string& name) {
  auto it = CodeTable().find(name);
  if (it == CodeTable().end()) throw Fail(Cat("unknown error code name \"", name, "\""));
  return it->second;
}

std::string CodeName(int32_t code) {
  if (code == 0) return "OK";
  fw::Result r;
  r.error_code = code;
  return Cat(r.CodeName(), " (", code, ")");
}

// ===================================================================================== parsing

// A JSON object whose every key must be consumed: leftover keys are an error. A null value counts
// as absent (as in the Rust runner).
class Obj {
 public:
  Obj(const Json& v, std::string what) : v_(v), what_(std::move(what)) {
    if (!v.is_object()) throw Fail(Cat(what_, ": expected an object, got ", Show(v)));
  }
  const std::string& what() const { return what_; }
  void set_what(std::string w) { what_ = std::move(w); }

  const Json* opt(const char* k) {
    used_.insert(k);
    auto it = v_.find(k);
    if (it == v_.end() || it->is_null()) return nullptr;
    return &*it;
  }
  void mark(const char* k) { used_.insert(k); }
  const Json& req(const char* k) {
    const Json* v = opt(k);
    if (v == nullptr) throw Fail(Cat(what_, ": missing field \"", k, "\""));
    return *v;
  }
  std::string str(const char* k) {
    const Json& v = req(k);
    if (!v.is_string()) throw Fail(Cat(what_, ": \"", k, "\" must be a string, got ", Show(v)));
    return v.get<std::string>();
  }
  std::optional<std::string> opt_str(const char* k) {
    const Json* v = opt(k);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) throw Fail(Cat(what_, ": \"", k, "\" must be a string, got ", Show(*v)));
    return v->get<std::string>();
  }
  std::optional<uint64_t> opt_u64(const char* k) {
    const Json* v = opt(k);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_unsigned()) throw Fail(Cat(what_, ": \"", k, "\" must be a non-negative integer, got ", Show(*v)));
    return v->get<uint64_t>();
  }
  uint64_t u64(const char* k) {
    auto v = opt_u64(k);
    if (!v) throw Fail(Cat(what_, ": missing field \"", k, "\""));
    return *v;
  }
  std::optional<bool> opt_bool(const char* k) {
    const Json* v = opt(k);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) throw Fail(Cat(what_, ": \"", k, "\" must be true or false, got ", Show(*v)));
    return v->get<bool>();
  }
  const Json& arr(const char* k) {
    const Json& v = req(k);
    if (!v.is_array()) throw Fail(Cat(what_, ": \"", k, "\" must be an array, got ", Show(v)));
    return v;
  }
  const Json* opt_arr(const char* k) {
    const Json* v = opt(k);
    if (v != nullptr && !v->is_array()) throw Fail(Cat(what_, ": \"", k, "\" must be an array, got ", Show(*v)));
    return v;
  }
  std::optional<std::vector<std::string>> strings(const char* k) {
    const Json* a = opt_arr(k);
    if (a == nullptr) return std::nullopt;
    std::vector<std::string> out;
    for (const Json& x : *a) {
      if (!x.is_string()) throw Fail(Cat(what_, ": \"", k, "\" must hold strings"));
      out.push_back(x.get<std::string>());
    }
    return out;
  }
  // Fail on any key that was not consumed.
  void done() const {
    std::vector<std::string> extra;
    for (auto it = v_.begin(); it != v_.end(); ++it) {
      if (!used_.count(it.key())) extra.push_back(it.key());
    }
    if (!extra.empty()) {
      std::sort(extra.begin(), extra.end());
      std::string list;
      for (const auto& e : extra) list += (list.empty() ? "\"" : ", \"") + e + "\"";
      throw Fail(Cat(what_, ": unknown field(s) [", list, "] (a runner never skips what it does not understand)"));
    }
  }

 private:
  const Json& v_;
  std::string what_;
  std::set<std::string> used_;
};

enum class Ty { Int, BigInt, String, Double, Boolean };

const char* TyName(Ty t) {
  switch (t) {
    case Ty::Int: return "INT";
    case Ty::BigInt: return "BIGINT";
    case Ty::String: return "STRING";
    case Ty::Double: return "DOUBLE";
    case Ty::Boolean: return "BOOLEAN";
  }
  return "?";
}

// A value as the files write it (and as read-back compares it: type and value).
struct Val {
  enum class K { Null, Int, BigInt, String, Double, Boolean, Other } k = K::Null;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  std::string s;  // STRING, or the type name of an unexpected type (Other)

  bool operator==(const Val& o) const {
    if (k != o.k) return false;
    switch (k) {
      case K::Null: return true;
      case K::Int:
      case K::BigInt: return i == o.i;
      case K::Double: return d == o.d;
      case K::Boolean: return b == o.b;
      case K::String:
      case K::Other: return s == o.s;
    }
    return false;
  }
  bool operator!=(const Val& o) const { return !(*this == o); }
};
using Row = std::vector<Val>;

std::string ShowVal(const Val& v) {
  switch (v.k) {
    case Val::K::Null: return "null";
    case Val::K::Int:
    case Val::K::BigInt: return std::to_string(v.i);
    case Val::K::Double: return Cat(v.d);
    case Val::K::Boolean: return v.b ? "true" : "false";
    case Val::K::String:
      if (v.s.size() > 12) return Cat("\"", v.s.substr(0, 8), "\"..(", v.s.size(), " chars)");
      return Cat("\"", v.s, "\"");
    case Val::K::Other: return Cat("<", v.s, ">");
  }
  return "?";
}

std::string ShowRow(const Row& r) {
  std::string s = "[";
  for (size_t i = 0; i < r.size(); ++i) s += (i ? "," : "") + ShowVal(r[i]);
  return s + "]";
}

std::string ShowRows(const std::vector<Row>& rows) {
  std::string s = "[";
  for (size_t i = 0; i < rows.size(); ++i) s += (i ? " " : "") + ShowRow(rows[i]);
  return s + "]";
}

struct ColumnSpec {
  std::string name;
  Ty type;
  bool nullable;
};

struct TableSpec {
  bool pk = false;
  int32_t bucket_count = 0;
  std::vector<ColumnSpec> columns;
  std::vector<std::string> primary_key;
  std::vector<size_t> pk_indexes;
  std::vector<std::string> bucket_key;
};

enum class ExecKind { Fifo, Sharded };

struct WriterSpec {
  std::string name;
  bool upsert = false;
  std::optional<std::vector<std::string>> partial_update;
  std::optional<uint64_t> max_pending_callbacks;
  ExecKind executor = ExecKind::Fifo;
  size_t shards = 0;
};

struct FaultSpec {
  enum class K { Error, Delay, Drop } k = K::Error;
  int32_t bucket = 0;
  uint32_t times = 0;
  int32_t code = 0;
  std::string message;
  uint64_t ms = 0;
  bool after_apply = false;
};

struct OpExpect {
  enum class K { Ok, CallbackError, SyncError, AnyOf } k = K::Ok;
  int32_t code = 0;
  std::vector<OpExpect> any;

  void Branches(std::vector<const OpExpect*>& out) const {
    if (k == K::AnyOf) {
      for (const auto& x : any) x.Branches(out);
    } else {
      out.push_back(this);
    }
  }
  bool AllowsSync(int32_t c) const {
    std::vector<const OpExpect*> b;
    Branches(b);
    return std::any_of(b.begin(), b.end(), [&](const OpExpect* x) { return x->k == K::SyncError && x->code == c; });
  }
  bool AllowsAccept() const {
    std::vector<const OpExpect*> b;
    Branches(b);
    return std::any_of(b.begin(), b.end(), [](const OpExpect* x) { return x->k != K::SyncError; });
  }
  bool AllowsOutcome(int32_t c) const {
    std::vector<const OpExpect*> b;
    Branches(b);
    return std::any_of(b.begin(), b.end(), [&](const OpExpect* x) {
      return (x->k == K::Ok && c == 0) || (x->k == K::CallbackError && x->code == c);
    });
  }
  std::string ToString() const {
    switch (k) {
      case K::Ok: return "ok";
      case K::CallbackError: return "callback_error " + CodeName(code);
      case K::SyncError: return "sync_error " + CodeName(code);
      case K::AnyOf: {
        std::string s = "any_of [";
        for (size_t i = 0; i < any.size(); ++i) s += (i ? ", " : "") + any[i].ToString();
        return s + "]";
      }
    }
    return "?";
  }
};

// Expected outcome of flush / close / wait: ok (code 0) or an error code.
struct CallExpect {
  bool ok = true;
  int32_t code = 0;
  std::string ToString() const { return ok ? "ok" : CodeName(code); }
};

struct Timing {
  std::optional<uint64_t> min_ms, max_ms;
  static Timing Parse(Obj& o) { return Timing{o.opt_u64("min_elapsed_ms"), o.opt_u64("max_elapsed_ms")}; }
  std::optional<std::string> Check(const std::string& what, Clock::duration elapsed) const {
    double ms = std::chrono::duration<double, std::milli>(elapsed).count();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", ms);
    if (min_ms && ms < static_cast<double>(*min_ms)) return Cat(what, " took ", buf, " ms, expected at least ", *min_ms, " ms");
    if (max_ms && ms > static_cast<double>(*max_ms)) return Cat(what, " took ", buf, " ms, expected at most ", *max_ms, " ms");
    return std::nullopt;
  }
};

enum class Notify { Callback, Result, Detached };
enum class CbState { NotStarted, Running, Returned };

const char* StateName(CbState s) {
  switch (s) {
    case CbState::NotStarted: return "NotStarted";
    case CbState::Running: return "Running";
    case CbState::Returned: return "Returned";
  }
  return "?";
}

struct Step;

struct CbSpec {
  uint64_t sleep_ms = 0;
  std::optional<std::string> gate;
  bool raise = false;
  std::shared_ptr<Step> call;
};

enum class InputKind { Append, Upsert, Delete, Arrow };

// (bucket, rows, error code or none)
using BucketRes = std::tuple<int32_t, int64_t, std::optional<int32_t>>;

std::string ShowBucketResults(const std::vector<BucketRes>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    const auto& [b, n, e] = v[i];
    s += Cat(i ? ", " : "", "(bucket ", b, ", rows ", n, e ? ", " + CodeName(*e) : std::string(), ")");
  }
  return s + "]";
}

struct WriteOp {
  std::string id;
  std::string writer;
  InputKind input = InputKind::Append;
  Row row;                    // append / upsert; the key for delete
  std::vector<Row> rows;      // append_arrow
  std::vector<int32_t> buckets;  // one per row (a single entry for append/upsert/delete)
  Notify notify = Notify::Callback;
  CbSpec callback;
  OpExpect expect;
  std::optional<int64_t> offset;
  std::optional<std::vector<BucketRes>> bucket_results;
  Timing timing;
};

struct Step {
  enum class K { Write, Flush, Close, Wait, AddCallback, Sleep, OpenGate, AwaitCallback, AssertCallback, Inject, Parallel };
  K k = K::Sleep;
  WriteOp op;                              // Write
  std::string writer;                      // Flush, Close
  std::optional<uint64_t> timeout_ms;      // Flush, Close, Wait
  CallExpect cexpect;                      // Flush, Close, Wait
  Timing timing;                           // Flush, Close, Wait
  std::string target;                      // Wait, AddCallback, Await/AssertCallback
  std::string id;                          // AddCallback
  CbSpec callback;                         // AddCallback
  uint64_t ms = 0;                         // Sleep; AwaitCallback timeout
  std::string gate;                        // OpenGate
  CbState state = CbState::NotStarted;     // Await/AssertCallback
  std::vector<FaultSpec> faults;           // Inject
  std::vector<std::pair<std::string, std::vector<Step>>> threads;  // Parallel
};

struct LookupSpec {
  Row key;
  std::optional<Row> row;
};

struct Scenario {
  TableSpec table;
  std::vector<std::pair<std::string, std::string>> config;
  std::vector<FaultSpec> faults;
  std::vector<WriterSpec> writers;
  std::vector<Step> steps;
  std::vector<std::vector<std::string>> callback_order;
  std::map<std::string, uint64_t> callback_errors;
  enum class RB { None, Log, Lookups } read_back = RB::None;
  std::map<int32_t, std::vector<Row>> read_back_buckets;
  std::vector<LookupSpec> read_back_lookups;
  uint64_t settle_ms = 10000;
  std::optional<std::string> known_bug;
};

Ty ParseType(const std::string& s) {
  if (s == "INT") return Ty::Int;
  if (s == "BIGINT") return Ty::BigInt;
  if (s == "STRING") return Ty::String;
  if (s == "DOUBLE") return Ty::Double;
  if (s == "BOOLEAN") return Ty::Boolean;
  throw Fail(Cat("unsupported column type \"", s, "\" (INT, BIGINT, STRING, DOUBLE, BOOLEAN)"));
}

Val ParseValue(const Json& v, Ty t, bool nullable, const std::string& what) {
  auto bad = [&] { return Fail(Cat(what, ": value ", Show(v), " does not fit ", TyName(t))); };
  Val out;
  if (v.is_null()) {
    if (!nullable) throw Fail(Cat(what, ": null in a NOT NULL column"));
    return out;
  }
  if (v.is_object()) {
    Obj o(v, what + ": repeat value");
    std::string s = o.str("repeat");
    uint64_t n = o.u64("count");
    o.done();
    if (t != Ty::String) throw bad();
    out.k = Val::K::String;
    out.s.reserve(s.size() * n);
    for (uint64_t i = 0; i < n; ++i) out.s += s;
    return out;
  }
  switch (t) {
    case Ty::Int: {
      if (!v.is_number_integer()) throw bad();
      if (v.is_number_unsigned()) {
        uint64_t x = v.get<uint64_t>();
        if (x > static_cast<uint64_t>(INT32_MAX)) throw bad();
        out.i = static_cast<int64_t>(x);
      } else {
        int64_t x = v.get<int64_t>();
        if (x < INT32_MIN || x > INT32_MAX) throw bad();
        out.i = x;
      }
      out.k = Val::K::Int;
      return out;
    }
    case Ty::BigInt: {
      if (!v.is_number_integer()) throw bad();
      if (v.is_number_unsigned()) {
        uint64_t x = v.get<uint64_t>();
        if (x > static_cast<uint64_t>(INT64_MAX)) throw bad();
        out.i = static_cast<int64_t>(x);
      } else {
        out.i = v.get<int64_t>();
      }
      out.k = Val::K::BigInt;
      return out;
    }
    case Ty::Double:
      if (!v.is_number()) throw bad();
      out.k = Val::K::Double;
      out.d = v.get<double>();
      return out;
    case Ty::Boolean:
      if (!v.is_boolean()) throw bad();
      out.k = Val::K::Boolean;
      out.b = v.get<bool>();
      return out;
    case Ty::String:
      if (!v.is_string()) throw bad();
      out.k = Val::K::String;
      out.s = v.get<std::string>();
      return out;
  }
  throw bad();
}

Row ParseRow(const Json& v, const TableSpec& t, const std::string& what) {
  if (!v.is_array()) throw Fail(Cat(what, ": a row must be an array"));
  if (v.size() != t.columns.size()) {
    throw Fail(Cat(what, ": the row has ", v.size(), " values, the table ", t.columns.size(), " columns"));
  }
  Row r;
  for (size_t i = 0; i < v.size(); ++i) r.push_back(ParseValue(v[i], t.columns[i].type, t.columns[i].nullable, what));
  return r;
}

Row ParseKey(const Json& v, const TableSpec& t, const std::string& what) {
  if (!v.is_array()) throw Fail(Cat(what, ": a key must be an array"));
  if (v.size() != t.pk_indexes.size()) {
    throw Fail(Cat(what, ": the key has ", v.size(), " values, the primary key ", t.pk_indexes.size(), " columns"));
  }
  Row r;
  for (size_t i = 0; i < v.size(); ++i) r.push_back(ParseValue(v[i], t.columns[t.pk_indexes[i]].type, false, what));
  return r;
}

int32_t ParseCode(const Json& v, const std::string& what) {
  if (!v.is_string()) throw Fail(Cat(what, ": an error code must be a name string, got ", Show(v)));
  return CodeOf(v.get<std::string>());
}

OpExpect ParseOpExpect(const Json& v, const std::string& what) {
  if (v.is_string() && v.get<std::string>() == "ok") return OpExpect{};
  Obj o(v, what + ": expect");
  OpExpect r;
  if (const Json* c = o.opt("callback_error")) {
    r.k = OpExpect::K::CallbackError;
    r.code = ParseCode(*c, what);
  } else if (const Json* c2 = o.opt("sync_error")) {
    r.k = OpExpect::K::SyncError;
    r.code = ParseCode(*c2, what);
  } else if (const Json* a = o.opt_arr("any_of")) {
    r.k = OpExpect::K::AnyOf;
    for (const Json& x : *a) r.any.push_back(ParseOpExpect(x, what));
  } else {
    throw Fail(Cat(what, ": expect must be \"ok\", {\"callback_error\"}, {\"sync_error\"} or {\"any_of\"}, got ", Show(v)));
  }
  o.done();
  return r;
}

CallExpect ParseCallExpect(const Json* v, const std::string& what) {
  if (v == nullptr) throw Fail(Cat(what, ": missing field \"expect\""));
  if (v->is_string() && v->get<std::string>() == "ok") return CallExpect{};
  Obj o(*v, what + ": expect");
  CallExpect e;
  e.ok = false;
  e.code = ParseCode(o.req("error"), what);
  o.done();
  return e;
}

CbState ParseState(const std::string& s) {
  if (s == "not_started") return CbState::NotStarted;
  if (s == "running" || s == "started") return CbState::Running;
  if (s == "returned") return CbState::Returned;
  throw Fail(Cat("unknown callback state \"", s, "\""));
}

struct Ctx {
  const TableSpec* table;
  std::map<std::string, bool> writers;  // name -> upsert
  std::optional<std::string> default_writer;
  std::set<std::string> ids;

  std::string Writer(Obj& o) {
    auto w = o.opt_str("writer");
    if (w) {
      if (!writers.count(*w)) throw Fail(Cat(o.what(), ": unknown writer \"", *w, "\""));
      return *w;
    }
    if (!default_writer) throw Fail(Cat(o.what(), ": \"writer\" is required with several writers"));
    return *default_writer;
  }
  std::string NewId(std::string id, const std::string& what) {
    if (!ids.insert(id).second) throw Fail(Cat(what, ": duplicate id \"", id, "\""));
    return id;
  }
};

Step ParseStep(const Json& v, Ctx& ctx, const std::string& what0, bool in_callback);

CbSpec ParseCallback(const Json* v, Ctx& ctx, const std::string& what, bool nested) {
  CbSpec cb;
  if (v == nullptr) return cb;
  if (v->is_string() && v->get<std::string>() == "normal") return cb;
  Obj o(*v, what + ": callback");
  cb.sleep_ms = o.opt_u64("sleep_ms").value_or(0);
  cb.gate = o.opt_str("gate");
  cb.raise = o.opt_bool("raise").value_or(false);
  if (const Json* c = o.opt("call")) {
    if (nested) throw Fail(Cat(what, ": a callback inside a callback's call cannot make calls of its own"));
    Step st = ParseStep(*c, ctx, what + ": call", true);
    if (st.k != Step::K::Write && st.k != Step::K::Flush && st.k != Step::K::Close && st.k != Step::K::Wait) {
      throw Fail(Cat(what, ": a callback can call flush, close, wait or a write op only"));
    }
    cb.call = std::make_shared<Step>(std::move(st));
  }
  o.done();
  return cb;
}

std::vector<FaultSpec> ParseFaults(const Json& a, const std::string& what0) {
  std::vector<FaultSpec> out;
  for (size_t i = 0; i < a.size(); ++i) {
    std::string what = Cat(what0, "[", i, "]");
    Obj o(a[i], what);
    FaultSpec f;
    f.bucket = static_cast<int32_t>(o.u64("bucket"));
    f.times = static_cast<uint32_t>(o.u64("times"));
    std::string kind = o.str("fault");
    if (kind == "error") {
      f.k = FaultSpec::K::Error;
      f.code = ParseCode(o.req("code"), what);
      f.message = o.opt_str("message").value_or("injected by a golden scenario");
    } else if (kind == "delay") {
      f.k = FaultSpec::K::Delay;
      f.ms = o.u64("ms");
    } else if (kind == "drop_connection") {
      f.k = FaultSpec::K::Drop;
      auto aa = o.opt_bool("after_apply");
      if (!aa) throw Fail(Cat(what, ": missing field \"after_apply\""));
      f.after_apply = *aa;
    } else {
      throw Fail(Cat(what, ": unknown fault \"", kind, "\""));
    }
    o.done();
    out.push_back(std::move(f));
  }
  return out;
}

Step ParseStep(const Json& v, Ctx& ctx, const std::string& what0, bool in_callback) {
  Obj o(v, what0);
  std::string op = o.str("op");
  std::string what;
  if (v.contains("id") && v["id"].is_string()) {
    what = Cat(what0, " (", op, " ", v["id"].get<std::string>(), ")");
  } else {
    what = Cat(what0, " (", op, ")");
  }
  o.set_what(what);
  Step s;
  if (op == "append" || op == "upsert" || op == "delete" || op == "append_arrow") {
    s.k = Step::K::Write;
    WriteOp& w = s.op;
    w.id = ctx.NewId(o.str("id"), what);
    w.writer = ctx.Writer(o);
    if (op == "append" || op == "upsert") {
      w.input = op == "append" ? InputKind::Append : InputKind::Upsert;
      w.row = ParseRow(o.req("row"), *ctx.table, what);
      w.buckets = {static_cast<int32_t>(o.u64("bucket"))};
    } else if (op == "delete") {
      w.input = InputKind::Delete;
      w.row = ParseKey(o.req("key"), *ctx.table, what);
      w.buckets = {static_cast<int32_t>(o.u64("bucket"))};
    } else {
      w.input = InputKind::Arrow;
      for (const Json& r : o.arr("rows")) w.rows.push_back(ParseRow(r, *ctx.table, what));
      for (const Json& b : o.arr("buckets")) {
        if (!b.is_number_unsigned()) throw Fail(Cat(what, ": buckets must be integers"));
        w.buckets.push_back(static_cast<int32_t>(b.get<uint64_t>()));
      }
      if (w.buckets.size() != w.rows.size()) {
        throw Fail(Cat(what, ": ", w.rows.size(), " rows but ", w.buckets.size(), " buckets"));
      }
      // The Rust runner indexes buckets[0] for every op; an empty batch cannot be checked.
      if (w.rows.empty()) throw Fail(Cat(what, ": an append_arrow op needs at least one row"));
    }
    auto notify = o.opt_str("notify");
    if (!notify || *notify == "callback") {
      w.notify = Notify::Callback;
    } else if (*notify == "result") {
      w.notify = Notify::Result;
    } else if (*notify == "detached") {
      w.notify = Notify::Detached;
    } else {
      throw Fail(Cat(what, ": unknown notify \"", *notify, "\""));
    }
    w.callback = ParseCallback(o.opt("callback"), ctx, what, in_callback);
    if (w.notify != Notify::Callback &&
        (w.callback.call || w.callback.gate || w.callback.raise || w.callback.sleep_ms > 0)) {
      throw Fail(Cat(what, ": \"callback\" needs notify = callback"));
    }
    w.expect = ParseOpExpect(o.req("expect"), what);
    if (const Json* x = o.opt("offset")) {
      if (!x->is_number_integer()) throw Fail(Cat(what, ": offset must be an integer"));
      w.offset = x->get<int64_t>();
    }
    if (const Json* a = o.opt_arr("bucket_results")) {
      if (w.input != InputKind::Arrow) throw Fail(Cat(what, ": bucket_results only for append_arrow"));
      std::vector<BucketRes> out;
      for (size_t i = 0; i < a->size(); ++i) {
        Obj bo((*a)[i], Cat(what, ": bucket_results[", i, "]"));
        int32_t b = static_cast<int32_t>(bo.u64("bucket"));
        int64_t rows = static_cast<int64_t>(bo.u64("rows"));
        std::optional<int32_t> err;
        if (const Json* c = bo.opt("error")) err = ParseCode(*c, what);
        bo.done();
        out.emplace_back(b, rows, err);
      }
      w.bucket_results = std::move(out);
    }
    w.timing = Timing::Parse(o);
  } else if (op == "flush" || op == "close") {
    s.k = op == "flush" ? Step::K::Flush : Step::K::Close;
    s.writer = ctx.Writer(o);
    s.timeout_ms = o.opt_u64("timeout_ms");
    s.cexpect = ParseCallExpect(o.opt("expect"), what);
    s.timing = Timing::Parse(o);
  } else if (op == "wait") {
    s.k = Step::K::Wait;
    s.target = o.str("target");
    s.timeout_ms = o.opt_u64("timeout_ms");
    s.cexpect = ParseCallExpect(o.opt("expect"), what);
    s.timing = Timing::Parse(o);
  } else if (in_callback) {
    throw Fail(Cat(what, ": op \"", op, "\" cannot be called from a callback"));
  } else if (op == "add_callback") {
    s.k = Step::K::AddCallback;
    s.id = ctx.NewId(o.str("id"), what);
    s.target = o.str("target");
    s.callback = ParseCallback(o.opt("callback"), ctx, what, false);
  } else if (op == "sleep") {
    s.k = Step::K::Sleep;
    s.ms = o.u64("ms");
  } else if (op == "open_gate") {
    s.k = Step::K::OpenGate;
    s.gate = o.str("gate");
  } else if (op == "await_callback") {
    s.k = Step::K::AwaitCallback;
    s.target = o.str("target");
    s.state = ParseState(o.str("state"));
    s.ms = o.opt_u64("timeout_ms").value_or(10000);
  } else if (op == "assert_callback") {
    s.k = Step::K::AssertCallback;
    s.target = o.str("target");
    s.state = ParseState(o.str("state"));
  } else if (op == "inject") {
    s.k = Step::K::Inject;
    s.faults = ParseFaults(o.arr("faults"), what);
  } else if (op == "parallel") {
    s.k = Step::K::Parallel;
    const Json& threads = o.req("threads");
    if (!threads.is_object()) throw Fail(Cat(what, ": threads must be an object"));
    for (auto it = threads.begin(); it != threads.end(); ++it) {
      if (!it.value().is_array()) throw Fail(Cat(what, ": thread ", it.key(), " must be a list of steps"));
      std::vector<Step> parsed;
      for (size_t i = 0; i < it.value().size(); ++i) {
        Step st = ParseStep(it.value()[i], ctx, Cat(what, ": thread ", it.key(), " step ", i), false);
        if (st.k == Step::K::Parallel) throw Fail(Cat(what, ": parallel blocks do not nest"));
        parsed.push_back(std::move(st));
      }
      s.threads.emplace_back(it.key(), std::move(parsed));
    }
    if (s.threads.empty()) throw Fail(Cat(what, ": no threads"));
  } else {
    throw Fail(Cat(what, ": unknown op \"", op, "\""));
  }
  o.done();
  return s;
}

Scenario ParseScenario(const Json& v) {
  Obj o(v, "scenario");
  Scenario sc;
  o.str("description");
  sc.known_bug = o.opt_str("known_bug");
  sc.settle_ms = o.opt_u64("settle_timeout_ms").value_or(10000);

  Obj t(o.req("table"), "table");
  std::string kind = t.str("kind");
  if (kind == "log") {
    sc.table.pk = false;
  } else if (kind == "pk") {
    sc.table.pk = true;
  } else {
    throw Fail(Cat("table: unknown kind \"", kind, "\""));
  }
  sc.table.bucket_count = static_cast<int32_t>(t.u64("bucket_count"));
  const Json& cols = t.arr("columns");
  for (size_t i = 0; i < cols.size(); ++i) {
    Obj co(cols[i], Cat("table.columns[", i, "]"));
    ColumnSpec c;
    c.name = co.str("name");
    c.type = ParseType(co.str("type"));
    c.nullable = co.opt_bool("nullable").value_or(true);
    co.done();
    sc.table.columns.push_back(std::move(c));
  }
  std::vector<std::string> pk = t.strings("primary_key").value_or(std::vector<std::string>{});
  std::vector<std::string> bucket_key = t.strings("bucket_key").value_or(std::vector<std::string>{});
  t.done();
  if (!sc.table.pk && !pk.empty()) throw Fail("table: a log table has no primary_key");
  if (!sc.table.pk && bucket_key.empty()) {
    throw Fail("table: a log table needs a bucket_key, so that the bucket of every row is known");
  }
  if (sc.table.pk && pk.empty()) throw Fail("table: a pk table needs a primary_key");
  for (const std::string& k : pk) {
    auto it = std::find_if(sc.table.columns.begin(), sc.table.columns.end(),
                           [&](const ColumnSpec& c) { return c.name == k; });
    if (it == sc.table.columns.end()) throw Fail(Cat("table: primary key column \"", k, "\" does not exist"));
    sc.table.pk_indexes.push_back(static_cast<size_t>(it - sc.table.columns.begin()));
  }
  for (const std::string& k : bucket_key) {
    if (std::none_of(sc.table.columns.begin(), sc.table.columns.end(), [&](const ColumnSpec& c) { return c.name == k; })) {
      throw Fail(Cat("table: bucket key column \"", k, "\" does not exist"));
    }
  }
  sc.table.primary_key = pk;
  sc.table.bucket_key = bucket_key.empty() ? pk : bucket_key;

  if (const Json* c = o.opt("config")) {
    if (!c->is_object()) throw Fail("config must be an object");
    for (auto it = c->begin(); it != c->end(); ++it) {
      if (it.key() == "bootstrap.servers") throw Fail("config: bootstrap.servers is set by the runner");
      if (!it.value().is_string()) throw Fail(Cat("config: ", it.key(), " must be a string"));
      sc.config.emplace_back(it.key(), it.value().get<std::string>());
    }
  }
  if (const Json* f = o.opt_arr("faults")) sc.faults = ParseFaults(*f, "faults");

  const Json& ws = o.arr("writers");
  for (size_t i = 0; i < ws.size(); ++i) {
    std::string wwhat = Cat("writers[", i, "]");
    Obj wo(ws[i], wwhat);
    WriterSpec w;
    w.name = wo.str("name");
    std::string wk = wo.str("kind");
    if (wk == "append") {
      w.upsert = false;
    } else if (wk == "upsert") {
      w.upsert = true;
    } else {
      throw Fail(Cat(wwhat, ": unknown kind \"", wk, "\""));
    }
    if (w.upsert != sc.table.pk) throw Fail(Cat(wwhat, ": kind does not fit the table"));
    w.partial_update = wo.strings("partial_update");
    w.max_pending_callbacks = wo.opt_u64("max_pending_callbacks");
    const Json* e = wo.opt("executor");
    if (e == nullptr || (e->is_string() && e->get<std::string>() == "fifo")) {
      w.executor = ExecKind::Fifo;
    } else {
      Obj eo(*e, wwhat + ".executor");
      w.executor = ExecKind::Sharded;
      w.shards = static_cast<size_t>(eo.u64("sharded"));
      eo.done();
    }
    wo.done();
    sc.writers.push_back(std::move(w));
  }
  if (sc.writers.empty()) throw Fail("writers: at least one");
  Ctx ctx;
  ctx.table = &sc.table;
  for (const auto& w : sc.writers) ctx.writers[w.name] = w.upsert;
  if (ctx.writers.size() != sc.writers.size()) throw Fail("writers: duplicate names");
  if (sc.writers.size() == 1) ctx.default_writer = sc.writers[0].name;
  const Json& steps = o.arr("steps");
  for (size_t i = 0; i < steps.size(); ++i) sc.steps.push_back(ParseStep(steps[i], ctx, Cat("steps[", i, "]"), false));

  if (const Json* e = o.opt("expect")) {
    Obj eo(*e, "expect");
    if (const Json* a = eo.opt_arr("callback_order")) {
      for (const Json& chain : *a) {
        if (!chain.is_array()) throw Fail("expect.callback_order: chains must be arrays of ids");
        std::vector<std::string> ids;
        for (const Json& x : chain) {
          if (!x.is_string()) throw Fail("expect.callback_order: ids are strings");
          std::string id = x.get<std::string>();
          if (!ctx.ids.count(id)) throw Fail(Cat("expect.callback_order: unknown id \"", id, "\""));
          ids.push_back(id);
        }
        sc.callback_order.push_back(std::move(ids));
      }
    }
    if (const Json* m = eo.opt("callback_errors")) {
      if (!m->is_object()) throw Fail("expect.callback_errors must be an object");
      for (auto it = m->begin(); it != m->end(); ++it) {
        if (!ctx.writers.count(it.key())) throw Fail(Cat("expect.callback_errors: unknown writer \"", it.key(), "\""));
        if (!it.value().is_number_unsigned()) throw Fail("expect.callback_errors: counts are integers");
        sc.callback_errors[it.key()] = it.value().get<uint64_t>();
      }
    }
    if (const Json* rb = eo.opt("read_back")) {
      Obj ro(*rb, "expect.read_back");
      if (const Json* bm = ro.opt("buckets")) {
        if (sc.table.pk) throw Fail("expect.read_back.buckets is for log tables");
        if (!bm->is_object()) throw Fail("expect.read_back.buckets must be an object");
        for (auto it = bm->begin(); it != bm->end(); ++it) {
          const std::string& k = it.key();
          size_t start = (!k.empty() && (k[0] == '+' || k[0] == '-')) ? 1 : 0;
          bool digits = k.size() > start && k.size() - start <= 9 &&
                        std::all_of(k.begin() + static_cast<std::ptrdiff_t>(start), k.end(),
                                    [](char ch) { return ch >= '0' && ch <= '9'; });
          if (!digits) throw Fail(Cat("expect.read_back.buckets: key \"", k, "\" is not a bucket number"));
          int32_t b = static_cast<int32_t>(std::stol(k));
          if (!it.value().is_array()) throw Fail("expect.read_back.buckets: values are lists of rows");
          std::vector<Row> rows;
          for (const Json& r : it.value()) rows.push_back(ParseRow(r, sc.table, "expect.read_back"));
          sc.read_back_buckets[b] = std::move(rows);
        }
        bool bad = sc.read_back_buckets.size() != static_cast<size_t>(sc.table.bucket_count);
        for (const auto& kv : sc.read_back_buckets) bad = bad || kv.first < 0 || kv.first >= sc.table.bucket_count;
        if (bad) throw Fail("expect.read_back.buckets must list every bucket of the table (empty lists allowed)");
        sc.read_back = Scenario::RB::Log;
      }
      if (const Json* l = ro.opt_arr("lookups")) {
        if (!sc.table.pk) throw Fail("expect.read_back.lookups is for pk tables");
        for (size_t i = 0; i < l->size(); ++i) {
          const Json& x = (*l)[i];
          Obj lo(x, Cat("expect.read_back.lookups[", i, "]"));
          LookupSpec ls;
          ls.key = ParseKey(lo.req("key"), sc.table, "lookup");
          lo.mark("row");
          if (!x.contains("row")) {
            throw Fail(Cat("expect.read_back.lookups[", i, "]: missing field \"row\" (null for absent)"));
          }
          if (!x["row"].is_null()) ls.row = ParseRow(x["row"], sc.table, "lookup");
          lo.done();
          sc.read_back_lookups.push_back(std::move(ls));
        }
        sc.read_back = Scenario::RB::Lookups;
      }
      ro.done();
    }
    eo.done();
  }
  o.done();
  return sc;
}

// ===================================================================================== Arrow input

// A struct array over the table's columns built by hand (Arrow C Data Interface; no Arrow
// library): INT -> int32 "i", BIGINT -> int64 "l", STRING -> utf8 "u", DOUBLE -> float64 "g",
// BOOLEAN -> bit-packed "b"; a validity bitmap where a column holds nulls.
struct ArrowColumn {
  std::vector<uint8_t> validity;
  std::vector<int32_t> i32;
  std::vector<int64_t> i64;
  std::vector<double> f64;
  std::vector<uint8_t> bits;
  std::vector<int32_t> offsets;
  std::string chars;
  const void* buffers[3] = {nullptr, nullptr, nullptr};
  ArrowArray array{};
};

struct ArrowBatch {
  std::vector<std::unique_ptr<ArrowColumn>> columns;
  std::vector<ArrowArray*> children;
  const void* struct_buffers[1] = {nullptr};
};

void ReleaseArrowChild(ArrowArray* a) { a->release = nullptr; }

void ReleaseArrowBatch(ArrowArray* a) {
  for (int64_t i = 0; i < a->n_children; ++i) {
    if (a->children[i]->release != nullptr) a->children[i]->release(a->children[i]);
  }
  delete static_cast<ArrowBatch*>(a->private_data);
  a->release = nullptr;
}

void MakeArrowArray(const TableSpec& t, const std::vector<Row>& rows, ArrowArray* out) {
  auto* batch = new ArrowBatch();
  const int64_t n = static_cast<int64_t>(rows.size());
  const size_t bitmap_bytes = rows.size() / 8 + 1;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    auto col = std::make_unique<ArrowColumn>();
    int64_t nulls = 0;
    col->validity.assign(bitmap_bytes, 0);
    for (size_t r = 0; r < rows.size(); ++r) {
      if (rows[r][c].k == Val::K::Null) {
        ++nulls;
      } else {
        col->validity[r / 8] |= static_cast<uint8_t>(1u << (r % 8));
      }
    }
    col->buffers[0] = nulls > 0 ? col->validity.data() : nullptr;
    int64_t n_buffers = 2;
    switch (t.columns[c].type) {
      case Ty::Int:
        for (const Row& r : rows) col->i32.push_back(static_cast<int32_t>(r[c].i));
        col->i32.reserve(1);
        col->buffers[1] = col->i32.data();
        break;
      case Ty::BigInt:
        for (const Row& r : rows) col->i64.push_back(r[c].i);
        col->i64.reserve(1);
        col->buffers[1] = col->i64.data();
        break;
      case Ty::Double:
        for (const Row& r : rows) col->f64.push_back(r[c].d);
        col->f64.reserve(1);
        col->buffers[1] = col->f64.data();
        break;
      case Ty::Boolean:
        col->bits.assign(bitmap_bytes, 0);
        for (size_t r = 0; r < rows.size(); ++r) {
          if (rows[r][c].b) col->bits[r / 8] |= static_cast<uint8_t>(1u << (r % 8));
        }
        col->buffers[1] = col->bits.data();
        break;
      case Ty::String:
        col->offsets.push_back(0);
        for (const Row& r : rows) {
          col->chars += r[c].s;
          col->offsets.push_back(static_cast<int32_t>(col->chars.size()));
        }
        col->buffers[1] = col->offsets.data();
        col->buffers[2] = col->chars.data();
        n_buffers = 3;
        break;
    }
    col->array = ArrowArray{n, nulls, 0, n_buffers, 0, col->buffers, nullptr, nullptr, ReleaseArrowChild, nullptr};
    batch->children.push_back(&col->array);
    batch->columns.push_back(std::move(col));
  }
  *out = ArrowArray{n,       0, 0, 1, static_cast<int64_t>(batch->children.size()), batch->struct_buffers,
                    batch->children.data(), nullptr, ReleaseArrowBatch, batch};
}

struct ArrowSchemaData {
  std::vector<std::string> names;
  std::vector<ArrowSchema> fields;
  std::vector<ArrowSchema*> children;
};

void ReleaseArrowChildSchema(ArrowSchema* s) { s->release = nullptr; }

void ReleaseArrowSchema(ArrowSchema* s) {
  for (int64_t i = 0; i < s->n_children; ++i) {
    if (s->children[i]->release != nullptr) s->children[i]->release(s->children[i]);
  }
  delete static_cast<ArrowSchemaData*>(s->private_data);
  s->release = nullptr;
}

void MakeArrowSchema(const TableSpec& t, ArrowSchema* out) {
  auto* d = new ArrowSchemaData();
  for (const ColumnSpec& c : t.columns) d->names.push_back(c.name);
  d->fields.resize(t.columns.size());
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const char* format = "i";
    switch (t.columns[i].type) {
      case Ty::Int: format = "i"; break;
      case Ty::BigInt: format = "l"; break;
      case Ty::String: format = "u"; break;
      case Ty::Double: format = "g"; break;
      case Ty::Boolean: format = "b"; break;
    }
    d->fields[i] = ArrowSchema{format, d->names[i].c_str(), nullptr, t.columns[i].nullable ? ARROW_FLAG_NULLABLE : 0,
                               0, nullptr, nullptr, ReleaseArrowChildSchema, nullptr};
  }
  for (auto& f : d->fields) d->children.push_back(&f);
  *out = ArrowSchema{"+s", "", nullptr, 0, static_cast<int64_t>(d->children.size()), d->children.data(), nullptr,
                     ReleaseArrowSchema, d};
}

// ===================================================================================== running

struct Invocation {
  uint64_t seq = 0;
  std::thread::id thread;
  int32_t code = 0;
  int32_t bucket = -1;
  int64_t offset = -1;
  std::vector<BucketRes> bucket_results;
};

Invocation FromCompletion(const fw::WriteCompletion& c) {
  Invocation inv;
  inv.thread = std::this_thread::get_id();
  inv.code = c.result.error_code;
  inv.bucket = c.bucket;
  inv.offset = c.offset;
  for (const fw::BucketResult& b : c.bucket_results) {
    std::optional<int32_t> err;
    if (!b.result.Ok()) err = b.result.error_code;
    inv.bucket_results.emplace_back(b.bucket, b.rows, err);
  }
  return inv;
}

struct OpRecord {
  std::string writer;
  std::optional<std::string> target;  // late callbacks: the op they were registered on
  bool arrow = false;
  std::optional<Notify> notify;
  bool accepted = false;
  uint64_t submit_seq = 0;
  std::optional<std::thread::id> submit_thread;
  std::vector<Invocation> invocations;
  bool started = false;
  bool returned = false;
  std::shared_ptr<fw::WriteResult> result;

  bool ResultDone() const { return result && result->IsDone(); }
};

struct WriterHandle {
  bool upsert = false;
  fw::AppendWriter append;
  fw::UpsertWriter up;

  fw::WriterBase& base() { return upsert ? static_cast<fw::WriterBase&>(up) : static_cast<fw::WriterBase&>(append); }
  fw::Result Flush(std::optional<uint64_t> t) { return t ? base().Flush(milliseconds(*t)) : base().Flush(); }
  fw::Result Close(std::optional<uint64_t> t) { return t ? base().Close(milliseconds(*t)) : base().Close(); }
};

struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
};

struct State {
  TableSpec table;
  fw::TablePath path{"fluss", "golden"};
  const fw::Connection* conn = nullptr;  // outlives every step (owned by RunScenario)
  fw::Table handle;                      // read-back through the protocol (cluster mode)

  std::mutex writers_m;
  std::map<std::string, std::shared_ptr<WriterHandle>> writers;
  std::set<std::string> fifo_writers;

  std::mutex ops_m;
  std::map<std::string, OpRecord> ops;
  std::atomic<uint64_t> cb_seq{0};
  std::atomic<uint64_t> submit_seq{0};

  std::mutex gates_m;
  std::map<std::string, std::shared_ptr<Gate>> gates;

  std::mutex failures_m;
  std::vector<std::string> failures;

  std::mutex submit_threads_m;
  std::set<std::thread::id> submit_threads;

  void AddFailure(std::string msg) {
    std::lock_guard<std::mutex> g(failures_m);
    failures.push_back(std::move(msg));
  }

  std::shared_ptr<WriterHandle> Writer(const std::string& name) {
    std::lock_guard<std::mutex> g(writers_m);
    auto it = writers.find(name);
    if (it == writers.end()) throw Fail(Cat("writer \"", name, "\" is not open"));
    return it->second;
  }

  std::shared_ptr<Gate> GetGate(const std::string& name) {
    std::lock_guard<std::mutex> g(gates_m);
    auto& p = gates[name];
    if (!p) p = std::make_shared<Gate>();
    return p;
  }

  void OpenGate(const std::string& name) {
    auto g = GetGate(name);
    {
      std::lock_guard<std::mutex> l(g->m);
      g->open = true;
    }
    g->cv.notify_all();
  }

  void OpenAllGates() {
    std::vector<std::string> names;
    {
      std::lock_guard<std::mutex> g(gates_m);
      for (const auto& kv : gates) names.push_back(kv.first);
    }
    for (const auto& n : names) OpenGate(n);
  }

  CbState StateOf(const std::string& id) {
    std::lock_guard<std::mutex> g(ops_m);
    auto it = ops.find(id);
    if (it == ops.end()) throw Fail(Cat("unknown op \"", id, "\""));
    if (it->second.returned) return CbState::Returned;
    if (it->second.started) return CbState::Running;
    return CbState::NotStarted;
  }

  void Inject(const std::vector<FaultSpec>& faults) {
    for (const FaultSpec& f : faults) {
      fw::testing::Fault fault;
      switch (f.k) {
        case FaultSpec::K::Error: fault = fw::testing::Fault::Error(f.code, f.message, f.times); break;
        case FaultSpec::K::Delay: fault = fw::testing::Fault::Delay(milliseconds(f.ms), f.times); break;
        case FaultSpec::K::Drop: fault = fw::testing::Fault::DropConnection(f.after_apply, f.times); break;
      }
      fw::Result r = fw::testing::InjectFault(*conn, path, f.bucket, fault);
      if (!r.Ok()) throw Fail(Cat("inject fault on bucket ", f.bucket, ": ", r.ToString()));
    }
  }
};

void RunStep(const std::shared_ptr<State>& state, const Step& step, const std::string& what);

// Marks a callback returned when destroyed (also when the callback throws).
struct ReturnedGuard {
  State* state;
  const std::string& id;
  ~ReturnedGuard() {
    std::lock_guard<std::mutex> g(state->ops_m);
    auto it = state->ops.find(id);
    if (it != state->ops.end()) it->second.returned = true;
  }
};

// The recording callback of op `id`. `alive` is captured: its use_count() tells whether the
// callable still exists (a rejected callback must be destroyed before the call returns).
fw::WriteCallback MakeCallback(const std::shared_ptr<State>& st, const std::string& op_id, const CbSpec& cb_spec,
                               const std::shared_ptr<int>& alive) {
  auto spec = std::make_shared<CbSpec>(cb_spec);
  return [state = st, id = op_id, spec, alive](const fw::WriteCompletion& c) {
    Invocation inv = FromCompletion(c);
    inv.seq = state->cb_seq.fetch_add(1);
    {
      std::lock_guard<std::mutex> g(state->ops_m);
      auto it = state->ops.find(id);
      if (it == state->ops.end()) {
        state->AddFailure(Cat("callback of ", id, ": no op record"));
        return;
      }
      it->second.invocations.push_back(std::move(inv));
      it->second.started = true;
    }
    ReturnedGuard returned{state.get(), id};
    if (spec->sleep_ms > 0) std::this_thread::sleep_for(milliseconds(spec->sleep_ms));
    if (spec->gate) {
      auto gate = state->GetGate(*spec->gate);
      std::unique_lock<std::mutex> l(gate->m);
      if (!gate->cv.wait_for(l, std::chrono::seconds(30), [&] { return gate->open; })) {
        state->AddFailure(Cat("callback of ", id, ": gate \"", *spec->gate, "\" never opened"));
      }
    }
    if (spec->call) {
      try {
        RunStep(state, *spec->call, Cat("call inside the callback of ", id));
      } catch (const std::exception& e) {
        state->AddFailure(e.what());
      }
    }
    if (spec->raise) throw std::runtime_error(Cat("golden: the callback of ", id, " raises on purpose"));
  };
}

fw::GenericRow ToRow(const Row& r, const std::vector<Ty>& types) {
  fw::GenericRow row(r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    const Val& v = r[i];
    if (v.k == Val::K::Null) {
      row.SetNull(i);
      continue;
    }
    switch (types[i]) {
      case Ty::Int: row.SetInt32(i, static_cast<int32_t>(v.i)); break;
      case Ty::BigInt: row.SetInt64(i, v.i); break;
      case Ty::String: row.SetString(i, v.s); break;
      case Ty::Double: row.SetFloat64(i, v.d); break;
      case Ty::Boolean: row.SetBool(i, v.b); break;
    }
  }
  return row;
}

std::vector<Ty> RowTypes(const TableSpec& t) {
  std::vector<Ty> v;
  for (const auto& c : t.columns) v.push_back(c.type);
  return v;
}

std::vector<Ty> KeyTypes(const TableSpec& t) {
  std::vector<Ty> v;
  for (size_t i : t.pk_indexes) v.push_back(t.columns[i].type);
  return v;
}

// A read-back row in the files' terms (type and value).
Row FromGenericRow(const fw::GenericRow& row) {
  Row out;
  for (size_t i = 0; i < row.FieldCount(); ++i) {
    Val v;
    std::string t = row.TypeName(i);
    if (row.IsNull(i)) {
      v.k = Val::K::Null;
    } else if (t == "INT") {
      v.k = Val::K::Int;
      v.i = row.GetInt64(i);
    } else if (t == "BIGINT") {
      v.k = Val::K::BigInt;
      v.i = row.GetInt64(i);
    } else if (t == "STRING") {
      v.k = Val::K::String;
      v.s = row.GetString(i);
    } else if (t == "DOUBLE") {
      v.k = Val::K::Double;
      v.d = row.GetFloat64(i);
    } else if (t == "BOOLEAN") {
      v.k = Val::K::Boolean;
      v.b = row.GetBool(i);
    } else {
      v.k = Val::K::Other;
      v.s = t + " " + row.ToString(i);
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::optional<std::string> Submit(const std::shared_ptr<State>& state, const WriteOp& op, const std::string& what0) {
  std::string what = Cat(what0, " ", op.id);
  {
    std::lock_guard<std::mutex> g(state->ops_m);
    OpRecord& r = state->ops[op.id];
    r.writer = op.writer;
    r.arrow = op.input == InputKind::Arrow;
    r.notify = op.notify;
  }
  std::shared_ptr<WriterHandle> w = state->Writer(op.writer);
  auto alive = std::make_shared<int>(0);
  fw::WriteCallback cb = MakeCallback(state, op.id, op.callback, alive);
  std::optional<fw::GenericRow> row;
  if (op.input == InputKind::Delete) {
    row = ToRow(op.row, KeyTypes(state->table));
  } else if (op.input != InputKind::Arrow) {
    row = ToRow(op.row, RowTypes(state->table));
  }
  ArrowArray array{};
  ArrowSchema schema{};
  if (op.input == InputKind::Arrow) {
    MakeArrowArray(state->table, op.rows, &array);
    MakeArrowSchema(state->table, &schema);
  }
  auto result = std::make_shared<fw::WriteResult>();
  bool used_cb = op.notify == Notify::Callback;
  bool fits = (op.input == InputKind::Append || op.input == InputKind::Arrow) ? !w->upsert : w->upsert;
  if (!fits) {
    if (array.release != nullptr) array.release(&array);
    if (schema.release != nullptr) schema.release(&schema);
    throw Fail(Cat(what, ": this op does not fit writer \"", op.writer, "\""));
  }
  fw::Result res;
  auto t0 = Clock::now();
  switch (op.input) {
    case InputKind::Append:
      switch (op.notify) {
        case Notify::Callback: res = w->append.Append(*row, std::move(cb)); break;
        case Notify::Result: res = w->append.Append(*row, *result); break;
        case Notify::Detached: res = w->append.Append(*row); break;
      }
      break;
    case InputKind::Arrow:
      switch (op.notify) {
        case Notify::Callback: res = w->append.AppendArrowBatch(&array, &schema, std::move(cb)); break;
        case Notify::Result: res = w->append.AppendArrowBatch(&array, &schema, *result); break;
        case Notify::Detached: res = w->append.AppendArrowBatch(&array, &schema); break;
      }
      break;
    case InputKind::Upsert:
      switch (op.notify) {
        case Notify::Callback: res = w->up.Upsert(*row, std::move(cb)); break;
        case Notify::Result: res = w->up.Upsert(*row, *result); break;
        case Notify::Detached: res = w->up.Upsert(*row); break;
      }
      break;
    case InputKind::Delete:
      switch (op.notify) {
        case Notify::Callback: res = w->up.Delete(*row, std::move(cb)); break;
        case Notify::Result: res = w->up.Delete(*row, *result); break;
        case Notify::Detached: res = w->up.Delete(*row); break;
      }
      break;
  }
  auto elapsed = Clock::now() - t0;
  // The callable's captures hold `alive`: use_count() == 1 means it was destroyed (only looked
  // at after a rejection; an accepted callable may run and be destroyed at any time).
  bool destroyed = alive.use_count() == 1;
  if (array.release != nullptr || schema.release != nullptr) {
    if (array.release != nullptr) array.release(&array);
    if (schema.release != nullptr) schema.release(&schema);
    return Cat(what, ": the Arrow structs were not moved from by AppendArrowBatch");
  }
  if (res.Ok()) {
    uint64_t seq = state->submit_seq.fetch_add(1);
    {
      std::lock_guard<std::mutex> g(state->ops_m);
      OpRecord& r = state->ops[op.id];
      r.accepted = true;
      r.submit_seq = seq;
      r.submit_thread = std::this_thread::get_id();
      if (op.notify == Notify::Result) r.result = result;
    }
    if (!op.expect.AllowsAccept()) {
      return Cat(what, ": expected ", op.expect.ToString(), ", but the submission was accepted");
    }
  } else {
    if (used_cb && !destroyed) {
      return Cat(what, ": rejected synchronously (", res.ToString(),
                 ") but its callback was not destroyed before the call returned");
    }
    if (!op.expect.AllowsSync(res.error_code)) {
      return Cat(what, ": expected ", op.expect.ToString(), ", got a synchronous error ", res.ToString());
    }
  }
  return op.timing.Check(what, elapsed);
}

std::optional<std::string> CallResult(const std::string& what, const fw::Result& res, const CallExpect& expect,
                                      const Timing& timing, Clock::duration elapsed) {
  bool match = expect.ok ? res.Ok() : (!res.Ok() && res.error_code == expect.code);
  if (!match) return Cat(what, ": expected ", expect.ToString(), ", got ", res.ToString());
  return timing.Check(what, elapsed);
}

// Ops of `writer` accepted so far (for the flush/close watermark).
std::vector<std::string> AcceptedOps(State& state, const std::string& writer) {
  std::lock_guard<std::mutex> g(state.ops_m);
  std::vector<std::string> out;
  for (const auto& kv : state.ops) {
    if (kv.second.accepted && !kv.second.target && kv.second.writer == writer) out.push_back(kv.first);
  }
  return out;
}

// C6: after a successful flush/close, every op accepted before it has completed and its callback
// has returned.
std::optional<std::string> CheckWatermark(State& state, const std::string& what, const std::vector<std::string>& before) {
  std::lock_guard<std::mutex> g(state.ops_m);
  for (const std::string& id : before) {
    const OpRecord& r = state.ops.at(id);
    bool done = true;
    if (r.notify == Notify::Callback) done = r.returned;
    if (r.notify == Notify::Result) done = r.ResultDone();
    if (!done) return Cat(what, " returned ok, but ", id, " (accepted before it) had not completed and returned");
  }
  return std::nullopt;
}

std::shared_ptr<fw::WriteResult> ResultOf(State& state, const std::string& target) {
  std::lock_guard<std::mutex> g(state.ops_m);
  auto it = state.ops.find(target);
  if (it == state.ops.end()) return nullptr;
  return it->second.result;
}

// Runs one step; a failure throws Fail.
void RunStep(const std::shared_ptr<State>& state, const Step& step, const std::string& what) {
  auto check = [](std::optional<std::string> e) {
    if (e) throw Fail(*e);
  };
  switch (step.k) {
    case Step::K::Write:
      check(Submit(state, step.op, what));
      return;
    case Step::K::Flush:
    case Step::K::Close: {
      bool flush = step.k == Step::K::Flush;
      std::shared_ptr<WriterHandle> w = state->Writer(step.writer);
      std::vector<std::string> before = AcceptedOps(*state, step.writer);
      std::string name = Cat(what, flush ? " flush " : " close ", step.writer);
      auto t0 = Clock::now();
      fw::Result res = flush ? w->Flush(step.timeout_ms) : w->Close(step.timeout_ms);
      check(CallResult(name, res, step.cexpect, step.timing, Clock::now() - t0));
      if (res.Ok()) check(CheckWatermark(*state, name, before));
      return;
    }
    case Step::K::Wait: {
      std::shared_ptr<fw::WriteResult> result = ResultOf(*state, step.target);
      if (!result) throw Fail(Cat(what, ": wait on \"", step.target, "\", which is not an accepted notify=result op"));
      fw::WriteCompletion out;
      auto t0 = Clock::now();
      fw::Result res = step.timeout_ms ? result->Wait(milliseconds(*step.timeout_ms), &out) : result->Wait(&out);
      auto elapsed = Clock::now() - t0;
      // "ok" = Wait returned a completion (filled `out`, whatever its outcome); else Wait failed.
      fw::Result call;
      if (out.table.empty()) {
        call = res;
        if (call.Ok()) throw Fail(Cat(what, " wait ", step.target, ": Wait returned OK without a completion"));
      }
      check(CallResult(Cat(what, " wait ", step.target), call, step.cexpect, step.timing, elapsed));
      return;
    }
    case Step::K::AddCallback: {
      std::shared_ptr<fw::WriteResult> result = ResultOf(*state, step.target);
      if (!result) {
        throw Fail(Cat(what, ": add_callback on \"", step.target, "\", which is not an accepted notify=result op"));
      }
      {
        std::lock_guard<std::mutex> g(state->ops_m);
        std::string writer = state->ops.at(step.target).writer;
        OpRecord& r = state->ops[step.id];
        r.writer = writer;
        r.target = step.target;
        r.notify = Notify::Callback;
        r.accepted = true;
        r.submit_seq = state->submit_seq.fetch_add(1);
        r.submit_thread = std::this_thread::get_id();
      }
      auto alive = std::make_shared<int>(0);
      fw::Result res = result->OnComplete(MakeCallback(state, step.id, step.callback, alive));
      if (!res.Ok()) throw Fail(Cat(what, ": OnComplete on \"", step.target, "\" failed: ", res.ToString()));
      return;
    }
    case Step::K::Sleep:
      std::this_thread::sleep_for(milliseconds(step.ms));
      return;
    case Step::K::OpenGate:
      state->OpenGate(step.gate);
      return;
    case Step::K::AwaitCallback: {
      auto deadline = Clock::now() + milliseconds(step.ms);
      for (;;) {
        CbState s = state->StateOf(step.target);
        bool reached = step.state == CbState::Running ? s != CbState::NotStarted : s == step.state;
        if (reached) return;
        if (Clock::now() >= deadline) {
          throw Fail(Cat(what, ": the callback of ", step.target, " did not reach ", StateName(step.state), " within ",
                         step.ms, " ms (it is ", StateName(s), ")"));
        }
        std::this_thread::sleep_for(milliseconds(1));
      }
    }
    case Step::K::AssertCallback: {
      CbState s = state->StateOf(step.target);
      if (s != step.state) {
        throw Fail(Cat(what, ": the callback of ", step.target, " is ", StateName(s), ", expected ", StateName(step.state)));
      }
      return;
    }
    case Step::K::Inject:
      state->Inject(step.faults);
      return;
    case Step::K::Parallel: {
      // All threads start together (a barrier), the step ends when all joined.
      std::mutex m;
      std::condition_variable cv;
      size_t arrived = 0;
      const size_t n = step.threads.size();
      std::vector<std::string> errors(n);
      std::vector<std::thread> threads;
      for (size_t i = 0; i < n; ++i) {
        threads.emplace_back([&, i] {
          const auto& [name, steps] = step.threads[i];
          {
            std::lock_guard<std::mutex> g(state->submit_threads_m);
            state->submit_threads.insert(std::this_thread::get_id());
          }
          {
            std::unique_lock<std::mutex> l(m);
            if (++arrived == n) {
              cv.notify_all();
            } else {
              cv.wait(l, [&] { return arrived == n; });
            }
          }
          std::string twhat = Cat(what, " thread ", name);
          try {
            for (size_t j = 0; j < steps.size(); ++j) RunStep(state, steps[j], Cat(twhat, " step ", j));
          } catch (const Fail& e) {
            errors[i] = e.what();
          } catch (const std::exception& e) {
            errors[i] = Cat(twhat, ": exception ", e.what());
          }
        });
      }
      for (auto& t : threads) t.join();
      std::string all;
      for (const auto& e : errors) {
        if (!e.empty()) all += (all.empty() ? "" : "\n") + e;
      }
      if (!all.empty()) throw Fail(all);
      return;
    }
  }
}

// Wait until every accepted callback ran and returned, and every result completed.
std::optional<std::string> Settle(State& state, uint64_t ms) {
  auto deadline = Clock::now() + milliseconds(ms);
  for (;;) {
    std::vector<std::string> pending;
    {
      std::lock_guard<std::mutex> g(state.ops_m);
      for (const auto& [id, r] : state.ops) {
        if (!r.accepted) continue;
        if ((r.notify == Notify::Callback && !r.returned) || (r.notify == Notify::Result && !r.ResultDone())) {
          pending.push_back(id);
        }
      }
    }
    if (pending.empty()) return std::nullopt;
    if (Clock::now() >= deadline) {
      std::string list;
      for (const auto& p : pending) list += (list.empty() ? "\"" : ", \"") + p + "\"";
      return Cat("after the last step, these never completed within ", ms, " ms: [", list, "]");
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
}

void AllWriteOps(const Step& s, std::vector<WriteOp>& out) {
  if (s.k == Step::K::Write) {
    out.push_back(s.op);
    if (s.op.callback.call) AllWriteOps(*s.op.callback.call, out);
  } else if (s.k == Step::K::AddCallback) {
    if (s.callback.call) AllWriteOps(*s.callback.call, out);
  } else if (s.k == Step::K::Parallel) {
    for (const auto& t : s.threads) {
      for (const Step& x : t.second) AllWriteOps(x, out);
    }
  }
}

std::vector<std::string> Check(const Scenario& sc, State& state,
                               const std::map<std::string, std::shared_ptr<std::atomic<uint64_t>>>& cb_errors) {
  std::vector<std::string> errs;
  std::vector<WriteOp> list;
  for (const Step& s : sc.steps) AllWriteOps(s, list);
  std::map<std::string, WriteOp> specs;
  for (WriteOp& o : list) specs.emplace(o.id, std::move(o));
  std::set<std::thread::id> submitters;
  {
    std::lock_guard<std::mutex> g(state.submit_threads_m);
    submitters = state.submit_threads;
  }
  std::lock_guard<std::mutex> g(state.ops_m);
  auto& ops = state.ops;

  // Per op: outcome, bucket, offset, bucket results, exactly once.
  for (const auto& [id, spec] : specs) {
    auto it = ops.find(id);
    if (it == ops.end()) {
      errs.push_back(Cat(id, ": never submitted (a step before it failed?)"));
      continue;
    }
    const OpRecord& r = it->second;
    if (!r.accepted) continue;  // sync errors were checked at submission
    std::optional<Invocation> completion;
    if (r.notify == Notify::Callback) {
      if (r.invocations.size() != 1) {
        errs.push_back(Cat(id, ": callback ran ", r.invocations.size(), " times, expected exactly once"));
        continue;
      }
      completion = r.invocations[0];
    } else if (r.notify == Notify::Result && r.ResultDone()) {
      fw::WriteCompletion c;
      (void)r.result->Wait(milliseconds(0), &c);
      if (c.table.empty()) {
        errs.push_back(Cat(id, ": IsDone() but Wait(0) returned no completion"));
        continue;
      }
      completion = FromCompletion(c);
    }
    if (!completion) continue;
    const Invocation& c = *completion;
    if (!spec.expect.AllowsOutcome(c.code)) {
      errs.push_back(Cat(id, ": completed with ", CodeName(c.code), ", expected ", spec.expect.ToString()));
    }
    if (c.bucket != spec.buckets[0]) {
      errs.push_back(Cat(id, ": completion bucket ", c.bucket, " but the file says ", spec.buckets[0]));
    }
    if (spec.offset && c.offset != *spec.offset) {
      errs.push_back(Cat(id, ": offset ", c.offset, " expected ", *spec.offset));
    }
    if (spec.input == InputKind::Arrow) {
      std::map<int32_t, int64_t> want, got;
      for (int32_t b : spec.buckets) want[b] += 1;
      for (const auto& [b, n, e] : c.bucket_results) got[b] = n;
      if (want != got) {
        auto show = [](const std::map<int32_t, int64_t>& m) {
          std::string s = "{";
          for (const auto& kv : m) s += Cat(s.size() > 1 ? ", " : "", kv.first, ": ", kv.second);
          return s + "}";
        };
        errs.push_back(Cat(id, ": bucket_results rows per bucket ", show(got), ", the file's buckets give ", show(want)));
      }
      if (spec.bucket_results) {
        std::vector<BucketRes> w = *spec.bucket_results;
        std::sort(w.begin(), w.end());
        if (c.bucket_results != w) {
          errs.push_back(Cat(id, ": bucket_results ", ShowBucketResults(c.bucket_results), ", expected ", ShowBucketResults(w)));
        }
      }
    }
    if (r.notify == Notify::Callback && submitters.count(c.thread)) {
      errs.push_back(Cat(id, ": callback ran on a submitting thread (C2)"));
    }
  }
  // Late callbacks: exactly once, the target's outcome, never on a submitting thread.
  for (const auto& [id, r] : ops) {
    if (!r.target) continue;
    const std::string& target = *r.target;
    if (r.invocations.size() != 1) {
      errs.push_back(Cat(id, " (late callback on ", target, "): ran ", r.invocations.size(), " times, expected once"));
      continue;
    }
    std::optional<int32_t> want;
    const OpRecord& t = ops.at(target);
    if (t.ResultDone()) {
      fw::WriteCompletion c;
      (void)t.result->Wait(milliseconds(0), &c);
      if (!c.table.empty()) want = c.result.error_code;
    }
    if (want != r.invocations[0].code) {
      errs.push_back(Cat(id, ": late callback saw ", CodeName(r.invocations[0].code), ", its result has ",
                         want ? CodeName(*want) : std::string("no completion")));
    }
    if (submitters.count(r.invocations[0].thread)) errs.push_back(Cat(id, ": late callback ran on a submitting thread (C2)"));
  }
  // C2: every callback of a fifo writer on the connection's one worker thread.
  std::set<std::thread::id> fifo_threads;
  for (const auto& [id, r] : ops) {
    if (!state.fifo_writers.count(r.writer)) continue;
    for (const auto& inv : r.invocations) fifo_threads.insert(inv.thread);
  }
  if (fifo_threads.size() > 1) {
    errs.push_back(Cat("callbacks of fifo writers ran on ", fifo_threads.size(), " threads, expected one worker"));
  }
  // C3: per (submitting thread, writer, bucket), single-record callbacks in submission order.
  std::map<std::tuple<std::thread::id, std::string, int32_t>, std::vector<std::tuple<uint64_t, uint64_t, std::string>>> groups;
  for (const auto& [id, r] : ops) {
    if (r.accepted && !r.target && !r.arrow && r.notify == Notify::Callback && r.invocations.size() == 1) {
      groups[{*r.submit_thread, r.writer, r.invocations[0].bucket}].emplace_back(r.submit_seq, r.invocations[0].seq, id);
    }
  }
  for (auto& [key, v] : groups) {
    std::sort(v.begin(), v.end());
    for (size_t i = 1; i < v.size(); ++i) {
      if (std::get<1>(v[i - 1]) > std::get<1>(v[i])) {
        errs.push_back(Cat("writer ", std::get<1>(key), " bucket ", std::get<2>(key), ": ", std::get<2>(v[i - 1]),
                           " was submitted before ", std::get<2>(v[i]), " but its callback ran after (C3)"));
      }
    }
  }
  // Log tables: per bucket, successful single-record offsets grow in callback order.
  if (!sc.table.pk) {
    std::map<int32_t, std::vector<std::tuple<uint64_t, int64_t, std::string>>> per;
    for (const auto& [id, r] : ops) {
      if (!r.target && !r.arrow && r.invocations.size() == 1 && r.invocations[0].code == 0) {
        per[r.invocations[0].bucket].emplace_back(r.invocations[0].seq, r.invocations[0].offset, id);
      }
    }
    for (auto& [b, v] : per) {
      std::sort(v.begin(), v.end());
      for (size_t i = 1; i < v.size(); ++i) {
        if (std::get<1>(v[i - 1]) >= std::get<1>(v[i])) {
          errs.push_back(Cat("bucket ", b, ": callback of ", std::get<2>(v[i - 1]), " (offset ", std::get<1>(v[i - 1]),
                             ") ran before ", std::get<2>(v[i]), " (offset ", std::get<1>(v[i]), ")"));
        }
      }
    }
  }
  // Explicit order chains.
  for (const auto& chain : sc.callback_order) {
    std::string shown = "[";
    for (size_t i = 0; i < chain.size(); ++i) shown += (i ? ", " : "") + chain[i];
    shown += "]";
    std::optional<std::pair<uint64_t, std::string>> prev;
    for (const std::string& id : chain) {
      auto it = ops.find(id);
      if (it == ops.end() || it->second.invocations.empty()) {
        errs.push_back(Cat("callback_order ", shown, ": ", id, " has no callback invocation"));
        break;
      }
      uint64_t seq = it->second.invocations[0].seq;
      if (prev && seq <= prev->first) errs.push_back(Cat("callback_order ", shown, ": ", id, " ran before ", prev->second));
      prev = std::make_pair(seq, id);
    }
  }
  // Callback errors per writer.
  for (const WriterSpec& ws : sc.writers) {
    auto w = sc.callback_errors.find(ws.name);
    uint64_t want = w == sc.callback_errors.end() ? 0 : w->second;
    uint64_t got = cb_errors.at(ws.name)->load();
    if (want != got) {
      errs.push_back(Cat("writer ", ws.name, ": ", got, " callback errors reported to the error handler, expected ", want));
    }
  }
  // Read-back.
  if (sc.read_back == Scenario::RB::Log) {
    for (const auto& [b, want] : sc.read_back_buckets) {
      std::vector<fw::ScannedRow> rows;
      fw::Result r = g_bootstrap.empty() ? fw::testing::Scan(*state.conn, state.path, b, 0, rows)
                                         : state.handle.Scan(b, 0, rows);
      if (!r.Ok()) {
        errs.push_back(Cat("read-back bucket ", b, ": ", r.ToString()));
        continue;
      }
      std::vector<Row> got;
      for (const auto& sr : rows) got.push_back(FromGenericRow(sr.row));
      if (got != want) {
        errs.push_back(Cat("read-back bucket ", b, ":\n  got      ", ShowRows(got), "\n  expected ", ShowRows(want)));
      }
    }
  } else if (sc.read_back == Scenario::RB::Lookups) {
    for (const LookupSpec& l : sc.read_back_lookups) {
      fw::GenericRow key = ToRow(l.key, KeyTypes(sc.table));
      fw::GenericRow out;
      bool found = false;
      fw::Result r = g_bootstrap.empty() ? fw::testing::Lookup(*state.conn, state.path, key, out, found)
                                         : state.handle.Lookup(key, out, found);
      if (!r.Ok()) {
        errs.push_back(Cat("lookup ", ShowRow(l.key), ": ", r.ToString()));
        continue;
      }
      std::optional<Row> got;
      if (found) got = FromGenericRow(out);
      if (got != l.row) {
        errs.push_back(Cat("lookup ", ShowRow(l.key), ": got ", got ? ShowRow(*got) : std::string("absent"), ", expected ",
                           l.row ? ShowRow(*l.row) : std::string("absent")));
      }
    }
  }
  return errs;
}

std::vector<std::string> RunScenario(const Scenario& sc) {
  fw::Configuration config;
  config.bootstrap_servers = g_bootstrap.empty() ? std::string("embedded") : g_bootstrap;
  for (const auto& [k, v] : sc.config) config.Set(k, v);
  fw::Connection conn;
  fw::Result r = fw::Connection::Create(config, conn);
  if (!r.Ok()) return {Cat("connect (config): ", r.ToString())};
  fw::Admin admin;
  r = conn.GetAdmin(admin);
  if (!r.Ok()) return {Cat("admin: ", r.ToString())};
  fw::TableDescriptor desc;
  for (const ColumnSpec& c : sc.table.columns) {
    fw::DataType t;
    switch (c.type) {
      case Ty::Int: t = fw::DataType::Int(); break;
      case Ty::BigInt: t = fw::DataType::BigInt(); break;
      case Ty::String: t = fw::DataType::String(); break;
      case Ty::Double: t = fw::DataType::Double(); break;
      case Ty::Boolean: t = fw::DataType::Boolean(); break;
    }
    desc.schema.columns.push_back(fw::Column{c.name, t, c.nullable});
  }
  desc.schema.primary_keys = sc.table.primary_key;
  desc.bucket_count = sc.table.bucket_count;
  if (!sc.table.pk) desc.bucket_keys = sc.table.bucket_key;
  auto state = std::make_shared<State>();
  state->table = sc.table;
  state->conn = &conn;
  if (!g_bootstrap.empty()) {
    // A table of its own per run: the cluster is shared and outlives this process.
    auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
    state->path = fw::TablePath("golden_cpp", Cat("g_", ::getpid(), "_", nanos % 1000000000000LL));
    r = admin.CreateDatabase(state->path.database_name, true);
    if (!r.Ok()) return {Cat("create database: ", r.ToString())};
  }
  r = admin.CreateTable(state->path, desc, false);
  // On a cluster, a table whose buckets get no leader (a Fluss 0.9.1 coordinator now and then
  // never processes a new table) is abandoned for another one under a fresh name.
  for (int attempt = 1; !g_bootstrap.empty() && !r.Ok() && r.error_code == 44 && attempt <= 2; ++attempt) {
    std::fprintf(stderr, "golden: %s: %s; creating another table\n", state->path.ToString().c_str(), r.ToString().c_str());
    state->path = fw::TablePath(state->path.database_name, Cat(state->path.table_name, "_r", attempt));
    r = admin.CreateTable(state->path, desc, false);
  }
  if (!r.Ok()) return {Cat("create table ", state->path.ToString(), ": ", r.ToString())};
  fw::Table table;
  r = conn.GetTable(state->path, table);
  if (!r.Ok()) return {Cat("get table: ", r.ToString())};
  state->handle = table;
  if (!g_bootstrap.empty()) {
    // Wait until every bucket of the fresh table has a leader that answers (Scan retries
    // LEADER_NOT_AVAILABLE and friends): the scenario's steps then start on a ready table.
    for (int32_t b = 0; b < table.BucketCount(); ++b) {
      std::vector<fw::ScannedRow> rows;
      r = table.Scan(b, 0, rows);
      if (!r.Ok()) return {Cat("table ", state->path.ToString(), " bucket ", b, " not ready: ", r.ToString())};
    }
  }
  for (const WriterSpec& ws : sc.writers) {
    if (ws.executor == ExecKind::Fifo) state->fifo_writers.insert(ws.name);
  }
  state->submit_threads.insert(std::this_thread::get_id());

  std::vector<std::string> errors;
  try {
    state->Inject(sc.faults);
  } catch (const Fail& e) {
    return {e.what()};
  }
  std::map<std::string, std::shared_ptr<std::atomic<uint64_t>>> cb_errors;
  for (const WriterSpec& ws : sc.writers) {
    auto counter = std::make_shared<std::atomic<uint64_t>>(0);
    cb_errors[ws.name] = counter;
    fw::WriteCallbackOptions opts =
        ws.executor == ExecKind::Sharded ? fw::WriteCallbackOptions::Sharded(ws.shards) : fw::WriteCallbackOptions{};
    opts.error_handler = [counter](const fw::CallbackError&) { counter->fetch_add(1); };
    if (ws.max_pending_callbacks) opts.max_pending_callbacks = *ws.max_pending_callbacks;
    auto h = std::make_shared<WriterHandle>();
    h->upsert = ws.upsert;
    if (ws.upsert) {
      fw::TableUpsert up = table.NewUpsert();
      if (ws.partial_update) up.PartialUpdateByName(*ws.partial_update);
      r = up.CreateWriter(h->up, opts);
    } else {
      r = table.NewAppend().CreateWriter(h->append, opts);
    }
    if (!r.Ok()) {
      errors.push_back(Cat("writer ", ws.name, ": ", r.ToString()));
      break;
    }
    std::lock_guard<std::mutex> g(state->writers_m);
    state->writers[ws.name] = h;
  }

  if (errors.empty()) {
    for (size_t i = 0; i < sc.steps.size(); ++i) {
      try {
        RunStep(state, sc.steps[i], Cat("steps[", i, "]"));
      } catch (const Fail& e) {
        errors.push_back(e.what());
        break;
      }
    }
  }
  if (errors.empty()) {
    if (auto e = Settle(*state, sc.settle_ms)) errors.push_back(*e);
  }
  state->OpenAllGates();
  if (errors.empty()) {
    std::vector<std::string> e = Check(sc, *state, cb_errors);
    errors.insert(errors.end(), e.begin(), e.end());
  }
  // Tear down: close every writer (bounded), then the connection; the writers are destroyed
  // here, on the main thread.
  std::map<std::string, std::shared_ptr<WriterHandle>> writers;
  {
    std::lock_guard<std::mutex> g(state->writers_m);
    writers.swap(state->writers);
  }
  for (auto& kv : writers) (void)kv.second->Close(10000);  // best effort: the checks below see the outcome
  writers.clear();
  (void)conn.Close(std::chrono::seconds(10));
  // Exactly once, also after teardown.
  if (errors.empty()) {
    std::lock_guard<std::mutex> g(state->ops_m);
    for (const auto& [id, rec] : state->ops) {
      size_t want = rec.accepted && rec.notify == Notify::Callback ? 1 : 0;
      if (rec.invocations.size() != want) {
        errors.push_back(Cat(id, ": callback ran ", rec.invocations.size(), " times after teardown, expected ", want));
      }
    }
  }
  {
    std::lock_guard<std::mutex> g(state->failures_m);
    errors.insert(errors.end(), state->failures.begin(), state->failures.end());
    state->failures.clear();
  }
  state->conn = nullptr;
  return errors;
}

int RunFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << path << ": cannot open\n";
    return 1;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  std::vector<std::string> errors;
  std::optional<std::string> known_bug;
  try {
    Json json;
    try {
      json = Json::parse(buf.str());
    } catch (const Json::exception& e) {
      throw Fail(Cat("invalid JSON: ", e.what()));
    }
    Scenario sc = ParseScenario(json);
    known_bug = sc.known_bug;
    if (!g_bootstrap.empty()) {
      if (UsesFaults(json, true)) {
        throw Fail("this scenario injects faults (\"faults\" or an \"inject\" step), which a real cluster cannot do: "
                   "it runs only on the embedded engine");
      }
      std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
      auto ex = ClusterExclusions().find(name);
      if (ex != ClusterExclusions().end()) {
        std::cout << path << ": EXCLUDED against a real cluster: " << ex->second << "\n";
        return 77;
      }
    }
    errors = RunScenario(sc);
  } catch (const Fail& e) {
    errors.push_back(e.what());
  } catch (const std::exception& e) {
    errors.push_back(Cat("unexpected exception: ", e.what()));
  }
  if (known_bug) {
    if (errors.empty()) {
      std::cerr << path << ": known_bug (" << *known_bug << "): the scenario passed; remove \"known_bug\" from the file\n";
    } else {
      std::cerr << path << ": known_bug (" << *known_bug << "):\n";
      for (const auto& e : errors) std::cerr << e << "\n";
    }
    return 1;
  }
  if (!errors.empty()) {
    std::cerr << path << ": FAILED\n";
    for (const auto& e : errors) std::cerr << e << "\n";
    return 1;
  }
  std::cout << path << ": ok\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--bootstrap") {
    g_bootstrap = argv[2];
    if (g_bootstrap.empty()) {
      std::cerr << "golden_runner: --bootstrap needs a cluster address\n";
      return 2;
    }
    return RunFile(argv[3]);
  }
  if (argc != 2) {
    std::cerr << "usage: golden_runner [--bootstrap <host:port>] <golden/NNN_name.json>\n";
    return 2;
  }
  return RunFile(argv[1]);
}
