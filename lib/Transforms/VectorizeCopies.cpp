//===- VectorizeCopies.cpp - copies along contiguous rows as vector code --===//
//
// A copy whose innermost loop walks contiguous memory in both buffers (the
// padding of a convolution's input, its im2col rows, a slice put into a
// larger tensor) lowers to a loop nest whose inner loop LLVM should turn into
// vector loads and stores. With a short static inner extent (56 columns of a
// ResNet image) LLVM unrolls the loop fully first, and its SLP vectorizer
// then cannot move the loads above the stores before them (the two buffers
// may alias as far as it can tell), so every element was copied on its own:
// the im2col copy of W9 (3x3, 64 channels, 56x56) was a quarter of the
// convolution's time.
//
// This pass writes the inner loop as vector code: for each index of the
// outer loops, the row is copied in vectors of 512 bits (a loop over them
// when there are several) and one shorter vector for the rest:
//
//   linalg.generic {parallel x n} ins(%in: map (..., e + d[n-1])) outs(%out: identity)
//     { yield %in }
// becomes
//   scf.for %i0 ... scf.for %i[n-2] {
//     scf.for %j = 0 to E - E % W step W { vector.store (vector.load %in[...]), %out[..., %j] }
//     vector.store (vector.load %in[..., E - E % W] : vector<E % W>), %out[...]
//   }
//
// Each element is read and written once, as the loops did (bufferization
// never gives a copy an output that overlaps its input elsewhere). Only
// element types of whole bytes are copied so; bare-metal cores keep the
// scalar loops.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace nxc {

#define GEN_PASS_DEF_VECTORIZECOPIESPASS
#include "nxc/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

/// Bits of the full vectors.
constexpr int64_t kVectorBits = 512;

/// Inner extents below this stay scalar loops.
constexpr int64_t kMinInnerExtent = 4;

bool innerStrideOne(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  if (!t || t.getRank() == 0) return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset))) return false;
  return strides.back() == 1;
}

/// Whether `e` is d[last], or d[last] plus an expression free of it.
bool advancesWithLast(AffineExpr e, unsigned last) {
  AffineExpr d = getAffineDimExpr(last, e.getContext());
  if (e == d) return true;
  auto add = dyn_cast<AffineBinaryOpExpr>(e);
  if (!add || add.getKind() != AffineExprKind::Add) return false;
  AffineExpr lhs = add.getLHS(), rhs = add.getRHS();
  return (lhs == d && !rhs.isFunctionOfDim(last)) || (rhs == d && !lhs.isFunctionOfDim(last));
}

bool isContiguousCopy(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() == 0 || op.getNumLoops() != op.getNumParallelLoops())
    return false;
  Block *body = op.getBlock();
  OpOperand *in = op.getDpsInputOperand(0), *out = op.getDpsInitOperand(0);
  if (body->getOperations().size() != 1 ||
      body->getTerminator()->getOperand(0) != op.getMatchingBlockArgument(in))
    return false;
  Type elem = getElementTypeOrSelf(out->get().getType());
  if (elem != getElementTypeOrSelf(in->get().getType()) || !elem.isIntOrFloat() ||
      elem.getIntOrFloatBitWidth() % 8 != 0)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) || ranges.back() < kMinInnerExtent) return false;
  if (!op.getMatchingIndexingMap(out).isIdentity() || !innerStrideOne(in->get()) || !innerStrideOne(out->get()))
    return false;
  AffineMap inMap = op.getMatchingIndexingMap(in);
  unsigned last = op.getNumLoops() - 1;
  for (unsigned r = 0; r + 1 < inMap.getNumResults(); ++r)
    if (inMap.getResult(r).isFunctionOfDim(last)) return false;
  return inMap.getNumResults() > 0 && advancesWithLast(inMap.getResults().back(), last);
}

void vectorize(linalg::LinalgOp op) {
  OpBuilder b(op);
  Location l = op.getLoc();
  auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, l, v); };
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned n = ranges.size();
  Value in = op.getDpsInputOperand(0)->get(), out = op.getDpsInitOperand(0)->get();
  AffineMap inMap = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  Type elem = getElementTypeOrSelf(out.getType());
  int64_t lanes = kVectorBits / elem.getIntOrFloatBitWidth(), extent = ranges.back();

  // The outer loops (extents of one need none).
  SmallVector<Value> ivs;
  Value zero = index(0), one = index(1);
  for (unsigned d = 0; d + 1 < n; ++d) {
    if (ranges[d] == 1) {
      ivs.push_back(zero);
      continue;
    }
    auto loop = scf::ForOp::create(b, l, zero, index(ranges[d]), one);
    b.setInsertionPointToStart(loop.getBody());
    ivs.push_back(loop.getInductionVar());
  }
  // The input's indices of the row (its last one moves along the row).
  auto apply = [&](OpBuilder &ib, AffineExpr e, ArrayRef<Value> dims) -> Value {
    if (auto d = dyn_cast<AffineDimExpr>(e)) return dims[d.getPosition()];
    return affine::AffineApplyOp::create(ib, l, AffineMap::get(n, 0, e), dims);
  };
  SmallVector<Value> rowDims(ivs);
  rowDims.push_back(zero);
  SmallVector<Value> rowIndices;
  for (AffineExpr e : inMap.getResults().drop_back()) rowIndices.push_back(apply(b, e, rowDims));
  auto copyAt = [&](OpBuilder &ib, Value j, int64_t width) {
    SmallVector<Value> dims(ivs), inIndices(rowIndices);
    dims.push_back(j);
    inIndices.push_back(apply(ib, inMap.getResults().back(), dims));
    auto type = VectorType::get({width}, elem);
    Value v = vector::LoadOp::create(ib, l, type, in, inIndices);
    vector::StoreOp::create(ib, l, v, out, dims);
  };
  int64_t full = extent - extent % lanes;
  if (full == lanes) {
    copyAt(b, zero, lanes);
  } else if (full > 0) {
    auto loop = scf::ForOp::create(b, l, zero, index(full), index(lanes));
    OpBuilder ib = OpBuilder::atBlockBegin(loop.getBody());
    copyAt(ib, loop.getInductionVar(), lanes);
  }
  if (extent % lanes != 0) copyAt(b, index(full), extent % lanes);
  op->erase();
}

struct VectorizeCopiesPass : impl::VectorizeCopiesPassBase<VectorizeCopiesPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> copies;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isContiguousCopy(op)) copies.push_back(op);
    });
    for (linalg::LinalgOp op : copies) vectorize(op);
  }
};

} // namespace
} // namespace nxc
