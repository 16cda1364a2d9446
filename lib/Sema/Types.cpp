//===- Types.cpp - Nx element types and promotion -------------------------===//
#include "nxc/Sema/Types.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace nxc {

std::string ElemType::name() const {
  switch (kind) {
  case TypeKind::S: return fmt::format(FMT_STRING("s{}"), bits);
  case TypeKind::U: return fmt::format(FMT_STRING("u{}"), bits);
  case TypeKind::F: return fmt::format(FMT_STRING("f{}"), bits);
  case TypeKind::BF: return fmt::format(FMT_STRING("bf{}"), bits);
  case TypeKind::F8E4M3FN: return "f8_e4m3fn";
  case TypeKind::C: return fmt::format(FMT_STRING("c{}"), bits);
  }
  return "?";
}

std::string ElemType::cType() const {
  switch (kind) {
  case TypeKind::S: return fmt::format(FMT_STRING("int{}_t"), std::max(bits, 8));
  case TypeKind::U: return fmt::format(FMT_STRING("uint{}_t"), std::max(bits, 8));
  case TypeKind::BF: return "uint16_t";
  case TypeKind::F8E4M3FN: return "uint8_t";
  case TypeKind::C: return fmt::format(FMT_STRING("nxc_c{}"), bits);
  case TypeKind::F: return bits == 32 ? "float" : bits == 64 ? "double" : bits == 8 ? "uint8_t" : "uint16_t";
  }
  return "?";
}

namespace {
const struct {
  const char *name;
  TypeKind kind;
  int bits;
} kSpellings[] = {{"s2", TypeKind::S, 2},   {"s4", TypeKind::S, 4},
                  {"s8", TypeKind::S, 8},   {"s16", TypeKind::S, 16},
                  {"s32", TypeKind::S, 32}, {"s64", TypeKind::S, 64},
                  {"u2", TypeKind::U, 2},   {"u4", TypeKind::U, 4},
                  {"u8", TypeKind::U, 8},   {"u16", TypeKind::U, 16},
                  {"u32", TypeKind::U, 32}, {"u64", TypeKind::U, 64},
                  {"f8", TypeKind::F, 8},   {"f8_e4m3fn", TypeKind::F8E4M3FN, 8},
                  {"f16", TypeKind::F, 16}, {"bf16", TypeKind::BF, 16},
                  {"f32", TypeKind::F, 32}, {"f64", TypeKind::F, 64},
                  {"c64", TypeKind::C, 64}, {"c128", TypeKind::C, 128}};
} // namespace

std::optional<ElemType> ElemType::parse(const std::string &n) {
  if (n == "pred") return ElemType::u8();
  for (auto &e : kSpellings)
    if (n == e.name) return ElemType{e.kind, e.bits};
  return std::nullopt;
}

std::string ElemType::spellings() {
  std::string s;
  for (auto &e : kSpellings) s += std::string(e.name) + " ";
  return s + "pred";
}

std::string ElemType::kindAtom() const {
  switch (kind) {
  case TypeKind::S: return "s";
  case TypeKind::U: return "u";
  case TypeKind::F: return "f";
  case TypeKind::BF: return "bf";
  case TypeKind::F8E4M3FN: return "f8_e4m3fn";
  case TypeKind::C: return "c";
  }
  return "?";
}

std::optional<ElemType> ElemType::fromKindAtom(const std::string &kind, int64_t bits) {
  if (bits < 1 || bits > 128) return std::nullopt;
  if (kind == "f8_e4m3fn") return bits == 8 ? std::optional<ElemType>(ElemType{TypeKind::F8E4M3FN, 8}) : std::nullopt;
  return parse(kind + std::to_string(bits));
}

/// Nx.Type's type_to_int: f8_e4m3fn ranks with f.
static int rank(TypeKind k) { return k == TypeKind::F8E4M3FN ? (int)TypeKind::F : (int)k; }

ElemType mergeTypes(ElemType a, ElemType b) {
  if (a.kind == b.kind) return {a.kind, std::max(a.bits, b.bits)};
  // Nx.Type.merge/2 sorts the two by rank, and on equal ranks (f with
  // f8_e4m3fn) puts the right one first: then the left one wins, so
  // merge(f8_e4m3fn, f32) is f8_e4m3fn and merge(f32, f8_e4m3fn) is f32.
  ElemType low = b, high = a;
  if (rank(a.kind) < rank(b.kind)) low = a, high = b;
  if (low.kind == TypeKind::U && high.kind == TypeKind::S)
    return {TypeKind::S, std::max(std::min(low.bits * 2, 64), high.bits)};
  if (low.kind == TypeKind::F && high.kind == TypeKind::C) return {TypeKind::C, std::max(low.bits * 2, high.bits)};
  return high; // the higher kind wins with its own size
}

/// Nx.Type's unsigned_size/signed_size: 0 and 1 (and -1) fit anything.
static int unsignedSize(int64_t v) {
  if (v <= 1) return 1;
  if (v <= 255) return 8;
  if (v <= 65535) return 16;
  if (v <= 4294967295LL) return 32;
  return 64;
}

static int signedSize(int64_t v) {
  int64_t m = v < 0 ? -v - 1 : v;
  if (m <= 1) return 1;
  if (m <= 127) return 8;
  if (m <= 32767) return 16;
  if (m <= 2147483647LL) return 32;
  return 64;
}

ElemType mergeInteger(ElemType t, int64_t v) {
  switch (t.kind) {
  case TypeKind::U:
    if (v >= 0) return {TypeKind::U, std::max(unsignedSize(v), t.bits)};
    return mergeInteger({TypeKind::S, std::min(t.bits * 2, 64)}, v);
  case TypeKind::S: return {TypeKind::S, std::max(signedSize(v), t.bits)};
  case TypeKind::F8E4M3FN: return ElemType::f32(); // merge_number's last clause
  default: return t;
  }
}

ElemType mergeFloat(ElemType t) {
  return t.kind == TypeKind::F || t.kind == TypeKind::BF || t.kind == TypeKind::C ? t : ElemType::f32();
}

ElemType toFloating(ElemType t) { return t.isFloat() || t.isComplex() ? t : mergeTypes(t, ElemType::f32()); }

ElemType toComplex(ElemType t) {
  if (t.isComplex()) return t;
  return t == ElemType{TypeKind::F, 64} ? ElemType{TypeKind::C, 128} : ElemType{TypeKind::C, 64};
}

ElemType toReal(ElemType t) {
  if (t.isComplex()) return t.partType();
  return t.isFloat() ? t : ElemType::f32();
}

ElemType toAggregate(ElemType t) {
  switch (t.kind) {
  case TypeKind::S: return {TypeKind::S, t.bits == 64 ? 64 : 32};
  case TypeKind::U: return t.bits == 64 ? ElemType{TypeKind::S, 64} : ElemType{TypeKind::U, 32};
  default: return t;
  }
}

int64_t TensorType::numElements() const {
  for (int64_t d : shape)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
  return n;
}

std::string TensorType::str() const {
  std::string s = elem.name();
  auto to = std::back_inserter(s);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i < names.size() && !names[i].empty()) fmt::format_to(to, FMT_STRING("[{}: {}]"), names[i], shape[i]);
    else fmt::format_to(to, FMT_STRING("[{}]"), shape[i]);
  }
  return s;
}

std::string shapeString(const Shape &s) { return fmt::format(FMT_STRING("{{{}}}"), fmt::join(s, ", ")); }

} // namespace nxc
