//===- Reductions.cpp - dots, reductions, scans, windows, convolutions ------===//
//
// The nx ops with reduction loops: dot, sum/product/all/any/max/min (long
// ones in blocks on the CPU), argmax/argmin, cumulative scans, window
// reductions and convolutions, and the CPU's rewrite of convolutions into
// one dot of the input's windows (convolutionsAsDots).
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

struct DotLowering : public OpConversionPattern<nx::DotOp> {
  DotLowering(const TypeConverter &tc, MLIRContext *ctx, int64_t longContraction)
      : OpConversionPattern(tc, ctx), longContraction(longContraction) {}
  LogicalResult matchAndRewrite(nx::DotOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, dotGeneric(rw, op.getLoc(), op, SmallVector<Value>(adaptor.getOperands()),
                                convertedResult(getTypeConverter(), op), longContraction));
    return success();
  }
  int64_t longContraction;
};

/// A long reduction over trailing axes in two levels: blocks of 1024 to 4096
/// elements (a divisor of the reduced extent) reduced first, then the
/// blocks' results. The blocks are a parallel loop, which the thread pool can
/// share out. Null when the axes are not the trailing ones or no block size
/// divides their extent.
///  - sum (f32): the blocks are summed in f32 (a short sum: the vectorized loop
///    keeps 32 partial sums) and the block sums in f64: as accurate as
///    converting every element to f64, at f32's vector width;
///  - reduce_max, reduce_min: both levels in the element type; the result is
///    the same in any grouping (IEEE maximum and minimum: NaN wins, +0 > -0).
Value blockedReduction(OpBuilder &b, Location l, Op name, Type nxElem, Value in, ArrayRef<int64_t> axes,
                       RankedTensorType outType) {
  auto inType = llvm::cast<RankedTensorType>(in.getType());
  int64_t rank = inType.getRank(), k = axes.size();
  SmallVector<int64_t> sorted(axes.begin(), axes.end());
  llvm::sort(sorted);
  int64_t reduced = 1;
  for (int64_t i = 0; i < k; ++i) {
    if (sorted[i] != rank - k + i) return {};
    reduced *= inType.getDimSize(sorted[i]);
  }
  int64_t block = 0;
  for (int64_t size = kNarrowSumLimit; size >= 1024 && !block; --size)
    if (reduced % size == 0) block = size;
  if (!block) return {};
  Type elem = inType.getElementType();
  SmallVector<Type, 2> levels = name == Op::Sum ? SmallVector<Type, 2>{b.getF32Type(), b.getF64Type()}
                                    : SmallVector<Type, 2>{elem, elem};
  MLIRContext *ctx = b.getContext();
  // [leading..., blocks, block] -> [leading..., blocks] -> [leading...].
  SmallVector<int64_t> shape(inType.getShape().take_front(rank - k));
  shape.push_back(reduced / block);
  shape.push_back(block);
  Value level = reshapeTensor(b, l, in, RankedTensorType::get(shape, elem));
  for (Type acc : levels) {
    unsigned r = shape.size();
    shape.pop_back();
    SmallVector<utils::IteratorType> iters(r, utils::IteratorType::parallel);
    iters.back() = utils::IteratorType::reduction;
    SmallVector<AffineExpr> outExprs;
    for (unsigned d = 0; d + 1 < r; ++d) outExprs.push_back(b.getAffineDimExpr(d));
    auto t = RankedTensorType::get(shape, acc);
    level =
        genericOp(b, l, t, level, {b.getMultiDimIdentityMap(r)}, filled(b, l, t, reductionInit(b, name, nxElem, acc)),
                  AffineMap::get(r, 0, outExprs, ctx), iters, [&](OpBuilder &nb, Location nl, ValueRange a) {
                    return reductionCombine(nb, nl, name, nxElem, widened(nb, nl, a[0], acc), a[1]);
                  });
  }
  return narrowed(b, l, level, outType);
}

/// Reductions over `axes`: a linalg.generic with reduction iterators over a
/// filled accumulator; long float sums accumulate in a wider type (f32 in
/// f64, or in f32 blocks whose sums are added in f64: blockedReduction;
/// f16/bf16 in f32), so a million-element f32 sum stays within a few ulps,
/// while short ones (the vectorized loop keeps 32 partial sums) stay in
/// their own type. With blocked reductions (CPU code), long maxima and
/// minima run in blocks too, whose loop is parallel.
template <typename OpTy>
struct ReduceLowering : public OpConversionPattern<OpTy> {
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  ReduceLowering(const TypeConverter &tc, MLIRContext *ctx, bool blocked = false)
      : OpConversionPattern<OpTy>(tc, ctx), blocked(blocked) {}
  /// Long f32 sums, maxima and minima as blockedReduction (CPU code);
  /// otherwise one reduction, f32 sums in f64 (a GPU maps one reduction to
  /// blocks itself).
  bool blocked;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    Op name = opKind(op);
    RankedTensorType outType = convertedResult(this->getTypeConverter(), op);
    Value in = adaptor.getOperand();
    Type nxIn = elemOf(op.getOperand());
    ArrayRef<int64_t> axes = op.getAxes();
    auto inType = llvm::cast<RankedTensorType>(in.getType());
    unsigned rank = inType.getRank();
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iters;
    for (unsigned d = 0; d < rank; ++d) {
      bool red = llvm::is_contained(axes, (int64_t)d);
      iters.push_back(red ? utils::IteratorType::reduction : utils::IteratorType::parallel);
      if (!red) outExprs.push_back(rw.getAffineDimExpr(d));
    }
    Type elem = outType.getElementType();
    int64_t reduced = 1;
    for (int64_t a : axes) reduced *= inType.getDimSize(a);
    Type acc = accumulatorType(rw, name, elem);
    bool extreme = name == Op::ReduceMax || name == Op::ReduceMin;
    if (reduced > kNarrowSumLimit && blocked && ((name == Op::Sum && elem.isF32()) || extreme))
      if (Value inBlocks = blockedReduction(rw, l, name, nxIn, in, axes, outType)) {
        rw.replaceOp(op, inBlocks);
        return success();
      }
    if (name == Op::Sum && elem.isF32() && reduced > kNarrowSumLimit) acc = rw.getF64Type();
    auto accType = RankedTensorType::get(outType.getShape(), acc);
    Value init = filled(rw, l, accType, reductionInit(rw, name, nxIn, acc));
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, rw.getContext());
    Value result = genericOp(rw, l, accType, in, {rw.getMultiDimIdentityMap(rank)}, init, outMap, iters,
                             [&](OpBuilder &b, Location nl, ValueRange a) {
                               return reductionCombine(b, nl, name, nxIn, widened(b, nl, a[0], acc), a[1]);
                             });
    rw.replaceOp(op, narrowed(rw, l, result, outType));
    return success();
  }
};

/// argmax/argmin: one reduction with two accumulators (value, index); NaN
/// counts as the extreme, ties go to the lowest (or highest) index.
template <typename OpTy, bool IsMax>
struct ArgReduceLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(this->getTypeConverter()->convertType(op.getType()));
    auto inType = llvm::cast<RankedTensorType>(adaptor.getOperand().getType());
    Type nxIn = elemOf(op.getOperand());
    Type et = inType.getElementType(), it = outType.getElementType();
    int64_t axis = op.getAxes()[0];
    bool high = op.getTieBreak()[0] != 0;
    bool isF = llvm::isa<FloatType>(et);
    unsigned rank = inType.getRank();
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iters;
    for (unsigned d = 0; d < rank; ++d) {
      iters.push_back((int64_t)d == axis ? utils::IteratorType::reduction : utils::IteratorType::parallel);
      if ((int64_t)d != axis) outExprs.push_back(rw.getAffineDimExpr(d));
    }
    auto valType = RankedTensorType::get(outType.getShape(), et);
    Value valInit = filled(rw, l, valType, reductionInit(rw, IsMax ? Op::ReduceMax : Op::ReduceMin, nxIn, et));
    Value idxInit = filled(rw, l, outType, rw.getIntegerAttr(it, 0));
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, rw.getContext());
    SmallVector<AffineMap> maps = {rw.getMultiDimIdentityMap(rank), outMap, outMap};
    bool uns = isUnsigned(nxIn);
    auto g = linalg::GenericOp::create(
        rw, l, TypeRange{valType, outType}, adaptor.getOperand(), ValueRange{valInit, idxInit}, maps, iters,
        [&](OpBuilder &b, Location nl, ValueRange a) {
          Value x = a[0], acc = a[1], idx = a[2];
          Value better, equal;
          if (isF) {
            auto pred = IsMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT;
            Value xNan = arith::CmpFOp::create(b, nl, arith::CmpFPredicate::UNO, x, x);
            Value accNan = arith::CmpFOp::create(b, nl, arith::CmpFPredicate::UNO, acc, acc);
            Value notAccNan =
                arith::XOrIOp::create(b, nl, accNan, arith::ConstantOp::create(b, nl, b.getBoolAttr(true)));
            better = arith::OrIOp::create(b, nl, arith::CmpFOp::create(b, nl, pred, x, acc),
                                          arith::AndIOp::create(b, nl, xNan, notAccNan));
            equal = arith::OrIOp::create(b, nl, arith::CmpFOp::create(b, nl, arith::CmpFPredicate::OEQ, x, acc),
                                         arith::AndIOp::create(b, nl, xNan, accNan));
          } else {
            auto pred = IsMax ? (uns ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                              : (uns ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
            better = arith::CmpIOp::create(b, nl, pred, x, acc);
            equal = arith::CmpIOp::create(b, nl, arith::CmpIPredicate::eq, x, acc);
          }
          Value i = linalg::IndexOp::create(b, nl, axis);
          Value first =
              arith::CmpIOp::create(b, nl, arith::CmpIPredicate::eq, i, arith::ConstantIndexOp::create(b, nl, 0));
          Value take = arith::OrIOp::create(b, nl, better, first);
          if (high) take = arith::OrIOp::create(b, nl, take, equal);
          Value iv = arith::IndexCastOp::create(b, nl, it, i);
          linalg::YieldOp::create(b, nl, ValueRange{arith::SelectOp::create(b, nl, take, x, acc),
                                                    arith::SelectOp::create(b, nl, take, iv, idx)});
        });
    rw.replaceOp(op, g.getResult(1));
    return success();
  }
};

/// Cumulative ops: a loop over the axis; step k combines result[k-1] with
/// input[k] and writes result[k].
template <typename OpTy>
struct ScanLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto type = llvm::cast<RankedTensorType>(this->getTypeConverter()->convertType(op.getType()));
    int64_t axis = op.getAxes()[0];
    int64_t n = type.getDimSize(axis);
    Op name = opKind(op);
    Op combine = name == Op::CumulativeSum ? Op::Sum : name == Op::CumulativeProduct ? Op::Product
                 : name == Op::CumulativeMax ? Op::ReduceMax : Op::ReduceMin;
    Type nxElem = elemOf(op.getOperand());
    Value in = adaptor.getOperand();
    if (n <= 1 || type.getNumElements() == 0) {
      rw.replaceOp(op, in);
      return success();
    }
    SmallVector<int64_t> sliceShape(type.getShape());
    sliceShape[axis] = 1;
    auto sliceType = RankedTensorType::get(sliceShape, type.getElementType());
    auto sliceAt = [&](OpBuilder &b, Value t, OpFoldResult k) {
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        offsets.push_back(d == axis ? k : b.getIndexAttr(0));
        sizes.push_back(b.getIndexAttr(sliceShape[d]));
        strides.push_back(b.getIndexAttr(1));
      }
      return std::make_tuple(offsets, sizes, strides);
    };
    // result = copy of the input; then result[k] = combine(result[k-1], input[k]).
    Value init = freshCopy(rw, l, in);
    Value lb = arith::ConstantIndexOp::create(rw, l, 1), ub = arith::ConstantIndexOp::create(rw, l, n),
          one = arith::ConstantIndexOp::create(rw, l, 1);
    auto loop = scf::ForOp::create(
        rw, l, lb, ub, one, ValueRange{init}, [&](OpBuilder &b, Location nl, Value k, ValueRange iter) {
          Value km1 = arith::SubIOp::create(b, nl, k, one);
          auto [po, ps, pst] = sliceAt(b, iter[0], km1);
          Value prev = tensor::ExtractSliceOp::create(b, nl, sliceType, iter[0], po, ps, pst);
          auto [co, cs, cst] = sliceAt(b, iter[0], k);
          Value cur = tensor::ExtractSliceOp::create(b, nl, sliceType, iter[0], co, cs, cst);
          Value next =
              elementwise(b, nl, sliceType, ValueRange{cur, prev}, [&](OpBuilder &bb, Location ll, ValueRange a) {
                return reductionCombine(bb, ll, combine, nxElem, a[0], a[1]);
              });
          Value updated = tensor::InsertSliceOp::create(b, nl, next, iter[0], co, cs, cst);
          scf::YieldOp::create(b, nl, updated);
        });
    rw.replaceOp(op, loop.getResult(0));
    return success();
  }
};

/// Window reductions: output dims, then window dims (reductions); the
/// operand is read at o * stride + w * dilation.
template <typename OpTy>
struct WindowLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(this->getTypeConverter()->convertType(op.getType()));
    unsigned rank = outType.getRank();
    Op name = opKind(op);
    Op combine = name == Op::WindowSum ? Op::Sum : name == Op::WindowProduct ? Op::Product
                 : name == Op::WindowMax ? Op::ReduceMax : Op::ReduceMin;
    Type nxElem = elemOf(op.getOperand()), et = outType.getElementType();
    SmallVector<AffineExpr> inExprs, outExprs;
    SmallVector<utils::IteratorType> iters;
    for (unsigned d = 0; d < rank; ++d) {
      inExprs.push_back(rw.getAffineDimExpr(d) * op.getStrides()[d] +
                        rw.getAffineDimExpr(rank + d) * op.getDilations()[d]);
      outExprs.push_back(rw.getAffineDimExpr(d));
      iters.push_back(utils::IteratorType::parallel);
    }
    for (unsigned d = 0; d < rank; ++d) iters.push_back(utils::IteratorType::reduction);
    // The window's extent comes from a shape-only operand (linalg infers loop
    // bounds from operand shapes).
    auto winType = RankedTensorType::get(op.getWindowDims(), et);
    SmallVector<AffineExpr> winExprs;
    for (unsigned d = 0; d < rank; ++d) winExprs.push_back(rw.getAffineDimExpr(rank + d));
    MLIRContext *ctx = rw.getContext();
    Type acc = accumulatorType(rw, combine, et);
    auto accType = RankedTensorType::get(outType.getShape(), acc);
    Value init = filled(rw, l, accType, reductionInit(rw, combine, nxElem, acc));
    Value win = emptyTensor(rw, l, winType);
    Value r =
        genericOp(rw, l, accType, ValueRange{adaptor.getOperand(), win},
                  {AffineMap::get(2 * rank, 0, inExprs, ctx), AffineMap::get(2 * rank, 0, winExprs, ctx)}, init,
                  AffineMap::get(2 * rank, 0, outExprs, ctx), iters, [&](OpBuilder &b, Location nl, ValueRange a) {
                    return reductionCombine(b, nl, combine, nxElem, widened(b, nl, a[0], acc), a[2]);
                  });
    rw.replaceOp(op, narrowed(rw, l, r, outType));
    return success();
  }
};

/// Convolution: loops (batch, group, out channel in group, out spatial...,
/// in channel in group, kernel spatial...), the last ones reductions.
struct ConvLowering : public OpConversionPattern<nx::ConvOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nx::ConvOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    auto outType = llvm::cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    auto xType = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
    auto kType = llvm::cast<RankedTensorType>(adaptor.getKernel().getType());
    int64_t spatial = xType.getRank() - 2, groups = op.getFeatureGroups()[0];
    int64_t cin = kType.getDimSize(1), cout = kType.getDimSize(0) / groups;
    // dims: 0 b, 1 g, 2 o, 3.. out spatial, then i, then kernel spatial.
    unsigned nd = 3 + 2 * spatial + 1, iDim = 3 + spatial, kDim0 = iDim + 1;
    auto d = [&](unsigned k) { return rw.getAffineDimExpr(k); };
    SmallVector<AffineExpr> xe = {d(0), d(1) * cin + d(iDim)}, ke = {d(1) * cout + d(2), d(iDim)},
                            oe = {d(0), d(1) * cout + d(2)};
    for (int64_t s = 0; s < spatial; ++s) {
      xe.push_back(d(3 + s) * op.getStrides()[s] + d(kDim0 + s) * op.getKernelDilation()[s]);
      ke.push_back(d(kDim0 + s));
      oe.push_back(d(3 + s));
    }
    SmallVector<utils::IteratorType> iters(nd, utils::IteratorType::parallel);
    for (unsigned k = iDim; k < nd; ++k) iters[k] = utils::IteratorType::reduction;
    // The group and in-group channel extents come from a shape-only operand.
    SmallVector<int64_t> extents = {groups, cout};
    auto extType = RankedTensorType::get(extents, outType.getElementType());
    MLIRContext *ctx = rw.getContext();
    Type acc = accumulatorType(rw, Op::Sum, outType.getElementType());
    auto accType = RankedTensorType::get(outType.getShape(), acc);
    Value init = filled(rw, l, accType, rw.getFloatAttr(acc, 0.0));
    Value r = genericOp(
        rw, l, accType, ValueRange{adaptor.getInput(), adaptor.getKernel(), emptyTensor(rw, l, extType)},
        {AffineMap::get(nd, 0, xe, ctx), AffineMap::get(nd, 0, ke, ctx), AffineMap::get(nd, 0, {d(1), d(2)}, ctx)},
        init, AffineMap::get(nd, 0, oe, ctx), iters, [&](OpBuilder &b, Location nl, ValueRange a) {
          Value x = widened(b, nl, a[0], acc);
          Value k = widened(b, nl, a[1], acc);
          return faddFast(b, nl, a[3], fmulFast(b, nl, x, k));
        });
    rw.replaceOp(op, narrowed(rw, l, r, outType));
    return success();
  }
};

} // namespace

/// CPU: a convolution over enough input channels runs as one matrix product
/// (im2col). The input's windows become a [N, C * taps, output points]
/// matrix (channel-major, as the kernel [O, C, taps...] already is), and a
/// dot of the kernel as [O, C * taps] with it does the rest: the
/// blocked products of dots (register blocks, the thread pool) then serve
/// convolutions too. The copies cost taps x the input; the direct loop nest
/// it replaces ran its 3-tap kernel loop innermost (W9, a 3x3 ResNet layer of
/// 64 channels: 77 ms before). Float types whose dots and convolutions
/// accumulate alike (f32, f64), one feature group, at least 8 input channels
/// and at most 49 taps; the rest keeps the loop nest.
/// With unit strides, the convolution is a dot whose rhs needs no copy: on
/// the padded input's own grid, flattened to [N, C, L], the output point at
/// flat position p reads, for kernel tap t, the input at p + shift(t) (shift
/// = sum over spatial axes of t_s * dilation_s * the axis's flat stride).
/// One contraction over (n, o, c, t..., p) computes the output on that grid
/// (each row as wide as the padded input's, the extra columns discarded):
///   out[n, o, p] += kernel[o, c, t...] * input[n, c, shift(t) + p]
/// Its loops are a dot's (c and the taps the contraction), so it is blocked
/// and vectorized as dots are, and its rhs rows are contiguous runs of the
/// input, read in place. The windows' copy it replaces was taps x the input
/// (W9: 7.2 MB written and read back per call, a third of the time at two
/// threads). The grid's extra columns cost (padded width / output width) - 1
/// more multiply-adds (W9: 58 / 56, 3.6%).
void convolutionOnPaddedGrid(nx::ConvOp op) {
  auto xType = llvm::cast<RankedTensorType>(op.getInput().getType());
  auto kType = llvm::cast<RankedTensorType>(op.getKernel().getType());
  auto outType = llvm::cast<RankedTensorType>(op.getType());
  Type e = outType.getElementType();
  int64_t spatial = xType.getRank() - 2;
  int64_t n = xType.getDimSize(0), c = xType.getDimSize(1), o = kType.getDimSize(0);
  // The flat stride of each spatial axis of the padded input, its length L,
  // and the grid's points: every output row, each as wide as the input's.
  SmallVector<int64_t> flatStride(spatial, 1);
  for (int64_t s = spatial - 2; s >= 0; --s) flatStride[s] = flatStride[s + 1] * xType.getDimSize(3 + s);
  int64_t length = flatStride[0] * xType.getDimSize(2);
  int64_t gridPoints = outType.getDimSize(2) * flatStride[0];
  // The last row's extra columns would read past the input's end: the
  // contraction stops at the last point that reads inside it (the grid's
  // tail is never read back).
  int64_t reach = 0;
  for (int64_t s = 0; s < spatial; ++s)
    reach += (kType.getDimSize(2 + s) - 1) * op.getKernelDilation()[s] * flatStride[s];
  int64_t points = std::min(gridPoints, length - reach);

  OpBuilder b(op);
  Location l = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Value flat = nx::ReshapeOp::create(b, l, RankedTensorType::get({n, c, length}, e), op.getInput());
  // Loops: n, o, c, taps..., p.
  int64_t loops = 4 + spatial;
  auto d = [&](int64_t i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> kernelIndex = {d(1), d(2)};
  AffineExpr shifted = d(loops - 1);
  for (int64_t s = 0; s < spatial; ++s) {
    kernelIndex.push_back(d(3 + s));
    shifted = shifted + d(3 + s) * (op.getKernelDilation()[s] * flatStride[s]);
  }
  SmallVector<utils::IteratorType> iters(loops, utils::IteratorType::reduction);
  iters[0] = iters[1] = iters[loops - 1] = utils::IteratorType::parallel;
  auto gridType = RankedTensorType::get({n, o, gridPoints}, e);
  Value grid = filled(b, l, gridType, b.getFloatAttr(e, 0.0));
  SmallVector<OpFoldResult> zeros(3, b.getIndexAttr(0)), ones(3, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(n), b.getIndexAttr(o), b.getIndexAttr(points)};
  Value part = tensor::ExtractSliceOp::create(b, l, grid, zeros, sizes, ones);
  Value product = genericOp(
      b, l, RankedTensorType::get({n, o, points}, e), ValueRange{op.getKernel(), flat},
      {AffineMap::get(loops, 0, kernelIndex, ctx), AffineMap::get(loops, 0, {d(0), d(2), shifted}, ctx)}, part,
      AffineMap::get(loops, 0, {d(0), d(1), d(loops - 1)}, ctx), iters,
      [&](OpBuilder &bb, Location bl, ValueRange a) { return faddFast(bb, bl, a[2], fmulFast(bb, bl, a[0], a[1])); });
  grid = tensor::InsertSliceOp::create(b, l, product, grid, zeros, sizes, ones);
  // [n, o, output rows x padded row] -> [n, o, output rows, padded inner
  // axes...] -> the output's points.
  SmallVector<int64_t> gridShape = {n, o, outType.getDimSize(2)};
  for (int64_t s = 1; s < spatial; ++s) gridShape.push_back(xType.getDimSize(2 + s));
  SmallVector<ReassociationIndices> reassociation = {{0}, {1}, {}};
  for (int64_t s = 0; s < spatial; ++s) reassociation[2].push_back(2 + s);
  Value expanded =
      tensor::ExpandShapeOp::create(b, l, RankedTensorType::get(gridShape, e), grid, reassociation).getResult();
  SmallVector<OpFoldResult> outOffsets(outType.getRank(), b.getIndexAttr(0)),
      outStrides(outType.getRank(), b.getIndexAttr(1)), outSizes;
  for (int64_t size : outType.getShape()) outSizes.push_back(b.getIndexAttr(size));
  Value result = tensor::ExtractSliceOp::create(b, l, outType, expanded, outOffsets, outSizes, outStrides);
  op.replaceAllUsesWith(result);
  op.erase();
}

void convolutionsAsDots(ModuleOp module) {
  SmallVector<nx::ConvOp> convs;
  module.walk([&](nx::ConvOp op) { convs.push_back(op); });
  for (nx::ConvOp op : convs) {
    auto xType = llvm::cast<RankedTensorType>(op.getInput().getType());
    auto kType = llvm::cast<RankedTensorType>(op.getKernel().getType());
    auto outType = llvm::cast<RankedTensorType>(op.getType());
    Type e = outType.getElementType();
    if (!(e.isF32() || e.isF64()) || op.getFeatureGroups()[0] != 1 || !xType.hasStaticShape() ||
        !kType.hasStaticShape() || !outType.hasStaticShape())
      continue;
    int64_t rank = xType.getRank(), spatial = rank - 2;
    int64_t n = xType.getDimSize(0), c = xType.getDimSize(1), o = kType.getDimSize(0);
    int64_t taps = 1, points = 1;
    for (int64_t s = 0; s < spatial; ++s) {
      taps *= kType.getDimSize(2 + s);
      points *= outType.getDimSize(2 + s);
    }
    if (c < 8 || taps > 49 || points == 0 || n == 0 || o == 0) continue;
    if (spatial >= 1 && llvm::all_of(op.getStrides(), [](int64_t s) { return s == 1; })) {
      convolutionOnPaddedGrid(op);
      continue;
    }
    OpBuilder b(op);
    Location l = op.getLoc();
    // The windows in one element-wise op, channel-major: columns[n, c, t...,
    // p...] = x[n, c, p * stride + t * dilation] for every kernel tap t and
    // output point p, flattened to [N, C * taps, points] (contiguous, so in
    // place). One loop nest that runs on the pool by channels; it was a
    // strided copy per tap, each serial.
    SmallVector<int64_t> windowShape = {n, c};
    for (int64_t s = 0; s < spatial; ++s) windowShape.push_back(kType.getDimSize(2 + s));
    for (int64_t s = 0; s < spatial; ++s) windowShape.push_back(outType.getDimSize(2 + s));
    int64_t loops = 2 + 2 * spatial;
    SmallVector<AffineExpr> inputIndex = {b.getAffineDimExpr(0), b.getAffineDimExpr(1)};
    for (int64_t s = 0; s < spatial; ++s)
      inputIndex.push_back(b.getAffineDimExpr(2 + spatial + s) * op.getStrides()[s] +
                           b.getAffineDimExpr(2 + s) * op.getKernelDilation()[s]);
    auto windowType = RankedTensorType::get(windowShape, e);
    Value windows = genericOp(b, l, windowType, ValueRange{op.getInput()},
                              {AffineMap::get(loops, 0, inputIndex, b.getContext())}, emptyTensor(b, l, windowType),
                              b.getMultiDimIdentityMap(loops),
                              SmallVector<utils::IteratorType>(loops, utils::IteratorType::parallel),
                              [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    Value columns = nx::ReshapeOp::create(b, l, RankedTensorType::get({n, c * taps, points}, e), windows);
    // The kernel [O, C, taps...] is already channel-major.
    Value kernel = nx::ReshapeOp::create(b, l, RankedTensorType::get({o, c * taps}, e), op.getKernel());
    Value product;
    if (n == 1) {
      Value m = nx::ReshapeOp::create(b, l, RankedTensorType::get({taps * c, points}, e), columns);
      product = nx::DotOp::create(b, l, RankedTensorType::get({o, points}, e), kernel, m, b.getDenseI64ArrayAttr({1}),
                                  b.getDenseI64ArrayAttr({}), b.getDenseI64ArrayAttr({0}), b.getDenseI64ArrayAttr({}));
    } else {
      product = nx::DotOp::create(b, l, RankedTensorType::get({o, n, points}, e), kernel, columns,
                                  b.getDenseI64ArrayAttr({1}), b.getDenseI64ArrayAttr({}), b.getDenseI64ArrayAttr({1}),
                                  b.getDenseI64ArrayAttr({}));
      product = nx::TransposeOp::create(b, l, RankedTensorType::get({n, o, points}, e), product,
                                        b.getDenseI64ArrayAttr({1, 0, 2}));
    }
    Value result = nx::ReshapeOp::create(b, l, outType, product);
    op.replaceAllUsesWith(result);
    op.erase();
  }
}

void populateReductionPatterns(RewritePatternSet &patterns, const TypeConverter &tc, bool blockedReductions,
                               int64_t longContraction) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ReduceLowering<nx::ProductOp>, ReduceLowering<nx::AllOp>, ReduceLowering<nx::AnyOp>>(tc, ctx);
  patterns.add<ReduceLowering<nx::SumOp>, ReduceLowering<nx::ReduceMaxOp>, ReduceLowering<nx::ReduceMinOp>>(
      tc, ctx, blockedReductions);
  patterns.add<DotLowering>(tc, ctx, longContraction);
  patterns.add<ArgReduceLowering<nx::ArgmaxOp, true>, ArgReduceLowering<nx::ArgminOp, false>,
               ScanLowering<nx::CumulativeSumOp>, ScanLowering<nx::CumulativeProductOp>,
               ScanLowering<nx::CumulativeMaxOp>, ScanLowering<nx::CumulativeMinOp>, WindowLowering<nx::WindowSumOp>,
               WindowLowering<nx::WindowProductOp>, WindowLowering<nx::WindowMaxOp>, WindowLowering<nx::WindowMinOp>,
               ConvLowering>(tc, ctx, /*benefit=*/2);
}

} // namespace nxc::lowering
