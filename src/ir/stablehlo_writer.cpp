#include "ir/stablehlo_writer.h"

#include <bit>
#include <cstdio>

#include "core/half.h"

namespace xlite::ir::stablehlo {
namespace {

std::string_view element_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "ui8";
    case DType::bool_: return "i1";
  }
  return "?";
}

std::string hex(uint64_t bits, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llX", digits, static_cast<unsigned long long>(bits));
  return buf;
}

std::string_view comparison_type(DType dtype) {
  if (is_floating(dtype)) return "FLOAT";
  return dtype == DType::u8 || dtype == DType::bool_ ? "UNSIGNED" : "SIGNED";
}

}  // namespace

std::string tensor_type(const Shape& shape, DType dtype) {
  std::string s = "tensor<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  return s.append(element_type(dtype)) + ">";
}

std::string literal(double value, DType dtype) {
  switch (dtype) {
    case DType::f32: return hex(std::bit_cast<uint32_t>(static_cast<float>(value)), 8);
    case DType::f64: return hex(std::bit_cast<uint64_t>(value), 16);
    case DType::f16: return hex(float_to_f16(static_cast<float>(value)), 4);
    case DType::bf16: return hex(float_to_bf16(static_cast<float>(value)), 4);
    case DType::bool_: return value != 0 ? "true" : "false";
    case DType::i32:
    case DType::i64:
    case DType::u8: return std::to_string(static_cast<int64_t>(value));
  }
  return "?";
}

std::string i64_list(std::span<const int64_t> values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

std::string string_literal(std::string_view text) {
  std::string s = "\"";
  for (unsigned char c : text) {
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
      s += hex(c, 2).replace(0, 2, "\\");
    else
      s += static_cast<char>(c);
  }
  return s + "\"";
}

std::string i64_array(std::span<const int64_t> values) {
  std::string s = "array<i64";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : ": ") + std::to_string(values[i]);
  return s + ">";
}

std::string Writer::fresh_name() { return "%v" + std::to_string((*next_)++); }

std::string Writer::signature(const std::vector<Value>& operands, std::span<const Value> results) const {
  std::string s = "(";
  for (size_t i = 0; i < operands.size(); ++i) s += (i ? ", " : "") + tensor_type(operands[i].shape, operands[i].dtype);
  s += ") -> ";
  if (results.size() != 1) s += "(";
  for (size_t i = 0; i < results.size(); ++i) s += (i ? ", " : "") + tensor_type(results[i].shape, results[i].dtype);
  if (results.size() != 1) s += ")";
  return s;
}

void Writer::line(std::string_view text) { text_.append(indent_, ' ').append(text) += '\n'; }
void Writer::comment(std::string_view text) { line("// " + std::string(text)); }

namespace {
std::string call(std::string_view name, const std::vector<Value>& operands, std::string_view properties) {
  std::string s = "\"" + std::string(name) + "\"(";
  for (size_t i = 0; i < operands.size(); ++i) s += (i ? ", " : "") + operands[i].name;
  s += ")";
  if (!properties.empty()) s += " <{" + std::string(properties) + "}>";
  return s;
}
}  // namespace

Value Writer::op(std::string_view name, const std::vector<Value>& operands, const Shape& shape, DType dtype,
                 std::string_view properties) {
  Value result{fresh_name(), shape, dtype};
  line(result.name + " = " + call(name, operands, properties) + " : " +
       signature(operands, std::span<const Value>(&result, 1)));
  return result;
}

std::vector<Value> Writer::op_results(std::string_view name, const std::vector<Value>& operands,
                                      std::vector<Value> results, std::string_view properties) {
  const std::string base = fresh_name();
  for (size_t i = 0; i < results.size(); ++i) results[i].name = base + "#" + std::to_string(i);
  line(base + ":" + std::to_string(results.size()) + " = " + call(name, operands, properties) + " : " +
       signature(operands, results));
  return results;
}

std::vector<Value> Writer::op_with_region(
    std::string_view name, const std::vector<Value>& operands, std::vector<Value> results, std::string_view properties,
    const std::vector<DType>& block_dtypes,
    const std::function<std::vector<Value>(Writer&, std::span<const Value>)>& body) {
  const std::string base = fresh_name();
  for (size_t i = 0; i < results.size(); ++i)
    results[i].name = results.size() == 1 ? base : base + "#" + std::to_string(i);
  Writer block(indent_ + 4);
  block.next_ = next_;
  std::vector<Value> arguments;
  std::string header = "^bb0(";
  for (size_t i = 0; i < block_dtypes.size(); ++i) {
    arguments.push_back({block.fresh_name(), {}, block_dtypes[i]});
    header += (i ? ", " : "") + arguments.back().name + ": " + tensor_type({}, block_dtypes[i]);
  }
  block.text_.append(indent_ + 2, ' ').append(header) += "):\n";
  const std::vector<Value> yielded = body(block, arguments);
  block.line(call("stablehlo.return", yielded, "") + " : " + signature(yielded, {}));
  const std::string lhs = results.size() == 1 ? base : base + ":" + std::to_string(results.size());
  line(lhs + " = " + call(name, operands, properties) + " ({");
  text_ += block.text_;
  line("}) : " + signature(operands, results));
  return results;
}

Value Writer::constant_literal(const std::string& literal, DType dtype) {
  return op("stablehlo.constant", {}, {}, dtype, "value = dense<" + literal + "> : " + tensor_type({}, dtype));
}

Value Writer::constant(double value, DType dtype) { return constant_literal(literal(value, dtype), dtype); }

Value Writer::broadcast(const Value& scalar, const Shape& shape) {
  if (shape.empty()) return scalar;
  return op("stablehlo.broadcast_in_dim", {scalar}, shape, scalar.dtype, "broadcast_dimensions = array<i64>");
}

Value Writer::splat(double value, DType dtype, const Shape& shape) { return broadcast(constant(value, dtype), shape); }

Value Writer::convert(const Value& x, DType dtype) {
  if (x.dtype == dtype) return x;
  return op("stablehlo.convert", {x}, x.shape, dtype);
}

Value Writer::compare(const Value& a, const Value& b, std::string_view direction) {
  return op("stablehlo.compare", {a, b}, a.shape, DType::bool_,
            "compare_type = #stablehlo<comparison_type " + std::string(comparison_type(a.dtype)) +
                ">, comparison_direction = #stablehlo<comparison_direction " + std::string(direction) + ">");
}

Value Writer::select(const Value& condition, const Value& a, const Value& b) {
  return op("stablehlo.select", {condition, a, b}, a.shape, a.dtype);
}

Value Writer::reshape(const Value& x, const Shape& shape) {
  if (x.shape == shape) return x;
  return op("stablehlo.reshape", {x}, shape, x.dtype);
}

Value Writer::same(std::string_view name, const std::vector<Value>& operands) {
  return op(name, operands, operands[0].shape, operands[0].dtype);
}

}  // namespace xlite::ir::stablehlo
