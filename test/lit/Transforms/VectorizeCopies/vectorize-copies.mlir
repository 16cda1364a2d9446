// nxc-vectorize-copies: copies whose rows are contiguous in both buffers
// become vector loads and stores of 512 bits per row (a loop over them when
// there are several) and one shorter vector for the rest; other copies stay.
// RUN: nxc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(nxc-vectorize-copies),canonicalize)' | FileCheck %s

// im2col of a 3x3 convolution over 56x56: the input's last index is kw + ow.
// 56 columns: 3 vectors of 16 in a loop, then one of 8.
// CHECK-DAG: #[[SUM:.*]] = affine_map<(d0, d1) -> (d0 + d1)>
// CHECK-LABEL: func.func @im2col
// CHECK-SAME: (%[[X:.*]]: memref<64x58x58xf32>, %[[Y:.*]]: memref<64x3x3x56x56xf32>)
// CHECK: scf.for %[[C:.*]] = %c0 to %c64 step %c1
// CHECK: scf.for %[[KH:.*]] = %c0 to %c3 step %c1
// CHECK: scf.for %[[KW:.*]] = %c0 to %c3 step %c1
// CHECK: scf.for %[[OH:.*]] = %c0 to %c56 step %c1
// CHECK-NEXT: %[[H:.*]] = affine.apply #[[SUM]](%[[KH]], %[[OH]])
// CHECK-NEXT: scf.for %[[OW:.*]] = %c0 to %c48 step %c16
// CHECK: %[[W:.*]] = affine.apply #[[SUM]](%[[KW]], %[[OW]])
// CHECK: %[[V:.*]] = vector.load %[[X]][%[[C]], %[[H]], %[[W]]] : memref<64x58x58xf32>, vector<16xf32>
// CHECK: vector.store %[[V]], %[[Y]][%[[C]], %[[KH]], %[[KW]], %[[OH]], %[[OW]]] : memref<64x3x3x56x56xf32>, vector<16xf32>
// CHECK: }
// CHECK: %[[W48:.*]] = affine.apply
// CHECK: %[[R:.*]] = vector.load %[[X]][%[[C]], %[[H]], %[[W48]]] : memref<64x58x58xf32>, vector<8xf32>
// CHECK: vector.store %[[R]], %[[Y]][%[[C]], %[[KH]], %[[KW]], %[[OH]], %c48] : memref<64x3x3x56x56xf32>, vector<8xf32>
// CHECK-NOT: linalg.generic
func.func @im2col(%x: memref<64x58x58xf32>, %y: memref<64x3x3x56x56xf32>) {
  linalg.generic {indexing_maps = [affine_map<(c, kh, kw, oh, ow) -> (c, kh + oh, kw + ow)>,
                                   affine_map<(c, kh, kw, oh, ow) -> (c, kh, kw, oh, ow)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<64x58x58xf32>) outs(%y : memref<64x3x3x56x56xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// A copy into the interior of a padded buffer (a strided subview, rows of 58
// holding 56): one vector of 16 needs no loop; 8 bytes of i8 rows of 20
// take one vector of 20 (shorter than 64 lanes).
// CHECK-LABEL: func.func @into_padding
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: vector.load %{{.*}} : memref<4x16xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<4x16xf32, strided<[18, 1], offset: 19>>, vector<16xf32>
// CHECK-LABEL: func.func @bytes
// CHECK: vector.load %{{.*}} : memref<3x20xi8>, vector<20xi8>
func.func @into_padding(%x: memref<4x16xf32>, %p: memref<6x18xf32>) {
  %s = memref.subview %p[1, 1] [4, 16] [1, 1] : memref<6x18xf32> to memref<4x16xf32, strided<[18, 1], offset: 19>>
  linalg.copy ins(%x : memref<4x16xf32>) outs(%s : memref<4x16xf32, strided<[18, 1], offset: 19>>)
  return
}
func.func @bytes(%x: memref<3x20xi8>, %y: memref<3x20xi8>) {
  linalg.copy ins(%x : memref<3x20xi8>) outs(%y : memref<3x20xi8>)
  return
}

// -----

// Not copies of contiguous rows: a transpose (the input's last index is not
// the last loop), booleans (i1), an element-wise op, rows of 3.
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.generic
// CHECK: linalg.copy
// CHECK: linalg.generic
// CHECK: linalg.copy
// CHECK-NOT: vector.
func.func @left_alone(%a: memref<16x16xf32>, %b: memref<16x16xf32>, %p: memref<4x32xi1>, %q: memref<4x32xi1>,
                      %s: memref<5x3xf32>, %t: memref<5x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]} ins(%a : memref<16x16xf32>) outs(%b : memref<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.copy ins(%p : memref<4x32xi1>) outs(%q : memref<4x32xi1>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]} ins(%a : memref<16x16xf32>) outs(%b : memref<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  linalg.copy ins(%s : memref<5x3xf32>) outs(%t : memref<5x3xf32>)
  return
}
