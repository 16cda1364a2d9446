//===- ObjectEmitter.h - LLVM IR to machine code ----------------*- C++ -*-===//
#ifndef NXC_TARGET_OBJECTEMITTER_H
#define NXC_TARGET_OBJECTEMITTER_H

#include "nxc/Frontend/Diagnostics.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class StringRef;
class TargetMachine;
} // namespace llvm

namespace nxc {

/// Initializes every LLVM target compiled into libLLVM (once).
void initializeLLVMTargets();

/// A TargetMachine for `triple` (empty: host) and `cpu` (empty: the host CPU
/// when compiling for the host, "generic" otherwise), position-independent.
Result<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const std::string &triple, const std::string &cpu,
                                                                 const std::string &features, int optLevel);

/// The tuning features nxc's code is compiled with for `triple`, before any
/// the user gives (which may undo them): on x86, no gathers or scatters
/// (`+prefer-no-gather,+prefer-no-scatter`). Every access nxc emits is
/// affine; where the contiguous loop of a small block is fully unrolled,
/// LLVM's cost models for AVX-512 CPUs vectorize the strided loop around it
/// with a gather and a scatter per vector instead (rows of a [30,10] softmax,
/// the transposes of a training step), which AVX2 CPUs never did.
std::string codegenTunings(const std::string &triple);

/// Sets the module's triple and data layout from `tm`.
void prepareModuleForTarget(llvm::Module &module, llvm::TargetMachine &tm);

/// Parses bitcode embedded in nxc (the runtime, the CPU checks) and drops
/// the CPU its functions were compiled for, so the module's target applies.
Result<std::unique_ptr<llvm::Module>> loadEmbeddedBitcode(llvm::StringRef bitcode, const char *name,
                                                          llvm::LLVMContext &ctx);

/// Links embedded bitcode (the CPU check, the thread pool, the cache size
/// query, the CUDA loader) into `m` for `m`'s target, with every function and
/// global it defines made internal: each module keeps its own copy.
Status linkInternalBitcode(llvm::Module &m, llvm::StringRef bitcode, const char *name);

/// Runs LLVM's standard per-module pipeline at -O`optLevel`, then
/// moveBF16AsBits.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm, int optLevel);

/// Gives bfloat values that are only loaded, stored, selected or shuffled
/// the type i16, so that no code generator converts them (BF16Bits.cpp).
void moveBF16AsBits(llvm::Module &module);

/// Machine code for the module: an ELF (or other) object, or assembly text.
Result<std::string> emitMachineCode(llvm::Module &module, llvm::TargetMachine &tm, bool assembly);

} // namespace nxc

#endif // NXC_TARGET_OBJECTEMITTER_H
