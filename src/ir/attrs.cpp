#include "ir/attrs.h"

#include <algorithm>
#include <array>
#include <string>

#include "ir/hash.h"
#include "xlite/error.h"

namespace xlite::ir {
namespace {
struct AttrInfo {
  std::string_view name;
  AttrKind kind;
};
constexpr std::array<AttrInfo, static_cast<size_t>(AttrKey::count_)> kAttrs = {{
#define XLITE_ATTR_INFO(key, kind) {#key, AttrKind::kind},
    XLITE_IR_ATTRS(XLITE_ATTR_INFO)
#undef XLITE_ATTR_INFO
}};
}  // namespace

std::string_view attr_name(AttrKey key) { return kAttrs[static_cast<size_t>(key)].name; }
AttrKind attr_kind(AttrKey key) { return kAttrs[static_cast<size_t>(key)].kind; }

bool attr_from_name(std::string_view name, AttrKey* key) {
  for (size_t i = 0; i < kAttrs.size(); ++i) {
    if (kAttrs[i].name == name) {
      *key = static_cast<AttrKey>(i);
      return true;
    }
  }
  return false;
}

Attrs& Attrs::set(AttrKey key, AttrValue value) {
  auto it =
      std::lower_bound(items_.begin(), items_.end(), key, [](const auto& item, AttrKey k) { return item.first < k; });
  if (it != items_.end() && it->first == key)
    it->second = std::move(value);
  else
    items_.insert(it, {key, std::move(value)});
  return *this;
}

bool Attrs::has(AttrKey key) const {
  return std::any_of(items_.begin(), items_.end(), [key](const auto& item) { return item.first == key; });
}

const AttrValue& Attrs::get(AttrKey key) const {
  for (const auto& item : items_)
    if (item.first == key) return item.second;
  throw Error("[ir] missing attribute '" + std::string(attr_name(key)) + "'");
}

int64_t Attrs::get_int(AttrKey key) const {
  const auto* v = std::get_if<int64_t>(&get(key));
  if (!v) throw Error("[ir] attribute '" + std::string(attr_name(key)) + "' is not an integer");
  return *v;
}

double Attrs::get_float(AttrKey key) const {
  const auto* v = std::get_if<double>(&get(key));
  if (!v) throw Error("[ir] attribute '" + std::string(attr_name(key)) + "' is not a number");
  return *v;
}

const std::vector<int64_t>& Attrs::get_ints(AttrKey key) const {
  const auto* v = std::get_if<std::vector<int64_t>>(&get(key));
  if (!v) throw Error("[ir] attribute '" + std::string(attr_name(key)) + "' is not a list");
  return *v;
}

const std::string& Attrs::get_string(AttrKey key) const {
  const auto* v = std::get_if<std::string>(&get(key));
  if (!v) throw Error("[ir] attribute '" + std::string(attr_name(key)) + "' is not a string");
  return *v;
}

DType Attrs::get_dtype(AttrKey key) const {
  int64_t v = get_int(key);
  if (v < 0 || v > static_cast<int64_t>(DType::bool_)) throw Error("[ir] attribute 'dtype' is not a dtype");
  return static_cast<DType>(v);
}

namespace {
uint64_t hash_int_item(uint64_t h, AttrKey key, int64_t value) {
  return hash_mix(hash_mix(h, static_cast<uint64_t>(key)), static_cast<uint64_t>(value));
}
}  // namespace

uint64_t Attrs::hash() const {
  uint64_t h = items_.size();
  for (const auto& [key, value] : items_) {
    if (const auto* i = std::get_if<int64_t>(&value)) {
      h = hash_int_item(h, key, *i);
      continue;
    }
    h = hash_mix(h, static_cast<uint64_t>(key));
    if (const auto* d = std::get_if<double>(&value)) {
      h = hash_double(h, *d);
    } else if (const auto* text = std::get_if<std::string>(&value)) {
      h = hash_mix(h, text->size());
      for (char c : *text) h = hash_mix(h, static_cast<unsigned char>(c));
    } else {
      const auto& list = std::get<std::vector<int64_t>>(value);
      h = hash_mix(h, list.size());
      for (int64_t x : list) h = hash_mix(h, static_cast<uint64_t>(x));
    }
  }
  return h;
}

uint64_t Attrs::hash_of_int(AttrKey key, int64_t value) { return hash_int_item(1, key, value); }

bool Attrs::operator==(const Attrs& other) const {
  if (items_.size() != other.items_.size()) return false;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (items_[i].first != other.items_[i].first) return false;
    const AttrValue& a = items_[i].second;
    const AttrValue& b = other.items_[i].second;
    if (a.index() != b.index()) return false;
    // Compare doubles by bits so that NaN attributes compare equal to themselves.
    if (const auto* da = std::get_if<double>(&a)) {
      if (hash_double(0, *da) != hash_double(0, std::get<double>(b))) return false;
    } else if (a != b) {
      return false;
    }
  }
  return true;
}

}  // namespace xlite::ir
