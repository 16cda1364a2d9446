//===- Graph.cpp - printing the graph like Nx's Expr listing --------------===//
#include "nxc/Sema/Graph.h"

#include <sstream>

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

std::string list(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

} // namespace

std::string Graph::print() const {
  std::vector<std::pair<std::string, std::string>> lines;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node &n = nodes[i];
    std::string name = letterName((int)i), text;
    if (n.op == "parameter") {
      text = "parameter " + name + ":" + std::to_string(n.param);
    } else if (n.op == "constant") {
      text = name + " = constant ";
      size_t count = n.fvalues.empty() ? n.ivalues.size() : n.fvalues.size();
      std::ostringstream vs;
      for (size_t k = 0; k < count && k < 8; ++k) {
        if (k) vs << ", ";
        if (n.fvalues.empty()) vs << n.ivalues[k]; else vs << n.fvalues[k];
      }
      if (count > 8) vs << ", ...";
      text += n.type.shape.empty() ? vs.str() : "[" + vs.str() + "]";
    } else {
      text = name + " = " + n.op;
      auto names = [&](const std::vector<int> &ids) {
        std::string r = "{";
        for (size_t k = 0; k < ids.size(); ++k) r += (k ? ", " : "") + letterName(ids[k]);
        return r + "}";
      };
      if (n.op == "cond") {
        text += " " + letterName(n.operands[0]) + " -> " + names(n.regions[0].results) + ", true -> " +
                names(n.regions[1].results);
      } else if (n.op == "while") {
        text += " " + names(n.operands) + ", " + names(n.regions[0].results) + " do " + names(n.regions[1].results);
      } else if (n.op == "region_arg") {
        text += " " + std::to_string(n.param);
      } else {
        for (size_t k = 0; k < n.operands.size(); ++k) text += (k ? ", " : " ") + letterName(n.operands[k]);
        if (n.op == "elem") text += ", " + std::to_string(n.param);
      }
      if (!n.axes.empty() || n.op == "broadcast") text += ", axes: " + list(n.axes);
      for (auto &a : n.attrs) text += ", " + a.first + ": " + list(a.second);
      if (n.parent >= 0) text = "  " + text;
    }
    std::string typeText = n.type.str();
    if (n.op == "cond" || n.op == "while") typeText = "tuple" + std::to_string(n.resultTypes.size());
    lines.push_back({text, typeText});
  }
  size_t width = 0;
  for (auto &l : lines) width = std::max(width, l.first.size());
  std::ostringstream os;
  os << function << "\n";
  for (auto &l : lines) os << "  " << l.first << std::string(width + 3 - l.first.size(), ' ') << l.second << "\n";
  os << "  results:";
  for (int r : results) os << " " << letterName(r);
  os << "\n";
  return os.str();
}

} // namespace nxc
