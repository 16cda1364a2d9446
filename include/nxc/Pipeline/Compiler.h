//===- Compiler.h - from traced graphs to LLVM IR and objects ---*- C++ -*-===//
//
// The compiler's middle and back end behind one plain-C++ interface (no MLIR
// or LLVM headers here, so the CLI and tests stay cheap to compile):
//
//   graphs --GraphToNx--> nx dialect --nxc-lower-nx-to-linalg--> linalg on tensors
//     --fusion, bufferization, loops, math expansion--> LLVM dialect
//     --translation, entry wrappers, LLVM O3--> LLVM IR --TargetMachine--> asm/object
//
// For CUDA the stages after bufferization differ (lib/Pipeline/CudaPipeline.cpp):
//   bufferized --nxc-map-to-gpu, outlining--> gpu launches and kernels
//     --NVVM, LLVM's NVPTX back end--> PTX per architecture --ptxas, fatbinary--> fatbin
//     --host code: launches on one stream, the CUDA loader, entry wrappers--> object
//
//===----------------------------------------------------------------------===//
#ifndef NXC_PIPELINE_COMPILER_H
#define NXC_PIPELINE_COMPILER_H

#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Sema/Graph.h"

#include <string>
#include <vector>

namespace nxc {

/// How far to lower; each stage can be printed (`--emit`).
enum class Stage { Nx, Linalg, Bufferized, Gpu, LLVMDialect, LLVMIR, Ptx, Asm, Object };

/// Where the generated code runs. CudaEmulated: the CUDA kernels, mapped as
/// for CUDA, run on the CPU one block and one thread at a time (for testing
/// the GPU mapping without a GPU; the artifacts are CPU artifacts).
enum class Device { Cpu, Cuda, CudaEmulated };

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
  /// x86-64 ISA variants, best first ("native", "x86-64-v3", "znver4"...):
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

/// The result of a compilation: printed text for the textual stages, or the
/// object file's bytes for Stage::Object.
struct CompileOutput {
  std::string text;
  std::string object;
  std::string triple; ///< the resolved triple
  std::string cpu;    ///< the resolved CPU
  bool bareMetal = false; ///< no operating system (`*-none-*`): no shared object, no C library
  std::vector<EntryInfo> entries; ///< filled from the bufferization stage on
  std::vector<CpuVariant> variants; ///< with TargetOptions::variants, best first
  /// CUDA: what the embedded GPU binary holds ("cubin sm_80, sm_90; PTX
  /// sm_90"), and warnings for the user (no toolkit: PTX only).
  std::vector<std::string> gpuImages;
  std::vector<std::string> warnings;
};

/// Compiles all entries into one module and lowers it to `stage`.
Result<CompileOutput> compile(const std::vector<EntryPoint> &entries, const TargetOptions &target, Stage stage);

/// The default variants of a host x86-64 module: the build machine's CPU,
/// x86-64-v3 (AVX2, FMA) and the x86-64 baseline, without duplicates.
std::vector<std::string> defaultCpuVariants();

/// The variants `nxc aot` builds for `triple` (empty: the host) and the
/// --cpu option: a comma-separated list as given; one CPU on x86-64 as one
/// guarded variant; nothing on x86-64 Linux hosts as defaultCpuVariants();
/// otherwise none (one unguarded version, as for other architectures).
Result<std::vector<std::string>> planCpuVariants(const std::string &triple, const std::string &cpuOption);

} // namespace nxc

#endif // NXC_PIPELINE_COMPILER_H
