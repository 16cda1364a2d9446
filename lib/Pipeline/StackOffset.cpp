//===- StackOffset.cpp - kernel frames placed away from their constants ---===//
//
// A load whose address matches an earlier store's in its low 12 bits waits
// for that store (4K aliasing). A kernel that spills vectors to its stack
// and reloads constants from its constant pool in the same loop (wide f64
// polynomials: sin, erf, tanh) then runs up to 1.7x slower when its frame
// happens to lie at the page offsets of its constants, which depends on how
// deep the caller's stack is (tanh f32[1e6]: 1.9 ms at most depths, 3.2 ms
// at some; `nxc jit --bench` happened to call it at one of those, 4.0 ms).
//
// So on x86-64 with an OS, the entry points, and the tasks the thread pool
// runs, move the stack pointer before calling a kernel or parallel body to
// the page offset half a page past a constant that sits among the constant
// pools (`.rodata.cst32`, where the vector constants go): frames below
// about 2 KB never alias the constants, whatever the caller's depth. It
// costs at most 4 KB of stack and a few instructions per call.
//
//===----------------------------------------------------------------------===//
#include "StackOffset.h"
#include "nxc/Target/TargetTriple.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Triple.h"

#include <vector>

namespace nxc {
namespace {

constexpr const char *kAnchorName = "__nxc_constants_anchor";
constexpr uint64_t kPageBytes = 4096;

} // namespace

llvm::GlobalVariable *addConstantsAnchor(llvm::Module &m, const llvm::Triple &triple) {
  if (!triple.isX86() || !hasOperatingSystem(triple)) return nullptr;
  llvm::LLVMContext &ctx = m.getContext();
  // 32 bytes with unnamed_addr: LLVM puts it in .rodata.cst32.
  auto *anchor = new llvm::GlobalVariable(
      m, llvm::ArrayType::get(llvm::Type::getInt8Ty(ctx), 32), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantDataArray::get(ctx, llvm::ArrayRef<uint8_t>(std::vector<uint8_t>(32, 0x5a))), kAnchorName);
  anchor->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  anchor->setAlignment(llvm::Align(32));
  return anchor;
}

llvm::GlobalVariable *constantsAnchor(llvm::Module &m) { return m.getNamedGlobal(kAnchorName); }

void callAtStackOffset(llvm::IRBuilder<> &b, llvm::Function *callee, llvm::ArrayRef<llvm::Value *> args,
                       llvm::GlobalVariable *anchor) {
  if (!anchor) {
    b.CreateCall(callee, args);
    return;
  }
  // Inlined, the callee's spill slots would lie in the caller's frame, above
  // the gap (addressed from the frame pointer), where nothing moves them.
  // (The thread pool's bodies are otherwise always inlined into their tasks.)
  callee->removeFnAttr(llvm::Attribute::AlwaysInline);
  callee->addFnAttr(llvm::Attribute::NoInline);
  llvm::Type *i64 = b.getInt64Ty();
  llvm::Value *saved = b.CreateStackSave();
  llvm::Value *sp = b.CreatePtrToInt(saved, i64);
  llvm::Value *target = b.CreateAdd(b.CreatePtrToInt(anchor, i64), b.getInt64(kPageBytes / 2));
  llvm::Value *pad = b.CreateAnd(b.CreateSub(sp, target), b.getInt64(kPageBytes - 1));
  llvm::AllocaInst *gap = b.CreateAlloca(b.getInt8Ty(), pad);
  gap->setAlignment(llvm::Align(16));
  // An unused alloca would be deleted: an empty asm statement "uses" it.
  auto *use = llvm::InlineAsm::get(llvm::FunctionType::get(b.getVoidTy(), {gap->getType()}, false), "", "r",
                                   /*hasSideEffects=*/true);
  b.CreateCall(use, {gap});
  b.CreateCall(callee, args);
  b.CreateStackRestore(saved);
}

} // namespace nxc
