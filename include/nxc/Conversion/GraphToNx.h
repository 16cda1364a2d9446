//===- GraphToNx.h - typed graph to the nx dialect --------------*- C++ -*-===//
#ifndef NXC_CONVERSION_GRAPHTONX_H
#define NXC_CONVERSION_GRAPHTONX_H

#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Sema/Graph.h"

#include "mlir/IR/BuiltinOps.h"

namespace nxc {

/// Maps an Nx element type to the MLIR type the nx dialect uses
/// (si32, ui8, f32, bf16, ...).
mlir::Type nxElementType(mlir::MLIRContext *ctx, ElemType t);

/// Appends `func.func @symbol` computing `graph` with nx ops to `module`.
/// Arguments are the flattened parameters, results the flattened outputs.
/// Each op is verified as it is made: an op that is not an nx op, or one
/// its verifier rejects, is an error at its node's location (a graph read
/// from a file: a user error at the node's JSON pointer; a traced graph: a
/// bug in Sema, which the caller reports as internal).
Status emitNxFunction(mlir::ModuleOp module, const Graph &graph, const std::string &symbol);

} // namespace nxc

#endif // NXC_CONVERSION_GRAPHTONX_H
