// A temporary without a static shape cannot be placed in the workspace.
// RUN: nxc-opt %s -nxc-allocs-to-workspace -verify-diagnostics

func.func @dynamic(%n: index) {
  // expected-error @+1 {{'memref.alloc' op nxc needs static shapes for temporaries}}
  %t = memref.alloc(%n) : memref<?xf32>
  return
}
