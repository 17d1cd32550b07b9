#pragma once
// A block of device memory. Buffers are immutable once written by the op that produced them, so several
// tensors and graph parameters may share one. The allocator that made it takes it back on destruction.
#include <cstddef>
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
  Buffer(void* data, size_t bytes, size_t capacity, Device device, BufferReleaser* releaser)
      : data_(data), bytes_(bytes), capacity_(capacity), device_(device), releaser_(releaser) {}
  ~Buffer() { releaser_->release(data_, capacity_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  template <class T> T* as() const { return static_cast<T*>(data_); }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  void* data_;
  size_t bytes_;
  size_t capacity_;
  Device device_;
  BufferReleaser* releaser_;
};

}  // namespace xlite
