//===- Jit.h - loading compiled code into this process ----------*- C++ -*-===//
//
// `nxc jit` compiles through the same pipeline as `nxc aot` (one code
// generator) into a relocatable object for the host, then links that object
// into the running process with LLVM's ORC JIT and calls its packed entry.
// Objects are cached on disk (see ObjectCache) and loaded functions in memory.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_JIT_JIT_H
#define NXC_JIT_JIT_H

#include "nxc/Frontend/Diagnostics.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>
#include <memory>
#include <string>

namespace llvm::orc {
class LLJIT;
}

namespace nxc {

/// A generated function loaded into this process.
struct LoadedFunction {
  /// `int symbol_packed(void **argv)`: argv holds the inputs, the outputs and
  /// the workspace pointer, in that order.
  int (*packed)(void **argv) = nullptr;
  int64_t workspaceSize = 0;
};

/// The host functions that print_value's compiled calls reach (Printer.cpp):
/// nxc_print_begin(header), nxc_print_bits(bits), nxc_print_end().
std::vector<std::pair<std::string, void *>> printerSymbols();

/// One ORC JIT instance; every object loaded into it stays until it dies.
class JitSession {
public:
  static Result<std::unique_ptr<JitSession>> create();
  ~JitSession();

  /// Links `object` (compiled for the host) into the process and looks up
  /// `symbol`_packed. Loading the same `key` twice returns the first load.
  /// Safe to call from several threads at once.
  /// With `threads`, the object has a thread pool: its `symbol`_stop_threads
  /// runs before the session unloads the code.
  Result<LoadedFunction> load(const std::string &key, const std::string &object, const std::string &symbol,
                              int64_t workspaceSize, bool threads = false);

private:
  JitSession() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::mutex mutex_; // guards loaded_, next_ and linking into jit_
  std::map<std::string, LoadedFunction> loaded_;
  std::vector<void (*)(void)> stopThreads_; // each threaded object's pool
  int next_ = 0;
};

/// Compiled objects on disk, keyed by a hash of everything that determines the
/// code: the source text, the function, the argument types and shapes, the
/// target and nxc's version. The directory is $XDG_CACHE_HOME/nxc (default
/// ~/.cache/nxc). Entries are written to a temporary file and renamed into
/// place, so concurrent nxc processes never see a partial entry.
class ObjectCache {
public:
  /// The directory used, or empty when no cache directory can be determined.
  static std::string directory();
  /// A stable hex key for `parts`.
  static std::string key(const std::vector<std::string> &parts);

  struct Entry {
    std::string object;
    int64_t workspaceSize = 0;
    std::string path;
  };
  /// The entry for `key`, if present and intact.
  static std::optional<Entry> lookup(const std::string &key);
  /// Checks an entry's metadata (KEY.meta's text) against its object and its
  /// key; the entry if everything agrees.
  static std::optional<Entry> verify(const std::string &key, const std::string &meta, std::string object);
  /// Stores an entry; failures (read-only disk, ...) are ignored: the cache is
  /// only an optimization.
  /// Returns false when nothing could be written (a read-only or full cache).
  static bool store(const std::string &key, const std::string &object, int64_t workspaceSize);
};

} // namespace nxc

#endif // NXC_JIT_JIT_H
