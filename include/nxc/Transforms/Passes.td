//===- Passes.td - nxc's transformations on linalg ---------*- tablegen -*-===//
//
// The passes of lib/Transforms. `-gen-pass-decls` makes their base classes,
// their create functions and their registration (`nxc-opt --help` lists them).
//
//===----------------------------------------------------------------------===//

#ifndef NXC_TRANSFORMS_PASSES
#define NXC_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def FuseElementwisePass : Pass<"nxc-fuse-elementwise"> {
  let summary = "Fuse element-wise linalg producers into all their users";
  let description = [{
    Element-wise fusion that also fuses producers with several users:
    recomputing cheap element-wise work in each consumer is faster than a
    round trip through memory, and it removes the temporary buffer altogether.
    A producer with several users whose body is expensive (a transcendental
    function, a division) is stored once instead, unless recompute-expensive
    is set (GPU code, where a kernel per stored value costs more than the
    recomputation).
  }];
  let options = [
    Option<"recomputeExpensive", "recompute-expensive", "bool", /*default=*/"false",
           "Also fuse expensive producers into each of their users">,
  ];
  let dependentDialects = ["mlir::affine::AffineDialect", "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def FuseIntoReductionsPass : Pass<"nxc-fuse-into-reductions", "mlir::func::FuncOp"> {
  let summary = "Compute a stored element-wise value inside the reduction that reads it";
  let description = [{
    An element-wise value that nxc-fuse-elementwise stores (an expensive
    producer with several users, such as softmax's exp(x - max)) and that a
    reduction reads element by element (directly or through an
    expand_shape, as blocked sums do) is computed inside that reduction,
    which writes it out as a second result: one pass over the data instead
    of a pass that stores it and one that reads it back. The producer's
    inputs must be read element by element or be scalars, and its other
    users must come after the reduction.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def PackConstantLayoutsPass : Pass<"nxc-pack-constant-layouts", "mlir::func::FuncOp"> {
  let summary = "Do the layout copies of constant operands (baked weights) at compile time";
  let description = [{
    A dot with few output columns copies its right operand to [columns,
    contraction] first (a linalg.generic marked nxc.keep_layout). When the
    operand is a constant, the copy is folded into a new constant: calls
    neither copy the weights nor need workspace for them.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect"];
}

def BlockContractionsPass : Pass<"nxc-block-contractions", "mlir::func::FuncOp"> {
  let summary = "Run dots with wide output rows in register-sized blocks, contraction outermost";
  let description = [{
    A contraction in NxToLinalg's i, k, j order (wide output rows) is tiled
    into blocks of up to 6 output rows (a divisor of the rows) by 16 to 64
    columns (8 to 32 for f64; fewer rows take more columns, up to 12
    accumulator vectors), and each block runs k, i, j: the block's
    accumulators stay in registers across the contraction, and each rhs row
    is read once per block of rows. When the rhs panel of a block is larger
    than half an L1 cache and there are several blocks of rows, the
    contraction is cut into chunks whose panel fits, and the tiles run
    columns, chunks, rows; with 16 or more blocks of rows, each chunk is
    copied once to a contiguous tensor that the blocks read. Columns (rows)
    that no block divides are split into parts that blocks do divide. A
    contraction in i, j, k order (few columns, the contraction innermost) is
    tiled into blocks of up to 4 columns and 8 partial-sum vectors, also run
    k, i, j. Dots with one output row are left alone. The vectors are
    `vector-bits` wide: 256 (AVX2's registers, the default), or 512 for
    CPUs with AVX-512 (32 registers): up to 24 accumulators, 6 rows by 64
    columns.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "The width of the vector registers the blocks are sized for (256 or 512)">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect", "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect"];
}

def TileRowsPass : Pass<"nxc-tile-rows", "mlir::func::FuncOp"> {
  let summary = "Run row-wise passes (reductions over a row, then element-wise work on it) one row at a time";
  let description = [{
    An element-wise loop nest that reads per-row reductions of its own input
    (layer norm's mean and variance, softmax along an axis) is tiled by its
    outermost dimension, and its producers are fused into the row loop: the
    row is read by every pass while it is in cache, instead of each pass
    streaming through the whole tensor.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect", "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect"];
}

def AllocsToWorkspacePass : Pass<"nxc-allocs-to-workspace", "mlir::ModuleOp"> {
  let summary = "Place all temporaries in a caller-owned workspace argument";
  let description = [{
    Moves every temporary buffer of a public function into one trailing
    `memref<SIZExi8>` workspace argument, reusing bytes between buffers whose
    lifetimes do not overlap, and records `nxc.workspace_size`.
  }];
  let options = [
    Option<"share", "share", "bool", /*default=*/"true",
           "Let buffers whose lifetimes do not overlap share bytes (off for the GPU, whose fused kernels "
           "run the ops of many rows at once)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def OutlineParallelLoopsPass : Pass<"nxc-outline-parallel-loops", "mlir::ModuleOp"> {
  let summary = "Move the large parallel loop nests of public functions into functions over a range";
  let description = [{
    Runs after bufferization, before nxc-allocs-to-workspace. Each top-level
    op of a public function that is a loop marked `nxc.parallel` (a tiling
    loop over parallel dimensions; with the marked loops perfectly nested
    in it, as one range until it has 8 iterations per thread), or a structured op whose outermost loop is
    parallel, and whose estimated work reaches `min-work`, moves into a
    private function `@F_parallelK(%lo, %hi, captured values...)` marked
    `nxc.parallel_body`, which runs iterations [lo, hi) of that loop; the
    op is replaced by a call over the whole range. Constants are cloned
    into the new function, and so are the temporaries the loop alone uses,
    so that each thread gets its own, and the views it reads of outside
    buffers, so that its arguments are distinct buffers. The call later becomes a dispatch on
    the module's thread pool. A loop that writes a buffer it shares with
    the rest of the function, or that captures a buffer of dynamic layout,
    stays where it is. With `threads` 1 the pass does nothing.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "The most threads a call may use">,
    Option<"minWork", "min-work", "int64_t", /*default=*/"65536",
           "The smallest estimated work (scalar operations; a transcendental function counts 16) worth running "
           "on several threads">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect", "mlir::linalg::LinalgDialect"];
}

def StreamStoresPass : Pass<"nxc-stream-stores", "mlir::ModuleOp"> {
  let summary = "Write large outputs with aligned non-temporal vector stores";
  let description = [{
    Runs on bufferized code. An element-wise linalg.generic whose output is a
    function argument of at least `min-bytes`, which nothing else in the
    function reads or writes, gets a second version, taken when the buffers
    the function is given total at least 3/4 of the running CPU's largest
    cache (`nxc_x86_cache_bytes()`, called once per call; the module links
    runtime/cache_x86.c) and the output starts a cache line
    (`line-bytes`): a loop nest on vectors of
    `vector-bytes` runs instead, storing with `vector.store {nontemporal}`
    (written lines are not first read from memory, and the output does not
    evict the inputs). Rows must be whole lines and their strides multiples
    of the line, inputs contiguous along
    the innermost loop or independent of it, and the body made of arith ops
    and math ops that lower without a library call. A function with
    streaming stores ends with an x86 sfence, so that another thread sees
    them once it returns (the pipeline runs this pass for x86-64 only).
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"8388608",
           "The smallest output considered (the cache size decides when it runs)">,
    Option<"vectorBytes", "vector-bytes", "int64_t", /*default=*/"32",
           "The width of the streaming stores">,
    Option<"lineBytes", "line-bytes", "int64_t", /*default=*/"64",
           "The cache line: streaming stores write whole lines">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect", "mlir::vector::VectorDialect"];
}

def FastExtremaPass : Pass<"nxc-fast-extrema", "mlir::func::FuncOp"> {
  let summary = "Run float maxima and minima with the hardware's max, checked, and exactly only when needed";
  let description = [{
    Runs on buffers, before stack promotion and the workspace place the
    temporaries it adds. A linalg.generic computing arith.maximumf or arith.minimumf over at least
    64 elements per result, right after the linalg.fill of its accumulator,
    becomes a reduction with maxnumf/minnumf (no NaNs, no signed zeros: one
    instruction per vector) that also sums the elements, a check that no sum
    is NaN (no element is) and no result is zero (whose sign the fast
    reduction may get wrong), and the original fill and reduction under an
    scf.if for when the check fails.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect"];
}

def VectorizeDotBlocksPass : Pass<"nxc-vectorize-dot-blocks", "mlir::func::FuncOp"> {
  let summary = "Write the register blocks of dots as vector code along their contiguous columns";
  let description = [{
    Runs on bufferized code, before convert-linalg-to-loops. A
    linalg.generic with loops [k (reduction), i, j] whose body is a
    multiply-accumulate (a register block of nxc-block-contractions: the
    output [i, j] and one input [.., j] contiguous along j, the other input
    free of j, j a multiple of 512 bits) becomes an scf.for over k carrying
    the block's accumulators as 512-bit vectors: per step, the input's
    slices along j are loaded once, each element of the other input is
    broadcast, and every accumulator gets the body's ops on vectors. Each
    output element sums its products in the order of k, as the scalar loops
    do; LLVM then has nothing left to choose (for AVX-512 its loop
    vectorizer took the row loop, with gathers and scatters).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def VectorizeCopiesPass : Pass<"nxc-vectorize-copies", "mlir::func::FuncOp"> {
  let summary = "Write copies along contiguous rows as vector loads and stores";
  let description = [{
    Runs on bufferized code, before convert-linalg-to-loops. A linalg op
    that copies its one input to its output (all loops parallel, static
    extents, the output indexed by the loops, the input's last index the
    last loop plus an offset free of it, both buffers contiguous along it)
    becomes scf.for loops over the outer indices and, per row, vector
    loads and stores of 512 bits, then one shorter vector for the rest. For
    short rows LLVM unrolled the inner loop and then could not vectorize it
    (it cannot tell the buffers apart), copying one element at a time.
  }];
  let dependentDialects = ["mlir::affine::AffineDialect", "mlir::arith::ArithDialect", "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def RegisterAccumulatorsPass : Pass<"nxc-register-accumulators", "mlir::func::FuncOp"> {
  let summary = "Lower reductions whose accumulators share a buffer with other operands to loops carrying them";
  let description = [{
    Runs on bufferized code, before convert-linalg-to-loops. A linalg.generic
    whose innermost loop is a reduction, with an output that loop does not
    move along (an accumulator) in the same root buffer as another operand
    (temporaries are views of one workspace), becomes an scf.for nest whose
    innermost loop carries the accumulators as loop-carried values, loaded
    before it and stored after it; inputs it does not move along are loaded
    before it too. LLVM cannot keep such an accumulator in a register itself,
    as it cannot tell the views apart. Only generics whose written buffers
    are provably disjoint from the other operands sharing their root (views
    at constant offsets, and subviews of them) are lowered. A reduction
    followed by a small block of parallel loops (a register block of a dot,
    at most 16 points) becomes one loop over the reduction that carries the
    accumulators of every point, the block unrolled.
  }];
  let dependentDialects = ["mlir::affine::AffineDialect", "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect"];
}

def CopiesToLinalgPass : Pass<"nxc-copies-to-linalg"> {
  let summary = "Rewrite memref.copy into linalg.copy";
  let description = [{
    linalg.copy lowers to loops instead of a memcpy call.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def DistinctResultsPass : Pass<"nxc-distinct-results", "mlir::func::FuncOp"> {
  let summary = "Copy repeated return operands so each result has its own buffer";
  let description = [{
    Each result becomes its own out-parameter after bufferization, so every
    repeated return operand gets its own copy first.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def SeparateEmptyTensorsPass : Pass<"nxc-separate-empty-tensors", "mlir::func::FuncOp"> {
  let summary = "Give every use of a tensor.empty an empty tensor of its own";
  let description = [{
    Runs right before bufferization. A tensor.empty that CSE made the
    destination of many ops (more than 8) would make one-shot bufferization
    analyze them all as writers of one tensor, in time quadratic in their
    number; each use gets its own tensor.empty, made right before it.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def MapToGpuPass : Pass<"nxc-map-to-gpu", "mlir::ModuleOp"> {
  let summary = "Map the structured ops of bufferized functions to gpu.launch";
  let description = [{
    Runs after bufferization and nxc-allocs-to-workspace. Every linalg op of
    a function's body becomes a gpu.launch: element-wise ops as grid-stride
    loops over all elements, reductions as one thread team per output
    element (a block, or a warp-sized row of a block) combining through a
    shared-memory tree, whole-array reductions split across blocks with
    their partials in the workspace, and a fill that only initializes a
    reduction folded into it. A function whose ops are all small runs as
    one block with barriers between its ops (one launch). Anything else
    (runtime control flow, scalar code) runs in a single-thread kernel.
    Host code keeps only constants, views and the launches.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def EmulateGpuPass : Pass<"nxc-emulate-gpu", "mlir::func::FuncOp"> {
  let summary = "Run gpu.launch bodies on the CPU, one block and one thread at a time";
  let description = [{
    For testing the GPU mapping without a GPU (`--device cuda-emulated`):
    each launch becomes a loop over its blocks; each block's body is cut at
    barriers and shuffles into phases, each a loop over the block's threads;
    values that cross phases are kept per thread in arrays.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def MarkParallelBodiesPass : Pass<"nxc-mark-parallel-bodies", "mlir::ModuleOp"> {
  let summary = "Write the parallel bodies' thread count and per-thread workspace as LLVM function attributes";
  let description = [{
    A function nxc-outline-parallel-loops made (`nxc.parallel_body`) gets
    `passthrough` attributes "nxc-parallel-body"="THREADS" and
    "nxc-thread-workspace"="BYTES" (its `nxc.workspace_size`), which reach
    LLVM IR, where the thread pool's dispatch finds them.
  }];
}

#endif // NXC_TRANSFORMS_PASSES
