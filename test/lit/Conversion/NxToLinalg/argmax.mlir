// argmax is one reduction with two accumulators (value, index): NaN counts as
// the largest value, and ties keep the lowest index unless tie_break is 1.
// RUN: nxc-opt %s -nxc-lower-nx-to-linalg | FileCheck %s --implicit-check-not=nx.

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @argmax_low
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>) -> tensor<2xi32>
// CHECK: %[[VALS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK: %[[IDXS:.*]] = linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<2xi32>)
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<2x3xf32>) outs(%[[VALS]], %[[IDXS]] : tensor<2xf32>, tensor<2xi32>)
// CHECK: ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32, %[[ACCI:.*]]: i32):
// CHECK: %[[VNAN:.*]] = arith.cmpf uno, %[[V]], %[[V]] : f32
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[ACC]] : f32
// CHECK: %[[BETTER:.*]] = arith.ori %[[GT]], %{{.*}} : i1
// CHECK: %[[K:.*]] = linalg.index 1 : index
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %{{.*}} : index
// CHECK: %[[TAKE:.*]] = arith.ori %[[BETTER]], %[[FIRST]] : i1
// CHECK: %[[KI:.*]] = arith.index_cast %[[K]] : index to i32
// CHECK: %[[NV:.*]] = arith.select %[[TAKE]], %[[V]], %[[ACC]] : f32
// CHECK: %[[NI:.*]] = arith.select %[[TAKE]], %[[KI]], %[[ACCI]] : i32
// CHECK: linalg.yield %[[NV]], %[[NI]] : f32, i32
// CHECK: return %[[R]]#1 : tensor<2xi32>
func.func @argmax_low(%x: tensor<2x3xf32>) -> tensor<2xsi32> {
  %0 = "nx.argmax"(%x) <{axes = array<i64: 1>, tie_break = array<i64: 0>}> : (tensor<2x3xf32>) -> tensor<2xsi32>
  return %0 : tensor<2xsi32>
}

// Signed integers compare with sgt from INT_MIN; tie_break = 1 (high): an
// equal value also moves the index.
// CHECK-LABEL: func.func @argmax_high
// CHECK: %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK: linalg.fill ins(%[[MIN]] : i32)
// CHECK: ^bb0(%[[V:.*]]: i32, %[[ACC:.*]]: i32, %{{.*}}: i32):
// CHECK: %[[GT:.*]] = arith.cmpi sgt, %[[V]], %[[ACC]] : i32
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[V]], %[[ACC]] : i32
// CHECK: %[[TAKE0:.*]] = arith.ori %[[GT]], %{{.*}} : i1
// CHECK: %[[TAKE:.*]] = arith.ori %[[TAKE0]], %[[EQ]] : i1
// CHECK: arith.select %[[TAKE]], %[[V]], %[[ACC]] : i32
func.func @argmax_high(%x: tensor<5xsi32>) -> tensor<si32> {
  %0 = "nx.argmax"(%x) <{axes = array<i64: 0>, tie_break = array<i64: 1>}> : (tensor<5xsi32>) -> tensor<si32>
  return %0 : tensor<si32>
}
