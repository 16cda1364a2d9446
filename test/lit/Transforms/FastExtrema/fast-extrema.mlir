// nxc-fast-extrema: a float maximum over 64 or more elements per result,
// right after the fill of its accumulator, runs as maxnumf <nnan,nsz> with a
// sum of the same elements beside it; a flag says whether any sum is NaN or
// any result zero, and then the fill and the exact reduction run again. The
// sums and the flag are temporaries at the function's start (the pipeline's
// stack promotion and workspace place them).
// RUN: nxc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(nxc-fast-extrema))' | FileCheck %s

// CHECK-LABEL: func.func @row_max
// CHECK-SAME: (%[[X:.*]]: memref<8x100xf32>, %[[M:.*]]: memref<8xf32>)
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[FLAG:.*]] = memref.alloc() {alignment = 64 : i64} : memref<i1>
// CHECK-DAG: %[[SUMS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// CHECK: linalg.fill ins(%[[NINF]] : f32) outs(%[[M]] : memref<8xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[SUMS]] : memref<8xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<8x100xf32>) outs(%[[M]], %[[SUMS]] : memref<8xf32>, memref<8xf32>)
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} fastmath<nnan,nsz> : f32
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK: linalg.fill ins(%false : i1) outs(%[[FLAG]] : memref<i1>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[M]], %[[SUMS]] : memref<8xf32>, memref<8xf32>) outs(%[[FLAG]] : memref<i1>)
// CHECK: arith.cmpf uno
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: arith.ori
// CHECK: %[[REDO:.*]] = memref.load %[[FLAG]][] : memref<i1>
// CHECK: scf.if %[[REDO]] {
// CHECK-NEXT: linalg.fill ins(%[[NINF]] : f32) outs(%[[M]] : memref<8xf32>)
// CHECK-NEXT: linalg.generic
// CHECK: arith.maximumf
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%x: memref<8x100xf32>, %m: memref<8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%ninf : f32) outs(%m : memref<8xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xf32>) outs(%m : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Short rows, an integer maximum, and a maximum without its fill: left alone.
// CHECK-LABEL: func.func @short_rows
// CHECK-NOT: maxnumf
// CHECK-LABEL: func.func @integers
// CHECK-NOT: scf.if
// CHECK-LABEL: func.func @no_fill
// CHECK-NOT: scf.if
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
func.func @short_rows(%x: memref<8x10xf32>, %m: memref<8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%ninf : f32) outs(%m : memref<8xf32>)
  linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x10xf32>) outs(%m : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  }
  return
}
func.func @integers(%x: memref<8x100xi32>, %m: memref<8xi32>) {
  %low = arith.constant -2147483648 : i32
  linalg.fill ins(%low : i32) outs(%m : memref<8xi32>)
  linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xi32>) outs(%m : memref<8xi32>) {
  ^bb0(%a: i32, %acc: i32):
    %r = arith.maxsi %acc, %a : i32
    linalg.yield %r : i32
  }
  return
}
func.func @no_fill(%x: memref<8x100xf32>, %m: memref<8xf32>) {
  linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xf32>) outs(%m : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  }
  return
}
