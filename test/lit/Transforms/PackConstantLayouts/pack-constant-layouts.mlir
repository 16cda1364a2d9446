// nxc-pack-constant-layouts: the layout copy of a constant operand (weights
// baked in) becomes a constant in the new layout; layout copies of arguments
// and other ops on constants stay.
// RUN: nxc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(nxc-pack-constant-layouts))' | FileCheck %s

// CHECK-LABEL: func.func @baked
// CHECK: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[W]]
#t = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @baked() -> tensor<2x3xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %t = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) attrs = {nxc.keep_layout} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @argument
// CHECK: linalg.generic
// CHECK-LABEL: func.func @unmarked
// CHECK: linalg.generic
#t2 = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @argument(%w: tensor<3x2xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %t = linalg.generic {indexing_maps = [#t2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) attrs = {nxc.keep_layout} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}
func.func @unmarked() -> tensor<2x3xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %t = linalg.generic {indexing_maps = [#t2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}
