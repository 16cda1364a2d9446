//===- Arguments.cpp - the values nxc jit is called with ------------------===//
//
// Each argument as the user writes it: a literal, a .npy file, an .npz
// archive (a tuple, or a template's container), or a file Nx.serialize/2 or
// safetensors wrote, recognized by content; a file may be followed by
// `:TEMPLATE` to give its axes names. And the check of a graph file's
// function against its arguments.
//
//===----------------------------------------------------------------------===//
#include "nxc/Jit/Arguments.h"

#include "nxc/Frontend/AST.h"
#include "nxc/Graph/GraphJson.h"
#include "nxc/Sema/Signature.h"
#include "nxc/Tensor/Constants.h"

#include <fmt/format.h>

#include <filesystem>
#include <functional>

namespace nxc {
namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Gives the leaves of `v` the axis names of `declared` (a template written
/// after the file, as in `params.npz:{f32[input: 784, layer: 128], ...}`),
/// after checking that types and shapes match.
Status applyTemplate(HostValue &v, const Template &declared, const std::string &file) {
  if (v.isTuple != declared.isTuple || (v.isTuple && v.elems.size() != declared.elems.size()) ||
      v.keys != declared.keys)
    return error(declared.loc, fmt::format(FMT_STRING("{} does not have the structure of {}"), file, declared.str()));
  if (v.isTuple) {
    for (size_t i = 0; i < v.elems.size(); ++i) NXC_CHECK(applyTemplate(v.elems[i], declared.elems[i], file));
    return okStatus();
  }
  if (v.tensor.type.shape == declared.tensor.shape) NXC_CHECK(retypeStored(v.tensor, declared.tensor.elem, file));
  if (!(v.tensor.type.elem == declared.tensor.elem && v.tensor.type.shape == declared.tensor.shape))
    return error(declared.loc, fmt::format(FMT_STRING("{} holds {}, but the template declares {}"), file,
                                           v.tensor.type.str(), declared.tensor.str()));
  v.tensor.type.names = declared.tensor.names;
  return okStatus();
}

/// Whether an archive's entries are numpy's positional names (`arr_0`,
/// `arr_1`, as np.savez names unnamed arrays): a tuple in order, not by path.
bool positionalNpz(const std::string &file) {
  auto entries = readNpzEntries(file);
  if (!entries) return true; // the positional reader reports the problem
  for (auto &e : *entries)
    if (e.name.rfind("arr_", 0) != 0) return false;
  return true;
}

} // namespace

/// One command-line argument: a .npy file, an .npz file (a tuple), or a
/// literal; a file may be followed by `:TEMPLATE` to give its axes names.
Result<HostValue> readJitArgument(const std::string &text, size_t index) {
  std::string file = text, declared;
  for (const char *ext : {".npy:", ".npz:"})
    if (auto at = text.find(ext); at != std::string::npos) {
      file = text.substr(0, at + 4);
      declared = text.substr(at + 5);
    }
  // A container template (`%{...}`, `%Mod{...}`, or a tuple with a
  // container inside): the archive's entries by path, as -o writes them (a
  // nested map's leaves as `mu.w`, a tuple's elements as `0`, `1`, `pair.0`),
  // in the template's (sorted) order.
  // The template after `FILE:`, parsed as the one argument of a signature
  // `f(TEMPLATE)`; errors are reported in the argument as the user wrote it.
  auto argument = std::make_shared<const SourceFile>(SourceFile{fmt::format(FMT_STRING("argument {}"), index), text});
  auto src = std::make_shared<const SourceFile>(SourceFile{argument->name, "f(" + declared + ")"});
  Loc at{argument, 1, (int)file.size() + 2};
  auto inArgument = [&](Diag d) {
    // "FILE:" precedes the template, "f(" was added.
    if (d.loc.file == src) d.loc = Loc{argument, 1, std::max(1, d.loc.col + (int)file.size() - 1)};
    return d;
  };
  auto declaredTemplate = [&]() -> Result<Template> {
    auto sig = parseSignature(src);
    if (!sig) return inArgument(sig.error());
    if (sig->args.size() != 1 || !sig->args[0].constantPath.empty())
      return error(at, fmt::format(FMT_STRING("expected one template after {}:"), file));
    return std::move(sig->args[0]);
  };
  auto byPath = [&]() -> Result<HostValue> {
    NXC_TRY(entries, readNpzEntries(file));
    NXC_TRY(declaredT, declaredTemplate());
    std::vector<std::string> held;
    for (auto &e : entries) held.push_back(e.name);
    size_t used = 0;
    std::function<Result<HostValue>(const Template &, const std::string &)> build =
        [&](const Template &t, const std::string &path) -> Result<HostValue> {
      if (!t.term.empty()) {
        // A term the template gives (a keep field): no entry of the archive.
        HostValue term;
        term.term = t.term;
        term.literal = true;
        return term;
      }
      if (!t.isTuple) {
        auto it = std::find_if(entries.begin(), entries.end(), [&](const NpzEntry &e) { return e.name == path; });
        if (it == entries.end())
          return error(
              at, fmt::format(FMT_STRING("{} has no entry '{}' (it holds {})"), file, path, fmt::join(held, ", ")));
        ++used;
        HostValue leaf = HostValue::leaf(std::move(it->tensor));
        if (!(leaf.tensor.type.elem == t.tensor.elem && leaf.tensor.type.shape == t.tensor.shape))
          return error(at, fmt::format(FMT_STRING("{}'s entry '{}' holds {}, but the template declares {}"), file, path,
                                       leaf.tensor.type.str(), t.tensor.str()));
        leaf.tensor.type.names = t.tensor.names;
        return leaf;
      }
      std::vector<HostValue> elems;
      for (size_t k = 0; k < t.elems.size(); ++k) {
        std::string name = t.keys.empty() ? std::to_string(k) : ast::keyText(t.keys[k]);
        NXC_TRY(e, build(t.elems[k], path.empty() ? name : path + "." + name));
        elems.push_back(std::move(e));
      }
      HostValue v = HostValue::tuple(std::move(elems));
      v.keys = t.keys;
      v.structName = t.structName;
      return v;
    };
    NXC_TRY(built, build(declaredT, ""));
    if (used != entries.size())
      return error(at, fmt::format(FMT_STRING("{} holds {} entries ({}); the template names {}"), file, entries.size(),
                                   fmt::join(held, ", "), used));
    return built;
  };
  HostValue v;
  if (endsWith(file, ".npy")) {
    NXC_TRY(t, readNpy(file));
    v = HostValue::leaf(std::move(t));
  } else if (endsWith(file, ".npz") && declared.rfind("%", 0) == 0) {
    NXC_TRY(built, byPath());
    return built;
  } else if (endsWith(file, ".npz") && declared.rfind("{", 0) == 0 && !positionalNpz(file)) {
    // A tuple template over entries named by path (`0`, `1.mu.w`).
    NXC_TRY(built, byPath());
    return built;
  } else if (endsWith(file, ".npz")) {
    NXC_TRY(ts, readNpz(file));
    std::vector<HostValue> elems;
    for (auto &t : ts) elems.push_back(HostValue::leaf(std::move(t)));
    v = HostValue::tuple(std::move(elems));
  } else if (std::error_code ec; declared.empty() && std::filesystem::is_regular_file(file, ec)) {
    // Any other file: what Nx.serialize/2 wrote (trained parameters), its
    // container as the file holds it, or a .safetensors file (a map of its
    // tensors by name); recognized by content, whatever the name.
    NXC_TRY(bytes, readFileBytes(file));
    if (readsAsSafetensors(bytes, file)) return parseSafetensors(bytes, file);
    if (!isNxSerialized(bytes))
      return error(Loc{}, fmt::format(FMT_STRING("{} is neither a .npy/.npz file nor one Nx.serialize/2 or safetensors "
                                                 "wrote"),
                                      file));
    NXC_TRY(serialized, parseNxSerialized(bytes, file));
    return serialized;
  } else if (text == "true" || text == "false" || text == "nil" ||
             (text.size() > 1 && text[0] == ':' && std::all_of(text.begin() + 1, text.end(), [](char c) {
                return std::isalnum((unsigned char)c) || c == '_' || c == '?' || c == '!';
              }))) {
    // An Elixir term (a transform's flag or mode: `false`, `:mean`), not a tensor.
    HostValue term;
    term.term = text;
    term.literal = true;
    return term;
  } else {
    auto src = std::make_shared<const SourceFile>(SourceFile{fmt::format(FMT_STRING("argument {}"), index), text});
    NXC_TRY(t, parseLiteral(src));
    return HostValue::leaf(std::move(t));
  }
  if (!declared.empty()) {
    NXC_TRY(t, declaredTemplate());
    if (auto applied = applyTemplate(v, t, file); !applied) return inArgument(applied.error());
  }
  return v;
}

/// The arguments of a graph function: the leaves, in order, each of the
/// type of its parameter (a graph is traced at fixed types).
Status checkGraphArguments(const Graph &g, const std::vector<HostValue> &args, const Loc &where) {
  std::vector<const HostTensor *> leaves;
  for (auto &a : args) flattenLeaves(a, leaves);
  if (leaves.size() != g.params.size())
    return error(where, fmt::format(FMT_STRING("{} takes {} tensor argument{} ({}), got {}"), g.function,
                                    g.params.size(), g.params.size() == 1 ? "" : "s", graphSignature(g),
                                    leaves.size()));
  for (size_t k = 0; k < leaves.size(); ++k)
    if (!leaves[k]->type.sameTypeAndShape(g.typeOf(g.params[k])))
      return error(where, fmt::format(FMT_STRING("argument {} is {}, but parameter {} ({}) of the graph is {}"), k + 1,
                                      leaves[k]->type.str(), k, g.paramNames[k], g.typeOf(g.params[k]).str()));
  return okStatus();
}

} // namespace nxc
