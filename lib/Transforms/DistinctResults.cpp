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
namespace {

struct DistinctResultsPass : public PassWrapper<DistinctResultsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DistinctResultsPass)
  StringRef getArgument() const override { return "nxc-distinct-results"; }
  StringRef getDescription() const override { return "Copy repeated return operands so each result has its own buffer"; }
  void getDependentDialects(DialectRegistry &r) const override {
    r.insert<linalg::LinalgDialect, tensor::TensorDialect>();
  }

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

std::unique_ptr<Pass> createDistinctResultsPass() { return std::make_unique<DistinctResultsPass>(); }

} // namespace nxc
