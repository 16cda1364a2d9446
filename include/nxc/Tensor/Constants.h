//===- Constants.h - baking constant templates from .npy/.npz ---*- C++ -*-===//
//
// `--fn 'predict(@params.npz, f32[30,784])'` compiles predict with the
// archive's arrays as constants: loadConstants reads each constant template's
// file, checks it against the template declared after `:` (type, shape; the
// axis names come from that declaration, since .npy files carry none), and
// stores the values in the template's leaves for Sema to turn into constant
// nodes.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TENSOR_CONSTANTS_H
#define NXC_TENSOR_CONSTANTS_H

#include "nxc/Sema/Signature.h"
#include "nxc/Tensor/HostTensor.h"

namespace nxc {

/// Loads every constant template of `sig` (paths relative to the working
/// directory). Errors point at the template in the --fn text.
Status loadConstants(Signature &sig);

/// A tensor's elements as a template's values (floats, or integers).
Template::Values valuesOf(const HostTensor &h);

/// The argument templates (types and shapes) of host values.
Template templateOf(const HostValue &v);
/// The leaves of `v`, depth-first.
void flattenLeaves(const HostValue &v, std::vector<const HostTensor *> &out);

} // namespace nxc

#endif // NXC_TENSOR_CONSTANTS_H
