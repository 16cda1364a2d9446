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

#include "nxc/Pipeline/Options.h"

#include <string>
#include <vector>

namespace nxc {

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
