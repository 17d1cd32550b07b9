// The lazy-tracing example of the reference document: nothing runs until sync(), then one graph computes
// both values.
#include <iostream>

#include <xlite/xlite.h>

namespace xl = xlite;

int main() {
  auto a = xl::tensor(100.0f, xl::device());  // nothing runs
  auto b = xl::cos(a);                        // builds a node
  auto c = xl::sin(b);
  std::cout << "pending graph of b and c:\n" << xl::debug::graph_text({b, c});
  std::cout << "executions before sync: " << xl::metrics::counter_value("Execute") << "\n";
  xl::sync();  // one graph computes b and c
  std::cout << "executions after sync:  " << xl::metrics::counter_value("Execute") << "\n";
  std::cout << "b = cos(100) = " << b.item<float>() << "\n";
  std::cout << "c = sin(cos(100)) = " << c.item<float>() << "\n";

  // The same code again with new data reuses the compiled program.
  auto a2 = xl::tensor(3.0f);
  auto c2 = xl::sin(xl::cos(a2));
  xl::sync();
  std::cout << "sin(cos(3)) = " << c2.item<float>() << "; compiles: uncached "
            << xl::metrics::counter_value("UncachedCompile") << ", cached "
            << xl::metrics::counter_value("CachedCompile") << "\n";
  return 0;
}
