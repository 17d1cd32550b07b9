# nanobind's stubgen names the module as it imported it, _xlite; the package imports it as xlite._xlite.
# Usage: cmake -DSTUB_DIR=<folder of .pyi files> -P fix_stub_imports.cmake
file(GLOB_RECURSE stubs ${STUB_DIR}/*.pyi)
foreach(stub ${stubs})
  file(READ ${stub} text)
  string(REGEX REPLACE "(^|\n)import _xlite\n" "\\1import xlite._xlite as _xlite\n" text "${text}")
  string(REGEX REPLACE "(^|\n)import _xlite\\.([a-z_.]+)\n" "\\1import xlite._xlite as _xlite\nimport xlite._xlite.\\2\n" text
                       "${text}")
  string(REPLACE "from _xlite import" "from xlite._xlite import" text "${text}")
  file(WRITE ${stub} "${text}")
endforeach()
