// Calls that must not compile (issue 27): a string literal or a pointer where the API takes a
// bool flag (it would convert to `true` and silently mean something else), and the deprecated
// TablePath fields (a warning, an error under -Werror=deprecated-declarations).
//
// tests-cpp/compile_fail.cmake compiles this file twice: as it is (the right calls; must compile
// with -Wall -Wextra -Werror) and with -DFW_WRONG (the wrong calls: each statement marked with a
// trailing "error:" comment must get a compiler error matching the regex after it, and no other
// line may have one).
#include <map>
#include <string>
#include <vector>

#include "fluss_writer.hpp"

namespace fw = fluss_writer;

void Calls(fw::Admin& admin, fw::GenericRow& row, const fw::TablePath& path) {
  fw::TableDescriptor d;
  std::map<std::string, std::string> spec;
  std::vector<fw::TableChange> changes;
  fw::SchemaBuilder b;
#ifndef FW_WRONG
  b.AddColumn("a", fw::DataType::Int(), true, "a comment");
  b.AddColumn("b", fw::DataType::Int(), false);
  b.AddColumn(fw::Column{"c", fw::DataType::Int(), true, "a comment"});
  (void)admin.CreateDatabase("db", true);
  (void)admin.DropDatabase("db", true);
  (void)admin.DropDatabase("db", false, true);
  (void)admin.CreateTable(path, d, true);
  (void)admin.DropTable(path, true);
  (void)admin.AlterTable(path, changes, true);
  (void)admin.CreatePartition(path, spec, true);
  (void)admin.DropPartition(path, spec, true);
  row.SetBool(0, false);
  (void)fw::DataType::Array(fw::DataType::Int(), false);
  (void)fw::DataType::Map(fw::DataType::String(), fw::DataType::Int(), false);
  (void)fw::testing::Fault::DropConnection(true);
  (void)path.database();
  (void)path.table();
#else
  b.AddColumn("a", fw::DataType::Int(), "a comment");  // error: deleted
  b.AddColumn("a", fw::DataType::Int(), "not null", "a comment");  // error: deleted
  (void)admin.CreateDatabase("db", "a comment");  // error: deleted
  (void)admin.DropDatabase("db", "yes");  // error: deleted
  (void)admin.DropDatabase("db", false, "cascade");  // error: deleted
  (void)admin.CreateTable(path, d, "a comment");  // error: deleted
  (void)admin.DropTable(path, "yes");  // error: deleted
  (void)admin.AlterTable(path, changes, "yes");  // error: deleted
  (void)admin.CreatePartition(path, spec, "yes");  // error: deleted
  (void)admin.DropPartition(path, spec, "yes");  // error: deleted
  row.SetBool(0, "false");  // error: deleted
  (void)fw::DataType::Array(fw::DataType::Int(), "not null");  // error: deleted
  (void)fw::DataType::Map(fw::DataType::String(), fw::DataType::Int(), "not null");  // error: deleted
  (void)fw::testing::Fault::DropConnection("after apply");  // error: deleted
  (void)path.database_name;  // error: deprecated: use database\(\)
  (void)path.table_name;  // error: deprecated: use table\(\)
#endif
}
