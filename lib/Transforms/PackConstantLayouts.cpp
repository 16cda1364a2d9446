//===- PackConstantLayouts.cpp - layout copies of constants at compile time ===//
//
// A dot whose output has few columns runs as dot products of contiguous
// rows: nx -> linalg copies the right operand to [columns, contraction]
// first (a linalg.generic marked nxc.keep_layout), in every call. When that
// operand is a constant (weights baked in with @file), the copy is done here
// instead, once, at compile time: the transposed weights become the
// constant, and calls neither copy them nor need workspace for them.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nxc {

#define GEN_PASS_DEF_PACKCONSTANTLAYOUTSPASS
#include "nxc/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

struct PackConstantLayoutsPass : impl::PackConstantLayoutsPassBase<PackConstantLayoutsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Only the layout copies: other element-wise ops on constants stay as
    // the program wrote them (folding them could grow the library).
    linalg::populateConstantFoldLinalgOperations(patterns, [](OpOperand *operand) {
      return operand->getOwner()->hasAttr("nxc.keep_layout");
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) signalPassFailure();
  }
};

} // namespace
} // namespace nxc
