// xlite-long-run: memory over a long run, to show it stays flat.
//
//   xlite-long-run compiled|eager|new-shapes [--steps N] [--max-growth-mb M]
//
// compiled:   a small MLP training step under compile(step), N steps (default 20000);
// eager:      the same step in eager mode;
// new-shapes: every step a batch size that is not among the cached programs, so every step compiles a
//             new program (N default 3000); the program cache (XLITE_COMPILATION_CACHE_SIZE) and the
//             kernel cache bound what is kept. Sizes cycle through twice the program cache's capacity,
//             so that buffers stay the same sizes while every program is new to the cache.
// Samples resident memory and the allocator's bytes in use after a warm-up (10% of the steps, and for
// new-shapes until the program cache is full), prints them with
// the least-squares slope, and exits 1 if resident memory grew by more than M MiB (default 16) over that
// stretch according to the slope.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "backends/cpu/kernel.h"
#include "compiler/cache.h"

namespace xl = xlite;

namespace {

double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

double slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(x.size());
  my /= static_cast<double>(y.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) num += (x[i] - mx) * (y[i] - my), den += (x[i] - mx) * (x[i] - mx);
  return den > 0 ? num / den : 0;
}

struct Model {
  xl::nn::Linear fc1{32, 64}, fc2{64, 10};
  xl::optim::SGD opt;
  Model() : opt(params(), 0.05, {0.9}) {}
  std::vector<xl::Tensor> params() {
    auto p = fc1.parameters(), q = fc2.parameters();
    p.insert(p.end(), q.begin(), q.end());
    return p;
  }
  xl::Tensor step(const xl::Tensor& x, const xl::Tensor& y) {
    opt.zero_grad();
    xl::Tensor loss = xl::nn::cross_entropy(fc2(xl::relu(fc1(x))), y);
    loss.backward();
    opt.step();
    return loss;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: xlite-long-run compiled|eager|new-shapes [--steps N] [--max-growth-mb M]\n");
    return 2;
  }
  const std::string mode = argv[1];
  long steps = mode == "new-shapes" ? 3000 : 20000;
  double max_growth_mb = 16;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--steps")
      steps = std::atol(argv[i + 1]);
    else if (flag == "--max-growth-mb")
      max_growth_mb = std::atof(argv[i + 1]);
  }
  if (mode != "compiled" && mode != "eager" && mode != "new-shapes") {
    std::fprintf(stderr, "xlite-long-run: unknown mode '%s'\n", mode.c_str());
    return 2;
  }

  xl::manual_seed(1);
  Model model;
  auto compiled = xl::compile([&](const xl::Tensor& x, const xl::Tensor& y) { return model.step(x, y); });
  if (mode == "eager") xl::eager_mode(true);
  std::vector<double> at, rss, used;
  // Memory is measured once the program cache has filled (new shapes) or the loop has settled.
  const long capacity = static_cast<long>(xl::compiler::executable_cache().capacity());
  const long warmup = mode == "new-shapes" ? std::max(steps / 10, capacity + capacity / 4) : steps / 10;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines as they come, also into a file
  const long every = std::max(1L, steps / 50);
  if (warmup >= steps) {
    std::fprintf(stderr,
                 "xlite-long-run: %ld steps do not fill the program cache of %ld (XLITE_COMPILATION_CACHE_SIZE)\n",
                 steps, capacity);
    return 2;
  }
  const long period = std::max(256L, 2 * capacity);
  for (long s = 0; s < steps; ++s) {
    const int64_t batch = mode == "new-shapes" ? 1 + s % period : 16;
    xl::Tensor x = xl::randn({batch, 32});
    xl::Tensor y = xl::remainder(xl::arange(0, batch), 10);
    xl::Tensor loss = mode == "compiled" ? compiled(x, y) : model.step(x, y);
    xl::sync();
    if (s % every == 0 || s + 1 == steps) {
      const float value = loss.item<float>();
      if (s >= warmup) {
        at.push_back(static_cast<double>(s));
        rss.push_back(resident_mib());
        used.push_back(static_cast<double>(xl::get_memory_info(xl::Device{}).bytes_used) / (1 << 20));
      }
      const xl::MemoryInfo memory = xl::get_memory_info(xl::Device{});
      std::printf(
          "step %6ld  loss %8.4f  resident %8.1f MiB  in use %7.2f MiB  cached %7.2f MiB  programs %5zu  kernels %5lld "
          " "
          "jit modules %5lld\n",
          s, value, resident_mib(), static_cast<double>(memory.bytes_used) / (1 << 20),
          static_cast<double>(memory.bytes_cached) / (1 << 20), xl::compiler::executable_cache().size(),
          static_cast<long long>(xlite::backends::cpu::kernels_cached()),
          static_cast<long long>(xlite::backends::cpu::jit_modules_alive()));
    }
  }
  const double rss_slope = slope(at, rss), used_slope = slope(at, used);
  const double growth = rss_slope * static_cast<double>(steps - warmup);
  std::printf(
      "%s: %ld steps; over steps %ld-%ld resident memory slope %.3f KiB/step (%.2f MiB in all), allocator "
      "in use %.4f KiB/step\n",
      mode.c_str(), steps, warmup, steps - 1, rss_slope * 1024, growth, used_slope * 1024);
  if (growth > max_growth_mb) {
    std::printf("FAIL: resident memory grew by %.2f MiB, more than %.2f\n", growth, max_growth_mb);
    return 1;
  }
  return 0;
}
