//===- Scalars.cpp - nx element-wise ops as scalar arith/math ---------------===//
//
// The scalar computation of every element-wise nx op (scalarOp, one case per
// op of Ops.def), and the conversions between element types, with Nx's semantics for
// integer division by zero, shifts past the width and float-to-integer casts.
//
//===----------------------------------------------------------------------===//
#include "Helpers.h"
#include "../ScalarMath.h"
#include "nxc/Dialect/Nx/NxDialect.h"

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

namespace nxc::lowering {
namespace {

/// Nx's integer quotient/remainder, total: x / 0 is -1 (all ones) and
/// x rem 0 is x, as XLA defines them; MIN / -1 wraps to MIN (rem 0). The
/// division itself never traps.
Value safeIntDivision(OpBuilder &b, Location l, Value x, Value y, bool uns, bool remainder) {
  Type t = x.getType();
  Value zero = zeroOf(b, l, t), one = iconst(b, l, t, 1);
  Value isZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, y, zero);
  Value bad = isZero;
  if (!uns) {
    Value minusOne = iconst(b, l, t, -1);
    Value min =
        arith::ConstantOp::create(b, l, t, b.getIntegerAttr(t, APInt::getSignedMinValue(t.getIntOrFloatBitWidth())));
    Value overflow = arith::AndIOp::create(b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, min),
                                           arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, y, minusOne));
    bad = arith::OrIOp::create(b, l, isZero, overflow);
  }
  Value safeY = arith::SelectOp::create(b, l, bad, one, y);
  Value r = remainder
                ? (uns ? (Value)arith::RemUIOp::create(b, l, x, safeY) : (Value)arith::RemSIOp::create(b, l, x, safeY))
                : (uns ? (Value)arith::DivUIOp::create(b, l, x, safeY) : (Value)arith::DivSIOp::create(b, l, x, safeY));
  // With y replaced by 1: quotient is x (= MIN for MIN / -1), remainder 0.
  Value onZero = remainder ? x : iconst(b, l, t, -1);
  return arith::SelectOp::create(b, l, isZero, onZero, r);
}

/// Shifts with Nx's meaning for counts of the bit width or more (and
/// negative ones): left shifts give 0, right shifts the sign fill.
Value shift(OpBuilder &b, Location l, Value x, Value y, bool uns, bool left) {
  Type t = x.getType();
  unsigned w = t.getIntOrFloatBitWidth();
  Value width = iconst(b, l, t, w);
  Value inRange = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, y, width); // negative counts are huge unsigned
  Value count = arith::SelectOp::create(b, l, inRange, y, zeroOf(b, l, t));
  Value shifted = left  ? (Value)arith::ShLIOp::create(b, l, x, count)
                  : uns ? (Value)arith::ShRUIOp::create(b, l, x, count)
                        : (Value)arith::ShRSIOp::create(b, l, x, count);
  Value fill = left || uns ? zeroOf(b, l, t) : (Value)arith::ShRSIOp::create(b, l, x, iconst(b, l, t, w - 1));
  return arith::SelectOp::create(b, l, inRange, shifted, fill);
}

/// Unary functions with an f32 computation of nxc's own (ScalarMath.h: in
/// f64, rounded once, no libm; f16 and bf16 reach them as f32); f64 values
/// take MLIR's math op, a libm call. The inverse hyperbolic
/// functions are ln(1 + d) with d computed so that nothing cancels (the
/// textbook formulas in f32 were 500 ulp off near 1).
template <Value (*OwnF32)(OpBuilder &, Location, Value), typename MathOp>
Value ownF32Function(OpBuilder &b, Location l, Value x) {
  return x.getType().isF32() ? OwnF32(b, l, x) : (Value)MathOp::create(b, l, x);
}

/// Functions of f16 and bf16 are computed in f32 and rounded once: their
/// formulas' intermediate values would round (and, in f16, overflow:
/// exp(12) in sigmoid) otherwise.
bool computedInF32(Op op) {
  switch (opFamily(op)) {
  case OpFamily::FloatUnary: return true;
  default: return op == Op::Atan2 || op == Op::Pow;
  }
}

/// Float comparisons are ordered, except not_equal (true on NaN).
Value compare(OpBuilder &b, Location l, Value x, Value y, bool isF, bool uns, arith::CmpFPredicate f,
              arith::CmpIPredicate s, arith::CmpIPredicate u) {
  return toU8(
      b, l, isF ? (Value)arith::CmpFOp::create(b, l, f, x, y) : (Value)arith::CmpIOp::create(b, l, uns ? u : s, x, y));
}

} // namespace

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

Type signless(Type t) {
  if (auto it = llvm::dyn_cast<IntegerType>(t)) return IntegerType::get(t.getContext(), it.getWidth());
  return t;
}

bool isUnsigned(Type nxElem) {
  auto it = llvm::dyn_cast<IntegerType>(nxElem);
  return it && it.isUnsigned();
}

Type elemOf(Value v) { return llvm::cast<ShapedType>(v.getType()).getElementType(); }

arith::FastMathFlagsAttr fm(OpBuilder &b) {
  return arith::FastMathFlagsAttr::get(b.getContext(), arith::FastMathFlags::reassoc | arith::FastMathFlags::contract);
}

//===----------------------------------------------------------------------===//
// Scalar bodies
//===----------------------------------------------------------------------===//

/// Float arithmetic (fadd, fmul, ... in ScalarMath.h) consists of exact IEEE
/// operations: fusion may recompute a value in several consumers, and every
/// copy must agree (so `x - reduce_max(x)` is never positive). Reductions and
/// dot accumulate with `reassoc contract` (the `Fast` variants), which lets
/// LLVM vectorize them.
Value faddFast(OpBuilder &b, Location l, Value x, Value y) { return arith::AddFOp::create(b, l, x, y, fm(b)); }
Value fmulFast(OpBuilder &b, Location l, Value x, Value y) { return arith::MulFOp::create(b, l, x, y, fm(b)); }

Value floatExtremum(OpBuilder &b, Location l, Value x, Value y, bool max) {
  if (!x.getType().isF64())
    return max ? (Value)arith::MaximumFOp::create(b, l, x, y) : (Value)arith::MinimumFOp::create(b, l, x, y);
  using P = arith::CmpFPredicate;
  Value pick = arith::SelectOp::create(b, l, arith::CmpFOp::create(b, l, max ? P::OGT : P::OLT, x, y), x, y);
  // Equal zeros of either sign: +0 wins for max (-0 + +0 is +0), -0 for min
  // (-(+0 + -0) is -0); x + y is NaN when either is.
  Value sum = arith::AddFOp::create(b, l, x, y);
  Value zeros = arith::NegFOp::create(
      b, l, arith::AddFOp::create(b, l, arith::NegFOp::create(b, l, x), arith::NegFOp::create(b, l, y)));
  Value zero = arith::ConstantOp::create(b, l, b.getF64FloatAttr(0.0));
  Value bothZero = arith::AndIOp::create(b, l, arith::CmpFOp::create(b, l, P::OEQ, x, zero),
                                         arith::CmpFOp::create(b, l, P::OEQ, y, zero));
  Value r = arith::SelectOp::create(b, l, bothZero, max ? sum : zeros, pick);
  return arith::SelectOp::create(b, l, arith::CmpFOp::create(b, l, P::UNO, x, y), sum, r);
}

Value toU8(OpBuilder &b, Location l, Value i1) { return arith::ExtUIOp::create(b, l, b.getI8Type(), i1); }

Value isNonZero(OpBuilder &b, Location l, Value x) {
  Type t = x.getType();
  if (llvm::isa<FloatType>(t)) return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, x, zeroOf(b, l, t));
  return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, x, zeroOf(b, l, t));
}

/// Converts scalar `x` from Nx element type `from` to `to` (both nx types).
Value convertScalar(OpBuilder &b, Location l, Value x, Type from, Type to) {
  Type dst = signless(to);
  if (from == to) return x;
  bool fromF = llvm::isa<FloatType>(from), toF = llvm::isa<FloatType>(to);
  if (fromF && toF) {
    unsigned a = from.getIntOrFloatBitWidth(), c = to.getIntOrFloatBitWidth();
    if (a < c) return arith::ExtFOp::create(b, l, dst, x);
    if (a > c) return arith::TruncFOp::create(b, l, dst, x);
    // f16 <-> bf16: go through f32.
    Value w = arith::ExtFOp::create(b, l, b.getF32Type(), x);
    return arith::TruncFOp::create(b, l, dst, w);
  }
  if (fromF) {
    // Saturating, as Nx's as_type: Inf -> max, -Inf -> min, NaN -> 0.
    unsigned w = dst.getIntOrFloatBitWidth();
    bool uns = isUnsigned(to);
    APInt maxI = uns ? APInt::getMaxValue(w) : APInt::getSignedMaxValue(w);
    APInt minI = uns ? APInt::getMinValue(w) : APInt::getSignedMinValue(w);
    Type ft = x.getType();
    // The float just above max (a power of two, exact) and min itself.
    double hi = uns ? std::ldexp(1.0, (int)w) : std::ldexp(1.0, (int)w - 1);
    double lo = uns ? 0.0 : -std::ldexp(1.0, (int)w - 1);
    Value conv = uns ? (Value)arith::FPToUIOp::create(b, l, dst, x) : (Value)arith::FPToSIOp::create(b, l, dst, x);
    Value tooBig = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, x, fconst(b, l, ft, hi));
    Value tooSmall = arith::CmpFOp::create(b, l, uns ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OLT, x,
                                           fconst(b, l, ft, lo));
    Value isNan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x);
    Value r =
        arith::SelectOp::create(b, l, tooBig, arith::ConstantOp::create(b, l, dst, b.getIntegerAttr(dst, maxI)), conv);
    r = arith::SelectOp::create(b, l, tooSmall, arith::ConstantOp::create(b, l, dst, b.getIntegerAttr(dst, minI)), r);
    return arith::SelectOp::create(b, l, isNan, iconst(b, l, dst, 0), r);
  }
  if (toF && isUnsigned(from) && from.getIntOrFloatBitWidth() == 64) {
    // u64 -> float through signed conversions: LLVM's vectorizer narrows
    // `uitofp (sext iN to i64)` to 32 bits, which is wrong for negative N-bit
    // values. Values with the top bit set convert as (x >> 1 | x & 1) * 2,
    // which rounds correctly.
    Type it = x.getType();
    Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, x, iconst(b, l, it, 0));
    Value half = arith::OrIOp::create(b, l, arith::ShRUIOp::create(b, l, x, iconst(b, l, it, 1)),
                                      arith::AndIOp::create(b, l, x, iconst(b, l, it, 1)));
    Value h = arith::SIToFPOp::create(b, l, dst, half);
    Value big = arith::AddFOp::create(b, l, h, h);
    return arith::SelectOp::create(b, l, neg, big, arith::SIToFPOp::create(b, l, dst, x));
  }
  if (toF)
    return isUnsigned(from) ? (Value)arith::UIToFPOp::create(b, l, dst, x)
                            : (Value)arith::SIToFPOp::create(b, l, dst, x);
  unsigned a = from.getIntOrFloatBitWidth(), c = to.getIntOrFloatBitWidth();
  if (a == c) return x;
  if (a > c) return arith::TruncIOp::create(b, l, dst, x);
  return isUnsigned(from) ? (Value)arith::ExtUIOp::create(b, l, dst, x) : (Value)arith::ExtSIOp::create(b, l, dst, x);
}


/// The scalar computation of element-wise op `op` on signless `args`.
/// `in` is the nx element type of the (first) operand.
FailureOr<Value> scalarOp(OpBuilder &b, Location l, Op op, ValueRange args, Type in) {
  bool isF = llvm::isa<FloatType>(in);
  bool uns = isUnsigned(in);
  Value x = args[0];
  Value y = args.size() > 1 ? args[1] : Value();
  Type t = x.getType();

  // Functions of narrow floats are computed in f32 and rounded once (f8's
  // single operations, such as additions, are widened by nxc-expand-narrow-floats).
  if (llvm::isa<FloatType>(t) && t.getIntOrFloatBitWidth() < 32 && computedInF32(op)) {
    SmallVector<Value> wide;
    for (Value a : args) wide.push_back(arith::ExtFOp::create(b, l, b.getF32Type(), a));
    FailureOr<Value> r = scalarOp(b, l, op, wide, b.getF32Type());
    if (failed(r)) return failure();
    return (Value)arith::TruncFOp::create(b, l, t, *r);
  }

  using P = arith::CmpFPredicate;
  using I = arith::CmpIPredicate;
  switch (op) {
  // Binary arithmetic.
  case Op::Add: return isF ? fadd(b, l, x, y) : (Value)arith::AddIOp::create(b, l, x, y);
  case Op::Subtract: return isF ? fsub(b, l, x, y) : (Value)arith::SubIOp::create(b, l, x, y);
  case Op::Multiply: return isF ? fmul(b, l, x, y) : (Value)arith::MulIOp::create(b, l, x, y);
  case Op::Divide: return fdiv(b, l, x, y);
  case Op::Pow:
    // C's pow (C's special cases are Nx's): f64 pow of f64 values, a libm
    // call; of narrower values, expanded by nxc-expand-math (after constants
    // reach it: small integer powers are products).
    if (isF) return inF64(b, l, {x, y}, [&](ValueRange v) -> Value { return math::PowFOp::create(b, l, v[0], v[1]); });
    return (Value)math::IPowIOp::create(b, l, x, y);
  case Op::Remainder:
    if (!isF) return safeIntDivision(b, l, x, y, uns, /*remainder=*/true);
    // f64: the C library's fmod (exact). Narrower floats: exact without libm.
    if (t.getIntOrFloatBitWidth() == 64) return (Value)arith::RemFOp::create(b, l, x, y);
    return exactNarrowFmod(b, l, x, y);
  case Op::Quotient: return safeIntDivision(b, l, x, y, uns, /*remainder=*/false);
  case Op::Atan2: return t.isF32() ? atan2F32(b, l, x, y) : atan2WithZeros(b, l, x, y);
  case Op::Max:
    return isF   ? floatExtremum(b, l, x, y, /*max=*/true)
           : uns ? (Value)arith::MaxUIOp::create(b, l, x, y)
                 : (Value)arith::MaxSIOp::create(b, l, x, y);
  case Op::Min:
    return isF   ? floatExtremum(b, l, x, y, /*max=*/false)
           : uns ? (Value)arith::MinUIOp::create(b, l, x, y)
                 : (Value)arith::MinSIOp::create(b, l, x, y);
  case Op::BitwiseAnd: return (Value)arith::AndIOp::create(b, l, x, y);
  case Op::BitwiseOr: return (Value)arith::OrIOp::create(b, l, x, y);
  case Op::BitwiseXor: return (Value)arith::XOrIOp::create(b, l, x, y);
  case Op::LeftShift: return shift(b, l, x, y, uns, /*left=*/true);
  case Op::RightShift: return shift(b, l, x, y, uns, /*left=*/false);

  // Comparisons (u8 result).
  case Op::Equal: return compare(b, l, x, y, isF, uns, P::OEQ, I::eq, I::eq);
  case Op::NotEqual: return compare(b, l, x, y, isF, uns, P::UNE, I::ne, I::ne);
  case Op::Less: return compare(b, l, x, y, isF, uns, P::OLT, I::slt, I::ult);
  case Op::LessEqual: return compare(b, l, x, y, isF, uns, P::OLE, I::sle, I::ule);
  case Op::Greater: return compare(b, l, x, y, isF, uns, P::OGT, I::sgt, I::ugt);
  case Op::GreaterEqual: return compare(b, l, x, y, isF, uns, P::OGE, I::sge, I::uge);
  case Op::LogicalAnd: return toU8(b, l, arith::AndIOp::create(b, l, isNonZero(b, l, x), isNonZero(b, l, y)));
  case Op::LogicalOr: return toU8(b, l, arith::OrIOp::create(b, l, isNonZero(b, l, x), isNonZero(b, l, y)));
  case Op::LogicalXor: return toU8(b, l, arith::XOrIOp::create(b, l, isNonZero(b, l, x), isNonZero(b, l, y)));

  // Unary.
  case Op::LogicalNot:
    return toU8(b, l,
                arith::XOrIOp::create(b, l, isNonZero(b, l, x), arith::ConstantOp::create(b, l, b.getBoolAttr(true))));
  case Op::IsNan:
    return isF ? toU8(b, l, arith::CmpFOp::create(b, l, P::UNO, x, x)) : iconst(b, l, b.getI8Type(), 0);
  case Op::IsInfinity: {
    if (!isF) return iconst(b, l, b.getI8Type(), 0);
    Value a = math::AbsFOp::create(b, l, x);
    return toU8(b, l, arith::CmpFOp::create(b, l, P::OEQ, a, fconst(b, l, t, INFINITY)));
  }
  case Op::Negate:
    return isF ? (Value)arith::NegFOp::create(b, l, x) : (Value)arith::SubIOp::create(b, l, zeroOf(b, l, t), x);
  case Op::Abs: return isF ? (Value)math::AbsFOp::create(b, l, x) : uns ? x : (Value)math::AbsIOp::create(b, l, x);
  case Op::BitwiseNot: return (Value)arith::XOrIOp::create(b, l, x, iconst(b, l, t, -1));
  case Op::Sign: {
    if (isF) {
      // 1.0, -1.0, or x itself (keeps +-0 and NaN).
      Value pos = arith::CmpFOp::create(b, l, P::OGT, x, zeroOf(b, l, t));
      Value neg = arith::CmpFOp::create(b, l, P::OLT, x, zeroOf(b, l, t));
      Value r = arith::SelectOp::create(b, l, neg, fconst(b, l, t, -1.0), x);
      return (Value)arith::SelectOp::create(b, l, pos, fconst(b, l, t, 1.0), r);
    }
    Value pos = arith::ExtUIOp::create(b, l, t, arith::CmpIOp::create(b, l, uns ? I::ugt : I::sgt, x, zeroOf(b, l, t)));
    if (uns) return pos;
    Value neg = arith::ExtUIOp::create(b, l, t, arith::CmpIOp::create(b, l, I::slt, x, zeroOf(b, l, t)));
    return (Value)arith::SubIOp::create(b, l, pos, neg);
  }
  case Op::Floor: return (Value)math::FloorOp::create(b, l, x);
  case Op::Ceil: return (Value)math::CeilOp::create(b, l, x);
  case Op::Round: return (Value)math::RoundOp::create(b, l, x);
  case Op::Exp: return (Value)math::ExpOp::create(b, l, x);
  case Op::Expm1: return (Value)math::ExpM1Op::create(b, l, x);
  case Op::Log: return logOfSubnormals(b, l, x, /*base2=*/false);
  case Op::Log1p: return (Value)math::Log1pOp::create(b, l, x);
  case Op::Log2: return logOfSubnormals(b, l, x, /*base2=*/true);
  case Op::PopulationCount: return (Value)math::CtPopOp::create(b, l, x);
  case Op::CountLeadingZeros: return (Value)math::CountLeadingZerosOp::create(b, l, x);
  case Op::Sigmoid: {
    // 1 / (1 + exp(-x)) for x >= 0 and exp(x) / (1 + exp(x)) below: exp(-x)
    // would overflow from x < -88.7 (f32) and give 0 where the result is
    // still a subnormal number. With e = exp(-|x|) both are num / (1 + e).
    Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, math::AbsFOp::create(b, l, x)));
    Value one = fconst(b, l, t, 1.0);
    Value negative = arith::CmpFOp::create(b, l, P::OLT, x, fconst(b, l, t, 0.0));
    Value num = arith::SelectOp::create(b, l, negative, e, one);
    Value den = fadd(b, l, one, e);
    return fdiv(b, l, num, den);
  }
  case Op::Sin: return t.isF32() ? reducedTrig(b, l, Trig::Sin, x) : (Value)math::SinOp::create(b, l, x);
  case Op::Cos: return t.isF32() ? reducedTrig(b, l, Trig::Cos, x) : (Value)math::CosOp::create(b, l, x);
  case Op::Tan: return t.isF32() ? reducedTrig(b, l, Trig::Tan, x) : (Value)math::TanOp::create(b, l, x);
  case Op::Cosh: return (Value)math::CoshOp::create(b, l, x);
  case Op::Tanh: return tanhAccurate(b, l, x);
  case Op::Sqrt: return (Value)math::SqrtOp::create(b, l, x);
  case Op::Rsqrt: return (Value)math::RsqrtOp::create(b, l, x);
  case Op::Sinh: return ownF32Function<sinhF32, math::SinhOp>(b, l, x);
  case Op::Asin: return ownF32Function<asinF32, math::AsinOp>(b, l, x);
  case Op::Acos: return ownF32Function<acosF32, math::AcosOp>(b, l, x);
  case Op::Atan: return ownF32Function<atanF32, math::AtanOp>(b, l, x);
  case Op::Asinh: return ownF32Function<asinhF32, math::AsinhOp>(b, l, x);
  case Op::Acosh: return ownF32Function<acoshF32, math::AcoshOp>(b, l, x);
  case Op::Atanh: return ownF32Function<atanhF32, math::AtanhOp>(b, l, x);
  case Op::Cbrt: return ownF32Function<cbrtF32, math::CbrtOp>(b, l, x);
  case Op::Erf: return ownF32Function<erfF32, math::ErfOp>(b, l, x);
  case Op::Erfc: return ownF32Function<erfcF32, math::ErfcOp>(b, l, x);
  case Op::ErfInv: return erfInv(b, l, x);

  // Not element-wise computations of their own: lowered by other patterns.
  case Op::Parameter: case Op::RegionArg: case Op::Elem: case Op::Metadata: case Op::Cond: case Op::While:
  case Op::PrintValue: case Op::Constant: case Op::Iota: case Op::AsType: case Op::Bitcast: case Op::Select:
  case Op::Broadcast: case Op::Reshape: case Op::Transpose: case Op::Reverse: case Op::Slice: case Op::PutSlice:
  case Op::Pad: case Op::Concatenate: case Op::Sum: case Op::Product: case Op::ReduceMax: case Op::ReduceMin:
  case Op::All: case Op::Any: case Op::Argmax: case Op::Argmin: case Op::CumulativeSum: case Op::CumulativeProduct:
  case Op::CumulativeMax: case Op::CumulativeMin: case Op::WindowSum: case Op::WindowProduct: case Op::WindowMax:
  case Op::WindowMin: case Op::Dot: case Op::Conv: case Op::Argsort: case Op::Take: case Op::TakeAlongAxis:
  case Op::Gather: case Op::IndexedAdd: case Op::IndexedPut:
  case Op::Real:
  case Op::Imag:
  case Op::Conjugate:
  case Op::Complex: // pairs of reals by then
    break;
  }
  return failure();
}

} // namespace nxc::lowering
