// nxc-expand-math leaves f32 code without any math op that would become a
// libm call: exp (nxc's own) and tanh become polynomials, floor/ceil/round go through an
// integer conversion, tan is expanded first. Only absf and copysign (LLVM
// intrinsics, no libm), powf (nx lowers pow to the C library's f64 pow, for
// accuracy; small integer powers become products: small-integer-pow.mlir)
// and f64 transcendental functions remain.
// RUN: nxc-opt %s -nxc-expand-math | FileCheck %s

// exp: range reduction (n = round(x log2 e) by adding and subtracting
// 1.5 * 2^23, whose bits S then hold n), a polynomial whose Horner steps may
// contract into fused multiply-adds, and 2^n as two powers of two built in
// the exponent bits straight from S: (S >> 1) << 23 is n1 << 23 for
// n1 = n >> 1 and S << 23 is n << 23 (the magic number's bits shift out), so
// 2^n1 = (n1 << 23) + (127 << 23) and 2^(n - n1) = (n << 23) + (254 << 23) -
// bits(2^n1); subnormal results are rounded once by the last product. NaN
// passes the clamps and stays NaN through the polynomial and the products.
// CHECK-LABEL: func.func @exp
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK-NOT: math.exp
// CHECK-NOT: math.floor
// CHECK-NOT: arith.fptosi
// CHECK: %[[MAGIC:.*]] = arith.constant 0x4B400000 : f32
// The low clamp -175.5 gives n = -253 and n1 = -127, whose power of two has
// the bits of +0.0: huge negative arguments come out 0 from a product by
// zero rather than from a product that underflows (slow on x86).
// CHECK: %[[LO:.*]] = arith.constant -1.755000e+02 : f32
// CHECK: arith.cmpf olt, %[[X]], %[[LO]] : f32
// CHECK: %[[SHIFTED:.*]] = arith.addf %{{.*}}, %[[MAGIC]] fastmath<contract> : f32
// CHECK: arith.subf %[[SHIFTED]], %[[MAGIC]] : f32
// CHECK: %[[BITS:.*]] = arith.bitcast %[[SHIFTED]] : f32 to i32
// Range reduction (2 products and 2 differences) and the polynomial of
// degree 6 (6 Horner steps of a product and a sum):
// CHECK-COUNT-16: fastmath<contract> : f32
// CHECK-NOT: fastmath<contract>
// CHECK: %[[H:.*]] = arith.shrsi %[[BITS]], %c1_i32 : i32
// CHECK: %[[N1:.*]] = arith.shli %[[H]], %c23_i32 : i32
// CHECK: %[[P1BITS:.*]] = arith.addi %[[N1]], %c1065353216_i32 : i32
// CHECK: %[[N:.*]] = arith.shli %[[BITS]], %c23_i32 : i32
// CHECK: %[[T:.*]] = arith.addi %[[N]], %c2130706432_i32 : i32
// CHECK: %[[P2BITS:.*]] = arith.subi %[[T]], %[[P1BITS]] : i32
// CHECK: %[[P1:.*]] = arith.bitcast %[[P1BITS]] : i32 to f32
// CHECK: %[[P2:.*]] = arith.bitcast %[[P2BITS]] : i32 to f32
// CHECK: %[[A:.*]] = arith.mulf %{{.*}}, %[[P1]] : f32
// CHECK: %[[B:.*]] = arith.mulf %[[A]], %[[P2]] : f32
// CHECK-NEXT: return %[[B]] : f32
func.func @exp(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

// floor(x) = t - 1 where t = trunc(x) > x; |x| >= 2^23 is already integral
// and passes through, as do NaN and infinities; copysign keeps -0.
// CHECK-LABEL: func.func @floor
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[BIG:.*]] = arith.constant 0x4B000000 : f32
// CHECK: %[[I:.*]] = arith.fptosi %[[X]] : f32 to i32
// CHECK: %[[F:.*]] = arith.sitofp %[[I]] : i32 to f32
// CHECK: %[[SIGNED:.*]] = math.copysign %[[F]], %[[X]] : f32
// CHECK: %[[ABS:.*]] = math.absf %[[X]] : f32
// CHECK: %[[SMALL:.*]] = arith.cmpf olt, %[[ABS]], %[[BIG]] : f32
// CHECK: %[[T:.*]] = arith.select %[[SMALL]], %[[SIGNED]], %[[X]] : f32
// CHECK: %[[ABOVE:.*]] = arith.cmpf ogt, %[[T]], %[[X]] : f32
// CHECK: %[[DOWN:.*]] = arith.subf %[[T]], %[[ONE]] : f32
// CHECK: %[[R:.*]] = arith.select %[[ABOVE]], %[[DOWN]], %[[T]] : f32
// CHECK-NEXT: return %[[R]]
func.func @floor(%x: f32) -> f32 {
  %0 = math.floor %x : f32
  return %0 : f32
}

// round: half away from zero, t + copysign(1, x) where |x - t| >= 0.5.
// CHECK-LABEL: func.func @round
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK-NOT: math.round
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[T:.*]] = arith.select %{{.*}}, %{{.*}}, %[[X]] : f32
// CHECK: %[[D:.*]] = arith.subf %[[X]], %[[T]] : f32
// CHECK: %[[FRAC:.*]] = math.absf %[[D]] : f32
// CHECK: %[[UP:.*]] = arith.cmpf oge, %[[FRAC]], %[[HALF]] : f32
// CHECK: %[[STEP:.*]] = math.copysign %[[ONE]], %[[X]] : f32
// CHECK: %[[MOVED:.*]] = arith.addf %[[T]], %[[STEP]] : f32
// CHECK: arith.select %[[UP]], %[[MOVED]], %[[T]] : f32
func.func @round(%x: f32) -> f32 {
  %0 = math.round %x : f32
  return %0 : f32
}

// f64 ceil too, with 2^52 as the integral limit and an i64 conversion.
// CHECK-LABEL: func.func @ceil64
// CHECK-NOT: math.ceil
// CHECK-DAG: arith.constant 0x4330000000000000 : f64
// CHECK-DAG: arith.fptosi %{{.*}} : f64 to i64
// CHECK: arith.cmpf olt
// CHECK: arith.addf
func.func @ceil64(%x: f64) -> f64 {
  %0 = math.ceil %x : f64
  return %0 : f64
}

// tanh: a rational approximation (one division), linear near zero.
// CHECK-LABEL: func.func @tanh
// CHECK-NOT: math.tanh
// CHECK: %[[Q:.*]] = arith.divf
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[Q]] : f32
func.func @tanh(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  return %0 : f32
}

// tan is expanded (sin/cos) and then approximated; powf is left to the C
// library (exp(y * log(x)) in the same precision loses up to |y log x| ulp).
// CHECK-LABEL: func.func @tan
// CHECK-NOT: math.{{(tan|sin|cos)}}
// CHECK: return
// CHECK-LABEL: func.func @powf
// CHECK: math.powf %{{.*}}, %{{.*}} : f64
// CHECK-NOT: math.{{(exp|log)}}
// CHECK: return
func.func @tan(%x: f32) -> f32 {
  %0 = math.tan %x : f32
  return %0 : f32
}
func.func @powf(%x: f64, %y: f64) -> f64 {
  %0 = math.powf %x, %y : f64
  return %0 : f64
}

// f64 exp has no approximation here (it calls the C math library); sqrt is
// an instruction.
// CHECK-LABEL: func.func @kept
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.sqrt %{{.*}} : f32
func.func @kept(%x: f64, %y: f32) -> (f64, f32) {
  %0 = math.exp %x : f64
  %1 = math.sqrt %y : f32
  return %0, %1 : f64, f32
}
