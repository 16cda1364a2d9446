//===- BeamNif.h - a module as its own Erlang NIF library -------*- C++ -*-===//
#ifndef NXC_LIB_PIPELINE_BEAMNIF_H
#define NXC_LIB_PIPELINE_BEAMNIF_H

#include "nxc/Pipeline/Options.h"

namespace llvm {
class Module;
}

namespace nxc {

/// Whether this nxc can make NIF libraries (it was built with erl_nif.h).
bool beamNifAvailable();

/// Links the embedded NIF into `m` for the Erlang module `erlangModule`
/// ("Elixir.MNIST.Compiled"), over the packed entries of `entries`, for a
/// target with 64-bit pointers (`pointers64`; others are refused).
Status addBeamNif(llvm::Module &m, const std::vector<EntryInfo> &entries, const std::string &erlangModule,
                  bool pointers64);

} // namespace nxc

#endif
