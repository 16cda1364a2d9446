//===- Header.cpp - the generated C header and JSON manifest --------------===//
#include "nxc/Target/Artifacts.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <sstream>

namespace nxc {
namespace embedded {
extern const unsigned char module_h_in[];
extern const unsigned long module_h_in_size;
} // namespace embedded

namespace {

std::string replaceAll(std::string s, const std::string &from, const std::string &to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

constexpr int kWorkspaceAlign = 64;

std::string upper(std::string s) {
  for (auto &c : s) c = std::isalnum((unsigned char)c) ? (char)std::toupper((unsigned char)c) : '_';
  return s;
}

/// Output names: "result" for a single output, "result_0", ... for tuples.
std::vector<std::string> outputNames(const Graph &g) {
  if (g.results.size() == 1 && !g.resultTree.isTuple) return {"result"};
  std::vector<std::string> names;
  for (size_t i = 0; i < g.results.size(); ++i) names.push_back("result_" + std::to_string(i));
  return names;
}

std::string resultTreeString(const Graph &g, const ResultTree &t) {
  if (!t.isTuple) return g.typeOf(t.node).str();
  std::string s = "{";
  for (size_t i = 0; i < t.elems.size(); ++i) s += (i ? ", " : "") + resultTreeString(g, t.elems[i]);
  return s + "}";
}

std::string elementsComment(const TensorType &t) {
  int64_t n = t.numElements();
  return std::to_string(n) + (n == 1 ? " element" : " elements");
}

} // namespace

std::string writeHeader(const std::string &module, const std::vector<EntryDescription> &entries,
                        const std::string &triple, const std::string &sourceName,
                        const std::vector<std::string> &libraries, bool bareMetal) {
  std::ostringstream decls;
  for (auto &e : entries) {
    const Graph &g = *e.graph;
    auto outs = outputNames(g);
    size_t width = 0;
    for (auto &n : g.paramNames) width = std::max(width, n.size());
    for (auto &n : outs) width = std::max(width, n.size());
    decls << "/* " << e.source << " -> " << resultTreeString(g, g.resultTree) << "\n";
    for (size_t i = 0; i < g.params.size(); ++i) {
      const TensorType &t = g.typeOf(g.params[i]);
      decls << " *   " << g.paramNames[i] << ":" << std::string(width + 1 - g.paramNames[i].size(), ' ') << "in  "
            << t.str() << " (" << elementsComment(t) << ")\n";
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      const TensorType &t = g.typeOf(g.results[i]);
      decls << " *   " << outs[i] << ":" << std::string(width + 1 - outs[i].size(), ' ') << "out " << t.str() << " ("
            << elementsComment(t) << ")\n";
    }
    decls << " */\n";
    std::string up = upper(e.symbol);
    for (size_t i = 0; i < g.params.size(); ++i)
      decls << "#define " << up << "_" << upper(g.paramNames[i]) << "_SIZE " << g.typeOf(g.params[i]).numElements() << "\n";
    for (size_t i = 0; i < outs.size(); ++i)
      decls << "#define " << up << "_" << upper(outs[i]) << "_SIZE " << g.typeOf(g.results[i]).numElements() << "\n";
    decls << "#define " << up << "_WORKSPACE_SIZE " << e.workspaceSize << "\n";
    decls << "#define " << up << "_WORKSPACE_ALIGN " << kWorkspaceAlign << "\n";
    std::string params;
    for (size_t i = 0; i < g.params.size(); ++i)
      params += (params.empty() ? "" : ", ") + std::string("const ") + g.typeOf(g.params[i]).elem.cType() + " *" + g.paramNames[i];
    for (size_t i = 0; i < outs.size(); ++i)
      params += (params.empty() ? "" : ", ") + g.typeOf(g.results[i]).elem.cType() + " *" + outs[i];
    decls << "/* Bytes of scratch memory " << e.symbol << "_with_workspace needs (" << up << "_WORKSPACE_SIZE). */\n";
    decls << "size_t " << e.symbol << "_workspace_size(void);\n";
    decls << "/* `workspace`: " << up << "_WORKSPACE_SIZE bytes aligned to " << up
          << "_WORKSPACE_ALIGN, owned by the caller\n   (may be NULL when the size is 0). */\n";
    decls << "int " << e.symbol << "_with_workspace(" << params << ", void *workspace);\n";
    if (e.plainVariant) {
      if (e.workspaceSize > 0)
        decls << "/* Keeps its " << e.workspaceSize << "-byte workspace on the stack. */\n";
      decls << "int " << e.symbol << "(" << params << ");\n";
    } else {
      decls << "/* No " << e.symbol << "(...) without a workspace: " << e.workspaceSize
            << " bytes is more than nxc puts on the stack\n   for this target (see --stack-workspace-limit). */\n";
    }
    decls << "\n";
  }
  std::string h((const char *)embedded::module_h_in, embedded::module_h_in_size);
  h = replaceAll(h, "@MODULE@", module);
  h = replaceAll(h, "@GUARD@", upper(module) + "_H");
  h = replaceAll(h, "@VERSION@", NXC_VERSION);
  h = replaceAll(h, "@TRIPLE@", triple);
  h = replaceAll(h, "@SOURCE@", sourceName);
  std::string link = bareMetal ? "Link with lib" + module + ".a and libnxrt.a (bare metal: no shared object;\n * the libraries need no C library, no libm and no other symbol)"
                               : "Link with lib" + module + ".so, or with lib" + module + ".a and libnxrt.a";
  for (auto &l : libraries) link += " and -l" + l;
  if (!libraries.empty()) link += "\n * (this module calls the C math library for f64 functions)";
  h = replaceAll(h, "@LINK@", link + ".");
  h = replaceAll(h, "@ENTRIES@", decls.str());
  return h;
}

std::string writeManifest(const std::string &module, const std::vector<EntryDescription> &entries,
                          const std::string &triple, const std::string &cpu,
                          const std::vector<std::string> &libraries) {
  using nlohmann::json;
  json fns = json::array();
  for (auto &e : entries) {
    const Graph &g = *e.graph;
    json args = json::array(), results = json::array();
    for (size_t i = 0; i < g.params.size(); ++i) {
      const TensorType &t = g.typeOf(g.params[i]);
      args.push_back({{"name", g.paramNames[i]}, {"type", t.elem.name()}, {"shape", t.shape}, {"c_type", t.elem.cType()}});
    }
    auto outs = outputNames(g);
    for (size_t i = 0; i < outs.size(); ++i) {
      const TensorType &t = g.typeOf(g.results[i]);
      results.push_back({{"name", outs[i]}, {"type", t.elem.name()}, {"shape", t.shape}, {"c_type", t.elem.cType()}});
    }
    json workspace = {{"size", e.workspaceSize}, {"alignment", kWorkspaceAlign}, {"entry", e.symbol + "_with_workspace"},
                      {"query", e.symbol + "_workspace_size"}};
    fns.push_back({{"symbol", e.symbol},
                   {"function", e.function},
                   {"signature", e.source},
                   {"returns", resultTreeString(g, g.resultTree)},
                   {"arguments", args},
                   {"results", results},
                   {"workspace", workspace},
                   {"stack_entry", e.plainVariant ? json(e.symbol) : json(nullptr)}});
  }
  json m = {{"module", module},
            {"nxc_version", NXC_VERSION},
            {"target", {{"triple", triple}, {"cpu", cpu}}},
            {"calling_convention",
             "int SYMBOL_with_workspace(const T *inputs..., T *outputs..., void *workspace); "
             "int SYMBOL(const T *inputs..., T *outputs...); 0 = ok, 1 = NULL argument, 2 = bad workspace"},
            {"link_libraries", libraries},
            {"functions", fns}};
  return m.dump(2) + "\n";
}

} // namespace nxc
