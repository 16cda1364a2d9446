//===- Options.h - what the compiler is asked to build ----------*- C++ -*-===//
//
// The options and entry descriptions that the compiler's facade (Compiler.h)
// and its internal stages (lib/Pipeline) share: the stage to stop at, the
// device, the target and its variants, and each entry point. Plain C++.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_PIPELINE_OPTIONS_H
#define NXC_PIPELINE_OPTIONS_H

#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Sema/Graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nxc {

/// How far to lower; each stage can be printed (`--emit`).
enum class Stage { Nx, Linalg, Bufferized, Gpu, LLVMDialect, LLVMIR, Ptx, Asm, Object };

/// Where the generated code runs. CudaEmulated: the CUDA kernels, mapped as
/// for CUDA, run on the CPU one block and one thread at a time (for testing
/// the GPU mapping without a GPU; the artifacts are CPU artifacts).
enum class Device { Cpu, Cuda, CudaEmulated };

/// The device `--device` names (cpu, cuda, cuda-emulated), if any; each
/// command then says which it accepts.
inline std::optional<Device> deviceNamed(const std::string &name) {
  if (name == "cpu") return Device::Cpu;
  if (name == "cuda") return Device::Cuda;
  if (name == "cuda-emulated") return Device::CudaEmulated;
  return std::nullopt;
}

/// What to generate code for.
struct TargetOptions {
  std::string triple;   ///< LLVM triple; empty means the host
  std::string cpu;      ///< CPU name; empty: the host CPU for the host, "generic" otherwise
  std::string features; ///< extra target features ("+neon,-avx512f")
  int optLevel = 3;     ///< 0..3
  /// The largest workspace the plain entry point may put on the stack;
  /// -1: 64 KiB on targets with an OS, 0 on bare metal.
  int64_t stackWorkspaceLimit = -1;
  /// Also export `int symbol_packed(void **argv)` (argv: inputs, outputs,
  /// workspace), which the JIT calls without knowing the arity.
  bool packedEntries = false;
  /// The most threads one call may use (CPU code on targets with an OS):
  /// large parallel loops run on the module's thread pool, and the
  /// workspace holds a copy of their temporaries per thread. 1: no pool.
  int threads = 1;
  /// With threads > 1: the least estimated work (scalar operations) of a
  /// loop that runs on the pool.
  int64_t minParallelWork = 65536;
  /// With threads > 1: the module exports `PREFIX_set_threads(int)`,
  /// `PREFIX_threads(void)` and `PREFIX_stop_threads(void)`.
  std::string threadExportPrefix;
  /// ISA variants (x86-64, AArch64 Linux), best first ("native", "x86-64-v3",
  /// "znver4", "neoverse-v1"...):
  /// every function is compiled once per variant and the entry points run
  /// the first one the CPU supports, chosen once; a CPU below all of them
  /// gets NXRT_ERROR_UNSUPPORTED_CPU. Empty: one unguarded version for `cpu`.
  std::vector<std::string> variants;
  /// With variants: the exported `const char *NAME(void)` that names the
  /// variant in use.
  std::string variantQuery;
  /// Device::Cuda: kernels for NVIDIA GPUs, launched from host code for
  /// `triple` (a 64-bit Linux target).
  Device device = Device::Cpu;
  /// CUDA architectures ("sm_90"), one cubin each; empty: kDefaultGpuArchs.
  std::vector<std::string> gpuArchs;
  /// The CUDA toolkit (ptxas, fatbinary); empty: $CUDA_PATH, then /usr/local/cuda.
  std::string cudaPath;
  /// CUDA: the exported `const char *NAME(void)` that says why the last call
  /// returned NXRT_ERROR_NO_DEVICE or NXRT_ERROR_DEVICE.
  std::string deviceErrorQuery;
  /// Non-empty: the module is also an Erlang NIF library for this Erlang
  /// module ("Elixir.MNIST.Compiled"; needs packedEntries and an OS):
  /// runtime/beam_nif.c, linked in, calls the packed entries.
  std::string beamNifModule;
};

/// Whether `name` may name the Erlang module of --nif (letters, digits,
/// `_`, `.` and `@`, at most 255 bytes).
bool validErlangModuleName(const std::string &name);

/// The CUDA architectures `nxc aot --device cuda` builds cubins for by default.
constexpr const char *kDefaultGpuArchs = "sm_80,sm_90,sm_100,sm_120";

/// One ISA variant of a module: its CPU and the features the running CPU
/// must have for it.
struct CpuVariant {
  std::string cpu;                   ///< the resolved CPU name
  std::vector<std::string> features; ///< CPUID-checked features it needs
};

constexpr int64_t kDefaultStackWorkspaceLimit = 64 * 1024;

/// What the generated code needs from its caller, per entry.
struct EntryInfo {
  std::string symbol;
  int64_t workspaceSize = 0; ///< bytes of scratch memory
  bool plainVariant = false; ///< whether `symbol(...)` (stack workspace) exists
  unsigned inputs = 0;       ///< tensor arguments (flattened); the outputs follow
  unsigned parallelLoops = 0; ///< loops that run on the thread pool (TargetOptions::threads)
  std::vector<int64_t> tensorBytes; ///< bytes of each input, then of each output
};

/// One exported C function: `symbol` computes `graph`.
struct EntryPoint {
  std::string symbol;
  const Graph *graph = nullptr;
};

} // namespace nxc

#endif // NXC_PIPELINE_OPTIONS_H
