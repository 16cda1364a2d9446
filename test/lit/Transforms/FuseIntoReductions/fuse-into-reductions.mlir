// nxc-fuse-into-reductions: a stored element-wise value is computed inside
// the reduction that reads it, which writes it out as a second result; its
// other users read that result. Blocked sums read it through an
// expand_shape: the producer's inputs are expanded the same way. A value
// only the reduction reads is not stored.
// RUN: nxc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(nxc-fuse-into-reductions),canonicalize,cse)' | FileCheck %s

// Softmax of 1,000 elements: exp(x - max) stored, summed, divided.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SC:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1000xf32>, %[[M:[^:]*]]: tensor<f32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1000xf32>
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: %[[G:.*]]:2 = linalg.generic {indexing_maps = [#[[ID]], #[[SC]], #[[ID]], #[[SC]]], iterator_types = ["reduction"]}
// CHECK-SAME: ins(%[[X]], %[[M]] : tensor<1000xf32>, tensor<f32>) outs(%[[E]], %[[Z]] : tensor<1000xf32>, tensor<f32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[MAX:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK: %[[D:.*]] = arith.subf %[[IN]], %[[MAX]]
// CHECK: %[[V:.*]] = math.exp %[[D]]
// CHECK: %[[S:.*]] = arith.addf %[[ACC]], %[[V]]
// CHECK: linalg.yield %[[V]], %[[S]] : f32, f32
// CHECK: linalg.generic {{.*}} ins(%[[G]]#0, %[[G]]#1 : tensor<1000xf32>, tensor<f32>)
// CHECK: arith.divf
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
func.func @softmax(%x: tensor<1000xf32>, %m: tensor<f32>) -> tensor<1000xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1000xf32>
  %exp = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel"]}
      ins(%x, %m : tensor<1000xf32>, tensor<f32>) outs(%e : tensor<1000xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<1000xf32>
  %s0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction"]}
      ins(%exp : tensor<1000xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %y = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel"]}
      ins(%exp, %sum : tensor<1000xf32>, tensor<f32>) outs(%e : tensor<1000xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<1000xf32>
  return %y : tensor<1000xf32>
}

// -----

// A blocked sum reads the value as [250, 4000] through an expand_shape: the
// fused op runs over [250, 4000], reads the input expanded the same way and
// writes the value at the linear index d0 * 4000 + d1, into the producer's
// own init, which the division then reads.
// CHECK-DAG: #[[FLAT:.*]] = affine_map<(d0, d1) -> (d0 * 4000 + d1)>
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[SC2:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @blocked
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1000000xf32>, %[[M:[^:]*]]: tensor<f32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1000000xf32>
// CHECK: %[[XE:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1]] output_shape [250, 4000]
// CHECK: %[[G:.*]]:2 = linalg.generic {indexing_maps = [#[[ID2]], #[[SC2]], #[[FLAT]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[XE]], %[[M]] : tensor<250x4000xf32>, tensor<f32>) outs(%[[E]], %{{.*}} : tensor<1000000xf32>, tensor<250xf32>)
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-NOT: collapse_shape
// CHECK: linalg.generic {{.*}} ins(%[[G]]#0, %{{.*}} : tensor<1000000xf32>, tensor<f32>)
// CHECK: arith.divf
#id1 = affine_map<(d0) -> (d0)>
#sc1 = affine_map<(d0) -> ()>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @blocked(%x: tensor<1000000xf32>, %m: tensor<f32>, %total: tensor<f32>) -> tensor<1000000xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1000000xf32>
  %exp = linalg.generic {indexing_maps = [#id1, #sc1, #id1], iterator_types = ["parallel"]}
      ins(%x, %m : tensor<1000000xf32>, tensor<f32>) outs(%e : tensor<1000000xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<1000000xf32>
  %blocks = tensor.expand_shape %exp [[0, 1]] output_shape [250, 4000] : tensor<1000000xf32> into tensor<250x4000xf32>
  %b0 = tensor.empty() : tensor<250xf32>
  %z = linalg.fill ins(%zero : f32) outs(%b0 : tensor<250xf32>) -> tensor<250xf32>
  %sums = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%blocks : tensor<250x4000xf32>) outs(%z : tensor<250xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<250xf32>
  %y = linalg.generic {indexing_maps = [#id1, #sc1, #id1], iterator_types = ["parallel"]}
      ins(%exp, %total : tensor<1000000xf32>, tensor<f32>) outs(%e : tensor<1000000xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<1000000xf32>
  return %y : tensor<1000000xf32>
}

// -----

// logsumexp's blocked sum is the only reader of exp(x - max): the fused op
// has one result, the block sums, and the value is not stored.
// CHECK-LABEL: func.func @only_summed
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1000000xf32>, %[[M:[^:]*]]: tensor<f32>
// CHECK: %[[XE:.*]] = tensor.expand_shape %[[X]]
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[XE]], %[[M]] : tensor<250x4000xf32>, tensor<f32>) outs(%{{.*}} : tensor<250xf32>)
// CHECK: %[[V:.*]] = math.exp
// CHECK: %[[A:.*]] = arith.addf %{{.*}}, %[[V]]
// CHECK: linalg.yield %[[A]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[S]] : tensor<250xf32>
#id4 = affine_map<(d0) -> (d0)>
#sc4 = affine_map<(d0) -> ()>
#id5 = affine_map<(d0, d1) -> (d0, d1)>
#row5 = affine_map<(d0, d1) -> (d0)>
func.func @only_summed(%x: tensor<1000000xf32>, %m: tensor<f32>) -> tensor<250xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1000000xf32>
  %exp = linalg.generic {indexing_maps = [#id4, #sc4, #id4], iterator_types = ["parallel"]}
      ins(%x, %m : tensor<1000000xf32>, tensor<f32>) outs(%e : tensor<1000000xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<1000000xf32>
  %blocks = tensor.expand_shape %exp [[0, 1]] output_shape [250, 4000] : tensor<1000000xf32> into tensor<250x4000xf32>
  %b0 = tensor.empty() : tensor<250xf32>
  %z = linalg.fill ins(%zero : f32) outs(%b0 : tensor<250xf32>) -> tensor<250xf32>
  %sums = linalg.generic {indexing_maps = [#id5, #row5], iterator_types = ["parallel", "reduction"]}
      ins(%blocks : tensor<250x4000xf32>) outs(%z : tensor<250xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<250xf32>
  return %sums : tensor<250xf32>
}

// -----

// A blocked sum and a blocked max read the same expanded value: exp is
// computed in the sum (the first) and stored; the max reads the stored value
// expanded again after the fused op.
// CHECK-LABEL: func.func @sum_and_max
// CHECK: %[[G:.*]]:2 = linalg.generic
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: %[[E:.*]] = tensor.expand_shape %[[G]]#0 {{\[\[}}0, 1]] output_shape [250, 4000]
// CHECK: linalg.generic {{.*}} ins(%[[E]] : tensor<250x4000xf32>)
// CHECK: arith.maximumf
#id7 = affine_map<(d0) -> (d0)>
#id8 = affine_map<(d0, d1) -> (d0, d1)>
#row8 = affine_map<(d0, d1) -> (d0)>
func.func @sum_and_max(%x: tensor<1000000xf32>) -> (tensor<250xf32>, tensor<250xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1000000xf32>
  %exp = linalg.generic {indexing_maps = [#id7, #id7], iterator_types = ["parallel"]}
      ins(%x : tensor<1000000xf32>) outs(%e : tensor<1000000xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<1000000xf32>
  %blocks = tensor.expand_shape %exp [[0, 1]] output_shape [250, 4000] : tensor<1000000xf32> into tensor<250x4000xf32>
  %b0 = tensor.empty() : tensor<250xf32>
  %z = linalg.fill ins(%zero : f32) outs(%b0 : tensor<250xf32>) -> tensor<250xf32>
  %sums = linalg.generic {indexing_maps = [#id8, #row8], iterator_types = ["parallel", "reduction"]}
      ins(%blocks : tensor<250x4000xf32>) outs(%z : tensor<250xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<250xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%b0 : tensor<250xf32>) -> tensor<250xf32>
  %maxes = linalg.generic {indexing_maps = [#id8, #row8], iterator_types = ["parallel", "reduction"]}
      ins(%blocks : tensor<250x4000xf32>) outs(%m0 : tensor<250xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maximumf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<250xf32>
  return %sums, %maxes : tensor<250xf32>, tensor<250xf32>
}

// -----

// A sum of a broadcast scalar: the stored value is the only operand with the
// loops' shape, so it stays (the fused op's loops take their bounds from it).
// CHECK-LABEL: func.func @scalar_only
// CHECK: %[[G:.*]]:2 = linalg.generic
// CHECK: math.atan
// CHECK: return %[[G]]#1
#sc6 = affine_map<(d0) -> ()>
#id6 = affine_map<(d0) -> (d0)>
func.func @scalar_only(%g: tensor<f32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %v = linalg.generic {indexing_maps = [#sc6, #id6], iterator_types = ["parallel"]}
      ins(%g : tensor<f32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.atan %a : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %s0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id6, #sc6], iterator_types = ["reduction"]}
      ins(%v : tensor<4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %sum : tensor<f32>
}

// -----

// A producer that reads its input through a broadcast, and a value used
// before the reduction: both left alone.
// CHECK-LABEL: func.func @broadcast_input
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @used_before
// CHECK-COUNT-3: linalg.generic
#bc = affine_map<(d0, d1) -> (d1)>
#id3 = affine_map<(d0, d1) -> (d0, d1)>
#r3 = affine_map<(d0, d1) -> (d0)>
func.func @broadcast_input(%x: tensor<64xf32>) -> (tensor<8x64xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %exp = linalg.generic {indexing_maps = [#bc, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  %r0 = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%r0 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #r3], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<8x64xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %exp, %sum : tensor<8x64xf32>, tensor<8xf32>
}
func.func @used_before(%x: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %exp = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  %twice = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%exp : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  %r0 = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%r0 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #r3], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<8x64xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %twice, %sum : tensor<8x64xf32>, tensor<8xf32>
}
