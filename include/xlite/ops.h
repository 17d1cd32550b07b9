#pragma once
// Ops. Each builds IR (or runs at once in eager mode). Arguments are checked when the op is called and a
// mistake raises xlite::Error naming the op and the offending shapes, dtypes or values.
// Binary ops broadcast like NumPy and promote dtypes like PyTorch. Dims may be negative.
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "xlite/tensor.h"

namespace xlite {

// Unary. Float-only ops (exp, sin, ...) turn integer and bool inputs into f32.
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
// approximate: "none" (exact, with erf) or "tanh".
Tensor gelu(const Tensor& x, std::string_view approximate = "none");
Tensor silu(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);  // half to even, like PyTorch
Tensor sign(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor square(const Tensor& x);
Tensor logical_not(const Tensor& x);
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);

// Binary, each with Tensor/Scalar overloads.
#define XLITE_DECLARE_BINARY(name)               \
  Tensor name(const Tensor& a, const Tensor& b); \
  Tensor name(const Tensor& a, Scalar b);        \
  Tensor name(Scalar a, const Tensor& b);
XLITE_DECLARE_BINARY(add)
XLITE_DECLARE_BINARY(sub)
XLITE_DECLARE_BINARY(mul)
XLITE_DECLARE_BINARY(div)  // true division: integers give f32
XLITE_DECLARE_BINARY(pow)
XLITE_DECLARE_BINARY(maximum)
XLITE_DECLARE_BINARY(minimum)
XLITE_DECLARE_BINARY(remainder)  // result has the divisor's sign, like Python's %
XLITE_DECLARE_BINARY(eq)
XLITE_DECLARE_BINARY(ne)
XLITE_DECLARE_BINARY(lt)
XLITE_DECLARE_BINARY(le)
XLITE_DECLARE_BINARY(gt)
XLITE_DECLARE_BINARY(ge)
XLITE_DECLARE_BINARY(logical_and)
XLITE_DECLARE_BINARY(logical_or)
XLITE_DECLARE_BINARY(logical_xor)
#undef XLITE_DECLARE_BINARY

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
Tensor where(const Tensor& cond, Scalar a, Scalar b);
Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi);
Tensor clamp(const Tensor& x, const Tensor& lo, const Tensor& hi);

// Reductions. An empty dims list reduces every dim. Sums of integers and bools are i64.
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor prod(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor max(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor min(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// max and min over dims by PyTorch's names (max(x, dim) with one dim returns values and indices, below).
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);  // i64, first index of the max
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x);  // over the flattened tensor
Tensor argmin(const Tensor& x);
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
// correction = 1 is the unbiased estimate, 0 the population variance.
Tensor var(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// Shape ops. All are value ops: the result is a new value, never a view that aliases storage.
Tensor reshape(const Tensor& x, const Shape& shape);  // one dim may be -1
Tensor view(const Tensor& x, const Shape& shape);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
Tensor expand(const Tensor& x, const Shape& shape);  // -1 keeps a dim
Tensor broadcast_to(const Tensor& x, const Shape& shape);
// Python slicing x[start:stop:step] along dim; out-of-range bounds clamp, negative ones count from the end.
Tensor slice(const Tensor& x, int64_t dim, int64_t start = 0, int64_t stop = INT64_MAX, int64_t step = 1);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor concat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
// pad lists (before, after) pairs starting from the last dim, like torch.nn.functional.pad.
Tensor pad(const Tensor& x, const std::vector<int64_t>& pad, Scalar value = 0);
Tensor flip(const Tensor& x, const std::vector<int64_t>& dims);
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);

// Indexing. Index tensors are integers; a value out of range raises xlite::Error when it is computed.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor embedding(const Tensor& weight, const Tensor& indices);
// num_classes = -1 takes max(x) + 1, which reads the value (a sync).
Tensor one_hot(const Tensor& x, int64_t num_classes = -1);

// Linear algebra. matmul follows torch.matmul (1-D operands, broadcast batch dims).
Tensor matmul(const Tensor& a, const Tensor& b);
// 2-D convolution of x [N, C, H, W] with w [O, C / groups, KH, KW] (cross-correlation, like PyTorch);
// bias [O]. stride, padding and dilation give (height, width).
Tensor conv2d(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias = std::nullopt,
              std::vector<int64_t> stride = {1, 1}, std::vector<int64_t> padding = {0, 0},
              std::vector<int64_t> dilation = {1, 1}, int64_t groups = 1);
// Pooling over windows of x [N, C, H, W]; stride defaults to the kernel size. Padding counts as -inf for
// max and as zeros for average (PyTorch's count_include_pad).
Tensor max_pool2d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride = {},
                  std::vector<int64_t> padding = {0, 0});
Tensor avg_pool2d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride = {},
                  std::vector<int64_t> padding = {0, 0});
// y = x w^T + bias, with w of shape [out_features, in_features].
Tensor linear(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias = std::nullopt);

// Activations and elementwise functions written with the ops above (gradients follow from theirs).
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor atan2(const Tensor& y, const Tensor& x);  // the angle of (x, y), in [-pi, pi] (by the zeros' signs)
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor logaddexp(const Tensor& a, const Tensor& b);  // log(exp(a) + exp(b)) without overflow
Tensor hypot(const Tensor& a, const Tensor& b);      // sqrt(a^2 + b^2) without overflow
// log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (PyTorch's softplus).
Tensor softplus(const Tensor& x, double beta = 1, double threshold = 20);
Tensor mish(const Tensor& x);  // x tanh(softplus(x))
Tensor hardsigmoid(const Tensor& x);
Tensor hardswish(const Tensor& x);
Tensor elu(const Tensor& x, double alpha = 1);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor glu(const Tensor& x, int64_t dim = -1);  // a * sigmoid(b) for the two halves of dim
Tensor clamp_min(const Tensor& x, Scalar min);
Tensor clamp_max(const Tensor& x, Scalar max);
// NaN becomes `nan`; infinities become `posinf` and `neginf`, by default the dtype's largest finite values.
Tensor nan_to_num(const Tensor& x, double nan = 0, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);

// More reductions. any/all give bool; count_nonzero gives i64.
Tensor any(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor all(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor count_nonzero(const Tensor& x, const std::vector<int64_t>& dims = {});
Tensor std(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
// The vector p-norm over dims (all dims when empty): sum(|x|^p)^(1/p) for any p (0 counts non-zeros),
// INFINITY the largest magnitude, -INFINITY the smallest.
Tensor norm(const Tensor& x, double p = 2, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// ord "fro" (the 2-norm of the elements) or "nuc" is refused; "fro" is what torch.norm(x, "fro") gives.
Tensor norm(const Tensor& x, std::string_view ord, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Values and the index of each along one dim, like torch.max(x, dim): the first index of the extreme.
struct ValuesIndices {
  Tensor values;
  Tensor indices;
};
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim = false);
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim = false);
// |a - b| <= atol + rtol |b| elementwise (equal infinities are close; NaN only with equal_nan).
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);         // a value read: it syncs
bool equal(const Tensor& a, const Tensor& b);  // same shape and the same values (a value read)

// Scans along a dim. cumsum and cumprod of integers and bools are i64; cummax's indices are those of the
// latest maximum so far (as PyTorch's).
Tensor cumsum(const Tensor& x, int64_t dim);
Tensor cumprod(const Tensor& x, int64_t dim);
ValuesIndices cummax(const Tensor& x, int64_t dim);
ValuesIndices cummin(const Tensor& x, int64_t dim);

// Sorting along a dim (stable: equal values keep their order; NaN sorts above every number).
ValuesIndices sort(const Tensor& x, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
// The k largest (or smallest) along dim, sorted.
ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true);
ValuesIndices kthvalue(const Tensor& x, int64_t k, int64_t dim = -1, bool keepdim = false);  // k from 1
// The lower median, like PyTorch's; without a dim, of every element.
ValuesIndices median(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor median(const Tensor& x);
// The most frequent value along dim (the smallest of equally frequent ones) and an index of it.
ValuesIndices mode(const Tensor& x, int64_t dim = -1, bool keepdim = false);

// Repetition, rotation and diagonals.
Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats);  // torch.Tensor.repeat
Tensor tile(const Tensor& x, const std::vector<int64_t>& repeats);
// Each element `repeats` times along dim; without a dim, of the flattened tensor.
Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim = std::nullopt);
// Per-element counts (a 1-D integer tensor): the result's size is data-dependent, so this reads them (a sync).
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt);
// Elements shifted by shifts along dims, wrapping around; without dims, of the flattened tensor.
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims = {});
// 1-D: a square matrix with x on diagonal `offset`; 2-D: that diagonal as a 1-D tensor.
Tensor diag(const Tensor& x, int64_t offset = 0);
// Diagonal `offset` of the (dim1, dim2) planes, as the last dim.
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor trace(const Tensor& x);
// Windows of `size` every `step` along dim, as a new last dim (torch.Tensor.unfold).
Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step);
Tensor clone(const Tensor& x);  // a tensor of its own with the same value; gradients flow through it

// Products.
Tensor outer(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);  // [B, N, M] x [B, M, P], no broadcasting
Tensor addmm(const Tensor& input, const Tensor& a, const Tensor& b, double beta = 1, double alpha = 1);
Tensor baddbmm(const Tensor& input, const Tensor& a, const Tensor& b, double beta = 1, double alpha = 1);
Tensor cross(const Tensor& a, const Tensor& b, int64_t dim = -1);  // the dim must have size 3
// Einstein summation over letters a-z and A-Z, with "->" (or implicit output: the letters seen once, sorted)
// and "..." for broadcast dims; operands contract left to right through matmul.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands);

// Data-dependent shapes: the result's size depends on values, so each reads its operands (a sync, which
// XLITE_DEBUG reports and compile(fn) guards on like any value read).
Tensor nonzero(const Tensor& x);  // [count, rank] i64 indices
Tensor masked_select(const Tensor& x, const Tensor& mask);
// The sorted distinct values; with inverse, also each element's index in them; with counts, their counts.
struct Unique {
  Tensor values;
  Tensor inverse;
  Tensor counts;
};
Unique unique(const Tensor& x, bool return_inverse = false, bool return_counts = false);

// Convolution and pooling beyond 2-D, and resampling.
Tensor conv1d(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias = std::nullopt, int64_t stride = 1,
              int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1);
// The gradient of conv2d with respect to its input, as a layer: w is [C_in, C_out / groups, KH, KW].
Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias = std::nullopt,
                        std::vector<int64_t> stride = {1, 1}, std::vector<int64_t> padding = {0, 0},
                        std::vector<int64_t> output_padding = {0, 0}, int64_t groups = 1,
                        std::vector<int64_t> dilation = {1, 1});
Tensor avg_pool1d(const Tensor& x, int64_t kernel, int64_t stride = -1, int64_t padding = 0);  // stride -1: kernel
Tensor max_pool1d(const Tensor& x, int64_t kernel, int64_t stride = -1, int64_t padding = 0);
// Averages over the windows PyTorch's adaptive pooling picks for an output of `size` (height, width).
Tensor adaptive_avg_pool2d(const Tensor& x, std::vector<int64_t> size);
// mode "nearest" or "bilinear" (align_corners as PyTorch's) to an output of `size` (height, width) of
// x [N, C, H, W].
Tensor interpolate(const Tensor& x, std::vector<int64_t> size, std::string_view mode = "nearest",
                   bool align_corners = false);
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);

// Runs body as one op named `name`, for ops written with public ops (xlite::nn's losses are): an error
// raised while it builds its graph, or a bad value found when that graph runs, names `name` (with the
// inner IR op in parentheses), and in eager mode the result is computed once, when body returns. The
// graph keeps the pointer: `name` must be a string literal.
Tensor composite_op(const char* name, const std::function<Tensor()>& body);

}  // namespace xlite
