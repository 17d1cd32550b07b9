# lit configuration for the text-IR tests: each .xir file is a graph in text IR whose RUN lines pass it
# through xlite-opt and whose CHECK lines FileCheck matches against the output (LLVM's HLO-style tests).
# ctest runs it (tests/CMakeLists via the top-level CMakeLists.txt) with two parameters:
#   tools_dir  the folder holding xlite-opt
#   llvm_bin   the folder holding FileCheck and not (llvm-19-tools)
#   exec_root  where lit may write (the build folder, never the source tree)
import os

import lit.formats

config.name = "xlite-xir"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".xir"]
config.excludes = ["lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = lit_config.params["exec_root"]
config.environment["PATH"] = os.pathsep.join(
    [lit_config.params["tools_dir"], lit_config.params["llvm_bin"], config.environment.get("PATH", "/usr/bin:/bin")]
)
