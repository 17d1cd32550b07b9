#pragma once
// Running pending work: the one path from live pending tensors to device data, shared by sync(), value
// reads and eager ops.
#include <vector>

#include "core/tensor_impl.h"

namespace xlite::lazy {

enum class SyncCause { user_sync, value_read, eager_op };

// Computes the pending values of these tensors as one graph and binds the results to them.
void sync_tensors(const std::vector<TensorImpl*>& impls, SyncCause cause);

bool eager();

// Time spent building IR since the last sync is reported as TracingTime with the next sync.
void add_tracing_time(double nanoseconds);

}  // namespace xlite::lazy
