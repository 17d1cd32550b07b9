#pragma once
// Moving bytes between the host and devices, and between devices. Code outside the backends and the
// runtime reads and writes buffer contents only through these, so that a device whose memory the host
// cannot address (a GPU) needs changes here and nowhere else. They count nothing: the public ops that move
// user data count TransferToDevice and TransferFromDevice.
#include <cstddef>
#include <functional>
#include <memory>
#include <span>

#include "core/buffer.h"
#include "runtime/program.h"

namespace xlite::runtime {

// Copies the first dst.size() bytes of src to host memory.
void to_host(const Buffer& src, std::span<std::byte> dst);
// Copies host bytes into the start of dst.
void from_host(std::span<const std::byte> src, Buffer& dst);
// A new buffer on `device` holding the bytes.
BufferPtr from_host(std::span<const std::byte> src, Device device);
// Lends the buffer's bytes to host code: directly for memory the host addresses (every CPU device),
// through a staging copy otherwise. For readers of large data (checkpoints) that must not copy it.
void read_on_host(const Buffer& buffer, const std::function<void(std::span<const std::byte>)>& read);
void write_on_host(Buffer& buffer, const std::function<void(std::span<std::byte>)>& write);
// The buffer's own bytes when the host can address them (every CPU device), nullptr otherwise: for handing
// a tensor's memory to another library without a copy.
const std::byte* host_address(const Buffer& buffer);
// A buffer over memory another library owns, for a device whose memory the host addresses (nullptr for
// others); release() runs when the last reader lets go. The buffer is borrowed: never donated, never written.
BufferPtr borrow_host_memory(void* data, size_t bytes, Device device, std::function<void()> release);
// Copies src's bytes into dst, which may be on another device.
void copy_between_devices(const Buffer& src, Buffer& dst);

// The thunk of a transfer step: its one input copied into the output, which the executor allocated on
// the transfer's device.
std::unique_ptr<Thunk> make_transfer_thunk();

// What every executable checks before it runs: the argument count, the device it is run on against the
// one it was compiled for, and each argument's device against its parameter's. Inline: every eager op runs it.
[[noreturn]] void fail_run(const RunOn& on, Device compiled_for, std::span<const BufferPtr> args,
                           std::span<const Device> parameter_devices);
// The device, stream and argument count only; the caller checks each argument's device.
inline void check_placement(const RunOn& on, Device compiled_for, std::span<const BufferPtr> args,
                            std::span<const Device> parameter_devices) {
  if (on.device != compiled_for || on.stream != 0 || args.size() != parameter_devices.size()) [[unlikely]]
    fail_run(on, compiled_for, args, parameter_devices);
}
inline void check_run(const RunOn& on, Device compiled_for, std::span<const BufferPtr> args,
                      std::span<const Device> parameter_devices) {
  check_placement(on, compiled_for, args, parameter_devices);
  bool ok = true;
  for (size_t a = 0; a < args.size(); ++a) ok = ok && args[a]->device() == parameter_devices[a];
  if (!ok) [[unlikely]]
    fail_run(on, compiled_for, args, parameter_devices);
}

}  // namespace xlite::runtime
