//===- Runtime.cpp - the runtime, compiled for the module's target --------===//
//
// runtime/nxrt.c is compiled to LLVM bitcode when nxc is built, once for
// 64-bit and once for 32-bit pointers, and embedded in nxc. At `nxc aot` time
// the matching bitcode is retargeted (triple, data layout, CPU) and compiled
// with the same TargetMachine as the module, so libnxrt.a always matches the
// module's target, whatever machine nxc runs on.
//
//===----------------------------------------------------------------------===//
#include "nxc/Target/Artifacts.h"
#include "nxc/Target/Embedded.h"
#include "nxc/Target/ObjectEmitter.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"

#include <fmt/format.h>

namespace nxc {
std::string runtimeSource() {
  std::string source(NXC_EMBEDDED(nxrt_c));
  size_t at = source.find("@NXRT_VERSION@");
  if (at != std::string::npos) source.replace(at, 14, NXC_VERSION);
  return source;
}
std::string runtimeHeader() { return std::string(NXC_EMBEDDED(nxrt_h)); }

Result<std::string> buildRuntimeObject(const std::string &triple, const std::string &cpu, const std::string &features) {
  NXC_TRY(tm, createTargetMachine(triple, cpu, features, 2));
  bool is64 = tm->createDataLayout().getPointerSizeInBits() == 64;
  llvm::StringRef bc = is64 ? llvm::StringRef(NXC_EMBEDDED(nxrt64_bc))
                            : llvm::StringRef(NXC_EMBEDDED(nxrt32_bc));
  llvm::LLVMContext ctx;
  NXC_TRY(module, loadEmbeddedBitcode(bc, "nxrt.bc", ctx));
  llvm::Module &m = *module;
  prepareModuleForTarget(m, *tm);
  optimizeModule(m, *tm, 2);
  return emitMachineCode(m, *tm, /*assembly=*/false);
}

} // namespace nxc
