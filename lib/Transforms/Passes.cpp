//===- Passes.cpp - registering nxc's transformations ---------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

namespace nxc {
namespace {
#define GEN_PASS_REGISTRATION
#include "nxc/Transforms/Passes.h.inc"
} // namespace

void registerTransformPasses() { registerNxcTransformsPasses(); }

} // namespace nxc
