//===- TargetTriple.cpp - what nxc decides from a target triple ----------===//
#include "nxc/Target/TargetTriple.h"

#include "llvm/TargetParser/Host.h"

namespace nxc {

std::string hostTriple() { return llvm::Triple::normalize(llvm::sys::getDefaultTargetTriple()); }

llvm::Triple resolveTriple(const std::string &targetOption) {
  return llvm::Triple(targetOption.empty() ? hostTriple() : llvm::Triple::normalize(targetOption));
}

bool isHostTarget(const std::string &targetOption) {
  return targetOption.empty() || resolveTriple(targetOption).str() == hostTriple();
}

bool hasOperatingSystem(const llvm::Triple &t) { return t.getOS() != llvm::Triple::UnknownOS; }

bool streamsLargeOutputs(const llvm::Triple &t) { return t.getArch() == llvm::Triple::x86_64 && hasOperatingSystem(t); }

bool checksFastExtrema(const llvm::Triple &t) { return t.isX86(); }

} // namespace nxc
