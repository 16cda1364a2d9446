//===- Passes.h - nxc's transformations on linalg ---------------*- C++ -*-===//
#ifndef NXC_TRANSFORMS_PASSES_H
#define NXC_TRANSFORMS_PASSES_H

#include <memory>

namespace mlir {
class Pass;
}

namespace nxc {

/// Element-wise fusion that also fuses producers with several users
/// (`nxc-fuse-elementwise`): recomputing cheap element-wise work in each
/// consumer is faster than a round trip through memory, and it removes the
/// temporary buffer altogether (softmax needs no scratch memory at all).
std::unique_ptr<mlir::Pass> createFuseElementwisePass();

/// Moves every temporary buffer of a public function into one caller-owned
/// workspace argument (`nxc-allocs-to-workspace`), reusing bytes between
/// buffers whose lifetimes do not overlap. Records `nxc.workspace_size`.
std::unique_ptr<mlir::Pass> createAllocsToWorkspacePass();

/// Rewrites memref.copy into linalg.copy, which lowers to loops instead of a
/// memcpy call (`nxc-copies-to-linalg`).
std::unique_ptr<mlir::Pass> createCopiesToLinalgPass();

/// Copies repeated return operands so that each result gets its own buffer
/// after bufferization (`nxc-distinct-results`).
std::unique_ptr<mlir::Pass> createDistinctResultsPass();

/// Registers the passes above so that pipelines can name them in text.
void registerTransformPasses();

} // namespace nxc

#endif // NXC_TRANSFORMS_PASSES_H
