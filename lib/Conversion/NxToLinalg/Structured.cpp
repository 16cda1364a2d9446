//===- Structured.cpp - structured ops on tensors for the lowering ----------===//
//
// Builders the pattern families share: linalg.generic ops (element-wise,
// reductions and their accumulators), dot as one generic in the loop order
// that suits its shape, reshapes, slices' offsets and fresh copies.
//
//===----------------------------------------------------------------------===//
#include "Helpers.h"
#include "../ScalarMath.h"
#include "nxc/Dialect/Nx/NxDialect.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;

namespace nxc::lowering {

//===----------------------------------------------------------------------===//
// Structured ops
//===----------------------------------------------------------------------===//

/// Marks a layout copy that fusion must keep (see FuseElementwise.cpp).
constexpr const char *kKeepLayoutAttr = "nxc.keep_layout";

/// Dot runs the contraction innermost (as dot products of contiguous rows,
/// rhs copied to [free, contracted] first) when the output has fewer columns
/// than kWideRows and the contraction has at least `longContraction` elements
/// (a pass option: 256 by default, 128 where the CPU pipeline targets an OS),
/// and either rhs is a constant (nxc-pack-constant-layouts does the copy at
/// compile time) or the output has kCopyPaysRows rows or more (for one row,
/// [1,784] x [784,10], the copy alone took longer than the whole "ikj" dot:
/// 2.15 us against 1.27); otherwise the output columns run innermost ("ikj").
constexpr int64_t kWideRows = 16;
constexpr int64_t kCopyPaysRows = 2;

/// The type a reduction combining with `combine` accumulates elem in: float
/// sums and products (dots and convolutions are sums) of f16 and bf16 in f32
/// (a running f16 sum loses every addend below its 11 bits; Nx's reference
/// backend accumulates in f64 and rounds once); everything else in its own
/// type.
Type accumulatorType(Builder &b, Op combine, Type elem) {
  bool accumulates = combine == Op::Sum || combine == Op::Product;
  return accumulates && llvm::isa<FloatType>(elem) && elem.getIntOrFloatBitWidth() < 32 ? (Type)b.getF32Type() : elem;
}


Value emptyTensor(OpBuilder &b, Location l, RankedTensorType t) {
  return tensor::EmptyOp::create(b, l, t.getShape(), t.getElementType());
}

Value genericOp(OpBuilder &b, Location l, RankedTensorType outType, ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                Value init, AffineMap outMap, ArrayRef<utils::IteratorType> iters, BodyFn body) {
  SmallVector<AffineMap> maps(inputMaps.begin(), inputMaps.end());
  maps.push_back(outMap);
  auto g = linalg::GenericOp::create(b, l, TypeRange{outType}, inputs, ValueRange{init}, maps, iters,
                                     [&](OpBuilder &nb, Location nl, ValueRange args) {
                                       Value r = body(nb, nl, args);
                                       linalg::YieldOp::create(nb, nl, r);
                                     });
  return g.getResult(0);
}

Value elementwise(OpBuilder &b, Location l, RankedTensorType outType, ValueRange inputs, BodyFn body) {
  unsigned rank = outType.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps(inputs.size(), id);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return genericOp(b, l, outType, inputs, maps, emptyTensor(b, l, outType), id, iters, body);
}

/// A float x extended to the wider float type acc; x itself otherwise (the
/// same type, or the integers and truth values of all/any).
Value widened(OpBuilder &b, Location l, Value x, Type acc) {
  if (x.getType() == acc || !llvm::isa<FloatType>(x.getType()) || !llvm::isa<FloatType>(acc)) return x;
  return arith::ExtFOp::create(b, l, acc, x);
}

/// An accumulated tensor rounded once to outType (itself when it has that type).
Value narrowed(OpBuilder &b, Location l, Value acc, RankedTensorType outType) {
  if (acc.getType() == outType) return acc;
  return elementwise(b, l, outType, acc, [&](OpBuilder &nb, Location nl, ValueRange a) {
    return (Value)arith::TruncFOp::create(nb, nl, outType.getElementType(), a[0]);
  });
}

/// The identity element of a reduction, as an attribute of signless type t.
TypedAttr reductionInit(OpBuilder &b, Op reduction, Type nxElem, Type t) {
  bool isF = llvm::isa<FloatType>(t);
  bool uns = isUnsigned(nxElem);
  unsigned w = t.getIntOrFloatBitWidth();
  if (reduction == Op::Sum || reduction == Op::Any)
    return isF ? (TypedAttr)b.getFloatAttr(t, 0.0) : b.getIntegerAttr(t, 0);
  if (reduction == Op::Product || reduction == Op::All)
    return isF ? (TypedAttr)b.getFloatAttr(t, 1.0) : b.getIntegerAttr(t, 1);
  // Max and min start from the type's infinity, or for a type without one
  // (f8_e4m3fn) from its largest finite value, Nx's infinity for it (IEEE's
  // would convert to NaN).
  auto extreme = [&](bool negative) -> TypedAttr {
    const llvm::fltSemantics &sem = llvm::cast<FloatType>(t).getFloatSemantics();
    return b.getFloatAttr(t, llvm::APFloat::semanticsHasInf(sem) ? llvm::APFloat::getInf(sem, negative)
                                                                 : llvm::APFloat::getLargest(sem, negative));
  };
  if (reduction == Op::ReduceMax) {
    if (isF) return extreme(true);
    return b.getIntegerAttr(t, uns ? APInt::getMinValue(w) : APInt::getSignedMinValue(w));
  }
  // reduce_min
  if (isF) return extreme(false);
  return b.getIntegerAttr(t, uns ? APInt::getMaxValue(w) : APInt::getSignedMaxValue(w));
}

Value reductionCombine(OpBuilder &b, Location l, Op reduction, Type nxElem, Value x, Value acc) {
  bool isF = llvm::isa<FloatType>(x.getType());
  bool uns = isUnsigned(nxElem);
  if (reduction == Op::Sum) return isF ? faddFast(b, l, acc, x) : (Value)arith::AddIOp::create(b, l, acc, x);
  if (reduction == Op::Product) return isF ? fmulFast(b, l, acc, x) : (Value)arith::MulIOp::create(b, l, acc, x);
  if (reduction == Op::ReduceMax)
    return isF   ? (x.getType().isF64() ? floatExtremum(b, l, acc, x, true)
                                        : (Value)arith::MaximumFOp::create(b, l, acc, x, fm(b)))
           : uns ? (Value)arith::MaxUIOp::create(b, l, acc, x)
                 : (Value)arith::MaxSIOp::create(b, l, acc, x);
  if (reduction == Op::ReduceMin)
    return isF   ? (x.getType().isF64() ? floatExtremum(b, l, acc, x, false)
                                        : (Value)arith::MinimumFOp::create(b, l, acc, x, fm(b)))
           : uns ? (Value)arith::MinUIOp::create(b, l, acc, x)
                 : (Value)arith::MinSIOp::create(b, l, acc, x);
  Value nz = toU8(b, l, isNonZero(b, l, x));
  if (reduction == Op::All) return (Value)arith::AndIOp::create(b, l, acc, nz);
  return (Value)arith::OrIOp::create(b, l, acc, nz); // any
}

Value filled(OpBuilder &b, Location l, RankedTensorType t, TypedAttr init) {
  Value c = arith::ConstantOp::create(b, l, init);
  return linalg::FillOp::create(b, l, ValueRange{c}, ValueRange{emptyTensor(b, l, t)}).getResult(0);
}

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

Value reshapeTensor(OpBuilder &b, Location l, Value in, RankedTensorType outType) {
  auto inType = llvm::cast<RankedTensorType>(in.getType());
  int64_t n = inType.getNumElements();
  // Through a rank-1 tensor of n elements: collapse, then expand.
  auto flatType = RankedTensorType::get({n}, inType.getElementType());
  Value flat = in;
  if (inType.getRank() == 0) {
    flat = tensor::ExpandShapeOp::create(b, l, flatType, in, ArrayRef<ReassociationIndices>{});
  } else if (inType.getRank() > 1) {
    ReassociationIndices all;
    for (int64_t i = 0; i < inType.getRank(); ++i) all.push_back(i);
    flat = tensor::CollapseShapeOp::create(b, l, flatType, in, ArrayRef<ReassociationIndices>{all});
  }
  if (outType.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, l, outType, flat, ArrayRef<ReassociationIndices>{});
  if (outType.getRank() == 1) return flat;
  ReassociationIndices all;
  for (int64_t i = 0; i < outType.getRank(); ++i) all.push_back(i);
  return tensor::ExpandShapeOp::create(b, l, outType, flat, ArrayRef<ReassociationIndices>{all});
}

Value dotGeneric(OpBuilder &b, Location l, Operation *op, ArrayRef<Value> operands, RankedTensorType outType,
                 int64_t longContraction) {
  auto ca = llvm::cast<DenseI64ArrayAttr>(op->getAttr("lhs_contract")).asArrayRef();
  auto ba = llvm::cast<DenseI64ArrayAttr>(op->getAttr("lhs_batch")).asArrayRef();
  SmallVector<int64_t> cb(llvm::cast<DenseI64ArrayAttr>(op->getAttr("rhs_contract")).asArrayRef());
  SmallVector<int64_t> bb(llvm::cast<DenseI64ArrayAttr>(op->getAttr("rhs_batch")).asArrayRef());
  auto ta = llvm::cast<RankedTensorType>(operands[0].getType());
  auto tb = llvm::cast<RankedTensorType>(operands[1].getType());
  SmallVector<Value> ins(operands.begin(), operands.end());
  // Loop order. When the rhs free dims are wide, they go innermost (batch,
  // lhs free, contracted, rhs free: the "ikj" order), so the inner loop
  // walks rows of rhs and of the result contiguously and LLVM vectorizes it.
  // When they are narrow (a few output columns), the contraction goes
  // innermost instead, as a vectorized reduction.
  unsigned nb = ba.size(), nc = ca.size();
  unsigned nfa = ta.getRank() - nb - nc, nfb = tb.getRank() - nb - nc;
  unsigned nLoops = nb + nfa + nc + nfb;
  int64_t rhsFree = 1;
  for (int64_t d = 0; d < tb.getRank(); ++d)
    if (!llvm::is_contained(cb, d) && !llvm::is_contained(bb, d)) rhsFree *= tb.getDimSize(d);
  int64_t contracted = 1;
  for (int64_t d : cb) contracted *= tb.getDimSize(d);
  int64_t outRows = 1;
  for (int64_t d = 0; d < ta.getRank(); ++d)
    if (!llvm::is_contained(ca, d)) outRows *= ta.getDimSize(d);
  bool rhsConstant = (bool)operands[1].getDefiningOp<arith::ConstantOp>();
  bool contractInner = rhsFree < kWideRows && contracted >= longContraction &&
                       (rhsConstant || outRows >= kCopyPaysRows);
  // The rhs laid out as the loops walk it: [batch, free, contracted] with the
  // contraction innermost, [batch, contracted, free] otherwise, so that both
  // operands stream contiguously. Another layout is copied first (a small
  // copy, when it pays as above): QK^T's rhs, K as [heads, keys, features]
  // contracted over the features, was read a key at a time, 64 floats
  // apart, by scalar loops (a third of a BERT layer's time).
  SmallVector<int64_t> perm(bb.begin(), bb.end());
  if (!contractInner) perm.append(cb.begin(), cb.end());
  for (int64_t d = 0; d < tb.getRank(); ++d)
    if (!llvm::is_contained(cb, d) && !llvm::is_contained(bb, d)) perm.push_back(d);
  if (contractInner) perm.append(cb.begin(), cb.end());
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == (int64_t)i;
  bool copyPays = contractInner || rhsConstant || outRows >= kCopyPaysRows;
  if (!identity && copyPays && !cb.empty()) {
    SmallVector<int64_t> shape;
    for (int64_t d : perm) shape.push_back(tb.getDimSize(d));
    auto newType = RankedTensorType::get(shape, tb.getElementType());
    unsigned rank = tb.getRank();
    SmallVector<AffineExpr> exprs(rank);
    for (unsigned k = 0; k < rank; ++k) exprs[perm[k]] = b.getAffineDimExpr(k);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    ins[1] = genericOp(b, l, newType, ins[1], {AffineMap::get(rank, 0, exprs, b.getContext())},
                       emptyTensor(b, l, newType), b.getMultiDimIdentityMap(rank), iters,
                       [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    // Element-wise fusion must not fold this copy back into the dot.
    ins[1].getDefiningOp()->setAttr(kKeepLayoutAttr, b.getUnitAttr());
    tb = newType;
    for (unsigned i = 0; i < nb; ++i) bb[i] = i;
    for (unsigned k = 0; k < nc; ++k) cb[k] = contractInner ? rank - nc + k : nb + k;
  }
  unsigned contractAt = contractInner ? nb + nfa + nfb : nb + nfa;
  unsigned rhsFreeAt = contractInner ? nb + nfa : nb + nfa + nc;
  SmallVector<AffineExpr> ea(ta.getRank()), eb(tb.getRank()), outExprs;
  for (unsigned i = 0; i < nb; ++i) { ea[ba[i]] = b.getAffineDimExpr(i); eb[bb[i]] = b.getAffineDimExpr(i); }
  for (unsigned k = 0; k < nc; ++k) {
    ea[ca[k]] = b.getAffineDimExpr(contractAt + k);
    eb[cb[k]] = b.getAffineDimExpr(contractAt + k);
  }
  for (unsigned i = 0; i < nb; ++i) outExprs.push_back(b.getAffineDimExpr(i));
  unsigned next = nb;
  for (int64_t d = 0; d < ta.getRank(); ++d)
    if (!ea[d]) { ea[d] = b.getAffineDimExpr(next); outExprs.push_back(b.getAffineDimExpr(next++)); }
  next = rhsFreeAt;
  for (int64_t d = 0; d < tb.getRank(); ++d)
    if (!eb[d]) { eb[d] = b.getAffineDimExpr(next); outExprs.push_back(b.getAffineDimExpr(next++)); }
  SmallVector<utils::IteratorType> iters(nLoops, utils::IteratorType::parallel);
  for (unsigned k = 0; k < nc; ++k) iters[contractAt + k] = utils::IteratorType::reduction;
  Type et = outType.getElementType();
  Type acc = nc == 0 ? et : accumulatorType(b, Op::Sum, et);
  auto accType = RankedTensorType::get(outType.getShape(), acc);
  Value init =
      filled(b, l, accType, llvm::isa<FloatType>(acc) ? (TypedAttr)b.getFloatAttr(acc, 0.0) : b.getIntegerAttr(acc, 0));
  MLIRContext *ctx = b.getContext();
  Value r = genericOp(b, l, accType, ins,
                      {AffineMap::get(nLoops, 0, ea, ctx), AffineMap::get(nLoops, 0, eb, ctx)}, init,
                      AffineMap::get(nLoops, 0, outExprs, ctx), iters, [&](OpBuilder &nb2, Location nl, ValueRange a) {
                        if (nc == 0) // an outer product: no accumulation
                          return llvm::isa<FloatType>(et) ? fmul(nb2, nl, a[0], a[1])
                                                          : (Value)arith::MulIOp::create(nb2, nl, a[0], a[1]);
                        if (llvm::isa<FloatType>(et)) {
                          // One statement each: the order the ops are created in is the printed order.
                          Value x = widened(nb2, nl, a[0], acc);
                          Value y = widened(nb2, nl, a[1], acc);
                          return faddFast(nb2, nl, a[2], fmulFast(nb2, nl, x, y));
                        }
                        return (Value)arith::AddIOp::create(nb2, nl, a[2], arith::MulIOp::create(nb2, nl, a[0], a[1]));
                      });
  return narrowed(b, l, r, outType);
}

/// A linalg.generic with no inputs whose body computes each element from
/// its coordinates (gathers read other tensors with tensor.extract).
Value fromCoordinates(OpBuilder &b, Location l, RankedTensorType outType,
                      llvm::function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> body) {
  unsigned rank = outType.getRank();
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return genericOp(b, l, outType, ValueRange{}, {}, emptyTensor(b, l, outType), b.getMultiDimIdentityMap(rank), iters,
                   [&](OpBuilder &nb, Location nl, ValueRange) {
                     SmallVector<Value> coords;
                     for (unsigned d = 0; d < rank; ++d) coords.push_back(linalg::IndexOp::create(nb, nl, d));
                     return body(nb, nl, coords);
                   });
}

/// The output type of `op`'s single result, converted to signless.
RankedTensorType convertedResult(const TypeConverter *tc, Operation *op) {
  return llvm::cast<RankedTensorType>(tc->convertType(op->getResult(0).getType()));
}

/// A scalar tensor's value as an i1 (non-zero is true).
Value truthOf(OpBuilder &b, Location l, Value scalarTensor) {
  Value v = tensor::ExtractOp::create(b, l, scalarTensor, ValueRange{});
  return isNonZero(b, l, v);
}

/// A dynamic start: the scalar tensor's value as an index, clamped to
/// [0, dim - length] as Nx clamps slice starts.
Value clampedStart(OpBuilder &b, Location l, Value scalarTensor, Type nxElem, int64_t dim, int64_t length) {
  Value v = tensor::ExtractOp::create(b, l, scalarTensor, ValueRange{});
  Value idx = isUnsigned(nxElem) ? (Value)arith::IndexCastUIOp::create(b, l, b.getIndexType(), v)
                                 : (Value)arith::IndexCastOp::create(b, l, b.getIndexType(), v);
  Value lo = arith::ConstantIndexOp::create(b, l, 0);
  Value hi = arith::ConstantIndexOp::create(b, l, dim - length);
  if (isUnsigned(nxElem)) return arith::MinUIOp::create(b, l, idx, hi);
  return arith::MaxSIOp::create(b, l, lo, arith::MinSIOp::create(b, l, idx, hi));
}

/// A copy of `t` into a fresh tensor, so that in-place updates never write
/// into a buffer the function does not own (inputs are read-only).
Value freshCopy(OpBuilder &b, Location l, Value t) {
  auto type = llvm::cast<RankedTensorType>(t.getType());
  // A named copy: canonicalization folds identity linalg.generic ops away.
  return linalg::CopyOp::create(b, l, t, emptyTensor(b, l, type)).getResult(0);
}


/// Offsets of a slice: static starts as attributes, dynamic ones (kDynamicSliceStart)
/// from the next start tensor, clamped so that `lengths` fit.
SmallVector<OpFoldResult> sliceOffsets(OpBuilder &b, Location l, ArrayRef<int64_t> starts, ValueRange nxStarts,
                                       ValueRange startValues, RankedTensorType inType, ArrayRef<int64_t> lengths) {
  SmallVector<OpFoldResult> offsets;
  unsigned dyn = 0;
  for (int64_t d = 0; d < inType.getRank(); ++d) {
    if (starts[d] != kDynamicSliceStart) {
      offsets.push_back(b.getIndexAttr(starts[d]));
      continue;
    }
    offsets.push_back(clampedStart(b, l, startValues[dyn], elemOf(nxStarts[dyn]), inType.getDimSize(d), lengths[d]));
    ++dyn;
  }
  return offsets;
}

} // namespace nxc::lowering
