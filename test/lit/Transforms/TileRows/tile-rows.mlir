// nxc-tile-rows: an element-wise nest that reads per-row reductions of its
// own input (layer norm) runs one row at a time, with its producers (fills,
// the row reductions, the element-wise nests between) fused into the row
// loop; slices of empty tensors become per-row temporaries. Short rows and
// nests without a row reduction are left alone.
// (Followed by canonicalize and cse, as in the pipeline: tiling leaves
// duplicate slices.)
// RUN: nxc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(nxc-tile-rows),canonicalize,cse)' | FileCheck %s

// CHECK-LABEL: func.func @layernorm_layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<8x512xf32>)
// CHECK-NOT: tensor.empty() : tensor<8xf32>
// CHECK: %[[R:.*]] = scf.for %[[I:.*]] = %c0 to %c8 step %c1 iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<8x512xf32>)
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [1, 512] [1, 1] : tensor<8x512xf32> to tensor<1x512xf32>
// CHECK: tensor.empty() : tensor<1xf32>
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[ROW]] : tensor<1x512xf32>)
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[ROW]], %{{.*}} : tensor<1x512xf32>, tensor<1x1xf32>)
// CHECK: math.rsqrt
// CHECK: %[[OUT:.*]] = tensor.extract_slice %[[ACC]][%[[I]], 0] [1, 512] [1, 1]
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[ROW]], %{{.*}}, %{{.*}} : tensor<1x512xf32>, tensor<1x1xf32>, tensor<1x1xf32>) outs(%[[OUT]] : tensor<1x512xf32>)
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[Y]] into %[[ACC]][%[[I]], 0] [1, 512] [1, 1]
// CHECK: scf.yield %[[INS]]
// The row loop's iterations are independent (nxc-outline-parallel-loops):
// CHECK-NEXT: } {nxc.parallel}
// CHECK: return %[[R]]
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
func.func @layernorm_layer_norm(%arg0: tensor<8x512xf32>) -> tensor<8x512xf32> {
  %cst = arith.constant 9.99999974E-6 : f32
  %cst_0 = arith.constant 5.120000e+02 : f32
  %cst_1 = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.fill ins(%cst_1 : f32) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x512xf32>) outs(%1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.addf %out, %in fastmath<reassoc,contract> : f32
    linalg.yield %9 : f32
  } -> tensor<8xf32>
  %expanded = tensor.expand_shape %2 [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
  %3 = tensor.empty() : tensor<8x1xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded : tensor<8x1xf32>) outs(%3 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %cst_0 : f32
    linalg.yield %9 : f32
  } -> tensor<8x1xf32>
  %5 = tensor.empty() : tensor<8x512xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map2, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %4 : tensor<8x512xf32>, tensor<8x1xf32>) outs(%1 : tensor<8xf32>) {
  ^bb0(%in: f32, %in_3: f32, %out: f32):
    %9 = arith.subf %in, %in_3 : f32
    %10 = arith.mulf %9, %9 : f32
    %11 = arith.addf %out, %10 fastmath<reassoc,contract> : f32
    linalg.yield %11 : f32
  } -> tensor<8xf32>
  %expanded_2 = tensor.expand_shape %6 [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
  %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_2 : tensor<8x1xf32>) outs(%3 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %cst_0 : f32
    %10 = arith.addf %9, %cst : f32
    %11 = math.rsqrt %10 : f32
    linalg.yield %11 : f32
  } -> tensor<8x1xf32>
  %8 = linalg.generic {indexing_maps = [#map, #map2, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %4, %7 : tensor<8x512xf32>, tensor<8x1xf32>, tensor<8x1xf32>) outs(%5 : tensor<8x512xf32>) {
  ^bb0(%in: f32, %in_3: f32, %in_4: f32, %out: f32):
    %9 = arith.subf %in, %in_3 : f32
    %10 = arith.mulf %9, %in_4 : f32
    linalg.yield %10 : f32
  } -> tensor<8x512xf32>
  return %8 : tensor<8x512xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d0, 0)>

// Rows of 16 elements: not worth a loop of their own.
// CHECK-LABEL: func.func @short_rows
// CHECK-NOT: scf.for
// CHECK: return
func.func @short_rows(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%a: f32, %s: f32):
    %t = arith.addf %s, %a : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %col = tensor.expand_shape %sum [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
  %o = tensor.empty() : tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %col : tensor<8x16xf32>, tensor<8x1xf32>) outs(%o : tensor<8x16xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %t = arith.divf %a, %s : f32
    linalg.yield %t : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// No row reduction: an element-wise nest alone stays one loop nest.
// CHECK-LABEL: func.func @no_reduction
// CHECK-NOT: scf.for
// CHECK: return
func.func @no_reduction(%x: tensor<8x512xf32>) -> tensor<8x512xf32> {
  %o = tensor.empty() : tensor<8x512xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x512xf32>) outs(%o : tensor<8x512xf32>) {
  ^bb0(%a: f32, %out: f32):
    %t = arith.mulf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<8x512xf32>
  return %r : tensor<8x512xf32>
}
