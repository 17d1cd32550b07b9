#include "ir/kernel_registry.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>

#include "core/runtime_context.h"
#include "ir/sizes.h"
#include "xlite/error.h"

namespace xlite {
namespace {

struct Registry final : RuntimeState {
  mutable std::mutex mutex;
  // Kernels are never removed, so references handed out stay valid.
  std::map<std::string, std::unique_ptr<const kernels::Kernel>, std::less<>> kernels;
  std::string describe() const override {
    std::lock_guard lock(mutex);
    std::string names;
    for (const auto& [name, kernel] : kernels) names += (names.empty() ? "" : ", ") + name;
    return std::to_string(kernels.size()) + " kernels" + (names.empty() ? "" : ": " + names);
  }
};
bool is_name(std::string_view name, bool dots) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (dots && c == '.'))) return false;
  return true;
}

Registry& registry_state() { return runtime_context::state<Registry>("custom kernels"); }
Registry& registry() {
  static std::once_flag builtins;
  std::call_once(builtins, ir::register_builtin_kernels);
  return registry_state();
}

void add(Registry& r, kernels::Kernel kernel) {
  if (!is_name(kernel.name, true))
    throw Error("[register_kernel] '" + kernel.name +
                "' is not a kernel name (a letter or '_', then letters, digits, '_' and '.')");
  if (!kernel.shape || !kernel.cpu)
    throw Error("[register_kernel] kernel '" + kernel.name + "' needs a shape rule and a CPU implementation");
  std::lock_guard lock(r.mutex);
  const std::string name = kernel.name;
  if (!r.kernels.emplace(name, std::make_unique<const kernels::Kernel>(std::move(kernel))).second)
    throw Error("[register_kernel] a kernel named '" + name + "' is registered already");
}

[[noreturn]] void attr_error(const std::string& kernel, const std::string& name, const char* wanted) {
  throw Error("[" + kernel + "] attribute '" + name + "' " + wanted);
}

}  // namespace

namespace kernels {

void register_kernel(Kernel kernel) { add(registry(), std::move(kernel)); }

bool is_registered(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.kernels.count(name) != 0;
}

int64_t AttrReader::int_attr(const std::string& name) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) attr_error(kernel_, name, "is missing");
  if (const auto* v = std::get_if<int64_t>(&it->second)) return *v;
  attr_error(kernel_, name, "is not an integer");
}

double AttrReader::float_attr(const std::string& name) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) attr_error(kernel_, name, "is missing");
  if (const auto* v = std::get_if<double>(&it->second)) return *v;
  if (const auto* v = std::get_if<int64_t>(&it->second)) return static_cast<double>(*v);
  attr_error(kernel_, name, "is not a number");
}

const std::vector<int64_t>& AttrReader::ints_attr(const std::string& name) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) attr_error(kernel_, name, "is missing");
  if (const auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  attr_error(kernel_, name, "is not a list of integers");
}

const std::string& AttrReader::string_attr(const std::string& name) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) attr_error(kernel_, name, "is missing");
  if (const auto* v = std::get_if<std::string>(&it->second)) return *v;
  attr_error(kernel_, name, "is not a string");
}

}  // namespace kernels

namespace ir {

void add_builtin_kernel(kernels::Kernel kernel) { add(registry_state(), std::move(kernel)); }

const kernels::Kernel& kernel_named(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.kernels.find(name);
  if (it == r.kernels.end())
    throw Error("[custom_call] no kernel named '" + std::string(name) +
                "' is registered (kernels::register_kernel registers one)");
  return *it->second;
}

namespace {

// A double as text that reads back to its bits, always with a '.', an exponent, "inf" or "nan", so that it
// never reads back as an integer.
std::string float_text(double v) {
  std::string text = number_text(v);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

class AttrParser {
 public:
  explicit AttrParser(std::string_view text) : text_(text) {}

  kernels::Attrs parse() {
    kernels::Attrs attrs;
    skip_space();
    if (pos_ == text_.size()) return attrs;
    while (true) {
      std::string name = word();
      if (!is_name(name, false)) fail("expected an attribute name");
      skip_space();
      expect('=');
      kernels::Attr value = parse_value();
      if (!attrs.emplace(std::move(name), std::move(value)).second) fail("an attribute is repeated");
      skip_space();
      if (pos_ == text_.size()) return attrs;
      expect(',');
      skip_space();
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("[custom_call] kernel attributes \"" + std::string(text_) + "\": " + what + " at offset " +
                std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  void expect(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string word() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
                                   text_[pos_] == '.' || text_[pos_] == '-' || text_[pos_] == '+'))
      ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  int64_t integer(const std::string& w) const {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (w.empty() || ec != std::errc() || end != w.data() + w.size()) fail("expected an integer");
    return v;
  }
  kernels::Attr parse_value() {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '\'') {
      ++pos_;
      std::string s;
      while (true) {
        if (pos_ >= text_.size()) fail("a string is not closed");
        char c = text_[pos_++];
        if (c == '\'') return s;
        if (c == '\\') {
          if (pos_ >= text_.size()) fail("a string is not closed");
          c = text_[pos_++];
        }
        s += c;
      }
    }
    if (pos_ < text_.size() && text_[pos_] == '[') {
      ++pos_;
      std::vector<int64_t> list;
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return list;
      }
      while (true) {
        list.push_back(integer(word()));
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == ']') {
          ++pos_;
          return list;
        }
        expect(',');
      }
    }
    const std::string w = word();
    if (w.find_first_of(".en") == std::string::npos) return integer(w);
    if (w == "inf" || w == "+inf") return INFINITY;
    if (w == "-inf") return -INFINITY;
    if (w == "nan" || w == "-nan") return w[0] == '-' ? -NAN : NAN;
    double v = 0;
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || end != w.data() + w.size()) fail("expected a number");
    return v;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

std::string encode_kernel_attrs(const kernels::Attrs& attrs) {
  std::string text;
  for (const auto& [name, value] : attrs) {
    if (!is_name(name, false))
      throw Error("[custom_call] '" + name + "' is not an attribute name (a letter or '_', then letters, digits, '_')");
    text += (text.empty() ? "" : ", ") + name + "=";
    if (const auto* i = std::get_if<int64_t>(&value)) {
      text += std::to_string(*i);
    } else if (const auto* d = std::get_if<double>(&value)) {
      text += float_text(*d);
    } else if (const auto* list = std::get_if<std::vector<int64_t>>(&value)) {
      text += "[";
      for (size_t k = 0; k < list->size(); ++k) text += (k ? ", " : "") + std::to_string((*list)[k]);
      text += "]";
    } else {
      text += quote(std::get<std::string>(value));
    }
  }
  return text;
}

kernels::Attrs decode_kernel_attrs(std::string_view text) { return AttrParser(text).parse(); }

PackedOutputs pack_outputs(std::vector<kernels::TensorType> types) {
  PackedOutputs packed;
  for (const kernels::TensorType& t : types) {
    packed.offsets.push_back(packed.bytes);
    const int64_t end = packed.bytes + t.bytes();
    packed.bytes = (end + 63) / 64 * 64;
  }
  packed.types = std::move(types);
  return packed;
}

std::vector<kernels::TensorType> custom_call_outputs(const Attrs& attrs, std::span<const OperandType> operands) {
  const kernels::Kernel& kernel = kernel_named(attrs.get_string(AttrKey::kernel));
  const kernels::Attrs args = decode_kernel_attrs(attrs.get_string(AttrKey::args));
  const std::vector<kernels::TensorType> inputs = kernel_types(operands);
  const std::string prefix = "[" + kernel.name + "] ";
  std::vector<kernels::TensorType> outputs;
  try {
    outputs = kernel.shape(inputs, args);
  } catch (const Error& e) {
    const std::string_view what = e.what();
    throw Error(what.starts_with(prefix) ? std::string(what) : prefix + std::string(what));
  } catch (const std::exception& e) {
    throw Error(prefix + "the shape rule failed: " + e.what());
  }
  if (outputs.empty()) throw Error(prefix + "the shape rule gave no outputs");
  for (const kernels::TensorType& t : outputs) {
    if (static_cast<unsigned>(t.dtype) > static_cast<unsigned>(DType::bool_))
      throw Error(prefix + "the shape rule gave an output of no known dtype");
    require_addressable(kernel.name, t.shape, t.dtype);
  }
  if (kernel.updates_input >= 0) {
    const auto updated = static_cast<size_t>(kernel.updates_input);
    if (updated >= inputs.size() || outputs.size() != 1 || outputs[0] != inputs[updated])
      throw Error(prefix + "updates input " + std::to_string(updated) + " in place, so its one output must have " +
                  (updated < inputs.size() ? "that input's type" : "the type of an input it was given"));
  }
  return outputs;
}

std::vector<kernels::TensorType> kernel_types(std::span<const OperandType> operands) {
  std::vector<kernels::TensorType> types;
  for (const OperandType& t : operands) types.push_back({t.shape, t.dtype});
  return types;
}

TypedShape custom_call_type(std::span<const kernels::TensorType> outputs) {
  if (outputs.size() == 1) return {outputs[0].shape, outputs[0].dtype};
  return {{pack_outputs({outputs.begin(), outputs.end()}).bytes}, DType::u8};
}

}  // namespace ir
}  // namespace xlite
