#pragma once
// A block of device memory. Buffers are immutable once written by the op that produced them, so several
// tensors and graph parameters may share one. The allocator that made it takes it back on destruction.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "xlite/device.h"

namespace xlite {

class Buffer;
using BufferPtr = std::shared_ptr<Buffer>;

class BufferReleaser {
 public:
  virtual ~BufferReleaser() = default;
  virtual void release(void* data, size_t capacity) = 0;
};

class Buffer {
 public:
  // borrowed: memory another library owns (from_blob). A program never writes a new value into it.
  Buffer(void* data, size_t bytes, size_t capacity, Device device, BufferReleaser* releaser, bool borrowed = false)
      : data_(data),
        bytes_(bytes),
        capacity_(capacity),
        device_(device),
        releaser_(releaser),
        borrowed_(borrowed),
        serial_(next_serial().fetch_add(1, std::memory_order_relaxed)) {}
  ~Buffer() { releaser_->release(data_, capacity_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }
  bool borrowed() const { return borrowed_; }
  // Allocation order: a replayed step tells data made during its trace from data that existed before.
  uint64_t serial() const { return serial_; }
  static uint64_t serial_now() { return next_serial().load(std::memory_order_relaxed); }

 private:
  void* data_;
  size_t bytes_;
  size_t capacity_;
  Device device_;
  BufferReleaser* releaser_;
  bool borrowed_;
  uint64_t serial_;
  static std::atomic<uint64_t>& next_serial() {
    static std::atomic<uint64_t> serial{1};
    return serial;
  }
};

}  // namespace xlite
