//===- NxLinAlg.cpp - Nx.dot and friends ------------------------------------===//
//
// dot/2,4,6 with Nx's axis rules, and outer.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>

namespace nxc::sema {

std::vector<NxEntry> nxLinAlgFunctions() {
  return {{"dot", &Tracer::nxDot}, {"outer", &Tracer::nxOuter}, {"conv", &Tracer::nxConv},
          {"LinAlg.norm", &Tracer::nxNorm}, {"LinAlg.triangular_solve", &Tracer::nxTriangularSolve},
          {"LinAlg.solve", &Tracer::nxSolve}, {"LinAlg.invert", &Tracer::nxInvert},
          {"LinAlg.lu", &Tracer::nxDecomposition}, {"LinAlg.cholesky", &Tracer::nxDecomposition},
          {"LinAlg.determinant", &Tracer::nxDecomposition}, {"LinAlg.qr", &Tracer::nxQr}};
}

Result<Value> Tracer::nxNorm(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"ord", "axes", "keep_axes"}, "Nx.LinAlg.norm"));
  NXC_TRY(x0, tensorArg(fn, args[0], loc));
  int64_t rank = g_.typeOf(x0).rank();
  std::vector<int64_t> axes;
  if (o.count("axes")) {
    NXC_TRY(ax, axesOption(o["axes"], rank, loc, x0));
    axes = ax;
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (axes.empty() || axes.size() > 2)
    return error(loc,
                 fmt::format(FMT_STRING("Nx.LinAlg.norm expects a vector or a matrix (one or two axes), got {} axes"),
                             axes.size()));
  bool keep = false;
  if (o.count("keep_axes")) {
    NXC_TRY(k, boolOption(o["keep_axes"], "keep_axes"));
    keep = k;
  }
  Value ord = o.count("ord") ? o["ord"] : Value::atomValue("nil", loc);
  ElemType t = toFloating(g_.typeOf(x0).elem);
  Value x = Value::tensor(cast(x0, t, loc), loc);
  auto axesList = [&](const std::vector<int64_t> &ax) {
    Value l;
    l.kind = Value::List;
    l.loc = loc;
    for (auto a : ax) {
      l.elems.push_back(Value::number(a, loc));
      l.keys.push_back("");
      l.keyLocs.push_back(loc);
    }
    return l;
  };
  auto reduceOver = [&](const char *op, const Value &v, const std::vector<int64_t> &ax, bool k) -> Result<Value> {
    Value kw;
    kw.kind = Value::List;
    kw.loc = loc;
    kw.elems = {axesList(ax), Value::atomValue(k ? "true" : "false", loc)};
    kw.keys = {"axes", "keep_axes"};
    kw.keyLocs = {loc, loc};
    return reduce(op, {v, kw}, loc);
  };
  std::vector<Value> a1 = {x};
  NXC_TRY(absX, nxSameUnary("abs", a1, loc));
  bool vector = axes.size() == 1;
  std::string ordName = ord.kind == Value::Atom ? ord.atom : "";
  if (ord.isNil() || ordName == "frobenius" || (ord.kind == Value::Int && ord.i == 2)) {
    if (ordName == "frobenius" && vector) return error(ord.loc, "Nx.LinAlg.norm: :frobenius expects a matrix");
    NXC_TRY(sq, binary(Op::Multiply, absX, absX, BinaryRule::Arith, loc));
    NXC_TRY(s, reduceOver("sum", sq, axes, keep));
    std::vector<Value> a = {s};
    return nxFloatUnary("sqrt", a, loc);
  }
  if (vector) {
    if (ordName == "nuclear")
      return error(
          ord.loc.valid() ? ord.loc : loc,
          fmt::format(FMT_STRING("Nx.LinAlg.norm: ord: :nuclear needs a 2-D tensor, got a {}-D tensor"), rank));
    if (ordName == "inf") return reduceOver("reduce_max", absX, axes, keep);
    if (ordName == "neg_inf") return reduceOver("reduce_min", absX, axes, keep);
    if (ord.kind == Value::Int && ord.i == 0) {
      NXC_TRY(nz, binary(Op::NotEqual, x, Value::number(0, loc), BinaryRule::Compare, loc));
      NXC_TRY(s, reduceOver("sum", Value::tensor(cast(nz.node, t, loc), loc), axes, keep));
      return s;
    }
    if (ord.kind == Value::Int || ord.kind == Value::Float) {
      double p = ord.asDouble();
      NXC_TRY(pw, binary(Op::Pow, absX, Value::real(p, loc), BinaryRule::Arith, loc));
      NXC_TRY(s, reduceOver("sum", pw, axes, keep));
      return binary(Op::Pow, s, Value::real(1.0 / p, loc), BinaryRule::Arith, loc);
    }
    return error(ord.loc.valid() ? ord.loc : loc,
                 fmt::format(FMT_STRING("Nx.LinAlg.norm: invalid :ord for a vector, got {}"), describeValue(ord)));
  }
  // Matrices: 1 / -1 are max/min column sums, :inf / :neg_inf max/min row
  // sums, 2 is the elementwise 2-norm (as nil), -2 the smallest singular
  // value and :nuclear their sum.
  int64_t rows = axes[0], cols = axes[1];
  bool colSums = ord.kind == Value::Int && (ord.i == 1 || ord.i == -1);
  bool rowSums = ordName == "inf" || ordName == "neg_inf";
  std::string shown = ord.kind == Value::Int    ? std::to_string(ord.i)
                      : ord.kind == Value::Atom ? ":" + ordName
                                                : describeValue(ord);
  bool singular = (ord.kind == Value::Int && ord.i == -2) || ordName == "nuclear";
  if (singular && rank != 2)
    return error(ord.loc.valid() ? ord.loc : loc,
                 fmt::format(FMT_STRING("Nx.LinAlg.norm: ord: {} needs a 2-D tensor, got a {}-D tensor"), shown, rank));
  if (singular) {
    Value kw = Value::keywords({{"keep_axes", Value::atomValue(keep ? "true" : "false", loc)}}, loc);
    return singularValueNorm(x.node, ordName == "nuclear", kw, loc);
  }
  if (!colSums && !rowSums)
    return error(ord.loc.valid() ? ord.loc : loc,
                 fmt::format(FMT_STRING("Nx.LinAlg.norm: ord: {} is not a matrix norm (expected 1, -1, 2, -2, :inf, "
                                        ":neg_inf, :frobenius or :nuclear)"),
                             shown));
  NXC_TRY(sums, reduceOver("sum", absX, {colSums ? rows : cols}, true));
  bool max = colSums ? ord.i == 1 : ordName == "inf";
  return reduceOver(max ? "reduce_max" : "reduce_min", sums, axes, keep);
}

Result<Value> Tracer::nxConv(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 2);
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  NXC_TRY(o, options(opts, {"strides", "padding", "input_dilation", "kernel_dilation", "feature_group_size",
                            "batch_group_size", "input_permutation", "kernel_permutation", "output_permutation"},
                     "Nx.conv"));
  NXC_TRY(x0, tensorArg(fn, args[0], loc));
  NXC_TRY(k0, tensorArg(fn, args[1], loc));
  int64_t rank = g_.typeOf(x0).rank();
  if (rank < 3 || g_.typeOf(k0).rank() != rank)
    return error(loc, fmt::format(FMT_STRING("Nx.conv expects an input and a kernel of the same rank, at least 3, "
                                             "got {} and {}"),
                                  shapeString(g_.typeOf(x0).shape), shapeString(g_.typeOf(k0).shape)));
  size_t spatial = (size_t)rank - 2;
  auto permutation = [&](const char *key, int node, std::vector<int64_t> &perm) -> Status {
    perm.clear();
    for (int64_t d = 0; d < rank; ++d) perm.push_back(d);
    if (!o.count(key)) return okStatus();
    NXC_TRY(p, axesOption(o[key], rank, loc, node));
    if ((int64_t)p.size() != rank)
      return error(o[key].loc, fmt::format(FMT_STRING("Nx.conv: :{} must permute all axes"), key));
    perm = p;
    return okStatus();
  };
  std::vector<int64_t> ip, kp, op;
  NXC_CHECK(permutation("input_permutation", x0, ip));
  NXC_CHECK(permutation("kernel_permutation", k0, kp));
  NXC_CHECK(permutation("output_permutation", -1, op));
  ElemType t = toFloating(mergeTypes(g_.typeOf(x0).elem, g_.typeOf(k0).elem));
  int x = cast(transpose(x0, ip, loc), t, loc), k = cast(transpose(k0, kp, loc), t, loc);
  Shape xs = g_.typeOf(x).shape, ks = g_.typeOf(k).shape;
  auto perSpatial = [&](const char *key, std::vector<int64_t> &out) -> Status {
    out.assign(spatial, 1);
    if (!o.count(key)) return okStatus();
    const Value &v = o[key];
    if (v.kind == Value::Int) out.assign(spatial, v.i);
    else if (v.kind == Value::List && v.elems.size() == spatial)
      for (size_t d = 0; d < spatial; ++d) {
        NXC_TRY(n, intArg("Nx.conv", v.elems[d], std::string(":") + key, loc));
        out[d] = n;
      }
    else return error(v.loc.valid() ? v.loc : loc,
                      fmt::format(FMT_STRING("Nx.conv: :{} must be an integer or a list of {} integers"), key,
                                  spatial));
    for (auto n : out)
      if (n < 1)
        return error(v.loc.valid() ? v.loc : loc, fmt::format(FMT_STRING("Nx.conv: :{} must be positive"), key));
    return okStatus();
  };
  std::vector<int64_t> strides, inDil, kDil;
  NXC_CHECK(perSpatial("strides", strides));
  NXC_CHECK(perSpatial("input_dilation", inDil));
  NXC_CHECK(perSpatial("kernel_dilation", kDil));
  int64_t groups = 1;
  if (o.count("feature_group_size")) {
    NXC_TRY(g, intArg("Nx.conv", o["feature_group_size"], ":feature_group_size", loc));
    groups = g;
  }
  int64_t batchGroups = 1;
  if (o.count("batch_group_size")) {
    NXC_TRY(g, intArg("Nx.conv", o["batch_group_size"], ":batch_group_size", loc));
    batchGroups = g;
    const Loc &bl = o["batch_group_size"].loc.valid() ? o["batch_group_size"].loc : loc;
    if (g < 1) return error(bl, "Nx.conv: :batch_group_size must be positive");
    if (g > 1 && groups > 1)
      return error(bl, "Nx.conv: :feature_group_size and :batch_group_size cannot both be greater than 1");
    if (xs[0] % g || ks[0] % g)
      return error(bl, fmt::format(FMT_STRING("Nx.conv: the batch size {} and the kernel's {} output channels must be "
                                              "divisible by :batch_group_size {}"),
                                   xs[0], ks[0], g));
  }
  if (groups < 1 || xs[1] % groups || ks[0] % groups || xs[1] / groups != ks[1])
    return error(loc,
                 fmt::format(FMT_STRING("Nx.conv: the input's {} channels in {} groups do not match the kernel's {}"),
                             xs[1], groups, shapeString(ks)));
  // Input dilation (interior padding) and padding, as one pad with zeros.
  std::vector<int64_t> lo(spatial, 0), hi(spatial, 0);
  if (o.count("padding")) {
    const Value &p = o["padding"];
    if (p.kind == Value::Atom && p.atom == "same") {
      for (size_t d = 0; d < spatial; ++d) {
        std::optional<int64_t> in = dilatedExtent(xs[2 + d], inDil[d]), kk = dilatedExtent(ks[2 + d], kDil[d]);
        if (!in || !kk || *in > kMaxElements || *kk > kMaxElements)
          return error(loc, "Nx.conv: the dilated input or kernel is larger than a tensor may be (2^40 elements)");
        int64_t out = ceilDiv(*in, strides[d]);
        int64_t total = std::max<int64_t>((out - 1) * strides[d] + *kk - *in, 0);
        lo[d] = total / 2;
        hi[d] = total - lo[d];
      }
    } else if (p.kind == Value::List && p.elems.size() == spatial) {
      for (size_t d = 0; d < spatial; ++d) {
        const Value &c = p.elems[d];
        if (c.kind != Value::Tuple || c.elems.size() != 2 || c.elems[0].kind != Value::Int ||
            c.elems[1].kind != Value::Int)
          return error(c.loc.valid() ? c.loc : p.loc,
                       "Nx.conv: padding must be :valid, :same or a list of {low, high}");
        lo[d] = c.elems[0].i;
        hi[d] = c.elems[1].i;
      }
    } else if (!(p.kind == Value::Atom && p.atom == "valid")) {
      return error(p.loc.valid() ? p.loc : loc, "Nx.conv: padding must be :valid, :same or a list of {low, high}");
    }
  }
  bool pad = false;
  for (size_t d = 0; d < spatial; ++d) pad |= lo[d] || hi[d] || inDil[d] > 1;
  if (pad) {
    Value cfg;
    cfg.kind = Value::List;
    cfg.loc = loc;
    for (int64_t d = 0; d < rank; ++d) {
      bool s = d >= 2;
      cfg.elems.push_back(Value::tuple({Value::number(s ? lo[d - 2] : 0, loc), Value::number(s ? hi[d - 2] : 0, loc),
                                        Value::number(s ? inDil[d - 2] - 1 : 0, loc)},
                                       loc));
      cfg.keys.push_back("");
      cfg.keyLocs.push_back(loc);
    }
    std::vector<Value> padArgs = {Value::tensor(x, loc), Value::number(0, loc), cfg};
    NXC_TRY(padded, nxPad("conv", padArgs, loc));
    x = cast(padded.node, t, loc);
    xs = g_.typeOf(x).shape;
  }
  Shape out = {xs[0], ks[0]};
  for (size_t d = 0; d < spatial; ++d) {
    std::optional<int64_t> extent = dilatedExtent(ks[2 + d], kDil[d]);
    int64_t kk = extent ? *extent : INT64_MAX;
    if (xs[2 + d] < kk)
      return error(loc,
                   fmt::format(FMT_STRING("Nx.conv: the (dilated) kernel {} does not fit in the (padded) input {}"),
                               shapeString(ks), shapeString(xs)));
    out.push_back((xs[2 + d] - kk) / strides[d] + 1);
  }
  // Batch groups: the batch in batchGroups consecutive parts, part j
  // convolved with the j-th consecutive part of the kernel's output
  // channels, the results side by side along the output channels.
  std::vector<Value> parts;
  for (int64_t j = 0; j < batchGroups; ++j) {
    int xj = x, kj = k;
    Shape oj = out;
    if (batchGroups > 1) {
      int64_t nb = xs[0] / batchGroups, no = ks[0] / batchGroups;
      std::vector<Value> xStart(rank, Value::number(0, loc)), kStart(rank, Value::number(0, loc));
      xStart[0] = Value::number(j * nb, loc);
      kStart[0] = Value::number(j * no, loc);
      Shape xl = xs, kl = ks;
      xl[0] = nb;
      kl[0] = no;
      NXC_TRY(xs1, slice(x, xStart, xl, std::vector<int64_t>(rank, 1), loc));
      NXC_TRY(ks1, slice(k, kStart, kl, std::vector<int64_t>(rank, 1), loc));
      xj = xs1, kj = ks1;
      oj[0] = nb;
      oj[1] = no;
    }
    Node n;
    n.op = Op::Conv;
    n.operands = {xj, kj};
    n.type = TensorType{t, oj, {}};
    n.attrs = {{"strides", strides}, {"kernel_dilation", kDil}, {"feature_groups", {groups}}};
    n.loc = loc;
    parts.push_back(Value::tensor(add(n), loc));
  }
  int r = parts[0].node;
  if (batchGroups > 1) {
    NXC_TRY(joined, callNx("concatenate",
                           {Value::list(parts, loc), Value::keywords({{"axis", Value::number(1, loc)}}, loc)}, loc));
    r = joined.node;
  }
  // output_permutation[i] names the output axis that dim i goes to.
  std::vector<int64_t> inverse(rank);
  for (int64_t d = 0; d < rank; ++d) inverse[op[d]] = d;
  return Value::tensor(transpose(r, inverse, loc), loc);
}

Result<Value> Tracer::nxDot(const std::string &, std::vector<Value> &args, const Loc &loc) { return dot(args, loc); }

Result<Value> Tracer::nxOuter(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  // Nx.outer flattens both sides: (size a) x (size b).
  NXC_TRY(a, tensorArg(fn, args[0], loc));
  NXC_TRY(b, tensorArg(fn, args[1], loc));
  // Tensors of both sides first (numbers as s32/f32), then their types merge.
  ElemType t = mergeTypes(g_.typeOf(a).elem, g_.typeOf(b).elem);
  int64_t na = g_.typeOf(a).numElements(), nb = g_.typeOf(b).numElements();
  int x = reshape(cast(a, t, loc), {na, 1}, loc), y = reshape(cast(b, t, loc), {1, nb}, loc);
  return binary(Op::Multiply, Value::tensor(x, loc), Value::tensor(y, loc), BinaryRule::Arith, loc);
}

Result<std::vector<int64_t>> Tracer::axisList(const Value &v, int64_t rank, const Loc &loc, const std::string &what,
                                              int node) {
  if (v.kind != Value::List)
    return error(v.loc.valid() ? v.loc : loc,
                 fmt::format(FMT_STRING("Nx.dot expects a list of {} axes, got {}"), what, describeValue(v)));
  std::vector<int64_t> out;
  for (auto &e : v.elems) {
    NXC_TRY(a, normalizeAxis(e, rank, v.loc, node));
    if (std::find(out.begin(), out.end(), a) != out.end())
      return error(v.loc, fmt::format(FMT_STRING("Nx.dot: repeated axis {} in {} axes"), a, what));
    out.push_back(a);
  }
  return out;
}

Result<Value> Tracer::dot(std::vector<Value> args, const Loc &loc) {
  if (args.size() != 2 && args.size() != 4 && args.size() != 6)
    return error(loc, fmt::format(FMT_STRING("wrong number of arguments to Nx.dot: expected 2, 4 or 6, got {}"),
                                  args.size()));
  size_t ia = 0, ib = args.size() / 2;
  NXC_TRY(a, tensorArg("dot", args[ia], loc));
  NXC_TRY(b, tensorArg("dot", args[ib], loc));
  Shape sa = g_.typeOf(a).shape, sb = g_.typeOf(b).shape;
  std::vector<int64_t> ca, cb, ba, bb;
  if (args.size() == 2) {
    if (sa.empty() || sb.empty()) return binary(Op::Multiply, args[0], args[1], BinaryRule::Arith, loc);
    ca = {(int64_t)sa.size() - 1};
    cb = {sb.size() == 1 ? 0 : (int64_t)sb.size() - 2};
  } else {
    NXC_TRY(x, axisList(args[1], (int64_t)sa.size(), loc, "contraction", a));
    NXC_TRY(y, axisList(args[ib + 1], (int64_t)sb.size(), loc, "contraction", b));
    ca = x;
    cb = y;
    if (args.size() == 6) {
      NXC_TRY(p, axisList(args[2], (int64_t)sa.size(), loc, "batch", a));
      NXC_TRY(q, axisList(args[5], (int64_t)sb.size(), loc, "batch", b));
      ba = p;
      bb = q;
      if (ba.size() != bb.size()) return error(loc, "right tensor must be batched if left tensor is batched");
      for (size_t i = 0; i < ba.size(); ++i) {
        if (ba[i] != (int64_t)i)
          return error(loc, fmt::format(FMT_STRING("invalid dot batch axis for the left tensor, batch axes must be "
                                                   "successive dimensions starting from 0, got {}"),
                                        shapeString(ba)));
        if (bb[i] != (int64_t)i)
          return error(loc, fmt::format(FMT_STRING("invalid dot batch axis for the right tensor, batch axes must be "
                                                   "successive dimensions starting from 0, got {}"),
                                        shapeString(bb)));
        if (sa[i] != sb[i])
          return error(loc, fmt::format(FMT_STRING("dot batch dimension {} does not match: {} on the left and {} on "
                                                   "the right"),
                                        i, sa[i], sb[i]));
        if (std::find(ca.begin(), ca.end(), ba[i]) != ca.end())
          return error(loc,
                       fmt::format(FMT_STRING("dot batch axes for left tensor ({}) cannot be in contract axes ({})"),
                                   shapeString(ba), shapeString(ca)));
        if (std::find(cb.begin(), cb.end(), bb[i]) != cb.end())
          return error(loc,
                       fmt::format(FMT_STRING("dot batch axes for right tensor ({}) cannot be in contract axes ({})"),
                                   shapeString(bb), shapeString(cb)));
      }
    }
    if (ca.size() != cb.size())
      return error(loc, fmt::format(FMT_STRING("Nx.dot: contraction axes must pair up, got {} on the left and {} on "
                                               "the right"),
                                    ca.size(), cb.size()));
  }
  for (size_t i = 0; i < ca.size(); ++i)
    if (sa[ca[i]] != sb[cb[i]])
      return error(loc, fmt::format(FMT_STRING("dot/zip expects shapes to be compatible, dimension {} of left-side "
                                               "({}) does not equal dimension {} of right-side ({})"),
                                    ca[i], sa[ca[i]], cb[i], sb[cb[i]]));
  Shape out;
  for (auto d : ba) out.push_back(sa[d]);
  for (size_t i = 0; i < sa.size(); ++i)
    if (std::find(ca.begin(), ca.end(), (int64_t)i) == ca.end() &&
        std::find(ba.begin(), ba.end(), (int64_t)i) == ba.end())
      out.push_back(sa[i]);
  for (size_t i = 0; i < sb.size(); ++i)
    if (std::find(cb.begin(), cb.end(), (int64_t)i) == cb.end() &&
        std::find(bb.begin(), bb.end(), (int64_t)i) == bb.end())
      out.push_back(sb[i]);
  ElemType t = mergeTypes(g_.typeOf(a).elem, g_.typeOf(b).elem);
  Node n;
  n.op = Op::Dot;
  n.operands = {cast(a, t, loc), cast(b, t, loc)};
  n.type = TensorType{t, out, {}};
  n.attrs = {{"lhs_contract", ca}, {"lhs_batch", ba}, {"rhs_contract", cb}, {"rhs_batch", bb}};
  n.loc = loc;
  // Names: the batch axes, then the free axes of each side, as Nx keeps them.
  std::vector<std::string> na = namesOf(a), nb = namesOf(b), names;
  for (auto d : ba) names.push_back(na[d]);
  for (size_t i = 0; i < sa.size(); ++i)
    if (std::find(ca.begin(), ca.end(), (int64_t)i) == ca.end() &&
        std::find(ba.begin(), ba.end(), (int64_t)i) == ba.end())
      names.push_back(na[i]);
  for (size_t i = 0; i < sb.size(); ++i)
    if (std::find(cb.begin(), cb.end(), (int64_t)i) == cb.end() &&
        std::find(bb.begin(), bb.end(), (int64_t)i) == bb.end())
      names.push_back(nb[i]);
  return Value::tensor(named(add(n), names), loc);
}

} // namespace nxc::sema
