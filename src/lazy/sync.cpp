#include "lazy/sync.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "compiler/cache.h"
#include "core/live_tensors.h"
#include "core/step_recording.h"
#include "lazy/graph_builder.h"
#include "xlite/debug.h"
#include "xlite/lazy.h"
#include "xlite/metrics.h"

namespace xlite::lazy {
namespace {
std::atomic<bool> eager_flag{false};
std::atomic<int64_t> pending_tracing_ns{0};
std::mutex sync_mutex;  // one sync at a time: binds results to shared tensors
debug::SyncInfo last_info;

const char* cause_text(SyncCause cause) {
  switch (cause) {
    case SyncCause::user_sync: return "user sync";
    case SyncCause::value_read: return "value read (item/to_vector/print) of a pending tensor";
    case SyncCause::eager_op: return "eager op";
    case SyncCause::compiled_step: return "compile(fn) step";
  }
  return "";
}

// A tensor updated in place may have its new value written into its old buffer when nothing else can
// still read that buffer: every live pending tensor is in this graph (so no IR outside it refers to the
// buffer) and the only holders of the buffer are the argument list and this graph's leaves.
std::vector<runtime::Donation> find_donations(const std::vector<TensorImpl*>& pending, const BuiltGraph& built) {
  std::vector<runtime::Donation> donations;
  if (pending.size() != live_tensors::pending_count()) return donations;
  for (size_t i = 0; i < pending.size(); ++i) {
    const Buffer* donor = pending[i]->donor();
    if (!donor) continue;
    for (size_t a = 0; a < built.arguments.size(); ++a) {
      if (built.arguments[a].get() != donor) continue;
      if (built.arguments[a].use_count() == 1 + built.leaves_per_argument[a])
        donations.push_back({built.root_outputs[i], static_cast<int32_t>(a)});
      break;
    }
  }
  return donations;
}

void report_compile(SyncCause cause, uint64_t hash, const BuiltGraph& built, const runtime::Executable& exe) {
  debug::MemoryStats stats = exe.memory_stats();
  std::fprintf(stderr,
               "[xlite] compiled graph %016llx (%s): %zu instructions, %lld inputs, %zu outputs; "
               "arguments %lld B, outputs %lld B, temporaries %lld B, code %lld B in %lld kernels\n%s",
               static_cast<unsigned long long>(hash), cause_text(cause), built.graph.instrs.size(),
               static_cast<long long>(built.graph.num_parameters), built.graph.outputs.size(),
               static_cast<long long>(stats.argument_bytes), static_cast<long long>(stats.output_bytes),
               static_cast<long long>(stats.temp_bytes), static_cast<long long>(stats.code_bytes),
               static_cast<long long>(stats.kernels), stats.fusion.c_str());
}

double elapsed_ns(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - since).count();
}
}  // namespace

bool eager() { return eager_flag.load(std::memory_order_relaxed); }

int debug_level() {
  static const int level = [] {
    const char* env = std::getenv("XLITE_DEBUG");
    return env ? std::atoi(env) : 0;
  }();
  return level;
}

void add_tracing_time(double nanoseconds) { pending_tracing_ns += static_cast<int64_t>(nanoseconds); }

void sync_tensors(const std::vector<TensorImpl*>& impls, SyncCause cause, SyncRecord* record) {
  std::lock_guard lock(sync_mutex);
  const bool is_eager = cause == SyncCause::eager_op;
  if (!is_eager) metrics::increment_counter("Sync");
  std::vector<TensorImpl*> pending;
  std::vector<ir::NodePtr> roots;
  for (TensorImpl* impl : impls) {
    if (impl->is_pending()) {
      pending.push_back(impl);
      roots.push_back(impl->pending());
    }
  }
  if (pending.empty()) return;
  if (StepRecording* recording = StepRecording::active()) recording->ran_mid_trace = true;
  if (int64_t traced = pending_tracing_ns.exchange(0); traced > 0 && !is_eager)
    metrics::add_sample("TracingTime", static_cast<double>(traced));

  BuiltGraph built = build_graph(roots);
  const uint64_t hash = built.graph.hash();
  auto& cache = compiler::executable_cache();
  auto exe = cache.find(hash, built.graph);
  const bool hit = exe != nullptr;
  if (hit) {
    metrics::increment_counter("CachedCompile");
  } else {
    auto start = std::chrono::steady_clock::now();
    exe = compiler::compile(built.graph);
    metrics::add_sample(is_eager ? "EagerOpCompileTime" : "CompileTime", elapsed_ns(start));
    metrics::increment_counter("UncachedCompile");
    cache.insert(hash, built.graph, exe);
    if (debug_level() >= 1) report_compile(cause, hash, built, *exe);
  }

  std::vector<runtime::Donation> donations = find_donations(pending, built);
  auto start = std::chrono::steady_clock::now();
  std::vector<BufferPtr> results = exe->run(built.arguments, donations);
  metrics::add_sample(is_eager ? "EagerOpExecuteTime" : "ExecuteTime", elapsed_ns(start));
  metrics::increment_counter("Execute");
  if (is_eager) metrics::increment_counter("EagerOpExecute");

  for (size_t i = 0; i < pending.size(); ++i) {
    roots[i]->computed = results[built.root_outputs[i]];
    pending[i]->set_data(results[built.root_outputs[i]]);
  }
  last_info = debug::SyncInfo{cause_text(cause), hash, built.graph.num_parameters,
                              static_cast<int64_t>(built.graph.outputs.size()), hit};
  if (record) {
    record->executable = std::move(exe);
    record->hash = hash;
    record->argument_types.resize(built.arguments.size());
    for (const ir::Instr& instr : built.graph.instrs)
      if (instr.op == ir::OpId::parameter)
        record->argument_types[instr.attrs.get_int(ir::AttrKey::index)] = {instr.shape, instr.dtype};
    record->arguments = std::move(built.arguments);
    record->computed = std::move(pending);
    record->outputs = std::move(built.root_outputs);
  }
}

std::vector<BufferPtr> run_again(runtime::Executable& executable, uint64_t hash, std::span<const BufferPtr> arguments,
                                 std::span<const runtime::Donation> donations) {
  std::lock_guard lock(sync_mutex);
  auto start = std::chrono::steady_clock::now();
  std::vector<BufferPtr> results = executable.run(arguments, donations);
  metrics::add_sample("ExecuteTime", elapsed_ns(start));
  metrics::increment_counter("Execute");
  last_info = debug::SyncInfo{"replayed compile(fn) step", hash, static_cast<int64_t>(arguments.size()),
                              static_cast<int64_t>(results.size()), true};
  return results;
}

}  // namespace xlite::lazy

namespace xlite {

void sync() { lazy::sync_tensors(live_tensors::pending_in_order(), lazy::SyncCause::user_sync); }

void sync(const std::vector<Tensor>& tensors) {
  std::vector<TensorImpl*> impls;
  for (const Tensor& t : tensors)
    if (t.defined()) impls.push_back(t.impl().get());
  lazy::sync_tensors(impls, lazy::SyncCause::user_sync);
}

void eager_mode(bool enabled) { lazy::eager_flag = enabled; }
bool is_eager_mode() { return lazy::eager(); }

EagerModeGuard::EagerModeGuard(bool enabled) : previous_(is_eager_mode()) { eager_mode(enabled); }
EagerModeGuard::~EagerModeGuard() { eager_mode(previous_); }

namespace debug {
SyncInfo last_sync() {
  std::lock_guard lock(lazy::sync_mutex);
  return lazy::last_info;
}
}  // namespace debug

}  // namespace xlite
