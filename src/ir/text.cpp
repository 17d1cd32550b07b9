// The text form of a graph: printing and parsing. Printing then parsing gives back the same graph and hash.
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ir/graph.h"
#include "xlite/error.h"

namespace xlite::ir {
namespace {

// The bits of a NaN below its sign and exponent, and those of the NaN that std::nan("") makes.
constexpr uint64_t kMantissaBits = (uint64_t{1} << 52) - 1;
constexpr uint64_t kQuietNanMantissa = uint64_t{1} << 51;

// Every double prints so that parsing gives back its bits: %.17g for finite values (subnormals and -0.0
// included), and for a NaN its sign and, when it is not the usual quiet NaN, its payload
// ("-nan", "nan_0x4000000000001"): a graph printed by a NaN check must parse back to the same graph.
std::string format_double(double v) {
  if (std::isnan(v)) {
    const uint64_t bits = std::bit_cast<uint64_t>(v);
    std::string s = std::signbit(v) ? "-nan" : "nan";
    if ((bits & kMantissaBits) != kQuietNanMantissa) {
      char payload[24];
      std::snprintf(payload, sizeof payload, "_0x%llx", static_cast<unsigned long long>(bits & kMantissaBits));
      s += payload;
    }
    return s;
  }
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";  // keep floats visibly floats
  return s;
}

// The inverse of format_double for NaNs; nothing for any other word.
std::optional<double> parse_nan(std::string_view w) {
  const bool negative = !w.empty() && w[0] == '-';
  if (negative) w.remove_prefix(1);
  if (w.substr(0, 3) != "nan") return std::nullopt;
  w.remove_prefix(3);
  uint64_t mantissa = kQuietNanMantissa;
  if (!w.empty()) {
    if (w.substr(0, 3) != "_0x") return std::nullopt;
    w.remove_prefix(3);
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), mantissa, 16);
    // A zero payload would spell infinity, not a NaN.
    if (ec != std::errc() || end != w.data() + w.size() || mantissa == 0 || mantissa > kMantissaBits)
      return std::nullopt;
  }
  const uint64_t bits = (negative ? uint64_t{1} << 63 : 0) | (uint64_t{0x7ff} << 52) | mantissa;
  return std::bit_cast<double>(bits);
}

// A string in double quotes. '"', '\\', '#' (which starts a comment) and bytes outside printable ASCII are
// escaped as \xHH, so that the text stays one line and reads back byte for byte.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '#') {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\x%02x", c);
      out += escape;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string format_attr(AttrKey key, const AttrValue& value) {
  std::string s = std::string(attr_name(key)) + "=";
  switch (attr_kind(key)) {
    case AttrKind::Int: return s + std::to_string(std::get<int64_t>(value));
    case AttrKind::Bool: return s + (std::get<int64_t>(value) ? "true" : "false");
    case AttrKind::Float: return s + format_double(std::get<double>(value));
    case AttrKind::DTypeName: return s + std::string(dtype_name(static_cast<DType>(std::get<int64_t>(value))));
    case AttrKind::Ints: return s + shape_str(std::get<std::vector<int64_t>>(value));
    case AttrKind::String: return s + quoted(std::get<std::string>(value));
  }
  return s;
}

// A cursor over one line of text.
using ValueNames = std::unordered_map<std::string, int32_t>;

// The integer a whole word spells, or nullopt.
std::optional<int64_t> whole_integer(std::string_view w) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
  if (ec != std::errc() || end != w.data() + w.size()) return std::nullopt;
  return v;
}

class Cursor {
 public:
  Cursor(std::string_view text, int line) : text_(text), line_(line) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("[parse_graph] line " + std::to_string(line_) + ": " + what + " near '" +
                std::string(text_.substr(pos_, 20)) + "'");
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool try_eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void eat(char c) {
    if (!try_eat(c)) fail(std::string("expected '") + c + "'");
  }
  std::string_view word() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
                                   text_[pos_] == '.' || text_[pos_] == '-' || text_[pos_] == '+'))
      ++pos_;
    if (start == pos_) fail("expected a word");
    return text_.substr(start, pos_ - start);
  }
  int64_t integer() {
    std::optional<int64_t> v = whole_integer(word());
    if (!v) fail("expected an integer");
    return *v;
  }
  double number() {
    std::string w(word());
    if (std::optional<double> nan = parse_nan(w)) return *nan;
    if (w == "inf") return INFINITY;
    if (w == "-inf") return -INFINITY;
    char* end = nullptr;
    double v = std::strtod(w.c_str(), &end);
    if (end != w.c_str() + w.size()) fail("expected a number");
    return v;
  }
  std::string quoted_string() {
    eat('"');
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) fail("a string is not closed");
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      unsigned value = 0;
      if (pos_ + 3 > text_.size() || text_[pos_] != 'x' ||
          std::from_chars(text_.data() + pos_ + 1, text_.data() + pos_ + 3, value, 16).ptr != text_.data() + pos_ + 3)
        fail("expected \\xHH in a string");
      pos_ += 3;
      out += static_cast<char>(value);
    }
  }
  std::vector<int64_t> int_list() {
    eat('[');
    std::vector<int64_t> list;
    if (try_eat(']')) return list;
    do list.push_back(integer());
    while (try_eat(','));
    eat(']');
    return list;
  }
  // %N names instruction N; %name (a word that does not start with a digit) names the instruction that
  // defined it, so hand-written text can say %x and %weights.
  int32_t value_ref(size_t defined, const ValueNames& names) {
    eat('%');
    const std::string_view w = word();
    if (!std::isdigit(static_cast<unsigned char>(w[0]))) {
      auto it = names.find(std::string(w));
      if (it == names.end()) fail("%" + std::string(w) + " is not defined yet");
      return it->second;
    }
    std::optional<int64_t> v = whole_integer(w);
    if (!v) fail("expected an integer or a name after '%'");
    if (*v < 0 || static_cast<size_t>(*v) >= defined) fail("%" + std::to_string(*v) + " is not defined yet");
    return static_cast<int32_t>(*v);
  }
  // The name an instruction defines: its number, or a new name.
  void define_value(size_t index, ValueNames& names) {
    eat('%');
    const std::string_view w = word();
    if (std::isdigit(static_cast<unsigned char>(w[0]))) {
      if (whole_integer(w) != static_cast<int64_t>(index)) fail("instructions must be numbered in order");
      return;
    }
    if (!names.emplace(std::string(w), static_cast<int32_t>(index)).second)
      fail("%" + std::string(w) + " is defined twice");
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_;
};

AttrValue parse_attr_value(Cursor& c, AttrKind kind) {
  switch (kind) {
    case AttrKind::Int: return c.integer();
    case AttrKind::Bool: {
      std::string_view w = c.word();
      if (w != "true" && w != "false") c.fail("expected true or false");
      return static_cast<int64_t>(w == "true");
    }
    case AttrKind::Float: return c.number();
    case AttrKind::DTypeName: try { return static_cast<int64_t>(dtype_from_name(c.word()));
      } catch (const Error&) {
        c.fail("unknown dtype");
      }
    case AttrKind::Ints: return c.int_list();
    case AttrKind::String: return c.quoted_string();
  }
  c.fail("bad attribute");
}

void parse_instr(Cursor& c, Graph& graph, ValueNames& names) {
  c.define_value(graph.instrs.size(), names);
  c.eat('=');
  Instr instr;
  if (!op_from_name(c.word(), &instr.op)) c.fail("unknown op");
  c.eat('(');
  if (!c.try_eat(')')) {
    do {
      if (c.peek('%')) {
        instr.operands.push_back(c.value_ref(graph.instrs.size(), names));
      } else {
        AttrKey key;
        if (!attr_from_name(c.word(), &key)) c.fail("unknown attribute");
        c.eat('=');
        instr.attrs.set(key, parse_attr_value(c, attr_kind(key)));
      }
    } while (c.try_eat(','));
    c.eat(')');
  }
  c.eat(':');
  try {
    instr.dtype = dtype_from_name(c.word());
  } catch (const Error&) {
    c.fail("unknown dtype");
  }
  instr.shape = c.int_list();
  if (c.try_eat('@')) {
    if (c.word() != "cpu") c.fail("unknown device kind");
    c.eat(':');
    const int64_t index = c.integer();
    if (index < 0 || index >= kMaxDevices) c.fail("device index out of range");
    instr.device = Device{DeviceKind::cpu, static_cast<int>(index)};
  }
  if (instr.op == OpId::parameter) ++graph.num_parameters;
  graph.instrs.push_back(std::move(instr));
}

}  // namespace

std::string instr_text(const Graph& graph, size_t i) {
  const Instr& instr = graph.instrs[i];
  std::string out = "%" + std::to_string(i) + " = " + std::string(op_name(instr.op)) + "(";
  bool first = true;
  for (int32_t o : instr.operands) {
    out += (first ? "%" : ", %") + std::to_string(o);
    first = false;
  }
  for (const auto& [key, value] : instr.attrs.items()) {
    out += (first ? "" : ", ") + format_attr(key, value);
    first = false;
  }
  out += ") : " + std::string(dtype_name(instr.dtype)) + shape_str(instr.shape);
  return instr.device == Device{} ? out : out + " @" + instr.device.str();
}

std::string to_text(const Graph& graph) {
  std::string out;
  for (size_t i = 0; i < graph.instrs.size(); ++i) out += instr_text(graph, i) + "\n";
  out += "return";
  for (size_t i = 0; i < graph.outputs.size(); ++i) out += (i ? ", %" : " %") + std::to_string(graph.outputs[i]);
  return out + "\n";
}

Graph parse_graph(std::string_view text) {
  Graph graph;
  ValueNames names;
  bool returned = false;
  int line_number = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    Cursor c(line, line_number);
    if (c.at_end()) continue;
    if (returned) c.fail("nothing may follow return");
    if (line.find("return") != std::string_view::npos && line.find('=') == std::string_view::npos) {
      if (c.word() != "return") c.fail("expected return");
      if (!c.at_end()) {
        do graph.outputs.push_back(c.value_ref(graph.instrs.size(), names));
        while (c.try_eat(','));
      }
      if (!c.at_end()) c.fail("unexpected text after return");
      returned = true;
      continue;
    }
    parse_instr(c, graph, names);
    if (!c.at_end()) c.fail("unexpected text after instruction");
  }
  if (!returned) throw Error("[parse_graph] missing 'return' line");
  verify(graph);
  return graph;
}

}  // namespace xlite::ir
