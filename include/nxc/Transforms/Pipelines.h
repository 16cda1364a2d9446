//===- Pipelines.h - nxc's pass pipelines, by name -------------*- C++ -*-===//
//
// The pipelines `nxc aot` runs on the CPU, as text for parsePassPipeline
// (lib/Pipeline/Compiler.cpp) and registered by name, so that nxc-opt runs
// what nxc runs: `nxc-opt f.nx.mlir --nxc-cpu-pipeline` on `--emit nx`'s
// output prints what `--emit llvm-dialect` does.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TRANSFORMS_PIPELINES_H
#define NXC_TRANSFORMS_PIPELINES_H

#include <cstdint>
#include <string>

namespace nxc {

/// What the CPU pipelines depend on; Compiler.cpp decides it from the target.
struct CpuPipelineChoices {
  bool bareMetal = false;      ///< no OS: scalar register blocks, no thread pool
  int vectorBits = 256;        ///< the register blocks' vector width (512: AVX-512)
  int threads = 1;             ///< the most threads one call uses
  int64_t minWork = 65536;     ///< the least work of a loop that runs on the pool
  bool streamStores = false;   ///< x86-64 with an OS: streaming stores for large outputs
  bool fastExtrema = false;    ///< x86: fast checked float maxima and minima
};

/// nx -> linalg on tensors, fused and blocked (printed by --emit linalg).
std::string cpuToLinalgPipeline(const CpuPipelineChoices &c);
/// The same for GPUs (expensive values recomputed, no CPU blocking).
std::string gpuToLinalgPipeline();
/// linalg on tensors -> linalg on buffers in the workspace, parallel loops
/// outlined for the pool (printed by --emit bufferized).
std::string cpuBufferizePipeline(const CpuPipelineChoices &c);
/// buffers -> the LLVM dialect (printed by --emit llvm-dialect).
std::string cpuToLLVMDialectPipeline(const CpuPipelineChoices &c);

/// Registers nxc-cpu-pipeline (the three above in order) and each stage
/// (nxc-cpu-to-linalg, nxc-cpu-bufferize, nxc-cpu-to-llvm-dialect), with
/// options bare-metal, vector-bits, threads, min-work, stream-stores and
/// fast-extrema.
void registerNxcPipelines();

} // namespace nxc

#endif // NXC_TRANSFORMS_PIPELINES_H
