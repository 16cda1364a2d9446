//===- VectorizeDotBlocks.cpp - register blocks of dots as vector code ----===//
//
// nxc-block-contractions cuts a dot with wide output rows into blocks of R
// rows by C columns (C a multiple of 16 f32 or 8 f64 columns) and runs each
// block k, i, j. Lowered to scalar loops, it leaves LLVM to find the vectors:
// j must be the vectorized dimension (contiguous in the rhs and the output),
// i and the R * C / W accumulator vectors unrolled and kept in registers.
// LLVM's cost models do not all agree: for AVX-512 CPUs the loop vectorizer
// took the short row loop i instead, with masked gathers and scatters over
// rows of the lhs and the output in every step of k (the MLP's
// [30,784] x [784,128]: 157 gathers, 46 scatters; 69x slower than with the
// AVX2 variant's code).
//
// This pass writes the block's vector code itself, so that every CPU runs
// the same contiguous code: for each step of k, the block's W-wide slices of
// the rhs row are loaded once, each lhs element is broadcast, and each
// accumulator vector gets one multiply and one add (`contract`: a fused
// multiply-add where the CPU has one), the accumulators carried by the k
// loop in registers, loaded before it and stored after it:
//
//   linalg.generic {reduction, parallel, parallel} ins(%a: RxK, %b: KxC) outs(%c: RxC)
// becomes
//   %acc = vector.load %c[i, jW] (for every i and every W-wide slice)
//   %r = scf.for %k iter_args(%acc) {
//     %bv = vector.load %b[%k, jW]; %av = vector.broadcast %a[i, %k]
//     yield %acc + %av * %bv          (the body's own ops, on vectors)
//   }
//   vector.store %r, %c[i, jW]
//
// Each output element still sums its products in the order of k, as the
// scalar loops did. W is 16 f32 or 8 f64 lanes: one AVX-512 register, two
// AVX2 or four SSE/NEON registers. The pipeline runs it for CPUs with an OS;
// bare-metal cores without vector units keep the scalar loops.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include <functional>

namespace nxc {

#define GEN_PASS_DEF_VECTORIZEDOTBLOCKSPASS
#include "nxc/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

/// Lanes of the block's vectors: 512 bits.
int64_t lanesFor(Type t) { return t.isF64() ? 8 : t.isF32() ? 16 : 0; }

/// The most accumulator vectors in one block (nxc-block-contractions sizes
/// blocks of at most 12 AVX2 vectors, 6 of these, or 24 AVX-512 vectors).
constexpr int64_t kMaxAccumulatorVectors = 24;

/// A block this pass vectorizes: loops [unit..., k..., i, j] (parallel
/// loops of one iteration, one or more reductions, then the rows and the
/// columns), `row` the input indexed by j (the rhs), `scalar` the one
/// indexed by i (the lhs). The rhs's last index is j plus an affine function
/// of the other loops (a dot's k, or a convolution's channel and taps on the
/// padded grid: c, p + ky * W + kx), its other indices and the lhs's do not
/// depend on j; the output's are [unit..., i, j].
struct DotBlock {
  linalg::GenericOp op;
  OpOperand *row, *scalar, *out;
  unsigned firstReduction;         ///< loops before it run once
  SmallVector<int64_t> reductions; ///< the contracted loops' extents, in order
  int64_t rows, columns, lanes;
};

/// Whether the innermost stride of `v` is 1 (vector loads and stores along j).
bool contiguousInner(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  if (!t || t.getRank() == 0) return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset))) return false;
  return strides.back() == 1;
}

/// Whether `e` is `j` plus an expression without `j`.
bool isShiftedBy(AffineExpr e, AffineExpr j, unsigned numDims) {
  AffineExpr zero = getAffineConstantExpr(0, e.getContext());
  SmallVector<AffineExpr> dims;
  for (unsigned d = 0; d < numDims; ++d) dims.push_back(getAffineDimExpr(d, e.getContext()));
  dims[cast<AffineDimExpr>(j).getPosition()] = zero;
  AffineExpr rest = e.replaceDimsAndSymbols(dims, {});
  return simplifyAffineExpr(e - rest, numDims, 0) == j;
}

std::optional<DotBlock> match(linalg::GenericOp g) {
  unsigned n = g.getNumLoops();
  if (!g.hasPureBufferSemantics() || n < 3 || g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1) return std::nullopt;
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  for (int64_t r : ranges)
    if (ShapedType::isDynamic(r)) return std::nullopt;
  auto iters = g.getIteratorTypesArray();
  unsigned iLoop = n - 2, jLoop = n - 1, first = 0;
  while (first < iLoop && iters[first] == utils::IteratorType::parallel && ranges[first] == 1) ++first;
  if (first == iLoop || iters[iLoop] != utils::IteratorType::parallel || iters[jLoop] != utils::IteratorType::parallel)
    return std::nullopt;
  for (unsigned d = first; d < iLoop; ++d)
    if (iters[d] != utils::IteratorType::reduction) return std::nullopt;
  // The body: out + (extended) a * b, nothing else.
  int muls = 0, adds = 0;
  for (Operation &op : g.getBody()->without_terminator()) {
    if (isa<arith::MulFOp>(op)) ++muls;
    else if (isa<arith::AddFOp>(op)) ++adds;
    else if (!isa<arith::ExtFOp>(op)) return std::nullopt;
  }
  if (muls != 1 || adds != 1) return std::nullopt;
  OpOperand *out = g.getDpsInitOperand(0);
  Type elem = getElementTypeOrSelf(out->get().getType());
  int64_t lanes = lanesFor(elem);
  if (lanes == 0 || ranges[jLoop] % lanes != 0 || ranges[iLoop] * (ranges[jLoop] / lanes) > kMaxAccumulatorVectors)
    return std::nullopt;
  MLIRContext *ctx = g.getContext();
  AffineExpr i = getAffineDimExpr(iLoop, ctx), j = getAffineDimExpr(jLoop, ctx);
  AffineMap outMap = g.getMatchingIndexingMap(out);
  unsigned outRank = outMap.getNumResults();
  if (outRank < 2 || outMap.getResult(outRank - 2) != i || outMap.getResult(outRank - 1) != j) return std::nullopt;
  for (AffineExpr e : outMap.getResults().drop_back(2)) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || dim.getPosition() >= first) return std::nullopt;
  }
  DotBlock block{g, nullptr, nullptr, out, first, {}, ranges[iLoop], ranges[jLoop], lanes};
  for (unsigned d = first; d < iLoop; ++d) block.reductions.push_back(ranges[d]);
  for (OpOperand *in : g.getDpsInputOperands()) {
    AffineMap m = g.getMatchingIndexingMap(in);
    if (!isa<MemRefType>(in->get().getType()) || m.getNumResults() == 0) return std::nullopt;
    if (m.isFunctionOfDim(jLoop)) {
      if (block.row || m.isFunctionOfDim(iLoop) || !isShiftedBy(m.getResults().back(), j, n)) return std::nullopt;
      for (AffineExpr e : m.getResults().drop_back())
        if (e.isFunctionOfDim(jLoop)) return std::nullopt;
      block.row = in;
    } else {
      if (block.scalar) return std::nullopt;
      block.scalar = in;
    }
  }
  if (!block.row || !block.scalar || !contiguousInner(block.row->get()) || !contiguousInner(out->get()))
    return std::nullopt;
  return block;
}

/// The indices of `map` at the loops' values (`loops`, one per loop).
SmallVector<Value> indicesAt(OpBuilder &b, Location l, AffineMap map, ArrayRef<Value> loops) {
  SmallVector<Value> out;
  for (AffineExpr e : map.getResults())
    out.push_back(isa<AffineDimExpr>(e) ? loops[cast<AffineDimExpr>(e).getPosition()]
                                        : affine::expandAffineExpr(b, l, e, loops, {}));
  return out;
}

void vectorize(const DotBlock &d) {
  linalg::GenericOp g = d.op;
  OpBuilder b(g);
  Location l = g.getLoc();
  auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, l, v); };
  Value zero = index(0), one = index(1);
  int64_t slices = d.columns / d.lanes;
  unsigned numLoops = g.getNumLoops(), iLoop = numLoops - 2, jLoop = numLoops - 1;
  SmallVector<Value> rowIndex, sliceIndex, reductionEnds;
  for (int64_t r = 0; r < d.rows; ++r) rowIndex.push_back(index(r));
  for (int64_t s = 0; s < slices; ++s) sliceIndex.push_back(index(s * d.lanes));
  for (int64_t extent : d.reductions) reductionEnds.push_back(index(extent));
  Type outElem = getElementTypeOrSelf(d.out->get().getType());
  auto vectorOf = [&](Type elem) { return VectorType::get({d.lanes}, elem); };
  AffineMap outMap = g.getMatchingIndexingMap(d.out), rowMap = g.getMatchingIndexingMap(d.row),
            scalarMap = g.getMatchingIndexingMap(d.scalar);
  // Every loop's value: the unit loops 0, the reductions their induction
  // variables (set inside), i and j as each access needs.
  SmallVector<Value> loops(numLoops, zero);
  auto at = [&](OpBuilder &ib, Location il, AffineMap map, Value i, Value j) {
    loops[iLoop] = i;
    loops[jLoop] = j;
    return indicesAt(ib, il, map, loops);
  };

  SmallVector<Value> initial;
  for (int64_t r = 0; r < d.rows; ++r)
    for (int64_t s = 0; s < slices; ++s)
      initial.push_back(
          vector::LoadOp::create(b, l, vectorOf(outElem), d.out->get(), at(b, l, outMap, rowIndex[r], sliceIndex[s])));
  Block *body = g.getBody();
  // One step of the contraction: the rhs row's slices, each lhs element
  // broadcast, a multiply-add per accumulator vector.
  auto step = [&](OpBuilder &ib, Location il, ValueRange acc) {
    Type rowElem = getElementTypeOrSelf(d.row->get().getType());
    SmallVector<Value> rowSlices;
    for (int64_t s = 0; s < slices; ++s)
      rowSlices.push_back(
          vector::LoadOp::create(ib, il, vectorOf(rowElem), d.row->get(), at(ib, il, rowMap, zero, sliceIndex[s])));
    SmallVector<Value> next;
    for (int64_t r = 0; r < d.rows; ++r) {
      Value scalar = memref::LoadOp::create(ib, il, d.scalar->get(), at(ib, il, scalarMap, rowIndex[r], zero));
      Value broadcast = vector::BroadcastOp::create(ib, il, vectorOf(scalar.getType()), scalar);
      for (int64_t s = 0; s < slices; ++s) {
        // The body's own ops (extensions, the multiply, the add with their
        // fast-math flags), on vectors.
        IRMapping map;
        map.map(g.getMatchingBlockArgument(d.row), rowSlices[s]);
        map.map(g.getMatchingBlockArgument(d.scalar), broadcast);
        map.map(g.getMatchingBlockArgument(d.out), acc[r * slices + s]);
        for (Operation &op : body->without_terminator()) {
          Operation *copy = ib.clone(op, map);
          Value result = copy->getResult(0);
          result.setType(vectorOf(result.getType()));
        }
        next.push_back(map.lookup(body->getTerminator()->getOperand(0)));
      }
    }
    return next;
  };
  // The reductions as nested loops carrying the accumulators, outermost
  // first.
  std::function<SmallVector<Value>(OpBuilder &, Location, unsigned, ValueRange)> nest =
      [&](OpBuilder &ib, Location il, unsigned level, ValueRange acc) -> SmallVector<Value> {
    auto loop = scf::ForOp::create(
        ib, il, zero, reductionEnds[level], one, acc, [&](OpBuilder &lb, Location ll, Value iv, ValueRange inner) {
          loops[d.firstReduction + level] = iv;
          SmallVector<Value> next =
              level + 1 == d.reductions.size() ? step(lb, ll, inner) : nest(lb, ll, level + 1, inner);
          scf::YieldOp::create(lb, ll, next);
        });
    return SmallVector<Value>(loop.getResults());
  };
  SmallVector<Value> results = nest(b, l, 0, initial);
  for (int64_t r = 0; r < d.rows; ++r)
    for (int64_t s = 0; s < slices; ++s)
      vector::StoreOp::create(b, l, results[r * slices + s], d.out->get(),
                              at(b, l, outMap, rowIndex[r], sliceIndex[s]));
  g.erase();
}

struct VectorizeDotBlocksPass : impl::VectorizeDotBlocksPassBase<VectorizeDotBlocksPass> {
  void runOnOperation() override {
    SmallVector<DotBlock> blocks;
    getOperation().walk([&](linalg::GenericOp g) {
      if (std::optional<DotBlock> d = match(g)) blocks.push_back(*d);
    });
    for (const DotBlock &d : blocks) vectorize(d);
  }
};

} // namespace
} // namespace nxc
