//===- EmulateGpu.cpp - gpu.launch as sequential CPU loops ----------------===//
//
// Runs the kernels nxc-map-to-gpu makes on the CPU, one block and one thread
// at a time, so that the GPU mapping (the teams, trees, shuffles, row groups
// and split reductions) is tested bit for bit where there is no GPU
// (`nxc aot --device cuda-emulated`).
//
// A launch becomes a loop over its blocks. Inside a block, the body is cut at
// every gpu.barrier and gpu.shuffle into phases, and each phase becomes a loop
// over the block's threads: running phase k for every thread before phase
// k + 1 is what a barrier guarantees. A value one phase computes and a later
// phase uses is kept per thread in a small array; a shuffle writes every
// thread's value to an array, and the next phase reads its partner's.
// Barriers may sit inside loops whose bounds are the same for all threads of a
// block (nxc's round and row loops): such a loop is kept outside the thread
// loops and its body cut the same way. Operations that compute a value from
// block-uniform values only (constants, views, index arithmetic) stay outside
// the thread loops. Shared memory becomes a stack array per block.
//
// The kernels' own ops are unchanged, so what runs here is what the GPU runs,
// one thread after another.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace nxc {

#define GEN_PASS_DEF_EMULATEGPUPASS
#include "nxc/Transforms/Passes.h.inc"

namespace {

bool synchronizes(Operation *op) {
  return op->walk([](Operation *o) {
              return isa<gpu::BarrierOp, gpu::ShuffleOp>(o) ? WalkResult::interrupt() : WalkResult::advance();
            })
      .wasInterrupted();
}

/// A memref type without the GPU's workgroup memory space.
Type onHost(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  if (!m || !isa_and_nonnull<gpu::AddressSpaceAttr>(m.getMemorySpace())) return t;
  return MemRefType::get(m.getShape(), m.getElementType(), m.getLayout());
}

struct LaunchEmulator {
  gpu::LaunchOp launch;
  int64_t bx = 1, by = 1, threads = 1;
  OpBuilder blockStart;            ///< where per-block arrays go (before the block loop)
  IRMapping uniform;               ///< original value -> its value outside thread loops
  DenseSet<Value> threadLocal;     ///< original values computed per thread
  /// Original value -> (the clone in the phase that computed it, that phase's thread index).
  DenseMap<Value, std::pair<Value, Value>> defined;
  DenseMap<Value, Value> spills;   ///< original value -> memref<threads x T>
  Value zero;

  LaunchEmulator(gpu::LaunchOp l) : launch(l), blockStart(l.getContext()) {}

  bool isUniform(Value v) { return !threadLocal.contains(v); }

  /// The array that keeps `v` per thread, stored where `v` is computed.
  Value spillOf(Value v) {
    if (auto it = spills.find(v); it != spills.end()) return it->second;
    auto [clone, tid] = defined.lookup(v);
    Location l = v.getLoc();
    Value spill = memref::AllocaOp::create(blockStart, l, MemRefType::get({threads}, clone.getType()));
    OpBuilder b(clone.getContext());
    b.setInsertionPointAfterValue(clone);
    memref::StoreOp::create(b, l, clone, spill, ValueRange{tid});
    spills[v] = spill;
    return spill;
  }

  /// Emits `ops` (from the launch body or a uniform loop's body) at `b`.
  LogicalResult emitPhases(OpBuilder &b, ArrayRef<Operation *> ops) {
    SmallVector<Operation *> run;
    auto flush = [&]() -> LogicalResult {
      if (run.empty()) return success();
      LogicalResult r = emitThreadLoop(b, run);
      run.clear();
      return r;
    };
    for (Operation *op : ops) {
      if (isa<gpu::TerminatorOp, scf::YieldOp>(op)) continue;
      bool pureUniform = op->getNumRegions() == 0 && isMemoryEffectFree(op) && !isa<gpu::ShuffleOp>(op) &&
                         llvm::all_of(op->getOperands(), [&](Value v) { return isUniform(v); });
      if (pureUniform) {
        Operation *clone = b.clone(*op, uniform);
        for (Value r : clone->getResults()) r.setType(onHost(r.getType()));
        continue;
      }
      if (!synchronizes(op)) {
        run.push_back(op);
        for (Value r : op->getResults()) threadLocal.insert(r);
        continue;
      }
      if (failed(flush())) return failure();
      if (isa<gpu::BarrierOp>(op)) continue; // the phase boundary is the barrier
      if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
        if (failed(emitShuffle(b, shuffle))) return failure();
        continue;
      }
      auto loop = dyn_cast<scf::ForOp>(op);
      if (!loop || loop.getNumRegionIterArgs() != 0 ||
          !llvm::all_of(loop->getOperands(), [&](Value v) { return isUniform(v); })) {
        return op->emitError("cannot emulate a barrier under control flow that differs between threads");
      }
      auto newLoop = scf::ForOp::create(b, loop.getLoc(), uniform.lookupOrDefault(loop.getLowerBound()),
                                        uniform.lookupOrDefault(loop.getUpperBound()),
                                        uniform.lookupOrDefault(loop.getStep()));
      uniform.map(loop.getInductionVar(), newLoop.getInductionVar());
      OpBuilder inner = OpBuilder::atBlockTerminator(newLoop.getBody());
      SmallVector<Operation *> body;
      for (Operation &o : loop.getBody()->getOperations()) body.push_back(&o);
      if (failed(emitPhases(inner, body))) return mlir::failure();
    }
    return flush();
  }

  /// The thread index and (x, y) of a thread loop's body.
  std::tuple<Value, Value, Value> threadIds(OpBuilder &b, Location l, Value t) {
    Value x = arith::RemUIOp::create(b, l, t, arith::ConstantIndexOp::create(b, l, bx));
    Value y = arith::DivUIOp::create(b, l, t, arith::ConstantIndexOp::create(b, l, bx));
    return {t, x, y};
  }

  /// for t in threads: the ops of `run`, each thread in turn.
  LogicalResult emitThreadLoop(OpBuilder &b, ArrayRef<Operation *> run) {
    Location l = run.front()->getLoc();
    auto loop = scf::ForOp::create(b, l, zero, arith::ConstantIndexOp::create(b, l, threads),
                                   arith::ConstantIndexOp::create(b, l, 1));
    OpBuilder tb = OpBuilder::atBlockTerminator(loop.getBody());
    auto [t, x, y] = threadIds(tb, l, loop.getInductionVar());
    IRMapping map = uniform;
    map.map(launch.getThreadIds().x, x);
    map.map(launch.getThreadIds().y, y);
    map.map(launch.getThreadIds().z, zero);
    for (Operation *op : run) {
      // Values earlier phases computed per thread come from their arrays.
      WalkResult w = op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (threadLocal.contains(v) && !map.contains(v)) {
            if (!defined.count(v)) return WalkResult::interrupt();
            map.map(v, memref::LoadOp::create(tb, l, spillOf(v), ValueRange{t}).getResult());
          }
        return WalkResult::advance();
      });
      if (w.wasInterrupted()) return op->emitError("cannot emulate: a value used before it is computed");
      Operation *clone = tb.clone(*op, map);
      clone->walk([](Operation *o) {
        for (Value r : o->getResults()) r.setType(onHost(r.getType()));
      });
      for (auto [orig, c] : llvm::zip(op->getResults(), clone->getResults())) {
        threadLocal.insert(orig);
        defined[orig] = {c, t};
      }
    }
    return success();
  }

  /// Every thread's value goes to an array; then each thread reads the value
  /// of its partner in the warp (`t xor offset`; warps are 32 consecutive
  /// threads).
  LogicalResult emitShuffle(OpBuilder &b, gpu::ShuffleOp shuffle) {
    if (shuffle.getMode() != gpu::ShuffleMode::XOR)
      return shuffle.emitError("cannot emulate a shuffle other than xor");
    Location l = shuffle.getLoc();
    Value v = shuffle.getValue();
    Value offset = uniform.lookupOrDefault(shuffle.getOffset());
    Value source;
    if (isUniform(v)) {
      source = nullptr;
    } else {
      if (!defined.count(v)) return shuffle.emitError("cannot emulate: a value used before it is computed");
      source = spillOf(v);
    }
    Type type = v.getType();
    Value result = memref::AllocaOp::create(blockStart, l, MemRefType::get({threads}, type));
    auto loop = scf::ForOp::create(b, l, zero, arith::ConstantIndexOp::create(b, l, threads),
                                   arith::ConstantIndexOp::create(b, l, 1));
    OpBuilder tb = OpBuilder::atBlockTerminator(loop.getBody());
    Value t = loop.getInductionVar();
    Value partner = arith::XOrIOp::create(tb, l, t, arith::IndexCastOp::create(tb, l, tb.getIndexType(), offset));
    Value value = source ? memref::LoadOp::create(tb, l, source, ValueRange{partner}).getResult()
                         : uniform.lookupOrDefault(v);
    memref::StoreOp::create(tb, l, value, result, ValueRange{t});
    // Results: the partner's value, and "valid" (every partner exists: 32-wide warps, full blocks).
    threadLocal.insert(shuffle.getShuffleResult());
    spills[shuffle.getShuffleResult()] = result;
    defined[shuffle.getShuffleResult()] = {value, t};
    Value valid = arith::ConstantIntOp::create(blockStart, l, 1, 1);
    uniform.map(shuffle.getValid(), valid);
    return success();
  }

  LogicalResult run() {
    auto constant = [](Value v) -> std::optional<int64_t> {
      if (auto c = v.getDefiningOp<arith::ConstantIndexOp>()) return c.value();
      return std::nullopt;
    };
    auto gx = constant(launch.getGridSizeX()), gy = constant(launch.getGridSizeY()),
         gz = constant(launch.getGridSizeZ());
    auto x = constant(launch.getBlockSizeX()), y = constant(launch.getBlockSizeY()),
         z = constant(launch.getBlockSizeZ());
    if (!gx || !gy || !gz || !x || !y || !z || *gy != 1 || *gz != 1 || *z != 1)
      return launch.emitError("cannot emulate a launch whose sizes are not constants of a 1-D grid");
    bx = *x;
    by = *y;
    threads = bx * by;
    OpBuilder b(launch);
    Location l = launch.getLoc();
    zero = arith::ConstantIndexOp::create(b, l, 0);
    // Per-block arrays are allocated once, before the blocks run one by one
    // (every block writes what it reads, as on the GPU).
    auto blocks = scf::ForOp::create(b, l, zero, launch.getGridSizeX(), arith::ConstantIndexOp::create(b, l, 1));
    blockStart = OpBuilder(blocks);
    OpBuilder body = OpBuilder::atBlockTerminator(blocks.getBody());
    uniform.map(launch.getBlockIds().x, blocks.getInductionVar());
    uniform.map(launch.getBlockIds().y, zero);
    uniform.map(launch.getBlockIds().z, zero);
    uniform.map(launch.getGridSize().x, launch.getGridSizeX());
    uniform.map(launch.getGridSize().y, launch.getGridSizeY());
    uniform.map(launch.getGridSize().z, launch.getGridSizeZ());
    uniform.map(launch.getBlockSize().x, launch.getBlockSizeX());
    uniform.map(launch.getBlockSize().y, launch.getBlockSizeY());
    uniform.map(launch.getBlockSize().z, launch.getBlockSizeZ());
    for (Value w : launch.getWorkgroupAttributions())
      uniform.map(w, memref::AllocaOp::create(blockStart, l, cast<MemRefType>(onHost(w.getType()))));
    for (Value t : {launch.getThreadIds().x, launch.getThreadIds().y, launch.getThreadIds().z})
      threadLocal.insert(t);
    SmallVector<Operation *> ops;
    for (Operation &op : launch.getBody().front()) ops.push_back(&op);
    if (failed(emitPhases(body, ops))) return failure();
    launch.erase();
    return success();
  }
};

struct EmulateGpuPass : impl::EmulateGpuPassBase<EmulateGpuPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation()->walk([&](gpu::LaunchOp l) { launches.push_back(l); });
    for (gpu::LaunchOp l : launches) {
      LaunchEmulator e(l);
      if (failed(e.run())) return signalPassFailure();
    }
  }
};

} // namespace

} // namespace nxc
