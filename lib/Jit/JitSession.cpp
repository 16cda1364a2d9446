//===- JitSession.cpp - ORC JIT linking of compiled objects ---------------===//
#include "nxc/Jit/Jit.h"
#include "nxc/Target/ABI.h"
#include "nxc/Target/ObjectEmitter.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"

#include <fmt/format.h>

namespace nxc {

JitSession::~JitSession() {
  // Worker threads must not outlive the code they run.
  for (auto stop : stopThreads_) stop();
}

Result<std::unique_ptr<JitSession>> JitSession::create() {
  initializeLLVMTargets();
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) return error(Loc{}, fmt::format(FMT_STRING("cannot start the JIT: {}"), llvm::toString(jit.takeError())));
  // Generated code may call the C library (memcpy, or libm for f64): resolve
  // those from this process.
  auto generator = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!generator)
    return error(Loc{}, fmt::format(FMT_STRING("cannot start the JIT: {}"), llvm::toString(generator.takeError())));
  (*jit)->getMainJITDylib().addGenerator(std::move(*generator));
  // print_value's calls (Printer.cpp).
  llvm::orc::MangleAndInterner mangle((*jit)->getExecutionSession(), (*jit)->getDataLayout());
  llvm::orc::SymbolMap printer;
  for (auto &[name, address] : printerSymbols())
    printer[mangle(name)] = {llvm::orc::ExecutorAddr::fromPtr(address), llvm::JITSymbolFlags::Exported};
  if (llvm::Error e = (*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(printer))))
    return error(Loc{}, fmt::format(FMT_STRING("cannot start the JIT: {}"), llvm::toString(std::move(e))));
  std::unique_ptr<JitSession> session(new JitSession());
  session->jit_ = std::move(*jit);
  return std::move(session);
}

Result<LoadedFunction> JitSession::load(const std::string &key, const std::string &object, const std::string &symbol,
                                        int64_t workspaceSize, bool threads) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = loaded_.find(key); it != loaded_.end()) return it->second;
  // Each object gets its own JITDylib, so equal symbol names never clash.
  auto dylib = jit_->createJITDylib(fmt::format(FMT_STRING("nxc{}"), next_++));
  if (!dylib) return error(Loc{}, fmt::format(FMT_STRING("JIT: {}"), llvm::toString(dylib.takeError())));
  dylib->addToLinkOrder(jit_->getMainJITDylib());
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(object, symbol + ".o");
  if (llvm::Error e = jit_->addObjectFile(*dylib, std::move(buffer)))
    return error(Loc{},
                 fmt::format(FMT_STRING("JIT: cannot load the compiled code: {}"), llvm::toString(std::move(e))));
  auto address = jit_->lookup(*dylib, abi::packedSymbol(symbol));
  if (!address) return error(Loc{}, fmt::format(FMT_STRING("JIT: {}"), llvm::toString(address.takeError())));
  if (threads) {
    auto stop = jit_->lookup(*dylib, abi::stopThreadsSymbol(symbol));
    if (!stop) return error(Loc{}, fmt::format(FMT_STRING("JIT: {}"), llvm::toString(stop.takeError())));
    stopThreads_.push_back(stop->toPtr<void (*)(void)>());
  }
  LoadedFunction f;
  f.packed = address->toPtr<int (*)(void **)>();
  f.workspaceSize = workspaceSize;
  loaded_[key] = f;
  return f;
}

} // namespace nxc
