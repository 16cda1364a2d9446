// nxc-copies-to-linalg turns memref.copy (a memcpy call once lowered) into
// linalg.copy (a loop), keeping source, target and layouts.
// RUN: nxc-opt %s -nxc-copies-to-linalg | FileCheck %s --implicit-check-not=memref.copy

// CHECK-LABEL: func.func @copies
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>, %[[M:.*]]: memref<4x8xi8>, %[[N:.*]]: memref<2x8xi8>)
// CHECK-NEXT: linalg.copy ins(%[[A]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>)
// CHECK-NEXT: %[[SUB:.*]] = memref.subview %[[M]][1, 0] [2, 8] [1, 1] : memref<4x8xi8> to memref<2x8xi8, strided<[8, 1], offset: 8>>
// CHECK-NEXT: linalg.copy ins(%[[SUB]] : memref<2x8xi8, strided<[8, 1], offset: 8>>) outs(%[[N]] : memref<2x8xi8>)
// CHECK-NEXT: return
func.func @copies(%a: memref<4xf32>, %b: memref<4xf32>, %m: memref<4x8xi8>, %n: memref<2x8xi8>) {
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  %s = memref.subview %m[1, 0] [2, 8] [1, 1] : memref<4x8xi8> to memref<2x8xi8, strided<[8, 1], offset: 8>>
  memref.copy %s, %n : memref<2x8xi8, strided<[8, 1], offset: 8>> to memref<2x8xi8>
  return
}

// Copies nested in regions are rewritten too.
// CHECK-LABEL: func.func @in_loop
// CHECK: scf.for
// CHECK-NEXT: linalg.copy ins(%arg0 : memref<4xf32>) outs(%arg1 : memref<4xf32>)
func.func @in_loop(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  }
  return
}
