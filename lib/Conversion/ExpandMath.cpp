//===- ExpandMath.cpp - math ops without libm -----------------------------===//
//
// Rewrites math dialect ops into arith: first the expansions (sinh via exp,
// floor/ceil/round via integer conversion, ...), then the
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

#include <cmath>

using namespace mlir;

namespace nxc {
namespace {

/// Rounds `x` toward zero through an integer conversion, which every target
/// has: |x| >= 2^mantissa (already integral), NaN and infinities pass through,
/// and the sign of zero is kept.
Value truncViaInteger(PatternRewriter &rw, Location l, Value x) {
  auto ft = llvm::cast<FloatType>(x.getType());
  unsigned w = ft.getWidth();
  Type it = rw.getIntegerType(w);
  double limit = std::ldexp(1.0, (int)ft.getFPMantissaWidth() - 1);
  Value t = arith::SIToFPOp::create(rw, l, ft, arith::FPToSIOp::create(rw, l, it, x));
  t = math::CopySignOp::create(rw, l, t, x);
  Value ax = math::AbsFOp::create(rw, l, x);
  Value small = arith::CmpFOp::create(rw, l, arith::CmpFPredicate::OLT, ax,
                                      arith::ConstantOp::create(rw, l, ft, rw.getFloatAttr(ft, limit)));
  return arith::SelectOp::create(rw, l, small, t, x);
}

struct TruncToInteger : OpRewritePattern<math::TruncOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::TruncOp op, PatternRewriter &rw) const override {
    if (!llvm::isa<FloatType>(op.getType())) return failure();
    rw.replaceOp(op, truncViaInteger(rw, op.getLoc(), op.getOperand()));
    return success();
  }
};

/// floor(x) = t - 1 where t = trunc(x) > x, else t; ceil(x) = t + 1 where
/// t < x, else t.
template <typename OpTy, bool Up> struct RoundToInteger : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rw) const override {
    if (!llvm::isa<FloatType>(op.getType())) return failure();
    Location l = op.getLoc();
    Value x = op.getOperand();
    Value t = truncViaInteger(rw, l, x);
    Value one = arith::ConstantOp::create(rw, l, x.getType(), rw.getFloatAttr(x.getType(), 1.0));
    Value off = arith::CmpFOp::create(rw, l, Up ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::OGT, t, x);
    Value moved = Up ? (Value)arith::AddFOp::create(rw, l, t, one) : (Value)arith::SubFOp::create(rw, l, t, one);
    rw.replaceOpWithNewOp<arith::SelectOp>(op, off, moved, t);
    return success();
  }
};
using FloorToInteger = RoundToInteger<math::FloorOp, false>;
using CeilToInteger = RoundToInteger<math::CeilOp, true>;

/// round(x): half away from zero, as t + sign(x) where |x - t| >= 0.5 for
/// t = trunc(x) (adding 0.5 first would round 0.49999997 up).
struct RoundHalfAway : OpRewritePattern<math::RoundOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::RoundOp op, PatternRewriter &rw) const override {
    if (!llvm::isa<FloatType>(op.getType())) return failure();
    Location l = op.getLoc();
    Value x = op.getOperand();
    Type ft = x.getType();
    Value t = truncViaInteger(rw, l, x);
    Value frac = math::AbsFOp::create(rw, l, arith::SubFOp::create(rw, l, x, t));
    Value up = arith::CmpFOp::create(rw, l, arith::CmpFPredicate::OGE, frac,
                                     arith::ConstantOp::create(rw, l, ft, rw.getFloatAttr(ft, 0.5)));
    Value step = math::CopySignOp::create(rw, l, arith::ConstantOp::create(rw, l, ft, rw.getFloatAttr(ft, 1.0)), x);
    rw.replaceOpWithNewOp<arith::SelectOp>(op, up, arith::AddFOp::create(rw, l, t, step), t);
    return success();
  }
};

/// nxc's rounding expansions take precedence over MLIR's (which do not keep
/// NaN and infinities for ceil).
void addRoundingPatterns(RewritePatternSet &p) {
  p.add<TruncToInteger, FloorToInteger, CeilToInteger, RoundHalfAway>(p.getContext(), PatternBenefit(10));
}

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
      // Only ops without a good approximation of their own are expanded
      // (tanh, expm1, ... keep theirs: their textbook expansions cancel
      // near 0).
      RewritePatternSet p(&getContext());
      addRoundingPatterns(p);
      math::populateExpansionPatterns(p, {"tan", "cosh", "fpowi", "exp2", "roundeven", "rsqrt"});
      if (failed(applyPatternsGreedily(getOperation(), std::move(p), config))) return signalPassFailure();
    }
    {
      RewritePatternSet p(&getContext());
      populateMathPolynomialApproximationPatterns(p);
      if (failed(applyPatternsGreedily(getOperation(), std::move(p), config))) return signalPassFailure();
    }
    {
      // The approximations introduce floor/round; expand those too, and the
      // rounding ops that some targets can only do with a libm call.
      RewritePatternSet p(&getContext());
      addRoundingPatterns(p);
      math::populateExpansionPatterns(p, {"fma", "roundeven", "exp2"});
      if (failed(applyPatternsGreedily(getOperation(), std::move(p), config))) return signalPassFailure();
    }
  }
};

} // namespace

std::unique_ptr<Pass> createExpandMathPass() { return std::make_unique<ExpandMathPass>(); }

void registerConversionPasses() {
  registerPass(createExpandMathPass);
  registerPass(createExpandBF16Pass);
  registerPass(createLowerNxToLinalgPass);
}

} // namespace nxc
