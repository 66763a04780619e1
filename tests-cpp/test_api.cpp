// test_api.cpp: codes (drift test), rows of every type, admin (GetTableInfo too), tables, a writer's
// table, upserts, WriteResult.
#include <algorithm>
#include <array>
#include <set>

#include "test_util.h"

TEST(Codes, HeaderEnumMatchesRustCore) {
  std::vector<int32_t> header;
  for (fw::ClientCode c : fw::kAllClientCodes) header.push_back(static_cast<int32_t>(c));
  EXPECT_EQ(header, fw::testing::CoreClientCodes());
}

TEST(Codes, NamesAndRetriability) {
  fw::Result r;
  EXPECT_EQ(r.CodeName(), "OK");
  r.error_code = Code(fw::ClientCode::CalledFromCallback);
  EXPECT_EQ(r.CodeName(), "CALLED_FROM_CALLBACK");
  r.error_code = 12;
  EXPECT_EQ(r.CodeName(), "NOT_LEADER_OR_FOLLOWER");
}

// fluss_writer::ErrorCode and kErrorCodes are generated from the core's table (a Rust test keeps
// the header block equal to it); here the core, through the library, names every code the same.
TEST(Codes, ErrorCodeConstantsMatchTheCoreTable) {
  static_assert(fw::ErrorCode::kNotLeaderOrFollower == 12);
  static_assert(fw::ErrorCode::kInvalidBucketRouting == 74);
  static_assert(fw::ErrorCode::kInvalidRow == static_cast<int32_t>(fw::ClientCode::InvalidRow));
  static_assert(fw::ErrorCode::kWaitInterrupted == static_cast<int32_t>(fw::ClientCode::Interrupted));
  std::set<std::string> names;
  std::vector<int32_t> client;
  for (const fw::ErrorCodeInfo& info : fw::kErrorCodes) {
    fw::Result r;
    r.error_code = info.code;
    if (info.code != 0) {
      EXPECT_EQ(r.CodeName(), info.name) << info.code;
    }
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    if (info.code <= -1001) client.push_back(info.code);
  }
  EXPECT_EQ(client, fw::testing::CoreClientCodes());
  // A code a newer server sends and the table lacks keeps its number, named SERVER_ERROR.
  fw::Result unknown;
  unknown.error_code = 999;
  EXPECT_EQ(unknown.CodeName(), "SERVER_ERROR");
}

TEST(Callback, IsMoveOnlyTypeErasedAndSmall) {
  static_assert(!std::is_copy_constructible_v<fw::WriteCallback>);
  static_assert(std::is_nothrow_move_constructible_v<fw::WriteCallback>);
  // An operations pointer plus two words of inline storage.
  EXPECT_EQ(sizeof(fw::WriteCallback), sizeof(void*) + fw::kWriteCallbackInlineSize);
  int counter = 0;
  auto by_ref = [&counter](const fw::WriteCompletion&) { counter++; };
  auto two_words = [p = &counter, k = int64_t{1}](const fw::WriteCompletion&) { *p += static_cast<int>(k); };
  auto large = [a = std::array<int64_t, 3>{}](const fw::WriteCompletion&) { (void)a; };
  auto owning = [p = std::make_shared<int>(1)](const fw::WriteCompletion&) { (void)p; };
  static_assert(fw::WriteCallback::kInline<decltype(by_ref)>);
  static_assert(fw::WriteCallback::kInline<decltype(two_words)>);
  static_assert(!fw::WriteCallback::kInline<decltype(large)>);   // too large: one allocation
  static_assert(!fw::WriteCallback::kInline<decltype(owning)>);  // not trivially copyable
  static_assert(std::is_same_v<decltype(fw::WriteCompletion::table), std::string_view>);
  auto p = std::make_unique<int>(7);
  fw::WriteCallback cb = [p = std::move(p)](const fw::WriteCompletion&) { (void)*p; };
  EXPECT_TRUE(static_cast<bool>(cb));
  fw::WriteCallback moved = std::move(cb);
  EXPECT_FALSE(static_cast<bool>(cb));  // NOLINT: checking moved-from state
  EXPECT_TRUE(static_cast<bool>(moved));
}

class ApiTest : public EmbeddedTest {};

TEST_F(ApiTest, EveryTypeRoundTrips) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("b", fw::DataType::Boolean())
                 .AddColumn("i8", fw::DataType::TinyInt())
                 .AddColumn("i16", fw::DataType::SmallInt())
                 .AddColumn("i32", fw::DataType::Int())
                 .AddColumn("i64", fw::DataType::BigInt())
                 .AddColumn("f32", fw::DataType::Float())
                 .AddColumn("f64", fw::DataType::Double())
                 .AddColumn("s", fw::DataType::String())
                 .AddColumn("bytes", fw::DataType::Bytes())
                 .AddColumn("dec", fw::DataType::Decimal(10, 2))
                 .AddColumn("bigdec", fw::DataType::Decimal(38, 4))
                 .AddColumn("date", fw::DataType::Date())
                 .AddColumn("time", fw::DataType::Time())
                 .AddColumn("ts", fw::DataType::Timestamp(9))
                 .AddColumn("ltz", fw::DataType::TimestampLtz(3))
                 .AddColumn("n", fw::DataType::Int())
                 .Build();
  d.bucket_count = 1;
  fw::TablePath p("fluss", "types");
  ASSERT_OK(admin.CreateTable(p, d));
  fw::AppendWriter w = AppendWriterFor(p);
  fw::GenericRow row(16);
  row.SetBool(0, true);
  row.SetInt8(1, -8);
  row.SetInt16(2, 1600);
  row.SetInt32(3, 32000);
  row.SetInt64(4, 1LL << 40);
  row.SetFloat32(5, 1.5f);
  row.SetFloat64(6, 2.25);
  row.SetString(7, "héllo");
  row.SetBytes(8, std::vector<uint8_t>{1, 2, 255});
  row.SetDecimal(9, int64_t{12345}, 10, 2);
  row.SetDecimal(10, std::string_view("12345678901234567890123"), 38, 4);
  row.SetDate(11, 19000);
  row.SetTime(12, 3600000);
  row.SetTimestampNtz(13, 1700000000123, 456789);
  row.SetTimestampLtz(14, 1700000000999);
  row.SetNull(15);
  fw::WriteResult res;
  ASSERT_OK(w.Append(row, res));
  fw::WriteCompletion c;
  ASSERT_OK(res.Wait(&c));
  EXPECT_EQ(c.offset, 0);
  std::vector<fw::testing::ScannedRow> rows;
  ASSERT_OK(fw::testing::Scan(conn, p, 0, 0, rows));
  ASSERT_EQ(rows.size(), 1u);
  const fw::GenericRow& r = rows[0].row;
  EXPECT_EQ(rows[0].change_type, "+A");
  EXPECT_TRUE(r.GetBool(0));
  EXPECT_EQ(r.GetInt64(1), -8);
  EXPECT_EQ(r.TypeName(1), "TINYINT");
  EXPECT_EQ(r.GetInt64(2), 1600);
  EXPECT_EQ(r.GetInt64(3), 32000);
  EXPECT_EQ(r.GetInt64(4), 1LL << 40);
  EXPECT_FLOAT_EQ(static_cast<float>(r.GetFloat64(5)), 1.5f);
  EXPECT_DOUBLE_EQ(r.GetFloat64(6), 2.25);
  EXPECT_EQ(r.GetString(7), "héllo");
  EXPECT_EQ(r.GetBytes(8), (std::vector<uint8_t>{1, 2, 255}));
  EXPECT_EQ(r.GetInt64(9), 12345);
  EXPECT_EQ(r.ToString(10), "12345678901234567890123e-4");
  EXPECT_EQ(r.GetInt64(11), 19000);
  EXPECT_EQ(r.GetInt64(12), 3600000);
  EXPECT_EQ(r.ToString(13), "1700000000123ms+456789ns");
  EXPECT_EQ(r.TypeName(14), "TIMESTAMP_LTZ");
  EXPECT_EQ(r.GetInt64(14), 1700000000999);
  EXPECT_TRUE(r.IsNull(15));
}

TEST_F(ApiTest, AdminDatabasesAndTables) {
  ASSERT_OK(admin.CreateDatabase("db1"));
  bool exists = false;
  ASSERT_OK(admin.DatabaseExists("db1", exists));
  EXPECT_TRUE(exists);
  fw::Result dup = admin.CreateDatabase("db1");
  EXPECT_FALSE(dup.Ok());
  ASSERT_OK(admin.CreateDatabase("db1", true));
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder().AddColumn("a", fw::DataType::Int()).Build();
  ASSERT_OK(admin.CreateTable(fw::TablePath("db1", "t"), d));
  ASSERT_OK(admin.TableExists(fw::TablePath("db1", "t"), exists));
  EXPECT_TRUE(exists);
  ASSERT_OK(admin.CreateTable(fw::TablePath("db1", "u"), d));
  std::vector<std::string> names = {"stale"};
  ASSERT_OK(admin.ListTables("db1", names));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"t", "u"}));
  ASSERT_OK(admin.ListDatabases(names));
  EXPECT_NE(std::find(names.begin(), names.end(), "db1"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "fluss"), names.end());
  fw::Result missing = admin.ListTables("no_such_db", names);
  EXPECT_FALSE(missing.Ok());
  EXPECT_TRUE(names.empty()) << "a failed list leaves no stale names";
  ASSERT_OK(admin.DropTable(fw::TablePath("db1", "u")));
  fw::Table t;
  ASSERT_OK(conn.GetTable(fw::TablePath("db1", "t"), t));
  EXPECT_EQ(t.Path(), "db1.t");
  EXPECT_EQ(t.ColumnCount(), 1u);
  EXPECT_FALSE(t.HasPrimaryKey());
  ASSERT_OK(admin.DropTable(fw::TablePath("db1", "t")));
  ASSERT_OK(admin.TableExists(fw::TablePath("db1", "t"), exists));
  EXPECT_FALSE(exists);
  ASSERT_OK(admin.DropDatabase("db1", false, true));
  fw::TableDescriptor bad;
  bad.schema = fw::Schema::NewBuilder().AddColumn("a", fw::DataType::Decimal(50, 2)).Build();
  fw::Result r = admin.CreateTable(fw::TablePath("fluss", "bad"), bad);
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidTable)) << r.ToString();
}

// Issue 27: dropping data is never the default, in any language. A database that still has a
// table is not dropped without `cascade` (DATABASE_NOT_EMPTY, 5; the table stays); with it, both
// go. (Python had cascade=True: tests-py/test_admin_defaults.py.)
TEST_F(ApiTest, DropDatabaseDoesNotCascadeByDefault) {
  ASSERT_OK(admin.CreateDatabase("keep"));
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder().AddColumn("a", fw::DataType::Int()).Build();
  ASSERT_OK(admin.CreateTable(fw::TablePath("keep", "t"), d));
  fw::Result r = admin.DropDatabase("keep");
  EXPECT_EQ(r.error_code, 5) << r.ToString();
  EXPECT_EQ(r.CodeName(), "DATABASE_NOT_EMPTY");
  r = admin.DropDatabase("keep", true);
  EXPECT_EQ(r.error_code, 5) << "ignore_if_not_exists is not cascade: " << r.ToString();
  bool exists = false;
  ASSERT_OK(admin.TableExists(fw::TablePath("keep", "t"), exists));
  EXPECT_TRUE(exists);
  ASSERT_OK(admin.DropDatabase("keep", false, true));
  ASSERT_OK(admin.DatabaseExists("keep", exists));
  EXPECT_FALSE(exists);
}

// Issue 27: TablePath has the Rust and Python names, database() and table(); the 0.1 fields
// (deprecated) still hold the same names for a release.
TEST(TablePathTest, DatabaseAndTable) {
  fw::TablePath p("db", "t");
  EXPECT_EQ(p.database(), "db");
  EXPECT_EQ(p.table(), "t");
  EXPECT_EQ(p.ToString(), "db.t");
  fw::TablePath copy = p;
  p = fw::TablePath("other", "u");
  EXPECT_EQ(copy.ToString(), "db.t");
  EXPECT_EQ(p.ToString(), "other.u");
  fw::TablePath empty;
  EXPECT_EQ(empty.database(), "");
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
  EXPECT_EQ(copy.database_name, "db");
  EXPECT_EQ(copy.table_name, "t");
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
}

// Admin::GetTableInfo gives the core's TableInfo (Rust Admin::get_table_info, Python
// Admin.get_table_info): every type round-trips, the descriptor is normalized by the core.
TEST_F(ApiTest, GetTableInfoIsTheCoresTableInfo) {
  fw::TableDescriptor d;
  d.schema = fw::Schema::NewBuilder()
                 .AddColumn("id", fw::DataType::Int(), false)
                 .AddColumn("b", fw::DataType::Boolean())
                 .AddColumn("i8", fw::DataType::TinyInt())
                 .AddColumn("i16", fw::DataType::SmallInt())
                 .AddColumn("i64", fw::DataType::BigInt(), false)
                 .AddColumn("f32", fw::DataType::Float())
                 .AddColumn("f64", fw::DataType::Double())
                 .AddColumn("s", fw::DataType::String())
                 .AddColumn("bytes", fw::DataType::Bytes())
                 .AddColumn("dec", fw::DataType::Decimal(38, 4))
                 .AddColumn("date", fw::DataType::Date())
                 .AddColumn("time", fw::DataType::Time(3))
                 .AddColumn("ts", fw::DataType::Timestamp(9))
                 .AddColumn("ltz", fw::DataType::TimestampLtz(3))
                 .SetPrimaryKeys({"id"})
                 .Build();
  d.bucket_count = 3;
  d.properties["table.log.ttl"] = "7d";
  d.comment = "every type";
  fw::TablePath p("fluss", "info");
  ASSERT_OK(admin.CreateTable(p, d));

  fw::TableInfo info;
  ASSERT_OK(admin.GetTableInfo(p, info));
  EXPECT_EQ(info.path.ToString(), "fluss.info");
  EXPECT_GE(info.table_id, 0);
  EXPECT_GE(info.schema_id, 0);
  EXPECT_GT(info.created_time, 0);
  EXPECT_GE(info.modified_time, info.created_time);
  const std::vector<fw::Column>& got = info.descriptor.schema.columns;
  ASSERT_EQ(got.size(), d.schema.columns.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const fw::Column& want = d.schema.columns[i];
    EXPECT_EQ(got[i].name, want.name);
    EXPECT_EQ(got[i].type.id, want.type.id) << want.name;
    EXPECT_EQ(got[i].type.precision, want.type.precision) << want.name;
    EXPECT_EQ(got[i].type.scale, want.type.scale) << want.name;
    EXPECT_EQ(got[i].nullable, want.nullable) << want.name;
  }
  EXPECT_EQ(info.descriptor.schema.primary_keys, (std::vector<std::string>{"id"}));
  EXPECT_EQ(info.descriptor.bucket_count, 3);
  // Normalized by the core: a primary-key table's bucket key defaults to its primary key.
  EXPECT_EQ(info.descriptor.bucket_keys, (std::vector<std::string>{"id"}));
  EXPECT_EQ(info.descriptor.properties.at("table.log.ttl"), "7d");
  EXPECT_EQ(info.descriptor.comment, "every type");
  EXPECT_TRUE(info.custom_properties.empty());

  // The same table as a Table handle sees it.
  fw::Table t;
  ASSERT_OK(conn.GetTable(p, t));
  EXPECT_EQ(t.BucketCount(), info.descriptor.bucket_count);
  EXPECT_EQ(t.ColumnCount(), info.descriptor.schema.columns.size());
  EXPECT_TRUE(t.HasPrimaryKey());

  // A log table without a bucket count: the server's default, and no bucket key.
  fw::TableDescriptor log;
  log.schema = fw::Schema::NewBuilder().AddColumn("a", fw::DataType::Int()).Build();
  ASSERT_OK(admin.CreateTable(fw::TablePath("fluss", "info_log"), log));
  ASSERT_OK(admin.GetTableInfo(fw::TablePath("fluss", "info_log"), info));
  EXPECT_EQ(info.path.table(), "info_log");
  EXPECT_GT(info.descriptor.bucket_count, 0);
  EXPECT_TRUE(info.descriptor.bucket_keys.empty());
  EXPECT_TRUE(info.descriptor.schema.primary_keys.empty());
  EXPECT_TRUE(info.descriptor.properties.find("table.log.ttl") == info.descriptor.properties.end());

  // Errors leave `out` as it was.
  fw::Result r = admin.GetTableInfo(fw::TablePath("fluss", "no_such_table"), info);
  EXPECT_EQ(r.error_code, 7) << r.ToString();  // TABLE_NOT_EXIST
  EXPECT_EQ(r.CodeName(), "TABLE_NOT_EXIST");
  EXPECT_EQ(info.path.table(), "info_log");
  r = admin.GetTableInfo(fw::TablePath("fluss", "bad name!"), info);
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::InvalidTable)) << r.ToString();
  fw::Admin empty;
  EXPECT_EQ(empty.GetTableInfo(p, info).error_code, Code(fw::ClientCode::ConnectionClosed));
  ASSERT_OK(conn.Close());
  r = admin.GetTableInfo(p, info);
  EXPECT_EQ(r.error_code, Code(fw::ClientCode::ConnectionClosed)) << r.ToString();
}

// AppendWriter::Table / UpsertWriter::Table (Rust writer.table()): the writer's table.
TEST_F(ApiTest, WriterTableIsTheTableItWritesTo) {
  fw::TablePath lp = LogTable("writer_table", 2);
  fw::AppendWriter aw = AppendWriterFor(lp);
  fw::Table at = aw.Table();
  ASSERT_TRUE(at.Available());
  EXPECT_EQ(at.Path(), "fluss.writer_table");
  EXPECT_EQ(at.BucketCount(), 2);
  EXPECT_EQ(at.ColumnCount(), 2u);
  EXPECT_FALSE(at.HasPrimaryKey());
  // A usable handle: a second writer from it, and read-back of what the first one wrote.
  fw::AppendWriter aw2;
  ASSERT_OK(at.NewAppend().CreateWriter(aw2));
  ASSERT_OK(aw.AppendDetached(Row(1)));
  ASSERT_OK(aw2.AppendDetached(Row(2)));
  ASSERT_OK(aw.Flush());
  ASSERT_OK(aw2.Flush());
  size_t rows = 0;
  for (int32_t b = 0; b < 2; ++b) {
    std::vector<fw::ScannedRow> out;
    ASSERT_OK(at.Scan(b, 0, out));
    rows += out.size();
  }
  EXPECT_EQ(rows, 2u);

  fw::TablePath pp = PkTable("writer_table_pk");
  fw::Table pt;
  ASSERT_OK(conn.GetTable(pp, pt));
  fw::UpsertWriter uw;
  ASSERT_OK(pt.NewUpsert().PartialUpdateByName({"id", "score"}).CreateWriter(uw));
  fw::Table ut = uw.Table();
  ASSERT_TRUE(ut.Available());
  EXPECT_EQ(ut.Path(), "fluss.writer_table_pk");
  EXPECT_TRUE(ut.HasPrimaryKey());
  EXPECT_EQ(ut.ColumnCount(), 3u);

  // A closed writer still names its table; an empty or moved-from one has none.
  ASSERT_OK(aw.Close());
  EXPECT_EQ(aw.Table().Path(), "fluss.writer_table");
  fw::AppendWriter moved = std::move(aw2);
  EXPECT_FALSE(aw2.Table().Available());  // NOLINT: checking moved-from state
  EXPECT_TRUE(moved.Table().Available());
  fw::UpsertWriter none;
  EXPECT_FALSE(none.Table().Available());
  EXPECT_EQ(none.Table().Path(), "");
}

TEST_F(ApiTest, UpsertDeleteAndPartialUpdate) {
  fw::TablePath p = PkTable("users");
  fw::Table t;
  ASSERT_OK(conn.GetTable(p, t));
  EXPECT_TRUE(t.HasPrimaryKey());
  fw::AppendWriter wrong;
  EXPECT_EQ(t.NewAppend().CreateWriter(wrong).error_code, Code(fw::ClientCode::Unsupported));
  fw::UpsertWriter w;
  ASSERT_OK(t.NewUpsert().CreateWriter(w));
  std::atomic<int> done{0};
  std::atomic<int64_t> leo{-2};
  for (int i = 0; i < 10; ++i) {
    fw::GenericRow row(3);
    row.SetInt32(0, i);
    row.SetString(1, "user" + std::to_string(i));
    row.SetInt64(2, i * 10);
    ASSERT_OK(w.Upsert(row, [&](const fw::WriteCompletion& c) {
      EXPECT_TRUE(c.Ok()) << c.result.ToString();
      EXPECT_EQ(c.offset, -1);
      leo = c.log_end_offset;
      done++;
    }));
  }
  fw::GenericRow key(1);
  key.SetInt32(0, 3);
  fw::WriteResult del;
  ASSERT_OK(w.Delete(key, del));
  ASSERT_OK(w.Flush());
  EXPECT_EQ(done.load(), 10);
  EXPECT_GT(leo.load(), 0);
  ASSERT_OK(del.Wait());
  bool found = true;
  fw::GenericRow out;
  ASSERT_OK(fw::testing::Lookup(conn, p, key, out, found));
  EXPECT_FALSE(found);
  key.SetInt32(0, 4);
  ASSERT_OK(fw::testing::Lookup(conn, p, key, out, found));
  ASSERT_TRUE(found);
  EXPECT_EQ(out.GetString(1), "user4");
  EXPECT_EQ(out.GetInt64(2), 40);

  fw::UpsertWriter partial;
  ASSERT_OK(t.NewUpsert().PartialUpdateByName({"id", "score"}).CreateWriter(partial));
  fw::GenericRow upd(3);
  upd.SetInt32(0, 4);
  upd.SetInt64(2, 999);
  fw::WriteResult r;
  ASSERT_OK(partial.Upsert(upd, r));
  ASSERT_OK(r.Wait());
  ASSERT_OK(fw::testing::Lookup(conn, p, key, out, found));
  EXPECT_EQ(out.GetString(1), "user4");
  EXPECT_EQ(out.GetInt64(2), 999);
  fw::UpsertWriter bad;
  EXPECT_EQ(t.NewUpsert().PartialUpdateByName({"score"}).CreateWriter(bad).error_code, Code(fw::ClientCode::InvalidRow));
  EXPECT_EQ(t.NewUpsert().PartialUpdateByIndex({0, 9}).CreateWriter(bad).error_code, Code(fw::ClientCode::InvalidRow));
}

TEST_F(ApiTest, WriteResultWaitAndLateOnComplete) {
  fw::TablePath p = LogTable("results");
  fw::AppendWriter w = AppendWriterFor(p);
  std::vector<fw::WriteResult> results(5);
  for (int i = 0; i < 5; ++i) ASSERT_OK(w.Append(Row(i), results[i]));
  for (int i = 0; i < 5; ++i) {
    fw::WriteCompletion c;
    ASSERT_OK(results[i].Wait(&c));
    EXPECT_EQ(c.offset, i);
    EXPECT_EQ(c.table, "fluss.results");
    EXPECT_EQ(c.bucket, 0);
    EXPECT_TRUE(results[i].IsDone());
  }
  // Registered after completion: queued on the executor, never inline.
  std::promise<std::thread::id> where;
  auto main_id = std::this_thread::get_id();
  ASSERT_OK(results[0].OnComplete([&](const fw::WriteCompletion& c) {
    EXPECT_EQ(c.offset, 0);
    where.set_value(std::this_thread::get_id());
  }));
  EXPECT_NE(where.get_future().get(), main_id);
  fw::WriteResult empty;
  EXPECT_FALSE(empty.Wait().Ok());
  EXPECT_FALSE(empty.Valid());
}

// Wait() without a completion to fill (its own path across the boundary) reports exactly what
// Wait(&out) reports: success, a server error's code, retriability and message, and a timeout.
TEST_F(ApiTest, WaitWithoutACompletionReportsTheSameOutcome) {
  fw::TablePath p = LogTable("waitstatus");
  fw::AppendWriter w = AppendWriterFor(p);
  fw::WriteResult good;
  ASSERT_OK(w.Append(Row(1), good));
  fw::Result r = good.Wait();
  EXPECT_TRUE(r.Ok()) << r.ToString();
  EXPECT_TRUE(r.error_message.empty());

  ASSERT_OK(fw::testing::InjectFault(conn, p, 0, fw::testing::Fault::Error(38, "bad timestamp")));
  fw::WriteResult bad;
  ASSERT_OK(w.Append(Row(2), bad));
  fw::Result plain = bad.Wait();
  fw::WriteCompletion c;
  fw::Result filled = bad.Wait(&c);
  EXPECT_EQ(plain.error_code, 38);
  EXPECT_FALSE(plain.IsRetriable());
  EXPECT_NE(plain.error_message.find("bad timestamp"), std::string::npos) << plain.ToString();
  EXPECT_EQ(plain.error_code, filled.error_code);
  EXPECT_EQ(plain.IsRetriable(), filled.IsRetriable());
  EXPECT_EQ(plain.error_message, filled.error_message);

  ASSERT_OK(fw::testing::InjectFault(conn, p, 0, fw::testing::Fault::Error(12, "not leader", 1)));
  fw::WriteResult retried;
  ASSERT_OK(w.Append(Row(3), retried));
  ASSERT_OK(retried.Wait());  // a retriable error once, then the retry succeeds

  ASSERT_OK(fw::testing::InjectFault(conn, p, 0, fw::testing::Fault::Delay(1500ms)));
  fw::WriteResult slow;
  ASSERT_OK(w.Append(Row(4), slow));
  EXPECT_EQ(slow.Wait(10ms).error_code, Code(fw::ClientCode::Timeout));
  ASSERT_OK(slow.Wait());

  // A write that fails leaves the result it was given empty, also one that held a handle.
  fw::AppendWriter none;
  EXPECT_EQ(none.Append(Row(5), good).error_code, Code(fw::ClientCode::WriterClosed));
  EXPECT_FALSE(good.Valid());
  EXPECT_FALSE(good.Wait().Ok());
}

TEST_F(ApiTest, IsClosedFollowsClose) {
  fw::TablePath p = LogTable("closing");
  fw::AppendWriter w = AppendWriterFor(p);
  EXPECT_FALSE(w.IsClosed());
  ASSERT_OK(w.Close());
  EXPECT_TRUE(w.IsClosed());
  EXPECT_EQ(w.AppendDetached(Row(1)).error_code, Code(fw::ClientCode::WriterClosed));
  EXPECT_TRUE(fw::AppendWriter().IsClosed()) << "an empty writer counts as closed";
  EXPECT_FALSE(conn.IsClosed());
  ASSERT_OK(conn.Close());
  EXPECT_TRUE(conn.IsClosed());
  EXPECT_TRUE(fw::Connection().IsClosed()) << "an empty connection counts as closed";
}
