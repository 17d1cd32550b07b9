#include "core/environment.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/runtime_context.h"
#include "xlite/device.h"
#include "xlite/error.h"

extern char** environ;

namespace xlite::env {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

[[noreturn]] void bad(const char* name, const char* value, const char* takes) {
  throw Error(std::string("[environment] ") + name + "='" + value + "' is not " + takes);
}

// A 0/1 variable into `value`; true when it was set.
bool read_switch(const char* name, bool& value) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  auto on = parse_switch(v);
  if (!on) bad(name, v, "a switch (0 or 1)");
  value = *on;
  return true;
}

struct Loaded {
  Settings settings;
  std::string error;  // set when a variable did not parse
};

Loaded load() {
  Loaded loaded;
  Settings& s = loaded.settings;
  try {
    if (const char* v = std::getenv("XLITE_BACKEND"); v && *v) s.backend = v;
    if (bool on = false; read_switch("XLITE_DEBUG", on))
      s.debug = on ? 2 : 0;  // PyTorch/XLA's PT_XLA_DEBUG: compilations and executions
    if (const char* v = std::getenv("XLITE_DEBUG_LEVEL"); v && *v) {
      auto level = parse_int(v, 0, 3);
      if (!level) bad("XLITE_DEBUG_LEVEL", v, "a debug level (0 to 3)");
      s.debug = static_cast<int>(*level);
    }
    if (const char* v = std::getenv("XLITE_DEBUG_FILE"); v && *v) s.debug_file = v;
    if (const char* v = std::getenv("XLITE_DEBUG_MAX_FRAME"); v && *v) {
      auto frames = parse_int(v, 0, 64);
      if (!frames) bad("XLITE_DEBUG_MAX_FRAME", v, "a number of frames (0 to 64)");
      s.debug_max_frames = static_cast<int>(*frames);
    }
    if (const char* v = std::getenv("XLITE_PROFILE"); v && *v) {
      const std::string_view value(v);
      if (value.size() > 5 && value.substr(value.size() - 5) == ".json") {
        s.profile_trace = v;
      } else {
        auto on = parse_switch(v);
        if (!on) bad("XLITE_PROFILE", v, "a switch (0 or 1) or a trace file name ending in .json");
        s.profile = *on;
      }
    }
    read_switch("XLITE_DUMP_IR", s.dump_ir);
    read_switch("XLITE_FAST_MATH", s.fast_math);
    read_switch("XLITE_EXCESS_PRECISION", s.excess_precision);
    if (const char* v = std::getenv("XLITE_COMPILATION_CACHE_SIZE"); v && *v) {
      auto size = parse_int(v, 1, int64_t{1} << 40);
      if (!size) bad("XLITE_COMPILATION_CACHE_SIZE", v, "a number of programs (an integer >= 1)");
      s.cache_size = *size;
    }
    if (const char* v = std::getenv("XLITE_KERNEL_CACHE_SIZE"); v && *v) {
      auto size = parse_int(v, 1, int64_t{1} << 40);
      if (!size) bad("XLITE_KERNEL_CACHE_SIZE", v, "a number of kernels (an integer >= 1)");
      s.kernel_cache_size = *size;
    }
    if (const char* v = std::getenv("XLITE_MEMORY_LIMIT"); v && *v) {
      auto bytes = parse_bytes(v);
      if (!bytes || *bytes <= 0)
        bad("XLITE_MEMORY_LIMIT", v,
            "a size in bytes > 0 (a number with an optional suffix: K, M, G, T or KiB, MiB, "
            "GiB, TiB for powers of 1024; KB, MB, GB, TB for powers of 1000)");
      s.memory_limit = *bytes;
    }
    if (const char* v = std::getenv("XLITE_CACHE_DIR"); v && *v) s.cache_dir = v;
    read_switch("XLITE_CACHE_READONLY", s.cache_readonly);
    if (const char* v = std::getenv("XLITE_CACHE_MAX_BYTES"); v && *v) {
      auto bytes = parse_bytes(v);
      if (!bytes || *bytes <= 0) bad("XLITE_CACHE_MAX_BYTES", v, "a size in bytes > 0 (e.g. 512M, 2GiB)");
      s.cache_max_bytes = *bytes;
    }
    if (const char* v = std::getenv("XLITE_SAVE_GRAPHS"); v && *v) s.save_graphs = v;
    if (const char* v = std::getenv("XLITE_SAVE_GRAPHS_FMT"); v && *v) {
      const std::string_view format = v;
      if (format != "text" && format != "dot" && format != "stablehlo")
        bad("XLITE_SAVE_GRAPHS_FMT", v, "a graph format (text, dot or stablehlo)");
      s.save_graphs_fmt = v;
    }
    if (const char* v = std::getenv("XLITE_NUM_CPU_DEVICES"); v && *v) {
      auto count = parse_int(v, 1, kMaxDevices);
      if (!count) bad("XLITE_NUM_CPU_DEVICES", v, "a number of virtual CPU devices (an integer from 1 to 64)");
      s.num_cpu_devices = static_cast<int>(*count);
    }
  } catch (const Error& e) {
    loaded.error = e.what();
  }
  // A misspelt variable would otherwise be ignored without a word.
  static const char* const known[] = {
      "XLITE_BACKEND",           "XLITE_DEBUG",           "XLITE_DEBUG_LEVEL",     "XLITE_DEBUG_FILE",
      "XLITE_DEBUG_MAX_FRAME",   "XLITE_PROFILE",         "XLITE_DUMP_IR",         "XLITE_COMPILATION_CACHE_SIZE",
      "XLITE_KERNEL_CACHE_SIZE", "XLITE_MEMORY_LIMIT",    "XLITE_NUM_CPU_DEVICES", "XLITE_SAVE_GRAPHS",
      "XLITE_CACHE_DIR",         "XLITE_CACHE_READONLY",  "XLITE_CACHE_MAX_BYTES", "XLITE_SAVE_GRAPHS_FMT",
      "XLITE_FAST_MATH",         "XLITE_EXCESS_PRECISION"};
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view var(*entry);
    if (var.rfind("XLITE_", 0) != 0) continue;
    std::string_view name = var.substr(0, var.find('='));
    if (std::none_of(std::begin(known), std::end(known), [&](const char* k) { return name == k; }))
      std::fprintf(stderr, "[xlite] warning: unknown environment variable %.*s is ignored\n",
                   static_cast<int>(name.size()), name.data());
  }
  return loaded;
}

}  // namespace

std::optional<int64_t> parse_int(std::string_view text, int64_t low, int64_t high) {
  text = trimmed(text);
  if (text.empty()) return std::nullopt;
  bool negative = text.front() == '-';
  if (negative || text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    if (__builtin_mul_overflow(value, int64_t{10}, &value) || __builtin_add_overflow(value, c - '0', &value))
      return std::nullopt;
  }
  if (negative) value = -value;
  if (value < low || value > high) return std::nullopt;
  return value;
}

std::optional<int64_t> parse_bytes(std::string_view text) {
  text = trimmed(text);
  size_t number_end = 0;
  while (number_end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[number_end])) || text[number_end] == '.'))
    ++number_end;
  std::string number(text.substr(0, number_end));
  if (number.empty() || number == "." || std::count(number.begin(), number.end(), '.') > 1) return std::nullopt;
  std::string suffix = lower(trimmed(text.substr(number_end)));
  struct Unit {
    const char* name;
    double factor;
  };
  static const Unit units[] = {{"", 1},
                               {"b", 1},
                               {"k", 1024.0},
                               {"kib", 1024.0},
                               {"kb", 1e3},
                               {"m", 1048576.0},
                               {"mib", 1048576.0},
                               {"mb", 1e6},
                               {"g", 1073741824.0},
                               {"gib", 1073741824.0},
                               {"gb", 1e9},
                               {"t", 1099511627776.0},
                               {"tib", 1099511627776.0},
                               {"tb", 1e12}};
  const Unit* unit = nullptr;
  for (const Unit& u : units)
    if (suffix == u.name) unit = &u;
  if (!unit) return std::nullopt;
  // Whole numbers are multiplied exactly; a fraction goes through a double and must land on a byte.
  if (number.find('.') == std::string::npos) {
    auto whole = parse_int(number, 0, INT64_MAX);
    int64_t bytes = 0;
    if (!whole || __builtin_mul_overflow(*whole, static_cast<int64_t>(unit->factor), &bytes)) return std::nullopt;
    return bytes;
  }
  double bytes = std::strtod(number.c_str(), nullptr) * unit->factor;
  if (!(bytes < 9.2e18) || bytes != std::floor(bytes)) return std::nullopt;
  return static_cast<int64_t>(bytes);
}

std::optional<bool> parse_switch(std::string_view text) {
  std::string value = lower(trimmed(text));
  if (value == "0" || value == "false" || value == "off" || value == "no") return false;
  if (value == "1" || value == "true" || value == "on" || value == "yes") return true;
  return std::nullopt;
}

namespace {
struct LoadedSettings final : RuntimeState {
  Loaded loaded = load();
  std::string describe() const override {
    if (!loaded.error.empty()) return loaded.error;
    const Settings& s = loaded.settings;
    return "backend " + s.backend + ", " + std::to_string(s.num_cpu_devices) + " cpu devices, debug " +
           std::to_string(s.debug) + ", profile " + std::to_string(s.profile) + ", program cache " +
           std::to_string(s.cache_size) + ", kernel cache " + std::to_string(s.kernel_cache_size) + ", memory limit " +
           (s.memory_limit ? std::to_string(s.memory_limit) + " B" : "physical memory");
  }
};
}  // namespace

const Settings& settings() {
  static const Loaded& loaded = runtime_context::state<LoadedSettings>("settings").loaded;
  if (!loaded.error.empty()) throw Error(loaded.error);
  return loaded.settings;
}

}  // namespace xlite::env
