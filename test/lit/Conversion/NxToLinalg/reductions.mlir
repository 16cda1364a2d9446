// Reductions and dot are linalg.generic ops with reduction iterators over a
// linalg.fill'ed accumulator; they accumulate with reassoc/contract fast-math
// flags so that LLVM can vectorize them.
// RUN: nxc-opt %s -nxc-lower-nx-to-linalg | FileCheck %s --implicit-check-not=nx.
// RUN: nxc-opt %s -nxc-lower-nx-to-linalg=blocked-reductions | FileCheck %s --check-prefix=BLOCKED

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>

// CHECK-LABEL: func.func @sum_rows
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>) -> tensor<2xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<2x3xf32>) outs(%[[INIT]] : tensor<2xf32>)
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
// CHECK: return %[[R]]
func.func @sum_rows(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = nx.sum %x, axes = [1] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// reduce_max starts from -inf and propagates NaN (maximumf, not maxnumf).
// CHECK-LABEL: func.func @max_all
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[ALL]]], iterator_types = ["reduction", "reduction"]}
// CHECK: arith.maximumf {{.*}} fastmath<reassoc,contract> : f32
func.func @max_all(%x: tensor<2x3xf32>) -> tensor<f32> {
  %0 = nx.reduce_max %x, axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// Integer sums on unsigned types: signless i8 with addi.
// CHECK-LABEL: func.func @sum_u8
// CHECK-SAME: (%{{.*}}: tensor<8xi8>) -> tensor<i8>
// CHECK: linalg.fill ins(%c0_i8 : i8)
// CHECK: arith.addi
func.func @sum_u8(%x: tensor<8xui8>) -> tensor<ui8> {
  %0 = nx.sum %x, axes = [0] : tensor<8xui8> -> tensor<ui8>
  return %0 : tensor<ui8>
}

// A short contraction with wide rows runs i, k, j: the output row innermost.
// CHECK-LABEL: func.func @dot
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[D:.*]] = linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<3x4xf32>) outs(%[[ACC]] : tensor<2x4xf32>)
// CHECK: ^bb0(%[[IA:.*]]: f32, %[[IB:.*]]: f32, %[[O:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[IA]], %[[IB]] fastmath<reassoc,contract> : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[O]], %[[M]] fastmath<reassoc,contract> : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: return %[[D]]
func.func @dot(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = nx.dot %a, [1], [], %b, [0], [] : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// f16 and bf16 sums, products and dots accumulate in f32 and round once at
// the end (an f16 running sum would drop every addend below its 11 bits).
// CHECK-LABEL: func.func @sum_f16
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3xf16>) outs(%[[ACC]] : tensor<2xf32>)
// CHECK: ^bb0(%[[V:.*]]: f16, %[[A:.*]]: f32):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[V]] : f16 to f32
// CHECK-NEXT: arith.addf %[[A]], %[[W]] fastmath<reassoc,contract> : f32
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<2xf32>) outs(%{{.*}} : tensor<2xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @sum_f16(%x: tensor<2x3xf16>) -> tensor<2xf16> {
  %0 = nx.sum %x, axes = [1] : tensor<2x3xf16> -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// CHECK-LABEL: func.func @dot_bf16
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[D:.*]] = linalg.generic {{.*}} outs(%[[ACC]] : tensor<2x4xf32>)
// CHECK: ^bb0(%[[IA:.*]]: bf16, %[[IB:.*]]: bf16, %[[O:.*]]: f32):
// CHECK-NEXT: %[[WA:.*]] = arith.extf %[[IA]] : bf16 to f32
// CHECK-NEXT: %[[WB:.*]] = arith.extf %[[IB]] : bf16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[WA]], %[[WB]] fastmath<reassoc,contract> : f32
// CHECK-NEXT: arith.addf %[[O]], %[[M]] fastmath<reassoc,contract> : f32
// CHECK: linalg.generic {{.*}} ins(%[[D]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @dot_bf16(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>) -> tensor<2x4xbf16> {
  %0 = nx.dot %a, [1], [], %b, [0], [] : tensor<2x3xbf16>, tensor<3x4xbf16> -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// A long f32 sum accumulates in f64; with blocked-reductions (the CPU pipeline), a
// sum over trailing axes runs in two levels: blocks of at most 4096 elements
// summed in f32, then the block sums in f64, rounded once.
// CHECK-LABEL: func.func @sum_long
// CHECK: linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<3xf64>)
// BLOCKED-LABEL: func.func @sum_long
// BLOCKED-SAME: (%[[X:.*]]: tensor<3x8192xf32>)
// BLOCKED: %[[B:.*]] = tensor.expand_shape {{.*}} : tensor<24576xf32> into tensor<3x2x4096xf32>
// BLOCKED: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[B]] : tensor<3x2x4096xf32>) outs(%{{.*}} : tensor<3x2xf32>)
// BLOCKED: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
// BLOCKED: %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<3x2xf32>) outs(%{{.*}} : tensor<3xf64>)
// BLOCKED: arith.extf %{{.*}} : f32 to f64
// BLOCKED: arith.truncf %{{.*}} : f64 to f32
func.func @sum_long(%x: tensor<3x8192xf32>) -> tensor<3xf32> {
  %0 = nx.sum %x, axes = [1] : tensor<3x8192xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// With no block size that divides (8191 is prime), or over leading axes, it
// accumulates in f64 either way.
// BLOCKED-LABEL: func.func @sum_long_prime
// BLOCKED: linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<f64>)
// BLOCKED: arith.extf %{{.*}} : f32 to f64
func.func @sum_long_prime(%x: tensor<8191xf32>) -> tensor<f32> {
  %0 = nx.sum %x, axes = [0] : tensor<8191xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// A long maximum (and minimum) runs in blocks too with blocked-reductions,
// both levels in the element type (exact in any grouping: IEEE maximum).
// CHECK-LABEL: func.func @max_long
// CHECK-NOT: tensor.expand_shape
// CHECK: arith.maximumf
// BLOCKED-LABEL: func.func @max_long
// BLOCKED: %[[B:.*]] = tensor.expand_shape {{.*}} : tensor<1000000xf32> into tensor<250x4000xf32>
// BLOCKED: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[B]] : tensor<250x4000xf32>) outs(%{{.*}} : tensor<250xf32>)
// BLOCKED: arith.maximumf
// BLOCKED: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[P]] : tensor<250xf32>) outs(%{{.*}} : tensor<f32>)
// BLOCKED: arith.maximumf
func.func @max_long(%x: tensor<1000000xf32>) -> tensor<f32> {
  %0 = nx.reduce_max %x, axes = [0] : tensor<1000000xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// The same for a long minimum over trailing axes (rows of 8192 s32).
// BLOCKED-LABEL: func.func @min_long
// BLOCKED: tensor.expand_shape {{.*}} : tensor<16384xi32> into tensor<2x2x4096xi32>
// BLOCKED: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<2x2x4096xi32>) outs(%{{.*}} : tensor<2x2xi32>)
// BLOCKED: arith.minsi
// BLOCKED: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<2x2xi32>) outs(%{{.*}} : tensor<2xi32>)
// BLOCKED: arith.minsi
func.func @min_long(%x: tensor<2x8192xsi32>) -> tensor<2xsi32> {
  %0 = nx.reduce_min %x, axes = [1] : tensor<2x8192xsi32> -> tensor<2xsi32>
  return %0 : tensor<2xsi32>
}
