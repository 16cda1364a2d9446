//===- Npz.cpp - NumPy .npz archives --------------------------------------===//
//
// An .npz file is a zip archive of .npy files (numpy/lib/npyio.py, _savez):
// numpy.savez stores them, numpy.savez_compressed deflates them, and both
// name positional arrays arr_0.npy, arr_1.npy, ... in argument order.
//
//===----------------------------------------------------------------------===//
#include "nxc/Tensor/HostTensor.h"
#include "nxc/Tensor/Zip.h"

#include "Bytes.h"

#include <fmt/format.h>

namespace nxc {

Result<std::vector<NpzEntry>> readNpzEntries(const std::string &path) {
  NXC_TRY(data, bytes::readFile(path));
  return parseNpz(data.data(), data.size(), path);
}

Result<std::vector<NpzEntry>> parseNpz(const uint8_t *data, size_t size, const std::string &path) {
  NXC_TRY(members, readZip(data, size, path));
  std::vector<NpzEntry> entries;
  for (ZipMember &m : members) {
    const std::string suffix = ".npy";
    if (m.name.size() <= suffix.size() || m.name.compare(m.name.size() - suffix.size(), suffix.size(), suffix) != 0)
      return bytes::fileError(path, fmt::format(FMT_STRING("entry '{}' is not a .npy array"), m.name));
    NXC_TRY(t, parseNpy(std::move(m.data), fmt::format(FMT_STRING("{}:{}"), path, m.name)));
    entries.push_back({m.name.substr(0, m.name.size() - suffix.size()), std::move(t)});
  }
  return entries;
}

Result<std::vector<HostTensor>> readNpz(const std::string &path) {
  NXC_TRY(entries, readNpzEntries(path));
  std::vector<HostTensor> ts;
  for (NpzEntry &e : entries) ts.push_back(std::move(e.tensor));
  return ts;
}

Status writeNpzEntries(const std::string &path, const std::vector<NpzEntry> &entries) {
  std::vector<ZipMember> members;
  for (const NpzEntry &e : entries) {
    auto npy = serializeNpy(e.tensor);
    if (!npy) return bytes::fileError(path, fmt::format(FMT_STRING("array '{}': {}"), e.name, npy.error().message));
    members.push_back({e.name + ".npy", std::move(*npy)});
  }
  auto zip = writeZip(members);
  if (!zip) return bytes::fileError(path, zip.error().message);
  return bytes::writeFile(path, *zip);
}

Status writeNpz(const std::string &path, const std::vector<HostTensor> &ts) {
  std::vector<NpzEntry> entries;
  for (size_t i = 0; i < ts.size(); ++i) entries.push_back({fmt::format(FMT_STRING("arr_{}"), i), ts[i]});
  return writeNpzEntries(path, entries);
}

} // namespace nxc
