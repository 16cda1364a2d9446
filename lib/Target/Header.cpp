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
                        const std::string &triple, const std::string &sourceName) {
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
    decls << "int " << e.symbol << "(";
    bool first = true;
    for (size_t i = 0; i < g.params.size(); ++i) {
      decls << (first ? "" : ", ") << "const " << g.typeOf(g.params[i]).elem.cType() << " *" << g.paramNames[i];
      first = false;
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      decls << (first ? "" : ", ") << g.typeOf(g.results[i]).elem.cType() << " *" << outs[i];
      first = false;
    }
    decls << ");\n\n";
  }
  std::string h((const char *)embedded::module_h_in, embedded::module_h_in_size);
  h = replaceAll(h, "@MODULE@", module);
  h = replaceAll(h, "@GUARD@", upper(module) + "_H");
  h = replaceAll(h, "@VERSION@", NXC_VERSION);
  h = replaceAll(h, "@TRIPLE@", triple);
  h = replaceAll(h, "@SOURCE@", sourceName);
  h = replaceAll(h, "@ENTRIES@", decls.str());
  return h;
}

std::string writeManifest(const std::string &module, const std::vector<EntryDescription> &entries,
                          const std::string &triple, const std::string &cpu) {
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
    fns.push_back({{"symbol", e.symbol},
                   {"function", e.function},
                   {"signature", e.source},
                   {"returns", resultTreeString(g, g.resultTree)},
                   {"arguments", args},
                   {"results", results}});
  }
  json m = {{"module", module},
            {"nxc_version", NXC_VERSION},
            {"target", {{"triple", triple}, {"cpu", cpu}}},
            {"calling_convention", "int SYMBOL(const T *inputs..., T *outputs...); 0 = ok, 1 = NULL argument"},
            {"functions", fns}};
  return m.dump(2) + "\n";
}

} // namespace nxc
