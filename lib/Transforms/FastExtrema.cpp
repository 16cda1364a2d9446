//===- FastExtrema.cpp - maxima and minima at one instruction per vector --===//
//
// Nx's reduce_max and reduce_min propagate NaN and order -0.0 below +0.0
// (arith.maximumf / arith.minimumf). Vectorized as they are, that costs five
// instructions per vector on x86 (the hardware max returns its second
// operand for NaN and for equal zeros). This pass runs a float maximum or
// minimum over at least kMinElements elements per result as a fast reduction
// and checks it:
//
//   - the fast reduction takes the hardware's max (maxnumf with no-NaNs and
//     no-signed-zeros: one instruction per vector) and, beside it, the sum of
//     the same elements, one more instruction;
//   - a NaN among the elements makes the sum NaN; a result of zero may have
//     the wrong sign. If any result has either (or the sum is NaN for
//     another reason: infinities of both signs), the exact reduction runs
//     again over the same elements, from the same initial value.
//
// On buffers, before temporaries move to the workspace:
//
//   linalg.fill ins(%init) outs(%acc)
//   linalg.generic ins(%x) outs(%acc) { maximumf }
// becomes
//   linalg.fill ins(%init) outs(%acc)
//   linalg.fill ins(0.0) outs(%sums)
//   linalg.generic ins(%x) outs(%acc, %sums) { maxnumf <nnan,nsz>; addf }
//   linalg.fill ins(false) outs(%flag)
//   linalg.generic ins(%acc, %sums) outs(%flag) { or(isnan(s) ? true : m == 0) }
//   scf.if (load %flag) { linalg.fill ins(%init) outs(%acc); the original generic }
//
// A result computed fast is used only when no element is NaN, where
// maxnumf's no-NaNs promise holds.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"

namespace nxc {

#define GEN_PASS_DEF_FASTEXTREMAPASS
#include "nxc/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

/// Fewer elements per result than this stay exact as they are: the check
/// would cost more than it saves.
constexpr int64_t kMinElements = 64;

struct Candidate {
  linalg::GenericOp reduction;
  linalg::FillOp fill; ///< the accumulator's initial value, just before
  bool isMax;
};

std::optional<Candidate> match(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumReductionLoops() == 0)
    return std::nullopt;
  auto acc = dyn_cast<MemRefType>(g.getDpsInitOperand(0)->get().getType());
  auto input = dyn_cast<MemRefType>(g.getDpsInputOperand(0)->get().getType());
  if (!acc || !input || !acc.hasStaticShape() || !isa<Float32Type, Float64Type>(acc.getElementType()) ||
      input.getElementType() != acc.getElementType())
    return std::nullopt;
  int64_t perResult = 1;
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  for (auto [range, it] : llvm::zip(ranges, g.getIteratorTypesArray())) {
    if (ShapedType::isDynamic(range)) return std::nullopt;
    if (it == utils::IteratorType::reduction) perResult *= range;
  }
  if (perResult < kMinElements) return std::nullopt;
  // The body: one maximumf or minimumf of the element and the accumulator.
  Block &body = g.getRegion().front();
  if (body.getOperations().size() != 2) return std::nullopt;
  Operation &op = body.front();
  bool isMax = isa<arith::MaximumFOp>(op);
  if (!isMax && !isa<arith::MinimumFOp>(op)) return std::nullopt;
  Value in = g.getMatchingBlockArgument(g.getDpsInputOperand(0));
  Value out = g.getMatchingBlockArgument(g.getDpsInitOperand(0));
  if (!((op.getOperand(0) == in && op.getOperand(1) == out) || (op.getOperand(0) == out && op.getOperand(1) == in)))
    return std::nullopt;
  if (cast<linalg::YieldOp>(body.getTerminator()).getOperand(0) != op.getResult(0)) return std::nullopt;
  // The accumulator's initial value: a fill of the same buffer just before.
  auto fill = dyn_cast_or_null<linalg::FillOp>(g->getPrevNode());
  if (!fill || !fill.hasPureBufferSemantics() || fill.getOutputs()[0] != g.getDpsInitOperand(0)->get())
    return std::nullopt;
  return Candidate{g, fill, isMax};
}

/// A temporary of `type` for the whole function, at the start of its body
/// (the pipeline moves small ones to the stack, others to the workspace).
Value functionBuffer(func::FuncOp fn, MemRefType type) {
  OpBuilder b(&fn.getBody().front(), fn.getBody().front().begin());
  return memref::AllocOp::create(b, fn.getLoc(), type, ValueRange{}, b.getI64IntegerAttr(64));
}

void rewrite(Candidate c) {
  linalg::GenericOp g = c.reduction;
  auto fn = g->getParentOfType<func::FuncOp>();
  Location l = g.getLoc();
  MLIRContext *ctx = g.getContext();
  Value acc = g.getDpsInitOperand(0)->get();
  auto accType = cast<MemRefType>(acc.getType());
  Type elem = accType.getElementType();
  auto i1 = IntegerType::get(ctx, 1);
  Value sums = functionBuffer(fn, MemRefType::get(accType.getShape(), elem));
  Value flag = functionBuffer(fn, MemRefType::get({}, i1));

  OpBuilder b(g);
  Value zero = arith::ConstantOp::create(b, l, elem, b.getFloatAttr(elem, 0.0));
  linalg::FillOp::create(b, l, ValueRange{zero}, ValueRange{sums});
  AffineMap inMap = g.getMatchingIndexingMap(g.getDpsInputOperand(0));
  AffineMap accMap = g.getMatchingIndexingMap(g.getDpsInitOperand(0));
  auto noNaNs = arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::nnan | arith::FastMathFlags::nsz);
  auto reassoc = arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::reassoc);
  linalg::GenericOp::create(
      b, l, TypeRange{}, ValueRange{g.getDpsInputOperand(0)->get()}, ValueRange{acc, sums},
      ArrayRef<AffineMap>{inMap, accMap, accMap}, g.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value m = c.isMax ? (Value)arith::MaxNumFOp::create(nb, nl, args[1], args[0], noNaNs)
                          : (Value)arith::MinNumFOp::create(nb, nl, args[1], args[0], noNaNs);
        Value s = arith::AddFOp::create(nb, nl, args[2], args[0], reassoc);
        linalg::YieldOp::create(nb, nl, ValueRange{m, s});
      });

  // flag = any result whose sum is NaN or which is zero.
  Value no = arith::ConstantOp::create(b, l, i1, b.getBoolAttr(false));
  Value yes = arith::ConstantOp::create(b, l, i1, b.getBoolAttr(true));
  linalg::FillOp::create(b, l, ValueRange{no}, ValueRange{flag});
  unsigned rank = accType.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap toScalar = AffineMap::get(rank, 0, {}, ctx);
  SmallVector<utils::IteratorType> all(rank, utils::IteratorType::reduction);
  auto check = [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value m = args[0], s = args[1], seen = args[2];
    Value nan = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNO, s, s);
    Value zeroResult = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, m, zero);
    // A select, not an or: the fast result is poison where an element is NaN.
    Value bad = arith::SelectOp::create(nb, nl, nan, yes, zeroResult);
    linalg::YieldOp::create(nb, nl, ValueRange{arith::OrIOp::create(nb, nl, seen, bad)});
  };
  linalg::GenericOp::create(b, l, TypeRange{}, ValueRange{acc, sums}, ValueRange{flag},
                            ArrayRef<AffineMap>{id, id, toScalar}, all, check);
  Value redo = memref::LoadOp::create(b, l, flag, ValueRange{});
  auto ifOp = scf::IfOp::create(b, l, redo, /*withElseRegion=*/false);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  tb.clone(*c.fill);
  tb.clone(*g);
  g.erase();
}

struct FastExtremaPass : impl::FastExtremaPassBase<FastExtremaPass> {
  void runOnOperation() override {
    SmallVector<Candidate> found;
    getOperation().walk([&](linalg::GenericOp g) {
      if (auto c = match(g)) found.push_back(*c);
    });
    for (Candidate &c : found) rewrite(c);
  }
};

} // namespace
} // namespace nxc
