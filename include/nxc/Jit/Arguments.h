//===- Arguments.h - the values nxc jit is called with ----------*- C++ -*-===//
#ifndef NXC_JIT_ARGUMENTS_H
#define NXC_JIT_ARGUMENTS_H

#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Sema/Graph.h"
#include "nxc/Tensor/HostTensor.h"

#include <string>
#include <vector>

namespace nxc {

/// Argument `index` (from 1) of `nxc jit` as written: a literal
/// ("f32:[1, 2]"), FILE.npy, FILE.npz (a tuple), a file Nx.serialize/2 or
/// safetensors wrote (its container), each file optionally followed by
/// `:TEMPLATE` that names its axes (and must match its types and shapes).
Result<HostValue> readJitArgument(const std::string &text, size_t index);

/// The arguments of a graph file's function: the leaves, in order, each of
/// the type of its parameter (a graph is traced at fixed types).
Status checkGraphArguments(const Graph &g, const std::vector<HostValue> &args, const Loc &where);

} // namespace nxc

#endif // NXC_JIT_ARGUMENTS_H
