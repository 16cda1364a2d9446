// nx.cond becomes scf.if on `pred != 0`; nx.while becomes scf.while whose
// before region tests the condition scalar and whose body yields fresh
// copies of the next state (loop buffers are reused after bufferization).
// RUN: nxc-opt %s -nxc-lower-nx-to-linalg | FileCheck %s --implicit-check-not=nx.

// CHECK-LABEL: func.func @cond
// CHECK-SAME: (%[[P:.*]]: tensor<i8>, %[[X:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[PV:.*]] = tensor.extract %[[P]][] : tensor<i8>
// CHECK: %[[TRUE:.*]] = arith.cmpi ne, %[[PV]], %c0_i8 : i8
// CHECK: %[[IF:.*]] = scf.if %[[TRUE]] -> (tensor<4xf32>) {
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: scf.yield %[[E]] : tensor<4xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[X]] : tensor<4xf32>
// CHECK-NEXT: }
// CHECK: return %[[IF]]
func.func @cond(%p: tensor<ui8>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nx.cond"(%p) ({
    %e = nx.exp %x : tensor<4xf32> -> tensor<4xf32>
    nx.yield %e : tensor<4xf32>
  }, {
    nx.yield %x : tensor<4xf32>
  }) : (tensor<ui8>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @while
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[I0:.*]] = arith.constant dense<0> : tensor<i32>
// CHECK: %[[W:.*]]:2 = scf.while (%[[I:.*]] = %[[I0]], %[[S:.*]] = %[[X]]) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {
// CHECK: %[[LT:.*]] = linalg.generic
// CHECK: arith.cmpi slt
// CHECK: %[[LV:.*]] = tensor.extract %[[LT]][] : tensor<i8>
// CHECK: %[[C:.*]] = arith.cmpi ne, %[[LV]], %c0_i8 : i8
// CHECK: scf.condition(%[[C]]) %[[I]], %[[S]] : tensor<i32>, tensor<4xf32>
// CHECK: } do {
// CHECK: ^bb0(%{{.*}}: tensor<i32>, %{{.*}}: tensor<4xf32>):
// CHECK: %[[INC:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<i32>)
// CHECK: arith.addi
// CHECK: %[[DBL:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.addf
// CHECK: %[[NI:.*]] = linalg.copy ins(%[[INC]] : tensor<i32>) outs(%{{.*}} : tensor<i32>) -> tensor<i32>
// CHECK: %[[NS:.*]] = linalg.copy ins(%[[DBL]] : tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>) -> tensor<4xf32>
// CHECK: scf.yield %[[NI]], %[[NS]] : tensor<i32>, tensor<4xf32>
// CHECK: return %[[W]]#1 : tensor<4xf32>
func.func @while(%x: tensor<4xf32>) -> tensor<4xf32> {
  %i0 = nx.constant dense<0> : tensor<si32> : tensor<si32>
  %0:2 = "nx.while"(%i0, %x) ({
  ^bb0(%i: tensor<si32>, %s: tensor<4xf32>):
    %n = nx.constant dense<3> : tensor<si32> : tensor<si32>
    %c = nx.less %i, %n : tensor<si32> -> tensor<ui8>
    nx.yield %c : tensor<ui8>
  }, {
  ^bb0(%i: tensor<si32>, %s: tensor<4xf32>):
    %one = nx.constant dense<1> : tensor<si32> : tensor<si32>
    %i1 = nx.add %i, %one : tensor<si32> -> tensor<si32>
    %d = nx.add %s, %s : tensor<4xf32> -> tensor<4xf32>
    nx.yield %i1, %d : tensor<si32>, tensor<4xf32>
  }) : (tensor<si32>, tensor<4xf32>) -> (tensor<si32>, tensor<4xf32>)
  return %0#1 : tensor<4xf32>
}
