//===- NxGenericReductions.cpp - reduce, window_reduce, window_scatter ----===//
//
// Nx.reduce and Nx.window_reduce fold the user's function over the reduced
// elements in order (the prelude's `fold`, a while loop), vectorized over
// the positions that are kept: the function is applied to tensors of those
// positions, which is what an element-wise function (Nx.add, Nx.max, a fn
// of such) computes element by element. window_scatter_max/min add each
// window's source value at the element the window selects (the last of
// equal maxima or minima, as Nx's evaluator selects with >= and <=).
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

namespace nxc::sema {

std::vector<NxEntry> nxGenericReductionFunctions() {
  return {{"reduce", &Tracer::nxGenericReduce},
          {"window_reduce", &Tracer::nxGenericReduce},
          {"window_scatter_max", &Tracer::nxWindowScatter},
          {"window_scatter_min", &Tracer::nxWindowScatter}};
}

namespace {

Value keywords(std::vector<std::pair<std::string, Value>> kv, const Loc &loc) {
  return Value::keywords(std::move(kv), loc);
}

Value shapeTuple(const Shape &s, const Loc &loc) {
  std::vector<Value> dims;
  for (auto d : s) dims.push_back(Value::number(d, loc));
  return Value::tuple(dims, loc);
}

} // namespace

int Tracer::noGradient(int x, const std::string &fn, const std::string &what, const std::string &name, const Loc &loc) {
  // Nx.Defn.Grad's message for reduce and window_reduce.
  int m = metadata(x, kNoGrad, loc);
  g_.nodes[m].text = fmt::format(FMT_STRING("cannot compute gradient for {}. If you are computing {}, use the "
                                            "appropriate Nx functions instead. If you have a custom usage of {}, "
                                            "consider using stop_grad/1 (making it equivalent to the identify "
                                            "function) or using custom_grad/3 (giving it a proper gradient "
                                            "implementation)."),
                                 fn, what, name);
  return m;
}

Result<int> Tracer::windowPatches(int padded, const WindowSpec &w, const Shape &out, const Loc &loc) {
  // patches[k][o...] = padded[o * stride + unravel(k) * dilation].
  int64_t rank = (int64_t)out.size(), size = 1;
  for (auto d : w.window) size *= d;
  Shape both = {size};
  both.insert(both.end(), out.begin(), out.end());
  Shape column = both;
  column.push_back(1);
  std::vector<Value> columns;
  int64_t inner = size;
  for (int64_t d = 0; d < rank; ++d) {
    inner /= w.window[d];
    NXC_TRY(o, callNx("iota", {shapeTuple(both, loc), keywords({{"axis", Value::number(1 + d, loc)}}, loc)}, loc));
    NXC_TRY(k, callNx("iota", {shapeTuple(both, loc), keywords({{"axis", Value::number(0, loc)}}, loc)}, loc));
    NXC_TRY(kq, callNx("quotient", {k, Value::number(inner, loc)}, loc));
    NXC_TRY(kd, callNx("remainder", {kq, Value::number(w.window[d], loc)}, loc));
    NXC_TRY(os, callNx("multiply", {o, Value::number(w.strides[d], loc)}, loc));
    NXC_TRY(ks, callNx("multiply", {kd, Value::number(w.dilations[d], loc)}, loc));
    NXC_TRY(at, callNx("add", {os, ks}, loc));
    columns.push_back(Value::tensor(reshape(at.node, column, loc), loc));
  }
  NXC_TRY(idx, callNx("concatenate",
                      {Value::list(columns, loc), keywords({{"axis", Value::number(rank + 1, loc)}}, loc)}, loc));
  NXC_TRY(g, callNx("gather", {Value::tensor(padded, loc), idx}, loc));
  return g.node;
}

Result<std::vector<int>> Tracer::windowChoices(int padded, const WindowSpec &w, const Shape &out, bool max,
                                               const Loc &loc) {
  // The element each window selects: the last of its maxima (minima), as
  // Nx's evaluator scans a window in row-major order with >= (<=).
  NXC_TRY(patches, windowPatches(padded, w, out, loc));
  NXC_TRY(choice, callNx(max ? "argmax" : "argmin",
                         {Value::tensor(patches, loc), keywords({{"axis", Value::number(0, loc)},
                                                                 {"tie_break", Value::atomValue("high", loc)}},
                                                                loc)},
                         loc));
  int64_t size = 1;
  for (auto d : w.window) size *= d;
  std::vector<int> coords;
  int64_t inner = size;
  for (size_t d = 0; d < out.size(); ++d) {
    inner /= w.window[d];
    NXC_TRY(o, callNx("iota", {shapeTuple(out, loc), keywords({{"axis", Value::number((int64_t)d, loc)}}, loc)}, loc));
    NXC_TRY(kq, callNx("quotient", {choice, Value::number(inner, loc)}, loc));
    NXC_TRY(kd, callNx("remainder", {kq, Value::number(w.window[d], loc)}, loc));
    NXC_TRY(os, callNx("multiply", {o, Value::number(w.strides[d], loc)}, loc));
    NXC_TRY(ks, callNx("multiply", {kd, Value::number(w.dilations[d], loc)}, loc));
    NXC_TRY(at, callNx("add", {os, ks}, loc));
    int64_t lo = d < w.lo.size() ? w.lo[d] : 0;
    NXC_TRY(unpadded, callNx("subtract", {at, Value::number(lo, loc)}, loc));
    coords.push_back(unpadded.node);
  }
  return coords;
}

Result<Value> Tracer::nxGenericReduce(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  bool window = fn == "window_reduce";
  size_t fixed = window ? 3 : 2; // tensor, acc (, window)
  if (args.size() < fixed + 1 || args.size() > fixed + 2 || args.back().kind != Value::Function)
    return error(loc, fmt::format(FMT_STRING("Nx.{} expects a tensor, an accumulator{}, optional options and a "
                                             "function of two arguments"),
                                  fn, window ? ", the window dimensions" : ""));
  Value fun = args.back();
  Value opts = args.size() == fixed + 2 ? args[fixed] : keywords({}, loc);
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  NXC_TRY(acc0, toTensor(args[1], args[1].loc.valid() ? args[1].loc : loc));
  if (!g_.typeOf(acc0).shape.empty())
    return error(args[1].loc.valid() ? args[1].loc : loc,
                 "the accumulator must be a non-vectorized scalar, got a tensor of rank > 0");
  const TensorType in = g_.typeOf(x);
  if (window) {
    // Windows of x padded with the accumulator, folded in row-major order.
    NXC_TRY(w, windowSpec(fn, x, args[2], opts, loc));
    int acc = cast(acc0, in.elem, loc);
    int padded = x;
    bool any = false;
    for (size_t d = 0; d < in.shape.size(); ++d) any |= w.lo[d] || w.hi[d];
    if (any) {
      std::vector<Value> cfg;
      for (size_t d = 0; d < in.shape.size(); ++d)
        cfg.push_back(
            Value::tuple({Value::number(w.lo[d], loc), Value::number(w.hi[d], loc), Value::number(0, loc)}, loc));
      NXC_TRY(p, callNx("pad", {Value::tensor(x, loc), Value::tensor(acc, loc), Value::list(cfg, loc)}, loc));
      padded = cast(p.node, in.elem, loc);
    }
    Shape ps = g_.typeOf(padded).shape, out;
    for (size_t d = 0; d < ps.size(); ++d) {
      std::optional<int64_t> extent = dilatedExtent(w.window[d], w.dilations[d]);
      int64_t dilated = extent ? *extent : INT64_MAX;
      if (ps[d] < dilated)
        return error(loc,
                     fmt::format(FMT_STRING("Nx.window_reduce: the window {} does not fit in the (padded) shape {}"),
                                 shapeString(w.window), shapeString(ps)));
      out.push_back((ps[d] - dilated) / w.strides[d] + 1);
    }
    NXC_TRY(patches, windowPatches(padded, w, out, loc));
    int start = broadcastTo(acc, out, loc);
    NXC_TRY(r, prelude("fold", {Value::tensor(patches, loc), Value::tensor(start, loc), fun}, loc));
    return Value::tensor(named(noGradient(reshape(r.node, out, loc), "Nx.window_reduce/5",
                                          "the sum, max, or similar of a window", "window_reduce", loc),
                               namesOf(x)),
                         loc);
  }
  NXC_TRY(o, options(opts, {"axes", "type", "keep_axes"}, "Nx.reduce"));
  ElemType type = binaryType(args[0], args[1]);
  if (o.count("type")) { NXC_TRY(t, parseType(o["type"])); type = t; }
  bool keep = false;
  if (o.count("keep_axes")) { NXC_TRY(k, boolOption(o["keep_axes"], "keep_axes")); keep = k; }
  std::vector<int64_t> axes;
  if (o.count("axes")) {
    NXC_TRY(a, axesOption(o["axes"], in.rank(), loc, x));
    axes = a;
  } else {
    for (int64_t d = 0; d < in.rank(); ++d) axes.push_back(d);
  }
  std::vector<int64_t> perm = axes, keptAxes;
  Shape kept, out;
  int64_t count = 1;
  std::vector<std::string> names = namesOf(x), outNames;
  for (auto a : axes) count *= in.shape[a];
  for (int64_t d = 0; d < in.rank(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced) {
      perm.push_back(d);
      kept.push_back(in.shape[d]);
    }
    if (!reduced || keep) {
      out.push_back(reduced ? 1 : in.shape[d]);
      outNames.push_back(names[d]); // kept axes keep their names, as Nx.Shape.contract
    }
  }
  // The reduced elements in row-major order first, then the kept positions.
  int xs = cast(x, type, loc);
  if (in.rank() > 0) xs = transpose(xs, perm, loc);
  Shape rows = {count};
  rows.insert(rows.end(), kept.begin(), kept.end());
  xs = reshape(xs, rows, loc);
  int start = broadcastTo(cast(acc0, type, loc), kept, loc);
  // Nothing to fold (an empty reduced axis): the accumulator itself, as Nx
  // gives it; the fold's body could not even take a first element.
  int folded = start;
  if (count > 0) {
    NXC_TRY(r, prelude("fold", {Value::tensor(xs, loc), Value::tensor(start, loc), fun}, loc));
    folded = r.node;
  }
  int result = noGradient(reshape(folded, out, loc), "Nx.reduce/4", "the sum, product, or similar", "reduce", loc);
  return Value::tensor(named(result, outNames), loc);
}

Result<Value> Tracer::nxWindowScatter(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 4);
  NXC_CHECK(arity(fn, args, 4, 4, loc));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  NXC_TRY(source, tensorArg(fn, args[1], loc));
  NXC_TRY(init, toTensor(args[2], args[2].loc.valid() ? args[2].loc : loc));
  if (!g_.typeOf(init).shape.empty())
    return error(args[2].loc.valid() ? args[2].loc : loc,
                 fmt::format(FMT_STRING("Nx.{}: the init value must be a scalar"), fn));
  NXC_TRY(w, windowSpec(fn, x, args[3], opts, loc));
  for (auto d : w.dilations)
    if (d != 1) return error(loc, fmt::format(FMT_STRING("Nx.{} does not take :window_dilations"), fn));
  const TensorType in = g_.typeOf(x);
  // Windows select on x padded with the init value (as Nx's evaluator does);
  // selections in the padding are dropped.
  int padded = x;
  std::vector<Value> cfg;
  for (size_t d = 0; d < in.shape.size(); ++d)
    cfg.push_back(Value::tuple({Value::number(w.lo[d], loc), Value::number(w.hi[d], loc), Value::number(0, loc)}, loc));
  NXC_TRY(p, callNx("pad", {Value::tensor(x, loc), Value::tensor(cast(init, in.elem, loc), loc), Value::list(cfg, loc)},
                    loc));
  padded = cast(p.node, in.elem, loc);
  Shape ps = g_.typeOf(padded).shape, out;
  for (size_t d = 0; d < ps.size(); ++d) {
    if (ps[d] < w.window[d]) return error(loc, "source shape must match valid windows in input tensor");
    out.push_back((ps[d] - w.window[d]) / w.strides[d] + 1);
  }
  if (out != g_.typeOf(source).shape) return error(loc, "source shape must match valid windows in input tensor");
  NXC_TRY(coords, windowChoices(padded, w, out, fn == "window_scatter_max", loc));
  int64_t rank = (int64_t)out.size(), n = 1;
  for (auto d : out) n *= d;
  Shape column = out;
  column.push_back(1);
  std::vector<Value> columns;
  for (int c : coords) columns.push_back(Value::tensor(reshape(c, column, loc), loc));
  Value idx = columns[0];
  if (rank > 1) {
    NXC_TRY(c, callNx("concatenate", {Value::list(columns, loc), keywords({{"axis", Value::number(rank, loc)}}, loc)},
                      loc));
    idx = c;
  }
  ElemType type = mergeTypes(g_.typeOf(source).elem, g_.typeOf(init).elem);
  int target = broadcastTo(cast(init, type, loc), in.shape, loc);
  int flatIdx = reshape(idx.node, {n, rank}, loc), flatSrc = reshape(cast(source, type, loc), {n}, loc);
  return callNx("indexed_add", {Value::tensor(target, loc), Value::tensor(flatIdx, loc), Value::tensor(flatSrc, loc)},
                loc);
}

} // namespace nxc::sema
