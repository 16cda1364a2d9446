//===- ObjectEmitter.cpp - LLVM IR to machine code ------------------------===//
#include "nxc/Target/ObjectEmitter.h"
#include "nxc/Target/TargetTriple.h"

#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <fmt/format.h>

#include <iterator>
#include <mutex>

namespace nxc {

void initializeLLVMTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

std::string codegenTunings(const std::string &tripleStr) {
  return resolveTriple(tripleStr).isX86() ? "+prefer-no-gather,+prefer-no-scatter" : "";
}

Result<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const std::string &tripleStr, const std::string &cpuIn,
                                                                 const std::string &featuresIn, int optLevel) {
  initializeLLVMTargets();
  llvm::Triple triple = resolveTriple(tripleStr);
  bool isHost = isHostTarget(tripleStr);
  std::string err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target) return error(Loc{}, fmt::format(FMT_STRING("unknown target '{}': {}"), tripleStr, err));
  std::string cpu = cpuIn;
  if (cpu.empty() || cpu == "native") {
    if (cpu == "native" && !isHost) return error(Loc{}, "--cpu native is only valid when compiling for the host");
    cpu = isHost ? llvm::sys::getHostCPUName().str() : "generic";
  }
  {
    // An unknown CPU is an error here (LLVM would only warn and compile generic code).
    std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, "", ""));
    if (sti && cpu != "generic" && !sti->isCPUStringValid(cpu))
      return error(Loc{}, fmt::format(FMT_STRING("unknown CPU '{}' for {} (llc-22 -mtriple={} -mcpu=help lists them)"),
                                      cpuIn, triple.str(), triple.str()));
  }
  {
    // So is an unknown feature (LLVM would warn on every function and ignore it).
    std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, "generic", ""));
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(featuresIn).split(parts, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef part : parts) {
      llvm::StringRef f = part.trim();
      if (f.empty()) continue;
      if (f[0] != '+' && f[0] != '-')
        return error(Loc{}, fmt::format(FMT_STRING("--features: '{}' must be written +name or -name"), f.str()));
      bool known = false;
      for (const llvm::SubtargetFeatureKV &kv : sti->getAllProcessorFeatures()) known |= f.drop_front() == kv.Key;
      if (!known)
        return error(Loc{}, fmt::format(FMT_STRING("--features: unknown feature '{}' for {} (llc-22 -mtriple={} "
                                                   "-mattr=help lists them)"),
                                        f.drop_front().str(), triple.str(), triple.str()));
    }
  }
  std::string features = featuresIn;
  auto prepend = [&](const std::string &first) {
    if (!first.empty()) features = features.empty() ? first : first + "," + features;
  };
  if (isHost && (cpuIn.empty() || cpuIn == "native")) {
    // The host CPU's exact features (getHostCPUName alone may miss some).
    std::string host;
    for (auto &f : llvm::sys::getHostCPUFeatures())
      fmt::format_to(std::back_inserter(host), FMT_STRING("{}{}{}"), host.empty() ? "" : ",", f.second ? '+' : '-',
                     f.first().str());
    prepend(host);
  }
  // Linux on RISC-V 64 is rv64gc (the distributions' baseline): without a
  // --cpu, "generic" would have no F and D and call libgcc for every float
  // operation.
  if (!isHost && cpuIn.empty() && triple.isRISCV64() && triple.isOSLinux()) {
    cpu = "generic-rv64";
    prepend("+m,+a,+f,+d,+c");
  }
  prepend(codegenTunings(triple.str()));
  llvm::TargetOptions options;
  // Constructors and destructors (the CPU variant choice, the thread pool's
  // shutdown) in .init_array/.fini_array, which every ELF loader runs; lld
  // does not turn the old .ctors/.dtors into them.
  options.UseInitArray = true;
  auto level = optLevel <= 0 ? llvm::CodeGenOptLevel::None
               : optLevel == 1 ? llvm::CodeGenOptLevel::Less
               : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                               : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(triple, cpu, features, options, llvm::Reloc::PIC_, std::nullopt, level));
  if (!tm)
    return error(Loc{}, fmt::format(FMT_STRING("cannot create a code generator for {} (cpu {})"), triple.str(), cpu));
  return std::move(tm);
}

void prepareModuleForTarget(llvm::Module &module, llvm::TargetMachine &tm) {
  module.setTargetTriple(tm.getTargetTriple());
  module.setDataLayout(tm.createDataLayout());
  // Functions carry the target's CPU and features so the optimizer's cost
  // models (vector width, FMA) match the machine.
  // Bare metal has no C library: keep the optimizer from turning loops into
  // memset/memcpy calls there.
  bool freestanding = !hasOperatingSystem(tm.getTargetTriple());
  for (llvm::Function &f : module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", tm.getTargetCPU());
    if (!tm.getTargetFeatureString().empty()) f.addFnAttr("target-features", tm.getTargetFeatureString());
    if (freestanding) f.addFnAttr("no-builtins");
  }
}

Result<std::unique_ptr<llvm::Module>> loadEmbeddedBitcode(llvm::StringRef bitcode, const char *name,
                                                          llvm::LLVMContext &ctx) {
  auto module = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, name), ctx);
  if (!module)
    return internalError(Loc{}, fmt::format(FMT_STRING("cannot read the embedded {}: {}"), name,
                                    llvm::toString(module.takeError())));
  for (llvm::Function &f : **module) {
    f.removeFnAttr("target-cpu");
    f.removeFnAttr("target-features");
    f.removeFnAttr("tune-cpu");
  }
  return std::move(*module);
}

Status linkInternalBitcode(llvm::Module &m, llvm::StringRef bitcode, const char *name) {
  NXC_TRY(linked, loadEmbeddedBitcode(bitcode, name, m.getContext()));
  linked->setTargetTriple(m.getTargetTriple());
  linked->setDataLayout(m.getDataLayout());
  std::vector<std::string> functions, globals;
  for (llvm::Function &f : *linked)
    if (!f.isDeclaration()) functions.push_back(f.getName().str());
  for (llvm::GlobalVariable &g : linked->globals())  // not llvm.global_ctors and its kind
    if (!g.isDeclaration() && !g.hasAppendingLinkage()) globals.push_back(g.getName().str());
  if (llvm::Linker::linkModules(m, std::move(linked)))
    return internalError(Loc{}, fmt::format(FMT_STRING("cannot link the embedded {}"), name));
  for (auto &f : functions) m.getFunction(f)->setLinkage(llvm::GlobalValue::InternalLinkage);
  for (auto &g : globals)
    if (llvm::GlobalVariable *v = m.getNamedGlobal(g)) v->setLinkage(llvm::GlobalValue::InternalLinkage);
  return okStatus();
}

namespace {

/// Bounds on LLVM passes whose time grows faster than the code they see.
/// nxc hands LLVM fused bodies that a long defn of small tensors turns into
/// one straight-line block of 10^5 instructions (300 chained element-wise
/// lines on f32[4], loops fully unrolled); the SLP vectorizer schedules
/// regions of up to 100,000 instructions by default, which took 12-35 s of a
/// 600-line chain. Regions of 4,096 keep that at 4.5 s and vectorize the
/// same small tensors (each lane's chain lies within a few hundred
/// instructions of its neighbours). Set once, before any pipeline runs.
void boundSuperlinearPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto &options = llvm::cl::getRegisteredOptions();
    auto it = options.find("slp-schedule-budget");
    if (it != options.end())
      if (auto *budget = static_cast<llvm::cl::opt<int> *>(it->second); budget->getNumOccurrences() == 0)
        budget->setValue(4096);
  });
}

/// LLVM's standard per-module pipeline at -O`optLevel` (1 to 3).
void runStandardPipeline(llvm::Module &module, llvm::TargetMachine &tm, int optLevel) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  boundSuperlinearPasses();
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = optLevel >= 2;
  pto.SLPVectorization = optLevel >= 2;
  llvm::PassBuilder pb(&tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  auto level = optLevel == 1 ? llvm::OptimizationLevel::O1
               : optLevel == 2 ? llvm::OptimizationLevel::O2
                               : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

} // namespace

void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm, int optLevel) {
  if (optLevel > 0) runStandardPipeline(module, tm, optLevel);
  moveBF16AsBits(module);
}

Result<std::string> emitMachineCode(llvm::Module &module, llvm::TargetMachine &tm, bool assembly) {
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             assembly ? llvm::CodeGenFileType::AssemblyFile : llvm::CodeGenFileType::ObjectFile))
    return error(Loc{}, fmt::format(FMT_STRING("the code generator for {} cannot emit this file type"),
                                    tm.getTargetTriple().str()));
  pm.run(module);
  return std::string(buffer.str());
}

} // namespace nxc
