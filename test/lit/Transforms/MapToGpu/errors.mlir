// Compiled CUDA code cannot call back into the host.
// RUN: nxc-opt %s -nxc-map-to-gpu -verify-diagnostics

func.func private @host(memref<f32>)

func.func @prints(%x: memref<f32>, %ws: memref<0xi8>) {
  // expected-error @+1 {{this operation calls back into the host (print_value, print_expr or a host function), which compiled CUDA code cannot do}}
  func.call @host(%x) : (memref<f32>) -> ()
  return
}
