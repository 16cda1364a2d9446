//===- BeamNif.cpp - a module as its own Erlang NIF library -------------===//
//
// With TargetOptions::beamNifModule, the module links runtime/beam_nif.c (as
// bitcode, embedded in nxc when it was built with erl_nif.h) and defines what
// that file leaves to it: the Erlang module's name and the table of the
// module's functions (name, FN_packed, FN_packed_layout, FN_workspace_size).
// Only `nif_init` is exported besides the module's own entry points; the
// BEAM resolves the enif_* functions when it loads the object.
//
//===----------------------------------------------------------------------===//
#include "BeamNif.h"

#include "nxc/Target/ABI.h"
#include "nxc/Target/Embedded.h"
#include "nxc/Target/ObjectEmitter.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"

#include <fmt/format.h>

#include <cctype>

namespace nxc {

bool beamNifAvailable() { return !NXC_EMBEDDED(beam_nif64_bc).empty(); }

Status addBeamNif(llvm::Module &m, const std::vector<EntryInfo> &entries, const std::string &erlangModule,
                  bool pointers64) {
  if (!pointers64)
    return error(Loc{}, "--nif supports 64-bit targets so far (x86-64, aarch64, riscv64 Linux)");
  if (!beamNifAvailable())
    return error(Loc{},
                 "--nif: this nxc was built without Erlang's erl_nif.h (install erlang-dev and build nxc again)");
  llvm::LLVMContext &ctx = m.getContext();
  NXC_CHECK(linkInternalBitcode(m, NXC_EMBEDDED(beam_nif64_bc), "beam_nif.bc"));
  llvm::Function *init = m.getFunction("nif_init");
  if (!init) return internalError(Loc{}, "the embedded NIF has no nif_init");
  init->setLinkage(llvm::GlobalValue::ExternalLinkage);
  init->setVisibility(llvm::GlobalValue::DefaultVisibility);

  // Replaces the declaration `name` left by beam_nif.c with a definition.
  auto define = [&](const char *name, llvm::Constant *value) -> Status {
    llvm::GlobalVariable *declared = m.getNamedGlobal(name);
    if (!declared || !declared->isDeclaration())
      return internalError(Loc{}, fmt::format(FMT_STRING("the embedded NIF does not declare {}"), name));
    auto *g = new llvm::GlobalVariable(m, value->getType(), true, llvm::GlobalValue::InternalLinkage, value,
                                       std::string(name) + ".definition");
    declared->replaceAllUsesWith(g);
    declared->eraseFromParent();
    g->setName(name);
    return okStatus();
  };
  NXC_CHECK(define("nxc_nif_module_name", llvm::ConstantDataArray::getString(ctx, erlangModule)));
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  auto *row = llvm::StructType::get(ctx, {ptr, ptr, ptr, ptr});
  std::vector<llvm::Constant *> rows;
  for (const EntryInfo &e : entries) {
    llvm::Function *packed = m.getFunction(abi::packedSymbol(e.symbol));
    llvm::GlobalVariable *layout = m.getNamedGlobal(abi::packedLayoutSymbol(e.symbol));
    llvm::Function *workspace = m.getFunction(abi::workspaceSizeSymbol(e.symbol));
    if (!packed || !layout || !workspace)
      return internalError(Loc{}, fmt::format(FMT_STRING("{} has no packed entry for the NIF"), e.symbol));
    llvm::Constant *nameText = llvm::ConstantDataArray::getString(ctx, e.symbol);
    auto *name = new llvm::GlobalVariable(m, nameText->getType(), true, llvm::GlobalValue::PrivateLinkage, nameText,
                                          "nxc_nif_name");
    rows.push_back(llvm::ConstantStruct::get(row, {name, packed, layout, workspace}));
  }
  NXC_CHECK(define("nxc_nif_functions", llvm::ConstantArray::get(llvm::ArrayType::get(row, rows.size()), rows)));
  NXC_CHECK(define("nxc_nif_function_count",
                   llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), (uint64_t)entries.size())));
  return okStatus();
}

bool validErlangModuleName(const std::string &name) {
  if (name.empty() || name.size() > 255) return false;
  for (char c : name)
    if (!(std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '@')) return false;
  return true;
}

} // namespace nxc
