//===- StackOffset.h - kernel frames placed away from their constants -*- C++ -*-===//
#ifndef NXC_LIB_PIPELINE_STACKOFFSET_H
#define NXC_LIB_PIPELINE_STACKOFFSET_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/IR/IRBuilder.h"

namespace llvm {
class Function;
class GlobalVariable;
class Module;
class Triple;
class Value;
} // namespace llvm

namespace nxc {

/// The constant that kernel calls place their frame against (see
/// StackOffset.cpp), created in `m` for targets that need it; null
/// otherwise (bare metal: its stack is too small to give away a page).
llvm::GlobalVariable *addConstantsAnchor(llvm::Module &m, const llvm::Triple &triple);

/// The module's anchor, if addConstantsAnchor made one.
llvm::GlobalVariable *constantsAnchor(llvm::Module &m);

/// Calls `callee` with the stack pointer at the anchor's page offset plus
/// half a page, or plainly when `anchor` is null.
void callAtStackOffset(llvm::IRBuilder<> &b, llvm::Function *callee, llvm::ArrayRef<llvm::Value *> args,
                       llvm::GlobalVariable *anchor);

} // namespace nxc

#endif // NXC_LIB_PIPELINE_STACKOFFSET_H
