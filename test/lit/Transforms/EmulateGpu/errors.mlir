// A barrier that only some threads reach cannot be emulated (nor run on a GPU).
// RUN: nxc-opt %s -nxc-emulate-gpu -verify-diagnostics

func.func @divergent(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %first = arith.cmpi eq, %tx, %c0 : index
    // expected-error @+1 {{cannot emulate a barrier under control flow that differs between threads}}
    scf.if %first {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}
