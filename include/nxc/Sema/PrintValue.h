//===- PrintValue.h - what a print_value node tells the printer -*- C++ -*-===//
//
// `print_value(x, label: "x")` in a JIT-compiled function prints the value
// when the code runs. The compiled code calls the host's nxc_print_begin
// with a header (this text, built at compile time), then nxc_print_bits once
// per element of each leaf (row-major, the raw bits zero-extended to 64),
// then nxc_print_end. The header carries everything the printer needs, so
// a function loaded from the disk cache prints without its source.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_SEMA_PRINTVALUE_H
#define NXC_SEMA_PRINTVALUE_H

#include "nxc/Sema/Types.h"

#include <optional>
#include <string>
#include <vector>

namespace nxc {

struct PrintHeader {
  std::string label;              ///< IO.inspect's :label ("" for none)
  int64_t limit = 50;             ///< IO.inspect's :limit (-1: :infinity)
  /// The container's shape over leaf indices: "0", "{0,1}", "{0,{1,2}}".
  std::string structure;
  std::vector<TensorType> leaves; ///< with axis names

  std::string encode() const;
  static std::optional<PrintHeader> decode(const std::string &text);
};

} // namespace nxc

#endif // NXC_SEMA_PRINTVALUE_H
