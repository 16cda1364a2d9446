//===- ObjectCache.cpp - compiled objects on disk -------------------------===//
#include "nxc/Jit/Jit.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

namespace nxc {
namespace {

/// Each entry is KEY.o plus KEY.meta ("nxc-object-cache 1 <workspace> <object size>").
constexpr const char *kMagic = "nxc-object-cache";

bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), {});
  return true;
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

std::optional<ObjectCache::Entry> ObjectCache::lookup(const std::string &key) {
  std::string dir = directory();
  if (dir.empty()) return std::nullopt;
  Entry e;
  e.path = fmt::format(FMT_STRING("{}/{}.o"), dir, key);
  std::string meta;
  if (!readFile(fmt::format(FMT_STRING("{}/{}.meta"), dir, key), meta) || !readFile(e.path, e.object))
    return std::nullopt;
  std::istringstream ms(meta);
  std::string magic;
  int version = 0;
  size_t size = 0;
  if (!(ms >> magic >> version >> e.workspaceSize >> size) || magic != kMagic || version != 1 || size != e.object.size())
    return std::nullopt;
  return e;
}

void ObjectCache::store(const std::string &key, const std::string &object, int64_t workspaceSize) {
  std::string dir = directory();
  if (dir.empty() || llvm::sys::fs::create_directories(dir)) return;
  // The object first: a .meta file only ever names a complete object.
  if (!writeAtomically(fmt::format(FMT_STRING("{}/{}.o"), dir, key), object)) return;
  writeAtomically(fmt::format(FMT_STRING("{}/{}.meta"), dir, key),
                  fmt::format(FMT_STRING("{} 1 {} {}\n"), kMagic, workspaceSize, object.size()));
}

} // namespace nxc
