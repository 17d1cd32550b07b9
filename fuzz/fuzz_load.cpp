// libFuzzer harness: xlite::load on arbitrary bytes may only return tensors or raise xlite::Error.
// Anything else (another exception, a crash, a sanitizer report, a hang, memory out of proportion to
// the input) is a finding.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include <xlite/xlite.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A file in memory: load takes a path, and a path in /proc/self/fd reaches the same code as a disk file.
  static const int fd = memfd_create("xlite-fuzz-load", 0);
  if (fd < 0) std::abort();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    for (auto& [name, tensor] : xlite::load(path)) (void)tensor.numel();
  } catch (const xlite::InternalError&) {
    std::abort();
  } catch (const xlite::Error&) {
  }
  return 0;
}
