//===- SourceFiles.cpp - the defn source files a path names ---------------===//
#include "nxc/Frontend/SourceFiles.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace nxc {

Result<std::vector<std::string>> defnSourceFiles(const std::string &path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return std::vector<std::string>{path};
  std::vector<std::string> out;
  fs::recursive_directory_iterator it(path, ec), end;
  if (ec) return error(Loc{}, fmt::format(FMT_STRING("cannot read '{}': {}"), path, ec.message()));
  for (; it != end; it.increment(ec)) {
    if (ec) return error(Loc{}, fmt::format(FMT_STRING("cannot read '{}': {}"), path, ec.message()));
    std::string ext = it->path().extension().string();
    if (it->is_regular_file(ec) && (ext == ".ex" || ext == ".exs" || ext == ".nx")) out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) return error(Loc{}, fmt::format(FMT_STRING("'{}' holds no .ex, .exs or .nx files"), path));
  return out;
}


} // namespace nxc
