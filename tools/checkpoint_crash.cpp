// xlite-checkpoint-crash: kill -9 during xlite::save, and check that the checkpoint survives.
//
//   xlite-checkpoint-crash drive --kills N --mb M --dir D [--seed S]
//
// Saves three M-MiB checkpoints to D/crash.safetensors (timing the saves), then N times: starts a writer process that
// saves a new M-MiB checkpoint (different content each round) to the same path, SIGKILLs it at a random moment within a
// save's measured duration, and checks that the file loads and holds exactly the old or the new round (the new one if
// the writer finished first), and that after that load no temporary of the dead writer is left next to it. One line per
// kill, a summary, exit status 1 on any failure.
//
//   xlite-checkpoint-crash write --round R --mb M --path P --notify FD
//
// The writer: fills the tensor, writes one byte to FD when it starts saving, then saves. It is a fresh
// process (fork + exec of this program) rather than a bare fork, so it owns its threads.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include <xlite/xlite.h>

#include "tensor/tensor_impl.h"
#include "runtime/allocator.h"

namespace xl = xlite;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

int64_t elements_for(int64_t mb) { return mb * (1 << 20) / static_cast<int64_t>(sizeof(int64_t)); }

// Element i of round r: the round in the high bits, so that rounds never share a value.
int64_t value(int64_t round, int64_t i) { return (round << 40) | i; }

xl::Tensor round_tensor(int64_t round, int64_t mb) {
  const int64_t n = elements_for(mb);
  xl::BufferPtr buffer = xl::runtime::allocator(xl::Device{}).allocate(static_cast<size_t>(n) * sizeof(int64_t));
  int64_t* data = buffer->as<int64_t>();
  for (int64_t i = 0; i < n; ++i) data[i] = value(round, i);
  return xl::Tensor(std::make_shared<xl::TensorImpl>(std::move(buffer), xl::Shape{n}, xl::DType::i64, xl::Device{}));
}

// The round the checkpoint at path holds, or -1 (with the reason printed) when it is not one whole round.
int64_t loaded_round(const std::string& path, int64_t mb) {
  std::map<std::string, xl::Tensor> state;
  try {
    state = xl::load(path);
  } catch (const xl::Error& e) {
    std::printf("  load failed: %s\n", e.what());
    return -1;
  }
  auto it = state.find("w");
  const int64_t n = elements_for(mb);
  if (state.size() != 1 || it == state.end() || it->second.dtype() != xl::DType::i64 ||
      it->second.shape() != xl::Shape{n}) {
    std::printf("  the file does not hold one i64[%lld] tensor 'w'\n", static_cast<long long>(n));
    return -1;
  }
  const int64_t* data = it->second.impl()->data()->as<int64_t>();
  const int64_t round = data[0] >> 40;
  for (int64_t i = 0; i < n; ++i)
    if (data[i] != value(round, i)) {
      std::printf("  element %lld is %lld, not round %lld's\n", static_cast<long long>(i),
                  static_cast<long long>(data[i]), static_cast<long long>(round));
      return -1;
    }
  return round;
}

int temporaries_of(const std::string& path) {
  const std::string prefix = fs::path(path).filename().string() + ".tmp.";
  int count = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path()))
    if (entry.path().filename().string().compare(0, prefix.size(), prefix) == 0) ++count;
  return count;
}

struct Writer {
  pid_t pid;
  int notify;  // read end: one byte when the save starts
};

Writer start_writer(int64_t round, int64_t mb, const std::string& path) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::perror("pipe");
    std::exit(2);
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    int notify = ::dup(fds[1]);  // without O_CLOEXEC: it survives the exec
    std::string r = std::to_string(round), m = std::to_string(mb), fd = std::to_string(notify);
    ::execl("/proc/self/exe", "xlite-checkpoint-crash", "write", "--round", r.c_str(), "--mb", m.c_str(), "--path",
            path.c_str(), "--notify", fd.c_str(), static_cast<char*>(nullptr));
    std::perror("exec");
    std::_Exit(2);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

// Waits for the writer's byte; false when it died first.
bool wait_for_save_start(const Writer& w) {
  char byte;
  ssize_t n;
  do n = ::read(w.notify, &byte, 1);
  while (n < 0 && errno == EINTR);
  return n == 1;
}

// True when the writer exited with status 0 (rather than by the signal or an error).
bool reap(const Writer& w) {
  int status = 0;
  ::waitpid(w.pid, &status, 0);
  ::close(w.notify);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

long flag(int argc, char** argv, const std::string& name, long fallback) {
  for (int i = 2; i + 1 < argc; ++i)
    if (argv[i] == name) return std::atol(argv[i + 1]);
  return fallback;
}

std::string text_flag(int argc, char** argv, const std::string& name) {
  for (int i = 2; i + 1 < argc; ++i)
    if (argv[i] == name) return argv[i + 1];
  return "";
}

int write_mode(int argc, char** argv) {
  const int64_t round = flag(argc, argv, "--round", 0), mb = flag(argc, argv, "--mb", 1);
  const int notify = static_cast<int>(flag(argc, argv, "--notify", -1));
  xl::Tensor w = round_tensor(round, mb);
  char byte = 'S';
  if (::write(notify, &byte, 1) != 1) return 2;
  try {
    xl::save({{"w", w}}, text_flag(argc, argv, "--path"));
  } catch (const xl::Error& e) {
    std::fprintf(stderr, "writer: %s\n", e.what());
    return 1;
  }
  return 0;
}

int drive_mode(int argc, char** argv) {
  const long kills = flag(argc, argv, "--kills", 20), mb = flag(argc, argv, "--mb", 64);
  const std::string dir = text_flag(argc, argv, "--dir").empty() ? "." : text_flag(argc, argv, "--dir");
  const unsigned long seed =
      static_cast<unsigned long>(flag(argc, argv, "--seed", static_cast<long>(std::random_device{}())));
  const std::string path = (fs::path(dir) / "crash.safetensors").string();
  std::printf("xlite-checkpoint-crash: %ld kills of %ld MiB saves to %s, seed %lu\n", kills, mb, path.c_str(), seed);
  std::fflush(stdout);
  std::mt19937_64 random(seed);
  const auto started = Clock::now();

  // The first checkpoints, saved to the end: the quickest of their saves is the window the kills fall
  // in (the first one also pays for a cold page cache).
  double save_ms = 0;
  int64_t current = -1;
  for (int i = 0; i < 3; ++i) {
    Writer w = start_writer(++current, mb, path);
    const bool saving = wait_for_save_start(w);
    const auto save_started = Clock::now();
    if (!saving || !reap(w) || loaded_round(path, mb) != current) {
      std::printf("checkpoint %lld was not saved whole\n", static_cast<long long>(current));
      return 1;
    }
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - save_started).count();
    save_ms = i == 0 ? ms : std::min(save_ms, ms);
  }
  std::printf("a save takes %.1f ms\n", save_ms);
  std::fflush(stdout);

  long failures = 0, killed = 0, old_kept = 0, most_temporaries = 0;
  for (long k = 1; k <= kills; ++k) {
    const int64_t next = current + 1;
    const double delay_ms = std::uniform_real_distribution<double>(0, save_ms)(random);
    Writer w = start_writer(next, mb, path);
    bool saving = wait_for_save_start(w);
    if (saving) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(delay_ms));
    ::kill(w.pid, SIGKILL);
    const bool finished = reap(w);
    killed += !finished;
    const int left = temporaries_of(path);
    const int64_t round = loaded_round(path, mb);
    const int after_load = temporaries_of(path);
    most_temporaries = std::max<long>(most_temporaries, left);
    // Killed in the rename window the new file may already be in place; finished, it must be.
    const bool ok = saving && (round == next || (round == current && !finished)) && after_load == 0;
    std::printf(
        "kill %ld/%ld: at %.1f of %.1f ms, writer %s; file holds round %lld (%s); temporaries %d, %d after load%s\n", k,
        kills, delay_ms, save_ms, finished ? "had finished" : "killed", static_cast<long long>(round),
        round == next      ? "new"
        : round == current ? "old"
                           : "neither",
        left, after_load, ok ? "" : "  FAILED");
    std::fflush(stdout);
    if (!ok) ++failures;
    if (round == current) ++old_kept;
    if (round == next) current = next;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::printf(
      "summary: %ld kills, %ld writers killed before they exited, %ld old and %ld new files after them, at most %ld "
      "temporaries "
      "before a load, %ld failures, %.1f s\n",
      kills, killed, old_kept, kills - old_kept, most_temporaries, failures, seconds);
  std::error_code ignored;
  fs::remove(path, ignored);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "drive") return drive_mode(argc, argv);
  if (mode == "write") return write_mode(argc, argv);
  std::fprintf(stderr, "usage: xlite-checkpoint-crash drive --kills N --mb M --dir D [--seed S]\n");
  return 2;
}
