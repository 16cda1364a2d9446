//===- HostValueCheck.h - what every weights-file reader must return ------===//
#ifndef NXC_FUZZ_HOSTVALUECHECK_H
#define NXC_FUZZ_HOSTVALUECHECK_H

#include "FuzzTarget.h"

#include "nxc/Tensor/HostTensor.h"

#include <cstdlib>
#include <string>
#include <vector>

namespace nxc::fuzz {

/// Parses `data` with `read` and aborts unless the result is an error with a
/// message or a container whose tensors hold exactly their types' bytes and
/// whose maps have one key per element.
inline void checkWeightsReader(const uint8_t *data, size_t size,
                               Result<HostValue> (*read)(const std::vector<uint8_t> &, const std::string &),
                               const char *name) {
  std::vector<uint8_t> bytes(data, data + size);
  auto value = read(bytes, name);
  checkResult(value);
  if (!value) return;
  std::vector<const HostValue *> todo = {&*value};
  while (!todo.empty()) {
    const HostValue *v = todo.back();
    todo.pop_back();
    if (!v->isTuple && !v->tensor.consistent()) std::abort();
    if (v->isTuple && !v->keys.empty() && v->keys.size() != v->elems.size()) std::abort();
    for (auto &e : v->elems) todo.push_back(&e);
  }
}

} // namespace nxc::fuzz

#endif // NXC_FUZZ_HOSTVALUECHECK_H
