//===- FuzzTarget.h - what every libFuzzer target of nxc shares ----*- C++ -*-===//
//
// Each target feeds one of nxc's readers arbitrary bytes. A reader may accept
// or reject its input; rejecting must be an error value with a message, never
// a crash, a hang, an out-of-bounds access or undefined behavior (the targets
// are built with AddressSanitizer and UndefinedBehaviorSanitizer).
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TEST_FUZZ_FUZZTARGET_H
#define NXC_TEST_FUZZ_FUZZTARGET_H

#include "nxc/Frontend/Diagnostics.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace nxc::fuzz {

inline std::shared_ptr<const SourceFile> source(const uint8_t *data, size_t size, const char *name) {
  return std::make_shared<const SourceFile>(SourceFile{name, std::string(reinterpret_cast<const char *>(data), size)});
}

/// A rejected input must say why.
template <typename T> void checkResult(const Result<T> &r) {
  if (!r.ok() && r.error().message.empty()) std::abort();
  if (!r.ok()) (void)r.error().render();
}

} // namespace nxc::fuzz

#endif // NXC_TEST_FUZZ_FUZZTARGET_H
