// test_nested.cpp: ARRAY, MAP and ROW columns through the C++ API, on the embedded engine and
// on a real Fluss 0.9.1 cluster (fixture: backend_test.h): nested types from DataType::Array /
// Map / Row come back from Admin::GetTableInfo as created; rows with nested values (NULL at every
// level, empty arrays and maps, maps of arrays inside rows inside arrays) read back through
// GenericRow::GetArray / GetMapKeys / GetMapValues / GetRow by scan (log table) and lookup
// (primary-key table); bad nested values are InvalidRow naming the place, with nothing accepted;
// malformed nested types are InvalidTable naming the column; ToString of nested values.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backend_test.h"

namespace {

// ----- a small model of values, set into and compared with GenericRows -----

struct Val {
  enum class Kind { Null, Int, BigInt, Double, Str, Array, Map, Row };
  Kind kind = Kind::Null;
  int64_t i = 0;
  double d = 0;
  std::string s;
  std::vector<Val> items;   // ARRAY elements, MAP keys, ROW fields
  std::vector<Val> values;  // MAP values
};

Val Null() { return Val{}; }
Val Int(int64_t v) {
  Val x;
  x.kind = Val::Kind::Int;
  x.i = v;
  return x;
}
Val Big(int64_t v) {
  Val x = Int(v);
  x.kind = Val::Kind::BigInt;
  return x;
}
Val Dbl(double v) {
  Val x;
  x.kind = Val::Kind::Double;
  x.d = v;
  return x;
}
Val Str(std::string v) {
  Val x;
  x.kind = Val::Kind::Str;
  x.s = std::move(v);
  return x;
}
Val Arr(std::vector<Val> items) {
  Val x;
  x.kind = Val::Kind::Array;
  x.items = std::move(items);
  return x;
}
Val MapOf(std::vector<std::pair<Val, Val>> entries) {
  Val x;
  x.kind = Val::Kind::Map;
  for (auto& [k, v] : entries) {
    x.items.push_back(std::move(k));
    x.values.push_back(std::move(v));
  }
  return x;
}
Val RowOf(std::vector<Val> fields) {
  Val x;
  x.kind = Val::Kind::Row;
  x.items = std::move(fields);
  return x;
}

fw::GenericRow ToRow(const std::vector<Val>& vals);

void Set(fw::GenericRow& r, size_t i, const Val& v) {
  switch (v.kind) {
    case Val::Kind::Null:
      r.SetNull(i);
      break;
    case Val::Kind::Int:
      r.SetInt32(i, static_cast<int32_t>(v.i));
      break;
    case Val::Kind::BigInt:
      r.SetInt64(i, v.i);
      break;
    case Val::Kind::Double:
      r.SetFloat64(i, v.d);
      break;
    case Val::Kind::Str:
      r.SetString(i, v.s);
      break;
    case Val::Kind::Array:
      r.SetArray(i, ToRow(v.items));
      break;
    case Val::Kind::Map:
      r.SetMap(i, ToRow(v.items), ToRow(v.values));
      break;
    case Val::Kind::Row:
      r.SetRow(i, ToRow(v.items));
      break;
  }
}

fw::GenericRow ToRow(const std::vector<Val>& vals) {
  fw::GenericRow r(vals.size());
  for (size_t i = 0; i < vals.size(); ++i) Set(r, i, vals[i]);
  return r;
}

const char* TypeNameOf(Val::Kind k) {
  switch (k) {
    case Val::Kind::Null:
      return "NULL";
    case Val::Kind::Int:
      return "INT";
    case Val::Kind::BigInt:
      return "BIGINT";
    case Val::Kind::Double:
      return "DOUBLE";
    case Val::Kind::Str:
      return "STRING";
    case Val::Kind::Array:
      return "ARRAY";
    case Val::Kind::Map:
      return "MAP";
    case Val::Kind::Row:
      return "ROW";
  }
  return "?";
}

void ExpectParts(const fw::GenericRow& got, const std::vector<Val>& want, const std::string& where);

// Field `i` of `got` is `want`, read through the getters, at every level.
void Expect(const fw::GenericRow& got, size_t i, const Val& want, const std::string& where) {
  ASSERT_EQ(got.TypeName(i), TypeNameOf(want.kind)) << where << ": " << got.ToString(i);
  EXPECT_EQ(got.IsNull(i), want.kind == Val::Kind::Null) << where;
  switch (want.kind) {
    case Val::Kind::Null:
      EXPECT_EQ(got.GetArray(i).FieldCount(), 0u) << where;
      break;
    case Val::Kind::Int:
    case Val::Kind::BigInt:
      EXPECT_EQ(got.GetInt64(i), want.i) << where;
      break;
    case Val::Kind::Double:
      EXPECT_EQ(got.GetFloat64(i), want.d) << where;
      break;
    case Val::Kind::Str:
      EXPECT_EQ(got.GetString(i), want.s) << where;
      break;
    case Val::Kind::Array:
      ExpectParts(got.GetArray(i), want.items, where);
      break;
    case Val::Kind::Map:
      ExpectParts(got.GetMapKeys(i), want.items, where + " keys");
      ExpectParts(got.GetMapValues(i), want.values, where + " values");
      break;
    case Val::Kind::Row:
      ExpectParts(got.GetRow(i), want.items, where);
      break;
  }
}

void ExpectParts(const fw::GenericRow& got, const std::vector<Val>& want, const std::string& where) {
  ASSERT_EQ(got.FieldCount(), want.size()) << where;
  for (size_t j = 0; j < want.size(); ++j) {
    ASSERT_NO_FATAL_FAILURE(Expect(got, j, want[j], where + "[" + std::to_string(j) + "]"));
  }
}

// ----- the table: id INT NOT NULL, tags ARRAY<STRING>, attrs MAP<STRING, INT NOT NULL>,
// point ROW<x DOUBLE, y DOUBLE NOT NULL>, deep ARRAY<ROW<a INT, b MAP<STRING, ARRAY<BIGINT NOT NULL>>>>

fw::Schema NestedSchema(bool primary_key) {
  using T = fw::DataType;
  auto b = fw::Schema::NewBuilder()
               .AddColumn("id", T::Int(), false)
               .AddColumn("tags", T::Array(T::String()))
               .AddColumn("attrs", T::Map(T::String(), T::Int(), false))
               .AddColumn("point", T::Row({{"x", T::Double()}, {"y", T::Double(), false}}))
               .AddColumn("deep", T::Array(T::Row({{"a", T::Int()},
                                                   {"b", T::Map(T::String(), T::Array(T::BigInt(), false))}})));
  if (primary_key) b.SetPrimaryKeys({"id"});
  return b.Build();
}

// The columns after `id` of row `id`, version `v` (a primary-key row is upserted again with v=1).
std::vector<Val> Columns(int id, int v = 0) {
  int k = id + 7 * v;
  std::vector<Val> out;
  out.push_back(Int(id));
  // tags: NULL, empty, or 1..4 strings with a NULL element now and then.
  if (k % 5 == 0) {
    out.push_back(Null());
  } else if (k % 5 == 1) {
    out.push_back(Arr({}));
  } else {
    std::vector<Val> tags;
    for (int j = 0; j < k % 4 + 1; ++j) {
      tags.push_back(j == 1 && k % 3 == 0 ? Null() : Str("t" + std::to_string(k) + "_" + std::to_string(j)));
    }
    out.push_back(Arr(std::move(tags)));
  }
  // attrs: NULL, empty, or 1..3 entries (in an order that is not sorted).
  if (k % 6 == 0) {
    out.push_back(Null());
  } else if (k % 6 == 1) {
    out.push_back(MapOf({}));
  } else {
    std::vector<std::pair<Val, Val>> entries;
    for (int j = k % 3; j >= 0; --j) entries.emplace_back(Str("k" + std::to_string(j)), Int(k * 10 + j));
    out.push_back(MapOf(std::move(entries)));
  }
  // point: NULL, or (x NULL now and then, y).
  if (k % 7 == 0) {
    out.push_back(Null());
  } else {
    out.push_back(RowOf({k % 2 == 0 ? Null() : Dbl(k * 0.5), Dbl(k * 1.5 + 0.25)}));
  }
  // deep: NULL, empty, or 2 elements: a NULL one now and then, rows with NULL fields, maps with
  // an empty array, a NULL array and arrays of BIGINT.
  if (k % 4 == 0) {
    out.push_back(Null());
  } else if (k % 4 == 1) {
    out.push_back(Arr({}));
  } else {
    std::vector<Val> deep;
    for (int e = 0; e < 2; ++e) {
      if (e == 1 && k % 3 == 0) {
        deep.push_back(Null());
        continue;
      }
      Val b;
      if (k % 5 == 2) {
        b = Null();
      } else {
        std::vector<Val> longs;
        for (int j = 0; j <= e; ++j) longs.push_back(Big(int64_t{k} * 1000000007LL + j));
        b = MapOf({{Str("m" + std::to_string(e)), Arr(std::move(longs))}, {Str("empty"), Arr({})}, {Str("none"), Null()}});
      }
      deep.push_back(RowOf({e == 0 ? Null() : Int(k + e), std::move(b)}));
    }
    out.push_back(Arr(std::move(deep)));
  }
  return out;
}

const char* kColumns[] = {"id", "tags", "attrs", "point", "deep"};

void ExpectRow(const fw::GenericRow& got, int id, int v = 0) {
  std::vector<Val> want = Columns(id, v);
  ASSERT_EQ(got.FieldCount(), want.size()) << "id " << id;
  for (size_t c = 0; c < want.size(); ++c) {
    ASSERT_NO_FATAL_FAILURE(Expect(got, c, want[c], "id " + std::to_string(id) + " " + kColumns[c]));
  }
}

// A readable form of a type for failure messages.
std::string Describe(const fw::DataType& t) {
  std::string s = std::to_string(static_cast<int>(t.id)) + "(" + std::to_string(t.precision) + "," +
                  std::to_string(t.scale) + ")";
  if (!t.children.empty()) {
    s += "<";
    for (size_t i = 0; i < t.children.size(); ++i) {
      const fw::Column& c = t.children[i];
      s += (i > 0 ? ", " : "") + c.name + " " + Describe(c.type) + (c.nullable ? "" : " NOT NULL");
    }
    s += ">";
  }
  return s;
}

class NestedTest : public BackendTest {
 protected:
  fw::TablePath NestedTable(const std::string& prefix, bool primary_key, int32_t buckets = 2) {
    fw::TableDescriptor d;
    d.schema = NestedSchema(primary_key);
    d.bucket_count = buckets;
    return Create(prefix, d);
  }
};

TEST_P(NestedTest, TableInfoReturnsTheNestedTypes) {
  for (bool pk : {false, true}) {
    fw::TablePath p = NestedTable(pk ? "nested_info_pk" : "nested_info_log", pk);
    fw::TableInfo info;
    ASSERT_OK(admin.GetTableInfo(p, info));
    const std::vector<fw::Column>& want = NestedSchema(pk).columns;
    const std::vector<fw::Column>& got = info.descriptor.schema.columns;
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i], want[i]) << want[i].name << ": got " << Describe(got[i].type) << ", want "
                                 << Describe(want[i].type);
    }
    // The shape, spelled out once: deep ARRAY<ROW<a INT, b MAP<STRING, ARRAY<BIGINT NOT NULL>>>>.
    const fw::DataType& deep = got[4].type;
    ASSERT_EQ(deep.id, fw::TypeId::Array);
    ASSERT_EQ(deep.children.size(), 1u);
    EXPECT_EQ(deep.children[0].name, "element");
    EXPECT_TRUE(deep.children[0].nullable);
    const fw::DataType& row = deep.children[0].type;
    ASSERT_EQ(row.id, fw::TypeId::Row);
    ASSERT_EQ(row.children.size(), 2u);
    EXPECT_EQ(row.children[0].name, "a");
    EXPECT_EQ(row.children[0].type, fw::DataType::Int());
    EXPECT_EQ(row.children[1].name, "b");
    const fw::DataType& map = row.children[1].type;
    ASSERT_EQ(map.id, fw::TypeId::Map);
    ASSERT_EQ(map.children.size(), 2u);
    EXPECT_EQ(map.children[0].name, "key");
    EXPECT_FALSE(map.children[0].nullable) << "map keys are NOT NULL";
    EXPECT_EQ(map.children[0].type, fw::DataType::String());
    EXPECT_EQ(map.children[1].name, "value");
    EXPECT_EQ(map.children[1].type, fw::DataType::Array(fw::DataType::BigInt(), false));
    EXPECT_EQ(got[3].type.children[1], (fw::Column{"y", fw::DataType::Double(), false}));
    EXPECT_NE(got[3].type, fw::DataType::Row({{"x", fw::DataType::Double()}, {"y", fw::DataType::Double()}}));
    EXPECT_EQ(info.descriptor.schema.primary_keys, pk ? std::vector<std::string>{"id"} : std::vector<std::string>{});
  }
}

TEST_P(NestedTest, LogTableScanReadsBackEveryNestedValue) {
  fw::TablePath p = NestedTable("nested_log", false);
  fw::Table t = Get(p);
  fw::AppendWriter w = AppendWriterFor(t);
  constexpr int kRows = 60;
  for (int id = 0; id < kRows; ++id) {
    fw::GenericRow r = ToRow(Columns(id));
    ASSERT_OK(w.AppendDetached(r));
  }
  ASSERT_OK(w.Close());
  std::map<int, fw::GenericRow> seen;
  for (int32_t b = 0; b < t.BucketCount(); ++b) {
    std::vector<fw::ScannedRow> rows;
    ASSERT_OK(t.Scan(b, 0, rows));
    for (fw::ScannedRow& r : rows) {
      EXPECT_EQ(r.change_type, "+A");
      int id = static_cast<int>(r.row.GetInt64(0));
      EXPECT_TRUE(seen.emplace(id, std::move(r.row)).second) << "id " << id << " twice";
    }
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(kRows));
  for (const auto& [id, row] : seen) ASSERT_NO_FATAL_FAILURE(ExpectRow(row, id));
}

TEST_P(NestedTest, PkTableLookupReadsBackEveryNestedValue) {
  fw::TablePath p = NestedTable("nested_pk", true);
  fw::Table t = Get(p);
  fw::UpsertWriter w;
  ASSERT_OK(t.NewUpsert().CreateWriter(w));
  constexpr int kRows = 40;
  for (int id = 0; id < kRows; ++id) ASSERT_OK(w.UpsertDetached(ToRow(Columns(id))));
  // Every third row again with other nested values (version 1).
  for (int id = 0; id < kRows; id += 3) ASSERT_OK(w.UpsertDetached(ToRow(Columns(id, 1))));
  ASSERT_OK(w.Close());
  for (int id = 0; id < kRows; ++id) {
    fw::GenericRow key(1);
    key.SetInt32(0, id);
    fw::GenericRow got;
    bool found = false;
    ASSERT_OK(t.Lookup(key, got, found));
    ASSERT_TRUE(found) << "id " << id;
    ASSERT_NO_FATAL_FAILURE(ExpectRow(got, id, id % 3 == 0 ? 1 : 0));
  }
  fw::GenericRow missing(1);
  missing.SetInt32(0, kRows);
  fw::GenericRow got;
  bool found = true;
  ASSERT_OK(t.Lookup(missing, got, found));
  EXPECT_FALSE(found);
}

// One bad nested value in an otherwise good row (built from Columns(id) with column `c` replaced).
struct BadCase {
  std::string what;
  std::function<void(fw::GenericRow&)> spoil;
  std::vector<std::string> message_has;
};

std::vector<BadCase> BadCases() {
  std::vector<BadCase> cases;
  cases.push_back({"NULL element in ARRAY<BIGINT NOT NULL> deep inside",
                   [](fw::GenericRow& r) {
                     Set(r, 4, Arr({RowOf({Int(1), MapOf({{Str("x"), Arr({Big(1), Null()})}})})}));
                   },
                   {"column \"deep\"[0].b{\"x\"}[1]", "BIGINT NOT NULL", "null"}});
  cases.push_back({"NULL map value where values are NOT NULL",
                   [](fw::GenericRow& r) { Set(r, 2, MapOf({{Str("k"), Int(1)}, {Str("l"), Null()}})); },
                   {"column \"attrs\"{\"l\"}", "NOT NULL"}});
  cases.push_back({"NULL in a NOT NULL ROW field",
                   [](fw::GenericRow& r) { Set(r, 3, RowOf({Dbl(1), Null()})); },
                   {"column \"point\".y", "NOT NULL"}});
  cases.push_back({"NULL map key",
                   [](fw::GenericRow& r) { Set(r, 2, MapOf({{Str("k"), Int(1)}, {Null(), Int(2)}})); },
                   {"column \"attrs\"", "key of entry 1 is null"}});
  cases.push_back({"NULL map key deep inside",
                   [](fw::GenericRow& r) { Set(r, 4, Arr({Null(), RowOf({Int(1), MapOf({{Null(), Arr({})}})})})); },
                   {"column \"deep\"[1].b", "key of entry 0 is null"}});
  cases.push_back({"duplicate map keys",
                   [](fw::GenericRow& r) { Set(r, 2, MapOf({{Str("k"), Int(1)}, {Str("k"), Int(2)}})); },
                   {"column \"attrs\"", "same key"}});
  cases.push_back({"keys and values of different lengths",
                   [](fw::GenericRow& r) {
                     fw::GenericRow keys(2), values(1);
                     keys.SetString(0, "a");
                     keys.SetString(1, "b");
                     values.SetInt32(0, 1);
                     r.SetMap(2, keys, values);
                   },
                   {"field 2", "2 keys and 1 values"}});
  cases.push_back({"ROW value with too many fields",
                   [](fw::GenericRow& r) { Set(r, 3, RowOf({Dbl(1), Dbl(2), Dbl(3)})); },
                   {"column \"point\"", "3 fields"}});
  cases.push_back({"ROW value with too few fields deep inside",
                   [](fw::GenericRow& r) { Set(r, 4, Arr({RowOf({Int(1)})})); },
                   {"column \"deep\"[0]", "1 fields"}});
  cases.push_back({"element of the wrong type",
                   [](fw::GenericRow& r) { Set(r, 1, Arr({Str("a"), Int(2)})); },
                   {"column \"tags\"[1]", "STRING", "INT"}});
  cases.push_back({"scalar where an ARRAY belongs",
                   [](fw::GenericRow& r) { r.SetString(1, "not an array"); },
                   {"column \"tags\"", "ARRAY<STRING>"}});
  cases.push_back({"bad input recorded in a part",
                   [](fw::GenericRow& r) {
                     fw::GenericRow elements(1);
                     elements.SetString(0, std::string_view("\xff\xfe", 2));
                     r.SetArray(1, elements);
                   },
                   {"field 1", "ARRAY elements", "UTF-8"}});
  return cases;
}

TEST_P(NestedTest, BadNestedValuesAreInvalidRowNamingThePlace) {
  fw::TablePath log = NestedTable("nested_bad_log", false, 1);
  fw::TablePath pk = NestedTable("nested_bad_pk", true, 1);
  fw::Table lt = Get(log);
  fw::Table pt = Get(pk);
  fw::AppendWriter aw = AppendWriterFor(lt);
  fw::UpsertWriter uw;
  ASSERT_OK(pt.NewUpsert().CreateWriter(uw));
  for (const BadCase& c : BadCases()) {
    fw::GenericRow r = ToRow(Columns(2));
    c.spoil(r);
    fw::Result ra = aw.AppendDetached(r);
    fw::Result ru = uw.UpsertDetached(r);
    for (const fw::Result& res : {ra, ru}) {
      EXPECT_TRUE(res.Is(fw::ClientCode::InvalidRow)) << c.what << ": " << res.ToString();
      for (const std::string& s : c.message_has) {
        EXPECT_NE(res.error_message.find(s), std::string::npos) << c.what << ": no " << s << " in " << res.error_message;
      }
    }
  }
  ASSERT_OK(aw.Close());
  ASSERT_OK(uw.Close());
  // Nothing was accepted.
  std::vector<fw::ScannedRow> rows;
  ASSERT_OK(lt.Scan(0, 0, rows));
  EXPECT_TRUE(rows.empty()) << rows.size() << " rows";
  ASSERT_OK(pt.Scan(0, 0, rows));
  EXPECT_TRUE(rows.empty()) << rows.size() << " rows";
  fw::GenericRow key(1);
  key.SetInt32(0, 2);
  fw::GenericRow got;
  bool found = true;
  ASSERT_OK(pt.Lookup(key, got, found));
  EXPECT_FALSE(found);
}

TEST_P(NestedTest, MalformedNestedTypesAreInvalidTableNamingTheColumn) {
  using T = fw::DataType;
  struct Case {
    std::string what;
    fw::DataType type;
    std::vector<std::string> message_has;
  };
  T two_elements = T::Array(T::Int());
  two_elements.children.push_back(fw::Column{"other", T::Int()});
  T scalar_with_child = T::Int();
  scalar_with_child.children.push_back(fw::Column{"x", T::Int()});
  T map_one_child{fw::TypeId::Map, 0, 0};
  map_one_child.children.push_back(fw::Column{"key", T::String(), false});
  std::vector<Case> cases = {
      {"ARRAY with two children", two_elements, {"column \"c\"", "exactly one child", "got 2"}},
      {"INT with a child", T::Array(scalar_with_child), {"column \"c\" element", "only ARRAY, MAP and ROW", "got 1"}},
      {"MAP with one child", map_one_child, {"column \"c\"", "exactly two children", "got 1"}},
      {"ROW without fields", T::Row({}), {"column \"c\"", "at least one field"}},
      {"ROW with a repeated name", T::Array(T::Row({{"a", T::Int()}, {"a", T::String()}})),
       {"column \"c\" element", "unique", "\"a\""}},
      {"ROW with a blank name", T::Row({{" ", T::Int()}}), {"column \"c\"", "non-whitespace"}},
      {"bad DECIMAL deep inside", T::Map(T::String(), T::Row({{"d", T::Decimal(50, 2)}})),
       {"column \"c\" value field \"d\"", "DECIMAL(50, 2)"}},
      {"unknown type id", T::Array(T{static_cast<fw::TypeId>(99), 0, 0}), {"column \"c\" element", "unknown type id 99"}},
  };
  for (const Case& c : cases) {
    fw::TableDescriptor d;
    d.schema = fw::Schema::NewBuilder().AddColumn("id", T::Int(), false).AddColumn("c", c.type).Build();
    d.bucket_count = 1;
    fw::TablePath p(database, Unique("nested_malformed"));
    fw::Result r = admin.CreateTable(p, d);
    EXPECT_TRUE(r.Is(fw::ClientCode::InvalidTable)) << c.what << ": " << r.ToString();
    for (const std::string& s : c.message_has) {
      EXPECT_NE(r.error_message.find(s), std::string::npos) << c.what << ": no " << s << " in " << r.error_message;
    }
    bool exists = true;
    ASSERT_OK(admin.TableExists(p, exists));
    EXPECT_FALSE(exists) << c.what;
  }
  // A MAP key's nullability is ignored: Fluss map keys are NOT NULL.
  T nullable_key = T::Map(T::String(), T::Int());
  nullable_key.children[0].nullable = true;
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder().AddColumn("id", T::Int(), false).AddColumn("m", nullable_key).Build();
  d.bucket_count = 1;
  fw::TablePath p = Create("nested_key", d);
  fw::TableInfo info;
  ASSERT_OK(admin.GetTableInfo(p, info));
  ASSERT_EQ(info.descriptor.schema.columns.size(), 2u);
  EXPECT_EQ(info.descriptor.schema.columns[1].type, T::Map(T::String(), T::Int()));
}

TEST_P(NestedTest, AlterTableAddsNestedColumns) {
  using T = fw::DataType;
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder().AddColumn("id", T::Int(), false).Build();
  d.bucket_count = 1;
  fw::TablePath p = Create("nested_alter", d);
  // A malformed nested column is refused before anything is sent.
  fw::Result bad = admin.AlterTable(p, {fw::TableChange::AddColumn(fw::Column{"r", T::Row({})})});
  EXPECT_TRUE(bad.Is(fw::ClientCode::InvalidTable)) << bad.ToString();
  EXPECT_NE(bad.error_message.find("column \"r\""), std::string::npos) << bad.error_message;
  std::vector<fw::Column> added = {{"tags", T::Array(T::String())},
                                   {"m", T::Map(T::String(), T::Row({{"a", T::Int()}, {"b", T::Array(T::Int(), false)}}))}};
  ASSERT_OK(admin.AlterTable(p, {fw::TableChange::AddColumn(added[0]), fw::TableChange::AddColumn(added[1])}));
  fw::TableInfo info;
  ASSERT_OK(admin.GetTableInfo(p, info));
  ASSERT_EQ(info.descriptor.schema.columns.size(), 3u);
  EXPECT_EQ(info.descriptor.schema.columns[1], added[0]) << Describe(info.descriptor.schema.columns[1].type);
  EXPECT_EQ(info.descriptor.schema.columns[2], added[1]) << Describe(info.descriptor.schema.columns[2].type);
  fw::Table t = Get(p);
  fw::AppendWriter w = AppendWriterFor(t);
  std::vector<Val> want = {Int(1), Arr({Str("x"), Null()}),
                           MapOf({{Str("k"), RowOf({Null(), Arr({Int(1), Int(2)})})}, {Str("n"), Null()}})};
  ASSERT_OK(w.AppendDetached(ToRow(want)));
  ASSERT_OK(w.Close());
  std::vector<fw::ScannedRow> rows;
  ASSERT_OK(t.Scan(0, 0, rows));
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_NO_FATAL_FAILURE(ExpectParts(rows[0].row, want, "row"));
}

// ----- GenericRow alone (no table) -----

TEST(NestedRow, ToStringShowsNestedValues) {
  fw::GenericRow r = ToRow({Int(1), Arr({Str("a"), Null(), Str("c")}), MapOf({{Str("k"), Int(1)}, {Str("j"), Int(2)}}),
                            RowOf({Null(), Dbl(2.5)}),
                            Arr({RowOf({Int(7), MapOf({{Str("x"), Arr({Big(1), Big(2)})}, {Str("e"), Arr({})}})}), Null()}),
                            Arr({}), MapOf({})});
  EXPECT_EQ(r.ToString(0), "1");
  EXPECT_EQ(r.ToString(1), "[\"a\", null, \"c\"]");
  EXPECT_EQ(r.ToString(2), "{\"k\": 1, \"j\": 2}");
  EXPECT_EQ(r.ToString(3), "(null, 2.5)");
  EXPECT_EQ(r.ToString(4), "[(7, {\"x\": [1, 2], \"e\": []}), null]");
  EXPECT_EQ(r.ToString(5), "[]");
  EXPECT_EQ(r.ToString(6), "{}");
  EXPECT_EQ(r.TypeName(1), "ARRAY");
  EXPECT_EQ(r.TypeName(2), "MAP");
  EXPECT_EQ(r.TypeName(3), "ROW");
}

TEST(NestedRow, GettersOfAnotherTypeReturnDefaults) {
  fw::GenericRow r = ToRow({Int(5), Arr({Int(1)}), MapOf({{Str("k"), Int(1)}}), RowOf({Int(3)})});
  // Nested getters on a scalar, on NULL and past the end: empty rows.
  EXPECT_EQ(r.GetArray(0).FieldCount(), 0u);
  EXPECT_EQ(r.GetRow(0).FieldCount(), 0u);
  EXPECT_EQ(r.GetMapKeys(0).FieldCount(), 0u);
  EXPECT_EQ(r.GetArray(99).FieldCount(), 0u);
  // One nested kind read as another: empty.
  EXPECT_EQ(r.GetMapKeys(1).FieldCount(), 0u);
  EXPECT_EQ(r.GetArray(2).FieldCount(), 0u);
  EXPECT_EQ(r.GetArray(3).FieldCount(), 0u);
  EXPECT_EQ(r.GetMapValues(3).FieldCount(), 0u);
  // Scalar getters on nested values: defaults.
  EXPECT_EQ(r.GetInt64(1), 0);
  EXPECT_EQ(r.GetString(2), "");
  EXPECT_FALSE(r.IsNull(3));
  // Returned rows are copies: changing one does not change the row.
  fw::GenericRow e = r.GetArray(1);
  e.SetInt32(0, 42);
  EXPECT_EQ(r.GetArray(1).GetInt64(0), 1);
  EXPECT_EQ(r.GetRow(3).GetInt64(0), 3);
  EXPECT_EQ(r.GetMapValues(2).GetInt64(0), 1);
}

TEST(NestedRow, PartsAreCopiedIncludingTheRowItself) {
  fw::GenericRow r(2);
  r.SetInt32(0, 1);
  r.SetArray(1, r);  // the row as it was: [1, null]
  EXPECT_EQ(r.ToString(1), "[1, null]");
  fw::GenericRow parts(1);
  parts.SetString(0, "x");
  r.SetRow(0, parts);
  parts.SetString(0, "changed later");
  EXPECT_EQ(r.ToString(0), "(\"x\")");
  r.SetMap(0, r, r);  // keys and values: the row itself, copied
  EXPECT_EQ(r.ToString(0), "{(\"x\"): (\"x\"), [1, null]: [1, null]}");
  // A moved-from part is empty.
  fw::GenericRow from(1);
  fw::GenericRow to = std::move(from);
  r.SetArray(1, from);
  EXPECT_EQ(r.ToString(1), "[]");
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Embedded, NestedTest, ::testing::Values(Backend::Embedded), BackendName);
INSTANTIATE_TEST_SUITE_P(Cluster, NestedTest, ::testing::Values(Backend::Cluster), BackendName);
