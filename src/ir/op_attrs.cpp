#include "ir/op_attrs.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/check.h"
#include "ir/op.h"
#include "xlite/error.h"

namespace xlite::ir {
namespace {

void read_field(const Attrs& attrs, AttrKey key, int64_t& field) { field = attrs.get_int(key); }
void read_field(const Attrs& attrs, AttrKey key, bool& field) { field = attrs.get_bool(key); }
void read_field(const Attrs& attrs, AttrKey key, double& field) { field = attrs.get_float(key); }
void read_field(const Attrs& attrs, AttrKey key, std::span<const int64_t>& field) { field = attrs.get_ints(key); }
void read_field(const Attrs& attrs, AttrKey key, DType& field) { field = attrs.get_dtype(key); }
void read_field(const Attrs& attrs, AttrKey key, std::string_view& field) { field = attrs.get_string(key); }

void write_field(Attrs& attrs, AttrKey key, int64_t field) { attrs.set_int(key, field); }
void write_field(Attrs& attrs, AttrKey key, bool field) { attrs.set_bool(key, field); }
void write_field(Attrs& attrs, AttrKey key, double field) { attrs.set_float(key, field); }
void write_field(Attrs& attrs, AttrKey key, std::span<const int64_t> field) {
  attrs.set_ints(key, std::vector<int64_t>(field.begin(), field.end()));
}
void write_field(Attrs& attrs, AttrKey key, DType field) { attrs.set_dtype(key, field); }
void write_field(Attrs& attrs, AttrKey key, std::string_view field) { attrs.set_string(key, std::string(field)); }

bool holds_kind(const AttrValue& value, AttrKind kind) {
  switch (kind) {
    case AttrKind::Int:
    case AttrKind::Bool:
    case AttrKind::DTypeName: return std::holds_alternative<int64_t>(value);
    case AttrKind::Float: return std::holds_alternative<double>(value);
    case AttrKind::Ints: return std::holds_alternative<std::vector<int64_t>>(value);
    case AttrKind::String: return std::holds_alternative<std::string>(value);
  }
  return false;
}

[[noreturn]] void fail(OpId op, const std::string& message) {
  throw Error("[" + std::string(op_name(op)) + "] " + message);
}

}  // namespace

#define XLITE_READ_FIELD(key, kind) read_field(attrs, AttrKey::key, r.key);
#define XLITE_WRITE_FIELD(key, kind) write_field(attrs, AttrKey::key, key);
#define XLITE_KEY_OF_FIELD(key, kind) AttrKey::key,
#define XLITE_DEFINE_SCHEMA(Name, FIELDS)                                             \
  Name Name::of([[maybe_unused]] const Attrs& attrs) {                                \
    Name r;                                                                           \
    FIELDS(XLITE_READ_FIELD)                                                          \
    return r;                                                                         \
  }                                                                                   \
  Attrs Name::to_attrs() const {                                                      \
    Attrs attrs;                                                                      \
    FIELDS(XLITE_WRITE_FIELD)                                                         \
    return attrs;                                                                     \
  }                                                                                   \
  std::span<const AttrKey> Name::keys() {                                             \
    /* count_ ends the list so that a schema without attributes is no empty array. */ \
    static constexpr AttrKey kKeys[] = {FIELDS(XLITE_KEY_OF_FIELD) AttrKey::count_};  \
    return std::span<const AttrKey>(kKeys, std::size(kKeys) - 1);                     \
  }
XLITE_ATTR_SCHEMAS(XLITE_DEFINE_SCHEMA)
#undef XLITE_DEFINE_SCHEMA
#undef XLITE_KEY_OF_FIELD
#undef XLITE_WRITE_FIELD
#undef XLITE_READ_FIELD

std::span<const AttrKey> attr_schema(OpId op) {
  switch (op) {
#define XLITE_SCHEMA_CASE(id, name, arity, cls, traits, schema) \
  case OpId::id: return schema::keys();
    XLITE_IR_OPS(XLITE_SCHEMA_CASE)
#undef XLITE_SCHEMA_CASE
    case OpId::count_: break;
  }
  XLITE_FAIL("[ir] attr_schema of an op id out of range");
}

void check_attr_schema(OpId op, const Attrs& attrs) {
  const std::span<const AttrKey> keys = attr_schema(op);
  for (AttrKey key : keys)
    if (!attrs.has(key)) fail(op, "missing attribute '" + std::string(attr_name(key)) + "'");
  for (const auto& [key, value] : attrs.items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      fail(op, "takes no attribute '" + std::string(attr_name(key)) + "'");
    if (!holds_kind(value, attr_kind(key)))
      fail(op, "attribute '" + std::string(attr_name(key)) + "' has a value of the wrong kind");
  }
}

}  // namespace xlite::ir
