// nxc-block-contractions with AVX-512 blocks (24 accumulator vectors): output
// columns that no block divides are split off (1000 = 960 + 32 + 8: blocks of
// 64 and of 32 columns, and 8 left to LLVM), rows by their divisor 5; the rhs
// panel each chunk of k reads, shared by 200 blocks of rows, is copied once
// per chunk to a contiguous tensor (its rows are a whole rhs row apart in
// place, 4,000 bytes: up to 6 of their lines in one L1 set) and the blocks
// read the copy.
// RUN: nxc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(nxc-block-contractions{vector-bits=512}),canonicalize,cse)' | FileCheck %s

// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%[[X:.*]]: tensor<1000x256xf32>, %[[W:.*]]: tensor<256x1000xf32>)
// CHECK: %[[W960:.*]] = tensor.extract_slice %[[W]][0, 0] [256, 960] [1, 1]
// CHECK: scf.for %[[J:.*]] = %c0 to %c960 step %c64
// CHECK: scf.for %[[K:.*]] = %c0 to %c256 step %c64
// CHECK: %[[PANEL:.*]] = tensor.extract_slice %[[W960]][%[[K]], %[[J]]] [64, 64] [1, 1]
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<64x64xf32>
// CHECK: %[[PACKED:.*]] = linalg.copy ins(%[[PANEL]] : tensor<64x64xf32>) outs(%[[EMPTY]] : tensor<64x64xf32>)
// CHECK: scf.for %[[I:.*]] = %c0 to %c1000 step %c5
// CHECK: %[[XS:.*]] = tensor.extract_slice %[[X]][%[[I]], %[[K]]] [5, 64] [1, 1]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[XS]], %[[PACKED]] : tensor<5x64xf32>, tensor<64x64xf32>)
// CHECK: tensor.extract_slice %[[W]][0, 960] [256, 40] [1, 1]
// CHECK: linalg.copy ins({{.*}} : tensor<128x32xf32>)
// CHECK: scf.for {{.*}} = %c0 to %c1000 step %c5
// CHECK: linalg.generic
// CHECK-SAME: tensor<5x128xf32>, tensor<128x32xf32>
// The last 8 columns: one dot, not blocked.
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X]], %{{.*}} : tensor<1000x256xf32>, tensor<256x8xf32>)
#lhs = affine_map<(d0, d1, d2) -> (d0, d1)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @gemm(%x: tensor<1000x256xf32>, %w: tensor<256x1000xf32>) -> tensor<1000x1000xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1000x1000xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<1000x256xf32>, tensor<256x1000xf32>) outs(%acc : tensor<1000x1000xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b fastmath<reassoc,contract> : f32
    %s = arith.addf %o, %m fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  } -> tensor<1000x1000xf32>
  return %r : tensor<1000x1000xf32>
}

// -----

#lhs = affine_map<(d0, d1, d2) -> (d0, d1)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>

// W9's product (a 3x3 convolution of 64 channels over 56x56 as im2col): 16
// blocks of rows share each panel, but its rows, 12,544 bytes apart, fall
// 4 L1 sets further each, at most 4 lines in a set: the blocks read it in
// place (the copy cost 5% of the convolution).
// CHECK-LABEL: func.func @spread_rows
// CHECK-NOT: linalg.copy
// CHECK: scf.for %{{.*}} = %c0 to %c3136 step %c64
// CHECK-NOT: linalg.copy
// CHECK: scf.for %{{.*}} = %c0 to %c576 step %c64
// CHECK-NOT: linalg.copy
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c4
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @spread_rows(%x: tensor<64x576xf32>, %w: tensor<576x3136xf32>) -> tensor<64x3136xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x3136xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x3136xf32>) -> tensor<64x3136xf32>
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<64x576xf32>, tensor<576x3136xf32>) outs(%acc : tensor<64x3136xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b fastmath<reassoc,contract> : f32
    %s = arith.addf %o, %m fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  } -> tensor<64x3136xf32>
  return %r : tensor<64x3136xf32>
}

// -----

#lhs = affine_map<(d0, d1, d2) -> (d0, d1)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>

// Few blocks of rows (the MLP's 30 rows: 5 blocks) read the panel in place:
// copying it would cost about what the blocks save.
// CHECK-LABEL: func.func @few_rows
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @few_rows(%x: tensor<30x784xf32>, %w: tensor<784x128xf32>) -> tensor<30x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<30x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<30x128xf32>) -> tensor<30x128xf32>
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<30x784xf32>, tensor<784x128xf32>) outs(%acc : tensor<30x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b fastmath<reassoc,contract> : f32
    %s = arith.addf %o, %m fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  } -> tensor<30x128xf32>
  return %r : tensor<30x128xf32>
}

// -----

// The contraction innermost with AVX-512 blocks (W3's [10000,784] x
// [784,10], rhs laid out [10,784]): blocks of 4 rows by 5 columns, 20
// accumulator vectors, so that each lhs row is read twice, not five times.
// CHECK-LABEL: func.func @narrow_dot_products
// CHECK: scf.for %{{.*}} = %c0 to %c10000 step %c4
// CHECK: scf.for %{{.*}} = %c0 to %c10 step %c5
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<4x784xf32>, tensor<5x784xf32>) outs(%{{.*}} : tensor<4x5xf32>)
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @narrow_dot_products(%x: tensor<10000x784xf32>, %w: tensor<10x784xf32>, %acc: tensor<10000x10xf32>) -> tensor<10000x10xf32> {
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<10000x784xf32>, tensor<10x784xf32>) outs(%acc : tensor<10000x10xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<10000x10xf32>
  return %r : tensor<10000x10xf32>
}
