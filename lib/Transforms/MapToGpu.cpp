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
#include "MapToGpuSupport.h"
#include "nxc/Transforms/Passes.h"

using namespace mlir;

namespace nxc {

#define GEN_PASS_DEF_MAPTOGPUPASS
#include "nxc/Transforms/Passes.h.inc"

namespace {

using namespace gpumap;

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
    auto size = fn->getAttrOfType<IntegerAttr>(kWorkspaceSizeAttr);
    int64_t old = size ? size.getInt() : 0;
    int64_t base = (old + workspaceGrowth + 63) / 64 * 64;
    int64_t bytes = rows * cols * ((t.getIntOrFloatBitWidth() + 7) / 8);
    workspaceGrowth = base + bytes - old;
    return memref::ViewOp::create(b, l, MemRefType::get({rows, cols}, t), fn.getArguments().back(),
                                  cIndex(b, l, base), ValueRange{});
  }

  /// Gives the function a workspace that also holds the partials.
  void growWorkspace(func::FuncOp fn) {
    auto size = fn->getAttrOfType<IntegerAttr>(kWorkspaceSizeAttr);
    int64_t newSize = (size ? size.getInt() : 0) + workspaceGrowth;
    fn.getArguments().back().setType(MemRefType::get({newSize}, IntegerType::get(fn.getContext(), 8)));
    SmallVector<Type> inputs;
    for (BlockArgument a : fn.getArguments()) inputs.push_back(a.getType());
    fn.setType(FunctionType::get(fn.getContext(), inputs, fn.getResultTypes()));
    fn->setAttr(kWorkspaceSizeAttr, IntegerAttr::get(IntegerType::get(fn.getContext(), 64), newSize));
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
      Value first =
          arith::AddIOp::create(kb, l, arith::MulIOp::create(kb, l, launch.getBlockIds().x, cIndex(kb, l, kThreads)),
                                launch.getThreadIds().x);
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
