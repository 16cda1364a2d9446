//===- ModuleFiles.h - a module's files, all or none ------------*- C++ -*-===//
//
// nxc aot writes a module's files (header, manifest, libraries, runtime) to
// temporaries in the output directory, named .nxc-tmp-PID-NAME, and renames
// them into place only once every one is complete: a failed run (a bad
// name, a full disk, a link error) leaves the directory as it was, and a
// renamed file replaces whatever stood there (a planted symlink included)
// instead of writing through it. Temporaries are removed on failure, on
// SIGINT, SIGTERM and SIGHUP, and, when a run was killed outright, by the
// next run in that directory (those of processes no longer alive).
//
//===----------------------------------------------------------------------===//
#ifndef NXC_BUILD_MODULEFILES_H
#define NXC_BUILD_MODULEFILES_H

#include "nxc/Frontend/Diagnostics.h"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace nxc::build {

class ModuleFiles {
public:
  /// Clears the temporaries that dead runs left in `dir`.
  explicit ModuleFiles(std::filesystem::path dir);
  ModuleFiles(const ModuleFiles &) = delete;
  ModuleFiles &operator=(const ModuleFiles &) = delete;
  /// Removes every temporary not committed.
  ~ModuleFiles();

  /// The temporary that will become `name`, registered for clean-up.
  std::string temporary(const std::string &name);
  /// Writes `bytes` to the temporary of `name`.
  Status write(const std::string &name, const std::string &bytes);
  /// Writes `bytes` to a temporary that is removed instead of committed (an
  /// object file for the linker); returns its path.
  Result<std::string> writeScratch(const std::string &name, const std::string &bytes);
  /// Registers `path` (a file in the directory that another step writes and
  /// removes, such as the linker's stubs) for removal on failure or signal.
  void scratch(const std::string &path);
  /// Renames every temporary to its name.
  Status commit();

private:
  std::filesystem::path dir_;
  std::vector<std::pair<std::string, std::string>> files_; ///< temporary, final
};

} // namespace nxc::build

#endif // NXC_BUILD_MODULEFILES_H
