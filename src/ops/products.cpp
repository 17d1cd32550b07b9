// Products built on matmul: outer, bmm, addmm, baddbmm, cross and einsum.
#include <algorithm>
#include <map>
#include <string>

#include "ops/op_support.h"
#include "xlite/autocast.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
using ops::OpScope;

void require_rank(const char* what, const Tensor& t, int64_t rank) {
  if (t.dim() != rank)
    ops::fail(std::string(what) + " must be " + std::to_string(rank) + "-D, got " + shape_str(t.shape()));
}

// beta * input + alpha * product; beta = 0 ignores input entirely (NaN in it does not propagate).
Tensor scaled_sum(const Tensor& input, const Tensor& product, double beta, double alpha) {
  Tensor scaled = alpha == 1 ? product : product * alpha;
  if (beta == 0) return scaled + zeros_like(input);
  return (beta == 1 ? input : input * beta) + scaled;
}
}  // namespace

Tensor outer(const Tensor& a, const Tensor& b) {
  OpScope scope("outer");
  require_rank("a", a, 1);
  require_rank("b", b, 1);
  return scope.finish(unsqueeze(a, 1) * unsqueeze(b, 0));
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  OpScope scope("bmm");
  require_rank("a", a, 3);
  require_rank("b", b, 3);
  if (a.shape()[0] != b.shape()[0] || a.shape()[2] != b.shape()[1])
    ops::fail("shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()) + " cannot be multiplied");
  return scope.finish(matmul(a, b));
}

Tensor addmm(const Tensor& input, const Tensor& a, const Tensor& b, double beta, double alpha) {
  OpScope scope("addmm");
  require_rank("a", a, 2);
  require_rank("b", b, 2);
  return scope.finish(scaled_sum(autocast_for_product(input), matmul(a, b), beta, alpha));
}

Tensor baddbmm(const Tensor& input, const Tensor& a, const Tensor& b, double beta, double alpha) {
  OpScope scope("baddbmm");
  return scope.finish(scaled_sum(autocast_for_product(input), bmm(a, b), beta, alpha));
}

Tensor cross(const Tensor& a, const Tensor& b, int64_t dim) {
  OpScope scope("cross");
  const Shape shape = ops::broadcast_shapes(a.shape(), b.shape());
  if (shape.empty()) ops::fail("needs at least one dim of size 3");
  const int64_t d = ops::normalize_dim(dim, static_cast<int64_t>(shape.size()));
  if (shape[d] != 3) ops::fail("dim " + std::to_string(dim) + " of " + shape_str(shape) + " must have size 3");
  Tensor x = broadcast_to(a, shape), y = broadcast_to(b, shape);
  auto part = [&](const Tensor& t, int64_t i) { return slice(t, d, i, i + 1); };
  return scope.finish(
      concat({part(x, 1) * part(y, 2) - part(x, 2) * part(y, 1), part(x, 2) * part(y, 0) - part(x, 0) * part(y, 2),
              part(x, 0) * part(y, 1) - part(x, 1) * part(y, 0)},
             d));
}

namespace {
// An operand of einsum with one label per dim. Ellipsis dims get labels of their own, '0' + k counted
// from the right, so that broadcast ellipsis dims share labels.
struct Labeled {
  Tensor t;
  std::string labels;
};

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string expand_ellipsis(const std::string& spec, int64_t rank, int64_t* ellipsis_rank) {
  const size_t at = spec.find("...");
  std::string letters = spec;
  if (at != std::string::npos) letters.erase(at, 3);
  for (char c : letters)
    if (!is_letter(c)) ops::fail("labels must be letters a-z or A-Z, got '" + std::string(1, c) + "'");
  if (at == std::string::npos) {
    if (static_cast<int64_t>(letters.size()) != rank)
      ops::fail("\"" + spec + "\" has " + std::to_string(letters.size()) + " labels for an operand of " +
                std::to_string(rank) + " dims");
    return letters;
  }
  const int64_t extra = rank - static_cast<int64_t>(letters.size());
  if (extra < 0) ops::fail("\"" + spec + "\" has more labels than the operand's " + std::to_string(rank) + " dims");
  *ellipsis_rank = std::max(*ellipsis_rank, extra);
  std::string dims;
  for (int64_t k = extra - 1; k >= 0; --k) dims += static_cast<char>('0' + k);
  return letters.substr(0, at) + dims + letters.substr(at);
}

// Repeated labels within one operand take the diagonal: "ii" -> "i".
Labeled take_diagonals(Labeled op) {
  for (size_t i = 0; i < op.labels.size(); ++i) {
    const size_t j = op.labels.find(op.labels[i], i + 1);
    if (j == std::string::npos) continue;
    if (op.t.shape()[i] != op.t.shape()[j])
      ops::fail("label '" + std::string(1, op.labels[i]) + "' has sizes " + std::to_string(op.t.shape()[i]) + " and " +
                std::to_string(op.t.shape()[j]));
    op.t = diagonal(op.t, 0, static_cast<int64_t>(i), static_cast<int64_t>(j));
    const char c = op.labels[i];
    op.labels.erase(j, 1);
    op.labels.erase(i, 1);
    op.labels.push_back(c);
    i = static_cast<size_t>(-1);  // start over: positions moved
  }
  return op;
}

// Sums the labels no one else needs.
Labeled sum_unneeded(Labeled op, const std::string& needed) {
  std::vector<int64_t> dims;
  std::string kept;
  for (size_t i = 0; i < op.labels.size(); ++i) {
    if (needed.find(op.labels[i]) == std::string::npos)
      dims.push_back(static_cast<int64_t>(i));
    else
      kept.push_back(op.labels[i]);
  }
  if (!dims.empty()) op = {sum(op.t, dims), kept};
  return op;
}

Tensor permuted(const Labeled& op, const std::string& order) {
  std::vector<int64_t> perm;
  for (char c : order) perm.push_back(static_cast<int64_t>(op.labels.find(c)));
  return permute(op.t, perm);
}

// a and b to [batch, a-only, contracted] x [batch, contracted, b-only] through one matmul; a label of size 1
// on one side broadcasts.
Labeled contract(const Labeled& a, const Labeled& b, const std::string& needed_after) {
  std::map<char, int64_t> size;
  for (const Labeled* op : {&a, &b})
    for (size_t i = 0; i < op->labels.size(); ++i) {
      const char c = op->labels[i];
      const int64_t s = op->t.shape()[i];
      auto [it, fresh] = size.emplace(c, s);
      if (!fresh && it->second != s) {
        if (it->second != 1 && s != 1)
          ops::fail("label '" + std::string(1, c) + "' has sizes " + std::to_string(it->second) + " and " +
                    std::to_string(s));
        it->second = std::max(it->second, s);
      }
    }
  std::string batch, a_only, b_only, summed;
  for (char c : a.labels) {
    const bool in_b = b.labels.find(c) != std::string::npos;
    if (!in_b)
      a_only.push_back(c);
    else if (needed_after.find(c) != std::string::npos)
      batch.push_back(c);
    else
      summed.push_back(c);
  }
  for (char c : b.labels)
    if (a.labels.find(c) == std::string::npos) b_only.push_back(c);
  auto extent = [&](const std::string& labels) {
    int64_t n = 1;
    for (char c : labels) n *= size[c];
    return n;
  };
  auto sized = [&](const std::string& labels) {
    Shape s;
    for (char c : labels) s.push_back(size[c]);
    return s;
  };
  Tensor ta = expand(permuted(a, batch + a_only + summed), sized(batch + a_only + summed));
  Tensor tb = expand(permuted(b, batch + summed + b_only), sized(batch + summed + b_only));
  Tensor product = matmul(reshape(ta, {extent(batch), extent(a_only), extent(summed)}),
                          reshape(tb, {extent(batch), extent(summed), extent(b_only)}));
  return {reshape(product, sized(batch + a_only + b_only)), batch + a_only + b_only};
}
}  // namespace

Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands) {
  OpScope scope("einsum");
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq.push_back(c);
  const size_t arrow = eq.find("->");
  const std::string inputs = eq.substr(0, arrow);
  std::vector<std::string> specs;
  for (size_t start = 0;;) {
    const size_t comma = inputs.find(',', start);
    specs.push_back(inputs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (specs.size() != operands.size())
    ops::fail("\"" + std::string(equation) + "\" names " + std::to_string(specs.size()) + " operands, got " +
              std::to_string(operands.size()));
  int64_t ellipsis_rank = 0;
  std::vector<Labeled> ops_;
  for (size_t i = 0; i < specs.size(); ++i)
    ops_.push_back({operands[i], expand_ellipsis(specs[i], operands[i].dim(), &ellipsis_rank)});
  std::string output;
  if (arrow != std::string::npos) {
    const std::string out = eq.substr(arrow + 2);
    if (out.find("...") != std::string::npos) {
      std::string dims;
      for (int64_t k = ellipsis_rank - 1; k >= 0; --k) dims += static_cast<char>('0' + k);
      output = out.substr(0, out.find("...")) + dims + out.substr(out.find("...") + 3);
    } else {
      output = out;
    }
    for (char c : output) {
      if (!is_letter(c) && !(c >= '0' && c <= '9')) ops::fail("bad output label '" + std::string(1, c) + "'");
      if (std::count(output.begin(), output.end(), c) > 1)
        ops::fail("output label '" + std::string(1, c) + "' appears twice");
      if (std::none_of(ops_.begin(), ops_.end(),
                       [&](const Labeled& o) { return o.labels.find(c) != std::string::npos; }))
        ops::fail("output label '" + std::string(1, c) + "' is on no operand");
    }
  } else {
    // Implicit output: the ellipsis dims, then the letters seen exactly once, in alphabetical order.
    std::string all;
    for (const Labeled& o : ops_) all += o.labels;
    for (int64_t k = ellipsis_rank - 1; k >= 0; --k) output += static_cast<char>('0' + k);
    std::string once;
    for (char c : all)
      if (is_letter(c) && std::count(all.begin(), all.end(), c) == 1) once.push_back(c);
    std::sort(once.begin(), once.end(), [](char x, char y) {
      const bool lx = x >= 'a', ly = y >= 'a';  // PyTorch orders A-Z before a-z
      return lx != ly ? !lx : x < y;
    });
    output += once;
  }
  if (ops_.empty()) ops::fail("needs at least one operand");
  for (Labeled& op : ops_) op = take_diagonals(op);
  auto needed_by = [&](size_t from) {
    std::string needed = output;
    for (size_t i = from; i < ops_.size(); ++i) needed += ops_[i].labels;
    return needed;
  };
  Labeled acc = sum_unneeded(ops_[0], needed_by(1));
  for (size_t i = 1; i < ops_.size(); ++i)
    acc = contract(acc, sum_unneeded(ops_[i], acc.labels + needed_by(i + 1)), needed_by(i + 1));
  acc = sum_unneeded(acc, output);
  return scope.finish(permuted(acc, output));
}

}  // namespace xlite
