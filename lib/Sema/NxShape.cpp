//===- NxShape.cpp - Nx's shape functions ---------------------------------===//
//
// broadcast, reshape, flatten, new_axis, squeeze, transpose, reverse,
// concatenate, stack, pad, tile, and the compile-time shape queries (size,
// rank, shape, axis_size).
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

#include <cmath>

#include <algorithm>

namespace nxc::sema {

std::vector<NxEntry> nxShapeFunctions() {
  return {{"broadcast", &Tracer::nxBroadcast},  {"reshape", &Tracer::nxReshape},
          {"flatten", &Tracer::nxFlatten},      {"new_axis", &Tracer::nxNewAxis},
          {"squeeze", &Tracer::nxSqueeze},      {"transpose", &Tracer::nxTranspose},
          {"size", &Tracer::nxShapeQuery},      {"rank", &Tracer::nxShapeQuery},
          {"shape", &Tracer::nxShapeQuery},     {"axis_size", &Tracer::nxShapeQuery},
          {"type", &Tracer::nxShapeQuery},
          {"reverse", &Tracer::nxReverse},      {"concatenate", &Tracer::nxConcatenate},
          {"stack", &Tracer::nxConcatenate},    {"pad", &Tracer::nxPad},
          {"pad_outer", &Tracer::nxPadOuter},   {"reflect", &Tracer::nxPadOuter},
          {"tile", &Tracer::nxTile},           {"tril", &Tracer::nxTriangle},
          {"triu", &Tracer::nxTriangle},        {"tri", &Tracer::nxTriangle},
          {"take_diagonal", &Tracer::nxDiagonal}, {"make_diagonal", &Tracer::nxDiagonal}};
}

Result<Value> Tracer::nxBroadcast(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 2);
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  NXC_TRY(o, options(opts, {"axes", "names"}, "Nx.broadcast"));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  NXC_TRY(shape, shapeArg(args[1], "Nx.broadcast"));
  const Shape in = g_.typeOf(x).shape;
  std::vector<int64_t> axes;
  if (o.count("axes")) {
    NXC_TRY(ax, axesOption(o["axes"], (int64_t)shape.size(), loc));
    axes = ax;
    if (axes.size() != in.size())
      return error(loc, fmt::format(FMT_STRING("Nx.broadcast: :axes lists {} axes, but the tensor {} has rank {} "
                                               "(one axis per dimension)"),
                                    axes.size(), shapeString(in), in.size()));
    for (size_t i = 1; i < axes.size(); ++i)
      if (axes[i] <= axes[i - 1]) return error(loc, "Nx.broadcast: axes must be in increasing order");
  } else {
    if (in.size() > shape.size())
      return error(loc, fmt::format(FMT_STRING("cannot broadcast tensor of dimensions {} to {}"), shapeString(in),
                                    shapeString(shape)));
    for (size_t i = 0; i < in.size(); ++i) axes.push_back((int64_t)(shape.size() - in.size() + i));
  }
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] != 1 && in[i] != shape[axes[i]])
      return error(loc, fmt::format(FMT_STRING("cannot broadcast tensor of dimensions {} to {} with axes {}"),
                                    shapeString(in), shapeString(shape), shapeString(axes)));
  std::vector<std::string> names(shape.size()), in_ = namesOf(x);
  for (size_t i = 0; i < axes.size(); ++i) names[axes[i]] = in_[i];
  if (args[1].kind == Value::Tensor) {
    NXC_TRY(m, mergeNames(names, namesOf(args[1].node), shape.size(), loc));
    names = m;
  }
  if (o.count("names")) {
    NXC_TRY(nn, namesOption(o["names"], shape.size(), loc));
    names = nn;
  }
  if (in == shape) return Value::tensor(named(x, names), loc);
  Node n;
  n.op = Op::Broadcast;
  n.operands = {x};
  n.type = TensorType{g_.typeOf(x).elem, shape, {}};
  n.axes = axes;
  n.loc = loc;
  return Value::tensor(named(add(n), names), loc);
}

Result<Value> Tracer::nxReshape(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 2);
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  NXC_TRY(o, options(opts, {"names"}, "Nx.reshape"));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  Shape shape;
  int autoAt = -1;
  if (args[1].kind == Value::Tuple) {
    for (auto &e : args[1].elems) {
      if (e.kind == Value::Atom && e.atom == "auto") {
        if (autoAt >= 0) return error(e.loc, "Nx.reshape: only one :auto dimension is allowed");
        autoAt = (int)shape.size();
        shape.push_back(1);
      } else if (e.kind == Value::Int && e.i >= 0) {
        shape.push_back(e.i);
      } else {
        return error(e.loc.valid() ? e.loc : loc, "Nx.reshape expects non-negative integer dimensions or :auto");
      }
    }
  } else {
    NXC_TRY(s, shapeArg(args[1], "Nx.reshape"));
    shape = s;
  }
  int64_t have = g_.typeOf(x).numElements(), want = 1;
  for (auto d : shape)
    if (__builtin_mul_overflow(want, d, &want)) return error(loc, "Nx.reshape: the new shape is too large");
  std::string current = shapeString(g_.typeOf(x).shape);
  if (autoAt >= 0) {
    if (want == 0 || have % want)
      return error(loc, fmt::format(FMT_STRING("cannot reshape, current shape {} is not compatible with new shape {}"),
                                    current, shapeString(shape)));
    shape[autoAt] = have / want;
    want = have;
  }
  if (want != have)
    return error(loc, fmt::format(FMT_STRING("cannot reshape, current shape {} is not compatible with new shape {}"),
                                  current, shapeString(shape)));
  std::vector<std::string> names;
  if (o.count("names")) {
    NXC_TRY(nn, namesOption(o["names"], shape.size(), loc));
    names = nn;
  } else if (args[1].kind == Value::Tensor) {
    names = namesOf(args[1].node);
  }
  int r = reshape(x, shape, loc);
  if (r == x && names.empty()) return Value::tensor(x, loc);
  return Value::tensor(named(r == x ? reshape(x, shape, loc) : r, names), loc);
}

Result<Value> Tracer::nxFlatten(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"axes"}, "Nx.flatten"));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  Shape s = g_.typeOf(x).shape;
  if (!o.count("axes")) return Value::tensor(reshape(x, {g_.typeOf(x).numElements()}, loc), loc);
  NXC_TRY(axes, axesOption(o["axes"], (int64_t)s.size(), loc, x));
  std::sort(axes.begin(), axes.end());
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1)
      return error(loc, fmt::format(FMT_STRING("Nx.flatten: axes must be consecutive, got {}"), shapeString(axes)));
  if (axes.empty()) return Value::tensor(x, loc);
  Shape out(s.begin(), s.begin() + axes.front());
  int64_t n = 1;
  for (auto a : axes) n *= s[a];
  out.push_back(n);
  out.insert(out.end(), s.begin() + axes.back() + 1, s.end());
  return Value::tensor(reshape(x, out, loc), loc);
}

Result<Value> Tracer::nxNewAxis(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 2, 3, loc));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  Shape s = g_.typeOf(x).shape;
  if (args[1].kind != Value::Int) return error(args[1].loc, "Nx.new_axis expects an integer axis");
  int64_t a = args[1].i < 0 ? args[1].i + (int64_t)s.size() + 1 : args[1].i;
  if (a < 0 || a > (int64_t)s.size())
    return error(args[1].loc, fmt::format(FMT_STRING("given axis ({}) invalid for shape with rank {}"), args[1].i,
                                          s.size() + 1));
  s.insert(s.begin() + a, 1);
  std::vector<std::string> names = namesOf(x);
  std::string name;
  if (args.size() == 3) {
    if (args[2].kind != Value::Atom) return error(args[2].loc, "Nx.new_axis expects an atom as the axis name");
    name = args[2].isNil() ? "" : args[2].atom;
  }
  names.insert(names.begin() + a, name);
  return Value::tensor(named(reshape(x, s, loc), names), loc);
}

Result<Value> Tracer::nxSqueeze(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"axes"}, "Nx.squeeze"));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  Shape s = g_.typeOf(x).shape, out;
  std::vector<int64_t> axes;
  if (o.count("axes")) {
    NXC_TRY(ax, axesOption(o["axes"], (int64_t)s.size(), loc, x));
    axes = ax;
    for (auto a : axes)
      if (s[a] != 1)
        return error(loc,
                     fmt::format(FMT_STRING("cannot squeeze dimensions whose sizes are not 1, got {} for dimension {}"),
                                 s[a], a));
  } else {
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] == 1) axes.push_back((int64_t)i);
  }
  std::vector<std::string> names, all = namesOf(x);
  for (size_t i = 0; i < s.size(); ++i)
    if (std::find(axes.begin(), axes.end(), (int64_t)i) == axes.end()) {
      out.push_back(s[i]);
      names.push_back(all[i]);
    }
  int r = reshape(x, out, loc);
  return Value::tensor(r == x ? x : named(r, names), loc);
}

int Tracer::transpose(int x, const std::vector<int64_t> &perm, const Loc &loc) {
  const Shape &s = g_.typeOf(x).shape;
  bool identity = true;
  Shape out;
  for (size_t i = 0; i < perm.size(); ++i) {
    out.push_back(s[perm[i]]);
    identity &= perm[i] == (int64_t)i;
  }
  if (identity) return x;
  Node n;
  n.op = Op::Transpose;
  n.operands = {x};
  n.type = TensorType{g_.typeOf(x).elem, out, {}};
  n.axes = perm;
  n.loc = loc;
  std::vector<std::string> names, in = namesOf(x);
  for (auto p : perm) names.push_back(in[p]);
  return named(add(n), names);
}

Result<Value> Tracer::nxTranspose(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"axes"}, "Nx.transpose"));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  const Shape s = g_.typeOf(x).shape;
  std::vector<int64_t> perm;
  if (o.count("axes")) {
    NXC_TRY(ax, axesOption(o["axes"], (int64_t)s.size(), loc, x));
    perm = ax;
    if (perm.size() != s.size())
      return error(loc, fmt::format(FMT_STRING("Nx.transpose: axes must be a permutation of all {} axes, got {}"),
                                    s.size(), shapeString(perm)));
  } else {
    for (size_t i = 0; i < s.size(); ++i) perm.push_back((int64_t)(s.size() - 1 - i));
  }
  return Value::tensor(transpose(x, perm, loc), loc);
}

Result<Value> Tracer::nxShapeQuery(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  size_t n = fn == "axis_size" ? 2 : 1;
  NXC_CHECK(arity(fn, args, n, n, loc));
  // Nx.rank/size/axis_size/shape also take a shape ({2, 3}), as Nx's do.
  bool shape = args[0].kind == Value::Tuple && fn != "type" &&
               std::all_of(args[0].elems.begin(), args[0].elems.end(),
                           [](const Value &d) { return d.kind == Value::Int && d.i >= 0; });
  if (args[0].kind != Value::Tensor && !args[0].isNumber() && !shape)
    return error(args[0].loc.valid() ? args[0].loc : loc,
                 fmt::format(FMT_STRING("Nx.{} expects a tensor, got {}"), fn, describeValue(args[0])));
  Shape s;
  if (shape)
    for (auto &d : args[0].elems) s.push_back(d.i);
  else
    s = shapeOfValue(args[0]);
  if (fn == "rank") return Value::number((int64_t)s.size(), loc);
  if (fn == "type") {
    return typeValue(typeOfValue(args[0]), loc);
  }
  if (fn == "size") {
    int64_t k = 1;
    for (auto d : s) k *= d;
    return Value::number(k, loc);
  }
  if (fn == "axis_size") {
    NXC_TRY(a, normalizeAxis(args[1], (int64_t)s.size(), loc, args[0].kind == Value::Tensor ? args[0].node : -1));
    return Value::number(s[a], loc);
  }
  std::vector<Value> dims;
  for (auto d : s) dims.push_back(Value::number(d, loc));
  return Value::tuple(dims, loc);
}

int Tracer::reverse(int x, const std::vector<int64_t> &axes, const Loc &loc) {
  std::vector<int64_t> real;
  for (auto a : axes)
    if (g_.typeOf(x).shape[a] > 1) real.push_back(a);
  if (real.empty()) return x;
  std::sort(real.begin(), real.end());
  Node n;
  n.op = Op::Reverse;
  n.operands = {x};
  n.type = g_.typeOf(x);
  n.axes = real;
  n.loc = loc;
  return add(n);
}

Result<Value> Tracer::nxReverse(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"axes"}, "Nx.reverse"));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  int64_t rank = g_.typeOf(x).rank();
  std::vector<int64_t> axes;
  if (o.count("axes")) {
    NXC_TRY(ax, axesOption(o["axes"], rank, loc, x));
    axes = ax;
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  return Value::tensor(reverse(x, axes, loc), loc);
}

Result<int> Tracer::concatenate(const std::vector<int> &xs, int64_t axis, const Loc &loc) {
  ElemType t = g_.typeOf(xs[0]).elem;
  for (int x : xs) t = mergeTypes(t, g_.typeOf(x).elem);
  Shape out = g_.typeOf(xs[0]).shape;
  out[axis] = 0;
  for (int x : xs) {
    const Shape &s = g_.typeOf(x).shape;
    bool ok = s.size() == out.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = (int64_t)d == axis || s[d] == out[d];
    if (!ok) {
      std::vector<std::string> expected;
      for (size_t d = 0; d < out.size(); ++d)
        expected.push_back((int64_t)d == axis ? std::string("*") : fmt::to_string(out[d]));
      return error(loc, fmt::format(FMT_STRING("expected all shapes to match {{{}}}, got unmatching shape: {}"),
                                    fmt::join(expected, ", "), shapeString(s)));
    }
    out[axis] += s[axis];
  }
  std::vector<int> ops;
  for (int x : xs)
    if (g_.typeOf(x).shape[axis] > 0 || xs.size() == 1) ops.push_back(cast(x, t, loc));
  if (ops.empty()) ops.push_back(cast(xs[0], t, loc));
  if (ops.size() == 1 && g_.typeOf(ops[0]).shape == out) return ops[0];
  Node n;
  n.op = Op::Concatenate;
  n.operands = ops;
  n.type = TensorType{t, out, {}};
  n.axes = {axis};
  n.loc = loc;
  return named(add(n), namesOf(xs[0]));
}

Result<Value> Tracer::nxConcatenate(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"axis", "name"}, "Nx." + fn));
  if ((args[0].kind != Value::List && args[0].kind != Value::Tuple) || args[0].elems.empty())
    return error(args[0].loc.valid() ? args[0].loc : loc,
                 fmt::format(FMT_STRING("Nx.{} expects a non-empty list or tuple of tensors, got {}"), fn,
                             describeValue(args[0])));
  std::vector<int> xs;
  for (auto &e : args[0].elems) {
    NXC_TRY(x, tensorArg(fn, e, loc));
    xs.push_back(x);
  }
  int64_t rank = g_.typeOf(xs[0]).rank();
  if (fn == "stack") {
    for (int x : xs)
      if (g_.typeOf(x).shape != g_.typeOf(xs[0]).shape)
        return error(loc, fmt::format(FMT_STRING("Nx.stack expects all tensors to have the same shape, got {} and {}"),
                                      shapeString(g_.typeOf(xs[0]).shape), shapeString(g_.typeOf(x).shape)));
    int64_t axis = 0;
    if (o.count("axis")) {
      if (o["axis"].kind != Value::Int) return error(o["axis"].loc, "Nx.stack expects an integer axis");
      axis = o["axis"].i < 0 ? o["axis"].i + rank + 1 : o["axis"].i;
      if (axis < 0 || axis > rank)
        return error(o["axis"].loc, fmt::format(FMT_STRING("given axis ({}) invalid for shape with rank {}"),
                                                o["axis"].i, rank + 1));
    }
    for (int &x : xs) {
      Shape s = g_.typeOf(x).shape;
      s.insert(s.begin() + axis, 1);
      x = reshape(x, s, loc);
    }
    NXC_TRY(r, concatenate(xs, axis, loc));
    return Value::tensor(r, loc);
  }
  if (rank == 0) return error(loc, "Nx.concatenate expects tensors of rank 1 or more, got a scalar");
  int64_t axis = 0;
  if (o.count("axis")) {
    NXC_TRY(a, normalizeAxis(o["axis"], rank, loc, xs[0]));
    axis = a;
  }
  NXC_TRY(r, concatenate(xs, axis, loc));
  return Value::tensor(r, loc);
}

Result<Value> Tracer::nxPad(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 3, 3, loc));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  if (args[1].kind == Value::Tensor && g_.typeOf(args[1].node).rank() != 0)
    return error(args[1].loc, "Nx.pad expects the padding value to be a scalar");
  if (args[1].kind != Value::Tensor && !args[1].isNumber())
    return error(args[1].loc.valid() ? args[1].loc : loc, "Nx.pad expects a number or scalar tensor as padding value");
  Shape s = g_.typeOf(x).shape;
  const Value &cfg = args[2];
  if (cfg.kind != Value::List || cfg.elems.size() != s.size())
    return error(cfg.loc.valid() ? cfg.loc : loc,
                 fmt::format(FMT_STRING("Nx.pad expects a list of {} {{low, high, interior}} tuples, one per axis"),
                             s.size()));
  std::vector<int64_t> lo, hi, in;
  for (auto &c : cfg.elems) {
    if (c.kind != Value::Tuple || c.elems.size() != 3 || c.elems[0].kind != Value::Int ||
        c.elems[1].kind != Value::Int || c.elems[2].kind != Value::Int)
      return error(c.loc.valid() ? c.loc : cfg.loc, "Nx.pad expects {low, high, interior} integer tuples");
    if (c.elems[2].i < 0) return error(c.elems[2].loc, "Nx.pad: interior padding must be non-negative");
    lo.push_back(c.elems[0].i);
    hi.push_back(c.elems[1].i);
    in.push_back(c.elems[2].i);
  }
  ElemType t = binaryType(args[0], args[1]);
  // Pad with the non-negative amounts, then crop the negative ones.
  Shape padded;
  bool any = false, crop = false;
  for (size_t d = 0; d < s.size(); ++d) {
    // inner = s + (s - 1) * interior; size and final_ add the padding.
    std::optional<int64_t> inner = in[d] == INT64_MAX ? std::nullopt : dilatedExtent(s[d], in[d] + 1);
    std::optional<int64_t> grown = inner ? checkedAdd(*inner, std::max<int64_t>(lo[d], 0)) : std::nullopt;
    std::optional<int64_t> size = grown ? checkedAdd(*grown, std::max<int64_t>(hi[d], 0)) : std::nullopt;
    std::optional<int64_t> shifted = inner ? checkedAdd(*inner, lo[d]) : std::nullopt;
    std::optional<int64_t> final_ = shifted ? checkedAdd(*shifted, hi[d]) : std::nullopt;
    if (!size || !final_ || *size > kMaxElements)
      return error(loc, fmt::format(FMT_STRING("Nx.{}: the padding makes axis {} larger than a tensor may be (2^40 "
                                               "elements)"),
                                    fn, d));
    if (*final_ < 0)
      return error(loc, fmt::format(FMT_STRING("Nx.pad: the padding leaves axis {} with a negative size"), d));
    padded.push_back(*size);
    any |= lo[d] > 0 || hi[d] > 0 || in[d] > 0;
    crop |= lo[d] < 0 || hi[d] < 0;
  }
  int r = cast(x, t, loc);
  if (any) {
    Node n;
    n.op = Op::Pad;
    // Nx makes a tensor of a number pad value first (f32 or s32) and then
    // converts it: padding an f64 tensor with 0.001 pads with 0.001 as f32.
    NXC_TRY(value, toTensor(args[1], loc));
    n.operands = {r, cast(value, t, loc)};
    n.type = TensorType{t, padded, g_.typeOf(x).names};
    std::vector<int64_t> l2, h2;
    for (size_t d = 0; d < s.size(); ++d) {
      l2.push_back(std::max<int64_t>(lo[d], 0));
      h2.push_back(std::max<int64_t>(hi[d], 0));
    }
    n.attrs = {{"low", l2}, {"high", h2}, {"interior", in}};
    n.loc = loc;
    r = add(n);
  }
  if (crop) {
    std::vector<Value> starts;
    Shape lengths;
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t start = lo[d] < 0 ? -lo[d] : 0;
      starts.push_back(Value::number(start, loc));
      lengths.push_back(padded[d] - start - (hi[d] < 0 ? -hi[d] : 0));
    }
    NXC_TRY(c, slice(r, starts, lengths, std::vector<int64_t>(s.size(), 1), loc));
    r = c;
  }
  return Value::tensor(r, loc);
}

/// pad_outer(t, value_or_mode, [{lo, hi}, ...]): a number (or scalar tensor)
/// pads as Nx.pad does; :reflect pads with the periodic reflection of each
/// axis (its edge not repeated: [0, 1, 2] with {3, 1} is [1, 2, 1, 0, 1, 2,
/// 1]), :replicate with its outermost values. reflect(t, padding_config:)
/// is the deprecated spelling of :reflect. Each axis is one take of the
/// source positions, computed here.
Result<Value> Tracer::nxPadOuter(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value config;
  std::string mode;
  if (fn == "reflect") {
    Value opts = takeOptions(args, 1);
    NXC_CHECK(arity(fn, args, 1, 1, loc));
    NXC_TRY(o, options(opts, {"padding_config"}, "Nx.reflect"));
    if (!o.count("padding_config")) return error(loc, "missing mandatory option :padding_config");
    config = o["padding_config"];
    mode = "reflect";
  } else {
    NXC_CHECK(arity(fn, args, 3, 3, loc));
    config = args[2];
    if (args[1].kind == Value::Atom) {
      mode = args[1].atom;
      if (mode != "reflect" && mode != "replicate")
        return error(args[1].loc.valid() ? args[1].loc : loc,
                     fmt::format(FMT_STRING("Nx.pad_outer expects a number, a scalar tensor, :reflect or :replicate, "
                                            "got :{}"),
                                 mode));
    }
  }
  NXC_TRY(x, tensorArg("Nx." + fn, args[0], loc));
  const Shape shape = g_.typeOf(x).shape;
  if (shape.empty()) return error(loc, "expected tensor to have rank greater than 0");
  if (config.kind != Value::List || config.elems.size() != shape.size())
    return error(config.loc.valid() ? config.loc : loc,
                 fmt::format(FMT_STRING("expected to have one padding configuration per dimension, got {} for "
                                        "a tensor of rank {}"),
                             config.kind == Value::List ? config.elems.size() : 0, shape.size()));
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (size_t d = 0; d < shape.size(); ++d) {
    const Value &c = config.elems[d];
    if (c.kind != Value::Tuple || c.elems.size() != 2 || c.elems[0].kind != Value::Int || c.elems[1].kind != Value::Int)
      return error(c.loc.valid() ? c.loc : loc,
                   fmt::format(FMT_STRING("expected padding config for axis {} to be of the format {{left, right}}, "
                                          "with left and right as integers, got: {}"),
                               d, inspectValue(c)));
    if (!mode.empty() && (c.elems[0].i < 0 || c.elems[1].i < 0))
      return error(c.loc.valid() ? c.loc : loc, "Nx.pad_outer: reflect and replicate padding must be 0 or greater");
    pads.push_back({c.elems[0].i, c.elems[1].i});
  }
  if (mode.empty()) {
    // A value: Nx.pad with no interior padding.
    std::vector<Value> cfg;
    for (auto [lo, hi] : pads)
      cfg.push_back(Value::tuple({Value::number(lo, loc), Value::number(hi, loc), Value::number(0, loc)}, loc));
    std::vector<Value> padArgs = {args[0], args[1], Value::list(cfg, loc)};
    return nxPad("pad", padArgs, loc);
  }
  Value t = Value::tensor(x, loc);
  for (size_t d = 0; d < shape.size(); ++d) {
    auto [lo, hi] = pads[d];
    int64_t n = shape[d];
    if ((lo == 0 && hi == 0) || n == 0) continue;
    std::vector<int64_t> source;
    for (int64_t j = 0; j < lo + n + hi; ++j) {
      int64_t at = j - lo;
      if (mode == "replicate" || n == 1) {
        source.push_back(std::clamp<int64_t>(at, 0, n - 1));
      } else {
        int64_t period = 2 * (n - 1), m = ((at % period) + period) % period;
        source.push_back(m < n ? m : period - m);
      }
    }
    int indices = constant(ElemType::s32(), {(int64_t)source.size()}, {}, source, loc);
    NXC_TRY(taken,
            callNx("take",
                   {t, Value::tensor(indices, loc), Value::keywords({{"axis", Value::number((int64_t)d, loc)}}, loc)},
                   loc));
    t = taken;
  }
  return t;
}

/// tri(n, m, k: 0) is u8 1 where col <= row + k; tril/triu keep the elements
/// on and below (above) the k-th diagonal of the last two axes.
Result<Value> Tracer::nxTriangle(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, fn == "tri" ? 2 : 1);
  NXC_CHECK(arity(fn, args, fn == "tri" ? 2 : 1, fn == "tri" ? 2 : 1, loc));
  NXC_TRY(o, options(opts, {"k"}, "Nx." + fn));
  int64_t k = 0;
  if (o.count("k")) {
    NXC_TRY(kv, intArg("Nx." + fn, o["k"], ":k", loc));
    k = kv;
  }
  int64_t rows, cols;
  int x = -1;
  if (fn == "tri") {
    NXC_TRY(n, intArg("Nx.tri", args[0], "the number of rows", loc));
    NXC_TRY(m, intArg("Nx.tri", args[1], "the number of columns", loc));
    rows = n;
    cols = m;
  } else {
    NXC_TRY(t, tensorArg(fn, args[0], loc));
    x = t;
    const Shape s = g_.typeOf(x).shape;
    if (s.size() < 2) return error(loc, "Nx." + fn + " expects a tensor of rank 2 or more");
    rows = s[s.size() - 2];
    cols = s.back();
  }
  int64_t count;
  if (rows < 0 || cols < 0 || __builtin_mul_overflow(rows, cols, &count) || count > (1 << 24))
    return error(loc, "Nx." + fn + ": invalid or too large shape");
  std::vector<int64_t> mask((size_t)(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      bool below = c <= r + k, above = c >= r + k;
      mask[(size_t)(r * cols + c)] = fn == "triu" ? above : below;
    }
  int m = constant(ElemType::u8(), {rows, cols}, {}, mask, loc);
  if (fn == "tri") return Value::tensor(m, loc);
  std::vector<Value> sel = {Value::tensor(m, loc), Value::tensor(x, loc), Value::number(0, loc)};
  // select broadcasts the mask over leading (batch) axes.
  Shape s = g_.typeOf(x).shape;
  sel[0] = Value::tensor(broadcastTo(m, s, loc), loc);
  return nxSelect("select", sel, loc);
}

/// take_diagonal: the k-th diagonal of the last two axes (a gather);
/// make_diagonal: a vector (over the last axis) on the k-th diagonal of a
/// square matrix, zeros elsewhere.
Result<Value> Tracer::nxDiagonal(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"offset"}, "Nx." + fn));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  int64_t k = 0;
  if (o.count("offset")) {
    NXC_TRY(kv, intArg("Nx." + fn, o["offset"], ":offset", loc));
    k = kv;
  }
  const Shape s = g_.typeOf(x).shape;
  int64_t r = (int64_t)s.size();
  if (fn == "take_diagonal") {
    if (r < 2) return error(loc, "Nx.take_diagonal expects a tensor of rank 2 or more");
    int64_t n = s[r - 2], m = s[r - 1];
    int64_t len = k >= 0 ? std::min(n, m - k) : std::min(n + k, m);
    if (len <= 0)
      return error(
          loc, fmt::format(FMT_STRING("Nx.take_diagonal: offset {} is out of range for shape {}"), k, shapeString(s)));
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < len; ++i) {
      idx.push_back(i + std::max<int64_t>(-k, 0));
      idx.push_back(i + std::max<int64_t>(k, 0));
    }
    int indices = constant(ElemType::s32(), {len, 2}, {}, idx, loc);
    Node n2;
    n2.op = Op::Gather;
    n2.operands = {x, indices};
    Shape out = {len};
    out.insert(out.end(), s.begin(), s.end() - 2);
    n2.type = TensorType{g_.typeOf(x).elem, out, {}};
    n2.axes = {r - 2, r - 1};
    n2.loc = loc;
    int g = add(n2);
    // gather puts the diagonal first; Nx keeps the batch axes first.
    std::vector<int64_t> perm;
    for (int64_t d = 1; d < r - 1; ++d) perm.push_back(d);
    perm.push_back(0);
    return Value::tensor(transpose(g, perm, loc), loc);
  }
  if (r < 1) return error(loc, "Nx.make_diagonal expects a tensor of rank 1 or more");
  int64_t n = s.back(), size, square;
  if (k == INT64_MIN || __builtin_add_overflow(n, k >= 0 ? k : -k, &size) ||
      __builtin_mul_overflow(size, size, &square) || square > (int64_t(1) << 24))
    return error(loc, fmt::format(FMT_STRING("Nx.make_diagonal: a {}-element vector on diagonal {} makes a matrix too "
                                             "large to build (more than 2^24 elements)"),
                                  n, k));
  Shape out(s.begin(), s.end() - 1);
  out.push_back(size);
  out.push_back(size);
  if (n == 0) // nothing to place: zeros
    return Value::tensor(broadcastTo(cast(constant(ElemType::s32(), {}, {}, {0}, loc), g_.typeOf(x).elem, loc), out,
                                     loc),
                         loc);
  std::vector<int64_t> cols, mask;
  for (int64_t i = 0; i < size; ++i)
    for (int64_t j = 0; j < size; ++j) {
      cols.push_back(std::max<int64_t>(0, std::min<int64_t>(n - 1, i + std::min<int64_t>(k, 0))));
      mask.push_back(j - i == k);
    }
  int at = constant(ElemType::s32(), {size, size}, {}, cols, loc);
  Node take;
  take.op = Op::Take;
  take.operands = {x, at};
  take.type = TensorType{g_.typeOf(x).elem, out, {}};
  take.axes = {r - 1};
  take.loc = loc;
  int values = add(take);
  int m = broadcastTo(constant(ElemType::u8(), {size, size}, {}, mask, loc), out, loc);
  std::vector<Value> sel = {Value::tensor(m, loc), Value::tensor(values, loc), Value::number(0, loc)};
  return nxSelect("select", sel, loc);
}

Result<Value> Tracer::nxTile(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  if (args[1].kind != Value::List)
    return error(args[1].loc.valid() ? args[1].loc : loc, "Nx.tile expects a list of repetitions");
  std::vector<int64_t> reps;
  for (auto &e : args[1].elems) {
    if (e.kind != Value::Int || e.i < 0)
      return error(e.loc.valid() ? e.loc : loc, "Nx.tile expects non-negative integer repetitions");
    reps.push_back(e.i);
  }
  Shape s = g_.typeOf(x).shape;
  if (reps.size() < s.size())
    return error(loc, "Nx.tile: the repetitions list must have at least as many entries as the tensor's rank");
  s.insert(s.begin(), reps.size() - s.size(), 1);
  // reshape to {1, s0, 1, s1, ...}, broadcast to {r0, s0, r1, s1, ...}, merge pairs.
  Shape inter, wide, out;
  std::vector<int64_t> axes;
  for (size_t d = 0; d < s.size(); ++d) {
    inter.push_back(1);
    inter.push_back(s[d]);
    wide.push_back(reps[d]);
    wide.push_back(s[d]);
    out.push_back(reps[d] * s[d]);
  }
  int r = reshape(x, inter, loc);
  if (wide != inter) {
    Node n;
    n.op = Op::Broadcast;
    n.operands = {r};
    n.type = TensorType{g_.typeOf(x).elem, wide, {}};
    for (size_t d = 0; d < wide.size(); ++d) n.axes.push_back((int64_t)d);
    n.loc = loc;
    r = add(n);
  }
  return Value::tensor(reshape(r, out, loc), loc);
}

} // namespace nxc::sema
