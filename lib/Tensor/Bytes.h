//===- Bytes.h - little-endian fields and whole-file I/O --------*- C++ -*-===//
//
// Private helpers of the Tensor library: bounds-checked little-endian reads,
// appends for writers, and reading/writing a whole file with errors as values.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_LIB_TENSOR_BYTES_H
#define NXC_LIB_TENSOR_BYTES_H

#include "nxc/Frontend/Diagnostics.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace nxc::bytes {

/// The little-endian unsigned integer of `n` bytes at `p` (n <= 8).
inline uint64_t loadLE(const uint8_t *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

inline void appendLE(std::vector<uint8_t> &out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out.push_back((uint8_t)(v >> (8 * i)));
}

inline void append(std::vector<uint8_t> &out, const std::string &s) { out.insert(out.end(), s.begin(), s.end()); }

/// A bounds-checked cursor over a byte range: every read says whether the
/// bytes were there, so that malformed input never reads out of bounds.
class Reader {
public:
  Reader(const uint8_t *data, size_t size, size_t pos = 0) : data_(data), size_(size), pos_(pos) {}
  bool has(size_t n) const { return pos_ <= size_ && size_ - pos_ >= n; }
  bool u16(uint64_t &v) { return get(v, 2); }
  bool u32(uint64_t &v) { return get(v, 4); }
  bool u64(uint64_t &v) { return get(v, 8); }
  bool skip(size_t n) {
    if (!has(n)) return false;
    pos_ += n;
    return true;
  }
  bool bytes(std::string &s, size_t n) {
    if (!has(n)) return false;
    s.assign((const char *)data_ + pos_, n);
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }

private:
  bool get(uint64_t &v, size_t n) {
    if (!has(n)) return false;
    v = loadLE(data_ + pos_, n);
    pos_ += n;
    return true;
  }
  const uint8_t *data_;
  size_t size_;
  size_t pos_;
};

/// The contents of the file at `path`.
Result<std::vector<uint8_t>> readFile(const std::string &path);
/// Replaces the file at `path` with `data`.
Status writeFile(const std::string &path, const std::vector<uint8_t> &data);

/// An error about the file or archive member `name` (no source location).
inline Diag fileError(const std::string &name, const std::string &message) {
  return error(Loc{}, fmt::format(FMT_STRING("{}: {}"), name, message));
}

} // namespace nxc::bytes

#endif // NXC_LIB_TENSOR_BYTES_H
