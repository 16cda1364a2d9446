// Every kind of nx op survives a print-parse round trip through nxc-opt: the
// custom assembly of element-wise, shape, reduction and contraction ops, and
// the generic form of slicing, argmax, nx.cond and nx.while.
// RUN: nxc-opt %s | nxc-opt | FileCheck %s
// RUN: nxc-opt %s -mlir-print-op-generic | nxc-opt | FileCheck %s

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<4xf32>, %b: tensor<4xf32>, %p: tensor<4xui8>, %i: tensor<4xsi32>)
    -> (tensor<4xf32>, tensor<4xui8>, tensor<4xf32>) {
  // CHECK: %[[ADD:.*]] = nx.add %arg0, %arg1 : tensor<4xf32> -> tensor<4xf32>
  %0 = nx.add %a, %b : tensor<4xf32> -> tensor<4xf32>
  // CHECK: %[[EXP:.*]] = nx.exp %[[ADD]] : tensor<4xf32> -> tensor<4xf32>
  %1 = nx.exp %0 : tensor<4xf32> -> tensor<4xf32>
  // CHECK: %[[LT:.*]] = nx.less %[[EXP]], %arg1 : tensor<4xf32> -> tensor<4xui8>
  %2 = nx.less %1, %b : tensor<4xf32> -> tensor<4xui8>
  // CHECK: %[[SEL:.*]] = nx.select %arg2, %[[EXP]], %arg1 : tensor<4xui8>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %3 = nx.select %p, %1, %b : tensor<4xui8>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: %[[CONV:.*]] = nx.as_type %arg3 : tensor<4xsi32> -> tensor<4xf32>
  %4 = nx.as_type %i : tensor<4xsi32> -> tensor<4xf32>
  // CHECK: return %[[SEL]], %[[LT]], %[[CONV]]
  return %3, %2, %4 : tensor<4xf32>, tensor<4xui8>, tensor<4xf32>
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x3xf32>, %v: tensor<3xf32>, %r: tensor<1x3xf32>) -> (tensor<3x2xf32>, tensor<6xf32>, tensor<2x3xf32>) {
  // CHECK: nx.constant dense<1.000000e+00> : tensor<f32> : tensor<f32>
  %c = nx.constant dense<1.0> : tensor<f32> : tensor<f32>
  // CHECK: nx.broadcast %arg1, axes = [1] : tensor<3xf32> -> tensor<2x3xf32>
  %0 = nx.broadcast %v, axes = [1] : tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: nx.broadcast %{{.*}}, axes = [] : tensor<f32> -> tensor<2x3xf32>
  %1 = nx.broadcast %c, axes = [] : tensor<f32> -> tensor<2x3xf32>
  // A dimension of size 1 may map to any result dimension.
  // CHECK: nx.broadcast %arg2, axes = [0, 1] : tensor<1x3xf32> -> tensor<2x3xf32>
  %r2 = nx.broadcast %r, axes = [0, 1] : tensor<1x3xf32> -> tensor<2x3xf32>
  %s = nx.add %0, %1 : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = nx.add %s, %r2 : tensor<2x3xf32> -> tensor<2x3xf32>
  // CHECK: nx.transpose %arg0, axes = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %3 = nx.transpose %x, axes = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  // CHECK: nx.reshape %arg0 : tensor<2x3xf32> -> tensor<6xf32>
  %4 = nx.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  return %3, %4, %2 : tensor<3x2xf32>, tensor<6xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> (tensor<2xf32>, tensor<f32>, tensor<2x4xf32>, tensor<2xsi32>) {
  // CHECK: nx.sum %arg0, axes = [1] : tensor<2x3xf32> -> tensor<2xf32>
  %0 = nx.sum %x, axes = [1] : tensor<2x3xf32> -> tensor<2xf32>
  // CHECK: nx.reduce_max %arg0, axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %1 = nx.reduce_max %x, axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  // CHECK: nx.dot %arg0, [1], [], %arg1, [0], [] : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %2 = nx.dot %x, [1], [], %y, [0], [] : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  // CHECK: "nx.argmax"(%arg0) <{axes = array<i64: 1>, tie_break = array<i64: 0>}> : (tensor<2x3xf32>) -> tensor<2xsi32>
  %3 = "nx.argmax"(%x) <{axes = array<i64: 1>, tie_break = array<i64: 0>}> : (tensor<2x3xf32>) -> tensor<2xsi32>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<f32>, tensor<2x4xf32>, tensor<2xsi32>
}

// CHECK-LABEL: func.func @slicing
func.func @slicing(%x: tensor<6xf32>, %y: tensor<3xf32>, %i: tensor<si32>) -> (tensor<2xf32>, tensor<9xf32>) {
  // A start of INT64_MIN takes its value from the next start tensor.
  // A dynamic start prints as its tensor in the list of starts; the generic
  // form (a start of INT64_MIN) reads back as the same op.
  // CHECK: nx.slice %arg0 [%arg2 : tensor<si32>] {lengths = array<i64: 2>, strides = array<i64: 1>} : tensor<6xf32> -> tensor<2xf32>
  %0 = "nx.slice"(%x, %i) <{lengths = array<i64: 2>, start_indices = array<i64: -9223372036854775808>, strides = array<i64: 1>}> : (tensor<6xf32>, tensor<si32>) -> tensor<2xf32>
  // CHECK: nx.slice %arg0 [1] {lengths = array<i64: 2>, strides = array<i64: 1>} : tensor<6xf32> -> tensor<2xf32>
  %s = nx.slice %x [1] {lengths = array<i64: 2>, strides = array<i64: 1>} : tensor<6xf32> -> tensor<2xf32>
  // CHECK: nx.put_slice %arg0, %{{.*}} [%arg2 : tensor<si32>] : tensor<6xf32>, tensor<2xf32> -> tensor<6xf32>
  %p = nx.put_slice %x, %s [%i : tensor<si32>] : tensor<6xf32>, tensor<2xf32> -> tensor<6xf32>
  // CHECK: "nx.concatenate"(%arg0, %arg1) <{axes = array<i64: 0>}> : (tensor<6xf32>, tensor<3xf32>) -> tensor<9xf32>
  %1 = "nx.concatenate"(%x, %y) <{axes = array<i64: 0>}> : (tensor<6xf32>, tensor<3xf32>) -> tensor<9xf32>
  return %0, %1 : tensor<2xf32>, tensor<9xf32>
}

// CHECK-LABEL: func.func @control_flow
func.func @control_flow(%p: tensor<ui8>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[IF:.*]] = "nx.cond"(%arg0) ({
  // CHECK-NEXT: nx.exp %arg1
  // CHECK-NEXT: nx.yield %{{.*}} : tensor<4xf32>
  // CHECK-NEXT: }, {
  // CHECK-NEXT: nx.yield %arg1 : tensor<4xf32>
  // CHECK-NEXT: }) : (tensor<ui8>) -> tensor<4xf32>
  %0 = "nx.cond"(%p) ({
    %e = nx.exp %x : tensor<4xf32> -> tensor<4xf32>
    nx.yield %e : tensor<4xf32>
  }, {
    nx.yield %x : tensor<4xf32>
  }) : (tensor<ui8>) -> tensor<4xf32>
  // CHECK: %[[W:.*]]:2 = "nx.while"(%arg0, %[[IF]]) ({
  // CHECK-NEXT: ^bb0(%[[C0:.*]]: tensor<ui8>, %{{.*}}: tensor<4xf32>):
  // CHECK-NEXT: nx.yield %[[C0]] : tensor<ui8>
  // CHECK-NEXT: }, {
  // CHECK-NEXT: ^bb0(%{{.*}}: tensor<ui8>, %{{.*}}: tensor<4xf32>):
  // CHECK: nx.yield %{{.*}}, %{{.*}} : tensor<ui8>, tensor<4xf32>
  // CHECK-NEXT: }) : (tensor<ui8>, tensor<4xf32>) -> (tensor<ui8>, tensor<4xf32>)
  %1:2 = "nx.while"(%p, %0) ({
  ^bb0(%c: tensor<ui8>, %s: tensor<4xf32>):
    nx.yield %c : tensor<ui8>
  }, {
  ^bb0(%c: tensor<ui8>, %s: tensor<4xf32>):
    %z = nx.constant dense<0> : tensor<ui8> : tensor<ui8>
    %n = nx.add %s, %s : tensor<4xf32> -> tensor<4xf32>
    nx.yield %z, %n : tensor<ui8>, tensor<4xf32>
  }) : (tensor<ui8>, tensor<4xf32>) -> (tensor<ui8>, tensor<4xf32>)
  // CHECK: return %[[W]]#1 : tensor<4xf32>
  return %1#1 : tensor<4xf32>
}
