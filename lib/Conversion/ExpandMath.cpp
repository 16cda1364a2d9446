//===- ExpandMath.cpp - math ops without libm -----------------------------===//
//
// Rewrites math dialect ops into arith: first the expansions (sinh via exp,
// floor/ceil/round via integer conversion, powf via exp/log, ...), then the
// polynomial approximations of exp, log, tanh, erf, sin, cos, atan and friends.
// After this pass f32 code calls no libm function, so a generated shared
// object depends on nothing beyond the C library.
//
//===----------------------------------------------------------------------===//
#include "nxc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace nxc {
namespace {

struct ExpandMathPass : public PassWrapper<ExpandMathPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExpandMathPass)
  StringRef getArgument() const override { return "nxc-expand-math"; }
  StringRef getDescription() const override { return "Expand and approximate math ops so that f32 code needs no libm"; }
  void getDependentDialects(DialectRegistry &r) const override {
    r.insert<arith::ArithDialect, math::MathDialect, vector::VectorDialect, x86vector::X86VectorDialect>();
  }

  void runOnOperation() override {
    GreedyRewriteConfig config;
    config.setMaxIterations(16);
    // Each stage in its own greedy run, so that no pattern set can loop.
    {
      RewritePatternSet p(&getContext());
      math::populateExpansionPatterns(p);
      if (failed(applyPatternsGreedily(getOperation(), std::move(p), config))) return signalPassFailure();
    }
    {
      RewritePatternSet p(&getContext());
      populateMathPolynomialApproximationPatterns(p);
      if (failed(applyPatternsGreedily(getOperation(), std::move(p), config))) return signalPassFailure();
    }
    {
      // The approximations may introduce floor/round/fma; expand those too.
      RewritePatternSet p(&getContext());
      math::populateExpansionPatterns(p);
      if (failed(applyPatternsGreedily(getOperation(), std::move(p), config))) return signalPassFailure();
    }
  }
};

} // namespace

std::unique_ptr<Pass> createExpandMathPass() { return std::make_unique<ExpandMathPass>(); }

void registerConversionPasses() {
  PassRegistration<ExpandMathPass>();
  registerPass([] { return createLowerNxToLinalgPass(); });
}

} // namespace nxc
