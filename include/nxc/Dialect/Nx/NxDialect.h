//===- NxDialect.h - the nx dialect -----------------------------*- C++ -*-===//
//
// Declares the nx dialect and its ops (generated from NxOps.td). Include this
// only where MLIR is used; the front end and Sema do not need it.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_DIALECT_NX_NXDIALECT_H
#define NXC_DIALECT_NX_NXDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "nxc/Dialect/Nx/NxOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "nxc/Dialect/Nx/NxOps.h.inc"

#endif // NXC_DIALECT_NX_NXDIALECT_H
