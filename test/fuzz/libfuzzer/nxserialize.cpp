//===- nxserialize.cpp - fuzz the Nx.serialize/2 reader ---------------------===//
#include "HostValueCheck.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nxc::fuzz::checkWeightsReader(data, size, nxc::parseNxSerialized, "fuzz.bin");
  return 0;
}
