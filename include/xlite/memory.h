#pragma once
#include <cstdint>

#include "xlite/device.h"

namespace xlite {

struct MemoryInfo {
  int64_t bytes_used = 0;       // held by live buffers
  int64_t bytes_limit = 0;      // an allocation past this raises xlite::Error (XLITE_MEMORY_LIMIT, bytes)
  int64_t peak_bytes_used = 0;  // highest bytes_used since start or reset_peak_memory
  int64_t bytes_cached = 0;     // freed blocks kept for reuse (first-touch page faults are costly)
};

MemoryInfo get_memory_info(Device device);
void reset_peak_memory(Device device);
// Returns the cached free blocks of the device to the system.
void empty_cache(Device device);

}  // namespace xlite
