//===- cache.cpp - fuzz the JIT disk cache's entry check --------------------===//
//
// The input is KEY.meta's text, a NUL byte, then the object's bytes; only a
// genuine entry (one store() wrote) may pass the check.
//
//===----------------------------------------------------------------------===//
#include "FuzzTarget.h"

#include "nxc/Jit/Jit.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = reinterpret_cast<const char *>(data);
  const void *nul = std::memchr(text, 0, size);
  size_t metaSize = nul ? (size_t)(static_cast<const char *>(nul) - text) : size;
  std::string meta(text, metaSize);
  std::string object = nul ? std::string(text + metaSize + 1, size - metaSize - 1) : std::string();
  auto e = nxc::ObjectCache::verify("0123456789abcdef", meta, object);
  if (e && (e->workspaceSize < 0 || e->object != object)) std::abort();
  return 0;
}
