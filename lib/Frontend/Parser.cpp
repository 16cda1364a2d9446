//===- Parser.cpp - defn source to AST ------------------------------------===//
//
// A recursive-descent parser for the Elixir subset that defn uses, with
// Elixir's operator precedence. `a |> f(b)` is rewritten into `f(a, b)` here,
// as Elixir's own macro expansion does.
//
//===----------------------------------------------------------------------===//
#include "nxc/Frontend/Parser.h"
#include "nxc/Frontend/Lexer.h"

#include <fmt/format.h>

#include <optional>

#include <cerrno>
#include <cmath>
#include <climits>
#include <cstdlib>
#include <functional>
#include <set>

namespace nxc {
namespace {

using namespace ast;

ExprPtr node(ExprKind k, Loc loc) { return std::make_unique<Expr>(k, std::move(loc)); }

/// Binary operators by precedence level (low to high) and associativity.
struct OpLevel {
  std::vector<std::string> ops;
  bool rightAssoc;
};
const std::vector<OpLevel> &levels() {
  static const std::vector<OpLevel> l = {
      {{"||", "|||", "or"}, false},
      {{"&&", "&&&", "and"}, false},
      {{"==", "!=", "===", "!=="}, false},
      {{"<", ">", "<=", ">="}, false},
      {{"|>", "<<<", ">>>"}, false},
      {{"in"}, false},
      {{"..", "<>", "++", "--"}, true},
      {{"+", "-"}, false},
      {{"*", "/"}, false},
      {{"**"}, false},
  };
  return l;
}

const std::set<std::string> &reservedWords() {
  static const std::set<std::string> w = {"do", "end", "fn", "else", "after", "catch", "rescue",
                                          "when", "and", "or", "not", "in"};
  return w;
}

class Parser {
public:
  Parser(std::shared_ptr<const SourceFile> src, std::vector<Token> toks)
      : src_(std::move(src)), toks_(std::move(toks)) {}

  /// See parseFile.
  bool library = false;

  Result<File> file() {
    File f;
    f.source = src_;
    skipNewlines();
    Loc first = peek().loc;
    while (!at(Tok::Eof)) {
      if (isWord("defn") || isWord("defnp"))
        return error(peek().loc,
                     fmt::format(FMT_STRING("expected 'defmodule' at the top level, found {}"), describe(peek())));
      if (!isWord("defmodule")) {
        // Plain Elixir around the modules (Mix.install, script code): skipped.
        NXC_CHECK(skipExpression());
        skipNewlines();
        continue;
      }
      NXC_TRY(m, module());
      f.modules.push_back(std::move(m));
      skipNewlines();
    }
    if (f.modules.empty())
      return error(first, fmt::format(FMT_STRING("expected a 'defmodule', the file {}"),
                                      toks_.size() <= 2 ? "is empty" : "defines no module"));
    return f;
  }

  Result<ExprPtr> expressionFile() {
    skipNewlines();
    Loc loc = peek().loc;
    NXC_TRY(b, block({}));
    if (!at(Tok::Eof)) return error(peek().loc, fmt::format(FMT_STRING("unexpected {}"), describe(peek())));
    (void)loc;
    return std::move(b);
  }

private:
  /// The expression of a `#{...}` in the string token at `at`: characters
  /// [from, from + len) of the token. It is read from a copy of the source
  /// with everything else blanked, so that its locations are the file's own.
  Result<ExprPtr> embeddedExpression(const Loc &at, size_t from, size_t len) {
    const std::string &text = src_->text;
    size_t offset = 0;
    for (int line = 1; line < at.line; ++line) offset = text.find('\n', offset) + 1;
    offset += (size_t)(at.col - 1) + from;
    auto blank = std::make_shared<SourceFile>(*src_);
    for (size_t k = 0; k < blank->text.size(); ++k)
      if ((k < offset || k >= offset + len) && blank->text[k] != '\n') blank->text[k] = ' ';
    // The closing '}' where the inner text ran out.
    Loc close{src_, 1, 1};
    for (size_t k = 0; k < offset + len && k < text.size(); ++k)
      if (text[k] == '\n') { ++close.line; close.col = 1; } else { ++close.col; }
    auto ours = [&](Diag d) {
      d.loc.file = src_;
      size_t eof = d.message.find("found end of file");
      if (eof != std::string::npos) {
        d.message.replace(eof, std::string("found end of file").size(), "found '}'");
        d.loc = close;
      }
      return d;
    };
    auto toks = lex(blank);
    if (!toks.ok()) return ours(toks.error());
    Parser inner(blank, std::move(toks.value()));
    inner.skipNewlines();
    if (inner.at(Tok::Eof)) return ours(error(at, "an empty #{} in a string"));
    auto e = inner.expressionFile();
    if (!e.ok()) return ours(e.error());
    std::function<void(Expr &)> relocate = [&](Expr &x) {
      x.loc.file = src_;
      for (auto &c : x.children) relocate(*c);
    };
    relocate(*e.value());
    ExprPtr parsed = std::move(e.value());
    if (parsed->kind == ExprKind::Block && parsed->children.size() == 1) return std::move(parsed->children[0]);
    return parsed;
  }

  std::shared_ptr<const SourceFile> src_;
  std::vector<Token> toks_;
  const Module *current_ = nullptr; ///< the module being read (its aliases)
  size_t pos_ = 0;

  const Token &peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  bool at(Tok k) const { return peek().kind == k; }
  bool isPunct(const char *p, size_t k = 0) const { return peek(k).kind == Tok::Punct && peek(k).text == p; }
  bool isWord(const char *w, size_t k = 0) const { return peek(k).kind == Tok::Ident && peek(k).text == w; }
  int nesting_ = 0;
  Token take() { Token t = peek(); if (pos_ < toks_.size() - 1) ++pos_; return t; }
  void skipNewlines() { while (at(Tok::Newline)) take(); }

  static std::string describe(const Token &t) {
    switch (t.kind) {
    case Tok::Eof: return "end of file";
    case Tok::Newline: return "end of line";
    case Tok::KwKey: return fmt::format(FMT_STRING("keyword '{}:'"), t.text);
    case Tok::Atom: return fmt::format(FMT_STRING("atom ':{}'"), t.text);
    case Tok::Attr: return fmt::format(FMT_STRING("'@{}'"), t.text);
    default: return fmt::format(FMT_STRING("'{}'"), t.text);
    }
  }

  Status expectPunct(const char *p, const std::string &context) {
    if (!isPunct(p))
      return error(peek().loc, fmt::format(FMT_STRING("expected '{}' {}, found {}"), p, context, describe(peek())));
    take();
    return okStatus();
  }
  Status expectWord(const char *w, const std::string &context) {
    if (!isWord(w))
      return error(peek().loc, fmt::format(FMT_STRING("expected '{}' {}, found {}"), w, context, describe(peek())));
    take();
    return okStatus();
  }

  Result<std::string> aliasPath(const std::string &context) {
    if (!at(Tok::Alias))
      return error(peek().loc,
                   fmt::format(FMT_STRING("expected a module name {}, found {}"), context, describe(peek())));
    std::string name = take().text;
    while (isPunct(".") && peek(1).kind == Tok::Alias) {
      take();
      name += "." + take().text;
    }
    return name;
  }

  /// `name` with the current module's `alias`es applied to its first part.
  std::string resolveAlias(const std::string &name) const {
    if (!current_) return name;
    std::string head = name.substr(0, name.find('.'));
    for (auto &[shortName, full] : current_->aliases)
      if (shortName == head) return full + name.substr(head.size());
    return name;
  }

  //===--------------------------------------------------------------------===//
  // Plain Elixir, skipped
  //===--------------------------------------------------------------------===//

  static bool opens(const Token &t) {
    if (t.kind == Tok::Punct) return t.text == "(" || t.text == "[" || t.text == "{" || t.text == "<<";
    return t.kind == Tok::Ident && (t.text == "do" || t.text == "fn");
  }
  static bool closes(const Token &t) {
    if (t.kind == Tok::Punct) return t.text == ")" || t.text == "]" || t.text == "}" || t.text == ">>";
    return t.kind == Tok::Ident && t.text == "end";
  }

  /// Skips one expression of plain Elixir: up to the end of the line, with
  /// brackets and do/fn ... end blocks balanced.
  Status skipExpression() {
    std::vector<Token> stack;
    auto closerOf = [](const Token &open) -> std::string {
      return open.kind == Tok::Ident ? "end" : open.text == "(" ? ")" : open.text == "[" ? "]"
                                             : open.text == "{" ? "}" : ">>";
    };
    if (closes(peek())) return error(peek().loc, fmt::format(FMT_STRING("unexpected {}"), describe(peek())));
    while (!at(Tok::Eof)) {
      const Token &t = peek();
      if (stack.empty() && (at(Tok::Newline) || closes(t))) break;
      if (opens(t)) {
        stack.push_back(t);
      } else if (closes(t)) {
        if (t.text != closerOf(stack.back()))
          return error(t.loc, fmt::format(FMT_STRING("unexpected '{}': the '{}' at line {} is closed by '{}'"), t.text,
                                          stack.back().text, stack.back().loc.line, closerOf(stack.back())));
        stack.pop_back();
      }
      take();
    }
    if (!stack.empty())
      return error(stack.back().loc,
                   fmt::format(FMT_STRING("missing '{}' for this '{}'"), closerOf(stack.back()), stack.back().text));
    return okStatus();
  }

  //===--------------------------------------------------------------------===//
  // Modules and definitions
  //===--------------------------------------------------------------------===//

  Result<Module> module() {
    Module m;
    m.loc = take().loc; // defmodule
    NXC_TRY(name, aliasPath("after 'defmodule'"));
    m.name = name;
    NXC_CHECK(expectWord("do", "after the module name"));
    skipNewlines();
    current_ = &m;
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

  Status moduleItem(Module &m) {
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
    if ((t.kind == Tok::Ident && !reservedWords().count(t.text)) || t.kind == Tok::Alias) {
      // Other module-level Elixir (`for ... do def ... end`, calls): passed
      // over, as plain defs that nxc cannot read are.
      return skipExpression();
    }
    return error(t.loc, fmt::format(FMT_STRING("expected defn, defnp, def, defp, import, alias or @attribute in module "
                                               "body, found {}"),
                                    describe(t)));
  }

  Result<Function> function() {
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

  /// Patterns: a variable, `_`, a tuple of patterns, or `pattern = var`.
  Result<ExprPtr> pattern() {
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
  /// defn's parameters are variables, tuples and maps of them (literals and
  /// lists match only in the clauses of Elixir functions).
  Status checkDefnPattern(const Expr &p) {
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

  /// `%{k: v, ...}`, `%{:k => v}`, `%Mod{k: v}` and `%{m | k: v}` (not
  /// in patterns), from the `%`. Keys are atoms.
  Result<ExprPtr> mapLiteral(bool pattern) {
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

  Result<ExprPtr> primaryPattern() {
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

  /// Expressions separated by newlines, up to one of `terminators` (or EOF).
  /// A definition keyword at the start of a line means the block's `end` is
  /// missing: reported at `opener` with `missing`.
  Result<ExprPtr> block(const std::set<std::string> &terminators, const Loc *opener = nullptr,
                        const std::string &missing = "") {
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

  //===--------------------------------------------------------------------===//
  // Expressions
  //===--------------------------------------------------------------------===//

  /// Counts nested expressions; past kMaxNesting parsing stops with a
  /// located error (each level costs a few stack frames).
  struct NestingGuard {
    int &depth;
    explicit NestingGuard(int &d) : depth(d) { ++depth; }
    ~NestingGuard() { --depth; }
  };
  static constexpr int kMaxNesting = 10000;
  Status checkNesting() const {
    if (nesting_ > kMaxNesting)
      return error(peek().loc, fmt::format(FMT_STRING("expression nested too deeply (more than {} levels)"), kMaxNesting));
    return okStatus();
  }

  Result<ExprPtr> expression() {
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

  bool atOperator(const OpLevel &lvl) const {
    const Token &t = peek();
    if (t.kind != Tok::Punct && t.kind != Tok::Ident) return false;
    // `a not in list`
    if (t.kind == Tok::Ident && t.text == "not" && peek(1).kind == Tok::Ident && peek(1).text == "in")
      return std::find(lvl.ops.begin(), lvl.ops.end(), "in") != lvl.ops.end();
    for (auto &op : lvl.ops)
      if (t.text == op) return true;
    return false;
  }

  Result<ExprPtr> binary(size_t level) {
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

  Result<ExprPtr> unary() {
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

  /// `&name/arity`, `&Mod.name/arity` and `&(expr with &1..&n)`, as a Fn.
  Result<ExprPtr> capture(ExprPtr e, const Loc &loc) {
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

  Result<ExprPtr> postfix() {
    NXC_TRY(e, primary());
    while (isPunct("[") || (isPunct(".") && (isPunct("(", 1) || peek(1).kind == Tok::Ident))) {
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

  /// Call arguments after '(' : expressions, then optional trailing `key: value`
  /// pairs collected into one keyword list.
  Status callArgs(Expr &call, const Loc &open) {
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

  static bool startsOperand(const Token &t) {
    switch (t.kind) {
    case Tok::Int: case Tok::Float: case Tok::Atom: case Tok::Alias: case Tok::Attr: return true;
    case Tok::Ident: return !reservedWords().count(t.text);
    case Tok::Punct: return t.text == "(" || t.text == "{" || t.text == "[" || t.text == "-" || t.text == "+";
    default: return false;
    }
  }

  /// True when the line starting at the current token is a new `pattern ->`
  /// clause: a `->` before the end of the line, outside brackets and blocks.
  bool lineStartsClause() const {
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

  /// The body of one `->` clause: expressions up to the next clause or `end`.
  Result<ExprPtr> clauseBody(const Loc &opener, const std::string &what) {
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

  /// `do` clauses `lhs -> body` up to `end` (cond, case). With `guards`, a
  /// clause head may be `pattern when guard`.
  Status clauses(Expr &out, const Loc &opener, const std::string &what, bool guards) {
    NXC_CHECK(expectWord("do", fmt::format(FMT_STRING("after '{}'"), what)));
    return clauseList(out, opener, what, guards);
  }

  /// The `lhs -> body` clauses of clauses() after its `do`, up to `end`.
  Status clauseList(Expr &out, const Loc &opener, const std::string &what, bool guards) {
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

  /// A `do ... [else ...] end` block or `, do: a[, else: b]`, appended to `out`.
  Status doElse(Expr &out, const Loc &opener, const std::string &what, bool allowElse) {
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

  Result<ExprPtr> ifExpr() {
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

  Result<ExprPtr> condExpr() {
    auto e = node(ExprKind::Cond, take().loc);
    NXC_CHECK(clauses(*e, e->loc, "cond", false));
    return std::move(e);
  }

  Result<ExprPtr> caseExpr() {
    auto e = node(ExprKind::Case, take().loc);
    NXC_TRY(subject, expression());
    e->children.push_back(std::move(subject));
    NXC_CHECK(clauses(*e, e->loc, "case", true));
    return std::move(e);
  }

  /// `with p <- e, x = f, g do body else clauses end`, as compile-time
  /// Elixir runs it, read as nested cases: each `p <- e` that matches goes
  /// on, the first that does not gives its value to the `else` clauses (or
  /// is the result without them); `=` and plain expressions run in order.
  ///   case (case e do p -> ... {:"with.ok", body} ...; v -> {:"with.else", v} end) do
  ///     {:"with.ok", r} -> r
  ///     {:"with.else", v} -> case v do else-clauses end   (or v)
  ///   end
  Result<ExprPtr> withExpr() {
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

  /// `lhs <- enumerable` (a generator of `for` or `while`) when `<-` follows
  /// `lhs`, as a Binary `<-`; `lhs` itself otherwise.
  Result<ExprPtr> generatorAfter(ExprPtr lhs) {
    if (!isPunct("<-")) return std::move(lhs);
    Loc at = take().loc;
    NXC_TRY(from, expression());
    auto g = node(ExprKind::Binary, at);
    g->name = "<-";
    g->children.push_back(std::move(lhs));
    g->children.push_back(std::move(from));
    return std::move(g);
  }

  /// `for x <- xs, y <- ys, filter, into: c, reduce: acc do ... end`.
  Result<ExprPtr> forExpr() {
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

  Result<ExprPtr> whileExpr() {
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

  /// `fn a, b -> body end`, or with several clauses (and guards), as
  /// compile-time Elixir writes them: `fn x, [] -> ...; x, [y | t] -> ... end`
  /// is read as `fn a0, a1 -> case {a0, a1} do {x, []} -> ...; ... end end`,
  /// the first clause that matches running, as in Elixir.
  Result<ExprPtr> anonymousFn() {
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

  Result<ExprPtr> pair() {
    Token key = take();
    skipNewlines();
    NXC_TRY(v, expression());
    auto p = node(ExprKind::Pair, key.loc);
    p->name = key.text;
    p->children.push_back(std::move(v));
    return std::move(p);
  }

  // primary()'s larger cases live in functions of their own, kept out of
  // line: primary() is on the stack once per nesting level (a deeply nested
  // expression must reach the nesting limit, not the stack's end, also in a
  // sanitizer build whose frames are larger).
  [[gnu::noinline]] Result<ExprPtr> aliasExpression() {
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

  [[gnu::noinline]] Result<ExprPtr> stringLiteral() {
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

  [[gnu::noinline]] Result<ExprPtr> raiseWithoutParens(const Token &id) {
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

  Result<ExprPtr> primary() {
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
};

} // namespace

Result<File> parseFile(std::shared_ptr<const SourceFile> source, bool library) {
  NXC_TRY(toks, lex(source));
  Parser p(source, std::move(toks));
  p.library = library;
  return p.file();
}

Result<ExprPtr> parseExpression(std::shared_ptr<const SourceFile> source) {
  NXC_TRY(toks, lex(source));
  Parser p(source, std::move(toks));
  return p.expressionFile();
}

} // namespace nxc
