//===- TensorLiteralTest.cpp - tensor literals on the command line --------===//
//
// Type inference follows Nx.tensor/2 (nx/lib/nx.ex, infer_type/1 with
// Nx.Type.infer/1 and Nx.Type.merge/2); stored bits follow Nx's BinaryBackend
// (f16 rounded directly from the double, bf16 the top half of the f32).
//
//===----------------------------------------------------------------------===//
#include "nxc/Tensor/Half.h"
#include "nxc/Tensor/HostTensor.h"

#include "TestUtil.h"

#include <cmath>

using namespace nxc;
using nxc::test::errorOf;
using nxc::test::source;

namespace {

Result<HostTensor> lit(const std::string &text) { return parseLiteral(source(text, "argument 2")); }

/// The literal's type and its values as Nx prints them, e.g. "s32[2] [1, 2]".
std::string show(const std::string &text) {
  auto t = lit(text);
  if (!t) return "error: " + t.error().message;
  std::string s = formatNx(*t, FormatOptions{-1, true});
  // Keep the type line and the data, on one line.
  std::string out;
  size_t first = s.find('\n');
  size_t last = s.rfind('\n');
  std::string body = s.substr(first + 1, last - first - 1);
  bool space = false;
  for (char c : body) {
    if (c == '\n' || c == ' ') {
      space = true;
      continue;
    }
    if (space && !out.empty() && out.back() != '[' && c != ']') out += ' ';
    space = false;
    out += c;
  }
  return out;
}

/// "line:col: message" of a failed literal.
std::string where(const std::string &text) {
  auto t = lit(text);
  if (t) return "<no error>";
  const Diag &d = t.error();
  return std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message;
}

} // namespace

TEST_SUITE("tensor literal") {

TEST_CASE("scalars infer Nx's default types") {
  CHECK(show("3.5") == "f32 3.5");
  CHECK(show("-2") == "s32 -2");
  CHECK(show("0") == "s32 0");
  CHECK(show("+7") == "s32 7");
  CHECK(show("1_000") == "s32 1000");
  CHECK(show("1.0e-3") == "f32 0.001");
  CHECK(show("1e3") == "f32 1e3"); // Nx.Ryu spells f32 1000.0 so
  CHECK(show("2.5E+2") == "f32 250.0");
  CHECK(show("true") == "u8 1");
  CHECK(show("false") == "u8 0");
  CHECK(show("  42  ") == "s32 42");
}

TEST_CASE("non-finite spellings") {
  for (const char *t : {"NaN", ":nan"}) CHECK(show(t) == "f32 NaN");
  for (const char *t : {"Inf", "+Inf", ":infinity"}) CHECK(show(t) == "f32 Inf");
  for (const char *t : {"-Inf", ":neg_infinity"}) CHECK(show(t) == "f32 -Inf");
  CHECK(show("[:neg_infinity, :nan, :infinity]") == "f32[3] [-Inf, NaN, Inf]");
  CHECK(show("f64:[NaN, -Inf]") == "f64[2] [NaN, -Inf]");
  CHECK(show("f16:Inf") == "f16 Inf");
  CHECK(show("bf16:NaN") == "bf16 NaN");
  // Nx's NaN patterns (Nx.Type.nan_binary/1).
  CHECK(lit("f32:NaN")->bitsAt(0) == 0x7FC00000);
  CHECK(lit("f16:NaN")->bitsAt(0) == 0x7E00);
  CHECK(lit("bf16:NaN")->bitsAt(0) == 0x7FC0);
  CHECK(lit("f64:NaN")->bitsAt(0) == 0x7FF8000000000000ull);
}

TEST_CASE("lists: shapes and merged types") {
  CHECK(show("[1, 2, 3]") == "s32[3] [1, 2, 3]");
  CHECK(show("[[1, 2], [3, 4]]") == "s32[2][2] [[1, 2], [3, 4]]");
  CHECK(show("[1.0, 2]") == "f32[2] [1.0, 2.0]");
  CHECK(show("[1, 2, 3.0]") == "f32[3] [1.0, 2.0, 3.0]");
  CHECK(show("[true, false]") == "u8[2] [1, 0]");
  CHECK(show("[true, 2]") == "s32[2] [1, 2]");
  CHECK(show("[true, 2.5]") == "f32[2] [1.0, 2.5]");
  CHECK(show("[1, NaN]") == "f32[2] [1.0, NaN]");
  CHECK(show("[[[1], [2]], [[3], [4]]]") == "s32[2][2][1] [[[1], [2]], [[3], [4]]]");
  CHECK(show("[ 1 ,2,\t3 ]") == "s32[3] [1, 2, 3]");
  CHECK(show("[[1, 2, 3]]") == "s32[1][3] [[1, 2, 3]]");
}

TEST_CASE("complex numbers as Nx prints them") {
  CHECK(show("1.0+2.0i") == "c64 1.0+2.0i");
  CHECK(show("[1+2i, 3.5]") == "c64[2] [1.0+2.0i, 3.5+0.0i]");
  CHECK(show("c64:[0.5-0.25i, -1]") == "c64[2] [0.5-0.25i, -1.0+0.0i]");
  CHECK(show("c128:[1e-3+2.5e10i]") == "c128[1] [0.001+2.5e10i]");
  CHECK(show("c64:[1-Infi, 2+NaNi]") == "c64[2] [1.0-Infi, 2.0+NaNi]");
  CHECK(where("f32:[1+2i]") == "1:6: the complex number 1+2i cannot be stored in f32");
  CHECK(where("[1+2]") == "1:5: expected 'i' after the imaginary part");
}

TEST_CASE("empty lists are f32 unless typed") {
  CHECK(show("[]") == "f32[0] []");
  CHECK(show("[[], []]") == "f32[2][0] [[], []]");
  CHECK(show("s32:[]") == "s32[0] []");
  auto t = lit("[]");
  REQUIRE(t.ok());
  CHECK(t->data.empty());
}

TEST_CASE("a type prefix forces the type") {
  CHECK(show("f32:[1, 2, 3]") == "f32[3] [1.0, 2.0, 3.0]");
  CHECK(show("u8:7") == "u8 7");
  CHECK(show("s64:[-9223372036854775808, 9223372036854775807]") ==
        "s64[2] [-9223372036854775808, 9223372036854775807]");
  CHECK(show("u64:18446744073709551615") == "u64 18446744073709551615");
  CHECK(show("s8:[-128, 127]") == "s8[2] [-128, 127]");
  CHECK(show("u16:65535") == "u16 65535");
  CHECK(show("f64:0.1") == "f64 0.1");
  CHECK(show("f16:[0.1, 0.2, 0.3, 0.4]") == "f16[4] [0.1, 0.2, 0.3, 0.4]");
  CHECK(show("f64: [1, 2]") == "f64[2] [1.0, 2.0]");
  CHECK(show("u8:true") == "u8 1");
  CHECK(show("f32:false") == "f32 0.0");
  CHECK(show("s32:-0") == "s32 0");
  CHECK(show("pred:[1, 0]") == "u8[2] [1, 0]"); // Nx's predicate type, as in templates
}

TEST_CASE("float rounding matches Nx's BinaryBackend") {
  // f16: rounded once, from the double (Erlang's <<x::float-16>>):
  // 1 + 2^-11 + 2^-30 rounds up, where going through f32 would tie to even.
  CHECK(lit("f16:1.00048828218")->bitsAt(0) == 0x3C01);
  CHECK(lit("f16:65504")->bitsAt(0) == 0x7BFF);
  CHECK(lit("f16:6e-8")->bitsAt(0) == 0x0001);
  // bf16 rounds to nearest even (Nx.Floating.dump_bf16/1 would truncate to
  // 0x402D, 2.703125, printed "2.7"), so printed values parse back exactly.
  CHECK(lit("bf16:2.718281828459045")->bitsAt(0) == 0x402E);
  CHECK(show("bf16:2.718281828459045") == "bf16 2.72");
  CHECK(lit("bf16:2.7")->bitsAt(0) == 0x402D);
  CHECK(lit("bf16:-0.00778")->bitsAt(0) == 0xBBFF);
  CHECK(lit("bf16:3.3895314e38")->bitsAt(0) == 0x7F7F); // the largest bf16
  CHECK(lit("f32:0.1")->bitsAt(0) == 0x3DCCCCCD);
  CHECK(lit("f32:16777217")->bitsAt(0) == 0x4B800000);
  CHECK(show("f32:1.0e-128") == "f32 0.0"); // underflow is not an error (Nx.as_type doctest)
  CHECK(show("f64:1.0e-128") == "f64 1.0e-128");
  CHECK(lit("f32:-0.0")->bitsAt(0) == 0x80000000);
}

TEST_CASE("values out of range are errors at their column") {
  CHECK(where("u8:300") == "1:4: 300 is out of range for u8 (0..255)");
  CHECK(where("u8:[1, 256]") == "1:8: 256 is out of range for u8 (0..255)");
  CHECK(where("u8:-1") == "1:4: -1 is out of range for u8 (0..255)");
  CHECK(where("s8:[-129]") == "1:5: -129 is out of range for s8 (-128..127)");
  CHECK(where("s8:128") == "1:4: 128 is out of range for s8 (-128..127)");
  CHECK(where("2147483648") == "1:1: 2147483648 is out of range for s32 (-2147483648..2147483647); "
                               "integers default to s32, prefix the literal with s64: or u64:");
  CHECK(show("-2147483648") == "s32 -2147483648");
  CHECK(where("u64:18446744073709551616") == "1:5: integer 18446744073709551616 is too large (more than 64 bits)");
  CHECK(where("s64:-9223372036854775809") == "1:5: integer -9223372036854775809 is too small for s64");
  CHECK(where("f32:1e39") == "1:5: 1e39 is out of range for f32");
  CHECK(where("f16:70000") == "1:5: 70000 is out of range for f16");
  CHECK(where("bf16:[1, 1e39]") == "1:10: 1e39 is out of range for bf16");
  CHECK(where("bf16:3.4e38") == "1:6: 3.4e38 is out of range for bf16");
  CHECK(where("1e400") == "1:1: 1e400 is too large for a float");
  CHECK(where("s32:1.5") == "1:5: the float 1.5 cannot be stored in s32 (an integer type)");
  CHECK(where("u8:NaN") == "1:4: a non-finite value cannot be stored in u8 (an integer type)");
  CHECK(where("s32:[1, -Inf]") == "1:9: a non-finite value cannot be stored in s32 (an integer type)");
}

TEST_CASE("syntax errors point at the offending character") {
  CHECK(where("") == "1:1: expected a number or a list");
  CHECK(where("   ") == "1:4: expected a number or a list");
  CHECK(where("[1, 2") == "1:1: unclosed '['");
  CHECK(where("[1, 2 3]") == "1:7: expected ',' or ']'");
  CHECK(where("[1,, 2]") == "1:4: expected a number");
  CHECK(where("[1, ]") == "1:5: expected a number");
  CHECK(where("[1, 2]]") == "1:7: unexpected ']' after the literal");
  CHECK(where("1 2") == "1:3: unexpected '2' after the literal");
  CHECK(where("1.") == "1:3: expected digits after '.'");
  CHECK(where("1e") == "1:3: expected digits in the exponent");
  CHECK(where("-") == "1:2: expected digits");
  CHECK(where("12abc") == "1:3: unexpected 'a' in a number");
  CHECK(where("1__0") == "1:2: unexpected '_' in a number");
  CHECK(where("foo") == "1:1: unknown value 'foo'");
  CHECK(where("[1, nan]") == "1:5: unknown value 'nan'");
  CHECK(where("f33:[1]") ==
        "1:1: unknown type 'f33'; expected one of s2 s4 s8 s16 s32 s64 u2 u4 u8 u16 u32 u64 f8 f8_e4m3fn f16 bf16 f32 f64 c64 c128 pred");
  CHECK(where("f32:") == "1:5: expected a number or a list");
  CHECK(where("#") == "1:1: unexpected '#'");
  CHECK(where("[[1, 2], [3]]") == "1:10: ragged list: this element has shape {1}, the first has {2}");
  CHECK(where("[[1, 2], 3]") == "1:10: expected a list like the first element, found a number");
  CHECK(where("[1, [2]]") == "1:5: expected a number like the first element, found a list");
  CHECK(where("[[], [1]]") == "1:6: ragged list: this element has shape {1}, the first has {0}");
  CHECK(where(std::string(100, '[')) == "1:65: lists nested more than 64 deep");
}

TEST_CASE("errors render with the source name and a caret") {
  auto t = lit("u8:[1, 300]");
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().render() == "argument 2:1:8: error: 300 is out of range for u8 (0..255)\nu8:[1, 300]\n       ^\n");
}

TEST_CASE("literals round-trip through formatNx") {
  // What Nx prints (without the frame) parses back to the same tensor.
  for (std::string text : {"f32:[[1.5, -2.0], [NaN, Inf]]", "s64:[[1, 2], [3, 4]]", "u8:[0, 255]", "f16:[6.104e-5, 6.55e4]",
                           "bf16:[3.14, -0.0078]", "f64:[1.0e-128, 0.0001, 9.007199254740992e15]",
                           "f32:[0.1, 3.4028235e38, 1.1754944e-38, 1e-45]"}) {
    CAPTURE(text);
    auto a = lit(text);
    REQUIRE(a.ok());
    std::string printed = formatNx(*a, FormatOptions{-1, true});
    std::string data = printed.substr(printed.find('\n', printed.find('\n') + 1) + 1);
    data = data.substr(0, data.rfind('\n'));
    auto b = lit(a->type.elem.name() + ":" + data);
    REQUIRE(b.ok());
    CHECK(*a == *b);
  }
}

} // TEST_SUITE
