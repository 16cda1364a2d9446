// nxc-block-contractions on W9's convolution on the padded grid (3x3, 64 -> 64
// channels, the input padded to 58x58 and flattened; 3200 of its points): a
// dot whose contraction is three loops (channels, ky, kx). Blocks of 4
// outputs by 80 points (20 AVX-512 accumulators); the panel of all 576
// contracted rows would not fit in L1, so the first contracted loop, the
// channels, is cut into chunks of 4 (4 x 9 rows of 80 f32, 11.5 KiB) and the
// tile loops run points, channel chunks, outputs. The panel's rows are
// input rows 13,456 bytes apart, spread over the L1 sets: read in place.
// RUN: nxc-opt %s -pass-pipeline='builtin.module(func.func(nxc-block-contractions{vector-bits=512}),canonicalize,cse)' | FileCheck %s

// CHECK-LABEL: func.func @conv
// CHECK-NOT: linalg.copy
// CHECK: scf.for %[[P:.*]] = %c0 to %c3200 step %c80
// CHECK: scf.for %[[C:.*]] = %c0 to %c64 step %c4
// CHECK: scf.for %[[O:.*]] = %c0 to %c64 step %c4
// CHECK: tensor.extract_slice %{{.*}}[%[[O]], %[[C]], 0, 0] [4, 4, 3, 3] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, %[[C]], %[[P]]] [1, 4, 198] [1, 1, 1]
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<4x4x3x3xf32>, tensor<1x4x198xf32>) outs(%{{.*}} : tensor<1x4x80xf32>)
// CHECK-NOT: linalg.copy
// CHECK: return
#kernel = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d3, d4)>
#shifted = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d5 + d3 * 58 + d4)>
#out = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5)>
func.func @conv(%k: tensor<64x64x3x3xf32>, %x: tensor<1x64x3364xf32>) -> tensor<1x64x3200xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x3200xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x3200xf32>) -> tensor<1x64x3200xf32>
  %r = linalg.generic {indexing_maps = [#kernel, #shifted, #out],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
      ins(%k, %x : tensor<64x64x3x3xf32>, tensor<1x64x3364xf32>) outs(%acc : tensor<1x64x3200xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b fastmath<reassoc,contract> : f32
    %s = arith.addf %o, %m fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  } -> tensor<1x64x3200xf32>
  return %r : tensor<1x64x3200xf32>
}
