//===- Zip.h - the zip container of .npz archives ---------------*- C++ -*-===//
//
// Just enough of PKWARE's APPNOTE for .npz files: single-disk archives whose
// members are stored (method 0) or deflated (method 8, as zipfile writes them
// for numpy.savez_compressed), with zip64 extra fields and end records (which
// numpy.savez forces in every local header), and CRC-32 checks.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TENSOR_ZIP_H
#define NXC_TENSOR_ZIP_H

#include "nxc/Frontend/Diagnostics.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nxc {

/// One file of a zip archive, uncompressed.
struct ZipMember {
  std::string name;
  std::vector<uint8_t> data;
};

/// The members of the zip archive in `bytes`, in central-directory order.
/// `archive` names the archive in error messages.
Result<std::vector<ZipMember>> readZip(const uint8_t *bytes, size_t size, const std::string &archive);

struct ZipWriteOptions {
  bool deflate = false;     ///< compress members (method 8) instead of storing them
  bool forceZip64 = false;  ///< write zip64 fields even where 32 bits suffice (as numpy.savez does)
};

/// A zip archive of `members`, in order, with fixed timestamps (1980-01-01),
/// so the same members always give the same bytes.
Result<std::vector<uint8_t>> writeZip(const std::vector<ZipMember> &members, const ZipWriteOptions &opts = {});

} // namespace nxc

#endif // NXC_TENSOR_ZIP_H
