//===- Bytes.cpp - whole-file I/O -----------------------------------------===//
#include "Bytes.h"

#include <cerrno>
#include <cstdio>

namespace nxc::bytes {

Result<std::vector<uint8_t>> readFile(const std::string &path) {
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return fileError(path, fmt::format(FMT_STRING("cannot open: {}"), std::strerror(errno)));
  std::vector<uint8_t> data;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.insert(data.end(), buf, buf + n);
  bool failed = std::ferror(f) != 0;
  int err = errno;
  std::fclose(f);
  if (failed) return fileError(path, fmt::format(FMT_STRING("cannot read: {}"), std::strerror(err)));
  return data;
}

Status writeFile(const std::string &path, const std::vector<uint8_t> &data) {
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) return fileError(path, fmt::format(FMT_STRING("cannot create: {}"), std::strerror(errno)));
  size_t written = data.empty() ? 0 : std::fwrite(data.data(), 1, data.size(), f);
  int err = errno;
  bool closed = std::fclose(f) == 0;
  if (written != data.size() || !closed)
    return fileError(path, fmt::format(FMT_STRING("cannot write: {}"), std::strerror(closed ? err : errno)));
  return okStatus();
}

} // namespace nxc::bytes
