//===- NxOps.td - the nx dialect ---------------------------------*- tablegen -*-===//
//
// The nx dialect: Nx's operations with Nx's semantics made explicit. Every value
// is a statically shaped ranked tensor whose element type is Nx's own type
// (si8..si64, ui8..ui64, f16, bf16, f32, f64; pred is ui8). Sema has already
// resolved implicit broadcasting and type promotion into explicit nx.broadcast
// and nx.as_type ops, so element-wise ops see operands of one type and shape and
// lowering never has to guess.
//
//===----------------------------------------------------------------------===//

#ifndef NXC_DIALECT_NX_OPS
#define NXC_DIALECT_NX_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Nx_Dialect : Dialect {
  let name = "nx";
  let summary = "Nx's defn operations on statically shaped tensors";
  let description = [{
    Ops are named as in Nx (`Nx.subtract` is `nx.subtract`), so that a printed
    module reads like Nx's `Nx.Defn.Expr` listing.
  }];
  let cppNamespace = "::nxc::nx";
}

class Nx_Op<string mnemonic, list<Trait> traits = []>
    : Op<Nx_Dialect, mnemonic, !listconcat(traits, [Pure])>;

//===----------------------------------------------------------------------===//
// Element-wise ops
//===----------------------------------------------------------------------===//

// Nx's element types. Every nx value is a statically shaped tensor of one of
// them; the element-wise ops below also state which of them they take.
def Nx_IntegerType : AnyTypeOf<[SI8, SI16, SI32, SI64, UI8, UI16, UI32, UI64], "an Nx integer type">;
def Nx_FloatType : AnyTypeOf<[F8E5M2, F8E4M3FN, F16, BF16, F32, F64], "an Nx float type">;
def Nx_Tensor : StaticShapeTensorOf<[Nx_IntegerType, Nx_FloatType]>;
def Nx_FloatTensor : StaticShapeTensorOf<[Nx_FloatType]>;
def Nx_IntegerTensor : StaticShapeTensorOf<[Nx_IntegerType]>;
def Nx_PredTensor : StaticShapeTensorOf<[UI8]>;

// Binary element-wise ops on operands of one type; the result has the
// operands' shape and, unless `resultType` says u8, their type.
class Nx_BinaryOp<string mnemonic, string doc, Type operandType = Nx_Tensor, list<Trait> traits = [SameOperandsAndResultType]>
    : Nx_Op<mnemonic, !listconcat(traits, [SameTypeOperands, SameOperandsAndResultShape, Elementwise])> {
  let summary = doc;
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs Nx_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
}
class Nx_FloatBinaryOp<string mnemonic, string doc> : Nx_BinaryOp<mnemonic, doc, Nx_FloatTensor>;
class Nx_IntegerBinaryOp<string mnemonic, string doc> : Nx_BinaryOp<mnemonic, doc, Nx_IntegerTensor>;
// Comparisons and logical ops: any operand type, result u8 (0 or 1).
class Nx_CompareOp<string mnemonic, string doc> : Nx_BinaryOp<mnemonic, doc, Nx_Tensor, []> {
  let results = (outs Nx_PredTensor:$result);
}

def Nx_AddOp : Nx_BinaryOp<"add", "Nx.add: lhs + rhs">;
def Nx_SubtractOp : Nx_BinaryOp<"subtract", "Nx.subtract: lhs - rhs">;
def Nx_MultiplyOp : Nx_BinaryOp<"multiply", "Nx.multiply: lhs * rhs">;
def Nx_DivideOp : Nx_FloatBinaryOp<"divide", "Nx.divide: lhs / rhs on floats">;
def Nx_PowOp : Nx_BinaryOp<"pow", "Nx.pow: lhs ** rhs">;
def Nx_RemainderOp : Nx_BinaryOp<"remainder", "Nx.remainder: sign of the dividend">;
def Nx_QuotientOp : Nx_IntegerBinaryOp<"quotient", "Nx.quotient: integer division toward zero">;
def Nx_Atan2Op : Nx_FloatBinaryOp<"atan2", "Nx.atan2">;
def Nx_MaxOp : Nx_BinaryOp<"max", "Nx.max: NaN-propagating maximum">;
def Nx_MinOp : Nx_BinaryOp<"min", "Nx.min: NaN-propagating minimum">;
def Nx_BitwiseAndOp : Nx_IntegerBinaryOp<"bitwise_and", "Nx.bitwise_and">;
def Nx_BitwiseOrOp : Nx_IntegerBinaryOp<"bitwise_or", "Nx.bitwise_or">;
def Nx_BitwiseXorOp : Nx_IntegerBinaryOp<"bitwise_xor", "Nx.bitwise_xor">;
def Nx_LeftShiftOp : Nx_IntegerBinaryOp<"left_shift", "Nx.left_shift">;
def Nx_RightShiftOp : Nx_IntegerBinaryOp<"right_shift", "Nx.right_shift (arithmetic on signed)">;
def Nx_EqualOp : Nx_CompareOp<"equal", "Nx.equal, u8 result">;
def Nx_NotEqualOp : Nx_CompareOp<"not_equal", "Nx.not_equal, u8 result">;
def Nx_LessOp : Nx_CompareOp<"less", "Nx.less, u8 result">;
def Nx_LessEqualOp : Nx_CompareOp<"less_equal", "Nx.less_equal, u8 result">;
def Nx_GreaterOp : Nx_CompareOp<"greater", "Nx.greater, u8 result">;
def Nx_GreaterEqualOp : Nx_CompareOp<"greater_equal", "Nx.greater_equal, u8 result">;
def Nx_LogicalAndOp : Nx_CompareOp<"logical_and", "Nx.logical_and, u8 result">;
def Nx_LogicalOrOp : Nx_CompareOp<"logical_or", "Nx.logical_or, u8 result">;
def Nx_LogicalXorOp : Nx_CompareOp<"logical_xor", "Nx.logical_xor, u8 result">;

// Unary element-wise ops; the result has the operand's type unless it is u8.
class Nx_UnaryOp<string mnemonic, string doc, Type operandType = Nx_Tensor, list<Trait> traits = [SameOperandsAndResultType]>
    : Nx_Op<mnemonic, !listconcat(traits, [SameOperandsAndResultShape, Elementwise])> {
  let summary = doc;
  let arguments = (ins operandType:$operand);
  let results = (outs Nx_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

// Float functions (Sema converts integer operands to a float type first).
foreach op = [["Exp", "exp"], ["Expm1", "expm1"], ["Log", "log"], ["Log1p", "log1p"],
              ["Sigmoid", "sigmoid"], ["Sin", "sin"], ["Cos", "cos"], ["Tan", "tan"],
              ["Sinh", "sinh"], ["Cosh", "cosh"], ["Tanh", "tanh"], ["Asin", "asin"],
              ["Acos", "acos"], ["Atan", "atan"], ["Asinh", "asinh"], ["Acosh", "acosh"],
              ["Atanh", "atanh"], ["Sqrt", "sqrt"], ["Rsqrt", "rsqrt"], ["Cbrt", "cbrt"],
              ["Erf", "erf"], ["Erfc", "erfc"], ["ErfInv", "erf_inv"], ["Log2", "log2"],
              ["Floor", "floor"], ["Ceil", "ceil"], ["Round", "round"]] in
  def Nx_ # op[0] # Op : Nx_UnaryOp<op[1], "Nx." # op[1], Nx_FloatTensor>;
foreach op = [["Negate", "negate"], ["Abs", "abs"], ["Sign", "sign"]] in
  def Nx_ # op[0] # Op : Nx_UnaryOp<op[1], "Nx." # op[1]>;
foreach op = [["BitwiseNot", "bitwise_not"], ["PopulationCount", "population_count"],
              ["CountLeadingZeros", "count_leading_zeros"]] in
  def Nx_ # op[0] # Op : Nx_UnaryOp<op[1], "Nx." # op[1], Nx_IntegerTensor>;
// Predicates: u8 result.
foreach op = [["LogicalNot", "logical_not"], ["IsNan", "is_nan"], ["IsInfinity", "is_infinity"]] in
  def Nx_ # op[0] # Op : Nx_UnaryOp<op[1], "Nx." # op[1] # ", u8 result", Nx_Tensor, []> {
    let results = (outs Nx_PredTensor:$result);
  }

def Nx_AsTypeOp : Nx_Op<"as_type", [SameOperandsAndResultShape]> {
  let summary = "Nx.as_type: element type conversion";
  let arguments = (ins Nx_Tensor:$operand);
  let results = (outs Nx_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def Nx_BitcastOp : Nx_Op<"bitcast", [SameOperandsAndResultShape]> {
  let summary = "Nx.bitcast: the same bits as another type of the same width";
  let arguments = (ins Nx_Tensor:$operand);
  let results = (outs Nx_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
}

def Nx_SelectOp : Nx_Op<"select"> {
  let summary = "Nx.select: pred != 0 ? on_true : on_false (all one shape)";
  let arguments = (ins Nx_Tensor:$pred, Nx_Tensor:$on_true,
                       Nx_Tensor:$on_false);
  let results = (outs Nx_Tensor:$result);
  let assemblyFormat = [{
    $pred `,` $on_true `,` $on_false attr-dict `:` type($pred) `,` type($on_true) `,` type($on_false) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Constants and shape ops
//===----------------------------------------------------------------------===//

def Nx_ConstantOp : Nx_Op<"constant", [ConstantLike]> {
  let summary = "a constant tensor (Nx.tensor, or a number literal)";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Nx_Tensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Nx_IotaOp : Nx_Op<"iota"> {
  let summary = "Nx.iota: counts along axes[0], or over the whole tensor (row-major) when axes is empty";
  let arguments = (ins DenseI64ArrayAttr:$axes);
  let results = (outs Nx_Tensor:$result);
  let assemblyFormat = "`axes` `=` $axes attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Nx_BroadcastOp : Nx_Op<"broadcast"> {
  let summary = "Nx.broadcast: operand dim i goes to result axis axes[i]";
  let description = [{
    Each operand dimension is either 1 (repeated) or equal to the result
    dimension it maps to; `axes` is strictly increasing.
  }];
  let arguments = (ins Nx_Tensor:$operand, DenseI64ArrayAttr:$axes);
  let results = (outs Nx_Tensor:$result);
  let assemblyFormat = "$operand `,` `axes` `=` $axes attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
}

def Nx_ReshapeOp : Nx_Op<"reshape"> {
  let summary = "Nx.reshape: same elements in row-major order, new shape";
  let arguments = (ins Nx_Tensor:$operand);
  let results = (outs Nx_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
}

def Nx_TransposeOp : Nx_Op<"transpose"> {
  let summary = "Nx.transpose: result dim i is operand dim axes[i]";
  let arguments = (ins Nx_Tensor:$operand, DenseI64ArrayAttr:$axes);
  let results = (outs Nx_Tensor:$result);
  let assemblyFormat = "$operand `,` `axes` `=` $axes attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and contractions
//===----------------------------------------------------------------------===//

class Nx_ReduceOp<string mnemonic, string doc> : Nx_Op<mnemonic> {
  let summary = doc # " over `axes` (the reduced axes are removed)";
  let arguments = (ins Nx_Tensor:$operand, DenseI64ArrayAttr:$axes);
  let results = (outs Nx_Tensor:$result);
  let assemblyFormat = "$operand `,` `axes` `=` $axes attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
}

def Nx_SumOp : Nx_ReduceOp<"sum", "Nx.sum">;
def Nx_ProductOp : Nx_ReduceOp<"product", "Nx.product">;
def Nx_ReduceMaxOp : Nx_ReduceOp<"reduce_max", "Nx.reduce_max (NaN-propagating)">;
def Nx_ReduceMinOp : Nx_ReduceOp<"reduce_min", "Nx.reduce_min (NaN-propagating)">;
def Nx_AllOp : Nx_ReduceOp<"all", "Nx.all (u8)">;
def Nx_AnyOp : Nx_ReduceOp<"any", "Nx.any (u8)">;

def Nx_DotOp : Nx_Op<"dot", [SameOperandsElementType]> {
  let summary = "Nx.dot/6: contraction with batch axes";
  let description = [{
    Contracts `lhs_contract[i]` with `rhs_contract[i]`. The result holds the
    batch dims, then lhs's free dims, then rhs's free dims (Nx's order).
  }];
  let arguments = (ins Nx_Tensor:$lhs, Nx_Tensor:$rhs,
                       DenseI64ArrayAttr:$lhs_contract, DenseI64ArrayAttr:$lhs_batch,
                       DenseI64ArrayAttr:$rhs_contract, DenseI64ArrayAttr:$rhs_batch);
  let results = (outs Nx_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $lhs_contract `,` $lhs_batch `,` $rhs `,` $rhs_contract `,` $rhs_batch attr-dict
    `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Slicing, concatenation, padding, reversal
//===----------------------------------------------------------------------===//

def Nx_SliceOp : Nx_Op<"slice"> {
  let summary = "Nx.slice: start_indices (clamped so the slice fits), lengths, strides";
  let description = [{
    A start of INT64_MIN (kDynamicSliceStart, include/nxc/Sema/Op.h; MLIR's
    ShapedType::kDynamic) is dynamic: the next scalar of `start_tensors`
    supplies it at run time, clamped to [0, dim - length]. Result dim i is
    ceil(lengths[i] / strides[i]).
  }];
  let arguments = (ins Nx_Tensor:$operand, Variadic<Nx_Tensor>:$start_tensors,
                       DenseI64ArrayAttr:$start_indices, DenseI64ArrayAttr:$lengths,
                       DenseI64ArrayAttr:$strides);
  let results = (outs Nx_Tensor:$result);
  // Starts as a mixed list: `nx.slice %x[%i : tensor<si32>, 0] {lengths = ..., strides = ...}`.
  let assemblyFormat = [{
    $operand custom<StartList>($start_tensors, $start_indices, type($start_tensors)) attr-dict
    `:` type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Nx_PutSliceOp : Nx_Op<"put_slice"> {
  let summary = "Nx.put_slice: operand with `update` written at start_indices (clamped)";
  let arguments = (ins Nx_Tensor:$operand, Nx_Tensor:$update,
                       Variadic<Nx_Tensor>:$start_tensors, DenseI64ArrayAttr:$start_indices);
  let results = (outs Nx_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` $update custom<StartList>($start_tensors, $start_indices, type($start_tensors)) attr-dict
    `:` type($operand) `,` type($update) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Nx_ConcatenateOp : Nx_Op<"concatenate"> {
  let summary = "Nx.concatenate along axes[0]";
  let arguments = (ins Variadic<Nx_Tensor>:$inputs, DenseI64ArrayAttr:$axes);
  let results = (outs Nx_Tensor:$result);
  let hasVerifier = 1;
}

def Nx_PadOp : Nx_Op<"pad"> {
  let summary = "Nx.pad with non-negative low, high and interior padding";
  let arguments = (ins Nx_Tensor:$operand, Nx_Tensor:$value,
                       DenseI64ArrayAttr:$low, DenseI64ArrayAttr:$high, DenseI64ArrayAttr:$interior);
  let results = (outs Nx_Tensor:$result);
  let hasVerifier = 1;
}

def Nx_ReverseOp : Nx_Op<"reverse"> {
  let summary = "Nx.reverse over axes";
  let arguments = (ins Nx_Tensor:$operand, DenseI64ArrayAttr:$axes);
  let results = (outs Nx_Tensor:$result);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Index reductions and scans
//===----------------------------------------------------------------------===//

class Nx_ArgReduceOp<string mnemonic> : Nx_Op<mnemonic> {
  let summary = "Nx." # mnemonic # " over axes[0]; tie_break[0] is 0 (low) or 1 (high); NaN is extreme";
  let arguments = (ins Nx_Tensor:$operand, DenseI64ArrayAttr:$axes, DenseI64ArrayAttr:$tie_break);
  let results = (outs Nx_Tensor:$result);
  let hasVerifier = 1;
}
def Nx_ArgmaxOp : Nx_ArgReduceOp<"argmax">;
def Nx_ArgminOp : Nx_ArgReduceOp<"argmin">;

class Nx_ScanOp<string mnemonic> : Nx_Op<mnemonic, [SameOperandsAndResultShape]> {
  let summary = "Nx." # mnemonic # " along axes[0] (forward; Sema reverses for reverse: true)";
  let arguments = (ins Nx_Tensor:$operand, DenseI64ArrayAttr:$axes);
  let results = (outs Nx_Tensor:$result);
  let hasVerifier = 1;
}
def Nx_CumulativeSumOp : Nx_ScanOp<"cumulative_sum">;
def Nx_CumulativeProductOp : Nx_ScanOp<"cumulative_product">;
def Nx_CumulativeMaxOp : Nx_ScanOp<"cumulative_max">;
def Nx_CumulativeMinOp : Nx_ScanOp<"cumulative_min">;

//===----------------------------------------------------------------------===//
// Window reductions
//===----------------------------------------------------------------------===//

class Nx_WindowOp<string mnemonic> : Nx_Op<mnemonic> {
  let summary = "Nx." # mnemonic # " over windows of `window_dims` (the operand is already padded)";
  let description = [{ result[o] = reduce over w of operand[o * strides + w * dilations]. }];
  let arguments = (ins Nx_Tensor:$operand, DenseI64ArrayAttr:$window_dims,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations);
  let results = (outs Nx_Tensor:$result);
  let hasVerifier = 1;
}
def Nx_WindowSumOp : Nx_WindowOp<"window_sum">;
def Nx_WindowProductOp : Nx_WindowOp<"window_product">;
def Nx_WindowMaxOp : Nx_WindowOp<"window_max">;
def Nx_WindowMinOp : Nx_WindowOp<"window_min">;

def Nx_ConvOp : Nx_Op<"conv", [SameOperandsElementType]> {
  let summary = "Nx.conv on an already padded and dilated input {batch, in, spatial...}";
  let description = [{
    kernel {out, in / feature_groups, spatial...}; result {batch, out,
    spatial...}: sum over in-group channels and kernel positions of
    input[b, g * in_g + i, s * strides + k * kernel_dilation] * kernel[o, i, k].
  }];
  let arguments = (ins Nx_Tensor:$input, Nx_Tensor:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$kernel_dilation, DenseI64ArrayAttr:$feature_groups);
  let results = (outs Nx_Tensor:$result);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gathers and sorting
//===----------------------------------------------------------------------===//

def Nx_TakeOp : Nx_Op<"take"> {
  let summary = "Nx.take along axes[0]: result = operand dims with that axis replaced by the indices' dims";
  let description = [{ Indices out of range are clamped into it. }];
  let arguments = (ins Nx_Tensor:$operand, Nx_Tensor:$indices, DenseI64ArrayAttr:$axes);
  let results = (outs Nx_Tensor:$result);
  let hasVerifier = 1;
}

def Nx_TakeAlongAxisOp : Nx_Op<"take_along_axis"> {
  let summary = "Nx.take_along_axis along axes[0] (indices have the result's shape; clamped)";
  let arguments = (ins Nx_Tensor:$operand, Nx_Tensor:$indices, DenseI64ArrayAttr:$axes);
  let results = (outs Nx_Tensor:$result);
  let hasVerifier = 1;
}

def Nx_GatherOp : Nx_Op<"gather"> {
  let summary = "Nx.gather: the last dim of indices indexes `axes`; result = indices dims but the last, then the other operand dims";
  let arguments = (ins Nx_Tensor:$operand, Nx_Tensor:$indices, DenseI64ArrayAttr:$axes);
  let results = (outs Nx_Tensor:$result);
  let hasVerifier = 1;
}

def Nx_ArgsortOp : Nx_Op<"argsort"> {
  let summary = "Nx.argsort along axes[0], stable; direction[0] is 0 (asc, NaN last) or 1 (desc, NaN first)";
  let arguments = (ins Nx_Tensor:$operand, DenseI64ArrayAttr:$axes, DenseI64ArrayAttr:$direction);
  let results = (outs Nx_Tensor:$result);
  let hasVerifier = 1;
}

def Nx_IndexedAddOp : Nx_Op<"indexed_add"> {
  let summary = "Nx.indexed_add: operand with updates[i] added at indices[i] (full indices over `axes`)";
  let arguments = (ins Nx_Tensor:$operand, Nx_Tensor:$indices, Nx_Tensor:$updates,
                       DenseI64ArrayAttr:$axes);
  let results = (outs Nx_Tensor:$result);
  let hasVerifier = 1;
}

def Nx_IndexedPutOp : Nx_Op<"indexed_put"> {
  let summary = "Nx.indexed_put: operand with updates[i] written at indices[i] (full indices over `axes`)";
  let arguments = (ins Nx_Tensor:$operand, Nx_Tensor:$indices, Nx_Tensor:$updates,
                       DenseI64ArrayAttr:$axes);
  let results = (outs Nx_Tensor:$result);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

def Nx_CondOp : Op<Nx_Dialect, "cond", [RecursiveMemoryEffects, NoRegionArguments]> {
  let summary = "if/cond on a scalar predicate (non-zero is true)";
  let description = [{
    Runs `then` when `pred` is non-zero, `else` otherwise; each region ends
    in nx.yield of values of the result types.
  }];
  let arguments = (ins Nx_Tensor:$pred);
  let results = (outs Variadic<Nx_Tensor>:$results);
  let regions = (region SizedRegion<1>:$then_region, SizedRegion<1>:$else_region);
  let hasVerifier = 1;
}

def Nx_WhileOp : Op<Nx_Dialect, "while", [RecursiveMemoryEffects]> {
  let summary = "while over a flat loop state";
  let description = [{
    `condition` and `body` take the state as block arguments. `condition`
    yields one scalar (non-zero: run the body again), `body` yields the next
    state. The results are the last state.
  }];
  let arguments = (ins Variadic<Nx_Tensor>:$inits);
  let results = (outs Variadic<Nx_Tensor>:$results);
  let regions = (region SizedRegion<1>:$condition, SizedRegion<1>:$body);
  let hasVerifier = 1;
}

def Nx_PrintValueOp : Op<Nx_Dialect, "print_value", [MemoryEffects<[MemWrite]>]> {
  let summary = "prints tensors when the code runs (print_value in the JIT)";
  let description = [{
    Calls the host's printer: nxc_print_begin with `header` (the label,
    :limit, the container's structure and the leaves' types; see
    nxc/Sema/PrintValue.h), nxc_print_bits for every element of every input
    in row-major order, then nxc_print_end. Only the JIT emits it.
  }];
  let arguments = (ins Variadic<Nx_Tensor>:$inputs, StrAttr:$header);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
}

def Nx_YieldOp : Op<Nx_Dialect, "yield", [Pure, Terminator, ReturnLike,
                                          ParentOneOf<["CondOp", "WhileOp"]>]> {
  let summary = "yields the values of an nx.cond or nx.while region";
  let arguments = (ins Variadic<Nx_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // NXC_DIALECT_NX_OPS
