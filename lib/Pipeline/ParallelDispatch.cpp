//===- ParallelDispatch.cpp - parallel bodies run on the thread pool ------===//
//
// nxc-outline-parallel-loops leaves, for each large parallel loop, a call
//   call @F_parallelK(lo, hi, captured..., [workspace])
// of a function marked "nxc-parallel-body"="THREADS" (and
// "nxc-thread-workspace"="S" when it has temporaries). Here, on LLVM IR, each
// such call becomes (the bodies are internal by then: compile() makes them
// so before the CPU variants are cloned)
//   context = {captured..., workspace}          (on the caller's stack)
//   nxc_pool_run(@F_parallelK.task, &context, hi - lo, THREADS)
// where the task unpacks the context and runs F over its chunk, with thread
// t's temporaries at workspace + t * S. The thread pool
// (runtime/thread_pool.c) is linked in as bitcode with internal linkage, and
// the module exports
//   int MODULE_set_threads(int n)   the count in effect after clamping n to [1, THREADS]
//   int MODULE_threads(void)        the count in effect
//   void MODULE_stop_threads(void)  joins the workers (the next call restarts them)
//
//===----------------------------------------------------------------------===//
#include "ParallelDispatch.h"
#include "StackOffset.h"
#include "nxc/Target/ABI.h"
#include "nxc/Target/Embedded.h"
#include "nxc/Target/ObjectEmitter.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"

#include <fmt/format.h>

namespace nxc {
namespace {

int64_t intAttribute(llvm::Function &f, llvm::StringRef name) {
  int64_t v = 0;
  if (f.hasFnAttribute(name)) f.getFnAttribute(name).getValueAsString().getAsInteger(10, v);
  return v;
}

/// `internal void TASK(ptr context, i64 lo, i64 hi, i32 thread)`: unpacks the
/// context and runs `body` over [lo, hi).
llvm::Function *makeTask(llvm::Function &body, llvm::StructType *context, int64_t threadWorkspace) {
  llvm::Module &m = *body.getParent();
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0), *i64 = llvm::Type::getInt64Ty(ctx),
             *i32 = llvm::Type::getInt32Ty(ctx);
  auto *task = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, i64, i64, i32}, false),
                                      llvm::GlobalValue::InternalLinkage, body.getName() + ".task", m);
  task->addFnAttr(llvm::Attribute::NoUnwind);
  for (const char *a : {"target-cpu", "target-features"})
    if (body.hasFnAttribute(a)) task->addFnAttr(body.getFnAttribute(a));
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", task));
  llvm::Type *index = body.getFunctionType()->getParamType(0);
  std::vector<llvm::Value *> args = {b.CreateSExtOrTrunc(task->getArg(1), index),
                                     b.CreateSExtOrTrunc(task->getArg(2), index)};
  unsigned fields = context->getNumElements();
  for (unsigned k = 0; k < fields; ++k) {
    llvm::Value *v = b.CreateLoad(context->getElementType(k), b.CreateStructGEP(context, task->getArg(0), k));
    if (threadWorkspace > 0 && k + 1 == fields) // this thread's temporaries
      v = b.CreateGEP(b.getInt8Ty(), v, b.CreateMul(b.CreateZExt(task->getArg(3), i64), b.getInt64(threadWorkspace)));
    args.push_back(v);
  }
  // On the worker's stack, away from the constants as the entry points do.
  callAtStackOffset(b, &body, args, constantsAnchor(m));
  b.CreateRetVoid();
  return task;
}

/// Whether `loop` holds float arithmetic that LLVM may reassociate or
/// contract (the reductions and dots of nx-to-linalg).
bool mayReassociate(const llvm::Loop &loop) {
  for (const llvm::BasicBlock *bb : loop.blocks())
    for (const llvm::Instruction &i : *bb)
      if (auto *fp = llvm::dyn_cast<llvm::FPMathOperator>(&i); fp && (fp->hasAllowReassoc() || fp->hasAllowContract()))
        return true;
  return false;
}

/// Makes every iteration of `body`'s chunk loop run the same instructions,
/// whatever the chunk [lo, hi) around it. The loop over [lo, hi) is the
/// body's outermost; once its inner loops are fully unrolled, LLVM may
/// vectorize it, and the vector loop, its vector epilogue and its scalar
/// remainder then associate a reduction differently (a product of five
/// elements as one chain per lane in the vector loop, as a tree in the
/// scalar one). Which iterations take which path depends on the chunk's
/// length, so results would depend on the thread count and on whether the
/// pool was busy (a busy pool runs the whole loop as one chunk). Such loops
/// are neither vectorized nor unrolled: their inner loops, whose bounds do
/// not depend on the chunk, are vectorized as before. Loops of exact IEEE
/// operations (element-wise code) compute the same in every path and keep
/// their vectorization.
void keepIterationsAlike(llvm::Function &body) {
  llvm::DominatorTree dt(body);
  llvm::LoopInfo loops(dt);
  llvm::LLVMContext &ctx = body.getContext();
  for (llvm::Loop *loop : loops) {
    if (!mayReassociate(*loop)) continue;
    llvm::Metadata *vectorizeOff[] = {
        llvm::MDString::get(ctx, "llvm.loop.vectorize.enable"),
        llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(ctx))};
    llvm::Metadata *interleaveOne[] = {
        llvm::MDString::get(ctx, "llvm.loop.interleave.count"),
        llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 1))};
    llvm::Metadata *unrollOff[] = {llvm::MDString::get(ctx, "llvm.loop.unroll.disable")};
    llvm::SmallVector<llvm::Metadata *, 4> ops = {nullptr, llvm::MDNode::get(ctx, vectorizeOff),
                                                  llvm::MDNode::get(ctx, interleaveOne),
                                                  llvm::MDNode::get(ctx, unrollOff)};
    llvm::MDNode *id = llvm::MDNode::getDistinct(ctx, ops);
    id->replaceOperandWith(0, id);
    loop->setLoopID(id);
  }
}

} // namespace

Status addParallelDispatch(llvm::Module &m, int threads, const std::string &exportPrefix) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx), *i32 = llvm::Type::getInt32Ty(ctx);
  bool is64 = m.getDataLayout().getPointerSizeInBits() == 64;
  NXC_CHECK(linkInternalBitcode(m, is64 ? NXC_EMBEDDED(thread_pool64_bc) : NXC_EMBEDDED(thread_pool32_bc),
                                "thread_pool.bc"));
  llvm::Function *run = m.getFunction("nxc_pool_run");
  llvm::Function *setThreads = m.getFunction("nxc_pool_set_threads");
  llvm::Function *getThreads = m.getFunction("nxc_pool_threads");
  llvm::Function *stop = m.getFunction("nxc_pool_stop");

  std::vector<llvm::Function *> bodies;
  for (llvm::Function &f : m)
    if (f.hasFnAttribute(kParallelBodyFnAttr) && !f.isDeclaration()) bodies.push_back(&f);
  for (llvm::Function *body : bodies) {
    int64_t threadWorkspace = intAttribute(*body, kThreadWorkspaceFnAttr);
    body->addFnAttr(llvm::Attribute::AlwaysInline);
    keepIterationsAlike(*body);
    // Its pointers are distinct buffers (nxc-outline-parallel-loops passes
    // buffers, not views of them; temporaries sit in disjoint bytes of the
    // workspace), as the kernel's own arguments are.
    for (llvm::Argument &a : body->args())
      if (a.getType()->isPointerTy()) a.addAttr(llvm::Attribute::NoAlias);
    std::vector<llvm::CallInst *> calls;
    for (llvm::User *u : body->users())
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(u); call && call->getCalledFunction() == body)
        calls.push_back(call);
    std::vector<llvm::Type *> fieldTypes(body->getFunctionType()->param_begin() + 2,
                                         body->getFunctionType()->param_end());
    auto *context = llvm::StructType::create(ctx, fieldTypes, (body->getName() + ".context").str());
    llvm::Function *task = makeTask(*body, context, threadWorkspace);
    for (llvm::CallInst *call : calls) {
      llvm::Function *caller = call->getFunction();
      llvm::IRBuilder<> entry(&caller->getEntryBlock(), caller->getEntryBlock().begin());
      llvm::AllocaInst *slot = entry.CreateAlloca(context, nullptr, "parallel.context");
      llvm::IRBuilder<> b(call);
      for (unsigned k = 0; k < fieldTypes.size(); ++k)
        b.CreateStore(call->getArgOperand(k + 2), b.CreateStructGEP(context, slot, k));
      llvm::Value *lo = b.CreateSExtOrTrunc(call->getArgOperand(0), i64),
                  *hi = b.CreateSExtOrTrunc(call->getArgOperand(1), i64);
      // The task runs [lo', hi') of [0, hi - lo): the outlining always calls with lo = 0.
      if (!llvm::isa<llvm::ConstantInt>(lo) || !llvm::cast<llvm::ConstantInt>(lo)->isZero())
        return internalError(Loc{}, fmt::format(FMT_STRING("a parallel call of {} that does not start at 0"),
                                        body->getName().str()));
      b.CreateCall(run, {task, slot, hi, b.getInt32(threads)});
      call->eraseFromParent();
    }
  }

  // int PREFIX_set_threads(int n), int PREFIX_threads(void)
  auto define = [&](const std::string &name, llvm::ArrayRef<llvm::Type *> params) {
    auto *f = llvm::Function::Create(llvm::FunctionType::get(i32, params, false), llvm::GlobalValue::ExternalLinkage,
                                     name, m);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    return f;
  };
  {
    llvm::Function *f = define(abi::setThreadsSymbol(exportPrefix), {i32});
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    b.CreateRet(b.CreateCall(setThreads, {f->getArg(0), b.getInt32(threads)}));
  }
  {
    llvm::Function *f = define(abi::threadsSymbol(exportPrefix), {});
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    b.CreateRet(b.CreateCall(getThreads, {b.getInt32(threads)}));
  }
  {
    llvm::Function *f =
        llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
                               llvm::GlobalValue::ExternalLinkage, abi::stopThreadsSymbol(exportPrefix), m);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    b.CreateCall(stop);
    b.CreateRetVoid();
  }
  return okStatus();
}

} // namespace nxc
