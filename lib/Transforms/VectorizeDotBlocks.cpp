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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

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

/// A block this pass vectorizes: loops [k, i, j] (one reduction, then the
/// rows and the columns), `row` the input indexed by j (the rhs), `scalar`
/// the one indexed by i (the lhs), both with identity-like maps.
struct DotBlock {
  linalg::GenericOp op;
  OpOperand *row, *scalar, *out;
  int64_t k, rows, columns, lanes;
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

std::optional<DotBlock> match(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g.getNumLoops() != 3 || g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1)
    return std::nullopt;
  auto iters = g.getIteratorTypesArray();
  if (iters[0] != utils::IteratorType::reduction || iters[1] != utils::IteratorType::parallel ||
      iters[2] != utils::IteratorType::parallel)
    return std::nullopt;
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  for (int64_t r : ranges)
    if (ShapedType::isDynamic(r)) return std::nullopt;
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
  if (lanes == 0 || ranges[2] % lanes != 0 || ranges[1] * (ranges[2] / lanes) > kMaxAccumulatorVectors)
    return std::nullopt;
  // Maps: out [i, j], one input [.., j] (its last index j), the other
  // without j; every index a loop.
  MLIRContext *ctx = g.getContext();
  AffineExpr i = getAffineDimExpr(1, ctx), j = getAffineDimExpr(2, ctx);
  AffineMap outMap = g.getMatchingIndexingMap(out);
  if (outMap.getNumResults() != 2 || outMap.getResult(0) != i || outMap.getResult(1) != j) return std::nullopt;
  DotBlock block{g, nullptr, nullptr, out, ranges[0], ranges[1], ranges[2], lanes};
  for (OpOperand *in : g.getDpsInputOperands()) {
    AffineMap m = g.getMatchingIndexingMap(in);
    if (!m.isProjectedPermutation() || !isa<MemRefType>(in->get().getType())) return std::nullopt;
    if (m.isFunctionOfDim(2)) {
      if (block.row || m.getResults().back() != j || m.isFunctionOfDim(1)) return std::nullopt;
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

/// The indices of `map` at loop indices (k, i, j).
SmallVector<Value> indicesAt(AffineMap map, Value k, Value i, Value j) {
  SmallVector<Value> out;
  Value loops[3] = {k, i, j};
  for (AffineExpr e : map.getResults()) out.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
  return out;
}

void vectorize(const DotBlock &d) {
  linalg::GenericOp g = d.op;
  OpBuilder b(g);
  Location l = g.getLoc();
  auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, l, v); };
  Value zero = index(0), one = index(1), kEnd = index(d.k);
  int64_t slices = d.columns / d.lanes;
  SmallVector<Value> rowIndex, sliceIndex;
  for (int64_t r = 0; r < d.rows; ++r) rowIndex.push_back(index(r));
  for (int64_t s = 0; s < slices; ++s) sliceIndex.push_back(index(s * d.lanes));
  Type outElem = getElementTypeOrSelf(d.out->get().getType());
  auto vectorOf = [&](Type elem) { return VectorType::get({d.lanes}, elem); };
  AffineMap outMap = g.getMatchingIndexingMap(d.out), rowMap = g.getMatchingIndexingMap(d.row),
            scalarMap = g.getMatchingIndexingMap(d.scalar);

  SmallVector<Value> initial;
  for (int64_t r = 0; r < d.rows; ++r)
    for (int64_t s = 0; s < slices; ++s)
      initial.push_back(vector::LoadOp::create(b, l, vectorOf(outElem), d.out->get(),
                                               indicesAt(outMap, zero, rowIndex[r], sliceIndex[s])));
  Block *body = g.getBody();
  auto loop =
      scf::ForOp::create(b, l, zero, kEnd, one, initial, [&](OpBuilder &ib, Location il, Value k, ValueRange acc) {
        Type rowElem = getElementTypeOrSelf(d.row->get().getType());
        SmallVector<Value> rowSlices;
        for (int64_t s = 0; s < slices; ++s)
          rowSlices.push_back(vector::LoadOp::create(ib, il, vectorOf(rowElem), d.row->get(),
                                                     indicesAt(rowMap, k, zero, sliceIndex[s])));
        SmallVector<Value> next;
        for (int64_t r = 0; r < d.rows; ++r) {
          Value scalar = memref::LoadOp::create(ib, il, d.scalar->get(), indicesAt(scalarMap, k, rowIndex[r], zero));
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
        scf::YieldOp::create(ib, il, next);
      });
  for (int64_t r = 0; r < d.rows; ++r)
    for (int64_t s = 0; s < slices; ++s)
      vector::StoreOp::create(b, l, loop.getResult(r * slices + s), d.out->get(),
                              indicesAt(outMap, zero, rowIndex[r], sliceIndex[s]));
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
