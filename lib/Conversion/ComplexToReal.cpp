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

#include <cassert>
#include <cmath>

namespace nxc {
namespace {

const ElemType kWide{TypeKind::F, 64};

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

class Expander {
public:
  explicit Expander(const Graph &in) : in_(in), map_(in.nodes.size(), -1), made_(in.nodes.size()) {}

  Graph run() {
    out_.function = in_.function;
    out_.paramNames = in_.paramNames;
    out_.printing = in_.printing;
    for (size_t i = 0; i < in_.nodes.size(); ++i) {
      cur_ = (int)i;
      map_[i] = expand(in_.nodes[i]);
    }
    // Parents and regions, now that every node has its new id.
    for (size_t i = 0; i < in_.nodes.size(); ++i) {
      for (int m : made_[i]) out_.nodes[m].parent = in_.nodes[i].parent < 0 ? -1 : map_[in_.nodes[i].parent];
      const Node &n = in_.nodes[i];
      if (n.regions.empty()) continue;
      Node &o = out_.nodes[map_[i]];
      o.regions.clear();
      for (const Region &r : n.regions) {
        Region nr;
        for (int a : r.args) nr.args.push_back(map_[a]);
        for (int m : r.nodes) nr.nodes.insert(nr.nodes.end(), made_[m].begin(), made_[m].end());
        for (int y : r.results) nr.results.push_back(map_[y]);
        o.regions.push_back(std::move(nr));
      }
    }
    for (int p : in_.params) out_.params.push_back(map_[p]);
    for (int r : in_.results) out_.results.push_back(map_[r]);
    for (int c : in_.bakedConstants) out_.bakedConstants.push_back(map_[c]);
    out_.resultTree = in_.resultTree;
    remapTree(out_.resultTree);
    return std::move(out_);
  }

private:
  void remapTree(ResultTree &t) {
    if (t.node >= 0) t.node = map_[t.node];
    for (auto &e : t.elems) remapTree(e);
  }

  int emit(Node n) {
    n.loc = in_.nodes[cur_].loc;
    int id = out_.add(std::move(n));
    made_[cur_].push_back(id);
    return id;
  }
  int make(Op op, std::vector<int> operands, TensorType type) {
    Node n;
    n.op = op;
    n.operands = std::move(operands);
    n.type = std::move(type);
    return emit(std::move(n));
  }
  const TensorType &type(int id) const { return out_.nodes[id].type; }
  TensorType typed(int like, ElemType e) const { return TensorType{e, type(like).shape, {}}; }

  int cast(int x, ElemType t) { return type(x).elem == t ? x : make(Op::AsType, {x}, typed(x, t)); }
  int unary(Op op, int x) { return make(op, {x}, typed(x, type(x).elem)); }
  int binary(Op op, int a, int b) { return make(op, {a, b}, typed(a, type(a).elem)); }
  int predicate(Op op, int a, int b) { return make(op, {a, b}, typed(a, ElemType::u8())); }
  int select(int p, int a, int b) { return make(Op::Select, {p, a, b}, typed(a, type(a).elem)); }
  /// A scalar constant broadcast to `shape`.
  int filled(ElemType t, double v, const Shape &shape) {
    Node c;
    c.op = Op::Constant;
    c.type = TensorType{t, {}, {}};
    if (t.isInteger())
      c.ivalues = {(int64_t)v};
    else
      c.fvalues = {v};
    int k = emit(std::move(c));
    if (shape.empty()) return k;
    Node b;
    b.op = Op::Broadcast;
    b.operands = {k};
    b.type = TensorType{t, shape, {}};
    return emit(std::move(b));
  }
  int like(int x, double v) { return filled(type(x).elem, v, type(x).shape); }

  /// Part k (0 real, 1 imaginary) of a pair, without its axis of 2.
  int part(int pair, int k) {
    Shape s = type(pair).shape;
    int64_t r = (int64_t)s.size();
    Node n;
    n.op = Op::Slice;
    n.operands = {pair};
    std::vector<int64_t> starts(r, 0), lengths(s.begin(), s.end());
    starts.back() = k;
    lengths.back() = 1;
    n.attrs = {{"start_indices", starts}, {"lengths", lengths}, {"strides", std::vector<int64_t>(r, 1)}};
    s.back() = 1;
    n.type = TensorType{type(pair).elem, s, {}};
    int slice = emit(std::move(n));
    s.pop_back();
    return make(Op::Reshape, {slice}, TensorType{type(pair).elem, s, {}});
  }
  /// The pair of two parts of one shape and type.
  int pair(int re, int im) {
    Shape s = type(re).shape;
    s.push_back(1);
    int a = make(Op::Reshape, {re}, TensorType{type(re).elem, s, {}});
    int b = make(Op::Reshape, {im}, TensorType{type(im).elem, s, {}});
    Node n;
    n.op = Op::Concatenate;
    n.operands = {a, b};
    n.axes = {(int64_t)s.size() - 1};
    s.back() = 2;
    n.type = TensorType{type(re).elem, s, {}};
    return emit(std::move(n));
  }
  /// The parts of a pair in f64, where complex arithmetic is computed.
  std::pair<int, int> wideParts(int p) { return {cast(part(p, 0), kWide), cast(part(p, 1), kWide)}; }
  /// The pair of f64 parts, rounded once to the part type of `t`.
  int finish(int re, int im, ElemType t) { return pair(cast(re, t.partType()), cast(im, t.partType())); }

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

  int expand(const Node &n) {
    auto in = [&](size_t k) { return map_[n.operands[k]]; };
    auto inType = [&](size_t k) { return in_.typeOf(n.operands[k]); };
    bool complexIn = false;
    for (int o : n.operands) complexIn |= in_.typeOf(o).elem.isComplex();
    bool complexOut = n.type.elem.isComplex();
    for (auto &t : n.resultTypes) complexOut |= t.elem.isComplex();
    if (!complexIn && !complexOut) return copy(n);
    ElemType t = n.type.elem;
    switch (n.op) {
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
    case Op::Sum: { // summed in f64, as Complex adds, rounded once
      int wide = cast(in(0), kWide);
      Node c = copyOf(n);
      c.operands = {wide};
      c.type.elem = kWide;
      return cast(emit(std::move(c)), t.partType());
    }
    case Op::TakeAlongAxis: { // the indices gain the pair's axis
      TensorType it = type(in(1));
      Shape s = it.shape;
      s.push_back(2);
      Node b;
      b.op = Op::Broadcast;
      b.operands = {in(1)};
      b.axes = upTo(it.rank());
      b.type = TensorType{it.elem, s, {}};
      Node c = copyOf(n);
      c.operands[1] = emit(std::move(b));
      return emit(std::move(c));
    }
    case Op::Select: {
      TensorType pt = type(in(0));
      Shape s = pt.shape;
      s.push_back(2);
      Node b;
      b.op = Op::Broadcast;
      b.operands = {in(0)};
      b.axes = upTo(pt.rank());
      b.type = TensorType{pt.elem, s, {}};
      Node c = copyOf(n);
      c.operands[0] = emit(std::move(b));
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
    case Op::Conjugate: return pair(part(in(0), 0), unary(Op::Negate, part(in(0), 1)));
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
      auto [a, b] = wideParts(in(0));
      return cast(magnitude(a, b), t);
    }
    case Op::Multiply: {
      auto [a, b] = wideParts(in(0));
      auto [c, d] = wideParts(in(1));
      int re = binary(Op::Subtract, binary(Op::Multiply, a, c), binary(Op::Multiply, b, d));
      int im = binary(Op::Add, binary(Op::Multiply, b, c), binary(Op::Multiply, a, d));
      return finish(re, im, t);
    }
    case Op::Divide: {
      auto [a, b] = wideParts(in(0));
      auto [c, d] = wideParts(in(1));
      int numRe = binary(Op::Add, binary(Op::Multiply, a, c), binary(Op::Multiply, b, d));
      int numIm = binary(Op::Subtract, binary(Op::Multiply, b, c), binary(Op::Multiply, a, d));
      int den = binary(Op::Add, binary(Op::Multiply, c, c), binary(Op::Multiply, d, d));
      return finish(binary(Op::Divide, numRe, den), binary(Op::Divide, numIm, den), t);
    }
    case Op::Exp: {
      auto [a, b] = wideParts(in(0));
      int rho = unary(Op::Exp, a);
      return finish(binary(Op::Multiply, rho, unary(Op::Cos, b)), binary(Op::Multiply, rho, unary(Op::Sin, b)), t);
    }
    case Op::Log: {
      auto [a, b] = wideParts(in(0));
      return finish(unary(Op::Log, magnitude(a, b)), binary(Op::Atan2, b, a), t);
    }
    case Op::Sqrt: {
      auto [a, b] = wideParts(in(0));
      auto [re, im] = squareRoot(a, b);
      return finish(re, im, t);
    }
    case Op::Sin:
    case Op::Cos: {
      auto [a, b] = wideParts(in(0));
      int sa = unary(Op::Sin, a), ca = unary(Op::Cos, a), chb = unary(Op::Cosh, b), shb = unary(Op::Sinh, b);
      if (n.op == Op::Sin) return finish(binary(Op::Multiply, sa, chb), binary(Op::Multiply, ca, shb), t);
      // Complex.cos/1's -sin(a) * sinh(b), where the BEAM's negation is 0 - x
      // (the sign of a zero imaginary part is Nx's).
      int minusSa = binary(Op::Subtract, like(sa, 0.0), sa);
      return finish(binary(Op::Multiply, ca, chb), binary(Op::Multiply, minusSa, shb), t);
    }
    case Op::Dot: {
      auto [a, b] = wideParts(in(0));
      auto [c, d] = wideParts(in(1));
      auto dot = [&](int l, int r) { return makeLike(n, {l, r}, kWide); };
      int re = binary(Op::Subtract, dot(a, c), dot(b, d));
      int im = binary(Op::Add, dot(a, d), dot(b, c));
      return finish(re, im, t);
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

  /// n with its operands mapped and its types made pairs.
  Node copyOf(const Node &n) {
    Node c = n;
    for (int &o : c.operands) o = map_[o];
    c.type = pairType(n.type);
    for (auto &t : c.resultTypes) t = pairType(t);
    return c;
  }
  int copy(const Node &n) { return emit(copyOf(n)); }

  const Graph &in_;
  Graph out_;
  std::vector<int> map_;
  std::vector<std::vector<int>> made_;
  int cur_ = 0;
};

} // namespace

bool hasComplexValues(const Graph &g) {
  for (const Node &n : g.nodes) {
    if (n.type.elem.isComplex()) return true;
    for (const TensorType &t : n.resultTypes)
      if (t.elem.isComplex()) return true;
  }
  return false;
}

Graph complexToReal(const Graph &g) { return Expander(g).run(); }

} // namespace nxc
