//===- RegisterAccumulators.cpp - reductions accumulate in registers ------===//
//
// convert-linalg-to-loops lowers a reduction to loops that load and store
// its accumulator in every iteration, and leaves it to LLVM to keep the
// accumulator in a register. LLVM does so only when no other access in the
// loop may touch the accumulator's memory. Temporaries all live in one
// workspace buffer, so a reduction whose accumulators and inputs (or other
// outputs) are both views of the workspace keeps them in memory: a serial
// chain of loads and stores, ten times slower than the vectorized sum (the
// block sums of `sum(e) + reduce_max(e)`, e = exp(x) of 1e6 elements,
// reading e from the workspace).
//
// This pass lowers such reductions itself, for the ones it can prove
// disjoint: views of one buffer at constant offsets whose byte ranges do not
// overlap. The innermost loop (a reduction) carries the accumulators, every
// output the loop does not move along, as loop-carried values; they are
// loaded before it and stored after it. Inputs the loop does not move along
// are loaded before it too. A reduction followed only by a small block of
// parallel loops (a register block of a dot, nxc-block-contractions: 3 rows
// by 2 columns of a [30,128] x [128,10] product) becomes one loop over the
// reduction carrying every point of the block, the block unrolled.
//
//   linalg.generic {parallel, reduction} ins(%e) outs(%acc)   (both in %ws)
// becomes
//   scf.for %i {
//     %a0 = memref.load %acc[%i]
//     %a = scf.for %j iter_args(%a1 = %a0) { %v = memref.load %e[%i, %j]; ...; scf.yield }
//     memref.store %a, %acc[%i]
//   }
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "Views.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"

namespace nxc {

#define GEN_PASS_DEF_REGISTERACCUMULATORSPASS
#include "nxc/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

/// The bytes a buffer covers: a range of `root` (a function argument or an
/// allocation), or all of it when `size` is unknown (-1).
struct Extent {
  Value root;
  int64_t offset = 0;
  int64_t size = -1;
};

int64_t bytesOf(MemRefType t) {
  if (!t.hasStaticShape() || !t.getLayout().isIdentity()) return -1;
  return t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8);
}

Extent extentOf(Value v) {
  if (auto view = v.getDefiningOp<memref::ViewOp>()) {
    Extent source = extentOf(view.getSource());
    std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
    int64_t size = bytesOf(view.getType());
    if (source.size < 0 || !shift || size < 0) return {source.root};
    return {source.root, source.offset + *shift, size};
  }
  // Reshapes cover the same bytes, a subview some of its source's (its
  // source's extent bounds it); other views (casts) some of the root's.
  if (auto e = v.getDefiningOp<memref::ExpandShapeOp>()) return extentOf(e.getSrc());
  if (auto c = v.getDefiningOp<memref::CollapseShapeOp>()) return extentOf(c.getSrc());
  if (auto sv = v.getDefiningOp<memref::SubViewOp>()) return extentOf(sv.getSource());
  if (isa_and_nonnull<ViewLikeOpInterface>(v.getDefiningOp())) return {viewRoot(v)};
  auto t = dyn_cast<MemRefType>(v.getType());
  return {v, 0, t ? bytesOf(t) : -1};
}

/// Whether two buffers are known not to overlap. Different roots are
/// different arguments (which the kernels declare noalias) or allocations.
bool disjoint(const Extent &a, const Extent &b) {
  if (a.root != b.root) return true;
  if (a.size < 0 || b.size < 0) return false;
  return a.offset + a.size <= b.offset || b.offset + b.size <= a.offset;
}

/// Points of the block of parallel loops after the reduction that the pass
/// unrolls, and operations of the body it copies per point, at most.
constexpr int64_t kMaxBlockPoints = 16;
constexpr int64_t kMaxBlockBodyOps = 8;

/// The loop the generic's accumulators are carried along, if this pass lowers
/// it: the only reduction, followed by nothing but a small block of parallel
/// loops (none, usually), at least one output the reduction does not move
/// along (an accumulator) sharing its root buffer with another operand (what
/// LLVM cannot tell apart), and every written buffer provably disjoint from
/// every other operand that shares its root.
std::optional<unsigned> reductionLoop(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g.getNumLoops() == 0) return std::nullopt;
  SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  for (int64_t size : ranges)
    if (ShapedType::isDynamic(size)) return std::nullopt;
  auto reductions = llvm::count(iters, utils::IteratorType::reduction);
  if (reductions == 0) return std::nullopt;
  unsigned red = iters.size() - 1;
  while (iters[red] != utils::IteratorType::reduction) --red;
  if (red + 1 < iters.size()) {
    int64_t points = 1;
    for (unsigned d = red + 1; d < iters.size(); ++d) points *= ranges[d];
    if (reductions != 1 || points > kMaxBlockPoints ||
        (int64_t)g.getBody()->getOperations().size() - 1 > kMaxBlockBodyOps)
      return std::nullopt;
  }
  bool sharedAccumulator = false;
  for (OpOperand &w : g.getDpsInitsMutable()) {
    bool accumulator = !g.getMatchingIndexingMap(&w).isFunctionOfDim(red);
    Extent we = extentOf(w.get());
    for (OpOperand &o : g->getOpOperands()) {
      if (&o == &w) continue;
      Extent oe = extentOf(o.get());
      if (oe.root != we.root) continue;
      if (accumulator) sharedAccumulator = true;
      if (!disjoint(we, oe)) return std::nullopt;
    }
  }
  if (!sharedAccumulator) return std::nullopt;
  return red;
}

/// The indices `map` gives for the loop indices `ivs`.
SmallVector<Value> indicesOf(OpBuilder &b, Location l, AffineMap map, ValueRange ivs) {
  SmallVector<Value> out;
  for (AffineExpr e : map.getResults())
    out.push_back(affine::AffineApplyOp::create(b, l, AffineMap::get(map.getNumDims(), 0, e), ivs));
  return out;
}

/// Loops before `red` become an scf.for nest; inside it, one scf.for over
/// `red` carries the accumulators of every point of the block after `red`.
void lower(linalg::GenericOp g, unsigned red) {
  OpBuilder b(g);
  Location l = g.getLoc();
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, l, v); };
  Value zero = index(0), one = index(1);
  SmallVector<Value> lbs, ubs, steps;
  for (unsigned d = 0; d < red; ++d) {
    lbs.push_back(zero);
    ubs.push_back(index(ranges[d]));
    steps.push_back(one);
  }
  Value redUb = index(ranges[red]);
  // The block's points, the last loop fastest.
  SmallVector<SmallVector<Value>> points(1);
  for (unsigned d = red + 1; d < ranges.size(); ++d) {
    SmallVector<SmallVector<Value>> next;
    for (auto &p : points)
      for (int64_t i = 0; i < ranges[d]; ++i) {
        next.push_back(p);
        next.back().push_back(index(i));
      }
    points = std::move(next);
  }
  auto invariant = [&](OpOperand *o) { return !g.getMatchingIndexingMap(o).isFunctionOfDim(red); };
  SmallVector<OpOperand *> accumulators;
  for (OpOperand &init : g.getDpsInitsMutable())
    if (invariant(&init)) accumulators.push_back(&init);

  scf::buildLoopNest(b, l, lbs, ubs, steps, [&](OpBuilder &nb, Location nl, ValueRange outer) {
    auto ivsAt = [&](Value redIv, ArrayRef<Value> point) {
      SmallVector<Value> ivs(outer.begin(), outer.end());
      ivs.push_back(redIv);
      ivs.append(point.begin(), point.end());
      return ivs;
    };
    // Per point: operands the reduction does not move along are read once,
    // at its index 0 (their maps ignore it).
    SmallVector<IRMapping> hoisted(points.size());
    SmallVector<Value> initial;
    for (auto [p, point] : llvm::enumerate(points)) {
      SmallVector<Value> ivs = ivsAt(zero, point);
      for (OpOperand *in : g.getDpsInputOperands())
        if (invariant(in) && isa<MemRefType>(in->get().getType()))
          hoisted[p].map(
              g.getMatchingBlockArgument(in),
              memref::LoadOp::create(nb, nl, in->get(), indicesOf(nb, nl, g.getMatchingIndexingMap(in), ivs)));
      for (OpOperand *acc : accumulators)
        initial.push_back(
            memref::LoadOp::create(nb, nl, acc->get(), indicesOf(nb, nl, g.getMatchingIndexingMap(acc), ivs)));
    }
    auto loop = scf::ForOp::create(
        nb, nl, zero, redUb, one, initial, [&](OpBuilder &ib, Location il, Value iv, ValueRange carried) {
          SmallVector<Value> next;
          for (auto [p, point] : llvm::enumerate(points)) {
            SmallVector<Value> ivs = ivsAt(iv, point);
            IRMapping map = hoisted[p];
            for (auto [a, acc] : llvm::enumerate(accumulators))
              map.map(g.getMatchingBlockArgument(acc), carried[p * accumulators.size() + a]);
            for (OpOperand &o : g->getOpOperands()) {
              BlockArgument arg = g.getMatchingBlockArgument(&o);
              if (map.contains(arg)) continue;
              if (!isa<MemRefType>(o.get().getType())) {
                map.map(arg, o.get()); // a scalar input
                continue;
              }
              if (g.isDpsInit(&o) && !g.payloadUsesValueFromOperand(&o)) continue;
              map.map(arg,
                      memref::LoadOp::create(ib, il, o.get(), indicesOf(ib, il, g.getMatchingIndexingMap(&o), ivs)));
            }
            Block *body = g.getBody();
            for (Operation &op : body->without_terminator()) {
              if (auto idx = dyn_cast<linalg::IndexOp>(op)) {
                map.map(idx.getResult(), ivs[idx.getDim()]);
                continue;
              }
              ib.clone(op, map);
            }
            auto yield = cast<linalg::YieldOp>(body->getTerminator());
            for (OpOperand &init : g.getDpsInitsMutable()) {
              Value value = map.lookupOrDefault(yield.getOperand(init.getOperandNumber() - g.getNumDpsInputs()));
              if (invariant(&init)) next.push_back(value);
              else
                memref::StoreOp::create(ib, il, value, init.get(),
                                        indicesOf(ib, il, g.getMatchingIndexingMap(&init), ivs));
            }
          }
          scf::YieldOp::create(ib, il, next);
        });
    for (auto [p, point] : llvm::enumerate(points)) {
      SmallVector<Value> ivs = ivsAt(zero, point);
      for (auto [a, acc] : llvm::enumerate(accumulators))
        memref::StoreOp::create(nb, nl, loop.getResult(p * accumulators.size() + a), acc->get(),
                                indicesOf(nb, nl, g.getMatchingIndexingMap(acc), ivs));
    }
  });
  g.erase();
}

struct RegisterAccumulatorsPass : impl::RegisterAccumulatorsPassBase<RegisterAccumulatorsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, unsigned>> found;
    getOperation().walk([&](linalg::GenericOp g) {
      if (std::optional<unsigned> red = reductionLoop(g)) found.push_back({g, *red});
    });
    for (auto [g, red] : found) lower(g, red);
  }
};

} // namespace
} // namespace nxc
