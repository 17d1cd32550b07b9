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

// Runs body as one op named `name`, for ops written with public ops (xlite::nn's losses are): an error
// raised while it builds its graph, or a bad value found when that graph runs, names `name` (with the
// inner IR op in parentheses), and in eager mode the result is computed once, when body returns. The
// graph keeps the pointer: `name` must be a string literal.
Tensor composite_op(const char* name, const std::function<Tensor()>& body);

}  // namespace xlite
