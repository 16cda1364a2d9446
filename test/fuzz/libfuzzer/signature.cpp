//===- signature.cpp - fuzz --fn signatures and templates -------------------===//
#include "FuzzTarget.h"

#include "nxc/Sema/Signature.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto sig = nxc::parseSignature(nxc::fuzz::source(data, size, "--fn"));
  nxc::fuzz::checkResult(sig);
  if (sig) {
    (void)sig->mangledArgs();
    for (auto &a : sig->args) (void)a.str();
  }
  return 0;
}
