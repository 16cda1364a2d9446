//===- ScalarMath.h - Scalar bodies of nx's math functions ------*- C++ -*-===//
//
// The scalar computations that nx-to-linalg puts in element-wise bodies for
// math functions, and the arith builders they share with it. f32 (and
// narrower) functions are computed without libm wherever nxc has its own
// algorithm, most of them in f64 and rounded once; f64 functions are MLIR's
// math ops (libm calls, or MLIR's expansions).
//
//===----------------------------------------------------------------------===//

#ifndef NXC_LIB_CONVERSION_SCALARMATH_H
#define NXC_LIB_CONVERSION_SCALARMATH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace nxc {

inline mlir::Value fconst(mlir::OpBuilder &b, mlir::Location l, mlir::Type t, double v) {
  return mlir::arith::ConstantOp::create(b, l, t, b.getFloatAttr(t, v));
}
inline mlir::Value iconst(mlir::OpBuilder &b, mlir::Location l, mlir::Type t, int64_t v) {
  return mlir::arith::ConstantOp::create(b, l, t, b.getIntegerAttr(t, v));
}
inline mlir::Value zeroOf(mlir::OpBuilder &b, mlir::Location l, mlir::Type t) {
  return llvm::isa<mlir::FloatType>(t) ? fconst(b, l, t, 0.0) : iconst(b, l, t, 0);
}
/// Exact IEEE operations (no fast-math flags): every CPU variant, and every
/// copy of a value that fusion recomputes, gives the same bits.
inline mlir::Value fadd(mlir::OpBuilder &b, mlir::Location l, mlir::Value x, mlir::Value y) {
  return mlir::arith::AddFOp::create(b, l, x, y);
}
inline mlir::Value fsub(mlir::OpBuilder &b, mlir::Location l, mlir::Value x, mlir::Value y) {
  return mlir::arith::SubFOp::create(b, l, x, y);
}
inline mlir::Value fmul(mlir::OpBuilder &b, mlir::Location l, mlir::Value x, mlir::Value y) {
  return mlir::arith::MulFOp::create(b, l, x, y);
}
inline mlir::Value fdiv(mlir::OpBuilder &b, mlir::Location l, mlir::Value x, mlir::Value y) {
  return mlir::arith::DivFOp::create(b, l, x, y);
}

/// f(xs) computed in f64 and rounded once to the type of xs; f64
/// arguments: f(xs).
mlir::Value inF64(mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange xs,
                  llvm::function_ref<mlir::Value(mlir::ValueRange)> f);

/// atan2 with IEEE signed zeros, for f64 (libm's atan2 with the zero cases).
mlir::Value atan2WithZeros(mlir::OpBuilder &b, mlir::Location l, mlir::Value y, mlir::Value x);

/// log or log2 whose f32 polynomial also takes subnormal arguments.
mlir::Value logOfSubnormals(mlir::OpBuilder &b, mlir::Location l, mlir::Value x, bool base2);

/// Functions of f32 values (f16 and bf16 reach them widened to f32), each
/// rounded once from f64 arithmetic (tanh: from f32 exp above 0.625) and
/// without libm: the same results as libm's f64 functions rounded to f32
/// but for near-ties (erf: 2 in 6M arguments; the others none in 3-6M).
mlir::Value tanhAccurate(mlir::OpBuilder &b, mlir::Location l, mlir::Value x);
mlir::Value erfF32(mlir::OpBuilder &b, mlir::Location l, mlir::Value x);
mlir::Value erfcF32(mlir::OpBuilder &b, mlir::Location l, mlir::Value x);
/// sin, cos or tan (`name`).
enum class Trig { Sin, Cos, Tan };
mlir::Value reducedTrig(mlir::OpBuilder &b, mlir::Location l, Trig fn, mlir::Value x);
mlir::Value atanF32(mlir::OpBuilder &b, mlir::Location l, mlir::Value x);
mlir::Value atan2F32(mlir::OpBuilder &b, mlir::Location l, mlir::Value y, mlir::Value x);
mlir::Value asinF32(mlir::OpBuilder &b, mlir::Location l, mlir::Value x);
mlir::Value acosF32(mlir::OpBuilder &b, mlir::Location l, mlir::Value x);
mlir::Value sinhF32(mlir::OpBuilder &b, mlir::Location l, mlir::Value x);
mlir::Value asinhF32(mlir::OpBuilder &b, mlir::Location l, mlir::Value x);
mlir::Value acoshF32(mlir::OpBuilder &b, mlir::Location l, mlir::Value x);
mlir::Value atanhF32(mlir::OpBuilder &b, mlir::Location l, mlir::Value x);
mlir::Value cbrtF32(mlir::OpBuilder &b, mlir::Location l, mlir::Value x);

/// x^y as C's pow for f64 x and y that are f32 (or narrower) values, to be
/// rounded to f32: 2^(y log2|x|) from f64 polynomials (within ~2^-44 of the
/// exact power, so the f32 result is correctly rounded but for rare near-
/// ties), with C's signs and special cases. Scalars only.
mlir::Value powOfNarrowInF64(mlir::OpBuilder &b, mlir::Location l, mlir::Value xd, mlir::Value yd);

/// erf_inv as Nx's reference backend computes it (any float type).
mlir::Value erfInv(mlir::OpBuilder &b, mlir::Location l, mlir::Value x);

/// fmod of f32 and narrower values, exact.
mlir::Value exactNarrowFmod(mlir::OpBuilder &b, mlir::Location l, mlir::Value x, mlir::Value y);

} // namespace nxc

#endif
