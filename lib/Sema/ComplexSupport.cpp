//===- ComplexSupport.cpp - which ops take complex values -----------------===//
//
// The one list of what each op does with c64/c128 operands or results:
// computed on pairs of reals (lib/Conversion/ComplexToReal.cpp lowers exactly
// these), refused by Nx itself (then nxc refuses with Nx's message), or not
// yet computed by nxc. checkComplexOps reports the first op of a traced or
// read graph that cannot take its complex values, at the op's location.
//
//===----------------------------------------------------------------------===//
#include "nxc/Sema/Graph.h"

#include <fmt/format.h>

namespace nxc {

ComplexSupport complexSupport(Op op) {
  switch (op) {
  case Op::Parameter:
  case Op::RegionArg:
  case Op::Elem:
  case Op::Metadata:
  case Op::Cond:
  case Op::While:
  case Op::Constant:
  case Op::Iota:
  case Op::PrintValue:
  case Op::CumulativeProduct:
  case Op::LogicalNot:
  case Op::WindowSum:
  case Op::CumulativeSum:
  case Op::Atanh:
  case Op::Acosh:
  case Op::Asinh:
  case Op::Atan:
  case Op::Acos:
  case Op::Asin:
  case Op::Cbrt:
  case Op::Product:
  case Op::Conv:
  case Op::IndexedAdd:
  case Op::IndexedPut:
  case Op::Exp:
  case Op::Expm1:
  case Op::Log1p:
  case Op::Log2:
  case Op::Rsqrt:
  case Op::Sigmoid:
  case Op::Tan:
  case Op::Sinh:
  case Op::Cosh:
  case Op::Tanh:
  case Op::Pow:
  case Op::Log:
  case Op::Sqrt:
  case Op::Sin:
  case Op::Cos:
  case Op::Negate:
  case Op::Abs:
  case Op::IsNan:
  case Op::IsInfinity:
  case Op::AsType:
  case Op::Add:
  case Op::Subtract:
  case Op::Multiply:
  case Op::Divide:
  case Op::Equal:
  case Op::NotEqual:
  case Op::Select:
  case Op::Broadcast:
  case Op::Reshape:
  case Op::Transpose:
  case Op::Reverse:
  case Op::Slice:
  case Op::PutSlice:
  case Op::Pad:
  case Op::Concatenate:
  case Op::Sum:
  case Op::Dot:
  case Op::Take:
  case Op::TakeAlongAxis:
  case Op::Gather:
  case Op::Real:
  case Op::Imag:
  case Op::Conjugate:
  case Op::Complex: return ComplexSupport::Lowered;
  // Nx raises "Nx.f/n does not support complex inputs" for these.
  case Op::Erf:
  case Op::Erfc:
  case Op::ErfInv:
  case Op::Floor:
  case Op::Ceil:
  case Op::Round:
  case Op::Remainder:
  case Op::Max:
  case Op::Min:
  case Op::Less:
  case Op::LessEqual:
  case Op::Greater:
  case Op::GreaterEqual:
  case Op::ReduceMax:
  case Op::ReduceMin:
  case Op::Argmax:
  case Op::Argmin:
  case Op::Argsort:
  case Op::WindowMax:
  case Op::WindowMin:
  case Op::CumulativeMax:
  case Op::CumulativeMin:
  case Op::Bitcast:
  case Op::BitwiseNot:
  case Op::PopulationCount:
  case Op::CountLeadingZeros:
  case Op::Quotient:
  case Op::BitwiseAnd:
  case Op::BitwiseOr:
  case Op::BitwiseXor:
  case Op::LeftShift:
  case Op::RightShift: return ComplexSupport::RefusedByNx;
  case Op::Sign:
  case Op::Atan2:
  case Op::LogicalAnd:
  case Op::LogicalOr:
  case Op::LogicalXor:
  case Op::All:
  case Op::Any:
  case Op::WindowProduct: return ComplexSupport::NotYet;
  }
  return ComplexSupport::NotYet;
}

namespace {

bool isComplex(const ElemType &t) { return t.isComplex(); }

/// What is wrong with the operand types of a lowered op on complex values
/// (a graph file can say anything; Sema's graphs are consistent), or "".
std::string operandTypeError(const Graph &g, const Node &n) {
  auto typeAt = [&](size_t k) { return g.typeOf(n.operands[k]).elem; };
  auto sameAsResult = [&](size_t from, size_t to) -> std::string {
    for (size_t k = from; k < std::min(to, n.operands.size()); ++k)
      if (typeAt(k) != n.type.elem)
        return fmt::format(FMT_STRING("operand {} is {}, but the result is {}"), k, typeAt(k).name(),
                           n.type.elem.name());
    return "";
  };
  switch (n.op) {
  case Op::Conjugate: // of a real operand too (Nx's graphs): a complex result
    if (n.operands.size() != 1 || n.type.elem != toComplex(typeAt(0))) return "gives to_complex of its operand's type";
    return "";
  case Op::Real:
  case Op::Imag:
    if (n.operands.size() != 1 || !typeAt(0).isComplex()) return "expects one complex operand";
    if (n.type.elem != (n.op == Op::Conjugate ? typeAt(0) : typeAt(0).partType()))
      return fmt::format(FMT_STRING("of {} is {}"), typeAt(0).name(),
                         (n.op == Op::Conjugate ? typeAt(0) : typeAt(0).partType()).name());
    return "";
  case Op::Complex:
    if (n.operands.size() != 2 || !n.type.elem.isComplex() || typeAt(0) != n.type.elem.partType() ||
        typeAt(1) != n.type.elem.partType())
      return "expects a complex result from two operands of its part type";
    return "";
  case Op::Abs:
    if (n.operands.size() != 1 || !typeAt(0).isComplex() || n.type.elem != typeAt(0).partType())
      return "of a complex operand is its part type";
    return "";
  case Op::AsType:
  case Op::PrintValue:
  case Op::Parameter:
  case Op::RegionArg:
  case Op::Elem:
  case Op::Cond:
  case Op::While:
  case Op::Constant:
  case Op::Iota: return "";
  case Op::Equal:
  case Op::NotEqual:
  case Op::IsNan:
  case Op::IsInfinity:
  case Op::LogicalNot:
    for (size_t k = 0; k < n.operands.size(); ++k)
      if (typeAt(k) != typeAt(0)) return "expects operands of one type";
    return n.type.elem == ElemType::u8() ? "" : "gives u8";
  case Op::Select: return n.type.elem.isComplex() ? sameAsResult(1, 3) : "expects a complex result";
  case Op::Metadata: return n.type.elem.isComplex() ? sameAsResult(0, 1) : "";
  case Op::Slice:
  case Op::Take:
  case Op::TakeAlongAxis:
  case Op::Gather: return n.type.elem.isComplex() ? sameAsResult(0, 1) : "expects a complex result";
  case Op::PutSlice: return n.type.elem.isComplex() ? sameAsResult(0, 2) : "expects a complex result";
  case Op::IndexedAdd:
  case Op::IndexedPut:
    if (!n.type.elem.isComplex() || n.operands.size() != 3) return "expects a complex result";
    if (typeAt(0) != n.type.elem || typeAt(2) != n.type.elem) return "expects a target and updates of its type";
    return "";
  default: return n.type.elem.isComplex() ? sameAsResult(0, n.operands.size()) : "expects a complex result";
  }
}

} // namespace

Status checkComplexOps(const Graph &g) {
  for (const Node &n : g.nodes) {
    if (!nodeHasType(g, n, isComplex) && opFamily(n.op) != OpFamily::ComplexParts) continue;
    std::string name(opName(n.op));
    int arity = n.op == Op::PrintValue ? 1 : std::max<int>(1, (int)n.operands.size());
    switch (complexSupport(n.op)) {
    case ComplexSupport::Lowered: {
      std::string wrong = operandTypeError(g, n);
      if (!wrong.empty()) return error(n.loc, fmt::format(FMT_STRING("{} on complex values: {}"), name, wrong));
      continue;
    }
    case ComplexSupport::RefusedByNx:
      return error(n.loc, fmt::format(FMT_STRING("Nx.{}/{} does not support complex inputs"), name, arity));
    case ComplexSupport::NotYet:
      return error(n.loc, fmt::format(FMT_STRING("nxc does not compute {} on complex values yet ({}); "
                                                 "docs/features.md lists what takes them"),
                                      name, n.type.str()));
    }
  }
  return okStatus();
}

} // namespace nxc
