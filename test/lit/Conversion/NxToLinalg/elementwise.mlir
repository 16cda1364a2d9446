// Element-wise nx ops become parallel linalg.generic ops on signless types;
// the nx signedness picks the arith op. No nx op is left.
// RUN: nxc-opt %s -nxc-lower-nx-to-linalg | FileCheck %s --implicit-check-not=nx.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @arith
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[U:.*]]: tensor<4xi32>, %[[V:.*]]: tensor<4xi32>, %[[S:.*]]: tensor<4xi32>, %[[T:.*]]: tensor<4xi32>)
// CHECK-SAME: -> (tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi8>, tensor<4xf32>, tensor<4xf32>)
func.func @arith(%a: tensor<4xf32>, %b: tensor<4xf32>, %u: tensor<4xui32>, %v: tensor<4xui32>, %s: tensor<4xsi32>, %t: tensor<4xsi32>)
    -> (tensor<4xf32>, tensor<4xui32>, tensor<4xsi32>, tensor<4xui8>, tensor<4xf32>, tensor<4xf32>) {
  // Element-wise float ops are exact IEEE operations: no fast-math flags.
  // CHECK: %[[E0:.*]] = tensor.empty() : tensor<4xf32>
  // CHECK: %[[ADD:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel"]}
  // CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
  // CHECK: arith.addf %{{.*}}, %{{.*}} : f32
  // CHECK-NEXT: linalg.yield
  %0 = nx.add %a, %b : tensor<4xf32> -> tensor<4xf32>
  // Integer division by zero gives -1, as XLA defines it.
  // CHECK: %[[UQ:.*]] = linalg.generic {{.*}} ins(%[[U]], %[[V]] : tensor<4xi32>, tensor<4xi32>)
  // CHECK: %[[Z:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32 : i32
  // CHECK: arith.divui
  // CHECK: arith.select %[[Z]], %c-1_i32
  %1 = nx.quotient %u, %v : tensor<4xui32> -> tensor<4xui32>
  // CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[T]] : tensor<4xi32>, tensor<4xi32>)
  // CHECK: arith.divsi
  %2 = nx.quotient %s, %t : tensor<4xsi32> -> tensor<4xsi32>
  // Comparisons give u8 0 or 1.
  // CHECK: %[[LT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xi8>)
  // CHECK: %[[C:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i32
  // CHECK-NEXT: %[[C8:.*]] = arith.extui %[[C]] : i1 to i8
  // CHECK-NEXT: linalg.yield %[[C8]] : i8
  %3 = nx.less %s, %t : tensor<4xsi32> -> tensor<4xui8>
  // CHECK: %[[UF:.*]] = linalg.generic {{.*}} ins(%[[U]] : tensor<4xi32>)
  // CHECK: arith.uitofp %{{.*}} : i32 to f32
  %4 = nx.as_type %u : tensor<4xui32> -> tensor<4xf32>
  // CHECK: %[[SF:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<4xi32>)
  // CHECK: arith.sitofp %{{.*}} : i32 to f32
  %5 = nx.as_type %s : tensor<4xsi32> -> tensor<4xf32>
  // CHECK: return %[[ADD]], %[[UQ]], %[[SQ]], %[[LT]], %[[UF]], %[[SF]]
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xui32>, tensor<4xsi32>, tensor<4xui8>, tensor<4xf32>, tensor<4xf32>
}

// A float-to-integer conversion saturates and maps NaN to 0, as Nx does.
// CHECK-LABEL: func.func @to_int
// CHECK: linalg.generic
// CHECK-DAG: arith.fptosi %{{.*}} : f32 to i8
// CHECK-DAG: arith.cmpf oge
// CHECK-DAG: arith.cmpf olt
// CHECK-DAG: %[[NAN:.*]] = arith.cmpf uno
// CHECK: arith.select %{{.*}}, %c127_i8
// CHECK: arith.select %{{.*}}, %c-128_i8
// CHECK: arith.select %[[NAN]], %c0_i8
func.func @to_int(%x: tensor<4xf32>) -> tensor<4xsi8> {
  %0 = nx.as_type %x : tensor<4xf32> -> tensor<4xsi8>
  return %0 : tensor<4xsi8>
}
