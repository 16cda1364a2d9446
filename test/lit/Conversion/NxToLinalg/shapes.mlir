// Broadcasts and transposes are copies through a linalg.generic whose input
// map picks the operand's element; reshapes are collapse/expand_shape.
// RUN: nxc-opt %s -nxc-lower-nx-to-linalg | FileCheck %s --implicit-check-not=nx.

// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ONE:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[SWAP:.*]] = affine_map<(d0, d1) -> (d1, d0)>

// Operand dim 0 goes to result axis 1: every row reads the vector.
// CHECK-LABEL: func.func @broadcast_rows
// CHECK-SAME: (%[[V:.*]]: tensor<3xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[B:.*]] = linalg.generic {indexing_maps = [#[[ROWS]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[V]] : tensor<3xf32>) outs(%[[E]] : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: return %[[B]]
func.func @broadcast_rows(%v: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = nx.broadcast %v, axes = [1] : tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// A dimension of size 1 is repeated: its index is the constant 0.
// CHECK-LABEL: func.func @broadcast_size_one
// CHECK: linalg.generic {indexing_maps = [#[[ONE]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}} : tensor<1x3xf32>) outs(%{{.*}} : tensor<2x3xf32>)
func.func @broadcast_size_one(%x: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %0 = nx.broadcast %x, axes = [0, 1] : tensor<1x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// A scalar broadcast reads the rank-0 tensor everywhere.
// CHECK-LABEL: func.func @broadcast_scalar
// CHECK: linalg.generic {indexing_maps = [#[[SCALAR]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}} : tensor<f32>) outs(%{{.*}} : tensor<2x3xf32>)
func.func @broadcast_scalar(%s: tensor<f32>) -> tensor<2x3xf32> {
  %0 = nx.broadcast %s, axes = [] : tensor<f32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Result dim i is operand dim axes[i].
// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[SWAP]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>)
func.func @transpose(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = nx.transpose %x, axes = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// Reshapes go through a rank-1 tensor: collapse, then expand.
// CHECK-LABEL: func.func @reshape
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
func.func @reshape(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = nx.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
