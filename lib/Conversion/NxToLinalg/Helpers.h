//===- Helpers.h - what the nx -> linalg lowering's families share -*- C++ -*-===//
//
// The scalar computations of element-wise ops (Scalars.cpp) and the builders
// of structured ops on tensors (Structured.cpp) that the pattern families
// use: Elementwise.cpp, Reductions.cpp (dot, reductions, scans, windows,
// convolutions), Tensor.cpp (slices, concatenation, padding, gathers,
// scatters, sorting) and ControlFlow.cpp (cond, while, print_value). Each
// family adds its patterns with its populate function; NxToLinalg.cpp holds
// the pass.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_CONVERSION_NXTOLINALG_HELPERS_H
#define NXC_CONVERSION_NXTOLINALG_HELPERS_H

#include "nxc/Sema/Op.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/DialectConversion.h"

namespace nxc::lowering {

using namespace mlir;

/// f32 sums over more elements than this accumulate in f64.
constexpr int64_t kNarrowSumLimit = 4096;

/// The body of an element-wise linalg.generic: the scalar result from the
/// scalar inputs.
using BodyFn = llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

Type signless(Type t);

bool isUnsigned(Type nxElem);

Type elemOf(Value v);

arith::FastMathFlagsAttr fm(OpBuilder &b);

/// Float arithmetic (fadd, fmul, ... in ScalarMath.h) consists of exact IEEE
/// operations: fusion may recompute a value in several consumers, and every
/// copy must agree (so `x - reduce_max(x)` is never positive). Reductions and
/// dot accumulate with `reassoc contract` (the `Fast` variants), which lets
/// LLVM vectorize them.
Value faddFast(OpBuilder &b, Location l, Value x, Value y);

Value fmulFast(OpBuilder &b, Location l, Value x, Value y);
/// Nx's NaN-propagating max (or min) of two floats, +0 above -0: arith's
/// maximumf/minimumf, but for f64 a comparison and selects (LLVM 22 cannot
/// select its soft-float expansion of the f64 intrinsic for 32-bit Arm).
Value floatExtremum(OpBuilder &b, Location l, Value x, Value y, bool max);

Value toU8(OpBuilder &b, Location l, Value i1);

Value isNonZero(OpBuilder &b, Location l, Value x);

/// Converts scalar `x` from Nx element type `from` to `to` (both nx types).
Value convertScalar(OpBuilder &b, Location l, Value x, Type from, Type to);

/// The scalar computation of element-wise op `name` on signless `args`.
/// `in` is the nx element type of the (first) operand.
FailureOr<Value> scalarOp(OpBuilder &b, Location l, Op op, ValueRange args, Type in);

/// The type a reduction combining with `combine` accumulates elem in: float
/// sums and products (dots and convolutions are sums) of f16 and bf16 in f32
/// (a running f16 sum loses every addend below its 11 bits; Nx's reference
/// backend accumulates in f64 and rounds once); everything else in its own
/// type.
Type accumulatorType(Builder &b, Op combine, Type elem);

Value emptyTensor(OpBuilder &b, Location l, RankedTensorType t);

Value genericOp(OpBuilder &b, Location l, RankedTensorType outType, ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                Value init, AffineMap outMap, ArrayRef<utils::IteratorType> iters, BodyFn body);

Value elementwise(OpBuilder &b, Location l, RankedTensorType outType, ValueRange inputs, BodyFn body);

/// A float x extended to the wider float type acc; x itself otherwise (the
/// same type, or the integers and truth values of all/any).
Value widened(OpBuilder &b, Location l, Value x, Type acc);

/// An accumulated tensor rounded once to outType (itself when it has that type).
Value narrowed(OpBuilder &b, Location l, Value acc, RankedTensorType outType);

/// The identity element of a reduction, as an attribute of signless type t.
TypedAttr reductionInit(OpBuilder &b, Op reduction, Type nxElem, Type t);

Value reductionCombine(OpBuilder &b, Location l, Op reduction, Type nxElem, Value x, Value acc);

/// The Ops.def kind of an nx dialect op (every nx op has one: OpTableTest).
inline Op opKind(Operation *op) { return *opNamed(op->getName().stripDialect().str()); }

Value filled(OpBuilder &b, Location l, RankedTensorType t, TypedAttr init);

Value reshapeTensor(OpBuilder &b, Location l, Value in, RankedTensorType outType);

Value dotGeneric(OpBuilder &b, Location l, Operation *op, ArrayRef<Value> operands, RankedTensorType outType,
                 int64_t longContraction);

/// A linalg.generic with no inputs whose body computes each element from
/// its coordinates (gathers read other tensors with tensor.extract).
Value fromCoordinates(OpBuilder &b, Location l, RankedTensorType outType,
                      llvm::function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> body);

/// The output type of `op`'s single result, converted to signless.
RankedTensorType convertedResult(const TypeConverter *tc, Operation *op);

/// A scalar tensor's value as an i1 (non-zero is true).
Value truthOf(OpBuilder &b, Location l, Value scalarTensor);

/// A dynamic start: the scalar tensor's value as an index, clamped to
/// [0, dim - length] as Nx clamps slice starts.
Value clampedStart(OpBuilder &b, Location l, Value scalarTensor, Type nxElem, int64_t dim, int64_t length);

/// A copy of `t` into a fresh tensor, so that in-place updates never write
/// into a buffer the function does not own (inputs are read-only).
Value freshCopy(OpBuilder &b, Location l, Value t);

/// Offsets of a slice: static starts as attributes, dynamic ones (INT64_MIN)
/// from the next start tensor, clamped so that `lengths` fit.
SmallVector<OpFoldResult> sliceOffsets(OpBuilder &b, Location l, ArrayRef<int64_t> starts, ValueRange nxStarts,
                                       ValueRange startValues, RankedTensorType inType, ArrayRef<int64_t> lengths);

/// The pattern families (benefit 1 for the element-wise table, 2 for the
/// typed patterns, as before).
void populateElementwisePatterns(RewritePatternSet &patterns, const TypeConverter &tc);
void populateReductionPatterns(RewritePatternSet &patterns, const TypeConverter &tc, bool blockedReductions,
                               int64_t longContraction);
void populateTensorPatterns(RewritePatternSet &patterns, const TypeConverter &tc);
void populateControlFlowPatterns(RewritePatternSet &patterns, const TypeConverter &tc);

/// Convolutions as one dot of the input's windows and the kernel (im2col),
/// before the patterns run (the CPU pipeline's conv-as-dot).
void convolutionsAsDots(ModuleOp module);

} // namespace nxc::lowering

#endif // NXC_CONVERSION_NXTOLINALG_HELPERS_H
