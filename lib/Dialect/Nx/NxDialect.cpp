//===- NxDialect.cpp - the nx dialect -------------------------------------===//
//
// Registers the nx ops and implements their verifiers.
//
//===----------------------------------------------------------------------===//
#include "nxc/Dialect/Nx/NxDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace nxc::nx;

#include "nxc/Dialect/Nx/NxOpsDialect.cpp.inc"

void NxDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "nxc/Dialect/Nx/NxOps.cpp.inc"
      >();
}

LogicalResult BroadcastOp::verify() {
  auto in = llvm::cast<RankedTensorType>(getOperand().getType());
  auto out = llvm::cast<RankedTensorType>(getResult().getType());
  ArrayRef<int64_t> axes = getAxes();
  if ((int64_t)axes.size() != in.getRank())
    return emitOpError("expects one axis per operand dimension");
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= out.getRank() || (i > 0 && axes[i] <= axes[i - 1]))
      return emitOpError("axes must be increasing and within the result rank");
    int64_t d = in.getDimSize(i);
    if (d != 1 && d != out.getDimSize(axes[i]))
      return emitOpError("operand dimension ") << i << " (" << d
             << ") is neither 1 nor the result dimension " << out.getDimSize(axes[i]);
  }
  return success();
}

static LogicalResult verifyYield(Operation *op, Region &region, TypeRange types, StringRef what) {
  auto yield = llvm::dyn_cast<YieldOp>(region.front().getTerminator());
  if (!yield) return op->emitOpError("expects its ") << what << " region to end in nx.yield";
  if (TypeRange(yield.getValues().getTypes()) != types)
    return op->emitOpError("expects its ") << what << " region to yield " << types.size() << " values of the result types";
  return success();
}

LogicalResult CondOp::verify() {
  if (llvm::cast<RankedTensorType>(getPred().getType()).getRank() != 0)
    return emitOpError("expects a scalar predicate");
  if (failed(verifyYield(*this, getThenRegion(), getResultTypes(), "then"))) return failure();
  return verifyYield(*this, getElseRegion(), getResultTypes(), "else");
}

LogicalResult WhileOp::verify() {
  TypeRange state = getInits().getTypes();
  if (TypeRange(getResultTypes()) != state) return emitOpError("expects results of the state's types");
  for (Region *r : {&getCondition(), &getBody()})
    if (TypeRange(r->front().getArgumentTypes()) != state)
      return emitOpError("expects region arguments of the state's types");
  auto yield = llvm::dyn_cast<YieldOp>(getCondition().front().getTerminator());
  if (!yield || yield.getValues().size() != 1 ||
      llvm::cast<RankedTensorType>(yield.getValues()[0].getType()).getRank() != 0)
    return emitOpError("expects its condition region to yield one scalar");
  return verifyYield(*this, getBody(), state, "body");
}

#define GET_OP_CLASSES
#include "nxc/Dialect/Nx/NxOps.cpp.inc"
