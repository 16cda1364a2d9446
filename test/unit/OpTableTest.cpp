// The op table (include/nxc/Sema/Ops.def) and the nx dialect (NxOps.td) name
// the same operations: a graph node of any op but the graph-only ones becomes
// the nx op of its name, and every nx op but the terminator is some node.
#include "nxc/Dialect/Nx/NxDialect.h"
#include "nxc/Sema/Op.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace nxc;

TEST_CASE("every op's name is its own and unique") {
  std::set<std::string_view> seen;
  for (int i = 0; i < kOpCount; ++i) {
    Op op = (Op)i;
    CHECK(seen.insert(opName(op)).second);
    REQUIRE(opNamed(opName(op)).has_value());
    CHECK(*opNamed(opName(op)) == op);
  }
  CHECK(!opNamed("yield").has_value());
  CHECK(!opNamed("frobnicate").has_value());
}

TEST_CASE("Ops.def and the nx dialect list the same ops") {
  mlir::MLIRContext ctx;
  ctx.getOrLoadDialect<nx::NxDialect>();
  for (int i = 0; i < kOpCount; ++i) {
    Op op = (Op)i;
    std::string name = "nx." + std::string(opName(op));
    INFO(name);
    CHECK(mlir::RegisteredOperationName::lookup(name, &ctx).has_value() == isNxDialectOp(op));
  }
  int dialectOps = 0;
  for (mlir::RegisteredOperationName name : ctx.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "nx" || name.stripDialect() == "yield") continue;
    ++dialectOps;
    INFO(name.getStringRef().str());
    std::optional<Op> op = opNamed(name.stripDialect().str());
    CHECK((op && isNxDialectOp(*op)));
  }
  int tableOps = 0;
  for (int i = 0; i < kOpCount; ++i) tableOps += isNxDialectOp((Op)i);
  CHECK(dialectOps == tableOps);
  CHECK(tableOps > 0);
}
