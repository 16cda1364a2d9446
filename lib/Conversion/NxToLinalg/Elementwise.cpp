//===- Elementwise.cpp - element-wise nx ops and simple structured ones -----===//
//
// Element-wise ops become one parallel linalg.generic each (scalarOp gives
// the body); constants, iota, bitcasts, as_type, select, broadcasts,
// transposes and reshapes their own simple patterns.
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

/// Element-wise ops (the nx ops with the Elementwise trait): one parallel
/// linalg.generic whose body is the op's scalar computation (scalarOp, the
/// element-wise table).
struct ElementwiseLowering : public ConversionPattern {
  ElementwiseLowering(const TypeConverter &tc, MLIRContext *ctx)
      : ConversionPattern(tc, MatchTraitOpTypeTag(), TypeID::get<OpTrait::Elementwise>(), 1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value> operands, ConversionPatternRewriter &rw) const override {
    if (!llvm::isa<nx::NxDialect>(op->getDialect())) return failure();
    std::string name = op->getName().stripDialect().str();
    std::optional<Op> kind = opNamed(name);
    if (!kind) return rw.notifyMatchFailure(op, "nx." + name + " is not in Ops.def");
    Type nxIn = elemOf(op->getOperand(0));
    bool failed = false;
    Value result = elementwise(rw, op->getLoc(), convertedResult(getTypeConverter(), op), operands,
                               [&](OpBuilder &b, Location nl, ValueRange a) -> Value {
                                 auto r = scalarOp(b, nl, *kind, a.take_front(operands.size()), nxIn);
                                 if (succeeded(r)) return *r;
                                 failed = true;
                                 return a[0];
                               });
    if (failed) return rw.notifyMatchFailure(op, "no lowering for nx." + name);
    rw.replaceOp(op, result);
    return success();
  }
};

/// A pattern for one op type whose lowering is a function of the adaptor's
/// operands and the converted result type.
template <typename OpTy>
struct SimpleLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Value r = lower(op, adaptor.getOperands(), rw, convertedResult(this->getTypeConverter(), op));
    rw.replaceOp(op, r);
    return success();
  }
  static Value lower(OpTy op, ValueRange operands, ConversionPatternRewriter &rw, RankedTensorType outType);
};

template <>
Value SimpleLowering<nx::ConstantOp>::lower(nx::ConstantOp op, ValueRange, ConversionPatternRewriter &rw,
                                            RankedTensorType outType) {
  // The same bits, seen with the signless element type.
  auto attr = llvm::cast<DenseElementsAttr>(op.getValue());
  return arith::ConstantOp::create(rw, op.getLoc(), outType, attr.bitcast(outType.getElementType()));
}

template <>
Value SimpleLowering<nx::IotaOp>::lower(nx::IotaOp op, ValueRange, ConversionPatternRewriter &rw,
                                        RankedTensorType outType) {
  // Computed from the loop indices: no table in read-only data.
  ArrayRef<int64_t> axes = op.getAxes();
  Type et = outType.getElementType();
  return fromCoordinates(rw, op.getLoc(), outType, [&](OpBuilder &b, Location nl, ArrayRef<Value> i) -> Value {
    Value v;
    if (!axes.empty()) {
      v = i[axes[0]];
    } else {
      // The row-major flat index.
      v = arith::ConstantIndexOp::create(b, nl, 0);
      for (int64_t d = 0; d < outType.getRank(); ++d)
        v = arith::AddIOp::create(
            b, nl, arith::MulIOp::create(b, nl, v, arith::ConstantIndexOp::create(b, nl, outType.getDimSize(d))), i[d]);
    }
    Value n = arith::IndexCastUIOp::create(b, nl, b.getI64Type(), v);
    if (llvm::isa<FloatType>(et)) return arith::UIToFPOp::create(b, nl, et, n);
    return et.getIntOrFloatBitWidth() == 64 ? n : (Value)arith::TruncIOp::create(b, nl, et, n);
  });
}

template <>
Value SimpleLowering<nx::BitcastOp>::lower(nx::BitcastOp op, ValueRange operands, ConversionPatternRewriter &rw,
                                           RankedTensorType outType) {
  Type to = outType.getElementType();
  return elementwise(rw, op.getLoc(), outType, operands, [&](OpBuilder &b, Location nl, ValueRange a) {
    return (Value)arith::BitcastOp::create(b, nl, to, a[0]);
  });
}

template <>
Value SimpleLowering<nx::AsTypeOp>::lower(nx::AsTypeOp op, ValueRange operands, ConversionPatternRewriter &rw,
                                          RankedTensorType outType) {
  Type from = elemOf(op.getOperand()), to = elemOf(op.getResult());
  return elementwise(rw, op.getLoc(), outType, operands, [&](OpBuilder &b, Location nl, ValueRange a) {
    return convertScalar(b, nl, a[0], from, to);
  });
}

template <>
Value SimpleLowering<nx::SelectOp>::lower(nx::SelectOp op, ValueRange operands, ConversionPatternRewriter &rw,
                                          RankedTensorType outType) {
  return elementwise(rw, op.getLoc(), outType, operands, [&](OpBuilder &b, Location nl, ValueRange a) {
    return (Value)arith::SelectOp::create(b, nl, isNonZero(b, nl, a[0]), a[1], a[2]);
  });
}

template <>
Value SimpleLowering<nx::BroadcastOp>::lower(nx::BroadcastOp op, ValueRange operands, ConversionPatternRewriter &rw,
                                             RankedTensorType outType) {
  ArrayRef<int64_t> axes = op.getAxes();
  auto inType = llvm::cast<RankedTensorType>(operands[0].getType());
  SmallVector<AffineExpr> exprs;
  for (size_t i = 0; i < axes.size(); ++i)
    exprs.push_back(inType.getDimSize(i) == 1 && outType.getDimSize(axes[i]) != 1 ? rw.getAffineConstantExpr(0)
                                                                                    : rw.getAffineDimExpr(axes[i]));
  unsigned rank = outType.getRank();
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return genericOp(rw, op.getLoc(), outType, operands, {AffineMap::get(rank, 0, exprs, rw.getContext())},
                   emptyTensor(rw, op.getLoc(), outType), rw.getMultiDimIdentityMap(rank), iters,
                   [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

template <>
Value SimpleLowering<nx::TransposeOp>::lower(nx::TransposeOp op, ValueRange operands, ConversionPatternRewriter &rw,
                                             RankedTensorType outType) {
  ArrayRef<int64_t> perm = op.getAxes();
  unsigned rank = outType.getRank();
  SmallVector<AffineExpr> exprs(rank);
  for (unsigned k = 0; k < rank; ++k) exprs[perm[k]] = rw.getAffineDimExpr(k);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return genericOp(rw, op.getLoc(), outType, operands, {AffineMap::get(rank, 0, exprs, rw.getContext())},
                   emptyTensor(rw, op.getLoc(), outType), rw.getMultiDimIdentityMap(rank), iters,
                   [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

template <>
Value SimpleLowering<nx::ReshapeOp>::lower(nx::ReshapeOp op, ValueRange operands, ConversionPatternRewriter &rw,
                                           RankedTensorType outType) {
  return reshapeTensor(rw, op.getLoc(), operands[0], outType);
}


} // namespace

void populateElementwisePatterns(RewritePatternSet &patterns, const TypeConverter &tc) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwiseLowering, SimpleLowering<nx::ConstantOp>, SimpleLowering<nx::BitcastOp>,
               SimpleLowering<nx::AsTypeOp>, SimpleLowering<nx::SelectOp>, SimpleLowering<nx::BroadcastOp>,
               SimpleLowering<nx::TransposeOp>, SimpleLowering<nx::ReshapeOp>, SimpleLowering<nx::IotaOp>>(tc, ctx);
}

} // namespace nxc::lowering
