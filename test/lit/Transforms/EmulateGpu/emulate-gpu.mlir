// nxc-emulate-gpu runs a launch on the CPU: a loop over blocks, and in each
// block one loop over the threads per phase between barriers.
// RUN: nxc-opt %s -nxc-emulate-gpu | FileCheck %s --implicit-check-not=gpu.

// Each thread stores its index to shared memory; after the barrier, each
// reads its neighbour's. The value computed before the barrier and used
// after it (%t2) is kept per thread in an array.
// CHECK-LABEL: func.func @neighbours
// CHECK-DAG: %[[SPILL:.*]] = memref.alloca() : memref<4xindex>
// CHECK-DAG: %[[SHARED:.*]] = memref.alloca() : memref<4xf32>
// CHECK: scf.for %[[BLOCK:.*]] = %c0 to %c2 step
// CHECK:   scf.for %[[T:.*]] = %c0 to %c4
// CHECK:     memref.store %{{.*}}, %[[SPILL]][%[[T]]]
// CHECK:     memref.store %{{.*}}, %[[SHARED]]
// CHECK:   scf.for %[[T2:.*]] = %c0 to %c4
// CHECK:     %[[V:.*]] = memref.load %[[SPILL]][%[[T2]]]
// CHECK:     memref.load %[[SHARED]][%{{.*}}]
func.func @neighbours(%out: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1)
             workgroup(%shared : memref<4xf32, #gpu.address_space<workgroup>>) {
    %t2 = arith.addi %tx, %c1 : index
    %f = arith.index_cast %tx : index to i32
    %v = arith.sitofp %f : i32 to f32
    memref.store %v, %shared[%tx] : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %n = arith.remui %t2, %c4 : index
    %w = memref.load %shared[%n] : memref<4xf32, #gpu.address_space<workgroup>>
    %base = arith.muli %bx, %c4 : index
    %i = arith.addi %base, %tx : index
    memref.store %w, %out[%i] : memref<8xf32>
    gpu.terminator
  }
  return
}
