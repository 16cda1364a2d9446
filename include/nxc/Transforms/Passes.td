//===- Passes.td - nxc's transformations on linalg ---------*- tablegen -*-===//
//
// The passes of lib/Transforms. `-gen-pass-decls` makes their base classes,
// their create functions and their registration (`nxc-opt --help` lists them).
//
//===----------------------------------------------------------------------===//

#ifndef NXC_TRANSFORMS_PASSES
#define NXC_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def FuseElementwisePass : Pass<"nxc-fuse-elementwise"> {
  let summary = "Fuse element-wise linalg producers into all their users";
  let description = [{
    Element-wise fusion that also fuses producers with several users:
    recomputing cheap element-wise work in each consumer is faster than a
    round trip through memory, and it removes the temporary buffer altogether
    (softmax needs no scratch memory at all).
  }];
  let dependentDialects = ["mlir::affine::AffineDialect", "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def AllocsToWorkspacePass : Pass<"nxc-allocs-to-workspace", "mlir::ModuleOp"> {
  let summary = "Place all temporaries in a caller-owned workspace argument";
  let description = [{
    Moves every temporary buffer of a public function into one trailing
    `memref<SIZExi8>` workspace argument, reusing bytes between buffers whose
    lifetimes do not overlap, and records `nxc.workspace_size`.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def CopiesToLinalgPass : Pass<"nxc-copies-to-linalg"> {
  let summary = "Rewrite memref.copy into linalg.copy";
  let description = [{
    linalg.copy lowers to loops instead of a memcpy call.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def DistinctResultsPass : Pass<"nxc-distinct-results", "mlir::func::FuncOp"> {
  let summary = "Copy repeated return operands so each result has its own buffer";
  let description = [{
    Each result becomes its own out-parameter after bufferization, so every
    repeated return operand gets its own copy first.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

#endif // NXC_TRANSFORMS_PASSES
