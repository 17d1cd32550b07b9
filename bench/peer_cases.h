// The workloads of the peer comparison and the order they run in, written once for the C++ sides (xlite's
// bench/peer_workloads.cpp and libtorch's bench/torch_workloads_peer.cpp; bench/peers.py has them for the
// Python frameworks). A side is a class F with
//   using Tensor;  Tensor input(shape) (of peer_inputs::input_values);  Tensor targets(rows);
//   static tanh, sigmoid, gelu (erf), exp, log, abs;
//   softmax, layernorm and rmsnorm over rows of peer_inputs::kColumns (weight one, bias zero);
//   cross_entropy(logits, targets) (the mean loss); cross_entropy_grad(logits, targets) (the gradient of that
//   loss, as a training step's head computes it; a side may return the loss too, after the gradient);
//   run_case(name, fn, copy_bytes): times fn and prints the case's lines, its copy moving copy_bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "peer_inputs.h"

namespace peer_cases {

// 12 elementwise ops with tanh, sigmoid and gelu (erf).
template <class F, class T>
T chain_tanh_sigmoid_gelu(const T& x) {
  T y = x * 0.5f + 0.1f;
  y = F::tanh(y);
  y = y * 1.7f - 0.2f;
  y = F::sigmoid(y);
  y = y * 3.0f - 1.0f;
  y = F::gelu(y);
  y = y + 0.05f;
  y = y * y;
  return y * 0.9f;
}

// 11 elementwise ops with exp, log and tanh.
template <class F, class T>
T chain_exp_log_tanh(const T& x) {
  T y = x * 0.5f;
  y = F::exp(y);
  y = y + 1.0f;
  y = F::log(y);
  y = y * 2.0f - 0.3f;
  y = F::tanh(y);
  y = y * 0.8f + 0.1f;
  y = F::abs(y);
  return y * 1.25f;
}

// Every case of `what` (all, chains, alone or rows), in order.
template <class F>
void run(F& f, const std::string& what) {
  using T = typename F::Tensor;
  using peer_inputs::size_label;
  if (what == "all" || what == "chains")
    for (int64_t n : peer_inputs::kChainElements) {
      T x = f.input({n});
      const size_t bytes = static_cast<size_t>(n) * sizeof(float);
      f.run_case("chain_tanh_sigmoid_gelu." + size_label(n), [&] { return chain_tanh_sigmoid_gelu<F>(x); }, bytes);
      f.run_case("chain_exp_log_tanh." + size_label(n), [&] { return chain_exp_log_tanh<F>(x); }, bytes);
    }
  if (what == "all" || what == "alone") {
    // One transcendental alone, to compare with the chains.
    const int64_t n = peer_inputs::kAloneElements;
    T x = f.input({n});
    const size_t bytes = static_cast<size_t>(n) * sizeof(float);
    f.run_case("alone.tanh", [&] { return F::tanh(x); }, bytes);
    f.run_case("alone.sigmoid", [&] { return F::sigmoid(x); }, bytes);
    f.run_case("alone.gelu", [&] { return F::gelu(x); }, bytes);
    f.run_case("alone.exp", [&] { return F::exp(x); }, bytes);
    f.run_case("alone.log", [&] { return F::log(F::abs(x)); }, bytes);
  }
  if (what == "all" || what == "rows")
    for (int64_t rows : peer_inputs::kRows) {
      const int64_t cols = peer_inputs::kColumns;
      T x = f.input({rows, cols});
      T target = f.targets(rows);
      const size_t bytes = static_cast<size_t>(rows * cols) * sizeof(float);
      const std::string size = size_label(rows * cols);
      f.run_case("softmax." + size, [&] { return f.softmax(x); }, bytes);
      f.run_case("layernorm." + size, [&] { return f.layernorm(x); }, bytes);
      f.run_case("rmsnorm." + size, [&] { return f.rmsnorm(x); }, bytes);
      // The loss reads the logits once and writes a scalar: half a copy's traffic.
      f.run_case("cross_entropy." + size, [&] { return f.cross_entropy(x, target); }, bytes / 2);
      // Reads the logits, writes their gradient: a copy's traffic.
      f.run_case("cross_entropy_grad." + size, [&] { return f.cross_entropy_grad(x, target); }, bytes);
    }
}

// A program's work: a side made here (its constructor may throw too) runs every case of `what`; an exception
// ends the program with its message and status 1.
template <class F>
int run_or_report(const std::string& what, const char* program) {
  try {
    F side;
    run(side, what);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
  return 0;
}

}  // namespace peer_cases
