//===- SubByteIntegers.cpp - s2, s4, u2, u4 as bytes ----------------------===//
//
// Before the nx dialect, every s2/s4 (u2/u4) value becomes an s8 (u8) value
// holding it sign-extended (zero-extended): one byte per element, as nxc's
// arguments and results hold them. An op whose result is a sub-byte type is
// computed in the byte type and wrapped back to its width, which is what Nx
// does when it writes a result into a packed binary (<<x::4-signed>>):
// arithmetic that overflows 4 bits wraps modulo 16, as Nx's does, because 16
// divides 256. Bit counts look at the element's own bits only.
//
//===----------------------------------------------------------------------===//
#include "nxc/Conversion/SubByteIntegers.h"
#include "GraphRewriter.h"

namespace nxc {
namespace {

bool isSubByte(const ElemType &t) { return t.isSubByte(); }

class Widener : public GraphRewriter {
public:
  explicit Widener(const Graph &in) : GraphRewriter(in) {}

private:
  TensorType mapType(const TensorType &t) const override { return TensorType{t.elem.byteType(), t.shape, t.names}; }

  /// x (a byte type) wrapped to `narrow`'s width: shifted up and back
  /// (arithmetically for signed), or masked.
  int wrap(int x, ElemType narrow) {
    if (narrow.isSigned()) {
      int s = like(x, 8 - narrow.bits);
      return binary(Op::RightShift, binary(Op::LeftShift, x, s), s);
    }
    return binary(Op::BitwiseAnd, x, like(x, (1 << narrow.bits) - 1));
  }
  /// The element's own bits, zero-extended (for counting them).
  int ownBits(int x, ElemType narrow) { return binary(Op::BitwiseAnd, x, like(x, (1 << narrow.bits) - 1)); }

  int expand(const Node &n) override {
    if (!nodeHasType(in_, n, isSubByte)) return copy(n);
    ElemType t = n.type.elem;
    switch (n.op) {
    // Values that are already in range: moved, selected, compared.
    case Op::Parameter:
    case Op::RegionArg:
    case Op::Elem:
    case Op::Metadata:
    case Op::Cond:
    case Op::While:
    case Op::PrintValue:
    case Op::Broadcast:
    case Op::Reshape:
    case Op::Transpose:
    case Op::Reverse:
    case Op::Slice:
    case Op::PutSlice:
    case Op::Pad:
    case Op::Concatenate:
    case Op::Select:
    case Op::Max:
    case Op::Min:
    case Op::ReduceMax:
    case Op::ReduceMin:
    case Op::CumulativeMax:
    case Op::CumulativeMin:
    case Op::WindowMax:
    case Op::WindowMin:
    case Op::Take:
    case Op::TakeAlongAxis:
    case Op::Gather:
    case Op::IndexedPut:
    case Op::Argsort:
    case Op::Argmax:
    case Op::Argmin:
    case Op::Sign:
    case Op::RightShift: return copy(n);
    case Op::Constant: { // stored wrapped, as Nx stores it
      Node c = copyOf(n);
      if (t.isSubByte()) {
        int sh = 64 - t.bits;
        for (int64_t &v : c.ivalues)
          v = t.isSigned() ? (int64_t)((uint64_t)v << sh) >> sh : v & ((int64_t(1) << t.bits) - 1);
      }
      return emit(std::move(c));
    }
    case Op::PopulationCount: // of the element's own bits
      return emit(withOperands(n, {ownBits(operandOf(n, 0), t)}));
    case Op::CountLeadingZeros: { // of the element's own bits: 8 - bits fewer
      int clz = emit(withOperands(n, {ownBits(operandOf(n, 0), t)}));
      return binary(Op::Subtract, clz, like(clz, 8 - t.bits));
    }
    case Op::AsType: {
      // A float is truncated and wrapped to the width, as Nx writes
      // <<trunc(x)::4-signed>> (not saturated to the byte type first).
      int x = operandOf(n, 0);
      if (t.isSubByte() && type(x).elem.isFloat()) x = cast(x, ElemType{TypeKind::S, 64});
      int r = cast(x, t.byteType());
      return t.isSubByte() ? wrap(r, t) : r;
    }
    case Op::Bitcast: // between s4 and u4: the same bits, extended again
      if (t.isSubByte()) return wrap(emit(copyOf(n)), t);
      return emit(withOperands(n, {ownBits(operandOf(n, 0), in_.typeOf(n.operands[0]).elem)}));
    default: {
      int r = copy(n);
      return t.isSubByte() ? wrap(r, t) : r;
    }
    }
  }

  Node withOperands(const Node &n, std::vector<int> operands) {
    Node c = copyOf(n);
    c.operands = std::move(operands);
    return c;
  }
};

} // namespace

bool hasSubByteIntegers(const Graph &g) { return graphHasType(g, isSubByte); }

Graph subByteToBytes(const Graph &g) { return Widener(g).run(); }

} // namespace nxc
