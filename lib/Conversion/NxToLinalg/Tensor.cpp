//===- Tensor.cpp - slices, concatenation, padding, gathers, scatters -------===//
//
// The nx ops that move elements: slice and put_slice (dynamic starts clamped
// as Nx clamps them), concatenate, pad (negative and interior padding),
// reverse, take/take_along_axis/gather (indices clamped), argsort and
// indexed_add/indexed_put.
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
namespace {

struct SliceLowering : public OpConversionPattern<nx::SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::SliceOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto inType = llvm::cast<RankedTensorType>(op.getOperand().getType());
    auto outType = llvm::cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    SmallVector<OpFoldResult> offsets = sliceOffsets(rw, l, op.getStartIndices(), op.getStartTensors(),
                                                     adaptor.getStartTensors(), inType, op.getLengths());
    SmallVector<OpFoldResult> sizes, strides;
    for (int64_t d = 0; d < inType.getRank(); ++d) {
      sizes.push_back(rw.getIndexAttr(outType.getDimSize(d)));
      strides.push_back(rw.getIndexAttr(op.getStrides()[d]));
    }
    Value r = tensor::ExtractSliceOp::create(rw, l, outType, adaptor.getOperand(), offsets, sizes, strides);
    rw.replaceOp(op, r);
    return success();
  }
};

struct PutSliceLowering : public OpConversionPattern<nx::PutSliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::PutSliceOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto inType = llvm::cast<RankedTensorType>(op.getOperand().getType());
    auto upType = llvm::cast<RankedTensorType>(op.getUpdate().getType());
    SmallVector<OpFoldResult> offsets = sliceOffsets(rw, l, op.getStartIndices(), op.getStartTensors(),
                                                     adaptor.getStartTensors(), inType, upType.getShape());
    SmallVector<OpFoldResult> sizes, strides;
    for (int64_t d = 0; d < inType.getRank(); ++d) {
      sizes.push_back(rw.getIndexAttr(upType.getDimSize(d)));
      strides.push_back(rw.getIndexAttr(1));
    }
    Value base = freshCopy(rw, l, adaptor.getOperand());
    rw.replaceOp(op,
                 tensor::InsertSliceOp::create(rw, l, adaptor.getUpdate(), base, offsets, sizes, strides).getResult());
    return success();
  }
};

struct ConcatenateLowering : public OpConversionPattern<nx::ConcatenateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::ConcatenateOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    int64_t axis = op.getAxes()[0];
    Value acc = emptyTensor(rw, l, outType);
    int64_t at = 0;
    for (Value in : adaptor.getInputs()) {
      auto t = llvm::cast<RankedTensorType>(in.getType());
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (int64_t d = 0; d < t.getRank(); ++d) {
        offsets.push_back(rw.getIndexAttr(d == axis ? at : 0));
        sizes.push_back(rw.getIndexAttr(t.getDimSize(d)));
        strides.push_back(rw.getIndexAttr(1));
      }
      acc = tensor::InsertSliceOp::create(rw, l, in, acc, offsets, sizes, strides);
      at += t.getDimSize(axis);
    }
    rw.replaceOp(op, acc);
    return success();
  }
};

struct PadLowering : public OpConversionPattern<nx::PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::PadOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    auto inType = llvm::cast<RankedTensorType>(adaptor.getOperand().getType());
    Value v = tensor::ExtractOp::create(rw, l, adaptor.getValue(), ValueRange{});
    Value acc = linalg::FillOp::create(rw, l, ValueRange{v}, ValueRange{emptyTensor(rw, l, outType)}).getResult(0);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t d = 0; d < inType.getRank(); ++d) {
      offsets.push_back(rw.getIndexAttr(op.getLow()[d]));
      sizes.push_back(rw.getIndexAttr(inType.getDimSize(d)));
      strides.push_back(rw.getIndexAttr(op.getInterior()[d] + 1));
    }
    if (inType.getNumElements() > 0)
      acc = tensor::InsertSliceOp::create(rw, l, adaptor.getOperand(), acc, offsets, sizes, strides);
    rw.replaceOp(op, acc);
    return success();
  }
};

struct ReverseLowering : public OpConversionPattern<nx::ReverseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::ReverseOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    unsigned rank = outType.getRank();
    SmallVector<AffineExpr> exprs;
    for (unsigned d = 0; d < rank; ++d) {
      AffineExpr e = rw.getAffineDimExpr(d);
      if (llvm::is_contained(op.getAxes(), (int64_t)d)) e = rw.getAffineConstantExpr(outType.getDimSize(d) - 1) - e;
      exprs.push_back(e);
    }
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value r = genericOp(rw, l, outType, adaptor.getOperand(), {AffineMap::get(rank, 0, exprs, rw.getContext())},
                        emptyTensor(rw, l, outType), rw.getMultiDimIdentityMap(rank), iters,
                        [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    rw.replaceOp(op, r);
    return success();
  }
};

/// An integer index (a scalar of nx type `nxElem`) as an `index`, clamped to
/// [0, dim - 1] so that no read leaves the tensor.
Value clampedIndex(OpBuilder &b, Location l, Value v, Type nxElem, int64_t dim) {
  Value idx = isUnsigned(nxElem) ? (Value)arith::IndexCastUIOp::create(b, l, b.getIndexType(), v)
                                 : (Value)arith::IndexCastOp::create(b, l, b.getIndexType(), v);
  Value hi = arith::ConstantIndexOp::create(b, l, dim - 1);
  if (isUnsigned(nxElem)) return arith::MinUIOp::create(b, l, idx, hi);
  return arith::MaxSIOp::create(b, l, arith::ConstantIndexOp::create(b, l, 0), arith::MinSIOp::create(b, l, idx, hi));
}

template <typename OpTy>
struct GatherLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(this->getTypeConverter()->convertType(op.getType()));
    Value t = adaptor.getOperand(), idx = adaptor.getIndices();
    auto tType = llvm::cast<RankedTensorType>(t.getType());
    auto iType = llvm::cast<RankedTensorType>(idx.getType());
    Type nxIdx = elemOf(op.getIndices());
    ArrayRef<int64_t> axes = op.getAxes();
    Op name = opKind(op);
    Value r = fromCoordinates(rw, l, outType, [&](OpBuilder &b, Location nl, ArrayRef<Value> i) -> Value {
      SmallVector<Value> tc;
      auto index = [&](ArrayRef<Value> ic, int64_t dim) {
        Value v = tensor::ExtractOp::create(b, nl, idx, ic);
        return clampedIndex(b, nl, v, nxIdx, dim);
      };
      if (name == Op::Take) {
        int64_t axis = axes[0], q = iType.getRank();
        for (int64_t d = 0; d < axis; ++d) tc.push_back(i[d]);
        tc.push_back(index(i.slice(axis, q), tType.getDimSize(axis)));
        for (int64_t d = axis + 1; d < tType.getRank(); ++d) tc.push_back(i[d - 1 + q]);
      } else if (name == Op::TakeAlongAxis) {
        for (int64_t d = 0; d < tType.getRank(); ++d)
          tc.push_back(d == axes[0] ? index(i, tType.getDimSize(d)) : i[d]);
      } else { // gather
        int64_t q = iType.getRank() - 1, next = q;
        for (int64_t d = 0; d < tType.getRank(); ++d) {
          auto at = llvm::find(axes, d);
          if (at == axes.end()) {
            tc.push_back(i[next++]);
            continue;
          }
          SmallVector<Value> ic(i.begin(), i.begin() + q);
          ic.push_back(arith::ConstantIndexOp::create(b, nl, at - axes.begin()));
          tc.push_back(index(ic, tType.getDimSize(d)));
        }
      }
      return tensor::ExtractOp::create(b, nl, t, tc);
    });
    rw.replaceOp(op, r);
    return success();
  }
};

/// Stable argsort by ranks: position(i) = #{j : x[j] comes before x[i]},
/// then result[position(i)] = i. Quadratic in the axis length, branch-free.
struct ArgsortLowering : public OpConversionPattern<nx::ArgsortOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::ArgsortOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value x = adaptor.getOperand();
    auto xType = llvm::cast<RankedTensorType>(x.getType());
    Type et = xType.getElementType(), nxIn = elemOf(op.getOperand());
    bool isF = llvm::isa<FloatType>(et), uns = isUnsigned(nxIn), desc = op.getDirection()[0] != 0;
    int64_t axis = op.getAxes()[0];
    unsigned rank = xType.getRank(), extra = rank;
    MLIRContext *ctx = rw.getContext();
    SmallVector<AffineExpr> at, other;
    for (unsigned d = 0; d < rank; ++d) {
      at.push_back(rw.getAffineDimExpr(d));
      other.push_back(rw.getAffineDimExpr((int64_t)d == axis ? extra : d));
    }
    SmallVector<utils::IteratorType> iters(rank + 1, utils::IteratorType::parallel);
    iters[extra] = utils::IteratorType::reduction;
    Type i64 = rw.getI64Type();
    auto posType = RankedTensorType::get(xType.getShape(), i64);
    Value posInit = filled(rw, l, posType, rw.getIntegerAttr(i64, 0));
    // Dims: the tensor's (axis = i) and one more (j): ins x[i], x[j].
    Value pos = genericOp(rw, l, posType, ValueRange{x, x},
                          {AffineMap::get(rank + 1, 0, at, ctx), AffineMap::get(rank + 1, 0, other, ctx)}, posInit,
                          AffineMap::get(rank + 1, 0, at, ctx), iters, [&](OpBuilder &b, Location nl, ValueRange a) {
                            Value xi = a[0], xj = a[1], acc = a[2];
                            Value first, equal;
                            if (isF) {
                              Value ni = arith::CmpFOp::create(b, nl, arith::CmpFPredicate::UNO, xi, xi);
                              Value nj = arith::CmpFOp::create(b, nl, arith::CmpFPredicate::UNO, xj, xj);
                              Value t = arith::ConstantOp::create(b, nl, b.getBoolAttr(true));
                              // asc: j before i if xj < xi or (xi is NaN and xj is not); desc mirrors it.
                              first = desc ? arith::OrIOp::create(
                                                 b, nl, arith::CmpFOp::create(b, nl, arith::CmpFPredicate::OGT, xj, xi),
                                                 arith::AndIOp::create(b, nl, nj, arith::XOrIOp::create(b, nl, ni, t)))
                                           : arith::OrIOp::create(
                                                 b, nl, arith::CmpFOp::create(b, nl, arith::CmpFPredicate::OLT, xj, xi),
                                                 arith::AndIOp::create(b, nl, ni, arith::XOrIOp::create(b, nl, nj, t)));
                              equal = arith::OrIOp::create(
                                  b, nl, arith::CmpFOp::create(b, nl, arith::CmpFPredicate::OEQ, xj, xi),
                                  arith::AndIOp::create(b, nl, ni, nj));
                            } else {
                              auto p = desc ? (uns ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                                            : (uns ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
                              first = arith::CmpIOp::create(b, nl, p, xj, xi);
                              equal = arith::CmpIOp::create(b, nl, arith::CmpIPredicate::eq, xj, xi);
                            }
                            Value i = linalg::IndexOp::create(b, nl, axis), j = linalg::IndexOp::create(b, nl, extra);
                            Value earlier = arith::CmpIOp::create(b, nl, arith::CmpIPredicate::ult, j, i);
                            Value before =
                                arith::OrIOp::create(b, nl, first, arith::AndIOp::create(b, nl, equal, earlier));
                            return (Value)arith::AddIOp::create(b, nl, acc, arith::ExtUIOp::create(b, nl, i64, before));
                          });
    // result[k] = the i whose position is k (dims: the tensor's with axis = k, and i).
    Type it = outType.getElementType();
    Value outInit = filled(rw, l, outType, rw.getIntegerAttr(it, 0));
    Value r = genericOp(rw, l, outType, ValueRange{pos}, {AffineMap::get(rank + 1, 0, other, ctx)}, outInit,
                        AffineMap::get(rank + 1, 0, at, ctx), iters, [&](OpBuilder &b, Location nl, ValueRange a) {
                          Value k = arith::IndexCastOp::create(b, nl, i64, linalg::IndexOp::create(b, nl, axis));
                          Value i = arith::IndexCastOp::create(b, nl, it, linalg::IndexOp::create(b, nl, extra));
                          Value hit = arith::CmpIOp::create(b, nl, arith::CmpIPredicate::eq, a[0], k);
                          return (Value)arith::AddIOp::create(
                              b, nl, a[1], arith::SelectOp::create(b, nl, hit, i, iconst(b, nl, it, 0)));
                        });
    rw.replaceOp(op, r);
    return success();
  }
};

/// indexed_add/indexed_put: a loop over the index rows, in order; rows with
/// an index out of range are skipped (as XLA's scatter does).
template <typename OpTy, bool Add>
struct ScatterLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    Value idx = adaptor.getIndices(), upd = adaptor.getUpdates();
    auto tType = llvm::cast<RankedTensorType>(adaptor.getOperand().getType());
    auto iType = llvm::cast<RankedTensorType>(idx.getType());
    Type nxIdx = elemOf(op.getIndices());
    bool isF = llvm::isa<FloatType>(tType.getElementType());
    Value base = freshCopy(rw, l, adaptor.getOperand());
    Value lb = arith::ConstantIndexOp::create(rw, l, 0),
          ub = arith::ConstantIndexOp::create(rw, l, iType.getDimSize(0)),
          one = arith::ConstantIndexOp::create(rw, l, 1);
    ArrayRef<int64_t> axes = op.getAxes();
    auto loop = scf::ForOp::create(
        rw, l, lb, ub, one, ValueRange{base}, [&](OpBuilder &b, Location nl, Value r, ValueRange it) {
          SmallVector<Value> coords(tType.getRank());
          Value ok = arith::ConstantOp::create(b, nl, b.getBoolAttr(true));
          for (size_t c = 0; c < axes.size(); ++c) {
            Value v = tensor::ExtractOp::create(b, nl, idx, ValueRange{r, arith::ConstantIndexOp::create(b, nl, c)});
            Value i = isUnsigned(nxIdx) ? (Value)arith::IndexCastUIOp::create(b, nl, b.getIndexType(), v)
                                        : (Value)arith::IndexCastOp::create(b, nl, b.getIndexType(), v);
            Value inRange = arith::CmpIOp::create(b, nl, arith::CmpIPredicate::ult, i,
                                                  arith::ConstantIndexOp::create(b, nl, tType.getDimSize(axes[c])));
            ok = arith::AndIOp::create(b, nl, ok, inRange);
            coords[axes[c]] = i;
          }
          Value u = tensor::ExtractOp::create(b, nl, upd, ValueRange{r});
          auto ifOp = scf::IfOp::create(
              b, nl, ok,
              [&](OpBuilder &bb, Location ll) {
                Value v = u;
                if (Add) {
                  Value old = tensor::ExtractOp::create(bb, ll, it[0], coords);
                  v = isF ? fadd(bb, ll, old, u) : (Value)arith::AddIOp::create(bb, ll, old, u);
                }
                scf::YieldOp::create(bb, ll,
                                     ValueRange{tensor::InsertOp::create(bb, ll, v, it[0], coords).getResult()});
              },
              [&](OpBuilder &bb, Location ll) { scf::YieldOp::create(bb, ll, it[0]); });
          scf::YieldOp::create(b, nl, ifOp.getResults());
        });
    rw.replaceOp(op, loop.getResult(0));
    return success();
  }
};

} // namespace

void populateTensorPatterns(RewritePatternSet &patterns, const TypeConverter &tc) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<SliceLowering, PutSliceLowering, ConcatenateLowering, PadLowering, ReverseLowering,
               GatherLowering<nx::TakeOp>, GatherLowering<nx::TakeAlongAxisOp>, GatherLowering<nx::GatherOp>,
               ArgsortLowering, ScatterLowering<nx::IndexedAddOp, true>, ScatterLowering<nx::IndexedPutOp, false>>(
      tc, ctx, /*benefit=*/2);
}

} // namespace nxc::lowering
