#include <set>

#include "xlite/error.h"
#include "xlite/nn.h"

namespace xlite::nn {

Tensor Module::register_parameter(const std::string& name, Tensor value) {
  value.requires_grad_(true);
  parameters_.emplace_back(name, value);
  return value;
}

Tensor Module::register_buffer(const std::string& name, Tensor value) {
  buffers_.emplace_back(name, value);
  return value;
}

void Module::collect(const std::string& prefix, bool parameters,
                     std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, tensor] : parameters ? parameters_ : buffers_) out.emplace_back(prefix + name, tensor);
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", parameters, out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", true, out);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", false, out);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (const auto& [name, tensor] : named_parameters()) out.push_back(tensor);
  return out;
}

std::map<std::string, Tensor> Module::state_dict() const {
  std::map<std::string, Tensor> state;
  for (const auto& [name, tensor] : named_parameters()) state.emplace(name, tensor);
  for (const auto& [name, tensor] : named_buffers()) state.emplace(name, tensor);
  return state;
}

void Module::load_state_dict(const std::map<std::string, Tensor>& state, bool strict) {
  std::map<std::string, Tensor> own = state_dict();
  if (strict) {
    for (const auto& [name, tensor] : own)
      if (!state.count(name)) throw Error("[load_state_dict] missing '" + name + "'");
    for (const auto& [name, tensor] : state)
      if (!own.count(name)) throw Error("[load_state_dict] unexpected '" + name + "'");
  }
  // Check every shape before changing anything, so a bad state leaves the module as it was.
  for (const auto& [name, tensor] : state) {
    auto it = own.find(name);
    if (it != own.end() && it->second.shape() != tensor.shape())
      throw Error("[load_state_dict] '" + name + "' has shape " + shape_str(tensor.shape()) + ", expected " +
                  shape_str(it->second.shape()));
  }
  NoGradGuard no_grad;
  for (const auto& [name, tensor] : state) {
    auto it = own.find(name);
    if (it != own.end()) it->second.copy_(tensor);
  }
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (auto& [name, child] : children_) child->apply(fn);
  fn(*this);
}

int64_t Module::num_parameters(bool trainable_only) const {
  int64_t n = 0;
  for (const Tensor& p : parameters())
    if (!trainable_only || p.requires_grad()) n += p.numel();
  return n;
}

Module& Module::to(DType dtype) {
  if (!is_floating(dtype))
    throw Error("[Module.to] a module's dtype must be floating, got " + std::string(dtype_name(dtype)));
  NoGradGuard no_grad;
  std::vector<std::pair<std::string, Tensor>> tensors = named_parameters();
  for (auto& named : named_buffers()) tensors.push_back(std::move(named));
  // Integer state (a batch counter) keeps its dtype, as in PyTorch.
  for (auto& [name, tensor] : tensors)
    if (is_floating(tensor.dtype()) && tensor.dtype() != dtype) tensor.set_data(tensor.to(dtype));
  return *this;
}

void Module::train(bool on) {
  training_.set(on);
  for (auto& [name, child] : children_) child->train(on);
}

}  // namespace xlite::nn
