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

#define GEN_PASS_DEF_COPIESTOLINALGPASS
#include "nxc/Transforms/Passes.h.inc"

namespace {

struct CopiesToLinalgPass : impl::CopiesToLinalgPassBase<CopiesToLinalgPass> {
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

} // namespace nxc
