#pragma once
// Replacing a file so that a reader sees the old or the new content and nothing else, even when the writer
// is killed: each writer writes its own locked temp next to the target, flushes it and renames it over the
// target. Temps that killed writers leave behind are removed by the next writer or reader of that path.
#include <cstddef>
#include <string>

namespace xlite::io {

class AtomicFile {
 public:
  // Creates `<path>.tmp.<pid>.<n>` (n unique within the process) and locks it for this writer's lifetime.
  // `op` names the public function in errors ("save").
  AtomicFile(std::string path, std::string op);
  ~AtomicFile();  // removes the temp unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t bytes);
  // Flushes the temp, renames it over the path and flushes the directory entry.
  void commit();

  const std::string& temp_path() const { return temp_; }

 private:
  std::string path_, op_, temp_;
  int fd_ = -1;
};

// Removes `<path>.tmp.*` files whose writer is dead: its process is gone and nobody holds the temp's lock.
// Returns how many were removed. Never throws: cleaning is a courtesy, not part of the caller's result.
int remove_stale_temps(const std::string& path);

}  // namespace xlite::io
