//===- NxConveniences.cpp - Nx functions built from other Nx functions ----===//
//
// Compile-time queries (axes, names, flat_size, byte_size, bit_size,
// axis_index), rename, to_tensor, fill, diff, linspace, put_diagonal, split,
// all_close and Nx.LinAlg.adjoint/matrix_power, each composed from the ops the other
// families trace, in the order Nx composes them.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

#include <cmath>

namespace nxc::sema {

std::vector<NxEntry> nxConvenienceFunctions() {
  std::vector<NxEntry> v;
  for (const char *n : {"axes", "names", "flat_size", "byte_size", "bit_size", "axis_index", "rename", "to_tensor"})
    v.push_back({n, &Tracer::nxQuery});
  for (const char *n :
       {"fill", "diff", "linspace", "put_diagonal", "split", "all_close", "covariance", "LinAlg.adjoint",
        "LinAlg.matrix_power"})
    v.push_back({n, &Tracer::nxComposite});
  return v;
}

Result<Value> Tracer::nxQuery(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  size_t n = fn == "axis_index" || fn == "rename" ? 2 : 1;
  NXC_CHECK(arity(fn, args, n, n, loc));
  if (fn == "to_tensor") {
    NXC_TRY(t, toTensor(args[0], args[0].loc.valid() ? args[0].loc : loc));
    return Value::tensor(t, loc);
  }
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  const TensorType &t = g_.typeOf(x);
  if (fn == "rename") {
    NXC_TRY(names, namesOption(args[1], t.shape.size(), args[1].loc.valid() ? args[1].loc : loc));
    return Value::tensor(named(reshape(x, t.shape, loc), names), loc);
  }
  if (fn == "axis_index") {
    NXC_TRY(a, normalizeAxis(args[1], t.rank(), loc, x));
    return Value::number(a, loc);
  }
  if (fn == "axes" || fn == "names") {
    std::vector<Value> out;
    std::vector<std::string> names = namesOf(x);
    for (int64_t d = 0; d < t.rank(); ++d)
      out.push_back(fn == "axes" ? Value::number(d, loc)
                                 : Value::atomValue(names[d].empty() ? "nil" : names[d], loc));
    return Value::list(out, loc);
  }
  int64_t size = t.numElements();
  return Value::number(fn == "flat_size" ? size : fn == "byte_size" ? size * t.elem.bytes() : size * t.elem.bits, loc);
}

Result<Value> Tracer::nxComposite(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  auto kw = [&](std::vector<std::pair<std::string, Value>> kv) { return Value::keywords(std::move(kv), loc); };
  auto num = [&](int64_t v) { return Value::number(v, loc); };
  if (fn == "LinAlg.adjoint") {
    // The conjugate transpose of the last two axes: a transpose for real types.
    NXC_CHECK(arity(fn, args, 1, 1, loc));
    NXC_TRY(x, tensorArg(fn, args[0], loc));
    int64_t r = g_.typeOf(x).rank();
    if (r < 2) return Value::tensor(x, loc);
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < r; ++d) perm.push_back(d);
    std::swap(perm[r - 1], perm[r - 2]);
    return Value::tensor(transpose(x, perm, loc), loc);
  }
  if (fn == "LinAlg.matrix_power") {
    // Nx's binary powering: the bits of `power` after the leading one, from
    // the lowest, square an accumulator and multiply it into the result.
    NXC_CHECK(arity(fn, args, 2, 2, loc));
    NXC_TRY(x, tensorArg(fn, args[0], loc));
    if (args[1].kind != Value::Int)
      return error(args[1].loc.valid() ? args[1].loc : loc, "Nx.LinAlg.matrix_power expects an integer power");
    const Shape s = g_.typeOf(x).shape;
    if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
      return error(loc, fmt::format(FMT_STRING("matrix_power/2 expects a square matrix or a batch of square matrices, "
                                               "got tensor with shape: {}"),
                                    shapeString(s)));
    int64_t power = args[1].i;
    Value t = Value::tensor(x, loc);
    if (power < 0) {
      std::vector<Value> inv = {t};
      NXC_TRY(i, nxInvert("LinAlg.invert", inv, loc));
      t = i;
      power = -power;
    }
    if (power == 0) {
      std::vector<Value> shape;
      for (auto d : s) shape.push_back(num(d));
      return callNx("eye", {Value::tuple(shape, loc)}, loc);
    }
    int64_t r = (int64_t)s.size();
    std::vector<Value> batches;
    for (int64_t d = 0; d + 2 < r; ++d) batches.push_back(num(d));
    // Float products accumulate in f64 and round once, as Nx.BinaryBackend's dot.
    ElemType et = typeOfValue(t);
    bool wide = et.isFloat() && et.bits < 64;
    ElemType f64{TypeKind::F, 64};
    auto dotp = [&](const Value &a, const Value &b) -> Result<Value> {
      Value wa = wide ? Value::tensor(cast(a.node, f64, loc), loc) : a,
            wb = wide ? Value::tensor(cast(b.node, f64, loc), loc) : b;
      std::vector<Value> da = {wa, Value::list({num(r - 1)}, loc), Value::list(batches, loc), wb,
                               Value::list({num(r - 2)}, loc), Value::list(batches, loc)};
      NXC_TRY(d, dot(da, loc));
      return wide ? Value::tensor(cast(d.node, et, loc), loc) : d;
    };
    std::vector<int> bits;
    for (int64_t p = power; p > 1; p >>= 1) bits.push_back(p & 1);
    std::optional<Value> result;
    Value acc = t;
    for (int bit : bits) {
      if (bit) {
        if (result) { NXC_TRY(m, dotp(*result, acc)); result = m; }
        else result = acc;
      }
      NXC_TRY(sq, dotp(acc, acc));
      acc = sq;
    }
    if (!result) return acc;
    return dotp(*result, acc);
  }
  if (fn == "covariance") {
    // covariance(t), (t, opts), (t, mean), (t, mean, opts): the centered
    // tensor's x^T x over axis -2, divided by (n - ddof), as Nx computes it.
    Value opts = takeOptions(args, 1);
    NXC_CHECK(arity(fn, args, 1, 2, loc));
    NXC_TRY(o, options(opts, {"ddof"}, "Nx.covariance"));
    NXC_TRY(x, tensorArg(fn, args[0], loc));
    int64_t rank = g_.typeOf(x).rank();
    if (rank < 2) return error(loc, fmt::format(FMT_STRING("expected input tensor of rank at least 2, got {}"), rank));
    Value t = Value::tensor(x, loc), mean;
    if (args.size() == 2) {
      mean = args[1];
      if (shapeOfValue(mean).empty()) return error(loc, "expected mean of rank at least 1, got 0");
    } else {
      NXC_TRY(m, callNx("mean", {t, kw({{"axes", Value::list({num(-2)}, loc)}})}, loc));
      mean = m;
    }
    int64_t ddof = 0;
    if (o.count("ddof")) {
      const Value &d = o["ddof"];
      if (d.kind != Value::Int || d.i < 0)
        return error(d.loc.valid() ? d.loc : loc,
                     fmt::format(FMT_STRING("expected ddof to be a non-negative integer, got {}"), describeValue(d)));
      ddof = d.i;
    }
    NXC_TRY(m2, callNx("new_axis", {mean, num(-2)}, loc));
    NXC_TRY(centered, callNx("subtract", {t, m2}, loc));
    int plain = reshape(centered.node, g_.typeOf(centered.node).shape, loc); // names dropped
    std::vector<Value> batch;
    for (int64_t d = 0; d + 2 < rank; ++d) batch.push_back(num(d));
    Value c = Value::tensor(plain, loc);
    std::vector<Value> dargs = {c, Value::list({num(rank - 2)}, loc), Value::list(batch, loc), c,
                                Value::list({num(rank - 2)}, loc), Value::list(batch, loc)};
    NXC_TRY(prod, dot(dargs, loc));
    return callNx("divide", {prod, num(g_.typeOf(x).shape[rank - 2] - ddof)}, loc);
  }
  if (fn == "split") {
    Value opts = takeOptions(args, 2);
    NXC_CHECK(arity(fn, args, 2, 2, loc));
    NXC_TRY(o, options(opts, {"axis"}, "Nx.split"));
    NXC_TRY(x, tensorArg(fn, args[0], loc));
    NXC_TRY(axis, normalizeAxis(o.count("axis") ? o["axis"] : Value::number(0, loc), g_.typeOf(x).rank(), loc, x));
    int64_t size = g_.typeOf(x).shape[axis], at;
    const Value &sp = args[1];
    const Loc &sl = sp.loc.valid() ? sp.loc : loc;
    if (sp.kind == Value::Int) {
      if (sp.i > 0 && sp.i < size) at = sp.i;
      else if (sp.i < 0 && sp.i > -size) at = size + sp.i;
      else return error(sl, "split must be an integer greater than zero and less than the length of the given axis");
    } else if (sp.kind == Value::Float) {
      at = (int64_t)std::ceil(sp.f * (double)size);
      if (!(at > 0 && at < size))
        return error(sl, "split must be a float such that 0 < split and ceil(split * axis_size) < 1");
    } else {
      return error(sl, fmt::format(FMT_STRING("Nx.split expects an integer or a float, got {}"), describeValue(sp)));
    }
    Value t = Value::tensor(x, loc);
    NXC_TRY(head, callNx("slice_along_axis", {t, num(0), num(at), kw({{"axis", num(axis)}})}, loc));
    NXC_TRY(tail, callNx("slice_along_axis", {t, num(at), num(size - at), kw({{"axis", num(axis)}})}, loc));
    return Value::tuple({head, tail}, loc);
  }
  if (fn == "all_close") {
    // As Nx: |a - b| <= atol + rtol |b| everywhere, infinities equal only to
    // themselves, NaN equal to NaN only with equal_nan: true; a u8 scalar.
    Value opts = takeOptions(args, 2);
    NXC_CHECK(arity(fn, args, 2, 2, loc));
    NXC_TRY(o, options(opts, {"rtol", "atol", "equal_nan"}, "Nx.all_close"));
    double rtol = 1.0e-5, atol = 1.0e-8;
    bool equalNan = false;
    for (auto [key, out] : {std::pair<const char *, double *>{"rtol", &rtol}, {"atol", &atol}})
      if (o.count(key)) {
        if (!o[key].isNumber() || o[key].kind == Value::Atom)
          return error(o[key].loc.valid() ? o[key].loc : loc,
                       fmt::format(FMT_STRING("Nx.all_close: :{} must be a number"), key));
        *out = o[key].asDouble();
      }
    if (o.count("equal_nan")) { NXC_TRY(e, boolOption(o["equal_nan"], "equal_nan")); equalNan = e; }
    NXC_TRY(a, toTensor(args[0], loc));
    NXC_TRY(b, toTensor(args[1], loc));
    bool ints = g_.typeOf(a).elem.isInteger() && g_.typeOf(b).elem.isInteger();
    Value A = Value::tensor(a, loc), B = Value::tensor(b, loc);
    NXC_TRY(diff, callNx("subtract", {A, B}, loc));
    NXC_TRY(absDiff, callNx("abs", {diff}, loc));
    Value absB;
    if (ints) {
      NXC_TRY(wide, callNx("as_type", {B, Value::atomValue("f64", loc)}, loc));
      NXC_TRY(ab, callNx("abs", {wide}, loc));
      absB = ab;
    } else {
      NXC_TRY(ab, callNx("abs", {B}, loc));
      absB = ab;
    }
    NXC_TRY(scaled, callNx("multiply", {Value::real(rtol, loc), absB}, loc));
    NXC_TRY(bound, callNx("add", {Value::real(atol, loc), scaled}, loc));
    NXC_TRY(close, callNx("less_equal", {absDiff, bound}, loc));
    if (!ints) {
      NXC_TRY(infA, callNx("is_infinity", {A}, loc));
      NXC_TRY(infB, callNx("is_infinity", {B}, loc));
      NXC_TRY(anyInf, callNx("logical_or", {infA, infB}, loc));
      NXC_TRY(same, callNx("equal", {A, B}, loc));
      NXC_TRY(entries, callNx("select", {anyInf, same, close}, loc));
      close = entries;
      if (equalNan) {
        NXC_TRY(nanA, callNx("is_nan", {A}, loc));
        NXC_TRY(nanB, callNx("is_nan", {B}, loc));
        NXC_TRY(both, callNx("logical_and", {nanA, nanB}, loc));
        NXC_TRY(withNan, callNx("select", {both, num(1), close}, loc));
        close = withNan;
      }
    }
    return callNx("all", {close}, loc);
  }
  if (fn == "fill") {
    Value opts = takeOptions(args, 2);
    NXC_CHECK(arity(fn, args, 2, 2, loc));
    NXC_TRY(o, options(opts, {"type"}, "Nx.fill"));
    NXC_TRY(x, tensorArg(fn, args[0], loc));
    ElemType t = binaryType(args[0], args[1]);
    if (o.count("type")) { NXC_TRY(tt, parseType(o["type"])); t = tt; }
    if (!args[1].isNumber() && args[1].kind != Value::Tensor)
      return error(args[1].loc.valid() ? args[1].loc : loc, "Nx.fill expects a number as the value");
    NXC_TRY(v, toTensor(args[1], loc));
    int filled = broadcastTo(cast(v, t, loc), g_.typeOf(x).shape, loc);
    return Value::tensor(named(filled, namesOf(x)), loc);
  }
  if (fn == "diff") {
    Value opts = takeOptions(args, 1);
    NXC_CHECK(arity(fn, args, 1, 1, loc));
    NXC_TRY(o, options(opts, {"order", "axis"}, "Nx.diff"));
    NXC_TRY(x, tensorArg(fn, args[0], loc));
    const TensorType t = g_.typeOf(x);
    if (t.rank() == 0) return error(loc, "cannot compute diff of a scalar");
    int64_t order = 1, axis = t.rank() - 1;
    if (o.count("order")) {
      NXC_TRY(k, intArg("Nx.diff", o["order"], ":order", loc));
      if (k < 0) return error(o["order"].loc, fmt::format(FMT_STRING("order must be non-negative but got: {}"), k));
      order = k;
    }
    if (o.count("axis")) { NXC_TRY(a, normalizeAxis(o["axis"], t.rank(), loc, x)); axis = a; }
    Value acc = Value::tensor(x, loc);
    int64_t size = t.shape[axis];
    for (int64_t k = 0; k < order && size - k - 1 >= 0; ++k) {
      int64_t len = size - k - 1;
      NXC_TRY(hi, callNx("slice_along_axis", {acc, num(1), num(len), kw({{"axis", num(axis)}})}, loc));
      NXC_TRY(lo, callNx("slice_along_axis", {acc, num(0), num(len), kw({{"axis", num(axis)}})}, loc));
      NXC_TRY(d, callNx("subtract", {hi, lo}, loc));
      acc = d;
    }
    return acc;
  }
  if (fn == "linspace") {
    Value opts = takeOptions(args, 2);
    NXC_CHECK(arity(fn, args, 2, 2, loc));
    NXC_TRY(o, options(opts, {"n", "type", "endpoint", "name"}, "Nx.linspace"));
    if (!o.count("n") || o["n"].kind != Value::Int || o["n"].i <= 0) {
      std::string got = "nil";
      if (o.count("n")) {
        const Value &v = o["n"];
        got = v.kind == Value::Int ? std::to_string(v.i)
              : v.kind == Value::Float ? (v.f == (double)(int64_t)v.f ? fmt::format(FMT_STRING("{}.0"), (int64_t)v.f)
                                                                       : fmt::format(FMT_STRING("{}"), v.f))
                                       : describeValue(v);
      }
      return error(o.count("n") ? o["n"].loc : loc,
                   fmt::format(FMT_STRING("expected n to be a non-negative integer, got: {}"), got));
    }
    int64_t n = o["n"].i;
    ElemType t = ElemType::f32();
    if (o.count("type")) { NXC_TRY(tt, parseType(o["type"])); t = tt; }
    bool endpoint = true;
    if (o.count("endpoint")) { NXC_TRY(e, boolOption(o["endpoint"], "endpoint")); endpoint = e; }
    NXC_TRY(a, toTensor(args[0], loc));
    NXC_TRY(b, toTensor(args[1], loc));
    int start = cast(a, t, loc), stop = cast(b, t, loc);
    Shape s = g_.typeOf(start).shape;
    if (g_.typeOf(stop).shape != s)
      return error(loc, fmt::format(FMT_STRING("expected start and stop to have the same shape. Got shapes {} and {}"),
                                    shapeString(s), shapeString(g_.typeOf(stop).shape)));
    Shape withN = s;
    withN.push_back(1);
    if (n == 1 && !o.count("name")) return Value::tensor(reshape(start, withN, loc), loc);
    Shape iotaShape = s;
    iotaShape.push_back(n);
    std::vector<Value> dims;
    for (auto d : iotaShape) dims.push_back(num(d));
    NXC_TRY(iota,
            callNx("iota",
                   {Value::tuple(dims, loc), kw({{"axis", num(-1)}, {"type", Value::atomValue(t.name(), loc)}})}, loc));
    NXC_TRY(span,
            callNx("subtract",
                   {Value::tensor(reshape(stop, withN, loc), loc), Value::tensor(reshape(start, withN, loc), loc)},
                   loc));
    NXC_TRY(step, callNx("divide", {span, num(endpoint ? n - 1 : n)}, loc));
    NXC_TRY(scaled, callNx("multiply", {iota, step}, loc));
    NXC_TRY(shifted, callNx("add", {scaled, Value::tensor(reshape(start, withN, loc), loc)}, loc));
    int out = cast(shifted.node, t, loc);
    if (o.count("name")) {
      std::vector<std::string> names(withN.size());
      const Value &nm = o["name"];
      if (nm.kind != Value::Atom) return error(nm.loc.valid() ? nm.loc : loc, "Nx.linspace: :name must be an atom");
      if (nm.atom != "nil") names.back() = nm.atom;
      out = named(reshape(out, g_.typeOf(out).shape, loc), names);
    }
    return Value::tensor(out, loc);
  }
  // put_diagonal(t, diagonal, offset: k): indexed_put at the diagonal's indices.
  Value opts = takeOptions(args, 2);
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  NXC_TRY(o, options(opts, {"offset"}, "Nx.put_diagonal"));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  NXC_TRY(d, tensorArg(fn, args[1], loc));
  const Shape s = g_.typeOf(x).shape;
  int64_t offset = 0;
  if (o.count("offset")) { NXC_TRY(k, intArg("Nx.put_diagonal", o["offset"], ":offset", loc)); offset = k; }
  const Shape ds = g_.typeOf(d).shape;
  if (s.size() != 2)
    return error(loc,
                 fmt::format(FMT_STRING("put_diagonal/3 expects tensor of rank 2, got tensor of rank: {}"), s.size()));
  if (ds.size() != 1)
    return error(loc, fmt::format(FMT_STRING("put_diagonal/3 expects diagonal of rank 1, got tensor of rank: {}"),
                                  ds.size()));
  if (offset >= 0 && offset >= s[1])
    return error(loc,
                 fmt::format(FMT_STRING("offset must be less than length of axis 1 when positive, got: {}"), offset));
  if (offset < 0 && -offset >= s[0])
    return error(loc, fmt::format(FMT_STRING("absolute value of offset must be less than length of axis 0 when "
                                             "negative, got: {}"),
                                  offset));
  std::vector<int64_t> idx;
  int64_t r0 = offset >= 0 ? 0 : -offset, c0 = offset >= 0 ? offset : 0, count = 0;
  for (int64_t r = r0, c = c0; r < s[0] && c < s[1]; ++r, ++c, ++count) idx.insert(idx.end(), {r, c});
  if (ds[0] != count)
    return error(loc,
                 fmt::format(FMT_STRING("expected diagonal tensor of length: {}, got diagonal tensor of length: {}"),
                             count, ds[0]));
  int indices = constant(ElemType::s32(), {count, 2}, {}, idx, loc);
  return callNx("indexed_put", {Value::tensor(x, loc), Value::tensor(indices, loc), Value::tensor(d, loc)}, loc);
}

} // namespace nxc::sema
