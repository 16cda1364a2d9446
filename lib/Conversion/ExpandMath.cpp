//===- ExpandMath.cpp - math ops without libm -----------------------------===//
//
// Rewrites math dialect ops into arith: first the expansions (f32 exp by
// nxc's own polynomial, floor/ceil/round via integer conversion, ...), then
// MLIR's polynomial approximations of log, tanh, erf and friends, and pow
// of f32 values computed in f64 (ScalarMath.h). After this pass f32 code
// calls no libm function (erf_inv and Nx.Random.gumbel aside: they take
// f64 logarithms), so a generated shared object depends on nothing beyond
// the C library.
//
//===----------------------------------------------------------------------===//
#include "nxc/Conversion/Passes.h"
#include "ScalarMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Matchers.h"
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

/// exp of f32: n = round(x / ln2), r = x - n ln2 (ln2 in two parts, the
/// first short enough that n * hi is exact), e^r by a polynomial of degree 6
/// (|r| <= ln2/2: 5.5e-9 relative; Horner's scheme, with fused
/// multiply-adds where the target has them), and 2^n applied as two exact powers of
/// two, so that results below 2^-126 come out subnormal, rounded once by the
/// last product, instead of flushed to zero (MLIR's approximation flushes
/// them). Within 1.2 ulp everywhere, and without selects in the range.
struct ExpF32 : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ExpOp op, PatternRewriter &rw) const override {
    if (!op.getType().isF32()) return failure();
    Location l = op.getLoc();
    Value x = op.getOperand();
    Type f32 = rw.getF32Type(), i32 = rw.getI32Type();
    auto f = [&](double v) -> Value { return arith::ConstantOp::create(rw, l, f32, rw.getF32FloatAttr((float)v)); };
    auto i = [&](int v) -> Value { return arith::ConstantOp::create(rw, l, i32, rw.getI32IntegerAttr(v)); };
    auto mul = [&](Value a, Value b) -> Value { return arith::MulFOp::create(rw, l, a, b); };
    // Clamped with compares (maxnum/minnum are libm calls on some targets);
    // NaN passes them. The low bound gives n = -253, n1 = -127, whose power
    // of two has the bits of +0.0: huge negative arguments (masked entries
    // of a softmax, -inf) come out 0 from products by zero, where a product
    // that underflows to 0 would cost a microcode assist per vector (a row
    // of softmax f32[1000] with every other entry masked: 1.11 -> 0.61 us).
    Value lo = f(-175.5), hi = f(100.0);
    Value xc = arith::SelectOp::create(rw, l, arith::CmpFOp::create(rw, l, arith::CmpFPredicate::OLT, x, lo), lo, x);
    xc = arith::SelectOp::create(rw, l, arith::CmpFOp::create(rw, l, arith::CmpFPredicate::OGT, xc, hi), hi, xc);
    // No call below creates two ops in its arguments: the order of creation
    // (and so of the printed IR) must not depend on the C++ compiler's order
    // of evaluating arguments.
    // Steps marked `contract` may become fused multiply-adds where the target
    // has them (one rounding instead of two: as accurate, and half the
    // instructions).
    auto contract = arith::FastMathFlagsAttr::get(rw.getContext(), arith::FastMathFlags::contract);
    Value scaled = arith::MulFOp::create(rw, l, xc, f(M_LOG2E), contract);
    // n = round(x log2 e) by adding 1.5 * 2^23: the sum's last mantissa bits
    // are n (|scaled| < 2^22), and subtracting it again gives n as a float.
    Value magic = f(12582912.0);
    Value shifted = arith::AddFOp::create(rw, l, scaled, magic, contract);
    Value nf = arith::SubFOp::create(rw, l, shifted, magic);
    Value shiftedBits = arith::BitcastOp::create(rw, l, i32, shifted);
    // r = x - n ln2 in two steps (Cody-Waite): n * ln2Hi is exact, so the
    // first step is exact with or without a fused multiply-add.
    Value ln2Hi = f(0.693145751953125), ln2Lo = f(1.428606765330187e-06);
    Value nHi = arith::MulFOp::create(rw, l, nf, ln2Hi, contract);
    Value rHi = arith::SubFOp::create(rw, l, xc, nHi, contract);
    Value nLo = arith::MulFOp::create(rw, l, nf, ln2Lo, contract);
    Value r = arith::SubFOp::create(rw, l, rHi, nLo, contract);
    // 1 + r + r^2 q(r), q of degree 4 fitted to (e^r - 1 - r) / r^2 at
    // Chebyshev nodes of [-ln2/2, ln2/2]: 5.5e-9 relative with these f32
    // coefficients, one multiply-add fewer than Taylor's degree 7.
    Value p = f(0x1.6c350ep-10);
    for (double k : {0x1.1246eap-7, 0x1.555638p-5, 0x1.55547ep-3, 0x1.fffffep-2, 1.0, 1.0}) {
      Value c = f(k);
      Value pr = arith::MulFOp::create(rw, l, p, r, contract);
      p = arith::AddFOp::create(rw, l, pr, c, contract);
    }
    // 2^n as 2^n1 * 2^n2, n1 = floor(n / 2), n2 = n - n1, built from the
    // bits S = 0x4B400000 + n of `shifted`: shifting left by 23 drops the
    // magic number's bits (it is even, and its low 21 bits are zero), so
    // (S >> 1) << 23 = n1 << 23 and S << 23 = n << 23. With B = 127 << 23,
    // 2^n1 has the bits (n1 << 23) + B and 2^n2 the bits (n << 23) + 2B -
    // bits(2^n1): six integer operations.
    Value one = i(1), shift = i(23), bias = i(127 << 23), twoBiases = i(254 << 23);
    Value n1Bits = arith::ShLIOp::create(rw, l, arith::ShRSIOp::create(rw, l, shiftedBits, one), shift);
    Value p1Bits = arith::AddIOp::create(rw, l, n1Bits, bias);
    Value nBits = arith::ShLIOp::create(rw, l, shiftedBits, shift);
    Value p2Bits = arith::SubIOp::create(rw, l, arith::AddIOp::create(rw, l, nBits, twoBiases), p1Bits);
    Value p1 = arith::BitcastOp::create(rw, l, f32, p1Bits);
    Value p2 = arith::BitcastOp::create(rw, l, f32, p2Bits);
    // NaN needs no case of its own: it passes the clamps, so r and p are NaN,
    // and NaN times any power of two is NaN.
    rw.replaceOp(op, mul(mul(p, p1), p2));
    return success();
  }
};

/// pow(x, n) of an f32 (or narrower) x widened to f64, for a constant
/// integer n in [-4, 4] other than 0 and 1, as products (and a quotient) in
/// f64: x^2 is exact there, x^3 and x^4 round once at 2^-53, 1 / x^n once
/// more, so the f32 result is the one libm's pow gives but for rare double
/// roundings at f32 midpoints, as with pow itself. Signed zeros, infinities
/// and NaN come out as pow's. A call per element otherwise (x ** 3: ~15 ns).
struct SmallIntegerPowerOfNarrow : OpRewritePattern<math::PowFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::PowFOp op, PatternRewriter &rw) const override {
    auto ext = op.getLhs().getDefiningOp<arith::ExtFOp>();
    if (!ext || !getElementTypeOrSelf(op.getType()).isF64() ||
        getElementTypeOrSelf(ext.getIn().getType()).getIntOrFloatBitWidth() > 32)
      return failure();
    Attribute attr;
    if (!matchPattern(op.getRhs(), m_Constant(&attr))) return failure();
    if (auto splat = llvm::dyn_cast<SplatElementsAttr>(attr)) attr = splat.getSplatValue<Attribute>();
    auto exponent = llvm::dyn_cast<FloatAttr>(attr);
    if (!exponent) return failure();
    double n = exponent.getValueAsDouble();
    if (n != std::trunc(n) || std::fabs(n) > 4 || n == 0 || n == 1) return failure();
    Location l = op.getLoc();
    Value x = op.getLhs(), p = x;
    if (int k = (int)std::fabs(n); k >= 2) {
      Value x2 = arith::MulFOp::create(rw, l, x, x);
      p = k == 2 ? x2 : arith::MulFOp::create(rw, l, x2, k == 3 ? x : x2).getResult();
    }
    if (n < 0) p = arith::DivFOp::create(rw, l, createScalarOrSplatConstant(rw, l, op.getType(), APFloat(1.0)), p);
    rw.replaceOp(op, p);
    return success();
  }
};

/// pow of f32 (or narrower) values computed in f64 and rounded back, as
/// nx-to-linalg writes it: 2^(y log2|x|) from nxc's own f64 polynomials
/// (powOfNarrowInF64) instead of libm's pow per element. The f64 result
/// must only be rounded to a narrow type: it is not an f64 pow.
struct PowOfNarrow : OpRewritePattern<math::PowFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::PowFOp op, PatternRewriter &rw) const override {
    if (!op.getType().isF64()) return failure();
    auto narrow = [](Value v) {
      if (auto ext = v.getDefiningOp<arith::ExtFOp>()) return ext.getIn().getType().getIntOrFloatBitWidth() <= 32;
      // A constant operand (folded from a widened one) must be an f32 value.
      FloatAttr c;
      if (!matchPattern(v, m_Constant(&c))) return false;
      bool lost = false;
      APFloat f = c.getValue();
      f.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      return !lost;
    };
    if (!narrow(op.getLhs()) || !narrow(op.getRhs())) return failure();
    for (Operation *user : op->getUsers()) {
      auto trunc = llvm::dyn_cast<arith::TruncFOp>(user);
      if (!trunc || trunc.getType().getIntOrFloatBitWidth() > 32) return failure();
    }
    rw.replaceOp(op, powOfNarrowInF64(rw, op.getLoc(), op.getLhs(), op.getRhs()));
    return success();
  }
};

/// nxc's own expansions (rounding, f32 exp, powers of narrow values) take
/// precedence over MLIR's (which do not keep NaN and infinities for ceil).
void addOwnExpansions(RewritePatternSet &p) {
  p.add<TruncToInteger, FloorToInteger, CeilToInteger, RoundHalfAway, ExpF32, SmallIntegerPowerOfNarrow>(
      p.getContext(), PatternBenefit(10));
  p.add<PowOfNarrow>(p.getContext(), PatternBenefit(9));
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
      addOwnExpansions(p);
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
      addOwnExpansions(p);
      math::populateExpansionPatterns(p, {"fma", "roundeven", "exp2"});
      if (failed(applyPatternsGreedily(getOperation(), std::move(p), config))) return signalPassFailure();
    }
  }
};

} // namespace

std::unique_ptr<Pass> createExpandMathPass() { return std::make_unique<ExpandMathPass>(); }

void registerConversionPasses() {
  registerPass(createExpandMathPass);
  registerPass(createExpandNarrowFloatsPass);
  registerPass(createLowerNxToLinalgPass);
}

} // namespace nxc
