//===- ScalarMath.cpp - Scalar bodies of nx's math functions --------------===//
//
// See ScalarMath.h. Polynomial coefficients: scripts/fit_narrow_math.py
// prints the ones of the atan family and pow.
//
//===----------------------------------------------------------------------===//

#include "ScalarMath.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace nxc {
namespace {

/// sum(coeffs[i] * u^(n-1-i)) (highest power first) in f64 as four
/// interleaved Horner chains in u^4, P0(u^4) + u P1(u^4) + u^2 P2(u^4) +
/// u^3 P3(u^4), multiply-then-add: a quarter of the dependent steps of one
/// chain, which left long polynomials waiting on latency (erf's two
/// 16-coefficient chains: 5.7 ns per element, 4.3 with this).
Value polynomialF64(OpBuilder &b, Location l, llvm::ArrayRef<double> coeffs, Value u) {
  Type f64 = b.getF64Type();
  size_t n = coeffs.size();
  if (n < 8) {
    Value acc = fconst(b, l, f64, coeffs[0]);
    for (double k : coeffs.drop_front()) acc = fadd(b, l, fmul(b, l, acc, u), fconst(b, l, f64, k));
    return acc;
  }
  Value u2 = fmul(b, l, u, u), u4 = fmul(b, l, u2, u2);
  Value part[4];
  for (size_t j = 0; j < 4; ++j) {
    // The coefficients of u^(4m + j), highest m first.
    Value acc;
    for (size_t i = (n - 1 - j) / 4 * 4 + j + 1; i-- > 0;) {
      if (i % 4 != j) continue;
      Value c = fconst(b, l, f64, coeffs[n - 1 - i]);
      acc = acc ? fadd(b, l, fmul(b, l, acc, u4), c) : c;
    }
    part[j] = acc;
  }
  return fadd(b, l, fadd(b, l, part[0], fmul(b, l, u, part[1])),
              fmul(b, l, u2, fadd(b, l, part[2], fmul(b, l, u, part[3]))));
}

/// An integer below 2^52 as f64, exactly: its bits below the exponent field
/// of 2^52, less 2^52. Two vector instructions where the conversion of a
/// 64-bit integer has none (x86 before AVX-512).
Value smallIntegerToF64(OpBuilder &b, Location l, Value u) {
  Type i64 = b.getI64Type(), f64 = b.getF64Type();
  Value biased = arith::OrIOp::create(b, l, u, iconst(b, l, i64, 0x4330000000000000ll));
  return fsub(b, l, arith::BitcastOp::create(b, l, f64, biased), fconst(b, l, f64, 0x1p52));
}

/// x * 2/pi = k + f (|f| <= 1/2) for f32 values |x| >= 2^22, exactly: x is
/// m * 2^E with a 24-bit integer m, and only the bits of 2/pi from 2^-(E-1)
/// on matter modulo 4, so m times a 128-bit window of 2/pi (two integer bits,
/// 126 fraction bits) gives k mod 4 and f to far more than f32 needs (the
/// Payne-Hanek reduction). Returns k mod 4 and f * pi/2 in f64, for |x| (the
/// caller flips signs).
///
/// Only operations that AVX2 has for 64-bit lanes: the products are of
/// 32-bit halves (vpmuludq), the conversions to f64 of integers below 2^32
/// (smallIntegerToF64). Each lane pays for this reduction, so it must
/// vectorize: 128-bit products and 64-bit conversions were split into
/// scalar code for every lane (a sin took ~6.7 ns per element and its code
/// ~2.4 KB of instructions per use).
std::pair<Value, Value> payneHanek(OpBuilder &b, Location l, Value absX32) {
  Type i64 = b.getI64Type(), i32 = b.getI32Type(), f64 = b.getF64Type();
  // 2/pi * 2^256, most significant word first.
  static const uint64_t kTwoOverPi[4] = {0xa2f9836e4e441529ull, 0xfc2757d1f534ddc0ull, 0xdb6295993c439041ull,
                                         0xfe5163abdebbc561ull};
  auto c = [&](uint64_t v) { return arith::ConstantOp::create(b, l, i64, b.getIntegerAttr(i64, (int64_t)v)); };
  auto shr = [&](Value v, int n) -> Value { return arith::ShRUIOp::create(b, l, v, c(n)); };
  auto shl = [&](Value v, int n) -> Value { return arith::ShLIOp::create(b, l, v, c(n)); };
  auto add = [&](Value x, Value y) -> Value { return arith::AddIOp::create(b, l, x, y); };
  auto low32 = [&](Value v) -> Value { return arith::AndIOp::create(b, l, v, c(0xffffffffull)); };
  Value bits = arith::ExtUIOp::create(b, l, i64, arith::BitcastOp::create(b, l, i32, absX32));
  Value biased = shr(bits, 23);
  Value m = arith::OrIOp::create(b, l, arith::AndIOp::create(b, l, bits, c(0x7fffff)), c(0x800000));
  // The window starts at bit E - 2 of 2/pi (E = biased - 150), counted here
  // from a zero word put in front (bit E + 62), and clamped for the |x|
  // whose result the caller does not use.
  Value start = arith::MinSIOp::create(
      b, l, arith::MaxSIOp::create(b, l, arith::SubIOp::create(b, l, biased, c(88)), c(0)), c(166));
  Value word = shr(start, 6);
  auto pickWord = [&](int offset) -> Value {
    // words[word + offset] of {0, kTwoOverPi[0..3]}, word in 0..2.
    auto w = [&](int i) { return i == 0 ? c(0) : c(kTwoOverPi[i - 1]); };
    Value v = arith::SelectOp::create(b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, word, c(1)),
                                      w(1 + offset), w(2 + offset));
    return arith::SelectOp::create(b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, word, c(0)), w(offset),
                                   v);
  };
  Value w0 = pickWord(0), w1 = pickWord(1), w2 = pickWord(2);
  Value o = arith::AndIOp::create(b, l, start, c(63));
  Value o0 = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, o, c(0));
  Value back = arith::AndIOp::create(b, l, arith::SubIOp::create(b, l, c(64), o), c(63));
  auto funnel = [&](Value hi, Value lo) -> Value {
    Value spill = arith::SelectOp::create(b, l, o0, c(0), arith::ShRUIOp::create(b, l, lo, back));
    return arith::OrIOp::create(b, l, arith::ShLIOp::create(b, l, hi, o), spill);
  };
  Value fHi = funnel(w0, w1), fLo = funnel(w1, w2);
  // m * (fHi * 2^64 + fLo) = W2:W1:W0; the point sits between bits 126 and
  // 125. With m < 2^24, each product of m and a 32-bit half is below 2^56.
  auto mul = [&](Value half) -> Value { return arith::MulIOp::create(b, l, m, half); };
  Value a = mul(shr(fLo, 32)), d = mul(low32(fLo));
  Value middle = add(shr(d, 32), low32(a));                          // < 2^33
  Value w0p = arith::OrIOp::create(b, l, low32(d), shl(middle, 32)); // W0
  Value carry = add(shr(a, 32), shr(middle, 32));                    // m * fLo >> 64
  Value w1p = add(add(shl(mul(shr(fHi, 32)), 32), mul(low32(fHi))), carry); // W1 (mod 2^64)
  Value k = arith::AndIOp::create(b, l, shr(w1p, 62), c(3));
  // f = (W1 mod 2^62) * 2^-62 + W0 * 2^-126, each term from two exact 31- and
  // 32-bit parts, so that each sum rounds once.
  Value fracHigh = arith::AndIOp::create(b, l, w1p, c((1ull << 62) - 1));
  auto scaled = [&](Value v, double scale) { return fmul(b, l, smallIntegerToF64(b, l, v), fconst(b, l, f64, scale)); };
  Value high = fadd(b, l, scaled(shr(fracHigh, 31), 0x1p-31),
                    scaled(arith::AndIOp::create(b, l, fracHigh, c(0x7fffffff)), 0x1p-62));
  Value low = fadd(b, l, scaled(shr(w0p, 32), 0x1p-94), scaled(low32(w0p), 0x1p-126));
  Value f = fadd(b, l, high, low);
  Value up = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, f, fconst(b, l, f64, 0.5));
  f = arith::SelectOp::create(b, l, up, fsub(b, l, f, fconst(b, l, f64, 1.0)), f);
  k = arith::AndIOp::create(b, l, arith::SelectOp::create(b, l, up, add(k, c(1)), k), c(3));
  return {k, fmul(b, l, f, fconst(b, l, f64, M_PI_2))};
}

} // namespace

/// atan2 with IEEE signed zeros: for y = +-0, the result is +-0 when x is
/// +0 or positive and +-pi when x is -0 or negative (NaN x stays NaN).
Value atan2WithZeros(OpBuilder &b, Location l, Value y, Value x) {
  Type t = x.getType();
  Value zero = zeroOf(b, l, t), one = fconst(b, l, t, 1.0);
  Value r = math::Atan2Op::create(b, l, y, x);
  Value yZero = arith::AndIOp::create(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, y, zero),
                                      arith::CmpFOp::create(b, l, arith::CmpFPredicate::ORD, x, x));
  Value xNegative =
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, math::CopySignOp::create(b, l, one, x), zero);
  Value magnitude = arith::SelectOp::create(b, l, xNegative, fconst(b, l, t, M_PI), zero);
  return arith::SelectOp::create(b, l, yZero, math::CopySignOp::create(b, l, magnitude, y), r);
}

/// A function of f32 (or narrower) values computed in f64 and rounded once
/// (pow: nxc-expand-math then expands the f64 pow of narrow values).
Value inF64(OpBuilder &b, Location l, ValueRange xs, function_ref<Value(ValueRange)> f) {
  Type t = xs[0].getType(), f64 = b.getF64Type();
  if (t == f64) return f(xs);
  SmallVector<Value> wide;
  for (Value x : xs) wide.push_back(arith::ExtFOp::create(b, l, f64, x));
  return arith::TruncFOp::create(b, l, t, f(wide));
}

/// log, log2 of f32 (f16 and bf16 reach it as f32): the polynomial needs a
/// normal argument, so subnormals are scaled by 2^23 first and the logarithm
/// of 2^23 taken off again.
Value logOfSubnormals(OpBuilder &b, Location l, Value x, bool base2) {
  Type t = x.getType();
  auto make = [&](Value v) -> Value {
    return base2 ? (Value)math::Log2Op::create(b, l, v) : (Value)math::LogOp::create(b, l, v);
  };
  if (!t.isF32()) return make(x);
  Value sub = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, fconst(b, l, t, 0x1p-126));
  Value scaled = arith::SelectOp::create(b, l, sub, fmul(b, l, x, fconst(b, l, t, 0x1p23)), x);
  Value r = make(scaled);
  Value shift = fconst(b, l, t, base2 ? 23.0 : 23.0 * M_LN2);
  return arith::SelectOp::create(b, l, sub, fsub(b, l, r, shift), r);
}


/// tanh of f32 (and narrower, computed in f32): below 0.625 its Taylor series
/// to x^23 in f64 (2e-10 relative at 0.625); above, sign(x) * (1 - 2 /
/// (exp(2|x|) + 1)), where the rounding error of the exp term stays below an
/// ulp of the result, and which reaches 1.0 where tanh rounds to 1.0.
Value tanhAccurate(OpBuilder &b, Location l, Value x) {
  Type t = x.getType();
  if (t.isF64()) return math::TanhOp::create(b, l, x);
  Value ax = math::AbsFOp::create(b, l, x);
  Value one = fconst(b, l, t, 1.0);
  // exp(2|x|) overflows to Inf above ~44, which gives exactly 1.
  Value e = math::ExpOp::create(b, l, fmul(b, l, ax, fconst(b, l, t, 2.0)));
  Value big = fsub(b, l, one, fdiv(b, l, fconst(b, l, t, 2.0), fadd(b, l, e, one)));
  Type f64 = b.getF64Type();
  Value xd = arith::ExtFOp::create(b, l, f64, x);
  Value x2 = fmul(b, l, xd, xd);
  Value series = polynomialF64(b, l,
                               {-3.927832388331683e-05, 9.691537956929451e-05, -0.00023912911424355248,
                                0.000590027440945586, -0.0014558343870513183, 0.003592128036572481,
                                -0.008863235529902197, 0.021869488536155203, -0.05396825396825397,
                                0.13333333333333333, -0.3333333333333333, 1.0},
                               x2);
  Value small = arith::TruncFOp::create(b, l, t, fmul(b, l, series, xd));
  // NaN fails the comparison and takes the series; it is passed through
  // explicitly all the same.
  Value useBig = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, ax, fconst(b, l, t, 0.625));
  Value r = arith::SelectOp::create(b, l, useBig, math::CopySignOp::create(b, l, big, x), small);
  Value isNan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x);
  return arith::SelectOp::create(b, l, isNan, x, r);
}

/// erf of f32 (and narrower, computed in f32) as two f64 polynomials, rounded
/// once: below 2, x * P(x^2) (erf(x) / x to 4e-13 relative); from 2 to 3.92,
/// where erf rounds to 1.0 in f32 from 3.83 on, Q(|x|) (to 5e-12); above, +-1.
/// Each is a least-squares Chebyshev fit on its interval, in the variable
/// mapped onto [-1, 1] (monomial coefficients below 1 in magnitude), and
/// evaluated multiply-then-add, so that every CPU variant gives the same bits.
/// Vectorizes (libm's erf was a call per element: 17.6 ns per element, and
/// GELU takes an erf per activation).
Value erfF32(OpBuilder &b, Location l, Value x) {
  Type t = x.getType(), f64 = b.getF64Type();
  // erf(x) / x = 2/sqrt(pi) + x^2 G(x^2): the leading term exact, so that
  // the error vanishes with x (tiny arguments round correctly).
  static const double kSmall[] = {6.796589582941789e-10,  -5.2293329865188795e-09, 3.550699579636828e-08,
                                  -2.3744450446756226e-07, 1.4757421672063271e-06,  -8.449083426593834e-06,
                                  4.43493376702082e-05,    -0.00021192103795107501, 0.0009144668312627003,
                                  -0.003531904759331735,   0.01209607703259145,     -0.03642746575665293,
                                  0.09616703506230638,     -0.22672296552791357};
  static const double kLarge[] = {5.2551735299224326e-08, -2.853991390653624e-07, 3.0250871235599933e-07,
                                  1.7214856650546814e-06, -7.857604867040784e-06, 1.3797150323410077e-05,
                                  4.646870786326195e-06,  -9.996453848274928e-05, 0.0003263994984602607,
                                  -0.0006680821838828473, 0.0009843904991349286,  -0.0010755448159951164,
                                  0.0008612457420247023,  -0.00048214167891285676, 0.0001696726192010053,
                                  0.9999716176826757};
  Value xd = arith::ExtFOp::create(b, l, f64, x);
  Value ax = math::AbsFOp::create(b, l, xd);
  Value one = fconst(b, l, f64, 1.0);
  // x^2 in [0, 4] onto [-1, 1]; |x| in [2, 3.92] onto [-1, 1].
  Value x2 = fmul(b, l, xd, xd);
  Value g = polynomialF64(b, l, kSmall, fsub(b, l, fmul(b, l, x2, fconst(b, l, f64, 0.5)), one));
  Value small = fmul(b, l, xd, fadd(b, l, fconst(b, l, f64, 2.0 / std::sqrt(M_PI)), fmul(b, l, x2, g)));
  Value uLarge = fsub(b, l, fmul(b, l, fsub(b, l, ax, fconst(b, l, f64, 2.0)), fconst(b, l, f64, 2.0 / 1.92)), one);
  Value large =
      arith::SelectOp::create(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, ax, fconst(b, l, f64, 3.92)),
                              one, polynomialF64(b, l, kLarge, uLarge));
  // NaN fails the comparison and takes x * P(x^2), which is NaN.
  Value useLarge = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, ax, fconst(b, l, f64, 2.0));
  Value r = arith::SelectOp::create(b, l, useLarge, math::CopySignOp::create(b, l, large, xd), small);
  return arith::TruncFOp::create(b, l, t, r);
}

/// erf_inv as Nx's reference backend computes it: Giles' single-precision
/// polynomials evaluated in f64 (multiply, then add), rounded once.
Value erfInv(OpBuilder &b, Location l, Value x) {
  Type t = x.getType(), f64 = b.getF64Type();
  Value z = t == f64 ? x : (Value)arith::ExtFOp::create(b, l, f64, x);
  Value one = fconst(b, l, f64, 1.0);
  Value w = arith::NegFOp::create(b, l, math::LogOp::create(b, l, fmul(b, l, fsub(b, l, one, z), fadd(b, l, one, z))));
  auto poly = [&](Value v, std::initializer_list<double> cs) {
    auto it = cs.begin();
    Value acc = fconst(b, l, f64, *it++);
    for (; it != cs.end(); ++it) acc = fadd(b, l, fmul(b, l, acc, v), fconst(b, l, f64, *it));
    return acc;
  };
  Value small = poly(fsub(b, l, w, fconst(b, l, f64, 2.5)),
                     {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                      -0.00125372503, -0.00417768164, 0.246640727, 1.50140941});
  Value large = poly(fsub(b, l, math::SqrtOp::create(b, l, w), fconst(b, l, f64, 3.0)),
                     {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                      -0.0076224613, 0.00943887047, 1.00167406, 2.83297682});
  Value isSmall = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, w, fconst(b, l, f64, 5.0));
  Value r = fmul(b, l, arith::SelectOp::create(b, l, isSmall, small, large), z);
  auto eq = [&](double c) { return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, z, fconst(b, l, f64, c)); };
  r = arith::SelectOp::create(b, l, eq(1.0), fconst(b, l, f64, INFINITY), r);
  r = arith::SelectOp::create(b, l, eq(-1.0), fconst(b, l, f64, -INFINITY), r);
  r = arith::SelectOp::create(b, l, eq(0.0), z, r);
  return t == f64 ? r : (Value)arith::TruncFOp::create(b, l, t, r);
}



/// sin/cos/tan of f32 (and narrower) values with the range reduction done in
/// f64: r = x - k * pi/2 with k = x * 2/pi rounded to the nearest integer (by
/// adding and taking off 1.5 * 2^52, whose ulp is 1: the low bits of the sum
/// are k mod 4), pi/2 in two parts (the first of 31 bits, so k * hi is
/// exact) for |x| < 2^22; above, exactly (payneHanek). The polynomials then
/// only see |r| <= pi/4, and the quadrant k mod 4 picks +-sin or +-cos.
Value reducedTrig(OpBuilder &b, Location l, Trig fn, Value x) {
  Type t = x.getType(), f64 = b.getF64Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
  Value xd = arith::ExtFOp::create(b, l, f64, x);
  Value shifter = fconst(b, l, f64, 0x1.8p52);
  Value kShifted = fadd(b, l, fmul(b, l, xd, fconst(b, l, f64, 2.0 / M_PI)), shifter);
  Value kf = fsub(b, l, kShifted, shifter);
  const double hi = 1.5707963267341256, lo = 6.077100506506192e-11; // pi/2 = hi + lo
  Value rd = fsub(b, l, fsub(b, l, xd, fmul(b, l, kf, fconst(b, l, f64, hi))), fmul(b, l, kf, fconst(b, l, f64, lo)));
  Value q = arith::AndIOp::create(b, l, arith::BitcastOp::create(b, l, i64, kShifted), iconst(b, l, i64, 3));
  // f32 only: f16 and bf16 are computed as f32 (scalarOp).
  Value ax = math::AbsFOp::create(b, l, x);
  auto [kBig, rBig] = payneHanek(b, l, ax);
  // x < 0: x = -(k pi/2 + r) = (-k) pi/2 + (-r).
  Value negative = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, fconst(b, l, f32, 0.0));
  kBig = arith::SelectOp::create(
      b, l, negative,
      arith::AndIOp::create(b, l, arith::SubIOp::create(b, l, iconst(b, l, i64, 4), kBig), iconst(b, l, i64, 3)), kBig);
  rBig = arith::SelectOp::create(b, l, negative, arith::NegFOp::create(b, l, rBig), rBig);
  Value big = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, ax, fconst(b, l, f32, 0x1p22));
  q = arith::SelectOp::create(b, l, big, kBig, q);
  rd = arith::SelectOp::create(b, l, big, rBig, rd);
  // sin and cos of |r| <= pi/4 as Taylor polynomials in f64 (the first
  // omitted terms are below 2^-36 relative), so the result is rounded once,
  // also where it is tiny (near multiples of pi).
  Value r2 = fmul(b, l, rd, rd);
  Value s =
      fmul(b, l, rd, polynomialF64(b, l, {-1.0 / 39916800, 1.0 / 362880, -1.0 / 5040, 1.0 / 120, -1.0 / 6, 1.0}, r2));
  Value c = polynomialF64(b, l, {1.0 / 479001600, -1.0 / 3628800, 1.0 / 40320, -1.0 / 720, 1.0 / 24, -0.5, 1.0}, r2);
  auto quadrant = [&](int k) { return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, q, iconst(b, l, i64, k)); };
  Value ns = arith::NegFOp::create(b, l, s), nc = arith::NegFOp::create(b, l, c);
  // sin(x) for quadrants 0..3: s, c, -s, -c; cos(x): c, -s, -c, s.
  auto pick = [&](Value q0, Value q1, Value q2, Value q3) -> Value {
    Value v = arith::SelectOp::create(b, l, quadrant(2), q2, q3);
    v = arith::SelectOp::create(b, l, quadrant(1), q1, v);
    return arith::SelectOp::create(b, l, quadrant(0), q0, v);
  };
  Value sinX = pick(s, c, ns, nc), cosX = pick(c, ns, nc, s);
  Value result = arith::TruncFOp::create(b, l, t,
                                         fn == Trig::Sin   ? sinX
                                         : fn == Trig::Cos ? cosX
                                                           : fdiv(b, l, sinX, cosX));
  // Inf and NaN give NaN (the f64 reduction of Inf would be NaN anyway).
  Value finite =
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, math::AbsFOp::create(b, l, x), fconst(b, l, t, INFINITY));
  return arith::SelectOp::create(b, l, finite, result, fconst(b, l, t, NAN));
}

/// fmod for f32 and narrower, exact and without libm. In f64, |x| is
/// reduced by |y| * 2^s, with s chosen so that each quotient stays below
/// 2^27: q * (|y| * 2^s) then needs at most 27 + 24 bits and every step is
/// exact. Twelve steps cover the whole f32 exponent range.
Value exactNarrowFmod(OpBuilder &b, Location l, Value x, Value y) {
  Type t = x.getType(), f64 = b.getF64Type(), i64 = b.getI64Type();
  Value xd = arith::ExtFOp::create(b, l, f64, x), yd = arith::ExtFOp::create(b, l, f64, y);
  Value a = math::AbsFOp::create(b, l, xd), d = math::AbsFOp::create(b, l, yd);
  Value zero = fconst(b, l, f64, 0.0);
  auto exponent = [&](Value v) -> Value {
    Value bits = arith::BitcastOp::create(b, l, i64, v);
    return arith::AndIOp::create(b, l, arith::ShRUIOp::create(b, l, bits, iconst(b, l, i64, 52)),
                                 iconst(b, l, i64, 0x7ff));
  };
  Value ed = exponent(d);
  for (int step = 0; step < 12; ++step) {
    Value shift = arith::MaxSIOp::create(b, l, arith::SubIOp::create(b, l, arith::SubIOp::create(b, l, exponent(a), ed),
                                                                    iconst(b, l, i64, 26)),
                                         iconst(b, l, i64, 0));
    // 2^shift, built from its exponent bits.
    Value scale = arith::BitcastOp::create(
        b, l, f64,
        arith::ShLIOp::create(b, l, arith::AddIOp::create(b, l, shift, iconst(b, l, i64, 1023)),
                              iconst(b, l, i64, 52)));
    Value ds = arith::MulFOp::create(b, l, d, scale);
    Value q = math::TruncOp::create(b, l, arith::DivFOp::create(b, l, a, ds));
    Value r = arith::SubFOp::create(b, l, a, arith::MulFOp::create(b, l, q, ds));
    // The division may round q up by one: then r < 0 and one ds is given back.
    Value negative = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, r, zero);
    a = arith::SelectOp::create(b, l, negative, arith::AddFOp::create(b, l, r, ds), r);
  }
  Value r = math::CopySignOp::create(b, l, a, xd);
  // fmod(x, 0), fmod(+-Inf, y) and NaNs give NaN; fmod(x, +-Inf) is x.
  Value xFinite = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, math::AbsFOp::create(b, l, xd),
                                        fconst(b, l, f64, INFINITY));
  Value yInf = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, d, fconst(b, l, f64, INFINITY));
  Value yOk = arith::CmpFOp::create(b, l, arith::CmpFPredicate::ONE, d, zero); // false for 0 and NaN
  r = arith::SelectOp::create(b, l, yInf, xd, r);
  Value valid = arith::AndIOp::create(b, l, xFinite, yOk);
  r = arith::SelectOp::create(b, l, valid, r, fconst(b, l, f64, NAN));
  return arith::TruncFOp::create(b, l, t, r);
}

namespace {

// Coefficients, highest power first, from scripts/fit_narrow_math.py.
// atan(u) = u + u v A(v), v = u^2 <= tan(pi/8)^2: A to 2.6e-15 relative.
const double kAtanTail[] = {0.022780530526983887, -0.04485655846626988, 0.05737080629289906, -0.06649743882366685,
                            0.07691068361407245,  -0.09090853344129342, 0.11111109662900268, -0.14285714266539506,
                            0.19999999999901275,  -0.3333333333333325};
// log2(m) = s L(s^2), s = (m - 1) / (m + 1), m in [sqrt(2)/2, sqrt(2)]: 2.1e-16.
const double kLog2OverS[] = {0.24292644829395568, 0.26144333469649617, 0.3206164184022134, 0.4121984015866341,
                             0.5770780172495101,  0.9617966939243265,  2.885390081777927};
// 2^f for |f| <= 1/2: 3.2e-16.
const double kExp2[] = {7.074194562613105e-09, 1.020869083593037e-07, 1.3215432534254118e-06, 1.5252657257186041e-05,
                        0.00015403530463727982, 0.0013333558230170627, 0.009618129107587253, 0.05550410866444768,
                        0.24022650695910158, 0.69314718055995, 1.0};

// (sinh(x) / x - 1) / x^2 for x^2 <= 1/4: 1.9e-15.
const double kSinhTail[] = {2.5152674812936568e-08, 2.755709909089446e-06, 0.00019841270037881568,
                            0.00833333333327188, 0.16666666666666696};

// erf(x) / x for x^2 <= 1/4: 6.6e-16.
const double kErfOverX[] = {-1.3373262728374132e-05, 0.00011993511297302649, -0.0008547032249660566,
                            0.00522396254289657,     -0.02686616968915273,   0.11283791667976181,
                            -0.37612638903148365,    1.128379167095512};
// erfc(x) e^(x^2) for x in [1/2, 11], in w in [-1, 1] from t = 1 / (x + 3)
// in [1/14, 1/3.5]: 8.9e-16.
const double kErfcScaled[] = {-1.4814280915258171e-10, 6.65612114577914e-11,   2.8335273905279807e-09,
                              -2.4896476917266835e-09, -4.637853913150135e-08, 4.153193650508196e-08,
                              8.592778978280235e-07,   6.436568675994508e-08,  -1.7815641238346697e-05,
                              -4.78388601935655e-05,   0.0002702500492087997,  0.002869314799946785,
                              0.013781590846112848,    0.045659951678631405,   0.11573738127997121,
                              0.23382334362449722,     0.2036132473567093};

Value cmpf(OpBuilder &b, Location l, arith::CmpFPredicate p, Value x, Value y) {
  return arith::CmpFOp::create(b, l, p, x, y);
}
Value select(OpBuilder &b, Location l, Value c, Value x, Value y) { return arith::SelectOp::create(b, l, c, x, y); }
Value both(OpBuilder &b, Location l, Value x, Value y) { return arith::AndIOp::create(b, l, x, y); }
Value either(OpBuilder &b, Location l, Value x, Value y) { return arith::OrIOp::create(b, l, x, y); }

/// The angle in [0, pi/2] of the point (den, num) for num, den >= 0 (or NaN)
/// in f64: with r = num / den, atan(r) below tan(pi/8), pi/4 + atan((r - 1) /
/// (r + 1)) up to tan(3 pi/8), pi/2 + atan(-1 / r) above, so that the
/// polynomial only sees |u| <= tan(pi/8), and each costs one division. For
/// f32 num and den, num - den and num + den are exact where they are used.
/// IEEE's cases: (+0, +0) and (+0, x) give 0, (y, +0) and (y, inf) pi/2 and
/// 0, (inf, inf) pi/4; NaN gives NaN.
Value firstQuadrantAngle(OpBuilder &b, Location l, Value num, Value den) {
  Type f64 = b.getF64Type();
  using P = arith::CmpFPredicate;
  Value zero = fconst(b, l, f64, 0.0), one = fconst(b, l, f64, 1.0), inf = fconst(b, l, f64, INFINITY);
  Value bothInf = both(b, l, cmpf(b, l, P::OEQ, num, inf), cmpf(b, l, P::OEQ, den, inf));
  Value numZero = both(b, l, cmpf(b, l, P::OEQ, num, zero), cmpf(b, l, P::ORD, den, den));
  num = select(b, l, bothInf, one, num);
  den = select(b, l, bothInf, one, den);
  Value low = cmpf(b, l, P::OLE, num, fmul(b, l, den, fconst(b, l, f64, M_SQRT2 - 1)));
  Value middle = cmpf(b, l, P::OLE, num, fmul(b, l, den, fconst(b, l, f64, M_SQRT2 + 1)));
  Value n = select(b, l, low, num, select(b, l, middle, fsub(b, l, num, den), arith::NegFOp::create(b, l, den)));
  Value d = select(b, l, low, den, select(b, l, middle, fadd(b, l, num, den), num));
  Value base = select(b, l, low, zero, select(b, l, middle, fconst(b, l, f64, M_PI_4), fconst(b, l, f64, M_PI_2)));
  Value u = fdiv(b, l, n, d);
  Value v = fmul(b, l, u, u);
  Value angle = fadd(b, l, base, fadd(b, l, u, fmul(b, l, fmul(b, l, u, v), polynomialF64(b, l, kAtanTail, v))));
  return select(b, l, numZero, zero, angle);
}

Value toF64(OpBuilder &b, Location l, Value x) { return arith::ExtFOp::create(b, l, b.getF64Type(), x); }
Value absF(OpBuilder &b, Location l, Value x) { return math::AbsFOp::create(b, l, x); }

/// sqrt(1 - x^2) in f64 for an f32 x: 1 - x and 1 + x are exact, so only the
/// product and the root round. NaN for |x| > 1.
Value cosOfAsin(OpBuilder &b, Location l, Value xd) {
  Value one = fconst(b, l, xd.getType(), 1.0);
  return math::SqrtOp::create(b, l, fmul(b, l, fsub(b, l, one, xd), fadd(b, l, one, xd)));
}

/// a = m 2^e with m in [sqrt(2)/2, sqrt(2)), for an f64 a that is normal
/// (f32 values, subnormal ones included, are): m and e (as f64) from the bits.
std::pair<Value, Value> mantissaAndExponent(OpBuilder &b, Location l, Value a) {
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  Value bits = arith::BitcastOp::create(b, l, i64, a);
  Value mantissa = arith::BitcastOp::create(
      b, l, f64,
      arith::OrIOp::create(b, l, arith::AndIOp::create(b, l, bits, iconst(b, l, i64, (1ll << 52) - 1)),
                           iconst(b, l, i64, 0x3ff0000000000000ll)));
  Value halve = cmpf(b, l, arith::CmpFPredicate::OGT, mantissa, fconst(b, l, f64, M_SQRT2));
  Value m = select(b, l, halve, fmul(b, l, mantissa, fconst(b, l, f64, 0.5)), mantissa);
  Value e = fsub(b, l, smallIntegerToF64(b, l, arith::ShRUIOp::create(b, l, bits, iconst(b, l, i64, 52))),
                 select(b, l, halve, fconst(b, l, f64, 1022.0), fconst(b, l, f64, 1023.0)));
  return {m, e};
}

/// log2((1 + s) / (1 - s)) = s L(s^2) for |s| <= (sqrt(2) - 1) / (sqrt(2) + 1).
Value log2OfRatio(OpBuilder &b, Location l, Value s) {
  return fmul(b, l, s, polynomialF64(b, l, kLog2OverS, fmul(b, l, s, s)));
}

/// log2(a) of an f64 a that is 0, normal or not finite (+0 gives -inf, Inf
/// and NaN themselves): e + log2(m) with s = (m - 1) / (m + 1), within
/// ~2^-52 of log2(a), absolutely.
Value log2OfNormal(OpBuilder &b, Location l, Value a) {
  Type f64 = b.getF64Type();
  using P = arith::CmpFPredicate;
  Value one = fconst(b, l, f64, 1.0);
  auto [m, e] = mantissaAndExponent(b, l, a);
  Value r = fadd(b, l, e, log2OfRatio(b, l, fdiv(b, l, fsub(b, l, m, one), fadd(b, l, m, one))));
  r = select(b, l, cmpf(b, l, P::OEQ, a, fconst(b, l, f64, 0.0)), fconst(b, l, f64, -INFINITY), r);
  // Inf and NaN are their own logarithms.
  return select(b, l, cmpf(b, l, P::UEQ, a, fconst(b, l, f64, INFINITY)), a, r);
}

/// ln(1 + d) in f64 for d >= 0 (NaN where 1 + d < 0): as log2(1 + d) ln 2,
/// with s = d / (2 + d) taken from d itself where 1 + d < sqrt(2), so that
/// small d lose nothing to the rounding of 1 + d, and s = (m - 1) / (m + 1)
/// from 1 + d = m 2^e above: one division and one polynomial either way.
Value lnOnePlus(OpBuilder &b, Location l, Value d) {
  Type f64 = b.getF64Type();
  using P = arith::CmpFPredicate;
  Value one = fconst(b, l, f64, 1.0);
  Value onePlus = fadd(b, l, one, d);
  auto [m, e] = mantissaAndExponent(b, l, onePlus);
  Value near = cmpf(b, l, P::OLT, d, fconst(b, l, f64, M_SQRT2 - 1));
  Value s = fdiv(b, l, select(b, l, near, d, fsub(b, l, m, one)),
                 select(b, l, near, fadd(b, l, fconst(b, l, f64, 2.0), d), fadd(b, l, m, one)));
  Value log2 = fadd(b, l, select(b, l, near, fconst(b, l, f64, 0.0), e), log2OfRatio(b, l, s));
  // Inf and NaN are their own logarithms (1 + d is 0 only where d is near).
  log2 = select(b, l, cmpf(b, l, P::UEQ, onePlus, fconst(b, l, f64, INFINITY)), onePlus, log2);
  Value r = fmul(b, l, log2, fconst(b, l, f64, M_LN2));
  return select(b, l, cmpf(b, l, P::OLT, onePlus, fconst(b, l, f64, 0.0)), fconst(b, l, f64, NAN), r);
}

/// 2^t in f64 for t clamped to [-200, 200] (beyond f32's range either way;
/// NaN passes): n + f with n = round(t), by adding and taking off 1.5 * 2^52
/// (the sum's low bits are n), 2^n from its exponent bits, 2^f a polynomial.
Value exp2Clamped(OpBuilder &b, Location l, Value t) {
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  using P = arith::CmpFPredicate;
  Value lo = fconst(b, l, f64, -200.0), hi = fconst(b, l, f64, 200.0);
  t = select(b, l, cmpf(b, l, P::OLT, t, lo), lo, t);
  t = select(b, l, cmpf(b, l, P::OGT, t, hi), hi, t);
  Value shifter = fconst(b, l, f64, 0x1.8p52);
  Value shifted = fadd(b, l, t, shifter);
  Value f = fsub(b, l, t, fsub(b, l, shifted, shifter));
  Value scaleBits = arith::AddIOp::create(
      b, l, arith::ShLIOp::create(b, l, arith::BitcastOp::create(b, l, i64, shifted), iconst(b, l, i64, 52)),
      iconst(b, l, i64, 1023ll << 52));
  return fmul(b, l, polynomialF64(b, l, kExp2, f), arith::BitcastOp::create(b, l, f64, scaleBits));
}

} // namespace

Value atanF32(OpBuilder &b, Location l, Value x) {
  Value xd = toF64(b, l, x);
  Value angle = firstQuadrantAngle(b, l, absF(b, l, xd), fconst(b, l, xd.getType(), 1.0));
  return arith::TruncFOp::create(b, l, x.getType(), math::CopySignOp::create(b, l, angle, xd));
}

Value atan2F32(OpBuilder &b, Location l, Value y, Value x) {
  Value yd = toF64(b, l, y), xd = toF64(b, l, x);
  Type f64 = xd.getType();
  Value angle = firstQuadrantAngle(b, l, absF(b, l, yd), absF(b, l, xd));
  // x negative or -0: the angle from the negative axis.
  Value xSignSet = cmpf(b, l, arith::CmpFPredicate::OLT, math::CopySignOp::create(b, l, fconst(b, l, f64, 1.0), xd),
                        fconst(b, l, f64, 0.0));
  angle = select(b, l, xSignSet, fsub(b, l, fconst(b, l, f64, M_PI), angle), angle);
  return arith::TruncFOp::create(b, l, x.getType(), math::CopySignOp::create(b, l, angle, yd));
}

Value asinF32(OpBuilder &b, Location l, Value x) {
  Value xd = toF64(b, l, x);
  Value angle = firstQuadrantAngle(b, l, absF(b, l, xd), cosOfAsin(b, l, xd));
  return arith::TruncFOp::create(b, l, x.getType(), math::CopySignOp::create(b, l, angle, xd));
}

Value acosF32(OpBuilder &b, Location l, Value x) {
  Value xd = toF64(b, l, x);
  Type f64 = xd.getType();
  Value angle = firstQuadrantAngle(b, l, cosOfAsin(b, l, xd), absF(b, l, xd));
  Value negative = cmpf(b, l, arith::CmpFPredicate::OLT, xd, fconst(b, l, f64, 0.0));
  angle = select(b, l, negative, fsub(b, l, fconst(b, l, f64, M_PI), angle), angle);
  return arith::TruncFOp::create(b, l, x.getType(), angle);
}

Value powOfNarrowInF64(OpBuilder &b, Location l, Value xd, Value yd) {
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  using P = arith::CmpFPredicate;
  auto c = [&](double v) { return fconst(b, l, f64, v); };
  auto ic = [&](int64_t v) { return iconst(b, l, i64, v); };
  Value ax = absF(b, l, xd), ay = absF(b, l, yd);
  Value one = c(1.0);
  Value r = exp2Clamped(b, l, fmul(b, l, yd, log2OfNormal(b, l, ax)));
  Value shifter = c(0x1.8p52);
  // y's parity (f32 values from 2^24 on are even integers): a fraction if
  // rounding it to an integer (adding and taking off 1.5 * 2^52) changes it,
  // odd if not but rounding y / 2 does.
  auto rounded = [&](Value v) { return fsub(b, l, fadd(b, l, v, shifter), shifter); };
  Value ySmall = cmpf(b, l, P::OLT, ay, c(0x1p24));
  Value yFraction = both(b, l, ySmall, cmpf(b, l, P::UNE, rounded(ay), ay));
  // Whole and half-integer |y| <= 15.5: products of |x| (or of sqrt|x|),
  // exact wherever |x|^|y| has at most 53 bits, as every f32 midpoint that
  // a power can hit does (29^5, 66049^1.5), which 2^(y log2|x|) would round
  // either way.
  Value yWhole = both(b, l, ySmall, cmpf(b, l, P::OEQ, rounded(ay), ay));
  Value half = fmul(b, l, ay, c(0.5));
  Value yOdd = both(b, l, yWhole, cmpf(b, l, P::UNE, rounded(half), half));
  Value twoY = fmul(b, l, ay, c(2.0));
  Value products = both(b, l, cmpf(b, l, P::OLE, ay, c(15.5)), cmpf(b, l, P::OEQ, rounded(twoY), twoY));
  Value power = select(b, l, yWhole, ax, math::SqrtOp::create(b, l, ax));
  Value k = arith::BitcastOp::create(b, l, i64, fadd(b, l, select(b, l, yWhole, ay, twoY), shifter));
  Value acc = one;
  for (int bit = 0; bit < 5; ++bit) {
    if (bit) power = fmul(b, l, power, power);
    Value set =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, arith::AndIOp::create(b, l, k, ic(1ll << bit)), ic(0));
    acc = select(b, l, set, fmul(b, l, acc, power), acc);
  }
  acc = select(b, l, cmpf(b, l, P::OLT, yd, c(0.0)), fdiv(b, l, one, acc), acc);
  r = select(b, l, products, acc, r);
  Value xSignSet = cmpf(b, l, P::OLT, math::CopySignOp::create(b, l, one, xd), c(0.0));
  r = select(b, l, both(b, l, xSignSet, yOdd), arith::NegFOp::create(b, l, r), r);
  // C's special cases: a finite negative x to a finite non-integer power is
  // NaN, as is any NaN argument, but x^0 = 1^y = (-1)^(+-inf) = 1.
  Value xNegativeFinite = both(b, l, cmpf(b, l, P::OLT, xd, c(0.0)), cmpf(b, l, P::OLT, ax, c(INFINITY)));
  Value nan = either(b, l, both(b, l, xNegativeFinite, yFraction),
                     either(b, l, cmpf(b, l, P::UNO, xd, xd), cmpf(b, l, P::UNO, yd, yd)));
  r = select(b, l, nan, c(NAN), r);
  Value isOne = either(b, l, cmpf(b, l, P::OEQ, yd, c(0.0)),
                       either(b, l, cmpf(b, l, P::OEQ, xd, one),
                              both(b, l, cmpf(b, l, P::OEQ, ax, one), cmpf(b, l, P::OEQ, ay, c(INFINITY)))));
  return select(b, l, isOne, one, r);
}

Value sinhF32(OpBuilder &b, Location l, Value x) {
  Value xd = toF64(b, l, x);
  Type f64 = xd.getType();
  Value ax = absF(b, l, xd), v = fmul(b, l, ax, ax);
  // Below 1/2, x (1 + x^2 S(x^2)), where (e^x - e^-x) / 2 would cancel.
  Value small = fmul(b, l, ax, fadd(b, l, fconst(b, l, f64, 1.0), fmul(b, l, v, polynomialF64(b, l, kSinhTail, v))));
  Value e = exp2Clamped(b, l, fmul(b, l, ax, fconst(b, l, f64, M_LOG2E)));
  Value large = fmul(b, l, fsub(b, l, e, fdiv(b, l, fconst(b, l, f64, 1.0), e)), fconst(b, l, f64, 0.5));
  Value r = select(b, l, cmpf(b, l, arith::CmpFPredicate::OLT, ax, fconst(b, l, f64, 0.5)), small, large);
  return arith::TruncFOp::create(b, l, x.getType(), math::CopySignOp::create(b, l, r, xd));
}

Value asinhF32(OpBuilder &b, Location l, Value x) {
  Value xd = toF64(b, l, x);
  Type f64 = xd.getType();
  Value one = fconst(b, l, f64, 1.0);
  Value ax = absF(b, l, xd), x2 = fmul(b, l, ax, ax);
  // asinh|x| = ln(1 + d), d = |x| + x^2 / (1 + sqrt(1 + x^2)).
  Value d = fadd(b, l, ax, fdiv(b, l, x2, fadd(b, l, one, math::SqrtOp::create(b, l, fadd(b, l, one, x2)))));
  Value r = lnOnePlus(b, l, d);
  r = select(b, l, cmpf(b, l, arith::CmpFPredicate::OEQ, ax, fconst(b, l, f64, INFINITY)), ax, r);
  return arith::TruncFOp::create(b, l, x.getType(), math::CopySignOp::create(b, l, r, xd));
}

Value acoshF32(OpBuilder &b, Location l, Value x) {
  Value xd = toF64(b, l, x);
  Type f64 = xd.getType();
  Value one = fconst(b, l, f64, 1.0);
  // acosh x = ln(1 + d), d = (x - 1) + sqrt((x - 1)(x + 1)); NaN below 1.
  Value below = fsub(b, l, xd, one);
  Value d = fadd(b, l, below, math::SqrtOp::create(b, l, fmul(b, l, below, fadd(b, l, xd, one))));
  Value r = select(b, l, cmpf(b, l, arith::CmpFPredicate::OLT, xd, one), fconst(b, l, f64, NAN), lnOnePlus(b, l, d));
  return arith::TruncFOp::create(b, l, x.getType(), r);
}

Value atanhF32(OpBuilder &b, Location l, Value x) {
  Value xd = toF64(b, l, x);
  Type f64 = xd.getType();
  Value ax = absF(b, l, xd);
  // atanh|x| = ln(1 + d) / 2, d = 2|x| / (1 - |x|): Inf at 1, NaN above.
  Value d = fdiv(b, l, fmul(b, l, ax, fconst(b, l, f64, 2.0)), fsub(b, l, fconst(b, l, f64, 1.0), ax));
  Value r = fmul(b, l, lnOnePlus(b, l, d), fconst(b, l, f64, 0.5));
  return arith::TruncFOp::create(b, l, x.getType(), math::CopySignOp::create(b, l, r, xd));
}

Value cbrtF32(OpBuilder &b, Location l, Value x) {
  Value xd = toF64(b, l, x);
  Type f64 = xd.getType();
  using P = arith::CmpFPredicate;
  Value ax = absF(b, l, xd);
  // 2^(log2|x| / 3); 0, Inf and NaN are their own cube roots.
  Value r = exp2Clamped(b, l, fdiv(b, l, log2OfNormal(b, l, ax), fconst(b, l, f64, 3.0)));
  Value same = either(b, l, cmpf(b, l, P::OEQ, ax, fconst(b, l, f64, 0.0)),
                      cmpf(b, l, P::UEQ, ax, fconst(b, l, f64, INFINITY)));
  r = select(b, l, same, ax, r);
  return arith::TruncFOp::create(b, l, x.getType(), math::CopySignOp::create(b, l, r, xd));
}

Value erfcF32(OpBuilder &b, Location l, Value x) {
  Value xd = toF64(b, l, x);
  Type f64 = xd.getType();
  using P = arith::CmpFPredicate;
  auto c = [&](double v) { return fconst(b, l, f64, v); };
  Value ax = absF(b, l, xd);
  // Below 1/2: 1 - x E(x^2).
  Value small = fsub(b, l, c(1.0), fmul(b, l, xd, polynomialF64(b, l, kErfOverX, fmul(b, l, xd, xd))));
  // From 1/2 on: e^(-x^2) R(x), |x| taken as 11 above (erfc(11) is 0 in
  // f32); for negative x, 2 - erfc|x|.
  Value a = select(b, l, cmpf(b, l, P::OGT, ax, c(11.0)), c(11.0), ax);
  Value t = fdiv(b, l, c(1.0), fadd(b, l, a, c(3.0)));
  Value w = fsub(b, l, fmul(b, l, fsub(b, l, t, c(1.0 / 14)), c(2.0 / (1.0 / 3.5 - 1.0 / 14))), c(1.0));
  Value tail =
      fmul(b, l, exp2Clamped(b, l, fmul(b, l, fmul(b, l, a, a), c(-M_LOG2E))), polynomialF64(b, l, kErfcScaled, w));
  Value large = select(b, l, cmpf(b, l, P::OGT, xd, c(0.0)), tail, fsub(b, l, c(2.0), tail));
  Value r = select(b, l, cmpf(b, l, P::OLT, ax, c(0.5)), small, large);
  return arith::TruncFOp::create(b, l, x.getType(), r);
}

} // namespace nxc
