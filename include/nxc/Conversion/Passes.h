//===- Passes.h - nxc's conversion passes -----------------------*- C++ -*-===//
#ifndef NXC_CONVERSION_PASSES_H
#define NXC_CONVERSION_PASSES_H

#include <memory>

namespace mlir {
class Pass;
}

namespace nxc {

/// nx -> linalg/tensor/arith/math on signless types (`nxc-lower-nx-to-linalg`).
std::unique_ptr<mlir::Pass> createLowerNxToLinalgPass();

/// Replaces math ops by polynomial approximations and arith expansions, so
/// that f32 code needs no libm (`nxc-expand-math`).
std::unique_ptr<mlir::Pass> createExpandMathPass();

/// Computes arith and math on bf16 and the f8 types in f32 and writes every
/// conversion to and from them in integer arithmetic (bf16 correctly
/// rounded, f8 as Nx rounds), so that CPU code needs no compiler-runtime
/// routine for bf16 and no 8-bit float type (`nxc-expand-narrow-floats`).
std::unique_ptr<mlir::Pass> createExpandNarrowFloatsPass();

/// Registers the passes so that pipelines can name them in text.
void registerConversionPasses();

} // namespace nxc

#endif // NXC_CONVERSION_PASSES_H
