//===- NxLibrary.cpp - Nx's library as a table -----------------------------===//
//
// `Nx.name(args)` inside defn: the forbidden functions are rejected with Nx's
// message, every other name is looked up in one table built from the op
// family files (NxElementwise, NxReductions, NxShape, NxIndex, NxCreation,
// NxLinAlg), and its handler checks arity, options, types and shapes.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

#include <unordered_map>

namespace nxc::sema {
namespace {

const std::unordered_map<std::string, NxHandler> &table() {
  static const std::unordered_map<std::string, NxHandler> t = [] {
    std::unordered_map<std::string, NxHandler> m;
    for (auto family : {nxElementwiseFunctions, nxReductionFunctions, nxShapeFunctions, nxIndexFunctions,
                        nxCreationFunctions, nxLinAlgFunctions, nxSpectralFunctions, nxVectorizeFunctions,
                        nxRandomFunctions, nxConvenienceFunctions, nxGenericReductionFunctions})
      for (const NxEntry &e : family()) m.emplace(e.name, e.handler);
    return m;
  }();
  return t;
}

} // namespace

Result<Value> Tracer::callNx(const std::string &fn, std::vector<Value> args, const Loc &loc) {
  static const std::set<std::string> forbidden = {
      "backend_copy", "backend_deallocate", "backend_transfer", "to_list", "to_binary", "to_number",
      "to_flat_list", "to_heatmap", "to_batched", "load_numpy", "load_numpy_archive!", "compatible?",
      "default_backend", "serialize", "deserialize", "from_pointer", "to_pointer"};
  if (forbidden.count(fn))
    return error(loc, fmt::format(FMT_STRING("Nx.{}/{} is not allowed inside defn"), fn, args.size()));
  if (fn == "runtime_call")
    return error(loc, fmt::format(FMT_STRING("Nx.runtime_call/{} runs an Elixir function on the BEAM while the "
                                             "computation runs, and code nxc compiles has no BEAM to call: compute "
                                             "it in defn, or call the function before or after the compiled one"),
                                  args.size()));
  NXC_TRY(vectorized, vectorizedCall(fn, args, loc));
  if (vectorized) return *vectorized;
  auto it = table().find(fn);
  if (it == table().end())
    return error(loc, fmt::format(FMT_STRING("Nx.{}/{} is unknown or not supported yet by nxc"), fn, args.size()));
  return (this->*(it->second))(fn, args, loc);
}

} // namespace nxc::sema
