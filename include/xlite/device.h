#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace xlite {

enum class DeviceKind : uint8_t { cpu };

// Where a tensor's data lives and its ops run. XLITE_NUM_CPU_DEVICES=N makes N virtual CPU devices, cpu:0 to
// cpu:N-1, each with its own allocator and statistics: the ground that multi-device programs are tested on.
struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;

  std::string str() const;  // "cpu:0"
  bool operator==(const Device&) const = default;
};

// The most devices of one kind a process can have (the IR hash keeps six bits for the index).
constexpr int kMaxDevices = 64;

std::ostream& operator<<(std::ostream& os, const Device& device);

// The default device is index 0 of the first backend; throws xlite::Error for an index that does not exist.
Device device(int index = 0);
std::vector<Device> devices();
int device_count();

}  // namespace xlite
