//===- NxToLinalg.cpp - nx -> linalg/tensor/arith/math --------------------===//
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
//===----------------------------------------------------------------------===//
#include "nxc/Conversion/Passes.h"
#include "ScalarMath.h"
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

//===----------------------------------------------------------------------===//
// Structured ops
//===----------------------------------------------------------------------===//

/// Marks a layout copy that fusion must keep (see FuseElementwise.cpp).
constexpr const char *kKeepLayoutAttr = "nxc.keep_layout";

/// Dot runs the contraction innermost (as dot products of contiguous rows,
/// rhs copied to [free, contracted] first) when the output has fewer columns
/// than kWideRows and the contraction has at least `longContraction` elements
/// (a pass option: 256 by default, 128 where the CPU pipeline targets an OS),
/// and either rhs is a constant (nxc-pack-constant-layouts does the copy at
/// compile time) or the output has kCopyPaysRows rows or more (for one row,
/// [1,784] x [784,10], the copy alone took longer than the whole "ikj" dot:
/// 2.15 us against 1.27); otherwise the output columns run innermost ("ikj").
constexpr int64_t kWideRows = 16;
constexpr int64_t kCopyPaysRows = 2;

/// f32 sums over more elements than this accumulate in f64.
constexpr int64_t kNarrowSumLimit = 4096;

/// The type a reduction combining with `combine` accumulates elem in: float
/// sums and products (dots and convolutions are sums) of f16 and bf16 in f32
/// (a running f16 sum loses every addend below its 11 bits; Nx's reference
/// backend accumulates in f64 and rounds once); everything else in its own
/// type.
Type accumulatorType(Builder &b, StringRef combine, Type elem) {
  bool accumulates = combine == "sum" || combine == "product";
  return accumulates && llvm::isa<FloatType>(elem) && elem.getIntOrFloatBitWidth() < 32 ? (Type)b.getF32Type() : elem;
}

using BodyFn = llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

Value emptyTensor(OpBuilder &b, Location l, RankedTensorType t) {
  return tensor::EmptyOp::create(b, l, t.getShape(), t.getElementType());
}

Value genericOp(OpBuilder &b, Location l, RankedTensorType outType, ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                Value init, AffineMap outMap, ArrayRef<utils::IteratorType> iters, BodyFn body) {
  SmallVector<AffineMap> maps(inputMaps.begin(), inputMaps.end());
  maps.push_back(outMap);
  auto g = linalg::GenericOp::create(b, l, TypeRange{outType}, inputs, ValueRange{init}, maps, iters,
                                     [&](OpBuilder &nb, Location nl, ValueRange args) {
                                       Value r = body(nb, nl, args);
                                       linalg::YieldOp::create(nb, nl, r);
                                     });
  return g.getResult(0);
}

Value elementwise(OpBuilder &b, Location l, RankedTensorType outType, ValueRange inputs, BodyFn body) {
  unsigned rank = outType.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps(inputs.size(), id);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return genericOp(b, l, outType, inputs, maps, emptyTensor(b, l, outType), id, iters, body);
}

/// A float x extended to the wider float type acc; x itself otherwise (the
/// same type, or the integers and truth values of all/any).
Value widened(OpBuilder &b, Location l, Value x, Type acc) {
  if (x.getType() == acc || !llvm::isa<FloatType>(x.getType()) || !llvm::isa<FloatType>(acc)) return x;
  return arith::ExtFOp::create(b, l, acc, x);
}

/// An accumulated tensor rounded once to outType (itself when it has that type).
Value narrowed(OpBuilder &b, Location l, Value acc, RankedTensorType outType) {
  if (acc.getType() == outType) return acc;
  return elementwise(b, l, outType, acc, [&](OpBuilder &nb, Location nl, ValueRange a) {
    return (Value)arith::TruncFOp::create(nb, nl, outType.getElementType(), a[0]);
  });
}

/// The identity element of a reduction, as an attribute of signless type t.
TypedAttr reductionInit(OpBuilder &b, StringRef name, Type nxElem, Type t) {
  bool isF = llvm::isa<FloatType>(t);
  bool uns = isUnsigned(nxElem);
  unsigned w = t.getIntOrFloatBitWidth();
  if (name == "sum" || name == "any") return isF ? (TypedAttr)b.getFloatAttr(t, 0.0) : b.getIntegerAttr(t, 0);
  if (name == "product" || name == "all") return isF ? (TypedAttr)b.getFloatAttr(t, 1.0) : b.getIntegerAttr(t, 1);
  if (name == "reduce_max") {
    if (isF) return b.getFloatAttr(t, -INFINITY);
    return b.getIntegerAttr(t, uns ? APInt::getMinValue(w) : APInt::getSignedMinValue(w));
  }
  // reduce_min
  if (isF) return b.getFloatAttr(t, INFINITY);
  return b.getIntegerAttr(t, uns ? APInt::getMaxValue(w) : APInt::getSignedMaxValue(w));
}

Value reductionCombine(OpBuilder &b, Location l, StringRef name, Type nxElem, Value x, Value acc) {
  bool isF = llvm::isa<FloatType>(x.getType());
  bool uns = isUnsigned(nxElem);
  if (name == "sum") return isF ? faddFast(b, l, acc, x) : (Value)arith::AddIOp::create(b, l, acc, x);
  if (name == "product") return isF ? fmulFast(b, l, acc, x) : (Value)arith::MulIOp::create(b, l, acc, x);
  if (name == "reduce_max")
    return isF ? (Value)arith::MaximumFOp::create(b, l, acc, x, fm(b))
               : uns ? (Value)arith::MaxUIOp::create(b, l, acc, x) : (Value)arith::MaxSIOp::create(b, l, acc, x);
  if (name == "reduce_min")
    return isF ? (Value)arith::MinimumFOp::create(b, l, acc, x, fm(b))
               : uns ? (Value)arith::MinUIOp::create(b, l, acc, x) : (Value)arith::MinSIOp::create(b, l, acc, x);
  Value nz = toU8(b, l, isNonZero(b, l, x));
  if (name == "all") return (Value)arith::AndIOp::create(b, l, acc, nz);
  return (Value)arith::OrIOp::create(b, l, acc, nz); // any
}

Value filled(OpBuilder &b, Location l, RankedTensorType t, TypedAttr init) {
  Value c = arith::ConstantOp::create(b, l, init);
  return linalg::FillOp::create(b, l, ValueRange{c}, ValueRange{emptyTensor(b, l, t)}).getResult(0);
}

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

Value reshapeTensor(OpBuilder &b, Location l, Value in, RankedTensorType outType) {
  auto inType = llvm::cast<RankedTensorType>(in.getType());
  int64_t n = inType.getNumElements();
  // Through a rank-1 tensor of n elements: collapse, then expand.
  auto flatType = RankedTensorType::get({n}, inType.getElementType());
  Value flat = in;
  if (inType.getRank() == 0) {
    flat = tensor::ExpandShapeOp::create(b, l, flatType, in, ArrayRef<ReassociationIndices>{});
  } else if (inType.getRank() > 1) {
    ReassociationIndices all;
    for (int64_t i = 0; i < inType.getRank(); ++i) all.push_back(i);
    flat = tensor::CollapseShapeOp::create(b, l, flatType, in, ArrayRef<ReassociationIndices>{all});
  }
  if (outType.getRank() == 0) return tensor::CollapseShapeOp::create(b, l, outType, flat, ArrayRef<ReassociationIndices>{});
  if (outType.getRank() == 1) return flat;
  ReassociationIndices all;
  for (int64_t i = 0; i < outType.getRank(); ++i) all.push_back(i);
  return tensor::ExpandShapeOp::create(b, l, outType, flat, ArrayRef<ReassociationIndices>{all});
}

Value dotGeneric(OpBuilder &b, Location l, Operation *op, ArrayRef<Value> operands, RankedTensorType outType,
                 int64_t longContraction) {
  auto ca = llvm::cast<DenseI64ArrayAttr>(op->getAttr("lhs_contract")).asArrayRef();
  auto ba = llvm::cast<DenseI64ArrayAttr>(op->getAttr("lhs_batch")).asArrayRef();
  SmallVector<int64_t> cb(llvm::cast<DenseI64ArrayAttr>(op->getAttr("rhs_contract")).asArrayRef());
  SmallVector<int64_t> bb(llvm::cast<DenseI64ArrayAttr>(op->getAttr("rhs_batch")).asArrayRef());
  auto ta = llvm::cast<RankedTensorType>(operands[0].getType());
  auto tb = llvm::cast<RankedTensorType>(operands[1].getType());
  SmallVector<Value> ins(operands.begin(), operands.end());
  // Loop order. When the rhs free dims are wide, they go innermost (batch,
  // lhs free, contracted, rhs free: the "ikj" order), so the inner loop
  // walks rows of rhs and of the result contiguously and LLVM vectorizes it.
  // When they are narrow (a few output columns), the contraction goes
  // innermost instead, as a vectorized reduction.
  unsigned nb = ba.size(), nc = ca.size();
  unsigned nfa = ta.getRank() - nb - nc, nfb = tb.getRank() - nb - nc;
  unsigned nLoops = nb + nfa + nc + nfb;
  int64_t rhsFree = 1;
  for (int64_t d = 0; d < tb.getRank(); ++d)
    if (!llvm::is_contained(cb, d) && !llvm::is_contained(bb, d)) rhsFree *= tb.getDimSize(d);
  int64_t contracted = 1;
  for (int64_t d : cb) contracted *= tb.getDimSize(d);
  int64_t outRows = 1;
  for (int64_t d = 0; d < ta.getRank(); ++d)
    if (!llvm::is_contained(ca, d)) outRows *= ta.getDimSize(d);
  bool rhsConstant = (bool)operands[1].getDefiningOp<arith::ConstantOp>();
  bool contractInner = rhsFree < kWideRows && contracted >= longContraction &&
                       (rhsConstant || outRows >= kCopyPaysRows);
  if (contractInner && !cb.empty()) {
    // The contraction runs innermost: lay rhs out as [batch, free, contracted]
    // first (a small copy), so both operands stream contiguously.
    SmallVector<int64_t> perm(bb.begin(), bb.end());
    for (int64_t d = 0; d < tb.getRank(); ++d)
      if (!llvm::is_contained(cb, d) && !llvm::is_contained(bb, d)) perm.push_back(d);
    perm.append(cb.begin(), cb.end());
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == (int64_t)i;
    if (!identity) {
      SmallVector<int64_t> shape;
      for (int64_t d : perm) shape.push_back(tb.getDimSize(d));
      auto newType = RankedTensorType::get(shape, tb.getElementType());
      unsigned rank = tb.getRank();
      SmallVector<AffineExpr> exprs(rank);
      for (unsigned k = 0; k < rank; ++k) exprs[perm[k]] = b.getAffineDimExpr(k);
      SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
      ins[1] = genericOp(b, l, newType, ins[1], {AffineMap::get(rank, 0, exprs, b.getContext())},
                         emptyTensor(b, l, newType), b.getMultiDimIdentityMap(rank), iters,
                         [](OpBuilder &, Location, ValueRange a) { return a[0]; });
      // Element-wise fusion must not fold this copy back into the dot.
      ins[1].getDefiningOp()->setAttr(kKeepLayoutAttr, b.getUnitAttr());
      tb = newType;
      for (unsigned i = 0; i < nb; ++i) bb[i] = i;
      for (unsigned k = 0; k < nc; ++k) cb[k] = rank - nc + k;
    }
  }
  unsigned contractAt = contractInner ? nb + nfa + nfb : nb + nfa;
  unsigned rhsFreeAt = contractInner ? nb + nfa : nb + nfa + nc;
  SmallVector<AffineExpr> ea(ta.getRank()), eb(tb.getRank()), outExprs;
  for (unsigned i = 0; i < nb; ++i) { ea[ba[i]] = b.getAffineDimExpr(i); eb[bb[i]] = b.getAffineDimExpr(i); }
  for (unsigned k = 0; k < nc; ++k) {
    ea[ca[k]] = b.getAffineDimExpr(contractAt + k);
    eb[cb[k]] = b.getAffineDimExpr(contractAt + k);
  }
  for (unsigned i = 0; i < nb; ++i) outExprs.push_back(b.getAffineDimExpr(i));
  unsigned next = nb;
  for (int64_t d = 0; d < ta.getRank(); ++d)
    if (!ea[d]) { ea[d] = b.getAffineDimExpr(next); outExprs.push_back(b.getAffineDimExpr(next++)); }
  next = rhsFreeAt;
  for (int64_t d = 0; d < tb.getRank(); ++d)
    if (!eb[d]) { eb[d] = b.getAffineDimExpr(next); outExprs.push_back(b.getAffineDimExpr(next++)); }
  SmallVector<utils::IteratorType> iters(nLoops, utils::IteratorType::parallel);
  for (unsigned k = 0; k < nc; ++k) iters[contractAt + k] = utils::IteratorType::reduction;
  Type et = outType.getElementType();
  Type acc = nc == 0 ? et : accumulatorType(b, "sum", et);
  auto accType = RankedTensorType::get(outType.getShape(), acc);
  Value init = filled(b, l, accType, llvm::isa<FloatType>(acc) ? (TypedAttr)b.getFloatAttr(acc, 0.0) : b.getIntegerAttr(acc, 0));
  MLIRContext *ctx = b.getContext();
  Value r = genericOp(b, l, accType, ins,
                      {AffineMap::get(nLoops, 0, ea, ctx), AffineMap::get(nLoops, 0, eb, ctx)}, init,
                      AffineMap::get(nLoops, 0, outExprs, ctx), iters, [&](OpBuilder &nb2, Location nl, ValueRange a) {
                        if (nc == 0) // an outer product: no accumulation
                          return llvm::isa<FloatType>(et) ? fmul(nb2, nl, a[0], a[1])
                                                          : (Value)arith::MulIOp::create(nb2, nl, a[0], a[1]);
                        if (llvm::isa<FloatType>(et)) {
                          // One statement each: the order the ops are created in is the printed order.
                          Value x = widened(nb2, nl, a[0], acc);
                          Value y = widened(nb2, nl, a[1], acc);
                          return faddFast(nb2, nl, a[2], fmulFast(nb2, nl, x, y));
                        }
                        return (Value)arith::AddIOp::create(nb2, nl, a[2], arith::MulIOp::create(nb2, nl, a[0], a[1]));
                      });
  return narrowed(b, l, r, outType);
}

/// A linalg.generic with no inputs whose body computes each element from
/// its coordinates (gathers read other tensors with tensor.extract).
Value fromCoordinates(OpBuilder &b, Location l, RankedTensorType outType,
                      llvm::function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> body) {
  unsigned rank = outType.getRank();
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return genericOp(b, l, outType, ValueRange{}, {}, emptyTensor(b, l, outType), b.getMultiDimIdentityMap(rank), iters,
                   [&](OpBuilder &nb, Location nl, ValueRange) {
                     SmallVector<Value> coords;
                     for (unsigned d = 0; d < rank; ++d) coords.push_back(linalg::IndexOp::create(nb, nl, d));
                     return body(nb, nl, coords);
                   });
}

/// The output type of `op`'s single result, converted to signless.
RankedTensorType convertedResult(const TypeConverter *tc, Operation *op) {
  return llvm::cast<RankedTensorType>(tc->convertType(op->getResult(0).getType()));
}

/// Element-wise ops (the nx ops with the Elementwise trait): one parallel
/// linalg.generic whose body is the op's scalar computation (scalarOp, the
/// element-wise table).
struct ElementwiseLowering : public ConversionPattern {
  ElementwiseLowering(const TypeConverter &tc, MLIRContext *ctx)
      : ConversionPattern(tc, MatchTraitOpTypeTag(), TypeID::get<OpTrait::Elementwise>(), 1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value> operands, ConversionPatternRewriter &rw) const override {
    if (!llvm::isa<nx::NxDialect>(op->getDialect())) return failure();
    std::string name = op->getName().stripDialect().str();
    Type nxIn = elemOf(op->getOperand(0));
    bool failed = false;
    Value result = elementwise(rw, op->getLoc(), convertedResult(getTypeConverter(), op), operands,
                               [&](OpBuilder &b, Location nl, ValueRange a) -> Value {
                                 auto r = scalarOp(b, nl, name, a.take_front(operands.size()), nxIn);
                                 if (succeeded(r)) return *r;
                                 failed = true;
                                 return a[0];
                               });
    if (failed) return rw.notifyMatchFailure(op, "no lowering for nx." + name);
    rw.replaceOp(op, result);
    return success();
  }
};

/// A pattern for one op type whose lowering is a function of the adaptor's
/// operands and the converted result type.
template <typename OpTy>
struct SimpleLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Value r = lower(op, adaptor.getOperands(), rw, convertedResult(this->getTypeConverter(), op));
    rw.replaceOp(op, r);
    return success();
  }
  static Value lower(OpTy op, ValueRange operands, ConversionPatternRewriter &rw, RankedTensorType outType);
};

template <>
Value SimpleLowering<nx::ConstantOp>::lower(nx::ConstantOp op, ValueRange, ConversionPatternRewriter &rw,
                                            RankedTensorType outType) {
  // The same bits, seen with the signless element type.
  auto attr = llvm::cast<DenseElementsAttr>(op.getValue());
  return arith::ConstantOp::create(rw, op.getLoc(), outType, attr.bitcast(outType.getElementType()));
}

template <>
Value SimpleLowering<nx::IotaOp>::lower(nx::IotaOp op, ValueRange, ConversionPatternRewriter &rw, RankedTensorType outType) {
  // Computed from the loop indices: no table in read-only data.
  ArrayRef<int64_t> axes = op.getAxes();
  Type et = outType.getElementType();
  return fromCoordinates(rw, op.getLoc(), outType, [&](OpBuilder &b, Location nl, ArrayRef<Value> i) -> Value {
    Value v;
    if (!axes.empty()) {
      v = i[axes[0]];
    } else {
      // The row-major flat index.
      v = arith::ConstantIndexOp::create(b, nl, 0);
      for (int64_t d = 0; d < outType.getRank(); ++d)
        v = arith::AddIOp::create(b, nl, arith::MulIOp::create(b, nl, v, arith::ConstantIndexOp::create(b, nl, outType.getDimSize(d))),
                                  i[d]);
    }
    Value n = arith::IndexCastUIOp::create(b, nl, b.getI64Type(), v);
    if (llvm::isa<FloatType>(et)) return arith::UIToFPOp::create(b, nl, et, n);
    return et.getIntOrFloatBitWidth() == 64 ? n : (Value)arith::TruncIOp::create(b, nl, et, n);
  });
}

template <>
Value SimpleLowering<nx::BitcastOp>::lower(nx::BitcastOp op, ValueRange operands, ConversionPatternRewriter &rw,
                                           RankedTensorType outType) {
  Type to = outType.getElementType();
  return elementwise(rw, op.getLoc(), outType, operands, [&](OpBuilder &b, Location nl, ValueRange a) {
    return (Value)arith::BitcastOp::create(b, nl, to, a[0]);
  });
}

template <>
Value SimpleLowering<nx::AsTypeOp>::lower(nx::AsTypeOp op, ValueRange operands, ConversionPatternRewriter &rw,
                                          RankedTensorType outType) {
  Type from = elemOf(op.getOperand()), to = elemOf(op.getResult());
  return elementwise(rw, op.getLoc(), outType, operands, [&](OpBuilder &b, Location nl, ValueRange a) {
    return convertScalar(b, nl, a[0], from, to);
  });
}

template <>
Value SimpleLowering<nx::SelectOp>::lower(nx::SelectOp op, ValueRange operands, ConversionPatternRewriter &rw,
                                          RankedTensorType outType) {
  return elementwise(rw, op.getLoc(), outType, operands, [&](OpBuilder &b, Location nl, ValueRange a) {
    return (Value)arith::SelectOp::create(b, nl, isNonZero(b, nl, a[0]), a[1], a[2]);
  });
}

template <>
Value SimpleLowering<nx::BroadcastOp>::lower(nx::BroadcastOp op, ValueRange operands, ConversionPatternRewriter &rw,
                                             RankedTensorType outType) {
  ArrayRef<int64_t> axes = op.getAxes();
  auto inType = llvm::cast<RankedTensorType>(operands[0].getType());
  SmallVector<AffineExpr> exprs;
  for (size_t i = 0; i < axes.size(); ++i)
    exprs.push_back(inType.getDimSize(i) == 1 && outType.getDimSize(axes[i]) != 1 ? rw.getAffineConstantExpr(0)
                                                                                    : rw.getAffineDimExpr(axes[i]));
  unsigned rank = outType.getRank();
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return genericOp(rw, op.getLoc(), outType, operands, {AffineMap::get(rank, 0, exprs, rw.getContext())},
                   emptyTensor(rw, op.getLoc(), outType), rw.getMultiDimIdentityMap(rank), iters,
                   [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

template <>
Value SimpleLowering<nx::TransposeOp>::lower(nx::TransposeOp op, ValueRange operands, ConversionPatternRewriter &rw,
                                             RankedTensorType outType) {
  ArrayRef<int64_t> perm = op.getAxes();
  unsigned rank = outType.getRank();
  SmallVector<AffineExpr> exprs(rank);
  for (unsigned k = 0; k < rank; ++k) exprs[perm[k]] = rw.getAffineDimExpr(k);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return genericOp(rw, op.getLoc(), outType, operands, {AffineMap::get(rank, 0, exprs, rw.getContext())},
                   emptyTensor(rw, op.getLoc(), outType), rw.getMultiDimIdentityMap(rank), iters,
                   [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

template <>
Value SimpleLowering<nx::ReshapeOp>::lower(nx::ReshapeOp op, ValueRange operands, ConversionPatternRewriter &rw,
                                           RankedTensorType outType) {
  return reshapeTensor(rw, op.getLoc(), operands[0], outType);
}

struct DotLowering : public OpConversionPattern<nx::DotOp> {
  DotLowering(const TypeConverter &tc, MLIRContext *ctx, int64_t longContraction)
      : OpConversionPattern(tc, ctx), longContraction(longContraction) {}
  LogicalResult matchAndRewrite(nx::DotOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, dotGeneric(rw, op.getLoc(), op, SmallVector<Value>(adaptor.getOperands()),
                                convertedResult(getTypeConverter(), op), longContraction));
    return success();
  }
  int64_t longContraction;
};

/// A long reduction over trailing axes in two levels: blocks of 1024 to 4096
/// elements (a divisor of the reduced extent) reduced first, then the
/// blocks' results. The blocks are a parallel loop, which the thread pool can
/// share out. Null when the axes are not the trailing ones or no block size
/// divides their extent.
///  - sum (f32): the blocks are summed in f32 (a short sum: the vectorized loop
///    keeps 32 partial sums) and the block sums in f64: as accurate as
///    converting every element to f64, at f32's vector width;
///  - reduce_max, reduce_min: both levels in the element type; the result is
///    the same in any grouping (IEEE maximum and minimum: NaN wins, +0 > -0).
Value blockedReduction(OpBuilder &b, Location l, StringRef name, Type nxElem, Value in, ArrayRef<int64_t> axes,
                       RankedTensorType outType) {
  auto inType = llvm::cast<RankedTensorType>(in.getType());
  int64_t rank = inType.getRank(), k = axes.size();
  SmallVector<int64_t> sorted(axes.begin(), axes.end());
  llvm::sort(sorted);
  int64_t reduced = 1;
  for (int64_t i = 0; i < k; ++i) {
    if (sorted[i] != rank - k + i) return {};
    reduced *= inType.getDimSize(sorted[i]);
  }
  int64_t block = 0;
  for (int64_t size = kNarrowSumLimit; size >= 1024 && !block; --size)
    if (reduced % size == 0) block = size;
  if (!block) return {};
  Type elem = inType.getElementType();
  SmallVector<Type, 2> levels = name == "sum" ? SmallVector<Type, 2>{b.getF32Type(), b.getF64Type()}
                                    : SmallVector<Type, 2>{elem, elem};
  MLIRContext *ctx = b.getContext();
  // [leading..., blocks, block] -> [leading..., blocks] -> [leading...].
  SmallVector<int64_t> shape(inType.getShape().take_front(rank - k));
  shape.push_back(reduced / block);
  shape.push_back(block);
  Value level = reshapeTensor(b, l, in, RankedTensorType::get(shape, elem));
  for (Type acc : levels) {
    unsigned r = shape.size();
    shape.pop_back();
    SmallVector<utils::IteratorType> iters(r, utils::IteratorType::parallel);
    iters.back() = utils::IteratorType::reduction;
    SmallVector<AffineExpr> outExprs;
    for (unsigned d = 0; d + 1 < r; ++d) outExprs.push_back(b.getAffineDimExpr(d));
    auto t = RankedTensorType::get(shape, acc);
    level = genericOp(b, l, t, level, {b.getMultiDimIdentityMap(r)}, filled(b, l, t, reductionInit(b, name, nxElem, acc)),
                      AffineMap::get(r, 0, outExprs, ctx), iters, [&](OpBuilder &nb, Location nl, ValueRange a) {
                        return reductionCombine(nb, nl, name, nxElem, widened(nb, nl, a[0], acc), a[1]);
                      });
  }
  return narrowed(b, l, level, outType);
}

/// Reductions over `axes`: a linalg.generic with reduction iterators over a
/// filled accumulator; long float sums accumulate in a wider type (f32 in
/// f64, or in f32 blocks whose sums are added in f64: blockedReduction;
/// f16/bf16 in f32), so a million-element f32 sum stays within a few ulps,
/// while short ones (the vectorized loop keeps 32 partial sums) stay in
/// their own type. With blocked reductions (CPU code), long maxima and
/// minima run in blocks too, whose loop is parallel.
template <typename OpTy>
struct ReduceLowering : public OpConversionPattern<OpTy> {
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  ReduceLowering(const TypeConverter &tc, MLIRContext *ctx, bool blocked = false)
      : OpConversionPattern<OpTy>(tc, ctx), blocked(blocked) {}
  /// Long f32 sums, maxima and minima as blockedReduction (CPU code);
  /// otherwise one reduction, f32 sums in f64 (a GPU maps one reduction to
  /// blocks itself).
  bool blocked;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    StringRef name = op->getName().stripDialect();
    RankedTensorType outType = convertedResult(this->getTypeConverter(), op);
    Value in = adaptor.getOperand();
    Type nxIn = elemOf(op.getOperand());
    ArrayRef<int64_t> axes = op.getAxes();
    auto inType = llvm::cast<RankedTensorType>(in.getType());
    unsigned rank = inType.getRank();
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iters;
    for (unsigned d = 0; d < rank; ++d) {
      bool red = llvm::is_contained(axes, (int64_t)d);
      iters.push_back(red ? utils::IteratorType::reduction : utils::IteratorType::parallel);
      if (!red) outExprs.push_back(rw.getAffineDimExpr(d));
    }
    Type elem = outType.getElementType();
    int64_t reduced = 1;
    for (int64_t a : axes) reduced *= inType.getDimSize(a);
    Type acc = accumulatorType(rw, name, elem);
    bool extreme = name == "reduce_max" || name == "reduce_min";
    if (reduced > kNarrowSumLimit && blocked && ((name == "sum" && elem.isF32()) || extreme))
      if (Value inBlocks = blockedReduction(rw, l, name, nxIn, in, axes, outType)) {
        rw.replaceOp(op, inBlocks);
        return success();
      }
    if (name == "sum" && elem.isF32() && reduced > kNarrowSumLimit) acc = rw.getF64Type();
    auto accType = RankedTensorType::get(outType.getShape(), acc);
    Value init = filled(rw, l, accType, reductionInit(rw, name, nxIn, acc));
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, rw.getContext());
    Value result = genericOp(rw, l, accType, in, {rw.getMultiDimIdentityMap(rank)}, init, outMap, iters,
                             [&](OpBuilder &b, Location nl, ValueRange a) {
                               return reductionCombine(b, nl, name, nxIn, widened(b, nl, a[0], acc), a[1]);
                             });
    rw.replaceOp(op, narrowed(rw, l, result, outType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Typed patterns: control flow, slicing, concatenation, padding, reversal,
// index reductions and scans. They run before the generic NxOpLowering.
//===----------------------------------------------------------------------===//

/// A scalar tensor's value as an i1 (non-zero is true).
Value truthOf(OpBuilder &b, Location l, Value scalarTensor) {
  Value v = tensor::ExtractOp::create(b, l, scalarTensor, ValueRange{});
  return isNonZero(b, l, v);
}

/// A dynamic start: the scalar tensor's value as an index, clamped to
/// [0, dim - length] as Nx clamps slice starts.
Value clampedStart(OpBuilder &b, Location l, Value scalarTensor, Type nxElem, int64_t dim, int64_t length) {
  Value v = tensor::ExtractOp::create(b, l, scalarTensor, ValueRange{});
  Value idx = isUnsigned(nxElem) ? (Value)arith::IndexCastUIOp::create(b, l, b.getIndexType(), v)
                                 : (Value)arith::IndexCastOp::create(b, l, b.getIndexType(), v);
  Value lo = arith::ConstantIndexOp::create(b, l, 0);
  Value hi = arith::ConstantIndexOp::create(b, l, dim - length);
  if (isUnsigned(nxElem)) return arith::MinUIOp::create(b, l, idx, hi);
  return arith::MaxSIOp::create(b, l, lo, arith::MinSIOp::create(b, l, idx, hi));
}

/// A copy of `t` into a fresh tensor, so that in-place updates never write
/// into a buffer the function does not own (inputs are read-only).
Value freshCopy(OpBuilder &b, Location l, Value t) {
  auto type = llvm::cast<RankedTensorType>(t.getType());
  // A named copy: canonicalization folds identity linalg.generic ops away.
  return linalg::CopyOp::create(b, l, t, emptyTensor(b, l, type)).getResult(0);
}

struct CondLowering : public OpConversionPattern<nx::CondOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::CondOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertTypes(op.getResultTypes(), types))) return failure();
    Location l = op.getLoc();
    auto ifOp = scf::IfOp::create(rw, l, types, truthOf(rw, l, adaptor.getPred()), /*addThenBlock=*/false,
                                  /*addElseBlock=*/false);
    rw.inlineRegionBefore(op.getThenRegion(), ifOp.getThenRegion(), ifOp.getThenRegion().end());
    rw.inlineRegionBefore(op.getElseRegion(), ifOp.getElseRegion(), ifOp.getElseRegion().end());
    rw.replaceOp(op, ifOp.getResults());
    return success();
  }
};

struct WhileLowering : public OpConversionPattern<nx::WhileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::WhileOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertTypes(op.getResultTypes(), types))) return failure();
    Location l = op.getLoc();
    auto w = scf::WhileOp::create(rw, l, types, adaptor.getInits());
    rw.inlineRegionBefore(op.getCondition(), w.getBefore(), w.getBefore().end());
    rw.inlineRegionBefore(op.getBody(), w.getAfter(), w.getAfter().end());
    if (failed(rw.convertRegionTypes(&w.getBefore(), *getTypeConverter())) ||
        failed(rw.convertRegionTypes(&w.getAfter(), *getTypeConverter())))
      return failure();
    rw.replaceOp(op, w.getResults());
    return success();
  }
};

struct YieldLowering : public OpConversionPattern<nx::YieldOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::YieldOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Operation *parent = op->getParentOp();
    Location l = op.getLoc();
    if (auto w = llvm::dyn_cast<scf::WhileOp>(parent)) {
      if (op->getParentRegion() == &w.getBefore()) {
        Value c = truthOf(rw, l, adaptor.getValues()[0]);
        rw.replaceOpWithNewOp<scf::ConditionOp>(op, c, op->getBlock()->getArguments());
        return success();
      }
      // The next state: fresh tensors, so that no iteration's buffer is read
      // after the next one starts writing (loop buffers are reused).
      SmallVector<Value> next;
      for (Value v : adaptor.getValues()) next.push_back(freshCopy(rw, l, v));
      rw.replaceOpWithNewOp<scf::YieldOp>(op, next);
      return success();
    }
    if (llvm::isa<scf::IfOp>(parent)) {
      rw.replaceOpWithNewOp<scf::YieldOp>(op, adaptor.getValues());
      return success();
    }
    return failure();
  }
};

/// Offsets of a slice: static starts as attributes, dynamic ones (INT64_MIN)
/// from the next start tensor, clamped so that `lengths` fit.
SmallVector<OpFoldResult> sliceOffsets(OpBuilder &b, Location l, ArrayRef<int64_t> starts, ValueRange nxStarts,
                                       ValueRange startValues, RankedTensorType inType, ArrayRef<int64_t> lengths) {
  SmallVector<OpFoldResult> offsets;
  unsigned dyn = 0;
  for (int64_t d = 0; d < inType.getRank(); ++d) {
    if (starts[d] != INT64_MIN) {
      offsets.push_back(b.getIndexAttr(starts[d]));
      continue;
    }
    offsets.push_back(clampedStart(b, l, startValues[dyn], elemOf(nxStarts[dyn]), inType.getDimSize(d), lengths[d]));
    ++dyn;
  }
  return offsets;
}

struct SliceLowering : public OpConversionPattern<nx::SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::SliceOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto inType = llvm::cast<RankedTensorType>(op.getOperand().getType());
    auto outType = llvm::cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    SmallVector<OpFoldResult> offsets =
        sliceOffsets(rw, l, op.getStartIndices(), op.getStartTensors(), adaptor.getStartTensors(), inType, op.getLengths());
    SmallVector<OpFoldResult> sizes, strides;
    for (int64_t d = 0; d < inType.getRank(); ++d) {
      sizes.push_back(rw.getIndexAttr(outType.getDimSize(d)));
      strides.push_back(rw.getIndexAttr(op.getStrides()[d]));
    }
    Value r = tensor::ExtractSliceOp::create(rw, l, outType, adaptor.getOperand(), offsets, sizes, strides);
    rw.replaceOp(op, r);
    return success();
  }
};

struct PutSliceLowering : public OpConversionPattern<nx::PutSliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::PutSliceOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto inType = llvm::cast<RankedTensorType>(op.getOperand().getType());
    auto upType = llvm::cast<RankedTensorType>(op.getUpdate().getType());
    SmallVector<OpFoldResult> offsets = sliceOffsets(rw, l, op.getStartIndices(), op.getStartTensors(),
                                                     adaptor.getStartTensors(), inType, upType.getShape());
    SmallVector<OpFoldResult> sizes, strides;
    for (int64_t d = 0; d < inType.getRank(); ++d) {
      sizes.push_back(rw.getIndexAttr(upType.getDimSize(d)));
      strides.push_back(rw.getIndexAttr(1));
    }
    Value base = freshCopy(rw, l, adaptor.getOperand());
    rw.replaceOp(op, tensor::InsertSliceOp::create(rw, l, adaptor.getUpdate(), base, offsets, sizes, strides).getResult());
    return success();
  }
};

struct ConcatenateLowering : public OpConversionPattern<nx::ConcatenateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::ConcatenateOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    int64_t axis = op.getAxes()[0];
    Value acc = emptyTensor(rw, l, outType);
    int64_t at = 0;
    for (Value in : adaptor.getInputs()) {
      auto t = llvm::cast<RankedTensorType>(in.getType());
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (int64_t d = 0; d < t.getRank(); ++d) {
        offsets.push_back(rw.getIndexAttr(d == axis ? at : 0));
        sizes.push_back(rw.getIndexAttr(t.getDimSize(d)));
        strides.push_back(rw.getIndexAttr(1));
      }
      acc = tensor::InsertSliceOp::create(rw, l, in, acc, offsets, sizes, strides);
      at += t.getDimSize(axis);
    }
    rw.replaceOp(op, acc);
    return success();
  }
};

struct PadLowering : public OpConversionPattern<nx::PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::PadOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    auto inType = llvm::cast<RankedTensorType>(adaptor.getOperand().getType());
    Value v = tensor::ExtractOp::create(rw, l, adaptor.getValue(), ValueRange{});
    Value acc = linalg::FillOp::create(rw, l, ValueRange{v}, ValueRange{emptyTensor(rw, l, outType)}).getResult(0);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t d = 0; d < inType.getRank(); ++d) {
      offsets.push_back(rw.getIndexAttr(op.getLow()[d]));
      sizes.push_back(rw.getIndexAttr(inType.getDimSize(d)));
      strides.push_back(rw.getIndexAttr(op.getInterior()[d] + 1));
    }
    if (inType.getNumElements() > 0)
      acc = tensor::InsertSliceOp::create(rw, l, adaptor.getOperand(), acc, offsets, sizes, strides);
    rw.replaceOp(op, acc);
    return success();
  }
};

struct ReverseLowering : public OpConversionPattern<nx::ReverseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::ReverseOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    unsigned rank = outType.getRank();
    SmallVector<AffineExpr> exprs;
    for (unsigned d = 0; d < rank; ++d) {
      AffineExpr e = rw.getAffineDimExpr(d);
      if (llvm::is_contained(op.getAxes(), (int64_t)d)) e = rw.getAffineConstantExpr(outType.getDimSize(d) - 1) - e;
      exprs.push_back(e);
    }
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value r = genericOp(rw, l, outType, adaptor.getOperand(), {AffineMap::get(rank, 0, exprs, rw.getContext())},
                        emptyTensor(rw, l, outType), rw.getMultiDimIdentityMap(rank), iters,
                        [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    rw.replaceOp(op, r);
    return success();
  }
};

/// argmax/argmin: one reduction with two accumulators (value, index); NaN
/// counts as the extreme, ties go to the lowest (or highest) index.
template <typename OpTy, bool IsMax>
struct ArgReduceLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(this->getTypeConverter()->convertType(op.getType()));
    auto inType = llvm::cast<RankedTensorType>(adaptor.getOperand().getType());
    Type nxIn = elemOf(op.getOperand());
    Type et = inType.getElementType(), it = outType.getElementType();
    int64_t axis = op.getAxes()[0];
    bool high = op.getTieBreak()[0] != 0;
    bool isF = llvm::isa<FloatType>(et);
    unsigned rank = inType.getRank();
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iters;
    for (unsigned d = 0; d < rank; ++d) {
      iters.push_back((int64_t)d == axis ? utils::IteratorType::reduction : utils::IteratorType::parallel);
      if ((int64_t)d != axis) outExprs.push_back(rw.getAffineDimExpr(d));
    }
    auto valType = RankedTensorType::get(outType.getShape(), et);
    Value valInit = filled(rw, l, valType, reductionInit(rw, IsMax ? "reduce_max" : "reduce_min", nxIn, et));
    Value idxInit = filled(rw, l, outType, rw.getIntegerAttr(it, 0));
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, rw.getContext());
    SmallVector<AffineMap> maps = {rw.getMultiDimIdentityMap(rank), outMap, outMap};
    bool uns = isUnsigned(nxIn);
    auto g = linalg::GenericOp::create(
        rw, l, TypeRange{valType, outType}, adaptor.getOperand(), ValueRange{valInit, idxInit}, maps, iters,
        [&](OpBuilder &b, Location nl, ValueRange a) {
          Value x = a[0], acc = a[1], idx = a[2];
          Value better, equal;
          if (isF) {
            auto pred = IsMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT;
            Value xNan = arith::CmpFOp::create(b, nl, arith::CmpFPredicate::UNO, x, x);
            Value accNan = arith::CmpFOp::create(b, nl, arith::CmpFPredicate::UNO, acc, acc);
            Value notAccNan = arith::XOrIOp::create(b, nl, accNan, arith::ConstantOp::create(b, nl, b.getBoolAttr(true)));
            better = arith::OrIOp::create(b, nl, arith::CmpFOp::create(b, nl, pred, x, acc),
                                          arith::AndIOp::create(b, nl, xNan, notAccNan));
            equal = arith::OrIOp::create(b, nl, arith::CmpFOp::create(b, nl, arith::CmpFPredicate::OEQ, x, acc),
                                         arith::AndIOp::create(b, nl, xNan, accNan));
          } else {
            auto pred = IsMax ? (uns ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                              : (uns ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
            better = arith::CmpIOp::create(b, nl, pred, x, acc);
            equal = arith::CmpIOp::create(b, nl, arith::CmpIPredicate::eq, x, acc);
          }
          Value i = linalg::IndexOp::create(b, nl, axis);
          Value first = arith::CmpIOp::create(b, nl, arith::CmpIPredicate::eq, i, arith::ConstantIndexOp::create(b, nl, 0));
          Value take = arith::OrIOp::create(b, nl, better, first);
          if (high) take = arith::OrIOp::create(b, nl, take, equal);
          Value iv = arith::IndexCastOp::create(b, nl, it, i);
          linalg::YieldOp::create(b, nl, ValueRange{arith::SelectOp::create(b, nl, take, x, acc),
                                                    arith::SelectOp::create(b, nl, take, iv, idx)});
        });
    rw.replaceOp(op, g.getResult(1));
    return success();
  }
};

/// Cumulative ops: a loop over the axis; step k combines result[k-1] with
/// input[k] and writes result[k].
template <typename OpTy>
struct ScanLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto type = llvm::cast<RankedTensorType>(this->getTypeConverter()->convertType(op.getType()));
    int64_t axis = op.getAxes()[0];
    int64_t n = type.getDimSize(axis);
    StringRef name = op->getName().stripDialect();
    std::string combine = name == "cumulative_sum" ? "sum" : name == "cumulative_product" ? "product"
                          : name == "cumulative_max" ? "reduce_max" : "reduce_min";
    Type nxElem = elemOf(op.getOperand());
    Value in = adaptor.getOperand();
    if (n <= 1 || type.getNumElements() == 0) {
      rw.replaceOp(op, in);
      return success();
    }
    SmallVector<int64_t> sliceShape(type.getShape());
    sliceShape[axis] = 1;
    auto sliceType = RankedTensorType::get(sliceShape, type.getElementType());
    auto sliceAt = [&](OpBuilder &b, Value t, OpFoldResult k) {
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        offsets.push_back(d == axis ? k : b.getIndexAttr(0));
        sizes.push_back(b.getIndexAttr(sliceShape[d]));
        strides.push_back(b.getIndexAttr(1));
      }
      return std::make_tuple(offsets, sizes, strides);
    };
    // result = copy of the input; then result[k] = combine(result[k-1], input[k]).
    Value init = freshCopy(rw, l, in);
    Value lb = arith::ConstantIndexOp::create(rw, l, 1), ub = arith::ConstantIndexOp::create(rw, l, n),
          one = arith::ConstantIndexOp::create(rw, l, 1);
    auto loop = scf::ForOp::create(
        rw, l, lb, ub, one, ValueRange{init}, [&](OpBuilder &b, Location nl, Value k, ValueRange iter) {
          Value km1 = arith::SubIOp::create(b, nl, k, one);
          auto [po, ps, pst] = sliceAt(b, iter[0], km1);
          Value prev = tensor::ExtractSliceOp::create(b, nl, sliceType, iter[0], po, ps, pst);
          auto [co, cs, cst] = sliceAt(b, iter[0], k);
          Value cur = tensor::ExtractSliceOp::create(b, nl, sliceType, iter[0], co, cs, cst);
          Value next = elementwise(b, nl, sliceType, ValueRange{cur, prev}, [&](OpBuilder &bb, Location ll, ValueRange a) {
            return reductionCombine(bb, ll, combine, nxElem, a[0], a[1]);
          });
          Value updated = tensor::InsertSliceOp::create(b, nl, next, iter[0], co, cs, cst);
          scf::YieldOp::create(b, nl, updated);
        });
    rw.replaceOp(op, loop.getResult(0));
    return success();
  }
};

/// An integer index (a scalar of nx type `nxElem`) as an `index`, clamped to
/// [0, dim - 1] so that no read leaves the tensor.
Value clampedIndex(OpBuilder &b, Location l, Value v, Type nxElem, int64_t dim) {
  Value idx = isUnsigned(nxElem) ? (Value)arith::IndexCastUIOp::create(b, l, b.getIndexType(), v)
                                 : (Value)arith::IndexCastOp::create(b, l, b.getIndexType(), v);
  Value hi = arith::ConstantIndexOp::create(b, l, dim - 1);
  if (isUnsigned(nxElem)) return arith::MinUIOp::create(b, l, idx, hi);
  return arith::MaxSIOp::create(b, l, arith::ConstantIndexOp::create(b, l, 0), arith::MinSIOp::create(b, l, idx, hi));
}

template <typename OpTy>
struct GatherLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(this->getTypeConverter()->convertType(op.getType()));
    Value t = adaptor.getOperand(), idx = adaptor.getIndices();
    auto tType = llvm::cast<RankedTensorType>(t.getType());
    auto iType = llvm::cast<RankedTensorType>(idx.getType());
    Type nxIdx = elemOf(op.getIndices());
    ArrayRef<int64_t> axes = op.getAxes();
    StringRef name = op->getName().stripDialect();
    Value r = fromCoordinates(rw, l, outType, [&](OpBuilder &b, Location nl, ArrayRef<Value> i) -> Value {
      SmallVector<Value> tc;
      auto index = [&](ArrayRef<Value> ic, int64_t dim) {
        Value v = tensor::ExtractOp::create(b, nl, idx, ic);
        return clampedIndex(b, nl, v, nxIdx, dim);
      };
      if (name == "take") {
        int64_t axis = axes[0], q = iType.getRank();
        for (int64_t d = 0; d < axis; ++d) tc.push_back(i[d]);
        tc.push_back(index(i.slice(axis, q), tType.getDimSize(axis)));
        for (int64_t d = axis + 1; d < tType.getRank(); ++d) tc.push_back(i[d - 1 + q]);
      } else if (name == "take_along_axis") {
        for (int64_t d = 0; d < tType.getRank(); ++d)
          tc.push_back(d == axes[0] ? index(i, tType.getDimSize(d)) : i[d]);
      } else { // gather
        int64_t q = iType.getRank() - 1, next = q;
        for (int64_t d = 0; d < tType.getRank(); ++d) {
          auto at = llvm::find(axes, d);
          if (at == axes.end()) {
            tc.push_back(i[next++]);
            continue;
          }
          SmallVector<Value> ic(i.begin(), i.begin() + q);
          ic.push_back(arith::ConstantIndexOp::create(b, nl, at - axes.begin()));
          tc.push_back(index(ic, tType.getDimSize(d)));
        }
      }
      return tensor::ExtractOp::create(b, nl, t, tc);
    });
    rw.replaceOp(op, r);
    return success();
  }
};

/// Stable argsort by ranks: position(i) = #{j : x[j] comes before x[i]},
/// then result[position(i)] = i. Quadratic in the axis length, branch-free.
struct ArgsortLowering : public OpConversionPattern<nx::ArgsortOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::ArgsortOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value x = adaptor.getOperand();
    auto xType = llvm::cast<RankedTensorType>(x.getType());
    Type et = xType.getElementType(), nxIn = elemOf(op.getOperand());
    bool isF = llvm::isa<FloatType>(et), uns = isUnsigned(nxIn), desc = op.getDirection()[0] != 0;
    int64_t axis = op.getAxes()[0];
    unsigned rank = xType.getRank(), extra = rank;
    MLIRContext *ctx = rw.getContext();
    SmallVector<AffineExpr> at, other;
    for (unsigned d = 0; d < rank; ++d) {
      at.push_back(rw.getAffineDimExpr(d));
      other.push_back(rw.getAffineDimExpr((int64_t)d == axis ? extra : d));
    }
    SmallVector<utils::IteratorType> iters(rank + 1, utils::IteratorType::parallel);
    iters[extra] = utils::IteratorType::reduction;
    Type i64 = rw.getI64Type();
    auto posType = RankedTensorType::get(xType.getShape(), i64);
    Value posInit = filled(rw, l, posType, rw.getIntegerAttr(i64, 0));
    // Dims: the tensor's (axis = i) and one more (j): ins x[i], x[j].
    Value pos = genericOp(rw, l, posType, ValueRange{x, x},
                          {AffineMap::get(rank + 1, 0, at, ctx), AffineMap::get(rank + 1, 0, other, ctx)}, posInit,
                          AffineMap::get(rank + 1, 0, at, ctx), iters, [&](OpBuilder &b, Location nl, ValueRange a) {
                            Value xi = a[0], xj = a[1], acc = a[2];
                            Value first, equal;
                            if (isF) {
                              Value ni = arith::CmpFOp::create(b, nl, arith::CmpFPredicate::UNO, xi, xi);
                              Value nj = arith::CmpFOp::create(b, nl, arith::CmpFPredicate::UNO, xj, xj);
                              Value t = arith::ConstantOp::create(b, nl, b.getBoolAttr(true));
                              // asc: j before i if xj < xi or (xi is NaN and xj is not); desc mirrors it.
                              first = desc ? arith::OrIOp::create(b, nl, arith::CmpFOp::create(b, nl, arith::CmpFPredicate::OGT, xj, xi),
                                                                  arith::AndIOp::create(b, nl, nj, arith::XOrIOp::create(b, nl, ni, t)))
                                           : arith::OrIOp::create(b, nl, arith::CmpFOp::create(b, nl, arith::CmpFPredicate::OLT, xj, xi),
                                                                  arith::AndIOp::create(b, nl, ni, arith::XOrIOp::create(b, nl, nj, t)));
                              equal = arith::OrIOp::create(b, nl, arith::CmpFOp::create(b, nl, arith::CmpFPredicate::OEQ, xj, xi),
                                                           arith::AndIOp::create(b, nl, ni, nj));
                            } else {
                              auto p = desc ? (uns ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                                            : (uns ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
                              first = arith::CmpIOp::create(b, nl, p, xj, xi);
                              equal = arith::CmpIOp::create(b, nl, arith::CmpIPredicate::eq, xj, xi);
                            }
                            Value i = linalg::IndexOp::create(b, nl, axis), j = linalg::IndexOp::create(b, nl, extra);
                            Value earlier = arith::CmpIOp::create(b, nl, arith::CmpIPredicate::ult, j, i);
                            Value before = arith::OrIOp::create(b, nl, first, arith::AndIOp::create(b, nl, equal, earlier));
                            return (Value)arith::AddIOp::create(b, nl, acc, arith::ExtUIOp::create(b, nl, i64, before));
                          });
    // result[k] = the i whose position is k (dims: the tensor's with axis = k, and i).
    Type it = outType.getElementType();
    Value outInit = filled(rw, l, outType, rw.getIntegerAttr(it, 0));
    Value r = genericOp(rw, l, outType, ValueRange{pos}, {AffineMap::get(rank + 1, 0, other, ctx)}, outInit,
                        AffineMap::get(rank + 1, 0, at, ctx), iters, [&](OpBuilder &b, Location nl, ValueRange a) {
                          Value k = arith::IndexCastOp::create(b, nl, i64, linalg::IndexOp::create(b, nl, axis));
                          Value i = arith::IndexCastOp::create(b, nl, it, linalg::IndexOp::create(b, nl, extra));
                          Value hit = arith::CmpIOp::create(b, nl, arith::CmpIPredicate::eq, a[0], k);
                          return (Value)arith::AddIOp::create(
                              b, nl, a[1], arith::SelectOp::create(b, nl, hit, i, iconst(b, nl, it, 0)));
                        });
    rw.replaceOp(op, r);
    return success();
  }
};

/// indexed_add/indexed_put: a loop over the index rows, in order; rows with
/// an index out of range are skipped (as XLA's scatter does).
template <typename OpTy, bool Add>
struct ScatterLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    Value idx = adaptor.getIndices(), upd = adaptor.getUpdates();
    auto tType = llvm::cast<RankedTensorType>(adaptor.getOperand().getType());
    auto iType = llvm::cast<RankedTensorType>(idx.getType());
    Type nxIdx = elemOf(op.getIndices());
    bool isF = llvm::isa<FloatType>(tType.getElementType());
    Value base = freshCopy(rw, l, adaptor.getOperand());
    Value lb = arith::ConstantIndexOp::create(rw, l, 0), ub = arith::ConstantIndexOp::create(rw, l, iType.getDimSize(0)),
          one = arith::ConstantIndexOp::create(rw, l, 1);
    ArrayRef<int64_t> axes = op.getAxes();
    auto loop = scf::ForOp::create(rw, l, lb, ub, one, ValueRange{base}, [&](OpBuilder &b, Location nl, Value r, ValueRange it) {
      SmallVector<Value> coords(tType.getRank());
      Value ok = arith::ConstantOp::create(b, nl, b.getBoolAttr(true));
      for (size_t c = 0; c < axes.size(); ++c) {
        Value v = tensor::ExtractOp::create(b, nl, idx, ValueRange{r, arith::ConstantIndexOp::create(b, nl, c)});
        Value i = isUnsigned(nxIdx) ? (Value)arith::IndexCastUIOp::create(b, nl, b.getIndexType(), v)
                                    : (Value)arith::IndexCastOp::create(b, nl, b.getIndexType(), v);
        Value inRange = arith::CmpIOp::create(b, nl, arith::CmpIPredicate::ult, i,
                                              arith::ConstantIndexOp::create(b, nl, tType.getDimSize(axes[c])));
        ok = arith::AndIOp::create(b, nl, ok, inRange);
        coords[axes[c]] = i;
      }
      Value u = tensor::ExtractOp::create(b, nl, upd, ValueRange{r});
      auto ifOp = scf::IfOp::create(
          b, nl, ok,
          [&](OpBuilder &bb, Location ll) {
            Value v = u;
            if (Add) {
              Value old = tensor::ExtractOp::create(bb, ll, it[0], coords);
              v = isF ? fadd(bb, ll, old, u) : (Value)arith::AddIOp::create(bb, ll, old, u);
            }
            scf::YieldOp::create(bb, ll, ValueRange{tensor::InsertOp::create(bb, ll, v, it[0], coords).getResult()});
          },
          [&](OpBuilder &bb, Location ll) { scf::YieldOp::create(bb, ll, it[0]); });
      scf::YieldOp::create(b, nl, ifOp.getResults());
    });
    rw.replaceOp(op, loop.getResult(0));
    return success();
  }
};

/// Window reductions: output dims, then window dims (reductions); the
/// operand is read at o * stride + w * dilation.
template <typename OpTy>
struct WindowLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(this->getTypeConverter()->convertType(op.getType()));
    unsigned rank = outType.getRank();
    std::string name = op->getName().stripDialect().str();
    std::string combine = name == "window_sum" ? "sum" : name == "window_product" ? "product"
                          : name == "window_max" ? "reduce_max" : "reduce_min";
    Type nxElem = elemOf(op.getOperand()), et = outType.getElementType();
    SmallVector<AffineExpr> inExprs, outExprs;
    SmallVector<utils::IteratorType> iters;
    for (unsigned d = 0; d < rank; ++d) {
      inExprs.push_back(rw.getAffineDimExpr(d) * op.getStrides()[d] + rw.getAffineDimExpr(rank + d) * op.getDilations()[d]);
      outExprs.push_back(rw.getAffineDimExpr(d));
      iters.push_back(utils::IteratorType::parallel);
    }
    for (unsigned d = 0; d < rank; ++d) iters.push_back(utils::IteratorType::reduction);
    // The window's extent comes from a shape-only operand (linalg infers loop
    // bounds from operand shapes).
    auto winType = RankedTensorType::get(op.getWindowDims(), et);
    SmallVector<AffineExpr> winExprs;
    for (unsigned d = 0; d < rank; ++d) winExprs.push_back(rw.getAffineDimExpr(rank + d));
    MLIRContext *ctx = rw.getContext();
    Type acc = accumulatorType(rw, combine, et);
    auto accType = RankedTensorType::get(outType.getShape(), acc);
    Value init = filled(rw, l, accType, reductionInit(rw, combine, nxElem, acc));
    Value win = emptyTensor(rw, l, winType);
    Value r = genericOp(rw, l, accType, ValueRange{adaptor.getOperand(), win},
                        {AffineMap::get(2 * rank, 0, inExprs, ctx), AffineMap::get(2 * rank, 0, winExprs, ctx)}, init,
                        AffineMap::get(2 * rank, 0, outExprs, ctx), iters, [&](OpBuilder &b, Location nl, ValueRange a) {
                          return reductionCombine(b, nl, combine, nxElem, widened(b, nl, a[0], acc), a[2]);
                        });
    rw.replaceOp(op, narrowed(rw, l, r, outType));
    return success();
  }
};

/// Convolution: loops (batch, group, out channel in group, out spatial...,
/// in channel in group, kernel spatial...), the last ones reductions.
struct ConvLowering : public OpConversionPattern<nx::ConvOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::ConvOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    auto xType = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
    auto kType = llvm::cast<RankedTensorType>(adaptor.getKernel().getType());
    int64_t spatial = xType.getRank() - 2, groups = op.getFeatureGroups()[0];
    int64_t cin = kType.getDimSize(1), cout = kType.getDimSize(0) / groups;
    // dims: 0 b, 1 g, 2 o, 3.. out spatial, then i, then kernel spatial.
    unsigned nd = 3 + 2 * spatial + 1, iDim = 3 + spatial, kDim0 = iDim + 1;
    auto d = [&](unsigned k) { return rw.getAffineDimExpr(k); };
    SmallVector<AffineExpr> xe = {d(0), d(1) * cin + d(iDim)}, ke = {d(1) * cout + d(2), d(iDim)},
                            oe = {d(0), d(1) * cout + d(2)};
    for (int64_t s = 0; s < spatial; ++s) {
      xe.push_back(d(3 + s) * op.getStrides()[s] + d(kDim0 + s) * op.getKernelDilation()[s]);
      ke.push_back(d(kDim0 + s));
      oe.push_back(d(3 + s));
    }
    SmallVector<utils::IteratorType> iters(nd, utils::IteratorType::parallel);
    for (unsigned k = iDim; k < nd; ++k) iters[k] = utils::IteratorType::reduction;
    // The group and in-group channel extents come from a shape-only operand.
    SmallVector<int64_t> extents = {groups, cout};
    auto extType = RankedTensorType::get(extents, outType.getElementType());
    MLIRContext *ctx = rw.getContext();
    Type acc = accumulatorType(rw, "sum", outType.getElementType());
    auto accType = RankedTensorType::get(outType.getShape(), acc);
    Value init = filled(rw, l, accType, rw.getFloatAttr(acc, 0.0));
    Value r = genericOp(rw, l, accType, ValueRange{adaptor.getInput(), adaptor.getKernel(), emptyTensor(rw, l, extType)},
                        {AffineMap::get(nd, 0, xe, ctx), AffineMap::get(nd, 0, ke, ctx),
                         AffineMap::get(nd, 0, {d(1), d(2)}, ctx)},
                        init, AffineMap::get(nd, 0, oe, ctx), iters, [&](OpBuilder &b, Location nl, ValueRange a) {
                          Value x = widened(b, nl, a[0], acc);
                          Value k = widened(b, nl, a[1], acc);
                          return faddFast(b, nl, a[3], fmulFast(b, nl, x, k));
                        });
    rw.replaceOp(op, narrowed(rw, l, r, outType));
    return success();
  }
};

/// print_value (JIT only): calls into the host's printer, nxc_print_begin
/// with the header (a constant global's address), nxc_print_bits with every
/// element's bits zero-extended to 64 (row-major loops), nxc_print_end.
struct PrintValueLowering : public OpConversionPattern<nx::PrintValueOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::PrintValueOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    Type i64 = rw.getI64Type();
    auto declare = [&](StringRef name, TypeRange args) {
      if (module.lookupSymbol(name)) return;
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToStart(module.getBody());
      func::FuncOp::create(rw, l, name, rw.getFunctionType(args, {})).setPrivate();
    };
    declare("nxc_print_begin", {i64});
    declare("nxc_print_bits", {i64});
    declare("nxc_print_end", {});
    // The header, NUL-terminated, as a private constant.
    std::string text = op.getHeader().str();
    SmallVector<int8_t> bytes(text.begin(), text.end());
    bytes.push_back(0);
    auto bytesType = MemRefType::get({(int64_t)bytes.size()}, rw.getI8Type());
    std::string name;
    for (int k = 0; name.empty() || module.lookupSymbol(name); ++k) name = "nxc_print_header_" + std::to_string(k);
    {
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToStart(module.getBody());
      auto data = DenseElementsAttr::get(RankedTensorType::get({(int64_t)bytes.size()}, rw.getI8Type()),
                                         ArrayRef<int8_t>(bytes));
      memref::GlobalOp::create(rw, l, name, rw.getStringAttr("private"), bytesType, data, /*constant=*/true,
                               /*alignment=*/IntegerAttr());
    }
    Value header = memref::GetGlobalOp::create(rw, l, bytesType, name);
    Value address = arith::IndexCastOp::create(rw, l, i64, memref::ExtractAlignedPointerAsIndexOp::create(rw, l, header));
    func::CallOp::create(rw, l, "nxc_print_begin", TypeRange{}, ValueRange{address});
    for (Value t : adaptor.getInputs()) {
      auto type = llvm::cast<RankedTensorType>(t.getType());
      std::function<void(OpBuilder &, Location, SmallVector<Value>)> loops = [&](OpBuilder &b, Location nl,
                                                                                 SmallVector<Value> ivs) {
        unsigned d = ivs.size();
        if (d == type.getRank()) {
          Value e = tensor::ExtractOp::create(b, nl, t, ivs);
          Type et = e.getType();
          unsigned width = et.getIntOrFloatBitWidth();
          if (llvm::isa<FloatType>(et)) e = arith::BitcastOp::create(b, nl, b.getIntegerType(width), e);
          if (width < 64) e = arith::ExtUIOp::create(b, nl, i64, e);
          func::CallOp::create(b, nl, "nxc_print_bits", TypeRange{}, ValueRange{e});
          return;
        }
        Value lo = arith::ConstantIndexOp::create(b, nl, 0), one = arith::ConstantIndexOp::create(b, nl, 1);
        Value hi = arith::ConstantIndexOp::create(b, nl, type.getDimSize(d));
        scf::ForOp::create(b, nl, lo, hi, one, ValueRange{}, [&](OpBuilder &ib, Location il, Value iv, ValueRange) {
          SmallVector<Value> next = ivs;
          next.push_back(iv);
          loops(ib, il, next);
          scf::YieldOp::create(ib, il);
        });
      };
      loops(rw, l, {});
    }
    func::CallOp::create(rw, l, "nxc_print_end", TypeRange{}, ValueRange{});
    rw.eraseOp(op);
    return success();
  }
};

/// CPU: a convolution over enough input channels runs as one matrix product
/// (im2col). The input's windows become a [N, C * taps, output points]
/// matrix (channel-major, as the kernel [O, C, taps...] already is), and a
/// dot of the kernel as [O, C * taps] with it does the rest: the
/// blocked products of dots (register blocks, the thread pool) then serve
/// convolutions too. The copies cost taps x the input; the direct loop nest
/// it replaces ran its 3-tap kernel loop innermost (W9, a 3x3 ResNet layer of
/// 64 channels: 77 ms before). Float types whose dots and convolutions
/// accumulate alike (f32, f64), one feature group, at least 8 input channels
/// and at most 49 taps; the rest keeps the loop nest.
void convolutionsAsDots(ModuleOp module) {
  SmallVector<nx::ConvOp> convs;
  module.walk([&](nx::ConvOp op) { convs.push_back(op); });
  for (nx::ConvOp op : convs) {
    auto xType = llvm::cast<RankedTensorType>(op.getInput().getType());
    auto kType = llvm::cast<RankedTensorType>(op.getKernel().getType());
    auto outType = llvm::cast<RankedTensorType>(op.getType());
    Type e = outType.getElementType();
    if (!(e.isF32() || e.isF64()) || op.getFeatureGroups()[0] != 1 || !xType.hasStaticShape() ||
        !kType.hasStaticShape() || !outType.hasStaticShape())
      continue;
    int64_t rank = xType.getRank(), spatial = rank - 2;
    int64_t n = xType.getDimSize(0), c = xType.getDimSize(1), o = kType.getDimSize(0);
    int64_t taps = 1, points = 1;
    for (int64_t s = 0; s < spatial; ++s) {
      taps *= kType.getDimSize(2 + s);
      points *= outType.getDimSize(2 + s);
    }
    if (c < 8 || taps > 49 || points == 0 || n == 0 || o == 0) continue;
    OpBuilder b(op);
    Location l = op.getLoc();
    // The windows in one element-wise op, channel-major: columns[n, c, t...,
    // p...] = x[n, c, p * stride + t * dilation] for every kernel tap t and
    // output point p, flattened to [N, C * taps, points] (contiguous, so in
    // place). One loop nest that runs on the pool by channels; it was a
    // strided copy per tap, each serial.
    SmallVector<int64_t> windowShape = {n, c};
    for (int64_t s = 0; s < spatial; ++s) windowShape.push_back(kType.getDimSize(2 + s));
    for (int64_t s = 0; s < spatial; ++s) windowShape.push_back(outType.getDimSize(2 + s));
    int64_t loops = 2 + 2 * spatial;
    SmallVector<AffineExpr> inputIndex = {b.getAffineDimExpr(0), b.getAffineDimExpr(1)};
    for (int64_t s = 0; s < spatial; ++s)
      inputIndex.push_back(b.getAffineDimExpr(2 + spatial + s) * op.getStrides()[s] +
                           b.getAffineDimExpr(2 + s) * op.getKernelDilation()[s]);
    auto windowType = RankedTensorType::get(windowShape, e);
    Value windows = genericOp(b, l, windowType, ValueRange{op.getInput()},
                              {AffineMap::get(loops, 0, inputIndex, b.getContext())}, emptyTensor(b, l, windowType),
                              b.getMultiDimIdentityMap(loops),
                              SmallVector<utils::IteratorType>(loops, utils::IteratorType::parallel),
                              [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    Value columns = nx::ReshapeOp::create(b, l, RankedTensorType::get({n, c * taps, points}, e), windows);
    // The kernel [O, C, taps...] is already channel-major.
    Value kernel = nx::ReshapeOp::create(b, l, RankedTensorType::get({o, c * taps}, e), op.getKernel());
    Value product;
    if (n == 1) {
      Value m = nx::ReshapeOp::create(b, l, RankedTensorType::get({taps * c, points}, e), columns);
      product = nx::DotOp::create(b, l, RankedTensorType::get({o, points}, e), kernel, m, b.getDenseI64ArrayAttr({1}),
                                  b.getDenseI64ArrayAttr({}), b.getDenseI64ArrayAttr({0}), b.getDenseI64ArrayAttr({}));
    } else {
      product = nx::DotOp::create(b, l, RankedTensorType::get({o, n, points}, e), kernel, columns,
                                  b.getDenseI64ArrayAttr({1}), b.getDenseI64ArrayAttr({}), b.getDenseI64ArrayAttr({1}),
                                  b.getDenseI64ArrayAttr({}));
      product = nx::TransposeOp::create(b, l, RankedTensorType::get({n, o, points}, e), product,
                                        b.getDenseI64ArrayAttr({1, 0, 2}));
    }
    Value result = nx::ReshapeOp::create(b, l, outType, product);
    op.replaceAllUsesWith(result);
    op.erase();
  }
}

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
    if (convAsDot) convolutionsAsDots(getOperation());
    TypeConverter tc;
    tc.addConversion([](Type t) { return t; });
    tc.addConversion([](IntegerType t) -> Type { return signless(t); });
    tc.addConversion([](RankedTensorType t) -> Type {
      return RankedTensorType::get(t.getShape(), signless(t.getElementType()));
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
    patterns.add<ElementwiseLowering, SimpleLowering<nx::ConstantOp>, SimpleLowering<nx::BitcastOp>,
                 SimpleLowering<nx::AsTypeOp>, SimpleLowering<nx::SelectOp>, SimpleLowering<nx::BroadcastOp>,
                 SimpleLowering<nx::TransposeOp>, SimpleLowering<nx::ReshapeOp>, SimpleLowering<nx::IotaOp>, ReduceLowering<nx::ProductOp>, ReduceLowering<nx::AllOp>,
                 ReduceLowering<nx::AnyOp>>(tc, ctx);
    patterns.add<ReduceLowering<nx::SumOp>, ReduceLowering<nx::ReduceMaxOp>, ReduceLowering<nx::ReduceMinOp>>(
        tc, ctx, blockedReductions.getValue());
    patterns.add<DotLowering>(tc, ctx, longContraction.getValue());
    patterns.add<CondLowering, WhileLowering, YieldLowering, SliceLowering, PutSliceLowering, ConcatenateLowering,
                 PadLowering, ReverseLowering, ArgReduceLowering<nx::ArgmaxOp, true>,
                 ArgReduceLowering<nx::ArgminOp, false>, ScanLowering<nx::CumulativeSumOp>,
                 ScanLowering<nx::CumulativeProductOp>, ScanLowering<nx::CumulativeMaxOp>,
                 ScanLowering<nx::CumulativeMinOp>, GatherLowering<nx::TakeOp>, GatherLowering<nx::TakeAlongAxisOp>,
                 GatherLowering<nx::GatherOp>, ArgsortLowering, ScatterLowering<nx::IndexedAddOp, true>,
                 ScatterLowering<nx::IndexedPutOp, false>, WindowLowering<nx::WindowSumOp>,
                 WindowLowering<nx::WindowProductOp>, WindowLowering<nx::WindowMaxOp>, WindowLowering<nx::WindowMinOp>,
                 ConvLowering, PrintValueLowering>(
        tc, ctx, /*benefit=*/2);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, tc);
    populateReturnOpTypeConversionPattern(patterns, tc);
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns)))) signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createLowerNxToLinalgPass() { return std::make_unique<LowerNxToLinalgPass>(); }

} // namespace nxc
