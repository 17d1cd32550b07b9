#include "testing/random_shape_rules.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <random>

#include "ir/node.h"
#include "ir/op_attrs.h"
#include "ir/sizes.h"
#include "testing/test_kernels.h"
#include "xlite/error.h"

namespace xlite::testing {
namespace {
using ir::AttrKey;
using ir::AttrKind;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  ShapeRuleCase make() {
    register_test_kernels();  // custom_call cases name them
    ShapeRuleCase c;
    c.op = static_cast<ir::OpId>(uniform(1, ir::kNumOps - 1));  // every op but parameter, which has no rule
    const ir::OpInfo& info = ir::op_info(c.op);
    const int arity = info.arity >= 0 ? info.arity : static_cast<int>(uniform(0, 4));
    const DType common = info.cls == ir::OpClass::Logical && chance(0.7) ? DType::bool_
                         : info.cls == ir::OpClass::Conv && chance(0.9)  ? DType::f32
                                                                         : dtype();
    for (int k = 0; k < arity; ++k) {
      // Most rules want operands of one type, or of the first one's rank: keep to that often.
      Shape s = k > 0 && chance(0.6) ? varied(c.shapes[0]) : shape();
      DType d = chance(info.cls == ir::OpClass::Conv ? 0.95 : 0.7) ? common : dtype();
      if (info.cls == ir::OpClass::Random && chance(0.8)) s = {}, d = DType::i64;
      if (info.cls == ir::OpClass::Select && k == 0 && chance(0.7)) d = DType::bool_;
      if (info.cls == ir::OpClass::Conv && chance(0.8)) {
        s = {dim(), 2, dim(), dim()};  // input [N, 2, H, W] and weight [O, 2, KH, KW], one group
        if (k == 1) s[0] = chance(0.5) ? 1 : dim();
      }
      if (k == 1 &&
          (info.cls == ir::OpClass::Gather || info.cls == ir::OpClass::IndexSelect ||
           info.cls == ir::OpClass::ScatterAdd) &&
          chance(0.8))
        d = DType::i64;
      c.shapes.push_back(addressable(std::move(s), d));
      c.dtypes.push_back(d);
    }
    const size_t rank = c.shapes.empty() ? static_cast<size_t>(uniform(0, 4)) : c.shapes[0].size();
    // The op's own attributes, and now and then one it does not take (which its schema refuses).
    std::vector<AttrKey> keys(ir::attr_schema(c.op).begin(), ir::attr_schema(c.op).end());
    if (chance(0.02)) keys.push_back(static_cast<AttrKey>(uniform(0, static_cast<int64_t>(AttrKey::count_) - 1)));
    for (AttrKey key : keys) {
      switch (ir::attr_kind(key)) {
        case AttrKind::Int: c.attrs.set_int(key, key == AttrKey::dim ? small_or_extreme(rank) : value()); break;
        case AttrKind::Bool: c.attrs.set_bool(key, chance(0.5)); break;
        case AttrKind::Float: c.attrs.set_float(key, number()); break;
        case AttrKind::DTypeName: c.attrs.set_dtype(key, dtype()); break;
        case AttrKind::Ints: c.attrs.set_ints(key, ints(key, rank, info.cls == ir::OpClass::Conv, c.shapes)); break;
        // Kernel names that no one registered, and attribute texts well and badly formed.
        case AttrKind::String:
          c.attrs.set_string(key, pick({"", "no.such.kernel", "testing.axpy", "testing.row_stats", "alpha=0.5",
                                        "a=[1, 2], b='x'", "=", "a=", "a='"}));
          break;
      }
    }
    if (info.cls == ir::OpClass::Conv && chance(0.8)) c.attrs.set_int(AttrKey::groups, 1);
    return c;
  }

 private:
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  template <class T, size_t N>
  T pick(const T (&values)[N]) {
    return values[uniform(0, N - 1)];
  }

  DType dtype() { return static_cast<DType>(uniform(0, static_cast<int64_t>(DType::bool_))); }

  int64_t extreme() {
    static constexpr int64_t kExtremes[] = {int64_t{1} << 31,
                                            (int64_t{1} << 31) - 1,
                                            int64_t{1} << 32,
                                            int64_t{1} << 40,
                                            int64_t{1} << 61,
                                            int64_t{1} << 62,
                                            kMax / 2 + 1,
                                            kMax - 1,
                                            kMax};
    return pick(kExtremes);
  }
  int64_t dim() { return chance(0.75) ? pick({1, 1, 2, 3, 0, 7}) : extreme(); }
  // An attribute integer: small ones pass the rules' range checks, the others probe their arithmetic.
  int64_t value() {
    if (chance(0.6)) return uniform(-1, 3);
    return chance(0.5) ? extreme() : pick({kMin, kMin + 1, -extreme()});
  }
  int64_t small_or_extreme(size_t rank) { return chance(0.8) ? uniform(0, static_cast<int64_t>(rank)) : value(); }
  double number() {
    static constexpr double kNumbers[] = {0,
                                          1,
                                          -1,
                                          0.5,
                                          255,
                                          256,
                                          -2147483648.0,
                                          2147483648.0,
                                          2e40,
                                          0x1p63,
                                          -0x1p63,
                                          std::numeric_limits<double>::infinity(),
                                          -std::numeric_limits<double>::infinity(),
                                          std::numeric_limits<double>::quiet_NaN()};
    return pick(kNumbers);
  }

  Shape shape() {
    Shape s(uniform(0, 4));
    for (int64_t& d : s) d = dim();
    return s;
  }
  // The same rank, one dim perhaps changed: concat parts, gather indices, matching operands.
  Shape varied(Shape s) {
    if (!s.empty() && chance(0.5)) s[uniform(0, s.size() - 1)] = dim();
    return s;
  }
  // Real operands always are: shrink huge dims until the shape fits.
  static Shape addressable(Shape s, DType d) {
    for (size_t k = 0; !ir::addressable(s, d) && k < s.size(); ++k)
      if (s[k] > 3 || s[k] < 0) s[k] = 3;
    return s;
  }

  std::vector<int64_t> ints(AttrKey key, size_t rank, bool conv, const std::vector<Shape>& shapes) {
    // A conv's stride, dilation and padding have two values; other ops' lists have one per dim.
    const bool spatial = key == AttrKey::stride || key == AttrKey::dilation || key == AttrKey::lo || key == AttrKey::hi;
    const size_t n = chance(0.1) ? static_cast<size_t>(uniform(0, 5)) : spatial && conv ? 2 : rank;
    std::vector<int64_t> v(n);
    switch (key) {
      case AttrKey::perm:
      case AttrKey::dims:
        // Distinct, increasing dims pass the checks of reduce, flip, broadcast and transpose.
        for (size_t k = 0; k < n; ++k) v[k] = chance(0.9) ? static_cast<int64_t>(k) : value();
        if (key == AttrKey::dims && chance(0.5)) v.resize(uniform(0, static_cast<int64_t>(n)));
        break;
      case AttrKey::shape:
        // A target shape: the operand's dims (broadcast, reshape) or any, at any rank.
        if (!shapes.empty() && chance(0.5)) {
          v = varied(shapes[0]);
          if (chance(0.3)) v.insert(v.begin(), dim());
        } else {
          v.resize(uniform(0, 4));
          for (int64_t& d : v) d = chance(0.95) ? dim() : value();
        }
        break;
      case AttrKey::limit:
        for (size_t k = 0; k < n; ++k)
          v[k] = !shapes.empty() && k < shapes[0].size() && chance(0.7) ? shapes[0][k] : value();
        break;
      default:
        // Positive strides and dilations, and pads, pass the checks before a conv's arithmetic.
        for (int64_t& x : v) x = spatial && chance(0.8) ? uniform(1, 3) : value();
    }
    return v;
  }

  std::mt19937_64 rng_;
};

std::string describe(const ShapeRuleCase& c) {
  std::string s = std::string(ir::op_name(c.op)) + "(";
  for (size_t k = 0; k < c.shapes.size(); ++k)
    s += (k ? ", " : "") + std::string(dtype_name(c.dtypes[k])) + shape_str(c.shapes[k]);
  for (const auto& [key, value] : c.attrs.items()) {
    s += ", " + std::string(ir::attr_name(key)) + "=";
    if (ir::attr_kind(key) == AttrKind::DTypeName)
      s += dtype_name(c.attrs.get_dtype(key));
    else if (const auto* i = std::get_if<int64_t>(&value))
      s += std::to_string(*i);
    else if (const auto* f = std::get_if<double>(&value))
      s += ir::number_text(*f);
    else
      s += shape_str(std::get<std::vector<int64_t>>(value));
  }
  return s + ")";
}
// The result dims that rules compute with arithmetic, in 128 bits from an accepted case's operands and
// attributes: a rule that wrapped and still gave an addressable shape (pad once gave [2] for a huge
// padding) differs from these. Empty for the other classes.
std::vector<__int128> exact_dims(const ShapeRuleCase& c, const Shape& result) {
  const auto& a = c.attrs;
  std::vector<__int128> out(result.begin(), result.end());
  switch (ir::op_info(c.op).cls) {
    case ir::OpClass::Pad:
      for (size_t d = 0; d < out.size(); ++d)
        out[d] = static_cast<__int128>(c.shapes[0][d]) + a.get_ints(AttrKey::lo)[d] + a.get_ints(AttrKey::hi)[d];
      return out;
    case ir::OpClass::Concat: {
      const auto dim = static_cast<size_t>(a.get_int(AttrKey::dim));
      out[dim] = 0;
      for (const Shape& s : c.shapes) out[dim] += s[dim];
      return out;
    }
    case ir::OpClass::Slice:
      for (size_t d = 0; d < out.size(); ++d) {
        const __int128 extent = static_cast<__int128>(a.get_ints(AttrKey::limit)[d]) - a.get_ints(AttrKey::start)[d];
        const __int128 stride = a.get_ints(AttrKey::stride)[d];
        out[d] = (extent + stride - 1) / stride;
      }
      return out;
    case ir::OpClass::Conv:
      for (int k = 0; k < 2; ++k) {
        const __int128 padded =
            static_cast<__int128>(c.shapes[0][2 + k]) + a.get_ints(AttrKey::lo)[k] + a.get_ints(AttrKey::hi)[k];
        const __int128 span = static_cast<__int128>(a.get_ints(AttrKey::dilation)[k]) * (c.shapes[1][2 + k] - 1) + 1;
        out[2 + k] = (padded - span) / a.get_ints(AttrKey::stride)[k] + 1;
      }
      return out;
    default: return {};
  }
}
}  // namespace

ShapeRuleCase random_shape_rule_case(uint64_t seed) { return Generator(seed).make(); }

ShapeRuleOutcome check_shape_rule(const ShapeRuleCase& c) {
  std::vector<ir::OperandType> types;
  for (size_t k = 0; k < c.shapes.size(); ++k) types.push_back({c.shapes[k], c.dtypes[k]});
  ShapeRuleOutcome outcome;
  try {
    ir::TypedShape result = ir::infer_type(c.op, types, c.attrs);
    outcome.accepted = true;
    const std::vector<__int128> exact = exact_dims(c, result.shape);
    const bool wrapped = !exact.empty() && !std::equal(exact.begin(), exact.end(), result.shape.begin());
    if (wrapped || !ir::addressable(result.shape, result.dtype)) {
      outcome.ok = false;
      outcome.message = "gave " + std::string(dtype_name(result.dtype)) + shape_str(result.shape) +
                        (wrapped ? ", not what exact arithmetic gives," : ", which is not addressable,") + " for " +
                        describe(c);
    }
  } catch (const Error&) {
  } catch (const std::exception& e) {
    outcome.ok = false;
    outcome.message = std::string("threw a non-xlite exception (") + e.what() + ") for " + describe(c);
  }
  return outcome;
}

}  // namespace xlite::testing
