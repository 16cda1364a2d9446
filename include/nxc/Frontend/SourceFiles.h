//===- SourceFiles.h - the defn source files a path names -------*- C++ -*-===//
#ifndef NXC_FRONTEND_SOURCEFILES_H
#define NXC_FRONTEND_SOURCEFILES_H

#include "nxc/Frontend/Diagnostics.h"

#include <string>
#include <vector>

namespace nxc {

/// The defn source files `path` names: itself, or a directory's .ex, .exs
/// and .nx files (recursively, in name order); a directory without any is
/// an error.
Result<std::vector<std::string>> defnSourceFiles(const std::string &path);

} // namespace nxc

#endif // NXC_FRONTEND_SOURCEFILES_H
