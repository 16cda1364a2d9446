// nxc-stream-stores: an element-wise nest that alone writes a large function
// argument gets a second version, taken when the function's buffers exceed
// 3/4 of the cache (asked at run time) and the output starts a cache line:
// vector code that stores with non-temporal stores. The function ends with an
// sfence. Outputs that are small, read, written twice, or whose rows are not
// whole lines are left alone.
// RUN: nxc-opt %s -split-input-file -pass-pipeline='builtin.module(nxc-stream-stores{min-bytes=4096},canonicalize)' | FileCheck %s

// A row of layer norm's last pass: x row minus a per-row mean, times a
// per-row scale, into a row of the output argument.
// The buffers total 32,776 bytes: streaming runs when that is at least 3/4 of
// the cache the query reports (4 x 32,776 >= 3 x cache).
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[X:.*]]: memref<4x1024xf32>, %[[Y:.*]]: memref<4x1024xf32>, %[[M:.*]]: memref<1x1xf32>, %[[S:.*]]: memref<1x1xf32>)
// CHECK-DAG: %[[FOOT:.*]] = arith.constant 131104 : i64
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3 : i64
// CHECK: %[[CACHE:.*]] = call @nxc_x86_cache_bytes() : () -> i64
// CHECK: %[[SHARE:.*]] = arith.muli %[[CACHE]], %[[THREE]]
// CHECK: %[[BIG:.*]] = arith.cmpi sle, %[[SHARE]], %[[FOOT]]
// CHECK: scf.for %[[I:.*]] =
// CHECK: %[[ROW:.*]] = memref.subview %[[Y]][%[[I]], 0]
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[ROW]]
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[ROW]]
// CHECK: %[[B:.*]] = arith.muli %[[OFF]], %c4
// CHECK: %[[A:.*]] = arith.addi %[[P]], %[[B]]
// CHECK: %[[LOW:.*]] = arith.andi %[[A]], %c63
// CHECK: %[[ALIGNED:.*]] = arith.cmpi eq, %[[LOW]], %c0
// CHECK: %[[BOTH:.*]] = arith.andi %[[BIG]], %[[ALIGNED]]
// CHECK: scf.if %[[BOTH]] {
// CHECK: scf.for %[[J:.*]] = %c0 to %c1024 step %c8
// CHECK: %[[XV:.*]] = vector.load %{{.*}}[%{{.*}}, %[[J]]] : memref<1x1024xf32, strided<[1024, 1], offset: ?>>, vector<8xf32>
// CHECK: %[[MS:.*]] = memref.load %[[M]]
// CHECK: %[[MV:.*]] = vector.broadcast %[[MS]] : f32 to vector<8xf32>
// CHECK: %[[SS:.*]] = memref.load %[[S]]
// CHECK: %[[SV:.*]] = vector.broadcast %[[SS]] : f32 to vector<8xf32>
// CHECK: %[[D:.*]] = arith.subf %[[XV]], %[[MV]] : vector<8xf32>
// CHECK: %[[R:.*]] = arith.mulf %[[D]], %[[SV]] : vector<8xf32>
// CHECK: vector.store %[[R]], %[[ROW]][%{{.*}}, %[[J]]] {alignment = 32 : i64, nontemporal = true}
// CHECK: } else {
// CHECK: linalg.generic
// CHECK: arith.subf %{{.*}}, %{{.*}} : f32
// CHECK: llvm.call_intrinsic "llvm.x86.sse.sfence"()
// CHECK-NEXT: return
// CHECK: func.func private @nxc_x86_cache_bytes() -> i64
#map = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
func.func @rows(%x: memref<4x1024xf32>, %y: memref<4x1024xf32>, %m: memref<1x1xf32>, %s: memref<1x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %xr = memref.subview %x[%i, 0] [1, 1024] [1, 1] : memref<4x1024xf32> to memref<1x1024xf32, strided<[1024, 1], offset: ?>>
    %yr = memref.subview %y[%i, 0] [1, 1024] [1, 1] : memref<4x1024xf32> to memref<1x1024xf32, strided<[1024, 1], offset: ?>>
    linalg.generic {indexing_maps = [#map, #map2, #map2, #map], iterator_types = ["parallel", "parallel"]}
        ins(%xr, %m, %s : memref<1x1024xf32, strided<[1024, 1], offset: ?>>, memref<1x1xf32>, memref<1x1xf32>)
        outs(%yr : memref<1x1024xf32, strided<[1024, 1], offset: ?>>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %e = arith.mulf %d, %c : f32
      linalg.yield %e : f32
    }
  }
  return
}

// -----

// f64, a bias along the rows (independent of the innermost loop) and one
// along the columns (contiguous), a constant and a value from outside the
// body: 4 lanes, the constant splat, the outside value broadcast.
// CHECK-LABEL: func.func @bias
// CHECK-SAME: (%[[X:.*]]: memref<16x64xf64>, %[[C:.*]]: memref<64xf64>, %[[R:.*]]: memref<16xf64>, %[[K:.*]]: f64, %[[Y:.*]]: memref<16x64xf64>)
// CHECK: %[[TWO:.*]] = arith.constant dense<2.000000e+00> : vector<4xf64>
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: arith.andi %[[P]], %c63
// CHECK: scf.if
// CHECK: scf.for %[[I:.*]] = %c0 to %c16
// CHECK: scf.for %[[J:.*]] = %c0 to %c64 step %c4
// CHECK: %[[KV:.*]] = vector.broadcast %[[K]] : f64 to vector<4xf64>
// CHECK: %[[XV:.*]] = vector.load %[[X]][%[[I]], %[[J]]] : memref<16x64xf64>, vector<4xf64>
// CHECK: %[[CV:.*]] = vector.load %[[C]][%[[J]]] : memref<64xf64>, vector<4xf64>
// CHECK: %[[RS:.*]] = memref.load %[[R]][%[[I]]] : memref<16xf64>
// CHECK: %[[RV:.*]] = vector.broadcast %[[RS]]
// CHECK: %[[S:.*]] = arith.addf %[[XV]], %[[CV]]
// CHECK: %[[T:.*]] = arith.mulf %[[S]], %[[TWO]]
// CHECK: %[[U:.*]] = arith.subf %[[T]], %[[RV]]
// CHECK: %[[V:.*]] = arith.mulf %[[U]], %[[KV]] : vector<4xf64>
// CHECK: vector.store %[[V]], %[[Y]][%[[I]], %[[J]]] {alignment = 32 : i64, nontemporal = true} : memref<16x64xf64>, vector<4xf64>
// CHECK: } else {
// CHECK: linalg.generic
// CHECK: llvm.call_intrinsic "llvm.x86.sse.sfence"()
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @bias(%x: memref<16x64xf64>, %c: memref<64xf64>, %r: memref<16xf64>, %k: f64, %y: memref<16x64xf64>) {
  linalg.generic {indexing_maps = [#id, #col, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c, %r : memref<16x64xf64>, memref<64xf64>, memref<16xf64>) outs(%y : memref<16x64xf64>) {
  ^bb0(%a: f64, %b: f64, %e: f64, %o: f64):
    %two = arith.constant 2.0 : f64
    %s = arith.addf %a, %b : f64
    %t = arith.mulf %s, %two : f64
    %u = arith.subf %t, %e : f64
    %v = arith.mulf %u, %k : f64
    linalg.yield %v : f64
  }
  return
}

// -----

// Below min-bytes (2 KiB of output): unchanged, no query, no fence.
// CHECK-LABEL: func.func @small
// CHECK-NOT: nxc_x86_cache_bytes
// CHECK-NOT: vector.store
// CHECK-NOT: sfence
// CHECK: linalg.generic
#id1 = affine_map<(d0) -> (d0)>
func.func @small(%x: memref<512xf32>, %y: memref<512xf32>) {
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : memref<512xf32>) outs(%y : memref<512xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// The output is read afterwards (by the second nest), so both keep their
// stores; a nest that reads its own output element is left alone too.
// CHECK-LABEL: func.func @read_back
// CHECK-NOT: nontemporal
// CHECK-NOT: sfence
#id2 = affine_map<(d0) -> (d0)>
func.func @read_back(%x: memref<4096xf32>, %y: memref<4096xf32>, %z: memref<4096xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]} ins(%x : memref<4096xf32>) outs(%y : memref<4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]} ins(%y : memref<4096xf32>) outs(%z : memref<4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %o : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// Rows of 1000 floats are not whole cache lines; a transcendental function
// in the body would need a library call on vectors. Both left alone.
// CHECK-LABEL: func.func @not_lines
// CHECK-NOT: nontemporal
// CHECK-LABEL: func.func @exp_body
// CHECK-NOT: nontemporal
#idr = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_lines(%x: memref<8x1000xf32>, %y: memref<8x1000xf32>) {
  linalg.generic {indexing_maps = [#idr, #idr], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x1000xf32>) outs(%y : memref<8x1000xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  }
  return
}
func.func @exp_body(%x: memref<8x1024xf32>, %y: memref<8x1024xf32>) {
  linalg.generic {indexing_maps = [#idr, #idr], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x1024xf32>) outs(%y : memref<8x1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = math.exp %a : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// A parallel body's range of rows: the outer extent is dynamic, the row a
// static number of lines; s32 in 8 lanes.
// CHECK-LABEL: func.func @row_range
// CHECK-SAME: (%[[LO:.*]]: index, %[[HI:.*]]: index, %[[X:.*]]: memref<64x1024xi32>, %[[Y:.*]]: memref<64x1024xi32>)
// CHECK: %[[N:.*]] = arith.subi %[[HI]], %[[LO]]
// CHECK: %[[OUT:.*]] = memref.subview %[[Y]][%[[LO]], 0] [%[[N]], 1024]
// CHECK: scf.if
// CHECK: scf.for %[[I:.*]] = %c0 to %[[N]] step %c1
// CHECK: scf.for %[[J:.*]] = %c0 to %c1024 step %c8
// CHECK: vector.load {{.*}} vector<8xi32>
// CHECK: arith.muli {{.*}} : vector<8xi32>
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[I]], %[[J]]] {alignment = 32 : i64, nontemporal = true}
// CHECK: } else {
// CHECK: linalg.generic
// CHECK: llvm.call_intrinsic "llvm.x86.sse.sfence"()
#idi = affine_map<(d0, d1) -> (d0, d1)>
func.func @row_range(%lo: index, %hi: index, %x: memref<64x1024xi32>, %y: memref<64x1024xi32>) {
  %c3 = arith.constant 3 : i32
  %n = arith.subi %hi, %lo : index
  %xs = memref.subview %x[%lo, 0] [%n, 1024] [1, 1] : memref<64x1024xi32> to memref<?x1024xi32, strided<[1024, 1], offset: ?>>
  %ys = memref.subview %y[%lo, 0] [%n, 1024] [1, 1] : memref<64x1024xi32> to memref<?x1024xi32, strided<[1024, 1], offset: ?>>
  linalg.generic {indexing_maps = [#idi, #idi], iterator_types = ["parallel", "parallel"]}
      ins(%xs : memref<?x1024xi32, strided<[1024, 1], offset: ?>>) outs(%ys : memref<?x1024xi32, strided<[1024, 1], offset: ?>>) {
  ^bb0(%a: i32, %o: i32):
    %d = arith.muli %a, %c3 : i32
    linalg.yield %d : i32
  }
  return
}
