//===- Views.h - the buffers that views were taken of ---------*- C++ -*-===//
//
// Shared by the passes on buffers (nxc-stream-stores,
// nxc-register-accumulators, nxc-fast-exp): internal to lib/Transforms.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_LIB_TRANSFORMS_VIEWS_H
#define NXC_LIB_TRANSFORMS_VIEWS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
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

/// The bytes a buffer covers: a range of `root` (a function argument or an
/// allocation), or all of it when `size` is unknown (-1).
struct Extent {
  mlir::Value root;
  int64_t offset = 0;
  int64_t size = -1;
};

inline int64_t bytesOf(mlir::MemRefType t) {
  if (!t.hasStaticShape() || !t.getLayout().isIdentity()) return -1;
  return t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8);
}

inline Extent extentOf(mlir::Value v) {
  if (auto view = v.getDefiningOp<mlir::memref::ViewOp>()) {
    Extent source = extentOf(view.getSource());
    std::optional<int64_t> shift = mlir::getConstantIntValue(view.getByteShift());
    int64_t size = bytesOf(view.getType());
    if (source.size < 0 || !shift || size < 0) return {source.root};
    return {source.root, source.offset + *shift, size};
  }
  // Reshapes cover the same bytes; other views (subviews, casts) some of
  // their source's.
  if (auto e = v.getDefiningOp<mlir::memref::ExpandShapeOp>()) return extentOf(e.getSrc());
  if (auto c = v.getDefiningOp<mlir::memref::CollapseShapeOp>()) return extentOf(c.getSrc());
  if (llvm::isa_and_nonnull<mlir::ViewLikeOpInterface>(v.getDefiningOp())) return {viewRoot(v)};
  auto t = llvm::dyn_cast<mlir::MemRefType>(v.getType());
  return {v, 0, t ? bytesOf(t) : -1};
}

/// Whether two buffers are known not to overlap. Different roots are
/// different arguments (which the kernels declare noalias) or allocations.
inline bool disjoint(const Extent &a, const Extent &b) {
  if (a.root != b.root) return true;
  if (a.size < 0 || b.size < 0) return false;
  return a.offset + a.size <= b.offset || b.offset + b.size <= a.offset;
}

} // namespace nxc

#endif // NXC_LIB_TRANSFORMS_VIEWS_H
