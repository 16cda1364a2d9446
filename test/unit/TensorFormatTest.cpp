//===- TensorFormatTest.cpp - tensors printed as Nx prints them -----------===//
//
// Expected strings are Nx's own: the doctests of nx/lib/nx.ex and
// nx/lib/nx/constants.ex and the "inspect" tests of nx/test/nx_test.exs
// (elixir-nx/nx at 37901d74, Nx 0.13), nx/test/nx/ryu_test.exs and its f16
// reference table (nx/test/fixtures/f16_table.txt), the tuple layouts of
// nx/test/nx/defn_test.exs and the Nx.Serving moduledoc, and Erlang's
// float_to_binary(X, [short]) cases in erts/emulator/test/num_bif_SUITE.erl.
// Where a value is given as its old exact spelling in Nx commit c5887a64
// ("Add Ryu pretty printing"), the tensor is built from that spelling.
//
//===----------------------------------------------------------------------===//
#include "nxc/Tensor/FloatFormat.h"
#include "nxc/Tensor/Half.h"
#include "nxc/Tensor/HostTensor.h"

#include "TestUtil.h"

#include <cmath>
#include <limits>

using namespace nxc;
using nxc::test::ty;

namespace {

/// A tensor of type `type` and shape `shape` with the given raw bit patterns.
HostTensor fromBits(const char *type, Shape shape, const std::vector<uint64_t> &bits) {
  HostTensor t = HostTensor::zeros(ty(type), std::move(shape));
  REQUIRE((int64_t)bits.size() == t.numElements());
  for (size_t i = 0; i < bits.size(); ++i) t.setBits((int64_t)i, bits[i]);
  return t;
}

/// A tensor from doubles: rounded to the float type, or exact integers.
HostTensor fromValues(const char *type, Shape shape, const std::vector<double> &vals) {
  ElemType e = ty(type);
  std::vector<uint64_t> bits;
  for (double v : vals) {
    if (e.kind == TypeKind::S) bits.push_back((uint64_t)(int64_t)v);
    else if (e.kind == TypeKind::U) bits.push_back((uint64_t)v);
    else if (e.kind == TypeKind::BF) bits.push_back(floatToBf16((float)v));
    else if (e.bits == 16) bits.push_back(doubleToF16(v));
    else if (e.bits == 32) bits.push_back(floatBits((float)v));
    else bits.push_back(doubleBits(v));
  }
  return fromBits(type, std::move(shape), bits);
}

HostTensor iota(const char *type, Shape shape) {
  HostTensor t = HostTensor::zeros(ty(type), std::move(shape));
  std::vector<double> v;
  for (int64_t i = 0; i < t.numElements(); ++i) v.push_back((double)i);
  return fromValues(type, t.type.shape, v);
}

std::string f32(double v) { return nxFloatString(floatBits((float)v), 32, false); }
std::string f16(uint16_t bits) { return nxRyuBitsToDecimal(bits, 10, 5); }
std::string f64(double v) { return erlangShortDouble(v); }

} // namespace

TEST_SUITE("tensor format") {

TEST_CASE("Nx.tensor/2 doctests: scalars, vectors, matrices") {
  CHECK(formatNx(fromValues("s32", {}, {0})) == "#Nx.Tensor<\n  s32\n  0\n>");
  CHECK(formatNx(fromValues("f32", {}, {1.0})) == "#Nx.Tensor<\n  f32\n  1.0\n>");
  CHECK(formatNx(fromValues("s32", {3}, {1, 2, 3})) == "#Nx.Tensor<\n  s32[3]\n  [1, 2, 3]\n>");
  CHECK(formatNx(fromValues("f32", {4}, {1.2, 2.3, 3.4, 4.5})) == "#Nx.Tensor<\n  f32[4]\n  [1.2, 2.3, 3.4, 4.5]\n>");
  // Nx.tensor([300, 301, 302], type: :s8) wraps to these.
  CHECK(formatNx(fromValues("s8", {3}, {44, 45, 46})) == "#Nx.Tensor<\n  s8[3]\n  [44, 45, 46]\n>");
  CHECK(formatNx(fromValues("f32", {3}, {1, 2, 3})) == "#Nx.Tensor<\n  f32[3]\n  [1.0, 2.0, 3.0]\n>");
  CHECK(formatNx(fromValues("u8", {}, {1})) == "#Nx.Tensor<\n  u8\n  1\n>");
  CHECK(formatNx(fromValues("u8", {2}, {1, 0})) == "#Nx.Tensor<\n  u8[2]\n  [1, 0]\n>");

  CHECK(formatNx(fromValues("s32", {2, 3}, {1, 2, 3, 4, 5, 6})) == R"(#Nx.Tensor<
  s32[2][3]
  [
    [1, 2, 3],
    [4, 5, 6]
  ]
>)");
  CHECK(formatNx(fromValues("s32", {3, 2}, {1, 2, 3, 4, 5, 6})) == R"(#Nx.Tensor<
  s32[3][2]
  [
    [1, 2],
    [3, 4],
    [5, 6]
  ]
>)");
  CHECK(formatNx(fromValues("s32", {2, 3, 2}, {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6})) == R"(#Nx.Tensor<
  s32[2][3][2]
  [
    [
      [1, 2],
      [3, 4],
      [5, 6]
    ],
    [
      [-1, -2],
      [-3, -4],
      [-5, -6]
    ]
  ]
>)");
}

TEST_CASE("Nx.tensor/2 doctests: float types, non-finite values, names") {
  CHECK(formatNx(fromValues("f16", {3}, {1, 2, 3})) == "#Nx.Tensor<\n  f16[3]\n  [1.0, 2.0, 3.0]\n>");
  CHECK(formatNx(fromValues("f64", {3}, {1, 2, 3})) == "#Nx.Tensor<\n  f64[3]\n  [1.0, 2.0, 3.0]\n>");
  CHECK(formatNx(fromValues("bf16", {3}, {1, 2, 3})) == "#Nx.Tensor<\n  bf16[3]\n  [1.0, 2.0, 3.0]\n>");
  double inf = std::numeric_limits<double>::infinity();
  CHECK(formatNx(fromValues("f32", {3}, {-inf, std::nan(""), inf})) == "#Nx.Tensor<\n  f32[3]\n  [-Inf, NaN, Inf]\n>");

  HostTensor named = fromValues("s32", {2, 3}, {1, 2, 3, 4, 5, 6});
  named.type.names = {"x", "y"};
  CHECK(formatNx(named) == R"(#Nx.Tensor<
  s32[x: 2][y: 3]
  [
    [1, 2, 3],
    [4, 5, 6]
  ]
>)");
  HostTensor some = fromValues("s32", {1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  some.type.names = {"batch", "", ""};
  CHECK(formatNx(some) == R"(#Nx.Tensor<
  s32[batch: 1][3][3]
  [
    [
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9]
    ]
  ]
>)");
  // Nx.as_type/2 doctests.
  CHECK(formatNx(fromValues("f32", {}, {1.0e-128})) == "#Nx.Tensor<\n  f32\n  0.0\n>");
  CHECK(formatNx(fromValues("f64", {}, {1.0e-128})) == "#Nx.Tensor<\n  f64\n  1.0e-128\n>");
  CHECK(formatNx(fromValues("u8", {3}, {255, 0, 0})) == "#Nx.Tensor<\n  u8[3]\n  [255, 0, 0]\n>");
  CHECK(formatNx(fromValues("s32", {3}, {2147483647, 0, -2147483648.0})) ==
        "#Nx.Tensor<\n  s32[3]\n  [2147483647, 0, -2147483648]\n>");
  CHECK(formatNx(fromValues("f16", {2}, {inf, std::nan("")})) == "#Nx.Tensor<\n  f16[2]\n  [Inf, NaN]\n>");
}

TEST_CASE("nx_test.exs inspect: limit") {
  FormatOptions inf;
  inf.limit = -1;
  CHECK(formatNx(fromValues("s32", {2}, {1, 2}), inf) == "#Nx.Tensor<\n  s32[2]\n  [1, 2]\n>");
  FormatOptions three;
  three.limit = 3;
  CHECK(formatNx(fromValues("s32", {2, 2}, {1, 2, 3, 4}), three) == R"(#Nx.Tensor<
  s32[2][2]
  [
    [1, 2],
    [3, ...]
  ]
>)");
  CHECK(formatNx(fromValues("s32", {3, 2}, {1, 2, 3, 4, 5, 6}), three) == R"(#Nx.Tensor<
  s32[3][2]
  [
    [1, 2],
    [3, ...],
    ...
  ]
>)");
}

TEST_CASE("the default limit is Elixir's 50") {
  std::string first50;
  for (int i = 0; i < 50; ++i) first50 += std::to_string(i) + ", ";
  CHECK(formatNx(iota("s32", {60})) == "#Nx.Tensor<\n  s32[60]\n  [" + first50 + "...]\n>");
  // Exactly 50 numbers: no "...".
  CHECK(formatNx(iota("s32", {50})) == "#Nx.Tensor<\n  s32[50]\n  [" + first50.substr(0, first50.size() - 2) + "]\n>");
  // The limit runs out inside the third row: that row ends with "...", then the axis.
  std::string out = formatNx(iota("s32", {4, 20}));
  CHECK(out.find("[40, 41, 42, 43, 44, 45, 46, 47, 48, 49, ...],\n    ...\n  ]") != std::string::npos);
  FormatOptions none;
  none.limit = -1;
  CHECK(formatNx(iota("s32", {60}), none).find("59]") != std::string::npos);
}

TEST_CASE("data of the wrong size is reported, not read") {
  HostTensor t = fromValues("f32", {3}, {1, 2, 3});
  t.data.resize(8);
  CHECK(formatNx(t) == "#Nx.Tensor<\n  f32[3]\n  <8 data bytes for 3 elements>\n>");
}

TEST_CASE("empty axes") {
  // chunk/5 on a 0-sized axis prints no entries; an outer axis keeps its lines.
  CHECK(formatNx(HostTensor::zeros(ty("f32"), {0})) == "#Nx.Tensor<\n  f32[0]\n  []\n>");
  CHECK(formatNx(HostTensor::zeros(ty("f32"), {2, 0})) == "#Nx.Tensor<\n  f32[2][0]\n  [\n    [],\n    []\n  ]\n>");
  CHECK(formatNx(HostTensor::zeros(ty("s32"), {0, 3})) == "#Nx.Tensor<\n  s32[0][3]\n  [\n    \n  ]\n>");
}

TEST_CASE("an empty tensor with huge other extents prints a bounded text") {
  // Each empty axis counts against the limit (50 by default, at most 1000
  // rows even with :infinity): 2^40 rows of [] used to print until memory
  // ran out.
  HostTensor tall = HostTensor::zeros(ty("f32"), {int64_t(1) << 40, 0});
  std::string text = formatNx(tall);
  CHECK(text.size() < 2000);
  CHECK(text.find("    ...\n  ]\n>") != std::string::npos);
  FormatOptions all;
  all.limit = -1;
  CHECK(formatNx(tall, all).size() < 20000);
}

TEST_CASE("nx_test.exs inspect: infinity and NaN bit patterns") {
  CHECK(formatNx(fromBits("bf16", {4}, {0xFF80, 0x7F80, 0xFFC1, 0xFF81})) ==
        "#Nx.Tensor<\n  bf16[4]\n  [-Inf, Inf, NaN, NaN]\n>");
  CHECK(formatNx(fromBits("f16", {4}, {0xFC00, 0x7C00, 0xFC01, 0xFC0F})) ==
        "#Nx.Tensor<\n  f16[4]\n  [-Inf, Inf, NaN, NaN]\n>");
  CHECK(formatNx(fromBits("f32", {4}, {0xFF800000, 0x7F800000, 0xFF800001, 0xFFC00001})) ==
        "#Nx.Tensor<\n  f32[4]\n  [-Inf, Inf, NaN, NaN]\n>");
  CHECK(formatNx(fromBits("f32", {4}, {0x7F800001, 0xFF800002, 0x7FC00000, 0xFFC00000})) ==
        "#Nx.Tensor<\n  f32[4]\n  [NaN, NaN, NaN, NaN]\n>");
  CHECK(formatNx(fromBits("f64", {4}, {0xFFF0000000000000, 0x7FF0000000000000, 0x7FF0000000000001, 0x7FF8000000000001})) ==
        "#Nx.Tensor<\n  f64[4]\n  [-Inf, Inf, NaN, NaN]\n>");
  CHECK(formatNx(fromBits("f64", {4}, {0xFFF0000000000001, 0x7FF0000000000002, 0xFFF8000000000000, 0x7FF8000000000000})) ==
        "#Nx.Tensor<\n  f64[4]\n  [NaN, NaN, NaN, NaN]\n>");
}

TEST_CASE("Nx.Constants doctests: shortest digits of each float type") {
  auto scalar = [](const char *type, uint64_t bits) {
    std::string s = formatNx(fromBits(type, {}, {bits}));
    return s.substr(s.rfind("\n  ") + 3, s.size() - s.rfind("\n  ") - 5);
  };
  CHECK(scalar("f32", 0x7F7FFFFF) == "3.4028235e38");  // max_finite
  CHECK(scalar("f32", 0xFF7FFFFF) == "-3.4028235e38"); // min_finite
  CHECK(scalar("f32", 0x00800000) == "1.1754944e-38"); // smallest_positive_normal
  CHECK(scalar("f16", 0x0400) == "6.104e-5");
  CHECK(scalar("bf16", 0x0080) == "1.18e-38");
  CHECK(scalar("f32", 0x34000000) == "1.1920929e-7"); // epsilon
  CHECK(scalar("f16", 0x1400) == "9.77e-4");
  CHECK(scalar("bf16", 0x3C00) == "0.0078");
  CHECK(scalar("f32", 0x40490FDB) == "3.1415927"); // pi
  CHECK(scalar("f16", 0x4248) == "3.14");
  CHECK(scalar("bf16", 0x4049) == "3.14");
  CHECK(scalar("f32", 0x402DF854) == "2.7182817"); // e
  CHECK(scalar("f16", 0x4170) == "2.719");
  CHECK(scalar("bf16", 0x402D) == "2.7");
  CHECK(scalar("f64", doubleBits(M_PI)) == "3.141592653589793");
}

TEST_CASE("f32 values from the Ryu commit's doctest changes") {
  // Old spelling (the exact f32 value as a double) -> new spelling.
  CHECK(f32(0.46364760398864746) == "0.4636476");
  CHECK(f32(0.3333333432674408) == "0.33333334");
  CHECK(f32(0.10000000149011612) == "0.1");
  CHECK(f32(0.05000000074505806) == "0.05");
  CHECK(f32(1.6666666269302368) == "1.6666666");
  CHECK(f32(0.7071067690849304) == "0.70710677");
  CHECK(f32(7.071067810058594) == "7.071068");
  CHECK(f32(-2.384185791015625e-6) == "-2.3841858e-6");
  CHECK(f32(1.0000028610229492) == "1.0000029");
  CHECK(f32(8.331411361694336) == "8.331411");
  // ~MAT[0.1 0.2 0.3 0.4]f16 (was [0.0999755859375, 0.199951171875, 0.300048828125, 0.39990234375]).
  CHECK(formatNx(fromValues("f16", {4}, {0.1, 0.2, 0.3, 0.4})) == "#Nx.Tensor<\n  f16[4]\n  [0.1, 0.2, 0.3, 0.4]\n>");
  // Nx.atan2(1, 2) and friends.
  CHECK(formatNx(fromValues("f32", {3}, {0.7853981852531433, 1.1071487665176392, 1.249045729637146})) ==
        "#Nx.Tensor<\n  f32[3]\n  [0.7853982, 1.1071488, 1.2490457]\n>");
}

TEST_CASE("Nx.Ryu: ryu_test.exs and the f16 reference table") {
  CHECK(nxRyuBitsToDecimal(0x00000000, 23, 8) == "0.0");
  CHECK(nxRyuBitsToDecimal(0x80000000, 23, 8) == "-0.0");
  CHECK(nxRyuBitsToDecimal(0x3F800000, 23, 8) == "1.0");
  CHECK(nxRyuBitsToDecimal(0x40000000, 23, 8) == "2.0");
  CHECK(nxRyuBitsToDecimal(0x3DCCCCCD, 23, 8) == "0.1");
  CHECK(nxRyuBitsToDecimal(0x7F800000, 23, 8) == "Inf");
  CHECK(nxRyuBitsToDecimal(0xFF800000, 23, 8) == "-Inf");
  CHECK(nxRyuBitsToDecimal(0x7F800001, 23, 8) == "NaN");
  CHECK(nxRyuBitsToDecimal(0xFF800001, 23, 8) == "NaN");
  // Lines of nx/test/fixtures/f16_table.txt (C Ryu, 'E' written as 'e').
  CHECK(f16(0x0000) == "0.0");
  CHECK(f16(0x0001) == "6e-8");
  CHECK(f16(0x0002) == "1e-7");
  CHECK(f16(0x0010) == "9.5e-7");
  CHECK(f16(0x03FF) == "6.1e-5");
  CHECK(f16(0x0BB7) == "2.354e-4");
  CHECK(f16(0x0C00) == "2.441e-4");
  CHECK(f16(0x1400) == "9.77e-4");
  CHECK(f16(0x176F) == "0.001815");
  CHECK(f16(0x2000) == "0.007812");
  CHECK(f16(0x2EDF) == "0.10736");
  CHECK(f16(0x3A97) == "0.8237");
  CHECK(f16(0x3C00) == "1.0");
  CHECK(f16(0x4900) == "10.0");
  CHECK(f16(0x5207) == "48.22");
  CHECK(f16(0x5BFF) == "255.9");
  CHECK(f16(0x6400) == "1024.0");
  CHECK(f16(0x6977) == "2798.0");
  CHECK(f16(0x7000) == "8190.0");
  CHECK(f16(0x752F) == "21230.0");
  CHECK(f16(0x7800) == "32770.0");
  CHECK(f16(0x7BFF) == "6.55e4");
  CHECK(f16(0x80E7) == "-1.377e-5");
  CHECK(f16(0xAFC7) == "-0.1215");
  CHECK(f16(0xF617) == "-24940.0");
  // Nx.Ryu is not always the shortest round trip above 2^25; nxc prints what
  // Nx prints (checked against Nx.Ryu run under Elixir): C Ryu gives 3.888666e10.
  CHECK(nxRyuBitsToDecimal(0x5110DD35, 23, 8) == "3.8886658e10");
  CHECK(nxRyuBitsToDecimal(0x51019AF6, 23, 8) == "3.479066e10");
  // Integers print with zeros and ".0" while that is no longer than the
  // exponent form (insert_decimal/5), and a one-digit mantissa drops ".0"
  // (checked against Nx.Ryu under Elixir).
  CHECK(f32(16777216.0) == "16777216.0");
  CHECK(f32(1.0e10) == "1e10");
  CHECK(f32(1.0e20) == "1e20");
  CHECK(f32(421337006080.0) == "4.21337e11");
  CHECK(f32(1.0e-45) == "1e-45");
  CHECK(f32(1.0e-3) == "0.001");
  CHECK(f32(1.0e-4) == "1e-4");
  CHECK(f32(-1.0e-4) == "-1e-4");
  CHECK(f32(1.5e-4) == "1.5e-4");
  CHECK(f32(100.0) == "100.0");
  CHECK(f32(250.0) == "250.0");
  CHECK(f32(1000.0) == "1e3");
}

TEST_CASE("f64 is Erlang's float_to_binary(X, [short])") {
  // num_bif_SUITE.erl, t_float_to_string/1, "test short option".
  CHECK(f64(-9007199254740991.0) == "-9007199254740991.0");
  CHECK(f64(-9007199254740992.0) == "-9.007199254740992e15");
  CHECK(f64(9007199254740991.0) == "9007199254740991.0");
  CHECK(f64(9007199254740992.0) == "9.007199254740992e15");
  CHECK(f64(2.018) == "2.018");
  CHECK(f64(-2.018) == "-2.018");
  CHECK(f64(1.0e-6) == "1.0e-6");
  CHECK(f64(1.0e-5) == "1.0e-5");
  CHECK(f64(1.0e-4) == "0.0001");
  CHECK(f64(1.0e-3) == "0.001");
  CHECK(f64(1.0e-2) == "0.01");
  CHECK(f64(1.0e-1) == "0.1");
  CHECK(f64(1.0) == "1.0");
  CHECK(f64(10.0) == "10.0");
  CHECK(f64(100.0) == "100.0");
  CHECK(f64(1.0e3) == "1.0e3");
  CHECK(f64(1.0e4) == "1.0e4");
  CHECK(f64(1.0e7) == "1.0e7");
  CHECK(f64(1.234e-6) == "1.234e-6");
  CHECK(f64(1.234e-4) == "1.234e-4");
  CHECK(f64(1.234e-3) == "0.001234");
  CHECK(f64(1.234e-1) == "0.1234");
  CHECK(f64(1.234e1) == "12.34");
  CHECK(f64(1.234e2) == "123.4");
  CHECK(f64(1.234e3) == "1234.0");
  CHECK(f64(1.234e4) == "12340.0");
  CHECK(f64(1.234e5) == "1.234e5");
  CHECK(f64(1.234e6) == "1.234e6");
  CHECK(f64(2.2250738585072014e-308) == "2.2250738585072014e-308");
  CHECK(f64(2.98023223876953125e-8) == "2.9802322387695312e-8");
  CHECK(f64(-2.109808898695963e16) == "-2.109808898695963e16");
  CHECK(f64(4.940656e-318) == "4.940656e-318");
  CHECK(f64(1.18575755e-316) == "1.18575755e-316");
  CHECK(f64(2.989102097996e-312) == "2.989102097996e-312");
  CHECK(f64(9.0608011534336e15) == "9.0608011534336e15");
  CHECK(f64(4.708356024711512e18) == "4.708356024711512e18");
  CHECK(f64(9.409340012568248e18) == "9.409340012568248e18");
  CHECK(f64(1.2345678) == "1.2345678");
  CHECK(f64(-0.0) == "-0.0");
  CHECK(f64(0.0) == "0.0");
  CHECK(f64(5.0e-324) == "5.0e-324");
}

TEST_CASE("integers of every width print in full") {
  CHECK(formatNx(fromBits("s64", {2}, {0x8000000000000000ull, 0x7FFFFFFFFFFFFFFFull})) ==
        "#Nx.Tensor<\n  s64[2]\n  [-9223372036854775808, 9223372036854775807]\n>");
  CHECK(formatNx(fromBits("u64", {1}, {0xFFFFFFFFFFFFFFFFull})) == "#Nx.Tensor<\n  u64[1]\n  [18446744073709551615]\n>");
  CHECK(formatNx(fromBits("s8", {2}, {0x80, 0x7F})) == "#Nx.Tensor<\n  s8[2]\n  [-128, 127]\n>");
  CHECK(formatNx(fromBits("u16", {1}, {0xFFFF})) == "#Nx.Tensor<\n  u16[1]\n  [65535]\n>");
  CHECK(formatNx(fromBits("s16", {1}, {0x8000})) == "#Nx.Tensor<\n  s16[1]\n  [-32768]\n>");
  CHECK(formatNx(fromBits("u32", {1}, {0xFFFFFFFF})) == "#Nx.Tensor<\n  u32[1]\n  [4294967295]\n>");
}

TEST_CASE("tuples") {
  HostValue a = HostValue::leaf(fromValues("s32", {}, {1}));
  HostValue b = HostValue::leaf(fromValues("s32", {5}, {1, 2, 3, 4, 5}));
  // Kernel.inspect/1 (infinite width), as in nx/test/nx/defn_test.exs: ", ".
  FormatOptions flat;
  flat.pretty = false;
  CHECK(formatNx(HostValue::tuple({a, b, a}), flat) == R"({#Nx.Tensor<
   s32
   1
 >, #Nx.Tensor<
   s32[5]
   [1, 2, 3, 4, 5]
 >, #Nx.Tensor<
   s32
   1
 >})");
  // IEx and IO.inspect (width 80): every flex break is taken after a tensor.
  CHECK(formatNx(HostValue::tuple({a, b})) == R"({#Nx.Tensor<
   s32
   1
 >,
 #Nx.Tensor<
   s32[5]
   [1, 2, 3, 4, 5]
 >})");
  // A nested tuple, laid out as in the Nx.Serving moduledoc.
  HostValue m = HostValue::leaf(fromValues("s64", {2, 2}, {2, 4, 6, 8}));
  CHECK(formatNx(HostValue::tuple({HostValue::tuple({m, a}), a})) == R"({{#Nx.Tensor<
    s64[2][2]
    [
      [2, 4],
      [6, 8]
    ]
  >,
  #Nx.Tensor<
    s32
    1
  >},
 #Nx.Tensor<
   s32
   1
 >})");
  CHECK(formatNx(HostValue::tuple({})) == "{}");
  CHECK(formatNx(HostValue::leaf(fromValues("s32", {}, {7}))) == "#Nx.Tensor<\n  s32\n  7\n>");
}

TEST_CASE("tuple elements see a lower limit each, and a spent limit ends the tuple") {
  // Element k is inspected with limit - (k + 1) (call_container_fun/3).
  FormatOptions opts;
  opts.limit = 3;
  HostValue v = HostValue::leaf(iota("s32", {5}));
  CHECK(formatNx(HostValue::tuple({v, v, v, v}), opts) == R"({#Nx.Tensor<
   s32[5]
   [0, 1, ...]
 >,
 #Nx.Tensor<
   s32[5]
   [0, ...]
 >,
 #Nx.Tensor<
   s32[5]
   [...]
 >, ...})");
}

} // TEST_SUITE
