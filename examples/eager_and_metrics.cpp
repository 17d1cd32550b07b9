// Eager mode runs each op at once through the same compile cache; the metrics report shows the counts.
#include <iostream>

#include <xlite/xlite.h>

namespace xl = xlite;

int main() {
  xl::metrics::clear_all();
  xl::manual_seed(0);
  {
    xl::EagerModeGuard eager(true);
    auto x = xl::randn({4, 8});
    auto w = xl::randn({16, 8});
    for (int step = 0; step < 3; ++step) {
      auto y = xl::relu(xl::linear(x, w));  // each op runs now; steps 2 and 3 hit the cache
      std::cout << "step " << step << ": mean " << y.mean().item<float>() << ", eager ops run so far "
                << xl::metrics::counter_value("EagerOpExecute") << "\n";
    }
  }
  // Back in lazy mode: the same computation becomes one graph.
  auto x = xl::randn({4, 8});
  auto w = xl::randn({16, 8});
  auto y = xl::softmax(xl::linear(x, w), -1);
  std::cout << "lazy softmax rows sum to " << y.sum({1}) << "\n";
  std::cout << "last sync: " << xl::debug::last_sync().cause << "\n\n";
  std::cout << xl::metrics::metrics_report();
  auto mem = xl::get_memory_info(xl::device());
  std::cout << "memory: " << mem.bytes_used << " bytes in use, peak " << mem.peak_bytes_used << ", limit "
            << mem.bytes_limit << "\n";
  return 0;
}
