//===- nxc-opt.cpp - nxc's passes on textual IR ---------------------------===//
//
// mlir-opt with the nx dialect and nxc's passes: runs any pass or pipeline on
// a .mlir file, so that each pass is tested on its own (test/lit/Dialect,
// test/lit/Conversion, test/lit/Transforms), and nxc's own pipelines by name
// (--nxc-cpu-pipeline runs what nxc aot runs; include/nxc/Transforms/Pipelines.h).
//
//===----------------------------------------------------------------------===//
#include "nxc/Conversion/Passes.h"
#include "nxc/Dialect/Nx/NxDialect.h"
#include "nxc/Transforms/Passes.h"
#include "nxc/Transforms/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  nxc::registerConversionPasses();
  nxc::registerTransformPasses();
  nxc::registerNxcPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<nxc::nx::NxDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "nxc optimizer driver\n", registry));
}
