//===- Half.h - f16 and bf16 bit patterns ------------------------*- C++ -*-===//
//
// Conversions between IEEE half precision (f16), bfloat16 (bf16) and the
// native float types. Both 16-bit types are handled as raw bit patterns.
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
