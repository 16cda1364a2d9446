//===- NxToLinalg.cpp - the nx -> linalg/tensor/arith/math pass ----------===//
//
// Lowers every nx op to destination-style linalg on tensors, with signless
// integer types (signedness picks the arith op: divsi vs divui, extsi vs
// extui, ...). Element-wise ops and broadcasts become linalg.generic ops with
// parallel iterators, so that linalg's element-wise fusion can merge whole
// chains (softmax ends up as two reductions and one element-wise loop).
// Reductions and dot are linalg.generic ops with reduction iterators over a
// linalg.fill'ed accumulator. Float arithmetic carries `reassoc contract`
// fast-math flags so that LLVM may vectorize reductions; NaN and infinity
// semantics are kept (no nnan/ninf).
//
// Preconditions: Sema has made broadcasting and promotion explicit, so binary
// ops see operands of one type and shape.
//
// The patterns live by family beside this file (Helpers.h lists them):
// Elementwise.cpp, Reductions.cpp, Tensor.cpp, ControlFlow.cpp, over the
// shared Scalars.cpp and Structured.cpp.
//
//===----------------------------------------------------------------------===//
#include "Helpers.h"
#include "nxc/Conversion/Passes.h"
#include "../ScalarMath.h"
#include "nxc/Dialect/Nx/NxDialect.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;

namespace nxc {
namespace {

struct LowerNxToLinalgPass : public PassWrapper<LowerNxToLinalgPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerNxToLinalgPass)
  LowerNxToLinalgPass() = default;
  LowerNxToLinalgPass(const LowerNxToLinalgPass &other) : PassWrapper(other) {}
  Option<bool> blockedReductions{
      *this, "blocked-reductions",
      llvm::cl::desc("Long sums (f32), maxima and minima over trailing axes in blocks of at most 4096 elements, "
                     "then the blocks' results (f32 block sums added in f64), the blocks a parallel loop (the CPU "
                     "pipeline); otherwise one reduction, f32 sums wholly in f64"),
      llvm::cl::init(false)};
  Option<int64_t> longContraction{
      *this, "long-contraction",
      llvm::cl::desc("The shortest contraction that a dot with fewer than 16 columns runs innermost, as dot "
                     "products of contiguous rows (the right operand laid out as [columns, contraction] first)"),
      llvm::cl::init(256)};
  Option<bool> convAsDot{*this, "conv-as-dot",
                         llvm::cl::desc("Convolutions of f32/f64 with at least 8 input channels as one dot of the "
                                        "input's windows (im2col) and the kernel (the CPU pipeline)"),
                         llvm::cl::init(false)};
  StringRef getArgument() const override { return "nxc-lower-nx-to-linalg"; }
  StringRef getDescription() const override { return "Lower the nx dialect to linalg, tensor, arith and math"; }
  void getDependentDialects(DialectRegistry &r) const override {
    r.insert<arith::ArithDialect, func::FuncDialect, linalg::LinalgDialect, math::MathDialect, memref::MemRefDialect,
             scf::SCFDialect, tensor::TensorDialect>();
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    if (convAsDot) lowering::convolutionsAsDots(getOperation());
    TypeConverter tc;
    tc.addConversion([](Type t) { return t; });
    tc.addConversion([](IntegerType t) -> Type { return lowering::signless(t); });
    tc.addConversion([](RankedTensorType t) -> Type {
      return RankedTensorType::get(t.getShape(), lowering::signless(t.getElementType()));
    });
    ConversionTarget target(*ctx);
    target.addIllegalDialect<nx::NxDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect, math::MathDialect, memref::MemRefDialect,
                           scf::SCFDialect, tensor::TensorDialect>();
    target.addLegalOp<func::CallOp>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return tc.isSignatureLegal(f.getFunctionType()) && tc.isLegal(&f.getBody());
    });
    target.addDynamicallyLegalOp<func::ReturnOp>([&](func::ReturnOp r) { return tc.isLegal(r.getOperandTypes()); });
    RewritePatternSet patterns(ctx);
    lowering::populateElementwisePatterns(patterns, tc);
    lowering::populateReductionPatterns(patterns, tc, blockedReductions.getValue(), longContraction.getValue());
    lowering::populateTensorPatterns(patterns, tc);
    lowering::populateControlFlowPatterns(patterns, tc);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, tc);
    populateReturnOpTypeConversionPattern(patterns, tc);
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns)))) signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createLowerNxToLinalgPass() { return std::make_unique<LowerNxToLinalgPass>(); }

} // namespace nxc
