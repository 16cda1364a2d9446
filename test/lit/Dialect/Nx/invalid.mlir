// The verifiers of the nx ops reject malformed ops with their own messages:
// element types, attributes and the result type each op infers.
// RUN: nxc-opt %s -split-input-file -verify-diagnostics

func.func @broadcast_axis_count(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'nx.broadcast' op expects one axis per operand dimension}}
  %0 = nx.broadcast %x, axes = [0, 1] : tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_axes_decreasing(%x: tensor<1x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{'nx.broadcast' op axes must be increasing and within the result rank}}
  %0 = nx.broadcast %x, axes = [1, 0] : tensor<1x3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @broadcast_axis_out_of_range(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'nx.broadcast' op axes must be increasing and within the result rank}}
  %0 = nx.broadcast %x, axes = [2] : tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_dim_mismatch(%x: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'nx.broadcast' op operand dimension 0 (4) is neither 1 nor the result dimension 3}}
  %0 = nx.broadcast %x, axes = [1] : tensor<4xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @cond_vector_predicate(%p: tensor<2xui8>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nx.cond' op expects a scalar predicate}}
  %0 = "nx.cond"(%p) ({
    nx.yield %x : tensor<4xf32>
  }, {
    nx.yield %x : tensor<4xf32>
  }) : (tensor<2xui8>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @cond_then_not_yield(%p: tensor<ui8>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nx.cond' op expects its then region to end in nx.yield}}
  %0 = "nx.cond"(%p) ({
    func.return %x : tensor<4xf32>
  }, {
    nx.yield %x : tensor<4xf32>
  }) : (tensor<ui8>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @cond_else_wrong_type(%p: tensor<ui8>, %x: tensor<4xf32>, %y: tensor<4xsi32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nx.cond' op expects its else region to yield 1 values of the result types}}
  %0 = "nx.cond"(%p) ({
    nx.yield %x : tensor<4xf32>
  }, {
    nx.yield %y : tensor<4xsi32>
  }) : (tensor<ui8>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @while_result_types(%x: tensor<4xf32>) -> tensor<4xsi32> {
  // expected-error @+1 {{'nx.while' op expects results of the state's types}}
  %0 = "nx.while"(%x) ({
  ^bb0(%s: tensor<4xf32>):
    %c = nx.constant dense<0> : tensor<ui8> : tensor<ui8>
    nx.yield %c : tensor<ui8>
  }, {
  ^bb0(%s: tensor<4xf32>):
    nx.yield %s : tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xsi32>
  return %0 : tensor<4xsi32>
}

// -----

func.func @while_region_arguments(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nx.while' op expects region arguments of the state's types}}
  %0 = "nx.while"(%x) ({
  ^bb0(%s: tensor<4xf32>, %extra: tensor<f32>):
    %c = nx.constant dense<0> : tensor<ui8> : tensor<ui8>
    nx.yield %c : tensor<ui8>
  }, {
  ^bb0(%s: tensor<4xf32>):
    nx.yield %s : tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @while_condition_not_scalar(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nx.while' op expects its condition region to yield one scalar}}
  %0 = "nx.while"(%x) ({
  ^bb0(%s: tensor<4xf32>):
    %c = nx.less %s, %s : tensor<4xf32> -> tensor<4xui8>
    nx.yield %c : tensor<4xui8>
  }, {
  ^bb0(%s: tensor<4xf32>):
    nx.yield %s : tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @while_body_wrong_state(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nx.while' op expects its body region to yield 1 values of the result types}}
  %0 = "nx.while"(%x) ({
  ^bb0(%s: tensor<4xf32>):
    %c = nx.constant dense<0> : tensor<ui8> : tensor<ui8>
    nx.yield %c : tensor<ui8>
  }, {
  ^bb0(%s: tensor<4xf32>):
    nx.yield %s, %s : tensor<4xf32>, tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @sum_axis_out_of_range(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'nx.sum' op axes: axis 2 is out of range for f32[2][3]}}
  %0 = nx.sum %x, axes = [2] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @sum_wrong_result(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'nx.sum' op expects the result f32[2], got f32[3]}}
  %0 = nx.sum %x, axes = [1] : tensor<2x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @all_not_u8(%x: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'nx.all' op expects the result u8, got f32}}
  %0 = nx.all %x, axes = [0] : tensor<4xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @exp_of_integers(%x: tensor<4xsi32>) -> tensor<4xsi32> {
  // expected-error @+1 {{'nx.exp' op operand #0 must be statically shaped tensor of an Nx float type values}}
  %0 = nx.exp %x : tensor<4xsi32> -> tensor<4xsi32>
  return %0 : tensor<4xsi32>
}

// -----

func.func @less_not_u8(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nx.less' op result #0 must be statically shaped tensor of 8-bit unsigned integer values}}
  %0 = nx.less %a, %b : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @add_result_type(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{'nx.add' op requires the same type for all operands and results}}
  %0 = nx.add %a, %b : tensor<4xf32> -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @dot_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'nx.dot' op cannot pair axis 1 of f32[2][3] with axis 0 of f32[4][5]}}
  %0 = nx.dot %a, [1], [], %b, [0], [] : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @transpose_not_permutation(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'nx.transpose' op axes: axis 1 is repeated}}
  %0 = nx.transpose %x, axes = [1, 1] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'nx.reshape' op cannot reshape f32[2][3] to f32[5]}}
  %0 = nx.reshape %x : tensor<2x3xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @slice_start_out_of_range(%x: tensor<6xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'nx.slice' op start_indices: start 4 on axis 0 does not fit 3 elements of f32[6]}}
  %0 = "nx.slice"(%x) <{start_indices = array<i64: 4>, lengths = array<i64: 3>, strides = array<i64: 1>}>
       : (tensor<6xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @scatter_partial_axes(%x: tensor<3x4xf32>, %i: tensor<2x1xsi64>, %u: tensor<2xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'nx.indexed_add' op axes: expects every axis of f32[3][4], got 1}}
  %0 = "nx.indexed_add"(%x, %i, %u) <{axes = array<i64: 0>}>
       : (tensor<3x4xf32>, tensor<2x1xsi64>, tensor<2xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @window_too_large(%x: tensor<3xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{'nx.window_sum' op window_dims: the window (4 elements with dilation) on axis 0 is larger than f32[3]}}
  %0 = "nx.window_sum"(%x) <{window_dims = array<i64: 4>, strides = array<i64: 1>, dilations = array<i64: 1>}>
       : (tensor<3xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}
