//===- ComplexToReal.h - complex values as pairs of reals -------*- C++ -*-===//
#ifndef NXC_CONVERSION_COMPLEXTOREAL_H
#define NXC_CONVERSION_COMPLEXTOREAL_H

#include "nxc/Sema/Graph.h"

namespace nxc {

/// Whether any node of `g` takes or makes a c64/c128 value.
bool hasComplexValues(const Graph &g);

/// `g` with every complex value a real tensor of one more axis of 2 (the
/// real part, then the imaginary part) and every op on complex values
/// computed on those pairs. `g` must have passed checkComplexOps.
Graph complexToReal(const Graph &g);

} // namespace nxc

#endif // NXC_CONVERSION_COMPLEXTOREAL_H
