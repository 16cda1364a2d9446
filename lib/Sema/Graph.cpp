//===- Graph.cpp - printing the graph like Nx's Expr listing --------------===//
#include "nxc/Sema/Graph.h"

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

std::string Graph::print() const {
  std::vector<std::pair<std::string, std::string>> lines;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node &n = nodes[i];
    std::string name = letterName((int)i), text;
    if (n.op == "parameter") {
      text = fmt::format(FMT_STRING("parameter {}:{}"), name, n.param);
    } else if (n.op == "constant") {
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
      text = fmt::format(FMT_STRING("{} = {}"), name, n.op);
      auto names = [&](const std::vector<int> &ids) {
        std::vector<std::string> letters;
        for (int id : ids) letters.push_back(letterName(id));
        return fmt::format(FMT_STRING("{{{}}}"), fmt::join(letters, ", "));
      };
      if (n.op == "cond") {
        text += fmt::format(FMT_STRING(" {} -> {}, true -> {}"), letterName(n.operands[0]), names(n.regions[0].results),
                            names(n.regions[1].results));
      } else if (n.op == "while") {
        text += fmt::format(FMT_STRING(" {}, {} do {}"), names(n.operands), names(n.regions[0].results),
                            names(n.regions[1].results));
      } else if (n.op == "region_arg") {
        text += fmt::format(FMT_STRING(" {}"), n.param);
      } else {
        for (size_t k = 0; k < n.operands.size(); ++k) text += (k ? ", " : " ") + letterName(n.operands[k]);
        if (n.op == "elem") text += fmt::format(FMT_STRING(", {}"), n.param);
      }
      if (!n.axes.empty() || n.op == "broadcast") text += ", axes: " + list(n.axes);
      for (auto &a : n.attrs) text += fmt::format(FMT_STRING(", {}: {}"), a.first, list(a.second));
      if (n.parent >= 0) text = "  " + text;
    }
    std::string typeText = n.type.str();
    if (n.op == "cond" || n.op == "while") typeText = fmt::format(FMT_STRING("tuple{}"), n.resultTypes.size());
    lines.push_back({text, typeText});
  }
  size_t width = 0;
  for (auto &l : lines) width = std::max(width, l.first.size());
  std::string out = function + "\n";
  auto to = std::back_inserter(out);
  for (auto &l : lines) fmt::format_to(to, FMT_STRING("  {:<{}}{}\n"), l.first, width + 3, l.second);
  out += "  results:";
  for (int r : results) fmt::format_to(to, FMT_STRING(" {}"), letterName(r));
  out += "\n";
  return out;
}

} // namespace nxc
