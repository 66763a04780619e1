// connection.cpp: Result helpers, Connection, Admin, Table and the writer builders.
#include <utility>

#include "internal.h"

namespace fluss_writer {

using internal::DropBox;
using internal::Str;
using internal::ToResult;

// ===== Result =====

std::string Result::CodeName() const {
  if (error_code == 0) {
    return "OK";
  }
  return std::string(ffi::code_name(error_code));
}

std::string Result::ToString() const {
  if (Ok()) {
    return "OK";
  }
  return CodeName() + " (" + std::to_string(error_code) + "): " + error_message;
}

// ===== Connection =====

Connection::~Connection() { DropBox(std::exchange(impl_, nullptr)); }

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    DropBox(std::exchange(impl_, std::exchange(other.impl_, nullptr)));
  }
  return *this;
}

Result Connection::Create(const Configuration& config, Connection& out) {
  // Every property goes to the core, "bootstrap.servers" included; the core resolves it with the
  // explicit field (one setting; both given and different is InvalidConfig).
  rust::Vec<rust::String> keys;
  rust::Vec<rust::String> values;
  for (const auto& [k, v] : config.properties) {
    keys.push_back(rust::String::lossy(k));
    values.push_back(rust::String::lossy(v));
  }
  ffi::FfiStatus st;
  rust::Box<ffi::RConnection> c = ffi::connection_create(Str(config.bootstrap_servers), keys, values, st);
  if (st.code != 0) {
    return ToResult(st);
  }
  DropBox(std::exchange(out.impl_, c.into_raw()));
  return Result{};
}

static Result NotOpen() { return internal::ClientError(ClientCode::ConnectionClosed, "the connection is not open"); }

Result Connection::GetAdmin(Admin& out) const {
  if (impl_ == nullptr) {
    return NotOpen();
  }
  DropBox(std::exchange(out.impl_, ffi::connection_clone(*impl_).into_raw()));
  return Result{};
}

Result Connection::GetTable(const TablePath& path, Table& out) const {
  if (impl_ == nullptr) {
    return NotOpen();
  }
  ffi::FfiStatus st;
  rust::Box<ffi::RTable> t = ffi::table_get(*impl_, Str(path.database()), Str(path.table()), st);
  if (st.code != 0) {
    return ToResult(st);
  }
  detail::Access::Ref(out) = std::shared_ptr<ffi::RTable>(t.into_raw(), [](ffi::RTable* p) { DropBox(p); });
  return Result{};
}

Result Connection::Close() { return Close(std::chrono::milliseconds(-1)); }

bool Connection::IsClosed() const noexcept { return impl_ == nullptr || ffi::connection_is_closed(*impl_); }

Result Connection::Close(std::chrono::milliseconds timeout) {
  if (impl_ == nullptr) {
    return NotOpen();
  }
  return ToResult(ffi::connection_close(*impl_, internal::Millis(timeout)));
}

// ===== Admin =====

Admin::~Admin() { DropBox(std::exchange(impl_, nullptr)); }

Admin& Admin::operator=(Admin&& other) noexcept {
  if (this != &other) {
    DropBox(std::exchange(impl_, std::exchange(other.impl_, nullptr)));
  }
  return *this;
}

Result Admin::CreateDatabase(const std::string& name, bool ignore_if_exists) {
  if (impl_ == nullptr) return NotOpen();
  return ToResult(ffi::admin_create_database(*impl_, Str(name), ignore_if_exists));
}

Result Admin::DropDatabase(const std::string& name, bool ignore_if_not_exists, bool cascade) {
  if (impl_ == nullptr) return NotOpen();
  return ToResult(ffi::admin_drop_database(*impl_, Str(name), ignore_if_not_exists, cascade));
}

namespace {
std::vector<std::string> ToStrings(const rust::Vec<rust::String>& v) {
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const rust::String& s : v) out.emplace_back(s.data(), s.size());
  return out;
}
}  // namespace

Result Admin::ListDatabases(std::vector<std::string>& out) {
  if (impl_ == nullptr) return NotOpen();
  rust::Vec<rust::String> names;
  Result r = ToResult(ffi::admin_list_databases(*impl_, names));
  out = r.Ok() ? ToStrings(names) : std::vector<std::string>{};
  return r;
}

Result Admin::ListTables(const std::string& database, std::vector<std::string>& out) {
  if (impl_ == nullptr) return NotOpen();
  rust::Vec<rust::String> names;
  Result r = ToResult(ffi::admin_list_tables(*impl_, Str(database), names));
  out = r.Ok() ? ToStrings(names) : std::vector<std::string>{};
  return r;
}

Result Admin::DatabaseExists(const std::string& name, bool& out) {
  if (impl_ == nullptr) return NotOpen();
  return ToResult(ffi::admin_database_exists(*impl_, Str(name), out));
}

namespace {
// The parts of `t` (and theirs) in pre-order, each with its number of children: the bridge's
// flattened form of nested types (Rust rebuilds and checks them).
void FlattenChildren(const DataType& t, rust::Vec<ffi::FfiTypeNode>& out) {
  for (const Column& c : t.children) {
    out.push_back(ffi::FfiTypeNode{rust::String::lossy(c.name), static_cast<int32_t>(c.type.id), c.type.precision,
                                   c.type.scale, c.nullable, c.type.children.size()});
    FlattenChildren(c.type, out);
  }
}

ffi::FfiColumn ToFfi(const Column& c) {
  ffi::FfiColumn f{rust::String::lossy(c.name), static_cast<int32_t>(c.type.id), c.type.precision, c.type.scale,
                   c.nullable, c.type.children.size(), {}, rust::String::lossy(c.comment),
                   rust::String::lossy(c.agg_function), {}, {}};
  for (const auto& [key, value] : c.agg_params) {
    f.agg_param_keys.push_back(rust::String::lossy(key));
    f.agg_param_values.push_back(rust::String::lossy(value));
  }
  FlattenChildren(c.type, f.nested);
  return f;
}

// The inverse of FlattenChildren: `child_count` children of a type from `nodes[next...]`.
DataType FromFfi(int32_t type_id, int32_t precision, int32_t scale, size_t child_count,
                 const rust::Vec<ffi::FfiTypeNode>& nodes, size_t& next) {
  DataType t{static_cast<TypeId>(type_id), precision, scale};
  for (size_t k = 0; k < child_count && next < nodes.size(); ++k) {
    const ffi::FfiTypeNode& n = nodes[next++];
    DataType child = FromFfi(n.type_id, n.precision, n.scale, n.child_count, nodes, next);
    t.children.push_back(Column{std::string(n.name), std::move(child), n.nullable});
  }
  return t;
}

Column FromFfi(const ffi::FfiColumn& c) {
  size_t next = 0;
  Column out{std::string(c.name), FromFfi(c.type_id, c.precision, c.scale, c.child_count, c.nested, next),
             c.nullable, std::string(c.comment)};
  out.agg_function = std::string(c.agg_function);
  for (size_t k = 0; k < c.agg_param_keys.size() && k < c.agg_param_values.size(); ++k) {
    out.agg_params.emplace(std::string(c.agg_param_keys[k]), std::string(c.agg_param_values[k]));
  }
  return out;
}
}  // namespace

Result Schema::FromArrow(const ArrowSchema& schema, Schema& out) {
  rust::Vec<ffi::FfiColumn> columns;
  Result r = ToResult(ffi::schema_from_arrow(reinterpret_cast<size_t>(&schema), columns));
  if (r.Ok()) {
    Schema s;
    for (const ffi::FfiColumn& c : columns) s.columns.push_back(FromFfi(c));
    out = std::move(s);
  }
  return r;
}

Result Schema::ToArrow(ArrowSchema* out) const {
  rust::Vec<ffi::FfiColumn> cols;
  for (const Column& c : columns) cols.push_back(ToFfi(c));
  rust::Vec<rust::String> pk;
  for (const std::string& k : primary_keys) pk.push_back(rust::String::lossy(k));
  return ToResult(ffi::schema_to_arrow(cols, pk, reinterpret_cast<size_t>(out)));
}

Result Admin::CreateTable(const TablePath& path, const TableDescriptor& d, bool ignore_if_exists) {
  if (impl_ == nullptr) return NotOpen();
  ffi::FfiDescriptor fd;
  for (const Column& c : d.schema.columns) {
    fd.columns.push_back(ToFfi(c));
  }
  for (const std::string& k : d.schema.primary_keys) fd.primary_key.push_back(rust::String::lossy(k));
  fd.bucket_count = d.bucket_count;
  for (const std::string& k : d.bucket_keys) fd.bucket_keys.push_back(rust::String::lossy(k));
  for (const auto& [k, v] : d.properties) {
    fd.property_keys.push_back(rust::String::lossy(k));
    fd.property_values.push_back(rust::String::lossy(v));
  }
  fd.comment = rust::String::lossy(d.comment);
  for (const std::string& k : d.partition_keys) fd.partition_keys.push_back(rust::String::lossy(k));
  return ToResult(
      ffi::admin_create_table(*impl_, Str(path.database()), Str(path.table()), fd, ignore_if_exists));
}

Result Admin::DropTable(const TablePath& path, bool ignore_if_not_exists) {
  if (impl_ == nullptr) return NotOpen();
  return ToResult(ffi::admin_drop_table(*impl_, Str(path.database()), Str(path.table()), ignore_if_not_exists));
}

Result Admin::AlterTable(const TablePath& path, const std::vector<TableChange>& changes, bool ignore_if_not_exists) {
  if (impl_ == nullptr) return NotOpen();
  rust::Vec<ffi::FfiColumn> add;
  rust::Vec<rust::String> drop;
  rust::Vec<rust::String> rename_from;
  rust::Vec<rust::String> rename_to;
  for (const TableChange& c : changes) {
    switch (c.kind) {
      case TableChange::Kind::AddColumn:
        add.push_back(ToFfi(c.column));
        break;
      case TableChange::Kind::DropColumn:
        drop.push_back(rust::String::lossy(c.name));
        break;
      case TableChange::Kind::RenameColumn:
        rename_from.push_back(rust::String::lossy(c.name));
        rename_to.push_back(rust::String::lossy(c.new_name));
        break;
    }
  }
  return ToResult(ffi::admin_alter_table(*impl_, Str(path.database()), Str(path.table()), add, drop, rename_from,
                                         rename_to, ignore_if_not_exists));
}

Result Admin::AlterBucketCount(const TablePath& path, int32_t bucket_count, bool ignore_if_not_exists) {
  if (impl_ == nullptr) return NotOpen();
  return ToResult(
      ffi::admin_alter_bucket_count(*impl_, Str(path.database()), Str(path.table()), bucket_count, ignore_if_not_exists));
}

Result Admin::ServerSupports(const std::string& capability, bool& out) {
  if (impl_ == nullptr) return NotOpen();
  return ToResult(ffi::admin_server_supports(*impl_, Str(capability), out));
}

Result Admin::TableExists(const TablePath& path, bool& out) {
  if (impl_ == nullptr) return NotOpen();
  return ToResult(ffi::admin_table_exists(*impl_, Str(path.database()), Str(path.table()), out));
}

namespace {
std::map<std::string, std::string> ToMap(const rust::Vec<rust::String>& keys, const rust::Vec<rust::String>& values) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < keys.size() && i < values.size(); ++i) {
    out.emplace(std::string(keys[i]), std::string(values[i]));
  }
  return out;
}
}  // namespace

Result Admin::GetTableInfo(const TablePath& path, TableInfo& out) {
  if (impl_ == nullptr) return NotOpen();
  ffi::FfiTableInfo fi;
  Result r = ToResult(ffi::admin_get_table_info(*impl_, Str(path.database()), Str(path.table()), fi));
  if (!r.Ok()) return r;
  TableInfo info;
  info.path = TablePath(std::string(fi.database), std::string(fi.table));
  info.table_id = fi.table_id;
  info.schema_id = fi.schema_id;
  const ffi::FfiDescriptor& d = fi.descriptor;
  for (const ffi::FfiColumn& c : d.columns) {
    info.descriptor.schema.columns.push_back(FromFfi(c));
  }
  info.descriptor.schema.primary_keys = ToStrings(d.primary_key);
  info.descriptor.bucket_count = d.bucket_count;
  info.descriptor.bucket_keys = ToStrings(d.bucket_keys);
  info.descriptor.partition_keys = ToStrings(d.partition_keys);
  info.descriptor.properties = ToMap(d.property_keys, d.property_values);
  info.descriptor.comment = std::string(d.comment);
  info.custom_properties = ToMap(fi.custom_property_keys, fi.custom_property_values);
  info.created_time = fi.created_time;
  info.modified_time = fi.modified_time;
  out = std::move(info);
  return r;
}

// ===== ACLs (conversions only; the core checks and converts) =====

namespace {

ffi::FfiAclBinding ToFfi(const AclBinding& b) {
  ffi::FfiAclBinding f;
  f.resource_type = static_cast<int32_t>(b.resource.type);
  f.database = rust::String::lossy(b.resource.database_name);
  f.table = rust::String::lossy(b.resource.table_name);
  f.principal = rust::String::lossy(b.principal);
  f.principal_type = rust::String::lossy(b.principal_type);
  f.host = rust::String::lossy(b.host);
  f.operation = static_cast<int32_t>(b.operation);
  return f;
}

ffi::FfiAclFilter ToFfi(const AclFilter& a) {
  ffi::FfiAclFilter f;
  f.has_resource = a.resource.has_value();
  f.resource_type = a.resource ? static_cast<int32_t>(a.resource->type) : 0;
  if (a.resource) {
    f.database = rust::String::lossy(a.resource->database_name);
    f.table = rust::String::lossy(a.resource->table_name);
  }
  f.has_principal = a.principal.has_value();
  if (a.principal) f.principal = rust::String::lossy(*a.principal);
  f.has_host = a.host.has_value();
  if (a.host) f.host = rust::String::lossy(*a.host);
  f.operation = static_cast<int32_t>(a.operation);
  return f;
}

void FromFfi(const rust::Vec<ffi::FfiAclBinding>& in, std::vector<AclBinding>& out) {
  out.clear();
  out.reserve(in.size());
  for (const ffi::FfiAclBinding& f : in) {
    AclBinding b;
    b.resource.type = static_cast<AclResourceType>(f.resource_type);
    b.resource.database_name = std::string(f.database);
    b.resource.table_name = std::string(f.table);
    b.principal = std::string(f.principal);
    b.principal_type = std::string(f.principal_type);
    b.host = std::string(f.host);
    b.operation = static_cast<AclOperation>(f.operation);
    out.push_back(std::move(b));
  }
}

}  // namespace

Result Admin::CreateAcls(const std::vector<AclBinding>& acls) {
  if (impl_ == nullptr) return NotOpen();
  rust::Vec<ffi::FfiAclBinding> v;
  v.reserve(acls.size());
  for (const AclBinding& b : acls) v.push_back(ToFfi(b));
  return ToResult(ffi::admin_create_acls(*impl_, v));
}

Result Admin::ListAcls(const AclFilter& filter, std::vector<AclBinding>& out) {
  out.clear();
  if (impl_ == nullptr) return NotOpen();
  rust::Vec<ffi::FfiAclBinding> v;
  Result r = ToResult(ffi::admin_list_acls(*impl_, ToFfi(filter), v));
  if (r.Ok()) FromFfi(v, out);
  return r;
}

Result Admin::DropAcls(const std::vector<AclFilter>& filters, std::vector<AclBinding>& dropped) {
  dropped.clear();
  if (impl_ == nullptr) return NotOpen();
  rust::Vec<ffi::FfiAclFilter> v;
  v.reserve(filters.size());
  for (const AclFilter& f : filters) v.push_back(ToFfi(f));
  rust::Vec<ffi::FfiAclBinding> gone;
  Result r = ToResult(ffi::admin_drop_acls(*impl_, v, gone));
  if (r.Ok()) FromFfi(gone, dropped);
  return r;
}

// ===== Table and builders =====

TableAppend Table::NewAppend() const {
  TableAppend a;
  a.table_ = table_;
  return a;
}

TableUpsert Table::NewUpsert() const {
  TableUpsert u;
  u.table_ = table_;
  return u;
}

bool Table::HasPrimaryKey() const { return table_ && ffi::table_has_primary_key(*table_); }
int32_t Table::BucketCount() const { return table_ ? ffi::table_bucket_count(*table_) : 0; }
size_t Table::ColumnCount() const { return table_ ? ffi::table_column_count(*table_) : 0; }
std::string Table::Path() const { return table_ ? std::string(ffi::table_path(*table_)) : std::string(); }

Result Table::Scan(int32_t bucket, int64_t from_offset, std::vector<ScannedRow>& out) const {
  if (!table_) return internal::ClientError(ClientCode::InvalidTable, "the table handle is empty");
  ffi::FfiStatus st;
  rust::Box<ffi::RScan> s = ffi::table_scan(*table_, bucket, from_offset, st);
  if (st.code != 0) return internal::ToResult(st);
  internal::ScanToRows(*s, out);
  return Result{};
}

Result Table::Lookup(const GenericRow& key, GenericRow& out, bool& found) const {
  found = false;
  if (!table_) return internal::ClientError(ClientCode::InvalidTable, "the table handle is empty");
  ffi::RRow* k = detail::Access::Get(key);
  if (k == nullptr) return internal::ClientError(ClientCode::InvalidRow, "the key GenericRow was moved from");
  ffi::FfiStatus st;
  rust::Box<ffi::RRow> row = ffi::table_lookup(*table_, *k, found, st);
  if (st.code != 0) return internal::ToResult(st);
  internal::DropBox(std::exchange(detail::Access::Ref(out), row.into_raw()));
  return Result{};
}

namespace {

ffi::FfiWriterOptions Options(const WriteCallbackOptions& o) {
  ffi::FfiWriterOptions f;
  f.max_pending_callbacks = o.max_pending_callbacks;
  f.executor_kind = static_cast<int32_t>(o.executor);
  f.shards = o.shards;
  return f;
}

std::unique_ptr<detail::ErrorHandlerHolder> Handler(const WriteCallbackOptions& o) {
  if (!o.error_handler) {
    return nullptr;
  }
  auto h = std::make_unique<detail::ErrorHandlerHolder>();
  h->fn = o.error_handler;
  return h;
}

Result NoTable() { return internal::ClientError(ClientCode::InvalidTable, "the Table handle is empty"); }

}  // namespace

Result TableAppend::CreateWriter(AppendWriter& out, const WriteCallbackOptions& options) const {
  if (!table_) return NoTable();
  ffi::FfiStatus st;
  rust::Box<ffi::RWriter> w =
      ffi::table_create_append_writer(*table_, Options(options), options.user_executor, Handler(options), st);
  if (st.code != 0) {
    return ToResult(st);
  }
  out = AppendWriter();  // closes (bounded) whatever `out` held
  detail::Access::Ref(out) = w.into_raw();
  detail::Access::CloseTimeout(out) = options.close_timeout;
  return Result{};
}

TableUpsert& TableUpsert::PartialUpdateByName(std::vector<std::string> columns) {
  partial_ = 1;
  names_ = std::move(columns);
  return *this;
}

TableUpsert& TableUpsert::PartialUpdateByIndex(std::vector<size_t> columns) {
  partial_ = 2;
  indexes_ = std::move(columns);
  return *this;
}

Result TableUpsert::CreateWriter(UpsertWriter& out, const WriteCallbackOptions& options) const {
  if (!table_) return NoTable();
  rust::Vec<rust::String> names;
  for (const std::string& n : names_) names.push_back(rust::String::lossy(n));
  rust::Vec<size_t> indexes;
  for (size_t i : indexes_) indexes.push_back(i);
  ffi::FfiStatus st;
  rust::Box<ffi::RWriter> w = ffi::table_create_upsert_writer(*table_, partial_, names, indexes, Options(options),
                                                              options.user_executor, Handler(options), st);
  if (st.code != 0) {
    return ToResult(st);
  }
  out = UpsertWriter();  // closes (bounded) whatever `out` held
  detail::Access::Ref(out) = w.into_raw();
  detail::Access::CloseTimeout(out) = options.close_timeout;
  return Result{};
}

}  // namespace fluss_writer
