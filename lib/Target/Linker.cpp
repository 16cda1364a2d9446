//===- Linker.cpp - shared objects with lld, archives with LLVM -----------===//
#include "nxc/Target/Artifacts.h"
#include "nxc/Target/TargetTriple.h"

#include "nxc/Target/ObjectEmitter.h"

#include "lld/Common/Driver.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <map>

LLD_HAS_DRIVER(elf)

namespace nxc {

Status writeBytes(const std::string &path, const std::string &bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) return error(Loc{}, fmt::format(FMT_STRING("cannot write {}: {}"), path, ec.message()));
  os << bytes;
  return okStatus();
}

std::vector<std::string> undefinedSymbols(const std::string &objectBytes) {
  std::vector<std::string> names;
  auto obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(objectBytes, "module.o"));
  if (!obj) {
    llvm::consumeError(obj.takeError());
    return names;
  }
  for (const llvm::object::SymbolRef &sym : (*obj)->symbols()) {
    auto flags = sym.getFlags();
    auto name = sym.getName();
    if (!flags || !name) {
      if (!flags) llvm::consumeError(flags.takeError());
      if (!name) llvm::consumeError(name.takeError());
      continue;
    }
    if ((*flags & llvm::object::SymbolRef::SF_Undefined) && !name->empty()) names.push_back(name->str());
  }
  return names;
}

bool isLibmFunction(const std::string &name) {
  static const char *const fns[] = {"exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "pow", "sin", "cos",
                                    "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh",
                                    "acosh", "atanh", "sqrt", "cbrt", "erf", "erfc", "floor", "ceil", "trunc",
                                    "round", "rint", "fmod", "fma", "copysign", "fabs"};
  std::string base = name;
  if (!base.empty() && (base.back() == 'f' || base.back() == 'l') && base != "erf") base.pop_back();
  for (const char *f : fns)
    if (name == f || base == f) return true;
  return false;
}

namespace {

/// A shared object named `lib.soname` that defines `lib.symbols` with their
/// versions, for the target of `triple`: linking against it records
/// DT_NEEDED and the versions needed without the target's C library on this
/// machine.
Status writeStubLibrary(const NeededLibrary &lib, const std::string &triple, const std::string &path) {
  llvm::LLVMContext ctx;
  llvm::Module m("stub", ctx);
  for (auto &name : lib.symbols) {
    auto *f = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
                                     llvm::GlobalValue::ExternalLinkage, name, m);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    b.CreateRetVoid();
  }
  NXC_TRY(tm, createTargetMachine(triple, "generic", "", 0));
  prepareModuleForTarget(m, *tm);
  NXC_TRY(obj, emitMachineCode(m, *tm, false));
  // One version node per version, e.g. `GLIBC_2.3.2 { pthread_cond_wait; };`.
  std::map<std::string, std::string> nodes;
  for (size_t i = 0; i < lib.symbols.size(); ++i)
    if (!lib.versions[i].empty()) nodes[lib.versions[i]] += lib.symbols[i] + "; ";
  std::string script;
  for (auto &[version, names] : nodes) script += version + " { global: " + names + "};\n";
  std::string objPath = path + ".o", scriptPath = path + ".map";
  NXC_CHECK(writeBytes(objPath, obj));
  NXC_CHECK(writeBytes(scriptPath, script));
  std::string versionScript = "--version-script=" + scriptPath;
  std::vector<const char *> args = {"ld.lld", "-shared", "-soname", lib.soname.c_str(), "-o", path.c_str(),
                                    objPath.c_str()};
  if (!nodes.empty()) args.push_back(versionScript.c_str());
  std::string o, e;
  llvm::raw_string_ostream os(o), es(e);
  lld::Result r = lld::lldMain(args, os, es, {{lld::Gnu, &lld::elf::link}});
  llvm::sys::fs::remove(objPath);
  llvm::sys::fs::remove(scriptPath);
  if (r.retCode != 0) return error(Loc{}, fmt::format(FMT_STRING("cannot link the {} stub:\n{}"), lib.soname, e));
  return okStatus();
}

/// The glibc version a reference to `name` must name on `triple`, where the
/// oldest one (what a reference without a version binds to) is a
/// compatibility wrapper; "" elsewhere.
std::string glibcVersionFor(const std::string &name, const std::string &triple) {
  llvm::Triple t(triple);
  if (t.getArch() != llvm::Triple::x86_64 || !t.isOSGlibc()) return "";
  // The condition variables of GLIBC_2.2.5 allocate their state at first use.
  if (llvm::StringRef(name).starts_with("pthread_cond_")) return "GLIBC_2.3.2";
  return "";
}

} // namespace

std::vector<NeededLibrary> neededLibraries(const std::vector<std::string> &undefined, const std::string &triple) {
  NeededLibrary libm{"libm.so.6", {}}, libpthread{"libpthread.so.0", {}}, libc{"libc.so.6", {}};
  for (auto &name : undefined) {
    if (isLibmFunction(name)) libm.symbols.push_back(name);
    else if (llvm::StringRef(name).starts_with("pthread_")) libpthread.symbols.push_back(name);
    else if (name == "getenv" || name == "getpid" || name == "sched_getaffinity" || name == "memset" ||
             name == "memcpy" || name == "memmove")
      libc.symbols.push_back(name);
  }
  std::vector<NeededLibrary> out;
  for (auto *l : {&libm, &libpthread, &libc}) {
    for (auto &name : l->symbols) l->versions.push_back(glibcVersionFor(name, triple));
    if (!l->symbols.empty()) out.push_back(*l);
  }
  return out;
}

namespace {
std::string stubPath(const std::string &outputPath, const NeededLibrary &lib) {
  return outputPath + "." + lib.soname + ".stub";
}
} // namespace

std::vector<std::string> linkScratchFiles(const std::string &outputPath, const std::vector<NeededLibrary> &needed) {
  std::vector<std::string> out;
  for (auto &lib : needed)
    for (const char *suffix : {"", ".o", ".map"}) out.push_back(stubPath(outputPath, lib) + suffix);
  return out;
}

Status linkSharedObject(const std::vector<std::string> &objectPaths, const std::string &outputPath,
                        const std::string &soname, const std::string &triple,
                        const std::vector<NeededLibrary> &needed) {
  std::vector<const char *> args = {"ld.lld",  "-shared", "--gc-sections", "-z", "noexecstack", "-z", "relro",
                                    "--build-id", "-soname", soname.c_str(), "-o", outputPath.c_str()};
  for (auto &path : objectPaths) args.push_back(path.c_str());
  std::vector<std::string> stubs;
  for (auto &lib : needed) stubs.push_back(stubPath(outputPath, lib));
  auto removeStubs = [&] {
    for (auto &stub : stubs) llvm::sys::fs::remove(stub);
  };
  for (size_t i = 0; i < needed.size(); ++i) {
    if (Status st = writeStubLibrary(needed[i], triple, stubs[i]); !st) {
      removeStubs();
      return st;
    }
    args.push_back(stubs[i].c_str());
  }
  std::string out, err;
  llvm::raw_string_ostream os(out), es(err);
  lld::Result r = lld::lldMain(args, os, es, {{lld::Gnu, &lld::elf::link}});
  removeStubs();
  if (r.retCode != 0) return error(Loc{}, fmt::format(FMT_STRING("linking {} failed:\n{}{}"), outputPath, err, out));
  return okStatus();
}

Status writeStaticArchive(const std::vector<std::pair<std::string, std::string>> &members, const std::string &path) {
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> buffers;
  std::vector<llvm::NewArchiveMember> newMembers;
  for (auto &[name, bytes] : members) {
    buffers.push_back(llvm::MemoryBuffer::getMemBufferCopy(bytes, name));
    llvm::NewArchiveMember m(buffers.back()->getMemBufferRef());
    m.MemberName = name;
    newMembers.push_back(std::move(m));
  }
  if (llvm::Error e = llvm::writeArchive(path, newMembers, llvm::SymtabWritingMode::NormalSymtab,
                                         llvm::object::Archive::K_GNU, /*Deterministic=*/true, /*Thin=*/false)) {
    std::string msg = llvm::toString(std::move(e));
    return error(Loc{}, fmt::format(FMT_STRING("cannot write {}: {}"), path, msg));
  }
  return okStatus();
}

} // namespace nxc
