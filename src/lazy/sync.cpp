#include "lazy/sync.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <mutex>

#include "compiler/cache.h"
#include "compiler/graph_dot.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/debug_output.h"
#include "core/environment.h"
#include "tensor/live_tensors.h"
#include "core/runtime_context.h"
#include "core/trace.h"
#include "core/step_recording.h"
#include "lazy/debug_report.h"
#include "lazy/debug_warnings.h"
#include "lazy/graph_builder.h"
#include "runtime/allocator.h"
#include "ir/graph.h"
#include "ir/stablehlo.h"
#include "xlite/debug.h"
#include "xlite/error.h"
#include "xlite/lazy.h"
#include "xlite/metrics.h"

namespace xlite::lazy {
namespace {
thread_local bool eager_flag = false;  // per thread, like grad mode

// What debug::last_sync() reports, kept as plain fields: an eager op records it every time.
struct LastSync {
  SyncCause cause = SyncCause::user_sync;
  bool replayed = false;
  uint64_t hash = 0;
  int64_t inputs = 0;
  int64_t outputs = 0;
  bool cache_hit = false;
};
const char* cause_text(SyncCause cause) {
  switch (cause) {
    case SyncCause::user_sync: return "user sync";
    case SyncCause::value_read: return "value read (item/to_vector/print) of a pending tensor";
    case SyncCause::eager_op: return "eager op";
    case SyncCause::compiled_step: return "compile(fn) step";
    case SyncCause::memory_stats: return "debug::memory_stats";
  }
  return "";
}

// Every eager op records these, so they are looked up once.
struct SyncMetrics {
  metrics::Counter sync{"Sync"}, cached{"CachedCompile"}, uncached{"UncachedCompile"}, execute{"Execute"},
      eager_execute{"EagerOpExecute"};
  // Compilations by what caused them, in SyncCause order.
  metrics::Counter uncached_by[5] = {
      metrics::Counter("UncachedCompileForUserSync"), metrics::Counter("UncachedCompileForValueRead"),
      metrics::Counter("UncachedCompileForEagerOp"), metrics::Counter("UncachedCompileForCompiledStep"),
      metrics::Counter("UncachedCompileForMemoryStats")};
  metrics::Metric compile_time{"CompileTime"}, eager_compile_time{"EagerOpCompileTime"}, execute_time{"ExecuteTime"},
      eager_execute_time{"EagerOpExecuteTime"}, tracing_time{"TracingTime"};
};
const SyncMetrics& sync_metrics() {
  static const SyncMetrics m;
  return m;
}

// A sync's working storage, kept between syncs (they are serialised by the sync lock) so that the many
// small syncs of eager mode allocate nothing for it.
struct Scratch {
  std::vector<TensorImpl*> pending;
  std::vector<ir::NodePtr> roots;
  PendingGraph graph;
};

struct SyncState final : RuntimeState {
  mutable std::mutex mutex;  // one sync at a time: binds results to shared tensors
  std::atomic<int64_t> pending_tracing_ns{0};
  LastSync last;    // under mutex
  Scratch scratch;  // under mutex
  std::string describe() const override {
    std::lock_guard lock(mutex);
    return std::string("last: ") + (last.replayed ? "replayed compile(fn) step" : cause_text(last.cause)) + ", " +
           std::to_string(last.inputs) + " inputs, " + std::to_string(last.outputs) + " outputs";
  }
};
SyncState& sync_state() { return runtime_context::state<SyncState>("sync"); }

std::atomic<BlockingWaitHook> blocking_wait_hook{nullptr};

// The sync mutex, taken by one thread at a time. A thread that takes it again while it holds it (a custom
// kernel's implementation, or a borrowed buffer's release, that reads a value while its program runs) gets an
// error instead of a deadlock. A thread that must wait for another's program waits through the bindings' hook.
class SyncLock {
 public:
  SyncLock() : lock_(sync_state().mutex, std::defer_lock) {
    if (held_here_)
      throw Error(
          "[sync] a value was read or a graph synced while this thread runs a program (a custom kernel's "
          "implementation must not sync)");
    if (!lock_.try_lock()) {
      BlockingWaitHook hook = blocking_wait_hook.load();
      auto wait = [](void* lock) { static_cast<std::unique_lock<std::mutex>*>(lock)->lock(); };
      if (hook)
        hook(wait, &lock_);
      else
        wait(&lock_);
    }
    held_here_ = true;
  }
  ~SyncLock() { held_here_ = false; }
  SyncLock(const SyncLock&) = delete;
  SyncLock& operator=(const SyncLock&) = delete;

 private:
  std::unique_lock<std::mutex> lock_;
  static thread_local bool held_here_;
};
thread_local bool SyncLock::held_here_ = false;

// A tensor updated in place may have its new value written into its old buffer when nothing else can
// still read that buffer: every live pending tensor (of every thread) is in this graph, so no IR outside
// it refers to the buffer, and the only holders of the buffer are the argument list and this graph's
// leaves. `roots` are the graph's roots in order.
std::vector<runtime::Donation> find_donations(std::span<TensorImpl* const> roots, PendingGraph& graph) {
  std::vector<runtime::Donation> donations;
  bool any_donor = false;
  for (TensorImpl* impl : roots) any_donor = any_donor || impl->donor();
  if (!any_donor) return donations;
  size_t pending = 0;
  for (TensorImpl* impl : roots) pending += impl->is_pending();
  if (pending != live_tensors::pending_count()) return donations;
  const std::vector<BufferPtr>& arguments = graph.arguments();
  for (size_t i = 0; i < roots.size(); ++i) {
    const Buffer* donor = roots[i]->donor();
    if (!donor) continue;
    for (size_t a = 0; a < arguments.size(); ++a) {
      if (arguments[a].get() != donor) continue;
      if (!donor->borrowed() && arguments[a].use_count() == 1 + graph.leaves_per_argument()[a])
        donations.push_back({graph.root_outputs()[i], static_cast<int32_t>(a)});
      break;
    }
  }
  return donations;
}

// XLITE_SAVE_GRAPHS: every synced graph appended to one file, as traced (text), optimized and fused (dot) or
// as a StableHLO module, like PyTorch/XLA's XLA_SAVE_TENSORS_FILE.
void save_graph(const ir::Graph& graph, uint64_t hash, SyncCause cause) {
  const env::Settings& settings = env::settings();
  const std::string& format = settings.save_graphs_fmt;
  // Drawn before the file is opened, so that a throw cannot leave it open.
  const std::string text = format == "dot"         ? compiler::fused_dot(graph)
                           : format == "stablehlo" ? ir::to_stablehlo(graph)
                                                   : ir::to_text(graph);
  std::FILE* file = std::fopen(settings.save_graphs.c_str(), "a");
  if (!file) throw Error("[XLITE_SAVE_GRAPHS] cannot append to " + settings.save_graphs + ": " + std::strerror(errno));
  // Each format's own comment, so that a tool reading one graph out of the file skips the header.
  std::fprintf(file, "%s graph %s (%s)\n%s\n", format == "stablehlo" ? "//" : "#",
               debug_report::hash_text(hash).c_str(), cause_text(cause), text.c_str());
  std::fclose(file);
}

double elapsed_ns(int64_t since) { return static_cast<double>(now_ns() - since); }

// Whether XLITE_DEBUG reports a sync of this cause at this level: eager ops only from level 3, as upstream.
bool reported(SyncCause cause, int level) {
  const int debug = debug_output::level();
  return debug >= level && (cause != SyncCause::eager_op || debug >= 3);
}

// XLITE_PROFILE=trace.json: the run as a span (its kernels are spans inside it) and the device's memory after.
void trace_execution(uint64_t hash, Device device, int64_t begin_ns, int64_t end_ns) {
  trace::span("execute", "execute " + debug_report::hash_text(hash), begin_ns, end_ns);
  trace::counter("memory in use " + device.str(), runtime::allocator(device).info().bytes_used, end_ns);
}

// The time a thread spent building IR between its syncs, as a span before each sync.
thread_local int64_t last_sync_end_ns = 0;

int64_t total_bytes(std::span<const BufferPtr> buffers) {
  int64_t bytes = 0;
  for (const BufferPtr& b : buffers) bytes += b ? static_cast<int64_t>(b->bytes()) : 0;
  return bytes;
}

// A program run, for XLITE_PROFILE's trace and XLITE_DEBUG's reports and warnings.
[[gnu::noinline]] void observe_run(SyncCause cause, uint64_t hash, Device device, int64_t traced_ns, int64_t start,
                                   int64_t run_ns, std::span<const BufferPtr> arguments,
                                   std::span<const BufferPtr> results) {
  if (trace::enabled()) trace_execution(hash, device, start, start + run_ns);
  if (reported(cause, 2))
    debug_report::execution({cause_text(cause), hash, static_cast<int64_t>(arguments.size()), total_bytes(arguments),
                             static_cast<int64_t>(results.size()), total_bytes(results), run_ns});
  if (cause != SyncCause::eager_op && debug_output::level() >= 1)
    debug_warnings::note_sync(cause == SyncCause::value_read, traced_ns, run_ns);
}

// The compiled program for the walked graph: from the cache, or compiled and cached.
std::shared_ptr<runtime::Executable> find_or_compile(PendingGraph& walked, uint64_t hash, SyncCause cause, bool* hit) {
  const SyncMetrics& m = sync_metrics();
  auto& cache = compiler::executable_cache();
  auto exe = cache.find_if(hash, [&](const ir::Graph& cached) { return walked.matches(cached); });
  *hit = exe != nullptr;
  if (exe) {
    m.cached.increment();
    return exe;
  }
  ir::Graph graph = walked.build();
  const int64_t start = now_ns();
  try {
    exe = compiler::compile(graph);
  } catch (const InternalError&) {
    throw;
  } catch (const Error& e) {
    // The graph was traced by xlite, so a graph the verifier refuses is xlite's bug, not the caller's.
    if (std::string_view(e.what()).starts_with("[verify]")) XLITE_FAIL(std::string("a traced graph ") + e.what());
    throw;
  }
  const int64_t compile_ns = now_ns() - start;
  (cause == SyncCause::eager_op ? m.eager_compile_time : m.compile_time).add_sample(static_cast<double>(compile_ns));
  if (trace::enabled()) trace::span("compile", "compile " + debug_report::hash_text(hash), start, start + compile_ns);
  m.uncached.increment();
  m.uncached_by[static_cast<int>(cause)].increment();
  cache.insert(hash, graph, exe);
  if (reported(cause, 1)) {
    const std::string site = debug_report::compilation(cause_text(cause), hash, graph, *exe, compile_ns);
    if (cause != SyncCause::eager_op) debug_warnings::note_compiled(site, graph, compile_ns);
  }
  return exe;
}
}  // namespace

bool eager() { return eager_flag; }

void add_tracing_time(double nanoseconds) { sync_state().pending_tracing_ns += static_cast<int64_t>(nanoseconds); }

namespace {
// Computes the pending tensors of one device (s.pending, s.roots) with one program run on that device.
[[gnu::always_inline]] inline void sync_device(SyncState& state, Device device, SyncCause cause, SyncRecord* record) {
  Scratch& s = state.scratch;
  const SyncMetrics& m = sync_metrics();
  const bool is_eager = cause == SyncCause::eager_op;
  // Profile traces and debug reports are looked up once: without them an eager op pays two branches.
  const bool tracing = trace::enabled();
  const bool observed = tracing || debug_output::level() > 0;
  const int64_t sync_begin = tracing ? now_ns() : 0;
  if (tracing && !is_eager && last_sync_end_ns > 0) [[unlikely]]
    trace::span("trace", "tracing", last_sync_end_ns, sync_begin);
  // The scratch must not keep nodes or buffers alive past this sync, however it ends. A traced sync's span
  // ends here too, and the tracing before the next sync starts after it.
  struct Release {
    Scratch& s;
    const char* traced_as;  // the sync's span name when tracing
    int64_t begin;
    ~Release() {
      s.roots.clear();
      s.graph.release();
      if (traced_as) [[unlikely]] {
        last_sync_end_ns = now_ns();
        trace::span("sync", traced_as, begin, last_sync_end_ns);
      }
    }
  } release{s, tracing ? cause_text(cause) : nullptr, sync_begin};
  // An eager op traces nothing (OpScope times no eager op), so its sync leaves earlier tracing time for the
  // next lazy sync and spends no atomic exchange.
  int64_t traced_ns = 0;
  if (!is_eager) {
    traced_ns = state.pending_tracing_ns.exchange(0);
    if (traced_ns > 0) m.tracing_time.add_sample(static_cast<double>(traced_ns));
  }

  PendingGraph& walked = s.graph;
  walked.walk(std::move(s.roots));
  const uint64_t hash = walked.hash();
  bool hit = false;
  std::shared_ptr<runtime::Executable> exe = find_or_compile(walked, hash, cause, &hit);
  static const bool saving = !env::settings().save_graphs.empty();  // read once: every eager op syncs
  if (saving) save_graph(walked.build(), hash, cause);

  std::vector<runtime::Donation> donations = find_donations(s.pending, walked);
  const int64_t start = now_ns();
  std::vector<BufferPtr> results = exe->run(walked.arguments(), donations, runtime::RunOn{device});
  const double run_ns = elapsed_ns(start);
  (is_eager ? m.eager_execute_time : m.execute_time).add_sample(run_ns);
  if (observed) [[unlikely]]
    observe_run(cause, hash, device, traced_ns, start, static_cast<int64_t>(run_ns), walked.arguments(), results);
  m.execute.increment();
  if (is_eager) m.eager_execute.increment();

  std::span<const int32_t> root_outputs = walked.root_outputs();
  // Read before the results are bound: binding may turn a node into a leaf and free nodes the walk's
  // entries point to.
  if (record) record->argument_types = walked.argument_types();
  for (size_t i = 0; i < s.pending.size(); ++i) {
    const int32_t k = root_outputs[i];
    const bool last_reader = std::find(root_outputs.begin() + static_cast<std::ptrdiff_t>(i) + 1, root_outputs.end(),
                                       k) == root_outputs.end();
    s.pending[i]->set_computed(last_reader ? std::move(results[k]) : results[k], /*sync_holders=*/1);
  }
  state.last = LastSync{
      cause, false, hash, static_cast<int64_t>(walked.arguments().size()), static_cast<int64_t>(results.size()), hit};
  if (record) {
    record->executable = std::move(exe);
    record->hash = hash;
    record->arguments = std::move(walked.arguments());
    record->computed = s.pending;
    record->outputs.assign(root_outputs.begin(), root_outputs.end());
  }
}
}  // namespace

void sync_tensors(std::span<TensorImpl* const> impls, SyncCause cause, SyncRecord* record) {
  SyncState& state = sync_state();
  SyncLock lock;
  if (cause != SyncCause::eager_op) sync_metrics().sync.increment();
  Scratch& s = state.scratch;
  s.pending.clear();
  s.roots.clear();
  bool one_device = true;
  for (TensorImpl* impl : impls) {
    if (impl->is_pending()) {
      one_device = one_device && (s.pending.empty() || impl->device() == s.pending.front()->device());
      s.pending.push_back(impl);
      s.roots.push_back(impl->pending());
    }
  }
  if (s.pending.empty()) return;
  if (one_device) return sync_device(state, s.pending.front()->device(), cause, record);
  // Each device runs a program of its own, as PyTorch/XLA syncs per device. A program that reads another
  // device's pending value through a transfer computes it itself unless that value was bound by an earlier
  // program, so devices run in the order their newest tensors were made: a value is made before the transfer
  // that moves it.
  std::vector<TensorImpl*> all = std::move(s.pending);
  std::vector<std::pair<uint64_t, Device>> order;  // per device, its newest tensor's id
  for (TensorImpl* impl : all) {
    auto it = std::find_if(order.begin(), order.end(), [&](const auto& o) { return o.second == impl->device(); });
    if (it == order.end())
      order.emplace_back(impl->id(), impl->device());
    else
      it->first = std::max(it->first, impl->id());
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (record) {
    std::string devices;
    for (const auto& [id, device] : order) devices += (devices.empty() ? "" : ", ") + device.str();
    throw Error("[compile] a compiled step whose results are on several devices (" + devices +
                ") is not supported yet: move them to one device with .to(device)");
  }
  for (const auto& [newest, device] : order) {
    s.pending.clear();
    s.roots.clear();
    for (TensorImpl* impl : all) {
      if (impl->device() != device || !impl->is_pending()) continue;
      s.pending.push_back(impl);
      s.roots.push_back(impl->pending());
    }
    sync_device(state, device, cause, nullptr);
  }
}

void sync_this_thread(SyncCause cause, SyncRecord* record) {
  // Held for the sync: another thread may drop the last handle to a tensor this thread made.
  const std::vector<std::shared_ptr<TensorImpl>> held = live_tensors::pending_in_order();
  std::vector<TensorImpl*> impls;
  impls.reserve(held.size());
  for (const auto& impl : held) impls.push_back(impl.get());
  sync_tensors(impls, cause, record);
}

namespace {
// The program a sync of these tensors would run, compiled through the cache; the caller holds the sync lock.
std::shared_ptr<runtime::Executable> plan(std::span<TensorImpl* const> impls, PendingGraph& walked) {
  std::vector<ir::NodePtr> roots;
  for (TensorImpl* impl : impls) roots.push_back(impl->node());
  walked.walk(std::move(roots));
  bool hit = false;
  return find_or_compile(walked, walked.hash(), SyncCause::memory_stats, &hit);
}
}  // namespace

debug::MemoryStats planned_memory(std::span<TensorImpl* const> impls) {
  SyncLock lock;
  PendingGraph walked;
  debug::MemoryStats stats = plan(impls, walked)->memory_stats();
  const std::vector<std::pair<Shape, DType>> types = walked.argument_types();
  for (const runtime::Donation& d : find_donations(impls, walked)) {
    const auto& [shape, dtype] = types[d.argument];
    const int64_t bytes = numel(shape) * dtype_size(dtype);
    stats.alias_bytes += bytes;
    stats.output_bytes -= bytes;
  }
  return stats;
}

std::shared_ptr<runtime::Executable> planned_program(std::span<TensorImpl* const> impls) {
  SyncLock lock;
  PendingGraph walked;
  return plan(impls, walked);
}

uint64_t hash_of_this_thread() {
  std::vector<ir::NodePtr> roots;
  for (const auto& impl : live_tensors::pending_in_order()) roots.push_back(impl->pending());
  PendingGraph walked;
  walked.walk(std::move(roots));
  return walked.hash();
}

std::vector<BufferPtr> run_again(runtime::Executable& executable, uint64_t hash, std::span<const BufferPtr> arguments,
                                 std::span<const runtime::Donation> donations) {
  SyncLock lock;
  const int64_t start = now_ns();
  std::vector<BufferPtr> results = executable.run(arguments, donations);
  const double run_ns = elapsed_ns(start);
  sync_metrics().execute_time.add_sample(run_ns);
  if (trace::enabled()) trace_execution(hash, executable.device(), start, start + static_cast<int64_t>(run_ns));
  if (reported(SyncCause::compiled_step, 2))
    debug_report::execution({"replayed compile(fn) step", hash, static_cast<int64_t>(arguments.size()),
                             total_bytes(arguments), static_cast<int64_t>(results.size()), total_bytes(results),
                             static_cast<int64_t>(run_ns)});
  // A replayed step traces nothing.
  if (debug_output::level() >= 1) debug_warnings::note_sync(false, 0, static_cast<int64_t>(run_ns));
  sync_metrics().execute.increment();
  sync_state().last = LastSync{SyncCause::compiled_step,
                               true,
                               hash,
                               static_cast<int64_t>(arguments.size()),
                               static_cast<int64_t>(results.size()),
                               true};
  return results;
}

}  // namespace xlite::lazy

namespace xlite {

void sync() {
  note_mid_trace_run("sync", "synced");
  lazy::sync_this_thread(lazy::SyncCause::user_sync);
}

void sync(const std::vector<Tensor>& tensors) {
  note_mid_trace_run("sync", "synced");
  std::vector<TensorImpl*> impls;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    t.impl()->refresh_view();  // its data is read next (save, a host library): it must follow its base
    impls.push_back(t.impl().get());
  }
  lazy::sync_tensors(impls, lazy::SyncCause::user_sync);
}

void eager_mode(bool enabled) { lazy::eager_flag = enabled; }
bool is_eager_mode() { return lazy::eager(); }

void set_blocking_wait_hook(BlockingWaitHook hook) { lazy::blocking_wait_hook = hook; }

EagerModeGuard::EagerModeGuard(bool enabled) : previous_(is_eager_mode()) { eager_mode(enabled); }
EagerModeGuard::~EagerModeGuard() { eager_mode(previous_); }

namespace debug {
SyncInfo last_sync() {
  lazy::SyncLock lock;
  const lazy::LastSync& last = lazy::sync_state().last;
  return SyncInfo{last.replayed ? "replayed compile(fn) step" : lazy::cause_text(last.cause), last.hash, last.inputs,
                  last.outputs, last.cache_hit};
}
}  // namespace debug

}  // namespace xlite
