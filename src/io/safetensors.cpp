// safetensors: an 8-byte little-endian header length, a JSON header mapping each name to its dtype,
// shape and byte range, then the raw row-major data.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "tensor/tensor_impl.h"
#include "io/atomic_file.h"
#include "ir/sizes.h"
#include "runtime/allocator.h"
#include "runtime/transfer.h"
#include "xlite/error.h"
#include "xlite/io.h"
#include "xlite/lazy.h"
#include "xlite/metrics.h"

namespace xlite {
namespace {
constexpr uint64_t kMaxHeader = 100 << 20;  // the reference implementation's limit

const char* format_name(DType d) {
  switch (d) {
    case DType::f32: return "F32";
    case DType::f64: return "F64";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
    case DType::i32: return "I32";
    case DType::i64: return "I64";
    case DType::u8: return "U8";
    case DType::bool_: return "BOOL";
  }
  return "";
}

DType format_dtype(const std::string& name, const std::string& path) {
  for (DType d : {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64, DType::u8, DType::bool_})
    if (name == format_name(d)) return d;
  throw Error("[load] " + path + ": unsupported dtype '" + name + "'");
}

// The bytes a tensor of this type needs, or nothing when its shape is not addressable: a corrupt shape
// must not wrap around to a size that matches its data, and a zero dim must not hide the others
// ([0, 2^40, 2^40] is refused: its strides overflow).
std::optional<uint64_t> byte_size(const Shape& shape, DType dtype) {
  if (!ir::addressable(shape, dtype)) return std::nullopt;
  uint64_t bytes = dtype_size(dtype);
  for (int64_t d : shape) bytes *= static_cast<uint64_t>(d);
  return bytes;
}

// A real header nests three deep ({"name": {"shape": [..]}}); the DOM of a deeper one costs memory
// out of all proportion to its bytes (a header of 20 MB of '[' took 1.5 GB), so it is refused by a
// linear scan before it is parsed.
constexpr int kMaxHeaderDepth = 8;

std::optional<size_t> offset_too_deep(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxHeaderDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

// Builds the header's DOM and notes a tensor named twice (the DOM keeps the last of two equal keys, so an
// entry would be lost silently). A SAX handler rather than a parse callback: the callback parser rescans
// the parent object after every entry it keeps, which is quadratic in the number of tensors.
class DuplicateNoter final : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit DuplicateNoter(nlohmann::json& result) : dom_(result) {}
  const std::string& duplicate() const { return duplicate_; }

  bool null() override { return dom_.null(); }
  bool boolean(bool v) override { return dom_.boolean(v); }
  bool number_integer(number_integer_t v) override { return dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) override { return dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) override { return dom_.number_float(v, s); }
  bool string(string_t& v) override { return dom_.string(v); }
  bool binary(binary_t& v) override { return dom_.binary(v); }
  bool start_object(std::size_t n) override { return ++depth_, dom_.start_object(n); }
  bool end_object() override { return --depth_, dom_.end_object(); }
  bool start_array(std::size_t n) override { return ++depth_, dom_.start_array(n); }
  bool end_array() override { return --depth_, dom_.end_array(); }
  bool key(string_t& k) override {
    if (depth_ == 1 && duplicate_.empty() && !names_.insert(k).second) duplicate_ = k;
    return dom_.key(k);
  }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) override {
    return dom_.parse_error(position, token, e);
  }

 private:
  nlohmann::detail::json_sax_dom_parser<nlohmann::json> dom_;
  int depth_ = 0;
  std::set<std::string> names_;
  std::string duplicate_;
};

// A dim or offset is a JSON integer >= 0 that fits in int64: 1.9, -1.5 or 1e300 are refused before
// any conversion, which would truncate or be undefined.
int64_t count_of(const nlohmann::json& value, const std::string& what, const std::string& path) {
  if (!value.is_number_unsigned() || value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    throw Error("[load] " + path + ": " + what + " is " + value.dump() + ", not an integer from 0 to 2^63-1");
  return static_cast<int64_t>(value.get<uint64_t>());
}

std::vector<int64_t> counts_of(const nlohmann::json& list, const std::string& what, const std::string& path) {
  if (!list.is_array()) throw Error("[load] " + path + ": " + what + " is " + list.dump() + ", not a list");
  std::vector<int64_t> counts;
  for (const nlohmann::json& v : list) counts.push_back(count_of(v, what, path));
  return counts;
}

// Reads exactly `bytes` at `offset`, or says how many the file had.
void read_exact(int fd, char* into, uint64_t bytes, uint64_t offset, const std::string& path, const std::string& what) {
  uint64_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd, into + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error("[load] " + path + ": cannot read " + what + ": " + std::strerror(errno));
    if (n == 0)
      throw Error("[load] " + path + ": " + what + " needs " + std::to_string(bytes) + " bytes at offset " +
                  std::to_string(offset) + ", the file has only " + std::to_string(offset + done));
    done += static_cast<uint64_t>(n);
  }
}

// Closes the descriptor however load leaves.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};
}  // namespace

void save(const std::map<std::string, Tensor>& tensors, const std::string& path) {
  std::vector<Tensor> all;
  for (const auto& [name, t] : tensors) {
    if (!t.defined()) throw Error("[save] tensor '" + name + "' is undefined");
    if (name.empty() || name == "__metadata__") throw Error("[save] invalid tensor name '" + name + "'");
    all.push_back(t);
  }
  sync(all);
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    uint64_t bytes = static_cast<uint64_t>(t.numel() * dtype_size(t.dtype()));
    header[name] = {
        {"dtype", format_name(t.dtype())}, {"shape", t.shape()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception&) {
    // The only thing dump() refuses is a string that is not UTF-8, and the only strings are the names.
    for (const auto& [name, t] : tensors) try {
        (void)nlohmann::json(name).dump();
      } catch (const nlohmann::json::exception&) {
        throw Error("[save] tensor name '" + name + "' is not valid UTF-8, which the safetensors header requires");
      }
    throw;
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  uint64_t length = text.size();
  unsigned char prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(length >> (8 * i));

  io::remove_stale_temps(path);
  io::AtomicFile file(path, "save");
  file.write(prefix, 8);
  file.write(text.data(), text.size());
  for (const auto& [name, t] : tensors)
    runtime::read_on_host(*t.impl()->data(), [&](std::span<const std::byte> bytes) {
      file.write(bytes.data(), static_cast<size_t>(t.numel() * dtype_size(t.dtype())));
    });
  file.commit();
  metrics::increment_counter("TransferFromDevice", static_cast<int64_t>(tensors.size()));
}

std::map<std::string, Tensor> load(const std::string& path, Device device) {
  if (device.index < 0 || device.index >= device_count())
    throw Error("[load] " + path + ": no device " + device.str() + " to load onto (there are " +
                std::to_string(device_count()) + ")");
  io::remove_stale_temps(path);
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) throw Error("[load] cannot open " + path + ": " + std::strerror(errno));
  struct stat info{};
  if (::fstat(file.fd, &info) != 0) throw Error("[load] cannot stat " + path + ": " + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) throw Error("[load] " + path + " is a directory, not a checkpoint");
  if (!S_ISREG(info.st_mode)) throw Error("[load] " + path + " is not a regular file");
  const uint64_t file_size = static_cast<uint64_t>(info.st_size);
  if (file_size < 8)
    throw Error("[load] " + path + ": file of " + std::to_string(file_size) + " bytes is too short for a header");
  unsigned char prefix[8];
  read_exact(file.fd, reinterpret_cast<char*>(prefix), 8, 0, path, "the header length");
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= static_cast<uint64_t>(prefix[i]) << (8 * i);
  if (length > kMaxHeader || length > file_size - 8)
    throw Error("[load] " + path + ": header length " + std::to_string(length) + " exceeds the file (" +
                std::to_string(file_size) + " bytes) or the 100 MiB limit");
  std::string text(length, '\0');
  read_exact(file.fd, text.data(), length, 8, path, "the header");
  if (std::optional<size_t> at = offset_too_deep(text))
    throw Error("[load] " + path + ": the header nests deeper than " + std::to_string(kMaxHeaderDepth) +
                " levels (at byte " + std::to_string(*at) + "), which no safetensors header does");
  nlohmann::json header;
  DuplicateNoter parser(header);
  try {
    nlohmann::json::sax_parse(text, &parser);
  } catch (const nlohmann::json::exception& e) {
    throw Error("[load] " + path + ": corrupt header: " + e.what());
  }
  const std::string& duplicate = parser.duplicate();
  if (!duplicate.empty()) throw Error("[load] " + path + ": the header names '" + duplicate + "' twice");
  if (!header.is_object()) throw Error("[load] " + path + ": the header is not a JSON object");
  const uint64_t data_size = file_size - 8 - length;
  struct Entry {
    std::string name;
    DType dtype;
    Shape shape;
    uint64_t begin, end;
  };
  std::vector<Entry> entries;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    try {
      if (!entry.is_object()) throw Error("[load] " + path + ": the entry of '" + name + "' is not an object");
      DType dtype = format_dtype(entry.at("dtype").get<std::string>(), path);
      Shape shape = counts_of(entry.at("shape"), "a dim of '" + name + "'", path);
      std::vector<int64_t> offsets = counts_of(entry.at("data_offsets"), "a data offset of '" + name + "'", path);
      if (offsets.size() != 2 || offsets[0] > offsets[1] || static_cast<uint64_t>(offsets[1]) > data_size)
        throw Error("[load] " + path + ": '" + name + "' has data offsets outside the " + std::to_string(data_size) +
                    " data bytes");
      const uint64_t bytes = static_cast<uint64_t>(offsets[1] - offsets[0]);
      std::optional<uint64_t> needed = byte_size(shape, dtype);
      if (!needed)
        throw Error("[load] " + path + ": '" + name + "' has shape " + shape_str(shape) + ", whose size overflows");
      if (bytes != *needed)
        throw Error("[load] " + path + ": '" + name + "' holds " + std::to_string(bytes) + " bytes but " +
                    std::string(dtype_name(dtype)) + shape_str(shape) + " needs " + std::to_string(*needed));
      entries.push_back(
          {name, dtype, std::move(shape), static_cast<uint64_t>(offsets[0]), static_cast<uint64_t>(offsets[1])});
    } catch (const nlohmann::json::exception& e) {
      throw Error("[load] " + path + ": bad entry '" + name + "': " + e.what());
    }
  }
  // Like the reference reader: the byte ranges tile the data exactly, so no two tensors share bytes and
  // no bytes belong to none (a sign of a header that does not describe this data).
  std::vector<const Entry*> by_offset;
  for (const Entry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Entry* a, const Entry* b) { return std::tie(a->begin, a->end) < std::tie(b->begin, b->end); });
  uint64_t covered = 0;
  for (size_t i = 0; i < by_offset.size(); ++i) {
    const Entry& e = *by_offset[i];
    if (e.begin < covered)
      throw Error("[load] " + path + ": '" + e.name + "' (bytes " + std::to_string(e.begin) + "-" +
                  std::to_string(e.end) + ") overlaps '" + by_offset[i - 1]->name + "' (bytes " +
                  std::to_string(by_offset[i - 1]->begin) + "-" + std::to_string(covered) + ")");
    if (e.begin > covered)
      throw Error("[load] " + path + ": data bytes " + std::to_string(covered) + "-" + std::to_string(e.begin) +
                  " belong to no tensor");
    covered = e.end;
  }
  if (covered != data_size)
    throw Error("[load] " + path + ": data bytes " + std::to_string(covered) + "-" + std::to_string(data_size) +
                " belong to no tensor");

  std::map<std::string, Tensor> tensors;
  for (const Entry& e : entries) {
    uint64_t bytes = e.end - e.begin;
    BufferPtr buffer = runtime::allocator(device).allocate(bytes);
    runtime::write_on_host(*buffer, [&](std::span<std::byte> data) {
      read_exact(file.fd, reinterpret_cast<char*>(data.data()), bytes, 8 + length + e.begin, path,
                 "the data of '" + e.name + "'");
    });
    metrics::increment_counter("TransferToDevice");
    tensors.emplace(e.name, Tensor(std::make_shared<TensorImpl>(std::move(buffer), e.shape, e.dtype, device)));
  }
  return tensors;
}

}  // namespace xlite
