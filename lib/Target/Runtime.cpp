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
#include "nxc/Target/ObjectEmitter.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"

#include <fmt/format.h>

namespace nxc {
namespace embedded {
extern const unsigned char nxrt64_bc[];
extern const unsigned long nxrt64_bc_size;
extern const unsigned char nxrt32_bc[];
extern const unsigned long nxrt32_bc_size;
extern const unsigned char nxrt_c[];
extern const unsigned long nxrt_c_size;
extern const unsigned char nxrt_h[];
extern const unsigned long nxrt_h_size;
} // namespace embedded

std::string runtimeSource() { return std::string((const char *)embedded::nxrt_c, embedded::nxrt_c_size); }
std::string runtimeHeader() { return std::string((const char *)embedded::nxrt_h, embedded::nxrt_h_size); }

Result<std::string> buildRuntimeObject(const std::string &triple, const std::string &cpu, const std::string &features) {
  NXC_TRY(tm, createTargetMachine(triple, cpu, features, 2));
  bool is64 = tm->createDataLayout().getPointerSizeInBits() == 64;
  llvm::StringRef bc = is64 ? llvm::StringRef((const char *)embedded::nxrt64_bc, embedded::nxrt64_bc_size)
                            : llvm::StringRef((const char *)embedded::nxrt32_bc, embedded::nxrt32_bc_size);
  llvm::LLVMContext ctx;
  NXC_TRY(module, loadEmbeddedBitcode(bc, "nxrt.bc", ctx));
  llvm::Module &m = *module;
  prepareModuleForTarget(m, *tm);
  optimizeModule(m, *tm, 2);
  return emitMachineCode(m, *tm, /*assembly=*/false);
}

} // namespace nxc
