#include "io/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "xlite/error.h"

namespace xlite::io {
namespace {

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

std::string base_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

[[noreturn]] void fail(const std::string& op, const std::string& what, const std::string& path) {
  throw Error("[" + op + "] " + what + " " + path + ": " + std::strerror(errno));
}

// The pid a temp's name carries, or 0 when the name is not one of ours.
pid_t writer_pid(const std::string& suffix) {
  char* end = nullptr;
  const long pid = std::strtol(suffix.c_str(), &end, 10);
  return end != suffix.c_str() && *end == '.' && pid > 0 ? static_cast<pid_t>(pid) : 0;
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string op) : path_(std::move(path)), op_(std::move(op)) {
  static std::atomic<uint64_t> next{0};
  temp_ = path_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(next.fetch_add(1));
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(op_, "cannot create", temp_);
  // Held until the descriptor closes, so a cleaner in another process never removes a live writer's temp.
  if (::flock(fd_, LOCK_EX) != 0) {
    const int saved = errno;
    ::close(fd_);
    ::unlink(temp_.c_str());
    errno = saved;
    fail(op_, "cannot lock", temp_);
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::unlink(temp_.c_str());
    ::close(fd_);
  }
}

void AtomicFile::write(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(op_, "cannot write", temp_);
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) fail(op_, "cannot flush", temp_);
  if (::rename(temp_.c_str(), path_.c_str()) != 0) fail(op_, "cannot rename onto", path_);
  ::close(fd_);
  fd_ = -1;
  // Without this the rename itself may not survive a power cut.
  const int dir = ::open(folder_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

int remove_stale_temps(const std::string& path) {
  const std::string prefix = base_of(path) + ".tmp.";
  const std::string folder = folder_of(path);
  DIR* dir = ::opendir(folder.c_str());
  if (!dir) return 0;
  int removed = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    const pid_t pid = writer_pid(name.substr(prefix.size()));
    if (pid == 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    const std::string temp = folder + "/" + name;
    const int fd = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::unlink(temp.c_str()) == 0) ++removed;
    ::close(fd);
  }
  ::closedir(dir);
  return removed;
}

}  // namespace xlite::io
