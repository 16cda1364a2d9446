//===- LexerTest.cpp - tokens of defn source ------------------------------===//
#include "TestUtil.h"

using namespace nxc;
using nxc::test::lexString;

namespace {

const char *kindName(Tok k) {
  switch (k) {
  case Tok::Eof: return "EOF";
  case Tok::Newline: return "NL";
  case Tok::Ident: return "Ident";
  case Tok::Alias: return "Alias";
  case Tok::KwKey: return "KwKey";
  case Tok::Atom: return "Atom";
  case Tok::Int: return "Int";
  case Tok::Float: return "Float";
  case Tok::Punct: return "Punct";
  case Tok::Attr: return "Attr";
  case Tok::String: return "String";
  }
  return "?";
}

/// "Int:1000 Punct:+ Ident:x NL EOF": one entry per token.
std::string summary(const std::vector<Token> &toks) {
  std::string s;
  for (auto &t : toks) {
    if (!s.empty()) s += " ";
    s += kindName(t.kind);
    if (t.kind != Tok::Newline && t.kind != Tok::Eof) s += ":" + t.text;
  }
  return s;
}

/// Lexes `text` and summarizes the tokens, or returns "error: MESSAGE".
std::string lexed(const std::string &text) {
  auto r = lexString(text);
  if (!r) return "error: " + r.error().message;
  return summary(*r);
}

/// "LINE:COL" of every token, space separated.
std::string locations(const std::string &text) {
  auto r = lexString(text);
  if (!r) return "error: " + r.error().message;
  std::string s;
  for (auto &t : *r) {
    if (!s.empty()) s += " ";
    s += std::to_string(t.loc.line) + ":" + std::to_string(t.loc.col);
  }
  return s;
}

} // namespace

TEST_SUITE("lexer") {

TEST_CASE("integers: decimal, underscores, hex, binary and octal") {
  CHECK(lexed("42") == "Int:42 NL EOF");
  CHECK(lexed("1_000") == "Int:1000 NL EOF");
  CHECK(lexed("1_000_000") == "Int:1000000 NL EOF");
  CHECK(lexed("0xff") == "Int:255 NL EOF");
  CHECK(lexed("0xFF") == "Int:255 NL EOF");
  CHECK(lexed("0b101") == "Int:5 NL EOF");
  CHECK(lexed("0o17") == "Int:15 NL EOF");
  CHECK(lexed("0") == "Int:0 NL EOF");
}

TEST_CASE("floats keep their digits and exponent") {
  CHECK(lexed("2.5") == "Float:2.5 NL EOF");
  CHECK(lexed("1.0e-3") == "Float:1.0e-3 NL EOF");
  CHECK(lexed("1.0E+10") == "Float:1.0e+10 NL EOF");
  CHECK(lexed("6.02e23") == "Float:6.02e23 NL EOF");
  CHECK(lexed("1_000.5") == "Float:1000.5 NL EOF");

  auto toks = lexString("1.0e-3");
  REQUIRE(toks.ok());
  CHECK((*toks)[0].kind == Tok::Float);
  CHECK(std::stod((*toks)[0].text) == doctest::Approx(0.001));
}

TEST_CASE("a dot not followed by a digit is not part of the number") {
  // `1..2` is a range, `x.y` a call: the integer stops before the dot.
  CHECK(lexed("1..2") == "Int:1 Punct:.. Int:2 NL EOF");
  CHECK(lexed("1.foo") == "Int:1 Punct:. Ident:foo NL EOF");
}

TEST_CASE("identifiers, aliases, atoms, keyword keys and attributes") {
  CHECK(lexed("x") == "Ident:x NL EOF");
  CHECK(lexed("_x") == "Ident:_x NL EOF");
  CHECK(lexed("max_val2") == "Ident:max_val2 NL EOF");
  CHECK(lexed("all? valid!") == "Ident:all? Ident:valid! NL EOF");
  CHECK(lexed("Nx") == "Alias:Nx NL EOF");
  CHECK(lexed("Nx.LinAlg.qr") == "Alias:Nx Punct:. Alias:LinAlg Punct:. Ident:qr NL EOF");
  CHECK(lexed(":output") == "Atom:output NL EOF");
  CHECK(lexed(":f32") == "Atom:f32 NL EOF");
  CHECK(lexed("axes: [0]") == "KwKey:axes Punct:[ Int:0 Punct:] NL EOF");
  CHECK(lexed("keep_axes: true") == "KwKey:keep_axes Ident:true NL EOF");
  CHECK(lexed("@eps") == "Attr:eps NL EOF");
  CHECK(lexed("do end defn") == "Ident:do Ident:end Ident:defn NL EOF");
}

TEST_CASE("a keyword key needs the colon right after the name, and `::` is not one") {
  CHECK(lexed("do: x") == "KwKey:do Ident:x NL EOF");
  CHECK(lexed("a::b") == "Ident:a Punct::: Ident:b NL EOF");
}

TEST_CASE("operators are matched longest first") {
  CHECK(lexed("a |> b") == "Ident:a Punct:|> Ident:b NL EOF");
  CHECK(lexed("a ** b") == "Ident:a Punct:** Ident:b NL EOF");
  CHECK(lexed("a <= b") == "Ident:a Punct:<= Ident:b NL EOF");
  CHECK(lexed("a >= b") == "Ident:a Punct:>= Ident:b NL EOF");
  CHECK(lexed("a &&& b") == "Ident:a Punct:&&& Ident:b NL EOF");
  CHECK(lexed("a && b") == "Ident:a Punct:&& Ident:b NL EOF");
  CHECK(lexed("a ||| b") == "Ident:a Punct:||| Ident:b NL EOF");
  CHECK(lexed("a <<< b >>> c") == "Ident:a Punct:<<< Ident:b Punct:>>> Ident:c NL EOF");
  CHECK(lexed("a === b") == "Ident:a Punct:=== Ident:b NL EOF");
  CHECK(lexed("a != b") == "Ident:a Punct:!= Ident:b NL EOF");
  CHECK(lexed("a**-b") == "Ident:a Punct:** Punct:- Ident:b NL EOF");
  CHECK(lexed("opts \\\\ []") == "Ident:opts Punct:\\\\ Punct:[ Punct:] NL EOF");
  CHECK(lexed("{a, b} = t") == "Punct:{ Ident:a Punct:, Ident:b Punct:} Punct:= Ident:t NL EOF");
}

TEST_CASE("comments are skipped") {
  CHECK(lexed("# only a comment") == "EOF");
  CHECK(lexed("x # trailing comment") == "Ident:x NL EOF");
  CHECK(lexed("x\n# comment line\ny") == "Ident:x NL Ident:y NL EOF");
  CHECK(lexed("x + # comment after an operator\n  y") == "Ident:x Punct:+ Ident:y NL EOF");
}

TEST_CASE("newlines separate expressions, and runs of them collapse") {
  CHECK(lexed("a\nb") == "Ident:a NL Ident:b NL EOF");
  CHECK(lexed("a\n\n\n  b\n") == "Ident:a NL Ident:b NL EOF");
  CHECK(lexed("\n\na") == "Ident:a NL EOF");
  CHECK(lexed("a; b") == "Ident:a NL Ident:b NL EOF");
  CHECK(lexed("a\r\nb") == "Ident:a NL Ident:b NL EOF");
  CHECK(lexed("") == "EOF");
}

TEST_CASE("a line starting with |> continues the previous expression") {
  CHECK(lexed("x\n|> Nx.exp()") == "Ident:x Punct:|> Alias:Nx Punct:. Ident:exp Punct:( Punct:) NL EOF");
  CHECK(lexed("x\n  |> f()\n  |> g()") ==
        "Ident:x Punct:|> Ident:f Punct:( Punct:) Punct:|> Ident:g Punct:( Punct:) NL EOF");
  // Comments and blank lines between the lines do not break the pipeline.
  CHECK(lexed("x\n\n  # step two\n  |> f()") == "Ident:x Punct:|> Ident:f Punct:( Punct:) NL EOF");
}

TEST_CASE("a line starting with another binary-only operator also continues") {
  CHECK(lexed("a\n* b") == "Ident:a Punct:* Ident:b NL EOF");
  CHECK(lexed("a\n== b") == "Ident:a Punct:== Ident:b NL EOF");
  CHECK(lexed("a\n&&& b") == "Ident:a Punct:&&& Ident:b NL EOF");
}

TEST_CASE("a line starting with + or - is a new expression (they can be unary)") {
  CHECK(lexed("a\n-b") == "Ident:a NL Punct:- Ident:b NL EOF");
  CHECK(lexed("a\n+b") == "Ident:a NL Punct:+ Ident:b NL EOF");
}

TEST_CASE("a newline after a binary operator, comma or open bracket continues") {
  CHECK(lexed("a +\n b") == "Ident:a Punct:+ Ident:b NL EOF");
  CHECK(lexed("a *\n\n b") == "Ident:a Punct:* Ident:b NL EOF");
  CHECK(lexed("a |>\n f()") == "Ident:a Punct:|> Ident:f Punct:( Punct:) NL EOF");
  CHECK(lexed("a =\n b") == "Ident:a Punct:= Ident:b NL EOF");
  CHECK(lexed("f(\n a,\n b\n)") == "Ident:f Punct:( Ident:a Punct:, Ident:b Punct:) NL EOF");
  CHECK(lexed("[\n1]") == "Punct:[ Int:1 Punct:] NL EOF");
  CHECK(lexed("a &&&\n b") == "Ident:a Punct:&&& Ident:b NL EOF");
}

TEST_CASE("token locations are 1-based line and column") {
  CHECK(locations("x") == "1:1 1:2 1:2");
  CHECK(locations("ab + cd") == "1:1 1:4 1:6 1:8 1:8");
  //                0        1
  //                123456789012345
  CHECK(locations("  y = Nx.exp(x)\n") == "1:3 1:5 1:7 1:9 1:10 1:13 1:14 1:15 1:16 2:1");
  CHECK(locations("a\n  bb\n\tc") == "1:1 1:2 2:3 2:5 3:2 3:3 3:3");

  auto toks = lexString("defn f(x) do\n  x\n  |> Nx.sum(axes: [1])\nend");
  REQUIRE(toks.ok());
  auto find = [&](const std::string &text) -> const Token * {
    for (auto &t : *toks)
      if (t.text == text) return &t;
    return nullptr;
  };
  const Token *pipe = find("|>"), *axes = find("axes"), *one = find("1"), *end = find("end");
  REQUIRE(pipe);
  REQUIRE(axes);
  REQUIRE(one);
  REQUIRE(end);
  CHECK(pipe->loc.line == 3);
  CHECK(pipe->loc.col == 3);
  CHECK(axes->kind == Tok::KwKey);
  CHECK(axes->loc.line == 3);
  CHECK(axes->loc.col == 13);
  CHECK(one->loc.col == 20);
  CHECK(end->loc.line == 4);
  CHECK(end->loc.col == 1);
}

TEST_CASE("locations point into the source file they came from") {
  auto src = test::source("x", "model.nx");
  auto toks = lex(src);
  REQUIRE(toks.ok());
  REQUIRE((*toks)[0].loc.valid());
  CHECK((*toks)[0].loc.file->name == "model.nx");
  CHECK((*toks)[0].loc.file.get() == src.get());
}

TEST_CASE("the token stream always ends with one Eof") {
  for (const char *text : {"", "x", "x\n", "x +", "# c"}) {
    CAPTURE(text);
    auto toks = lexString(text);
    REQUIRE(toks.ok());
    REQUIRE(!toks->empty());
    CHECK(toks->back().kind == Tok::Eof);
    int eofs = 0;
    for (auto &t : *toks) eofs += t.kind == Tok::Eof;
    CHECK(eofs == 1);
  }
}

TEST_CASE("lexer errors") {
  CHECK(lexed("1_") == "error: malformed number: '_' must sit between two digits");
  CHECK(lexed("1e5").find("error: malformed float") == 0);
  CHECK(lexed("1.0e") == "error: malformed float: expected digits in the exponent");
  CHECK(lexed("12abc") == "error: malformed number '12a'");
  CHECK(lexed("0x") == "error: malformed number: expected digits after '0x'");
  CHECK(lexed("0b12") == "error: malformed number '0b12'");
  CHECK(lexed("\"hi\"") == "String:\"hi\" NL EOF");
  CHECK(lexed("'hi'") == "String:'hi' NL EOF");
  CHECK(lexed("\"a #{\"}\"} b\" x") == "String:\"a #{\"}\"} b\" Ident:x NL EOF");
  CHECK(lexed("~r/a(b/i x") == "String:~r/a(b/i Ident:x NL EOF");
  CHECK(lexed("\"\"\"\n doc \"\n \"\"\" x") == "String:\"\"\"\n doc \"\n \"\"\" Ident:x NL EOF");
  CHECK(lexed("?a") == "Int:97 NL EOF");
  CHECK(lexed("\"never closed") == "error: missing terminator for this string");
  CHECK(lexed("a $ b") == "error: unexpected character '$'");
  CHECK(lexed("x = \x01") == "error: unexpected character byte 0x01");
  CHECK(lexed("\xc3\xa9") == "Ident:\xc3\xa9 NL EOF"); // a Unicode identifier, as in Elixir
  CHECK(lexed("\xff") == "error: unexpected character byte 0xff");   // not a UTF-8 lead byte
}

TEST_CASE("numbers run into letters are rejected, in every base") {
  CHECK(lexed("0xffg").find("error: malformed number") == 0);
}

TEST_CASE("underscores in numbers must sit between digits, in every part") {
  CHECK(lexed("1.0_").find("error:") == 0);
  CHECK(lexed("1.5__0").find("error:") == 0);
  CHECK(lexed("0x_ff").find("error:") == 0);
}

} // TEST_SUITE
