//===- Pipelines.cpp - nxc's pass pipelines, by name -----------------------===//
#include "nxc/Transforms/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace nxc {

/// nx -> linalg on tensors, fused (printed by --emit=linalg). CPU code runs
/// long sums, maxima and minima in blocks, stores expensive values with several
/// users (computing them in the first reduction that reads them), runs
/// row-wise chains a row at a time and wide dots in register-sized blocks.
/// On CPUs with an OS (vector units, code size no concern), dots with few
/// columns run as dot products of rows from a contraction of 128 on (the
/// second layer of an MLP, [30,128] x [128,10]: 6% of the whole predict);
/// bare metal keeps the smaller code of the other order below 256.
std::string cpuToLinalgPipeline(const CpuPipelineChoices &c) {
  return std::string(c.bareMetal ? "nxc-lower-nx-to-linalg{blocked-reductions}"
                                 : "nxc-lower-nx-to-linalg{blocked-reductions long-contraction=128 conv-as-dot}") +
         ",canonicalize,cse,"
         "func.func(nxc-fuse-elementwise),canonicalize,cse,func.func(nxc-pack-constant-layouts),"
         "func.func(nxc-tile-rows),canonicalize,cse," +
         fmt::format(FMT_STRING("func.func(nxc-block-contractions{{vector-bits={}}}),"), c.vectorBits) +
         "canonicalize,cse,func.func(nxc-fuse-into-reductions),canonicalize,cse";
}

/// GPU code recomputes expensive values and maps rows and reductions to
/// blocks itself.
std::string gpuToLinalgPipeline() {
  return "nxc-lower-nx-to-linalg,canonicalize,cse,"
         "func.func(nxc-fuse-elementwise{recompute-expensive}),canonicalize,cse";
}

/// linalg on tensors -> linalg on buffers (printed by --emit=bufferized).
/// Results become out-parameters; with `fastExtrema` (x86), long float maxima
/// and minima run fast and checked; temporaries up to 256 bytes
/// (accumulators) live on the stack, all others in the caller-owned
/// workspace; copies become loops (no memcpy). With several threads, large
/// parallel loops move into functions over a range of their iterations, each
/// thread with its own temporaries. With `streamStores` (x86-64 with an OS),
/// large outputs written element-wise get a version with streaming stores,
/// for aligned outputs of calls whose data exceeds the cache. The parallel
/// bodies are marked for the thread pool last.
std::string cpuBufferizePipeline(const CpuPipelineChoices &c) {
  return fmt::format(
      FMT_STRING(
          "func.func(nxc-distinct-results,nxc-separate-empty-tensors),"
          "one-shot-bufferize{{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map "
          "allow-return-allocs-from-loops}},"
          "canonicalize,"
          "buffer-results-to-out-params{{hoist-static-allocs modify-public-functions}},canonicalize,{}"
          "func.func(promote-buffers-to-stack{{max-alloc-size-in-bytes=256}}),"
          "cse,canonicalize," // equal subviews merge, so a tile's copy onto itself folds away
          "nxc-outline-parallel-loops{{threads={} min-work={}}},canonicalize,"
          "nxc-allocs-to-workspace,nxc-copies-to-linalg,canonicalize{},nxc-mark-parallel-bodies"),
      c.fastExtrema ? "func.func(nxc-fast-extrema)," : "", c.threads, c.minWork,
      c.streamStores ? ",nxc-stream-stores,canonicalize" : "");
}

/// Buffers -> LLVM dialect (printed by --emit=llvm-dialect). CPUs with an
/// OS run the register blocks of dots as nxc's own vector code; bare-metal
/// cores (often without a vector unit) keep scalar loops.
std::string cpuToLLVMDialectPipeline(const CpuPipelineChoices &c) {
  return std::string(c.bareMetal ? "func.func(" : "func.func(nxc-vectorize-dot-blocks,nxc-vectorize-copies,") +
         "nxc-register-accumulators,convert-linalg-to-loops),"
         "nxc-expand-math,nxc-expand-narrow-floats,convert-math-to-funcs,"
         "lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,"
         "finalize-memref-to-llvm,convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,convert-cf-to-llvm,"
         "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},convert-index-to-llvm,convert-ub-to-llvm,"
         "reconcile-unrealized-casts,canonicalize";
}

namespace {

struct CpuPipelineOptions : public mlir::PassPipelineOptions<CpuPipelineOptions> {
  Option<bool> bareMetal{*this, "bare-metal", llvm::cl::desc("A core without an OS: scalar register blocks"),
                         llvm::cl::init(false)};
  Option<int> vectorBits{*this, "vector-bits", llvm::cl::desc("The register blocks' vector width (256, or 512)"),
                         llvm::cl::init(256)};
  Option<int> threads{*this, "threads", llvm::cl::desc("The most threads one call uses"), llvm::cl::init(1)};
  Option<int64_t> minWork{*this, "min-work", llvm::cl::desc("The least work of a loop that runs on the pool"),
                          llvm::cl::init(65536)};
  Option<bool> streamStores{*this, "stream-stores", llvm::cl::desc("Streaming stores for large outputs (x86-64)"),
                            llvm::cl::init(false)};
  Option<bool> fastExtrema{*this, "fast-extrema", llvm::cl::desc("Fast checked float maxima and minima (x86)"),
                           llvm::cl::init(false)};

  CpuPipelineChoices choices() const {
    return CpuPipelineChoices{bareMetal, vectorBits, threads, minWork, streamStores, fastExtrema};
  }
};

void addText(mlir::OpPassManager &pm, const std::string &text) {
  std::string errors;
  llvm::raw_string_ostream es(errors);
  if (mlir::failed(mlir::parsePassPipeline(text, pm, es)))
    llvm::report_fatal_error(llvm::Twine("nxc's pipeline does not parse: ") + errors);
}

} // namespace

void registerNxcPipelines() {
  using Build = std::string (*)(const CpuPipelineChoices &);
  struct Stage {
    const char *name, *description;
    std::vector<Build> parts;
  };
  static const Stage stages[] = {
      {"nxc-cpu-pipeline",
       "What nxc aot runs for a CPU: nx -> linalg -> buffers -> the LLVM dialect",
       {cpuToLinalgPipeline, cpuBufferizePipeline, cpuToLLVMDialectPipeline}},
      {"nxc-cpu-to-linalg", "nx -> linalg on tensors, fused and blocked (--emit linalg)", {cpuToLinalgPipeline}},
      {"nxc-cpu-bufferize",
       "linalg on tensors -> buffers in the workspace (--emit bufferized)",
       {cpuBufferizePipeline}},
      {"nxc-cpu-to-llvm-dialect", "buffers -> the LLVM dialect (--emit llvm-dialect)", {cpuToLLVMDialectPipeline}},
  };
  for (const Stage &s : stages)
    mlir::PassPipelineRegistration<CpuPipelineOptions>(
        s.name, s.description, [&s](mlir::OpPassManager &pm, const CpuPipelineOptions &o) {
          for (Build b : s.parts) addText(pm, b(o.choices()));
        });
}

} // namespace nxc
