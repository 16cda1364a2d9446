//===- safetensors.cpp - fuzz the .safetensors reader -------------------===//
#include "HostValueCheck.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nxc::fuzz::checkWeightsReader(data, size, nxc::parseSafetensors, "fuzz.safetensors");
  return 0;
}
