//===- Artifacts.h - the files nxc aot writes -------------------*- C++ -*-===//
//
// Object files become lib<M>.so (lld, in process) and lib<M>.a (LLVM's archive
// writer); the runtime is compiled from embedded bitcode for the module's
// target; the C header and the JSON manifest describe every entry.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TARGET_ARTIFACTS_H
#define NXC_TARGET_ARTIFACTS_H

#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Sema/Graph.h"
#include "nxc/Sema/Signature.h"

#include <string>
#include <vector>

namespace nxc {

/// An entry as the header and manifest describe it.
struct EntryDescription {
  std::string symbol;  ///< the C function name
  std::string function;
  std::string source;  ///< "softmax(f32[100])" as given
  const Graph *graph = nullptr;
  int64_t workspaceSize = 0;  ///< bytes of caller-owned scratch memory
  bool plainVariant = true;   ///< `symbol(...)` exists (workspace on the stack)
  unsigned parallelLoops = 0; ///< loops that run on the module's thread pool
  bool packedEntry = false;   ///< `symbol_packed(void **args)` exists (--packed-entries)
};

/// A C library a module's shared object loads, and what it takes from it.
struct NeededLibrary {
  std::string soname; ///< "libm.so.6"
  std::vector<std::string> symbols;
  /// The glibc symbol version each of `symbols` is bound to ("" for none),
  /// parallel to `symbols`.
  std::vector<std::string> versions;
};

/// The C libraries that define a module's undefined symbols: libm.so.6 for
/// f64 transcendental functions, libpthread.so.0 and libc.so.6 for the
/// thread pool (--threads; glibc 2.34 moved pthreads into libc.so.6 and keeps
/// libpthread.so.0 for older programs, so both are named).
///
/// A reference without a version binds to the oldest version glibc defines,
/// which on x86-64 is not always the one to use: pthread_cond_* of
/// GLIBC_2.2.5 are wrappers that allocate the condition's state on the heap
/// at first use. Such symbols are bound to the version a program linked
/// against glibc would use (pthread_cond_* to GLIBC_2.3.2) for `triple`.
std::vector<NeededLibrary> neededLibraries(const std::vector<std::string> &undefined, const std::string &triple);

/// The files linkSharedObject writes beside `outputPath` and removes again
/// (the stub libraries of `needed`, their objects and version scripts), for
/// a caller that must clean them up if it is interrupted.
std::vector<std::string> linkScratchFiles(const std::string &outputPath, const std::vector<NeededLibrary> &needed);

/// Links relocatable objects (the module's, the runtime's) into a shared
/// object with lld (in process), recording DT_NEEDED for each of `needed`.
Status linkSharedObject(const std::vector<std::string> &objectPaths, const std::string &outputPath,
                        const std::string &soname, const std::string &triple, const std::vector<NeededLibrary> &needed);

/// Writes `bytes` to the file `path` (created or truncated).
Status writeBytes(const std::string &path, const std::string &bytes);

/// The undefined symbols of an object file.
std::vector<std::string> undefinedSymbols(const std::string &objectBytes);

/// Whether `name` is a C math library function (exp, sinf, ...).
bool isLibmFunction(const std::string &name);

/// Writes a GNU archive holding the given (name, bytes) members, with a symbol table.
Status writeStaticArchive(const std::vector<std::pair<std::string, std::string>> &members, const std::string &path);

/// Compiles the runtime (embedded LLVM bitcode) for `triple`/`cpu` into an object.
Result<std::string> buildRuntimeObject(const std::string &triple, const std::string &cpu, const std::string &features);

/// The C source of the runtime, for users with their own toolchains.
std::string runtimeSource();
std::string runtimeHeader();

/// An ISA variant of a module, for the header and the manifest.
struct VariantDescription {
  std::string cpu;
  std::vector<std::string> features; ///< what the running CPU must have
};

/// A module whose functions run on a CUDA GPU (--device cuda).
struct CudaDescription {
  std::vector<std::string> images; ///< "cubin sm_90", "ptx sm_120", ...
};

/// The generated C header for a module.
/// `libraries`: what the static library needs at link time besides libnxrt.a ("m").
std::string writeHeader(const std::string &module, const std::vector<EntryDescription> &entries,
                        const std::string &triple, const std::string &sourceName,
                        const std::vector<std::string> &libraries, bool bareMetal,
                        const std::vector<VariantDescription> &variants = {},
                        const CudaDescription *cuda = nullptr, int threads = 1);

/// The JSON manifest for a module.
std::string writeManifest(const std::string &module, const std::vector<EntryDescription> &entries,
                          const std::string &triple, const std::string &cpu,
                          const std::vector<std::string> &libraries,
                          const std::vector<VariantDescription> &variants = {}, const std::string &inputsDigest = "",
                          const CudaDescription *cuda = nullptr, int threads = 1);

} // namespace nxc

#endif // NXC_TARGET_ARTIFACTS_H
