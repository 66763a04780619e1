// test_char_binary.cpp: CHAR(n) and BINARY(n) columns through the C++ API (DataType::Char /
// DataType::Binary, SetString / SetBytes), on the embedded engine and on a real Fluss 0.9.1
// cluster (fixture: backend_test.h): rows read back as written (CHAR values are not padded); a
// CHAR value of more than n characters (Unicode code points) and a BINARY value of another length
// are InvalidRow naming the column, synchronously, for rows and Arrow batches, and nothing of
// them is written; lookups by CHAR and BINARY keys.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "arrow_c_producer.h"
#include "backend_test.h"

namespace {

class CharBinaryTest : public BackendTest {};

std::vector<uint8_t> Bin(uint32_t i) {
  return {static_cast<uint8_t>(i >> 24), static_cast<uint8_t>(i >> 16), static_cast<uint8_t>(i >> 8),
          static_cast<uint8_t>(i)};
}

TEST_P(CharBinaryTest, LogTableRowsReadBackAsWritten) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("k", fw::DataType::Int(), false)
                 .AddColumn("c", fw::DataType::Char(3))
                 .AddColumn("b", fw::DataType::Binary(4))
                 .Build();
  d.bucket_count = 1;
  fw::TablePath p = Create("cb_log", d);
  fw::TableInfo info;
  ASSERT_OK(admin.GetTableInfo(p, info));
  EXPECT_EQ(info.descriptor.schema.columns[1].type.id, fw::TypeId::Char);
  EXPECT_EQ(info.descriptor.schema.columns[2].type.precision, 4) << "BINARY(4): the length in precision";
  fw::Table t = Get(p);
  fw::AppendWriter w = AppendWriterFor(t);
  const char* chars[] = {"ab", "abc", "日本語"};
  for (uint32_t i = 0; i < 3; ++i) {
    fw::GenericRow r(3);
    r.SetInt32(0, static_cast<int32_t>(i));
    r.SetString(1, chars[i]);
    r.SetBytes(2, Bin(i));
    ASSERT_OK(w.AppendDetached(r));
  }
  fw::GenericRow bad(3);
  bad.SetInt32(0, 9);
  bad.SetNull(1);
  bad.SetBytes(2, std::vector<uint8_t>{1, 2, 3});
  fw::Result r = w.AppendDetached(bad);
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidRow)) << r.ToString();
  EXPECT_NE(r.error_message.find("BINARY(4)"), std::string::npos) << r.error_message;
  for (const char* long_value : {"abcd", "longer than three", "日本語!"}) {
    fw::GenericRow too_long(3);
    too_long.SetInt32(0, 8);
    too_long.SetString(1, long_value);
    too_long.SetNull(2);
    r = w.AppendDetached(too_long);
    EXPECT_TRUE(r.Is(fw::ClientCode::InvalidRow)) << r.ToString();
    EXPECT_NE(r.error_message.find("column \"c\" is CHAR(3) but the value has"), std::string::npos) << r.error_message;
  }
  ASSERT_OK(w.Close());
  std::vector<fw::ScannedRow> rows;
  ASSERT_OK(t.Scan(0, 0, rows));
  ASSERT_EQ(rows.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(rows[i].row.GetString(1), chars[i]);
    EXPECT_EQ(rows[i].row.GetBytes(2), Bin(i));
  }
}

// An Arrow batch (C Data Interface) with a value longer than its CHAR column: refused naming the
// column and the batch row, nothing of it written (the next batch gets offset 0).
TEST_P(CharBinaryTest, ArrowBatchWithALongCharValueIsRefused) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("id", fw::DataType::BigInt(), false)
                 .AddColumn("msg", fw::DataType::Char(2))
                 .Build();
  d.bucket_count = 1;
  fw::Table t = Get(Create("cb_arrow", d));
  fw::AppendWriter w = AppendWriterFor(t);
  ArrowArray array;
  ArrowSchema schema;
  producer::MakeArray({1, 10}, &array);  // "m1" fits CHAR(2), "m10" does not
  producer::MakeSchema(&schema);
  fw::WriteResult result;
  fw::Result r = w.WriteArrowBatch(&array, &schema, result);
  EXPECT_TRUE(r.Is(fw::ClientCode::InvalidRow)) << r.ToString();
  EXPECT_NE(r.error_message.find("column \"msg\" is CHAR(2) but the value in batch row 1 has 3 characters"),
            std::string::npos)
      << r.error_message;
  producer::MakeArray({3}, &array);
  producer::MakeSchema(&schema);
  ASSERT_OK(w.WriteArrowBatch(&array, &schema, result));
  fw::WriteCompletion done;
  ASSERT_OK(result.Wait(30s, &done));
  EXPECT_EQ(done.offset, 0) << "nothing of the refused batch was written";
  ASSERT_OK(w.Close());
  std::vector<fw::ScannedRow> rows;
  ASSERT_OK(t.Scan(0, 0, rows));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].row.GetString(1), "m3");
}

TEST_P(CharBinaryTest, LookupsByCharAndBinaryKeys) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("c", fw::DataType::Char(4), false)
                 .AddColumn("b", fw::DataType::Binary(4), false)
                 .AddColumn("v", fw::DataType::String())
                 .SetPrimaryKeys({"c", "b"})
                 .Build();
  d.bucket_count = 3;
  fw::Table t = Get(Create("cb_pk", d));
  fw::UpsertWriter w;
  ASSERT_OK(t.NewUpsert().CreateWriter(w));
  for (uint32_t i = 0; i < 20; ++i) {
    fw::GenericRow r(3);
    r.SetString(0, "k" + std::to_string(i));
    r.SetBytes(1, Bin(i));
    r.SetString(2, "v" + std::to_string(i));
    ASSERT_OK(w.UpsertDetached(r));
  }
  ASSERT_OK(w.Close());
  for (uint32_t i = 0; i < 20; ++i) {
    fw::GenericRow key(2);
    key.SetString(0, "k" + std::to_string(i));
    key.SetBytes(1, Bin(i));
    fw::GenericRow got;
    bool found = false;
    ASSERT_OK(t.Lookup(key, got, found));
    ASSERT_TRUE(found) << i;
    EXPECT_EQ(got.GetString(2), "v" + std::to_string(i));
  }
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Embedded, CharBinaryTest, ::testing::Values(Backend::Embedded), BackendName);
INSTANTIATE_TEST_SUITE_P(Cluster, CharBinaryTest, ::testing::Values(Backend::Cluster), BackendName);
