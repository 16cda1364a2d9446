//===- AST.h - the syntax tree of defn source -------------------*- C++ -*-===//
//
// The subset of Elixir that defn modules are written in. The parser produces
// it; Sema evaluates it (traces it, as Nx does) into a typed expression graph.
// Every node carries the location of its first character.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_FRONTEND_AST_H
#define NXC_FRONTEND_AST_H

#include "nxc/Frontend/Diagnostics.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nxc::ast {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  Int,      ///< 1_000, 0xff
  Float,    ///< 1.0e-3
  Atom,     ///< :output, true, false, nil
  Var,      ///< x, _x
  Tuple,    ///< {a, b}
  List,     ///< [1, 2], [axes: [0]] (keyword pairs are `Pair` elements)
  Pair,     ///< key: value inside a list or call arguments
  Call,     ///< Nx.exp(x), softmax(x)
  Binary,   ///< a + b, a |> f() is rewritten into a Call at parse time
  Unary,    ///< -a, not a
  Match,    ///< pattern = expr
  Block,    ///< a sequence of expressions; the last is the value
  Fn,       ///< fn a, b -> body end; captures &f/2 and &(&1 + x) are desugared
            ///< into it. children: params..., body; intValue: the arity
  Apply,    ///< f.(x): children [callee, args...]
  If,       ///< if/unless c do a else b end: children [cond, then, else?]
  Cond,     ///< cond do p -> e ... end: children [p1, e1, p2, e2, ...]
  Case,     ///< case x do pat -> e ... end: children [subject, pat1, e1, ...];
            ///< a guarded pattern is Binary `when` [pattern, guard]
  While,    ///< while init, cond do body end, or with a generator `i <- t`
            ///< (Binary `<-`) and options: children [init, cond, body, opts?]
  String,   ///< "text" without interpolation (print_value labels): name holds the text
  Interpolation, ///< "a #{x} b": children are String parts and the expressions between
  For,      ///< for gen <- e, filter, into: x, reduce: acc do body end: children are
            ///< the qualifiers (Binary `<-` generators, filters, Pair options),
            ///< then the body; with reduce:, the body is a Case of `acc -> e` clauses
            ///< (children[0] unused)
  Map,      ///< %{k: v}, %Mod{k: v} (name: the struct's module), %{m | k: v}
            ///< (intValue 1: children[0] is m); the others are Pair children.
            ///< As a pattern, the pairs' values are patterns.
};

/// The name of an Fn read from several clauses (or a guarded one): its body
/// is a Case over its arguments. Compile-time Elixir runs it; defn, as Nx,
/// takes one clause without a guard.
constexpr const char *kFnClauses = "fn-clauses";

/// Map keys are atom names; a string key ("mean" in %{"mean" => x}) is kept
/// with this mark in front, and sorts after every atom, as Elixir orders terms.
constexpr char kStringKeyMark = '"';
inline bool isStringKey(const std::string &k) { return !k.empty() && k[0] == kStringKeyMark; }
inline std::string keyText(const std::string &k) { return isStringKey(k) ? k.substr(1) : k; }
inline bool mapKeyLess(const std::string &a, const std::string &b) {
  if (isStringKey(a) != isStringKey(b)) return !isStringKey(a);
  return a < b;
}
/// How Elixir writes the key in a map: `k: ` when every key is an atom,
/// else `:k => ` and `"k" => `.
inline std::string mapKeyPrefix(const std::string &k, bool allAtoms) {
  if (allAtoms) return k + ": ";
  return isStringKey(k) ? "\"" + keyText(k) + "\" => " : ":" + k + " => ";
}

struct Expr {
  ExprKind kind;
  Loc loc;
  int64_t intValue = 0;
  double floatValue = 0;
  /// Var/Atom name, Pair key, Call function name, Binary/Unary operator.
  std::string name;
  /// Call: the module alias (`Nx`, `Nx.LinAlg`, or empty for a local call).
  std::string module;
  /// Tuple/List/Block elements, Call arguments, Binary/Match [lhs, rhs],
  /// Unary/Pair [operand].
  std::vector<ExprPtr> children;

  Expr(ExprKind k, Loc l) : kind(k), loc(std::move(l)) {}
};

/// `defn`, `defnp`, `def` or `defp`.
struct Function {
  std::string kind;
  std::string name;
  Loc loc;
  /// Parameter patterns: Var, Tuple of patterns, Match (pattern = var).
/// (Nodes carry the location of their first character, except Binary and
/// Match nodes, which point at their operator, where error carets belong.)
  std::vector<ExprPtr> params;
  /// Default values (`opts \\ []`), parallel to params, null when none.
  std::vector<ExprPtr> defaults;
  /// `when ...` of a def/defp/deftransform clause, or null.
  ExprPtr guard;
  ExprPtr body;
  /// A def/defp/deftransform nxc could not read (body null): why, at
  /// `skippedLoc`, for the message of a call to it.
  std::string skipped;
  Loc skippedLoc;
  /// `def f(x, opts \\ [])` without a body: declares the defaults of the
  /// clauses of f/2 that follow (body null, nothing skipped).
  bool head = false;
};

/// `@name value` at module level.
struct Attribute {
  std::string name;
  Loc loc;
  ExprPtr value;            ///< null when nxc could not read it (`skipped` says why)
  std::string skipped;
  size_t bindingsBefore = 0; ///< the module-level bindings written above it
};

/// `name = value` at module level (an option schema, a constant): visible to
/// the attributes written after it.
struct Binding {
  std::string name;
  Loc loc;
  ExprPtr value;            ///< null when nxc could not read it (`skipped` says why)
  std::string skipped;
};

struct Module {
  std::string name;
  Loc loc;
  std::vector<Function> functions;
  std::vector<Attribute> attributes;
  std::vector<Binding> bindings;
  /// `defstruct [:a, b: 1]`: the fields in order; `@derive {Nx.Container,
  /// containers: [...]}`: the fields Nx flattens, in that order.
  std::vector<std::string> structFields, containerFields;
  /// Modules named by `import`: their public defns are callable unqualified.
  std::vector<std::string> imports;
  /// `alias A.B.C` (C -> A.B.C) and `alias A.B, as: X` (X -> A.B).
  std::vector<std::pair<std::string, std::string>> aliases;
};

/// A parsed source file: one or more modules.
struct File {
  std::shared_ptr<const SourceFile> source;
  std::vector<Module> modules;
  /// modules[0, inputModules) are the input's own; the rest come from the
  /// files a library adds (`--with`). An unqualified --fn looks in the input's.
  size_t inputModules = SIZE_MAX;
};

/// Prints the tree (for `--emit=ast`), one node per line, indented.
std::string print(const File &file);

} // namespace nxc::ast

#endif // NXC_FRONTEND_AST_H
