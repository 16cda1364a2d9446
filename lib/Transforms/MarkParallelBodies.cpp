//===- MarkParallelBodies.cpp - parallel bodies for the thread pool -------===//
//
// nxc-outline-parallel-loops marks the functions it makes with
// `nxc.parallel_body = THREADS`, and nxc-allocs-to-workspace gives them
// `nxc.workspace_size`. Both must survive into LLVM IR, where the thread
// pool's dispatch (lib/Pipeline/ParallelDispatch.cpp) finds the bodies: this
// pass writes them as LLVM function attributes (`passthrough`:
// "nxc-parallel-body"="THREADS", "nxc-thread-workspace"="BYTES").
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace nxc {

#define GEN_PASS_DEF_MARKPARALLELBODIESPASS
#include "nxc/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

struct MarkParallelBodiesPass : impl::MarkParallelBodiesPassBase<MarkParallelBodiesPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      auto threads = fn->getAttrOfType<IntegerAttr>(kParallelBodyAttr);
      if (!threads) continue;
      auto size = fn->getAttrOfType<IntegerAttr>(kWorkspaceSizeAttr);
      auto pair = [&](const char *key, int64_t v) {
        return b.getArrayAttr({b.getStringAttr(key), b.getStringAttr(std::to_string(v))});
      };
      fn->setAttr("passthrough", b.getArrayAttr({pair(kParallelBodyFnAttr, threads.getInt()),
                                                 pair(kThreadWorkspaceFnAttr, size ? size.getInt() : 0)}));
    }
  }
};

} // namespace
} // namespace nxc
