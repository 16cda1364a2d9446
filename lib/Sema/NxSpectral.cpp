//===- NxSpectral.cpp - Nx.LinAlg eigh, svd and what is built on svd ------===//
//
// eigh, svd, pinv, matrix_rank and least_squares, and the matrix norms that
// need singular values (ord: -2 and :nuclear), and Nx.Random.multivariate_normal
// (a normal sample through a factor of the covariance). The handlers check arguments
// and options with Nx's messages, make the input floating and split batches
// into single matrices; the algorithms are defn code in
// lib/Sema/prelude/Spectral.exs, traced like the user's own defns.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

namespace nxc::sema {

std::vector<NxEntry> nxSpectralFunctions() {
  return {{"LinAlg.eigh", &Tracer::nxEigh},
          {"LinAlg.svd", &Tracer::nxSvd},
          {"LinAlg.pinv", &Tracer::nxPinv},
          {"LinAlg.matrix_rank", &Tracer::nxMatrixRank},
          {"LinAlg.least_squares", &Tracer::nxLeastSquares},
          {"Random.multivariate_normal", &Tracer::nxMultivariateNormal},
          {"Random.multivariate_normal_split", &Tracer::nxMultivariateNormal}};
}

namespace {

Loc at(const Value &v, const Loc &loc) { return v.loc.valid() ? v.loc : loc; }

/// The type svd's iteration runs in: f32 at least, as Nx's needs.
ElemType atLeastF32(ElemType t) { return t.bits < 32 ? ElemType{TypeKind::F, 32} : t; }

} // namespace

/// A positive integer option (:max_iter), Nx's default where absent.
Result<int64_t> Tracer::iterationsOption(std::map<std::string, Value> &o, int64_t fallback, const std::string &fn,
                                         const Loc &loc) {
  if (!o.count("max_iter")) return fallback;
  const Value &v = o["max_iter"];
  if (v.isNil()) return error(at(v, loc), "missing option :max_iter");
  if (v.kind != Value::Int || v.i < 1)
    return error(at(v, loc),
                 fmt::format(FMT_STRING("{}: :max_iter must be a positive integer, got {}"), fn, describeValue(v)));
  return v.i;
}

/// A number option (:eps), Nx's default where absent.
Result<double> Tracer::toleranceOption(std::map<std::string, Value> &o, double fallback, const std::string &fn,
                                       const Loc &loc) {
  if (!o.count("eps")) return fallback;
  const Value &v = o["eps"];
  if (v.kind != Value::Int && v.kind != Value::Float)
    return error(at(v, loc), fmt::format(FMT_STRING("{}: :eps must be a number, got {}"), fn, describeValue(v)));
  return v.asDouble();
}

/// The tensor argument of eigh/svd: at least a matrix (and square for eigh).
Result<int> Tracer::matrixArg(const std::string &fn, const Value &v, bool square, const Loc &loc) {
  NXC_TRY(a, tensorArg(fn, v, loc));
  const Shape &s = g_.typeOf(a).shape;
  if (s.size() < 2)
    return error(loc, fmt::format(FMT_STRING("tensor must have at least rank 2, got rank {} with shape {}"), s.size(),
                                  shapeString(s)));
  if (square && s[s.size() - 1] != s[s.size() - 2])
    return error(loc, "tensor must be a square matrix or a batch of square matrices, got shape: " + shapeString(s));
  return a;
}

Result<Value> Tracer::nxEigh(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"max_iter", "eps"}, "Nx.LinAlg.eigh"));
  NXC_TRY(maxIter, iterationsOption(o, 1000, "Nx.LinAlg.eigh", loc));
  NXC_TRY(eps, toleranceOption(o, 1.0e-4, "Nx.LinAlg.eigh", loc));
  NXC_TRY(a, matrixArg(fn, args[0], true, loc));
  const TensorType ta = g_.typeOf(a);
  ElemType ft = toFloating(ta.elem);
  NXC_TRY(r, perMatrix(
                 {a}, ta.rank() - 2,
                 [&](const std::vector<int> &m) -> Result<std::vector<int>> {
                   Value x = Value::tensor(cast(m[0], ft, loc), loc);
                   NXC_TRY(f, prelude("eigh", {x, Value::real(eps, loc), Value::number(maxIter, loc)}, loc));
                   NXC_TRY(w, prelude("eigh_grad", {x, f.elems[0], f.elems[1]}, loc));
                   return std::vector<int>{w.elems[0].node, w.elems[1].node};
                 },
                 loc));
  return Value::tuple({Value::tensor(r[0], loc), Value::tensor(r[1], loc)}, loc);
}

/// {u, s, vt} of every matrix of `a` (already checked), computed in f32 at
/// least (Nx's iteration needs it) and returned in `out`.
Result<std::vector<int>> Tracer::singularValues(int a, bool full, int64_t maxIter, ElemType out, const Loc &loc) {
  const TensorType ta = g_.typeOf(a);
  ElemType work = atLeastF32(out);
  return perMatrix(
      {a}, ta.rank() - 2,
      [&](const std::vector<int> &m) -> Result<std::vector<int>> {
        Value x = Value::tensor(cast(m[0], work, loc), loc);
        Value fullValue = Value::atomValue(full ? "true" : "false", loc);
        NXC_TRY(f, prelude("svd", {x, fullValue, Value::number(maxIter, loc)}, loc));
        NXC_TRY(w, prelude("svd_grad", {x, f.elems[0], f.elems[1], f.elems[2]}, loc));
        return std::vector<int>{cast(w.elems[0].node, out, loc), cast(w.elems[1].node, out, loc),
                                cast(w.elems[2].node, out, loc)};
      },
      loc);
}

Result<Value> Tracer::nxSvd(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"max_iter", "full_matrices?"}, "Nx.LinAlg.svd"));
  NXC_TRY(maxIter, iterationsOption(o, 100, "Nx.LinAlg.svd", loc));
  bool full = true;
  if (o.count("full_matrices?")) {
    NXC_TRY(f, boolOption(o["full_matrices?"], "full_matrices?"));
    full = f;
  }
  NXC_TRY(a, matrixArg(fn, args[0], false, loc));
  NXC_TRY(r, singularValues(a, full, maxIter, toFloating(g_.typeOf(a).elem), loc));
  return Value::tuple({Value::tensor(r[0], loc), Value::tensor(r[1], loc), Value::tensor(r[2], loc)}, loc);
}

/// The pseudo-inverse, as Nx.LinAlg.pinv: 1 / x for a scalar, x / |x|^2 for
/// a vector, from the reduced svd for (batches of) matrices; zero where
/// every entry is within eps of zero.
Result<int> Tracer::pseudoInverse(int a, double eps, const Loc &loc) {
  const TensorType ta = g_.typeOf(a);
  ElemType ft = toFloating(ta.elem);
  Value x = Value::tensor(cast(a, ft, loc), loc);
  if (ta.rank() < 2) {
    NXC_TRY(absX, callNx("abs", {x}, loc));
    NXC_TRY(small, callNx("less_equal", {absX, Value::real(eps, loc)}, loc));
    NXC_TRY(zero, callNx("all", {small}, loc));
    Value inverse;
    if (ta.rank() == 0) {
      NXC_TRY(i, callNx("divide", {Value::number(1, loc), x}, loc));
      inverse = i;
    } else {
      NXC_TRY(norm, callNx("LinAlg.norm", {x}, loc));
      NXC_TRY(sq, callNx("pow", {norm, Value::number(2, loc)}, loc));
      NXC_TRY(i, callNx("divide", {x, sq}, loc));
      inverse = i;
    }
    NXC_TRY(r, callNx("select", {zero, Value::number(0, loc), inverse}, loc));
    return cast(r.node, ft, loc);
  }
  ElemType work = atLeastF32(ft);
  NXC_TRY(r, perMatrix(
                 {a}, ta.rank() - 2,
                 [&](const std::vector<int> &m) -> Result<std::vector<int>> {
                   Value one = Value::tensor(cast(m[0], work, loc), loc);
                   NXC_TRY(p, prelude("pinv", {one, Value::real(eps, loc), Value::number(100, loc)}, loc));
                   return std::vector<int>{cast(p.node, ft, loc)};
                 },
                 loc));
  return r[0];
}

Result<Value> Tracer::nxPinv(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"eps"}, "Nx.LinAlg.pinv"));
  NXC_TRY(eps, toleranceOption(o, 1.0e-10, "Nx.LinAlg.pinv", loc));
  NXC_TRY(a, tensorArg(fn, args[0], loc));
  NXC_TRY(p, pseudoInverse(a, eps, loc));
  return Value::tensor(p, loc);
}

Result<Value> Tracer::nxMatrixRank(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"eps"}, "Nx.LinAlg.matrix_rank"));
  NXC_TRY(eps, toleranceOption(o, 1.0e-7, "Nx.LinAlg.matrix_rank", loc));
  NXC_TRY(a, tensorArg(fn, args[0], loc));
  const Shape s = g_.typeOf(a).shape;
  if (s.size() != 2)
    return error(
        loc, fmt::format(FMT_STRING("tensor must have rank 2, got rank {} with shape {}"), s.size(), shapeString(s)));
  // Singular values above eps * max(m, n) * the largest one, counted.
  NXC_TRY(usv, singularValues(a, false, 100, toFloating(g_.typeOf(a).elem), loc));
  Value sv = Value::tensor(usv[1], loc);
  NXC_TRY(largest, callNx("reduce_max", {sv}, loc));
  NXC_TRY(tol, callNx("multiply", {Value::real(eps * (double)std::max(s[0], s[1]), loc), largest}, loc));
  NXC_TRY(above, callNx("greater", {sv, tol}, loc));
  return callNx("sum", {above}, loc);
}

Result<Value> Tracer::nxLeastSquares(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 2);
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  NXC_TRY(o, options(opts, {"eps"}, "Nx.LinAlg.least_squares"));
  NXC_TRY(eps, toleranceOption(o, 1.0e-15, "Nx.LinAlg.least_squares", loc));
  NXC_TRY(a, tensorArg(fn, args[0], loc));
  NXC_TRY(b, tensorArg(fn, args[1], loc));
  const Shape sa = g_.typeOf(a).shape, sb = g_.typeOf(b).shape;
  if (sa.size() != 2)
    return error(loc, fmt::format(FMT_STRING("tensor of 1st argument must have rank 2, got rank {} with shape {}"),
                                  sa.size(), shapeString(sa)));
  if (sb.size() != 1)
    return error(loc, fmt::format(FMT_STRING("tensor of 2nd argument must have rank 1, got rank {} with shape {}"),
                                  sb.size(), shapeString(sb)));
  if (sa[0] != sb[0])
    return error(loc, fmt::format(FMT_STRING("the number of rows of the matrix as the 1st argument and the number of "
                                             "columns of the vector as the 2nd argument must be the same, got 1st "
                                             "argument shape {} and 2nd argument shape {}"),
                                  shapeString(sa), shapeString(sb)));
  NXC_TRY(p, pseudoInverse(a, eps, loc));
  // pinv(a) . b, accumulated in f64 as Nx.BinaryBackend does.
  ElemType out = g_.typeOf(p).elem, tb = g_.typeOf(b).elem;
  if (tb.isFloat() && tb.bits > out.bits) out = tb;
  ElemType wide = out.bits < 64 ? ElemType{TypeKind::F, 64} : out;
  NXC_TRY(x,
          prelude("wide_dot", {Value::tensor(cast(p, wide, loc), loc), Value::tensor(cast(b, wide, loc), loc)}, loc));
  return Value::tensor(cast(x.node, out, loc), loc);
}

/// Nx.LinAlg.norm's ord: -2 (the smallest singular value) and :nuclear
/// (their sum) of a matrix, from the reduced svd.
Result<Value> Tracer::singularValueNorm(int x, bool nuclear, const Value &keepOptions, const Loc &loc) {
  NXC_TRY(usv, singularValues(x, false, 100, toFloating(g_.typeOf(x).elem), loc));
  Value sv = Value::tensor(usv[1], loc);
  if (nuclear) return callNx("sum", {sv}, loc);
  return callNx("reduce_min", {sv, keepOptions}, loc);
}

/// Nx.Random.multivariate_normal(_split)(key, mean, covariance, opts): mean +
/// z a^T with z a standard normal sample of shape [..., n] and a a factor of
/// the covariance (cholesky, or u sqrt(s) from svd or eigh), as Nx samples it.
Result<Value> Tracer::nxMultivariateNormal(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  bool split = fn == "Random.multivariate_normal_split";
  std::string qual = "Nx." + fn;
  Value opts = takeOptions(args, 3);
  NXC_CHECK(arity(fn, args, 3, 3, loc));
  NXC_TRY(o, options(opts, {"names", "type", "shape", "method"}, qual));
  std::string method = "cholesky";
  if (o.count("method")) {
    const Value &m = o["method"];
    if (m.kind != Value::Atom || (m.atom != "svd" && m.atom != "eigh" && m.atom != "cholesky"))
      return error(at(m, loc), "method must be one of :svd, :eigh, and :cholesky");
    method = m.atom;
  }
  NXC_TRY(key, checkKey(args[0], fn, loc));
  NXC_TRY(mean0, tensorArg(fn, args[1], loc));
  NXC_TRY(cov0, tensorArg(fn, args[2], loc));
  const TensorType tm = g_.typeOf(mean0), tc = g_.typeOf(cov0);
  ElemType type = toFloating(mergeTypes(tm.elem, tc.elem));
  if (o.count("type")) {
    NXC_TRY(t, parseType(o["type"]));
    type = t;
  }
  if (!type.isFloat())
    return error(loc, fmt::format(FMT_STRING("expected float or complex type, got type {}"), type.name()));
  if (tm.rank() != 1)
    return error(loc, fmt::format(FMT_STRING("expected mean to have rank 1, got tensor with rank {}"), tm.rank()));
  int64_t n = tm.shape[0];
  if (tc.rank() != 2)
    return error(loc,
                 fmt::format(FMT_STRING("expected covariance to have rank 2, got tensor with rank {}"), tc.rank()));
  if (tc.shape[0] != tc.shape[1])
    return error(loc, "expected covariance to be a square matrix, got tensor with shape " + shapeString(tc.shape));
  if (tc.shape[0] != n)
    return error(loc, fmt::format(FMT_STRING("expected mean and covariance to have the same dimensions, got {} and {}"),
                                  n, tc.shape[0]));
  Shape shape;
  if (o.count("shape")) {
    if (o["shape"].kind != Value::Tuple) return error(at(o["shape"], loc), "shape must be a tuple of integers");
    NXC_TRY(s, shapeArg(o["shape"], qual));
    shape = s;
  }
  shape.push_back(n);
  std::vector<std::string> names;
  if (o.count("names")) {
    NXC_TRY(nn, namesOption(o["names"], shape.size(), loc));
    names = nn;
  }
  // The sampling key, and the key returned beside the sample.
  Value sampleKey = Value::tensor(key, loc), nextKey;
  if (!split) {
    NXC_TRY(keys, callNx("Random.split", {sampleKey}, loc));
    NXC_TRY(k0, slice(keys.node, {Value::number(0, loc), Value::number(0, loc)}, {1, 2}, {1, 1}, loc));
    NXC_TRY(k1, slice(keys.node, {Value::number(1, loc), Value::number(0, loc)}, {1, 2}, {1, 1}, loc));
    nextKey = Value::tensor(reshape(k0, {2}, loc), loc);
    sampleKey = Value::tensor(reshape(k1, {2}, loc), loc);
  }
  Value mean = Value::tensor(cast(mean0, type, loc), loc), cov = Value::tensor(cast(cov0, type, loc), loc);
  Value factor;
  if (method == "cholesky") {
    NXC_TRY(l, callNx("LinAlg.cholesky", {cov}, loc));
    factor = l;
  } else {
    NXC_TRY(d, callNx(method == "svd" ? "LinAlg.svd" : "LinAlg.eigh", {cov}, loc));
    Value u = method == "svd" ? d.elems[0] : d.elems[1], s = method == "svd" ? d.elems[1] : d.elems[0];
    NXC_TRY(root, callNx("sqrt", {s}, loc));
    NXC_TRY(us, callNx("multiply", {u, root}, loc));
    factor = us;
  }
  std::vector<Value> shapeItems;
  for (auto d : shape) shapeItems.push_back(Value::number(d, loc));
  Value sampleOpts =
      Value::keywords({{"shape", Value::tuple(shapeItems, loc)}, {"type", Value::atomValue(type.name(), loc)}}, loc);
  NXC_TRY(z, callNx("Random.normal_split", {sampleKey, Value::real(0.0, loc), Value::real(1.0, loc), sampleOpts}, loc));
  int64_t count = 1;
  for (auto d : shape) count *= d;
  // z a^T, accumulated in f64 as Nx.BinaryBackend does.
  ElemType f64{TypeKind::F, 64};
  int zw = cast(reshape(z.node, {count / n, n}, loc), f64, loc);
  NXC_TRY(factorT, callNx("transpose", {Value::tensor(cast(factor.node, f64, loc), loc)}, loc));
  NXC_TRY(za, prelude("wide_dot", {Value::tensor(zw, loc), factorT}, loc));
  NXC_TRY(x, callNx("add", {mean, Value::tensor(cast(za.node, type, loc), loc)}, loc));
  int result = named(reshape(x.node, shape, loc), names);
  NXC_TRY(stopped, stopGrad(Value::tensor(result, loc), loc));
  if (split) return stopped;
  return Value::tuple({stopped, nextKey}, loc);
}

} // namespace nxc::sema
