// nxc-block-contractions: a dot in i, k, j order with wide output rows is
// tiled into blocks of up to 6 rows by 16 columns (8 for f64), and each block
// runs its contraction outermost (k, i, j). A dot that runs the contraction
// innermost (i, j, k: dot products of rows) is tiled into blocks of up to 4
// columns and 8 accumulators, also run k, i, j. A rhs panel larger than half
// an L1 cache is cut into chunks of k. Dots whose columns do not divide into
// blocks are left alone.
// RUN: nxc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(nxc-block-contractions),canonicalize,cse)' | FileCheck %s

// 30 rows: blocks of 6 rows (the largest divisor up to 6) by 16 columns. The
// rhs panel of a block (784 x 16 floats, 49 KiB) is larger than half an L1
// cache: k runs in chunks of 196 (12.25 KiB), the tiles columns, chunks, rows.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @mlp_layer
// CHECK-SAME: (%[[X:.*]]: tensor<30x784xf32>, %[[W:.*]]: tensor<784x128xf32>)
// CHECK: scf.for %[[J:.*]] = %c0 to %c128 step %c16
// CHECK: scf.for %[[K:.*]] = %c0 to %c784 step %c196
// CHECK: scf.for %[[I:.*]] = %c0 to %c30 step %c6
// CHECK-DAG: %[[XS:.*]] = tensor.extract_slice %[[X]][%[[I]], %[[K]]] [6, 196] [1, 1]
// CHECK-DAG: %[[WS:.*]] = tensor.extract_slice %[[W]][%[[K]], %[[J]]] [196, 16] [1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[O]]], iterator_types = ["reduction", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[XS]], %[[WS]] : tensor<6x196xf32>, tensor<196x16xf32>) outs(%{{.*}} : tensor<6x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.insert_slice {{.*}} [6, 16] [1, 1] : tensor<6x16xf32> into tensor<30x128xf32>
// The row and column loops run over parallel dimensions
// (nxc-outline-parallel-loops), the chunk loop over the contraction:
// CHECK: } {nxc.parallel}
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NOT: nxc.parallel
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } {nxc.parallel}
#lhs = affine_map<(d0, d1, d2) -> (d0, d1)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @mlp_layer(%x: tensor<30x784xf32>, %w: tensor<784x128xf32>) -> tensor<30x128xf32> {
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

// A panel that fits (256 x 16 floats, 16 KiB): the contraction stays whole,
// the tiles rows then columns.
// CHECK-LABEL: func.func @short_k
// CHECK: scf.for %[[I:.*]] = %c0 to %c30 step %c6
// CHECK: scf.for %[[J:.*]] = %c0 to %c128 step %c16
// CHECK: linalg.generic
// CHECK-SAME: tensor<6x256xf32>, tensor<256x16xf32>
// CHECK: } {nxc.parallel}
// CHECK: } {nxc.parallel}
#lhs2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#rhs2 = affine_map<(d0, d1, d2) -> (d1, d2)>
#out2 = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @short_k(%x: tensor<30x256xf32>, %w: tensor<256x128xf32>) -> tensor<30x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<30x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<30x128xf32>) -> tensor<30x128xf32>
  %r = linalg.generic {indexing_maps = [#lhs2, #rhs2, #out2], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<30x256xf32>, tensor<256x128xf32>) outs(%acc : tensor<30x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b fastmath<reassoc,contract> : f32
    %s = arith.addf %o, %m fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  } -> tensor<30x128xf32>
  return %r : tensor<30x128xf32>
}

// -----

// 10 output columns: left alone.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
#lhs = affine_map<(d0, d1, d2) -> (d0, d1)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @narrow(%x: tensor<30x128xf32>, %w: tensor<128x10xf32>, %acc: tensor<30x10xf32>) -> tensor<30x10xf32> {
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<30x128xf32>, tensor<128x10xf32>) outs(%acc : tensor<30x10xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<30x10xf32>
  return %r : tensor<30x10xf32>
}

// -----

// The contraction innermost (dot products of rows): blocks of 2 rows by 4
// columns (8 accumulators), k outermost; each step loads 2 + 4 vectors for
// 8 multiply-adds.
// CHECK-LABEL: func.func @dot_products
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c2
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c4
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2x784xf32>, tensor<4x784xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: } {nxc.parallel}
// CHECK: } {nxc.parallel}
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @dot_products(%x: tensor<64x784xf32>, %w: tensor<16x784xf32>, %acc: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<64x784xf32>, tensor<16x784xf32>) outs(%acc : tensor<64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x16xf32>
  return %r : tensor<64x16xf32>
}

// -----

// Two rows take wider blocks: 2 rows by 32 columns (8 accumulator vectors;
// 48 does not divide 128 and 64 would be 16 vectors); the one block of rows
// needs no loop.
// CHECK-LABEL: func.func @two_rows
// CHECK: scf.for %{{.*}} = %c0 to %c128 step %c32
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]
// CHECK-SAME: outs(%{{.*}} : tensor<2x32xf32>)
#lhs = affine_map<(d0, d1, d2) -> (d0, d1)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @two_rows(%x: tensor<2x64xf32>, %w: tensor<64x128xf32>, %acc: tensor<2x128xf32>) -> tensor<2x128xf32> {
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<2x64xf32>, tensor<64x128xf32>) outs(%acc : tensor<2x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x128xf32>
  return %r : tensor<2x128xf32>
}

// -----

// One output row (a vector-matrix product) already streams the rhs once: left alone.
// CHECK-LABEL: func.func @one_row
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
#lhs = affine_map<(d0, d1, d2) -> (d0, d1)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @one_row(%x: tensor<1x784xf32>, %w: tensor<784x128xf32>, %acc: tensor<1x128xf32>) -> tensor<1x128xf32> {
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<1x784xf32>, tensor<784x128xf32>) outs(%acc : tensor<1x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x128xf32>
  return %r : tensor<1x128xf32>
}
