//===- CopiesToLinalg.cpp - memref.copy as linalg.copy --------------------===//
//
// memref.copy lowers to a call of the C library's memcpy; as linalg.copy it
// becomes a plain loop, so generated code needs no C library at all (bare
// metal). LLVM still vectorizes the loop.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace nxc {
namespace {

struct CopiesToLinalgPass : public PassWrapper<CopiesToLinalgPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CopiesToLinalgPass)
  StringRef getArgument() const override { return "nxc-copies-to-linalg"; }
  StringRef getDescription() const override { return "Rewrite memref.copy into linalg.copy"; }
  void getDependentDialects(DialectRegistry &r) const override { r.insert<linalg::LinalgDialect>(); }

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp c) { copies.push_back(c); });
    for (memref::CopyOp c : copies) {
      OpBuilder b(c);
      linalg::CopyOp::create(b, c.getLoc(), c.getSource(), c.getTarget());
      c.erase();
    }
  }
};

} // namespace

std::unique_ptr<Pass> createCopiesToLinalgPass() { return std::make_unique<CopiesToLinalgPass>(); }


} // namespace nxc
