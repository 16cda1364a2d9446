//===- Sema.h - tracing a defn into a typed graph ---------------*- C++ -*-===//
//
// Sema evaluates a definition the way Nx's defn compiler traces it: numbers
// and keyword lists are compile-time values, tensors are graph nodes, local
// calls are inlined, and every Nx function checks its arguments, infers its
// output type and shape (Nx's promotion and broadcasting rules) and records
// explicit nodes. All user errors come back with the source location.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_SEMA_SEMA_H
#define NXC_SEMA_SEMA_H

#include "nxc/Frontend/AST.h"
#include "nxc/Sema/Graph.h"
#include "nxc/Sema/Signature.h"

#include <functional>

namespace nxc {

/// Computes a traced tensor now: the values (row-major) of the one result
/// of `graph`, a copy of the graph being traced whose parameters are the
/// traced function's own. The repl gives one, so that Elixir code reading a
/// tensor's values while it runs (`Nx.to_number/1`, `Nx.to_flat_list/1` in
/// a plain def called at the top level) computes them as iex does eagerly.
using EagerEvaluator = std::function<Result<Template::Values>(const Graph &graph)>;

/// Traces `sig.function` of `file` for the argument templates of `sig`.
Result<Graph> trace(const ast::File &file, const Signature &sig, EagerEvaluator eager = nullptr);

/// The defn `nxc repl` wraps each input in. At its top level, as at iex's,
/// plain defs may be called (a defn may not call them).
constexpr const char *kReplEntryName = "__repl_eval__";

} // namespace nxc

#endif // NXC_SEMA_SEMA_H
