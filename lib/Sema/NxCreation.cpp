//===- NxCreation.cpp - tensors made from nothing ---------------------------===//
//
// Nx.tensor literals, iota, eye and the *_like constructors.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>

namespace nxc::sema {

std::vector<NxEntry> nxCreationFunctions() {
  return {{"tensor", &Tracer::nxTensor}, {"iota", &Tracer::nxIota}, {"eye", &Tracer::nxEye}};
}

Result<Value> Tracer::nxTensor(const std::string &, std::vector<Value> &args, const Loc &loc) {
  return tensorLiteral(args, loc);
}

/// Iotas up to this many elements are constants (they fold); larger ones are
/// computed at run time.
constexpr int64_t kLargeIota = 256;

Result<Value> Tracer::nxIota(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"type", "axis", "names"}, "Nx.iota"));
  NXC_TRY(shape, shapeArg(args[0], "Nx.iota"));
  ElemType t = ElemType::s32();
  if (o.count("type")) { NXC_TRY(tt, parseType(o["type"])); t = tt; }
  int64_t n = 1;
  for (auto d : shape)
    if (__builtin_mul_overflow(n, d, &n) || n > (int64_t(1) << 40))
      return error(loc, "Nx.iota: the shape is too large");
  if (n > kLargeIota) {
    // Counted at run time (no table in the library).
    Node node;
    node.op = Op::Iota;
    node.type = TensorType{t, shape, {}};
    node.loc = loc;
    if (o.count("axis")) {
      NXC_TRY(a, normalizeAxis(o["axis"], (int64_t)shape.size(), loc));
      node.axes = {a};
    }
    int c = add(node);
    if (o.count("names")) {
      NXC_TRY(names, namesOption(o["names"], shape.size(), loc));
      c = named(c, names);
    }
    return Value::tensor(c, loc);
  }
  std::vector<int64_t> idx(n);
  if (o.count("axis")) {
    NXC_TRY(a, normalizeAxis(o["axis"], (int64_t)shape.size(), loc));
    int64_t inner = 1;
    for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
    for (int64_t k = 0; k < n; ++k) idx[k] = (k / inner) % shape[a];
  } else {
    for (int64_t k = 0; k < n; ++k) idx[k] = k;
  }
  int c = t.isFloat() ? constant(t, shape, std::vector<double>(idx.begin(), idx.end()), {}, loc)
                      : constant(t, shape, {}, idx, loc);
  if (o.count("names")) {
    NXC_TRY(names, namesOption(o["names"], shape.size(), loc));
    c = named(c, names);
  }
  return Value::tensor(c, loc);
}

Result<Value> Tracer::nxEye(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"type", "names"}, "Nx.eye"));
  Shape shape;
  if (args[0].kind == Value::Int) {
    if (args[0].i < 0) return error(args[0].loc, "Nx.eye expects a non-negative size");
    shape = {args[0].i, args[0].i};
  } else {
    NXC_TRY(s, shapeArg(args[0], "Nx.eye"));
    shape = s;
  }
  if (shape.size() < 2)
    return error(loc, fmt::format(FMT_STRING("Nx.eye expects a shape of rank 2 or more, got {}"), shapeString(shape)));
  ElemType t = ElemType::s32();
  if (o.count("type")) {
    NXC_TRY(tt, parseType(o["type"]));
    t = tt;
  }
  int64_t n = 1;
  for (auto d : shape)
    if (__builtin_mul_overflow(n, d, &n) || n > (1 << 24))
      return error(loc, "Nx.eye: tensor too large to materialize as a constant (more than 2^24 elements)");
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  std::vector<int64_t> iv(n);
  for (int64_t k = 0; k < n; ++k) iv[k] = ((k / cols) % rows) == (k % cols);
  if (t.isFloat()) return Value::tensor(constant(t, shape, std::vector<double>(iv.begin(), iv.end()), {}, loc), loc);
  return Value::tensor(constant(t, shape, {}, iv, loc), loc);
}

Status Tracer::flattenLiteral(const Value &v, size_t depth, Shape &shape, std::vector<const Value *> &leaves,
                              const Loc &loc) {
  if (v.kind == Value::List) {
    if (depth >= (size_t)kMaxRank)
      return error(
          v.loc.valid() ? v.loc : loc,
          fmt::format(FMT_STRING("Nx.tensor: lists nested more than {} deep (nxc supports tensors up to rank {})"),
                      kMaxRank, kMaxRank));
    if (!leaves.empty() && depth >= shape.size())
      return error(v.loc.valid() ? v.loc : loc,
                   "Nx.tensor: lists must be rectangular; found a list where a number was expected");
    if (depth == shape.size()) shape.push_back((int64_t)v.elems.size());
    else if (shape[depth] != (int64_t)v.elems.size())
      return error(v.loc.valid() ? v.loc : loc,
                   fmt::format(FMT_STRING("Nx.tensor: lists must be rectangular; expected {} elements at depth {}"),
                               shape[depth], depth));
    for (auto &e : v.elems) NXC_CHECK(flattenLiteral(e, depth + 1, shape, leaves, loc));
    return okStatus();
  }
  if (depth != shape.size()) return error(v.loc.valid() ? v.loc : loc, "Nx.tensor: lists must be rectangular");
  if (!(v.isNumber() ||
        (v.kind == Value::Atom && (v.atom == "nan" || v.atom == "infinity" || v.atom == "neg_infinity"))))
    return error(v.loc.valid() ? v.loc : loc,
                 fmt::format(FMT_STRING("Nx.tensor expects numbers, got {}"), describeValue(v)));
  leaves.push_back(&v);
  return okStatus();
}

Result<Value> Tracer::tensorLiteral(std::vector<Value> args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity("tensor", args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"type", "names", "backend"}, "Nx.tensor"));
  if (args[0].kind == Value::Tensor) return args[0];
  Shape shape;
  std::vector<const Value *> leaves;
  NXC_CHECK(flattenLiteral(args[0], 0, shape, leaves, loc));
  ElemType t = ElemType::s32();
  bool anyFloat = false;
  for (auto *l : leaves)
    anyFloat |= l->kind == Value::Float || (l->kind == Value::Atom && l->atom != "true" && l->atom != "false");
  // As Nx infers: booleans are u8 (Nx.tensor(false), Scholar's `finished? =
  // Nx.tensor(false)` in a while), merged with any integer to s32.
  bool allBooleans = !leaves.empty();
  for (auto *l : leaves) allBooleans &= l->kind == Value::Atom && (l->atom == "true" || l->atom == "false");
  if (anyFloat) t = ElemType::f32();
  else if (allBooleans) t = ElemType::u8();
  if (o.count("type")) { NXC_TRY(tt, parseType(o["type"])); t = tt; }
  else if (!anyFloat)
    for (auto *l : leaves) NXC_CHECK(checkLiteralInteger(*l));
  std::vector<double> fv;
  std::vector<int64_t> iv;
  for (auto *l : leaves) {
    double d = l->kind == Value::Atom && l->atom == "nan" ? NAN
               : l->kind == Value::Atom && l->atom == "infinity" ? INFINITY
               : l->kind == Value::Atom && l->atom == "neg_infinity" ? -INFINITY
                                                                      : l->asDouble();
    if (t.isFloat()) fv.push_back(d);
    else {
      if (l->kind != Value::Int && !l->isNumber())
        return error(l->loc, "Nx.tensor: cannot store a non-finite value in an integer tensor");
      if (l->kind == Value::Float)
        return error(l->loc,
                     fmt::format(FMT_STRING("Nx.tensor: a float cannot be stored in an integer tensor of type {}"),
                                 t.name()));
      iv.push_back(l->asInt());
    }
  }
  int c = constant(t, shape, fv, iv, loc);
  if (o.count("names")) {
    NXC_TRY(names, namesOption(o["names"], shape.size(), loc));
    c = named(c, names);
  }
  return Value::tensor(c, loc);
}

} // namespace nxc::sema
