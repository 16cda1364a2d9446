// nxc-distinct-results gives every repeated return operand its own copy, so
// that each result becomes its own out-parameter after bufferization.
// RUN: nxc-opt %s -pass-pipeline='builtin.module(func.func(nxc-distinct-results))' | FileCheck %s

// The first use keeps the value; the second and third get fresh copies.
// CHECK-LABEL: func.func @repeated
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<2x3xi32>)
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[C1:.*]] = linalg.copy ins(%[[X]] : tensor<4xf32>) outs(%[[E1]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<2x3xi32>
// CHECK-NEXT: %[[C2:.*]] = linalg.copy ins(%[[Y]] : tensor<2x3xi32>) outs(%[[E2]] : tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: %[[E3:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[C3:.*]] = linalg.copy ins(%[[X]] : tensor<4xf32>) outs(%[[E3]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return %[[X]], %[[C1]], %[[Y]], %[[C2]], %[[C3]]
func.func @repeated(%x: tensor<4xf32>, %y: tensor<2x3xi32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<4xf32>) {
  return %x, %x, %y, %y, %x : tensor<4xf32>, tensor<4xf32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<4xf32>
}

// Distinct results and non-tensor results are left alone.
// CHECK-LABEL: func.func @distinct
// CHECK-NOT: linalg.copy
// CHECK: return %arg0, %arg1, %arg2, %arg2 : tensor<4xf32>, tensor<4xf32>, i32, i32
func.func @distinct(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: i32) -> (tensor<4xf32>, tensor<4xf32>, i32, i32) {
  return %x, %y, %i, %i : tensor<4xf32>, tensor<4xf32>, i32, i32
}
