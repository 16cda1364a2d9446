//===- BF16Bits.cpp - bf16 values that only move, as 16-bit integers ------===//
//
// nxc-expand-narrow-floats leaves no bf16 arithmetic: every bf16 value is loaded,
// stored, selected or bitcast to and from i16. LLVM's optimizer then merges
// such moves into phis and selects of bfloat, and on CPUs without bf16
// instructions the code generator keeps those values widened to f32 and
// narrows them again with a call of __truncsfbf2 (which GCC 12's libgcc
// lacks, so the library would not link; and the rounding is pointless: the
// values are already bf16). This rewrite, run after the optimizer, gives
// every bfloat value that only moves the type i16 (or a vector of i16), so
// that nothing converts.
//
// A function with a bfloat value used in any other way (a conversion, a
// comparison, a call) is left as it is.
//
//===----------------------------------------------------------------------===//
#include "nxc/Target/ObjectEmitter.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

namespace nxc {
namespace {

bool isBF16ish(llvm::Type *t) { return t->getScalarType()->isBFloatTy(); }

llvm::Type *asBits(llvm::Type *t) {
  llvm::Type *i16 = llvm::Type::getInt16Ty(t->getContext());
  if (auto *v = llvm::dyn_cast<llvm::VectorType>(t)) return llvm::VectorType::get(i16, v->getElementCount());
  return i16;
}

/// Instructions that move bits without looking at them.
bool onlyMoves(const llvm::Instruction &i) {
  return llvm::isa<llvm::LoadInst, llvm::StoreInst, llvm::SelectInst, llvm::PHINode, llvm::BitCastInst,
                   llvm::ShuffleVectorInst, llvm::ExtractElementInst, llvm::InsertElementInst, llvm::FreezeInst>(i);
}

/// Whether `i` touches bf16 at all (as its type or an operand's).
bool touchesBF16(const llvm::Instruction &i) {
  if (isBF16ish(i.getType())) return true;
  for (const llvm::Value *op : i.operands())
    if (isBF16ish(op->getType())) return true;
  return false;
}

void rewriteFunction(llvm::Function &f) {
  std::vector<llvm::Instruction *> touched;
  for (llvm::BasicBlock &bb : f)
    for (llvm::Instruction &i : bb)
      if (touchesBF16(i)) {
        if (!onlyMoves(i)) return; // a real use of the value: leave the function alone
        // bfloat arguments keep their type: so do their users.
        for (const llvm::Value *op : i.operands())
          if (isBF16ish(op->getType()) && !llvm::isa<llvm::Instruction, llvm::Constant>(op)) return;
        touched.push_back(&i);
      }
  if (touched.empty()) return;
  // Constant operands first (a bfloat constant becomes the i16 of its bits),
  // then every result type. A bitcast keeps its size, so it stays valid with
  // i16 in place of bfloat (`<2 x i32>` to `<4 x i16>`); one between bfloat
  // and i16 becomes a no-op.
  for (llvm::Instruction *i : touched)
    for (llvm::Use &u : i->operands())
      if (auto *c = llvm::dyn_cast<llvm::Constant>(u.get()); c && isBF16ish(c->getType()))
        u.set(llvm::ConstantExpr::getBitCast(c, asBits(c->getType())));
  for (llvm::Instruction *i : touched)
    if (isBF16ish(i->getType())) i->mutateType(asBits(i->getType()));
  for (llvm::Instruction *i : touched)
    if (auto *c = llvm::dyn_cast<llvm::BitCastInst>(i); c && c->getSrcTy() == c->getDestTy()) {
      c->replaceAllUsesWith(c->getOperand(0));
      c->eraseFromParent();
    }
}

} // namespace

void moveBF16AsBits(llvm::Module &module) {
  for (llvm::Function &f : module)
    if (!f.isDeclaration()) rewriteFunction(f);
}

} // namespace nxc
