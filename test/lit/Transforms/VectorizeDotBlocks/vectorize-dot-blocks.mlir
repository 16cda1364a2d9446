// nxc-vectorize-dot-blocks: a register block of a dot (loops k, i, j; the
// output and the rhs contiguous along j) becomes a loop over k carrying the
// block's accumulators as 512-bit vectors; blocks it cannot write that way
// are left to convert-linalg-to-loops.
// RUN: nxc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(nxc-vectorize-dot-blocks))' | FileCheck %s

// The MLP's block: 6 rows by 16 columns of [30,784] x [784,128], k in
// chunks of 196. Six accumulators of 16 lanes, one rhs slice and six
// broadcasts per step, the body's flags kept.
// CHECK-LABEL: func.func @mlp_block
// CHECK-NOT: linalg.generic
// CHECK-COUNT-6: vector.load %{{.*}} : memref<6x16xf32, strided<[128, 1], offset: ?>>, vector<16xf32>
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: %[[B:.*]] = vector.load %{{.*}}[%[[K]], %{{.*}}] : memref<196x16xf32, strided<[128, 1], offset: ?>>, vector<16xf32>
// CHECK: %[[A:.*]] = memref.load %{{.*}}[%{{.*}}, %[[K]]] : memref<6x196xf32, strided<[784, 1], offset: ?>>
// CHECK: %[[AV:.*]] = vector.broadcast %[[A]] : f32 to vector<16xf32>
// CHECK: %[[P:.*]] = arith.mulf %[[AV]], %[[B]] fastmath<reassoc,contract> : vector<16xf32>
// CHECK: arith.addf %{{.*}}, %[[P]] fastmath<reassoc,contract> : vector<16xf32>
// CHECK-COUNT-5: vector.broadcast
// CHECK: scf.yield
// CHECK-COUNT-6: vector.store
#lhs = affine_map<(d0, d1, d2) -> (d1, d0)>
#rhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#out = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @mlp_block(%a: memref<6x196xf32, strided<[784, 1], offset: ?>>, %b: memref<196x16xf32, strided<[128, 1], offset: ?>>,
                     %c: memref<6x16xf32, strided<[128, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%a, %b : memref<6x196xf32, strided<[784, 1], offset: ?>>, memref<196x16xf32, strided<[128, 1], offset: ?>>)
      outs(%c : memref<6x16xf32, strided<[128, 1], offset: ?>>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<reassoc,contract> : f32
    %s = arith.addf %acc, %p fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// bf16 operands widened in the body: the rhs slice is loaded as bf16 and
// widened as a vector; f64 blocks take 8 lanes.
// CHECK-LABEL: func.func @widened
// CHECK: scf.for
// CHECK: vector.load %{{.*}} : memref<4x32xbf16>, vector<16xbf16>
// CHECK: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK-LABEL: func.func @doubles
// CHECK: vector.load %{{.*}} : memref<2x8xf64>, vector<8xf64>
// CHECK: scf.for {{.*}} -> (vector<8xf64>, vector<8xf64>)
#lhs = affine_map<(d0, d1, d2) -> (d1, d0)>
#rhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#out = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @widened(%a: memref<2x4xbf16>, %b: memref<4x32xbf16>, %c: memref<2x32xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%a, %b : memref<2x4xbf16>, memref<4x32xbf16>) outs(%c : memref<2x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf fastmath<reassoc,contract> : f32
    %s = arith.addf %acc, %p fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  }
  return
}
func.func @doubles(%a: memref<2x5xf64>, %b: memref<5x8xf64>, %c: memref<2x8xf64>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%a, %b : memref<2x5xf64>, memref<5x8xf64>) outs(%c : memref<2x8xf64>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %p = arith.mulf %x, %y fastmath<reassoc,contract> : f64
    %s = arith.addf %acc, %p fastmath<reassoc,contract> : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// Left alone: columns that are not a multiple of 16, a rhs strided along j,
// a body that is not a multiply-accumulate, more than 24 accumulator vectors.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: vector.
#lhs = affine_map<(d0, d1, d2) -> (d1, d0)>
#rhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#out = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @left_alone(%a: memref<6x8xf32>, %b: memref<8x10xf32>, %c: memref<6x10xf32>,
                      %bs: memref<8x16xf32, strided<[1, 8]>>, %c16: memref<6x16xf32>,
                      %b16: memref<8x16xf32>, %a25: memref<8x25xf32>, %b32: memref<8x16xf32>, %c25: memref<25x16xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%a, %b : memref<6x8xf32>, memref<8x10xf32>) outs(%c : memref<6x10xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%a, %bs : memref<6x8xf32>, memref<8x16xf32, strided<[1, 8]>>) outs(%c16 : memref<6x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%a, %b16 : memref<6x8xf32>, memref<8x16xf32>) outs(%c16 : memref<6x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, #rhs, #out], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%a25, %b32 : memref<8x25xf32>, memref<8x16xf32>) outs(%c25 : memref<25x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// W9's block on the padded grid: loops (n, c, ky, kx, o, p), n once, the
// contraction over the channels and the 3x3 taps, the rhs row the padded
// input at p + ky * 58 + kx. Three nested loops carry the 4 x 5
// accumulators; the rhs index is computed from the taps.
// CHECK-LABEL: func.func @conv_block
// CHECK-NOT: linalg.generic
// CHECK-COUNT-20: vector.load %{{.*}} : memref<1x4x80xf32, strided<[207872, 3248, 1], offset: ?>>, vector<16xf32>
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK: scf.for %[[KY:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK: scf.for %[[KX:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK: %[[ROW:.*]] = arith.muli %[[KY]], %{{.*}} : index
// CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %[[ROW]] : index
// CHECK: %[[TAP:.*]] = arith.addi %[[AT]], %[[KX]] : index
// CHECK: vector.load %{{.*}}[%{{.*}}, %[[C]], %[[TAP]]] : memref<1x4x198xf32, strided<[215296, 3364, 1], offset: ?>>, vector<16xf32>
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[C]], %[[KY]], %[[KX]]] : memref<4x4x3x3xf32, strided<[576, 9, 3, 1], offset: ?>>
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK-COUNT-20: vector.store
#kernel = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d1, d2, d3)>
#shifted = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5 + d2 * 58 + d3)>
#out = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d4, d5)>
func.func @conv_block(%k: memref<4x4x3x3xf32, strided<[576, 9, 3, 1], offset: ?>>,
                      %x: memref<1x4x198xf32, strided<[215296, 3364, 1], offset: ?>>,
                      %y: memref<1x4x80xf32, strided<[207872, 3248, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [#kernel, #shifted, #out],
                  iterator_types = ["parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%k, %x : memref<4x4x3x3xf32, strided<[576, 9, 3, 1], offset: ?>>, memref<1x4x198xf32, strided<[215296, 3364, 1], offset: ?>>)
      outs(%y : memref<1x4x80xf32, strided<[207872, 3248, 1], offset: ?>>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b fastmath<reassoc,contract> : f32
    %s = arith.addf %acc, %p fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  }
  return
}
