//===- CpuVariants.cpp - one module, several ISA variants -----------------===//
//
// Every function of the module is cloned once per variant, each clone
// carrying its variant's target-cpu/target-features, so the optimizer and
// the code generator specialize it (as function multiversioning does). The
// kernels become dispatchers that call their variant's clone; the exported
// entry points first make sure a variant was chosen (once: a constructor,
// or the first call if that runs earlier) and return
// NXRT_ERROR_UNSUPPORTED_CPU when the CPU supports none. Constants and the
// runtime are shared: they are not cloned.
//
// Variants exist for x86-64 and for AArch64 Linux (archFor below). The
// choice compares the CPU's features (x86: CPUID, with the OS's saved
// register state, runtime/cpu_x86.c; AArch64: the ID registers the kernel
// emulates for user space, runtime/cpu_aarch64.c; linked in as bitcode)
// against each variant's, as the tables in runtime/cpu_x86.h and
// cpu_aarch64.h name them. A variant that $NXC_CPU_VARIANT names and the CPU
// can run comes first
// (runtime/cpu_request.c): the tests run every variant the machine has.
//
//===----------------------------------------------------------------------===//
#include "CpuVariants.h"
#include "nxc/Target/TargetTriple.h"
#include "nxc/Target/ABI.h"
#include "nxc/Target/Embedded.h"
#include "nxc/Target/ObjectEmitter.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include "cpu_aarch64.h"
#include "cpu_x86.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace nxc {
namespace {

struct Feature {
  const char *name;
  int index;
};

/// What multi-variant code needs to know about one architecture.
struct Arch {
  std::vector<Feature> features;      ///< checked at run time
  std::vector<const char *> disabled; ///< turned off instead (never needed by compiled code)
  llvm::StringRef bitcode;            ///< the feature check
  const char *check;                  ///< its function
  const char *baseline;               ///< target-cpu of the dispatch code
};

const Arch *archFor(const llvm::Triple &t) {
  static const Arch x86 = {
      {
#define NXC_FEATURE_ROW(name, index, leaf, subleaf, reg, bit) {name, index},
          NXC_X86_FEATURES(NXC_FEATURE_ROW)
#undef NXC_FEATURE_ROW
      },
      // System, crypto and cache-control instructions: a VM may hide them
      // from a CPU that runs the arithmetic variant perfectly well.
      {"pclmul", "aes", "xsave", "rdrnd", "fsgsbase", "invpcid", "rdseed", "adx", "clflushopt", "clwb", "sha", "rdpid",
       "movdiri", "movdir64b", "serialize", "amx-bf16", "amx-tile", "amx-int8", "prfchw", "xsaveopt", "xsavec",
       "xsaves", "cx16", "vaes", "vpclmulqdq"},
      llvm::StringRef(NXC_EMBEDDED(cpu_x86_bc)),
      "nxc_x86_features",
      "x86-64"};
  static const Arch aarch64 = {
      {
#define NXC_FEATURE_ROW(name, index, reg, shift, min) {name, index},
          NXC_AARCH64_FEATURES(NXC_FEATURE_ROW)
#undef NXC_FEATURE_ROW
      },
      {"crc", "lse", "aes", "sha2", "sha3", "sm4", "mops", "cssc", "sme", "sme2", "mte", "rand", "pauth", "bti",
       "flagm", "predres", "sb", "ssbs", "ccdp", "ccpp", "lse128", "the", "d128", "gcs", "rcpc3", "rcpc-immo", "lor",
       "pan", "ras", "vh", "dit", "spe", "hbc", "wfxt", "ls64", "xs", "fptoint", "altnzcv", "specres2", "tlb-rmi",
       "sve2-aes", "sve2-sha3", "sve2-sm4", "sve2-bitperm", "f32mm", "f64mm", "sve-b16b16", "sve2p1", "faminmax",
       "fp8", "lut", "fprcvt", "sve2p2", "cpa", "tme", "spe-eef", "ete", "trbe", "brbe", "pmuv3", "perfmon",
       "el2vmsa", "el3", "ecv", "fgt", "amvs", "am", "chk", "mec", "rme", "sel2", "nmi", "pan-rwv", "uaops"},
      llvm::StringRef(NXC_EMBEDDED(cpu_aarch64_bc)),
      "nxc_aarch64_features",
      "generic"};
  if (!hasOperatingSystem(t)) return nullptr;
  if (t.getArch() == llvm::Triple::x86_64) return &x86;
  if (t.getArch() == llvm::Triple::aarch64 && t.isOSLinux()) return &aarch64;
  return nullptr;
}

/// The CPU name and feature string LLVM compiles `name` with.
std::pair<std::string, std::string> resolveCpu(const std::string &name) {
  if (name != "native") return {name, ""};
  std::string features;
  for (auto &f : llvm::sys::getHostCPUFeatures())
    features += fmt::format(FMT_STRING("{}{}{}"), features.empty() ? "" : ",", f.second ? '+' : '-', f.first().str());
  return {llvm::sys::getHostCPUName().str(), features};
}

} // namespace

std::vector<std::string> defaultCpuVariants() {
  std::vector<std::string> out;
  for (std::string cpu : {std::string("native"), std::string("x86-64-v3"), std::string("x86-64")}) {
    std::string resolved = resolveCpu(cpu).first;
    bool seen = false;
    for (auto &o : out) seen |= resolveCpu(o).first == resolved;
    if (!seen) out.push_back(cpu);
  }
  return out;
}

Result<std::vector<std::string>> planCpuVariants(const std::string &tripleStr, const std::string &cpuOption) {
  llvm::Triple triple = resolveTriple(tripleStr);
  bool isHost = isHostTarget(tripleStr);
  // An operating system LLVM does not know would silently mean bare metal.
  llvm::StringRef os = triple.getOSName();
  if (!hasOperatingSystem(triple) && !os.empty() && os != "none" && os != "unknown")
    return error(Loc{}, fmt::format(FMT_STRING("--target {}: unknown operating system '{}' (give a known one, such "
                                               "as linux, or none for bare metal)"),
                                    tripleStr, os.str()));
  bool x86 = triple.getArch() == llvm::Triple::x86_64 && hasOperatingSystem(triple);
  bool multi = archFor(triple) != nullptr;
  std::vector<std::string> list;
  for (size_t start = 0; start <= cpuOption.size() && !cpuOption.empty();) {
    size_t comma = cpuOption.find(',', start);
    std::string item = cpuOption.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty())
      return error(Loc{}, fmt::format(FMT_STRING("--cpu '{}': an empty CPU name in the list"), cpuOption));
    list.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (list.size() > 1 && !multi)
    return error(Loc{}, fmt::format(FMT_STRING("--cpu {}: several variants need an x86-64 target with an operating "
                                               "system or aarch64 Linux (this one is {})"),
                                    cpuOption, triple.str()));
  // AArch64: variants when a list asks for them; one version otherwise.
  if (!x86 && list.size() <= 1) return std::vector<std::string>{};
  if (list.empty()) return isHost ? defaultCpuVariants() : std::vector<std::string>{"x86-64"};
  // Unknown names are an error here, before LLVM warns about them.
  initializeLLVMTargets();
  std::string err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target) return error(Loc{}, fmt::format(FMT_STRING("unknown target '{}': {}"), tripleStr, err));
  std::unique_ptr<llvm::MCSubtargetInfo> generic(target->createMCSubtargetInfo(triple, "generic", ""));
  for (auto &cpu : list) {
    if (cpu == "native" && !isHost) return error(Loc{}, "--cpu native is only valid when compiling for the host");
    if (cpu != "native" && !generic->isCPUStringValid(cpu))
      return error(Loc{}, fmt::format(FMT_STRING("unknown CPU '{}' for {} (llc-22 -mtriple={} -mcpu=help lists them)"),
                                      cpu, triple.str(), triple.str()));
  }
  return list;
}

Result<std::vector<CpuVariant>> addCpuVariants(llvm::Module &m, const std::vector<std::string> &names,
                                               const std::string &userFeatures, const std::string &query,
                                               llvm::TargetMachine &tm, const WideVariantBodies *wide) {
  llvm::LLVMContext &ctx = m.getContext();
  const llvm::Triple &triple = tm.getTargetTriple();
  const Arch *arch = archFor(triple);
  if (!arch)
    return error(Loc{}, fmt::format(FMT_STRING("--cpu variants need an x86-64 target with an operating system or "
                                               "aarch64 Linux (this one is {})"),
                                    triple.str()));
  // What each variant needs, from LLVM's view of its CPU.
  std::vector<CpuVariant> variants;
  std::vector<uint64_t> masks;
  std::vector<std::pair<std::string, std::string>> resolved;
  std::unique_ptr<llvm::MCSubtargetInfo> generic(tm.getTarget().createMCSubtargetInfo(triple, "generic", ""));
  std::set<std::string> known; // the feature names this LLVM knows
  for (const llvm::SubtargetFeatureKV &kv : generic->getAllProcessorFeatures()) known.insert(kv.Key);
  for (auto &name : names) {
    auto [cpu, features] = resolveCpu(name);
    if (!generic->isCPUStringValid(cpu))
      return error(Loc{}, fmt::format(FMT_STRING("unknown CPU '{}' for {} (llc-22 -mtriple={} -mcpu=help lists them)"),
                                      name, triple.str(), triple.str()));
    std::string tunings = codegenTunings(triple.str());
    if (!tunings.empty()) features = features.empty() ? tunings : tunings + "," + features;
    if (!userFeatures.empty()) features = features.empty() ? userFeatures : features + "," + userFeatures;
    // Features compiled code never needs (system, crypto and cache-control
    // instructions) are turned off rather than checked: a VM may hide them
    // from a CPU that runs the arithmetic variant perfectly well.
    for (const char *f : arch->disabled)
      if (known.count(f)) features += std::string(features.empty() ? "" : ",") + "-" + f;
    std::unique_ptr<llvm::MCSubtargetInfo> sti(tm.getTarget().createMCSubtargetInfo(triple, cpu, features));
    CpuVariant v{cpu, {}};
    uint64_t mask = 0;
    for (auto &f : arch->features)
      if (sti->checkFeatures(std::string("+") + f.name)) {
        v.features.push_back(f.name);
        mask |= uint64_t(1) << f.index;
      }
    variants.push_back(v);
    masks.push_back(mask);
    resolved.push_back({cpu, features});
  }

  // The CPU check, linked in with internal linkage.
  NXC_CHECK(linkInternalBitcode(m, arch->bitcode, "cpu_check.bc"));
  llvm::Function *features = m.getFunction(arch->check);
  features->addFnAttr("target-cpu", arch->baseline);
  // A single variant has no choice to make beyond the feature check.
  llvm::Function *requested = nullptr;
  if (variants.size() > 1) {
    NXC_CHECK(linkInternalBitcode(m, NXC_EMBEDDED(cpu_request_bc), "cpu_request.bc"));
    requested = m.getFunction("nxc_cpu_variant_requested");
    requested->addFnAttr("target-cpu", arch->baseline);
  }

  // The functions to clone: everything defined except the entry points
  // (external) and the CPU check.
  std::vector<llvm::Function *> bodies, entries;
  for (llvm::Function &f : m) {
    if (f.isDeclaration() || &f == features || &f == requested) continue;
    (f.hasExternalLinkage() ? entries : bodies).push_back(&f);
  }
  // The wide module's bodies, and what its globals and declarations are in
  // `m`: the same constant where `m` has it (constants are uniqued per
  // context, so equal data is the same pointer), a copy otherwise.
  std::vector<llvm::Function *> wideBodies;
  llvm::ValueToValueMapTy wideGlobals;
  if (wide && wide->module) {
    for (llvm::Function &f : *wide->module) {
      if (!f.isDeclaration()) {
        wideBodies.push_back(&f);
        continue;
      }
      llvm::Function *same = m.getFunction(f.getName());
      if (same && same->getFunctionType() != f.getFunctionType())
        return internalError(Loc{}, "the wide-block lowering declares " + f.getName().str() +
                                " with another type");
      wideGlobals[&f] = same ? same : llvm::Function::Create(f.getFunctionType(), f.getLinkage(), f.getName(), m);
    }
    for (llvm::GlobalVariable &g : wide->module->globals()) {
      if (g.getName().starts_with("llvm."))
        return internalError(Loc{}, "the wide-block lowering has " + g.getName().str());
      llvm::GlobalVariable *same = m.getGlobalVariable(g.getName(), true);
      if (same && same->getValueType() == g.getValueType() && same->isConstant() == g.isConstant() &&
          same->hasInitializer() == g.hasInitializer() &&
          (!g.hasInitializer() || same->getInitializer() == g.getInitializer())) {
        wideGlobals[&g] = same;
        continue;
      }
      auto *copy = new llvm::GlobalVariable(m, g.getValueType(), g.isConstant(), g.getLinkage(), nullptr,
                                            g.getName() + ".wide", nullptr, g.getThreadLocalMode(),
                                            g.getAddressSpace());
      copy->copyAttributesFrom(&g);
      wideGlobals[&g] = copy;
    }
    for (llvm::GlobalVariable &g : wide->module->globals())
      if (g.hasInitializer()) {
        auto *copy = llvm::cast<llvm::GlobalVariable>(&*wideGlobals[&g]);
        if (copy->getName().ends_with(".wide"))
          copy->setInitializer(llvm::MapValue(g.getInitializer(), wideGlobals));
      }
  }
  auto wideFor = [&](size_t k) { return !wideBodies.empty() && k < wide->used.size() && wide->used[k]; };

  // Variant k's clones of `sources` (the module's bodies, or the wide
  // lowering's), each carrying the variant's CPU and features.
  std::vector<std::map<llvm::Function *, llvm::Function *>> clones(variants.size());
  for (size_t k = 0; k < variants.size(); ++k) {
    bool fromWide = wideFor(k);
    const std::vector<llvm::Function *> &sources = fromWide ? wideBodies : bodies;
    llvm::ValueToValueMapTy vmap;
    if (fromWide)
      for (auto entry : wideGlobals) vmap[entry.first] = entry.second;
    for (llvm::Function *f : sources) {
      llvm::Function *c = llvm::Function::Create(f->getFunctionType(), llvm::GlobalValue::InternalLinkage,
                                                 f->getName() + ".v" + std::to_string(k), m);
      vmap[f] = c;
      clones[k][f] = c;
    }
    for (llvm::Function *f : sources) {
      llvm::Function *c = clones[k][f];
      auto arg = c->arg_begin();
      for (llvm::Argument &a : f->args()) vmap[&a] = &*arg++;
      llvm::SmallVector<llvm::ReturnInst *, 4> returns;
      llvm::CloneFunctionInto(c, f, vmap,
                              fromWide ? llvm::CloneFunctionChangeType::DifferentModule
                                       : llvm::CloneFunctionChangeType::LocalChangesOnly,
                              returns);
      c->setLinkage(llvm::GlobalValue::InternalLinkage);
      c->addFnAttr("target-cpu", resolved[k].first);
      if (resolved[k].second.empty()) c->removeFnAttr("target-features");
      else c->addFnAttr("target-features", resolved[k].second);
    }
  }

  // The choice: -2 not made yet, -1 no variant fits, else the variant.
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx), *i64 = llvm::Type::getInt64Ty(ctx);
  auto *choice = new llvm::GlobalVariable(m, i32, false, llvm::GlobalValue::InternalLinkage,
                                          llvm::ConstantInt::get(i32, -2), "nxc_cpu_variant");
  llvm::Function *choose = llvm::Function::Create(llvm::FunctionType::get(i32, false),
                                                  llvm::GlobalValue::InternalLinkage, "nxc_choose_cpu_variant", m);
  choose->addFnAttr("target-cpu", arch->baseline);
  {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", choose));
    llvm::Value *have = b.CreateCall(features);
    auto fits = [&](size_t k) {
      llvm::Value *need = llvm::ConstantInt::get(i64, masks[k]);
      return b.CreateICmpEQ(b.CreateAnd(have, need), need);
    };
    // The variant $NXC_CPU_VARIANT names, if the CPU can run it.
    for (size_t k = 0; requested && k < variants.size(); ++k) {
      llvm::Value *asked = b.CreateICmpNE(
          b.CreateCall(requested, {b.CreateGlobalString(variants[k].cpu, "nxc_variant_request")}), b.getInt32(0));
      llvm::BasicBlock *yes = llvm::BasicBlock::Create(ctx, "requested", choose),
                       *no = llvm::BasicBlock::Create(ctx, "not_requested", choose);
      b.CreateCondBr(b.CreateAnd(asked, fits(k)), yes, no);
      b.SetInsertPoint(yes);
      b.CreateAlignedStore(b.getInt32((int)k), choice, llvm::MaybeAlign(4))->setAtomic(llvm::AtomicOrdering::Monotonic);
      b.CreateRet(b.getInt32((int)k));
      b.SetInsertPoint(no);
    }
    for (size_t k = 0; k < variants.size(); ++k) {
      llvm::BasicBlock *yes = llvm::BasicBlock::Create(ctx, "fits", choose),
                       *no = llvm::BasicBlock::Create(ctx, "next", choose);
      b.CreateCondBr(fits(k), yes, no);
      b.SetInsertPoint(yes);
      b.CreateAlignedStore(b.getInt32((int)k), choice, llvm::MaybeAlign(4))->setAtomic(llvm::AtomicOrdering::Monotonic);
      b.CreateRet(b.getInt32((int)k));
      b.SetInsertPoint(no);
    }
    b.CreateAlignedStore(b.getInt32(-1), choice, llvm::MaybeAlign(4))->setAtomic(llvm::AtomicOrdering::Monotonic);
    b.CreateRet(b.getInt32(-1));
  }
  llvm::appendToGlobalCtors(m, llvm::cast<llvm::Function>(llvm::Function::Create(
                                   llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
                                   llvm::GlobalValue::InternalLinkage, "nxc_cpu_variant_init", m)),
                            65535);
  {
    llvm::Function *init = m.getFunction("nxc_cpu_variant_init");
    init->addFnAttr("target-cpu", arch->baseline);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", init));
    b.CreateCall(choose);
    b.CreateRetVoid();
  }
  /// The variant in use, choosing it if no constructor ran yet.
  auto current = [&](llvm::IRBuilder<> &b, llvm::Function *f) -> llvm::Value * {
    llvm::LoadInst *v = b.CreateAlignedLoad(i32, choice, llvm::MaybeAlign(4));
    v->setAtomic(llvm::AtomicOrdering::Monotonic);
    llvm::BasicBlock *from = b.GetInsertBlock();
    llvm::BasicBlock *pick = llvm::BasicBlock::Create(ctx, "choose", f),
                     *have = llvm::BasicBlock::Create(ctx, "chosen", f);
    b.CreateCondBr(b.CreateICmpEQ(v, b.getInt32(-2)), pick, have);
    b.SetInsertPoint(pick);
    llvm::Value *picked = b.CreateCall(choose);
    b.CreateBr(have);
    b.SetInsertPoint(have);
    llvm::PHINode *phi = b.CreatePHI(i32, 2);
    phi->addIncoming(v, from);
    phi->addIncoming(picked, pick);
    return phi;
  };

  // Kernels (what the entry points call) dispatch to their variant.
  for (llvm::Function *f : bodies) {
    if (!f->getName().starts_with("__nxc_kernel_")) continue;
    f->deleteBody();
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    llvm::Value *v = current(b, f);
    std::vector<llvm::Value *> args;
    for (llvm::Argument &a : f->args()) args.push_back(&a);
    llvm::BasicBlock *last = llvm::BasicBlock::Create(ctx, "v" + std::to_string(variants.size() - 1), f);
    llvm::SwitchInst *sw = b.CreateSwitch(v, last, (unsigned)variants.size());
    for (size_t k = 0; k < variants.size(); ++k) {
      llvm::BasicBlock *bb =
          k + 1 == variants.size() ? last : llvm::BasicBlock::Create(ctx, "v" + std::to_string(k), f);
      if (k + 1 < variants.size()) sw->addCase(b.getInt32((int)k), bb);
      llvm::IRBuilder<> cb(bb);
      llvm::Function *target = clones[k][f];
      if (wideFor(k)) {
        llvm::Function *same = wide->module->getFunction(f->getName());
        if (!same || same->isDeclaration() || same->getFunctionType() != f->getFunctionType())
          return internalError(Loc{}, "the wide-block lowering has no kernel " + f->getName().str());
        target = clones[k][same];
      }
      cb.CreateCall(target, args);
      cb.CreateRetVoid();
    }
  }
  // Entry points returning a status refuse to run on a CPU no variant fits.
  for (llvm::Function *f : entries) {
    if (!f->getReturnType()->isIntegerTy(32)) continue;
    llvm::BasicBlock *body = &f->getEntryBlock();
    llvm::BasicBlock *guard = llvm::BasicBlock::Create(ctx, "cpu_check", f, body);
    llvm::IRBuilder<> b(guard);
    llvm::Value *v = current(b, f);
    llvm::BasicBlock *refuse = llvm::BasicBlock::Create(ctx, "unsupported_cpu", f);
    b.CreateCondBr(b.CreateICmpSLT(v, b.getInt32(0)), refuse, body);
    llvm::IRBuilder<> rb(refuse);
    rb.CreateRet(rb.getInt32(abi::kUnsupportedCpu));
  }
  // const char *QUERY(void): the variant in use, or what the CPU lacks.
  if (!query.empty()) {
    llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
    llvm::Function *q = llvm::Function::Create(llvm::FunctionType::get(ptr, false), llvm::GlobalValue::ExternalLinkage,
                                               query, m);
    q->addFnAttr("target-cpu", arch->baseline);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", q));
    llvm::Value *v = current(b, q);
    std::string lacking = "none: this CPU lacks features that every variant needs (the least demanding, " +
                          variants.back().cpu + ", needs";
    if (variants.back().features.empty()) lacking += " nothing beyond the baseline";
    for (auto &f : variants.back().features) lacking += " " + f;
    lacking += ")";
    llvm::BasicBlock *none = llvm::BasicBlock::Create(ctx, "none", q);
    llvm::SwitchInst *sw = b.CreateSwitch(v, none, (unsigned)variants.size());
    for (size_t k = 0; k < variants.size(); ++k) {
      llvm::BasicBlock *bb = llvm::BasicBlock::Create(ctx, "v" + std::to_string(k), q);
      sw->addCase(b.getInt32((int)k), bb);
      llvm::IRBuilder<> cb(bb);
      cb.CreateRet(cb.CreateGlobalString(variants[k].cpu, "nxc_variant_name"));
    }
    llvm::IRBuilder<> nb(none);
    nb.CreateRet(nb.CreateGlobalString(lacking, "nxc_variant_none"));
  }
  return variants;
}

} // namespace nxc
