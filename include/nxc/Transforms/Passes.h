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

void registerTransformPasses();

} // namespace nxc

#endif // NXC_TRANSFORMS_PASSES_H
