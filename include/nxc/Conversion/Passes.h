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

/// Computes arith and math on bf16 in f32 and writes every conversion to and
/// from bf16 in integer arithmetic, correctly rounded, so that CPU code needs
/// no compiler-runtime routine for bf16 (`nxc-expand-bf16`).
std::unique_ptr<mlir::Pass> createExpandBF16Pass();

/// Registers the passes so that pipelines can name them in text.
void registerConversionPasses();

} // namespace nxc

#endif // NXC_CONVERSION_PASSES_H
