//===- NxDecompositions.cpp - Nx.LinAlg solvers and factorizations --------===//
//
// triangular_solve, solve, invert, lu, cholesky, qr and determinant. The
// handlers check arguments with Nx's messages and split batches into single
// matrices; the algorithms are defn code in lib/Sema/prelude/LinAlg.exs,
// compiled into nxc and traced like the user's own defns.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

#include <cmath>

namespace nxc::sema {

namespace {

bool squareMatrices(const Shape &s) { return s.size() >= 2 && s[s.size() - 1] == s[s.size() - 2]; }

} // namespace

Result<std::vector<int>>
Tracer::perMatrix(const std::vector<int> &xs, size_t batchRank,
                  const std::function<Result<std::vector<int>>(const std::vector<int> &)> &each, const Loc &loc) {
  if (batchRank == 0) return each(xs);
  const Shape &s0 = g_.typeOf(xs[0]).shape;
  Shape batch(s0.begin(), s0.begin() + batchRank);
  int64_t count = 1;
  for (auto d : batch) count *= d;
  std::vector<std::vector<int>> parts;
  for (int64_t i = 0; i < count; ++i) {
    std::vector<int> singles;
    for (int x : xs) {
      const Shape &s = g_.typeOf(x).shape;
      Shape inner(s.begin() + batchRank, s.end()), flat = inner, lengths = inner;
      flat.insert(flat.begin(), count);
      lengths.insert(lengths.begin(), 1);
      std::vector<Value> starts(lengths.size(), Value::number(0, loc));
      starts[0] = Value::number(i, loc);
      NXC_TRY(one, slice(reshape(x, flat, loc), starts, lengths, std::vector<int64_t>(lengths.size(), 1), loc));
      singles.push_back(reshape(one, inner, loc));
    }
    NXC_TRY(r, each(singles));
    parts.push_back(r);
  }
  std::vector<int> out;
  for (size_t k = 0; k < parts[0].size(); ++k) {
    Shape inner = g_.typeOf(parts[0][k]).shape, one = inner, full = batch;
    one.insert(one.begin(), 1);
    full.insert(full.end(), inner.begin(), inner.end());
    std::vector<Value> pieces;
    for (auto &p : parts) pieces.push_back(Value::tensor(reshape(p[k], one, loc), loc));
    NXC_TRY(stacked, callNx("concatenate", {Value::list(pieces, loc)}, loc));
    out.push_back(reshape(stacked.node, full, loc));
  }
  return out;
}

int Tracer::triangularSolve(int a, int b, bool lower, bool leftSide, bool transposeA, ElemType out, const Loc &loc) {
  // Reduced to a lower-triangular system solved from the left, as
  // Nx.BinaryBackend does: transpose a (and b, x) for right-side systems,
  // reverse both axes of a (and b's, x's rows) for upper-triangular ones.
  // The substitution runs in f64 and is rounded to the result type once.
  bool transA = leftSide == transposeA, reverseA = leftSide == (lower == transposeA);
  bool vector = g_.typeOf(b).rank() == 1;
  bool transB = !leftSide && !vector;
  ElemType f64{TypeKind::F, 64};
  int64_t n = g_.typeOf(a).shape[0];
  int A = cast(a, f64, loc), B = cast(b, f64, loc);
  if (transA) A = transpose(A, {1, 0}, loc);
  if (reverseA) A = reverse(A, {0, 1}, loc);
  if (transB) B = transpose(B, {1, 0}, loc);
  if (vector) B = reshape(B, {n, 1}, loc);
  if (reverseA) B = reverse(B, {0}, loc);
  auto x = prelude("lower_solve", {Value::tensor(A, loc), Value::tensor(B, loc)}, loc);
  if (!x.ok()) return -1;
  int X = x->node;
  if (reverseA) X = reverse(X, {0}, loc);
  if (vector) X = reshape(X, {n}, loc);
  if (transB) X = transpose(X, {1, 0}, loc);
  X = cast(X, out, loc);
  auto flag = [&](bool v) { return Value::atomValue(v ? "true" : "false", loc); };
  auto wrapped = prelude("triangular_solve_grad",
                         {Value::tensor(cast(a, out, loc), loc), Value::tensor(cast(b, out, loc), loc),
                          Value::tensor(X, loc), flag(lower), flag(leftSide), flag(transposeA)},
                         loc);
  return wrapped.ok() ? wrapped->node : -1;
}

Result<std::vector<int>> Tracer::luFactors(int a, const Loc &loc) {
  Value t = Value::tensor(a, loc);
  NXC_TRY(f, prelude("lu", {t}, loc));
  NXC_TRY(w, prelude("lu_grad", {t, f.elems[0], f.elems[1], f.elems[2]}, loc));
  return std::vector<int>{w.elems[0].node, w.elems[1].node, w.elems[2].node};
}

Result<Value> Tracer::nxTriangularSolve(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 2);
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  NXC_TRY(o, options(opts, {"lower", "left_side", "transform_a"}, "Nx.LinAlg.triangular_solve"));
  bool lower = true, leftSide = true, transposeA = false;
  if (o.count("lower")) { NXC_TRY(v, boolOption(o["lower"], "lower")); lower = v; }
  if (o.count("left_side")) { NXC_TRY(v, boolOption(o["left_side"], "left_side")); leftSide = v; }
  if (o.count("transform_a")) {
    const Value &t = o["transform_a"];
    if (t.kind != Value::Atom || (t.atom != "none" && t.atom != "transpose" && t.atom != "conjugate"))
      return error(t.loc.valid() ? t.loc : loc,
                   fmt::format(FMT_STRING("invalid value for :transform_a option, expected :none, :transpose, or "
                                          ":conjugate, got: {}"),
                               t.kind == Value::Atom ? ":" + t.atom : describeValue(t)));
    transposeA = t.atom == "transpose"; // :conjugate is :none for real tensors
  }
  NXC_TRY(a, tensorArg(fn, args[0], loc));
  NXC_TRY(b, tensorArg(fn, args[1], loc));
  const TensorType ta = g_.typeOf(a), tb = g_.typeOf(b);
  if (!squareMatrices(ta.shape))
    return error(loc, fmt::format(FMT_STRING("triangular_solve/3 expected a square matrix or a batch of square "
                                             "matrices, got tensor with shape: {}"),
                                  shapeString(ta.shape)));
  size_t batchRank = ta.shape.size() - 2;
  int64_t n = ta.shape.back();
  bool compatible = tb.rank() >= 1 && (tb.rank() == ta.rank() || tb.rank() == ta.rank() - 1);
  if (compatible)
    for (size_t d = 0; d < batchRank; ++d) compatible &= tb.shape[d] == ta.shape[d];
  if (compatible) {
    if (tb.rank() == ta.rank() - 1) compatible = tb.shape.back() == n;
    else compatible = leftSide ? tb.shape[tb.rank() - 2] == n : tb.shape.back() == n;
  }
  if (!compatible) return error(loc, "incompatible dimensions for a and b on triangular solve");
  ElemType out = toFloating(mergeTypes(ta.elem, tb.elem));
  NXC_TRY(r, perMatrix({a, b}, batchRank, [&](const std::vector<int> &m) -> Result<std::vector<int>> {
    int x = triangularSolve(m[0], m[1], lower, leftSide, transposeA, out, loc);
    if (x < 0) return internalError(loc, "the LinAlg prelude failed in triangular_solve");
    return std::vector<int>{x};
  }, loc));
  return Value::tensor(r[0], loc);
}

Result<Value> Tracer::nxSolve(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  NXC_TRY(a, tensorArg(fn, args[0], loc));
  NXC_TRY(b, tensorArg(fn, args[1], loc));
  const TensorType ta = g_.typeOf(a), tb = g_.typeOf(b);
  if (!squareMatrices(ta.shape))
    return error(loc, fmt::format(FMT_STRING("`a` tensor has incompatible dimensions, expected a square matrix or a "
                                             "batch of square matrices, got: {}"),
                                  shapeString(ta.shape)));
  size_t batchRank = ta.shape.size() - 2;
  int64_t n = ta.shape.back();
  Shape want1(ta.shape.begin(), ta.shape.end() - 1);
  bool ok = tb.shape == want1 ||
            (tb.rank() == ta.rank() && std::equal(ta.shape.begin(), ta.shape.end() - 1, tb.shape.begin()));
  if (!ok) {
    std::string two = shapeString(ta.shape);
    if (batchRank > 0) two = shapeString(want1).substr(0, shapeString(want1).size() - 1) + ", \"m\"}";
    return error(loc, fmt::format(FMT_STRING("`b` tensor has incompatible dimensions, expected {} or {}, got: {}"), two,
                                  shapeString(want1), shapeString(tb.shape)));
  }
  ElemType out = toFloating(mergeTypes(ta.elem, tb.elem));
  NXC_TRY(r, perMatrix({a, b}, batchRank, [&](const std::vector<int> &m) -> Result<std::vector<int>> {
    // P^T b, then L y = P^T b, then U x = y (Nx's solve over its lu).
    NXC_TRY(f, luFactors(cast(m[0], toFloating(ta.elem), loc), loc));
    int p = cast(f[0], ta.elem, loc), l = f[1], u = f[2];
    int rhs = m[1];
    bool vector = g_.typeOf(rhs).rank() == 1;
    if (vector) rhs = reshape(rhs, {n, 1}, loc);
    std::vector<Value> dotArgs = {Value::tensor(p, loc), Value::list({Value::number(0, loc)}, loc),
                                  Value::tensor(rhs, loc), Value::list({Value::number(0, loc)}, loc)};
    NXC_TRY(pb, dot(dotArgs, loc));
    ElemType ty = toFloating(mergeTypes(g_.typeOf(l).elem, g_.typeOf(pb.node).elem));
    int y = triangularSolve(l, pb.node, true, true, false, ty, loc);
    if (y < 0) return internalError(loc, "the LinAlg prelude failed in solve");
    int x = triangularSolve(u, y, false, true, false, toFloating(mergeTypes(g_.typeOf(u).elem, ty)), loc);
    if (x < 0) return internalError(loc, "the LinAlg prelude failed in solve");
    if (vector) x = reshape(x, {n}, loc);
    return std::vector<int>{cast(x, out, loc)};
  }, loc));
  return Value::tensor(r[0], loc);
}

Result<Value> Tracer::nxInvert(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(a, tensorArg(fn, args[0], loc));
  const TensorType ta = g_.typeOf(a);
  if (!squareMatrices(ta.shape))
    return error(loc, fmt::format(FMT_STRING("invert/1 expects a square matrix or a batch of square matrices, got "
                                             "tensor with shape: {}"),
                                  shapeString(ta.shape)));
  // As Nx: NaN where |det| is within 1000 smallest normals of zero;
  // otherwise solve with rows scaled by their largest magnitude.
  ElemType ft = toFloating(ta.elem);
  double smallest = ft.bits == 64 ? 2.2250738585072014e-308 : ft.bits == 32 ? 1.1754943508222875e-38
                    : ft.kind == TypeKind::BF ? 1.1754943508222875e-38 : 6.103515625e-05;
  NXC_TRY(r, perMatrix({a}, ta.shape.size() - 2, [&](const std::vector<int> &m) -> Result<std::vector<int>> {
    Value t = Value::tensor(m[0], loc);
    std::vector<Value> detArgs = {t};
    NXC_TRY(det, nxDecomposition("LinAlg.determinant", detArgs, loc));
    NXC_TRY(absDet, callNx("abs", {det}, loc));
    NXC_TRY(tiny, callNx("less_equal", {absDet, Value::real(smallest * 1.0e3, loc)}, loc));
    NXC_TRY(absT, callNx("abs", {t}, loc));
    Value kw = Value::keywords(
        {{"axes", Value::list({Value::number(1, loc)}, loc)}, {"keep_axes", Value::atomValue("true", loc)}}, loc);
    NXC_TRY(rowMax, callNx("reduce_max", {absT, kw}, loc));
    NXC_TRY(isZero, callNx("equal", {rowMax, Value::number(0, loc)}, loc));
    NXC_TRY(safe, callNx("select", {isZero, Value::number(1, loc), rowMax}, loc));
    NXC_TRY(scale, binary(Op::Divide, Value::number(1, loc), safe, BinaryRule::Float, loc));
    NXC_TRY(normalized, binary(Op::Multiply, scale, t, BinaryRule::Arith, loc));
    int64_t n = ta.shape.back();
    Value column = Value::tensor(reshape(scale.node, {n}, loc), loc);
    NXC_TRY(diag, callNx("make_diagonal", {column}, loc));
    std::vector<Value> solveArgs = {normalized, diag};
    NXC_TRY(inv, nxSolve("LinAlg.solve", solveArgs, loc));
    NXC_TRY(out, callNx("select", {tiny, Value::real(NAN, loc), inv}, loc));
    NXC_TRY(graded,
            prelude("invert_grad",
                    {Value::tensor(cast(m[0], ft, loc), loc), Value::tensor(cast(out.node, ft, loc), loc)}, loc));
    return std::vector<int>{graded.node};
  }, loc));
  return Value::tensor(r[0], loc);
}

Result<Value> Tracer::nxQr(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"mode", "eps"}, "Nx.LinAlg.qr"));
  bool complete = false;
  if (o.count("mode")) {
    const Value &v = o["mode"];
    if (v.kind != Value::Atom || (v.atom != "reduced" && v.atom != "complete"))
      return error(
          v.loc.valid() ? v.loc : loc,
          fmt::format(FMT_STRING("invalid :mode received. Expected one of [:reduced, :complete], received: {}"),
                      v.kind == Value::Atom ? ":" + v.atom : describeValue(v)));
    complete = v.atom == "complete";
  }
  double eps = 1.0e-10;
  if (o.count("eps")) {
    const Value &v = o["eps"];
    if (!v.isNumber() || v.kind == Value::Atom)
      return error(v.loc.valid() ? v.loc : loc, "Nx.LinAlg.qr: :eps must be a number");
    eps = v.asDouble();
  }
  NXC_TRY(a, matrixArg(fn, args[0], false, loc));
  const TensorType ta = g_.typeOf(a);
  int64_t m = ta.shape[ta.rank() - 2], n = ta.shape.back(), k = std::min(m, n);
  ElemType ft = toFloating(ta.elem);
  NXC_TRY(r, perMatrix({a}, ta.shape.size() - 2, [&](const std::vector<int> &mat) -> Result<std::vector<int>> {
    // A wide matrix gets n - m zero rows (Golub and Van Loan 5.4.1, as Nx).
    int x = cast(mat[0], ft, loc), input = x;
    bool wide = m < n;
    int64_t rows = wide ? n : m, last = wide ? n - 1 : m == n ? n - 2 : n - 1;
    if (wide) {
      std::vector<Value> cfg = {
          Value::tuple({Value::number(0, loc), Value::number(n - m, loc), Value::number(0, loc)}, loc),
          Value::tuple({Value::number(0, loc), Value::number(0, loc), Value::number(0, loc)}, loc)};
      NXC_TRY(padded, callNx("pad", {Value::tensor(x, loc), Value::number(0, loc), Value::list(cfg, loc)}, loc));
      x = padded.node;
    }
    NXC_TRY(f, prelude("qr", {Value::tensor(x, loc), Value::number(last, loc), Value::real(eps, loc)}, loc));
    int q = f.elems[0].node, rr = f.elems[1].node;
    auto take = [&](int t, int64_t r0, int64_t c0) -> Result<int> {
      if (g_.typeOf(t).shape == Shape{r0, c0}) return t;
      return slice(t, {Value::number(0, loc), Value::number(0, loc)}, {r0, c0}, {1, 1}, loc);
    };
    if (wide) {
      NXC_TRY(q2, take(q, m, m));
      NXC_TRY(r2, take(rr, m, n));
      q = q2, rr = r2;
    } else if (!complete && rows > n) {
      NXC_TRY(q2, take(q, m, k));
      NXC_TRY(r2, take(rr, n, n));
      q = q2, rr = r2;
    }
    NXC_TRY(w, prelude("qr_grad", {Value::tensor(input, loc), Value::tensor(q, loc), Value::tensor(rr, loc)}, loc));
    return std::vector<int>{w.elems[0].node, w.elems[1].node};
  }, loc));
  return Value::tuple({Value::tensor(r[0], loc), Value::tensor(r[1], loc)}, loc);
}

Result<Value> Tracer::nxDecomposition(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  std::string name = fn.substr(std::string("LinAlg.").size());
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(a, name == "determinant" ? tensorArg(fn, args[0], loc) : matrixArg(fn, args[0], true, loc));
  const TensorType ta = g_.typeOf(a);
  if (name == "determinant") {
    if (!squareMatrices(ta.shape)) {
      Shape m(ta.shape.size() >= 2 ? ta.shape.end() - 2 : ta.shape.begin(), ta.shape.end());
      std::string list = "[";
      for (size_t i = 0; i < m.size(); ++i) list += (i ? ", " : "") + std::to_string(m[i]);
      return error(loc,
                   fmt::format(FMT_STRING("determinant/1 expects a square tensor, got tensor with shape: {}]"), list));
    }
  }
  ElemType ft = toFloating(ta.elem);
  int64_t n = ta.shape.back();
  NXC_TRY(r, perMatrix({a}, ta.shape.size() - 2, [&](const std::vector<int> &m) -> Result<std::vector<int>> {
    Value t = Value::tensor(m[0], loc), tf = Value::tensor(cast(m[0], ft, loc), loc);
    if (name == "cholesky") {
      NXC_TRY(l, prelude("cholesky", {tf}, loc));
      return std::vector<int>{l.node};
    }
    if (name == "determinant" && (n == 2 || n == 3)) {
      NXC_TRY(d, prelude(n == 2 ? "determinant2" : "determinant3", {t}, loc));
      return std::vector<int>{cast(d.node, ft, loc)};
    }
    NXC_TRY(f, luFactors(tf.node, loc));
    int p = cast(f[0], ta.elem, loc), l = f[1], u = f[2];
    if (name == "lu") return std::vector<int>{p, l, u};
    NXC_TRY(d, prelude("determinant_lu", {Value::tensor(p, loc), Value::tensor(l, loc), Value::tensor(u, loc)}, loc));
    return std::vector<int>{cast(d.node, ft, loc)};
  }, loc));
  if (r.size() == 1) return Value::tensor(r[0], loc);
  std::vector<Value> leaves;
  for (int x : r) leaves.push_back(Value::tensor(x, loc));
  return Value::tuple(leaves, loc);
}

} // namespace nxc::sema
