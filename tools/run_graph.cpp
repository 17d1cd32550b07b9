// xlite-run-graph FILE: parses a graph in text IR, verifies it, runs it on the selected backend with
// arguments filled by a fixed pattern, and prints each output. For reproducing reports and pass tests.
#include <fstream>
#include <iostream>
#include <sstream>

#include "compiler/cache.h"
#include "tensor/tensor_impl.h"
#include "ir/graph.h"
#include "runtime/allocator.h"
#include "xlite/xlite.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: xlite-run-graph FILE.xir\n";
    return 2;
  }
  try {
    std::ifstream in(argv[1]);
    if (!in) throw xlite::Error(std::string("[run-graph] cannot open ") + argv[1]);
    std::stringstream text;
    text << in.rdbuf();
    xlite::ir::Graph graph = xlite::ir::parse_graph(text.str());
    std::vector<xlite::BufferPtr> args(graph.num_parameters);
    for (const auto& instr : graph.instrs) {
      if (instr.op != xlite::ir::OpId::parameter) continue;
      int64_t bytes = xlite::numel(instr.shape) * xlite::dtype_size(instr.dtype);
      auto buffer = xlite::runtime::allocator(instr.device).allocate(bytes);
      for (int64_t i = 0; i < bytes; ++i) buffer->as<unsigned char>()[i] = static_cast<unsigned char>(i % 7);
      args[instr.attrs.get_int(xlite::ir::AttrKey::index)] = buffer;
    }
    auto outputs = xlite::compiler::compile(graph)->run(args);
    std::cout << "backend " << xlite::compiler::backend_name() << ", " << outputs.size() << " outputs, hash "
              << std::hex << graph.hash() << std::dec << "\n";
    for (size_t i = 0; i < outputs.size(); ++i) {
      const auto& instr = graph.instrs[graph.outputs[i]];
      auto t = xlite::Tensor(std::make_shared<xlite::TensorImpl>(outputs[i], instr.shape, instr.dtype, instr.device));
      std::cout << "output " << i << ": " << t << "\n";
    }
  } catch (const xlite::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
