//===- Printer.cpp - print_value's host side ------------------------------===//
//
// Compiled code calls nxc_print_begin with the print header (PrintValue.h),
// nxc_print_bits once per element of each leaf, then nxc_print_end, which
// prints the value as IO.inspect prints it (with its label) to stdout.
// Generated code runs on the calling thread, so the state is per thread.
//
//===----------------------------------------------------------------------===//
#include "nxc/Jit/Jit.h"
#include "nxc/Sema/PrintValue.h"
#include "nxc/Tensor/HostTensor.h"

#include <fmt/format.h>

#include <cstdio>
#include <functional>

namespace nxc {
namespace {

struct PendingPrint {
  std::string header;
  std::vector<uint64_t> bits;
};

thread_local PendingPrint pending;

extern "C" void nxc_print_begin(int64_t header) {
  pending.header = reinterpret_cast<const char *>((intptr_t)header);
  pending.bits.clear();
}

extern "C" void nxc_print_bits(int64_t bits) { pending.bits.push_back((uint64_t)bits); }

extern "C" void nxc_print_end() {
  auto h = PrintHeader::decode(pending.header);
  if (!h) {
    fmt::print(stderr, FMT_STRING("nxc: internal error: a malformed print_value header\n"));
    return;
  }
  std::vector<HostTensor> leaves;
  size_t next = 0;
  for (auto &t : h->leaves) {
    HostTensor ht = HostTensor::zeros(t);
    // A complex element comes as its two parts (a pair of reals by then).
    int parts = t.elem.isComplex() ? 2 : 1;
    for (int64_t i = 0; i < ht.numElements() && next + parts <= pending.bits.size(); ++i)
      if (parts == 2) {
        ht.setPartBits(i, 0, pending.bits[next++]);
        ht.setPartBits(i, 1, pending.bits[next++]);
      } else {
        ht.setBits(i, pending.bits[next++]);
      }
    leaves.push_back(std::move(ht));
  }
  // Rebuild the container from "{0,{1,2}}".
  size_t pos = 0;
  std::function<HostValue()> parse = [&]() -> HostValue {
    if (pos < h->structure.size() && h->structure[pos] == '{') {
      ++pos;
      std::vector<HostValue> elems;
      while (pos < h->structure.size() && h->structure[pos] != '}') {
        elems.push_back(parse());
        if (pos < h->structure.size() && h->structure[pos] == ',') ++pos;
      }
      ++pos;
      return HostValue::tuple(std::move(elems));
    }
    size_t end = pos;
    while (end < h->structure.size() && std::isdigit((unsigned char)h->structure[end])) ++end;
    size_t k = std::stoul(h->structure.substr(pos, end - pos));
    pos = end;
    return HostValue::leaf(k < leaves.size() ? leaves[k] : HostTensor{});
  };
  HostValue v = parse();
  FormatOptions opts;
  opts.limit = h->limit;
  std::string text = formatNx(v, opts);
  if (!h->label.empty()) text = h->label + ": " + text;
  fmt::print(FMT_STRING("{}\n"), text);
  std::fflush(stdout);
}

} // namespace

std::vector<std::pair<std::string, void *>> printerSymbols() {
  return {{"nxc_print_begin", (void *)&nxc_print_begin},
          {"nxc_print_bits", (void *)&nxc_print_bits},
          {"nxc_print_end", (void *)&nxc_print_end}};
}

} // namespace nxc
