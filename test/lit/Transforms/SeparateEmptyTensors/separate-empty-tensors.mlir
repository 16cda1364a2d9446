// nxc-separate-empty-tensors: a tensor.empty with more than 8 uses gives
// each use an empty tensor of its own, made right before it; one with up to
// 8 uses stays shared.
// RUN: nxc-opt %s -pass-pipeline='builtin.module(func.func(nxc-separate-empty-tensors))' | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// Nine element-wise ops write into one empty tensor: each gets its own.
// CHECK-LABEL: func.func @nine_uses
// CHECK-COUNT-9: tensor.empty() : tensor<16xf32>
// CHECK-NOT: tensor.empty
// CHECK: return
func.func @nine_uses(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %v0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.sin %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %v1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v0 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.sin %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %v2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v1 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.sin %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %v3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v2 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.sin %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %v4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v3 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.sin %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %v5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v4 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.sin %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %v6 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v5 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.sin %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %v7 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v6 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.sin %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %v8 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v7 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.sin %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  return %v8 : tensor<16xf32>
}

// Two uses: left shared.
// CHECK-LABEL: func.func @two_uses
// CHECK: %[[E:.*]] = tensor.empty() : tensor<16xf32>
// CHECK-NOT: tensor.empty
// CHECK: outs(%[[E]] : tensor<16xf32>)
// CHECK: outs(%[[E]] : tensor<16xf32>)
func.func @two_uses(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %v0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.sin %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %v1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v0 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = math.sin %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  return %v1 : tensor<16xf32>
}
