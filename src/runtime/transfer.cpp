#include "runtime/transfer.h"

#include <cstring>
#include <utility>

#include "core/check.h"
#include "runtime/allocator.h"
#include "xlite/error.h"

namespace xlite::runtime {
namespace {

// Every device kind there is today is host memory; a GPU kind will stage through pinned host buffers here.
bool host_addressable(Device device) {
  switch (device.kind) {
    case DeviceKind::cpu: return true;
  }
  return false;
}

std::byte* host_bytes(const Buffer& buffer) {
  XLITE_CHECK(host_addressable(buffer.device()), "host access to " + buffer.device().str() + " memory");
  return static_cast<std::byte*>(buffer.data());
}

void check_fits(size_t bytes, const Buffer& buffer, const char* what) {
  XLITE_CHECK(bytes <= buffer.bytes(), std::string(what) + " of " + std::to_string(bytes) + " bytes with a buffer of " +
                                           std::to_string(buffer.bytes()) + " on " + buffer.device().str());
}

class TransferThunk final : public Thunk {
 public:
  std::optional<StepFailure> run(const StepInputs& inputs, BufferPtr* out) const override {
    copy_between_devices(*inputs[0], **out);
    return std::nullopt;
  }
};

}  // namespace

void to_host(const Buffer& src, std::span<std::byte> dst) {
  check_fits(dst.size(), src, "to_host");
  if (!dst.empty()) std::memcpy(dst.data(), host_bytes(src), dst.size());
}

void from_host(std::span<const std::byte> src, Buffer& dst) {
  check_fits(src.size(), dst, "from_host");
  if (!src.empty()) std::memcpy(host_bytes(dst), src.data(), src.size());
}

BufferPtr from_host(std::span<const std::byte> src, Device device) {
  BufferPtr buffer = allocator(device).allocate(src.size());
  from_host(src, *buffer);
  return buffer;
}

void read_on_host(const Buffer& buffer, const std::function<void(std::span<const std::byte>)>& read) {
  read(std::span<const std::byte>(host_bytes(buffer), buffer.bytes()));
}

void write_on_host(Buffer& buffer, const std::function<void(std::span<std::byte>)>& write) {
  write(std::span<std::byte>(host_bytes(buffer), buffer.bytes()));
}

const std::byte* host_address(const Buffer& buffer) {
  return host_addressable(buffer.device()) ? static_cast<const std::byte*>(buffer.data()) : nullptr;
}

namespace {
// One per borrowed buffer: it runs the owner's release and goes with the buffer.
class BorrowedRelease final : public BufferReleaser {
 public:
  explicit BorrowedRelease(std::function<void()> release) : release_(std::move(release)) {}
  void release(void*, size_t) override {
    std::function<void()> release = std::move(release_);
    delete this;
    if (release) release();
  }

 private:
  std::function<void()> release_;
};
}  // namespace

BufferPtr borrow_host_memory(void* data, size_t bytes, Device device, std::function<void()> release) {
  if (!host_addressable(device)) return nullptr;
  auto releaser = std::make_unique<BorrowedRelease>(std::move(release));
  auto buffer = std::make_shared<Buffer>(data, bytes, bytes, device, releaser.get(), true);
  releaser.release();  // the buffer's now: it deletes itself when the buffer goes
  return buffer;
}

void copy_between_devices(const Buffer& src, Buffer& dst) {
  check_fits(src.bytes(), dst, "a transfer");
  if (src.bytes()) std::memcpy(host_bytes(dst), host_bytes(src), src.bytes());
}

std::unique_ptr<Thunk> make_transfer_thunk() { return std::make_unique<TransferThunk>(); }

void fail_run(const RunOn& on, Device compiled_for, std::span<const BufferPtr> args,
              std::span<const Device> parameter_devices) {
  if (on.device != compiled_for)
    throw Error("[run] the program was compiled for " + compiled_for.str() + " and is run on " + on.device.str());
  if (on.stream != 0) throw Error("[run] " + on.device.str() + " has one stream (0), not " + std::to_string(on.stream));
  XLITE_CHECK(args.size() == parameter_devices.size(), "[run] expected " + std::to_string(parameter_devices.size()) +
                                                           " arguments, got " + std::to_string(args.size()));
  for (size_t a = 0; a < args.size(); ++a)
    XLITE_CHECK(args[a]->device() == parameter_devices[a], "[run] argument " + std::to_string(a) + " is on " +
                                                               args[a]->device().str() + ", its parameter on " +
                                                               parameter_devices[a].str());
  XLITE_FAIL("[run] a check failed that fail_run does not know");
}

}  // namespace xlite::runtime
