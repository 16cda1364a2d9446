//===- AllocsToWorkspace.cpp - temporaries in a caller-owned workspace ----===//
//
// After bufferization, every remaining memref.alloc of a public function is a
// temporary. This pass gives each function one extra trailing argument, a
// `memref<SIZExi8>` workspace that the caller owns, and turns every alloc into
// a memref.view at a fixed offset in it, so compiled code never allocates.
// Buffers whose lifetimes do not overlap share bytes: lifetimes are intervals
// over the function's top-level ops (uses through view-like ops included),
// and offsets are assigned first-fit. Every buffer is 64-byte aligned.
// The size is recorded as the `nxc.workspace_size` attribute.
//
// A parallel body (nxc-outline-parallel-loops) gets a workspace argument of
// its own when it has temporaries, and each call of it passes the first
// slice of a caller temporary that holds one such workspace per thread.
//
// Precondition: bufferized, results already turned into out-parameters,
// structured ops not yet lowered to loops (allocs sit in the entry block).
//
//===----------------------------------------------------------------------===//
#include "nxc/Target/ABI.h"
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace nxc {

#define GEN_PASS_DEF_ALLOCSTOWORKSPACEPASS
#include "nxc/Transforms/Passes.h.inc"

namespace {

constexpr int64_t kAlignment = abi::kBufferAlignment;

int64_t alignUp(int64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

struct Buffer {
  memref::AllocOp alloc;
  int64_t bytes = 0;
  unsigned first = 0, last = 0; ///< top-level op indices of the lifetime
  int64_t offset = 0;
};

/// The index of the entry-block op that contains `op`.
unsigned topLevelIndex(Operation *op, Block &entry, const DenseMap<Operation *, unsigned> &index) {
  while (op->getBlock() != &entry) op = op->getParentOp();
  return index.lookup(op);
}

Operation *fnOp(Operation *op) {
  while (op && !isa<func::FuncOp>(op)) op = op->getParentOp();
  return op;
}

/// The last top-level op that uses `v`, directly or through views of it.
unsigned lastUse(Value v, Block &entry, const DenseMap<Operation *, unsigned> &index) {
  unsigned last = 0;
  SmallVector<Value> work = {v};
  llvm::SmallPtrSet<void *, 8> seen;
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    for (Operation *user : cur.getUsers()) {
      last = std::max(last, topLevelIndex(user, entry, index));
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == cur)
          for (Value r : user->getResults()) work.push_back(r);
      // A buffer yielded by a region (scf.if/scf.while/scf.for) or passed to
      // a loop lives on in the results of that op.
      Operation *owner = user->hasTrait<OpTrait::IsTerminator>() ? user->getParentOp() : user;
      if (owner != fnOp(owner) && owner->getNumRegions() > 0)
        for (Value r : owner->getResults())
          if (llvm::isa<BaseMemRefType>(r.getType()) && !seen.count(r.getAsOpaquePointer())) {
            seen.insert(r.getAsOpaquePointer());
            work.push_back(r);
          }
    }
  }
  return last;
}

struct AllocsToWorkspacePass : impl::AllocsToWorkspacePassBase<AllocsToWorkspacePass> {
  using AllocsToWorkspacePassBase::AllocsToWorkspacePassBase;
  void runOnOperation() override {
    // Parallel bodies (nxc-outline-parallel-loops) first: each thread runs
    // one with a workspace of its own, cut from the caller's.
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (fn->hasAttr(kParallelBodyAttr) && failed(placeTemporaries(fn, /*always=*/false)))
        return signalPassFailure();
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal() || fn.isPrivate()) continue;
      passWorkspacesToBodies(fn);
      if (failed(placeTemporaries(fn, /*always=*/true))) return signalPassFailure();
    }
  }

  /// Before each call of a parallel body whose temporaries take S bytes, a
  /// temporary of THREADS * S bytes; the call gets its first S bytes, and
  /// the thread pool gives thread t the S bytes at t * S.
  void passWorkspacesToBodies(func::FuncOp fn) {
    fn.walk([&](func::CallOp call) {
      auto callee = getOperation().lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || !callee->hasAttr(kParallelBodyAttr)) return;
      int64_t size = callee->getAttrOfType<IntegerAttr>(kWorkspaceSizeAttr).getInt();
      int64_t threads = callee->getAttrOfType<IntegerAttr>(kParallelBodyAttr).getInt();
      if (size == 0) return;
      OpBuilder b(call);
      Location l = call.getLoc();
      auto all = memref::AllocOp::create(b, l, MemRefType::get({threads * size}, b.getI8Type()));
      Value zero = arith::ConstantIndexOp::create(b, l, 0);
      Value first = memref::ViewOp::create(b, l, MemRefType::get({size}, b.getI8Type()), all, zero, ValueRange{});
      call.getOperandsMutable().append(first);
    });
  }

  /// Places fn's temporaries in a new trailing workspace argument (only if
  /// there are any, unless `always`).
  LogicalResult placeTemporaries(func::FuncOp fn, bool always) {
    Block &entry = fn.getBody().front();
    DenseMap<Operation *, unsigned> index;
    unsigned i = 0;
    for (Operation &op : entry) index[&op] = i++;

    std::vector<Buffer> buffers;
    WalkResult walk = fn.walk([&](memref::AllocOp alloc) {
      MemRefType t = alloc.getType();
      if (!t.hasStaticShape() || !t.getLayout().isIdentity() || !t.getElementType().isIntOrFloat())
        return alloc.emitOpError("nxc needs static shapes for temporaries"), WalkResult::interrupt();
      Buffer b;
      b.alloc = alloc;
      b.bytes = alignUp(std::max<int64_t>(1, t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8)));
      b.first = topLevelIndex(alloc, entry, index);
      b.last = std::max(b.first, lastUse(alloc.getResult(), entry, index));
      buffers.push_back(b);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted()) return failure();

    // First-fit: place each buffer (in program order) at the lowest offset
    // that does not overlap a placed buffer whose lifetime intersects its own.
    int64_t total = 0;
    for (size_t k = 0; k < buffers.size(); ++k) {
      Buffer &b = buffers[k];
      std::vector<std::pair<int64_t, int64_t>> busy;
      for (size_t j = 0; j < k; ++j)
        if (!share || (buffers[j].first <= b.last && b.first <= buffers[j].last))
          busy.push_back({buffers[j].offset, buffers[j].offset + buffers[j].bytes});
      std::sort(busy.begin(), busy.end());
      int64_t offset = 0;
      for (auto &[lo, hi] : busy) {
        if (offset + b.bytes <= lo) break;
        offset = std::max(offset, hi);
      }
      b.offset = offset;
      total = std::max(total, offset + b.bytes);
    }

    // Small stack buffers (promoted allocs) inside loops move to the entry
    // block: an alloca in a loop body would grow the stack every iteration.
    SmallVector<memref::AllocaOp> allocas;
    fn.walk([&](memref::AllocaOp a) {
      if (a->getBlock() != &entry && a.getType().hasStaticShape() && a->getNumOperands() == 0) allocas.push_back(a);
    });
    for (memref::AllocaOp a : allocas) a->moveBefore(&entry, entry.begin());

    OpBuilder builder(fn.getContext());
    fn->setAttr(kWorkspaceSizeAttr, builder.getI64IntegerAttr(total));
    if (total == 0 && !always) return success();
    auto wsType = MemRefType::get({total}, builder.getI8Type());
    if (failed(fn.insertArgument(fn.getNumArguments(), wsType, {}, fn.getLoc()))) return failure();
    Value ws = fn.getArgument(fn.getNumArguments() - 1);
    for (Buffer &b : buffers) {
      builder.setInsertionPoint(b.alloc);
      Location l = b.alloc.getLoc();
      Value offset = arith::ConstantIndexOp::create(builder, l, b.offset);
      Value view = memref::ViewOp::create(builder, l, b.alloc.getType(), ws, offset, ValueRange{});
      b.alloc.getResult().replaceAllUsesWith(view);
      b.alloc.erase();
    }
    fn.walk([](memref::DeallocOp d) { d.erase(); });
    return success();
  }
};

} // namespace

} // namespace nxc
