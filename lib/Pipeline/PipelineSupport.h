//===- PipelineSupport.h - shared by the CPU and CUDA pipelines -*- C++ -*-===//
//
// Internal to lib/Pipeline: running textual pass pipelines with MLIR's
// diagnostics collected into one message, printing a stage, and the CUDA
// pipeline's entry point (CudaPipeline.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef NXC_LIB_PIPELINE_PIPELINESUPPORT_H
#define NXC_LIB_PIPELINE_PIPELINESUPPORT_H

#include "nxc/Pipeline/Compiler.h" // CompileOutput

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

namespace llvm {
class TargetMachine;
}

namespace nxc::detail {

/// Collects MLIR diagnostics into one message.
struct DiagnosticCollector {
  std::string messages;
  mlir::ScopedDiagnosticHandler handler;
  explicit DiagnosticCollector(mlir::MLIRContext *ctx);
};

Diag internalError(const std::string &what, const std::string &details);
Status runPipeline(mlir::ModuleOp module, const std::string &pipeline, DiagnosticCollector &diags,
                   const std::string &what);
std::string print(mlir::ModuleOp module);

/// Reads the workspace size the bufferization pipeline recorded per function.
void readWorkspaceSizes(mlir::ModuleOp module, std::vector<EntryInfo> &entries);

/// Bufferization for the GPU: every temporary in the (device) workspace.
extern const char *const kBufferizeForGpu;
/// The GPU mapping, emulated on the CPU (Device::CudaEmulated).
extern const char *const kEmulatedGpu;

/// Lowers a module in linalg on tensors (entries in `out`) for CUDA, up to `stage`.
Status compileCuda(mlir::ModuleOp module, const TargetOptions &target, Stage stage, llvm::TargetMachine &tm,
                   DiagnosticCollector &diags, CompileOutput &out);

} // namespace nxc::detail

#endif // NXC_LIB_PIPELINE_PIPELINESUPPORT_H
