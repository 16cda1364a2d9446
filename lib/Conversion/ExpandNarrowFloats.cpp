//===- ExpandNarrowFloats.cpp - bf16 and f8 in f32 and integer ops --------===//
//
// CPUs have no bf16 or f8 arithmetic. LLVM lowers every rounding into bf16 to
// a call of __truncsfbf2/__truncdfbf2, which older compiler runtimes (GCC
// 12's libgcc among them) do not have: a generated library would not link,
// and the JIT would not load it; and it has no 8-bit float type at all. This
// pass computes everything on bf16 and on the f8 types (f8 E5M2 and
// f8_e4m3fn) in f32 and writes the conversions in integer arithmetic
// (bf16 -> f32 is a shift, f32 -> bf16 rounds to nearest even; the f8 types
// round as Nx does, see TruncToF8), each rounded once:
//
//   f64 -> bf16      f64 -> f32 rounded to odd, then f32 -> bf16 (rounding to
//                    odd first makes the second rounding the only one that
//                    counts: f32 has more than twice bf16's precision)
//   iN -> bf16       iN -> f64 exactly (64-bit integers keep a sticky bit in
//                    place of the bits f64 cannot hold), then as f64
//   bf16 -> f64      bf16 -> f32 -> f64 (both exact)
//   arith, math      computed in f32, each result rounded once (f32 has more
//                    than twice bf16's precision, so +, -, *, / and sqrt are
//                    correctly rounded)
//
//===----------------------------------------------------------------------===//
#include "nxc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace nxc {
namespace {

bool isBF16(Type t) { return llvm::isa<BFloat16Type>(t); }
bool isF8(Type t) { return llvm::isa<Float8E5M2Type, Float8E4M3FNType>(t); }
/// The types computed in f32 here: bf16 and the f8 types.
bool isNarrow(Type t) { return isBF16(t) || isF8(t); }

Value intConst(PatternRewriter &rw, Location l, Type t, uint64_t v) {
  return arith::ConstantOp::create(rw, l, t, rw.getIntegerAttr(t, APInt(t.getIntOrFloatBitWidth(), v)));
}

/// f64 -> f32 rounded to odd: truncated toward zero, with the last bit set
/// when the result is inexact. NaN stays NaN; overflow gives the largest
/// finite f32 (odd), which f32 -> bf16 then rounds to infinity as it must.
Value truncToF32Odd(PatternRewriter &rw, Location l, Value x) {
  Type f32 = rw.getF32Type(), i32 = rw.getI32Type();
  Value r = arith::TruncFOp::create(rw, l, f32, x);
  Value back = arith::ExtFOp::create(rw, l, x.getType(), r);
  Value bits = arith::BitcastOp::create(rw, l, i32, r);
  Value away = arith::CmpFOp::create(rw, l, arith::CmpFPredicate::OGT, math::AbsFOp::create(rw, l, back),
                                     math::AbsFOp::create(rw, l, x));
  bits = arith::SelectOp::create(rw, l, away, arith::SubIOp::create(rw, l, bits, intConst(rw, l, i32, 1)), bits);
  Value inexact = arith::CmpFOp::create(rw, l, arith::CmpFPredicate::ONE, back, x);
  bits = arith::SelectOp::create(rw, l, inexact, arith::OrIOp::create(rw, l, bits, intConst(rw, l, i32, 1)), bits);
  return arith::BitcastOp::create(rw, l, f32, bits);
}

/// arith.truncf f32 -> bf16, rounded to nearest even in integer arithmetic;
/// NaN stays NaN (quiet, sign kept); overflow rounds to infinity.
/// arith.truncf f64 -> bf16 rounds to odd into f32 first.
struct TruncToBF16 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op, PatternRewriter &rw) const override {
    if (!isBF16(op.getType())) return failure();
    Location l = op.getLoc();
    Value x = op.getIn();
    if (x.getType().isF64()) {
      rw.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), truncToF32Odd(rw, l, x));
      return success();
    }
    if (!x.getType().isF32()) return failure();
    Type i32 = rw.getI32Type(), i16 = rw.getI16Type();
    Value bits = arith::BitcastOp::create(rw, l, i32, x);
    Value c16 = intConst(rw, l, i32, 16);
    Value high = arith::ShRUIOp::create(rw, l, bits, c16);
    Value bias = arith::AddIOp::create(rw, l, arith::AndIOp::create(rw, l, high, intConst(rw, l, i32, 1)),
                                       intConst(rw, l, i32, 0x7FFF));
    Value rounded = arith::ShRUIOp::create(rw, l, arith::AddIOp::create(rw, l, bits, bias), c16);
    Value quietNan = arith::OrIOp::create(rw, l, high, intConst(rw, l, i32, 0x40));
    Value isNan = arith::CmpFOp::create(rw, l, arith::CmpFPredicate::UNO, x, x);
    Value r = arith::SelectOp::create(rw, l, isNan, quietNan, rounded);
    rw.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), arith::TruncIOp::create(rw, l, i16, r));
    return success();
  }
};

/// arith.extf bf16 -> f32 (a shift) and bf16 -> f64 (through f32; both exact).
struct ExtFromBF16 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op, PatternRewriter &rw) const override {
    if (!isBF16(op.getIn().getType())) return failure();
    Location l = op.getLoc();
    Type i32 = rw.getI32Type(), f32 = rw.getF32Type();
    Value bits = arith::ExtUIOp::create(rw, l, i32, arith::BitcastOp::create(rw, l, rw.getI16Type(), op.getIn()));
    Value f = arith::BitcastOp::create(rw, l, f32, arith::ShLIOp::create(rw, l, bits, intConst(rw, l, i32, 16)));
    if (op.getType().isF32())
      rw.replaceOp(op, f);
    else
      rw.replaceOpWithNewOp<arith::ExtFOp>(op, op.getType(), f);
    return success();
  }
};

/// arith.sitofp / arith.uitofp iN -> bf16, through an exact f64.
template <typename OpTy, bool Signed> struct IntToBF16 : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rw) const override {
    if (!isNarrow(op.getType())) return failure();
    Location l = op.getLoc();
    Value x = op.getIn();
    Type it = x.getType(), f64 = rw.getF64Type();
    unsigned w = it.getIntOrFloatBitWidth();
    Value d;
    if (w <= 32) {
      d = Signed ? (Value)arith::SIToFPOp::create(rw, l, f64, x) : (Value)arith::UIToFPOp::create(rw, l, f64, x);
    } else {
      // |x| as an unsigned 64-bit magnitude; from 2^53 up, bits 0-11 become
      // one sticky bit at bit 11, leaving at most 53 significant bits.
      Value zero = intConst(rw, l, it, 0);
      Value neg = Signed ? (Value)arith::CmpIOp::create(rw, l, arith::CmpIPredicate::slt, x, zero) : Value();
      Value m = Signed ? (Value)arith::SelectOp::create(rw, l, neg, arith::SubIOp::create(rw, l, zero, x), x) : x;
      Value low = arith::AndIOp::create(rw, l, m, intConst(rw, l, it, 0xFFF));
      Value sticky = arith::SelectOp::create(rw, l, arith::CmpIOp::create(rw, l, arith::CmpIPredicate::ne, low, zero),
                                             intConst(rw, l, it, 0x800), zero);
      Value kept =
          arith::OrIOp::create(rw, l, arith::AndIOp::create(rw, l, m, intConst(rw, l, it, ~uint64_t(0xFFF))), sticky);
      Value big = arith::CmpIOp::create(rw, l, arith::CmpIPredicate::uge, m, intConst(rw, l, it, uint64_t(1) << 53));
      // Halved before the signed conversion, so that 2^63 and up stay positive
      // (bit 0 of `kept` is zero, so the halving is exact).
      Value halfBig = arith::SIToFPOp::create(rw, l, f64, arith::ShRUIOp::create(rw, l, kept, intConst(rw, l, it, 1)));
      Value dBig = arith::AddFOp::create(rw, l, halfBig, halfBig);
      Value dSmall = arith::SIToFPOp::create(rw, l, f64, m);
      d = arith::SelectOp::create(rw, l, big, dBig, dSmall);
      if (Signed) d = arith::SelectOp::create(rw, l, neg, arith::NegFOp::create(rw, l, d), d);
    }
    rw.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), d);
    return success();
  }
};

Value f32Const(PatternRewriter &rw, Location l, float v) {
  return arith::ConstantOp::create(rw, l, rw.getF32Type(), rw.getF32FloatAttr(v));
}

/// arith.truncf to f8 (E5M2) or f8_e4m3fn from any wider float, as Nx's
/// Nx.Floating.dump_f8 and dump_f8_e4m3fn round (lib/Tensor/Half.cpp has the
/// same rules for constants):
///   E5M2      rounded to f16 (nearest even, overflow to infinity), then the
///             f16's high byte (the low one truncated); NaN is 0x7E;
///   E4M3FN    clamped to [-448, 448], 3 mantissa bits rounded half away from
///             zero and capped at 7 (at exponent 15 at 6), below 2^-6 as a
///             multiple of 2^-9 capped at 7; zeros keep their sign, NaN is
///             0x7F.
/// f64 is rounded to odd into f32 first, which keeps every rounding decision
/// of both rules (f32 has more than twice f16's precision, and a value
/// rounded to odd is never mistaken for a tie or a power of two).
struct TruncToF8 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op, PatternRewriter &rw) const override {
    Type to = op.getType();
    if (!isF8(to)) return failure();
    Location l = op.getLoc();
    Type f32 = rw.getF32Type(), i32 = rw.getI32Type(), i8 = rw.getI8Type();
    Value x = op.getIn();
    if (x.getType().isF64())
      x = truncToF32Odd(rw, l, x);
    else if (!x.getType().isF32())
      x = arith::ExtFOp::create(rw, l, f32, x); // f16, bf16: exact
    Value isNan = arith::CmpFOp::create(rw, l, arith::CmpFPredicate::UNO, x, x);
    Value byte;
    if (llvm::isa<Float8E5M2Type>(to)) {
      Value h = arith::BitcastOp::create(rw, l, rw.getI16Type(), arith::TruncFOp::create(rw, l, rw.getF16Type(), x));
      Value high =
          arith::TruncIOp::create(rw, l, i8, arith::ShRUIOp::create(rw, l, h, intConst(rw, l, h.getType(), 8)));
      byte = arith::SelectOp::create(rw, l, isNan, intConst(rw, l, i8, 0x7E), high);
    } else {
      Value bits = arith::BitcastOp::create(rw, l, i32, x);
      Value sign = arith::AndIOp::create(rw, l, arith::ShRUIOp::create(rw, l, bits, intConst(rw, l, i32, 24)),
                                         intConst(rw, l, i32, 0x80));
      Value a = math::AbsFOp::create(
          rw, l,
          arith::MinimumFOp::create(rw, l, arith::MaximumFOp::create(rw, l, x, f32Const(rw, l, -448.0f)),
                                    f32Const(rw, l, 448.0f)));
      Value aBits = arith::BitcastOp::create(rw, l, i32, a);
      // Normal: the f32 exponent is floor(log2 a) (a >= 2^-6 here).
      Value e = arith::SubIOp::create(rw, l, arith::ShRUIOp::create(rw, l, aBits, intConst(rw, l, i32, 23)),
                                      intConst(rw, l, i32, 127));
      Value sig = arith::BitcastOp::create(
          rw, l, f32,
          arith::OrIOp::create(rw, l, arith::AndIOp::create(rw, l, aBits, intConst(rw, l, i32, 0x7FFFFF)),
                               intConst(rw, l, i32, 0x3F800000)));
      Value frac =
          arith::MulFOp::create(rw, l, arith::SubFOp::create(rw, l, sig, f32Const(rw, l, 1.0f)), f32Const(rw, l, 8.0f));
      Value m = arith::FPToSIOp::create(rw, l, i32, math::RoundOp::create(rw, l, frac));
      Value biased = arith::AddIOp::create(rw, l, e, intConst(rw, l, i32, 7));
      Value cap = arith::SelectOp::create(
          rw, l, arith::CmpIOp::create(rw, l, arith::CmpIPredicate::eq, biased, intConst(rw, l, i32, 15)),
          intConst(rw, l, i32, 6), intConst(rw, l, i32, 7));
      m = arith::MinSIOp::create(rw, l, m, cap);
      Value normal = arith::OrIOp::create(rw, l, arith::ShLIOp::create(rw, l, biased, intConst(rw, l, i32, 3)), m);
      // Below 2^-6: a multiple of 2^-9, capped at 7.
      Value sub = arith::FPToSIOp::create(
          rw, l, i32, math::RoundOp::create(rw, l, arith::MulFOp::create(rw, l, a, f32Const(rw, l, 512.0f))));
      sub = arith::MinSIOp::create(rw, l, sub, intConst(rw, l, i32, 7));
      Value small = arith::CmpFOp::create(rw, l, arith::CmpFPredicate::OLT, a, f32Const(rw, l, 0.015625f));
      Value r = arith::OrIOp::create(rw, l, sign, arith::SelectOp::create(rw, l, small, sub, normal));
      byte = arith::SelectOp::create(rw, l, isNan, intConst(rw, l, i8, 0x7F), arith::TruncIOp::create(rw, l, i8, r));
    }
    rw.replaceOpWithNewOp<arith::BitcastOp>(op, to, byte);
    return success();
  }
};

/// arith.extf from f8 (E5M2: the high byte of an f16) or f8_e4m3fn (decoded:
/// exponent 0 is m * 2^-9, S.1111.111 NaN), both exact in f32.
struct ExtFromF8 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op, PatternRewriter &rw) const override {
    Type from = op.getIn().getType();
    if (!isF8(from)) return failure();
    Location l = op.getLoc();
    Type f32 = rw.getF32Type(), i32 = rw.getI32Type();
    Value byte = arith::BitcastOp::create(rw, l, rw.getI8Type(), op.getIn());
    Value f;
    if (llvm::isa<Float8E5M2Type>(from)) {
      Value h = arith::ShLIOp::create(rw, l, arith::ExtUIOp::create(rw, l, rw.getI16Type(), byte),
                                      intConst(rw, l, rw.getI16Type(), 8));
      f = arith::ExtFOp::create(rw, l, f32, (Value)arith::BitcastOp::create(rw, l, rw.getF16Type(), h));
    } else {
      Value b = arith::ExtUIOp::create(rw, l, i32, byte);
      Value sign = arith::ShLIOp::create(rw, l, arith::AndIOp::create(rw, l, b, intConst(rw, l, i32, 0x80)),
                                         intConst(rw, l, i32, 24));
      Value exp = arith::AndIOp::create(rw, l, arith::ShRUIOp::create(rw, l, b, intConst(rw, l, i32, 3)),
                                        intConst(rw, l, i32, 15));
      Value man = arith::AndIOp::create(rw, l, b, intConst(rw, l, i32, 7));
      Value normal = arith::OrIOp::create(
          rw, l,
          arith::ShLIOp::create(rw, l, arith::AddIOp::create(rw, l, exp, intConst(rw, l, i32, 120)),
                                intConst(rw, l, i32, 23)),
          arith::ShLIOp::create(rw, l, man, intConst(rw, l, i32, 20)));
      Value subnormal = arith::BitcastOp::create(
          rw, l, i32,
          arith::MulFOp::create(rw, l, arith::UIToFPOp::create(rw, l, f32, man), f32Const(rw, l, 1.0f / 512)));
      Value isSub = arith::CmpIOp::create(rw, l, arith::CmpIPredicate::eq, exp, intConst(rw, l, i32, 0));
      Value mag = arith::SelectOp::create(rw, l, isSub, subnormal, normal);
      Value isNan = arith::CmpIOp::create(rw, l, arith::CmpIPredicate::eq,
                                          arith::AndIOp::create(rw, l, b, intConst(rw, l, i32, 0x7F)),
                                          intConst(rw, l, i32, 0x7F));
      mag = arith::SelectOp::create(rw, l, isNan, intConst(rw, l, i32, 0x7FC00000), mag);
      f = arith::BitcastOp::create(rw, l, f32, arith::OrIOp::create(rw, l, sign, mag));
    }
    Type to = op.getType();
    if (to.isF32())
      rw.replaceOp(op, f);
    else if (to.getIntOrFloatBitWidth() < 32)
      rw.replaceOpWithNewOp<arith::TruncFOp>(op, to, f); // f16, bf16: exact
    else
      rw.replaceOpWithNewOp<arith::ExtFOp>(op, to, f);
    return success();
  }
};

/// Any other arith or math op on bf16 (arithmetic, comparisons, conversions
/// to integers, math functions): computed in f32, each result rounded once.
/// Constants, selects and bitcasts move bits and stay.
struct ComputeInF32 : RewritePattern {
  ComputeInF32(MLIRContext *ctx) : RewritePattern(MatchAnyOpTypeTag(), PatternBenefit(1), ctx) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rw) const override {
    if (!llvm::isa<math::MathDialect, arith::ArithDialect>(op->getDialect()) || op->getNumRegions() != 0)
      return failure();
    if (llvm::isa<arith::ConstantOp, arith::SelectOp, arith::BitcastOp, arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp,
                  arith::UIToFPOp>(op))
      return failure();
    if (llvm::none_of(op->getOperandTypes(), isNarrow) && llvm::none_of(op->getResultTypes(), isNarrow))
      return failure();
    if (llvm::any_of(op->getOperandTypes(), [](Type t) { return llvm::isa<ShapedType>(t); })) return failure();
    Location l = op->getLoc();
    Type f32 = rw.getF32Type();
    SmallVector<Value> operands;
    for (Value v : op->getOperands())
      operands.push_back(isNarrow(v.getType()) ? (Value)arith::ExtFOp::create(rw, l, f32, v) : v);
    SmallVector<Type> results;
    for (Type t : op->getResultTypes()) results.push_back(isNarrow(t) ? f32 : t);
    OperationState state(l, op->getName(), operands, results, op->getAttrs());
    Operation *wide = rw.create(state);
    SmallVector<Value> replacements;
    for (auto [r, t] : llvm::zip(wide->getResults(), op->getResultTypes()))
      replacements.push_back(isNarrow(t) ? (Value)arith::TruncFOp::create(rw, l, t, r) : r);
    rw.replaceOp(op, replacements);
    return success();
  }
};

struct ExpandNarrowFloatsPass : public PassWrapper<ExpandNarrowFloatsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExpandNarrowFloatsPass)
  StringRef getArgument() const override { return "nxc-expand-narrow-floats"; }
  StringRef getDescription() const override {
    return "Compute bf16 and f8 math in f32, with their conversions in integer arithmetic (f8 rounded as Nx rounds)";
  }
  void getDependentDialects(DialectRegistry &r) const override { r.insert<arith::ArithDialect, math::MathDialect>(); }

  void runOnOperation() override {
    RewritePatternSet p(&getContext());
    p.add<TruncToBF16, ExtFromBF16, TruncToF8, ExtFromF8, IntToBF16<arith::SIToFPOp, true>,
          IntToBF16<arith::UIToFPOp, false>, ComputeInF32>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(p)))) return signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createExpandNarrowFloatsPass() { return std::make_unique<ExpandNarrowFloatsPass>(); }

} // namespace nxc
