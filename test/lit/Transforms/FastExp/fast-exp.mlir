// nxc-fast-exp: an innermost loop computing f32 exp runs a version whose
// exps are marked nxc.assume_normal_range, with the largest argument bits
// (shifted left by one, dropping the sign) as a loop-carried maximum; above
// bits(87.0) << 1 the original loop runs again, after the accumulators it
// reads back get their values from before the loop.
// RUN: nxc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(nxc-fast-exp))' | FileCheck %s

// An element-wise loop: nothing to put back.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:.*]]: memref<100xf32>, %[[Y:.*]]: memref<100xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[M:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (i32) {
// CHECK: %[[V:.*]] = memref.load %[[X]]
// CHECK: %[[E:.*]] = math.exp %[[V]] {nxc.assume_normal_range} : f32
// CHECK: memref.store %[[E]], %[[Y]]
// CHECK: %[[B:.*]] = arith.bitcast %[[V]] : f32 to i32
// CHECK: %[[S:.*]] = arith.shli %[[B]], %{{.*}} : i32
// CHECK: %[[NEXT:.*]] = arith.maxui %[[ACC]], %[[S]] : i32
// CHECK: scf.yield %[[NEXT]] : i32
// CHECK: %[[LIMIT:.*]] = arith.constant -2057568256 : i32
// CHECK: %[[REDO:.*]] = arith.cmpi ugt, %[[M]], %[[LIMIT]] : i32
// CHECK: scf.if %[[REDO]] {
// CHECK-NEXT: scf.for
// CHECK: math.exp %{{.*}} : f32
// CHECK-NOT: nxc.assume_normal_range
// CHECK: return
func.func @elementwise(%x: memref<100xf32>, %y: memref<100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  scf.for %i = %c0 to %c100 step %c1 {
    %v = memref.load %x[%i] : memref<100xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%i] : memref<100xf32>
  }
  return
}

// -----

// A row's sum, read and written at a location the inner loop does not move
// along: loaded before the loop, stored back before the loop runs again.
// CHECK-LABEL: func.func @row_sums
// CHECK-SAME: (%[[X:.*]]: memref<4x100xf32>, %[[S:.*]]: memref<4xf32>)
// CHECK: scf.for %[[I:.*]] = 
// CHECK: %[[OLD:.*]] = memref.load %[[S]][%[[I]]] : memref<4xf32>
// CHECK: scf.for {{.*}} iter_args
// CHECK: math.exp %{{.*}} {nxc.assume_normal_range}
// CHECK: scf.if
// CHECK-NEXT: memref.store %[[OLD]], %[[S]][%[[I]]] : memref<4xf32>
// CHECK-NEXT: scf.for
func.func @row_sums(%x: memref<4x100xf32>, %s: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c100 = arith.constant 100 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c100 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x100xf32>
      %acc = memref.load %s[%i] : memref<4xf32>
      %e = math.exp %v : f32
      %n = arith.addf %acc, %e : f32
      memref.store %n, %s[%i] : memref<4xf32>
    }
  }
  return
}

// -----

// A loop-carried sum: the version's results are the scf.if's.
// CHECK-LABEL: func.func @carried
// CHECK: %[[R:.*]]:2 = scf.for {{.*}} -> (f32, i32)
// CHECK: %[[IF:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK: %[[AGAIN:.*]] = scf.for
// CHECK: scf.yield %[[AGAIN]] : f32
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[R]]#0 : f32
// CHECK: return %[[IF]] : f32
func.func @carried(%x: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c64 step %c1 iter_args(%a = %zero) -> (f32) {
    %v = memref.load %x[%i] : memref<64xf32>
    %e = math.exp %v : f32
    %n = arith.addf %a, %e : f32
    scf.yield %n : f32
  }
  return %r : f32
}

// -----

// Left alone: a loop that reads back what it writes elsewhere (in place),
// a short loop, an accumulator under a trip count not known (it may not
// run), and f64.
// CHECK-LABEL: func.func @in_place
// CHECK-NOT: nxc.assume_normal_range
// CHECK-LABEL: func.func @short
// CHECK-NOT: nxc.assume_normal_range
// CHECK-LABEL: func.func @dynamic_accumulator
// CHECK-NOT: nxc.assume_normal_range
// CHECK-LABEL: func.func @f64
// CHECK-NOT: nxc.assume_normal_range
func.func @in_place(%x: memref<100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  scf.for %i = %c0 to %c100 step %c1 {
    %v = memref.load %x[%i] : memref<100xf32>
    %e = math.exp %v : f32
    memref.store %e, %x[%i] : memref<100xf32>
  }
  return
}
func.func @short(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%i] : memref<4xf32>
  }
  return
}
func.func @dynamic_accumulator(%x: memref<100xf32>, %s: memref<f32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<100xf32>
    %acc = memref.load %s[] : memref<f32>
    %e = math.exp %v : f32
    %t = arith.addf %acc, %e : f32
    memref.store %t, %s[] : memref<f32>
  }
  return
}
func.func @f64(%x: memref<100xf64>, %y: memref<100xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  scf.for %i = %c0 to %c100 step %c1 {
    %v = memref.load %x[%i] : memref<100xf64>
    %e = math.exp %v : f64
    memref.store %e, %y[%i] : memref<100xf64>
  }
  return
}
