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

/// Marks an f32 math.exp whose argument is NaN or within [-87, 87] (the
/// loop around it checks and runs again otherwise: nxc-fast-exp):
/// nxc-expand-math then neither clamps the argument nor scales in two steps.
/// Outside that range the marked op's result is unspecified.
inline constexpr const char *kAssumeNormalRangeAttr = "nxc.assume_normal_range";

/// Computes arith and math on bf16 in f32 and writes every conversion to and
/// from bf16 in integer arithmetic, correctly rounded, so that CPU code needs
/// no compiler-runtime routine for bf16 (`nxc-expand-bf16`).
std::unique_ptr<mlir::Pass> createExpandBF16Pass();

/// Registers the passes so that pipelines can name them in text.
void registerConversionPasses();

} // namespace nxc

#endif // NXC_CONVERSION_PASSES_H
