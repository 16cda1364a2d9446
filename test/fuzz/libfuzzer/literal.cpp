//===- literal.cpp - fuzz tensor literals ('f32:[1, 2]') -------------------===//
#include "FuzzTarget.h"

#include "nxc/Tensor/HostTensor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto t = nxc::parseLiteral(nxc::fuzz::source(data, size, "literal"));
  nxc::fuzz::checkResult(t);
  if (t) {
    if (!t->consistent()) std::abort();
    (void)nxc::formatNx(*t);
  }
  return 0;
}
