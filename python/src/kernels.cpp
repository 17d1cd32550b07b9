// xlite::kernels from Python: the built-in kernels (flash and paged attention, gmm, tgmm), calls of any
// registered kernel, and kernels registered with a Python implementation over NumPy arrays (slow: for
// prototyping a kernel before writing it in C++).
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "bindings.h"

namespace xlite::python {
namespace {
using namespace nb::literals;
namespace k = xlite::kernels;

nb::list types_to_python(const std::vector<k::TensorType>& types) {
  nb::list out;
  for (const k::TensorType& t : types) out.append(nb::make_tuple(nb::tuple(nb::cast(t.shape)), t.dtype));
  return out;
}

nb::dict attrs_to_python(const k::Attrs& attrs) {
  nb::dict d;
  for (const auto& [name, value] : attrs) d[name.c_str()] = nb::cast(value);
  return d;
}

// The Python shape rule gives (shape, dtype) pairs.
k::ShapeRule shape_rule(nb::object fn) {
  return [fn](const std::vector<k::TensorType>& inputs, const k::Attrs& attrs) {
    nb::gil_scoped_acquire locked;
    std::vector<k::TensorType> out;
    nb::object result = fn(types_to_python(inputs), attrs_to_python(attrs));
    for (nb::handle item : result) {
      nb::tuple pair = nb::cast<nb::tuple>(item);
      if (pair.size() != 2) throw Error("the shape rule must give (shape, dtype) pairs");
      out.push_back({to_shape(pair[0]), to_dtype(pair[1])});
    }
    return out;
  };
}

// The Python implementation gets copies of the inputs as NumPy arrays and returns one array per output,
// which must have the output's shape; it is converted to the output's dtype.
k::CpuImpl cpu_impl(nb::object fn) {
  return [fn](const k::CpuCall& call, k::CpuContext& context) {
    nb::gil_scoped_acquire locked;
    try {
      nb::module_ np = nb::module_::import_("numpy");
      nb::object numpy_dtype = nb::module_::import_("xlite._creation").attr("_numpy_dtype");
      nb::list inputs;
      for (size_t i = 0; i < call.num_inputs(); ++i) {
        const k::TensorType& t = call.input_type(i);
        // A copy: the input's buffer is the runtime's, and the implementation may keep what it gets.
        inputs.append(numpy_view(call.input_data(i), t.shape, t.dtype, nb::none())
                          .attr("copy")()
                          .attr("view")(numpy_dtype(t.dtype)));
      }
      nb::object result = fn(inputs, attrs_to_python(call.attrs()));
      if (call.num_outputs() == 1 && !nb::isinstance<nb::list>(result) && !nb::isinstance<nb::tuple>(result))
        result = nb::make_tuple(result);
      if (nb::len(result) != call.num_outputs())
        context.fail("the Python implementation returned " + std::to_string(nb::len(result)) + " arrays for " +
                     std::to_string(call.num_outputs()) + " outputs");
      for (size_t i = 0; i < call.num_outputs(); ++i) {
        const k::TensorType& t = call.output_type(i);
        // order="C", not ascontiguousarray, which makes a 0-d array 1-d.
        nb::object array = np.attr("asarray")(result[i], numpy_dtype(t.dtype), "order"_a = "C");
        const Shape shape = to_shape(array.attr("shape"));
        if (shape != t.shape)
          context.fail("output " + std::to_string(i) + " has shape " + shape_str(shape) + ", the shape rule gave " +
                       shape_str(t.shape));
        auto bytes = nb::cast<nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>>(
            array.attr("reshape")(-1).attr("view")("uint8"));  // flat first: a 0-d array cannot change itemsize
        std::memcpy(call.output_data(i), bytes.data(), static_cast<size_t>(t.bytes()));
      }
    } catch (const nb::python_error& e) {
      context.fail(std::string("the Python implementation raised ") + e.what());
    }
  };
}

k::Backward backward_rule(nb::object fn) {
  return [fn](const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
              const std::vector<Tensor>& output_grads, const k::Attrs& attrs) {
    nb::gil_scoped_acquire locked;
    nb::list grads_in;
    for (const Tensor& g : output_grads) grads_in.append(g.defined() ? nb::cast(g) : nb::none());
    nb::object result = fn(inputs, outputs, grads_in, attrs_to_python(attrs));
    std::vector<Tensor> grads;
    for (nb::handle g : result) grads.push_back(g.is_none() ? Tensor() : nb::cast<Tensor>(g));
    return grads;
  };
}

}  // namespace

void bind_kernels(nb::module_& m) {
  nb::module_ kernels = m.def_submodule("kernels", "Custom kernels: black boxes the compiler calls inside a graph.");
  kernels.def(
      "register",
      [](const std::string& name, nb::object shape, nb::object cpu, nb::object backward) {
        k::Kernel kernel{.name = name, .shape = shape_rule(shape), .cpu = cpu_impl(cpu)};
        if (!backward.is_none()) kernel.backward = backward_rule(backward);
        k::register_kernel(std::move(kernel));
      },
      "name"_a, "shape"_a, "cpu"_a, "backward"_a = nb::none(),
      "Registers a kernel written in Python. shape(input_types, attrs) gives a (shape, dtype) pair per output "
      "from the inputs' (shape, dtype) pairs; cpu(inputs, attrs) gets the inputs as NumPy arrays and returns one "
      "array per output; backward(inputs, outputs, output_grads, attrs) returns one gradient tensor (or None) "
      "per input, built from xlite ops.");
  kernels.def("is_registered", &k::is_registered, "name"_a, "Whether a kernel of this name is registered.");
  kernels.def(
      "call",
      [](const std::string& name, const std::vector<Tensor>& inputs, std::optional<k::Attrs> attrs) {
        return k::call(name, inputs, attrs.value_or(k::Attrs{}));
      },
      "name"_a, "inputs"_a, "attrs"_a = nb::none(),
      "Calls a registered kernel: one output tensor per type its shape rule gives.");
  kernels.def("gmm", &k::gmm, "lhs"_a, "rhs"_a, "group_sizes"_a,
              "Grouped matmul for mixture-of-experts: rows of lhs [m, k] in groups of group_sizes [G] (int32), "
              "group g times rhs[g] ([G, k, n]).");
  kernels.def("tgmm", &k::tgmm, "lhs"_a, "rhs"_a, "group_sizes"_a,
              "Transposed grouped matmul: out[g] = lhs[:, group g] @ rhs[group g, :].");
  kernels.def(
      "flash_attention",
      [](const Tensor& q, const Tensor& kk, const Tensor& v, bool causal, double sm_scale,
         std::optional<Tensor> q_segment_ids, std::optional<Tensor> kv_segment_ids) {
        return k::flash_attention(q, kk, v, causal, sm_scale, q_segment_ids.value_or(Tensor()),
                                  kv_segment_ids.value_or(Tensor()));
      },
      "q"_a, "k"_a, "v"_a, "causal"_a = false, "sm_scale"_a = 1.0, "q_segment_ids"_a = nb::none(),
      "kv_segment_ids"_a = nb::none(),
      "softmax(q k^T * sm_scale + mask) v without materializing the scores; differentiable.");
  kernels.def("paged_attention", &k::paged_attention, "q"_a, "k_pages"_a, "v_pages"_a, "lengths"_a, "page_indices"_a,
              "pages_per_compute_block"_a = 8, "sm_scale"_a = 1.0, "Decode attention over a paged KV cache.");
  kernels.def(
      "paged_kv_append_",
      [](Tensor& k_pages, Tensor& v_pages, const Tensor& kk, const Tensor& v, const Tensor& lengths,
         const Tensor& page_indices) { k::paged_kv_append_(k_pages, v_pages, kk, v, lengths, page_indices); },
      "k_pages"_a, "v_pages"_a, "k"_a, "v"_a, "lengths"_a, "page_indices"_a,
      "Appends one token per sequence to a paged cache, in place.");
}

}  // namespace xlite::python
