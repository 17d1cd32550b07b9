#pragma once
// Checkpoints in the safetensors format (readable by the safetensors package and PyTorch).
#include <map>
#include <string>

#include "xlite/tensor.h"

namespace xlite {

// Writes atomically: a temporary file in the same folder, fsync, rename, fsync of the folder. A failed
// save leaves any earlier file at path untouched.
void save(const std::map<std::string, Tensor>& tensors, const std::string& path);
// Reads every tensor; a truncated or corrupt file raises xlite::Error naming the problem.
// The tensors are placed on `device` (PyTorch's map_location).
std::map<std::string, Tensor> load(const std::string& path, Device device = xlite::device());

}  // namespace xlite
