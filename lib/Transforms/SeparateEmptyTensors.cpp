//===- SeparateEmptyTensors.cpp - one tensor.empty per use ----------------===//
//
// CSE merges equal tensor.empty ops, so one of them can be the destination
// of every element-wise op of a function (a chain of 2,000 statements:
// 500 ops). One-shot bufferization then analyzes all of them as writers of
// one tensor, in time quadratic in their number (8 s of a 2,000-statement
// chain's compilation). Past kMaxSharedUses uses, each use gets an empty
// tensor of its own, made right before it, which is what the uses mean:
// nothing is read from an empty tensor. A few uses stay shared: the analysis
// is cheap there, and a shared destination lets it chain ops into one buffer
// (the MLP's output holds its logits from the first product on, where
// separate ones cost a 1,200-byte temporary). Runs right before
// bufferization, after the last CSE of tensors.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace nxc {

#define GEN_PASS_DEF_SEPARATEEMPTYTENSORSPASS
#include "nxc/Transforms/Passes.h.inc"

namespace {

constexpr unsigned kMaxSharedUses = 8;

struct SeparateEmptyTensorsPass : impl::SeparateEmptyTensorsPassBase<SeparateEmptyTensorsPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> shared;
    getOperation().walk([&](tensor::EmptyOp e) {
      if (e.getResult().hasNUsesOrMore(kMaxSharedUses + 1)) shared.push_back(e);
    });
    for (tensor::EmptyOp e : shared) {
      for (OpOperand &use : llvm::make_early_inc_range(e->getUses())) {
        OpBuilder b(use.getOwner());
        use.set(b.clone(*e)->getResult(0));
      }
      e->erase();
    }
  }
};

} // namespace

} // namespace nxc
