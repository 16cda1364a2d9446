//===- NxReductions.cpp - Nx reductions -------------------------------------===//
//
// sum, product, reduce_max/min, all, any, mean, argmax/argmin, cumulative
// ops and logsumexp.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <algorithm>

namespace nxc::sema {

std::vector<NxEntry> nxReductionFunctions() {
  std::vector<NxEntry> t;
  for (const char *n : {"sum", "product", "reduce_max", "reduce_min", "all", "any", "mean"})
    t.push_back({n, &Tracer::nxReduce});
  t.push_back({"argmax", &Tracer::nxArgReduce});
  t.push_back({"argmin", &Tracer::nxArgReduce});
  for (const char *n : {"cumulative_sum", "cumulative_product", "cumulative_max", "cumulative_min"})
    t.push_back({n, &Tracer::nxCumulative});
  t.push_back({"logsumexp", &Tracer::nxLogsumexp});
  t.push_back({"variance", &Tracer::nxVariance});
  t.push_back({"standard_deviation", &Tracer::nxVariance});
  t.push_back({"weighted_mean", &Tracer::nxWeightedMean});
  t.push_back({"median", &Tracer::nxMedian});
  t.push_back({"mode", &Tracer::nxMode});
  for (const char *n : {"window_sum", "window_product", "window_max", "window_min", "window_mean"})
    t.push_back({n, &Tracer::nxWindow});
  return t;
}

Result<Value> Tracer::nxReduce(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  return reduce(fn, args, loc);
}

Result<Value> Tracer::nxArgReduce(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"axis", "keep_axis", "tie_break", "type"}, "Nx." + fn));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  TensorType in = g_.typeOf(x);
  ElemType t = ElemType::s32();
  if (o.count("type")) {
    NXC_TRY(tt, parseType(o["type"]));
    t = tt;
  }
  if (!t.isInteger())
    return error(o["type"].loc, fmt::format(FMT_STRING("Nx.{} expects an integer :type, got {}"), fn, t.name()));
  int64_t tie = 0;
  if (o.count("tie_break")) {
    const Value &v = o["tie_break"];
    if (v.kind != Value::Atom || (v.atom != "low" && v.atom != "high"))
      return error(v.loc, fmt::format(FMT_STRING("Nx.{}: :tie_break must be either :low or :high, got {}"), fn,
                                      describeValue(v)));
    tie = v.atom == "high";
  }
  bool keep = false;
  if (o.count("keep_axis")) {
    NXC_TRY(k, boolOption(o["keep_axis"], "keep_axis"));
    keep = k;
  }
  int src = x;
  int64_t axis = 0;
  Shape out, kept;
  if (o.count("axis") && !o["axis"].isNil()) {
    NXC_TRY(a, normalizeAxis(o["axis"], in.rank(), loc, x));
    axis = a;
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (d != axis) out.push_back(in.shape[d]);
      kept.push_back(d == axis ? 1 : in.shape[d]);
    }
  } else {
    // Over the whole tensor: the row-major flat index.
    src = reshape(x, {in.numElements()}, loc);
    for (int64_t d = 0; d < in.rank(); ++d) kept.push_back(1);
  }
  if (g_.typeOf(src).shape.empty()) {
    int zero = constant(t, {}, {}, {0}, loc);
    return Value::tensor(zero, loc);
  }
  if (g_.typeOf(src).shape[axis] == 0)
    return error(loc, fmt::format(FMT_STRING("Nx.{} cannot be applied to an empty axis"), fn));
  Node n;
  n.op = *opNamed(fn); // argmax, argmin
  n.operands = {src};
  n.type = TensorType{t, out, {}};
  n.axes = {axis};
  n.attrs = {{"tie_break", {tie}}};
  n.loc = loc;
  int r = add(n);
  if (o.count("axis") && !o["axis"].isNil()) {
    std::vector<std::string> names = namesOf(x);
    names.erase(names.begin() + axis);
    r = named(r, names);
  }
  if (keep) r = named(reshape(r, kept, loc), namesOf(x));
  return Value::tensor(r, loc);
}

/// Nx.variance/standard_deviation: sum((t - mean)^2) / (n - ddof), as Nx
/// writes it in defn (the mean kept over the reduced axes).
Result<Value> Tracer::nxVariance(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"axes", "ddof", "keep_axes"}, "Nx." + fn));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  TensorType in = g_.typeOf(x);
  std::vector<int64_t> axes;
  if (o.count("axes")) {
    NXC_TRY(ax, axesOption(o["axes"], in.rank(), loc, x));
    axes = ax;
  } else {
    for (int64_t d = 0; d < in.rank(); ++d) axes.push_back(d);
  }
  int64_t total = 1;
  for (auto a : axes) total *= in.shape[a];
  int64_t ddof = 0;
  if (o.count("ddof")) {
    NXC_TRY(d, intArg("Nx." + fn, o["ddof"], ":ddof", loc));
    ddof = d;
  }
  bool keep = false;
  if (o.count("keep_axes")) {
    NXC_TRY(k, boolOption(o["keep_axes"], "keep_axes"));
    keep = k;
  }
  auto kw = [&](bool keepAxes) {
    Value l;
    l.kind = Value::List;
    l.loc = loc;
    Value axesList;
    axesList.kind = Value::List;
    axesList.loc = loc;
    for (auto a : axes) {
      axesList.elems.push_back(Value::number(a, loc));
      axesList.keys.push_back("");
      axesList.keyLocs.push_back(loc);
    }
    l.elems = {axesList, Value::atomValue(keepAxes ? "true" : "false", loc)};
    l.keys = {"axes", "keep_axes"};
    l.keyLocs = {loc, loc};
    return l;
  };
  Value t = Value::tensor(x, loc);
  NXC_TRY(mean, reduce("mean", {t, kw(true)}, loc));
  NXC_TRY(centered, binary(Op::Subtract, t, mean, BinaryRule::Arith, loc));
  NXC_TRY(sq, binary(Op::Multiply, centered, centered, BinaryRule::Arith, loc));
  NXC_TRY(sum, reduce("sum", {sq, kw(keep)}, loc));
  NXC_TRY(var, binary(Op::Divide, sum, Value::number(total - ddof, loc), BinaryRule::Float, loc));
  if (fn == "variance") return var;
  std::vector<Value> a = {var};
  return nxFloatUnary("sqrt", a, loc);
}

/// Nx.weighted_mean(t, weights, axes:): sum(t * w) / sum(w) over the axes.
Result<Value> Tracer::nxWeightedMean(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 2);
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  NXC_TRY(o, options(opts, {"axes", "keep_axes"}, "Nx.weighted_mean"));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  NXC_TRY(w, tensorArg(fn, args[1], loc));
  const Shape xs = g_.typeOf(x).shape, ws = g_.typeOf(w).shape;
  if (ws != xs) {
    // Weights over the aggregation axes only, placed as Nx places them: the
    // shape [1, ..., 1, weights...], then the first axis swapped with the last.
    if (!o.count("axes")) return error(loc, "axes must be specified when shapes of input and weights differ");
    NXC_TRY(axes, axesOption(o["axes"], (int64_t)xs.size(), loc, x));
    if (ws.size() != axes.size())
      return error(loc, "weights tensor must have rank equal to the number of aggregation axes when input shapes "
                        "differ");
    Shape placed(xs.size() - axes.size(), 1);
    placed.insert(placed.end(), ws.begin(), ws.end());
    std::vector<int64_t> perm(placed.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = (int64_t)i;
    std::swap(perm[axes[0]], perm.back());
    w = transpose(reshape(w, placed, loc), perm, loc);
  }
  Value kw;
  kw.kind = Value::List;
  kw.loc = loc;
  for (const char *key : {"axes", "keep_axes"})
    if (o.count(key)) {
      kw.elems.push_back(o[key]);
      kw.keys.push_back(key);
      kw.keyLocs.push_back(loc);
    }
  NXC_TRY(prod, binary(Op::Multiply, Value::tensor(x, loc), Value::tensor(w, loc), BinaryRule::Arith, loc));
  NXC_TRY(num, reduce("sum", {prod, kw}, loc));
  NXC_TRY(den, reduce("sum", {Value::tensor(w, loc), kw}, loc));
  return binary(Op::Divide, num, den, BinaryRule::Float, loc);
}

/// Nx.median(t, axis:, keep_axis:): the middle of the sorted values (the
/// mean of the two middle ones for an even count).
Result<Value> Tracer::nxMedian(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"axis", "keep_axis"}, "Nx.median"));
  NXC_TRY(x0, tensorArg(fn, args[0], loc));
  int x = x0;
  int64_t axis = 0;
  bool whole = !o.count("axis") || o["axis"].isNil();
  if (whole) {
    x = reshape(x0, {g_.typeOf(x0).numElements()}, loc);
  } else {
    NXC_TRY(a, normalizeAxis(o["axis"], g_.typeOf(x0).rank(), loc, x0));
    axis = a;
  }
  const Shape s = g_.typeOf(x).shape;
  if (s.empty() || s[axis] == 0) return error(loc, "Nx.median expects a non-empty tensor");
  bool keep = false;
  if (o.count("keep_axis")) {
    NXC_TRY(k, boolOption(o["keep_axis"], "keep_axis"));
    keep = k;
  }
  Value sortOpts;
  sortOpts.kind = Value::List;
  sortOpts.loc = loc;
  sortOpts.elems = {Value::number(axis, loc)};
  sortOpts.keys = {"axis"};
  sortOpts.keyLocs = {loc};
  std::vector<Value> sargs = {Value::tensor(x, loc), sortOpts};
  NXC_TRY(sorted, nxSort("sort", sargs, loc));
  int64_t n = s[axis];
  auto middle = [&](int64_t at) -> Result<Value> {
    std::vector<Value> starts(s.size(), Value::number(0, loc));
    starts[axis] = Value::number(at, loc);
    Shape lengths = s;
    lengths[axis] = 1;
    NXC_TRY(m, slice(sorted.node, starts, lengths, std::vector<int64_t>(s.size(), 1), loc));
    return Value::tensor(m, loc);
  };
  NXC_TRY(hi, middle(n / 2));
  Value r = hi;
  if (n % 2 == 0) {
    NXC_TRY(lo, middle(n / 2 - 1));
    NXC_TRY(sum, binary(Op::Add, lo, hi, BinaryRule::Arith, loc));
    NXC_TRY(mean, binary(Op::Divide, sum, Value::number(2, loc), BinaryRule::Float, loc));
    r = mean;
  }
  Shape out;
  if (keep && !whole) out = s, out[axis] = 1;
  else if (keep && whole) out = Shape(g_.typeOf(x0).rank(), 1);
  else
    for (size_t d = 0; d < s.size(); ++d)
      if ((int64_t)d != axis) out.push_back(s[d]);
  return Value::tensor(reshape(r.node, out, loc), loc);
}

Result<WindowSpec> Tracer::windowSpec(const std::string &fn, int x, const Value &windowArg, const Value &opts,
                                      const Loc &loc) {
  NXC_TRY(o, options(opts, {"strides", "padding", "window_dilations"}, "Nx." + fn));
  TensorType in = g_.typeOf(x);
  size_t rank = in.shape.size();
  NXC_TRY(window, shapeArg(windowArg, "Nx." + fn));
  if (window.size() != rank)
    return error(windowArg.loc.valid() ? windowArg.loc : loc,
                 fmt::format(FMT_STRING("Nx.{}: the window {} must have the rank of the tensor {}"), fn,
                             shapeString(window), shapeString(in.shape)));
  auto perAxis = [&](const char *key, std::vector<int64_t> &out) -> Status {
    out.assign(rank, 1);
    if (!o.count(key)) return okStatus();
    const Value &v = o[key];
    if (v.kind == Value::Int) out.assign(rank, v.i);
    else if (v.kind == Value::List && v.elems.size() == rank)
      for (size_t d = 0; d < rank; ++d) {
        NXC_TRY(k, intArg("Nx." + fn, v.elems[d], std::string(":") + key, loc));
        out[d] = k;
      }
    else return error(v.loc.valid() ? v.loc : loc,
                      fmt::format(FMT_STRING("Nx.{}: :{} must be an integer or a list of {} integers"), fn, key, rank));
    for (auto k : out) {
      if (k < 1)
        return error(v.loc.valid() ? v.loc : loc, fmt::format(FMT_STRING("Nx.{}: :{} must be positive"), fn, key));
      if (k > kMaxElements) // larger than any tensor: no window could fit
        return error(v.loc.valid() ? v.loc : loc,
                     fmt::format(FMT_STRING("Nx.{}: :{} {} is larger than any tensor nxc can hold"), fn, key, k));
    }
    return okStatus();
  };
  std::vector<int64_t> strides, dilations;
  NXC_CHECK(perAxis("strides", strides));
  NXC_CHECK(perAxis("window_dilations", dilations));
  std::vector<int64_t> lo(rank, 0), hi(rank, 0);
  for (size_t d = 0; d < rank; ++d)
    if (window[d] < 1) return error(loc, fmt::format(FMT_STRING("Nx.{}: window dimensions must be positive"), fn));
  if (o.count("padding")) {
    const Value &p = o["padding"];
    if (p.kind == Value::Atom && p.atom == "same") {
      for (size_t d = 0; d < rank; ++d) {
        std::optional<int64_t> dilated = dilatedExtent(window[d], dilations[d]);
        if (!dilated || *dilated > kMaxElements)
          return error(loc, fmt::format(FMT_STRING("Nx.{}: the dilated window is larger than a tensor may be (2^40 "
                                                   "elements)"),
                                        fn));
        int64_t out = ceilDiv(in.shape[d], strides[d]);
        int64_t total = std::max<int64_t>((out - 1) * strides[d] + *dilated - in.shape[d], 0);
        lo[d] = total / 2;
        hi[d] = total - lo[d];
      }
    } else if (p.kind == Value::List && p.elems.size() == rank) {
      for (size_t d = 0; d < rank; ++d) {
        const Value &c = p.elems[d];
        if (c.kind != Value::Tuple || c.elems.size() != 2 || c.elems[0].kind != Value::Int ||
            c.elems[1].kind != Value::Int)
          return error(c.loc.valid() ? c.loc : p.loc,
                       fmt::format(FMT_STRING("Nx.{}: padding must be :valid, :same or a list of {{low, high}}"), fn));
        lo[d] = c.elems[0].i;
        hi[d] = c.elems[1].i;
      }
    } else if (!(p.kind == Value::Atom && p.atom == "valid")) {
      return error(p.loc.valid() ? p.loc : loc,
                   fmt::format(FMT_STRING("Nx.{}: padding must be :valid, :same or a list of {{low, high}}"), fn));
    }
  }
  return WindowSpec{window, strides, dilations, lo, hi};
}

Result<Value> Tracer::nxWindow(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 2);
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  NXC_TRY(spec, windowSpec(fn, x, args[1], opts, loc));
  TensorType in = g_.typeOf(x);
  size_t rank = in.shape.size();
  const Shape &window = spec.window;
  const std::vector<int64_t> &strides = spec.strides, &dilations = spec.dilations, &lo = spec.lo, &hi = spec.hi;
  // Pad with the reduction's identity, then reduce windows of the padded tensor.
  Op op = fn == "window_mean" ? Op::WindowSum : *opNamed(fn);
  ElemType t = in.elem;
  bool any = false;
  for (size_t d = 0; d < rank; ++d) any |= lo[d] != 0 || hi[d] != 0;
  int src = x;
  if (any) {
    Value fill;
    if (op == Op::WindowSum) fill = Value::number(0, loc);
    else if (op == Op::WindowProduct) fill = Value::number(1, loc);
    else if (t.isFloat()) fill = Value::real(op == Op::WindowMax ? -INFINITY : INFINITY, loc);
    else {
      bool uns = t.kind == TypeKind::U;
      int64_t v = op == Op::WindowMax ? (uns ? 0 : (t.bits == 64 ? INT64_MIN : -(int64_t(1) << (t.bits - 1))))
                                     : (uns ? (t.bits == 64 ? -1 : (int64_t(1) << t.bits) - 1)
                                            : (t.bits == 64 ? INT64_MAX : (int64_t(1) << (t.bits - 1)) - 1));
      fill = Value::tensor(constant(t, {}, {}, {v}, loc), loc);
    }
    std::vector<Value> cfg;
    for (size_t d = 0; d < rank; ++d)
      cfg.push_back(Value::tuple({Value::number(lo[d], loc), Value::number(hi[d], loc), Value::number(0, loc)}, loc));
    std::vector<Value> padArgs = {Value::tensor(x, loc), fill, Value::list(cfg, loc)};
    NXC_TRY(padded, nxPad(fn, padArgs, loc));
    src = cast(padded.node, t, loc);
  }
  Shape ps = g_.typeOf(src).shape, out;
  for (size_t d = 0; d < rank; ++d) {
    std::optional<int64_t> extent = dilatedExtent(window[d], dilations[d]);
    int64_t dilated = extent ? *extent : INT64_MAX;
    if (ps[d] < dilated)
      return error(loc, fmt::format(FMT_STRING("Nx.{}: the window {} does not fit in the (padded) shape {}"), fn,
                                    shapeString(window), shapeString(ps)));
    out.push_back((ps[d] - dilated) / strides[d] + 1);
  }
  Node n;
  n.op = op;
  n.operands = {src};
  n.type = TensorType{t, out, {}};
  n.attrs = {{"window_dims", window}, {"strides", strides}, {"dilations", dilations}};
  n.loc = loc;
  int r = named(add(n), namesOf(x));
  if (fn != "window_mean") return Value::tensor(r, loc);
  int64_t size = 1;
  for (auto w : window) size *= w;
  return binary(Op::Divide, Value::tensor(r, loc), Value::number(size, loc), BinaryRule::Float, loc);
}

Result<Value> Tracer::nxCumulative(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"axis", "reverse"}, "Nx." + fn));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  TensorType in = g_.typeOf(x);
  int64_t axis = 0;
  if (in.rank() == 0) return Value::tensor(x, loc);
  if (o.count("axis")) {
    NXC_TRY(a, normalizeAxis(o["axis"], in.rank(), loc, x));
    axis = a;
  }
  bool rev = false;
  if (o.count("reverse")) {
    NXC_TRY(r, boolOption(o["reverse"], "reverse"));
    rev = r;
  }
  // The input type for all four, as Nx's associative-scan definition gives (u8 sums wrap).
  ElemType out = in.elem;
  int src = cast(x, out, loc);
  if (rev) src = reverse(src, {axis}, loc);
  Node n;
  n.op = *opNamed(fn); // cumulative_*
  n.operands = {src};
  n.type = TensorType{out, in.shape, in.names};
  n.axes = {axis};
  n.loc = loc;
  int r = add(n);
  if (rev) r = reverse(r, {axis}, loc);
  return Value::tensor(r, loc);
}

Result<Value> Tracer::nxLogsumexp(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"axes", "keep_axes", "exp_scaling_factor"}, "Nx.logsumexp"));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  // As Nx: max = reduce_max(t, keep_axes: true) (0 where infinite);
  // log(sum(exp(t - max) * factor)) + max.
  Value axesOpt;
  axesOpt.kind = Value::List;
  auto withAxes = [&](bool keep) {
    Value kw;
    kw.kind = Value::List;
    if (o.count("axes")) {
      kw.elems.push_back(o["axes"]);
      kw.keys.push_back("axes");
      kw.keyLocs.push_back(loc);
    }
    kw.elems.push_back(Value::atomValue(keep ? "true" : "false", loc));
    kw.keys.push_back("keep_axes");
    kw.keyLocs.push_back(loc);
    return kw;
  };
  bool keep = false;
  if (o.count("keep_axes")) {
    NXC_TRY(k, boolOption(o["keep_axes"], "keep_axes"));
    keep = k;
  }
  Value t = Value::tensor(x, loc);
  NXC_TRY(max, reduce("reduce_max", {t, withAxes(true)}, loc));
  std::vector<Value> isInf = {max};
  NXC_TRY(inf, nxPredUnary("is_infinity", isInf, loc));
  std::vector<Value> sel = {inf, Value::number(0, loc), max};
  NXC_TRY(safeMax, nxSelect("select", sel, loc));
  NXC_TRY(diff, binary(Op::Subtract, t, safeMax, BinaryRule::Arith, loc));
  std::vector<Value> e = {diff};
  NXC_TRY(ex, nxFloatUnary("exp", e, loc));
  Value scaled = ex;
  if (o.count("exp_scaling_factor")) {
    NXC_TRY(m, binary(Op::Multiply, ex, o["exp_scaling_factor"], BinaryRule::Arith, loc));
    scaled = m;
  }
  NXC_TRY(sum, reduce("sum", {scaled, withAxes(true)}, loc));
  std::vector<Value> l = {sum};
  NXC_TRY(lg, nxFloatUnary("log", l, loc));
  NXC_TRY(r, binary(Op::Add, lg, safeMax, BinaryRule::Arith, loc));
  if (keep) return r;
  // Drop the kept axes.
  Shape s = g_.typeOf(x).shape, out;
  std::vector<int64_t> axes;
  if (o.count("axes")) {
    NXC_TRY(ax, axesOption(o["axes"], (int64_t)s.size(), loc, x));
    axes = ax;
  } else {
    for (size_t d = 0; d < s.size(); ++d) axes.push_back((int64_t)d);
  }
  for (size_t d = 0; d < s.size(); ++d)
    if (std::find(axes.begin(), axes.end(), (int64_t)d) == axes.end()) out.push_back(s[d]);
  return Value::tensor(reshape(r.node, out, loc), loc);
}

Result<Value> Tracer::reduce(const std::string &fn, std::vector<Value> args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"axes", "keep_axes"}, "Nx." + fn));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  TensorType in = g_.typeOf(x);
  std::vector<int64_t> axes;
  if (o.count("axes") && !(o["axes"].kind == Value::Atom && o["axes"].atom == "nil")) {
    NXC_TRY(ax, axesOption(o["axes"], in.rank(), loc, x));
    axes = ax;
  } else {
    for (int64_t i = 0; i < in.rank(); ++i) axes.push_back(i);
  }
  std::sort(axes.begin(), axes.end());
  bool keep = false;
  if (o.count("keep_axes")) { NXC_TRY(k, boolOption(o["keep_axes"], "keep_axes")); keep = k; }
  Shape reduced, kept;
  int64_t count = 1;
  for (int64_t i = 0; i < in.rank(); ++i) {
    bool r = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (r) count *= in.shape[i];
    else reduced.push_back(in.shape[i]);
    kept.push_back(r ? 1 : in.shape[i]);
  }
  Op op = fn == "mean" ? Op::Sum : *opNamed(fn);
  ElemType out = (op == Op::Sum || op == Op::Product) ? toAggregate(in.elem)
                 : (op == Op::All || op == Op::Any)   ? ElemType::u8()
                                                      : in.elem;
  int src = (op == Op::All || op == Op::Any) ? x : cast(x, out, loc);
  int r;
  if (axes.empty() && (op == Op::All || op == Op::Any)) {
    // As Nx: `axes: []` is as_type(t, u8); a scalar is tested against 0.
    if (o.count("axes")) r = cast(x, ElemType::u8(), loc);
    else {
      NXC_TRY(nz, binary(Op::NotEqual, Value::tensor(x, loc), Value::number(0, loc), BinaryRule::Compare, loc));
      r = nz.node;
    }
  } else if (axes.empty()) {
    r = src;
  } else {
    Node n;
    n.op = op;
    n.operands = {src};
    n.type = TensorType{out, reduced, {}};
    n.axes = axes;
    n.loc = loc;
    r = add(n);
    std::vector<std::string> names, all = namesOf(x);
    for (int64_t i = 0; i < in.rank(); ++i)
      if (std::find(axes.begin(), axes.end(), i) == axes.end()) names.push_back(all[i]);
    r = named(r, names);
  }
  if (keep) r = named(reshape(r, kept, loc), namesOf(x));
  if (fn == "mean") return binary(Op::Divide, Value::tensor(r, loc), Value::number(count, loc), BinaryRule::Float, loc);
  return Value::tensor(r, loc);
}

/// Nx.mode(t, axis: nil, keep_axis: false): the most frequent value (the
/// smallest of equally frequent ones) of the whole tensor or along an axis.
/// The axis moves last, the other axes become rows, and the prelude's
/// mode_rows (lib/Sema/prelude/Nx.exs) does the counting.
Result<Value> Tracer::nxMode(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"axis", "keep_axis"}, "Nx.mode"));
  NXC_TRY(x, tensorArg("Nx.mode", args[0], loc));
  const TensorType t = g_.typeOf(x);
  int64_t rank = t.rank();
  bool keep = false;
  if (o.count("keep_axis")) { NXC_TRY(k, boolOption(o["keep_axis"], "keep_axis")); keep = k; }
  std::optional<int64_t> axis;
  if (o.count("axis") && !o["axis"].isNil()) {
    NXC_TRY(a, normalizeAxis(o["axis"], rank, loc, x));
    axis = a;
  }
  if (rank == 0) return Value::tensor(keep ? reshape(x, {1}, loc) : x, loc);
  Shape kept;
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (!axis || d != *axis) {
      kept.push_back(t.shape[d]);
      perm.push_back(d);
    }
  int64_t n = axis ? t.shape[*axis] : t.numElements(), rows = 1;
  for (int64_t k : kept) rows *= axis ? k : 1;
  Shape resultShape = axis ? kept : Shape{};
  Shape keptShape = t.shape;
  if (axis) keptShape[*axis] = 1;
  else keptShape.assign(rank, 1);
  int r;
  if (n == 1 || t.numElements() == 0) {
    r = reshape(x, axis ? keptShape : Shape(rank, 1), loc);
  } else {
    int grouped = x;
    if (axis) {
      perm.push_back(*axis);
      grouped = transpose(x, perm, loc);
    }
    grouped = reshape(grouped, {axis ? rows : 1, n}, loc);
    NXC_TRY(m, prelude("mode_rows", {Value::tensor(grouped, loc)}, loc));
    r = reshape(m.node, keptShape, loc);
  }
  return Value::tensor(keep ? r : reshape(r, resultShape, loc), loc);
}

} // namespace nxc::sema
