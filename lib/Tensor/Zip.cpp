//===- Zip.cpp - reading and writing zip archives -------------------------===//
//
// Record layouts from PKWARE's APPNOTE.TXT (sections 4.3.7 local file header,
// 4.3.12 central directory header, 4.3.14-4.3.16 zip64 and end of central
// directory records, 4.5.3 zip64 extended information extra field). Sizes and
// offsets come from the central directory (numpy.savez's local headers carry
// 0xFFFFFFFF placeholders and zip64 extras); every read is bounds-checked.
//
//===----------------------------------------------------------------------===//
#include "nxc/Tensor/Zip.h"

#include "Bytes.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <climits>

namespace nxc {
namespace {

using bytes::fileError;
using bytes::loadLE;

constexpr uint64_t kLocalSig = 0x04034b50;
constexpr uint64_t kCentralSig = 0x02014b50;
constexpr uint64_t kEndSig = 0x06054b50;
constexpr uint64_t kZip64EndSig = 0x06064b50;
constexpr uint64_t kZip64LocatorSig = 0x07064b50;
constexpr uint64_t kMax16 = 0xFFFF;
constexpr uint64_t kMax32 = 0xFFFFFFFF;
constexpr size_t kEndLen = 22, kCentralLen = 46, kLocalLen = 30, kZip64EndLen = 56, kZip64LocatorLen = 20;
/// zlib takes at most UINT_MAX bytes per call; feed it in pieces of this size.
constexpr uint64_t kChunk = 1u << 30;
/// Deflate never compresses better than about 1032:1.
constexpr uint64_t kMaxDeflateRatio = 1032;

uint32_t crc32Of(const uint8_t *data, uint64_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (uint64_t done = 0; done < n;) {
    uInt len = (uInt)std::min<uint64_t>(n - done, kChunk);
    crc = crc32(crc, data + done, len);
    done += len;
  }
  return (uint32_t)crc;
}

/// Inflates the raw deflate stream in[0, inLen) into exactly outLen bytes.
Status inflateRaw(const uint8_t *in, uint64_t inLen, std::vector<uint8_t> &out, uint64_t outLen,
                  const std::string &what) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
    return error(Loc{}, fmt::format(FMT_STRING("{}: cannot initialize zlib"), what));
  out.assign((size_t)outLen, 0);
  uint64_t inPos = 0, outPos = 0;
  uint8_t scratch = 0;
  bool overflowed = false;
  std::string problem;
  for (;;) {
    if (zs.avail_in == 0 && inPos < inLen) {
      uInt n = (uInt)std::min(inLen - inPos, kChunk);
      zs.next_in = const_cast<Bytef *>(in + inPos);
      zs.avail_in = n;
      inPos += n;
    }
    if (zs.avail_out == 0) {
      if (outPos < outLen) {
        uInt n = (uInt)std::min(outLen - outPos, kChunk);
        zs.next_out = out.data() + outPos;
        zs.avail_out = n;
        outPos += n;
      } else if (zs.next_out == &scratch + 1) {
        overflowed = true; // a byte beyond the declared size came out
        break;
      } else {
        zs.next_out = &scratch;
        zs.avail_out = 1;
      }
    }
    int ret = inflate(&zs, Z_NO_FLUSH);
    if (ret == Z_STREAM_END) break;
    if (ret == Z_BUF_ERROR) {
      if (zs.avail_in == 0 && inPos == inLen) {
        problem = "the deflate stream is truncated";
        break;
      }
      continue;
    }
    if (ret != Z_OK) {
      problem = zs.msg ? fmt::format(FMT_STRING("corrupt deflate data ({})"), zs.msg) : "corrupt deflate data";
      break;
    }
  }
  if (zs.next_out == &scratch + 1) overflowed = true;
  uint64_t produced = zs.total_out;
  inflateEnd(&zs);
  if (!problem.empty()) return error(Loc{}, fmt::format(FMT_STRING("{}: {}"), what, problem));
  if (overflowed)
    return error(Loc{}, fmt::format(FMT_STRING("{}: inflates to more than the declared {} bytes"), what, outLen));
  if (produced != outLen)
    return error(Loc{},
                 fmt::format(FMT_STRING("{}: inflates to {} bytes, the archive declares {}"), what, produced, outLen));
  return okStatus();
}

Result<std::vector<uint8_t>> deflateRaw(const std::vector<uint8_t> &in) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return error(Loc{}, "cannot initialize zlib");
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  uint64_t inPos = 0;
  int ret = Z_OK;
  while (ret != Z_STREAM_END) {
    if (zs.avail_in == 0 && inPos < in.size()) {
      uInt n = (uInt)std::min<uint64_t>(in.size() - inPos, kChunk);
      zs.next_in = const_cast<Bytef *>(in.data() + inPos);
      zs.avail_in = n;
      inPos += n;
    }
    zs.next_out = buf;
    zs.avail_out = sizeof buf;
    ret = deflate(&zs, inPos == in.size() ? Z_FINISH : Z_NO_FLUSH);
    if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) {
      deflateEnd(&zs);
      return error(Loc{}, "zlib deflate failed");
    }
    out.insert(out.end(), buf, buf + (sizeof buf - zs.avail_out));
  }
  deflateEnd(&zs);
  return out;
}

/// Fills the 0xFFFFFFFF/0xFFFF fields of a central directory entry from its
/// zip64 extended information extra field (APPNOTE 4.5.3: in this order, and
/// only the fields that overflowed).
bool applyZip64Extra(const std::string &extra, uint64_t &uncomp, uint64_t &comp, uint64_t &offset, uint64_t &disk) {
  bytes::Reader r((const uint8_t *)extra.data(), extra.size());
  while (r.has(4)) {
    uint64_t id = 0, len = 0;
    r.u16(id);
    r.u16(len);
    if (!r.has((size_t)len)) return false;
    if (id != 0x0001) {
      r.skip((size_t)len);
      continue;
    }
    bytes::Reader f((const uint8_t *)extra.data(), r.pos() + (size_t)len, r.pos());
    if (uncomp == kMax32 && !f.u64(uncomp)) return false;
    if (comp == kMax32 && !f.u64(comp)) return false;
    if (offset == kMax32 && !f.u64(offset)) return false;
    if (disk == kMax16 && !f.u32(disk)) return false;
    return true;
  }
  return true;
}

} // namespace

Result<std::vector<ZipMember>> readZip(const uint8_t *p, size_t size, const std::string &archive) {
  bool startsLikeZip = size >= 4 && loadLE(p, 4) == kLocalSig;
  // The end of central directory record: the last one whose comment fits.
  size_t end = SIZE_MAX;
  if (size >= kEndLen) {
    size_t lowest = size - kEndLen > kMax16 ? size - kEndLen - kMax16 : 0;
    for (size_t i = size - kEndLen + 1; i-- > lowest;)
      if (loadLE(p + i, 4) == kEndSig && i + kEndLen + loadLE(p + i + 20, 2) <= size) {
        end = i;
        break;
      }
  }
  if (end == SIZE_MAX)
    return fileError(archive, startsLikeZip ? "truncated zip archive (no end of central directory record)"
                                            : "not a zip archive (.npz files are zip archives)");
  uint64_t disk = loadLE(p + end + 4, 2), cdDisk = loadLE(p + end + 6, 2);
  uint64_t entries = loadLE(p + end + 10, 2);
  uint64_t cdSize = loadLE(p + end + 12, 4), cdOffset = loadLE(p + end + 16, 4);

  // Zip64: the locator sits right before the end record.
  if (end >= kZip64LocatorLen && loadLE(p + end - kZip64LocatorLen, 4) == kZip64LocatorSig) {
    uint64_t at = loadLE(p + end - kZip64LocatorLen + 8, 8);
    if (at > size || size - at < kZip64EndLen || loadLE(p + at, 4) != kZip64EndSig)
      return fileError(archive, "corrupt zip archive (bad zip64 end of central directory record)");
    disk = loadLE(p + at + 16, 4);
    cdDisk = loadLE(p + at + 20, 4);
    entries = loadLE(p + at + 32, 8);
    cdSize = loadLE(p + at + 40, 8);
    cdOffset = loadLE(p + at + 48, 8);
  } else if (entries == kMax16 || cdSize == kMax32 || cdOffset == kMax32) {
    return fileError(archive, "corrupt zip archive (zip64 sizes without a zip64 end record)");
  }
  if (disk != 0 || cdDisk != 0) return fileError(archive, "multi-disk zip archives are not supported");
  if (cdOffset > size || cdSize > size - cdOffset)
    return fileError(archive, "truncated zip archive (the central directory lies beyond the end of the file)");
  if (entries > cdSize / kCentralLen)
    return fileError(archive, fmt::format(FMT_STRING("corrupt zip archive ({} entries cannot fit in a {}-byte central "
                                                     "directory)"),
                                          entries, cdSize));

  std::vector<ZipMember> members;
  bytes::Reader cd(p, (size_t)(cdOffset + cdSize), (size_t)cdOffset);
  for (uint64_t e = 0; e < entries; ++e) {
    uint64_t sig, flags, method, crc, comp, uncomp, nameLen, extraLen, commentLen, startDisk, offset;
    std::string name, extra;
    if (!cd.u32(sig) || sig != kCentralSig || !cd.skip(4) || !cd.u16(flags) || !cd.u16(method) || !cd.skip(4) ||
        !cd.u32(crc) || !cd.u32(comp) || !cd.u32(uncomp) || !cd.u16(nameLen) || !cd.u16(extraLen) ||
        !cd.u16(commentLen) || !cd.u16(startDisk) || !cd.skip(6) || !cd.u32(offset) ||
        !cd.bytes(name, (size_t)nameLen) || !cd.bytes(extra, (size_t)extraLen) || !cd.skip((size_t)commentLen))
      return fileError(archive, fmt::format(FMT_STRING("corrupt zip archive (bad central directory entry {})"), e));
    std::string what = fmt::format(FMT_STRING("{}:{}"), archive, name);
    if (!applyZip64Extra(extra, uncomp, comp, offset, startDisk))
      return fileError(what, "corrupt zip64 extra field");
    if (flags & 1) return fileError(what, "encrypted zip entries are not supported");
    if (startDisk != 0) return fileError(what, "multi-disk zip archives are not supported");

    bytes::Reader local(p, size, 0);
    uint64_t lsig, lnameLen, lextraLen;
    if (offset > size || !local.skip((size_t)offset) || !local.u32(lsig) || lsig != kLocalSig || !local.skip(22) ||
        !local.u16(lnameLen) || !local.u16(lextraLen) || !local.skip((size_t)(lnameLen + lextraLen)))
      return fileError(what, "corrupt zip archive (bad local header)");
    size_t dataStart = local.pos();
    if (comp > size - dataStart) return fileError(what, "truncated zip archive (the entry's data is cut off)");

    ZipMember m;
    m.name = name;
    if (method == 0) {
      if (comp != uncomp)
        return fileError(what, "corrupt zip archive (stored entry with different compressed and uncompressed sizes)");
      m.data.assign(p + dataStart, p + dataStart + comp);
    } else if (method == 8) {
      if (uncomp / kMaxDeflateRatio > comp + 1)
        return fileError(what, fmt::format(FMT_STRING("corrupt zip archive (claims {} bytes from {} deflated bytes)"),
                                           uncomp, comp));
      NXC_CHECK(inflateRaw(p + dataStart, comp, m.data, uncomp, what));
    } else {
      return fileError(
          what, fmt::format(FMT_STRING("compression method {} is not supported (only stored and deflated entries are)"),
                            method));
    }
    uint32_t actual = crc32Of(m.data.data(), m.data.size());
    if (actual != crc)
      return fileError(what, fmt::format(FMT_STRING("CRC-32 mismatch (stored {:08x}, computed {:08x})"), crc, actual));
    members.push_back(std::move(m));
  }
  return members;
}

Result<std::vector<uint8_t>> writeZip(const std::vector<ZipMember> &members, const ZipWriteOptions &opts) {
  struct Written {
    uint32_t crc;
    uint64_t comp, uncomp, offset;
    bool zip64;
  };
  const uint64_t dosTime = 0, dosDate = (0 << 9) | (1 << 5) | 1; // 1980-01-01 00:00:00
  const uint64_t method = opts.deflate ? 8 : 0;
  std::vector<uint8_t> out;
  std::vector<Written> written;
  for (const ZipMember &m : members) {
    if (m.name.empty() || m.name.size() > kMax16)
      return error(Loc{}, fmt::format(FMT_STRING("zip member name '{}' is invalid"), m.name));
    Written w;
    w.crc = crc32Of(m.data.data(), m.data.size());
    w.uncomp = m.data.size();
    w.offset = out.size();
    std::vector<uint8_t> deflated;
    if (opts.deflate) {
      NXC_TRY(d, deflateRaw(m.data));
      deflated = std::move(d);
    }
    const std::vector<uint8_t> &payload = opts.deflate ? deflated : m.data;
    w.comp = payload.size();
    w.zip64 = opts.forceZip64 || w.uncomp >= kMax32 || w.comp >= kMax32;
    bytes::appendLE(out, kLocalSig, 4);
    bytes::appendLE(out, w.zip64 ? 45 : 20, 2); // version needed to extract
    bytes::appendLE(out, 0, 2);                 // flags
    bytes::appendLE(out, method, 2);
    bytes::appendLE(out, dosTime, 2);
    bytes::appendLE(out, dosDate, 2);
    bytes::appendLE(out, w.crc, 4);
    bytes::appendLE(out, w.zip64 ? kMax32 : w.comp, 4);
    bytes::appendLE(out, w.zip64 ? kMax32 : w.uncomp, 4);
    bytes::appendLE(out, m.name.size(), 2);
    bytes::appendLE(out, w.zip64 ? 20 : 0, 2);
    bytes::append(out, m.name);
    if (w.zip64) { // the local zip64 extra holds both sizes
      bytes::appendLE(out, 0x0001, 2);
      bytes::appendLE(out, 16, 2);
      bytes::appendLE(out, w.uncomp, 8);
      bytes::appendLE(out, w.comp, 8);
    }
    out.insert(out.end(), payload.begin(), payload.end());
    written.push_back(w);
  }

  uint64_t cdOffset = out.size();
  for (size_t i = 0; i < members.size(); ++i) {
    const Written &w = written[i];
    bool bigOffset = opts.forceZip64 || w.offset >= kMax32;
    bool bigSizes = w.zip64;
    uint64_t extraLen = (bigSizes ? 16 : 0) + (bigOffset ? 8 : 0);
    uint64_t needed = bigSizes || bigOffset ? 45 : 20;
    bytes::appendLE(out, kCentralSig, 4);
    bytes::appendLE(out, (3 << 8) | needed, 2); // made by: Unix
    bytes::appendLE(out, needed, 2);
    bytes::appendLE(out, 0, 2);
    bytes::appendLE(out, method, 2);
    bytes::appendLE(out, dosTime, 2);
    bytes::appendLE(out, dosDate, 2);
    bytes::appendLE(out, w.crc, 4);
    bytes::appendLE(out, bigSizes ? kMax32 : w.comp, 4);
    bytes::appendLE(out, bigSizes ? kMax32 : w.uncomp, 4);
    bytes::appendLE(out, members[i].name.size(), 2);
    bytes::appendLE(out, extraLen ? extraLen + 4 : 0, 2);
    bytes::appendLE(out, 0, 2);             // comment length
    bytes::appendLE(out, 0, 2);             // disk number start
    bytes::appendLE(out, 0, 2);             // internal attributes
    bytes::appendLE(out, 0600u << 16, 4);   // external attributes: -rw-------
    bytes::appendLE(out, bigOffset ? kMax32 : w.offset, 4);
    bytes::append(out, members[i].name);
    if (extraLen) {
      bytes::appendLE(out, 0x0001, 2);
      bytes::appendLE(out, extraLen, 2);
      if (bigSizes) {
        bytes::appendLE(out, w.uncomp, 8);
        bytes::appendLE(out, w.comp, 8);
      }
      if (bigOffset) bytes::appendLE(out, w.offset, 8);
    }
  }
  uint64_t cdSize = out.size() - cdOffset;
  uint64_t count = members.size();

  if (opts.forceZip64 || count >= kMax16 || cdOffset >= kMax32 || cdSize >= kMax32) {
    uint64_t zip64End = out.size();
    bytes::appendLE(out, kZip64EndSig, 4);
    bytes::appendLE(out, kZip64EndLen - 12, 8); // size of the rest of the record
    bytes::appendLE(out, (3 << 8) | 45, 2);
    bytes::appendLE(out, 45, 2);
    bytes::appendLE(out, 0, 4);
    bytes::appendLE(out, 0, 4);
    bytes::appendLE(out, count, 8);
    bytes::appendLE(out, count, 8);
    bytes::appendLE(out, cdSize, 8);
    bytes::appendLE(out, cdOffset, 8);
    bytes::appendLE(out, kZip64LocatorSig, 4);
    bytes::appendLE(out, 0, 4);
    bytes::appendLE(out, zip64End, 8);
    bytes::appendLE(out, 1, 4);
  }
  bytes::appendLE(out, kEndSig, 4);
  bytes::appendLE(out, 0, 2);
  bytes::appendLE(out, 0, 2);
  bytes::appendLE(out, std::min(count, kMax16), 2);
  bytes::appendLE(out, std::min(count, kMax16), 2);
  bytes::appendLE(out, std::min(cdSize, kMax32), 4);
  bytes::appendLE(out, std::min(cdOffset, kMax32), 4);
  bytes::appendLE(out, 0, 2); // comment length
  return out;
}

} // namespace nxc
