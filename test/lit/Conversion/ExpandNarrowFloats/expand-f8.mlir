// nxc-expand-narrow-floats leaves nothing of the 8-bit float types but bytes
// bitcast to and from them: arithmetic runs in f32, E5M2 is decoded as an
// f16's high byte and rounded through f16 (its low byte dropped, NaN 0x7E),
// f8_e4m3fn is decoded in integer arithmetic and rounded as Nx rounds
// (clamped to 448, the mantissa rounded half away from zero and capped).
// RUN: nxc-opt %s -nxc-expand-narrow-floats | FileCheck %s

// CHECK-LABEL: func.func @add_e5m2
// CHECK-NOT: arith.addf {{.*}} : f8E5M2
// CHECK: %[[NAN:.*]] = arith.constant 126 : i8
// CHECK: arith.bitcast %{{.*}} : f8E5M2 to i8
// CHECK: arith.bitcast %{{.*}} : i16 to f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: %[[H:.*]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK: arith.shrui
// CHECK: arith.trunci %{{.*}} : i16 to i8
// CHECK: arith.select %{{.*}}, %[[NAN]], %{{.*}} : i8
// CHECK: arith.bitcast %{{.*}} : i8 to f8E5M2
func.func @add_e5m2(%a: f8E5M2, %b: f8E5M2) -> f8E5M2 {
  %0 = arith.addf %a, %b : f8E5M2
  return %0 : f8E5M2
}

// CHECK-LABEL: func.func @mul_e4m3fn
// CHECK-NOT: arith.mulf {{.*}} : f8E4M3FN
// CHECK-DAG: arith.constant 4.480000e+02 : f32
// CHECK-DAG: arith.constant -4.480000e+02 : f32
// CHECK-DAG: arith.constant 5.120000e+02 : f32
// CHECK: %[[P:.*]] = arith.mulf %{{[0-9]+}}, %{{[0-9]+}} : f32
// CHECK: arith.maximumf %[[P]]
// CHECK: math.round
// CHECK: arith.minsi
// CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
func.func @mul_e4m3fn(%a: f8E4M3FN, %b: f8E4M3FN) -> f8E4M3FN {
  %0 = arith.mulf %a, %b : f8E4M3FN
  return %0 : f8E4M3FN
}
