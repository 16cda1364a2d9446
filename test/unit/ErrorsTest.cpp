//===- ErrorsTest.cpp - malformed programs and signatures -----------------===//
//
// One row per malformed input: the .nx source, the --fn signature (or none),
// where the error must point and a piece of its message. Each row runs the
// front end as `nxc` does (lex + parse the file, parse the signature, trace)
// and checks the first error.
//
// Locations are 1-based; a row whose location is in the signature (`Sig`)
// has line 1 and the column in the --fn text.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <iterator>
#include <optional>

using namespace nxc;

namespace {

enum Where { File, Sig };

struct ErrorCase {
  const char *what;      ///< what is wrong, for the failure report
  const char *source;    ///< the .nx file
  const char *signature; ///< the --fn value, or nullptr to stop after parsing
  Where where;           ///< which text the location is in
  int line, col;
  const char *message;   ///< a substring of the message
};

/// A well-formed module for the signature rows.
const char *const kModule = "defmodule M do\n"
                            "  defn softmax(x), do: Nx.exp(x) / Nx.sum(Nx.exp(x))\n"
                            "  defnp helper(x), do: x\n"
                            "end\n";

/// Runs the stages in order and returns the first error, if any.
std::optional<Diag> firstError(const ErrorCase &c) {
  auto file = test::parseString(c.source);
  if (!file) return file.error();
  if (!c.signature) return std::nullopt;
  auto s = test::sig(c.signature);
  if (!s) return s.error();
  auto g = trace(*file, *s);
  if (!g) return g.error();
  return std::nullopt;
}

void checkCase(const ErrorCase &c) {
  std::string what = c.what, source = c.source, signature = c.signature ? c.signature : "(none)";
  std::string expected = c.message;
  CAPTURE(what);
  CAPTURE(source);
  CAPTURE(signature);
  auto d = firstError(c);
  if (!d) {
    FAIL_CHECK("expected an error, but the input was accepted");
    return;
  }
  INFO("got: ", d->render());
  if (!d->loc.valid()) {
    FAIL_CHECK("the error has no location");
    return;
  }
  CHECK(d->loc.file->name == (c.where == File ? "test.nx" : "--fn"));
  CHECK(d->loc.line == c.line);
  CHECK(d->loc.col == c.col);
  CHECK_MESSAGE(d->message.find(c.message) != std::string::npos, "expected the message to contain: ", expected);
}

//===----------------------------------------------------------------------===//
// Lexer errors (reported through parseFile)
//===----------------------------------------------------------------------===//

const ErrorCase kLexerErrors[] = {
    {"a character that starts no token",
     "defmodule M do\n"
     "  defn f(x), do: x $ 1\n"
     "end\n",
     nullptr, File, 2, 20, "unexpected character '$'"},
    {"a byte that starts no UTF-8 character",
     "defmodule M do\n"
     "  defn f(x), do: x * \xff\n"
     "end\n",
     nullptr, File, 2, 22, "unexpected character byte 0xff"},
    {"a tab counts as one column",
     "defmodule M do\n"
     "\tdefn f(x), do: x ~ 1\n"
     "end\n",
     nullptr, File, 2, 19, "unexpected character '~'"},
    {"an error after several lines",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    y = x\n"
     "    y ? 1\n"
     "  end\n"
     "end\n",
     nullptr, File, 4, 7, "unexpected character '?'"},
    {"a trailing underscore in a number",
     "defmodule M do\n"
     "  defn f(x), do: x + 1_\n"
     "end\n",
     nullptr, File, 2, 23, "'_' must sit between two digits"},
    {"two underscores in a number",
     "defmodule M do\n"
     "  defn f(x), do: x + 1__000\n"
     "end\n",
     nullptr, File, 2, 23, "'_' must sit between two digits"},
    {"an exponent without a dot",
     "defmodule M do\n"
     "  defn f(x), do: x * 1e5\n"
     "end\n",
     nullptr, File, 2, 23, "Elixir floats need digits on both sides of the dot"},
    {"an exponent without digits",
     "defmodule M do\n"
     "  defn f(x), do: x * 1.0e\n"
     "end\n",
     nullptr, File, 2, 25, "expected digits in the exponent"},
    {"a hex prefix without digits",
     "defmodule M do\n"
     "  defn f(x), do: x + 0x\n"
     "end\n",
     nullptr, File, 2, 22, "expected digits after '0x'"},
    {"letters right after digits",
     "defmodule M do\n"
     "  defn f(x), do: x + 12abc\n"
     "end\n",
     nullptr, File, 2, 24, "malformed number '12a'"},
    {"a string",
     "defmodule M do\n"
     "  defn f(x), do: x + \"a\"\n"
     "end\n",
     "f(f32[2])", File, 2, 22, "Nx.add expects tensors or numbers, got the string \"a\""},
    {"a charlist",
     "defmodule M do\n"
     "  defn f(x), do: x + 'a'\n"
     "end\n",
     nullptr, File, 2, 22, "charlists and sigils are not supported in defn"},
    {"an unterminated interpolation",
     "defmodule M do\n"
     "  defn f(x), do: print_value(x, label: \"x#{1 + }\")\n"
     "end\n",
     nullptr, File, 2, 48, "expected an expression, found '}'"},
};

//===----------------------------------------------------------------------===//
// Parser errors
//===----------------------------------------------------------------------===//

const ErrorCase kParserErrors[] = {
    {"an empty file", "", nullptr, File, 1, 1, "the file is empty"},
    {"a file with only a comment", "# nothing here\n", nullptr, File, 2, 1, "the file is empty"},
    {"a defn outside a module", "defn f(x), do: x\n", nullptr, File, 1, 1,
     "expected 'defmodule' at the top level, found 'defn'"},
    {"a module without a name",
     "defmodule do\n"
     "end\n",
     nullptr, File, 1, 11, "expected a module name after 'defmodule', found 'do'"},
    {"a module without do",
     "defmodule M\n"
     "  defn f(x), do: x\n"
     "end\n",
     nullptr, File, 1, 12, "expected 'do' after the module name, found end of line"},
    {"a module without end",
     "defmodule M do\n"
     "  defn f(x), do: x\n",
     nullptr, File, 1, 1, "missing 'end' for this 'defmodule'"},
    {"a defn without end",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    x\n",
     nullptr, File, 2, 13, "missing 'end' for this 'do' of defn f"},
    {"a defn without do",
     "defmodule M do\n"
     "  defn f(x)\n"
     "    x\n"
     "  end\n"
     "end\n",
     nullptr, File, 2, 12, "expected 'do' or ', do:' after the parameters of f, found end of line"},
    {"an empty do block",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "  end\n"
     "end\n",
     nullptr, File, 3, 3, "expected an expression"},
    {"an unclosed call at the end of the file",
     "defmodule M do\n"
     "  defn f(x), do: Nx.exp(",
     nullptr, File, 2, 24, "missing ')' for this '('"},
    {"an unclosed call before the next line",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    y = Nx.exp(x\n"
     "    y + 1\n"
     "  end\n"
     "end\n",
     nullptr, File, 4, 5, "expected ',' or ')' in the arguments of exp, found 'y'"},
    {"an unclosed parenthesis",
     "defmodule M do\n"
     "  defn f(x), do: (x + 1\n"
     "end\n",
     nullptr, File, 3, 1, "expected ')' to close the '(' at line 2, found 'end'"},
    {"a list closed by a parenthesis",
     "defmodule M do\n"
     "  defn f(x), do: Nx.sum(x, axes: [0)\n"
     "end\n",
     nullptr, File, 2, 36, "expected ',' or ']', found ')'"},
    {"a list never closed after a comma",
     "defmodule M do\n"
     "  @a [1, 2,\n",
     nullptr, File, 2, 6, "missing ']' for this '['"},
    {"an extra closing parenthesis",
     "defmodule M do\n"
     "  defn f(x), do: x + 1)\n"
     "end\n",
     nullptr, File, 2, 23, "unexpected ')' after a module item; expected a new line"},
    {"two expressions on one line",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    x y\n"
     "  end\n"
     "end\n",
     nullptr, File, 3, 7, "unexpected 'y'; expected an operator or a new line"},
    {"a number as a parameter",
     "defmodule M do\n"
     "  defn f(1), do: 1\n"
     "end\n",
     nullptr, File, 2, 10, "only variables, tuples and maps of them are allowed as patterns"},
    {"a list as a parameter",
     "defmodule M do\n"
     "  defn f([a, b]), do: a\n"
     "end\n",
     nullptr, File, 2, 10, "found '['"},
    {"parameters without a comma",
     "defmodule M do\n"
     "  defn f(x y), do: x\n"
     "end\n",
     nullptr, File, 2, 12, "expected ',' or ')' in the parameter list, found 'y'"},
    {"keyword arguments before positional ones",
     "defmodule M do\n"
     "  defn f(x), do: Nx.sum(axes: [0], x)\n"
     "end\n",
     nullptr, File, 2, 36, "keyword arguments must come last in a call"},
    {"|> into a variable",
     "defmodule M do\n"
     "  defn f(x), do: x |> y\n"
     "end\n",
     nullptr, File, 2, 23, "the right side of '|>' must be a function call"},
    {"|> into a number on the next line",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    x\n"
     "    |> 2\n"
     "  end\n"
     "end\n",
     nullptr, File, 4, 8, "the right side of '|>' must be a function call"},
    {"a when guard",
     "defmodule M do\n"
     "  defn f(x) when x > 0, do: x\n"
     "end\n",
     nullptr, File, 2, 13, "guards are not allowed in defn"},
    {"a guard in defn",
     "defmodule M do\n"
     "  defn f(x) when is_list(x), do: x\n"
     "end\n",
     nullptr, File, 2, 13, "guards are not allowed in defn"},
    {"two clauses of one function",
     "defmodule M do\n"
     "  defn f(x), do: x\n"
     "  defn f(y), do: y\n"
     "end\n",
     nullptr, File, 3, 3, "cannot compile defn f/1 with multiple clauses (first defined at line 2)"},
    {"a defn without a name",
     "defmodule M do\n"
     "  defn (x), do: x\n"
     "end\n",
     nullptr, File, 2, 8, "expected a function name after 'defn', found '('"},
    {"an fn with several clauses",
     "defmodule M do\n"
     "  defn f(x), do: fn y -> y\n z -> z end\n"
     "end\n",
     "f(f32[2])", File, 3, 2, "anonymous functions with several clauses are not supported in defn"},
    {"an fn with a guard",
     "defmodule M do\n"
     "  defn f(x), do: fn y when y > 0 -> y end\n"
     "end\n",
     "f(f32[2])", File, 2, 23, "guards are not allowed in defn"},
    {"if without do",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    if x > 0\n"
     "  end\n"
     "end\n",
     nullptr, File, 3, 13, "expected 'do' or ', do:' after the 'if' head"},
    {"while without a condition",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    while x, do: x\n"
     "  end\n"
     "end\n",
     nullptr, File, 3, 14, "expected an expression, found keyword 'do:'"},
    {"a capture without arguments",
     "defmodule M do\n"
     "  defn f(x), do: &(x + 1)\n"
     "end\n",
     nullptr, File, 2, 18, "invalid args for &"},
    {"cond without a clause",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    cond do\n"
     "    end\n"
     "  end\n"
     "end\n",
     nullptr, File, 3, 5, "'cond' needs at least one clause"},
    {"an integer that does not fit in 64 bits",
     "defmodule M do\n"
     "  defn f(x), do: x + 99999999999999999999\n"
     "end\n",
     nullptr, File, 2, 22, "does not fit in 64 bits"},
    {"an operator in a module body",
     "defmodule M do\n"
     "  -> 1\n"
     "end\n",
     nullptr, File, 2, 3, "expected defn, defnp, def, defp, import, alias or @attribute in module body, found '->'"},
};

//===----------------------------------------------------------------------===//
// Sema errors
//===----------------------------------------------------------------------===//

const ErrorCase kSemaErrors[] = {
    {"an undefined variable",
     "defmodule M do\n"
     "  defn f(x), do: x + y\n"
     "end\n",
     "f(f32[2])", File, 2, 22, "undefined variable \"y\""},
    {"_ used as a value",
     "defmodule M do\n"
     "  defn f(x), do: _ + x\n"
     "end\n",
     "f(f32[2])", File, 2, 18, "invalid use of _"},
    {"an undefined local function",
     "defmodule M do\n"
     "  defn f(x), do: helper(x)\n"
     "end\n",
     "f(f32[2])", File, 2, 18, "undefined function helper/1"},
    {"an unknown Nx function",
     "defmodule M do\n"
     "  defn f(x), do: Nx.frobnicate(x)\n"
     "end\n",
     "f(f32[2])", File, 2, 18, "Nx.frobnicate/1 is unknown or not supported yet by nxc"},
    {"an unknown Nx function at the end of a pipeline",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    x\n"
     "    |> Nx.exp()\n"
     "    |> Nx.foo()\n"
     "  end\n"
     "end\n",
     "f(f32[2])", File, 5, 8, "Nx.foo/1 is unknown"},
    {"a wrong number of arguments",
     "defmodule M do\n"
     "  defn f(x), do: Nx.exp(x, x)\n"
     "end\n",
     "f(f32[2])", File, 2, 18, "wrong number of arguments to Nx.exp: expected 1, got 2"},
    {"shapes that do not broadcast",
     "defmodule M do\n"
     "  defn f(x, y), do: x + y\n"
     "end\n",
     "f(f32[2,3], f32[3,2])", File, 2, 23, "cannot broadcast tensors of shapes {2, 3} and {3, 2}"},
    {"dot with mismatched contraction dimensions",
     "defmodule M do\n"
     "  defn f(a, b), do: Nx.dot(a, b)\n"
     "end\n",
     "f(f32[2,3], f32[4,5])", File, 2, 21,
     "dimension 1 of left-side (3) does not equal dimension 0 of right-side (4)"},
    {"an axis out of range",
     "defmodule M do\n"
     "  defn f(x), do: Nx.sum(x, axes: [2])\n"
     "end\n",
     "f(f32[2,3])", File, 2, 35, "given axis (2) invalid for shape with rank 2"},
    {"a negative axis out of range",
     "defmodule M do\n"
     "  defn f(x), do: Nx.reduce_max(x, axes: [-3])\n"
     "end\n",
     "f(f32[2,3])", File, 2, 42, "given axis (-3) invalid for shape with rank 2"},
    {"a repeated axis",
     "defmodule M do\n"
     "  defn f(x), do: Nx.sum(x, axes: [0, 0])\n"
     "end\n",
     "f(f32[2,3])", File, 2, 38, "axes [0, 0] must be unique integers between 0 and 1"},
    {"a named axis",
     "defmodule M do\n"
     "  defn f(x), do: Nx.sum(x, axes: [:rows])\n"
     "end\n",
     "f(f32[2,3])", File, 2, 35, "key :rows not found in tensor with names [nil, nil]"},
    {"keep_axes that is not a boolean",
     "defmodule M do\n"
     "  defn f(x), do: Nx.sum(x, keep_axes: 1)\n"
     "end\n",
     "f(f32[2,3])", File, 2, 39, "option keep_axes: expects true or false, got the number 1"},
    {"a bitwise operator on floats",
     "defmodule M do\n"
     "  defn f(x), do: x &&& 1\n"
     "end\n",
     "f(f32[2])", File, 2, 20, "bitwise operators expect integer tensors"},
    {"Nx.bitwise_not on floats",
     "defmodule M do\n"
     "  defn f(x), do: Nx.bitwise_not(x)\n"
     "end\n",
     "f(f64[2])", File, 2, 18, "got: f64"},
    {"a quotient of floats",
     "defmodule M do\n"
     "  defn f(x), do: div(x, 2)\n"
     "end\n",
     "f(f32[2])", File, 2, 18, "quotient expects integer tensors, got: f32"},
    {"recursion",
     "defmodule M do\n"
     "  defn f(x), do: f(x)\n"
     "end\n",
     "f(f32[2])", File, 2, 18, "recursive call to f/1"},
    {"mutual recursion",
     "defmodule M do\n"
     "  defn f(x), do: g(x)\n"
     "  defnp g(x), do: f(x)\n"
     "end\n",
     "f(f32[2])", File, 3, 19, "recursive call to f/1"},
    {"an entry point that does not exist", kModule, "nosuch(f32[2])", Sig, 1, 1,
     "undefined function nosuch/1 in test.nx (it defines softmax/1, helper/1)"},
    {"an entry point with the wrong arity", kModule, "softmax(f32[2], f32[2])", Sig, 1, 1,
     "undefined function softmax/2"},
    {"an entry point in a module that does not exist", kModule, "Nope.softmax(f32[2])", Sig, 1, 1,
     "module Nope is not defined in test.nx"},
    {"an entry point defined in two modules",
     "defmodule A do\n"
     "  defn f(x), do: x\n"
     "end\n"
     "defmodule B do\n"
     "  defn f(x), do: x\n"
     "end\n",
     "f(f32[2])", Sig, 1, 1, "function f/1 is defined in several modules; qualify it, as in A.f(...)"},
    {"a reshape that changes the size",
     "defmodule M do\n"
     "  defn f(x), do: Nx.reshape(x, {4})\n"
     "end\n",
     "f(f32[2,3])", File, 2, 18, "cannot reshape, current shape {2, 3} is not compatible with new shape {4}"},
    {"a transpose with too few axes",
     "defmodule M do\n"
     "  defn f(x), do: Nx.transpose(x, axes: [0])\n"
     "end\n",
     "f(f32[2,3])", File, 2, 18, "axes must be a permutation of all 2 axes"},
    {"a broadcast to an incompatible shape",
     "defmodule M do\n"
     "  defn f(x), do: Nx.broadcast(x, {4})\n"
     "end\n",
     "f(f32[3])", File, 2, 18, "cannot broadcast tensor of dimensions {3} to {4}"},
    {"squeezing a dimension that is not 1",
     "defmodule M do\n"
     "  defn f(x), do: Nx.squeeze(x, axes: [0])\n"
     "end\n",
     "f(f32[2,3])", File, 2, 18, "cannot squeeze dimensions whose sizes are not 1"},
    {"an invalid type",
     "defmodule M do\n"
     "  defn f(x), do: Nx.as_type(x, :f33)\n"
     "end\n",
     "f(f32[2])", File, 2, 32, "invalid type"},
    {"Nx.to_number inside defn",
     "defmodule M do\n"
     "  defn f(x), do: Nx.to_number(x)\n"
     "end\n",
     "f(f32[])", File, 2, 18, "Nx.to_number/1 is not allowed inside defn"},
    {"IO.inspect inside defn",
     "defmodule M do\n"
     "  defn f(x), do: IO.inspect(x)\n"
     "end\n",
     "f(f32[2])", File, 2, 18, "cannot invoke IO.inspect/1 inside defn"},
    {"a module that is not in the file",
     "defmodule M do\n"
     "  defn f(x), do: Foo.bar(x)\n"
     "end\n",
     "f(f32[2])", File, 2, 18, "undefined function Foo.bar/1 (module Foo is not defined in this file)"},
    {"a private function of another module",
     "defmodule A do\n"
     "  defn f(x), do: B.g(x)\n"
     "end\n"
     "defmodule B do\n"
     "  defnp g(x), do: x\n"
     "end\n",
     "A.f(f32[2])", File, 2, 18, "function B.g/1 is private to B"},
    {"an Nx module nxc does not support",
     "defmodule M do\n"
     "  defn f(x), do: Nx.stft(x)\n"
     "end\n",
     "f(f32[2,2])", File, 2, 18, "Nx.stft/1 is unknown or not supported yet by nxc"},
    {"a tuple pattern with fewer elements than the value",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    {a, b} = {x, x, x}\n"
     "    a + b\n"
     "  end\n"
     "end\n",
     "f(f32[2])", File, 3, 5, "cannot match a tuple of 2 elements against a tuple of 3 elements"},
    {"a tuple parameter against a larger tuple template",
     "defmodule M do\n"
     "  defn f({a, b}), do: a + b\n"
     "end\n",
     "f({f32[2], f32[2], f32[2]})", File, 2, 10, "cannot match a tuple of 2 elements against a tuple of 3 elements"},
    {"a tuple parameter against a tensor",
     "defmodule M do\n"
     "  defn f({a, b}), do: a + b\n"
     "end\n",
     "f(f32[2])", File, 2, 10, "cannot match a tuple pattern against a tensor"},
    {"a variable repeated in the parameters",
     "defmodule M do\n"
     "  defn f(x, x), do: x\n"
     "end\n",
     "f(f32[2], f32[2])", File, 2, 13, "the variable \"x\" is bound multiple times in the same pattern"},
    {"a variable repeated inside a tuple parameter",
     "defmodule M do\n"
     "  defn f({a, a}), do: a\n"
     "end\n",
     "f({f32[2], f32[2]})", File, 2, 14, "the variable \"a\" is bound multiple times"},
    {"an undefined module attribute",
     "defmodule M do\n"
     "  defn f(x), do: x * @scale\n"
     "end\n",
     "f(f32[2])", File, 2, 22, "undefined module attribute @scale in M"},
    {"a compile-time division by zero",
     "defmodule M do\n"
     "  defn f(x), do: x + 1 / 0\n"
     "end\n",
     "f(f32[2])", File, 2, 24, "division by zero"},
    {"elem/2 on a tensor",
     "defmodule M do\n"
     "  defn f(x), do: elem(x, 0)\n"
     "end\n",
     "f(f32[2])", File, 2, 18, "elem/2 expects a tuple"},
    {"an index out of bounds",
     "defmodule M do\n"
     "  defn f(x), do: x[2]\n"
     "end\n",
     "f(f32[2])", File, 2, 20, "index 2 is out of bounds for axis 0 in shape {2}"},
    {"a function as a result",
     "defmodule M do\n"
     "  defn f(x), do: fn y -> y end\n"
     "end\n",
     "f(f32[2])", File, 2, 18, "expected a tensor or a number, got a function"},
    {"a cond whose last clause is not always true",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    cond do\n"
     "      x > 0 -> 1\n"
     "      x < 0 -> 2\n"
     "    end\n"
     "  end\n"
     "end\n",
     "f(f32[])", File, 5, 9, "cond/if expects at least one branch to always evaluate to true"},
    {"a non-scalar condition",
     "defmodule M do\n"
     "  defn f(x), do: if(x > 0, do: 1, else: 2)\n"
     "end\n",
     "f(f32[2])", File, 2, 23, "condition must be a scalar tensor, got: u8[2]"},
    {"a while body that changes the state's type",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    while {i = 0, x}, i < 3 do\n"
     "      {i + 0.5, x}\n"
     "    end\n"
     "  end\n"
     "end\n",
     "f(f32[])", File, 4, 7, "the do-block in while must return tensors with the same shape, type, and names"},
    {"options on a while with a condition",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    while x, x < 3, unroll: true do\n"
     "      x + 1\n"
     "    end\n"
     "  end\n"
     "end\n",
     "f(f32[])", File, 3, 21, "options are not supported on while with conditions, only with generators"},
    {"a while with no state",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    while {}, x < 3 do\n"
     "      {}\n"
     "    end\n"
     "  end\n"
     "end\n",
     "f(f32[])", File, 3, 11, "the state of while must hold at least one tensor"},
    {"a case with no matching clause",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    case Nx.rank(x) do\n"
     "      2 -> x\n"
     "    end\n"
     "  end\n"
     "end\n",
     "f(f32[3])", File, 3, 5, "no case clause matching the number 1"},
    {"a range",
     "defmodule M do\n"
     "  defn f(x), do: 0..2\n"
     "end\n",
     "f(f32[2])", File, 2, 19, "expected a tensor or a number, got a range"},
    {"an atom as the result",
     "defmodule M do\n"
     "  defn f(x), do: :ok\n"
     "end\n",
     "f(f32[2])", File, 2, 18, "expected a tensor or a number, got the atom :ok"},
};

//===----------------------------------------------------------------------===//
// Signature errors
//===----------------------------------------------------------------------===//

const ErrorCase kSignatureErrors[] = {
    {"an unknown type", kModule, "softmax(f33[10])", Sig, 1, 9, "unknown type 'f33'"},
    {"a dimension list closed by ')'", kModule, "softmax(f32[10)", Sig, 1, 15, "expected ',' or ']' in the dimensions"},
    {"a dimension list never closed", kModule, "softmax(f32[10", Sig, 1, 15, "expected ',' or ']' in the dimensions"},
    {"a letter as a dimension", kModule, "softmax(f32[a])", Sig, 1, 13, "expected a dimension size"},
    {"a negative dimension", kModule, "softmax(f32[-1])", Sig, 1, 13, "expected a dimension size (a non-negative integer)"},
    {"a dimension that is too large", kModule, "softmax(f32[1234567890123])", Sig, 1, 13,
     "dimension 1234567890123 is too large"},
    {"empty brackets after dimensions", kModule, "softmax(f32[10][])", Sig, 1, 17, "empty '[]' after dimensions"},
    {"a type without brackets", kModule, "softmax(f32)", Sig, 1, 12, "expected '[' after the type"},
    {"text after the signature", kModule, "softmax(f32[10]) extra", Sig, 1, 18, "unexpected text after the signature"},
    {"a constant template that was not read", kModule, "softmax(@weights.npy)", Sig, 1, 9,
     "the constant @weights.npy has not been read"},
    {"a tuple declared for an .npy constant", kModule, "softmax(@w.npy:{f32[2]})", Sig, 1, 16,
     "w.npy holds one tensor; declare it as one"},
    {"a function without arguments", kModule, "softmax", Sig, 1, 8, "expected '(' and the argument templates after 'softmax'"},
    {"an empty signature", kModule, "", Sig, 1, 1, "expected a function name"},
    {"an entry name without a function", kModule, "fast=(f32[1])", Sig, 1, 6, "expected a function name after '='"},
    {"an entry name that is not a C identifier", kModule, "1x=softmax(f32[1])", Sig, 1, 1, "'1x' is not a valid C identifier"},
    {"a module without a function", kModule, "M.(f32[1])", Sig, 1, 3, "expected a function name after '.'"},
    {"tuple elements without a comma", kModule, "softmax({f32[2] f32[3]})", Sig, 1, 17, "expected ',' or '}' in a tuple template"},
    {"an argument list never closed", kModule, "softmax(f32[10]", Sig, 1, 16, "expected ',' or ')' after an argument template"},
    {"a missing template", kModule, "softmax(, f32[1])", Sig, 1, 9, "expected a template such as f32[100]"},
};

//===----------------------------------------------------------------------===//
// Errors whose location or wording needed care
//===----------------------------------------------------------------------===//

const ErrorCase kLocatedErrors[] = {
    {"an unknown option key points at the key",
     "defmodule M do\n"
     "  defn f(x), do: Nx.sum(x, foo: 1)\n"
     "end\n",
     "f(f32[2])", File, 2, 28, "unknown key :foo in the options of Nx.sum, expected one of [:axes, :keep_axes]"},
    {"the hint for 1e-3 spells the whole float",
     "defmodule M do\n"
     "  defn f(x), do: x * 1e-3\n"
     "end\n",
     nullptr, File, 2, 23, "write 1.0e-3"},
    {"a defn whose end is missing before the next defn",
     "defmodule M do\n"
     "  defn f(x) do\n"
     "    x\n"
     "  defn g(x), do: x\n"
     "end\n",
     nullptr, File, 2, 13, "missing 'end'"},
    {"a list never closed points at its '['",
     "defmodule M do\n"
     "  @a [1, 2\n",
     nullptr, File, 2, 6, "missing ']' for this '['"},
    {"a call never closed points at its '('",
     "defmodule M do\n"
     "  defn f(x), do: Nx.exp(x\n",
     nullptr, File, 2, 24, "missing ')' for this '('"},
    {"the pattern error lists only what nxc accepts",
     "defmodule M do\n"
     "  defn f([x]), do: x\n"
     "end\n",
     nullptr, File, 2, 10, "only variables, tuples and maps of them are allowed as patterns"},
};

} // namespace

TEST_SUITE("errors") {

TEST_CASE("lexer errors") {
  for (auto &c : kLexerErrors) checkCase(c);
}

TEST_CASE("parser errors") {
  for (auto &c : kParserErrors) checkCase(c);
}

TEST_CASE("sema errors") {
  for (auto &c : kSemaErrors) checkCase(c);
}

TEST_CASE("signature errors") {
  for (auto &c : kSignatureErrors) checkCase(c);
}

TEST_CASE("errors located at the construct the user wrote") {
  for (auto &c : kLocatedErrors) checkCase(c);
}

TEST_CASE("the tables hold at least 40 malformed inputs") {
  size_t n = std::size(kLexerErrors) + std::size(kParserErrors) + std::size(kSemaErrors) + std::size(kSignatureErrors);
  CHECK(n >= 40);
}

TEST_CASE("Diag::render: FILE:LINE:COL: error: message, the line, a caret") {
  auto file = test::parseString("defmodule M do\n  defn f(x), do: x $ 1\nend\n");
  REQUIRE_FALSE(file.ok());
  CHECK(file.error().render() == "test.nx:2:20: error: unexpected character '$'\n"
                                 "  defn f(x), do: x $ 1\n"
                                 "                   ^\n");
}

TEST_CASE("Diag::render keeps tabs so the caret lines up") {
  auto file = test::parseString("defmodule M do\n\tdefn f(x), do: x ~ 1\nend\n");
  REQUIRE_FALSE(file.ok());
  CHECK(file.error().render() == "test.nx:2:19: error: unexpected character '~'\n"
                                 "\tdefn f(x), do: x ~ 1\n"
                                 "\t                 ^\n");
}

TEST_CASE("Diag::render never cuts a UTF-8 character and puts the caret under the character") {
  // A comment of 200 two-byte characters, then an error: the window around
  // the column starts on a character boundary.
  std::string comment;
  for (int i = 0; i < 200; ++i) comment += "\xc3\xa9"; // é
  auto file = test::parseString("defmodule M do\n  defn f(x), do: x $ 1 # " + comment + "\nend\n");
  REQUIRE_FALSE(file.ok());
  std::string text = file.error().render();
  std::string shown = text.substr(text.find('\n') + 1);
  shown = shown.substr(0, shown.find('\n'));
  for (size_t i = 0; i + 1 < shown.size(); ++i)
    if ((unsigned char)shown[i] == 0xc3) CHECK((unsigned char)shown[i + 1] == 0xa9);
  CHECK(((unsigned char)shown.back() & 0xC0) != 0xC0); // no lead byte without its continuation
  // Before the caret: one space per character.
  auto caret = test::parseString("defmodule M do\n  defn f(x), do: \"\xc3\xa9\" $ 1\nend\n");
  REQUIRE_FALSE(caret.ok());
  std::string r = caret.error().render();
  std::string last = r.substr(r.rfind('\n', r.size() - 2) + 1);
  CHECK(last == std::string(21, ' ') + "^\n"); // 21 characters, 22 bytes, before the $
}

TEST_CASE("Diag::render for a Sema error uses the file's name and line") {
  auto src = test::source("defmodule M do\n  defn f(x, y) do\n    x + y\n  end\nend\n", "model.nx");
  auto file = parseFile(src);
  REQUIRE(file.ok());
  auto s = test::sig("f(f32[2], f32[3])");
  REQUIRE(s.ok());
  auto g = trace(*file, *s);
  REQUIRE_FALSE(g.ok());
  std::string text = g.error().render();
  CHECK(text.find("model.nx:3:7: error: cannot broadcast tensors of shapes {2} and {3}") == 0);
  CHECK(text.find("\n    x + y\n      ^\n") != std::string::npos);
}

TEST_CASE("Diag::render for a signature error shows the --fn text") {
  auto s = test::sig("softmax(f33[10])");
  REQUIRE_FALSE(s.ok());
  std::string text = s.error().render();
  CHECK(text.find("--fn:1:9: error: unknown type 'f33'") == 0);
  CHECK(text.find("\nsoftmax(f33[10])\n        ^\n") != std::string::npos);
}

TEST_CASE("Diag::render at the end of the file and without a location") {
  auto file = test::parseString("");
  REQUIRE_FALSE(file.ok());
  CHECK(file.error().render() == "test.nx:1:1: error: expected a 'defmodule', the file is empty\n\n^\n");

  Diag d{Loc{}, "no input files"};
  CHECK(d.render() == "nxc: error: no input files\n");
}

TEST_CASE("Diag::render handles CRLF line endings") {
  auto file = test::parseString("defmodule M do\r\n  defn f(x), do: x $ 1\r\nend\r\n");
  REQUIRE_FALSE(file.ok());
  CHECK(file.error().render() == "test.nx:2:20: error: unexpected character '$'\n"
                                 "  defn f(x), do: x $ 1\n"
                                 "                   ^\n");
}

} // TEST_SUITE

TEST_CASE("an internal error is nxc's, by kind, not by its words") {
  Diag internal = internalError(Loc{}, "the wide-block lowering has no kernel f");
  CHECK(internal.kind == DiagKind::Internal);
  CHECK(internal.message == "internal compiler error: the wide-block lowering has no kernel f");
  // A user's message that happens to start with the same words stays theirs.
  Diag user = error(Loc{}, "internal compiler error: in the user's own raise");
  CHECK(user.kind == DiagKind::User);
}
