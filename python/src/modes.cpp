// When work runs: sync, eager mode, grad mode, and compile(fn) over Python callables with the C++ replay
// semantics (a replay runs the recorded program, not the Python body).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <optional>
#include <string>

#include "bindings.h"

namespace xlite::python {
namespace {
using namespace nb::literals;
using detail::StepInput;
using detail::StepValues;

// The signature of a call: tensors by type, Python numbers and strings by value, containers by structure,
// every other object (a module, an optimizer, a loss function) by identity: its tensors are reached by the
// trace and guarded there. Objects guarded by identity are added to `identified`, which the compiled function
// keeps alive, so that no other object can later take the same address. A bound method is its function and
// its object (a new method object is made at every attribute access).
void add_inputs(nb::handle value, std::vector<StepInput>& inputs, std::vector<nb::object>& identified) {
  auto text = [&](std::string s) { inputs.push_back({StepInput::Kind::value, {}, std::move(s)}); };
  if (nb::isinstance<Tensor>(value)) {
    inputs.push_back({StepInput::Kind::tensor, nb::cast<Tensor>(value), {}});
  } else if (value.is_none()) {
    text("None");
  } else if (PyBool_Check(value.ptr()) || PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr()) ||
             nb::isinstance<nb::str>(value)) {
    text(std::string(nb::type_name(value.type()).c_str()) + " " + nb::repr(value).c_str());
  } else if (nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value)) {
    text(std::string(nb::type_name(value.type()).c_str()) + " of " + std::to_string(nb::len(value)));
    for (nb::handle item : value) add_inputs(item, inputs, identified);
  } else if (nb::isinstance<nb::dict>(value)) {
    nb::dict d = nb::borrow<nb::dict>(value);
    std::string keys = "dict of";
    for (auto [k, v] : d) keys += std::string(" ") + nb::repr(k).c_str();
    text(keys);
    for (auto [k, v] : d) add_inputs(v, inputs, identified);
  } else if (PyMethod_Check(value.ptr())) {
    text("bound method");
    add_inputs(value.attr("__func__"), inputs, identified);
    add_inputs(value.attr("__self__"), inputs, identified);
  } else if (nb::hasattr(value, "__array__") || nb::hasattr(value, "__dlpack__")) {
    // An array whose contents fn turns into graph inputs: it may change in place under the same identity, and
    // a replay would feed what the trace saw. Such a call traces every time (pass an xlite tensor instead).
    inputs.push_back({StepInput::Kind::unguardable, {}, {}});
  } else {
    char id[32];
    std::snprintf(id, sizeof id, "%p", static_cast<void*>(value.ptr()));
    text(std::string(nb::type_name(value.type()).c_str()) + " object " + id);
    identified.push_back(nb::borrow(value));
  }
}

struct AutocastScope {
  DType dtype;
  bool enabled;
  std::optional<xlite::autocast> scope;
};

class CompiledFunction {
 public:
  CompiledFunction(nb::object fn, CompileOptions options)
      : fn_(std::move(fn)), runner_(std::make_unique<detail::StepRunner>(options)) {}

  nb::object call(nb::args args, nb::kwargs kwargs) {
    std::optional<detail::StepRunner::CallGuard> one_call_at_a_time;
    {
      nb::gil_scoped_release unlocked;  // another thread's call may hold the runner while it waits for the GIL
      one_call_at_a_time.emplace(*runner_);
    }
    std::vector<StepInput> inputs;
    std::vector<nb::object> identified;
    add_inputs(args, inputs, identified);
    if (kwargs.size() > 0) add_inputs(kwargs, inputs, identified);
    for (nb::object& object : identified)
      kept_alive_[nb::steal(PyLong_FromVoidPtr(object.ptr()))] = object;  // by id: objects need not be hashable
    StepValues replayed;
    bool ran;
    {
      nb::gil_scoped_release unlocked;
      ran = runner_->replay(inputs, replayed);
    }
    if (ran) {
      size_t tensor = 0;
      return rebuild(structures_[replayed.sizes.at(0)], replayed, tensor);
    }
    std::optional<detail::StepTrace> trace;
    {
      nb::gil_scoped_release unlocked;
      trace.emplace(*runner_, inputs);
    }
    nb::object result = fn_(*args, **kwargs);
    StepValues flat;
    nb::object structure = flatten(result, flat);
    if (structure.is_valid()) flat.sizes.push_back(structure_index(structure));
    nb::gil_scoped_release unlocked;
    trace->commit(structure.is_valid() ? &flat : nullptr);
    return result;
  }

  StepCallInfo last_call() const { return runner_->last_call(); }

 private:
  // fn's result as its tensors and a structure to rebuild it from them: "T" for a tensor, None, or (type, keys,
  // children) for lists, tuples, namedtuples, dicts and OrderedDicts. Invalid when the result holds anything
  // else (a Python number, another container type): such a step cannot be replayed, as in C++.
  static nb::object flatten(nb::handle value, StepValues& flat) {
    if (nb::isinstance<Tensor>(value)) {
      flat.tensors.push_back(nb::cast<Tensor>(value));
      return nb::str("T");
    }
    if (value.is_none()) return nb::none();
    nb::handle type = value.type();
    const bool is_list = type.is(reinterpret_cast<PyObject*>(&PyList_Type));
    const bool is_tuple =
        type.is(reinterpret_cast<PyObject*>(&PyTuple_Type)) ||
        (nb::isinstance<nb::tuple>(value) && nb::hasattr(type, "_make") && nb::hasattr(type, "_fields"));
    const bool is_dict = type.is(reinterpret_cast<PyObject*>(&PyDict_Type)) ||
                         type.is(nb::module_::import_("collections").attr("OrderedDict"));
    if (!is_list && !is_tuple && !is_dict) return nb::object();
    nb::list keys, children;
    auto add = [&](nb::handle item) {
      nb::object child = flatten(item, flat);
      if (!child.is_valid()) return false;
      children.append(child);
      return true;
    };
    if (is_dict) {
      for (auto [k, v] : nb::borrow<nb::dict>(value)) {
        keys.append(k);
        if (!add(v)) return nb::object();
      }
    } else {
      for (nb::handle item : value)
        if (!add(item)) return nb::object();
    }
    return nb::make_tuple(nb::borrow(type), nb::tuple(keys), nb::tuple(children));
  }

  static nb::object rebuild(nb::handle structure, const StepValues& values, size_t& tensor) {
    if (structure.is_none()) return nb::none();
    if (nb::isinstance<nb::str>(structure)) return nb::cast(values.tensors.at(tensor++));
    nb::tuple parts = nb::borrow<nb::tuple>(structure);
    nb::handle type = parts[0];
    nb::tuple keys = nb::borrow<nb::tuple>(parts[1]);
    nb::tuple children = nb::borrow<nb::tuple>(parts[2]);
    nb::list items;
    for (nb::handle child : children) items.append(rebuild(child, values, tensor));
    if (keys.size() > 0 || nb::hasattr(type, "fromkeys")) {  // a dict or an OrderedDict
      nb::object d = type();
      for (size_t i = 0; i < keys.size(); ++i) d[keys[i]] = items[i];
      return d;
    }
    if (type.is(reinterpret_cast<PyObject*>(&PyList_Type))) return items;
    if (type.is(reinterpret_cast<PyObject*>(&PyTuple_Type))) return nb::tuple(items);
    return type.attr("_make")(items);  // a namedtuple
  }

  size_t structure_index(const nb::object& structure) {
    for (size_t i = 0; i < structures_.size(); ++i)
      if (structures_[i].equal(structure)) return i;
    structures_.push_back(structure);
    return structures_.size() - 1;
  }

  nb::object fn_;
  std::unique_ptr<detail::StepRunner> runner_;
  std::vector<nb::object> structures_;  // of fn's results; a recorded program keeps its index
  nb::dict kept_alive_;                 // id -> every object a signature named by identity (see add_inputs)
};

}  // namespace

void bind_modes(nb::module_& m) {
  m.def(
      "sync",
      [](std::optional<std::vector<Tensor>> tensors) {
        nb::gil_scoped_release unlocked;
        if (tensors)
          xlite::sync(*tensors);
        else
          xlite::sync();
      },
      "tensors"_a = nb::none(), "Compiles and runs every pending tensor of this thread (or just these) as one graph.");
  m.def("_set_eager_mode", &xlite::eager_mode, "enabled"_a);
  m.def("is_eager_mode", &xlite::is_eager_mode, "Whether ops of this thread run at once.");
  m.def("_set_grad_enabled", &xlite::set_grad_enabled, "enabled"_a);
  // The C++ autocast scope, entered and left by xlite.autocast (a Python with-statement on one thread).
  nb::class_<AutocastScope>(m, "_AutocastScope")
      .def("__init__", [](AutocastScope* s, nb::handle dtype,
                          bool enabled) { new (s) AutocastScope{to_dtype(dtype), enabled, {}}; })
      .def("enter", [](AutocastScope& s) { s.scope.emplace(s.dtype, s.enabled); })
      .def("exit", [](AutocastScope& s) { s.scope.reset(); });
  m.def("is_autocast_enabled", &xlite::is_autocast_enabled);
  m.def("is_grad_enabled", &xlite::is_grad_enabled, "Whether ops of this thread record gradients.");
  m.def("_set_fast_math", &xlite::set_fast_math, "enabled"_a);
  m.def("is_fast_math", &xlite::is_fast_math,
        "Whether programs compile with fast math (faster f32 exp, log, tanh, erf, sigmoid, within 4e-4).");
  m.def("_set_excess_precision", &xlite::set_excess_precision, "enabled"_a);
  m.def("is_excess_precision", &xlite::is_excess_precision,
        "Whether fused kernels keep 16-bit float results in f32 between their ops (rounding once, at the store).");

  nb::class_<TracedFlag>(m, "TracedFlag",
                         "A host switch a compiled step may read (a module's training mode): a call after it "
                         "changed traces again instead of replaying the old branch.")
      .def(nb::init<bool, std::string>(), "value"_a, "what"_a)
      .def("get", &TracedFlag::get, "The value; inside a compiled step's trace, read as a guard.")
      .def("set", &TracedFlag::set, "value"_a, "Changes the value: a compiled step that read it traces again.");

  nb::class_<StepCallInfo>(m, "StepCallInfo", "How the last call of a compiled function ran.")
      .def_ro("replayed", &StepCallInfo::replayed)
      .def_ro("trace_reason", &StepCallInfo::trace_reason)
      .def("__repr__", [](const StepCallInfo& i) {
        return std::string("StepCallInfo(replayed=") + (i.replayed ? "True" : "False") + ", trace_reason='" +
               i.trace_reason + "')";
      });
  nb::class_<CompiledFunction>(m, "CompiledFunction",
                               "fn compiled: the first calls trace it; once two traces agree, calls with the same "
                               "signature replay the recorded program without running fn (see xlite.compile).")
      .def("__call__", &CompiledFunction::call)
      // A compiled function defined in a class body is a method: reached through an object, it takes the object
      // as its first argument (guarded by identity, like any other object).
      .def(
          "__get__",
          [](nb::handle self, nb::handle object, nb::handle) -> nb::object {
            if (object.is_none()) return nb::borrow(self);
            return nb::module_::import_("functools").attr("partial")(self, object);
          },
          "object"_a.none(), "owner"_a.none() = nb::none())
      .def("last_call", &CompiledFunction::last_call,
           "How the last call ran: replayed, or traced and why (XLITE_DEBUG=1 prints the reason too).");
  m.def(
      "_compile",
      [](nb::object fn, bool force_retrace, bool full_graph, int max_different_graphs) {
        if (!PyCallable_Check(fn.ptr())) throw Error("[compile] fn is not callable");
        return new CompiledFunction(std::move(fn), CompileOptions{force_retrace, full_graph, max_different_graphs});
      },
      "fn"_a, "force_retrace"_a = false, "full_graph"_a = false, "max_different_graphs"_a = 0);
}

}  // namespace xlite::python
