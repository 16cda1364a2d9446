//===- MapToGpu.cpp - bufferized linalg to gpu.launch ---------------------===//
//
// The GPU pipeline's mapping step. Input: bufferized functions whose bodies
// are linalg ops on memrefs (all generic after linalg-generalize-named-ops),
// constants, views of the workspace and arguments, and possibly runtime
// control flow. Output: the same functions where every op that touches
// memory runs inside a gpu.launch, ready for gpu-kernel-outlining.
//
// How each op is mapped:
//  - element-wise (no reduction loop): one thread per element, a grid-stride
//    loop over the flattened iteration space, 256 threads per block; the
//    innermost loop is the fastest-varying thread index, so accesses to
//    row-major buffers coalesce;
//  - a reduction whose payload is `out = combine(out, f(inputs))` with a
//    known associative `combine` (add, mul, max, min, and, or, xor): a team
//    of TX threads per output element; each thread folds a strided share of
//    the reduction space, then the team combines through a shared-memory
//    tree. TX is 256 (a block per output) when outputs are few and 32 (eight
//    outputs per block) when they are many. A whole-array reduction over
//    many elements is split across blocks: partials go to the workspace and
//    a second kernel combines them;
//  - a linalg.fill whose only job is to initialize the next reduction is
//    folded into it (the team's result is combined with the fill value);
//  - any other reduction (argmax's two outputs, ...): one thread per output
//    element, folding serially;
//  - everything else (scf.if/while on runtime values, scalar loads and
//    stores): one single-thread kernel per run of such ops. A value that
//    such a run defines and a later op uses pulls that op into the run.
// When every op of a function is small, the whole function becomes one
// launch of a single 1024-thread block with a barrier after each op.
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

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace nxc {

#define GEN_PASS_DEF_MAPTOGPUPASS
#include "nxc/Transforms/Passes.h.inc"

namespace {

constexpr int64_t kElementwiseThreads = 256;
constexpr int64_t kMaxBlocks = 1 << 20;         ///< grid-stride loops beyond this
constexpr int64_t kSingleBlockThreads = 1024;
constexpr int64_t kSingleBlockWork = 1 << 17;   ///< iterations of all ops together
constexpr int64_t kSplitThreshold = 1 << 16;    ///< reduction size that splits across blocks
constexpr int64_t kSplitPerThread = 8;
constexpr int64_t kMaxSplitBlocks = 512;

Value cIndex(OpBuilder &b, Location l, int64_t v) { return arith::ConstantIndexOp::create(b, l, v); }

int64_t product(ArrayRef<int64_t> xs) {
  int64_t p = 1;
  for (int64_t x : xs) p *= x;
  return p;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Row-major indices of `linear` over `ranges`.
SmallVector<Value> delinearize(OpBuilder &b, Location l, Value linear, ArrayRef<int64_t> ranges) {
  SmallVector<Value> idx(ranges.size());
  for (int i = (int)ranges.size() - 1; i >= 0; --i) {
    if (i == 0) { idx[i] = linear; break; }
    Value r = cIndex(b, l, ranges[i]);
    idx[i] = arith::RemUIOp::create(b, l, linear, r);
    linear = arith::DivUIOp::create(b, l, linear, r);
  }
  return idx;
}

/// The iteration space of a generic split into parallel and reduction loops.
struct Space {
  SmallVector<int64_t> ranges;
  SmallVector<unsigned> par, red;
  SmallVector<int64_t> parRanges, redRanges;
  int64_t pn = 1, rn = 1;
};

std::optional<Space> spaceOf(linalg::GenericOp g) {
  Space s;
  s.ranges = g.getStaticLoopRanges();
  for (auto [i, it] : llvm::enumerate(g.getIteratorTypesArray())) {
    if (ShapedType::isDynamic(s.ranges[i])) return std::nullopt;
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
  SmallVector<Value> pi = delinearize(b, l, p, s.parRanges), ri;
  for (auto [k, d] : llvm::enumerate(s.par)) ivs[d] = pi[k];
  if (!s.red.empty()) {
    ri = delinearize(b, l, r, s.redRanges);
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
  if (g.getNumDpsInits() != 1) return std::nullopt;
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

/// A fill (generalized): all-parallel, one scalar input yielded as is.
Value fillValue(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 || g.getNumReductionLoops() != 0) return nullptr;
  Value in = g.getDpsInputOperand(0)->get();
  if (isa<ShapedType>(in.getType())) return nullptr;
  Block &body = g.getRegion().front();
  if (body.getTerminator()->getOperand(0) != body.getArgument(0)) return nullptr;
  return in;
}

/// The threads of a launch as the mapping code sees them.
struct Threads {
  Value tx, ty;         ///< thread index within the team, team row within the block
  Value bid;            ///< block index (x)
  int64_t blocks = 1;   ///< grid size (x)
  int64_t bx = 1, by = 1;
  Value smem;           ///< memref<by x bx x T, workgroup> for team reductions, or null
};

/// Combines `value` (per thread) over the TX threads of each team through
/// shared memory; every thread of the team gets the result.
Value teamReduce(OpBuilder &b, Location l, const Threads &t, Operation *combiner, Value value) {
  memref::StoreOp::create(b, l, value, t.smem, ValueRange{t.ty, t.tx});
  gpu::BarrierOp::create(b, l);
  for (int64_t s = t.bx / 2; s >= 1; s /= 2) {
    Value active = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, t.tx, cIndex(b, l, s));
    auto ifOp = scf::IfOp::create(b, l, active, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value other = arith::AddIOp::create(b, l, t.tx, cIndex(b, l, s));
      Value x = memref::LoadOp::create(b, l, t.smem, ValueRange{t.ty, t.tx});
      Value y = memref::LoadOp::create(b, l, t.smem, ValueRange{t.ty, other});
      memref::StoreOp::create(b, l, combine(b, l, combiner, x, y), t.smem, ValueRange{t.ty, t.tx});
    }
    gpu::BarrierOp::create(b, l);
  }
  Value result = memref::LoadOp::create(b, l, t.smem, ValueRange{t.ty, cIndex(b, l, 0)});
  gpu::BarrierOp::create(b, l); // the next use of the tree may overwrite row 0
  return result;
}

/// for (i = start; i < end; i += step) body(i)
void forLoop(OpBuilder &b, Location l, Value start, Value end, Value step, function_ref<void(OpBuilder &, Value)> body) {
  auto loop = scf::ForOp::create(b, l, start, end, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(b, loop.getInductionVar());
}

/// The plan for one reduction generic.
struct ReductionPlan {
  int64_t bx = 1, by = 1; ///< TX threads per team, teams per block
  int64_t split = 1;      ///< blocks per output element (whole-array reductions)
};

ReductionPlan planReduction(const Space &s) {
  ReductionPlan p;
  int64_t r = std::max<int64_t>(1, (int64_t)llvm::PowerOf2Ceil(s.rn));
  p.bx = std::min<int64_t>(r, s.pn >= 2048 ? 32 : 256);
  p.bx = std::max<int64_t>(p.bx, 32);
  p.by = 256 / p.bx;
  if (s.pn <= 64 && s.rn >= kSplitThreshold)
    p.split = std::min<int64_t>(kMaxSplitBlocks, ceilDiv(s.rn, p.bx * kSplitPerThread));
  return p;
}

/// Emits, for the teams of `t`, the reduction of the output points
/// [pBegin, pEnd) handed out team by team with stride `pStride`, each over
/// the reduction points [rBegin, rEnd). With `partials`, team results are
/// stored there ([p][chunk]) instead of combined into the output.
void emitTeamReduction(OpBuilder &b, Location l, linalg::GenericOp g, const Space &s, const Combiner &c,
                       const Threads &t, Value pFirst, Value pStride, Value rBegin, Value rEnd, Value init,
                       Value partials, Value chunk) {
  Value identity = arith::ConstantOp::create(b, l, c.identity);
  Value pn = cIndex(b, l, s.pn);
  // Every thread of a team must run the same number of tree steps: iterate
  // over the points in rounds, with teams past the end doing idle rounds.
  forLoop(b, l, pFirst, pn, pStride, [&](OpBuilder &b, Value pBase) {
    Value p = arith::AddIOp::create(b, l, pBase, t.ty);
    Value valid = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, p, pn);
    Value pSafe = arith::SelectOp::create(b, l, valid, p, cIndex(b, l, 0));
    Value rStart = arith::AddIOp::create(b, l, rBegin, t.tx);
    auto loop = scf::ForOp::create(b, l, rStart, rEnd, cIndex(b, l, t.bx), ValueRange{identity});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> ivs = loopIndices(b, l, s, pSafe, loop.getInductionVar());
      SmallVector<Value> acc = emitPayload(b, l, g, ivs, {loop.getRegionIterArgs()[0]});
      scf::YieldOp::create(b, l, acc[0]);
    }
    Value partial = loop.getResult(0);
    // Teams past the end fold nothing (their loops are empty) but take part
    // in the barriers.
    Value total = teamReduce(b, l, t, c.op, partial);
    Value leader = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, t.tx, cIndex(b, l, 0));
    Value write = arith::AndIOp::create(b, l, leader, valid);
    auto ifOp = scf::IfOp::create(b, l, write, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    if (partials) {
      memref::StoreOp::create(b, l, total, partials, ValueRange{p, chunk});
      return;
    }
    SmallVector<Value> ivs = loopIndices(b, l, s, p, cIndex(b, l, 0));
    OpOperand &out = g.getDpsInitsMutable()[0];
    SmallVector<Value> idx = indicesOf(b, l, g.getMatchingIndexingMap(&out), ivs);
    Value start = init ? init : memref::LoadOp::create(b, l, out.get(), idx).getResult();
    memref::StoreOp::create(b, l, combine(b, l, c.op, start, total), out.get(), idx);
  });
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

/// A gpu.launch with a 1-D grid and a (bx, by) block, and its thread indices.
/// `smemType`: the team-reduction tree's element type, if any.
std::pair<gpu::LaunchOp, Threads> makeLaunch(OpBuilder &b, Location l, int64_t blocks, int64_t bx, int64_t by,
                                             Type smemType) {
  SmallVector<Type> workgroup;
  if (smemType)
    workgroup.push_back(MemRefType::get({by, bx}, smemType, MemRefLayoutAttrInterface{},
                                        gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup)));
  Value one = cIndex(b, l, 1);
  auto launch = gpu::LaunchOp::create(b, l, cIndex(b, l, blocks), one, one, cIndex(b, l, bx), cIndex(b, l, by), one,
                                      nullptr, nullptr, {}, workgroup);
  Block &body = launch.getBody().front();
  OpBuilder ib = OpBuilder::atBlockEnd(&body);
  gpu::TerminatorOp::create(ib, l);
  Threads t;
  t.tx = launch.getThreadIds().x;
  t.ty = launch.getThreadIds().y;
  t.bid = launch.getBlockIds().x;
  t.blocks = blocks;
  t.bx = bx;
  t.by = by;
  if (smemType) t.smem = launch.getWorkgroupAttributions()[0];
  return {launch, t};
}

OpBuilder bodyBuilder(gpu::LaunchOp launch) {
  Block &body = launch.getBody().front();
  return OpBuilder(body.getTerminator());
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
      if (!staysOnHost(&op) && !isa<linalg::GenericOp>(op) && op.walk([](func::CallOp) {
                                                                 return WalkResult::interrupt();
                                                               }).wasInterrupted())
        return op.emitError("this operation calls back into the host (print_value, print_expr or a host function), "
                            "which compiled CUDA code cannot do; remove it for --device cuda");
    workspaceGrowth = 0;
    if (trySingleBlock(fn)) return success();
    SmallVector<Operation *> ops;
    for (Operation &op : entry) ops.push_back(&op);
    // Runs of ops that need a single-thread kernel, extended over every op
    // that uses a value they define.
    DenseMap<Operation *, unsigned> index;
    for (auto [i, op] : llvm::enumerate(ops)) index[op] = i;
    std::vector<bool> serial(ops.size(), false);
    for (auto [i, op] : llvm::enumerate(ops))
      serial[i] = !staysOnHost(op) && !isMappable(op);
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
      if (auto g = dyn_cast<linalg::GenericOp>(ops[i])) {
        // A fill that only initializes the next reduction is folded into it.
        if (Value v = fillValue(g); v && i + 1 < ops.size()) {
          if (auto next = dyn_cast<linalg::GenericOp>(ops[i + 1]);
              next && next.getNumReductionLoops() > 0 && !serial[i + 1] && next.getNumDpsInits() == 1 &&
              next.getDpsInitsMutable()[0].get() == g.getDpsInitsMutable()[0].get() && combinerOf(next) &&
              spaceOf(next) && spaceOf(next)->rn > 0) {
            emitGeneric(fn, next, v);
            g->erase();
            next->erase();
            i += 2;
            continue;
          }
        }
        emitGeneric(fn, g, nullptr);
        g->erase();
      }
      ++i;
    }
    if (workspaceGrowth) growWorkspace(fn);
    sinkInto(fn);
    return success();
  }

  bool isMappable(Operation *op) {
    auto g = dyn_cast<linalg::GenericOp>(op);
    return g && g.hasPureBufferSemantics() && spaceOf(g).has_value();
  }

  void sinkInto(func::FuncOp fn) {
    fn.walk([&](gpu::LaunchOp launch) { (void)sinkOperationsIntoLaunchOp(launch, sinkable); });
  }

  void emitSerialKernel(ArrayRef<Operation *> run) {
    Operation *last = run.back();
    OpBuilder b(last->getContext());
    b.setInsertionPointAfter(last);
    auto [launch, t] = makeLaunch(b, last->getLoc(), 1, 1, 1, nullptr);
    Operation *term = launch.getBody().front().getTerminator();
    for (Operation *op : run) op->moveBefore(term);
  }

  /// The workspace operand, its byte size, and a view of `bytes` more bytes.
  Value workspaceOf(func::FuncOp fn) { return fn.getArguments().back(); }

  /// A memref<rows x cols x T> of partials placed after the current workspace.
  Value partialsBuffer(OpBuilder &b, Location l, func::FuncOp fn, int64_t rows, int64_t cols, Type t) {
    auto size = fn->getAttrOfType<IntegerAttr>("nxc.workspace_size");
    int64_t base = (size ? size.getInt() : 0) + workspaceGrowth;
    base = (base + 63) / 64 * 64;
    int64_t bytes = rows * cols * ((t.getIntOrFloatBitWidth() + 7) / 8);
    workspaceGrowth = base + bytes - (size ? size.getInt() : 0);
    pendingViews.push_back({base, MemRefType::get({rows, cols}, t)});
    Value ws = workspaceOf(fn);
    auto view = memref::ViewOp::create(b, l, MemRefType::get({rows, cols}, t), ws, cIndex(b, l, base), ValueRange{});
    return view;
  }
  std::vector<std::pair<int64_t, MemRefType>> pendingViews;

  /// Gives the function a workspace that also holds the partials.
  void growWorkspace(func::FuncOp fn) {
    auto size = fn->getAttrOfType<IntegerAttr>("nxc.workspace_size");
    int64_t newSize = (size ? size.getInt() : 0) + workspaceGrowth;
    BlockArgument ws = fn.getArguments().back();
    auto newType = MemRefType::get({newSize}, IntegerType::get(fn.getContext(), 8));
    ws.setType(newType);
    SmallVector<Type> inputs;
    for (BlockArgument a : fn.getArguments()) inputs.push_back(a.getType());
    fn.setType(FunctionType::get(fn.getContext(), inputs, fn.getResultTypes()));
    fn->setAttr("nxc.workspace_size", IntegerAttr::get(IntegerType::get(fn.getContext(), 64), newSize));
  }

  void emitGeneric(func::FuncOp fn, linalg::GenericOp g, Value init) {
    Location l = g.getLoc();
    Space s = *spaceOf(g);
    OpBuilder b(g);
    if (s.pn == 0) return;
    if (s.red.empty()) {
      int64_t blocks = std::min(kMaxBlocks, ceilDiv(s.pn, kElementwiseThreads));
      auto [launch, t] = makeLaunch(b, l, blocks, kElementwiseThreads, 1, nullptr);
      OpBuilder kb = bodyBuilder(launch);
      Value first = arith::AddIOp::create(kb, l, arith::MulIOp::create(kb, l, t.bid, cIndex(kb, l, t.bx)), t.tx);
      emitElementwise(kb, l, g, s, first, cIndex(kb, l, blocks * t.bx));
      return;
    }
    std::optional<Combiner> c = combinerOf(g);
    if (!c || s.rn == 0) {
      int64_t blocks = std::min(kMaxBlocks, ceilDiv(s.pn, kElementwiseThreads));
      auto [launch, t] = makeLaunch(b, l, blocks, kElementwiseThreads, 1, nullptr);
      OpBuilder kb = bodyBuilder(launch);
      Value first = arith::AddIOp::create(kb, l, arith::MulIOp::create(kb, l, t.bid, cIndex(kb, l, t.bx)), t.tx);
      emitSerialReduction(kb, l, g, s, first, cIndex(kb, l, blocks * t.bx));
      return;
    }
    ReductionPlan plan = planReduction(s);
    Type type = c->identity.getType();
    if (plan.split > 1) {
      // Kernel 1: block (p, chunk) folds its chunk into partials[p][chunk].
      Value partials = partialsBuffer(b, l, fn, s.pn, plan.split, type);
      int64_t chunk = ceilDiv(s.rn, plan.split);
      {
        auto [launch, t] = makeLaunch(b, l, s.pn * plan.split, plan.bx, 1, type);
        OpBuilder kb = bodyBuilder(launch);
        Value split = cIndex(kb, l, plan.split);
        Value p = arith::DivUIOp::create(kb, l, t.bid, split);
        Value k = arith::RemUIOp::create(kb, l, t.bid, split);
        Value rBegin = arith::MulIOp::create(kb, l, k, cIndex(kb, l, chunk));
        Value rEnd = arith::MinUIOp::create(kb, l, arith::AddIOp::create(kb, l, rBegin, cIndex(kb, l, chunk)),
                                            cIndex(kb, l, s.rn));
        // One point per block: the loop over points runs once, from p.
        emitTeamReduction(kb, l, g, s, *c, t, p, cIndex(kb, l, s.pn), rBegin, rEnd, nullptr, partials, k);
      }
      // Kernel 2: one block per output point combines the partials.
      {
        auto [launch, t] = makeLaunch(b, l, s.pn, 256, 1, type);
        OpBuilder kb = bodyBuilder(launch);
        Value p = t.bid;
        Value identity = arith::ConstantOp::create(kb, l, c->identity);
        auto loop = scf::ForOp::create(kb, l, t.tx, cIndex(kb, l, plan.split), cIndex(kb, l, 256), ValueRange{identity});
        {
          OpBuilder::InsertionGuard guard(kb);
          kb.setInsertionPointToStart(loop.getBody());
          Value v = memref::LoadOp::create(kb, l, partials, ValueRange{p, loop.getInductionVar()});
          scf::YieldOp::create(kb, l, combine(kb, l, c->op, loop.getRegionIterArgs()[0], v));
        }
        Value total = teamReduce(kb, l, t, c->op, loop.getResult(0));
        Value leader = arith::CmpIOp::create(kb, l, arith::CmpIPredicate::eq, t.tx, cIndex(kb, l, 0));
        auto ifOp = scf::IfOp::create(kb, l, leader, false);
        kb.setInsertionPointToStart(ifOp.thenBlock());
        SmallVector<Value> ivs = loopIndices(kb, l, s, p, cIndex(kb, l, 0));
        OpOperand &out = g.getDpsInitsMutable()[0];
        SmallVector<Value> idx = indicesOf(kb, l, g.getMatchingIndexingMap(&out), ivs);
        Value start = init ? init : memref::LoadOp::create(kb, l, out.get(), idx).getResult();
        memref::StoreOp::create(kb, l, combine(kb, l, c->op, start, total), out.get(), idx);
      }
      return;
    }
    int64_t blocks = std::min(kMaxBlocks, ceilDiv(s.pn, plan.by));
    auto [launch, t] = makeLaunch(b, l, blocks, plan.bx, plan.by, type);
    OpBuilder kb = bodyBuilder(launch);
    Value first = arith::MulIOp::create(kb, l, t.bid, cIndex(kb, l, plan.by));
    emitTeamReduction(kb, l, g, s, *c, t, first, cIndex(kb, l, blocks * plan.by), cIndex(kb, l, 0),
                      cIndex(kb, l, s.rn), init, nullptr, nullptr);
  }

  /// One 1024-thread block for the whole function when all its ops are small
  /// generics: one launch, a barrier after each op.
  bool trySingleBlock(func::FuncOp fn) {
    Block &entry = fn.getBody().front();
    SmallVector<linalg::GenericOp> generics;
    int64_t work = 0;
    llvm::SetVector<Type> treeTypes; // one shared-memory tree per element type
    for (Operation &op : entry) {
      if (staysOnHost(&op)) continue;
      if (!isMappable(&op)) return false;
      auto g = cast<linalg::GenericOp>(op);
      Space s = *spaceOf(g);
      work += s.pn * std::max<int64_t>(s.rn, 1);
      if (work > kSingleBlockWork) return false;
      generics.push_back(g);
      if (!s.red.empty() && s.rn > 0)
        if (auto c = combinerOf(g)) treeTypes.insert(c->identity.getType());
    }
    if (generics.empty()) return false;
    Location l = fn.getLoc();
    // Before the last op: every view and constant the ops use is defined by then.
    OpBuilder b(generics.back());
    Attribute workgroupSpace = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
    SmallVector<Type> workgroup;
    for (Type t : treeTypes)
      workgroup.push_back(MemRefType::get({kSingleBlockThreads}, t, MemRefLayoutAttrInterface{}, workgroupSpace));
    Value one = cIndex(b, l, 1);
    auto launch = gpu::LaunchOp::create(b, l, one, one, one, cIndex(b, l, kSingleBlockThreads), one, one, nullptr,
                                        nullptr, {}, workgroup);
    Block &body = launch.getBody().front();
    OpBuilder kb = OpBuilder::atBlockEnd(&body);
    gpu::TerminatorOp::create(kb, l);
    kb.setInsertionPoint(body.getTerminator());
    Value tid = launch.getThreadIds().x;
    Value nthreads = cIndex(kb, l, kSingleBlockThreads);
    for (size_t i = 0; i < generics.size(); ++i) {
      linalg::GenericOp g = generics[i];
      Space s = *spaceOf(g);
      Location gl = g.getLoc();
      Value init;
      if (Value v = fillValue(g); v && i + 1 < generics.size()) {
        linalg::GenericOp next = generics[i + 1];
        if (next.getNumReductionLoops() > 0 && next.getNumDpsInits() == 1 &&
            next.getDpsInitsMutable()[0].get() == g.getDpsInitsMutable()[0].get() && combinerOf(next) &&
            spaceOf(next)->rn > 0)
          continue; // folded into the next op below
      }
      if (i > 0)
        if (Value v = fillValue(generics[i - 1]);
            v && generics[i - 1].getDpsInitsMutable()[0].get() == g.getDpsInitsMutable()[0].get() &&
            g.getNumReductionLoops() > 0 && combinerOf(g) && s.rn > 0)
          init = v;
      if (s.pn > 0) {
        std::optional<Combiner> c = s.red.empty() ? std::nullopt : combinerOf(g);
        if (s.red.empty()) {
          emitElementwise(kb, gl, g, s, tid, nthreads);
        } else if (!c || s.rn == 0) {
          emitSerialReduction(kb, gl, g, s, tid, nthreads);
        } else {
          // Teams of TX threads: as many rows as there are points, up to 32.
          int64_t by = std::min<int64_t>(32, (int64_t)llvm::PowerOf2Ceil(s.pn));
          int64_t bx = std::min<int64_t>(kSingleBlockThreads / by, (int64_t)llvm::PowerOf2Ceil(s.rn));
          by = kSingleBlockThreads / bx;
          Threads t;
          t.bx = bx;
          t.by = by;
          t.tx = arith::RemUIOp::create(kb, gl, tid, cIndex(kb, gl, bx));
          t.ty = arith::DivUIOp::create(kb, gl, tid, cIndex(kb, gl, bx));
          Type type = c->identity.getType();
          Value flat = launch.getWorkgroupAttributions()[llvm::find(treeTypes, type) - treeTypes.begin()];
          auto view = memref::ExpandShapeOp::create(
              kb, gl, MemRefType::get({by, bx}, type, MemRefLayoutAttrInterface{}, workgroupSpace), flat,
              ArrayRef<ReassociationIndices>{{0, 1}});
          t.smem = view;
          emitTeamReduction(kb, gl, g, s, *c, t, cIndex(kb, gl, 0), cIndex(kb, gl, by), cIndex(kb, gl, 0),
                            cIndex(kb, gl, s.rn), init, nullptr, nullptr);
        }
      }
      gpu::BarrierOp::create(kb, gl);
    }
    for (linalg::GenericOp g : generics) g->erase();
    sinkInto(fn);
    return true;
  }
};

} // namespace

} // namespace nxc
