# The library in layers (ARCHITECTURE.md, section 2), each an object library that compiles against a view of
# src/: a folder of links to its own folders and to those of the layers below it, nothing else. An include of
# a layer above (or beside) fails to build: "fatal error: autograd/vjp.h: No such file or directory".
# LLVM's and oneDNN's headers are seen only by the code-generating backend layers (EXTERNAL).
#
#   xlite_layer(NAME FOLDERS folder... [SOURCES file...] [BELOW layer...] [EXTERNAL] [OPENMP])
#
# FOLDERS are the layer's folders under src/ (their *.cpp are its sources unless SOURCES lists them);
# BELOW are the layers it may include, directly (the views add what those may include).
set(XLITE_LAYER_VIEWS ${CMAKE_CURRENT_BINARY_DIR}/layer_views)
set(XLITE_LAYERS)

function(xlite_layer name)
  cmake_parse_arguments(L "EXTERNAL;OPENMP" "" "FOLDERS;SOURCES;BELOW" ${ARGN})
  set(folders ${L_FOLDERS})
  foreach(below ${L_BELOW})
    if(NOT DEFINED XLITE_LAYER_FOLDERS_${below})
      message(FATAL_ERROR "layer ${name}: layer ${below} is not defined before it")
    endif()
    list(APPEND folders ${XLITE_LAYER_FOLDERS_${below}})
  endforeach()
  list(REMOVE_DUPLICATES folders)
  set(XLITE_LAYER_FOLDERS_${name} ${folders} PARENT_SCOPE)

  set(view ${XLITE_LAYER_VIEWS}/${name})
  file(REMOVE_RECURSE ${view})
  foreach(folder ${folders})
    get_filename_component(parent ${view}/${folder} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR}/src/${folder} ${view}/${folder} SYMBOLIC)
  endforeach()

  set(sources)
  foreach(source ${L_SOURCES})
    list(APPEND sources ${CMAKE_CURRENT_SOURCE_DIR}/src/${source})
  endforeach()
  if(NOT L_SOURCES)
    foreach(folder ${L_FOLDERS})
      file(GLOB found CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/${folder}/*.cpp)
      list(APPEND sources ${found})
    endforeach()
  endif()
  add_library(xlite_${name} OBJECT ${sources})
  target_include_directories(xlite_${name} PRIVATE ${view} ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_compile_options(xlite_${name} PRIVATE ${XLITE_WARNINGS})
  foreach(below ${L_BELOW})
    target_link_libraries(xlite_${name} PRIVATE xlite_${below})
  endforeach()
  if(L_OPENMP)
    target_link_libraries(xlite_${name} PRIVATE OpenMP::OpenMP_CXX)
  endif()
  if(L_EXTERNAL)
    target_include_directories(xlite_${name} SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS} ${DNNL_INCLUDE_DIR})
    target_compile_definitions(xlite_${name} PRIVATE ${LLVM_DEFINITIONS})
    target_link_libraries(xlite_${name} PRIVATE OpenMP::OpenMP_CXX)
  endif()
  set(XLITE_LAYERS ${XLITE_LAYERS} xlite_${name} PARENT_SCOPE)
endfunction()

# From the bottom up.
xlite_layer(core FOLDERS core)
xlite_layer(ir FOLDERS ir BELOW core)
xlite_layer(passes FOLDERS passes BELOW ir)
xlite_layer(tensor FOLDERS tensor BELOW ir)
# The runtime runs custom kernels on its OpenMP threads (runtime/custom_call.cpp).
xlite_layer(runtime FOLDERS runtime BELOW ir OPENMP)
xlite_layer(reference FOLDERS backends/reference BELOW passes runtime)
xlite_layer(compiler FOLDERS compiler BELOW reference)
xlite_layer(codegen FOLDERS backends/codegen BELOW ir EXTERNAL)
xlite_layer(cpu FOLDERS backends/cpu BELOW codegen compiler EXTERNAL)
xlite_layer(builtin_backends FOLDERS backends/cpu backends/reference SOURCES backends/builtin.cpp BELOW cpu)
xlite_layer(lazy FOLDERS lazy BELOW compiler tensor)
xlite_layer(io FOLDERS io BELOW runtime tensor)
xlite_layer(ops FOLDERS ops BELOW lazy)
xlite_layer(autograd FOLDERS autograd BELOW ops)
# The built-in custom kernels (gmm, tgmm, ...): their CPU code calls oneDNN's sgemm.
xlite_layer(kernels FOLDERS kernels BELOW autograd EXTERNAL)
xlite_layer(debug FOLDERS debug BELOW lazy)
# Built only from the public API (include/xlite).
xlite_layer(nn FOLDERS nn)
xlite_layer(optim FOLDERS optim)
xlite_layer(data FOLDERS data)
