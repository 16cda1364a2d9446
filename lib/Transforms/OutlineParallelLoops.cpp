//===- OutlineParallelLoops.cpp - parallel loop nests as range functions --===//
//
// A call runs on several threads by splitting the iterations of its large
// parallel loops. This pass prepares that on bufferized code: each top-level
// op of a public function that is
//   - an scf.for marked `nxc.parallel` (nxc-tile-rows and
//     nxc-block-contractions mark the tiling loops they create over parallel
//     dimensions), or
//   - a structured op whose outermost loop is parallel and indexes every
//     output,
// and whose estimated work reaches `min-work`, moves into a private function
//   func.func private @F_parallelK(%lo: index, %hi: index, captured...)
//       attributes {nxc.parallel_body = THREADS}
// that runs the iterations [lo, hi) of that loop (for a structured op: the
// op on slices [lo, hi) of that dimension), and is replaced by
//   func.call @F_parallelK(%c0, %cN, captured...)
// which runs every iteration. The call becomes a dispatch on the thread pool
// when the module is translated to LLVM IR (lib/Pipeline/ParallelDispatch.cpp).
//
// What the loop captures:
//   - constants are cloned into the new function;
//   - buffers (allocations and views of them) that only the loop uses are
//     cloned too, so that every thread gets its own temporaries
//     (nxc-allocs-to-workspace gives the body a workspace per thread);
//   - everything else is an argument: a view made outside the loop is made
//     again inside from the buffer it views, so that the arguments are
//     distinct buffers, which LLVM may treat as not aliasing (the kernel's
//     own arguments are noalias for the same reason). A captured buffer that
//     the loop writes other than through a slice that depends on the
//     iteration, or one whose layout is not static (it could not be passed
//     as a bare pointer), keeps the loop sequential.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace nxc {

#define GEN_PASS_DEF_OUTLINEPARALLELLOOPSPASS
#include "nxc/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

/// What one scalar operation of a loop body costs, in additions: a
/// transcendental function is a polynomial of about 16 operations, a
/// division or square root about 4.
double opCost(Operation &op) {
  if (isa<math::AbsFOp, math::CopySignOp, math::FmaOp>(op)) return 1;
  if (isa<math::SqrtOp, math::RsqrtOp, arith::DivFOp, arith::RemFOp, arith::DivSIOp, arith::DivUIOp>(op)) return 4;
  if (isa<math::MathDialect>(op.getDialect())) return 16;
  return 1;
}

std::optional<int64_t> tripCount(scf::ForOp loop) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lb || !ub || !step || *step <= 0) return std::nullopt;
  return *ub <= *lb ? 0 : (*ub - *lb + *step - 1) / *step;
}

/// The scalar operations `root` runs: each structured op's iterations times
/// its body's cost, times the trip counts of the loops around it up to root.
double estimateWork(Operation *root) {
  double total = 0;
  root->walk([&](linalg::LinalgOp op) {
    double n = 1;
    for (int64_t r : op.getStaticLoopRanges()) n *= ShapedType::isDynamic(r) ? 1 : r;
    for (Operation *p = op->getParentOp(); p && p != root->getParentOp(); p = p->getParentOp())
      if (auto loop = dyn_cast<scf::ForOp>(p))
        if (std::optional<int64_t> t = tripCount(loop)) n *= *t;
    double body = 0;
    for (Operation &o : op->getRegion(0).front().without_terminator()) body += opCost(o);
    total += n * std::max(1.0, body);
  });
  return total;
}

bool insideOf(Operation *root, Operation *op) { return root == op || root->isAncestor(op); }

bool definedOutside(Operation *root, Value v) {
  Operation *def = v.getDefiningOp();
  if (def) return !insideOf(root, def);
  return !root->isAncestor(cast<BlockArgument>(v).getOwner()->getParentOp());
}

/// Whether `root` writes `buffer` (or a view of it that does not depend on
/// the iteration): such a buffer is shared by every iteration.
bool writtenDirectly(Operation *root, Value buffer) {
  SmallVector<Value> work = {buffer};
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    for (OpOperand &use : cur.getUses()) {
      Operation *user = use.getOwner();
      if (!insideOf(root, user)) continue;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user); view && view.getViewSource() == cur) {
        // A slice at an offset that depends on the iteration is the
        // iteration's own (tiling loops over parallel dimensions).
        if (llvm::all_of(user->getOperands(), [&](Value o) { return definedOutside(root, o); }))
          for (Value r : user->getResults()) work.push_back(r);
        continue;
      }
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user)) {
        if (linalgOp.isDpsInit(&use)) return true;
        continue;
      }
      if (auto effects = dyn_cast<MemoryEffectOpInterface>(user)) {
        SmallVector<MemoryEffects::EffectInstance> found;
        effects.getEffectsOnValue(cur, found);
        if (llvm::any_of(found, [](auto &e) { return isa<MemoryEffects::Write>(e.getEffect()); })) return true;
        continue;
      }
      return true; // an op that says nothing about its effects
    }
  }
  return false;
}

/// Whether every use of `v` (through views too) is inside `root`, apart
/// from deallocations.
bool onlyUsedInside(Operation *root, Value v) {
  for (Operation *user : v.getUsers()) {
    if (isa<memref::DeallocOp>(user)) continue;
    if (insideOf(root, user)) continue;
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    if (!view || view.getViewSource() != v) return false;
    for (Value r : user->getResults())
      if (!onlyUsedInside(root, r)) return false;
  }
  return true;
}

/// A value the new function computes itself: a constant, or a temporary
/// buffer (or a view of one) that only `root` uses.
bool clonable(Operation *root, Value v) {
  Operation *def = v.getDefiningOp();
  if (!def) return false;
  if (matchPattern(v, m_Constant()) || isa<memref::GetGlobalOp>(def)) return true;
  if (isa<memref::AllocOp, memref::AllocaOp>(def)) return def->getNumOperands() == 0 && onlyUsedInside(root, v);
  if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
    for (Value o : def->getOperands())
      if (!clonable(root, o)) return false;
    return true;
  }
  return false;
}

/// The buffer `v` views, through views whose offsets and sizes are
/// constants: the new function takes the buffer and makes the view itself,
/// so that its arguments are distinct buffers (noalias).
Value bufferBase(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>()) {
    Value source = view.getViewSource();
    if (!llvm::all_of(view->getOperands(), [&](Value o) { return o == source || matchPattern(o, m_Constant()); }))
      break;
    v = source;
  }
  return v;
}

/// A memref type the bare-pointer calling convention can pass.
bool passableAsPointer(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  if (!m) return t.isIntOrIndexOrFloat();
  if (!m.hasStaticShape()) return false;
  int64_t offset;
  SmallVector<int64_t> strides;
  if (failed(m.getStridesAndOffset(strides, offset))) return false;
  return !ShapedType::isDynamic(offset) && llvm::none_of(strides, ShapedType::isDynamic);
}

/// Iterations per thread from which a nest's inner loops stay inside the
/// body instead of joining the range.
constexpr int64_t kIterationsPerThread = 8;

/// `loop` and the marked loops perfectly nested in it (with only pure ops
/// beside each inner loop), outermost first: the blocks of a dot, rows by
/// columns. Their iterations run as one range, so that the threads share
/// the blocks evenly (5 row blocks of an MLP layer split 3 + 2; its 40
/// blocks split 20 + 20), until the range has kIterationsPerThread per
/// thread: the loops inside stay loops of the body. There LLVM unrolls a
/// short column loop into copies of the block whose loads each walk the
/// rows with one stride, which the CPU's stride prefetchers follow; joined
/// into the range, one copy read each block of rows twice in turn, and W3
/// ([10000,784] x [784,10], 2,500 blocks of rows by 2 of columns) ran at
/// 1.75 ms on one thread instead of 1.15 ms (Zen 5).
SmallVector<scf::ForOp> parallelNest(scf::ForOp loop, int64_t threads) {
  SmallVector<scf::ForOp> nest = {loop};
  int64_t iterations = tripCount(loop).value_or(0);
  for (;;) {
    if (iterations >= kIterationsPerThread * threads) return nest;
    scf::ForOp inner;
    bool perfect = true;
    for (Operation &op : nest.back().getBody()->without_terminator()) {
      auto f = dyn_cast<scf::ForOp>(op);
      if (f && !inner && f->hasAttr(kParallelLoopAttr) && f.getNumResults() == 0 && tripCount(f) &&
          getConstantIntValue(f.getLowerBound()) && getConstantIntValue(f.getStep()))
        inner = f;
      else if (!isPure(&op))
        perfect = false;
    }
    if (!perfect || !inner) return nest;
    nest.push_back(inner);
    iterations *= *tripCount(inner);
  }
}

/// Clones `v`'s definition (and what it depends on) into the mapping.
Value cloneInto(OpBuilder &b, Value v, IRMapping &map) {
  if (Value m = map.lookupOrNull(v)) return m;
  Operation *def = v.getDefiningOp();
  for (Value o : def->getOperands()) cloneInto(b, o, map);
  b.clone(*def, map);
  return map.lookup(v);
}

struct OutlineParallelLoopsPass : impl::OutlineParallelLoopsPassBase<OutlineParallelLoopsPass> {
  using OutlineParallelLoopsPassBase::OutlineParallelLoopsPassBase;

  void runOnOperation() override {
    if (threads <= 1) return;
    SmallVector<func::FuncOp> fns;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isExternal() && !fn.isPrivate()) fns.push_back(fn);
    for (func::FuncOp fn : fns) {
      unsigned count = 0;
      for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
        // The candidates first; the work estimate walks the op.
        std::optional<int64_t> iterations;
        std::optional<unsigned> dim;
        if (auto loop = dyn_cast<scf::ForOp>(op); loop && loop->hasAttr(kParallelLoopAttr))
          iterations = tripCount(loop);
        else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op); linalgOp && linalgOp.hasPureBufferSemantics())
          if ((dim = splitDimension(linalgOp))) iterations = linalgOp.getStaticLoopRanges()[*dim];
        if (!iterations || estimateWork(&op) < (double)minWork) continue;
        count += succeeded(outline(fn, &op, count, iterations, dim));
      }
    }
  }

  /// The outermost loop of `op` with more than one iteration (loops of one
  /// before it, such as a batch of 1, are no loops), if it is parallel,
  /// indexes every output and has at least two iterations. Inner loops are
  /// not split: a chunk of an inner loop has a trip count known only at run
  /// time, which costs the vectorized code more than the threads gain on the
  /// small ops that have such a loop (a vector-matrix product).
  static std::optional<unsigned> splitDimension(linalg::LinalgOp op) {
    if (!isa<TilingInterface>(op.getOperation()) || op.getNumLoops() == 0) return std::nullopt;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    unsigned dim = 0;
    while (dim + 1 < ranges.size() && ranges[dim] == 1 &&
           op.getIteratorTypesArray()[dim] == utils::IteratorType::parallel)
      ++dim;
    if (op.getIteratorTypesArray()[dim] != utils::IteratorType::parallel || ShapedType::isDynamic(ranges[dim]) ||
        ranges[dim] < 2)
      return std::nullopt;
    if (!llvm::all_of(op.getDpsInitsMutable(),
                      [&](OpOperand &init) { return op.getMatchingIndexingMap(&init).isFunctionOfDim(dim); }))
      return std::nullopt;
    return dim;
  }

  /// Moves `root` (a marked loop, or a structured op split along `dim`)
  /// into a function over [lo, hi) of its `iterations`.
  LogicalResult outline(func::FuncOp fn, Operation *root, unsigned index, std::optional<int64_t> iterations,
                        std::optional<unsigned> dim) {
    if (!iterations || *iterations < 2) return failure();
    auto loop = dyn_cast<scf::ForOp>(root);
    if (loop && !(getConstantIntValue(loop.getLowerBound()) && getConstantIntValue(loop.getStep())))
      return failure();
    SmallVector<scf::ForOp> nest;
    if (loop) {
      nest = parallelNest(loop, threads);
      for (scf::ForOp inner : ArrayRef<scf::ForOp>(nest).drop_front()) *iterations *= *tripCount(inner);
    }

    // What the new function takes as arguments, and what it computes itself.
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(root->getRegions(), captured);
    if (!loop) captured.insert(root->getOperands().begin(), root->getOperands().end());
    SmallVector<Value> args; // distinct buffers, and scalars
    for (Value v : captured) {
      if (clonable(root, v)) continue;
      // The op's own outputs are split with it; any other buffer it writes
      // is shared by all iterations.
      if (isa<MemRefType>(v.getType()) &&
          (loop || !llvm::is_contained(cast<linalg::LinalgOp>(root).getDpsInits(), v)) && writtenDirectly(root, v))
        return failure();
      Value base = bufferBase(v);
      if (!passableAsPointer(base.getType())) return failure();
      if (!llvm::is_contained(args, base)) args.push_back(base);
    }

    OpBuilder b(fn);
    Location loc = root->getLoc();
    SmallVector<Type> types = {b.getIndexType(), b.getIndexType()};
    for (Value v : args) types.push_back(v.getType());
    std::string name = (fn.getSymName() + "_parallel" + Twine(index)).str();
    b.setInsertionPointAfter(fn);
    auto body = func::FuncOp::create(b, loc, name, b.getFunctionType(types, {}));
    body.setPrivate();
    body->setAttr(kParallelBodyAttr, b.getI64IntegerAttr(threads));
    Block *entry = body.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping map;
    for (auto [v, a] : llvm::zip(args, entry->getArguments().drop_front(2))) map.map(v, a);
    for (Value v : captured)
      if (!map.contains(v)) cloneInto(b, v, map);
    Value lo = entry->getArgument(0), hi = entry->getArgument(1);
    if (loop && nest.size() > 1) {
      // One loop over [lo, hi) of the nest's iterations in order; each
      // level's index is a digit of t in the trip counts' mixed radix.
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto linear = scf::ForOp::create(b, loc, lo, hi, one);
      b.setInsertionPointToStart(linear.getBody());
      Value rest = linear.getInductionVar();
      for (int k = (int)nest.size() - 1; k >= 0; --k) {
        Value index = rest;
        if (k > 0) {
          Value n = arith::ConstantIndexOp::create(b, loc, *tripCount(nest[k]));
          index = arith::RemUIOp::create(b, loc, rest, n);
          rest = arith::DivUIOp::create(b, loc, rest, n);
        }
        Value lb = arith::ConstantIndexOp::create(b, loc, *getConstantIntValue(nest[k].getLowerBound()));
        Value step = arith::ConstantIndexOp::create(b, loc, *getConstantIntValue(nest[k].getStep()));
        map.map(nest[k].getInductionVar(),
                arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, index, step)).getResult());
      }
      for (size_t k = 0; k < nest.size(); ++k)
        for (Operation &op : nest[k].getBody()->without_terminator())
          if (k + 1 == nest.size() || &op != nest[k + 1].getOperation()) b.clone(op, map);
      b.setInsertionPointAfter(linear);
    } else if (loop) {
      // for iv = lb + lo * step to min(ub, lb + hi * step) step step
      for (Value operand : root->getOperands()) cloneInto(b, operand, map);
      auto inner = cast<scf::ForOp>(b.clone(*root, map));
      Value lb = map.lookup(loop.getLowerBound()), step = map.lookup(loop.getStep());
      Value first = arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, lo, step));
      Value past = arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, hi, step));
      Value last = arith::MinSIOp::create(b, loc, past, map.lookup(loop.getUpperBound()));
      inner.setLowerBound(first);
      inner.setUpperBound(last);
      inner->removeAttr(kParallelLoopAttr);
      inner->moveBefore(entry, entry->end());
    } else {
      // The op on slices [lo, hi) of dimension `dim`.
      Operation *whole = b.clone(*root, map);
      auto linalgOp = cast<linalg::LinalgOp>(whole);
      SmallVector<OpFoldResult> offsets, sizes;
      for (auto [d, range] : llvm::enumerate(linalgOp.getStaticLoopRanges())) {
        offsets.push_back(d == *dim ? OpFoldResult(lo) : b.getIndexAttr(0));
        sizes.push_back(d == *dim ? OpFoldResult(arith::SubIOp::create(b, loc, hi, lo).getResult())
                                  : b.getIndexAttr(range));
      }
      FailureOr<TilingResult> tiled = cast<TilingInterface>(whole).getTiledImplementation(b, offsets, sizes);
      whole->erase();
      if (failed(tiled)) {
        body.erase();
        return failure();
      }
    }
    func::ReturnOp::create(b, loc);

    // The call over every iteration replaces the op. Temporaries that only
    // the op used are dead now; canonicalization erases them.
    b.setInsertionPoint(root);
    SmallVector<Value> operands = {arith::ConstantIndexOp::create(b, loc, 0),
                                   arith::ConstantIndexOp::create(b, loc, *iterations)};
    operands.append(args.begin(), args.end());
    func::CallOp::create(b, loc, body, operands);
    root->erase();
    return success();
  }
};

} // namespace

} // namespace nxc
