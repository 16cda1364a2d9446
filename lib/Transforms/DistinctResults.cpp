//===- DistinctResults.cpp - one buffer per function result ---------------===//
//
// A defn may return the same value twice (`{x + 1, x + 1}` after CSE). Each
// result becomes its own out-parameter after bufferization, so every repeated
// return operand gets its own copy (linalg.copy into a fresh tensor) first.
// Runs right before bufferization, after the last canonicalization of tensors.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace nxc {

#define GEN_PASS_DEF_DISTINCTRESULTSPASS
#include "nxc/Transforms/Passes.h.inc"

namespace {

struct DistinctResultsPass : impl::DistinctResultsPassBase<DistinctResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      OpBuilder b(ret);
      llvm::SmallPtrSet<Value, 8> seen;
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = llvm::dyn_cast<RankedTensorType>(v.getType());
        if (!type || seen.insert(v).second) continue;
        Value empty = tensor::EmptyOp::create(b, ret.getLoc(), type.getShape(), type.getElementType());
        operand.set(linalg::CopyOp::create(b, ret.getLoc(), v, empty).getResult(0));
      }
    });
  }
};

} // namespace

} // namespace nxc
