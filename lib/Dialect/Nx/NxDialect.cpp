//===- NxDialect.cpp - the nx dialect -------------------------------------===//
//
// Registers the nx ops and implements their verifiers: every op checks its
// attributes and infers the result type it must have from its operands, so
// that no lowering sees an op it cannot lower (a graph read from a file goes
// through these checks too). Messages spell types as Nx does (f32[2][3]).
//
//===----------------------------------------------------------------------===//
#include "nxc/Dialect/Nx/NxDialect.h"
#include "nxc/Sema/Op.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace nxc::nx;

#include "nxc/Dialect/Nx/NxOpsDialect.cpp.inc"

void NxDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "nxc/Dialect/Nx/NxOps.cpp.inc"
      >();
}

namespace {

RankedTensorType tensorOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

/// Nx's name of an element type: s32, u8, f32, bf16.
std::string nxElementName(Type t) {
  if (auto it = llvm::dyn_cast<IntegerType>(t)) return (it.isUnsigned() ? "u" : "s") + std::to_string(it.getWidth());
  if (t.isBF16()) return "bf16";
  if (llvm::isa<Float8E4M3FNType>(t)) return "f8_e4m3fn";
  return "f" + std::to_string(t.getIntOrFloatBitWidth());
}

/// Nx's spelling of a tensor type: f32[2][3], s32 for a scalar.
std::string nxTypeName(ArrayRef<int64_t> shape, Type elem) {
  std::string s = nxElementName(elem);
  for (int64_t d : shape) s += "[" + std::to_string(d) + "]";
  return s;
}
std::string nxTypeName(Value v) { return nxTypeName(tensorOf(v).getShape(), tensorOf(v).getElementType()); }

bool isNxInteger(Type t) { return llvm::isa<IntegerType>(t); }

/// Every axis within [0, rank) and none twice; `what` names the attribute.
LogicalResult verifyAxes(Operation *op, StringRef what, ArrayRef<int64_t> axes, Value of) {
  int64_t rank = tensorOf(of).getRank();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= rank)
      return op->emitOpError() << what << ": axis " << axes[i] << " is out of range for " << nxTypeName(of);
    for (size_t j = 0; j < i; ++j)
      if (axes[j] == axes[i]) return op->emitOpError() << what << ": axis " << axes[i] << " is repeated";
  }
  return success();
}

/// Exactly one axis, within the operand's rank.
LogicalResult verifyOneAxis(Operation *op, ArrayRef<int64_t> axes, Value of) {
  if (axes.size() != 1) return op->emitOpError() << "axes: expects one axis, got " << axes.size();
  return verifyAxes(op, "axes", axes, of);
}

/// An attribute with one entry per dimension of `of`.
LogicalResult verifyPerDim(Operation *op, StringRef what, ArrayRef<int64_t> values, Value of, int64_t atLeast) {
  if ((int64_t)values.size() != tensorOf(of).getRank())
    return op->emitOpError() << what << ": expects " << tensorOf(of).getRank() << " values (one per dimension of "
                             << nxTypeName(of) << "), got " << values.size();
  for (int64_t v : values)
    if (v < atLeast) return op->emitOpError() << what << ": expects values of at least " << atLeast << ", got " << v;
  return success();
}

/// The result must be `shape` x `elem`.
LogicalResult verifyResult(Operation *op, ArrayRef<int64_t> shape, Type elem) {
  auto out = tensorOf(op->getResult(0));
  if (out.getShape() != shape || out.getElementType() != elem)
    return op->emitOpError() << "expects the result " << nxTypeName(shape, elem) << ", got "
                             << nxTypeName(out.getShape(), out.getElementType());
  return success();
}

LogicalResult verifyIntegerScalars(Operation *op, StringRef what, ValueRange values) {
  for (Value v : values)
    if (tensorOf(v).getRank() != 0 || !isNxInteger(tensorOf(v).getElementType()))
      return op->emitOpError() << what << ": expects integer scalars, got " << nxTypeName(v);
  return success();
}

/// Static starts (kDynamicSliceStart: the next start tensor) of a `sizes`-sized
/// window into `of`.
LogicalResult verifyStarts(Operation *op, ArrayRef<int64_t> starts, ValueRange startTensors, Value of,
                           ArrayRef<int64_t> sizes) {
  auto t = tensorOf(of);
  if ((int64_t)starts.size() != t.getRank())
    return op->emitOpError() << "start_indices: expects " << t.getRank() << " values, got " << starts.size();
  size_t dynamic = 0;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    if (starts[d] == nxc::kDynamicSliceStart) {
      ++dynamic;
      continue;
    }
    if (starts[d] < 0 || starts[d] > t.getDimSize(d) - sizes[d])
      return op->emitOpError() << "start_indices: start " << starts[d] << " on axis " << d << " does not fit "
                               << sizes[d] << " elements of " << nxTypeName(of);
  }
  if (dynamic != startTensors.size())
    return op->emitOpError() << "expects one start tensor per dynamic start (" << dynamic << "), got "
                             << startTensors.size();
  return verifyIntegerScalars(op, "start tensors", startTensors);
}

SmallVector<int64_t> withoutAxes(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> out;
  for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
    if (!llvm::is_contained(axes, d)) out.push_back(shape[d]);
  return out;
}

LogicalResult verifyIndicesType(Operation *op, Value indices) {
  if (!isNxInteger(tensorOf(indices).getElementType()))
    return op->emitOpError() << "expects integer indices, got " << nxTypeName(indices);
  return success();
}

LogicalResult verifyNonEmptyAxes(Operation *op, Value of, ArrayRef<int64_t> axes) {
  for (int64_t a : axes)
    if (tensorOf(of).getDimSize(a) == 0)
      return op->emitOpError() << "cannot index into the empty axis " << a << " of " << nxTypeName(of);
  return success();
}

/// take, take_along_axis: one axis of a non-empty dimension, integer indices.
LogicalResult verifyTakeOperands(Operation *op, ArrayRef<int64_t> axes) {
  Value operand = op->getOperand(0), indices = op->getOperand(1);
  if (failed(verifyOneAxis(op, axes, operand)) || failed(verifyIndicesType(op, indices))) return failure();
  return verifyNonEmptyAxes(op, operand, axes);
}

/// sum, product, reduce_max, reduce_min (the operand's type), all, any (u8).
LogicalResult verifyReduction(Operation *op, ArrayRef<int64_t> axes) {
  Value in = op->getOperand(0);
  if (failed(verifyAxes(op, "axes", axes, in))) return failure();
  Type elem = llvm::isa<AllOp, AnyOp>(op) ? IntegerType::get(op->getContext(), 8, IntegerType::Unsigned)
                                          : tensorOf(in).getElementType();
  return verifyResult(op, withoutAxes(tensorOf(in).getShape(), axes), elem);
}

/// argmax, argmin: one axis removed, an integer result.
LogicalResult verifyArgReduction(Operation *op, ArrayRef<int64_t> axes, ArrayRef<int64_t> tieBreak) {
  Value in = op->getOperand(0);
  if (failed(verifyOneAxis(op, axes, in))) return failure();
  if (tieBreak.size() != 1 || (tieBreak[0] != 0 && tieBreak[0] != 1))
    return op->emitOpError("tie_break: expects [0] (low) or [1] (high)");
  Type elem = tensorOf(op->getResult(0)).getElementType();
  if (!isNxInteger(elem)) return op->emitOpError() << "expects an integer result, got " << nxElementName(elem);
  return verifyResult(op, withoutAxes(tensorOf(in).getShape(), axes), elem);
}

/// Cumulative ops: one axis; the shape is the operand's (a trait).
LogicalResult verifyScan(Operation *op, ArrayRef<int64_t> axes) {
  if (failed(verifyOneAxis(op, axes, op->getOperand(0)))) return failure();
  return verifyResult(op, tensorOf(op->getOperand(0)).getShape(), tensorOf(op->getOperand(0)).getElementType());
}

/// Window reductions over an already padded operand.
LogicalResult verifyWindow(Operation *op, ArrayRef<int64_t> window, ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilations) {
  Value in = op->getOperand(0);
  if (failed(verifyPerDim(op, "window_dims", window, in, 1)) || failed(verifyPerDim(op, "strides", strides, in, 1)) ||
      failed(verifyPerDim(op, "dilations", dilations, in, 1)))
    return failure();
  SmallVector<int64_t> shape;
  auto t = tensorOf(in);
  for (int64_t d = 0; d < t.getRank(); ++d) {
    int64_t span = (window[d] - 1) * dilations[d] + 1;
    if (span > t.getDimSize(d))
      return op->emitOpError() << "window_dims: the window (" << span << " elements with dilation) on axis " << d
                               << " is larger than " << nxTypeName(in);
    shape.push_back((t.getDimSize(d) - span) / strides[d] + 1);
  }
  return verifyResult(op, shape, t.getElementType());
}

/// indexed_add, indexed_put: indices {n, rank} over all axes, updates {n}.
LogicalResult verifyScatter(Operation *op, ArrayRef<int64_t> axes) {
  Value in = op->getOperand(0), idx = op->getOperand(1), upd = op->getOperand(2);
  auto t = tensorOf(in), it = tensorOf(idx), ut = tensorOf(upd);
  if (failed(verifyAxes(op, "axes", axes, in))) return failure();
  if ((int64_t)axes.size() != t.getRank())
    return op->emitOpError() << "axes: expects every axis of " << nxTypeName(in) << ", got " << axes.size();
  if (failed(verifyIndicesType(op, idx))) return failure();
  if (it.getRank() != 2 || it.getDimSize(1) != (int64_t)axes.size())
    return op->emitOpError() << "expects indices {n, " << axes.size() << "}, got " << nxTypeName(idx);
  if (ut.getRank() != 1 || ut.getDimSize(0) != it.getDimSize(0) || ut.getElementType() != t.getElementType())
    return op->emitOpError() << "expects updates " << nxTypeName({it.getDimSize(0)}, t.getElementType()) << ", got "
                             << nxTypeName(upd);
  return verifyResult(op, t.getShape(), t.getElementType());
}

} // namespace

LogicalResult BitcastOp::verify() {
  Type from = tensorOf(getOperand()).getElementType(), to = tensorOf(getResult()).getElementType();
  if (from.getIntOrFloatBitWidth() != to.getIntOrFloatBitWidth())
    return emitOpError() << "expects types of the same width, got " << nxElementName(from) << " and "
                         << nxElementName(to);
  return success();
}

LogicalResult SelectOp::verify() {
  auto out = tensorOf(getResult());
  if (tensorOf(getPred()).getShape() != out.getShape())
    return emitOpError() << "expects a predicate of the result's shape, got " << nxTypeName(getPred());
  if (getOnTrue().getType() != out || getOnFalse().getType() != out)
    return emitOpError() << "expects both branches of the result type " << nxTypeName(getResult()) << ", got "
                         << nxTypeName(getOnTrue()) << " and " << nxTypeName(getOnFalse());
  return success();
}

LogicalResult ConstantOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError("expects a value of the result type");
  return success();
}

LogicalResult IotaOp::verify() {
  if (getAxes().size() > 1) return emitOpError() << "axes: expects at most one axis, got " << getAxes().size();
  return verifyAxes(*this, "axes", getAxes(), getResult());
}

LogicalResult ReshapeOp::verify() {
  auto in = tensorOf(getOperand()), out = tensorOf(getResult());
  if (in.getNumElements() != out.getNumElements() || in.getElementType() != out.getElementType())
    return emitOpError() << "cannot reshape " << nxTypeName(getOperand()) << " to " << nxTypeName(getResult());
  return success();
}

LogicalResult TransposeOp::verify() {
  auto in = tensorOf(getOperand());
  ArrayRef<int64_t> axes = getAxes();
  if (failed(verifyAxes(*this, "axes", axes, getOperand()))) return failure();
  if ((int64_t)axes.size() != in.getRank())
    return emitOpError() << "axes: expects a permutation of the " << in.getRank() << " axes, got " << axes.size();
  SmallVector<int64_t> shape;
  for (int64_t a : axes) shape.push_back(in.getDimSize(a));
  return verifyResult(*this, shape, in.getElementType());
}

LogicalResult SumOp::verify() { return verifyReduction(*this, getAxes()); }
LogicalResult ProductOp::verify() { return verifyReduction(*this, getAxes()); }
LogicalResult ReduceMaxOp::verify() { return verifyReduction(*this, getAxes()); }
LogicalResult ReduceMinOp::verify() { return verifyReduction(*this, getAxes()); }
LogicalResult AllOp::verify() { return verifyReduction(*this, getAxes()); }
LogicalResult AnyOp::verify() { return verifyReduction(*this, getAxes()); }

LogicalResult DotOp::verify() {
  auto l = tensorOf(getLhs()), r = tensorOf(getRhs());
  ArrayRef<int64_t> lc = getLhsContract(), lb = getLhsBatch(), rc = getRhsContract(), rb = getRhsBatch();
  if (lc.size() != rc.size()) return emitOpError("expects as many lhs_contract as rhs_contract axes");
  if (lb.size() != rb.size()) return emitOpError("expects as many lhs_batch as rhs_batch axes");
  SmallVector<int64_t> lAll(lc), rAll(rc);
  lAll.append(lb.begin(), lb.end());
  rAll.append(rb.begin(), rb.end());
  if (failed(verifyAxes(*this, "lhs axes", lAll, getLhs())) || failed(verifyAxes(*this, "rhs axes", rAll, getRhs())))
    return failure();
  for (size_t i = 0; i < lAll.size(); ++i)
    if (l.getDimSize(lAll[i]) != r.getDimSize(rAll[i]))
      return emitOpError() << "cannot pair axis " << lAll[i] << " of " << nxTypeName(getLhs()) << " with axis "
                           << rAll[i] << " of " << nxTypeName(getRhs());
  SmallVector<int64_t> shape;
  for (int64_t a : lb) shape.push_back(l.getDimSize(a));
  for (int64_t d : withoutAxes(l.getShape(), lAll)) shape.push_back(d);
  for (int64_t d : withoutAxes(r.getShape(), rAll)) shape.push_back(d);
  return verifyResult(*this, shape, l.getElementType());
}

LogicalResult SliceOp::verify() {
  auto in = tensorOf(getOperand());
  ArrayRef<int64_t> lengths = getLengths(), strides = getStrides();
  if (failed(verifyPerDim(*this, "lengths", lengths, getOperand(), 0)) ||
      failed(verifyPerDim(*this, "strides", strides, getOperand(), 1)))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (lengths[d] > in.getDimSize(d))
      return emitOpError() << "lengths: " << lengths[d] << " elements on axis " << d << " do not fit in "
                           << nxTypeName(getOperand());
    shape.push_back((lengths[d] + strides[d] - 1) / strides[d]);
  }
  if (failed(verifyStarts(*this, getStartIndices(), getStartTensors(), getOperand(), lengths))) return failure();
  return verifyResult(*this, shape, in.getElementType());
}

LogicalResult PutSliceOp::verify() {
  auto in = tensorOf(getOperand()), up = tensorOf(getUpdate());
  if (up.getRank() != in.getRank() || up.getElementType() != in.getElementType())
    return emitOpError() << "cannot put " << nxTypeName(getUpdate()) << " into " << nxTypeName(getOperand());
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (up.getDimSize(d) > in.getDimSize(d))
      return emitOpError() << "cannot put " << nxTypeName(getUpdate()) << " into " << nxTypeName(getOperand());
  if (failed(verifyStarts(*this, getStartIndices(), getStartTensors(), getOperand(), up.getShape()))) return failure();
  return verifyResult(*this, in.getShape(), in.getElementType());
}

LogicalResult ConcatenateOp::verify() {
  if (getInputs().empty()) return emitOpError("expects at least one input");
  Value first = getInputs()[0];
  if (failed(verifyOneAxis(*this, getAxes(), first))) return failure();
  int64_t axis = getAxes()[0];
  SmallVector<int64_t> shape(tensorOf(first).getShape());
  shape[axis] = 0;
  for (Value in : getInputs()) {
    auto t = tensorOf(in);
    bool fits = t.getRank() == (int64_t)shape.size() && t.getElementType() == tensorOf(first).getElementType();
    for (int64_t d = 0; fits && d < t.getRank(); ++d) fits = d == axis || t.getDimSize(d) == shape[d];
    if (!fits)
      return emitOpError() << "cannot concatenate " << nxTypeName(in) << " with " << nxTypeName(first) << " on axis "
                           << axis;
    shape[axis] += t.getDimSize(axis);
  }
  return verifyResult(*this, shape, tensorOf(first).getElementType());
}

LogicalResult PadOp::verify() {
  auto in = tensorOf(getOperand());
  if (getValue().getType() != RankedTensorType::get({}, in.getElementType()))
    return emitOpError() << "expects a pad value " << nxElementName(in.getElementType()) << ", got "
                         << nxTypeName(getValue());
  if (failed(verifyPerDim(*this, "low", getLow(), getOperand(), 0)) ||
      failed(verifyPerDim(*this, "high", getHigh(), getOperand(), 0)) ||
      failed(verifyPerDim(*this, "interior", getInterior(), getOperand(), 0)))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t n = in.getDimSize(d);
    shape.push_back(getLow()[d] + getHigh()[d] + (n > 0 ? n + (n - 1) * getInterior()[d] : 0));
  }
  return verifyResult(*this, shape, in.getElementType());
}

LogicalResult ReverseOp::verify() {
  if (failed(verifyAxes(*this, "axes", getAxes(), getOperand()))) return failure();
  return verifyResult(*this, tensorOf(getOperand()).getShape(), tensorOf(getOperand()).getElementType());
}

LogicalResult ArgmaxOp::verify() { return verifyArgReduction(*this, getAxes(), getTieBreak()); }
LogicalResult ArgminOp::verify() { return verifyArgReduction(*this, getAxes(), getTieBreak()); }
LogicalResult CumulativeSumOp::verify() { return verifyScan(*this, getAxes()); }
LogicalResult CumulativeProductOp::verify() { return verifyScan(*this, getAxes()); }
LogicalResult CumulativeMaxOp::verify() { return verifyScan(*this, getAxes()); }
LogicalResult CumulativeMinOp::verify() { return verifyScan(*this, getAxes()); }
LogicalResult WindowSumOp::verify() { return verifyWindow(*this, getWindowDims(), getStrides(), getDilations()); }
LogicalResult WindowProductOp::verify() { return verifyWindow(*this, getWindowDims(), getStrides(), getDilations()); }
LogicalResult WindowMaxOp::verify() { return verifyWindow(*this, getWindowDims(), getStrides(), getDilations()); }
LogicalResult WindowMinOp::verify() { return verifyWindow(*this, getWindowDims(), getStrides(), getDilations()); }

LogicalResult ConvOp::verify() {
  auto x = tensorOf(getInput()), k = tensorOf(getKernel());
  if (!llvm::isa<FloatType>(x.getElementType()))
    return emitOpError() << "expects float operands, got " << nxTypeName(getInput());
  if (x.getRank() < 3 || k.getRank() != x.getRank())
    return emitOpError() << "expects an input {batch, channels, spatial...} and a kernel of its rank, got "
                         << nxTypeName(getInput()) << " and " << nxTypeName(getKernel());
  int64_t spatial = x.getRank() - 2;
  if (getFeatureGroups().size() != 1 || getFeatureGroups()[0] < 1)
    return emitOpError("feature_groups: expects one positive value");
  int64_t groups = getFeatureGroups()[0];
  if (x.getDimSize(1) != groups * k.getDimSize(1) || k.getDimSize(0) % groups != 0)
    return emitOpError() << "the kernel " << nxTypeName(getKernel()) << " does not fit the input "
                         << nxTypeName(getInput()) << " in " << groups << " feature groups";
  if ((int64_t)getStrides().size() != spatial || (int64_t)getKernelDilation().size() != spatial)
    return emitOpError() << "strides, kernel_dilation: expects " << spatial << " values each";
  SmallVector<int64_t> shape = {x.getDimSize(0), k.getDimSize(0)};
  for (int64_t s = 0; s < spatial; ++s) {
    int64_t stride = getStrides()[s], dil = getKernelDilation()[s];
    if (stride < 1 || dil < 1) return emitOpError("strides, kernel_dilation: expects positive values");
    int64_t span = (k.getDimSize(2 + s) - 1) * dil + 1;
    if (span > x.getDimSize(2 + s))
      return emitOpError() << "the kernel " << nxTypeName(getKernel()) << " is larger than the input "
                           << nxTypeName(getInput()) << " on spatial axis " << s;
    shape.push_back((x.getDimSize(2 + s) - span) / stride + 1);
  }
  return verifyResult(*this, shape, x.getElementType());
}

LogicalResult TakeOp::verify() {
  auto t = tensorOf(getOperand()), it = tensorOf(getIndices());
  if (failed(verifyTakeOperands(*this, getAxes()))) return failure();
  int64_t axis = getAxes()[0];
  SmallVector<int64_t> shape(t.getShape().take_front(axis));
  shape.append(it.getShape().begin(), it.getShape().end());
  shape.append(t.getShape().begin() + axis + 1, t.getShape().end());
  return verifyResult(*this, shape, t.getElementType());
}

LogicalResult TakeAlongAxisOp::verify() {
  auto t = tensorOf(getOperand()), it = tensorOf(getIndices());
  if (failed(verifyTakeOperands(*this, getAxes()))) return failure();
  bool fits = it.getRank() == t.getRank();
  for (int64_t d = 0; fits && d < t.getRank(); ++d) fits = d == getAxes()[0] || it.getDimSize(d) == t.getDimSize(d);
  if (!fits)
    return emitOpError() << "expects indices of the shape of " << nxTypeName(getOperand()) << " except on axis "
                         << getAxes()[0] << ", got " << nxTypeName(getIndices());
  return verifyResult(*this, it.getShape(), t.getElementType());
}

LogicalResult GatherOp::verify() {
  auto t = tensorOf(getOperand()), it = tensorOf(getIndices());
  if (failed(verifyAxes(*this, "axes", getAxes(), getOperand())) || failed(verifyIndicesType(*this, getIndices())) ||
      failed(verifyNonEmptyAxes(*this, getOperand(), getAxes())))
    return failure();
  if (it.getRank() < 1 || it.getDimSize(it.getRank() - 1) != (int64_t)getAxes().size())
    return emitOpError() << "expects indices whose last dimension is " << getAxes().size() << " (one per axis), got "
                         << nxTypeName(getIndices());
  SmallVector<int64_t> shape(it.getShape().drop_back());
  for (int64_t d : withoutAxes(t.getShape(), getAxes())) shape.push_back(d);
  return verifyResult(*this, shape, t.getElementType());
}

LogicalResult ArgsortOp::verify() {
  if (failed(verifyOneAxis(*this, getAxes(), getOperand()))) return failure();
  if (getDirection().size() != 1 || (getDirection()[0] != 0 && getDirection()[0] != 1))
    return emitOpError("direction: expects [0] (ascending) or [1] (descending)");
  Type elem = tensorOf(getResult()).getElementType();
  if (!isNxInteger(elem)) return emitOpError() << "expects an integer result, got " << nxElementName(elem);
  return verifyResult(*this, tensorOf(getOperand()).getShape(), elem);
}

LogicalResult IndexedAddOp::verify() { return verifyScatter(*this, getAxes()); }
LogicalResult IndexedPutOp::verify() { return verifyScatter(*this, getAxes()); }

LogicalResult BroadcastOp::verify() {
  auto in = llvm::cast<RankedTensorType>(getOperand().getType());
  auto out = llvm::cast<RankedTensorType>(getResult().getType());
  ArrayRef<int64_t> axes = getAxes();
  if ((int64_t)axes.size() != in.getRank())
    return emitOpError("expects one axis per operand dimension");
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= out.getRank() || (i > 0 && axes[i] <= axes[i - 1]))
      return emitOpError("axes must be increasing and within the result rank");
    int64_t d = in.getDimSize(i);
    if (d != 1 && d != out.getDimSize(axes[i]))
      return emitOpError("operand dimension ") << i << " (" << d
             << ") is neither 1 nor the result dimension " << out.getDimSize(axes[i]);
  }
  return success();
}

static LogicalResult verifyYield(Operation *op, Region &region, TypeRange types, StringRef what) {
  auto yield = llvm::dyn_cast<YieldOp>(region.front().getTerminator());
  if (!yield) return op->emitOpError("expects its ") << what << " region to end in nx.yield";
  if (TypeRange(yield.getValues().getTypes()) != types)
    return op->emitOpError("expects its ")
           << what << " region to yield " << types.size() << " values of the result types";
  return success();
}

LogicalResult CondOp::verify() {
  if (llvm::cast<RankedTensorType>(getPred().getType()).getRank() != 0)
    return emitOpError("expects a scalar predicate");
  if (failed(verifyYield(*this, getThenRegion(), getResultTypes(), "then"))) return failure();
  return verifyYield(*this, getElseRegion(), getResultTypes(), "else");
}

LogicalResult WhileOp::verify() {
  TypeRange state = getInits().getTypes();
  if (TypeRange(getResultTypes()) != state) return emitOpError("expects results of the state's types");
  for (Region *r : {&getCondition(), &getBody()})
    if (TypeRange(r->front().getArgumentTypes()) != state)
      return emitOpError("expects region arguments of the state's types");
  auto yield = llvm::dyn_cast<YieldOp>(getCondition().front().getTerminator());
  if (!yield || yield.getValues().size() != 1 ||
      llvm::cast<RankedTensorType>(yield.getValues()[0].getType()).getRank() != 0)
    return emitOpError("expects its condition region to yield one scalar");
  return verifyYield(*this, getBody(), state, "body");
}

/// custom<StartList>: the starts of slice and put_slice as one mixed list,
/// dynamic ones (kDynamicSliceStart) as the start tensors with their types:
/// `[%i : tensor<si32>, 0]`.
static ParseResult parseStartList(OpAsmParser &parser, SmallVectorImpl<OpAsmParser::UnresolvedOperand> &tensors,
                                  DenseI64ArrayAttr &starts, SmallVectorImpl<Type> &types) {
  return parseDynamicIndexList(parser, tensors, starts, &types);
}
static void printStartList(OpAsmPrinter &printer, Operation *op, OperandRange tensors, DenseI64ArrayAttr starts,
                           TypeRange types) {
  printDynamicIndexList(printer, op, tensors, starts.asArrayRef(), types);
}

#define GET_OP_CLASSES
#include "nxc/Dialect/Nx/NxOps.cpp.inc"
