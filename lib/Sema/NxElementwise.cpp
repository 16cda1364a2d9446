//===- NxElementwise.cpp - Nx's element-wise functions --------------------===//
//
// Unary and binary element-wise functions with Nx's result types (§2.4 of the
// semantics): to_floating for transcendental functions, the input type for
// negate/abs/sign/rounding, u8 for predicates, binary_type for arithmetic.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

#include <cmath>

namespace nxc::sema {
namespace {

const char *kIntOnly = "bitwise operators expect integer tensors as inputs and outputs an integer tensor, got: ";

/// The op of the Nx function `fn`, registered below from Ops.def: one exists.
Op opOf(const std::string &fn) { return *opNamed(fn); }

BinaryRule binaryRule(Op op) {
  switch (opFamily(op)) {
  case OpFamily::FloatArithmetic: return BinaryRule::Float;
  case OpFamily::IntegerArithmetic: return BinaryRule::IntOnly;
  case OpFamily::Comparison: return BinaryRule::Compare;
  default: return BinaryRule::Arith;
  }
}

} // namespace

/// Every element-wise op of Ops.def is the Nx function of its name, typed by
/// its family; log, log10, clip and square are Nx functions of their own.
std::vector<NxEntry> nxElementwiseFunctions() {
  std::vector<NxEntry> t;
  for (int i = 0; i < kOpCount; ++i) {
    Op op = (Op)i;
    NxHandler handler = nullptr;
    switch (opFamily(op)) {
    case OpFamily::FloatUnary: handler = op == Op::Log ? &Tracer::nxLog : &Tracer::nxFloatUnary; break;
    case OpFamily::SameUnary: handler = &Tracer::nxSameUnary; break;
    case OpFamily::IntegerUnary: handler = &Tracer::nxIntUnary; break;
    case OpFamily::PredicateUnary: handler = &Tracer::nxPredUnary; break;
    case OpFamily::Arithmetic:
    case OpFamily::FloatArithmetic:
    case OpFamily::IntegerArithmetic:
    case OpFamily::Comparison: handler = &Tracer::nxBinary; break;
    case OpFamily::Conversion: handler = &Tracer::nxAsType; break;
    case OpFamily::Selection: handler = &Tracer::nxSelect; break;
    default: break;
    }
    if (handler) t.push_back({opName(op).data(), handler});
  }
  t.push_back({"log10", &Tracer::nxFloatUnary});
  t.push_back({"clip", &Tracer::nxClip});
  t.push_back({"square", &Tracer::nxSquare});
  return t;
}

Result<Value> Tracer::nxFloatUnary(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  ElemType out = toFloating(g_.typeOf(x).elem);
  int in = cast(x, out, loc);
  if (fn == "log10") {
    // log10(x) = log(x) / ln(10), in the result type.
    int l = unaryNode(Op::Log, in, out, loc);
    return binary(Op::Divide, Value::tensor(l, loc), Value::real(2.302585092994046, loc), BinaryRule::Float, loc);
  }
  return Value::tensor(unaryNode(opOf(fn), in, out, loc), loc);
}

Result<Value> Tracer::nxLog(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 1, 2, loc));
  if (args.size() == 1) return nxFloatUnary(fn, args, loc);
  // Nx.log(t, base) = log(t) / log(base).
  std::vector<Value> a = {args[0]}, b = {args[1]};
  NXC_TRY(num, nxFloatUnary(fn, a, loc));
  if (args[1].isNumber()) {
    if (args[1].asDouble() <= 0 || args[1].asDouble() == 1)
      return error(args[1].loc.valid() ? args[1].loc : loc, "Nx.log/2: the base must be positive and not 1");
    return binary(Op::Divide, num, Value::real(std::log(args[1].asDouble()), loc), BinaryRule::Float, loc);
  }
  NXC_TRY(den, nxFloatUnary(fn, b, loc));
  return binary(Op::Divide, num, den, BinaryRule::Float, loc);
}

Result<Value> Tracer::nxSameUnary(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  ElemType in = g_.typeOf(x).elem;
  if ((fn == "floor" || fn == "ceil" || fn == "round") && in.isInteger()) return Value::tensor(x, loc);
  if (fn == "abs" && in.isComplex()) return Value::tensor(unaryNode(Op::Abs, x, in.partType(), loc), loc);
  return Value::tensor(unaryNode(opOf(fn), x, in, loc), loc);
}

Result<Value> Tracer::nxIntUnary(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  ElemType in = g_.typeOf(x).elem;
  if (!in.isInteger()) return error(loc, fmt::format(FMT_STRING("{}{}"), kIntOnly, in.name()));
  return Value::tensor(unaryNode(opOf(fn), x, in, loc), loc);
}

Result<Value> Tracer::nxPredUnary(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  // logical_not of a scalar constant folds, as Nx.Defn.Expr folds it.
  if (opOf(fn) == Op::LogicalNot)
    if (std::optional<int> f = foldedPredicate(Op::Equal, args[0], Value::number(0, loc)))
      return Value::tensor(constant(ElemType::u8(), {}, {}, {*f}, loc), loc);
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  return Value::tensor(unaryNode(opOf(fn), x, ElemType::u8(), loc), loc);
}

Result<Value> Tracer::nxBinary(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  return binary(opOf(fn), args[0], args[1], binaryRule(opOf(fn)), loc);
}

Result<Value> Tracer::nxAsType(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  if (fn == "as_type" && (args[0].kind == Value::Int || args[0].kind == Value::Float)) {
    // Nx.as_type(number, type) is Nx.tensor(number, type: type): the number
    // goes into the type directly (0.001 as f64 is 0.001, 300 as u8 wraps to
    // 44), not through an s32 or f32 tensor first.
    NXC_TRY(t, parseType(args[1]));
    if (args[0].kind == Value::Float && !t.isFloat())
      return error(
          args[0].loc.valid() ? args[0].loc : loc,
          fmt::format(FMT_STRING("Nx.as_type: the float {} cannot be stored as {} (Nx builds a tensor of "
                                 "the number in that type); Nx.as_type(Nx.tensor({}), :{}) converts an f32 tensor"),
                      args[0].f, t.name(), args[0].f, t.name()));
    return tensorLiteral({args[0], Value::keywords({{"type", args[1]}}, loc)}, loc);
  }
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  NXC_TRY(t, parseType(args[1]));
  if (fn == "bitcast") {
    ElemType in = g_.typeOf(x).elem;
    if (in.bits != t.bits)
      return error(loc, fmt::format(FMT_STRING("input type width must match new type width, got input type {} and "
                                               "output type {}"),
                                    in.name(), t.name()));
    if (in == t) return Value::tensor(x, loc);
    return Value::tensor(unaryNode(Op::Bitcast, x, t, loc), loc);
  }
  return Value::tensor(cast(x, t, loc), loc);
}

Result<Value> Tracer::nxSelect(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 3, 3, loc));
  NXC_TRY(pred, tensorArg(fn, args[0], loc));
  // Nx.select makes tensors of number branches (s32/f32) before it merges
  // their types: select(p, s8, 1) is s32.
  for (int k = 1; k <= 2; ++k)
    if (args[k].kind != Value::Tensor) {
      NXC_TRY(c, toTensor(args[k], loc));
      args[k] = Value::tensor(c, args[k].loc.valid() ? args[k].loc : loc);
    }
  ElemType t = binaryType(args[1], args[2]);
  Shape ps = g_.typeOf(pred).shape;
  Shape shape;
  if (ps.empty()) {
    NXC_TRY(s, broadcastShapes(shapeOfValue(args[1]), shapeOfValue(args[2]), fn, loc));
    shape = s;
  } else {
    shape = ps;
    for (int k = 1; k <= 2; ++k) {
      NXC_TRY(s, broadcastShapes(shapeOfValue(args[k]), ps, fn, loc));
      if (s != ps)
        return error(loc, fmt::format(FMT_STRING("Nx.select: cannot broadcast {} to the predicate's shape {}"),
                                      shapeString(shapeOfValue(args[k])), shapeString(ps)));
    }
  }
  std::vector<std::string> names = namesOf(pred);
  for (int k = 1; k <= 2; ++k)
    if (args[k].kind == Value::Tensor) {
      NXC_TRY(m, mergeNames(names, namesOf(args[k].node), shape.size(), loc));
      names = m;
    }
  NXC_TRY(onTrue, operand(args[1], t, shape, loc));
  NXC_TRY(onFalse, operand(args[2], t, shape, loc));
  int r = node(Op::Select, {broadcastTo(pred, shape, loc), onTrue, onFalse}, TensorType{t, shape, {}}, loc);
  return Value::tensor(named(r, names), loc);
}

Result<Value> Tracer::nxClip(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 3, 3, loc));
  for (int k = 1; k <= 2; ++k)
    if (args[k].kind == Value::Tensor && !g_.typeOf(args[k].node).shape.empty())
      return error(args[k].loc, "Nx.clip expects min and max to be scalars");
  // Nx.clip turns number bounds into tensors first (s32/f32), then merges types.
  NXC_TRY(minT, toTensor(args[1], loc));
  NXC_TRY(maxT, toTensor(args[2], loc));
  NXC_TRY(lo, binary(Op::Max, args[0], Value::tensor(minT, loc), BinaryRule::Arith, loc));
  NXC_TRY(r, binary(Op::Min, lo, Value::tensor(maxT, loc), BinaryRule::Arith, loc));
  if (args[0].kind != Value::Tensor) return r;
  // Computed as max/min; a metadata node carries Nx's own clip gradient
  // (the operand keeps the gradient at the exact bounds).
  int clipped = metadata(r.node, kClip, loc);
  g_.nodes[clipped].operands.insert(g_.nodes[clipped].operands.end(), {args[0].node, minT, maxT});
  return Value::tensor(clipped, loc);
}

Result<Value> Tracer::nxSquare(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  return binary(Op::Multiply, args[0], args[0], BinaryRule::Arith, loc);
}

} // namespace nxc::sema
