//===- FuseIntoReductions.cpp - stored values computed in their reduction -===//
//
// nxc-fuse-elementwise stores an expensive element-wise value that has
// several users (softmax's exp(x - max), read by the sum and by the
// division) instead of recomputing it. Written as it is, the value costs
// two passes over the data: one computes and stores it, the next reads it
// back for the reduction. This pass computes it inside the reduction that
// reads it, which also writes it out: one linalg.generic with two results,
// the value and the reduction, over the reduction's loops. The other users
// read the stored value as before; without other users, the value is not
// stored at all.
//
//   %e = generic {parallel} ins(%x, %m) { exp(x - m) }
//   %s = generic {parallel, reduction} ins(expand_shape(%e)) outs(%zero) { s + e }
// becomes
//   %g:2 = generic {parallel, reduction} ins(%x, %m) outs(%e_init, %zero)
//            { v = exp(x - m); yield v, s + v }
//   %e = %g#0, %s = %g#1
//
// where the fused op reads %x expanded as the reduction read %e, and writes
// %e at the linear index of the reduction's loops (d0 * 4000 + d1 for
// blocks of 4000).
//
// The reduction must read the value element by element (the identity map,
// possibly through an expand_shape: blocked sums), and every input of the
// producer must be read element by element too or be a scalar.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace nxc {

#define GEN_PASS_DEF_FUSEINTOREDUCTIONSPASS
#include "nxc/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

/// A reduction `reduction` that reads, element by element, the result of the
/// element-wise `producer`, directly or through `expand`.
struct Candidate {
  linalg::GenericOp producer, reduction;
  tensor::ExpandShapeOp expand;
  bool otherReaders = false; ///< the value, or `expand`, has users besides `reduction`
};

bool usesIndices(linalg::GenericOp g) { return !g.getBody()->getOps<linalg::IndexOp>().empty(); }

std::optional<Candidate> match(linalg::GenericOp r) {
  if (!r.hasPureTensorSemantics() || r.getNumReductionLoops() == 0 || r.getNumDpsInputs() != 1 ||
      r.getNumDpsInits() != 1 || usesIndices(r))
    return std::nullopt;
  OpOperand *in = r.getDpsInputOperand(0);
  if (!r.getMatchingIndexingMap(in).isIdentity()) return std::nullopt;
  Candidate c{nullptr, r, in->get().getDefiningOp<tensor::ExpandShapeOp>()};
  Value read = c.expand ? c.expand.getSrc() : in->get();
  c.producer = read.getDefiningOp<linalg::GenericOp>();
  linalg::GenericOp p = c.producer;
  if (!p || !p.hasPureTensorSemantics() || p.getNumReductionLoops() != 0 || p->getNumResults() != 1 ||
      usesIndices(p) || p->getBlock() != r->getBlock())
    return std::nullopt;
  OpOperand *pInit = p.getDpsInitOperand(0);
  if (!p.getMatchingIndexingMap(pInit).isIdentity() || p.payloadUsesValueFromOperand(pInit)) return std::nullopt;
  // The producer's inputs: read element by element (same shape as its
  // result), or scalars.
  auto resultTy = cast<RankedTensorType>(p->getResult(0).getType());
  for (OpOperand *pin : p.getDpsInputOperands()) {
    AffineMap m = p.getMatchingIndexingMap(pin);
    auto ty = dyn_cast<RankedTensorType>(pin->get().getType());
    if (!ty) return std::nullopt;
    bool elementwise = m.isIdentity() && ty.getShape() == resultTy.getShape();
    bool scalar = ty.getRank() == 0 && m.getNumResults() == 0;
    if (!elementwise && !scalar) return std::nullopt;
  }
  // Every other user of the value comes after the reduction, where the
  // fused op will be; so do the other readers of the expanded value (the
  // blocked max beside a blocked sum of the same value).
  SmallVector<Operation *> others;
  for (Operation *user : p->getUsers())
    if (user != r.getOperation() && user != c.expand.getOperation()) others.push_back(user);
  if (c.expand)
    for (Operation *user : c.expand->getUsers())
      if (user != r.getOperation()) others.push_back(user);
  for (Operation *user : others)
    if (user->getBlock() != r->getBlock() || !r->isBeforeInBlock(user)) return std::nullopt;
  c.otherReaders = !others.empty();
  return c;
}

/// The map from the reduction's loops to the producer's result: the
/// identity, or through `expand` the linear index of each group of expanded
/// dimensions (blocks [250, 4000] of a [1000000] vector: d0 * 4000 + d1).
AffineMap readMap(Candidate c, unsigned loops, MLIRContext *ctx) {
  if (!c.expand) return AffineMap::getMultiDimIdentityMap(loops, ctx);
  ArrayRef<int64_t> expanded = c.expand.getResultType().getShape();
  SmallVector<AffineExpr> results;
  for (const ReassociationIndices &group : c.expand.getReassociationIndices()) {
    AffineExpr e = getAffineConstantExpr(0, ctx);
    for (int64_t d : group) e = e * expanded[d] + getAffineDimExpr(d, ctx);
    results.push_back(e);
  }
  return AffineMap::get(loops, 0, results, ctx);
}

void fuse(RewriterBase &rw, Candidate c) {
  linalg::GenericOp p = c.producer, r = c.reduction;
  Location loc = r.getLoc();
  rw.setInsertionPoint(r);
  unsigned loops = r.getNumLoops();
  MLIRContext *ctx = rw.getContext();
  AffineMap read = readMap(c, loops, ctx);

  // The producer's inputs, expanded as the reduction reads the value (the
  // loops need a plain map to take their bounds from), and its result, into
  // the producer's own init and indexed through `read` (so that
  // bufferization keeps softmax's exp in the result buffer, divided in
  // place).
  auto readTy = cast<RankedTensorType>(r.getDpsInputOperand(0)->get().getType());
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *pin : p.getDpsInputOperands()) {
    Value v = pin->get();
    auto ty = cast<RankedTensorType>(v.getType());
    if (ty.getRank() == 0) {
      inputs.push_back(v);
      maps.push_back(AffineMap::get(loops, 0, {}, ctx));
      continue;
    }
    if (c.expand)
      v = tensor::ExpandShapeOp::create(rw, loc, RankedTensorType::get(readTy.getShape(), ty.getElementType()), v,
                                        c.expand.getReassociationIndices());
    inputs.push_back(v);
    maps.push_back(AffineMap::getMultiDimIdentityMap(loops, ctx));
  }
  // The value is written out only if something besides the reduction reads
  // it (logsumexp's exp is only summed), or if no input has the loops'
  // shape: then the value is the only operand that gives the loops their
  // bounds (the sum of a broadcast scalar).
  bool store = c.otherReaders ||
               llvm::all_of(inputs, [](Value v) { return cast<RankedTensorType>(v.getType()).getRank() == 0; });
  Value stored = p.getDpsInitOperand(0)->get();
  Value init = r.getDpsInitOperand(0)->get();
  SmallVector<Value> inits;
  if (store) {
    inits.push_back(stored);
    maps.push_back(read);
  }
  inits.push_back(init);
  maps.push_back(r.getMatchingIndexingMap(r.getDpsInitOperand(0)));

  auto fused = linalg::GenericOp::create(
      rw, loc, ValueRange(inits).getTypes(), inputs, inits, maps, r.getIteratorTypesArray(),
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping map;
        Block *pb = p.getBody();
        for (auto [pin, arg] : llvm::zip(p.getDpsInputOperands(), args))
          map.map(p.getMatchingBlockArgument(pin), arg);
        for (Operation &op : pb->without_terminator()) b.clone(op, map);
        Value value = map.lookupOrDefault(cast<linalg::YieldOp>(pb->getTerminator()).getOperand(0));
        Block *rb = r.getBody();
        map.map(r.getMatchingBlockArgument(r.getDpsInputOperand(0)), value);
        map.map(r.getMatchingBlockArgument(r.getDpsInitOperand(0)), args.back());
        for (Operation &op : rb->without_terminator()) b.clone(op, map);
        Value reduced = map.lookupOrDefault(cast<linalg::YieldOp>(rb->getTerminator()).getOperand(0));
        if (store) linalg::YieldOp::create(b, l, ValueRange{value, reduced});
        else linalg::YieldOp::create(b, l, ValueRange{reduced});
      });

  rw.replaceOp(r, fused->getResults().back());
  if (c.expand) {
    // Other readers of the expanded value read the fused op's result,
    // expanded again after it (only when `store`: they are other readers).
    if (!c.expand->use_empty()) {
      rw.setInsertionPointAfter(fused);
      Value again = tensor::ExpandShapeOp::create(rw, loc, c.expand.getResultType(), fused.getResult(0),
                                                  c.expand.getReassociationIndices());
      rw.replaceAllUsesWith(c.expand.getResult(), again);
    }
    rw.eraseOp(c.expand);
  }
  if (store) rw.replaceOp(p, fused.getResult(0));
  else rw.eraseOp(p);
}

struct FuseIntoReductionsPass : impl::FuseIntoReductionsPassBase<FuseIntoReductionsPass> {
  void runOnOperation() override {
    SmallVector<Candidate> found;
    getOperation().walk([&](linalg::GenericOp g) {
      if (auto c = match(g)) found.push_back(*c);
    });
    IRRewriter rw(&getContext());
    // A producer is fused into its first reduction only.
    llvm::SmallPtrSet<Operation *, 8> done;
    for (Candidate &c : found)
      if (done.insert(c.producer).second) fuse(rw, c);
  }
};

} // namespace
} // namespace nxc
