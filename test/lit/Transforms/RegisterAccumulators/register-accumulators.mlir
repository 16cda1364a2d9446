// nxc-register-accumulators: a reduction whose accumulator and input are
// views of one buffer at disjoint constant offsets becomes loops whose
// innermost loop carries the accumulator (loaded before it, stored after
// it); overlapping or unknown views and separate buffers are left to
// convert-linalg-to-loops.
// RUN: nxc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(nxc-register-accumulators))' | FileCheck %s

// Block sums [250] of a [250, 4000] value, both in the workspace.
// CHECK-LABEL: func.func @block_sums
// CHECK-SAME: (%[[WS:.*]]: memref<4001024xi8>)
// CHECK-DAG: %[[X:.*]] = memref.view %[[WS]][%c0{{.*}}] : memref<4001024xi8> to memref<250x4000xf32>
// CHECK-DAG: %[[ACC:.*]] = memref.view %[[WS]][%c4000000{{.*}}] : memref<4001024xi8> to memref<250xf32>
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[A0:.*]] = memref.load %[[ACC]][%{{.*}}]
// CHECK: %[[S:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[A0]]) -> (f32)
// CHECK: %[[V:.*]] = memref.load %[[X]][%{{.*}}, %{{.*}}]
// CHECK: %[[N:.*]] = arith.addf %[[A]], %[[V]]
// CHECK: scf.yield %[[N]] : f32
// CHECK: memref.store %[[S]], %[[ACC]][%{{.*}}]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @block_sums(%ws: memref<4001024xi8>) {
  %c0 = arith.constant 0 : index
  %c4000000 = arith.constant 4000000 : index
  %x = memref.view %ws[%c0][] : memref<4001024xi8> to memref<250x4000xf32>
  %acc = memref.view %ws[%c4000000][] : memref<4001024xi8> to memref<250xf32>
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<250x4000xf32>) outs(%acc : memref<250xf32>) {
  ^bb0(%a: f32, %s: f32):
    %n = arith.addf %s, %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// A second output the inner loop moves along (the stored exp) is stored in
// every iteration; the scalar input the inner loop does not move along (the
// maximum) is loaded once per row, before it.
// CHECK-LABEL: func.func @stored_and_summed
// CHECK: scf.for
// CHECK: %[[M:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK: %[[A0:.*]] = memref.load
// CHECK: scf.for {{.*}} iter_args
// CHECK: %[[V:.*]] = memref.load
// CHECK: %[[D:.*]] = arith.subf %[[V]], %[[M]]
// CHECK: %[[E:.*]] = math.exp %[[D]]
// CHECK: arith.addf
// CHECK: memref.store %[[E]]
// CHECK: scf.yield
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#sc2 = affine_map<(d0, d1) -> ()>
#row2 = affine_map<(d0, d1) -> (d0)>
func.func @stored_and_summed(%x: memref<4x64xf32>, %ws: memref<2048xi8>) {
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %c1536 = arith.constant 1536 : index
  %e = memref.view %ws[%c0][] : memref<2048xi8> to memref<4x64xf32>
  %m = memref.view %ws[%c1024][] : memref<2048xi8> to memref<f32>
  %acc = memref.view %ws[%c1536][] : memref<2048xi8> to memref<4xf32>
  linalg.generic {indexing_maps = [#id2, #sc2, #id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<4x64xf32>, memref<f32>) outs(%e, %acc : memref<4x64xf32>, memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32, %s: f32):
    %d = arith.subf %a, %b : f32
    %v = math.exp %d : f32
    %n = arith.addf %s, %v : f32
    linalg.yield %v, %n : f32, f32
  }
  return
}

// -----

// Views that overlap, and an accumulator alone in its buffer: left alone.
// CHECK-LABEL: func.func @overlapping
// CHECK: linalg.generic
// CHECK-LABEL: func.func @own_buffer
// CHECK: linalg.generic
#id3 = affine_map<(d0, d1) -> (d0, d1)>
#row3 = affine_map<(d0, d1) -> (d0)>
func.func @overlapping(%ws: memref<4096xi8>) {
  %c0 = arith.constant 0 : index
  %c1000 = arith.constant 1000 : index
  %x = memref.view %ws[%c0][] : memref<4096xi8> to memref<4x64xf32>
  %acc = memref.view %ws[%c1000][] : memref<4096xi8> to memref<4xf32>
  linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%acc : memref<4xf32>) {
  ^bb0(%a: f32, %s: f32):
    %n = arith.addf %s, %a : f32
    linalg.yield %n : f32
  }
  return
}
func.func @own_buffer(%x: memref<4x64xf32>, %acc: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%acc : memref<4xf32>) {
  ^bb0(%a: f32, %s: f32):
    %n = arith.addf %s, %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// A register block of a dot (nxc-block-contractions: 3 rows by 2 columns,
// the reduction first) whose operands are subviews of disjoint workspace
// views: one loop over the reduction carries the block's 6 accumulators, the
// block unrolled, loaded before it and stored after it.
// CHECK-LABEL: func.func @dot_block
// CHECK-NOT: linalg.generic
// CHECK: %[[A0:.*]] = memref.load %[[C:.*]][%{{.*}}, %{{.*}}] : memref<3x2xf32
// CHECK-COUNT-5: memref.load %[[C]]
// CHECK: %[[R:.*]]:6 = scf.for %{{.*}} iter_args(%{{.*}} = %[[A0]], {{.*}}) -> (f32, f32, f32, f32, f32, f32)
// CHECK-COUNT-6: arith.mulf
// CHECK: scf.yield
// CHECK-COUNT-6: memref.store %[[R]]#{{[0-5]}}, %[[C]]
#lhs = affine_map<(d0, d1, d2) -> (d1, d0)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d0)>
#out = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @dot_block(%ws: memref<21696xi8>, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c15360 = arith.constant 15360 : index
  %c20480 = arith.constant 20480 : index
  %h = memref.view %ws[%c0][] : memref<21696xi8> to memref<30x128xf32>
  %w = memref.view %ws[%c15360][] : memref<21696xi8> to memref<10x128xf32>
  %o = memref.view %ws[%c20480][] : memref<21696xi8> to memref<30x10xf32>
  %a = memref.subview %h[%i, 0] [3, 128] [1, 1] : memref<30x128xf32> to memref<3x128xf32, strided<[128, 1], offset: ?>>
  %b = memref.subview %w[%j, 0] [2, 128] [1, 1] : memref<10x128xf32> to memref<2x128xf32, strided<[128, 1], offset: ?>>
  %c = memref.subview %o[%i, %j] [3, 2] [1, 1] : memref<30x10xf32> to memref<3x2xf32, strided<[10, 1], offset: ?>>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%a, %b : memref<3x128xf32, strided<[128, 1], offset: ?>>, memref<2x128xf32, strided<[128, 1], offset: ?>>)
      outs(%c : memref<3x2xf32, strided<[10, 1], offset: ?>>) {
  ^bb0(%x: f32, %y: f32, %s: f32):
    %p = arith.mulf %x, %y : f32
    %n = arith.addf %s, %p : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// A block whose accumulators are a subview of a view the inputs also read
// from, a block of more than 16 points, and a block whose body has more
// than 8 operations (each point copies it): left alone.
// CHECK-LABEL: func.func @block_overlapping
// CHECK: linalg.generic
// CHECK-LABEL: func.func @block_too_large
// CHECK: linalg.generic
// CHECK-LABEL: func.func @block_body_too_large
// CHECK: linalg.generic
#lhs2 = affine_map<(d0, d1, d2) -> (d1, d0)>
#rhs2 = affine_map<(d0, d1, d2) -> (d2, d0)>
#out2 = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @block_overlapping(%ws: memref<20480xi8>, %i: index) {
  %c0 = arith.constant 0 : index
  %h = memref.view %ws[%c0][] : memref<20480xi8> to memref<30x128xf32>
  %a = memref.subview %h[%i, 0] [3, 128] [1, 1] : memref<30x128xf32> to memref<3x128xf32, strided<[128, 1], offset: ?>>
  %b = memref.subview %h[0, 0] [2, 128] [1, 1] : memref<30x128xf32> to memref<2x128xf32, strided<[128, 1]>>
  %c = memref.subview %h[%i, 0] [3, 2] [1, 1] : memref<30x128xf32> to memref<3x2xf32, strided<[128, 1], offset: ?>>
  linalg.generic {indexing_maps = [#lhs2, #rhs2, #out2], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%a, %b : memref<3x128xf32, strided<[128, 1], offset: ?>>, memref<2x128xf32, strided<[128, 1]>>)
      outs(%c : memref<3x2xf32, strided<[128, 1], offset: ?>>) {
  ^bb0(%x: f32, %y: f32, %s: f32):
    %p = arith.mulf %x, %y : f32
    %n = arith.addf %s, %p : f32
    linalg.yield %n : f32
  }
  return
}
func.func @block_too_large(%ws: memref<40960xi8>) {
  %c0 = arith.constant 0 : index
  %c20480 = arith.constant 20480 : index
  %c30720 = arith.constant 30720 : index
  %h = memref.view %ws[%c0][] : memref<40960xi8> to memref<8x128xf32>
  %w = memref.view %ws[%c20480][] : memref<40960xi8> to memref<4x128xf32>
  %o = memref.view %ws[%c30720][] : memref<40960xi8> to memref<8x4xf32>
  linalg.generic {indexing_maps = [#lhs2, #rhs2, #out2], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%h, %w : memref<8x128xf32>, memref<4x128xf32>) outs(%o : memref<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %s: f32):
    %p = arith.mulf %x, %y : f32
    %n = arith.addf %s, %p : f32
    linalg.yield %n : f32
  }
  return
}
func.func @block_body_too_large(%ws: memref<40960xi8>) {
  %c0 = arith.constant 0 : index
  %c20480 = arith.constant 20480 : index
  %c30720 = arith.constant 30720 : index
  %h = memref.view %ws[%c0][] : memref<40960xi8> to memref<2x128xf32>
  %w = memref.view %ws[%c20480][] : memref<40960xi8> to memref<2x128xf32>
  %o = memref.view %ws[%c30720][] : memref<40960xi8> to memref<2x2xf32>
  linalg.generic {indexing_maps = [#lhs2, #rhs2, #out2], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%h, %w : memref<2x128xf32>, memref<2x128xf32>) outs(%o : memref<2x2xf32>) {
  ^bb0(%x: f32, %y: f32, %s: f32):
    %p = arith.mulf %x, %y : f32
    %e1 = math.exp %p : f32
    %e2 = math.exp %e1 : f32
    %e3 = math.exp %e2 : f32
    %e4 = math.exp %e3 : f32
    %e5 = math.exp %e4 : f32
    %e6 = math.exp %e5 : f32
    %e7 = math.exp %e6 : f32
    %n = arith.addf %s, %e7 : f32
    linalg.yield %n : f32
  }
  return
}
