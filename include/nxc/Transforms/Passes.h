//===- Passes.h - nxc's transformations on linalg ---------------*- C++ -*-===//
//
// The passes are declared in Passes.td (`nxc-opt --help` lists them, each
// `nxc-*` pass with its description); each has a create...Pass() function
// here, generated from it. The named pipelines that run them are in
// Pipelines.h.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TRANSFORMS_PASSES_H
#define NXC_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace nxc {

#define GEN_PASS_DECL
#include "nxc/Transforms/Passes.h.inc"

/// Marks a loop whose iterations are independent (a tiling loop over
/// parallel dimensions): nxc-outline-parallel-loops may run its iterations
/// on several threads.
inline constexpr const char *kParallelLoopAttr = "nxc.parallel";

/// The bytes of workspace a function's temporaries need, which
/// nxc-allocs-to-workspace records on it (an i64 attribute).
inline constexpr const char *kWorkspaceSizeAttr = "nxc.workspace_size";

/// Marks a function nxc-outline-parallel-loops made from such a loop; its
/// value is the most threads that run it (their temporaries are laid out per
/// thread by nxc-allocs-to-workspace).
inline constexpr const char *kParallelBodyAttr = "nxc.parallel_body";

/// The LLVM function attributes nxc-mark-parallel-bodies gives such a
/// function: the most threads that run it, and the bytes of temporaries each
/// thread needs (lib/Pipeline/ParallelDispatch.cpp reads them).
inline constexpr const char *kParallelBodyFnAttr = "nxc-parallel-body";
inline constexpr const char *kThreadWorkspaceFnAttr = "nxc-thread-workspace";

/// The function nxc-stream-stores calls for the size in bytes of the running
/// CPU's largest cache (`int64_t nxc_x86_cache_bytes(void)`,
/// runtime/cache_x86.c, linked into the modules that call it).
inline constexpr const char *kCacheBytesQuery = "nxc_x86_cache_bytes";

/// Registers the passes above so that pipelines can name them in text.
void registerTransformPasses();

} // namespace nxc

#endif // NXC_TRANSFORMS_PASSES_H
