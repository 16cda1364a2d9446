//===- Scalars.cpp - nx element-wise ops as scalar arith/math ---------------===//
//
// The scalar computation of every element-wise nx op (scalarOp, one table by
// name), and the conversions between element types, with Nx's semantics for
// integer division by zero, shifts past the width and float-to-integer casts.
//
//===----------------------------------------------------------------------===//
#include "Helpers.h"
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
    Value min = arith::ConstantOp::create(b, l, t, b.getIntegerAttr(t, APInt::getSignedMinValue(t.getIntOrFloatBitWidth())));
    Value overflow = arith::AndIOp::create(b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, min),
                                           arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, y, minusOne));
    bad = arith::OrIOp::create(b, l, isZero, overflow);
  }
  Value safeY = arith::SelectOp::create(b, l, bad, one, y);
  Value r = remainder ? (uns ? (Value)arith::RemUIOp::create(b, l, x, safeY) : (Value)arith::RemSIOp::create(b, l, x, safeY))
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
  Value shifted = left ? (Value)arith::ShLIOp::create(b, l, x, count)
                       : uns ? (Value)arith::ShRUIOp::create(b, l, x, count) : (Value)arith::ShRSIOp::create(b, l, x, count);
  Value fill = left || uns ? zeroOf(b, l, t) : (Value)arith::ShRSIOp::create(b, l, x, iconst(b, l, t, w - 1));
  return arith::SelectOp::create(b, l, inRange, shifted, fill);
}

template <typename Op> Value mathOp(OpBuilder &b, Location l, Value x) { return Op::create(b, l, x); }

/// Unary functions with an f32 computation of nxc's own (ScalarMath.h: in
/// f64, rounded once, no libm; f16 and bf16 reach them as f32); f64 values
/// take MLIR's math op, a libm call. The inverse hyperbolic
/// functions are ln(1 + d) with d computed so that nothing cancels (the
/// textbook formulas in f32 were 500 ulp off near 1).
struct OwnF32Function {
  Value (*f32)(OpBuilder &, Location, Value);
  Value (*other)(OpBuilder &, Location, Value);
};
const llvm::StringMap<OwnF32Function> &ownF32Functions() {
  static const llvm::StringMap<OwnF32Function> table = {
      {"sinh", {sinhF32, mathOp<math::SinhOp>}},    {"asin", {asinF32, mathOp<math::AsinOp>}},
      {"acos", {acosF32, mathOp<math::AcosOp>}},    {"atan", {atanF32, mathOp<math::AtanOp>}},
      {"asinh", {asinhF32, mathOp<math::AsinhOp>}}, {"acosh", {acoshF32, mathOp<math::AcoshOp>}},
      {"atanh", {atanhF32, mathOp<math::AtanhOp>}}, {"cbrt", {cbrtF32, mathOp<math::CbrtOp>}},
      {"erf", {erfF32, mathOp<math::ErfOp>}},       {"erfc", {erfcF32, mathOp<math::ErfcOp>}}};
  return table;
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
    Value tooSmall = arith::CmpFOp::create(b, l, uns ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OLT, x, fconst(b, l, ft, lo));
    Value isNan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x);
    Value r = arith::SelectOp::create(b, l, tooBig, arith::ConstantOp::create(b, l, dst, b.getIntegerAttr(dst, maxI)), conv);
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
  if (toF) return isUnsigned(from) ? (Value)arith::UIToFPOp::create(b, l, dst, x) : (Value)arith::SIToFPOp::create(b, l, dst, x);
  unsigned a = from.getIntOrFloatBitWidth(), c = to.getIntOrFloatBitWidth();
  if (a == c) return x;
  if (a > c) return arith::TruncIOp::create(b, l, dst, x);
  return isUnsigned(from) ? (Value)arith::ExtUIOp::create(b, l, dst, x) : (Value)arith::ExtSIOp::create(b, l, dst, x);
}


/// The scalar computation of element-wise op `name` on signless `args`.
/// `in` is the nx element type of the (first) operand.
FailureOr<Value> scalarOp(OpBuilder &b, Location l, StringRef name, ValueRange args, Type in) {
  bool isF = llvm::isa<FloatType>(in);
  bool uns = isUnsigned(in);
  Value x = args[0];
  Value y = args.size() > 1 ? args[1] : Value();
  Type t = x.getType();

  // Functions of f16 and bf16 are computed in f32 and rounded once: their
  // formulas' intermediate values would round (and, in f16, overflow:
  // exp(12) in sigmoid) otherwise.
  static const llvm::StringSet<> kInF32 = {"exp", "expm1", "log", "log1p", "log2", "sigmoid", "sin", "cos", "tan",
                                          "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
                                          "rsqrt", "cbrt", "erf", "erfc", "erf_inv", "atan2", "pow"};
  if ((t.isF16() || t.isBF16()) && kInF32.contains(name)) {
    SmallVector<Value> wide;
    for (Value a : args) wide.push_back(arith::ExtFOp::create(b, l, b.getF32Type(), a));
    FailureOr<Value> r = scalarOp(b, l, name, wide, b.getF32Type());
    if (failed(r)) return failure();
    return (Value)arith::TruncFOp::create(b, l, t, *r);
  }

  // Binary arithmetic.
  if (name == "add") return isF ? fadd(b, l, x, y) : (Value)arith::AddIOp::create(b, l, x, y);
  if (name == "subtract") return isF ? fsub(b, l, x, y) : (Value)arith::SubIOp::create(b, l, x, y);
  if (name == "multiply") return isF ? fmul(b, l, x, y) : (Value)arith::MulIOp::create(b, l, x, y);
  if (name == "divide") return fdiv(b, l, x, y);
  if (name == "pow") {
    // C's pow (C's special cases are Nx's): f64 pow of f64 values, a libm
    // call; of narrower values, expanded by nxc-expand-math (after constants
    // reach it: small integer powers are products).
    if (isF) return inF64(b, l, {x, y}, [&](ValueRange v) -> Value { return math::PowFOp::create(b, l, v[0], v[1]); });
    return (Value)math::IPowIOp::create(b, l, x, y);
  }
  if (name == "remainder") {
    if (!isF) return safeIntDivision(b, l, x, y, uns, /*remainder=*/true);
    // f64: the C library's fmod (exact). Narrower floats: exact without libm.
    if (t.getIntOrFloatBitWidth() == 64) return (Value)arith::RemFOp::create(b, l, x, y);
    return exactNarrowFmod(b, l, x, y);
  }
  if (name == "quotient") return safeIntDivision(b, l, x, y, uns, /*remainder=*/false);
  if (name == "atan2" && t.isF32()) return atan2F32(b, l, x, y);
  if (name == "atan2") return atan2WithZeros(b, l, x, y);
  if (name == "max") return isF ? (Value)arith::MaximumFOp::create(b, l, x, y)
                              : uns ? (Value)arith::MaxUIOp::create(b, l, x, y) : (Value)arith::MaxSIOp::create(b, l, x, y);
  if (name == "min") return isF ? (Value)arith::MinimumFOp::create(b, l, x, y)
                              : uns ? (Value)arith::MinUIOp::create(b, l, x, y) : (Value)arith::MinSIOp::create(b, l, x, y);
  if (name == "bitwise_and") return (Value)arith::AndIOp::create(b, l, x, y);
  if (name == "bitwise_or") return (Value)arith::OrIOp::create(b, l, x, y);
  if (name == "bitwise_xor") return (Value)arith::XOrIOp::create(b, l, x, y);
  if (name == "left_shift" || name == "right_shift") return shift(b, l, x, y, uns, name == "left_shift");

  // Comparisons (u8 result). Float: ordered, except not_equal (true on NaN).
  struct Cmp { const char *name; arith::CmpFPredicate f; arith::CmpIPredicate s, u; };
  static const Cmp cmps[] = {
      {"equal", arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq, arith::CmpIPredicate::eq},
      {"not_equal", arith::CmpFPredicate::UNE, arith::CmpIPredicate::ne, arith::CmpIPredicate::ne},
      {"less", arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt, arith::CmpIPredicate::ult},
      {"less_equal", arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle, arith::CmpIPredicate::ule},
      {"greater", arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt, arith::CmpIPredicate::ugt},
      {"greater_equal", arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge, arith::CmpIPredicate::uge}};
  for (auto &c : cmps)
    if (name == c.name)
      return toU8(b, l, isF ? (Value)arith::CmpFOp::create(b, l, c.f, x, y)
                            : (Value)arith::CmpIOp::create(b, l, uns ? c.u : c.s, x, y));
  if (name == "logical_and") return toU8(b, l, arith::AndIOp::create(b, l, isNonZero(b, l, x), isNonZero(b, l, y)));
  if (name == "logical_or") return toU8(b, l, arith::OrIOp::create(b, l, isNonZero(b, l, x), isNonZero(b, l, y)));
  if (name == "logical_xor") return toU8(b, l, arith::XOrIOp::create(b, l, isNonZero(b, l, x), isNonZero(b, l, y)));

  // Unary.
  if (name == "logical_not") return toU8(b, l, arith::XOrIOp::create(b, l, isNonZero(b, l, x), arith::ConstantOp::create(b, l, b.getBoolAttr(true))));
  if (name == "is_nan")
    return isF ? toU8(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x)) : iconst(b, l, b.getI8Type(), 0);
  if (name == "is_infinity") {
    if (!isF) return iconst(b, l, b.getI8Type(), 0);
    Value a = math::AbsFOp::create(b, l, x);
    return toU8(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, a, fconst(b, l, t, INFINITY)));
  }
  if (name == "negate") return isF ? (Value)arith::NegFOp::create(b, l, x) : (Value)arith::SubIOp::create(b, l, zeroOf(b, l, t), x);
  if (name == "abs") return isF ? (Value)math::AbsFOp::create(b, l, x) : uns ? x : (Value)math::AbsIOp::create(b, l, x);
  if (name == "bitwise_not") return (Value)arith::XOrIOp::create(b, l, x, iconst(b, l, t, -1));
  if (name == "sign") {
    if (isF) {
      // 1.0, -1.0, or x itself (keeps +-0 and NaN).
      Value pos = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, zeroOf(b, l, t));
      Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, zeroOf(b, l, t));
      Value r = arith::SelectOp::create(b, l, neg, fconst(b, l, t, -1.0), x);
      return (Value)arith::SelectOp::create(b, l, pos, fconst(b, l, t, 1.0), r);
    }
    Value pos = arith::ExtUIOp::create(b, l, t, arith::CmpIOp::create(b, l, uns ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt, x, zeroOf(b, l, t)));
    if (uns) return pos;
    Value neg = arith::ExtUIOp::create(b, l, t, arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, x, zeroOf(b, l, t)));
    return (Value)arith::SubIOp::create(b, l, pos, neg);
  }
  if (name == "floor") return (Value)math::FloorOp::create(b, l, x);
  if (name == "ceil") return (Value)math::CeilOp::create(b, l, x);
  if (name == "round") return (Value)math::RoundOp::create(b, l, x);
  if (name == "exp") return (Value)math::ExpOp::create(b, l, x);
  if (name == "expm1") return (Value)math::ExpM1Op::create(b, l, x);
  if (name == "log") return logOfSubnormals(b, l, x, /*base2=*/false);
  if (name == "log1p") return (Value)math::Log1pOp::create(b, l, x);
  if (name == "log2") return logOfSubnormals(b, l, x, /*base2=*/true);
  if (name == "population_count") return (Value)math::CtPopOp::create(b, l, x);
  if (name == "count_leading_zeros") return (Value)math::CountLeadingZerosOp::create(b, l, x);
  if (name == "sigmoid") {
    // 1 / (1 + exp(-x)) for x >= 0 and exp(x) / (1 + exp(x)) below: exp(-x)
    // would overflow from x < -88.7 (f32) and give 0 where the result is
    // still a subnormal number. With e = exp(-|x|) both are num / (1 + e).
    Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, math::AbsFOp::create(b, l, x)));
    Value one = fconst(b, l, t, 1.0);
    Value negative = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, fconst(b, l, t, 0.0));
    Value num = arith::SelectOp::create(b, l, negative, e, one);
    Value den = fadd(b, l, one, e);
    return fdiv(b, l, num, den);
  }
  if ((name == "sin" || name == "cos" || name == "tan") && t.isF32())
    return reducedTrig(b, l, name, x);
  if (name == "sin") return (Value)math::SinOp::create(b, l, x);
  if (name == "cos") return (Value)math::CosOp::create(b, l, x);
  if (name == "tan") return (Value)math::TanOp::create(b, l, x);
  if (name == "cosh") return (Value)math::CoshOp::create(b, l, x);
  if (name == "tanh") return tanhAccurate(b, l, x);
  if (name == "sqrt") return (Value)math::SqrtOp::create(b, l, x);
  if (name == "rsqrt") return (Value)math::RsqrtOp::create(b, l, x);
  if (auto own = ownF32Functions().find(name); own != ownF32Functions().end())
    return t.isF32() ? own->second.f32(b, l, x) : own->second.other(b, l, x);
  if (name == "erf_inv") return erfInv(b, l, x);
  return failure();
}

} // namespace nxc::lowering
