//===- Passes.cpp - registering nxc's transformations ---------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace nxc {

void registerTransformPasses() {
  mlir::registerPass(createFuseElementwisePass);
  mlir::registerPass(createAllocsToWorkspacePass);
  mlir::registerPass(createCopiesToLinalgPass);
  mlir::registerPass(createDistinctResultsPass);
}

} // namespace nxc
