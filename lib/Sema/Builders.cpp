//===- Builders.cpp - graph nodes, options, axes and types ------------------===//
//
// Helpers every Nx function uses: explicit casts and broadcasts, Nx's
// binary_type, the binary element-wise node, keyword options and axes.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <set>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>

namespace nxc::sema {

int Tracer::add(Node n) {
  // A value without elements needs no computation: an empty constant of its
  // type and shape stands for it. (The ops themselves cannot always be
  // lowered with empty operands: a slice at offset 0 of an empty axis, a
  // take along an empty axis.) Control flow, parameters and the nodes that
  // carry meaning for grad or printing are kept.
  auto kept = [](Op op) {
    switch (op) {
    case Op::Parameter: case Op::RegionArg: case Op::Constant: case Op::Elem: case Op::Cond: case Op::While:
    case Op::Metadata: case Op::PrintValue:
      return true;
    default:
      return false;
    }
  };
  if (n.type.numElements() == 0 && n.regions.empty() && !kept(n.op)) {
    Node empty;
    empty.op = Op::Constant;
    empty.type = n.type;
    empty.loc = n.loc;
    n = std::move(empty);
  }
  int id = g_.add(std::move(n));
  if (!regions_.empty()) regions_.back()->push_back(id);
  return id;
}

int Tracer::addWithRegions(Node n) {
  int id = add(std::move(n));
  for (auto &region : g_.nodes[id].regions)
    for (int m : region.nodes) g_.nodes[m].parent = id;
  return id;
}

int Tracer::elemNode(int owner, size_t k, const Loc &loc) {
  Node el;
  el.op = Op::Elem;
  el.operands = {owner};
  el.param = (int)k;
  el.type = g_.nodes[owner].resultTypes[k];
  el.loc = loc;
  return add(std::move(el));
}

int Tracer::node(Op op, std::vector<int> operands, TensorType type, const Loc &loc) {
  Node n;
  n.op = op;
  n.operands = std::move(operands);
  n.type = std::move(type);
  n.loc = loc;
  return add(std::move(n));
}

const Node *Tracer::constantNode(int id) const {
  const Node *n = &g_.nodes[id];
  return n->op == Op::Constant ? n : nullptr;
}

Result<int64_t> Tracer::intArg(const std::string &fn, const Value &v, const std::string &what, const Loc &loc) {
  if (v.kind == Value::Int) return v.i;
  return error(v.loc.valid() ? v.loc : loc,
               fmt::format(FMT_STRING("{} expects {} to be an integer, got {}"), fn, what, describeValue(v)));
}

int Tracer::constant(ElemType t, Shape shape, std::vector<double> fv, std::vector<int64_t> iv, const Loc &loc) {
  Node n;
  n.op = Op::Constant;
  n.type = TensorType{t, std::move(shape), {}};
  if (t.isComplex() && (int64_t)fv.size() != 2 * n.type.numElements()) {
    // Real values (numbers given for a complex tensor): zero imaginary parts.
    std::vector<double> parts;
    if (fv.empty())
      for (int64_t v : iv) parts.push_back((double)v), parts.push_back(0.0);
    else
      for (double v : fv) parts.push_back(v), parts.push_back(0.0);
    fv = std::move(parts);
    iv.clear();
  }
  n.fvalues = std::move(fv);
  n.ivalues = std::move(iv);
  n.loc = loc;
  return add(n);
}

/// A number as a scalar constant of type t.
Status Tracer::checkLiteralInteger(const Value &v) {
  if (v.kind != Value::Int || (v.i >= INT32_MIN && v.i <= INT32_MAX)) return okStatus();
  return error(v.loc,
               fmt::format(FMT_STRING("the integer {} does not fit s32, the type Nx gives integer literals (Nx would "
                                      "wrap it to {}); give it a type, e.g. Nx.tensor({}, type: :s64)"),
                           v.i, (int32_t)(uint32_t)(uint64_t)v.i, v.i));
}

Result<int> Tracer::numberConstant(const Value &v, ElemType t) {
  NXC_CHECK(checkLiteralInteger(v));
  if (t.isFloat() || t.isComplex()) return constant(t, {}, {v.asDouble()}, {}, v.loc);
  return constant(t, {}, {}, {v.asInt()}, v.loc);
}

Result<int> Tracer::toTensor(const Value &v, const Loc &loc) {
  if (v.kind == Value::Tensor) return v.node;
  if (v.kind == Value::Int) return numberConstant(v, ElemType::s32());
  if (v.kind == Value::Float) return numberConstant(v, ElemType::f32());
  if (v.isNumber()) return numberConstant(v, ElemType::u8());
  // :infinity, :neg_infinity and :nan are f32 tensors, as Nx.tensor makes them.
  if (isNonFiniteAtom(v))
    return constant(ElemType::f32(), {},
                    {v.atom == "nan"        ? NAN
                     : v.atom == "infinity" ? INFINITY
                                            : -INFINITY},
                    {}, v.loc.valid() ? v.loc : loc);
  return error(loc, fmt::format(FMT_STRING("expected a tensor or a number, got {}"), describeValue(v)));
}

std::vector<std::string> Tracer::namesOf(int x) const {
  const TensorType &t = g_.typeOf(x);
  if (t.names.empty()) return std::vector<std::string>(t.shape.size());
  return t.names;
}

int Tracer::named(int id, std::vector<std::string> names) {
  bool any = false;
  for (auto &n : names) any |= !n.empty();
  TensorType &t = g_.nodes[id].type;
  if (!any || names.size() != t.shape.size()) names.clear();
  if (t.names == names) return id;
  if (g_.nodes[id].op == Op::Parameter || g_.nodes[id].op == Op::Elem || g_.nodes[id].op == Op::RegionArg) {
    // Never rename a value in place that others see: rename a copy.
    Node n;
    n.op = Op::Reshape;
    n.operands = {id};
    n.type = TensorType{t.elem, t.shape, names};
    n.loc = g_.nodes[id].loc;
    return add(n);
  }
  t.names = std::move(names);
  return id;
}

Result<std::vector<std::string>> Tracer::mergeNames(const std::vector<std::string> &a,
                                                    const std::vector<std::string> &b, size_t rank, const Loc &loc) {
  std::vector<std::string> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    std::string x = i + a.size() >= rank ? a[i + a.size() - rank] : "";
    std::string y = i + b.size() >= rank ? b[i + b.size() - rank] : "";
    if (!x.empty() && !y.empty() && x != y)
      return error(loc,
                   fmt::format(FMT_STRING("cannot merge name :{} on axis {} with name :{} on axis {}"), x, i, y, i));
    out[i] = x.empty() ? y : x;
  }
  return out;
}

int Tracer::unaryNode(Op op, int x, ElemType out, const Loc &loc) {
  Node n;
  n.op = op;
  n.operands = {x};
  n.type = TensorType{out, g_.typeOf(x).shape, g_.typeOf(x).names};
  n.loc = loc;
  return add(n);
}

int Tracer::cast(int x, ElemType t, const Loc &loc) {
  if (g_.typeOf(x).elem == t) return x;
  return unaryNode(Op::AsType, x, t, loc);
}

int Tracer::broadcastTo(int x, const Shape &shapeRef, const Loc &loc) {
  const Shape shape = shapeRef; // may be a node's shape, which adding a node moves
  const Shape &s = g_.typeOf(x).shape;
  if (s == shape) return x;
  Node n;
  n.op = Op::Broadcast;
  n.operands = {x};
  n.type = TensorType{g_.typeOf(x).elem, shape, {}};
  for (size_t i = 0; i < s.size(); ++i) n.axes.push_back((int64_t)(shape.size() - s.size() + i));
  n.loc = loc;
  int id = add(n);
  std::vector<std::string> names(shape.size()), in = namesOf(x);
  for (size_t i = 0; i < in.size(); ++i) names[shape.size() - in.size() + i] = in[i];
  return named(id, names);
}

int Tracer::reshape(int x, const Shape &shape, const Loc &loc) {
  if (g_.typeOf(x).shape == shape) return x;
  Node n;
  n.op = Op::Reshape;
  n.operands = {x};
  n.type = TensorType{g_.typeOf(x).elem, shape, {}};
  n.loc = loc;
  return add(n);
}

Result<Shape> Tracer::broadcastShapes(const Shape &a, const Shape &b, const std::string &fn, const Loc &loc) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) {
      return error(loc, fmt::format(FMT_STRING("cannot broadcast tensors of shapes {} and {} in Nx.{}: dimension {} is "
                                               "{} on the left and {} on the right"),
                                    shapeString(a), shapeString(b), fn, i, da, db));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

ElemType Tracer::typeOfValue(const Value &v) {
  if (v.kind == Value::Tensor) return g_.typeOf(v.node).elem;
  if (v.kind == Value::Float) return ElemType::f32();
  if (v.kind == Value::Atom) return ElemType::u8();
  return ElemType::s32();
}

/// Nx.Shared.binary_type/2.
ElemType Tracer::binaryType(const Value &a, const Value &b) {
  bool an = a.kind != Value::Tensor, bn = b.kind != Value::Tensor;
  if (an && bn)
    return (a.kind == Value::Float || b.kind == Value::Float) ? ElemType::f32()
                                                              : typeOfValue(a.kind == Value::Atom ? b : a);
  if (an) return mergeNumber(typeOfValue(b), a);
  if (bn) return mergeNumber(typeOfValue(a), b);
  return mergeTypes(typeOfValue(a), typeOfValue(b));
}

ElemType Tracer::mergeNumber(ElemType t, const Value &n) {
  return n.kind == Value::Float ? mergeFloat(t) : mergeInteger(t, n.asInt());
}

/// Converts an operand to type t and broadcasts it to shape.
Result<int> Tracer::operand(const Value &v, ElemType t, const Shape &shape, const Loc &loc) {
  int x;
  if (v.kind == Value::Tensor) x = cast(v.node, t, loc);
  else { NXC_TRY(c, numberConstant(v, t)); x = c; }
  return broadcastTo(x, shape, loc);
}

Result<Value> Tracer::binary(Op op, const Value &a, const Value &b, BinaryRule rule, const Loc &loc) {
  for (const Value *v : {&a, &b})
    if (v->kind != Value::Tensor && !v->isNumber())
      return error(v->loc.valid() ? v->loc : loc,
                   fmt::format(FMT_STRING("Nx.{} expects tensors or numbers, got {}"), opName(op), describeValue(*v)));
  ElemType t = binaryType(a, b);
  if (rule == BinaryRule::IntOnly && t.isFloat()) {
    if (op == Op::Quotient)
      return error(loc, fmt::format(FMT_STRING("quotient expects integer tensors, got: {}"), t.name()));
    return error(loc, fmt::format(FMT_STRING("bitwise operators expect integer tensors as inputs and outputs an "
                                             "integer tensor, got: {}"),
                                  t.name()));
  }
  if (rule == BinaryRule::Float) t = toFloating(t);
  NXC_TRY(shape, broadcastShapes(shapeOfValue(a), shapeOfValue(b), std::string(opName(op)), loc));
  std::vector<std::string> na = a.kind == Value::Tensor ? namesOf(a.node) : std::vector<std::string>{},
                           nb = b.kind == Value::Tensor ? namesOf(b.node) : std::vector<std::string>{};
  NXC_TRY(names, mergeNames(na, nb, shape.size(), loc));
  if (std::optional<int> folded = foldedPredicate(op, a, b); folded && shape.empty())
    return Value::tensor(constant(ElemType::u8(), {}, {}, {*folded}, loc), loc);
  if (rule != BinaryRule::Compare) {
    NXC_TRY(rewritten, constantAlgebra(op, a, b, t, shape, names, loc));
    if (rewritten) return *rewritten;
  }
  Node n;
  n.op = op;
  if (op == Op::LogicalAnd || op == Op::LogicalOr || op == Op::LogicalXor) {
    // Nx tests each operand against zero in its own type (a bf16 subnormal is
    // true, though the merged type f16 would round it to zero), then combines
    // the truths.
    NXC_TRY(ta, truthOf(a, loc));
    NXC_TRY(tb, truthOf(b, loc));
    n.operands = {broadcastTo(ta, shape, loc), broadcastTo(tb, shape, loc)};
    n.type = TensorType{ElemType::u8(), shape, {}};
    n.loc = loc;
    return Value::tensor(named(add(n), names), loc);
  }
  NXC_TRY(ra, operand(a, t, shape, loc));
  NXC_TRY(rb, operand(b, t, shape, loc));
  n.operands = {ra, rb};
  n.type = TensorType{rule == BinaryRule::Compare ? ElemType::u8() : t, shape, {}};
  n.loc = loc;
  return Value::tensor(named(add(n), names), loc);
}

Result<int> Tracer::truthOf(const Value &v, const Loc &loc) {
  if (v.kind != Value::Tensor) return numberConstant(Value::number(v.asDouble() != 0, v.loc), ElemType::u8());
  NXC_TRY(ne, binary(Op::NotEqual, v, Value::number(0, v.loc), BinaryRule::Compare, loc));
  return ne.node;
}

/// A comparison or logical operator on two scalar constants, as
/// Nx.Defn.Expr folds it (so that `if Nx.equal(flag, 1)` on a compile-time
/// flag picks its branch while tracing, the other never traced); nullopt
/// for other operators or operands.
std::optional<int> Tracer::foldedPredicate(Op op, const Value &a, const Value &b) {
  auto known = [&](const Value &v) -> std::optional<Value> {
    if (v.kind == Value::Atom && (v.atom == "true" || v.atom == "false"))
      return Value::number(v.atom == "true", v.loc);
    return scalarConstant(v);
  };
  std::optional<Value> x = known(a), y = known(b);
  if (!x || !y) return std::nullopt;
  bool ints = x->kind == Value::Int && y->kind == Value::Int;
  auto cmp = [&](auto l, auto r) -> std::optional<int> {
    switch (op) {
    case Op::Equal: return l == r;
    case Op::NotEqual: return l != r;
    case Op::Less: return l < r;
    case Op::LessEqual: return l <= r;
    case Op::Greater: return l > r;
    case Op::GreaterEqual: return l >= r;
    case Op::LogicalAnd: return l != 0 && r != 0;
    case Op::LogicalOr: return l != 0 || r != 0;
    case Op::LogicalXor: return (l != 0) != (r != 0);
    default: return std::nullopt;
    }
  };
  return ints ? cmp(x->i, y->i) : cmp(x->asDouble(), y->asDouble());
}

std::optional<Value> Tracer::scalarConstant(const Value &v) {
  if (v.kind == Value::Int || v.kind == Value::Float) return v;
  if (v.kind != Value::Tensor) return std::nullopt;
  const Node &n = g_.nodes[v.node];
  if (n.op != Op::Constant || !n.type.shape.empty() || n.type.elem.isComplex()) return std::nullopt;
  return n.type.elem.isFloat() ? Value::real(n.fvalues.at(0), n.loc) : Value::number(n.ivalues.at(0), n.loc);
}

/// Nx builds defn expressions through Nx.Defn.Expr, which rewrites arithmetic
/// with scalar constants before any backend sees it, and so decides in which
/// order Nx rounds:
///   0 + x, x + 0, 1 * x, x * 1, x - 0, x / 1, x ** 1  ->  x (in the result type)
///   c2 + (c1 + x)  ->  (c1 + c2) + x    (c1 + c2 added as Elixir numbers)
///   (c + x) + y, y + (c + x)  ->  c + (y + x)
///   x * (1 / y)  ->  x / y
/// and the same for *: constants of + and * move to the left and merge. nxc
/// traces the same expressions, so that its sums and products round as Nx's.
Result<std::optional<Value>> Tracer::constantAlgebra(Op op, const Value &a, const Value &b, ElemType t,
                                                     const Shape &shape, const std::vector<std::string> &names,
                                                     const Loc &loc) {
  bool isAdd = op == Op::Add, isMul = op == Op::Multiply;
  if (!isAdd && !isMul && op != Op::Subtract && op != Op::Divide && op != Op::Pow) return std::optional<Value>();
  std::optional<Value> c1 = scalarConstant(a), c2 = scalarConstant(b);
  auto equals = [](const std::optional<Value> &c, double v) {
    return c && (c->kind == Value::Float ? c->f == v : (double)c->i == v);
  };
  auto same = [&](const Value &x) -> Result<std::optional<Value>> {
    NXC_TRY(r, operand(x, t, shape, loc));
    return std::optional<Value>(Value::tensor(named(r, names), loc));
  };
  double identity = isAdd ? 0.0 : 1.0;
  if ((isAdd || isMul) && equals(c1, identity)) return same(b);
  if (equals(c2, isAdd || op == Op::Subtract ? 0.0 : 1.0)) return same(a);
  if (!isAdd && !isMul) return std::optional<Value>();
  // x * (1 / y)  ->  x / y
  if (isMul && !c2 && b.kind == Value::Tensor && g_.nodes[b.node].op == Op::Divide) {
    const Node &d = g_.nodes[b.node];
    int one = d.operands[0];
    if (g_.nodes[one].op == Op::Broadcast) one = g_.nodes[one].operands[0];
    if (equals(scalarConstant(Value::tensor(one, loc)), 1.0)) {
      NXC_TRY(r, binary(Op::Divide, a, Value::tensor(d.operands[1], loc), BinaryRule::Float, loc));
      if (g_.typeOf(r.node).elem == t && g_.typeOf(r.node).shape == shape)
        return std::optional<Value>(Value::tensor(named(r.node, names), loc));
    }
  }
  // `x` as (c + rest) with a scalar constant c on the left, as this rewrite leaves it.
  auto split = [&](const Value &x) -> std::optional<std::pair<Value, int>> {
    if (x.kind != Value::Tensor || g_.nodes[x.node].op != op) return std::nullopt;
    const Node &n = g_.nodes[x.node];
    int c = n.operands[0];
    if (g_.nodes[c].op == Op::Broadcast) c = g_.nodes[c].operands[0];
    std::optional<Value> k = scalarConstant(Value::tensor(c, loc));
    if (!k) return std::nullopt;
    return std::make_pair(*k, n.operands[1]);
  };
  auto fold = [&](const Value &x, const Value &y) -> std::optional<Value> {
    if (x.kind == Value::Int && y.kind == Value::Int) {
      int64_t r;
      if (isAdd ? __builtin_add_overflow(x.i, y.i, &r) : __builtin_mul_overflow(x.i, y.i, &r)) return std::nullopt;
      return Value::number(r, loc);
    }
    return Value::real(isAdd ? x.asDouble() + y.asDouble() : x.asDouble() * y.asDouble(), loc);
  };
  // commute(s1, t1, t2): the constant (if any) is s1 in t1.
  std::optional<Value> s1 = c2 ? c2 : c1;
  const Value &t1 = c2 ? b : a, &t2 = c2 ? a : b;
  Value left = t1, right = t2;
  bool merged = false;
  if (auto inner = split(t2)) {
    if (s1) {
      std::optional<Value> k = fold(*s1, inner->first);
      if (!k) return std::optional<Value>();
      left = *k;
      merged = true;
      right = Value::tensor(inner->second, loc);
    } else {
      left = inner->first;
      NXC_TRY(r, binary(op, t1, Value::tensor(inner->second, loc), BinaryRule::Arith, loc));
      right = r;
    }
  } else if (auto inner1 = split(t1)) {
    left = inner1->first;
    NXC_TRY(r, binary(op, t2, Value::tensor(inner1->second, loc), BinaryRule::Arith, loc));
    right = r;
  } else if (!c2) {
    return std::optional<Value>();
  }
  // The constant as a scalar of the result type (merged constants are not
  // literals: Nx gives them the result type directly).
  int l;
  if (left.kind == Value::Tensor) l = cast(left.node, t, loc);
  else if (merged)
    l = t.isFloat() || t.isComplex() ? constant(t, {}, {left.asDouble()}, {}, loc)
                                     : constant(t, {}, {}, {left.asInt()}, loc);
  else { NXC_TRY(k, numberConstant(left, t)); l = k; }
  if (right.kind != Value::Tensor) return std::optional<Value>();
  Node n;
  n.op = op;
  n.operands = {broadcastTo(l, shape, loc), broadcastTo(cast(right.node, t, loc), shape, loc)};
  n.type = TensorType{t, shape, {}};
  n.loc = loc;
  return std::optional<Value>(Value::tensor(named(add(n), names), loc));
}

Result<std::map<std::string, Value>> Tracer::options(const Value &v, const std::vector<std::string> &allowed,
                                                     const std::string &fn) {
  std::map<std::string, Value> out;
  if (v.kind == Value::List && v.elems.empty()) return out;
  if (!v.isKeywordList())
    return error(v.loc, fmt::format(FMT_STRING("{} expects a keyword list of options, got {}"), fn, describeValue(v)));
  std::string allowedStr = allowed.empty() ? "" : fmt::format(FMT_STRING(":{}"), fmt::join(allowed, ", :"));
  for (size_t i = 0; i < v.elems.size(); ++i) {
    Loc at = i < v.keyLocs.size() && v.keyLocs[i].valid() ? v.keyLocs[i] : v.loc;
    if (std::find(allowed.begin(), allowed.end(), v.keys[i]) == allowed.end())
      return error(at, fmt::format(FMT_STRING("unknown key :{} in the options of {}, expected one of [{}]"), v.keys[i],
                                   fn, allowedStr));
    if (out.count(v.keys[i]))
      return error(at, fmt::format(FMT_STRING("duplicate key :{} in the options of {}"), v.keys[i], fn));
    // Nx reads options with opts[:key]: an explicit nil is the default.
    if (v.elems[i].isNil()) continue;
    out[v.keys[i]] = v.elems[i];
  }
  return out;
}

Result<bool> Tracer::boolOption(const Value &v, const std::string &key) {
  if (v.kind == Value::Atom && (v.atom == "true" || v.atom == "false")) return v.atom == "true";
  return error(v.loc, fmt::format(FMT_STRING("option {}: expects true or false, got {}"), key, describeValue(v)));
}

Result<int64_t> Tracer::normalizeAxis(const Value &v, int64_t rank, const Loc &loc, int node) {
  if (v.kind == Value::Atom && !v.isNil() && v.atom != "true" && v.atom != "false") {
    std::vector<std::string> names = node >= 0 ? namesOf(node) : std::vector<std::string>{};
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == v.atom) return (int64_t)i;
    std::vector<std::string> known;
    for (auto &n : names) known.push_back(n.empty() ? std::string("nil") : fmt::format(FMT_STRING(":{}"), n));
    return error(v.loc.valid() ? v.loc : loc, fmt::format(FMT_STRING("key :{} not found in tensor with names [{}]"),
                                                          v.atom, fmt::join(known, ", ")));
  }
  if (v.kind != Value::Int)
    return error(v.loc.valid() ? v.loc : loc,
                 fmt::format(FMT_STRING("expected an integer axis, got {}"), describeValue(v)));
  int64_t a = v.i < 0 ? v.i + rank : v.i;
  if (a < 0 || a >= rank)
    return error(v.loc.valid() ? v.loc : loc,
                 fmt::format(FMT_STRING("given axis ({}) invalid for shape with rank {}"), v.i, rank));
  return a;
}

Result<std::vector<int64_t>> Tracer::axesOption(const Value &v, int64_t rank, const Loc &loc, int node) {
  if (v.kind != Value::List)
    return error(v.loc.valid() ? v.loc : loc,
                 fmt::format(FMT_STRING("axes: expects a list of integers, got {}"), describeValue(v)));
  std::vector<int64_t> axes;
  for (auto &e : v.elems) {
    NXC_TRY(a, normalizeAxis(e, rank, v.loc, node));
    axes.push_back(a);
  }
  // Nx.Shape.normalize_axes's message, at the first repeated axis.
  for (size_t i = 0; i < axes.size(); ++i)
    if (std::find(axes.begin(), axes.begin() + i, axes[i]) != axes.begin() + i) {
      std::string list;
      for (size_t k = 0; k < axes.size(); ++k) list += (k ? ", " : "") + std::to_string(axes[k]);
      const Value &e = v.elems[i];
      return error(e.loc.valid() ? e.loc : v.loc,
                   fmt::format(FMT_STRING("axes [{}] must be unique integers between 0 and {}"), list, rank - 1));
    }
  return axes;
}

Result<ElemType> Tracer::parseType(const Value &v) {
  if (v.kind == Value::Atom) {
    if (auto t = ElemType::parse(v.atom)) return *t;
  } else if (v.kind == Value::Tuple && v.elems.size() == 2 && v.elems[0].kind == Value::Atom &&
             v.elems[1].kind == Value::Int) {
    if (auto t = ElemType::fromKindAtom(v.elems[0].atom, v.elems[1].i)) return *t;
  }
  return error(v.loc, "invalid type, expected one of :s8, :s16, :s32, :s64, :u8, :u16, :u32, :u64, :f8, "
                      ":f8_e4m3fn, :f16, :bf16, :f32, :f64 (or {:f, 32})");
}

Result<Shape> Tracer::shapeArg(const Value &v, const std::string &fn) {
  if (v.kind == Value::Tensor) return g_.typeOf(v.node).shape;
  if (v.kind == Value::Tuple) {
    Shape s;
    if (v.elems.size() > (size_t)kMaxRank)
      return error(v.loc, fmt::format(FMT_STRING("{}: a shape of rank {}; nxc supports tensors up to rank {}"), fn,
                                      v.elems.size(), kMaxRank));
    for (auto &e : v.elems) {
      if (e.kind != Value::Int || e.i < 0)
        return error(e.loc.valid() ? e.loc : v.loc,
                     fmt::format(FMT_STRING("{} expects a shape of non-negative integers"), fn));
      s.push_back(e.i);
    }
    if (TensorType{ElemType::f32(), s, {}}.numElements() > kMaxElements)
      return error(v.loc, fmt::format(FMT_STRING("{}: the shape {} is too large (more than 2^40 elements)"), fn,
                                      shapeString(s)));
    return s;
  }
  return error(v.loc, fmt::format(FMT_STRING("{} expects a shape (a tuple such as {{2, 3}}) or a tensor, got {}"), fn,
                                  describeValue(v)));
}

/// Splits trailing keyword options off the positional arguments.
Value Tracer::takeOptions(std::vector<Value> &args, size_t minPositional) {
  Value opts;
  opts.kind = Value::List;
  if (args.size() > minPositional &&
      (args.back().isKeywordList() || (args.back().kind == Value::List && args.back().elems.empty()))) {
    opts = args.back();
    args.pop_back();
  }
  return opts;
}

Status Tracer::arity(const std::string &fn, const std::vector<Value> &args, size_t lo, size_t hi, const Loc &loc) {
  if (args.size() < lo || args.size() > hi)
    return error(loc, fmt::format(FMT_STRING("wrong number of arguments to Nx.{}: expected {}, got {}"), fn,
                                  lo == hi ? fmt::to_string(lo) : fmt::format(FMT_STRING("{} to {}"), lo, hi),
                                  args.size()));
  return okStatus();
}

Result<int> Tracer::tensorArg(const std::string &fn, const Value &v, const Loc &loc) {
  if (v.kind == Value::Tensor || v.isNumber() || isNonFiniteAtom(v)) return toTensor(v, loc);
  return error(v.loc.valid() ? v.loc : loc,
               fmt::format(FMT_STRING("Nx.{} expects a tensor, got {}"), fn, describeValue(v)));
}

} // namespace nxc::sema

namespace nxc::sema {

Result<std::vector<std::string>> Tracer::namesOption(const Value &v, size_t rank, const Loc &loc) {
  if (v.isNil()) return std::vector<std::string>(rank); // Nx.Shape.named_axes!(nil, shape): no names
  if (v.kind != Value::List)
    return error(v.loc.valid() ? v.loc : loc,
                 fmt::format(FMT_STRING("names: expects a list of atoms, got {}"), describeValue(v)));
  if (v.elems.size() != rank)
    return error(v.loc.valid() ? v.loc : loc,
                 fmt::format(FMT_STRING("invalid names for tensor of rank {}: expected {} names, got {}"), rank, rank,
                             v.elems.size()));
  std::vector<std::string> out;
  for (auto &e : v.elems) {
    if (e.kind != Value::Atom)
      return error(e.loc.valid() ? e.loc : loc,
                   fmt::format(FMT_STRING("names: expects atoms or nil, got {}"), describeValue(e)));
    out.push_back(e.isNil() ? "" : e.atom);
  }
  return out;
}

} // namespace nxc::sema
