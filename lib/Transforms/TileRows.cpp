//===- TileRows.cpp - row-wise passes one row at a time -------------------===//
//
// Layer norm reads its input three times: for the per-row means, for the
// per-row variances, and for the output. Each pass is a loop nest over the
// whole tensor, so a tensor larger than the cache is streamed from memory
// three times. This pass finds the element-wise loop nest at the end of such
// a chain (all-parallel, reading a per-row value that a reduction computed),
// tiles its outermost loop by one and fuses its producers into that loop
// (tileConsumerAndFuseProducersUsingSCF): every pass then reads a row that is
// already in cache.
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace nxc {

#define GEN_PASS_DEF_TILEROWSPASS
#include "nxc/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

/// Rows shorter than this gain nothing from running one at a time.
constexpr int64_t kMinRowElements = 256;

/// A reduction over every loop but the first, whose result has the rows'
/// extent: a per-row value.
bool isRowReduction(linalg::GenericOp g) {
  auto iters = g.getIteratorTypesArray();
  if (iters.size() < 2 || iters[0] != utils::IteratorType::parallel) return false;
  for (size_t i = 1; i < iters.size(); ++i)
    if (iters[i] != utils::IteratorType::reduction) return false;
  return g.hasPureTensorSemantics();
}

/// Whether `v` comes from a row reduction through element-wise loop nests
/// and reshapes (layer norm's rsqrt(var + eps) of its per-row variance,
/// kept as a column by keep_axes).
bool fromRowReduction(Value v, int depth = 0) {
  if (depth > 8) return false;
  if (auto e = v.getDefiningOp<tensor::ExpandShapeOp>()) return fromRowReduction(e.getSrc(), depth + 1);
  if (auto c = v.getDefiningOp<tensor::CollapseShapeOp>()) return fromRowReduction(c.getSrc(), depth + 1);
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || depth > 8) return false;
  if (isRowReduction(g)) return true;
  if (g.getNumReductionLoops() != 0) return false;
  for (Value in : g.getDpsInputs())
    if (fromRowReduction(in, depth + 1)) return true;
  return false;
}

/// The element-wise nest at the end of a row-wise chain.
bool isRowConsumer(linalg::GenericOp g) {
  if (!g.hasPureTensorSemantics() || g.getNumLoops() < 2 || g.getNumReductionLoops() != 0) return false;
  SmallVector<int64_t> bounds = g.getStaticLoopRanges();
  if (bounds[0] <= 1 || ShapedType::isDynamic(bounds[0])) return false;
  int64_t row = 1;
  for (size_t i = 1; i < bounds.size(); ++i) row *= bounds[i];
  if (row < kMinRowElements) return false;
  // Every map must keep the first loop as the first result (a row of the
  // output is computed from rows of the inputs), or not use it at all.
  for (AffineMap m : g.getIndexingMapsArray())
    if (m.getNumResults() > 0 && m.isFunctionOfDim(0) && m.getResult(0) != getAffineDimExpr(0, g.getContext()))
      return false;
  for (OpOperand *in : g.getDpsInputOperands())
    if (fromRowReduction(in->get())) return true;
  return false;
}

struct TileRowsPass : impl::TileRowsPassBase<TileRowsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> consumers;
    getOperation().walk([&](linalg::GenericOp g) {
      if (isRowConsumer(g)) consumers.push_back(g);
    });
    IRRewriter rw(&getContext());
    scf::SCFTileAndFuseOptions options;
    // Fuse linalg producers only: fills, element-wise nests and the row
    // reductions; whatever else feeds the rows is read as it is.
    options.setFusionControlFn([](tensor::ExtractSliceOp, OpResult producer,
                                  bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
      if (!isa<linalg::GenericOp, linalg::FillOp>(producer.getOwner())) return std::nullopt;
      if (auto p = dyn_cast<linalg::GenericOp>(producer.getOwner());
          p && p.getNumReductionLoops() != 0 && !isRowReduction(p))
        return std::nullopt;
      return scf::SCFTileAndFuseOptions::ControlFnResult{};
    });
    // Slices of a reshaped value become reshapes of a slice, so that the
    // reshape's producer can be fused too; a slice of an empty tensor is a
    // small empty tensor (per-row temporaries, not slices of whole-tensor
    // buffers).
    RewritePatternSet cleanup(&getContext());
    tensor::populateBubbleUpExtractSliceOpPatterns(cleanup);
    tensor::populateFoldTensorEmptyPatterns(cleanup);
    options.cleanupPatterns = FrozenRewritePatternSet(std::move(cleanup));
    for (linalg::GenericOp g : consumers) {
      SmallVector<OpFoldResult> sizes(g.getNumLoops(), rw.getIndexAttr(0));
      sizes[0] = rw.getIndexAttr(1); // one row per iteration
      scf::SCFTilingOptions tiling;
      tiling.setTileSizes(sizes);
      options.setTilingOptions(tiling);
      rw.setInsertionPoint(g);
      auto result = scf::tileConsumerAndFuseProducersUsingSCF(rw, cast<TilingInterface>(g.getOperation()), options);
      if (failed(result)) continue; // left as it is
      for (LoopLikeOpInterface loop : result->loops) loop->setAttr(kParallelLoopAttr, rw.getUnitAttr());
      for (OpResult r : g->getResults())
        if (Value replacement = result->replacements.lookup(r)) rw.replaceAllUsesWith(r, replacement);
    }
    // What the rows replaced (the untiled consumers and producers, the
    // reshapes of their results) is now unused: erase it.
    (void)simplifyRegions(rw, getOperation()->getRegions());
  }
};

} // namespace

} // namespace nxc
