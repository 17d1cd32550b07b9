#pragma once
// Op attributes: a small sorted list of (key, value). Keys are declared once with the kind of their value,
// which the text printer and parser use.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "xlite/dtype.h"

namespace xlite::ir {

enum class AttrKind : uint8_t { Int, Bool, Float, Ints, DTypeName, String };

// X(key, kind)
#define XLITE_IR_ATTRS(X) \
  X(index, Int)           \
  X(value, Float)         \
  X(dtype, DTypeName)     \
  X(shape, Ints)          \
  X(dim, Int)             \
  X(dims, Ints)           \
  X(keepdim, Bool)        \
  X(perm, Ints)           \
  X(start, Ints)          \
  X(limit, Ints)          \
  X(stride, Ints)         \
  X(lo, Ints)             \
  X(hi, Ints)             \
  X(dilation, Ints)       \
  X(groups, Int)          \
  X(offset, Int)          \
  X(kernel, String)       \
  X(args, String)         \
  X(descending, Bool)

enum class AttrKey : uint8_t {
#define XLITE_ATTR_ENUM(key, kind) key,
  XLITE_IR_ATTRS(XLITE_ATTR_ENUM)
#undef XLITE_ATTR_ENUM
      count_
};

std::string_view attr_name(AttrKey key);
AttrKind attr_kind(AttrKey key);
bool attr_from_name(std::string_view name, AttrKey* key);

using AttrValue = std::variant<int64_t, double, std::vector<int64_t>, std::string>;

class Attrs {
 public:
  Attrs() = default;
  Attrs& set(AttrKey key, AttrValue value);
  Attrs& set_int(AttrKey key, int64_t v) { return set(key, v); }
  Attrs& set_bool(AttrKey key, bool v) { return set(key, static_cast<int64_t>(v)); }
  Attrs& set_float(AttrKey key, double v) { return set(key, v); }
  Attrs& set_ints(AttrKey key, std::vector<int64_t> v) { return set(key, AttrValue(std::move(v))); }
  Attrs& set_dtype(AttrKey key, DType v) { return set(key, static_cast<int64_t>(v)); }
  Attrs& set_string(AttrKey key, std::string v) { return set(key, AttrValue(std::move(v))); }

  bool has(AttrKey key) const;
  // These throw xlite::Error when the key is missing or of another kind.
  int64_t get_int(AttrKey key) const;
  bool get_bool(AttrKey key) const { return get_int(key) != 0; }
  double get_float(AttrKey key) const;
  const std::vector<int64_t>& get_ints(AttrKey key) const;
  DType get_dtype(AttrKey key) const;
  const std::string& get_string(AttrKey key) const;

  const std::vector<std::pair<AttrKey, AttrValue>>& items() const { return items_; }
  uint64_t hash() const;
  // The hash of attributes holding just this one integer, without building them (a parameter's index).
  static uint64_t hash_of_int(AttrKey key, int64_t value);
  bool operator==(const Attrs& other) const;

 private:
  const AttrValue& get(AttrKey key) const;
  std::vector<std::pair<AttrKey, AttrValue>> items_;  // sorted by key
};

}  // namespace xlite::ir
