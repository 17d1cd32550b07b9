#pragma once
// compile(fn): one compiled program per call of a step function, in lazy or eager mode.
//
// The first calls trace fn lazily and end with one sync whose outputs are fn's results and every tensor
// fn updated in place. Once two traces for the same input signature agree, later calls with that
// signature replay the compiled program without running fn at all: they feed it the current arguments
// and the current values of the tensors fn reached by itself (module parameters, optimizer states,
// gradients), rebind the tensors it updates, and return its results.
//
// Replay is JAX-like, not PyTorch-like: host code in fn does not run on a replayed call. What a replay
// repeats, and what it guards on (a failed guard traces again; XLITE_DEBUG=1 prints which guard):
//  - the signature: each argument's dtype, shape, device and requires_grad, scalar arguments by value,
//    the grad mode, the autocast scope around the call (xlite/autocast.h) and fast math (xlite/math_mode.h);
//  - the tensors fn read that existed before the call: they must still exist, keep their requires_grad
//    and their gradient tensor, and tensors that shared storage in the trace must still share it. A
//    gradient fn drops (reset_grad(), zero_grad()) before anything reads it may be any: the replay drops it
//    too, as tracing would;
//  - those tensors by identity, not the C++ variables that named them: a replay reads the tensor the
//    trace read. Rebinding a variable fn reads (w = other) is seen when the old tensor dies or has fewer
//    handles than after the trace. A handle taken after the trace (another variable, a state_dict() kept
//    around) hides the rebinding, and a handle dropped after the trace (a copy in a helper's closure)
//    costs one needless retrace. Pass a tensor that fn's caller swaps as an argument;
//  - random draws continue the generator's sequence exactly as tracing would have;
//  - host values that fn turned into graph inputs (a float multiplied into a tensor, a tensor made from
//    a host vector) are fed as they were traced. A value that differs between two traces keeps the
//    step tracing; one that changes later (a learning rate kept in a host variable) is not seen: pass it
//    as an argument, keep it in a tensor, or use force_retrace. xlite's optimizers keep learning rate
//    and step count in tensors for this reason.
//  - host flags fn read through a TracedFlag, such as a module's training mode (train()/eval()): a
//    changed flag traces again;
//  - requires_grad() and grad() of existing tensors that fn asked for.
// A program is replayed only after two traces in a row for the same signature made the same graph with
// the same host values, so a fn whose graph alternates with host state it keeps to itself (a counter in
// its closure) traces every call. Host state that changes after that (a variable in the closure, a
// module's hyperparameter such as Dropout::p) is not seen: fn must be a function of its arguments, the
// tensors it reads and its TracedFlags, as jax.jit requires.
// A call never replays when fn's result is not made of tensors (void, Tensor, std::vector<Tensor>,
// std::pair/std::tuple of those), when fn read a value on the host while tracing (item(), to_vector(),
// printing, save()), synced or ran an eager op (CompileOptions::full_graph raises for these instead), or
// when fn kept a new tensor outside its results. Results of a replayed call carry no autograd history.
// A compiled function may be called from several threads: the calls take turns.
#include <cstddef>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "xlite/tensor.h"
#include "xlite/traced_flag.h"

namespace xlite {

struct CompileOptions {
  // true: every call runs fn to trace it, so host-side effects happen on every call (PyTorch/XLA's
  // behaviour); the structural cache still compiles each distinct graph once.
  bool force_retrace = false;
  // true: fn must compile to one graph that replays. A value read on the host, a sync() or an eager op
  // inside fn raises xlite::Error at that point (before fn's updates take effect) instead of splitting
  // the step; a trace that cannot be replayed for another reason raises after it ran.
  bool full_graph = false;
  // > 0: a call whose trace would make the (N+1)-th different graph of this function raises xlite::Error
  // instead of compiling it (torch_xla's num_different_graphs_allowed), with the reason it traced.
  int max_different_graphs = 0;
};

// How the last call of a compiled function ran.
struct StepCallInfo {
  bool replayed = false;
  std::string trace_reason;  // why it traced instead of replaying; empty when it replayed
};

namespace detail {

// One argument of a compiled call, as the signature sees it.
struct StepInput {
  enum class Kind { tensor, value, unguardable };
  Kind kind = Kind::value;
  Tensor tensor;      // Kind::tensor
  std::string value;  // Kind::value: part of the signature
};

// A result of fn flattened to tensors, with the sizes of the vectors in it.
struct StepValues {
  std::vector<Tensor> tensors;
  std::vector<size_t> sizes;
};

class StepRunner {
 public:
  explicit StepRunner(CompileOptions options);
  ~StepRunner();
  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  // Held for a whole call: calls from several threads take turns, and a call of the same compiled
  // function from inside fn raises xlite::Error instead of deadlocking.
  class CallGuard {
   public:
    explicit CallGuard(StepRunner& runner);
    ~CallGuard();
    CallGuard(const CallGuard&) = delete;
    CallGuard& operator=(const CallGuard&) = delete;

   private:
    StepRunner& runner_;
  };

  // Runs a recorded program that matches; false when the call must trace (the reason is kept).
  bool replay(const std::vector<StepInput>& inputs, StepValues& results);
  // Flushes earlier pending work and starts tracing in lazy mode.
  void begin_trace(const std::vector<StepInput>& inputs);
  // One sync of everything fn left pending. results == nullptr: fn's result cannot be rebuilt.
  void end_trace(const StepValues* results);
  // fn threw: restore the mode and undo the in-place updates fn made.
  void abandon_trace();
  StepCallInfo last_call() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Restores everything if fn throws between begin_trace and commit.
class StepTrace {
 public:
  StepTrace(StepRunner& runner, const std::vector<StepInput>& inputs) : runner_(runner) { runner_.begin_trace(inputs); }
  ~StepTrace() {
    if (!committed_) runner_.abandon_trace();
  }
  StepTrace(const StepTrace&) = delete;
  StepTrace& operator=(const StepTrace&) = delete;
  void commit(const StepValues* results) {
    committed_ = true;
    runner_.end_trace(results);
  }

 private:
  StepRunner& runner_;
  bool committed_ = false;
};

std::string step_value_text(double value);

template <class T, class = void>
struct StepInputOf {
  static void add(std::vector<StepInput>& inputs, const T&) {
    inputs.push_back({StepInput::Kind::unguardable, {}, {}});
  }
};
template <>
struct StepInputOf<Tensor> {
  static void add(std::vector<StepInput>& inputs, const Tensor& t) {
    inputs.push_back({StepInput::Kind::tensor, t, {}});
  }
};
template <>
struct StepInputOf<std::vector<Tensor>> {
  static void add(std::vector<StepInput>& inputs, const std::vector<Tensor>& ts) {
    inputs.push_back({StepInput::Kind::value, {}, "vector of " + std::to_string(ts.size())});
    for (const Tensor& t : ts) inputs.push_back({StepInput::Kind::tensor, t, {}});
  }
};
template <class T>
struct StepInputOf<T, std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>>> {
  static void add(std::vector<StepInput>& inputs, const T& v) {
    inputs.push_back({StepInput::Kind::value, {}, step_value_text(static_cast<double>(v))});
  }
};
template <>
struct StepInputOf<std::string> {
  static void add(std::vector<StepInput>& inputs, const std::string& v) {
    inputs.push_back({StepInput::Kind::value, {}, v});
  }
};

// Which results can be rebuilt from tensors, and how.
template <class R>
struct StepResultOf {
  static constexpr bool replayable = false;
};
template <>
struct StepResultOf<void> {
  static constexpr bool replayable = true;
};
template <>
struct StepResultOf<Tensor> {
  static constexpr bool replayable = true;
  static void flatten(const Tensor& t, StepValues& out) { out.tensors.push_back(t); }
  static Tensor rebuild(const StepValues& in, size_t& tensor, size_t&) { return in.tensors[tensor++]; }
};
template <>
struct StepResultOf<std::vector<Tensor>> {
  static constexpr bool replayable = true;
  static void flatten(const std::vector<Tensor>& ts, StepValues& out) {
    out.sizes.push_back(ts.size());
    out.tensors.insert(out.tensors.end(), ts.begin(), ts.end());
  }
  static std::vector<Tensor> rebuild(const StepValues& in, size_t& tensor, size_t& size) {
    size_t n = in.sizes[size++];
    std::vector<Tensor> ts(in.tensors.begin() + tensor, in.tensors.begin() + tensor + n);
    tensor += n;
    return ts;
  }
};
template <class... Ts>
struct StepResultOf<std::tuple<Ts...>> {
  static constexpr bool replayable = (StepResultOf<Ts>::replayable && ...);
  static void flatten(const std::tuple<Ts...>& t, StepValues& out) {
    std::apply([&](const Ts&... parts) { (StepResultOf<Ts>::flatten(parts, out), ...); }, t);
  }
  static std::tuple<Ts...> rebuild(const StepValues& in, size_t& tensor, size_t& size) {
    return std::tuple<Ts...>{StepResultOf<Ts>::rebuild(in, tensor, size)...};  // braces: left to right
  }
};
template <class A, class B>
struct StepResultOf<std::pair<A, B>> {
  static constexpr bool replayable = StepResultOf<A>::replayable && StepResultOf<B>::replayable;
  static void flatten(const std::pair<A, B>& p, StepValues& out) {
    StepResultOf<A>::flatten(p.first, out);
    StepResultOf<B>::flatten(p.second, out);
  }
  static std::pair<A, B> rebuild(const StepValues& in, size_t& tensor, size_t& size) {
    return std::pair<A, B>{StepResultOf<A>::rebuild(in, tensor, size), StepResultOf<B>::rebuild(in, tensor, size)};
  }
};

}  // namespace detail

template <class Fn>
class Compiled {
 public:
  Compiled(Fn fn, CompileOptions options)
      : fn_(std::move(fn)), runner_(std::make_shared<detail::StepRunner>(options)) {}

  template <class... Args>
  decltype(auto) operator()(Args&&... args) {
    using R = std::invoke_result_t<Fn&, Args&&...>;
    detail::StepRunner::CallGuard one_call_at_a_time(*runner_);
    std::vector<detail::StepInput> inputs;
    (detail::StepInputOf<std::decay_t<Args>>::add(inputs, args), ...);
    if constexpr (!std::is_reference_v<R> && detail::StepResultOf<R>::replayable) {
      detail::StepValues replayed;
      if (runner_->replay(inputs, replayed)) {
        if constexpr (std::is_void_v<R>) {
          return;
        } else {
          size_t tensor = 0, size = 0;
          return detail::StepResultOf<R>::rebuild(replayed, tensor, size);
        }
      }
      detail::StepTrace trace(*runner_, inputs);
      if constexpr (std::is_void_v<R>) {
        fn_(std::forward<Args>(args)...);
        detail::StepValues none;
        trace.commit(&none);
      } else {
        R result = fn_(std::forward<Args>(args)...);
        detail::StepValues flat;
        detail::StepResultOf<R>::flatten(result, flat);
        trace.commit(&flat);
        return result;
      }
    } else {
      detail::StepTrace trace(*runner_, inputs);
      decltype(auto) result = fn_(std::forward<Args>(args)...);
      trace.commit(nullptr);
      return result;
    }
  }

  StepCallInfo last_call() const { return runner_->last_call(); }

 private:
  Fn fn_;
  std::shared_ptr<detail::StepRunner> runner_;
};

template <class Fn>
Compiled<Fn> compile(Fn fn, CompileOptions options = {}) {
  return Compiled<Fn>(std::move(fn), options);
}

}  // namespace xlite
