//===- SubByteIntegers.h - s2, s4, u2, u4 as bytes --------------*- C++ -*-===//
#ifndef NXC_CONVERSION_SUBBYTEINTEGERS_H
#define NXC_CONVERSION_SUBBYTEINTEGERS_H

#include "nxc/Sema/Graph.h"

namespace nxc {

/// Whether any node of `g` takes or makes an s2/s4/u2/u4 value.
bool hasSubByteIntegers(const Graph &g);

/// `g` with every s2/s4 (u2/u4) value an s8 (u8) value holding it
/// sign-extended (zero-extended), each result of a sub-byte type wrapped to
/// its width as Nx wraps it.
Graph subByteToBytes(const Graph &g);

} // namespace nxc

#endif // NXC_CONVERSION_SUBBYTEINTEGERS_H
