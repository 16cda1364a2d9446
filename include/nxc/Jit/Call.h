//===- Call.h - what one `nxc jit` call runs ----------------------*- C++ -*-===//
//
// The function a jit call names (--fn), found in the program it was read from,
// with the arguments' values grouped into its parameters; and the writing of
// its result to a .npy/.npz file.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_JIT_CALL_H
#define NXC_JIT_CALL_H

#include "nxc/Frontend/AST.h"
#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Graph/GraphJson.h"
#include "nxc/Sema/Signature.h"
#include "nxc/Tensor/HostTensor.h"

#include <optional>
#include <string>
#include <vector>

namespace nxc {

/// A resolved jit call: exactly one of `function` (defn source) and `graph`.
struct JitCall {
  std::string module; ///< the --fn's `Mod.` qualifier, or empty
  std::string name;   ///< the function's name
  Signature signature; ///< the --fn as parsed: `Mod.fun(alpha: 2.0)` holds the options
  const ast::Function *function = nullptr;
  const Graph *graph = nullptr;
  std::vector<HostValue> arguments; ///< one value per parameter (a tuple for a tuple pattern)
  Loc where;                        ///< the --fn, for errors
};

/// Resolves `fnText` (NAME, Module.NAME or Module.NAME(options...)) in the
/// program (`source` or `graph`, one of them) for the arguments as the user
/// wrote them (literals, .npy, .npz, Nx.serialize or safetensors files). Of
/// several arities, the one the arguments fit.
Result<JitCall> resolveJitCall(const std::optional<ast::File> &source, const std::optional<GraphFile> &graph,
                               const std::string &fnText, const std::vector<std::string> &argTexts);

/// Writes a result to `path`: FILE.npy (a tensor) or FILE.npz (a tuple's
/// leaves as arr_0, arr_1...; a map's by path, "w", "layer.0"). Any other
/// name is an error, checked by checkJitResultPath before the call runs.
Status checkJitResultPath(const std::string &path);
Status writeJitResult(const std::string &path, const HostValue &result);

} // namespace nxc

#endif // NXC_JIT_CALL_H
