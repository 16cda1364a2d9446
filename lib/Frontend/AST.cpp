//===- AST.cpp - printing the syntax tree ---------------------------------===//
#include "nxc/Frontend/AST.h"

#include <sstream>

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
  }
  return "?";
}

void printExpr(std::ostringstream &os, const Expr &e, int indent) {
  os << std::string(indent * 2, ' ') << kindName(e.kind);
  switch (e.kind) {
  case ExprKind::Int: os << " " << e.intValue; break;
  case ExprKind::Float: os << " " << e.floatValue; break;
  case ExprKind::Call: os << " " << (e.module.empty() ? "" : e.module + ".") << e.name; break;
  case ExprKind::Fn: os << "/" << e.intValue; break;
  case ExprKind::Atom: case ExprKind::Var: case ExprKind::Pair: case ExprKind::Binary: case ExprKind::Unary:
  case ExprKind::If:
    os << " " << e.name; break;
  default: break;
  }
  os << " @" << e.loc.line << ":" << e.loc.col << "\n";
  for (auto &c : e.children) printExpr(os, *c, indent + 1);
}

} // namespace

std::string print(const File &file) {
  std::ostringstream os;
  for (auto &m : file.modules) {
    os << "Module " << m.name << " @" << m.loc.line << ":" << m.loc.col << "\n";
    for (auto &a : m.attributes) {
      os << "  Attribute @" << a.name << "\n";
      printExpr(os, *a.value, 2);
    }
    for (auto &f : m.functions) {
      os << "  Function " << f.kind << " " << f.name << "/" << f.params.size() << " @" << f.loc.line << ":"
         << f.loc.col << "\n";
      for (size_t i = 0; i < f.params.size(); ++i) {
        os << "    Param\n";
        printExpr(os, *f.params[i], 3);
        if (f.defaults[i]) { os << "    Default\n"; printExpr(os, *f.defaults[i], 3); }
      }
      os << "    Body\n";
      printExpr(os, *f.body, 3);
    }
  }
  return os.str();
}

} // namespace nxc::ast
