//===- npy.cpp - fuzz the .npy reader ---------------------------------------===//
#include "FuzzTarget.h"

#include "nxc/Tensor/HostTensor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto t = nxc::parseNpy(data, size, "fuzz.npy");
  nxc::fuzz::checkResult(t);
  if (t) {
    if (!t->consistent()) std::abort();
    nxc::FormatOptions opts;
    (void)nxc::formatNx(*t, opts);
  }
  return 0;
}
