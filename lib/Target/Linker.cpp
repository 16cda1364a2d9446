//===- Linker.cpp - shared objects with lld, archives with LLVM -----------===//
#include "nxc/Target/Artifacts.h"

#include "lld/Common/Driver.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

LLD_HAS_DRIVER(elf)

namespace nxc {

Status linkSharedObject(const std::string &objectPath, const std::string &outputPath, const std::string &soname,
                        const std::string &triple) {
  std::vector<const char *> args = {"ld.lld",  "-shared", "--gc-sections", "-z", "noexecstack", "-z", "relro",
                                    "--build-id", "-soname", soname.c_str(), "-o", outputPath.c_str(),
                                    objectPath.c_str()};
  (void)triple;
  std::string out, err;
  llvm::raw_string_ostream os(out), es(err);
  lld::Result r = lld::lldMain(args, os, es, {{lld::Gnu, &lld::elf::link}});
  if (r.retCode != 0) return error(Loc{}, "linking " + outputPath + " failed:\n" + err + out);
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
    return error(Loc{}, "cannot write " + path + ": " + msg);
  }
  return okStatus();
}

} // namespace nxc
