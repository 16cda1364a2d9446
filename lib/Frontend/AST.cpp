//===- AST.cpp - printing the syntax tree ---------------------------------===//
#include "nxc/Frontend/AST.h"

#include <fmt/format.h>

#include <algorithm>

#include <iterator>

namespace nxc::ast {
namespace {

const char *kindName(ExprKind k) {
  switch (k) {
  case ExprKind::Int: return "Int";
  case ExprKind::Float: return "Float";
  case ExprKind::Atom: return "Atom";
  case ExprKind::Var: return "Var";
  case ExprKind::Tuple: return "Tuple";
  case ExprKind::List: return "List";
  case ExprKind::Pair: return "Pair";
  case ExprKind::Call: return "Call";
  case ExprKind::Binary: return "Binary";
  case ExprKind::Unary: return "Unary";
  case ExprKind::Match: return "Match";
  case ExprKind::Block: return "Block";
  case ExprKind::Fn: return "Fn";
  case ExprKind::Apply: return "Apply";
  case ExprKind::If: return "If";
  case ExprKind::Cond: return "Cond";
  case ExprKind::Case: return "Case";
  case ExprKind::While: return "While";
  case ExprKind::String: return "String";
  case ExprKind::Interpolation: return "Interpolation";
  case ExprKind::Map: return "Map";
  case ExprKind::For: return "For";
  }
  return "?";
}

/// Deeper nodes are indented as at this depth, with their depth written out,
/// so that the printout of a chain of n operators grows as n, not n^2.
constexpr int kMaxIndent = 40;

void printExpr(std::string &out, const Expr &e, int indent) {
  auto to = std::back_inserter(out);
  out.append((size_t)std::min(indent, kMaxIndent) * 2, ' ');
  if (indent > kMaxIndent) fmt::format_to(to, FMT_STRING("[depth {}] "), indent);
  out += kindName(e.kind);
  switch (e.kind) {
  case ExprKind::Int: fmt::format_to(to, FMT_STRING(" {}"), e.intValue); break;
  case ExprKind::Float: fmt::format_to(to, FMT_STRING(" {:g}"), e.floatValue); break;
  case ExprKind::Call: fmt::format_to(to, FMT_STRING(" {}{}{}"), e.module, e.module.empty() ? "" : ".", e.name); break;
  case ExprKind::Fn: fmt::format_to(to, FMT_STRING("/{}"), e.intValue); break;
  case ExprKind::Map:
    if (!e.name.empty()) fmt::format_to(to, FMT_STRING(" %{}"), e.name);
    if (e.intValue == 1) out += " update";
    break;
  case ExprKind::List:
    if (e.name == "|") out += " |";
    break;
  case ExprKind::Atom: case ExprKind::Var: case ExprKind::Pair: case ExprKind::Binary: case ExprKind::Unary:
  case ExprKind::If:
    fmt::format_to(to, FMT_STRING(" {}"), e.name); break;
  case ExprKind::String: fmt::format_to(to, FMT_STRING(" {:?}"), e.name); break;
  default: break;
  }
  fmt::format_to(to, FMT_STRING(" @{}:{}\n"), e.loc.line, e.loc.col);
  for (auto &c : e.children) printExpr(out, *c, indent + 1);
}

} // namespace

std::string print(const File &file) {
  std::string out;
  auto to = std::back_inserter(out);
  for (auto &m : file.modules) {
    fmt::format_to(to, FMT_STRING("Module {} @{}:{}\n"), m.name, m.loc.line, m.loc.col);
    for (auto &b : m.bindings) {
      fmt::format_to(to, FMT_STRING("  Binding {} @{}:{}\n"), b.name, b.loc.line, b.loc.col);
      if (b.value) printExpr(out, *b.value, 2);
      else fmt::format_to(to, FMT_STRING("    (not read: {})\n"), b.skipped);
    }
    for (auto &a : m.attributes) {
      fmt::format_to(to, FMT_STRING("  Attribute @{}\n"), a.name);
      if (a.value) printExpr(out, *a.value, 2);
      else fmt::format_to(to, FMT_STRING("    (not read: {})\n"), a.skipped);
    }
    if (!m.structFields.empty())
      fmt::format_to(to, FMT_STRING("  Struct fields {}\n"), fmt::join(m.structFields, " "));
    if (!m.containerFields.empty())
      fmt::format_to(to, FMT_STRING("  Containers {}\n"), fmt::join(m.containerFields, " "));
    for (auto &f : m.functions) {
      fmt::format_to(to, FMT_STRING("  Function {} {}/{} @{}:{}\n"), f.kind, f.name, f.params.size(), f.loc.line,
                     f.loc.col);
      // A function nxc could not read keeps only its name, arity and why.
      if (!f.body && !f.head) {
        if (f.skipped.empty()) out += "    (not in the defn subset)\n";
        else fmt::format_to(to, FMT_STRING("    (not read: {})\n"), f.skipped);
        continue;
      }
      for (size_t i = 0; i < f.params.size(); ++i) {
        out += "    Param\n";
        if (f.params[i]) printExpr(out, *f.params[i], 3);
        if (f.defaults[i]) { out += "    Default\n"; printExpr(out, *f.defaults[i], 3); }
      }
      if (f.guard) {
        out += "    Guard\n";
        printExpr(out, *f.guard, 3);
      }
      if (f.head) {
        out += "    (head: the defaults of the clauses below)\n";
        continue;
      }
      out += "    Body\n";
      printExpr(out, *f.body, 3);
    }
  }
  return out;
}

} // namespace nxc::ast
