// Checkpoints, metrics, debugging views, memory and devices.
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "bindings.h"

namespace xlite::python {
namespace {
using namespace nb::literals;

void bind_debug(nb::module_& debug) {
  // Each compiles or reads the pending graph of these tensors: no GIL while it does.
  const auto unlocked = nb::call_guard<nb::gil_scoped_release>();
  debug.def("graph_text", &debug::graph_text, "tensors"_a, unlocked,
            "The pending graph of these tensors in xlite's text IR.");
  debug.def("optimized_text", &debug::optimized_text, "tensors"_a, unlocked,
            "The graph after the compiler's passes, with its fusion plan.");
  debug.def("graph_dot", &debug::graph_dot, "tensors"_a, unlocked, "The optimized graph as Graphviz text.");
  debug.def("stablehlo", &debug::stablehlo, "tensors"_a, unlocked, "The pending graph as a StableHLO module.");
  debug.def("graph_hash", &debug::graph_hash, "tensors"_a, unlocked);
  nb::class_<debug::SyncInfo>(debug, "SyncInfo")
      .def_ro("cause", &debug::SyncInfo::cause)
      .def_ro("graph_hash", &debug::SyncInfo::graph_hash)
      .def_ro("num_inputs", &debug::SyncInfo::num_inputs)
      .def_ro("num_outputs", &debug::SyncInfo::num_outputs)
      .def_ro("cache_hit", &debug::SyncInfo::cache_hit);
  debug.def("last_sync", &debug::last_sync, "The last sync that ran a graph.");
  nb::class_<debug::MemoryStats>(debug, "MemoryStats")
      .def_ro("argument_bytes", &debug::MemoryStats::argument_bytes)
      .def_ro("output_bytes", &debug::MemoryStats::output_bytes)
      .def_ro("alias_bytes", &debug::MemoryStats::alias_bytes)
      .def_ro("temp_bytes", &debug::MemoryStats::temp_bytes)
      .def_ro("scratch_bytes", &debug::MemoryStats::scratch_bytes)
      .def_ro("code_bytes", &debug::MemoryStats::code_bytes)
      .def_ro("kernels", &debug::MemoryStats::kernels)
      .def_ro("fusion", &debug::MemoryStats::fusion);
  debug.def("memory_stats", &debug::memory_stats, "tensors"_a, unlocked,
            "Compiles the pending graph of these tensors and reports its memory plan.");
  nb::class_<debug::MemoryStep>(debug, "MemoryStep")
      .def_ro("step", &debug::MemoryStep::step)
      .def_ro("output_bytes", &debug::MemoryStep::output_bytes)
      .def_ro("live_bytes", &debug::MemoryStep::live_bytes);
  debug.def("memory_timeline", &debug::memory_timeline, "tensors"_a, unlocked,
            "The steps of the program that would compute these tensors, with the memory each holds.");
  debug.def("runtime_state", &debug::runtime_state,
            "Every piece of process-wide state made so far, by name, with what it holds now.");
}

void bind_metrics(nb::module_& metrics) {
  metrics.def("counter_value", &metrics::counter_value, "name"_a, "0 for a counter never touched.");
  metrics.def("counter_names", &metrics::counter_names,
              "The counters that recorded something since the last clear_all().");
  metrics.def("metric_names", &metrics::metric_names,
              "The timed metrics that recorded something since the last clear_all().");
  metrics.def(
      "metric_data",
      [](std::string_view name) {
        metrics::MetricData d = metrics::metric_data(name);
        return nb::make_tuple(d.samples, d.total, d.recent);
      },
      "name"_a, "(samples, total, recent samples) of a timed metric; times in nanoseconds.");
  metrics.def("metrics_report", &metrics::metrics_report, "Every metric and counter, in PyTorch/XLA's format.");
  metrics.def("short_metrics_report", &metrics::short_metrics_report,
              "The metrics that tell whether a program compiles or reads values back too often.");
  metrics.def("clear_all", &metrics::clear_all, "Resets every counter and metric.");
}

}  // namespace

void bind_tools(nb::module_& m) {
  m.def(
      "save",
      [](const std::map<std::string, Tensor>& tensors, const std::string& path) {
        nb::gil_scoped_release unlocked;
        xlite::save(tensors, path);
      },
      "tensors"_a, "path"_a, "Writes a safetensors file atomically.");
  m.def(
      "load",
      [](const std::string& path, nb::handle device) {
        Device on = to_device(device);
        nb::gil_scoped_release unlocked;
        return xlite::load(path, on);
      },
      "path"_a, "map_location"_a = nb::none(), "Reads a safetensors file onto a device.");

  nb::class_<MemoryInfo>(m, "MemoryInfo")
      .def_ro("bytes_used", &MemoryInfo::bytes_used)
      .def_ro("bytes_limit", &MemoryInfo::bytes_limit)
      .def_ro("peak_bytes_used", &MemoryInfo::peak_bytes_used)
      .def_ro("bytes_cached", &MemoryInfo::bytes_cached)
      .def("__getitem__",
           [](const MemoryInfo& info, const std::string& key) {
             if (key == "bytes_used") return info.bytes_used;
             if (key == "bytes_limit") return info.bytes_limit;
             if (key == "peak_bytes_used") return info.peak_bytes_used;
             if (key == "bytes_cached") return info.bytes_cached;
             throw nb::key_error(key.c_str());
           })
      .def("__repr__", [](const MemoryInfo& i) {
        return "MemoryInfo(bytes_used=" + std::to_string(i.bytes_used) +
               ", bytes_limit=" + std::to_string(i.bytes_limit) +
               ", peak_bytes_used=" + std::to_string(i.peak_bytes_used) +
               ", bytes_cached=" + std::to_string(i.bytes_cached) + ")";
      });
  m.def(
      "get_memory_info", [](nb::handle device) { return get_memory_info(to_device(device)); }, "device"_a = nb::none(),
      "Bytes used, the limit, the peak and the cache of a device.");
  m.def(
      "reset_peak_memory", [](nb::handle device) { reset_peak_memory(to_device(device)); }, "device"_a = nb::none(),
      "Sets a device's peak_bytes_used to what it uses now.");
  m.def(
      "empty_cache", [](nb::handle device) { empty_cache(to_device(device)); }, "device"_a = nb::none(),
      "Returns a device's cached free blocks to the system.");
  // Printing: the C++ printer (PyTorch's format), which xlite.Tensor's repr wraps with Python's names.
  m.def(
      "_to_string",
      [](const Tensor& t) {
        nb::gil_scoped_release unlocked;  // it syncs
        return xlite::to_string(t);
      },
      "tensor"_a);
  m.def(
      "set_printoptions",
      [](std::optional<int> precision, std::optional<int64_t> threshold, std::optional<int64_t> edgeitems,
         std::optional<int64_t> linewidth, std::optional<bool> sci_mode) {
        PrintOptions o = get_printoptions();
        if (precision) o.precision = *precision;
        if (threshold) o.threshold = *threshold;
        if (edgeitems) o.edgeitems = *edgeitems;
        if (linewidth) o.linewidth = *linewidth;
        o.sci_mode = sci_mode ? (*sci_mode ? 1 : 0) : -1;
        set_printoptions(o);
      },
      "precision"_a = nb::none(), "threshold"_a = nb::none(), "edgeitems"_a = nb::none(), "linewidth"_a = nb::none(),
      "sci_mode"_a = nb::none(), "How tensors print, as torch.set_printoptions (process-wide).");
  m.def("clear_caches", &clear_caches, "Empties every cache: compiled programs, kernels and cached memory.");

  nb::module_ debug = m.def_submodule("debug", "Looking inside: graphs, syncs and memory plans.");
  bind_debug(debug);
  nb::module_ metrics = m.def_submodule("metrics", "Process-wide counters and timed metrics.");
  bind_metrics(metrics);
}

}  // namespace xlite::python
