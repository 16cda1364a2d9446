//===- GradRules.cpp - the gradient rule of each op -----------------------===//
//
// Backprop::rule: one case per op of the op table (Ops.def), as Nx's
// Nx.Defn.Grad defines each gradient, built from the same Nx functions the
// forward pass uses; and the helpers of the longer rules (slices, scans,
// scatters, windows, convolutions).
//
//===----------------------------------------------------------------------===//
#include "Backprop.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace nxc::sema {

void Backprop::rule(int id, int g, Adjoints &a) {
  const Node n = g_.nodes[id]; // a copy: rules append nodes
  Op op = n.op;
  auto x = [&](size_t k) { return n.operands[k]; };
  auto give = [&](size_t k, int grad) { contribute(a, x(k), grad); };
  auto notYet = [&]() {
    size_t arity = n.operands.size();
    fail(error(n.loc, fmt::format(FMT_STRING("gradient not yet implemented for Nx.{}/{}"), opName(op), arity)));
  };
  // Through complex values, Nx's rules are the real ones read as complex
  // (holomorphic) derivatives, but for abs, real, imag and conjugate (below):
  // nxc takes the ops whose rules are written for both; the others, and
  // Nx.fft's transforms (nxc computes them from their parts), are refused
  // rather than differentiated as if the values were real.
  const TensorType *complexType = n.type.elem.isComplex() ? &n.type : nullptr;
  for (int o : n.operands)
    if (!complexType && g_.typeOf(o).elem.isComplex()) complexType = &g_.typeOf(o);
  if (complexType) {
    switch (op) {
    case Op::Parameter:
    case Op::RegionArg:
    case Op::Elem:
    case Op::Metadata:
    case Op::Constant:
    case Op::Add:
    case Op::Subtract:
    case Op::Multiply:
    case Op::Divide:
    case Op::Negate:
    case Op::Exp:
    case Op::Log:
    case Op::Sqrt:
    case Op::Sin:
    case Op::Cos:
    case Op::Sum:
    case Op::Dot:
    case Op::Broadcast:
    case Op::Reshape:
    case Op::Transpose:
    case Op::Slice:
    case Op::Concatenate:
    case Op::Reverse:
    case Op::Pad:
    case Op::Select:
    case Op::Real:
    case Op::Imag:
    case Op::Conjugate:
    case Op::Abs:
    case Op::AsType: break;
    default:
      return fail(error(n.loc, fmt::format(FMT_STRING("nxc does not compute gradients through {} of complex values "
                                                      "yet ({})"),
                                           op == Op::Complex ? std::string("Nx.fft") : "Nx." + std::string(opName(op)),
                                           complexType->str())));
    }
  }
  // What the rules share: the first operand, its square, its shape and the
  // reduced axes.
  int in = n.operands.empty() ? -1 : x(0);
  int xx = -1;
  auto square = [&]() { return xx >= 0 ? xx : (xx = mul(tv(in), tv(in))); };
  const double twoRsqrtPi = 2.0 / std::sqrt(M_PI), halfSqrtPi = std::sqrt(M_PI) / 2.0;
  const Shape xs = in >= 0 ? shape(in) : Shape{};
  auto keptAxes = [&]() {
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < (int64_t)xs.size(); ++d)
      if (std::find(n.axes.begin(), n.axes.end(), d) == n.axes.end()) kept.push_back(d);
    return kept;
  };
  auto unsqueezed = [&]() {
    Shape s = xs;
    for (auto d : n.axes) s[d] = 1;
    return s;
  };
  // One case per op (Ops.def): an op added there and not here is a warning,
  // which fails the build (scripts/build.sh).
  switch (op) {
  case Op::Parameter: case Op::RegionArg:
    return;
  case Op::Elem: {
    a.results[x(0)][n.param].push_back(plain(g));
    return;
  }
  case Op::Metadata: {
    if (n.param == Tracer::kStopGrad) return;
    if (n.param == Tracer::kNoGrad) return fail(error(n.loc, n.text));
    if (n.param == Tracer::kClip) {
      int v = x(1), lo = x(2), hi = x(3);
      int zero = scalarF32(0.0);
      int inside = nx("logical_and", tv(nx("greater_equal", tv(v), tv(lo))), tv(nx("less_equal", tv(v), tv(hi))));
      give(1, nx("select", std::vector<Value>{tv(inside), tv(g), tv(zero)}));
      int gb = t_.broadcastTo(g, shape(v), loc_);
      if (dep(lo)) {
        int below = nx("logical_and", tv(nx("greater", tv(lo), tv(v))), tv(nx("less", tv(lo), tv(hi))));
        give(2, nx("sum", nx("select", std::vector<Value>{tv(below), tv(gb), tv(zero)})));
      }
      if (dep(hi))
        give(3, nx("sum", nx("select", std::vector<Value>{tv(nx("less", tv(hi), tv(v))), tv(gb), tv(zero)})));
      return;
    }
    if (n.param == Tracer::kCustomGrad) {
      // One call for the whole (possibly tuple) output: the first of its
      // leaves the sweep meets gathers the adjoints of all of them.
      Tracer::CustomGrad &cg = t_.customGrads_[id];
      if (!customDone_.insert(cg.leaves[0]).second) return;
      std::vector<Value> gl;
      for (int leaf : cg.leaves) {
        auto f = a.node.find(leaf);
        int gi = leaf == id ? g : f != a.node.end() && !f->second.empty() ? sumList(f->second)
                                                                             : zeros(ElemType::f32(), shape(leaf));
        gl.push_back(tv(gi));
      }
      size_t next = 0;
      Value gv = rebuildLeaves(cg.structure, gl, next);
      auto r = t_.applyFunction(cg.fn, {gv}, n.loc);
      if (!r.ok()) return fail(r.error());
      if (r->kind != Value::List || r->elems.size() != cg.inputs.size())
        return fail(error(n.loc, "custom_grad/3 must return a list of tensors that map directly to the inputs"));
      for (size_t i = 0; i < cg.inputs.size(); ++i) {
        auto gi = t_.toTensor(r->elems[i], n.loc);
        if (!gi.ok()) return fail(gi.error());
        contribute(a, cg.inputs[i], *gi);
      }
      return;
    }
    return give(0, g);
  }
  case Op::AsType: case Op::Bitcast:
    return give(0, g);
  case Op::Reshape:
    return give(0, t_.reshape(g, shape(x(0)), loc_));
  case Op::Broadcast:
    return give(0, unbroadcast(shape(x(0)), n.type.shape, n.axes, g));
  case Op::Transpose: {
    std::vector<int64_t> inv(n.axes.size());
    for (size_t i = 0; i < n.axes.size(); ++i) inv[n.axes[i]] = (int64_t)i;
    return give(0, t_.transpose(g, inv, loc_));
  }
  case Op::Reverse:
    return give(0, t_.reverse(g, n.axes, loc_));
  case Op::Add: {
    give(0, g);
    return give(1, g);
  }
  case Op::Subtract: {
    give(0, g);
    return give(1, nx("negate", g));
  }
  case Op::Multiply: {
    if (dep(x(0))) give(0, mul(tv(g), tv(x(1))));
    if (dep(x(1))) give(1, mul(tv(g), tv(x(0))));
    return;
  }
  case Op::Divide: {
    if (dep(x(0))) give(0, div(tv(g), tv(x(1))));
    if (dep(x(1))) give(1, mul(tv(g), tv(nx("negate", div(tv(id), tv(x(1)))))));
    return;
  }
  case Op::Remainder: {
    give(0, g);
    if (dep(x(1))) give(1, mul(tv(g), tv(nx("negate", nx("floor", div(tv(x(0)), tv(x(1))))))));
    return;
  }
  case Op::Pow: {
    int b = x(1), base = x(0);
    if (dep(base)) {
      int isZero = nx("equal", tv(b), num(0.0));
      int exponent = nx("select", std::vector<Value>{tv(isZero), num(1.0), tv(sub(tv(b), num(1.0)))});
      give(0, mul(tv(g), tv(mul(tv(b), tv(nx("pow", tv(base), tv(exponent)))))));
    }
    if (dep(b)) {
      int nonZero = nx("select", std::vector<Value>{tv(nx("equal", tv(base), num(0.0))), num(1.0), tv(base)});
      give(1, mul(tv(g), tv(mul(tv(nx("log", nonZero)), tv(id)))));
    }
    return;
  }
  case Op::Atan2: {
    int den = add(tv(mul(tv(x(0)), tv(x(0)))), tv(mul(tv(x(1)), tv(x(1)))));
    if (dep(x(0))) give(0, mul(tv(g), tv(div(tv(x(1)), tv(den)))));
    if (dep(x(1))) give(1, mul(tv(g), tv(nx("negate", div(tv(x(0)), tv(den))))));
    return;
  }
  case Op::Max: case Op::Min: {
    auto share = [&](int self, int other) {
      int num1 = nx("select", std::vector<Value>{tv(nx("equal", tv(self), tv(id))), num(1.0), num(0.0)});
      int den = nx("select", std::vector<Value>{tv(nx("equal", tv(other), tv(id))), num(2.0), num(1.0)});
      return div(tv(num1), tv(den));
    };
    if (dep(x(0))) give(0, mul(tv(g), tv(share(x(0), x(1)))));
    if (dep(x(1))) give(1, mul(tv(g), tv(share(x(1), x(0)))));
    return;
  }
  case Op::Quotient:
    return fail(error(n.loc, "cannot compute gradient for Nx.quotient/2 (if a floating point computation is "
                             "acceptable, use floor division on floats instead)"));
  case Op::Select: {
    int zero = scalarF32(0.0);
    if (dep(x(1))) give(1, nx("select", std::vector<Value>{tv(x(0)), tv(g), tv(zero)}));
    if (dep(x(2))) give(2, nx("select", std::vector<Value>{tv(x(0)), tv(zero), tv(g)}));
    return;
  }
  case Op::Negate:
    return give(0, nx("negate", g));
  case Op::Abs:
    if (g_.typeOf(in).elem.isComplex()) { // real(g) * conj(z) / |z|, 0 where |z| is 0 (Nx's)
      int safe = nx("select", std::vector<Value>{tv(nx("equal", tv(id), num(0.0))), num(1.0), tv(id)});
      return give(0, div(tv(mul(tv(nx("real", g)), tv(nx("conjugate", in)))), tv(safe)));
    }
    return give(
        0, nx("select", std::vector<Value>{tv(nx("greater_equal", tv(in), num(0.0))), tv(g), tv(nx("negate", g))}));
  case Op::Real: return give(0, nx("real", g));
  case Op::Imag: return give(0, nx("imag", g));
  case Op::Conjugate: return give(0, g_.typeOf(in).elem.isComplex() ? nx("conjugate", g) : nx("real", g));
  case Op::Sqrt:
    return give(0, div(tv(mul(tv(g), num(0.5))), tv(id)));
  case Op::Cbrt:
    return give(0, div(tv(g), tv(mul(tv(mul(Value::number(3, loc_), tv(id))), tv(id)))));
  case Op::Exp:
    return give(0, mul(tv(g), tv(id)));
  case Op::Expm1:
    return give(0, mul(tv(g), tv(add(tv(id), Value::number(1, loc_)))));
  case Op::Log:
    return give(0, div(tv(g), tv(in)));
  case Op::Log2:
    return give(0, div(tv(g), tv(mul(tv(in), num(std::log(2.0))))));
  case Op::Log1p:
    return give(0, div(tv(g), tv(add(tv(in), Value::number(1, loc_)))));
  case Op::Sigmoid: {
    int s = mul(tv(mul(tv(nx("exp", nx("negate", in))), tv(id))), tv(id));
    return give(0, mul(tv(g), tv(s)));
  }
  case Op::Rsqrt:
    return give(0, mul(tv(mul(tv(g), num(-0.5))), tv(nx("pow", tv(in), num(-1.5)))));
  case Op::Sin:
    return give(0, mul(tv(g), tv(nx("cos", in))));
  case Op::Cos:
    return give(0, mul(tv(g), tv(nx("negate", nx("sin", in)))));
  case Op::Tan: {
    int c = nx("cos", in);
    return give(0, div(tv(div(tv(g), tv(c))), tv(c)));
  }
  case Op::Asin:
    return give(0, mul(tv(g), tv(nx("rsqrt", sub(num(1.0), tv(square()))))));
  case Op::Acos:
    return give(0, mul(tv(g), tv(nx("negate", nx("rsqrt", sub(num(1.0), tv(square())))))));
  case Op::Atan:
    return give(0, div(tv(g), tv(add(num(1.0), tv(square())))));
  case Op::Sinh:
    return give(0, mul(tv(g), tv(nx("cosh", in))));
  case Op::Cosh:
    return give(0, mul(tv(g), tv(nx("sinh", in))));
  case Op::Tanh:
    return give(0, mul(tv(g), tv(sub(num(1.0), tv(mul(tv(id), tv(id)))))));
  case Op::Asinh:
    return give(0, mul(tv(g), tv(nx("rsqrt", add(tv(square()), num(1.0))))));
  case Op::Acosh:
    return give(0, mul(tv(g), tv(nx("rsqrt", sub(tv(square()), num(1.0))))));
  case Op::Atanh:
    return give(0, div(tv(g), tv(sub(num(1.0), tv(square())))));
  case Op::Erf: case Op::Erfc: {
    int e = nx("exp", nx("negate", square()));
    return give(0, mul(tv(g), tv(mul(tv(e), num(op == Op::Erf ? twoRsqrtPi : -twoRsqrtPi)))));
  }
  case Op::ErfInv:
    return give(0, mul(tv(g), tv(mul(num(halfSqrtPi), tv(nx("exp", mul(tv(id), tv(id))))))));
  case Op::Sum:
    return give(0, broadcastAxes(g, xs, keptAxes()));
  case Op::Product: {
    Shape us = unsqueezed();
    int g2 = t_.reshape(g, us, loc_), ans = t_.reshape(id, us, loc_);
    int isZero = nx("equal", tv(in), Value::number(0, loc_));
    int nonZero = nx("select", std::vector<Value>{tv(isZero), Value::number(1, loc_), tv(in)});
    int removed =
        nx("product", std::vector<Value>{tv(nonZero), keywords({{"axes", ints(n.axes)},
                                                                {"keep_axes", Value::atomValue("true", loc_)}})});
    int zerosIn = sumAxes(isZero, n.axes, true);
    int oneZero = nx("equal", tv(zerosIn), Value::number(1, loc_));
    int manyZeros = nx("greater", tv(zerosIn), Value::number(1, loc_));
    int dx = mul(tv(g2), tv(div(tv(ans), tv(nonZero))));
    dx = nx("select",
            std::vector<Value>{tv(nx("logical_and", tv(isZero), tv(oneZero))), tv(mul(tv(g2), tv(removed))), tv(dx)});
    dx = nx("select",
            std::vector<Value>{tv(nx("logical_and", tv(isZero), tv(manyZeros))), Value::number(0, loc_), tv(dx)});
    return give(0, dx);
  }
  case Op::ReduceMax: case Op::ReduceMin: {
    int gb = broadcastAxes(g, xs, keptAxes());
    int locs = nx("equal", tv(in), tv(t_.reshape(id, unsqueezed(), loc_)));
    int count = sumAxes(locs, n.axes, true);
    return give(0, div(tv(mul(tv(gb), tv(locs))), tv(count)));
  }
  case Op::CumulativeSum: {
    // The adjoint of a prefix sum is the suffix sum of the adjoint.
    int64_t axis = n.axes[0];
    int r = t_.reverse(g, {axis}, loc_);
    Node c = n;
    c.operands = {r};
    c.type = TensorType{type(g).elem, type(g).shape, {}};
    c.loc = loc_;
    r = t_.add(c);
    return give(0, t_.reverse(r, {axis}, loc_));
  }
  case Op::Dot: {
    int y = x(1);
    const std::vector<int64_t> &ax = n.attr("lhs_contract"), &xb = n.attr("lhs_batch"), &ay = n.attr("rhs_contract"),
                               &yb = n.attr("rhs_batch");
    int64_t rx = (int64_t)xs.size(), ry = (int64_t)shape(y).size(), rg = (int64_t)n.type.shape.size();
    std::vector<int64_t> batchGx = range(0, (int64_t)xb.size()), batchGy = range(0, (int64_t)yb.size());
    std::vector<int64_t> contractGx = range(rx - (int64_t)ax.size(), rg);
    std::vector<int64_t> contractGy = range((int64_t)yb.size(), rx - (int64_t)ax.size());
    std::vector<int64_t> contractX = minus(minus(range(0, rx), ax), batchGx);
    std::vector<int64_t> contractY = minus(minus(range(0, ry), ay), batchGy);
    std::vector<int64_t> transposeX, transposeY;
    for (auto i : argsortPerm(ay)) transposeX.push_back(ax[i]);
    for (auto i : argsortPerm(ax)) transposeY.push_back(ay[i]);
    auto cat = [](std::vector<int64_t> a, const std::vector<int64_t> &b, const std::vector<int64_t> &c) {
      a.insert(a.end(), b.begin(), b.end());
      a.insert(a.end(), c.begin(), c.end());
      return a;
    };
    // Nx computes transpose(dot(g, other), perm). When dot(other, g) is
    // already in the final order, nxc computes that instead: the same sums
    // in the same order, with no transposed store (the weight gradient of a
    // dense layer, x^T g, is the common case).
    auto vjp = [&](const std::vector<int64_t> &cg, const std::vector<int64_t> &bg, int other,
                   const std::vector<int64_t> &co, const std::vector<int64_t> &bo, std::vector<int64_t> perm) {
      int64_t nb = (int64_t)bg.size(), rd = (int64_t)type(g).shape.size(), ro = (int64_t)shape(other).size();
      int64_t gFree = rd - nb - (int64_t)cg.size(), oFree = ro - nb - (int64_t)co.size();
      std::vector<int64_t> q = range(0, nb), qinv(nb + gFree + oFree);
      for (int64_t i = 0; i < oFree; ++i) q.push_back(nb + gFree + i);
      for (int64_t i = 0; i < gFree; ++i) q.push_back(nb + i);
      for (size_t i = 0; i < q.size(); ++i) qinv[q[i]] = (int64_t)i;
      bool swapped = true;
      for (size_t i = 0; i < perm.size(); ++i) swapped &= qinv[perm[i]] == (int64_t)i;
      if (swapped)
        return nx("dot", std::vector<Value>{tv(other), ints(co), ints(bo), tv(g), ints(cg), ints(bg)});
      int d = nx("dot", std::vector<Value>{tv(g), ints(cg), ints(bg), tv(other), ints(co), ints(bo)});
      return ok(d) ? t_.transpose(d, perm, loc_) : d;
    };
    if (dep(x(0))) give(0, vjp(contractGx, batchGx, y, contractY, yb, argsortPerm(cat(xb, contractX, transposeX))));
    if (dep(y)) give(1, vjp(contractGy, batchGy, x(0), contractX, xb, argsortPerm(cat(yb, contractY, transposeY))));
    return;
  }
  case Op::Slice: {
    const std::vector<int64_t> &starts = n.attr("start_indices"), &lengths = n.attr("lengths"),
                               &strides = n.attr("strides");
    // Spread g back over the sliced window (zeros between strided
    // elements and up to the full length), then place it.
    const Shape &gs = type(g).shape;
    std::vector<int64_t> high, interior;
    bool any = false;
    for (size_t d = 0; d < gs.size(); ++d) {
      int64_t spread = gs[d] == 0 ? 0 : (gs[d] - 1) * strides[d] + 1;
      high.push_back(lengths[d] - spread);
      interior.push_back(gs[d] == 0 ? 0 : strides[d] - 1);
      any |= high.back() != 0 || interior.back() != 0;
    }
    int spread = g;
    if (any) {
      Node p;
      p.op = Op::Pad;
      p.operands = {g, zeros(type(g).elem, {})};
      p.type = TensorType{type(g).elem, Shape(lengths.begin(), lengths.end()), {}};
      p.attrs = {{"low", std::vector<int64_t>(gs.size(), 0)}, {"high", high}, {"interior", interior}};
      p.loc = loc_;
      spread = t_.add(p);
    }
    ElemType t = mergeTypes(ElemType::f32(), type(g).elem);
    Node put;
    put.op = Op::PutSlice;
    put.operands = {zeros(t, xs), t_.cast(spread, t, loc_)};
    for (size_t k = 1; k < n.operands.size(); ++k) put.operands.push_back(x(k));
    put.type = TensorType{t, xs, {}};
    put.attrs = {{"start_indices", starts}};
    put.loc = loc_;
    return give(0, t_.add(put));
  }
  case Op::PutSlice: {
    const Shape us = shape(x(1));
    ElemType t = mergeTypes(ElemType::f32(), type(g).elem);
    if (dep(x(0))) {
      Node put = n;
      put.operands[0] = t_.cast(g, t, loc_);
      put.operands[1] = zeros(t, us);
      put.type = TensorType{t, xs, {}};
      put.loc = loc_;
      give(0, t_.add(put));
    }
    if (dep(x(1))) {
      Node s;
      s.op = Op::Slice;
      s.operands = {g};
      for (size_t k = 2; k < n.operands.size(); ++k) s.operands.push_back(x(k));
      s.type = TensorType{type(g).elem, us, {}};
      s.attrs = {{"start_indices", n.attr("start_indices")},
                 {"lengths", std::vector<int64_t>(us.begin(), us.end())},
                 {"strides", std::vector<int64_t>(us.size(), 1)}};
      s.loc = loc_;
      give(1, t_.add(s));
    }
    return;
  }
  case Op::Pad: {
    const std::vector<int64_t> &low = n.attr("low"), &interior = n.attr("interior");
    std::vector<Value> starts;
    std::vector<int64_t> lengths, strides;
    for (size_t d = 0; d < xs.size(); ++d) {
      starts.push_back(Value::number(low[d], loc_));
      strides.push_back(interior[d] + 1);
      lengths.push_back(xs[d] == 0 ? 0 : (xs[d] - 1) * (interior[d] + 1) + 1);
    }
    auto s = t_.slice(g, starts, lengths, strides, loc_);
    if (!s.ok()) return fail(s.error());
    give(0, *s);
    if (dep(x(1))) give(1, sub(tv(nx("sum", g)), tv(nx("sum", *s))));
    return;
  }
  case Op::Concatenate: {
    int64_t axis = n.axes[0], offset = 0;
    for (size_t k = 0; k < n.operands.size(); ++k) {
      const Shape ks = shape(x(k));
      std::vector<Value> starts;
      for (size_t d = 0; d < ks.size(); ++d) starts.push_back(Value::number((int64_t)d == axis ? offset : 0, loc_));
      offset += ks[axis];
      if (!dep(x(k))) continue;
      auto s = t_.slice(g, starts, ks, std::vector<int64_t>(ks.size(), 1), loc_);
      if (!s.ok()) return fail(s.error());
      give(k, *s);
    }
    return;
  }
  case Op::CumulativeProduct: case Op::CumulativeMax: case Op::CumulativeMin: {
    // (`reverse: true` is a reverse on either side of the node.)
    std::string fn = op == Op::CumulativeProduct ? "multiply" : op == Op::CumulativeMax ? "max" : "min";
    return give(0, through(in, g, [&](int t) { return associativeScan(t, fn, n.axes[0]); }));
  }
  case Op::Take: case Op::TakeAlongAxis: case Op::Gather: {
    int idx = x(1);
    const Shape gs = type(g).shape;
    const TensorType it = type(idx);
    int64_t rank = (int64_t)xs.size();
    std::vector<int> coords(rank, -1);
    if (op == Op::Take) {
      int64_t axis = n.axes[0], ri = it.rank();
      std::vector<int64_t> at = range(axis, axis + ri);
      for (int64_t d = 0; d < rank; ++d)
        coords[d] = d == axis ? broadcastAxes(idx, gs, at) : coordinate(gs, d < axis ? d : d + ri - 1, it.elem);
    } else if (op == Op::TakeAlongAxis) {
      for (int64_t d = 0; d < rank; ++d) coords[d] = d == n.axes[0] ? idx : coordinate(gs, d, it.elem);
    } else {
      int64_t batch = it.rank() - 1, next = batch;
      Shape bs(it.shape.begin(), it.shape.end() - 1);
      for (int64_t d = 0; d < rank; ++d) {
        auto j = std::find(n.axes.begin(), n.axes.end(), d);
        if (j == n.axes.end()) {
          coords[d] = coordinate(gs, next++, it.elem);
          continue;
        }
        int col = sliceAxis(idx, j - n.axes.begin(), 1, batch, 1);
        coords[d] = ok(col) ? broadcastAxes(t_.reshape(col, bs, loc_), gs, range(0, batch)) : -1;
      }
    }
    return give(0, scatterAdd(in, g, coords));
  }
  case Op::IndexedAdd: case Op::IndexedPut: {
    int idx = x(1), upd = x(2);
    Value axes = opt("axes", ints(n.axes));
    if (dep(x(0)))
      give(0, op == Op::IndexedAdd
                  ? g
                  : nx("indexed_put", std::vector<Value>{tv(g), tv(idx), tv(zeros(type(g).elem, shape(upd))), axes}));
    if (dep(upd)) {
      int taken = nx("gather", std::vector<Value>{tv(g), tv(idx), axes});
      if (ok(taken)) give(2, t_.reshape(taken, shape(upd), loc_));
    }
    return;
  }
  case Op::WindowSum: {
    // Spread g over the strides, pad it by the dilated window, and sum
    // windows of it again.
    const std::vector<int64_t> &window = n.attr("window_dims"), &strides = n.attr("strides"),
                               &dilations = n.attr("dilations");
    const Shape &gs = type(g).shape;
    std::vector<Value> cfg;
    for (size_t d = 0; d < xs.size(); ++d) {
      int64_t lo = (window[d] - 1) * dilations[d], hi = xs[d] - (gs[d] - 1) * strides[d] - 1;
      cfg.push_back(tuple({lo, hi, strides[d] - 1}));
    }
    int padded = nx("pad", std::vector<Value>{tv(g), num(0.0), Value::list(cfg, loc_)});
    if (!ok(padded)) return;
    return give(0, nx("window_sum", std::vector<Value>{tv(padded), tuple(window),
                                                        opt("window_dilations", ints(dilations))}));
  }
  case Op::WindowMax: case Op::WindowMin:
    return windowChooserRule(n, g, a);
  case Op::Conv:
    return convRule(n, g, a);
  case Op::WindowProduct:
    return fail(error(n.loc, "cannot compute gradient for Nx.window_product/3 (use stop_grad/1 to treat it as a "
                             "constant, or custom_grad/3 to give it a gradient)"));
  // Nx's @constants never reach a rule (their results depend on nothing);
  // cond and while have rules of their own (sweep); the others have none yet.
  case Op::Cond:
  case Op::While:
  case Op::PrintValue:
  case Op::Constant:
  case Op::Complex: // refused above
  case Op::Iota: case Op::Sign: case Op::Floor: case Op::Ceil:
  case Op::Round: case Op::BitwiseNot: case Op::PopulationCount: case Op::CountLeadingZeros:
  case Op::IsNan: case Op::IsInfinity: case Op::LogicalNot: case Op::BitwiseAnd:
  case Op::BitwiseOr: case Op::BitwiseXor: case Op::LeftShift: case Op::RightShift:
  case Op::Equal: case Op::NotEqual: case Op::Less: case Op::LessEqual:
  case Op::Greater: case Op::GreaterEqual: case Op::LogicalAnd: case Op::LogicalOr:
  case Op::LogicalXor: case Op::All: case Op::Any: case Op::Argmax:
  case Op::Argmin: case Op::Argsort:
    break;
  }
  notYet();
}

int Backprop::sliceAxis(int t, int64_t start, int64_t length, int64_t axis, int64_t stride) {
  if (!ok(t)) return -1;
  Shape lengths = shape(t);
  std::vector<Value> starts(lengths.size(), Value::number(0, loc_));
  std::vector<int64_t> strides(lengths.size(), 1);
  starts[axis] = Value::number(start, loc_);
  lengths[axis] = length;
  strides[axis] = stride;
  auto s = t_.slice(t, starts, lengths, strides, loc_);
  if (!s.ok()) {
    fail(s.error());
    return -1;
  }
  return *s;
}

int Backprop::associativeScan(int t, const std::string &op, int64_t axis) {
  // Nx's work-efficient scan: scan the pairwise reductions (the odd
  // positions), then fill in the even positions from them.
  int64_t size = ok(t) ? shape(t)[axis] : 0;
  if (size < 2) return t;
  auto fn = [&](int a, int b) { return nx(op, tv(a), tv(b)); };
  auto interleave = [&](int left, int right) {
    Shape s = shape(left);
    s.insert(s.begin() + axis + 1, 1);
    int both = concat({t_.reshape(left, s, loc_), t_.reshape(right, s, loc_)}, axis + 1);
    if (!ok(both)) return -1;
    Shape merged = shape(both);
    merged[axis] *= 2;
    merged.erase(merged.begin() + axis + 1);
    return t_.reshape(both, merged, loc_);
  };
  int even = sliceAxis(t, 0, size - 1, axis, 2), odd = sliceAxis(t, 1, size - 1, axis, 2);
  int pairs = fn(odd, even);
  int scannedOdd = associativeScan(pairs, op, axis);
  if (!ok(scannedOdd)) return -1;
  if (size == 2) return concat({even, pairs}, axis);
  if (size % 2 == 0) {
    int scannedEven = fn(sliceAxis(scannedOdd, 0, size / 2 - 1, axis, 1), sliceAxis(even, 1, size / 2 - 1, axis, 1));
    scannedEven = concat({sliceAxis(even, 0, 1, axis, 1), scannedEven}, axis);
    return ok(scannedEven) ? interleave(scannedEven, scannedOdd) : -1;
  }
  int scannedEven = fn(scannedOdd, sliceAxis(t, 2, size - 2, axis, 2));
  if (!ok(scannedEven)) return -1;
  return concat({sliceAxis(t, 0, 1, axis, 1), interleave(scannedOdd, scannedEven)}, axis);
}

int Backprop::through(int x, int g, const std::function<int(int)> &forward) {
  int from = (int)g_.nodes.size();
  int y = forward(x);
  if (!ok(y)) return -1;
  markDeps(from);
  std::vector<int> ids;
  for (int id = from; id <= y; ++id) ids.push_back(id);
  Adjoints b;
  b.node[y].push_back(g);
  if (!sweep(ids, b).ok()) return -1;
  auto it = b.node.find(x);
  return it == b.node.end() || it->second.empty() ? zeros(ElemType::f32(), shape(x)) : sumList(it->second);
}

int Backprop::scatterAdd(int x, int g, std::vector<int> coords) {
  const Shape xs = shape(x), gs = type(g).shape;
  int64_t count = 1;
  for (auto d : gs) count *= d;
  bool wide = false;
  for (int c : coords) {
    if (!ok(c)) return -1;
    wide |= type(c).elem.bits == 64 || (type(c).elem.kind == TypeKind::U && type(c).elem.bits == 32);
  }
  ElemType it = wide ? ElemType{TypeKind::S, 64} : ElemType::s32();
  Shape column = gs;
  column.push_back(1);
  std::vector<int> columns;
  for (size_t d = 0; d < coords.size(); ++d) {
    int c = t_.cast(coords[d], it, loc_);
    c = nx("clip", std::vector<Value>{tv(c), Value::number(0, loc_), Value::number(xs[d] - 1, loc_)});
    if (!ok(c)) return -1;
    columns.push_back(t_.reshape(c, column, loc_));
  }
  int indices = columns.size() == 1 ? columns[0] : concat(columns, (int64_t)gs.size());
  if (!ok(indices) || count == 0) return zeros(type(x).elem, xs);
  indices = t_.reshape(indices, {count, (int64_t)xs.size()}, loc_);
  int updates = t_.reshape(g, {count}, loc_);
  return nx("indexed_add", std::vector<Value>{tv(zeros(type(x).elem, xs)), tv(indices), tv(updates)});
}

void Backprop::windowChooserRule(const Node &n, int g, Adjoints &a) {
  // As Nx's window_scatter_max/min: each window's gradient goes to the
  // element it chose; then a scatter-add.
  int in = n.operands[0];
  WindowSpec w{Shape(n.attr("window_dims").begin(), n.attr("window_dims").end()), n.attr("strides"),
               n.attr("dilations"), {}, {}};
  auto coords = t_.windowChoices(in, w, type(g).shape, n.op == Op::WindowMax, loc_);
  if (!coords.ok()) return fail(coords.error());
  contribute(a, in, scatterAdd(in, g, *coords));
}

void Backprop::convRule(const Node &n, int g, Adjoints &a) {
  // Nx's grad_conv for nxc's canonical conv (input [N, C, s...] already
  // padded and dilated, kernel [O, C/G, k...], no permutations): the input
  // gradient is a convolution of the stride-dilated g with the reversed
  // kernel, the kernel gradient a convolution of the input with g, one per
  // feature group.
  int x = n.operands[0], k = n.operands[1];
  const std::vector<int64_t> &strides = n.attr("strides"), &kdil = n.attr("kernel_dilation");
  int64_t groups = n.attr("feature_groups")[0];
  const Shape xs = shape(x), ks = shape(k), gs = type(g).shape;
  int64_t rank = (int64_t)xs.size();
  std::vector<int64_t> spatial = range(2, rank), swap = range(0, rank);
  std::swap(swap[0], swap[1]);
  auto dilated = [&](int64_t d) { return (ks[d] - 1) * kdil[d - 2] + 1; };
  if (dep(x)) {
    int rhs = k;
    if (groups > 1) {
      Shape split = {groups, ks[0] / groups};
      split.insert(split.end(), ks.begin() + 1, ks.end());
      std::vector<int64_t> perm = {1, 0};
      for (int64_t d = 2; d <= rank; ++d) perm.push_back(d);
      rhs = t_.transpose(t_.reshape(k, split, loc_), perm, loc_);
      Shape merged = {ks[0] / groups, ks[1] * groups};
      merged.insert(merged.end(), ks.begin() + 2, ks.end());
      rhs = t_.reshape(rhs, merged, loc_);
    }
    rhs = t_.reverse(rhs, spatial, loc_);
    std::vector<Value> padding;
    for (int64_t d = 2; d < rank; ++d)
      padding.push_back(Value::tuple({Value::number(dilated(d) - 1, loc_),
                                      Value::number(xs[d] - (gs[d] - 1) * strides[d - 2] - 1, loc_)},
                                     loc_));
    contribute(a, x, nx("conv", std::vector<Value>{tv(g), tv(rhs),
                                             keywords({{"padding", Value::list(padding, loc_)},
                                                       {"input_dilation", ints(strides)},
                                                       {"kernel_dilation", ints(kdil)},
                                                       {"kernel_permutation", ints(swap)},
                                                       {"feature_group_size", Value::number(groups, loc_)}})}));
  }
  if (dep(k)) {
    std::vector<int> parts;
    for (int64_t j = 0; j < groups; ++j) {
      int xj = groups > 1 ? sliceAxis(x, j * ks[1], ks[1], 1, 1) : x;
      int gj = groups > 1 ? sliceAxis(g, j * (ks[0] / groups), ks[0] / groups, 1, 1) : g;
      // Only the part of the input the windows reach.
      for (int64_t d = 2; d < rank; ++d) {
        int64_t used = (gs[d] - 1) * strides[d - 2] + dilated(d);
        if (used < xs[d]) xj = sliceAxis(xj, 0, used, d, 1);
      }
      parts.push_back(nx("conv", std::vector<Value>{tv(xj), tv(gj),
                                                    keywords({{"strides", ints(kdil)},
                                                              {"kernel_dilation", ints(strides)},
                                                              {"input_permutation", ints(swap)},
                                                              {"kernel_permutation", ints(swap)},
                                                              {"output_permutation", ints(swap)}})}));
      if (!ok(parts.back())) return;
    }
    contribute(a, k, parts.size() == 1 ? parts[0] : concat(parts, 0));
  }
}

} // namespace nxc::sema
