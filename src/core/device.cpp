#include "xlite/device.h"

#include "core/environment.h"
#include "xlite/error.h"

namespace xlite {

std::string Device::str() const { return "cpu:" + std::to_string(index); }

std::ostream& operator<<(std::ostream& os, const Device& device) { return os << device.str(); }

int device_count() { return env::settings().num_cpu_devices; }

Device device(int index) {
  if (index < 0 || index >= device_count())
    throw Error("[device] no device cpu:" + std::to_string(index) + " (there are " + std::to_string(device_count()) +
                "; XLITE_NUM_CPU_DEVICES sets how many)");
  return Device{DeviceKind::cpu, index};
}

std::vector<Device> devices() {
  std::vector<Device> all;
  for (int i = 0; i < device_count(); ++i) all.push_back(Device{DeviceKind::cpu, i});
  return all;
}

}  // namespace xlite
