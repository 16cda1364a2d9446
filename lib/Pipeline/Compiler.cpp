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
#include "nxc/Target/TargetTriple.h"
#include "nxc/Target/ABI.h"
#include "BeamNif.h"
#include "CpuVariants.h"
#include "ParallelDispatch.h"
#include "PipelineSupport.h"
#include "StackOffset.h"
#include "nxc/Conversion/GraphToNx.h"
#include "nxc/Conversion/Passes.h"
#include "nxc/Dialect/Nx/NxDialect.h"
#include "nxc/Target/Artifacts.h"
#include "nxc/Target/Embedded.h"
#include "nxc/Target/ObjectEmitter.h"
#include "nxc/Transforms/Passes.h"
#include "nxc/Transforms/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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
#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/MC/MCSubtargetInfo.h"

#include <algorithm>
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <fmt/format.h>

#include <mutex>

namespace nxc {
namespace {

/// The vector width nxc's register blocks are sized for, per CPU variant (or
/// for the one CPU when there are none): 512 bits where the CPU has
/// AVX-512F, else 256. When the variants differ, the module is lowered once
/// per width and each variant clones the bodies of its own.
std::vector<int> blockVectorBits(const TargetOptions &target, llvm::TargetMachine &tm) {
  auto has512 = [](llvm::TargetMachine &m) {
    return m.getTargetTriple().isX86() && m.getMCSubtargetInfo()->checkFeatures("+avx512f");
  };
  if (target.variants.empty()) return {has512(tm) ? 512 : 256};
  std::vector<int> bits;
  for (const std::string &cpu : target.variants) {
    auto variant = createTargetMachine(target.triple, cpu, target.features, target.optLevel);
    bits.push_back(variant && has512(**variant) ? 512 : 256);
  }
  return bits;
}

void registerEverythingOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    mlir::registerAllPasses();
    registerConversionPasses();
    registerTransformPasses();
  });
}

} // namespace

namespace detail {

DiagnosticCollector::DiagnosticCollector(mlir::MLIRContext *ctx)
    : handler(ctx, [this](mlir::Diagnostic &d) {
        llvm::raw_string_ostream os(messages);
        os << d.getLocation() << ": " << d << "\n";
        return mlir::success();
      }) {}

Diag internalError(const std::string &what, const std::string &details) {
  Diag d = error(Loc{}, fmt::format(FMT_STRING("internal compiler error while {}{}{}"), what,
                                    details.empty() ? "" : ":\n", details));
  d.kind = DiagKind::Internal;
  return d;
}

Status runPipeline(mlir::ModuleOp module, const std::string &pipeline, DiagnosticCollector &diags,
                   const std::string &what) {
  mlir::PassManager pm(module.getContext());
  std::string parseErrors;
  llvm::raw_string_ostream es(parseErrors);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, es)))
    return internalError("building the pass pipeline", parseErrors);
  if (mlir::failed(pm.run(module))) return internalError(what, diags.messages);
  return okStatus();
}

std::string print(mlir::ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module.print(os);
  return s;
}

/// Parallel bodies carry their thread count and per-thread workspace into
/// LLVM IR as function attributes, for addParallelDispatch.
void readWorkspaceSizes(mlir::ModuleOp module, std::vector<EntryInfo> &entries) {
  for (auto &e : entries)
    if (auto fn = module.lookupSymbol<mlir::func::FuncOp>(e.symbol)) {
      if (auto size = fn->getAttrOfType<mlir::IntegerAttr>(kWorkspaceSizeAttr)) e.workspaceSize = size.getInt();
      fn.walk([&](mlir::func::CallOp call) {
        if (auto callee = module.lookupSymbol<mlir::func::FuncOp>(call.getCallee()))
          e.parallelLoops += callee->hasAttr(kParallelBodyAttr);
      });
    }
}

} // namespace detail

namespace {

using namespace detail;

/// Names the kernel of entry `symbol` as the entry points call it, internal.
/// The header's contract: an output overlaps no other argument, inputs are
/// only read, and the workspace is the kernel's own. That is `noalias`,
/// which lets LLVM keep accumulators in registers and vectorize freely.
void markKernel(llvm::Function &kernel, const std::string &symbol) {
  kernel.setName("__nxc_kernel_" + symbol);
  kernel.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::Argument &a : kernel.args())
    if (a.getType()->isPointerTy()) a.addAttr(llvm::Attribute::NoAlias);
}

/// Renames each kernel `symbol(inputs..., outputs..., workspace)` to an
/// internal symbol and exports the C entry points around it:
///   int32_t symbol_with_workspace(inputs..., outputs..., void *workspace)
///   int32_t symbol(inputs..., outputs...)      (workspace on the stack, if allowed)
///   size_t  symbol_workspace_size(void)
/// The entries return NXRT_ERROR_NULL_ARGUMENT if a tensor pointer is NULL and
/// NXRT_ERROR_BAD_WORKSPACE if a needed workspace is NULL or misaligned.
void addEntryWrappers(llvm::Module &m, std::vector<EntryInfo> &entries, const llvm::DataLayout &dl,
                      const llvm::Triple &triple, int64_t stackLimit, bool packed) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *sizeTy = dl.getIntPtrType(ctx);
  // Kernels are called with their frame away from their constants (StackOffset.cpp).
  llvm::GlobalVariable *anchor = addConstantsAnchor(m, triple);
  for (auto &e : entries) {
    llvm::Function *kernel = m.getFunction(e.symbol);
    if (!kernel) continue;
    markKernel(*kernel, e.symbol);
    llvm::ArrayRef<llvm::Type *> params = kernel->getFunctionType()->params();
    size_t tensors = params.size() - 1; // the last parameter is the workspace

    auto define = [&](const std::string &name, llvm::Type *ret, llvm::ArrayRef<llvm::Type *> ps) {
      llvm::Function *f = llvm::Function::Create(llvm::FunctionType::get(ret, ps, false),
                                                 llvm::GlobalValue::ExternalLinkage, name, m);
      f->addFnAttr(llvm::Attribute::NoUnwind);
      return f;
    };
    // Checks the tensor pointers, then calls the kernel with `workspace`.
    auto body = [&](llvm::Function *f, llvm::IRBuilder<> &b, llvm::Value *workspace, llvm::Value *badWorkspace) {
      llvm::BasicBlock *run = llvm::BasicBlock::Create(ctx, "run", f);
      llvm::BasicBlock *nullArg = llvm::BasicBlock::Create(ctx, "null_argument", f);
      std::vector<llvm::Value *> args;
      llvm::Value *anyNull = b.getFalse();
      for (size_t i = 0; i < tensors; ++i) {
        args.push_back(f->getArg(i));
        anyNull = b.CreateOr(anyNull, b.CreateIsNull(f->getArg(i)));
      }
      args.push_back(workspace);
      if (badWorkspace) {
        llvm::BasicBlock *checkWs = llvm::BasicBlock::Create(ctx, "check_workspace", f);
        llvm::BasicBlock *badWs = llvm::BasicBlock::Create(ctx, "bad_workspace", f);
        b.CreateCondBr(anyNull, nullArg, checkWs);
        b.SetInsertPoint(checkWs);
        b.CreateCondBr(badWorkspace, badWs, run);
        b.SetInsertPoint(badWs);
        b.CreateRet(b.getInt32(abi::kBadWorkspace));
      } else {
        b.CreateCondBr(anyNull, nullArg, run);
      }
      b.SetInsertPoint(nullArg);
      b.CreateRet(b.getInt32(abi::kNullArgument));
      b.SetInsertPoint(run);
      callAtStackOffset(b, kernel, args, anchor);
      b.CreateRet(b.getInt32(abi::kOk));
    };

    // symbol_with_workspace
    {
      llvm::Function *f = define(abi::withWorkspaceSymbol(e.symbol), llvm::Type::getInt32Ty(ctx), params);
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
      llvm::Value *ws = f->getArg(tensors);
      llvm::Value *bad = nullptr;
      if (e.workspaceSize > 0) {
        llvm::Value *addr = b.CreatePtrToInt(ws, sizeTy);
        llvm::Value *misaligned =
            b.CreateICmpNE(b.CreateAnd(addr, llvm::ConstantInt::get(sizeTy, abi::kBufferAlignment - 1)),
                           llvm::ConstantInt::get(sizeTy, 0));
        bad = b.CreateOr(b.CreateIsNull(ws), misaligned);
      }
      body(f, b, ws, bad);
    }
    // symbol: the workspace on the stack when it is small enough.
    e.plainVariant = e.workspaceSize <= stackLimit;
    if (e.plainVariant) {
      llvm::Function *f = define(e.symbol, llvm::Type::getInt32Ty(ctx), params.drop_back());
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
      llvm::Value *ws = llvm::ConstantPointerNull::get(llvm::PointerType::get(ctx, 0));
      if (e.workspaceSize > 0) {
        auto *alloca = b.CreateAlloca(llvm::ArrayType::get(b.getInt8Ty(), e.workspaceSize), nullptr, "workspace");
        alloca->setAlignment(llvm::Align(abi::kBufferAlignment));
        ws = alloca;
      }
      body(f, b, ws, nullptr);
    }
    // symbol_packed(void **argv): unpacks argv and calls symbol_with_workspace;
    // symbol_packed_layout: {inputs, outputs, bytes of each}, so that a caller
    // without the header (a NIF) can check its arguments first.
    if (packed) {
      llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
      size_t outputs = e.tensorBytes.size() - e.inputs;
      std::vector<llvm::Constant *> layout = {llvm::ConstantInt::get(i64, e.inputs),
                                              llvm::ConstantInt::get(i64, outputs)};
      for (int64_t bytes : e.tensorBytes) layout.push_back(llvm::ConstantInt::get(i64, bytes));
      auto *type = llvm::ArrayType::get(i64, layout.size());
      new llvm::GlobalVariable(m, type, true, llvm::GlobalValue::ExternalLinkage,
                               llvm::ConstantArray::get(type, layout), abi::packedLayoutSymbol(e.symbol));
      llvm::Function *withWs = m.getFunction(abi::withWorkspaceSymbol(e.symbol));
      llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
      llvm::Function *f = define(abi::packedSymbol(e.symbol), llvm::Type::getInt32Ty(ctx), {ptr});
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
      std::vector<llvm::Value *> args;
      for (size_t i = 0; i < params.size(); ++i)
        args.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, f->getArg(0), i)));
      b.CreateRet(b.CreateCall(withWs, args));
    }
    // symbol_workspace_size
    {
      llvm::Function *f = define(abi::workspaceSizeSymbol(e.symbol), sizeTy, {});
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
      b.CreateRet(llvm::ConstantInt::get(sizeTy, e.workspaceSize));
    }
  }
}

} // namespace

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
  out.bareMetal = !hasOperatingSystem(tm->getTargetTriple());
  if (target.threads > 1 && out.bareMetal)
    return error(Loc{}, fmt::format(FMT_STRING("--threads {}: bare-metal targets ({}) have no threads; their code "
                                               "runs on the calling core only"),
                                    target.threads, out.triple));

  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(mlir::UnknownLoc::get(&ctx));
  for (auto &e : entries)
    if (auto built = emitNxFunction(*module, *e.graph, e.symbol); !built) {
      // A graph from a file is the user's; one Sema traced is ours.
      if (!built.error().loc.pointer.empty()) return built.error();
      return internalError("building the nx dialect", built.error().render());
    }
  if (mlir::failed(mlir::verify(*module))) return internalError("building the nx dialect", diags.messages);
  if (stage == Stage::Nx) { out.text = print(*module); return out; }

  // The printed stages before LLVM IR show the narrowest variant's blocks.
  std::vector<int> blockBits = blockVectorBits(target, *tm);
  int narrowBits = *std::min_element(blockBits.begin(), blockBits.end());
  mlir::OwningOpRef<mlir::ModuleOp> wideModule;
  if (target.device == Device::Cpu && narrowBits < 512 && llvm::is_contained(blockBits, 512) &&
      (stage == Stage::LLVMIR || stage == Stage::Asm || stage == Stage::Object))
    wideModule = module->clone();
  CpuPipelineChoices choices{out.bareMetal, narrowBits, target.threads, target.minParallelWork,
                             streamsLargeOutputs(tm->getTargetTriple()), checksFastExtrema(tm->getTargetTriple())};
  NXC_CHECK(runPipeline(*module, target.device != Device::Cpu ? gpuToLinalgPipeline() : cpuToLinalgPipeline(choices),
                        diags, "lowering nx to linalg"));
  if (stage == Stage::Linalg) { out.text = print(*module); return out; }

  for (auto &e : entries) {
    out.entries.push_back(EntryInfo{e.symbol, 0, false});
    out.entries.back().inputs = (unsigned)e.graph->params.size();
    for (const std::vector<int> *ids : {&e.graph->params, &e.graph->results})
      for (int id : *ids) {
        const TensorType &t = e.graph->typeOf(id);
        out.entries.back().tensorBytes.push_back(t.numElements() * t.elem.bytes());
      }
  }
  if (target.device != Device::Cpu)
    for (auto &e : entries)
      if (e.graph->printing)
        for (auto &n : e.graph->nodes)
          if (n.op == Op::PrintValue)
            return error(n.loc, "print_value cannot print from GPU code (a kernel cannot call back into the host); "
                                "run this function with --device cpu to see its values");
  if (target.device == Device::Cuda) {
    NXC_CHECK(compileCuda(*module, target, stage, *tm, diags, out));
    return out;
  }
  if (target.device == Device::CudaEmulated) {
    NXC_CHECK(runPipeline(*module, kBufferizeForGpu, diags, "bufferizing"));
    if (stage == Stage::Bufferized) { out.text = print(*module); return out; }
    NXC_CHECK(runPipeline(*module, kEmulatedGpu, diags, "mapping to the GPU (emulated)"));
    readWorkspaceSizes(*module, out.entries);
    if (stage == Stage::Gpu) { out.text = print(*module); return out; }
  } else {
    NXC_CHECK(runPipeline(*module, cpuBufferizePipeline(choices), diags, "bufferizing"));
    readWorkspaceSizes(*module, out.entries);
    if (stage == Stage::Bufferized) { out.text = print(*module); return out; }
  }
  NXC_CHECK(runPipeline(*module, cpuToLLVMDialectPipeline(choices), diags, "lowering to the LLVM dialect"));
  if (stage == Stage::LLVMDialect) { out.text = print(*module); return out; }

  // The AVX-512 variants' lowering, with 512-bit register blocks; their
  // workspace is the larger of the two.
  if (wideModule) {
    CpuPipelineChoices wide = choices;
    wide.vectorBits = 512;
    NXC_CHECK(runPipeline(*wideModule, cpuToLinalgPipeline(wide), diags, "lowering nx to linalg"));
    NXC_CHECK(runPipeline(*wideModule, cpuBufferizePipeline(wide), diags, "bufferizing"));
    std::vector<EntryInfo> wideEntries = out.entries;
    readWorkspaceSizes(*wideModule, wideEntries);
    for (size_t i = 0; i < out.entries.size(); ++i)
      out.entries[i].workspaceSize = std::max(out.entries[i].workspaceSize, wideEntries[i].workspaceSize);
    NXC_CHECK(runPipeline(*wideModule, cpuToLLVMDialectPipeline(wide), diags, "lowering to the LLVM dialect"));
  }

  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> llvmModule = mlir::translateModuleToLLVMIR(*module, llvmCtx, "nxc");
  if (!llvmModule) return internalError("translating to LLVM IR", diags.messages);
  std::unique_ptr<llvm::Module> wideLlvmModule;
  if (wideModule) {
    wideLlvmModule = mlir::translateModuleToLLVMIR(*wideModule, llvmCtx, "nxc-wide");
    if (!wideLlvmModule) return internalError("translating to LLVM IR", diags.messages);
    for (auto &e : out.entries)
      if (llvm::Function *kernel = wideLlvmModule->getFunction(e.symbol)) markKernel(*kernel, e.symbol);
    for (llvm::Function &f : *wideLlvmModule)
      if (!f.isDeclaration()) f.setLinkage(llvm::GlobalValue::InternalLinkage);
    prepareModuleForTarget(*wideLlvmModule, *tm);
    // The streaming stores' cache-size query is linked in below where the
    // module declares it.
    if (llvm::Function *query = wideLlvmModule->getFunction(kCacheBytesQuery))
      llvmModule->getOrInsertFunction(kCacheBytesQuery, query->getFunctionType());
  }
  int64_t stackLimit = target.stackWorkspaceLimit >= 0 ? target.stackWorkspaceLimit
                       : hasOperatingSystem(tm->getTargetTriple()) ? kDefaultStackWorkspaceLimit
                                                                   : 0;
  addEntryWrappers(*llvmModule, out.entries, tm->createDataLayout(), tm->getTargetTriple(), stackLimit,
                   target.packedEntries);
  if (!target.beamNifModule.empty()) {
    if (out.bareMetal)
      return error(Loc{}, "--nif needs a target with an operating system (the BEAM loads the library)");
    NXC_CHECK(addBeamNif(*llvmModule, out.entries, target.beamNifModule,
                         tm->createDataLayout().getPointerSizeInBits() == 64));
  }
  // Parallel bodies are the module's own (private in MLIR, external after
  // translation): internal, so that each CPU variant gets its own copy.
  for (llvm::Function &f : *llvmModule)
    if (f.hasFnAttribute(kParallelBodyFnAttr)) f.setLinkage(llvm::GlobalValue::InternalLinkage);
  // Streaming stores ask for the cache size (runtime/cache_x86.c).
  if (llvm::Function *query = llvmModule->getFunction(kCacheBytesQuery); query && query->isDeclaration())
    NXC_CHECK(linkInternalBitcode(*llvmModule, NXC_EMBEDDED(cache_x86_bc), "cache_x86.bc"));
  prepareModuleForTarget(*llvmModule, *tm);
  if (!target.variants.empty()) {
    WideVariantBodies wide;
    if (wideLlvmModule) {
      wide.module = wideLlvmModule.get();
      for (int bits : blockBits) wide.used.push_back(bits == 512);
    }
    NXC_TRY(variants,
            addCpuVariants(*llvmModule, target.variants, target.features, target.variantQuery, *tm, &wide));
    out.variants = std::move(variants);
  }
  if (target.threads > 1 && target.device == Device::Cpu)
    NXC_CHECK(addParallelDispatch(*llvmModule, target.threads, target.threadExportPrefix));
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
