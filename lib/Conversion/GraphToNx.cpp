//===- GraphToNx.cpp - typed graph to the nx dialect ----------------------===//
//
// One nx op per graph node, in graph order, each with a FileLineColLoc of the
// source expression it came from (or, for a graph read from a file, a NameLoc
// of the node's JSON pointer). Ops are created generically by name
// ("nx." + node.op) and verified at once by the dialect's verifiers, so that
// an error names the node that caused it.
//
//===----------------------------------------------------------------------===//
#include "nxc/Conversion/GraphToNx.h"
#include "nxc/Conversion/ComplexToReal.h"
#include "nxc/Conversion/SubByteIntegers.h"
#include "nxc/Dialect/Nx/NxDialect.h"
#include "nxc/Tensor/Half.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include <functional>

using namespace mlir;

namespace nxc {

Type nxElementType(MLIRContext *ctx, ElemType t) {
  switch (t.kind) {
  case TypeKind::S: return IntegerType::get(ctx, t.bits, IntegerType::Signed);
  case TypeKind::U: return IntegerType::get(ctx, t.bits, IntegerType::Unsigned);
  case TypeKind::BF: return BFloat16Type::get(ctx);
  case TypeKind::F8E4M3FN: return Float8E4M3FNType::get(ctx);
  case TypeKind::C: return ComplexType::get(nxElementType(ctx, t.partType())); // not in the nx dialect
  case TypeKind::F:
    return t.bits == 8    ? (Type)Float8E5M2Type::get(ctx)
           : t.bits == 16 ? (Type)Float16Type::get(ctx)
           : t.bits == 64 ? (Type)Float64Type::get(ctx)
                          : (Type)Float32Type::get(ctx);
  }
  return {};
}

static RankedTensorType tensorType(MLIRContext *ctx, const TensorType &t) {
  return RankedTensorType::get(t.shape, nxElementType(ctx, t.elem));
}

static Location locOf(MLIRContext *ctx, const Loc &l) {
  if (!l.valid()) return UnknownLoc::get(ctx);
  if (!l.pointer.empty()) return NameLoc::get(StringAttr::get(ctx, l.file->name + ":" + l.pointer));
  return FileLineColLoc::get(ctx, l.file->name, l.line, l.col);
}

static DenseElementsAttr constantAttr(RankedTensorType type, const Node &n) {
  Type et = type.getElementType();
  if (auto ft = llvm::dyn_cast<FloatType>(et)) {
    SmallVector<APFloat> vals;
    for (double d : n.fvalues) {
      // The f8 types round as Nx's dumps do, not as IEEE conversions.
      if (llvm::isa<Float8E5M2Type, Float8E4M3FNType>(ft)) {
        ElemType f8{llvm::isa<Float8E4M3FNType>(ft) ? TypeKind::F8E4M3FN : TypeKind::F, 8};
        vals.push_back(APFloat(ft.getFloatSemantics(), APInt(8, doubleToF8(d, f8))));
        continue;
      }
      APFloat f(d);
      bool lost;
      f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      vals.push_back(f);
    }
    return DenseElementsAttr::get(type, vals);
  }
  auto it = llvm::cast<IntegerType>(et);
  SmallVector<APInt> vals;
  for (int64_t v : n.ivalues)
    vals.push_back(APInt(it.getWidth(), (uint64_t)v, /*isSigned=*/true, /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, vals);
}

Status emitNxFunction(ModuleOp module, const Graph &graph, const std::string &symbol) {
  // The nx dialect has real types of whole bytes only: complex values become
  // pairs of reals first, sub-byte integers bytes.
  if (hasComplexValues(graph)) {
    NXC_CHECK(checkComplexOps(graph));
    return emitNxFunction(module, complexToReal(graph), symbol);
  }
  if (hasSubByteIntegers(graph)) return emitNxFunction(module, subByteToBytes(graph), symbol);
  MLIRContext *ctx = module.getContext();
  ctx->getOrLoadDialect<nx::NxDialect>();
  ctx->getOrLoadDialect<func::FuncDialect>();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());

  // At the function boundary an empty tensor of rank > 1 is passed as a
  // rank-1 tensor of 0 elements (the C ABI sees a pointer either way; MLIR's
  // bare-pointer convention cannot describe the strides of 2x0x3).
  auto boundaryType = [&](const TensorType &t) {
    RankedTensorType type = tensorType(ctx, t);
    return t.numElements() == 0 && t.rank() > 1 ? RankedTensorType::get({0}, type.getElementType()) : type;
  };
  auto reshapeTo = [&](Value v, RankedTensorType to) -> Value {
    if (v.getType() == to) return v;
    OperationState state(v.getLoc(), "nx.reshape");
    state.addOperands(v);
    state.addTypes(to);
    return b.create(state)->getResult(0);
  };
  SmallVector<Type> argTypes, resultTypes;
  for (int p : graph.params) argTypes.push_back(boundaryType(graph.typeOf(p)));
  for (int r : graph.results) resultTypes.push_back(boundaryType(graph.typeOf(r)));
  Location fnLoc = graph.params.empty() ? UnknownLoc::get(ctx) : locOf(ctx, graph.nodes[graph.params[0]].loc);
  auto fn = func::FuncOp::create(b, fnLoc, symbol, b.getFunctionType(argTypes, resultTypes));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToEnd(entry);

  std::vector<Value> values(graph.nodes.size());
  // The verifiers' messages, caught here to be reported at the node.
  std::string message;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
    if (message.empty()) message = d.str();
    return success();
  });
  auto verified = [&](Operation *op, const Node &n) -> Status {
    message.clear();
    if (succeeded(mlir::verify(op, /*verifyRecursively=*/false))) return okStatus();
    return error(n.loc, message.empty() ? "the op does not verify" : message);
  };
  // Emits node i (a top-level node, or one of a region being emitted).
  std::function<Status(int)> emit = [&](int i) -> Status {
    const Node &n = graph.nodes[i];
    Location loc = locOf(ctx, n.loc);
    switch (n.op) {
    case Op::Parameter:
      values[i] = reshapeTo(entry->getArgument(n.param), tensorType(ctx, n.type));
      return okStatus();
    case Op::RegionArg: return okStatus(); // bound when its region's block is made
    case Op::Metadata: // stop_grad, custom_grad, grad's aliases: the value itself
      values[i] = values[n.operands[0]];
      return okStatus();
    case Op::Elem:
      values[i] = values[n.operands[0]].getDefiningOp()->getResult(n.param);
      return okStatus();
    case Op::PrintValue: // JIT only: a library has nowhere to print
      if (graph.printing) {
        OperationState print(loc, "nx.print_value");
        for (int o : n.operands) print.addOperands(values[o]);
        print.addAttribute("header", b.getStringAttr(n.text));
        b.create(print);
      }
      return okStatus();
    default: break;
    }
    std::string name = "nx." + std::string(opName(n.op));
    if (!RegisteredOperationName::lookup(name, ctx)) // Ops.def and NxOps.td disagree
      return internalError(n.loc, "no nx dialect op " + name);
    OperationState state(loc, name);
    for (int o : n.operands) state.addOperands(values[o]);
    if (n.op == Op::Cond || n.op == Op::While) {
      for (auto &t : n.resultTypes) state.addTypes(tensorType(ctx, t));
      for (size_t r = 0; r < n.regions.size(); ++r) state.addRegion();
    } else {
      state.addTypes(tensorType(ctx, n.type));
    }
    if (n.op == Op::Constant) state.addAttribute("value", constantAttr(tensorType(ctx, n.type), n));
    if (!n.axes.empty() || n.op == Op::Broadcast || n.op == Op::Transpose || n.op == Op::Sum || n.op == Op::Product ||
        n.op == Op::Iota || n.op == Op::ReduceMax || n.op == Op::ReduceMin || n.op == Op::All || n.op == Op::Any)
      state.addAttribute("axes", b.getDenseI64ArrayAttr(n.axes));
    for (auto &[name, v] : n.attrs) state.addAttribute(name, b.getDenseI64ArrayAttr(v));
    Operation *op = b.create(state);
    if (n.op == Op::Cond || n.op == Op::While) {
      OpBuilder::InsertionGuard guard(b);
      for (size_t r = 0; r < n.regions.size(); ++r) {
        const Region &region = n.regions[r];
        Block *block = b.createBlock(&op->getRegion(r));
        for (int a : region.args) values[a] = block->addArgument(tensorType(ctx, graph.nodes[a].type), loc);
        b.setInsertionPointToEnd(block);
        for (int m : region.nodes) NXC_CHECK(emit(m));
        SmallVector<Value> yielded;
        for (int y : region.results) yielded.push_back(values[y]);
        nx::YieldOp::create(b, loc, yielded);
      }
      // `elem` nodes pick the results through the op.
      values[i] = op->getNumResults() ? op->getResult(0) : Value();
    } else {
      values[i] = op->getResult(0);
    }
    return verified(op, n);
  };
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (graph.nodes[i].parent < 0) NXC_CHECK(emit((int)i));
  SmallVector<Value> results;
  for (int r : graph.results) results.push_back(reshapeTo(values[r], boundaryType(graph.typeOf(r))));
  func::ReturnOp::create(b, fn.getLoc(), results);
  return okStatus();
}

} // namespace nxc
