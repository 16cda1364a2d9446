//===- ParserTest.cpp - defn source to AST --------------------------------===//
//
// Most checks compare an S-expression rendering of the tree, built here from
// the node kinds, names and children (not from ast::print), so they check the
// shape of the AST: `(+ a (* b c))` is a Binary "+" whose children are the Var
// a and a Binary "*"; `(Nx.sum x [axes: [0]])` a Call with module Nx.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <sstream>

using namespace nxc;
using namespace nxc::ast;
using nxc::test::parseExpr;
using nxc::test::parseString;

namespace {

std::string sexpr(const Expr &e) {
  std::ostringstream os;
  auto kids = [&](const char *sep = " ") {
    for (size_t i = 0; i < e.children.size(); ++i) os << (i ? sep : "") << sexpr(*e.children[i]);
  };
  switch (e.kind) {
  case ExprKind::Int: os << e.intValue; break;
  case ExprKind::Float: os << e.floatValue; break;
  case ExprKind::Atom: os << ":" << e.name; break;
  case ExprKind::Var: os << e.name; break;
  case ExprKind::Tuple: os << "{"; kids(); os << "}"; break;
  case ExprKind::List: os << "["; kids(); os << "]"; break;
  case ExprKind::Pair: os << e.name << ": "; kids(); break;
  case ExprKind::Call:
    os << "(" << (e.module.empty() ? "" : e.module + ".") << e.name;
    if (!e.children.empty()) os << " ";
    kids();
    os << ")";
    break;
  case ExprKind::Binary: os << "(" << e.name << " "; kids(); os << ")"; break;
  case ExprKind::Unary: os << "(" << e.name << "u "; kids(); os << ")"; break;
  case ExprKind::Match: os << "(= "; kids(); os << ")"; break;
  case ExprKind::Block: os << "(block "; kids(); os << ")"; break;
  case ExprKind::Fn: os << "(fn/" << e.intValue << " "; kids(); os << ")"; break;
  case ExprKind::Apply: os << "(. "; kids(); os << ")"; break;
  case ExprKind::If: os << "(" << e.name << " "; kids(); os << ")"; break;
  case ExprKind::Cond: os << "(cond "; kids(); os << ")"; break;
  case ExprKind::Case: os << "(case "; kids(); os << ")"; break;
  case ExprKind::While: os << "(while "; kids(); os << ")"; break;
  case ExprKind::String: os << "\"" << e.name << "\""; break;
  case ExprKind::Interpolation: os << "(<> "; kids(); os << ")"; break;
  case ExprKind::Map: os << "(%" << e.name << (e.intValue ? " |" : "") << " "; kids(); os << ")"; break;
  case ExprKind::For: os << "(for "; kids(); os << ")"; break;
  }
  return os.str();
}

/// Parses a single expression and renders it; a one-expression block is
/// unwrapped. Errors come back as "error: MESSAGE".
std::string expr(const std::string &text) {
  auto r = parseExpr(text);
  if (!r) return "error: " + r.error().message;
  const Expr &e = **r;
  if (e.kind == ExprKind::Block && e.children.size() == 1) return sexpr(*e.children[0]);
  return sexpr(e);
}

/// Wraps `body` into `defmodule M do defn f(...) do BODY end end` and renders the body.
std::string body(const std::string &text) {
  auto r = parseString("defmodule M do\n  defn f(x, y, z) do\n" + text + "\n  end\nend\n");
  if (!r) return "error: " + r.error().message;
  return sexpr(*r->modules.at(0).functions.at(0).body);
}

} // namespace

TEST_SUITE("parser") {

TEST_CASE("a module with defn, defnp and def") {
  auto file = parseString(R"(defmodule MyDefn do
  import Nx.Defn

  defn softmax(x) do
    max_val = Nx.reduce_max(x)
    Nx.exp(x - max_val) / Nx.sum(Nx.exp(x - max_val))
  end

  defnp helper(a, b), do: a + b

  def plain(t) do
    Nx.exp(t)
  end
end
)");
  REQUIRE_MESSAGE(file.ok(), test::errorOf(file));
  REQUIRE(file->modules.size() == 1);
  const Module &m = file->modules[0];
  CHECK(m.name == "MyDefn");
  CHECK(m.loc.line == 1);
  CHECK(m.loc.col == 1);
  CHECK(m.attributes.empty());
  REQUIRE(m.functions.size() == 3);

  const Function &softmax = m.functions[0];
  CHECK(softmax.kind == "defn");
  CHECK(softmax.name == "softmax");
  CHECK(softmax.loc.line == 4);
  CHECK(softmax.loc.col == 3);
  REQUIRE(softmax.params.size() == 1);
  CHECK(softmax.params[0]->kind == ExprKind::Var);
  CHECK(softmax.params[0]->name == "x");
  REQUIRE(softmax.defaults.size() == 1);
  CHECK(softmax.defaults[0] == nullptr);
  REQUIRE(softmax.body);
  CHECK(softmax.body->kind == ExprKind::Block);
  CHECK(sexpr(*softmax.body) ==
        "(block (= max_val (Nx.reduce_max x)) (/ (Nx.exp (- x max_val)) (Nx.sum (Nx.exp (- x max_val)))))");

  const Function &helper = m.functions[1];
  CHECK(helper.kind == "defnp");
  CHECK(helper.name == "helper");
  CHECK(helper.params.size() == 2);
  CHECK(sexpr(*helper.body) == "(+ a b)");

  const Function &plain = m.functions[2];
  CHECK(plain.kind == "def");
  CHECK(plain.name == "plain");
  CHECK(sexpr(*plain.body) == "(block (Nx.exp t))");
}

TEST_CASE("the `, do:` form has a bare expression as its body") {
  auto file = parseString("defmodule M do\n  defn f(x), do: x * 2\nend\n");
  REQUIRE_MESSAGE(file.ok(), test::errorOf(file));
  const Function &f = file->modules.at(0).functions.at(0);
  CHECK(f.body->kind == ExprKind::Binary);
  CHECK(sexpr(*f.body) == "(* x 2)");
}

TEST_CASE("the `, do:` body may start on the next line") {
  auto file = parseString("defmodule M do\n  defn f(x),\n    do: x * 2\nend\n");
  REQUIRE_MESSAGE(file.ok(), test::errorOf(file));
  CHECK(sexpr(*file->modules.at(0).functions.at(0).body) == "(* x 2)");
}

TEST_CASE("a one-line do ... end body") {
  auto file = parseString("defmodule M do\n  def h(x) do x end\nend\n");
  REQUIRE_MESSAGE(file.ok(), test::errorOf(file));
  CHECK(sexpr(*file->modules.at(0).functions.at(0).body) == "(block x)");
}

TEST_CASE("defp and functions without parameters") {
  auto file = parseString("defmodule M do\n  defp helper(x), do: x\n  defn zero, do: 0\nend\n");
  REQUIRE_MESSAGE(file.ok(), test::errorOf(file));
  auto &fs = file->modules.at(0).functions;
  REQUIRE(fs.size() == 2);
  CHECK(fs[0].kind == "defp");
  CHECK(fs[1].name == "zero");
  CHECK(fs[1].params.empty());
  CHECK(sexpr(*fs[1].body) == "0");
}

TEST_CASE("default arguments: opts \\\\ []") {
  auto file = parseString("defmodule M do\n  defn f(x, opts \\\\ [], eps \\\\ 1.0e-5) do\n    x\n  end\nend\n");
  REQUIRE_MESSAGE(file.ok(), test::errorOf(file));
  const Function &f = file->modules.at(0).functions.at(0);
  REQUIRE(f.params.size() == 3);
  REQUIRE(f.defaults.size() == 3);
  CHECK(f.defaults[0] == nullptr);
  REQUIRE(f.defaults[1]);
  CHECK(f.params[1]->name == "opts");
  CHECK(f.defaults[1]->kind == ExprKind::List);
  CHECK(f.defaults[1]->children.empty());
  REQUIRE(f.defaults[2]);
  CHECK(f.defaults[2]->kind == ExprKind::Float);
  CHECK(f.defaults[2]->floatValue == doctest::Approx(1.0e-5));
}

TEST_CASE("tuple patterns in parameters") {
  auto file = parseString("defmodule M do\n  defn f({w, b}, {a, {c, _d}}, x), do: x\nend\n");
  REQUIRE_MESSAGE(file.ok(), test::errorOf(file));
  const Function &f = file->modules.at(0).functions.at(0);
  REQUIRE(f.params.size() == 3);
  CHECK(f.params[0]->kind == ExprKind::Tuple);
  CHECK(sexpr(*f.params[0]) == "{w b}");
  CHECK(sexpr(*f.params[1]) == "{a {c _d}}");
  CHECK(f.params[2]->kind == ExprKind::Var);
}

TEST_CASE("`pattern = var` parameters are Match nodes") {
  auto file = parseString("defmodule M do\n  defn f({w, b} = params, x = y), do: x\nend\n");
  REQUIRE_MESSAGE(file.ok(), test::errorOf(file));
  const Function &f = file->modules.at(0).functions.at(0);
  REQUIRE(f.params.size() == 2);
  CHECK(f.params[0]->kind == ExprKind::Match);
  CHECK(sexpr(*f.params[0]) == "(= {w b} params)");
  CHECK(sexpr(*f.params[1]) == "(= x y)");
}

TEST_CASE("`{a, b} = params` in a body is a Match of a tuple") {
  CHECK(body("{a, b} = params\na + b") == "(block (= {a b} params) (+ a b))");
  CHECK(expr("{a, b} = params") == "(= {a b} params)");
  // `=` is right-associative.
  CHECK(expr("a = b = c") == "(= a (= b c))");
}

TEST_CASE("arithmetic precedence and associativity") {
  CHECK(expr("a + b * c") == "(+ a (* b c))");
  CHECK(expr("a * b + c") == "(+ (* a b) c)");
  CHECK(expr("(a + b) * c") == "(* (+ a b) c)");
  CHECK(expr("a - b - c") == "(- (- a b) c)");
  CHECK(expr("a / b / c") == "(/ (/ a b) c)");
  CHECK(expr("a * b ** c") == "(* a (** b c))");
  // Elixir's ** is left-associative (precedence 230, Left).
  CHECK(expr("a ** b ** c") == "(** (** a b) c)");
}

TEST_CASE("unary operators bind tighter than ** (Elixir's table)") {
  CHECK(expr("-x ** 2") == "(** (-u x) 2)");
  CHECK(expr("-x * y") == "(* (-u x) y)");
  CHECK(expr("a - -b") == "(- a (-u b))");
  CHECK(expr("!a && b") == "(&& (!u a) b)");
  CHECK(expr("not a == b") == "(== (notu a) b)");
}

TEST_CASE("a minus sign folds into a number literal") {
  auto r = parseExpr("-3");
  REQUIRE(r.ok());
  const Expr &e = *(*r)->children.at(0);
  CHECK(e.kind == ExprKind::Int);
  CHECK(e.intValue == -3);
  CHECK(e.loc.col == 1);
  CHECK(expr("-2.5") == "-2.5");
  CHECK(expr("-2 ** 2") == "(** -2 2)");
  CHECK(expr("x - 1") == "(- x 1)");
}

TEST_CASE("the smallest s64 is a literal; a float literal beyond f64 is an error") {
  auto r = parseExpr("-9223372036854775808");
  REQUIRE_MESSAGE(r.ok(), test::errorOf(r));
  const Expr &e = *(*r)->children.at(0);
  CHECK(e.kind == ExprKind::Int);
  CHECK(e.intValue == INT64_MIN);
  CHECK(!parseExpr("9223372036854775808").ok());
  CHECK(!parseExpr("-9223372036854775809").ok());
  auto big = parseExpr("x + 1.0e999");
  REQUIRE(!big.ok());
  CHECK(big.error().message == "float literal 1.0e999 is out of range for a 64-bit float");
  CHECK(big.error().loc.col == 5);
  CHECK(expr("1.0e-999") == "0"); // below the subnormals: zero, as in Elixir
}

TEST_CASE("`fn` may put its clause on the next line") {
  CHECK(expr("fn\n  y -> y + 1\nend") == expr("fn y -> y + 1 end"));
}

TEST_CASE("comparison, boolean and bitwise precedence") {
  CHECK(expr("a + b == c") == "(== (+ a b) c)");
  CHECK(expr("a < b == c < d") == "(== (< a b) (< c d))");
  CHECK(expr("a == b && c != d") == "(&& (== a b) (!= c d))");
  CHECK(expr("a && b || c") == "(|| (&& a b) c)");
  CHECK(expr("a || b && c") == "(|| a (&& b c))");
  CHECK(expr("a and b or c") == "(or (and a b) c)");
  CHECK(expr("a &&& b ||| c") == "(||| (&&& a b) c)");
  CHECK(expr("a <<< 1 + b") == "(<<< a (+ 1 b))");
  CHECK(expr("a <= b >= c") == "(>= (<= a b) c)");
}

TEST_CASE("`a |> f(b)` becomes `f(a, b)`") {
  CHECK(expr("a |> f(b)") == "(f a b)");
  CHECK(expr("a |> Nx.exp()") == "(Nx.exp a)");
  CHECK(expr("x |> Nx.exp() |> Nx.sum()") == "(Nx.sum (Nx.exp x))");
  // |> binds looser than arithmetic, tighter than comparisons.
  CHECK(expr("a + b |> f()") == "(f (+ a b))");
  CHECK(expr("a |> f() == b") == "(== (f a) b)");
  CHECK(expr("-x ** 2 |> Nx.sum()") == "(Nx.sum (** (-u x) 2))");
  // The piped value goes before the keyword list.
  CHECK(expr("x |> Nx.sum(axes: [0])") == "(Nx.sum x [axes: [0]])");

  auto r = parseExpr("a |> f(b)");
  REQUIRE(r.ok());
  const Expr &call = *(*r)->children.at(0);
  CHECK(call.kind == ExprKind::Call);
  CHECK(call.module.empty());
  CHECK(call.name == "f");
  REQUIRE(call.children.size() == 2);
  CHECK(call.children[0]->kind == ExprKind::Var);
  CHECK(call.children[0]->name == "a");
}

TEST_CASE("a pipeline over several lines") {
  CHECK(body("x\n|> Nx.exp()\n|> Nx.sum(axes: [0])") == "(block (Nx.sum (Nx.exp x) [axes: [0]]))");
  CHECK(body("y = x +\n  1\ny") == "(block (= y (+ x 1)) y)");
}

TEST_CASE("calls: remote, nested module, local, zero-arity") {
  CHECK(expr("Nx.exp(x)") == "(Nx.exp x)");
  CHECK(expr("Nx.LinAlg.norm(x)") == "(Nx.LinAlg.norm x)");
  CHECK(expr("Nx.Constants.pi") == "(Nx.Constants.pi)");
  CHECK(expr("Nx.Constants.pi()") == "(Nx.Constants.pi)");
  CHECK(expr("helper(x, 1)") == "(helper x 1)");
  CHECK(expr("f()") == "(f)");

  auto r = parseExpr("Nx.LinAlg.norm(x)");
  REQUIRE(r.ok());
  const Expr &call = *(*r)->children.at(0);
  CHECK(call.kind == ExprKind::Call);
  CHECK(call.module == "Nx.LinAlg");
  CHECK(call.name == "norm");
}

TEST_CASE("keyword arguments are collected into one trailing list of pairs") {
  CHECK(expr("Nx.sum(x, axes: [0], keep_axes: true)") == "(Nx.sum x [axes: [0] keep_axes: :true])");
  CHECK(expr("Nx.iota({2, 3}, axis: 1, type: :f32)") == "(Nx.iota {2 3} [axis: 1 type: :f32])");
  CHECK(expr("Nx.sum(x,\n  axes: [0]\n)") == "(Nx.sum x [axes: [0]])");

  auto r = parseExpr("Nx.sum(x, axes: [0], keep_axes: true)");
  REQUIRE(r.ok());
  const Expr &call = *(*r)->children.at(0);
  REQUIRE(call.children.size() == 2);
  const Expr &kw = *call.children[1];
  CHECK(kw.kind == ExprKind::List);
  REQUIRE(kw.children.size() == 2);
  CHECK(kw.children[0]->kind == ExprKind::Pair);
  CHECK(kw.children[0]->name == "axes");
  REQUIRE(kw.children[0]->children.size() == 1);
  CHECK(kw.children[0]->children[0]->kind == ExprKind::List);
  CHECK(kw.children[1]->name == "keep_axes");
  CHECK(kw.children[1]->children.at(0)->kind == ExprKind::Atom);
  CHECK(kw.children[1]->children.at(0)->name == "true");
}

TEST_CASE("literals: numbers, atoms, booleans, tuples, lists") {
  CHECK(expr("1_000") == "1000");
  CHECK(expr("0xff") == "255");
  CHECK(expr("2.5") == "2.5");
  CHECK(expr(":output") == ":output");
  CHECK(expr("true") == ":true");
  CHECK(expr("false") == ":false");
  CHECK(expr("nil") == ":nil");
  CHECK(expr("{1, 2.5, x}") == "{1 2.5 x}");
  CHECK(expr("{}") == "{}");
  CHECK(expr("[[1, 2], [3, 4]]") == "[[1 2] [3 4]]");
  CHECK(expr("[axes: [0]]") == "[axes: [0]]");
  CHECK(expr("[\n  1,\n  2\n]") == "[1 2]");

  auto r = parseExpr("1.0e-3");
  REQUIRE(r.ok());
  const Expr &f = *(*r)->children.at(0);
  CHECK(f.kind == ExprKind::Float);
  CHECK(f.floatValue == doctest::Approx(0.001));
}

TEST_CASE("access syntax is a call to Access.get") {
  CHECK(expr("x[0]") == "(Access.get x 0)");
}

TEST_CASE("module attributes: `@attr value`") {
  auto file = parseString(R"(defmodule M do
  @eps 1.0e-6
  @scale 2
  @defn_compiler EXLA
  defn f(x), do: x * @scale + @eps
end
)");
  REQUIRE_MESSAGE(file.ok(), test::errorOf(file));
  const Module &m = file->modules.at(0);
  REQUIRE(m.attributes.size() == 3);
  CHECK(m.attributes[0].name == "eps");
  CHECK(m.attributes[0].loc.line == 2);
  CHECK(m.attributes[0].loc.col == 3);
  CHECK(m.attributes[0].value->kind == ExprKind::Float);
  CHECK(m.attributes[1].name == "scale");
  CHECK(sexpr(*m.attributes[1].value) == "2");
  CHECK(m.attributes[2].name == "defn_compiler");
  CHECK(sexpr(*m.attributes[2].value) == ":EXLA");
  // A use of an attribute is a Var named "@name".
  CHECK(sexpr(*m.functions.at(0).body) == "(+ (* x @scale) @eps)");
}

TEST_CASE("import, alias, require and use are accepted and ignored") {
  auto file = parseString("defmodule M do\n  import Nx.Defn\n  alias Nx.LinAlg\n  require Logger\n"
                          "  use Something\n  defn f(x), do: x\nend\n");
  REQUIRE_MESSAGE(file.ok(), test::errorOf(file));
  CHECK(file->modules.at(0).functions.size() == 1);
  CHECK(file->modules.at(0).attributes.empty());
}

TEST_CASE("options of import and alias (`only:`, `as:`) are accepted and ignored") {
  // Parser.cpp says "Options such as `only: [...]` are accepted and ignored",
  // but the option is parsed as an expression, and a keyword key is not one.
  auto a = parseString("defmodule M do\n  import Nx.Defn, only: [defn: 2]\n  defn f(x), do: x\nend\n");
  CHECK_MESSAGE(a.ok(), test::errorOf(a));
  auto b = parseString("defmodule M do\n  alias Nx.LinAlg, as: LA\n  defn f(x), do: x\nend\n");
  CHECK_MESSAGE(b.ok(), test::errorOf(b));
}

TEST_CASE("several modules, dotted module names, comments between") {
  auto file = parseString(R"(# leading comment
defmodule A.B do
  defn f(x), do: x
end

# between modules
defmodule C do
  defn g(x), do: x
  defn h(x), do: x
end
)");
  REQUIRE_MESSAGE(file.ok(), test::errorOf(file));
  REQUIRE(file->modules.size() == 2);
  CHECK(file->modules[0].name == "A.B");
  CHECK(file->modules[0].loc.line == 2);
  CHECK(file->modules[1].name == "C");
  CHECK(file->modules[1].loc.line == 7);
  CHECK(file->modules[1].functions.size() == 2);
  CHECK(file->source->name == "test.nx");
}

TEST_CASE("node locations are those of the tokens that start them") {
  auto file = parseString("defmodule M do\n  defn f(x) do\n    y = Nx.exp(x)\n    {y, 1}\n  end\nend\n");
  REQUIRE_MESSAGE(file.ok(), test::errorOf(file));
  const Function &f = file->modules.at(0).functions.at(0);
  CHECK(f.params[0]->loc.line == 2);
  CHECK(f.params[0]->loc.col == 10);
  const Expr &b = *f.body;
  REQUIRE(b.children.size() == 2);
  const Expr &match = *b.children[0];
  CHECK(match.children[0]->loc.line == 3); // y
  CHECK(match.children[0]->loc.col == 5);
  const Expr &call = *match.children[1]; // Nx.exp(x)
  CHECK(call.loc.line == 3);
  CHECK(call.loc.col == 9);
  CHECK(call.children.at(0)->loc.col == 16);
  const Expr &tuple = *b.children[1];
  CHECK(tuple.kind == ExprKind::Tuple);
  CHECK(tuple.loc.line == 4);
  CHECK(tuple.loc.col == 5);
}

TEST_CASE("binary nodes are located at their operator") {
  // Sema reports operator errors (shape mismatch, ...) at this location.
  auto r = parseExpr("a + b");
  REQUIRE(r.ok());
  const Expr &e = *(*r)->children.at(0);
  CHECK(e.kind == ExprKind::Binary);
  CHECK(e.loc.col == 3);
}

TEST_CASE("parseExpression returns a block of the expressions") {
  auto r = parseExpr("a = 1\nb = a + 2\nb");
  REQUIRE(r.ok());
  CHECK((*r)->kind == ExprKind::Block);
  CHECK(sexpr(**r) == "(block (= a 1) (= b (+ a 2)) b)");
}

TEST_CASE("ast::print lists modules, functions and nodes with locations") {
  auto file = parseString("defmodule M do\n  defn f(x), do: x + 1\nend\n");
  REQUIRE(file.ok());
  std::string text = print(*file);
  CHECK(text.find("Module M @1:1") != std::string::npos);
  CHECK(text.find("Function defn f/1 @2:3") != std::string::npos);
  CHECK(text.find("Binary + @2:20") != std::string::npos);
  CHECK(text.find("Int 1 @2:22") != std::string::npos);
}

TEST_CASE("control flow, functions and captures") {
  CHECK(expr("if x do y else z end") == "(if x (block y) (block z))");
  CHECK(expr("if x, do: y") == "(if x y)");
  CHECK(expr("if(x, do: y, else: z)") == "(if x y z)");
  CHECK(expr("unless x, do: y, else: z") == "(unless x y z)");
  CHECK(expr("cond do\n a > 0 -> 1\n true ->\n b\n c\n end") == "(cond (> a 0) (block 1) :true (block b c))");
  CHECK(expr("case t do\n {a, _} when a > 1 -> a\n _ -> 0\n end") ==
        "(case t (when {a _} (> a 1)) (block a) _ (block 0))");
  CHECK(expr("while {i = 0, x}, i < 3 do {i + 1, x} end") == "(while {(= i 0) x} (< i 3) (block {(+ i 1) x}))");
  CHECK(expr("while acc = 0, i <- 0..3, unroll: 2 do acc + i end") ==
        "(while (= acc 0) (<- i (.. 0 3)) (block (+ acc i)) [unroll: 2])");
  CHECK(expr("fn a, b -> a + b end") == "(fn/2 a b (block (+ a b)))");
  CHECK(expr("&(&1 * x)") == "(fn/1 &1 (* &1 x))");
  CHECK(expr("&Nx.exp/1") == "(fn/1 &1 (Nx.exp &1))");
  CHECK(expr("&softmax/1") == "(fn/1 &1 (softmax &1))");
  CHECK(expr("f.(x, 1)") == "(. f x 1)");
  CHECK(expr("x |> f.(1)") == "(. f x 1)");
  CHECK(expr("t[[.., 0]]") == "(Access.get t [(.. ) 0])");
  CHECK(expr("t[1..-1//2]") == "(Access.get t (..// 1 -1 2))");
  CHECK(expr("&(&2 + 1)").find("error: capture argument &1 must be used") == 0);
}

TEST_CASE("unsupported constructs are rejected, not misparsed") {
  CHECK(expr("if x do y") == "error: missing 'end' for this 'if'");
  CHECK(expr("x |> y") == "error: the right side of '|>' must be a function call, as in x |> Nx.exp()");
  CHECK(expr("Nx") == ":Nx"); // a module name as a value (raise ArgumentError, ...)
}

TEST_CASE("an fn of several clauses reads as a case over its arguments") {
  // Compile-time Elixir runs it (Polaris's deep_merge); defn refuses it when
  // traced, as Nx does.
  CHECK(expr("fn x, [] -> x\n x, [y | t] -> y end") ==
        "(fn/2 fn.arg0 fn.arg1 (case {fn.arg0 fn.arg1} {x []} (block x) {x [y t]} (block y)))");
  CHECK(expr("fn x when x > 0 -> x end") == "(fn/1 fn.arg0 (case fn.arg0 (when x (> x 0)) (block x)))");
  CHECK(expr("fn x -> x\n y, z -> y end").find("error: the clauses of this fn take 1 and 2 arguments") == 0);
}

TEST_CASE("library-code expressions parse into their own nodes") {
  CHECK(expr("\"a#{x}b\"") == "(<> \"a\" x \"b\")");
  CHECK(expr("%{a: 1, b: x}") == "(% a: 1 b: x)");
  CHECK(expr("%Mod{m | a: 1}") == "(%Mod | m a: 1)");
  CHECK(expr("[1, 2 | t]") == "[1 2 t]");
  CHECK(expr("for x <- xs, x > 1, into: %{}, do: {x, 1}") == "(for (<- x xs) (> x 1) into: (% ) {x 1})");
  CHECK(expr("raise ArgumentError, \"no\"") == "(raise :ArgumentError \"no\")");
  CHECK(expr("Elixir.Kernel.==(a, b)") == "(== a b)");
  CHECK(expr("m.key") == "(Map.fetch! m :key)");
}

} // TEST_SUITE
