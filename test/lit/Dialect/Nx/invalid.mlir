// The verifiers of nx.broadcast, nx.cond and nx.while reject malformed ops
// with their own messages.
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
