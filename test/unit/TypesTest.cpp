//===- TypesTest.cpp - Nx element types and promotion ---------------------===//
//
// The expected values are the doctests of Nx.Type (merge/2, merge_number/2,
// to_floating/1, to_aggregate/1), restricted to the types nxc supports.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

using namespace nxc;
using nxc::test::ty;

namespace {

std::string merge(const char *a, const char *b) { return mergeTypes(ty(a), ty(b)).name(); }
std::string mergeInt(const char *t, int64_t v) { return mergeInteger(ty(t), v).name(); }

} // namespace

TEST_SUITE("types") {

TEST_CASE("parsing and naming element types") {
  for (const char *n : {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bf16"}) {
    CAPTURE(n);
    auto t = ElemType::parse(n);
    REQUIRE(t.has_value());
    CHECK(t->name() == n);
  }
  CHECK(ElemType::parse("pred")->name() == "u8");
  CHECK_FALSE(ElemType::parse("f33").has_value());
  CHECK_FALSE(ElemType::parse("s128").has_value());
  CHECK_FALSE(ElemType::parse("").has_value());
  CHECK_FALSE(ElemType::parse("F32").has_value());
  CHECK(ElemType::parse("c64")->name() == "c64");
  CHECK(ElemType::parse("c128")->bytes() == 16);
  CHECK_FALSE(ElemType::parse("c32").has_value());
}

TEST_CASE("sub-byte integers: one byte each, Nx's merges and merge_number sizes") {
  CHECK(ty("s4").bytes() == 1);
  CHECK(ty("u2").cType() == "uint8_t");
  CHECK(ty("s4").cType() == "int8_t");
  CHECK(ty("s4").isSubByte());
  CHECK(ty("s4").byteType().name() == "s8");
  CHECK_FALSE(ty("s8").isSubByte());
  // Nx.Type.merge/2 and merge_number/2 (unsigned_size/signed_size of 0 and 1 are 1).
  CHECK(mergeTypes(ty("u4"), ty("s4")).name() == "s8");
  CHECK(mergeTypes(ty("s2"), ty("s4")).name() == "s4");
  CHECK(mergeTypes(ty("u2"), ty("f32")).name() == "f32");
  CHECK(mergeInteger(ty("u4"), 1).name() == "u4");
  CHECK(mergeInteger(ty("u4"), 2).name() == "u8");
  CHECK(mergeInteger(ty("s2"), -1).name() == "s2");
  CHECK(mergeInteger(ty("s4"), -2).name() == "s4");
  CHECK(mergeInteger(ty("s2"), 2).name() == "s8");
  CHECK(mergeInteger(ty("u2"), -1).name() == "s4");
  CHECK(toAggregate(ty("s4")).name() == "s32");
  CHECK(toAggregate(ty("u2")).name() == "u32");
}

TEST_CASE("complex types promote as Nx.Type.merge/2 does") {
  // Nx.Type's doctests.
  CHECK(mergeTypes(ty("f16"), ty("c64")).name() == "c64");
  CHECK(mergeTypes(ty("f32"), ty("c64")).name() == "c64");
  CHECK(mergeTypes(ty("f64"), ty("c64")).name() == "c128");
  CHECK(mergeTypes(ty("c64"), ty("f32")).name() == "c64");
  CHECK(mergeTypes(ty("c128"), ty("c64")).name() == "c128");
  CHECK(mergeTypes(ty("s64"), ty("c64")).name() == "c64");
  CHECK(mergeTypes(ty("bf16"), ty("c64")).name() == "c64");
  CHECK(toComplex(ty("f64")).name() == "c128");
  CHECK(toComplex(ty("s8")).name() == "c64");
  CHECK(toReal(ty("c128")).name() == "f64");
  CHECK(toReal(ty("s32")).name() == "f32");
  CHECK(toFloating(ty("c64")).name() == "c64");
  CHECK(mergeInteger(ty("c64"), 300).name() == "c64");
  CHECK_FALSE(ty("c64").isFloat());
  CHECK_FALSE(ty("c64").isInteger());
  CHECK(ty("c64").partType().name() == "f32");
}

TEST_CASE("type predicates, sizes and C types") {
  CHECK(ty("f32").isFloat());
  CHECK(ty("bf16").isFloat());
  CHECK(ty("s8").isInteger());
  CHECK(ty("u64").isInteger());
  CHECK(ty("s8").isSigned());
  CHECK_FALSE(ty("u8").isSigned());
  CHECK(ty("f64").bytes() == 8);
  CHECK(ty("bf16").bytes() == 2);
  CHECK(ty("u8").bytes() == 1);
  CHECK(ty("f32").cType() == "float");
  CHECK(ty("f64").cType() == "double");
  CHECK(ty("s32").cType() == "int32_t");
  CHECK(ty("u16").cType() == "uint16_t");
  CHECK(ty("f16").cType() == "uint16_t");
  CHECK(ty("bf16").cType() == "uint16_t");
  CHECK(ElemType::f32() == ty("f32"));
  CHECK(ElemType::s32() == ty("s32"));
  CHECK(ElemType::u8() == ty("u8"));
  CHECK(ty("f32") != ty("f64"));
}

TEST_CASE("merge: same kind takes the larger size") {
  CHECK(merge("s8", "s8") == "s8");
  CHECK(merge("s8", "s64") == "s64");
  CHECK(merge("u32", "u8") == "u32");
  CHECK(merge("u8", "u16") == "u16");
  CHECK(merge("f32", "f64") == "f64");
}

TEST_CASE("merge: unsigned with signed doubles the unsigned size, up to 64 bits") {
  CHECK(merge("u8", "s8") == "s16");
  CHECK(merge("s8", "u8") == "s16");
  CHECK(merge("s16", "u8") == "s16");
  CHECK(merge("s8", "u16") == "s32");
  CHECK(merge("s32", "u8") == "s32");
  CHECK(merge("s8", "u32") == "s64");
  CHECK(merge("s64", "u8") == "s64");
  CHECK(merge("s8", "u64") == "s64");
}

TEST_CASE("merge: floats win over integers with their own size") {
  CHECK(merge("u8", "f32") == "f32");
  CHECK(merge("u64", "f32") == "f32");
  CHECK(merge("s8", "f32") == "f32");
  CHECK(merge("s64", "f32") == "f32");
  CHECK(merge("f32", "s64") == "f32");
  CHECK(merge("u8", "f64") == "f64");
  CHECK(merge("s64", "f64") == "f64");
  CHECK(merge("s64", "f16") == "f16");
  CHECK(merge("u8", "bf16") == "bf16");
  CHECK(merge("s64", "bf16") == "bf16");
}

TEST_CASE("merge: f beats bf") {
  CHECK(merge("bf16", "f32") == "f32");
  CHECK(merge("f32", "bf16") == "f32");
  CHECK(merge("f64", "bf16") == "f64");
  CHECK(merge("bf16", "f16") == "f16");
}

TEST_CASE("merge is commutative") {
  const char *all[] = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bf16"};
  for (const char *a : all)
    for (const char *b : all) {
      CAPTURE(a);
      CAPTURE(b);
      CHECK(merge(a, b) == merge(b, a));
    }
}

TEST_CASE("merge_number with an integer keeps the type when the number fits") {
  CHECK(mergeInt("u8", 0) == "u8");
  CHECK(mergeInt("u8", 255) == "u8");
  CHECK(mergeInt("u8", 256) == "u16");
  CHECK(mergeInt("u16", 65536) == "u32");
  CHECK(mergeInt("u8", 4294967296LL) == "u64");
  CHECK(mergeInt("u32", 1) == "u32");
}

TEST_CASE("merge_number: a negative number makes an unsigned type signed") {
  CHECK(mergeInt("u8", -1) == "s16");
  CHECK(mergeInt("u8", -32767) == "s16");
  CHECK(mergeInt("u8", -32768) == "s16");
  CHECK(mergeInt("u8", -32769) == "s32");
  CHECK(mergeInt("u64", -1337) == "s64");
  CHECK(mergeInt("u32", -1) == "s64");
}

TEST_CASE("merge_number with signed types") {
  CHECK(mergeInt("s8", 0) == "s8");
  CHECK(mergeInt("s8", 127) == "s8");
  CHECK(mergeInt("s8", -128) == "s8");
  CHECK(mergeInt("s8", 128) == "s16");
  CHECK(mergeInt("s8", -129) == "s16");
  CHECK(mergeInt("s16", 40000) == "s32");
  CHECK(mergeInt("s32", 3000000000LL) == "s64");
  CHECK(mergeInt("s64", 1) == "s64");
}

TEST_CASE("merge_number: floats ignore integers") {
  CHECK(mergeInt("f32", 1) == "f32");
  CHECK(mergeInt("f16", 100000) == "f16");
  CHECK(mergeInt("bf16", -1) == "bf16");
  CHECK(mergeInt("f64", 1) == "f64");
}

TEST_CASE("merge_number with a float") {
  CHECK(mergeFloat(ty("f16")).name() == "f16");
  CHECK(mergeFloat(ty("bf16")).name() == "bf16");
  CHECK(mergeFloat(ty("f32")).name() == "f32");
  CHECK(mergeFloat(ty("f64")).name() == "f64");
  CHECK(mergeFloat(ty("s8")).name() == "f32");
  CHECK(mergeFloat(ty("s64")).name() == "f32");
  CHECK(mergeFloat(ty("u64")).name() == "f32");
}

TEST_CASE("to_floating") {
  CHECK(toFloating(ty("s8")).name() == "f32");
  CHECK(toFloating(ty("s32")).name() == "f32");
  CHECK(toFloating(ty("s64")).name() == "f32");
  CHECK(toFloating(ty("u8")).name() == "f32");
  CHECK(toFloating(ty("bf16")).name() == "bf16");
  CHECK(toFloating(ty("f16")).name() == "f16");
  CHECK(toFloating(ty("f32")).name() == "f32");
  CHECK(toFloating(ty("f64")).name() == "f64");
}

TEST_CASE("to_aggregate") {
  CHECK(toAggregate(ty("s8")).name() == "s32");
  CHECK(toAggregate(ty("s16")).name() == "s32");
  CHECK(toAggregate(ty("s32")).name() == "s32");
  CHECK(toAggregate(ty("s64")).name() == "s64");
  CHECK(toAggregate(ty("u8")).name() == "u32");
  CHECK(toAggregate(ty("u16")).name() == "u32");
  CHECK(toAggregate(ty("u32")).name() == "u32");
  CHECK(toAggregate(ty("u64")).name() == "s64");
  CHECK(toAggregate(ty("bf16")).name() == "bf16");
  CHECK(toAggregate(ty("f16")).name() == "f16");
  CHECK(toAggregate(ty("f32")).name() == "f32");
  CHECK(toAggregate(ty("f64")).name() == "f64");
}

TEST_CASE("TensorType::str prints Nx's form") {
  CHECK(TensorType{ty("f32"), {2, 3}, {}}.str() == "f32[2][3]");
  CHECK(TensorType{ty("s32"), {}, {}}.str() == "s32");
  CHECK(TensorType{ty("u8"), {100}, {}}.str() == "u8[100]");
  CHECK(TensorType{ty("bf16"), {1, 1, 1}, {}}.str() == "bf16[1][1][1]");
  CHECK(TensorType{ty("f32"), {0}, {}}.str() == "f32[0]");
  CHECK(TensorType{ty("f32"), {30, 784}, {"batch", ""}}.str() == "f32[batch: 30][784]");
}

TEST_CASE("TensorType rank, element count and comparison") {
  TensorType a{ty("f32"), {2, 3}, {}};
  CHECK(a.rank() == 2);
  CHECK(a.numElements() == 6);
  TensorType scalar{ty("f32"), {}, {}};
  CHECK(scalar.rank() == 0);
  CHECK(scalar.numElements() == 1);
  CHECK(TensorType{ty("f32"), {4, 0}, {}}.numElements() == 0);
  CHECK(a.sameTypeAndShape(TensorType{ty("f32"), {2, 3}, {"rows", ""}}));
  CHECK_FALSE(a.sameTypeAndShape(TensorType{ty("f64"), {2, 3}, {}}));
  CHECK_FALSE(a.sameTypeAndShape(TensorType{ty("f32"), {3, 2}, {}}));
}

TEST_CASE("shapeString prints shapes as Nx does in messages") {
  CHECK(shapeString({2, 3}) == "{2, 3}");
  CHECK(shapeString({5}) == "{5}");
  CHECK(shapeString({}) == "{}");
}

} // TEST_SUITE
