//===- Views.h - the buffers that views were taken of ---------*- C++ -*-===//
//
// Shared by the passes on buffers (nxc-stream-stores,
// nxc-register-accumulators): internal to lib/Transforms.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_LIB_TRANSFORMS_VIEWS_H
#define NXC_LIB_TRANSFORMS_VIEWS_H

#include "mlir/IR/Value.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace nxc {

/// The buffer a view was taken of, through any chain of view-like ops.
inline mlir::Value viewRoot(mlir::Value v) {
  while (mlir::Operation *def = v.getDefiningOp()) {
    auto view = llvm::dyn_cast<mlir::ViewLikeOpInterface>(def);
    if (!view) break;
    v = view.getViewSource();
  }
  return v;
}

} // namespace nxc

#endif // NXC_LIB_TRANSFORMS_VIEWS_H
