//===- ParserImpl.h - the parser's class, shared by its files ---*- C++ -*-===//
//
// The recursive-descent parser (Parser.cpp: files, strings and skipped
// Elixir; ParserDefinitions.cpp: modules, definitions and patterns;
// ParserControl.cpp: if/cond/case/with/for/while and fn; ParserExpressions.cpp:
// operators, calls and primary expressions).
//
//===----------------------------------------------------------------------===//
#ifndef NXC_FRONTEND_PARSERIMPL_H
#define NXC_FRONTEND_PARSERIMPL_H

#include "nxc/Frontend/Lexer.h"
#include "nxc/Frontend/Parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace nxc::parser {

using namespace ast;

inline ExprPtr node(ExprKind k, Loc loc) { return std::make_unique<Expr>(k, std::move(loc)); }

/// Binary operators by precedence level (low to high) and associativity.
struct OpLevel {
  std::vector<std::string> ops;
  bool rightAssoc;
};
inline const std::vector<OpLevel> &levels() {
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

inline const std::set<std::string> &reservedWords() {
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

  Result<File> file();

  Result<ExprPtr> expressionFile();

private:
  /// The expression of a `#{...}` in the string token at `at`: characters
  /// [from, from + len) of the token. It is read from a copy of the source
  /// with everything else blanked, so that its locations are the file's own.
  Result<ExprPtr> embeddedExpression(const Loc &at, size_t from, size_t len);

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

  static std::string describe(const Token &t);

  Status expectPunct(const char *p, const std::string &context);
  Status expectWord(const char *w, const std::string &context);

  Result<std::string> aliasPath(const std::string &context);

  /// `name` with the current module's `alias`es applied to its first part.
  std::string resolveAlias(const std::string &name) const;

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
  Status skipExpression();

  //===--------------------------------------------------------------------===//
  // Modules and definitions
  //===--------------------------------------------------------------------===//

  Result<Module> module();

  Status moduleItem(Module &m);

  /// `for x <- @list do <definitions> end` and `for {k, v} <- @keyword do`
  /// in a module body: the definitions once per element, read from the body's
  /// tokens with `unquote(x)` (and `unquote(Macro.escape(x))`) replaced by the
  /// element, a function's name where a definition keyword precedes it.
  /// False (nothing read) when the list is not a literal one nxc can split.
  Result<bool> moduleFor(Module &m);

  /// The tokens [begin, end) of each module attribute's value, by name (the
  /// lists a module-level `for` runs over).
  std::map<std::string, std::pair<size_t, size_t>> attributeTokens_;

  Result<Function> function();

  /// Patterns: a variable, `_`, a tuple of patterns, or `pattern = var`.
  Result<ExprPtr> pattern();
  /// defn's parameters are variables, tuples and maps of them (literals and
  /// lists match only in the clauses of Elixir functions).
  Status checkDefnPattern(const Expr &p);

  /// `%{k: v, ...}`, `%{:k => v}`, `%Mod{k: v}` and `%{m | k: v}` (not
  /// in patterns), from the `%`. Keys are atoms.
  Result<ExprPtr> mapLiteral(bool pattern);

  Result<ExprPtr> primaryPattern();

  /// Expressions separated by newlines, up to one of `terminators` (or EOF).
  /// A definition keyword at the start of a line means the block's `end` is
  /// missing: reported at `opener` with `missing`.
  Result<ExprPtr> block(const std::set<std::string> &terminators, const Loc *opener = nullptr,
                        const std::string &missing = "");

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
  Status checkNesting() const;

  Result<ExprPtr> expression();

  bool atOperator(const OpLevel &lvl) const;

  Result<ExprPtr> binary(size_t level);

  Result<ExprPtr> unary();

  /// `&name/arity`, `&Mod.name/arity` and `&(expr with &1..&n)`, as a Fn.
  Result<ExprPtr> capture(ExprPtr e, const Loc &loc);

  Result<ExprPtr> postfix();
  Result<ExprPtr> dynamicCall(ExprPtr receiver);

  /// Call arguments after '(' : expressions, then optional trailing `key: value`
  /// pairs collected into one keyword list.
  Status callArgs(Expr &call, const Loc &open);

  static bool startsOperand(const Token &t);

  /// True when the line starting at the current token is a new `pattern ->`
  /// clause: a `->` before the end of the line, outside brackets and blocks.
  bool lineStartsClause() const;

  /// The body of one `->` clause: expressions up to the next clause or `end`.
  Result<ExprPtr> clauseBody(const Loc &opener, const std::string &what);

  /// `do` clauses `lhs -> body` up to `end` (cond, case). With `guards`, a
  /// clause head may be `pattern when guard`.
  Status clauses(Expr &out, const Loc &opener, const std::string &what, bool guards) {
    NXC_CHECK(expectWord("do", fmt::format(FMT_STRING("after '{}'"), what)));
    return clauseList(out, opener, what, guards);
  }

  /// The `lhs -> body` clauses of clauses() after its `do`, up to `end`.
  Status clauseList(Expr &out, const Loc &opener, const std::string &what, bool guards);

  /// A `do ... [else ...] end` block or `, do: a[, else: b]`, appended to `out`.
  Status doElse(Expr &out, const Loc &opener, const std::string &what, bool allowElse);

  Result<ExprPtr> ifExpr();

  Result<ExprPtr> condExpr();

  Result<ExprPtr> caseExpr();

  /// `with p <- e, x = f, g do body else clauses end`, as compile-time
  /// Elixir runs it, read as nested cases: each `p <- e` that matches goes
  /// on, the first that does not gives its value to the `else` clauses (or
  /// is the result without them); `=` and plain expressions run in order.
  ///   case (case e do p -> ... {:"with.ok", body} ...; v -> {:"with.else", v} end) do
  ///     {:"with.ok", r} -> r
  ///     {:"with.else", v} -> case v do else-clauses end   (or v)
  ///   end
  Result<ExprPtr> withExpr();

  /// `lhs <- enumerable` (a generator of `for` or `while`) when `<-` follows
  /// `lhs`, as a Binary `<-`; `lhs` itself otherwise.
  Result<ExprPtr> generatorAfter(ExprPtr lhs);

  /// `for x <- xs, y <- ys, filter, into: c, reduce: acc do ... end`.
  Result<ExprPtr> forExpr();

  Result<ExprPtr> whileExpr();

  /// `fn a, b -> body end`, or with several clauses (and guards), as
  /// compile-time Elixir writes them: `fn x, [] -> ...; x, [y | t] -> ... end`
  /// is read as `fn a0, a1 -> case {a0, a1} do {x, []} -> ...; ... end end`,
  /// the first clause that matches running, as in Elixir.
  Result<ExprPtr> anonymousFn();

  Result<ExprPtr> pair();

  // primary()'s larger cases live in functions of their own, kept out of
  // line: primary() is on the stack once per nesting level (a deeply nested
  // expression must reach the nesting limit, not the stack's end, also in a
  // sanitizer build whose frames are larger).
  [[gnu::noinline]] Result<ExprPtr> aliasExpression();

  [[gnu::noinline]] Result<ExprPtr> stringLiteral();

  [[gnu::noinline]] Result<ExprPtr> raiseWithoutParens(const Token &id);

  Result<ExprPtr> primary();
};

} // namespace nxc::parser

#endif // NXC_FRONTEND_PARSERIMPL_H
