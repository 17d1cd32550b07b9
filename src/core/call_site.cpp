#include "core/call_site.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <execinfo.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "core/runtime_context.h"

namespace xlite::call_site {
namespace {

std::string demangled(const char* name) {
  if (!name) return "";
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> plain(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && plain ? std::string(plain.get()) : std::string(name);
}

// The name of a function's DIE (following an inlined copy to its abstract origin), demangled.
std::string die_function_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name})
    if (dwarf_attr_integrate(die, at, &attr))
      if (const char* name = dwarf_formstring(&attr)) return demangled(name);
  if (dwarf_attr_integrate(die, DW_AT_name, &attr))
    if (const char* name = dwarf_formstring(&attr)) return name;
  return "";
}

// Where an inlined call was made, in the function it was inlined into.
Frame call_location(Dwarf_Die* cu, Dwarf_Die* inlined) {
  Frame at;
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_attr(inlined, DW_AT_call_line, &attr) && dwarf_formudata(&attr, &value) == 0)
    at.line = static_cast<int>(value);
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_attr(inlined, DW_AT_call_file, &attr) && dwarf_formudata(&attr, &value) == 0 &&
      dwarf_getsrcfiles(cu, &files, &count) == 0 && value < count)
    if (const char* file = dwarf_filesrc(files, value, nullptr, nullptr)) at.file = file;
  return at;
}

// Prefixes of the files whose frames are xlite's own: its sources, its public headers, the build tree (the
// layers compile through views there), and system headers.
bool is_own_file(std::string_view file) {
  for (std::string_view own : {XLITE_SOURCE_DIR "/src/", XLITE_SOURCE_DIR "/include/", XLITE_BINARY_DIR "/", "/usr/"})
    if (file.starts_with(own)) return true;
  return false;
}

// The C library, the C++ runtime and other system libraries: their frames (whose debug information may be
// installed) are not the user's.
bool is_system_module(Dwfl_Module* module) {
  const char* name = dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (!name) return true;
  const std::string_view path(name);
  for (std::string_view system : {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "[vdso"})
    if (path.starts_with(system)) return true;
  return false;
}

// The process's modules and the frames found for each address so far. libdw reads a module's DWARF on
// first use; after that a lookup is a map search.
struct Symbolizer final : RuntimeState {
  std::mutex mutex;
  Dwfl* dwfl = nullptr;
  std::unordered_map<uintptr_t, std::vector<Frame>> frames_at;  // return address -> frames, innermost first

  ~Symbolizer() override {
    if (dwfl) dwfl_end(dwfl);
  }
  std::string describe() const override { return std::to_string(frames_at.size()) + " return addresses symbolised"; }
  void clear_cache() override {
    std::lock_guard lock(mutex);
    frames_at.clear();
  }

  // Reports the modules mapped now (again after a dlopen made a new one).
  void report_modules() {
    static const Dwfl_Callbacks callbacks = {
        .find_elf = dwfl_linux_proc_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = nullptr,
        .debuginfo_path = nullptr,
    };
    if (!dwfl) dwfl = dwfl_begin(&callbacks);
    if (!dwfl) return;
    dwfl_report_begin(dwfl);
    dwfl_linux_proc_report(dwfl, getpid());
    dwfl_report_end(dwfl, nullptr, nullptr);
  }

  Dwfl_Module* module_at(Dwarf_Addr pc) {
    if (!dwfl) report_modules();
    Dwfl_Module* module = dwfl ? dwfl_addrmodule(dwfl, pc) : nullptr;
    if (!module && dwfl) {
      report_modules();
      module = dwfl_addrmodule(dwfl, pc);
    }
    return module;
  }

  // The frames at a return address: the function it is in, and the functions inlined there.
  std::vector<Frame> symbolise(uintptr_t return_address) {
    const Dwarf_Addr pc = return_address - 1;  // inside the call instruction, not after it
    std::vector<Frame> frames;
    Dwfl_Module* module = module_at(pc);
    if (!module || is_system_module(module)) return frames;
    Frame at;
    if (Dwfl_Line* line = dwfl_module_getsrc(module, pc)) {
      if (const char* file = dwfl_lineinfo(line, nullptr, &at.line, nullptr, nullptr, nullptr)) at.file = file;
    }
    Dwarf_Addr bias = 0;
    Dwarf_Die* cu = dwfl_module_addrdie(module, pc, &bias);
    Dwarf_Die* scopes = nullptr;
    const int n = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
    bool reached_function = false;
    for (int i = 0; i < n && !reached_function; ++i) {
      const int tag = dwarf_tag(&scopes[i]);
      if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
      at.function = die_function_name(&scopes[i]);
      frames.push_back(at);
      if (tag == DW_TAG_subprogram)
        reached_function = true;
      else
        at = call_location(cu, &scopes[i]);
    }
    std::free(scopes);
    if (!reached_function) {
      at.function = demangled(dwfl_module_addrname(module, pc));
      frames.push_back(at);
    }
    return frames;
  }

  const std::vector<Frame>& frames(uintptr_t return_address) {
    auto it = frames_at.find(return_address);
    if (it == frames_at.end()) it = frames_at.emplace(return_address, symbolise(return_address)).first;
    return it->second;
  }
};
Symbolizer& symbolizer() { return runtime_context::state<Symbolizer>("call-site symbols"); }

}  // namespace

Stack Stack::capture() {
  constexpr int kMaxDepth = 128;
  void* addresses[kMaxDepth];
  const int depth = backtrace(addresses, kMaxDepth);
  Stack stack;
  for (int i = 1; i < depth; ++i)  // past this function's own frame
    stack.pcs_.push_back(reinterpret_cast<uintptr_t>(addresses[i]));
  return stack;
}

std::vector<Frame> Stack::user_frames(size_t max) const {
  std::vector<Frame> out;
  Symbolizer& s = symbolizer();
  std::lock_guard lock(s.mutex);
  for (uintptr_t pc : pcs_) {
    for (const Frame& frame : s.frames(pc)) {
      if (out.size() >= max) return out;
      if (frame.file.empty() || frame.line <= 0 || is_own_file(frame.file)) continue;
      out.push_back(frame);
    }
  }
  return out;
}

std::string describe(const Frame& frame) {
  return frame.file + ":" + std::to_string(frame.line) + (frame.function.empty() ? "" : " (" + frame.function + ")");
}

std::string describe(const std::vector<Frame>& frames, const std::string& indent) {
  if (frames.empty()) return indent + "(no user frame with line information: build with -g)\n";
  std::string text;
  for (const Frame& frame : frames) text += indent + describe(frame) + "\n";
  return text;
}

}  // namespace xlite::call_site
