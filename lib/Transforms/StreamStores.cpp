//===- StreamStores.cpp - large outputs written past the cache ------------===//
//
// A loop nest that writes a large output with ordinary stores first reads
// every written cache line from memory (to own it), then writes it back:
// twice the memory traffic of the data itself, and the output evicts the
// inputs from the cache on the way. Non-temporal (streaming) stores write
// whole lines without reading them.
//
// x86's vector streaming stores need addresses aligned to the vector, and
// LLVM's loop vectorizer does not vectorize a loop of scalar non-temporal
// stores. So this pass vectorizes the loop nests it streams itself: an
// element-wise linalg.generic whose output is a large function argument
// that nothing else in the function touches becomes
//
//   scf.if (the output starts a cache line)
//     loops over the output, the innermost one vector by vector:
//       vector.load (or scalar load + broadcast) of each input,
//       the body on vectors,
//       vector.store {nontemporal, alignment}
//   else
//     the generic, unchanged
//
// with the first version taken only when the function's buffers also exceed
// 3/4 of the running CPU's largest cache (asked once per call,
// `nxc_x86_cache_bytes`). The function ends with an sfence: streaming stores
// are weakly ordered, and another thread (the caller of a parallel body)
// must see them once the function returns. The pass is for x86-64, where the
// pipeline runs it.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "Views.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace nxc {

#define GEN_PASS_DEF_STREAMSTORESPASS
#include "nxc/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

/// Whether every use of `v` is a view whose uses are the same, down to
/// `writer`'s output operand: nothing else reads or writes the buffer.
bool onlyWrittenBy(Value v, linalg::GenericOp writer) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (user == writer.getOperation()) {
      if (!writer.isDpsInit(&use)) return false;
      continue;
    }
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    if (!view || view.getViewSource() != v) return false;
    for (Value r : user->getResults())
      if (!onlyWrittenBy(r, writer)) return false;
  }
  return true;
}

bool isVectorElementType(Type t) {
  if (t.isF32() || t.isF64() || t.isInteger(1)) return true;
  auto i = dyn_cast<IntegerType>(t);
  return i && (i.getWidth() == 32 || i.getWidth() == 64);
}

/// Body ops that mean the same on vectors, lane by lane, and lower to vector
/// instructions without a library call. Integer division is left out: a
/// lane the scalar code guards could trap in a vector division.
bool vectorizes(Operation &op) {
  if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp, arith::CeilDivSIOp, arith::CeilDivUIOp,
          arith::FloorDivSIOp>(op))
    return false;
  bool known = isa<arith::ArithDialect>(op.getDialect()) || isa<math::SqrtOp, math::AbsFOp, math::FmaOp,
                                                                  math::CopySignOp>(op);
  if (!known || op.getNumRegions() != 0 || !isMemoryEffectFree(&op)) return false;
  for (Type t : op.getOperandTypes())
    if (!isVectorElementType(t)) return false;
  for (Type t : op.getResultTypes())
    if (!isVectorElementType(t)) return false;
  return true;
}

/// How an input is read in the vector loop.
enum class InputAccess { Vector, Broadcast };

struct StreamPlan {
  int64_t lanes = 0;
  SmallVector<InputAccess> inputs;
};

/// Whether `g` can stream its output, and how.
std::optional<StreamPlan> planStream(linalg::GenericOp g, int64_t minBytes, int64_t vectorBytes, int64_t lineBytes) {
  if (!g.hasPureBufferSemantics() || g.getNumDpsInits() != 1 || g.getNumReductionLoops() != 0 || g.hasIndexSemantics())
    return std::nullopt;
  OpOperand *init = g.getDpsInitOperand(0);
  auto outTy = dyn_cast<MemRefType>(init->get().getType());
  if (!outTy || outTy.getRank() == 0 || outTy.isDynamicDim(outTy.getRank() - 1) ||
      !g.getMatchingIndexingMap(init).isIdentity())
    return std::nullopt;
  Type elem = outTy.getElementType();
  if (!isVectorElementType(elem) || elem.isInteger(1)) return std::nullopt;
  int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
  int64_t lanes = vectorBytes / elemBytes;
  int64_t rank = outTy.getRank();
  if (outTy.getShape().back() * elemBytes % lineBytes != 0) return std::nullopt;
  // Every row must start at the same misalignment as the first.
  auto [strides, offset] = outTy.getStridesAndOffset();
  (void)offset;
  if (strides.back() != 1) return std::nullopt;
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (outTy.getDimSize(d) != 1 && (ShapedType::isDynamic(strides[d]) || strides[d] * elemBytes % lineBytes != 0))
      return std::nullopt;

  // The output: a large argument of the function, written by this op alone,
  // and not read by it.
  auto root = dyn_cast<BlockArgument>(viewRoot(init->get()));
  if (!root || !isa<func::FuncOp>(root.getOwner()->getParentOp())) return std::nullopt;
  auto rootTy = dyn_cast<MemRefType>(root.getType());
  if (!rootTy || !rootTy.hasStaticShape() || rootTy.getNumElements() * elemBytes < minBytes) return std::nullopt;
  if (!onlyWrittenBy(root, g) || !g.getMatchingBlockArgument(init).use_empty()) return std::nullopt;

  Block *body = g.getBody();
  for (Operation &op : body->without_terminator())
    if (!vectorizes(op)) return std::nullopt;

  // Inputs: contiguous along the innermost loop, or independent of it.
  StreamPlan plan;
  plan.lanes = lanes;
  unsigned innermost = rank - 1;
  for (OpOperand *in : g.getDpsInputOperands()) {
    if (!isVectorElementType(getElementTypeOrSelf(in->get().getType()))) return std::nullopt;
    auto ty = dyn_cast<MemRefType>(in->get().getType());
    if (!ty) {
      plan.inputs.push_back(InputAccess::Broadcast);
      continue;
    }
    AffineMap map = g.getMatchingIndexingMap(in);
    bool usesInnermost = false;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      if (auto c = dyn_cast<AffineConstantExpr>(e)) {
        if (c.getValue() != 0) return std::nullopt;
        continue;
      }
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d) return std::nullopt;
      if (d.getPosition() == innermost) {
        if (i + 1 != map.getNumResults()) return std::nullopt;
        usesInnermost = true;
      }
    }
    if (usesInnermost) {
      auto [inStrides, inOffset] = ty.getStridesAndOffset();
      (void)inOffset;
      if (inStrides.back() != 1) return std::nullopt;
    }
    plan.inputs.push_back(usesInnermost ? InputAccess::Vector : InputAccess::Broadcast);
  }
  return plan;
}

/// `g`'s body on the `plan.lanes` elements from `ivs` along the innermost
/// loop: the vector to store there.
Value emitVectorBody(OpBuilder &b, Location loc, linalg::GenericOp g, const StreamPlan &plan, ValueRange ivs) {
  auto vectorOf = [&](Type t) { return VectorType::get({plan.lanes}, t); };
  auto splat = [&](Value v) -> Value { return vector::BroadcastOp::create(b, loc, vectorOf(v.getType()), v); };
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  IRMapping map;
  Block *body = g.getBody();
  for (Operation &op : body->without_terminator())
    for (Value v : op.getOperands())
      if (v.getParentBlock() != body && !map.contains(v)) map.map(v, splat(v));
  for (auto [in, access] : llvm::zip_equal(g.getDpsInputOperands(), plan.inputs)) {
    Value v = in->get();
    BlockArgument arg = g.getMatchingBlockArgument(in);
    if (!isa<MemRefType>(v.getType())) {
      map.map(arg, splat(v));
      continue;
    }
    SmallVector<Value> idx;
    for (AffineExpr e : g.getMatchingIndexingMap(in).getResults())
      idx.push_back(isa<AffineDimExpr>(e) ? ivs[cast<AffineDimExpr>(e).getPosition()] : zero);
    if (access == InputAccess::Vector)
      map.map(arg, vector::LoadOp::create(b, loc, vectorOf(arg.getType()), v, idx));
    else
      map.map(arg, splat(memref::LoadOp::create(b, loc, v, idx)));
  }
  for (Operation &op : body->without_terminator()) {
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      auto attr = DenseElementsAttr::get(vectorOf(c.getType()), cast<TypedAttr>(c.getValue()));
      map.map(c.getResult(), arith::ConstantOp::create(b, loc, attr).getResult());
      continue;
    }
    Operation *copy = b.clone(op, map);
    for (Value r : copy->getResults()) r.setType(vectorOf(r.getType()));
  }
  return map.lookup(cast<linalg::YieldOp>(body->getTerminator()).getOperand(0));
}

/// Replaces `g` by two versions, chosen when it runs: when `worthwhile`
/// (the function's buffers exceed the cache) and the output starts a cache
/// line, so does every row (planStream checked the strides and the row
/// length), and a loop nest on vectors writes whole lines with streaming
/// stores; otherwise `g` runs unchanged. (Measured on layer norm's 16 MB
/// output: rows written partly by ordinary stores, up to the first line and
/// after the last, lost most of the streaming stores' gain at one thread and
/// were slower at two.)
void streamOutput(linalg::GenericOp g, const StreamPlan &plan, Value worthwhile, int64_t vectorBytes,
                  int64_t lineBytes) {
  OpBuilder b(g);
  Location loc = g.getLoc();
  Value out = g.getDpsInitOperand(0)->get();
  auto outTy = cast<MemRefType>(out.getType());
  int64_t rank = outTy.getRank(), elemBytes = outTy.getElementTypeBitWidth() / 8;
  auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };

  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, out);
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, out);
  Value addr = arith::AddIOp::create(b, loc, base, arith::MulIOp::create(b, loc, meta.getOffset(), index(elemBytes)));
  Value aligned = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        arith::AndIOp::create(b, loc, addr, index(lineBytes - 1)), index(0));
  auto choice = scf::IfOp::create(b, loc, arith::AndIOp::create(b, loc, worthwhile, aligned), /*withElseRegion=*/true);
  OpBuilder elseB = choice.getElseBodyBuilder();
  elseB.clone(*g.getOperation());

  OpBuilder nb = choice.getThenBodyBuilder();
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t d = 0; d < rank; ++d) {
    lbs.push_back(arith::ConstantIndexOp::create(nb, loc, 0));
    ubs.push_back(outTy.isDynamicDim(d) ? memref::DimOp::create(nb, loc, out, d).getResult()
                                        : arith::ConstantIndexOp::create(nb, loc, outTy.getDimSize(d)).getResult());
    steps.push_back(arith::ConstantIndexOp::create(nb, loc, d + 1 == rank ? plan.lanes : 1));
  }
  scf::buildLoopNest(nb, loc, lbs, ubs, steps, [&](OpBuilder &lb, Location l, ValueRange ivs) {
    Value v = emitVectorBody(lb, l, g, plan, ivs);
    vector::StoreOp::create(lb, l, v, out, ivs, /*nontemporal=*/true, llvm::MaybeAlign(vectorBytes));
  });
  g.erase();
}

/// The bytes of the buffers `f` is given (its inputs, outputs and workspace).
int64_t footprint(func::FuncOp f) {
  int64_t bytes = 0;
  for (Type t : f.getArgumentTypes())
    if (auto m = dyn_cast<MemRefType>(t); m && m.hasStaticShape())
      bytes += m.getNumElements() * std::max<int64_t>(1, m.getElementTypeBitWidth() / 8);
  return bytes;
}

struct StreamStoresPass : impl::StreamStoresPassBase<StreamStoresPass> {
  using StreamStoresPassBase::StreamStoresPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (vectorBytes <= 0 || (vectorBytes & (vectorBytes - 1)) != 0 || lineBytes < vectorBytes ||
        (lineBytes & (lineBytes - 1)) != 0) {
      module.emitError("nxc-stream-stores: vector-bytes and line-bytes must be powers of two, the line no narrower");
      return signalPassFailure();
    }
    func::FuncOp query;
    for (auto f : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (f.isExternal()) continue;
      SmallVector<std::pair<linalg::GenericOp, StreamPlan>> found;
      f.walk([&](linalg::GenericOp g) {
        if (auto plan = planStream(g, minBytes, vectorBytes, lineBytes)) found.push_back({g, *plan});
      });
      if (found.empty()) continue;
      Location loc = f.getLoc();
      if (!query) {
        OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
        query = func::FuncOp::create(mb, loc, kCacheBytesQuery, mb.getFunctionType({}, {mb.getI64Type()}));
        query.setPrivate();
      }
      // Streaming pays when the function's buffers do not fit in 3/4 of the
      // largest cache (the share glibc's memcpy also streams above): smaller
      // ones stay cached from one call to the next, or for the consumer of
      // the output, and ordinary stores to cached lines are faster (layer
      // norm's 8 MB output with its 8 MB input, at two threads: 1.4x the
      // time with streaming stores).
      OpBuilder b = OpBuilder::atBlockBegin(&f.getBody().front());
      Value cache = func::CallOp::create(b, loc, query, ValueRange{}).getResult(0);
      auto i64 = [&](int64_t v) -> Value { return arith::ConstantIntOp::create(b, loc, v, 64); };
      Value worthwhile = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i64(footprint(f) * 4),
                                               arith::MulIOp::create(b, loc, cache, i64(3)));
      for (auto &[g, plan] : found) streamOutput(g, plan, worthwhile, vectorBytes, lineBytes);
      // LLVM's seq_cst fence is a locked instruction on x86; sfence is the
      // fence the architecture documents for streaming stores.
      f.walk([&](func::ReturnOp ret) {
        OpBuilder rb(ret);
        LLVM::CallIntrinsicOp::create(rb, ret.getLoc(), rb.getStringAttr("llvm.x86.sse.sfence"), ValueRange{});
      });
    }
  }
};

} // namespace
} // namespace nxc
