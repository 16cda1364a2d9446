//===- Op.h - the kinds of graph nodes (Ops.def) -----------------*- C++ -*-===//
//
// Op names a node's operation (Node::op). Everything about an op that more
// than one place needs -- its Nx name, its family -- comes from the one list
// in Ops.def; code decides on an op with a switch or a comparison with an
// Op value, never by its name. Names meet Op only at the boundaries that
// read or print them: the graph format, Nx's function names in Sema, the
// nx dialect's op names.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_SEMA_OP_H
#define NXC_SEMA_OP_H

#include <climits>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nxc {

enum class Op : uint8_t {
#define NXC_OP(Enum, name, Family) Enum,
#include "nxc/Sema/Ops.def"
};

/// How an op is typed when it is also the Nx function of its name
/// (NxElementwise.cpp), and what kind of node it is otherwise.
enum class OpFamily : uint8_t {
  Graph,             ///< parameter, region_arg, elem, metadata: no nx op
  Control,           ///< cond, while, print_value
  Creation,          ///< constant, iota
  FloatUnary,        ///< Nx.exp...: a float result
  SameUnary,         ///< Nx.negate...: the input's type
  IntegerUnary,      ///< Nx.bitwise_not...: integers only
  PredicateUnary,    ///< Nx.is_nan...: u8
  Conversion,        ///< as_type, bitcast
  Arithmetic,        ///< Nx.add...: binary_type
  FloatArithmetic,   ///< Nx.divide, Nx.atan2: a float binary_type
  IntegerArithmetic, ///< Nx.quotient, bitwise, shifts: integers only
  Comparison,        ///< Nx.equal..., logical_*: u8
  Selection,         ///< select
  Layout,            ///< broadcast, reshape, slicing, padding...
  Reduction,         ///< over axes
  Scan,              ///< cumulative_* along one axis
  Window,            ///< window_*
  Contraction,       ///< dot, conv
  Indexing,          ///< take, gather, indexed_*, argsort
  ComplexParts,      ///< real, imag, conjugate, complex: no nx op
};

namespace detail {
struct OpInfo {
  std::string_view name;
  OpFamily family;
};
inline constexpr OpInfo kOpInfo[] = {
#define NXC_OP(Enum, name, Family) {name, OpFamily::Family},
#include "nxc/Sema/Ops.def"
};
} // namespace detail

inline constexpr int kOpCount = (int)(sizeof detail::kOpInfo / sizeof detail::kOpInfo[0]);

/// Nx's name of the op ("reduce_max"); the nx dialect op is "nx." + it.
inline constexpr std::string_view opName(Op op) { return detail::kOpInfo[(int)op].name; }
inline constexpr OpFamily opFamily(Op op) { return detail::kOpInfo[(int)op].family; }

/// The op Nx names `name`, if any.
inline std::optional<Op> opNamed(std::string_view name) {
  for (int i = 0; i < kOpCount; ++i)
    if (detail::kOpInfo[i].name == name) return (Op)i;
  return std::nullopt;
}

/// A start of `slice`/`put_slice` (their `start_indices`) that the next of
/// their start tensors supplies at run time, in the graph, the graph format
/// and the nx dialect alike (MLIR's ShapedType::kDynamic has the same value).
inline constexpr int64_t kDynamicSliceStart = INT64_MIN;

/// Whether the op is an nx dialect op (every family but Graph and
/// ComplexParts).
inline constexpr bool isNxDialectOp(Op op) {
  return opFamily(op) != OpFamily::Graph && opFamily(op) != OpFamily::ComplexParts;
}

/// What an op does with complex operands or results (c64, c128).
enum class ComplexSupport : uint8_t {
  Lowered,     ///< computed on the pairs of reals (ComplexToReal.cpp)
  RefusedByNx, ///< Nx raises "does not support complex inputs" itself
  NotYet,      ///< Nx computes it; nxc does not yet
};
ComplexSupport complexSupport(Op op);

} // namespace nxc

#endif // NXC_SEMA_OP_H
