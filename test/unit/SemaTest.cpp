//===- SemaTest.cpp - tracing defns and parsing signatures ----------------===//
//
// trace() results for small programs: the output types and shapes follow
// Nx's promotion and broadcasting rules, local calls are inlined, and
// parameter names come from the patterns. Signature parsing is tested at the
// end.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <algorithm>

using namespace nxc;
using nxc::test::compile;
using nxc::test::resultType;
using nxc::test::sig;

namespace {

/// Wraps `body` as `defn f(PARAMS), do: BODY` in a module and traces it.
Result<Graph> traceBody(const std::string &params, const std::string &body, const std::string &args) {
  return compile("defmodule M do\n  defn f(" + params + "), do: " + body + "\nend\n", "f(" + args + ")");
}

/// The type of the single result of `body` traced with parameters `params`.
std::string typeOf(const std::string &params, const std::string &body, const std::string &args) {
  auto g = traceBody(params, body, args);
  if (!g) return "error: " + g.error().message;
  if (g->results.size() != 1) return "<" + std::to_string(g->results.size()) + " results>";
  return resultType(*g);
}

int countOps(const Graph &g, const std::string &op) {
  return (int)std::count_if(g.nodes.begin(), g.nodes.end(), [&](const Node &n) { return opName(n.op) == op; });
}

const char *kSeeds = R"(# The softmax definitions of the Nx write-ups.
defmodule MyDefn do
  import Nx.Defn

  defn softmax(x) do
    max_val = Nx.reduce_max(x)
    Nx.exp(x - max_val) / Nx.sum(Nx.exp(x - max_val))
  end
end

defmodule CompilerOrBackend do
  import Nx.Defn

  @defn_compiler EXLA
  defn softmax_compiler(x) do
    max_val = Nx.reduce_max(x)
    Nx.exp(x - max_val) / Nx.sum(Nx.exp(x - max_val))
  end

  def softmax_backend(x) do
    max_val = Nx.reduce_max(x)
    Nx.exp(x - max_val) / Nx.sum(Nx.exp(x - max_val))
  end
end

defmodule MyModule do
  import Nx.Defn

  defn softmax(t) do
    Nx.exp(t) / Nx.sum(Nx.exp(t))
  end
end

defmodule Softmax do
  import Nx.Defn

  defn softmax_defn(n), do: Nx.exp(n) / Nx.sum(Nx.exp(n))

  def softmax_def(n) do
    Nx.divide(Nx.exp(n), Nx.sum(Nx.exp(n)))
  end
end
)";

} // namespace

TEST_SUITE("sema") {

TEST_CASE("the stable softmax on s32[5] gives f32[5]") {
  auto g = compile(kSeeds, "MyDefn.softmax(s32[5])");
  REQUIRE_MESSAGE(g.ok(), test::errorOf(g));
  CHECK(g->function == "softmax");
  REQUIRE(g->params.size() == 1);
  CHECK(g->typeOf(g->params[0]).str() == "s32[5]");
  REQUIRE(g->results.size() == 1);
  CHECK(resultType(*g) == "f32[5]");
  CHECK_FALSE(g->resultTree.isTuple);
  CHECK(g->resultTree.node == g->results[0]);
  CHECK(countOps(*g, "reduce_max") == 1);
  CHECK(countOps(*g, "exp") == 2);
  CHECK(countOps(*g, "sum") == 1);
  CHECK(countOps(*g, "divide") == 1);
}

TEST_CASE("every softmax variant traces to the argument's float type and shape") {
  for (const char *s : {"MyDefn.softmax(f32[100])", "softmax_compiler(f32[100])", "MyModule.softmax(f32[100])",
                        "softmax_defn(f32[100])", "softmax_def(f32[100])"}) {
    CAPTURE(s);
    auto g = compile(kSeeds, s);
    REQUIRE_MESSAGE(g.ok(), test::errorOf(g));
    CHECK(resultType(*g) == "f32[100]");
  }
  auto f64 = compile(kSeeds, "softmax_defn(f64[2][3])");
  REQUIRE(f64.ok());
  CHECK(resultType(*f64) == "f64[2][3]");
}

TEST_CASE("a plain def's operators are Elixir's: arithmetic on tensors raises as in Nx") {
  // The write-up's "backend" softmax writes x - max_val in a def: Kernel.-
  // on tensors, which raises ArithmeticError under Nx (called directly or
  // through Nx.Defn.jit); Nx.divide/exp/sum in the def are fine.
  auto g = compile(kSeeds, "softmax_backend(f32[100])");
  REQUIRE_FALSE(g.ok());
  CHECK(test::errorOf(g).find("(ArithmeticError) bad argument in arithmetic expression: a tensor - a tensor") !=
        std::string::npos);
}

TEST_CASE("reductions: axes and keep_axes") {
  CHECK(typeOf("x", "Nx.sum(x, axes: [1], keep_axes: true)", "f32[2,3]") == "f32[2][1]");
  CHECK(typeOf("x", "Nx.sum(x, axes: [1])", "f32[2,3]") == "f32[2]");
  CHECK(typeOf("x", "Nx.sum(x)", "f32[2,3]") == "f32");
  CHECK(typeOf("x", "Nx.sum(x, keep_axes: true)", "f32[2,3]") == "f32[1][1]");
  CHECK(typeOf("x", "Nx.reduce_max(x, axes: [-1])", "f32[2,3]") == "f32[2]");
  CHECK(typeOf("x", "Nx.reduce_min(x, axes: [0])", "s8[2,3]") == "s8[3]");
  CHECK(typeOf("x", "Nx.sum(x, axes: [0, 1])", "f32[2,3]") == "f32");
  CHECK(typeOf("x", "Nx.sum(x, axes: [])", "f32[2,3]") == "f32[2][3]");
}

TEST_CASE("reductions: Nx's aggregate types") {
  CHECK(typeOf("x", "Nx.sum(x)", "s8[4]") == "s32");
  CHECK(typeOf("x", "Nx.sum(x)", "u8[4]") == "u32");
  CHECK(typeOf("x", "Nx.sum(x)", "u64[4]") == "s64");
  CHECK(typeOf("x", "Nx.sum(x)", "s64[4]") == "s64");
  CHECK(typeOf("x", "Nx.product(x)", "s16[4]") == "s32");
  CHECK(typeOf("x", "Nx.sum(x)", "bf16[4]") == "bf16");
  CHECK(typeOf("x", "Nx.reduce_max(x)", "u8[4]") == "u8");
  CHECK(typeOf("x", "Nx.all(x)", "f32[4]") == "u8");
  CHECK(typeOf("x", "Nx.any(x, axes: [0])", "s32[4,2]") == "u8[2]");
}

TEST_CASE("Nx.mean is floating") {
  CHECK(typeOf("x", "Nx.mean(x)", "s32[4]") == "f32");
  CHECK(typeOf("x", "Nx.mean(x, axes: [0], keep_axes: true)", "u8[2,3]") == "f32[1][3]");
  CHECK(typeOf("x", "Nx.mean(x)", "f64[4]") == "f64");
}

TEST_CASE("dot products") {
  CHECK(typeOf("a, b", "Nx.dot(a, b)", "f32[2,3], f32[3,4]") == "f32[2][4]");
  CHECK(typeOf("a, b", "Nx.dot(a, b)", "f32[3], f32[3]") == "f32");
  CHECK(typeOf("a, b", "Nx.dot(a, b)", "f32[2,3], f32[3]") == "f32[2]");
  CHECK(typeOf("a, b", "Nx.dot(a, b)", "f32[3], f32[3,4]") == "f32[4]");
  CHECK(typeOf("a, b", "Nx.dot(a, b)", "s8[2,3], u8[3,4]") == "s16[2][4]");
  CHECK(typeOf("a, b", "Nx.dot(a, b)", "f32[2,3], f64[3,4]") == "f64[2][4]");
  CHECK(typeOf("a, b", "Nx.dot(a, [0], b, [0])", "f32[3,2], f32[3,4]") == "f32[2][4]");
  CHECK(typeOf("a, b", "Nx.dot(a, [2], [0], b, [1], [0])", "f32[5,2,3], f32[5,3,4]") == "f32[5][2][4]");
  CHECK(typeOf("a, b", "Nx.dot(a, b)", "f32[], f32[3]") == "f32[3]");
}

TEST_CASE("dot records its contraction axes") {
  auto g = traceBody("a, b", "Nx.dot(a, b)", "f32[2,3], f32[3,4]");
  REQUIRE_MESSAGE(g.ok(), test::errorOf(g));
  const Node &dot = g->nodes[g->results.at(0)];
  CHECK(opName(dot.op) == "dot");
  CHECK(dot.attr("lhs_contract") == std::vector<int64_t>{1});
  CHECK(dot.attr("rhs_contract") == std::vector<int64_t>{0});
  CHECK(dot.attr("lhs_batch").empty());
  CHECK(dot.attr("rhs_batch").empty());
}

TEST_CASE("division is floating, integer arithmetic with small numbers keeps the type") {
  CHECK(typeOf("x", "x / 2", "s32[3]") == "f32[3]");
  CHECK(typeOf("x", "x / 2", "u8[3]") == "f32[3]");
  CHECK(typeOf("x", "x / 2", "f16[3]") == "f16[3]");
  CHECK(typeOf("x", "x + 1", "u8[3]") == "u8[3]");
  CHECK(typeOf("x", "x - 1", "u8[3]") == "u8[3]");
  CHECK(typeOf("x", "x * 300", "u8[3]") == "u16[3]");
  CHECK(typeOf("x", "x + -1", "u8[3]") == "s16[3]");
  CHECK(typeOf("x", "x + 1", "s8[3]") == "s8[3]");
  CHECK(typeOf("x", "x + 1.0", "s8[3]") == "f32[3]");
  CHECK(typeOf("x", "x + 1.0", "bf16[3]") == "bf16[3]");
  CHECK(typeOf("x", "2 * x", "f64[3]") == "f64[3]");
  CHECK(typeOf("x", "x ** 2", "s32[3]") == "s32[3]");
  CHECK(typeOf("x", "x ** 2.0", "s32[3]") == "f32[3]");
}

TEST_CASE("tensor-tensor arithmetic merges the types") {
  CHECK(typeOf("x, y", "x + y", "u8[2], s8[2]") == "s16[2]");
  CHECK(typeOf("x, y", "x * y", "s64[2], f32[2]") == "f32[2]");
  CHECK(typeOf("x, y", "x - y", "bf16[2], f32[2]") == "f32[2]");
  CHECK(typeOf("x, y", "x / y", "s32[2], s32[2]") == "f32[2]");
}

TEST_CASE("broadcasting") {
  CHECK(typeOf("x, y", "x + y", "f32[2,3], f32[3]") == "f32[2][3]");
  CHECK(typeOf("x, y", "x + y", "f32[2,1], f32[1,3]") == "f32[2][3]");
  CHECK(typeOf("x, y", "x * y", "f32[4,1,3], f32[2,1]") == "f32[4][2][3]");
  CHECK(typeOf("x, y", "x - y", "f32[], f32[5]") == "f32[5]");
  auto g = traceBody("x, y", "x + y", "f32[2,3], f32[3]");
  REQUIRE(g.ok());
  CHECK(countOps(*g, "broadcast") == 1);
  for (auto &n : g->nodes)
    if (n.op == Op::Broadcast) CHECK(n.axes == std::vector<int64_t>{1});
}

TEST_CASE("comparisons and logical operators give u8") {
  CHECK(typeOf("x, y", "x == y", "f32[3], f32[3]") == "u8[3]");
  CHECK(typeOf("x, y", "x != y", "s32[3], f32[3]") == "u8[3]");
  CHECK(typeOf("x", "x < 0", "f32[3]") == "u8[3]");
  CHECK(typeOf("x", "x >= 0.5", "s32[3]") == "u8[3]");
  CHECK(typeOf("x, y", "x and y", "f32[3], f32[3]") == "u8[3]");
  CHECK(typeOf("x", "not x", "s32[3]") == "u8[3]");
  CHECK(typeOf("x", "Nx.is_nan(x)", "f32[3]") == "u8[3]");
}

TEST_CASE("unary functions") {
  CHECK(typeOf("x", "Nx.exp(x)", "s32[3]") == "f32[3]");
  CHECK(typeOf("x", "Nx.exp(x)", "u8[3]") == "f32[3]");
  CHECK(typeOf("x", "Nx.sqrt(x)", "f64[3]") == "f64[3]");
  CHECK(typeOf("x", "Nx.tanh(x)", "bf16[3]") == "bf16[3]");
  CHECK(typeOf("x", "-x", "s8[3]") == "s8[3]");
  CHECK(typeOf("x", "Nx.abs(x)", "s16[3]") == "s16[3]");
  CHECK(typeOf("x", "Nx.floor(x)", "s32[3]") == "s32[3]");
  CHECK(typeOf("x", "Nx.floor(x)", "f32[3]") == "f32[3]");
  CHECK(typeOf("x", "Nx.bitwise_not(x)", "u16[3]") == "u16[3]");
  CHECK(typeOf("x", "Nx.sigmoid(x)", "f32[3]") == "f32[3]");
}

TEST_CASE("shape functions") {
  CHECK(typeOf("x", "Nx.transpose(x)", "f32[2,3]") == "f32[3][2]");
  CHECK(typeOf("x", "Nx.transpose(x, axes: [1, 2, 0])", "f32[2,3,4]") == "f32[3][4][2]");
  CHECK(typeOf("x", "Nx.reshape(x, {3, 2})", "f32[2,3]") == "f32[3][2]");
  CHECK(typeOf("x", "Nx.reshape(x, {:auto, 2})", "f32[2,3]") == "f32[3][2]");
  CHECK(typeOf("x", "Nx.new_axis(x, 0)", "f32[2,3]") == "f32[1][2][3]");
  CHECK(typeOf("x", "Nx.new_axis(x, -1)", "f32[2,3]") == "f32[2][3][1]");
  CHECK(typeOf("x", "Nx.squeeze(x)", "f32[1,3,1]") == "f32[3]");
  CHECK(typeOf("x", "Nx.squeeze(x, axes: [0])", "f32[1,3,1]") == "f32[3][1]");
  CHECK(typeOf("x", "Nx.broadcast(x, {2, 3})", "f32[3]") == "f32[2][3]");
  CHECK(typeOf("x", "Nx.broadcast(x, {2, 3}, axes: [0])", "f32[2]") == "f32[2][3]");
  CHECK(typeOf("x", "Nx.broadcast(1, {2, 2})", "f32[3]") == "s32[2][2]");
  CHECK(typeOf("x", "Nx.as_type(x, :f16)", "f32[3]") == "f16[3]");
  CHECK(typeOf("x", "Nx.as_type(x, {:s, 64})", "f32[3]") == "s64[3]");
}

TEST_CASE("constants and literals") {
  CHECK(typeOf("x", "Nx.iota({2, 3})", "f32[1]") == "s32[2][3]");
  CHECK(typeOf("x", "Nx.iota({4}, type: :f32)", "f32[1]") == "f32[4]");
  CHECK(typeOf("x", "Nx.tensor([[1, 2], [3, 4]])", "f32[1]") == "s32[2][2]");
  CHECK(typeOf("x", "Nx.tensor([1.0, 2])", "f32[1]") == "f32[2]");
  CHECK(typeOf("x", "Nx.tensor([1, 2], type: :u8)", "f32[1]") == "u8[2]");
  CHECK(typeOf("x", "1", "f32[1]") == "s32");
  CHECK(typeOf("x", "2.5", "f32[1]") == "f32");
  CHECK(typeOf("x", "Nx.Constants.pi()", "f32[1]") == "f32");
  CHECK(typeOf("x", "Nx.Constants.nan()", "f32[1]") == "f32");
  CHECK(typeOf("x", "Nx.Constants.infinity(:f64)", "f32[1]") == "f64");

  auto g = traceBody("x", "Nx.iota({2, 3}, axis: 1)", "f32[1]");
  REQUIRE(g.ok());
  const Node &iota = g->nodes[g->results.at(0)];
  CHECK(opName(iota.op) == "constant");
  CHECK(iota.ivalues == std::vector<int64_t>{0, 1, 2, 0, 1, 2});
}

TEST_CASE("compile-time numbers stay numbers") {
  // 2 * 3 is computed by Elixir; the tensor only sees the number 6.
  CHECK(typeOf("x", "x * (2 * 3)", "u8[2]") == "u8[2]");
  CHECK(typeOf("x", "x + 1 / 2", "u8[2]") == "f32[2]");
  CHECK(typeOf("x", "x * Nx.size(x)", "u8[2]") == "u8[2]");
  CHECK(typeOf("x", "x + Nx.rank(x)", "u8[2, 3]") == "u8[2][3]");
  CHECK(typeOf("x", "Nx.broadcast(0.0, Nx.shape(x))", "s8[2, 3]") == "f32[2][3]");
  CHECK(typeOf("x", "x * elem(Nx.shape(x), 1)", "f32[2, 3]") == "f32[2][3]");
}

TEST_CASE("Kernel max/min and bitwise operators on two numbers compute a number") {
  // Nx.Defn.Kernel: `max(l, r) when is_number(l) and is_number(r)` is Kernel.max,
  // and the same for min, &&&, |||, <<<, >>> and the comparisons; only
  // tensors go through Nx. So `x + max(1, 2)` on u8 is u8 (merge_number),
  // not s32 (merge with an s32 tensor).
  CHECK(typeOf("x", "x + max(1, 2)", "u8[2]") == "u8[2]");
  CHECK(typeOf("x", "x + min(1, 2)", "u8[2]") == "u8[2]");
  CHECK(typeOf("x", "x + (3 &&& 1)", "u8[2]") == "u8[2]");
  CHECK(typeOf("x", "x + (1 <<< 8)", "u8[2]") == "u16[2]");
}

TEST_CASE("Nx.Constants.pi and e are plain floats, or tensors of the type asked for") {
  // Defn rewrites pi()/e() into float literals, which take the precision of
  // the operation they are used in; `type:` makes a tensor of that type.
  CHECK(typeOf("x", "Nx.Constants.pi({:f, 64})", "f32[1]") == "f64");
  CHECK(typeOf("x", "Nx.Constants.e(:f64)", "f32[1]") == "f64");
  CHECK(typeOf("x", "x * Nx.Constants.pi()", "f16[2]") == "f16[2]");
  CHECK(typeOf("x", "x * Nx.Constants.pi()", "s32[2]") == "f32[2]");
  CHECK(typeOf("x", "Nx.Constants.max_finite({:s, 16})", "f32[1]") == "s16");
  CHECK(typeOf("x", "Nx.Constants.epsilon(:bf16)", "f32[1]") == "bf16");
  CHECK(typeOf("x", "Nx.Constants.euler_gamma(:f64, [])", "f32[1]") == "f64");
}

TEST_CASE("Nx.select and Nx.clip") {
  // Nx.select makes tensors of its number branches first (s32/f32), as Nx does.
  CHECK(typeOf("x", "Nx.select(x > 0, x, 0)", "s8[2]") == "s32[2]");
  CHECK(typeOf("x", "Nx.select(x > 0, 1.5, x)", "f16[2]") == "f32[2]");
  CHECK(typeOf("x, y", "Nx.select(x > 0, x, y)", "f16[2], bf16[2]") == "f16[2]");
  CHECK(typeOf("x, y", "Nx.select(x > 0, x, y)", "s8[2], f32[2]") == "f32[2]");
  CHECK(typeOf("x", "Nx.clip(x, 0, 1)", "f32[2,2]") == "f32[2][2]");
  CHECK(typeOf("x", "max(x, 0)", "f32[2]") == "f32[2]");
  CHECK(typeOf("x", "rem(x, 2)", "s32[2]") == "s32[2]");
  CHECK(typeOf("x", "div(x, 2)", "s32[2]") == "s32[2]");
  CHECK(typeOf("x", "x &&& 1", "u8[2]") == "u8[2]");
  CHECK(typeOf("x", "x >>> 1", "s64[2]") == "s64[2]");
}

TEST_CASE("tuple results keep their structure and flatten depth-first") {
  auto g = traceBody("x", "{x / 2, {x + 1, x == x}, Nx.mean(x)}", "s32[4]");
  REQUIRE_MESSAGE(g.ok(), test::errorOf(g));
  REQUIRE(g->results.size() == 4);
  CHECK(resultType(*g, 0) == "f32[4]");
  CHECK(resultType(*g, 1) == "s32[4]");
  CHECK(resultType(*g, 2) == "u8[4]");
  CHECK(resultType(*g, 3) == "f32");
  const ResultTree &t = g->resultTree;
  CHECK(t.isTuple);
  REQUIRE(t.elems.size() == 3);
  CHECK_FALSE(t.elems[0].isTuple);
  CHECK(t.elems[0].node == g->results[0]);
  CHECK(t.elems[1].isTuple);
  REQUIRE(t.elems[1].elems.size() == 2);
  CHECK(t.elems[1].elems[1].node == g->results[2]);
  CHECK(t.elems[2].node == g->results[3]);
}

TEST_CASE("a number result becomes a scalar constant") {
  auto g = traceBody("x", "{x, 1}", "f32[2]");
  REQUIRE(g.ok());
  REQUIRE(g->results.size() == 2);
  CHECK(resultType(*g, 1) == "s32");
  CHECK(opName(g->nodes[g->results[1]].op) == "constant");
  // Returning a parameter as is is allowed.
  CHECK(g->results[0] == g->params[0]);
}

TEST_CASE("local defnp calls are inlined") {
  auto g = compile(R"(defmodule M do
  defn predict({w, b}, x) do
    x |> dense(w, b) |> activation()
  end

  defnp dense(x, w, b), do: Nx.dot(x, w) + b
  defnp activation(x), do: Nx.max(x, 0)
end
)",
                   "predict({f32[3,2], f32[2]}, f32[4,3])");
  REQUIRE_MESSAGE(g.ok(), test::errorOf(g));
  CHECK(resultType(*g) == "f32[4][2]");
  CHECK(g->params.size() == 3);
  CHECK(countOps(*g, "dot") == 1);
  CHECK(countOps(*g, "add") == 1);
  CHECK(countOps(*g, "max") == 1);
}

TEST_CASE("calls to defn in another module of the same file are inlined") {
  auto g = compile("defmodule A do\n  defn f(x), do: B.g(x) * 2\nend\n"
                   "defmodule B do\n  defn g(x), do: Nx.exp(x)\nend\n",
                   "A.f(f32[3])");
  REQUIRE_MESSAGE(g.ok(), test::errorOf(g));
  CHECK(resultType(*g) == "f32[3]");
  CHECK(countOps(*g, "exp") == 1);
}

TEST_CASE("default arguments of local calls and of the entry point") {
  auto g = compile(R"(defmodule M do
  defn f(x, opts \\ []) do
    scale(x) + scale(x, 3)
  end
  defnp scale(x, k \\ 2), do: x * k
end
)",
                   "f(u8[2])");
  REQUIRE_MESSAGE(g.ok(), test::errorOf(g));
  CHECK(resultType(*g) == "u8[2]");
  CHECK(g->params.size() == 1);
}

TEST_CASE("module attributes are compile-time values") {
  auto g = compile("defmodule M do\n  @scale 2\n  @eps 1.0e-6\n  defn f(x), do: x * @scale + @eps\nend\n", "f(s32[3])");
  REQUIRE_MESSAGE(g.ok(), test::errorOf(g));
  CHECK(resultType(*g) == "f32[3]");
  auto u = compile("defmodule M do\n  @scale 2\n  defn f(x), do: x * @scale\nend\n", "f(u8[3])");
  REQUIRE(u.ok());
  CHECK(resultType(*u) == "u8[3]");
}

TEST_CASE("parameter names are taken from the patterns") {
  auto g = compile("defmodule M do\n  defn f(x, w1, {a, b}, _unused, _), do: x\nend\n",
                   "f(f32[2], f32[2], {f32[1], f32[1]}, f32[1], f32[1])");
  REQUIRE_MESSAGE(g.ok(), test::errorOf(g));
  CHECK(g->paramNames == std::vector<std::string>{"x", "w1", "a", "b", "arg4", "arg5"});
  REQUIRE(g->params.size() == 6);
  for (size_t i = 0; i < g->params.size(); ++i) {
    CHECK(opName(g->nodes[g->params[i]].op) == "parameter");
    CHECK(g->nodes[g->params[i]].param == (int)i);
  }
}

TEST_CASE("parameter names of `{a, b} = params` and of a tuple bound to one variable") {
  auto g = compile("defmodule M do\n  defn f({w, b} = params, x), do: x\nend\n", "f({f32[2], f32[2]}, f32[1])");
  REQUIRE_MESSAGE(g.ok(), test::errorOf(g));
  CHECK(g->paramNames == std::vector<std::string>{"w", "b", "x"});

  auto h = compile("defmodule M do\n  defn f(params = {w, b}), do: w + b\nend\n", "f({f32[2], f32[2]})");
  REQUIRE_MESSAGE(h.ok(), test::errorOf(h));
  CHECK(h->paramNames == std::vector<std::string>{"w", "b"});

  auto p = compile("defmodule M do\n  defn f(p) do\n    {a, b} = p\n    a + b\n  end\nend\n", "f({f32[2], f32[2]})");
  REQUIRE_MESSAGE(p.ok(), test::errorOf(p));
  CHECK(p->paramNames == std::vector<std::string>{"p_0", "p_1"});
  CHECK(resultType(*p) == "f32[2]");
}

TEST_CASE("the graph is printed like Nx's Expr listing") {
  auto g = traceBody("x", "Nx.exp(x)", "f32[3]");
  REQUIRE(g.ok());
  std::string text = g->print();
  CHECK(text.find("f\n") == 0);
  CHECK(text.find("parameter a:0") != std::string::npos);
  CHECK(text.find("b = exp a") != std::string::npos);
  CHECK(text.find("f32[3]") != std::string::npos);
  CHECK(text.find("results: b") != std::string::npos);
}

TEST_CASE("graph nodes carry source locations") {
  auto g = compile("defmodule M do\n  defn f(x) do\n    y = x + 1\n    Nx.exp(y)\n  end\nend\n", "f(f32[2])");
  REQUIRE(g.ok());
  const Node &exp = g->nodes[g->results.at(0)];
  CHECK(opName(exp.op) == "exp");
  REQUIRE(exp.loc.valid());
  CHECK(exp.loc.line == 4);
  CHECK(exp.loc.col == 5);
}

TEST_CASE("ragged literal lists are rejected") {
  // The first element is a number and the second a list: the shape must not
  // be inferred from the deepest element.
  auto g = traceBody("x", "Nx.tensor([1, [2, 3]])", "f32[1]");
  CHECK_FALSE(g.ok());
  CHECK(test::errorOf(g).find("rectangular") != std::string::npos);
}

TEST_CASE("a repeated option key is an error") {
  auto g = traceBody("x", "Nx.sum(x, axes: [0], axes: [1])", "f32[2,3]");
  CHECK_FALSE(g.ok());
  CHECK(test::errorOf(g).find("duplicate key :axes") != std::string::npos);
}

TEST_CASE("Nx.iota checks its size without overflowing") {
  // 65536^4 would wrap to 0 in int64 arithmetic.
  auto g = traceBody("x", "Nx.iota({65536, 65536, 65536, 65536})", "f32[1]");
  CHECK_FALSE(g.ok());
}

} // TEST_SUITE

TEST_SUITE("signature") {

TEST_CASE("a function and one tensor template") {
  auto s = sig("softmax(f32[100])");
  REQUIRE_MESSAGE(s.ok(), test::errorOf(s));
  CHECK(s->function == "softmax");
  CHECK(s->module.empty());
  CHECK(s->cname.empty());
  REQUIRE(s->args.size() == 1);
  CHECK_FALSE(s->args[0].isTuple);
  CHECK(s->args[0].tensor.elem.name() == "f32");
  CHECK(s->args[0].tensor.shape == Shape{100});
  CHECK(s->args[0].tensor.names.empty());
  CHECK(s->args[0].str() == "f32[100]");
  CHECK(s->loc.line == 1);
  CHECK(s->loc.col == 1);
}

TEST_CASE("dimensions: comma list, Nx's bracket form, scalars") {
  auto a = sig("f(f32[30,784])");
  auto b = sig("f(f32[30][784])");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->args.at(0).tensor.shape == Shape{30, 784});
  CHECK(b->args.at(0).tensor.shape == Shape{30, 784});
  CHECK(a->args[0].str() == "f32[30][784]");
  CHECK(b->args[0].str() == "f32[30][784]");

  auto s = sig("f(s32[])");
  REQUIRE(s.ok());
  CHECK(s->args.at(0).tensor.shape.empty());
  CHECK(s->args[0].str() == "s32");

  auto z = sig("f(u8[0])");
  REQUIRE(z.ok());
  CHECK(z->args.at(0).tensor.shape == Shape{0});

  auto p = sig("f(pred[4])");
  REQUIRE(p.ok());
  CHECK(p->args.at(0).str() == "u8[4]");
}

TEST_CASE("several arguments and tuple templates") {
  auto s = sig("f({f32[2], f32[3]}, s32[], {u8[1], {f64[2,2], bf16[]}})");
  REQUIRE_MESSAGE(s.ok(), test::errorOf(s));
  REQUIRE(s->args.size() == 3);
  CHECK(s->args[0].isTuple);
  REQUIRE(s->args[0].elems.size() == 2);
  CHECK(s->args[0].elems[1].tensor.shape == Shape{3});
  CHECK(s->args[0].str() == "{f32[2], f32[3]}");
  CHECK(s->args[2].str() == "{u8[1], {f64[2][2], bf16}}");

  std::vector<TensorType> leaves;
  for (auto &a : s->args) a.flatten(leaves);
  REQUIRE(leaves.size() == 6);
  CHECK(leaves[0].str() == "f32[2]");
  CHECK(leaves[2].str() == "s32");
  CHECK(leaves[4].str() == "f64[2][2]");
  CHECK(leaves[5].str() == "bf16");

  auto empty = sig("f({})");
  REQUIRE(empty.ok());
  CHECK(empty->args.at(0).isTuple);
  CHECK(empty->args[0].elems.empty());

  auto none = sig("zero()");
  REQUIRE(none.ok());
  CHECK(none->args.empty());
}

TEST_CASE("an explicit entry name: fast=softmax(...)") {
  auto s = sig("fast=softmax(f32[10])");
  REQUIRE_MESSAGE(s.ok(), test::errorOf(s));
  CHECK(s->cname == "fast");
  CHECK(s->function == "softmax");
  CHECK(s->module.empty());

  auto spaced = sig("fast_v2 = MyDefn.softmax(f32[10])");
  REQUIRE_MESSAGE(spaced.ok(), test::errorOf(spaced));
  CHECK(spaced->cname == "fast_v2");
  CHECK(spaced->module == "MyDefn");
}

TEST_CASE("a module qualifier: MyDefn.softmax(...)") {
  auto s = sig("MyDefn.softmax(f32[10])");
  REQUIRE_MESSAGE(s.ok(), test::errorOf(s));
  CHECK(s->module == "MyDefn");
  CHECK(s->function == "softmax");

  auto nested = sig("My.Nested.Mod.predict(f32[1])");
  REQUIRE(nested.ok());
  CHECK(nested->module == "My.Nested.Mod");
  CHECK(nested->function == "predict");
}

TEST_CASE("named axes") {
  auto s = sig("f(f32[batch: 30, 10])");
  REQUIRE_MESSAGE(s.ok(), test::errorOf(s));
  const TensorType &t = s->args.at(0).tensor;
  CHECK(t.shape == Shape{30, 10});
  CHECK(t.names == std::vector<std::string>{"batch", ""});
  CHECK(t.str() == "f32[batch: 30][10]");

  auto b = sig("f(f32[batch: 30][features: 784])");
  REQUIRE(b.ok());
  CHECK(b->args.at(0).tensor.names == std::vector<std::string>{"batch", "features"});
}

TEST_CASE("whitespace is allowed between the parts") {
  auto s = sig("  softmax ( f32[ 2 , 3 ] ,  { s32[] , f32[1] } )  ");
  REQUIRE_MESSAGE(s.ok(), test::errorOf(s));
  CHECK(s->args.size() == 2);
  CHECK(s->args[0].str() == "f32[2][3]");
  CHECK(s->args[1].str() == "{s32, f32[1]}");
}

TEST_CASE("mangledArgs names the flattened leaves") {
  CHECK(sig("f(f32[100])")->mangledArgs() == "f32_100");
  CHECK(sig("f(s32[2,3], f32[])")->mangledArgs() == "s32_2x3__f32");
  CHECK(sig("f({f32[784,128], f32[128]}, u8[30][784])")->mangledArgs() == "f32_784x128__f32_128__u8_30x784");
  CHECK(sig("f(f32[batch: 30, 10])")->mangledArgs() == "f32_30x10");
  CHECK(sig("f()")->mangledArgs() == "");
}

TEST_CASE("signature errors carry the column in the --fn text") {
  auto s = sig("softmax(f33[10])");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().loc.file->name == "--fn");
  CHECK(s.error().loc.line == 1);
  CHECK(s.error().loc.col == 9);
  CHECK(s.error().message.find("unknown type 'f33'") == 0);
}

TEST_CASE("a trailing comma in the argument list is rejected") {
  // `softmax(f32[10], )` is accepted as one argument; the comma promised another.
  auto s = sig("softmax(f32[10], )");
  CHECK_FALSE(s.ok());
}

} // TEST_SUITE

TEST_SUITE("sema: compile-time evaluation stays bounded") {

TEST_CASE("a module attribute that refers to itself is an error, not a crash") {
  auto g = compile("defmodule M do\n  @x @x\n  defn f(t), do: t + @x\nend\n", "f(f32[2])");
  REQUIRE_FALSE(g.ok());
  CHECK(g.error().message == "module attribute @x refers to itself");
}

TEST_CASE("integer powers of numbers are computed by squaring, with overflow checks") {
  CHECK(typeOf("x", "1 ** 100000000000 + x", "s32[2]") == "s32[2]");
  CHECK(typeOf("x", "x + 2 ** 30", "s32[2]") == "s32[2]");
  // An integer outside s32 would be wrapped by Nx; nxc asks for a type.
  auto big = traceBody("x", "x + 2 ** 40", "s64[2]");
  REQUIRE_FALSE(big.ok());
  CHECK(big.error().message.find("the integer 1099511627776 does not fit s32") == 0);
  CHECK(typeOf("x", "x + Nx.tensor(2 ** 40, type: :s64)", "s32[2]") == "s64[2]");
  auto g = traceBody("x", "x + 3 ** 100", "s32[2]");
  REQUIRE_FALSE(g.ok());
  CHECK(g.error().message == "integer overflow in a compile-time computation");
}

TEST_CASE("negating the smallest 64-bit integer is an overflow error") {
  auto g = traceBody("x", "x + -(-9223372036854775807 - 1)", "s64[2]");
  REQUIRE_FALSE(g.ok());
  CHECK(g.error().message == "integer overflow in a compile-time computation");
}

} // TEST_SUITE
