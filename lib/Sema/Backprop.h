//===- Backprop.h - one reverse-mode sweep over the graph -------*- C++ -*-===//
//
// The state of a backward pass and the helpers its rules share
// (Grad.cpp: the sweep, control flow and the entry points; GradRules.cpp:
// each op's rule).
//
//===----------------------------------------------------------------------===//
#ifndef NXC_SEMA_BACKPROP_H
#define NXC_SEMA_BACKPROP_H

#include "Tracer.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <vector>

namespace nxc::sema {

/// Nx's @constants: ops whose result has no gradient.
inline bool zeroGradient(Op op) {
  switch (op) {
  case Op::Constant: case Op::Iota: case Op::All: case Op::Any: case Op::Argmax: case Op::Argmin:
  case Op::Argsort: case Op::BitwiseAnd: case Op::BitwiseOr: case Op::BitwiseXor: case Op::BitwiseNot:
  case Op::LogicalAnd: case Op::LogicalOr: case Op::LogicalXor: case Op::LogicalNot: case Op::LeftShift:
  case Op::RightShift: case Op::CountLeadingZeros: case Op::PopulationCount: case Op::Floor: case Op::Round:
  case Op::Ceil: case Op::Sign: case Op::IsNan: case Op::IsInfinity: case Op::Equal: case Op::Greater:
  case Op::GreaterEqual: case Op::Less: case Op::LessEqual: case Op::NotEqual:
    return true;
  default:
    return false;
  }
}

inline std::vector<int64_t> argsortPerm(const std::vector<int64_t> &v) {
  std::vector<int64_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return v[a] < v[b]; });
  return idx;
}

inline std::vector<int64_t> range(int64_t lo, int64_t hi) {
  std::vector<int64_t> r;
  for (int64_t i = lo; i < hi; ++i) r.push_back(i);
  return r;
}

inline std::vector<int64_t> minus(std::vector<int64_t> a, const std::vector<int64_t> &b) {
  a.erase(std::remove_if(a.begin(), a.end(), [&](int64_t x) { return std::find(b.begin(), b.end(), x) != b.end(); }),
          a.end());
  return a;
}

/// The contributions to the adjoint of each node of one scope (the top level
/// or one region), and, for `cond`/`while` nodes, of each of their results.
struct Adjoints {
  std::map<int, std::vector<int>> node;
  std::map<int, std::map<int, std::vector<int>>> results;
};

/// One backward pass. Rules never fail on well-typed graphs; the first error
/// a builder reports is kept and returned at the end.
class Backprop {
public:
  Backprop(Tracer &t, Loc loc) : t_(t), g_(t.g_), loc_(std::move(loc)) {}

  /// The gradients of scalar-seeded `y` with respect to `targets`.
  Result<std::vector<int>> run(int y, const std::vector<int> &targets);

private:
  Tracer &t_;
  Graph &g_;
  Loc loc_;
  std::vector<char> dep_;
  std::set<int> stops_;
  std::set<int> customDone_; ///< custom_grad outputs (first leaf) already differentiated
  Status err_ = okStatus();

  bool dep(int id) const { return id >= 0 && id < (int)dep_.size() && dep_[id]; }
  void setDep(int id, bool v) {
    if (id >= (int)dep_.size()) dep_.resize(id + 1, 0);
    dep_[id] = v;
  }
  void fail(const Diag &d) {
    if (err_.ok()) err_ = d;
  }
  Value tv(int n) const { return Value::tensor(n, loc_); }
  Value num(double v) const { return Value::real(v, loc_); }
  Value ints(const std::vector<int64_t> &v) const {
    std::vector<Value> e;
    for (auto x : v) e.push_back(Value::number(x, loc_));
    return Value::list(std::move(e), loc_);
  }
  Value keywords(std::vector<std::pair<std::string, Value>> kv) const { return Value::keywords(std::move(kv), loc_); }
  const TensorType &type(int id) const { return g_.typeOf(id); }
  const Shape &shape(int id) const { return g_.typeOf(id).shape; }

  /// An Nx function on values, as the user would call it.
  int nx(const std::string &fn, std::vector<Value> args) {
    auto r = t_.callNx(fn, std::move(args), loc_);
    if (!r.ok()) {
      fail(r.error());
      return -1;
    }
    if (r->kind != Value::Tensor) {
      auto c = t_.toTensor(*r, loc_);
      if (!c.ok()) {
        fail(c.error());
        return -1;
      }
      return *c;
    }
    return r->node;
  }
  int nx(const std::string &fn, int a) { return ok(a) ? nx(fn, std::vector<Value>{tv(a)}) : -1; }
  int nx(const std::string &fn, Value a, Value b) { return nx(fn, std::vector<Value>{a, b}); }
  bool ok(int id) const { return id >= 0 && err_.ok(); }
  int mul(Value a, Value b) { return nx("multiply", a, b); }
  int div(Value a, Value b) { return nx("divide", a, b); }
  int add(Value a, Value b) { return nx("add", a, b); }
  int sub(Value a, Value b) { return nx("subtract", a, b); }
  int sumAxes(int x, const std::vector<int64_t> &axes, bool keep = false) {
    return nx("sum",
              std::vector<Value>{tv(x), keywords({{"axes", ints(axes)},
                                                  {"keep_axes", Value::atomValue(keep ? "true" : "false", loc_)}})});
  }
  /// A scalar f32 tensor (Nx's Expr.tensor(value)).
  int scalarF32(double v) { return t_.constant(ElemType::f32(), {}, {v}, {}, loc_); }
  /// Zeros of type t and shape s.
  int zeros(ElemType t, const Shape &s) {
    int c = t.isFloat() ? t_.constant(t, {}, {0.0}, {}, loc_) : t_.constant(t, {}, {}, {0}, loc_);
    return t_.broadcastTo(c, s, loc_);
  }
  /// x with its axis names dropped (gradients carry no names).
  int plain(int x) {
    if (!ok(x) || type(x).names.empty()) return x;
    Node n;
    n.op = Op::Reshape;
    n.operands = {x};
    n.type = TensorType{type(x).elem, type(x).shape, {}};
    n.loc = loc_;
    return t_.add(n);
  }
  /// Broadcast of x into `shape`, operand axis i going to output axis axes[i].
  int broadcastAxes(int x, const Shape &s, const std::vector<int64_t> &axes) {
    if (shape(x) == s) return x;
    Node n;
    n.op = Op::Broadcast;
    n.operands = {x};
    n.type = TensorType{type(x).elem, s, {}};
    n.axes = axes;
    n.loc = loc_;
    return t_.add(n);
  }
  int sumList(const std::vector<int> &gs) {
    int r = gs[0];
    for (size_t i = 1; i < gs.size(); ++i) r = plain(add(tv(r), tv(gs[i])));
    return r;
  }
  void contribute(Adjoints &a, int id, int g) {
    if (!ok(g) || !dep(id)) return;
    a.node[id].push_back(plain(g));
  }

  Value tuple(const std::vector<int64_t> &v) const {
    std::vector<Value> e;
    for (auto x : v) e.push_back(Value::number(x, loc_));
    return Value::tuple(std::move(e), loc_);
  }
  Value opt(const std::string &key, Value v) const { return keywords({{key, std::move(v)}}); }
  /// An integer tensor of shape s holding each element's coordinate on `axis`.
  int coordinate(const Shape &s, int64_t axis, ElemType t) {
    Node n;
    n.op = Op::Iota;
    n.type = TensorType{t, {s[axis]}, {}};
    n.axes = {0};
    n.loc = loc_;
    return broadcastAxes(t_.add(n), s, {axis});
  }
  /// The gradient of a gather-like op: g scatter-added into zeros of x's
  /// shape, coords[d] (an integer tensor of g's shape) holding the coordinate
  /// on x's axis d that each element of g was read from. Coordinates are
  /// clamped as the forward gather clamps them.
  int scatterAdd(int x, int g, std::vector<int> coords);
  /// Marks the nodes from `from` on as depending on the differentiated
  /// inputs when one of their operands does.
  void markDeps(int from) {
    for (int id = from; id < (int)g_.nodes.size(); ++id) {
      bool d = false;
      if (!zeroGradient(g_.nodes[id].op))
        for (int o : g_.nodes[id].operands) d |= dep(o);
      setDep(id, d);
    }
  }
  /// The gradient of x through `forward(x)`, built here from x and
  /// differentiated with the ordinary rules: Nx differentiates its cumulative
  /// ops through their associative-scan definition, so nxc does too.
  int through(int x, int g, const std::function<int(int)> &forward);
  /// Nx's associative scan of t along `axis` with the binary Nx function `op`.
  int associativeScan(int t, const std::string &op, int64_t axis);
  int sliceAxis(int t, int64_t start, int64_t length, int64_t axis, int64_t stride);
  int concat(std::vector<int> parts, int64_t axis) {
    std::vector<Value> l;
    for (int p : parts) l.push_back(tv(p));
    return nx("concatenate",
              std::vector<Value>{Value::list(std::move(l), loc_), opt("axis", Value::number(axis, loc_))});
  }
  void windowChooserRule(const Node &n, int g, Adjoints &a);
  void convRule(const Node &n, int g, Adjoints &a);
  /// The gradient of a broadcast from operand shape `xs` to `s` along `axes`.
  int unbroadcast(const Shape &xs, const Shape &s, const std::vector<int64_t> &axes, int g);
  Status sweep(const std::vector<int> &scope, Adjoints &a);
  void rule(int id, int g, Adjoints &a);
  void condRule(int id, Adjoints &a);
  void whileRule(int id, Adjoints &a);
  /// Outer nodes (not inside node `id`'s regions) its regions use.
  std::vector<int> captures(int id);
  void collectInside(int id, std::set<int> &inside);
  /// Clones `ids` (and their regions) into the region being traced, mapping
  /// operands through `remap`; returns the clones in order.
  std::vector<int> cloneNodes(const std::vector<int> &ids, std::map<int, int> &remap);
  int mapped(const std::map<int, int> &remap, int id) const {
    auto it = remap.find(id);
    return it == remap.end() ? id : it->second;
  }
  int select(int pred, int a, int b) {
    int p = t_.broadcastTo(pred, shape(a), loc_);
    return t_.node(Op::Select, {p, a, b}, TensorType{type(a).elem, type(a).shape, {}}, loc_);
  }
};

} // namespace nxc::sema

#endif // NXC_SEMA_BACKPROP_H
