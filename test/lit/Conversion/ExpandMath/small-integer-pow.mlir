// pow of an f32 value widened to f64 with a constant integer exponent in
// [-4, 4] becomes products (and a quotient for negative exponents) in f64;
// other narrow powers rounded back to f32 become nxc's own 2^(y log2|x|)
// (no call); pow of a value that is f64 itself, or whose f64 result is used
// as such, keeps the call.
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

// A constant exponent folds the general expansion down to its products:
// |x| (|x|^2)^2 with x's sign.
// CHECK-LABEL: func.func @fifth
// CHECK: %[[A:.*]] = math.absf
// CHECK: %[[S:.*]] = arith.mulf %[[A]], %[[A]] : f64
// CHECK: %[[Q:.*]] = arith.mulf %[[S]], %[[S]] : f64
// CHECK: arith.mulf %[[A]], %[[Q]] : f64
// CHECK-NOT: math.powf
// CHECK-NOT: math.sqrt
// CHECK: return
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

// CHECK-LABEL: func.func @narrow_exponent
// CHECK-NOT: math.powf
// CHECK: math.sqrt
// CHECK-NOT: math.powf
// CHECK: arith.truncf %{{.*}} : f64 to f32
func.func @narrow_exponent(%x: f32, %y: f32) -> f32 {
  %w = arith.extf %x : f32 to f64
  %v = arith.extf %y : f32 to f64
  %p = math.powf %w, %v : f64
  %r = arith.truncf %p : f64 to f32
  return %r : f32
}

// CHECK-LABEL: func.func @wide_result
// CHECK: math.powf
func.func @wide_result(%x: f32, %y: f32) -> f64 {
  %w = arith.extf %x : f32 to f64
  %v = arith.extf %y : f32 to f64
  %p = math.powf %w, %v : f64
  return %p : f64
}

// CHECK-LABEL: func.func @wide_constant
// CHECK: math.powf
func.func @wide_constant(%x: f32) -> f32 {
  %c = arith.constant 0.1 : f64
  %w = arith.extf %x : f32 to f64
  %p = math.powf %w, %c : f64
  %r = arith.truncf %p : f64 to f32
  return %r : f32
}
