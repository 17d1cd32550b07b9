#pragma once
// Writes the body of one StableHLO function in MLIR's generic op syntax
// (`%v3 = "stablehlo.add"(%v1, %v2) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>`), which every
// MLIR parser of the dialect reads whatever its version's pretty syntax. It knows types, literals and
// regions; which ops a graph becomes is ir/stablehlo.cpp's business.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "xlite/dtype.h"

namespace xlite::ir::stablehlo {

// An SSA value of the function: its name ("%v12", "%arg0", "%v7#1") and its tensor type.
struct Value {
  std::string name;
  Shape shape;
  DType dtype;
};

// "tensor<2x3xf32>", "tensor<i1>".
std::string tensor_type(const Shape& shape, DType dtype);
// A scalar of the dtype as a dense literal: hex bits for floats (exact, NaN and infinities included),
// decimal for integers, true/false for bool. The value is converted as a backend stores it.
std::string literal(double value, DType dtype);
// "array<i64: 1, 2>"
std::string i64_array(std::span<const int64_t> values);
// "[1, 2]"
std::string i64_list(std::span<const int64_t> values);
// An MLIR string literal: '"' and '\\' and bytes outside printable ASCII as \XX.
std::string string_literal(std::string_view text);

class Writer {
 public:
  explicit Writer(int indent) : indent_(indent) {}

  // One op with one result. `properties` is the text inside <{...}>, empty for none.
  Value op(std::string_view name, const std::vector<Value>& operands, const Shape& shape, DType dtype,
           std::string_view properties = "");
  // One op with several results, named base#0, base#1, ... (`results` give their types).
  std::vector<Value> op_results(std::string_view name, const std::vector<Value>& operands, std::vector<Value> results,
                                std::string_view properties);
  // One op whose single region has one block over scalar arguments of `block_dtypes`; `body` writes the
  // block and returns what it yields. `results` are the op's result types (names come back filled in).
  std::vector<Value> op_with_region(std::string_view name, const std::vector<Value>& operands,
                                    std::vector<Value> results, std::string_view properties,
                                    const std::vector<DType>& block_dtypes,
                                    const std::function<std::vector<Value>(Writer&, std::span<const Value>)>& body);

  Value constant(double value, DType dtype);                        // a scalar
  Value constant_literal(const std::string& literal, DType dtype);  // a scalar written as `literal`
  Value splat(double value, DType dtype, const Shape& shape);       // a constant of any shape
  Value broadcast(const Value& scalar, const Shape& shape);         // a scalar to a shape
  Value convert(const Value& x, DType dtype);
  // direction: EQ, NE, LT, LE, GT, GE; the comparison type follows the operands' dtype.
  Value compare(const Value& a, const Value& b, std::string_view direction);
  Value select(const Value& condition, const Value& a, const Value& b);
  Value reshape(const Value& x, const Shape& shape);
  // An elementwise op whose result has the first operand's shape and dtype.
  Value same(std::string_view name, const std::vector<Value>& operands);

  void comment(std::string_view text);
  void line(std::string_view text);
  const std::string& text() const { return text_; }

 private:
  std::string fresh_name();
  std::string signature(const std::vector<Value>& operands, std::span<const Value> results) const;

  int indent_;
  std::string text_;
  // Shared by the writers of nested regions, so that no name is defined twice in the function.
  std::shared_ptr<int64_t> next_ = std::make_shared<int64_t>(0);
};

}  // namespace xlite::ir::stablehlo
