//===- ParserControl.cpp - if, cond, case, with, for, while and fn --------===//
//
// The forms with clauses or do-blocks: each becomes its AST node, `with` and
// multi-clause `fn` rewritten as Elixir defines them.
//
//===----------------------------------------------------------------------===//
#include "ParserImpl.h"

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>

namespace nxc::parser {

bool Parser::lineStartsClause() const {
  int depth = 0;
  for (size_t k = 0; pos_ + k < toks_.size(); ++k) {
    const Token &t = peek(k);
    if (t.kind == Tok::Eof) return false;
    if (t.kind == Tok::Newline && depth == 0) return false;
    if (t.kind == Tok::Punct) {
      if (t.text == "(" || t.text == "[" || t.text == "{") ++depth;
      else if (t.text == ")" || t.text == "]" || t.text == "}") { if (--depth < 0) return false; }
      else if (t.text == "->" && depth == 0) return true;
    } else if (t.kind == Tok::Ident) {
      if (t.text == "fn" || t.text == "do") ++depth;
      else if (t.text == "end") { if (--depth < 0) return false; }
    }
  }
  return false;
}

Result<ExprPtr> Parser::clauseBody(const Loc &opener, const std::string &what) {
  skipNewlines();
  auto b = node(ExprKind::Block, peek().loc);
  while (!isWord("end")) {
    if (at(Tok::Eof)) return error(opener, fmt::format(FMT_STRING("missing 'end' for this '{}'"), what));
    if (!b->children.empty() && lineStartsClause()) break;
    NXC_TRY(e, expression());
    b->children.push_back(std::move(e));
    if (!at(Tok::Newline) && !isWord("end"))
      return error(peek().loc,
                   fmt::format(FMT_STRING("unexpected {}; expected an operator or a new line"), describe(peek())));
    skipNewlines();
  }
  if (b->children.empty()) return error(b->loc, "expected an expression after '->'");
  return std::move(b);
}

Status Parser::clauseList(Expr &out, const Loc &opener, const std::string &what, bool guards) {
  skipNewlines();
  while (!isWord("end")) {
    if (at(Tok::Eof)) return error(opener, fmt::format(FMT_STRING("missing 'end' for this '{}'"), what));
    NXC_TRY(head, expression());
    // The guard may start on the next line.
    if (guards && at(Tok::Newline) && peek(1).kind == Tok::Ident && peek(1).text == "when") take();
    if (guards && isWord("when")) {
      Loc wl = take().loc;
      NXC_TRY(guard, expression());
      auto w = node(ExprKind::Binary, wl);
      w->name = "when";
      w->children.push_back(std::move(head));
      w->children.push_back(std::move(guard));
      head = std::move(w);
    }
    if (!isPunct("->"))
      return error(peek().loc,
                   fmt::format(FMT_STRING("expected '->' in a '{}' clause, found {}"), what, describe(peek())));
    take();
    NXC_TRY(body, clauseBody(opener, what));
    out.children.push_back(std::move(head));
    out.children.push_back(std::move(body));
  }
  take();
  if (out.children.size() < 2) return error(opener, fmt::format(FMT_STRING("'{}' needs at least one clause"), what));
  return okStatus();
}

Status Parser::doElse(Expr &out, const Loc &opener, const std::string &what, bool allowElse) {
  if (isPunct(",") && peek(1).kind == Tok::KwKey && peek(1).text == "do") {
    take();
    take();
    skipNewlines();
    NXC_TRY(a, expression());
    out.children.push_back(std::move(a));
    if (allowElse && isPunct(",") && peek(1).kind == Tok::KwKey && peek(1).text == "else") {
      take();
      take();
      skipNewlines();
      NXC_TRY(b, expression());
      out.children.push_back(std::move(b));
    }
    return okStatus();
  }
  if (!isWord("do"))
    return error(peek().loc, fmt::format(FMT_STRING("expected 'do' or ', do:' after the '{}' head, found {}"), what,
                                         describe(peek())));
  take();
  std::string missing = fmt::format(FMT_STRING("missing 'end' for this '{}'"), what);
  NXC_TRY(a, block(allowElse ? std::set<std::string>{"end", "else"} : std::set<std::string>{"end"}, &opener, missing));
  out.children.push_back(std::move(a));
  if (allowElse && isWord("else")) {
    take();
    NXC_TRY(b, block({"end"}, &opener, missing));
    out.children.push_back(std::move(b));
  }
  if (!isWord("end")) return error(opener, missing);
  take();
  return okStatus();
}

Result<ExprPtr> Parser::ifExpr() {
  Token kw = take();
  auto e = node(ExprKind::If, kw.loc);
  e->name = kw.text;
  if (isPunct("(") && peek().loc.col == kw.loc.col + (int)kw.text.size()) {
    // if(c, do: a, else: b)
    Loc open = take().loc;
    skipNewlines();
    NXC_TRY(c, expression());
    e->children.push_back(std::move(c));
    skipNewlines();
    NXC_CHECK(doElse(*e, kw.loc, kw.text, true));
    skipNewlines();
    if (at(Tok::Eof)) return error(open, "missing ')' for this '('");
    NXC_CHECK(expectPunct(")", fmt::format(FMT_STRING("to close '{}('"), kw.text)));
    return std::move(e);
  }
  NXC_TRY(c, expression());
  e->children.push_back(std::move(c));
  NXC_CHECK(doElse(*e, kw.loc, kw.text, true));
  return std::move(e);
}

Result<ExprPtr> Parser::condExpr() {
  auto e = node(ExprKind::Cond, take().loc);
  NXC_CHECK(clauses(*e, e->loc, "cond", false));
  return std::move(e);
}

Result<ExprPtr> Parser::caseExpr() {
  auto e = node(ExprKind::Case, take().loc);
  NXC_TRY(subject, expression());
  e->children.push_back(std::move(subject));
  NXC_CHECK(clauses(*e, e->loc, "case", true));
  return std::move(e);
}

Result<ExprPtr> Parser::withExpr() {
  Loc loc = take().loc;
  std::vector<ExprPtr> qualifiers;
  while (true) {
    skipNewlines();
    NXC_TRY(q, expression());
    if (isWord("when")) return error(peek().loc, "guards in the clauses of 'with' are not supported yet");
    NXC_TRY(qualifier, generatorAfter(std::move(q)));
    qualifiers.push_back(std::move(qualifier));
    if (!isPunct(",") || (peek(1).kind == Tok::KwKey && peek(1).text == "do")) break;
    take();
  }
  ExprPtr body, otherwise;
  if (isPunct(",") && peek(1).kind == Tok::KwKey && peek(1).text == "do") {
    take();
    take();
    skipNewlines();
    NXC_TRY(b, expression());
    body = std::move(b);
  } else {
    NXC_CHECK(expectWord("do", "after the clauses of 'with'"));
    NXC_TRY(b, block({"end", "else"}, &loc, "missing 'end' for this 'with'"));
    body = std::move(b);
    if (isWord("else")) {
      take();
      otherwise = node(ExprKind::Case, loc);
      auto subject = node(ExprKind::Var, loc);
      subject->name = "with.unmatched";
      otherwise->children.push_back(std::move(subject));
      NXC_CHECK(clauseList(*otherwise, loc, "with", true));
    } else {
      if (!isWord("end")) return error(loc, "missing 'end' for this 'with'");
      take();
    }
  }
  auto var = [&](const char *name, const Loc &at) {
    auto v = node(ExprKind::Var, at);
    v->name = name;
    return v;
  };
  auto tagged = [&](const char *tag, ExprPtr v, const Loc &at) {
    auto t = node(ExprKind::Tuple, at);
    auto a = node(ExprKind::Atom, at);
    a->name = tag;
    t->children.push_back(std::move(a));
    t->children.push_back(std::move(v));
    return t;
  };
  ExprPtr inner = tagged("with.ok", std::move(body), loc);
  for (size_t k = qualifiers.size(); k-- > 0;) {
    ExprPtr q = std::move(qualifiers[k]);
    Loc at = q->loc;
    if (q->kind == ExprKind::Binary && q->name == "<-") {
      auto c = node(ExprKind::Case, at);
      c->children.push_back(std::move(q->children[1]));
      c->children.push_back(std::move(q->children[0]));
      c->children.push_back(std::move(inner));
      c->children.push_back(var("with.unmatched", at));
      c->children.push_back(tagged("with.else", var("with.unmatched", at), at));
      inner = std::move(c);
    } else {
      auto b = node(ExprKind::Block, at);
      b->children.push_back(std::move(q));
      b->children.push_back(std::move(inner));
      inner = std::move(b);
    }
  }
  auto outer = node(ExprKind::Case, loc);
  outer->name = "with"; // defn refuses it, as Nx (Tracer::caseExpr)
  outer->children.push_back(std::move(inner));
  outer->children.push_back(tagged("with.ok", var("with.result", loc), loc));
  outer->children.push_back(var("with.result", loc));
  outer->children.push_back(tagged("with.else", var("with.unmatched", loc), loc));
  outer->children.push_back(otherwise ? std::move(otherwise) : var("with.unmatched", loc));
  return std::move(outer);
}

Result<ExprPtr> Parser::generatorAfter(ExprPtr lhs) {
  if (!isPunct("<-")) return std::move(lhs);
  Loc at = take().loc;
  NXC_TRY(from, expression());
  auto g = node(ExprKind::Binary, at);
  g->name = "<-";
  g->children.push_back(std::move(lhs));
  g->children.push_back(std::move(from));
  return std::move(g);
}

Result<ExprPtr> Parser::forExpr() {
  auto e = node(ExprKind::For, take().loc);
  bool reduce = false;
  while (true) {
    skipNewlines();
    if (at(Tok::KwKey)) {
      bool isDo = peek().text == "do";
      if (isDo) break;
      NXC_TRY(p, pair());
      reduce |= p->name == "reduce";
      e->children.push_back(std::move(p));
    } else {
      NXC_TRY(q, expression());
      NXC_TRY(qualifier, generatorAfter(std::move(q)));
      e->children.push_back(std::move(qualifier));
    }
    if (!isPunct(",")) break;
    take();
  }
  if (e->children.empty()) return error(e->loc, "'for' needs at least one generator, as in for x <- list do ... end");
  if (reduce) {
    // The body is `acc -> expression` clauses.
    auto clausesNode = node(ExprKind::Case, e->loc);
    clausesNode->children.push_back(node(ExprKind::Atom, e->loc));
    NXC_CHECK(clauses(*clausesNode, e->loc, "for", true));
    e->children.push_back(std::move(clausesNode));
    return std::move(e);
  }
  bool commaDo = isPunct(",") && peek(1).kind == Tok::KwKey && peek(1).text == "do";
  if (commaDo || (at(Tok::KwKey) && peek().text == "do")) {
    if (commaDo) take();
    take();
    skipNewlines();
    NXC_TRY(b, expression());
    e->children.push_back(std::move(b));
    return std::move(e);
  }
  if (!isWord("do"))
    return error(peek().loc, fmt::format(FMT_STRING("expected 'do' after the generators of 'for', found {}"),
                                         describe(peek())));
  Loc doLoc = take().loc;
  NXC_TRY(b, block({"end"}, &doLoc, "missing 'end' for this 'do' of 'for'"));
  if (!isWord("end")) return error(doLoc, "missing 'end' for this 'do' of 'for'");
  take();
  e->children.push_back(std::move(b));
  return std::move(e);
}

Result<ExprPtr> Parser::whileExpr() {
  auto e = node(ExprKind::While, take().loc);
  NXC_TRY(init, expression());
  e->children.push_back(std::move(init));
  if (!isPunct(","))
    return error(peek().loc, fmt::format(FMT_STRING("expected ',' and a condition or generator after the initial "
                                                    "state of 'while', found {}"),
                                         describe(peek())));
  take();
  skipNewlines();
  NXC_TRY(first, expression());
  NXC_TRY(cond, generatorAfter(std::move(first)));
  e->children.push_back(std::move(cond));
  ExprPtr opts;
  while (isPunct(",") && peek(1).kind == Tok::KwKey) {
    take();
    if (!opts) opts = node(ExprKind::List, peek().loc);
    NXC_TRY(p, pair());
    opts->children.push_back(std::move(p));
  }
  if (!isWord("do"))
    return error(peek().loc,
                 fmt::format(FMT_STRING("expected 'do' after the condition of 'while', found {}"), describe(peek())));
  Loc doLoc = take().loc;
  NXC_TRY(body, block({"end"}, &e->loc, "missing 'end' for this 'while'"));
  if (!isWord("end")) return error(e->loc, "missing 'end' for this 'while'");
  take();
  (void)doLoc;
  e->children.push_back(std::move(body));
  if (opts) e->children.push_back(std::move(opts));
  return std::move(e);
}

Result<ExprPtr> Parser::anonymousFn() {
  Loc loc = take().loc;
  struct FnClause {
    std::vector<ExprPtr> params;
    ExprPtr guard, body;
    Loc loc, whenLoc;
  };
  std::vector<FnClause> fnClauses;
  skipNewlines(); // `fn` may put its first clause on the next line
  while (true) {
    FnClause c;
    c.loc = peek().loc;
    if (!isPunct("->")) {
      while (true) {
        NXC_TRY(p, pattern());
        c.params.push_back(std::move(p));
        if (!isPunct(",")) break;
        take();
        skipNewlines();
      }
    }
    if (isWord("when")) {
      c.whenLoc = take().loc;
      NXC_TRY(guard, expression());
      c.guard = std::move(guard);
    }
    if (!isPunct("->"))
      return error(peek().loc,
                   fmt::format(FMT_STRING("expected '->' after the parameters of 'fn', found {}"), describe(peek())));
    take();
    NXC_TRY(body, clauseBody(loc, "fn"));
    c.body = std::move(body);
    if (!fnClauses.empty() && c.params.size() != fnClauses[0].params.size())
      return error(c.loc, fmt::format(FMT_STRING("the clauses of this fn take {} and {} arguments; every clause of an "
                                                 "anonymous function takes the same number"),
                                      fnClauses[0].params.size(), c.params.size()));
    fnClauses.push_back(std::move(c));
    if (at(Tok::Eof)) return error(loc, "missing 'end' for this 'fn'");
    if (isWord("end")) break;
  }
  take();
  auto fn = node(ExprKind::Fn, loc);
  size_t arity = fnClauses[0].params.size();
  fn->intValue = (int64_t)arity;
  if (fnClauses.size() == 1 && !fnClauses[0].guard) {
    for (auto &p : fnClauses[0].params) fn->children.push_back(std::move(p));
    fn->children.push_back(std::move(fnClauses[0].body));
    return std::move(fn);
  }
  // Parameters named so that no Elixir variable can take their names.
  auto argVar = [&](size_t k) {
    auto v = node(ExprKind::Var, loc);
    v->name = fmt::format(FMT_STRING("fn.arg{}"), k);
    return v;
  };
  auto subjectOf = [&](std::vector<ExprPtr> items, const Loc &at) -> ExprPtr {
    if (items.size() == 1) return std::move(items[0]);
    auto t = node(ExprKind::Tuple, at);
    for (auto &i : items) t->children.push_back(std::move(i));
    return t;
  };
  std::vector<ExprPtr> args;
  for (size_t k = 0; k < arity; ++k) {
    fn->children.push_back(argVar(k));
    args.push_back(argVar(k));
  }
  auto c = node(ExprKind::Case, loc);
  c->children.push_back(arity == 0 ? node(ExprKind::Atom, loc) : subjectOf(std::move(args), loc));
  for (auto &clause : fnClauses) {
    ExprPtr head = arity == 0 ? node(ExprKind::Var, clause.loc) : subjectOf(std::move(clause.params), clause.loc);
    if (arity == 0) head->name = "_";
    if (clause.guard) {
      auto w = node(ExprKind::Binary, clause.whenLoc);
      w->name = "when";
      w->children.push_back(std::move(head));
      w->children.push_back(std::move(clause.guard));
      head = std::move(w);
    }
    c->children.push_back(std::move(head));
    c->children.push_back(std::move(clause.body));
  }
  fn->children.push_back(std::move(c));
  fn->name = ast::kFnClauses; // defn refuses it (Tracer::makeFunction)
  return std::move(fn);
}

} // namespace nxc::parser
