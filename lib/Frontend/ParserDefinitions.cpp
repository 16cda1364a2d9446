//===- ParserDefinitions.cpp - modules, definitions and patterns ---------===//
//
// defmodule bodies (definitions, attributes, aliases, imports, module-level
// Elixir), function heads with their defaults and guards, and patterns.
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

Result<Module> Parser::module() {
  Module m;
  m.loc = take().loc; // defmodule
  NXC_TRY(name, aliasPath("after 'defmodule'"));
  m.name = name;
  NXC_CHECK(expectWord("do", "after the module name"));
  skipNewlines();
  current_ = &m;
  attributeTokens_.clear(); // a module's attributes are its own
  while (!isWord("end")) {
    if (at(Tok::Eof)) return error(m.loc, "missing 'end' for this 'defmodule'");
    NXC_CHECK(moduleItem(m));
    if (!at(Tok::Newline) && !isWord("end"))
      return error(peek().loc, fmt::format(FMT_STRING("unexpected {} after a module item; expected a new line"),
                                           describe(peek())));
    skipNewlines();
  }
  take();
  current_ = nullptr;
  return m;
}

Status Parser::moduleItem(Module &m) {
  const Token &t = peek();
  if (t.kind == Tok::Ident && (t.text == "import" || t.text == "alias" || t.text == "require" || t.text == "use")) {
    std::string what = take().text;
    std::string target;
    if (peek().kind == Tok::Ident && peek().text == "__MODULE__") {
      // `alias __MODULE__, as: Axon`, `alias __MODULE__.Sub`: the module itself.
      take();
      target = m.name;
      while (isPunct(".") && peek(1).kind == Tok::Alias) {
        take();
        NXC_TRY(rest, aliasPath(""));
        target += "." + rest;
      }
    } else {
      NXC_TRY(path, aliasPath(fmt::format(FMT_STRING("after '{}'"), what)));
      target = path;
    }
    if (what == "import") m.imports.push_back(target);
    std::string shortName = target.substr(target.rfind('.') == std::string::npos ? 0 : target.rfind('.') + 1);
    bool aliased = what == "alias";
    // Options such as `only: [...]` are accepted and ignored; `as: X` names the alias.
    while (isPunct(",")) {
      take();
      skipNewlines();
      if (at(Tok::KwKey)) {
        bool as = peek().text == "as";
        take();
        skipNewlines();
        if (at(Tok::Alias)) {
          NXC_TRY(alias, aliasPath(""));
          if (as) {
            shortName = alias;
            aliased = true;
          }
          continue;
        }
      }
      NXC_TRY(opt, expression());
      (void)opt;
    }
    if (aliased && shortName != target) m.aliases.push_back({shortName, target});
    return okStatus();
  }
  if (t.kind == Tok::Ident && t.text == "defstruct") {
    // The fields, in order (a struct's results are flattened that way).
    take();
    size_t start = pos_;
    auto v = expression();
    if (v.ok() && v.value()->kind == ExprKind::List) {
      for (auto &c : v.value()->children)
        if (c->kind == ExprKind::Atom || c->kind == ExprKind::Pair) m.structFields.push_back(c->name);
    } else {
      pos_ = start;
    }
    if (!at(Tok::Newline) && !isWord("end")) return skipExpression();
    return okStatus();
  }
  if (t.kind == Tok::Attr && t.text == "derive") {
    // @derive {Nx.Container, containers: [...]}: the order Nx flattens.
    take();
    size_t start = pos_;
    auto v = expression();
    if (v.ok() && v.value()->kind == ExprKind::Tuple && v.value()->children.size() >= 2 &&
        v.value()->children[0]->kind == ExprKind::Atom && v.value()->children[0]->name == "Nx.Container") {
      // {Nx.Container, containers: [...]} holds its options as pairs (or a list).
      std::vector<const Expr *> options;
      for (size_t k = 1; k < v.value()->children.size(); ++k) {
        const Expr *o = v.value()->children[k].get();
        if (o->kind == ExprKind::List)
          for (auto &kw : o->children) options.push_back(kw.get());
        else
          options.push_back(o);
      }
      for (const Expr *kw : options)
        if (kw->kind == ExprKind::Pair && kw->name == "containers" && kw->children[0]->kind == ExprKind::List)
          for (auto &f : kw->children[0]->children)
            if (f->kind == ExprKind::Atom) m.containerFields.push_back(f->name);
    } else {
      pos_ = start;
    }
    if (!at(Tok::Newline) && !isWord("end")) return skipExpression();
    return okStatus();
  }
  if (t.kind == Tok::Attr) {
    static const std::set<std::string> docs = {"moduledoc", "doc", "spec", "type", "typep", "opaque",
                                               "impl", "behaviour", "callback", "derive", "enforce_keys",
                                               "compile", "dialyzer", "typedoc", "deprecated", "since"};
    if (docs.count(t.text)) {
      // Documentation and typespecs: plain Elixir.
      take();
      return skipExpression();
    }
    Attribute a;
    a.name = t.text;
    a.loc = take().loc;
    a.bindingsBefore = m.bindings.size();
    if (at(Tok::Alias) && !(isPunct(".", 1) && peek(2).kind == Tok::Ident)) {
      // `@defn_compiler EXLA`: a compile-time setting nxc does not need.
      NXC_TRY(name, aliasPath(""));
      a.value = node(ExprKind::Atom, a.loc);
      a.value->name = name;
    } else {
      // An attribute nxc cannot read is kept with the reason, for a use.
      size_t start = pos_;
      auto v = expression();
      if (v.ok() && (at(Tok::Newline) || isWord("end"))) {
        a.value = std::move(v.value());
        attributeTokens_[a.name] = {start, pos_};
      } else {
        a.skipped = v.ok() ? fmt::format(FMT_STRING("unexpected {}"), describe(peek())) : v.error().message;
        pos_ = start;
        NXC_CHECK(skipExpression());
      }
    }
    m.attributes.push_back(std::move(a));
    return okStatus();
  }
  if (t.kind == Tok::Ident && (t.text == "def" || t.text == "defp" || t.text == "deftransform" ||
                               t.text == "deftransformp" || (library && (t.text == "defn" || t.text == "defnp")))) {
    // Plain functions and transforms: kept when nxc can read their body
    // (a def can be compiled as an entry point, as Nx.Defn.jit traces it;
    // a transform runs at trace time); otherwise skipped, with their name,
    // arity and the reason kept for the message of a call.
    size_t start = pos_;
    auto f = function();
    if (!f) {
      pos_ = start;
      Function stub;
      stub.skipped = f.error().message;
      stub.skippedLoc = f.error().loc;
      stub.kind = take().text;
      stub.loc = t.loc;
      if (peek().kind == Tok::Ident) stub.name = peek().text;
      size_t arity = 0;
      if (isPunct("(", 1)) {
        // Count the top-level commas of the parameter list.
        int depth = 0;
        bool any = false;
        for (size_t k = 1; pos_ + k < toks_.size(); ++k) {
          const Token &p = peek(k);
          if (opens(p)) ++depth;
          else if (closes(p)) { if (--depth == 0) break; }
          else if (depth == 1 && p.kind == Tok::Punct && p.text == ",") ++arity;
          else if (depth == 1 && p.kind == Tok::Punct && p.text == "\\\\") stub.defaults.resize(arity + 1);
          if (depth >= 1 && !(p.kind == Tok::Punct && p.text == "(" && depth == 1)) any = true;
        }
        if (any) ++arity;
      }
      NXC_CHECK(skipExpression());
      // A guard on the next line, and the body after it.
      if (at(Tok::Newline) && peek(1).kind == Tok::Ident && peek(1).text == "when") {
        take();
        NXC_CHECK(skipExpression());
      }
      stub.params.resize(arity);
      stub.defaults.resize(arity);
      if (!stub.name.empty()) m.functions.push_back(std::move(stub));
      return okStatus();
    }
    m.functions.push_back(std::move(*f));
    return okStatus();
  }
  if (t.kind == Tok::Ident && (t.text == "defn" || t.text == "defnp")) {
    NXC_TRY(f, function());
    for (auto &other : m.functions)
      if (other.name == f.name && other.params.size() == f.params.size())
        return error(f.loc, fmt::format(FMT_STRING("cannot compile {} {}/{} with multiple clauses (first defined at "
                                                   "line {})"),
                                        f.kind, f.name, f.params.size(), other.loc.line));
    m.functions.push_back(std::move(f));
    return okStatus();
  }
  if (t.kind == Tok::Ident && (t.text == "defmacro" || t.text == "defmacrop" ||
                               t.text == "defdelegate" || t.text == "defguard" || t.text == "defimpl" ||
                               t.text == "defprotocol" || t.text == "defexception" || t.text == "defmodule" ||
                               t.text == "defoverridable")) {
    // Plain Elixir: skipped.
    take();
    return skipExpression();
  }
  if (t.kind == Tok::Ident && !reservedWords().count(t.text) && isPunct("=", 1)) {
    // `schema = [...]`: a module-level binding the attributes below may use.
    Binding b;
    b.name = t.text;
    b.loc = take().loc;
    take();
    skipNewlines();
    size_t start = pos_;
    auto v = expression();
    if (v.ok() && (at(Tok::Newline) || isWord("end"))) {
      b.value = std::move(v.value());
    } else {
      b.skipped = v.ok() ? fmt::format(FMT_STRING("unexpected {}"), describe(peek())) : v.error().message;
      pos_ = start;
      NXC_CHECK(skipExpression());
    }
    m.bindings.push_back(std::move(b));
    return okStatus();
  }
  if (t.kind == Tok::Ident && t.text == "for") {
    size_t start = pos_;
    NXC_TRY(read, moduleFor(m));
    if (read) return okStatus();
    // A list nxc cannot split: passed over, as other module-level Elixir.
    pos_ = start;
    return skipExpression();
  }
  if ((t.kind == Tok::Ident && !reservedWords().count(t.text)) || t.kind == Tok::Alias) {
    // Other module-level Elixir (`for ... do def ... end`, calls): passed
    // over, as plain defs that nxc cannot read are.
    return skipExpression();
  }
  return error(t.loc, fmt::format(FMT_STRING("expected defn, defnp, def, defp, import, alias or @attribute in module "
                                             "body, found {}"),
                                  describe(t)));
}

Result<bool> Parser::moduleFor(Module &m) {
  using Span = std::pair<size_t, size_t>; // token positions [first, second)
  take();                                 // for
  // The pattern: a variable, or a {key, value} pair of them.
  std::vector<std::string> vars;
  if (at(Tok::Ident)) {
    vars.push_back(take().text);
  } else if (isPunct("{") && peek(1).kind == Tok::Ident && isPunct(",", 2) && peek(3).kind == Tok::Ident &&
             isPunct("}", 4)) {
    take();
    vars.push_back(take().text);
    take();
    vars.push_back(take().text);
    take();
  } else {
    return false;
  }
  if (!isPunct("<-")) return false;
  take();
  // The list: a module attribute's value or a literal list, `[...] ++ [...]`.
  Span list;
  if (at(Tok::Attr)) {
    auto found = attributeTokens_.find(take().text);
    if (found == attributeTokens_.end()) return false;
    list = found->second;
  } else if (isPunct("[")) {
    size_t begin = pos_;
    int depth = 0;
    do {
      if (opens(peek()))
        ++depth;
      else if (closes(peek()))
        --depth;
      take();
    } while (depth > 0 && !at(Tok::Eof));
    list = {begin, pos_};
  } else {
    return false;
  }
  if (!isWord("do")) return false;
  // The body: the tokens between `do` and its `end`.
  take();
  size_t bodyBegin = pos_;
  for (int depth = 1; depth > 0; take()) {
    if (at(Tok::Eof)) return error(toks_[bodyBegin - 1].loc, "missing 'end' for this 'do'");
    if (opens(peek()))
      ++depth;
    else if (closes(peek()) && --depth == 0)
      break;
  }
  Span body{bodyBegin, pos_};
  take(); // end
  // The elements: each list's top-level items, each item's key and value.
  std::vector<std::vector<Span>> elements;
  for (size_t k = list.first; k < list.second;) {
    if (toks_[k].kind == Tok::Newline) {
      ++k;
      continue;
    }
    if (toks_[k].kind == Tok::Punct && toks_[k].text == "++") {
      ++k;
      continue;
    }
    if (!(toks_[k].kind == Tok::Punct && toks_[k].text == "[")) return false;
    int depth = 0;
    size_t itemBegin = k + 1;
    auto addItem = [&](size_t end) -> bool {
      while (itemBegin < end && toks_[itemBegin].kind == Tok::Newline) ++itemBegin;
      if (itemBegin == end) return true;
      if (vars.size() == 1) {
        elements.push_back({{itemBegin, end}});
      } else if (toks_[itemBegin].kind == Tok::KwKey) {
        elements.push_back({{itemBegin, itemBegin + 1}, {itemBegin + 1, end}});
      } else {
        return false; // `{k, v}` items: not a keyword list nxc reads
      }
      return true;
    };
    for (; k < list.second; ++k) {
      const Token &t = toks_[k];
      if (opens(t)) {
        ++depth;
      } else if (closes(t)) {
        if (--depth == 0) {
          if (!addItem(k)) return false;
          ++k;
          break;
        }
      } else if (depth == 1 && t.kind == Tok::Punct && t.text == ",") {
        if (!addItem(k)) return false;
        itemBegin = k + 1;
      }
    }
  }
  // Each element's definitions as tokens, all made before any is read: an
  // unquote nxc cannot replace passes the whole `for` over.
  static const std::set<std::string> definers = {"def", "defp", "defn", "defnp", "deftransform", "deftransformp"};
  std::vector<std::vector<Token>> copies;
  for (auto &element : elements) {
    std::vector<Token> tokens;
    for (size_t k = body.first; k < body.second; ++k) {
      const Token &t = toks_[k];
      if (!(t.kind == Tok::Ident && t.text == "unquote" && k + 1 < body.second && toks_[k + 1].text == "(")) {
        tokens.push_back(t);
        continue;
      }
      // unquote(var) or unquote(Macro.escape(var)).
      size_t var = k + 2, close = k + 3;
      if (k + 8 < body.second && toks_[var].kind == Tok::Alias && toks_[var].text == "Macro" &&
          toks_[var + 1].text == "." && toks_[var + 2].text == "escape" && toks_[var + 3].text == "(" &&
          toks_[var + 5].text == ")") {
        var = k + 6;
        close = k + 8;
      }
      auto which = std::find(vars.begin(), vars.end(), toks_[var].text);
      if (toks_[var].kind != Tok::Ident || which == vars.end() || close >= body.second || toks_[close].text != ")")
        return false;
      Span value = element[which - vars.begin()];
      bool keyword = toks_[value.first].kind == Tok::KwKey && value.second == value.first + 1;
      if (!tokens.empty() && tokens.back().kind == Tok::Ident && definers.count(tokens.back().text)) {
        // The function's name: an atom's text.
        const Token &v = toks_[value.first];
        if (value.second != value.first + 1 || !(v.kind == Tok::Atom || keyword)) return false;
        tokens.push_back(Token{Tok::Ident, v.text, t.loc});
      } else if (keyword) {
        tokens.push_back(Token{Tok::Atom, toks_[value.first].text, t.loc});
      } else {
        tokens.insert(tokens.end(), toks_.begin() + value.first, toks_.begin() + value.second);
      }
      k = close;
    }
    tokens.push_back(Token{Tok::Newline, "", toks_[body.second].loc});
    tokens.push_back(Token{Tok::Eof, "", toks_[body.second].loc});
    copies.push_back(std::move(tokens));
  }
  // Read as module items, with the file's tokens put back after.
  std::vector<Token> fileTokens = std::move(toks_);
  size_t filePos = pos_;
  Status read = okStatus();
  for (auto &tokens : copies) {
    toks_ = std::move(tokens);
    pos_ = 0;
    skipNewlines();
    while (read.ok() && !at(Tok::Eof)) {
      read = moduleItem(m);
      if (read.ok() && !at(Tok::Newline) && !at(Tok::Eof))
        read = error(peek().loc, fmt::format(FMT_STRING("unexpected {} after a module item; expected a new line"),
                                             describe(peek())));
      skipNewlines();
    }
    if (!read.ok()) break;
  }
  toks_ = std::move(fileTokens);
  pos_ = filePos;
  if (!read.ok()) return read.error();
  return true;
}

Result<Function> Parser::function() {
  Function f;
  f.kind = peek().text;
  f.loc = take().loc;
  // `defn(name(args), do: expr)`: the whole definition in parentheses.
  bool parenthesised = false;
  Loc outerOpen;
  if (isPunct("(") && peek(1).kind == Tok::Ident && isPunct("(", 2)) {
    outerOpen = take().loc;
    parenthesised = true;
  }
  if (peek().kind != Tok::Ident || reservedWords().count(peek().text))
    return error(peek().loc,
                 fmt::format(FMT_STRING("expected a function name after '{}', found {}"), f.kind, describe(peek())));
  f.name = take().text;
  if (isPunct("(")) {
    take();
    skipNewlines();
    while (!isPunct(")")) {
      NXC_TRY(p, pattern());
      ExprPtr def;
      if (isPunct("\\\\")) {
        take();
        NXC_TRY(d, expression());
        def = std::move(d);
      }
      f.params.push_back(std::move(p));
      f.defaults.push_back(std::move(def));
      skipNewlines();
      if (isPunct(",")) { take(); skipNewlines(); continue; }
      if (!isPunct(")"))
        return error(peek().loc, fmt::format(FMT_STRING("expected ',' or ')' in the parameter list, found {}"),
                                             describe(peek())));
    }
    take();
  }
  if (f.kind == "defn" || f.kind == "defnp")
    for (auto &p : f.params) NXC_CHECK(checkDefnPattern(*p));
  // A guard may start on the next line; several `when`s are alternatives
  // (`when a when b` holds when either does).
  for (;;) {
    if (at(Tok::Newline) && peek(1).kind == Tok::Ident && peek(1).text == "when") take();
    if (!isWord("when")) break;
    // Guards select among the clauses of Elixir functions; defn has none.
    if (f.kind == "defn" || f.kind == "defnp") return error(peek().loc, "guards are not allowed in defn");
    Loc whenLoc = take().loc;
    skipNewlines();
    NXC_TRY(g, expression());
    if (!f.guard) {
      f.guard = std::move(g);
    } else {
      auto either = std::make_unique<Expr>(ExprKind::Binary, whenLoc);
      either->name = "or";
      either->children.push_back(std::move(f.guard));
      either->children.push_back(std::move(g));
      f.guard = std::move(either);
    }
  }
  if (isPunct(",") && peek(1).kind == Tok::KwKey && peek(1).text == "do") {
    take();
    take();
    skipNewlines();
    NXC_TRY(e, expression());
    f.body = std::move(e);
    if (parenthesised) {
      skipNewlines();
      if (at(Tok::Eof)) return error(outerOpen, "missing ')' for this '('");
      NXC_CHECK(expectPunct(")", "to close the definition"));
    }
    return f;
  }
  if (parenthesised)
    return error(peek().loc, fmt::format(FMT_STRING("expected ', do:' in a parenthesised definition, found {}"),
                                         describe(peek())));
  // A bodiless head (Elixir's way to give the clauses below defaults).
  if (!f.guard && f.kind != "defn" && f.kind != "defnp" && (at(Tok::Newline) || at(Tok::Eof) || isWord("end"))) {
    f.head = true;
    return f;
  }
  if (!isWord("do"))
    return error(peek().loc, fmt::format(FMT_STRING("expected 'do' or ', do:' after the parameters of {}, found {}"),
                                         f.name, describe(peek())));
  Loc doLoc = take().loc;
  std::string missingEnd = fmt::format(FMT_STRING("missing 'end' for this 'do' of {} {}"), f.kind, f.name);
  NXC_TRY(b, block({"end"}, &doLoc, missingEnd));
  if (!isWord("end")) return error(doLoc, missingEnd);
  take();
  f.body = std::move(b);
  return f;
}

Result<ExprPtr> Parser::pattern() {
  NestingGuard guard(nesting_);
  NXC_CHECK(checkNesting());
  NXC_TRY(p, primaryPattern());
  if (isPunct("=")) {
    Loc loc = take().loc;
    NXC_TRY(rhs, primaryPattern());
    auto m = node(ExprKind::Match, loc);
    m->children.push_back(std::move(p));
    m->children.push_back(std::move(rhs));
    return std::move(m);
  }
  return std::move(p);
}

Status Parser::checkDefnPattern(const Expr &p) {
  if (p.kind == ExprKind::Var) return okStatus();
  if (p.kind == ExprKind::Tuple || p.kind == ExprKind::Match) {
    for (auto &c : p.children) NXC_CHECK(checkDefnPattern(*c));
    return okStatus();
  }
  // Maps and structs of tensors (containers): `%Mod{field: var}`.
  if (p.kind == ExprKind::Map) {
    for (auto &pair : p.children) NXC_CHECK(checkDefnPattern(*pair->children[0]));
    return okStatus();
  }
  std::string found = p.kind == ExprKind::Int     ? std::to_string(p.intValue)
                      : p.kind == ExprKind::Atom  ? (p.name == "nil" || p.name == "true" || p.name == "false"
                                                         ? p.name
                                                         : ":" + p.name)
                      : p.kind == ExprKind::Map   ? "%"
                      : p.kind == ExprKind::List  ? "["
                      : p.kind == ExprKind::String ? "\"" + p.name + "\""
                                                   : "a literal";
  return error(p.loc, fmt::format(FMT_STRING("only variables, tuples and maps of them are allowed as patterns in "
                                             "defn, found '{}'"),
                                  found));
}

Result<ExprPtr> Parser::mapLiteral(bool pattern) {
  Loc loc = take().loc;
  auto m = node(ExprKind::Map, loc);
  if (at(Tok::Alias)) {
    NXC_TRY(mod, aliasPath(""));
    m->name = resolveAlias(mod);
  } else if (peek().kind == Tok::Ident && peek().text == "__MODULE__") {
    take();
    m->name = "__MODULE__";
  } else if (peek().kind == Tok::Ident && peek().text == "_") {
    take();
    m->name = "_";
  }
  if (!isPunct("{")) return error(peek().loc, fmt::format(FMT_STRING("expected '{{' after '%', found {}"),
                                                          describe(peek())));
  Loc open = take().loc;
  skipNewlines();
  if (!pattern && !isPunct("}") && !at(Tok::KwKey)) {
    // Either `%{m | k: v}` or `%{key => value, ...}`.
    NXC_TRY(first, expression());
    skipNewlines();
    if (isPunct("|")) {
      take();
      skipNewlines();
      m->intValue = 1;
      m->children.push_back(std::move(first));
    } else {
      if (!isPunct("=>"))
        return error(peek().loc, fmt::format(FMT_STRING("expected '=>' or '|' in a map, found {}"), describe(peek())));
      if (first->kind != ExprKind::Atom && first->kind != ExprKind::String)
        return error(first->loc, "map keys must be atoms or strings in nxc (as in %{key: value}, %{:key => value} or "
                                 "%{\"key\" => value})");
      take();
      skipNewlines();
      NXC_TRY(v, expression());
      auto p = node(ExprKind::Pair, first->loc);
      // A string key is kept with a leading '"' (ast::kStringKeyMark).
      p->name = first->kind == ExprKind::String ? "\"" + first->name : first->name;
      p->children.push_back(std::move(v));
      m->children.push_back(std::move(p));
      skipNewlines();
      if (isPunct(",")) { take(); skipNewlines(); }
    }
  }
  while (!isPunct("}")) {
    if (at(Tok::Eof)) return error(open, "missing '}' for this '%{'");
    ExprPtr key;
    if (at(Tok::KwKey)) {
      Token k = take();
      key = node(ExprKind::Atom, k.loc);
      key->name = k.text;
    } else if (at(Tok::Atom) || at(Tok::String)) {
      bool text = at(Tok::String);
      Loc kl = peek().loc;
      std::string name;
      if (text) {
        NXC_TRY(s, primary());
        if (s->kind != ExprKind::String) return error(kl, "a map key cannot be an interpolated string");
        name = "\"" + s->name;
      } else {
        name = take().text;
      }
      key = node(ExprKind::Atom, kl);
      key->name = name;
      skipNewlines();
      if (!isPunct("=>")) return error(peek().loc, fmt::format(FMT_STRING("expected '=>' after the key :{}, found {}"),
                                                               key->name, describe(peek())));
      take();
    } else {
      return error(peek().loc, fmt::format(FMT_STRING("map keys must be atoms or strings in nxc (as in %{{key: "
                                                      "value}} or %{{\"key\" => value}}), found {}"),
                                           describe(peek())));
    }
    skipNewlines();
    ExprPtr v;
    if (pattern) {
      NXC_TRY(pv, this->pattern());
      v = std::move(pv);
    } else {
      NXC_TRY(ev, expression());
      v = std::move(ev);
    }
    auto p = node(ExprKind::Pair, key->loc);
    p->name = key->name;
    p->children.push_back(std::move(v));
    m->children.push_back(std::move(p));
    skipNewlines();
    if (isPunct(",")) { take(); skipNewlines(); continue; }
    if (!isPunct("}"))
      return error(peek().loc, fmt::format(FMT_STRING("expected ',' or '}}' in a map, found {}"), describe(peek())));
  }
  take();
  return std::move(m);
}

Result<ExprPtr> Parser::primaryPattern() {
  const Token &t = peek();
  // Literals, lists and maps match in the heads of Elixir functions' clauses.
  if (t.kind == Tok::Atom) {
    auto a = node(ExprKind::Atom, t.loc);
    a->name = take().text;
    return std::move(a);
  }
  if (t.kind == Tok::Ident && (t.text == "true" || t.text == "false" || t.text == "nil")) {
    auto a = node(ExprKind::Atom, t.loc);
    a->name = take().text;
    return std::move(a);
  }
  if (t.kind == Tok::Int || t.kind == Tok::Float) return primary();
  if (isPunct("%")) return mapLiteral(/*pattern=*/true);
  if (isPunct("[")) {
    auto list = node(ExprKind::List, take().loc);
    skipNewlines();
    while (!isPunct("]")) {
      if (at(Tok::KwKey)) {
        // [key: pattern, ...]
        Token key = take();
        skipNewlines();
        NXC_TRY(v, pattern());
        auto pair = node(ExprKind::Pair, key.loc);
        pair->name = key.text;
        pair->children.push_back(std::move(v));
        list->children.push_back(std::move(pair));
        skipNewlines();
        if (isPunct(",")) { take(); skipNewlines(); continue; }
        break;
      }
      NXC_TRY(p, pattern());
      list->children.push_back(std::move(p));
      skipNewlines();
      if (isPunct("|")) {
        take();
        skipNewlines();
        NXC_TRY(tail, pattern());
        list->name = "|";
        list->children.push_back(std::move(tail));
        skipNewlines();
        break;
      }
      if (isPunct(",")) { take(); skipNewlines(); continue; }
      if (!isPunct("]"))
        return error(peek().loc,
                     fmt::format(FMT_STRING("expected ',', '|' or ']' in a list pattern, found {}"), describe(peek())));
    }
    NXC_CHECK(expectPunct("]", "to close the list pattern"));
    return std::move(list);
  }
  if (t.kind == Tok::Ident && !reservedWords().count(t.text)) {
    auto v = node(ExprKind::Var, t.loc);
    v->name = take().text;
    return std::move(v);
  }
  if (isPunct("{")) {
    auto tup = node(ExprKind::Tuple, take().loc);
    skipNewlines();
    while (!isPunct("}")) {
      NXC_TRY(p, pattern());
      tup->children.push_back(std::move(p));
      skipNewlines();
      if (isPunct(",")) { take(); skipNewlines(); continue; }
      if (!isPunct("}"))
        return error(peek().loc,
                     fmt::format(FMT_STRING("expected ',' or '}}' in a tuple pattern, found {}"), describe(peek())));
    }
    take();
    return std::move(tup);
  }
  return error(t.loc, fmt::format(FMT_STRING("expected a pattern (a variable, literal, tuple, list or map), found {}"),
                                  describe(t)));
}

Result<ExprPtr> Parser::block(const std::set<std::string> &terminators, const Loc *opener, const std::string &missing) {
  skipNewlines();
  auto b = node(ExprKind::Block, peek().loc);
  while (!at(Tok::Eof) && !(peek().kind == Tok::Ident && terminators.count(peek().text))) {
    if (opener && peek().kind == Tok::Ident &&
        (peek().text == "defn" || peek().text == "defnp" || peek().text == "def" || peek().text == "defp" ||
         peek().text == "defmodule"))
      return error(*opener, missing);
    NXC_TRY(e, expression());
    b->children.push_back(std::move(e));
    if (!at(Tok::Newline) && !at(Tok::Eof) && !(peek().kind == Tok::Ident && terminators.count(peek().text)))
      return error(peek().loc,
                   fmt::format(FMT_STRING("unexpected {}; expected an operator or a new line"), describe(peek())));
    skipNewlines();
  }
  if (b->children.empty()) return error(b->loc, "expected an expression");
  return std::move(b);
}

} // namespace nxc::parser
