// test_arrow_schema.cpp: Schema::FromArrow and Schema::ToArrow (issue 27, defect 2): an Arrow C
// Data Interface schema with nested children (list, large list, fixed-size list, map, struct,
// nested to any depth) and fixed-size binary makes ARRAY, MAP, ROW and BINARY(n) columns with
// the nullability of every level, by the core's one rule (the same as Python's
// Schema(pyarrow schema)); ToArrow gives it back; a table created from it on the embedded engine
// takes nested rows and reads them back. Arrow types with no Fluss type are InvalidTable naming
// the column.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend_test.h"

namespace {

// An owned C ArrowSchema tree: each node keeps its format, name and children; releasing the root
// releases the whole tree, as the C Data Interface asks.
struct Owned {
  std::string format;
  std::string name;
  std::vector<ArrowSchema*> children;
};

void Release(ArrowSchema* s) {
  auto* o = static_cast<Owned*>(s->private_data);
  for (ArrowSchema* c : o->children) {
    if (c->release != nullptr) c->release(c);
    delete c;
  }
  delete o;
  s->release = nullptr;
}

// A node; it takes over `kids` (their release moves to this node).
ArrowSchema Node(std::string format, std::string name, bool nullable, std::vector<ArrowSchema> kids = {}) {
  auto* o = new Owned{std::move(format), std::move(name), {}};
  for (ArrowSchema& k : kids) o->children.push_back(new ArrowSchema(k));
  return ArrowSchema{o->format.c_str(),
                     o->name.c_str(),
                     nullptr,
                     nullable ? ARROW_FLAG_NULLABLE : 0,
                     static_cast<int64_t>(o->children.size()),
                     o->children.empty() ? nullptr : o->children.data(),
                     nullptr,
                     Release,
                     o};
}

// The pyarrow-like schema of the tests (children named as pyarrow names them).
ArrowSchema NestedSchema() {
  std::vector<ArrowSchema> cols;
  cols.push_back(Node("l", "id", false));
  cols.push_back(Node("+l", "tags", true, [] {
    std::vector<ArrowSchema> v;
    v.push_back(Node("u", "item", true));
    return v;
  }()));
  cols.push_back(Node("+L", "grid", true, [] {
    std::vector<ArrowSchema> inner;
    inner.push_back(Node("i", "item", true));
    std::vector<ArrowSchema> v;
    v.push_back(Node("+l", "item", false, std::move(inner)));
    return v;
  }()));
  cols.push_back(Node("+m", "attrs", true, [] {
    std::vector<ArrowSchema> fields;
    fields.push_back(Node("i", "a", false));
    fields.push_back(Node("u", "b", true));
    std::vector<ArrowSchema> kv;
    kv.push_back(Node("u", "key", false));
    kv.push_back(Node("+s", "value", true, std::move(fields)));
    std::vector<ArrowSchema> v;
    v.push_back(Node("+s", "entries", false, std::move(kv)));
    return v;
  }()));
  cols.push_back(Node("w:4", "digest", true));
  cols.push_back(Node("+w:2", "pair", true, [] {
    std::vector<ArrowSchema> v;
    v.push_back(Node("s", "item", true));
    return v;
  }()));
  cols.push_back(Node("tsu:UTC", "at", true));
  return Node("+s", "", false, std::move(cols));
}

std::vector<fw::Column> NestedColumns() {
  using T = fw::DataType;
  return {
      {"id", T::BigInt(), false},
      {"tags", T::Array(T::String()), true},
      {"grid", T::Array(T::Array(T::Int()), false), true},
      {"attrs", T::Map(T::String(), T::Row({{"a", T::Int(), false}, {"b", T::String(), true}})), true},
      {"digest", T::Binary(4), true},
      {"pair", T::Array(T::SmallInt()), true},
      {"at", T::TimestampLtz(6), true},
  };
}

TEST(ArrowSchema, FromArrowMakesNestedColumnsOfEveryLevel) {
  ArrowSchema c = NestedSchema();
  fw::Schema s;
  ASSERT_OK(fw::Schema::FromArrow(c, s));
  ASSERT_NE(c.release, nullptr) << "FromArrow only reads the schema";
  c.release(&c);
  EXPECT_EQ(s.columns, NestedColumns());
  EXPECT_TRUE(s.primary_keys.empty());
}

TEST(ArrowSchema, ToArrowAndBackGiveTheSameColumns) {
  fw::Schema s;
  s.columns = NestedColumns();
  s.columns[6].type = fw::DataType::Timestamp(6);  // TIMESTAMP_LTZ comes back as TIMESTAMP
  ArrowSchema out{};
  ASSERT_OK(s.ToArrow(&out));
  ASSERT_NE(out.release, nullptr);
  ASSERT_EQ(out.n_children, 7);
  EXPECT_STREQ(out.format, "+s");
  EXPECT_STREQ(out.children[1]->format, "+l");
  EXPECT_STREQ(out.children[1]->children[0]->name, "element");
  EXPECT_STREQ(out.children[3]->format, "+m");
  EXPECT_STREQ(out.children[4]->format, "w:4");
  EXPECT_EQ(out.children[0]->flags & ARROW_FLAG_NULLABLE, 0);
  fw::Schema back;
  ASSERT_OK(fw::Schema::FromArrow(out, back));
  out.release(&out);
  EXPECT_EQ(back.columns, s.columns);
  // The example: ARRAY<STRING> to Arrow and back.
  fw::Schema tags = fw::Schema::NewBuilder().AddColumn("tags", fw::DataType::Array(fw::DataType::String())).Build();
  ASSERT_OK(tags.ToArrow(&out));
  ASSERT_OK(fw::Schema::FromArrow(out, back));
  out.release(&out);
  EXPECT_EQ(back.columns, tags.columns);
}

TEST(ArrowSchema, TypesWithoutAFlussTypeAreInvalidTableNamingTheColumn) {
  struct Case {
    const char* format;
    const char* words;
  };
  for (const Case& k : {Case{"L", "column \"x\": Arrow type UInt64 has no Fluss equivalent"},
                        Case{"n", "column \"x\": Arrow type Null"}, Case{"tDs", "column \"x\": Arrow type Duration"},
                        Case{"w:0", "BINARY(n) needs n >= 1"}}) {
    std::vector<ArrowSchema> cols;
    cols.push_back(Node("i", "id", true));
    cols.push_back(Node(k.format, "x", true));
    ArrowSchema c = Node("+s", "", false, std::move(cols));
    fw::Schema s;
    fw::Result r = fw::Schema::FromArrow(c, s);
    c.release(&c);
    EXPECT_TRUE(r.Is(fw::ClientCode::InvalidTable)) << k.format << ": " << r.ToString();
    EXPECT_NE(r.error_message.find(k.words), std::string::npos) << r.error_message;
  }
  // Nested: the place inside the column.
  std::vector<ArrowSchema> item;
  item.push_back(Node("L", "item", true));
  std::vector<ArrowSchema> cols;
  cols.push_back(Node("+l", "tags", true, std::move(item)));
  ArrowSchema c = Node("+s", "", false, std::move(cols));
  fw::Schema s;
  fw::Result r = fw::Schema::FromArrow(c, s);
  c.release(&c);
  EXPECT_NE(r.error_message.find("column \"tags\"[]: Arrow type UInt64"), std::string::npos) << r.error_message;
  // A released schema is refused, not read.
  ArrowSchema released{};
  r = fw::Schema::FromArrow(released, s);
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidTable)) << r.ToString();
}

class ArrowSchemaTable : public BackendTest {};

// A table created from the C schema takes nested rows and reads them back.
TEST_P(ArrowSchemaTable, TableFromANestedArrowSchemaTakesNestedRows) {
  ArrowSchema c = NestedSchema();
  fw::TableDescriptor d;
  ASSERT_OK(fw::Schema::FromArrow(c, d.schema));
  c.release(&c);
  d.bucket_count = 1;
  fw::Table t = Get(Create("arrow_schema", d));
  fw::AppendWriter w = AppendWriterFor(t);
  fw::GenericRow r(7);
  r.SetInt64(0, 1);
  fw::GenericRow tags(2);
  tags.SetString(0, "a");
  tags.SetNull(1);
  r.SetArray(1, tags);
  fw::GenericRow inner(2);
  inner.SetInt32(0, 1);
  inner.SetInt32(1, 2);
  fw::GenericRow grid(1);
  grid.SetArray(0, inner);
  r.SetArray(2, grid);
  fw::GenericRow keys(1);
  keys.SetString(0, "k");
  fw::GenericRow item(2);
  item.SetInt32(0, 7);
  item.SetString(1, "x");
  fw::GenericRow values(1);
  values.SetRow(0, item);
  r.SetMap(3, keys, values);
  r.SetBytes(4, std::vector<uint8_t>{0, 1, 2, 3});
  fw::GenericRow pair(2);
  pair.SetInt16(0, 5);
  pair.SetInt16(1, 6);
  r.SetArray(5, pair);
  r.SetTimestampLtz(6, 1000);
  ASSERT_OK(w.AppendDetached(r));
  ASSERT_OK(w.Close());
  std::vector<fw::ScannedRow> rows;
  ASSERT_OK(t.Scan(0, 0, rows));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].row.ToString(1), "[\"a\", null]");
  EXPECT_EQ(rows[0].row.ToString(2), "[[1, 2]]");
  EXPECT_EQ(rows[0].row.ToString(3), "{\"k\": (7, \"x\")}");
  EXPECT_EQ(rows[0].row.GetBytes(4), (std::vector<uint8_t>{0, 1, 2, 3}));
  EXPECT_EQ(rows[0].row.ToString(5), "[5, 6]");
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Embedded, ArrowSchemaTable, ::testing::Values(Backend::Embedded), BackendName);
INSTANTIATE_TEST_SUITE_P(Cluster, ArrowSchemaTable, ::testing::Values(Backend::Cluster), BackendName);
