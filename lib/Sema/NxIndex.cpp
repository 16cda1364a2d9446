//===- NxIndex.cpp - slicing and Access syntax -----------------------------===//
//
// Nx.slice (static or scalar-tensor starts, clamped so that the slice fits),
// slice_along_axis, put_slice, and `t[...]` access: integers (negative from
// the end), scalar tensors (dynamic and clamped), ranges with steps, `..`,
// and lists of those over several axes.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

#include <algorithm>

#include <cmath>

#include <climits>

namespace nxc::sema {

/// The start of an axis that a scalar tensor operand supplies at run time.
constexpr int64_t kDynamicStart = kDynamicSliceStart;

std::vector<NxEntry> nxIndexFunctions() {
  return {{"slice", &Tracer::nxSlice},
          {"slice_along_axis", &Tracer::nxSliceAlongAxis},
          {"put_slice", &Tracer::nxPutSlice},
          {"take", &Tracer::nxTake},
          {"take_along_axis", &Tracer::nxTake},
          {"gather", &Tracer::nxTake},
          {"indexed_add", &Tracer::nxIndexed},
          {"indexed_put", &Tracer::nxIndexed},
          {"argsort", &Tracer::nxSort},
          {"sort", &Tracer::nxSort},
          {"top_k", &Tracer::nxSort}};
}

namespace {

/// Static starts (kDynamicStart where dynamic) and the dynamic start nodes.
struct Starts {
  std::vector<int64_t> values;
  std::vector<int> dynamic;
};

} // namespace

Result<int> Tracer::slice(int x, const std::vector<Value> &starts, const Shape &lengths,
                          const std::vector<int64_t> &strides, const Loc &loc) {
  const Shape in = g_.typeOf(x).shape;
  Starts st;
  Shape out;
  bool whole = true;
  for (size_t d = 0; d < in.size(); ++d) {
    if (lengths[d] < 0 || lengths[d] > in[d])
      return error(loc, fmt::format(FMT_STRING("Nx.slice: length {} is out of bounds for axis {} of size {}"),
                                    lengths[d], d, in[d]));
    if (strides[d] < 1)
      return error(loc, fmt::format(FMT_STRING("Nx.slice: strides must be positive, got {}"), strides[d]));
    const Value &s = starts[d];
    if (s.kind == Value::Int || (s.kind == Value::Tensor && constantNode(s.node) && g_.typeOf(s.node).rank() == 0 &&
                                 g_.typeOf(s.node).elem.isInteger())) {
      int64_t v = s.kind == Value::Int ? s.i : constantNode(s.node)->ivalues[0];
      v = std::max<int64_t>(0, std::min<int64_t>(v, in[d] - lengths[d]));
      st.values.push_back(v);
      whole &= v == 0;
    } else if (s.kind == Value::Tensor) {
      const TensorType &t = g_.typeOf(s.node);
      if (t.rank() != 0 || !t.elem.isInteger())
        return error(s.loc.valid() ? s.loc : loc,
                     fmt::format(FMT_STRING("Nx.slice: a start index must be an integer or a scalar integer tensor, "
                                            "got {}"),
                                 t.str()));
      st.values.push_back(kDynamicStart);
      st.dynamic.push_back(s.node);
      whole = false;
    } else {
      return error(s.loc.valid() ? s.loc : loc,
                   fmt::format(FMT_STRING("Nx.slice: a start index must be an integer or a scalar integer tensor, "
                                          "got {}"),
                               describeValue(s)));
    }
    out.push_back(lengths[d] == 0 ? 0 : (lengths[d] + strides[d] - 1) / strides[d]);
    whole &= lengths[d] == in[d] && strides[d] == 1;
  }
  if (whole) return x;
  Node n;
  n.op = Op::Slice;
  n.operands = {x};
  for (int dn : st.dynamic) n.operands.push_back(dn);
  n.type = TensorType{g_.typeOf(x).elem, out, g_.typeOf(x).names};
  n.attrs = {{"start_indices", st.values}, {"lengths", lengths}, {"strides", strides}};
  n.loc = loc;
  return add(n);
}

Result<Value> Tracer::nxSlice(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 3);
  NXC_CHECK(arity(fn, args, 3, 3, loc));
  NXC_TRY(o, options(opts, {"strides"}, "Nx.slice"));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  size_t rank = (size_t)g_.typeOf(x).rank();
  if (args[1].kind != Value::List || args[1].elems.size() != rank)
    return error(args[1].loc.valid() ? args[1].loc : loc,
                 fmt::format(FMT_STRING("Nx.slice expects a list of {} start indices"), rank));
  if (args[2].kind != Value::List || args[2].elems.size() != rank)
    return error(args[2].loc.valid() ? args[2].loc : loc,
                 fmt::format(FMT_STRING("Nx.slice expects a list of {} lengths"), rank));
  Shape lengths;
  for (auto &l : args[2].elems) {
    NXC_TRY(v, intArg("Nx.slice", l, "each length", loc));
    lengths.push_back(v);
  }
  std::vector<int64_t> strides(rank, 1);
  if (o.count("strides")) {
    const Value &s = o["strides"];
    if (s.kind == Value::Int) strides.assign(rank, s.i);
    else if (s.kind == Value::List && s.elems.size() == rank)
      for (size_t d = 0; d < rank; ++d) {
        NXC_TRY(v, intArg("Nx.slice", s.elems[d], "each stride", loc));
        strides[d] = v;
      }
    else return error(s.loc,
                      fmt::format(FMT_STRING("Nx.slice: strides must be an integer or a list of {} integers"), rank));
  }
  NXC_TRY(r, slice(x, args[1].elems, lengths, strides, loc));
  return Value::tensor(r, loc);
}

Result<Value> Tracer::nxSliceAlongAxis(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 3);
  NXC_CHECK(arity(fn, args, 3, 3, loc));
  NXC_TRY(o, options(opts, {"axis", "strides"}, "Nx.slice_along_axis"));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  Shape s = g_.typeOf(x).shape;
  NXC_TRY(axis, normalizeAxis(o.count("axis") ? o["axis"] : Value::number(0, loc), (int64_t)s.size(), loc, x));
  NXC_TRY(len, intArg("Nx.slice_along_axis", args[2], "the length", loc));
  std::vector<Value> starts(s.size(), Value::number(0, loc));
  starts[axis] = args[1];
  Shape lengths = s;
  lengths[axis] = len;
  std::vector<int64_t> strides(s.size(), 1);
  if (o.count("strides")) {
    NXC_TRY(st, intArg("Nx.slice_along_axis", o["strides"], "strides", loc));
    strides[axis] = st;
  }
  NXC_TRY(r, slice(x, starts, lengths, strides, loc));
  return Value::tensor(r, loc);
}

Result<Value> Tracer::nxPutSlice(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 3, 3, loc));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  NXC_TRY(u, tensorArg(fn, args[2], loc));
  Shape s = g_.typeOf(x).shape, us = g_.typeOf(u).shape;
  if (us.size() != s.size())
    return error(loc,
                 fmt::format(FMT_STRING("Nx.put_slice: the slice must have the same rank as the tensor, got {} for {}"),
                             shapeString(us), shapeString(s)));
  if (args[1].kind != Value::List || args[1].elems.size() != s.size())
    return error(args[1].loc.valid() ? args[1].loc : loc,
                 fmt::format(FMT_STRING("Nx.put_slice expects a list of {} start indices"), s.size()));
  for (size_t d = 0; d < s.size(); ++d)
    if (us[d] > s[d])
      return error(loc, fmt::format(FMT_STRING("Nx.put_slice: the slice {} does not fit in {}"), shapeString(us),
                                    shapeString(s)));
  ElemType t = mergeTypes(g_.typeOf(x).elem, g_.typeOf(u).elem);
  Starts st;
  for (size_t d = 0; d < s.size(); ++d) {
    const Value &v = args[1].elems[d];
    if (v.kind == Value::Int) {
      st.values.push_back(std::max<int64_t>(0, std::min<int64_t>(v.i, s[d] - us[d])));
    } else if (v.kind == Value::Tensor && g_.typeOf(v.node).rank() == 0 && g_.typeOf(v.node).elem.isInteger()) {
      st.values.push_back(kDynamicStart);
      st.dynamic.push_back(v.node);
    } else {
      return error(v.loc.valid() ? v.loc : loc,
                   "Nx.put_slice: a start index must be an integer or a scalar integer tensor");
    }
  }
  Node n;
  n.op = Op::PutSlice;
  n.operands = {cast(x, t, loc), cast(u, t, loc)};
  for (int dn : st.dynamic) n.operands.push_back(dn);
  n.type = TensorType{t, s, g_.typeOf(x).names};
  n.attrs = {{"start_indices", st.values}};
  n.loc = loc;
  return Value::tensor(add(n), loc);
}

Result<Value> Tracer::nxTake(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 2);
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  NXC_TRY(o, options(opts, {fn == "gather" ? "axes" : "axis"}, "Nx." + fn));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  NXC_TRY(idx, tensorArg(fn, args[1], loc));
  const TensorType t = g_.typeOf(x), it = g_.typeOf(idx);
  if (!it.elem.isInteger())
    return error(args[1].loc.valid() ? args[1].loc : loc,
                 fmt::format(FMT_STRING("Nx.{} expects integer indices, got {}"), fn, it.elem.name()));
  Shape out;
  std::vector<std::string> names;
  std::vector<int64_t> axes;
  std::vector<std::string> tn = namesOf(x), in = namesOf(idx);
  if (fn == "gather") {
    if (it.rank() < 1) return error(loc, "Nx.gather expects indices of rank 1 or more");
    int64_t k = it.shape.back();
    if (o.count("axes")) {
      NXC_TRY(ax, axesOption(o["axes"], t.rank(), loc, x));
      axes = ax;
    } else {
      for (int64_t d = 0; d < k && d < t.rank(); ++d) axes.push_back(d);
    }
    if ((int64_t)axes.size() != k)
      return error(loc, fmt::format(FMT_STRING("Nx.gather: the last dimension of the indices ({}) must match the "
                                               "number of axes ({})"),
                                    k, axes.size()));
    for (int64_t d = 0; d + 1 < it.rank(); ++d) {
      out.push_back(it.shape[d]);
      names.push_back(in[d]);
    }
    for (int64_t d = 0; d < t.rank(); ++d)
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
        out.push_back(t.shape[d]);
        names.push_back(tn[d]);
      }
  } else {
    if (t.rank() == 0) return error(loc, fmt::format(FMT_STRING("Nx.{} expects a tensor of rank 1 or more"), fn));
    int64_t axis = 0;
    if (o.count("axis")) {
      NXC_TRY(a, normalizeAxis(o["axis"], t.rank(), loc, x));
      axis = a;
    }
    axes = {axis};
    if (fn == "take") {
      out.assign(t.shape.begin(), t.shape.begin() + axis);
      names.assign(tn.begin(), tn.begin() + axis);
      out.insert(out.end(), it.shape.begin(), it.shape.end());
      names.insert(names.end(), in.begin(), in.end());
      out.insert(out.end(), t.shape.begin() + axis + 1, t.shape.end());
      names.insert(names.end(), tn.begin() + axis + 1, tn.end());
    } else {
      if (it.rank() != t.rank())
        return error(loc, fmt::format(FMT_STRING("Nx.take_along_axis expects indices of the same rank as the tensor, "
                                                 "got {} for {}"),
                                      shapeString(it.shape), shapeString(t.shape)));
      for (int64_t d = 0; d < t.rank(); ++d)
        if (d != axis && it.shape[d] != t.shape[d])
          return error(loc, fmt::format(FMT_STRING("Nx.take_along_axis: the indices' shape {} must match the "
                                                   "tensor's {} except on axis {}"),
                                        shapeString(it.shape), shapeString(t.shape), axis));
      out = it.shape;
      names = tn;
    }
  }
  for (int64_t d : axes)
    if (t.shape[d] == 0) return error(loc, fmt::format(FMT_STRING("Nx.{}: cannot take from an empty axis"), fn));
  Node n;
  n.op = *opNamed(fn); // take, take_along_axis, gather
  n.operands = {x, idx};
  n.type = TensorType{t.elem, out, {}};
  n.axes = axes;
  n.loc = loc;
  return Value::tensor(named(add(n), names), loc);
}

Result<Value> Tracer::nxIndexed(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 3);
  NXC_CHECK(arity(fn, args, 3, 3, loc));
  NXC_TRY(o, options(opts, {"axes"}, "Nx." + fn));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  NXC_TRY(idx, tensorArg(fn, args[1], loc));
  NXC_TRY(upd, tensorArg(fn, args[2], loc));
  if (g_.typeOf(idx).rank() == 1) {
    // One index (Nx's indexed_scalar): a row of indices and a scalar update.
    const TensorType t1 = g_.typeOf(x), i1 = g_.typeOf(idx), u1 = g_.typeOf(upd);
    if (i1.shape[0] != t1.rank())
      return error(loc, fmt::format(FMT_STRING("** (ArgumentError) expected indices to have shape {{{}}}, got: {{{}}}"),
                                    t1.rank(), i1.shape[0]));
    if (u1.rank() != 0)
      return error(loc, fmt::format(FMT_STRING("** (ArgumentError) updates must be a scalar tensor when indices has "
                                               "rank 1, got: {}"),
                                    shapeString(u1.shape)));
    idx = reshape(idx, {1, i1.shape[0]}, loc);
    upd = reshape(upd, {1}, loc);
  }
  const TensorType t = g_.typeOf(x), it = g_.typeOf(idx), ut = g_.typeOf(upd);
  if (!it.elem.isInteger())
    return error(loc, fmt::format(FMT_STRING("Nx.{} expects integer indices, got {}"), fn, it.elem.name()));
  if (it.rank() != 2)
    return error(loc,
                 fmt::format(FMT_STRING("Nx.{} expects indices of rank 1 or 2, got {}"), fn, shapeString(it.shape)));
  std::vector<int64_t> axes;
  if (o.count("axes")) {
    NXC_TRY(ax, axesOption(o["axes"], t.rank(), loc, x));
    axes = ax;
  } else {
    for (int64_t d = 0; d < it.shape[1] && d < t.rank(); ++d) axes.push_back(d);
  }
  if ((int64_t)axes.size() != it.shape[1] || (int64_t)axes.size() != t.rank())
    return error(loc, fmt::format(FMT_STRING("Nx.{}: nxc supports indices that address single elements ({} per row), "
                                             "got {}"),
                                  fn, t.rank(), shapeString(it.shape)));
  if (ut.shape != Shape{it.shape[0]})
    return error(loc, fmt::format(FMT_STRING("Nx.{} expects updates of shape {}, got {}"), fn,
                                  shapeString({it.shape[0]}), shapeString(ut.shape)));
  ElemType type = mergeTypes(t.elem, ut.elem);
  Node n;
  n.op = *opNamed(fn); // indexed_add, indexed_put
  n.operands = {cast(x, type, loc), idx, cast(upd, type, loc)};
  n.type = TensorType{type, t.shape, t.names};
  n.axes = axes;
  n.loc = loc;
  return Value::tensor(add(n), loc);
}

Result<Value> Tracer::nxSort(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  std::vector<std::string> allowed = fn == "top_k" ? std::vector<std::string>{"k"}
                                                   : std::vector<std::string>{"axis", "direction", "stable", "type"};
  if (fn == "sort") allowed.pop_back();
  NXC_TRY(o, options(opts, allowed, "Nx." + fn));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  const TensorType t = g_.typeOf(x);
  if (t.rank() == 0) return error(loc, fmt::format(FMT_STRING("Nx.{} expects a tensor of rank 1 or more"), fn));
  int64_t axis = t.rank() - (fn == "top_k" ? 1 : t.rank());
  if (o.count("axis")) {
    NXC_TRY(a, normalizeAxis(o["axis"], t.rank(), loc, x));
    axis = a;
  }
  int64_t desc = fn == "top_k";
  if (o.count("direction")) {
    const Value &d = o["direction"];
    if (d.kind != Value::Atom || (d.atom != "asc" && d.atom != "desc"))
      return error(d.loc,
                   fmt::format(FMT_STRING("Nx.{}: :direction must be :asc or :desc, got {}"), fn, describeValue(d)));
    desc = d.atom == "desc";
  }
  if (o.count("stable")) {
    NXC_TRY(stable, boolOption(o["stable"], "stable"));
    (void)stable; // the sort is always stable
  }
  ElemType it = ElemType::s32();
  if (o.count("type")) {
    NXC_TRY(tt, parseType(o["type"]));
    if (!tt.isInteger()) return error(o["type"].loc, "Nx.argsort expects an integer :type");
    it = tt;
  }
  Node n;
  n.op = Op::Argsort;
  n.operands = {x};
  n.type = TensorType{it, t.shape, {}};
  n.axes = {axis};
  n.attrs = {{"direction", {desc}}};
  n.loc = loc;
  int order = named(add(n), namesOf(x));
  if (fn == "argsort") return Value::tensor(order, loc);
  Node take;
  take.op = Op::TakeAlongAxis;
  take.operands = {x, order};
  take.type = t;
  take.axes = {axis};
  take.loc = loc;
  int sorted = add(take);
  if (fn == "sort") return Value::tensor(sorted, loc);
  // top_k: the first k along the last axis, values and indices.
  int64_t k = 1;
  if (o.count("k")) {
    NXC_TRY(kv, intArg("Nx.top_k", o["k"], ":k", loc));
    k = kv;
  }
  if (k < 1 || k > t.shape.back())
    return error(loc, fmt::format(FMT_STRING("Nx.top_k: :k must be between 1 and {}, got {}"), t.shape.back(), k));
  std::vector<Value> starts(t.rank(), Value::number(0, loc));
  Shape lengths = t.shape;
  lengths.back() = k;
  std::vector<int64_t> strides(t.rank(), 1);
  NXC_TRY(values, slice(sorted, starts, lengths, strides, loc));
  NXC_TRY(indices, slice(order, starts, lengths, strides, loc));
  return Value::tuple({Value::tensor(values, loc), Value::tensor(indices, loc)}, loc);
}

Result<Value> Tracer::access(const Value &t, const Value &index, const Loc &loc) {
  // t[...] of a vectorized tensor indexes each entry (its inner axes).
  if (t.kind == Value::Vectorized || index.kind == Value::Vectorized)
    return mapVectorized(
        {t, index}, [&](std::vector<Value> &e) { return access(e[0], e[1], loc); }, loc);
  if (t.kind != Value::Tensor && !t.isNumber())
    return error(loc, fmt::format(FMT_STRING("access (t[...]) expects a tensor, got {}"), describeValue(t)));
  NXC_TRY(x, toTensor(t, loc));
  Shape s = g_.typeOf(x).shape;
  // t[indices] with a tensor of indices (not a scalar, not in a list) is
  // Nx.take(t, indices), as Nx's Access does.
  if (index.kind == Value::Tensor && g_.typeOf(index.node).rank() != 0 && !s.empty())
    return callNx("take", {Value::tensor(x, loc), index}, loc);
  std::vector<Value> items;
  if (index.kind == Value::List) {
    if (index.isKeywordList()) {
      // t[name: 0..2, other: 1]: each named axis gets its index, the rest `..`.
      Value all;
      all.kind = Value::Range;
      all.full = true;
      all.loc = index.loc;
      items.assign(s.size(), all);
      for (size_t k = 0; k < index.elems.size(); ++k) {
        NXC_TRY(axis, normalizeAxis(Value::atomValue(index.keys[k], index.keyLocs[k]), (int64_t)s.size(), loc, x));
        items[axis] = index.elems[k];
      }
    } else {
      items = index.elems;
    }
  } else {
    items = {index};
  }
  if (items.size() > s.size())
    return error(index.loc.valid() ? index.loc : loc,
                 fmt::format(FMT_STRING("too many indices ({}) for a tensor of shape {}"), items.size(),
                             shapeString(s)));
  std::vector<Value> starts;
  Shape lengths;
  std::vector<int64_t> strides;
  std::vector<int64_t> squeeze;
  for (size_t d = 0; d < s.size(); ++d) {
    if (d >= items.size()) {
      starts.push_back(Value::number(0, loc));
      lengths.push_back(s[d]);
      strides.push_back(1);
      continue;
    }
    const Value &i = items[d];
    Loc at = i.loc.valid() ? i.loc : loc;
    if (i.kind == Value::Int) {
      int64_t v = i.i < 0 ? i.i + s[d] : i.i;
      if (v < 0 || v >= s[d])
        return error(at, fmt::format(FMT_STRING("index {} is out of bounds for axis {} in shape {}"), i.i, d,
                                     shapeString(s)));
      starts.push_back(Value::number(v, at));
      lengths.push_back(1);
      strides.push_back(1);
      squeeze.push_back((int64_t)d);
    } else if (i.kind == Value::Tensor) {
      const TensorType &it = g_.typeOf(i.node);
      if (!it.elem.isInteger())
        return error(at, fmt::format(FMT_STRING("access expects integer indices, got a tensor of type {}"),
                                     it.elem.name()));
      if (it.rank() != 0)
        return error(at, "tensor must be a scalar when accessing a list/keyword of dimensions (a tensor of "
                         "indices alone, t[indices], takes along the first axis)");
      starts.push_back(i);
      lengths.push_back(std::min<int64_t>(1, s[d]));
      strides.push_back(1);
      squeeze.push_back((int64_t)d);
    } else if (i.kind == Value::Range) {
      int64_t first = 0, last = s[d] - 1, step = 1;
      if (!i.full) {
        first = i.i < 0 ? i.i + s[d] : i.i;
        last = i.last < 0 ? i.last + s[d] : i.last;
        step = i.step;
      }
      if (step < 1)
        return error(at, fmt::format(FMT_STRING("access expects ranges with a positive step, got {}"), step));
      int64_t len = last >= first ? last - first + 1 : 0;
      if (len > 0 && (first < 0 || first >= s[d] || last >= s[d]))
        return error(at, fmt::format(FMT_STRING("range {}..{} is out of bounds for axis {} in shape {}"), i.i, i.last,
                                     d, shapeString(s)));
      starts.push_back(Value::number(len > 0 ? first : 0, at));
      lengths.push_back(len);
      strides.push_back(step);
    } else {
      return error(at, fmt::format(FMT_STRING("access expects integers, scalar tensors or ranges, got {}"),
                                   describeValue(i)));
    }
  }
  NXC_TRY(r, slice(x, starts, lengths, strides, loc));
  if (!squeeze.empty()) {
    Shape out;
    Shape rs = g_.typeOf(r).shape;
    std::vector<std::string> names, all = namesOf(x);
    for (size_t d = 0; d < rs.size(); ++d)
      if (std::find(squeeze.begin(), squeeze.end(), (int64_t)d) == squeeze.end()) {
        out.push_back(rs[d]);
        names.push_back(all[d]);
      }
    r = named(reshape(r, out, loc), names);
  }
  return Value::tensor(r, loc);
}

} // namespace nxc::sema
