//===- BlockContractions.cpp - dots in register-sized blocks ---------------===//
//
// A dot with wide output rows runs its loops i, k, j (NxToLinalg's "ikj"
// order): for each output row i and contracted index k, row k of the rhs,
// scaled by lhs[i, k], is added into output row i. Every step loads and
// stores the whole output row, so the loop is bound by stores, and every
// output row streams the whole rhs through the cache.
//
// This pass tiles such a contraction into blocks of R output rows by C output
// columns and runs each block k, i, j. With R and C constant, the i and j
// loops unroll, the block's R * C accumulators stay in vector registers
// across the k loop (LLVM promotes their loads and stores out of it), and
// each rhs row is read once per block of rows instead of once per row.
//
// When the rhs panel a block reads (k x C) is larger than half the L1 cache
// and there are several blocks of rows, k is cut into chunks whose panel
// fits, and the tile loops run columns, chunks, rows: each chunk of the
// panel is read from L2 once and then by every block of rows from L1 (the
// MLP's [30,784] x [784,128]: 4 chunks of 196; 7% less time at 1 and at 2
// threads). Of several contracted loops (a convolution on the padded grid:
// channels, ky, kx), the first is cut, the others whole in each chunk.
//
// When many blocks of rows (16 or more) read each chunk of the panel, the
// chunk is first copied to a contiguous buffer, once, and the blocks read
// the copy: in place its rows are a whole rhs row apart, and rows 4 KiB
// apart (a 1024-column f32 rhs) all fall into the same L1 set, so the chunk
// did not stay in L1 however small (W8, [1024,1024]^2 on Zen 5: 28 ms to
// 9.6 ms, 223 GFLOP/s).
//
// R is the largest divisor of the rows up to 6, and C the widest multiple of
// 16 columns (8 for f64) that divides the columns with at most 12 vectors of
// accumulators in the block (6 x 16 f32 are 12 AVX2 registers; one row takes
// 64 columns, 8 independent chains), or 24 AVX-512 vectors of its 32
// registers (6 x 64 f32), so that no block has a remainder. Columns that no
// such C divides are split first into a multiple of 4 vector steps (64 f32),
// one of a step (16), and fewer than a step, left to LLVM; rows that no
// divisor from 4 to 6 divides, into a multiple of 6 and the rest. Each part
// is blocked on its own. Contractions with one output row are left alone.
//
// A dot with few output columns runs i, j, k (the contraction innermost over
// contiguous rows of both operands): each output is a dot product, a vector
// of partial sums reduced at the end. It is tiled into blocks of R rows by C
// columns, C the largest divisor of the columns up to 4 and R the largest
// divisor of the rows with R * C <= 8 (AVX-512: up to 5 and 20), also run
// k, i, j: LLVM keeps the R * C partial sums in vector registers and each
// step loads R + C vectors for R * C multiply-adds, instead of two loads for
// each (W3, [10000,784] x [784,10]: blocks of 4 x 2, 6 loads for 8
// multiply-adds; AVX-512: 4 x 5, 9 loads for 20).
//
//===----------------------------------------------------------------------===//
#include "nxc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace nxc {

#define GEN_PASS_DEF_BLOCKCONTRACTIONSPASS
#include "nxc/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

/// The most output rows in one block.
constexpr int64_t kMaxBlockRows = 6;

/// Lanes of the vectors the blocks are sized for (AVX2: 8 f32 or 4 f64;
/// AVX-512: 16 or 8).
int64_t vectorLanes(Type t, int64_t vectorBits) { return vectorBits / t.getIntOrFloatBitWidth(); }

/// The most accumulator vectors in one block: 12 leave AVX2's 16 registers
/// room for the rhs row and the broadcast lhs value.
constexpr int64_t kMaxAccumulators = 12;

/// AVX-512 has 32 registers: room for twice as many accumulators.
constexpr int64_t kMaxWideAccumulators = 24;

/// The bytes of rhs panel (contraction chunk x block columns) that stay in
/// the L1 data cache while every block of rows reads them (half of a 32 KiB
/// L1: the lhs rows and the block's stores use the rest).
constexpr int64_t kL1PanelBytes = 16384;

/// Contraction innermost: the most output columns, and accumulator vectors,
/// in one block: 8 of AVX2's 16 registers, or 20 of AVX-512's 32 (rows +
/// columns more hold the loaded vectors). On AVX-512, W3's [10000,784] x
/// [784,10] in blocks of 4 x 5 instead of 4 x 2 reads each lhs row twice
/// instead of five times, and loads 9 vectors per 20 multiply-adds instead
/// of 6 per 8: 1.68 ms -> 1.09-1.20 ms on Zen 5 (blocks of 2 x 10 took
/// 1.43 ms: 12 loads per 20).
constexpr int64_t kMaxDotColumns = 4;
constexpr int64_t kMaxDotAccumulators = 8;
constexpr int64_t kMaxWideDotColumns = 5;
constexpr int64_t kMaxWideDotAccumulators = 20;

/// Whether the body is a multiply-accumulate: only extensions, one mulf, one
/// addf and the yield.
bool isMultiplyAccumulate(linalg::GenericOp g) {
  int muls = 0, adds = 0;
  for (Operation &op : g.getBody()->without_terminator()) {
    if (isa<arith::MulFOp>(op)) ++muls;
    else if (isa<arith::AddFOp>(op)) ++adds;
    else if (!isa<arith::ExtFOp>(op)) return false;
  }
  return muls == 1 && adds == 1;
}

/// The loop positions of an "ikj" contraction: [outer parallel..., i,
/// reductions..., parallel..., j], with i the last parallel loop before the
/// reductions and j the last loop. Returns false for any other shape.
bool ikjLoops(linalg::GenericOp g, unsigned &i, unsigned &firstReduction, unsigned &lastReduction, unsigned &j) {
  auto iters = g.getIteratorTypesArray();
  unsigned n = iters.size();
  int first = -1, last = -1;
  for (unsigned d = 0; d < n; ++d)
    if (iters[d] == utils::IteratorType::reduction) {
      if (first < 0) first = d;
      else if (last != (int)d - 1) return false; // reductions must be contiguous
      last = d;
    }
  if (first < 1 || last < 0 || (unsigned)last + 1 >= n) return false;
  i = first - 1;
  firstReduction = first;
  lastReduction = last;
  j = n - 1;
  return true;
}

/// The loop positions of an "ijk" contraction (NxToLinalg's order for few
/// output columns): [outer parallel..., i, j, reductions...].
bool ijkLoops(linalg::GenericOp g, unsigned &i, unsigned &firstReduction, unsigned &lastReduction, unsigned &j) {
  auto iters = g.getIteratorTypesArray();
  unsigned n = iters.size(), first = n;
  for (unsigned d = 0; d < n; ++d)
    if (iters[d] == utils::IteratorType::reduction) {
      first = d;
      break;
    }
  if (first < 2 || first == n) return false;
  for (unsigned d = first; d < n; ++d)
    if (iters[d] != utils::IteratorType::reduction) return false;
  i = first - 2;
  j = first - 1;
  firstReduction = first;
  lastReduction = n - 1;
  return true;
}

/// An element-wise consumer that reads `v` (its only user) with the identity
/// map and writes a fresh tensor of the same type writes into `v` instead.
/// Bufferization used to find that reuse itself, but not through the loops
/// of a tiled dot: without this the hidden layer of an MLP would need a second
/// workspace buffer.
void reuseAsInit(RewriterBase &rw, Value v) {
  if (!v.hasOneUse()) return;
  auto user = dyn_cast<linalg::GenericOp>(*v.getUsers().begin());
  if (!user || user.getNumDpsInits() != 1 || user.getNumReductionLoops() != 0) return;
  OpOperand *init = user.getDpsInitOperand(0);
  if (init->get().getType() != v.getType() || !init->get().getDefiningOp<tensor::EmptyOp>()) return;
  if (!user.getMatchingIndexingMap(init).isIdentity() || user.payloadUsesValueFromOperand(init)) return;
  for (OpOperand *in : user.getDpsInputOperands())
    if (in->get() == v && user.getMatchingIndexingMap(in).isIdentity()) {
      rw.modifyOpInPlace(user, [&] { init->set(v); });
      return;
    }
}

/// The fewest blocks of rows that read one rhs panel for it to be packed
/// (copying a panel costs about what reading it from L2 once more does).
constexpr int64_t kMinPackedRowBlocks = 16;

/// The L1 data cache the panels are sized for: 64 sets of 64-byte lines
/// (32 KiB 8-way on Zen 3 and Skylake, 48 KiB 12-way on Zen 5 and Ice
/// Lake), of which a panel may fill half of the smallest associativity.
constexpr int64_t kL1Sets = 64;
constexpr int64_t kL1LineBytes = 64;
constexpr int64_t kL1PanelWays = 4;

/// Whether a panel of `rows` rows of `rowBytes` bytes each, `strideBytes`
/// apart, stays in L1 in place: no L1 set holds more than kL1PanelWays of
/// its lines. Rows 4 KiB apart (a 1024-column f32 rhs) all fall into the
/// same sets and do not (nor, at up to 6 lines in a set, rows 4,000 bytes
/// apart); W9's windows, rows of 3,136 f32 (12,544 bytes,
/// 196 lines: 4 sets further each row), do, and copying them cost 5% of
/// the convolution.
bool panelStaysInL1(int64_t rows, int64_t rowBytes, int64_t strideBytes) {
  SmallVector<int64_t> linesPerSet(kL1Sets, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t first = r * strideBytes / kL1LineBytes, last = (r * strideBytes + rowBytes - 1) / kL1LineBytes;
    for (int64_t line = first; line <= last; ++line)
      if (++linesPerSet[line % kL1Sets] > kL1PanelWays) return false;
  }
  return true;
}

/// A block's rhs panel (chunk x columns of the rhs, rows a full rhs row
/// apart) copied once, in the chunk loop, to a contiguous buffer that every
/// block of rows then reads, unless it stays in L1 in place
/// (panelStaysInL1).
void packRhsPanel(RewriterBase &rw, linalg::GenericOp block, unsigned rowDim, LoopLikeOpInterface rowLoop) {
  for (OpOperand *in : block.getDpsInputOperands()) {
    AffineMap map = block.getMatchingIndexingMap(in);
    if (map.isFunctionOfDim(rowDim)) continue; // the lhs
    auto slice = in->get().getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || !rowLoop->isProperAncestor(slice)) return;
    // The panel must not depend on the row loop.
    for (Value v : slice->getOperands())
      if (rowLoop->isAncestor(v.getParentRegion()->getParentOp())) return;
    auto type = cast<RankedTensorType>(slice.getType());
    if (!type.hasStaticShape()) return;
    // A panel of rows of a contiguous rhs (leading unit dimensions aside):
    // its rows are a whole rhs row apart (of the rhs the slices were cut
    // from, as a split's part).
    Value whole = slice.getSource();
    while (auto outer = whole.getDefiningOp<tensor::ExtractSliceOp>()) whole = outer.getSource();
    auto source = cast<RankedTensorType>(whole.getType());
    int64_t elemBytes = type.getElementTypeBitWidth() / 8, rank = type.getRank();
    bool rowsOfRhs = rank >= 2 && source.hasStaticShape() && source.getRank() >= 2 &&
                     llvm::all_of(type.getShape().drop_back(2), [](int64_t size) { return size == 1; });
    if (rowsOfRhs && panelStaysInL1(type.getDimSize(rank - 2), type.getDimSize(rank - 1) * elemBytes,
                                    source.getShape().back() * elemBytes))
      return;
    rw.setInsertionPoint(rowLoop);
    Location loc = slice.getLoc();
    auto panel = tensor::ExtractSliceOp::create(rw, loc, type, slice.getSource(), slice.getMixedOffsets(),
                                                slice.getMixedSizes(), slice.getMixedStrides());
    Value empty = tensor::EmptyOp::create(rw, loc, type.getShape(), type.getElementType());
    Value packed = linalg::CopyOp::create(rw, loc, panel.getResult(), empty).getResult(0);
    rw.modifyOpInPlace(block, [&] { in->set(packed); });
    return;
  }
}

/// An "ikj" dot whose output columns (rows) no block size divides well,
/// split along them into dots that each have one: columns into a multiple
/// of 4 steps (64 f32 columns, the widest block), then of one step (16),
/// then the rest (fewer than a step, left to LLVM); rows, when no divisor from 4 to 6 divides them, into a
/// multiple of 6 and the rest. Each part is then blocked on its own (a
/// [1000,1000] x [1000,1000] product: 960 + 32 + 8 columns, blocks of 5
/// rows; it ran whole in blocks of one column vector before).
void splitForBlocks(RewriterBase &rw, linalg::GenericOp g, int64_t step, SmallVectorImpl<linalg::GenericOp> &out) {
  unsigned i, r0, r1, j;
  SmallVector<int64_t> bounds = g.getStaticLoopRanges();
  if (!ikjLoops(g, i, r0, r1, j) || llvm::any_of(bounds, ShapedType::isDynamic)) {
    out.push_back(g);
    return;
  }
  auto split = [&](unsigned dim, int64_t at) {
    rw.setInsertionPoint(g);
    auto [first, second] = linalg::splitOp(rw, cast<TilingInterface>(g.getOperation()), dim, rw.getIndexAttr(at));
    auto a = dyn_cast_or_null<linalg::GenericOp>(first.getOperation());
    auto b = dyn_cast_or_null<linalg::GenericOp>(second.getOperation());
    if (!a || !b) return false;
    splitForBlocks(rw, a, step, out);
    splitForBlocks(rw, b, step, out);
    return true;
  };
  int64_t n = bounds[j], m = bounds[i], widest = 4 * step;
  if (n > widest && n % widest != 0) {
    if (split(j, n - n % widest)) return;
  } else if (n > step && n % step != 0) {
    if (split(j, n - n % step)) return;
  }
  bool goodRows = m % 6 == 0 || m % 5 == 0 || m % 4 == 0 || m <= 6;
  if (!goodRows && split(i, m - m % 6)) return;
  out.push_back(g);
}

struct BlockContractionsPass : impl::BlockContractionsPassBase<BlockContractionsPass> {
  using BlockContractionsPassBase::BlockContractionsPassBase;
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> found;
    getOperation().walk([&](linalg::GenericOp g) {
      if (g.hasPureTensorSemantics() && g.getNumDpsInputs() == 2 && g.getNumDpsInits() == 1 &&
          g.getNumReductionLoops() > 0 && isMultiplyAccumulate(g))
        found.push_back(g);
    });
    IRRewriter rw(&getContext());
    SmallVector<linalg::GenericOp> dots;
    for (linalg::GenericOp g : found) {
      Type elem = cast<ShapedType>(g.getDpsInits()[0].getType()).getElementType();
      int64_t lanes = elem.isIntOrFloat() ? vectorLanes(elem, vectorBits == 512 ? 512 : 256) : 0;
      if (lanes == 0 || (!elem.isF32() && !elem.isF64())) {
        dots.push_back(g);
        continue;
      }
      splitForBlocks(rw, g, vectorBits == 512 ? lanes : 2 * lanes, dots);
    }
    for (linalg::GenericOp g : dots) {
      unsigned i, r0, r1, j;
      bool ikj = ikjLoops(g, i, r0, r1, j);
      if (!ikj && !ijkLoops(g, i, r0, r1, j)) continue;
      SmallVector<int64_t> bounds = g.getStaticLoopRanges();
      if (llvm::any_of(bounds, ShapedType::isDynamic)) continue;
      Type elem = cast<ShapedType>(g.getDpsInits()[0].getType()).getElementType();
      if (!elem.isF32() && !elem.isF64()) continue;
      // A single output row (a vector-matrix product) already streams the rhs
      // once, row by row, which beats reading it in column blocks.
      if (bounds[i] == 1) continue;
      int64_t rows = 1, cols = 1;
      if (ikj) {
        // At least 16 f32 (8 f64) columns per block: two AVX2 vectors, one
        // AVX-512 vector.
        bool wide = vectorBits == 512;
        int64_t lanes = vectorLanes(elem, wide ? 512 : 256), step = wide ? lanes : 2 * lanes;
        cols = step;
        if (bounds[j] % cols != 0) continue;
        for (int64_t r = kMaxBlockRows; r > 1; --r)
          if (bounds[i] % r == 0) { rows = r; break; }
        // Fewer rows take more columns, so that enough independent
        // accumulators hide the latency of the multiply-adds (one row of 16
        // would wait on two dependent chains).
        for (int64_t c = cols + step;
             rows * (c / lanes) <= (wide ? kMaxWideAccumulators : kMaxAccumulators) && c <= bounds[j]; c += step)
          if (bounds[j] % c == 0) cols = c;
      } else {
        // Contraction innermost: each output is a dot product along k, a
        // vector of partial sums. A block of rows x columns of them loads
        // rows + columns vectors for rows * columns multiply-adds, instead
        // of two loads for each.
        bool wide = vectorBits == 512;
        for (int64_t c = wide ? kMaxWideDotColumns : kMaxDotColumns; c > 1; --c)
          if (bounds[j] % c == 0) { cols = c; break; }
        for (int64_t r = (wide ? kMaxWideDotAccumulators : kMaxDotAccumulators) / cols; r > 1; --r)
          if (bounds[i] % r == 0) { rows = r; break; }
        if (rows * cols < 4) continue;
      }
      // The rhs panel one block reads (k x cols), and the part of it that
      // stays in the L1 cache while the blocks of the other rows read it
      // too: with a panel larger than that and several blocks of rows, the
      // contraction is cut into chunks (the largest divisor of k whose panel
      // fits), and the tile loops run columns, chunks, rows.
      // Of several contracted loops (a convolution's channels and taps),
      // the first is cut and the others stay whole in each chunk.
      int64_t chunk = 0;
      int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8, inner = 1;
      for (unsigned d = r0 + 1; d <= r1; ++d) inner *= bounds[d];
      int64_t rowBytes = inner * cols * elemBytes;
      if (ikj && bounds[i] / rows > 1 && bounds[r0] * rowBytes > kL1PanelBytes)
        for (int64_t c = kL1PanelBytes / rowBytes; c > 1 && !chunk; --c)
          if (bounds[r0] % c == 0) chunk = c;
      // Tile every parallel loop: the outer ones and the column loops by one,
      // except i by `rows` and j by `cols`; the reductions stay whole, or in
      // chunks.
      SmallVector<int64_t> tileSizes;
      SmallVector<OpFoldResult> sizes;
      for (unsigned d = 0; d < bounds.size(); ++d) {
        tileSizes.push_back(d == i ? rows : d == j ? cols : (d >= r0 && d <= r1) ? (d == r0 ? chunk : 0) : 1);
        sizes.push_back(rw.getIndexAttr(tileSizes.back()));
      }
      // The tile loops in order of the dimensions, or, with chunks, the
      // other dimensions, then columns, chunks, rows.
      SmallVector<int64_t> tileOrder;
      for (unsigned d = 0; d < bounds.size(); ++d)
        if (!chunk || (d != i && d != r0 && d != j)) tileOrder.push_back(d);
      if (chunk) tileOrder.append({j, r0, i});
      scf::SCFTilingOptions tiling;
      tiling.setTileSizes(sizes);
      tiling.setInterchange(tileOrder);
      rw.setInsertionPoint(g);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(rw, cast<TilingInterface>(g.getOperation()), tiling);
      if (failed(tiled)) continue; // left as it is
      // The tile loops, in tileOrder, of the dimensions with a tile size:
      // those over parallel dimensions may run on several threads (none is
      // marked if the loops are not the ones expected).
      {
        auto iters = g.getIteratorTypesArray();
        SmallVector<int64_t> tiledDims;
        for (int64_t d : tileOrder)
          if (tileSizes[d] != 0) tiledDims.push_back(d);
        if (tiled->loops.size() == tiledDims.size())
          for (auto [loop, d] : llvm::zip_equal(tiled->loops, tiledDims))
            if (iters[d] == utils::IteratorType::parallel) loop->setAttr(kParallelLoopAttr, rw.getUnitAttr());
      }
      rw.replaceOp(g, tiled->replacements);
      reuseAsInit(rw, tiled->replacements[0]);
      if (chunk && bounds[i] / rows >= kMinPackedRowBlocks && tiled->loops.size() >= 3)
        packRhsPanel(rw, cast<linalg::GenericOp>(tiled->tiledOps.back()), i, tiled->loops.back());
      // The block runs its reductions outermost: [outer..., reductions..., i,
      // the parallel loops after the reductions..., j] (ikj), or [outer...,
      // reductions..., i, j] (ijk).
      auto block = dyn_cast<linalg::GenericOp>(tiled->tiledOps.back());
      if (!block) continue;
      SmallVector<unsigned> order;
      for (unsigned d = 0; d < i; ++d) order.push_back(d);
      for (unsigned d = r0; d <= r1; ++d) order.push_back(d);
      order.push_back(i);
      if (ikj)
        for (unsigned d = r1 + 1; d < bounds.size(); ++d) order.push_back(d);
      else
        order.push_back(j);
      rw.setInsertionPoint(block);
      (void)linalg::interchangeGenericOp(rw, block, order);
    }
  }
};

} // namespace

} // namespace nxc
