// Random well-typed, well-conditioned graphs and a two-backend comparison. See random_graph.h for the
// rules the generator keeps; the per-value facts it tracks are in Info below.
#include "testing/random_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <optional>
#include <random>
#include <utility>

#include "compiler/cache.h"
#include "core/elements.h"
#include "ir/kernel_registry.h"
#include "ir/node.h"
#include "ir/op_attrs.h"
#include "runtime/allocator.h"
#include "testing/test_kernels.h"
#include "xlite/error.h"

namespace xlite::testing {
namespace {
using ir::AttrKey;
using ir::Attrs;
using ir::OpId;

// Thrown by a generation step that cannot be built as drawn; the step is rolled back.
struct Reject {};

// What the generator knows about one value.
struct Info {
  // Every correct backend computes the same bits: leaves, data movement, neg/abs/relu/sign, max/min,
  // select, compare, floor/ceil/round, exact conversions, integer arithmetic, scaling by powers of two.
  // Float arithmetic, transcendentals, sums, products and dots are inexact. Only exact values reach
  // discontinuous ops. A 16-bit float value that is not exact is "tainted": it is only moved, selected,
  // max/min'd, converted to another 16-bit type or returned, so it never leaves the f16/bf16 tolerance.
  bool exact = true;
  // May hold NaN or an infinity (from a constant or pad value); such values only reach exact ops.
  bool special = false;
  // |finite element| <= bound. Integers: capped at the range of their type once they may wrap.
  double bound = 0;
  // The packed outputs of a custom call with several: read only by its custom_output instructions (its
  // padding bytes are never written).
  bool opaque = false;
};

// What a caller needs of an operand: exact, and/or clean (no NaN/inf, not a tainted 16-bit value).
struct Want {
  bool exact = false;
  bool clean = false;
};

double int_cap(DType d) {
  switch (d) {
    case DType::bool_: return 1;
    case DType::u8: return 255;
    case DType::i32: return 2147483648.0;
    default: return 9.3e18;
  }
}

// Float values stay well inside their range so that no backend can round one to an infinity.
double float_cap(DType d) { return d == DType::f16 ? 3e4 : d == DType::bf16 ? 1e6 : 1e8; }

class Generator {
 public:
  Generator(uint64_t seed, const RandomGraphOptions& options)
      : rng_(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull), opt_(options) {
    opt_.max_rank = std::clamp(opt_.max_rank, 0, 6);
    opt_.max_dim = std::max(opt_.max_dim, 1);
    opt_.max_instructions = std::max(opt_.max_instructions, 1);
    opt_.min_instructions = std::clamp(opt_.min_instructions, 1, opt_.max_instructions);
    opt_.max_outputs = std::max(opt_.max_outputs, 1);
    opt_.max_elements = std::max<int64_t>(opt_.max_elements, 1);
  }

  ir::Graph build() {
    const int target = static_cast<int>(uniform(opt_.min_instructions, opt_.max_instructions));
    for (int64_t n = uniform(1, 3); n > 0 && size() < target; --n) parameter(random_shape(), random_dtype());
    int failures = 0;
    while (size() < target && failures < 400) {
      const size_t mark = g_.instrs.size();
      const int64_t params = g_.num_parameters;
      bool ok = true;
      wild_index_ = false;
      try {
        step();
      } catch (const Reject&) {
        ok = false;
      }
      if (ok && wild_index_) must_output_.push_back(size() - 1);
      if (ok && size() > opt_.max_instructions) ok = false;
      if (!ok) {
        g_.instrs.resize(mark);
        info_.resize(mark);
        g_.num_parameters = params;
        std::erase_if(must_output_, [&](int32_t v) { return v >= static_cast<int32_t>(mark); });
        ++failures;
      }
    }
    while (size() < opt_.min_instructions) parameter({}, DType::f32);
    choose_outputs();
    shuffle_parameter_indices();
    return std::move(g_);
  }

 private:
  // ---- randomness (plain arithmetic on mt19937_64 so that a seed means the same graph everywhere) ----
  int64_t uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  double unit() { return static_cast<double>(rng_() >> 11) * 0x1p-53; }
  bool chance(double p) { return unit() < p; }
  template <class T>
  T choose(std::initializer_list<T> list) {
    return *(list.begin() + uniform(0, static_cast<int64_t>(list.size()) - 1));
  }
  template <class T>
  const T& choose(const std::vector<T>& v) {
    return v[uniform(0, static_cast<int64_t>(v.size()) - 1)];
  }
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[uniform(0, static_cast<int64_t>(i) - 1)]);
  }

  int size() const { return static_cast<int>(g_.instrs.size()); }
  const Shape& shape(int32_t v) const { return g_.instrs[v].shape; }
  DType dtype(int32_t v) const { return g_.instrs[v].dtype; }
  const Info& info(int32_t v) const { return info_[v]; }
  int rank(int32_t v) const { return static_cast<int>(shape(v).size()); }
  bool clean(int32_t v) const { return !info(v).special && !(is_16_bit_float(dtype(v)) && !info(v).exact); }

  int64_t random_dim() {
    double r = unit();
    if (r < 0.025) return 0;
    if (r < 0.26 || opt_.max_dim < 2) return std::min<int64_t>(1, opt_.max_dim);
    return uniform(2, opt_.max_dim);
  }

  int random_rank(int min_rank) {
    min_rank = std::min(min_rank, opt_.max_rank);
    static constexpr int kWeights[] = {2, 4, 5, 3, 2, 1, 1};
    int total = 0;
    for (int r = min_rank; r <= opt_.max_rank; ++r) total += kWeights[r];
    int64_t pick = uniform(0, total - 1);
    for (int r = min_rank; r <= opt_.max_rank; ++r) {
      pick -= kWeights[r];
      if (pick < 0) return r;
    }
    return opt_.max_rank;
  }

  // A fresh shape for a leaf; kept small so that later broadcasts and concats have room.
  Shape random_shape(int min_rank = 0) {
    const int r = random_rank(min_rank);
    Shape s;
    for (int attempt = 0; attempt < 8; ++attempt) {
      s.clear();
      for (int d = 0; d < r; ++d) s.push_back(random_dim());
      if (numel(s) <= std::min<int64_t>(512, opt_.max_elements)) return s;
    }
    for (auto& d : s) d = std::min<int64_t>(d, 1);
    return s;
  }

  DType random_dtype() {
    int64_t r = uniform(0, 99);
    if (r < 54) return DType::f32;
    if (r < 62) return DType::f64;
    if (r < 69) return DType::i32;
    if (r < 77) return DType::i64;
    if (r < 84) return DType::bool_;
    if (r < 90) return DType::f16;
    if (r < 96) return DType::bf16;
    return DType::u8;
  }
  DType random_float_dtype() {
    int64_t r = uniform(0, 99);
    if (r < 70) return DType::f32;
    if (r < 82) return DType::f64;
    if (r < 91) return DType::f16;
    return DType::bf16;
  }
  DType random_int_dtype() {
    int64_t r = uniform(0, 99);
    return r < 45 ? DType::i32 : r < 92 ? DType::i64 : DType::u8;
  }

  // A value every dtype holds exactly (floats: exact in bf16 and f16).
  double nice_value(DType d) {
    if (is_floating(d)) return choose({0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 0.25, 1.5, -1.5, 3.0, 0.75, -0.125});
    if (d == DType::bool_) return static_cast<double>(uniform(0, 1));
    if (d == DType::u8) return static_cast<double>(uniform(0, 10));
    return static_cast<double>(uniform(-3, 10));
  }
  double special_value() { return choose<double>({std::nan(""), INFINITY, -INFINITY}); }

  // ---- emitting instructions ----
  int32_t push(OpId op, std::vector<int32_t> operands, Attrs attrs, const ir::TypedShape& type, Info inf) {
    if (numel(type.shape) > opt_.max_elements || static_cast<int>(type.shape.size()) > opt_.max_rank) throw Reject{};
    if (is_floating(type.dtype)) {
      if (!(inf.bound <= float_cap(type.dtype))) throw Reject{};
    } else {
      inf.bound = std::min(inf.bound, int_cap(type.dtype));
      inf.special = false;
    }
    ir::Instr instr;
    instr.op = op;
    instr.operands = std::move(operands);
    instr.attrs = std::move(attrs);
    instr.shape = type.shape;
    instr.dtype = type.dtype;
    g_.instrs.push_back(std::move(instr));
    info_.push_back(inf);
    return size() - 1;
  }

  // Types the instruction with the IR's own shape rule; a generator bug surfaces as xlite::Error.
  int32_t emit(OpId op, std::vector<int32_t> operands, Attrs attrs, Info inf) {
    std::vector<ir::OperandType> types;
    for (int32_t o : operands) types.push_back({shape(o), dtype(o)});
    ir::TypedShape type = ir::infer_type(op, types, attrs);
    return push(op, std::move(operands), std::move(attrs), type, inf);
  }

  int32_t parameter(Shape s, DType d) {
    Attrs attrs = ir::ParameterAttrs{.index = g_.num_parameters}.to_attrs();
    double bound = is_floating(d) ? 2.0 : d == DType::bool_ ? 1.0 : 19.0;
    int32_t v = push(OpId::parameter, {}, std::move(attrs), {s, d}, {true, false, bound});
    ++g_.num_parameters;
    return v;
  }

  int32_t constant(DType d, double value) {
    Attrs attrs = ir::ConstantAttrs{.value = value, .dtype = d}.to_attrs();
    bool special = !std::isfinite(value);
    return emit(OpId::constant, {}, std::move(attrs), {true, special, special ? 0.0 : std::fabs(value)});
  }

  int32_t broadcast(int32_t v, Shape to, std::vector<int64_t> dims) {
    Attrs attrs = ir::BroadcastAttrs{.shape = to, .dims = dims}.to_attrs();
    return emit(OpId::broadcast, {v}, std::move(attrs), info(v));
  }

  int32_t splat(Shape s, DType d, double value) {
    int32_t c = constant(d, value);
    return s.empty() && chance(0.8) ? c : broadcast(c, s, {});
  }

  int32_t iota(Shape s, int64_t dim, DType d) {
    Attrs attrs = ir::IotaAttrs{.shape = s, .dim = dim, .dtype = d}.to_attrs();
    return emit(OpId::iota, {}, std::move(attrs), {true, false, static_cast<double>(std::max<int64_t>(s[dim] - 1, 0))});
  }

  int32_t unary(OpId op, int32_t x, Info inf) { return emit(op, {x}, {}, inf); }
  int32_t binary(OpId op, int32_t a, int32_t b, Info inf) { return emit(op, {a, b}, {}, inf); }

  // A new leaf of the given type: mostly a parameter, sometimes a splatted constant or an iota.
  int32_t new_value(Shape s, DType d) {
    double r = unit();
    if (r < 0.1) return splat(s, d, nice_value(d));
    if (r < 0.16 && !s.empty() && d != DType::bool_) return iota(s, uniform(0, static_cast<int64_t>(s.size()) - 1), d);
    return parameter(s, d);
  }

  // An existing value accepted by pred, often a recent one; -1 if there is none.
  // Values a transfer left on another device are read only by the step that made them (step_transfer), and
  // packed custom-call outputs only by their custom_output instructions (step_custom_call).
  bool readable(int32_t v) const { return g_.instrs[v].device == Device{} && !info(v).opaque; }

  int32_t find(const std::function<bool(int32_t)>& pred) {
    std::vector<int32_t> found;
    for (int32_t v = 0; v < size(); ++v)
      if (readable(v) && pred(v)) found.push_back(v);
    if (found.empty()) return -1;
    if (chance(0.5)) {
      int64_t recent = std::min<int64_t>(static_cast<int64_t>(found.size()), 6);
      return found[found.size() - 1 - uniform(0, recent - 1)];
    }
    return choose(found);
  }

  // An operand: usually an existing value accepted by pred, else a new parameter of a dtype `make` gives
  // (which must satisfy pred's dtype and exactness rules; shape rules are checked by the caller).
  int32_t operand(const std::function<bool(int32_t)>& pred, const std::function<DType()>& make, int min_rank = 0) {
    if (!chance(0.08)) {
      int32_t v = find([&](int32_t c) { return rank(c) >= min_rank && pred(c); });
      if (v >= 0) return v;
    }
    return parameter(random_shape(min_rank), make());
  }

  bool satisfies(int32_t v, Want want) const { return (!want.exact || info(v).exact) && (!want.clean || clean(v)); }

  // All ways to broadcast shape `from` into `to` (operand dim i -> output dim dims[i]).
  static void broadcast_maps(const Shape& from, const Shape& to, size_t i, size_t start, std::vector<int64_t>& dims,
                             std::vector<std::vector<int64_t>>& out) {
    if (i == from.size()) {
      out.push_back(dims);
      return;
    }
    for (size_t d = start; d + (from.size() - i) <= to.size(); ++d) {
      if (from[i] != 1 && from[i] != to[d]) continue;
      dims.push_back(static_cast<int64_t>(d));
      broadcast_maps(from, to, i + 1, d + 1, dims, out);
      dims.pop_back();
    }
  }

  // What converting v to `to` gives, or nothing when the conversion is not allowed (ill-conditioned,
  // out of range, or a tainted value leaving the 16-bit types).
  std::optional<Info> convert_info(int32_t v, DType to) const {
    const DType from = dtype(v);
    const Info& i = info(v);
    if (is_floating(from)) {
      if (is_floating(to)) {
        if (is_16_bit_float(from) && !i.exact && !is_16_bit_float(to)) return std::nullopt;
        if (to == DType::f16 && i.bound > 3e4) return std::nullopt;
        // f64 -> f16/bf16 may round twice (through f32) in one backend and once in another.
        return Info{i.exact && !(from == DType::f64 && is_16_bit_float(to)), i.special, i.bound};
      }
      if (!i.exact) return std::nullopt;
      if (to == DType::bool_) return Info{true, false, 1};
      if (i.special || i.bound >= 2e9) return std::nullopt;
      return Info{true, false, std::floor(i.bound)};
    }
    if (is_floating(to) && i.bound > (to == DType::f16 ? 6e4 : 16777216.0)) return std::nullopt;
    return Info{true, false, i.bound};
  }

  int32_t convert(int32_t v, DType to, const Info& inf) {
    Attrs attrs = ir::ConvertAttrs{.dtype = to}.to_attrs();
    return emit(OpId::convert, {v}, std::move(attrs), inf);
  }

  // A value of exactly this type: an existing one, a broadcast or conversion of one, or a new leaf.
  int32_t source(Shape s, DType d, Want want = Want{}) {
    std::vector<int32_t> same;
    for (int32_t v = 0; v < size(); ++v)
      if (readable(v) && shape(v) == s && dtype(v) == d && satisfies(v, want)) same.push_back(v);
    if (!same.empty() && chance(0.6)) return chance(0.5) ? same.back() : choose(same);
    if (chance(0.35)) {
      std::vector<std::pair<int32_t, std::vector<int64_t>>> options;
      for (int32_t v = 0; v < size(); ++v) {
        if (!readable(v) || dtype(v) != d || !satisfies(v, want) || shape(v).size() > s.size() || shape(v) == s)
          continue;
        std::vector<std::vector<int64_t>> maps;
        std::vector<int64_t> dims;
        broadcast_maps(shape(v), s, 0, 0, dims, maps);
        if (!maps.empty()) options.emplace_back(v, choose(maps));
      }
      if (!options.empty()) {
        auto [v, dims] = choose(options);
        return broadcast(v, s, dims);
      }
    }
    if (chance(0.2)) {
      std::vector<int32_t> convertible;
      for (int32_t v = 0; v < size(); ++v) {
        if (!readable(v) || shape(v) != s || dtype(v) == d) continue;
        auto inf = convert_info(v, d);
        if (inf && (!want.exact || inf->exact) &&
            (!want.clean || (!inf->special && (!is_16_bit_float(d) || inf->exact))))
          convertible.push_back(v);
      }
      if (!convertible.empty()) {
        int32_t v = choose(convertible);
        return convert(v, d, *convert_info(v, d));
      }
    }
    return new_value(s, d);
  }

  // ---- making operands safe ----
  // Scales a float value by a power of two (exact) until |x| <= limit.
  int32_t bounded(int32_t x, double limit) {
    const Info inf = info(x);
    if (inf.bound <= limit) return x;
    int k = static_cast<int>(std::ceil(std::log2(inf.bound / limit)));
    if (k > 24) throw Reject{};
    int32_t scale = splat(shape(x), dtype(x), std::ldexp(1.0, -k));
    Info r = inf;
    r.bound = std::ldexp(inf.bound, -k);
    return chance(0.5) ? binary(OpId::mul, x, scale, r) : binary(OpId::mul, scale, x, r);
  }

  // A value >= c > 0 made from a clean float value: max(abs(x), c) (exact), or abs(x) + c.
  std::pair<int32_t, double> safe_positive(int32_t x) {
    double c = choose({0.5, 1.0, 2.0});
    x = bounded(x, 64);
    const Info inf = info(x);
    int32_t a = unary(OpId::abs, x, inf);
    int32_t k = splat(shape(x), dtype(x), c);
    if (chance(0.5)) std::swap(a, k);
    if (is_16_bit_float(dtype(x)) || chance(0.5))
      return {binary(OpId::maximum, a, k, {inf.exact, false, std::max(inf.bound, c)}), c};
    return {binary(OpId::add, a, k, {false, false, inf.bound + c}), c};
  }

  // Index values for a dim of `size` elements, of this shape: in range unless the options ask otherwise.
  int32_t make_index(Shape s, int64_t size) {
    DType d = chance(0.5) ? DType::i64 : DType::i32;
    if (size == 0 && numel(s) > 0) throw Reject{};
    size = std::max<int64_t>(size, 1);
    const bool wild = opt_.out_of_range_index_probability > 0 && chance(opt_.out_of_range_index_probability);
    wild_index_ = wild_index_ || wild;
    int32_t base;
    if (!s.empty() && chance(0.3)) {
      int64_t dim = uniform(0, static_cast<int64_t>(s.size()) - 1);
      base = iota(s, dim, d);
      if (s[dim] <= size && !wild && chance(0.7)) return base;
    } else {
      base = source(s, d);
    }
    const Info b = info(base);
    if (wild) {
      switch (uniform(0, 2)) {
        case 0: return base;  // parameters hold 0..19
        case 1: return binary(OpId::sub, base, splat(s, d, 1), {true, false, b.bound + 1});
        default:
          return binary(OpId::remainder, base, splat(s, d, static_cast<double>(size + uniform(1, 3))),
                        {true, false, static_cast<double>(size + 3)});
      }
    }
    const Info in_range{true, false, static_cast<double>(size - 1)};
    switch (uniform(0, 2)) {
      case 0:  // remainder with a positive divisor is in [0, size), whatever the sign of the value
        return binary(OpId::remainder, base, splat(s, d, static_cast<double>(size)), in_range);
      case 1: {
        int32_t a = unary(OpId::abs, base, b);
        return binary(OpId::remainder, a, splat(s, d, static_cast<double>(size)), in_range);
      }
      default: {
        int32_t lo = binary(OpId::maximum, base, splat(s, d, 0), b);
        return binary(OpId::minimum, splat(s, d, static_cast<double>(size - 1)), lo, in_range);
      }
    }
  }

  std::vector<int64_t> random_dims_subset(int r) {
    std::vector<int64_t> dims;
    for (int d = 0; d < r; ++d)
      if (chance(0.5)) dims.push_back(d);
    shuffle(dims);
    return dims;
  }

  // ---- steps: each adds one op (and whatever it needs) ----
  void step() {
    struct Weighted {
      int weight;
      void (Generator::*step)();
    };
    static constexpr Weighted kSteps[] = {
        {3, &Generator::step_parameter},    {2, &Generator::step_constant},     {1, &Generator::step_iota},
        {1, &Generator::step_rng},          {5, &Generator::step_convert},      {4, &Generator::step_unary},
        {12, &Generator::step_unary_float}, {2, &Generator::step_predicate},    {14, &Generator::step_binary},
        {4, &Generator::step_compare},      {2, &Generator::step_logical},      {4, &Generator::step_select},
        {6, &Generator::step_reduce},       {2, &Generator::step_arg_reduce},   {4, &Generator::step_reshape},
        {3, &Generator::step_transpose},    {4, &Generator::step_broadcast},    {4, &Generator::step_slice},
        {3, &Generator::step_concat},       {3, &Generator::step_pad},          {2, &Generator::step_flip},
        {3, &Generator::step_gather},       {3, &Generator::step_index_select}, {2, &Generator::step_scatter_add},
        {4, &Generator::step_dot},          {2, &Generator::step_conv2d},       {3, &Generator::step_row_stat},
        {1, &Generator::step_transfer},     {2, &Generator::step_custom_call},  {2, &Generator::step_scan},
        {1, &Generator::step_argsort},      {1, &Generator::step_barrier},
    };
    int total = 0;
    for (const Weighted& s : kSteps) total += s.weight;
    int64_t pick = uniform(0, total - 1);
    for (const Weighted& s : kSteps) {
      if (pick < s.weight) return (this->*s.step)();
      pick -= s.weight;
    }
  }

  void step_parameter() { parameter(random_shape(), random_dtype()); }

  void step_iota() {
    Shape s = random_shape(1);
    DType d = random_dtype();
    iota(s, uniform(0, static_cast<int64_t>(s.size()) - 1), d == DType::bool_ ? DType::i64 : d);
  }

  void step_binary() { chance(0.25) ? step_binary_int() : step_binary_float(); }

  std::function<DType()> any_dtype() {
    return [this] { return random_dtype(); };
  }
  std::function<DType()> float_dtype() {
    return [this] { return random_float_dtype(); };
  }
  std::function<DType()> int_dtype() {
    return [this] { return random_int_dtype(); };
  }
  std::function<DType()> numeric_dtype() {
    return [this] {
      DType d = random_dtype();
      return d == DType::bool_ ? DType::f32 : d;
    };
  }

  void step_constant() {
    DType d = random_dtype();
    double value = opt_.special_values && is_floating(d) && chance(0.12) ? special_value() : nice_value(d);
    if (chance(0.4)) {
      constant(d, value);
      return;
    }
    Shape s = random_shape();
    int32_t c = constant(d, value);
    broadcast(c, s, {});
  }

  void step_rng() {
    if (!opt_.random_ops) {
      parameter(random_shape(), random_float_dtype());
      return;
    }
    auto scalar_i64 = [&] {
      int32_t v = find([&](int32_t c) { return dtype(c) == DType::i64 && shape(c).empty(); });
      return v >= 0 && chance(0.6) ? v : parameter({}, DType::i64);
    };
    int32_t seed = scalar_i64();
    int32_t offset = chance(0.25) ? seed : scalar_i64();
    bool normal = chance(0.5);
    Attrs attrs = ir::RandomAttrs{.shape = random_shape(), .dtype = chance(0.75) ? DType::f32 : DType::f64}.to_attrs();
    // Uniform draws are bit manipulations, exact everywhere; normal draws go through log, sqrt and cos.
    emit(normal ? OpId::rng_normal : OpId::rng_uniform, {seed, offset}, std::move(attrs),
         normal ? Info{false, false, 6.0} : Info{true, false, 1.0});
  }

  void step_convert() {
    int32_t x = operand([](int32_t) { return true; }, any_dtype());
    for (int attempt = 0; attempt < 4; ++attempt) {
      DType to = random_dtype();
      if (to == dtype(x) && chance(0.7)) continue;
      if (auto inf = convert_info(x, to)) {
        convert(x, to, *inf);
        return;
      }
    }
    throw Reject{};
  }

  void step_unary() {
    OpId op = choose({OpId::neg, OpId::abs, OpId::relu, OpId::sign});
    int32_t x = operand(
        [&](int32_t v) {
          return dtype(v) != DType::bool_ && (op != OpId::sign || !is_floating(dtype(v)) || info(v).exact);
        },
        numeric_dtype());
    Info r = info(x);
    if (op == OpId::sign) r.bound = 1;
    if (op == OpId::neg && dtype(x) == DType::u8) r.bound = 255;
    unary(op, x, r);
  }

  void step_unary_float() {
    OpId op =
        choose({OpId::exp,  OpId::expm1, OpId::log,   OpId::log1p, OpId::sqrt,    OpId::rsqrt,     OpId::sin,
                OpId::cos,  OpId::tan,   OpId::atan,  OpId::tanh,  OpId::sigmoid, OpId::gelu,      OpId::gelu_tanh,
                OpId::silu, OpId::erf,   OpId::floor, OpId::ceil,  OpId::round,   OpId::reciprocal});
    const bool rounding = op == OpId::floor || op == OpId::ceil || op == OpId::round;
    int32_t x = operand([&](int32_t v) { return is_floating(dtype(v)) && (rounding ? info(v).exact : clean(v)); },
                        float_dtype());
    if (rounding) {
      Info r = info(x);
      r.bound += 1;
      unary(op, x, r);
      return;
    }
    double bound = 1;
    switch (op) {
      case OpId::exp:
      case OpId::expm1:
        x = bounded(x, 4);
        bound = std::exp(info(x).bound) + 1;
        break;
      case OpId::log: {
        auto [p, c] = safe_positive(x);
        x = p;
        bound = std::max(std::fabs(std::log(c)), std::log(std::max(info(p).bound, 1.0))) + 0.01;
        break;
      }
      case OpId::log1p:
        x = bounded(x, 1e4);
        x = unary(OpId::abs, x, info(x));
        bound = std::log1p(info(x).bound) + 0.01;
        break;
      case OpId::sqrt: {
        auto [p, c] = safe_positive(x);
        x = p;
        bound = std::sqrt(info(p).bound) + 0.01;
        break;
      }
      case OpId::rsqrt:
      case OpId::reciprocal: {
        auto [p, c] = safe_positive(x);
        x = p;
        bound = 1.0 / c + 0.01;
        break;
      }
      case OpId::sin:
      case OpId::cos: x = bounded(x, 8); break;
      case OpId::tan:
        x = bounded(x, 1);
        bound = 1.6;
        break;
      case OpId::atan: bound = 1.58; break;  // |atan(x)| < pi / 2 for every x
      case OpId::tanh:
      case OpId::sigmoid:
      case OpId::erf: x = bounded(x, 64); break;
      default:  // gelu, gelu_tanh, silu: |f(x)| <= |x| + 0.2
        x = bounded(x, 16);
        bound = info(x).bound + 0.2;
        break;
    }
    unary(op, x, {false, false, bound});
  }

  void step_predicate() {
    OpId op = choose({OpId::logical_not, OpId::isnan, OpId::isinf});
    int32_t x = operand([&](int32_t v) { return op != OpId::logical_not || info(v).exact; }, any_dtype());
    unary(op, x, {true, false, 1});
  }

  void step_binary_int() {
    OpId op =
        choose({OpId::add, OpId::sub, OpId::mul, OpId::maximum, OpId::minimum, OpId::div, OpId::remainder, OpId::pow});
    int32_t a = operand([&](int32_t v) { return is_integral(dtype(v)); }, int_dtype());
    const Shape s = shape(a);
    const DType d = dtype(a);
    int32_t b = source(s, d);
    const Info ia = info(a);
    double bound = 0;
    switch (op) {
      case OpId::add:
      case OpId::sub: bound = ia.bound + info(b).bound; break;
      case OpId::mul: bound = ia.bound * info(b).bound; break;
      case OpId::maximum:
      case OpId::minimum: bound = std::max(ia.bound, info(b).bound); break;
      case OpId::div:
      case OpId::remainder: {
        // Integer division by zero throws: divide by a non-zero constant or by max(abs(b), 1).
        if (chance(0.5)) {
          double c =
              d == DType::u8 ? static_cast<double>(uniform(1, 7)) : choose({-3.0, -2.0, -1.0, 1.0, 2.0, 3.0, 5.0, 7.0});
          b = splat(s, d, c);
        } else {
          int32_t abs_b = unary(OpId::abs, b, info(b));
          int32_t one = splat(s, d, 1);
          b = chance(0.5) ? binary(OpId::maximum, abs_b, one, info(b)) : binary(OpId::maximum, one, abs_b, info(b));
        }
        bound = op == OpId::div ? ia.bound : info(b).bound;
        break;
      }
      default: {  // pow: exponents in [0, 4); negative integer exponents throw
        b = binary(OpId::remainder, b, splat(s, d, 4), {true, false, 3});
        bound = ia.bound * ia.bound * ia.bound;
        break;
      }
    }
    binary(op, a, b, {true, false, bound});
  }

  void step_binary_float() {
    OpId op = choose({OpId::add, OpId::add, OpId::sub, OpId::sub, OpId::mul, OpId::mul, OpId::div, OpId::pow,
                      OpId::maximum, OpId::minimum, OpId::remainder});
    if (op == OpId::maximum || op == OpId::minimum) {
      int32_t a = operand([&](int32_t v) { return is_floating(dtype(v)); }, float_dtype());
      int32_t b = source(shape(a), dtype(a));
      const Info ia = info(a), ib = info(b);
      binary(op, a, b, {ia.exact && ib.exact, ia.special || ib.special, std::max(ia.bound, ib.bound)});
      return;
    }
    if (op == OpId::remainder) {
      // By a power of two: exact however it is computed (fmod, or a - b * floor(a / b)).
      int32_t a =
          operand([&](int32_t v) { return is_floating(dtype(v)) && info(v).exact && !info(v).special; }, float_dtype());
      double c = choose({0.25, 0.5, 1.0, 2.0, 4.0, -0.5, -1.0, -2.0});
      binary(op, a, splat(shape(a), dtype(a), c), {true, false, std::fabs(c)});
      return;
    }
    int32_t a = operand([&](int32_t v) { return is_floating(dtype(v)) && clean(v); }, float_dtype());
    int32_t b = source(shape(a), dtype(a), {false, true});
    double bound = 0;
    switch (op) {
      case OpId::add:
      case OpId::sub:
        a = bounded(a, 32);
        b = bounded(b, 32);
        bound = info(a).bound + info(b).bound;
        break;
      case OpId::mul:
        a = bounded(a, 8);
        b = bounded(b, 8);
        bound = info(a).bound * info(b).bound;
        break;
      case OpId::div: {
        a = bounded(a, 32);
        auto [p, c] = safe_positive(b);
        b = chance(0.3) ? unary(OpId::neg, p, info(p)) : p;
        bound = info(a).bound / c;
        break;
      }
      default: {  // pow: base >= c > 0, |exponent| <= 2
        auto [p, c] = safe_positive(bounded(a, 4));
        a = p;
        b = bounded(b, 2);
        bound = std::max(std::pow(info(p).bound, 2.0), 1.0 / (c * c)) + 0.01;
        break;
      }
    }
    binary(op, a, b, {false, false, bound});
  }

  void step_compare() {
    OpId op = choose({OpId::eq, OpId::ne, OpId::lt, OpId::le, OpId::gt, OpId::ge});
    int32_t a = operand([&](int32_t v) { return info(v).exact; }, any_dtype());
    int32_t b;
    double r = unit();
    if (r < 0.15)
      b = a;
    else if (r < 0.45)
      b = splat(shape(a), dtype(a), nice_value(dtype(a)));
    else
      b = source(shape(a), dtype(a), {true, false});
    if (chance(0.5)) std::swap(a, b);
    binary(op, a, b, {true, false, 1});
  }

  void step_logical() {
    OpId op = choose({OpId::logical_and, OpId::logical_or, OpId::logical_xor});
    int32_t a = operand([&](int32_t v) { return dtype(v) == DType::bool_; }, [] { return DType::bool_; });
    int32_t b = source(shape(a), DType::bool_);
    binary(op, a, b, {true, false, 1});
  }

  void step_select() {
    int32_t a = operand([](int32_t) { return true; }, any_dtype());
    int32_t b = source(shape(a), dtype(a));
    int32_t cond = source(shape(a), DType::bool_);
    if (chance(0.2)) b = a;
    const Info ia = info(a), ib = info(b);
    emit(OpId::select, {cond, a, b}, {},
         {ia.exact && ib.exact, ia.special || ib.special, std::max(ia.bound, ib.bound)});
  }

  void step_reduce() {
    OpId op = choose({OpId::reduce_sum, OpId::reduce_sum, OpId::reduce_prod, OpId::reduce_max, OpId::reduce_min});
    const bool extreme = op == OpId::reduce_max || op == OpId::reduce_min;
    int32_t x = operand(
        [&](int32_t v) {
          if (extreme) return true;
          return dtype(v) != DType::bool_ && (is_integral(dtype(v)) || clean(v));
        },
        extreme ? any_dtype() : numeric_dtype());
    std::vector<int64_t> dims = random_dims_subset(rank(x));
    if (extreme) std::erase_if(dims, [&](int64_t d) { return shape(x)[d] == 0; });
    double count = 1;
    for (int64_t d : dims) count *= static_cast<double>(shape(x)[d]);
    Attrs attrs = ir::ReduceAttrs{.dims = dims, .keepdim = chance(0.5)}.to_attrs();
    Info r;
    if (extreme) {
      r = info(x);
    } else if (is_integral(dtype(x))) {
      double b = info(x).bound;
      r = {true, false, op == OpId::reduce_sum ? count * b : std::pow(std::max(b, 1.0), count)};
    } else if (op == OpId::reduce_sum) {
      double limit = std::min(32.0, (is_16_bit_float(dtype(x)) ? 1e4 : 1e6) / std::max(count, 1.0));
      x = bounded(x, limit);
      r = {false, false, count * info(x).bound + 0.01};
    } else {  // product: keep bound^count <= 1e3
      double limit = count > 0 ? std::pow(1e3, 1.0 / count) : 1e3;
      x = bounded(x, limit);
      r = {false, false, std::pow(std::max(info(x).bound, 1.0), count) + 0.01};
    }
    emit(op, {x}, std::move(attrs), r);
  }

  // A statistic of each row (sum, max or min over the last dim) broadcast back over the row and combined
  // with it, as softmax's x - max and layernorm's x - mean are: the shape the backend computes inside the
  // loop that reads it, one row at a time.
  void step_row_stat() {
    int32_t x =
        operand([&](int32_t v) { return is_floating(dtype(v)) && clean(v) && rank(v) >= 2 && shape(v).back() > 1; },
                float_dtype(), 2);
    if (!is_floating(dtype(x)) || !clean(x) || rank(x) < 2 || shape(x).back() <= 1) throw Reject{};
    const OpId op = choose({OpId::reduce_sum, OpId::reduce_max, OpId::reduce_min});
    const int64_t last = rank(x) - 1;
    const double count = static_cast<double>(shape(x).back());
    Info r = info(x);
    if (op == OpId::reduce_sum) {
      x = bounded(x, std::min(32.0, (is_16_bit_float(dtype(x)) ? 1e4 : 1e6) / count));
      r = {false, false, count * info(x).bound + 0.01};
    }
    const bool keepdim = chance(0.5);
    Attrs attrs = ir::ReduceAttrs{.dims = std::vector<int64_t>{last}, .keepdim = keepdim}.to_attrs();
    const int32_t stat = emit(op, {x}, std::move(attrs), r);
    std::vector<int64_t> dims(static_cast<size_t>(keepdim ? last + 1 : last));
    std::iota(dims.begin(), dims.end(), 0);
    const int32_t spread = broadcast(stat, shape(x), dims);
    const OpId combine = choose({OpId::sub, OpId::add, OpId::mul});
    const double bound = combine == OpId::mul ? info(x).bound * info(spread).bound : info(x).bound + info(spread).bound;
    binary(combine, x, spread, {false, false, bound});
  }

  void step_arg_reduce() {
    OpId op = chance(0.5) ? OpId::argmax : OpId::argmin;
    int32_t x = operand([&](int32_t v) { return info(v).exact; }, any_dtype(), 1);
    std::vector<int64_t> dims;
    for (int d = 0; d < rank(x); ++d)
      if (shape(x)[d] > 0) dims.push_back(d);
    if (dims.empty()) throw Reject{};
    int64_t dim = choose(dims);
    Attrs attrs = ir::ArgReduceAttrs{.dim = dim, .keepdim = chance(0.5)}.to_attrs();
    emit(op, {x}, std::move(attrs), {true, false, static_cast<double>(shape(x)[dim] - 1)});
  }

  // Running sums and products are bounded like the reductions over the whole dim; a running maximum or
  // minimum moves elements, so it is exact where its operand is.
  void step_scan() {
    OpId op = choose({OpId::cumsum, OpId::cumprod, OpId::cummax, OpId::cummin});
    const bool extreme = op == OpId::cummax || op == OpId::cummin;
    int32_t x =
        operand([&](int32_t v) { return dtype(v) != DType::bool_ && (extreme || is_integral(dtype(v)) || clean(v)); },
                numeric_dtype(), 1);
    const int64_t dim = uniform(0, rank(x) - 1);
    const double count = static_cast<double>(shape(x)[dim]);
    Info r = info(x);
    if (!extreme) {
      if (is_integral(dtype(x))) {
        const double b = info(x).bound;
        r = {true, false, op == OpId::cumsum ? count * b : std::pow(std::max(b, 1.0), count)};
      } else if (op == OpId::cumsum) {
        x = bounded(x, std::min(32.0, (is_16_bit_float(dtype(x)) ? 1e4 : 1e6) / std::max(count, 1.0)));
        r = {false, false, count * info(x).bound + 0.01};
      } else {
        x = bounded(x, count > 0 ? std::pow(1e3, 1.0 / count) : 1e3);
        r = {false, false, std::pow(std::max(info(x).bound, 1.0), count) + 0.01};
      }
    }
    emit(op, {x}, ir::DimAttrs{.dim = dim}.to_attrs(), r);
  }

  // The permutation depends on every comparison, so only exact values are sorted.
  void step_argsort() {
    int32_t x = operand([&](int32_t v) { return info(v).exact && dtype(v) != DType::bool_; }, numeric_dtype(), 1);
    const int64_t dim = uniform(0, rank(x) - 1);
    Attrs attrs = ir::SortAttrs{.dim = dim, .descending = chance(0.5)}.to_attrs();
    emit(OpId::argsort, {x}, std::move(attrs),
         {true, false, static_cast<double>(std::max<int64_t>(shape(x)[dim] - 1, 0))});
  }

  void step_reshape() {
    int32_t x = operand([](int32_t) { return true; }, any_dtype());
    const int64_t n = numel(shape(x));
    Shape to;
    if (n == 0) {
      int r = random_rank(1);
      if (r == 0) throw Reject{};
      for (int d = 0; d < r; ++d) to.push_back(random_dim());
      to[uniform(0, r - 1)] = 0;
    } else {
      std::vector<int64_t> factors;
      int64_t m = n;
      for (int64_t p = 2; p * p <= m; ++p)
        while (m % p == 0) {
          factors.push_back(p);
          m /= p;
        }
      if (m > 1) factors.push_back(m);
      int r = random_rank(n > 1 ? 1 : 0);
      if (r == 0 && n > 1) throw Reject{};
      to.assign(r, 1);
      for (int64_t f : factors) to[uniform(0, r - 1)] *= f;
    }
    Attrs attrs = ir::ReshapeAttrs{.shape = to}.to_attrs();
    emit(OpId::reshape, {x}, std::move(attrs), info(x));
  }

  void step_transpose() {
    int32_t x = operand([](int32_t) { return true; }, any_dtype());
    std::vector<int64_t> perm;
    for (int d = 0; d < rank(x); ++d) perm.push_back(d);
    shuffle(perm);
    Attrs attrs = ir::TransposeAttrs{.perm = perm}.to_attrs();
    emit(OpId::transpose, {x}, std::move(attrs), info(x));
  }

  void step_broadcast() {
    int32_t x = operand([](int32_t) { return true; }, any_dtype());
    const int r = rank(x);
    const int out_rank = static_cast<int>(uniform(r, std::max(r, opt_.max_rank)));
    // Choose which output dims the operand dims land on.
    std::vector<int64_t> positions;
    for (int d = 0; d < out_rank; ++d) positions.push_back(d);
    shuffle(positions);
    positions.resize(r);
    std::sort(positions.begin(), positions.end());
    Shape to(out_rank, 0);
    for (int d = 0; d < out_rank; ++d) to[d] = random_dim();
    for (int i = 0; i < r; ++i) {
      int64_t extent = shape(x)[i];
      to[positions[i]] = extent == 1 && chance(0.6) ? random_dim() : extent;
    }
    broadcast(x, to, positions);
  }

  void step_slice() {
    int32_t x = operand([](int32_t) { return true; }, any_dtype());
    std::vector<int64_t> start, limit, stride;
    for (int64_t extent : shape(x)) {
      int64_t s = chance(0.3) ? 0 : uniform(0, extent);
      int64_t l = chance(0.3) ? extent : uniform(s, extent);
      start.push_back(s);
      limit.push_back(l);
      stride.push_back(chance(0.6) ? 1 : uniform(1, 3));
    }
    Attrs attrs = ir::SliceAttrs{.start = start, .limit = limit, .stride = stride}.to_attrs();
    emit(OpId::slice, {x}, std::move(attrs), info(x));
  }

  void step_concat() {
    int32_t x = operand([](int32_t) { return true; }, any_dtype(), 1);
    const int64_t dim = uniform(0, rank(x) - 1);
    std::vector<int32_t> parts{x};
    Info r = info(x);
    for (int64_t n = uniform(0, 3); n > 0; --n) {
      int32_t part = x;
      if (chance(0.7)) {
        Shape s = shape(x);
        s[dim] = random_dim();
        part = source(s, dtype(x));
      }
      r.exact = r.exact && info(part).exact;
      r.special = r.special || info(part).special;
      r.bound = std::max(r.bound, info(part).bound);
      parts.push_back(part);
    }
    shuffle(parts);
    Attrs attrs = ir::DimAttrs{.dim = dim}.to_attrs();
    emit(OpId::concat, std::move(parts), std::move(attrs), r);
  }

  void step_pad() {
    int32_t x = operand([](int32_t) { return true; }, any_dtype());
    std::vector<int64_t> lo, hi;
    for (int d = 0; d < rank(x); ++d) {
      lo.push_back(chance(0.5) ? 0 : uniform(0, 2));
      hi.push_back(chance(0.5) ? 0 : uniform(0, 2));
    }
    const DType d = dtype(x);
    double value = opt_.special_values && is_floating(d) && chance(0.08) ? special_value() : nice_value(d);
    Attrs attrs = ir::PadAttrs{.lo = lo, .hi = hi, .value = value}.to_attrs();
    Info r = info(x);
    if (std::isfinite(value))
      r.bound = std::max(r.bound, std::fabs(value));
    else
      r.special = true;
    emit(OpId::pad, {x}, std::move(attrs), r);
  }

  // A value moved to another device (cpu:0 again when the process has one), flipped there, and moved back:
  // both transfers and the loop between them run, and every other value stays on cpu:0.
  void step_transfer() {
    const int32_t x = operand([](int32_t) { return true; }, any_dtype());
    const int count = xlite::device_count();
    const Device there{DeviceKind::cpu, count > 1 ? static_cast<int>(uniform(1, count - 1)) : 0};
    const int32_t moved = emit(OpId::transfer, {x}, {}, info(x));
    g_.instrs[moved].device = there;
    std::vector<int64_t> all(rank(x));
    std::iota(all.begin(), all.end(), 0);
    const int32_t flipped = emit(OpId::flip, {moved}, ir::FlipAttrs{.dims = all}.to_attrs(), info(x));
    g_.instrs[flipped].device = there;
    emit(OpId::transfer, {flipped}, {}, info(x));
  }

  // A registered kernel (testing/test_kernels.h): axpy on two values, or row_stats with its two outputs.
  void step_custom_call() {
    if (!opt_.custom_calls) throw Reject{};
    const int32_t x = operand([&](int32_t v) { return (dtype(v) == DType::f32 || dtype(v) == DType::f64) && clean(v); },
                              [this] { return chance(0.7) ? DType::f32 : DType::f64; });
    const DType d = dtype(x);
    if ((d != DType::f32 && d != DType::f64) || !clean(x)) throw Reject{};
    if (chance(0.5)) {
      const int32_t y = source(shape(x), d, {false, true});
      const Attrs attrs = ir::CustomCallAttrs{.kernel = "testing.axpy", .args = "alpha=0.5"}.to_attrs();
      emit(OpId::custom_call, {x, y}, attrs, {false, false, 0.5 * info(x).bound + info(y).bound});
      return;
    }
    if (rank(x) == 0 || shape(x).back() == 0) throw Reject{};
    const Attrs attrs = ir::CustomCallAttrs{.kernel = "testing.row_stats", .args = ""}.to_attrs();
    Info packed_info;
    packed_info.opaque = true;
    const int32_t packed = emit(OpId::custom_call, {x}, attrs, packed_info);
    const Shape rows(shape(x).begin(), shape(x).end() - 1);
    const ir::PackedOutputs layout = ir::pack_outputs({{rows, d}, {rows, d}});
    const double sum_bound = static_cast<double>(shape(x).back()) * info(x).bound + 0.01;
    for (int64_t i : {int64_t{0}, int64_t{1}}) {
      if (i == 1 && chance(0.3)) continue;  // an output no one reads
      const ir::CustomOutputAttrs output{.index = i, .offset = layout.offsets[i], .shape = rows, .dtype = d};
      emit(OpId::custom_output, {packed}, output.to_attrs(), {false, false, i == 0 ? sum_bound : info(x).bound});
    }
  }

  // A barrier passes its first operand through; the others only order it.
  void step_barrier() {
    std::vector<int32_t> operands{operand([](int32_t) { return true; }, any_dtype())};
    for (int64_t k = uniform(0, 2); k > 0; --k) operands.push_back(operand([](int32_t) { return true; }, any_dtype()));
    emit(OpId::opt_barrier, operands, {}, info(operands[0]));
  }

  void step_flip() {
    int32_t x = operand([](int32_t) { return true; }, any_dtype());
    Attrs attrs = ir::FlipAttrs{.dims = random_dims_subset(rank(x))}.to_attrs();
    emit(OpId::flip, {x}, std::move(attrs), info(x));
  }

  // An index shape for gather / scatter_add on x along dim: no larger than x outside dim.
  Shape index_shape(int32_t x, int64_t dim) {
    Shape s = shape(x);
    for (int d = 0; d < rank(x); ++d) {
      if (d == dim)
        s[d] = s[d] == 0 ? 0 : random_dim();
      else if (chance(0.4))
        s[d] = uniform(0, s[d]);
    }
    return s;
  }

  void step_gather() {
    int32_t x = operand([](int32_t) { return true; }, any_dtype(), 1);
    const int64_t dim = uniform(0, rank(x) - 1);
    Shape s = index_shape(x, dim);
    int32_t index = make_index(s, shape(x)[dim]);
    Attrs attrs = ir::DimAttrs{.dim = dim}.to_attrs();
    emit(OpId::gather, {x, index}, std::move(attrs), info(x));
  }

  void step_index_select() {
    int32_t x = operand([](int32_t) { return true; }, any_dtype(), 1);
    const int64_t dim = uniform(0, rank(x) - 1);
    int64_t length = shape(x)[dim] == 0 ? 0 : chance(0.05) ? 0 : uniform(1, 8);
    int32_t index = make_index({length}, shape(x)[dim]);
    Attrs attrs = ir::DimAttrs{.dim = dim}.to_attrs();
    emit(OpId::index_select, {x, index}, std::move(attrs), info(x));
  }

  void step_scatter_add() {
    // Not on 16-bit floats: the reference rounds after every addition, other orders round differently.
    int32_t x = operand(
        [&](int32_t v) {
          DType d = dtype(v);
          return d != DType::bool_ && !is_16_bit_float(d) && (is_integral(d) || clean(v));
        },
        [this] { return chance(0.7) ? DType::f32 : random_int_dtype(); }, 1);
    const int64_t dim = uniform(0, rank(x) - 1);
    const DType d = dtype(x);
    Shape s = index_shape(x, dim);
    int32_t index = make_index(s, shape(x)[dim]);
    int32_t src = source(s, d, {false, true});
    if (is_floating(d)) {
      x = bounded(x, 32);
      src = bounded(src, 32);
    }
    double bound = info(x).bound + static_cast<double>(s[dim]) * info(src).bound;
    Attrs attrs = ir::DimAttrs{.dim = dim}.to_attrs();
    emit(OpId::scatter_add, {x, index, src}, std::move(attrs), {!is_floating(d), false, bound});
  }

  void step_dot() {
    int32_t a = operand(
        [&](int32_t v) {
          DType d = dtype(v);
          return d != DType::bool_ && (is_integral(d) || clean(v));
        },
        [this] { return chance(0.8) ? random_float_dtype() : random_int_dtype(); }, 2);
    if (rank(a) < 2) throw Reject{};
    if (is_floating(dtype(a)) && chance(0.5)) a = gemm_view(a);
    const DType d = dtype(a);
    Shape sb = shape(a);
    const int64_t k = sb.back();
    sb.back() = random_dim();
    sb[sb.size() - 2] = k;
    int32_t b = source(sb, d, {false, true});
    if (is_floating(d)) {
      a = bounded(a, 8);
      b = bounded(b, 8);
    }
    double bound = static_cast<double>(k) * info(a).bound * info(b).bound + 0.01;
    emit(OpId::dot, {a, b}, {}, {!is_floating(d), false, bound});
  }

  // A slice of one of the matrix dims, or two leading dims swapped (attention heads): a value the
  // backend's GEMM reads in place from its operand's buffer, through strides.
  int32_t gemm_view(int32_t a) {
    const Shape s = shape(a);
    const int r = rank(a);
    if (r >= 3 && chance(0.4)) {
      std::vector<int64_t> perm(static_cast<size_t>(r));
      std::iota(perm.begin(), perm.end(), 0);
      std::swap(perm[0], perm[static_cast<size_t>(r - 3)]);
      if (r == 3) std::swap(perm[0], perm[1]);  // then it would be the identity: swap the batch and row dims
      return emit(OpId::transpose, {a}, ir::TransposeAttrs{.perm = perm}.to_attrs(), info(a));
    }
    const int64_t dim = r - 1 - uniform(0, 1);
    if (s[dim] < 2) return a;
    std::vector<int64_t> start(static_cast<size_t>(r), 0), limit(s.begin(), s.end()), stride(static_cast<size_t>(r), 1);
    start[dim] = uniform(1, s[dim] - 1);
    limit[dim] = uniform(start[dim] + 1, s[dim]);
    if (chance(0.2)) stride[dim] = 2;
    return emit(OpId::slice, {a}, ir::SliceAttrs{.start = start, .limit = limit, .stride = stride}.to_attrs(), info(a));
  }

  void step_conv2d() {
    // x [N, C, H, W] and w [O, C / groups, KH, KW] of one float dtype.
    int32_t x = find([&](int32_t v) { return rank(v) == 4 && is_floating(dtype(v)) && clean(v); });
    if (x < 0 || chance(0.4)) {
      int64_t g = choose<int64_t>({1, 1, 2, 3});
      Shape s = {chance(0.05) ? 0 : uniform(1, 3), g * uniform(1, 3), uniform(1, opt_.max_dim),
                 uniform(1, opt_.max_dim)};
      x = parameter(s, random_float_dtype());
    }
    const Shape xs = shape(x);
    std::vector<int64_t> divisors;
    for (int64_t g = 1; g <= 4; ++g)
      if (xs[1] % g == 0) divisors.push_back(g);
    const int64_t groups = choose(divisors);
    std::vector<int64_t> stride, lo, hi, dilation;
    Shape ws = {groups * uniform(1, 3), xs[1] / groups, uniform(1, 3), uniform(1, 3)};
    for (int k = 0; k < 2; ++k) {
      stride.push_back(chance(0.6) ? 1 : uniform(2, 3));
      dilation.push_back(chance(0.7) ? 1 : 2);
      lo.push_back(chance(0.5) ? 0 : uniform(0, 2));
      hi.push_back(chance(0.5) ? 0 : uniform(0, 2));
      const int64_t span = dilation[k] * (ws[2 + k] - 1) + 1;
      const int64_t padded = xs[2 + k] + lo[k] + hi[k];
      if (padded < span) hi[k] += span - padded;
    }
    int32_t w = source(ws, dtype(x), {false, true});
    x = bounded(x, 8);
    w = bounded(w, 8);
    Attrs attrs =
        ir::ConvAttrs{.stride = stride, .lo = lo, .hi = hi, .dilation = dilation, .groups = groups}.to_attrs();
    double bound = static_cast<double>(ws[1] * ws[2] * ws[3]) * info(x).bound * info(w).bound + 0.01;
    emit(OpId::conv2d, {x, w}, std::move(attrs), {false, false, bound});
  }

  // ---- finishing ----
  void choose_outputs() {
    const int64_t count = uniform(1, opt_.max_outputs);
    std::vector<int32_t> params;
    for (int32_t v = 0; v < size(); ++v)
      if (g_.instrs[v].op == OpId::parameter) params.push_back(v);
    g_.outputs.push_back(size() - 1);  // the last value is always live
    for (int32_t v : must_output_)
      if (v != size() - 1) g_.outputs.push_back(v);
    for (int64_t i = 1; i < count; ++i) {
      int32_t v = 0;
      if (!params.empty() && chance(0.12))
        v = choose(params);
      else if (chance(0.5))
        v = static_cast<int32_t>(uniform(std::max(0, size() - 8), size() - 1));
      else
        v = static_cast<int32_t>(uniform(0, size() - 1));
      if (!info(v).opaque) g_.outputs.push_back(v);
    }
    shuffle(g_.outputs);
  }

  void shuffle_parameter_indices() {
    std::vector<int64_t> order;
    for (int64_t i = 0; i < g_.num_parameters; ++i) order.push_back(i);
    if (chance(0.5)) shuffle(order);
    for (ir::Instr& instr : g_.instrs)
      if (instr.op == OpId::parameter)
        instr.attrs = ir::ParameterAttrs{.index = order[ir::ParameterAttrs::of(instr.attrs).index]}.to_attrs();
  }

  std::mt19937_64 rng_;
  RandomGraphOptions opt_;
  ir::Graph g_;
  std::vector<Info> info_;
  // Set when an index operand may be out of range; the op using it becomes an output, so that no backend
  // may drop it as dead code and the run must throw.
  bool wild_index_ = false;
  std::vector<int32_t> must_output_;
};

// ---- reading elements for the comparison ----
double element_f(const Buffer& b, DType d, int64_t i) { return read_element_f64(b.data(), d, i); }
int64_t element_i(const Buffer& b, DType d, int64_t i) { return read_integer_element(b.data(), d, i); }

std::string format_float(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string format_element(const Buffer& b, DType d, int64_t i) {
  if (is_floating(d)) return format_float(element_f(b, d, i));
  if (d == DType::bool_) return element_i(b, d, i) ? "true" : "false";
  return std::to_string(element_i(b, d, i));
}

bool floats_close(double x, double y, double rtol, double atol) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  if (std::isinf(x) || std::isinf(y)) return x == y;
  return std::fabs(x - y) <= atol + rtol * std::max(std::fabs(x), std::fabs(y));
}

std::string index_str(int64_t linear, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] == 0 ? 0 : linear % shape[d];
    linear = shape[d] == 0 ? 0 : linear / shape[d];
  }
  return shape_str(index);
}

std::string instr_line(const std::string& text, int32_t i) {
  size_t pos = 0;
  for (int32_t line = 0; line < i && pos != std::string::npos; ++line) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (pos == std::string::npos) return "?";
  return text.substr(pos, text.find('\n', pos) - pos);
}

std::string describe(const BackendRun& run) {
  if (run.threw)
    return std::string(run.threw_internal      ? "threw xlite::InternalError: "
                       : run.threw_xlite_error ? "threw xlite::Error: "
                                               : "threw ") +
           run.error;
  return "returned " + std::to_string(run.outputs.size()) + " outputs";
}

}  // namespace

ir::Graph random_graph(uint64_t seed, const RandomGraphOptions& options) {
  register_test_kernels();  // the custom calls a graph may make
  return Generator(seed, options).build();
}

std::vector<BufferPtr> random_arguments(const ir::Graph& graph, uint64_t seed) {
  std::mt19937_64 rng(seed * 0xD1342543DE82EF95ull + 0x7F4A7C159E3779B9ull);
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1p-53; };
  std::vector<BufferPtr> args(graph.num_parameters);
  for (const ir::Instr& instr : graph.instrs) {
    if (instr.op != OpId::parameter) continue;
    int64_t index = ir::ParameterAttrs::of(instr.attrs).index;
    if (index < 0 || index >= graph.num_parameters || args[index])
      throw Error("[random_arguments] parameter index " + std::to_string(index) + " is out of range or repeated");
    const int64_t n = numel(instr.shape);
    BufferPtr buffer = runtime::allocator(instr.device).allocate(static_cast<size_t>(n * dtype_size(instr.dtype)));
    for (int64_t i = 0; i < n; ++i) {
      const double f = -2.0 + 4.0 * unit();
      const uint64_t bits = rng();
      switch (instr.dtype) {
        case DType::f32: buffer->as<float>()[i] = static_cast<float>(f); break;
        case DType::f64: buffer->as<double>()[i] = f; break;
        case DType::f16: buffer->as<uint16_t>()[i] = float_to_f16(static_cast<float>(f)); break;
        case DType::bf16: buffer->as<uint16_t>()[i] = float_to_bf16(static_cast<float>(f)); break;
        case DType::i32: buffer->as<int32_t>()[i] = static_cast<int32_t>(bits % 20); break;
        case DType::i64: buffer->as<int64_t>()[i] = static_cast<int64_t>(bits % 20); break;
        case DType::u8: buffer->as<uint8_t>()[i] = static_cast<uint8_t>(bits % 20); break;
        case DType::bool_: buffer->as<uint8_t>()[i] = static_cast<uint8_t>(bits >> 63); break;
      }
    }
    args[index] = std::move(buffer);
  }
  for (int64_t i = 0; i < graph.num_parameters; ++i)
    if (!args[i]) throw Error("[random_arguments] parameter " + std::to_string(i) + " is missing");
  return args;
}

BackendRun run_backend(const ir::Graph& graph, const std::vector<BufferPtr>& args, const std::string& backend) {
  BackendRun run;
  run.backend = backend;
  try {
    std::shared_ptr<runtime::Executable> exe = compiler::compile_with(graph, backend);
    run.outputs = exe->run(args);
  } catch (const InternalError& e) {
    run.threw = true;
    run.threw_internal = true;
    run.error = e.what();
  } catch (const Error& e) {
    run.threw = true;
    run.threw_xlite_error = true;
    run.error = e.what();
  } catch (const std::exception& e) {
    run.threw = true;
    run.error = std::string("a non-xlite exception: ") + e.what();
  } catch (...) {
    run.threw = true;
    run.error = "an unknown exception";
  }
  return run;
}

Comparison compare_runs(const ir::Graph& graph, const BackendRun& a, const BackendRun& b, double rtol, double atol) {
  const std::string text = ir::to_text(graph);
  auto mismatch = [&](const std::string& what) {
    return Comparison{false, "[compare] '" + a.backend + "' and '" + b.backend + "' disagree: " + what + "\n'" +
                                 a.backend + "' " + describe(a) + "\n'" + b.backend + "' " + describe(b) +
                                 "\ngraph (text IR):\n" + text};
  };
  if (a.threw || b.threw) {
    if (a.threw_internal || b.threw_internal) return mismatch("a backend threw xlite::InternalError");
    if (a.threw && b.threw && !(a.threw_xlite_error && b.threw_xlite_error))
      return mismatch("a backend threw something other than xlite::Error");
    if (!a.threw || !b.threw) return mismatch("only one of them threw");
    auto op_of = [](const std::string& message) { return message.substr(0, message.find(']') + 1); };
    if (op_of(a.error) != op_of(b.error)) return mismatch("they threw for different ops");
    return {};
  }
  for (const BackendRun* run : {&a, &b})
    if (run->outputs.size() != graph.outputs.size())
      return mismatch("'" + run->backend + "' returned " + std::to_string(run->outputs.size()) + " outputs for " +
                      std::to_string(graph.outputs.size()));
  for (size_t k = 0; k < graph.outputs.size(); ++k) {
    const int32_t id = graph.outputs[k];
    const ir::Instr& instr = graph.instrs[id];
    const int64_t n = numel(instr.shape);
    const std::string where = "output " + std::to_string(k) + " (%" + std::to_string(id) + ")";
    const size_t bytes = static_cast<size_t>(n * dtype_size(instr.dtype));
    for (const BackendRun* run : {&a, &b}) {
      const BufferPtr& out = run->outputs[k];
      if (!out || out->bytes() < bytes)
        return mismatch(where + " of '" + run->backend + "' is " + (out ? "smaller than its type" : "missing") +
                        "\n  instruction: " + instr_line(text, id));
    }
    const Buffer& x = *a.outputs[k];
    const Buffer& y = *b.outputs[k];
    const bool half = is_16_bit_float(instr.dtype);
    const double r = half ? std::max(rtol, 1e-2) : rtol;
    const double t = half ? std::max(atol, 1e-2) : atol;
    int64_t first = -1, count = 0;
    for (int64_t i = 0; i < n; ++i) {
      bool same = is_floating(instr.dtype)
                      ? floats_close(element_f(x, instr.dtype, i), element_f(y, instr.dtype, i), r, t)
                      : element_i(x, instr.dtype, i) == element_i(y, instr.dtype, i);
      if (!same) {
        if (first < 0) first = i;
        ++count;
      }
    }
    if (first >= 0) {
      std::string what = where + " " + std::string(dtype_name(instr.dtype)) + shape_str(instr.shape) +
                         " differs at element " + std::to_string(first) + " (index " + index_str(first, instr.shape) +
                         "): '" + a.backend + "' gives " + format_element(x, instr.dtype, first) + ", '" + b.backend +
                         "' gives " + format_element(y, instr.dtype, first) + " (" + std::to_string(count) + " of " +
                         std::to_string(n) + " elements differ";
      if (is_floating(instr.dtype)) what += "; rtol " + format_float(r) + ", atol " + format_float(t);
      what += ")\n  instruction: " + instr_line(text, id);
      return mismatch(what);
    }
  }
  return {};
}

Comparison compare_backends(const ir::Graph& graph, const std::vector<BufferPtr>& args, const std::string& backend_a,
                            const std::string& backend_b, double rtol, double atol) {
  BackendRun a = run_backend(graph, args, backend_a);
  BackendRun b = run_backend(graph, args, backend_b);
  return compare_runs(graph, a, b, rtol, atol);
}

}  // namespace xlite::testing
