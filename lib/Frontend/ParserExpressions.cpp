//===- ParserExpressions.cpp - operators, calls and primary expressions --===//
//
// Elixir's operators by precedence, unary operators and captures, postfix
// calls and accesses, keyword pairs and the primary expressions (literals,
// aliases, lists, tuples, maps, strings with interpolation).
//
//===----------------------------------------------------------------------===//
#include "ParserImpl.h"

#include "llvm/Support/Compiler.h"

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>

namespace nxc::parser {

Status Parser::checkNesting() const {
  if (nesting_ > kMaxNesting)
    return error(peek().loc,
                 fmt::format(FMT_STRING("expression nested too deeply (more than {} levels)"), kMaxNesting));
  return okStatus();
}

Result<ExprPtr> Parser::expression() {
  NestingGuard guard(nesting_);
  NXC_CHECK(checkNesting());
  // `=` is the loosest and right-associative.
  NXC_TRY(lhs, binary(0));
  if (isPunct("=")) {
    Loc loc = take().loc;
    skipNewlines();
    NXC_TRY(rhs, expression());
    auto m = node(ExprKind::Match, loc);
    m->children.push_back(std::move(lhs));
    m->children.push_back(std::move(rhs));
    return std::move(m);
  }
  return std::move(lhs);
}

bool Parser::atOperator(const OpLevel &lvl) const {
  const Token &t = peek();
  if (t.kind != Tok::Punct && t.kind != Tok::Ident) return false;
  // `a not in list`
  if (t.kind == Tok::Ident && t.text == "not" && peek(1).kind == Tok::Ident && peek(1).text == "in")
    return std::find(lvl.ops.begin(), lvl.ops.end(), "in") != lvl.ops.end();
  for (auto &op : lvl.ops)
    if (t.text == op) return true;
  return false;
}

Result<ExprPtr> Parser::binary(size_t level) {
  if (level >= levels().size()) return unary();
  const OpLevel &lvl = levels()[level];
  NXC_TRY(lhs, binary(level + 1));
  while (atOperator(lvl)) {
    Token op = take();
    bool negated = op.text == "not";
    if (negated) op = take(); // `not in`: the `in`, then a `not` around it
    skipNewlines();
    // A right-associative chain (a <> b <> ...) nests one level per operator.
    NestingGuard guard(nesting_);
    NXC_CHECK(checkNesting());
    NXC_TRY(rhs, lvl.rightAssoc ? binary(level) : binary(level + 1));
    if (op.text == "|>") {
      if (rhs->kind != ExprKind::Call && rhs->kind != ExprKind::Apply)
        return error(rhs->loc, "the right side of '|>' must be a function call, as in x |> Nx.exp()");
      // f.(a) takes the piped value after the callee.
      rhs->children.insert(rhs->children.begin() + (rhs->kind == ExprKind::Apply ? 1 : 0), std::move(lhs));
      lhs = std::move(rhs);
      continue;
    }
    if (op.text == ".." && isPunct("//")) {
      take();
      NXC_TRY(step, binary(level + 1));
      auto r = node(ExprKind::Binary, op.loc);
      r->name = "..//";
      r->children.push_back(std::move(lhs));
      r->children.push_back(std::move(rhs));
      r->children.push_back(std::move(step));
      lhs = std::move(r);
      continue;
    }
    auto b = node(ExprKind::Binary, op.loc);
    b->name = op.text;
    b->children.push_back(std::move(lhs));
    b->children.push_back(std::move(rhs));
    lhs = std::move(b);
    if (negated) {
      auto n = node(ExprKind::Unary, op.loc);
      n->name = "not";
      n->children.push_back(std::move(lhs));
      lhs = std::move(n);
    }
  }
  return std::move(lhs);
}

Result<ExprPtr> Parser::unary() {
  const Token &t = peek();
  // A capture (&) nests its operand by recursion: one level each (the
  // other prefix operators parse their operand through expression()).
  std::optional<NestingGuard> guard;
  if (t.kind == Tok::Punct && t.text == "&") {
    guard.emplace(nesting_);
    NXC_CHECK(checkNesting());
  }
  if ((t.kind == Tok::Punct && (t.text == "-" || t.text == "+" || t.text == "!" || t.text == "^")) ||
      (t.kind == Tok::Ident && t.text == "not")) {
    NestingGuard guard(nesting_); // `- - - x` nests without parentheses
    NXC_CHECK(checkNesting());
    Token op = take();
    // The smallest s64 is written as the negation of a literal that on
    // its own does not fit in 64 bits.
    if (op.text == "-" && at(Tok::Int) && peek().text == "9223372036854775808") {
      take();
      auto n = node(ExprKind::Int, op.loc);
      n->intValue = INT64_MIN;
      n->floatValue = -9223372036854775808.0;
      return std::move(n);
    }
    NXC_TRY(operand, unary());
    // Fold a sign into a number literal, as Elixir does.
    if (op.text == "-" && (operand->kind == ExprKind::Int || operand->kind == ExprKind::Float)) {
      operand->intValue = -operand->intValue;
      operand->floatValue = -operand->floatValue;
      operand->loc = op.loc;
      return std::move(operand);
    }
    auto u = node(ExprKind::Unary, op.loc);
    u->name = op.text;
    u->children.push_back(std::move(operand));
    return std::move(u);
  }
  if (t.kind == Tok::Punct && t.text == "&") {
    Loc loc = take().loc;
    if (at(Tok::Int)) {
      auto v = node(ExprKind::Var, loc);
      v->name = "&" + take().text;
      return std::move(v);
    }
    // `&` binds looser than every binary operator: `&(&1 + x)`, `&f(&1) + 1`.
    NXC_TRY(operand, binary(0));
    return capture(std::move(operand), loc);
  }
  return postfix();
}

Result<ExprPtr> Parser::capture(ExprPtr e, const Loc &loc) {
  auto fn = node(ExprKind::Fn, loc);
  if (e->kind == ExprKind::Binary && e->name == "/" && e->children[1]->kind == ExprKind::Int &&
      (e->children[0]->kind == ExprKind::Var ||
       (e->children[0]->kind == ExprKind::Call && e->children[0]->children.empty()))) {
    int64_t arity = e->children[1]->intValue;
    if (arity < 0 || arity > 255) return error(e->children[1]->loc, "invalid arity in a function capture");
    const Expr &target = *e->children[0];
    auto call = node(ExprKind::Call, target.loc);
    call->name = target.name;
    call->module = target.kind == ExprKind::Call ? target.module : "";
    for (int64_t i = 1; i <= arity; ++i) {
      auto p = node(ExprKind::Var, loc);
      p->name = "&" + std::to_string(i);
      fn->children.push_back(std::move(p));
      auto a = node(ExprKind::Var, target.loc);
      a->name = "&" + std::to_string(i);
      call->children.push_back(std::move(a));
    }
    fn->intValue = arity;
    fn->children.push_back(std::move(call));
    return std::move(fn);
  }
  // The arity is the highest &n used; every &1..&n must appear.
  std::set<int64_t> used;
  std::function<void(const Expr &)> scan = [&](const Expr &x) {
    if (x.kind == ExprKind::Var && x.name.size() > 1 && x.name[0] == '&') used.insert(std::atoll(x.name.c_str() + 1));
    if (x.kind == ExprKind::Fn) return; // a nested capture has its own &n
    for (auto &c : x.children) scan(*c);
  };
  scan(*e);
  if (used.empty())
    return error(loc, "invalid args for &, expected one of: &Mod.fun/arity, &local/arity, or a capture "
                      "containing at least one argument as &1");
  int64_t arity = *used.rbegin();
  for (int64_t i = 1; i <= arity; ++i) {
    if (!used.count(i))
      return error(loc, fmt::format(FMT_STRING("capture argument &{} must be used within the capture"), i));
    auto p = node(ExprKind::Var, loc);
    p->name = "&" + std::to_string(i);
    fn->children.push_back(std::move(p));
  }
  fn->intValue = arity;
  fn->children.push_back(std::move(e));
  return std::move(fn);
}

// Out of line: postfix() is on the recursion of every nested expression,
// and this call's locals would grow each of its frames (a deep nesting
// must reach the nesting limit, not the stack's end, with sanitizers too).
LLVM_ATTRIBUTE_NOINLINE Result<ExprPtr> Parser::dynamicCall(ExprPtr receiver) {
  // `module.fun(args)` on a module held in a variable (Scholar's
  // `algorithm_module.fit(x, opts)`): apply(module, :fun, [args]).
  Loc loc = take().loc;
  Token fn = take();
  Loc open = take().loc;
  auto c = node(ExprKind::Call, loc);
  c->name = fn.text;
  NXC_CHECK(callArgs(*c, open));
  auto args = node(ExprKind::List, open);
  args->children = std::move(c->children);
  auto name = node(ExprKind::Atom, fn.loc);
  name->name = fn.text;
  auto apply = node(ExprKind::Call, receiver->loc);
  apply->name = "apply";
  apply->children.push_back(std::move(receiver));
  apply->children.push_back(std::move(name));
  apply->children.push_back(std::move(args));
  return std::move(apply);
}

Result<ExprPtr> Parser::postfix() {
  NXC_TRY(e, primary());
  while (isPunct("[") || (isPunct(".") && (isPunct("(", 1) || peek(1).kind == Tok::Ident))) {
    if (isPunct(".") && peek(1).kind == Tok::Ident && isPunct("(", 2)) {
      NXC_TRY(call, dynamicCall(std::move(e)));
      e = std::move(call);
      continue;
    }
    if (isPunct(".") && peek(1).kind == Tok::Ident) {
      // `map.key` (and a tensor's struct fields): Map.fetch!(map, :key).
      Loc loc = take().loc;
      Token field = take();
      auto c = node(ExprKind::Call, loc);
      c->module = "Map";
      c->name = "fetch!";
      c->children.push_back(std::move(e));
      auto key = node(ExprKind::Atom, field.loc);
      key->name = field.text;
      c->children.push_back(std::move(key));
      e = std::move(c);
      continue;
    }
    if (isPunct(".")) {
      Loc loc = take().loc;
      Loc open = take().loc;
      auto c = node(ExprKind::Apply, loc);
      c->name = "anonymous function";
      c->children.push_back(std::move(e));
      NXC_CHECK(callArgs(*c, open));
      e = std::move(c);
      continue;
    }
    Loc loc = take().loc;
    skipNewlines();
    ExprPtr index;
    if (at(Tok::KwKey)) {
      // t[axis_name: 0..2, other: 1]
      index = node(ExprKind::List, peek().loc);
      while (at(Tok::KwKey)) {
        NXC_TRY(p, pair());
        index->children.push_back(std::move(p));
        skipNewlines();
        if (!isPunct(",")) break;
        take();
        skipNewlines();
      }
    } else {
      NXC_TRY(i, expression());
      index = std::move(i);
    }
    skipNewlines();
    NXC_CHECK(expectPunct("]", "to close the access"));
    auto c = node(ExprKind::Call, loc);
    c->module = "Access";
    c->name = "get";
    c->children.push_back(std::move(e));
    c->children.push_back(std::move(index));
    e = std::move(c);
  }
  return std::move(e);
}

Status Parser::callArgs(Expr &call, const Loc &open) {
  skipNewlines();
  ExprPtr kw;
  while (!isPunct(")")) {
    if (at(Tok::Eof)) return error(open, "missing ')' for this '('");
    if (at(Tok::KwKey)) {
      if (!kw) kw = node(ExprKind::List, peek().loc);
      NXC_TRY(p, pair());
      kw->children.push_back(std::move(p));
    } else {
      if (kw) return error(peek().loc, "keyword arguments must come last in a call");
      NXC_TRY(a, expression());
      call.children.push_back(std::move(a));
    }
    skipNewlines();
    if (isPunct(",")) { take(); skipNewlines(); continue; }
    if (at(Tok::Eof)) return error(open, "missing ')' for this '('");
    if (!isPunct(")"))
      return error(peek().loc, fmt::format(FMT_STRING("expected ',' or ')' in the arguments of {}, found {}"),
                                           call.name, describe(peek())));
  }
  take();
  if (kw) call.children.push_back(std::move(kw));
  return okStatus();
}

bool Parser::startsOperand(const Token &t) {
  switch (t.kind) {
  case Tok::Int: case Tok::Float: case Tok::Atom: case Tok::Alias: case Tok::Attr: return true;
  case Tok::Ident: return !reservedWords().count(t.text);
  case Tok::Punct: return t.text == "(" || t.text == "{" || t.text == "[" || t.text == "-" || t.text == "+";
  default: return false;
  }
}

Result<ExprPtr> Parser::pair() {
  Token key = take();
  skipNewlines();
  NXC_TRY(v, expression());
  auto p = node(ExprKind::Pair, key.loc);
  p->name = key.text;
  p->children.push_back(std::move(v));
  return std::move(p);
}

Result<ExprPtr> Parser::aliasExpression() {
  const Token &t = peek();
    Loc loc = t.loc;
    NXC_TRY(aliasName, aliasPath(""));
    std::string mod = resolveAlias(aliasName);
    if (mod.rfind("Elixir.", 0) == 0) mod = mod.substr(7); // Elixir.Kernel is Kernel
    if (isPunct(".") && peek(1).kind == Tok::Punct && isPunct("(", 2) && mod == "Kernel") {
      // Kernel.==(a, b): Elixir's operator called as a function.
      take();
      Token op = take();
      Loc open = take().loc;
      auto c = node(ExprKind::Call, loc);
      NXC_CHECK(callArgs(*c, open));
      if (c->children.size() != 2)
        return error(loc, fmt::format(FMT_STRING("Kernel.{} takes two arguments"), op.text));
      auto b = node(ExprKind::Binary, op.loc);
      b->name = op.text;
      b->children = std::move(c->children);
      return std::move(b);
    }
    if (!isPunct(".") || peek(1).kind != Tok::Ident) {
      // A module name as a value (`raise ArgumentError, "..."`): an atom.
      auto n = node(ExprKind::Atom, loc);
      n->name = mod;
      return std::move(n);
    }
    take();
    Token fn = take();
    auto c = node(ExprKind::Call, loc);
    c->module = mod;
    c->name = fn.text;
    if (isPunct("(")) {
      Loc open = take().loc;
      NXC_CHECK(callArgs(*c, open));
    } else if (!(mod == "Nx.Constants")) {
      // Zero-arity remote calls may omit parentheses (Nx.Constants.pi).
    }
    return std::move(c);
    }

Result<ExprPtr> Parser::stringLiteral() {
  const Token &t = peek();
    // Double-quoted strings: labels, and messages with `#{...}` parts;
    // heredocs ("""), their lines without the closing line's indentation.
    // ~S"..." / ~S"""...""" (no escapes, no interpolation) and ~s read as strings.
    bool verbatim = t.text.compare(0, 2, "~S") == 0;
    bool sigil = verbatim || t.text.compare(0, 2, "~s") == 0;
    const std::string q = sigil ? t.text.substr(2) : t.text;
    bool heredoc = q.compare(0, 3, "\"\"\"") == 0;
    if (q.size() < 2 || q[0] != '"' || q.back() != '"')
      return error(t.loc, "charlists and sigils are not supported in defn");
    size_t from = 1, to = q.size() - 1, indent = 0;
    if (heredoc) {
      size_t nl = q.find('\n');
      size_t lastNl = q.rfind('\n');
      if (nl == std::string::npos || q.size() < 6) return error(t.loc, "malformed heredoc");
      from = nl + 1;
      to = lastNl + 1; // the closing line is only indentation and """
      indent = q.size() - 3 - to;
    }
    std::vector<ExprPtr> parts;
    std::string text;
    auto flush = [&] {
      auto s = std::make_unique<Expr>(ExprKind::String, t.loc);
      s->name = std::move(text);
      text.clear();
      parts.push_back(std::move(s));
    };
    for (size_t i = from; i < to; ++i) {
      char c = q[i];
      if (heredoc && (i == from || q[i - 1] == '\n'))
        for (size_t k = 0; k < indent && i < to && q[i] == ' '; ++k) c = q[++i];
      if (i >= to) break;
      if (c == '#' && i + 1 < to && q[i + 1] == '{' && !verbatim) {
        size_t end = interpolationEnd(q, i);
        if (end == std::string::npos || end > to) return error(t.loc, "unterminated #{ in a string");
        flush();
        NXC_TRY(inner, embeddedExpression(t.loc, i + 2, end - 1 - (i + 2)));
        parts.push_back(std::move(inner));
        i = end - 1;
        continue;
      }
      if (c == '\\' && i + 1 < to && !verbatim) {
        char n = q[++i];
        text += n == 'n' ? '\n' : n == 't' ? '\t' : n;
        continue;
      }
      text += c;
    }
    take();
    if (parts.empty()) {
      flush();
      return std::move(parts[0]);
    }
    if (!text.empty()) flush();
    auto s = std::make_unique<Expr>(ExprKind::Interpolation, t.loc);
    s->children = std::move(parts);
    return std::move(s);
    }

Result<ExprPtr> Parser::raiseWithoutParens(const Token &id) {
      // `raise ArgumentError, "message"` without parentheses.
      auto c = node(ExprKind::Call, id.loc);
      c->name = id.text;
      while (true) {
        NXC_TRY(arg, expression());
        c->children.push_back(std::move(arg));
        if (!isPunct(",")) break;
        take();
        skipNewlines();
        if (at(Tok::KwKey)) {
          auto kw = node(ExprKind::List, peek().loc);
          while (at(Tok::KwKey)) {
            NXC_TRY(p, pair());
            kw->children.push_back(std::move(p));
            if (!isPunct(",")) break;
            take();
            skipNewlines();
          }
          c->children.push_back(std::move(kw));
          break;
        }
      }
      return std::move(c);
      }

Result<ExprPtr> Parser::primary() {
  const Token &t = peek();
  switch (t.kind) {
  case Tok::Int: {
    Token tok = take();
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(tok.text.c_str(), &end, 10);
    if (errno || v > (unsigned long long)INT64_MAX)
      return error(tok.loc, fmt::format(FMT_STRING("integer literal {} does not fit in 64 bits"), tok.text));
    auto n = node(ExprKind::Int, tok.loc);
    n->intValue = (int64_t)v;
    n->floatValue = (double)v;
    return std::move(n);
  }
  case Tok::Float: {
    Token tok = take();
    auto n = node(ExprKind::Float, tok.loc);
    n->floatValue = std::strtod(tok.text.c_str(), nullptr);
    // Elixir rejects a float literal beyond the f64 range (it would be
    // Inf); one below the smallest subnormal is 0.0 there as here.
    if (std::isinf(n->floatValue))
      return error(tok.loc, fmt::format(FMT_STRING("float literal {} is out of range for a 64-bit float"), tok.text));
    return std::move(n);
  }
  case Tok::Atom: {
    auto n = node(ExprKind::Atom, t.loc);
    n->name = take().text;
    if (isPunct(".") && peek(1).kind == Tok::Ident) {
      // An Erlang module's function: :math.pi(), :erlang.setelement(1, t, x).
      take();
      Token fn = take();
      auto c = node(ExprKind::Call, n->loc);
      c->module = ":" + n->name;
      c->name = fn.text;
      if (isPunct("(")) {
        Loc open = take().loc;
        NXC_CHECK(callArgs(*c, open));
      }
      return std::move(c);
    }
    return std::move(n);
  }
  case Tok::Attr: {
    auto n = node(ExprKind::Var, t.loc);
    n->name = "@" + take().text;
    return std::move(n);
  }
  case Tok::Alias: return aliasExpression();
  case Tok::Ident: {
    if (t.text == "true" || t.text == "false" || t.text == "nil") {
      auto n = node(ExprKind::Atom, t.loc);
      n->name = take().text;
      return std::move(n);
    }
    if (t.text == "fn") return anonymousFn();
    if (t.text == "if" || t.text == "unless") return ifExpr();
    if (t.text == "cond") return condExpr();
    if (t.text == "case") return caseExpr();
    if (t.text == "while") return whileExpr();
    if (t.text == "for") return forExpr();
    if (t.text == "with" && !isPunct("(", 1) && !isPunct("=", 1)) return withExpr();
    if (reservedWords().count(t.text)) return error(t.loc, fmt::format(FMT_STRING("unexpected '{}'"), t.text));
    Token id = take();
    if (isPunct("(") && peek().loc.line == id.loc.line && peek().loc.col == id.loc.col + (int)id.text.size()) {
      Loc open = take().loc;
      auto c = node(ExprKind::Call, id.loc);
      c->name = id.text;
      NXC_CHECK(callArgs(*c, open));
      return std::move(c);
    }
    if (id.text == "raise" && peek().loc.line == id.loc.line &&
        (at(Tok::Alias) || at(Tok::String) || at(Tok::Ident)))
      return raiseWithoutParens(id);
    auto v = node(ExprKind::Var, id.loc);
    v->name = id.text;
    return std::move(v);
  }
  case Tok::Punct: {
    if (t.text == ".." && !startsOperand(peek(1))) {
      // A bare `..`: the full range (0..-1//1).
      auto r = node(ExprKind::Binary, take().loc);
      r->name = "..";
      return std::move(r);
    }
    if (t.text == "(") {
      Loc open = take().loc;
      skipNewlines();
      NXC_TRY(e, expression());
      skipNewlines();
      if (at(Tok::Eof)) return error(open, "missing ')' for this '('");
      if (!isPunct(")"))
        return error(peek().loc, fmt::format(FMT_STRING("expected ')' to close the '(' at line {}, found {}"),
                                             open.line, describe(peek())));
      take();
      return std::move(e);
    }
    if (t.text == "%") return mapLiteral(/*pattern=*/false);
    if (t.text == "{" || t.text == "[") {
      bool tuple = t.text == "{";
      const char *close = tuple ? "}" : "]";
      Loc open = take().loc;
      auto c = node(tuple ? ExprKind::Tuple : ExprKind::List, open);
      skipNewlines();
      while (!isPunct(close)) {
        if (at(Tok::Eof)) return error(open, fmt::format(FMT_STRING("missing '{}' for this '{}'"), close, t.text));
        if (at(Tok::KwKey)) {
          NXC_TRY(p, pair());
          c->children.push_back(std::move(p));
        } else {
          NXC_TRY(e, expression());
          c->children.push_back(std::move(e));
        }
        skipNewlines();
        if (!tuple && isPunct("|") && !c->children.empty()) {
          // [a, b | tail]
          take();
          skipNewlines();
          NXC_TRY(tail, expression());
          c->children.push_back(std::move(tail));
          c->name = "|";
          skipNewlines();
          if (!isPunct("]"))
            return error(peek().loc, fmt::format(FMT_STRING("expected ']' after the tail of a list, found {}"),
                                                 describe(peek())));
          break;
        }
        if (isPunct(",")) { take(); skipNewlines(); continue; }
        if (at(Tok::Eof))
          return error(open, fmt::format(FMT_STRING("missing '{}' for this '{}'"), close, tuple ? "{" : "["));
        if (!isPunct(close))
          return error(peek().loc,
                       fmt::format(FMT_STRING("expected ',' or '{}', found {}"), close, describe(peek())));
      }
      take();
      return std::move(c);
    }
    break;
  }
  case Tok::String: return stringLiteral();
  default:
    break;
  }
  return error(t.loc, fmt::format(FMT_STRING("expected an expression, found {}"), describe(t)));
}

} // namespace nxc::parser
