// test_readback.cpp: Table::Scan and Table::Lookup (read-back through the Fluss protocol) on the
// embedded engine, compared with fluss_writer::testing::Scan/Lookup (which read the engine
// directly).
#include <map>
#include <type_traits>

#include "test_util.h"

namespace {

// Field-by-field equality through the public read accessors.
void ExpectSameRow(const fw::GenericRow& a, const fw::GenericRow& b, const std::string& what) {
  ASSERT_EQ(a.FieldCount(), b.FieldCount()) << what;
  for (size_t i = 0; i < a.FieldCount(); ++i) {
    EXPECT_EQ(a.IsNull(i), b.IsNull(i)) << what << " field " << i;
    EXPECT_EQ(a.TypeName(i), b.TypeName(i)) << what << " field " << i;
    EXPECT_EQ(a.ToString(i), b.ToString(i)) << what << " field " << i;
  }
}

void ExpectSameScan(const std::vector<fw::ScannedRow>& a, const std::vector<fw::testing::ScannedRow>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].offset, b[i].offset) << i;
    EXPECT_EQ(a[i].change_type, b[i].change_type) << i;
    ExpectSameRow(a[i].row, b[i].row, "row " + std::to_string(i));
  }
}

}  // namespace

class ReadbackTest : public EmbeddedTest {};

TEST_F(ReadbackTest, ScanMatchesTestingScanOnLogTable) {
  static_assert(std::is_same_v<fw::ScannedRow, fw::testing::ScannedRow>, "one shape for both scans");
  fw::TablePath p = LogTable("rb_log", 3, true);
  fw::Table t;
  ASSERT_OK(conn.GetTable(p, t));
  fw::AppendWriter w = AppendWriterFor(p);
  std::mutex m;
  std::map<int64_t, std::pair<int32_t, int64_t>> where;  // id -> (bucket, offset)
  for (int64_t i = 0; i < 60; ++i) {
    fw::GenericRow row = Row(i, "msg" + std::to_string(i));
    if (i % 7 == 0) row.SetNull(1);
    ASSERT_OK(w.Append(row, [&, i](const fw::WriteCompletion& c) {
      std::lock_guard<std::mutex> g(m);
      where[i] = {c.bucket, c.offset};
    }));
  }
  ASSERT_OK(w.Flush());
  size_t total = 0;
  for (int32_t b = 0; b < t.BucketCount(); ++b) {
    std::vector<fw::ScannedRow> got;
    std::vector<fw::testing::ScannedRow> want;
    ASSERT_OK(t.Scan(b, 0, got));
    ASSERT_OK(fw::testing::Scan(conn, p, b, 0, want));
    ExpectSameScan(got, want);
    total += got.size();
    for (const fw::ScannedRow& r : got) {
      EXPECT_EQ(r.change_type, "+A");
      int64_t id = r.row.GetInt64(0);
      EXPECT_EQ(where.at(id), std::make_pair(b, r.offset)) << "id " << id;
      EXPECT_EQ(r.row.IsNull(1), id % 7 == 0);
    }
    // From a later offset: the tail only; past the end: nothing.
    if (got.size() > 2) {
      std::vector<fw::ScannedRow> tail;
      ASSERT_OK(t.Scan(b, 2, tail));
      ASSERT_EQ(tail.size(), got.size() - 2);
      EXPECT_EQ(tail[0].offset, 2);
    }
    std::vector<fw::ScannedRow> none(1);
    ASSERT_OK(t.Scan(b, 1000, none));
    EXPECT_TRUE(none.empty());
  }
  EXPECT_EQ(total, 60u);
  std::vector<fw::ScannedRow> bad;
  EXPECT_FALSE(t.Scan(3, 0, bad).Ok());
  EXPECT_FALSE(t.Scan(-1, 0, bad).Ok());
  // A log table has no primary key to look up.
  fw::GenericRow key(1), out;
  key.SetInt64(0, 1);
  bool found = true;
  fw::Result r = t.Lookup(key, out, found);
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::Unsupported)) << r.ToString();
  EXPECT_FALSE(found);
}

TEST_F(ReadbackTest, LookupAndChangelogMatchTestingOnPkTable) {
  fw::TablePath p = PkTable("rb_pk", 3);
  fw::Table t;
  ASSERT_OK(conn.GetTable(p, t));
  fw::UpsertWriter w;
  ASSERT_OK(t.NewUpsert().CreateWriter(w));
  for (int i = 0; i < 30; ++i) {
    fw::GenericRow row(3);
    row.SetInt32(0, i);
    row.SetString(1, "user" + std::to_string(i));
    if (i % 4 == 0) {
      row.SetNull(2);
    } else {
      row.SetInt64(2, i * 10);
    }
    ASSERT_OK(w.UpsertDetached(row));
  }
  fw::GenericRow upd(3);
  upd.SetInt32(0, 5);
  upd.SetString(1, "five");
  upd.SetInt64(2, 555);
  ASSERT_OK(w.UpsertDetached(upd));
  fw::GenericRow del(1);
  del.SetInt32(0, 6);
  ASSERT_OK(w.DeleteDetached(del));
  ASSERT_OK(w.Flush());
  for (int i = 0; i < 32; ++i) {
    fw::GenericRow key(1);
    key.SetInt32(0, i);
    fw::GenericRow got, want;
    bool got_found = false, want_found = false;
    ASSERT_OK(t.Lookup(key, got, got_found));
    ASSERT_OK(fw::testing::Lookup(conn, p, key, want, want_found));
    EXPECT_EQ(got_found, want_found) << i;
    EXPECT_EQ(got_found, i < 30 && i != 6) << i;
    if (got_found) ExpectSameRow(got, want, "key " + std::to_string(i));
    if (i == 5) {
      EXPECT_EQ(got.GetString(1), "five");
    }
    if (i == 8) {
      EXPECT_TRUE(got.IsNull(2));
    }
  }
  size_t changes = 0;
  std::map<std::string, int> kinds;
  for (int32_t b = 0; b < t.BucketCount(); ++b) {
    std::vector<fw::ScannedRow> got;
    std::vector<fw::testing::ScannedRow> want;
    ASSERT_OK(t.Scan(b, 0, got));
    ASSERT_OK(fw::testing::Scan(conn, p, b, 0, want));
    ExpectSameScan(got, want);
    changes += got.size();
    for (const auto& r : got) kinds[r.change_type]++;
  }
  EXPECT_EQ(changes, 30u + 2u + 1u);
  EXPECT_EQ(kinds["+I"], 30);
  EXPECT_EQ(kinds["-U"], 1);
  EXPECT_EQ(kinds["+U"], 1);
  EXPECT_EQ(kinds["-D"], 1);
  // Wrong key arity, moved-from key, empty table handle.
  fw::GenericRow two(2), out;
  two.SetInt32(0, 1);
  two.SetInt32(1, 1);
  bool found = true;
  EXPECT_EQ(t.Lookup(two, out, found).error_code, Code(fw::ClientCode::InvalidRow));
  EXPECT_FALSE(found);
  fw::GenericRow moved(1);
  fw::GenericRow sink = std::move(moved);
  EXPECT_EQ(t.Lookup(moved, out, found).error_code, Code(fw::ClientCode::InvalidRow));  // NOLINT: moved-from
  fw::Table empty;
  std::vector<fw::ScannedRow> rows;
  EXPECT_EQ(empty.Scan(0, 0, rows).error_code, Code(fw::ClientCode::InvalidTable));
  EXPECT_EQ(empty.Lookup(sink, out, found).error_code, Code(fw::ClientCode::InvalidTable));
}
