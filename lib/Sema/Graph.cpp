//===- Graph.cpp - printing the graph like Nx's Expr listing --------------===//
#include "nxc/Sema/Graph.h"

#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include <iterator>

namespace nxc {
namespace {

/// a, b, ..., z, ba, bb, ... as Nx names expression nodes.
std::string letterName(int i) {
  std::string s;
  do {
    s.insert(s.begin(), (char)('a' + i % 26));
    i /= 26;
  } while (i > 0);
  return s;
}

std::string list(const std::vector<int64_t> &v) { return fmt::format(FMT_STRING("[{}]"), fmt::join(v, ", ")); }

} // namespace

namespace {

/// The listing lines (text, type) of nodes `ids` of g.
/// Nodes are named by their position in `ids` when `renumber` is set (an
/// expression's own listing starts at `a`), by their id otherwise.
std::vector<std::pair<std::string, std::string>> listing(const Graph &g, const std::vector<int> &ids,
                                                         bool renumber = false) {
  std::map<int, int> position;
  for (size_t k = 0; k < ids.size(); ++k) position[ids[k]] = (int)k;
  auto letterName = [&](int id) { return ::nxc::letterName(renumber && position.count(id) ? position[id] : id); };
  std::vector<std::pair<std::string, std::string>> lines;
  for (int i : ids) {
    const Node &n = g.nodes[i];
    std::string name = letterName(i), text;
    if (n.op == Op::Parameter) {
      text = fmt::format(FMT_STRING("parameter {}:{}"), name, n.param);
    } else if (n.op == Op::Constant) {
      size_t count = n.fvalues.empty() ? n.ivalues.size() : n.fvalues.size();
      std::string values;
      auto to = std::back_inserter(values);
      for (size_t k = 0; k < count && k < 8; ++k) {
        if (k) values += ", ";
        if (n.fvalues.empty()) fmt::format_to(to, FMT_STRING("{}"), n.ivalues[k]);
        else fmt::format_to(to, FMT_STRING("{:g}"), n.fvalues[k]);
      }
      if (count > 8) values += ", ...";
      text = n.type.shape.empty() ? fmt::format(FMT_STRING("{} = constant {}"), name, values)
                                  : fmt::format(FMT_STRING("{} = constant [{}]"), name, values);
    } else {
      text = fmt::format(FMT_STRING("{} = {}"), name, opName(n.op));
      auto names = [&](const std::vector<int> &ids) {
        std::vector<std::string> letters;
        for (int id : ids) letters.push_back(letterName(id));
        return fmt::format(FMT_STRING("{{{}}}"), fmt::join(letters, ", "));
      };
      if (n.op == Op::Cond) {
        text += fmt::format(FMT_STRING(" {} -> {}, true -> {}"), letterName(n.operands[0]), names(n.regions[0].results),
                            names(n.regions[1].results));
      } else if (n.op == Op::While) {
        text += fmt::format(FMT_STRING(" {}, {} do {}"), names(n.operands), names(n.regions[0].results),
                            names(n.regions[1].results));
      } else if (n.op == Op::RegionArg) {
        text += fmt::format(FMT_STRING(" {}"), n.param);
      } else {
        for (size_t k = 0; k < n.operands.size(); ++k) text += (k ? ", " : " ") + letterName(n.operands[k]);
        if (n.op == Op::Elem) text += fmt::format(FMT_STRING(", {}"), n.param);
      }
      if (!n.axes.empty() || n.op == Op::Broadcast) text += ", axes: " + list(n.axes);
      for (auto &a : n.attrs) text += fmt::format(FMT_STRING(", {}: {}"), a.first, list(a.second));
      if (n.parent >= 0) text = "  " + text;
    }
    std::string typeText = n.type.str();
    if (n.op == Op::Cond || n.op == Op::While) typeText = fmt::format(FMT_STRING("tuple{}"), n.resultTypes.size());
    lines.push_back({text, typeText});
  }
  return lines;
}

void appendAligned(std::string &out, const std::vector<std::pair<std::string, std::string>> &lines) {
  size_t width = 0;
  for (auto &l : lines) width = std::max(width, l.first.size());
  auto to = std::back_inserter(out);
  for (auto &l : lines) fmt::format_to(to, FMT_STRING("  {:<{}}{}\n"), l.first, width + 3, l.second);
}

} // namespace

std::string Graph::print() const {
  std::vector<int> all;
  for (size_t i = 0; i < nodes.size(); ++i) all.push_back((int)i);
  std::string out = function + "\n";
  appendAligned(out, listing(*this, all));
  out += "  results:";
  auto to = std::back_inserter(out);
  for (int r : results) fmt::format_to(to, FMT_STRING(" {}"), letterName(r));
  out += "\n";
  return out;
}

std::string Graph::printExpr(int id) const {
  std::set<int> seen;
  std::function<void(int)> visit = [&](int n) {
    if (!seen.insert(n).second) return;
    for (int o : nodes[n].operands) visit(o);
    for (auto &r : nodes[n].regions) {
      for (int m : r.nodes) visit(m);
      for (int m : r.results) visit(m);
    }
    if (nodes[n].parent >= 0) visit(nodes[n].parent);
  };
  visit(id);
  std::vector<int> ids(seen.begin(), seen.end());
  std::string out = "#Nx.Tensor<\n  " + nodes[id].type.str() + "\n  \n  Nx.Defn.Expr\n";
  appendAligned(out, listing(*this, ids, /*renumber=*/true));
  return out + ">";
}

bool nodeHasType(const Graph &g, const Node &n, bool (*pred)(const ElemType &)) {
  if (pred(n.type.elem)) return true;
  for (const TensorType &t : n.resultTypes)
    if (pred(t.elem)) return true;
  for (int o : n.operands)
    if (pred(g.typeOf(o).elem)) return true;
  return false;
}

bool graphHasType(const Graph &g, bool (*pred)(const ElemType &)) {
  for (const Node &n : g.nodes)
    if (nodeHasType(g, n, pred)) return true;
  return false;
}

} // namespace nxc
