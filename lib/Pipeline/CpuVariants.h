//===- CpuVariants.h - one module, several x86-64 ISA variants -*- C++ -*-===//
#ifndef NXC_PIPELINE_CPUVARIANTS_H
#define NXC_PIPELINE_CPUVARIANTS_H

#include "nxc/Pipeline/Options.h"

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace nxc {

/// The same kernels compiled with AVX-512 register blocks (a second lowering
/// of the module, translated into the same LLVMContext; its kernels named as
/// the module's), and the variants that take their bodies from it.
struct WideVariantBodies {
  llvm::Module *module = nullptr;
  std::vector<bool> used; ///< one per CPU variant
};

/// Clones the module's functions once per CPU in `names` (best first) and
/// makes the entry points dispatch to the first variant the running CPU
/// supports (see CpuVariants.cpp). `tm` is the module's (baseline) target.
/// With `wide`, the variants it marks clone its bodies instead.
Result<std::vector<CpuVariant>> addCpuVariants(llvm::Module &m, const std::vector<std::string> &names,
                                               const std::string &userFeatures, const std::string &query,
                                               llvm::TargetMachine &tm, const WideVariantBodies *wide = nullptr);

} // namespace nxc

#endif // NXC_PIPELINE_CPUVARIANTS_H
