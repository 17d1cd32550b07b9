// safetensors: an 8-byte little-endian header length, a JSON header mapping each name to its dtype,
// shape and byte range, then the raw row-major data.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "core/tensor_impl.h"
#include "runtime/allocator.h"
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

[[noreturn]] void system_error(const std::string& what, const std::string& path) {
  throw Error("[save] " + what + " " + path + ": " + std::strerror(errno));
}

// The bytes a tensor of this type needs, or nothing when that does not fit in 64 bits: a corrupt shape
// must not wrap around to a size that matches its data.
std::optional<uint64_t> byte_size(const Shape& shape, DType dtype) {
  uint64_t bytes = dtype_size(dtype);
  for (int64_t d : shape)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) return std::nullopt;
  return bytes;
}

void write_all(int fd, const void* data, size_t bytes, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::write(fd, p, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      system_error("cannot write", path);
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}
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
    header[name] = {{"dtype", format_name(t.dtype())}, {"shape", t.shape()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  uint64_t length = text.size();
  unsigned char prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(length >> (8 * i));

  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) system_error("cannot create", temporary);
  try {
    write_all(fd, prefix, 8, temporary);
    write_all(fd, text.data(), text.size(), temporary);
    for (const auto& [name, t] : tensors) {
      const Buffer& data = *t.impl()->data();
      write_all(fd, data.data(), static_cast<size_t>(t.numel() * dtype_size(t.dtype())), temporary);
    }
    if (::fsync(fd) != 0) system_error("cannot flush", temporary);
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    ::unlink(temporary.c_str());
    system_error("cannot rename onto", path);
  }
  // Make the rename itself durable.
  std::string folder = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
  int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  metrics::increment_counter("TransferFromDevice", static_cast<int64_t>(tensors.size()));
}

std::map<std::string, Tensor> load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("[load] cannot open " + path);
  in.seekg(0, std::ios::end);
  const uint64_t file_size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  if (file_size < 8) throw Error("[load] " + path + ": file of " + std::to_string(file_size) + " bytes is too short for a header");
  unsigned char prefix[8];
  in.read(reinterpret_cast<char*>(prefix), 8);
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= static_cast<uint64_t>(prefix[i]) << (8 * i);
  if (length > kMaxHeader || length > file_size - 8)
    throw Error("[load] " + path + ": header length " + std::to_string(length) + " exceeds the file (" +
                std::to_string(file_size) + " bytes) or the 100 MiB limit");
  std::string text(length, '\0');
  in.read(text.data(), static_cast<std::streamsize>(length));
  nlohmann::json header;
  // The JSON parser keeps the last of two equal keys; a tensor named twice would silently lose an entry.
  std::set<std::string> names;
  std::string duplicate;
  auto note_top_level_keys = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (depth != 1 || event != nlohmann::json::parse_event_t::key || !duplicate.empty()) return true;
    std::string name = parsed.get<std::string>();
    if (!names.insert(name).second) duplicate = std::move(name);
    return true;
  };
  try {
    header = nlohmann::json::parse(text, note_top_level_keys);
  } catch (const nlohmann::json::exception& e) {
    throw Error("[load] " + path + ": corrupt header: " + e.what());
  }
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
      DType dtype = format_dtype(entry.at("dtype").get<std::string>(), path);
      Shape shape = entry.at("shape").get<Shape>();
      auto offsets = entry.at("data_offsets").get<std::vector<uint64_t>>();
      for (int64_t d : shape)
        if (d < 0) throw Error("[load] " + path + ": '" + name + "' has a negative dim");
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data_size)
        throw Error("[load] " + path + ": '" + name + "' has data offsets outside the " + std::to_string(data_size) + " data bytes");
      uint64_t bytes = offsets[1] - offsets[0];
      std::optional<uint64_t> needed = byte_size(shape, dtype);
      if (!needed)
        throw Error("[load] " + path + ": '" + name + "' has shape " + shape_str(shape) + ", whose size overflows");
      if (bytes != *needed)
        throw Error("[load] " + path + ": '" + name + "' holds " + std::to_string(bytes) + " bytes but " +
                    std::string(dtype_name(dtype)) + shape_str(shape) + " needs " + std::to_string(*needed));
      entries.push_back({name, dtype, std::move(shape), offsets[0], offsets[1]});
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
      throw Error("[load] " + path + ": '" + e.name + "' (bytes " + std::to_string(e.begin) + "-" + std::to_string(e.end) +
                  ") overlaps '" + by_offset[i - 1]->name + "' (bytes " + std::to_string(by_offset[i - 1]->begin) + "-" +
                  std::to_string(covered) + ")");
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
    BufferPtr buffer = runtime::allocator(Device{}).allocate(bytes);
    in.seekg(static_cast<std::streamoff>(8 + length + e.begin));
    in.read(buffer->as<char>(), static_cast<std::streamsize>(bytes));
    if (!in) throw Error("[load] " + path + ": could not read the data of '" + e.name + "'");
    metrics::increment_counter("TransferToDevice");
    tensors.emplace(e.name, Tensor(std::make_shared<TensorImpl>(std::move(buffer), e.shape, e.dtype, Device{})));
  }
  return tensors;
}

}  // namespace xlite
