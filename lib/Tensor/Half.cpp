//===- Half.cpp - f16 and bf16 bit patterns -------------------------------===//
#include "nxc/Tensor/Half.h"

#include <cmath>
#include <cstring>

namespace nxc {

uint32_t floatBits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}

float floatFromBits(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}

uint64_t doubleBits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
}

double doubleFromBits(uint64_t bits) {
  double x;
  std::memcpy(&x, &bits, 8);
  return x;
}

float f16ToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t man = h & 0x3FF;
  if (exp == 0x1F) return floatFromBits(sign | 0x7F800000u | (man << 13)); // Inf / NaN (payload kept)
  if (exp == 0) {
    // Zero or subnormal: man * 2^-24, exact in a float.
    float v = std::ldexp((float)man, -24);
    return sign ? -v : v;
  }
  return floatFromBits(sign | ((exp + 127 - 15) << 23) | (man << 13));
}

uint16_t doubleToF16(double x) {
  uint64_t b = doubleBits(x);
  uint16_t sign = (uint16_t)((b >> 63) << 15);
  int exp = (int)((b >> 52) & 0x7FF);
  uint64_t man = b & ((1ull << 52) - 1);
  if (exp == 0x7FF) return sign | 0x7C00 | (man ? 0x200 : 0); // Inf / quiet NaN
  double a = std::fabs(x);
  if (a == 0) return sign;
  // Scale so that the f16 unit in the last place becomes 1, round to nearest
  // even (exact in double arithmetic), then rebuild the pattern.
  int e = std::ilogb(a); // a = m * 2^e with 1 <= m < 2
  if (e < -14) e = -14;  // subnormal range shares the exponent of the smallest normal
  double scaled = std::ldexp(a, 10 - e); // in [0, 2048)
  double r = std::nearbyint(scaled);     // default rounding mode: to nearest, ties to even
  uint64_t m = (uint64_t)r;
  if (m >= 2048) { m >>= 1; ++e; } // rounding carried into the next binade
  if (e > 15) return sign | 0x7C00;
  if (m < 1024) return sign | (uint16_t)m; // subnormal (e == -14)
  return sign | (uint16_t)(((e + 15) << 10) | (m - 1024));
}

float bf16ToFloat(uint16_t bits) { return floatFromBits((uint32_t)bits << 16); }

uint16_t floatToBf16(float x) {
  uint32_t b = floatBits(x);
  if (std::isnan(x)) return (uint16_t)((b >> 16) | 0x40);
  uint32_t rounding = 0x7FFF + ((b >> 16) & 1);
  return (uint16_t)((b + rounding) >> 16);
}

static float f8E5M2ToFloat(uint8_t bits) { return f16ToFloat((uint16_t)(bits << 8)); }

static uint8_t doubleToF8E5M2(double x) {
  if (std::isnan(x)) return 0x7E; // Nx.Type.nan_binary({:f, 8})
  return (uint8_t)(doubleToF16(x) >> 8);
}

static float f8E4M3FNToFloat(uint8_t bits) {
  bool neg = bits & 0x80;
  int exp = (bits >> 3) & 0xF, man = bits & 7;
  if (exp == 15 && man == 7) return NAN;
  float v = exp == 0 ? std::ldexp((float)man, -9) : std::ldexp(1.0f + (float)man / 8, exp - 7);
  return neg ? -v : v;
}

static uint8_t doubleToF8E4M3FN(double x) {
  if (std::isnan(x)) return 0x7F; // Nx.Type.nan_binary({:f8_e4m3fn, 8})
  if (x == 0) return std::signbit(x) ? 0x80 : 0x00;
  double clamped = std::fmax(-448.0, std::fmin(448.0, x));
  uint8_t sign = clamped < 0 ? 0x80 : 0;
  double a = std::fabs(clamped);
  // As Nx: the exponent from floor(log2(a)), the mantissa by Kernel.round
  // (half away from zero, std::round) and capped.
  int e = (int)std::floor(std::log2(a));
  if (e + 7 <= 0) {
    double m = std::round(a / std::ldexp(1.0, -6) * 8);
    return sign | (uint8_t)std::fmin(7.0, m);
  }
  double m = std::round((a / std::ldexp(1.0, e) - 1.0) * 8);
  m = std::fmax(0.0, std::fmin(7.0, m));
  if (e + 7 == 15 && m >= 7) m = 6;
  return sign | (uint8_t)((e + 7) << 3) | (uint8_t)m;
}

float f8ToFloat(uint8_t bits, ElemType t) {
  return t.kind == TypeKind::F8E4M3FN ? f8E4M3FNToFloat(bits) : f8E5M2ToFloat(bits);
}

uint8_t doubleToF8(double x, ElemType t) {
  return t.kind == TypeKind::F8E4M3FN ? doubleToF8E4M3FN(x) : doubleToF8E5M2(x);
}

HostTensor bf16ToF32(const HostTensor &t) {
  if (t.type.elem != ElemType{TypeKind::BF, 16}) return t;
  TensorType ty = t.type;
  ty.elem = ElemType::f32();
  HostTensor out = HostTensor::zeros(ty);
  for (int64_t i = 0, n = t.numElements(); i < n; ++i) out.setBits(i, (uint64_t)t.bitsAt(i) << 16);
  return out;
}

} // namespace nxc
