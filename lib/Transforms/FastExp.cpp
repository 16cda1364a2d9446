//===- FastExp.cpp - exp in the normal range, checked ---------------------===//
//
// nxc's f32 exp (nxc-expand-math) is exact over the whole float range: it
// clamps its argument and scales by 2^n in two steps, so that huge, infinite
// and NaN arguments and subnormal results come out right. That costs ten of
// its twenty-two vector instructions. For |x| <= 87 neither is needed: 2^n
// is one normal power of two and no clamp is reached, and the short form
// gives the same bits.
//
// This pass runs an innermost loop that computes exp with the short form
// (the math.exp ops are marked `nxc.assume_normal_range`, which
// nxc-expand-math reads) and checks, beside it, the largest |x| as an
// integer maximum of the arguments' bits shifted left by one (dropping the
// sign; a NaN's bits exceed every number's). If any argument was outside
// [-87, 87] or NaN, the loop runs again as it was, from the same state:
//
//   %old = memref.load %acc[]            (accumulators the loop reads back)
//   %r:2 = scf.for ... iter_args(..., %m = 0) { short exp; %m' = maxui(%m, bits(x) << 1) }
//   %redo = arith.cmpi ugt, %r#1, bits(87.0) << 1
//   scf.if %redo { memref.store %old, %acc[]; the original loop } else { %r#0 }
//
// Running again is correct only if the loop reads nothing it wrote: every
// store must be to a buffer that no load of the loop may overlap, or to one
// location that does not change with the iteration (an accumulator), whose
// value before the loop is kept and put back. Other loops stay as they are.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"
#include "nxc/Conversion/Passes.h"

#include "Views.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"

namespace nxc {

#define GEN_PASS_DEF_FASTEXPPASS
#include "nxc/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

/// Loops with a known trip count below this stay as they are: the check
/// would cost what it saves.
constexpr int64_t kMinTrips = 8;

/// bits(87.0f) << 1: the largest |x| the short form takes, as the loop
/// compares it. round(87 log2 e) = 126, so 2^n is normal up to it.
constexpr uint32_t kLimitBits = 0x42AE0000u << 1;

/// What running an innermost loop again needs: the stores whose location
/// must be put back first (accumulators), or nothing if it cannot run again.
std::optional<SmallVector<memref::StoreOp>> accumulatorsToRestore(scf::ForOp loop) {
  SmallVector<memref::LoadOp> loads;
  SmallVector<memref::StoreOp> stores;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (op.getNumRegions() != 0) return std::nullopt;
    if (auto l = dyn_cast<memref::LoadOp>(op)) loads.push_back(l);
    else if (auto s = dyn_cast<memref::StoreOp>(op)) stores.push_back(s);
    else if (!isMemoryEffectFree(&op)) return std::nullopt;
  }
  auto outside = [&](Value v) { return !loop->isAncestor(v.getParentRegion()->getParentOp()); };
  SmallVector<memref::StoreOp> restore;
  for (memref::StoreOp s : stores) {
    Extent written = extentOf(s.getMemRef());
    bool readBack = llvm::any_of(loads, [&](memref::LoadOp l) { return !disjoint(written, extentOf(l.getMemRef())); });
    if (!readBack) continue;
    if (!outside(s.getMemRef()) || !llvm::all_of(s.getIndices(), outside)) return std::nullopt;
    restore.push_back(s);
  }
  return restore;
}

bool qualifies(scf::ForOp loop) {
  bool hasExp = false;
  for (Operation &op : loop.getBody()->without_terminator())
    if (auto e = dyn_cast<math::ExpOp>(op); e && e.getType().isF32()) hasExp = true;
  if (!hasExp) return false;
  std::optional<APInt> trips = loop.getStaticTripCount();
  return !trips || trips->getSExtValue() >= kMinTrips;
}

void version(scf::ForOp loop, MutableArrayRef<memref::StoreOp> restore) {
  IRRewriter b(loop);
  Location l = loop.getLoc();
  SmallVector<Value> before;
  for (memref::StoreOp s : restore) before.push_back(memref::LoadOp::create(b, l, s.getMemRef(), s.getIndices()));

  Type i32 = b.getI32Type();
  Value zero = arith::ConstantOp::create(b, l, i32, b.getI32IntegerAttr(0));
  auto fast = cast<scf::ForOp>(b.clone(*loop));
  FailureOr<LoopLikeOpInterface> grown = fast.replaceWithAdditionalYields(
      b, zero, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &yb, Location yl, ArrayRef<BlockArgument> carried) -> SmallVector<Value> {
        SmallVector<math::ExpOp> exps;
        for (Operation &op : yb.getInsertionBlock()->without_terminator())
          if (auto e = dyn_cast<math::ExpOp>(op); e && e.getType().isF32()) exps.push_back(e);
        Value largest = carried.front();
        Value one = arith::ConstantOp::create(yb, yl, i32, yb.getI32IntegerAttr(1));
        for (math::ExpOp e : exps) {
          e->setAttr(kAssumeNormalRangeAttr, yb.getUnitAttr());
          Value bits = arith::BitcastOp::create(yb, yl, i32, e.getOperand());
          largest = arith::MaxUIOp::create(yb, yl, largest, arith::ShLIOp::create(yb, yl, bits, one));
        }
        return {largest};
      });
  auto checked = cast<scf::ForOp>(grown->getOperation());

  Value limit = arith::ConstantOp::create(b, l, i32, b.getI32IntegerAttr((int32_t)kLimitBits));
  Value redo = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ugt, checked.getResults().back(), limit);
  auto ifOp = scf::IfOp::create(b, l, loop.getResultTypes(), redo, /*withElseRegion=*/true);
  loop->replaceAllUsesWith(ifOp.getResults());
  // Without results the branches come with their (empty) yields.
  if (loop.getNumResults() == 0) {
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  } else {
    b.setInsertionPointToEnd(ifOp.elseBlock());
    scf::YieldOp::create(b, l, checked.getResults().drop_back());
    b.setInsertionPointToEnd(ifOp.thenBlock());
  }
  for (size_t k = 0; k < restore.size(); ++k)
    memref::StoreOp::create(b, l, before[k], restore[k].getMemRef(), restore[k].getIndices());
  loop->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
  if (loop.getNumResults() != 0) scf::YieldOp::create(b, l, loop.getResults());
}

struct FastExpPass : impl::FastExpPassBase<FastExpPass> {
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, SmallVector<memref::StoreOp>>> found;
    getOperation().walk([&](scf::ForOp loop) {
      if (!qualifies(loop)) return;
      std::optional<SmallVector<memref::StoreOp>> restore = accumulatorsToRestore(loop);
      if (!restore) return;
      // Putting an accumulator back reads it before the loop: only where the
      // loop is known to run.
      if (!restore->empty() && !loop.getStaticTripCount()) return;
      found.push_back({loop, std::move(*restore)});
    });
    for (auto &[loop, restore] : found) version(loop, restore);
  }
};

} // namespace
} // namespace nxc
