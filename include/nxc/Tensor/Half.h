//===- Half.h - f16 and bf16 bit patterns ------------------------*- C++ -*-===//
//
// Conversions between IEEE half precision (f16), bfloat16 (bf16), the 8-bit
// floats f8 (E5M2) and f8_e4m3fn, and the native float types. All four are
// handled as raw bit patterns.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TENSOR_HALF_H
#define NXC_TENSOR_HALF_H

#include "nxc/Tensor/HostTensor.h"

#include <cstdint>

namespace nxc {

/// The value of an f16 bit pattern (exact).
float f16ToFloat(uint16_t bits);
/// An f16 bit pattern for `x`, rounded to nearest even (overflow gives
/// infinity, NaN stays NaN).
uint16_t doubleToF16(double x);

/// The value of a bf16 bit pattern (exact).
float bf16ToFloat(uint16_t bits);
/// A bf16 bit pattern for `x`, rounded to nearest even (NaN stays NaN).
uint16_t floatToBf16(float x);

/// The value of a byte of 8-bit float type `t` (f8 or f8_e4m3fn; exact):
/// f8 (E5M2) is f16's high byte; f8_e4m3fn's S.1111.111 is NaN and it has
/// no infinity.
float f8ToFloat(uint8_t bits, ElemType t);
/// `x` as a byte of 8-bit float type `t`, rounded as Nx.Floating rounds:
///   f8 (dump_f8): rounded to f16 (nearest even, overflow to infinity),
///     whose high byte is kept (the rest truncated); NaN is 0x7E;
///   f8_e4m3fn (dump_f8_e4m3fn): clamped to [-448, 448] (infinities too),
///     its 3 mantissa bits rounded half away from zero and then capped at 7
///     (no carry into the exponent; 7 becomes 6 at the largest exponent,
///     whose 7 is NaN), zeros keeping their sign; NaN is 0x7F.
uint8_t doubleToF8(double x, ElemType t);

/// The bits of a float/double and back.
uint32_t floatBits(float x);
float floatFromBits(uint32_t bits);
uint64_t doubleBits(double x);
double doubleFromBits(uint64_t bits);

/// A bf16 tensor widened to f32 (exact), e.g. to write it to a .npy file.
/// Tensors of other types are returned unchanged.
HostTensor bf16ToF32(const HostTensor &t);

} // namespace nxc

#endif // NXC_TENSOR_HALF_H
