//===- HostTensor.cpp - element access ------------------------------------===//
#include "nxc/Tensor/HostTensor.h"

#include "nxc/Tensor/Half.h"

#include <fmt/format.h>

#include <cassert>
#include <cstring>

namespace nxc {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "HostTensor stores data little-endian, as the host");

HostTensor HostTensor::zeros(TensorType type) {
  HostTensor t;
  int64_t n = type.numElements();
  for (int64_t d : type.shape)
    if (d < 0) n = 0; // not a shape; leave no data rather than a huge allocation
  t.data.assign((size_t)n * (size_t)type.elem.bytes(), 0);
  t.type = std::move(type);
  return t;
}

bool HostTensor::consistent() const {
  return data.size() == (size_t)numElements() * (size_t)type.elem.bytes();
}

uint64_t HostTensor::bitsAt(int64_t i) const {
  if (type.elem.isComplex()) return partBitsAt(i, 0);
  size_t w = (size_t)type.elem.bytes();
  assert(i >= 0 && (size_t)(i + 1) * w <= data.size());
  uint64_t v = 0;
  std::memcpy(&v, data.data() + (size_t)i * w, w);
  return v;
}

void HostTensor::setBits(int64_t i, uint64_t bits) {
  if (type.elem.isComplex()) {
    setPartBits(i, 0, bits);
    setPartBits(i, 1, 0);
    return;
  }
  size_t w = (size_t)type.elem.bytes();
  assert(i >= 0 && (size_t)(i + 1) * w <= data.size());
  if (type.elem.isSubByte()) { // held sign- or zero-extended to the byte
    int shift = 8 - type.elem.bits;
    bits = type.elem.isSigned() ? (uint64_t)(uint8_t)((int8_t)(uint8_t)(bits << shift) >> shift)
                                : bits & ((1u << type.elem.bits) - 1);
  }
  std::memcpy(data.data() + (size_t)i * w, &bits, w);
}

uint64_t HostTensor::partBitsAt(int64_t i, int part) const {
  size_t w = (size_t)type.elem.bytes() / 2;
  assert(type.elem.isComplex() && i >= 0 && (size_t)(i + 1) * 2 * w <= data.size());
  uint64_t v = 0;
  std::memcpy(&v, data.data() + ((size_t)i * 2 + (size_t)part) * w, w);
  return v;
}

void HostTensor::setPartBits(int64_t i, int part, uint64_t bits) {
  size_t w = (size_t)type.elem.bytes() / 2;
  assert(type.elem.isComplex() && i >= 0 && (size_t)(i + 1) * 2 * w <= data.size());
  std::memcpy(data.data() + ((size_t)i * 2 + (size_t)part) * w, &bits, w);
}

double HostTensor::partAt(int64_t i, int part) const {
  if (!type.elem.isComplex()) return part ? 0.0 : at(i);
  uint64_t b = partBitsAt(i, part);
  return type.elem.bits == 64 ? floatFromBits((uint32_t)b) : doubleFromBits(b);
}

Status retypeStored(HostTensor &h, ElemType declared, const std::string &what) {
  bool bytesOfF8 = declared.isF8() && h.type.elem == ElemType::u8();
  bool subByte = declared.isSubByte() && h.type.elem == declared.byteType();
  if (!bytesOfF8 && !subByte) return okStatus();
  if (subByte) {
    int64_t lo = declared.isSigned() ? -(int64_t(1) << (declared.bits - 1)) : 0;
    int64_t hi = declared.isSigned() ? (int64_t(1) << (declared.bits - 1)) - 1 : (int64_t(1) << declared.bits) - 1;
    for (int64_t i = 0; i < h.numElements(); ++i)
      if (h.atInt(i) < lo || h.atInt(i) > hi)
        return error(Loc{}, fmt::format(FMT_STRING("{}: element {} is {}, outside {} ({}..{})"), what, i, h.atInt(i),
                                        declared.name(), lo, hi));
  }
  h.type.elem = declared;
  return okStatus();
}

/// Sign-extends the low `bits` bits of `v`.
static int64_t signExtend(uint64_t v, int bits) {
  if (bits == 64) return (int64_t)v;
  v &= (1ull << bits) - 1;
  uint64_t m = 1ull << (bits - 1);
  return (int64_t)((v ^ m) - m);
}

double HostTensor::at(int64_t i) const {
  uint64_t b = bitsAt(i);
  switch (type.elem.kind) {
  case TypeKind::S: return (double)signExtend(b, type.elem.bits);
  case TypeKind::U: return (double)b;
  case TypeKind::BF: return bf16ToFloat((uint16_t)b);
  case TypeKind::F8E4M3FN: return f8ToFloat((uint8_t)b, type.elem);
  case TypeKind::F:
    if (type.elem.bits == 8) return f8ToFloat((uint8_t)b, type.elem);
    if (type.elem.bits == 16) return f16ToFloat((uint16_t)b);
    if (type.elem.bits == 32) return floatFromBits((uint32_t)b);
    return doubleFromBits(b);
  case TypeKind::C: return partAt(i, 0);
  }
  return 0;
}

int64_t HostTensor::atInt(int64_t i) const {
  switch (type.elem.kind) {
  case TypeKind::S: return signExtend(bitsAt(i), type.elem.bits);
  case TypeKind::U: return (int64_t)(type.elem.bits < 8 ? bitsAt(i) & ((1u << type.elem.bits) - 1) : bitsAt(i));
  default: {
    double d = at(i);
    if (!(d == d)) return 0;
    if (d >= 9223372036854775807.0) return INT64_MAX;
    if (d <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)d;
  }
  }
}

uint64_t HostTensor::atUInt(int64_t i) const {
  if (type.elem.kind == TypeKind::U) return bitsAt(i);
  return (uint64_t)atInt(i);
}

} // namespace nxc
