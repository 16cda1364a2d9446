//===- Types.h - Nx element types, shapes and promotion ---------*- C++ -*-===//
//
// Nx's type lattice (s/u/f/bf/f8_e4m3fn/c with a bit width) and its promotion
// rules, as in Nx.Type.merge/2, merge_number/2, to_floating/1 and
// to_aggregate/1.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_SEMA_TYPES_H
#define NXC_SEMA_TYPES_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nxc {

/// Ordered as Nx sorts kinds for merging (Nx.Type's type_to_int), but for
/// F8E4M3FN, which Nx ranks with F (see mergeTypes).
enum class TypeKind { U, S, BF, F, F8E4M3FN, C };

/// An Nx element type: s2, s4, s8..s64, u2, u4, u8..u64, f8 (E5M2: {:f, 8}), f8_e4m3fn,
/// f16, bf16, f32, f64, and the complex c64 and c128 (a real and an
/// imaginary part of f32 or f64, stored in that order).
struct ElemType {
  TypeKind kind = TypeKind::F;
  int bits = 32;

  bool isFloat() const { return kind == TypeKind::F || kind == TypeKind::BF || kind == TypeKind::F8E4M3FN; }
  /// f8 (E5M2) or f8_e4m3fn: stored as a byte, computed in f32, rounded as
  /// Nx.Floating.dump_f8/dump_f8_e4m3fn round.
  bool isF8() const { return bits == 8 && (kind == TypeKind::F || kind == TypeKind::F8E4M3FN); }
  bool isComplex() const { return kind == TypeKind::C; }
  bool isInteger() const { return kind == TypeKind::S || kind == TypeKind::U; }
  /// Nx.Type.to_real/1 of a complex type: the type of each part (f32 of c64).
  ElemType partType() const { return isComplex() ? ElemType{TypeKind::F, bits / 2} : *this; }
  bool isSigned() const { return kind == TypeKind::S; }
  /// s2, s4, u2, u4: Nx packs them in its binaries; nxc holds one per byte,
  /// sign-extended (s2, s4) or zero-extended (u2, u4), and computes in s8/u8.
  bool isSubByte() const { return isInteger() && bits < 8; }
  /// The byte-wide type a sub-byte integer is held and computed in.
  ElemType byteType() const { return isSubByte() ? ElemType{kind, 8} : *this; }
  bool operator==(const ElemType &o) const { return kind == o.kind && bits == o.bits; }
  bool operator!=(const ElemType &o) const { return !(*this == o); }
  /// Nx's spelling: "f32", "s64", "u8", "bf16", "f8_e4m3fn".
  std::string name() const;
  /// The C type a generated header uses ("float", "int32_t", "uint16_t" for
  /// f16/bf16, "uint8_t" for the f8 types, int8_t/uint8_t for s2/s4/u2/u4, "nxc_c64"/"nxc_c128" for the
  /// complex types, which the header defines).
  std::string cType() const;
  /// Bytes per element as nxc holds it (1 for the sub-byte integers).
  int bytes() const { return bits < 8 ? 1 : bits / 8; }
  /// Parses Nx's spelling ("f32", "s8", ...); nullopt if it is not one.
  static std::optional<ElemType> parse(const std::string &name);
  /// Every spelling parse() accepts, for messages: "s8 s16 ... f64 pred".
  static std::string spellings();
  /// The kind atom of Nx's {kind, bits} tuple: "s", "u", "f", "bf",
  /// "f8_e4m3fn".
  std::string kindAtom() const;
  /// The type Nx's {kind, bits} tuple names ({:f, 32}, {:f8_e4m3fn, 8});
  /// nullopt if it names none nxc has.
  static std::optional<ElemType> fromKindAtom(const std::string &kind, int64_t bits);

  static ElemType f32() { return {TypeKind::F, 32}; }
  static ElemType s32() { return {TypeKind::S, 32}; }
  static ElemType u8() { return {TypeKind::U, 8}; }
};

/// Nx.Type.merge/2.
ElemType mergeTypes(ElemType a, ElemType b);
/// Nx.Type.merge_number/2 with an integer (f8_e4m3fn gives f32, as in Nx).
ElemType mergeInteger(ElemType t, int64_t value);
/// Nx.Type.merge_number/2 with a float (f8_e4m3fn gives f32, as in Nx).
ElemType mergeFloat(ElemType t);
/// Nx.Type.to_floating/1: integers become f32 (via merge with f32).
ElemType toFloating(ElemType t);
/// Nx.Type.to_aggregate/1 (sum/product): s8..s32 -> s32, u8..u32 -> u32, u64 -> s64.
ElemType toAggregate(ElemType t);
/// Nx.Type.to_complex/1: f64 gives c128, every other non-complex type c64.
ElemType toComplex(ElemType t);
/// Nx.Type.to_real/1: the part type of a complex type, floats as they are,
/// f32 for integers.
ElemType toReal(ElemType t);

using Shape = std::vector<int64_t>;

/// A statically shaped tensor type, optionally with axis names.
struct TensorType {
  ElemType elem;
  Shape shape;
  std::vector<std::string> names; ///< empty, or one per axis ("" for unnamed)

  int64_t rank() const { return (int64_t)shape.size(); }
  /// The element count, or INT64_MAX when it does not fit an int64_t.
  int64_t numElements() const;
  /// Nx's printed form: "f32[100][2]", "s32" for a scalar.
  std::string str() const;
  bool sameTypeAndShape(const TensorType &o) const { return elem == o.elem && shape == o.shape; }
};

/// The most elements a tensor may have (templates, shapes built in code,
/// every value a program computes).
constexpr int64_t kMaxElements = int64_t(1) << 40;
/// The highest rank a tensor may have.
constexpr int kMaxRank = 64;

/// "{2, 3}" as Nx prints shapes in messages.
std::string shapeString(const Shape &s);

} // namespace nxc

#endif // NXC_SEMA_TYPES_H
