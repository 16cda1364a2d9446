// nxc-expand-narrow-floats leaves no bf16 arithmetic and no rounding into bf16 that
// LLVM would turn into a __truncsfbf2/__truncdfbf2 call: arithmetic and math
// run in f32, f32 -> bf16 rounds to nearest even in integer arithmetic, f64
// and 64-bit integers reach it through an f32 rounded to odd.
// RUN: nxc-opt %s -nxc-expand-narrow-floats | FileCheck %s

// bf16 -> f32 is a shift; f32 -> bf16 adds 0x7FFF plus the lowest kept bit,
// and NaN keeps its sign with the quiet bit set.
// CHECK-LABEL: func.func @add
// CHECK-NOT: arith.addf {{.*}} : bf16
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : i32
// CHECK-DAG: %[[BIAS:.*]] = arith.constant 32767 : i32
// CHECK-DAG: %[[QUIET:.*]] = arith.constant 64 : i32
// CHECK: arith.shli %{{.*}}, %[[C16]] : i32
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: %[[BITS:.*]] = arith.bitcast %[[SUM]] : f32 to i32
// CHECK: %[[HIGH:.*]] = arith.shrui %[[BITS]], %[[C16]] : i32
// CHECK: %[[LSB:.*]] = arith.andi %[[HIGH]], %{{.*}} : i32
// CHECK: %[[B:.*]] = arith.addi %[[LSB]], %[[BIAS]] : i32
// CHECK: %[[R:.*]] = arith.addi %[[BITS]], %[[B]] : i32
// CHECK: %[[RS:.*]] = arith.shrui %[[R]], %[[C16]] : i32
// CHECK: %[[NAN:.*]] = arith.ori %[[HIGH]], %[[QUIET]] : i32
// CHECK: %[[ISNAN:.*]] = arith.cmpf uno, %[[SUM]], %[[SUM]] : f32
// CHECK: %[[SEL:.*]] = arith.select %[[ISNAN]], %[[NAN]], %[[RS]] : i32
// CHECK: %[[T:.*]] = arith.trunci %[[SEL]] : i32 to i16
// CHECK: arith.bitcast %[[T]] : i16 to bf16
func.func @add(%a: bf16, %b: bf16) -> bf16 {
  %0 = arith.addf %a, %b : bf16
  return %0 : bf16
}

// f64 -> bf16: f64 -> f32, one step toward zero where that rounded away,
// the last bit set where it was inexact; then f32 -> bf16.
// CHECK-LABEL: func.func @from_f64
// CHECK: %[[F:.*]] = arith.truncf %[[X:.*]] : f64 to f32
// CHECK: %[[BACK:.*]] = arith.extf %[[F]] : f32 to f64
// CHECK: arith.cmpf ogt
// CHECK: arith.subi
// CHECK: arith.cmpf one, %[[BACK]], %[[X]] : f64
// CHECK: arith.ori
// CHECK-NOT: arith.truncf {{.*}} to bf16
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
func.func @from_f64(%x: f64) -> bf16 {
  %0 = arith.truncf %x : f64 to bf16
  return %0 : bf16
}

// 64-bit integers: the magnitude, a sticky bit from 2^53 up, an exact f64.
// CHECK-LABEL: func.func @from_i64
// CHECK: arith.cmpi slt
// CHECK: arith.andi %{{.*}}, %c4095_i64
// CHECK: arith.cmpi uge, %{{.*}}, %c9007199254740992_i64
// CHECK: arith.sitofp %{{.*}} : i64 to f64
// CHECK-NOT: arith.sitofp {{.*}} to bf16
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
func.func @from_i64(%x: i64) -> bf16 {
  %0 = arith.sitofp %x : i64 to bf16
  return %0 : bf16
}

// Math and comparisons run in f32; bf16 -> f64 goes through f32.
// CHECK-LABEL: func.func @math
// CHECK: math.exp %{{.*}} : f32
// CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK-NOT: bf16 to f64
func.func @math(%a: bf16, %b: bf16) -> (bf16, i1, f64) {
  %0 = math.exp %a : bf16
  %1 = arith.cmpf olt, %a, %b : bf16
  %2 = arith.extf %a : bf16 to f64
  return %0, %1, %2 : bf16, i1, f64
}

// Constants, selects and bitcasts only move bits and stay.
// CHECK-LABEL: func.func @moves
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : bf16
func.func @moves(%p: i1, %a: bf16) -> bf16 {
  %c = arith.constant 1.5 : bf16
  %0 = arith.select %p, %a, %c : bf16
  return %0 : bf16
}
