// nxc-allocs-to-workspace turns every memref.alloc of a public function into a
// memref.view of one trailing workspace argument, records its size as
// nxc.workspace_size, and moves stack buffers out of loops.
// RUN: nxc-opt %s -nxc-allocs-to-workspace | FileCheck %s --implicit-check-not=memref.alloc( --implicit-check-not=memref.dealloc

// Lifetimes run from the alloc to the last use, views included. %a lives
// until op 4 (through %v), so %b, allocated while %a is live, gets new bytes
// at 64; %c starts after %a's last use and takes %a's bytes at 0. Every
// buffer is 64-byte aligned: 64 + 64 bytes in all.
// CHECK-LABEL: func.func @reuse
// CHECK-SAME: (%[[IN:.*]]: memref<16xf32>, %[[OUT:.*]]: memref<4xf32>, %[[WS:.*]]: memref<128xi8>)
// CHECK-SAME: attributes {nxc.workspace_size = 128 : i64}
// CHECK: %[[OFFA:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[WS]][%[[OFFA]]][] : memref<128xi8> to memref<16xf32>
// CHECK-NEXT: linalg.copy ins(%[[IN]] : memref<16xf32>) outs(%[[A]] : memref<16xf32>)
// CHECK-NEXT: %[[OFFB:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[B:.*]] = memref.view %[[WS]][%[[OFFB]]][] : memref<128xi8> to memref<4xf32>
// CHECK-NEXT: %[[V:.*]] = memref.subview %[[A]][4] [4] [1]
// CHECK-NEXT: linalg.copy ins(%[[V]] : {{.*}}) outs(%[[B]] : memref<4xf32>)
// CHECK-NEXT: %[[OFFC:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C:.*]] = memref.view %[[WS]][%[[OFFC]]][] : memref<128xi8> to memref<4xf32>
// CHECK-NEXT: linalg.add ins(%[[B]], %[[B]] : memref<4xf32>, memref<4xf32>) outs(%[[C]] : memref<4xf32>)
// CHECK-NEXT: linalg.copy ins(%[[C]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NEXT: return
func.func @reuse(%in: memref<16xf32>, %out: memref<4xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  linalg.copy ins(%in : memref<16xf32>) outs(%a : memref<16xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %v = memref.subview %a[4] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1], offset: 4>>
  linalg.copy ins(%v : memref<4xf32, strided<[1], offset: 4>>) outs(%b : memref<4xf32>)
  memref.dealloc %a : memref<16xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  linalg.add ins(%b, %b : memref<4xf32>, memref<4xf32>) outs(%c : memref<4xf32>)
  linalg.copy ins(%c : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

// A buffer yielded from scf.if lives on in the if's result: %s is allocated
// while the result is still read, so it must not share %t's bytes.
// CHECK-LABEL: func.func @yielded_from_if
// CHECK-SAME: %{{.*}}: memref<128xi8>) attributes {nxc.workspace_size = 128 : i64}
// CHECK: scf.if
// CHECK: %[[OFFT:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[T:.*]] = memref.view %{{.*}}[%[[OFFT]]][] : memref<128xi8> to memref<4xf32>
// CHECK: scf.yield %[[T]] : memref<4xf32>
// CHECK: %[[OFFS:.*]] = arith.constant 64 : index
// CHECK-NEXT: memref.view %{{.*}}[%[[OFFS]]][] : memref<128xi8> to memref<4xf32>
func.func @yielded_from_if(%p: i1, %in: memref<4xf32>, %out: memref<4xf32>) {
  %r = scf.if %p -> (memref<4xf32>) {
    %t = memref.alloc() : memref<4xf32>
    linalg.copy ins(%in : memref<4xf32>) outs(%t : memref<4xf32>)
    scf.yield %t : memref<4xf32>
  } else {
    scf.yield %in : memref<4xf32>
  }
  %s = memref.alloc() : memref<4xf32>
  linalg.add ins(%r, %r : memref<4xf32>, memref<4xf32>) outs(%s : memref<4xf32>)
  linalg.copy ins(%s : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

// Static stack buffers move out of loop bodies to the entry block (an alloca
// in a loop grows the stack every iteration); a function without temporaries
// gets an empty workspace.
// CHECK-LABEL: func.func @alloca_in_loop
// CHECK-SAME: (%[[O:.*]]: memref<4xf32>, %{{.*}}: memref<0xi8>) attributes {nxc.workspace_size = 0 : i64}
// CHECK-NEXT: %[[S:.*]] = memref.alloca() : memref<4xf32>
// CHECK: scf.for
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[S]] : memref<4xf32>)
// CHECK-NEXT: linalg.add ins(%[[S]], %[[O]] : memref<4xf32>, memref<4xf32>) outs(%[[O]] : memref<4xf32>)
// CHECK-NEXT: }
func.func @alloca_in_loop(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c3 step %c1 {
    %s = memref.alloca() : memref<4xf32>
    linalg.fill ins(%one : f32) outs(%s : memref<4xf32>)
    linalg.add ins(%s, %out : memref<4xf32>, memref<4xf32>) outs(%out : memref<4xf32>)
  }
  return
}

// Private functions are not entry points: they keep their signature.
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%{{.*}}: memref<4xf32>) {
// CHECK-NEXT: memref.alloc() : memref<4xf32>
func.func private @helper(%x: memref<4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%t : memref<4xf32>)
  return
}

// A parallel body (nxc-outline-parallel-loops) places its temporaries in a
// workspace argument of its own (2 x 1 KiB here); its caller holds one per
// thread (3 threads: 6 KiB) and passes the first, and the thread pool gives
// thread t the bytes at t * 2 KiB. A body without temporaries gets no
// workspace argument.
// CHECK-LABEL: func.func @threads
// CHECK-SAME: (%[[X:.*]]: memref<64x256xf32>, %[[WS:.*]]: memref<6144xi8>)
// CHECK-SAME: nxc.workspace_size = 6144
// CHECK: %[[ALL:.*]] = memref.view %[[WS]][%{{.*}}][] : memref<6144xi8> to memref<6144xi8>
// CHECK: %[[FIRST:.*]] = memref.view %[[ALL]][%{{.*}}][] : memref<6144xi8> to memref<2048xi8>
// CHECK: call @threads_parallel0(%{{.*}}, %{{.*}}, %[[X]], %[[FIRST]])
// CHECK: call @threads_parallel1(%{{.*}}, %{{.*}}, %[[X]]) :
// CHECK: func.func private @threads_parallel0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<64x256xf32>, %[[OWN:.*]]: memref<2048xi8>)
// CHECK-SAME: nxc.workspace_size = 2048
// CHECK: memref.view %[[OWN]][%{{.*}}][] : memref<2048xi8> to memref<256xf32>
// CHECK: memref.view %[[OWN]][%{{.*}}][] : memref<2048xi8> to memref<256xf32>
// CHECK: func.func private @threads_parallel1(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<64x256xf32>)
// CHECK-SAME: nxc.workspace_size = 0
func.func @threads(%x: memref<64x256xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  call @threads_parallel0(%c0, %c64, %x) : (index, index, memref<64x256xf32>) -> ()
  call @threads_parallel1(%c0, %c64, %x) : (index, index, memref<64x256xf32>) -> ()
  return
}
func.func private @threads_parallel0(%lo: index, %hi: index, %x: memref<64x256xf32>) attributes {nxc.parallel_body = 3 : i64} {
  %c1 = arith.constant 1 : index
  scf.for %i = %lo to %hi step %c1 {
    %a = memref.alloc() : memref<256xf32>
    %b = memref.alloc() : memref<256xf32>
    %row = memref.subview %x[%i, 0] [1, 256] [1, 1] : memref<64x256xf32> to memref<256xf32, strided<[1], offset: ?>>
    memref.copy %row, %a : memref<256xf32, strided<[1], offset: ?>> to memref<256xf32>
    memref.copy %a, %b : memref<256xf32> to memref<256xf32>
    memref.copy %b, %row : memref<256xf32> to memref<256xf32, strided<[1], offset: ?>>
  }
  return
}
func.func private @threads_parallel1(%lo: index, %hi: index, %x: memref<64x256xf32>) attributes {nxc.parallel_body = 3 : i64} {
  return
}
