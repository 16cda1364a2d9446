//===- safetensors.cpp - fuzz the .safetensors reader -------------------===//
#include "FuzzTarget.h"

#include "nxc/Tensor/HostTensor.h"

#include <functional>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  auto value = nxc::parseSafetensors(bytes, "fuzz.safetensors");
  nxc::fuzz::checkResult(value);
  if (value) {
    std::function<void(const nxc::HostValue &)> check = [&](const nxc::HostValue &v) {
      if (!v.isTuple && !v.tensor.consistent()) std::abort();
      if (v.isTuple && !v.keys.empty() && v.keys.size() != v.elems.size()) std::abort();
      for (auto &e : v.elems) check(e);
    };
    check(*value);
  }
  return 0;
}
