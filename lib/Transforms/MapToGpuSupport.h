//===- MapToGpuSupport.h - the pieces nxc-map-to-gpu builds launches from -*- C++ -*-===//
//
// Iteration spaces of linalg.generic ops, their index arithmetic, the
// combiners of reductions, warp and team reductions, and the emitters of
// element-wise and reduction bodies inside a gpu.launch (MapToGpuSupport.cpp);
// MapToGpu.cpp groups the ops and makes the launches.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TRANSFORMS_MAPTOGPUSUPPORT_H
#define NXC_TRANSFORMS_MAPTOGPUSUPPORT_H


#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"


namespace nxc::gpumap {

using namespace mlir;

constexpr int64_t kThreads = 256;              ///< block size of grid kernels and row groups
constexpr int64_t kMaxBlocks = 1 << 20;        ///< grid-stride loops beyond this
constexpr int64_t kSmallGroupThreads = 1024;
constexpr int64_t kSmallGroupWork = 1 << 17;   ///< loop iterations of a small group's ops together
constexpr int64_t kSplitThreshold = 1 << 16;   ///< reduction size that splits across blocks
constexpr int64_t kSplitPerThread = 8;
constexpr int64_t kMaxSplitBlocks = 512;
constexpr int64_t kFewRows = 128;              ///< fewer rows than about the GPU's multiprocessors
constexpr int64_t kWorkPerRow = 1 << 14;

inline Value cIndex(OpBuilder &b, Location l, int64_t v) { return arith::ConstantIndexOp::create(b, l, v); }

int64_t product(ArrayRef<int64_t> xs);

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t pow2Ceil(int64_t v) {
  return std::max<int64_t>(1, (int64_t)llvm::PowerOf2Ceil(std::max<int64_t>(v, 1)));
}

/// Row-major indices of `linear` over `ranges`.
SmallVector<Value> delinearize(OpBuilder &b, Location l, Value linear, ArrayRef<int64_t> ranges);

/// The iteration space of a generic: its parallel and reduction loops, the
/// row loop (loop 0) set apart when the op runs in a row group.
struct Space {
  SmallVector<int64_t> ranges;
  SmallVector<unsigned> par, red;
  SmallVector<int64_t> parRanges, redRanges;
  int64_t pn = 1, rn = 1;
  bool rowFixed = false;
  Value row; ///< with rowFixed: loop 0's index
};

std::optional<Space> spaceOf(linalg::GenericOp g, bool fixRow = false);

/// All loop indices from the parallel point `p` and the reduction point `r`.
SmallVector<Value> loopIndices(OpBuilder &b, Location l, const Space &s, Value p, Value r);

SmallVector<Value> indicesOf(OpBuilder &b, Location l, AffineMap map, ArrayRef<Value> ivs);

/// The payload of `g` at loop indices `ivs`: inputs are loaded, outputs are
/// `outs[i]` where given and loaded otherwise. Returns the yielded values.
SmallVector<Value> emitPayload(OpBuilder &b, Location l, linalg::GenericOp g, ArrayRef<Value> ivs,
                               ArrayRef<Value> outs = {});

void storeOutputs(OpBuilder &b, Location l, linalg::GenericOp g, ArrayRef<Value> ivs, ArrayRef<Value> values);

/// A reduction `out = combine(out, x)`: the combining op and its identity.
struct Combiner {
  Operation *op = nullptr;
  TypedAttr identity;
};

std::optional<Combiner> combinerOf(linalg::GenericOp g);

Value combine(OpBuilder &b, Location l, Operation *combiner, Value x, Value y);

/// out[p] = combine(start, total), start being `init` (a folded fill) or out[p].
void combineIntoOutput(OpBuilder &b, Location l, linalg::GenericOp g, const Space &s, const Combiner &c, Value p,
                       Value init, Value total);

/// A fill (generalized): all-parallel, one scalar input yielded as is.
Value fillValue(linalg::GenericOp g);

/// The memref input with the most elements (the one whose loads matter), if any.
OpOperand *largestInput(linalg::GenericOp g);

/// Whether the largest memref input is contiguous along a reduction loop
/// (then a team's threads lie along the reduction; otherwise across outputs).
bool lanesOverReduction(linalg::GenericOp g, const Space &s);

/// A block's threads as a reduction sees them: `lanes` x `slices` threads
/// (thread.x, thread.y), and the shared-memory tree memref<slices x lanes>.
struct Threads {
  Value lane, slice;
  int64_t lanes = 1, slices = 1;
  Value tree;
};

/// Combines `value` over the 32 lanes of a warp with butterfly shuffles; all
/// lanes get the result. For 32-bit values only.
Value warpReduce(OpBuilder &b, Location l, Operation *combiner, Value value);

inline bool shuffles(Type t) { return t.isF32() || t.isInteger(32); }

/// Combines `value` over each team through the shared-memory tree. A team is
/// a row of lanes (`alongLanes`) or a column of slices; all its threads get
/// the result. Every thread of the block must call this.
Value teamReduce(OpBuilder &b, Location l, const Threads &t, Operation *combiner, Value value, bool alongLanes);

/// for (i = start; i < end; i += step) body(i)
void forLoop(OpBuilder &b, Location l, Value start, Value end, Value step, function_ref<void(OpBuilder &, Value)> body);

/// The reduction of output points [pFirst, pn) in rounds (stride `pStride`
/// between a block's rounds), each over the reduction points [rBegin, rEnd).
/// A team computes `tile` consecutive points (a small innermost output
/// dimension that the largest input does not depend on: its loads are shared).
/// With lanes over the reduction, thread (lane, slice) works on the tile
/// round + slice; otherwise on round + lane. With `partials`, each team's
/// total goes to partials[p][chunk] instead of the output, which is combined
/// with `init` when given and with its own value otherwise.
void emitTeamReduction(OpBuilder &b, Location l, linalg::GenericOp g, const Space &s, const Combiner &c,
                       const Threads &t, bool alongLanes, Value pFirst, Value pStride, Value rBegin, Value rEnd,
                       Value init, Value partials = nullptr, Value chunk = nullptr, int64_t tile = 1);

/// The tile of emitTeamReduction for lanes over the reduction: the extent of
/// the innermost output loop when it is small and the largest input does not
/// depend on it (each of its loads then serves the whole tile); else 1.
int64_t outputTile(linalg::GenericOp g, const Space &s);

/// One thread per output point, folding the reduction loop serially.
void emitSerialReduction(OpBuilder &b, Location l, linalg::GenericOp g, const Space &s, Value first, Value stride);

void emitElementwise(OpBuilder &b, Location l, linalg::GenericOp g, const Space &s, Value first, Value stride);

/// A gpu.launch of `blocks` x (`bx`, `by`) threads with one shared-memory
/// tree per element type in `trees` (memref<by x bx x T>).
gpu::LaunchOp makeLaunch(OpBuilder &b, Location l, int64_t blocks, int64_t bx, int64_t by, ArrayRef<Type> trees);

inline OpBuilder bodyBuilder(gpu::LaunchOp launch) { return OpBuilder(launch.getBody().front().getTerminator()); }

/// The shared-memory tree for `type`, viewed as memref<slices x lanes>.
Value treeFor(OpBuilder &b, Location l, gpu::LaunchOp launch, ArrayRef<Type> trees, Type type, int64_t lanes,
              int64_t slices);

/// Ops that may stay in host code: they compute no data, only constants and
/// views (pointers).
bool staysOnHost(Operation *op);

/// Ops worth cloning into a launch instead of passing their results in.
bool sinkable(Operation *op);

bool isMappable(Operation *op);

/// The buffer a memref value is a view of, if the view keeps the row (its
/// leading dimension) of that buffer: a workspace view, an argument, or an
/// expand/collapse that leaves dimension 0 alone. Null otherwise.
Value rowRoot(Value v);

/// Whether operand `o` of `g` is indexed by loop 0 in its leading dimension.
bool rowIndexed(linalg::GenericOp g, OpOperand &o);

/// The rows of a row group `g` can be in: loop 0 parallel, every output
/// written in its row. 0 if none.
int64_t rowsOf(linalg::GenericOp g);

int64_t workOf(linalg::GenericOp g);

} // namespace nxc::gpumap

#endif // NXC_TRANSFORMS_MAPTOGPUSUPPORT_H
