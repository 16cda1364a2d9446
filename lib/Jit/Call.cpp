//===- Call.cpp - what one `nxc jit` call runs ----------------------------===//
#include "nxc/Jit/Call.h"

#include "nxc/Jit/Arguments.h"
#include "nxc/Jit/Engine.h"
#include "nxc/Tensor/Constants.h"

#include "llvm/ADT/StringRef.h"

#include <fmt/format.h>

#include <functional>

namespace nxc {

Result<JitCall> resolveJitCall(const std::optional<ast::File> &source, const std::optional<GraphFile> &graph,
                               const std::string &fnText, const std::vector<std::string> &argTexts) {
  JitCall call;
  auto fnSrc = std::make_shared<const SourceFile>(SourceFile{"--fn", fnText});
  call.where = Loc{fnSrc, 1, 1};
  call.name = fnText;
  if (!graph && fnText.find('(') != std::string::npos) {
    // Mod.fun(alpha: 2.0): the function and its options (a keyword list,
    // the last argument after the tensors).
    auto parsed = parseSignature(fnSrc);
    if (!parsed) return parsed.error();
    if (!parsed->args.empty() || !parsed->cname.empty())
      return error(parsed->args.empty() ? call.where : parsed->args[0].loc,
                   "nxc jit takes the arguments' values after the function; --fn gives the function and, in "
                   "parentheses, only its options, as in 'Mod.fun(alpha: 2.0)'");
    call.signature = std::move(*parsed);
    call.module = call.signature.module;
    call.name = call.signature.function;
  } else if (auto dot = fnText.rfind('.'); !graph && dot != std::string::npos) {
    call.module = fnText.substr(0, dot);
    call.name = fnText.substr(dot + 1);
  }
  if (graph) {
    std::vector<std::string> names;
    for (auto &g : graph->functions) {
      names.push_back(g.function);
      if (g.function == call.name) call.graph = &g;
    }
    if (!call.graph)
      return error(call.where, fmt::format(FMT_STRING("the graph has no function '{}' (it has: {})"), call.name,
                                           fmt::join(names, ", ")));
  }

  std::vector<HostValue> args;
  for (size_t i = 0; i < argTexts.size(); ++i) {
    auto a = readJitArgument(argTexts[i], i + 1);
    if (!a) return a.error();
    args.push_back(std::move(*a));
  }
  if (call.graph) {
    NXC_CHECK(checkGraphArguments(*call.graph, args, call.where));
    call.arguments = std::move(args);
    return call;
  }
  size_t trailing = call.signature.options ? 1 : 0;
  // Of several arities, the one the arguments fit.
  auto takes = [&](const ast::Function &f) { return (bool)groupArguments(f, args, call.where, trailing); };
  auto found = findFunction(*source, call.module, call.name, call.where, takes);
  if (!found) return found.error();
  call.function = *found;
  auto grouped = groupArguments(*call.function, std::move(args), call.where, trailing);
  if (!grouped) return grouped.error();
  call.arguments = std::move(*grouped);
  return call;
}

Status checkJitResultPath(const std::string &path) {
  if (llvm::StringRef(path).ends_with(".npy") || llvm::StringRef(path).ends_with(".npz")) return okStatus();
  return error(Loc{},
               fmt::format(FMT_STRING("-o {}: the output must be a .npy (one tensor) or .npz (a tuple) file"), path));
}

Status writeJitResult(const std::string &path, const HostValue &result) {
  NXC_CHECK(checkJitResultPath(path));
  if (llvm::StringRef(path).ends_with(".npy")) {
    if (result.isTuple)
      return error(Loc{}, "the result is a tuple; write it with -o FILE.npz (arrays arr_0, arr_1, ...)");
    return writeNpy(path, result.tensor);
  }
  if (!result.keys.empty()) {
    // A map: entries named by each leaf's path ("w", "layer.0").
    std::vector<NpzEntry> entries;
    std::function<void(const HostValue &, const std::string &)> walk = [&](const HostValue &v, const std::string &at) {
      if (!v.isTuple) {
        if (v.term.empty()) entries.push_back(NpzEntry{at, v.tensor}); // terms (kept fields) are not arrays
        return;
      }
      for (size_t i = 0; i < v.elems.size(); ++i)
        walk(v.elems[i], (at.empty() ? "" : at + ".") + (v.keys.empty() ? std::to_string(i) : ast::keyText(v.keys[i])));
    };
    walk(result, "");
    return writeNpzEntries(path, entries);
  }
  std::vector<const HostTensor *> leaves;
  flattenLeaves(result, leaves);
  std::vector<HostTensor> copies;
  for (auto *t : leaves) copies.push_back(*t);
  return writeNpz(path, copies);
}

} // namespace nxc
