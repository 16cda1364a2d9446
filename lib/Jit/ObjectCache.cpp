//===- ObjectCache.cpp - compiled objects on disk -------------------------===//
#include "nxc/Jit/Jit.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <cstdlib>
#include <map>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nxc {
namespace {

/// Each entry is KEY.o plus KEY.meta: "nxc-object-cache 2 <workspace> <object size>
/// <object SHA-256> <metadata SHA-256>".
constexpr const char *kMagic = "nxc-object-cache";

/// The largest .meta file: one line of numbers and digests.
constexpr uint64_t kMetaLimit = 4096;

/// Reads `path` if it is a regular file of at most `limit` bytes. Anything
/// else (a directory, a FIFO, a device such as /dev/zero, a symlink, a file
/// larger than its entry says) is a miss: opened without blocking and
/// without following links, checked before a byte is read.
bool readFile(const std::string &path, std::string &out, uint64_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= limit;
  if (ok) {
    out.resize((size_t)st.st_size);
    size_t done = 0;
    while (ok && done < out.size()) {
      ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR) continue;
      ok = n > 0;
      if (ok) done += (size_t)n;
    }
  }
  ::close(fd);
  return ok;
}

/// Makes room for an entry's file where something other than a regular
/// file stands (a directory, a FIFO): rename cannot replace those.
void clearNonFile(const std::string &path) {
  std::error_code ec;
  auto st = std::filesystem::symlink_status(path, ec);
  if (ec || st.type() == std::filesystem::file_type::not_found || st.type() == std::filesystem::file_type::regular)
    return;
  std::filesystem::remove_all(path, ec);
}

/// Writes to a unique temporary name, then renames: readers see all or nothing.
bool writeAtomically(const std::string &path, const std::string &bytes) {
  llvm::SmallString<256> tmp;
  int fd;
  if (llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, tmp)) return false;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
    os.flush();
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return false;
    }
  }
  if (llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return false;
  }
  return true;
}

} // namespace

std::string ObjectCache::directory() {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg && llvm::sys::path::is_absolute(xdg))
    return fmt::format(FMT_STRING("{}/nxc"), xdg);
  if (const char *home = std::getenv("HOME"); home && *home) return fmt::format(FMT_STRING("{}/.cache/nxc"), home);
  return "";
}

std::string ObjectCache::key(const std::vector<std::string> &parts) {
  llvm::SHA256 sha;
  for (auto &p : parts) {
    sha.update(llvm::StringRef(fmt::format(FMT_STRING("{}:"), p.size())));
    sha.update(llvm::StringRef(p));
  }
  auto digest = sha.final();
  return fmt::format(FMT_STRING("{:02x}"), fmt::join(digest, ""));
}

namespace {

std::string sha256(const std::string &bytes) {
  llvm::SHA256 sha;
  sha.update(llvm::StringRef(bytes));
  auto digest = sha.final();
  return fmt::format(FMT_STRING("{:02x}"), fmt::join(digest, ""));
}

/// The metadata's own check: everything it states, tied to its key.
std::string metaDigest(const std::string &key, int64_t workspace, size_t size, const std::string &objectDigest) {
  return sha256(fmt::format(FMT_STRING("{} {} {} {} {}"), kMagic, key, workspace, size, objectDigest));
}

/// The most bytes the cache keeps ($NXC_CACHE_MAX_BYTES, default 1 GiB).
uint64_t cacheLimit() {
  if (const char *v = std::getenv("NXC_CACHE_MAX_BYTES"); v && *v) {
    char *end = nullptr;
    unsigned long long n = std::strtoull(v, &end, 10);
    if (end && !*end) return n;
  }
  return uint64_t(1) << 30;
}

/// Removes the least recently used entries (by their .meta's time, which a
/// hit refreshes) until the cache fits its limit.
void evict(const std::string &dir) {
  struct Item {
    std::string key;
    llvm::sys::TimePoint<> used;
    uint64_t bytes = 0;
  };
  std::map<std::string, Item> items;
  uint64_t total = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef path = it->path();
    llvm::StringRef name = llvm::sys::path::filename(path);
    auto dot = name.rfind('.');
    if (dot == llvm::StringRef::npos) continue;
    std::string key = name.substr(0, dot).str(), ext = name.substr(dot).str();
    if (ext != ".o" && ext != ".meta") continue;
    llvm::sys::fs::file_status st;
    if (llvm::sys::fs::status(path, st)) continue;
    Item &item = items[key];
    item.key = key;
    item.bytes += st.getSize();
    total += st.getSize();
    if (ext == ".meta") item.used = st.getLastModificationTime();
  }
  uint64_t limit = cacheLimit();
  if (total <= limit) return;
  std::vector<Item> order;
  for (auto &[k, item] : items) order.push_back(item);
  std::sort(order.begin(), order.end(), [](const Item &a, const Item &b) { return a.used < b.used; });
  for (auto &item : order) {
    if (total <= limit) break;
    // The .meta first: an object without one is never used.
    llvm::sys::fs::remove(fmt::format(FMT_STRING("{}/{}.meta"), dir, item.key));
    llvm::sys::fs::remove(fmt::format(FMT_STRING("{}/{}.o"), dir, item.key));
    total -= std::min(total, item.bytes);
  }
}

} // namespace

std::optional<ObjectCache::Entry> ObjectCache::lookup(const std::string &key) {
  std::string dir = directory();
  if (dir.empty()) return std::nullopt;
  std::string path = fmt::format(FMT_STRING("{}/{}.o"), dir, key), object;
  std::string meta, metaPath = fmt::format(FMT_STRING("{}/{}.meta"), dir, key);
  if (!readFile(metaPath, meta, kMetaLimit)) return std::nullopt;
  // The object must have exactly the size its .meta records.
  std::istringstream ms(meta);
  std::string magic;
  int version = 0;
  int64_t workspace = 0;
  uint64_t size = 0;
  if (!(ms >> magic >> version >> workspace >> size) || !readFile(path, object, size)) return std::nullopt;
  auto e = verify(key, meta, std::move(object));
  if (!e) return std::nullopt;
  e->path = path;
  std::error_code ec; // a hit counts as a use, for eviction
  std::filesystem::last_write_time(metaPath, std::filesystem::file_time_type::clock::now(), ec);
  return e;
}

std::optional<ObjectCache::Entry> ObjectCache::verify(const std::string &key, const std::string &meta,
                                                      std::string object) {
  Entry e;
  e.object = std::move(object);
  std::istringstream ms(meta);
  std::string magic, objectDigest, digest;
  int version = 0;
  size_t size = 0;
  // Everything is checked before the object is loaded: its size, its
  // SHA-256, and the metadata's own digest (so a damaged workspace size
  // is caught too). Anything else means "compile again".
  if (!(ms >> magic >> version >> e.workspaceSize >> size >> objectDigest >> digest) || magic != kMagic ||
      version != 2 || size != e.object.size() || e.workspaceSize < 0 || e.workspaceSize > (int64_t(1) << 40) ||
      objectDigest != sha256(e.object) || digest != metaDigest(key, e.workspaceSize, size, objectDigest))
    return std::nullopt;
  return e;
}

bool ObjectCache::store(const std::string &key, const std::string &object, int64_t workspaceSize) {
  std::string dir = directory();
  if (dir.empty() || llvm::sys::fs::create_directories(dir)) return false;
  // The object first: a .meta file only ever names a complete object.
  std::string objectPath = fmt::format(FMT_STRING("{}/{}.o"), dir, key),
              metaPath = fmt::format(FMT_STRING("{}/{}.meta"), dir, key);
  clearNonFile(objectPath);
  clearNonFile(metaPath);
  if (!writeAtomically(objectPath, object)) return false;
  std::string objectDigest = sha256(object);
  bool written =
      writeAtomically(metaPath, fmt::format(FMT_STRING("{} 2 {} {} {} {}\n"), kMagic, workspaceSize, object.size(),
                                            objectDigest, metaDigest(key, workspaceSize, object.size(), objectDigest)));
  evict(dir);
  return written;
}

} // namespace nxc
