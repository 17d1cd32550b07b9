// nn.h's losses and RMSprop, Adagrad, Lion: PyTorch 2.15 values, f64 finite-difference gradients, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <xlite/xlite.h>

#include "gradient_check.h"

#include "test_support.h"

namespace xl = xlite;
namespace nn = xlite::nn;
namespace optim = xlite::optim;
using namespace xlite_test;

namespace {

using DV = std::vector<double>;

// Gradients by central differences (tests/gradient_check.h).
using xlite_test::check_gradients;
using xlite_test::input;
using xlite_test::random_f64;

// ---- Known values ----

// A loss value (0-dim) or a "none" loss of the given shape, against PyTorch's (f32 inputs).
void ExpectLoss(const xl::Tensor& got, const xl::Shape& shape, const DV& want, double rtol = 1e-5, double atol = 1e-6) {
  EXPECT_EQ(got.shape(), shape);
  ExpectClose(Vals(got), want, rtol, atol);
}
void ExpectScalarLoss(const xl::Tensor& got, double want, double rtol = 1e-5, double atol = 1e-6) {
  ExpectLoss(got, xl::Shape{}, {want}, rtol, atol);
}

// Expects fn to throw xlite::Error whose message contains `what` (e.g. "[mse_loss]").
template <class F>
void ExpectErrorContaining(const std::string& what, F&& fn) {
  std::string msg = ErrorMessage(std::forward<F>(fn));
  EXPECT_EQ(msg.rfind("non-xlite exception", 0), std::string::npos) << msg;
  EXPECT_NE(msg.find(what), std::string::npos) << "want \"" << what << "\" in: " << msg;
}

// Logits [4, 3] with targets {0, 2, ignored, 1} and class weights {0.5, 2, 1.5}.
xl::Tensor LogitsA() {
  return F32({1.5f, -0.5f, 0.25f, 0.0f, 2.0f, -1.0f, -1.5f, 0.5f, 1.0f, 0.3f, 0.3f, -0.7f}, {4, 3});
}
xl::Tensor TargetA() { return I64({0, 2, -100, 1}); }
xl::Tensor WeightA() { return F32({0.5f, 2.0f, 1.5f}); }

// Logits [N=2, C=3, H=2, W=2] with targets [2, 2, 2] (one ignored) and class weights {1, 0.5, 2}.
xl::Tensor LogitsB() {
  return F32({0.2f, -1.0f, 1.3f,  0.4f, 2.0f,  0.1f, -0.6f, 0.9f, -0.3f, 0.7f,  0.5f, -1.2f,
              1.1f, 0.0f,  -0.4f, 0.8f, -0.9f, 1.6f, 0.3f,  0.2f, 0.6f,  -0.5f, 1.4f, -0.1f},
             {2, 3, 2, 2});
}
xl::Tensor TargetB() { return I64({0, 1, 2, -100, 1, 1, 0, 2}, {2, 2, 2}); }
xl::Tensor WeightB() { return F32({1.0f, 0.5f, 2.0f}); }

// Regression inputs [2, 3]: differences 0.5, -0.2, 1.5, 0, 3.5, -0.8.
xl::Tensor RegInput() { return F32({0.5f, -1.2f, 2.0f, 0.1f, 3.0f, -0.4f}, {2, 3}); }
xl::Tensor RegTarget() { return F32({0.0f, -1.0f, 0.5f, 0.1f, -0.5f, 0.4f}, {2, 3}); }

// ---- Optimizers: three (or four) steps on sum((w * x + b - y)^2) ----

const std::vector<float> kX = {1.0f, 2.0f, -0.5f};
const std::vector<float> kY = {2.0f, 0.5f, 1.0f};

// Parameters w = {0.5, -1, 2} and b = {0.25}, f32, as in the PyTorch script the values come from.
struct Quadratic {
  xl::Tensor w = xl::tensor(std::vector<float>{0.5f, -1.0f, 2.0f});
  xl::Tensor b = xl::tensor(std::vector<float>{0.25f});
  Quadratic() {
    w.requires_grad_();
    b.requires_grad_();
  }
  std::vector<xl::Tensor> params() const { return {w, b}; }
};

template <class Opt>
void TakeSteps(Opt& opt, const Quadratic& q, int steps) {
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    xl::Tensor r = q.w * xl::tensor(kX) + q.b - xl::tensor(kY);
    (r * r).sum().backward();
    opt.step();
    xl::sync();
  }
}

void ExpectParams(const Quadratic& q, const DV& w, double b, double tol = 1e-6) {
  ExpectClose(Vals(q.w), w, tol, tol);
  ExpectClose(Vals(q.b), {b}, tol, tol);
}

// The state tensor `name` of opt's state_dict, against PyTorch's state after the same steps.
void ExpectState(const std::map<std::string, xl::Tensor>& state, const std::string& name, const DV& want) {
  auto it = state.find(name);
  ASSERT_NE(it, state.end()) << "no '" << name << "' in the state_dict";
  SCOPED_TRACE(name);
  ExpectClose(it->second.to(xl::DType::f32).to_vector<float>(), want, 1e-5, 1e-6);
}

// A second problem at q's current parameters (values copied, not shared).
void CopyParams(const Quadratic& from, Quadratic& to) {
  xl::NoGradGuard no_grad;
  to.w.copy_(from.w);
  to.b.copy_(from.b);
  xl::sync();
}

}  // namespace

// ================================ Losses: known values ================================

TEST(NnBreadth, CrossEntropyWithClassWeightsAndIgnoreIndexForEachReduction) {
  auto logits = LogitsA(), target = TargetA(), weight = WeightA();
  // The mean divides by the weights of the targets that count (0.5 + 1.5 + 2), not by N.
  ExpectScalarLoss(nn::cross_entropy(logits, target, -100, 0.0, weight), 1.663683642);
  ExpectScalarLoss(nn::cross_entropy(logits, target, -100, 0.0, weight, "mean"), 1.663683642);
  ExpectScalarLoss(nn::cross_entropy(logits, target, -100, 0.0, weight, "sum"), 6.654734569);
  ExpectLoss(nn::cross_entropy(logits, target, -100, 0.0, weight, "none"), {4},
             {0.1759759319, 4.754769029, 0, 1.723989608});
  // A custom ignore_index (2), no weights.
  auto target2 = I64({0, 2, 1, 2});
  ExpectScalarLoss(nn::cross_entropy(logits, target2, 2), 0.68793046);
  ExpectScalarLoss(nn::cross_entropy(logits, target2, 2, 0.0, std::nullopt, "sum"), 1.37586092);
  ExpectLoss(nn::cross_entropy(logits, target2, 2, 0.0, std::nullopt, "none"), {4}, {0.3519518638, 0, 1.023909056, 0});
  // int32 targets are class indices too.
  ExpectScalarLoss(nn::cross_entropy(logits, I32({0, 2, -100, 1}), -100, 0.0, weight), 1.663683642);
}

TEST(NnBreadth, CrossEntropyLabelSmoothingWithClassWeights) {
  auto logits = LogitsA(), target = TargetA(), weight = WeightA();
  ExpectScalarLoss(nn::cross_entropy(logits, target, -100, 0.2, weight), 1.637783093);
  ExpectScalarLoss(nn::cross_entropy(logits, target, -100, 0.2, weight, "sum"), 6.551132372);
  ExpectLoss(nn::cross_entropy(logits, target, -100, 0.2, weight, "none"), {4},
             {0.6263012425, 4.215774162, 0, 1.709056968});  // the ignored row stays 0
  ExpectScalarLoss(nn::cross_entropy(logits, target, -100, 0.2), 1.466819785);
}

TEST(NnBreadth, CrossEntropyOnSpatialLogitsTakesClassesFromDimOne) {
  auto logits = LogitsB(), target = TargetB(), weight = WeightB();
  ExpectScalarLoss(nn::cross_entropy(logits, target, -100, 0.0, weight), 1.588265265);
  ExpectScalarLoss(nn::cross_entropy(logits, target, -100, 0.0, weight, "sum"), 11.91198949);
  ExpectLoss(nn::cross_entropy(logits, target, -100, 0.0, weight, "none"), {2, 2, 2},
             {2.035512916, 0.5744926409, 2.538628699, 0, 1.27747846, 0.1404619959, 2.204244337, 3.141170438});
  ExpectScalarLoss(nn::cross_entropy(logits, target), 1.580646145);
  ExpectScalarLoss(nn::cross_entropy(logits, target, -100, 0.1, weight), 1.581775764);
  ExpectLoss(nn::cross_entropy(logits, target, -100, 0.1, weight, "none"), {2, 2, 2},
             {2.072771466, 0.6477583273, 2.424519171, 0, 1.281142254, 0.3525235978, 2.109315076, 2.975288335});
  // [N, C, d1] with targets [N, d1].
  auto logits3 = F32({0.5f, -0.5f, 1.0f, 0.0f, -1.0f, 2.0f, 0.3f, 0.1f, -0.2f, 0.4f, 0.0f, 0.6f}, {2, 3, 2});
  auto target3 = I64({2, 0, 1, -100}, {2, 2});
  ExpectScalarLoss(nn::cross_entropy(logits3, target3), 2.201659193);
  ExpectLoss(nn::cross_entropy(logits3, target3, -100, 0.0, std::nullopt, "none"), {2, 2},
             {2.55495692, 2.696734097, 1.353286563, 0});
  // Unbatched: logits [C] with a 0-dim target.
  ExpectScalarLoss(nn::cross_entropy(F32({0.5f, 1.5f, -1.0f}), xl::tensor(int64_t{1})), 0.3715390319);
}

TEST(NnBreadth, NllLossWithClassWeightsAndIgnoreIndexForEachReduction) {
  auto logp = F32({-0.5f, -1.25f, -2.0f, -3.0f, -0.25f, -1.5f, -0.75f, -4.0f, -0.125f, -1.0f, -2.5f, -0.5f}, {4, 3});
  auto weight = F32({2.0f, 0.5f, 1.5f});
  auto target = I64({1, 0, -100, 2});
  ExpectScalarLoss(nn::nll_loss(logp, target, -100, weight), 1.84375);
  ExpectScalarLoss(nn::nll_loss(logp, target, -100, weight, "sum"), 7.375);
  ExpectLoss(nn::nll_loss(logp, target, -100, weight, "none"), {4}, {0.625, 6, 0, 0.75});
  auto target0 = I64({1, 0, 0, 2});  // ignore_index 0: rows 1 and 2 do not count
  ExpectScalarLoss(nn::nll_loss(logp, target0, 0, weight), 0.6875);
  ExpectScalarLoss(nn::nll_loss(logp, target0, 0, weight, "sum"), 1.375);
  ExpectLoss(nn::nll_loss(logp, target0, 0, weight, "none"), {4}, {0.625, 0, 0, 0.75});
  // [N, C, H, W] scores (any values: nll_loss only picks and negates).
  auto scores = LogitsB(), target_b = TargetB(), weight_b = WeightB();
  ExpectScalarLoss(nn::nll_loss(scores, target_b, -100, weight_b), -0.1333333358);
  ExpectScalarLoss(nn::nll_loss(scores, target_b, -100, weight_b, "sum"), -1.000000019);
  ExpectLoss(nn::nll_loss(scores, target_b, -100, weight_b, "none"), {2, 2, 2},
             {-0.200000003, -0.05000000075, -1, 0, 0.4499999881, -0.8000000119, 0.400000006, 0.200000003});
}

TEST(NnBreadth, MseAndL1LossesForEachReduction) {
  auto x = RegInput(), y = RegTarget();
  ExpectScalarLoss(nn::mse_loss(x, y), 2.571666673);
  ExpectScalarLoss(nn::mse_loss(x, y, "sum"), 15.43000004);
  ExpectLoss(nn::mse_loss(x, y, "none"), {2, 3}, {0.25, 0.04000001907, 2.25, 0, 12.25, 0.6400000191});
  ExpectScalarLoss(nn::l1_loss(x, y), 1.083333343);
  ExpectScalarLoss(nn::l1_loss(x, y, "sum"), 6.50000006);
  ExpectLoss(nn::l1_loss(x, y, "none"), {2, 3}, {0.5, 0.2000000477, 1.5, 0, 3.5, 0.8000000119});
}

TEST(NnBreadth, SmoothL1AndHuberLossesForEachReductionAndThreshold) {
  auto x = RegInput(), y = RegTarget();
  // beta 1 (the default): smooth_l1 equals huber with delta 1.
  ExpectScalarLoss(nn::smooth_l1_loss(x, y), 0.7441666698);
  ExpectScalarLoss(nn::smooth_l1_loss(x, y, 1.0, "sum"), 4.465000019);
  ExpectLoss(nn::smooth_l1_loss(x, y, 1.0, "none"), {2, 3}, {0.125, 0.02000000954, 1, 0, 3, 0.3200000095});
  // beta 0.5: |d| = 0.5 sits on the boundary, where both branches agree.
  ExpectScalarLoss(nn::smooth_l1_loss(x, y, 0.5), 0.8900000052);
  ExpectScalarLoss(nn::smooth_l1_loss(x, y, 0.5, "sum"), 5.340000031);
  ExpectLoss(nn::smooth_l1_loss(x, y, 0.5, "none"), {2, 3}, {0.25, 0.04000001907, 1.25, 0, 3.25, 0.5500000119});
  // beta 0 is l1_loss.
  ExpectScalarLoss(nn::smooth_l1_loss(x, y, 0.0), 1.083333343);
  ExpectLoss(nn::smooth_l1_loss(x, y, 0.0, "none"), {2, 3}, {0.5, 0.2000000477, 1.5, 0, 3.5, 0.8000000119});

  ExpectScalarLoss(nn::huber_loss(x, y), 0.7441666698);
  ExpectScalarLoss(nn::huber_loss(x, y, 1.0, "sum"), 4.465000019);
  ExpectLoss(nn::huber_loss(x, y, 1.0, "none"), {2, 3}, {0.125, 0.02000000954, 1, 0, 3, 0.3200000095});
  ExpectScalarLoss(nn::huber_loss(x, y, 2.0), 1.098333337);
  ExpectScalarLoss(nn::huber_loss(x, y, 2.0, "sum"), 6.590000019);
  ExpectLoss(nn::huber_loss(x, y, 2.0, "none"), {2, 3}, {0.125, 0.02000000954, 1.125, 0, 5, 0.3200000095});
  // Huber is smooth_l1 times delta: with delta 0.5, half of smooth_l1 with beta 0.5.
  ExpectScalarLoss(nn::huber_loss(x, y, 0.5), 0.4450000026);
  ExpectScalarLoss(nn::huber_loss(x, y, 0.5, "sum"), 2.670000015);
  ExpectLoss(nn::huber_loss(x, y, 0.5, "none"), {2, 3}, {0.125, 0.02000000954, 0.625, 0, 1.625, 0.275000006});
}

TEST(NnBreadth, BinaryCrossEntropyClampsItsLogsAtMinus100) {
  // Probabilities exactly 0 and 1: a right answer costs 0, a wrong one 100 (not inf, not nan).
  auto p = F32({0.0f, 1.0f, 0.25f, 0.0f, 1.0f, 0.9f}, {2, 3});
  auto t = F32({0.0f, 1.0f, 1.0f, 1.0f, 0.0f, 0.3f}, {2, 3});
  auto weight = F32({1.0f, 0.5f, 2.0f});  // broadcasts over the rows
  ExpectScalarLoss(nn::binary_cross_entropy(p, t), 33.83828532);
  ExpectScalarLoss(nn::binary_cross_entropy(p, t, std::nullopt, "sum"), 203.0297119);
  ExpectLoss(nn::binary_cross_entropy(p, t, std::nullopt, "none"), {2, 3}, {0, 0, 1.386294361, 100, 100, 1.643417535});
  ExpectScalarLoss(nn::binary_cross_entropy(p, t, weight), 26.00990397);
  ExpectScalarLoss(nn::binary_cross_entropy(p, t, weight, "sum"), 156.0594238);
  ExpectLoss(nn::binary_cross_entropy(p, t, weight, "none"), {2, 3}, {0, 0, 2.772588722, 100, 50, 3.286835069});
}

TEST(NnBreadth, BinaryCrossEntropyWithLogitsIsStableAtExtremeLogits) {
  auto x = F32({100.0f, -100.0f, 0.5f, -100.0f, 100.0f, -2.0f}, {2, 3});
  auto t = F32({1.0f, 0.0f, 1.0f, 1.0f, 0.0f, 0.25f}, {2, 3});
  auto pos_weight = F32({2.0f, 0.5f, 3.0f});  // one per column, broadcast over the rows
  auto weight = F32({1.0f, 2.0f, 0.5f, 0.25f, 1.5f, 1.0f}, {2, 3});
  ExpectScalarLoss(nn::binary_cross_entropy_with_logits(x, t), 33.51683417);
  ExpectScalarLoss(nn::binary_cross_entropy_with_logits(x, t, std::nullopt, std::nullopt, "sum"), 201.101005);
  ExpectLoss(nn::binary_cross_entropy_with_logits(x, t, std::nullopt, std::nullopt, "none"), {2, 3},
             {3.720075976e-44, 0, 0.4740769842, 100, 100, 0.626928011});
  ExpectScalarLoss(nn::binary_cross_entropy_with_logits(x, t, std::nullopt, pos_weight), 50.51877049);
  ExpectScalarLoss(nn::binary_cross_entropy_with_logits(x, t, std::nullopt, pos_weight, "sum"), 303.112623);
  ExpectLoss(nn::binary_cross_entropy_with_logits(x, t, std::nullopt, pos_weight, "none"), {2, 3},
             {7.440151952e-44, 0, 1.422230953, 200, 100, 1.690392017});
  ExpectScalarLoss(nn::binary_cross_entropy_with_logits(x, t, weight, pos_weight), 33.73358458);
  ExpectScalarLoss(nn::binary_cross_entropy_with_logits(x, t, weight, pos_weight, "sum"), 202.4015075);
  ExpectLoss(nn::binary_cross_entropy_with_logits(x, t, weight, pos_weight, "none"), {2, 3},
             {7.440151952e-44, 0, 0.7111154763, 50, 150, 1.690392017});
  // The gradient at +-100 is finite: (sigmoid(x) (1 + (pw - 1) t) - pw t) * weight / 6.
  auto leaf = x.detach().requires_grad_();
  nn::binary_cross_entropy_with_logits(leaf, t, weight, pos_weight).backward();
  ExpectClose(Vals(leaf.grad()), {0, 1.240025325e-44, -0.0943851672, -0.08333333333, 0.25, -0.09519926949}, 1e-5, 1e-6);
}

TEST(NnBreadth, KlDivForEachReductionWithZeroTargetProbabilities) {
  auto logp = F32({-1.2f, -0.7f, -1.5f, -0.3f, -2.0f, -1.0f}, {2, 3});
  auto target = F32({0.0f, 0.25f, 0.75f, 0.5f, 0.5f, 0.0f}, {2, 3});  // 0 log 0 counts as 0
  ExpectScalarLoss(nn::kl_div(logp, target), 0.1990862796);
  ExpectScalarLoss(nn::kl_div(logp, target, "sum"), 1.194517678);
  ExpectLoss(nn::kl_div(logp, target, "none"), {2, 3},
             {0, -0.1715735933, 0.9092384457, -0.1965735843, 0.6534264097, 0});
  ExpectScalarLoss(nn::kl_div(logp, target, "batchmean"), 0.5972588389);  // sum / N
}

TEST(NnBreadth, KlDivWithLogTarget) {
  auto logp = F32({-1.2f, -0.7f, -1.5f, -0.3f, -2.0f, -1.0f}, {2, 3});
  auto log_target = F32({-1.6f, -1.2f, -0.7f, -0.5f, -2.3f, -1.2f}, {2, 3});
  ExpectScalarLoss(nn::kl_div(logp, log_target, "mean", true), -0.007618348642);
  ExpectScalarLoss(nn::kl_div(logp, log_target, "sum", true), -0.04571009185);
  ExpectLoss(nn::kl_div(logp, log_target, "none", true), {2, 3},
             {-0.08075860046, -0.1505971167, 0.3972682537, -0.1213061247, -0.03007764977, -0.06023885387});
  ExpectScalarLoss(nn::kl_div(logp, log_target, "batchmean", true), -0.02285504593);
}

TEST(NnBreadth, CosineSimilarityAlongEachDim) {
  auto a = F32({1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 2.0f}, {2, 3});
  auto b = F32({2.0f, 0.0f, -1.0f, 0.5f, 0.5f, 0.5f}, {2, 3});
  ExpectLoss(nn::cosine_similarity(a, b), {2}, {-0.1195228609, 0.377964473});
  ExpectLoss(nn::cosine_similarity(a, b, -1), {2}, {-0.1195228609, 0.377964473});
  ExpectLoss(nn::cosine_similarity(a, b, 0), {3}, {0.5144957554, 0.242535625, -0.4961389384});
  // A zero vector gives 0, not nan; b broadcasts from [1, 3].
  ExpectLoss(nn::cosine_similarity(F32({0, 0, 0, 1, 2, 3}, {2, 3}), b), {2}, {0, 0.9258200998});
  ExpectLoss(nn::cosine_similarity(a, F32({1.0f, -1.0f, 0.5f}, {1, 3})), {2}, {0.08908708064, -0.1454785935});
  // eps bounds each norm from below, as in PyTorch: 1e-10 / (1e-4 * 1e-4).
  auto small = F32({1e-5f, 0.0f, 0.0f});
  ExpectLoss(nn::cosine_similarity(small, small, 0, 1e-4), {}, {0.009999999495}, 1e-4);
}

// ================================ Losses: gradients ================================

TEST(NnBreadth, CrossEntropyGradientsMatchFiniteDifferences) {
  auto target = I64({2, -100, 0});
  auto weight = F64({0.5, 2.0, 1.5, 1.0});
  for (const char* reduction : {"mean", "sum", "none"}) {
    SCOPED_TRACE(reduction);
    check_gradients([&](const auto& x) { return nn::cross_entropy(x[0], target, -100, 0.0, weight, reduction); },
                    {input({3, 4}, 11)});
    check_gradients([&](const auto& x) { return nn::cross_entropy(x[0], target, -100, 0.15, weight, reduction); },
                    {input({3, 4}, 12)});
  }
  check_gradients([&](const auto& x) { return nn::cross_entropy(x[0], target, -100, 0.3); }, {input({3, 4}, 13)});
  // [N, C, H, W] with [N, H, W] targets.
  auto target4 = I64({0, 2, 1, -100, 2, 2, 0, 1}, {2, 2, 2});
  auto weight3 = F64({1.0, 0.5, 2.0});
  check_gradients([&](const auto& x) { return nn::cross_entropy(x[0], target4, -100, 0.0, weight3); },
                  {input({2, 3, 2, 2}, 14)});
  check_gradients([&](const auto& x) { return nn::cross_entropy(x[0], target4, -100, 0.1, weight3, "none"); },
                  {input({2, 3, 2, 2}, 15)});
}

TEST(NnBreadth, NllLossGradientsMatchFiniteDifferences) {
  auto target = I64({1, 0, -100, 2});
  auto weight = F64({2.0, 0.5, 1.5});
  for (const char* reduction : {"mean", "sum", "none"}) {
    SCOPED_TRACE(reduction);
    check_gradients([&](const auto& x) { return nn::nll_loss(x[0], target, -100, weight, reduction); },
                    {input({4, 3}, 21, -3, 0)});
  }
  auto target4 = I64({0, 2, 1, -100, 2, 2, 0, 1}, {2, 2, 2});
  check_gradients([&](const auto& x) { return nn::nll_loss(x[0], target4, -100, F64({1.0, 0.5, 2.0})); },
                  {input({2, 3, 2, 2}, 22, -3, 0)});
}

TEST(NnBreadth, RegressionLossGradientsMatchFiniteDifferences) {
  for (const char* reduction : {"mean", "sum", "none"}) {
    SCOPED_TRACE(reduction);
    auto x = input({2, 3}, 31), y = input({2, 3}, 32);
    check_gradients([&](const auto& t) { return nn::mse_loss(t[0], t[1], reduction); }, {x, y});
    check_gradients([&](const auto& t) { return nn::l1_loss(t[0], t[1], reduction); }, {x, y});
    check_gradients([&](const auto& t) { return nn::smooth_l1_loss(t[0], t[1], 1.0, reduction); }, {x, y});
    check_gradients([&](const auto& t) { return nn::smooth_l1_loss(t[0], t[1], 0.5, reduction); }, {x, y});
    check_gradients([&](const auto& t) { return nn::huber_loss(t[0], t[1], 0.7, reduction); }, {x, y});
    check_gradients([&](const auto& t) { return nn::huber_loss(t[0], t[1], 2.5, reduction); }, {x, y});
  }
}

TEST(NnBreadth, BinaryCrossEntropyGradientsMatchFiniteDifferences) {
  auto weight = F64({1.0, 0.5, 2.0});
  auto pos_weight = F64({2.0, 0.5, 3.0});
  for (const char* reduction : {"mean", "sum", "none"}) {
    SCOPED_TRACE(reduction);
    auto p = input({2, 3}, 41, 0.05, 0.95), t = input({2, 3}, 42, 0, 1);
    check_gradients([&](const auto& x) { return nn::binary_cross_entropy(x[0], x[1], weight, reduction); }, {p, t});
    auto logits = input({2, 3}, 43, -4, 4);
    check_gradients(
        [&](const auto& x) { return nn::binary_cross_entropy_with_logits(x[0], x[1], weight, pos_weight, reduction); },
        {logits, t});
    check_gradients(
        [&](const auto& x) {
          return nn::binary_cross_entropy_with_logits(x[0], x[1], std::nullopt, std::nullopt, reduction);
        },
        {logits, t});
  }
}

TEST(NnBreadth, KlDivGradientsMatchFiniteDifferences) {
  for (const char* reduction : {"mean", "sum", "none", "batchmean"}) {
    SCOPED_TRACE(reduction);
    auto logp = input({2, 3}, 51, -3, -0.1), target = input({2, 3}, 52, 0.05, 1);
    check_gradients([&](const auto& x) { return nn::kl_div(x[0], x[1], reduction); }, {logp, target});
    auto log_target = input({2, 3}, 53, -3, 0);
    check_gradients([&](const auto& x) { return nn::kl_div(x[0], x[1], reduction, true); }, {logp, log_target});
    // Zero target probabilities: the gradient w.r.t. the input is -target there, i.e. 0.
    auto with_zeros = F64({0.0, 0.3, 0.7, 0.5, 0.5, 0.0}, {2, 3});
    check_gradients([&](const auto& x) { return nn::kl_div(x[0], with_zeros, reduction); }, {logp});
  }
}

TEST(NnBreadth, CosineSimilarityGradientsMatchFiniteDifferences) {
  auto a = input({3, 4}, 61), b = input({3, 4}, 62);
  check_gradients([](const auto& x) { return nn::cosine_similarity(x[0], x[1]); }, {a, b});
  check_gradients([](const auto& x) { return nn::cosine_similarity(x[0], x[1], 0); }, {a, b});
  check_gradients([](const auto& x) { return nn::cosine_similarity(x[0], x[1], -1); }, {a, b});
}

// ================================ Optimizers ================================

TEST(NnBreadth, RMSpropMatchesTorchAfterThreeSteps) {
  {
    SCOPED_TRACE("defaults, lr 0.01");
    Quadratic q;
    optim::RMSprop opt(q.params(), 0.01);
    TakeSteps(opt, q, 3);
    ExpectParams(q, {0.713877678, -0.783295393, 1.77857947}, 0.46769008);
    auto state = opt.state_dict();
    ExpectState(state, "square_avg.0", {0.138727322, 1.88762593, 0.0778619945});
    ExpectState(state, "square_avg.1", {2.61473083});
  }
  {
    SCOPED_TRACE("alpha 0.9, centered");
    Quadratic q;
    optim::RMSprop opt(q.params(), 0.01, {.alpha = 0.9, .centered = true});
    TakeSteps(opt, q, 3);
    ExpectParams(q, {0.579649806, -0.920057356, 1.91954863}, 0.330046088);
    auto state = opt.state_dict();
    ExpectState(state, "square_avg.0", {1.52431726, 20.1074562, 0.784538805});
    ExpectState(state, "grad_avg.0", {-0.642208457, -2.3330636, 0.460995704});
    ExpectState(state, "grad_avg.1", {-2.73073196});
  }
}

TEST(NnBreadth, RMSpropWithMomentumMatchesTorchAfterThreeSteps) {
  {
    SCOPED_TRACE("momentum 0.9, weight_decay 0.1");
    Quadratic q;
    optim::RMSprop opt(q.params(), 0.01, {.weight_decay = 0.1, .momentum = 0.9});
    TakeSteps(opt, q, 3);
    ExpectParams(q, {0.933514357, -0.559275985, 1.54960358}, 0.692314923);
    auto state = opt.state_dict();
    ExpectState(state, "square_avg.0", {0.119746916, 1.78848279, 0.0926827267});
    ExpectState(state, "momentum_buffer.0", {-17.9336948, -18.502737, 19.2588501});
    ExpectState(state, "momentum_buffer.1", {-18.6279736});
  }
  {
    SCOPED_TRACE("alpha 0.9, eps 1e-6, momentum 0.5, centered");
    Quadratic q;
    optim::RMSprop opt(q.params(), 0.01, {.alpha = 0.9, .eps = 1e-6, .momentum = 0.5, .centered = true});
    TakeSteps(opt, q, 3);
    ExpectParams(q, {0.61662823, -0.882941425, 1.88219738}, 0.36721015);
    auto state = opt.state_dict();
    ExpectState(state, "square_avg.1", {27.1244564});
    ExpectState(state, "grad_avg.0", {-0.635541856, -2.31306386, 0.458495736});
    ExpectState(state, "momentum_buffer.0", {-4.18117619, -4.21253824, 4.26656246});
  }
}

TEST(NnBreadth, AdagradMatchesTorchAfterThreeSteps) {
  {
    SCOPED_TRACE("defaults, lr 0.1");
    Quadratic q;
    optim::Adagrad opt(q.params(), 0.1);
    TakeSteps(opt, q, 3);
    ExpectParams(q, {0.713406444, -0.783768535, 1.77905321}, 0.467216551);
    auto state = opt.state_dict();
    ExpectState(state, "sum.0", {14.0439777, 191.014465, 7.87358093});
    ExpectState(state, "sum.1", {264.554138});
    ExpectState(state, "step", {3});
  }
  {
    SCOPED_TRACE("lr_decay 0.1, initial_accumulator_value 0.5, weight_decay 0.2");
    Quadratic q;
    optim::Adagrad opt(q.params(), 0.1, {.lr_decay = 0.1, .weight_decay = 0.2, .initial_accumulator_value = 0.5});
    TakeSteps(opt, q, 3);
    ExpectParams(q, {0.692438483, -0.798216224, 1.80090094}, 0.452520013);
    auto state = opt.state_dict();
    ExpectState(state, "sum.0", {13.2641048, 201.528793, 12.5995922});
    ExpectState(state, "sum.1", {263.304108});
    ExpectState(state, "step", {3});
  }
}

TEST(NnBreadth, LionFollowsThePapersRule) {
  // c = beta1 m + (1 - beta1) g; p <- p (1 - lr wd) - lr sign(c); m <- beta2 m + (1 - beta2) g.
  {
    SCOPED_TRACE("defaults, lr 0.1");
    Quadratic q;
    optim::Lion opt(q.params(), 0.1);
    TakeSteps(opt, q, 3);
    ExpectParams(q, {0.8, -0.7, 1.7}, 0.55);  // three steps of exactly lr against the gradient's sign
    auto state = opt.state_dict();
    ExpectState(state, "m.0", {-0.0622924939, -0.231428981, 0.0474917516});
    ExpectState(state, "m.1", {-0.272990495});
  }
  {
    SCOPED_TRACE("betas 0.8, 0.95, weight_decay 0.5");
    Quadratic q;
    optim::Lion opt(q.params(), 0.1, {.beta1 = 0.8, .beta2 = 0.95, .weight_decay = 0.5});
    TakeSteps(opt, q, 3);
    ExpectParams(q, {0.7139375, -0.572125, 1.4295}, 0.49959375);
    auto state = opt.state_dict();
    ExpectState(state, "m.0", {-0.309437513, -1.05887496, 0.222406238});
    ExpectState(state, "m.1", {-1.28368759});
  }
}

TEST(NnBreadth, OptimizerStateDictsNameEachState) {
  auto has = [](const std::map<std::string, xl::Tensor>& state, const std::string& name) {
    return state.count(name) == 1;
  };
  {
    Quadratic q;
    optim::RMSprop opt(q.params(), 0.01);
    TakeSteps(opt, q, 1);
    auto state = opt.state_dict();
    EXPECT_TRUE(has(state, "lr"));
    EXPECT_TRUE(has(state, "square_avg.0"));
    EXPECT_TRUE(has(state, "square_avg.1"));
    EXPECT_FALSE(has(state, "grad_avg.0"));         // not centered
    EXPECT_FALSE(has(state, "momentum_buffer.0"));  // no momentum
    EXPECT_EQ(state.at("square_avg.0").shape(), (xl::Shape{3}));
    EXPECT_EQ(state.at("square_avg.1").shape(), (xl::Shape{1}));
    EXPECT_NEAR(state.at("lr").to(xl::DType::f64).item<double>(), 0.01, 1e-12);
  }
  {
    Quadratic q;
    optim::RMSprop opt(q.params(), 0.01, {.momentum = 0.9, .centered = true});
    TakeSteps(opt, q, 1);
    auto state = opt.state_dict();
    for (const char* name :
         {"lr", "square_avg.0", "square_avg.1", "grad_avg.0", "grad_avg.1", "momentum_buffer.0", "momentum_buffer.1"})
      EXPECT_TRUE(has(state, name)) << name;
  }
  {
    Quadratic q;
    optim::Adagrad opt(q.params(), 0.1);
    TakeSteps(opt, q, 1);
    auto state = opt.state_dict();
    for (const char* name : {"lr", "step", "sum.0", "sum.1"}) EXPECT_TRUE(has(state, name)) << name;
    EXPECT_EQ(state.at("step").shape(), (xl::Shape{}));
    EXPECT_EQ(state.at("step").to(xl::DType::f64).item<double>(), 1.0);
  }
  {
    Quadratic q;
    optim::Lion opt(q.params(), 0.1);
    TakeSteps(opt, q, 1);
    auto state = opt.state_dict();
    for (const char* name : {"lr", "m.0", "m.1"}) EXPECT_TRUE(has(state, name)) << name;
    EXPECT_EQ(state.at("m.0").shape(), (xl::Shape{3}));
  }
}

// Resume: three steps, then the state_dict loaded into a fresh optimizer (built with another lr) over a copy
// of the parameters; one more step of each must agree with each other and with PyTorch's fourth step.
TEST(NnBreadth, RMSpropResumesFromItsStateDict) {
  Quadratic q, resumed;
  optim::RMSpropOptions options{.alpha = 0.9, .eps = 1e-6, .momentum = 0.5, .centered = true};
  optim::RMSprop opt(q.params(), 0.01, options);
  TakeSteps(opt, q, 3);
  CopyParams(q, resumed);
  optim::RMSprop fresh(resumed.params(), 0.5, options);
  fresh.load_state_dict(opt.state_dict());
  EXPECT_NEAR(fresh.lr(), 0.01, 1e-12);
  TakeSteps(opt, q, 1);
  TakeSteps(fresh, resumed, 1);
  ExpectParams(q, {0.656426966, -0.842586219, 1.84089923}, 0.407760262);
  ExpectParams(resumed, {0.656426966, -0.842586219, 1.84089923}, 0.407760262);
}

TEST(NnBreadth, AdagradResumesFromItsStateDict) {
  Quadratic q, resumed;
  optim::AdagradOptions options{.lr_decay = 0.1, .weight_decay = 0.2, .initial_accumulator_value = 0.5};
  optim::Adagrad opt(q.params(), 0.1, options);
  TakeSteps(opt, q, 3);
  CopyParams(q, resumed);
  optim::Adagrad fresh(resumed.params(), 0.7, options);
  fresh.load_state_dict(opt.state_dict());  // the step count matters: lr / (1 + 3 lr_decay) next
  EXPECT_EQ(fresh.state_dict().at("step").to(xl::DType::f64).item<double>(), 3.0);
  TakeSteps(opt, q, 1);
  TakeSteps(fresh, resumed, 1);
  ExpectParams(q, {0.722915888, -0.765243173, 1.7659862}, 0.485857278);
  ExpectParams(resumed, {0.722915888, -0.765243173, 1.7659862}, 0.485857278);
}

TEST(NnBreadth, LionResumesFromItsStateDict) {
  Quadratic q, resumed;
  optim::LionOptions options{.beta1 = 0.8, .beta2 = 0.95, .weight_decay = 0.5};
  optim::Lion opt(q.params(), 0.1, options);
  TakeSteps(opt, q, 3);
  CopyParams(q, resumed);
  optim::Lion fresh(resumed.params(), 0.3, options);
  fresh.load_state_dict(opt.state_dict());
  TakeSteps(opt, q, 1);
  TakeSteps(fresh, resumed, 1);
  ExpectParams(q, {0.778240681, -0.443518668, 1.25802481}, 0.574614048);
  ExpectParams(resumed, {0.778240681, -0.443518668, 1.25802481}, 0.574614048);
  // The fresh optimizer's state is its own: the original's m after four steps equals the resumed one's.
  std::vector<float> fresh_m = fresh.state_dict().at("m.0").to_vector<float>();
  ExpectClose(opt.state_dict().at("m.0").to_vector<float>(), DV(fresh_m.begin(), fresh_m.end()), 1e-6, 1e-7);
}

TEST(NnBreadth, SetLrChangesTheNextStep) {
  {
    SCOPED_TRACE("RMSprop, lr 0.01 then 0.05");
    Quadratic q;
    optim::RMSprop opt(q.params(), 0.01);
    TakeSteps(opt, q, 3);
    opt.set_lr(0.05);
    EXPECT_EQ(opt.lr(), 0.05);
    EXPECT_NEAR(opt.state_dict().at("lr").to(xl::DType::f64).item<double>(), 0.05, 1e-12);
    TakeSteps(opt, q, 1);
    ExpectParams(q, {0.915893018, -0.571412981, 1.55069911}, 0.683031738);
  }
  {
    SCOPED_TRACE("RMSprop with momentum, lr 0.01 then 0.05");
    Quadratic q;
    optim::RMSprop opt(q.params(), 0.01, {.weight_decay = 0.1, .momentum = 0.9});
    TakeSteps(opt, q, 3);
    opt.set_lr(0.05);
    TakeSteps(opt, q, 1);
    ExpectParams(q, {1.83397126, 0.409338236, 0.493866652}, 1.67590141);
  }
  {
    SCOPED_TRACE("Adagrad, lr 0.1 then 0.3");
    Quadratic q;
    optim::Adagrad opt(q.params(), 0.1, {.lr_decay = 0.1, .weight_decay = 0.2, .initial_accumulator_value = 0.5});
    TakeSteps(opt, q, 3);
    opt.set_lr(0.3);
    TakeSteps(opt, q, 1);
    ExpectParams(q, {0.783870578, -0.69929713, 1.69615674}, 0.552531779);
  }
  {
    SCOPED_TRACE("Lion, lr 0.1 then 0.02");
    Quadratic q;
    optim::Lion opt(q.params(), 0.1, {.beta1 = 0.8, .beta2 = 0.95, .weight_decay = 0.5});
    TakeSteps(opt, q, 3);
    opt.set_lr(0.02);
    TakeSteps(opt, q, 1);
    ExpectParams(q, {0.726798117, -0.546403646, 1.3952049}, 0.514597774);
  }
}

// ================================ Errors ================================

TEST(NnBreadth, LossErrorsNameTheLoss) {
  auto a = F32({1, 2, 3}), b = F32({1, 2});
  ExpectErrorContaining("[mse_loss]", [&] { nn::mse_loss(a, b).to_vector<float>(); });
  ExpectErrorContaining("[l1_loss]", [&] { nn::l1_loss(a, b).to_vector<float>(); });
  ExpectErrorContaining("[binary_cross_entropy_with_logits]",
                        [&] { nn::binary_cross_entropy_with_logits(a, b).to_vector<float>(); });
  ExpectErrorContaining("[kl_div]", [&] { nn::kl_div(a, b).to_vector<float>(); });

  // Bad reduction strings; only kl_div takes "batchmean".
  ExpectErrorContaining("[l1_loss] reduction must be", [&] { nn::l1_loss(a, a, "avg").to_vector<float>(); });
  ExpectErrorContaining("[mse_loss] reduction must be", [&] { nn::mse_loss(a, a, "batchmean").to_vector<float>(); });
  ExpectErrorContaining("[huber_loss] reduction must be",
                        [&] { nn::huber_loss(a, a, 1.0, "Mean").to_vector<float>(); });
  ExpectErrorContaining("[kl_div] reduction must be", [&] { nn::kl_div(a, a, "batch").to_vector<float>(); });
  ExpectErrorContaining("[cross_entropy] reduction must be", [&] {
    nn::cross_entropy(LogitsA(), TargetA(), -100, 0.0, std::nullopt, "avg").to_vector<float>();
  });
  ExpectErrorContaining("[nll_loss] reduction must be",
                        [&] { nn::nll_loss(LogitsA(), TargetA(), -100, std::nullopt, "").to_vector<float>(); });

  // Class losses: float targets, class weights of the wrong size, targets of the wrong shape.
  ExpectErrorContaining("[cross_entropy]", [&] { nn::cross_entropy(LogitsA(), F32({0, 2, 1, 1})).to_vector<float>(); });
  ExpectErrorContaining("[nll_loss]", [&] { nn::nll_loss(LogitsA(), F32({0, 2, 1, 1})).to_vector<float>(); });
  for (const auto& bad_weight : {F32({1, 2}), F32({1, 2, 3, 4}), F32({1, 2, 3, 4, 5, 6}, {2, 3})}) {
    std::string msg =
        ErrorMessage([&] { nn::cross_entropy(LogitsA(), TargetA(), -100, 0.0, bad_weight).to_vector<float>(); });
    EXPECT_NE(msg.find("[cross_entropy]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("weight"), std::string::npos) << msg;
    ExpectErrorContaining("[nll_loss]",
                          [&] { nn::nll_loss(LogitsA(), TargetA(), -100, bad_weight).to_vector<float>(); });
  }
  ExpectErrorContaining("[cross_entropy]",  // [N, C, H, W] logits need [N, H, W] targets
                        [&] { nn::cross_entropy(LogitsB(), I64({0, 1, 2, 0}, {2, 2})).to_vector<float>(); });
  ExpectErrorContaining("[cross_entropy]",  // label_smoothing outside [0, 1]
                        [&] { nn::cross_entropy(LogitsA(), TargetA(), -100, 1.5).to_vector<float>(); });

  // Thresholds.
  ExpectErrorContaining("[huber_loss]", [&] { nn::huber_loss(a, a, 0.0).to_vector<float>(); });
  ExpectErrorContaining("[huber_loss]", [&] { nn::huber_loss(a, a, -1.0).to_vector<float>(); });
  ExpectErrorContaining("[smooth_l1_loss]", [&] { nn::smooth_l1_loss(a, a, -0.5).to_vector<float>(); });
}

TEST(NnBreadth, OptimizerErrorsNameTheOptimizer) {
  Quadratic q;
  ExpectErrorContaining("[RMSprop]", [&] { optim::RMSprop(q.params(), 0.01, {.alpha = -0.1}); });
  ExpectErrorContaining("[RMSprop]", [&] { optim::RMSprop(q.params(), 0.01, {.alpha = 1.5}); });
  EXPECT_NO_THROW((optim::RMSprop(q.params(), 0.01, {.alpha = 0.0})));
  EXPECT_NO_THROW((optim::RMSprop(q.params(), 0.01, {.alpha = 1.0})));
  ExpectErrorContaining("[Adagrad]", [&] { optim::Adagrad(q.params(), 0.1, {.lr_decay = -0.1}); });
  ExpectErrorContaining("[Lion]", [&] { optim::Lion(q.params(), 0.1, {.beta1 = 1.5}); });
  ExpectErrorContaining("[Lion]", [&] { optim::Lion(q.params(), 0.1, {.beta1 = -0.1}); });
  ExpectErrorContaining("[Lion]", [&] { optim::Lion(q.params(), 0.1, {.beta2 = 1.01}); });
  ExpectErrorContaining("[Lion]", [&] { optim::Lion(q.params(), 0.1, {.beta2 = -0.5}); });
  EXPECT_NO_THROW((optim::Lion(q.params(), 0.1, {.beta1 = 0.0, .beta2 = 1.0})));
  // A bad name in a state_dict raises and leaves the optimizer as it was.
  optim::Lion lion(q.params(), 0.1);
  auto state = lion.state_dict();
  state["velocity.0"] = xl::zeros({3});
  EXPECT_THROW(lion.load_state_dict(state), xl::Error);
  EXPECT_EQ(lion.lr(), 0.1);
}
