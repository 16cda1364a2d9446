// nxc-map-to-gpu puts every memory-touching op of a function in a gpu.launch.
// RUN: nxc-opt %s --pass-pipeline="builtin.module(func.func(linalg-generalize-named-ops),nxc-map-to-gpu)" | FileCheck %s --implicit-check-not=linalg.generic

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#red = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

// A row max then the row-wise difference: one launch, a block per row
// (1024 rows), lanes over the row's 1000 elements combined with warp
// shuffles, a barrier between the ops.
// CHECK-LABEL: func.func @row_group
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c1024, {{.*}} threads({{.*}}) in (%{{.*}} = %c256
// CHECK-SAME: workgroup(%{{.*}} : memref<1x256xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for %[[ROW:.*]] = %[[B]] to %c1024
// CHECK: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: arith.subf
// CHECK: gpu.barrier
// CHECK-NOT: gpu.launch
func.func @row_group(%x: memref<1024x1000xf32>, %y: memref<1024x1000xf32>, %ws: memref<4096xi8>) {
  %c0 = arith.constant 0 : index
  %ninf = arith.constant 0xFF800000 : f32
  %m = memref.view %ws[%c0][] : memref<4096xi8> to memref<1024xf32>
  linalg.fill ins(%ninf : f32) outs(%m : memref<1024xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<1024x1000xf32>) outs(%m : memref<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<1024x1000xf32>, memref<1024xf32>) outs(%y : memref<1024x1000xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  return
}

// A sum of a million elements: split across blocks. Kernel 1 folds chunks
// into partials placed after the workspace (which grows by 489 x 4 bytes,
// 64-byte aligned); kernel 2 combines them with the fill value folded in.
// CHECK-LABEL: func.func @split
// CHECK-SAME: %{{.*}}: memref<2020xi8>) attributes {nxc.workspace_size = 2020 : i64}
// CHECK: %[[P:.*]] = memref.view %{{.*}}[%c64][] : memref<2020xi8> to memref<1x489xf32>
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c489,
// CHECK: memref.store %{{.*}}, %[[P]]
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{(_[0-9]+)?}},
// CHECK: memref.load %[[P]]
// CHECK: arith.addf %cst
func.func @split(%x: memref<1000000xf32>, %s: memref<f32>, %ws: memref<64xi8>) attributes {nxc.workspace_size = 64 : i64} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<f32>)
  linalg.generic {indexing_maps = [#red, #scalar], iterator_types = ["reduction"]}
      ins(%x : memref<1000000xf32>) outs(%s : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  return
}

// Control flow on a runtime value runs in a single-thread kernel.
// CHECK-LABEL: func.func @serial
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}threads({{.*}}) in (%{{.*}} = %c1
// CHECK: scf.if
func.func @serial(%p: memref<i8>, %x: memref<f32>, %ws: memref<0xi8>) {
  %v = memref.load %p[] : memref<i8>
  %c = arith.trunci %v : i8 to i1
  scf.if %c {
    %one = arith.constant 1.0 : f32
    memref.store %one, %x[] : memref<f32>
  }
  return
}
