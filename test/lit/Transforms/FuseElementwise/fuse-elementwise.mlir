// nxc-fuse-elementwise fuses cheap element-wise producers into every user,
// up to four users, even when one of them is a reduction; an expensive
// producer with several users (exp, a division) is stored once, unless
// recompute-expensive is set (the GPU pipeline); reductions and layout copies
// marked nxc.keep_layout stay where they are.
// RUN: nxc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(nxc-fuse-elementwise))' | FileCheck %s
// RUN: nxc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(nxc-fuse-elementwise{recompute-expensive}))' | FileCheck %s --check-prefix=GPU

#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

// A chain broadcast -> subtract -> exp becomes one loop that reads the
// scalar through a rank-0 map: no temporary tensor is left.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SC:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[M:.*]]: tensor<f32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[SC]], #[[ID]]], iterator_types = ["parallel"]}
// CHECK-SAME: ins(%[[X]], %[[M]] : tensor<4xf32>, tensor<f32>)
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @chain(%x: tensor<4xf32>, %m: tensor<f32>) -> tensor<4xf32> {
  %e0 = tensor.empty() : tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%m : tensor<f32>) outs(%e0 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %b : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %s = arith.subf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%d : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

// softmax's shape: exp(x) feeds both the sum and the division. On the CPU
// it is computed once and stored; with recompute-expensive it is recomputed
// in both users, so the result needs no buffer for exp(x).
// CHECK-LABEL: func.func @two_users
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[X]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[EXP]] : tensor<4xf32>)
// CHECK-NOT: math.exp
// CHECK: %[[DIV:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[EXP]], %[[SUM]] : tensor<4xf32>, tensor<f32>)
// CHECK-NOT: math.exp
// CHECK: return %[[DIV]]
// GPU-LABEL: func.func @two_users
// GPU-SAME: (%[[X:.*]]: tensor<4xf32>)
// GPU: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[X]] : tensor<4xf32>)
// GPU: math.exp
// GPU: arith.addf
// GPU: %[[DIV:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[X]], %[[SUM]] : tensor<4xf32>, tensor<f32>)
// GPU: math.exp
// GPU: arith.divf
// GPU-NOT: linalg.generic
// GPU: return %[[DIV]]
func.func @two_users(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e0 = tensor.empty() : tensor<4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]}
      ins(%exp : tensor<4xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %out: f32):
    %s = arith.addf %out, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %e2 = tensor.empty() : tensor<4xf32>
  %div = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel"]}
      ins(%exp, %sum : tensor<4xf32>, tensor<f32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  return %div : tensor<4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Four users (the limit): a cheap producer (x * x) is recomputed in each
// and its loop is gone.
// CHECK-LABEL: func.func @four_users
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.subf
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.divf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @four_users(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.mulf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.addf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.mulf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.subf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.divf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r0, %r1, %r2, %r3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Five users are too many: the producer stays and is read by all five.
// CHECK-LABEL: func.func @five_users
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK-COUNT-5: linalg.generic {{.*}} ins(%[[P]] : tensor<4xf32>)
func.func @five_users(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.mulf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.addf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.mulf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.subf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.divf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r0, %r1, %r2, %r3, %r4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#swap = affine_map<(d0, d1) -> (d1, d0)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// A layout copy made for a contraction keeps its own loop.
// CHECK-LABEL: func.func @keep_layout
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x2xf32>) outs(%{{.*}} : tensor<2x8xf32>) attrs = {nxc.keep_layout}
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[T]] : tensor<3x8xf32>, tensor<2x8xf32>)
func.func @keep_layout(%x: tensor<3x8xf32>, %w: tensor<8x2xf32>) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %t = linalg.generic {indexing_maps = [#swap, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<8x2xf32>) outs(%e : tensor<2x8xf32>) attrs = {nxc.keep_layout} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<3x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3x2xf32>) -> tensor<3x2xf32>
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %t : tensor<3x8xf32>, tensor<2x8xf32>) outs(%acc : tensor<3x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// A contraction reads its operand once per output column (a map that is not
// a permutation of its loops). A sigmoid feeding it (exp, division) is
// stored, not recomputed 8 times per element; so is an add: the contraction
// stays a plain multiply-accumulate, which runs as register blocks.
#a2 = affine_map<(d0, d1) -> (d0, d1)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d1)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @contraction_operand
// CHECK: %[[S:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[S]], %{{.*}} : tensor<4x16xf32>, tensor<16x8xf32>)
// CHECK-NOT: math.exp
// CHECK: return
// CHECK-LABEL: func.func @contraction_cheap_operand
// CHECK: %[[A:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME: ins(%[[A]], %{{.*}} : tensor<4x16xf32>, tensor<16x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
func.func @contraction_operand(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %one = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<4x16xf32>
  %s = linalg.generic {indexing_maps = [#a2, #a2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x16xf32>) outs(%e0 : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %m = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%s, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %o, %p : f32
    linalg.yield %q : f32
  } -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}
func.func @contraction_cheap_operand(%x: tensor<4x16xf32>, %y: tensor<4x16xf32>, %w: tensor<16x8xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e0 = tensor.empty() : tensor<4x16xf32>
  %s = linalg.generic {indexing_maps = [#a2, #a2, #a2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e0 : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %m = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%s, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %o, %p : f32
    linalg.yield %q : f32
  } -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}

// -----

// Layer norm's shape: mean = sum / n is stored (a division read through a
// broadcast), but centered = x - mean, which feeds both the variance sum
// and the output, is still fused into both: a broadcast input is not a
// chain of multi-use values. No full-size temporary is left.
#a2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#rows = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @layer_norm_shape
// CHECK: %[[MEAN:.*]] = linalg.generic
// CHECK: arith.divf
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%{{.*}}, %[[MEAN]] : tensor<4x8xf32>, tensor<4x1xf32>)
// CHECK: arith.subf
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%{{.*}}, %[[MEAN]], %{{.*}} : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
// CHECK: arith.subf
// CHECK-NOT: linalg.generic
func.func @layer_norm_shape(%x: tensor<4x8xf32>, %sum: tensor<4x1xf32>, %var0: tensor<4xf32>, %scale: tensor<4x1xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %n = arith.constant 8.0 : f32
  %e0 = tensor.empty() : tensor<4x1xf32>
  %mean = linalg.generic {indexing_maps = [#a2, #a2], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<4x1xf32>) outs(%e0 : tensor<4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %n : f32
    linalg.yield %d : f32
  } -> tensor<4x1xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [#a2, #row, #a2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  %v = linalg.generic {indexing_maps = [#a2, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%c : tensor<4x8xf32>) outs(%var0 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %o, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#a2, #row, #a2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %scale : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %p = arith.mulf %a, %s : f32
    linalg.yield %p : f32
  } -> tensor<4x8xf32>
  return %v, %y : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// A scalar broadcast to a shape (a body that only yields a constant) is
// copied into all of its users, however many: no buffer of one repeated
// value is stored and read back.
// CHECK-LABEL: func.func @broadcast_constant
// CHECK-NOT: ins(%{{.*}}, %{{.*}} :
// CHECK-COUNT-5: arith.mulf %{{.*}}, %cst : f32
// CHECK: return
// GPU-LABEL: func.func @broadcast_constant
#bc = affine_map<(d0) -> (d0)>
func.func @broadcast_constant(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %c = arith.constant 1.5 : f32
  %e = tensor.empty() : tensor<8xf32>
  %k = linalg.generic {indexing_maps = [#bc], iterator_types = ["parallel"]} outs(%e : tensor<8xf32>) {
  ^bb0(%o: f32):
    linalg.yield %c : f32
  } -> tensor<8xf32>
  %r0 = linalg.generic {indexing_maps = [#bc, #bc, #bc], iterator_types = ["parallel"]} ins(%x, %k : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %r1 = linalg.generic {indexing_maps = [#bc, #bc, #bc], iterator_types = ["parallel"]} ins(%r0, %k : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %r2 = linalg.generic {indexing_maps = [#bc, #bc, #bc], iterator_types = ["parallel"]} ins(%r1, %k : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %r3 = linalg.generic {indexing_maps = [#bc, #bc, #bc], iterator_types = ["parallel"]} ins(%r2, %k : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %r4 = linalg.generic {indexing_maps = [#bc, #bc, #bc], iterator_types = ["parallel"]} ins(%r3, %k : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %r0, %r1, %r2, %r3, %r4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
