// nxc-outline-parallel-loops: a large loop marked nxc.parallel, or a large
// structured op with a parallel loop over its outputs, moves into a private
// function over [lo, hi) of its iterations, called over all of them.
// Temporaries only the loop uses are cloned into it (one per thread);
// constants too (canonicalize follows, as in the pipeline: what is left
// behind is dead). Small work, a buffer the loop shares with the rest of the
// function, and threads=1 leave the code alone.
// RUN: nxc-opt %s -split-input-file -nxc-outline-parallel-loops='threads=4 min-work=1000' -canonicalize | FileCheck %s
// RUN: nxc-opt %s -split-input-file -nxc-outline-parallel-loops='threads=1 min-work=1000' -canonicalize | FileCheck %s --check-prefix=ONE

// A row loop (nxc-tile-rows) with its per-row accumulator hoisted out of it.
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[X:.*]]: memref<64x512xf32>, %[[Y:.*]]: memref<64x512xf32>)
// CHECK-NOT: memref.alloca
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: call @rows_parallel0(%[[C0]], %[[C64]], %[[X]], %[[Y]]) : (index, index, memref<64x512xf32>, memref<64x512xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @rows_parallel0(%[[LO:.*]]: index, %[[HI:.*]]: index, %[[PX:.*]]: memref<64x512xf32>, %[[PY:.*]]: memref<64x512xf32>)
// CHECK-SAME: nxc.parallel_body = 4
// CHECK: %[[ACC:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
// CHECK: %[[END:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: scf.for %[[I:.*]] = %[[LO]] to %[[END]] step %{{.*}} {
// CHECK: memref.subview %[[PX]][%[[I]], 0] [1, 512]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[ACC]] : memref<1xf32>)
// CHECK: memref.subview %[[PY]][%[[I]], 0] [1, 512]
// CHECK-NOT: nxc.parallel}
// CHECK: return
// ONE-LABEL: func.func @rows
// ONE: scf.for
// ONE-NOT: call
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
func.func @rows(%x: memref<64x512xf32>, %y: memref<64x512xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1 = arith.constant 1 : index
  %acc = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
  scf.for %i = %c0 to %c64 step %c1 {
    %row = memref.subview %x[%i, 0] [1, 512] [1, 1] : memref<64x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    linalg.fill ins(%cst : f32) outs(%acc : memref<1xf32>)
    linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%row : memref<1x512xf32, strided<[512, 1], offset: ?>>) outs(%acc : memref<1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %out, %in : f32
      linalg.yield %s : f32
    }
    %col = memref.expand_shape %acc [[0, 1]] output_shape [1, 1] : memref<1xf32> into memref<1x1xf32>
    %out = memref.subview %y[%i, 0] [1, 512] [1, 1] : memref<64x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%row, %col : memref<1x512xf32, strided<[512, 1], offset: ?>>, memref<1x1xf32>) outs(%out : memref<1x512xf32, strided<[512, 1], offset: ?>>) {
    ^bb0(%in: f32, %m: f32, %o: f32):
      %d = arith.subf %in, %m : f32
      linalg.yield %d : f32
    }
  } {nxc.parallel}
  return
}

// -----

// A structured op is split along its outermost loop.
// CHECK-LABEL: func.func @row_sums
// CHECK: call @row_sums_parallel0(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (index, index, memref<300x100xf32>, memref<300xf32>) -> ()
// CHECK: func.func private @row_sums_parallel0(%[[LO:.*]]: index, %[[HI:.*]]: index, %[[X:.*]]: memref<300x100xf32>, %[[S:.*]]: memref<300xf32>)
// CHECK: %[[N:.*]] = arith.subi %[[HI]], %[[LO]] : index
// CHECK: %[[XS:.*]] = memref.subview %[[X]][%[[LO]], 0] [%[[N]], 100] [1, 1]
// CHECK: %[[SS:.*]] = memref.subview %[[S]][%[[LO]]] [%[[N]]] [1]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[XS]] : {{.*}}) outs(%[[SS]] : {{.*}})
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
func.func @row_sums(%x: memref<300x100xf32>, %s: memref<300xf32>) {
  linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%x : memref<300x100xf32>) outs(%s : memref<300xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Only the outermost loop is split: here it is the reduction.
// CHECK-LABEL: func.func @column_sums
// CHECK-NOT: call
// CHECK: linalg.generic
#map8 = affine_map<(d0, d1) -> (d0, d1)>
#map9 = affine_map<(d0, d1) -> (d1)>
func.func @column_sums(%x: memref<300x100xf32>, %s: memref<100xf32>) {
  linalg.generic {indexing_maps = [#map8, #map9], iterator_types = ["reduction", "parallel"]} ins(%x : memref<300x100xf32>) outs(%s : memref<100xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Too little work (16 x 16 additions) stays on the calling thread.
// CHECK-LABEL: func.func @small
// CHECK-NOT: call
// CHECK: linalg.generic
#map5 = affine_map<(d0, d1) -> (d0, d1)>
func.func @small(%x: memref<16x16xf32>, %y: memref<16x16xf32>) {
  linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel"]} ins(%x : memref<16x16xf32>) outs(%y : memref<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %in : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// The accumulator is read after the loop: every iteration writes a buffer
// the function shares, so the loop stays where it is.
// CHECK-LABEL: func.func @shared
// CHECK-NOT: call
// CHECK: scf.for
#map6 = affine_map<(d0, d1) -> (d0, d1)>
#map7 = affine_map<(d0, d1) -> (d0)>
func.func @shared(%x: memref<64x512xf32>, %r: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1 = arith.constant 1 : index
  %acc = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
  scf.for %i = %c0 to %c64 step %c1 {
    %row = memref.subview %x[%i, 0] [1, 512] [1, 1] : memref<64x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    linalg.generic {indexing_maps = [#map6, #map7], iterator_types = ["parallel", "reduction"]} ins(%row : memref<1x512xf32, strided<[512, 1], offset: ?>>) outs(%acc : memref<1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %out, %in : f32
      linalg.yield %s : f32
    }
  } {nxc.parallel}
  memref.copy %acc, %r : memref<1xf32> to memref<1xf32>
  return
}

// -----

// Perfectly nested marked loops (the blocks of a dot, nxc-block-contractions)
// run as one range of 5 x 8 blocks: each block's row and column come from
// the range's index.
// CHECK-LABEL: func.func @blocks(
// CHECK: %[[N:.*]] = arith.constant 40 : index
// CHECK: call @blocks_parallel0(%{{.*}}, %[[N]], %{{.*}}, %{{.*}}, %{{.*}}) : (index, index, memref<30x784xf32>, memref<784x128xf32>, memref<30x128xf32>) -> ()
// CHECK: func.func private @blocks_parallel0(%[[LO:.*]]: index, %[[HI:.*]]: index,
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %[[T:.*]] = %[[LO]] to %[[HI]] step %{{.*}} {
// CHECK: %[[J:.*]] = arith.remui %[[T]], %[[C8]] : index
// CHECK: %[[I:.*]] = arith.divui %[[T]], %[[C8]] : index
// CHECK: %[[COL:.*]] = arith.muli %[[J]], %[[C16]] : index
// CHECK: %[[ROW:.*]] = arith.muli %[[I]], %[[C6]] : index
// CHECK: memref.subview %{{.*}}[%[[ROW]], 0] [6, 784]
// CHECK: memref.subview %{{.*}}[0, %[[COL]]] [784, 16]
// CHECK: memref.subview %{{.*}}[%[[ROW]], %[[COL]]] [6, 16]
// CHECK: linalg.generic
// CHECK-NOT: scf.for
// CHECK: return
#lhs = affine_map<(d0, d1, d2) -> (d1, d0)>
#rhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#out = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @blocks(%x: memref<30x784xf32>, %w: memref<784x128xf32>, %y: memref<30x128xf32>) {
  %c0 = arith.constant 0 : index
  %c30 = arith.constant 30 : index
  %c6 = arith.constant 6 : index
  %c128 = arith.constant 128 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c30 step %c6 {
    scf.for %j = %c0 to %c128 step %c16 {
      %xs = memref.subview %x[%i, 0] [6, 784] [1, 1] : memref<30x784xf32> to memref<6x784xf32, strided<[784, 1], offset: ?>>
      %ws = memref.subview %w[0, %j] [784, 16] [1, 1] : memref<784x128xf32> to memref<784x16xf32, strided<[128, 1], offset: ?>>
      %ys = memref.subview %y[%i, %j] [6, 16] [1, 1] : memref<30x128xf32> to memref<6x16xf32, strided<[128, 1], offset: ?>>
      linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["reduction", "parallel", "parallel"]} ins(%xs, %ws : memref<6x784xf32, strided<[784, 1], offset: ?>>, memref<784x16xf32, strided<[128, 1], offset: ?>>) outs(%ys : memref<6x16xf32, strided<[128, 1], offset: ?>>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %m = arith.mulf %a, %b : f32
        %s = arith.addf %o, %m : f32
        linalg.yield %s : f32
      }
    } {nxc.parallel}
  } {nxc.parallel}
  return
}

// -----

// With enough blocks of rows for the threads (2,500 >= 8 per thread), the
// column loop stays inside the body (W3's [10000,784] x [784,10] in blocks
// of 4 x 5): LLVM unrolls it into one copy of the block per column block,
// whose loads walk the rows with one stride the prefetchers follow.
// CHECK-LABEL: func.func @many_row_blocks(
// CHECK: %[[N:.*]] = arith.constant 2500 : index
// CHECK: call @many_row_blocks_parallel0(%{{.*}}, %[[N]],
// CHECK: func.func private @many_row_blocks_parallel0(%[[LO:.*]]: index, %[[HI:.*]]: index,
// CHECK-NOT: arith.remui
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c4 {
// CHECK: scf.for %[[J:.*]] = %c0 to %c10 step %c5 {
// CHECK: memref.subview %{{.*}}[%[[I]], 0] [4, 784]
// CHECK: linalg.generic
#lhs2 = affine_map<(d0, d1, d2) -> (d1, d0)>
#rhs2 = affine_map<(d0, d1, d2) -> (d2, d0)>
#out2 = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @many_row_blocks(%x: memref<10000x784xf32>, %w: memref<10x784xf32>, %y: memref<10000x10xf32>) {
  %c0 = arith.constant 0 : index
  %c10000 = arith.constant 10000 : index
  %c4 = arith.constant 4 : index
  %c10 = arith.constant 10 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c0 to %c10000 step %c4 {
    scf.for %j = %c0 to %c10 step %c5 {
      %xs = memref.subview %x[%i, 0] [4, 784] [1, 1] : memref<10000x784xf32> to memref<4x784xf32, strided<[784, 1], offset: ?>>
      %ws = memref.subview %w[%j, 0] [5, 784] [1, 1] : memref<10x784xf32> to memref<5x784xf32, strided<[784, 1], offset: ?>>
      %ys = memref.subview %y[%i, %j] [4, 5] [1, 1] : memref<10000x10xf32> to memref<4x5xf32, strided<[10, 1], offset: ?>>
      linalg.generic {indexing_maps = [#lhs2, #rhs2, #out2], iterator_types = ["reduction", "parallel", "parallel"]} ins(%xs, %ws : memref<4x784xf32, strided<[784, 1], offset: ?>>, memref<5x784xf32, strided<[784, 1], offset: ?>>) outs(%ys : memref<4x5xf32, strided<[10, 1], offset: ?>>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %m = arith.mulf %a, %b : f32
        %s = arith.addf %o, %m : f32
        linalg.yield %s : f32
      }
    } {nxc.parallel}
  } {nxc.parallel}
  return
}
