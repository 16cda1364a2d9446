//===- TargetTriple.h - what nxc decides from a target triple --*- C++ -*-===//
//
// `--target` is parsed here only, and each decision that depends on the
// triple alone is made here once, for every stage that needs it (the CPU
// variants, the entry wrappers, the optimizer's settings, the header, the
// linker).
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TARGET_TARGETTRIPLE_H
#define NXC_TARGET_TARGETTRIPLE_H

#include "llvm/TargetParser/Triple.h"

#include <string>

namespace nxc {

/// The host's triple, normalized.
std::string hostTriple();

/// `--target`'s triple, normalized; the host's when the option is empty.
llvm::Triple resolveTriple(const std::string &targetOption);

/// Whether `--target` names the host (or is empty).
bool isHostTarget(const std::string &targetOption);

/// Whether code for `t` runs under an operating system (threads, a C
/// library, a stack of its own thread); false on bare metal ("-none-").
bool hasOperatingSystem(const llvm::Triple &t);

/// x86-64 under an OS: where nxc streams large outputs past the cache and
/// asks the CPU for its cache size (runtime/cache_x86.c).
bool streamsLargeOutputs(const llvm::Triple &t);

/// Whether code for `t` runs long float maxima and minima with the
/// hardware's max, checked (nxc-fast-extrema): x86's vector max neither
/// propagates NaN nor orders -0.0 below +0.0, so Nx's max costs five
/// instructions there; AArch64's and ARM's fmax and fmin are Nx's already.
bool checksFastExtrema(const llvm::Triple &t);

} // namespace nxc

#endif // NXC_TARGET_TARGETTRIPLE_H
