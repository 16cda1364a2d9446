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
