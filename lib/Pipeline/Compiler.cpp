//===- Compiler.cpp - the lowering pipeline -------------------------------===//
//
// Runs every stage in process: nx -> linalg (nxc's own pass), element-wise
// fusion, one-shot bufferization with results turned into out-parameters,
// small temporaries promoted to the stack, loops, math expansion (no libm),
// LLVM dialect with the bare-pointer calling convention, translation to LLVM
// IR, the exported C entry wrappers, LLVM's O3 pipeline, and the
// TargetMachine.
//
//===----------------------------------------------------------------------===//
#include "nxc/Pipeline/Compiler.h"
#include "nxc/Conversion/GraphToNx.h"
#include "nxc/Conversion/Passes.h"
#include "nxc/Dialect/Nx/NxDialect.h"
#include "nxc/Target/ObjectEmitter.h"
#include "nxc/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

namespace nxc {
namespace {

/// nx -> linalg on tensors, fused (printed by --emit=linalg).
const char *kToLinalg = "nxc-lower-nx-to-linalg,canonicalize,cse,"
                        "func.func(nxc-fuse-elementwise),canonicalize,cse";

/// linalg on tensors -> LLVM dialect (printed by --emit=llvm-dialect).
/// Temporaries up to 4 KiB live on the stack; larger ones are heap buffers
/// freed by the deallocation pipeline.
const char *kToLLVMDialect =
    "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},"
    "canonicalize,"
    "buffer-results-to-out-params{hoist-static-allocs modify-public-functions},"
    "func.func(promote-buffers-to-stack{max-alloc-size-in-bytes=4096}),"
    "buffer-deallocation-pipeline,canonicalize,"
    "func.func(convert-linalg-to-loops),"
    "nxc-expand-math,convert-math-to-funcs,"
    "lower-affine,convert-scf-to-cf,expand-strided-metadata,finalize-memref-to-llvm,"
    "convert-math-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},convert-index-to-llvm,convert-ub-to-llvm,"
    "reconcile-unrealized-casts,canonicalize";

void registerEverythingOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    mlir::registerAllPasses();
    registerConversionPasses();
    registerTransformPasses();
  });
}

/// Collects MLIR diagnostics into one message.
struct DiagnosticCollector {
  std::string messages;
  mlir::ScopedDiagnosticHandler handler;
  explicit DiagnosticCollector(mlir::MLIRContext *ctx)
      : handler(ctx, [this](mlir::Diagnostic &d) {
          llvm::raw_string_ostream os(messages);
          os << d.getLocation() << ": " << d << "\n";
          return mlir::success();
        }) {}
};

Diag internalError(const std::string &what, const std::string &details) {
  return error(Loc{}, "internal compiler error while " + what + (details.empty() ? "" : ":\n" + details));
}

Status runPipeline(mlir::ModuleOp module, const char *pipeline, DiagnosticCollector &diags, const std::string &what) {
  mlir::PassManager pm(module.getContext());
  std::string parseErrors;
  llvm::raw_string_ostream es(parseErrors);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, es))) return internalError("building the pass pipeline", parseErrors);
  if (mlir::failed(pm.run(module))) return internalError(what, diags.messages);
  return okStatus();
}

std::string print(mlir::ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module.print(os);
  return s;
}

/// Renames each kernel to an internal symbol and exports
/// `int32_t symbol(ptr...)`: returns 1 if any pointer is NULL, else runs the
/// kernel and returns 0.
void addEntryWrappers(llvm::Module &m, const std::vector<EntryPoint> &entries) {
  llvm::LLVMContext &ctx = m.getContext();
  for (auto &e : entries) {
    llvm::Function *kernel = m.getFunction(e.symbol);
    if (!kernel) continue;
    kernel->setName("__nxc_kernel_" + e.symbol);
    kernel->setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::FunctionType *ft = llvm::FunctionType::get(llvm::Type::getInt32Ty(ctx), kernel->getFunctionType()->params(), false);
    llvm::Function *wrapper = llvm::Function::Create(ft, llvm::GlobalValue::ExternalLinkage, e.symbol, m);
    wrapper->setVisibility(llvm::GlobalValue::DefaultVisibility);
    wrapper->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::BasicBlock *entry = llvm::BasicBlock::Create(ctx, "entry", wrapper);
    llvm::BasicBlock *bad = llvm::BasicBlock::Create(ctx, "null_argument", wrapper);
    llvm::BasicBlock *run = llvm::BasicBlock::Create(ctx, "run", wrapper);
    llvm::IRBuilder<> b(entry);
    llvm::Value *anyNull = b.getFalse();
    std::vector<llvm::Value *> args;
    for (auto &a : wrapper->args()) {
      args.push_back(&a);
      if (a.getType()->isPointerTy()) anyNull = b.CreateOr(anyNull, b.CreateIsNull(&a));
    }
    b.CreateCondBr(anyNull, bad, run);
    b.SetInsertPoint(bad);
    b.CreateRet(b.getInt32(1));
    b.SetInsertPoint(run);
    b.CreateCall(kernel, args);
    b.CreateRet(b.getInt32(0));
  }
}

} // namespace

std::string hostTriple() { return llvm::Triple::normalize(llvm::sys::getDefaultTargetTriple()); }

Result<CompileOutput> compile(const std::vector<EntryPoint> &entries, const TargetOptions &target, Stage stage) {
  registerEverythingOnce();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<nx::NxDialect>();
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  DiagnosticCollector diags(&ctx);

  CompileOutput out;
  // Validate the target before doing any work, so a bad --target is reported first.
  NXC_TRY(tm, createTargetMachine(target.triple, target.cpu, target.features, target.optLevel));
  out.triple = tm->getTargetTriple().str();
  out.cpu = tm->getTargetCPU().str();

  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(mlir::UnknownLoc::get(&ctx));
  for (auto &e : entries) emitNxFunction(*module, *e.graph, e.symbol);
  if (mlir::failed(mlir::verify(*module))) return internalError("building the nx dialect", diags.messages);
  if (stage == Stage::Nx) { out.text = print(*module); return out; }

  NXC_CHECK(runPipeline(*module, kToLinalg, diags, "lowering nx to linalg"));
  if (stage == Stage::Linalg) { out.text = print(*module); return out; }

  NXC_CHECK(runPipeline(*module, kToLLVMDialect, diags, "lowering linalg to the LLVM dialect"));
  if (stage == Stage::LLVMDialect) { out.text = print(*module); return out; }

  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> llvmModule = mlir::translateModuleToLLVMIR(*module, llvmCtx, "nxc");
  if (!llvmModule) return internalError("translating to LLVM IR", diags.messages);
  addEntryWrappers(*llvmModule, entries);
  prepareModuleForTarget(*llvmModule, *tm);
  std::string verifyErrors;
  llvm::raw_string_ostream ves(verifyErrors);
  if (llvm::verifyModule(*llvmModule, &ves)) return internalError("verifying LLVM IR", verifyErrors);
  optimizeModule(*llvmModule, *tm, target.optLevel);
  if (stage == Stage::LLVMIR) {
    llvm::raw_string_ostream os(out.text);
    llvmModule->print(os, nullptr);
    return out;
  }
  NXC_TRY(code, emitMachineCode(*llvmModule, *tm, stage == Stage::Asm));
  if (stage == Stage::Asm) out.text = std::move(code);
  else out.object = std::move(code);
  return out;
}

} // namespace nxc
