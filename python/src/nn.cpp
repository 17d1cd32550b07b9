// xlite::nn's modules and losses and xlite::optim's optimizers. Python subclasses xlite.nn.Module
// (xlite/nn.py), whose children may be these C++ modules.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"

namespace xlite::python {
namespace {
using namespace nb::literals;

// A C++ module's parameter, read and assigned from Python (model.fc.weight = ...). The module, its
// parameters() and every optimizer hold the same tensor, so an assignment copies the new values into it (under
// no_grad; the shapes must match) rather than putting another tensor in one of those places only. Tying one
// C++ module's weight to another tensor is not possible this way: write that model as a Python module.
template <class M>
void tensor_field(nb::class_<M, nn::UnaryModule>& c, const char* name, Tensor M::* field) {
  c.def_prop_rw(
      name,
      [field](const M& m) -> std::optional<Tensor> {
        if (!(m.*field).defined()) return std::nullopt;
        return m.*field;
      },
      [field, name](M& m, const Tensor& t) {
        Tensor& held = m.*field;
        if (!held.defined()) throw Error(std::string("[") + name + "] this module has no " + name);
        if (t.shape() != held.shape())
          throw Error(std::string("[") + name + "] a value of shape " + shape_str(t.shape()) +
                      " cannot replace one of shape " + shape_str(held.shape()));
        NoGradGuard no_grad;
        held.copy_(t);
      });
}

void bind_norm_and_conv_modules(nb::module_& nn_module);

// A size argument as PyTorch's modules take it: an int, or a tuple or list of (height, width).
std::vector<int64_t> sizes_of(nb::handle v) {
  return PyLong_Check(v.ptr()) ? std::vector<int64_t>{nb::cast<int64_t>(v)} : to_shape(v);
}

// The pooling modules' arguments: stride None is the kernel size.
template <class Pool>
void pool_init(Pool* self, nb::handle kernel, nb::handle stride, nb::handle padding) {
  new (self) Pool(sizes_of(kernel), {.stride = stride.is_none() ? std::vector<int64_t>{} : sizes_of(stride),
                                     .padding = sizes_of(padding)});
}

void bind_modules(nb::module_& nn_module) {
  nb::class_<nn::Module>(nn_module, "_CppModule", "A module written in C++ (xlite/nn.h).")
      .def("parameters", &nn::Module::parameters)
      .def("named_parameters", &nn::Module::named_parameters)
      .def("named_buffers", &nn::Module::named_buffers)
      .def("state_dict", &nn::Module::state_dict)
      .def("load_state_dict", &nn::Module::load_state_dict, "state_dict"_a, "strict"_a = true)
      .def(
          "train",
          [](nn::Module& m, bool on) -> nn::Module& {
            m.train(on);
            return m;
          },
          "mode"_a = true, nb::rv_policy::reference)
      .def(
          "eval",
          [](nn::Module& m) -> nn::Module& {
            m.eval();
            return m;
          },
          nb::rv_policy::reference)
      .def("to", &nn::Module::to, "dtype"_a, nb::rv_policy::reference,
           "Converts every floating parameter and buffer to dtype in place.")
      .def_prop_ro("training", &nn::Module::is_training);
  nb::class_<nn::UnaryModule, nn::Module>(nn_module, "_CppUnaryModule")
      .def("forward", &nn::UnaryModule::forward, "input"_a)
      .def("__call__", &nn::UnaryModule::forward, "input"_a);

  auto linear = nb::class_<nn::Linear, nn::UnaryModule>(nn_module, "Linear", "y = x W^T + b; W of shape [out, in].")
                    .def(nb::init<int64_t, int64_t, bool>(), "in_features"_a, "out_features"_a, "bias"_a = true);
  tensor_field(linear, "weight", &nn::Linear::weight);
  tensor_field(linear, "bias", &nn::Linear::bias);
  auto embedding = nb::class_<nn::Embedding, nn::UnaryModule>(nn_module, "Embedding")
                       .def(nb::init<int64_t, int64_t>(), "num_embeddings"_a, "embedding_dim"_a);
  tensor_field(embedding, "weight", &nn::Embedding::weight);
  auto conv =
      nb::class_<nn::Conv2d, nn::UnaryModule>(nn_module, "Conv2d")
          .def(
              "__init__",
              [](nn::Conv2d* self, int64_t in, int64_t out, nb::handle kernel, nb::handle stride, nb::handle padding,
                 nb::handle dilation, int64_t groups, bool bias) {
                new (self) nn::Conv2d(in, out, sizes_of(kernel),
                                      {.stride = sizes_of(stride),
                                       .padding = sizes_of(padding),
                                       .dilation = sizes_of(dilation),
                                       .groups = groups,
                                       .bias = bias});
              },
              "in_channels"_a, "out_channels"_a, "kernel_size"_a, "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1,
              "groups"_a = 1, "bias"_a = true, "kernel_size, stride, padding and dilation: an int or (height, width).");
  tensor_field(conv, "weight", &nn::Conv2d::weight);
  tensor_field(conv, "bias", &nn::Conv2d::bias);
  nb::class_<nn::MaxPool2d, nn::UnaryModule>(nn_module, "MaxPool2d")
      .def("__init__", &pool_init<nn::MaxPool2d>, "kernel_size"_a, "stride"_a = nb::none(), "padding"_a = 0,
           "kernel_size, stride (None: the kernel size) and padding: an int or (height, width).");
  nb::class_<nn::AvgPool2d, nn::UnaryModule>(nn_module, "AvgPool2d")
      .def("__init__", &pool_init<nn::AvgPool2d>, "kernel_size"_a, "stride"_a = nb::none(), "padding"_a = 0,
           "kernel_size, stride (None: the kernel size) and padding: an int or (height, width); padding counts "
           "as zeros.");
  nb::class_<nn::ReLU, nn::UnaryModule>(nn_module, "ReLU").def(nb::init<>());
  nb::class_<nn::Flatten, nn::UnaryModule>(nn_module, "Flatten").def(nb::init<int64_t>(), "start_dim"_a = 1);
  auto layer_norm = nb::class_<nn::LayerNorm, nn::UnaryModule>(nn_module, "LayerNorm")
                        .def(nb::init<int64_t, double>(), "normalized_shape"_a, "eps"_a = 1e-5);
  tensor_field(layer_norm, "weight", &nn::LayerNorm::weight);
  tensor_field(layer_norm, "bias", &nn::LayerNorm::bias);
  auto rms_norm = nb::class_<nn::RMSNorm, nn::UnaryModule>(nn_module, "RMSNorm")
                      .def(nb::init<int64_t, double>(), "normalized_shape"_a, "eps"_a = 1e-6);
  tensor_field(rms_norm, "weight", &nn::RMSNorm::weight);
  bind_norm_and_conv_modules(nn_module);
  nb::class_<nn::Dropout, nn::UnaryModule>(nn_module, "Dropout")
      .def(nb::init<double>(), "p"_a = 0.5)
      .def_rw("p", &nn::Dropout::p);
  nb::class_<nn::MLP, nn::UnaryModule>(nn_module, "MLP", "Linear -> GELU -> Linear.")
      .def(nb::init<int64_t, int64_t>(), "dim"_a, "hidden"_a)
      .def_ro("fc", &nn::MLP::fc)
      .def_ro("proj", &nn::MLP::proj);
  nb::class_<nn::CausalSelfAttention, nn::UnaryModule>(nn_module, "CausalSelfAttention",
                                                       "Multi-head causal self-attention over [B, T, d_model].")
      .def(nb::init<int64_t, int64_t>(), "d_model"_a, "heads"_a)
      .def_ro("qkv", &nn::CausalSelfAttention::qkv)
      .def_ro("proj", &nn::CausalSelfAttention::proj);

  // The losses with torch.nn.functional's argument order (weight before the keyword arguments).
  nn_module.def(
      "cross_entropy",
      [](const Tensor& input, const Tensor& target, std::optional<Tensor> weight, int64_t ignore_index,
         const std::string& reduction, double label_smoothing) {
        return nn::cross_entropy(input, target, ignore_index, label_smoothing, weight, reduction);
      },
      "input"_a, "target"_a, "weight"_a = nb::none(), nb::kw_only(), "ignore_index"_a = -100, "reduction"_a = "mean",
      "label_smoothing"_a = 0.0, "Cross entropy of logits [N, C, d1, ...] against integer targets [N, d1, ...].");
  nn_module.def(
      "nll_loss",
      [](const Tensor& input, const Tensor& target, std::optional<Tensor> weight, int64_t ignore_index,
         const std::string& reduction) { return nn::nll_loss(input, target, ignore_index, weight, reduction); },
      "input"_a, "target"_a, "weight"_a = nb::none(), nb::kw_only(), "ignore_index"_a = -100, "reduction"_a = "mean",
      "Negative log-likelihood of log-probabilities [N, C, d1, ...] against integer targets [N, d1, ...].");
  nn_module.def("mse_loss", &nn::mse_loss, "input"_a, "target"_a, "reduction"_a = "mean", "Squared error.");
  nn_module.def("l1_loss", &nn::l1_loss, "input"_a, "target"_a, "reduction"_a = "mean", "Absolute error.");
  nn_module.def("smooth_l1_loss", &nn::smooth_l1_loss, "input"_a, "target"_a, "beta"_a = 1.0, "reduction"_a = "mean",
                "Squared error below beta, absolute above.");
  nn_module.def("huber_loss", &nn::huber_loss, "input"_a, "target"_a, "delta"_a = 1.0, "reduction"_a = "mean",
                "Squared error below delta, delta times the absolute error above.");
  nn_module.def("binary_cross_entropy", &nn::binary_cross_entropy, "input"_a, "target"_a, "weight"_a = nb::none(),
                "reduction"_a = "mean", "Binary cross entropy of probabilities.");
  nn_module.def("binary_cross_entropy_with_logits", &nn::binary_cross_entropy_with_logits, "input"_a, "target"_a,
                "weight"_a = nb::none(), "pos_weight"_a = nb::none(), "reduction"_a = "mean",
                "Binary cross entropy of logits, stable for any logit.");
  nn_module.def("kl_div", &nn::kl_div, "input"_a, "target"_a, "reduction"_a = "mean", "log_target"_a = false,
                "KL divergence of log-probabilities input from target.");
  nn_module.def("cosine_similarity", &nn::cosine_similarity, "x1"_a, "x2"_a, "dim"_a = 1, "eps"_a = 1e-8,
                "Cosine of the angle between x1 and x2 along dim.");
}

// The normalisation layers and the 1-D and transposed convolutions, with PyTorch's arguments.
void bind_norm_and_conv_modules(nb::module_& nn_module) {
  auto batch_norm = nb::class_<nn::BatchNorm, nn::UnaryModule>(nn_module, "_BatchNorm");
  tensor_field(batch_norm, "weight", &nn::BatchNorm::weight);
  tensor_field(batch_norm, "bias", &nn::BatchNorm::bias);
  tensor_field(batch_norm, "running_mean", &nn::BatchNorm::running_mean);
  tensor_field(batch_norm, "running_var", &nn::BatchNorm::running_var);
  batch_norm.def_rw("momentum", &nn::BatchNorm::momentum).def_rw("eps", &nn::BatchNorm::eps);
  nb::class_<nn::BatchNorm1d, nn::BatchNorm>(nn_module, "BatchNorm1d")
      .def(nb::init<int64_t, double, double, bool, bool>(), "num_features"_a, "eps"_a = 1e-5, "momentum"_a = 0.1,
           "affine"_a = true, "track_running_stats"_a = true);
  nb::class_<nn::BatchNorm2d, nn::BatchNorm>(nn_module, "BatchNorm2d")
      .def(nb::init<int64_t, double, double, bool, bool>(), "num_features"_a, "eps"_a = 1e-5, "momentum"_a = 0.1,
           "affine"_a = true, "track_running_stats"_a = true);
  auto group_norm = nb::class_<nn::GroupNorm, nn::UnaryModule>(nn_module, "GroupNorm")
                        .def(nb::init<int64_t, int64_t, double, bool>(), "num_groups"_a, "num_channels"_a,
                             "eps"_a = 1e-5, "affine"_a = true);
  tensor_field(group_norm, "weight", &nn::GroupNorm::weight);
  tensor_field(group_norm, "bias", &nn::GroupNorm::bias);
  nb::class_<nn::InstanceNorm2d, nn::UnaryModule>(nn_module, "InstanceNorm2d")
      .def(nb::init<int64_t, double, bool>(), "num_features"_a, "eps"_a = 1e-5, "affine"_a = false);
  auto conv1d =
      nb::class_<nn::Conv1d, nn::UnaryModule>(nn_module, "Conv1d")
          .def(
              "__init__",
              [](nn::Conv1d* self, int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding,
                 int64_t dilation, int64_t groups, bool bias) {
                new (self) nn::Conv1d(
                    in, out, kernel,
                    {.stride = {stride}, .padding = {padding}, .dilation = {dilation}, .groups = groups, .bias = bias});
              },
              "in_channels"_a, "out_channels"_a, "kernel_size"_a, "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1,
              "groups"_a = 1, "bias"_a = true);
  tensor_field(conv1d, "weight", &nn::Conv1d::weight);
  tensor_field(conv1d, "bias", &nn::Conv1d::bias);
  auto up = nb::class_<nn::ConvTranspose2d, nn::UnaryModule>(nn_module, "ConvTranspose2d")
                .def(
                    "__init__",
                    [](nn::ConvTranspose2d* self, int64_t in, int64_t out, nb::handle kernel, nb::handle stride,
                       nb::handle padding, nb::handle output_padding, int64_t groups, bool bias, nb::handle dilation) {
                      new (self) nn::ConvTranspose2d(in, out, sizes_of(kernel),
                                                     {.stride = sizes_of(stride),
                                                      .padding = sizes_of(padding),
                                                      .dilation = sizes_of(dilation),
                                                      .output_padding = sizes_of(output_padding),
                                                      .groups = groups,
                                                      .bias = bias});
                    },
                    "in_channels"_a, "out_channels"_a, "kernel_size"_a, "stride"_a = 1, "padding"_a = 0,
                    "output_padding"_a = 0, "groups"_a = 1, "bias"_a = true, "dilation"_a = 1);
  tensor_field(up, "weight", &nn::ConvTranspose2d::weight);
  tensor_field(up, "bias", &nn::ConvTranspose2d::bias);
}

// Adam and AdamW take PyTorch's arguments: betas as a pair.
template <class A>
void adam_init(A* self, std::vector<Tensor> params, double lr, std::pair<double, double> betas, double eps,
               double weight_decay) {
  new (self) A(std::move(params), lr, {betas.first, betas.second, eps, weight_decay});
}

void bind_optimizers(nb::module_& optim) {
  nb::class_<optim::Optimizer>(optim, "Optimizer")
      .def(
          "step", [](optim::Optimizer& o) { o.step(); },
          "One update of every parameter, in place and without recording gradients.")
      .def("zero_grad", &optim::Optimizer::zero_grad, "set_to_none"_a = true,
           "Drops every gradient (set_to_none, as PyTorch 2), or zeroes them in place; step() skips a parameter "
           "without one.")
      .def_prop_rw("lr", &optim::Optimizer::lr, &optim::Optimizer::set_lr,
                   "The learning rate; setting it never recompiles a step.")
      .def("state_dict", &optim::Optimizer::state_dict,
           "The learning rate and every state tensor by name, sharing storage with the optimizer.")
      .def("load_state_dict", &optim::Optimizer::load_state_dict, "state_dict"_a,
           "Copies a state_dict into this optimizer's states; a bad one raises before anything changes.");
  nb::class_<optim::SGD, optim::Optimizer>(optim, "SGD")
      .def(
          "__init__",
          [](optim::SGD* self, std::vector<Tensor> params, double lr, double momentum, double dampening,
             double weight_decay, bool nesterov) {
            new (self) optim::SGD(std::move(params), lr, {momentum, dampening, weight_decay, nesterov});
          },
          "params"_a, "lr"_a, "momentum"_a = 0.0, "dampening"_a = 0.0, "weight_decay"_a = 0.0, "nesterov"_a = false);
  nb::class_<optim::Adam, optim::Optimizer>(optim, "Adam")
      .def("__init__", &adam_init<optim::Adam>, "params"_a, "lr"_a = 1e-3,
           "betas"_a = std::pair<double, double>(0.9, 0.999), "eps"_a = 1e-8, "weight_decay"_a = 0.0);
  nb::class_<optim::AdamW, optim::Adam>(optim, "AdamW")
      .def("__init__", &adam_init<optim::AdamW>, "params"_a, "lr"_a = 1e-3,
           "betas"_a = std::pair<double, double>(0.9, 0.999), "eps"_a = 1e-8, "weight_decay"_a = 1e-2);
  nb::class_<optim::RMSprop, optim::Optimizer>(optim, "RMSprop")
      .def(
          "__init__",
          [](optim::RMSprop* self, std::vector<Tensor> params, double lr, double alpha, double eps, double weight_decay,
             double momentum, bool centered) {
            new (self) optim::RMSprop(std::move(params), lr, {alpha, eps, weight_decay, momentum, centered});
          },
          "params"_a, "lr"_a = 1e-2, "alpha"_a = 0.99, "eps"_a = 1e-8, "weight_decay"_a = 0.0, "momentum"_a = 0.0,
          "centered"_a = false);
  nb::class_<optim::Adagrad, optim::Optimizer>(optim, "Adagrad")
      .def(
          "__init__",
          [](optim::Adagrad* self, std::vector<Tensor> params, double lr, double lr_decay, double weight_decay,
             double initial_accumulator_value, double eps) {
            new (self) optim::Adagrad(std::move(params), lr, {lr_decay, weight_decay, initial_accumulator_value, eps});
          },
          "params"_a, "lr"_a = 1e-2, "lr_decay"_a = 0.0, "weight_decay"_a = 0.0, "initial_accumulator_value"_a = 0.0,
          "eps"_a = 1e-10);
  nb::class_<optim::Lion, optim::Optimizer>(optim, "Lion")
      .def(
          "__init__",
          [](optim::Lion* self, std::vector<Tensor> params, double lr, std::pair<double, double> betas,
             double weight_decay) {
            new (self) optim::Lion(std::move(params), lr, {betas.first, betas.second, weight_decay});
          },
          "params"_a, "lr"_a = 1e-4, "betas"_a = std::pair<double, double>(0.9, 0.99), "weight_decay"_a = 0.0);
  optim.def("warmup_cosine_lr", &optim::warmup_cosine_lr, "step"_a, "warmup"_a, "total"_a, "base_lr"_a,
            "min_lr"_a = 0.0, "Linear warm-up to base_lr, then cosine decay to min_lr at total steps.");
  optim.def("clip_grad_norm_", &optim::clip_grad_norm_, "parameters"_a, "max_norm"_a,
            "Scales the gradients so that their joint L2 norm is at most max_norm; returns the norm before.");
}

}  // namespace

// torch.optim.lr_scheduler's classes: each keeps its optimizer alive.
void bind_schedulers(nb::module_& optim) {
  nb::module_ s = optim.def_submodule("lr_scheduler", "Learning-rate schedules over an optimizer.");
  nb::class_<optim::LRScheduler>(s, "LRScheduler")
      .def("step", &optim::LRScheduler::step, "Moves to the next epoch and sets its learning rate.")
      .def("get_last_lr", [](const optim::LRScheduler& l) { return std::vector<double>{l.get_last_lr()}; })
      .def_prop_ro("last_epoch", &optim::LRScheduler::last_epoch);
  nb::class_<optim::StepLR, optim::LRScheduler>(s, "StepLR")
      .def(nb::init<optim::Optimizer&, int64_t, double>(), "optimizer"_a, "step_size"_a, "gamma"_a = 0.1,
           nb::keep_alive<1, 2>());
  nb::class_<optim::MultiStepLR, optim::LRScheduler>(s, "MultiStepLR")
      .def(nb::init<optim::Optimizer&, std::vector<int64_t>, double>(), "optimizer"_a, "milestones"_a, "gamma"_a = 0.1,
           nb::keep_alive<1, 2>());
  nb::class_<optim::ExponentialLR, optim::LRScheduler>(s, "ExponentialLR")
      .def(nb::init<optim::Optimizer&, double>(), "optimizer"_a, "gamma"_a, nb::keep_alive<1, 2>());
  nb::class_<optim::CosineAnnealingLR, optim::LRScheduler>(s, "CosineAnnealingLR")
      .def(nb::init<optim::Optimizer&, int64_t, double>(), "optimizer"_a, "T_max"_a, "eta_min"_a = 0.0,
           nb::keep_alive<1, 2>());
  nb::class_<optim::LinearLR, optim::LRScheduler>(s, "LinearLR")
      .def(nb::init<optim::Optimizer&, double, double, int64_t>(), "optimizer"_a, "start_factor"_a = 1.0 / 3,
           "end_factor"_a = 1.0, "total_iters"_a = 5, nb::keep_alive<1, 2>());
  nb::class_<optim::OneCycleLR, optim::LRScheduler>(s, "OneCycleLR")
      .def(
          "__init__",
          [](optim::OneCycleLR* self, optim::Optimizer& o, double max_lr, int64_t total_steps, double pct_start,
             const std::string& anneal_strategy, double div_factor, double final_div_factor, bool three_phase) {
            new (self) optim::OneCycleLR(o, max_lr, total_steps,
                                         {pct_start, anneal_strategy, div_factor, final_div_factor, three_phase});
          },
          "optimizer"_a, "max_lr"_a, "total_steps"_a, "pct_start"_a = 0.3, "anneal_strategy"_a = "cos",
          "div_factor"_a = 25.0, "final_div_factor"_a = 1e4, "three_phase"_a = false, nb::keep_alive<1, 2>());
  nb::class_<optim::ReduceLROnPlateau>(s, "ReduceLROnPlateau")
      .def(
          "__init__",
          [](optim::ReduceLROnPlateau* self, optim::Optimizer& o, const std::string& mode, double factor,
             int64_t patience, double threshold, const std::string& threshold_mode, int64_t cooldown, double min_lr,
             double eps) {
            new (self)
                optim::ReduceLROnPlateau(o, {mode, factor, patience, threshold, threshold_mode, cooldown, min_lr, eps});
          },
          "optimizer"_a, "mode"_a = "min", "factor"_a = 0.1, "patience"_a = 10, "threshold"_a = 1e-4,
          "threshold_mode"_a = "rel", "cooldown"_a = 0, "min_lr"_a = 0.0, "eps"_a = 1e-8, nb::keep_alive<1, 2>())
      .def(
          "step",
          [](optim::ReduceLROnPlateau& r, nb::handle metric) {
            r.step(nb::isinstance<Tensor>(metric) ? nb::cast<Tensor>(metric).to(DType::f64).item<double>()
                                                  : nb::cast<double>(metric));
          },
          "metrics"_a, "Reduces the learning rate when the metric stopped improving (a tensor is read: a sync).")
      .def("get_last_lr", [](const optim::ReduceLROnPlateau& r) { return std::vector<double>{r.get_last_lr()}; });
}

void bind_nn(nb::module_& m) {
  nb::module_ nn_module = m.def_submodule("nn", "xlite::nn: modules and losses written in C++.");
  bind_modules(nn_module);
  nb::module_ optim = m.def_submodule("optim", "xlite::optim: optimizers over lists of parameters.");
  bind_optimizers(optim);
  bind_schedulers(optim);
}

}  // namespace xlite::python
