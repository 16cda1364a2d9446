//===- npz.cpp - fuzz the .npz (zip) reader ---------------------------------===//
#include "FuzzTarget.h"

#include "nxc/Tensor/HostTensor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto entries = nxc::parseNpz(data, size, "fuzz.npz");
  nxc::fuzz::checkResult(entries);
  if (entries)
    for (auto &e : *entries)
      if (!e.tensor.consistent()) std::abort();
  return 0;
}
