//===- MapToGpu.cpp - bufferized linalg to gpu.launch ---------------------===//
//
// The GPU pipeline's mapping step. Input: bufferized functions whose bodies
// are linalg.generic ops on memrefs (after linalg-generalize-named-ops),
// constants, views of the workspace and arguments, and possibly runtime
// control flow. Output: the same functions where every op that touches
// memory runs inside a gpu.launch, ready for gpu-kernel-outlining.
//
// Consecutive ops become one launch where they can:
//  - a row group: ops that all iterate over the same leading "row" loop and
//    read back what the group wrote only in the row they are in (softmax
//    over rows, layer norm, a dense layer followed by its activation and a
//    row softmax). One block per row runs the ops one after the other, with
//    a barrier between them; intermediates never leave the row's block in
//    between launches;
//  - a small group: ops whose work together is small run in one 1024-thread
//    block (a softmax over 1000 elements, a batch-1 MLP): one launch.
// Inside a block, each op is element-wise (a block-stride loop) or a
// reduction. A reduction whose payload is `out = combine(out, f(inputs))`
// with a known associative `combine` (add, mul, max, min, and, or, xor) is
// done by teams of threads, each folding a strided share, then combining
// through a shared-memory tree. The threads of a team lie along the
// reduction ("lanes over the reduction") when the largest input is
// contiguous along a reduction loop, and across outputs ("lanes over the
// outputs") when it is contiguous along a parallel loop, so loads coalesce
// either way. Other reductions (argmax's two outputs) fold serially, one
// thread per output element.
//
// An op in no group gets its own launch: element-wise ops as grid-stride
// loops; reductions as teams (32 lanes when outputs are many, 256 when
// they are few); a whole-array reduction over many elements split across
// blocks, its partials in the workspace, then combined by a second kernel.
// A fill that only initializes the next reduction is folded into it.
// Anything else (scf.if/while on runtime values, scalar loads and stores)
// runs in a single-thread kernel; a value such a run defines that a later
// op uses pulls that op into the run.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace nxc {

#define GEN_PASS_DEF_MAPTOGPUPASS
#include "nxc/Transforms/Passes.h.inc"

namespace {

constexpr int64_t kThreads = 256;              ///< block size of grid kernels and row groups
constexpr int64_t kMaxBlocks = 1 << 20;        ///< grid-stride loops beyond this
constexpr int64_t kSmallGroupThreads = 1024;
constexpr int64_t kSmallGroupWork = 1 << 17;   ///< loop iterations of a small group's ops together
constexpr int64_t kSplitThreshold = 1 << 16;   ///< reduction size that splits across blocks
constexpr int64_t kSplitPerThread = 8;
constexpr int64_t kMaxSplitBlocks = 512;
constexpr int64_t kFewRows = 128;              ///< fewer rows than about the GPU's multiprocessors
constexpr int64_t kWorkPerRow = 1 << 14;

Value cIndex(OpBuilder &b, Location l, int64_t v) { return arith::ConstantIndexOp::create(b, l, v); }

int64_t product(ArrayRef<int64_t> xs) {
  int64_t p = 1;
  for (int64_t x : xs) p *= x;
  return p;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t pow2Ceil(int64_t v) { return std::max<int64_t>(1, (int64_t)llvm::PowerOf2Ceil(std::max<int64_t>(v, 1))); }

/// Row-major indices of `linear` over `ranges`.
SmallVector<Value> delinearize(OpBuilder &b, Location l, Value linear, ArrayRef<int64_t> ranges) {
  SmallVector<Value> idx(ranges.size());
  for (int i = (int)ranges.size() - 1; i >= 0; --i) {
    if (i == 0) {
      idx[i] = linear;
      break;
    }
    Value r = cIndex(b, l, ranges[i]);
    idx[i] = arith::RemUIOp::create(b, l, linear, r);
    linear = arith::DivUIOp::create(b, l, linear, r);
  }
  return idx;
}

/// The iteration space of a generic: its parallel and reduction loops, the
/// row loop (loop 0) set apart when the op runs in a row group.
struct Space {
  SmallVector<int64_t> ranges;
  SmallVector<unsigned> par, red;
  SmallVector<int64_t> parRanges, redRanges;
  int64_t pn = 1, rn = 1;
  bool rowFixed = false;
  Value row; ///< with rowFixed: loop 0's index
};

std::optional<Space> spaceOf(linalg::GenericOp g, bool fixRow = false) {
  Space s;
  s.ranges = g.getStaticLoopRanges();
  s.rowFixed = fixRow;
  for (auto [i, it] : llvm::enumerate(g.getIteratorTypesArray())) {
    if (ShapedType::isDynamic(s.ranges[i])) return std::nullopt;
    if (fixRow && i == 0) continue;
    if (it == utils::IteratorType::parallel) {
      s.par.push_back(i);
      s.parRanges.push_back(s.ranges[i]);
    } else {
      s.red.push_back(i);
      s.redRanges.push_back(s.ranges[i]);
    }
  }
  s.pn = product(s.parRanges);
  s.rn = product(s.redRanges);
  return s;
}

/// All loop indices from the parallel point `p` and the reduction point `r`.
SmallVector<Value> loopIndices(OpBuilder &b, Location l, const Space &s, Value p, Value r) {
  SmallVector<Value> ivs(s.ranges.size());
  if (s.rowFixed) ivs[0] = s.row;
  if (!s.par.empty()) {
    SmallVector<Value> pi = delinearize(b, l, p, s.parRanges);
    for (auto [k, d] : llvm::enumerate(s.par)) ivs[d] = pi[k];
  }
  if (!s.red.empty()) {
    SmallVector<Value> ri = delinearize(b, l, r, s.redRanges);
    for (auto [k, d] : llvm::enumerate(s.red)) ivs[d] = ri[k];
  }
  return ivs;
}

SmallVector<Value> indicesOf(OpBuilder &b, Location l, AffineMap map, ArrayRef<Value> ivs) {
  if (map.getNumResults() == 0) return {};
  return *affine::expandAffineMap(b, l, map, ivs);
}

/// The payload of `g` at loop indices `ivs`: inputs are loaded, outputs are
/// `outs[i]` where given and loaded otherwise. Returns the yielded values.
SmallVector<Value> emitPayload(OpBuilder &b, Location l, linalg::GenericOp g, ArrayRef<Value> ivs,
                               ArrayRef<Value> outs = {}) {
  IRMapping map;
  Block &body = g.getRegion().front();
  for (OpOperand *in : g.getDpsInputOperands()) {
    BlockArgument arg = body.getArgument(in->getOperandNumber());
    if (arg.use_empty()) continue;
    if (!isa<MemRefType>(in->get().getType())) {
      map.map(arg, in->get());
      continue;
    }
    map.map(arg, memref::LoadOp::create(b, l, in->get(), indicesOf(b, l, g.getMatchingIndexingMap(in), ivs)));
  }
  for (auto [i, out] : llvm::enumerate(g.getDpsInitsMutable())) {
    BlockArgument arg = body.getArgument(out.getOperandNumber());
    if (arg.use_empty()) continue;
    if (i < outs.size() && outs[i]) {
      map.map(arg, outs[i]);
      continue;
    }
    map.map(arg, memref::LoadOp::create(b, l, out.get(), indicesOf(b, l, g.getMatchingIndexingMap(&out), ivs)));
  }
  for (Operation &op : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(op, map);
  }
  SmallVector<Value> results;
  for (Value v : body.getTerminator()->getOperands()) results.push_back(map.lookupOrDefault(v));
  return results;
}

void storeOutputs(OpBuilder &b, Location l, linalg::GenericOp g, ArrayRef<Value> ivs, ArrayRef<Value> values) {
  for (auto [i, out] : llvm::enumerate(g.getDpsInitsMutable()))
    memref::StoreOp::create(b, l, values[i], out.get(), indicesOf(b, l, g.getMatchingIndexingMap(&out), ivs));
}

/// A reduction `out = combine(out, x)`: the combining op and its identity.
struct Combiner {
  Operation *op = nullptr;
  TypedAttr identity;
};

std::optional<Combiner> combinerOf(linalg::GenericOp g) {
  if (g.getNumDpsInits() != 1 || g.getNumReductionLoops() == 0) return std::nullopt;
  Block &body = g.getRegion().front();
  BlockArgument out = body.getArgument(g.getDpsInitsMutable()[0].getOperandNumber());
  Value yielded = body.getTerminator()->getOperand(0);
  Operation *op = yielded.getDefiningOp();
  if (!op || op->getBlock() != &body || op->getNumOperands() != 2 || !out.hasOneUse() ||
      out.getUses().begin()->getOwner() != op)
    return std::nullopt;
  Type t = out.getType();
  Builder b(g.getContext());
  if (auto ft = dyn_cast<FloatType>(t)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    auto f = [&](llvm::APFloat v) -> TypedAttr { return b.getFloatAttr(ft, v); };
    if (isa<arith::AddFOp>(op)) return Combiner{op, f(llvm::APFloat::getZero(sem, /*Negative=*/true))};
    if (isa<arith::MulFOp>(op)) return Combiner{op, f(llvm::APFloat::getOne(sem))};
    if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op)) return Combiner{op, f(llvm::APFloat::getInf(sem, true))};
    if (isa<arith::MinimumFOp, arith::MinNumFOp>(op)) return Combiner{op, f(llvm::APFloat::getInf(sem, false))};
    return std::nullopt;
  }
  auto it = dyn_cast<IntegerType>(t);
  if (!it) return std::nullopt;
  unsigned w = it.getWidth();
  auto i = [&](llvm::APInt v) -> TypedAttr { return b.getIntegerAttr(it, v); };
  if (isa<arith::AddIOp, arith::OrIOp, arith::XOrIOp, arith::MaxUIOp>(op)) return Combiner{op, i(llvm::APInt(w, 0))};
  if (isa<arith::MulIOp>(op)) return Combiner{op, i(llvm::APInt(w, 1))};
  if (isa<arith::AndIOp, arith::MinUIOp>(op)) return Combiner{op, i(llvm::APInt::getAllOnes(w))};
  if (isa<arith::MaxSIOp>(op)) return Combiner{op, i(llvm::APInt::getSignedMinValue(w))};
  if (isa<arith::MinSIOp>(op)) return Combiner{op, i(llvm::APInt::getSignedMaxValue(w))};
  return std::nullopt;
}

Value combine(OpBuilder &b, Location l, Operation *combiner, Value x, Value y) {
  OperationState st(l, combiner->getName(), ValueRange{x, y}, TypeRange{x.getType()}, combiner->getAttrs());
  return b.create(st)->getResult(0);
}

/// out[p] = combine(start, total), start being `init` (a folded fill) or out[p].
void combineIntoOutput(OpBuilder &b, Location l, linalg::GenericOp g, const Space &s, const Combiner &c, Value p,
                       Value init, Value total) {
  SmallVector<Value> ivs = loopIndices(b, l, s, p, arith::ConstantIndexOp::create(b, l, 0));
  OpOperand &out = g.getDpsInitsMutable()[0];
  SmallVector<Value> idx = indicesOf(b, l, g.getMatchingIndexingMap(&out), ivs);
  Value start = init ? init : memref::LoadOp::create(b, l, out.get(), idx).getResult();
  memref::StoreOp::create(b, l, combine(b, l, c.op, start, total), out.get(), idx);
}

/// A fill (generalized): all-parallel, one scalar input yielded as is.
Value fillValue(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 || g.getNumReductionLoops() != 0) return nullptr;
  Value in = g.getDpsInputOperand(0)->get();
  if (isa<ShapedType>(in.getType())) return nullptr;
  Block &body = g.getRegion().front();
  if (body.getTerminator()->getOperand(0) != body.getArgument(0)) return nullptr;
  return in;
}

/// The memref input with the most elements (the one whose loads matter), if any.
OpOperand *largestInput(linalg::GenericOp g) {
  OpOperand *largest = nullptr;
  int64_t size = -1;
  for (OpOperand *in : g.getDpsInputOperands())
    if (auto t = dyn_cast<MemRefType>(in->get().getType()); t && t.hasStaticShape() && t.getNumElements() > size) {
      size = t.getNumElements();
      largest = in;
    }
  return largest;
}

/// Whether the largest memref input is contiguous along a reduction loop
/// (then a team's threads lie along the reduction; otherwise across outputs).
bool lanesOverReduction(linalg::GenericOp g, const Space &s) {
  OpOperand *largest = largestInput(g);
  if (!largest) return true;
  AffineMap map = g.getMatchingIndexingMap(largest);
  if (map.getNumResults() == 0) return true;
  auto d = dyn_cast<AffineDimExpr>(map.getResults().back());
  if (!d) return true;
  return llvm::is_contained(s.red, d.getPosition()) || !llvm::is_contained(s.par, d.getPosition());
}

/// A block's threads as a reduction sees them: `lanes` x `slices` threads
/// (thread.x, thread.y), and the shared-memory tree memref<slices x lanes>.
struct Threads {
  Value lane, slice;
  int64_t lanes = 1, slices = 1;
  Value tree;
};

/// Combines `value` over the 32 lanes of a warp with butterfly shuffles; all
/// lanes get the result. For 32-bit values only.
Value warpReduce(OpBuilder &b, Location l, Operation *combiner, Value value) {
  for (int32_t offset = 16; offset >= 1; offset /= 2) {
    Value other = gpu::ShuffleOp::create(b, l, value, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
    value = combine(b, l, combiner, value, other);
  }
  return value;
}

bool shuffles(Type t) { return t.isF32() || t.isInteger(32); }

/// Combines `value` over each team through the shared-memory tree. A team is
/// a row of lanes (`alongLanes`) or a column of slices; all its threads get
/// the result. Every thread of the block must call this.
Value teamReduce(OpBuilder &b, Location l, const Threads &t, Operation *combiner, Value value, bool alongLanes) {
  if (alongLanes && t.lanes % 32 == 0 && shuffles(value.getType())) {
    // Each warp combines its lanes with shuffles, then every thread combines
    // the team's warp totals from shared memory: two barriers in all.
    value = warpReduce(b, l, combiner, value);
    if (t.lanes == 32) return value;
    Value c32 = cIndex(b, l, 32);
    Value first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, arith::RemUIOp::create(b, l, t.lane, c32),
                                        cIndex(b, l, 0));
    auto ifOp = scf::IfOp::create(b, l, first, false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      memref::StoreOp::create(b, l, value, t.tree, ValueRange{t.slice, arith::DivUIOp::create(b, l, t.lane, c32)});
    }
    gpu::BarrierOp::create(b, l);
    Value total = memref::LoadOp::create(b, l, t.tree, ValueRange{t.slice, cIndex(b, l, 0)});
    for (int64_t w = 1; w < t.lanes / 32; ++w)
      total = combine(b, l, combiner, total, memref::LoadOp::create(b, l, t.tree, ValueRange{t.slice, cIndex(b, l, w)}));
    gpu::BarrierOp::create(b, l); // the tree is reused next
    return total;
  }
  memref::StoreOp::create(b, l, value, t.tree, ValueRange{t.slice, t.lane});
  gpu::BarrierOp::create(b, l);
  Value idx = alongLanes ? t.lane : t.slice;
  int64_t n = alongLanes ? t.lanes : t.slices;
  auto at = [&](Value i) { return alongLanes ? SmallVector<Value>{t.slice, i} : SmallVector<Value>{i, t.lane}; };
  for (int64_t s = n / 2; s >= 1; s /= 2) {
    Value active = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, idx, cIndex(b, l, s));
    auto ifOp = scf::IfOp::create(b, l, active, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value other = arith::AddIOp::create(b, l, idx, cIndex(b, l, s));
      Value x = memref::LoadOp::create(b, l, t.tree, at(idx));
      Value y = memref::LoadOp::create(b, l, t.tree, at(other));
      memref::StoreOp::create(b, l, combine(b, l, combiner, x, y), t.tree, at(idx));
    }
    gpu::BarrierOp::create(b, l);
  }
  Value result = memref::LoadOp::create(b, l, t.tree, at(cIndex(b, l, 0)));
  gpu::BarrierOp::create(b, l); // the tree is reused next
  return result;
}

/// for (i = start; i < end; i += step) body(i)
void forLoop(OpBuilder &b, Location l, Value start, Value end, Value step, function_ref<void(OpBuilder &, Value)> body) {
  auto loop = scf::ForOp::create(b, l, start, end, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(b, loop.getInductionVar());
}

/// The reduction of output points [pFirst, pn) in rounds (stride `pStride`
/// between a block's rounds), each over the reduction points [rBegin, rEnd).
/// A team computes `tile` consecutive points (a small innermost output
/// dimension that the largest input does not depend on: its loads are shared).
/// With lanes over the reduction, thread (lane, slice) works on the tile
/// round + slice; otherwise on round + lane. With `partials`, each team's
/// total goes to partials[p][chunk] instead of the output, which is combined
/// with `init` when given and with its own value otherwise.
void emitTeamReduction(OpBuilder &b, Location l, linalg::GenericOp g, const Space &s, const Combiner &c,
                       const Threads &t, bool alongLanes, Value pFirst, Value pStride, Value rBegin, Value rEnd,
                       Value init, Value partials = nullptr, Value chunk = nullptr, int64_t tile = 1) {
  Value identity = arith::ConstantOp::create(b, l, c.identity);
  int64_t tiles = s.pn / tile;
  Value tn = cIndex(b, l, tiles);
  // Every thread of a block runs the same rounds (the tree has barriers);
  // threads past the last point fold point 0 and write nothing.
  forLoop(b, l, pFirst, tn, pStride, [&](OpBuilder &b, Value round) {
    Value q = arith::AddIOp::create(b, l, round, alongLanes ? t.slice : t.lane);
    Value valid = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, q, tn);
    Value qSafe = arith::SelectOp::create(b, l, valid, q, cIndex(b, l, 0));
    SmallVector<Value> points, safePoints;
    for (int64_t j = 0; j < tile; ++j) {
      auto at = [&](Value v) {
        return tile == 1 ? v
                         : arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, v, cIndex(b, l, tile)),
                                                 cIndex(b, l, j))
                               .getResult();
      };
      points.push_back(at(q));
      safePoints.push_back(at(qSafe));
    }
    Value rStart = arith::AddIOp::create(b, l, rBegin, alongLanes ? t.lane : t.slice);
    Value rStep = cIndex(b, l, alongLanes ? t.lanes : t.slices);
    auto loop = scf::ForOp::create(b, l, rStart, rEnd, rStep, SmallVector<Value>(tile, identity));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> next;
      for (int64_t j = 0; j < tile; ++j) {
        SmallVector<Value> ivs = loopIndices(b, l, s, safePoints[j], loop.getInductionVar());
        next.push_back(emitPayload(b, l, g, ivs, {loop.getRegionIterArgs()[j]})[0]);
      }
      scf::YieldOp::create(b, l, next);
    }
    SmallVector<Value> totals;
    for (int64_t j = 0; j < tile; ++j)
      totals.push_back(teamReduce(b, l, t, c.op, loop.getResult(j), alongLanes));
    Value leader = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, alongLanes ? t.lane : t.slice,
                                         cIndex(b, l, 0));
    auto ifOp = scf::IfOp::create(b, l, arith::AndIOp::create(b, l, leader, valid), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (int64_t j = 0; j < tile; ++j) {
      if (partials) {
        memref::StoreOp::create(b, l, totals[j], partials, ValueRange{points[j], chunk});
        continue;
      }
      combineIntoOutput(b, l, g, s, c, points[j], init, totals[j]);
    }
  });
}

/// The tile of emitTeamReduction for lanes over the reduction: the extent of
/// the innermost output loop when it is small and the largest input does not
/// depend on it (each of its loads then serves the whole tile); else 1.
int64_t outputTile(linalg::GenericOp g, const Space &s) {
  if (s.par.empty()) return 1;
  unsigned inner = s.par.back();
  int64_t extent = s.parRanges.back();
  if (extent < 2 || extent > 16) return 1;
  OpOperand *largest = largestInput(g);
  if (!largest || g.getMatchingIndexingMap(largest).isFunctionOfDim(inner)) return 1;
  return extent;
}

/// One thread per output point, folding the reduction loop serially.
void emitSerialReduction(OpBuilder &b, Location l, linalg::GenericOp g, const Space &s, Value first, Value stride) {
  forLoop(b, l, first, cIndex(b, l, s.pn), stride, [&](OpBuilder &b, Value p) {
    SmallVector<Value> ivs0 = loopIndices(b, l, s, p, cIndex(b, l, 0));
    SmallVector<Value> init;
    for (OpOperand &out : g.getDpsInitsMutable())
      init.push_back(memref::LoadOp::create(b, l, out.get(), indicesOf(b, l, g.getMatchingIndexingMap(&out), ivs0)));
    auto loop = scf::ForOp::create(b, l, cIndex(b, l, 0), cIndex(b, l, s.rn), cIndex(b, l, 1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> ivs = loopIndices(b, l, s, p, loop.getInductionVar());
      SmallVector<Value> accs(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
      scf::YieldOp::create(b, l, emitPayload(b, l, g, ivs, accs));
    }
    storeOutputs(b, l, g, ivs0, SmallVector<Value>(loop.getResults().begin(), loop.getResults().end()));
  });
}

void emitElementwise(OpBuilder &b, Location l, linalg::GenericOp g, const Space &s, Value first, Value stride) {
  forLoop(b, l, first, cIndex(b, l, s.pn), stride, [&](OpBuilder &b, Value i) {
    SmallVector<Value> ivs = loopIndices(b, l, s, i, nullptr);
    storeOutputs(b, l, g, ivs, emitPayload(b, l, g, ivs));
  });
}

/// A gpu.launch of `blocks` x (`bx`, `by`) threads with one shared-memory
/// tree per element type in `trees` (memref<by x bx x T>).
gpu::LaunchOp makeLaunch(OpBuilder &b, Location l, int64_t blocks, int64_t bx, int64_t by, ArrayRef<Type> trees) {
  Attribute workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  SmallVector<Type> attributions;
  for (Type t : trees) attributions.push_back(MemRefType::get({by, bx}, t, MemRefLayoutAttrInterface{}, workgroup));
  Value one = cIndex(b, l, 1);
  auto launch = gpu::LaunchOp::create(b, l, cIndex(b, l, blocks), one, one, cIndex(b, l, bx), cIndex(b, l, by), one,
                                      nullptr, nullptr, {}, attributions);
  OpBuilder ib = OpBuilder::atBlockEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(ib, l);
  return launch;
}

OpBuilder bodyBuilder(gpu::LaunchOp launch) { return OpBuilder(launch.getBody().front().getTerminator()); }

/// The shared-memory tree for `type`, viewed as memref<slices x lanes>.
Value treeFor(OpBuilder &b, Location l, gpu::LaunchOp launch, ArrayRef<Type> trees, Type type, int64_t lanes,
              int64_t slices) {
  auto it = llvm::find(trees, type);
  Value flat = launch.getWorkgroupAttributions()[it - trees.begin()];
  auto flatType = cast<MemRefType>(flat.getType());
  if (flatType.getShape() == ArrayRef<int64_t>{slices, lanes}) return flat;
  Attribute space = flatType.getMemorySpace();
  Value linear = memref::CollapseShapeOp::create(b, l, flat, ArrayRef<ReassociationIndices>{{0, 1}});
  return memref::ExpandShapeOp::create(b, l, MemRefType::get({slices, lanes}, type, MemRefLayoutAttrInterface{}, space),
                                       linear, ArrayRef<ReassociationIndices>{{0, 1}});
}

/// Ops that may stay in host code: they compute no data, only constants and
/// views (pointers).
bool staysOnHost(Operation *op) {
  return isa<arith::ConstantOp, memref::GetGlobalOp, func::ReturnOp>(op) ||
         (isa<ViewLikeOpInterface>(op) && op->getNumRegions() == 0 && isMemoryEffectFree(op));
}

/// Ops worth cloning into a launch instead of passing their results in.
bool sinkable(Operation *op) {
  return isa<arith::ConstantOp, memref::GetGlobalOp>(op) || isa<ViewLikeOpInterface>(op) ||
         isa<memref::ExtractStridedMetadataOp>(op);
}

bool isMappable(Operation *op) {
  auto g = dyn_cast<linalg::GenericOp>(op);
  return g && g.hasPureBufferSemantics() && spaceOf(g).has_value();
}

/// The buffer a memref value is a view of, if the view keeps the row (its
/// leading dimension) of that buffer: a workspace view, an argument, or an
/// expand/collapse that leaves dimension 0 alone. Null otherwise.
Value rowRoot(Value v) {
  while (true) {
    if (isa<BlockArgument>(v)) return v;
    Operation *def = v.getDefiningOp();
    if (!def) return nullptr;
    if (isa<memref::ViewOp>(def)) return v;
    auto src = [&](Value s) -> Value {
      auto from = cast<MemRefType>(s.getType()), to = cast<MemRefType>(v.getType());
      if (from.getRank() == 0 || to.getRank() == 0 || from.getDimSize(0) != to.getDimSize(0)) return nullptr;
      return s;
    };
    if (auto e = dyn_cast<memref::ExpandShapeOp>(def)) {
      SmallVector<ReassociationIndices> groups = e.getReassociationIndices();
      if (groups.empty()) return nullptr;
      // [[0, 1], ...] with the extra dimensions of size 1 keeps rows too.
      for (int64_t d : llvm::drop_begin(groups[0]))
        if (e.getResultType().getDimSize(d) != 1) return nullptr;
      v = src(e.getSrc());
    } else if (auto c = dyn_cast<memref::CollapseShapeOp>(def)) {
      SmallVector<ReassociationIndices> groups = c.getReassociationIndices();
      if (groups.empty() || groups[0].size() != 1) return nullptr;
      v = src(c.getSrc());
    } else {
      return nullptr;
    }
    if (!v) return nullptr;
  }
}

/// Whether operand `o` of `g` is indexed by loop 0 in its leading dimension.
bool rowIndexed(linalg::GenericOp g, OpOperand &o) {
  AffineMap map = g.getMatchingIndexingMap(&o);
  if (map.getNumResults() == 0) return false;
  auto d = dyn_cast<AffineDimExpr>(map.getResult(0));
  return d && d.getPosition() == 0;
}

/// The rows of a row group `g` can be in: loop 0 parallel, every output
/// written in its row. 0 if none.
int64_t rowsOf(linalg::GenericOp g) {
  if (g.getNumLoops() == 0 || g.getIteratorTypesArray()[0] != utils::IteratorType::parallel) return 0;
  int64_t rows = g.getStaticLoopRanges()[0];
  for (OpOperand &out : g.getDpsInitsMutable())
    if (!rowIndexed(g, out) || !rowRoot(out.get())) return 0;
  return rows;
}

int64_t workOf(linalg::GenericOp g) {
  Space s = *spaceOf(g);
  return s.pn * std::max<int64_t>(s.rn, 1);
}

struct MapToGpuPass : impl::MapToGpuPassBase<MapToGpuPass> {
  void runOnOperation() override {
    for (auto fn : llvm::to_vector(getOperation().getOps<func::FuncOp>())) {
      if (fn.isExternal()) continue;
      if (failed(mapFunction(fn))) return signalPassFailure();
    }
  }

  /// Extra workspace bytes for split-reduction partials.
  int64_t workspaceGrowth = 0;

  LogicalResult mapFunction(func::FuncOp fn) {
    Block &entry = fn.getBody().front();
    for (Operation &op : entry)
      if (!staysOnHost(&op) && !isa<linalg::GenericOp>(op) &&
          op.walk([](func::CallOp) { return WalkResult::interrupt(); }).wasInterrupted())
        return op.emitError("this operation calls back into the host (print_value, print_expr or a host function), "
                            "which compiled CUDA code cannot do; remove it for --device cuda");
    workspaceGrowth = 0;
    SmallVector<Operation *> ops;
    for (Operation &op : entry) ops.push_back(&op);
    DenseMap<Operation *, unsigned> index;
    for (auto [i, op] : llvm::enumerate(ops)) index[op] = i;
    // Runs of ops that need a single-thread kernel, extended over every op
    // that uses a value they define.
    std::vector<bool> serial(ops.size(), false);
    for (auto [i, op] : llvm::enumerate(ops)) serial[i] = !staysOnHost(op) && !isMappable(op);
    bool changed = true;
    while (changed) {
      changed = false;
      for (size_t i = 0; i < ops.size(); ++i) {
        if (!serial[i]) continue;
        size_t last = i;
        for (Value r : ops[i]->getResults())
          for (Operation *user : r.getUsers()) {
            Operation *top = user;
            while (top->getBlock() != &entry) top = top->getParentOp();
            last = std::max<size_t>(last, index[top]);
          }
        for (size_t k = i + 1; k <= last; ++k)
          if (!serial[k] && !isa<func::ReturnOp>(ops[k])) serial[k] = changed = true;
      }
    }
    for (size_t i = 0; i < ops.size();) {
      if (serial[i]) {
        size_t j = i;
        while (j + 1 < ops.size() && (serial[j + 1] || (staysOnHost(ops[j + 1]) && !isa<func::ReturnOp>(ops[j + 1]))))
          ++j;
        while (!serial[j]) --j;
        SmallVector<Operation *> run;
        for (size_t k = i; k <= j; ++k)
          if (serial[k]) run.push_back(ops[k]);
        emitSerialKernel(run);
        i = j + 1;
        continue;
      }
      if (staysOnHost(ops[i])) {
        ++i;
        continue;
      }
      // A group from here: the generics up to the next serial op.
      SmallVector<linalg::GenericOp> candidates;
      SmallVector<size_t> at;
      for (size_t k = i; k < ops.size() && !serial[k]; ++k)
        if (auto g = dyn_cast<linalg::GenericOp>(ops[k])) {
          candidates.push_back(g);
          at.push_back(k);
        }
      size_t taken = takeGroup(fn, candidates);
      i = at[taken - 1] + 1; // the ops taken are erased
    }
    if (workspaceGrowth) growWorkspace(fn);
    fn.walk([&](gpu::LaunchOp launch) { (void)sinkOperationsIntoLaunchOp(launch, sinkable); });
    return success();
  }

  /// Emits the launch(es) for the longest group that starts at ops[0] and
  /// erases its ops; returns how many ops it took.
  size_t takeGroup(func::FuncOp fn, MutableArrayRef<linalg::GenericOp> ops) {
    // A row group?
    int64_t rows = rowsOf(ops[0]);
    size_t n = 0;
    if (rows >= 2) {
      llvm::SmallPtrSet<void *, 8> written, readAcrossRows;
      for (; n < ops.size(); ++n) {
        linalg::GenericOp g = ops[n];
        if (rowsOf(g) != rows) break;
        // With few rows, an op with much work per row is better spread over
        // the whole GPU on its own.
        if (rows < kFewRows && workOf(g) / rows > kWorkPerRow) break;
        bool ok = true;
        for (OpOperand *in : g.getDpsInputOperands()) {
          if (!isa<MemRefType>(in->get().getType())) continue;
          Value root = rowRoot(in->get());
          bool local = root && rowIndexed(g, *in);
          void *key = root ? root.getAsOpaquePointer() : in->get().getAsOpaquePointer();
          if (!local) {
            if (!root || written.count(key)) ok = false;
            readAcrossRows.insert(key);
          }
        }
        for (OpOperand &out : g.getDpsInitsMutable())
          if (readAcrossRows.count(rowRoot(out.get()).getAsOpaquePointer())) ok = false;
        if (!ok) break;
        for (OpOperand &out : g.getDpsInitsMutable()) written.insert(rowRoot(out.get()).getAsOpaquePointer());
      }
      if (n >= 2) {
        emitGroup(fn, ops.take_front(n), rows);
        return n;
      }
    }
    // A small group?
    int64_t work = 0;
    n = 0;
    for (; n < ops.size(); ++n) {
      work += workOf(ops[n]);
      if (work > kSmallGroupWork) break;
      // A fill is better folded into the reduction it initializes.
      if (fillValue(ops[n]) && n + 1 < ops.size() && initializes(ops[n], ops[n + 1]) &&
          work + workOf(ops[n + 1]) > kSmallGroupWork)
        break;
    }
    if (n >= 1 && (n >= 2 || workOf(ops[0]) <= kSmallGroupWork / 8)) {
      emitGroup(fn, ops.take_front(n), 1);
      return n;
    }
    // One op (and the fill it may absorb) in its own launch(es).
    if (Value v = fillValue(ops[0]); v && ops.size() > 1 && initializes(ops[0], ops[1])) {
      emitStandalone(fn, ops[1], v);
      ops[0]->erase();
      ops[1]->erase();
      return 2;
    }
    emitStandalone(fn, ops[0], nullptr);
    ops[0]->erase();
    return 1;
  }

  /// Whether `fill` only initializes the reduction `next`.
  static bool initializes(linalg::GenericOp fill, linalg::GenericOp next) {
    if (!combinerOf(next) || next.getNumDpsInits() != 1) return false;
    std::optional<Space> s = spaceOf(next);
    return s && s->rn > 0 && next.getDpsInitsMutable()[0].get() == fill.getDpsInitsMutable()[0].get();
  }

  void emitSerialKernel(ArrayRef<Operation *> run) {
    Operation *last = run.back();
    OpBuilder b(last->getContext());
    b.setInsertionPointAfter(last);
    auto launch = makeLaunch(b, last->getLoc(), 1, 1, 1, {});
    Operation *term = launch.getBody().front().getTerminator();
    for (Operation *op : run) op->moveBefore(term);
  }

  /// A memref<rows x cols x T> of partials placed after the workspace.
  Value partialsBuffer(OpBuilder &b, Location l, func::FuncOp fn, int64_t rows, int64_t cols, Type t) {
    auto size = fn->getAttrOfType<IntegerAttr>("nxc.workspace_size");
    int64_t old = size ? size.getInt() : 0;
    int64_t base = (old + workspaceGrowth + 63) / 64 * 64;
    int64_t bytes = rows * cols * ((t.getIntOrFloatBitWidth() + 7) / 8);
    workspaceGrowth = base + bytes - old;
    return memref::ViewOp::create(b, l, MemRefType::get({rows, cols}, t), fn.getArguments().back(),
                                  cIndex(b, l, base), ValueRange{});
  }

  /// Gives the function a workspace that also holds the partials.
  void growWorkspace(func::FuncOp fn) {
    auto size = fn->getAttrOfType<IntegerAttr>("nxc.workspace_size");
    int64_t newSize = (size ? size.getInt() : 0) + workspaceGrowth;
    fn.getArguments().back().setType(MemRefType::get({newSize}, IntegerType::get(fn.getContext(), 8)));
    SmallVector<Type> inputs;
    for (BlockArgument a : fn.getArguments()) inputs.push_back(a.getType());
    fn.setType(FunctionType::get(fn.getContext(), inputs, fn.getResultTypes()));
    fn->setAttr("nxc.workspace_size", IntegerAttr::get(IntegerType::get(fn.getContext(), 64), newSize));
  }

  /// One launch for `ops`: with rows >= 2 a block per row (grid-stride over
  /// rows), each op run for that row; with rows == 1 one block for all.
  void emitGroup(func::FuncOp fn, MutableArrayRef<linalg::GenericOp> ops, int64_t rows) {
    bool byRow = rows >= 2;
    int64_t threads = byRow ? kThreads : kSmallGroupThreads;
    llvm::SetVector<Type> treeTypes;
    for (linalg::GenericOp g : ops)
      if (auto c = combinerOf(g)) treeTypes.insert(c->identity.getType());
    linalg::GenericOp last = ops.back();
    Location l = last.getLoc();
    // Before the last op: every view and constant the ops use is defined by then.
    OpBuilder b(last);
    int64_t blocks = byRow ? std::min(rows, kMaxBlocks) : 1;
    auto launch = makeLaunch(b, l, blocks, threads, 1, treeTypes.getArrayRef());
    OpBuilder kb = bodyBuilder(launch);
    Value tid = launch.getThreadIds().x;
    auto emitAll = [&](OpBuilder &kb, Value row) {
      for (size_t i = 0; i < ops.size(); ++i) {
        linalg::GenericOp g = ops[i];
        if (fillValue(g) && i + 1 < ops.size() && initializes(g, ops[i + 1])) continue; // folded into the next op
        Value init;
        if (i > 0)
          if (Value v = fillValue(ops[i - 1]); v && initializes(ops[i - 1], g)) init = v;
        emitInBlock(kb, g, row, tid, threads, launch, treeTypes.getArrayRef(), init);
        gpu::BarrierOp::create(kb, g.getLoc());
      }
    };
    if (byRow)
      forLoop(kb, l, launch.getBlockIds().x, cIndex(kb, l, rows), cIndex(kb, l, blocks),
              [&](OpBuilder &kb, Value row) { emitAll(kb, row); });
    else
      emitAll(kb, nullptr);
    for (linalg::GenericOp g : ops) g->erase();
  }

  /// One op run by the `threads` threads of a block (for one row when `row`
  /// is given).
  void emitInBlock(OpBuilder &b, linalg::GenericOp g, Value row, Value tid, int64_t threads, gpu::LaunchOp launch,
                   ArrayRef<Type> trees, Value init) {
    Location l = g.getLoc();
    Space s = *spaceOf(g, /*fixRow=*/row != nullptr);
    s.row = row;
    if (s.pn == 0) return;
    std::optional<Combiner> c = combinerOf(g);
    if (s.red.empty()) return emitElementwise(b, l, g, s, tid, cIndex(b, l, threads));
    if (!c || s.rn == 0) return emitSerialReduction(b, l, g, s, tid, cIndex(b, l, threads));
    bool alongLanes = lanesOverReduction(g, s);
    Threads t;
    int64_t tile = 1;
    if (alongLanes) {
      // Rows of lanes: one tile of points per row, up to 32 rows.
      tile = outputTile(g, s);
      t.slices = std::min<int64_t>(32, pow2Ceil(s.pn / tile));
      t.lanes = std::min<int64_t>(threads / t.slices, std::max<int64_t>(32, pow2Ceil(s.rn)));
      t.slices = threads / t.lanes;
    } else {
      // Lanes over consecutive points, slices over the reduction.
      t.lanes = std::min<int64_t>(threads, std::max<int64_t>(32, pow2Ceil(s.pn)));
      t.slices = threads / t.lanes;
    }
    t.lane = arith::RemUIOp::create(b, l, tid, cIndex(b, l, t.lanes));
    t.slice = arith::DivUIOp::create(b, l, tid, cIndex(b, l, t.lanes));
    t.tree = treeFor(b, l, launch, trees, c->identity.getType(), t.lanes, t.slices);
    emitTeamReduction(b, l, g, s, *c, t, alongLanes, cIndex(b, l, 0), cIndex(b, l, alongLanes ? t.slices : t.lanes),
                      cIndex(b, l, 0), cIndex(b, l, s.rn), init, nullptr, nullptr, tile);
  }

  /// An op in its own launch(es), `init` the fill value folded into it.
  void emitStandalone(func::FuncOp fn, linalg::GenericOp g, Value init) {
    Location l = g.getLoc();
    Space s = *spaceOf(g);
    OpBuilder b(g);
    if (s.pn == 0) return;
    auto gridStride = [&](auto emit) {
      int64_t blocks = std::min(kMaxBlocks, ceilDiv(s.pn, kThreads));
      auto launch = makeLaunch(b, l, blocks, kThreads, 1, {});
      OpBuilder kb = bodyBuilder(launch);
      Value first = arith::AddIOp::create(
          kb, l, arith::MulIOp::create(kb, l, launch.getBlockIds().x, cIndex(kb, l, kThreads)), launch.getThreadIds().x);
      emit(kb, first, cIndex(kb, l, blocks * kThreads));
    };
    if (s.red.empty())
      return gridStride([&](OpBuilder &kb, Value first, Value stride) { emitElementwise(kb, l, g, s, first, stride); });
    std::optional<Combiner> c = combinerOf(g);
    if (!c || s.rn == 0)
      return gridStride(
          [&](OpBuilder &kb, Value first, Value stride) { emitSerialReduction(kb, l, g, s, first, stride); });
    if (s.pn <= 64 && s.rn >= kSplitThreshold) return emitSplitReduction(fn, b, g, s, *c, init);
    Type type = c->identity.getType();
    bool alongLanes = lanesOverReduction(g, s);
    Threads t;
    int64_t tile = 1;
    if (alongLanes) {
      tile = outputTile(g, s);
      int64_t teams = s.pn / tile;
      t.lanes = std::max<int64_t>(32, std::min<int64_t>(pow2Ceil(s.rn), teams >= 2048 ? 32 : kThreads));
      t.slices = kThreads / t.lanes;
    } else {
      t.lanes = 32;
      t.slices = kThreads / t.lanes;
    }
    int64_t perBlock = alongLanes ? t.slices : t.lanes;
    int64_t blocks = std::min(kMaxBlocks, ceilDiv(s.pn / tile, perBlock));
    auto launch = makeLaunch(b, l, blocks, t.lanes, t.slices, {type});
    OpBuilder kb = bodyBuilder(launch);
    t.lane = launch.getThreadIds().x;
    t.slice = launch.getThreadIds().y;
    t.tree = launch.getWorkgroupAttributions()[0];
    Value first = arith::MulIOp::create(kb, l, launch.getBlockIds().x, cIndex(kb, l, perBlock));
    emitTeamReduction(kb, l, g, s, *c, t, alongLanes, first, cIndex(kb, l, blocks * perBlock), cIndex(kb, l, 0),
                      cIndex(kb, l, s.rn), init, nullptr, nullptr, tile);
  }

  /// A few outputs, each over many elements: kernel 1 has `split` blocks per
  /// output fold a chunk each into partials; kernel 2 combines them.
  void emitSplitReduction(func::FuncOp fn, OpBuilder &b, linalg::GenericOp g, const Space &s, const Combiner &c,
                          Value init) {
    Location l = g.getLoc();
    Type type = c.identity.getType();
    int64_t split = std::min<int64_t>(kMaxSplitBlocks, ceilDiv(s.rn, kThreads * kSplitPerThread));
    Value partials = partialsBuffer(b, l, fn, s.pn, split, type);
    int64_t chunk = ceilDiv(s.rn, split);
    {
      auto launch = makeLaunch(b, l, s.pn * split, kThreads, 1, {type});
      OpBuilder kb = bodyBuilder(launch);
      Threads t{launch.getThreadIds().x, launch.getThreadIds().y, kThreads, 1, launch.getWorkgroupAttributions()[0]};
      Value bid = launch.getBlockIds().x;
      Value p = arith::DivUIOp::create(kb, l, bid, cIndex(kb, l, split));
      Value k = arith::RemUIOp::create(kb, l, bid, cIndex(kb, l, split));
      Value rBegin = arith::MulIOp::create(kb, l, k, cIndex(kb, l, chunk));
      Value rEnd = arith::MinUIOp::create(kb, l, arith::AddIOp::create(kb, l, rBegin, cIndex(kb, l, chunk)),
                                          cIndex(kb, l, s.rn));
      // One point per block: the rounds loop runs once, from p.
      emitTeamReduction(kb, l, g, s, c, t, /*alongLanes=*/true, p, cIndex(kb, l, s.pn), rBegin, rEnd, nullptr,
                        partials, k);
    }
    auto launch = makeLaunch(b, l, s.pn, kThreads, 1, {type});
    OpBuilder kb = bodyBuilder(launch);
    Threads t{launch.getThreadIds().x, launch.getThreadIds().y, kThreads, 1, launch.getWorkgroupAttributions()[0]};
    Value p = launch.getBlockIds().x;
    Value identity = arith::ConstantOp::create(kb, l, c.identity);
    auto loop = scf::ForOp::create(kb, l, t.lane, cIndex(kb, l, split), cIndex(kb, l, kThreads), ValueRange{identity});
    {
      OpBuilder::InsertionGuard guard(kb);
      kb.setInsertionPointToStart(loop.getBody());
      Value v = memref::LoadOp::create(kb, l, partials, ValueRange{p, loop.getInductionVar()});
      scf::YieldOp::create(kb, l, combine(kb, l, c.op, loop.getRegionIterArgs()[0], v));
    }
    Value total = teamReduce(kb, l, t, c.op, loop.getResult(0), /*alongLanes=*/true);
    Value leader = arith::CmpIOp::create(kb, l, arith::CmpIPredicate::eq, t.lane, cIndex(kb, l, 0));
    auto ifOp = scf::IfOp::create(kb, l, leader, false);
    kb.setInsertionPointToStart(ifOp.thenBlock());
    combineIntoOutput(kb, l, g, s, c, p, init, total);
  }
};

} // namespace

} // namespace nxc
