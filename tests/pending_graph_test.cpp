// What a sync walks before it runs anything: the pending graph's hash and its match against cached
// graphs (which let a sync skip building an ir::Graph), the registry of pending tensors, and the metric
// handles that hot paths record through.
#include <gtest/gtest.h>

#include <cmath>
#include <xlite/xlite.h>

#include "tensor/live_tensors.h"
#include "tensor/tensor_impl.h"
#include "ir/graph.h"
#include "lazy/graph_builder.h"

namespace xl = xlite;

namespace {
std::vector<xl::ir::NodePtr> roots_of(const std::vector<xl::Tensor>& tensors) {
  std::vector<xl::ir::NodePtr> roots;
  for (const auto& t : tensors) roots.push_back(t.impl()->node());
  return roots;
}

// Pending programs of several kinds: aliasing leaves, computed values read as leaves, shared
// subexpressions, several roots (one of them twice), attributes of every kind, scalars.
std::vector<std::vector<xl::Tensor>> programs() {
  xl::manual_seed(7);
  auto a = xl::randn({4, 3});
  auto b = xl::randn({3});
  auto w = xl::randn({3, 5});
  xl::sync();
  auto computed = xl::exp(a);
  xl::sync();  // now a computed value that later graphs read as a leaf
  auto shared = a * b;
  std::vector<std::vector<xl::Tensor>> out;
  out.push_back({a + a});
  out.push_back({xl::matmul(a, w) + 1.5f});
  out.push_back({xl::sum(shared, {1}), xl::amax(shared, {0}), shared});
  out.push_back({computed * a, computed});
  out.push_back({xl::softmax(a, -1).transpose(0, 1).reshape({12})});
  auto r = xl::relu(a - 0.25f);
  out.push_back({r, r, xl::cos(r)});
  out.push_back({a.slice(0, 1, 3), xl::concat({a, a}, 0)});
  return out;
}
}  // namespace

TEST(PendingGraph, HashAndMatchAgreeWithTheGraphItBuilds) {
  auto progs = programs();
  std::vector<xl::ir::Graph> graphs;
  std::vector<uint64_t> hashes;
  xl::lazy::PendingGraph walked;
  for (const auto& prog : progs) {
    walked.walk(roots_of(prog));
    xl::ir::Graph graph = walked.build();
    EXPECT_EQ(walked.hash(), graph.hash()) << xl::ir::to_text(graph);
    EXPECT_TRUE(walked.matches(graph)) << xl::ir::to_text(graph);
    EXPECT_EQ(walked.num_instrs(), graph.instrs.size());
    graphs.push_back(std::move(graph));
    hashes.push_back(walked.hash());
  }
  // Each walk recognises its own graph only.
  for (size_t i = 0; i < progs.size(); ++i) {
    walked.walk(roots_of(progs[i]));
    for (size_t j = 0; j < graphs.size(); ++j) {
      EXPECT_EQ(walked.matches(graphs[j]), i == j) << i << " vs " << j;
      if (i != j) {
        EXPECT_NE(hashes[i], hashes[j]) << i << " vs " << j;
      }
    }
  }
}

TEST(PendingGraph, OneBufferIsOneParameterAndRootsShareOutputs) {
  auto x = xl::randn({5});
  xl::sync();
  auto y = x * x;
  xl::lazy::PendingGraph walked;
  walked.walk(roots_of({y, y, x}));
  ASSERT_EQ(walked.arguments().size(), 1u);
  EXPECT_EQ(walked.leaves_per_argument()[0], 1);
  ASSERT_EQ(walked.root_outputs().size(), 3u);
  EXPECT_EQ(walked.root_outputs()[0], walked.root_outputs()[1]);
  EXPECT_NE(walked.root_outputs()[0], walked.root_outputs()[2]);
  xl::ir::Graph graph = walked.build();
  EXPECT_EQ(graph.num_parameters, 1);
  EXPECT_EQ(graph.outputs.size(), 2u);
  ASSERT_EQ(walked.argument_types().size(), 1u);
  EXPECT_EQ(walked.argument_types()[0].first, (xl::Shape{5}));
  walked.release();
  EXPECT_TRUE(walked.arguments().empty());
}

TEST(PendingGraph, ADifferentShapeOrAttributeDoesNotMatch) {
  auto a = xl::randn({2, 3});
  auto b = xl::randn({3, 2});
  xl::sync();
  xl::lazy::PendingGraph walked;
  walked.walk(roots_of({xl::sum(a, {1})}));
  xl::ir::Graph sum_rows = walked.build();
  walked.walk(roots_of({xl::sum(a, {0})}));
  EXPECT_FALSE(walked.matches(sum_rows));
  walked.walk(roots_of({xl::sum(b, {1})}));
  EXPECT_FALSE(walked.matches(sum_rows));
  walked.walk(roots_of({xl::sum(a, {1})}));
  EXPECT_TRUE(walked.matches(sum_rows));
}

TEST(LiveTensors, PendingTensorsAreListedInCreationOrderOnce) {
  xl::sync();
  auto a = xl::randn({3});
  xl::sync();
  auto first = a + 1.0f;
  auto second = a * 3.0f;
  a.add_(2.0f);  // an older tensor becomes pending again: still listed by creation order
  auto pending = xl::live_tensors::pending_in_order();
  ASSERT_EQ(pending.size(), xl::live_tensors::pending_count());
  // a.add_ builds its scalar operand as a tensor too; it is not pending (uploaded data).
  ASSERT_EQ(pending.size(), 3u);
  EXPECT_EQ(pending[0], a.impl());
  EXPECT_EQ(pending[1], first.impl());
  EXPECT_EQ(pending[2], second.impl());
  pending.clear();
  xl::live_tensors::add(first.impl().get());  // adding twice lists it once
  EXPECT_EQ(xl::live_tensors::pending_count(), 3u);
  {
    auto dropped = first;
    first = xl::Tensor();
  }  // the last handle dies: the tensor leaves the registry
  EXPECT_EQ(xl::live_tensors::pending_count(), 2u);
  xl::sync();
  EXPECT_EQ(xl::live_tensors::pending_count(), 0u);
  EXPECT_NEAR(second.to_vector<float>()[1], (a.to_vector<float>()[1] - 2.0f) * 3.0f, 1e-5);
}

TEST(Metrics, HandlesRecordUnderTheirNamesAcrossClears) {
  xl::metrics::clear_all();
  const xl::metrics::Counter counter("HandleCounter");
  const xl::metrics::Metric metric("HandleMetric");
  EXPECT_EQ(xl::metrics::counter_value("HandleCounter"), 0);
  auto names = xl::metrics::counter_names();
  EXPECT_EQ(std::find(names.begin(), names.end(), "HandleCounter"), names.end());  // nothing recorded yet
  counter.increment();
  counter.increment(4);
  xl::metrics::increment_counter("HandleCounter");
  metric.add_sample(2.0);
  xl::metrics::add_sample("HandleMetric", 4.0);
  EXPECT_EQ(xl::metrics::counter_value("HandleCounter"), 6);
  EXPECT_EQ(xl::metrics::metric_data("HandleMetric").recent, (std::vector<double>{2.0, 4.0}));
  xl::metrics::clear_all();
  EXPECT_EQ(xl::metrics::counter_value("HandleCounter"), 0);
  EXPECT_EQ(xl::metrics::metric_data("HandleMetric").samples, 0);
  EXPECT_EQ(xl::metrics::metrics_report().find("HandleCounter"), std::string::npos);
  counter.increment();
  metric.add_sample(1.0);
  EXPECT_EQ(xl::metrics::counter_value("HandleCounter"), 1);
  EXPECT_EQ(xl::metrics::metric_data("HandleMetric").total, 1.0);
}

// In eager mode the node that made a result becomes the result's data leaf, without its history, so the
// next op needs no new leaf and a long loop holds no chain of old nodes; a node autograd still needs, or
// another tensor shares, is left whole.
TEST(PendingGraph, AnEagerResultKeepsTheNodeThatMadeItAsItsLeaf) {
  xl::EagerModeGuard eager(true);
  auto x = xl::tensor(std::vector<float>{1, 2, 3});
  auto y = xl::exp(x) * 2.0f;
  ASSERT_FALSE(y.is_pending());
  xl::ir::NodePtr leaf = y.impl()->node();
  EXPECT_EQ(leaf->op, xl::ir::OpId::mul);
  EXPECT_TRUE(leaf->operands.empty());
  EXPECT_EQ(leaf->computed, y.impl()->data());
  auto z = y + y;  // the leaf is read like a parameter
  EXPECT_FLOAT_EQ(z.to_vector<float>()[2], 4.0f * std::exp(3.0f));

  auto w = xl::tensor(std::vector<float>{0.5f, 1.5f});
  w.requires_grad_();
  auto v = xl::sin(w);
  EXPECT_FALSE(v.impl()->autograd_node()->operands.empty());  // backward still walks through it
  xl::sum(v).backward();
  EXPECT_FLOAT_EQ(w.grad().to_vector<float>()[1], std::cos(1.5f));
}
