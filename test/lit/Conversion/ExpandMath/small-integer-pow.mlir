// pow of an f32 value widened to f64 with a constant integer exponent in
// [-4, 4] becomes products (and a quotient for negative exponents) in f64;
// other exponents, and pow of a value that is f64 itself (whose products
// would round more often than pow), keep the call.
// RUN: nxc-opt %s --nxc-expand-math | FileCheck %s

// CHECK-LABEL: func.func @cube
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK: %[[S:.*]] = arith.mulf %[[W]], %[[W]] : f64
// CHECK: arith.mulf %[[S]], %[[W]] : f64
// CHECK-NOT: math.powf
func.func @cube(%x: f32) -> f32 {
  %c = arith.constant 3.0 : f64
  %w = arith.extf %x : f32 to f64
  %p = math.powf %w, %c : f64
  %r = arith.truncf %p : f64 to f32
  return %r : f32
}

// CHECK-LABEL: func.func @inverse_square
// CHECK: %[[W:.*]] = arith.extf
// CHECK: %[[S:.*]] = arith.mulf %[[W]], %[[W]] : f64
// CHECK: arith.divf %{{.*}}, %[[S]] : f64
// CHECK-NOT: math.powf
func.func @inverse_square(%x: f32) -> f32 {
  %c = arith.constant -2.0 : f64
  %w = arith.extf %x : f32 to f64
  %p = math.powf %w, %c : f64
  %r = arith.truncf %p : f64 to f32
  return %r : f32
}

// CHECK-LABEL: func.func @fifth
// CHECK: math.powf
func.func @fifth(%x: f32) -> f32 {
  %c = arith.constant 5.0 : f64
  %w = arith.extf %x : f32 to f64
  %p = math.powf %w, %c : f64
  %r = arith.truncf %p : f64 to f32
  return %r : f32
}

// CHECK-LABEL: func.func @wide
// CHECK: math.powf
func.func @wide(%x: f64) -> f64 {
  %c = arith.constant 3.0 : f64
  %p = math.powf %x, %c : f64
  return %p : f64
}
