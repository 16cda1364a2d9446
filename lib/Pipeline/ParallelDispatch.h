//===- ParallelDispatch.h - parallel bodies run on the thread pool -*- C++ -*-===//
#ifndef NXC_LIB_PIPELINE_PARALLELDISPATCH_H
#define NXC_LIB_PIPELINE_PARALLELDISPATCH_H

#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Transforms/Passes.h" // kParallelBodyFnAttr, kThreadWorkspaceFnAttr

#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace nxc {

/// Links the thread pool into `m`, turns every call of a parallel body into
/// a run on the pool over up to `threads` threads, and exports
/// `PREFIX_set_threads`, `PREFIX_threads` and `PREFIX_stop_threads`. Runs after the CPU variants are
/// made (each variant's bodies get their own task; the pool is shared).
Status addParallelDispatch(llvm::Module &m, int threads, const std::string &exportPrefix);

} // namespace nxc

#endif // NXC_LIB_PIPELINE_PARALLELDISPATCH_H
