//===- FuseElementwise.cpp - multi-use element-wise fusion ----------------===//
//
// linalg's own element-wise fusion only fuses a producer into its consumer
// when the producer has a single use. In Nx programs the same element-wise
// value commonly feeds both a reduction and a final element-wise op (softmax:
// exp(x - max) feeds the sum and the division). Fusing a cheap one into every
// user recomputes a few flops per element but saves writing and re-reading a
// whole tensor, and the scratch buffer it would need; an expensive one
// (transcendental functions, divisions) is stored once instead. Producers with
// more than kMaxUsers users are left alone to bound the recomputation, and no
// fused body grows past kMaxFusedOps ops (compile time stays linear).
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace nxc {

#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "nxc/Transforms/Passes.h.inc"

namespace {

constexpr unsigned kMaxUsers = 4;
constexpr size_t kMaxRecomputedOps = 24;
/// Fusion stops growing a loop body past this many ops: each fusion copies
/// both bodies, so an unbounded chain (a sum of thousands of terms) would
/// take quadratic time, and a body this large gains nothing from more.
constexpr size_t kMaxFusedOps = 256;

/// Ops that cost much more than a load and a store per element.
bool isExpensive(Operation &op) {
  return isa<arith::DivFOp, arith::RemFOp, arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp>(op) ||
         op.getDialect()->getNamespace() == "math";
}

bool hasExpensiveOp(linalg::GenericOp g) {
  return llvm::any_of(g.getRegion().front(), [](Operation &op) { return isExpensive(op); });
}

bool shouldFuse(OpOperand *fused, bool recomputeExpensive) {
  auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
  if (!producer) return false;
  if (auto consumer = llvm::dyn_cast<linalg::GenericOp>(fused->getOwner());
      consumer && producer.getRegion().front().getOperations().size() +
                          consumer.getRegion().front().getOperations().size() >
                      kMaxFusedOps)
    return false;
  // A layout copy made for a contraction (nx -> linalg marks it) stays.
  if (producer->hasAttr("nxc.keep_layout")) return false;
  // Producers that read their own coordinates (gathers, iotas) stay whole:
  // a consumer that reads them through a broadcasting map would get the
  // wrong coordinates.
  if (!producer.getRegion().front().getOps<linalg::IndexOp>().empty()) {
    auto consumer = llvm::dyn_cast<linalg::GenericOp>(fused->getOwner());
    if (!consumer || !consumer.getMatchingIndexingMap(fused).isPermutation()) return false;
  }
  // A consumer that reads the producer through a map that is not a
  // permutation runs the producer's body once per iteration of its extra
  // loops (a contraction reads sigmoid(x) once per output column): only cheap
  // bodies are recomputed that way, transcendentals and divisions are stored.
  // A contraction stays a plain multiply-accumulate whatever its operands
  // are: it then runs as register blocks (nxc-block-contractions), and a
  // body with more in it ran as scalar loops (BERT's GELU, 0.5 * f * (1 +
  // erf(...)), fused into the [128,3072] x [3072,768] product took 6x the
  // whole layer's time).
  if (auto consumer = llvm::dyn_cast<linalg::GenericOp>(fused->getOwner());
      consumer && !consumer.getMatchingIndexingMap(fused).isPermutation()) {
    if (hasExpensiveOp(producer) || consumer.getNumReductionLoops() != 0) return false;
  }
  if (producer->hasOneUse()) return true;
  // A fill (a scalar broadcast to a shape, yielded from outside the body)
  // costs nothing to copy into every user, however many there are: storing
  // it would make each user read a buffer of one repeated value.
  if (producer.getNumDpsInputs() == 0 && linalg::isaFillOpInterface(producer))
    return llvm::all_of(producer->getUsers(), [](Operation *u) { return isa<linalg::GenericOp>(u); });
  if (producer.getNumReductionLoops() != 0) return false;
  // An expensive body (a transcendental function, a division) is computed
  // once and stored rather than recomputed in every user: softmax's
  // exp(x - max) feeds both the sum and the division, and writing and
  // re-reading it costs less than a second exp per element.
  if (!recomputeExpensive && hasExpensiveOp(producer)) return false;
  // Recomputing a large body in every user multiplies work: only small
  // bodies are copied, and only from producers whose same-shape inputs are
  // not element-wise loops themselves (chains of multi-use values, as in a
  // hash or a recurrence, would otherwise be copied exponentially often). A
  // smaller input read through a broadcast (layer norm's per-row mean) is
  // not such a chain.
  if (producer.getRegion().front().getOperations().size() > kMaxRecomputedOps) return false;
  for (OpOperand *in : producer.getDpsInputOperands())
    if (auto g = in->get().getDefiningOp<linalg::GenericOp>();
        g && g.getNumReductionLoops() == 0 && producer.getMatchingIndexingMap(in).isPermutation())
      return false;
  unsigned users = 0;
  for (Operation *user : producer->getUsers()) {
    if (!isa<linalg::GenericOp>(user)) return false;
    ++users;
  }
  return users <= kMaxUsers;
}

struct FuseElementwisePass : impl::FuseElementwisePassBase<FuseElementwisePass> {
  using FuseElementwisePassBase::FuseElementwisePassBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    bool recompute = recomputeExpensive;
    linalg::populateElementwiseOpsFusionPatterns(patterns,
                                                 [recompute](OpOperand *o) { return shouldFuse(o, recompute); });
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.setMaxIterations(32);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config))) signalPassFailure();
  }
};

} // namespace

} // namespace nxc
