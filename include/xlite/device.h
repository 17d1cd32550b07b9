#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace xlite {

enum class DeviceKind : uint8_t { cpu };

struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;

  std::string str() const;  // "cpu:0"
  bool operator==(const Device&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Device& device);

// The default device is index 0 of the first backend; throws xlite::Error for an index that does not exist.
Device device(int index = 0);
std::vector<Device> devices();
int device_count();

}  // namespace xlite
