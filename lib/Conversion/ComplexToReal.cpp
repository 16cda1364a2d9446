//===- ComplexToReal.cpp - complex values as pairs of reals ---------------===//
//
// Before the nx dialect, every complex value of a graph becomes a real tensor
// with one more axis of 2 (c64[3] is f32[3][2]: the real part, then the
// imaginary part), which is how C99 and NumPy lay complex numbers out in
// memory, so the function's arguments and results keep their bytes. Each op
// on complex values becomes ops on the pairs: layout ops move the pair
// along; arithmetic takes the parts apart (slices), computes them as the
// Complex library that Nx.BinaryBackend uses does (in f64, rounded once to
// the part type, so that a c64 result is what Nx gives), and puts them back
// together (concatenate). Everything after this step sees real tensors only:
// fusion, vectorization and the GPU mapping take complex code as it is.
//
// Which ops take complex values is complexSupport's one list (Op.h);
// checkComplexOps has refused the others before this runs.
//
//===----------------------------------------------------------------------===//
#include "nxc/Conversion/ComplexToReal.h"
#include "GraphRewriter.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace nxc {
namespace {

const ElemType kWide{TypeKind::F, 64};

bool isComplex(const ElemType &t) { return t.isComplex(); }

/// The real tensor type holding a complex one (or the type itself).
TensorType pairType(const TensorType &t) {
  if (!t.elem.isComplex()) return t;
  TensorType r{t.elem.partType(), t.shape, t.names};
  r.shape.push_back(2);
  if (!r.names.empty()) r.names.push_back("");
  return r;
}

std::vector<int64_t> upTo(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

class Expander : public GraphRewriter {
public:
  explicit Expander(const Graph &in) : GraphRewriter(in) {}

private:
  TensorType mapType(const TensorType &t) const override { return pairType(t); }

  /// x broadcast over a new last axis of 2, as a pair's companion.
  int withPairAxis(int x) {
    TensorType t = type(x);
    Shape s = t.shape;
    s.push_back(2);
    Node b;
    b.op = Op::Broadcast;
    b.operands = {x};
    b.axes = upTo(t.rank());
    b.type = TensorType{t.elem, s, {}};
    return emit(std::move(b));
  }

  /// Part k (0 real, 1 imaginary) of a pair, without its axis of 2.
  int part(int pair, int k) {
    Shape s = type(pair).shape;
    int64_t r = (int64_t)s.size();
    if (type(pair).numElements() == 0) { // nothing to slice: an empty part
      s.pop_back();
      return filled(type(pair).elem, 0.0, s);
    }
    int slice = sliceAlong(pair, r - 1, k, 1);
    s.pop_back();
    return make(Op::Reshape, {slice}, TensorType{type(pair).elem, s, {}});
  }
  /// The pair of two parts of one shape and type.
  int pair(int re, int im) {
    Shape s = type(re).shape;
    s.push_back(1);
    int a = make(Op::Reshape, {re}, TensorType{type(re).elem, s, {}});
    int b = make(Op::Reshape, {im}, TensorType{type(im).elem, s, {}});
    return concatAlong({a, b}, (int64_t)s.size() - 1);
  }
  /// A complex value as its two real parts, in f64 while it is computed.
  struct Z {
    int re, im;
  };
  Z wide(int p) { return {cast(part(p, 0), kWide), cast(part(p, 1), kWide)}; }
  /// The pair of f64 parts, rounded once to the part type of `t`.
  int finish(Z z, ElemType t) { return pair(cast(z.re, t.partType()), cast(z.im, t.partType())); }
  /// re + im i filled in the shape of `like`'s parts, in f64.
  Z constant(int likePair, double re, double im) {
    Shape s = type(likePair).shape;
    s.pop_back();
    return {filled(kWide, re, s), filled(kWide, im, s)};
  }
  int mulR(int a, int b) { return binary(Op::Multiply, a, b); }
  int addR(int a, int b) { return binary(Op::Add, a, b); }
  int subR(int a, int b) { return binary(Op::Subtract, a, b); }
  /// The BEAM's -x, which is 0 - x (a zero of either sign gives +0.0), as
  /// Complex computes it.
  int negR(int a) { return subR(like(a, 0.0), a); }

  // Complex's formulas (complex 0.6, which Nx.BinaryBackend computes with).
  Z neg(Z z) { return {negR(z.re), negR(z.im)}; }
  Z mul(Z x, Z y) { return {subR(mulR(x.re, y.re), mulR(x.im, y.im)), addR(mulR(x.im, y.re), mulR(x.re, y.im))}; }
  Z div(Z x, Z y) {
    int numRe = addR(mulR(x.re, y.re), mulR(x.im, y.im));
    int numIm = subR(mulR(x.im, y.re), mulR(x.re, y.im));
    int den = addR(mulR(y.re, y.re), mulR(y.im, y.im));
    return {binary(Op::Divide, numRe, den), binary(Op::Divide, numIm, den)};
  }
  Z exp(Z z) {
    int rho = unary(Op::Exp, z.re);
    return {mulR(rho, unary(Op::Cos, z.im)), mulR(rho, unary(Op::Sin, z.im))};
  }
  Z log(Z z) { return {unary(Op::Log, magnitude(z.re, z.im)), binary(Op::Atan2, z.im, z.re)}; }
  Z sin(Z z) {
    return {mulR(unary(Op::Sin, z.re), unary(Op::Cosh, z.im)), mulR(unary(Op::Cos, z.re), unary(Op::Sinh, z.im))};
  }
  Z cos(Z z) { // -sin(re) * sinh(im), the BEAM's negation
    return {mulR(unary(Op::Cos, z.re), unary(Op::Cosh, z.im)), mulR(negR(unary(Op::Sin, z.re)), unary(Op::Sinh, z.im))};
  }
  /// (exp(z) -/+ exp(-z)) / 2.
  Z halfOf(Z d) { return {binary(Op::Divide, d.re, like(d.re, 2.0)), binary(Op::Divide, d.im, like(d.im, 2.0))}; }
  Z sinh(Z z) {
    Z a = exp(z), b = exp(neg(z));
    return halfOf({subR(a.re, b.re), subR(a.im, b.im)});
  }
  Z cosh(Z z) {
    Z a = exp(z), b = exp(neg(z));
    return halfOf({addR(a.re, b.re), addR(a.im, b.im)});
  }
  /// The product of z over node n's axes, pair by pair (Nx folds in order:
  /// the values agree, the last bits may not).
  Z product(const Node &n, Z z) {
    const Shape &in = type(z.re).shape;
    std::vector<int64_t> kept, reduced;
    for (int64_t d = 0; d < (int64_t)in.size(); ++d)
      (std::find(n.axes.begin(), n.axes.end(), d) == n.axes.end() ? kept : reduced).push_back(d);
    int64_t count = 1;
    Shape rows;
    for (int64_t d : reduced) count *= in[(size_t)d];
    for (int64_t d : kept) rows.push_back(in[(size_t)d]);
    if (count == 0) return {filled(kWide, 1.0, n.type.shape), filled(kWide, 0.0, n.type.shape)}; // empty: 1 + 0i
    std::vector<int64_t> perm = kept;
    perm.insert(perm.end(), reduced.begin(), reduced.end());
    auto flatten = [&](int x) {
      Node tr;
      tr.op = Op::Transpose;
      tr.operands = {x};
      tr.axes = perm;
      Shape s;
      for (int64_t d : perm) s.push_back(in[(size_t)d]);
      tr.type = TensorType{kWide, s, {}};
      Shape flat = rows;
      flat.push_back(count);
      return make(Op::Reshape, {emit(std::move(tr))}, TensorType{kWide, flat, {}});
    };
    z = {flatten(z.re), flatten(z.im)};
    int64_t last = (int64_t)rows.size();
    auto cut = [&](int x, int64_t from, int64_t len) { return sliceAlong(x, last, from, len); };
    while (count > 1) {
      if (count % 2) { // one more factor of 1 + 0i
        Shape s = type(z.re).shape;
        s.back() = 1;
        z = {concatAlong({z.re, filled(kWide, 1.0, s)}, last), concatAlong({z.im, filled(kWide, 0.0, s)}, last)};
        ++count;
      }
      int64_t half = count / 2;
      z = mul({cut(z.re, 0, half), cut(z.im, 0, half)}, {cut(z.re, half, half), cut(z.im, half, half)});
      count = half;
    }
    Shape out = n.type.shape;
    return {make(Op::Reshape, {z.re}, TensorType{kWide, out, {}}),
            make(Op::Reshape, {z.im}, TensorType{kWide, out, {}})};
  }

  Z add(Z x, Z y) { return {addR(x.re, y.re), addR(x.im, y.im)}; }
  Z sub(Z x, Z y) { return {subR(x.re, y.re), subR(x.im, y.im)}; }
  Z sqrt(Z z) {
    auto [re, im] = squareRoot(z.re, z.im);
    return {re, im};
  }
  /// asin, acos, atan, asinh, acosh, atanh as Complex writes them with
  /// log and sqrt: asin(z) = -i log(iz + sqrt(1 - z^2)) and so on.
  Z inverse(Op op, Z z) {
    auto c = [&](double re, double im) { return Z{like(z.re, re), like(z.re, im)}; };
    Z i = c(0.0, 1.0), one = c(1.0, 0.0);
    switch (op) {
    case Op::Asin: return mul(neg(i), log(add(mul(i, z), sqrt(sub(one, mul(z, z))))));
    case Op::Acos: return mul(neg(i), log(add(z, sqrt(sub(mul(z, z), one)))));
    case Op::Atan: {
      Z iz = mul(i, z);
      return mul(mul(c(0.5, 0.0), i), sub(log(sub(one, iz)), log(add(one, iz))));
    }
    case Op::Asinh: return log(add(z, sqrt(add(mul(z, z), one))));
    case Op::Acosh: return log(add(z, sqrt(sub(mul(z, z), one))));
    default: return mul(c(0.5, 0.0), log(div(add(one, z), sub(one, z)))); // atanh
    }
  }

  /// The inclusive product scan of z along `axis`: up to 64 elements folded
  /// in order, as Nx folds them (so zeros keep Nx's signs); longer ones in
  /// log2(n) steps, each multiplying by the value `step` places before.
  Z scanProduct(Z z, int64_t axis) {
    Shape s = type(z.re).shape;
    int64_t len = s[(size_t)axis];
    if (type(z.re).numElements() == 0) return z;
    if (len <= 64) {
      std::vector<int> re, im;
      Z acc{sliceAlong(z.re, axis, 0, 1), sliceAlong(z.im, axis, 0, 1)};
      re.push_back(acc.re), im.push_back(acc.im);
      for (int64_t k = 1; k < len; ++k) {
        acc = mul(acc, {sliceAlong(z.re, axis, k, 1), sliceAlong(z.im, axis, k, 1)});
        re.push_back(acc.re), im.push_back(acc.im);
      }
      return {concatAlong(re, axis), concatAlong(im, axis)};
    }
    auto shifted = [&](int x, int64_t step, double fill) {
      Shape head = s;
      head[(size_t)axis] = step;
      return concatAlong({filled(kWide, fill, head), sliceAlong(x, axis, 0, len - step)}, axis);
    };
    for (int64_t step = 1; step < len; step *= 2) z = mul({shifted(z.re, step, 1.0), shifted(z.im, step, 0.0)}, z);
    return z;
  }

  /// Complex.pow/2: 0 ** 0 is 1, 0 ** y is 0, x ** 1 is x, x ** -1 is 1 / x,
  /// otherwise through the polar form.
  Z pow(Z x, Z y) {
    auto is = [&](int v, double c) { return predicate(Op::Equal, v, like(v, c)); };
    auto both = [&](int p, int q) { return make(Op::LogicalAnd, {p, q}, type(p)); };
    auto pick = [&](int p, Z a, Z b) { return Z{select(p, a.re, b.re), select(p, a.im, b.im)}; };
    int rho = magnitude(x.re, x.im), theta = binary(Op::Atan2, x.im, x.re);
    int s = mulR(binary(Op::Pow, rho, y.re), unary(Op::Exp, mulR(negR(y.im), theta)));
    int r = addR(mulR(y.re, theta), mulR(y.im, unary(Op::Log, rho)));
    Z polar{mulR(s, unary(Op::Cos, r)), mulR(s, unary(Op::Sin, r))};
    Z one = {like(x.re, 1.0), like(x.re, 0.0)}, zero = {like(x.re, 0.0), like(x.re, 0.0)};
    Z result = pick(both(is(y.re, -1.0), is(y.im, 0.0)), div(one, x), polar);
    result = pick(both(is(y.re, 1.0), is(y.im, 0.0)), x, result);
    int yZero = both(is(y.re, 0.0), is(y.im, 0.0));
    return pick(both(is(x.re, 0.0), is(x.im, 0.0)), pick(yZero, one, zero), result);
  }

  /// |re + im i| as Complex.abs computes it: the larger magnitude times
  /// sqrt(1 + (smaller / larger)^2), or the larger when the smaller is 0.
  int magnitude(int re, int im) {
    int x = unary(Op::Abs, re), y = unary(Op::Abs, im);
    int big = binary(Op::Max, x, y), small = binary(Op::Min, x, y);
    int q = binary(Op::Divide, small, big);
    int r = binary(Op::Multiply, big, unary(Op::Sqrt, binary(Op::Add, like(q, 1.0), binary(Op::Multiply, q, q))));
    return select(predicate(Op::Equal, small, like(small, 0.0)), big, r);
  }

  /// Complex.sqrt/1 on finite parts.
  std::pair<int, int> squareRoot(int re, int im) {
    int x = unary(Op::Abs, re), y = unary(Op::Abs, im);
    int one = like(x, 1.0), half = like(x, 0.5);
    int yx = binary(Op::Divide, y, x), xy = binary(Op::Divide, x, y);
    int wx = binary(
        Op::Multiply, unary(Op::Sqrt, x),
        unary(Op::Sqrt,
              binary(Op::Multiply, half,
                     binary(Op::Add, one, unary(Op::Sqrt, binary(Op::Add, one, binary(Op::Multiply, yx, yx)))))));
    int wy =
        binary(Op::Multiply, unary(Op::Sqrt, y),
               unary(Op::Sqrt,
                     binary(Op::Multiply, half,
                            binary(Op::Add, xy, unary(Op::Sqrt, binary(Op::Add, one, binary(Op::Multiply, xy, xy)))))));
    int w = select(predicate(Op::GreaterEqual, x, y), wx, wy);
    int two = like(x, 2.0);
    int i2 = select(predicate(Op::GreaterEqual, im, like(im, 0.0)), w, unary(Op::Negate, w));
    int positive = predicate(Op::GreaterEqual, re, like(re, 0.0));
    int outRe = select(positive, w, binary(Op::Divide, im, binary(Op::Multiply, two, i2)));
    int outIm = select(positive, binary(Op::Divide, im, binary(Op::Multiply, two, w)), i2);
    // 0 + 0i is itself.
    int zero = make(Op::LogicalAnd, {predicate(Op::Equal, re, like(re, 0.0)), predicate(Op::Equal, im, like(im, 0.0))},
                    typed(re, ElemType::u8()));
    return {select(zero, re, outRe), select(zero, im, outIm)};
  }

  int expand(const Node &n) override {
    auto in = [&](size_t k) { return operandOf(n, k); };
    auto inType = [&](size_t k) { return in_.typeOf(n.operands[k]); };
    if (!nodeHasType(in_, n, isComplex)) return copy(n);
    ElemType t = n.type.elem;
    switch (n.op) {
    case Op::PrintValue: // prints a complex leaf's elements as their pairs of parts
    case Op::Parameter:
    case Op::RegionArg:
    case Op::Elem:
    case Op::Metadata:
    case Op::Cond:
    case Op::While:
    case Op::Constant:
    case Op::Add:
    case Op::Subtract:
    case Op::Negate:
    case Op::Reshape:
    case Op::Concatenate:
    case Op::Gather:
    case Op::Take:
    case Op::Reverse: return copy(n);
    case Op::Broadcast:
    case Op::Transpose: {
      Node c = copyOf(n);
      c.axes.push_back(n.op == Op::Transpose ? (int64_t)n.axes.size() : (int64_t)n.type.shape.size());
      return emit(std::move(c));
    }
    case Op::Slice:
    case Op::PutSlice: {
      Node c = copyOf(n);
      for (auto &[name, v] : c.attrs) v.push_back(name == "lengths" ? 2 : name == "strides" ? 1 : 0);
      return emit(std::move(c));
    }
    case Op::CumulativeSum:
    case Op::WindowSum: { // each part, in f64, rounded once
      Node c = copyOf(n);
      c.operands[0] = cast(in(0), kWide);
      c.type.elem = kWide;
      if (n.op == Op::WindowSum) // the pair's axis: a window of 1
        for (auto &[name, v] : c.attrs) v.push_back(1);
      return cast(emit(std::move(c)), t.partType());
    }
    case Op::LogicalNot: { // 1 where both parts are 0
      Z z = wide(in(0));
      return make(Op::LogicalAnd,
                  {predicate(Op::Equal, z.re, like(z.re, 0.0)), predicate(Op::Equal, z.im, like(z.im, 0.0))},
                  typed(z.re, ElemType::u8()));
    }
    case Op::CumulativeProduct: return finish(scanProduct(wide(in(0)), n.axes[0]), t);
    case Op::Sum: { // summed in f64, as Complex adds, rounded once
      int wide = cast(in(0), kWide);
      Node c = copyOf(n);
      c.operands = {wide};
      c.type.elem = kWide;
      return cast(emit(std::move(c)), t.partType());
    }
    case Op::TakeAlongAxis:
    case Op::Select: { // the indices (predicate) gain the pair's axis
      size_t k = n.op == Op::Select ? 0 : 1;
      Node c = copyOf(n);
      c.operands[k] = withPairAxis(in(k));
      return emit(std::move(c));
    }
    case Op::Pad: { // each part padded with the value's part
      int re = makeLike(n, {part(in(0), 0), part(in(1), 0)}, t.partType());
      int im = makeLike(n, {part(in(0), 1), part(in(1), 1)}, t.partType());
      return pair(re, im);
    }
    case Op::Iota: {
      int re = makeLike(n, {}, t.partType());
      return pair(re, like(re, 0.0));
    }
    case Op::Real: return part(in(0), 0);
    case Op::Imag: return part(in(0), 1);
    case Op::Conjugate: {
      if (!inType(0).elem.isComplex()) { // of a real operand (Nx's graphs): x - 0.0i, as Nx gives it
        int re = cast(in(0), t.partType());
        return pair(re, like(re, -0.0));
      }
      return pair(part(in(0), 0), unary(Op::Negate, part(in(0), 1)));
    }
    case Op::Cbrt: { // Complex.cbrt: from_polar(|z| ** (1/3), phase(z) / 3)
      Z z = wide(in(0));
      int r = binary(Op::Pow, magnitude(z.re, z.im), like(z.re, 1.0 / 3.0));
      int third = binary(Op::Divide, binary(Op::Atan2, z.im, z.re), like(z.re, 3.0));
      return finish({mulR(r, unary(Op::Cos, third)), mulR(r, unary(Op::Sin, third))}, t);
    }
    case Op::IndexedAdd:
    case Op::IndexedPut: { // each part at the same indices
      int re = makeLike(n, {part(in(0), 0), in(1), part(in(2), 0)}, t.partType());
      int im = makeLike(n, {part(in(0), 1), in(1), part(in(2), 1)}, t.partType());
      return pair(re, im);
    }
    case Op::Conv: {
      Z x = wide(in(0)), k = wide(in(1));
      auto conv = [&](int l, int r) { return makeLike(n, {l, r}, kWide); };
      return finish({subR(conv(x.re, k.re), conv(x.im, k.im)), addR(conv(x.re, k.im), conv(x.im, k.re))}, t);
    }
    case Op::Product: return finish(product(n, wide(in(0))), t);
    case Op::Complex: return pair(cast(in(0), t.partType()), cast(in(1), t.partType()));
    case Op::AsType: {
      ElemType from = inType(0).elem;
      if (from.isComplex() && t.isComplex()) return cast(in(0), t.partType());
      if (from.isComplex()) return cast(part(in(0), 0), t); // the real part, as Nx converts
      int re = cast(in(0), t.partType());
      return pair(re, like(re, 0.0));
    }
    case Op::Equal:
    case Op::NotEqual: {
      int ea = predicate(n.op, part(in(0), 0), part(in(1), 0));
      int eb = predicate(n.op, part(in(0), 1), part(in(1), 1));
      return make(n.op == Op::Equal ? Op::LogicalAnd : Op::LogicalOr, {ea, eb}, type(ea));
    }
    case Op::IsNan:
    case Op::IsInfinity: {
      int ea = make(n.op, {part(in(0), 0)}, typed(part(in(0), 0), ElemType::u8()));
      int eb = make(n.op, {part(in(0), 1)}, type(ea));
      return make(Op::LogicalOr, {ea, eb}, type(ea));
    }
    case Op::Abs: {
      auto [a, b] = wide(in(0));
      return cast(magnitude(a, b), t);
    }
    case Op::Multiply: return finish(mul(wide(in(0)), wide(in(1))), t);
    case Op::Divide: return finish(div(wide(in(0)), wide(in(1))), t);
    case Op::Pow: return finish(pow(wide(in(0)), wide(in(1))), t);
    case Op::Exp: return finish(exp(wide(in(0))), t);
    case Op::Expm1: { // Complex.exp(z) - 1
      Z e = exp(wide(in(0)));
      return finish({binary(Op::Subtract, e.re, like(e.re, 1.0)), e.im}, t);
    }
    case Op::Log: return finish(log(wide(in(0))), t);
    case Op::Log1p: { // Complex.log(z + 1)
      Z z = wide(in(0));
      return finish(log({binary(Op::Add, z.re, like(z.re, 1.0)), z.im}), t);
    }
    case Op::Log2: return finish(div(log(wide(in(0))), constant(in(0), std::log(2.0), 0.0)), t);
    case Op::Sqrt: {
      auto [a, b] = wide(in(0));
      auto [re, im] = squareRoot(a, b);
      return finish({re, im}, t);
    }
    case Op::Rsqrt: { // 1 / Complex.sqrt(z)
      auto [a, b] = wide(in(0));
      auto [re, im] = squareRoot(a, b);
      return finish(div(constant(in(0), 1.0, 0.0), {re, im}), t);
    }
    case Op::Sigmoid: { // 1 / (exp(-z) + 1)
      Z e = exp(neg(wide(in(0))));
      return finish(div(constant(in(0), 1.0, 0.0), {binary(Op::Add, e.re, like(e.re, 1.0)), e.im}), t);
    }
    case Op::Asin:
    case Op::Acos:
    case Op::Atan:
    case Op::Asinh:
    case Op::Acosh:
    case Op::Atanh: return finish(inverse(n.op, wide(in(0))), t);
    case Op::Sin: return finish(sin(wide(in(0))), t);
    case Op::Cos: return finish(cos(wide(in(0))), t);
    case Op::Tan: return finish(div(sin(wide(in(0))), cos(wide(in(0)))), t);
    case Op::Sinh: return finish(sinh(wide(in(0))), t);
    case Op::Cosh: return finish(cosh(wide(in(0))), t);
    case Op::Tanh: return finish(div(sinh(wide(in(0))), cosh(wide(in(0)))), t);
    case Op::Dot: {
      auto [a, b] = wide(in(0));
      auto [c, d] = wide(in(1));
      auto dot = [&](int l, int r) { return makeLike(n, {l, r}, kWide); };
      int re = binary(Op::Subtract, dot(a, c), dot(b, d));
      int im = binary(Op::Add, dot(a, d), dot(b, c));
      return finish({re, im}, t);
    }
    default:
      // checkComplexOps refuses every other op with complex values first.
      assert(false && "an op complexSupport does not lower");
      return copy(n);
    }
  }

  /// Node n's attributes on new operands, with real element type `e` and
  /// n's own shape.
  int makeLike(const Node &n, std::vector<int> operands, ElemType e) {
    Node c = n;
    c.operands = std::move(operands);
    c.type = TensorType{e, n.type.shape, {}};
    c.fvalues.clear();
    c.ivalues.clear();
    return emit(std::move(c));
  }
};

} // namespace

bool hasComplexValues(const Graph &g) { return graphHasType(g, isComplex); }

Graph complexToReal(const Graph &g) { return Expander(g).run(); }

} // namespace nxc
