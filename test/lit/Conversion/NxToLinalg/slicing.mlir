// Slices become tensor.extract_slice; a dynamic start is read from its scalar
// tensor and clamped to [0, dim - length] as Nx clamps it. Concatenation
// inserts each input at its running offset.
// RUN: nxc-opt %s -nxc-lower-nx-to-linalg | FileCheck %s --implicit-check-not=nx.

// CHECK-LABEL: func.func @dynamic_start
// CHECK-SAME: (%[[X:.*]]: tensor<6xf32>, %[[I:.*]]: tensor<i32>) -> tensor<2xf32>
// CHECK: %[[IV:.*]] = tensor.extract %[[I]][] : tensor<i32>
// CHECK: %[[IDX:.*]] = arith.index_cast %[[IV]] : i32 to index
// CHECK-DAG: %[[LO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[HI:.*]] = arith.constant 4 : index
// CHECK: %[[MIN:.*]] = arith.minsi %[[IDX]], %[[HI]] : index
// CHECK: %[[START:.*]] = arith.maxsi %[[LO]], %[[MIN]] : index
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][%[[START]]] [2] [1] : tensor<6xf32> to tensor<2xf32>
// CHECK: return %[[S]]
func.func @dynamic_start(%x: tensor<6xf32>, %i: tensor<si32>) -> tensor<2xf32> {
  %0 = "nx.slice"(%x, %i) <{lengths = array<i64: 2>, start_indices = array<i64: -9223372036854775808>, strides = array<i64: 1>}> : (tensor<6xf32>, tensor<si32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// An unsigned start is never negative: zero-extended, clamped from above only.
// CHECK-LABEL: func.func @unsigned_start
// CHECK: %[[UV:.*]] = tensor.extract %{{.*}}[] : tensor<i8>
// CHECK: %[[UIDX:.*]] = arith.index_castui %[[UV]] : i8 to index
// CHECK: %[[USTART:.*]] = arith.minui %[[UIDX]], %{{.*}} : index
// CHECK-NOT: arith.maxsi
// CHECK: tensor.extract_slice %{{.*}}[%[[USTART]]] [2] [1]
func.func @unsigned_start(%x: tensor<6xf32>, %u: tensor<ui8>) -> tensor<2xf32> {
  %0 = "nx.slice"(%x, %u) <{lengths = array<i64: 2>, start_indices = array<i64: -9223372036854775808>, strides = array<i64: 1>}> : (tensor<6xf32>, tensor<ui8>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// Static starts and strides: result dim i is ceil(lengths[i] / strides[i]).
// CHECK-LABEL: func.func @static_strided
// CHECK: tensor.extract_slice %{{.*}}[1, 0] [2, 2] [1, 2] : tensor<4x5xf32> to tensor<2x2xf32>
func.func @static_strided(%m: tensor<4x5xf32>) -> tensor<2x2xf32> {
  %0 = "nx.slice"(%m) <{lengths = array<i64: 2, 4>, start_indices = array<i64: 1, 0>, strides = array<i64: 1, 2>}> : (tensor<4x5xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @concatenate
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK: %[[FIRST:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x4xf32>
// CHECK: %[[BOTH:.*]] = tensor.insert_slice %[[B]] into %[[FIRST]][0, 3] [2, 1] [1, 1] : tensor<2x1xf32> into tensor<2x4xf32>
// CHECK: return %[[BOTH]]
func.func @concatenate(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %0 = "nx.concatenate"(%a, %b) <{axes = array<i64: 1>}> : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
