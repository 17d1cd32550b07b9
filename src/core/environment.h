#pragma once
// The XLITE_* environment variables, read and checked together once, on first use. A value that does
// not parse raises xlite::Error naming the variable, the value and what it takes, on that use and every
// later one, rather than being read as something else ("8G" as 8 bytes).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xlite::env {

struct Settings {
  std::string backend = "cpu";                 // XLITE_BACKEND (checked against the backends by the compiler)
  int debug = 0;                               // XLITE_DEBUG_LEVEL 0-3; XLITE_DEBUG=1 alone means level 2
  std::string debug_file;                      // XLITE_DEBUG_FILE: debug output is appended there, not to stderr
  int debug_max_frames = 8;                    // XLITE_DEBUG_MAX_FRAME: user frames printed per call site, 0-64
  bool profile = false;                        // XLITE_PROFILE: 0 or 1 (the totals table at exit)
  std::string profile_trace;                   // XLITE_PROFILE=name.json: a Chrome/Perfetto trace written at exit
  bool dump_ir = false;                        // XLITE_DUMP_IR: 0 or 1
  bool fast_math = false;                      // XLITE_FAST_MATH: 0 or 1 (xlite/math_mode.h)
  bool excess_precision = false;               // XLITE_EXCESS_PRECISION: 0 or 1 (xlite/math_mode.h)
  int64_t cache_size = 2048;                   // XLITE_COMPILATION_CACHE_SIZE: programs kept, >= 1
  int64_t kernel_cache_size = 4096;            // XLITE_KERNEL_CACHE_SIZE: compiled loops kept, >= 1
  int64_t memory_limit = 0;                    // XLITE_MEMORY_LIMIT: bytes, > 0; 0 when unset (physical memory)
  int num_cpu_devices = 1;                     // XLITE_NUM_CPU_DEVICES: virtual CPU devices, 1 to 64
  std::string cache_dir;                       // XLITE_CACHE_DIR: the persistent compilation cache's folder
  bool cache_readonly = false;                 // XLITE_CACHE_READONLY: 0 or 1
  int64_t cache_max_bytes = int64_t{1} << 30;  // XLITE_CACHE_MAX_BYTES: bytes, > 0
  std::string save_graphs;                     // XLITE_SAVE_GRAPHS: a file every synced graph is appended to
  std::string save_graphs_fmt = "text";  // XLITE_SAVE_GRAPHS_FMT: text (as traced), dot (optimized, fused), stablehlo
};

const Settings& settings();

// The parsers, for tests. Each returns nothing for a value it does not accept.
// A byte count: a number with an optional suffix, K M G T or KiB MiB GiB TiB (powers of 1024) or KB MB
// GB TB (powers of 1000), in any case: "8G", "512MiB", "1000000". A fraction ("1.5G") is accepted when it
// comes to a whole number of bytes.
std::optional<int64_t> parse_bytes(std::string_view text);
// A decimal integer in [low, high].
std::optional<int64_t> parse_int(std::string_view text, int64_t low, int64_t high);
std::optional<bool> parse_switch(std::string_view text);  // 0/1, false/true, off/on, no/yes

}  // namespace xlite::env
