// test_bad_input.cpp: bad input returns a Result with a distinct code, registers no callback,
// and destroys the callable before the call returns.
#include "test_util.h"

class BadInput : public EmbeddedTest {
 protected:
  // Appends `row` with a tracked callback; checks the code, that the callable is already
  // destroyed and that it never runs.
  void ExpectRejected(fw::AppendWriter& w, const fw::GenericRow& row, fw::ClientCode code) {
    auto destroyed = std::make_shared<std::atomic<int>>(0);
    auto ran = std::make_shared<std::atomic<int>>(0);
    fw::Result r = w.Append(row, [t = Tracked(destroyed), ran](const fw::WriteCompletion&) { (*ran)++; });
    EXPECT_EQ(r.error_code, Code(code)) << r.ToString();
    EXPECT_FALSE(r.error_message.empty());
    EXPECT_EQ(destroyed->load(), 1);
    if (w.Available()) (void)w.Flush();
    EXPECT_EQ(ran->load(), 0);
  }
};

TEST_F(BadInput, WrongType) {
  fw::AppendWriter w = AppendWriterFor(LogTable("wrongtype"));
  fw::GenericRow row(2);
  row.SetInt32(0, 1);  // the column is BIGINT
  row.SetString(1, "x");
  ExpectRejected(w, row, fw::ClientCode::InvalidRow);
}

TEST_F(BadInput, WrongFieldCount) {
  fw::AppendWriter w = AppendWriterFor(LogTable("fieldcount"));
  fw::GenericRow row(3);
  row.SetInt64(0, 1);
  ExpectRejected(w, row, fw::ClientCode::InvalidRow);
}

TEST_F(BadInput, NullInNotNull) {
  fw::AppendWriter w = AppendWriterFor(LogTable("notnull"));
  fw::GenericRow row(2);
  row.SetNull(0);
  ExpectRejected(w, row, fw::ClientCode::InvalidRow);
}

TEST_F(BadInput, BadDecimalString) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder().AddColumn("d", fw::DataType::Decimal(10, 2)).Build();
  ASSERT_OK(admin.CreateTable(fw::TablePath("fluss", "baddec"), d));
  fw::AppendWriter w = AppendWriterFor(fw::TablePath("fluss", "baddec"));
  fw::GenericRow row(1);
  row.SetDecimal(0, std::string_view("12.5"), 10, 2);
  ExpectRejected(w, row, fw::ClientCode::InvalidRow);
  row.SetDecimal(0, int64_t{123456789012}, 10, 2);  // 12 digits > precision 10
  ExpectRejected(w, row, fw::ClientCode::InvalidRow);
}

TEST_F(BadInput, RecordTooLarge) {
  fw::Configuration cfg;
  cfg.Set("client.writer.batch-size", "1kb");
  Open(cfg);
  fw::AppendWriter w = AppendWriterFor(LogTable("toolarge"));
  ExpectRejected(w, Row(1, std::string(4000, 'x')), fw::ClientCode::RecordTooLarge);
}

TEST_F(BadInput, ClosedWriter) {
  fw::AppendWriter w = AppendWriterFor(LogTable("closed"));
  ASSERT_OK(w.Close());
  ExpectRejected(w, Row(1), fw::ClientCode::WriterClosed);
}

TEST_F(BadInput, MovedFromWriter) {
  fw::AppendWriter w = AppendWriterFor(LogTable("moved"));
  fw::AppendWriter other = std::move(w);
  ExpectRejected(w, Row(1), fw::ClientCode::WriterClosed);  // NOLINT: use after move on purpose
}

TEST_F(BadInput, UnknownTableAndBadConfig) {
  fw::Table t;
  fw::Result r = conn.GetTable(fw::TablePath("fluss", "nope"), t);
  EXPECT_FALSE(r.Ok());
  EXPECT_EQ(r.error_code, 7) << r.ToString();  // Fluss TABLE_NOT_EXIST passes through
  r = conn.GetTable(fw::TablePath("fluss", "bad name!"), t);
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidTable)) << r.ToString();
  fw::Configuration cfg;
  cfg.bootstrap_servers = "embedded";
  cfg.Set("client.no.such.key", "1");
  fw::Connection c2;
  r = fw::Connection::Create(cfg, c2);
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidConfig)) << r.ToString();
  EXPECT_FALSE(c2.Available());
  fw::Table none;
  fw::AppendWriter w;
  EXPECT_EQ(none.NewAppend().CreateWriter(w).error_code, Code(fw::ClientCode::InvalidTable));
}

TEST_F(BadInput, UpsertOnLogTableWriterKinds) {
  fw::TablePath p = PkTable("pk");
  fw::Table t;
  ASSERT_OK(conn.GetTable(p, t));
  fw::UpsertWriter w;
  ASSERT_OK(t.NewUpsert().CreateWriter(w));
  fw::GenericRow key(2);  // the key has one column
  key.SetInt32(0, 1);
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  fw::Result r = w.Delete(key, [t2 = Tracked(destroyed)](const fw::WriteCompletion&) {});
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidRow)) << r.ToString();
  EXPECT_EQ(destroyed->load(), 1);
  fw::Table log;
  ASSERT_OK(conn.GetTable(LogTable("logt"), log));
  fw::UpsertWriter w2;
  EXPECT_EQ(log.NewUpsert().CreateWriter(w2).error_code, Code(fw::ClientCode::Unsupported));
}
